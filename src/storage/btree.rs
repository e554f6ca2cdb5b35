//! One table's B+tree over buffer-pool pages: keys are memcomparable byte strings, each
//! with its newest committed version (an LSN and a row image, or a tombstone).
//!
//! Invariants (checked by [`BTree::check`]):
//! - The root's page id never changes: a root split moves the root's cells into two new
//!   children, and a root left with one child takes that child's cells.
//! - Every leaf is at the same depth. Keys in a page are strictly increasing, and every
//!   key under an internal cell's child is at or above that cell's key and below the next
//!   cell's key.
//! - A leaf cell longer than `MAX_INLINE_CELL_BYTES` keeps its value in a chain of overflow
//!   pages owned by that cell alone; replacing or removing the cell frees the chain.
//! - Structure changes (splits, merges, overflow chains) happen under the caller's
//!   exclusive tree lock. Readers hold it shared, and so may [`BTree::put_in_place`],
//!   which changes one leaf under its exclusive latch and nothing else: with the
//!   structure fixed, every descent still ends at the right leaf. Page latches also order
//!   each page's bytes against the checkpointer and the evictor, which do not take the
//!   tree lock.

use std::ops::Bound;

use super::page::{
    decode_leaf_cell, internal_cell, leaf_cell, stays_inline, LeafValue, Page, PageId, PageKind,
    HEADER_BYTES, MAX_KEY_BYTES, OVERFLOW_DATA_BYTES, PAGE_BYTES,
};
use super::pool::{BufferPool, Owner, PageRef};
use crate::error::{Error, Result, SqlState};
use crate::wal::Lsn;

/// A stored version: its commit LSN and row image (`None` for a tombstone).
pub type Entry = (Lsn, Option<Vec<u8>>);

/// What [`BTree::put_in_place`] did.
#[derive(Debug, PartialEq, Eq)]
pub enum InPlace {
    /// The version is stored.
    Done,
    /// Nothing was changed: storing it needs a split or overflow pages, which only
    /// [`BTree::put`] under the exclusive tree lock may do.
    NeedsExclusive,
}

// A cell of the longest key, with its slot, takes at most half a page: a leaf cell (its
// value on overflow pages) or an internal cell. So a page and one more cell always divide
// into two pages that fit (`split`), and a full internal page has at least two cells, so
// its split leaves one on each side of the cell that moves up.
const _: () = assert!(2 * (MAX_KEY_BYTES + 23 + 2) <= PAGE_BYTES - HEADER_BYTES);
const _: () = assert!(2 * (2 + MAX_KEY_BYTES + 8 + 2) <= PAGE_BYTES - HEADER_BYTES);

/// A page holding less than this many bytes of cells is merged with a sibling if they fit.
const MERGE_BELOW_BYTES: usize = (PAGE_BYTES - HEADER_BYTES) / 4;

/// A full leaf shares its cells with a sibling instead of splitting when the two pages
/// are then at most this full (percent of a page's cell space). The rest is kept free so
/// that rows growing by a few bytes still fit in place.
const SHARE_FILL_PERCENT: usize = 85;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BTree {
    pub root: PageId,
    /// Whose pages the tree allocates: shared, or a bulk load's private ones.
    pub owner: Owner,
}

/// Where [`BTree::put_ascending`] stored the largest key so far.
#[derive(Default)]
pub struct AppendCursor {
    /// The leaf that holds `last`, while that is known.
    leaf: Option<PageId>,
    /// The largest key stored through the cursor.
    last: Vec<u8>,
}

impl AppendCursor {
    /// The largest key stored through the cursor, if any.
    pub fn largest(&self) -> Option<&[u8]> {
        (!self.last.is_empty()).then_some(self.last.as_slice())
    }
}

/// A scan's visitor: key, version LSN, row image (`None` for a tombstone); false stops.
pub type Visit<'a> = dyn FnMut(&[u8], Lsn, Option<&[u8]>) -> Result<bool> + 'a;

/// A child with the key range it must hold: [low, high).
type ChildBounds = (PageId, Option<Vec<u8>>, Option<Vec<u8>>);

/// A step of a root-to-leaf path: an internal page and the child position taken.
type Path = Vec<(PageId, usize)>;

impl BTree {
    /// A new, empty tree.
    pub fn create(pool: &BufferPool) -> Result<BTree> {
        let root = pool.allocate(PageKind::Leaf)?;
        Ok(BTree::open(root.id()))
    }

    /// The shared tree whose root is `root`.
    pub fn open(root: PageId) -> BTree {
        BTree {
            root,
            owner: Owner::Shared,
        }
    }

    /// A new, empty tree of private pages for a bulk load.
    pub fn create_private(pool: &BufferPool) -> Result<BTree> {
        let owner = Owner::Bulk(pool.new_bulk_tag());
        let root = pool.allocate_for(owner, PageKind::Leaf)?;
        Ok(BTree {
            root: root.id(),
            owner,
        })
    }

    /// Give this tree (an empty root leaf, as [`BTree::clear`] leaves it) the contents of
    /// `other`, whose root page is freed. Page ids below the root are kept as they are.
    pub fn adopt(&self, pool: &BufferPool, other: BTree) -> Result<()> {
        let mut root = pool.write(self.root)?;
        if root.kind() != PageKind::Leaf || root.count() != 0 {
            return Err(Error::internal("a tree adopts another only when empty"));
        }
        let mut theirs = pool.write(other.root)?;
        move_all(&mut theirs, &mut root);
        pool.free(theirs);
        Ok(())
    }

