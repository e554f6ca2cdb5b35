//! The row-lock table: exclusive locks on (table, key), held until the transaction's
//! commit record is appended (or it aborts).
//!
//! Waiting comes in two kinds. A task (a client connection) waits with
//! [`LockTable::lock_async`] on the key's own queue: a release wakes exactly one waiter
//! of that key, the longest waiting, so a hot row passes from holder to holder without
//! waking everyone queued behind it. A thread (tests, and statements that must wait
//! in the middle of their work) waits with [`LockTable::lock`] on the shard's condvar.
//! Both kinds record their edge in one wait-for graph, which refuses a wait that would
//! close a cycle (40P01).

use std::collections::hash_map::Entry;
use std::collections::{HashMap, HashSet};
use std::hash::{BuildHasher, Hash, Hasher};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use parking_lot::{Condvar, Mutex};
use tokio::sync::Notify;

use crate::error::{Error, Result, SqlState};
use crate::storage::{Key, TableId};

/// Identifies a transaction while it runs (not its commit order: that is its LSN).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct TxnId(pub u64);

const SHARDS: usize = 64;
/// How often a waiting transaction re-checks its cancel flag.
const CANCEL_POLL: Duration = Duration::from_millis(20);

type LockKey = (TableId, Key);

/// The tasks waiting for one key.
struct Queue {
    notify: Arc<Notify>,
    waiting: usize,
}

#[derive(Default)]
struct ShardState {
    holders: HashMap<LockKey, TxnId>,
    queues: HashMap<LockKey, Queue>,
    /// Threads blocked in [`LockTable::lock`] on this shard.
    blocked_threads: usize,
}

#[derive(Default)]
struct Shard {
    state: Mutex<ShardState>,
    /// Wakes blocked threads when a lock of this shard is released.
    released: Condvar,
}

pub struct LockTable {
    shards: Vec<Shard>,
    /// Wait-for graph: waiting transaction → the holder it waits for.
    waits_for: Mutex<HashMap<TxnId, TxnId>>,
    hasher: std::collections::hash_map::RandomState,
}

impl Default for LockTable {
    fn default() -> Self {
        LockTable {
            shards: (0..SHARDS).map(|_| Shard::default()).collect(),
            waits_for: Mutex::new(HashMap::new()),
            hasher: Default::default(),
        }
    }
}

impl ShardState {
    /// Take the lock if it is free (or already ours). Returns the other holder if not.
    fn acquire(&mut self, txn: TxnId, key: &LockKey) -> Option<TxnId> {
        match self.holders.get(key) {
            Some(&holder) => (holder != txn).then_some(holder),
            None => {
                self.holders.insert(key.clone(), txn);
                None
            }
        }
    }

    /// A task stops waiting for `key`.
    fn leave_queue(&mut self, key: &LockKey) {
        if let Some(q) = self.queues.get_mut(key) {
            q.waiting -= 1;
            if q.waiting == 0 {
                self.queues.remove(key);
            }
        }
    }
}

/// A task's wait for a key: leaves the key's queue and the wait-for graph when dropped,
/// however the wait ends (even if the task is dropped mid-wait).
struct AsyncWait<'a> {
    table: &'a LockTable,
    shard: &'a Shard,
    txn: TxnId,
    lookup: LockKey,
    queued: bool,
}

impl Drop for AsyncWait<'_> {
    fn drop(&mut self) {
        if self.queued {
            self.shard.state.lock().leave_queue(&self.lookup);
        }
        self.table.waits_for.lock().remove(&self.txn);
    }
}

impl LockTable {
    fn shard(&self, table: TableId, key: &[u8]) -> &Shard {
        let mut h = self.hasher.build_hasher();
        table.hash(&mut h);
        key.hash(&mut h);
        &self.shards[h.finish() as usize % SHARDS]
    }

