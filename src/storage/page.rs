//! The 8 KiB page: header, slot array and cells, and the checks made on every read.
//!
//! Byte layout (little-endian), `docs/design.md` has the same table:
//!
//! | offset | size | field                                                              |
//! |--------|------|--------------------------------------------------------------------|
//! | 0      | 4    | CRC32C of bytes 4..8192                                            |
//! | 4      | 1    | kind: 1 leaf, 2 internal, 3 overflow                               |
//! | 5      | 1    | reserved, 0                                                        |
//! | 6      | 2    | cell count (leaf, internal) or data length (overflow)              |
//! | 8      | 8    | page id: the logical page this image belongs to                    |
//! | 16     | 8    | epoch: the checkpoint epoch (or eviction) that wrote this image    |
//! | 24     | 8    | link: leftmost child (internal), next overflow page (overflow)     |
//! | 32     | 2    | lower: end of the slot array                                       |
//! | 34     | 2    | upper: start of the cell area                                      |
//! | 36     | 4    | reserved, 0                                                        |
//! | 40     | 2·n  | slot array: offset of each cell, in key order                      |
//! | upper  |      | cells, packed towards the end of the page                          |
//!
//! A leaf cell is `[key length u16][key][lsn u64][tag u8][value]` where the value is, by
//! tag: 0 inline `[length u16][bytes]`, 1 overflow `[length u32][first page u64]`, 2 a
//! tombstone (the key's newest committed version is a deletion). An internal cell is
//! `[key length u16][key][child u64]`: the child holds keys at or above the cell's key and
//! below the next cell's; the header's link is the child for keys below the first cell.
//!
//! Invariants, checked on every read ([`Page::verify`]) and asserted before every write:
//! the CRC matches, the page id is the one asked for, the kind is known, and
//! `40 + 2·count == lower <= upper <= 8192`; every slot points inside the cell area.
//! The same walk over the cells counts the bytes they use: a page in memory keeps that
//! count as it changes (so a fit check is not a walk), and a write asserts it is right.

use crate::wal::Lsn;

pub const PAGE_BYTES: usize = 8192;
pub const HEADER_BYTES: usize = 40;
/// Longest key stored in a tree, in bytes: PostgreSQL's btree limit (a third of a page
/// less overhead). A leaf cell of a key this long keeps its value on overflow pages, and
/// any cell of it takes at most half a page (`btree` asserts what its splits need).
pub const MAX_KEY_BYTES: usize = 2704;
/// Longest leaf cell kept inline; a longer value goes to overflow pages.
pub const MAX_INLINE_CELL_BYTES: usize = 2000;
/// Data bytes carried by one overflow page.
pub const OVERFLOW_DATA_BYTES: usize = PAGE_BYTES - HEADER_BYTES;

/// A logical page: what the tree links by. Its physical place is in the page map.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct PageId(pub u64);

impl PageId {
    /// Not a page: the end of an overflow chain. Page 0 is never allocated.
    pub const NONE: PageId = PageId(0);
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum PageKind {
    Leaf = 1,
    Internal = 2,
    Overflow = 3,
}

impl PageKind {
    fn from_u8(b: u8) -> Option<PageKind> {
        Some(match b {
            1 => PageKind::Leaf,
            2 => PageKind::Internal,
            3 => PageKind::Overflow,
            _ => return None,
        })
    }
}

/// Why a page read from disk was rejected.
#[derive(Debug, PartialEq, Eq)]
pub enum Corrupt {
    Checksum { stored: u32, computed: u32 },
    WrongPage { found: u64 },
    Kind(u8),
    Layout(&'static str),
}

impl std::fmt::Display for Corrupt {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Corrupt::Checksum { stored, computed } => write!(
                f,
                "checksum mismatch: stored {stored:08x}, computed {computed:08x}"
            ),
            Corrupt::WrongPage { found } => write!(f, "holds page {found}"),
            Corrupt::Kind(k) => write!(f, "unknown page kind {k}"),
            Corrupt::Layout(what) => write!(f, "bad layout: {what}"),
        }
    }
}

/// A leaf cell's value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LeafValue<'a> {
    Inline(&'a [u8]),
    Overflow { len: u32, first: PageId },
    Tombstone,
}

