//! The engine: everything sessions share (catalog, storage, transactions, settings), and
//! its life cycle: recovery at open (the last checkpoint, then the WAL from its redo LSN),
//! the WAL flusher and the checkpointer while running, a shutdown checkpoint and a final
//! flush at close.

#[cfg(test)]
mod commit_wait_tests;
#[cfg(test)]
mod crash_tests;

use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use parking_lot::Mutex;

use crate::disk::{Disk, OsDisk};
use crate::error::{Error, Result, SqlState};
use crate::repl::identity::Identity;
use crate::repl::location::WalLocation;
use crate::repl::primary::Replication;
use crate::repl::receiver::{Receiver, ReceiverStatus};
use crate::settings::Settings;
use crate::storage::checkpoint::{Checkpointer, Control};
use crate::storage::page::PAGE_BYTES;
use crate::storage::pool::{BufferPool, PageMap};
use crate::storage::Catalog;
use crate::txn::checkpoints::{Checkpoints, Reason};
use crate::txn::{records, TxnManager};
use crate::wal::{Lsn, RecordReader, Wal, WalOptions};

pub struct Engine {
    pub settings: Arc<Settings>,
    pub txn: Arc<TxnManager>,
    /// Streaming replication: walsenders, slots and the synchronous quorum.
    pub repl: Arc<Replication>,
    /// The data directory (none for an engine without one).
    pub data_dir: Option<PathBuf>,
    /// The checkpointer; None for an engine without a data directory.
    pub checkpoints: Option<Arc<Checkpoints>>,
    /// The checkpointer and WAL flusher threads (none without a data directory).
    checkpointer: Mutex<Option<JoinHandle<()>>>,
    flusher: Mutex<Option<JoinHandle<()>>>,
    syncrep: Mutex<Option<JoinHandle<()>>>,
    /// Reads the configuration file again (`pg_reload_conf()`, SIGHUP); set by the server.
    pub reload: OnceLock<ReloadHook>,
    /// Who may connect (`pg_hba.conf`); unset (an engine without a server) trusts all.
    pub auth: OnceLock<Arc<crate::auth::Authenticator>>,
    /// On a standby: its walreceiver, and the thread that runs it.
    pub receiver: Option<Arc<ReceiverStatus>>,
    receiver_thread: Mutex<Option<JoinHandle<()>>>,
    /// Held while a promotion runs (one at a time).
    promoting: Mutex<()>,
}

/// See [`Engine::reload`].
pub type ReloadHook = Box<dyn Fn() + Send + Sync>;

/// Where the page file, the page maps and the control file live, under the data directory.
const STORAGE_DIR: &str = "storage";

impl Engine {
    /// An engine without a log: nothing survives it (unit tests).
    pub fn new(settings: Arc<Settings>) -> Engine {
        let identity = Identity {
            system_id: 0,
            timeline: 1,
            history: Vec::new(),
            fenced_by: None,
        };
        let repl = Replication::new(None, &settings, identity)
            .unwrap_or_else(|e| panic!("replication state without a directory: {e}"));
        Engine {
            settings,
            txn: Arc::new(TxnManager::default()),
            repl: Arc::new(repl),
            data_dir: None,
            checkpoints: None,
            checkpointer: Mutex::new(None),
            flusher: Mutex::new(None),
            syncrep: Mutex::new(None),
            reload: OnceLock::new(),
            auth: OnceLock::new(),
            receiver: None,
            receiver_thread: Mutex::new(None),
            promoting: Mutex::new(()),
        }
    }

    /// Open the database in `data_dir`: load the last checkpoint, replay the WAL from its
    /// redo LSN, then start the WAL flusher and the checkpointer.
    pub fn open(settings: Arc<Settings>, data_dir: &Path) -> Result<Arc<Engine>> {
        Self::open_on(settings, Arc::new(OsDisk), data_dir)
    }

