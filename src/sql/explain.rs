//! EXPLAIN: the plan a statement runs, drawn as PostgreSQL draws a plan: one node per
//! line, its estimate after it (`(cost=S..T rows=R width=W)`, from `estimate.rs`; left
//! out with COSTS OFF), its details below it, its inputs as `->` branches. FORMAT JSON,
//! YAML and XML give the same nodes as one document ([`Doc`]), with the fields
//! PostgreSQL gives them (`Node Type`, `Parent Relationship`, `Relation Name`, ...) in
//! its order, so that tools that draw plans read them.
//!
//! EXPLAIN ANALYZE runs the statement with an [`Actuals`] in the executor, which counts
//! per node the times it ran and the rows it produced (and a scan's rows its filter
//! removed); each node is drawn with them as PostgreSQL draws them with `TIMING OFF`
//! (`actual rows=N loops=L`, N per loop), or `never executed`: a push-based executor
//! cannot separate one node's time from its inputs'. A node is known by its address in
//! the plan (and, for a query's steps above its rows, which step). The summary gives the
//! planning time, and with ANALYZE the execution time.
//!
//! The nodes are SteadyDB's own steps under PostgreSQL's names: a primary key lookup or
//! range is an `Index Scan` of the table's `_pkey`, a secondary index an `Index Scan`
//! of it, a join by key lookup a `Nested Loop` over an `Index Scan`, a hash join a
//! `Hash Join` over a `Hash`; grouping, DISTINCT and set operations hash
//! (`HashAggregate`, `HashSetOp`).

use super::estimate::{self, Estimate, Relation};
use super::expr::Expr;
use super::plan::{
    Access, JoinKind, JoinStep, JoinStrategy, Plan, ScanPlan, SelectPlan, SetOp, TableFunctionKind,
};
use super::statistics as stats;
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
            format!("(actual rows={} loops={})", per_loop(a), a.loops)
        }
        _ => "(never executed)".into(),
    }
}

/// Rows per run, as EXPLAIN ANALYZE shows them.
fn per_loop(a: Actual) -> u64 {
    (a.rows as f64 / a.loops.max(1) as f64).round() as u64
}

/// EXPLAIN's output formats.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    Text,
    Json,
    Yaml,
    Xml,
}

/// What EXPLAIN shows besides the plan's shape.
#[derive(Clone, Copy, Debug)]
pub struct Options {
    pub format: Format,
    /// Each node's estimate (option COSTS).
    pub costs: bool,
    /// The planning time, and with ANALYZE the execution time (option SUMMARY).
    pub summary: bool,
    /// Milliseconds the statement took to plan.
    pub planning_ms: f64,
}

/// A detail of a node, as the structured formats type it.
#[derive(Clone, Debug)]
enum DetailValue {
    Text(String),
    List(Vec<String>),
    Count(u64),
    /// Shown by the structured formats only.
    Flag(bool),
    /// A count shown by the structured formats only.
    HiddenCount(u64),
}

