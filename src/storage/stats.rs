//! A table's statistics, as `ANALYZE` last measured them: its rows, and per column the
//! share of NULLs, the number of distinct values, the average width and the most common
//! values. The planner reads them to estimate how many rows a scan or a join yields (see
//! `sql/statistics.rs`, which measures and reads them). They are estimates: nothing
//! correct depends on them, so they live in memory only, replaced whole by each ANALYZE
//! (or the autoanalyzer's), and measured again after a restart.

use crate::types::Value;

#[derive(Clone, Debug, PartialEq)]
pub struct TableStats {
    /// Live rows when measured.
    pub rows: f64,
    /// Per column, in the table's column order.
    pub columns: Vec<ColumnStats>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct ColumnStats {
    /// The share of rows whose value is NULL.
    pub null_frac: f64,
    /// Distinct non-NULL values: a count when positive, minus the share of the rows
    /// when negative (a number that grows with the table), as PostgreSQL's
    /// `pg_stats.n_distinct`.
    pub n_distinct: f64,
    /// The average width of a non-NULL value in bytes (its text form here).
    pub avg_width: i32,
    /// The most common values with the share of rows each has, most common first.
    pub most_common: Vec<(Value, f64)>,
}

impl ColumnStats {
    /// Distinct non-NULL values among `rows` rows.
    pub fn distinct(&self, rows: f64) -> f64 {
        if self.n_distinct < 0.0 {
            (-self.n_distinct * rows).max(1.0)
        } else {
            self.n_distinct.max(1.0)
        }
    }
}