    /// The leaf that holds `key`'s range, latched shared.
    fn read_leaf<'p>(&self, pool: &'p BufferPool, key: &[u8]) -> Result<PageRef<'p>> {
        let mut page = pool.read(self.root)?;
        while page.kind() != PageKind::Leaf {
            let (_, child) = page.child_for(key);
            page = pool.read(child)?;
        }
        Ok(page)
    }

    fn find_leaf(&self, pool: &BufferPool, key: &[u8]) -> Result<(PageId, Path)> {
        let mut path = Vec::new();
        let mut id = self.root;
        loop {
            let page = pool.read(id)?;
            if page.kind() == PageKind::Leaf {
                return Ok((id, path));
            }
            let (pos, child) = page.child_for(key);
            path.push((id, pos));
            id = child;
        }
    }

    /// The stored version of `key`, if any.
    pub fn get(&self, pool: &BufferPool, key: &[u8]) -> Result<Option<Entry>> {
        let page = self.read_leaf(pool, key)?;
        match page.search(key) {
            Ok(i) => {
                let (lsn, value) = page.leaf_entry(i);
                Ok(Some((lsn, read_value(pool, value)?)))
            }
            Err(_) => Ok(None),
        }
    }

    /// Store `value` (or a tombstone) at `lsn` under `key`; returns the previous version.
    pub fn put(
        &self,
        pool: &BufferPool,
        key: &[u8],
        lsn: Lsn,
        value: Option<&[u8]>,
    ) -> Result<Option<Entry>> {
        if key.len() > MAX_KEY_BYTES {
            return Err(Error::new(
                SqlState::PROGRAM_LIMIT_EXCEEDED,
                format!(
                    "index row size {} exceeds btree version 4 maximum {MAX_KEY_BYTES}",
                    key.len()
                ),
            ));
        }
        let cell = match value {
            None => leaf_cell(key, lsn, LeafValue::Tombstone),
            Some(v) if stays_inline(key, v) => leaf_cell(key, lsn, LeafValue::Inline(v)),
            Some(v) => {
                let first = write_overflow(pool, self.owner, v)?;
                let len = u32::try_from(v.len()).map_err(|_| {
                    Error::new(SqlState::PROGRAM_LIMIT_EXCEEDED, "row is too large")
                })?;
                leaf_cell(key, lsn, LeafValue::Overflow { len, first })
            }
        };
        let (leaf_id, path) = self.find_leaf(pool, key)?;
        let mut leaf = pool.write(leaf_id)?;
        let (previous, pos) = match leaf.search(key) {
            Ok(i) => {
                let (lsn, value) = leaf.leaf_entry(i);
                let old = read_value(pool, value)?;
                if let LeafValue::Overflow { first, .. } = value {
                    free_overflow(pool, first)?;
                }
                leaf.remove_cell(i);
                (Some((lsn, old)), i)
            }
            Err(i) => (None, i),
        };
        if !leaf.insert_cell(pos, &cell) {
            let appends = pos == leaf.count() && pos > 0;
            drop(leaf);
            let parent = path.last().copied();
            // Appended to the last leaf under its parent (or to a root leaf).
            let appends_last = match parent {
                Some((parent_id, child)) if appends => child == pool.read(parent_id)?.count(),
                _ => appends,
            };
            if appends_last {
                // An append past the tree's last key (a load in key order).
                let (sep, right) = split_append(pool, self.owner, &cell)?;
                self.insert_separator(pool, path, sep, right)?;
                return Ok(previous);
            }
            if let Some((parent_id, child)) = parent {
                if share_with_sibling(pool, parent_id, child, pos, &cell)? {
                    return Ok(previous);
                }
            }
            let mut leaf = pool.write(leaf_id)?;
            let (sep, right) = split(pool, self.owner, &mut leaf, pos, &cell)?;
            drop(leaf);
            self.insert_separator(pool, path, sep, right)?;
        }
        Ok(previous)
    }

    /// [`BTree::put`] of a row image, for a tree that was empty when `cursor` was made and
    /// that only this caller changes, through `cursor` (a bulk load's private tree, a
    /// re-key's new tree). Fast for keys in ascending order: a key above every key stored
    /// so far belongs in the rightmost leaf, the one holding the largest key, and goes
    /// straight to its end when it fits there, with no descent from the root. Anything
    /// else is an ordinary `put`. `pgbench -i` loads and re-keys its accounts in key order.
    pub fn put_ascending(
        &self,
        pool: &BufferPool,
        cursor: &mut AppendCursor,
        key: &[u8],
        lsn: Lsn,
        value: &[u8],
    ) -> Result<Option<Entry>> {
        let inline = key.len() <= MAX_KEY_BYTES && stays_inline(key, value);
        if let Some(leaf_id) = cursor
            .leaf
            .filter(|_| inline && key > cursor.last.as_slice())
        {
            let mut leaf = pool.write(leaf_id)?;
            let n = leaf.count();
            assert!(
                leaf.kind() == PageKind::Leaf && (n == 0 || leaf.key(n - 1) < key),
                "an appending cursor points at the leaf of the largest key"
            );
            if leaf.insert_cell(n, &leaf_cell(key, lsn, LeafValue::Inline(value))) {
                cursor.last.clear();
                cursor.last.extend_from_slice(key);
                return Ok(None);
            }
        }
        let previous = self.put(pool, key, lsn, Some(value))?;
        if cursor.last.is_empty() || key > cursor.last.as_slice() {
            cursor.leaf = Some(self.find_leaf(pool, key)?.0);
            cursor.last.clear();
            cursor.last.extend_from_slice(key);
        } else {
            // A split below the largest key may have moved it to another leaf.
            cursor.leaf = None;
        }
        Ok(previous)
    }

    /// [`BTree::put_ascending`] for `rows`, each key above every key stored so far and
    /// above the one before it: the rows that fit in the rightmost leaf go in under one
    /// latch of it, and only the row that fills it takes the ordinary path (which starts
    /// the next leaf).
    pub fn append_ascending(
        &self,
        pool: &BufferPool,
        cursor: &mut AppendCursor,
        lsn: Lsn,
        rows: &[(&[u8], &[u8])],
    ) -> Result<()> {
        let mut next = 0;
        while next < rows.len() {
            if let Some(leaf_id) = cursor.leaf {
                let mut leaf = pool.write(leaf_id)?;
                let mut n = leaf.count();
                assert!(
                    leaf.kind() == PageKind::Leaf && (n == 0 || leaf.key(n - 1) < rows[next].0),
                    "an appending cursor points at the leaf of the largest key"
                );
                let first = next;
                while let Some(&(key, value)) = rows.get(next) {
                    let inline = key.len() <= MAX_KEY_BYTES && stays_inline(key, value);
                    if !inline
                        || !leaf.insert_cell(n, &leaf_cell(key, lsn, LeafValue::Inline(value)))
                    {
                        break;
                    }
                    n += 1;
                    next += 1;
                }
                if next > first {
                    cursor.last.clear();
                    cursor.last.extend_from_slice(rows[next - 1].0);
                }
                if next == rows.len() {
                    break;
                }
            }
            let (key, value) = rows[next];
            let previous = self.put_ascending(pool, cursor, key, lsn, value)?;
            assert!(previous.is_none(), "a key above every stored key is new");
            next += 1;
        }
        Ok(())
    }

    /// Store inline `value` at `lsn` under `key` if that changes the key's leaf alone: the
    /// new cell is inline and fits in the leaf, and the version it replaces (if any) is
    /// inline too. Needs only the shared tree lock. `before` gets the previous version
    /// while the leaf is latched exclusively, before the new one replaces it: whatever it
    /// records is in place before any reader can find the new version.
    pub fn put_in_place(
        &self,
        pool: &BufferPool,
        key: &[u8],
        lsn: Lsn,
        value: &[u8],
        before: impl FnOnce(Option<Entry>),
    ) -> Result<InPlace> {
        if key.len() > MAX_KEY_BYTES || !stays_inline(key, value) {
            return Ok(InPlace::NeedsExclusive);
        }
        let cell = leaf_cell(key, lsn, LeafValue::Inline(value));
        let (leaf_id, _) = self.find_leaf(pool, key)?;
        let mut leaf = pool.write(leaf_id)?;
        debug_assert_eq!(leaf.kind(), PageKind::Leaf);
        match leaf.search(key) {
            Ok(i) => {
                let (old_lsn, old) = leaf.leaf_entry(i);
                let old = match old {
                    LeafValue::Overflow { .. } => return Ok(InPlace::NeedsExclusive),
                    LeafValue::Inline(v) => Some(v.to_vec()),
                    LeafValue::Tombstone => None,
                };
                if !leaf.fits_replacing(i, cell.len()) {
                    return Ok(InPlace::NeedsExclusive);
                }
                before(Some((old_lsn, old)));
                leaf.replace_fitting(i, &cell);
            }
            Err(i) => {
                if !leaf.fits(cell.len()) {
                    return Ok(InPlace::NeedsExclusive);
                }
                before(None);
                let inserted = leaf.insert_cell(i, &cell);
                assert!(inserted, "space was checked");
            }
        }
        Ok(InPlace::Done)
    }

    /// Remove `key`'s cell altogether (and its overflow chain); merges underfull pages.
    pub fn remove(&self, pool: &BufferPool, key: &[u8]) -> Result<Option<Entry>> {
        let (leaf_id, path) = self.find_leaf(pool, key)?;
        let mut leaf = pool.write(leaf_id)?;
        let i = match leaf.search(key) {
            Ok(i) => i,
            Err(_) => return Ok(None),
        };
        let (lsn, value) = leaf.leaf_entry(i);
        let old = read_value(pool, value)?;
        if let LeafValue::Overflow { first, .. } = value {
            free_overflow(pool, first)?;
        }
        leaf.remove_cell(i);
        let underfull = leaf.used_bytes() < MERGE_BELOW_BYTES;
        drop(leaf);
        if underfull {
            self.rebalance(pool, leaf_id, path)?;
        }
        Ok(Some((lsn, old)))
    }

    /// After a split of the page at the end of `path`: add (`sep`, `right`) to its parent,
    /// splitting upwards as needed.
    fn insert_separator(
        &self,
        pool: &BufferPool,
        mut path: Path,
        mut sep: Vec<u8>,
        mut right: PageId,
    ) -> Result<()> {
        loop {
            let Some((parent_id, pos)) = path.pop() else {
                return self.grow_root(pool, sep, right);
            };
            let mut parent = pool.write(parent_id)?;
            let cell = internal_cell(&sep, right);
            // Child position `pos` is cell `pos - 1`; the new right sibling follows it.
            if parent.insert_cell(pos, &cell) {
                return Ok(());
            }
            let (up, new_right) = split(pool, self.owner, &mut parent, pos, &cell)?;
            sep = up;
            right = new_right;
        }
    }

    /// The root split: its cells (now the left half) move to a new page, and the root
    /// becomes an internal page over that page and `right`.
    fn grow_root(&self, pool: &BufferPool, sep: Vec<u8>, right: PageId) -> Result<()> {
        let mut root = pool.write(self.root)?;
        let mut left = pool.allocate_for(self.owner, root.kind())?;
        let left_id = left.id();
        move_all(&mut root, &mut left);
        root.reset(PageKind::Internal);
        root.set_link(left_id);
        let fitted = root.insert_cell(0, &internal_cell(&sep, right));
        assert!(fitted, "an empty root takes one separator");
        Ok(())
    }

    /// Merge the underfull page at the end of `path` into a sibling when both fit in one
    /// page, then the parent in turn; a root left with one child absorbs it.
    fn rebalance(&self, pool: &BufferPool, mut id: PageId, mut path: Path) -> Result<()> {
        while let Some((parent_id, pos)) = path.pop() {
            let mut parent = pool.write(parent_id)?;
            let children = parent.count() + 1;
            if children < 2 {
                break;
            }
            // Merge child `l` and child `l + 1`, with the underfull one among them.
            let l = if pos + 1 < children { pos } else { pos - 1 };
            let (left_id, right_id) = (parent.child_at(l), parent.child_at(l + 1));
            debug_assert!(left_id == id || right_id == id);
            let sep = parent.key(l).to_vec();
            let mut left = pool.write(left_id)?;
            let right = pool.write(right_id)?;
            let extra = if left.kind() == PageKind::Internal {
                internal_cell(&sep, right.link()).len() + 2
            } else {
                0
            };
            if left.used_bytes() + right.used_bytes() + extra > PAGE_BYTES - HEADER_BYTES {
                break;
            }
            if left.kind() == PageKind::Internal {
                let n = left.count();
                let fitted = left.insert_cell(n, &internal_cell(&sep, right.link()));
                assert!(fitted, "space was checked");
            }
            for i in 0..right.count() {
                let n = left.count();
                let fitted = left.insert_cell(n, right.cell(i));
                assert!(fitted, "space was checked");
            }
            parent.remove_cell(l);
            pool.free(right);
            drop(left);
            if parent_id == self.root && parent.count() == 0 {
                // The root has a single child left: take its cells.
                let mut only = pool.write(parent.link())?;
                move_all(&mut only, &mut parent);
                pool.free(only);
                break;
            }
            if parent.used_bytes() >= MERGE_BELOW_BYTES || parent_id == self.root {
                break;
            }
            drop(parent);
            id = parent_id;
        }
        Ok(())
    }

    /// Visit versions with keys in `range`, in key order (reversed when `reverse`), until
    /// `visit` returns false.
    pub fn scan(
        &self,
        pool: &BufferPool,
        range: (Bound<&[u8]>, Bound<&[u8]>),
        reverse: bool,
        visit: &mut Visit<'_>,
    ) -> Result<bool> {
        self.scan_page(pool, self.root, range, reverse, visit)
    }

    fn scan_page(
        &self,
        pool: &BufferPool,
        id: PageId,
        range: (Bound<&[u8]>, Bound<&[u8]>),
        reverse: bool,
        visit: &mut Visit<'_>,
    ) -> Result<bool> {
        let page = pool.read(id)?;
        if page.kind() == PageKind::Internal {
            let first = match range.0 {
                Bound::Included(k) | Bound::Excluded(k) => page.child_for(k).0,
                Bound::Unbounded => 0,
            };
            let last = match range.1 {
                Bound::Included(k) | Bound::Excluded(k) => page.child_for(k).0,
                Bound::Unbounded => page.count(),
            };
            let mut children: Vec<PageId> = (first..=last).map(|p| page.child_at(p)).collect();
            drop(page);
            if reverse {
                children.reverse();
            }
            for child in children {
                if !self.scan_page(pool, child, range, reverse, visit)? {
                    return Ok(false);
                }
            }
            return Ok(true);
        }
        let start = match range.0 {
            Bound::Included(k) => page.search(k).unwrap_or_else(|i| i),
            Bound::Excluded(k) => page.search(k).map_or_else(|i| i, |i| i + 1),
            Bound::Unbounded => 0,
        };
        let end = match range.1 {
            Bound::Included(k) => page.search(k).map_or_else(|i| i, |i| i + 1),
            Bound::Excluded(k) => page.search(k).unwrap_or_else(|i| i),
            Bound::Unbounded => page.count(),
        };
        let positions: Box<dyn Iterator<Item = usize>> = if reverse {
            Box::new((start..end.max(start)).rev())
        } else {
            Box::new(start..end.max(start))
        };
        for i in positions {
            let (key, (lsn, value)) = decode_leaf_cell(page.cell(i));
            let keep_going = match value {
                LeafValue::Inline(v) => visit(key, lsn, Some(v))?,
                LeafValue::Tombstone => visit(key, lsn, None)?,
                LeafValue::Overflow { .. } => {
                    let v = read_value(pool, value)?;
                    visit(key, lsn, v.as_deref())?
                }
            };
            if !keep_going {
                return Ok(false);
            }
        }
        Ok(true)
    }

    /// Free every page of the tree but the root, which becomes an empty leaf (TRUNCATE).
    pub fn clear(&self, pool: &BufferPool) -> Result<()> {
        free_subtree(pool, self.root, true)
    }

    /// Free every page of the tree, the root too (DROP TABLE). The tree is gone after.
    pub fn destroy(self, pool: &BufferPool) -> Result<()> {
        free_subtree(pool, self.root, false)
    }

    /// The pages of the tree, internal and leaf (not the overflow pages of long
    /// values). Reads its internal pages only: leaves are all at one depth.
    pub fn page_count(&self, pool: &BufferPool) -> Result<u64> {
        count_pages(pool, self.root, 0)
    }

    /// Verify the whole tree: key order, separator bounds, equal leaf depth and overflow
    /// chains. Returns the number of stored versions.
    pub fn check(&self, pool: &BufferPool) -> Result<usize> {
        let mut leaf_depth = None;
        check_page(pool, self.root, None, None, 0, &mut leaf_depth)
    }
}