/// A plan node as drawn: its title, its detail lines, its inputs.
struct Node {
    title: String,
    /// For the structured formats: the node's type, and the fields that name what it
    /// does (before its relationship to its parent) and what it reads (after).
    node_type: String,
    how: Vec<(&'static str, String)>,
    target: Vec<(&'static str, String)>,
    estimate: Option<Estimate>,
    /// With ANALYZE, what was measured of it (None: not measured, as a wrapper node).
    actual: Option<Option<Actual>>,
    details: Vec<(&'static str, DetailValue)>,
    children: Vec<Node>,
    /// A label drawn in place of an arrow (`SubPlan 1`), its one input below it.
    label: bool,
}

impl Node {
    fn new(title: impl Into<String>) -> Node {
        let title = title.into();
        Node {
            node_type: title.clone(),
            title,
            how: Vec::new(),
            target: Vec::new(),
            estimate: None,
            actual: None,
            details: Vec::new(),
            children: Vec::new(),
            label: false,
        }
    }

    /// A node whose structured type differs from its title.
    fn typed(mut self, node_type: &str) -> Node {
        self.node_type = node_type.to_string();
        self
    }

    fn how(mut self, key: &'static str, value: impl Into<String>) -> Node {
        self.how.push((key, value.into()));
        self
    }

    fn target(mut self, key: &'static str, value: impl Into<String>) -> Node {
        self.target.push((key, value.into()));
        self
    }

    fn estimated(mut self, e: Estimate) -> Node {
        self.estimate = Some(e);
        self
    }

    /// The node's estimate (a label's: its input's).
    fn est(&self) -> Estimate {
        self.estimate
            .unwrap_or_else(|| estimate::computed_rows(1.0, 0, 1.0, 0.0))
    }

    /// With ANALYZE, the counts of plan node `node` at `stage`.
    fn measured(mut self, m: Measured, node: usize, stage: Stage) -> Node {
        if let Some(actuals) = m {
            self.actual = Some(actuals.get(node, stage));
        }
        self
    }

    fn detail(mut self, key: &'static str, text: impl Into<String>) -> Node {
        self.details.push((key, DetailValue::Text(text.into())));
        self
    }

    fn detail_value(mut self, key: &'static str, value: DetailValue) -> Node {
        self.details.push((key, value));
        self
    }

    fn child(mut self, c: Node) -> Node {
        self.children.push(c);
        self
    }

    /// The node's lines: the top one at column 0, its details 2 further; an input's
    /// arrow where its parent's details start, its details 6 past the arrow.
    fn draw(&self, arrow: Option<usize>, costs: bool, out: &mut Vec<String>) {
        if self.label {
            let at = arrow.unwrap_or(0);
            out.push(format!("{}{}", " ".repeat(at), self.title));
            for c in &self.children {
                c.draw(Some(at + 2), costs, out);
            }
            return;
        }
        let mut title = self.title.clone();
        if let (Some(e), true) = (self.estimate, costs) {
            title = format!("{title}  {}", e.text());
        }
        if let Some(actual) = self.actual {
            title = format!("{title} {}", actual_text(actual));
        }
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
        for (key, value) in &self.details {
            let shown = match value {
                DetailValue::Text(t) => t.clone(),
                DetailValue::List(items) => items.join(", "),
                DetailValue::Count(n) => n.to_string(),
                DetailValue::Flag(_) | DetailValue::HiddenCount(_) => continue,
            };
            out.push(format!("{}{key}: {shown}", " ".repeat(inner)));
        }
        for c in &self.children {
            c.draw(Some(inner), costs, out);
        }
    }

    /// The node as a structured document's object: its fields in PostgreSQL's order,
    /// `relationship` to its parent, its inputs under "Plans".
    fn fields(
        &self,
        relationship: Option<&str>,
        subplan: Option<&str>,
        o: &Options,
    ) -> Vec<(String, Doc)> {
        let text = |s: &str| Doc::Text(s.to_string());
        let mut f: Vec<(String, Doc)> = vec![("Node Type".into(), text(&self.node_type))];
        for (k, v) in &self.how {
            f.push((k.to_string(), text(v)));
        }
        if let Some(r) = relationship {
            f.push(("Parent Relationship".into(), text(r)));
        }
        if let Some(name) = subplan {
            f.push(("Subplan Name".into(), text(name)));
        }
        f.push(("Parallel Aware".into(), Doc::Bool(false)));
        f.push(("Async Capable".into(), Doc::Bool(false)));
        for (k, v) in &self.target {
            f.push((k.to_string(), text(v)));
        }
        if let (Some(e), true) = (self.estimate, o.costs) {
            f.push((
                "Startup Cost".into(),
                Doc::Number(format!("{:.2}", e.startup)),
            ));
            f.push(("Total Cost".into(), Doc::Number(format!("{:.2}", e.total))));
            f.push(("Plan Rows".into(), Doc::Number(e.shown_rows().to_string())));
            f.push((
                "Plan Width".into(),
                Doc::Number(format!("{}", e.width.round() as u64)),
            ));
        }
        if let Some(actual) = self.actual {
            let (rows, loops) = match actual {
                Some(a) if a.loops > 0 => (per_loop(a), a.loops),
                _ => (0, 0),
            };
            f.push(("Actual Rows".into(), Doc::Number(rows.to_string())));
            f.push(("Actual Loops".into(), Doc::Number(loops.to_string())));
        }
        for (k, v) in &self.details {
            let doc = match v {
                DetailValue::Text(t) => text(t),
                DetailValue::List(items) => Doc::List(items.iter().map(|i| text(i)).collect()),
                DetailValue::Count(n) | DetailValue::HiddenCount(n) => Doc::Number(n.to_string()),
                DetailValue::Flag(b) => Doc::Bool(*b),
            };
            f.push((k.to_string(), doc));
        }
        let mut plans = Vec::new();
        for (i, c) in self.children.iter().enumerate() {
            let plan = if c.label {
                // A subplan: the label names the plan below it.
                match c.children.first() {
                    Some(sub) => sub.fields(Some("SubPlan"), Some(&c.title), o),
                    None => continue,
                }
            } else {
                let relationship = match (self.node_type.as_str(), i) {
                    ("Append", _) => "Member",
                    ("Subquery Scan", _) => "Subquery",
                    ("CTE Scan", _) => "InitPlan",
                    (_, 0) => "Outer",
                    _ => "Inner",
                };
                c.fields(Some(relationship), None, o)
            };
            plans.push(Doc::Object(plan));
        }
        if !plans.is_empty() {
            f.push(("Plans".into(), Doc::List(plans)));
        }
        f
    }
}

/// A value of EXPLAIN's structured output.
enum Doc {
    Text(String),
    /// A number, already formatted.
    Number(String),
    Bool(bool),
    List(Vec<Doc>),
    Object(Vec<(String, Doc)>),
}

impl Doc {
    fn json(&self, indent: usize, out: &mut String) {
        let pad = |n: usize| " ".repeat(n);
        match self {
            Doc::Text(t) => out.push_str(&json_string(t)),
            Doc::Number(n) => out.push_str(n),
            Doc::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
            Doc::List(items) if items.is_empty() => out.push_str("[]"),
            Doc::List(items) => {
                // A list of plain values stays on one line, as PostgreSQL writes it.
                if items
                    .iter()
                    .all(|i| !matches!(i, Doc::Object(_) | Doc::List(_)))
                {
                    out.push('[');
                    for (n, item) in items.iter().enumerate() {
                        if n > 0 {
                            out.push_str(", ");
                        }
                        item.json(indent, out);
                    }
                    out.push(']');
                    return;
                }
                out.push_str("[\n");
                for (n, item) in items.iter().enumerate() {
                    if n > 0 {
                        out.push_str(",\n");
                    }
                    out.push_str(&pad(indent + 2));
                    item.json(indent + 2, out);
                }
                out.push('\n');
                out.push_str(&pad(indent));
                out.push(']');
            }
            Doc::Object(fields) => {
                out.push_str("{\n");
                for (n, (k, v)) in fields.iter().enumerate() {
                    if n > 0 {
                        out.push_str(",\n");
                    }
                    out.push_str(&format!("{}{}: ", pad(indent + 2), json_string(k)));
                    v.json(indent + 2, out);
                }
                out.push('\n');
                out.push_str(&pad(indent));
                out.push('}');
            }
        }
    }

    /// YAML as PostgreSQL writes it: `key: value` lines, list items after `- `.
    fn yaml_fields(fields: &[(String, Doc)], indent: usize, first_prefix: &str, out: &mut String) {
        for (n, (k, v)) in fields.iter().enumerate() {
            let lead = if n == 0 {
                first_prefix.to_string()
            } else {
                " ".repeat(indent)
            };
            match v {
                Doc::List(items) if items.is_empty() => {
                    out.push_str(&format!("{lead}{}: \n", k));
                }
                Doc::List(items) => {
                    out.push_str(&format!("{lead}{}: \n", k));
                    for item in items {
                        match item {
                            Doc::Object(inner) => {
                                let prefix = format!("{}- ", " ".repeat(indent + 2));
                                Doc::yaml_fields(inner, indent + 4, &prefix, out);
                            }
                            other => {
                                out.push_str(&format!(
                                    "{}- {}\n",
                                    " ".repeat(indent + 2),
                                    other.yaml_scalar()
                                ));
                            }
                        }
                    }
                }
                Doc::Object(inner) => {
                    out.push_str(&format!("{lead}{}: \n", k));
                    let prefix = " ".repeat(indent + 2);
                    Doc::yaml_fields(inner, indent + 2, &prefix, out);
                }
                scalar => out.push_str(&format!("{lead}{}: {}\n", k, scalar.yaml_scalar())),
            }
        }
    }

    fn yaml_scalar(&self) -> String {
        match self {
            // (PostgreSQL quotes every string in YAML as in JSON.)
            Doc::Text(t) => json_string(t),
            Doc::Number(n) => n.clone(),
            Doc::Bool(b) => b.to_string(),
            _ => String::new(),
        }
    }

    fn xml(&self, name: &str, indent: usize, out: &mut String) {
        let pad = " ".repeat(indent);
        let tag = name.replace(' ', "-");
        match self {
            Doc::Text(t) => out.push_str(&format!("{pad}<{tag}>{}</{tag}>\n", xml_escape(t))),
            Doc::Number(n) => out.push_str(&format!("{pad}<{tag}>{n}</{tag}>\n")),
            Doc::Bool(b) => out.push_str(&format!("{pad}<{tag}>{b}</{tag}>\n")),
            Doc::List(items) if items.is_empty() => {
                out.push_str(&format!("{pad}<{tag}>\n{pad}</{tag}>\n"))
            }
            Doc::List(items) => {
                out.push_str(&format!("{pad}<{tag}>\n"));
                for item in items {
                    match item {
                        Doc::Object(_) => item.xml("Plan", indent + 2, out),
                        other => other.xml("Item", indent + 2, out),
                    }
                }
                out.push_str(&format!("{pad}</{tag}>\n"));
            }
            Doc::Object(fields) => {
                out.push_str(&format!("{pad}<{tag}>\n"));
                for (k, v) in fields {
                    v.xml(k, indent + 2, out);
                }
                out.push_str(&format!("{pad}</{tag}>\n"));
            }
        }
    }
}

fn json_string(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for ch in s.chars() {
        match ch {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

fn xml_escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// EXPLAIN's output for `plan`, one row per text line (one row in the structured
/// formats); `actual`: with ANALYZE, what was measured of each node and the
/// milliseconds the statement took.
pub fn explain(plan: &Plan, options: &Options, actual: Option<(&Actuals, f64)>) -> Vec<String> {
    let m = actual.map(|(actuals, _)| actuals);
    let root = plan_node(plan, m);
    let planning = options.summary.then_some(options.planning_ms);
    let execution = actual.filter(|_| options.summary).map(|(_, ms)| ms);
    match options.format {
        Format::Text => {
            let mut out = Vec::new();
            root.draw(None, options.costs, &mut out);
            if let Some(ms) = planning {
                out.push(format!("Planning Time: {ms:.3} ms"));
            }
            if let Some(ms) = execution {
                out.push(format!("Execution Time: {ms:.3} ms"));
            }
            out
        }
        format => {
            let mut top = vec![(
                "Plan".to_string(),
                Doc::Object(root.fields(None, None, options)),
            )];
            if let Some(ms) = planning {
                top.push(("Planning Time".into(), Doc::Number(format!("{ms:.3}"))));
            }
            if actual.is_some() {
                top.push(("Triggers".into(), Doc::List(Vec::new())));
            }
            if let Some(ms) = execution {
                top.push(("Execution Time".into(), Doc::Number(format!("{ms:.3}"))));
            }
            let mut out = String::new();
            match format {
                Format::Json => Doc::List(vec![Doc::Object(top)]).json(0, &mut out),
                Format::Yaml => Doc::yaml_fields(&top, 2, "- ", &mut out),
                _ => {
                    out.push_str("<explain xmlns=\"http://www.postgresql.org/2009/explain\">\n");
                    out.push_str("  <Query>\n");
                    for (k, v) in &top {
                        v.xml(k, 4, &mut out);
                    }
                    out.push_str("  </Query>\n</explain>");
                }
            }
            vec![out.trim_end_matches('\n').to_string()]
        }
    }
}

fn plan_node(plan: &Plan, m: Measured) -> Node {
    match plan {
        Plan::Select(sel) => select_node(sel, m),
        Plan::Insert(ins) => {
            let width = ins.def.columns.len() as f64 * 4.0;
            let source = match &ins.source {
                super::plan::InsertSource::Values(rows) if rows.len() == 1 => {
                    let mut result = Node::new("Result").estimated(estimate::result(width));
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
                super::plan::InsertSource::Values(rows) => {
                    let n = rows.len() as f64;
                    Node::new("Values Scan on \"*VALUES*\"")
                        .typed("Values Scan")
                        .target("Alias", "*VALUES*")
                        .estimated(estimate::computed_rows(n, 0, n, width))
                }
                super::plan::InsertSource::Select(sel) => select_node(sel, m),
            };
            let e = estimate::modify(&source.est());
            Node::new(format!("Insert on {}", ins.def.name))
                .typed("ModifyTable")
                .how("Operation", "Insert")
                .target("Relation Name", ins.def.name.clone())
                .target("Alias", ins.def.name.clone())
                .estimated(e)
                .measured(m, node_id(plan), Stage::Output)
                .child(source)
        }
        Plan::Update(upd) => modify_node("Update", &upd.scan, node_id(plan), m),
        Plan::Delete(del) => modify_node("Delete", &del.scan, node_id(plan), m),
        _ => Node::new("Utility Statement"),
    }
}

fn modify_node(operation: &str, scan: &ScanPlan, id: usize, m: Measured) -> Node {
    let all = vec![true; scan.def.columns.len()];
    let (input, _) = scan_node(scan, m, &all);
    Node::new(format!("{operation} on {}", scan.def.name))
        .typed("ModifyTable")
        .how("Operation", operation)
        .target("Relation Name", scan.def.name.clone())
        .target("Alias", scan.qualifier.clone())
        .estimated(estimate::modify(&input.est()))
        .measured(m, id, Stage::Output)
        .child(input)
}

/// What the estimates know of a query's joined row: the relation each table's columns
/// come from, and where they start.
struct RowFacts {
    relations: Vec<Relation>,
    starts: Vec<usize>,
}

impl RowFacts {
    fn origin(&self, column: usize) -> Option<(&Relation, usize)> {
        let r = self.starts.iter().rposition(|&s| s <= column)?;
        Some((self.relations.get(r)?, column - self.starts[r]))
    }

    /// Distinct values of an expression over the joined row.
    fn distinct(&self, e: &Expr) -> f64 {
        match e {
            Expr::Column(c) => self
                .origin(*c)
                .map_or(estimate::DEFAULT_NUM_DISTINCT, |(r, col)| r.distinct(col)),
            Expr::Const(_) => 1.0,
            _ => estimate::DEFAULT_NUM_DISTINCT,
        }
    }

    /// The width of an expression's value over the joined row.
    fn width(&self, e: &Expr) -> f64 {
        match e {
            Expr::Column(c) => self.origin(*c).map_or(8.0, |(r, col)| r.column_width(col)),
            Expr::Const(v) => v.data_type().map_or(8.0, |t| estimate::type_width(&t)),
            Expr::Cast(_, t) => estimate::type_width(t),
            _ => 8.0,
        }
    }

    /// The share of joined rows a condition over them keeps: an equality of two
    /// columns keeps one in the larger number of distinct values, anything else the
    /// default share.
    fn join_selectivity(&self, condition: &Expr) -> (f64, usize) {
        let mut parts = Vec::new();
        conjuncts(condition, &mut parts);
        let share = parts
            .iter()
            .map(|p| match p {
                Expr::Cmp(super::expr::CmpOp::Eq, a, b) => {
                    1.0 / self.distinct(a).max(self.distinct(b)).max(1.0)
                }
                _ => stats::DEFAULT_RANGE_SEL,
            })
            .product();
        (share, parts.len())
    }
}

/// Which columns of a query's joined row it reads (a scan passes on only those).
fn read_columns(sel: &SelectPlan, width: usize) -> Vec<bool> {
    let mut read = vec![false; width];
    let layout = sel.join_layout.as_deref();
    let mut mark_at = |e: &Expr, shift: usize, from_order: bool| {
        e.visit(&mut |n| {
            if let Expr::Column(c) = n {
                let c = c + shift;
                let c = match (from_order, layout) {
                    (true, Some(l)) => l.get(c).copied().unwrap_or(c),
                    _ => c,
                };
                if let Some(r) = read.get_mut(c) {
                    *r = true;
                }
            }
        })
    };
    // Above the join, the row is in FROM's order.
    let grouped = sel.aggregation.is_some();
    for e in &sel.projection {
        if !grouped {
            mark_at(e, 0, true);
        }
    }
    if !grouped {
        for k in &sel.order_by {
            mark_at(&k.expr, 0, true);
        }
    }
    if let Some(agg) = &sel.aggregation {
        for k in &agg.keys {
            mark_at(k, 0, true);
        }
        for call in &agg.aggs {
            for e in call.arg.iter().chain(&call.delimiter) {
                mark_at(e, 0, true);
            }
            for k in &call.order_by {
                mark_at(&k.expr, 0, true);
            }
        }
    }
    for w in &sel.windows {
        for e in w.arg.iter().chain(&w.extra).chain(&w.partition_by) {
            mark_at(e, 0, true);
        }
        for k in &w.order_by {
            mark_at(&k.expr, 0, true);
        }
    }
    // The join's own conditions, in the join's order.
    if let Some(f) = &sel.filter {
        mark_at(f, 0, false);
    }
    for step in &sel.joins {
        if let Some(on) = &step.on {
            mark_at(on, 0, false);
        }
        if let JoinStrategy::Hash {
            outer_keys,
            inner_keys,
        } = &step.strategy
        {
            for k in outer_keys {
                mark_at(k, 0, false);
            }
            for k in inner_keys {
                mark_at(k, step.outer_width, false);
            }
        }
        let lookup = match &step.scan.access {
            Access::Point(values) => values.as_slice(),
            Access::Index { prefix, .. } => prefix.as_slice(),
            _ => &[],
        };
        for v in lookup {
            mark_at(v, 0, false);
        }
    }
    read
}

fn select_node(sel: &SelectPlan, m: Measured) -> Node {
    let id = node_id(sel);
    let mut facts = RowFacts {
        relations: Vec::new(),
        starts: Vec::new(),
    };
    let mut node = match (&sel.set_op, &sel.source) {
        (Some(op), _) => set_op_node(op, m).measured(m, id, Stage::Emitted),
        (None, Some(source)) => {
            let width = source.def.columns.len()
                + sel
                    .joins
                    .iter()
                    .map(|j| j.scan.def.columns.len())
                    .sum::<usize>();
            let read = read_columns(sel, width);
            let (mut node, relation) = scan_node(source, m, &read);
            facts.starts.push(0);
            facts.relations.push(relation);
            let mut names = scan_names(source, sel.joins.is_empty());
            for step in &sel.joins {
                names.extend(scan_names(&step.scan, false));
                let start = step.outer_width;
                let end = start + step.scan.def.columns.len();
                let (inner, relation) =
                    scan_node(&step.scan, m, read.get(start..end).unwrap_or(&[]));
                facts.starts.push(start);
                facts.relations.push(relation);
                node = join_node(node, inner, step, &names, &facts, m);
            }
            node
        }
        (None, None) => Node::new("Result")
            .estimated(estimate::result(0.0))
            .measured(m, id, Stage::Emitted),
    };
    let names = row_names(sel);
    if let (Some(f), false) = (&sel.filter, sel.source.is_none()) {
        let (share, quals) = facts.join_selectivity(f);
        node.estimate = Some(node.est().filtered(share, quals));
        node = node.detail("Filter", expr_text(f, &names));
    } else if let (Some(f), true) = (&sel.filter, sel.source.is_none()) {
        node = node.detail("One-Time Filter", expr_text(f, &names));
    }
    // The widths of a grouped row's columns: its keys', then its aggregates'.
    let mut grouped_widths = Vec::new();
    if let Some(agg) = &sel.aggregation {
        let input = node.est();
        grouped_widths = agg.keys.iter().map(|k| facts.width(k)).collect();
        grouped_widths.extend(agg.aggs.iter().map(|_| 8.0));
        let width: f64 = grouped_widths.iter().sum();
        node = if agg.keys.is_empty() {
            Node::new("Aggregate")
                .how("Strategy", "Plain")
                .how("Partial Mode", "Simple")
                .estimated(estimate::aggregate(&input, agg.aggs.len(), width))
                .measured(m, id, Stage::Emitted)
                .child(node)
        } else {
            let keys: Vec<String> = agg
                .keys
                .iter()
                .map(|k| bare(&expr_text(k, &names)))
                .collect();
            let groups = estimate::groups(agg.keys.iter().map(|k| facts.distinct(k)), input.rows);
            let e = estimate::hash_aggregate(&input, agg.keys.len(), agg.aggs.len(), groups, width);
            Node::new("HashAggregate")
                .typed("Aggregate")
                .how("Strategy", "Hashed")
                .how("Partial Mode", "Simple")
                .estimated(e)
                .measured(m, id, Stage::Emitted)
                .detail_value("Group Key", DetailValue::List(keys))
                .detail_value("Planned Partitions", DetailValue::HiddenCount(0))
                .child(node)
        };
        if let Some(having) = &agg.having {
            let e = node.est().filtered(stats::DEFAULT_RANGE_SEL, 1);
            node = node
                .estimated(e)
                .detail("Filter", expr_text(having, &grouped_names(agg, &names)));
        }
    }
    if !sel.windows.is_empty() {
        let input = node.est();
        let width = input.width + 8.0 * sel.windows.len() as f64;
        node = Node::new("WindowAgg")
            .estimated(estimate::per_row(&input, sel.windows.len() as f64, width))
            .measured(m, id, Stage::Emitted)
            .child(node);
    }
    // The width of the rows the query returns.
    let projected: f64 = sel
        .projection
        .iter()
        .map(|e| match (&sel.aggregation, e) {
            (Some(_), Expr::Column(c)) => grouped_widths.get(*c).copied().unwrap_or(8.0),
            (Some(_), _) => 8.0,
            (None, e) => match (e, &sel.join_layout) {
                (Expr::Column(c), Some(l)) => {
                    facts.width(&Expr::Column(l.get(*c).copied().unwrap_or(*c)))
                }
                (e, _) => facts.width(e),
            },
        })
        .sum();
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
        let input = node.est();
        let groups = match &sel.aggregation {
            Some(_) => input.rows,
            None => estimate::groups(sel.projection.iter().map(|e| facts.distinct(e)), input.rows),
        };
        let e = estimate::hash_aggregate(&input, keys.len(), 0, groups, projected);
        node = Node::new("HashAggregate")
            .typed("Aggregate")
            .how("Strategy", "Hashed")
            .how("Partial Mode", "Simple")
            .estimated(e)
            .measured(m, id, Stage::Distinct)
            .detail_value("Group Key", DetailValue::List(keys))
            .detail_value("Planned Partitions", DetailValue::HiddenCount(0))
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
        let e = estimate::sort(&node.est());
        node = Node::new("Sort")
            .estimated(e)
            .measured(m, id, sorted)
            .detail_value("Sort Key", DetailValue::List(keys))
            .child(node);
    }
    if sel.distinct_on > 0 {
        let input = node.est();
        let groups = estimate::groups(
            sel.order_by
                .iter()
                .take(sel.distinct_on)
                .map(|k| facts.distinct(&k.expr)),
            input.rows,
        );
        node = Node::new("Unique")
            .estimated(estimate::unique(&input, groups))
            .measured(m, id, Stage::Unique)
            .child(node);
    }
    if sel.limit.is_some() || sel.offset.is_some() {
        let count = |e: &Option<Expr>| e.as_ref().and_then(constant_number);
        let limit = match &sel.limit {
            Some(Expr::Const(crate::types::Value::Null)) | None => Some(f64::INFINITY),
            l => count(l),
        };
        let offset = count(&sel.offset).unwrap_or(0.0);
        let e = estimate::limit(&node.est(), limit, offset);
        node = Node::new("Limit")
            .estimated(e)
            .measured(m, id, Stage::Output)
            .child(node);
    }
    if sel.row_lock.is_some() {
        let e = estimate::per_row(&node.est(), 0.0, node.est().width);
        node = Node::new("LockRows")
            .estimated(e)
            .measured(m, id, Stage::Output)
            .child(node);
    }
    if sel.set_op.is_none() {
        node.estimate = Some(node.est().with_width(projected));
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
    let (l, r) = (left.est(), right.est());
    let both = estimate::append(&[l, r]);
    let columns = op.left.projection.len();
    match op.op {
        SetOp::RecursiveUnion(_) => {
            // As PostgreSQL guesses: the first rows, then ten rounds of the rest.
            let rows = l.rows + 10.0 * r.rows;
            let e = estimate::append(&[l, r]);
            let e = Estimate { rows, ..e };
            Node::new("Recursive Union")
                .estimated(e)
                .child(left)
                .child(right)
        }
        SetOp::Union if op.all => Node::new("Append").estimated(both).child(left).child(right),
        SetOp::Union => {
            let e = estimate::hash_aggregate(&both, columns, 0, both.rows, both.width);
            Node::new("HashAggregate")
                .typed("Aggregate")
                .how("Strategy", "Hashed")
                .how("Partial Mode", "Simple")
                .estimated(e)
                .child(Node::new("Append").estimated(both).child(left).child(right))
        }
        SetOp::Intersect | SetOp::Except => {
            let what = match (op.op, op.all) {
                (SetOp::Intersect, false) => "Intersect",
                (SetOp::Intersect, true) => "Intersect All",
                (_, false) => "Except",
                (_, true) => "Except All",
            };
            let kept = match op.op {
                SetOp::Intersect => l.rows.min(r.rows),
                _ => l.rows,
            };
            let e = estimate::hash_aggregate(&both, columns, 0, kept, both.width);
            Node::new(format!("HashSetOp {what}"))
                .typed("SetOp")
                .how("Strategy", "Hashed")
                .target("Command", what)
                .estimated(e)
                .child(Node::new("Append").estimated(both).child(left).child(right))
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

/// A scan's node, and what is known of the relation it reads; `read`: which of its
/// columns the query reads.
fn scan_node(scan: &ScanPlan, m: Measured, read: &[bool]) -> (Node, Relation) {
    let (node, relation) = scan_node_unmeasured(scan, m, read);
    (node.measured(m, node_id(scan), Stage::Output), relation)
}

/// The number an expression is when it is a constant (perhaps cast).
fn constant_number(e: &Expr) -> Option<f64> {
    match e {
        Expr::Const(Value::Null) => None,
        Expr::Const(v) => crate::types::format_text(v).parse::<f64>().ok(),
        Expr::Cast(inner, _) => constant_number(inner),
        _ => None,
    }
}

/// The rows a function in FROM gives: counted where its arguments are constants.
fn function_rows(function: &super::plan::TableFunction) -> f64 {
    let number = constant_number;
    match function.kind {
        TableFunctionKind::Values { width } => (function.args.len() / width.max(1)) as f64,
        TableFunctionKind::GenerateSeries => {
            let args: Vec<Option<f64>> = function.args.iter().map(number).collect();
            match args.as_slice() {
                [Some(a), Some(b)] => (b - a + 1.0).max(0.0),
                [Some(a), Some(b), Some(s)] if *s != 0.0 => ((b - a) / s + 1.0).max(0.0).floor(),
                _ => estimate::FUNCTION_ROWS,
            }
        }
        TableFunctionKind::Unnest => function
            .args
            .iter()
            .map(|a| match a {
                Expr::Const(Value::Array(_, items)) => items.len() as f64,
                _ => 100.0,
            })
            .fold(1.0, f64::max),
        TableFunctionKind::SequenceState | TableFunctionKind::PartitionAncestors => 1.0,
        _ => estimate::FUNCTION_ROWS,
    }
}

fn scan_node_unmeasured(scan: &ScanPlan, m: Measured, read: &[bool]) -> (Node, Relation) {
    let names = scan_names(scan, true);
    // `on t`, or `on t x` when the query calls it x (as PostgreSQL shows an alias).
    let table = &if scan.qualifier == scan.def.name {
        scan.def.name.clone()
    } else {
        format!("{} {}", scan.def.name, scan.qualifier)
    };
    let mut child_estimate = None;
    let mut node = if let Some(derived) = &scan.derived {
        let (title, node_type) = if derived.materialize {
            (format!("CTE Scan on {table}"), "CTE Scan")
        } else {
            (format!("Subquery Scan on {table}"), "Subquery Scan")
        };
        let child = select_node(derived, m);
        child_estimate = Some(child.est());
        let node = Node::new(title).typed(node_type);
        let node = match derived.materialize {
            true => node.target("CTE Name", scan.def.name.clone()),
            false => node,
        };
        node.target("Alias", scan.qualifier.clone()).child(child)
    } else if let Some(function) = &scan.function {
        let node = match function.kind {
            TableFunctionKind::Values { .. } => Node::new("Values Scan on \"*VALUES*\"")
                .typed("Values Scan")
                .target("Alias", "*VALUES*"),
            TableFunctionKind::WorkTable(_) => Node::new(format!("WorkTable Scan on {table}"))
                .typed("WorkTable Scan")
                .target("CTE Name", scan.def.name.clone())
                .target("Alias", scan.qualifier.clone()),
            kind => {
                let f = function_name(&kind);
                let title = match f {
                    Some(f) if f != scan.qualifier => {
                        format!("Function Scan on {f} {}", scan.qualifier)
                    }
                    Some(f) => format!("Function Scan on {f}"),
                    None => format!("Function Scan on {table}"),
                };
                Node::new(title)
                    .typed("Function Scan")
                    .target("Function Name", f.unwrap_or(scan.def.name.as_str()))
                    .target("Alias", scan.qualifier.clone())
            }
        };
        let rows = match function.kind {
            TableFunctionKind::WorkTable(_) => estimate::FUNCTION_ROWS / 10.0,
            _ => function_rows(function),
        };
        child_estimate = Some(estimate::computed_rows(rows, 0, rows, 0.0));
        node
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
        let index_scan = |index: &str| {
            Node::new(format!("Index Scan using {index} on {table}"))
                .typed("Index Scan")
                .target("Scan Direction", "Forward")
                .target("Index Name", index)
                .target("Relation Name", scan.def.name.clone())
                .target("Alias", scan.qualifier.clone())
        };
        match &scan.access {
            Access::Full => Node::new(format!("Seq Scan on {table}"))
                .typed("Seq Scan")
                .target("Relation Name", scan.def.name.clone())
                .target("Alias", scan.qualifier.clone()),
            Access::Point(values) => {
                let conds: Vec<String> = key_names
                    .iter()
                    .zip(values)
                    .map(|(k, v)| format!("({k} = {})", expr_text(v, &[])))
                    .collect();
                index_scan(&pkey).detail("Index Cond", and_text(conds))
            }
            Access::Range { low, high } => {
                let k = key_names.first().cloned().unwrap_or_default();
                let conds = bounds(&k, low, high);
                let node = index_scan(&pkey);
                if conds.is_empty() {
                    node
                } else {
                    node.detail("Index Cond", and_text(conds))
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
                let node = index_scan(&index.def.name);
                if conds.is_empty() {
                    node
                } else {
                    node.detail("Index Cond", and_text(conds))
                }
            }
        }
    };
    // The conditions the scan tests on each row: what the index condition does not
    // already say.
    let mut rest = Vec::new();
    if let Some(f) = &scan.filter {
        let covered: Vec<String> = node
            .details
            .iter()
            .filter(|(k, _)| *k == "Index Cond")
            .filter_map(|(_, v)| match v {
                DetailValue::Text(t) => Some(t.as_str()),
                _ => None,
            })
            .flat_map(conjunct_texts)
            .collect();
        let mut parts = Vec::new();
        conjuncts(f, &mut parts);
        rest = parts
            .into_iter()
            .filter(|p| !covered.contains(&expr_text(p, &names)))
            .collect();
    }
    let relation = match child_estimate {
        Some(e) => Relation::with_rows(scan.def.clone(), None, e.rows.max(1.0)),
        None => Relation::of(scan.def.clone(), scan.table.stats()),
    };
    let width: f64 = (0..scan.def.columns.len())
        .filter(|&c| {
            read.get(c).copied().unwrap_or(true)
                || scan.derived.is_some()
                || scan.function.is_some()
        })
        .map(|c| relation.column_width(c))
        .sum();
    let kept_share: f64 = rest.iter().map(|p| relation.selectivity(p)).product();
    node.estimate = Some(scan_estimate(
        scan,
        &relation,
        child_estimate,
        rest.len(),
        kept_share,
        width,
    ));
    if !rest.is_empty() {
        let texts: Vec<String> = rest.iter().map(|p| expr_text(p, &names)).collect();
        node = node.detail("Filter", and_text(texts));
        if let Some(a) = m.and_then(|a| a.get(node_id(scan), Stage::Removed)) {
            // (As PostgreSQL's text format, not when none was.)
            if a.loops > 0 && a.rows > 0 {
                node = node.detail_value("Rows Removed by Filter", DetailValue::Count(per_loop(a)));
            }
        }
    }
    (node, relation)
}

/// A scan's estimate: the rows its access path matches, `kept_share` of them passing
/// its `quals` other conditions, `width` bytes of each passed on.
fn scan_estimate(
    scan: &ScanPlan,
    relation: &Relation,
    computed: Option<Estimate>,
    quals: usize,
    kept_share: f64,
    width: f64,
) -> Estimate {
    if let Some(input) = computed {
        let kept = input.rows * kept_share;
        let own = estimate::computed_rows(input.rows, quals, kept, width);
        return Estimate {
            startup: input.startup,
            total: input.total + own.total,
            ..own
        };
    }
    let rows = relation.rows;
    let equal = |column: usize, value: &Expr| {
        // A value from a join's outer row is not known when planning, as a parameter.
        let value = match value {
            Expr::Const(_) => value.clone(),
            _ => Expr::Param(0),
        };
        let condition = Expr::Cmp(
            super::expr::CmpOp::Eq,
            Box::new(Expr::Column(column)),
            Box::new(value),
        );
        relation.selectivity(&condition)
    };
    let bounded = |low: &Option<(Expr, bool)>, high: &Option<(Expr, bool)>| match (low, high) {
        (Some(_), Some(_)) => estimate::BOTH_BOUNDS_SEL,
        (None, None) => 1.0,
        _ => stats::DEFAULT_RANGE_SEL,
    };
    match &scan.access {
        Access::Full => relation.seq_scan(quals, rows * kept_share, width),
        Access::Point(_) => relation.key_scan(1.0, quals, kept_share, width),
        Access::Range { low, high } => {
            let matched = rows * bounded(low, high);
            relation.key_scan(matched, quals, matched * kept_share, width)
        }
        Access::Index {
            index,
            prefix,
            low,
            high,
        } => {
            let whole_key = index.def.unique && prefix.len() == index.def.columns.len();
            let share: f64 = index
                .def
                .columns
                .iter()
                .zip(prefix)
                .map(|(&c, v)| equal(c, v))
                .product::<f64>()
                * bounded(low, high);
            let matched = if whole_key { 1.0 } else { rows * share };
            relation.index_scan(matched, quals, matched * kept_share, width)
        }
    }
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

fn join_node(
    outer: Node,
    inner: Node,
    step: &JoinStep,
    names: &[String],
    facts: &RowFacts,
    m: Measured,
) -> Node {
    join_node_unmeasured(outer, inner, step, names, facts, m).measured(
        m,
        node_id(step),
        Stage::Output,
    )
}

/// The rows a join of `outer` and `inner` rows gives when `inner_rows` of the inner side
/// match each outer row, as its kind keeps unmatched ones.
fn joined_rows(kind: JoinKind, outer: f64, inner: f64, matched: f64) -> f64 {
    match kind {
        JoinKind::Inner => matched,
        JoinKind::Left => matched.max(outer),
        JoinKind::Right => matched.max(inner),
        JoinKind::Full => matched.max(outer).max(inner),
    }
}

fn join_node_unmeasured(
    outer: Node,
    mut inner: Node,
    step: &JoinStep,
    names: &[String],
    facts: &RowFacts,
    m: Measured,
) -> Node {
    let (kind, join_type) = match step.kind {
        JoinKind::Inner => ("", "Inner"),
        JoinKind::Left => (" Left", "Left"),
        JoinKind::Right => (" Right", "Right"),
        JoinKind::Full => (" Full", "Full"),
    };
    let (o, i) = (outer.est(), inner.est());
    let width = o.width + i.width;
    let inner_relation = facts.relations.last();
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
            let share: f64 = outer_keys
                .iter()
                .zip(inner_keys)
                .map(|(ok, ik)| {
                    let inner_distinct = match (ik, inner_relation) {
                        (Expr::Column(c), Some(r)) => r.distinct(*c),
                        _ => estimate::DEFAULT_NUM_DISTINCT,
                    };
                    1.0 / facts.distinct(ok).max(inner_distinct).max(1.0)
                })
                .product();
            let matched = o.rows * i.rows * share;
            let rows = joined_rows(step.kind, o.rows, i.rows, matched);
            let (hash, join) = estimate::hash_join(&o, &i, outer_keys.len(), rows, width);
            Node::new(format!("Hash{kind} Join"))
                .typed("Hash Join")
                .target("Join Type", join_type)
                .estimated(join)
                .detail_value("Inner Unique", DetailValue::Flag(false))
                .detail("Hash Cond", and_text(conds))
                .child(outer)
                .child({
                    let hash = Node::new("Hash").estimated(hash).measured(
                        m,
                        node_id(&step.scan),
                        Stage::Output,
                    );
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
            let keyed = match &step.scan.access {
                Access::Point(_) => true,
                Access::Index { prefix, .. } => !prefix.is_empty(),
                _ => false,
            };
            let filter = step.on.as_ref().filter(|_| !keyed);
            let (share, quals) = filter.map_or((1.0, 0), |on| facts.join_selectivity(on));
            // The inner side's estimate takes each key's value to be one of its column's;
            // fewer distinct values on the outer side match fewer of the inner rows.
            let lookup: Vec<(usize, &Expr)> = match &step.scan.access {
                Access::Point(values) => step
                    .scan
                    .def
                    .primary_key
                    .iter()
                    .copied()
                    .zip(values)
                    .collect(),
                Access::Index { index, prefix, .. } => {
                    index.def.columns.iter().copied().zip(prefix).collect()
                }
                _ => Vec::new(),
            };
            let overlap: f64 = lookup
                .iter()
                .filter(|(_, v)| !matches!(v, Expr::Const(_)))
                .map(|&(c, v)| {
                    let inner_distinct = inner_relation.map_or(1.0, |r| r.distinct(c)).max(1.0);
                    inner_distinct / inner_distinct.max(facts.distinct(v))
                })
                .product();
            let matched = o.rows * i.rows * share * overlap;
            let rows = joined_rows(step.kind, o.rows, i.rows, matched);
            let node = Node::new(format!("Nested Loop{kind}"))
                .typed("Nested Loop")
                .target("Join Type", join_type)
                .estimated(estimate::nested_loop(&o, &i, quals, rows, width))
                .detail_value("Inner Unique", DetailValue::Flag(false));
            let node = match filter {
                Some(on) => node.detail("Join Filter", expr_text(on, names)),
                None => node,
            };
            node.child(outer).child(inner)
        }
        JoinStrategy::NestedLoop => {
            let (share, quals) = step
                .on
                .as_ref()
                .map_or((1.0, 0), |on| facts.join_selectivity(on));
            let matched = o.rows * i.rows * share;
            let rows = joined_rows(step.kind, o.rows, i.rows, matched);
            let node = Node::new(format!("Nested Loop{kind}"))
                .typed("Nested Loop")
                .target("Join Type", join_type)
                .estimated(estimate::nested_loop(&o, &i, quals, rows, width))
                .detail_value("Inner Unique", DetailValue::Flag(false));
            let node = match &step.on {
                Some(on) => node.detail("Join Filter", expr_text(on, names)),
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
    inner.details.retain(|(k, _)| *k != "Index Cond");
    inner
        .details
        .insert(0, ("Index Cond", DetailValue::Text(and_text(conds))));
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
        TableFunctionKind::RegexpMatches => "regexp_matches",
        TableFunctionKind::RegexpSplitToTable => "regexp_split_to_table",
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
