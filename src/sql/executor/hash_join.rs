//! Hash joins past their memory limit: the inner table split into batches on disk.
//!
//! A hash join holds its inner table's rows in a hash table on their join keys. While
//! their estimated size is under `hash_mem_bytes` (twice `work_mem`, as PostgreSQL's
//! default `hash_mem_multiplier`), that is all. Past it the join becomes a Grace hash
//! join: the rows read so far, and the rest, go to a spool; once the table is read, the
//! number of batches is chosen from its size (a power of two), and the spool is split
//! by a hash of each row's key: batch 0's rows into the hash table, every other batch's
//! into a file of its own. An outer row whose key falls in batch 0 is joined at once;
//! one of another batch is written to that batch's outer file. When the outer rows are
//! done, each later batch in turn has its inner rows loaded and its outer rows read back
//! and joined, as the first batch's were.
//!
//! # Invariants
//!
//! - **Rows that can match meet**: an inner and an outer row with equal keys hash to the
//!   same batch (the batch hash is of the same widened key the hash table uses), so a
//!   pair is joined in exactly one batch, and no pair twice.
//! - **A row whose key has a NULL matches nothing**: an outer one is joined (or, in a
//!   LEFT or FULL join, null-extended) at once; an inner one stays in memory only if a
//!   RIGHT or FULL join must emit it unmatched.
//! - **Unmatched inner rows are emitted per batch**, after that batch's outer rows, so
//!   a RIGHT or FULL join sees each inner row's matches before deciding it had none.
//! - **Bounded**: memory holds one batch's inner rows and each file's write buffer;
//!   [`MAX_BATCHES`] bounds the files (two per batch, each an open descriptor). Only
//!   spilling changes the order of the joined rows (which SQL leaves unspecified without
//!   ORDER BY), never which rows they are.
//!
//! Left out: a batch is loaded whole whatever its size, so memory passes the limit when
//! its rows share one key (skew cannot be split) or when the table is larger than
//! [`MAX_BATCHES`] times the limit (about 2 GB of rows at the default `work_mem`), where
//! PostgreSQL would make more batches and share descriptors among its files.

use std::hash::{Hash, Hasher};
use std::path::Path;

use super::sort::{value_bytes, SortRow, Spool, SpoolReader};
use crate::error::Result;
use crate::types::Value;

/// The most batches a join is split into.
const MAX_BATCHES: usize = 256;

/// A held row's overhead beside its values: its vector, its key's vector, and the
/// table's entry.
const HASH_ENTRY_BYTES: usize = 128;

/// Batches are chosen so that each is expected to fill this fraction of the limit.
const BATCH_FILL_PERCENT: usize = 50;

/// The batches of a join that did not fit in memory.
pub(super) struct Batches {
    count: usize,
    /// The batch whose inner rows are in memory: 0 while the outer rows arrive.
    pub current: usize,
    /// Each batch's inner rows (batch 0's are in memory; a loaded batch's are taken).
    inner: Vec<Option<Spool>>,
    /// Each batch's outer rows, deferred until it is loaded.
    outer: Vec<Option<Spool>>,
}

/// One batch's rows, read back: its inner rows (with their keys) and its outer rows;
/// either may be none.
pub(super) struct Batch {
    pub inner: Option<SpoolReader>,
    pub outer: Option<SpoolReader>,
}

/// The batch of a key among `count` (a power of two). SipHash with fixed keys: not the
/// hash table's hasher, so a batch's keys still spread over its table.
pub(super) fn batch_of(key: &[Value], count: usize) -> usize {
    let mut h = std::hash::DefaultHasher::new();
    key.hash(&mut h);
    (h.finish() as usize) & (count - 1)
}

/// Estimated memory of an inner row held in the hash table: the row, its key and its
/// entry.
pub(super) fn held_bytes(row: &[Value], key: Option<&[Value]>) -> usize {
    let values: usize = row
        .iter()
        .chain(key.unwrap_or_default())
        .map(value_bytes)
        .sum();
    values + HASH_ENTRY_BYTES
}

/// How many batches `total_bytes` of inner rows take under `limit_bytes` each.
pub(super) fn batch_count(total_bytes: usize, limit_bytes: usize) -> usize {
    let per_batch = (limit_bytes.max(1) / 100).max(1) * BATCH_FILL_PERCENT;
    total_bytes
        .div_ceil(per_batch)
        .next_power_of_two()
        .clamp(2, MAX_BATCHES)
}