/// One page image. Always exactly `PAGE_BYTES` long.
pub struct Page {
    bytes: Box<[u8; PAGE_BYTES]>,
    /// Bytes used by cells and their slots (leaf and internal pages): kept up to date by
    /// every change, so that a fit check does not walk every cell. Not stored on disk;
    /// counted when a page is read, and checked against the cells before it is written.
    used: usize,
}

fn get_u16(b: &[u8], at: usize) -> usize {
    u16::from_le_bytes([b[at], b[at + 1]]) as usize
}

fn get_u64(b: &[u8], at: usize) -> u64 {
    let mut a = [0; 8];
    a.copy_from_slice(&b[at..at + 8]);
    u64::from_le_bytes(a)
}

fn put_u16(b: &mut [u8], at: usize, v: usize) {
    debug_assert!(v <= u16::MAX as usize);
    b[at..at + 2].copy_from_slice(&(v as u16).to_le_bytes());
}

fn put_u64(b: &mut [u8], at: usize, v: u64) {
    b[at..at + 8].copy_from_slice(&v.to_le_bytes());
}

impl Page {
    /// An empty page of `kind` for logical page `id`.
    pub fn new(kind: PageKind, id: PageId) -> Page {
        let mut page = Page {
            bytes: Box::new([0; PAGE_BYTES]),
            used: 0,
        };
        page.reset(kind);
        put_u64(&mut page.bytes[..], 8, id.0);
        page
    }

    /// A page from an image's bytes, checked: see [`Page::verify`]. (The pool reads into
    /// its frames instead: [`Page::load_buffer`].)
    #[cfg(test)]
    pub fn from_disk(bytes: Box<[u8; PAGE_BYTES]>, expected: PageId) -> Result<Page, Corrupt> {
        let mut page = Page { bytes, used: 0 };
        page.check_loaded(expected)?;
        Ok(page)
    }

    /// The page's bytes, for the buffer pool to read an image from disk into, in place.
    /// Until [`Page::check_loaded`] accepts what was read, the page must not be used.
    pub fn load_buffer(&mut self) -> &mut [u8; PAGE_BYTES] {
        self.used = 0;
        &mut self.bytes
    }

    /// Check an image read into [`Page::load_buffer`] (see [`Page::verify`]).
    pub fn check_loaded(&mut self, expected: PageId) -> Result<(), Corrupt> {
        self.used = self.verify(expected)?;
        Ok(())
    }

    /// Empty the page and make it `kind`, keeping its id.
    pub fn reset(&mut self, kind: PageKind) {
        let id = self.id();
        self.bytes.fill(0);
        self.bytes[4] = kind as u8;
        put_u64(&mut self.bytes[..], 8, id.0);
        put_u16(&mut self.bytes[..], 32, HEADER_BYTES);
        put_u16(&mut self.bytes[..], 34, PAGE_BYTES);
        self.used = 0;
    }

    pub fn bytes(&self) -> &[u8; PAGE_BYTES] {
        &self.bytes
    }

    pub fn clone_page(&self) -> Page {
        Page {
            bytes: self.bytes.clone(),
            used: self.used,
        }
    }

    pub fn id(&self) -> PageId {
        PageId(get_u64(&self.bytes[..], 8))
    }

    pub fn kind(&self) -> PageKind {
        PageKind::from_u8(self.bytes[4]).expect("kind checked on read and set on creation")
    }

    pub fn epoch(&self) -> u64 {
        get_u64(&self.bytes[..], 16)
    }

    pub fn link(&self) -> PageId {
        PageId(get_u64(&self.bytes[..], 24))
    }

    pub fn set_link(&mut self, link: PageId) {
        put_u64(&mut self.bytes[..], 24, link.0);
    }

    pub fn count(&self) -> usize {
        get_u16(&self.bytes[..], 6)
    }

    fn lower(&self) -> usize {
        get_u16(&self.bytes[..], 32)
    }

    fn upper(&self) -> usize {
        get_u16(&self.bytes[..], 34)
    }

