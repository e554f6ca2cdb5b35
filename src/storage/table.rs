//! One table's committed rows: the newest version of each key in the table's B+tree, and
//! in memory the older versions that some snapshot may still need.
//!
//! A reader at snapshot `s` sees, for a key, the tree's version if its LSN is at or below
//! `s`; otherwise the older version valid at `s`: each older version is valid from its own
//! LSN up to (not including) the LSN that superseded it. Deletions are not stored: a deleted
//! key leaves the tree, and its last row stays among the older versions, superseded at the
//! deletion, for as long as a snapshot may need it. So the tree never holds tombstones, and
//! nothing needs purging from it later.
//!
//! An older version is kept when its replacement is installed above the horizon (the
//! oldest snapshot any session reads at, never above `visible_lsn`), which is every
//! ordinary commit, since a commit is installed before it is visible; it is dropped once
//! the horizon reaches the LSN that superseded it. Recovery replays at the horizon of each
//! record and keeps none.
//!
//! Concurrency: installs of different keys run side by side under the shared tree lock
//! when each changes one leaf only; an install records the version it replaces before
//! the leaf shows the new one, so a reader never finds a new version without its
//! predecessor. Everything else that changes the tree is exclusive (see `tree_lock`).

use std::collections::{BTreeMap, VecDeque};
use std::hash::Hasher;
use std::ops::Bound;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;

use parking_lot::{Mutex, MutexGuard, RwLock};
use rustc_hash::FxHasher;

use super::btree::{AppendCursor, BTree, InPlace};
use super::bulk::BULK_ROW_LSN;
use super::index::{Index, IndexDef};
use super::page::PageId;
use super::pool::BufferPool;
use super::write_gate::WriteGate;
use super::TableDef;
use crate::error::{Error, Result, SqlState};
use crate::stages::{self, Held, Stage};
use crate::types::{self, DataType, Value};
use crate::wal::Lsn;

/// Identifies a table for its whole life; never reused while the server runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct TableId(pub u32);

impl TableId {
    /// In a definition not yet created, a foreign key's reference to the table itself:
    /// the table's own id replaces it when the table is created.
    pub const SELF_REFERENCE: TableId = TableId(u32::MAX);
}

/// An encoded primary key (or hidden row id): memcomparable bytes.
pub type Key = Vec<u8>;

/// A row's column values, in table column order. Shared, never mutated.
pub type Row = Arc<[Value]>;

/// A version as the tree stores it: key, commit LSN, row image (`None`: a tombstone).
type StoredVersion = (Key, Lsn, Option<Vec<u8>>);

/// One committed version of a row: `None` is a deletion.
#[derive(Clone, Debug)]
pub struct Version {
    pub lsn: Lsn,
    pub row: Option<Row>,
}

/// A row image replaced or deleted at `superseded`: valid for snapshots in
/// `[lsn, superseded)`.
#[derive(Clone)]
struct OldVersion {
    lsn: Lsn,
    superseded: Lsn,
    image: Vec<u8>,
    /// The row ended at `superseded`: the version that begins there is another row under
    /// the same key (deleted and inserted again by one transaction, see
    /// [`Table::end_rows`]).
    ended: bool,
}

#[derive(Default)]
struct Older {
    /// Per key, newest first.
    chains: BTreeMap<Key, Vec<OldVersion>>,
    /// (superseded, key) in install order: where to look when the horizon moves.
    by_superseded: VecDeque<(Lsn, Key)>,
}

impl Older {
    fn push(&mut self, key: &[u8], version: OldVersion) {
        self.by_superseded
            .push_back((version.superseded, key.to_vec()));
        let chain = self.chains.entry(key.to_vec()).or_default();
        debug_assert!(chain.first().is_none_or(|v| v.superseded <= version.lsn));
        chain.insert(0, version);
    }

    /// Drop versions no snapshot at or above `horizon` can see.
    fn prune(&mut self, horizon: Lsn) {
        while self
            .by_superseded
            .front()
            .is_some_and(|(superseded, _)| *superseded <= horizon)
        {
            let Some((_, key)) = self.by_superseded.pop_front() else {
                break;
            };
            if let Some(chain) = self.chains.get_mut(&key) {
                chain.retain(|v| v.superseded > horizon);
                if chain.is_empty() {
                    self.chains.remove(&key);
                }
            }
        }
    }
}

/// Shards of a table's older versions ([`Versions`]).
pub const VERSION_SHARDS: usize = 16;

/// A table's older versions, in shards by key hash: every install of an update records
/// the version it replaces, and one lock per table would make every commit into it wait
/// for the others. A key's chain lives in one shard; an operation on one key takes that
/// shard alone. Operations on many keys take every shard, in index order.
struct Versions {
    shards: Box<[Mutex<Older>]>,
    /// The shard the next install prunes, besides those it writes into: so every shard
    /// is pruned while the table is written, whichever keys are.
    prune_next: AtomicUsize,
}

impl Versions {
    fn new() -> Versions {
        Versions {
            shards: (0..VERSION_SHARDS).map(|_| Mutex::default()).collect(),
            prune_next: AtomicUsize::new(0),
        }
    }

    fn index(key: &[u8]) -> usize {
        let mut h = FxHasher::default();
        h.write(key);
        (h.finish() >> 40) as usize % VERSION_SHARDS
    }

