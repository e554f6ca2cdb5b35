//! The primary's side: the walsenders streaming to standbys, what each last reported, the
//! replication slots, and the synchronous replication task that turns reports into the
//! quorum positions commits wait for.
//!
//! A walsender only records a standby's report and raises `changed`; the one task
//! ([`Replication::run_syncrep`]) reads every report, decides the quorum
//! ([`quorum::decide`]) and publishes the result to the visibility tracker, whose single
//! broadcast releases every commit it reaches. So reports from several standbys that
//! arrive together cost one decision and one publish, and no lock is held while commits
//! are woken.

use std::collections::VecDeque;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use parking_lot::{Condvar, Mutex};

use super::identity::Identity;
use super::location::{Layout, WalLocation};
use super::machine;
use super::names::{self, SyncStandbys};
use super::quorum::{self, Replicated, StandbyPositions, SyncState};
use super::slots::Slots;
use crate::error::{Error, Result, SqlState};
use crate::settings::Settings;
use crate::txn::TxnManager;
use crate::wal::Lsn;

/// How often the log says which synchronous standbys are missing while commits wait.
const MISSING_LOG_INTERVAL: Duration = Duration::from_secs(5);
/// Send times kept per standby for the lag columns (older ones are thinned out).
const LAG_SAMPLES: usize = 1024;

/// A walsender's state, as `pg_stat_replication.state` shows it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SenderState {
    Startup,
    /// Sending log the standby is behind on.
    Catchup,
    /// Caught up at least once: it counts toward the quorum.
    Streaming,
    Stopping,
}

impl SenderState {
    pub fn name(self) -> &'static str {
        match self {
            SenderState::Startup => "startup",
            SenderState::Catchup => "catchup",
            SenderState::Streaming => "streaming",
            SenderState::Stopping => "stopping",
        }
    }
}

/// One walsender, as `pg_stat_replication` shows it.
#[derive(Clone, Debug)]
pub struct SenderInfo {
    pub id: u64,
    pub pid: i32,
    pub user: String,
    pub application_name: String,
    pub client: Option<SocketAddr>,
    pub backend_start_us: i64,
    pub state: SenderState,
    pub slot: Option<String>,
    pub timeline: u32,
    pub sent: WalLocation,
    pub write: WalLocation,
    pub flush: WalLocation,
    pub apply: WalLocation,
    /// How long the last report's positions took from send to write, flush and apply.
    pub write_lag_us: Option<i64>,
    pub flush_lag_us: Option<i64>,
    pub apply_lag_us: Option<i64>,
    pub reply_time_us: Option<i64>,
    pub sync_priority: u32,
    pub sync_state: SyncState,
    /// When each location was sent, for the lags (bounded).
    sent_times: VecDeque<(WalLocation, i64)>,
}

#[derive(Default)]
struct Signal {
    changed: Mutex<bool>,
    cv: Condvar,
}

/// What the primary knows of its replication.
pub struct Replication {
    pub layout: Layout,
    pub system_id: u64,
    /// The current timeline (see `identity`), and the identity it is kept in.
    timeline: AtomicU32,
    identity: Mutex<Identity>,
    /// Where the identity lives (none without a data directory).
    data_dir: Option<PathBuf>,
    senders: Mutex<Vec<SenderInfo>>,
    next_sender: AtomicU64,
    max_senders: usize,
    pub slots: Mutex<Slots>,
    signal: Signal,
    stopping: AtomicBool,
    /// The quorum's last decision, the value it was made for, and what was published.
    published: Mutex<(Option<SyncStandbys>, Replicated)>,
    /// The same positions, for walsenders to read without that lock.
    published_write: AtomicU64,
    published_flush: AtomicU64,
    published_apply: AtomicU64,
}

/// A registered walsender; unregisters (and releases its slot) when dropped.
pub struct SenderGuard {
    repl: Arc<Replication>,
    pub id: u64,
    pid: i32,
}

