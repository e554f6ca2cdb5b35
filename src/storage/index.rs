//! Secondary indexes: per table, trees of entries that lead from column values to row keys.
//!
//! An index's entries are kept as the rows of a table of their own ([`Table`]): each
//! entry's key is the encoded index columns followed by the row's key (so entries are
//! unique, and the entries of equal values are adjacent), and its image is the row key.
//! Keeping them in a `Table` gives the entries the versioning the rows have: an entry
//! removed at LSN `r` (its row deleted, or its indexed columns changed) leaves the tree
//! and stays among the older versions for snapshots below `r`; an entry added at `a` is
//! not seen below `a`. So a scan of an index at snapshot `s` finds exactly the rows
//! visible at `s` whose indexed columns are in its range, and the tree on disk holds
//! exactly the entries of the newest versions, which checkpoints and recovery need.
//!
//! Invariants:
//! - Entries change in the same install as their rows ([`Table::install`]), at the same
//!   LSN, under the same row locks: the entries of a row key change in LSN order.
//! - An index is complete for snapshots at or above its `valid_from`: the LSN it was
//!   built at (CREATE INDEX, or a rebuild after a bulk load or a new primary key). A
//!   snapshot below it reads the table instead ([`Index::usable_at`]).
//! - Nothing here decides whether a row may be written: a unique index's uniqueness is
//!   checked by the writer, under a lock on the value, before the commit is logged.

use std::ops::Bound;
use std::sync::atomic::{AtomicU64, Ordering};

use super::table::{Key, Table, TableId};
use super::TableDef;
use crate::error::Result;
use crate::types::{self, DataType, Value};
use crate::wal::Lsn;

/// An index's definition, as the catalog stores it (`TableDef::indexes`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct IndexDef {
    pub name: String,
    /// Column positions in the table, in index order.
    pub columns: Vec<usize>,
    /// No two rows may have equal, non-null values in the columns.
    pub unique: bool,
    /// Made by a UNIQUE constraint (`pg_constraint` shows it) rather than CREATE INDEX.
    pub constraint: bool,
    /// Its number among the table's indexes, never that of another index the table
    /// has (the catalogs' OIDs are made from it).
    pub number: u32,
    /// Per column, the operator class named at CREATE INDEX where it is not the
    /// default (`varchar_pattern_ops`); empty when none is named. The order is the same.
    pub opclasses: Vec<Option<String>>,
}

impl IndexDef {
    /// How many leading columns of a row decoding must reach to key it.
    pub fn leading_columns(&self) -> usize {
        self.columns.iter().max().map_or(0, |&c| c + 1)
    }

    /// The encoded index columns of `row` (at least its leading columns).
    pub fn key_of(&self, row: &[Value]) -> Key {
        let values: Vec<Value> = self.columns.iter().map(|&c| row[c].clone()).collect();
        let mut key = Vec::new();
        types::encode_key(&values, &mut key);
        key
    }

    /// The operator class named for the index's `i`th column, if one was.
    pub fn opclass(&self, i: usize) -> Option<&str> {
        self.opclasses.get(i).and_then(|o| o.as_deref())
    }

    /// Whether `row`'s indexed values hold a NULL (a unique index lets those repeat).
    pub fn has_null(&self, row: &[Value]) -> bool {
        self.columns.iter().any(|&c| row[c].is_null())
    }
}

/// Entries read from an index in one batch ([`Index::row_keys`]).
pub const INDEX_BATCH_ENTRIES: usize = 256;

impl std::fmt::Debug for Index {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Index({})", self.def.name)
    }
}

/// One secondary index of a table.
pub struct Index {
    pub def: IndexDef,
    /// The entries: key = index columns ++ row key, image = row key.
    entries: Table,
    /// Snapshots at or above this LSN find every row through the index.
    valid_from: AtomicU64,
}

impl Index {
    /// An index over the tree `entries`, complete for snapshots from `valid_from`.
    pub(super) fn new(def: IndexDef, entries: Table, valid_from: Lsn) -> Index {
        Index {
            def,
            entries,
            valid_from: AtomicU64::new(valid_from.0),
        }
    }

    /// The tree of an index's entries, its table id unused (indexes are not tables).
    pub(super) fn entries_table(
        name: &str,
        pool: std::sync::Arc<super::pool::BufferPool>,
        root: Option<super::page::PageId>,
    ) -> Result<Table> {
        let def = TableDef::of_columns(name, std::iter::empty());
        match root {
            Some(root) => Ok(Table::open(TableId(u32::MAX), def, pool, root, 1)),
            None => Table::create(TableId(u32::MAX), def, pool),
        }
    }

    pub(super) fn entries(&self) -> &Table {
        &self.entries
    }

    /// The root page of the entries' tree (for the checkpoint's catalog image).
    pub fn root(&self) -> super::page::PageId {
        self.entries.root()
    }

