//! The transaction manager: transaction ids, snapshots, the commit path, and the registry
//! of sessions (for cancellation and for the oldest live snapshot).

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use parking_lot::{Mutex, RwLock};
use rustc_hash::FxHashMap;

use super::records;
use super::{LockTable, TxnId, VisibilityTracker, WriteSet};
use crate::constants::WRITE_SET_PIECE_BYTES;
use crate::error::{Error, Result, SqlState};
use crate::stages::{self, Stage};
use crate::storage::page::{MAX_INLINE_CELL_BYTES, OVERFLOW_DATA_BYTES};
use crate::storage::pool::FramePromise;
use crate::storage::{Catalog, Key, Sequence, TableId};
use crate::wal::record::RECORD_HEADER_BYTES;
use crate::wal::{LogReservation, Lsn, PendingRecord, RecordKind, SyncLevel, Wal, Writer};

/// Sequence values logged ahead of use, as PostgreSQL's SEQ_LOG_VALS.
const SEQUENCE_LOG_AHEAD: i64 = 32;

/// A transaction's isolation level, as PostgreSQL has them. READ UNCOMMITTED behaves as
/// READ COMMITTED (as in PostgreSQL) and differs only in its name.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Isolation {
    ReadUncommitted,
    ReadCommitted,
    RepeatableRead,
    /// REPEATABLE READ that also fails a transaction where a cycle of dependencies among
    /// serializable transactions could form ([`super::Ssi`]).
    Serializable,
}

impl Isolation {
    pub fn name(&self) -> &'static str {
        match self {
            Isolation::ReadUncommitted => "read uncommitted",
            Isolation::ReadCommitted => "read committed",
            Isolation::RepeatableRead => "repeatable read",
            Isolation::Serializable => "serializable",
        }
    }

    /// The level `default_transaction_isolation` names (as SHOW prints it).
    pub fn from_name(name: &str) -> Option<Isolation> {
        [
            Isolation::ReadUncommitted,
            Isolation::ReadCommitted,
            Isolation::RepeatableRead,
            Isolation::Serializable,
        ]
        .into_iter()
        .find(|i| i.name() == name)
    }

    /// One snapshot for the whole transaction (REPEATABLE READ, SERIALIZABLE), not one
    /// per statement (READ COMMITTED).
    pub fn snapshot_per_transaction(&self) -> bool {
        matches!(self, Isolation::RepeatableRead | Isolation::Serializable)
    }
}

/// Microseconds since the first call, on a monotonic clock (never 0 after the first
/// call's first microsecond: callers use 0 for "none").
fn monotonic_us() -> u64 {
    static START: OnceLock<Instant> = OnceLock::new();
    START.get_or_init(Instant::now).elapsed().as_micros() as u64 + 1
}

/// What the manager knows of a session: its cancel key and flag, and its live snapshot.
pub struct SessionSlot {
    pub pid: i32,
    pub secret: i32,
    /// Raised by a CancelRequest; the running statement checks it and fails with 57014.
    pub cancel: AtomicBool,
    /// Notified with each cancel request, for a wait that sleeps (synchronous replication).
    pub cancelled: tokio::sync::Notify,
    /// The snapshot the session currently reads at, or 0 when it holds none.
    snapshot: AtomicU64,
    /// The newest commit whose installed version the session has read above its
    /// snapshot (as a lock holder reads the latest version of a row), or 0: see
    /// [`SessionSlot::saw_commit`].
    seen_commit_lsn: AtomicU64,
    /// When the running statement's `statement_timeout` runs out, if it has one.
    statement_deadline: Mutex<Option<Instant>>,
    /// The session's `lock_timeout` in milliseconds (0: none), for its lock waits.
    lock_timeout_ms: AtomicU64,
    /// When the running statement, if it is still running, hands its thread's runtime
    /// core on ([`crate::wal::release_core`]): microseconds on [`monotonic_us`]'s clock,
    /// 0 once done or when no statement runs.
    core_release_at_us: AtomicU64,
    /// What the session is waiting for, as pg_stat_activity's (wait_event_type,
    /// wait_event) show it.
    pub wait_event: Mutex<Option<(&'static str, &'static str)>>,
    /// What pg_stat_activity shows of the session.
    pub activity: Mutex<Activity>,
}

/// A session's row in pg_stat_activity.
#[derive(Clone, Debug, Default)]
pub struct Activity {
    pub user: String,
    pub application_name: String,
    /// The client's IP address and port; `None` for a Unix-domain socket.
    pub client: Option<std::net::SocketAddr>,
    /// `active`, `idle`, `idle in transaction`, `idle in transaction (aborted)`.
    pub state: &'static str,
    pub query: String,
    /// Microseconds since 2000-01-01 UTC.
    pub backend_start_us: i64,
    pub query_start_us: Option<i64>,
    pub xact_start_us: Option<i64>,
    /// How the connection is encrypted, if it is.
    pub ssl: Option<SslStatus>,
}

/// A TLS connection's row in pg_stat_ssl.
#[derive(Clone, Debug)]
pub struct SslStatus {
    pub version: String,
    pub cipher: String,
    pub bits: i32,
    /// The client's verified certificate, if it sent one.
    pub client_certificate: Option<crate::auth::tls::ClientCertificate>,
}

impl SessionSlot {
    /// The session read a version installed by the commit at `lsn`, which may not be
    /// visible yet: its locks are released at install, before it is durable (see
    /// [`TxnManager::start_commit`]). Nothing the session says or reads after the
    /// statement that saw it may come before that commit is visible
    /// ([`TxnManager::wait_for_seen_commits`]); so no user can tell that the lock was
    /// released early.
    pub fn saw_commit(&self, lsn: Lsn) {
        self.seen_commit_lsn.fetch_max(lsn.0, Ordering::AcqRel);
    }

    /// A statement starts (not a re-run after a lock wait): its timeouts start now.
    pub fn start_statement(&self, statement_timeout_ms: u64, lock_timeout_ms: u64) {
        *self.statement_deadline.lock() = (statement_timeout_ms > 0)
            .then(|| Instant::now() + Duration::from_millis(statement_timeout_ms));
        self.lock_timeout_ms
            .store(lock_timeout_ms, Ordering::Relaxed);
        self.core_release_at_us.store(
            monotonic_us() + crate::constants::STATEMENT_CORE_RELEASE_US,
            Ordering::Relaxed,
        );
    }