    pub fn open_on(
        settings: Arc<Settings>,
        disk: Arc<dyn Disk>,
        data_dir: &Path,
    ) -> Result<Arc<Engine>> {
        let Recovered {
            txn,
            checkpoints,
            wal,
        } = recover(
            &settings,
            disk,
            data_dir,
            crate::constants::WAL_SEGMENT_BYTES,
            true,
        )?;
        let identity = Identity::load_or_create(data_dir)?;
        let repl = Arc::new(Replication::new(Some(data_dir), &settings, identity)?);
        {
            let repl = repl.clone();
            let _ = txn.retention.set(Box::new(move || repl.retention()));
        }
        txn.wal_level_minimal.store(
            settings.is("wal_level", "minimal"),
            std::sync::atomic::Ordering::Relaxed,
        );
        let standby = data_dir.join(STANDBY_SIGNAL).exists();
        if standby {
            txn.enter_recovery(wal.flushed_lsn());
        }
        let txn = Arc::new(txn);
        let checkpoints = Arc::new(checkpoints);
        let spawn = |name: &str, f: Box<dyn FnOnce() + Send>| {
            std::thread::Builder::new()
                .name(name.into())
                .spawn(f)
                .map_err(|e| Error::internal(format!("could not start the {name} thread: {e}")))
        };
        let flusher = {
            let wal = wal.clone();
            spawn("wal-flusher", Box::new(move || wal.run_flusher()))?
        };
        let checkpointer = {
            let (cp, txn) = (checkpoints.clone(), txn.clone());
            spawn("checkpointer", Box::new(move || cp.run(&txn)))?
        };
        let syncrep = {
            let (repl, settings, txn) = (repl.clone(), settings.clone(), txn.clone());
            spawn(
                "syncrep",
                Box::new(move || repl.run_syncrep(&settings, &txn)),
            )?
        };
        let (receiver, receiver_thread) = if standby {
            start_receiver(&settings, &txn, &wal, &repl)?
        } else {
            (None, None)
        };
        Ok(Arc::new(Engine {
            receiver,
            receiver_thread: Mutex::new(receiver_thread),
            promoting: Mutex::new(()),
            settings,
            txn,
            repl,
            data_dir: Some(data_dir.to_path_buf()),
            checkpoints: Some(checkpoints),
            checkpointer: Mutex::new(Some(checkpointer)),
            flusher: Mutex::new(Some(flusher)),
            syncrep: Mutex::new(Some(syncrep)),
            reload: OnceLock::new(),
            auth: OnceLock::new(),
        }))
    }

    /// `CHECKPOINT`: take a checkpoint now and wait for it (nothing to do without a data
    /// directory).
    pub fn checkpoint(&self) -> Result<()> {
        match self.request_checkpoint() {
            Some(wait) => wait.finish_blocking(),
            None => Ok(()),
        }
    }

    /// `CHECKPOINT` for a caller that waits as a task: ask for a checkpoint now, and wait
    /// for it with [`CheckpointWait::finish`] (nothing to wait for without a data
    /// directory).
    pub fn request_checkpoint(&self) -> Option<CheckpointWait> {
        let checkpoints = self.checkpoints.clone()?;
        let ticket = checkpoints.request();
        Some(CheckpointWait {
            checkpoints,
            ticket,
        })
    }

    /// Stop the checkpointer, take a last checkpoint (so the next start replays nothing),
    /// then flush everything logged and stop the flusher.
    pub fn shutdown(&self) {
        if let Some(r) = &self.receiver {
            r.stop();
        }
        if let Some(t) = self.receiver_thread.lock().take() {
            let _ = t.join();
        }
        self.repl.stop();
        if let Some(syncrep) = self.syncrep.lock().take() {
            let _ = syncrep.join();
        }
        if let Some(cp) = &self.checkpoints {
            cp.stop();
        }
        if let Some(checkpointer) = self.checkpointer.lock().take() {
            let _ = checkpointer.join();
        }
        if let Some(cp) = &self.checkpoints {
            match cp.checkpoint(&self.txn, Reason::Shutdown) {
                Ok(()) => {}
                Err(e) if e.code == SqlState::DISK_FULL => tracing::warn!(
                    "shutdown checkpoint failed: {}; the next start replays the WAL",
                    e.message
                ),
                Err(e) => crate::error::stop_server(&format!("shutdown checkpoint failed: {e}")),
            }
        }
        if let Some(wal) = &self.txn.wal {
            wal.shutdown();
        }
        if let Some(flusher) = self.flusher.lock().take() {
            let _ = flusher.join();
        }
    }

