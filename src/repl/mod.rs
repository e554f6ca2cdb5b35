//! Streaming replication: a primary streams its log to standbys over PostgreSQL's
//! replication protocol, and commits wait, as `synchronous_commit` asks, for a quorum of
//! synchronous standbys to have written, flushed or applied them.
//!
//! Invariants, and why each holds:
//!
//! - **A standby's log is the primary's, byte for byte.** The stream carries segment-file
//!   bytes at their WAL locations ([`location`]), and a standby writes them at the same
//!   places in its own segments. So every record keeps its LSN, its CRC and its place in
//!   the commit order, and the standby replays through the same code as crash recovery.
//! - **No commit is visible before it is durable at its level.** The quorum task
//!   ([`syncrep`]) turns the standbys' reports into three positions (written, flushed,
//!   applied on enough synchronous standbys) and publishes them to the visibility tracker,
//!   which makes a commit visible only once its level's position has passed it. One
//!   publish releases every waiting commit it reaches: no queue of waiters, no lock held
//!   while waking, no signal per waiter. A commit whose wait is cancelled stays invisible
//!   until the quorum has it, so nobody reads what a failover could lose.
//! - **A standby shows the primary's commit order.** Its snapshots are its applied
//!   position, and replay applies records in log order, so a reader there sees a prefix of
//!   the primary's commits, never a later one without an earlier (no long fork).
//! - **The quorum is a pure function** of the reports and `synchronous_standby_names`
//!   ([`quorum::decide`]), O(standbys).

pub mod basebackup;
mod client;
pub mod conninfo;
pub mod identity;
pub mod location;
pub mod machine;
pub mod names;
pub mod primary;
pub mod quorum;
pub mod read;
pub mod receiver;
pub mod slots;
mod transport;

#[cfg(test)]
mod sim_tests;
