//! The row-lock table: locks on (table, key), held until the transaction's commit record
//! is appended (or it aborts).
//!
//! A key's lock has at most one **owner**, the transaction whose after-image of the row
//! is fixed, and any number of **deferring** holders, transactions that added a
//! commutative increment to the row (`SET c = c + $1 WHERE <key> = ...`, see
//! `sql::executor`) and will apply it to the latest version at their commit. Increments
//! share a row ([`Want::Increment`]) unless an ordinary writer owns it or waits for it,
//! so a hot counter row is not held across round trips, and a writer is never starved.
//!
//! The rules that keep the row's history serial:
//! - An ordinary writer ([`Want::Write`]) owns the row alone: it waits for every holder,
//!   and increments wait for it.
//! - A deferring holder that must read or rewrite its row ("materializing") becomes the
//!   owner once every other holder has gone, except later holders that are themselves
//!   waiting to materialize (they go after it, so two never wait for each other), and
//!   then reads the latest version: it sees exactly what it will commit.
//! - So a deferring holder never commits while another transaction owns its row (the
//!   commit checks it: [`LockTable::owner_other_than`]). Deferring holders apply among
//!   themselves in any order, one at a time per key ([`LockTable::latch_increments`]).
//! - While a writer waits for a row, no increment or share joins it, so writers are not
//!   starved.
//! - Sharers ([`Want::Share`], [`Want::KeyShare`]: SELECT ... FOR SHARE / FOR KEY SHARE)
//!   hold a row against change beside each other. The four strengths conflict as
//!   PostgreSQL's row locks do: KEY SHARE only with a writer that deletes the row or
//!   changes its key ([`Want::Write`]); SHARE also with one that changes other columns
//!   ([`Want::NoKeyWrite`]) and with increments, which change other columns too.
//!
//! A transaction whose write set spilled (`storage::spill`) does not keep a lock entry per
//! key it wrote: the entries of keys it owns alone for writing ([`Want::Write`], nobody
//! else holding or waiting) move out of the table ([`LockTable::forget_spilled`]), and the
//! key's presence in its spill tree stands for the entry. Whoever looks a key up and finds
//! no entry asks the spill trees registered for the key's table
//! ([`LockTable::spill_locks`]), and if one holds the key puts the entry back first
//! ("materializes" it, with the same owner), so every rule below applies unchanged. A
//! spilled holder's registration is withdrawn when it ends ([`LockTable::release_spilled`]),
//! under its own mutex, so no entry is put back for a transaction that has ended.
//!
//! Waiting comes in two kinds. A task (a client connection) waits with
//! [`LockTable::lock_async`] on the key's own queue: a release wakes the one task
//! waiting for that key, or all of them when several wait, each re-checking its own
//! condition. A thread (tests, and statements that must wait in the middle of their
//! work) waits with [`LockTable::lock`] on the shard's condvar. Both kinds record their
//! edges in one wait-for graph, which refuses a wait that would close a cycle (40P01).

use std::collections::hash_map::Entry;
use std::hash::{BuildHasher, Hash, Hasher};
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;

use parking_lot::{Condvar, Mutex};
use rustc_hash::{FxHashMap, FxHashSet};
use tokio::sync::Notify;

use super::Increment;
use crate::error::{Error, Result, SqlState};
use crate::stages::{self, Stage};
use crate::storage::spill::SpillTree;
use crate::storage::{Key, TableId};

/// Identifies a transaction while it runs (not its commit order: that is its LSN).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct TxnId(pub u64);

pub const SHARDS: usize = 64;
/// How often a waiting transaction re-checks its cancel flag.
const CANCEL_POLL: Duration = Duration::from_millis(20);

type LockKey = (TableId, Key);

/// What a lock request asks for, strongest first.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Want {
    /// To own the row, deleting it or changing its key (DELETE, INSERT's claim on a key,
    /// SELECT ... FOR UPDATE). A deferring holder becomes the owner once every earlier
    /// holder has gone.
    Write,
    /// To own the row, changing columns other than its key (UPDATE, SELECT ... FOR NO
    /// KEY UPDATE): KEY SHARE holders stay.
    NoKeyWrite,
    /// To hold the row with a deferred increment.
    Increment,
    /// To keep the row from changing while holding it (SELECT ... FOR SHARE).
    Share,
    /// To keep the row from being deleted or re-keyed (SELECT ... FOR KEY SHARE).
    KeyShare,
}

impl Want {
    /// Whether the request is to own the row.
    pub fn is_write(self) -> bool {
        matches!(self, Want::Write | Want::NoKeyWrite)
    }
}

