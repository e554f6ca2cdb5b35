//! The engine: everything sessions share (catalog, storage, transactions, settings).

use std::sync::Arc;

use crate::settings::Settings;
use crate::txn::TxnManager;

pub struct Engine {
    pub settings: Arc<Settings>,
    pub txn: TxnManager,
}

impl Engine {
    pub fn new(settings: Arc<Settings>) -> Engine {
        Engine {
            settings,
            txn: TxnManager::default(),
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
