//! The catalog: table definitions and sequences by name, views by id, and the buffer
//! pool their trees live in.
//!
//! Invariants:
//! - A dropped table stays known (in `dropping`) until its drop commits, so a checkpoint
//!   taken meanwhile still holds it, and a rollback can put it back. Its pages are freed
//!   only once the drop is committed.
//! - A table, sequence or view whose creating transaction has not committed is
//!   `unconfirmed`, and hidden from other transactions ([`Catalog::hides`]); a checkpoint
//!   records that, so recovery drops it if the commit never comes.
//! - The catalog image ([`Catalog::image`]) is taken under the checkpoint barrier, when no
//!   commit or catalog change is between its log append and its install.

use std::sync::atomic::{AtomicI64, AtomicU32, AtomicU64, Ordering};
use std::sync::Arc;

use parking_lot::RwLock;
use rustc_hash::{FxHashMap, FxHashSet};

use super::page::PageId;
use super::pool::{BufferPool, PageMap};
use super::roles::{Role, BOOTSTRAP_ROLE_NAME};
use super::{IndexDef, Table, TableId};
use crate::disk::sim::SimDisk;
use crate::disk::Disk;
use crate::error::{Error, Result, SqlState};
use crate::stages::{self, Stage};
use crate::types::DataType;
use crate::wal::{Reader, Writer};

/// Frames of the pool of a catalog without a data directory (tests).
const IN_MEMORY_FRAMES: usize = 256;

fn corrupt(what: String) -> Error {
    Error::new(SqlState::DATA_CORRUPTED, format!("corrupt catalog: {what}"))
}

fn put_type(w: &mut Writer, t: &DataType) {
    match t {
        DataType::Bool => w.u8(1),
        DataType::Int2 => w.u8(2),
        DataType::Int4 => w.u8(3),
        DataType::Int8 => w.u8(4),
        DataType::Float4 => w.u8(5),
        DataType::Float8 => w.u8(6),
        DataType::Numeric(m) => {
            w.u8(7);
            let (p, s) = m.unwrap_or((0, 0));
            w.u8(p);
            w.u8(s);
        }
        DataType::Text => w.u8(8),
        DataType::Varchar(n) => {
            w.u8(9);
            w.u32(n.unwrap_or(0));
        }
        DataType::Char(n) => {
            w.u8(10);
            w.u32(*n);
        }
        DataType::Bytea => w.u8(11),
        DataType::Date => w.u8(12),
        DataType::Timestamp => w.u8(13),
        DataType::TimestampTz => w.u8(14),
        DataType::Unknown => w.u8(8),
        DataType::Oid => w.u8(15),
        DataType::Name => w.u8(16),
        DataType::InternalChar => w.u8(17),
        DataType::Json => w.u8(22),
        DataType::RegClass => w.u8(18),
        DataType::RegType => w.u8(19),
        DataType::RegNamespace => w.u8(21),
        DataType::RegProc => w.u8(24),
        DataType::Int2Vector => w.u8(25),
        DataType::Uuid => w.u8(27),
        DataType::Interval => w.u8(28),
        DataType::Jsonb => w.u8(29),
        DataType::OidVector => w.u8(26),
        DataType::Array(e) => {
            w.u8(20);
            put_type(w, e);
        }
        // Only `_pg_expandarray`'s rows (a view may have a column of them): by the type
        // of their `x`.
        DataType::Record(fields) => {
            w.u8(23);
            put_type(w, &fields.first().map_or(DataType::Int4, |f| f.1));
        }
        DataType::Void => w.u8(30),
    }
}

fn get_type(r: &mut Reader) -> Result<DataType> {
    Ok(match r.u8()? {
        1 => DataType::Bool,
        2 => DataType::Int2,
        3 => DataType::Int4,
        4 => DataType::Int8,
        5 => DataType::Float4,
        6 => DataType::Float8,
        7 => {
            let (p, s) = (r.u8()?, r.u8()?);
            DataType::Numeric(if p == 0 { None } else { Some((p, s)) })
        }
        8 => DataType::Text,
        9 => {
            let n = r.u32()?;
            DataType::Varchar(if n == 0 { None } else { Some(n) })
        }
        10 => DataType::Char(r.u32()?),
        11 => DataType::Bytea,
        12 => DataType::Date,
        13 => DataType::Timestamp,
        14 => DataType::TimestampTz,
        15 => DataType::Oid,
        16 => DataType::Name,
        17 => DataType::InternalChar,
        22 => DataType::Json,
        18 => DataType::RegClass,
        19 => DataType::RegType,
        21 => DataType::RegNamespace,
        24 => DataType::RegProc,
        25 => DataType::Int2Vector,
        27 => DataType::Uuid,
        28 => DataType::Interval,
        29 => DataType::Jsonb,
        26 => DataType::OidVector,
        20 => {
            let e = get_type(r)?;
            match crate::types::static_element(&e) {
                Some(e) if e.element().is_none() => DataType::Array(e),
                _ => return Err(corrupt(format!("no arrays of {}", e.name()))),
            }
        }
        30 => DataType::Void,
        23 => {
            let x = get_type(r)?;
            crate::types::expanded_array_type(x)
                .ok_or_else(|| corrupt(format!("no record of {}", x.name())))?
        }
        t => return Err(corrupt(format!("unknown type tag {t}"))),
    })
}

pub fn put_def(w: &mut Writer, id: TableId, def: &TableDef) {
    w.u32(id.0);
    w.str(&def.name);
    w.varint(def.columns.len() as u64);
    for c in &def.columns {
        w.str(&c.name);
        put_type(w, &c.data_type);
        w.u8(c.not_null as u8);
        w.opt_str(c.default.as_deref());
        w.opt_str(c.missing.as_deref());
        w.u8(c.dropped as u8 | (c.identity as u8) << 1);
    }
    w.varint(def.primary_key.len() as u64);
    for &i in &def.primary_key {
        w.varint(i as u64);
    }
    w.opt_str(def.pkey_name.as_deref());
    w.varint(def.owned_sequences.len() as u64);
    for s in &def.owned_sequences {
        w.str(s);
    }
    w.varint(def.indexes.len() as u64);
    for index in &def.indexes {
        w.str(&index.name);
        w.varint(index.columns.len() as u64);
        for &c in &index.columns {
            w.varint(c as u64);
        }
        w.u8(index.unique as u8 | (index.constraint as u8) << 1);
        w.u32(index.number);
    }
    w.varint(def.checks.len() as u64);
    for check in &def.checks {
        w.str(&check.name);
        w.str(&check.expr);
    }
    w.varint(def.foreign_keys.len() as u64);
    for fk in &def.foreign_keys {
        w.str(&fk.name);
        w.varint(fk.columns.len() as u64);
        for (&c, &r) in fk.columns.iter().zip(&fk.referenced_columns) {
            w.varint(c as u64);
            w.varint(r as u64);
        }
        w.u32(fk.referenced.0);
        w.u8(fk.on_delete as u8);
        w.u8(fk.on_update as u8);
        w.u8(fk.deferrable as u8
            | (fk.initially_deferred as u8) << 1
            | (!fk.validated as u8) << 2
            | (fk.match_full as u8) << 3);
    }
    for index in &def.indexes {
        for i in 0..index.columns.len() {
            w.opt_str(index.opclass(i));
        }
    }
    for check in &def.checks {
        w.u8(!check.validated as u8);
    }
    w.opt_str(def.description.as_deref());
    for c in &def.columns {
        w.opt_str(c.description.as_deref());
    }
}