    /// Stamp the epoch and checksum before the image is written to disk.
    pub fn seal(&mut self, epoch: u64) {
        let used = self
            .check_layout()
            .expect("a page about to be written must be well formed");
        assert_eq!(
            self.used, used,
            "a page's count of used bytes must match its cells"
        );
        put_u64(&mut self.bytes[..], 16, epoch);
        let crc = crc32c::crc32c(&self.bytes[4..]);
        self.bytes[0..4].copy_from_slice(&crc.to_le_bytes());
    }

    /// The checks made on every image read from disk. Returns the bytes its cells and
    /// slots use (0 for an overflow page).
    pub fn verify(&self, expected: PageId) -> Result<usize, Corrupt> {
        let stored =
            u32::from_le_bytes([self.bytes[0], self.bytes[1], self.bytes[2], self.bytes[3]]);
        let computed = crc32c::crc32c(&self.bytes[4..]);
        if stored != computed {
            return Err(Corrupt::Checksum { stored, computed });
        }
        if self.id() != expected {
            return Err(Corrupt::WrongPage { found: self.id().0 });
        }
        if PageKind::from_u8(self.bytes[4]).is_none() {
            return Err(Corrupt::Kind(self.bytes[4]));
        }
        self.check_layout()
    }

    /// The layout checks of [`Page::verify`]; returns the bytes cells and slots use.
    fn check_layout(&self) -> Result<usize, Corrupt> {
        if self.bytes[4] == PageKind::Overflow as u8 {
            return if self.count() <= OVERFLOW_DATA_BYTES {
                Ok(0)
            } else {
                Err(Corrupt::Layout("overflow data length"))
            };
        }
        let (count, lower, upper) = (self.count(), self.lower(), self.upper());
        if lower != HEADER_BYTES + 2 * count || lower > upper || upper > PAGE_BYTES {
            return Err(Corrupt::Layout("slot array and cell area overlap"));
        }
        let mut used = 0;
        for i in 0..count {
            let at = get_u16(&self.bytes[..], HEADER_BYTES + 2 * i);
            if at < upper || at + 2 > PAGE_BYTES {
                return Err(Corrupt::Layout("slot outside the cell area"));
            }
            let end = self
                .cell_end(at)
                .ok_or(Corrupt::Layout("cell overruns the page"))?;
            if end > PAGE_BYTES {
                return Err(Corrupt::Layout("cell overruns the page"));
            }
            used += end - at + 2;
        }
        Ok(used)
    }

    /// Where the cell starting at `at` ends, from its own length fields.
    fn cell_end(&self, at: usize) -> Option<usize> {
        let b = &self.bytes[..];
        let key_end = at + 2 + get_u16(b, at);
        match self.bytes[4] {
            2 => Some(key_end + 8),
            _ => {
                let tag_at = key_end + 8;
                if tag_at >= PAGE_BYTES {
                    return None;
                }
                match b[tag_at] {
                    0 if tag_at + 3 <= PAGE_BYTES => Some(tag_at + 3 + get_u16(b, tag_at + 1)),
                    1 => Some(tag_at + 1 + 12),
                    2 => Some(tag_at + 1),
                    _ => None,
                }
            }
        }
    }

    fn cell_at(&self, i: usize) -> usize {
        get_u16(&self.bytes[..], HEADER_BYTES + 2 * i)
    }

    /// The whole encoded cell `i`.
    pub fn cell(&self, i: usize) -> &[u8] {
        let at = self.cell_at(i);
        let end = self.cell_end(at).expect("cells are checked on read");
        &self.bytes[at..end]
    }

    pub fn key(&self, i: usize) -> &[u8] {
        let at = self.cell_at(i);
        let len = get_u16(&self.bytes[..], at);
        &self.bytes[at + 2..at + 2 + len]
    }

    /// Leaf cell `i`: its version's LSN and value.
    pub fn leaf_entry(&self, i: usize) -> (Lsn, LeafValue<'_>) {
        debug_assert_eq!(self.kind(), PageKind::Leaf);
        decode_leaf_cell(self.cell(i)).1
    }

    /// Internal cell `i`'s child.
    pub fn child(&self, i: usize) -> PageId {
        let cell = self.cell(i);
        PageId(get_u64(cell, cell.len() - 8))
    }