    /// Lock (table, key) for `txn` if no other transaction holds it. Returns whether
    /// `txn` holds it now.
    pub fn try_lock(&self, txn: TxnId, table: TableId, key: &[u8]) -> bool {
        let mut st = self.shard(table, key).state.lock();
        // One allocation for the key, moved into the table when the lock is free.
        match st.holders.entry((table, key.to_vec())) {
            Entry::Occupied(holder) => *holder.get() == txn,
            Entry::Vacant(free) => {
                free.insert(txn);
                true
            }
        }
    }

    /// [`LockTable::lock`] for a task: it waits in the key's queue, yielding.
    pub async fn lock_async(
        &self,
        txn: TxnId,
        table: TableId,
        key: &[u8],
        cancel: &AtomicBool,
    ) -> Result<()> {
        let shard = self.shard(table, key);
        let mut waiting = AsyncWait {
            table: self,
            shard,
            txn,
            lookup: (table, key.to_vec()),
            queued: false,
        };
        let lookup = waiting.lookup.clone();
        loop {
            let notify = {
                let mut st = shard.state.lock();
                let Some(holder) = st.acquire(txn, &lookup) else {
                    return Ok(());
                };
                if let Err(e) = self.start_wait(txn, holder) {
                    break Err(e);
                }
                if cancel.load(Ordering::Acquire) {
                    break Err(Error::canceled());
                }
                let q = st.queues.entry(lookup.clone()).or_insert_with(|| Queue {
                    notify: Arc::new(Notify::new()),
                    waiting: 0,
                });
                if !waiting.queued {
                    q.waiting += 1;
                    waiting.queued = true;
                }
                q.notify.clone()
            };
            let released = notify.notified();
            tokio::pin!(released);
            // A release between dropping the shard lock and here leaves a permit behind.
            released.as_mut().enable();
            tokio::select! {
                _ = released => {}
                _ = tokio::time::sleep(CANCEL_POLL) => {}
            }
        }
    }

    /// Lock (table, key) for `txn`, waiting while another transaction holds it. Returns
    /// whether it had to wait (the caller then re-reads the latest committed version).
    /// Fails with 40P01 if waiting would deadlock, 57014 if `cancel` is raised.
    pub fn lock(
        &self,
        txn: TxnId,
        table: TableId,
        key: &[u8],
        cancel: &AtomicBool,
    ) -> Result<bool> {
        let shard = self.shard(table, key);
        let lookup = (table, key.to_vec());
        if shard.state.lock().acquire(txn, &lookup).is_none() {
            return Ok(false);
        }
        // Waiting blocks this thread; on a runtime worker its other tasks move elsewhere.
        crate::wal::blocking(|| {
            let mut st = shard.state.lock();
            st.blocked_threads += 1;
            let outcome = loop {
                let Some(holder) = st.acquire(txn, &lookup) else {
                    break Ok(true);
                };
                if let Err(e) = self.start_wait(txn, holder) {
                    break Err(e);
                }
                if cancel.load(Ordering::Acquire) {
                    break Err(Error::canceled());
                }
                shard.released.wait_for(&mut st, CANCEL_POLL);
            };
            st.blocked_threads -= 1;
            drop(st);
            self.waits_for.lock().remove(&txn);
            outcome
        })
    }

    /// Record that `waiter` waits for `holder`, unless that closes a cycle.
    fn start_wait(&self, waiter: TxnId, holder: TxnId) -> Result<()> {
        let mut graph = self.waits_for.lock();
        let mut seen = HashSet::new();
        let mut next = Some(holder);
        while let Some(t) = next {
            if t == waiter {
                graph.remove(&waiter);
                return Err(Error::new(SqlState::DEADLOCK_DETECTED, "deadlock detected")
                    .with_detail(format!(
                        "Transaction {} waits for transaction {}, which waits for it.",
                        waiter.0, holder.0
                    )));
            }
            if !seen.insert(t) {
                break;
            }
            next = graph.get(&t).copied();
        }
        graph.insert(waiter, holder);
        Ok(())
    }

    /// Whether another transaction is waiting for a lock that `txn` holds.
    pub fn is_waited_on(&self, txn: TxnId) -> bool {
        self.waits_for.lock().values().any(|&holder| holder == txn)
    }

