//! The executor: runs plans inside a transaction. Reads merge committed rows at the
//! statement's snapshot with the transaction's own writes; writes lock rows first and
//! re-check the latest committed version, as PostgreSQL's READ COMMITTED does.

mod grouping;
mod hash_join;
mod set_ops;
mod sort;
mod window;

pub use sort::Spool;

pub use grouping::SpillTo;
pub use sort::Sorted;

use std::cell::RefCell;
use std::cmp::Ordering;
use std::ops::Bound;
use std::rc::Rc;
use std::sync::Arc;

use rustc_hash::{FxHashMap, FxHashSet};

use super::bind::{AggCall, AggFunc, WindowCall, WindowFunc};
use super::explain::{self, Stage};
use super::expr::{EvalContext, Expr, Subqueries, Subquery, SubqueryTest};
use super::foreign_keys::{ConstraintModes, Incoming, PendingCheck, RowRules};
use super::plan::*;
use crate::engine::Engine;
use crate::error::{Error, Result, SqlState};
use crate::storage::page::MAX_KEY_BYTES;
use crate::storage::Index;
use crate::storage::{BulkLoad, Key, Row, Table, TableDef, TableId, Version};
use crate::txn::increments::{admit_increments, apply_increments, check_row, with_increments};
use crate::txn::{Increment, LockStep, SessionSlot, Transaction, Want};
use crate::types::{self, DataType, Value};
use crate::wal::Lsn;

/// Why a statement stopped before it finished.
pub enum Stop {
    Error(Error),
    /// It met a row lock held by another transaction before it changed anything (see
    /// `Outcome::WaitForLock`): the transaction remembers the lock to wait for, and the
    /// statement runs again, at the same snapshot, once it is granted.
    WaitForLock,
}

impl From<Error> for Stop {
    fn from(e: Error) -> Stop {
        Stop::Error(e)
    }
}

/// The result of a step that may stop at a row lock.
pub type Step<T> = std::result::Result<T, Stop>;

/// How often (in rows) long loops check for cancellation.
const CANCEL_CHECK_ROWS: usize = 1024;

pub struct Executor<'a> {
    pub engine: &'a Engine,
    pub slot: &'a SessionSlot,
    pub txn: &'a mut Transaction,
    pub snapshot: Lsn,
    pub ctx: EvalContext<'a>,
    /// The caller waits for row locks as a task (see `Outcome::WaitForLock`): a lock held
    /// by another transaction stops the statement, if it has not changed anything yet
    /// (the transaction's write count is still this).
    pub defer_lock_waits: Option<usize>,
    /// The subqueries being evaluated, innermost last: the values each was passed.
    pub outer_values: RefCell<Vec<Vec<Value>>>,
    /// The rows of each uncorrelated subquery run so far in this statement, by plan.
    pub subquery_rows: RefCell<FxHashMap<usize, Rc<Vec<Vec<Value>>>>>,
    /// The rows of each WITH query scanned so far in this statement, by plan and the
    /// values of the enclosing queries.
    pub materialized_rows: RefCell<FxHashMap<(usize, Vec<Value>), SharedRows>>,
    /// Foreign key checks the statement's writes queued, run at its end
    /// ([`Executor::finish_foreign_key_checks`]).
    pub fk_pending: Vec<PendingCheck>,
    /// Checks of deferred constraints, for the transaction to run at commit.
    pub fk_deferred: Vec<PendingCheck>,
    /// Which constraints are deferred (the transaction's SET CONSTRAINTS).
    pub constraint_modes: ConstraintModes,
    /// How deep the referential action running now cascades.
    pub fk_depth: usize,
    /// Checks left queued by the last settling (`settle_pending_checks`): failing so far.
    pub fk_unsettled: usize,
    /// The foreign keys referencing each table written, looked up once per statement.
    pub fk_incoming: RefCell<FxHashMap<TableId, Rc<Vec<Incoming>>>>,
    /// Referencing tables' compiled rules, for referential actions.
    pub fk_rules: RefCell<FxHashMap<TableId, Rc<RowRules>>>,
    /// The working table of each recursive WITH query being computed, by id.
    pub work_tables: RefCell<FxHashMap<usize, SharedRows>>,
    /// Where a hash join's table goes past its memory limit.
    pub spill: SpillTo,
    /// Under EXPLAIN ANALYZE: what each plan node did.
    pub actuals: Option<RefCell<super::explain::Actuals>>,
}

/// Rows computed once and read by several scans of one statement.
pub type SharedRows = Rc<Vec<Vec<Value>>>;

/// The most subqueries one statement keeps the rows of (each runs once).
const SUBQUERY_CACHE_LIMIT: usize = 1024;

/// The most rows a recursive WITH query may produce.
const RECURSIVE_MAX_ROWS: usize = 10_000_000;

impl Subqueries for Executor<'_> {
    fn outer(&self, i: usize) -> Result<Value> {
        self.outer_values
            .borrow()
            .last()
            .and_then(|values| values.get(i).cloned())
            .ok_or_else(|| Error::internal("outer value out of range"))
    }

    fn rows(&self, sub: &Subquery, args: Vec<Value>) -> Result<Rc<Vec<Vec<Value>>>> {
        let key = Arc::as_ptr(&sub.plan) as usize;
        let uncorrelated = args.is_empty();
        if uncorrelated {
            if let Some(rows) = self.subquery_rows.borrow().get(&key) {
                return Ok(rows.clone());
            }
        }
        let plan = &sub.plan;
        self.outer_values.borrow_mut().push(args);
        let rows = match sub.test {
            // One row is enough to know.
            SubqueryTest::Exists => self.select_at_most(plan, Some(1)),
            // Two rows are enough to fail.
            SubqueryTest::Scalar => self.select_at_most(plan, Some(2)),
            SubqueryTest::Quantified { .. } | SubqueryTest::Array(_) => self.select(plan),
        };
        self.outer_values.borrow_mut().pop();
        let rows = Rc::new(rows?);
        let mut cache = self.subquery_rows.borrow_mut();
        if uncorrelated && cache.len() < SUBQUERY_CACHE_LIMIT {
            cache.insert(key, rows.clone());
        }
        Ok(rows)
    }
}

fn check_cancel(slot: &SessionSlot) -> Result<()> {
    slot.check_in()
}

/// The most rows a nested-loop join reads of its table (it holds them all while the
/// join runs; a hash join's go to disk past its memory limit).
const JOIN_INNER_MAX_ROWS: usize = 10_000_000;

/// The most rows a set-returning function in a select list returns for one input row
/// (they are held while the row's output is made).
const SET_RETURNING_MAX_ROWS: usize = 10_000_000;

/// A join step's table, read before the join runs (nothing for a lookup join).
#[derive(Default)]
struct PreparedJoin {
    /// Whether the table was read (`rows`, `hashed` and `matched` are set).
    ready: bool,
    rows: Vec<Vec<Value>>,
    /// A hash join's rows by key: indexes into `rows`.
    hashed: Option<FxHashMap<Vec<Value>, Vec<usize>>>,
    /// RIGHT and FULL joins: which rows matched some row so far.
    matched: Option<Vec<bool>>,
    /// A hash join past its memory limit: `rows` are one batch's, the others on disk.
    batches: Option<hash_join::Batches>,
}

fn truthy(v: &Value) -> bool {
    matches!(v, Value::Bool(true))
}

/// The lock-manager key a writer of `index_key` into the unique index `index` locks.
/// Not a row key: those begin with 0x01 or 0x02, or are hidden row ids.
pub(super) fn value_lock(index: &crate::storage::IndexDef, index_key: &[u8]) -> Key {
    let mut lock = vec![0xFF];
    lock.extend_from_slice(index.name.as_bytes());
    lock.push(0);
    lock.extend_from_slice(index_key);
    lock
}

/// The storage key of a row: its encoded primary key, or a hidden row id.
pub fn row_key(table: &Table, def: &TableDef, row: &[Value]) -> Result<Key> {
    if def.primary_key.is_empty() {
        // Hidden row ids: 8 bytes big-endian, so keys sort by id.
        return Ok(table.next_row_id().to_be_bytes().to_vec());
    }
    pk_key(def, row)
}

/// The encoded primary key of `row`. A key longer than the tree takes fails here, at the
/// statement, with 54000: once a commit is logged, its install must not fail.
fn pk_key(def: &TableDef, row: &[Value]) -> Result<Key> {
    let vals: Vec<Value> = def.primary_key.iter().map(|&i| row[i].clone()).collect();
    let mut key = Vec::with_capacity(16);
    types::encode_key(&vals, &mut key);
    if key.len() > MAX_KEY_BYTES {
        return Err(key_too_long(
            key.len(),
            def.pkey_name.as_deref().unwrap_or(""),
        ));
    }
    Ok(key)
}

/// PostgreSQL's error for a key of `bytes` bytes, longer than its index `index` takes.
pub fn key_too_long(bytes: usize, index: &str) -> Error {
    Error::new(
        SqlState::PROGRAM_LIMIT_EXCEEDED,
        format!("index row size {bytes} exceeds btree version 4 maximum {MAX_KEY_BYTES} for index \"{index}\""),
    )
    .with_hint(
        "Values larger than 1/3 of a buffer page cannot be indexed.\n\
         Consider a function index of an MD5 hash of the value, or use full text indexing.",
    )
}

fn duplicate_key(def: &TableDef, row: &[Value]) -> Error {
    key_exists(
        def,
        def.pkey_name.as_deref().unwrap_or(""),
        &def.primary_key,
        row,
    )
}

/// A unique index's 23505 for `row`, whose values another row holds.
fn unique_violation(def: &TableDef, index: &crate::storage::IndexDef, row: &[Value]) -> Error {
    key_exists(def, &index.name, &index.columns, row)
}

/// 23505: `row`'s values in `columns` are another row's already, in the unique
/// constraint (or index) `constraint`.
fn key_exists(def: &TableDef, constraint: &str, columns: &[usize], row: &[Value]) -> Error {
    let names: Vec<&str> = columns
        .iter()
        .map(|&i| def.columns[i].name.as_str())
        .collect();
    let vals: Vec<String> = columns
        .iter()
        .map(|&i| super::expr::text_of(&row[i]))
        .collect();
    Error::new(
        SqlState::UNIQUE_VIOLATION,
        format!("duplicate key value violates unique constraint \"{constraint}\""),
    )
    .with_detail(format!(
        "Key ({})=({}) already exists.",
        names.join(", "),
        vals.join(", ")
    ))
    .with_table(def.name.clone())
    .with_constraint(constraint.to_string())
}

pub(super) fn serialization_failure() -> Error {
    Error::new(
        SqlState::SERIALIZATION_FAILURE,
        "could not serialize access due to concurrent update",
    )
}

/// Whether no key lies between `lo` and `hi` (the ranges `BTreeMap::range` refuses).
fn range_is_empty(lo: &Bound<Key>, hi: &Bound<Key>) -> bool {
    match (lo, hi) {
        (Bound::Unbounded, _) | (_, Bound::Unbounded) => false,
        (Bound::Included(l), Bound::Included(h)) => l > h,
        (Bound::Included(l) | Bound::Excluded(l), Bound::Excluded(h))
        | (Bound::Excluded(l), Bound::Included(h)) => l >= h,
    }
}

