//! The catalog: table definitions and sequences, by name.

use std::collections::HashMap;
use std::sync::atomic::{AtomicI64, AtomicU32, AtomicU64, Ordering};
use std::sync::Arc;

use parking_lot::RwLock;

use super::{Table, TableId};
use crate::error::{Error, Result, SqlState};
use crate::types::DataType;

#[derive(Clone, Debug)]
pub struct Column {
    pub name: String,
    pub data_type: DataType,
    pub not_null: bool,
    /// The DEFAULT expression as SQL text, compiled by the SQL layer.
    pub default: Option<String>,
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
}

impl TableDef {
    pub fn column_index(&self, name: &str) -> Option<usize> {
        self.columns.iter().position(|c| c.name == name)
    }
}

/// A sequence (`serial` columns use one). Advances are not transactional, as in PostgreSQL.
pub struct Sequence {
    pub name: String,
    next: AtomicI64,
    logged: AtomicI64,
}

impl Sequence {
    pub fn nextval(&self) -> i64 {
        self.next.fetch_add(1, Ordering::Relaxed)
    }

    /// Values up to this one may have been handed out (and logged as such).
    pub fn logged_upto(&self) -> &AtomicI64 {
        &self.logged
    }

    /// Recovery: values up to `v` may have been handed out; continue after them.
    pub fn advance_past(&self, v: i64) {
        self.next.fetch_max(v + 1, Ordering::Relaxed);
        self.logged.fetch_max(v, Ordering::Relaxed);
    }
}

#[derive(Default)]
pub struct Catalog {
    tables: RwLock<HashMap<String, Arc<Table>>>,
    sequences: RwLock<HashMap<String, Arc<Sequence>>>,
    next_table_id: AtomicU32,
    /// Bumped by every DDL; plans made under an older version are re-planned.
    version: AtomicU64,
    /// Serializes check-log-apply of catalog changes.
    ddl: parking_lot::Mutex<()>,
}

impl Catalog {
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

    pub fn table(&self, name: &str) -> Option<Arc<Table>> {
        self.tables.read().get(name).cloned()
    }

    pub fn table_names(&self) -> Vec<String> {
        let mut names: Vec<String> = self.tables.read().keys().cloned().collect();
        names.sort();
        names
    }

    /// Create a table; 42P07 if the name is taken.
    pub fn create_table(&self, def: TableDef) -> Result<Arc<Table>> {
        let id = TableId(self.next_table_id.fetch_add(1, Ordering::Relaxed) + 16384);
        self.create_table_with_id(id, def)
    }

    /// The table with this id, if it exists.
    pub fn table_by_id(&self, id: TableId) -> Option<Arc<Table>> {
        self.tables.read().values().find(|t| t.id == id).cloned()
    }

    /// Create a table with a given id (recovery replays ids as they were).
    pub fn create_table_with_id(&self, id: TableId, def: TableDef) -> Result<Arc<Table>> {
        self.next_table_id
            .fetch_max(id.0.saturating_sub(16384) + 1, Ordering::Relaxed);
        let mut tables = self.tables.write();
        if tables.contains_key(&def.name) {
            return Err(Error::new(
                SqlState::DUPLICATE_TABLE,
                format!("relation \"{}\" already exists", def.name),
            ));
        }
        for seq in &def.owned_sequences {
            self.sequences.write().insert(
                seq.clone(),
                Arc::new(Sequence {
                    name: seq.clone(),
                    next: AtomicI64::new(1),
                    logged: AtomicI64::new(0),
                }),
            );
        }
        let table = Arc::new(Table::new(id, def.clone()));
        tables.insert(def.name, table.clone());
        self.bump();
        Ok(table)
    }

    /// Put back a table removed by [`Catalog::drop_table`] (used when its dropping
    /// transaction rolls back).
    pub fn restore_table(&self, table: Arc<Table>, sequences: Vec<Arc<Sequence>>) {
        let def = table.def();
        self.tables.write().insert(def.name.clone(), table);
        let mut seqs = self.sequences.write();
        for seq in sequences {
            seqs.insert(seq.name.clone(), seq);
        }
        self.bump();
    }

    /// Remove a table and the sequences it owns; returns them so a rollback can restore them.
    pub fn drop_table(&self, name: &str) -> Option<(Arc<Table>, Vec<Arc<Sequence>>)> {
        let table = self.tables.write().remove(name)?;
        let mut seqs = self.sequences.write();
        let owned = table
            .def()
            .owned_sequences
            .iter()
            .filter_map(|s| seqs.remove(s))
            .collect();
        self.bump();
        Some((table, owned))
    }

    /// Note a schema change made to a table in place (e.g. a new primary key).
    pub fn table_altered(&self) {
        self.bump();
    }

    pub fn sequence(&self, name: &str) -> Option<Arc<Sequence>> {
        self.sequences.read().get(name).cloned()
    }
}
