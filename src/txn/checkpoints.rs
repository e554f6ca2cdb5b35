//! The checkpointer: decides when to take a checkpoint and takes it, on its own thread.
//!
//! A checkpoint starts when `checkpoint_timeout` has passed since the last one started
//! (and something changed), when the WAL written since the last redo LSN passes
//! `max_wal_size / (1 + checkpoint_completion_target)` (so that, paced as it is, the
//! checkpoint ends before `max_wal_size` of WAL accumulates, as in PostgreSQL), or on the
//! `CHECKPOINT` command, which waits for a checkpoint that started after it asked.
//!
//! A bulk load writes its pages instead of logging its rows, and its record pins those
//! pages' slots until a checkpoint past it is durable (`storage::pool`): they stand in for
//! the WAL that recovery would otherwise need, so they count toward the same limit. When
//! the WAL and the pinned bulk-load pages together pass it, a checkpoint starts at full
//! speed (reason "bulk load"): it has only the pool's dirty pages to write, and until it
//! is done every page of the load that is changed again takes a second slot, growing the
//! page file by up to the load's size.
//!
//! Taking one: at the barrier ([`TxnManager::at_checkpoint_barrier`]) the redo LSN and the
//! page image are fixed and the catalog image is taken; the image is written by
//! [`Checkpointer::run`], paced over `checkpoint_completion_target × checkpoint_timeout`
//! unless the checkpoint was requested or is the shutdown checkpoint (then at full speed);
//! the WAL is made durable up to
//! the redo LSN before the control file switches; then the WAL segments below the redo LSN
//! are retired: kept as spares for the segments to come, as many as the next cycle is
//! estimated to need, and the rest removed (`wal::log`). Commits never wait for any of it:
//! they only pass the barrier, held for the time it takes to note which frames are dirty.
//!
//! Between checkpoints the thread grows the page file with zeros, a batch at a time, until
//! it has a free slot for every dirty page and a margin more (`storage::pool`,
//! `prepare_slots`), so that the next checkpoint overwrites blocks the file system already
//! holds instead of growing the file in its burst of writes. A failure there (a full
//! disk) is logged and tried again later: nothing refers to those slots.
//!
//! A checkpoint that cannot write for lack of space (53100) is abandoned, as any failed
//! checkpoint is before its switch: the durable checkpoint stays as it was, and every
//! change since is safe in the WAL. It is logged and tried again after `CHECKPOINT_RETRY`
//! (a `CHECKPOINT` command gets the error). Any other failed write, and every failed sync,
//! stops the server, as one of the WAL does.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use parking_lot::{Condvar, Mutex, MutexGuard};

use super::TxnManager;
use crate::constants::{PREPARE_BATCH_SLOTS, PREPARE_PAUSE};
use crate::error::{Error, Result, SqlState};
use crate::settings::Settings;
use crate::storage::checkpoint::{CheckpointStats, Checkpointer, Control, Pacing};
use crate::wal::{Lsn, Retired};

/// How often the checkpointer looks at the clock and the WAL when nothing wakes it.
const POLL: Duration = Duration::from_millis(500);
/// After a failed extension of the page file (a full disk), the next try waits this long.
const PREPARE_RETRY: Duration = Duration::from_secs(10);
/// After a checkpoint failed for lack of space, the next one (other than one a
/// `CHECKPOINT` command asks for) waits this long.
const CHECKPOINT_RETRY: Duration = Duration::from_secs(2);

/// Why a checkpoint was taken, as `log_checkpoints` says it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reason {
    Time,
    Wal,
    BulkLoad,
    Requested,
    Shutdown,
}

impl Reason {
    fn name(self) -> &'static str {
        match self {
            Reason::Time => "time",
            Reason::Wal => "wal",
            Reason::BulkLoad => "bulk load",
            Reason::Requested => "immediate force wait",
            Reason::Shutdown => "shutdown immediate",
        }
    }
}

/// What `pg_stat_checkpointer` shows.
#[derive(Clone, Copy, Debug, Default)]
pub struct CheckpointerStats {
    pub num_timed: u64,
    pub num_requested: u64,
    pub write_time_ms: f64,
    pub sync_time_ms: f64,
    pub buffers_written: u64,
    /// Microseconds since 2000-01-01 UTC.
    pub stats_reset_us: i64,
}

