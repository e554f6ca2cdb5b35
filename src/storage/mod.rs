//! Storage: the catalog of tables and, per table, the committed row versions keyed by an
//! order-preserving encoding of the primary key (or of a hidden row id).
//!
//! Invariants:
//! - Storage only ever holds *committed* data. Uncommitted writes live in each
//!   transaction's write set (see `txn`), so nothing here is ever rolled back. A commit is
//!   installed when its log record is appended, before it is durable; snapshots (at or below
//!   `visible_lsn`) do not see it until it is, so versions above `visible_lsn` are read only
//!   by the lock holder that builds on them.
//! - Each key maps to a version chain, newest first, each version stamped with the LSN of the
//!   commit that wrote it. Versions are installed in increasing LSN order per key (row locks
//!   make the installs of conflicting commits ordered), so a chain is sorted by LSN.
//! - A reader at snapshot `s` sees, for each key, the newest version with `lsn <= s`.
//! - A version may be pruned once a newer version is visible to every live snapshot
//!   (its LSN is at or below the oldest snapshot, the horizon).
//!
//! Tables are still served from an in-memory map (`table.rs`). The paged engine that will
//! replace it behind the same methods is built below it and crash-tested, not yet wired in:
//! pages (`page`), the buffer pool and page map (`pool`), one B+tree per table (`btree`)
//! and shadow-paged checkpoints (`checkpoint`). Their own invariants open each module.

pub mod btree;
mod catalog;
pub mod checkpoint;
#[cfg(test)]
mod crash_tests;
pub mod page;
pub mod pool;
mod table;

pub use catalog::{get_def, put_def, Catalog, Column, Sequence, TableDef};
pub use table::{Key, Row, Table, TableId, Version};