    /// The shard holding `key`'s chain, locked.
    fn shard(&self, key: &[u8]) -> Held<MutexGuard<'_, Older>> {
        stages::lock(Stage::TableVersions, &self.shards[Versions::index(key)])
    }

    /// Every shard, locked in index order.
    fn lock_all(&self) -> AllVersions<'_> {
        AllVersions(
            self.shards
                .iter()
                .map(|s| stages::lock(Stage::TableVersions, s))
                .collect(),
        )
    }

    /// Prune every shard.
    fn prune_all(&self, horizon: Lsn) {
        for shard in self.shards.iter() {
            stages::lock(Stage::TableVersions, shard).prune(horizon);
        }
    }

    /// Prune the next shard in turn.
    fn prune_one(&self, horizon: Lsn) {
        let i = self.prune_next.fetch_add(1, Ordering::Relaxed) % VERSION_SHARDS;
        stages::lock(Stage::TableVersions, &self.shards[i]).prune(horizon);
    }

    /// Whether any chain of a key in `range` satisfies `test`.
    fn any_in_range(
        &self,
        range: (Bound<&[u8]>, Bound<&[u8]>),
        test: impl Fn(&[OldVersion]) -> bool,
    ) -> bool {
        self.shards.iter().any(|s| {
            stages::lock(Stage::TableVersions, s)
                .chains
                .range::<[u8], _>(range)
                .any(|(_, chain)| test(chain))
        })
    }

    /// A copy of the chains of the keys in `range`, in key order (reversed when
    /// `reverse`). Shards are copied one after the other: a chain that changes meanwhile
    /// is one a scan looks up again.
    fn copy_range(
        &self,
        range: (Bound<&[u8]>, Bound<&[u8]>),
        reverse: bool,
    ) -> Vec<(Key, Vec<OldVersion>)> {
        let mut copied: Vec<(Key, Vec<OldVersion>)> = Vec::new();
        for s in self.shards.iter() {
            let older = stages::lock(Stage::TableVersions, s);
            copied.extend(
                older
                    .chains
                    .range::<[u8], _>(range)
                    .map(|(k, c)| (k.clone(), c.clone())),
            );
        }
        copied.sort_unstable_by(|a, b| a.0.cmp(&b.0));
        if reverse {
            copied.reverse();
        }
        copied
    }
}

/// Every shard of a table's older versions, locked.
struct AllVersions<'a>(Vec<Held<MutexGuard<'a, Older>>>);

impl<'a> AllVersions<'a> {
    fn push(&mut self, key: &[u8], version: OldVersion) {
        self.0[Versions::index(key)].push(key, version);
    }

    fn prune(&mut self, horizon: Lsn) {
        for shard in &mut self.0 {
            shard.prune(horizon);
        }
    }

    fn clear(&mut self) {
        for shard in &mut self.0 {
            **shard = Older::default();
        }
    }

    fn chains_mut(&mut self) -> impl Iterator<Item = &mut Vec<OldVersion>> + use<'_, 'a> {
        self.0.iter_mut().flat_map(|s| s.chains.values_mut())
    }
}

/// The older version of a chain valid at `snapshot`.
fn valid_at(chain: &[OldVersion], snapshot: Lsn) -> Option<&[u8]> {
    chain
        .iter()
        .find(|v| v.lsn <= snapshot && snapshot < v.superseded)
        .map(|v| v.image.as_slice())
}

pub struct Table {
    pub id: TableId,
    /// The definition, its column types, and what rows written before a column was
    /// added read for it ([`types::decode_row_filled`]).
    def: RwLock<DefinitionParts>,
    pool: Arc<BufferPool>,
    tree: BTree,
    /// The tree lock. Shared: to read the tree, or to store a version that changes one
    /// leaf only ([`BTree::put_in_place`]). Exclusive: for anything else that changes the
    /// tree (splits, merges, deletions, overflow chains, truncation, adoption). Deletions
    /// are exclusive so that a scan, which copies the older versions of its range when it
    /// starts, finds every key deleted since in that copy.
    tree_lock: RwLock<()>,
    /// The older versions. Taken after a leaf latch and never before one (unless the tree
    /// lock is held exclusively, when no one else latches this tree's pages): an install
    /// records the version it replaces here while it holds the leaf, so a reader that
    /// finds the new version in the tree finds the old one here.
    older: Versions,
    /// The next hidden row id, for tables without a primary key.
    next_row_id: AtomicU64,
    /// Set once the table's pages are freed (its drop committed).
    destroyed: AtomicBool,
    /// The LSN of the last rewrite of every row ([`Table::replace`], [`Table::rekey`]),
    /// which drops older versions: a snapshot below it can no longer be served.
    rewritten_lsn: AtomicU64,
    /// The commit LSN of the last bulk load adopted since startup. Its rows are stored
    /// with LSN 0, written before the commit LSN was known; they count as committed at
    /// this LSN. (After a restart no snapshot predates them: 0 is right.)
    bulk_lsn: AtomicU64,
    /// Who may write the table while its rows are rebuilt under a new key.
    write_gate: WriteGate,
    /// What ANALYZE last measured (none before the first).
    stats: RwLock<Option<Arc<super::stats::TableStats>>>,
    /// Rows written (inserted, updated or deleted) since ANALYZE last measured the
    /// table: when to measure it again.
    changed_rows: AtomicU64,
    /// The secondary indexes, in the order of `TableDef::indexes`. Held shared by an
    /// install for its whole length, so that its entries go into the trees of the indexes
    /// its rows were read against; exclusively to add, drop or rebuild an index. Taken
    /// before the tree lock.
    indexes: RwLock<Arc<[Arc<Index>]>>,
    /// While a transaction that has not ended has changed the definition (its change is
    /// logged with its commit): the definition committed before, which checkpoints
    /// store and a rollback puts back. The transaction keeps the table's gate closed
    /// meanwhile, so only it reads or writes the rows.
    committed_def: parking_lot::Mutex<Option<Arc<TableDef>>>,
    /// The indexes such a transaction dropped: out of use, their pages kept until it
    /// commits (then freed) or rolls back (then they are the table's again).
    dropped_uncommitted: parking_lot::Mutex<Vec<Arc<Index>>>,
}

/// Free the pages of an index no definition names any more (a failure is logged: the
/// pages stay allocated, and nothing refers to them).
fn free_pages(index: &Index) {
    if let Err(e) = index.entries().destroy() {
        tracing::warn!(
            "could not free the pages of index \"{}\": {e}",
            index.def.name
        );
    }
}

/// A table's definition, its column types, and its columns' values for older rows.
type DefinitionParts = (Arc<TableDef>, Arc<[DataType]>, Arc<[Value]>);

/// A row key's change in one install: its image before and after (`None`: no row), for
/// the indexes to follow.
type RowChange = (Key, Option<Vec<u8>>, Option<Vec<u8>>);

/// Per column, the value rows written before it was added hold (NULL for most).
fn missing_values(def: &TableDef) -> Arc<[Value]> {
    def.columns
        .iter()
        .map(|c| match &c.missing {
            None => Value::Null,
            Some(text) => types::decode_text(&c.data_type, text).unwrap_or_else(|e| {
                tracing::error!(
                    "column \"{}\" of \"{}\": its value for older rows does not parse ({e}); they read NULL",
                    c.name,
                    def.name
                );
                Value::Null
            }),
        })
        .collect()
}

