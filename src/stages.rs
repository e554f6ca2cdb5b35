//! Serial stages: every lock that all connections share and every step that one thread
//! does for all of them, measured so that what will stop scaling shows on any machine.
//!
//! A stage is *busy* while someone holds it exclusively (a lock) or works in it (a
//! thread, a device); others *wait* while they want it and cannot have it. If a stage is
//! busy `b` seconds per transaction, no number of cores takes the server past `1 / b`
//! transactions per second: that is its ceiling, which the benchmark harness prints from
//! the `steadydb_stat_stages` view. A stage made of independent parts (the row-lock
//! table's shards) says how many; its ceiling is that many times higher if the load
//! spreads evenly.
//!
//! Invariants:
//! - Measuring adds no shared write: each thread counts into its own counters (written
//!   only by that thread, with plain loads and stores), and a reader sums them. A thread
//!   that ends folds its counts into the retired total, so the sums never go back.
//! - Shared holds of a reader-writer lock are not busy time (readers run side by side);
//!   only their waits count.
//! - Every entry and every wait is counted, and every wait timed; of the holds, one in
//!   [`HOLD_SAMPLE`] per thread is timed and counts for that many.
//! - Time is measured from the moment a guard is had to the moment it is dropped, less
//!   the time it let the lock go ([`Held::not_busy`], [`Held::unlocked`]).

use std::cell::Cell;
use std::mem::ManuallyDrop;
use std::ops::{Deref, DerefMut};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use parking_lot::{Mutex, MutexGuard, RwLock, RwLockReadGuard, RwLockWriteGuard};

/// One serial stage.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stage {
    /// The buffer pool's lock over frames, eviction and the page map.
    PoolMap,
    /// The buffer pool's page table, taken by every pin of a resident page.
    PoolTable,
    /// The log's append lock: one per record.
    WalAppend,
    /// Writing and syncing the log (device time, shared by design: one flush carries a
    /// whole group).
    WalFlush,
    /// The CPU time of a flush around its write and sync, on the thread that does it:
    /// taking the buffer, publishing `flushed_lsn`, advancing `visible_lsn` and waking
    /// the waiters. Flushes are serialized, so this is serial.
    WalFlushCpu,
    /// The commit sequence: pending commits in LSN order, which `visible_lsn` passes.
    Visibility,
    /// The registry of tasks waiting for an LSN to be published.
    CommitWake,
    /// The checkpoint barrier's exclusive holds (commits hold it shared).
    CheckpointBarrier,
    /// A table's older row versions (summed over tables).
    TableVersions,
    /// A table's tree lock, held exclusively (summed over tables).
    TableTree,
    /// The row-lock table's shards.
    RowLocks,
    /// The catalog's table and sequence maps.
    Catalog,
    /// The serializable transactions' dependency graph.
    SsiGraph,
}

impl Stage {
    pub const ALL: [Stage; 13] = [
        Stage::PoolMap,
        Stage::PoolTable,
        Stage::WalAppend,
        Stage::WalFlush,
        Stage::WalFlushCpu,
        Stage::Visibility,
        Stage::CommitWake,
        Stage::CheckpointBarrier,
        Stage::TableVersions,
        Stage::TableTree,
        Stage::RowLocks,
        Stage::Catalog,
        Stage::SsiGraph,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Stage::PoolMap => "pool_map",
            Stage::PoolTable => "pool_table",
            Stage::WalAppend => "wal_append",
            Stage::WalFlush => "wal_flush",
            Stage::WalFlushCpu => "wal_flush_cpu",
            Stage::Visibility => "visibility",
            Stage::CommitWake => "commit_wake",
            Stage::CheckpointBarrier => "checkpoint_barrier",
            Stage::TableVersions => "table_versions",
            Stage::TableTree => "table_tree",
            Stage::RowLocks => "row_locks",
            Stage::Catalog => "catalog",
            Stage::SsiGraph => "ssi_graph",
        }
    }

    /// `lock`, `thread` or `device`.
    pub fn kind(self) -> &'static str {
        match self {
            Stage::WalFlush => "device",
            _ => "lock",
        }
    }

    /// How many independent parts share the stage's load.
    pub fn partitions(self) -> u64 {
        match self {
            Stage::RowLocks => crate::txn::LOCK_TABLE_SHARDS as u64,
            Stage::PoolTable => crate::storage::POOL_TABLE_SHARDS as u64,
            Stage::TableVersions => crate::storage::VERSION_SHARDS as u64,
            _ => 1,
        }
    }

    fn index(self) -> usize {
        self as usize
    }
}

const STAGES: usize = Stage::ALL.len();

/// Counts of one stage.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct StageCounts {
    pub acquisitions: u64,
    pub busy_ns: u64,
    pub waits: u64,
    pub wait_ns: u64,
}

