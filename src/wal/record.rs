//! WAL record framing and a small bounds-checked binary codec for record payloads.
//!
//! A record on the log is, in little-endian:
//!
//! | offset | size | field                                                     |
//! |--------|------|-----------------------------------------------------------|
//! | 0      | 4    | total length of the record, header included               |
//! | 4      | 4    | CRC32C of bytes 8..length (everything after it)           |
//! | 8      | 8    | LSN: the record's own start position in the log           |
//! | 16     | 8    | durable LSN: the log was durable below it when this record |
//! |        |      | took its place                                            |
//! | 24     | 1    | kind                                                      |
//! | 25     | n    | payload                                                   |
//!
//! The LSN inside the record lets recovery reject stale bytes that happen to carry a valid
//! CRC but belong to an older incarnation of that position. The durable LSN lets it tell
//! corruption from a torn tail: a damaged record that ends below a later valid record's
//! durable LSN had been made durable before that record existed, so no crash tore it.

use super::Lsn;
use crate::error::{Error, Result, SqlState};

pub const RECORD_HEADER_BYTES: usize = 25;
/// Largest record accepted, in bytes (a bulk COPY is one record).
pub const MAX_RECORD_BYTES: usize = 1 << 30;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum RecordKind {
    /// One transaction's row changes, as after-images.
    Commit = 1,
    CreateTable = 2,
    DropTable = 3,
    /// ALTER TABLE ... ADD PRIMARY KEY: the new definition and the pages of the rows under
    /// the new key (records written before those pages were: the definition alone, and
    /// replay re-keys the table).
    SetPrimaryKey = 4,
    /// Sequence values up to this one may have been handed out.
    SequenceAdvance = 5,
    /// Rows of a large transaction's commit, logged ahead of its Commit record, which
    /// names them (`txn::records`): alone, nothing.
    WriteSetPiece = 6,
    /// CREATE INDEX or DROP INDEX: the table's new definition, whose indexes replay
    /// makes the table's (building a new one from the rows it has then).
    SetIndexes = 7,
    /// CREATE SEQUENCE: str name, u32 id, the options.
    CreateSequence = 8,
    /// DROP SEQUENCE: str name.
    DropSequence = 9,
    /// setval: str name, u64 the next value to hand out; after ALTER SEQUENCE, then
    /// its new options.
    SetSequence = 10,
    /// CREATE VIEW: the view (`storage::View::put`).
    CreateView = 11,
    /// DROP VIEW: str name.
    DropView = 12,
    /// CREATE ROLE or ALTER ROLE: the role's whole definition (`storage::Role::put`).
    SetRole = 13,
    /// DROP ROLE: str name.
    DropRole = 14,
    /// GRANT or REVOKE: varint count, then each object's OID and new list
    /// (`storage::acl::put_acl`).
    SetAcls = 15,
}

impl RecordKind {
    pub fn from_u8(b: u8) -> Option<RecordKind> {
        Some(match b {
            1 => RecordKind::Commit,
            2 => RecordKind::CreateTable,
            3 => RecordKind::DropTable,
            4 => RecordKind::SetPrimaryKey,
            5 => RecordKind::SequenceAdvance,
            6 => RecordKind::WriteSetPiece,
            7 => RecordKind::SetIndexes,
            8 => RecordKind::CreateSequence,
            9 => RecordKind::DropSequence,
            10 => RecordKind::SetSequence,
            11 => RecordKind::CreateView,
            12 => RecordKind::DropView,
            13 => RecordKind::SetRole,
            14 => RecordKind::DropRole,
            15 => RecordKind::SetAcls,
            _ => return None,
        })
    }
}

/// A record ready to be appended: its bytes with the LSN and CRC still to be filled in,
/// and the CRC of kind+payload computed outside any lock.
pub struct PendingRecord {
    pub bytes: Vec<u8>,
    body_crc: u32,
}

impl PendingRecord {
    pub fn new(kind: RecordKind, payload: &[u8]) -> PendingRecord {
        let mut bytes = Vec::with_capacity(RECORD_HEADER_BYTES + payload.len());
        bytes.extend_from_slice(&((RECORD_HEADER_BYTES + payload.len()) as u32).to_le_bytes());
        bytes.extend_from_slice(&[0; 20]);
        bytes.push(kind as u8);
        bytes.extend_from_slice(payload);
        let body_crc = if bytes.len() > 4096 {
            crc32c::crc32c(&bytes[24..])
        } else {
            0
        };
        PendingRecord { bytes, body_crc }
    }