impl Executor<'_> {
    pub fn eval(&self, e: &Expr, row: &[Value]) -> Result<Value> {
        e.eval(row, &self.ctx, self)
    }

    fn matches(&self, filter: &Option<Expr>, row: &[Value]) -> Result<bool> {
        match filter {
            None => Ok(true),
            Some(f) => Ok(truthy(&self.eval(f, row)?)),
        }
    }

    /// Key bounds for a scan's access path; None when no row can match.
    fn bounds(&self, scan: &ScanPlan) -> Result<Option<(Bound<Key>, Bound<Key>)>> {
        self.bounds_at(scan, &[])
    }

    /// The key range of `scan`'s access path, its expressions evaluated over `outer` (a
    /// join's row so far, for a lookup; empty otherwise).
    fn bounds_at(
        &self,
        scan: &ScanPlan,
        outer: &[Value],
    ) -> Result<Option<(Bound<Key>, Bound<Key>)>> {
        let col_type = |i: usize| scan.def.columns[scan.def.primary_key[i]].data_type;
        // The value as the key column's type, if it is exactly representable there.
        let as_key = |v: Value, i: usize| -> Result<Option<Value>> {
            if v.is_null() {
                return Ok(None);
            }
            let t = col_type(i);
            let c = match types::cast(v.clone(), &t) {
                Ok(c) => c,
                Err(_) => return Ok(None),
            };
            Ok(if types::compare(&c, &v) == Some(Ordering::Equal) {
                Some(c)
            } else {
                None
            })
        };
        match &scan.access {
            // An index scan that cannot be used reads the whole table.
            Access::Full | Access::Index { .. } => Ok(Some((Bound::Unbounded, Bound::Unbounded))),
            Access::Point(exprs) => {
                let mut vals = Vec::new();
                for (i, e) in exprs.iter().enumerate() {
                    match as_key(self.eval(e, outer)?, i)? {
                        Some(v) => vals.push(v),
                        None => return Ok(None),
                    }
                }
                let mut key = Vec::new();
                types::encode_key(&vals, &mut key);
                Ok(Some((Bound::Included(key.clone()), Bound::Included(key))))
            }
            Access::Range { low, high } => {
                let bound = |b: &Option<(Expr, bool)>| -> Result<Option<Bound<Key>>> {
                    Ok(match b {
                        None => Some(Bound::Unbounded),
                        Some((e, inclusive)) => {
                            let v = self.eval(e, outer)?;
                            if v.is_null() {
                                return Ok(None);
                            }
                            match as_key(v, 0)? {
                                Some(v) => {
                                    let mut key = Vec::new();
                                    types::encode_key(&[v], &mut key);
                                    Some(if *inclusive {
                                        Bound::Included(key)
                                    } else {
                                        Bound::Excluded(key)
                                    })
                                }
                                // Not representable in the key type: scan unbounded, filter.
                                None => Some(Bound::Unbounded),
                            }
                        }
                    })
                };
                match (bound(low)?, bound(high)?) {
                    // A reversed or empty range (BETWEEN 200 AND 100) finds nothing.
                    (Some(l), Some(h)) if !range_is_empty(&l, &h) => Ok(Some((l, h))),
                    _ => Ok(None),
                }
            }
        }
    }

    /// Whether `scan` may find its rows through `index`: the index is complete at our
    /// snapshot, and our own writes to the table are rows (not a bulk load or a
    /// truncation, which hide the committed rows the index leads to).
    fn index_usable(&self, scan: &ScanPlan, index: &Index) -> bool {
        index.usable_at(self.snapshot)
            && self
                .txn
                .writes
                .table(scan.table.id)
                .is_none_or(|own| own.bulk.is_none() && !own.truncated)
    }

    /// The encoded bounds of an index scan's range over `outer`; None when no row can
    /// match (a NULL, or a value the column's type cannot hold exactly).
    fn index_bounds(
        &self,
        scan: &ScanPlan,
        outer: &[Value],
    ) -> Result<Option<(Bound<Key>, Bound<Key>)>> {
        let Access::Index {
            index,
            prefix,
            low,
            high,
        } = &scan.access
        else {
            return Err(Error::internal("index bounds of a scan without an index"));
        };
        let col_type = |i: usize| scan.def.columns[index.def.columns[i]].data_type;
        let mut values = Vec::new();
        for (i, e) in prefix.iter().enumerate() {
            match exact_key_value(self.eval(e, outer)?, col_type(i)) {
                Some(v) => values.push(v),
                None => return Ok(None),
            }
        }
        let mut base = Vec::new();
        types::encode_key(&values, &mut base);
        let next = prefix.len();
        let bound = |b: &Option<(Expr, bool)>| -> Result<Option<Bound<Key>>> {
            let Some((e, inclusive)) = b else {
                return Ok(Some(if base.is_empty() {
                    Bound::Unbounded
                } else {
                    Bound::Included(base.clone())
                }));
            };
            let v = self.eval(e, outer)?;
            if v.is_null() {
                return Ok(None);
            }
            Ok(Some(match exact_key_value(v, col_type(next)) {
                Some(v) => {
                    let mut key = base.clone();
                    types::encode_key(&[v], &mut key);
                    if *inclusive {
                        Bound::Included(key)
                    } else {
                        Bound::Excluded(key)
                    }
                }
                // Not representable in the column's type: the prefix alone, filtered.
                None if base.is_empty() => Bound::Unbounded,
                None => Bound::Included(base.clone()),
            }))
        };
        // Bounds on prefixes: Index::row_keys finds an empty range empty.
        match (bound(low)?, bound(high)?) {
            (Some(l), Some(h)) => Ok(Some((l, h))),
            _ => Ok(None),
        }
    }

    /// An index scan: the rows the index leads to at our snapshot, those our own writes
    /// replaced skipped, then our own rows; all filtered. Not in key order.
    fn for_each_index_row(
        &self,
        scan: &ScanPlan,
        index: &Index,
        outer: &[Value],
        mut visit: impl FnMut(&[u8], &Row) -> Result<bool>,
    ) -> Result<()> {
        // A serializable reader's predicate is the whole table: coarser than the range,
        // never missing a conflict.
        self.txn
            .note_read(scan.table.id, (Bound::Unbounded, Bound::Unbounded))?;
        let own = self.txn.writes.table(scan.table.id);
        if let Some((lo, hi)) = self.index_bounds(scan, outer)? {
            let range = (as_ref_bound(&lo), as_ref_bound(&hi));
            let mut after: Option<Key> = None;
            loop {
                check_cancel(self.slot)?;
                let (keys, last) = index.row_keys(range, self.snapshot, after.as_deref())?;
                for key in &keys {
                    if let Some(own) = own {
                        if own.get(key)?.is_some() {
                            continue;
                        }
                    }
                    let Some(row) = scan.table.get(key, self.snapshot)? else {
                        continue;
                    };
                    if self.scan_filter(scan, &row)? && !visit(key, &row)? {
                        return Ok(());
                    }
                }
                match last {
                    Some(l) => after = Some(l),
                    None => break,
                }
            }
        }
        if let Some(own) = own {
            let mut mine = own.own_rows((Bound::Unbounded, Bound::Unbounded));
            while let Some((key, row)) = mine.next_below(None)? {
                if let Some(row) = row {
                    if self.scan_filter(scan, &row)? && !visit(&key, &row)? {
                        return Ok(());
                    }
                }
            }
        }
        Ok(())
    }

    /// Visit the rows a scan sees (committed at the snapshot, overlaid with our own
    /// writes), filtered, in key order, until `visit` returns false.
    fn for_each_row(
        &self,
        scan: &ScanPlan,
        visit: impl FnMut(&[u8], &Row) -> Result<bool>,
    ) -> Result<()> {
        self.for_each_row_after(scan, None, visit)
    }

    /// The newest version of rows of `table` as this transaction has them (committed,
    /// even above the snapshot, overlaid with its own writes), after the key `after`:
    /// up to `max` committed ones, with the key of the last when there may be more; the
    /// transaction's own rows come with the last batch. For checks of a whole table made
    /// with its writers kept out (a new constraint's).
    pub fn newest_rows(
        &self,
        table: &Table,
        after: Option<&[u8]>,
        max: usize,
    ) -> Result<(Vec<Row>, Option<Key>)> {
        if after.is_some() {
            table.prune_older_versions(self.engine.txn.oldest_snapshot());
        }
        let own = self.txn.writes.table(table.id);
        let mut rows = Vec::new();
        let mut last = None;
        let mut failed = None;
        let low = after.map_or(Bound::Unbounded, Bound::Excluded);
        table.scan((low, Bound::Unbounded), Lsn(u64::MAX), false, |key, row| {
            match own.map(|o| o.get(key)) {
                Some(Err(e)) => {
                    failed = Some(e);
                    return false;
                }
                Some(Ok(Some(_))) => {}
                _ => rows.push(row.clone()),
            }
            if rows.len() >= max {
                last = Some(key.to_vec());
                return false;
            }
            true
        })?;
        if let Some(e) = failed {
            return Err(e);
        }
        if last.is_none() {
            if let Some(own) = own {
                let mut mine = own.own_rows((Bound::Unbounded, Bound::Unbounded));
                while let Some((_, row)) = mine.next_below(None)? {
                    rows.extend(row);
                }
            }
        }
        Ok((rows, last))
    }

    /// The rows of a scan of one table in key order (a plan that
    /// [`streams_by_key`](SelectPlan::streams_by_key), its LIMIT and OFFSET aside), after
    /// the key `after`: up to `max_rows` of them, filtered and projected, with the key of
    /// the last when there may be more. COPY TO and a SELECT's result stream a table in
    /// such batches, under one snapshot.
    pub fn scan_batch(
        &self,
        plan: &SelectPlan,
        after: Option<&[u8]>,
        max_rows: usize,
    ) -> Result<(Vec<Vec<Value>>, Option<Key>)> {
        let Some(scan) = &plan.source else {
            return Err(Error::internal("a batched scan without a table"));
        };
        // From the second batch on (a scan that fits one batch need not).
        if after.is_some() {
            scan.table
                .prune_older_versions(self.engine.txn.oldest_snapshot());
        }
        let mut rows = Vec::new();
        let mut last = None;
        self.for_each_row_after(scan, after, |key, row| {
            rows.push(self.project(&plan.projection, row)?);
            if rows.len() >= max_rows {
                last = Some(key.to_vec());
                return Ok(false);
            }
            Ok(true)
        })?;
        Ok((rows, last))
    }

    fn for_each_row_after(
        &self,
        scan: &ScanPlan,
        after: Option<&[u8]>,
        visit: impl FnMut(&[u8], &Row) -> Result<bool>,
    ) -> Result<()> {
        self.for_each_row_at(scan, after, &[], visit)
    }

    /// The rows of a SELECT's FROM: its one table's, or its tables joined (`joins`), with
    /// what is left of WHERE applied to the joined rows.
    fn for_each_source_row(
        &self,
        plan: &SelectPlan,
        mut visit: impl FnMut(&[Value]) -> Result<bool>,
    ) -> Result<()> {
        if let Some(op) = &plan.set_op {
            return self.for_each_set_row(op, &mut visit);
        }
        let Some(scan) = &plan.source else {
            return Ok(());
        };
        if plan.joins.is_empty() {
            return self.for_each_row(scan, |_, row| visit(row));
        }
        // Each step reads its table when its first row arrives, so a join that finds no
        // rows early reads no more tables.
        let mut steps: Vec<PreparedJoin> =
            plan.joins.iter().map(|_| PreparedJoin::default()).collect();
        for step in &plan.joins {
            self.note_loop(explain::node_id(step));
        }
        let last_step = plan.joins.last().map(explain::node_id);
        let mut top = |row: &[Value]| -> Result<bool> {
            if !self.matches(&plan.filter, row)? {
                return Ok(true);
            }
            // The last join's rows are those past the query's filter, as EXPLAIN shows
            // the filter on that join.
            if let Some(node) = last_step {
                self.note_rows(node, Stage::Output, 1);
            }
            match &plan.join_layout {
                Some(layout) => {
                    let in_from_order: Vec<Value> =
                        layout.iter().map(|&at| row[at].clone()).collect();
                    visit(&in_from_order)
                }
                None => visit(row),
            }
        };
        let mut go = true;
        self.for_each_row(scan, |_, row| {
            go = self.join_row(&plan.joins, &mut steps, 0, row.to_vec(), &mut top)?;
            Ok(go)
        })?;
        // Then, step by step (a step's rows may go on to later steps' batches): RIGHT and
        // FULL joins' rows that nothing matched, and a spilled hash join's later batches.
        for i in 0..steps.len() {
            if !go {
                break;
            }
            let join = &plan.joins[i];
            let keep_unmatched = matches!(join.kind, JoinKind::Right | JoinKind::Full);
            if !steps[i].ready && keep_unmatched {
                steps[i] = self.prepare_join(join)?;
            }
            go = self.emit_unmatched(&plan.joins, &mut steps, i, &mut top)?;
            while go {
                let Some(batches) = steps[i].batches.as_mut() else {
                    break;
                };
                let Some(batch) = batches.next_batch(keep_unmatched)? else {
                    break;
                };
                self.load_batch(join, &mut steps[i], batch.inner)?;
                if let Some(mut outer) = batch.outer {
                    let mut n = 0usize;
                    while let Some((_, row)) = outer.next_row()? {
                        n += 1;
                        if n.is_multiple_of(CANCEL_CHECK_ROWS) {
                            check_cancel(self.slot)?;
                        }
                        go = self.join_row(&plan.joins, &mut steps, i, row, &mut top)?;
                        if !go {
                            break;
                        }
                    }
                }
                if go {
                    go = self.emit_unmatched(&plan.joins, &mut steps, i, &mut top)?;
                }
            }
        }
        Ok(())
    }

    /// A RIGHT or FULL join step's held rows that nothing matched, null-extended, through
    /// the later steps. Returns false once `visit` asked to stop.
    fn emit_unmatched(
        &self,
        joins: &[JoinStep],
        steps: &mut [PreparedJoin],
        at: usize,
        visit: &mut dyn FnMut(&[Value]) -> Result<bool>,
    ) -> Result<bool> {
        let unmatched: Vec<Vec<Value>> = match &steps[at].matched {
            Some(matched) => steps[at]
                .rows
                .iter()
                .zip(matched)
                .filter(|(_, m)| !**m)
                .map(|(r, _)| r.clone())
                .collect(),
            None => return Ok(true),
        };
        for inner in unmatched {
            let mut row = vec![Value::Null; joins[at].outer_width];
            row.extend(inner);
            if !self.join_row(joins, steps, at + 1, row, visit)? {
                return Ok(false);
            }
        }
        Ok(true)
    }

    /// The rows of UNION, INTERSECT or EXCEPT, with SQL's multiset rules for ALL: a row
    /// that is m times on the left and n on the right is there m + n times (UNION ALL),
    /// min(m, n) times (INTERSECT ALL) or max(m - n, 0) times (EXCEPT ALL); without ALL,
    /// at most once. NULLs are equal here. Past `hash_mem_bytes` the sides are sorted
    /// on disk (`executor/set_ops.rs`); UNION ALL holds nothing.
    fn for_each_set_row(
        &self,
        op: &SetOpPlan,
        visit: &mut dyn FnMut(&[Value]) -> Result<bool>,
    ) -> Result<()> {
        let kind = match op.op {
            SetOp::RecursiveUnion(id) => {
                for row in self.recursive_union(op, id)? {
                    if !visit(&row)? {
                        break;
                    }
                }
                return Ok(());
            }
            SetOp::Union if op.all => {
                if self.for_each_side_row(&op.left, &op.left_casts, |row| visit(&row))? {
                    self.for_each_side_row(&op.right, &op.right_casts, |row| visit(&row))?;
                }
                return Ok(());
            }
            SetOp::Union => set_ops::SetKind::Union,
            SetOp::Intersect => set_ops::SetKind::Intersect,
            SetOp::Except => set_ops::SetKind::Except,
        };
        let check = || check_cancel(self.slot);
        let mut rows = set_ops::SetRows::new(&self.spill);
        self.for_each_side_row(&op.left, &op.left_casts, |row| {
            rows.push(set_ops::Side::Left, row, &check)?;
            Ok(true)
        })?;
        self.for_each_side_row(&op.right, &op.right_casts, |row| {
            rows.push(set_ops::Side::Right, row, &check)?;
            Ok(true)
        })?;
        match rows.finish(&check)? {
            set_ops::Collected::InMemory { left, right } => {
                for row in combine_in_memory(kind, op.all, left, right) {
                    if !visit(&row)? {
                        break;
                    }
                }
                Ok(())
            }
            set_ops::Collected::Sorted { rows, order } => {
                set_ops::merge(kind, op.all, rows, &order, visit)
            }
        }
    }

    /// Each row of one side of a set operation, cast where the result's type differs;
    /// returns false once `visit` asked to stop. A side that can be read as a stream
    /// (`sorts_externally`) is, through the external sort, so its rows need not fit in
    /// memory either.
    fn for_each_side_row(
        &self,
        plan: &SelectPlan,
        casts: &[Option<DataType>],
        mut visit: impl FnMut(Vec<Value>) -> Result<bool>,
    ) -> Result<bool> {
        let cast = |mut row: Vec<Value>| -> Result<Vec<Value>> {
            for (v, cast) in row.iter_mut().zip(casts) {
                if let Some(t) = cast {
                    *v = types::cast(std::mem::replace(v, Value::Null), t)?;
                }
            }
            Ok(row)
        };
        if !plan.sorts_externally() {
            for row in self.select(plan)? {
                if !visit(cast(row)?)? {
                    return Ok(false);
                }
            }
            return Ok(true);
        }
        let (skip, left) = self.offset_and_limit(plan)?;
        if left == Some(0) {
            return Ok(true);
        }
        let keep = left.map(|l| l.saturating_add(skip));
        let mut sorted = self.sort_externally(plan, self.spill.clone(), keep)?;
        let (mut seen, mut taken) = (0usize, 0usize);
        while let Some(row) = sorted.next_row(&plan.order_by)? {
            seen += 1;
            if seen <= skip {
                continue;
            }
            if left.is_some_and(|l| taken >= l) {
                break;
            }
            taken += 1;
            if !visit(cast(row)?)? {
                return Ok(false);
            }
        }
        Ok(true)
    }

    /// One side of a set operation: its rows, cast where the result's type differs.
    fn set_side(&self, plan: &SelectPlan, casts: &[Option<DataType>]) -> Result<Vec<Vec<Value>>> {
        let mut rows = self.select(plan)?;
        if casts.iter().any(Option::is_some) {
            for row in &mut rows {
                for (v, cast) in row.iter_mut().zip(casts) {
                    if let Some(t) = cast {
                        *v = types::cast(std::mem::replace(v, Value::Null), t)?;
                    }
                }
            }
        }
        Ok(rows)
    }

    /// A recursive WITH query's rows: the non-recursive term's, then the recursive
    /// term's run over the rows the last run added (its working table) until a run adds
    /// none. Without ALL a row already there is not added again (so a cycle ends).
    fn recursive_union(&self, op: &SetOpPlan, id: usize) -> Result<Vec<Vec<Value>>> {
        let mut out = Vec::new();
        let mut seen: FxHashSet<Vec<Value>> = FxHashSet::default();
        let mut working = Vec::new();
        let mut add = |rows: Vec<Vec<Value>>, working: &mut Vec<Vec<Value>>| -> Result<()> {
            for row in rows {
                if !op.all && !seen.insert(row.clone()) {
                    continue;
                }
                if out.len() >= RECURSIVE_MAX_ROWS {
                    return Err(Error::new(
                        SqlState::PROGRAM_LIMIT_EXCEEDED,
                        format!("a recursive query produces more than {RECURSIVE_MAX_ROWS} rows"),
                    ));
                }
                out.push(row.clone());
                working.push(row);
            }
            Ok(())
        };
        add(self.set_side(&op.left, &op.left_casts)?, &mut working)?;
        while !working.is_empty() {
            check_cancel(self.slot)?;
            self.work_tables
                .borrow_mut()
                .insert(id, Rc::new(std::mem::take(&mut working)));
            // What the recursive term's subqueries computed may have read the last
            // working table.
            self.subquery_rows.borrow_mut().clear();
            self.materialized_rows.borrow_mut().clear();
            let step = self.set_side(&op.right, &op.right_casts);
            let step = match step {
                Ok(rows) => rows,
                Err(e) => {
                    self.work_tables.borrow_mut().remove(&id);
                    return Err(e);
                }
            };
            if let Err(e) = add(step, &mut working) {
                self.work_tables.borrow_mut().remove(&id);
                return Err(e);
            }
        }
        self.work_tables.borrow_mut().remove(&id);
        Ok(out)
    }

    /// What a join step reads before the first row arrives: its table's rows (all of
    /// them, or hashed on its keys), unless it looks each match up.
    fn prepare_join(&self, step: &JoinStep) -> Result<PreparedJoin> {
        let mut prepared = PreparedJoin {
            ready: true,
            ..PreparedJoin::default()
        };
        match &step.strategy {
            JoinStrategy::Lookup => return Ok(prepared),
            JoinStrategy::Hash { inner_keys, .. } => {
                self.prepare_hash_join(step, inner_keys, &mut prepared)?
            }
            JoinStrategy::NestedLoop => {
                self.for_each_row(&step.scan, |_, row| {
                    if prepared.rows.len() >= JOIN_INNER_MAX_ROWS {
                        return Err(Error::new(
                            SqlState::PROGRAM_LIMIT_EXCEEDED,
                            format!(
                                "a join reads more than {JOIN_INNER_MAX_ROWS} rows of table \"{}\"",
                                step.scan.def.name
                            ),
                        ));
                    }
                    prepared.rows.push(row.to_vec());
                    Ok(true)
                })?;
            }
        }
        if matches!(step.kind, JoinKind::Right | JoinKind::Full) {
            prepared.matched = Some(vec![false; prepared.rows.len()]);
        }
        Ok(prepared)
    }

    /// A hash join's table: in memory while it fits in `hash_mem_bytes`, else split into
    /// batches, the first in memory and the others on disk (`executor/hash_join.rs`).
    /// Spilled rows carry their key (none: a NULL in it), computed once.
    fn prepare_hash_join(
        &self,
        step: &JoinStep,
        inner_keys: &[Expr],
        prepared: &mut PreparedJoin,
    ) -> Result<()> {
        let limit = self.spill.hash_mem_bytes;
        let dir = &self.spill.temp_dir;
        let mut rows: Vec<Vec<Value>> = Vec::new();
        let mut hashed: FxHashMap<Vec<Value>, Vec<usize>> = FxHashMap::default();
        let (mut held, mut total) = (0usize, 0usize);
        let mut overflow: Option<sort::Spool> = None;
        self.for_each_row(&step.scan, |_, row| {
            let key = self.hash_key(inner_keys, row)?;
            let bytes = hash_join::held_bytes(row, key.as_deref());
            total = total.saturating_add(bytes);
            if let Some(spool) = &mut overflow {
                spool.push(&(key.unwrap_or_default(), row.to_vec()))?;
                return Ok(true);
            }
            if let Some(key) = key {
                hashed.entry(key).or_default().push(rows.len());
            }
            rows.push(row.to_vec());
            held += bytes;
            if held > limit {
                let mut spool = sort::Spool::new(dir)?;
                for row in rows.drain(..) {
                    let key = self.hash_key(inner_keys, &row)?;
                    spool.push(&(key.unwrap_or_default(), row))?;
                }
                hashed.clear();
                overflow = Some(spool);
            }
            Ok(true)
        })?;
        if let Some(spool) = overflow {
            let mut batches = hash_join::Batches::new(hash_join::batch_count(total, limit));
            let keep_unmatched = matches!(step.kind, JoinKind::Right | JoinKind::Full);
            let mut spilled = spool.read_back()?;
            let mut n = 0usize;
            while let Some((key, row)) = spilled.next_row()? {
                n += 1;
                if n.is_multiple_of(CANCEL_CHECK_ROWS) {
                    check_cancel(self.slot)?;
                }
                if key.is_empty() {
                    // A NULL key matches nothing: kept only to be emitted unmatched.
                    if keep_unmatched {
                        rows.push(row);
                    }
                    continue;
                }
                match hash_join::batch_of(&key, batches.count()) {
                    0 => {
                        hashed.entry(key).or_default().push(rows.len());
                        rows.push(row);
                    }
                    b => batches.put_inner(b, (key, row), dir)?,
                }
            }
            prepared.batches = Some(batches);
        }
        prepared.hashed = Some(hashed);
        prepared.rows = rows;
        Ok(())
    }

    /// A spilled hash join's next batch: its inner rows (with their keys) replace the
    /// last batch's.
    fn load_batch(
        &self,
        step: &JoinStep,
        prepared: &mut PreparedJoin,
        inner: Option<sort::SpoolReader>,
    ) -> Result<()> {
        let mut rows = Vec::new();
        let mut hashed: FxHashMap<Vec<Value>, Vec<usize>> = FxHashMap::default();
        if let Some(mut inner) = inner {
            while let Some((key, row)) = inner.next_row()? {
                if rows.len() % CANCEL_CHECK_ROWS == CANCEL_CHECK_ROWS - 1 {
                    check_cancel(self.slot)?;
                }
                hashed.entry(key).or_default().push(rows.len());
                rows.push(row);
            }
        }
        prepared.hashed = Some(hashed);
        if matches!(step.kind, JoinKind::Right | JoinKind::Full) {
            prepared.matched = Some(vec![false; rows.len()]);
        }
        prepared.rows = rows;
        Ok(())
    }

    /// A hash join's key for a row: None if a key is NULL (it matches nothing).
    /// Integers are widened to bigint and floats to double precision, so equal values of
    /// the one family are equal keys.
    fn hash_key(&self, keys: &[Expr], row: &[Value]) -> Result<Option<Vec<Value>>> {
        let mut out = Vec::with_capacity(keys.len());
        for k in keys {
            let v = match self.eval(k, row)? {
                Value::Null => return Ok(None),
                Value::Int2(x) => Value::Int8(x.into()),
                Value::Int4(x) => Value::Int8(x.into()),
                Value::Float4(x) => Value::Float8(x.into()),
                v => v,
            };
            out.push(v);
        }
        Ok(Some(out))
    }

    /// Join `row` (the rows so far, through step `at`) with the remaining steps, and pass
    /// each joined row to `visit`. Returns false once `visit` asked to stop.
    fn join_row(
        &self,
        joins: &[JoinStep],
        steps: &mut [PreparedJoin],
        at: usize,
        row: Vec<Value>,
        visit: &mut dyn FnMut(&[Value]) -> Result<bool>,
    ) -> Result<bool> {
        let Some(step) = joins.get(at) else {
            return visit(&row);
        };
        if at > 0 {
            // A row of the join before.
            self.note_rows(explain::node_id(&joins[at - 1]), Stage::Output, 1);
        }
        let width = step.scan.def.columns.len();
        if !steps[at].ready {
            steps[at] = self.prepare_join(step)?;
        }
        let mut candidates: Vec<Vec<Value>> = Vec::new();
        let mut indexes: Vec<usize> = Vec::new();
        match &step.strategy {
            JoinStrategy::Lookup => {
                self.for_each_row_at(&step.scan, None, &row, |_, inner| {
                    candidates.push(inner.to_vec());
                    Ok(true)
                })?;
            }
            JoinStrategy::Hash { outer_keys, .. } => {
                let key = self.hash_key(outer_keys, &row)?;
                if let (Some(key), Some(batches)) = (&key, steps[at].batches.as_mut()) {
                    let batch = hash_join::batch_of(key, batches.count());
                    if batch != batches.current {
                        // Its matches are in a later batch: joined when that is loaded.
                        batches.defer_outer(batch, row, &self.spill.temp_dir)?;
                        return Ok(true);
                    }
                }
                if let (Some(key), Some(hashed)) = (key, &steps[at].hashed) {
                    if let Some(found) = hashed.get(&key) {
                        indexes.extend(found);
                    }
                }
            }
            JoinStrategy::NestedLoop => indexes.extend(0..steps[at].rows.len()),
        }
        let mut matched_any = false;
        let mut joined = row.clone();
        let mut try_inner = |inner: &[Value],
                             steps: &mut [PreparedJoin],
                             index: Option<usize>|
         -> Result<Option<bool>> {
            joined.truncate(row.len());
            joined.extend_from_slice(inner);
            if !self.matches(&step.on, &joined)? {
                return Ok(None);
            }
            if let (Some(i), Some(matched)) = (index, steps[at].matched.as_mut()) {
                matched[i] = true;
            }
            Ok(Some(self.join_row(
                joins,
                steps,
                at + 1,
                joined.clone(),
                visit,
            )?))
        };
        for inner in &candidates {
            match try_inner(inner, steps, None)? {
                Some(false) => return Ok(false),
                Some(true) => matched_any = true,
                None => {}
            }
        }
        for (n, i) in indexes.into_iter().enumerate() {
            // A loop over held rows is long work of its own (rows times rows).
            if n % CANCEL_CHECK_ROWS == CANCEL_CHECK_ROWS - 1 {
                check_cancel(self.slot)?;
            }
            let inner = steps[at].rows[i].clone();
            match try_inner(&inner, steps, Some(i))? {
                Some(false) => return Ok(false),
                Some(true) => matched_any = true,
                None => {}
            }
        }
        if !matched_any && matches!(step.kind, JoinKind::Left | JoinKind::Full) {
            let mut extended = row;
            extended.resize(extended.len() + width, Value::Null);
            return self.join_row(joins, steps, at + 1, extended, visit);
        }
        Ok(true)
    }

    fn for_each_row_at(
        &self,
        scan: &ScanPlan,
        after: Option<&[u8]>,
        outer: &[Value],
        mut visit: impl FnMut(&[u8], &Row) -> Result<bool>,
    ) -> Result<()> {
        let node = explain::node_id(scan);
        self.note_loop(node);
        let mut visit = |key: &[u8], row: &Row| {
            self.note_rows(node, Stage::Output, 1);
            visit(key, row)
        };
        if let Some(derived) = &scan.derived {
            // A WITH query's rows are shared (and copied out); a subquery's are its own.
            let rows: Box<dyn Iterator<Item = Vec<Value>>> = if derived.materialize {
                let shared = self.materialized(derived)?;
                Box::new((0..shared.len()).map(move |i| shared[i].clone()))
            } else {
                Box::new(self.select(derived)?.into_iter())
            };
            for row in rows {
                let row: Row = row.into();
                if self.scan_filter(scan, &row)? && !visit(&[], &row)? {
                    break;
                }
            }
            return Ok(());
        }
        if let Some(function) = &scan.function {
            let mut n = 0i64;
            return self.function_rows(function, outer, |mut row| {
                if function.ordinality {
                    n += 1;
                    row.push(Value::Int8(n));
                }
                let row: Row = row.into();
                if !self.scan_filter(scan, &row)? {
                    return Ok(true);
                }
                visit(&[], &row)
            });
        }
        if let Some(view) = scan.system {
            let catalog = &self.engine.txn.catalog;
            if view == super::system::SystemView::Catalog(super::pg_catalog::PgCatalog::AuthId) {
                // It holds the passwords' verifiers.
                let user = self.slot.activity.lock().user.clone();
                if !catalog.role(&user).is_some_and(|r| r.superuser) {
                    return Err(Error::new(
                        SqlState::INSUFFICIENT_PRIVILEGE,
                        "permission denied for table pg_authid",
                    ));
                }
            }
            let txn = &*self.txn;
            let sees = |id| !catalog.hides(id, &txn.created, &txn.dropped);
            let visible =
                super::system::CatalogView::new(sees, |t: &Table| txn.changed_definition_of(t.id));
            for row in view.rows(self.engine, &visible, self.ctx.settings, self.ctx.roles) {
                if self.scan_filter(scan, &row)? && !visit(&[], &row)? {
                    break;
                }
            }
            return Ok(());
        }
        if let Access::Index { index, .. } = &scan.access {
            if after.is_none() && self.index_usable(scan, index) {
                return self.for_each_index_row(scan, index, outer, visit);
            }
        }
        let Some((mut lo, hi)) = self.bounds_at(scan, outer)? else {
            return Ok(());
        };
        if let Some(after) = after {
            // A later batch of a scan in key order: `after` is within the bounds.
            debug_assert!(matches!(scan.access, Access::Full | Access::Range { .. }));
            lo = Bound::Excluded(after.to_vec());
        }
        self.txn
            .note_read(scan.table.id, (lo.clone(), hi.clone()))?;
        if let (Bound::Included(a), Bound::Included(b)) = (&lo, &hi) {
            if a == b {
                // Point lookup.
                let row = match self.txn.writes.get(scan.table.id, a)? {
                    Some(own) => own,
                    None => match self.txn.writes.table(scan.table.id) {
                        Some(own) if own.bulk.is_some() => match &own.bulk {
                            Some(load) => load
                                .get(a)?
                                .map(|image| scan.table.decode_image(&image))
                                .transpose()?,
                            None => None,
                        },
                        Some(own) if own.truncated => None,
                        _ => scan.table.get(a, self.snapshot)?,
                    },
                };
                if let Some(row) = row {
                    if self.scan_filter(scan, &row)? {
                        visit(a, &row)?;
                    }
                }
                return Ok(());
            }
        }
        let range = (as_ref_bound(&lo), as_ref_bound(&hi));
        let own = self.txn.writes.table(scan.table.id);
        let mut result = Ok(());
        let mut n = 0usize;
        match own {
            None => {
                scan.table.scan(range, self.snapshot, false, |k, row| {
                    n += 1;
                    if n.is_multiple_of(CANCEL_CHECK_ROWS) {
                        if let Err(e) = check_cancel(self.slot) {
                            result = Err(e);
                            return false;
                        }
                    }
                    match self.scan_filter(scan, row).and_then(|m| {
                        if m {
                            visit(k, row)
                        } else {
                            Ok(true)
                        }
                    }) {
                        Ok(go) => go,
                        Err(e) => {
                            result = Err(e);
                            false
                        }
                    }
                })?
            }
            Some(own) => {
                // Merged as the committed rows stream past (nothing is collected): our own
                // writes below each committed key go first, and one at its key replaces it.
                let stopped = std::cell::Cell::new(false);
                let mut own_error = None;
                let mut emit = |k: &[u8], row: &Row| -> bool {
                    n += 1;
                    let go = if n.is_multiple_of(CANCEL_CHECK_ROWS) {
                        check_cancel(self.slot).map(|()| true)
                    } else {
                        Ok(true)
                    }
                    .and_then(|_| self.scan_filter(scan, row))
                    .and_then(|m| if m { visit(k, row) } else { Ok(true) });
                    match go {
                        Ok(true) => true,
                        Ok(false) => {
                            stopped.set(true);
                            false
                        }
                        Err(e) => {
                            result = Err(e);
                            stopped.set(true);
                            false
                        }
                    }
                };
                let mut mine = own.own_rows(range);
                let mut merged = |k: &[u8], row: &Row| -> bool {
                    let step = (|| -> Result<bool> {
                        while let Some((mk, mrow)) = mine.next_below(Some(k))? {
                            if let Some(r) = mrow {
                                if !emit(&mk, &r) {
                                    return Ok(false);
                                }
                            }
                        }
                        Ok(match mine.take_at(k)? {
                            Some(Some(r)) => emit(k, &r),
                            Some(None) => true,
                            None => emit(k, row),
                        })
                    })();
                    step.unwrap_or_else(|e| {
                        own_error = Some(e);
                        false
                    })
                };
                if let Some(load) = &own.bulk {
                    // The rows this transaction loaded stand in for the committed ones.
                    load.scan(range, &mut |k, image| {
                        Ok(merged(k, &scan.table.decode_image(image)?))
                    })?;
                } else if !own.truncated {
                    scan.table.scan(range, self.snapshot, false, &mut merged)?;
                }
                if let Some(e) = own_error.take() {
                    return Err(e);
                }
                if !stopped.get() {
                    while let Some((mk, mrow)) = mine.next_below(None)? {
                        if let Some(r) = mrow {
                            if !emit(&mk, &r) {
                                break;
                            }
                        }
                    }
                }
            }
        }
        result
    }

    /// `generate_series(start, stop, step)` of timestamps or timestamptzs stepped by an
    /// interval (a timestamptz's days and months on the session zone's calendar).
    fn timestamp_series(
        &self,
        args: &[Value],
        mut visit: impl FnMut(Vec<Value>) -> Result<bool>,
    ) -> Result<()> {
        let (start, stop, Value::Interval(step)) = (&args[0], &args[1], &args[2]) else {
            return Ok(());
        };
        let with_tz = matches!(start, Value::TimestampTz(_));
        let (
            Value::Timestamp(mut t) | Value::TimestampTz(mut t),
            Value::Timestamp(end) | Value::TimestampTz(end),
        ) = (start, stop)
        else {
            return Ok(());
        };
        let direction = step.span().cmp(&0);
        if direction == std::cmp::Ordering::Equal {
            return Err(Error::new(
                SqlState::INVALID_PARAMETER_VALUE,
                "step size cannot equal zero",
            ));
        }
        let mut produced = 0usize;
        while (direction.is_gt() && t <= *end) || (direction.is_lt() && t >= *end) {
            produced += 1;
            if produced.is_multiple_of(CANCEL_CHECK_ROWS) {
                check_cancel(self.slot)?;
            }
            let v = if with_tz {
                Value::TimestampTz(t)
            } else {
                Value::Timestamp(t)
            };
            if !visit(vec![v])? {
                break;
            }
            let next = if with_tz {
                types::interval_add_to_timestamptz(t, step)
            } else {
                types::interval_add_to_timestamp(t, step)
            };
            match next? {
                next if next != t => t = next,
                _ => break,
            }
        }
        Ok(())
    }

    /// The rows of a function in FROM, one at a time, while `visit` says go on.
    fn function_rows(
        &self,
        function: &TableFunction,
        row: &[Value],
        mut visit: impl FnMut(Vec<Value>) -> Result<bool>,
    ) -> Result<()> {
        let args = function
            .args
            .iter()
            .map(|a| self.eval(a, row))
            .collect::<Result<Vec<_>>>()?;
        match function.kind {
            TableFunctionKind::GenerateSeries
                if matches!(args.get(2), Some(Value::Interval(_)) | Some(Value::Null))
                    && args.len() == 3 =>
            {
                self.timestamp_series(&args, visit)?;
            }
            TableFunctionKind::GenerateSeries => {
                let n = |v: &Value| v.as_i64();
                let (Some(start), Some(stop)) = (n(&args[0]), n(&args[1])) else {
                    return Ok(());
                };
                let step = match args.get(2) {
                    None => 1,
                    Some(v) => match n(v) {
                        None => return Ok(()),
                        Some(0) => {
                            return Err(Error::new(
                                SqlState::INVALID_PARAMETER_VALUE,
                                "step size cannot equal zero",
                            ))
                        }
                        Some(s) => s,
                    },
                };
                let int8 = matches!(args[0], Value::Int8(_));
                let mut i = start;
                let mut produced = 0usize;
                while (step > 0 && i <= stop) || (step < 0 && i >= stop) {
                    produced += 1;
                    if produced.is_multiple_of(CANCEL_CHECK_ROWS) {
                        check_cancel(self.slot)?;
                    }
                    let v = if int8 {
                        Value::Int8(i)
                    } else {
                        Value::Int4(i as i32)
                    };
                    if !visit(vec![v])? {
                        break;
                    }
                    match i.checked_add(step) {
                        Some(next) => i = next,
                        None => break,
                    }
                }
            }
            TableFunctionKind::ExpandArray(output) => {
                let Value::Array(element, items) = &args[0] else {
                    return Ok(());
                };
                // A vector's items are of its element type.
                let item = match element.is_vector() {
                    true => element.element().unwrap_or(DataType::Int2),
                    false => **element,
                };
                let Some(DataType::Record(fields)) = types::expanded_array_type(item) else {
                    return Ok(());
                };
                for (i, x) in items.iter().enumerate() {
                    let n = Value::Int4(i as i32 + 1);
                    let row = match output {
                        ExpandOutput::Record => {
                            vec![Value::Record(fields, vec![x.clone(), n].into())]
                        }
                        ExpandOutput::Field(0) => vec![x.clone()],
                        ExpandOutput::Field(_) => vec![n],
                        ExpandOutput::Columns => vec![x.clone(), n],
                    };
                    if !visit(row)? {
                        break;
                    }
                }
            }
            TableFunctionKind::RegexpMatches | TableFunctionKind::RegexpSplitToTable => {
                if args.iter().any(Value::is_null) {
                    return Ok(());
                }
                let text = |i: usize| args.get(i).map(super::expr::text_of).unwrap_or_default();
                let rows: Vec<Value> = if function.kind == TableFunctionKind::RegexpMatches {
                    super::catalog_functions::regexp_matches(&text(0), &text(1), &text(2))?
                        .into_iter()
                        .map(|groups| {
                            let items = groups
                                .into_iter()
                                .map(|g| g.map_or(Value::Null, Value::Text))
                                .collect::<Vec<_>>();
                            Value::Array(&DataType::Text, items.into())
                        })
                        .collect()
                } else {
                    super::catalog_functions::regexp_split(
                        &text(0),
                        &text(1),
                        &text(2),
                        "regexp_split_to_table",
                    )?
                    .into_iter()
                    .map(Value::Text)
                    .collect()
                };
                for v in rows {
                    if !visit(vec![v])? {
                        break;
                    }
                }
            }
            TableFunctionKind::PartitionAncestors => {
                if !args[0].is_null() {
                    visit(vec![args[0].clone()])?;
                }
            }
            TableFunctionKind::WorkTable(id) => {
                let rows = self.work_tables.borrow().get(&id).cloned();
                for row in rows.iter().flat_map(|r| r.iter()) {
                    if !visit(row.clone())? {
                        break;
                    }
                }
            }
            TableFunctionKind::SequenceState => {
                let name = crate::sql::expr::text_of(&args[0]);
                let Some(seq) = self.engine.txn.catalog.sequence(&name) else {
                    return Err(Error::new(
                        SqlState::UNDEFINED_TABLE,
                        format!("relation \"{name}\" does not exist"),
                    ));
                };
                let (last, called) = seq.last_value();
                visit(vec![Value::Int8(last), Value::Int8(0), Value::Bool(called)])?;
            }
            TableFunctionKind::OptionsToTable => {
                if let Value::Array(_, items) = &args[0] {
                    for item in items.iter().filter(|v| !v.is_null()) {
                        let text = crate::sql::expr::text_of(item);
                        let (name, value) = match text.split_once('=') {
                            Some((n, v)) => (n.to_string(), Value::Text(v.to_string())),
                            None => (text, Value::Null),
                        };
                        if !visit(vec![Value::Text(name), value])? {
                            break;
                        }
                    }
                }
            }
            TableFunctionKind::Jsonb(set) => {
                for row in super::json_functions::set_rows(set, &args[0])? {
                    if !visit(row)? {
                        break;
                    }
                }
            }
            TableFunctionKind::GenerateSubscripts => {
                if let (Value::Array(_, items), Some(1)) = (&args[0], args[1].as_i64()) {
                    for i in 1..=items.len() {
                        if !visit(vec![Value::Int4(i as i32)])? {
                            break;
                        }
                    }
                }
            }
            TableFunctionKind::Values { width } => {
                for row in args.chunks(width.max(1)) {
                    if !visit(row.to_vec())? {
                        break;
                    }
                }
            }
            TableFunctionKind::Unnest => {
                let arrays: Vec<&[Value]> = args
                    .iter()
                    .map(|a| match a {
                        Value::Array(_, items) => &items[..],
                        _ => &[],
                    })
                    .collect();
                let len = arrays.iter().map(|a| a.len()).max().unwrap_or(0);
                for i in 0..len {
                    if i % CANCEL_CHECK_ROWS == CANCEL_CHECK_ROWS - 1 {
                        check_cancel(self.slot)?;
                    }
                    let row = arrays
                        .iter()
                        .map(|a| a.get(i).cloned().unwrap_or(Value::Null))
                        .collect();
                    if !visit(row)? {
                        break;
                    }
                }
            }
        }
        Ok(())
    }

    /// Lock a row this transaction is about to write (see `lock_row`).
    pub(super) fn lock_key(&mut self, table: &Arc<Table>, key: &[u8], want: Want) -> Step<()> {
        self.lock_row(table, key, want)
    }

    /// Take `want` on a key this transaction does not write (a KEY SHARE lock on a
    /// referenced row).
    pub(super) fn acquire_lock(&mut self, table: TableId, key: &[u8], want: Want) -> Step<()> {
        self.acquire(table, key, want, true)
    }

    fn lock_row(&mut self, table: &Arc<Table>, key: &[u8], want: Want) -> Step<()> {
        if self.txn.writes.get(table.id, key)?.is_some() {
            return Ok(());
        }
        if self
            .txn
            .writes
            .table(table.id)
            .is_some_and(|w| w.increments.contains_key(key))
        {
            // `Session::run` materializes a statement's tables before it runs.
            return Err(Error::internal(
                "a row with a deferred increment was written before it was materialized",
            )
            .into());
        }
        self.txn.note_write(table.id, key)?;
        self.acquire(table.id, key, want, true)
    }

    /// Get `want` on a key, waiting if someone is in the way: as a task, by stopping the
    /// statement (if it has changed nothing yet, see `Outcome::WaitForLock`), else by
    /// blocking. `new_lock`: the transaction does not hold the key yet.
    fn acquire(&mut self, table: TableId, key: &[u8], want: Want, new_lock: bool) -> Step<()> {
        let stop = self.defer_lock_waits == Some(self.txn.writes.row_count());
        match self.txn.lock_row(table, key, want, new_lock, stop)? {
            LockStep::Held => Ok(()),
            LockStep::MustWait => Err(Stop::WaitForLock),
        }
    }

    /// Before a statement reads or rewrites rows of `tables` (None: of every table), turn
    /// this transaction's deferred increments to them into ordinary writes: become each
    /// row's owner (once every earlier holder has gone) and apply the increments to the
    /// latest version, so the statement sees exactly what this transaction will commit.
    pub fn materialize(&mut self, tables: Option<&[TableId]>) -> Step<()> {
        let pending: Vec<(Arc<Table>, Key)> = self
            .txn
            .writes
            .tables
            .values()
            .filter(|w| tables.is_none_or(|ts| ts.contains(&w.table.id)))
            .flat_map(|w| w.increments.keys().map(|k| (w.table.clone(), k.clone())))
            .collect();
        for (table, key) in pending {
            self.acquire(table.id, &key, Want::NoKeyWrite, false)?;
            let Some(incs) = self.txn.writes.take_increments(&table, &key) else {
                continue;
            };
            // Under the key's latch, as every application of increments to a row.
            let latch = self.txn.increment_latch(table.id, &key);
            let row = apply_increments(&table, &key, &incs);
            drop(latch);
            self.txn.put(&table, key, Some(row?.into()))?;
        }
        Ok(())
    }

    /// An UPDATE that only increments columns of one row named by its key holds the row
    /// with a deferred increment, shared with other increments (see
    /// `txn::Want::Increment`). Returns None to run the UPDATE the ordinary way; else the
    /// row count.
    fn defer_increment(
        &mut self,
        plan: &UpdatePlan,
        incs: &[Increment<Expr>],
    ) -> Step<Option<u64>> {
        let scan = &plan.scan;
        let table = &scan.table;
        if !self.txn.explicit
            || self.txn.isolation.snapshot_per_transaction()
            || self.txn.writes.table(table.id).is_some_and(|w| w.truncated)
        {
            return Ok(None);
        }
        let Some((Bound::Included(key), _)) = self.bounds(scan)? else {
            return Ok(None);
        };
        if self.txn.writes.get(table.id, &key)?.is_some() {
            return Ok(None);
        }
        let held = self
            .txn
            .writes
            .table(table.id)
            .is_some_and(|w| w.increments.contains_key(&key));
        if !held {
            self.acquire(table.id, &key, Want::Increment, true)?;
        }
        // Read after taking the row: while we hold it, nobody deletes it or changes its key.
        // The version read is not noted as seen (`Executor::latest`): nothing of it reaches
        // the client unless the UPDATE fails on it or finds the row gone (below), so a hot
        // counter's next increment does not wait for the last one's flush to reply.
        // Under the key's increment latch, with the other holders' increments (below), so
        // no commit applies one of them in between.
        let latch = self.txn.increment_latch(table.id, &key);
        let newest = table.latest(&key)?;
        let newest_lsn = newest.as_ref().map(|v| v.lsn);
        let decided_by_newest = || {
            if let Some(lsn) = newest_lsn.filter(|&lsn| lsn > self.snapshot) {
                self.slot.saw_commit(lsn);
            }
        };
        let latest = newest.and_then(|v| Some((v.lsn, v.row?)));
        if !held {
            // The row must be one this statement sees. Its WHERE reads key columns only,
            // so any version of the row decides it.
            let visible = match &latest {
                Some((lsn, row)) => {
                    (*lsn <= self.snapshot || table.same_row_since(&key, self.snapshot)?)
                        && self.matches(&scan.filter, row)?
                }
                None => false,
            };
            if !visible {
                decided_by_newest();
                drop(latch);
                self.txn.unlock_row(table.id, &key);
                return Ok(Some(0));
            }
        }
        let Some((_, current)) = latest else {
            return Err(Error::internal("a row held with an increment has no version").into());
        };
        let mut all = self
            .txn
            .writes
            .table(table.id)
            .and_then(|w| w.increments.get(&key))
            .cloned()
            .unwrap_or_default();
        for inc in incs {
            all.push(inc.with_operand(self.eval(&inc.operand, &[])?));
        }
        // The increment joins only if the row stays in range (and NOT NULL) whichever of
        // the other holders' increments commit before it: then the commit, which applies
        // it to the version it finds, cannot fail where PostgreSQL's UPDATE would not
        // have. Otherwise the outcome depends on them, so it waits for them, as
        // PostgreSQL's UPDATE does, owning the row, and decides on the version they leave.
        let def = table.def();
        let others = self.txn.others_increments(table.id, &key);
        let admitted = admit_increments(&def, &current, &all, &others);
        drop(latch);
        match admitted {
            Ok(()) => {}
            Err(e) if others.is_empty() => {
                decided_by_newest();
                return Err(e.into());
            }
            Err(_) => {
                self.acquire(table.id, &key, Want::NoKeyWrite, false)?;
                let Some(latest) = self.latest(table, &key)?.and_then(|v| v.row) else {
                    return Err(
                        Error::internal("a row held with an increment has no version").into(),
                    );
                };
                with_increments(&def, &latest, &all)?;
            }
        }
        self.txn.hold_increments(table, key, all);
        Ok(Some(1))
    }

    /// The newest committed version of `key`, which a lock holder builds on. One above the
    /// statement's snapshot may not be visible yet (its commit released its locks before
    /// it was durable): the session notes it, and says nothing more until it is visible
    /// (`SessionSlot::saw_commit`).
    pub(super) fn latest(&self, table: &Table, key: &[u8]) -> Result<Option<Version>> {
        let version = table.latest(key)?;
        if let Some(v) = version.as_ref().filter(|v| v.lsn > self.snapshot) {
            self.slot.saw_commit(v.lsn);
        }
        Ok(version)
    }

    /// Lock a row we saw, then return the version to act on: our snapshot's version if it
    /// is still the latest, else (READ COMMITTED) the latest if it still passes the filter,
    /// or (REPEATABLE READ) a serialization failure.
    fn lock_and_recheck(
        &mut self,
        scan: &ScanPlan,
        key: &[u8],
        seen: Row,
        want: Want,
    ) -> Step<Option<Row>> {
        if self.txn.writes.get(scan.table.id, key)?.is_some() {
            return Ok(Some(seen));
        }
        self.lock_row(&scan.table, key, want)?;
        match self.latest(&scan.table, key)? {
            None => Ok(None),
            Some(v) if v.lsn <= self.snapshot => Ok(v.row.or(Some(seen))),
            Some(v) => {
                if self.txn.isolation.snapshot_per_transaction() {
                    return Err(serialization_failure().into());
                }
                // READ COMMITTED follows the row it saw to its newest version. A row
                // deleted since is gone, even if a new one took its key.
                if !scan.table.same_row_since(key, self.snapshot)? {
                    return Ok(None);
                }
                match v.row {
                    None => Ok(None),
                    Some(latest) => Ok(if self.matches(&scan.filter, &latest)? {
                        Some(latest)
                    } else {
                        None
                    }),
                }
            }
        }
    }

    fn collect(&self, scan: &ScanPlan) -> Result<Vec<(Key, Row)>> {
        let mut rows = Vec::new();
        self.for_each_row(scan, |k, r| {
            rows.push((k.to_vec(), r.clone()));
            Ok(true)
        })?;
        Ok(rows)
    }

    fn project(&self, exprs: &[Expr], row: &[Value]) -> Result<Vec<Value>> {
        exprs.iter().map(|e| self.eval(e, row)).collect()
    }

    /// The rows of a WITH query, computed once per statement for the values of the
    /// enclosing queries it may refer to.
    fn materialized(&self, plan: &Arc<SelectPlan>) -> Result<Rc<Vec<Vec<Value>>>> {
        let outer = self
            .outer_values
            .borrow()
            .last()
            .cloned()
            .unwrap_or_default();
        let key = (Arc::as_ptr(plan) as usize, outer);
        if let Some(rows) = self.materialized_rows.borrow().get(&key) {
            return Ok(rows.clone());
        }
        let rows = Rc::new(self.select(plan)?);
        let mut cache = self.materialized_rows.borrow_mut();
        if cache.len() >= SUBQUERY_CACHE_LIMIT {
            cache.clear();
        }
        cache.insert(key, rows.clone());
        Ok(rows)
    }

    /// A window aggregate's input from a row (None for count(*)).
    fn window_arg(&self, call: &AggCall, row: &[Value]) -> Result<Option<Value>> {
        call.arg.as_ref().map(|a| self.eval(a, row)).transpose()
    }

    /// A select list with set-returning functions `calls` (at the top of an item or
    /// inside one): one output row per value they return, in lockstep (a shorter one
    /// gives NULLs); none when all return nothing. Each output row comes with the
    /// functions' values in it, in the order of `calls`.
    fn project_set(
        &self,
        exprs: &[Expr],
        calls: &[Arc<TableFunction>],
        row: &[Value],
    ) -> Result<Vec<(Vec<Value>, Vec<Value>)>> {
        let mut returned: Vec<Vec<Value>> = Vec::with_capacity(calls.len());
        for f in calls {
            let mut values = Vec::new();
            self.function_rows(f, row, |mut r| {
                // A function of several columns is a record of them here.
                let v = match (r.len(), f.kind) {
                    (2.., TableFunctionKind::Jsonb(set)) => Value::Record(set.columns(), r.into()),
                    _ => r.swap_remove(0),
                };
                values.push(v);
                if values.len() > SET_RETURNING_MAX_ROWS {
                    return Err(Error::new(
                        SqlState::PROGRAM_LIMIT_EXCEEDED,
                        format!(
                            "a set-returning function in a select list returned more than {SET_RETURNING_MAX_ROWS} rows for one row"
                        ),
                    ));
                }
                Ok(true)
            })?;
            returned.push(values);
        }
        // The items without such functions have one value for every output row (and
        // are evaluated even when no row comes out, as in PostgreSQL).
        let fixed = exprs
            .iter()
            .map(|e| match e.has_set_returning() {
                true => Ok(None),
                false => self.eval(e, row).map(Some),
            })
            .collect::<Result<Vec<_>>>()?;
        let n = returned.iter().map(Vec::len).max().unwrap_or(0);
        let mut out = Vec::with_capacity(n);
        for i in 0..n {
            let values: Vec<Value> = returned
                .iter()
                .map(|v| v.get(i).cloned().unwrap_or(Value::Null))
                .collect();
            let projected = exprs
                .iter()
                .zip(&fixed)
                .map(|(e, fixed)| match (fixed, e) {
                    (Some(v), _) => Ok(v.clone()),
                    (None, Expr::SetReturning(f)) => Ok(calls
                        .iter()
                        .position(|c| Arc::ptr_eq(c, f))
                        .map_or(Value::Null, |k| values[k].clone())),
                    (None, e) => self.eval(&with_returned(e, calls, &values), row),
                })
                .collect::<Result<Vec<_>>>()?;
            out.push((projected, values));
        }
        Ok(out)
    }

    /// Whether COPY may load `table` straight into pages: this transaction created or
    /// truncated it and has written no rows to it otherwise.
    pub fn can_bulk_load(&self, table: &Table) -> bool {
        // Pages written beside the log reach no standby: only with wal_level = minimal.
        if !self.engine.settings.is("wal_level", "minimal") {
            return false;
        }
        if self.txn.writes.has_marks() {
            // A savepoint could not take back rows written straight to pages.
            return false;
        }
        if !table.indexes().is_empty() || !table.def().foreign_keys.is_empty() {
            // Each row's index entries and references are checked as it is written.
            return false;
        }
        let created = self.txn.created.contains(&table.id);
        match self.txn.writes.table(table.id) {
            Some(w) => w.bulk.is_some() || ((w.truncated || created) && w.has_no_rows()),
            None => created,
        }
    }

    /// Add one complete row, already through [`check_row`], to this transaction's bulk load
    /// of `table`, whose columns have `column_types`. `image` is scratch space for the
    /// row's encoding; both are kept by the caller across rows.
    pub fn bulk_insert(
        &mut self,
        table: &Arc<Table>,
        def: &TableDef,
        column_types: &[DataType],
        row: &[Value],
        image: &mut Vec<u8>,
    ) -> Result<()> {
        let key = row_key(table, def, row)?;
        image.clear();
        types::encode_row(row, column_types, image);
        let w = self.txn.writes.table_mut(table);
        let load = match &mut w.bulk {
            Some(load) => load,
            None => w
                .bulk
                .insert(BulkLoad::new(self.engine.txn.catalog.pool().clone())?),
        };
        if !load.insert(&key, image)? {
            return Err(duplicate_key(def, row));
        }
        Ok(())
    }

    /// After a COPY loaded `table` into pages, only more COPY may change it before commit.
    fn refuse_if_bulk_loaded(&self, table: &Table) -> Result<()> {
        if self
            .txn
            .writes
            .table(table.id)
            .is_some_and(|w| w.bulk.is_some())
        {
            return Err(Error::unsupported(format!(
                "INSERT, UPDATE or DELETE on table \"{}\" after COPY into it, or after an ALTER TABLE that rebuilt its rows, in the same transaction is not supported yet",
                table.def().name
            )));
        }
        Ok(())
    }

    pub fn update(&mut self, plan: &UpdatePlan) -> Step<(u64, Vec<Vec<Value>>)> {
        self.refuse_if_bulk_loaded(&plan.scan.table)?;
        if let Some(incs) = plan.increments.as_ref().filter(|_| plan.defer.allowed()) {
            if let Some(n) = self.defer_increment(plan, incs)? {
                return Ok((n, Vec::new()));
            }
        }
        let scan = &plan.scan;
        let def = &scan.def;
        let candidates = self.collect(scan)?;
        let mut count = 0;
        let mut returned = Vec::new();
        let pk_changes = plan
            .assignments
            .iter()
            .any(|(c, _)| def.primary_key.contains(c));
        // Columns a foreign key may reference: a key's, or a unique index's.
        let unique_changes = pk_changes
            || plan.assignments.iter().any(|(c, _)| {
                def.indexes
                    .iter()
                    .any(|i| i.unique && i.columns.contains(c))
            });
        for (key, seen) in candidates {
            check_cancel(self.slot)?;
            self.settle_pending_checks()?;
            let want = if unique_changes {
                Want::Write
            } else {
                Want::NoKeyWrite
            };
            let Some(current) = self.lock_and_recheck(scan, &key, seen, want)? else {
                continue;
            };
            let mut new: Vec<Value> = current.to_vec();
            for (col, e) in &plan.assignments {
                new[*col] = self.eval(e, &current)?;
            }
            let new = check_row(def, new)?;
            self.check_constraints(def, &plan.checks, &new)?;
            let new_key = if pk_changes {
                pk_key(def, &new)?
            } else {
                key.clone()
            };
            if new_key != key {
                self.claim_key(&scan.table, def, &new_key, &new)?;
                self.txn.put(&scan.table, key, None)?;
            }
            self.check_row_indexes(&scan.table, &new_key, &new, Some(&current))?;
            if !plan.returning.is_empty() {
                returned.push(self.project(&plan.returning, &new)?);
            }
            if !def.foreign_keys.is_empty() {
                self.queue_referencing_checks(&scan.table, def, &new_key, &new, Some(&current));
            }
            self.txn
                .put(&scan.table, new_key, Some(new.clone().into()))?;
            if unique_changes {
                self.on_referenced_change(&scan.table, def, &current, Some(&new))?;
            }
            count += 1;
        }
        Ok((count, returned))
    }

    /// Before `row` is written under `key` (replacing `old`, if any): each index entry
    /// it makes must fit a tree (54000), and no other row may hold its values in a
    /// unique index (23505). A value is checked under a lock on it, held until the
    /// transaction ends, so writers of one value take turns, and the second sees the
    /// first's row once it commits.
    pub(super) fn check_row_indexes(
        &mut self,
        table: &Arc<Table>,
        key: &[u8],
        row: &[Value],
        old: Option<&[Value]>,
    ) -> Step<()> {
        let indexes = table.indexes();
        for index in indexes.iter() {
            self.check_index_entry(table, index, key, row, old)?;
        }
        Ok(())
    }

    /// [`Executor::check_row_indexes`] for one index.
    fn check_index_entry(
        &mut self,
        table: &Arc<Table>,
        index: &Index,
        key: &[u8],
        row: &[Value],
        old: Option<&[Value]>,
    ) -> Step<()> {
        {
            let index_key = index.key_of(row);
            let entry_bytes = index_key.len() + key.len();
            if entry_bytes > MAX_KEY_BYTES {
                return Err(key_too_long(entry_bytes, &index.def.name).into());
            }
            if !index.def.unique
                || index.def.has_null(row)
                || old.is_some_and(|o| index.key_of(o) == index_key)
            {
                return Ok(());
            }
            let value_lock = value_lock(&index.def, &index_key);
            self.acquire(table.id, &value_lock, Want::Write, true)?;
            let holds = |r: &Option<Row>| r.as_ref().is_some_and(|r| index.key_of(r) == index_key);
            let def = table.def();
            let taken = || Err(unique_violation(&def, &index.def, row).into());
            if let Some(claimant) = self.txn.unique_claims.get(&value_lock) {
                if claimant.as_slice() != key {
                    if let Some(own) = self.txn.writes.get(table.id, claimant)? {
                        if holds(&own) {
                            return taken();
                        }
                    }
                }
            }
            let truncated = self.txn.writes.table(table.id).is_some_and(|t| t.truncated);
            if !truncated {
                for other in index.newest_row_keys(&index_key)? {
                    if other.as_slice() == key {
                        continue;
                    }
                    let current = match self.txn.writes.get(table.id, &other)? {
                        Some(own) => own,
                        None => table.latest(&other)?.and_then(|v| v.row),
                    };
                    if holds(&current) {
                        return taken();
                    }
                }
            }
            self.txn.unique_claims.insert(value_lock, key.to_vec());
        }
        Ok(())
    }

    /// A unique index a transaction block added to `table` after writing rows of it one
    /// by one (they are not in the index until it commits): each row it wrote is checked
    /// and its value claimed as if written after the index, so that no two rows, its own
    /// or committed ones it did not replace, hold one value: else the row found holding
    /// another's value is returned.
    pub fn check_own_rows_against_index(
        &mut self,
        table: &Arc<Table>,
        name: &str,
    ) -> Step<Option<Vec<Value>>> {
        let Some(index) = table.indexes().iter().find(|i| i.def.name == name).cloned() else {
            return Err(Error::internal("an index added in a block is not on its table").into());
        };
        if !index.def.unique {
            return Ok(None);
        }
        let Some(own) = self.txn.writes.table(table.id) else {
            return Ok(None);
        };
        // The own rows go aside first: checking one takes the executor.
        let mut spool = Spool::new(&self.spill.temp_dir)?;
        let scan = ScanPlan::full(table);
        self.for_each_row(&scan, |key, row| {
            if matches!(own.get(key)?, Some(Some(_))) {
                spool.push(&(vec![Value::Bytea(key.to_vec())], row.to_vec()))?;
            }
            Ok(true)
        })?;
        let mut rows = spool.read_back()?;
        while let Some((key, row)) = rows.next_row()? {
            let Some(Value::Bytea(key)) = key.into_iter().next() else {
                return Err(Error::internal("a spooled row without its key").into());
            };
            match self.check_index_entry(table, &index, &key, &row, None) {
                Ok(()) => {}
                Err(Stop::Error(e)) if e.code == SqlState::UNIQUE_VIOLATION => {
                    return Ok(Some(row))
                }
                Err(stop) => return Err(stop),
            }
        }
        Ok(None)
    }

    /// A new unique index on `table`, which this transaction created and wrote: the
    /// rows it wrote must hold distinct values (else the second row of a duplicated value
    /// is returned), and each value is claimed, so that its later rows are checked
    /// against them as against rows written after the index.
    pub fn claim_own_unique_values(
        &mut self,
        table: &Arc<Table>,
        index: &crate::storage::IndexDef,
    ) -> Result<Option<Vec<Value>>> {
        let scan = ScanPlan::full(table);
        let mut claims: FxHashMap<Vec<u8>, Key> = FxHashMap::default();
        let mut duplicate = None;
        self.for_each_row(&scan, |key, row| {
            if index.has_null(row) {
                return Ok(true);
            }
            let value_lock = value_lock(index, &index.key_of(row));
            if claims.insert(value_lock, key.to_vec()).is_some() {
                duplicate = Some(row.to_vec());
                return Ok(false);
            }
            Ok(true)
        })?;
        if duplicate.is_none() {
            self.txn.unique_claims.extend(claims);
        }
        Ok(duplicate)
    }

    /// ALTER TABLE ... ADD PRIMARY KEY on `table`, which this transaction created: the
    /// rows it wrote there (not in the table until it commits) go to a temporary file,
    /// each checked to take a key of `columns` (`Ok(Err(_))` when one cannot).
    pub fn spool_own_rows(
        &mut self,
        table: &Arc<Table>,
        columns: &[usize],
    ) -> Result<std::result::Result<Spool, crate::txn::ddl::KeyConflict>> {
        use crate::txn::ddl::KeyConflict;
        let scan = ScanPlan::full(table);
        let mut spool = Spool::new(&self.spill.temp_dir)?;
        let mut keys: FxHashSet<Key> = FxHashSet::default();
        let mut conflict = None;
        self.for_each_row(&scan, |_, row| {
            if let Some(column) = columns.iter().copied().find(|&c| row[c].is_null()) {
                conflict = Some(KeyConflict::Null { column });
                return Ok(false);
            }
            let key = crate::txn::records::primary_key_of(columns, row);
            if key.len() > MAX_KEY_BYTES {
                conflict = Some(KeyConflict::TooLong { bytes: key.len() });
                return Ok(false);
            }
            if !keys.insert(key) {
                conflict = Some(KeyConflict::Duplicate { row: row.to_vec() });
                return Ok(false);
            }
            spool.push(&(Vec::new(), row.to_vec()))?;
            Ok(true)
        })?;
        Ok(match conflict {
            Some(c) => Err(c),
            None => Ok(spool),
        })
    }

    /// Insert the rows of `spool` into `table` again, under its new primary key: a table
    /// this transaction created (nobody else sees it, so no row is locked or looked for in
    /// the table) and truncated in its write set, the rows checked by [`spool_own_rows`]
    /// (distinct keys, no NULL in them) and, when first written, for their constraints
    /// and references.
    pub fn insert_spooled(&mut self, table: &Arc<Table>, spool: Spool) -> Step<()> {
        assert!(
            self.txn.created.contains(&table.id)
                && self
                    .txn
                    .writes
                    .table(table.id)
                    .is_some_and(|w| w.truncated && w.has_no_rows()),
            "rows spooled back into a table the transaction did not create and truncate"
        );
        let def = table.def();
        let mut rows = spool.read_back()?;
        while let Some((_, row)) = rows.next_row()? {
            let key = pk_key(&def, &row)?;
            self.txn.note_write(table.id, &key)?;
            self.check_row_indexes(table, &key, &row, None)?;
            self.txn.put(table, key, Some(row.into()))?;
        }
        Ok(())
    }

    /// Lock a key a new row will take and fail with 23505 if a live row holds it.
    fn claim_key(
        &mut self,
        table: &Arc<Table>,
        def: &TableDef,
        key: &[u8],
        row: &[Value],
    ) -> Step<()> {
        match self.txn.writes.get(table.id, key)? {
            Some(Some(_)) => return Err(duplicate_key(def, row).into()),
            Some(None) => return Ok(()),
            None => {}
        }
        self.lock_row(table, key, Want::Write)?;
        let truncated = self.txn.writes.table(table.id).is_some_and(|t| t.truncated);
        if !truncated && self.latest(table, key)?.is_some_and(|v| v.row.is_some()) {
            return Err(duplicate_key(def, row).into());
        }
        Ok(())
    }

    pub fn delete(&mut self, plan: &DeletePlan) -> Step<(u64, Vec<Vec<Value>>)> {
        self.refuse_if_bulk_loaded(&plan.scan.table)?;
        let scan = &plan.scan;
        let candidates = self.collect(scan)?;
        let mut count = 0;
        let mut returned = Vec::new();
        for (key, seen) in candidates {
            check_cancel(self.slot)?;
            self.settle_pending_checks()?;
            let Some(current) = self.lock_and_recheck(scan, &key, seen, Want::Write)? else {
                continue;
            };
            if !plan.returning.is_empty() {
                returned.push(self.project(&plan.returning, &current)?);
            }
            self.txn.put(&scan.table, key, None)?;
            self.on_referenced_change(&scan.table, &scan.def, &current, None)?;
            count += 1;
        }
        Ok((count, returned))
    }

    /// Build a full table row from source values for `targets` and column defaults.
    pub fn build_row(
        &self,
        defaults: &[Option<Expr>],
        targets: &[usize],
        values: Vec<Option<Value>>,
        ncols: usize,
    ) -> Result<Vec<Value>> {
        let mut row: Vec<Option<Value>> = vec![None; ncols];
        for (v, &t) in values.into_iter().zip(targets) {
            row[t] = v;
        }
        row.into_iter()
            .enumerate()
            .map(|(i, v)| match v {
                Some(v) => Ok(v),
                None => match &defaults[i] {
                    Some(d) => self.eval(d, &[]),
                    None => Ok(Value::Null),
                },
            })
            .collect()
    }

    /// 23514 unless every CHECK constraint holds for `row` (true or NULL).
    pub fn check_constraints(
        &self,
        def: &TableDef,
        checks: &[(String, Expr)],
        row: &[Value],
    ) -> Result<()> {
        for (name, e) in checks {
            if self.eval(e, row)? == Value::Bool(false) {
                return Err(Error::new(
                    SqlState::CHECK_VIOLATION,
                    format!(
                        "new row for relation \"{}\" violates check constraint \"{name}\"",
                        def.name
                    ),
                )
                .with_detail(format!(
                    "Failing row contains ({}).",
                    crate::txn::increments::failing_row(def, row)
                ))
                .with_table(def.name.clone())
                .with_constraint(name.clone()));
            }
        }
        Ok(())
    }

    /// Insert one complete row, handling ON CONFLICT. Returns the row written, if any.
    pub fn insert_row(
        &mut self,
        table: &Arc<Table>,
        def: &TableDef,
        checks: &[(String, Expr)],
        row: Vec<Value>,
        on_conflict: &OnConflict,
        touched: &mut FxHashSet<Key>,
    ) -> Step<Option<Vec<Value>>> {
        self.settle_pending_checks()?;
        let row = check_row(def, row)?;
        self.check_constraints(def, checks, &row)?;
        if def.primary_key.is_empty() {
            let key = row_key(table, def, &row)?;
            self.txn.note_write(table.id, &key)?;
            self.check_row_indexes(table, &key, &row, None)?;
            if !def.foreign_keys.is_empty() {
                self.queue_referencing_checks(table, def, &key, &row, None);
            }
            self.txn.put(table, key, Some(row.clone().into()))?;
            return Ok(Some(row));
        }
        let key = pk_key(def, &row)?;
        let existing: Option<Row> = match self.txn.writes.get(table.id, &key)? {
            Some(own) => own,
            None => {
                self.lock_row(table, &key, Want::Write)?;
                let truncated = self.txn.writes.table(table.id).is_some_and(|t| t.truncated);
                match self.latest(table, &key)? {
                    Some(v) if !truncated && v.row.is_some() => {
                        if self.txn.isolation.snapshot_per_transaction()
                            && v.lsn > self.snapshot
                            && !matches!(on_conflict, OnConflict::Error)
                        {
                            return Err(serialization_failure().into());
                        }
                        v.row
                    }
                    _ => None,
                }
            }
        };
        let Some(existing) = existing else {
            self.check_row_indexes(table, &key, &row, None)?;
            if !matches!(on_conflict, OnConflict::Error) {
                touched.insert(key.clone());
            }
            if !def.foreign_keys.is_empty() {
                self.queue_referencing_checks(table, def, &key, &row, None);
            }
            self.txn.put(table, key, Some(row.clone().into()))?;
            return Ok(Some(row));
        };
        match on_conflict {
            OnConflict::Error => Err(duplicate_key(def, &row).into()),
            OnConflict::Nothing => Ok(None),
            OnConflict::Update {
                assignments,
                filter,
            } => {
                if !touched.insert(key.clone()) {
                    return Err(Error::new(SqlState::CARDINALITY_VIOLATION, "ON CONFLICT DO UPDATE command cannot affect row a second time")
                        .with_hint("Ensure that no rows proposed for insertion within the same command have duplicate constrained values.").into());
                }
                let mut both: Vec<Value> = existing.to_vec();
                both.extend(row.iter().cloned());
                if !self.matches(filter, &both)? {
                    return Ok(None);
                }
                let mut new: Vec<Value> = existing.to_vec();
                for (col, e) in assignments {
                    new[*col] = self.eval(e, &both)?;
                }
                let new = check_row(def, new)?;
                self.check_constraints(def, checks, &new)?;
                if pk_key(def, &new)? != key {
                    return Err(Error::unsupported(
                        "ON CONFLICT DO UPDATE may not change the primary key",
                    )
                    .into());
                }
                self.check_row_indexes(table, &key, &new, Some(&existing))?;
                if !def.foreign_keys.is_empty() {
                    self.queue_referencing_checks(table, def, &key, &new, Some(&existing));
                }
                self.txn.put(table, key, Some(new.clone().into()))?;
                let unique = def.indexes.iter().filter(|i| i.unique);
                if unique
                    .flat_map(|i| &i.columns)
                    .any(|c| assignments.iter().any(|(a, _)| a == c))
                {
                    self.on_referenced_change(table, def, &existing, Some(&new))?;
                }
                Ok(Some(new))
            }
        }
    }

    pub fn insert(&mut self, plan: &InsertPlan) -> Step<(u64, Vec<Vec<Value>>)> {
        self.refuse_if_bulk_loaded(&plan.table)?;
        let ncols = plan.def.columns.len();
        let source_rows: Vec<Vec<Option<Value>>> = match &plan.source {
            InsertSource::Values(rows) => rows
                .iter()
                .map(|r| {
                    r.iter()
                        .map(|e| e.as_ref().map(|e| self.eval(e, &[])).transpose())
                        .collect::<Result<Vec<_>>>()
                })
                .collect::<Result<_>>()?,
            InsertSource::Select(sel) => self
                .select(sel)?
                .into_iter()
                .map(|r| r.into_iter().map(Some).collect())
                .collect(),
        };
        let mut count = 0;
        let mut returned = Vec::new();
        let mut touched = FxHashSet::default();
        for values in source_rows {
            check_cancel(self.slot)?;
            let row = self.build_row(&plan.defaults, &plan.targets, values, ncols)?;
            if let Some(written) = self.insert_row(
                &plan.table,
                &plan.def,
                &plan.checks,
                row,
                &plan.on_conflict,
                &mut touched,
            )? {
                count += 1;
                if !plan.returning.is_empty() {
                    returned.push(self.project(&plan.returning, &written)?);
                }
            }
        }
        Ok((count, returned))
    }

    /// The rows of a plan that [`sorts_externally`](SelectPlan::sorts_externally), sorted
    /// in at most `to.sort_mem_bytes` of memory (its grouping or DISTINCT in at most
    /// `to.hash_mem_bytes`), spilling to files in `to.temp_dir` past it; only the first
    /// `keep` rows (LIMIT + OFFSET) if given, but OFFSET not applied.
    pub fn sort_externally(
        &self,
        plan: &SelectPlan,
        to: SpillTo,
        keep: Option<usize>,
    ) -> Result<sort::Sorted> {
        let check = || check_cancel(self.slot);
        let mut sorter = sort::ExternalSort::new(to.sort_mem_bytes, keep, to.temp_dir.clone());
        let mut distinct = plan.distinct.then(|| grouping::Distinct::new(to.clone()));
        // Without ORDER BY, the first rows are the answer: read no more.
        let enough = |sorter: &sort::ExternalSort| {
            plan.order_by.is_empty() && keep.is_some_and(|k| sorter.rows() >= k)
        };
        let mut output = |row: &[Value]| -> Result<bool> {
            let projected = self.project(&plan.projection, row)?;
            let keys = plan
                .order_by
                .iter()
                .map(|k| self.eval(&k.expr, row))
                .collect::<Result<Vec<_>>>()?;
            if let Some(d) = &mut distinct {
                if !d.admit(&projected, &keys, &check)? {
                    return Ok(true);
                }
            }
            sorter.push(&plan.order_by, (keys, projected), &check)?;
            Ok(!enough(&sorter))
        };
        match &plan.aggregation {
            None if !plan.windows.is_empty() => self.for_each_windowed_row(plan, &mut output)?,
            None => self.for_each_source_row(plan, &mut output)?,
            Some(agg) => {
                let mut groups = grouping::Groups::spilling(agg, to);
                self.for_each_source_row(plan, |row| {
                    self.group_row(&mut groups, row)?;
                    Ok(true)
                })?;
                if plan.windows.is_empty() {
                    self.finish_groups(groups, &mut output)?;
                } else {
                    let mut groups = Some(groups);
                    self.windowed_rows(
                        plan,
                        &mut |take| match groups.take() {
                            Some(g) => self.finish_groups(g, take),
                            None => Ok(()),
                        },
                        &mut output,
                    )?;
                }
            }
        }
        if let Some(d) = distinct {
            if !enough(&sorter) {
                d.finish(&check, |keys, projected| {
                    sorter.push(&plan.order_by, (keys, projected), &check)
                })?;
            }
        }
        sorter.finish(&plan.order_by, &check)
    }

    /// A SELECT's (OFFSET, LIMIT), as row counts.
    pub fn offset_and_limit(&self, plan: &SelectPlan) -> Result<(usize, Option<usize>)> {
        let limit = self.count_of(&plan.limit)?;
        Ok((self.count_of(&plan.offset)?.unwrap_or(0), limit))
    }

    fn count_of(&self, e: &Option<Expr>) -> Result<Option<usize>> {
        match e {
            None => Ok(None),
            Some(e) => match self.eval(e, &[])? {
                Value::Null => Ok(None),
                v => {
                    let n = v
                        .as_i64()
                        .ok_or_else(|| Error::internal("LIMIT is not an integer"))?;
                    if n < 0 {
                        return Err(Error::new(
                            SqlState::INVALID_ROW_COUNT,
                            "LIMIT must not be negative",
                        ));
                    }
                    Ok(Some(n as usize))
                }
            },
        }
    }

    /// SELECT ... FOR UPDATE / FOR SHARE: the rows the snapshot finds, in the query's
    /// order, are each locked and then read at their newest version, as PostgreSQL does:
    /// READ COMMITTED re-checks WHERE on it and skips a row deleted since; REPEATABLE
    /// READ fails with 40001 if it changed. NOWAIT fails with 55P03 on a row held by
    /// another transaction; SKIP LOCKED passes over it. OFFSET and LIMIT count the rows
    /// that are returned.
    pub fn select_locking(&mut self, plan: &SelectPlan, lock: &RowLock) -> Step<Vec<Vec<Value>>> {
        let Some(scan) = &plan.source else {
            return Ok(self.select(plan)?);
        };
        let limit = self.count_of(&plan.limit)?;
        let offset = self.count_of(&plan.offset)?.unwrap_or(0);
        let mut candidates = Vec::new();
        for (key, row) in self.collect(scan)? {
            let order = plan
                .order_by
                .iter()
                .map(|k| self.eval(&k.expr, &row))
                .collect::<Result<Vec<_>>>()?;
            candidates.push((order, (key, row)));
        }
        sort_by_keys(&plan.order_by, &mut candidates)?;
        let mut out = Vec::new();
        let mut passed = 0;
        for (_, (key, seen)) in candidates {
            if limit.is_some_and(|l| out.len() >= l) {
                break;
            }
            check_cancel(self.slot)?;
            let Some(row) = self.lock_for_select(scan, &key, seen, lock)? else {
                continue;
            };
            if passed < offset {
                passed += 1;
                continue;
            }
            out.push(self.project(&plan.projection, &row)?);
        }
        Ok(out)
    }

    /// Lock one row a locking SELECT found, then return the version it returns (see
    /// [`Executor::select_locking`]), or None to pass over the row.
    fn lock_for_select(
        &mut self,
        scan: &ScanPlan,
        key: &[u8],
        seen: Row,
        lock: &RowLock,
    ) -> Step<Option<Row>> {
        let table = &scan.table;
        if self.txn.writes.get(table.id, key)?.is_some() {
            // Our own version: the row is ours already.
            return Ok(Some(seen));
        }
        match lock.wait {
            RowLockWait::Block => self.acquire(table.id, key, lock.want, true)?,
            RowLockWait::NoWait | RowLockWait::SkipLocked => {
                match self.txn.try_lock_row(table.id, key, lock.want) {
                    true => {}
                    false if lock.wait == RowLockWait::SkipLocked => return Ok(None),
                    false => {
                        return Err(Error::new(
                            SqlState::LOCK_NOT_AVAILABLE,
                            format!(
                                "could not obtain lock on row in relation \"{}\"",
                                scan.def.name
                            ),
                        )
                        .into())
                    }
                }
            }
        }
        match self.latest(table, key)? {
            None => Ok(None),
            Some(v) if v.lsn <= self.snapshot => Ok(v.row.or(Some(seen))),
            Some(v) => {
                if self.txn.isolation.snapshot_per_transaction() {
                    return Err(serialization_failure().into());
                }
                if !table.same_row_since(key, self.snapshot)? {
                    return Ok(None);
                }
                match v.row {
                    Some(latest) if self.matches(&scan.filter, &latest)? => Ok(Some(latest)),
                    _ => Ok(None),
                }
            }
        }
    }

    pub fn select(&self, plan: &SelectPlan) -> Result<Vec<Vec<Value>>> {
        self.select_at_most(plan, None)
    }

    /// The rows of `plan`, or its first `most` rows: enough for a subquery's test.
    fn select_at_most(&self, plan: &SelectPlan, most: Option<usize>) -> Result<Vec<Vec<Value>>> {
        let node = explain::node_id(plan);
        self.note_loop(node);
        let mut emitted = 0u64;
        let limit = match (self.count_of(&plan.limit)?, most) {
            (Some(l), Some(m)) => Some(l.min(m)),
            (l, m) => l.or(m),
        };
        let offset = self.count_of(&plan.offset)?.unwrap_or(0);
        // (sort keys, output row)
        let mut out: Vec<(Vec<Value>, Vec<Value>)> = Vec::new();
        let early_stop = plan.order_by.is_empty() && plan.aggregation.is_none();
        let want = limit.map(|l| l + offset);
        // SELECT DISTINCT: the output rows seen so far.
        let mut seen: FxHashSet<Vec<Value>> = FxHashSet::default();
        let calls = set_returning_calls(&plan.projection);
        let mut emit = |row: &[Value], out: &mut Vec<(Vec<Value>, Vec<Value>)>| -> Result<bool> {
            emitted += 1;
            let rows = if calls.is_empty() {
                vec![(self.project(&plan.projection, row)?, Vec::new())]
            } else {
                self.project_set(&plan.projection, &calls, row)?
            };
            for (projected, returned) in rows {
                if plan.distinct && !seen.insert(projected.clone()) {
                    continue;
                }
                let keys = plan
                    .order_by
                    .iter()
                    .map(|k| match &k.expr {
                        // ORDER BY a set-returning output column: with its value in
                        // this row.
                        e if e.has_set_returning() => {
                            self.eval(&with_returned(e, &calls, &returned), row)
                        }
                        e => self.eval(e, row),
                    })
                    .collect::<Result<Vec<_>>>()?;
                out.push((keys, projected));
            }
            Ok(!(early_stop && want.is_some_and(|w| out.len() >= w)))
        };
        match &plan.aggregation {
            None if !plan.windows.is_empty() => {
                self.for_each_windowed_row(plan, &mut |row| emit(row, &mut out))?;
            }
            None => match (&plan.source, &plan.set_op) {
                (None, None) => {
                    if self.matches(&plan.filter, &[])? {
                        emit(&[], &mut out)?;
                    }
                }
                _ => {
                    if want != Some(0) {
                        self.for_each_source_row(plan, |row| emit(row, &mut out))?;
                    }
                }
            },
            Some(agg) => {
                // A subquery's or a set operation side's groups go to disk past their
                // limit too (its output rows are held, as every subquery's are).
                let mut groups = grouping::Groups::spilling(agg, self.spill.clone());
                match &plan.source {
                    None => {
                        if self.matches(&plan.filter, &[])? {
                            self.group_row(&mut groups, &[])?;
                        }
                    }
                    Some(_) => self.for_each_source_row(plan, |row| {
                        self.group_row(&mut groups, row)?;
                        Ok(true)
                    })?,
                }
                if plan.windows.is_empty() {
                    self.finish_groups(groups, &mut |row| emit(row, &mut out))?;
                } else {
                    let mut groups = Some(groups);
                    self.windowed_rows(
                        plan,
                        &mut |take| match groups.take() {
                            Some(g) => self.finish_groups(g, take),
                            None => Ok(()),
                        },
                        &mut |row| emit(row, &mut out),
                    )?;
                }
            }
        }
        self.note_rows(node, Stage::Emitted, emitted);
        self.note_rows(node, Stage::Distinct, out.len() as u64);
        sort_by_keys(&plan.order_by, &mut out)?;
        if plan.distinct_on > 0 {
            // The first row of each run of equal DISTINCT ON values (NULLs equal).
            let n = plan.distinct_on;
            out.dedup_by(|later, first| {
                later.0[..n].iter().zip(&first.0[..n]).all(|(a, b)| {
                    match (a.is_null(), b.is_null()) {
                        (true, true) => true,
                        (false, false) => types::compare(a, b) == Some(Ordering::Equal),
                        _ => false,
                    }
                })
            });
        }
        self.note_rows(node, Stage::Unique, out.len() as u64);
        let rows = out.into_iter().map(|(_, r)| r).skip(offset);
        let rows: Vec<Vec<Value>> = match limit {
            Some(l) => rows.take(l).collect(),
            None => rows.collect(),
        };
        self.note_rows(node, Stage::Output, rows.len() as u64);
        Ok(rows)
    }

    /// Whether `row` passes `scan`'s filter; under EXPLAIN ANALYZE, one that does not
    /// is counted as removed by it.
    fn scan_filter(&self, scan: &ScanPlan, row: &[Value]) -> Result<bool> {
        let passes = self.matches(&scan.filter, row)?;
        if !passes {
            self.note_rows(explain::node_id(scan), Stage::Removed, 1);
        }
        Ok(passes)
    }

    /// Under EXPLAIN ANALYZE: plan node `node` starts a run.
    fn note_loop(&self, node: usize) {
        if let Some(actuals) = &self.actuals {
            actuals.borrow_mut().loop_started(node);
        }
    }

    /// Under EXPLAIN ANALYZE: plan node `node` produced `rows` rows at `stage`.
    fn note_rows(&self, node: usize, stage: Stage, rows: u64) {
        if let Some(actuals) = &self.actuals {
            actuals.borrow_mut().add_rows(node, stage, rows);
        }
    }
}

