//! Foreign keys at run time: the checks and the referential actions, as PostgreSQL's
//! RI triggers make them.
//!
//! The model:
//! - **A write that may break a constraint queues a check** ([`PendingCheck`]) rather
//!   than checking at once: a row written into a referencing table whose key columns
//!   are all non-null (and changed, for an UPDATE) must find its referenced row; a
//!   referenced row deleted, or whose referenced columns an UPDATE changed, must leave
//!   no row referencing its old values (NO ACTION). At the end of the statement each
//!   check runs, or, for a constraint deferred now (`DEFERRABLE INITIALLY DEFERRED`, or
//!   `SET CONSTRAINTS ... DEFERRED`), moves to the transaction, which runs it before
//!   its commit is logged. So a statement (or, deferred, a transaction) may write a
//!   referencing row before the row it references, as in PostgreSQL. The queue is
//!   bounded: past [`SETTLE_PENDING_AT`] checks they are run early, and the ones that
//!   pass are done (a pass is final: the referenced row is locked, or any later
//!   reference queues a check of its own); only failing ones stay, at most
//!   [`MAX_UNSETTLED_CHECKS`].
//! - **RESTRICT, CASCADE, SET NULL and SET DEFAULT act at once**, on each referencing
//!   row as it is then (the newest committed version, or the transaction's own),
//!   locked first as any write locks it. A cascade's own writes are writes like any
//!   other: they queue checks and act on the rows that reference them in turn, to a
//!   depth of [`MAX_CASCADE_DEPTH`].
//! - **Concurrency is the row locks'.** A check that finds its referenced row takes a
//!   KEY SHARE lock on it, held to the end of the transaction; deleting a row, or
//!   changing its key, takes the row's exclusive lock, which conflicts with it. So
//!   whichever comes second waits for the first to end, then sees what it did: a
//!   delete finds the referencing row committed, a referencing insert finds its row
//!   gone. Both read the newest committed versions (and their own writes), not their
//!   snapshot, as PostgreSQL's checks do; under REPEATABLE READ and SERIALIZABLE a row
//!   that changed since the snapshot is a serialization failure (40001) instead.
//! - A check never trusts its queue's copy of a row: it re-reads the row as the
//!   transaction has it when it runs (a row deleted since needs no check), and looks
//!   its constraint up again by name (a constraint dropped since needs none).

use std::ops::Bound;
use std::rc::Rc;
use std::sync::Arc;

use super::executor::{Executor, Step, Stop};
use super::expr::Expr;
use crate::error::{Error, Result, SqlState};
use crate::storage::{FkAction, ForeignKeyDef, Key, Row, Table, TableDef, TableId};
use crate::txn::increments::check_row;
use crate::txn::Want;
use crate::types::{self, Value};
use crate::wal::Lsn;

/// Pending checks a statement gathers before it settles them early: each check that
/// passes then is final (its referenced row is locked KEY SHARE, or no row references
/// the values that went away and any new reference queues a check of its own), so only
/// those that fail stay queued (a later row may still satisfy them).
pub const SETTLE_PENDING_AT: usize = 4096;

/// The most checks that may stay unsettled (failing so far) in a statement or, deferred,
/// in a transaction: past it, 54000.
pub const MAX_UNSETTLED_CHECKS: usize = 1_000_000;

/// How deep referential actions may cascade (a row deleted by a cascade whose rows
/// cascade in turn...): past it, 54001, as PostgreSQL's stack depth limit.
pub const MAX_CASCADE_DEPTH: usize = 64;
/// The most referenced values ADD FOREIGN KEY's validation remembers as found.
const VALIDATED_VALUES_KEPT: usize = 65_536;

/// A check a write queued (see the module's essay).
#[derive(Clone)]
pub enum PendingCheck {
    /// The row `key` of `table` (a referencing table) must find the row its foreign key
    /// `fk` references, if the transaction still has it.
    Referencing {
        table: Arc<Table>,
        key: Key,
        fk: String,
    },
    /// No row of `child` may reference `values` (of the referenced columns, in the
    /// order the foreign key `fk` names them) through `fk` unless a row of the
    /// referenced table holds them again.
    Referenced {
        child: Arc<Table>,
        fk: String,
        values: Vec<Value>,
    },
}

