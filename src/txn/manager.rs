//! The transaction manager: transaction ids, snapshots, the commit path, and the registry
//! of sessions (for cancellation and for the oldest live snapshot).

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;

use parking_lot::{Mutex, RwLock};

use super::{LockTable, TxnId, VisibilityTracker, WriteSet};
use crate::storage::{Catalog, Key, TableId};
use crate::wal::Lsn;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Isolation {
    ReadCommitted,
    RepeatableRead,
}

impl Isolation {
    pub fn name(&self) -> &'static str {
        match self {
            Isolation::ReadCommitted => "read committed",
            Isolation::RepeatableRead => "repeatable read",
        }
    }
}

/// What the manager knows of a session: its cancel key and flag, and its live snapshot.
pub struct SessionSlot {
    pub pid: i32,
    pub secret: i32,
    /// Raised by a CancelRequest; the running statement checks it and fails with 57014.
    pub cancel: AtomicBool,
    /// The snapshot the session currently reads at, or 0 when it holds none.
    snapshot: AtomicU64,
    /// What the session is waiting for, as pg_stat_activity's wait_event shows it.
    pub wait_event: Mutex<Option<&'static str>>,
}

pub struct TxnManager {
    pub catalog: Catalog,
    pub locks: LockTable,
    pub visibility: VisibilityTracker,
    /// The last LSN handed out; held while a commit takes its place in the order.
    last_lsn: Mutex<Lsn>,
    next_txn_id: AtomicU64,
    sessions: RwLock<HashMap<i32, Arc<SessionSlot>>>,
    next_pid: AtomicU64,
}

impl Default for TxnManager {
    fn default() -> Self {
        TxnManager {
            catalog: Catalog::default(),
            locks: LockTable::default(),
            visibility: VisibilityTracker::default(),
            last_lsn: Mutex::new(Lsn::ZERO),
            next_txn_id: AtomicU64::new(1),
            sessions: RwLock::new(HashMap::new()),
            next_pid: AtomicU64::new(1000),
        }
    }
}

impl TxnManager {
    pub fn register_session(&self) -> Arc<SessionSlot> {
        let pid = (self.next_pid.fetch_add(1, Ordering::Relaxed) % i32::MAX as u64) as i32;
        let slot = Arc::new(SessionSlot {
            pid,
            secret: rand::random::<i32>(),
            cancel: AtomicBool::new(false),
            snapshot: AtomicU64::new(0),
            wait_event: Mutex::new(None),
        });
        self.sessions.write().insert(pid, slot.clone());
        slot
    }

    pub fn unregister_session(&self, pid: i32) {
        self.sessions.write().remove(&pid);
    }

    /// Raise the cancel flag of the session with this key. Returns whether one matched.
    pub fn cancel(&self, pid: i32, secret: i32) -> bool {
        match self.sessions.read().get(&pid) {
            Some(slot) if slot.secret == secret => {
                slot.cancel.store(true, Ordering::Release);
                true
            }
            _ => false,
        }
    }

    pub fn session_count(&self) -> usize {
        self.sessions.read().len()
    }

    pub fn begin(&self) -> TxnId {
        TxnId(self.next_txn_id.fetch_add(1, Ordering::Relaxed))
    }

    /// Take a snapshot for `slot` and publish it, so that versions it needs are not pruned.
    pub fn snapshot(&self, slot: &SessionSlot) -> Lsn {
        loop {
            let lsn = self.visibility.visible_lsn();
            slot.snapshot.store(lsn.0.max(1), Ordering::SeqCst);
            if self.visibility.visible_lsn() == lsn {
                return lsn;
            }
        }
    }

    /// The session no longer reads at any snapshot.
    pub fn release_snapshot(&self, slot: &SessionSlot) {
        slot.snapshot.store(0, Ordering::Release);
    }

    /// The oldest snapshot any session may still read at.
    fn horizon(&self) -> Lsn {
        let mut horizon = self.visibility.visible_lsn().0;
        for slot in self.sessions.read().values() {
            let s = slot.snapshot.load(Ordering::SeqCst);
            if s != 0 && s - 1 < horizon {
                // Snapshots are published as max(lsn, 1); be conservative by one.
                horizon = s - 1;
            }
        }
        Lsn(horizon)
    }

    /// Commit: take the next place in the commit order, install the writes, wait until the
    /// commit is visible, then release the locks. Returns the commit's LSN (None if it
    /// wrote nothing).
    pub fn commit(&self, txn: TxnId, writes: WriteSet, locks: &[(TableId, Key)]) -> Option<Lsn> {
        if writes.is_empty() {
            self.locks.release_all(txn, locks);
            return None;
        }
        let lsn = {
            let mut last = self.last_lsn.lock();
            *last = Lsn(last.0 + 1);
            self.visibility.register(*last);
            *last
        };
        let horizon = self.horizon();
        for writes in writes.tables.values() {
            writes
                .table
                .install(lsn, writes.rows.iter(), writes.truncated, horizon);
        }
        self.visibility.installed(lsn);
        self.visibility.wait_visible(lsn);
        self.locks.release_all(txn, locks);
        Some(lsn)
    }

    /// Abort: drop the writes and release the locks.
    pub fn rollback(&self, txn: TxnId, locks: &[(TableId, Key)]) {
        self.locks.release_all(txn, locks);
    }

    /// Take a place in the commit order for a change made outside the write-set path (DDL,
    /// bulk re-keying), so that it is ordered with commits. `apply` runs with the LSN.
    pub fn commit_direct(&self, apply: impl FnOnce(Lsn)) -> Lsn {
        let lsn = {
            let mut last = self.last_lsn.lock();
            *last = Lsn(last.0 + 1);
            self.visibility.register(*last);
            *last
        };
        apply(lsn);
        self.visibility.installed(lsn);
        self.visibility.wait_visible(lsn);
        lsn
    }
}