/// Sort `rows` (sort keys, payload) by ORDER BY's keys, stably.
fn sort_by_keys<T>(order_by: &[OrderKey], rows: &mut [(Vec<Value>, T)]) -> Result<()> {
    if order_by.is_empty() {
        return Ok(());
    }
    let mut err = None;
    rows.sort_by(|(a, _), (b, _)| {
        compare_sort_keys(order_by, a, b).unwrap_or_else(|e| {
            err = Some(e);
            Ordering::Equal
        })
    });
    match err {
        Some(e) => Err(e),
        None => Ok(()),
    }
}

/// How two rows' ORDER BY keys order: each key in turn, with its direction and its
/// NULLs' place.
fn compare_sort_keys(order_by: &[OrderKey], a: &[Value], b: &[Value]) -> Result<Ordering> {
    for (k, (x, y)) in order_by.iter().zip(a.iter().zip(b)) {
        let ord = match (x.is_null(), y.is_null()) {
            (true, true) => Ordering::Equal,
            (true, false) if k.nulls_first => Ordering::Less,
            (true, false) => Ordering::Greater,
            (false, true) if k.nulls_first => Ordering::Greater,
            (false, true) => Ordering::Less,
            _ => {
                let o = types::compare(x, y)
                    .ok_or_else(|| Error::internal("incomparable sort keys"))?;
                if k.desc {
                    o.reverse()
                } else {
                    o
                }
            }
        };
        if ord != Ordering::Equal {
            return Ok(ord);
        }
    }
    Ok(Ordering::Equal)
}

