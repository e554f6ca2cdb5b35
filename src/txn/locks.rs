//! The row-lock table: exclusive locks on (table, key), held until transaction end.

use std::collections::{HashMap, HashSet};
use std::hash::{BuildHasher, Hash, Hasher};
use std::sync::atomic::{AtomicBool, Ordering};
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

struct Shard {
    holders: Mutex<HashMap<(TableId, Key), TxnId>>,
    /// Wakes blocked threads when a lock of this shard is released.
    released: Condvar,
    /// Wakes waiting tasks when a lock of this shard is released.
    released_async: Notify,
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
            shards: (0..SHARDS)
                .map(|_| Shard {
                    holders: Mutex::new(HashMap::new()),
                    released: Condvar::new(),
                    released_async: Notify::new(),
                })
                .collect(),
            waits_for: Mutex::new(HashMap::new()),
            hasher: Default::default(),
        }
    }
}

impl LockTable {
    fn shard_index(&self, table: TableId, key: &[u8]) -> usize {
        let mut h = self.hasher.build_hasher();
        table.hash(&mut h);
        key.hash(&mut h);
        h.finish() as usize % SHARDS
    }

    /// Lock (table, key) for `txn` if no other transaction holds it. Returns whether
    /// `txn` holds it now.
    pub fn try_lock(&self, txn: TxnId, table: TableId, key: &[u8]) -> bool {
        let shard = &self.shards[self.shard_index(table, key)];
        let mut holders = shard.holders.lock();
        match holders.get(&(table, key.to_vec())) {
            None => {
                holders.insert((table, key.to_vec()), txn);
                true
            }
            Some(&holder) => holder == txn,
        }
    }

    /// [`LockTable::lock`] for a task: waiting yields instead of blocking the thread.
    pub async fn lock_async(
        &self,
        txn: TxnId,
        table: TableId,
        key: &[u8],
        cancel: &AtomicBool,
    ) -> Result<()> {
        let shard = &self.shards[self.shard_index(table, key)];
        let lookup = (table, key.to_vec());
        loop {
            let released = shard.released_async.notified();
            tokio::pin!(released);
            // Registered before the check, so a release in between is not missed.
            released.as_mut().enable();
            {
                let mut holders = shard.holders.lock();
                match holders.get(&lookup) {
                    Some(&holder) if holder != txn => self.start_wait(txn, holder)?,
                    held => {
                        if held.is_none() {
                            holders.insert(lookup, txn);
                        }
                        drop(holders);
                        self.waits_for.lock().remove(&txn);
                        return Ok(());
                    }
                }
            }
            if cancel.load(Ordering::Acquire) {
                self.waits_for.lock().remove(&txn);
                return Err(Error::canceled());
            }
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
        let shard = &self.shards[self.shard_index(table, key)];
        {
            let mut holders = shard.holders.lock();
            match holders.get(&(table, key.to_vec())) {
                None => {
                    holders.insert((table, key.to_vec()), txn);
                    return Ok(false);
                }
                Some(&holder) if holder == txn => return Ok(false),
                Some(_) => {}
            }
        }
        // Waiting blocks this thread; on a runtime worker its other tasks move elsewhere.
        crate::wal::blocking(|| self.lock_waiting(shard, txn, table, key, cancel))
    }

    fn lock_waiting(
        &self,
        shard: &Shard,
        txn: TxnId,
        table: TableId,
        key: &[u8],
        cancel: &AtomicBool,
    ) -> Result<bool> {
        let mut holders = shard.holders.lock();
        let lookup = (table, key.to_vec());
        // The lock was seen held on the way in: report a wait even if it is free by now.
        let mut waited = true;
        loop {
            match holders.get(&lookup) {
                None => {
                    holders.insert(lookup, txn);
                    if waited {
                        self.waits_for.lock().remove(&txn);
                    }
                    return Ok(waited);
                }
                Some(&holder) if holder == txn => return Ok(waited),
                Some(&holder) => {
                    self.start_wait(txn, holder)?;
                    waited = true;
                    if cancel.load(Ordering::Acquire) {
                        self.waits_for.lock().remove(&txn);
                        return Err(Error::canceled());
                    }
                    shard.released.wait_for(&mut holders, CANCEL_POLL);
                }
            }
        }
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

    /// Release every lock in `keys` held by `txn` and wake waiters.
    pub fn release_all(&self, txn: TxnId, keys: &[(TableId, Key)]) {
        let mut touched = [false; SHARDS];
        for (table, key) in keys {
            let idx = self.shard_index(*table, key);
            let mut holders = self.shards[idx].holders.lock();
            let lookup = (*table, key.clone());
            if holders.get(&lookup) == Some(&txn) {
                holders.remove(&lookup);
            }
            touched[idx] = true;
        }
        for (idx, t) in touched.iter().enumerate() {
            if *t {
                // Take the mutex so a waiter between its check and its wait cannot miss this.
                let _guard = self.shards[idx].holders.lock();
                self.shards[idx].released.notify_all();
                self.shards[idx].released_async.notify_waiters();
            }
        }
        self.waits_for.lock().remove(&txn);
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
}
