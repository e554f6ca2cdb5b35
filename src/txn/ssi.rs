//! SERIALIZABLE: serializable snapshot isolation (SSI) over the dependency graph of the
//! serializable transactions.
//!
//! A SERIALIZABLE transaction runs as REPEATABLE READ does (one snapshot, 40001 on a
//! write conflict) and is also a node of a graph of read-write anti-dependencies
//! ("rw edges"): `R -> W` when R read a key range that W writes, and R's snapshot does
//! not hold W's write (W had not committed, or committed after R's snapshot). Every
//! cycle of dependencies, the mark of a history with no serial order, contains two
//! consecutive rw edges `Tin -> Tpivot -> Tout` in which `Tout` commits first (Fekete
//! et al.). The graph fails one transaction of every such structure with 40001, and only
//! those; so a schedule with one rw edge, or two in the harmless order, commits as in
//! PostgreSQL. When `Tin` is read only, the structure is harmful only if `Tout`
//! committed before `Tin`'s snapshot.
//!
//! Edges are found on both sides, whichever comes second:
//! - a read of a range ([`Ssi::read`]) finds the transactions whose writes in it the
//!   reader cannot see (edge reader -> writer);
//! - a write of a key ([`Ssi::write`]) finds the transactions that read a range holding
//!   it, concurrently with the writer (edge reader -> writer).
//!
//! Invariants:
//! - Each check and each serializable commit run under one lock, and a commit holds it
//!   from its last check through [`Ssi::commit`]'s `start` (the log append): so a
//!   transaction is either not committed, or committed with its LSN known, for every
//!   check that looks at it. Snapshots of serializable transactions are taken under the
//!   same lock, so a transaction's `snapshot_seq` counts exactly the serializable ends
//!   that precede its snapshot.
//! - A transaction is doomed only while it runs; a doomed transaction does nothing more
//!   in the graph: its next read, write or commit fails with 40001.
//! - A committed transaction stays in the graph while a running one is concurrent with
//!   it (its writes are not visible to that one's snapshot, or, read only, it ended after
//!   that snapshot): only such a pair can still gain an edge.
//! - Bounded: each transaction keeps at most [`MAX_RANGES`] ranges per side (more become
//!   whole tables, which is coarser, never wrong), and the graph at most [`MAX_TRACKED`]
//!   transactions: past that, the running transaction with the oldest snapshot, which
//!   keeps the most committed ones alive, is doomed.
//!
//! Only serializable transactions are nodes: as in PostgreSQL, a transaction at a lower
//! level gets no protection from them, nor gives any.

use std::ops::Bound;

use parking_lot::Mutex;
use rustc_hash::{FxHashMap, FxHashSet};

use super::TxnId;
use crate::error::{Error, Result, SqlState};
use crate::stages::{self, Stage};
use crate::storage::{Key, TableId};
use crate::wal::Lsn;

/// Ranges a transaction keeps per side before each table's become the whole table.
pub const MAX_RANGES: usize = 1024;
/// Transactions (running and committed) the graph keeps.
pub const MAX_TRACKED: usize = 16_384;

/// A key range of one table: `lo..hi` with PostgreSQL-style inclusive or exclusive ends.
pub type Range = (Bound<Key>, Bound<Key>);

const WHOLE: Range = (Bound::Unbounded, Bound::Unbounded);

/// The serializable transactions and their rw edges.
#[derive(Default)]
pub struct Ssi {
    graph: Mutex<Graph>,
}

#[derive(Default)]
struct Graph {
    /// Serializable transactions ended by commit so far: each takes the next number.
    last_commit_seq: u64,
    xacts: FxHashMap<TxnId, Xact>,
}

struct Xact {
    snapshot: Lsn,
    /// `last_commit_seq` when the snapshot was taken.
    snapshot_seq: u64,
    declared_read_only: bool,
    /// Set at commit: its place among serializable commits, and its commit's LSN (None
    /// when it wrote nothing).
    commit: Option<(u64, Option<Lsn>)>,
    doomed: bool,
    reads: Ranges,
    writes: Ranges,
    /// Transactions with an rw edge into this one (they read what it writes).
    ins: FxHashSet<TxnId>,
    /// Transactions this one has an rw edge to (it read what they write).
    outs: FxHashSet<TxnId>,
}