    /// Binary search for `key`: `Ok(i)` if cell `i` has it, else `Err(insertion point)`.
    pub fn search(&self, key: &[u8]) -> Result<usize, usize> {
        let (mut lo, mut hi) = (0, self.count());
        while lo < hi {
            let mid = (lo + hi) / 2;
            match self.key(mid).cmp(key) {
                std::cmp::Ordering::Less => lo = mid + 1,
                std::cmp::Ordering::Greater => hi = mid,
                std::cmp::Ordering::Equal => return Ok(mid),
            }
        }
        Err(lo)
    }

    /// In an internal page: the child whose range holds `key`, and its position
    /// (0 = the leftmost link, i + 1 = cell i).
    pub fn child_for(&self, key: &[u8]) -> (usize, PageId) {
        let pos = match self.search(key) {
            Ok(i) => i + 1,
            Err(i) => i,
        };
        (pos, self.child_at(pos))
    }

    /// Child by position: 0 is the leftmost link, i + 1 is cell i's child.
    pub fn child_at(&self, pos: usize) -> PageId {
        if pos == 0 {
            self.link()
        } else {
            self.child(pos - 1)
        }
    }

    /// Bytes used by cells and their slots.
    pub fn used_bytes(&self) -> usize {
        debug_assert_ne!(self.kind(), PageKind::Overflow);
        self.used
    }

    /// Bytes a new cell (plus its slot) may use, after compaction.
    pub fn free_bytes(&self) -> usize {
        PAGE_BYTES - HEADER_BYTES - self.used_bytes()
    }

    /// Whether a new cell of `len` bytes fits (after compaction, if need be).
    pub fn fits(&self, len: usize) -> bool {
        self.upper() - self.lower() >= len + 2 || self.free_bytes() >= len + 2
    }

    /// Whether cell `i` may be replaced by one of `len` bytes.
    pub fn fits_replacing(&self, i: usize, len: usize) -> bool {
        let old = self.cell(i).len();
        len <= old || self.free_bytes() + old >= len
    }

    /// Insert `cell` as cell `i`. False (and no change) if it does not fit even after
    /// compaction.
    pub fn insert_cell(&mut self, i: usize, cell: &[u8]) -> bool {
        assert!(i <= self.count());
        if self.upper() - self.lower() < cell.len() + 2 {
            if !self.fits(cell.len()) {
                return false;
            }
            self.compact();
        }
        let at = self.upper() - cell.len();
        self.bytes[at..at + cell.len()].copy_from_slice(cell);
        let (count, lower) = (self.count(), self.lower());
        let slots = HEADER_BYTES + 2 * i;
        self.bytes.copy_within(slots..lower, slots + 2);
        put_u16(&mut self.bytes[..], slots, at);
        put_u16(&mut self.bytes[..], 6, count + 1);
        put_u16(&mut self.bytes[..], 32, lower + 2);
        put_u16(&mut self.bytes[..], 34, at);
        self.used += cell.len() + 2;
        true
    }

    /// Remove cell `i`; its space is reclaimed by the next compaction.
    pub fn remove_cell(&mut self, i: usize) {
        let (count, lower) = (self.count(), self.lower());
        assert!(i < count);
        self.used -= self.cell(i).len() + 2;
        let slots = HEADER_BYTES + 2 * i;
        self.bytes.copy_within(slots + 2..lower, slots);
        put_u16(&mut self.bytes[..], 6, count - 1);
        put_u16(&mut self.bytes[..], 32, lower - 2);
        if count == 1 {
            put_u16(&mut self.bytes[..], 34, PAGE_BYTES);
        }
    }

    /// Replace cell `i` with `cell`. False (and no change) if it does not fit.
    pub fn replace_cell(&mut self, i: usize, cell: &[u8]) -> bool {
        if !self.fits_replacing(i, cell.len()) {
            return false;
        }
        self.replace_fitting(i, cell);
        true
    }

    /// Replace cell `i` with `cell`, which [`Page::fits_replacing`] said fits.
    pub fn replace_fitting(&mut self, i: usize, cell: &[u8]) {
        let old = self.cell(i).len();
        if cell.len() <= old {
            // Overwrite in place; the tail of the old cell becomes a hole.
            let at = self.cell_at(i);
            self.bytes[at..at + cell.len()].copy_from_slice(cell);
            self.used = self.used - old + cell.len();
            return;
        }
        self.remove_cell(i);
        let fitted = self.insert_cell(i, cell);
        assert!(fitted, "space was checked");
    }

