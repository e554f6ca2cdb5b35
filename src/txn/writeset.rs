//! A transaction's private, uncommitted writes: per table, the after-image of every key it
//! wrote (`None` = deleted), the increments it deferred to its commit (see
//! `Want::Increment`), whether it truncated the table, and the rows a COPY
//! loaded straight into pages (a bulk load, for a table it created or truncated).
//!
//! Deferred increments never reach the commit record as such: before the commit, the
//! session applies them to each row's latest version and they become after-images.

use std::collections::BTreeMap;
use std::sync::Arc;

use rustc_hash::FxHashMap;

use crate::storage::write_gate::Writer;
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
}

impl WriteSet {
    pub fn is_empty(&self) -> bool {
        self.tables.is_empty()
    }

    pub fn table(&self, id: TableId) -> Option<&TableWrites> {
        self.tables.get(&id)
    }

    pub fn table_mut(&mut self, table: &Arc<Table>) -> &mut TableWrites {
        self.tables.entry(table.id).or_insert_with(|| TableWrites {
            table: table.clone(),
            truncated: false,
            rows: Default::default(),
            increments: Default::default(),
            bulk: None,
        })
    }

    /// Our own version of a key, if we wrote it: `Some(None)` means we deleted it.
    pub fn get(&self, id: TableId, key: &[u8]) -> Option<Option<Row>> {
        self.tables.get(&id)?.rows.get(key).cloned()
    }

    pub fn put(&mut self, table: &Arc<Table>, key: Key, row: Option<Row>) {
        self.table_mut(table).rows.insert(key, row);
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
        self.writers.iter().any(|w| w.table().id == table)
    }

    pub fn has_increments(&self) -> bool {
        self.tables.values().any(|t| !t.increments.is_empty())
    }
}