/// What ends a lock wait besides a grant or a deadlock (a cancel request, lock_timeout,
/// statement_timeout): called on every try, at least every `CANCEL_POLL`.
pub type Interrupts<'a> = &'a (dyn Fn() -> Result<()> + Sync);

/// The holders of one key.
#[derive(Default)]
struct Held {
    owner: Option<TxnId>,
    /// The owner may delete the row or change its key ([`Want::Write`]).
    owner_rekeys: bool,
    /// Holders with deferred increments, in the order they joined.
    deferring: Vec<TxnId>,
    /// Transactions waiting to write the row, holders (materializing) or not: while any
    /// wait, no increment or share joins, so they are not starved.
    writers_waiting: Vec<TxnId>,
    /// Holders that keep the row from changing: (transaction, all columns (SHARE) rather
    /// than the key only (KEY SHARE)).
    sharers: Vec<(TxnId, bool)>,
}

impl Held {
    fn is_free(&self) -> bool {
        self.owner.is_none() && self.deferring.is_empty() && self.sharers.is_empty()
    }

    fn holders(&self) -> impl Iterator<Item = TxnId> + '_ {
        self.owner
            .iter()
            .copied()
            .chain(self.deferring.iter().copied())
            .chain(self.sharers.iter().map(|&(t, _)| t))
    }

    fn holds(&self, txn: TxnId) -> bool {
        self.holders().any(|t| t == txn)
    }

    /// Whether what `txn` holds already covers `want`.
    fn covers(&self, txn: TxnId, want: Want) -> bool {
        if self.owner == Some(txn) {
            return want != Want::Write || self.owner_rekeys;
        }
        if self.deferring.contains(&txn) {
            // A deferring holder reading its row materializes first (and so owns it).
            return matches!(want, Want::Increment | Want::Share | Want::KeyShare);
        }
        match self.sharers.iter().find(|&&(t, _)| t == txn) {
            Some(&(_, all)) => want == Want::KeyShare || (want == Want::Share && all),
            None => false,
        }
    }

    /// The holders other than `txn` whose locks conflict with `want`. A deferring holder
    /// that asks to own its row does not wait for later deferring holders that wait to
    /// materialize too (they go after it).
    fn conflicting(&self, txn: TxnId, want: Want) -> Vec<TxnId> {
        let mut out = Vec::new();
        if let Some(owner) = self.owner.filter(|&o| o != txn) {
            if want != Want::KeyShare || self.owner_rekeys {
                out.push(owner);
            }
        }
        if !matches!(want, Want::Increment | Want::KeyShare) {
            let mine = self.deferring.iter().position(|&t| t == txn);
            for (i, &t) in self.deferring.iter().enumerate() {
                let later_materializing = want.is_write()
                    && mine.is_some_and(|m| i > m)
                    && self.writers_waiting.contains(&t);
                if t != txn && !later_materializing {
                    out.push(t);
                }
            }
        }
        for &(t, all) in &self.sharers {
            let conflict = match want {
                Want::KeyShare | Want::Share => false,
                Want::Increment | Want::NoKeyWrite => all,
                Want::Write => true,
            };
            if t != txn && conflict {
                out.push(t);
            }
        }
        out
    }

    /// Grant `want` to `txn`, or name the transactions it has to wait for.
    ///
    /// An owner never shares the row with an increment that may commit: a writer waits
    /// for every holder, and an increment waits for the owner. The one exception is a
    /// deferring holder that waits to materialize behind an earlier one, which becomes
    /// the owner first: waiting, the later one commits nothing, and it materializes after
    /// the owner has gone. (Two holders materializing thus never wait for each other.)
    fn grant(&mut self, txn: TxnId, want: Want) -> std::result::Result<(), Vec<TxnId>> {
        if self.covers(txn, want) {
            return Ok(());
        }
        let blockers = self.conflicting(txn, want);
        if !blockers.is_empty() {
            return Err(blockers);
        }
        if matches!(want, Want::Increment | Want::Share)
            && self.writers_waiting.iter().any(|&t| t != txn)
        {
            return Err(self.holders().filter(|&t| t != txn).collect());
        }
        match want {
            Want::Write | Want::NoKeyWrite => {
                let rekeys = want == Want::Write || (self.owner == Some(txn) && self.owner_rekeys);
                self.deferring.retain(|&t| t != txn);
                self.sharers.retain(|&(t, _)| t != txn);
                self.owner = Some(txn);
                self.owner_rekeys = rekeys;
            }
            Want::Increment => {
                self.sharers.retain(|&(t, _)| t != txn);
                self.deferring.push(txn);
            }
            Want::Share | Want::KeyShare => {
                let all = want == Want::Share;
                match self.sharers.iter_mut().find(|(t, _)| *t == txn) {
                    Some(entry) => entry.1 |= all,
                    None => self.sharers.push((txn, all)),
                }
            }
        }
        Ok(())
    }

    /// Earlier holders of the key waiting to materialize, if `txn` is a deferring holder:
    /// they no longer wait for `txn` once it waits to materialize too.
    fn earlier_materializing(&self, txn: TxnId) -> Vec<TxnId> {
        match self.deferring.iter().position(|&t| t == txn) {
            Some(at) => self.deferring[..at]
                .iter()
                .filter(|t| self.writers_waiting.contains(t))
                .copied()
                .collect(),
            None => Vec::new(),
        }
    }

    /// `txn` lets go of the key. Returns whether it held it.
    fn release(&mut self, txn: TxnId) -> bool {
        let held = self.holds(txn);
        if self.owner == Some(txn) {
            self.owner = None;
            self.owner_rekeys = false;
        }
        self.deferring.retain(|&t| t != txn);
        self.sharers.retain(|&(t, _)| t != txn);
        held
    }
}