impl PendingCheck {
    /// Whether its constraint is deferred under `modes` (one dropped since is not).
    pub fn deferred_under(&self, modes: &ConstraintModes) -> bool {
        let (table, name) = match self {
            PendingCheck::Referencing { table, fk, .. } => (table, fk),
            PendingCheck::Referenced { child, fk, .. } => (child, fk),
        };
        let def = table.def();
        def.foreign_keys
            .iter()
            .find(|f| f.name == *name)
            .is_some_and(|fk| modes.deferred(fk))
    }
}

/// Which constraints are deferred now: SET CONSTRAINTS's choices on top of each
/// constraint's own (`INITIALLY DEFERRED` or not).
#[derive(Clone, Debug, Default)]
pub struct ConstraintModes {
    /// SET CONSTRAINTS ALL: every deferrable constraint deferred (true) or not.
    all: Option<bool>,
    /// SET CONSTRAINTS name, since the last ALL, latest last.
    named: Vec<(String, bool)>,
}

impl ConstraintModes {
    pub fn set_all(&mut self, deferred: bool) {
        self.all = Some(deferred);
        self.named.clear();
    }

    pub fn set(&mut self, name: &str, deferred: bool) {
        self.named.retain(|(n, _)| n != name);
        self.named.push((name.to_string(), deferred));
    }

    /// Whether `fk` is checked at commit rather than at the end of each statement.
    pub fn deferred(&self, fk: &ForeignKeyDef) -> bool {
        if !fk.deferrable {
            return false;
        }
        match self.named.iter().find(|(n, _)| *n == fk.name) {
            Some(&(_, d)) => d,
            None => self.all.unwrap_or(fk.initially_deferred),
        }
    }
}

/// The foreign keys that reference one table, with their tables and (for the actions
/// that write them) their compiled rules.
pub struct Incoming {
    pub child: Arc<Table>,
    pub fk: ForeignKeyDef,
}

/// A referencing table's CHECK constraints and defaults, compiled, for the rows a
/// referential action rewrites.
pub struct RowRules {
    pub checks: Vec<(String, Expr)>,
    pub defaults: Vec<Option<Expr>>,
}

fn column_names(def: &TableDef, columns: &[usize]) -> String {
    columns
        .iter()
        .map(|&c| def.columns[c].name.as_str())
        .collect::<Vec<_>>()
        .join(", ")
}

fn value_list(values: &[Value]) -> String {
    values
        .iter()
        .map(super::expr::text_of)
        .collect::<Vec<_>>()
        .join(", ")
}

/// 23503 for a referencing row whose referenced row is missing.
pub(super) fn not_present(
    child: &TableDef,
    parent: &TableDef,
    fk: &ForeignKeyDef,
    values: &[Value],
) -> Error {
    Error::new(
        SqlState::FOREIGN_KEY_VIOLATION,
        format!(
            "insert or update on table \"{}\" violates foreign key constraint \"{}\"",
            child.name, fk.name
        ),
    )
    .with_detail(format!(
        "Key ({})=({}) is not present in table \"{}\".",
        column_names(child, &fk.columns),
        value_list(values),
        parent.name
    ))
    .with_table(child.name.clone())
    .with_constraint(fk.name.clone())
}

/// Whether a row holding `values` in a foreign key's columns is let through without a
/// referenced row: all of them NULL, or, MATCH SIMPLE, any of them. None: MATCH FULL
/// and some but not all are NULL, which no row may hold.
fn passes_without_reference(fk: &ForeignKeyDef, values: &[Value]) -> Option<bool> {
    let nulls = values.iter().filter(|v| v.is_null()).count();
    match (nulls, fk.match_full) {
        (0, _) => Some(false),
        (n, _) if n == values.len() => Some(true),
        (_, false) => Some(true),
        (_, true) => None,
    }
}

/// 23503 for a MATCH FULL foreign key's columns holding NULL and non-NULL values.
fn mixed_nulls(child: &TableDef, fk: &ForeignKeyDef) -> Error {
    Error::new(
        SqlState::FOREIGN_KEY_VIOLATION,
        format!(
            "insert or update on table \"{}\" violates foreign key constraint \"{}\"",
            child.name, fk.name
        ),
    )
    .with_detail("MATCH FULL does not allow mixing of null and nonnull key values.")
    .with_table(child.name.clone())
    .with_constraint(fk.name.clone())
}

