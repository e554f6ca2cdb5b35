//! The order of an inner join's tables: FROM's, unless the statistics ANALYZE measured
//! say another reads far fewer rows (`statistics.rs` estimates and searches). The
//! joined row is then built in the new order and put back in FROM's order before
//! anything above the join reads it (`SelectPlan::join_layout`), so only the join steps
//! see the change.

use super::{and_all, split_conjuncts, FromPlan, PendingJoin};
use crate::sql::bind::Scope;
use crate::sql::expr::{CmpOp, Expr};
use crate::sql::plan::{Access, JoinKind};
use crate::sql::statistics::{self as stats, JoinConditions, JoinEdge, JoinTable, KeyGiven};
use crate::storage::stats::TableStats;

/// Another order must be estimated at least this much cheaper than FROM's to be used.
const REORDER_GAIN: f64 = 0.7;

/// `from` and `filter` reordered, with the position of each of FROM's columns in the
/// new joined row; or as they were (None) when the order stays.
pub(super) fn reorder(
    from: FromPlan,
    filter: Option<Expr>,
) -> (FromPlan, Option<Expr>, Option<Vec<usize>>) {
    let n = from.tables.len();
    let plain = (2..=stats::MAX_REORDERED_TABLES).contains(&n)
        && from.steps.iter().all(|s| s.kind == JoinKind::Inner)
        && from
            .tables
            .iter()
            .all(|t| t.system.is_none() && t.derived.is_none() && t.function.is_none());
    let measured: Vec<Option<std::sync::Arc<TableStats>>> =
        from.tables.iter().map(|t| t.table.stats()).collect();
    if !plain || measured.iter().all(Option::is_none) {
        return (from, filter, None);
    }
    let mut starts = Vec::with_capacity(n);
    let mut at = 0;
    for t in &from.tables {
        starts.push(at);
        at += t.def.columns.len();
    }
    let table_of = |col: usize| starts.iter().rposition(|&s| s <= col).unwrap_or(0);
    let mut conjuncts = Vec::new();
    for s in &from.steps {
        if let Some(on) = &s.on {
            split_conjuncts(on, &mut conjuncts);
        }
    }
    if let Some(f) = &filter {
        split_conjuncts(f, &mut conjuncts);
    }
    // Each table's own conditions, and the equalities between two tables.
    let mut own: Vec<Vec<Expr>> = vec![Vec::new(); n];
    let mut conditions = JoinConditions::default();
    let tables_read = |e: &Expr| {
        let mut mask = 0u32;
        e.visit(&mut |n| {
            if let Expr::Column(c) = n {
                mask |= 1 << table_of(*c);
            }
        });
        mask
    };
    for c in &conjuncts {
        if let Expr::Cmp(CmpOp::Eq, a, b) = c {
            if let (Expr::Column(x), Expr::Column(y)) = (a.as_ref(), b.as_ref()) {
                let (tx, ty) = (table_of(*x), table_of(*y));
                if tx != ty {
                    conditions.edges.push(JoinEdge {
                        left: (tx, x - starts[tx]),
                        right: (ty, y - starts[ty]),
                    });
                    continue;
                }
            }
            // A column given by an expression of other tables (`t.tid = a.aid % 10 + 1`).
            let mut given = false;
            for (col, other) in [(a, b), (b, a)] {
                if let Expr::Column(k) = col.as_ref() {
                    let t = table_of(*k);
                    let needs = tables_read(other);
                    if needs != 0 && needs & (1 << t) == 0 && !other.is_row_independent() {
                        conditions.given.push(KeyGiven {
                            column: (t, k - starts[t]),
                            needs,
                        });
                        given = true;
                    }
                }
            }
            if given {
                continue;
            }
        }
        if c.is_row_independent() {
            continue;
        }
        let t = table_of(first_column(c).unwrap_or(0));
        let end = starts[t] + from.tables[t].def.columns.len();
        if c.reads_only(&|col| (starts[t]..end).contains(&col)) {
            own[t].push(c.map_columns(&|col| col - starts[t]));
        }
    }
    let facts: Vec<JoinTable> = from
        .tables
        .iter()
        .zip(&measured)
        .zip(&own)
        .map(|((t, m), conds)| {
            let def = &t.def;
            let rows = m.as_ref().map_or(stats::UNKNOWN_ROWS, |s| s.rows.max(1.0));
            let distinct: Vec<f64> = (0..def.columns.len())
                .map(|c| stats::column_distinct(def, m.as_deref(), rows, c))
                .collect();
            let selectivity = conds
                .iter()
                .map(|c| stats::selectivity(c, def, m.as_deref(), rows, &distinct))
                .product::<f64>()
                .clamp(0.0, 1.0);
            let indexes = t.table.indexes();
            let access = super::access_path(def, &indexes, and_all(conds.clone()).as_ref());
            JoinTable {
                rows,
                selectivity,
                keyed_scan: !matches!(access, Access::Full),
                primary_key: def.primary_key.clone(),
                index_leads: indexes
                    .iter()
                    .filter_map(|i| i.def.columns.first().copied())
                    .collect(),
                distinct,
            }
        })
        .collect();
    let from_order: Vec<usize> = (0..n).collect();
    let (order, cost) = stats::best_join_order(&facts, &conditions);
    if order == from_order
        || cost >= REORDER_GAIN * stats::join_cost(&facts, &conditions, &from_order)
    {
        return (from, filter, None);
    }
    // The new layout: the tables' columns in the new order.
    let mut layout = vec![0; at];
    let mut new_start = vec![0; n];
    let mut next = 0;
    for &t in &order {
        new_start[t] = next;
        for c in 0..from.tables[t].def.columns.len() {
            layout[starts[t] + c] = next + c;
        }
        next += from.tables[t].def.columns.len();
    }
    let moved = |e: &Expr| e.map_columns(&|c| layout[c]);
    let FromPlan {
        tables,
        scope,
        star,
        origins,
        ..
    } = from;
    let mut columns = Vec::with_capacity(at);
    for &t in &order {
        let end = starts[t] + tables[t].def.columns.len();
        columns.extend(scope.columns[starts[t]..end].iter().cloned());
    }
    let mut slots: Vec<Option<super::FromTable>> = tables.into_iter().map(Some).collect();
    let tables: Vec<super::FromTable> = order.iter().filter_map(|&t| slots[t].take()).collect();
    let steps = order[1..]
        .iter()
        .map(|&t| PendingJoin {
            kind: JoinKind::Inner,
            on: None,
            outer_width: new_start[t],
        })
        .collect();
    let reordered = FromPlan {
        tables,
        scope: Scope {
            columns,
            relations: scope.relations,
        },
        star,
        origins,
        steps,
        item_start: 0,
    };
    let filter = and_all(conjuncts.iter().map(moved).collect());
    (reordered, filter, Some(layout))
}

/// The first column an expression reads.
fn first_column(e: &Expr) -> Option<usize> {
    let mut first = None;
    e.visit(&mut |n| {
        if let (Expr::Column(c), None) = (n, first) {
            first = Some(*c);
        }
    });
    first
}