fn column_types(def: &TableDef) -> Arc<[DataType]> {
    def.columns.iter().map(|c| c.data_type).collect()
}

impl Table {
    /// A new, empty table with a tree of its own.
    pub fn create(id: TableId, def: TableDef, pool: Arc<BufferPool>) -> Result<Table> {
        let tree = BTree::create(&pool)?;
        let table = Table::open(id, def.clone(), pool, tree.root, 1);
        let mut indexes = Vec::new();
        for index in &def.indexes {
            let entries = Index::entries_table(&index.name, table.pool.clone(), None)?;
            indexes.push(Arc::new(Index::new(index.clone(), entries, Lsn(0))));
        }
        *table.indexes.write() = indexes.into();
        Ok(table)
    }

    /// Give a table opened from a checkpoint its indexes, whose entry trees have roots
    /// `roots` (in the order of its definition's indexes).
    pub fn open_indexes(&self, roots: &[PageId]) -> Result<()> {
        let def = self.def();
        if roots.len() != def.indexes.len() {
            return Err(Error::new(
                SqlState::DATA_CORRUPTED,
                format!(
                    "table \"{}\" has {} indexes but {} index roots",
                    def.name,
                    def.indexes.len(),
                    roots.len()
                ),
            ));
        }
        let mut indexes = Vec::new();
        for (index, &root) in def.indexes.iter().zip(roots) {
            let entries = Index::entries_table(&index.name, self.pool.clone(), Some(root))?;
            indexes.push(Arc::new(Index::new(index.clone(), entries, Lsn(0))));
        }
        *self.indexes.write() = indexes.into();
        Ok(())
    }

    /// The table's secondary indexes, in definition order.
    pub fn indexes(&self) -> Arc<[Arc<Index>]> {
        self.indexes.read().clone()
    }

    /// The index named `name`, if the table has it.
    pub fn index(&self, name: &str) -> Option<Arc<Index>> {
        self.indexes
            .read()
            .iter()
            .find(|i| i.def.name == name)
            .cloned()
    }

    /// A table whose tree has root `root` (loaded from a checkpoint).
    pub fn open(
        id: TableId,
        def: TableDef,
        pool: Arc<BufferPool>,
        root: PageId,
        next_row_id: u64,
    ) -> Table {
        let types = column_types(&def);
        let missing = missing_values(&def);
        Table {
            id,
            def: RwLock::new((Arc::new(def), types, missing)),
            pool,
            tree: BTree::open(root),
            tree_lock: RwLock::new(()),
            older: Versions::new(),
            next_row_id: AtomicU64::new(next_row_id),
            destroyed: AtomicBool::new(false),
            rewritten_lsn: AtomicU64::new(0),
            bulk_lsn: AtomicU64::new(0),
            write_gate: WriteGate::default(),
            stats: RwLock::new(None),
            changed_rows: AtomicU64::new(0),
            indexes: RwLock::new(Arc::from(Vec::new())),
            committed_def: parking_lot::Mutex::new(None),
            dropped_uncommitted: parking_lot::Mutex::new(Vec::new()),
        }
    }

    /// What ANALYZE last measured of the table.
    pub fn stats(&self) -> Option<Arc<super::stats::TableStats>> {
        self.stats.read().clone()
    }

    pub fn set_stats(&self, stats: super::stats::TableStats) {
        *self.stats.write() = Some(Arc::new(stats));
        self.changed_rows.store(0, Ordering::Relaxed);
    }

    /// Rows written since ANALYZE last measured the table (a truncation counts as more
    /// than any threshold).
    pub fn changed_rows(&self) -> u64 {
        self.changed_rows.load(Ordering::Relaxed)
    }

    pub fn write_gate(&self) -> &WriteGate {
        &self.write_gate
    }

    pub fn def(&self) -> Arc<TableDef> {
        self.def.read().0.clone()
    }

    pub fn set_def(&self, def: TableDef) {
        let types = column_types(&def);
        let missing = missing_values(&def);
        *self.def.write() = (Arc::new(def), types, missing);
    }

    /// The definition as committed: the one a transaction's uncommitted change replaced
    /// (see `committed_def`), else the current one. What a checkpoint stores.
    pub fn committed_def(&self) -> Arc<TableDef> {
        let committed = self.committed_def.lock().clone();
        committed.unwrap_or_else(|| self.def())
    }

    /// A transaction's change of the definition, logged with its commit
    /// ([`Table::confirm_def`]) or undone by its rollback ([`Table::undo_def`]).
    pub fn change_def_uncommitted(&self, def: TableDef) {
        let mut committed = self.committed_def.lock();
        if committed.is_none() {
            *committed = Some(self.def());
        }
        self.set_def(def);
    }

    /// The transaction that changed the definition committed: it is the committed one,
    /// and the indexes it dropped are freed.
    pub fn confirm_def(&self) {
        *self.committed_def.lock() = None;
        let dropped = std::mem::take(&mut *self.dropped_uncommitted.lock());
        for index in dropped {
            free_pages(&index);
        }
    }

    /// A transaction block's DROP INDEX: the index is out of use from now, with
    /// `new_def`; its pages are kept until the transaction ends (`confirm_def` frees
    /// them, `undo_def` puts the index back).
    pub fn drop_index_uncommitted(&self, new_def: TableDef, name: &str) {
        let mut committed = self.committed_def.lock();
        if committed.is_none() {
            *committed = Some(self.def());
        }
        let mut indexes = self.indexes.write();
        let (dropped, kept): (Vec<Arc<Index>>, Vec<Arc<Index>>) =
            indexes.iter().cloned().partition(|i| i.def.name == name);
        *indexes = kept.into();
        drop(indexes);
        self.dropped_uncommitted.lock().extend(dropped);
        self.set_def(new_def);
    }

    /// Put back `def`, the definition before a change that is rolled back; `last`: no
    /// change of the transaction's remains, so it is the committed one again. An index
    /// the change added (one `def` does not name) is dropped, its pages freed.
    pub fn undo_def(&self, def: &TableDef, last: bool) {
        let mut committed = self.committed_def.lock();
        self.set_def(def.clone());
        if last {
            *committed = None;
        }
        drop(committed);
        let added: Vec<Arc<Index>> = {
            let mut indexes = self.indexes.write();
            let (added, kept): (Vec<Arc<Index>>, Vec<Arc<Index>>) = indexes
                .iter()
                .cloned()
                .partition(|i| !def.indexes.iter().any(|d| d.name == i.def.name));
            *indexes = kept.into();
            added
        };
        for index in added {
            free_pages(&index);
        }
        // An index the change dropped is the table's again.
        let mut dropped = self.dropped_uncommitted.lock();
        let (back, still): (Vec<Arc<Index>>, Vec<Arc<Index>>) = dropped
            .drain(..)
            .partition(|i| def.indexes.iter().any(|d| d.name == i.def.name));
        *dropped = still;
        if !back.is_empty() {
            let mut indexes = self.indexes.write();
            let mut all: Vec<Arc<Index>> = indexes.to_vec();
            all.extend(back);
            *indexes = all.into();
        }
    }