/// The tasks waiting for one key.
struct Queue {
    notify: Arc<Notify>,
    waiting: usize,
}

#[derive(Default)]
struct ShardState {
    held: FxHashMap<LockKey, Held>,
    queues: FxHashMap<LockKey, Queue>,
    /// The increments each deferring holder of a key has added so far (see
    /// [`LockTable::others_increments`]).
    increments: FxHashMap<LockKey, Vec<(TxnId, Vec<Increment>)>>,
    /// Threads blocked in [`LockTable::lock`] on this shard.
    blocked_threads: usize,
}

#[derive(Default)]
struct Shard {
    state: Mutex<ShardState>,
    /// Wakes blocked threads when a lock of this shard is released.
    released: Condvar,
}

/// The keys a transaction holds through its spill tree for one table (see the module's
/// docs).
struct SpilledHolder {
    txn: TxnId,
    table: TableId,
    tree: Arc<SpillTree>,
    /// Keys put back into the table for it, and whether it has ended (then none is).
    state: Mutex<(Vec<Key>, bool)>,
}

pub struct LockTable {
    shards: Vec<Shard>,
    /// Per table, the transactions holding keys through spill trees; how many in all (a
    /// lookup that finds it zero asks nothing more).
    spilled: parking_lot::RwLock<FxHashMap<TableId, Vec<Arc<SpilledHolder>>>>,
    spilled_holders: std::sync::atomic::AtomicUsize,
    /// Serialize the commits that apply deferred increments to the same key (striped by
    /// the key's hash; taken in stripe order).
    increment_latches: Vec<Mutex<()>>,
    /// Wait-for graph: waiting transaction → the holders it waits for.
    waits_for: Mutex<FxHashMap<TxnId, Vec<TxnId>>>,
    hasher: rustc_hash::FxBuildHasher,
}

impl Default for LockTable {
    fn default() -> Self {
        LockTable {
            shards: (0..SHARDS).map(|_| Shard::default()).collect(),
            spilled: Default::default(),
            spilled_holders: Default::default(),
            increment_latches: (0..SHARDS).map(|_| Mutex::new(())).collect(),
            waits_for: Mutex::new(FxHashMap::default()),
            hasher: Default::default(),
        }
    }
}

impl ShardState {
    /// Try `want` for `txn`. A writer that is refused is counted among the key's writers
    /// waiting (`counted`) until it is granted or stops waiting.
    fn acquire(
        &mut self,
        txn: TxnId,
        key: &LockKey,
        want: Want,
        counted: &mut bool,
    ) -> std::result::Result<(), Vec<TxnId>> {
        let held = match self.held.get_mut(key) {
            Some(h) => h,
            None => self.held.entry(key.clone()).or_default(),
        };
        let outcome = held.grant(txn, want);
        match &outcome {
            Ok(()) if *counted => {
                held.writers_waiting.retain(|&t| t != txn);
                *counted = false;
            }
            Err(_) if want.is_write() && !*counted => {
                held.writers_waiting.push(txn);
                *counted = true;
            }
            _ => {}
        }
        outcome
    }

    /// See [`Held::earlier_materializing`]; only for a write request.
    fn earlier_materializing(&self, txn: TxnId, key: &LockKey, want: Want) -> Vec<TxnId> {
        match self.held.get(key) {
            Some(held) if want.is_write() => held.earlier_materializing(txn),
            _ => Vec::new(),
        }
    }

