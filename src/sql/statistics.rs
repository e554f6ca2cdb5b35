//! Statistics: what `ANALYZE` measures of a table, and what the planner estimates from
//! it — how many rows a table's filter keeps, and in which order an inner join of a few
//! tables reads them most cheaply.
//!
//! ANALYZE reads every row, counts them, and keeps a uniform sample of at most
//! [`SAMPLE_ROWS`] (reservoir sampling, seeded, so one table's statistics do not depend
//! on chance between runs of a test). From the sample: each column's share of NULLs, its
//! distinct values (the Haas–Stokes estimator PostgreSQL uses, from the values seen once
//! and the table's size), its average width and its most common values.
//!
//! The estimates follow PostgreSQL's defaults where nothing is known: an equality keeps
//! 0.5% of the rows, a range a third, a table never analyzed is taken to have 1,000
//! rows. The join order is searched over every left-deep order of up to
//! [`MAX_REORDERED_TABLES`] tables (subsets, dynamic programming), its cost the rows each
//! step reads: a key lookup per row so far, a hash table on the step's table plus a probe
//! per row, or the table per row so far. Nothing correct depends on an estimate: a plan
//! in any order returns the same rows.

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use rustc_hash::FxHashMap;

use crate::sql::expr::{CmpOp, Expr};
use crate::storage::stats::{ColumnStats, TableStats};
use crate::storage::TableDef;
use crate::types::Value;

/// The most rows ANALYZE keeps as its sample of a table (PostgreSQL's 300 × its default
/// statistics target of 100).
pub const SAMPLE_ROWS: usize = 30_000;
/// The most common values kept per column.
const MOST_COMMON_VALUES: usize = 10;
/// Rows assumed of a table ANALYZE has not measured.
pub const UNKNOWN_ROWS: f64 = 1000.0;
/// The share of rows an equality keeps when nothing is known of the column.
pub const DEFAULT_EQ_SEL: f64 = 0.005;
/// The share of rows a range condition (or any other) keeps.
pub const DEFAULT_RANGE_SEL: f64 = 1.0 / 3.0;
/// The most tables whose join order is chosen; larger joins keep FROM's order.
pub const MAX_REORDERED_TABLES: usize = 8;

/// Values wider than this (their text, in bytes) are counted but not kept in the
/// sample, as PostgreSQL leaves values over 1 kB out of its statistics: a sample holds
/// at most [`SAMPLE_ROWS`] × columns × this many bytes of values.
const WIDE_VALUE_BYTES: usize = 1024;

/// A sampled value.
enum Cell {
    Null,
    /// Too wide to keep: its width (taken as distinct from every other value).
    Wide(usize),
    Value(Value, usize),
}

fn cells(row: Vec<Value>) -> Vec<Cell> {
    row.into_iter()
        .map(|v| match v {
            Value::Null => Cell::Null,
            v => {
                let width = crate::types::format_text(&v).len();
                if width > WIDE_VALUE_BYTES {
                    Cell::Wide(width)
                } else {
                    Cell::Value(v, width)
                }
            }
        })
        .collect()
}

/// ANALYZE's measurement of one table: every row is given, a sample is kept.
pub struct StatsBuilder {
    seen: u64,
    sample: Vec<Vec<Cell>>,
    width: usize,
    rng: StdRng,
}

impl StatsBuilder {
    pub fn new(width: usize) -> StatsBuilder {
        StatsBuilder {
            seen: 0,
            sample: Vec::new(),
            width,
            rng: StdRng::seed_from_u64(0x5eed_57a7),
        }
    }

    /// One row (Algorithm R: the k-th row replaces a sampled one with chance n/k).
    pub fn add(&mut self, row: Vec<Value>) {
        self.seen += 1;
        if self.sample.len() < SAMPLE_ROWS {
            self.sample.push(cells(row));
        } else {
            let i = self.rng.gen_range(0..self.seen);
            if (i as usize) < SAMPLE_ROWS {
                self.sample[i as usize] = cells(row);
            }
        }
    }

