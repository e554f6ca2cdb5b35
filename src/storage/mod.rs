//! Storage: the catalog of tables and, per table, the committed row versions keyed by an
//! order-preserving encoding of the primary key (or of a hidden row id): the newest in the
//! table's B+tree over the shared buffer pool, older ones in memory for snapshots.
//!
//! Invariants:
//! - Tables only ever hold *committed* data. Uncommitted writes live in each
//!   transaction's write set (see `txn`), so nothing here is ever rolled back. (A bulk
//!   load's rows, and a large write set's spilled rows, are in pages before commit, but
//!   in private trees that no table, reader or checkpoint sees: `bulk`, `spill`.) A commit is
//!   installed when its log record is appended, before it is durable; snapshots (at or below
//!   `visible_lsn`) do not see it until it is, so versions above `visible_lsn` are read only
//!   by the lock holder that builds on them.
//! - Versions of a key are installed in increasing LSN order (row locks order the installs
//!   of conflicting commits). The tree holds the newest; each older version is valid from
//!   its LSN up to the LSN that superseded it.
//! - A reader at snapshot `s` sees, for each key, the newest version with `lsn <= s`.
//! - An older version is dropped once every live snapshot is at or above the LSN that
//!   superseded it (the horizon).
//! - Pages are written only to free slots (shadow paging); a checkpoint is a consistent page
//!   image at a redo LSN, current once the control file switches.
//!
//! Bottom up: pages (`page`), the buffer pool and page map (`pool`), one B+tree per table
//! (`btree`), tables (`table`), their secondary indexes (`index`) and write gates
//! (`write_gate`), bulk loads (`bulk`),
//! transactions' spilled write sets (`spill`),
//! the catalog (`catalog`) and checkpoints (`checkpoint`).
//! Their own invariants open each module.

pub mod acl;
pub mod btree;
mod bulk;
mod catalog;
pub mod checkpoint;
#[cfg(test)]
mod crash_tests;
pub mod index;
pub mod page;
pub mod pool;
pub mod roles;
pub mod spill;
pub mod stats;
pub use pool::POOL_TABLE_SHARDS;
mod table;
#[cfg(test)]
mod table_tests;
pub mod write_gate;

pub use bulk::{BulkLoad, LoadedRow};
pub use catalog::{
    get_def, put_def, Catalog, CheckDef, Column, DependentViews, FkAction, ForeignKeyDef, Sequence,
    SequenceExhausted, SequenceOptions, TableDef, View,
};
pub use index::{Index, IndexDef};
pub use roles::Role;
pub use table::{Key, Row, Table, TableId, Version, VERSION_SHARDS};
