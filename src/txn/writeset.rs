//! A transaction's private, uncommitted writes: per table, the after-image of every key it
//! wrote (`None` = deleted), the increments it deferred to its commit (see
//! `Want::Increment`), whether it truncated the table, and the rows a COPY
//! loaded straight into pages (a bulk load, for a table it created or truncated).
//!
//! Deferred increments never reach the commit record as such: before the commit, the
//! session applies them to each row's latest version and they become after-images.
//!
//! While a savepoint is open the write set keeps a journal: every change to a key's
//! after-image, a key's increments or a table's truncation records what it replaced, so
//! ROLLBACK TO SAVEPOINT puts back exactly the state the savepoint saw
//! ([`WriteSet::rollback_to`]). Rows a COPY loads into a bulk load's pages are not
//! journaled: a bulk load neither starts nor grows while a savepoint is open.
//!
//! A large transaction's after-images do not stay in memory: once the rows held in memory
//! pass `write_set_work_mem`, every table's are moved into its spill tree
//! (`storage::spill`), and later changes gather in memory again on top of it. A key's
//! entry in memory, if any, is newer than its spilled one. Spilling waits while a savepoint
//! is open: the journal describes the rows in memory, so they stay there until the
//! savepoint is released or rolled back.

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::ops::Bound;
use std::sync::Arc;

use rustc_hash::FxHashMap;

use crate::error::Result;
use crate::storage::spill::SpillTree;
use crate::storage::write_gate::{ClosedGate, Writer};
use crate::storage::{BulkLoad, Key, Row, Table, TableId};
use crate::types::{self, ArithOp, Value};

/// Spilled entries a cursor over a spill tree reads at a time.
const SPILL_BATCH_ROWS: usize = 256;

/// One `SET column = column <op> operand` (or `operand <op> column`). In a plan the
/// operand is an expression; deferred in a write set, its value.
#[derive(Clone, Debug)]
pub struct Increment<Operand = Value> {
    pub column: usize,
    pub op: ArithOp,
    pub operand: Operand,
    pub operand_first: bool,
}

impl<Operand> Increment<Operand> {
    /// The same increment with another operand (its value, for a planned one).
    pub fn with_operand<O>(&self, operand: O) -> Increment<O> {
        Increment {
            column: self.column,
            op: self.op,
            operand,
            operand_first: self.operand_first,
        }
    }
}

pub struct TableWrites {
    pub table: Arc<Table>,
    /// The table was truncated by this transaction: committed rows are invisible to it.
    pub truncated: bool,
    pub rows: BTreeMap<Key, Option<Row>>,
    /// What `rows` costs in memory, roughly ([`row_bytes`]).
    mem_bytes: usize,
    /// After-images moved out of memory (see the module's docs): older than `rows`.
    pub spill: Option<Arc<SpillTree>>,
    /// Keys whose committed row this transaction deleted and then inserted a new row
    /// under: another row, not a new version of the old one (`Table::end_rows`).
    pub reborn: BTreeSet<Key>,
    /// Keys held with deferred increments (never also in `rows`), in statement order.
    pub increments: BTreeMap<Key, Vec<Increment>>,
    /// Rows COPY loaded into private pages; then `rows` stays empty (other changes to
    /// the table in the same transaction are refused).
    pub bulk: Option<BulkLoad>,
}

#[derive(Default)]
pub struct WriteSet {
    pub tables: FxHashMap<TableId, TableWrites>,
    /// The write gates this transaction passed, one per table its statements write (or
    /// drop or truncate); it leaves them when the write set is dropped, after its commit
    /// is installed or when it rolls back.
    pub writers: Vec<Writer>,
    /// What each change replaced, oldest first, while a savepoint is open (see the
    /// module's docs); None otherwise.
    journal: Option<Vec<Replaced>>,
    /// The gates of the tables this transaction drops or truncates, closed until it ends
    /// (after `writers`, so a gate it was inside is left before it is closed).
    pub closed: Vec<ClosedGate>,
    /// `write_set_work_mem`: past this many bytes of rows in memory, they spill.
    spill_after_bytes: Option<usize>,
}