    /// Verify the entries' tree (tests and recovery checks); returns the number stored.
    pub fn check(&self) -> Result<usize> {
        self.entries.check()
    }

    /// Whether a reader at `snapshot` may find rows through this index.
    pub fn usable_at(&self, snapshot: Lsn) -> bool {
        snapshot.0 >= self.valid_from.load(Ordering::Acquire)
    }

    /// How many leading columns of a row decoding must reach to key it.
    pub fn leading_columns(&self) -> usize {
        self.def.leading_columns()
    }

    /// The encoded index columns of `row`.
    pub fn key_of(&self, row: &[Value]) -> Key {
        self.def.key_of(row)
    }

    /// The entry key of a row with index key `index_key` and row key `row_key`.
    pub fn entry_key(index_key: &[u8], row_key: &[u8]) -> Key {
        let mut key = Vec::with_capacity(index_key.len() + row_key.len());
        key.extend_from_slice(index_key);
        key.extend_from_slice(row_key);
        key
    }

    /// The encoded index key of a stored row image.
    pub(super) fn key_of_image(
        &self,
        image: &[u8],
        column_types: &[DataType],
        missing: &[Value],
    ) -> Result<Key> {
        let row =
            types::decode_leading_columns(image, column_types, self.leading_columns(), missing)?;
        Ok(self.def.key_of(&row))
    }

    /// Row keys of the entries visible at `snapshot` whose index key is in `range`
    /// (bounds on encoded index keys, or on a prefix of them: the leading columns), in
    /// entry order, after the entry `after`: at most [`INDEX_BATCH_ENTRIES`], with the
    /// entry key of the last. Batches keep no latch between them.
    pub fn row_keys(
        &self,
        range: (Bound<&[u8]>, Bound<&[u8]>),
        snapshot: Lsn,
        after: Option<&[u8]>,
    ) -> Result<(Vec<Key>, Option<Key>)> {
        let low = match (after, range.0) {
            (Some(a), _) => Bound::Excluded(a.to_vec()),
            (None, Bound::Included(k)) => Bound::Included(k.to_vec()),
            (None, Bound::Excluded(k)) => match prefix_successor(k) {
                Some(s) => Bound::Included(s),
                None => return Ok((Vec::new(), None)),
            },
            (None, Bound::Unbounded) => Bound::Unbounded,
        };
        let high = match range.1 {
            Bound::Included(k) => prefix_successor(k).map_or(Bound::Unbounded, Bound::Excluded),
            Bound::Excluded(k) => Bound::Excluded(k.to_vec()),
            Bound::Unbounded => Bound::Unbounded,
        };
        let empty = match (&low, &high) {
            (Bound::Included(l), Bound::Excluded(h)) | (Bound::Excluded(l), Bound::Excluded(h)) => {
                l >= h
            }
            _ => false,
        };
        if empty {
            return Ok((Vec::new(), None));
        }
        let mut keys = Vec::new();
        let mut last = None;
        self.entries.scan_images(
            (as_ref(&low), as_ref(&high)),
            snapshot,
            false,
            |entry, row_key| {
                keys.push(row_key.to_vec());
                if keys.len() >= INDEX_BATCH_ENTRIES {
                    last = Some(entry.to_vec());
                    return Ok(false);
                }
                Ok(true)
            },
        )?;
        Ok((keys, last))
    }

    /// The row keys whose newest entries have index key `index_key` (any snapshot's
    /// view aside: for a unique index's check, which reads the newest committed state).
    pub fn newest_row_keys(&self, index_key: &[u8]) -> Result<Vec<Key>> {
        let mut keys = Vec::new();
        let mut after: Option<Key> = None;
        loop {
            let (batch, last) = self.row_keys(
                (Bound::Included(index_key), Bound::Included(index_key)),
                Lsn(u64::MAX),
                after.as_deref(),
            )?;
            keys.extend(batch);
            match last {
                Some(l) => after = Some(l),
                None => return Ok(keys),
            }
        }
    }
}

fn as_ref(b: &Bound<Key>) -> Bound<&[u8]> {
    match b {
        Bound::Included(k) => Bound::Included(k),
        Bound::Excluded(k) => Bound::Excluded(k),
        Bound::Unbounded => Bound::Unbounded,
    }
}

/// The smallest key above every key that starts with `prefix`; None when there is none.
pub fn prefix_successor(prefix: &[u8]) -> Option<Key> {
    let mut s = prefix.to_vec();
    while let Some(&last) = s.last() {
        if last < 0xFF {
            *s.last_mut()? += 1;
            return Some(s);
        }
        s.pop();
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prefix_successor_carries_past_ff() {
        assert_eq!(prefix_successor(&[1, 2]), Some(vec![1, 3]));
        assert_eq!(prefix_successor(&[1, 0xFF]), Some(vec![2]));
        assert_eq!(prefix_successor(&[0xFF, 0xFF]), None);
    }
}
