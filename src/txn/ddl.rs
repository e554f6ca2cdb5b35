//! Catalog changes that rebuild what a table stores: a primary key
//! (`ALTER TABLE ... ADD PRIMARY KEY`) as a bulk load, and secondary indexes.
//!
//! The table's rows are read once, at an LSN that sees every committed version, and
//! loaded under their new keys into a private tree ([`BulkLoad`]); a NULL or a duplicate
//! key ends the load before anything is logged. At commit the tree's pages are written
//! and synced, and only then is the SetPrimaryKey record appended, naming the tree's
//! root and every page with its slot: replay claims those pages instead of re-keying the
//! rows. The table takes the tree in place of its rows when the record is logged.
//!
//! The caller keeps every writer out of the table from before the read to after the
//! commit (the table's write gate); nothing here checks it.

use std::ops::Bound;
use std::sync::Arc;

use super::{fatal_after_logging, records, CommitInFlight, TxnManager};
use crate::error::{Error, Result};
use crate::storage::page::MAX_KEY_BYTES;
use crate::storage::{BulkLoad, IndexDef, Key, Table, TableDef};
use crate::types::{self, Value};
use crate::wal::{Lsn, RecordKind, SyncLevel};

/// Why a table's rows cannot take a primary key.
#[derive(Debug)]
pub enum KeyConflict {
    /// A row has NULL in key column `column`.
    Null { column: usize },
    /// Two rows have the same key; `row` is the second one read (its leading columns up
    /// to the last key column).
    Duplicate { row: Vec<Value> },
    /// A row's key is longer than a tree takes (`MAX_KEY_BYTES`); `bytes` is its length.
    TooLong { bytes: usize },
}

/// The rows a rebuild of a table reads (a key added or dropped, a column's values
/// converted): the table's newest committed rows, or, in a transaction that already
/// replaced them (`WriteSet::replace_rows`, or TRUNCATE and COPY), its own.
pub enum RebuildSource<'a> {
    /// The rows visible at this LSN (the table's writers are kept out: its newest).
    Table(&'a Table, Lsn),
    /// The transaction's own rows, in place of the table's.
    Load(&'a BulkLoad),
    /// None: the transaction truncated the table.
    Empty,
}

impl RebuildSource<'_> {
    /// Visit each row (key, image) in key order until `visit` returns false.
    pub fn scan(&self, visit: &mut crate::storage::LoadedRow<'_>) -> Result<()> {
        let all = (Bound::Unbounded, Bound::Unbounded);
        match self {
            RebuildSource::Table(table, newest) => table.scan_images(all, *newest, false, visit),
            RebuildSource::Load(load) => load.scan(all, visit),
            RebuildSource::Empty => Ok(()),
        }
    }
}

/// Load the rows of `table` from `source` into a private tree under the key made of
/// `columns`. `Ok(Err(_))` when the rows cannot take that key.
pub fn load_under_key(
    txn: &TxnManager,
    table: &Table,
    columns: &[usize],
    source: &RebuildSource,
) -> Result<std::result::Result<BulkLoad, KeyConflict>> {
    let mut load = BulkLoad::new(txn.catalog.pool().clone())?;
    // Only the columns up to the last key column are decoded; the image is kept as is.
    let column_types = table.column_types();
    let missing = table.column_missing();
    let leading = columns.iter().max().map_or(0, |&c| c + 1);
    let mut conflict = None;
    source.scan(&mut |_, image| {
        let row = types::decode_leading_columns(image, &column_types, leading, &missing)?;
        if let Some(column) = columns.iter().copied().find(|&c| row[c].is_null()) {
            conflict = Some(KeyConflict::Null { column });
            return Ok(false);
        }
        let key = records::primary_key_of(columns, &row);
        if key.len() > MAX_KEY_BYTES {
            conflict = Some(KeyConflict::TooLong { bytes: key.len() });
            return Ok(false);
        }
        if load.insert(&key, image)? {
            return Ok(true);
        }
        conflict = Some(KeyConflict::Duplicate { row });
        Ok(false)
    })?;
    Ok(match conflict {
        Some(c) => Err(c),
        None => Ok(load),
    })
}

