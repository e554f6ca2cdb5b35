//! EXPLAIN: the plan a statement runs, drawn as PostgreSQL draws a plan with
//! `COSTS OFF` (SteadyDB's planner chooses by rules, not by costs, so it has none to
//! show): one node per line, its details below it, its inputs as `->` branches.
//!
//! EXPLAIN ANALYZE runs the statement with an [`Actuals`] in the executor, which counts
//! per node the times it ran and the rows it produced (and a scan's rows its filter
//! removed); each node is drawn with them as PostgreSQL draws them with `TIMING OFF`
//! (`actual rows=N loops=L`, N per loop), or `never executed`. A node is known by its address in the plan (and, for a query's
//! steps above its rows, which step).
//!
//! The nodes are SteadyDB's own steps under PostgreSQL's names: a primary key lookup or
//! range is an `Index Scan` of the table's `_pkey`, a secondary index an `Index Scan`
//! of it, a join by key lookup a `Nested Loop` over an `Index Scan`, a hash join a
//! `Hash Join` over a `Hash`; grouping, DISTINCT and set operations hash
//! (`HashAggregate`, `HashSetOp`).

use super::expr::Expr;
use super::plan::{
    Access, JoinKind, JoinStep, JoinStrategy, Plan, ScanPlan, SelectPlan, SetOp, TableFunctionKind,
};
use crate::types::Value;
use rustc_hash::FxHashMap;

/// What EXPLAIN ANALYZE measured: per plan node, the times it ran and the rows it
/// produced.
#[derive(Default)]
pub struct Actuals {
    counts: FxHashMap<(usize, Stage), Actual>,
}

/// How many times a node ran, and the rows it produced in all.
#[derive(Clone, Copy, Default)]
pub struct Actual {
    pub loops: u64,
    pub rows: u64,
}

/// Which of a query's steps a count is of: a scan's or join's rows (`Output`, also a
/// query's returned rows), or those of the steps between its rows and its result.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum Stage {
    Output,
    /// The rows grouping (or the window functions, or the input itself) gave.
    Emitted,
    /// Those left after DISTINCT.
    Distinct,
    /// Those left after DISTINCT ON.
    Unique,
    /// A scan's rows its filter removed.
    Removed,
}

/// A plan node's identity in [`Actuals`]: its address (the plan is not moved while it
/// runs and is drawn).
pub fn node_id<T>(node: &T) -> usize {
    node as *const T as usize
}

impl Actuals {
    /// The node started a run (a scan, once per outer row of a lookup join).
    pub fn loop_started(&mut self, node: usize) {
        self.counts.entry((node, Stage::Output)).or_default().loops += 1;
    }

    /// An INSERT, UPDATE or DELETE (`node`) ran once, returning `rows` (RETURNING's).
    pub fn add_statement(&mut self, node: usize, rows: u64) {
        self.loop_started(node);
        self.add_rows(node, Stage::Output, rows);
    }

    pub fn add_rows(&mut self, node: usize, stage: Stage, rows: u64) {
        self.counts.entry((node, stage)).or_default().rows += rows;
    }

    /// A node's counts; a query's steps above its rows ran as often as it did.
    fn get(&self, node: usize, stage: Stage) -> Option<Actual> {
        let loops = self.counts.get(&(node, Stage::Output))?.loops;
        let rows = self.counts.get(&(node, stage)).map_or(0, |a| a.rows);
        Some(Actual { loops, rows })
    }
}

/// The counts EXPLAIN ANALYZE measured, when it did.
type Measured<'a> = Option<&'a Actuals>;

/// A node's counts as drawn after its title.
fn actual_text(actual: Option<Actual>) -> String {
    match actual {
        Some(a) if a.loops > 0 => {
            let per_loop = (a.rows as f64 / a.loops as f64).round() as u64;
            format!(" (actual rows={per_loop} loops={})", a.loops)
        }
        _ => " (never executed)".into(),
    }
}

/// A plan node as drawn: its title, its detail lines, its inputs.
struct Node {
    title: String,
    /// With ANALYZE, what was measured of it (None: not measured, as a wrapper node).
    actual: Option<Option<Actual>>,
    details: Vec<String>,
    children: Vec<Node>,
    /// A label drawn in place of an arrow (`SubPlan 1`), its one input below it.
    label: bool,
}

impl Node {
    fn new(title: impl Into<String>) -> Node {
        Node {
            title: title.into(),
            actual: None,
            details: Vec::new(),
            children: Vec::new(),
            label: false,
        }
    }