fn corrupt(message: String) -> Error {
    Error::new(SqlState::DATA_CORRUPTED, message)
}

fn count_pages(pool: &BufferPool, id: PageId, depth: usize) -> Result<u64> {
    if depth > MAX_TREE_DEPTH {
        return Err(corrupt(format!("page {} is deeper than any tree", id.0)));
    }
    let page = pool.read(id)?;
    match page.kind() {
        PageKind::Leaf => Ok(1),
        PageKind::Internal => {
            let children: Vec<PageId> = (0..=page.count()).map(|pos| page.child_at(pos)).collect();
            drop(page);
            let Some(&first) = children.first() else {
                return Ok(1);
            };
            let first_is_leaf = matches!(pool.read(first)?.kind(), PageKind::Leaf);
            if first_is_leaf {
                return Ok(1 + children.len() as u64);
            }
            let mut total = 1;
            for child in children {
                total += count_pages(pool, child, depth + 1)?;
            }
            Ok(total)
        }
        PageKind::Overflow => Err(corrupt(format!(
            "page {} is an overflow page in a tree",
            id.0
        ))),
    }
}

/// Deeper than any tree of 8 KiB pages can be.
const MAX_TREE_DEPTH: usize = 64;

fn check_page(
    pool: &BufferPool,
    id: PageId,
    low: Option<&[u8]>,
    high: Option<&[u8]>,
    depth: usize,
    leaf_depth: &mut Option<usize>,
) -> Result<usize> {
    let page = pool.read(id)?;
    for i in 0..page.count() {
        let key = page.key(i);
        if i > 0 && page.key(i - 1) >= key {
            return Err(corrupt(format!("page {}: keys out of order at {i}", id.0)));
        }
        if low.is_some_and(|l| key < l) || high.is_some_and(|h| key >= h) {
            return Err(corrupt(format!(
                "page {}: key {i} outside its parent's range",
                id.0
            )));
        }
    }
    match page.kind() {
        PageKind::Leaf => {
            if *leaf_depth.get_or_insert(depth) != depth {
                return Err(corrupt(format!("leaf {} at depth {depth}", id.0)));
            }
            for i in 0..page.count() {
                read_value(pool, page.leaf_entry(i).1)?;
            }
            Ok(page.count())
        }
        PageKind::Internal => {
            let mut total = 0;
            let bounds: Vec<ChildBounds> = (0..=page.count())
                .map(|pos| {
                    let lo = if pos == 0 {
                        low.map(<[u8]>::to_vec)
                    } else {
                        Some(page.key(pos - 1).to_vec())
                    };
                    let hi = if pos == page.count() {
                        high.map(<[u8]>::to_vec)
                    } else {
                        Some(page.key(pos).to_vec())
                    };
                    (page.child_at(pos), lo, hi)
                })
                .collect();
            drop(page);
            for (child, lo, hi) in bounds {
                total += check_page(
                    pool,
                    child,
                    lo.as_deref(),
                    hi.as_deref(),
                    depth + 1,
                    leaf_depth,
                )?;
            }
            Ok(total)
        }
        PageKind::Overflow => Err(corrupt(format!(
            "overflow page {} linked as a tree page",
            id.0
        ))),
    }
}