/// What one change to a write set replaced (see [`WriteSet::rollback_to`]).
enum Replaced {
    /// The table had no entry yet.
    Table(TableId),
    /// A key's after-image (None: the key had none).
    Row(TableId, Key, Option<Option<Row>>),
    /// A key's deferred increments (None: it had none).
    Increments(TableId, Key, Option<Vec<Increment>>),
    /// A truncation: the table's truncated flag and after-images before it.
    Truncation(
        TableId,
        bool,
        BTreeMap<Key, Option<Row>>,
        Option<Arc<SpillTree>>,
    ),
    /// A key became reborn (see [`TableWrites::reborn`]).
    Reborn(TableId, Key),
}

/// Keys of one table that just moved into its spill tree.
pub struct Spilled {
    pub table: TableId,
    pub tree: Arc<SpillTree>,
    pub keys: Vec<Key>,
}

/// A point in a write set's journal to roll back to.
#[derive(Clone, Copy, Debug)]
pub struct JournalMark(usize);

impl WriteSet {
    pub fn is_empty(&self) -> bool {
        self.tables.is_empty()
    }

    pub fn table(&self, id: TableId) -> Option<&TableWrites> {
        self.tables.get(&id)
    }

    pub fn table_mut(&mut self, table: &Arc<Table>) -> &mut TableWrites {
        if let (Some(journal), false) = (&mut self.journal, self.tables.contains_key(&table.id)) {
            journal.push(Replaced::Table(table.id));
        }
        self.tables.entry(table.id).or_insert_with(|| TableWrites {
            table: table.clone(),
            truncated: false,
            rows: Default::default(),
            mem_bytes: 0,
            spill: None,
            reborn: Default::default(),
            increments: Default::default(),
            bulk: None,
        })
    }

    /// Start (or go on) keeping the journal, for a savepoint: returns where it stands.
    pub fn mark(&mut self) -> JournalMark {
        JournalMark(self.journal.get_or_insert_with(Vec::new).len())
    }

    /// No savepoint is open any more: stop keeping the journal.
    pub fn forget_marks(&mut self) {
        self.journal = None;
    }

    /// Whether a savepoint is open (the journal is kept).
    pub fn has_marks(&self) -> bool {
        self.journal.is_some()
    }

    /// Undo every change made since `mark`, newest first.
    pub fn rollback_to(&mut self, mark: JournalMark) {
        let Some(journal) = self.journal.as_mut() else {
            return;
        };
        let undone = journal.split_off(mark.0.min(journal.len()));
        for replaced in undone.into_iter().rev() {
            match replaced {
                Replaced::Table(id) => {
                    self.tables.remove(&id);
                }
                Replaced::Row(id, key, before) => {
                    if let Some(w) = self.tables.get_mut(&id) {
                        match before {
                            Some(row) => w.rows.insert(key, row),
                            None => w.rows.remove(&key),
                        };
                    }
                }
                Replaced::Increments(id, key, before) => {
                    if let Some(w) = self.tables.get_mut(&id) {
                        match before {
                            Some(incs) => w.increments.insert(key, incs),
                            None => w.increments.remove(&key),
                        };
                    }
                }
                Replaced::Reborn(id, key) => {
                    if let Some(w) = self.tables.get_mut(&id) {
                        w.reborn.remove(&key);
                    }
                }
                Replaced::Truncation(id, truncated, rows, spill) => {
                    if let Some(w) = self.tables.get_mut(&id) {
                        w.truncated = truncated;
                        w.rows = rows;
                        w.spill = spill;
                    }
                }
            }
        }
        for w in self.tables.values_mut() {
            w.mem_bytes = w.rows.iter().map(|(k, r)| row_bytes(k, r)).sum();
        }
    }