struct State {
    /// The durable checkpoint.
    last: Control,
    last_started: Instant,
    /// A `CHECKPOINT` command is waiting for the next checkpoint to start.
    requested: bool,
    started: u64,
    completed: u64,
    shutdown: bool,
    /// The WAL a checkpoint cycle writes, as PostgreSQL estimates it: the last distance
    /// if it was larger, else a slow decay towards it (how many retired segments to keep).
    distance_estimate_bytes: u64,
    /// The last checkpoint that failed for lack of space: its number (`completed` when it
    /// ended) and its error.
    failed: Option<(u64, Error)>,
    /// No checkpoint starts on its own before this (after one failed for lack of space).
    retry_at: Option<Instant>,
}

pub struct Checkpoints {
    files: Checkpointer,
    settings: Arc<Settings>,
    state: Mutex<State>,
    /// Wakes the checkpointer thread.
    wake: Condvar,
    /// Wakes `CHECKPOINT` commands waiting for a checkpoint to complete.
    done: Condvar,
    stats: Mutex<CheckpointerStats>,
    /// Set by a `CHECKPOINT` command or a shutdown: a paced checkpoint that is running
    /// finishes at full speed.
    hurry: Arc<AtomicBool>,
    /// Whether a checkpoint is running, and how many base backups hold them off.
    holds: Mutex<(bool, u32)>,
    hold_changed: Condvar,
}

/// See [`Checkpoints::hold`].
pub struct CheckpointHold {
    checkpoints: Arc<Checkpoints>,
}

impl Drop for CheckpointHold {
    fn drop(&mut self) {
        self.checkpoints.holds.lock().1 -= 1;
        self.checkpoints.hold_changed.notify_all();
    }
}

/// The next estimate of a checkpoint cycle's WAL, after a cycle that wrote `distance`.
fn next_distance_estimate(estimate: u64, distance: u64) -> u64 {
    if distance >= estimate {
        distance
    } else {
        (estimate as f64 * 0.9 + distance as f64 * 0.1) as u64
    }
}

impl Checkpoints {
    /// `last` is the checkpoint recovery started from (epoch 0, redo 0 for none).
    pub fn new(files: Checkpointer, settings: Arc<Settings>, last: Control) -> Checkpoints {
        Checkpoints {
            files,
            settings,
            state: Mutex::new(State {
                last,
                last_started: Instant::now(),
                requested: false,
                started: 0,
                completed: 0,
                shutdown: false,
                distance_estimate_bytes: 0,
                failed: None,
                retry_at: None,
            }),
            wake: Condvar::new(),
            done: Condvar::new(),
            stats: Mutex::new(CheckpointerStats {
                stats_reset_us: crate::types::now_us(),
                ..CheckpointerStats::default()
            }),
            hurry: Arc::default(),
            holds: Mutex::new((false, 0)),
            hold_changed: Condvar::new(),
        }
    }

    pub fn stats(&self) -> CheckpointerStats {
        *self.stats.lock()
    }

    /// The current durable checkpoint.
    pub fn last(&self) -> Control {
        self.state.lock().last
    }

    /// `CHECKPOINT`: ask for a checkpoint at full speed; the ticket is what
    /// [`Checkpoints::wait_for`] waits for: a checkpoint that started after this call.
    pub fn request(&self) -> u64 {
        let mut st = self.state.lock();
        st.requested = true;
        self.hurry.store(true, Ordering::Release);
        self.wake.notify_one();
        st.started + 1
    }

    /// Wait until the checkpoint of `ticket` has ended (blocking the thread). Its error
    /// if it failed for lack of space; nothing to wait for if the checkpointer stopped
    /// first (the shutdown checkpoint follows).
    pub fn wait_for(&self, ticket: u64) -> Result<()> {
        let mut st = self.state.lock();
        while st.completed < ticket && !st.shutdown {
            self.done.wait(&mut st);
        }
        match &st.failed {
            Some((n, e)) if *n == st.completed && *n >= ticket => Err(e.clone()),
            _ => Ok(()),
        }
    }

    /// Stop the checkpointer thread (after the checkpoint it is writing, if any).
    pub fn stop(&self) {
        self.state.lock().shutdown = true;
        self.hurry.store(true, Ordering::Release);
        self.wake.notify_all();
        self.done.notify_all();
    }

    fn completion_target(&self) -> f64 {
        self.settings
            .show("checkpoint_completion_target")
            .and_then(|v| v.parse::<f64>().ok())
            .unwrap_or(0.9)
    }

    fn timeout(&self) -> Duration {
        Duration::from_secs(self.settings.get_int("checkpoint_timeout").max(1) as u64)
    }

    /// WAL bytes since the last redo LSN that start a checkpoint.
    fn wal_trigger_bytes(&self) -> u64 {
        let max_wal_bytes = self.settings.get_int("max_wal_size").max(1) as f64 * 1024.0;
        (max_wal_bytes / (1.0 + self.completion_target())) as u64
    }

