//! The engine: everything sessions share (catalog, storage, transactions, settings), and
//! its life cycle: recovery at open, the WAL flusher while running, a final flush at close.

use std::path::Path;
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use parking_lot::Mutex;

use crate::disk::{Disk, OsDisk};
use crate::error::Result;
use crate::settings::Settings;
use crate::txn::{records, TxnManager};
use crate::wal::{Wal, WalOptions};

pub struct Engine {
    pub settings: Arc<Settings>,
    pub txn: TxnManager,
    flusher: Mutex<Option<JoinHandle<()>>>,
}

impl Engine {
    /// An engine without a log: nothing survives it (unit tests).
    pub fn new(settings: Arc<Settings>) -> Engine {
        Engine {
            settings,
            txn: TxnManager::default(),
            flusher: Mutex::new(None),
        }
    }

    /// Open the database in `data_dir`: replay the WAL, then start the flusher.
    pub fn open(settings: Arc<Settings>, data_dir: &Path) -> Result<Arc<Engine>> {
        Self::open_on(settings, Arc::new(OsDisk), data_dir)
    }

    pub fn open_on(
        settings: Arc<Settings>,
        disk: Arc<dyn Disk>,
        data_dir: &Path,
    ) -> Result<Arc<Engine>> {
        let opts = WalOptions {
            fsync: settings.get_bool("fsync"),
            commit_delay_us: settings.get_int("commit_delay").max(0) as u64,
            commit_siblings: settings.get_int("commit_siblings").max(0) as u64,
            writer_delay: Duration::from_millis(settings.get_int("wal_writer_delay").max(1) as u64),
        };
        let mut txn = TxnManager::default();
        let started = Instant::now();
        tracing::info!(
            "starting up: replaying the WAL in {}",
            data_dir.join("wal").display()
        );
        let mut replay = records::Replay::default();
        let (wal, replayed) =
            Wal::open(disk, &data_dir.join("wal"), opts, |kind, payload, lsn| {
                records::replay(&txn.catalog, &mut replay, kind, payload, lsn)
            })?;
        replay.finish(&txn.catalog);
        for name in txn.catalog.table_names() {
            if let Some(t) = txn.catalog.table(&name) {
                t.restore_next_row_id();
            }
        }
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
        let flusher = std::thread::Builder::new()
            .name("wal-flusher".into())
            .spawn(move || wal.run_flusher())
            .map_err(|e| {
                crate::error::Error::internal(format!("could not start the WAL flusher: {e}"))
            })?;
        Ok(Arc::new(Engine {
            settings,
            txn,
            flusher: Mutex::new(Some(flusher)),
        }))
    }

    /// Flush everything logged and stop the flusher.
    pub fn shutdown(&self) {
        if let Some(wal) = &self.txn.wal {
            wal.shutdown();
        }
        if let Some(h) = self.flusher.lock().take() {
            let _ = h.join();
        }
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