pub fn get_def(r: &mut Reader) -> Result<(TableId, TableDef)> {
    let id = TableId(r.u32()?);
    let name = r.str()?;
    let ncols = r.varint()?;
    let mut columns = Vec::new();
    for _ in 0..ncols {
        let name = r.str()?;
        let data_type = get_type(r)?;
        let not_null = r.u8()? != 0;
        let default = r.opt_str()?;
        let missing = r.opt_str()?;
        let flags = r.u8()?;
        let (dropped, identity) = (flags & 1 != 0, flags & 2 != 0);
        columns.push(Column {
            name,
            data_type,
            not_null,
            default,
            missing,
            dropped,
            identity,
            description: None,
        });
    }
    let npk = r.varint()?;
    let mut primary_key = Vec::new();
    for _ in 0..npk {
        let i = r.varint()? as usize;
        if i >= columns.len() {
            return Err(corrupt("primary key column out of range".into()));
        }
        primary_key.push(i);
    }
    let pkey_name = r.opt_str()?;
    let nseq = r.varint()?;
    let mut owned_sequences = Vec::new();
    for _ in 0..nseq {
        owned_sequences.push(r.str()?);
    }
    let nindexes = r.varint()?;
    let mut indexes = Vec::new();
    for _ in 0..nindexes {
        let name = r.str()?;
        let ncolumns = r.varint()?;
        let mut index_columns = Vec::new();
        for _ in 0..ncolumns {
            let c = r.varint()? as usize;
            if c >= columns.len() {
                return Err(corrupt("index column out of range".into()));
            }
            index_columns.push(c);
        }
        let flags = r.u8()?;
        indexes.push(IndexDef {
            name,
            columns: index_columns,
            unique: flags & 1 != 0,
            constraint: flags & 2 != 0,
            number: r.u32()?,
            opclasses: Vec::new(),
        });
    }
    let nchecks = r.varint()?;
    let mut checks = Vec::new();
    for _ in 0..nchecks {
        checks.push(CheckDef {
            name: r.str()?,
            expr: r.str()?,
            validated: true,
        });
    }
    let nfks = r.varint()?;
    let mut foreign_keys = Vec::new();
    for _ in 0..nfks {
        let name = r.str()?;
        let ncolumns = r.varint()?;
        let (mut fk_columns, mut referenced_columns) = (Vec::new(), Vec::new());
        for _ in 0..ncolumns {
            let c = r.varint()? as usize;
            if c >= columns.len() {
                return Err(corrupt("foreign key column out of range".into()));
            }
            fk_columns.push(c);
            referenced_columns.push(r.varint()? as usize);
        }
        let referenced = TableId(r.u32()?);
        let on_delete = FkAction::from_u8(r.u8()?)
            .ok_or_else(|| corrupt("unknown foreign key action".into()))?;
        let on_update = FkAction::from_u8(r.u8()?)
            .ok_or_else(|| corrupt("unknown foreign key action".into()))?;
        let flags = r.u8()?;
        foreign_keys.push(ForeignKeyDef {
            name,
            columns: fk_columns,
            referenced,
            referenced_columns,
            on_delete,
            on_update,
            deferrable: flags & 1 != 0,
            initially_deferred: flags & 2 != 0,
            validated: flags & 4 == 0,
            match_full: flags & 8 != 0,
        });
    }
    for index in &mut indexes {
        index.opclasses = (0..index.columns.len())
            .map(|_| r.opt_str())
            .collect::<Result<_>>()?;
    }
    for check in &mut checks {
        check.validated = r.u8()? & 1 == 0;
    }
    let description = r.opt_str()?;
    for c in &mut columns {
        c.description = r.opt_str()?;
    }
    Ok((
        id,
        TableDef {
            name,
            columns,
            primary_key,
            pkey_name,
            owned_sequences,
            indexes,
            checks,
            foreign_keys,
            description,
        },
    ))
}

#[derive(Clone, Debug)]
pub struct Column {
    pub name: String,
    pub data_type: DataType,
    pub not_null: bool,
    /// The DEFAULT expression as SQL text, compiled by the SQL layer.
    pub default: Option<String>,
    /// What rows written before the column was added (ALTER TABLE ... ADD COLUMN) hold
    /// in it: its default's value then, in text form; None: NULL.
    pub missing: Option<String>,
    /// Dropped (ALTER TABLE ... DROP COLUMN), as PostgreSQL's `attisdropped`: the rows
    /// keep its place, so no position changes, but no statement sees it; its name is
    /// PostgreSQL's `........pg.dropped.N........`.
    pub dropped: bool,
    /// `GENERATED BY DEFAULT AS IDENTITY`: its default (`nextval` of the sequence it
    /// owns) is the identity's, shown as PostgreSQL shows an identity, not as a default.
    pub identity: bool,
    /// Its comment (COMMENT ON COLUMN), as `col_description` and `pg_description` show it.
    pub description: Option<String>,
}

/// A table's schema. Immutable: DDL installs a new `TableDef`.
#[derive(Clone, Debug)]
pub struct TableDef {
    pub name: String,
    pub columns: Vec<Column>,
    /// Column positions of the primary key, in key order; empty for none.
    pub primary_key: Vec<usize>,
    /// The primary key constraint's name (e.g. `t_pkey`).
    pub pkey_name: Option<String>,
    /// Sequences this table owns (created by serial columns), dropped with it.
    pub owned_sequences: Vec<String>,
    /// Secondary indexes, in creation order.
    pub indexes: Vec<IndexDef>,
    /// CHECK constraints, in creation order.
    pub checks: Vec<CheckDef>,
    /// FOREIGN KEY constraints of this table (the referencing side), in creation order.
    pub foreign_keys: Vec<ForeignKeyDef>,
    /// Its comment (COMMENT ON TABLE), as `obj_description` and `pg_description` show it.
    pub description: Option<String>,
}

/// A FOREIGN KEY constraint: every row whose `columns` are all non-null has a row of
/// the `referenced` table whose `referenced_columns` (its primary key or a unique
/// constraint's columns) hold the same values. MATCH SIMPLE lets a row with any NULL
/// among them through; MATCH FULL only one where all are NULL.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ForeignKeyDef {
    pub name: String,
    /// Column positions in this table, paired with `referenced_columns`.
    pub columns: Vec<usize>,
    pub referenced: TableId,
    pub referenced_columns: Vec<usize>,
    pub on_delete: FkAction,
    pub on_update: FkAction,
    pub deferrable: bool,
    pub initially_deferred: bool,
    pub match_full: bool,
    /// False when added NOT VALID and not validated since: new rows are checked, the
    /// rows there then may not hold.
    pub validated: bool,
}

/// What a change of a referenced row does to the rows that reference it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FkAction {
    NoAction = 0,
    Restrict = 1,
    Cascade = 2,
    SetNull = 3,
    SetDefault = 4,
}

impl FkAction {
    pub fn from_u8(b: u8) -> Option<FkAction> {
        Some(match b {
            0 => FkAction::NoAction,
            1 => FkAction::Restrict,
            2 => FkAction::Cascade,
            3 => FkAction::SetNull,
            4 => FkAction::SetDefault,
            _ => return None,
        })
    }

    /// `pg_constraint.confdeltype` / `confupdtype`.
    pub fn code(self) -> char {
        match self {
            FkAction::NoAction => 'a',
            FkAction::Restrict => 'r',
            FkAction::Cascade => 'c',
            FkAction::SetNull => 'n',
            FkAction::SetDefault => 'd',
        }
    }

    /// As SQL writes it (`ON DELETE CASCADE`).
    pub fn sql(self) -> &'static str {
        match self {
            FkAction::NoAction => "NO ACTION",
            FkAction::Restrict => "RESTRICT",
            FkAction::Cascade => "CASCADE",
            FkAction::SetNull => "SET NULL",
            FkAction::SetDefault => "SET DEFAULT",
        }
    }
}

/// A CHECK constraint: every row's `expr` (SQL text over the table's columns) is true
/// or NULL.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CheckDef {
    pub name: String,
    pub expr: String,
    /// False when added NOT VALID and not validated since (see [`ForeignKeyDef`]).
    pub validated: bool,
}

/// The deepest chain of views reading views that a DROP ... CASCADE follows.
pub const MAX_VIEW_NESTING: usize = 64;

/// The views that read a table or view, directly or not ([`Catalog::dependent_views_deep`]).
#[derive(Default)]
pub struct DependentViews {
    /// As found (each view's readers after it, siblings by name): (view, the table or
    /// view it reads that led to it). What PostgreSQL's messages list.
    pub found: Vec<(String, String)>,
    /// Each view after the views that read it: the order they can be dropped in.
    pub drop_order: Vec<String>,
}

impl TableDef {
    /// Whether it has a constraint named `name`: its primary key, a UNIQUE, CHECK or
    /// FOREIGN KEY constraint.
    pub fn has_constraint(&self, name: &str) -> bool {
        self.pkey_name.as_deref() == Some(name) && !self.primary_key.is_empty()
            || self.indexes.iter().any(|i| i.constraint && i.name == name)
            || self.checks.iter().any(|c| c.name == name)
            || self.foreign_keys.iter().any(|f| f.name == name)
    }

    /// A definition of nullable columns without a key or defaults: what a system view or
    /// a subquery in FROM looks like to the planner.
    pub fn of_columns<'a>(name: &str, columns: impl Iterator<Item = (&'a str, DataType)>) -> Self {
        TableDef {
            name: name.to_string(),
            columns: columns
                .map(|(n, t)| Column {
                    name: n.to_string(),
                    data_type: t,
                    not_null: false,
                    default: None,
                    missing: None,
                    dropped: false,
                    identity: false,
                    description: None,
                })
                .collect(),
            primary_key: Vec::new(),
            pkey_name: None,
            owned_sequences: Vec::new(),
            indexes: Vec::new(),
            checks: Vec::new(),
            foreign_keys: Vec::new(),
            description: None,
        }
    }

    pub fn column_index(&self, name: &str) -> Option<usize> {
        self.columns
            .iter()
            .position(|c| c.name == name && !c.dropped)
    }

    /// The positions of the columns that are not dropped, in order.
    pub fn live_columns(&self) -> impl Iterator<Item = usize> + '_ {
        (0..self.columns.len()).filter(|&i| !self.columns[i].dropped)
    }

    /// PostgreSQL's name for the dropped column at `position`.
    pub fn dropped_name(position: usize) -> String {
        format!("........pg.dropped.{}........", position + 1)
    }
}

