//! A spilled write set: the after-images a large transaction wrote to one table, moved out
//! of memory into a private B+tree in the page file once the transaction's write set
//! passed `write_set_work_mem`.
//!
//! The tree is a bulk load's kind of tree ([`BTree::create_private`]): its pages take fresh
//! odd page ids, no checkpoint image includes them, no table reaches them, and a crash
//! leaves their slots free. Unlike a bulk load's, a spill tree is never adopted: at commit
//! its rows are logged (in pieces, `txn::records`) and installed into the table one by
//! one, and the tree is freed when the write set is dropped. So it costs the transaction
//! buffer-pool frames, which the pool writes out and reads back like any others, instead of
//! memory of its own.
//!
//! Each entry is a key with its image, or a tombstone for a key the transaction deleted.
//!
//! Invariants:
//! - Only the owning transaction changes the tree ([`SpillTree::put`]), and it never
//!   holds a row lock's shard while it does; other transactions only look keys up (the
//!   lock table asks whether the owner holds a key: `txn::locks`). The tree lock keeps a
//!   lookup from descending while a put splits a page.
//! - The tree is freed once: when the last handle is dropped (the write set's, or the
//!   lock table's, whichever goes last).

use std::ops::Bound;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;

use parking_lot::RwLock;

use super::btree::BTree;
use super::pool::BufferPool;
use crate::error::Result;
use crate::wal::Lsn;

/// The LSN spilled entries are stored at: they are not versions, and never read as one.
const SPILL_LSN: Lsn = Lsn::ZERO;

/// One spilled entry: a key and its after-image (`None`: deleted).
pub type SpilledRow = (Vec<u8>, Option<Vec<u8>>);

pub struct SpillTree {
    pool: Arc<BufferPool>,
    tree: BTree,
    /// Held shared to read the tree, exclusively to change it.
    lock: RwLock<()>,
    /// Entries in the tree (changed under the tree lock).
    rows: AtomicU64,
    /// Whether a deletion was ever spilled.
    deletions: AtomicBool,
}

impl SpillTree {
    pub fn new(pool: Arc<BufferPool>) -> Result<SpillTree> {
        let tree = BTree::create_private(&pool)?;
        Ok(SpillTree {
            pool,
            tree,
            lock: RwLock::new(()),
            rows: AtomicU64::new(0),
            deletions: AtomicBool::new(false),
        })
    }

    /// Store `key`'s after-image (`None`: a deletion), replacing any spilled before.
    pub fn put(&self, key: &[u8], image: Option<&[u8]>) -> Result<()> {
        let _tree = self.lock.write();
        let previous = self.tree.put(&self.pool, key, SPILL_LSN, image)?;
        if previous.is_none() {
            self.rows.fetch_add(1, Ordering::Relaxed);
        }
        if image.is_none() {
            self.deletions.store(true, Ordering::Relaxed);
        }
        Ok(())
    }

    /// `key`'s spilled entry: `None` if it has none, `Some(None)` for a deletion.
    pub fn get(&self, key: &[u8]) -> Result<Option<Option<Vec<u8>>>> {
        let _tree = self.lock.read();
        Ok(self.tree.get(&self.pool, key)?.map(|(_, image)| image))
    }

    /// Whether `key` has a spilled entry.
    pub fn contains(&self, key: &[u8]) -> Result<bool> {
        Ok(self.get(key)?.is_some())
    }

    /// Entries in the tree.
    pub fn rows(&self) -> u64 {
        self.rows.load(Ordering::Relaxed)
    }

    /// Whether a deletion was ever spilled (it may have been replaced since).
    pub fn has_deletions(&self) -> bool {
        self.deletions.load(Ordering::Relaxed)
    }

    /// Up to `max` entries in key order from `from` up to `to`: one step of a cursor over
    /// the tree, which never holds a page between steps (the caller goes on from just past
    /// the last key it got).
    pub fn batch(
        &self,
        from: Bound<&[u8]>,
        to: Bound<&[u8]>,
        max: usize,
    ) -> Result<Vec<SpilledRow>> {
        let _tree = self.lock.read();
        let mut out = Vec::new();
        self.tree
            .scan(&self.pool, (from, to), false, &mut |key, _, image| {
                out.push((key.to_vec(), image.map(<[u8]>::to_vec)));
                Ok(out.len() < max)
            })?;
        Ok(out)
    }
}

impl Drop for SpillTree {
    fn drop(&mut self) {
        // While a panic unwinds, the process is going down: leave the pages alone.
        if std::thread::panicking() {
            return;
        }
        if let Err(e) = self.tree.destroy(&self.pool) {
            tracing::warn!("could not free the pages of a spilled write set: {e}");
        }
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;
    use crate::disk::sim::Prng;

    #[test]
    fn batches_walk_the_tree_as_a_model_map_in_key_order() {
        let pool = Arc::new(BufferPool::on_sim_disk(16));
        let spill = SpillTree::new(pool).expect("spill");
        let mut model: BTreeMap<Vec<u8>, Option<Vec<u8>>> = BTreeMap::new();
        let mut rng = Prng::new(3);
        for i in 0..6_000u64 {
            let key = (rng.next_u64() % 3_000).to_be_bytes().to_vec();
            let image = (i % 5 != 0).then(|| vec![(i % 251) as u8; 10 + (i % 300) as usize]);
            spill.put(&key, image.as_deref()).expect("put");
            model.insert(key, image);
        }
        assert_eq!(spill.rows(), model.len() as u64);
        for (key, image) in &model {
            assert_eq!(spill.get(key).expect("get"), Some(image.clone()));
        }
        assert_eq!(spill.get(&5_000u64.to_be_bytes()).expect("get"), None);
        let mut walked = Vec::new();
        let mut from: Option<Vec<u8>> = None;
        loop {
            let lo = match &from {
                Some(k) => Bound::Excluded(k.as_slice()),
                None => Bound::Unbounded,
            };
            let batch = spill.batch(lo, Bound::Unbounded, 97).expect("batch");
            let Some(last) = batch.last() else { break };
            from = Some(last.0.clone());
            walked.extend(batch);
        }
        let want: Vec<SpilledRow> = model.into_iter().collect();
        assert_eq!(walked, want);
    }
}