    /// Release every lock in `keys` held by `txn`, waking one waiting task per key and
    /// every blocked thread of the shard.
    pub fn release_all(&self, txn: TxnId, keys: &[(TableId, Key)]) {
        for lookup in keys {
            let shard = self.shard(lookup.0, &lookup.1);
            let mut st = shard.state.lock();
            if st.holders.get(lookup) != Some(&txn) {
                continue;
            }
            st.holders.remove(lookup);
            if let Some(q) = st.queues.get(lookup) {
                q.notify.notify_one();
            }
            if st.blocked_threads > 0 {
                shard.released.notify_all();
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    #[test]
    fn second_locker_waits_until_release() {
        let locks = Arc::new(LockTable::default());
        let cancel = AtomicBool::new(false);
        assert!(!locks.lock(TxnId(1), TableId(1), b"k", &cancel).unwrap());
        let l2 = locks.clone();
        let waiter = std::thread::spawn(move || {
            l2.lock(TxnId(2), TableId(1), b"k", &AtomicBool::new(false))
                .unwrap()
        });
        std::thread::sleep(Duration::from_millis(100));
        assert!(!waiter.is_finished(), "the second locker must wait");
        locks.release_all(TxnId(1), &[(TableId(1), b"k".to_vec())]);
        assert!(waiter.join().unwrap(), "it reports that it waited");
    }

    #[test]
    fn a_cycle_is_a_deadlock() {
        let locks = Arc::new(LockTable::default());
        let no = AtomicBool::new(false);
        locks.lock(TxnId(1), TableId(1), b"a", &no).unwrap();
        locks.lock(TxnId(2), TableId(1), b"b", &no).unwrap();
        let l2 = locks.clone();
        let t1 = std::thread::spawn(move || {
            l2.lock(TxnId(1), TableId(1), b"b", &AtomicBool::new(false))
        });
        std::thread::sleep(Duration::from_millis(100));
        let err = locks.lock(TxnId(2), TableId(1), b"a", &no).unwrap_err();
        assert_eq!(err.code, SqlState::DEADLOCK_DETECTED);
        locks.release_all(TxnId(2), &[(TableId(1), b"b".to_vec())]);
        assert!(t1.join().unwrap().is_ok());
    }

    #[test]
    fn cancel_interrupts_a_wait() {
        let locks = Arc::new(LockTable::default());
        locks
            .lock(TxnId(1), TableId(1), b"k", &AtomicBool::new(false))
            .unwrap();
        let cancel = Arc::new(AtomicBool::new(false));
        let (l2, c2) = (locks.clone(), cancel.clone());
        let waiter = std::thread::spawn(move || l2.lock(TxnId(2), TableId(1), b"k", &c2));
        std::thread::sleep(Duration::from_millis(50));
        cancel.store(true, Ordering::Release);
        assert_eq!(
            waiter.join().unwrap().unwrap_err().code,
            SqlState::QUERY_CANCELED
        );
    }

    #[test]
    fn a_holder_knows_when_others_wait_for_it() {
        let locks = Arc::new(LockTable::default());
        let no = AtomicBool::new(false);
        locks.lock(TxnId(1), TableId(1), b"k", &no).unwrap();
        assert!(!locks.is_waited_on(TxnId(1)));
        let l2 = locks.clone();
        let waiter = std::thread::spawn(move || {
            l2.lock(TxnId(2), TableId(1), b"k", &AtomicBool::new(false))
                .unwrap()
        });
        let deadline = std::time::Instant::now() + Duration::from_secs(10);
        while !locks.is_waited_on(TxnId(1)) {
            assert!(
                std::time::Instant::now() < deadline,
                "the wait was never seen"
            );
            std::thread::sleep(Duration::from_millis(5));
        }
        assert!(!locks.is_waited_on(TxnId(2)));
        locks.release_all(TxnId(1), &[(TableId(1), b"k".to_vec())]);
        assert!(waiter.join().unwrap());
        assert!(
            !locks.is_waited_on(TxnId(1)),
            "a finished wait is forgotten"
        );
    }
}