/// What CREATE SEQUENCE sets. Increments are positive.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SequenceOptions {
    /// `smallint`, `integer` or `bigint`.
    pub data_type: DataType,
    pub start: i64,
    pub increment: i64,
    pub min: i64,
    pub max: i64,
    pub cache: i64,
    pub cycle: bool,
}

impl SequenceOptions {
    /// PostgreSQL's defaults for a sequence of `data_type`.
    pub fn defaults(data_type: DataType) -> SequenceOptions {
        let max = match data_type {
            DataType::Int2 => i16::MAX as i64,
            DataType::Int4 => i32::MAX as i64,
            _ => i64::MAX,
        };
        SequenceOptions {
            data_type,
            start: 1,
            increment: 1,
            min: 1,
            max,
            cache: 1,
            cycle: false,
        }
    }

    pub fn put(&self, w: &mut Writer) {
        put_type(w, &self.data_type);
        for v in [self.start, self.increment, self.min, self.max, self.cache] {
            w.u64(v as u64);
        }
        w.u8(self.cycle as u8);
    }

    pub fn get(r: &mut Reader) -> Result<SequenceOptions> {
        let data_type = get_type(r)?;
        let mut v = [0i64; 5];
        for x in &mut v {
            *x = r.u64()? as i64;
        }
        let [start, increment, min, max, cache] = v;
        let options = SequenceOptions {
            data_type,
            start,
            increment,
            min,
            max,
            cache,
            cycle: r.u8()? != 0,
        };
        if increment <= 0 || min > max || start < min || start > max {
            return Err(corrupt(format!("sequence options {options:?}")));
        }
        Ok(options)
    }
}

/// A sequence: a `serial` column's, or one CREATE SEQUENCE made. Advances are not
/// transactional, as in PostgreSQL.
pub struct Sequence {
    pub name: String,
    next: AtomicI64,
    logged: AtomicI64,
    /// CREATE SEQUENCE's: the id its OIDs are made from. None for a serial column's
    /// (PostgreSQL's defaults for the column's type, and no lock on its nextval).
    id: Option<TableId>,
    /// A created sequence's options (ALTER SEQUENCE changes them), and whether it handed
    /// out its maximum (and does not cycle, or has not yet).
    state: parking_lot::Mutex<SequenceState>,
}

struct SequenceState {
    options: SequenceOptions,
    spent: bool,
}

/// Why a sequence gives no next value.
#[derive(Debug, PartialEq, Eq)]
pub struct SequenceExhausted {
    pub max: i64,
}

impl Sequence {
    /// A sequence whose first value is `start`.
    fn new(name: &str, created: Option<(TableId, SequenceOptions)>) -> Sequence {
        let start = created.map_or(1, |(_, o)| o.start);
        Sequence {
            name: name.to_string(),
            next: AtomicI64::new(start),
            // Values below the start "may have been handed out": recovery continues at
            // the start at the earliest.
            logged: AtomicI64::new(start - 1),
            id: created.map(|(id, _)| id),
            state: parking_lot::Mutex::new(SequenceState {
                options: created.map_or(SequenceOptions::defaults(DataType::Int8), |(_, o)| o),
                spent: false,
            }),
        }
    }

    /// CREATE SEQUENCE's id and the options it has now; None for a serial column's.
    pub fn created(&self) -> Option<(TableId, SequenceOptions)> {
        self.id.map(|id| (id, self.state.lock().options))
    }

    pub fn nextval(&self) -> std::result::Result<i64, SequenceExhausted> {
        if self.id.is_none() {
            return Ok(self.next.fetch_add(1, Ordering::Relaxed));
        }
        // A created sequence's bounds and cycling are decided one caller at a time; the
        // value past the maximum is `spent` (max + 1 may not fit an i64).
        let mut state = self.state.lock();
        let o = state.options;
        let current = self.next.load(Ordering::Relaxed);
        let v = if state.spent || current > o.max || current < o.min {
            if !o.cycle {
                return Err(SequenceExhausted { max: o.max });
            }
            o.min
        } else {
            current
        };
        state.spent = false;
        match v.checked_add(o.increment) {
            Some(n) if n <= o.max => self.next.store(n, Ordering::Relaxed),
            _ => {
                state.spent = true;
                self.next.store(o.max, Ordering::Relaxed);
            }
        }
        Ok(v)
    }

    /// setval: the next value handed out is `next`; values below it count as handed out.
    pub fn set_next(&self, next: i64) {
        let mut state = self.state.lock();
        state.spent = self.id.is_some() && next > state.options.max;
        self.next.store(next, Ordering::Relaxed);
        self.logged.store(next - 1, Ordering::Relaxed);
    }

    /// ALTER SEQUENCE (of a created sequence): its options become `options`, and the
    /// next value handed out `next`, values below it counting as handed out.
    pub fn alter(&self, options: SequenceOptions, next: i64) {
        debug_assert!(self.id.is_some());
        let mut state = self.state.lock();
        state.options = options;
        state.spent = next > options.max;
        self.next.store(next, Ordering::Relaxed);
        self.logged.store(next - 1, Ordering::Relaxed);
    }

    /// The value the next nextval would hand out (as the sequence stands).
    pub fn peek_next(&self) -> i64 {
        self.next.load(Ordering::Relaxed)
    }

    /// `(last_value, is_called)` as PostgreSQL shows a sequence: the start and false
    /// before any value was handed out, else the last value handed out (the one before
    /// the next) and true. (After `setval(v, false)` past the start it shows the value
    /// before `v`, called: the same next value.)
    pub fn last_value(&self) -> (i64, bool) {
        let spent = self.state.lock().spent;
        let next = self.next.load(Ordering::Relaxed);
        let start = self.created().map_or(1, |(_, o)| o.start);
        if spent {
            return (self.max(), true);
        }
        if next == start {
            return (start, false);
        }
        (next.saturating_sub(self.increment()), true)
    }

    /// Values up to this one may have been handed out (and logged as such).
    pub fn logged_upto(&self) -> &AtomicI64 {
        &self.logged
    }

    /// The step between values.
    pub fn increment(&self) -> i64 {
        self.created().map_or(1, |(_, o)| o.increment)
    }

    /// The largest value it hands out.
    pub fn max(&self) -> i64 {
        self.created().map_or(i64::MAX, |(_, o)| o.max)
    }

    /// Recovery: values up to `v` may have been handed out; continue after them.
    pub fn advance_past(&self, v: i64) {
        match v.checked_add(self.increment()) {
            Some(n) if n <= self.max() => {
                self.next.fetch_max(n, Ordering::Relaxed);
            }
            _ => self.state.lock().spent = true,
        }
        self.logged.fetch_max(v, Ordering::Relaxed);
    }
}

/// A view: a stored query, planned again by each statement that reads it.
#[derive(Clone, Debug)]
pub struct View {
    /// From the table id space (its OIDs are made from it).
    pub id: TableId,
    pub name: String,
    /// The query's SQL text.
    pub query: String,
    /// Its columns as created (a query of `*` keeps these, as PostgreSQL's does).
    pub columns: Vec<(String, DataType)>,
    /// The tables and views it reads: they cannot be dropped or renamed while it exists.
    pub depends_on: Vec<String>,
}

impl View {
    pub fn put(&self, w: &mut Writer) {
        w.u32(self.id.0);
        w.str(&self.name);
        w.str(&self.query);
        w.varint(self.columns.len() as u64);
        for (n, t) in &self.columns {
            w.str(n);
            put_type(w, t);
        }
        w.varint(self.depends_on.len() as u64);
        for d in &self.depends_on {
            w.str(d);
        }
    }

    pub fn get(r: &mut Reader) -> Result<View> {
        let id = TableId(r.u32()?);
        let name = r.str()?;
        let query = r.str()?;
        let mut columns = Vec::new();
        for _ in 0..r.varint()? {
            let n = r.str()?;
            columns.push((n, get_type(r)?));
        }
        let mut depends_on = Vec::new();
        for _ in 0..r.varint()? {
            depends_on.push(r.str()?);
        }
        Ok(View {
            id,
            name,
            query,
            columns,
            depends_on,
        })
    }
}