    pub fn len(&self) -> usize {
        self.bytes.len()
    }

    pub fn is_empty(&self) -> bool {
        self.bytes.is_empty()
    }

    /// Stamp the record with its position and the log's durable LSN at that moment. Small
    /// records are checksummed again in full (cheaper than combining); large ones combine
    /// the CRC computed outside the lock.
    pub fn finish(&mut self, lsn: Lsn, durable: Lsn) {
        self.bytes[8..16].copy_from_slice(&lsn.0.to_le_bytes());
        self.bytes[16..24].copy_from_slice(&durable.0.to_le_bytes());
        let crc = if self.bytes.len() <= 4096 {
            crc32c::crc32c(&self.bytes[8..])
        } else {
            crc32c::crc32c_combine(
                crc32c::crc32c(&self.bytes[8..24]),
                self.body_crc,
                self.bytes.len() - 24,
            )
        };
        self.bytes[4..8].copy_from_slice(&crc.to_le_bytes());
        debug_assert_eq!(crc, crc32c::crc32c(&self.bytes[8..]));
    }
}

/// Why a record at some position is not valid (recovery cuts the log there).
#[derive(Debug, PartialEq, Eq)]
pub enum Invalid {
    /// Zero length: the end of what was ever written.
    End,
    BadLength(u32),
    BadLsn(u64),
    BadCrc,
    BadKind(u8),
    /// The record runs past the end of the log files.
    Truncated,
}

/// Check a record's header fields (the first 16 bytes) at position `lsn`; returns its length.
pub fn check_header(header: &[u8; 16], lsn: Lsn) -> Result<usize, Invalid> {
    let len = u32::from_le_bytes([header[0], header[1], header[2], header[3]]);
    if len == 0 {
        return Err(Invalid::End);
    }
    if (len as usize) < RECORD_HEADER_BYTES || len as usize > MAX_RECORD_BYTES {
        return Err(Invalid::BadLength(len));
    }
    let at = u64::from_le_bytes(header[8..16].try_into().map_err(|_| Invalid::Truncated)?);
    if at != lsn.0 {
        return Err(Invalid::BadLsn(at));
    }
    Ok(len as usize)
}

/// Verify a whole record's CRC and kind (after [`check_header`]).
pub fn check_record(bytes: &[u8]) -> Result<RecordKind, Invalid> {
    let crc = u32::from_le_bytes([bytes[4], bytes[5], bytes[6], bytes[7]]);
    if crc32c::crc32c(&bytes[8..]) != crc {
        return Err(Invalid::BadCrc);
    }
    RecordKind::from_u8(bytes[24]).ok_or(Invalid::BadKind(bytes[24]))
}

/// The durable LSN a whole, checked record carries (see the layout above).
pub fn durable_before(bytes: &[u8]) -> Lsn {
    let mut field = [0u8; 8];
    if let Some(b) = bytes.get(16..24) {
        field.copy_from_slice(b);
    }
    Lsn(u64::from_le_bytes(field))
}

fn corrupt(what: &str) -> Error {
    Error::new(SqlState("XX001"), format!("corrupt WAL record: {what}"))
}

/// Appends payload fields.
#[derive(Default)]
pub struct Writer {
    pub buf: Vec<u8>,
}

impl Writer {
    pub fn u8(&mut self, v: u8) {
        self.buf.push(v);
    }

    pub fn u32(&mut self, v: u32) {
        self.buf.extend_from_slice(&v.to_le_bytes());
    }

    pub fn u64(&mut self, v: u64) {
        self.buf.extend_from_slice(&v.to_le_bytes());
    }

    pub fn varint(&mut self, mut v: u64) {
        while v >= 0x80 {
            self.buf.push((v as u8) | 0x80);
            v >>= 7;
        }
        self.buf.push(v as u8);
    }

    pub fn bytes(&mut self, b: &[u8]) {
        self.varint(b.len() as u64);
        self.buf.extend_from_slice(b);
    }