    /// Take `key`'s deferred increments (to replace or materialize them).
    pub fn take_increments(&mut self, table: &Arc<Table>, key: &[u8]) -> Option<Vec<Increment>> {
        let taken = self.table_mut(table).increments.remove(key);
        if let (Some(journal), Some(incs)) = (&mut self.journal, &taken) {
            journal.push(Replaced::Increments(
                table.id,
                key.to_vec(),
                Some(incs.clone()),
            ));
        }
        taken
    }

    /// Hold `key` with deferred increments `incs` (it has none now).
    pub fn set_increments(&mut self, table: &Arc<Table>, key: Key, incs: Vec<Increment>) {
        let w = self.table_mut(table);
        debug_assert!(!w.increments.contains_key(&key));
        let before = w.increments.insert(key.clone(), incs);
        if let Some(journal) = &mut self.journal {
            journal.push(Replaced::Increments(table.id, key, before));
        }
    }

    /// TRUNCATE: committed rows are invisible to this transaction from now on, and its
    /// own after-images and bulk load are dropped.
    pub fn truncate(&mut self, table: &Arc<Table>) {
        let w = self.table_mut(table);
        let rows = std::mem::take(&mut w.rows);
        let spill = w.spill.take();
        w.mem_bytes = 0;
        let truncated = std::mem::replace(&mut w.truncated, true);
        w.bulk = None;
        if let Some(journal) = &mut self.journal {
            journal.push(Replaced::Truncation(table.id, truncated, rows, spill));
        }
    }

    /// The table's rows are to be replaced at commit by those of `load` (its primary key
    /// dropped in a transaction block): a TRUNCATE, then a bulk load. No savepoint is open.
    pub fn replace_rows(&mut self, table: &Arc<Table>, load: BulkLoad) {
        debug_assert!(!self.has_marks());
        self.truncate(table);
        self.table_mut(table).bulk = Some(load);
    }

    /// The table's bulk load gives way to `load`, the same rows under another key (a
    /// primary key added to a table the transaction created and loaded by COPY). No
    /// savepoint is open.
    pub fn replace_bulk(&mut self, table: &Arc<Table>, load: BulkLoad) {
        debug_assert!(!self.has_marks());
        let w = self.table_mut(table);
        debug_assert!(w.bulk.is_some() && w.has_no_rows());
        w.bulk = Some(load);
    }

    /// Our own version of a key, if we wrote it: `Some(None)` means we deleted it.
    pub fn get(&self, id: TableId, key: &[u8]) -> Result<Option<Option<Row>>> {
        let Some(w) = self.tables.get(&id) else {
            return Ok(None);
        };
        w.get(key)
    }

    /// Rows past `write_set_work_mem` (in bytes) spill out of memory.
    pub fn spill_after(&mut self, bytes: usize) {
        self.spill_after_bytes = Some(bytes);
    }

    /// Whether some of the after-images are spilled.
    pub fn is_spilled(&self) -> bool {
        self.tables.values().any(|w| w.spill.is_some())
    }