/// One thread's counters. Written only by their thread, so an increment is a load and a
/// store, not a locked instruction; read by anyone.
#[derive(Default)]
struct Counters {
    acquisitions: [AtomicU64; STAGES],
    busy_ns: [AtomicU64; STAGES],
    waits: [AtomicU64; STAGES],
    wait_ns: [AtomicU64; STAGES],
}

fn bump(counter: &AtomicU64, by: u64) {
    counter.store(counter.load(Ordering::Relaxed) + by, Ordering::Relaxed);
}

impl Counters {
    fn get(&self, i: usize) -> StageCounts {
        StageCounts {
            acquisitions: self.acquisitions[i].load(Ordering::Relaxed),
            busy_ns: self.busy_ns[i].load(Ordering::Relaxed),
            waits: self.waits[i].load(Ordering::Relaxed),
            wait_ns: self.wait_ns[i].load(Ordering::Relaxed),
        }
    }
}

/// Every live thread's counters, and what threads that ended counted.
#[derive(Default)]
struct Registry {
    live: Vec<Arc<Counters>>,
    retired: [StageCounts; STAGES],
}

fn registry() -> &'static Mutex<Registry> {
    static REGISTRY: OnceLock<Mutex<Registry>> = OnceLock::new();
    REGISTRY.get_or_init(Mutex::default)
}

/// A thread's registration: its counters, folded into the retired total when it ends.
struct Local(Arc<Counters>);

impl Local {
    fn new() -> Local {
        let counters = Arc::new(Counters::default());
        registry().lock().live.push(counters.clone());
        Local(counters)
    }
}

impl Drop for Local {
    fn drop(&mut self) {
        let mut reg = registry().lock();
        for i in 0..STAGES {
            let c = self.0.get(i);
            let r = &mut reg.retired[i];
            r.acquisitions += c.acquisitions;
            r.busy_ns += c.busy_ns;
            r.waits += c.waits;
            r.wait_ns += c.wait_ns;
        }
        reg.live.retain(|l| !Arc::ptr_eq(l, &self.0));
    }
}

thread_local! {
    static LOCAL: Local = Local::new();
}

fn with_local(f: impl FnOnce(&Counters)) {
    // During a thread's teardown its counters may be gone: the count is dropped then.
    let _ = LOCAL.try_with(|l| f(&l.0));
}

/// Count an entry into `stage` that waited `waited` (None: it did not wait).
pub fn record_entry(stage: Stage, waited: Option<Duration>) {
    let i = stage.index();
    with_local(|c| {
        bump(&c.acquisitions[i], 1);
        if let Some(w) = waited {
            bump(&c.waits[i], 1);
            bump(&c.wait_ns[i], w.as_nanos() as u64);
        }
    });
}

/// Count `busy` of busy time in `stage`.
pub fn record_busy(stage: Stage, busy: Duration) {
    let i = stage.index();
    with_local(|c| bump(&c.busy_ns[i], busy.as_nanos() as u64));
}

/// The CPU time the calling thread has used: for a stage that one thread works through,
/// whose wall time on a busy machine would count the time it was not running.
pub fn thread_cpu_time() -> Duration {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid timespec for the call to fill.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    if rc != 0 {
        return Duration::ZERO;
    }
    Duration::new(ts.tv_sec as u64, ts.tv_nsec as u32)
}

/// Every stage's counts since the server started.
pub fn snapshot() -> Vec<(Stage, StageCounts)> {
    let reg = registry().lock();
    Stage::ALL
        .iter()
        .map(|&stage| {
            let i = stage.index();
            let mut sum = reg.retired[i];
            for l in &reg.live {
                let c = l.get(i);
                sum.acquisitions += c.acquisitions;
                sum.busy_ns += c.busy_ns;
                sum.waits += c.waits;
                sum.wait_ns += c.wait_ns;
            }
            (stage, sum)
        })
        .collect()
}

/// One hold in this many is timed, per thread, and counts this many times over: reading
/// the clock twice per hold cost the short holds (a page-table lookup, a commit's place in
/// the log) a noticeable share of their length, and a sample of every eighth hold
/// estimates the busy time as well.
const HOLD_SAMPLE: u32 = 8;

/// Whether this thread times its next hold.
fn sample_hold() -> bool {
    thread_local! {
        static HOLDS: Cell<u32> = const { Cell::new(0) };
    }
    HOLDS
        .try_with(|h| {
            let n = h.get().wrapping_add(1);
            h.set(n);
            n % HOLD_SAMPLE == 0
        })
        .unwrap_or(false)
}

/// A guard whose hold is busy time of its stage.
pub struct Held<G> {
    guard: ManuallyDrop<G>,
    stage: Stage,
    /// When the hold began, if this hold is timed ([`HOLD_SAMPLE`]).
    since: Option<Instant>,
}