    /// A waiting writer gives up: it is no longer counted.
    fn stop_counting(&mut self, txn: TxnId, key: &LockKey) {
        if let Some(h) = self.held.get_mut(key) {
            h.writers_waiting.retain(|&t| t != txn);
        }
        self.tidy(key);
    }

    fn tidy(&mut self, key: &LockKey) {
        if self
            .held
            .get(key)
            .is_some_and(|h| h.is_free() && h.writers_waiting.is_empty())
        {
            self.held.remove(key);
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

/// A task's wait for a key: leaves the key's queue, its count of waiting writers and the
/// wait-for graph when dropped, however the wait ends (even if the task is dropped
/// mid-wait).
struct AsyncWait<'a> {
    table: &'a LockTable,
    shard: &'a Shard,
    txn: TxnId,
    lookup: LockKey,
    queued: bool,
    counted: bool,
}

impl Drop for AsyncWait<'_> {
    fn drop(&mut self) {
        if self.queued || self.counted {
            let mut st = stages::lock(Stage::RowLocks, &self.shard.state);
            if self.queued {
                st.leave_queue(&self.lookup);
            }
            if self.counted {
                st.stop_counting(self.txn, &self.lookup);
            }
        }
        self.table.waits_for.lock().remove(&self.txn);
    }
}

impl LockTable {
    fn stripe(&self, table: TableId, key: &[u8]) -> usize {
        let mut h = self.hasher.build_hasher();
        table.hash(&mut h);
        key.hash(&mut h);
        // The high bits: a shard's maps place keys by the same hash's low bits, and keys
        // that share a shard must not also share their low bits.
        (h.finish() >> 40) as usize % SHARDS
    }

    fn shard(&self, table: TableId, key: &[u8]) -> &Shard {
        &self.shards[self.stripe(table, key)]
    }

    /// Latch the keys whose deferred increments a commit is about to apply: hold the
    /// guards from reading each key's latest version until the new one is installed.
    pub fn latch_increments<'a>(
        &self,
        keys: impl Iterator<Item = (TableId, &'a [u8])>,
    ) -> Vec<parking_lot::MutexGuard<'_, ()>> {
        let mut stripes: Vec<usize> = keys.map(|(t, k)| self.stripe(t, k)).collect();
        stripes.sort_unstable();
        stripes.dedup();
        stripes
            .into_iter()
            .map(|s| self.increment_latches[s].lock())
            .collect()
    }

    /// Grant `want` on (table, key) to `txn` if nobody is in the way. Returns whether it
    /// was granted.
    pub fn try_lock(&self, txn: TxnId, table: TableId, key: &[u8], want: Want) -> bool {
        self.try_lock_new(txn, table, key, want).is_some()
    }

    /// [`LockTable::try_lock`] that tells a key `txn` did not hold before (`Some(true)`)
    /// from one it held already, perhaps in a weaker mode (`Some(false)`); None: refused.
    pub fn try_lock_new(&self, txn: TxnId, table: TableId, key: &[u8], want: Want) -> Option<bool> {
        let mut st = stages::lock(Stage::RowLocks, &self.shard(table, key).state);
        self.materialize(&mut st, table, key);
        // The common case, a free key: one allocation for the key, moved into the table.
        match st.held.entry((table, key.to_vec())) {
            Entry::Occupied(mut held) => {
                let held = held.get_mut();
                let had = held.holds(txn);
                held.grant(txn, want).is_ok().then_some(!had)
            }
            Entry::Vacant(free) => {
                let mut held = Held::default();
                let granted = held.grant(txn, want).is_ok();
                debug_assert!(granted, "a free key is granted");
                free.insert(held);
                granted.then_some(true)
            }
        }
    }

    /// Whether `txn` holds (table, key) in any mode.
    pub fn holds(&self, txn: TxnId, table: TableId, key: &[u8]) -> bool {
        let mut st = stages::lock(Stage::RowLocks, &self.shard(table, key).state);
        self.materialize(&mut st, table, key);
        st.held
            .get(&(table, key.to_vec()))
            .is_some_and(|h| h.holds(txn))
    }

    /// The transaction other than `txn` that owns (table, key), if any. A transaction
    /// that holds the key with a deferred increment finds none (see the module's rules).
    pub fn owner_other_than(&self, txn: TxnId, table: TableId, key: &[u8]) -> Option<TxnId> {
        let mut st = stages::lock(Stage::RowLocks, &self.shard(table, key).state);
        self.materialize(&mut st, table, key);
        let owner = st.held.get(&(table, key.to_vec()))?.owner;
        owner.filter(|&o| o != txn)
    }