    /// Store our own version of a key (`None`: deleted). Returns what spilled, if this
    /// put took the rows in memory past `write_set_work_mem`: the row locks of those keys
    /// move to the spill trees too, which is why statements store rows through
    /// `Transaction::put`, never here.
    pub fn put(&mut self, table: &Arc<Table>, key: Key, row: Option<Row>) -> Result<Vec<Spilled>> {
        let journaling = self.journal.is_some();
        let inserts = row.is_some();
        let w = self.table_mut(table);
        let added = row_bytes(&key, &row);
        // A key deleted in a spilled entry and inserted again now is reborn, as below.
        let spilled_deletion = match (&w.spill, inserts && !w.truncated) {
            (Some(spill), true) if spill.has_deletions() && !w.rows.contains_key(&key) => {
                spill.get(&key)? == Some(None)
            }
            _ => false,
        };
        let (before, reborn) = match w.rows.entry(key) {
            std::collections::btree_map::Entry::Vacant(slot) => {
                let key = journaling.then(|| slot.key().clone());
                let reborn = (spilled_deletion && w.reborn.insert(slot.key().clone()))
                    .then(|| slot.key().clone());
                slot.insert(row);
                w.mem_bytes += added;
                (key.map(|k| (k, None)), reborn)
            }
            std::collections::btree_map::Entry::Occupied(mut slot) => {
                w.mem_bytes += added;
                w.mem_bytes = w
                    .mem_bytes
                    .saturating_sub(row_bytes(slot.key(), slot.get()));
                let before = std::mem::replace(slot.get_mut(), row);
                // Deleted, then inserted again: another row under the same key.
                let reborn = (inserts
                    && before.is_none()
                    && !w.truncated
                    && w.reborn.insert(slot.key().clone()))
                .then(|| slot.key().clone());
                let key = journaling.then(|| (slot.key().clone(), Some(before)));
                (key, reborn)
            }
        };
        if let Some(journal) = &mut self.journal {
            if let Some(key) = reborn {
                journal.push(Replaced::Reborn(table.id, key));
            }
            if let Some((key, before)) = before {
                journal.push(Replaced::Row(table.id, key, before));
            }
            return Ok(Vec::new());
        }
        match self.spill_after_bytes {
            Some(limit) if self.mem_bytes() > limit => self.spill(),
            _ => Ok(Vec::new()),
        }
    }

    /// What the rows held in memory cost, roughly.
    fn mem_bytes(&self) -> usize {
        self.tables.values().map(|w| w.mem_bytes).sum()
    }

    /// Move every table's rows in memory into its spill tree (see the module's docs).
    fn spill(&mut self) -> Result<Vec<Spilled>> {
        debug_assert!(
            self.journal.is_none(),
            "no spilling while a savepoint is open"
        );
        let mut spilled = Vec::new();
        for w in self.tables.values_mut() {
            if w.rows.is_empty() || w.bulk.is_some() {
                continue;
            }
            let spill = match &w.spill {
                Some(spill) => spill.clone(),
                None => {
                    let spill = Arc::new(SpillTree::new(w.table.pool().clone())?);
                    w.spill = Some(spill.clone());
                    spill
                }
            };
            let column_types = w.table.column_types();
            let mut image = Vec::new();
            let mut keys = Vec::with_capacity(w.rows.len());
            for (key, row) in std::mem::take(&mut w.rows) {
                spill.put(&key, encoded(&row, &column_types, &mut image))?;
                keys.push(key);
            }
            w.mem_bytes = 0;
            spilled.push(Spilled {
                table: w.table.id,
                tree: spill,
                keys,
            });
        }
        Ok(spilled)
    }

    /// Rows written, counting rows with deferred increments (a spilled key written again
    /// since counts twice).
    pub fn row_count(&self) -> usize {
        self.tables
            .values()
            .map(|t| t.row_count() + t.increments.len())
            .sum()
    }

    /// Index entries the install may change: two per row and index (one removed, one
    /// added), for the pages promised to the install.
    pub fn index_entry_count(&self) -> usize {
        self.tables
            .values()
            .map(|t| 2 * t.table.indexes().len() * (t.row_count() + t.increments.len()))
            .sum()
    }

    /// Whether this transaction passed the write gate of `table`.
    pub fn passed_gate(&self, table: TableId) -> bool {
        self.writers.iter().any(|w| w.table().id == table) || self.closed_gate(table)
    }

    /// Whether this transaction closed the gate of `table` (DROP TABLE, TRUNCATE).
    pub fn closed_gate(&self, table: TableId) -> bool {
        self.closed.iter().any(|c| c.table().id == table)
    }

    /// Leave the gate of `table` if this transaction is inside, to close it.
    pub fn leave_gate(&mut self, table: TableId) {
        self.writers.retain(|w| w.table().id != table);
    }