    /// With ANALYZE, the counts of plan node `node` at `stage`.
    fn measured(mut self, m: Measured, node: usize, stage: Stage) -> Node {
        if let Some(actuals) = m {
            self.actual = Some(actuals.get(node, stage));
        }
        self
    }

    fn detail(mut self, d: impl Into<String>) -> Node {
        self.details.push(d.into());
        self
    }

    fn child(mut self, c: Node) -> Node {
        self.children.push(c);
        self
    }

    /// The node's lines: the top one at column 0, its details 2 further; an input's
    /// arrow where its parent's details start, its details 6 past the arrow.
    fn draw(&self, arrow: Option<usize>, out: &mut Vec<String>) {
        if self.label {
            let at = arrow.unwrap_or(0);
            out.push(format!("{}{}", " ".repeat(at), self.title));
            for c in &self.children {
                c.draw(Some(at + 2), out);
            }
            return;
        }
        let title = match self.actual {
            Some(actual) => format!("{}{}", self.title, actual_text(actual)),
            None => self.title.clone(),
        };
        let inner = match arrow {
            None => {
                out.push(title);
                2
            }
            Some(a) => {
                out.push(format!("{}->  {title}", " ".repeat(a)));
                a + 6
            }
        };
        for d in &self.details {
            out.push(format!("{}{d}", " ".repeat(inner)));
        }
        for c in &self.children {
            c.draw(Some(inner), out);
        }
    }
}

/// The lines of EXPLAIN's output for `plan`; `actual`: with ANALYZE, what was measured
/// of each node and the milliseconds the statement took.
pub fn explain(plan: &Plan, actual: Option<(&Actuals, f64)>, summary: bool) -> Vec<String> {
    let m = actual.map(|(actuals, _)| actuals);
    let root = match plan {
        Plan::Select(sel) => select_node(sel, m),
        Plan::Insert(ins) => {
            let source = match &ins.source {
                super::plan::InsertSource::Values(rows) if rows.len() == 1 => {
                    let mut result = Node::new("Result");
                    if let Some(actuals) = m {
                        // It makes its one row each time the statement runs.
                        result.actual =
                            Some(actuals.get(node_id(plan), Stage::Output).map(|a| Actual {
                                loops: a.loops,
                                rows: a.loops,
                            }));
                    }
                    result
                }
                super::plan::InsertSource::Values(_) => Node::new("Values Scan on \"*VALUES*\""),
                super::plan::InsertSource::Select(sel) => select_node(sel, m),
            };
            Node::new(format!("Insert on {}", ins.def.name))
                .measured(m, node_id(plan), Stage::Output)
                .child(source)
        }
        Plan::Update(upd) => Node::new(format!("Update on {}", upd.scan.def.name))
            .measured(m, node_id(plan), Stage::Output)
            .child(scan_node(&upd.scan, m)),
        Plan::Delete(del) => Node::new(format!("Delete on {}", del.scan.def.name))
            .measured(m, node_id(plan), Stage::Output)
            .child(scan_node(&del.scan, m)),
        _ => Node::new("Utility Statement"),
    };
    let mut out = Vec::new();
    root.draw(None, &mut out);
    if let (Some((_, ms)), true) = (actual, summary) {
        out.push(format!("Execution Time: {ms:.3} ms"));
    }
    out
}