    /// Pack the cells against the end of the page, removing holes.
    pub fn compact(&mut self) {
        // One copy of the page to read the cells from, not one allocation per cell.
        let old = self.clone_page();
        let mut at = PAGE_BYTES;
        for i in 0..old.count() {
            let cell = old.cell(i);
            at -= cell.len();
            self.bytes[at..at + cell.len()].copy_from_slice(cell);
            put_u16(&mut self.bytes[..], HEADER_BYTES + 2 * i, at);
        }
        put_u16(&mut self.bytes[..], 34, at);
    }

    /// Move cells `from..` to the end of `right` (an empty page of the same kind).
    pub fn move_tail(&mut self, from: usize, right: &mut Page) {
        for i in from..self.count() {
            let fitted = right.insert_cell(right.count(), self.cell(i));
            assert!(fitted, "half a page fits in an empty page");
        }
        while self.count() > from {
            self.remove_cell(self.count() - 1);
        }
        self.compact();
    }

    /// Overflow page data.
    pub fn overflow_data(&self) -> &[u8] {
        &self.bytes[HEADER_BYTES..HEADER_BYTES + self.count()]
    }

    pub fn set_overflow_data(&mut self, data: &[u8]) {
        assert!(data.len() <= OVERFLOW_DATA_BYTES);
        self.bytes[HEADER_BYTES..HEADER_BYTES + data.len()].copy_from_slice(data);
        put_u16(&mut self.bytes[..], 6, data.len());
    }
}

/// Whether `value` under `key` is stored in its leaf cell (key length, key, LSN, tag,
/// value length, value: 13 bytes besides key and value) rather than in overflow pages.
pub fn stays_inline(key: &[u8], value: &[u8]) -> bool {
    key.len() + value.len() + 13 <= MAX_INLINE_CELL_BYTES
}

/// Encode a leaf cell.
pub fn leaf_cell(key: &[u8], lsn: Lsn, value: LeafValue<'_>) -> Vec<u8> {
    let value_bytes = match value {
        LeafValue::Inline(v) => 3 + v.len(),
        LeafValue::Overflow { .. } => 13,
        LeafValue::Tombstone => 1,
    };
    let mut cell = Vec::with_capacity(2 + key.len() + 8 + value_bytes);
    cell.extend_from_slice(&(key.len() as u16).to_le_bytes());
    cell.extend_from_slice(key);
    cell.extend_from_slice(&lsn.0.to_le_bytes());
    match value {
        LeafValue::Inline(v) => {
            cell.push(0);
            cell.extend_from_slice(&(v.len() as u16).to_le_bytes());
            cell.extend_from_slice(v);
        }
        LeafValue::Overflow { len, first } => {
            cell.push(1);
            cell.extend_from_slice(&len.to_le_bytes());
            cell.extend_from_slice(&first.0.to_le_bytes());
        }
        LeafValue::Tombstone => cell.push(2),
    }
    debug_assert_eq!(cell.len(), cell.capacity(), "a leaf cell is sized exactly");
    cell
}