    /// One try of a request that waits: whether it was granted; if not, its wait is
    /// recorded in the wait-for graph. Fails with 40P01 if waiting would deadlock, or with
    /// what `interrupts` returns.
    fn attempt(
        &self,
        st: &mut ShardState,
        txn: TxnId,
        lookup: &LockKey,
        want: Want,
        counted: &mut bool,
        interrupts: Interrupts<'_>,
    ) -> Result<bool> {
        self.materialize(st, lookup.0, &lookup.1);
        let holders = match st.acquire(txn, lookup, want, counted) {
            Ok(()) => return Ok(true),
            Err(holders) => holders,
        };
        let stale = st.earlier_materializing(txn, lookup, want);
        self.start_wait(txn, holders, &stale)?;
        interrupts()?;
        Ok(false)
    }

    /// [`LockTable::lock`] for a task: it waits in the key's queue, yielding.
    pub async fn lock_async(
        &self,
        txn: TxnId,
        table: TableId,
        key: &[u8],
        want: Want,
        interrupts: Interrupts<'_>,
    ) -> Result<()> {
        let shard = self.shard(table, key);
        let mut waiting = AsyncWait {
            table: self,
            shard,
            txn,
            lookup: (table, key.to_vec()),
            queued: false,
            counted: false,
        };
        let lookup = waiting.lookup.clone();
        loop {
            let released = {
                let mut st = stages::lock(Stage::RowLocks, &shard.state);
                if self.attempt(
                    &mut st,
                    txn,
                    &lookup,
                    want,
                    &mut waiting.counted,
                    interrupts,
                )? {
                    return Ok(());
                }
                let q = st.queues.entry(lookup.clone()).or_insert_with(|| Queue {
                    notify: Arc::new(Notify::new()),
                    waiting: 0,
                });
                if !waiting.queued {
                    q.waiting += 1;
                    waiting.queued = true;
                }
                // Registered before the shard is unlocked, so no release is missed.
                let mut released = Box::pin(q.notify.clone().notified_owned());
                released.as_mut().enable();
                released
            };
            tokio::select! {
                _ = released => {}
                _ = tokio::time::sleep(CANCEL_POLL) => {}
            }
        }
    }

    /// Grant `want` on (table, key) to `txn`, waiting while other holders are in the
    /// way. Returns whether it had to wait (the caller then re-reads the latest
    /// committed version). Fails with 40P01 if waiting would deadlock, or with what
    /// `interrupts` returns (57014 on a cancel request, say).
    pub fn lock(
        &self,
        txn: TxnId,
        table: TableId,
        key: &[u8],
        want: Want,
        interrupts: Interrupts<'_>,
    ) -> Result<bool> {
        let shard = self.shard(table, key);
        let lookup = (table, key.to_vec());
        let mut counted = false;
        if shard
            .state
            .lock()
            .acquire(txn, &lookup, want, &mut counted)
            .is_ok()
        {
            return Ok(false);
        }
        // Waiting blocks this thread; on a runtime worker its other tasks move elsewhere.
        crate::wal::blocking(|| {
            let mut st = stages::lock(Stage::RowLocks, &shard.state);
            st.blocked_threads += 1;
            let outcome = loop {
                match self.attempt(&mut st, txn, &lookup, want, &mut counted, interrupts) {
                    Ok(true) => break Ok(true),
                    Ok(false) => {
                        st.not_busy(|g| shard.released.wait_for(g, CANCEL_POLL));
                    }
                    Err(e) => break Err(e),
                }
            };
            st.blocked_threads -= 1;
            if counted {
                st.stop_counting(txn, &lookup);
            }
            drop(st);
            self.waits_for.lock().remove(&txn);
            outcome
        })
    }

    /// Record that `waiter` waits for `holders`, unless that closes a cycle. A holder
    /// waiting to materialize does not wait for later ones that wait to materialize too
    /// (see `Held::grant`): edges it recorded to `waiter` before `waiter` began waiting
    /// are dropped first.
    fn start_wait(&self, waiter: TxnId, holders: Vec<TxnId>, stale: &[TxnId]) -> Result<()> {
        let mut graph = self.waits_for.lock();
        for h in stale {
            if let Some(theirs) = graph.get_mut(h) {
                theirs.retain(|&t| t != waiter);
            }
        }
        let mut seen = FxHashSet::default();
        let mut next: Vec<TxnId> = holders.clone();
        while let Some(t) = next.pop() {
            if t == waiter {
                graph.remove(&waiter);
                return Err(Error::new(SqlState::DEADLOCK_DETECTED, "deadlock detected")
                    .with_detail(format!(
                        "Transaction {} waits for transaction {}, which waits for it.",
                        waiter.0,
                        holders
                            .iter()
                            .map(|h| h.0.to_string())
                            .collect::<Vec<_>>()
                            .join(", ")
                    )));
            }
            if seen.insert(t) {
                if let Some(more) = graph.get(&t) {
                    next.extend(more.iter().copied());
                }
            }
        }
        graph.insert(waiter, holders);
        Ok(())
    }