/// Key ranges per table, bounded.
#[derive(Default)]
struct Ranges {
    list: Vec<(TableId, Range)>,
}

impl Ranges {
    fn add(&mut self, table: TableId, range: Range) {
        if self
            .list
            .iter()
            .any(|(t, r)| *t == table && (*r == range || *r == WHOLE))
        {
            return;
        }
        self.list.push((table, range));
        if self.list.len() > MAX_RANGES {
            let mut tables: Vec<TableId> = self.list.iter().map(|(t, _)| *t).collect();
            tables.sort();
            tables.dedup();
            self.list = tables.into_iter().map(|t| (t, WHOLE)).collect();
        }
    }

    fn overlaps(&self, table: TableId, range: &Range) -> bool {
        self.list
            .iter()
            .any(|(t, r)| *t == table && ranges_overlap(r, range))
    }

    fn is_empty(&self) -> bool {
        self.list.is_empty()
    }
}

/// Whether two key ranges share a key.
fn ranges_overlap(a: &Range, b: &Range) -> bool {
    below_or_at(&a.0, &b.1) && below_or_at(&b.0, &a.1)
}

/// Whether a range starting at `lo` and one ending at `hi` can share a key.
fn below_or_at(lo: &Bound<Key>, hi: &Bound<Key>) -> bool {
    match (lo, hi) {
        (Bound::Unbounded, _) | (_, Bound::Unbounded) => true,
        (Bound::Included(l), Bound::Included(h)) => l <= h,
        (Bound::Included(l) | Bound::Excluded(l), Bound::Excluded(h))
        | (Bound::Excluded(l), Bound::Included(h)) => l < h,
    }
}

impl Xact {
    fn committed(&self) -> bool {
        self.commit.is_some()
    }

    fn commit_seq(&self) -> u64 {
        self.commit.map_or(u64::MAX, |(seq, _)| seq)
    }

    /// Declared READ ONLY, or committed without writing.
    fn read_only(&self) -> bool {
        self.declared_read_only || (self.committed() && self.writes.is_empty())
    }

    /// Whether `other`'s snapshot was taken after this one ended, so that it saw all of
    /// it (a writer: its commit is visible there).
    fn precedes_snapshot_of(&self, other: &Xact) -> bool {
        match self.commit {
            None => false,
            Some((_, Some(lsn))) => lsn <= other.snapshot,
            Some((seq, None)) => seq <= other.snapshot_seq,
        }
    }
}

fn failure(reason: &str) -> Error {
    Error::new(
        SqlState::SERIALIZATION_FAILURE,
        "could not serialize access due to read/write dependencies among transactions",
    )
    .with_detail(format!("Reason code: {reason}."))
    .with_hint("The transaction might succeed if retried.")
}

impl Graph {
    fn get(&self, id: TxnId) -> Option<&Xact> {
        self.xacts.get(&id)
    }

    /// The earliest commit among those `x` has an rw edge to that committed before it.
    fn earliest_out_committed_first(&self, x: &Xact) -> Option<u64> {
        let own = x.commit_seq();
        x.outs
            .iter()
            .filter_map(|o| self.get(*o))
            .filter_map(|o| o.commit.map(|(seq, _)| seq))
            .filter(|&seq| seq < own)
            .min()
    }

    /// Add the edge `reader -> writer`, first failing one transaction if it would
    /// complete a harmful structure. `me` is the transaction whose read or write found
    /// the edge: an error is its failure; another transaction is doomed instead.
    fn flag(&mut self, reader: TxnId, writer: TxnId, me: TxnId) -> Result<()> {
        let (Some(r), Some(w)) = (self.get(reader), self.get(writer)) else {
            return Ok(());
        };
        if r.outs.contains(&writer) {
            return Ok(());
        }
        if self.harmful(r, w) {
            if writer == me {
                return Err(failure(
                    "Canceled on identification as a pivot, during write",
                ));
            }
            if w.committed() {
                return Err(failure(&format!(
                    "Canceled on conflict out to pivot {}, during read",
                    writer.0
                )));
            }
            if let Some(w) = self.xacts.get_mut(&writer) {
                w.doomed = true;
            }
        }
        if let Some(r) = self.xacts.get_mut(&reader) {
            r.outs.insert(writer);
        }
        if let Some(w) = self.xacts.get_mut(&writer) {
            w.ins.insert(reader);
        }
        Ok(())
    }

