//! A bulk load: COPY into a table that the same transaction created or truncated writes
//! its rows straight into pages, not into the log.
//!
//! The rows go into a private B+tree ([`BTree::create_private`]): its pages take fresh
//! odd page ids, no checkpoint image includes them (a checkpoint records their ids as
//! reserved), and no other transaction can reach them. At commit:
//! 1. [`BulkLoad::flush`] writes the tree's pages that are not on disk yet; the caller
//!    fdatasyncs the page file. Until then a crash leaves the load's slots free.
//! 2. The commit record names every page of the tree with its slot, not the rows.
//! 3. Under the checkpoint barrier the pages are published (shared, with their slots kept
//!    untouched until a checkpoint past the commit is durable) and the table adopts the
//!    tree ([`Table::adopt`]).
//!
//! Replay of the record claims the same ids at the same slots and adopts the tree again,
//! so recovery reads the load back from the pages, whatever checkpoint it starts from.
//! A load that does not commit frees its pages when it is dropped.
//!
//! Rows that arrive in key order wait in a small buffer and go into the tree's last leaf
//! many under one latch ([`BTree::append_ascending`]): a pin and a latch per row were
//! about half of what storing a row cost. Everything that reads the tree, or writes a
//! row out of order, first moves the buffer into it.

use std::ops::Bound;
use std::sync::Arc;

use parking_lot::Mutex;

use super::btree::{AppendCursor, BTree};
use super::page::PageId;
use super::pool::BufferPool;
use crate::constants::BULK_PENDING_MAX_BYTES;
use crate::error::{Error, Result};
use crate::wal::Lsn;

/// Rows of a bulk load are stored at LSN 0: their commit LSN is not known when they are
/// written ([`Table`](super::Table) reads LSN 0 as its last adopted load's).
pub const BULK_ROW_LSN: Lsn = Lsn::ZERO;

/// A visitor of loaded rows: key and row image; false stops.
pub type LoadedRow<'a> = dyn FnMut(&[u8], &[u8]) -> Result<bool> + 'a;

pub struct BulkLoad {
    pool: Arc<BufferPool>,
    /// `None` once committed: the table owns the pages then.
    tree: Option<BTree>,
    rows: u64,
    /// Rows taken in key order and not yet in the tree, with where the last row went
    /// (rows in key order go straight into the last leaf).
    pending: Mutex<Pending>,
    /// Every page with its slot, once flushed.
    pages: Vec<(PageId, u64)>,
}

/// Rows waiting for the tree, every key above all keys stored or waiting before it.
#[derive(Default)]
struct Pending {
    /// Keys and images, one after the other.
    bytes: Vec<u8>,
    /// Per row: where its key starts, the key's length and the image's length.
    rows: Vec<(usize, usize, usize)>,
    cursor: AppendCursor,
}

impl Pending {
    /// Whether `key` may wait: it is above every key taken so far, the last one waiting
    /// or else the largest stored.
    fn takes(&self, key: &[u8]) -> bool {
        let largest = match self.rows.last() {
            Some(&(at, len, _)) => Some(&self.bytes[at..at + len]),
            None => self.cursor.largest(),
        };
        largest.is_none_or(|largest| key > largest)
    }

    fn push(&mut self, key: &[u8], image: &[u8]) {
        self.rows.push((self.bytes.len(), key.len(), image.len()));
        self.bytes.extend_from_slice(key);
        self.bytes.extend_from_slice(image);
    }

    /// Move the waiting rows into `tree`.
    fn drain(&mut self, pool: &BufferPool, tree: &BTree) -> Result<()> {
        if self.rows.is_empty() {
            return Ok(());
        }
        let rows: Vec<(&[u8], &[u8])> = self
            .rows
            .iter()
            .map(|&(at, key, image)| {
                (
                    &self.bytes[at..at + key],
                    &self.bytes[at + key..at + key + image],
                )
            })
            .collect();
        tree.append_ascending(pool, &mut self.cursor, BULK_ROW_LSN, &rows)?;
        self.rows.clear();
        self.bytes.clear();
        Ok(())
    }
}