/// Move every cell of `from` into the empty `to`, and make `to` the same kind.
fn move_all(from: &mut Page, to: &mut Page) {
    to.reset(from.kind());
    to.set_link(from.link());
    for i in 0..from.count() {
        let fitted = to.insert_cell(i, from.cell(i));
        assert!(fitted, "a page's cells fit in an empty page");
    }
    from.reset(from.kind());
}

/// The new right sibling of a full leaf whose tree's largest key `cell` comes after all
/// of its keys (ascending keys: row ids, serials, a load in key order): the leaf stays
/// full and the new page starts with `cell` alone, so such a load fills its pages.
/// Returns the separator for the parent and the new page's id.
fn split_append(pool: &BufferPool, owner: Owner, cell: &[u8]) -> Result<(Vec<u8>, PageId)> {
    let mut right = pool.allocate_for(owner, PageKind::Leaf)?;
    assert!(right.insert_cell(0, cell), "one cell fits in an empty page");
    let (key, _) = decode_leaf_cell(cell);
    Ok((key.to_vec(), right.id()))
}

/// Where `cells` divide into two pages of about equal bytes: the index of the first
/// cell of the right page, chosen so that the fuller of the two pages holds as few bytes
/// as possible. At least one cell stays on each side (for an internal page the middle
/// cell moves up, so at least one on each side of it). Cells differ in size (a cell of
/// the longest key takes a third of a page), so halving the byte count is not enough: the
/// cell that straddles the middle must go to the side it overfills least.
fn balance_point(cells: &[&[u8]], internal: bool) -> usize {
    let (left, right) = side_bytes(cells, internal);
    let (first, last) = if internal {
        (1, cells.len() - 2)
    } else {
        (1, cells.len() - 1)
    };
    (first..=last)
        .min_by_key(|&at| left[at].max(right[at]))
        .unwrap_or(first)
}