pub struct Catalog {
    pool: Arc<BufferPool>,
    /// By id: a view a transaction dropped and one it created in its place share a name
    /// until it ends (each transaction sees one of them).
    views: RwLock<FxHashMap<TableId, Arc<View>>>,
    /// Every role, the bootstrap superuser always among them (`roles.rs`).
    roles: RwLock<FxHashMap<String, Arc<Role>>>,
    /// Granted privileges by object OID (`acl.rs`); an object without is at its default.
    acls: RwLock<FxHashMap<u32, Arc<super::acl::Acl>>>,
    /// By name: each name's holder. A table a transaction dropped and then gave its name
    /// to a new one (neither committed yet) waits in `dropping`, seen by the others.
    tables: RwLock<FxHashMap<String, Arc<Table>>>,
    /// Dropped by a transaction that has not committed yet (and out of `tables`: its name
    /// was given to a new table, or its drop is being finished).
    dropping: RwLock<FxHashMap<TableId, Arc<Table>>>,
    /// Sequences whose name a transaction gave to a new relation after dropping them (or
    /// the table that owns them, whose id is beside them); its commit drops them, its
    /// rollback gives the name back. Others see them until then.
    replaced_sequences: RwLock<Vec<(Option<TableId>, Arc<Sequence>)>>,
    /// Created by a transaction that has not committed yet.
    unconfirmed: RwLock<FxHashSet<TableId>>,
    sequences: RwLock<FxHashMap<String, Arc<Sequence>>>,
    next_table_id: AtomicU32,
    /// Bumped by every DDL; plans made under an older version are re-planned.
    version: AtomicU64,
    /// Serializes check-log-apply of catalog changes.
    ddl: parking_lot::Mutex<()>,
}

impl Default for Catalog {
    /// A catalog whose pages live in memory only (tests).
    fn default() -> Catalog {
        let disk = SimDisk::new();
        let file = disk
            .open(std::path::Path::new("pages"), true)
            .expect("a simulated disk opens any file");
        Catalog::new(Arc::new(BufferPool::new(
            file,
            PageMap::default(),
            IN_MEMORY_FRAMES,
        )))
    }
}

impl Catalog {
    /// An empty catalog over `pool`.
    pub fn new(pool: Arc<BufferPool>) -> Catalog {
        Catalog {
            pool,
            tables: RwLock::default(),
            dropping: RwLock::default(),
            replaced_sequences: RwLock::default(),
            unconfirmed: RwLock::default(),
            sequences: RwLock::default(),
            views: RwLock::default(),
            roles: RwLock::new(
                [(BOOTSTRAP_ROLE_NAME.to_string(), Arc::new(Role::bootstrap()))]
                    .into_iter()
                    .collect(),
            ),
            acls: RwLock::default(),
            next_table_id: AtomicU32::new(0),
            version: AtomicU64::new(0),
            ddl: parking_lot::Mutex::new(()),
        }
    }

    pub fn pool(&self) -> &Arc<BufferPool> {
        &self.pool
    }