fn as_ref_bound(b: &Bound<Key>) -> Bound<&[u8]> {
    match b {
        Bound::Included(k) => Bound::Included(k.as_slice()),
        Bound::Excluded(k) => Bound::Excluded(k.as_slice()),
        Bound::Unbounded => Bound::Unbounded,
    }
}

/// UNION, INTERSECT or EXCEPT (not UNION ALL) of rows held in memory: hash tables, the
/// rows in the order the left side (then the right) first has them.
fn combine_in_memory(
    kind: set_ops::SetKind,
    all: bool,
    left: Vec<Vec<Value>>,
    right: Vec<Vec<Value>>,
) -> Vec<Vec<Value>> {
    let mut out = Vec::new();
    if kind == set_ops::SetKind::Union {
        let mut seen = FxHashSet::default();
        for row in left.into_iter().chain(right) {
            if seen.insert(row.clone()) {
                out.push(row);
            }
        }
        return out;
    }
    let intersect = kind == set_ops::SetKind::Intersect;
    let mut counts: FxHashMap<Vec<Value>, usize> = FxHashMap::default();
    for row in right {
        *counts.entry(row).or_default() += 1;
    }
    let mut emitted = FxHashSet::default();
    for row in left {
        let n = counts.get_mut(&row);
        let keep = match (intersect, n) {
            (true, Some(n)) if *n > 0 => {
                if all {
                    *n -= 1;
                }
                true
            }
            (true, _) => false,
            (false, Some(n)) if *n > 0 => {
                if all {
                    *n -= 1;
                }
                false
            }
            (false, Some(_)) => all,
            (false, None) => true,
        };
        if keep && (all || emitted.insert(row.clone())) {
            out.push(row);
        }
    }
    out
}