    /// Read the configuration file again and apply what a reload may change; then wake
    /// the synchronous replication task (its standby list may have changed). Returns
    /// whether a reload hook exists (`pg_reload_conf()` returns it).
    pub fn reload_config(&self) -> bool {
        match self.reload.get() {
            Some(reload) => {
                reload();
                self.repl.notify();
                true
            }
            None => false,
        }
    }

    /// `pg_promote()`, `steadydb promote`: this standby becomes a primary on a new
    /// timeline. The walreceiver stops; everything it made durable is replayed; the log
    /// is cut after the last complete record; the new timeline is recorded with where the
    /// old one ended (so other standbys can follow and an old primary can be fenced); then
    /// writes are allowed. Returns the new timeline.
    pub fn promote(&self) -> Result<u32> {
        let _one = self.promoting.lock();
        if !self.is_standby() {
            return Err(Error::new(
                SqlState::OBJECT_NOT_IN_PREREQUISITE_STATE,
                "recovery is not in progress",
            )
            .with_hint("Recovery control functions can only be executed during recovery."));
        }
        let (Some(wal), Some(dir)) = (self.txn.wal.clone(), self.data_dir.clone()) else {
            return Err(Error::internal("a standby without a log"));
        };
        tracing::info!("received promote request");
        if let Some(r) = &self.receiver {
            r.stop();
        }
        if let Some(t) = self.receiver_thread.lock().take() {
            let _ = t.join();
        }
        let end = self.txn.replayed_end();
        wal.end_receiving_at(end)?;
        let ended = self.repl.layout.location(end);
        let old = self.repl.timeline();
        let new = old + 1;
        self.repl.update_identity(|id| {
            id.history.push((old, ended));
            id.timeline = new;
        })?;
        let signal = dir.join(STANDBY_SIGNAL);
        if signal.exists() {
            std::fs::remove_file(&signal)
                .and_then(|_| std::fs::File::open(&dir)?.sync_all())
                .map_err(|e| {
                    Error::new(
                        SqlState::IO_ERROR,
                        format!("could not remove \"{}\": {e}", signal.display()),
                    )
                })?;
        }
        self.txn.leave_recovery(end);
        tracing::info!("selected new timeline ID: {new}; timeline {old} ended at {ended}");
        tracing::info!("database system is ready to accept connections");
        // An end-of-recovery checkpoint, as PostgreSQL takes; not waited for.
        let _ = self.request_checkpoint();
        Ok(new)
    }

    /// Whether a newer timeline fenced this server off (it refuses writes).
    pub fn fenced_by(&self) -> Option<u32> {
        self.repl.fenced_by()
    }

    /// Whether this server is a standby (`pg_is_in_recovery()`).
    pub fn is_standby(&self) -> bool {
        self.txn.in_recovery()
    }

    /// `pg_current_wal_lsn()`: where the log is flushed to, as a WAL location; an error on
    /// a standby, as in PostgreSQL.
    pub fn current_wal_location(&self) -> Result<Option<WalLocation>> {
        if self.is_standby() {
            return Err(Error::new(
                SqlState::OBJECT_NOT_IN_PREREQUISITE_STATE,
                "recovery is in progress",
            )
            .with_hint("WAL control functions cannot be executed during recovery."));
        }
        Ok(self
            .txn
            .wal
            .as_ref()
            .map(|w| self.repl.layout.location(w.flushed_lsn())))
    }

    /// On a standby: how far the log is received (and flushed) and how far replayed.
    pub fn standby_locations(&self) -> Option<(WalLocation, WalLocation)> {
        if !self.is_standby() {
            return None;
        }
        let wal = self.txn.wal.as_ref()?;
        let layout = self.repl.layout;
        Some((
            layout.location(wal.flushed_lsn()),
            layout.location(self.txn.replayed_end()),
        ))
    }

    /// Whether a database of this name exists (only `postgres` for now).
    pub fn database_exists(&self, name: &str) -> bool {
        name == "postgres"
    }

    /// Cancel the running or lock-waiting statement of the session with this backend key.
    /// Returns whether a session matched. Safe to call from any thread.
    pub fn cancel(&self, backend_pid: i32, secret_key: i32) -> bool {
        self.txn.cancel(backend_pid, secret_key)
    }
}