    /// Hold while checking, logging and applying a catalog change.
    pub fn ddl_lock(&self) -> parking_lot::MutexGuard<'_, ()> {
        self.ddl.lock()
    }

    /// A fresh table id (for a CREATE TABLE that is logged before it is applied).
    pub fn allocate_table_id(&self) -> TableId {
        TableId(self.next_table_id.fetch_add(1, Ordering::Relaxed) + 16384)
    }

    pub fn version(&self) -> u64 {
        self.version.load(Ordering::Acquire)
    }

    fn bump(&self) {
        self.version.fetch_add(1, Ordering::AcqRel);
    }

    /// The holder of the name `name` (see [`Catalog::table_seen`] for what a transaction
    /// sees).
    pub fn table(&self, name: &str) -> Option<Arc<Table>> {
        stages::read(Stage::Catalog, &self.tables)
            .get(name)
            .cloned()
    }

    /// The table named `name` that a transaction sees (`hidden`: the relations it does
    /// not): the name's holder, or else the newest table of that name that a transaction
    /// dropped and replaced and has not committed (which the others see until it does).
    pub fn table_seen(&self, name: &str, hidden: &dyn Fn(TableId) -> bool) -> Option<Arc<Table>> {
        if let Some(t) = self.table(name).filter(|t| !hidden(t.id)) {
            return Some(t);
        }
        self.dropping
            .read()
            .values()
            .filter(|t| t.def().name == name && !hidden(t.id))
            .max_by_key(|t| t.id.0)
            .cloned()
    }

    /// Every table a transaction sees (`hidden`: those it does not), by name.
    pub fn tables_seen(&self, hidden: &dyn Fn(TableId) -> bool) -> Vec<Arc<Table>> {
        let mut seen: Vec<Arc<Table>> = stages::read(Stage::Catalog, &self.tables)
            .values()
            .chain(self.dropping.read().values())
            .filter(|t| !hidden(t.id))
            .cloned()
            .collect();
        seen.sort_by(|a, b| a.def().name.cmp(&b.def().name).then(b.id.0.cmp(&a.id.0)));
        // One per name (the replaced table a transaction still sees is the newest).
        seen.dedup_by(|later, first| later.def().name == first.def().name);
        seen
    }

    /// Every sequence's name.
    pub fn sequence_names(&self) -> Vec<String> {
        self.sequences.read().keys().cloned().collect()
    }

    pub fn table_names(&self) -> Vec<String> {
        let mut names: Vec<String> = stages::read(Stage::Catalog, &self.tables)
            .keys()
            .cloned()
            .collect();
        names.sort();
        names
    }

    /// Create a table; 42P07 if the name is taken.
    pub fn create_table(&self, def: TableDef) -> Result<Arc<Table>> {
        let id = TableId(self.next_table_id.fetch_add(1, Ordering::Relaxed) + 16384);
        self.create_table_with_id(id, def)
    }

    /// The table with this id, if it exists (or is being dropped).
    pub fn table_by_id(&self, id: TableId) -> Option<Arc<Table>> {
        let found = stages::read(Stage::Catalog, &self.tables)
            .values()
            .find(|t| t.id == id)
            .cloned();
        found.or_else(|| self.dropping.read().get(&id).cloned())
    }

    /// The foreign keys that reference table `id`, with the tables that have them (those
    /// being created or dropped by a transaction that has not ended included: their
    /// constraints hold until it ends).
    pub fn referencing(&self, id: TableId) -> Vec<(Arc<Table>, ForeignKeyDef)> {
        let tables = stages::read(Stage::Catalog, &self.tables);
        let dropping = self.dropping.read();
        let mut found: Vec<(Arc<Table>, ForeignKeyDef)> = tables
            .values()
            .chain(dropping.values())
            .flat_map(|t| {
                let def = t.def();
                def.foreign_keys
                    .iter()
                    .filter(|fk| fk.referenced == id)
                    .map(|fk| (t.clone(), fk.clone()))
                    .collect::<Vec<_>>()
            })
            .collect();
        // A stable order: by table, then as the table lists them.
        found.sort_by_key(|(t, _)| t.id.0);
        found
    }

    /// Create a table with a given id (recovery replays ids as they were).
    pub fn create_table_with_id(&self, id: TableId, def: TableDef) -> Result<Arc<Table>> {
        self.next_table_id
            .fetch_max(id.0.saturating_sub(16384) + 1, Ordering::Relaxed);
        let mut tables = stages::write(Stage::Catalog, &self.tables);
        if tables.contains_key(&def.name) {
            return Err(Error::new(
                SqlState::DUPLICATE_TABLE,
                format!("relation \"{}\" already exists", def.name),
            ));
        }
        for seq in &def.owned_sequences {
            let mut sequences = self.sequences.write();
            // A sequence CREATE SEQUENCE made and OWNED BY gave the table is kept.
            if !sequences.contains_key(seq) {
                sequences.insert(seq.clone(), Arc::new(Sequence::new(seq, None)));
            }
        }
        let table = Arc::new(Table::create(id, def.clone(), self.pool.clone())?);
        tables.insert(def.name, table.clone());
        self.unconfirmed.write().insert(id);
        self.bump();
        Ok(table)
    }

    /// CREATE TABLE of a name whose holder the creating transaction dropped (neither
    /// committed yet), or its replay: the holder moves to the tables being dropped, with
    /// the sequences it owns (those not created since), and the new table takes the name.
    /// Without a holder, [`Catalog::create_table_with_id`].
    pub fn create_table_replacing(&self, id: TableId, def: TableDef) -> Result<Arc<Table>> {
        let holder = stages::write(Stage::Catalog, &self.tables).remove(&def.name);
        if let Some(old) = holder {
            let unconfirmed = self.unconfirmed.read();
            let mut sequences = self.sequences.write();
            let mut replaced = self.replaced_sequences.write();
            for name in &old.def().owned_sequences {
                let created_since = |s: &Sequence| {
                    s.created()
                        .is_some_and(|(seq_id, _)| unconfirmed.contains(&seq_id))
                };
                if sequences.get(name).is_some_and(|s| !created_since(s)) {
                    if let Some(seq) = sequences.remove(name) {
                        replaced.push((Some(old.id), seq));
                    }
                }
            }
            drop((unconfirmed, sequences, replaced));
            self.dropping.write().insert(old.id, old);
        }
        self.create_table_with_id(id, def)
    }

    /// CREATE SEQUENCE of a name whose holder the creating transaction dropped (or the
    /// table that owns it), or its replay: the holder waits aside, with the id of the
    /// table that owns it, and the new sequence takes the name. Without a holder,
    /// [`Catalog::create_sequence`].
    pub fn create_sequence_replacing(
        &self,
        name: &str,
        id: TableId,
        options: SequenceOptions,
    ) -> Result<()> {
        let holder = self.sequences.write().remove(name);
        if let Some(old) = holder {
            let owner = stages::read(Stage::Catalog, &self.tables)
                .values()
                .find(|t| t.def().owned_sequences.iter().any(|s| s == name))
                .map(|t| t.id);
            self.replaced_sequences.write().push((owner, old));
        }
        self.create_sequence(name, id, options)
    }

    /// A sequence that waits aside for `name`, if a transaction sees it (`hidden`: the
    /// relations it does not).
    fn replaced_sequence_seen(
        &self,
        name: &str,
        hidden: &dyn Fn(TableId) -> bool,
    ) -> Option<Arc<Sequence>> {
        self.replaced_sequences
            .read()
            .iter()
            .rev()
            .filter(|(_, s)| s.name == name)
            .find(|(owner, s)| match (owner, s.created()) {
                (Some(table), _) => !hidden(*table),
                (None, Some((id, _))) => !hidden(id),
                (None, None) => true,
            })
            .map(|(_, s)| s.clone())
    }

    /// The transaction that created these tables committed.
    pub fn confirm(&self, ids: &[TableId]) {
        let mut unconfirmed = self.unconfirmed.write();
        for id in ids {
            unconfirmed.remove(id);
        }
    }

    /// The drops of these tables committed: forget them (and the sequences they own).
    /// Returns them, for [`Table::destroy`] (which the caller runs outside the
    /// checkpoint barrier). A table is still named in the catalog until then when its
    /// drop ran in a transaction (see `WriteGate`); recovery moves it to the tables being
    /// dropped first ([`Catalog::drop_table`]).
    ///
    /// An id that is a sequence's or a view's (they share the id space) drops it.
    pub fn finish_drops(&self, ids: &[TableId]) -> Vec<Arc<Table>> {
        if ids.is_empty() {
            return Vec::new();
        }
        let is_table = |id: &TableId| {
            stages::read(Stage::Catalog, &self.tables)
                .values()
                .any(|t| t.id == *id)
                || self.dropping.read().contains_key(id)
        };
        let (ids, others): (Vec<TableId>, Vec<TableId>) = ids.iter().partition(|id| is_table(id));
        for id in others {
            self.drop_sequence_or_view(id);
        }
        let ids = &ids[..];
        let mut tables = stages::write(Stage::Catalog, &self.tables);
        let mut dropping = self.dropping.write();
        let mut unconfirmed = self.unconfirmed.write();
        let mut sequences = self.sequences.write();
        let mut replaced_sequences = self.replaced_sequences.write();
        let dropped = ids
            .iter()
            .filter_map(|id| {
                unconfirmed.remove(id);
                let named = tables
                    .iter()
                    .find(|(_, t)| t.id == *id)
                    .map(|(n, _)| n.clone());
                let table = match named {
                    Some(name) => {
                        let table = tables.remove(&name)?;
                        for s in &table.def().owned_sequences {
                            // A name its transaction gave to a new sequence: the
                            // table's waits aside.
                            let aside = replaced_sequences
                                .iter()
                                .position(|(owner, seq)| *owner == Some(*id) && seq.name == *s);
                            match aside {
                                Some(at) => {
                                    replaced_sequences.remove(at);
                                }
                                None => {
                                    sequences.remove(s);
                                }
                            }
                        }
                        table
                    }
                    // Its sequences left the names with it (or with its drop).
                    None => {
                        let table = dropping.remove(id)?;
                        replaced_sequences.retain(|(owner, _)| *owner != Some(*id));
                        table
                    }
                };
                Some(table)
            })
            .collect();
        self.bump();
        dropped
    }

    /// Whether the table's creation has not committed yet.
    pub fn is_unconfirmed(&self, id: TableId) -> bool {
        self.unconfirmed.read().contains(&id)
    }

    /// Whether a transaction that created `created` and dropped `dropped` (neither
    /// committed yet) does not see relation `id`: one it dropped, or one another
    /// transaction created and has not committed.
    pub fn hides(&self, id: TableId, created: &[TableId], dropped: &[TableId]) -> bool {
        dropped.contains(&id) || (self.is_unconfirmed(id) && !created.contains(&id))
    }

    /// The view named `name` that a transaction sees (`hidden`: those it does not).
    pub fn view_seen(&self, name: &str, hidden: &dyn Fn(TableId) -> bool) -> Option<Arc<View>> {
        self.views_named(name).into_iter().find(|v| !hidden(v.id))
    }

    /// The sequence named `name`, if a transaction sees it (`hidden`: the relations it
    /// does not; a serial column's sequence goes with its table).
    pub fn sequence_seen(
        &self,
        name: &str,
        hidden: &dyn Fn(TableId) -> bool,
    ) -> Option<Arc<Sequence>> {
        self.sequence(name)
            .filter(|s| !s.created().is_some_and(|(id, _)| hidden(id)))
            .or_else(|| self.replaced_sequence_seen(name, hidden))
    }

    /// Remove a table and the sequences it owns; returns them so a rollback can restore them.
    /// The table stays known as being dropped until [`Catalog::finish_drops`].
    ///
    /// A table its transaction dropped and replaced by this one (its creation rolled back)
    /// takes the name back, with its sequences.
    pub fn drop_table(&self, name: &str) -> Option<(Arc<Table>, Vec<Arc<Sequence>>)> {
        let mut tables = stages::write(Stage::Catalog, &self.tables);
        let table = tables.remove(name)?;
        let mut dropping = self.dropping.write();
        dropping.insert(table.id, table.clone());
        let mut seqs = self.sequences.write();
        let owned = table
            .def()
            .owned_sequences
            .iter()
            .filter_map(|s| seqs.remove(s))
            .collect();
        let replaced = dropping
            .values()
            .filter(|t| t.def().name == name && t.id != table.id)
            .max_by_key(|t| t.id.0)
            .map(|t| t.id);
        if let Some(old) = replaced.and_then(|id| dropping.remove(&id)) {
            let mut waiting = self.replaced_sequences.write();
            waiting.retain(|(owner, seq)| match owner {
                Some(t) if *t == old.id => {
                    seqs.insert(seq.name.clone(), seq.clone());
                    false
                }
                _ => true,
            });
            tables.insert(name.to_string(), old);
        }
        self.bump();
        Some((table, owned))
    }

    /// Note a schema change made to a table in place (e.g. a new primary key).
    pub fn table_altered(&self) {
        self.bump();
    }

    /// A table's statistics changed (ANALYZE): plans made before are made again.
    pub fn statistics_changed(&self) {
        self.bump();
    }

    /// The table named `old` is now named as its definition says (ALTER TABLE ... RENAME
    /// TO, or its replay); nothing if it is not there under `old`.
    pub fn rename_table(&self, old: &str) {
        let mut tables = stages::write(Stage::Catalog, &self.tables);
        if let Some(table) = tables.remove(old) {
            tables.insert(table.def().name.clone(), table);
        }
        drop(tables);
        self.bump();
    }

    pub fn role(&self, name: &str) -> Option<Arc<Role>> {
        self.roles.read().get(name).cloned()
    }

    /// Every role, by name.
    pub fn roles(&self) -> Vec<Arc<Role>> {
        let mut roles: Vec<_> = self.roles.read().values().cloned().collect();
        roles.sort_by(|a, b| a.name.cmp(&b.name));
        roles
    }

    /// Create or replace a role (CREATE ROLE, ALTER ROLE, and their replay).
    pub fn set_role(&self, role: Role) {
        self.roles.write().insert(role.name.clone(), Arc::new(role));
        self.version.fetch_add(1, Ordering::AcqRel);
    }

    /// Drop a role, and every membership in it; the bootstrap superuser stays.
    pub fn drop_role(&self, name: &str) {
        let mut roles = self.roles.write();
        if let Some(dropped) = roles.get(name).filter(|r| !r.is_bootstrap()).cloned() {
            roles.remove(name);
            for role in roles.values_mut() {
                if role.member_of.iter().any(|m| m.role == dropped.oid) {
                    Arc::make_mut(role)
                        .member_of
                        .retain(|m| m.role != dropped.oid);
                }
            }
        }
        drop(roles);
        self.version.fetch_add(1, Ordering::AcqRel);
    }

    /// The role whose OID is `oid`.
    pub fn role_by_oid(&self, oid: u32) -> Option<Arc<Role>> {
        self.roles.read().values().find(|r| r.oid == oid).cloned()
    }

    /// The roles `role` is a member of, directly or not, itself included (PostgreSQL's
    /// `roles_is_member_of`). `inheriting`: only through roles with INHERIT, which is
    /// whose privileges `role` has (`has_privs_of_role`); otherwise every membership, as
    /// `+group` in pg_hba.conf and SET ROLE count them. Membership never forms a cycle,
    /// and each role is visited once.
    pub fn roles_of(&self, role: &Role, inheriting: bool) -> Vec<u32> {
        let roles = self.roles.read();
        let by_oid: FxHashMap<u32, &Arc<Role>> = roles.values().map(|r| (r.oid, r)).collect();
        let mut found = vec![role.oid];
        let mut i = 0;
        while i < found.len() {
            let current = if i == 0 {
                Some(role)
            } else {
                by_oid.get(&found[i]).map(|r| r.as_ref())
            };
            i += 1;
            let Some(current) = current else { continue };
            if inheriting && !current.inherit {
                continue;
            }
            for m in &current.member_of {
                if !found.contains(&m.role) {
                    found.push(m.role);
                }
            }
        }
        found
    }

    /// The privileges granted on the object `oid`; None: its default.
    pub fn acl(&self, oid: u32) -> Option<Arc<super::acl::Acl>> {
        self.acls.read().get(&oid).cloned()
    }

    /// Every object's granted privileges.
    pub fn acls(&self) -> Vec<(u32, Arc<super::acl::Acl>)> {
        self.acls
            .read()
            .iter()
            .map(|(o, a)| (*o, a.clone()))
            .collect()
    }

    /// Give objects their new lists (GRANT, REVOKE and their replay).
    pub fn set_acls(&self, lists: Vec<(u32, super::acl::Acl)>) {
        let mut acls = self.acls.write();
        for (oid, acl) in lists {
            acls.insert(oid, Arc::new(acl));
        }
        drop(acls);
        self.version.fetch_add(1, Ordering::AcqRel);
    }

    pub fn view(&self, name: &str) -> Option<Arc<View>> {
        let named = self.views_named(name);
        let confirmed = named.iter().find(|v| !self.is_unconfirmed(v.id)).cloned();
        confirmed.or_else(|| named.into_iter().next())
    }

    /// Every view named `name`: one, or, while a transaction that dropped it and created
    /// another in its place is open, two (the caller picks the one its transaction sees).
    pub fn views_named(&self, name: &str) -> Vec<Arc<View>> {
        self.views
            .read()
            .values()
            .filter(|v| v.name == name)
            .cloned()
            .collect()
    }

    pub fn views(&self) -> Vec<Arc<View>> {
        self.views.read().values().cloned().collect()
    }

    /// The views that read `name` (a table or view), but those `gone` says the asking
    /// transaction does not see (it dropped them and has not committed yet).
    pub fn dependent_views(&self, name: &str, gone: &dyn Fn(TableId) -> bool) -> Vec<String> {
        let mut out: Vec<String> = self
            .views
            .read()
            .values()
            .filter(|v| v.depends_on.iter().any(|d| d == name) && !gone(v.id))
            .map(|v| v.name.clone())
            .collect();
        out.sort();
        out
    }

    /// The views that read `name`, directly or through other views. Views nest at most
    /// [`MAX_VIEW_NESTING`] deep here (a view cannot read itself, so there is no cycle).
    pub fn dependent_views_deep(
        &self,
        name: &str,
        gone: &dyn Fn(TableId) -> bool,
    ) -> DependentViews {
        let mut found = DependentViews::default();
        self.collect_dependent_views(name, gone, &mut found, 0);
        found
    }

    fn collect_dependent_views(
        &self,
        name: &str,
        gone: &dyn Fn(TableId) -> bool,
        found: &mut DependentViews,
        depth: usize,
    ) {
        if depth >= MAX_VIEW_NESTING {
            return;
        }
        for view in self.dependent_views(name, gone) {
            if found.found.iter().any(|(v, _)| *v == view) {
                continue;
            }
            found.found.push((view.clone(), name.to_string()));
            self.collect_dependent_views(&view, gone, found, depth + 1);
            found.drop_order.push(view);
        }
    }

    /// CREATE [OR REPLACE] VIEW, or its replay: the view with this id is created, or
    /// replaced (CREATE OR REPLACE VIEW keeps the id). The caller has checked the name.
    pub fn create_view(&self, view: View) {
        self.next_table_id
            .fetch_max(view.id.0.saturating_sub(16384) + 1, Ordering::Relaxed);
        self.views.write().insert(view.id, Arc::new(view));
        self.bump();
    }

    /// The view with this id.
    pub fn view_by_id(&self, id: TableId) -> Option<Arc<View>> {
        self.views.read().get(&id).cloned()
    }

    /// The sequence CREATE SEQUENCE made with this id.
    pub fn sequence_by_id(&self, id: TableId) -> Option<Arc<Sequence>> {
        self.sequences
            .read()
            .values()
            .find(|s| s.created().is_some_and(|(i, _)| i == id))
            .cloned()
    }

    /// A sequence or view whose creation is logged but not committed yet: hidden from
    /// other transactions until a commit names it ([`Catalog::confirm`]); dropped at the
    /// end of recovery if none does. (A table is marked so when it is created.)
    pub fn mark_unconfirmed(&self, id: TableId) {
        self.unconfirmed.write().insert(id);
    }

    /// Drop the sequence or view with this id (its drop committed, or its creation was
    /// rolled back): false if there is none.
    fn drop_sequence_or_view(&self, id: TableId) -> bool {
        self.unconfirmed.write().remove(&id);
        if self.views.write().remove(&id).is_some() {
            self.bump();
            return true;
        }
        let created = |s: &Sequence| s.created().is_some_and(|(i, _)| i == id);
        {
            let mut waiting = self.replaced_sequences.write();
            if let Some(at) = waiting.iter().position(|(_, s)| created(s)) {
                waiting.remove(at);
                self.bump();
                return true;
            }
        }
        let Some(seq) = self.sequence_by_id(id) else {
            return false;
        };
        self.drop_sequence(&seq.name);
        // One its transaction dropped and replaced by this one (whose creation rolled
        // back) takes the name back.
        // (Not one that waits with a table that waits aside itself.)
        let dropping = self.dropping.read();
        let mut waiting = self.replaced_sequences.write();
        if let Some(at) = waiting.iter().rposition(|(owner, s)| {
            s.name == seq.name && !owner.is_some_and(|t| dropping.contains_key(&t))
        }) {
            let (_, old) = waiting.remove(at);
            self.sequences.write().insert(old.name.clone(), old);
        }
        true
    }

    /// The replay of a DropView record (logged before drops went into Commit records):
    /// the committed view of that name goes.
    pub fn drop_view(&self, name: &str) {
        if let Some(view) = self.view(name) {
            self.views.write().remove(&view.id);
        }
        self.bump();
    }

    /// The table with a secondary index named `name`.
    pub fn index_owner(&self, name: &str) -> Option<Arc<Table>> {
        stages::read(Stage::Catalog, &self.tables)
            .values()
            .find(|t| t.def().indexes.iter().any(|i| i.name == name))
            .cloned()
    }

    /// Whether a table, index, primary key index, sequence or view is named `name` (they
    /// share one namespace).
    pub fn relation_exists(&self, name: &str) -> bool {
        self.relation_exists_seen(name, &|_| false)
    }

    /// [`Catalog::relation_exists`], but not counting the tables (with their indexes),
    /// views and CREATE SEQUENCE's sequences that `dropped` names (the asking transaction
    /// dropped them and has not committed): a transaction that dropped a relation may
    /// create another of that name.
    pub fn relation_exists_seen(&self, name: &str, dropped: &dyn Fn(TableId) -> bool) -> bool {
        let owner_dropped = || {
            stages::read(Stage::Catalog, &self.tables)
                .values()
                .any(|t| dropped(t.id) && t.def().owned_sequences.iter().any(|s| s == name))
        };
        let sequence =
            self.sequences.read().get(name).is_some_and(|s| {
                !s.created().is_some_and(|(id, _)| dropped(id)) && !owner_dropped()
            });
        if sequence
            || self
                .views
                .read()
                .values()
                .any(|v| v.name == name && !dropped(v.id))
        {
            return true;
        }
        stages::read(Stage::Catalog, &self.tables)
            .values()
            .filter(|t| !dropped(t.id))
            .any(|t| {
                let def = t.def();
                def.name == name
                    || def.pkey_name.as_deref() == Some(name)
                    || def.indexes.iter().any(|i| i.name == name)
            })
    }

    pub fn sequence(&self, name: &str) -> Option<Arc<Sequence>> {
        self.sequences.read().get(name).cloned()
    }

    /// Every sequence CREATE SEQUENCE made (owned by a table or not), those waiting aside
    /// for a name given to a new relation too.
    pub fn created_sequences(&self) -> Vec<Arc<Sequence>> {
        let replaced = self.replaced_sequences.read();
        self.sequences
            .read()
            .values()
            .chain(replaced.iter().map(|(_, s)| s))
            .filter(|s| s.created().is_some())
            .cloned()
            .collect()
    }

    /// CREATE SEQUENCE (or its replay).
    pub fn create_sequence(&self, name: &str, id: TableId, options: SequenceOptions) -> Result<()> {
        self.next_table_id
            .fetch_max(id.0.saturating_sub(16384) + 1, Ordering::Relaxed);
        let mut sequences = self.sequences.write();
        if sequences.contains_key(name) {
            return Err(Error::new(
                SqlState::DUPLICATE_TABLE,
                format!("relation \"{name}\" already exists"),
            ));
        }
        sequences.insert(
            name.to_string(),
            Arc::new(Sequence::new(name, Some((id, options)))),
        );
        self.bump();
        Ok(())
    }

    /// A serial column's sequence `name` becomes one as CREATE SEQUENCE makes, with id
    /// `id` and `options`, where it stands (so a transaction block can drop it as it
    /// drops those), or the replay of that. False if there is no such sequence.
    pub fn give_sequence_id(&self, name: &str, id: TableId, options: SequenceOptions) -> bool {
        self.next_table_id
            .fetch_max(id.0.saturating_sub(16384) + 1, Ordering::Relaxed);
        let mut sequences = self.sequences.write();
        let Some(old) = sequences
            .get(name)
            .filter(|s| s.created().is_none())
            .cloned()
        else {
            return false;
        };
        let seq = Sequence::new(name, Some((id, options)));
        seq.next
            .store(old.next.load(Ordering::Relaxed), Ordering::Relaxed);
        seq.logged
            .store(old.logged.load(Ordering::Acquire), Ordering::Release);
        let old_spent = old.state.lock().spent;
        seq.state.lock().spent = old_spent || old.peek_next() > options.max;
        sequences.insert(name.to_string(), Arc::new(seq));
        drop(sequences);
        self.bump();
        true
    }

    /// DROP SEQUENCE (or its replay): false if there was none.
    pub fn drop_sequence(&self, name: &str) -> bool {
        let dropped = self.sequences.write().remove(name).is_some();
        self.bump();
        dropped
    }

    /// The catalog as a checkpoint stores it: every table (those being dropped too) with
    /// its root page, hidden row id and whether its creation is confirmed, and every
    /// sequence with the value it is logged up to.
    pub fn image(&self) -> Vec<u8> {
        let mut w = Writer::default();
        w.u32(self.next_table_id.load(Ordering::Acquire));
        let tables = stages::read(Stage::Catalog, &self.tables);
        let dropping = self.dropping.read();
        let unconfirmed = self.unconfirmed.read();
        w.varint((tables.len() + dropping.len()) as u64);
        let all = tables
            .values()
            .map(|t| (t, false))
            .chain(dropping.values().map(|t| (t, true)));
        for (t, being_dropped) in all {
            put_def(&mut w, t.id, &t.committed_def());
            w.u64(t.root().0);
            w.u64(t.peek_next_row_id());
            w.u8(unconfirmed.contains(&t.id) as u8 | (being_dropped as u8) << 1);
            let indexes = t.committed_indexes();
            w.varint(indexes.len() as u64);
            for index in indexes.iter() {
                w.u64(index.root().0);
            }
        }
        let sequences = self.sequences.read();
        w.varint(sequences.len() as u64);
        for s in sequences.values() {
            put_sequence(&mut w, s);
        }
        let views = self.views.read();
        w.varint(views.len() as u64);
        for v in views.values() {
            v.put(&mut w);
        }
        let roles = self.roles.read();
        w.varint(roles.len() as u64);
        for role in roles.values() {
            role.put(&mut w);
        }
        let acls = self.acls.read();
        w.varint(acls.len() as u64);
        for (oid, acl) in acls.iter() {
            super::acl::put_acl(&mut w, *oid, acl);
        }
        // The sequences and views whose creation has not committed (tables carry the
        // mark themselves).
        let pending: Vec<TableId> = unconfirmed
            .iter()
            .copied()
            .filter(|id| !tables.values().any(|t| t.id == *id))
            .filter(|id| !dropping.contains_key(id))
            .collect();
        w.varint(pending.len() as u64);
        for id in pending {
            w.u32(id.0);
        }
        // The sequences waiting aside for a name given to a new relation.
        let replaced = self.replaced_sequences.read();
        w.varint(replaced.len() as u64);
        for (owner, s) in replaced.iter() {
            w.u32(owner.map_or(0, |t| t.0));
            put_sequence(&mut w, s);
        }
        w.buf
    }

    /// The catalog of a checkpoint's `image` over `pool`. Tables that were being dropped
    /// come back as being dropped: replay finishes or undoes their drop.
    pub fn from_image(pool: Arc<BufferPool>, image: &[u8]) -> Result<Catalog> {
        let catalog = Catalog::new(pool);
        let mut r = Reader::new(image);
        catalog.next_table_id.store(r.u32()?, Ordering::Release);
        let ntables = r.varint()?;
        for _ in 0..ntables {
            let (id, def) = get_def(&mut r)?;
            let root = PageId(r.u64()?);
            let next_row_id = r.u64()?;
            let flags = r.u8()?;
            let table = Arc::new(Table::open(
                id,
                def.clone(),
                catalog.pool.clone(),
                root,
                next_row_id,
            ));
            let nindexes = r.varint()?;
            let mut roots = Vec::new();
            for _ in 0..nindexes {
                roots.push(PageId(r.u64()?));
            }
            table.open_indexes(&roots)?;
            if flags & 1 != 0 {
                catalog.unconfirmed.write().insert(id);
            }
            if flags & 2 != 0 {
                catalog.dropping.write().insert(id, table);
            } else if catalog
                .tables
                .write()
                .insert(def.name.clone(), table)
                .is_some()
            {
                return Err(corrupt(format!("table \"{}\" twice", def.name)));
            }
        }
        let nsequences = r.varint()?;
        for _ in 0..nsequences {
            let seq = get_sequence(&mut r)?;
            catalog.sequences.write().insert(seq.name.clone(), seq);
        }
        for _ in 0..r.varint()? {
            let view = View::get(&mut r)?;
            catalog.views.write().insert(view.id, Arc::new(view));
        }
        // Images written before roles existed end here: the bootstrap role alone.
        if !r.is_done() {
            for _ in 0..r.varint()? {
                let role = Role::get(&mut r)?;
                catalog
                    .roles
                    .write()
                    .insert(role.name.clone(), Arc::new(role));
            }
        }
        // Images written before privileges existed end here.
        if !r.is_done() {
            for _ in 0..r.varint()? {
                let (oid, acl) = super::acl::get_acl(&mut r)?;
                catalog.acls.write().insert(oid, Arc::new(acl));
            }
        }
        // And those written before sequences and views were created in transactions.
        if !r.is_done() {
            for _ in 0..r.varint()? {
                catalog.unconfirmed.write().insert(TableId(r.u32()?));
            }
        }
        // And those written before a transaction could give a dropped name to a new
        // relation.
        if !r.is_done() {
            for _ in 0..r.varint()? {
                let owner = Some(TableId(r.u32()?)).filter(|t| t.0 != 0);
                let seq = get_sequence(&mut r)?;
                catalog.replaced_sequences.write().push((owner, seq));
            }
        }
        if !r.is_done() {
            return Err(corrupt("trailing bytes".into()));
        }
        Ok(catalog)
    }

    /// Tables whose creation never committed (at the end of recovery).
    pub fn unconfirmed(&self) -> Vec<TableId> {
        self.unconfirmed.read().iter().copied().collect()
    }

    /// At the end of recovery: drops that never committed are undone. A name taken since
    /// (DDL is not transactional across sessions) keeps the newer table.
    pub fn undo_unfinished_drops(&self) {
        let pending: Vec<Arc<Table>> = self.dropping.write().drain().map(|(_, t)| t).collect();
        for table in pending {
            let name = table.def().name.clone();
            let mut tables = stages::write(Stage::Catalog, &self.tables);
            match tables.entry(name) {
                std::collections::hash_map::Entry::Vacant(slot) => {
                    let mut sequences = self.sequences.write();
                    self.replaced_sequences
                        .write()
                        .retain(|(owner, seq)| match owner {
                            Some(t) if *t == table.id => {
                                sequences.insert(seq.name.clone(), seq.clone());
                                false
                            }
                            _ => true,
                        });
                    slot.insert(table);
                }
                std::collections::hash_map::Entry::Occupied(taken) => {
                    tracing::warn!(
                        "table \"{}\" (id {}) was being dropped and its name is taken; it is dropped",
                        taken.key(),
                        table.id.0
                    );
                    drop(tables);
                    if let Err(e) = table.destroy() {
                        tracing::warn!("could not free the pages of table {}: {e}", table.id.0);
                    }
                }
            }
        }
        self.bump();
    }
}