    /// Whether the edge `r -> w` completes `r -> w -> t2` or `t0 -> r -> w` with the
    /// last transaction committed first.
    fn harmful(&self, r: &Xact, w: &Xact) -> bool {
        // w committed after an rw edge to a transaction that committed before it.
        if w.committed() && self.earliest_out_committed_first(w).is_some() {
            return true;
        }
        // w is a pivot: r -> w -> t2, t2 committed, before r and w commit, and (r read
        // only) before r's snapshot.
        let pivot_w = w.outs.iter().filter_map(|t| self.get(*t)).any(|t2| {
            let Some((t2_seq, _)) = t2.commit else {
                return false;
            };
            (!r.committed() || t2_seq <= r.commit_seq())
                && (!w.committed() || t2_seq <= w.commit_seq())
                && (!r.read_only() || t2_seq <= r.snapshot_seq)
        });
        if pivot_w {
            return true;
        }
        // r is a pivot: t0 -> r -> w, w committed, t0 not committed before w (and, read
        // only, its snapshot not before w's commit).
        let Some((w_seq, _)) = w.commit else {
            return false;
        };
        !r.read_only()
            && r.ins.iter().filter_map(|t| self.get(*t)).any(|t0| {
                !t0.doomed
                    && (!t0.committed() || t0.commit_seq() >= w_seq)
                    && (!t0.read_only() || t0.snapshot_seq >= w_seq)
            })
    }

    /// Drop every committed transaction no running one is concurrent with, and the
    /// running-only bookkeeping of those gone. `visible` is the visible LSN now: later
    /// snapshots are at least that.
    fn prune(&mut self, visible: Lsn) {
        let running = self.xacts.values().filter(|x| !x.committed() && !x.doomed);
        let (mut min_snapshot, mut min_seq) = (visible, self.last_commit_seq);
        for x in running {
            min_snapshot = min_snapshot.min(x.snapshot);
            min_seq = min_seq.min(x.snapshot_seq);
        }
        let gone: Vec<TxnId> = self
            .xacts
            .iter()
            .filter(|(_, x)| match x.commit {
                None => false,
                Some((_, Some(lsn))) => lsn <= min_snapshot,
                Some((seq, None)) => seq <= min_seq,
            })
            .map(|(id, _)| *id)
            .collect();
        for id in gone {
            self.remove(id);
        }
    }

    fn remove(&mut self, id: TxnId) {
        if let Some(x) = self.xacts.remove(&id) {
            for other in x.ins.iter().chain(x.outs.iter()) {
                if let Some(o) = self.xacts.get_mut(other) {
                    o.ins.remove(&id);
                    o.outs.remove(&id);
                }
            }
        }
    }

    /// Keep the graph within [`MAX_TRACKED`]: doom the running transactions with the
    /// oldest snapshots until pruning frees room.
    fn make_room(&mut self, visible: Lsn) {
        while self.xacts.len() >= MAX_TRACKED {
            self.prune(visible);
            if self.xacts.len() < MAX_TRACKED {
                return;
            }
            let oldest = self
                .xacts
                .iter()
                .filter(|(_, x)| !x.committed() && !x.doomed)
                .min_by_key(|(_, x)| x.snapshot_seq)
                .map(|(id, _)| *id);
            match oldest {
                Some(id) => {
                    if let Some(x) = self.xacts.get_mut(&id) {
                        x.doomed = true;
                    }
                }
                // Every tracked transaction is running and doomed: nothing to free
                // until they end.
                None => return,
            }
        }
    }

    /// The transactions other than `me` (`x`), not doomed, whose work `x`'s snapshot does
    /// not hold, that `pick` chooses.
    fn concurrent_with(&self, me: TxnId, x: &Xact, pick: impl Fn(&Xact) -> bool) -> Vec<TxnId> {
        self.xacts
            .iter()
            .filter(|(id, o)| **id != me && !o.doomed && !o.precedes_snapshot_of(x) && pick(o))
            .map(|(id, _)| *id)
            .collect()
    }

    fn check_not_doomed(&self, me: TxnId, during: &str) -> Result<()> {
        match self.get(me) {
            Some(x) if x.doomed => Err(failure(&format!(
                "Canceled on identification as a pivot, during {during}"
            ))),
            _ => Ok(()),
        }
    }
}