    /// The increments the other deferring holders of (table, key) have added: a new one
    /// joins only if the row stays in range whichever of them commit (see
    /// `sql::executor`). Read under the key's increment latch
    /// ([`LockTable::latch_increments`]), which orders it with the commits that apply them.
    pub fn others_increments(&self, txn: TxnId, table: TableId, key: &[u8]) -> Vec<Increment> {
        let st = stages::lock(Stage::RowLocks, &self.shard(table, key).state);
        st.increments
            .get(&(table, key.to_vec()))
            .map(|pending| {
                pending
                    .iter()
                    .filter(|(t, _)| *t != txn)
                    .flat_map(|(_, incs)| incs.iter().cloned())
                    .collect()
            })
            .unwrap_or_default()
    }

    /// `txn`, a holder of (table, key), has added `incs` to it in all (replacing what it
    /// recorded before). Forgotten when it releases the key.
    pub fn record_increments(&self, txn: TxnId, table: TableId, key: &[u8], incs: Vec<Increment>) {
        let mut st = stages::lock(Stage::RowLocks, &self.shard(table, key).state);
        let pending = st.increments.entry((table, key.to_vec())).or_default();
        match pending.iter_mut().find(|(t, _)| *t == txn) {
            Some(mine) => mine.1 = incs,
            None => pending.push((txn, incs)),
        }
    }

    /// Whether another transaction is waiting for a lock that `txn` holds.
    pub fn is_waited_on(&self, txn: TxnId) -> bool {
        self.waits_for
            .lock()
            .values()
            .any(|holders| holders.contains(&txn))
    }

    /// Release every lock in `keys` held by `txn`, waking the tasks waiting for each key
    /// and every blocked thread of the shard.
    /// Put back the entry of `key` if a spill tree holds it and the table has none (see
    /// the module's docs). Called under the key's shard lock, before any look at it.
    fn materialize(&self, st: &mut ShardState, table: TableId, key: &[u8]) {
        if self.spilled_holders.load(Ordering::Acquire) == 0 {
            return;
        }
        let lookup = (table, key.to_vec());
        if st.held.contains_key(&lookup) {
            return;
        }
        let holders = match self.spilled.read().get(&table) {
            Some(holders) => holders.clone(),
            None => return,
        };
        for holder in holders {
            let mut state = holder.state.lock();
            if state.1 {
                continue;
            }
            match holder.tree.contains(key) {
                Ok(false) => continue,
                Ok(true) => {}
                Err(e) => {
                    // The tree is our own pages, checked on every read: a failure to read
                    // one is the disk's, and a lock we cannot see is one we cannot keep.
                    crate::error::stop_server(&format!(
                        "could not read a spilled write set to check a row lock: {e}"
                    ));
                }
            }
            st.held.insert(
                lookup,
                Held {
                    owner: Some(holder.txn),
                    owner_rekeys: true,
                    ..Held::default()
                },
            );
            state.0.push(key.to_vec());
            return;
        }
    }

    /// `txn` spilled its writes to `table` into `tree`: from now on the tree stands for
    /// the entries [`LockTable::forget_spilled`] removes. Registered once per table.
    pub fn spill_locks(&self, txn: TxnId, table: TableId, tree: &Arc<SpillTree>) {
        let mut spilled = self.spilled.write();
        let holders = spilled.entry(table).or_default();
        if holders
            .iter()
            .any(|h| h.txn == txn && Arc::ptr_eq(&h.tree, tree))
        {
            return;
        }
        holders.push(Arc::new(SpilledHolder {
            txn,
            table,
            tree: tree.clone(),
            state: Mutex::new((Vec::new(), false)),
        }));
        self.spilled_holders.fetch_add(1, Ordering::AcqRel);
    }

    /// Remove `txn`'s entry for a key that its registered spill tree holds, if `txn`
    /// owns it alone for writing and nobody waits for it: returns whether it did (the
    /// caller then drops the key from its own list of locks).
    pub fn forget_spilled(&self, txn: TxnId, table: TableId, key: Key) -> bool {
        let lookup = (table, key);
        let mut st = stages::lock(Stage::RowLocks, &self.shard(table, &lookup.1).state);
        let alone = st.held.get(&lookup).is_some_and(|h| {
            h.owner == Some(txn)
                && h.owner_rekeys
                && h.deferring.is_empty()
                && h.sharers.is_empty()
                && h.writers_waiting.is_empty()
        });
        if !alone || st.queues.contains_key(&lookup) || st.increments.contains_key(&lookup) {
            return false;
        }
        st.held.remove(&lookup);
        true
    }