/// 23503 for a referenced row that rows still reference.
fn still_referenced(
    child: &TableDef,
    parent: &TableDef,
    fk: &ForeignKeyDef,
    values: &[Value],
) -> Error {
    Error::new(
        SqlState::FOREIGN_KEY_VIOLATION,
        format!(
            "update or delete on table \"{}\" violates foreign key constraint \"{}\" on table \"{}\"",
            parent.name, fk.name, child.name
        ),
    )
    .with_detail(format!(
        "Key ({})=({}) is still referenced from table \"{}\".",
        column_names(parent, &fk.referenced_columns),
        value_list(values),
        child.name
    ))
    .with_table(child.name.clone())
    .with_constraint(fk.name.clone())
}

/// `values` cast to the types of `columns` of `def` (a foreign key pairs columns of
/// one family, so the cast is exact).
fn cast_to(def: &TableDef, columns: &[usize], values: &[Value]) -> Result<Vec<Value>> {
    columns
        .iter()
        .zip(values)
        .map(|(&c, v)| types::cast(v.clone(), &def.columns[c].data_type))
        .collect()
}

fn encoded(values: &[Value]) -> Key {
    let mut key = Vec::new();
    types::encode_key(values, &mut key);
    key
}

/// Whether `row` holds `target` (encoded alike) in `columns`.
fn holds(row: &[Value], columns: &[usize], target: &Key) -> bool {
    let values: Vec<Value> = columns.iter().map(|&c| row[c].clone()).collect();
    encoded(&values) == *target
}

fn same_set(a: &[usize], b: &[usize]) -> bool {
    let (mut a, mut b) = (a.to_vec(), b.to_vec());
    a.sort_unstable();
    b.sort_unstable();
    a == b
}

