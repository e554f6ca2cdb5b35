//! SteadyDB: a PostgreSQL-compatible OLTP server whose write path does not stall.
//!
//! Layers, bottom up (see `docs/architecture.md` for the guided tour):

pub mod auth;
pub mod constants;
pub mod disk;
pub mod engine;
pub mod error;
pub mod memory;
pub mod repl;
pub mod server;
pub mod settings;
pub mod sql;
pub mod stages;
pub mod storage;
pub mod txn;
pub mod types;
pub mod wal;
pub mod wire;
