//! Transactions: their owner, write sets, row locks, snapshots and the commit path.
//!
//! Invariants:
//! - A transaction's writes stay in its private [`WriteSet`] until commit. Storage never
//!   sees uncommitted data, so aborting is just dropping the write set and the locks.
//! - Every row a transaction writes (insert, update, delete, or the key an insert claims)
//!   is locked in the [`LockTable`] first, and stays locked until the transaction aborts
//!   or its commit record is appended and its writes installed. So two live transactions
//!   never have the same key in their write sets' after-images, and the versions of one
//!   key are installed in LSN order. The one kind of write that shares a row is a
//!   deferred increment: its holders turn it into an after-image of the latest version
//!   at commit, one at a time per key (the lock table's increment latches, held from
//!   reading that version to installing the new one), never while another transaction
//!   owns the row.
//! - A snapshot is one LSN. `visible_lsn` only advances over a prefix of commits that are
//!   all installed and durable at their `synchronous_commit` level, so a snapshot taken at
//!   `visible_lsn` sees each commit whole or not at all, in commit order, and never sees
//!   one that a crash could still take away. (Storage may hold installed versions above
//!   `visible_lsn`: commits whose locks were released early, see
//!   [`TxnManager::start_commit`]. Only lock holders read them, to build on them; a session
//!   that reads one replies to nothing and takes no snapshot until it is visible,
//!   [`SessionSlot::saw_commit`], so no user can tell the lock went early.)
//! - A commit is acknowledged only after it is visible: a client that hears "COMMIT" and
//!   then reads, on any connection, sees its own write.
//! - A change holds the checkpoint barrier (shared) from its log append to its install in
//!   storage and the catalog; a checkpoint takes it exclusively to fix its redo LSN and
//!   image (`checkpoints`), so the image holds exactly the changes logged below the redo
//!   LSN.
//! - Lock waits detect deadlocks immediately (a wait that would close a cycle in the
//!   wait-for graph fails with 40P01) and can be cancelled.
//! - A running transaction has one owner, [`Transaction`]: the layers above reach the lock
//!   table, the write gates, the SERIALIZABLE graph ([`Ssi`]) and the commit sequence only
//!   through it.

pub mod checkpoints;
pub mod ddl;
pub mod increments;
mod locks;
mod manager;
pub mod records;
mod ssi;
mod transaction;
mod visibility;
mod writeset;

pub use locks::{LockTable, TxnId, Want, SHARDS as LOCK_TABLE_SHARDS};
pub use manager::{
    fatal_after_logging, Activity, CommitInFlight, CommitRequest, Isolation, SessionSlot,
    SslStatus, TxnManager,
};
pub use ssi::Ssi;
pub use transaction::{close_gate_for_rebuild, Committing, LockStep, Transaction, TxnMark};
pub use visibility::VisibilityTracker;
pub use writeset::{Increment, JournalMark, TableWrites, WriteSet};