    pub fn finish(self) -> TableStats {
        let rows = self.seen as f64;
        let columns = (0..self.width)
            .map(|c| column_stats(&self.sample, c, rows))
            .collect();
        TableStats { rows, columns }
    }
}

fn column_stats(sample: &[Vec<Cell>], c: usize, total_rows: f64) -> ColumnStats {
    let n = sample.len();
    let mut counts: FxHashMap<&Value, u64> = FxHashMap::default();
    let mut nulls = 0usize;
    let mut wide = 0usize;
    let mut width = 0usize;
    for row in sample {
        match row.get(c) {
            None | Some(Cell::Null) => nulls += 1,
            Some(Cell::Wide(w)) => {
                wide += 1;
                width += w;
            }
            Some(Cell::Value(v, w)) => {
                width += w;
                *counts.entry(v).or_default() += 1;
            }
        }
    }
    let present = n - nulls;
    let null_frac = if n == 0 { 0.0 } else { nulls as f64 / n as f64 };
    let d = (counts.len() + wide) as f64;
    let once = (counts.values().filter(|&&k| k == 1).count() + wide) as f64;
    let distinct = if present == 0 {
        0.0
    } else if (n as f64) >= total_rows {
        // The whole table is the sample: counted, not estimated.
        d
    } else if once == present as f64 {
        // Every value seen once: taken as unique.
        total_rows * (1.0 - null_frac)
    } else {
        // Haas and Stokes' Duj1: n·d / (n − f1 + f1·n/N).
        let p = present as f64;
        let nonnull_rows = total_rows * (1.0 - null_frac);
        (p * d / (p - once + once * p / nonnull_rows)).clamp(d, nonnull_rows.max(d))
    };
    // As PostgreSQL stores it: a share of the rows when it grows with the table.
    let n_distinct = if total_rows > 0.0 && distinct > 0.1 * total_rows {
        -(distinct / total_rows).min(1.0)
    } else {
        distinct
    };
    let mut common: Vec<(&Value, u64)> = counts.into_iter().filter(|(_, k)| *k > 1).collect();
    // Most common first; among equals by value, so the list does not depend on hashing.
    common.sort_by(|a, b| {
        b.1.cmp(&a.1)
            .then_with(|| crate::types::compare(a.0, b.0).unwrap_or(std::cmp::Ordering::Equal))
    });
    let average = if d > 0.0 { present as f64 / d } else { 0.0 };
    let most_common = if (n as f64) < total_rows || d as usize > MOST_COMMON_VALUES {
        // Only values clearly more common than the average one.
        common
            .into_iter()
            .filter(|(_, k)| *k as f64 > 1.25 * average)
            .take(MOST_COMMON_VALUES)
            .map(|(v, k)| (v.clone(), k as f64 / n as f64))
            .collect()
    } else {
        common
            .into_iter()
            .take(MOST_COMMON_VALUES)
            .map(|(v, k)| (v.clone(), k as f64 / n as f64))
            .collect()
    };
    ColumnStats {
        null_frac,
        n_distinct,
        avg_width: width.checked_div(present).unwrap_or(0) as i32,
        most_common,
    }
}

/// Rows read per batch by [`measure`]: the table's tree is not held longer.
const MEASURE_BATCH_ROWS: usize = 10_000;

/// Measure `table` as ANALYZE does, outside any transaction (for the autoanalyzer):
/// its newest committed rows, read in batches. Statistics are estimates, so rows that
/// commit during the reading may or may not count.
pub fn measure(table: &crate::storage::Table) -> crate::error::Result<TableStats> {
    use std::ops::Bound;
    let mut stats = StatsBuilder::new(table.def().columns.len());
    let mut after: Option<Vec<u8>> = None;
    loop {
        let mut read = 0;
        let mut last = None;
        let low = after.as_deref().map_or(Bound::Unbounded, Bound::Excluded);
        table.scan(
            (low, Bound::Unbounded),
            crate::wal::Lsn(u64::MAX),
            false,
            |key, row| {
                stats.add(row.to_vec());
                read += 1;
                if read >= MEASURE_BATCH_ROWS {
                    last = Some(key.to_vec());
                    return false;
                }
                true
            },
        )?;
        match last {
            Some(key) => after = Some(key),
            None => return Ok(stats.finish()),
        }
    }
}