/// For each possible balance point `at`: the bytes (cells and slots) of the left page,
/// `cells[..at]`, and of the right page, `cells[at..]` (for an internal page
/// `cells[at + 1..]`, as `cells[at]` moves up).
fn side_bytes(cells: &[&[u8]], internal: bool) -> (Vec<usize>, Vec<usize>) {
    let mut left = Vec::with_capacity(cells.len() + 1);
    let mut sum = 0;
    left.push(0);
    for c in cells {
        sum += c.len() + 2;
        left.push(sum);
    }
    let right = (0..=cells.len())
        .map(|at| {
            let from = if internal {
                (at + 1).min(cells.len())
            } else {
                at
            };
            sum - left[from]
        })
        .collect();
    (left, right)
}

/// Whether `cells[..at]` and the right part (see [`side_bytes`]) each fit in one page.
fn both_fit(cells: &[&[u8]], at: usize, internal: bool) -> bool {
    let (left, right) = side_bytes(cells, internal);
    let capacity = PAGE_BYTES - HEADER_BYTES;
    left[at] <= capacity && right[at] <= capacity
}

/// Refill `page` (keeping its kind and link) with `cells`, which fit.
fn refill(page: &mut Page, cells: &[&[u8]]) {
    let link = page.link();
    page.reset(page.kind());
    page.set_link(link);
    for c in cells {
        let n = page.count();
        assert!(page.insert_cell(n, c), "the cells were measured to fit");
    }
}

/// A full leaf, child `child` of `parent_id`, cannot take `cell` at `pos`: instead of a
/// split, share the cells evenly with an adjacent sibling (the right one first) when
/// the two pages then stay at most `SHARE_FILL_PERCENT` full, and move the separator
/// between them. False, and nothing changed, when neither sibling has that room.
///
/// Rows that grow in place (a column filled in by a later update) would otherwise split
/// full leaves into halves that stay half empty, and every half-empty page is a page
/// more for each checkpoint to write and for the pool to hold.
fn share_with_sibling(
    pool: &BufferPool,
    parent_id: PageId,
    child: usize,
    pos: usize,
    cell: &[u8],
) -> Result<bool> {
    let room = (PAGE_BYTES - HEADER_BYTES) * SHARE_FILL_PERCENT / 100;
    let mut parent = pool.write(parent_id)?;
    let children = parent.count() + 1;
    let leaf_bytes = pool.read(parent.child_at(child))?.used_bytes();
    let pairs = [
        (child + 1 < children).then_some(child),
        (child > 0).then(|| child - 1),
    ];
    for left_child in pairs.into_iter().flatten() {
        let (left_id, right_id) = (parent.child_at(left_child), parent.child_at(left_child + 1));
        let sibling = if left_child == child {
            right_id
        } else {
            left_id
        };
        let sibling_bytes = {
            let page = pool.read(sibling)?;
            if page.kind() != PageKind::Leaf {
                return Err(corrupt(format!("leaf sibling {sibling:?} is not a leaf")));
            }
            page.used_bytes()
        };
        if leaf_bytes + sibling_bytes + cell.len() + 2 > 2 * room {
            continue;
        }
        let mut left = pool.write(left_id)?;
        let mut right = pool.write(right_id)?;
        // The cells are read from copies of the two pages while the pages are refilled.
        let (left_was, right_was) = (left.clone_page(), right.clone_page());
        let mut cells: Vec<&[u8]> = Vec::with_capacity(left_was.count() + right_was.count() + 1);
        cells.extend((0..left_was.count()).map(|i| left_was.cell(i)));
        let at_in_all = if left_child == child {
            pos
        } else {
            cells.len() + pos
        };
        cells.extend((0..right_was.count()).map(|i| right_was.cell(i)));
        cells.insert(at_in_all, cell);
        let at = balance_point(&cells, false);
        if !both_fit(&cells, at, false) {
            continue;
        }
        let (sep, _) = decode_leaf_cell(cells[at]);
        let sep_cell = internal_cell(sep, right_id);
        if !parent.fits_replacing(left_child, sep_cell.len()) {
            continue;
        }
        refill(&mut left, &cells[..at]);
        refill(&mut right, &cells[at..]);
        parent.replace_fitting(left_child, &sep_cell);
        return Ok(true);
    }
    Ok(false)
}