    /// Whether the running statement must stop: a cancel request (57014) or its
    /// `statement_timeout` (57014).
    pub fn check_interrupts(&self) -> Result<()> {
        if self.cancel.load(Ordering::Acquire) {
            return Err(Error::canceled());
        }
        if self
            .statement_deadline
            .lock()
            .is_some_and(|d| Instant::now() >= d)
        {
            return Err(Error::new(
                SqlState::QUERY_CANCELED,
                "canceling statement due to statement timeout",
            ));
        }
        Ok(())
    }

    /// The periodic check of a statement's long work (between batches of rows, where it
    /// holds no lock another session may wait for): [`SessionSlot::check_interrupts`],
    /// and once the statement has run `STATEMENT_CORE_RELEASE_US`, its runtime's core is
    /// handed to another thread so that the connections sharing it are not held up
    /// (`server::workers`); if that did not happen at once, it is tried again later.
    pub fn check_in(&self) -> Result<()> {
        self.check_interrupts()?;
        let release_at = self.core_release_at_us.load(Ordering::Relaxed);
        if release_at != 0 && monotonic_us() >= release_at {
            self.core_release_at_us.store(0, Ordering::Relaxed);
            if !crate::wal::release_core() {
                self.core_release_at_us.store(
                    monotonic_us() + crate::constants::STATEMENT_CORE_RELEASE_US,
                    Ordering::Relaxed,
                );
            }
        }
        Ok(())
    }

    /// The statement is over (its result sent): nothing more hands a core on for it.
    pub fn end_statement(&self) {
        self.core_release_at_us.store(0, Ordering::Relaxed);
    }

    /// When the running statement's `statement_timeout` runs out, if it has one.
    pub fn statement_deadline(&self) -> Option<Instant> {
        *self.statement_deadline.lock()
    }

    /// What ends a lock wait that starts now: [`SessionSlot::check_interrupts`], and
    /// `lock_timeout` (55P03) counted from now.
    pub fn lock_wait_interrupts(&self) -> impl Fn() -> Result<()> + Sync + '_ {
        let ms = self.lock_timeout_ms.load(Ordering::Relaxed);
        let deadline = (ms > 0).then(|| Instant::now() + Duration::from_millis(ms));
        move || {
            self.check_interrupts()?;
            if deadline.is_some_and(|d| Instant::now() >= d) {
                return Err(Error::new(
                    SqlState::LOCK_NOT_AVAILABLE,
                    "canceling statement due to lock timeout",
                ));
            }
            Ok(())
        }
    }

    fn take_seen_commit(&self) -> Option<Lsn> {
        match self.seen_commit_lsn.swap(0, Ordering::AcqRel) {
            0 => None,
            lsn => Some(Lsn(lsn)),
        }
    }
}

/// How often a commit's wait for visibility checks whether synchronous standbys were
/// configured meanwhile ([`TxnManager::wait_for_standbys`]).
const SYNC_REP_INTERRUPT_POLL: Duration = Duration::from_millis(50);

fn set_wait_event(slot: Option<&SessionSlot>, event: Option<(&'static str, &'static str)>) {
    if let Some(s) = slot {
        *s.wait_event.lock() = event;
    }
}

/// A change is in the log but could not be applied in memory: stop now, and let recovery
/// apply it from the log (as a failed log write or sync does).
pub fn fatal_after_logging(what: &str, e: &crate::error::Error) -> ! {
    crate::error::stop_server(&format!("could not {what}: {e}"))
}

/// Held from a change's log append until it is installed and its locks are released: a
/// panic in between (a bug: every error there is already fatal) stops the server, as a
/// failed install does, rather than unwinding past a change that is in the log but only
/// partly in storage, with its row locks held forever. Recovery applies it from the log.
struct CriticalSection(&'static str);

impl Drop for CriticalSection {
    fn drop(&mut self) {
        if std::thread::panicking() {
            let message = format!("a panic while {}", self.0);
            // Unit tests unwind on purpose through here (`stop_server` panics in them).
            #[cfg(not(test))]
            crate::error::stop_server(&message);
            #[cfg(test)]
            tracing::error!("{message}");
        }
    }
}

/// Overflow pages a row image of `len` bytes takes.
fn overflow_pages_of(len: usize) -> usize {
    if len > MAX_INLINE_CELL_BYTES / 2 {
        len / OVERFLOW_DATA_BYTES + 1
    } else {
        0
    }
}

/// Install a spilled write set's rows for one table, read back from it in chunks (its
/// truncation first).
fn install_spilled(writes: &super::TableWrites, lsn: Lsn, horizon: Lsn) -> Result<()> {
    const CHUNK_ROWS: usize = 4096;
    let table = &writes.table;
    if writes.truncated {
        table.install(lsn, std::iter::empty(), true, horizon)?;
    }
    let mut chunk: Vec<(Vec<u8>, Option<Vec<u8>>)> = Vec::with_capacity(CHUNK_ROWS);
    let install = |chunk: &mut Vec<(Vec<u8>, Option<Vec<u8>>)>| {
        let rows = chunk.iter().map(|(k, i)| (k.as_slice(), i.as_deref()));
        let done = table.install(lsn, rows, false, horizon);
        chunk.clear();
        done
    };
    writes.for_each_image(|key, image| {
        chunk.push((key.to_vec(), image.map(<[u8]>::to_vec)));
        if chunk.len() >= CHUNK_ROWS {
            install(&mut chunk)?;
        }
        Ok(true)
    })?;
    install(&mut chunk)
}

/// A commit whose record has its place in the log and whose writes are installed, but
/// which is not finished: it still has to become durable and then visible. Every one must
/// be finished, or `visible_lsn` could never pass it.
#[must_use = "a started commit must be finished"]
pub struct CommitInFlight {
    /// The commit's LSN; None for a commit that changed nothing.
    pub lsn: Option<Lsn>,
    /// What must be flushed before it is acknowledged (None: nothing to wait for).
    durable_at: Option<Lsn>,
    /// The committer flushes it itself (the flusher was not woken for it).
    lead: bool,
    /// It is at a remote level: its wait may come to include synchronous standbys, which
    /// may be configured (a reload) at any moment until it is visible, so the wait is one
    /// a cancel or `statement_timeout` can end ([`TxnManager::finish_commit_async`]).
    remote: bool,
}

/// Everything a commit needs from its transaction.
pub struct CommitRequest<'a> {
    pub txn: TxnId,
    pub writes: WriteSet,
    /// Tables the transaction created (their creation was logged when it ran; the commit
    /// confirms it) and dropped (logged with its commit).
    pub created: &'a [TableId],
    pub dropped: &'a [TableId],
    /// Tables whose definitions it changed (their new definitions are in its record).
    pub altered: &'a [Arc<crate::storage::Table>],
    pub locks: Vec<(TableId, Key)>,
    pub level: SyncLevel,
    /// Log records the transaction caused outside its commit record (sequence advances)
    /// end here: even a commit without changes is durable only once they are.
    pub logged_upto: Lsn,
    /// The commit record, with its room in the log ([`TxnManager::prepare_commit_record`]);
    /// `None` for a transaction that changed nothing.
    pub record: Option<PreparedCommit>,
}