impl Batches {
    /// `count` batches (a power of two, at least 2); their files are made as rows
    /// arrive.
    pub fn new(count: usize) -> Batches {
        debug_assert!(count.is_power_of_two() && count >= 2);
        Batches {
            count,
            current: 0,
            inner: (0..count).map(|_| None).collect(),
            outer: (0..count).map(|_| None).collect(),
        }
    }

    pub fn count(&self) -> usize {
        self.count
    }

    /// Keep an inner row of batch `batch` (not 0), with its key, for later.
    pub fn put_inner(&mut self, batch: usize, keyed: SortRow, dir: &Path) -> Result<()> {
        debug_assert!(batch != 0 && batch < self.count);
        spool_at(&mut self.inner[batch], dir)?.push(&keyed)
    }

    /// Defer an outer row of batch `batch` (a later one) until that batch is loaded.
    pub fn defer_outer(&mut self, batch: usize, row: Vec<Value>, dir: &Path) -> Result<()> {
        debug_assert!(batch > self.current && batch < self.count);
        spool_at(&mut self.outer[batch], dir)?.push(&(Vec::new(), row))
    }

    /// The next batch with rows to join (`current` becomes its number); with
    /// `keep_unmatched_inner` false (no RIGHT or FULL join), a batch without outer rows is
    /// skipped.
    pub fn next_batch(&mut self, keep_unmatched_inner: bool) -> Result<Option<Batch>> {
        while self.current + 1 < self.count {
            self.current += 1;
            let b = self.current;
            let outer = self.outer[b].take();
            let inner = self.inner[b].take();
            let has_outer = outer.as_ref().is_some_and(|s| s.rows() > 0);
            let has_inner = inner.as_ref().is_some_and(|s| s.rows() > 0);
            if has_outer || (keep_unmatched_inner && has_inner) {
                let inner = inner.map(Spool::read_back).transpose()?;
                let outer = outer.map(Spool::read_back).transpose()?;
                return Ok(Some(Batch { inner, outer }));
            }
        }
        Ok(None)
    }
}

fn spool_at<'s>(slot: &'s mut Option<Spool>, dir: &Path) -> Result<&'s mut Spool> {
    if slot.is_none() {
        *slot = Some(Spool::new(dir)?);
    }
    match slot {
        Some(spool) => Ok(spool),
        None => unreachable!("the spool was just made"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn batch_counts_are_powers_of_two_within_bounds() {
        assert_eq!(batch_count(1, 1000), 2);
        assert_eq!(batch_count(1000, 1000), 2);
        assert_eq!(batch_count(1001, 1000), 4);
        assert_eq!(batch_count(10_000, 1000), 32);
        assert_eq!(batch_count(usize::MAX / 2, 1000), MAX_BATCHES);
    }

    #[test]
    fn equal_keys_fall_in_one_batch_and_keys_spread() {
        let mut seen = [0usize; 8];
        for i in 0..8000i64 {
            let key = [Value::Int8(i), Value::Text(format!("k{}", i % 10))];
            let b = batch_of(&key, 8);
            assert_eq!(b, batch_of(&key.clone(), 8));
            seen[b] += 1;
        }
        assert!(seen.iter().all(|&n| n > 700), "{seen:?}");
    }

    #[test]
    fn rows_come_back_per_batch_and_empty_batches_are_skipped() {
        let dir = std::env::temp_dir().join(format!("steadydb-hash-join-{}", std::process::id()));
        let mut batches = Batches::new(4);
        batches
            .put_inner(1, (vec![Value::Int8(1)], vec![Value::Int4(1)]), &dir)
            .unwrap();
        batches
            .put_inner(2, (vec![Value::Int8(2)], vec![Value::Int4(2)]), &dir)
            .unwrap();
        batches.defer_outer(2, vec![Value::Int4(20)], &dir).unwrap();
        batches.defer_outer(3, vec![Value::Int4(30)], &dir).unwrap();
        // An inner join skips batch 1 (no outer rows).
        let Batch { inner, outer } = batches.next_batch(false).unwrap().unwrap();
        assert_eq!(batches.current, 2);
        let mut inner = inner.unwrap();
        assert_eq!(inner.next_row().unwrap().unwrap().1, vec![Value::Int4(2)]);
        assert!(inner.next_row().unwrap().is_none());
        assert_eq!(
            outer.unwrap().next_row().unwrap().unwrap().1,
            vec![Value::Int4(20)]
        );
        let Batch { inner, outer } = batches.next_batch(false).unwrap().unwrap();
        assert_eq!((batches.current, inner.is_none()), (3, true));
        assert!(outer.is_some());
        assert!(batches.next_batch(false).unwrap().is_none());
        let _ = std::fs::remove_dir_all(&dir);
    }
}