/// Insert `cell` at `pos` into the full `page` by splitting it: the upper part moves to a
/// new right sibling. Returns the separator for the parent and the sibling's id.
fn split(
    pool: &BufferPool,
    owner: Owner,
    page: &mut Page,
    pos: usize,
    cell: &[u8],
) -> Result<(Vec<u8>, PageId)> {
    // The cells are read from a copy of the page while the page is refilled.
    let was = page.clone_page();
    let mut cells: Vec<&[u8]> = Vec::with_capacity(was.count() + 1);
    cells.extend((0..was.count()).map(|i| was.cell(i)));
    cells.insert(pos, cell);
    let internal = page.kind() == PageKind::Internal;
    let at = balance_point(&cells, internal);
    // A full page and one more cell always divide into two pages that fit: the cell is at
    // most half a page, and the balance point leaves the fuller side at most half
    // of the total plus half of one cell.
    assert!(
        both_fit(&cells, at, internal),
        "a page and one cell divide into two pages"
    );
    let mut right = pool.allocate_for(owner, page.kind())?;
    let sep;
    let right_cells = if internal {
        let middle = cells[at];
        let key_len = u16::from_le_bytes([middle[0], middle[1]]) as usize;
        sep = middle[2..2 + key_len].to_vec();
        let mut child = [0u8; 8];
        child.copy_from_slice(&middle[middle.len() - 8..]);
        right.set_link(PageId(u64::from_le_bytes(child)));
        &cells[at + 1..]
    } else {
        let (key, _) = decode_leaf_cell(cells[at]);
        sep = key.to_vec();
        &cells[at..]
    };
    for c in right_cells {
        let n = right.count();
        assert!(right.insert_cell(n, c), "half of two pages fits in one");
    }
    refill(page, &cells[..at]);
    Ok((sep, right.id()))
}

/// Write `value` to a new chain of overflow pages; returns the first page.
fn write_overflow(pool: &BufferPool, owner: Owner, value: &[u8]) -> Result<PageId> {
    let mut next = PageId::NONE;
    for chunk in value.chunks(OVERFLOW_DATA_BYTES).rev() {
        let mut page = pool.allocate_for(owner, PageKind::Overflow)?;
        page.set_overflow_data(chunk);
        page.set_link(next);
        next = page.id();
    }
    Ok(next)
}

fn read_value(pool: &BufferPool, value: LeafValue<'_>) -> Result<Option<Vec<u8>>> {
    match value {
        LeafValue::Inline(v) => Ok(Some(v.to_vec())),
        LeafValue::Tombstone => Ok(None),
        LeafValue::Overflow { len, first } => {
            let mut out = Vec::with_capacity(len as usize);
            let mut next = first;
            while next != PageId::NONE && out.len() < len as usize {
                let page = pool.read(next)?;
                if page.kind() != PageKind::Overflow {
                    return Err(corrupt(format!("page {} is not an overflow page", next.0)));
                }
                out.extend_from_slice(page.overflow_data());
                next = page.link();
            }
            if out.len() != len as usize || next != PageId::NONE {
                return Err(corrupt(format!(
                    "overflow chain from page {} holds {} bytes, expected {len}",
                    first.0,
                    out.len()
                )));
            }
            Ok(Some(out))
        }
    }
}

/// Free the pages below `id` and their overflow chains; then free `id` itself, or, for
/// `keep`, reset it to an empty leaf. Holds the latches of one root-to-leaf path at a time.
fn free_subtree(pool: &BufferPool, id: PageId, keep: bool) -> Result<()> {
    let mut page = pool.write(id)?;
    match page.kind() {
        PageKind::Internal => {
            for pos in 0..=page.count() {
                free_subtree(pool, page.child_at(pos), false)?;
            }
        }
        PageKind::Leaf => {
            for i in 0..page.count() {
                if let (_, LeafValue::Overflow { first, .. }) = page.leaf_entry(i) {
                    free_overflow(pool, first)?;
                }
            }
        }
        PageKind::Overflow => {
            return Err(corrupt(format!(
                "overflow page {} linked as a tree page",
                id.0
            )))
        }
    }
    if keep {
        page.reset(PageKind::Leaf);
    } else {
        pool.free(page);
    }
    Ok(())
}