fn select_node(sel: &SelectPlan, m: Measured) -> Node {
    let id = node_id(sel);
    let mut node = match (&sel.set_op, &sel.source) {
        (Some(op), _) => set_op_node(op, m).measured(m, id, Stage::Emitted),
        (None, Some(source)) => {
            let mut node = scan_node(source, m);
            let mut names = scan_names(source, sel.joins.is_empty());
            for step in &sel.joins {
                names.extend(scan_names(&step.scan, false));
                node = join_node(node, step, &names, m);
            }
            node
        }
        (None, None) => Node::new("Result").measured(m, id, Stage::Emitted),
    };
    let names = row_names(sel);
    if let (Some(f), false) = (&sel.filter, sel.source.is_none()) {
        node = node.detail(format!("Filter: {}", expr_text(f, &names)));
    } else if let (Some(f), true) = (&sel.filter, sel.source.is_none()) {
        node = node.detail(format!("One-Time Filter: {}", expr_text(f, &names)));
    }
    if let Some(agg) = &sel.aggregation {
        node = if agg.keys.is_empty() {
            Node::new("Aggregate")
                .measured(m, id, Stage::Emitted)
                .child(node)
        } else {
            let keys: Vec<String> = agg
                .keys
                .iter()
                .map(|k| bare(&expr_text(k, &names)))
                .collect();
            Node::new("HashAggregate")
                .measured(m, id, Stage::Emitted)
                .detail(format!("Group Key: {}", keys.join(", ")))
                .child(node)
        };
    }
    if !sel.windows.is_empty() {
        node = Node::new("WindowAgg")
            .measured(m, id, Stage::Emitted)
            .child(node);
    }
    if sel.distinct {
        let row_names = match &sel.aggregation {
            Some(agg) => grouped_names(agg, &names),
            None => names.clone(),
        };
        let keys: Vec<String> = sel
            .projection
            .iter()
            .map(|e| bare(&expr_text(e, &row_names)))
            .collect();
        node = Node::new("HashAggregate")
            .measured(m, id, Stage::Distinct)
            .detail(format!("Group Key: {}", keys.join(", ")))
            .child(node);
    }
    let sorted = if sel.distinct {
        Stage::Distinct
    } else {
        Stage::Emitted
    };
    if !sel.order_by.is_empty() {
        let keys: Vec<String> = sel
            .order_by
            .iter()
            .map(|k| {
                let e = match (&k.expr, &sel.aggregation) {
                    (Expr::Column(i), None) if sel.set_op.is_none() => {
                        names.get(*i).cloned().unwrap_or_else(|| "?".into())
                    }
                    // Over a grouped row: its group keys, then its aggregates.
                    (e, Some(agg)) => bare(&expr_text(e, &grouped_names(agg, &names))),
                    (e, _) => bare(&expr_text(e, &names)),
                };
                if k.desc {
                    format!("{e} DESC")
                } else {
                    e
                }
            })
            .collect();
        node = Node::new("Sort")
            .measured(m, id, sorted)
            .detail(format!("Sort Key: {}", keys.join(", ")))
            .child(node);
    }
    if sel.distinct_on > 0 {
        node = Node::new("Unique")
            .measured(m, id, Stage::Unique)
            .child(node);
    }
    if sel.limit.is_some() || sel.offset.is_some() {
        node = Node::new("Limit")
            .measured(m, id, Stage::Output)
            .child(node);
    }
    if sel.row_lock.is_some() {
        node = Node::new("LockRows")
            .measured(m, id, Stage::Output)
            .child(node);
    }
    for (i, sub) in sel.subqueries.iter().enumerate() {
        let mut label = Node::new(format!("SubPlan {}", i + 1)).child(select_node(sub, m));
        label.label = true;
        node = node.child(label);
    }
    node
}

fn set_op_node(op: &super::plan::SetOpPlan, m: Measured) -> Node {
    let left = select_node(&op.left, m);
    let right = select_node(&op.right, m);
    match op.op {
        SetOp::RecursiveUnion(_) => Node::new("Recursive Union").child(left).child(right),
        SetOp::Union if op.all => Node::new("Append").child(left).child(right),
        SetOp::Union => {
            Node::new("HashAggregate").child(Node::new("Append").child(left).child(right))
        }
        SetOp::Intersect | SetOp::Except => {
            let what = match (op.op, op.all) {
                (SetOp::Intersect, false) => "Intersect",
                (SetOp::Intersect, true) => "Intersect All",
                (_, false) => "Except",
                (_, true) => "Except All",
            };
            Node::new(format!("HashSetOp {what}"))
                .child(Node::new("Append").child(left).child(right))
        }
    }
}

/// The names a scan's columns are shown by: bare for a lone table, qualified in joins.
fn scan_names(scan: &ScanPlan, lone: bool) -> Vec<String> {
    scan.def
        .columns
        .iter()
        .map(|c| {
            if lone {
                c.name.clone()
            } else {
                format!("{}.{}", scan.qualifier, c.name)
            }
        })
        .collect()
}

/// The names of the columns of a query's input row (its tables' in order).
fn row_names(sel: &SelectPlan) -> Vec<String> {
    let Some(source) = &sel.source else {
        return Vec::new();
    };
    let lone = sel.joins.is_empty();
    let mut names = scan_names(source, lone);
    for step in &sel.joins {
        names.extend(scan_names(&step.scan, false));
    }
    names
}

fn scan_node(scan: &ScanPlan, m: Measured) -> Node {
    scan_node_unmeasured(scan, m).measured(m, node_id(scan), Stage::Output)
}

