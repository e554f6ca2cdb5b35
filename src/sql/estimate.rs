//! Plan estimates: the `(cost=S..T rows=R width=W)` EXPLAIN shows after each node.
//!
//! SteadyDB's planner picks access paths by rule and orders joins by the rows each order
//! reads (`statistics.rs`); it keeps no cost per node. These estimates are made for
//! EXPLAIN alone, after the plan is chosen, so that a user reads what PostgreSQL's
//! EXPLAIN gives: how many rows each step is expected to produce, how wide they are,
//! and a cost in PostgreSQL's units (reading one page in sequence costs 1.0), with its
//! default cost settings. Nothing the server does depends on them.
//!
//! - **Rows** come from ANALYZE's statistics where it measured the table (rows, distinct
//!   values, most common values, NULL shares) and otherwise from PostgreSQL's defaults
//!   ([`stats::UNKNOWN_ROWS`] rows, an equality keeps 0.5%, a range a third, a range
//!   bounded on both sides 0.5%). No node is estimated below one row.
//! - **Width** is the average bytes of the columns a node passes on: measured, else the
//!   type's fixed width, else PostgreSQL's guess for a variable-length type.
//! - **Cost** follows SteadyDB's storage: a table's rows live in its primary key's
//!   B+tree, so a key lookup or key range reads the rows where the index ends (no heap
//!   fetch), and a secondary index costs a key lookup per entry it matches. `startup` is
//!   the cost before the first row, `total` the cost of all of them.
//!
//! Every estimate is finite and not negative; a startup cost is never above its total.

use std::sync::Arc;

use super::expr::Expr;
use super::statistics as stats;
use crate::storage::stats::TableStats;
use crate::storage::TableDef;
use crate::types::DataType;

/// PostgreSQL's default cost settings.
pub const SEQ_PAGE_COST: f64 = 1.0;
pub const RANDOM_PAGE_COST: f64 = 4.0;
pub const CPU_TUPLE_COST: f64 = 0.01;
pub const CPU_INDEX_TUPLE_COST: f64 = 0.005;
pub const CPU_OPERATOR_COST: f64 = 0.0025;

/// Bytes of a page, and what a row takes in one besides its values.
const PAGE_BYTES: f64 = 8192.0;
const ROW_OVERHEAD_BYTES: f64 = 24.0;
/// Entries per B+tree inner page assumed when counting the levels a lookup descends.
const TREE_FANOUT: f64 = 256.0;
/// Rows assumed of a function in FROM whose count is not known (PostgreSQL's `prorows`).
pub const FUNCTION_ROWS: f64 = 1000.0;
/// Distinct values assumed of an expression nothing is known of.
pub const DEFAULT_NUM_DISTINCT: f64 = 200.0;
/// The share a range bounded on both sides keeps, when nothing is known of the column.
pub const BOTH_BOUNDS_SEL: f64 = 0.005;
/// Width assumed of a variable-length value of unknown size (PostgreSQL's guess).
const VARIABLE_WIDTH: f64 = 32.0;
/// The share of its input a LIMIT whose count is a parameter is taken to keep.
const UNKNOWN_LIMIT_SHARE: f64 = 0.1;

/// One plan node's estimate.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Estimate {
    pub startup: f64,
    pub total: f64,
    pub rows: f64,
    pub width: f64,
}

impl Estimate {
    /// An estimate of at least one row (as PostgreSQL clamps every row count but a
    /// statement's without RETURNING).
    fn new(startup: f64, total: f64, rows: f64, width: f64) -> Estimate {
        let e = Estimate::of_rows(startup, total, rows, width);
        Estimate {
            rows: e.rows.max(1.0),
            ..e
        }
    }

