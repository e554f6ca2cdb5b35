//! The write-ahead log: one record per commit holding all its row changes as after-images,
//! made durable in groups by a single flusher.
//!
//! Invariants:
//! - An LSN is a byte position in the log. Records are appended in LSN order under one
//!   short lock that does no I/O; a commit's LSN is the end of its record.
//! - `flushed_lsn` is published only after the bytes below it were written and
//!   fdatasynced, by whoever flushed them (the flusher thread, or a lone committer);
//!   flushes never overlap, so it never moves backwards. One publish releases every waiter
//!   whose LSN it reaches, in one pass (`watch.rs`).
//! - A failed write or sync of the log stops the server before anything else is
//!   acknowledged: there is no retry (the "fsyncgate" lesson).
//! - Replay reads records in LSN order and stops at the first one whose length, LSN or
//!   CRC32C is wrong; the log is cut there, so nothing after a torn record is ever applied.
//! - Replay is idempotent: records are after-images keyed by primary key (blind writes).
//!
//! `docs/design.md` gives the byte layouts.

mod log;
pub mod record;
mod stats;
mod watch;

pub use log::{
    segment_header, segment_name, LogReservation, RecordReader, Replayed, Retired, SyncLevel, Wal,
    WalOptions,
};
pub use record::{PendingRecord, Reader, RecordKind, Writer};
pub use stats::{FlushLatency, WalStats};
pub use watch::{blocking, release_core, LsnWatch};

use std::fmt;

/// A log sequence number: a byte position in the log, and a commit's place in the total
/// commit order. A snapshot is one LSN: it sees exactly the commits at or below it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Lsn(pub u64);

impl Lsn {
    pub const ZERO: Lsn = Lsn(0);
}

impl fmt::Display for Lsn {
    /// PostgreSQL's `X/Y` notation: high and low 32 bits in hex.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:X}/{:X}", self.0 >> 32, self.0 & 0xFFFF_FFFF)
    }
}