fn scan_node_unmeasured(scan: &ScanPlan, m: Measured) -> Node {
    let names = scan_names(scan, true);
    // `on t`, or `on t x` when the query calls it x (as PostgreSQL shows an alias).
    let table = &if scan.qualifier == scan.def.name {
        scan.def.name.clone()
    } else {
        format!("{} {}", scan.def.name, scan.qualifier)
    };
    let mut node = if let Some(derived) = &scan.derived {
        let title = if derived.materialize {
            format!("CTE Scan on {table}")
        } else {
            format!("Subquery Scan on {table}")
        };
        Node::new(title).child(select_node(derived, m))
    } else if let Some(function) = &scan.function {
        Node::new(match function.kind {
            TableFunctionKind::Values { .. } => "Values Scan on \"*VALUES*\"".to_string(),
            TableFunctionKind::WorkTable(_) => format!("WorkTable Scan on {table}"),
            kind => match function_name(&kind) {
                Some(f) if f != scan.qualifier => {
                    format!("Function Scan on {f} {}", scan.qualifier)
                }
                Some(f) => format!("Function Scan on {f}"),
                None => format!("Function Scan on {table}"),
            },
        })
    } else {
        let pkey = scan
            .def
            .pkey_name
            .clone()
            .unwrap_or_else(|| format!("{}_pkey", scan.def.name));
        let key_names: Vec<String> = scan
            .def
            .primary_key
            .iter()
            .map(|&c| names.get(c).cloned().unwrap_or_default())
            .collect();
        match &scan.access {
            Access::Full => Node::new(format!("Seq Scan on {table}")),
            Access::Point(values) => {
                let conds: Vec<String> = key_names
                    .iter()
                    .zip(values)
                    .map(|(k, v)| format!("({k} = {})", expr_text(v, &[])))
                    .collect();
                Node::new(format!("Index Scan using {pkey} on {table}"))
                    .detail(format!("Index Cond: {}", and_text(conds)))
            }
            Access::Range { low, high } => {
                let k = key_names.first().cloned().unwrap_or_default();
                let conds = bounds(&k, low, high);
                let node = Node::new(format!("Index Scan using {pkey} on {table}"));
                if conds.is_empty() {
                    node
                } else {
                    node.detail(format!("Index Cond: {}", and_text(conds)))
                }
            }
            Access::Index {
                index,
                prefix,
                low,
                high,
            } => {
                let cols: Vec<String> = index
                    .def
                    .columns
                    .iter()
                    .map(|&c| names.get(c).cloned().unwrap_or_default())
                    .collect();
                let mut conds: Vec<String> = cols
                    .iter()
                    .zip(prefix)
                    .map(|(c, v)| format!("({c} = {})", expr_text(v, &[])))
                    .collect();
                if let Some(next) = cols.get(prefix.len()) {
                    conds.extend(bounds(next, low, high));
                }
                let node = Node::new(format!("Index Scan using {} on {table}", index.def.name));
                if conds.is_empty() {
                    node
                } else {
                    node.detail(format!("Index Cond: {}", and_text(conds)))
                }
            }
        }
    };
    if let Some(f) = &scan.filter {
        // What the index condition already says is not repeated as a filter.
        let covered: Vec<String> = node
            .details
            .iter()
            .filter_map(|d| d.strip_prefix("Index Cond: "))
            .flat_map(conjunct_texts)
            .collect();
        let mut parts = Vec::new();
        conjuncts(f, &mut parts);
        let rest: Vec<String> = parts
            .iter()
            .map(|p| expr_text(p, &names))
            .filter(|t| !covered.contains(t))
            .collect();
        if !rest.is_empty() {
            node = node.detail(format!("Filter: {}", and_text(rest)));
            if let Some(a) = m.and_then(|a| a.get(node_id(scan), Stage::Removed)) {
                // (As PostgreSQL's text format, not when none was.)
                if a.loops > 0 && a.rows > 0 {
                    let per_loop = (a.rows as f64 / a.loops as f64).round() as u64;
                    node = node.detail(format!("Rows Removed by Filter: {per_loop}"));
                }
            }
        }
    }
    node
}

fn conjuncts<'e>(e: &'e Expr, out: &mut Vec<&'e Expr>) {
    match e {
        Expr::And(a, b) => {
            conjuncts(a, out);
            conjuncts(b, out);
        }
        other => out.push(other),
    }
}