/// The autoanalyzer (PostgreSQL's autovacuum, for statistics): every
/// `autovacuum_naptime`, each table never measured (at startup, all of them: statistics
/// are not kept over a restart), or written since by more than
/// `autovacuum_analyze_threshold` + `autovacuum_analyze_scale_factor` × its rows, is
/// measured again. It ends when the engine is gone.
pub fn run_autoanalyze(engine: std::sync::Weak<crate::engine::Engine>) {
    loop {
        let naptime = match engine.upgrade() {
            Some(e) => e.settings.get_int("autovacuum_naptime").max(1) as u64,
            None => return,
        };
        std::thread::sleep(std::time::Duration::from_secs(naptime));
        let Some(engine) = engine.upgrade() else {
            return;
        };
        if !engine.settings.get_bool("autovacuum") {
            continue;
        }
        let threshold = engine.settings.get_int("autovacuum_analyze_threshold") as f64;
        let scale = engine
            .settings
            .show("autovacuum_analyze_scale_factor")
            .and_then(|v| v.parse::<f64>().ok())
            .unwrap_or(0.1);
        let catalog = &engine.txn.catalog;
        let mut measured = false;
        for name in catalog.table_names() {
            let Some(table) = catalog.table(&name) else {
                continue;
            };
            if catalog.is_unconfirmed(table.id) {
                continue;
            }
            let due = match table.stats() {
                None => true,
                Some(s) => table.changed_rows() as f64 > threshold + scale * s.rows,
            };
            if !due {
                continue;
            }
            // A table dropped meanwhile, or a read that fails, is left for next time.
            if let Ok(stats) = measure(&table) {
                table.set_stats(stats);
                measured = true;
            }
        }
        if measured {
            catalog.statistics_changed();
        }
    }
}

/// What the planner knows of one table of a join.
#[derive(Clone, Debug)]
pub struct JoinTable {
    /// Its rows (measured, or [`UNKNOWN_ROWS`]).
    pub rows: f64,
    /// The share of them its own conditions keep.
    pub selectivity: f64,
    /// Whether its own conditions give a key or index range to read (not the whole table).
    pub keyed_scan: bool,
    /// Its primary key's columns.
    pub primary_key: Vec<usize>,
    /// The first column of each of its secondary indexes.
    pub index_leads: Vec<usize>,
    /// Distinct values per column.
    pub distinct: Vec<f64>,
}

/// `a.column = b.column` between two tables of a join.
#[derive(Clone, Copy, Debug)]
pub struct JoinEdge {
    pub left: (usize, usize),
    pub right: (usize, usize),
}

/// `t.column = <expression of other tables>`: once those tables (a bit set) are joined,
/// the column's value is known for each row so far.
#[derive(Clone, Copy, Debug)]
pub struct KeyGiven {
    pub column: (usize, usize),
    pub needs: u32,
}

/// The conditions between a join's tables.
#[derive(Clone, Debug, Default)]
pub struct JoinConditions {
    pub edges: Vec<JoinEdge>,
    pub given: Vec<KeyGiven>,
}

/// The estimated rows of a table after its own conditions.
fn kept(t: &JoinTable) -> f64 {
    (t.rows * t.selectivity).max(1.0)
}