/// Decode a leaf cell made by [`leaf_cell`] (its bounds were checked on read).
pub fn decode_leaf_cell(cell: &[u8]) -> (&[u8], (Lsn, LeafValue<'_>)) {
    let key_len = get_u16(cell, 0);
    let key = &cell[2..2 + key_len];
    let at = 2 + key_len;
    let lsn = Lsn(get_u64(cell, at));
    let value = match cell[at + 8] {
        0 => LeafValue::Inline(&cell[at + 11..]),
        1 => LeafValue::Overflow {
            len: u32::from_le_bytes([cell[at + 9], cell[at + 10], cell[at + 11], cell[at + 12]]),
            first: PageId(get_u64(cell, at + 13)),
        },
        _ => LeafValue::Tombstone,
    };
    (key, (lsn, value))
}

/// Encode an internal cell.
pub fn internal_cell(key: &[u8], child: PageId) -> Vec<u8> {
    let mut cell = Vec::with_capacity(key.len() + 10);
    cell.extend_from_slice(&(key.len() as u16).to_le_bytes());
    cell.extend_from_slice(key);
    cell.extend_from_slice(&child.0.to_le_bytes());
    cell
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cells_stay_sorted_and_survive_compaction() {
        let mut p = Page::new(PageKind::Leaf, PageId(7));
        for k in [5u8, 1, 9, 3] {
            let i = p.search(&[k]).unwrap_err();
            assert!(p.insert_cell(
                i,
                &leaf_cell(&[k], Lsn(k as u64), LeafValue::Inline(&[k; 10]))
            ));
        }
        let keys: Vec<u8> = (0..p.count()).map(|i| p.key(i)[0]).collect();
        assert_eq!(keys, vec![1, 3, 5, 9]);
        p.remove_cell(1);
        p.compact();
        assert_eq!(p.search(&[5]), Ok(1));
        assert_eq!(p.leaf_entry(1), (Lsn(5), LeafValue::Inline(&[5; 10])));
        assert!(p.replace_cell(1, &leaf_cell(&[5], Lsn(50), LeafValue::Tombstone)));
        assert_eq!(p.leaf_entry(1), (Lsn(50), LeafValue::Tombstone));
        p.seal(3);
        let again = Page::from_disk(Box::new(*p.bytes()), PageId(7)).expect("valid page");
        assert_eq!(again.epoch(), 3);
        assert_eq!(again.count(), 3);
    }

    #[test]
    fn a_full_page_refuses_then_accepts_after_removal() {
        let mut p = Page::new(PageKind::Leaf, PageId(1));
        let big = vec![7u8; 1000];
        let mut n = 0u32;
        while p.insert_cell(
            p.count(),
            &leaf_cell(&n.to_be_bytes(), Lsn(1), LeafValue::Inline(&big)),
        ) {
            n += 1;
        }
        assert_eq!(n, 8);
        p.remove_cell(0);
        assert!(p.insert_cell(
            p.count(),
            &leaf_cell(b"zz", Lsn(1), LeafValue::Inline(&big))
        ));
    }

    #[test]
    fn every_flipped_bit_and_a_wrong_page_are_rejected() {
        let mut p = Page::new(PageKind::Internal, PageId(9));
        p.set_link(PageId(2));
        assert!(p.insert_cell(0, &internal_cell(b"m", PageId(3))));
        p.seal(1);
        assert_eq!(p.child_for(b"a"), (0, PageId(2)));
        assert_eq!(p.child_for(b"m"), (1, PageId(3)));
        assert_eq!(p.child_for(b"z"), (1, PageId(3)));
        for bit in (0..PAGE_BYTES * 8).step_by(97) {
            let mut bytes = Box::new(*p.bytes());
            bytes[bit / 8] ^= 1 << (bit % 8);
            assert!(Page::from_disk(bytes, PageId(9)).is_err(), "bit {bit}");
        }
        assert_eq!(
            Page::from_disk(Box::new(*p.bytes()), PageId(8)).err(),
            Some(Corrupt::WrongPage { found: 9 })
        );
    }

    #[test]
    fn the_used_byte_count_follows_every_change_and_a_disk_round_trip() {
        use rand::{Rng, SeedableRng};
        let mut rng = rand::rngs::StdRng::seed_from_u64(11);
        let mut p = Page::new(PageKind::Leaf, PageId(4));
        for step in 0..20_000 {
            let key = rng.gen_range(0u16..400).to_be_bytes();
            let value = vec![1u8; rng.gen_range(0..60)];
            let cell = leaf_cell(&key, Lsn(step), LeafValue::Inline(&value));
            match p.search(&key) {
                Ok(i) if rng.gen_bool(0.3) => p.remove_cell(i),
                Ok(i) => {
                    p.replace_cell(i, &cell);
                }
                Err(i) => {
                    p.insert_cell(i, &cell);
                }
            }
            if step % 97 == 0 {
                p.compact();
            }
            let counted: usize = (0..p.count()).map(|i| p.cell(i).len() + 2).sum();
            assert_eq!(p.used_bytes(), counted, "step {step}");
        }
        assert!(p.count() > 50, "the page was exercised while well filled");
        p.seal(1);
        let read = Page::from_disk(Box::new(*p.bytes()), PageId(4)).expect("a sealed page reads");
        assert_eq!(read.used_bytes(), p.used_bytes());
    }
}