/// The conditions an `Index Cond` text joins with AND.
fn conjunct_texts(cond: &str) -> Vec<String> {
    let inner = match cond.strip_prefix("((").and_then(|c| c.strip_suffix("))")) {
        Some(body) => format!("({body})"),
        None => return vec![cond.to_string()],
    };
    inner.split(" AND ").map(str::to_string).collect()
}

fn bounds(column: &str, low: &Option<(Expr, bool)>, high: &Option<(Expr, bool)>) -> Vec<String> {
    let mut out = Vec::new();
    if let Some((e, inclusive)) = low {
        let op = if *inclusive { ">=" } else { ">" };
        out.push(format!("({column} {op} {})", expr_text(e, &[])));
    }
    if let Some((e, inclusive)) = high {
        let op = if *inclusive { "<=" } else { "<" };
        out.push(format!("({column} {op} {})", expr_text(e, &[])));
    }
    out
}

fn and_text(conds: Vec<String>) -> String {
    match conds.len() {
        1 => conds.into_iter().next().unwrap_or_default(),
        _ => format!("({})", conds.join(" AND ")),
    }
}

fn join_node(outer: Node, step: &JoinStep, names: &[String], m: Measured) -> Node {
    join_node_unmeasured(outer, step, names, m).measured(m, node_id(step), Stage::Output)
}

fn join_node_unmeasured(outer: Node, step: &JoinStep, names: &[String], m: Measured) -> Node {
    let kind = match step.kind {
        JoinKind::Inner => "",
        JoinKind::Left => " Left",
        JoinKind::Right => " Right",
        JoinKind::Full => " Full",
    };
    let mut inner = scan_node(&step.scan, m);
    match &step.strategy {
        JoinStrategy::Hash {
            outer_keys,
            inner_keys,
        } => {
            let inner_names: Vec<String> = scan_names(&step.scan, false);
            let conds: Vec<String> = outer_keys
                .iter()
                .zip(inner_keys)
                .map(|(o, i)| format!("({} = {})", expr_text(o, names), expr_text(i, &inner_names)))
                .collect();
            Node::new(format!("Hash{kind} Join"))
                .detail(format!("Hash Cond: {}", and_text(conds)))
                .child(outer)
                .child({
                    let hash = Node::new("Hash").measured(m, node_id(&step.scan), Stage::Output);
                    hash.child(inner)
                })
        }
        JoinStrategy::Lookup => {
            // The key comes from the outer row: shown over the joined row's names.
            match &step.scan.access {
                Access::Index { index, prefix, .. } => {
                    let inner_names = scan_names(&step.scan, true);
                    lookup_cond(&mut inner, &index.def.columns, prefix, &inner_names, names);
                }
                Access::Point(values) => {
                    let inner_names = scan_names(&step.scan, false);
                    let key = &step.scan.def.primary_key;
                    lookup_cond(&mut inner, key, values, &inner_names, names);
                }
                _ => {}
            }
            let node = Node::new(format!("Nested Loop{kind}"));
            let keyed = match &step.scan.access {
                Access::Point(_) => true,
                Access::Index { prefix, .. } => !prefix.is_empty(),
                _ => false,
            };
            let node = match &step.on {
                Some(on) if !keyed => node.detail(format!("Join Filter: {}", expr_text(on, names))),
                _ => node,
            };
            node.child(outer).child(inner)
        }
        JoinStrategy::NestedLoop => {
            let node = Node::new(format!("Nested Loop{kind}"));
            let node = match &step.on {
                Some(on) => node.detail(format!("Join Filter: {}", expr_text(on, names))),
                None => node,
            };
            node.child(outer).child(inner)
        }
    }
}

/// A lookup join's inner scan shows its key (`columns`, named by `inner_names`) equal to
/// `values` from the outer row (named by `names`).
fn lookup_cond(
    inner: &mut Node,
    columns: &[usize],
    values: &[Expr],
    inner_names: &[String],
    names: &[String],
) {
    let conds: Vec<String> = columns
        .iter()
        .zip(values)
        .map(|(&c, v)| {
            format!(
                "({} = {})",
                inner_names.get(c).cloned().unwrap_or_default(),
                expr_text(v, names)
            )
        })
        .collect();
    inner.details.retain(|d| !d.starts_with("Index Cond"));
    inner
        .details
        .insert(0, format!("Index Cond: {}", and_text(conds)));
}