    fn of_rows(startup: f64, total: f64, rows: f64, width: f64) -> Estimate {
        let clean = |x: f64| if x.is_finite() { x.max(0.0) } else { 0.0 };
        let (startup, total) = (clean(startup), clean(total));
        let e = Estimate {
            startup,
            total: total.max(startup),
            rows: clean(rows),
            width: clean(width),
        };
        debug_assert!(e.startup <= e.total);
        e
    }

    /// The rows as shown: whole.
    pub fn shown_rows(&self) -> u64 {
        self.rows.round() as u64
    }

    /// As EXPLAIN's text format shows it.
    pub fn text(&self) -> String {
        format!(
            "(cost={:.2}..{:.2} rows={} width={})",
            self.startup,
            self.total,
            self.shown_rows(),
            self.width.round() as u64
        )
    }

    /// The same rows with another width (what a node above passes on of them).
    pub fn with_width(self, width: f64) -> Estimate {
        Estimate { width, ..self }
    }

    /// The same node keeping `share` of its rows (a filter on its output), each tested
    /// by `quals` operators.
    pub fn filtered(self, share: f64, quals: usize) -> Estimate {
        let tests = self.rows * CPU_OPERATOR_COST * quals as f64;
        Estimate::new(
            self.startup,
            self.total + tests,
            (self.rows * share).max(1.0),
            self.width,
        )
    }
}

/// The width of a value of type `t` whose size was not measured.
pub fn type_width(t: &DataType) -> f64 {
    match t {
        DataType::Char(n) => f64::from(*n) + 1.0,
        DataType::Varchar(Some(n)) => {
            // PostgreSQL's guess for a bounded varchar: full up to 32 bytes, then half.
            let max = f64::from(*n);
            if max <= VARIABLE_WIDTH {
                max + 1.0
            } else {
                VARIABLE_WIDTH + (max.min(1000.0) - VARIABLE_WIDTH) / 2.0
            }
        }
        t => match t.typlen() {
            n if n > 0 => f64::from(n),
            _ => VARIABLE_WIDTH,
        },
    }
}

/// What is known of one table (or a row source standing for one): its rows, and per
/// column its distinct values and width.
pub struct Relation {
    pub def: Arc<TableDef>,
    measured: Option<Arc<TableStats>>,
    pub rows: f64,
    distinct: Vec<f64>,
}

impl Relation {
    /// A table, with what ANALYZE measured of it.
    pub fn of(def: Arc<TableDef>, measured: Option<Arc<TableStats>>) -> Relation {
        let rows = measured
            .as_ref()
            .map_or(stats::UNKNOWN_ROWS, |s| s.rows.max(1.0));
        Relation::with_rows(def, measured, rows)
    }

    /// A row source of `rows` rows (a subquery, a function) with `def`'s columns.
    pub fn with_rows(def: Arc<TableDef>, measured: Option<Arc<TableStats>>, rows: f64) -> Relation {
        let distinct = (0..def.columns.len())
            .map(|c| stats::column_distinct(&def, measured.as_deref(), rows, c))
            .collect();
        Relation {
            def,
            measured,
            rows,
            distinct,
        }
    }

    pub fn distinct(&self, column: usize) -> f64 {
        self.distinct
            .get(column)
            .copied()
            .unwrap_or(DEFAULT_NUM_DISTINCT)
    }

    pub fn column_width(&self, column: usize) -> f64 {
        let fixed = self
            .def
            .columns
            .get(column)
            .map(|c| c.data_type.typlen())
            .filter(|&n| n > 0);
        if let Some(n) = fixed {
            return f64::from(n);
        }
        let measured = self
            .measured
            .as_ref()
            .and_then(|s| s.columns.get(column))
            .filter(|c| c.avg_width > 0);
        match (measured, self.def.columns.get(column)) {
            (Some(c), _) => f64::from(c.avg_width),
            (None, Some(col)) => type_width(&col.data_type),
            (None, None) => VARIABLE_WIDTH,
        }
    }

    /// The width of a whole row.
    fn row_width(&self) -> f64 {
        (0..self.def.columns.len())
            .map(|c| self.column_width(c))
            .sum()
    }