impl Ssi {
    /// A serializable transaction takes its snapshot (with `take_snapshot`, under the
    /// graph's lock) and joins the graph. `visible` is the visible LSN now.
    pub fn begin(
        &self,
        me: TxnId,
        declared_read_only: bool,
        visible: Lsn,
        take_snapshot: impl FnOnce() -> Lsn,
    ) -> Lsn {
        let mut g = stages::lock(Stage::SsiGraph, &self.graph);
        g.make_room(visible);
        let snapshot = take_snapshot();
        let snapshot_seq = g.last_commit_seq;
        g.xacts.insert(
            me,
            Xact {
                snapshot,
                snapshot_seq,
                declared_read_only,
                commit: None,
                doomed: false,
                reads: Ranges::default(),
                writes: Ranges::default(),
                ins: FxHashSet::default(),
                outs: FxHashSet::default(),
            },
        );
        snapshot
    }

    /// `me` reads `range` of `table` at its snapshot: an edge to each transaction whose
    /// writes there it cannot see.
    pub fn read(&self, me: TxnId, table: TableId, range: Range) -> Result<()> {
        let mut g = stages::lock(Stage::SsiGraph, &self.graph);
        g.check_not_doomed(me, "conflict out checking")?;
        let Some(x) = g.get(me) else {
            return Ok(());
        };
        let read_only = x.declared_read_only;
        let writers = g.concurrent_with(me, x, |w| {
            // A read-only reader of a committed writer that had no rw edge to an earlier
            // commit before the reader's snapshot can be placed first.
            let placed_first = read_only
                && w.committed()
                && g.earliest_out_committed_first(w)
                    .is_none_or(|seq| x.snapshot_seq < seq);
            w.writes.overlaps(table, &range) && !placed_first
        });
        for w in writers {
            g.flag(me, w, me)?;
        }
        if let Some(x) = g.xacts.get_mut(&me) {
            x.reads.add(table, range);
        }
        Ok(())
    }

    /// `me` writes `range` of `table` (a key, or the whole table): an edge from each
    /// concurrent transaction that read it.
    pub fn write(&self, me: TxnId, table: TableId, range: Range) -> Result<()> {
        let mut g = stages::lock(Stage::SsiGraph, &self.graph);
        g.check_not_doomed(me, "conflict in checking")?;
        let Some(x) = g.get(me) else {
            return Ok(());
        };
        let readers = g.concurrent_with(me, x, |r| r.reads.overlaps(table, &range));
        for r in readers {
            g.flag(r, me, me)?;
        }
        if let Some(x) = g.xacts.get_mut(&me) {
            x.writes.add(table, range);
        }
        Ok(())
    }

    /// Commit `me`: fail it if it was doomed (giving `input` back); doom a pivot it would
    /// complete a harmful structure with; then run `start` on `input` (the commit's log
    /// append, which returns its LSN when it wrote anything) under the graph's lock. A
    /// transaction that never took a snapshot is not in the graph and just starts.
    pub fn commit<I, T>(
        &self,
        me: TxnId,
        visible: Lsn,
        input: I,
        start: impl FnOnce(I) -> (T, Option<Lsn>),
    ) -> std::result::Result<T, (Error, I)> {
        let mut g = stages::lock(Stage::SsiGraph, &self.graph);
        if g.get(me).is_none() {
            return Ok(start(input).0);
        }
        if let Err(e) = g.check_not_doomed(me, "commit attempt") {
            g.remove(me);
            g.prune(visible);
            return Err((e, input));
        }
        // me is Tout of `far -> near -> me`, committing first: doom the pivot `near`.
        let mut doom = Vec::new();
        if let Some(x) = g.get(me) {
            for near_id in &x.ins {
                let Some(near) = g.get(*near_id).filter(|n| !n.committed() && !n.doomed) else {
                    continue;
                };
                let harmful = near.ins.iter().any(|far_id| {
                    *far_id == me
                        || g.get(*far_id)
                            .is_some_and(|far| !far.committed() && !far.read_only() && !far.doomed)
                });
                if harmful {
                    doom.push(*near_id);
                }
            }
        }
        for id in doom {
            if let Some(near) = g.xacts.get_mut(&id) {
                near.doomed = true;
            }
        }
        g.last_commit_seq += 1;
        let seq = g.last_commit_seq;
        let (out, lsn) = start(input);
        if let Some(x) = g.xacts.get_mut(&me) {
            x.commit = Some((seq, lsn.filter(|_| !x.writes.is_empty())));
            if x.writes.is_empty() {
                x.ins.clear();
            }
        }
        g.prune(visible);
        Ok(out)
    }