/// Running state of one aggregate in one group.
#[derive(Clone)]
enum AggState {
    Count(i64),
    Sum {
        acc: Option<Value>,
        ty: DataType,
    },
    MinMax {
        best: Option<Value>,
        max: bool,
    },
    Avg {
        sum: Option<Value>,
        count: i64,
        float: bool,
    },
    /// string_agg: the values so far, each but the first after its delimiter.
    StringAgg {
        acc: Option<Vec<u8>>,
        bytea: bool,
    },
    /// percentile_cont, percentile_disc and mode: the non-NULL inputs in their sorted
    /// order, and the fraction (the first given).
    OrderedSet {
        func: AggFunc,
        values: Vec<Value>,
        fraction: Option<Value>,
    },
    /// array_agg: every input, NULLs too.
    ArrayAgg {
        items: Vec<Value>,
        element: &'static DataType,
    },
    /// json_agg, or with `object`, json_object_agg; `json` when the values are json
    /// text, `structured` when arrays or rows.
    JsonText {
        state: super::json_functions::JsonAggState,
        object: bool,
        json: bool,
        structured: bool,
    },
    /// jsonb_agg, or with `object`, jsonb_object_agg.
    Jsonb {
        state: super::json_functions::JsonbAggState,
        object: bool,
    },
    /// bool_and (`and`) or bool_or.
    Bool {
        acc: Option<bool>,
        and: bool,
    },
    /// The variances and standard deviations of numerics: count, sum, sum of squares.
    NumericVariance {
        n: i64,
        sum: rust_decimal::Decimal,
        squares: rust_decimal::Decimal,
        sample: bool,
        root: bool,
    },
    /// Of floats, by Youngs and Cramer's updates, as PostgreSQL computes them: count,
    /// sum, and the sum of squared differences from the mean.
    FloatVariance {
        n: f64,
        sum: f64,
        sxx: f64,
        sample: bool,
        root: bool,
    },
    /// bit_and (`and`) or bit_or of integers.
    Bits {
        acc: Option<Value>,
        and: bool,
    },
    /// `agg(DISTINCT x)`: the values given to `inner` so far; a value seen is not given
    /// again.
    Distinct {
        inner: Box<AggState>,
        seen: FxHashSet<Value>,
    },
    /// `agg(x ORDER BY ...)`: the inputs (sort keys, value, delimiter), given to the
    /// aggregate in order when it finishes.
    Ordered {
        inner: Box<AggState>,
        inputs: Vec<(Vec<Value>, AggInput)>,
        order_by: Vec<OrderKey>,
    },
}