/// Joining table `j` to the tables in `placed` (a bit set), `card` rows so far: the
/// rows it reads and the rows that come out.
fn step(
    tables: &[JoinTable],
    conditions: &JoinConditions,
    placed: u32,
    card: f64,
    j: usize,
) -> (f64, f64) {
    let t = &tables[j];
    let mut on_j: Vec<usize> = Vec::new();
    let mut selectivity = 1.0;
    for g in &conditions.given {
        if g.column.0 == j && g.needs & !placed == 0 {
            on_j.push(g.column.1);
            selectivity /= t.distinct.get(g.column.1).copied().unwrap_or(1.0).max(1.0);
        }
    }
    for e in &conditions.edges {
        for (mine, other) in [(e.left, e.right), (e.right, e.left)] {
            if mine.0 == j && placed & (1 << other.0) != 0 {
                on_j.push(mine.1);
                let nd_mine = t.distinct.get(mine.1).copied().unwrap_or(1.0);
                let nd_other = tables[other.0]
                    .distinct
                    .get(other.1)
                    .copied()
                    .unwrap_or(1.0);
                selectivity /= nd_mine.max(nd_other).max(1.0);
            }
        }
    }
    let out = (card * kept(t) * selectivity).max(1.0);
    let by_key = !t.primary_key.is_empty() && t.primary_key.iter().all(|c| on_j.contains(c));
    let by_index = t.index_leads.iter().any(|c| on_j.contains(c));
    let read = if by_key {
        card
    } else if by_index {
        let lead = t
            .index_leads
            .iter()
            .filter(|c| on_j.contains(c))
            .map(|&c| t.distinct.get(c).copied().unwrap_or(1.0))
            .fold(1.0f64, f64::max);
        card * (t.rows / lead).max(1.0)
    } else if !on_j.is_empty() {
        t.rows + card
    } else {
        card * t.rows
    };
    (read, out)
}

/// The cheapest left-deep order of an inner join of `tables` (indexes into it), with
/// its cost; `tables.len()` must be at most [`MAX_REORDERED_TABLES`].
pub fn best_join_order(tables: &[JoinTable], conditions: &JoinConditions) -> (Vec<usize>, f64) {
    let n = tables.len();
    debug_assert!((1..=MAX_REORDERED_TABLES).contains(&n));
    // Per set of tables: (cost, rows out, order).
    let mut best: Vec<Option<(f64, f64, Vec<usize>)>> = vec![None; 1 << n];
    for (i, t) in tables.iter().enumerate() {
        let read = if t.keyed_scan { kept(t) } else { t.rows };
        best[1 << i] = Some((read, kept(t), vec![i]));
    }
    for set in 1u32..(1 << n) {
        let Some((cost, card, order)) = best[set as usize].clone() else {
            continue;
        };
        for j in (0..n).filter(|j| set & (1 << j) == 0) {
            let (read, out) = step(tables, conditions, set, card, j);
            let next = (set | (1 << j)) as usize;
            let total = cost + read;
            if best[next].as_ref().is_none_or(|b| total < b.0) {
                let mut o = order.clone();
                o.push(j);
                best[next] = Some((total, out, o));
            }
        }
    }
    best[(1 << n) - 1]
        .take()
        .map(|(cost, _, order)| (order, cost))
        .unwrap_or(((0..n).collect(), 0.0))
}

/// The cost of joining `tables` in the order given.
pub fn join_cost(tables: &[JoinTable], conditions: &JoinConditions, order: &[usize]) -> f64 {
    let Some(&first) = order.first() else {
        return 0.0;
    };
    let t = &tables[first];
    let mut cost = if t.keyed_scan { kept(t) } else { t.rows };
    let mut card = kept(t);
    let mut placed = 1u32 << first;
    for &j in &order[1..] {
        let (read, out) = step(tables, conditions, placed, card, j);
        cost += read;
        card = out;
        placed |= 1 << j;
    }
    cost
}