/// A commit record encoded and given its room in the log, before the commit takes its
/// place in the commit order: whatever could fail for lack of space has failed by now.
pub struct PreparedCommit {
    encoded: records::EncodedCommit,
    reservation: LogReservation,
    frames: FramePromise,
    /// The write set spilled: its rows were logged ahead in pieces, which the record
    /// names, and the install reads them from the write set. The log is kept from the
    /// first piece on until the commit is installed ([`TxnManager::oldest_piece`]).
    pieces: Option<PiecesLogged>,
}

/// A commit's rows logged ahead of its record, registered until it is installed.
struct PiecesLogged {
    token: u64,
}

/// What [`TxnManager::log_pieces`] logged.
struct PieceLog {
    registered: PiecesLogged,
    /// Where each piece starts.
    lsns: Vec<Lsn>,
    /// Bytes of the pieces' rows, and the overflow pages those rows take.
    row_bytes: usize,
    overflow_pages: usize,
}

pub struct TxnManager {
    pub catalog: Catalog,
    pub locks: LockTable,
    pub visibility: Arc<VisibilityTracker>,
    /// The last LSN handed out: written under the log's append lock, which orders the
    /// commits, or without a log under `order`.
    last_lsn: AtomicU64,
    /// Orders the commits of an engine without a log (tests).
    order: Mutex<()>,
    /// The checkpoint barrier: held shared from a change's log append to its install in
    /// storage and the catalog, exclusively while a checkpoint fixes its image and redo
    /// LSN. So the image holds exactly the changes logged below the redo LSN.
    barrier: RwLock<()>,
    next_txn_id: AtomicU64,
    /// The SERIALIZABLE transactions' dependency graph.
    pub ssi: super::Ssi,
    sessions: RwLock<FxHashMap<i32, Arc<SessionSlot>>>,
    next_pid: AtomicU64,
    /// The log; None for a purely in-memory engine (tests).
    pub wal: Option<Arc<Wal>>,
    /// Commits logging their rows in pieces ahead of their record, each with where the
    /// log ended before its first piece: a checkpoint keeps the log from the oldest on, as
    /// recovery replays such a commit by reading its pieces back.
    pieces_in_flight: Mutex<(u64, BTreeMap<u64, Lsn>)>,
    /// The horizon as last computed ([`TxnManager::horizon`]).
    horizon: CachedHorizon,
    /// The lowest log position that replication (slots, walsenders) still needs; a
    /// checkpoint retires no segment at or above it. Set once by the engine.
    pub retention: OnceLock<RetentionFloor>,
    /// `wal_level = minimal`: bulk loads may write pages that the log does not carry.
    pub wal_level_minimal: AtomicBool,
    /// A standby: the log comes from the primary and is replayed; nothing is appended.
    in_recovery: AtomicBool,
    /// On a standby, the end of the last replayed record: a checkpoint's redo LSN.
    replayed_end: AtomicU64,
}

/// See [`TxnManager::retention`].
pub type RetentionFloor = Box<dyn Fn() -> Result<Option<Lsn>> + Send + Sync>;

/// The oldest snapshot any session may read at, recomputed at most every
/// [`HORIZON_REFRESH`]: computing it reads every session's snapshot, and doing that at
/// every commit made each commit's cost grow with the number of sessions, in cache lines
/// that other cores keep writing. An older horizon is a safe one: it only keeps versions
/// a little longer. (Every snapshot taken after a horizon was computed is at or above it,
/// because it is at least the `visible_lsn` the computation started from.)
struct CachedHorizon {
    lsn: AtomicU64,
    /// When it was computed, in microseconds since `since`.
    computed_at_us: AtomicU64,
    since: Instant,
    /// Held by the one commit that recomputes it; the others use the cached value.
    refreshing: Mutex<()>,
}

/// How long a computed horizon is used before it is computed again.
const HORIZON_REFRESH: Duration = Duration::from_millis(1);

impl Default for TxnManager {
    fn default() -> Self {
        TxnManager::new(Catalog::default())
    }
}

impl TxnManager {
    pub fn new(catalog: Catalog) -> TxnManager {
        TxnManager {
            catalog,
            locks: LockTable::default(),
            visibility: Arc::default(),
            last_lsn: AtomicU64::new(0),
            order: Mutex::new(()),
            barrier: RwLock::new(()),
            next_txn_id: AtomicU64::new(1),
            ssi: super::Ssi::default(),
            sessions: RwLock::new(FxHashMap::default()),
            next_pid: AtomicU64::new(1000),
            wal: None,
            pieces_in_flight: Mutex::new((0, BTreeMap::new())),
            horizon: CachedHorizon {
                lsn: AtomicU64::new(0),
                computed_at_us: AtomicU64::new(0),
                since: Instant::now(),
                refreshing: Mutex::new(()),
            },
            retention: OnceLock::new(),
            wal_level_minimal: AtomicBool::new(false),
            in_recovery: AtomicBool::new(false),
            replayed_end: AtomicU64::new(0),
        }
    }