    pub fn has_increments(&self) -> bool {
        self.tables.values().any(|t| !t.increments.is_empty())
    }
}

/// What one after-image held in memory costs, roughly: the key, the row's values and what
/// they point to, and the map's share.
fn row_bytes(key: &[u8], row: &Option<Row>) -> usize {
    const ENTRY_BYTES: usize = 96;
    let values = row.as_ref().map_or(0, |r| {
        r.iter()
            .map(|v| {
                std::mem::size_of::<Value>()
                    + match v {
                        Value::Text(t) => t.len(),
                        Value::Bytea(b) => b.len(),
                        _ => 0,
                    }
            })
            .sum()
    });
    ENTRY_BYTES + key.len() + values
}

impl TableWrites {
    /// Our own version of `key`, if we wrote it (`Some(None)`: deleted).
    pub fn get(&self, key: &[u8]) -> Result<Option<Option<Row>>> {
        if let Some(row) = self.rows.get(key) {
            return Ok(Some(row.clone()));
        }
        let Some(spill) = &self.spill else {
            return Ok(None);
        };
        match spill.get(key)? {
            None => Ok(None),
            Some(None) => Ok(Some(None)),
            Some(Some(image)) => Ok(Some(Some(self.table.decode_image(&image)?))),
        }
    }

    /// Whether the transaction wrote no row of the table (a spilled deletion is a row
    /// written).
    pub fn has_no_rows(&self) -> bool {
        self.rows.is_empty() && self.spill.is_none()
    }

    /// Keys written (a spilled key written again since counts twice).
    pub fn row_count(&self) -> usize {
        self.rows.len() + self.spill.as_ref().map_or(0, |s| s.rows() as usize)
    }

    /// Our own after-images with keys in `range`, in key order, in memory and spilled.
    pub fn own_rows<'a>(&'a self, range: (Bound<&'a [u8]>, Bound<&'a [u8]>)) -> OwnRows<'a> {
        OwnRows {
            mem: self.rows.range::<[u8], _>(range).peekable(),
            spilled: VecDeque::new(),
            spill: self.spill.as_deref().map(|spill| SpillCursor {
                spill,
                table: &self.table,
                from: range.0.map(<[u8]>::to_vec),
                to: range.1,
                done: false,
            }),
        }
    }

    /// Every after-image, in key order, encoded (`None`: deleted); false from `visit`
    /// stops. For a commit's pieces and its install.
    pub fn for_each_image(
        &self,
        mut visit: impl FnMut(&[u8], Option<&[u8]>) -> Result<bool>,
    ) -> Result<()> {
        let column_types = self.table.column_types();
        let mut mem = self.rows.iter().peekable();
        let mut image = Vec::new();
        if let Some(spill) = &self.spill {
            let mut from: Option<Vec<u8>> = None;
            loop {
                let lo = match &from {
                    Some(k) => Bound::Excluded(k.as_slice()),
                    None => Bound::Unbounded,
                };
                let batch = spill.batch(lo, Bound::Unbounded, SPILL_BATCH_ROWS)?;
                let Some((last, _)) = batch.last() else { break };
                from = Some(last.clone());
                for (key, spilled) in &batch {
                    while let Some((k, row)) = mem.next_if(|(k, _)| k.as_slice() < key.as_slice()) {
                        if !visit(k, encoded(row, &column_types, &mut image))? {
                            return Ok(());
                        }
                    }
                    // An entry in memory is newer than the spilled one under its key.
                    let go = match mem.next_if(|(k, _)| k.as_slice() == key.as_slice()) {
                        Some((k, row)) => visit(k, encoded(row, &column_types, &mut image))?,
                        None => visit(key, spilled.as_deref())?,
                    };
                    if !go {
                        return Ok(());
                    }
                }
            }
        }
        for (k, row) in mem {
            if !visit(k, encoded(row, &column_types, &mut image))? {
                return Ok(());
            }
        }
        Ok(())
    }
}