    /// The pages the table's rows fill.
    fn pages(&self) -> f64 {
        (self.rows * (self.row_width() + ROW_OVERHEAD_BYTES) / PAGE_BYTES)
            .ceil()
            .max(1.0)
    }

    /// The share of rows `condition` (over the table's own row) keeps.
    pub fn selectivity(&self, condition: &Expr) -> f64 {
        stats::selectivity(
            condition,
            &self.def,
            self.measured.as_deref(),
            self.rows,
            &self.distinct,
        )
        .clamp(0.0, 1.0)
    }

    /// The cost of descending the primary key's tree (or an index of as many entries)
    /// to the first row: comparisons on the way down, a page per level.
    fn descent(&self) -> f64 {
        let levels = (self.rows.max(2.0).ln() / TREE_FANOUT.ln()).ceil().max(1.0);
        self.rows.max(2.0).log2() * CPU_OPERATOR_COST + (levels + 1.0) * 50.0 * CPU_OPERATOR_COST
    }

    /// Every row read in key order, `quals` operators tested on each, `kept` of them
    /// passed on `width` wide.
    pub fn seq_scan(&self, quals: usize, kept: f64, width: f64) -> Estimate {
        let cpu = self.rows * (CPU_TUPLE_COST + CPU_OPERATOR_COST * quals as f64);
        Estimate::new(0.0, self.pages() * SEQ_PAGE_COST + cpu, kept, width)
    }

    /// A key lookup or key range matching `matched` rows, which lie together in key
    /// order; `quals` operators tested on each.
    pub fn key_scan(&self, matched: f64, quals: usize, kept: f64, width: f64) -> Estimate {
        let startup = self.descent();
        let share = (matched / self.rows.max(1.0)).min(1.0);
        let pages = (self.pages() * share).ceil().max(1.0);
        let cpu = matched * (CPU_TUPLE_COST + CPU_OPERATOR_COST * quals as f64);
        let total = startup + RANDOM_PAGE_COST + (pages - 1.0) * SEQ_PAGE_COST + cpu;
        Estimate::new(startup, total, kept, width)
    }

    /// A secondary index matching `matched` entries, each row then found by its key.
    pub fn index_scan(&self, matched: f64, quals: usize, kept: f64, width: f64) -> Estimate {
        let startup = self.descent();
        let share = (matched / self.rows.max(1.0)).min(1.0);
        let index_pages = (self.pages() * share / 4.0).ceil().max(1.0);
        // Each entry's row is a lookup in the table's tree: a random page while they
        // are fewer than the table's pages.
        let row_pages = matched.min(self.pages());
        let cpu =
            matched * (CPU_INDEX_TUPLE_COST + CPU_TUPLE_COST + CPU_OPERATOR_COST * quals as f64);
        let total = startup + (index_pages + row_pages) * RANDOM_PAGE_COST + cpu;
        Estimate::new(startup, total, kept, width)
    }
}

/// Rows of a row source computed in memory (a function, VALUES, a subquery's rows read
/// again), `quals` operators tested on each.
pub fn computed_rows(rows: f64, quals: usize, kept: f64, width: f64) -> Estimate {
    let cost = rows * (CPU_OPERATOR_COST + CPU_TUPLE_COST + CPU_OPERATOR_COST * quals as f64);
    Estimate::new(0.0, cost, kept, width)
}

/// A node that reads its input once and passes on its rows (a subquery's scan, LockRows,
/// WindowAgg), with `ops` operators per row.
pub fn per_row(input: &Estimate, ops: f64, width: f64) -> Estimate {
    let cost = input.rows * (CPU_TUPLE_COST + CPU_OPERATOR_COST * ops);
    Estimate::new(input.startup, input.total + cost, input.rows, width)
}