/// A variance or standard deviation of numerics as PostgreSQL computes it:
/// (n·Σx² − (Σx)²) / (n·(n−1)) (or n² for the population), divided at the scale numeric
/// division chooses, the square root taken at that scale; NULL for too few rows.
fn numeric_variance(
    n: i64,
    sum: rust_decimal::Decimal,
    squares: rust_decimal::Decimal,
    sample: bool,
    root: bool,
) -> Result<Value> {
    use rust_decimal::{Decimal, MathematicalOps, RoundingStrategy};
    if n == 0 || (sample && n == 1) {
        return Ok(Value::Null);
    }
    let overflow = || {
        Error::new(
            SqlState::NUMERIC_VALUE_OUT_OF_RANGE,
            "value overflows numeric format",
        )
    };
    let count = Decimal::from(n);
    let numerator = count
        .checked_mul(squares)
        .and_then(|a| sum.checked_mul(sum).and_then(|b| a.checked_sub(b)))
        .ok_or_else(overflow)?;
    if numerator <= Decimal::ZERO {
        return Ok(Value::Numeric(Decimal::ZERO));
    }
    let denominator = if sample {
        count * Decimal::from(n - 1)
    } else {
        count.checked_mul(count).ok_or_else(overflow)?
    };
    let variance = types::numeric_div(&numerator, &denominator)?;
    if !root {
        return Ok(Value::Numeric(variance));
    }
    let scale = variance.scale();
    let mut r = variance
        .sqrt()
        .ok_or_else(overflow)?
        .round_dp_with_strategy(scale, RoundingStrategy::MidpointAwayFromZero);
    r.rescale(scale);
    Ok(Value::Numeric(r))
}

