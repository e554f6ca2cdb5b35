//! WAL locations: the positions PostgreSQL's tools see.
//!
//! Inside the server an [`Lsn`] counts log bytes only. A segment file holds a 32-byte
//! header and then `segment_bytes - 32` log bytes, so the log position `p` lies in segment
//! `p / D` at file offset `32 + p % D` (`D` = the log bytes per segment). A WAL location is
//! that file position counted across segments: `segment * segment_bytes + offset`. It is
//! what the replication protocol, `pg_current_wal_lsn()` and `pg_stat_replication` show, so
//! that `pg_receivewal` writes each streamed byte at the very offset of the very segment
//! it came from, and its files are the primary's.

use crate::constants::WAL_SEGMENT_BYTES;
use crate::wal::Lsn;

/// Bytes of a segment file before its log bytes.
pub const SEGMENT_HEADER_BYTES: u64 = 32;

/// A position in the segment files, as PostgreSQL's tools count them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct WalLocation(pub u64);

impl std::fmt::Display for WalLocation {
    /// PostgreSQL's `X/X` form.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{:X}/{:X}", self.0 >> 32, self.0 & 0xffff_ffff)
    }
}

impl WalLocation {
    /// Parse PostgreSQL's `X/X` form.
    pub fn parse(s: &str) -> Option<WalLocation> {
        let (hi, lo) = s.trim().split_once('/')?;
        let hi = u32::from_str_radix(hi, 16).ok()?;
        let lo = u32::from_str_radix(lo, 16).ok()?;
        Some(WalLocation(((hi as u64) << 32) | lo as u64))
    }
}

/// Converts between log positions and WAL locations for one segment size.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Layout {
    pub segment_bytes: u64,
}

impl Default for Layout {
    fn default() -> Self {
        Layout {
            segment_bytes: WAL_SEGMENT_BYTES,
        }
    }
}

impl Layout {
    fn data_bytes(&self) -> u64 {
        self.segment_bytes - SEGMENT_HEADER_BYTES
    }

    /// Where log position `lsn` lies in the segment files. A position at a segment's end
    /// is the next segment's first log byte (after its header), except the log's very
    /// start, which is its first segment's first log byte too.
    pub fn location(&self, lsn: Lsn) -> WalLocation {
        let d = self.data_bytes();
        WalLocation((lsn.0 / d) * self.segment_bytes + SEGMENT_HEADER_BYTES + lsn.0 % d)
    }

    /// The log position at or after a WAL location: a location inside a segment's header
    /// is that segment's first log byte.
    pub fn lsn(&self, loc: WalLocation) -> Lsn {
        let n = loc.0 / self.segment_bytes;
        let off = loc.0 % self.segment_bytes;
        Lsn(n * self.data_bytes() + off.saturating_sub(SEGMENT_HEADER_BYTES))
    }

    /// The segment a location lies in, and the offset in its file.
    pub fn segment_of(&self, loc: WalLocation) -> (u64, u64) {
        (loc.0 / self.segment_bytes, loc.0 % self.segment_bytes)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn locations_round_trip_and_skip_headers() {
        let l = Layout {
            segment_bytes: 4096,
        };
        assert_eq!(l.location(Lsn(0)), WalLocation(32));
        assert_eq!(l.location(Lsn(4063)), WalLocation(4095));
        assert_eq!(l.location(Lsn(4064)), WalLocation(4096 + 32));
        for p in [0, 1, 4063, 4064, 4065, 100_000] {
            assert_eq!(l.lsn(l.location(Lsn(p))), Lsn(p));
        }
        assert_eq!(l.lsn(WalLocation(4096)), Lsn(4064), "inside a header");
        assert_eq!(l.lsn(WalLocation(4096 + 31)), Lsn(4064));
        assert_eq!(WalLocation(0x1_0000_0028).to_string(), "1/28");
        assert_eq!(WalLocation::parse("1/28"), Some(WalLocation(0x1_0000_0028)));
        assert_eq!(WalLocation::parse("x/1"), None);
    }
}