impl BulkLoad {
    pub fn new(pool: Arc<BufferPool>) -> Result<BulkLoad> {
        let tree = BTree::create_private(&pool)?;
        Ok(BulkLoad {
            pool,
            tree: Some(tree),
            rows: 0,
            pending: Mutex::new(Pending::default()),
            pages: Vec::new(),
        })
    }

    fn tree(&self) -> Result<&BTree> {
        self.tree
            .as_ref()
            .ok_or_else(|| Error::internal("bulk load used after its commit"))
    }

    /// Add a row image under `key`. Returns false if the load already held `key` (the
    /// new image may have replaced the old one: the caller reports the duplicate and
    /// abandons the load).
    pub fn insert(&mut self, key: &[u8], image: &[u8]) -> Result<bool> {
        let tree = *self.tree()?;
        let pending = self.pending.get_mut();
        if pending.takes(key) {
            pending.push(key, image);
            if pending.bytes.len() >= BULK_PENDING_MAX_BYTES {
                pending.drain(&self.pool, &tree)?;
            }
            self.rows += 1;
            return Ok(true);
        }
        pending.drain(&self.pool, &tree)?;
        let previous =
            tree.put_ascending(&self.pool, &mut pending.cursor, key, BULK_ROW_LSN, image)?;
        if previous.is_some() {
            return Ok(false);
        }
        self.rows += 1;
        Ok(true)
    }

    /// The tree, with every row taken so far in it.
    fn settled_tree(&self) -> Result<BTree> {
        let tree = *self.tree()?;
        self.pending.lock().drain(&self.pool, &tree)?;
        Ok(tree)
    }

    pub fn rows(&self) -> u64 {
        self.rows
    }

    /// The row image under `key`, if loaded.
    pub fn get(&self, key: &[u8]) -> Result<Option<Vec<u8>>> {
        Ok(self
            .settled_tree()?
            .get(&self.pool, key)?
            .and_then(|(_, image)| image))
    }

    /// Visit the loaded rows in `range`, in key order, until `visit` returns false.
    pub fn scan(
        &self,
        range: (Bound<&[u8]>, Bound<&[u8]>),
        visit: &mut LoadedRow<'_>,
    ) -> Result<()> {
        self.settled_tree()?
            .scan(&self.pool, range, false, &mut |key, _, image| match image {
                Some(image) => visit(key, image),
                None => Ok(true),
            })?;
        Ok(())
    }

    /// Step 1 of the commit: write the tree's pages that are not on disk yet. The caller
    /// makes the page file durable before logging the commit.
    pub fn flush(&mut self) -> Result<()> {
        let tree = self.settled_tree()?;
        let Some(tag) = private_tag(&tree) else {
            return Err(Error::internal("a bulk load's tree is private"));
        };
        self.pages = self.pool.flush_private(tag)?;
        assert!(
            self.pages.iter().any(|&(id, _)| id == tree.root),
            "the flushed pages include the root"
        );
        Ok(())
    }

    /// The root and every page with its slot, for the commit record (after `flush`).
    pub fn record(&self) -> Result<(PageId, &[(PageId, u64)])> {
        assert!(
            self.pending.lock().rows.is_empty(),
            "a load is flushed, all its rows in its tree, before it is recorded"
        );
        Ok((self.tree()?.root, &self.pages))
    }

    /// Step 3 of the commit, at `lsn` under the checkpoint barrier: publish the pages and
    /// hand over the tree. The load no longer frees them when dropped.
    pub fn commit(&mut self, lsn: Lsn) -> Result<BTree> {
        let tree = self
            .tree
            .take()
            .ok_or_else(|| Error::internal("bulk load committed twice"))?;
        if let Some(tag) = private_tag(&tree) {
            self.pool.publish(tag, lsn, &self.pages);
        }
        Ok(BTree::open(tree.root))
    }
}