    /// `me` rolled back: it leaves the graph with its edges.
    pub fn abort(&self, me: TxnId, visible: Lsn) {
        let mut g = stages::lock(Stage::SsiGraph, &self.graph);
        if g.get(me).is_some() {
            g.remove(me);
            g.prune(visible);
        }
    }

    /// Transactions the graph holds, running and committed (for tests and views).
    pub fn tracked(&self) -> usize {
        stages::lock(Stage::SsiGraph, &self.graph).xacts.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(k: u8) -> Range {
        (Bound::Included(vec![k]), Bound::Included(vec![k]))
    }

    const T: TableId = TableId(1);

    struct Sim {
        ssi: Ssi,
        visible: Lsn,
    }

    impl Sim {
        fn new() -> Sim {
            Sim {
                ssi: Ssi::default(),
                visible: Lsn(10),
            }
        }
        fn begin(&self, id: u64, read_only: bool) -> TxnId {
            let id = TxnId(id);
            self.ssi.begin(id, read_only, self.visible, || self.visible);
            id
        }
        fn commit(&mut self, id: TxnId, wrote: bool) -> Result<()> {
            let lsn = Lsn(self.visible.0 + 1);
            self.ssi
                .commit(id, self.visible, (), |()| ((), wrote.then_some(lsn)))
                .map_err(|(e, ())| e)?;
            // Installed and visible at once.
            self.visible = lsn;
            Ok(())
        }
    }

    #[test]
    fn write_skew_fails_the_second_committer() {
        let mut s = Sim::new();
        let (t1, t2) = (s.begin(1, false), s.begin(2, false));
        for t in [t1, t2] {
            s.ssi.read(t, T, key(1)).unwrap();
            s.ssi.read(t, T, key(2)).unwrap();
        }
        s.ssi.write(t1, T, key(1)).unwrap();
        s.ssi.write(t2, T, key(2)).unwrap();
        s.commit(t1, true).unwrap();
        let e = s.commit(t2, true).unwrap_err();
        assert_eq!(e.code, SqlState::SERIALIZATION_FAILURE);
    }

    #[test]
    fn one_rw_edge_commits_both() {
        let mut s = Sim::new();
        let (t1, t2) = (s.begin(1, false), s.begin(2, false));
        s.ssi.read(t2, T, key(1)).unwrap();
        s.ssi.read(t2, T, key(2)).unwrap();
        s.ssi.read(t1, T, key(2)).unwrap();
        s.ssi.write(t1, T, key(2)).unwrap();
        s.commit(t1, true).unwrap();
        s.ssi.write(t2, T, key(1)).unwrap();
        s.commit(t2, true).unwrap();
        // Nothing runs: only t2, whose commit was not yet visible when it ended, is kept.
        assert_eq!(s.ssi.tracked(), 1);
    }

    #[test]
    fn read_only_anomaly_fails_the_pivot_at_its_write() {
        let mut s = Sim::new();
        let (t1, t2) = (s.begin(1, false), s.begin(2, false));
        s.ssi.read(t2, T, key(1)).unwrap();
        s.ssi.read(t2, T, key(2)).unwrap();
        s.ssi.read(t1, T, key(2)).unwrap();
        s.ssi.write(t1, T, key(2)).unwrap();
        s.commit(t1, true).unwrap();
        let t3 = s.begin(3, false);
        s.ssi.read(t3, T, key(1)).unwrap();
        s.ssi.read(t3, T, key(2)).unwrap();
        s.commit(t3, false).unwrap();
        let e = s.ssi.write(t2, T, key(1)).unwrap_err();
        assert!(e.detail.unwrap_or_default().contains("during write"));
    }

    #[test]
    fn a_read_only_observer_before_the_first_commit_is_harmless() {
        let mut s = Sim::new();
        let (t1, t2) = (s.begin(1, false), s.begin(2, false));
        s.ssi.read(t2, T, key(1)).unwrap();
        s.ssi.read(t2, T, key(2)).unwrap();
        // t3 reads before t1 commits: it can be placed before t2 and t1.
        let t3 = s.begin(3, true);
        s.ssi.read(t3, T, key(1)).unwrap();
        s.ssi.write(t1, T, key(2)).unwrap();
        s.commit(t1, true).unwrap();
        s.commit(t3, false).unwrap();
        s.ssi.write(t2, T, key(1)).unwrap();
        s.commit(t2, true).unwrap();
    }

    #[test]
    fn range_overlap() {
        let r =
            |lo: Bound<u8>, hi: Bound<u8>| -> Range { (lo.map(|k| vec![k]), hi.map(|k| vec![k])) };
        use Bound::*;
        assert!(ranges_overlap(&r(Included(1), Included(3)), &key(3)));
        assert!(!ranges_overlap(&r(Included(1), Excluded(3)), &key(3)));
        assert!(!ranges_overlap(&r(Excluded(3), Unbounded), &key(3)));
        assert!(ranges_overlap(&r(Excluded(2), Unbounded), &key(3)));
        assert!(ranges_overlap(&WHOLE, &key(0)));
        assert!(!ranges_overlap(
            &r(Included(4), Included(9)),
            &r(Included(1), Included(3))
        ));
    }

    #[test]
    fn a_random_history_that_commits_is_serializable() {
        // Small random histories over three keys: whenever every transaction commits,
        // some serial order of them gives each its reads.
        use rand::{Rng, SeedableRng};
        let mut rng = rand::rngs::StdRng::seed_from_u64(7);
        for _ in 0..3000 {
            let mut s = Sim::new();
            let n = rng.gen_range(2..=3u64);
            let ids: Vec<TxnId> = (1..=n).map(|i| s.begin(i, false)).collect();
            let mut ops: Vec<(TxnId, bool, u8)> = Vec::new();
            for &t in &ids {
                for _ in 0..rng.gen_range(1..=3) {
                    ops.push((t, rng.gen_bool(0.5), rng.gen_range(0..3u8)));
                }
            }
            // Shuffle the operations, then commit in a random order.
            for i in (1..ops.len()).rev() {
                let j = rng.gen_range(0..=i);
                ops.swap(i, j);
            }
            let mut alive: Vec<TxnId> = ids.clone();
            let mut reads: Vec<(TxnId, u8)> = Vec::new();
            let mut writes: Vec<(TxnId, u8)> = Vec::new();
            for (t, write, k) in ops {
                if !alive.contains(&t) {
                    continue;
                }
                let r = if write {
                    writes.push((t, k));
                    s.ssi.write(t, T, key(k))
                } else {
                    reads.push((t, k));
                    s.ssi.read(t, T, key(k))
                };
                if r.is_err() {
                    alive.retain(|a| *a != t);
                    s.ssi.abort(t, s.visible);
                }
            }
            let mut order = alive.clone();
            for i in (1..order.len()).rev() {
                let j = rng.gen_range(0..=i);
                order.swap(i, j);
            }
            let mut committed = Vec::new();
            for t in order {
                let wrote = writes.iter().any(|(w, _)| *w == t);
                if s.commit(t, wrote).is_ok() {
                    committed.push(t);
                } else {
                    s.ssi.abort(t, s.visible);
                }
            }
            // Snapshot isolation with first-committer-wins is assumed of the storage:
            // two committed writers of one key are not both concurrent here, so keep
            // only histories without such pairs.
            let ww = writes.iter().any(|(a, k)| {
                writes.iter().any(|(b, l)| {
                    a != b && k == l && committed.contains(a) && committed.contains(b)
                })
            });
            if ww {
                continue;
            }
            // Every committed pair with reads of the other's writes: all snapshots were
            // taken before any commit, so a read never sees a write. T reading what U
            // writes puts T before U; a cycle among the committed means no serial order.
            let before = |a: TxnId, b: TxnId| {
                reads
                    .iter()
                    .any(|(r, k)| *r == a && writes.iter().any(|(w, l)| *w == b && l == k))
            };
            for &a in &committed {
                for &b in &committed {
                    for &c in &committed {
                        let two = a != b && before(a, b) && before(b, a);
                        let three = a != b
                            && b != c
                            && a != c
                            && before(a, b)
                            && before(b, c)
                            && before(c, a);
                        assert!(!two && !three, "a cycle among committed transactions");
                    }
                }
            }
        }
    }
}