fn free_overflow(pool: &BufferPool, first: PageId) -> Result<()> {
    let mut next = first;
    while next != PageId::NONE {
        let page = pool.write(next)?;
        next = page.link();
        pool.free(page);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;
    use crate::disk::sim::Prng;
    use crate::storage::page::MAX_INLINE_CELL_BYTES;

    fn pool(frames: usize) -> BufferPool {
        BufferPool::on_sim_disk(frames)
    }

    fn collect(
        tree: &BTree,
        pool: &BufferPool,
        range: (Bound<&[u8]>, Bound<&[u8]>),
        reverse: bool,
    ) -> Vec<(Vec<u8>, Entry)> {
        let mut out = Vec::new();
        tree.scan(pool, range, reverse, &mut |k, lsn, v| {
            out.push((k.to_vec(), (lsn, v.map(<[u8]>::to_vec))));
            Ok(true)
        })
        .expect("scan");
        out
    }

    #[test]
    fn ascending_puts_append_and_anything_else_falls_back() {
        for seed in 0..4u64 {
            let pool = pool(32);
            let tree = BTree::create(&pool).expect("create");
            let mut cursor = AppendCursor::default();
            let mut model: BTreeMap<Vec<u8>, Entry> = BTreeMap::new();
            let mut rng = Prng::new(seed);
            let mut next = 0u64;
            for step in 0..5000u64 {
                // Mostly the next key up; now and then one already stored or one below.
                let n = match rng.next_u64() % 20 {
                    0 if next > 0 => rng.next_u64() % next,
                    1 => next + 1000 + rng.next_u64() % 100,
                    _ => {
                        next += 1 + rng.next_u64() % 3;
                        next
                    }
                };
                let key = format!("k{n:08}").into_bytes();
                let len = match rng.next_u64() % 50 {
                    0 => 3000 + (rng.next_u64() % 20000) as usize,
                    _ => (rng.next_u64() % 200) as usize,
                };
                let value = vec![(step % 251) as u8; len];
                let lsn = Lsn(step + 1);
                let prev = tree
                    .put_ascending(&pool, &mut cursor, &key, lsn, &value)
                    .expect("put");
                assert_eq!(
                    prev,
                    model.insert(key, (lsn, Some(value))),
                    "seed {seed} step {step}"
                );
            }
            assert_eq!(tree.check(&pool).expect("valid tree"), model.len());
            let stored = collect(&tree, &pool, (Bound::Unbounded, Bound::Unbounded), false);
            let expected: Vec<_> = model.into_iter().collect();
            assert_eq!(stored, expected, "seed {seed}");
        }
    }

    /// The leaves' cell bytes over their capacity, and the number of leaves.
    fn leaf_fill(tree: &BTree, pool: &BufferPool) -> (f64, usize) {
        let (mut used, mut leaves) = (0usize, 0usize);
        let mut stack = vec![tree.root];
        while let Some(id) = stack.pop() {
            let page = pool.read(id).expect("read");
            if page.kind() == PageKind::Leaf {
                used += page.used_bytes();
                leaves += 1;
            } else {
                stack.extend((0..=page.count()).map(|i| page.child_at(i)));
            }
        }
        let capacity = leaves * (PAGE_BYTES - HEADER_BYTES);
        (used as f64 / capacity as f64, leaves)
    }

    #[test]
    fn rows_growing_in_random_order_share_leaves_instead_of_halving_them() {
        for seed in 0..3u64 {
            let pool = pool(64);
            let tree = BTree::create(&pool).expect("create");
            let mut cursor = AppendCursor::default();
            let mut model: BTreeMap<Vec<u8>, Entry> = BTreeMap::new();
            let keys: Vec<Vec<u8>> = (0..20_000u32).map(|n| n.to_be_bytes().to_vec()).collect();
            for (i, key) in keys.iter().enumerate() {
                let (lsn, value) = (Lsn(i as u64 + 1), vec![1u8; 8]);
                tree.put_ascending(&pool, &mut cursor, key, lsn, &value)
                    .expect("load");
                model.insert(key.clone(), (lsn, Some(value)));
            }
            let (loaded, _) = leaf_fill(&tree, &pool);
            assert!(
                loaded > 0.95,
                "a load in key order fills its leaves: {loaded}"
            );
            // Every row grows once (a column filled in), in random order, as installs do.
            let mut order: Vec<usize> = (0..keys.len()).collect();
            let mut rng = Prng::new(seed);
            for i in (1..order.len()).rev() {
                order.swap(i, (rng.next_u64() % (i as u64 + 1)) as usize);
            }
            for (step, &k) in order.iter().enumerate() {
                let key = &keys[k];
                let lsn = Lsn(100_000 + step as u64);
                let value = vec![(step % 251) as u8; 40 + (rng.next_u64() % 9) as usize];
                let expected = model.insert(key.clone(), (lsn, Some(value.clone())));
                let mut seen = None;
                let prev = match tree
                    .put_in_place(&pool, key, lsn, &value, |p| seen = Some(p))
                    .expect("put in place")
                {
                    InPlace::Done => seen.expect("told the previous version"),
                    InPlace::NeedsExclusive => {
                        tree.put(&pool, key, lsn, Some(&value)).expect("put")
                    }
                };
                assert_eq!(prev, expected, "seed {seed} step {step}");
            }
            assert_eq!(tree.check(&pool).expect("valid tree"), model.len());
            let all: Vec<_> = model.into_iter().collect();
            assert_eq!(
                collect(&tree, &pool, (Bound::Unbounded, Bound::Unbounded), false),
                all
            );
            // Halving full leaves leaves them about 60% full; sharing with a sibling
            // before splitting keeps them fuller.
            let (grown, leaves) = leaf_fill(&tree, &pool);
            assert!(grown > 0.72, "seed {seed}: {leaves} leaves {grown:.3} full");
        }
    }

    /// Values of every size up to the inline limit, growing and shrinking in random order
    /// over few keys (a list that is appended to, then cut short): sharing cells with a
    /// sibling must never fill one side past a page, whatever the sizes of the cells
    /// around the balance point.
    #[test]
    fn large_cells_growing_in_place_share_and_split_without_overfilling() {
        for seed in 0..8u64 {
            let pool = pool(64);
            let tree = BTree::create(&pool).expect("create");
            let mut model: BTreeMap<Vec<u8>, Entry> = BTreeMap::new();
            let mut rng = Prng::new(seed);
            let keys = 24 + (seed as usize) * 8;
            for step in 0..6000u64 {
                let key = format!("k{:04}", rng.next_u64() % keys as u64).into_bytes();
                let old_len = model
                    .get(&key)
                    .and_then(|(_, v)| v.as_ref())
                    .map_or(0, Vec::len);
                let len = match rng.next_u64() % 10 {
                    0 => (rng.next_u64() % 100) as usize,
                    1 => MAX_INLINE_CELL_BYTES - 13 - key.len() - (rng.next_u64() % 4) as usize,
                    _ => (old_len + 1 + (rng.next_u64() % 300) as usize)
                        .min(MAX_INLINE_CELL_BYTES - 13 - key.len()),
                };
                let value = vec![(step % 251) as u8; len];
                let lsn = Lsn(step + 1);
                let prev = tree.put(&pool, &key, lsn, Some(&value)).expect("put");
                assert_eq!(
                    prev,
                    model.insert(key, (lsn, Some(value))),
                    "seed {seed} step {step}"
                );
            }
            assert_eq!(tree.check(&pool).expect("valid tree"), model.len());
            let stored = collect(&tree, &pool, (Bound::Unbounded, Bound::Unbounded), false);
            assert_eq!(stored, model.into_iter().collect::<Vec<_>>(), "seed {seed}");
        }
    }

    #[test]
    fn matches_a_reference_model_through_splits_merges_and_eviction() {
        for seed in 0..4u64 {
            let pool = pool(32);
            let tree = BTree::create(&pool).expect("create");
            let mut model: BTreeMap<Vec<u8>, Entry> = BTreeMap::new();
            let mut rng = Prng::new(seed);
            for step in 0..6000u64 {
                let key = format!("k{:05}", rng.next_u64() % 1500).into_bytes();
                let lsn = Lsn(step + 1);
                match rng.next_u64() % 10 {
                    0..=5 => {
                        let len = match rng.next_u64() % 20 {
                            0 => 3000 + (rng.next_u64() % 30000) as usize,
                            _ => (rng.next_u64() % 300) as usize,
                        };
                        let value = vec![(step % 251) as u8; len];
                        let expected = model.get(&key).cloned();
                        // Half the time in place when it can be, as installs do.
                        let mut seen = None;
                        let in_place = step % 2 == 0
                            && tree
                                .put_in_place(&pool, &key, lsn, &value, |p| seen = Some(p))
                                .expect("put in place")
                                == InPlace::Done;
                        let prev = if in_place {
                            seen.expect("told the previous version")
                        } else {
                            assert!(seen.is_none(), "told of a change it did not make");
                            tree.put(&pool, &key, lsn, Some(&value)).expect("put")
                        };
                        assert_eq!(prev, expected);
                        model.insert(key, (lsn, Some(value)));
                    }
                    6 => {
                        let prev = tree.put(&pool, &key, lsn, None).expect("tombstone");
                        assert_eq!(prev, model.insert(key, (lsn, None)));
                    }
                    _ => {
                        let prev = tree.remove(&pool, &key).expect("remove");
                        assert_eq!(prev, model.remove(&key));
                    }
                }
                if step % 1000 == 999 {
                    assert_eq!(tree.check(&pool).expect("valid tree"), model.len());
                }
            }
            for (k, v) in model.iter().step_by(7) {
                assert_eq!(tree.get(&pool, k).expect("get").as_ref(), Some(v));
            }
            let all: Vec<_> = model.iter().map(|(k, v)| (k.clone(), v.clone())).collect();
            assert_eq!(
                collect(&tree, &pool, (Bound::Unbounded, Bound::Unbounded), false),
                all
            );
            let mut rev = all.clone();
            rev.reverse();
            assert_eq!(
                collect(&tree, &pool, (Bound::Unbounded, Bound::Unbounded), true),
                rev
            );
            let (lo, hi) = (b"k00300".as_slice(), b"k00900".as_slice());
            let expect: Vec<_> = model
                .range::<[u8], _>((Bound::Excluded(lo), Bound::Included(hi)))
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect();
            assert_eq!(
                collect(
                    &tree,
                    &pool,
                    (Bound::Excluded(lo), Bound::Included(hi)),
                    false
                ),
                expect
            );
            assert_eq!(
                pool.read(tree.root).expect("root").kind(),
                PageKind::Internal
            );
            assert!(pool.stats().evictions_written > 0 && pool.stats().reads > 0);
            // Removing everything merges the tree back into a single root leaf.
            let keys: Vec<_> = model.keys().cloned().collect();
            for k in keys {
                tree.remove(&pool, &k).expect("remove");
            }
            assert_eq!(tree.check(&pool).expect("valid empty tree"), 0);
            let root = pool.read(tree.root).expect("root");
            assert_eq!(root.kind(), PageKind::Leaf);
        }
    }

    #[test]
    fn an_oversized_key_is_refused_with_54000() {
        let pool = pool(16);
        let tree = BTree::create(&pool).expect("create");
        let err = tree
            .put(&pool, &[1; MAX_KEY_BYTES + 1], Lsn(1), Some(b"x"))
            .expect_err("refused");
        assert_eq!(err.code, SqlState::PROGRAM_LIMIT_EXCEEDED);
        assert_eq!(tree.check(&pool).expect("still valid"), 0);
    }

    #[test]
    fn large_keys_split_internal_pages() {
        let pool = pool(64);
        let tree = BTree::create(&pool).expect("create");
        for i in 0..2000u32 {
            let mut key = vec![b'x'; MAX_KEY_BYTES - 4];
            key.extend_from_slice(&i.to_be_bytes());
            tree.put(&pool, &key, Lsn(i as u64 + 1), Some(&[1; 10]))
                .expect("put");
        }
        assert_eq!(tree.check(&pool).expect("valid"), 2000);
    }

    /// Keys of every length up to the limit, mixed with short ones, loaded in key order,
    /// then stored, replaced, deleted and removed in random order: every split, share and
    /// merge keeps the tree valid and equal to a model, with pages of two or three cells.
    #[test]
    fn keys_of_every_length_up_to_the_limit_match_a_model() {
        for seed in 0..6u64 {
            let pool = pool(48);
            let tree = BTree::create(&pool).expect("create");
            let mut model: BTreeMap<Vec<u8>, Entry> = BTreeMap::new();
            let mut rng = Prng::new(seed);
            // First a load in key order of keys of the longest length, as COPY into a
            // new table makes: pages of two cells.
            let mut cursor = AppendCursor::default();
            for i in 0..300u32 {
                let mut key = vec![b'a'; MAX_KEY_BYTES - 4];
                key.extend_from_slice(&(i * 4).to_be_bytes());
                let value = vec![7; (rng.next_u64() % 100) as usize];
                tree.put_ascending(&pool, &mut cursor, &key, Lsn(1), &value)
                    .expect("append");
                model.insert(key, (Lsn(1), Some(value)));
            }
            assert_eq!(tree.check(&pool).expect("valid tree"), model.len());
            for step in 1..3000u64 {
                let len = match rng.next_u64() % 4 {
                    0 => MAX_KEY_BYTES - (rng.next_u64() % 8) as usize,
                    1 => 1 + (rng.next_u64() % 16) as usize,
                    _ => 1 + (rng.next_u64() % MAX_KEY_BYTES as u64) as usize,
                };
                // Few distinct prefixes, so that keys meet again.
                let mut key = vec![b'a' + (rng.next_u64() % 20) as u8; len];
                key[len - 1] = (rng.next_u64() % 4) as u8;
                let lsn = Lsn(step + 1);
                match rng.next_u64() % 10 {
                    0..=5 => {
                        let value = vec![(step % 251) as u8; (rng.next_u64() % 3000) as usize];
                        let prev = tree.put(&pool, &key, lsn, Some(&value)).expect("put");
                        assert_eq!(prev, model.insert(key, (lsn, Some(value))), "seed {seed}");
                    }
                    6 => {
                        let prev = tree.put(&pool, &key, lsn, None).expect("tombstone");
                        assert_eq!(prev, model.insert(key, (lsn, None)), "seed {seed}");
                    }
                    _ => {
                        let prev = tree.remove(&pool, &key).expect("remove");
                        assert_eq!(prev, model.remove(&key), "seed {seed}");
                    }
                }
                if step % 500 == 499 {
                    assert_eq!(tree.check(&pool).expect("valid tree"), model.len());
                }
            }
            assert_eq!(tree.check(&pool).expect("valid tree"), model.len());
            let all: Vec<_> = model.into_iter().collect();
            assert_eq!(
                collect(&tree, &pool, (Bound::Unbounded, Bound::Unbounded), false),
                all,
                "seed {seed}"
            );
        }
    }
}
