//! One table's committed rows: an ordered map from encoded key to version chain.

use std::collections::BTreeMap;
use std::ops::Bound;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use parking_lot::RwLock;

use super::TableDef;
use crate::types::Value;
use crate::wal::Lsn;

/// Identifies a table for its whole life; never reused while the server runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct TableId(pub u32);

/// An encoded primary key (or hidden row id): memcomparable bytes.
pub type Key = Vec<u8>;

/// A row's column values, in table column order. Shared, never mutated.
pub type Row = Arc<[Value]>;

/// One committed version of a row: `None` is a deletion (a tombstone).
#[derive(Clone, Debug)]
pub struct Version {
    pub lsn: Lsn,
    pub row: Option<Row>,
}

/// Newest first. Almost always one element.
type Chain = Vec<Version>;

pub struct Table {
    pub id: TableId,
    def: RwLock<Arc<TableDef>>,
    rows: RwLock<BTreeMap<Key, Chain>>,
    /// The next hidden row id, for tables without a primary key.
    next_row_id: AtomicU64,
}

impl Table {
    pub fn new(id: TableId, def: TableDef) -> Table {
        Table {
            id,
            def: RwLock::new(Arc::new(def)),
            rows: RwLock::new(BTreeMap::new()),
            next_row_id: AtomicU64::new(1),
        }
    }

    pub fn def(&self) -> Arc<TableDef> {
        self.def.read().clone()
    }

    pub fn set_def(&self, def: TableDef) {
        *self.def.write() = Arc::new(def);
    }

    /// A fresh hidden row id for a table without a primary key.
    pub fn next_row_id(&self) -> u64 {
        self.next_row_id.fetch_add(1, Ordering::Relaxed)
    }

    /// After recovery: continue hidden row ids after the largest one present.
    pub fn restore_next_row_id(&self) {
        let rows = self.rows.read();
        if let Some(last) = rows.keys().next_back() {
            if let Ok(bytes) = <[u8; 8]>::try_from(last.as_slice()) {
                self.next_row_id
                    .fetch_max(u64::from_be_bytes(bytes) + 1, Ordering::Relaxed);
            }
        }
    }

    /// The row visible at `snapshot` under `key`, if any.
    pub fn get(&self, key: &[u8], snapshot: Lsn) -> Option<Row> {
        let rows = self.rows.read();
        visible(rows.get(key)?, snapshot)
    }

    /// The newest committed version under `key` (deleted or not), whatever its LSN.
    pub fn latest(&self, key: &[u8]) -> Option<Version> {
        self.rows
            .read()
            .get(key)
            .and_then(|chain| chain.first().cloned())
    }

    /// Visit rows visible at `snapshot` with keys in `range`, in key order (reversed when
    /// `reverse`), until `visit` returns false.
    pub fn scan(
        &self,
        range: (Bound<&[u8]>, Bound<&[u8]>),
        snapshot: Lsn,
        reverse: bool,
        mut visit: impl FnMut(&[u8], &Row) -> bool,
    ) {
        let rows = self.rows.read();
        let iter = rows.range::<[u8], _>(range);
        let mut step = |(key, chain): (&Key, &Chain)| match visible(chain, snapshot) {
            Some(row) => visit(key, &row),
            None => true,
        };
        if reverse {
            for entry in iter.rev() {
                if !step(entry) {
                    break;
                }
            }
        } else {
            for entry in iter {
                if !step(entry) {
                    break;
                }
            }
        }
    }

    /// Install committed writes at `lsn`. `horizon` is the oldest live snapshot: versions
    /// hidden from every snapshot by a newer visible one are pruned on the way.
    pub fn install<'a>(
        &self,
        lsn: Lsn,
        writes: impl IntoIterator<Item = (&'a Key, &'a Option<Row>)>,
        truncate: bool,
        horizon: Lsn,
    ) {
        let mut rows = self.rows.write();
        if truncate {
            // Truncation takes no row locks, so a later commit may already have installed a
            // version of some key: put the tombstone in its LSN place, keeping chains sorted.
            for chain in rows.values_mut() {
                let pos = chain
                    .iter()
                    .position(|v| v.lsn < lsn)
                    .unwrap_or(chain.len());
                let live_below = chain.get(pos).is_some_and(|v| v.row.is_some());
                if live_below {
                    chain.insert(pos, Version { lsn, row: None });
                }
            }
            rows.retain(|_, chain| prune(chain, horizon));
        }
        for (key, row) in writes {
            let version = Version {
                lsn,
                row: row.clone(),
            };
            match rows.get_mut(key) {
                Some(chain) => {
                    assert!(
                        chain[0].lsn <= lsn,
                        "versions of a key must be installed in LSN order"
                    );
                    chain.insert(0, version);
                    if !prune(chain, horizon) {
                        rows.remove(key);
                    }
                }
                None if row.is_some() => {
                    rows.insert(key.clone(), vec![version]);
                }
                None => {}
            }
        }
    }

    /// Replace all rows with `rows` (committed at `lsn`), used by ALTER TABLE ... ADD
    /// PRIMARY KEY to re-key the table. Older versions are dropped.
    pub fn replace_all(&self, lsn: Lsn, new_rows: BTreeMap<Key, Row>) {
        let map = new_rows
            .into_iter()
            .map(|(k, row)| {
                (
                    k,
                    vec![Version {
                        lsn,
                        row: Some(row),
                    }],
                )
            })
            .collect();
        *self.rows.write() = map;
    }

    /// Number of keys with any version (for statistics and tests).
    pub fn key_count(&self) -> usize {
        self.rows.read().len()
    }
}

fn visible(chain: &Chain, snapshot: Lsn) -> Option<Row> {
    chain
        .iter()
        .find(|v| v.lsn <= snapshot)
        .and_then(|v| v.row.clone())
}

/// Drop versions that no snapshot at or after `horizon` can see. Returns false when the
/// whole chain can go (its newest version is a deletion visible to everyone).
fn prune(chain: &mut Chain, horizon: Lsn) -> bool {
    if let Some(pos) = chain.iter().position(|v| v.lsn <= horizon) {
        chain.truncate(pos + 1);
        if pos == 0 && chain[0].row.is_none() {
            return false;
        }
    }
    true
}