/// The names of a grouped row's columns: its group keys, then its aggregates.
fn grouped_names(agg: &super::plan::Aggregation, names: &[String]) -> Vec<String> {
    let keys = agg.keys.iter().map(|k| bare(&expr_text(k, names)));
    let calls = agg.aggs.iter().map(|call| {
        let func = format!("{:?}", call.func).to_lowercase();
        match &call.arg {
            None => format!("{func}(*)"),
            Some(arg) => format!("{func}({})", bare(&expr_text(arg, names))),
        }
    });
    keys.chain(calls).collect()
}

/// The name of a function in FROM, as EXPLAIN names its scan.
fn function_name(kind: &TableFunctionKind) -> Option<&'static str> {
    Some(match kind {
        TableFunctionKind::GenerateSeries => "generate_series",
        TableFunctionKind::Unnest => "unnest",
        TableFunctionKind::GenerateSubscripts => "generate_subscripts",
        TableFunctionKind::PartitionAncestors => "pg_partition_ancestors",
        TableFunctionKind::ExpandArray(_) => "_pg_expandarray",
        TableFunctionKind::OptionsToTable => "pg_options_to_table",
        _ => return None,
    })
}

/// An expression without its outer parentheses (as a sort or group key is shown).
fn bare(text: &str) -> String {
    text.strip_prefix('(')
        .and_then(|t| t.strip_suffix(')'))
        .filter(|t| !t.contains('(') || t.starts_with('('))
        .unwrap_or(text)
        .to_string()
}

/// An expression as EXPLAIN shows it; `names`: the input row's column names.
fn expr_text(e: &Expr, names: &[String]) -> String {
    expr_text_at(e, names, 0)
}

fn expr_text_at(e: &Expr, names: &[String], depth: usize) -> String {
    if depth > 64 {
        return "...".into();
    }
    let go = |x: &Expr| expr_text_at(x, names, depth + 1);
    match e {
        Expr::Const(v) => const_text(v),
        Expr::Param(i) => format!("${}", i + 1),
        Expr::Column(i) => names
            .get(*i)
            .cloned()
            .unwrap_or_else(|| format!("${}", i + 1)),
        Expr::Outer(i) => format!("$outer{}", i + 1),
        Expr::Neg(x) => format!("(- {})", go(x)),
        Expr::Not(x) => format!("(NOT {})", go(x)),
        Expr::Arith(op, a, b) => format!("({} {} {})", go(a), op.symbol(), go(b)),
        Expr::Cmp(op, a, b) => format!("({} {} {})", go(a), op.symbol(), go(b)),
        Expr::And(a, b) => format!("({} AND {})", go(a), go(b)),
        Expr::Or(a, b) => format!("({} OR {})", go(a), go(b)),
        Expr::Concat(a, b) => format!("({} || {})", go(a), go(b)),
        Expr::IsNull(x, negated) => {
            format!("({} IS {}NULL)", go(x), if *negated { "NOT " } else { "" })
        }
        Expr::Cast(x, t) => format!("({})::{}", go(x), t.name()),
        Expr::Like {
            expr,
            pattern,
            negated,
            case_insensitive,
        } => {
            let op = match (negated, case_insensitive) {
                (false, false) => "~~",
                (true, false) => "!~~",
                (false, true) => "~~*",
                (true, true) => "!~~*",
            };
            format!("({} {op} {})", go(expr), go(pattern))
        }
        Expr::InList {
            expr,
            list,
            negated,
        } => {
            let items: Vec<String> = list.iter().map(go).collect();
            let op = if *negated { "<> ALL" } else { "= ANY" };
            format!("({} {op} ('{{{}}}'))", go(expr), items.join(","))
        }
        Expr::Func(f, args) => {
            let args: Vec<String> = args.iter().map(go).collect();
            format!("{}({})", format!("{f:?}").to_lowercase(), args.join(", "))
        }
        Expr::Subquery(_) => "(SubPlan)".into(),
        _ => "(...)".into(),
    }
}

fn const_text(v: &Value) -> String {
    match v {
        Value::Null => "NULL".into(),
        Value::Text(s) => format!("'{}'::text", s.replace('\'', "''")),
        Value::Bool(b) => b.to_string(),
        other => {
            let shown = crate::types::format_text(other);
            match other {
                Value::Int2(_) | Value::Int4(_) | Value::Int8(_) | Value::Numeric(_) => shown,
                _ => format!(
                    "'{}'::{}",
                    shown.replace('\'', "''"),
                    other.data_type().map_or("unknown".into(), |t| t.name())
                ),
            }
        }
    }
}
