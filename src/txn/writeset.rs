//! A transaction's private, uncommitted writes: per table, the after-image of every key it
//! wrote (`None` = deleted), the increments it deferred to its commit (see
//! `Want::Increment`), whether it truncated the table, and the rows a COPY
//! loaded straight into pages (a bulk load, for a table it created or truncated).
//!
//! Deferred increments never reach the commit record as such: before the commit, the
//! session applies them to each row's latest version and they become after-images.
//!
//! While a savepoint is open the write set keeps a journal: every change to a key's
//! after-image, a key's increments or a table's truncation records what it replaced, so
//! ROLLBACK TO SAVEPOINT puts back exactly the state the savepoint saw
//! ([`WriteSet::rollback_to`]). Rows a COPY loads into a bulk load's pages are not
//! journaled: a bulk load neither starts nor grows while a savepoint is open.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use rustc_hash::FxHashMap;

use crate::storage::write_gate::{ClosedGate, Writer};
use crate::storage::{BulkLoad, Key, Row, Table, TableId};
use crate::types::{ArithOp, Value};

/// One `SET column = column <op> operand` (or `operand <op> column`). In a plan the
/// operand is an expression; deferred in a write set, its value.
#[derive(Clone, Debug)]
pub struct Increment<Operand = Value> {
    pub column: usize,
    pub op: ArithOp,
    pub operand: Operand,
    pub operand_first: bool,
}

impl<Operand> Increment<Operand> {
    /// The same increment with another operand (its value, for a planned one).
    pub fn with_operand<O>(&self, operand: O) -> Increment<O> {
        Increment {
            column: self.column,
            op: self.op,
            operand,
            operand_first: self.operand_first,
        }
    }
}

pub struct TableWrites {
    pub table: Arc<Table>,
    /// The table was truncated by this transaction: committed rows are invisible to it.
    pub truncated: bool,
    pub rows: BTreeMap<Key, Option<Row>>,
    /// Keys whose committed row this transaction deleted and then inserted a new row
    /// under: another row, not a new version of the old one (`Table::end_rows`).
    pub reborn: BTreeSet<Key>,
    /// Keys held with deferred increments (never also in `rows`), in statement order.
    pub increments: BTreeMap<Key, Vec<Increment>>,
    /// Rows COPY loaded into private pages; then `rows` stays empty (other changes to
    /// the table in the same transaction are refused).
    pub bulk: Option<BulkLoad>,
}

#[derive(Default)]
pub struct WriteSet {
    pub tables: FxHashMap<TableId, TableWrites>,
    /// The write gates this transaction passed, one per table its statements write (or
    /// drop or truncate); it leaves them when the write set is dropped, after its commit
    /// is installed or when it rolls back.
    pub writers: Vec<Writer>,
    /// What each change replaced, oldest first, while a savepoint is open (see the
    /// module's docs); None otherwise.
    journal: Option<Vec<Replaced>>,
    /// The gates of the tables this transaction drops or truncates, closed until it ends
    /// (after `writers`, so a gate it was inside is left before it is closed).
    pub closed: Vec<ClosedGate>,
}

/// What one change to a write set replaced (see [`WriteSet::rollback_to`]).
enum Replaced {
    /// The table had no entry yet.
    Table(TableId),
    /// A key's after-image (None: the key had none).
    Row(TableId, Key, Option<Option<Row>>),
    /// A key's deferred increments (None: it had none).
    Increments(TableId, Key, Option<Vec<Increment>>),
    /// A truncation: the table's truncated flag and after-images before it.
    Truncation(TableId, bool, BTreeMap<Key, Option<Row>>),
    /// A key became reborn (see [`TableWrites::reborn`]).
    Reborn(TableId, Key),
}

/// A point in a write set's journal to roll back to.
#[derive(Clone, Copy, Debug)]
pub struct JournalMark(usize);

impl WriteSet {
    pub fn is_empty(&self) -> bool {
        self.tables.is_empty()
    }

    pub fn table(&self, id: TableId) -> Option<&TableWrites> {
        self.tables.get(&id)
    }

    pub fn table_mut(&mut self, table: &Arc<Table>) -> &mut TableWrites {
        if let (Some(journal), false) = (&mut self.journal, self.tables.contains_key(&table.id)) {
            journal.push(Replaced::Table(table.id));
        }
        self.tables.entry(table.id).or_insert_with(|| TableWrites {
            table: table.clone(),
            truncated: false,
            rows: Default::default(),
            reborn: Default::default(),
            increments: Default::default(),
            bulk: None,
        })
    }

    /// Start (or go on) keeping the journal, for a savepoint: returns where it stands.
    pub fn mark(&mut self) -> JournalMark {
        JournalMark(self.journal.get_or_insert_with(Vec::new).len())
    }

    /// No savepoint is open any more: stop keeping the journal.
    pub fn forget_marks(&mut self) {
        self.journal = None;
    }

    /// Whether a savepoint is open (the journal is kept).
    pub fn has_marks(&self) -> bool {
        self.journal.is_some()
    }