/// A hash join: the inner rows hashed (the `Hash` node, returned first), then the outer
/// rows probed; `rows` come out.
pub fn hash_join(
    outer: &Estimate,
    inner: &Estimate,
    keys: usize,
    rows: f64,
    width: f64,
) -> (Estimate, Estimate) {
    let hash = Estimate::new(inner.total, inner.total, inner.rows, inner.width);
    let build = inner.rows * (CPU_OPERATOR_COST * keys as f64 + CPU_TUPLE_COST);
    let startup = hash.total + build + outer.startup;
    let probe = outer.rows * CPU_OPERATOR_COST * keys as f64;
    let total = startup + (outer.total - outer.startup) + probe + rows * CPU_TUPLE_COST;
    (hash, Estimate::new(startup, total, rows, width))
}

/// A nested loop: the inner side (`inner`, per run) run once per outer row; `rows` come
/// out, each tested by `quals` operators of a join filter.
pub fn nested_loop(
    outer: &Estimate,
    inner: &Estimate,
    quals: usize,
    rows: f64,
    width: f64,
) -> Estimate {
    let loops = outer.rows.max(1.0);
    let startup = outer.startup + inner.startup;
    let tested = loops * inner.rows * CPU_OPERATOR_COST * quals as f64;
    let total = outer.total + loops * inner.total + tested + rows * CPU_TUPLE_COST;
    Estimate::new(startup, total, rows, width)
}

/// A sort of all its input before the first row.
pub fn sort(input: &Estimate) -> Estimate {
    let n = input.rows.max(2.0);
    let compare = 2.0 * CPU_OPERATOR_COST * n * n.log2();
    let startup = input.total + compare;
    Estimate::new(
        startup,
        startup + CPU_OPERATOR_COST * input.rows,
        input.rows,
        input.width,
    )
}

/// LIMIT `count` (None: a parameter) OFFSET `offset`: the input is read only as far as
/// the rows it needs.
pub fn limit(input: &Estimate, count: Option<f64>, offset: f64) -> Estimate {
    let available = (input.rows - offset).max(0.0);
    let wanted = count
        .unwrap_or(input.rows * UNKNOWN_LIMIT_SHARE)
        .min(available);
    let share = match input.rows {
        r if r > 0.0 => ((offset + wanted) / r).min(1.0),
        _ => 1.0,
    };
    let startup =
        input.startup + (input.total - input.startup) * (offset / input.rows.max(1.0)).min(1.0);
    let total = input.startup + (input.total - input.startup) * share;
    Estimate::new(startup, total, wanted, input.width)
}

/// An aggregate over all its input: one row of `aggs` values.
pub fn aggregate(input: &Estimate, aggs: usize, width: f64) -> Estimate {
    let startup = input.total + input.rows * CPU_OPERATOR_COST * aggs.max(1) as f64;
    Estimate::new(startup, startup + CPU_TUPLE_COST, 1.0, width)
}

/// Grouping by hash into `groups` groups (`keys` expressions, `aggs` aggregates).
pub fn hash_aggregate(
    input: &Estimate,
    keys: usize,
    aggs: usize,
    groups: f64,
    width: f64,
) -> Estimate {
    let groups = groups.min(input.rows).max(1.0);
    let startup = input.total + input.rows * CPU_OPERATOR_COST * (keys + aggs) as f64;
    let total = startup + groups * (CPU_TUPLE_COST + CPU_OPERATOR_COST * aggs as f64);
    Estimate::new(startup, total, groups, width)
}

/// Rows of sorted input kept once per run of `groups` equal keys (DISTINCT ON).
pub fn unique(input: &Estimate, groups: f64) -> Estimate {
    let total = input.total + input.rows * CPU_OPERATOR_COST;
    Estimate::new(
        input.startup,
        total,
        groups.min(input.rows).max(1.0),
        input.width,
    )
}