/// The file whose presence makes a server start as a standby, as in PostgreSQL.
pub const STANDBY_SIGNAL: &str = "standby.signal";

type ReceiverParts = (Option<Arc<ReceiverStatus>>, Option<JoinHandle<()>>);

/// A standby's walreceiver, if `primary_conninfo` names a primary (without one, the
/// standby serves what it has and waits).
fn start_receiver(
    settings: &Arc<Settings>,
    txn: &Arc<TxnManager>,
    wal: &Arc<Wal>,
    repl: &Arc<Replication>,
) -> Result<ReceiverParts> {
    let conninfo = settings.show("primary_conninfo").unwrap_or_default();
    if conninfo.trim().is_empty() {
        tracing::warn!(
            "standby without primary_conninfo: it serves what it has and streams nothing"
        );
        return Ok((None, None));
    }
    let conninfo = crate::repl::conninfo::parse_conninfo(&conninfo)?;
    let slot = settings.show("primary_slot_name").filter(|s| !s.is_empty());
    let status = Arc::new(ReceiverStatus::new(conninfo, slot, repl.timeline()));
    let receiver = Receiver {
        status: status.clone(),
        txn: txn.clone(),
        wal: wal.clone(),
        settings: settings.clone(),
        repl: repl.clone(),
        layout: crate::repl::location::Layout::default(),
    };
    tracing::info!("entering standby mode");
    let thread = std::thread::Builder::new()
        .name("walreceiver".into())
        .spawn(move || receiver.run())
        .map_err(|e| Error::internal(format!("could not start the walreceiver thread: {e}")))?;
    Ok((Some(status), Some(thread)))
}

/// What recovery builds, before any thread is started.
pub(crate) struct Recovered {
    pub txn: TxnManager,
    pub checkpoints: Checkpoints,
    pub wal: Arc<Wal>,
}

/// A replay that could not write a page out for lack of space (the pool is full of pages
/// it changed): say how much more room it needs, at least, and stop. Starting again
/// without more room would fail the same way.
fn short_of_space(e: Error, txn: &TxnManager, data_dir: &Path) -> Error {
    if e.code != SqlState::DISK_FULL {
        return e;
    }
    let dirty_bytes = txn.catalog.pool().usage().dirty * PAGE_BYTES as u64;
    Error::new(
        SqlState::DISK_FULL,
        format!(
            "recovery could not write the pages it replayed: {}; it needs at least {} MB more free space in \"{}\"",
            e.message,
            dirty_bytes.div_ceil(1 << 20),
            data_dir.join(STORAGE_DIR).display()
        ),
    )
    .with_hint("Free that much space (or raise shared_buffers so replay keeps more pages in memory) and start the server again; nothing was lost.")
}