    /// Undo every change made since `mark`, newest first.
    pub fn rollback_to(&mut self, mark: JournalMark) {
        let Some(journal) = self.journal.as_mut() else {
            return;
        };
        let undone = journal.split_off(mark.0.min(journal.len()));
        for replaced in undone.into_iter().rev() {
            match replaced {
                Replaced::Table(id) => {
                    self.tables.remove(&id);
                }
                Replaced::Row(id, key, before) => {
                    if let Some(w) = self.tables.get_mut(&id) {
                        match before {
                            Some(row) => w.rows.insert(key, row),
                            None => w.rows.remove(&key),
                        };
                    }
                }
                Replaced::Increments(id, key, before) => {
                    if let Some(w) = self.tables.get_mut(&id) {
                        match before {
                            Some(incs) => w.increments.insert(key, incs),
                            None => w.increments.remove(&key),
                        };
                    }
                }
                Replaced::Reborn(id, key) => {
                    if let Some(w) = self.tables.get_mut(&id) {
                        w.reborn.remove(&key);
                    }
                }
                Replaced::Truncation(id, truncated, rows) => {
                    if let Some(w) = self.tables.get_mut(&id) {
                        w.truncated = truncated;
                        w.rows = rows;
                    }
                }
            }
        }
    }

    /// Take `key`'s deferred increments (to replace or materialize them).
    pub fn take_increments(&mut self, table: &Arc<Table>, key: &[u8]) -> Option<Vec<Increment>> {
        let taken = self.table_mut(table).increments.remove(key);
        if let (Some(journal), Some(incs)) = (&mut self.journal, &taken) {
            journal.push(Replaced::Increments(
                table.id,
                key.to_vec(),
                Some(incs.clone()),
            ));
        }
        taken
    }

    /// Hold `key` with deferred increments `incs` (it has none now).
    pub fn set_increments(&mut self, table: &Arc<Table>, key: Key, incs: Vec<Increment>) {
        let w = self.table_mut(table);
        debug_assert!(!w.increments.contains_key(&key));
        let before = w.increments.insert(key.clone(), incs);
        if let Some(journal) = &mut self.journal {
            journal.push(Replaced::Increments(table.id, key, before));
        }
    }

    /// TRUNCATE: committed rows are invisible to this transaction from now on, and its
    /// own after-images and bulk load are dropped.
    pub fn truncate(&mut self, table: &Arc<Table>) {
        let w = self.table_mut(table);
        let rows = std::mem::take(&mut w.rows);
        let truncated = std::mem::replace(&mut w.truncated, true);
        w.bulk = None;
        if let Some(journal) = &mut self.journal {
            journal.push(Replaced::Truncation(table.id, truncated, rows));
        }
    }

    /// Our own version of a key, if we wrote it: `Some(None)` means we deleted it.
    pub fn get(&self, id: TableId, key: &[u8]) -> Option<Option<Row>> {
        self.tables.get(&id)?.rows.get(key).cloned()
    }

    pub fn put(&mut self, table: &Arc<Table>, key: Key, row: Option<Row>) {
        let journaling = self.journal.is_some();
        let inserts = row.is_some();
        let w = self.table_mut(table);
        let (before, reborn) = match w.rows.entry(key) {
            std::collections::btree_map::Entry::Vacant(slot) => {
                let key = journaling.then(|| slot.key().clone());
                slot.insert(row);
                (key.map(|k| (k, None)), None)
            }
            std::collections::btree_map::Entry::Occupied(mut slot) => {
                let before = std::mem::replace(slot.get_mut(), row);
                // Deleted, then inserted again: another row under the same key.
                let reborn = (inserts
                    && before.is_none()
                    && !w.truncated
                    && w.reborn.insert(slot.key().clone()))
                .then(|| slot.key().clone());
                let key = journaling.then(|| (slot.key().clone(), Some(before)));
                (key, reborn)
            }
        };
        if let Some(journal) = &mut self.journal {
            if let Some(key) = reborn {
                journal.push(Replaced::Reborn(table.id, key));
            }
            if let Some((key, before)) = before {
                journal.push(Replaced::Row(table.id, key, before));
            }
        }
    }

    /// Rows written, counting rows with deferred increments.
    pub fn row_count(&self) -> usize {
        self.tables
            .values()
            .map(|t| t.rows.len() + t.increments.len())
            .sum()
    }

    /// Whether this transaction passed the write gate of `table`.
    pub fn passed_gate(&self, table: TableId) -> bool {
        self.writers.iter().any(|w| w.table().id == table) || self.closed_gate(table)
    }

    /// Whether this transaction closed the gate of `table` (DROP TABLE, TRUNCATE).
    pub fn closed_gate(&self, table: TableId) -> bool {
        self.closed.iter().any(|c| c.table().id == table)
    }

    /// Leave the gate of `table` if this transaction is inside, to close it.
    pub fn leave_gate(&mut self, table: TableId) {
        self.writers.retain(|w| w.table().id != table);
    }

    pub fn has_increments(&self) -> bool {
        self.tables.values().any(|t| !t.increments.is_empty())
    }
}
