//! EXPLAIN: the plan a statement runs, drawn as PostgreSQL draws a plan with
//! `COSTS OFF` (SteadyDB's planner chooses by rules, not by costs, so it has none to
//! show): one node per line, its details below it, its inputs as `->` branches.
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

/// A plan node as drawn: its title, its detail lines, its inputs.
struct Node {
    title: String,
    details: Vec<String>,
    children: Vec<Node>,
    /// A label drawn in place of an arrow (`SubPlan 1`), its one input below it.
    label: bool,
}

impl Node {
    fn new(title: impl Into<String>) -> Node {
        Node {
            title: title.into(),
            details: Vec::new(),
            children: Vec::new(),
            label: false,
        }
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
        let inner = match arrow {
            None => {
                out.push(self.title.clone());
                2
            }
            Some(a) => {
                out.push(format!("{}->  {}", " ".repeat(a), self.title));
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

/// The lines of EXPLAIN's output for `plan`; `actual_rows`: with ANALYZE, the rows
/// the statement returned (shown on the top node) and the milliseconds it took.
pub fn explain(plan: &Plan, actual: Option<(usize, f64)>, summary: bool) -> Vec<String> {
    let mut root = match plan {
        Plan::Select(sel) => select_node(sel),
        Plan::Insert(ins) => {
            let source = match &ins.source {
                super::plan::InsertSource::Values(rows) if rows.len() == 1 => Node::new("Result"),
                super::plan::InsertSource::Values(_) => Node::new("Values Scan on \"*VALUES*\""),
                super::plan::InsertSource::Select(sel) => select_node(sel),
            };
            Node::new(format!("Insert on {}", ins.def.name)).child(source)
        }
        Plan::Update(upd) => {
            Node::new(format!("Update on {}", upd.scan.def.name)).child(scan_node(&upd.scan))
        }
        Plan::Delete(del) => {
            Node::new(format!("Delete on {}", del.scan.def.name)).child(scan_node(&del.scan))
        }
        _ => Node::new("Utility Statement"),
    };
    if let Some((rows, _)) = actual {
        root.title = format!("{} (actual rows={rows} loops=1)", root.title);
    }
    let mut out = Vec::new();
    root.draw(None, &mut out);
    if let (Some((_, ms)), true) = (actual, summary) {
        out.push(format!("Execution Time: {ms:.3} ms"));
    }
    out
}

fn select_node(sel: &SelectPlan) -> Node {
    let mut node = match (&sel.set_op, &sel.source) {
        (Some(op), _) => set_op_node(op),
        (None, Some(source)) => {
            let mut node = scan_node(source);
            let mut names = scan_names(source, sel.joins.is_empty());
            for step in &sel.joins {
                names.extend(scan_names(&step.scan, false));
                node = join_node(node, step, &names);
            }
            node
        }
        (None, None) => Node::new("Result"),
    };
    let names = row_names(sel);
    if let (Some(f), false) = (&sel.filter, sel.source.is_none()) {
        node = node.detail(format!("Filter: {}", expr_text(f, &names)));
    } else if let (Some(f), true) = (&sel.filter, sel.source.is_none()) {
        node = node.detail(format!("One-Time Filter: {}", expr_text(f, &names)));
    }
    if let Some(agg) = &sel.aggregation {
        node = if agg.keys.is_empty() {
            Node::new("Aggregate").child(node)
        } else {
            let keys: Vec<String> = agg
                .keys
                .iter()
                .map(|k| bare(&expr_text(k, &names)))
                .collect();
            Node::new("HashAggregate")
                .detail(format!("Group Key: {}", keys.join(", ")))
                .child(node)
        };
    }
    if !sel.windows.is_empty() {
        node = Node::new("WindowAgg").child(node);
    }
    if sel.distinct {
        node = Node::new("HashAggregate").child(node);
    }
    if !sel.order_by.is_empty() {
        let keys: Vec<String> = sel
            .order_by
            .iter()
            .map(|k| {
                let e = match (&k.expr, &sel.aggregation) {
                    (Expr::Column(i), None) if sel.set_op.is_none() => {
                        names.get(*i).cloned().unwrap_or_else(|| "?".into())
                    }
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
            .detail(format!("Sort Key: {}", keys.join(", ")))
            .child(node);
    }
    if sel.distinct_on > 0 {
        node = Node::new("Unique").child(node);
    }
    if sel.limit.is_some() || sel.offset.is_some() {
        node = Node::new("Limit").child(node);
    }
    if sel.row_lock.is_some() {
        node = Node::new("LockRows").child(node);
    }
    for (i, sub) in sel.subqueries.iter().enumerate() {
        let mut label = Node::new(format!("SubPlan {}", i + 1)).child(select_node(sub));
        label.label = true;
        node = node.child(label);
    }
    node
}

fn set_op_node(op: &super::plan::SetOpPlan) -> Node {
    let left = select_node(&op.left);
    let right = select_node(&op.right);
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

fn scan_node(scan: &ScanPlan) -> Node {
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
        Node::new(title).child(select_node(derived))
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

fn join_node(outer: Node, step: &JoinStep, names: &[String]) -> Node {
    let kind = match step.kind {
        JoinKind::Inner => "",
        JoinKind::Left => " Left",
        JoinKind::Right => " Right",
        JoinKind::Full => " Full",
    };
    let mut inner = scan_node(&step.scan);
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
                .child(Node::new("Hash").child(inner))
        }
        JoinStrategy::Lookup => {
            // The key comes from the outer row: shown over the joined row's names.
            if let Access::Index { index, prefix, .. } = &step.scan.access {
                let inner_names = scan_names(&step.scan, true);
                let conds: Vec<String> = index
                    .def
                    .columns
                    .iter()
                    .zip(prefix)
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
            if let Access::Point(values) = &step.scan.access {
                let inner_names = scan_names(&step.scan, false);
                let conds: Vec<String> = step
                    .scan
                    .def
                    .primary_key
                    .iter()
                    .zip(values)
                    .map(|(&k, v)| {
                        format!(
                            "({} = {})",
                            inner_names.get(k).cloned().unwrap_or_default(),
                            expr_text(v, names)
                        )
                    })
                    .collect();
                inner.details.retain(|d| !d.starts_with("Index Cond"));
                inner
                    .details
                    .insert(0, format!("Index Cond: {}", and_text(conds)));
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