impl Executor<'_> {
    /// The foreign keys that reference `table` (none unless it has a key a foreign key
    /// could reference), looked up once per statement.
    pub(super) fn incoming(&self, table: &Table, def: &TableDef) -> Rc<Vec<Incoming>> {
        if def.primary_key.is_empty() && !def.indexes.iter().any(|i| i.unique) {
            return Rc::new(Vec::new());
        }
        let mut cache = self.fk_incoming.borrow_mut();
        cache
            .entry(table.id)
            .or_insert_with(|| {
                Rc::new(
                    self.engine
                        .txn
                        .catalog
                        .referencing(table.id)
                        .into_iter()
                        .map(|(child, fk)| Incoming { child, fk })
                        .collect(),
                )
            })
            .clone()
    }

    /// After `row` was written under `key` into `table` (replacing `old`, if any): queue
    /// the check of each foreign key of the table the write may break.
    pub(super) fn queue_referencing_checks(
        &mut self,
        table: &Arc<Table>,
        def: &TableDef,
        key: &[u8],
        row: &[Value],
        old: Option<&[Value]>,
    ) {
        for fk in &def.foreign_keys {
            let all_null = fk.columns.iter().all(|&c| row[c].is_null());
            let any_null = fk.columns.iter().any(|&c| row[c].is_null());
            // A MATCH FULL key with some NULLs is checked (and refused) too.
            if all_null || (any_null && !fk.match_full) {
                continue;
            }
            if let Some(old) = old {
                let before: Vec<Value> = fk.columns.iter().map(|&c| old[c].clone()).collect();
                let after: Vec<Value> = fk.columns.iter().map(|&c| row[c].clone()).collect();
                if encoded(&before) == encoded(&after) {
                    continue;
                }
            }
            self.fk_pending.push(PendingCheck::Referencing {
                table: table.clone(),
                key: key.to_vec(),
                fk: fk.name.clone(),
            });
        }
    }

    /// The referenced row `old` of `parent` was just deleted (`new` None) or replaced by
    /// `new`: act on the rows that reference its old values, as each foreign key says.
    pub(super) fn on_referenced_change(
        &mut self,
        parent: &Arc<Table>,
        def: &TableDef,
        old: &[Value],
        new: Option<&[Value]>,
    ) -> Step<()> {
        let incoming = self.incoming(parent, def);
        for Incoming { child, fk } in incoming.iter() {
            let values: Vec<Value> = fk
                .referenced_columns
                .iter()
                .map(|&c| old[c].clone())
                .collect();
            if values.iter().any(Value::is_null) {
                continue;
            }
            if let Some(new) = new {
                let after: Vec<Value> = fk
                    .referenced_columns
                    .iter()
                    .map(|&c| new[c].clone())
                    .collect();
                if encoded(&after) == encoded(&values) {
                    continue;
                }
            }
            let action = if new.is_some() {
                fk.on_update
            } else {
                fk.on_delete
            };
            match action {
                FkAction::NoAction => self.fk_pending.push(PendingCheck::Referenced {
                    child: child.clone(),
                    fk: fk.name.clone(),
                    values,
                }),
                FkAction::Restrict => {
                    let child_def = child.def();
                    if self.referencing_row(child, fk, &values)? {
                        return Err(still_referenced(&child_def, def, fk, &values).into());
                    }
                }
                FkAction::Cascade | FkAction::SetNull | FkAction::SetDefault => {
                    let new_values = match (action, new) {
                        (FkAction::Cascade, Some(new)) => Some(
                            fk.referenced_columns
                                .iter()
                                .map(|&c| new[c].clone())
                                .collect(),
                        ),
                        _ => None,
                    };
                    self.referential_action(child, fk, &values, action, new_values)?;
                }
            }
        }
        Ok(())
    }

    /// Once the statement has queued [`SETTLE_PENDING_AT`] checks, run them: those that
    /// pass are done, those that fail stay queued. So a long statement (a COPY of
    /// millions of rows) holds only the checks that do not pass yet.
    pub(super) fn settle_pending_checks(&mut self) -> Step<()> {
        if self.fk_pending.len() < SETTLE_PENDING_AT.max(self.fk_unsettled * 2) {
            return Ok(());
        }
        let pending = std::mem::take(&mut self.fk_pending);
        for check in pending {
            match self.run_check(&check) {
                Ok(()) => {}
                Err(Stop::Error(e)) if e.code == SqlState::FOREIGN_KEY_VIOLATION => {
                    self.fk_pending.push(check);
                }
                Err(stop) => return Err(stop),
            }
        }
        self.fk_unsettled = self.fk_pending.len();
        if self.fk_unsettled > MAX_UNSETTLED_CHECKS {
            return Err(Error::new(
                SqlState::PROGRAM_LIMIT_EXCEEDED,
                format!(
                    "more than {MAX_UNSETTLED_CHECKS} foreign key checks are pending in one statement"
                ),
            )
            .into());
        }
        Ok(())
    }

    /// Run the checks the statement queued: each now, or (its constraint deferred) at
    /// commit, by moving it to `fk_deferred` for the transaction to keep.
    pub fn finish_foreign_key_checks(&mut self) -> Step<()> {
        while !self.fk_pending.is_empty() {
            let pending = std::mem::take(&mut self.fk_pending);
            for check in pending {
                if self.is_deferred(&check) {
                    self.fk_deferred.push(check);
                } else {
                    self.run_check(&check)?;
                }
            }
        }
        Ok(())
    }

    fn is_deferred(&self, check: &PendingCheck) -> bool {
        check.deferred_under(&self.constraint_modes)
    }

    /// Run one check (see [`PendingCheck`]).
    pub fn run_check(&mut self, check: &PendingCheck) -> Step<()> {
        match check {
            PendingCheck::Referencing { table, key, fk } => {
                let def = table.def();
                let Some(fk) = def.foreign_keys.iter().find(|f| f.name == *fk) else {
                    return Ok(());
                };
                // The row as this transaction has it now; none (deleted, or its write taken
                // back by ROLLBACK TO SAVEPOINT) needs no check.
                let values: Vec<Value> = match self.txn.writes.get(table.id, key)? {
                    Some(Some(row)) => fk.columns.iter().map(|&c| row[c].clone()).collect(),
                    Some(None) | None => return Ok(()),
                };
                match passes_without_reference(fk, &values) {
                    Some(true) => return Ok(()),
                    Some(false) => {}
                    None => return Err(mixed_nulls(&def, fk).into()),
                }
                let Some(parent) = self.engine.txn.catalog.table_by_id(fk.referenced) else {
                    return Err(
                        Error::internal("a foreign key references a table that is gone").into(),
                    );
                };
                let parent_def = parent.def();
                // A value the referenced column cannot hold is not there.
                let found = match cast_to(&parent_def, &fk.referenced_columns, &values) {
                    Ok(target) => self.referenced_row(&parent, &parent_def, fk, &target, true)?,
                    Err(_) => false,
                };
                if !found {
                    return Err(not_present(&def, &parent_def, fk, &values).into());
                }
                Ok(())
            }
            PendingCheck::Referenced { child, fk, values } => {
                let child_def = child.def();
                let Some(fk) = child_def.foreign_keys.iter().find(|f| f.name == *fk) else {
                    return Ok(());
                };
                let Some(parent) = self.engine.txn.catalog.table_by_id(fk.referenced) else {
                    return Ok(());
                };
                let parent_def = parent.def();
                // NO ACTION: a row holding the values again (inserted, or updated back)
                // satisfies the references.
                if self.referenced_row(&parent, &parent_def, fk, values, true)? {
                    return Ok(());
                }
                if self.referencing_row(child, fk, values)? {
                    return Err(still_referenced(&child_def, &parent_def, fk, values).into());
                }
                Ok(())
            }
        }
    }

    /// Whether `parent` has a row holding `target` (values of the foreign key's
    /// referenced columns, of their types): this transaction's own, or the newest
    /// committed one, which (`lock`) stays until this transaction ends (KEY SHARE). A
    /// validation, whose closed gates keep the table's writers out, takes no lock.
    fn referenced_row(
        &mut self,
        parent: &Arc<Table>,
        parent_def: &TableDef,
        fk: &ForeignKeyDef,
        target: &[Value],
        lock: bool,
    ) -> Step<bool> {
        let wanted = encoded(target);
        let value_of = |c: usize| {
            let i = fk.referenced_columns.iter().position(|&r| r == c);
            i.map(|i| target[i].clone()).unwrap_or(Value::Null)
        };
        let mut candidates: Vec<Key> = Vec::new();
        if same_set(&parent_def.primary_key, &fk.referenced_columns) {
            let pk: Vec<Value> = parent_def
                .primary_key
                .iter()
                .map(|&c| value_of(c))
                .collect();
            candidates.push(encoded(&pk));
        } else {
            let indexes = parent.indexes();
            let Some(index) = indexes
                .iter()
                .find(|i| i.def.unique && same_set(&i.def.columns, &fk.referenced_columns))
            else {
                return Err(Error::internal("a foreign key's unique index is gone").into());
            };
            let index_values: Vec<Value> = index.def.columns.iter().map(|&c| value_of(c)).collect();
            let index_key = encoded(&index_values);
            if let Some(claimant) = self
                .txn
                .unique_claims
                .get(&super::executor::value_lock(&index.def, &index_key))
            {
                candidates.push(claimant.clone());
            }
            candidates.extend(index.newest_row_keys(&index_key)?);
        }
        for key in candidates {
            match self.txn.writes.get(parent.id, &key)? {
                Some(Some(row)) if holds(&row, &fk.referenced_columns, &wanted) => return Ok(true),
                Some(_) => continue,
                None => {}
            }
            if lock {
                self.txn.note_read(
                    parent.id,
                    (Bound::Included(key.clone()), Bound::Included(key.clone())),
                )?;
                self.acquire_lock(parent.id, &key, Want::KeyShare)?;
            }
            let Some(version) = self.latest(parent, &key)? else {
                continue;
            };
            if !version
                .row
                .as_ref()
                .is_some_and(|r| holds(r, &fk.referenced_columns, &wanted))
            {
                continue;
            }
            if lock && version.lsn > self.snapshot && self.txn.isolation.snapshot_per_transaction()
            {
                // Changed since this transaction's snapshot: if the snapshot had the row,
                // this is a concurrent update; if not, the row is not there for it.
                if parent.get(&key, self.snapshot)?.is_some() {
                    return Err(super::executor::serialization_failure().into());
                }
                continue;
            }
            return Ok(true);
        }
        Ok(false)
    }

    /// Whether a row of `child` references `values` (of the referenced columns) through
    /// `fk`: this transaction's own rows, or the newest committed ones.
    fn referencing_row(
        &mut self,
        child: &Arc<Table>,
        fk: &ForeignKeyDef,
        values: &[Value],
    ) -> Step<bool> {
        let found = self.referencing_rows(child, fk, values, true)?;
        let Some((key, _, lsn)) = found.into_iter().next() else {
            return Ok(false);
        };
        if let Some(lsn) = lsn.filter(|&l| l > self.snapshot) {
            if self.txn.isolation.snapshot_per_transaction()
                && child.get(&key, self.snapshot)?.is_none()
            {
                return Err(super::executor::serialization_failure().into());
            }
            self.slot.saw_commit(lsn);
        }
        Ok(true)
    }

    /// The rows of `child` that reference `values` through `fk` (at most one with
    /// `first_only`): key, row and, for a committed one, its version's LSN.
    fn referencing_rows(
        &mut self,
        child: &Arc<Table>,
        fk: &ForeignKeyDef,
        values: &[Value],
        first_only: bool,
    ) -> Result<Vec<(Key, Row, Option<Lsn>)>> {
        let child_def = child.def();
        // Values the referencing columns cannot hold are referenced by no row.
        let Ok(target) = cast_to(&child_def, &fk.columns, values) else {
            return Ok(Vec::new());
        };
        let wanted = encoded(&target);
        let own = self.txn.writes.table(child.id);
        // Keys this transaction wrote are its own rows' (read below), not committed ones.
        let mine = |key: &[u8]| -> Result<bool> {
            match own {
                Some(own) => Ok(own.get(key)?.is_some()),
                None => Ok(false),
            }
        };
        let mut committed: Vec<Key> = Vec::new();
        let indexes = child.indexes();
        let index = indexes
            .iter()
            .find(|i| i.def.columns.starts_with(&fk.columns));
        if let Some(index) = index {
            let mut after: Option<Key> = None;
            loop {
                let (keys, last) = index.row_keys(
                    (Bound::Included(&wanted), Bound::Included(&wanted)),
                    Lsn(u64::MAX),
                    after.as_deref(),
                )?;
                for key in keys {
                    if !mine(&key)? {
                        committed.push(key);
                    }
                }
                if first_only && !committed.is_empty() {
                    break;
                }
                match last {
                    Some(l) => after = Some(l),
                    None => break,
                }
            }
        } else {
            let mut failed = None;
            child.scan(
                (Bound::Unbounded, Bound::Unbounded),
                Lsn(u64::MAX),
                false,
                |key, row| {
                    if holds(row, &fk.columns, &wanted) {
                        match mine(key) {
                            Ok(false) => committed.push(key.to_vec()),
                            Ok(true) => {}
                            Err(e) => {
                                failed = Some(e);
                                return false;
                            }
                        }
                    }
                    !first_only || committed.is_empty()
                },
            )?;
            if let Some(e) = failed {
                return Err(e);
            }
        }
        let mut out = Vec::new();
        let stopped_early = first_only && !committed.is_empty();
        for key in committed {
            let Some(version) = child.latest(&key)? else {
                continue;
            };
            if let Some(row) = version.row.filter(|r| holds(r, &fk.columns, &wanted)) {
                out.push((key, row, Some(version.lsn)));
                if first_only {
                    return Ok(out);
                }
            }
        }
        if stopped_early {
            // The row found first changed since it was read: look through them all.
            return self.referencing_rows(child, fk, values, false);
        }
        if let Some(own) = own {
            let mut mine = own.own_rows((Bound::Unbounded, Bound::Unbounded));
            while let Some((key, row)) = mine.next_below(None)? {
                if let Some(row) = row.filter(|r| holds(r, &fk.columns, &wanted)) {
                    out.push((key, row, None));
                    if first_only {
                        return Ok(out);
                    }
                }
            }
        }
        Ok(out)
    }

    /// CASCADE, SET NULL or SET DEFAULT on the rows of `child` that reference `values`
    /// through `fk`: delete them (CASCADE of a delete), or set their key columns to
    /// `new_values` (CASCADE of an update), NULL or their defaults.
    fn referential_action(
        &mut self,
        child: &Arc<Table>,
        fk: &ForeignKeyDef,
        values: &[Value],
        action: FkAction,
        new_values: Option<Vec<Value>>,
    ) -> Step<()> {
        if self.fk_depth >= MAX_CASCADE_DEPTH {
            return Err(Error::new(
                SqlState::STATEMENT_TOO_COMPLEX,
                "stack depth limit exceeded",
            )
            .with_hint(format!(
                "Referential actions cascade through at most {MAX_CASCADE_DEPTH} levels."
            ))
            .into());
        }
        // Its rows are read and rewritten: increments this transaction deferred to them
        // become ordinary writes first.
        self.materialize(Some(&[child.id]))?;
        let child_def = child.def();
        let deletes = action == FkAction::Cascade && new_values.is_none();
        if !deletes && fk.columns.iter().any(|c| child_def.primary_key.contains(c)) {
            return Err(Error::unsupported(
                "ON UPDATE CASCADE, SET NULL and SET DEFAULT of primary key columns are not supported yet",
            )
            .into());
        }
        let target = encoded(&cast_to(&child_def, &fk.columns, values)?);
        let rules = if deletes {
            None
        } else {
            Some(self.row_rules(child, &child_def)?)
        };
        let rows = self.referencing_rows(child, fk, values, false)?;
        self.fk_depth += 1;
        let result = (|| -> Step<()> {
            for (key, _, _) in rows {
                let current = match self.txn.writes.get(child.id, &key)? {
                    Some(Some(row)) => row,
                    Some(None) => continue,
                    None => {
                        let want = if deletes {
                            Want::Write
                        } else {
                            Want::NoKeyWrite
                        };
                        self.lock_key(child, &key, want)?;
                        match self.latest(child, &key)?.and_then(|v| v.row) {
                            Some(row) => row,
                            None => continue,
                        }
                    }
                };
                if !holds(&current, &fk.columns, &target) {
                    continue;
                }
                if deletes {
                    self.txn.put(child, key, None)?;
                    self.on_referenced_change(child, &child_def, &current, None)?;
                    continue;
                }
                let mut new: Vec<Value> = current.to_vec();
                for (k, &c) in fk.columns.iter().enumerate() {
                    new[c] = match (&new_values, action) {
                        (Some(v), _) => types::cast(v[k].clone(), &child_def.columns[c].data_type)?,
                        (None, FkAction::SetDefault) => {
                            match rules.as_ref().and_then(|r| r.defaults[c].as_ref()) {
                                Some(d) => {
                                    let v = self.eval(d, &[])?;
                                    types::cast(v, &child_def.columns[c].data_type)?
                                }
                                None => Value::Null,
                            }
                        }
                        _ => Value::Null,
                    };
                }
                let new = check_row(&child_def, new)?;
                if let Some(rules) = &rules {
                    self.check_constraints(&child_def, &rules.checks, &new)?;
                }
                self.check_row_indexes(child, &key, &new, Some(&current))?;
                self.queue_referencing_checks(child, &child_def, &key, &new, Some(&current));
                self.txn.put(child, key, Some(new.clone().into()))?;
                self.on_referenced_change(child, &child_def, &current, Some(&new))?;
            }
            if action == FkAction::SetDefault && self.referencing_row(child, fk, values)? {
                // The defaults are the values that went away: the rows set to them still
                // reference them (and were not changed, so no check of theirs ran).
                let parent_def = self
                    .engine
                    .txn
                    .catalog
                    .table_by_id(fk.referenced)
                    .map(|p| p.def())
                    .unwrap_or_else(|| child_def.clone());
                return Err(still_referenced(&child_def, &parent_def, fk, values).into());
            }
            Ok(())
        })();
        self.fk_depth -= 1;
        result
    }

    /// A referencing table's compiled CHECK constraints and defaults, once per
    /// statement.
    fn row_rules(&self, table: &Arc<Table>, def: &TableDef) -> Result<Rc<RowRules>> {
        if let Some(r) = self.fk_rules.borrow().get(&table.id) {
            return Ok(r.clone());
        }
        let rules = Rc::new(super::planner::row_rules(self.engine, table, def)?);
        self.fk_rules.borrow_mut().insert(table.id, rules.clone());
        Ok(rules)
    }

    /// Whether the table `fk` references has a row holding `values` (of the referencing
    /// columns), with the referenced table's writers kept out: a new column's value in
    /// the rows there (ALTER TABLE ... ADD COLUMN ... DEFAULT ... REFERENCES).
    pub fn referenced_value_exists(&mut self, fk: &ForeignKeyDef, values: &[Value]) -> Step<bool> {
        let Some(parent) = self.engine.txn.catalog.table_by_id(fk.referenced) else {
            return Err(Error::internal("a referenced table went away").into());
        };
        let parent_def = parent.def();
        let Ok(target) = cast_to(&parent_def, &fk.referenced_columns, values) else {
            return Ok(false);
        };
        self.referenced_row(&parent, &parent_def, fk, &target, false)
    }

    /// Every row of `table` (committed, or this transaction's) must find the row its
    /// new foreign key `fk` references: ALTER TABLE ... ADD FOREIGN KEY, with the
    /// writers of both tables kept out.
    pub fn validate_foreign_key(&mut self, table: &Arc<Table>, fk: &ForeignKeyDef) -> Step<()> {
        let def = table.def();
        let Some(parent) = self.engine.txn.catalog.table_by_id(fk.referenced) else {
            return Err(Error::internal("a referenced table went away").into());
        };
        // In batches, so that a large table's values are never all in memory. The
        // referenced table's writers are kept out meanwhile, so a value found once is
        // there for every row that holds it: up to VALIDATED_VALUES_KEPT of them are
        // not looked up again (pgbench's accounts hold ten branch numbers).
        let mut found_values: rustc_hash::FxHashSet<Vec<Value>> = Default::default();
        let mut after: Option<Key> = None;
        loop {
            let (rows, last) = self.newest_rows(table, after.as_deref(), SETTLE_PENDING_AT)?;
            for row in rows {
                let values: Vec<Value> = fk.columns.iter().map(|&c| row[c].clone()).collect();
                match passes_without_reference(fk, &values) {
                    Some(true) => continue,
                    Some(false) => {}
                    None => return Err(mixed_nulls(&def, fk).into()),
                }
                if found_values.contains(&values) {
                    continue;
                }
                let parent_def = parent.def();
                let found = match cast_to(&parent_def, &fk.referenced_columns, &values) {
                    Ok(target) => self.referenced_row(&parent, &parent_def, fk, &target, false)?,
                    Err(_) => false,
                };
                if !found {
                    return Err(not_present(&def, &parent_def, fk, &values).into());
                }
                if found_values.len() < VALIDATED_VALUES_KEPT {
                    found_values.insert(values);
                }
            }
            match last {
                Some(k) => after = Some(k),
                None => return Ok(()),
            }
        }
    }
}