/// The aggregate a window call computes, as an aggregate call.
fn w_aggregate_call(w: &WindowCall) -> Option<AggCall> {
    match w.func {
        WindowFunc::Aggregate(func) => Some(AggCall {
            func,
            arg: w.arg.clone(),
            arg_type: w.arg_type,
            delimiter: None,
            order_by: Vec::new(),
            distinct: false,
            filter: w.filter.clone(),
        }),
        _ => None,
    }
}

/// An ordered-set aggregate's result over its sorted, non-NULL inputs (NULL if none, or
/// if the fraction is NULL).
fn ordered_set_result(func: AggFunc, values: Vec<Value>, fraction: Option<Value>) -> Result<Value> {
    if values.is_empty() {
        return Ok(Value::Null);
    }
    if func == AggFunc::Mode {
        // The most frequent value; of equally frequent ones, the first in sort order.
        let (mut best, mut best_count) = (0, 0);
        let mut at = 0;
        while at < values.len() {
            let run = values[at..]
                .iter()
                .take_while(|v| types::compare(v, &values[at]) == Some(Ordering::Equal))
                .count();
            if run > best_count {
                (best, best_count) = (at, run);
            }
            at += run.max(1);
        }
        return Ok(values[best].clone());
    }
    let fraction = match fraction {
        Some(Value::Float8(f)) => f,
        _ => return Ok(Value::Null),
    };
    if !(0.0..=1.0).contains(&fraction) {
        return Err(Error::new(
            SqlState::NUMERIC_VALUE_OUT_OF_RANGE,
            format!("percentile value {fraction} is not between 0 and 1"),
        ));
    }
    let n = values.len();
    if func == AggFunc::PercentileDisc {
        let row = (fraction * n as f64).ceil() as usize;
        return Ok(values[row.max(1).min(n) - 1].clone());
    }
    let position = fraction * (n - 1) as f64;
    let (first, second) = (position.floor() as usize, position.ceil() as usize);
    let (low, high) = (&values[first], &values[second.min(n - 1)]);
    if first == second {
        return Ok(low.clone());
    }
    let weight = position - first as f64;
    Ok(match (low, high) {
        (Value::Float8(a), Value::Float8(b)) => Value::Float8(a + weight * (b - a)),
        (Value::Interval(a), Value::Interval(b)) => {
            let step = b.checked_add(&a.checked_neg()?)?.scaled(weight)?;
            Value::Interval(a.checked_add(&step)?)
        }
        _ => return Err(Error::internal("percentile_cont of an unexpected type")),
    })
}