    /// A transaction block's CREATE INDEX: the index (built, complete from
    /// `valid_from`) is the table's from now, with `new_def`, until the transaction
    /// commits or `undo_def` takes it back; a checkpoint meanwhile stores neither.
    pub fn add_index_uncommitted(
        &self,
        new_def: TableDef,
        def: IndexDef,
        entries: Table,
        valid_from: Lsn,
    ) {
        let mut committed = self.committed_def.lock();
        if committed.is_none() {
            *committed = Some(self.def());
        }
        self.add_index(new_def, def, entries, valid_from);
    }

    /// The indexes of the committed definition, in its order (what a checkpoint
    /// stores the roots of).
    pub fn committed_indexes(&self) -> Vec<Arc<Index>> {
        let committed = self.committed_def();
        // A dropped index first: the block may have made another of its name since.
        let mut indexes: Vec<Arc<Index>> = self.dropped_uncommitted.lock().to_vec();
        indexes.extend(self.indexes().iter().cloned());
        committed
            .indexes
            .iter()
            .filter_map(|d| indexes.iter().find(|i| i.def.name == d.name).cloned())
            .collect()
    }

    /// The bytes of the table's pages (its rows, in primary key order).
    pub fn size_bytes(&self) -> Result<u64> {
        Ok(self.tree.page_count(&self.pool)? * super::page::PAGE_BYTES as u64)
    }

    /// The bytes of the pages of its index `name`, if it has one so named.
    pub fn index_size_bytes(&self, name: &str) -> Result<Option<u64>> {
        match self.index(name) {
            Some(index) => Ok(Some(index.entries().size_bytes()?)),
            None => Ok(None),
        }
    }

    /// The bytes of the pages of all its secondary indexes.
    pub fn indexes_size_bytes(&self) -> Result<u64> {
        let mut total = 0;
        for index in self.indexes().iter() {
            total += index.entries().size_bytes()?;
        }
        Ok(total)
    }

    /// The tree's root page (for the checkpoint's catalog image).
    pub fn root(&self) -> PageId {
        self.tree.root
    }

    /// A fresh hidden row id for a table without a primary key.
    pub fn next_row_id(&self) -> u64 {
        self.next_row_id.fetch_add(1, Ordering::Relaxed)
    }

    /// Hidden row ids up to `last` are taken (the table's primary key was dropped and its
    /// rows numbered).
    pub fn continue_row_ids_after(&self, last: u64) {
        self.next_row_id.fetch_max(last + 1, Ordering::Relaxed);
    }

    /// The next hidden row id that would be handed out.
    pub fn peek_next_row_id(&self) -> u64 {
        self.next_row_id.load(Ordering::Relaxed)
    }

    /// After recovery: continue hidden row ids after the largest one present.
    pub fn restore_next_row_id(&self) -> Result<()> {
        let mut last = None;
        self.tree.scan(
            &self.pool,
            (Bound::Unbounded, Bound::Unbounded),
            true,
            &mut |key, _, _| {
                last = Some(key.to_vec());
                Ok(false)
            },
        )?;
        if let Some(Ok(bytes)) = last.map(<[u8; 8]>::try_from) {
            self.next_row_id
                .fetch_max(u64::from_be_bytes(bytes) + 1, Ordering::Relaxed);
        }
        Ok(())
    }

    fn check_live(&self) -> Result<()> {
        if self.destroyed.load(Ordering::Acquire) {
            return Err(Error::new(
                SqlState::UNDEFINED_TABLE,
                format!("relation \"{}\" was dropped", self.def().name),
            ));
        }
        Ok(())
    }

    /// Whether the table's drop is final ([`Table::destroy`]).
    pub fn is_destroyed(&self) -> bool {
        self.destroyed.load(Ordering::Acquire)
    }

    /// The LSN of the last rewrite that dropped older versions (0: none since start).
    pub fn rewritten_lsn(&self) -> Lsn {
        Lsn(self.rewritten_lsn.load(Ordering::Acquire))
    }

    /// A stored version's commit LSN: LSN 0 marks a bulk-loaded row.
    fn effective(&self, lsn: Lsn) -> Lsn {
        if lsn == BULK_ROW_LSN {
            Lsn(self.bulk_lsn.load(Ordering::Acquire))
        } else {
            lsn
        }
    }

    /// Decode a row image of this table (one a bulk load holds, say).
    pub fn decode_image(&self, image: &[u8]) -> Result<Row> {
        self.decode(image)
    }

    /// The buffer pool the table's pages are in.
    pub fn pool(&self) -> &Arc<BufferPool> {
        &self.pool
    }

    /// The column types of the current definition.
    pub fn column_types(&self) -> Arc<[DataType]> {
        self.def.read().1.clone()
    }

    /// What rows written before each column was added hold in it.
    pub fn column_missing(&self) -> Arc<[Value]> {
        self.def.read().2.clone()
    }

    fn decode(&self, image: &[u8]) -> Result<Row> {
        let (types, missing) = {
            let def = self.def.read();
            (def.1.clone(), def.2.clone())
        };
        Ok(Arc::from(types::decode_row_filled(
            image, &types, &missing,
        )?))
    }

    /// The row visible at `snapshot` under `key`, if any.
    pub fn get(&self, key: &[u8], snapshot: Lsn) -> Result<Option<Row>> {
        let _tree = self.tree_lock.read_recursive();
        self.check_live()?;
        match self.tree.get(&self.pool, key)? {
            Some((lsn, image)) if self.effective(lsn) <= snapshot => {
                image.map(|i| self.decode(&i)).transpose()
            }
            _ => {
                let older = self.older.shard(key);
                older
                    .chains
                    .get(key)
                    .and_then(|chain| valid_at(chain, snapshot))
                    .map(|i| self.decode(i))
                    .transpose()
            }
        }
    }