impl<G> Held<G> {
    fn new(stage: Stage, guard: G) -> Held<G> {
        Held {
            guard: ManuallyDrop::new(guard),
            stage,
            since: sample_hold().then(Instant::now),
        }
    }

    /// Count the hold so far, if it is timed.
    fn count_hold(&self) {
        if let Some(since) = self.since {
            record_busy(self.stage, since.elapsed() * HOLD_SAMPLE);
        }
    }

    /// Start timing again after the lock was let go, if the hold is timed.
    fn restart_hold(&mut self) {
        if self.since.is_some() {
            self.since = Some(Instant::now());
        }
    }

    /// Run `f` on the guard without counting its time as busy: for a condition
    /// variable's wait, which lets the lock go while it sleeps.
    pub fn not_busy<R>(&mut self, f: impl FnOnce(&mut G) -> R) -> R {
        self.count_hold();
        let r = f(&mut self.guard);
        self.restart_hold();
        r
    }
}

impl<'a, T> Held<MutexGuard<'a, T>> {
    /// Let the lock go while `f` runs; the time outside is not busy.
    pub fn unlocked<R>(&mut self, f: impl FnOnce() -> R) -> R {
        self.count_hold();
        let r = MutexGuard::unlocked(&mut self.guard, f);
        self.restart_hold();
        r
    }
}

impl<G: Deref> Deref for Held<G> {
    type Target = G::Target;
    fn deref(&self) -> &G::Target {
        &self.guard
    }
}

impl<G: DerefMut> DerefMut for Held<G> {
    fn deref_mut(&mut self) -> &mut G::Target {
        &mut self.guard
    }
}

impl<G> Drop for Held<G> {
    fn drop(&mut self) {
        // SAFETY: the guard is dropped once, here, and never used again.
        unsafe { ManuallyDrop::drop(&mut self.guard) };
        self.count_hold();
    }
}

/// Enter `stage` through `try_enter` (which does not wait), or else `enter` (which does),
/// counting the entry and timing a wait.
fn enter<G>(stage: Stage, try_enter: impl FnOnce() -> Option<G>, enter: impl FnOnce() -> G) -> G {
    if let Some(g) = try_enter() {
        record_entry(stage, None);
        return g;
    }
    let began = Instant::now();
    let g = enter();
    record_entry(stage, Some(began.elapsed()));
    g
}

/// Lock `mutex` as `stage`.
pub fn lock<T>(stage: Stage, mutex: &Mutex<T>) -> Held<MutexGuard<'_, T>> {
    Held::new(stage, enter(stage, || mutex.try_lock(), || mutex.lock()))
}

/// Lock `lock` exclusively as `stage`.
pub fn write<T>(stage: Stage, lock: &RwLock<T>) -> Held<RwLockWriteGuard<'_, T>> {
    Held::new(stage, enter(stage, || lock.try_write(), || lock.write()))
}

/// Lock `lock` shared as `stage`: only a wait counts (as an entry, with its time).
pub fn read<T>(stage: Stage, lock: &RwLock<T>) -> RwLockReadGuard<'_, T> {
    match lock.try_read() {
        Some(g) => g,
        None => {
            let began = Instant::now();
            let g = lock.read();
            record_entry(stage, Some(began.elapsed()));
            g
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn counts(stage: Stage) -> StageCounts {
        snapshot().into_iter().find(|(s, _)| *s == stage).unwrap().1
    }

    #[test]
    fn holds_and_waits_are_counted_and_survive_their_thread() {
        use std::sync::atomic::AtomicBool;
        let m = Arc::new(Mutex::new(0u32));
        let trying = Arc::new(AtomicBool::new(false));
        let before = counts(Stage::SsiGraph);
        let held = lock(Stage::SsiGraph, &m);
        let (m2, trying2) = (m.clone(), trying.clone());
        let t = std::thread::spawn(move || {
            trying2.store(true, Ordering::SeqCst);
            *lock(Stage::SsiGraph, &m2) += 1;
        });
        while !trying.load(Ordering::SeqCst) {
            std::thread::yield_now();
        }
        std::thread::sleep(Duration::from_millis(100));
        drop(held);
        t.join().unwrap();
        // Of any HOLD_SAMPLE holds in a row on this thread, one is timed, and counts for
        // HOLD_SAMPLE holds: at least that many times 20 ms.
        for _ in 0..HOLD_SAMPLE {
            let _held = lock(Stage::SsiGraph, &m);
            std::thread::sleep(Duration::from_millis(20));
        }
        let after = counts(Stage::SsiGraph);
        assert_eq!(*m.lock(), 1);
        assert!(after.acquisitions >= before.acquisitions + 2 + u64::from(HOLD_SAMPLE));
        assert!(after.waits > before.waits, "the second locker waited");
        assert!(after.busy_ns >= before.busy_ns + u64::from(HOLD_SAMPLE) * 20_000_000);
    }
}