fn private_tag(tree: &BTree) -> Option<u64> {
    match tree.owner {
        super::pool::Owner::Bulk(tag) => Some(tag),
        super::pool::Owner::Shared => None,
    }
}

impl Drop for BulkLoad {
    fn drop(&mut self) {
        // While a panic unwinds, the process is going down: leave the pages alone.
        if std::thread::panicking() {
            return;
        }
        if let Some(tree) = self.tree.take() {
            if let Err(e) = tree.destroy(&self.pool) {
                tracing::warn!("could not free the pages of an abandoned bulk load: {e}");
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;
    use crate::disk::sim::Prng;

    fn loaded(load: &BulkLoad) -> BTreeMap<Vec<u8>, Vec<u8>> {
        let mut out = BTreeMap::new();
        load.scan((Bound::Unbounded, Bound::Unbounded), &mut |k, v| {
            out.insert(k.to_vec(), v.to_vec());
            Ok(true)
        })
        .expect("scan");
        out
    }

    /// The two agree; otherwise fail naming the first key where they differ.
    fn assert_same(got: &BTreeMap<Vec<u8>, Vec<u8>>, want: &BTreeMap<Vec<u8>, Vec<u8>>) {
        let keys: std::collections::BTreeSet<_> = got.keys().chain(want.keys()).collect();
        for key in keys {
            let (g, w) = (got.get(key), want.get(key));
            assert!(
                g == w,
                "key {key:?}: loaded {:?} bytes, expected {:?} bytes ({} loaded rows, {} expected)",
                g.map(|v| (v.len(), v.first())),
                w.map(|v| (v.len(), v.first())),
                got.len(),
                want.len()
            );
        }
    }

    #[test]
    fn rows_waiting_for_the_tree_are_read_and_flushed_like_stored_ones() {
        let pool = Arc::new(BufferPool::on_sim_disk(32));
        let mut load = BulkLoad::new(pool.clone()).expect("load");
        let mut model = BTreeMap::new();
        let mut rng = Prng::new(7);
        let mut next = 0u64;
        for i in 0..20_000u64 {
            // Mostly ascending keys, with gaps; now and then one in a gap below them (an
            // ordinary put), and now and then a value long enough for overflow pages.
            let key = match (0..10)
                .map(|_| rng.next_u64() % next.max(1))
                .find(|k| i % 997 == 0 && !model.contains_key(&k.to_be_bytes()[..]))
            {
                Some(gap) => gap.to_be_bytes().to_vec(),
                None => {
                    next += 2 + rng.next_u64() % 3;
                    next.to_be_bytes().to_vec()
                }
            };
            let len = if i % 1_500 == 0 {
                5_000
            } else {
                20 + (rng.next_u64() % 200) as usize
            };
            let value = vec![(i % 251) as u8; len];
            assert!(load.insert(&key, &value).expect("insert"), "key {key:?}");
            model.insert(key, value);
            if i % 4_999 == 0 {
                // A read in the middle sees every row taken so far.
                let probe = next.to_be_bytes();
                assert_eq!(
                    load.get(&probe).expect("get"),
                    model.get(&probe[..]).cloned()
                );
            }
        }
        assert_eq!(load.rows(), model.len() as u64);
        assert_same(&loaded(&load), &model);
        // Rows taken after a read wait again; the flush stores them all.
        for _ in 0..100 {
            next += 1;
            let key = next.to_be_bytes().to_vec();
            assert!(load.insert(&key, b"late").expect("insert"));
            model.insert(key, b"late".to_vec());
        }
        load.flush().expect("flush");
        assert!(load.pending.lock().rows.is_empty());
        assert_same(&loaded(&load), &model);
        // A key the load holds, waiting or stored, is reported.
        let waiting = (next + 1).to_be_bytes();
        assert!(load.insert(&waiting, b"new").expect("insert"));
        assert!(!load.insert(&waiting, b"again").expect("insert"));
        let first = model.keys().next().expect("rows").clone();
        assert!(!load.insert(&first, b"again").expect("insert"));
    }
}