    pub fn register_session(&self) -> Arc<SessionSlot> {
        let pid = (self.next_pid.fetch_add(1, Ordering::Relaxed) % i32::MAX as u64) as i32;
        let slot = Arc::new(SessionSlot {
            pid,
            secret: rand::random::<i32>(),
            cancel: AtomicBool::new(false),
            cancelled: tokio::sync::Notify::new(),
            snapshot: AtomicU64::new(0),
            seen_commit_lsn: AtomicU64::new(0),
            statement_deadline: Mutex::new(None),
            lock_timeout_ms: AtomicU64::new(0),
            core_release_at_us: AtomicU64::new(0),
            wait_event: Mutex::new(None),
            activity: Mutex::new(Activity {
                state: "idle",
                backend_start_us: crate::types::now_us(),
                ..Default::default()
            }),
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
                slot.cancelled.notify_one();
                true
            }
            _ => false,
        }
    }

    /// `pg_cancel_backend(pid)`: cancel the session's running statement (no key needed).
    pub fn cancel_pid(&self, pid: i32) -> bool {
        match self.sessions.read().get(&pid) {
            Some(slot) => {
                slot.cancel.store(true, Ordering::Release);
                slot.cancelled.notify_one();
                true
            }
            None => false,
        }
    }

    /// Every session's slot, for pg_stat_activity.
    pub fn sessions(&self) -> Vec<Arc<SessionSlot>> {
        let mut v: Vec<Arc<SessionSlot>> = self.sessions.read().values().cloned().collect();
        v.sort_by_key(|s| s.pid);
        v
    }

    pub fn session_count(&self) -> usize {
        self.sessions.read().len()
    }

    /// Begin a transaction: it counts as open (for `commit_siblings` and for deciding who
    /// flushes) until it commits or [`TxnManager::end_transaction`].
    pub fn begin(&self) -> TxnId {
        if let Some(wal) = &self.wal {
            wal.active_transactions.fetch_add(1, Ordering::AcqRel);
        }
        TxnId(self.next_txn_id.fetch_add(1, Ordering::Relaxed))
    }

    /// Before a statement's reply: wait until every commit the session read above its
    /// snapshot is visible (see [`SessionSlot::saw_commit`]).
    pub async fn wait_for_seen_commits(&self, slot: &SessionSlot) {
        if let Some(lsn) = slot.take_seen_commit() {
            if self.visibility.visible_lsn() < lsn {
                set_wait_event(Some(slot), Some(("IPC", "CommitVisible")));
                self.visibility.wait_visible_async(lsn).await;
                set_wait_event(Some(slot), None);
            }
        }
    }