    /// `txn` ends: withdraw its spill trees' registrations and release the entries put
    /// back for them.
    pub fn release_spilled(&self, txn: TxnId) {
        if self.spilled_holders.load(Ordering::Acquire) == 0 {
            return;
        }
        let mut mine = Vec::new();
        {
            let mut spilled = self.spilled.write();
            spilled.retain(|_, holders| {
                holders.retain(|h| {
                    let keep = h.txn != txn;
                    if !keep {
                        mine.push(h.clone());
                    }
                    keep
                });
                !holders.is_empty()
            });
        }
        for holder in mine {
            self.spilled_holders.fetch_sub(1, Ordering::AcqRel);
            let keys = {
                let mut state = holder.state.lock();
                state.1 = true;
                std::mem::take(&mut state.0)
            };
            let keys: Vec<(TableId, Key)> = keys.into_iter().map(|k| (holder.table, k)).collect();
            self.release_all(txn, &keys);
        }
    }

    pub fn release_all(&self, txn: TxnId, keys: &[(TableId, Key)]) {
        for lookup in keys {
            let shard = self.shard(lookup.0, &lookup.1);
            let mut st = stages::lock(Stage::RowLocks, &shard.state);
            if let Some(pending) = st.increments.get_mut(lookup) {
                pending.retain(|(t, _)| *t != txn);
                if pending.is_empty() {
                    st.increments.remove(lookup);
                }
            }
            let Some(held) = st.held.get_mut(lookup) else {
                continue;
            };
            if !held.release(txn) {
                continue;
            }
            st.tidy(lookup);
            if let Some(q) = st.queues.get(lookup) {
                if q.waiting == 1 {
                    q.notify.notify_one();
                } else {
                    q.notify.notify_waiters();
                }
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
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::Arc;

    /// `txn` asks to write key "k" of table 1 from a thread of its own.
    fn spawn_writer(locks: &Arc<LockTable>, txn: u64) -> std::thread::JoinHandle<Result<bool>> {
        let locks = locks.clone();
        std::thread::spawn(move || {
            locks.lock(TxnId(txn), TableId(1), b"k", Want::Write, &|| Ok(()))
        })
    }

    #[test]
    fn second_locker_waits_until_release() {
        let locks = Arc::new(LockTable::default());
        let cancel = || Ok(());
        assert!(!locks
            .lock(TxnId(1), TableId(1), b"k", Want::Write, &cancel)
            .unwrap());
        let waiter = spawn_writer(&locks, 2);
        std::thread::sleep(Duration::from_millis(100));
        assert!(!waiter.is_finished(), "the second locker must wait");
        locks.release_all(TxnId(1), &[(TableId(1), b"k".to_vec())]);
        assert!(waiter.join().unwrap().unwrap(), "it reports that it waited");
    }

    #[test]
    fn a_cycle_is_a_deadlock() {
        let locks = Arc::new(LockTable::default());
        let no = || Ok(());
        locks
            .lock(TxnId(1), TableId(1), b"a", Want::Write, &no)
            .unwrap();
        locks
            .lock(TxnId(2), TableId(1), b"b", Want::Write, &no)
            .unwrap();
        let l2 = locks.clone();
        let t1 = std::thread::spawn(move || {
            l2.lock(TxnId(1), TableId(1), b"b", Want::Write, &|| Ok(()))
        });
        std::thread::sleep(Duration::from_millis(100));
        let err = locks
            .lock(TxnId(2), TableId(1), b"a", Want::Write, &no)
            .unwrap_err();
        assert_eq!(err.code, SqlState::DEADLOCK_DETECTED);
        locks.release_all(TxnId(2), &[(TableId(1), b"b".to_vec())]);
        assert!(t1.join().unwrap().is_ok());
    }

    #[test]
    fn cancel_interrupts_a_wait() {
        let locks = Arc::new(LockTable::default());
        locks
            .lock(TxnId(1), TableId(1), b"k", Want::Write, &|| Ok(()))
            .unwrap();
        let cancel = Arc::new(AtomicBool::new(false));
        let (l2, c2) = (locks.clone(), cancel.clone());
        let waiter = std::thread::spawn(move || {
            l2.lock(TxnId(2), TableId(1), b"k", Want::Write, &|| {
                if c2.load(Ordering::Acquire) {
                    Err(Error::canceled())
                } else {
                    Ok(())
                }
            })
        });
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
        let no = || Ok(());
        locks
            .lock(TxnId(1), TableId(1), b"k", Want::Write, &no)
            .unwrap();
        assert!(!locks.is_waited_on(TxnId(1)));
        let waiter = spawn_writer(&locks, 2);
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
        assert!(waiter.join().unwrap().unwrap());
        assert!(
            !locks.is_waited_on(TxnId(1)),
            "a finished wait is forgotten"
        );
    }

    fn key() -> (TableId, Key) {
        (TableId(1), b"k".to_vec())
    }

    /// Wait (up to 10 s) until `cond` holds.
    fn eventually(what: &str, cond: impl Fn() -> bool) {
        let deadline = std::time::Instant::now() + Duration::from_secs(10);
        while !cond() {
            assert!(
                std::time::Instant::now() < deadline,
                "{what}: never happened"
            );
            std::thread::sleep(Duration::from_millis(5));
        }
    }

    #[test]
    fn increments_share_a_row_that_no_writer_owns() {
        let locks = LockTable::default();
        let (t, k) = key();
        let inc = |txn: u64| locks.try_lock(TxnId(txn), t, &k, Want::Increment);
        assert!(inc(1) && inc(2) && inc(3), "increments share the row");
        assert_eq!(locks.owner_other_than(TxnId(2), t, &k), None);
        assert!(
            !locks.try_lock(TxnId(9), t, &k, Want::Write),
            "a writer waits for all"
        );
        assert!(
            !locks.try_lock(TxnId(2), t, &k, Want::Write),
            "materializing waits for the other holders"
        );
        locks.release_all(TxnId(1), &[key()]);
        locks.release_all(TxnId(3), &[key()]);
        assert!(
            locks.try_lock(TxnId(2), t, &k, Want::Write),
            "2 becomes the owner"
        );
        assert!(!inc(5), "an owner shares nothing");
        locks.release_all(TxnId(2), &[key()]);
        assert!(locks.try_lock(TxnId(9), t, &k, Want::Write), "free again");
        assert!(!inc(6), "an ordinary writer shares nothing");
        locks.release_all(TxnId(9), &[key()]);
        assert!(inc(6));
    }

    #[test]
    fn a_waiting_writer_stops_new_increments() {
        let locks = Arc::new(LockTable::default());
        let (t, k) = key();
        assert!(locks.try_lock(TxnId(1), t, &k, Want::Increment));
        let l2 = locks.clone();
        let writer = std::thread::spawn(move || {
            l2.lock(TxnId(9), TableId(1), b"k", Want::Write, &|| Ok(()))
        });
        eventually("the writer waits", || locks.is_waited_on(TxnId(1)));
        assert!(!locks.try_lock(TxnId(3), t, &k, Want::Increment));
        locks.release_all(TxnId(1), &[key()]);
        assert!(writer.join().unwrap().unwrap());
        assert!(!locks.try_lock(TxnId(3), t, &k, Want::Increment));
        locks.release_all(TxnId(9), &[key()]);
        assert!(
            locks.try_lock(TxnId(3), t, &k, Want::Increment),
            "nothing is left behind"
        );
    }

    #[test]
    fn holders_materializing_together_go_in_join_order() {
        for order in [[2u64, 3], [3, 2]] {
            let locks = Arc::new(LockTable::default());
            let (t, k) = key();
            for txn in [1, 2, 3] {
                assert!(locks.try_lock(TxnId(txn), t, &k, Want::Increment));
            }
            let (tx, rx) = std::sync::mpsc::channel();
            let waiters: Vec<_> = order
                .into_iter()
                .map(|txn| {
                    let (l, tx) = (locks.clone(), tx.clone());
                    let w = std::thread::spawn(move || {
                        let no = || Ok(());
                        l.lock(TxnId(txn), TableId(1), b"k", Want::Write, &no)?;
                        tx.send(txn).unwrap();
                        std::thread::sleep(Duration::from_millis(20));
                        l.release_all(TxnId(txn), &[key()]);
                        Ok::<_, Error>(())
                    });
                    eventually("it waits", || locks.is_waited_on(TxnId(1)));
                    w
                })
                .collect();
            std::thread::sleep(Duration::from_millis(50));
            locks.release_all(TxnId(1), &[key()]);
            for w in waiters {
                w.join().unwrap().unwrap();
            }
            let got: Vec<u64> = rx.try_iter().collect();
            assert_eq!(got, vec![2, 3], "started as {order:?}");
        }
    }
}