impl Drop for SenderGuard {
    fn drop(&mut self) {
        self.repl.senders.lock().retain(|s| s.id != self.id);
        self.repl.slots.lock().release_all(self.pid);
        self.repl.notify();
    }
}

/// Who a walsender serves.
pub struct SenderStart {
    pub pid: i32,
    pub user: String,
    pub application_name: String,
    pub client: Option<SocketAddr>,
    pub slot: Option<String>,
    pub start: WalLocation,
}

impl Replication {
    pub fn new(
        data_dir: Option<&Path>,
        settings: &Settings,
        identity: Identity,
    ) -> Result<Replication> {
        let slots = Slots::load(
            data_dir,
            settings.get_int("max_replication_slots").max(0) as usize,
        )?;
        Ok(Replication {
            layout: Layout::default(),
            system_id: identity.system_id,
            timeline: AtomicU32::new(identity.timeline),
            identity: Mutex::new(identity),
            data_dir: data_dir.map(Path::to_path_buf),
            senders: Mutex::new(Vec::new()),
            next_sender: AtomicU64::new(1),
            max_senders: settings.get_int("max_wal_senders").max(0) as usize,
            slots: Mutex::new(slots),
            signal: Signal::default(),
            stopping: AtomicBool::new(false),
            published: Mutex::new((None, Replicated::UNCONDITIONAL)),
            published_write: AtomicU64::new(u64::MAX),
            published_flush: AtomicU64::new(u64::MAX),
            published_apply: AtomicU64::new(u64::MAX),
        })
    }

    pub fn timeline(&self) -> u32 {
        self.timeline.load(Ordering::Acquire)
    }

    pub fn identity(&self) -> Identity {
        self.identity.lock().clone()
    }

    /// Change the identity durably (a promotion, a fence, a standby that follows a new
    /// timeline), then the timeline others read.
    pub fn update_identity(&self, f: impl FnOnce(&mut Identity)) -> Result<()> {
        let mut id = self.identity.lock();
        let mut next = id.clone();
        f(&mut next);
        if let Some(dir) = &self.data_dir {
            next.save(dir)?;
        }
        self.timeline.store(next.timeline, Ordering::Release);
        *id = next;
        Ok(())
    }

    /// The timeline that fenced this server off, if a newer one exists.
    pub fn fenced_by(&self) -> Option<u32> {
        self.identity.lock().fenced_by
    }

    /// Register a walsender that starts streaming at `start`.
    pub fn register(self: &Arc<Self>, s: SenderStart) -> Result<SenderGuard> {
        let mut senders = self.senders.lock();
        if senders.len() >= self.max_senders {
            return Err(Error::new(
                SqlState::TOO_MANY_CONNECTIONS,
                format!(
                    "number of requested standby connections exceeds max_wal_senders (currently {})",
                    self.max_senders
                ),
            ));
        }
        if let Some(slot) = &s.slot {
            self.slots
                .lock()
                .acquire(slot, s.pid, self.layout.lsn(s.start))?;
        }
        let id = self.next_sender.fetch_add(1, Ordering::Relaxed);
        senders.push(SenderInfo {
            id,
            pid: s.pid,
            user: s.user,
            application_name: s.application_name,
            client: s.client,
            backend_start_us: crate::types::now_us(),
            state: SenderState::Catchup,
            slot: s.slot,
            timeline: self.timeline(),
            sent: s.start,
            write: WalLocation(0),
            flush: WalLocation(0),
            apply: WalLocation(0),
            write_lag_us: None,
            flush_lag_us: None,
            apply_lag_us: None,
            reply_time_us: None,
            sync_priority: 0,
            sync_state: SyncState::Async,
            sent_times: VecDeque::new(),
        });
        drop(senders);
        self.notify();
        Ok(SenderGuard {
            repl: self.clone(),
            id,
            pid: s.pid,
        })
    }

