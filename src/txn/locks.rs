//! The row-lock table: exclusive locks on (table, key), held until transaction end.

use std::collections::{HashMap, HashSet};
use std::hash::{BuildHasher, Hash, Hasher};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use parking_lot::{Condvar, Mutex};

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
            shards: (0..SHARDS)
                .map(|_| Shard { holders: Mutex::new(HashMap::new()), released: Condvar::new() })
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

    /// Lock (table, key) for `txn`, waiting while another transaction holds it. Returns
    /// whether it had to wait (the caller then re-reads the latest committed version).
    /// Fails with 40P01 if waiting would deadlock, 57014 if `cancel` is raised.
    pub fn lock(&self, txn: TxnId, table: TableId, key: &[u8], cancel: &AtomicBool) -> Result<bool> {
        let shard = &self.shards[self.shard_index(table, key)];
        let mut holders = shard.holders.lock();
        let lookup = (table, key.to_vec());
        let mut waited = false;
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
                return Err(Error::new(SqlState::DEADLOCK_DETECTED, "deadlock detected").with_detail(
                    format!("Transaction {} waits for transaction {}, which waits for it.", waiter.0, holder.0),
                ));
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
            }
        }
        self.waits_for.lock().remove(&txn);
    }
}