    /// The checkpointer thread: runs until [`Checkpoints::stop`].
    ///
    /// While it waits, it extends the page file ahead of the next checkpoint's writes
    /// ([`crate::storage::pool::BufferPool::prepare_slots`]), one batch per `PREPARE_PAUSE`.
    pub fn run(&self, txn: &TxnManager) {
        let mut next_prepare = Instant::now();
        loop {
            let reason = {
                let mut st = self.state.lock();
                loop {
                    if st.shutdown {
                        return;
                    }
                    if st.requested {
                        break Reason::Requested;
                    }
                    if st.retry_at.is_some_and(|at| Instant::now() < at) {
                        self.wake.wait_for(&mut st, POLL);
                        continue;
                    }
                    let end = txn.wal.as_ref().map_or(Lsn::ZERO, |w| w.end_lsn());
                    let wal_bytes = end.0.saturating_sub(st.last.redo.0);
                    if wal_bytes >= self.wal_trigger_bytes() {
                        break Reason::Wal;
                    }
                    let pinned_bytes = txn.catalog.pool().logged_bytes();
                    if wal_bytes + pinned_bytes >= self.wal_trigger_bytes() {
                        break Reason::BulkLoad;
                    }
                    let due = st.last_started + self.timeout();
                    let now = Instant::now();
                    if now >= due {
                        break Reason::Time;
                    }
                    if now >= next_prepare {
                        let pool = txn.catalog.pool();
                        let prepared = MutexGuard::unlocked(&mut st, || {
                            pool.prepare_slots(PREPARE_BATCH_SLOTS)
                        });
                        next_prepare = match prepared {
                            Ok(0) => now + POLL,
                            Ok(_) => now + PREPARE_PAUSE,
                            Err(e) => {
                                tracing::warn!("{e}; trying again in {PREPARE_RETRY:?}");
                                now + PREPARE_RETRY
                            }
                        };
                        // A request may have come while the lock was free.
                        continue;
                    }
                    let wait = (due - now).min(POLL).min(next_prepare - now);
                    self.wake.wait_for(&mut st, wait);
                }
            };
            let taken = self.checkpoint(txn, reason);
            let mut st = self.state.lock();
            st.completed += 1;
            match taken {
                Ok(()) => st.retry_at = None,
                Err(e) if e.code == SqlState::DISK_FULL => {
                    tracing::warn!(
                        "checkpoint failed: {}; the changes since the last checkpoint are safe in the WAL; trying again in {CHECKPOINT_RETRY:?}",
                        e.message
                    );
                    st.failed = Some((st.completed, e));
                    st.retry_at = Some(Instant::now() + CHECKPOINT_RETRY);
                }
                Err(e) => {
                    self.done.notify_all();
                    drop(st);
                    crate::error::stop_server(&format!("checkpoint failed: {e}"));
                }
            }
            self.done.notify_all();
        }
    }

    /// Take one checkpoint now. A timed checkpoint when nothing changed is skipped. It
    /// waits while a base backup holds checkpoints off ([`Checkpoints::hold`]).
    pub fn checkpoint(&self, txn: &TxnManager, reason: Reason) -> Result<()> {
        {
            let mut h = self.holds.lock();
            while h.1 > 0 {
                self.hold_changed.wait(&mut h);
            }
            h.0 = true;
        }
        let result = self.checkpoint_now(txn, reason);
        self.holds.lock().0 = false;
        self.hold_changed.notify_all();
        result
    }

    /// Keep checkpoints from starting until the returned hold is dropped (waiting for one
    /// that is running to end first): while it is held, the durable checkpoint's page
    /// slots and map stay as they are and no log segment is retired, so a base backup can
    /// copy them. Blocks the calling thread.
    pub fn hold(self: &Arc<Self>) -> CheckpointHold {
        let mut h = self.holds.lock();
        while h.0 {
            self.hold_changed.wait(&mut h);
        }
        h.1 += 1;
        CheckpointHold {
            checkpoints: self.clone(),
        }
    }