/// `row`'s image, encoded into `buf`.
fn encoded<'b>(
    row: &Option<Row>,
    column_types: &[types::DataType],
    buf: &'b mut Vec<u8>,
) -> Option<&'b [u8]> {
    let row = row.as_ref()?;
    buf.clear();
    types::encode_row(row, column_types, buf);
    Some(buf.as_slice())
}

/// A cursor over a spill tree, a batch at a time.
struct SpillCursor<'a> {
    spill: &'a SpillTree,
    table: &'a Table,
    /// Where the next batch starts.
    from: Bound<Vec<u8>>,
    to: Bound<&'a [u8]>,
    done: bool,
}

/// Own after-images in a key range, merged from memory and the spill tree
/// ([`TableWrites::own_rows`]).
pub struct OwnRows<'a> {
    mem: std::iter::Peekable<std::collections::btree_map::Range<'a, Key, Option<Row>>>,
    spilled: VecDeque<(Key, Option<Row>)>,
    spill: Option<SpillCursor<'a>>,
}

impl OwnRows<'_> {
    /// The first spilled entry left, reading the next batch when needed.
    fn spilled_head(&mut self) -> Result<Option<&[u8]>> {
        if self.spilled.is_empty() {
            if let Some(cursor) = self.spill.as_mut().filter(|c| !c.done) {
                let from = match &cursor.from {
                    Bound::Included(k) => Bound::Included(k.as_slice()),
                    Bound::Excluded(k) => Bound::Excluded(k.as_slice()),
                    Bound::Unbounded => Bound::Unbounded,
                };
                let batch = cursor.spill.batch(from, cursor.to, SPILL_BATCH_ROWS)?;
                cursor.done = batch.len() < SPILL_BATCH_ROWS;
                if let Some((last, _)) = batch.last() {
                    cursor.from = Bound::Excluded(last.clone());
                }
                for (key, image) in batch {
                    let row = image.map(|i| cursor.table.decode_image(&i)).transpose()?;
                    self.spilled.push_back((key, row));
                }
            }
        }
        Ok(self.spilled.front().map(|(k, _)| k.as_slice()))
    }

    /// The next after-image if its key is below `bound` (any key, for `None`).
    pub fn next_below(&mut self, bound: Option<&[u8]>) -> Result<Option<(Key, Option<Row>)>> {
        self.spilled_head()?;
        let spilled_key = self.spilled.front().map(|(k, _)| k.as_slice());
        let mem_key = self.mem.peek().map(|(k, _)| k.as_slice());
        // Which comes first, and whether the spilled entry is the same key (then the
        // entry in memory, newer, replaces it).
        let (first, from_mem, same) = match (mem_key, spilled_key) {
            (None, None) => return Ok(None),
            (Some(m), None) => (m, true, false),
            (None, Some(s)) => (s, false, false),
            (Some(m), Some(s)) => (m.min(s), m <= s, m == s),
        };
        if bound.is_some_and(|b| first >= b) {
            return Ok(None);
        }
        if !from_mem {
            return Ok(self.spilled.pop_front());
        }
        if same {
            self.spilled.pop_front();
        }
        let (k, row) = self.mem.next().expect("peeked");
        Ok(Some((k.clone(), row.clone())))
    }

    /// The after-image under exactly `key`, if it is next.
    pub fn take_at(&mut self, key: &[u8]) -> Result<Option<Option<Row>>> {
        let mem_hit = self.mem.peek().is_some_and(|(k, _)| k.as_slice() == key);
        let spilled_hit = self.spilled_head()? == Some(key);
        if spilled_hit {
            let (_, row) = self.spilled.pop_front().expect("peeked");
            if !mem_hit {
                return Ok(Some(row));
            }
        }
        Ok(mem_hit.then(|| self.mem.next().expect("peeked").1.clone()))
    }
}