    fn with_sender(&self, id: u64, f: impl FnOnce(&mut SenderInfo)) {
        if let Some(s) = self.senders.lock().iter_mut().find(|s| s.id == id) {
            f(s);
        }
    }

    /// The walsender sent the log up to `upto`; `caught_up`: that is all there is.
    pub fn sent(&self, id: u64, upto: WalLocation, caught_up: bool) {
        let now = crate::types::now_us();
        let mut became_streaming = false;
        self.with_sender(id, |s| {
            let advanced = s.sent_times.back().is_none_or(|&(l, _)| l < upto);
            s.sent = upto;
            if !advanced {
                // Nothing new was sent: the lag of what is out stays measured from its send.
            } else if s.sent_times.len() >= LAG_SAMPLES {
                // Thin out: keep every other sample.
                let kept: VecDeque<_> = s.sent_times.iter().step_by(2).cloned().collect();
                s.sent_times = kept;
                s.sent_times.push_back((upto, now));
            } else {
                s.sent_times.push_back((upto, now));
            }
            if caught_up && s.state == SenderState::Catchup {
                s.state = SenderState::Streaming;
                became_streaming = true;
            }
        });
        if became_streaming {
            self.notify();
        }
    }

    /// A standby status update: how far the standby has written, flushed and applied.
    /// Positions never move back (a report that does is stale, from before a reconnect).
    pub fn report(&self, id: u64, write: WalLocation, flush: WalLocation, apply: WalLocation) {
        let now = crate::types::now_us();
        let mut slot = None;
        self.with_sender(id, |s| {
            let lag = |times: &VecDeque<(WalLocation, i64)>, at: WalLocation| {
                times
                    .iter()
                    .rev()
                    .find(|(l, _)| *l <= at)
                    .map(|&(_, t)| (now - t).max(0))
            };
            if write > s.write {
                s.write_lag_us = lag(&s.sent_times, write).or(s.write_lag_us);
            }
            if flush > s.flush {
                s.flush_lag_us = lag(&s.sent_times, flush).or(s.flush_lag_us);
            }
            if apply > s.apply {
                s.apply_lag_us = lag(&s.sent_times, apply).or(s.apply_lag_us);
            }
            let mut r = machine::Reported {
                write: s.write,
                flush: s.flush,
                apply: s.apply,
            };
            r.merge(write, flush, apply);
            (s.write, s.flush, s.apply) = (r.write, r.flush, r.apply);
            let oldest = s.write.min(s.flush).min(s.apply);
            while s.sent_times.len() > 1 && s.sent_times[1].0 <= oldest {
                s.sent_times.pop_front();
            }
            s.reply_time_us = Some(now);
            slot = s.slot.clone().map(|name| (name, s.flush));
        });
        if let Some((name, flush)) = slot {
            self.slots.lock().advance(&name, self.layout.lsn(flush));
        }
        // A report at or below every published quorum position cannot raise one (the
        // quorum is a minimum or an n-th highest of the reports): the task is not woken
        // for it. Without synchronous standbys nothing is woken at all.
        let reported = machine::Reported {
            write,
            flush,
            apply,
        };
        let published = self.published_now();
        if machine::may_raise(&reported, &published, |l| self.layout.lsn(l)) {
            self.notify();
        }
    }

    /// The quorum positions last published (read without the task's lock).
    fn published_now(&self) -> Replicated {
        Replicated {
            write: Lsn(self.published_write.load(Ordering::Acquire)),
            flush: Lsn(self.published_flush.load(Ordering::Acquire)),
            apply: Lsn(self.published_apply.load(Ordering::Acquire)),
        }
    }

    /// Every walsender, for `pg_stat_replication`.
    pub fn senders(&self) -> Vec<SenderInfo> {
        self.senders.lock().clone()
    }

    /// Wake the synchronous replication task.
    pub fn notify(&self) {
        *self.signal.changed.lock() = true;
        self.signal.cv.notify_one();
    }