/// The share of rows `column = value` keeps (`value` None: a value not known when
/// planning), from the column's statistics.
pub fn equality_selectivity(stats: &ColumnStats, rows: f64, value: Option<&Value>) -> f64 {
    if let Some(v) = value {
        if v.is_null() {
            return 0.0;
        }
        if let Some((_, f)) = stats.most_common.iter().find(|(m, _)| m == v) {
            return *f;
        }
    }
    let common: f64 = stats.most_common.iter().map(|(_, f)| f).sum();
    let others = (stats.distinct(rows) - stats.most_common.len() as f64).max(1.0);
    match value {
        Some(_) => ((1.0 - stats.null_frac - common) / others).clamp(0.0, 1.0),
        None => ((1.0 - stats.null_frac) / stats.distinct(rows)).clamp(0.0, 1.0),
    }
}

/// Distinct values of column `c`: measured, else all of them for a one-column primary
/// key, else PostgreSQL's default of 200 (at most the rows).
pub fn column_distinct(def: &TableDef, measured: Option<&TableStats>, rows: f64, c: usize) -> f64 {
    if let Some(cs) = measured.and_then(|s| s.columns.get(c)) {
        return cs.distinct(rows);
    }
    if def.primary_key == [c] {
        return rows;
    }
    200f64.min(rows).max(1.0)
}

/// The share of a table's rows one of its own conditions keeps (`distinct`: each
/// column's distinct values, as [`column_distinct`] gives them).
pub fn selectivity(
    e: &Expr,
    def: &TableDef,
    measured: Option<&TableStats>,
    rows: f64,
    distinct: &[f64],
) -> f64 {
    selectivity_at(e, def, measured, rows, distinct, 0)
}

/// Deeper than this, a condition's parts are taken at the default share.
const SELECTIVITY_DEPTH: usize = 32;

fn selectivity_at(
    e: &Expr,
    def: &TableDef,
    measured: Option<&TableStats>,
    rows: f64,
    distinct: &[f64],
    depth: usize,
) -> f64 {
    if depth > SELECTIVITY_DEPTH {
        return DEFAULT_RANGE_SEL;
    }
    let selectivity = |e: &Expr, def, measured, rows, distinct| {
        selectivity_at(e, def, measured, rows, distinct, depth + 1)
    };
    let column_stats = |c: usize| measured.and_then(|s| s.columns.get(c));
    let equality = |c: usize, v: Option<&Value>| match column_stats(c) {
        Some(cs) => equality_selectivity(cs, rows, v),
        None if def.primary_key == [c] => 1.0 / rows,
        None => DEFAULT_EQ_SEL.max(1.0 / distinct.get(c).copied().unwrap_or(200.0)),
    };
    let known = |e: &Expr| match e {
        Expr::Const(v) => Some(Some(v.clone())),
        Expr::Param(_) | Expr::Outer(_) => Some(None),
        _ => None,
    };
    match e {
        Expr::And(a, b) => {
            selectivity(a, def, measured, rows, distinct)
                * selectivity(b, def, measured, rows, distinct)
        }
        Expr::Or(a, b) => {
            let (x, y) = (
                selectivity(a, def, measured, rows, distinct),
                selectivity(b, def, measured, rows, distinct),
            );
            x + y - x * y
        }
        Expr::Not(a) => 1.0 - selectivity(a, def, measured, rows, distinct),
        Expr::Cmp(op, a, b) => {
            let (col, value) = match (a.as_ref(), b.as_ref()) {
                (Expr::Column(c), v) | (v, Expr::Column(c)) => (*c, known(v)),
                _ => return DEFAULT_RANGE_SEL,
            };
            match (op, value) {
                (CmpOp::Eq, Some(v)) => equality(col, v.as_ref()),
                (CmpOp::NotEq, Some(v)) => 1.0 - equality(col, v.as_ref()),
                _ => DEFAULT_RANGE_SEL,
            }
        }
        Expr::InList {
            expr,
            list,
            negated,
        } => match expr.as_ref() {
            Expr::Column(c) => {
                let s: f64 = list
                    .iter()
                    .map(|v| equality(*c, known(v).flatten().as_ref()))
                    .sum::<f64>()
                    .min(1.0);
                if *negated {
                    1.0 - s
                } else {
                    s
                }
            }
            _ => DEFAULT_RANGE_SEL,
        },
        Expr::IsNull(a, negated) => match (a.as_ref(), column_stats_of(a, measured)) {
            (Expr::Column(_), Some(cs)) if *negated => 1.0 - cs.null_frac,
            (Expr::Column(_), Some(cs)) => cs.null_frac,
            _ if *negated => 1.0 - DEFAULT_EQ_SEL,
            _ => DEFAULT_EQ_SEL,
        },
        _ => DEFAULT_RANGE_SEL,
    }
}