/// Recovery: load the last checkpoint (pages, page map and catalog), replay the WAL from
/// its redo LSN, and drop what never committed. Starts no thread: the caller runs the
/// flusher and the checkpointer (or, in tests, flushes and checkpoints itself).
pub(crate) fn recover(
    settings: &Arc<Settings>,
    disk: Arc<dyn Disk>,
    data_dir: &Path,
    segment_bytes: u64,
    prepare_ahead: bool,
) -> Result<Recovered> {
    let opts = WalOptions {
        fsync: settings.get_bool("fsync"),
        commit_delay_us: settings.get_int("commit_delay").max(0) as u64,
        commit_siblings: settings.get_int("commit_siblings").max(0) as u64,
        writer_delay: Duration::from_millis(settings.get_int("wal_writer_delay").max(1) as u64),
        segment_bytes,
        prepare_ahead,
        cut_corrupt: settings.get_bool("recovery_cut_corrupt_wal"),
    };
    let started = Instant::now();
    let storage_dir = data_dir.join(STORAGE_DIR);
    disk.create_dir_all(&storage_dir).map_err(|e| {
        Error::new(
            SqlState::IO_ERROR,
            format!("could not create \"{}\": {e}", storage_dir.display()),
        )
    })?;
    let files = Checkpointer::new(disk.clone(), &storage_dir);
    let loaded = files.load()?;
    let page_file = disk.open(&storage_dir.join("pages"), true).map_err(|e| {
        Error::new(
            SqlState::IO_ERROR,
            format!("could not open the page file: {e}"),
        )
    })?;
    // The page file must outlive a crash before any checkpoint: a bulk load's commit
    // record names pages in it.
    disk.sync_dir(&storage_dir).map_err(|e| {
        Error::new(
            SqlState::IO_ERROR,
            format!("could not fsync \"{}\": {e}", storage_dir.display()),
        )
    })?;
    // Every connection pins a few pages at once; never fewer frames than they need.
    let frames = (settings.get_int("shared_buffers").max(0) as usize / 8)
        .max(16 + 4 * settings.get_int("max_connections").max(0) as usize);
    let (control, catalog) = match loaded {
        Some(cp) => {
            let pool = Arc::new(BufferPool::new(
                page_file,
                PageMap::from_checkpoint(cp.map),
                frames,
            ));
            tracing::info!(
                "starting up from checkpoint {} (redo lsn {}): replaying the WAL in {}",
                cp.control.epoch,
                cp.control.redo,
                data_dir.join("wal").display()
            );
            (cp.control, Catalog::from_image(pool, &cp.catalog)?)
        }
        None => {
            tracing::info!(
                "starting up without a checkpoint: replaying the WAL in {}",
                data_dir.join("wal").display()
            );
            let pool = Arc::new(BufferPool::new(page_file, PageMap::default(), frames));
            (
                Control {
                    epoch: 0,
                    redo: Lsn::ZERO,
                },
                Catalog::new(pool),
            )
        }
    };
    let mut txn = TxnManager::new(catalog);
    // First pass: the slots that bulk loads' records name, which replay must not write
    // over before it reaches them.
    let mut named = Vec::new();
    Wal::scan(
        disk.clone(),
        &data_dir.join("wal"),
        &opts,
        control.redo,
        |kind, payload, _| records::named_slots(kind, payload, &mut named),
    )?;
    txn.catalog.pool().begin_replay(&named)?;
    let mut pieces = RecordReader::new(disk.clone(), &data_dir.join("wal"), &opts);
    let (wal, replayed) = Wal::open(
        disk,
        &data_dir.join("wal"),
        opts,
        control.redo,
        |kind, payload, lsn| {
            records::replay(&txn.catalog, kind, payload, lsn, lsn, &mut |at| {
                pieces.read(at)
            })
        },
    )
    .map_err(|e| short_of_space(e, &txn, data_dir))?;
    records::finish_replay(&txn.catalog).map_err(|e| short_of_space(e, &txn, data_dir))?;
    txn.catalog.pool().end_replay();
    tracing::info!(
        "redo done at {}: {} records, {} bytes replayed in {:.3} s{}",
        replayed.end,
        replayed.records,
        replayed.bytes,
        started.elapsed().as_secs_f64(),
        match &replayed.cut {
            Some((at, why)) => format!("; invalid record at {at} ({why}) cut"),
            None => String::new(),
        }
    );
    txn.attach_wal(wal.clone(), replayed.end);
    let checkpoints = Checkpoints::new(files, settings.clone(), control);
    Ok(Recovered {
        txn,
        checkpoints,
        wal,
    })
}

/// A requested checkpoint that a `CHECKPOINT` statement has yet to wait for.
pub struct CheckpointWait {
    checkpoints: Arc<Checkpoints>,
    ticket: u64,
}

impl CheckpointWait {
    /// Wait for the checkpoint on a thread of the blocking pool, so that the runtime's
    /// worker goes on serving its other connections. Blocking the worker itself, even
    /// with `block_in_place`, was measured to stop every connection while the checkpoint
    /// ran: no transaction completed for 100-140 ms in most first checkpoints under
    /// update_pk at 32 clients.
    pub async fn finish(self) -> Result<()> {
        let CheckpointWait {
            checkpoints,
            ticket,
        } = self;
        let waited = tokio::task::spawn_blocking(move || checkpoints.wait_for(ticket)).await;
        waited.unwrap_or_else(|e| {
            Err(Error::internal(format!(
                "waiting for a checkpoint failed: {e}"
            )))
        })
    }

    /// Wait for the checkpoint, blocking the thread.
    pub fn finish_blocking(self) -> Result<()> {
        crate::wal::blocking(|| self.checkpoints.wait_for(self.ticket))
    }
}