/// Load the rows of `source` into a private tree under hidden row ids 1, 2, ... in the
/// order of their key (DROP of the primary key); replay numbers them so too
/// ([`row_id_key`]). Returns the load and the number of rows.
pub fn load_under_row_ids(txn: &TxnManager, source: &RebuildSource) -> Result<(BulkLoad, u64)> {
    let mut load = BulkLoad::new(txn.catalog.pool().clone())?;
    let mut rows = 0u64;
    source.scan(&mut |_, image| {
        rows += 1;
        if !load.insert(&row_id_key(rows), image)? {
            return Err(Error::internal("a hidden row id given twice"));
        }
        Ok(true)
    })?;
    Ok((load, rows))
}

/// The key of the row with hidden row id `id` (a table without a primary key).
pub fn row_id_key(id: u64) -> Key {
    id.to_be_bytes().to_vec()
}

/// Write and sync `load`'s pages, log the SetPrimaryKey record that names them, and give
/// `table` the loaded tree and `new_def`. Returns once the record is durable. An error
/// here is from writing the pages or finding room in the log, before anything was
/// logged; a failed sync stops the server.
pub fn commit_primary_key(
    txn: &TxnManager,
    table: &Arc<Table>,
    new_def: TableDef,
    mut load: BulkLoad,
    level: SyncLevel,
) -> Result<CommitInFlight> {
    load.flush()?;
    txn.sync_bulk_pages("ALTER TABLE");
    let (root, pages) = load.record()?;
    // With wal_level = replica the record names no pages (a standby has none of them):
    // replay rebuilds the table under its new key from the rows it already has.
    let payload = if txn
        .wal_level_minimal
        .load(std::sync::atomic::Ordering::Relaxed)
    {
        records::encode_set_primary_key(table.id, &new_def, root, pages)
    } else {
        records::encode_table_def(table.id, &new_def)
    };
    let reservation = txn.reserve_log(payload.len())?;
    let flight = txn.commit_ddl(
        RecordKind::SetPrimaryKey,
        &payload,
        reservation,
        level,
        |lsn| {
            let replaced = load.commit(lsn).and_then(|tree| table.replace(lsn, tree));
            if let Err(e) = replaced {
                fatal_after_logging("replace a table's rows", &e);
            }
            table.set_def(new_def);
            txn.catalog.table_altered();
        },
    );
    Ok(flight)
}

/// Log a catalog change of `kind` (a sequence's) and apply it at its LSN. An error here
/// is from finding room in the log, before anything was logged.
pub fn commit_catalog_change(
    txn: &TxnManager,
    kind: RecordKind,
    payload: &[u8],
    level: SyncLevel,
    apply: impl FnOnce(Lsn),
) -> Result<CommitInFlight> {
    let reservation = txn.reserve_log(payload.len())?;
    Ok(txn.commit_ddl(kind, payload, reservation, level, apply))
}

/// A change of a table's secondary indexes ([`commit_indexes`]).
pub enum IndexChange {
    /// A new index, its entries built by [`Table::build_index`] (with the LSN of the
    /// newest row they were built from) while writers were kept out.
    Add(IndexDef, Box<Table>, Lsn),
    /// The index of this name goes.
    Drop(String),
    /// The indexes stay; the rest of the definition changes (a column's default, the
    /// sequences the table owns).
    Definition,
}

/// Log the SetIndexes record of `table`'s new definition `new_def` and make the change.
/// An error here is from finding room in the log, before anything was logged.
pub fn commit_indexes(
    txn: &TxnManager,
    table: &Arc<Table>,
    new_def: TableDef,
    change: IndexChange,
    level: SyncLevel,
) -> Result<CommitInFlight> {
    let payload = records::encode_table_def(table.id, &new_def);
    let reservation = match txn.reserve_log(payload.len()) {
        Ok(reservation) => reservation,
        Err(e) => {
            if let IndexChange::Add(_, entries, _) = change {
                // Not logged: the built entries' pages are freed.
                let _ = entries.destroy();
            }
            return Err(e);
        }
    };
    let flight = txn.commit_ddl(
        RecordKind::SetIndexes,
        &payload,
        reservation,
        level,
        |lsn| {
            match change {
                IndexChange::Add(def, entries, newest) => {
                    table.add_index(new_def, def, *entries, lsn.max(newest))
                }
                IndexChange::Drop(name) => {
                    if let Err(e) = table.drop_index(new_def, &name) {
                        fatal_after_logging("drop an index", &e);
                    }
                }
                IndexChange::Definition => {
                    let old = table.def().name.clone();
                    table.set_def(new_def);
                    txn.catalog.rename_table(&old);
                }
            }
            txn.catalog.table_altered();
        },
    );
    Ok(flight)
}