/// One input of an aggregate: its value (None for count(*)) and delimiter (string_agg's).
type AggInput = (Option<Value>, Option<Value>);

impl AggState {
    fn new(call: &AggCall) -> AggState {
        let mut state = Self::unordered(call);
        if call.distinct {
            state = AggState::Distinct {
                inner: Box::new(state),
                seen: FxHashSet::default(),
            };
        }
        if call.order_by.is_empty() {
            return state;
        }
        AggState::Ordered {
            inner: Box::new(state),
            inputs: Vec::new(),
            order_by: call.order_by.clone(),
        }
    }

    fn unordered(call: &AggCall) -> AggState {
        match call.func {
            AggFunc::Count => AggState::Count(0),
            AggFunc::Sum => AggState::Sum {
                acc: None,
                ty: call.func.result_type(call.arg_type),
            },
            AggFunc::Min => AggState::MinMax {
                best: None,
                max: false,
            },
            AggFunc::Max => AggState::MinMax {
                best: None,
                max: true,
            },
            AggFunc::Avg => AggState::Avg {
                sum: None,
                count: 0,
                float: matches!(call.arg_type, DataType::Float4 | DataType::Float8),
            },
            AggFunc::StringAgg => AggState::StringAgg {
                acc: None,
                bytea: call.arg_type == DataType::Bytea,
            },
            AggFunc::PercentileCont | AggFunc::PercentileDisc | AggFunc::Mode => {
                AggState::OrderedSet {
                    func: call.func,
                    values: Vec::new(),
                    fraction: None,
                }
            }
            AggFunc::ArrayAgg => AggState::ArrayAgg {
                items: Vec::new(),
                element: types::static_element(&call.arg_type).unwrap_or(&DataType::Text),
            },
            AggFunc::JsonAgg | AggFunc::JsonObjectAgg => AggState::JsonText {
                state: Default::default(),
                object: call.func == AggFunc::JsonObjectAgg,
                json: call.arg_type == DataType::Json,
                structured: matches!(call.arg_type, DataType::Array(_) | DataType::Record(_)),
            },
            AggFunc::JsonbAgg | AggFunc::JsonbObjectAgg => AggState::Jsonb {
                state: Default::default(),
                object: call.func == AggFunc::JsonbObjectAgg,
            },
            AggFunc::Variance { sample, root }
                if matches!(call.arg_type, DataType::Float4 | DataType::Float8) =>
            {
                AggState::FloatVariance {
                    n: 0.0,
                    sum: 0.0,
                    sxx: 0.0,
                    sample,
                    root,
                }
            }
            AggFunc::Variance { sample, root } => AggState::NumericVariance {
                n: 0,
                sum: rust_decimal::Decimal::ZERO,
                squares: rust_decimal::Decimal::ZERO,
                sample,
                root,
            },
            AggFunc::BitAnd | AggFunc::BitOr => AggState::Bits {
                acc: None,
                and: call.func == AggFunc::BitAnd,
            },
            AggFunc::BoolAnd | AggFunc::BoolOr => AggState::Bool {
                acc: None,
                and: call.func == AggFunc::BoolAnd,
            },
        }
    }

    /// One input row's value (None for count(*)) and delimiter (string_agg's).
    fn input(
        &mut self,
        keys: impl FnOnce() -> Result<Vec<Value>>,
        v: Option<Value>,
        delimiter: Option<Value>,
    ) -> Result<()> {
        match self {
            AggState::Ordered { inputs, .. } => {
                inputs.push((keys()?, (v, delimiter)));
                Ok(())
            }
            AggState::Distinct { inner, seen } => {
                if let Some(value) = &v {
                    if !seen.insert(value.clone()) {
                        return Ok(());
                    }
                }
                inner.input(keys, v, delimiter)
            }
            AggState::ArrayAgg { items, .. } => {
                items.push(v.unwrap_or(Value::Null));
                Ok(())
            }
            AggState::OrderedSet {
                values, fraction, ..
            } => {
                if fraction.is_none() {
                    *fraction = delimiter;
                }
                if let Some(v) = v.filter(|v| !v.is_null()) {
                    values.push(v);
                }
                Ok(())
            }
            AggState::JsonText {
                state,
                object,
                json,
                structured,
            } => {
                let v = v.unwrap_or(Value::Null);
                match object {
                    true => state.add_pair(&v, &delimiter.unwrap_or(Value::Null), *json),
                    false => {
                        state.add(&v, *json, *structured);
                        Ok(())
                    }
                }
            }
            AggState::Jsonb { state, object } => {
                let v = v.unwrap_or(Value::Null);
                match object {
                    true => state.add_pair(&v, &delimiter.unwrap_or(Value::Null)),
                    false => state.add(&v),
                }
            }
            state => match delimiter {
                Some(d) => {
                    state.add_string(v.unwrap_or(Value::Null), d);
                    Ok(())
                }
                None => state.add(v),
            },
        }
    }

    /// string_agg's input: the value and its delimiter (a NULL value is skipped, a NULL
    /// delimiter is none).
    fn add_string(&mut self, v: Value, delimiter: Value) {
        let AggState::StringAgg { acc, .. } = self else {
            return;
        };
        let bytes = |v: Value| match v {
            Value::Null => Vec::new(),
            Value::Bytea(b) => b,
            other => super::expr::text_of(&other).into_bytes(),
        };
        if v.is_null() {
            return;
        }
        match acc {
            None => *acc = Some(bytes(v)),
            Some(a) => {
                a.extend(bytes(delimiter));
                a.extend(bytes(v));
            }
        }
    }

    /// Add one input (None for count(*)).
    fn add(&mut self, v: Option<Value>) -> Result<()> {
        if matches!(v, Some(Value::Null)) {
            return Ok(());
        }
        match self {
            AggState::Count(n) => *n += 1,
            AggState::Sum { acc, ty } => {
                let v = types::cast(v.unwrap_or(Value::Null), ty)?;
                *acc = Some(match acc.take() {
                    None => v,
                    Some(a) => types::arith(types::ArithOp::Add, &a, &v)?,
                });
            }
            AggState::MinMax { best, max } => {
                let v = v.unwrap_or(Value::Null);
                let replace = match best {
                    None => true,
                    Some(b) => match types::compare(&v, b) {
                        Some(Ordering::Greater) => *max,
                        Some(Ordering::Less) => !*max,
                        _ => false,
                    },
                };
                if replace {
                    *best = Some(v);
                }
            }
            AggState::Avg { sum, count, float } => {
                let ty = if *float {
                    DataType::Float8
                } else {
                    DataType::Numeric(None)
                };
                let v = match v.unwrap_or(Value::Null) {
                    // Intervals are summed as intervals, then divided.
                    iv @ Value::Interval(_) => iv,
                    v => types::cast(v, &ty)?,
                };
                *sum = Some(match sum.take() {
                    None => v,
                    Some(a) => types::arith(types::ArithOp::Add, &a, &v)?,
                });
                *count += 1;
            }
            AggState::StringAgg { .. } => {
                return Err(Error::internal("string_agg takes a delimiter"));
            }
            AggState::Jsonb { .. } | AggState::JsonText { .. } => {
                return Err(Error::internal("json aggregates take their input whole"))
            }
            AggState::NumericVariance {
                n, sum, squares, ..
            } => {
                let overflow = || {
                    Error::new(
                        SqlState::NUMERIC_VALUE_OUT_OF_RANGE,
                        "value overflows numeric format",
                    )
                };
                let x = match types::cast(v.unwrap_or(Value::Null), &DataType::Numeric(None))? {
                    Value::Numeric(x) => x,
                    _ => return Err(Error::internal("variance of a non-number")),
                };
                *n += 1;
                *sum = sum.checked_add(x).ok_or_else(overflow)?;
                let square = x.checked_mul(x).ok_or_else(overflow)?;
                *squares = squares.checked_add(square).ok_or_else(overflow)?;
            }
            AggState::FloatVariance { n, sum, sxx, .. } => {
                let x = match v {
                    Some(Value::Float8(x)) => x,
                    Some(Value::Float4(x)) => f64::from(x),
                    _ => return Err(Error::internal("float variance of a non-float")),
                };
                let before = *n;
                *n += 1.0;
                *sum += x;
                if before > 0.0 {
                    let t = x * *n - *sum;
                    *sxx += t * t / (*n * before);
                }
            }
            AggState::Bits { acc, and } => {
                let v = v.unwrap_or(Value::Null);
                *acc = Some(match acc.take() {
                    None => v,
                    Some(a) => {
                        let f = if *and {
                            super::expr::Func::BitAnd
                        } else {
                            super::expr::Func::BitOr
                        };
                        super::expr::bitwise(f, &a, &v)?
                    }
                });
            }
            AggState::Bool { acc, and } => {
                let b = matches!(v, Some(Value::Bool(true)));
                *acc = Some(match acc {
                    None => b,
                    Some(a) if *and => *a && b,
                    Some(a) => *a || b,
                });
            }
            AggState::ArrayAgg { items, .. } => items.push(v.unwrap_or(Value::Null)),
            AggState::OrderedSet { values, .. } => values.extend(v),
            AggState::Ordered { .. } | AggState::Distinct { .. } => {
                return Err(Error::internal("ordered aggregate input without keys"))
            }
        }
        Ok(())
    }

    fn finish(self) -> Result<Value> {
        Ok(match self {
            AggState::Ordered {
                mut inner,
                mut inputs,
                order_by,
            } => {
                sort_by_keys(&order_by, &mut inputs)?;
                for (_, (v, d)) in inputs {
                    inner.input(|| Ok(Vec::new()), v, d)?;
                }
                return inner.finish();
            }
            AggState::Distinct { inner, .. } => return inner.finish(),
            AggState::ArrayAgg { items, .. } if items.is_empty() => Value::Null,
            AggState::ArrayAgg { items, element } => Value::Array(element, items.into()),
            AggState::OrderedSet {
                func,
                values,
                fraction,
            } => ordered_set_result(func, values, fraction)?,
            AggState::Bool { acc, .. } => acc.map_or(Value::Null, Value::Bool),
            AggState::Bits { acc, .. } => acc.unwrap_or(Value::Null),
            AggState::FloatVariance {
                n,
                sxx,
                sample,
                root,
                ..
            } => {
                let divisor = if sample { n - 1.0 } else { n };
                if n == 0.0 || divisor <= 0.0 {
                    return Ok(Value::Null);
                }
                let variance = sxx / divisor;
                Value::Float8(if root { variance.sqrt() } else { variance })
            }
            AggState::NumericVariance {
                n,
                sum,
                squares,
                sample,
                root,
            } => numeric_variance(n, sum, squares, sample, root)?,
            AggState::Jsonb { state, object } => state.finish(object)?,
            AggState::JsonText { state, object, .. } => state.finish(object),
            AggState::Count(n) => Value::Int8(n),
            AggState::Sum { acc, .. } => acc.unwrap_or(Value::Null),
            AggState::MinMax { best, .. } => best.unwrap_or(Value::Null),
            AggState::Avg { sum: None, .. } => Value::Null,
            AggState::Avg {
                sum: Some(Value::Float8(s)),
                count,
                ..
            } => Value::Float8(s / count as f64),
            AggState::Avg {
                sum: Some(Value::Numeric(s)),
                count,
                ..
            } => Value::Numeric(types::numeric_div(&s, &count.into())?),
            AggState::Avg {
                sum: Some(Value::Interval(s)),
                count,
                ..
            } => Value::Interval(s.scaled(1.0 / count as f64)?),
            AggState::Avg { .. } => return Err(Error::internal("avg of unexpected type")),
            AggState::StringAgg { acc: None, .. } => Value::Null,
            AggState::StringAgg {
                acc: Some(b),
                bytea: true,
            } => Value::Bytea(b),
            AggState::StringAgg {
                acc: Some(b),
                bytea: false,
            } => Value::Text(
                String::from_utf8(b)
                    .map_err(|_| Error::internal("string_agg of text produced invalid UTF-8"))?,
            ),
        })
    }
}

/// `v` as a value of type `t`, if `t` holds it exactly (a key compares bytes, so a
/// lookup must be in the column's own type); None for NULL.
fn exact_key_value(v: Value, t: DataType) -> Option<Value> {
    if v.is_null() {
        return None;
    }
    let c = types::cast(v.clone(), &t).ok()?;
    (types::compare(&c, &v) == Some(Ordering::Equal)).then_some(c)
}

/// The set-returning functions in a select list, each once, in order.
fn set_returning_calls(exprs: &[Expr]) -> Vec<Arc<TableFunction>> {
    let mut calls: Vec<Arc<TableFunction>> = Vec::new();
    for e in exprs {
        e.visit(&mut |n| {
            if let Expr::SetReturning(f) = n {
                if !calls.iter().any(|c| Arc::ptr_eq(c, f)) {
                    calls.push(f.clone());
                }
            }
        });
    }
    calls
}

/// `e` with each of the set-returning functions `calls` replaced by its value in one
/// output row (`values`, in the order of `calls`).
fn with_returned(e: &Expr, calls: &[Arc<TableFunction>], values: &[Value]) -> Expr {
    e.rewrite(&|n| match n {
        Expr::SetReturning(f) => calls
            .iter()
            .position(|c| Arc::ptr_eq(c, f))
            .map(|k| Expr::Const(values[k].clone())),
        _ => None,
    })
}