/// The tables `table` is referenced by through foreign keys, other than those in
/// `also` (dropped or truncated in the same statement) and itself: (referencing
/// table's name, constraint's name).
pub fn referenced_from(
    catalog: &crate::storage::Catalog,
    table: TableId,
    also: &[TableId],
) -> Vec<(String, String)> {
    catalog
        .referencing(table)
        .into_iter()
        .filter(|(t, _)| t.id != table && !also.contains(&t.id))
        .map(|(t, fk)| (t.def().name.clone(), fk.name))
        .collect()
}

/// The tables that referential actions (CASCADE, SET NULL, SET DEFAULT) may write when
/// rows of `table` are deleted or their keys change, following cascades from table to
/// table: a statement that may write them passes their write gates first.
pub fn action_targets(catalog: &crate::storage::Catalog, table: TableId) -> Vec<Arc<Table>> {
    let mut out: Vec<Arc<Table>> = Vec::new();
    let mut queue = vec![table];
    let mut seen = vec![table];
    while let Some(id) = queue.pop() {
        for (child, fk) in catalog.referencing(id) {
            let acts = |a: FkAction| !matches!(a, FkAction::NoAction | FkAction::Restrict);
            if !(acts(fk.on_delete) || acts(fk.on_update)) || seen.contains(&child.id) {
                continue;
            }
            seen.push(child.id);
            queue.push(child.id);
            out.push(child);
        }
    }
    out
}
