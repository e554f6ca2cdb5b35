//! The write-ahead log. For now this module only defines [`Lsn`], the position that orders
//! every commit; the log itself (segments, records, group flush) builds on it.
//!
//! Invariant: LSNs are handed out in strictly increasing order, and a commit's LSN is its
//! place in the serial order of all commits. A snapshot is a single LSN: it sees exactly
//! the commits whose LSN is at or below it.

use std::fmt;

/// A log sequence number: the position of a commit in the total commit order.
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