    /// The newest committed version under `key` (a deletion or not), whatever its LSN.
    pub fn latest(&self, key: &[u8]) -> Result<Option<Version>> {
        let _tree = self.tree_lock.read_recursive();
        self.check_live()?;
        if let Some((lsn, image)) = self.tree.get(&self.pool, key)? {
            let row = image.map(|i| self.decode(&i)).transpose()?;
            let lsn = self.effective(lsn);
            return Ok(Some(Version { lsn, row }));
        }
        // Deleted: the deletion's LSN is where its last row was superseded.
        Ok(self.older.shard(key).chains.get(key).and_then(|chain| {
            chain.first().map(|v| Version {
                lsn: v.superseded,
                row: None,
            })
        }))
    }

    /// Whether the row visible at `snapshot` under `key` still lives in the newest version:
    /// every version since continues it (an update), none ends it (a deletion, perhaps
    /// followed by a new row under the same key, which is another row, as a new tuple is
    /// in PostgreSQL). False when no row is visible at `snapshot`.
    ///
    /// The caller's snapshot must be published (`TxnManager::snapshot`): versions
    /// superseded after it are then kept, so the chain from it to the newest is whole.
    pub fn same_row_since(&self, key: &[u8], snapshot: Lsn) -> Result<bool> {
        let _tree = self.tree_lock.read_recursive();
        self.check_live()?;
        let newest = self.tree.get(&self.pool, key)?;
        let older = self.older.shard(key);
        let chain = older.chains.get(key).map_or(&[][..], Vec::as_slice);
        let (newest_lsn, newest_live) = match &newest {
            Some((lsn, image)) => (Some(self.effective(*lsn)), image.is_some()),
            None => (None, false),
        };
        if newest_lsn.is_some_and(|lsn| lsn <= snapshot) {
            return Ok(newest_live);
        }
        // Follow the versions from the one the snapshot saw, each beginning where the one
        // before it was superseded. The chain is newest first, and short.
        let Some(mut version) = chain
            .iter()
            .find(|v| v.lsn <= snapshot && snapshot < v.superseded)
        else {
            return Ok(false);
        };
        loop {
            if version.ended {
                return Ok(false);
            }
            if newest_lsn == Some(version.superseded) {
                return Ok(newest_live);
            }
            match chain.iter().find(|v| v.lsn == version.superseded) {
                Some(next) => version = next,
                None => return Ok(false),
            }
        }
    }