fn column_stats_of<'a>(e: &Expr, measured: Option<&'a TableStats>) -> Option<&'a ColumnStats> {
    match e {
        Expr::Column(c) => measured.and_then(|s| s.columns.get(*c)),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table(
        rows: f64,
        selectivity: f64,
        primary_key: Vec<usize>,
        distinct: Vec<f64>,
    ) -> JoinTable {
        JoinTable {
            rows,
            selectivity,
            keyed_scan: false,
            primary_key,
            index_leads: Vec::new(),
            distinct,
        }
    }

    #[test]
    fn a_filtered_small_table_leads_into_key_lookups() {
        // big(id pk), small(big_id) filtered to a few rows: small first, then big by key.
        let tables = [
            table(1_000_000.0, 1.0, vec![0], vec![1_000_000.0]),
            table(100.0, 0.1, vec![], vec![100.0]),
        ];
        let conditions = JoinConditions {
            edges: vec![JoinEdge {
                left: (0, 0),
                right: (1, 0),
            }],
            given: Vec::new(),
        };
        let (order, cost) = best_join_order(&tables, &conditions);
        assert_eq!(order, vec![1, 0]);
        assert!(cost < 200.0, "{cost}");
        assert!(join_cost(&tables, &conditions, &[0, 1]) > 1_000_000.0);
    }

    #[test]
    fn a_key_given_by_an_expression_needs_its_tables_first() {
        // t.k = f(a.x): t is read by key only after a.
        let tables = [
            table(10.0, 1.0, vec![], vec![10.0]),
            table(1_000_000.0, 1.0, vec![0], vec![1_000_000.0]),
        ];
        let conditions = JoinConditions {
            edges: Vec::new(),
            given: vec![KeyGiven {
                column: (1, 0),
                needs: 1,
            }],
        };
        assert_eq!(best_join_order(&tables, &conditions).0, vec![0, 1]);
    }

    #[test]
    fn the_sample_is_bounded_and_the_estimates_plausible() {
        let mut b = StatsBuilder::new(2);
        let n = 100_000;
        for i in 0..n {
            // Column 0 unique; column 1 with 1,000 values, a tenth of the rows NULL.
            let v = if i % 10 == 0 {
                Value::Null
            } else {
                Value::Int4(i % 1000)
            };
            b.add(vec![Value::Int4(i), v]);
        }
        assert_eq!(b.sample.len(), SAMPLE_ROWS);
        let s = b.finish();
        assert_eq!(s.rows, n as f64);
        assert_eq!(s.columns[0].n_distinct, -1.0);
        assert!((s.columns[1].null_frac - 0.1).abs() < 0.02);
        let d = s.columns[1].distinct(s.rows);
        assert!((500.0..2000.0).contains(&d), "{d}");
    }

    #[test]
    fn equality_uses_the_most_common_values() {
        let cs = ColumnStats {
            null_frac: 0.1,
            n_distinct: 11.0,
            avg_width: 4,
            most_common: vec![(Value::Int4(7), 0.5)],
        };
        assert_eq!(
            equality_selectivity(&cs, 1000.0, Some(&Value::Int4(7))),
            0.5
        );
        // The other 10 values share the other 40%.
        let other = equality_selectivity(&cs, 1000.0, Some(&Value::Int4(3)));
        assert!((other - 0.04).abs() < 1e-9, "{other}");
        assert_eq!(equality_selectivity(&cs, 1000.0, Some(&Value::Null)), 0.0);
    }
}