    /// Take a snapshot for `slot` and publish it, so that versions it needs are not pruned.
    /// It includes every commit the session has read a version of (see
    /// [`SessionSlot::saw_commit`]): a caller that did not wait for them before replying
    /// waits here, blocking.
    pub fn snapshot(&self, slot: &SessionSlot) -> Lsn {
        if let Some(lsn) = slot.take_seen_commit() {
            if self.visibility.visible_lsn() < lsn {
                crate::wal::blocking(|| self.visibility.wait_visible(lsn));
            }
        }
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

    /// The oldest snapshot any session may still read at, or an older LSN (see
    /// [`CachedHorizon`]).
    pub(crate) fn horizon(&self) -> Lsn {
        let cache = &self.horizon;
        let now_us = cache.since.elapsed().as_micros() as u64;
        let at_us = cache.computed_at_us.load(Ordering::Acquire);
        let fresh = at_us != 0 && now_us.saturating_sub(at_us) < HORIZON_REFRESH.as_micros() as u64;
        if fresh {
            return Lsn(cache.lsn.load(Ordering::Acquire));
        }
        let Some(_refreshing) = cache.refreshing.try_lock() else {
            if at_us != 0 {
                return Lsn(cache.lsn.load(Ordering::Acquire));
            }
            return self.compute_horizon();
        };
        // One commit at a time stores, under `refreshing`: each value is at or above the last.
        let horizon = self.compute_horizon();
        cache.lsn.store(horizon.0, Ordering::Release);
        cache.computed_at_us.store(now_us.max(1), Ordering::Release);
        horizon
    }

    /// The oldest snapshot any session reads at, or the newest visible LSN if older:
    /// a version superseded at or before it is seen by no snapshot (`valid_at` needs one
    /// below its end). Read afresh, for a reader about to scan a table in batches, which
    /// prunes with it (`Table::prune_older_versions`); a snapshot taken meanwhile is at
    /// or above it (`snapshot` checks the visible LSN again after publishing). No commit
    /// ends a version at LSN 1 or below, so a snapshot at 0, published as 1, loses none.
    pub(crate) fn oldest_snapshot(&self) -> Lsn {
        let mut oldest = self.visibility.visible_lsn().0;
        for slot in self.sessions.read().values() {
            let s = slot.snapshot.load(Ordering::SeqCst);
            if s != 0 && s < oldest {
                oldest = s;
            }
        }
        Lsn(oldest)
    }

    /// The oldest snapshot any session may still read at, from every session's snapshot.
    fn compute_horizon(&self) -> Lsn {
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

    /// After recovery: continue the commit order after `end` and log from now on.
    pub fn attach_wal(&mut self, wal: Arc<Wal>, end: Lsn) {
        self.last_lsn.store(end.0, Ordering::Release);
        self.visibility.reset(end);
        let visibility = self.visibility.clone();
        wal.on_flushed(Box::new(move |flushed| visibility.flushed(flushed)));
        self.wal = Some(wal);
    }

    /// The log's `flushed_lsn`; without a log, everything counts as flushed.
    fn flushed_lsn(&self) -> Lsn {
        self.wal.as_ref().map_or(Lsn(u64::MAX), |w| w.flushed_lsn())
    }

    /// Take the next place in the commit order, logging `record` if there is a log. The
    /// returned LSN is registered with the visibility tracker in log order.
    /// A commit that will wait for durability (`level` above `off`) becomes visible only
    /// once it is durable at its level; for it, also returns whether the caller is to
    /// flush it itself (see [`Wal::append_commit`]).
    fn sequence_commit(
        &self,
        record: Option<PendingRecord>,
        reservation: LogReservation,
        is_commit: bool,
        level: SyncLevel,
    ) -> (Lsn, bool) {
        let wait = level.waits_for_flush();
        let level = if self.wal.is_some() {
            level
        } else {
            SyncLevel::Off
        };
        let assigned = |end: Lsn| {
            self.last_lsn.store(end.0, Ordering::Release);
            self.visibility.register(end, level);
        };
        match (&self.wal, record) {
            (Some(wal), Some(rec)) if wait => wal.append_commit(rec, reservation, assigned),
            (Some(wal), Some(rec)) => (wal.append(rec, reservation, is_commit, assigned), false),
            _ => {
                drop(reservation);
                let _order = self.order.lock();
                let last = Lsn(self.last_lsn.load(Ordering::Acquire) + 1);
                self.last_lsn.store(last.0, Ordering::Release);
                self.visibility.register(last, SyncLevel::Off);
                (last, false)
            }
        }
    }

    /// Room in the log for a record with `payload_bytes` of payload: 53100 when the log
    /// cannot grow (see [`Wal::reserve`]). Without a log, nothing to reserve.
    pub fn reserve_log(&self, payload_bytes: usize) -> Result<LogReservation> {
        match &self.wal {
            Some(wal) => wal.reserve(RECORD_HEADER_BYTES + payload_bytes),
            None => Ok(LogReservation::none()),
        }
    }

    /// Encode the commit record of a transaction that changed something and reserve its
    /// room in the log, once the page file has room for what its install changes (both
    /// 53100 on a full disk). `Ok(None)` when there is nothing to log. A write set that
    /// spilled has its rows logged here, in pieces ahead of the record.
    pub fn prepare_commit_record(
        &self,
        writes: &WriteSet,
        created: &[TableId],
        dropped: &[TableId],
        altered: &[Arc<crate::storage::Table>],
    ) -> Result<Option<PreparedCommit>> {
        if writes.is_empty() && dropped.is_empty() && created.is_empty() && altered.is_empty() {
            return Ok(None);
        }
        // The record, the rows it installs (their bytes, and overflow pages), and the
        // pieces they were logged in if the write set spilled.
        let (encoded, pieces, row_bytes, overflow_pages) = if writes.is_spilled() {
            let log = self.log_pieces(writes)?;
            let encoded =
                records::encode_commit(writes, created, dropped, altered, Some(&log.lsns));
            (
                encoded,
                Some(log.registered),
                log.row_bytes,
                log.overflow_pages,
            )
        } else {
            let encoded = records::encode_commit(writes, created, dropped, altered, None);
            let overflow_pages = encoded
                .images
                .iter()
                .flatten()
                .map(|image| overflow_pages_of(image.len()))
                .sum();
            let row_bytes = encoded.payload.len();
            (encoded, None, row_bytes, overflow_pages)
        };
        let unlogged = |pieces: Option<PiecesLogged>| {
            if let Some(p) = pieces {
                self.pieces_installed(p);
            }
        };
        let pool = self.catalog.pool();
        let pages = FramePromise::pages_for(
            writes.row_count() + writes.index_entry_count(),
            overflow_pages,
        );
        let frames = match pool.promise_frames(pages, row_bytes) {
            Ok(frames) => frames,
            Err(e) => {
                unlogged(pieces);
                return Err(e);
            }
        };
        let reservation = match self.reserve_log(encoded.payload.len()) {
            Ok(reservation) => reservation,
            Err(e) => {
                pool.release_frames(frames);
                unlogged(pieces);
                return Err(e);
            }
        };
        Ok(Some(PreparedCommit {
            encoded,
            reservation,
            frames,
            pieces,
        }))
    }

    /// Log a spilled write set's rows in WriteSetPiece records of about
    /// `WRITE_SET_PIECE_BYTES`, encoding one piece at a time. A full disk fails with
    /// nothing registered (the pieces already logged are named by no commit, and replay
    /// ignores them).
    fn log_pieces(&self, writes: &WriteSet) -> Result<PieceLog> {
        let token = {
            let mut in_flight = self.pieces_in_flight.lock();
            // The log's end read under the registry's lock: a checkpoint that does not
            // see this registration fixed its redo LSN no later than here.
            let from = self.wal.as_ref().map_or(Lsn::ZERO, |wal| wal.end_lsn());
            in_flight.0 += 1;
            let token = in_flight.0;
            in_flight.1.insert(token, from);
            token
        };
        let mut lsns = Vec::new();
        let (mut row_bytes, mut overflow_pages) = (0, 0);
        let mut logged = || -> Result<()> {
            let mut w = Writer::default();
            for (id, tw) in &writes.tables {
                records::start_piece(*id, &mut w);
                let empty = w.buf.len();
                tw.for_each_image(|key, image| {
                    overflow_pages += image.map_or(0, |i| overflow_pages_of(i.len()));
                    records::put_row(key, image, &mut w);
                    if w.buf.len() >= WRITE_SET_PIECE_BYTES {
                        row_bytes += w.buf.len();
                        lsns.extend(self.append_piece(&w.buf)?);
                        records::start_piece(*id, &mut w);
                    }
                    Ok(true)
                })?;
                if w.buf.len() > empty {
                    row_bytes += w.buf.len();
                    lsns.extend(self.append_piece(&w.buf)?);
                }
            }
            Ok(())
        };
        match logged() {
            Ok(()) => Ok(PieceLog {
                registered: PiecesLogged { token },
                lsns,
                row_bytes,
                overflow_pages,
            }),
            Err(e) => {
                self.pieces_installed(PiecesLogged { token });
                Err(e)
            }
        }
    }

    /// Append one WriteSetPiece; its start LSN (none without a log).
    fn append_piece(&self, payload: &[u8]) -> Result<Option<Lsn>> {
        let Some(wal) = &self.wal else {
            return Ok(None);
        };
        let reservation = self.reserve_log(payload.len())?;
        let record = PendingRecord::new(RecordKind::WriteSetPiece, payload);
        let len = record.len() as u64;
        // Carried by the flush of its commit, or of a full buffer.
        let end = wal.append_unforced(record, reservation);
        Ok(Some(Lsn(end.0 - len)))
    }

    /// A commit's pieces are no longer needed from the log: it is installed (a checkpoint
    /// from now on holds it), or it will not be logged.
    fn pieces_installed(&self, pieces: PiecesLogged) {
        self.pieces_in_flight.lock().1.remove(&pieces.token);
    }

    /// Where the log ended before the first piece of the oldest commit still logging or
    /// installing its rows in pieces: a checkpoint must keep the log from there.
    pub fn oldest_piece(&self) -> Option<Lsn> {
        self.pieces_in_flight.lock().1.values().min().copied()
    }

    /// Give back the room of a commit record that will not be appended.
    pub fn release_commit_record(&self, record: PreparedCommit) {
        let PreparedCommit {
            reservation,
            frames,
            pieces,
            ..
        } = record;
        self.catalog.pool().release_frames(frames);
        if let Some(pieces) = pieces {
            self.pieces_installed(pieces);
        }
        match &self.wal {
            Some(wal) => wal.release(reservation),
            None => drop(reservation),
        }
    }

    /// The LSN of the last commit or catalog change put in the commit order: every
    /// version installed so far is at or below it.
    pub fn last_assigned_lsn(&self) -> Lsn {
        Lsn(self.last_lsn.load(Ordering::Acquire))
    }

    /// Fix a checkpoint: with no change between its log append and its install, `fix`
    /// gets the log's end, which is the checkpoint's redo LSN, and takes the image.
    pub fn at_checkpoint_barrier<R>(&self, fix: impl FnOnce(Lsn) -> R) -> R {
        let _barrier = stages::write(Stage::CheckpointBarrier, &self.barrier);
        let end = match &self.wal {
            // A standby's image holds what it has replayed, not all it has received.
            Some(_) if self.in_recovery() => Lsn(self.replayed_end.load(Ordering::Acquire)),
            Some(wal) => wal.end_lsn(),
            None => Lsn(self.last_lsn.load(Ordering::Acquire)),
        };
        fix(end)
    }

    /// Whether this is a standby (in recovery: replaying the primary's log).
    pub fn in_recovery(&self) -> bool {
        self.in_recovery.load(Ordering::Acquire)
    }

    /// Become a standby, whose replay continues from `end` (recovery's end).
    pub fn enter_recovery(&self, end: Lsn) {
        self.replayed_end.store(end.0, Ordering::Release);
        self.in_recovery.store(true, Ordering::Release);
    }

    /// A standby becomes a primary: from now on, commits continue the order after `end`.
    pub fn leave_recovery(&self, end: Lsn) {
        self.last_lsn.store(end.0, Ordering::Release);
        self.in_recovery.store(false, Ordering::Release);
    }

    /// The end of the last record a standby replayed.
    pub fn replayed_end(&self) -> Lsn {
        Lsn(self.replayed_end.load(Ordering::Acquire))
    }

    /// A standby replays one record it received, ending at `end`: under the checkpoint
    /// barrier, as a commit installs, with older versions kept for the snapshots of the
    /// standby's readers; then the record's end becomes `visible_lsn`, so readers see the
    /// primary's commits in the primary's order.
    pub fn replay_streamed(
        &self,
        kind: RecordKind,
        payload: &[u8],
        end: Lsn,
        read_record: &mut records::ReadRecord<'_>,
    ) -> Result<()> {
        let barrier = stages::read(Stage::CheckpointBarrier, &self.barrier);
        let horizon = self.horizon().min(end);
        records::replay(&self.catalog, kind, payload, end, horizon, read_record)?;
        self.last_lsn.store(end.0, Ordering::Release);
        self.replayed_end.store(end.0, Ordering::Release);
        drop(barrier);
        self.visibility.replayed(end);
        Ok(())
    }

    /// The first half of a commit, which never waits: log the commit record, take its
    /// place in the commit order, install its writes and release its row locks. The
    /// caller must pass the result to [`TxnManager::finish_commit`] or
    /// [`TxnManager::finish_commit_async`].
    ///
    /// Installing and unlocking before the commit is durable is safe because nothing can
    /// observe the difference before it is: snapshots see only versions at or below
    /// `visible_lsn`, which passes this commit only once it is durable; and a writer that
    /// takes over one of its rows builds on it with a later LSN, so that writer's commit
    /// is durable, visible and acknowledged only after this one. The gain is that a hot row
    /// (TPC-B's branches) is held for the length of a statement, not of a flush.
    pub fn start_commit(&self, c: CommitRequest<'_>) -> CommitInFlight {
        let CommitRequest {
            txn,
            writes,
            created,
            dropped,
            altered,
            locks,
            level,
            logged_upto,
            record,
        } = c;
        self.end_transaction();
        let durable = |lsn: Lsn| (self.wal.is_some() && level.waits_for_flush()).then_some(lsn);
        let Some(PreparedCommit {
            encoded: commit,
            reservation,
            frames,
            pieces,
        }) = record
        else {
            assert!(
                writes.is_empty() && dropped.is_empty() && created.is_empty() && altered.is_empty(),
                "a transaction that changed something has a commit record"
            );
            self.locks.release_all(txn, &locks);
            self.locks.release_spilled(txn);
            // Records this transaction logged on the way (sequence advances) did not wake
            // the flusher: a commit that waits flushes them itself, one that does not has
            // the flusher woken for them.
            let mut durable_at = None;
            if logged_upto > Lsn::ZERO {
                durable_at = durable(logged_upto);
                if let (None, Some(wal)) = (durable_at, &self.wal) {
                    wal.wake_flusher();
                }
            }
            return CommitInFlight {
                lsn: None,
                lead: durable_at.is_some(),
                durable_at,
                remote: false,
            };
        };
        let mut writes = writes;
        assert!(
            !writes.has_increments(),
            "deferred increments must become after-images before the commit"
        );
        let record = self
            .wal
            .as_ref()
            .map(|_| PendingRecord::new(RecordKind::Commit, &commit.payload));
        let barrier = stages::read(Stage::CheckpointBarrier, &self.barrier);
        let critical = CriticalSection("installing a commit");
        let (lsn, lead) = self.sequence_commit(record, reservation, true, level);
        // Under the row locks, so versions of a key are installed in LSN order. The
        // images are the record's, in the order it was encoded in.
        let horizon = self.horizon();
        let mut images = commit.images.iter();
        for writes in writes.tables.values_mut() {
            let rows = if pieces.is_some() {
                install_spilled(writes, lsn, horizon)
            } else {
                let rows = writes.rows.keys().map(|key| {
                    let image = images.next().cloned().flatten();
                    (key.as_slice(), image.map(|at| &commit.payload[at]))
                });
                writes.table.install(lsn, rows, writes.truncated, horizon)
            };
            let installed = rows.and_then(|()| match writes.bulk.as_mut() {
                Some(load) => {
                    let tree = load.commit(lsn)?;
                    writes.table.adopt(lsn, tree, horizon)
                }
                None => Ok(()),
            });
            if let Err(e) = installed {
                // The commit is in the log but only partly in storage: only recovery
                // can make storage whole again.
                fatal_after_logging("install a commit", &e);
            }
            if !writes.reborn.is_empty() {
                writes.table.end_rows(lsn, writes.reborn.iter());
            }
        }
        self.catalog.pool().release_frames(frames);
        self.catalog.confirm(created);
        for table in altered {
            table.confirm_def();
        }
        let dropped_tables = self.catalog.finish_drops(dropped);
        drop(barrier);
        if let Some(pieces) = pieces {
            self.pieces_installed(pieces);
        }
        self.locks.release_all(txn, &locks);
        self.locks.release_spilled(txn);
        // Visible once durable too: by the flusher, or here if the flush came first.
        self.visibility.installed(lsn, || self.flushed_lsn());
        drop(critical);
        for table in dropped_tables {
            if let Err(e) = table.destroy() {
                tracing::warn!(
                    "could not free the pages of dropped table {}: {e}; they stay allocated",
                    table.id.0
                );
            }
        }
        CommitInFlight {
            lsn: Some(lsn),
            lead,
            durable_at: durable(lsn),
            remote: level >= SyncLevel::RemoteWrite,
        }
    }

    /// Before [`TxnManager::start_commit`]: write the pages of the transaction's bulk
    /// loads and make the page file durable, so its commit record may name them. A write
    /// error fails the commit (the caller rolls back); a failed sync is fatal.
    pub fn flush_bulk_loads(&self, writes: &mut WriteSet) -> crate::error::Result<()> {
        let mut any = false;
        for load in writes.tables.values_mut().filter_map(|w| w.bulk.as_mut()) {
            load.flush()?;
            any = true;
        }
        if any {
            self.sync_bulk_pages("a bulk load");
        }
        Ok(())
    }

    /// Make bulk-loaded pages durable before the log record that names them: a failed
    /// fdatasync stops the server (`what` names the operation in its last words).
    pub fn sync_bulk_pages(&self, what: &str) {
        if let Err(e) = self.catalog.pool().sync() {
            crate::error::stop_server(&format!(
                "could not fdatasync the page file for {what}: {e}"
            ));
        }
    }

    /// The second half of a commit, blocking the calling thread: wait until it is
    /// visible, which it becomes only once it is durable at its level (a commit that
    /// changed nothing waits only for the log records it caused).
    pub fn finish_commit(&self, c: CommitInFlight, slot: Option<&SessionSlot>) {
        let wal = self.begin_finish(&c, slot);
        match c.lsn {
            Some(lsn) => self.visibility.wait_visible(lsn),
            None => {
                if let (Some(wal), Some(at)) = (wal, c.durable_at) {
                    wal.wait_flushed(at);
                }
            }
        }
        self.end_finish(&c, slot);
    }

    /// [`TxnManager::finish_commit`] for a task: the waits yield instead of blocking.
    /// A wait for synchronous standbys can be cancelled (a CancelRequest): the commit
    /// stays in the log but invisible until the standbys have it, and the returned warning
    /// says so, in PostgreSQL's words.
    pub async fn finish_commit_async(
        &self,
        c: CommitInFlight,
        slot: Option<&SessionSlot>,
    ) -> Option<Error> {
        let wal = self.begin_finish(&c, slot);
        let mut warning = None;
        match c.lsn {
            Some(lsn) if c.remote => {
                if let (Some(wal), Some(at)) = (wal, c.durable_at) {
                    wal.wait_flushed_async(at).await;
                }
                warning = self.wait_for_standbys(lsn, slot).await;
            }
            Some(lsn) => self.visibility.wait_visible_async(lsn).await,
            None => {
                if let (Some(wal), Some(at)) = (wal, c.durable_at) {
                    wal.wait_flushed_async(at).await;
                }
            }
        }
        self.end_finish(&c, slot);
        warning
    }

    /// Wait until the commit at `lsn` is visible, which at a remote level means the
    /// synchronous standbys have it; a cancel request or the statement's
    /// `statement_timeout` ends the wait with a warning, as in PostgreSQL.
    ///
    /// With no synchronous standby configured the wait is for the local order only, and
    /// an interrupt is held back, as PostgreSQL ignores one that comes while a commit is
    /// not waiting for standbys. But standbys may be configured (a reload) before the
    /// commit is visible, and then the held interrupt ends the wait: it is checked every
    /// `SYNC_REP_INTERRUPT_POLL`, so no reload leaves a commit waiting beyond a cancel.
    async fn wait_for_standbys(&self, lsn: Lsn, slot: Option<&SessionSlot>) -> Option<Error> {
        let Some(slot) = slot else {
            self.visibility.wait_visible_async(lsn).await;
            return None;
        };
        let mut interrupted = false;
        loop {
            let cancelled = slot.cancelled.notified();
            interrupted |= slot.cancel.swap(false, Ordering::AcqRel);
            let standbys = self.visibility.standbys_configured();
            set_wait_event(Some(slot), standbys.then_some(("IPC", "SyncRep")));
            if interrupted && standbys {
                return Some(
                    Error::new(
                        SqlState::WARNING,
                        "canceling wait for synchronous replication due to user request",
                    )
                    .with_detail(
                        "The transaction has already committed locally, but might not have been replicated to the standby.",
                    ),
                );
            }
            // Held back: poll for standbys; otherwise the statement's deadline interrupts.
            let deadline = slot.statement_deadline();
            let wake = async {
                match deadline {
                    _ if interrupted => tokio::time::sleep(SYNC_REP_INTERRUPT_POLL).await,
                    Some(at) => tokio::time::sleep_until(at.into()).await,
                    None => std::future::pending().await,
                }
            };
            tokio::select! {
                _ = self.visibility.wait_visible_async(lsn) => return None,
                _ = cancelled => {}
                _ = wake => interrupted = true,
            }
        }
    }

    /// Before a commit's wait: a lone committer flushes its commit itself (nothing else
    /// for its thread to do meanwhile); the flush makes it visible.
    fn begin_finish(&self, c: &CommitInFlight, slot: Option<&SessionSlot>) -> Option<&Wal> {
        let wal = self.wal.as_deref()?;
        let at = c.durable_at?;
        set_wait_event(slot, Some(("IO", "WALSync")));
        if c.lead {
            wal.flush_now(at);
        }
        Some(wal)
    }

    fn end_finish(&self, c: &CommitInFlight, slot: Option<&SessionSlot>) {
        if let (Some(wal), Some(at)) = (&self.wal, c.durable_at) {
            assert!(
                wal.flushed_lsn() >= at,
                "a commit is acknowledged only once it is durable"
            );
            set_wait_event(slot, None);
        }
    }

    /// Abort: drop the writes and release the locks. (The transaction may still be open,
    /// failed, until its ROLLBACK: [`TxnManager::end_transaction`] is separate.)
    pub fn rollback(&self, txn: TxnId, locks: &[(TableId, Key)]) {
        self.locks.release_all(txn, locks);
        self.locks.release_spilled(txn);
    }

    /// A transaction begun with [`TxnManager::begin`] ended without committing.
    /// (`start_commit` ends it for a commit.)
    pub fn end_transaction(&self) {
        if let Some(wal) = &self.wal {
            let _ =
                wal.active_transactions
                    .fetch_update(Ordering::AcqRel, Ordering::Acquire, |v| v.checked_sub(1));
        }
    }

    /// A catalog change that is logged and made durable on its own (CREATE TABLE, ALTER
    /// TABLE ... ADD PRIMARY KEY, and the DROP that undoes a rolled-back CREATE), ordered
    /// with commits. `apply` runs with the change's LSN once it is locally durable. The
    /// record uses `reservation` ([`TxnManager::reserve_log`] for `payload`), or with
    /// `LogReservation::none()` the log's headroom (only the DROP that undoes a CREATE,
    /// which must not fail).
    ///
    /// `level` is what acknowledging the change waits for, as for a commit: at a remote
    /// level the returned commit is finished ([`TxnManager::finish_commit`] or its async
    /// form) only once the synchronous standbys have the record, so a failover does not
    /// lose a change that was acknowledged. The change is applied before that wait; its
    /// place in the visible order still waits for the standbys like any commit.
    pub fn commit_ddl(
        &self,
        kind: RecordKind,
        payload: &[u8],
        reservation: LogReservation,
        level: SyncLevel,
        apply: impl FnOnce(Lsn),
    ) -> CommitInFlight {
        let level = level.max(SyncLevel::Local);
        let record = self.wal.as_ref().map(|_| PendingRecord::new(kind, payload));
        let barrier = stages::read(Stage::CheckpointBarrier, &self.barrier);
        let critical = CriticalSection("applying a catalog change");
        let (lsn, _) = self.sequence_commit(record, reservation, false, level);
        if let Some(wal) = &self.wal {
            // Catalog changes are rare: flush on this thread rather than wait to be woken.
            // Flushed before it is marked installed, so it is visible only once durable.
            wal.flush_now(lsn);
        }
        apply(lsn);
        drop(barrier);
        self.visibility.installed(lsn, || self.flushed_lsn());
        drop(critical);
        CommitInFlight {
            lsn: Some(lsn),
            durable_at: self.wal.as_ref().map(|_| lsn),
            lead: false,
            remote: level >= SyncLevel::RemoteWrite,
        }
    }

    /// The next value of a sequence. Values are logged ahead in batches; a commit that uses
    /// one is flushed after that log record, so no value is reused after a crash. The
    /// record does not wake the flusher: the flush of the commit that follows it carries
    /// it (see [`Wal::append_unforced`]), as PostgreSQL's flush of the commit carries its.
    /// Returns the value and, if a log record was written for it, that record's end: the
    /// transaction must not commit (even without changes) before it is durable.
    ///
    /// Fails with 53100 when the log has no room for the record (the value is used up, as
    /// a value of a rolled-back transaction is).
    /// setval: the sequence hands out `next` next. Logged (as nextval's advances are,
    /// flushed by the commit that follows); returns the record's end.
    pub fn set_sequence(&self, seq: &Sequence, next: i64) -> Result<Option<Lsn>> {
        if self.in_recovery() {
            return Err(Error::new(
                SqlState::READ_ONLY_SQL_TRANSACTION,
                "cannot execute setval() in a read-only transaction",
            ));
        }
        let Some(wal) = &self.wal else {
            seq.set_next(next);
            return Ok(None);
        };
        let payload = records::encode_set_sequence(&seq.name, next);
        let reservation = self.reserve_log(payload.len())?;
        let rec = PendingRecord::new(RecordKind::SetSequence, &payload);
        seq.set_next(next);
        Ok(Some(wal.append_unforced(rec, reservation)))
    }

    pub fn nextval(&self, seq: &Sequence) -> Result<(i64, Option<Lsn>)> {
        if self.in_recovery() {
            return Err(Error::new(
                SqlState::READ_ONLY_SQL_TRANSACTION,
                "cannot execute nextval() in a read-only transaction",
            ));
        }
        let v = seq.nextval().map_err(|e| {
            Error::new(
                SqlState::SEQUENCE_GENERATOR_LIMIT_EXCEEDED,
                format!(
                    "nextval: reached maximum value of sequence \"{}\" ({})",
                    seq.name, e.max
                ),
            )
        })?;
        let mut logged_at = None;
        if let Some(wal) = &self.wal {
            let logged = seq.logged_upto();
            if v > logged.load(Ordering::Acquire) {
                let upto = v
                    .saturating_add(seq.increment().saturating_mul(SEQUENCE_LOG_AHEAD))
                    .min(seq.max());
                let payload = records::encode_sequence_advance(&seq.name, upto);
                let reservation = self.reserve_log(payload.len())?;
                let rec = PendingRecord::new(RecordKind::SequenceAdvance, &payload);
                // Raised before the append, so a checkpoint image taken in between
                // already covers the values this record hands out.
                logged.fetch_max(upto, Ordering::AcqRel);
                logged_at = Some(wal.append_unforced(rec, reservation));
            }
        }
        Ok((v, logged_at))
    }
}