    pub fn str(&mut self, s: &str) {
        self.bytes(s.as_bytes());
    }

    pub fn opt_str(&mut self, s: Option<&str>) {
        match s {
            None => self.u8(0),
            Some(s) => {
                self.u8(1);
                self.str(s);
            }
        }
    }
}

/// Reads payload fields; every read is bounds-checked.
pub struct Reader<'a> {
    buf: &'a [u8],
    pos: usize,
}

impl<'a> Reader<'a> {
    pub fn new(buf: &'a [u8]) -> Reader<'a> {
        Reader { buf, pos: 0 }
    }

    pub fn is_done(&self) -> bool {
        self.pos == self.buf.len()
    }

    fn take(&mut self, n: usize) -> Result<&'a [u8]> {
        let end = self
            .pos
            .checked_add(n)
            .filter(|e| *e <= self.buf.len())
            .ok_or_else(|| corrupt("truncated field"))?;
        let s = &self.buf[self.pos..end];
        self.pos = end;
        Ok(s)
    }

    pub fn u8(&mut self) -> Result<u8> {
        Ok(self.take(1)?[0])
    }

    pub fn u32(&mut self) -> Result<u32> {
        let b = self.take(4)?;
        Ok(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    }

    pub fn u64(&mut self) -> Result<u64> {
        let b = self.take(8)?;
        let mut a = [0u8; 8];
        a.copy_from_slice(b);
        Ok(u64::from_le_bytes(a))
    }

    pub fn varint(&mut self) -> Result<u64> {
        let mut v = 0u64;
        for shift in (0..64).step_by(7) {
            let b = self.u8()?;
            v |= ((b & 0x7f) as u64) << shift;
            if b & 0x80 == 0 {
                return Ok(v);
            }
        }
        Err(corrupt("varint too long"))
    }

    pub fn bytes(&mut self) -> Result<&'a [u8]> {
        let n = self.varint()?;
        let n = usize::try_from(n).map_err(|_| corrupt("length"))?;
        self.take(n)
    }

    pub fn str(&mut self) -> Result<String> {
        let b = self.bytes()?;
        String::from_utf8(b.to_vec()).map_err(|_| corrupt("invalid UTF-8"))
    }

    pub fn opt_str(&mut self) -> Result<Option<String>> {
        match self.u8()? {
            0 => Ok(None),
            1 => Ok(Some(self.str()?)),
            _ => Err(corrupt("bad option tag")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finish_stamps_lsn_and_a_crc_that_verifies() {
        let mut r = PendingRecord::new(RecordKind::Commit, b"hello");
        r.finish(Lsn(4096), Lsn(1000));
        let header: [u8; 16] = r.bytes[..16].try_into().unwrap();
        assert_eq!(check_header(&header, Lsn(4096)), Ok(30));
        assert_eq!(durable_before(&r.bytes), Lsn(1000));
        assert_eq!(check_header(&header, Lsn(4097)), Err(Invalid::BadLsn(4096)));
        assert_eq!(check_record(&r.bytes), Ok(RecordKind::Commit));
        let mut torn = r.bytes.clone();
        torn[20] ^= 1;
        assert_eq!(check_record(&torn), Err(Invalid::BadCrc));
    }

    #[test]
    fn reader_never_reads_past_the_end() {
        let mut w = Writer::default();
        w.str("table");
        w.varint(300);
        let mut r = Reader::new(&w.buf);
        assert_eq!(r.str().unwrap(), "table");
        assert_eq!(r.varint().unwrap(), 300);
        assert!(r.is_done());
        for cut in 0..w.buf.len() {
            let mut r = Reader::new(&w.buf[..cut]);
            assert!(r.str().and_then(|_| r.varint()).is_err());
        }
    }
}

#[cfg(test)]
mod large_record_tests {
    use super::*;

    #[test]
    fn large_records_combine_to_the_same_crc() {
        let payload = vec![7u8; 100_000];
        let mut r = PendingRecord::new(RecordKind::Commit, &payload);
        r.finish(Lsn(123_456), Lsn(0));
        assert_eq!(check_record(&r.bytes), Ok(RecordKind::Commit));
    }
}