/// A sequence as a checkpoint's image stores it: its name, the value it is logged up
/// to, and CREATE SEQUENCE's id and options.
fn put_sequence(w: &mut Writer, s: &Sequence) {
    w.str(&s.name);
    w.u64(s.logged.load(Ordering::Acquire) as u64);
    match s.created() {
        None => w.u8(0),
        Some((id, options)) => {
            w.u8(1);
            w.u32(id.0);
            options.put(w);
        }
    }
}

fn get_sequence(r: &mut Reader) -> Result<Arc<Sequence>> {
    let name = r.str()?;
    let logged = r.u64()? as i64;
    let created = match r.u8()? {
        0 => None,
        _ => Some((TableId(r.u32()?), SequenceOptions::get(r)?)),
    };
    let seq = Arc::new(Sequence::new(&name, created));
    if logged >= created.map_or(1, |(_, o)| o.start) {
        seq.advance_past(logged);
    }
    Ok(seq)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn column(name: &str, data_type: DataType) -> Column {
        Column {
            name: name.into(),
            data_type,
            not_null: false,
            default: None,
            missing: None,
            dropped: false,
            identity: false,
            description: None,
        }
    }

    /// A definition with every part the encoding carries: an identity column, a dropped
    /// one, an index with an operator class, a CHECK and two foreign keys.
    fn full_def() -> TableDef {
        let mut id = column("id", DataType::Int8);
        id.identity = true;
        id.not_null = true;
        id.default = Some("nextval('t_id_seq')".into());
        let mut gone = column(&TableDef::dropped_name(1), DataType::Int4);
        gone.dropped = true;
        let mut name = column("name", DataType::Text);
        name.description = Some("what it is called".into());
        TableDef {
            name: "t".into(),
            columns: vec![id, gone, name, column("p", DataType::Int8)],
            primary_key: vec![0],
            pkey_name: Some("t_pkey".into()),
            owned_sequences: vec!["t_id_seq".into()],
            indexes: vec![IndexDef {
                name: "t_name_like".into(),
                columns: vec![2, 3],
                unique: false,
                constraint: false,
                number: 0,
                opclasses: vec![Some("text_pattern_ops".into()), None],
            }],
            checks: vec![
                CheckDef {
                    name: "t_name_check".into(),
                    expr: "length(name) > 1".into(),
                    validated: true,
                },
                CheckDef {
                    name: "t_later".into(),
                    expr: "p > 0".into(),
                    validated: false,
                },
            ],
            foreign_keys: vec![
                ForeignKeyDef {
                    name: "t_p_fkey".into(),
                    columns: vec![3],
                    referenced: TableId(7),
                    referenced_columns: vec![0],
                    on_delete: FkAction::Cascade,
                    on_update: FkAction::SetNull,
                    deferrable: true,
                    initially_deferred: true,
                    match_full: true,
                    validated: false,
                },
                ForeignKeyDef {
                    name: "t_self".into(),
                    columns: vec![3],
                    referenced: TableId(9),
                    referenced_columns: vec![0],
                    on_delete: FkAction::SetDefault,
                    on_update: FkAction::Restrict,
                    deferrable: false,
                    initially_deferred: false,
                    match_full: false,
                    validated: true,
                },
            ],
            description: Some("the t table".into()),
        }
    }

    #[test]
    fn a_definition_survives_its_encoding() {
        let def = full_def();
        let mut w = Writer::default();
        put_def(&mut w, TableId(9), &def);
        let mut r = Reader::new(&w.buf);
        let (id, back) = get_def(&mut r).expect("decodes");
        assert!(r.is_done());
        assert_eq!(id, TableId(9));
        assert_eq!(back.foreign_keys, def.foreign_keys);
        assert_eq!(back.indexes[0].opclasses, def.indexes[0].opclasses);
        assert_eq!(back.indexes[0].opclass(0), Some("text_pattern_ops"));
        let flags: Vec<(bool, bool)> = back
            .columns
            .iter()
            .map(|c| (c.dropped, c.identity))
            .collect();
        assert_eq!(
            flags,
            [(false, true), (true, false), (false, false), (false, false)]
        );
        assert_eq!(back.column_index("name"), Some(2));
        assert_eq!(back.description.as_deref(), Some("the t table"));
        let descriptions: Vec<Option<&str>> = back
            .columns
            .iter()
            .map(|c| c.description.as_deref())
            .collect();
        assert_eq!(descriptions, [None, None, Some("what it is called"), None]);
        assert_eq!(
            back.column_index(&TableDef::dropped_name(1)),
            None,
            "a dropped column has no name"
        );
        assert_eq!(back.live_columns().collect::<Vec<_>>(), [0, 2, 3]);
    }

    #[test]
    fn a_cut_or_bent_definition_is_an_error() {
        let mut w = Writer::default();
        put_def(&mut w, TableId(9), &full_def());
        for end in 0..w.buf.len() {
            assert!(
                get_def(&mut Reader::new(&w.buf[..end])).is_err(),
                "cut at {end}"
            );
        }
        // An action code no one wrote.
        let mut bent = w.buf.clone();
        let fk_name = bent
            .windows(8)
            .position(|x| x == b"t_p_fkey")
            .expect("the name is in the encoding");
        // After the name: n = 1, the column pair (3, 0), the u32 table id: the action.
        let action = fk_name + 8 + 1 + 2 + 4;
        assert_eq!(bent[action], FkAction::Cascade as u8);
        bent[action] = 9;
        assert!(get_def(&mut Reader::new(&bent)).is_err());
    }

    fn serial_table(name: &str) -> TableDef {
        let mut def = TableDef::of_columns(name, [("id", DataType::Int4)].into_iter());
        def.owned_sequences = vec![format!("{name}_id_seq")];
        def
    }

    /// A table replaced by a new one of its name waits aside, with its serial sequence,
    /// seen by those who do not see the new one; a rollback gives it back, and a
    /// checkpoint's image keeps both.
    #[test]
    fn a_replaced_table_waits_aside_until_its_replacement_ends() {
        let catalog = Catalog::default();
        let old = catalog.create_table(serial_table("r")).expect("created");
        catalog.confirm(&[old.id]);
        catalog
            .sequence("r_id_seq")
            .expect("serial sequence")
            .advance_past(41);
        let new_id = catalog.allocate_table_id();
        let new = catalog
            .create_table_replacing(new_id, serial_table("r"))
            .expect("replaced");
        let mine = |id: TableId| catalog.hides(id, &[new_id], &[old.id]);
        let others = |id: TableId| catalog.hides(id, &[], &[]);
        assert_eq!(catalog.table_seen("r", &mine).map(|t| t.id), Some(new.id));
        assert_eq!(catalog.table_seen("r", &others).map(|t| t.id), Some(old.id));
        assert_eq!(catalog.tables_seen(&others).len(), 1);
        assert_eq!(catalog.sequence("r_id_seq").map(|s| s.peek_next()), Some(1));
        assert_eq!(
            catalog
                .sequence_seen("r_id_seq", &|id| id == new_id)
                .map(|s| s.peek_next()),
            Some(1),
            "a serial sequence goes with its table's name"
        );
        let image = Catalog::from_image(catalog.pool().clone(), &catalog.image()).expect("image");
        assert_eq!(image.replaced_sequences.read().len(), 1);
        assert!(image.dropping.read().contains_key(&old.id));
        // The replacement rolls back: the old table and its sequence take the name back.
        catalog.drop_table("r");
        assert!(catalog
            .finish_drops(&[new_id])
            .iter()
            .any(|t| t.id == new_id));
        assert_eq!(catalog.table("r").map(|t| t.id), Some(old.id));
        assert_eq!(
            catalog.sequence("r_id_seq").map(|s| s.peek_next()),
            Some(42)
        );
        assert!(catalog.replaced_sequences.read().is_empty());
    }

    /// A committed replacement: the old table's drop takes its waiting sequence, not the
    /// new table's of the same name.
    #[test]
    fn a_replaced_tables_drop_leaves_the_new_ones_sequence() {
        let catalog = Catalog::default();
        let old = catalog.create_table(serial_table("r")).expect("created");
        catalog.confirm(&[old.id]);
        let new_id = catalog.allocate_table_id();
        catalog
            .create_table_replacing(new_id, serial_table("r"))
            .expect("replaced");
        catalog.confirm(&[new_id]);
        assert!(catalog
            .finish_drops(&[old.id])
            .iter()
            .any(|t| t.id == old.id));
        assert_eq!(catalog.table("r").map(|t| t.id), Some(new_id));
        assert!(catalog.sequence("r_id_seq").is_some());
        assert!(catalog.replaced_sequences.read().is_empty());
        assert!(catalog.dropping.read().is_empty());
    }
}