    fn checkpoint_now(&self, txn: &TxnManager, reason: Reason) -> Result<()> {
        let started_at = Instant::now();
        let last = {
            let mut st = self.state.lock();
            // Hurry only for a request or shutdown that this checkpoint serves.
            self.hurry
                .store(st.requested || st.shutdown, Ordering::Release);
            st.requested = false;
            st.started += 1;
            st.last_started = started_at;
            st.last
        };
        let epoch = last.epoch + 1;
        let pool = txn.catalog.pool();
        let (redo, pending, catalog, oldest_piece) = txn.at_checkpoint_barrier(|end| {
            (
                end,
                pool.begin_image(epoch),
                txn.catalog.image(),
                txn.oldest_piece(),
            )
        });
        if reason == Reason::Time && redo == last.redo && pending.is_empty() {
            pool.abort_image();
            return Ok(());
        }
        let log = self.settings.get_bool("log_checkpoints");
        if log {
            tracing::info!("checkpoint starting: {}", reason.name());
        }
        // A `CHECKPOINT` command (and shutdown) writes at full speed, as PostgreSQL's does:
        // pacing it at 128 MiB/s was measured to deepen the dip (copy on first write lasts
        // as long as the checkpoint runs).
        let deadline = matches!(reason, Reason::Time | Reason::Wal)
            .then(|| started_at + self.timeout().mul_f64(self.completion_target()));
        let pacing = Pacing {
            deadline,
            hurry: self.hurry.clone(),
            flush_after_bytes: self.settings.get_int("checkpoint_flush_after").max(0) as u64 * 1024,
        };
        let control = Control { epoch, redo };
        let stats = self
            .files
            .run(pool, &pending, control, &catalog, pacing, || {
                if let Some(wal) = &txn.wal {
                    wal.flush_now(redo);
                }
                Ok(())
            })?;
        // Keep spares for as much WAL as a cycle is expected to write, never more than
        // max_wal_size: PostgreSQL recycles on the same estimate.
        let distance_bytes = redo.0.saturating_sub(last.redo.0);
        let estimate_bytes = {
            let mut st = self.state.lock();
            st.distance_estimate_bytes =
                next_distance_estimate(st.distance_estimate_bytes, distance_bytes);
            st.distance_estimate_bytes
        };
        let max_wal_bytes = self.settings.get_int("max_wal_size").max(1) as u64 * 1024;
        // Standbys and slots keep the log they still need.
        let replication = match txn.retention.get() {
            Some(floor) => floor()?,
            None => None,
        };
        let (added, retired) = match &txn.wal {
            Some(wal) => (
                wal.take_segments_added(),
                // A commit logging its rows in pieces may land after the redo LSN with
                // pieces before it: recovery reads them back, so they are kept.
                wal.retire_segments_before(
                    [Some(redo), oldest_piece, replication]
                        .into_iter()
                        .flatten()
                        .min()
                        .unwrap_or(redo),
                    estimate_bytes.min(max_wal_bytes),
                )?,
            ),
            None => (0, Retired::default()),
        };
        self.state.lock().last = control;
        self.record(reason, &stats);
        if log {
            let total = started_at.elapsed().as_secs_f64();
            let frames = pool.frames().max(1) as f64;
            tracing::info!(
                "checkpoint complete: wrote {} buffers ({:.1}%); {added} WAL file(s) added, {} removed, {} recycled; write={:.3} s, sync={:.3} s, total={total:.3} s; sync files={}, longest={:.3} s, average={:.3} s; distance={} kB; redo lsn={redo}",
                stats.pages_written,
                stats.pages_written as f64 * 100.0 / frames,
                retired.removed,
                retired.recycled,
                stats.write_time_us as f64 / 1e6,
                stats.sync_time_us as f64 / 1e6,
                stats.syncs,
                stats.longest_sync_us as f64 / 1e6,
                stats.sync_time_us as f64 / 1e6 / stats.syncs.max(1) as f64,
                distance_bytes / 1024,
            );
        }
        Ok(())
    }

    fn record(&self, reason: Reason, stats: &CheckpointStats) {
        let mut s = self.stats.lock();
        match reason {
            Reason::Time => s.num_timed += 1,
            Reason::Wal | Reason::BulkLoad | Reason::Requested | Reason::Shutdown => {
                s.num_requested += 1
            }
        }
        s.write_time_ms += stats.write_time_us as f64 / 1000.0;
        s.sync_time_ms += stats.sync_time_us as f64 / 1000.0;
        s.buffers_written += stats.pages_written;
    }
}

#[cfg(test)]
mod tests {
    use super::next_distance_estimate;

    #[test]
    fn the_distance_estimate_rises_at_once_and_decays_slowly() {
        assert_eq!(next_distance_estimate(0, 1000), 1000);
        assert_eq!(next_distance_estimate(1000, 4000), 4000);
        // A CHECKPOINT right after another writes nothing: the estimate barely moves.
        assert_eq!(next_distance_estimate(4000, 0), 3600);
        assert_eq!(next_distance_estimate(3600, 1600), 3400);
    }
}