/// The rows of `parts` one after another.
pub fn append(parts: &[Estimate]) -> Estimate {
    let startup = parts.first().map_or(0.0, |p| p.startup);
    let total: f64 = parts.iter().map(|p| p.total).sum();
    let rows: f64 = parts.iter().map(|p| p.rows).sum();
    let width = parts.iter().map(|p| p.width).fold(0.0, f64::max);
    Estimate::new(startup, total + rows * CPU_TUPLE_COST, rows, width)
}

/// One row computed without input (`SELECT 1`, an INSERT's VALUES row).
pub fn result(width: f64) -> Estimate {
    Estimate::new(0.0, CPU_TUPLE_COST, 1.0, width)
}

/// INSERT, UPDATE or DELETE of the rows of `input`: no rows out without RETURNING.
pub fn modify(input: &Estimate) -> Estimate {
    Estimate::of_rows(input.startup, input.total, 0.0, 0.0)
}

/// The distinct combinations of values of columns with `distinct` values each, among
/// `rows` rows.
pub fn groups(distinct: impl Iterator<Item = f64>, rows: f64) -> f64 {
    distinct
        .fold(1.0f64, |acc, d| acc * d.max(1.0))
        .min(rows)
        .max(1.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn input(rows: f64) -> Estimate {
        Estimate::new(0.0, rows * 0.02, rows, 8.0)
    }

    #[test]
    fn startup_never_passes_total_and_rows_show_at_least_one() {
        let e = Estimate::new(5.0, 1.0, 0.2, 4.0);
        assert_eq!((e.startup, e.total), (5.0, 5.0));
        assert_eq!(e.shown_rows(), 1);
        assert_eq!(e.text(), "(cost=5.00..5.00 rows=1 width=4)");
        let nan = Estimate::new(f64::NAN, f64::INFINITY, -3.0, 1.0);
        assert_eq!((nan.startup, nan.total, nan.rows), (0.0, 0.0, 1.0));
        assert_eq!(modify(&e).shown_rows(), 0);
    }

    #[test]
    fn a_limit_reads_only_the_share_it_needs() {
        let all = input(1000.0);
        let ten = limit(&all, Some(10.0), 0.0);
        assert_eq!(ten.rows, 10.0);
        assert!((ten.total - all.total / 100.0).abs() < 1e-9);
        // Past the end: what is there.
        assert_eq!(limit(&all, Some(10.0), 995.0).rows, 5.0);
        // A sort must finish before its first row: a limit above it pays all of it.
        let sorted = sort(&all);
        assert!(limit(&sorted, Some(1.0), 0.0).total >= sorted.startup);
    }

    #[test]
    fn costs_grow_with_the_rows_read() {
        let small = Estimate::new(0.0, 1.0, 10.0, 4.0);
        let big = Estimate::new(0.0, 100.0, 1000.0, 4.0);
        assert!(sort(&big).total > sort(&small).total);
        let (_, join_small) = hash_join(&small, &small, 1, 10.0, 8.0);
        let (_, join_big) = hash_join(&big, &big, 1, 1000.0, 8.0);
        assert!(join_big.total > join_small.total);
        assert!(
            nested_loop(&big, &small, 1, 10.0, 8.0).total
                > nested_loop(&small, &small, 1, 10.0, 8.0).total
        );
        assert_eq!(hash_aggregate(&big, 1, 1, 1e9, 8.0).rows, 1000.0);
        assert_eq!(groups([10.0, 20.0].into_iter(), 150.0), 150.0);
    }

    #[test]
    fn widths_follow_the_types() {
        assert_eq!(type_width(&DataType::Int4), 4.0);
        assert_eq!(type_width(&DataType::Int8), 8.0);
        assert_eq!(type_width(&DataType::Text), 32.0);
        assert_eq!(type_width(&DataType::Char(84)), 85.0);
        assert_eq!(type_width(&DataType::Varchar(Some(10))), 11.0);
        assert_eq!(type_width(&DataType::Varchar(Some(100))), 66.0);
    }
}