    /// The commit at `lsn`, just installed, deleted the rows under `keys` and inserted
    /// new ones under the same keys: mark where the old rows ended, so that a transaction
    /// that saw one does not take the new row for it ([`Table::same_row_since`]).
    pub fn end_rows<'k>(&self, lsn: Lsn, keys: impl Iterator<Item = &'k Key>) {
        for key in keys {
            if let Some(v) = self
                .older
                .shard(key)
                .chains
                .get_mut(key)
                .and_then(|chain| chain.iter_mut().find(|v| v.superseded == lsn))
            {
                v.ended = true;
            }
        }
    }

    /// Whether a version in `range` was committed after `snapshot`: a row inserted,
    /// changed or deleted since (for a SERIALIZABLE commit's validation). The snapshot
    /// must be published, so versions deleted after it are still kept.
    pub fn changed_since(
        &self,
        range: (Bound<&[u8]>, Bound<&[u8]>),
        snapshot: Lsn,
    ) -> Result<bool> {
        let _tree = self.tree_lock.read_recursive();
        self.check_live()?;
        let deleted_since = self.older.any_in_range(range, |chain| {
            chain.first().is_some_and(|v| v.superseded > snapshot)
        });
        if deleted_since {
            return Ok(true);
        }
        let mut changed = false;
        self.tree.scan(&self.pool, range, false, &mut |_, lsn, _| {
            changed = self.effective(lsn) > snapshot;
            Ok(!changed)
        })?;
        Ok(changed)
    }

    /// Visit rows visible at `snapshot` with keys in `range`, in key order (reversed when
    /// `reverse`), until `visit` returns false: the tree's versions merged with the older
    /// ones of keys deleted since.
    pub fn scan(
        &self,
        range: (Bound<&[u8]>, Bound<&[u8]>),
        snapshot: Lsn,
        reverse: bool,
        mut visit: impl FnMut(&[u8], &Row) -> bool,
    ) -> Result<()> {
        self.scan_images(range, snapshot, reverse, |key, image| {
            Ok(visit(key, &self.decode(image)?))
        })
    }

    /// Drop the older versions no snapshot at or above `horizon` can see. Installs prune
    /// as they go; a reader that scans the table in batches prunes first, so the versions
    /// a TRUNCATE, a large DELETE or a rebuild left behind, with no writes after it to
    /// prune them, are not copied again by every later batch (each scan copies the older
    /// versions of its range).
    pub fn prune_older_versions(&self, horizon: Lsn) {
        let _tree = stages::read(Stage::TableTree, &self.tree_lock);
        self.older.prune_all(horizon);
    }

    /// [`Table::scan`] with each row as its stored image (`types::encode_row`).
    pub fn scan_images(
        &self,
        range: (Bound<&[u8]>, Bound<&[u8]>),
        snapshot: Lsn,
        reverse: bool,
        mut visit: impl FnMut(&[u8], &[u8]) -> Result<bool>,
    ) -> Result<()> {
        let _tree = self.tree_lock.read_recursive();
        self.check_live()?;
        // A copy: the scan latches pages, and the older versions are never taken before
        // a latch. Keys deleted later are not missing from it (deletions wait for the
        // tree lock); a version replaced later is looked up again below.
        let copied = self.older.copy_range(range, reverse);
        let mut chains = copied.iter().map(|(k, c)| (k, c)).peekable();
        let before = |a: &[u8], b: &[u8]| if reverse { a > b } else { a < b };
        let mut emit = |key: &[u8], image: Option<&[u8]>| -> Result<bool> {
            match image {
                Some(i) => visit(key, i),
                None => Ok(true),
            }
        };
        let finished = self
            .tree
            .scan(&self.pool, range, reverse, &mut |key, lsn, image| {
                // Deleted keys that come before this one.
                while let Some((old_key, chain)) = chains.peek() {
                    if !before(old_key, key) {
                        break;
                    }
                    if !emit(old_key, valid_at(chain, snapshot))? {
                        return Ok(false);
                    }
                    chains.next();
                }
                if chains
                    .peek()
                    .is_some_and(|(old_key, _)| old_key.as_slice() == key)
                {
                    chains.next();
                }
                if self.effective(lsn) <= snapshot {
                    return emit(key, image);
                }
                // Replaced after the snapshot, perhaps after the copy was taken.
                let replaced = self
                    .older
                    .shard(key)
                    .chains
                    .get(key)
                    .and_then(|chain| valid_at(chain, snapshot).map(<[u8]>::to_vec));
                emit(key, replaced.as_deref())
            })?;
        if finished {
            for (key, chain) in chains {
                if !emit(key, valid_at(chain, snapshot))? {
                    break;
                }
            }
        }
        Ok(())
    }

    /// Install committed writes at `lsn`: per key, its row image (`types::encode_row`, as
    /// the commit record holds it) or `None` for a deletion. `horizon` is the oldest snapshot any session may
    /// read at: a replaced version is kept for snapshots only if it is below `lsn`.
    /// An error here leaves the table partly changed: the caller must not go on.
    ///
    /// Versions that change one leaf only are stored under the shared tree lock, so
    /// installs into different leaves, and reads, run side by side; the rest (deletions,
    /// splits, large rows, truncation) then take the tree lock exclusively.
    pub fn install<'a>(
        &self,
        lsn: Lsn,
        writes: impl IntoIterator<Item = (&'a [u8], Option<&'a [u8]>)>,
        truncate: bool,
        horizon: Lsn,
    ) -> Result<()> {
        let mut written = if truncate { 1 << 40 } else { 0u64 };
        let writes = writes.into_iter().inspect(|_| written += 1);
        let indexes = self.indexes.read_recursive();
        let installed = if indexes.is_empty() {
            self.install_rows(lsn, writes, truncate, horizon, None)
        } else {
            let mut changes = Vec::new();
            self.install_rows(lsn, writes, truncate, horizon, Some(&mut changes))
                .and_then(|()| self.install_entries(&indexes, lsn, &changes, truncate, horizon))
        };
        self.changed_rows.fetch_add(written, Ordering::Relaxed);
        installed
    }

    /// The rows' part of [`Table::install`]; each key's images before and after go into
    /// `changes` when the table has indexes.
    fn install_rows<'a>(
        &self,
        lsn: Lsn,
        writes: impl IntoIterator<Item = (&'a [u8], Option<&'a [u8]>)>,
        truncate: bool,
        horizon: Lsn,
        mut changes: Option<&mut Vec<RowChange>>,
    ) -> Result<()> {
        let mut rest = Vec::new();
        if truncate {
            rest.extend(writes);
        } else {
            let _tree = stages::read(Stage::TableTree, &self.tree_lock);
            self.check_live()?;
            self.older.prune_one(horizon);
            for (key, image) in writes {
                let Some(value) = image else {
                    rest.push((key, image));
                    continue;
                };
                let mut before = None;
                let stored = self
                    .tree
                    .put_in_place(&self.pool, key, lsn, value, |previous| {
                        if changes.is_some() {
                            before = Some(previous.as_ref().and_then(|(_, i)| i.clone()));
                        }
                        if let Some(version) = self.superseded(previous, lsn, horizon) {
                            let mut shard = self.older.shard(key);
                            shard.prune(horizon);
                            shard.push(key, version);
                        }
                    })?;
                if stored == InPlace::NeedsExclusive {
                    rest.push((key, image));
                } else if let (Some(changes), Some(before)) = (changes.as_deref_mut(), before) {
                    changes.push((key.to_vec(), before, Some(value.to_vec())));
                }
            }
        }
        if rest.is_empty() && !truncate {
            return Ok(());
        }
        let _tree = stages::write(Stage::TableTree, &self.tree_lock);
        let mut older = self.older.lock_all();
        self.check_live()?;
        if truncate {
            older.prune(horizon);
            self.truncate_locked(&mut older, lsn, horizon)?;
        }
        for (key, image) in rest {
            let previous = match image {
                Some(image) => self.tree.put(&self.pool, key, lsn, Some(image))?,
                None => self.tree.remove(&self.pool, key)?,
            };
            if let Some(changes) = changes.as_deref_mut() {
                let before = previous.as_ref().and_then(|(_, i)| i.clone());
                changes.push((key.to_vec(), before, image.map(<[u8]>::to_vec)));
            }
            if let Some(version) = self.superseded(previous, lsn, horizon) {
                older.push(key, version);
            }
        }
        Ok(())
    }

    /// The indexes' part of [`Table::install`]: per index, the entries of the rows'
    /// old images that their new ones do not have go, and the new ones come, at the
    /// rows' LSN (all of them after a truncation, which truncates the entries too).
    fn install_entries(
        &self,
        indexes: &[Arc<Index>],
        lsn: Lsn,
        changes: &[RowChange],
        truncate: bool,
        horizon: Lsn,
    ) -> Result<()> {
        let column_types = self.column_types();
        let missing = self.column_missing();
        for index in indexes {
            let mut entries: Vec<(Key, Option<&[u8]>)> = Vec::new();
            for (key, before, after) in changes {
                let old = before
                    .as_deref()
                    .map(|i| index.key_of_image(i, &column_types, &missing))
                    .transpose()?;
                let new = after
                    .as_deref()
                    .map(|i| index.key_of_image(i, &column_types, &missing))
                    .transpose()?;
                if old == new && !truncate {
                    continue;
                }
                if let Some(old) = old.filter(|_| !truncate) {
                    entries.push((Index::entry_key(&old, key), None));
                }
                if let Some(new) = new {
                    entries.push((Index::entry_key(&new, key), Some(key.as_slice())));
                }
            }
            if entries.is_empty() && !truncate {
                continue;
            }
            index.entries().install(
                lsn,
                entries.iter().map(|(k, v)| (k.as_slice(), *v)),
                truncate,
                horizon,
            )?;
        }
        Ok(())
    }

    /// Build the entries of index `def` from the newest version of every row, into a
    /// new tree, with the LSN of the newest version read: `Ok(Err(row))` when `def` is
    /// unique and `row` (its leading columns) has the values of a row read before it,
    /// and nothing is kept. The caller keeps writers out (the table's write gate, or
    /// replay).
    pub fn build_index(
        &self,
        def: &IndexDef,
    ) -> Result<std::result::Result<(Table, Lsn), Vec<Value>>> {
        let entries = Index::entries_table(&def.name, self.pool.clone(), None)?;
        let built = self.fill_index(def, &entries);
        match built {
            Ok(Ok(newest)) => Ok(Ok((entries, newest))),
            Ok(Err(row)) => {
                entries.destroy()?;
                Ok(Err(row))
            }
            Err(e) => {
                let _ = entries.destroy();
                Err(e)
            }
        }
    }

    fn fill_index(
        &self,
        def: &IndexDef,
        entries: &Table,
    ) -> Result<std::result::Result<Lsn, Vec<Value>>> {
        let _tree = self.tree_lock.read_recursive();
        self.check_live()?;
        let column_types = self.column_types();
        let missing = self.column_missing();
        let mut duplicate = None;
        let mut newest = Lsn(0);
        self.tree.scan(
            &self.pool,
            (Bound::Unbounded, Bound::Unbounded),
            false,
            &mut |key, lsn, image| {
                let Some(image) = image else { return Ok(true) };
                newest = newest.max(self.effective(lsn));
                let row = types::decode_leading_columns(
                    image,
                    &column_types,
                    def.leading_columns(),
                    &missing,
                )?;
                let index_key = def.key_of(&row);
                if def.unique && !def.has_null(&row) {
                    let mut taken = false;
                    entries.scan_images(
                        (Bound::Included(&index_key[..]), Bound::Unbounded),
                        Lsn(u64::MAX),
                        false,
                        |entry, _| {
                            taken = entry.starts_with(&index_key);
                            Ok(false)
                        },
                    )?;
                    if taken {
                        duplicate = Some(row);
                        return Ok(false);
                    }
                }
                let entry = Index::entry_key(&index_key, key);
                entries.install(Lsn(0), [(&entry[..], Some(key))], false, Lsn(0))?;
                Ok(true)
            },
        )?;
        Ok(match duplicate {
            Some(row) => Err(row),
            None => Ok(newest),
        })
    }

    /// Add index `def`, whose entries `entries` were built by [`Table::build_index`]
    /// with writers kept out since, complete for snapshots from `lsn`; the definition
    /// becomes `new_def`.
    pub fn add_index(&self, new_def: TableDef, def: IndexDef, entries: Table, lsn: Lsn) {
        let mut indexes = self.indexes.write();
        let mut added: Vec<Arc<Index>> = indexes.to_vec();
        added.push(Arc::new(Index::new(def, entries, lsn)));
        *indexes = added.into();
        self.set_def(new_def);
    }

    /// Drop the index named `name` (its pages are freed); the definition becomes
    /// `new_def`.
    pub fn drop_index(&self, new_def: TableDef, name: &str) -> Result<()> {
        let mut indexes = self.indexes.write();
        let (dropped, kept): (Vec<Arc<Index>>, Vec<Arc<Index>>) =
            indexes.iter().cloned().partition(|i| i.def.name == name);
        *indexes = kept.into();
        drop(indexes);
        self.set_def(new_def);
        for index in dropped {
            index.entries().destroy()?;
        }
        Ok(())
    }

    /// Make the indexes those of `new_def` (replay of a change of indexes at `lsn`):
    /// those it no longer names are dropped, new ones built.
    pub fn set_indexes(&self, new_def: TableDef, lsn: Lsn) -> Result<()> {
        let current = self.indexes();
        for index in current.iter() {
            if !new_def.indexes.iter().any(|d| d.name == index.def.name) {
                let mut def = (*self.def()).clone();
                def.indexes.retain(|d| d.name != index.def.name);
                self.drop_index(def, &index.def.name)?;
            }
        }
        for def in &new_def.indexes {
            if self.index(&def.name).is_none() {
                // Replay builds what the statement built: the log has no duplicates.
                let (entries, newest) = match self.build_index(&IndexDef {
                    unique: false,
                    ..def.clone()
                })? {
                    Ok(built) => built,
                    Err(_) => return Err(Error::internal("a non-unique build found a duplicate")),
                };
                self.add_index((*self.def()).clone(), def.clone(), entries, lsn.max(newest));
            }
        }
        self.set_def(new_def);
        Ok(())
    }

    /// Rebuild every index from the rows (after a bulk load or a new primary key, which
    /// change rows without an install), complete from `lsn`, into `current`: the
    /// indexes, held exclusively by the caller.
    fn rebuild_indexes_locked(&self, current: &mut Arc<[Arc<Index>]>, lsn: Lsn) -> Result<()> {
        if current.is_empty() {
            return Ok(());
        }
        let mut rebuilt = Vec::new();
        for index in current.iter() {
            let def = IndexDef {
                unique: false,
                ..index.def.clone()
            };
            let (entries, newest) = match self.build_index(&def)? {
                Ok(built) => built,
                Err(_) => return Err(Error::internal("a non-unique build found a duplicate")),
            };
            index.entries().destroy()?;
            rebuilt.push(Arc::new(Index::new(
                index.def.clone(),
                entries,
                lsn.max(newest),
            )));
        }
        *current = rebuilt.into();
        Ok(())
    }

    /// A key's version `previous` (if any) was replaced or deleted at `lsn`: its row, as
    /// the older version to keep, if a snapshot below `lsn` may read it.
    fn superseded(
        &self,
        previous: Option<(Lsn, Option<Vec<u8>>)>,
        lsn: Lsn,
        horizon: Lsn,
    ) -> Option<OldVersion> {
        let (previous_lsn, previous_image) = previous?;
        let previous_lsn = self.effective(previous_lsn);
        assert!(
            previous_lsn <= lsn,
            "versions of a key must be installed in LSN order"
        );
        match (previous_image, horizon < lsn) {
            (Some(image), true) => Some(OldVersion {
                lsn: previous_lsn,
                superseded: lsn,
                image,
                ended: false,
            }),
            _ => None,
        }
    }

    /// Every version in the tree, with its commit LSN, in key order (for truncation and
    /// adoption, which rebuild the tree around them).
    fn stored_versions(&self) -> Result<Vec<StoredVersion>> {
        let mut versions = Vec::new();
        self.tree.scan(
            &self.pool,
            (Bound::Unbounded, Bound::Unbounded),
            false,
            &mut |key, lsn, image| {
                versions.push((key.to_vec(), self.effective(lsn), image.map(<[u8]>::to_vec)));
                Ok(true)
            },
        )?;
        Ok(versions)
    }

    /// Truncation at `lsn` takes no row locks, so a later commit may already have
    /// installed a version of some key: those stay, and everything older ends at `lsn`.
    fn truncate_locked(&self, older: &mut AllVersions, lsn: Lsn, horizon: Lsn) -> Result<()> {
        for chain in older.chains_mut() {
            for v in chain.iter_mut() {
                if v.lsn < lsn && lsn < v.superseded {
                    v.superseded = lsn;
                }
            }
        }
        let rows = self.stored_versions()?;
        let later_survive = rows.iter().any(|(_, v, _)| *v > lsn);
        if !later_survive {
            self.tree.clear(&self.pool)?;
        }
        for (key, version_lsn, image) in rows {
            if version_lsn > lsn {
                continue;
            }
            if later_survive {
                self.tree.remove(&self.pool, &key)?;
            }
            if let (Some(image), true) = (image, horizon < lsn) {
                older.push(
                    &key,
                    OldVersion {
                        lsn: version_lsn,
                        superseded: lsn,
                        image,
                        ended: false,
                    },
                );
            }
        }
        Ok(())
    }

    /// Take the rows of a bulk load committed at `lsn` (its private tree `bulk`), after
    /// the same commit truncated (or created) the table. Versions other commits installed
    /// meanwhile (neither takes a table lock) stay: later ones over the load's rows,
    /// earlier ones only where the load has no row.
    pub fn adopt(&self, lsn: Lsn, bulk: BTree, horizon: Lsn) -> Result<()> {
        let mut indexes = self.indexes.write();
        self.adopt_rows(lsn, bulk, horizon)?;
        self.rebuild_indexes_locked(&mut indexes, lsn)
    }

    fn adopt_rows(&self, lsn: Lsn, bulk: BTree, horizon: Lsn) -> Result<()> {
        let _tree = stages::write(Stage::TableTree, &self.tree_lock);
        let mut older = self.older.lock_all();
        self.check_live()?;
        let later = self.stored_versions()?;
        self.tree.clear(&self.pool)?;
        self.tree.adopt(&self.pool, bulk)?;
        self.bulk_lsn.store(lsn.0, Ordering::Release);
        for (key, version_lsn, image) in later {
            if version_lsn <= lsn && self.tree.get(&self.pool, &key)?.is_some() {
                continue;
            }
            let previous = match &image {
                Some(image) => self.tree.put(&self.pool, &key, version_lsn, Some(image))?,
                None => self.tree.remove(&self.pool, &key)?,
            };
            if let (Some((_, Some(image))), true) = (previous, horizon < version_lsn) {
                older.push(
                    &key,
                    OldVersion {
                        lsn,
                        superseded: version_lsn,
                        image,
                        ended: false,
                    },
                );
            }
        }
        Ok(())
    }

    /// Replace every row with those of `rebuilt`, a bulk-loaded tree committed at `lsn`
    /// (ALTER TABLE ... ADD PRIMARY KEY: the rows under their new keys). Older versions
    /// are dropped, as PostgreSQL's table rewrites are not MVCC-safe either. The caller
    /// holds the checkpoint barrier and the table's closed write gate (no other version
    /// is being installed), or is replaying the log.
    pub fn replace(&self, lsn: Lsn, rebuilt: BTree) -> Result<()> {
        let mut indexes = self.indexes.write();
        {
            let _tree = stages::write(Stage::TableTree, &self.tree_lock);
            let mut older = self.older.lock_all();
            self.check_live()?;
            self.rewritten_lsn.fetch_max(lsn.0, Ordering::AcqRel);
            older.clear();
            self.tree.clear(&self.pool)?;
            self.tree.adopt(&self.pool, rebuilt)?;
            self.bulk_lsn.store(lsn.0, Ordering::Release);
        }
        self.rebuild_indexes_locked(&mut indexes, lsn)
    }

    /// Re-key every row visible at `lsn` with `key_of` (ALTER TABLE ... ADD PRIMARY KEY),
    /// committed at `lsn`; older versions are dropped. The rows go into a new tree
    /// through the buffer pool, so a table larger than memory can be re-keyed. The caller
    /// holds the checkpoint barrier and has ruled out duplicate keys.
    pub fn rekey(&self, lsn: Lsn, key_of: &dyn Fn(&Row) -> Key) -> Result<()> {
        let rebuilt = BTree::create(&self.pool)?;
        let mut cursor = AppendCursor::default();
        let mut image = Vec::new();
        let column_types = self.column_types();
        let mut failed = Ok(());
        self.scan(
            (Bound::Unbounded, Bound::Unbounded),
            lsn,
            false,
            |_, row| {
                image.clear();
                types::encode_row(row, &column_types, &mut image);
                match rebuilt.put_ascending(&self.pool, &mut cursor, &key_of(row), lsn, &image) {
                    Ok(None) => true,
                    Ok(Some(_)) => {
                        failed = Err(Error::internal("duplicate key while re-keying a table"));
                        false
                    }
                    Err(e) => {
                        failed = Err(e);
                        false
                    }
                }
            },
        )?;
        failed?;
        let mut indexes = self.indexes.write();
        {
            let _tree = stages::write(Stage::TableTree, &self.tree_lock);
            let mut older = self.older.lock_all();
            self.check_live()?;
            self.rewritten_lsn.fetch_max(lsn.0, Ordering::AcqRel);
            older.clear();
            self.tree.clear(&self.pool)?;
            self.tree.adopt(&self.pool, rebuilt)?;
        }
        self.rebuild_indexes_locked(&mut indexes, lsn)
    }

    /// The table's drop is final: free its pages. Later reads fail with 42P01.
    pub fn destroy(&self) -> Result<()> {
        let _tree = stages::write(Stage::TableTree, &self.tree_lock);
        let mut older = self.older.lock_all();
        if self.destroyed.swap(true, Ordering::AcqRel) {
            return Ok(());
        }
        older.clear();
        for index in self.indexes().iter() {
            index.entries().destroy()?;
        }
        self.tree.destroy(&self.pool)
    }

    /// Verify the tree (tests and recovery checks); returns the number of keys stored.
    pub fn check(&self) -> Result<usize> {
        let _tree = stages::write(Stage::TableTree, &self.tree_lock);
        self.check_live()?;
        self.tree.check(&self.pool)
    }
}
