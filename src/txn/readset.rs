//! A SERIALIZABLE transaction's read set, and its validation at commit.
//!
//! SERIALIZABLE is REPEATABLE READ (one snapshot for the transaction, 40001 on a write
//! conflict) plus one check: a transaction that writes commits only if nothing it read
//! has changed since its snapshot. Every key range a statement scanned (a point lookup is
//! a range of one key) is recorded; at commit each range is scanned again for a version
//! committed after the snapshot, a row inserted, changed or deleted since. If one is
//! found the commit fails with 40001 and the transaction rolls back.
//!
//! Why this is serializable: the check and the commit's install happen under one lock
//! for all serializable commits (`TxnManager::serializable_commit`), so each writing
//! transaction behaves as if it ran alone at its commit: it read the state just before
//! it, and wrote on top. Writing transactions thus run in commit order, one after the
//! other. A read-only transaction needs no check: its snapshot holds a prefix of that
//! order, a state the serial history went through. Predicates are covered because a
//! range is checked whole, including keys that did not exist when it was read (phantoms).
//!
//! It aborts more than PostgreSQL's SSI, which fails a transaction only when a cycle of
//! dependencies may form: here any change to what a writer read fails it. It never
//! passes an anomaly.

use std::ops::Bound;
use std::sync::Arc;

use parking_lot::Mutex;

use crate::error::{Error, Result, SqlState};
use crate::storage::{Key, Table};
use crate::wal::Lsn;

/// Ranges kept before they are merged into whole tables.
const MAX_RANGES: usize = 4096;

type Range = (Bound<Key>, Bound<Key>);

/// The ranges read (behind a lock only so that readers, which hold the transaction
/// shared, can record; one session uses it).
#[derive(Default)]
pub struct ReadSet {
    ranges: Mutex<Vec<(Arc<Table>, Range)>>,
}

impl ReadSet {
    /// A statement read the keys of `table` in `range` at the transaction's snapshot.
    pub fn record(&self, table: &Arc<Table>, range: Range) {
        let whole = (Bound::Unbounded, Bound::Unbounded);
        let mut ranges = self.ranges.lock();
        if ranges
            .iter()
            .any(|(t, r)| t.id == table.id && (*r == range || *r == whole))
        {
            return;
        }
        ranges.push((table.clone(), range));
        if ranges.len() > MAX_RANGES {
            // Bounded: the ranges of each table become the whole table.
            let mut tables: Vec<Arc<Table>> = Vec::new();
            for (t, _) in ranges.drain(..) {
                if !tables.iter().any(|s| s.id == t.id) {
                    tables.push(t);
                }
            }
            *ranges = tables.into_iter().map(|t| (t, whole.clone())).collect();
        }
    }

    /// Before a serializable commit, under `TxnManager::serializable_commit`: fail with
    /// 40001 if a version committed after `snapshot` lies in a range that was read.
    pub fn validate(&self, snapshot: Lsn) -> Result<()> {
        for (table, (lo, hi)) in self.ranges.lock().iter() {
            let range = (as_ref(lo), as_ref(hi));
            // A table dropped since was changed since.
            if table.changed_since(range, snapshot).unwrap_or(true) {
                return Err(Error::new(
                    SqlState::SERIALIZATION_FAILURE,
                    "could not serialize access due to read/write dependencies among transactions",
                )
                .with_detail(
                    "Reason code: Canceled on identification as a pivot, during commit attempt.",
                )
                .with_hint("The transaction might succeed if retried."));
            }
        }
        Ok(())
    }
}

fn as_ref(b: &Bound<Key>) -> Bound<&[u8]> {
    match b {
        Bound::Included(k) => Bound::Included(k.as_slice()),
        Bound::Excluded(k) => Bound::Excluded(k.as_slice()),
        Bound::Unbounded => Bound::Unbounded,
    }
}