    /// The lowest log position replication still needs: segments at or above it are
    /// kept. Also writes the slots' moved positions (the checkpoint calls this before it
    /// retires segments).
    pub fn retention(&self) -> Result<Option<Lsn>> {
        let mut slots = self.slots.lock();
        slots.save_if_moved()?;
        let senders = self
            .senders
            .lock()
            .iter()
            .map(|s| {
                self.layout
                    .lsn(s.sent.min(if s.flush.0 > 0 { s.flush } else { s.sent }))
            })
            .min();
        Ok(match (slots.oldest_needed(), senders) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        })
    }

    pub fn stop(&self) {
        self.stopping.store(true, Ordering::Release);
        self.notify();
    }

    /// The synchronous replication task: decide the quorum whenever a report, a sender
    /// or the configuration changed, and publish it; while commits wait for standbys
    /// that are missing, say so in the log every few seconds.
    pub fn run_syncrep(&self, settings: &Settings, txn: &TxnManager) {
        let mut last_missing_log: Option<Instant> = None;
        loop {
            {
                let mut changed = self.signal.changed.lock();
                if !*changed {
                    self.signal
                        .cv
                        .wait_for(&mut changed, Duration::from_secs(1));
                }
                *changed = false;
            }
            if self.stopping.load(Ordering::Acquire) {
                return;
            }
            let config = settings
                .show("synchronous_standby_names")
                .and_then(|v| names::parse(&v).ok().flatten());
            let mut senders = self.senders.lock();
            let positions: Vec<StandbyPositions> = senders
                .iter()
                .map(|s| StandbyPositions {
                    application_name: s.application_name.clone(),
                    streaming: s.state == SenderState::Streaming,
                    write: self.layout.lsn(s.write),
                    flush: self.layout.lsn(s.flush),
                    apply: self.layout.lsn(s.apply),
                })
                .collect();
            let decision = quorum::decide(config.as_ref(), &positions);
            for (s, &(priority, state)) in senders.iter_mut().zip(&decision.states) {
                s.sync_priority = priority;
                s.sync_state = state;
            }
            drop(senders);
            let publish = {
                let mut published = self.published.lock();
                let next = machine::next_published(
                    &published.0,
                    published.1,
                    &config,
                    decision.replicated,
                );
                if let Some(next) = next {
                    *published = (config.clone(), next);
                    self.published_write.store(next.write.0, Ordering::Release);
                    self.published_flush.store(next.flush.0, Ordering::Release);
                    self.published_apply.store(next.apply.0, Ordering::Release);
                }
                next
            };
            if let Some(next) = publish {
                txn.visibility.replicated(next);
            }
            if decision.replicated.is_none() {
                let due = last_missing_log.is_none_or(|t| t.elapsed() >= MISSING_LOG_INTERVAL);
                let waiting = txn.visibility.waiting_for_standbys();
                if due && waiting > 0 {
                    last_missing_log = Some(Instant::now());
                    self.log_missing(config.as_ref(), &positions, waiting);
                }
            }
        }
    }

    fn log_missing(
        &self,
        config: Option<&SyncStandbys>,
        have: &[StandbyPositions],
        waiting: usize,
    ) {
        let Some(config) = config else { return };
        let streaming: Vec<&str> = have
            .iter()
            .filter(|s| s.streaming && config.priority(&s.application_name) > 0)
            .map(|s| s.application_name.as_str())
            .collect();
        let missing: Vec<&str> = config
            .names
            .iter()
            .filter(|n| n.as_str() != "*" && !streaming.iter().any(|s| s.eq_ignore_ascii_case(n)))
            .map(|s| s.as_str())
            .collect();
        tracing::warn!(
            "{waiting} commit(s) waiting for synchronous replication: {} of {} synchronous standby(s) streaming ({}); not streaming: {}",
            streaming.len(),
            config.num_sync,
            if streaming.is_empty() { "none".to_string() } else { streaming.join(", ") },
            if missing.is_empty() { "-".to_string() } else { missing.join(", ") },
        );
    }
}
