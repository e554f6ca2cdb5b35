//! The planner: from parsed statements to [`Plan`]s, resolving names and types.

use std::sync::Arc;

mod join_order;

use sqlparser::ast;
use sqlparser::dialect::PostgreSqlDialect;

use super::bind::{
    contains_aggregate, data_type, function_name, ident_name, object_name, Binder, Grouping, Scope,
    ScopeColumn,
};
use super::expr::{CmpOp, Expr, Func};
use super::parser::Statement;
use super::plan::*;
use super::session::Field;
use crate::engine::Engine;
use crate::error::{Error, Result, SqlState};
use crate::storage::acl;
use crate::storage::{Column, Index, Table, TableDef, TableId};
use crate::txn::{Increment, Isolation, Want};
use crate::types::{ArithOp, DataType};

pub struct Planned {
    pub plan: Plan,
    pub param_types: Vec<DataType>,
    pub fields: Vec<Field>,
    /// What the user must be allowed to do to run it (`Session::check_privileges`).
    pub privileges: Vec<Required>,
}

/// Plan `stmt`. `hidden` names the tables the planning transaction must not see: those
/// another transaction created and has not committed, and those it dropped itself.
pub fn plan(
    engine: &Engine,
    stmt: &Statement,
    param_types: Vec<DataType>,
    hidden: &dyn Fn(TableId) -> bool,
) -> Result<Planned> {
    let mut binder = Binder::new(param_types);
    binder.catalog = Some((engine, hidden));
    let mut p = Planner {
        engine,
        hidden,
        binder,
        fields: Vec::new(),
        lateral: None,
    };
    let plan = p.plan(stmt)?;
    let mut param_types = p.binder.params;
    for t in param_types.iter_mut() {
        if *t == DataType::Unknown {
            *t = DataType::Text;
        }
    }
    Ok(Planned {
        plan,
        param_types,
        fields: p.fields,
        privileges: p.binder.privileges,
    })
}

/// A table's CHECK constraints and column defaults, compiled over its rows: what a
/// referential action that rewrites the table's rows evaluates (`foreign_keys`).
pub(super) fn row_rules(
    engine: &Engine,
    table: &Arc<Table>,
    def: &TableDef,
) -> Result<super::foreign_keys::RowRules> {
    let hidden = |_: TableId| false;
    let mut binder = Binder::new(Vec::new());
    binder.catalog = Some((engine, &hidden));
    let mut p = Planner {
        engine,
        hidden: &hidden,
        binder,
        fields: Vec::new(),
        lateral: None,
    };
    Ok(super::foreign_keys::RowRules {
        checks: p.checks(table, def)?,
        defaults: p.defaults(def)?,
    })
}

/// Plan a subquery met while `parent` binds an expression (whose scope it pushed onto
/// its outer scopes). The subquery shares the statement's parameters.
pub(super) fn plan_subquery<'a>(
    engine: &'a Engine,
    hidden: &'a dyn Fn(TableId) -> bool,
    parent: &mut Binder<'a>,
    q: &ast::Query,
) -> Result<(SelectPlan, Vec<DataType>)> {
    let mut binder = Binder::new(std::mem::take(&mut parent.params));
    binder.outers = std::mem::take(&mut parent.outers);
    binder.ctes = std::mem::take(&mut parent.ctes);
    binder.catalog = parent.catalog;
    binder.depth = parent.depth;
    binder.relations_read = std::mem::take(&mut parent.relations_read);
    // What the subquery reads is the statement's to be allowed, as its parent's reads.
    binder.privileges = std::mem::take(&mut parent.privileges);
    binder.view_depth = parent.view_depth;
    let mut p = Planner {
        engine,
        hidden,
        binder,
        fields: Vec::new(),
        lateral: None,
    };
    let planned = p.plan_query(q);
    parent.params = std::mem::take(&mut p.binder.params);
    parent.outers = std::mem::take(&mut p.binder.outers);
    parent.ctes = std::mem::take(&mut p.binder.ctes);
    parent.relations_read = std::mem::take(&mut p.binder.relations_read);
    parent.privileges = std::mem::take(&mut p.binder.privileges);
    let (plan, _, types, _) = planned?;
    if plan.row_lock.is_some() {
        return Err(Error::unsupported(
            "FOR UPDATE in a subquery is not supported yet",
        ));
    }
    Ok((plan, types))
}

struct Planner<'a> {
    engine: &'a Engine,
    hidden: &'a dyn Fn(TableId) -> bool,
    binder: Binder<'a>,
    fields: Vec<Field>,
    /// While a FROM item is bound: the columns of the items before it, which a function
    /// there may read.
    lateral: Option<Scope>,
}

/// A privilege a statement needs on an object: (OID, `storage::acl` bits, "table",
/// "view" or "sequence", its name).
pub type Required = (u32, u32, &'static str, String);

fn table_scope(table: &Table, def: &TableDef, alias: Option<&str>) -> Scope {
    let mut qualifiers = vec![def.name.clone()];
    if let Some(a) = alias {
        qualifiers = vec![a.to_string()];
    }
    // A system catalog is scanned as a placeholder of no pages (id 0), under its name.
    let tableoid = match table.id.0 {
        0 => super::pg_catalog::PgCatalog::by_name(&def.name).map(|c| c.oid()),
        _ => Some(super::pg_catalog::table_oid(table)),
    };
    Scope {
        relations: tableoid
            .map(|oid| (qualifiers[0].clone(), oid))
            .into_iter()
            .collect(),
        columns: def
            .columns
            .iter()
            .map(|c| ScopeColumn {
                qualifiers: qualifiers.clone(),
                name: c.name.clone(),
                data_type: c.data_type,
                // A dropped column keeps its place in the row, under a name no
                // statement uses, and is in no `*`.
                hidden: c.dropped,
            })
            .collect(),
    }
}

/// Whether a scope column is a dropped one (see `storage::Column::dropped`).
fn is_dropped(c: &ScopeColumn) -> bool {
    c.hidden && c.name.starts_with("........pg.dropped.")
}

/// Whether the name an expression gives its column outranks a cast's type name.
fn names_strongly(e: &ast::Expr) -> bool {
    use ast::Expr as E;
    match e {
        E::Nested(inner) => names_strongly(inner),
        E::Identifier(_)
        | E::CompoundIdentifier(_)
        | E::Function(_)
        | E::Substring { .. }
        | E::Position { .. }
        | E::Ceil { .. }
        | E::Floor { .. }
        | E::Extract { .. }
        | E::Trim { .. }
        | E::AtTimeZone { .. }
        | E::Overlay { .. } => true,
        E::Cast { expr, .. } => names_strongly(expr),
        _ => false,
    }
}

/// The output column name PostgreSQL would give an expression.
fn column_name(e: &ast::Expr) -> String {
    use ast::Expr as E;
    match e {
        E::Identifier(i) => ident_name(i),
        E::CompoundIdentifier(ids) => ids
            .last()
            .map(ident_name)
            .unwrap_or_else(|| "?column?".into()),
        E::Function(f) => f
            .name
            .0
            .last()
            .map(|p| p.to_string().to_lowercase())
            .unwrap_or_default(),
        E::Cast {
            expr, data_type, ..
        } => match expr.as_ref() {
            // A column's or a function's name outranks the type's (PostgreSQL's
            // FigureColname); a CASE, a literal or an operator's does not.
            e if names_strongly(e) => column_name(expr),
            _ => match super::bind::data_type(data_type) {
                Ok((t, _)) => pg_type_name(t).to_string(),
                Err(_) => "?column?".into(),
            },
        },
        E::Nested(inner) => column_name(inner),
        E::Case { .. } => "case".into(),
        E::Value(v) if matches!(v.value, ast::Value::Boolean(_)) => "bool".into(),
        E::Exists { .. } => "exists".into(),
        E::Array(_) => "array".into(),
        E::Interval(_) => "interval".into(),
        // The calls the parser reads apart from functions keep their functions' names.
        E::Substring { shorthand, .. } => match shorthand {
            true => "substr",
            false => "substring",
        }
        .into(),
        E::Position { .. } => "position".into(),
        E::Ceil { .. } => "ceil".into(),
        E::Floor { .. } => "floor".into(),
        E::Extract { .. } => "extract".into(),
        E::AtTimeZone { .. } => "timezone".into(),
        E::Overlay { .. } => "overlay".into(),
        E::Trim { trim_where, .. } => match trim_where {
            Some(ast::TrimWhereField::Leading) => "ltrim",
            Some(ast::TrimWhereField::Trailing) => "rtrim",
            _ => "btrim",
        }
        .into(),
        // A scalar subquery is named after its one column (ARRAY(...) is a function).
        E::Subquery(q) => match q.body.as_ref() {
            ast::SetExpr::Select(select) => match select.projection.first() {
                Some(ast::SelectItem::UnnamedExpr(e)) => column_name(e),
                Some(ast::SelectItem::ExprWithAlias { alias, .. }) => ident_name(alias),
                _ => "?column?".into(),
            },
            _ => "?column?".into(),
        },
        _ => "?column?".into(),
    }
}

fn pg_type_name(t: DataType) -> &'static str {
    match t {
        DataType::Bool => "bool",
        DataType::Int2 => "int2",
        DataType::Int4 => "int4",
        DataType::Int8 => "int8",
        DataType::Float4 => "float4",
        DataType::Float8 => "float8",
        DataType::Numeric(_) => "numeric",
        DataType::Text => "text",
        DataType::Varchar(_) => "varchar",
        DataType::Char(_) => "bpchar",
        DataType::Bytea => "bytea",
        DataType::Date => "date",
        DataType::Timestamp => "timestamp",
        DataType::TimestampTz => "timestamptz",
        DataType::Unknown => "text",
        DataType::Oid => "oid",
        DataType::Name => "name",
        DataType::InternalChar => "char",
        DataType::Json => "json",
        DataType::RegClass => "regclass",
        DataType::RegType => "regtype",
        DataType::RegNamespace => "regnamespace",
        DataType::RegProc => "regproc",
        DataType::Int2Vector => "int2vector",
        DataType::Uuid => "uuid",
        DataType::Interval => "interval",
        DataType::Jsonb => "jsonb",
        DataType::OidVector => "oidvector",
        DataType::Array(e) => pg_type_name(*e),
        DataType::Record(_) => "record",
        DataType::Void => "void",
    }
}

/// A planned query: its plan, and its output columns' names, types and sources (table
/// OID and attribute number, for RowDescription).
type PlannedQuery = (
    SelectPlan,
    Vec<String>,
    Vec<DataType>,
    Vec<Option<(u32, i16)>>,
);

/// The most tables one FROM clause may join.
const MAX_JOINED_TABLES: usize = 16;

/// Working tables of recursive WITH queries are numbered from this counter (a number
/// needs only be unique within a statement).
static NEXT_WORK_TABLE: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

/// A table of FROM.
struct FromTable {
    table: Arc<Table>,
    def: Arc<TableDef>,
    system: Option<super::system::SystemView>,
    derived: Option<Arc<SelectPlan>>,
    function: Option<Arc<TableFunction>>,
    /// The name its columns are qualified with: its alias, or its name.
    qualifier: String,
}

/// A join not yet planned: its kind and condition (over the columns so far and the
/// table's), and how many columns came before the table.
struct PendingJoin {
    kind: JoinKind,
    on: Option<Expr>,
    outer_width: usize,
}

/// FROM, bound: its tables left to right, their columns together as one scope, the
/// columns `*` stands for, each column's table and attribute number (RowDescription's),
/// and the joins from the second table on.
#[derive(Default)]
struct FromPlan {
    tables: Vec<FromTable>,
    scope: Scope,
    star: Vec<usize>,
    origins: Vec<Option<(u32, i16)>>,
    steps: Vec<PendingJoin>,
    /// The first column of the FROM item (comma-separated) being joined.
    item_start: usize,
}

impl FromPlan {
    /// A reference to scope column `i` that binds back to it: qualified, unless USING
    /// merged it (then the unqualified name means it).
    fn column_ref(&self, i: usize) -> ast::Expr {
        let c = &self.scope.columns[i];
        let name = ast::Ident::with_quote('"', c.name.clone());
        let unique = self
            .scope
            .columns
            .iter()
            .filter(|x| x.name == c.name && !x.hidden)
            .count()
            == 1;
        let unique_in_qualifier = c.qualifiers.first().is_none_or(|q| {
            self.scope
                .columns
                .iter()
                .filter(|x| x.name == c.name && x.qualifiers.first() == Some(q))
                .count()
                == 1
        });
        if !unique && !unique_in_qualifier {
            // No name tells it apart (a subquery's two `?column?`).
            return ast::Expr::Identifier(ast::Ident::new(super::bind::positional_column_name(i)));
        }
        match c.qualifiers.first() {
            Some(q) if !unique || c.hidden => {
                ast::Expr::CompoundIdentifier(vec![ast::Ident::with_quote('"', q.clone()), name])
            }
            _ => ast::Expr::Identifier(name),
        }
    }

    fn origin(&self, column: usize) -> Option<(u32, i16)> {
        self.origins.get(column).copied().flatten()
    }
}

/// Plan the joins of a FROM with more than one table, with what WHERE adds: conditions
/// on the first table alone go into its scan, and conditions that an inner join can
/// check as early as its table is joined go into that join. Each join then takes the
/// conditions on its table alone into its table's scan (for inner and left joins), and
/// chooses how to find matches: a primary-key lookup per row when the condition gives
/// the table's whole key, a hash table on the columns the condition equates, or else a
/// loop over the table. Returns the first table's scan, the joins, and what is left of
/// WHERE for the joined rows.
fn plan_joins(
    from: FromPlan,
    filter: Option<Expr>,
) -> Result<(ScanPlan, Vec<JoinStep>, Option<Expr>)> {
    let FromPlan {
        tables,
        scope,
        steps,
        ..
    } = from;
    let types: Vec<DataType> = scope.columns.iter().map(|c| c.data_type).collect();
    let mut ends = Vec::new();
    let mut at = 0;
    for t in &tables {
        at += t.def.columns.len();
        ends.push(at);
    }
    let null_extends_earlier = |from_step: usize| {
        steps[from_step..]
            .iter()
            .any(|s| matches!(s.kind, JoinKind::Right | JoinKind::Full))
    };
    let mut first_filter = Vec::new();
    let mut step_conds: Vec<Vec<Expr>> = steps
        .iter()
        .map(|s| {
            let mut c = Vec::new();
            if let Some(on) = &s.on {
                split_conjuncts(on, &mut c);
            }
            c
        })
        .collect();
    let mut rest = Vec::new();
    let mut conjuncts = Vec::new();
    if let Some(f) = &filter {
        split_conjuncts(f, &mut conjuncts);
    }
    for c in conjuncts {
        // The first table (index 0) or join step (index i + 1) by which it can be checked.
        let table = (0..tables.len()).find(|&t| c.reads_only(&|col| col < ends[t]));
        match table {
            Some(0) if !null_extends_earlier(0) && !c.is_row_independent() => first_filter.push(c),
            Some(t)
                if t > 0 && steps[t - 1].kind == JoinKind::Inner && !null_extends_earlier(t) =>
            {
                step_conds[t - 1].push(c)
            }
            _ => rest.push(c),
        }
    }
    let mut tables = tables.into_iter();
    let first = tables
        .next()
        .ok_or_else(|| Error::internal("a join without tables"))?;
    let first_filter = and_all(first_filter);
    let first_scan = ScanPlan {
        access: access_path(&first.def, &first.table.indexes(), first_filter.as_ref()),
        table: first.table,
        system: first.system,
        derived: first.derived,
        function: first.function,
        def: first.def,
        filter: first_filter,
        qualifier: first.qualifier,
    };
    let mut joins = Vec::new();
    for ((step, conds), table) in steps.into_iter().zip(step_conds).zip(tables) {
        let start = step.outer_width;
        let end = start + table.def.columns.len();
        let local = |e: &Expr| e.map_columns(&|c| c - start);
        let pushable = matches!(step.kind, JoinKind::Inner | JoinKind::Left);
        let mut inner_only = Vec::new();
        let mut on = Vec::new();
        let mut pairs: Vec<(Expr, usize)> = Vec::new();
        // Equalities of an expression of the rows so far and one of this table: what a
        // hash table can find matches by.
        let mut hash_pairs: Vec<(Expr, Expr)> = Vec::new();
        for c in conds {
            if pushable
                && !c.is_row_independent()
                && c.reads_only(&|col| (start..end).contains(&col))
            {
                inner_only.push(local(&c));
                continue;
            }
            if let Expr::Cmp(CmpOp::Eq, a, b) = &c {
                for (outer, inner) in [(a, b), (b, a)] {
                    let outer_side =
                        !outer.is_row_independent() && outer.reads_only(&|col| col < start);
                    let inner_side = !inner.is_row_independent()
                        && inner.reads_only(&|col| (start..end).contains(&col));
                    if !(outer_side && inner_side) {
                        continue;
                    }
                    if let Expr::Column(k) = inner.as_ref() {
                        pairs.push(((**outer).clone(), *k));
                    }
                    hash_pairs.push(((**outer).clone(), (**inner).clone()));
                    break;
                }
            }
            on.push(c);
        }
        let inner_filter = and_all(inner_only);
        let indexes = table.table.indexes();
        let mut access = access_path(&table.def, &indexes, inner_filter.as_ref());
        let pk = &table.def.primary_key;
        let lookup: Option<Vec<Expr>> =
            (pushable && table.system.is_none() && table.derived.is_none() && !pk.is_empty())
                .then(|| {
                    pk.iter()
                        .map(|&col| {
                            pairs
                                .iter()
                                .find(|(_, k)| *k == start + col)
                                .map(|(outer, _)| outer.clone())
                        })
                        .collect::<Option<Vec<Expr>>>()
                })
                .flatten();
        // Failing a primary key lookup, an index whose leading columns the join pairs
        // give, the index with the most of them.
        let index_lookup = || {
            indexes
                .iter()
                .filter_map(|index| {
                    let prefix: Vec<Expr> = index
                        .def
                        .columns
                        .iter()
                        .map_while(|&col| {
                            pairs
                                .iter()
                                .find(|(_, k)| *k == start + col)
                                .map(|(outer, _)| outer.clone())
                        })
                        .collect();
                    (!prefix.is_empty()).then(|| (index.clone(), prefix))
                })
                .max_by_key(|(index, prefix)| {
                    (
                        prefix.len(),
                        index.def.unique && prefix.len() == index.def.columns.len(),
                    )
                })
        };
        let index_lookup =
            if lookup.is_none() && pushable && table.system.is_none() && table.derived.is_none() {
                index_lookup()
            } else {
                None
            };
        let lateral = table
            .function
            .as_ref()
            .is_some_and(|f| f.args.iter().any(|a| !a.is_row_independent()));
        let strategy = if lateral {
            // Its rows depend on the row so far: made again for each.
            JoinStrategy::Lookup
        } else if let Some(keys) = lookup {
            access = Access::Point(keys);
            JoinStrategy::Lookup
        } else if let Some((index, prefix)) = index_lookup {
            access = Access::Index {
                index,
                prefix,
                low: None,
                high: None,
            };
            JoinStrategy::Lookup
        } else {
            // Only keys whose types are known to hash alike (both sides of `=` were
            // coerced to one type when bound; this checks what the values will be).
            let hashable: Vec<&(Expr, Expr)> = hash_pairs
                .iter()
                .filter(
                    |(outer, inner)| match (key_type(outer, &types), key_type(inner, &types)) {
                        (Some(a), Some(b)) => hash_compatible(a, b),
                        _ => false,
                    },
                )
                .collect();
            if hashable.is_empty() {
                JoinStrategy::NestedLoop
            } else {
                JoinStrategy::Hash {
                    outer_keys: hashable.iter().map(|(o, _)| o.clone()).collect(),
                    inner_keys: hashable.iter().map(|(_, i)| local(i)).collect(),
                }
            }
        };
        joins.push(JoinStep {
            kind: step.kind,
            scan: ScanPlan {
                table: table.table,
                system: table.system,
                derived: table.derived,
                function: table.function,
                def: table.def,
                access,
                filter: inner_filter,
                qualifier: table.qualifier,
            },
            on: and_all(on),
            strategy,
            outer_width: start,
        });
    }
    Ok((first_scan, joins, and_all(rest)))
}

/// The type of a join key's values, where it is plain from the expression: a column's,
/// a cast's, or lower/upper's text; None otherwise (the join then does not hash on it).
fn key_type(e: &Expr, types: &[DataType]) -> Option<DataType> {
    match e {
        Expr::Column(c) => types.get(*c).copied(),
        Expr::Cast(_, t) => Some(*t),
        Expr::Func(Func::Lower | Func::Upper, args) if args.len() == 1 => Some(DataType::Text),
        _ => None,
    }
}

/// Whether equal values of columns of types `a` and `b` are equal as hash keys (once
/// integers are widened to bigint and floats to double precision).
fn hash_compatible(a: DataType, b: DataType) -> bool {
    let family = |t: DataType| match t {
        DataType::Int2 | DataType::Int4 | DataType::Int8 => Some(1),
        DataType::Float4 | DataType::Float8 => Some(2),
        DataType::Text | DataType::Varchar(_) => Some(3),
        DataType::Numeric(_) => Some(4),
        DataType::Bool => Some(5),
        DataType::Date => Some(6),
        DataType::Timestamp => Some(7),
        DataType::TimestampTz => Some(8),
        DataType::Bytea => Some(9),
        _ => None,
    };
    family(a).is_some() && family(a) == family(b)
}

/// CREATE OR REPLACE VIEW's rules, PostgreSQL's: the new query keeps every column the
/// view had, in order, with its name and type (it may add columns after them), and does
/// not read the view itself.
fn replaceable(
    old: &crate::storage::View,
    columns: &[(String, DataType)],
    depends_on: &[String],
) -> Result<()> {
    let invalid = |message: String| Error::new(SqlState::INVALID_TABLE_DEFINITION, message);
    if depends_on.contains(&old.name) {
        return Err(Error::new(
            SqlState("42P17"),
            format!(
                "infinite recursion detected in rules for relation \"{}\"",
                old.name
            ),
        ));
    }
    if columns.len() < old.columns.len() {
        return Err(invalid("cannot drop columns from view".into()));
    }
    for ((old_name, old_type), (new_name, new_type)) in old.columns.iter().zip(columns) {
        if old_name != new_name {
            return Err(invalid(format!(
                "cannot change name of view column \"{old_name}\" to \"{new_name}\""
            ))
            .with_hint(
                "Use ALTER VIEW ... RENAME COLUMN ... to change name of view column instead.",
            ));
        }
        if old_type != new_type {
            return Err(invalid(format!(
                "cannot change data type of view column \"{old_name}\" from {} to {}",
                type_name_only(*old_type),
                type_name_only(*new_type)
            )));
        }
    }
    Ok(())
}

/// Which output columns of a set operation's side are literals of no type yet (a bare
/// NULL or string literal in a SELECT list, or in every row of VALUES): those take the
/// other side's type. Empty when that cannot be told (`*`, a nested operation).
fn unknown_columns(side: &ast::SetExpr, params: &[DataType]) -> Vec<bool> {
    // A string literal of a simple query is a parameter of no type by now
    // (`parser::lift_literals`), as is a client's untyped parameter.
    let literal = |e: &ast::Expr| {
        let mut e = e;
        while let ast::Expr::Nested(inner) = e {
            e = inner;
        }
        match e {
            ast::Expr::Value(v) => match &v.value {
                ast::Value::Null | ast::Value::SingleQuotedString(_) => true,
                ast::Value::Placeholder(p) => p
                    .strip_prefix('$')
                    .and_then(|n| n.parse::<usize>().ok())
                    .is_some_and(|n| {
                        n >= 1 && params.get(n - 1).is_none_or(|t| *t == DataType::Unknown)
                    }),
                _ => false,
            },
            _ => false,
        }
    };
    match side {
        ast::SetExpr::Select(select) => select
            .projection
            .iter()
            .map(|item| match item {
                ast::SelectItem::UnnamedExpr(e)
                | ast::SelectItem::ExprWithAlias { expr: e, .. } => literal(e),
                _ => false,
            })
            .collect(),
        ast::SetExpr::Values(values) => {
            let width = values.rows.first().map_or(0, |r| r.len());
            (0..width)
                .map(|i| values.rows.iter().all(|r| r.get(i).is_some_and(&literal)))
                .collect()
        }
        _ => Vec::new(),
    }
}

/// The type of a set operation's column from its sides' types, as PostgreSQL resolves
/// it: the same type; among numbers the wider (numeric and floats above integers,
/// double precision above all); among strings text; None when they cannot be matched.
fn set_result_type(a: DataType, b: DataType) -> Option<DataType> {
    use DataType::*;
    if a == b {
        return Some(a);
    }
    let rank = |t: DataType| match t {
        Int2 => Some(1),
        Int4 => Some(2),
        Int8 => Some(3),
        Numeric(_) => Some(4),
        Float4 => Some(5),
        Float8 => Some(6),
        _ => None,
    };
    match (a, b) {
        (Unknown, t) | (t, Unknown) => Some(if t == Unknown { Text } else { t }),
        (Numeric(_), Numeric(_)) => Some(Numeric(None)),
        (x, y) if rank(x).is_some() && rank(y).is_some() => {
            Some(if rank(x) >= rank(y) { x } else { y }.without_typmod())
        }
        (x, y) if x.is_string() && y.is_string() => Some(if x == Text || y == Text {
            Text
        } else {
            Varchar(None)
        }),
        (Timestamp, TimestampTz) | (TimestampTz, Timestamp) => Some(TimestampTz),
        // An OID of a reg* type is an oid.
        (Oid, RegClass | RegType | RegNamespace | RegProc)
        | (RegClass | RegType | RegNamespace | RegProc, Oid) => Some(Oid),
        (Date, Timestamp) | (Timestamp, Date) => Some(Timestamp),
        (Date, TimestampTz) | (TimestampTz, Date) => Some(TimestampTz),
        _ => None,
    }
}

/// A type's name without its modifier (`character varying`, not `character varying(10)`),
/// as PostgreSQL names types in messages about type resolution.
fn type_name_only(t: DataType) -> String {
    let name = t.name();
    match name.split_once('(') {
        Some((base, _)) => base.to_string(),
        None => name,
    }
}

/// `ORDER BY n`: the zero-based output column `n` names (42P10 outside 1..=`count`), or
/// None when the expression is not a number.
fn order_position(e: &ast::Expr, count: usize) -> Result<Option<usize>> {
    let ast::Expr::Value(v) = e else {
        return Ok(None);
    };
    let ast::Value::Number(n, _) = &v.value else {
        return Ok(None);
    };
    let pos: usize = n
        .parse()
        .map_err(|_| Error::syntax("bad ORDER BY position"))?;
    if pos == 0 || pos > count {
        return Err(Error::new(
            SqlState::INVALID_COLUMN_REFERENCE,
            format!("ORDER BY position {pos} is not in select list"),
        ));
    }
    Ok(Some(pos - 1))
}

/// The conjunction of `conds`, None for none.
fn and_all(conds: Vec<Expr>) -> Option<Expr> {
    conds
        .into_iter()
        .reduce(|a, b| Expr::And(Box::new(a), Box::new(b)))
}

/// A system view named (optionally as `pg_catalog.x`), if it is one.
fn system_view(name: &ast::ObjectName) -> Option<super::system::SystemView> {
    let parts: Vec<String> = name
        .0
        .iter()
        .map(|p| match p {
            ast::ObjectNamePart::Identifier(i) => ident_name(i),
            other => other.to_string(),
        })
        .collect();
    match parts.as_slice() {
        [n] => super::system::SystemView::by_name(n),
        [s, n] if s == "pg_catalog" => super::system::SystemView::by_name(n),
        [s, n] if s == "information_schema" => super::system::SystemView::in_information_schema(n),
        _ => None,
    }
}

fn split_conjuncts(e: &Expr, out: &mut Vec<Expr>) {
    match e {
        Expr::And(a, b) => {
            split_conjuncts(a, out);
            split_conjuncts(b, out);
        }
        other => out.push(other.clone()),
    }
}

/// Choose an access path from the filter's conjuncts on the primary key and the
/// indexes: a primary key point, else the index whose leading columns the most
/// equalities give (a range on the next), else a primary key range, else an index range.
fn access_path(def: &TableDef, indexes: &[Arc<Index>], filter: Option<&Expr>) -> Access {
    let Some(filter) = filter else {
        return Access::Full;
    };
    let by_key = key_access_path(def, filter);
    if matches!(by_key, Access::Point(_)) {
        return by_key;
    }
    let mut conjuncts = Vec::new();
    split_conjuncts(filter, &mut conjuncts);
    let cmps = column_comparisons(&conjuncts);
    let mut best: Option<(usize, Access)> = None;
    for index in indexes {
        let mut prefix = Vec::new();
        for &col in &index.def.columns {
            match cmps.iter().find(|(c, op, _)| *c == col && *op == CmpOp::Eq) {
                Some((_, _, v)) => prefix.push(v.clone()),
                None => break,
            }
        }
        let (low, high) = match index.def.columns.get(prefix.len()) {
            Some(&next) => range_bounds(&cmps, next),
            None => (None, None),
        };
        // Equalities weigh most; a whole unique key most of all.
        let score = prefix.len() * 4
            + usize::from(low.is_some() || high.is_some())
            + 2 * usize::from(index.def.unique && prefix.len() == index.def.columns.len());
        if score == 0 || best.as_ref().is_some_and(|(s, _)| *s >= score) {
            continue;
        }
        best = Some((
            score,
            Access::Index {
                index: index.clone(),
                prefix,
                low,
                high,
            },
        ));
    }
    match best {
        Some((score, access)) if score >= 4 || matches!(by_key, Access::Full) => access,
        _ => by_key,
    }
}

/// (column, op, value) for the conjuncts that compare a column with a row-independent
/// expression.
fn column_comparisons(conjuncts: &[Expr]) -> Vec<(usize, CmpOp, Expr)> {
    let mut cmps = Vec::new();
    for c in conjuncts {
        if let Expr::Cmp(op, a, b) = c {
            match (a.as_ref(), b.as_ref()) {
                (Expr::Column(i), v) if v.is_row_independent() => cmps.push((*i, *op, v.clone())),
                (v, Expr::Column(i)) if v.is_row_independent() => {
                    cmps.push((*i, op.flip(), v.clone()))
                }
                _ => {}
            }
        }
    }
    cmps
}

/// Bounds on column `col` from the comparisons: (expression, inclusive).
type RangeBound = Option<(Expr, bool)>;

fn range_bounds(cmps: &[(usize, CmpOp, Expr)], col: usize) -> (RangeBound, RangeBound) {
    let mut low = None;
    let mut high = None;
    for (c, op, v) in cmps {
        if *c != col {
            continue;
        }
        match op {
            CmpOp::Gt => low = Some((v.clone(), false)),
            CmpOp::GtEq => low = Some((v.clone(), true)),
            CmpOp::Lt => high = Some((v.clone(), false)),
            CmpOp::LtEq => high = Some((v.clone(), true)),
            _ => {}
        }
    }
    (low, high)
}

/// The access path the primary key alone gives.
fn key_access_path(def: &TableDef, filter: &Expr) -> Access {
    if def.primary_key.is_empty() {
        return Access::Full;
    }
    let mut conjuncts = Vec::new();
    split_conjuncts(filter, &mut conjuncts);
    // (column, op, value) for comparisons of a column with a row-independent expression.
    let mut cmps = Vec::new();
    for c in &conjuncts {
        if let Expr::Cmp(op, a, b) = c {
            match (a.as_ref(), b.as_ref()) {
                (Expr::Column(i), v) if v.is_row_independent() => cmps.push((*i, *op, v.clone())),
                (v, Expr::Column(i)) if v.is_row_independent() => {
                    cmps.push((*i, op.flip(), v.clone()))
                }
                _ => {}
            }
        }
    }
    let eq: Vec<Option<Expr>> = def
        .primary_key
        .iter()
        .map(|pk| {
            cmps.iter()
                .find(|(c, op, _)| c == pk && *op == CmpOp::Eq)
                .map(|(_, _, v)| v.clone())
        })
        .collect();
    if eq.iter().all(Option::is_some) {
        return Access::Point(eq.into_iter().flatten().collect());
    }
    if def.primary_key.len() == 1 {
        let pk = def.primary_key[0];
        let mut low = None;
        let mut high = None;
        for (c, op, v) in &cmps {
            if *c != pk {
                continue;
            }
            match op {
                CmpOp::Gt => low = Some((v.clone(), false)),
                CmpOp::GtEq => low = Some((v.clone(), true)),
                CmpOp::Lt => high = Some((v.clone(), false)),
                CmpOp::LtEq => high = Some((v.clone(), true)),
                _ => {}
            }
        }
        if low.is_some() || high.is_some() {
            return Access::Range { low, high };
        }
    }
    Access::Full
}

impl Planner<'_> {
    /// The view named `name`, if the planning transaction sees it.
    fn visible_view(&self, name: &str) -> Option<Arc<crate::storage::View>> {
        self.engine.txn.catalog.view_seen(name, self.hidden)
    }

    /// The sequence named `name`, if the planning transaction sees it.
    fn visible_sequence(&self, name: &str) -> Option<Arc<crate::storage::Sequence>> {
        self.engine.txn.catalog.sequence_seen(name, self.hidden)
    }

    /// The statement needs `bits` on the object `oid` (not inside a view's query).
    fn require(&mut self, oid: u32, bits: u32, kind: &'static str, name: &str) {
        if self.binder.view_depth == 0 {
            self.binder
                .privileges
                .push((oid, bits, kind, name.to_string()));
        }
    }

    fn require_on_table(&mut self, table: &Table, bits: u32) {
        let oid = super::pg_catalog::table_oid(table);
        self.require(oid, bits, "table", &table.def().name);
    }

    fn table(&mut self, name: &ast::ObjectName) -> Result<Arc<Table>> {
        self.table_named(&object_name(name)?)
    }

    /// The table called `name` that the planning transaction sees, or 42P01.
    fn table_named(&mut self, name: &str) -> Result<Arc<Table>> {
        let found = self.engine.txn.catalog.table_seen(name, self.hidden);
        match found {
            Some(t) => {
                if !self.binder.relations_read.iter().any(|r| r == name) {
                    self.binder.relations_read.push(name.to_string());
                }
                Ok(t)
            }
            None if self.visible_view(name).is_some() => Err(Error::unsupported(format!(
                "\"{name}\" is a view: only SELECT reads views yet"
            ))),
            None => Err(Error::new(
                SqlState::UNDEFINED_TABLE,
                format!("relation \"{name}\" does not exist"),
            )),
        }
    }

    fn plan(&mut self, stmt: &Statement) -> Result<Plan> {
        match stmt {
            Statement::Ast(s) => self.plan_ast(s),
            Statement::Copy(c) if c.to => self.plan_copy_to(c),
            Statement::Copy(c) => {
                let table = self.table_named(&c.table)?;
                self.require_on_table(&table, acl::INSERT);
                let def = table.def();
                let targets = self.target_columns(&def, c.columns.iter().cloned())?;
                let defaults = self.defaults(&def)?;
                let checks = self.checks(&table, &def)?;
                Ok(Plan::Copy(Box::new(CopyPlan {
                    table,
                    def,
                    targets,
                    defaults,
                    checks,
                    stmt: c.clone(),
                })))
            }
            Statement::Role(statement) => Ok(Plan::Role(statement.clone())),
            Statement::SetConstraints { names, deferred } => Ok(Plan::SetConstraints {
                names: names.clone(),
                deferred: *deferred,
            }),
            Statement::Maintenance {
                tag,
                tables,
                analyze,
            } => {
                let mut named = Vec::new();
                for t in tables {
                    named.push(self.table_named(t)?);
                }
                if named.is_empty() {
                    let hidden = self.hidden;
                    let view = super::system::CatalogView::new(|id| !hidden(id), |_| true);
                    named = super::information_schema::visible_tables(self.engine, &view);
                }
                Ok(Plan::Maintenance {
                    tag,
                    tables: named,
                    analyze: *analyze,
                    notice: None,
                })
            }
            Statement::Checkpoint => Ok(Plan::Checkpoint),
            Statement::AlterSequence { name, action } => self.plan_alter_sequence(name, action),
            Statement::AddIdentity {
                table,
                column,
                always,
                sequence,
            } => {
                if *always {
                    return Err(Error::unsupported(
                        "GENERATED ALWAYS AS IDENTITY is not supported yet",
                    ));
                }
                let t = self.table_named(table)?;
                let def = t.def();
                let c = def.column_index(column).ok_or_else(|| {
                    Error::new(
                        SqlState::UNDEFINED_COLUMN,
                        format!("column \"{column}\" of relation \"{table}\" does not exist"),
                    )
                })?;
                let ty = def.columns[c].data_type;
                if !ty.is_integer() {
                    return Err(Error::new(
                        SqlState::INVALID_PARAMETER_VALUE,
                        "identity column type must be smallint, integer, or bigint",
                    ));
                }
                let Statement::Ast(create) = sequence.as_ref() else {
                    return Err(Error::internal("identity sequence"));
                };
                let mut create = create.as_ref().clone();
                // The sequence is of the column's type unless its options say.
                if let ast::Statement::CreateSequence { data_type, .. } = &mut create {
                    if data_type.is_none() {
                        *data_type = Some(match ty {
                            DataType::Int2 => ast::DataType::SmallInt(None),
                            DataType::Int4 => ast::DataType::Integer(None),
                            _ => ast::DataType::BigInt(None),
                        });
                    }
                }
                let sequence = self.plan_ast(&create)?;
                Ok(Plan::AddIdentity {
                    table: t,
                    column: c,
                    sequence: Box::new(sequence),
                })
            }
            Statement::Empty => Ok(Plan::Maintenance {
                tag: "",
                tables: Vec::new(),
                analyze: false,
                notice: None,
            }),
            Statement::ShowAll => {
                self.fields = ["name", "setting", "description"]
                    .iter()
                    .map(|n| Field {
                        name: n.to_string(),
                        data_type: DataType::Text,
                        table_oid: 0,
                        column_id: 0,
                    })
                    .collect();
                Ok(Plan::ShowAll)
            }
        }
    }

    /// COPY ... TO STDOUT: a plain scan of the table's columns, or the query's plan.
    fn plan_copy_to(&mut self, c: &super::parser::CopyStatement) -> Result<Plan> {
        let (select, names, types, by_key) = match &c.query {
            Some(text) => {
                let Statement::Ast(parsed) = super::parser::parse_statement(text)? else {
                    return Err(Error::unsupported(
                        "COPY (statement) TO supports only queries",
                    ));
                };
                let ast::Statement::Query(q) = parsed.as_ref() else {
                    return Err(Error::unsupported(
                        "COPY (INSERT, UPDATE, DELETE ... RETURNING) TO is not supported yet",
                    ));
                };
                let (select, names, types, _) = self.plan_query(q)?;
                if select.row_lock.is_some() {
                    return Err(Error::unsupported(
                        "COPY (SELECT ... FOR UPDATE/SHARE) TO is not supported",
                    ));
                }
                (select, names, types, false)
            }
            None => {
                let table = self.table_named(&c.table)?;
                self.require_on_table(&table, acl::SELECT);
                let def = table.def();
                let targets = self.target_columns(&def, c.columns.iter().cloned())?;
                let names = targets
                    .iter()
                    .map(|&i| def.columns[i].name.clone())
                    .collect();
                let types = targets.iter().map(|&i| def.columns[i].data_type).collect();
                let select = SelectPlan::whole_table(&table, targets.clone());
                (select, names, types, true)
            }
        };
        Ok(Plan::CopyTo(Box::new(CopyToPlan {
            select,
            names,
            types,
            by_key,
            stmt: c.clone(),
        })))
    }

    fn target_columns(
        &self,
        def: &TableDef,
        names: impl Iterator<Item = String>,
    ) -> Result<Vec<usize>> {
        let mut targets = Vec::new();
        for n in names {
            let i = def.column_index(&n).ok_or_else(|| {
                Error::new(
                    SqlState::UNDEFINED_COLUMN,
                    format!("column \"{n}\" of relation \"{}\" does not exist", def.name),
                )
            })?;
            if targets.contains(&i) {
                return Err(Error::new(
                    SqlState::DUPLICATE_COLUMN,
                    format!("column \"{n}\" specified more than once"),
                ));
            }
            targets.push(i);
        }
        if targets.is_empty() {
            targets = def.live_columns().collect();
        }
        Ok(targets)
    }

    /// Compile every column's DEFAULT expression.
    /// Bind a CHECK expression over a table's columns: it must be boolean, without
    /// subqueries or aggregates.
    fn bind_check(&mut self, e: &ast::Expr, scope: &Scope) -> Result<Expr> {
        self.binder.no_subqueries = Some("check constraint");
        let no_aggregates = self.binder.no_aggregates.replace("check constraints");
        let bound = self.binder.bind_bool(e, scope, "CHECK");
        self.binder.no_subqueries = None;
        self.binder.no_aggregates = no_aggregates;
        bound
    }

    /// The table's CHECK constraints, compiled over its rows: (name, expression).
    fn checks(&mut self, table: &Arc<Table>, def: &TableDef) -> Result<Vec<(String, Expr)>> {
        let scope = table_scope(table, def, None);
        def.checks
            .iter()
            .map(|c| {
                let ast = sqlparser::parser::Parser::new(&PostgreSqlDialect {})
                    .try_with_sql(&c.expr)
                    .and_then(|mut p| p.parse_expr())
                    .map_err(|e| Error::internal(format!("bad stored check {}: {e}", c.expr)))?;
                Ok((c.name.clone(), self.bind_check(&ast, &scope)?))
            })
            .collect()
    }

    fn defaults(&mut self, def: &TableDef) -> Result<Vec<Option<Expr>>> {
        def.columns
            .iter()
            .map(|c| match &c.default {
                None => Ok(None),
                Some(text) => {
                    let ast = sqlparser::parser::Parser::new(&PostgreSqlDialect {})
                        .try_with_sql(text)
                        .and_then(|mut p| p.parse_expr())
                        .map_err(|e| Error::internal(format!("bad stored default {text}: {e}")))?;
                    let t = self.binder.bind(&ast, &Scope::default())?;
                    Ok(Some(self.binder.coerce(t, c.data_type)?))
                }
            })
            .collect()
    }

    fn set_fields(
        &mut self,
        names: Vec<String>,
        types: Vec<DataType>,
        sources: Vec<Option<(u32, i16)>>,
    ) {
        self.fields = names
            .into_iter()
            .zip(types)
            .zip(sources)
            .map(|((name, t), src)| Field {
                name,
                data_type: if t == DataType::Unknown {
                    DataType::Text
                } else {
                    t
                },
                table_oid: src.map(|s| s.0).unwrap_or(0),
                column_id: src.map(|s| s.1).unwrap_or(0),
            })
            .collect();
    }

    fn plan_ast(&mut self, s: &ast::Statement) -> Result<Plan> {
        use ast::Statement as S;
        match s {
            S::Query(q) => {
                let (plan, names, types, sources) = self.plan_query(q)?;
                self.set_fields(names, types, sources);
                Ok(Plan::Select(Box::new(plan)))
            }
            S::Insert(ins) => self.plan_insert(ins),
            S::Comment {
                object_type,
                object_name,
                comment,
                ..
            } => self.plan_comment(object_type, object_name, comment.clone()),
            S::Update(u) => self.plan_update(u),
            S::Delete(d) => self.plan_delete(d),
            S::CreateTable(ct) => self.plan_create_table(ct),
            S::Drop {
                object_type: ast::ObjectType::Table,
                if_exists,
                names,
                cascade,
                ..
            } => Ok(Plan::DropTable {
                names: names.iter().map(object_name).collect::<Result<_>>()?,
                if_exists: *if_exists,
                cascade: *cascade,
            }),
            S::Truncate(t) => {
                let tables = t
                    .table_names
                    .iter()
                    .map(|n| self.table(&n.name))
                    .collect::<Result<Vec<_>>>()?;
                for table in &tables {
                    self.require_on_table(table, acl::TRUNCATE);
                }
                Ok(Plan::Truncate {
                    tables,
                    cascade: matches!(t.cascade, Some(ast::CascadeOption::Cascade)),
                    restart_identity: matches!(
                        t.identity,
                        Some(ast::TruncateIdentityOption::Restart)
                    ),
                })
            }
            S::Explain {
                analyze,
                verbose,
                statement,
                format,
                options,
                ..
            } => {
                let mut analyze = *analyze;
                let mut summary = None;
                let mut costs = true;
                let mut shown = super::explain::Format::Text;
                if *verbose || format.is_some() {
                    return Err(Error::unsupported(
                        "EXPLAIN VERBOSE and FORMAT are not supported yet",
                    ));
                }
                for o in options.iter().flatten() {
                    let name = ident_name(&o.name);
                    if name == "format" {
                        let value = match &o.arg {
                            Some(ast::Expr::Identifier(i)) => i.value.to_lowercase(),
                            Some(ast::Expr::Value(v)) => match &v.value {
                                ast::Value::SingleQuotedString(s) => s.to_lowercase(),
                                other => other.to_string().to_lowercase(),
                            },
                            _ => String::new(),
                        };
                        shown = match value.as_str() {
                            "text" => super::explain::Format::Text,
                            "json" => super::explain::Format::Json,
                            "yaml" => super::explain::Format::Yaml,
                            "xml" => super::explain::Format::Xml,
                            other => {
                                return Err(Error::new(
                                    SqlState::INVALID_PARAMETER_VALUE,
                                    format!(
                                    "unrecognized value for EXPLAIN option \"format\": \"{other}\""
                                ),
                                ))
                            }
                        };
                        continue;
                    }
                    let on = match &o.arg {
                        None => true,
                        Some(ast::Expr::Value(v)) => match &v.value {
                            ast::Value::Boolean(b) => *b,
                            ast::Value::Number(n, _) => n != "0",
                            ast::Value::SingleQuotedString(s) => {
                                matches!(s.to_lowercase().as_str(), "on" | "true" | "1")
                            }
                            _ => true,
                        },
                        Some(ast::Expr::Identifier(i)) => {
                            matches!(i.value.to_lowercase().as_str(), "on" | "true")
                        }
                        Some(_) => true,
                    };
                    match name.as_str() {
                        "analyze" => analyze = on,
                        "summary" => summary = Some(on),
                        "costs" => costs = on,
                        // Nodes are not timed (shown as with TIMING OFF); no buffer or
                        // WAL counts are kept, and no setting differs from its default.
                        "timing" | "buffers" | "wal" | "settings" => {}
                        other => {
                            return Err(Error::unsupported(format!(
                                "EXPLAIN option {} is not supported yet",
                                other.to_uppercase()
                            )))
                        }
                    }
                }
                let planning = std::time::Instant::now();
                let inner = self.plan_ast(statement)?;
                let planning_ms = planning.elapsed().as_secs_f64() * 1000.0;
                match &inner {
                    Plan::Select(_) | Plan::Insert(_) | Plan::Update(_) | Plan::Delete(_) => {}
                    _ => {
                        return Err(Error::syntax(
                            "EXPLAIN takes a SELECT, INSERT, UPDATE or DELETE",
                        ))
                    }
                }
                self.fields = vec![Field {
                    name: "QUERY PLAN".into(),
                    data_type: DataType::Text,
                    table_oid: 0,
                    column_id: 0,
                }];
                Ok(Plan::Explain {
                    inner: Box::new(inner),
                    analyze,
                    options: super::explain::Options {
                        format: shown,
                        costs,
                        summary: summary.unwrap_or(analyze),
                        planning_ms,
                    },
                })
            }
            S::Lock(lock) => {
                use ast::LockTableMode as M;
                let exclusive = match &lock.lock_mode {
                    None | Some(M::AccessExclusive) => true,
                    Some(M::AccessShare | M::RowShare | M::RowExclusive) => false,
                    Some(mode) => {
                        return Err(Error::unsupported(format!(
                            "LOCK TABLE IN {mode} MODE is not supported yet"
                        )))
                    }
                };
                if exclusive && lock.nowait {
                    return Err(Error::unsupported(
                        "LOCK TABLE IN ACCESS EXCLUSIVE MODE NOWAIT is not supported yet",
                    ));
                }
                let tables = lock
                    .tables
                    .iter()
                    .map(|t| self.table(&t.name))
                    .collect::<Result<Vec<_>>>()?;
                // PostgreSQL's `LockTableAclCheck`: any one of the privileges.
                let needed = match &lock.lock_mode {
                    Some(M::AccessShare) => acl::SELECT,
                    Some(M::RowExclusive) => {
                        acl::ANY_OF | acl::INSERT | acl::UPDATE | acl::DELETE | acl::TRUNCATE
                    }
                    _ => acl::ANY_OF | acl::UPDATE | acl::DELETE | acl::TRUNCATE,
                };
                for table in &tables {
                    self.require_on_table(table, needed);
                }
                Ok(Plan::LockTables {
                    tables,
                    exclusive,
                    nowait: lock.nowait,
                })
            }
            S::AlterTable(at) => self.plan_alter(at),
            S::CreateIndex(ci) => self.plan_create_index(ci),
            S::CreateView(cv) => self.plan_create_view(cv),
            S::CreateRole(cr) => Ok(Plan::Role(super::roles::plan_create(cr)?)),
            S::Grant(g) => Ok(Plan::Role(super::roles::plan_grant(
                false,
                &g.privileges,
                g.objects.as_ref(),
                &g.grantees,
                g.with_grant_option,
                g.granted_by.is_some() || g.as_grantor.is_some(),
            )?)),
            S::Revoke(r) => Ok(Plan::Role(super::roles::plan_grant(
                true,
                &r.privileges,
                r.objects.as_ref(),
                &r.grantees,
                false,
                r.granted_by.is_some() || r.grant_option_for,
            )?)),
            S::AlterRole { name, operation } => {
                Ok(Plan::Role(super::roles::plan_alter(name, operation)?))
            }
            S::Drop {
                object_type: ast::ObjectType::Role | ast::ObjectType::User,
                if_exists,
                names,
                ..
            } => Ok(Plan::Role(super::roles::plan_drop(names, *if_exists)?)),
            S::Drop {
                object_type: ast::ObjectType::View,
                if_exists,
                names,
                cascade,
                ..
            } => Ok(Plan::DropView {
                names: names.iter().map(object_name).collect::<Result<_>>()?,
                if_exists: *if_exists,
                cascade: *cascade,
            }),
            S::CreateSequence {
                temporary,
                if_not_exists,
                name,
                data_type,
                sequence_options,
                owned_by,
            } => {
                if *temporary {
                    return Err(Error::unsupported(
                        "temporary sequences are not supported yet",
                    ));
                }
                self.plan_create_sequence(
                    name,
                    *if_not_exists,
                    data_type.as_ref(),
                    sequence_options,
                    owned_by.as_ref(),
                )
            }
            S::Drop {
                object_type: ast::ObjectType::Sequence,
                if_exists,
                names,
                ..
            } => Ok(Plan::DropSequence {
                names: names.iter().map(object_name).collect::<Result<_>>()?,
                if_exists: *if_exists,
            }),
            S::Drop {
                object_type: ast::ObjectType::Index,
                if_exists,
                names,
                ..
            } => self.plan_drop_index(names, *if_exists),
            S::StartTransaction { modes, begin, .. } => Ok(TxnStatement::Begin {
                modes: txn_modes(modes)?,
                tag: if *begin { "BEGIN" } else { "START TRANSACTION" },
            }
            .into()),
            S::Commit { chain, .. } => Ok(TxnStatement::Commit { chain: *chain }.into()),
            S::Rollback {
                chain,
                savepoint: None,
            } => Ok(TxnStatement::Rollback { chain: *chain }.into()),
            S::Rollback {
                chain: false,
                savepoint: Some(name),
            } => Ok(TxnStatement::RollbackToSavepoint {
                name: name.value.clone(),
            }
            .into()),
            S::Rollback { chain: true, .. } => Err(Error::syntax("syntax error at or near \"TO\"")),
            S::Savepoint { name } => Ok(TxnStatement::Savepoint {
                name: name.value.clone(),
            }
            .into()),
            S::ReleaseSavepoint { name } => Ok(TxnStatement::ReleaseSavepoint {
                name: name.value.clone(),
            }
            .into()),
            S::Set(set) => self.plan_set(set),
            S::Prepare {
                name,
                data_types,
                statement,
            } => {
                use ast::Statement as S2;
                if !matches!(
                    statement.as_ref(),
                    S2::Query(_) | S2::Insert(_) | S2::Update(_) | S2::Delete(_)
                ) {
                    return Err(Error::syntax(
                        "PREPARE takes only SELECT, INSERT, UPDATE or DELETE",
                    ));
                }
                let param_oids = data_types
                    .iter()
                    .map(|t| super::bind::data_type(t).map(|(t, _)| t.oid()))
                    .collect::<Result<Vec<_>>>()?;
                Ok(Plan::Prepare {
                    name: ident_name(name),
                    sql: statement.to_string(),
                    param_oids,
                })
            }
            S::Execute {
                name: Some(name),
                parameters,
                immediate: false,
                into,
                using,
                ..
            } if into.is_empty() && using.is_empty() => {
                self.binder.no_aggregates = Some("EXECUTE parameter");
                let args = parameters
                    .iter()
                    .map(|p| {
                        let t = self.binder.bind(p, &Scope::default())?;
                        if !t.0.is_row_independent() {
                            return Err(Error::unsupported("EXECUTE parameters must be constants"));
                        }
                        Ok(t.0)
                    })
                    .collect::<Result<Vec<_>>>();
                self.binder.no_aggregates = None;
                Ok(Plan::Execute {
                    name: object_name(name)?,
                    args: args?,
                })
            }
            S::Deallocate { name, .. } => Ok(Plan::Deallocate {
                name: (name.quote_style.is_some() || !name.value.eq_ignore_ascii_case("all"))
                    .then(|| name.value.clone()),
            }),
            S::ShowVariable { variable } => {
                let name = variable
                    .iter()
                    .map(|i| i.value.clone())
                    .collect::<Vec<_>>()
                    .join(" ");
                let name = match name.to_lowercase().as_str() {
                    "transaction isolation level" => "transaction_isolation".to_string(),
                    "time zone" => "TimeZone".to_string(),
                    _ => name,
                };
                let def_name = crate::settings::def(&name).map(|d| d.name.to_string());
                // The column is named as the setting is (`TimeZone`), as in PostgreSQL.
                let shown = match def_name {
                    Some(n) => n,
                    None if name.eq_ignore_ascii_case("transaction_isolation")
                        || name.eq_ignore_ascii_case("transaction_read_only") =>
                    {
                        name.to_lowercase()
                    }
                    None => {
                        return Err(Error::new(
                            SqlState::UNDEFINED_OBJECT,
                            format!("unrecognized configuration parameter \"{name}\""),
                        ))
                    }
                };
                self.fields = vec![Field {
                    name: shown,
                    data_type: DataType::Text,
                    table_oid: 0,
                    column_id: 0,
                }];
                Ok(Plan::Show { name })
            }
            S::Reset(r) => match &r.reset {
                ast::Reset::ALL => Ok(Plan::Reset { name: None }),
                ast::Reset::ConfigurationParameter(n) => Ok(Plan::Reset {
                    name: Some(n.to_string()),
                }),
                ast::Reset::SessionAuthorization => Ok(Plan::Reset {
                    name: Some("session_authorization".into()),
                }),
            },
            S::Analyze(_) | S::Vacuum(_) => {
                Err(Error::internal("VACUUM and ANALYZE are parsed apart"))
            }
            S::Drop { object_type, .. } => Err(Error::unsupported(format!(
                "DROP {object_type} is not supported yet"
            ))),
            other => {
                let text = other.to_string();
                let head: String = text
                    .split_whitespace()
                    .take(2)
                    .collect::<Vec<_>>()
                    .join(" ");
                Err(Error::unsupported(format!("{head} is not supported yet")))
            }
        }
    }

    fn plan_set(&mut self, set: &ast::Set) -> Result<Plan> {
        match set {
            ast::Set::SingleAssignment {
                scope,
                variable,
                values,
                ..
            } => {
                let name = variable.to_string();
                let local = matches!(scope, Some(ast::ContextModifier::Local));
                let value = match values.as_slice() {
                    [ast::Expr::Identifier(i)]
                        if i.quote_style.is_none() && i.value.eq_ignore_ascii_case("default") =>
                    {
                        None
                    }
                    vals => Some(
                        vals.iter()
                            .map(super::roles::setting_value)
                            .collect::<Vec<_>>()
                            .join(", "),
                    ),
                };
                Ok(Plan::Set { name, value, local })
            }
            ast::Set::SetTimeZone { value, local } => Ok(Plan::Set {
                name: "TimeZone".into(),
                value: time_zone_value(value)?,
                local: *local,
            }),
            ast::Set::SetTransaction {
                modes,
                snapshot: None,
                session,
            } => {
                let modes = txn_modes(modes)?;
                Ok(if *session {
                    TxnStatement::SetSessionCharacteristics { modes }
                } else {
                    TxnStatement::SetTransaction { modes }
                }
                .into())
            }
            ast::Set::SetRole {
                context_modifier,
                role_name,
            } => Ok(Plan::Set {
                name: "role".into(),
                value: role_name
                    .as_ref()
                    .map(|r| r.value.clone())
                    .filter(|r| !r.eq_ignore_ascii_case("none")),
                local: matches!(context_modifier, Some(ast::ContextModifier::Local)),
            }),
            ast::Set::SetSessionAuthorization(param) => Ok(Plan::Set {
                name: "session_authorization".into(),
                value: match &param.kind {
                    ast::SetSessionAuthorizationParamKind::Default => None,
                    ast::SetSessionAuthorizationParamKind::User(user) => Some(user.value.clone()),
                },
                local: matches!(param.scope, ast::ContextModifier::Local),
            }),
            ast::Set::SetNames { .. } => Ok(Plan::Set {
                name: "client_encoding".into(),
                value: Some("UTF8".into()),
                local: false,
            }),
            other => Err(Error::unsupported(format!("{other} is not supported yet"))),
        }
    }

    fn plan_create_table(&mut self, ct: &ast::CreateTable) -> Result<Plan> {
        if ct.query.is_some() {
            return Err(Error::unsupported("CREATE TABLE AS is not supported yet"));
        }
        if ct.temporary {
            return Err(Error::unsupported("temporary tables are not supported yet"));
        }
        let name = object_name(&ct.name)?;
        let mut columns = Vec::new();
        let mut primary_key = Vec::new();
        let mut pkey_name = None;
        let mut owned_sequences = Vec::new();
        // CHECK constraints: (name, expression)
        let mut checks: Vec<(Option<String>, ast::Expr)> = Vec::new();
        let mut uniques: Vec<(Option<String>, Vec<usize>)> = Vec::new();
        let mut foreign_keys: Vec<ast::ForeignKeyConstraint> = Vec::new();
        for col in &ct.columns {
            let cname = ident_name(&col.name);
            if columns.iter().any(|c: &Column| c.name == cname) {
                return Err(Error::new(
                    SqlState::DUPLICATE_COLUMN,
                    format!("column \"{cname}\" specified more than once"),
                ));
            }
            let (ty, serial) = data_type(&col.data_type)?;
            if ty.is_catalog_only() {
                return Err(Error::unsupported(format!(
                    "columns of type {} are not supported yet",
                    ty.name()
                )));
            }
            let mut c = Column {
                name: cname.clone(),
                data_type: ty,
                not_null: false,
                default: None,
                missing: None,
                dropped: false,
                identity: false,
                description: None,
            };
            if serial {
                let seq = format!("{name}_{cname}_seq");
                c.default = Some(format!("nextval('{seq}')"));
                c.not_null = true;
                owned_sequences.push(seq);
            }
            for opt in &col.options {
                match &opt.option {
                    ast::ColumnOption::Null => {}
                    ast::ColumnOption::NotNull => c.not_null = true,
                    ast::ColumnOption::Default(e) => {
                        // Check it binds now (no columns in scope), store its text.
                        self.binder.no_subqueries = Some("DEFAULT expression");
                        let t = self.binder.bind(e, &Scope::default());
                        self.binder.no_subqueries = None;
                        let t = t?;
                        self.binder.coerce(t, ty)?;
                        c.default = Some(e.to_string());
                    }
                    ast::ColumnOption::Generated {
                        generated_as: ast::GeneratedAs::ByDefault,
                        sequence_options,
                        generation_expr: None,
                        ..
                    } if sequence_options.as_ref().is_none_or(|o| o.is_empty()) => {
                        // An identity column generated by default is a serial column: an
                        // owned sequence and a default that takes its next value.
                        if !ty.is_integer() {
                            return Err(Error::new(
                                SqlState::INVALID_PARAMETER_VALUE,
                                "identity column type must be smallint, integer, or bigint",
                            ));
                        }
                        if c.default.is_some() {
                            return Err(Error::syntax(format!(
                                "multiple default values specified for column \"{cname}\" of table \"{name}\""
                            )));
                        }
                        let seq = format!("{name}_{cname}_seq");
                        c.default = Some(format!("nextval('{seq}')"));
                        c.not_null = true;
                        c.identity = true;
                        owned_sequences.push(seq);
                    }
                    ast::ColumnOption::Generated { .. } => {
                        return Err(Error::unsupported(
                            "generated columns other than GENERATED BY DEFAULT AS IDENTITY are not supported yet",
                        ))
                    }
                    ast::ColumnOption::PrimaryKey(pk) => {
                        if !primary_key.is_empty() {
                            return Err(Error::new(
                                SqlState::INVALID_TABLE_DEFINITION,
                                format!(
                                    "multiple primary keys for table \"{name}\" are not allowed"
                                ),
                            ));
                        }
                        primary_key.push(columns.len());
                        pkey_name = pk
                            .name
                            .as_ref()
                            .map(ident_name)
                            .or_else(|| opt.name.as_ref().map(ident_name));
                    }
                    ast::ColumnOption::Check(cc) => {
                        let named = cc.name.as_ref().or(opt.name.as_ref()).map(ident_name);
                        checks.push((named, (*cc.expr).clone()));
                    }
                    ast::ColumnOption::Unique(uc) => {
                        check_unique_options(uc)?;
                        let named = uc.name.as_ref().or(opt.name.as_ref()).map(ident_name);
                        uniques.push((named, vec![columns.len()]));
                    }
                    ast::ColumnOption::ForeignKey(fk) => {
                        let mut fk = fk.clone();
                        fk.name = fk.name.or_else(|| opt.name.clone());
                        fk.columns = vec![col.name.clone()];
                        foreign_keys.push(fk);
                    }
                    other => {
                        return Err(Error::unsupported(format!(
                            "column constraint {other} is not supported yet"
                        )))
                    }
                }
            }
            columns.push(c);
        }
        let def_cols = columns.clone();
        for con in &ct.constraints {
            match con {
                ast::TableConstraint::PrimaryKey(pk) => {
                    if !primary_key.is_empty() {
                        return Err(Error::new(
                            SqlState::INVALID_TABLE_DEFINITION,
                            format!("multiple primary keys for table \"{name}\" are not allowed"),
                        ));
                    }
                    for ic in &pk.columns {
                        let cname = key_column_name(ic)?;
                        let i = def_cols
                            .iter()
                            .position(|c| c.name == cname)
                            .ok_or_else(|| {
                                Error::new(
                                    SqlState::UNDEFINED_COLUMN,
                                    format!("column \"{cname}\" named in key does not exist"),
                                )
                            })?;
                        primary_key.push(i);
                    }
                    pkey_name = pk.name.as_ref().map(ident_name);
                }
                ast::TableConstraint::Unique(uc) => {
                    check_unique_options(uc)?;
                    let mut cols = Vec::new();
                    for ic in &uc.columns {
                        let cname = key_column_name(ic)?;
                        let i = def_cols
                            .iter()
                            .position(|c| c.name == cname)
                            .ok_or_else(|| {
                                Error::new(
                                    SqlState::UNDEFINED_COLUMN,
                                    format!("column \"{cname}\" named in key does not exist"),
                                )
                            })?;
                        cols.push(i);
                    }
                    uniques.push((uc.name.as_ref().map(ident_name), cols));
                }
                ast::TableConstraint::Check(cc) => {
                    checks.push((cc.name.as_ref().map(ident_name), (*cc.expr).clone()));
                }
                ast::TableConstraint::ForeignKey(fk) => foreign_keys.push(fk.clone()),
                other => {
                    return Err(Error::unsupported(format!(
                        "table constraint {other} is not supported yet"
                    )))
                }
            }
        }
        for &i in &primary_key {
            columns[i].not_null = true;
        }
        if !primary_key.is_empty() && pkey_name.is_none() {
            pkey_name = Some(format!("{name}_pkey"));
        }
        // Unique constraints' indexes, named as PostgreSQL names them where not named.
        let mut taken: Vec<String> = pkey_name.iter().cloned().collect();
        let mut indexes = Vec::new();
        for (named, cols) in uniques {
            let index_name = match named {
                Some(n) => n,
                None => self.free_relation_name_beside(
                    &column_name_base(&name, &columns, &cols),
                    "key",
                    &taken,
                ),
            };
            if taken.contains(&index_name) || self.relation_taken(&index_name) {
                return Err(Error::new(
                    SqlState::DUPLICATE_TABLE,
                    format!("relation \"{index_name}\" already exists"),
                ));
            }
            taken.push(index_name.clone());
            let number = indexes.len() as u32;
            indexes.push(crate::storage::IndexDef {
                name: index_name,
                columns: cols,
                unique: true,
                constraint: true,
                number,
                opclasses: Vec::new(),
            });
        }
        let mut def = TableDef {
            name,
            columns,
            primary_key,
            pkey_name,
            owned_sequences,
            indexes,
            checks: Vec::new(),
            foreign_keys: Vec::new(),
            description: None,
        };
        // CHECK constraints: each must bind over the table's columns to a boolean; an
        // unnamed one is named for the first column it reads, as PostgreSQL names it.
        if checks.len() > super::pg_catalog::MAX_CHECKS as usize {
            return Err(Error::new(
                SqlState::PROGRAM_LIMIT_EXCEEDED,
                format!(
                    "a table can have at most {} check constraints",
                    super::pg_catalog::MAX_CHECKS
                ),
            ));
        }
        let placeholder = self.placeholder_table(def.clone());
        let scope = table_scope(&placeholder, &def, None);
        for (named, expr) in checks {
            let (check, _) = self.new_check(&def, &scope, named, &expr)?;
            def.checks.push(check);
        }
        for fk in &foreign_keys {
            let resolved = self.foreign_key(&def, fk, true)?;
            def.foreign_keys.push(resolved);
        }
        Ok(Plan::CreateTable {
            def,
            if_not_exists: ct.if_not_exists,
        })
    }

    /// A new CHECK constraint of the table `def` describes, bound over `scope` (its
    /// rows): its definition and its expression. An unnamed one is named for the one
    /// column it reads (`t_c_check`), else `t_check`, numbered past names taken.
    fn new_check(
        &mut self,
        def: &TableDef,
        scope: &Scope,
        named: Option<String>,
        expr: &ast::Expr,
    ) -> Result<(crate::storage::CheckDef, Expr)> {
        let bound = self.bind_check(expr, scope)?;
        let taken = |n: &str| def.checks.iter().any(|c| c.name == n);
        let check_name = match named {
            Some(n) => n,
            None => {
                let mut read = Vec::new();
                referenced_columns(expr, def, &mut read);
                let base = match read.as_slice() {
                    [c] => format!("{}_{c}_check", def.name),
                    _ => format!("{}_check", def.name),
                };
                if taken(&base) {
                    (1..)
                        .map(|k| format!("{base}{k}"))
                        .find(|n| !taken(n))
                        .unwrap_or(base)
                } else {
                    base
                }
            }
        };
        if taken(&check_name) {
            return Err(Error::new(
                SqlState::DUPLICATE_OBJECT,
                format!("check constraint \"{check_name}\" already exists"),
            ));
        }
        // Stored without the parentheses around it (pg_dump writes `CHECK ((e))`).
        let mut bare = expr;
        while let ast::Expr::Nested(inner) = bare {
            bare = inner;
        }
        let check = crate::storage::CheckDef {
            name: check_name,
            expr: bare.to_string(),
            validated: true,
        };
        Ok((check, bound))
    }

    /// ALTER TABLE ... DROP COLUMN: the column stays in the rows, dropped (see
    /// `storage::Column::dropped`); the CHECK constraints and foreign keys that use it go
    /// with it, as in PostgreSQL. A column a key, an index, a view or an owned sequence
    /// depends on is refused for now.
    fn plan_drop_column(
        &mut self,
        table: Arc<Table>,
        def: &TableDef,
        column: usize,
    ) -> Result<Plan> {
        let cname = def.columns[column].name.clone();
        if def.primary_key.contains(&column) {
            return Err(Error::unsupported(
                "dropping a primary key column is not supported yet",
            ));
        }
        if let Some(index) = def.indexes.iter().find(|i| i.columns.contains(&column)) {
            return Err(Error::unsupported(format!(
                "dropping a column that index \"{}\" uses is not supported yet",
                index.name
            ))
            .with_hint("Drop the index (or its constraint) first."));
        }
        if !self
            .engine
            .txn
            .catalog
            .dependent_views(&def.name, self.hidden)
            .is_empty()
        {
            return Err(Error::unsupported(
                "dropping a column of a table that a view reads is not supported yet",
            ));
        }
        let owns_sequence = def.columns[column].default.as_deref().is_some_and(|d| {
            def.owned_sequences
                .iter()
                .any(|seq| d == format!("nextval('{seq}')"))
        });
        if owns_sequence {
            return Err(Error::unsupported(
                "dropping a column that owns a sequence is not supported yet",
            ));
        }
        let mut new_def = def.clone();
        new_def.checks.retain(|c| {
            let read = sqlparser::parser::Parser::new(&PostgreSqlDialect {})
                .try_with_sql(&c.expr)
                .and_then(|mut p| p.parse_expr())
                .map(|e| {
                    let mut read = Vec::new();
                    referenced_columns(&e, def, &mut read);
                    read
                });
            !read.is_ok_and(|r| r.contains(&cname))
        });
        new_def
            .foreign_keys
            .retain(|fk| !fk.columns.contains(&column));
        let c = &mut new_def.columns[column];
        c.name = TableDef::dropped_name(column);
        c.dropped = true;
        c.not_null = false;
        c.default = None;
        Ok(Plan::DropColumn {
            table,
            def: new_def,
        })
    }

    /// Resolve a FOREIGN KEY constraint of the table `def` describes (`creating`: by
    /// CREATE TABLE, so a reference to its own name is to itself), as PostgreSQL checks
    /// one: the referenced columns (the primary key where none are named) must be those
    /// of the referenced table's primary key or of one of its unique constraints, and
    /// each pair of columns must compare.
    fn foreign_key(
        &mut self,
        def: &TableDef,
        fk: &ast::ForeignKeyConstraint,
        creating: bool,
    ) -> Result<crate::storage::ForeignKeyDef> {
        use crate::storage::{FkAction, ForeignKeyDef, TableId};
        let match_full = match fk.match_kind {
            None | Some(ast::ConstraintReferenceMatchKind::Simple) => false,
            Some(ast::ConstraintReferenceMatchKind::Full) => true,
            Some(ast::ConstraintReferenceMatchKind::Partial) => {
                return Err(Error::unsupported("MATCH PARTIAL not yet implemented"))
            }
        };
        let characteristics = fk.characteristics.unwrap_or_default();
        if characteristics.enforced == Some(false) {
            return Err(Error::unsupported(
                "NOT ENFORCED constraints are not supported yet",
            ));
        }
        let initially_deferred = matches!(
            characteristics.initially,
            Some(ast::DeferrableInitial::Deferred)
        );
        if initially_deferred && characteristics.deferrable == Some(false) {
            return Err(Error::syntax(
                "constraint declared INITIALLY DEFERRED must be DEFERRABLE",
            ));
        }
        let deferrable = characteristics.deferrable.unwrap_or(initially_deferred);
        let action = |a: Option<ast::ReferentialAction>| -> Result<FkAction> {
            Ok(match a {
                None | Some(ast::ReferentialAction::NoAction) => FkAction::NoAction,
                Some(ast::ReferentialAction::Restrict) => FkAction::Restrict,
                Some(ast::ReferentialAction::Cascade) => FkAction::Cascade,
                Some(ast::ReferentialAction::SetNull) => FkAction::SetNull,
                Some(ast::ReferentialAction::SetDefault) => FkAction::SetDefault,
            })
        };
        let (on_delete, on_update) = (action(fk.on_delete)?, action(fk.on_update)?);
        let parent_name = object_name(&fk.foreign_table)?;
        let own = creating && parent_name == def.name;
        let (referenced, parent_def) = if own {
            (TableId::SELF_REFERENCE, Arc::new(def.clone()))
        } else {
            if self.visible_view(&parent_name).is_some() {
                return Err(Error::new(
                    SqlState::WRONG_OBJECT_TYPE,
                    format!("referenced relation \"{parent_name}\" is not a table"),
                ));
            }
            let parent = self.table(&fk.foreign_table)?;
            let parent_def = parent.def();
            (parent.id, parent_def)
        };
        let mut columns = Vec::new();
        for c in &fk.columns {
            let cname = ident_name(c);
            columns.push(def.column_index(&cname).ok_or_else(|| {
                Error::new(
                    SqlState::UNDEFINED_COLUMN,
                    format!(
                        "column \"{cname}\" referenced in foreign key constraint does not exist"
                    ),
                )
            })?);
        }
        let referenced_columns = if fk.referred_columns.is_empty() {
            if parent_def.primary_key.is_empty() {
                return Err(Error::new(
                    SqlState::INVALID_FOREIGN_KEY,
                    format!(
                        "there is no primary key for referenced table \"{}\"",
                        parent_def.name
                    ),
                ));
            }
            parent_def.primary_key.clone()
        } else {
            let mut cols = Vec::new();
            for c in &fk.referred_columns {
                let cname = ident_name(c);
                cols.push(parent_def.column_index(&cname).ok_or_else(|| {
                    Error::new(
                        SqlState::UNDEFINED_COLUMN,
                        format!(
                            "column \"{cname}\" referenced in foreign key constraint does not exist"
                        ),
                    )
                })?);
            }
            cols
        };
        if columns.len() != referenced_columns.len() {
            return Err(Error::new(
                SqlState::INVALID_FOREIGN_KEY,
                "number of referencing and referenced columns for foreign key disagree",
            ));
        }
        let same_set = |a: &[usize]| {
            let (mut a, mut b) = (a.to_vec(), referenced_columns.clone());
            a.sort_unstable();
            b.sort_unstable();
            a == b
        };
        let unique = same_set(&parent_def.primary_key)
            || parent_def
                .indexes
                .iter()
                .any(|i| i.unique && same_set(&i.columns));
        if !unique {
            return Err(Error::new(
                SqlState::INVALID_FOREIGN_KEY,
                format!(
                    "there is no unique constraint matching given keys for referenced table \"{}\"",
                    parent_def.name
                ),
            ));
        }
        let name = match &fk.name {
            Some(n) => ident_name(n),
            None => {
                let names: Vec<&str> = columns
                    .iter()
                    .map(|&c| def.columns[c].name.as_str())
                    .collect();
                let base = format!("{}_{}_fkey", def.name, names.join("_"));
                let taken = |n: &str| {
                    def.foreign_keys.iter().any(|f| f.name == n)
                        || def.checks.iter().any(|c| c.name == n)
                        || def.indexes.iter().any(|i| i.name == n)
                };
                if taken(&base) {
                    (1..)
                        .map(|k| format!("{}_{}_fkey{k}", def.name, names.join("_")))
                        .find(|n| !taken(n))
                        .unwrap_or(base)
                } else {
                    base
                }
            }
        };
        if def.foreign_keys.iter().any(|f| f.name == name)
            || def.checks.iter().any(|c| c.name == name)
        {
            return Err(Error::new(
                SqlState::DUPLICATE_OBJECT,
                format!(
                    "constraint \"{name}\" for relation \"{}\" already exists",
                    def.name
                ),
            ));
        }
        if def.foreign_keys.len() >= super::pg_catalog::MAX_FOREIGN_KEYS as usize {
            return Err(Error::new(
                SqlState::PROGRAM_LIMIT_EXCEEDED,
                format!(
                    "a table can have at most {} foreign keys",
                    super::pg_catalog::MAX_FOREIGN_KEYS
                ),
            ));
        }
        for (&c, &r) in columns.iter().zip(&referenced_columns) {
            let (a, b) = (def.columns[c].data_type, parent_def.columns[r].data_type);
            if !comparable_key_types(a, b) {
                return Err(Error::new(
                    SqlState::DATATYPE_MISMATCH,
                    format!("foreign key constraint \"{name}\" cannot be implemented"),
                )
                .with_detail(format!(
                    "Key columns \"{}\" and \"{}\" are of incompatible types: {} and {}.",
                    def.columns[c].name,
                    parent_def.columns[r].name,
                    a.name(),
                    b.name()
                )));
            }
        }
        Ok(ForeignKeyDef {
            name,
            columns,
            referenced,
            referenced_columns,
            on_delete,
            on_update,
            deferrable,
            initially_deferred,
            match_full,
            validated: true,
        })
    }

    fn plan_create_index(&mut self, ci: &ast::CreateIndex) -> Result<Plan> {
        let table = self.table(&ci.table_name)?;
        if let Some(using) = &ci.using {
            if !using.to_string().eq_ignore_ascii_case("btree") {
                return Err(Error::unsupported(format!(
                    "index access method \"{using}\" is not supported yet"
                )));
            }
        }
        let refused = [
            (!ci.include.is_empty(), "INCLUDE"),
            (ci.predicate.is_some(), "partial indexes (WHERE)"),
            (ci.nulls_distinct == Some(false), "NULLS NOT DISTINCT"),
            (!ci.with.is_empty(), "index storage parameters (WITH)"),
            (
                !ci.index_options.is_empty() || !ci.alter_options.is_empty(),
                "these index options",
            ),
        ];
        if let Some((_, what)) = refused.iter().find(|(r, _)| *r) {
            return Err(Error::unsupported(format!(
                "{what} in CREATE INDEX is not supported yet"
            )));
        }
        let def = table.def();
        let mut columns = Vec::new();
        let mut opclasses = Vec::new();
        for ic in &ci.columns {
            if !matches!(ic.column.options.sort, None | Some(ast::OrderBySort::Asc))
                || ic.column.options.nulls_first.is_some()
            {
                return Err(Error::unsupported(
                    "DESC and NULLS FIRST/LAST index columns are not supported yet",
                ));
            }
            let cname = match &ic.column.expr {
                ast::Expr::Identifier(i) => ident_name(i),
                other => {
                    return Err(Error::unsupported(format!(
                        "indexes on expressions ({other}) are not supported yet"
                    )))
                }
            };
            let c = def.column_index(&cname).ok_or_else(|| {
                Error::new(
                    SqlState::UNDEFINED_COLUMN,
                    format!("column \"{cname}\" does not exist"),
                )
            })?;
            opclasses.push(match &ic.operator_class {
                Some(name) => index_opclass(&object_name(name)?, def.columns[c].data_type)?,
                None => None,
            });
            columns.push(c);
        }
        if opclasses.iter().all(Option::is_none) {
            opclasses.clear();
        }
        if columns.len() > 32 {
            return Err(Error::new(
                SqlState::TOO_MANY_COLUMNS,
                "cannot use more than 32 columns in an index",
            ));
        }
        let name = match &ci.name {
            Some(n) => object_name(n)?,
            None => {
                self.free_relation_name(&column_name_base(&def.name, &def.columns, &columns), "idx")
            }
        };
        Ok(Plan::CreateIndex {
            table,
            def: crate::storage::IndexDef {
                name,
                columns,
                unique: ci.unique,
                constraint: false,
                number: 0,
                opclasses,
            },
            if_not_exists: ci.if_not_exists,
        })
    }

    /// Whether a relation (or index) named `name` exists, not counting those the
    /// planning transaction dropped (it may give their names to new ones).
    fn relation_taken(&self, name: &str) -> bool {
        let catalog = &self.engine.txn.catalog;
        catalog.relation_exists_seen(name, &|id| (self.hidden)(id) && !catalog.is_unconfirmed(id))
    }

    /// `base_suffix`, or with a number after it, whichever no relation has yet (as
    /// PostgreSQL chooses the names of indexes and constraints).
    fn free_relation_name(&self, base: &str, suffix: &str) -> String {
        self.free_relation_name_beside(base, suffix, &[])
    }

    /// [`Self::free_relation_name`], also avoiding the names `also` (the statement's own).
    fn free_relation_name_beside(&self, base: &str, suffix: &str, also: &[String]) -> String {
        let taken = |n: &str| self.relation_taken(n) || also.iter().any(|a| a == n);
        let mut base = base.to_string();
        // Names are cut to NAMEDATALEN - 1 bytes, keeping the suffix.
        while base.len() + suffix.len() + 1 > 63 {
            base.pop();
        }
        let first = format!("{base}_{suffix}");
        if !taken(&first) {
            return first;
        }
        (1..)
            .map(|n| format!("{base}_{suffix}{n}"))
            .find(|n| !taken(n))
            .unwrap_or(first)
    }

    fn plan_drop_index(&mut self, names: &[ast::ObjectName], if_exists: bool) -> Result<Plan> {
        let catalog = &self.engine.txn.catalog;
        let mut indexes = Vec::new();
        let mut missing = Vec::new();
        for n in names {
            let name = object_name(n)?;
            if let Some(table) = catalog
                .table_names()
                .iter()
                .filter_map(|n| catalog.table(n))
                .find(|t| {
                    let def = t.def();
                    !def.primary_key.is_empty() && def.pkey_name.as_deref() == Some(name.as_str())
                })
            {
                return Err(Error::new(
                    SqlState::DEPENDENT_OBJECTS_STILL_EXIST,
                    format!(
                        "cannot drop index {name} because constraint {name} on table {} requires it",
                        table.def().name
                    ),
                )
                .with_hint(format!(
                    "You can drop constraint {name} on table {} instead.",
                    table.def().name
                )));
            }
            match catalog.index_owner(&name) {
                Some(table) => indexes.push((table, name)),
                None if if_exists => missing.push(name),
                None => {
                    return Err(Error::new(
                        SqlState::UNDEFINED_OBJECT,
                        format!("index \"{name}\" does not exist"),
                    ))
                }
            }
        }
        Ok(Plan::DropIndex {
            indexes,
            missing,
            constraint: false,
        })
    }

    /// An ORDER BY or DISTINCT ON expression: an output position, an output name, or an
    /// expression over the input row.
    fn sort_expr(
        &mut self,
        e: &ast::Expr,
        projection: &[Expr],
        names: &[String],
        scope: &Scope,
    ) -> Result<Expr> {
        let by_output = match e {
            ast::Expr::Value(_) => {
                order_position(e, projection.len())?.map(|k| projection[k].clone())
            }
            ast::Expr::Identifier(i) => {
                let n = ident_name(i);
                let matches: Vec<usize> = names
                    .iter()
                    .enumerate()
                    .filter(|(_, x)| **x == n)
                    .map(|(k, _)| k)
                    .collect();
                match matches.as_slice() {
                    [k] => Some(projection[*k].clone()),
                    [k, ..] if !scope.columns.iter().any(|c| c.name == n) => {
                        Some(projection[*k].clone())
                    }
                    _ => None,
                }
            }
            _ => None,
        };
        Ok(match by_output {
            Some(e) => e,
            None => {
                let t = self.binder.bind(e, scope)?;
                let ty = if t.1 == DataType::Unknown {
                    DataType::Text
                } else {
                    t.1
                };
                self.binder.coerce(t, ty)?
            }
        })
    }

    fn plan_create_view(&mut self, cv: &ast::CreateView) -> Result<Plan> {
        if cv.or_alter {
            return Err(Error::unsupported("CREATE OR ALTER VIEW is not supported"));
        }
        if cv.materialized {
            return Err(Error::unsupported(
                "materialized views are not supported yet",
            ));
        }
        if cv.temporary {
            return Err(Error::unsupported("temporary views are not supported yet"));
        }
        let name = object_name(&cv.name)?;
        let existing = self.visible_view(&name);
        if existing.is_some() && !cv.or_replace {
            return Err(Error::new(
                SqlState::DUPLICATE_TABLE,
                format!("relation \"{name}\" already exists"),
            ));
        }
        // (Not counting the views this transaction dropped, nor, until the statement
        // runs, those others created and have not committed.)
        if existing.is_none()
            && self
                .engine
                .txn
                .catalog
                .relation_exists_seen(&name, self.hidden)
        {
            return Err(match cv.or_replace {
                true => Error::new(
                    SqlState::WRONG_OBJECT_TYPE,
                    format!("\"{name}\" is not a view"),
                ),
                false => Error::new(
                    SqlState::DUPLICATE_TABLE,
                    format!("relation \"{name}\" already exists"),
                ),
            });
        }
        let read_before = std::mem::take(&mut self.binder.relations_read);
        let planned = self.plan_derived(&cv.query);
        let depends_on = std::mem::replace(&mut self.binder.relations_read, read_before);
        let (_, mut names, types) = planned?;
        if cv.columns.len() > names.len() {
            return Err(Error::syntax(
                "CREATE VIEW specifies more column names than columns",
            ));
        }
        for (k, c) in cv.columns.iter().enumerate() {
            if c.data_type.is_some() || c.options.is_some() {
                return Err(Error::syntax("a view's column list names columns only"));
            }
            names[k] = ident_name(&c.name);
        }
        for (k, n) in names.iter().enumerate() {
            if names[..k].contains(n) {
                return Err(Error::new(
                    SqlState::DUPLICATE_COLUMN,
                    format!("column \"{n}\" specified more than once"),
                ));
            }
        }
        let columns: Vec<(String, DataType)> = names
            .into_iter()
            .zip(types)
            .map(|(n, t)| {
                (
                    n,
                    if t == DataType::Unknown {
                        DataType::Text
                    } else {
                        t
                    },
                )
            })
            .collect();
        if let Some((n, t)) = columns.iter().find(|(_, t)| *t == DataType::Void) {
            return Err(Error::new(
                SqlState::INVALID_TABLE_DEFINITION,
                format!("column \"{n}\" has pseudo-type {}", t.name()),
            ));
        }
        if let Some(old) = &existing {
            replaceable(old, &columns, &depends_on)?;
        }
        Ok(Plan::CreateView {
            view: crate::storage::View {
                id: existing
                    .as_ref()
                    .map_or(crate::storage::TableId(0), |v| v.id),
                name,
                query: cv.query.to_string(),
                columns,
                depends_on,
            },
            replace: existing.is_some(),
        })
    }

    /// A view named in FROM: its query planned as a subquery in FROM would be, its
    /// columns those it was created with.
    fn view_table(
        &mut self,
        view: &crate::storage::View,
        alias: Option<&ast::TableAlias>,
    ) -> Result<FromTable> {
        const MAX_VIEW_DEPTH: usize = 32;
        if self.binder.depth > MAX_VIEW_DEPTH * 8 {
            return Err(Error::new(
                SqlState::STATEMENT_TOO_COMPLEX,
                "views nest too deeply",
            ));
        }
        let parsed = sqlparser::parser::Parser::new(&PostgreSqlDialect {})
            .try_with_sql(&view.query)
            .and_then(|mut p| p.parse_query())
            .map_err(|e| Error::internal(format!("bad stored view {}: {e}", view.name)))?;
        if !self.binder.relations_read.contains(&view.name) {
            self.binder.relations_read.push(view.name.clone());
        }
        self.require(
            super::pg_catalog::id_oid(view.id),
            acl::SELECT,
            "view",
            &view.name,
        );
        self.binder.depth += 8;
        self.binder.view_depth += 1;
        let planned = self.plan_derived(&parsed);
        self.binder.view_depth -= 1;
        self.binder.depth -= 8;
        let (plan, names, types) = planned?;
        // Columns added to a table since: the view keeps those it was created with.
        let width = view.columns.len();
        if types.len() < width
            || types[..width] != view.columns.iter().map(|c| c.1).collect::<Vec<_>>()[..]
        {
            return Err(Error::new(
                SqlState::DATA_CORRUPTED,
                format!(
                    "view \"{}\" no longer matches the tables it reads",
                    view.name
                ),
            ));
        }
        let mut plan = plan;
        if types.len() > width {
            plan.projection.truncate(width);
        }
        let names: Vec<String> = names.into_iter().take(width).collect();
        let types: Vec<DataType> = types.into_iter().take(width).collect();
        let mut columns: Vec<String> = view.columns.iter().map(|c| c.0.clone()).collect();
        let qualifier = match alias {
            Some(a) => {
                for (k, c) in a.columns.iter().enumerate() {
                    if let Some(n) = columns.get_mut(k) {
                        *n = ident_name(&c.name);
                    }
                }
                ident_name(&a.name)
            }
            None => view.name.clone(),
        };
        self.derived_from(Arc::new(plan), names, types, qualifier, columns)
    }

    fn plan_add_column(
        &mut self,
        table: Arc<Table>,
        def: &TableDef,
        cd: &ast::ColumnDef,
        if_not_exists: bool,
    ) -> Result<Plan> {
        let name = ident_name(&cd.name);
        if def.column_index(&name).is_some() {
            if if_not_exists {
                return Ok(Plan::Maintenance {
                    tag: "ALTER TABLE",
                    tables: Vec::new(),
                    analyze: false,
                    notice: Some(format!(
                        "column \"{name}\" of relation \"{}\" already exists, skipping",
                        def.name
                    )),
                });
            }
            return Err(Error::new(
                SqlState::DUPLICATE_COLUMN,
                format!(
                    "column \"{name}\" of relation \"{}\" already exists",
                    def.name
                ),
            ));
        }
        if def.columns.len() >= 1600 {
            return Err(Error::new(
                SqlState::TOO_MANY_COLUMNS,
                "tables can have at most 1600 columns",
            ));
        }
        let (ty, serial) = data_type(&cd.data_type)?;
        if serial {
            return Err(Error::unsupported(
                "ADD COLUMN of a serial column is not supported yet",
            ));
        }
        let mut column = Column {
            name,
            data_type: ty,
            not_null: false,
            default: None,
            missing: None,
            dropped: false,
            identity: false,
            description: None,
        };
        let mut existing_rows = None;
        let mut references = None;
        let mut unique = None;
        for opt in &cd.options {
            match &opt.option {
                ast::ColumnOption::Unique(uc) if unique.is_none() => {
                    check_unique_options(uc)?;
                    let named = uc.name.as_ref().or(opt.name.as_ref()).map(ident_name);
                    let index = def.columns.len();
                    let name = match named {
                        Some(n) => n,
                        None => {
                            self.free_relation_name(&format!("{}_{}", def.name, column.name), "key")
                        }
                    };
                    unique = Some(crate::storage::IndexDef {
                        name,
                        columns: vec![index],
                        unique: true,
                        constraint: true,
                        number: 0,
                        opclasses: Vec::new(),
                    });
                }
                ast::ColumnOption::ForeignKey(fk) if references.is_none() => {
                    let mut fk = fk.clone();
                    fk.name = fk.name.or_else(|| opt.name.clone());
                    fk.columns = vec![cd.name.clone()];
                    references = Some(fk);
                }
                ast::ColumnOption::Null => column.not_null = false,
                ast::ColumnOption::NotNull => column.not_null = true,
                ast::ColumnOption::Default(e) => {
                    self.binder.no_subqueries = Some("DEFAULT expression");
                    let t = self.binder.bind(e, &Scope::default());
                    self.binder.no_subqueries = None;
                    let bound = self.binder.coerce(t?, ty)?;
                    if !bound.reads_only(&|_| false) {
                        return Err(Error::unsupported(
                            "ADD COLUMN with a volatile DEFAULT (the rows there would each need their own value) is not supported yet",
                        ));
                    }
                    column.default = Some(canonical_default(e));
                    existing_rows = Some(bound);
                }
                other => {
                    return Err(Error::unsupported(format!(
                        "ADD COLUMN with {other} is not supported yet"
                    )))
                }
            }
        }
        let foreign_key = match &references {
            Some(fk) => {
                let mut with_column = def.clone();
                with_column.columns.push(column.clone());
                Some(self.foreign_key(&with_column, fk, false)?)
            }
            None => None,
        };
        if unique.is_some() && existing_rows.is_some() {
            // The rows there would all hold the one value (and the column be added
            // before its index found them duplicated).
            return Err(Error::unsupported(
                "ADD COLUMN with UNIQUE and a DEFAULT is not supported yet",
            ));
        }
        Ok(Plan::AddColumn {
            table,
            column,
            existing_rows,
            if_not_exists,
            foreign_key,
            unique,
        })
    }

    /// ALTER COLUMN ... TYPE: a change whose rows need no rewrite (a string's length, a
    /// wider integer, a numeric's precision at the same scale) changes the definition
    /// alone; the others rewrite the rows ([`Self::plan_rewrite_column_type`]).
    fn plan_set_column_type(
        &mut self,
        table: Arc<Table>,
        def: &TableDef,
        column: usize,
        data_type: &ast::DataType,
        using: Option<&ast::Expr>,
    ) -> Result<Plan> {
        let (to, serial) = super::bind::data_type(data_type)?;
        if serial {
            return Err(Error::new(
                SqlState::UNDEFINED_OBJECT,
                format!("type \"{data_type}\" does not exist"),
            ));
        }
        let c = &def.columns[column];
        if let Some(u) = using {
            // `USING c` or `USING c::type` (Django's): the column's values, as they are.
            let is_column =
                |e: &ast::Expr| matches!(e, ast::Expr::Identifier(i) if ident_name(i) == c.name);
            let plain = match u {
                ast::Expr::Cast {
                    expr,
                    data_type: cast_to,
                    ..
                } => is_column(expr) && super::bind::data_type(cast_to).is_ok_and(|(t, _)| t == to),
                other => is_column(other),
            };
            if !plain {
                return self.plan_rewrite_column_type(table, def, column, to, using);
            }
        }
        let from = c.data_type;
        let strings =
            |t: DataType| matches!(t, DataType::Text | DataType::Varchar(_) | DataType::Char(_));
        let width = |t: DataType| match t {
            DataType::Int2 => 1,
            DataType::Int4 => 2,
            DataType::Int8 => 3,
            _ => 0,
        };
        let max_chars = match (from, to) {
            (a, b) if a == b => None,
            (a, DataType::Text) if strings(a) => None,
            (a, DataType::Varchar(None)) if strings(a) => None,
            (DataType::Varchar(Some(n)), DataType::Varchar(Some(m)) | DataType::Char(m))
                if n <= m =>
            {
                None
            }
            (DataType::Char(n), DataType::Char(m) | DataType::Varchar(Some(m))) if n <= m => None,
            (a, DataType::Varchar(Some(m)) | DataType::Char(m)) if strings(a) => Some(m),
            (a, b) if width(a) > 0 && width(b) >= width(a) => None,
            (DataType::Numeric(Some((p, s))), DataType::Numeric(Some((p2, s2))))
                if s == s2 && p2 >= p =>
            {
                None
            }
            (DataType::Numeric(_), DataType::Numeric(None)) => None,
            _ => return self.plan_rewrite_column_type(table, def, column, to, using),
        };
        self.refuse_column_type_dependents(&table, def, column)?;
        Ok(Plan::SetColumnType {
            table,
            column,
            data_type: to,
            max_chars,
        })
    }

    /// ALTER COLUMN ... TYPE whose rows are rewritten: the new value is the column's
    /// (or `USING`'s) cast to the type, where PostgreSQL has an implicit or assignment
    /// cast for it (42804 with its hint where not). A column in a unique index other than
    /// the primary key, or with a default or a CHECK constraint naming it, answers 0A000.
    fn plan_rewrite_column_type(
        &mut self,
        table: Arc<Table>,
        def: &TableDef,
        column: usize,
        to: DataType,
        using: Option<&ast::Expr>,
    ) -> Result<Plan> {
        let c = &def.columns[column];
        let unsupported = |why: &str| {
            Err(Error::unsupported(format!(
                "ALTER COLUMN ... TYPE that rewrites the rows of a column {why} is not supported yet"
            )))
        };
        if def
            .indexes
            .iter()
            .any(|i| i.unique && i.columns.contains(&column))
        {
            return unsupported("in a unique index other than the primary key");
        }
        if c.default.is_some() {
            return unsupported("with a default");
        }
        if def.checks.iter().any(|k| k.expr.contains(c.name.as_str())) {
            return unsupported("that a CHECK constraint names");
        }
        self.refuse_column_type_dependents(&table, def, column)?;
        let type_name = super::pg_catalog::format_type(to.oid(), to.typmod().into());
        let scope = table_scope(&table, def, None);
        let source = match using {
            Some(u) => u.clone(),
            None => ast::Expr::Identifier(ast::Ident::with_quote('"', c.name.clone())),
        };
        self.binder.no_subqueries = Some("transform expression");
        let no_aggregates = self.binder.no_aggregates.replace("transform expressions");
        let bound = self.binder.bind(&source, &scope);
        self.binder.no_subqueries = None;
        self.binder.no_aggregates = no_aggregates;
        let (expr, from) = bound?;
        // PostgreSQL's implicit and assignment casts (a string to another type is
        // explicit only).
        let automatic = from == DataType::Unknown
            || (super::bind::assignable(from, to) && (!from.is_string() || to.is_string()));
        if !automatic {
            return Err(match using {
                None => Error::new(
                    SqlState::DATATYPE_MISMATCH,
                    format!("column \"{}\" cannot be cast automatically to type {type_name}", c.name),
                )
                .with_hint(format!(
                    "You might need to specify \"USING {}::{type_name}\".",
                    c.name
                )),
                Some(_) => Error::new(
                    SqlState::DATATYPE_MISMATCH,
                    format!(
                        "result of USING clause for column \"{}\" cannot be cast automatically to type {type_name}",
                        c.name
                    ),
                )
                .with_hint("You might need to add an explicit cast."),
            });
        }
        Ok(Plan::RewriteColumnType {
            table,
            column,
            data_type: to,
            // A string type's length applies as in an assignment (22001 where a value
            // is too long), when the row is rewritten.
            convert: match to.is_string() {
                true => expr,
                false => Expr::Cast(Box::new(expr), to),
            },
        })
    }

    /// The objects that keep a column's type: a view reading the table, a foreign key.
    fn refuse_column_type_dependents(
        &self,
        table: &Arc<Table>,
        def: &TableDef,
        column: usize,
    ) -> Result<()> {
        let c = &def.columns[column];
        let catalog = &self.engine.txn.catalog;
        // (A view reading the table at all is taken to read the column.)
        if let Some(v) = catalog
            .views()
            .iter()
            .find(|v| v.depends_on.contains(&def.name) && !(self.hidden)(v.id))
        {
            return Err(
                Error::unsupported("cannot alter type of a column used by a view or rule")
                    .with_detail(format!(
                        "rule _RETURN on view {} depends on column \"{}\"",
                        v.name, c.name
                    )),
            );
        }
        let in_foreign_key = def.foreign_keys.iter().any(|f| f.columns.contains(&column))
            || catalog
                .referencing(table.id)
                .iter()
                .any(|(_, fk)| fk.referenced_columns.contains(&column));
        if in_foreign_key {
            return Err(Error::unsupported(
                "ALTER COLUMN ... TYPE of a column in a foreign key is not supported yet",
            ));
        }
        Ok(())
    }

    fn plan_create_sequence(
        &mut self,
        name: &ast::ObjectName,
        if_not_exists: bool,
        data_type: Option<&ast::DataType>,
        options: &[ast::SequenceOptions],
        owned_by: Option<&ast::ObjectName>,
    ) -> Result<Plan> {
        let name = object_name(name)?;
        let ty = match data_type {
            None => DataType::Int8,
            Some(dt) => sequence_type(dt)?,
        };
        let changes = sequence_changes(Some(ty), options)?;
        let o = changes.applied_to(crate::storage::SequenceOptions::defaults(ty), true)?;
        let owned_by = match owned_by {
            None => None,
            Some(target) => {
                let parts: Vec<String> = target
                    .0
                    .iter()
                    .map(|p| match p {
                        ast::ObjectNamePart::Identifier(i) => ident_name(i),
                        other => other.to_string(),
                    })
                    .collect();
                self.sequence_owner(&parts.join("."))?
            }
        };
        Ok(Plan::CreateSequence {
            name,
            options: o,
            if_not_exists,
            owned_by,
        })
    }

    /// OWNED BY's `table.column` (`none`: None).
    fn sequence_owner(&mut self, target: &str) -> Result<Option<(Arc<Table>, usize)>> {
        if target.eq_ignore_ascii_case("none") {
            return Ok(None);
        }
        let target = target.strip_prefix("public.").unwrap_or(target);
        let Some((table, column)) = target.split_once('.') else {
            return Err(
                Error::new(SqlState::INVALID_PARAMETER_VALUE, "invalid OWNED BY option")
                    .with_hint("Specify OWNED BY table.column or OWNED BY NONE."),
            );
        };
        let table = self.table_named(table)?;
        let def = table.def();
        let c = def.column_index(column).ok_or_else(|| {
            Error::new(
                SqlState::UNDEFINED_COLUMN,
                format!(
                    "column \"{column}\" of relation \"{}\" does not exist",
                    def.name
                ),
            )
        })?;
        Ok(Some((table, c)))
    }

    fn plan_alter_sequence(
        &mut self,
        name: &str,
        action: &super::parser::SequenceAction,
    ) -> Result<Plan> {
        if self.visible_sequence(name).is_none() {
            return Err(Error::new(
                SqlState::UNDEFINED_TABLE,
                format!("relation \"{name}\" does not exist"),
            ));
        }
        Ok(match action {
            super::parser::SequenceAction::OwnedBy(None) => Plan::SequenceOwner {
                name: name.to_string(),
                owned_by: None,
            },
            super::parser::SequenceAction::OwnedBy(Some((table, column))) => Plan::SequenceOwner {
                name: name.to_string(),
                owned_by: self.sequence_owner(&format!("{table}.{column}"))?,
            },
            super::parser::SequenceAction::Restart(at) => Plan::RestartSequence {
                name: name.to_string(),
                at: *at,
            },
            super::parser::SequenceAction::Options {
                data_type,
                options,
                restart,
            } => {
                let ty = match data_type {
                    None => None,
                    Some(dt) => Some(sequence_type(dt)?),
                };
                Plan::AlterSequence {
                    name: name.to_string(),
                    changes: sequence_changes(ty, options)?,
                    restart: *restart,
                }
            }
        })
    }

    /// COMMENT ON TABLE t or COLUMN t.c IS ...: kept in the table's definition.
    fn plan_comment(
        &mut self,
        object_type: &ast::CommentObject,
        target: &ast::ObjectName,
        comment: Option<String>,
    ) -> Result<Plan> {
        // An empty comment removes it, as IS NULL does.
        let comment = comment.filter(|c| !c.is_empty());
        match object_type {
            ast::CommentObject::Table => {
                let name = object_name(target)?;
                if self.visible_view(&name).is_some() || self.visible_sequence(&name).is_some() {
                    return Err(Error::new(
                        SqlState::WRONG_OBJECT_TYPE,
                        format!("\"{name}\" is not a table"),
                    ));
                }
                Ok(Plan::Comment {
                    table: self.table_named(&name)?,
                    column: None,
                    comment,
                })
            }
            ast::CommentObject::Column => {
                let parts = &target.0;
                let Some((column, relation)) = parts.split_last().filter(|(_, r)| !r.is_empty())
                else {
                    return Err(Error::syntax("column name must be qualified"));
                };
                let relation = object_name(&ast::ObjectName(relation.to_vec()))?;
                if self.visible_view(&relation).is_some() {
                    return Err(Error::unsupported(
                        "comments on the columns of views are not supported yet",
                    ));
                }
                let table = self.table_named(&relation)?;
                let cname = ast::ObjectName(vec![column.clone()]);
                let cname = object_name(&cname)?;
                let def = table.def();
                let column = def.column_index(&cname).ok_or_else(|| {
                    Error::new(
                        SqlState::UNDEFINED_COLUMN,
                        format!("column \"{cname}\" of relation \"{relation}\" does not exist"),
                    )
                })?;
                Ok(Plan::Comment {
                    table,
                    column: Some(column),
                    comment,
                })
            }
            other => Err(Error::unsupported(format!(
                "COMMENT ON {} is not supported yet",
                other.to_string().to_uppercase()
            ))),
        }
    }

    fn plan_alter(&mut self, at: &ast::AlterTable) -> Result<Plan> {
        if let [ast::AlterTableOperation::OwnerTo { new_owner }] = at.operations.as_slice() {
            // Every object is owned by the one role there is.
            let role = match new_owner {
                ast::Owner::Ident(i) => ident_name(i),
                _ => "postgres".to_string(),
            };
            if role != "postgres" {
                return Err(Error::new(
                    SqlState::UNDEFINED_OBJECT,
                    format!("role \"{role}\" does not exist"),
                ));
            }
            let name = object_name(&at.name)?;
            // (ALTER TABLE names a sequence or a view too, as PostgreSQL allows.)
            if self.visible_sequence(&name).is_none() && self.visible_view(&name).is_none() {
                self.table(&at.name)?;
            }
            return Ok(Plan::Maintenance {
                tag: "ALTER TABLE",
                tables: Vec::new(),
                analyze: false,
                notice: None,
            });
        }
        let table = match self.table(&at.name) {
            Ok(t) => t,
            Err(_) if at.if_exists => {
                return Ok(Plan::Maintenance {
                    tag: "ALTER TABLE",
                    tables: Vec::new(),
                    analyze: false,
                    notice: Some(format!(
                        "relation \"{}\" does not exist, skipping",
                        object_name(&at.name)?
                    )),
                })
            }
            Err(e) => return Err(e),
        };
        let def = table.def();
        match at.operations.as_slice() {
            [ast::AlterTableOperation::AddConstraint {
                constraint: ast::TableConstraint::PrimaryKey(pk),
                ..
            }] => {
                // An existing key is refused when the statement runs (add_primary_key).
                let mut columns = Vec::new();
                for ic in &pk.columns {
                    let cname = key_column_name(ic)?;
                    columns.push(def.column_index(&cname).ok_or_else(|| {
                        Error::new(
                            SqlState::UNDEFINED_COLUMN,
                            format!(
                                "column \"{cname}\" of relation \"{}\" does not exist",
                                def.name
                            ),
                        )
                    })?);
                }
                Ok(Plan::AddPrimaryKey {
                    table,
                    name: pk.name.as_ref().map(ident_name),
                    columns,
                })
            }
            [ast::AlterTableOperation::AddConstraint {
                constraint: ast::TableConstraint::Unique(uc),
                ..
            }] => {
                check_unique_options(uc)?;
                let mut columns = Vec::new();
                for ic in &uc.columns {
                    let cname = key_column_name(ic)?;
                    columns.push(def.column_index(&cname).ok_or_else(|| {
                        Error::new(
                            SqlState::UNDEFINED_COLUMN,
                            format!("column \"{cname}\" named in key does not exist"),
                        )
                    })?);
                }
                let name = match &uc.name {
                    Some(n) => ident_name(n),
                    None => self.free_relation_name(
                        &column_name_base(&def.name, &def.columns, &columns),
                        "key",
                    ),
                };
                Ok(Plan::CreateIndex {
                    table,
                    def: crate::storage::IndexDef {
                        name,
                        columns,
                        unique: true,
                        constraint: true,
                        number: 0,
                        opclasses: Vec::new(),
                    },
                    if_not_exists: false,
                })
            }
            [ast::AlterTableOperation::AddConstraint {
                constraint: ast::TableConstraint::Check(c),
                not_valid,
            }] => {
                if def.checks.len() >= super::pg_catalog::MAX_CHECKS as usize {
                    return Err(Error::new(
                        SqlState::PROGRAM_LIMIT_EXCEEDED,
                        format!(
                            "a table can have at most {} check constraints",
                            super::pg_catalog::MAX_CHECKS
                        ),
                    ));
                }
                if c.enforced == Some(false) {
                    return Err(Error::unsupported(
                        "NOT ENFORCED constraints are not supported yet",
                    ));
                }
                let named = c.name.as_ref().map(ident_name);
                if let Some(n) = named.as_deref().filter(|n| def.has_constraint(n)) {
                    return Err(Error::new(
                        SqlState::DUPLICATE_OBJECT,
                        format!(
                            "constraint \"{n}\" for relation \"{}\" already exists",
                            def.name
                        ),
                    ));
                }
                let scope = table_scope(&table, &def, None);
                let (mut check, expr) = self.new_check(&def, &scope, named, &c.expr)?;
                check.validated = !*not_valid;
                Ok(Plan::AddCheck { table, check, expr })
            }
            [ast::AlterTableOperation::ValidateConstraint { name }] => {
                let cname = ident_name(name);
                if def.foreign_keys.iter().any(|f| f.name == cname) {
                    return Ok(Plan::ValidateConstraint {
                        table,
                        name: cname,
                        check: None,
                    });
                }
                if let Some(c) = def.checks.iter().find(|c| c.name == cname) {
                    let ast = sqlparser::parser::Parser::new(&PostgreSqlDialect {})
                        .try_with_sql(&c.expr)
                        .and_then(|mut p| p.parse_expr())
                        .map_err(|e| {
                            Error::internal(format!("bad stored check {}: {e}", c.expr))
                        })?;
                    let scope = table_scope(&table, &def, None);
                    let check = Some(self.bind_check(&ast, &scope)?);
                    return Ok(Plan::ValidateConstraint {
                        table,
                        name: cname,
                        check,
                    });
                }
                let is_key = def.indexes.iter().any(|i| i.constraint && i.name == cname)
                    || (def.pkey_name.as_deref() == Some(cname.as_str())
                        && !def.primary_key.is_empty());
                Err(match is_key {
                    true => Error::new(
                        SqlState::WRONG_OBJECT_TYPE,
                        format!(
                            "constraint \"{cname}\" of relation \"{}\" is not a foreign key or check constraint",
                            def.name
                        ),
                    ),
                    false => Error::new(
                        SqlState::UNDEFINED_OBJECT,
                        format!(
                            "constraint \"{cname}\" of relation \"{}\" does not exist",
                            def.name
                        ),
                    ),
                })
            }
            [ast::AlterTableOperation::AddConstraint {
                constraint: ast::TableConstraint::ForeignKey(fk),
                not_valid,
            }] => {
                let mut fk = self.foreign_key(&def, fk, false)?;
                fk.validated = !*not_valid;
                let parent = if fk.referenced == table.id {
                    table.clone()
                } else {
                    self.engine
                        .txn
                        .catalog
                        .table_by_id(fk.referenced)
                        .ok_or_else(|| Error::internal("a referenced table went away"))?
                };
                Ok(Plan::AddForeignKey { table, parent, fk })
            }
            [ast::AlterTableOperation::AddColumn {
                if_not_exists,
                column_def,
                column_position: None,
                ..
            }] => self.plan_add_column(table, &def, column_def, *if_not_exists),
            [ast::AlterTableOperation::DropColumn {
                column_names,
                if_exists,
                ..
            }] => {
                let [name] = column_names.as_slice() else {
                    return Err(Error::unsupported(
                        "dropping several columns in one statement is not supported yet",
                    ));
                };
                let cname = ident_name(name);
                let Some(column) = def.column_index(&cname) else {
                    if *if_exists {
                        return Ok(Plan::Maintenance {
                            tag: "ALTER TABLE",
                            tables: Vec::new(),
                            analyze: false,
                            notice: Some(format!(
                                "column \"{cname}\" of relation \"{}\" does not exist, skipping",
                                def.name
                            )),
                        });
                    }
                    return Err(Error::new(
                        SqlState::UNDEFINED_COLUMN,
                        format!(
                            "column \"{cname}\" of relation \"{}\" does not exist",
                            def.name
                        ),
                    ));
                };
                self.plan_drop_column(table, &def, column)
            }
            [ast::AlterTableOperation::RenameColumn { .. }
            | ast::AlterTableOperation::RenameTable { .. }]
                if !self
                    .engine
                    .txn
                    .catalog
                    .dependent_views(&def.name, self.hidden)
                    .is_empty() =>
            {
                Err(Error::unsupported(
                    "renaming a table or column that a view reads is not supported yet",
                ))
            }
            [ast::AlterTableOperation::RenameColumn {
                old_column_name,
                new_column_name,
            }] => {
                let (old, new) = (ident_name(old_column_name), ident_name(new_column_name));
                let c = def.column_index(&old).ok_or_else(|| {
                    Error::new(
                        SqlState::UNDEFINED_COLUMN,
                        format!("column \"{old}\" does not exist"),
                    )
                })?;
                if def.column_index(&new).is_some() {
                    return Err(Error::new(
                        SqlState::DUPLICATE_COLUMN,
                        format!(
                            "column \"{new}\" of relation \"{}\" already exists",
                            def.name
                        ),
                    ));
                }
                // Stored CHECK expressions and defaults name columns by name.
                let mentions = |text: &str| {
                    sqlparser::parser::Parser::new(&PostgreSqlDialect {})
                        .try_with_sql(text)
                        .and_then(|mut p| p.parse_expr())
                        .map(|e| {
                            let mut read = Vec::new();
                            referenced_columns(&e, &def, &mut read);
                            read.contains(&old)
                        })
                        .unwrap_or(true)
                };
                if def.checks.iter().any(|k| mentions(&k.expr))
                    || def
                        .columns
                        .iter()
                        .filter_map(|k| k.default.as_deref())
                        .any(mentions)
                {
                    return Err(Error::unsupported(
                        "renaming a column that a CHECK constraint or a default reads is not supported yet",
                    ));
                }
                let mut new_def = (*def).clone();
                new_def.columns[c].name = new;
                Ok(Plan::Rename {
                    table,
                    def: new_def,
                })
            }
            [ast::AlterTableOperation::RenameTable { table_name }] => {
                let (ast::RenameTableNameKind::To(n) | ast::RenameTableNameKind::As(n)) =
                    table_name;
                let new = object_name(n)?;
                if self.engine.txn.catalog.relation_exists(&new) {
                    return Err(Error::new(
                        SqlState::DUPLICATE_TABLE,
                        format!("relation \"{new}\" already exists"),
                    ));
                }
                let mut new_def = (*def).clone();
                new_def.name = new;
                Ok(Plan::Rename {
                    table,
                    def: new_def,
                })
            }
            [ast::AlterTableOperation::AlterColumn { column_name, op }] => {
                let cname = ident_name(column_name);
                let column = def.column_index(&cname).ok_or_else(|| {
                    Error::new(
                        SqlState::UNDEFINED_COLUMN,
                        format!(
                            "column \"{cname}\" of relation \"{}\" does not exist",
                            def.name
                        ),
                    )
                })?;
                match op {
                    ast::AlterColumnOperation::SetNotNull => {
                        return Ok(Plan::SetNotNull {
                            table,
                            column,
                            not_null: true,
                        })
                    }
                    ast::AlterColumnOperation::SetDataType {
                        data_type, using, ..
                    } => {
                        return self.plan_set_column_type(
                            table,
                            &def,
                            column,
                            data_type,
                            using.as_ref(),
                        );
                    }
                    ast::AlterColumnOperation::DropNotNull => {
                        if def.primary_key.contains(&column) {
                            return Err(Error::new(
                                SqlState::INVALID_TABLE_DEFINITION,
                                format!("column \"{cname}\" is in a primary key"),
                            ));
                        }
                        return Ok(Plan::SetNotNull {
                            table,
                            column,
                            not_null: false,
                        });
                    }
                    _ => {}
                }
                let default =
                    match op {
                        ast::AlterColumnOperation::DropDefault => None,
                        ast::AlterColumnOperation::SetDefault { value } => {
                            self.binder.no_subqueries = Some("DEFAULT expression");
                            let t = self.binder.bind(value, &Scope::default());
                            self.binder.no_subqueries = None;
                            self.binder.coerce(t?, def.columns[column].data_type)?;
                            Some(canonical_default(value))
                        }
                        _ => return Err(Error::unsupported(
                            "ALTER COLUMN supports only SET/DROP DEFAULT and SET/DROP NOT NULL yet",
                        )),
                    };
                Ok(Plan::SetColumnDefault {
                    table,
                    column,
                    default,
                })
            }
            [ast::AlterTableOperation::DropConstraint {
                if_exists, name, ..
            }] => {
                let cname = ident_name(name);
                if def.foreign_keys.iter().any(|f| f.name == cname) {
                    return Ok(Plan::DropForeignKey { table, name: cname });
                }
                if def.checks.iter().any(|c| c.name == cname) {
                    return Ok(Plan::DropCheck { table, name: cname });
                }
                match def.indexes.iter().find(|i| i.name == cname && i.constraint) {
                    Some(_) => Ok(Plan::DropIndex {
                        indexes: vec![(table, cname)],
                        constraint: true,
                        missing: Vec::new(),
                    }),
                    None if def.pkey_name.as_deref() == Some(cname.as_str())
                        && !def.primary_key.is_empty() =>
                    {
                        Ok(Plan::DropPrimaryKey { table, name: cname })
                    }
                    None if *if_exists => Ok(Plan::Maintenance {
                        tag: "ALTER TABLE",
                        tables: Vec::new(),
                        analyze: false,
                        notice: Some(format!(
                            "constraint \"{cname}\" of relation \"{}\" does not exist, skipping",
                            def.name
                        )),
                    }),
                    None => Err(Error::new(
                        SqlState::UNDEFINED_OBJECT,
                        format!(
                            "constraint \"{cname}\" of relation \"{}\" does not exist",
                            def.name
                        ),
                    )),
                }
            }
            _ => Err(Error::unsupported(
                "this form of ALTER TABLE is not supported yet",
            )),
        }
    }

    /// Plan a query; returns the plan and its output names, types and source columns.
    fn plan_query(&mut self, q: &ast::Query) -> Result<PlannedQuery> {
        if let Some(with) = &q.with {
            return self.plan_with_query(q, with);
        }
        if q.fetch.is_some() {
            return Err(Error::unsupported("FETCH is not supported yet"));
        }
        if matches!(q.body.as_ref(), ast::SetExpr::SetOperation { .. }) {
            return self.plan_set_query(q);
        }
        let row_lock = row_lock_of(&q.locks)?;
        let select = match q.body.as_ref() {
            ast::SetExpr::Select(s) => s,
            ast::SetExpr::Values(_) => return self.plan_values_query(q),
            _ => {
                return Err(Error::unsupported(
                    "set operations (UNION, INTERSECT, EXCEPT) are not supported yet",
                ))
            }
        };
        let (distinct, distinct_on_exprs) = match &select.distinct {
            None | Some(ast::Distinct::All) => (false, Vec::new()),
            Some(ast::Distinct::Distinct) => (true, Vec::new()),
            Some(ast::Distinct::On(exprs)) => (false, exprs.clone()),
        };
        if select.into.is_some() {
            return Err(Error::unsupported("SELECT INTO is not supported yet"));
        }
        // FROM
        let from = self.plan_from(&select.from)?;
        // (After FROM, whose subqueries are planned with this binder too.)
        self.binder.named_windows = select.named_window.clone();
        let scope = from.scope.clone();
        let system = from.tables.first().and_then(|t| t.system);
        let derived = from.tables.first().and_then(|t| t.derived.clone());
        let function = from.tables.first().and_then(|t| t.function.clone());
        let source_table = from
            .tables
            .first()
            .map(|t| (t.table.clone(), t.def.clone(), t.qualifier.clone()));
        // WHERE
        self.binder.no_aggregates = Some("WHERE");
        let filter = match &select.selection {
            Some(w) => Some(self.binder.bind_bool(w, &scope, "WHERE")?),
            None => None,
        };
        self.binder.no_aggregates = None;
        // GROUP BY / aggregates
        let group_asts: Vec<ast::Expr> = match &select.group_by {
            ast::GroupByExpr::Expressions(exprs, mods) if mods.is_empty() => exprs.clone(),
            ast::GroupByExpr::Expressions(..) => {
                return Err(Error::unsupported("GROUP BY modifiers are not supported"))
            }
            ast::GroupByExpr::All(_) => {
                return Err(Error::unsupported("GROUP BY ALL is not supported"))
            }
        };
        // Output list, expanded.
        let mut items: Vec<(ast::Expr, String)> = Vec::new();
        let mut wildcard_cols = Vec::new();
        for item in &select.projection {
            match item {
                ast::SelectItem::UnnamedExpr(e) => items.push((e.clone(), column_name(e))),
                ast::SelectItem::ExprWithAlias { expr, alias } => {
                    items.push((expr.clone(), ident_name(alias)))
                }
                ast::SelectItem::Wildcard(_) => {
                    if scope.columns.is_empty() {
                        return Err(Error::syntax(
                            "SELECT * with no tables specified is not valid",
                        ));
                    }
                    for &i in &from.star {
                        wildcard_cols.push(items.len());
                        items.push((from.column_ref(i), scope.columns[i].name.clone()));
                    }
                }
                ast::SelectItem::QualifiedWildcard(kind, _) => {
                    let ast::SelectItemQualifiedWildcardKind::ObjectName(name) = kind else {
                        return Err(Error::unsupported("this select item is not supported"));
                    };
                    let qualifier = match name.0.last() {
                        Some(ast::ObjectNamePart::Identifier(i)) => ident_name(i),
                        _ => return Err(Error::unsupported("this select item is not supported")),
                    };
                    let columns: Vec<usize> = (0..scope.columns.len())
                        .filter(|&i| {
                            scope.columns[i].qualifiers.contains(&qualifier)
                                && !is_dropped(&scope.columns[i])
                        })
                        .collect();
                    if columns.is_empty() {
                        return Err(Error::new(
                            SqlState::UNDEFINED_TABLE,
                            format!("missing FROM-clause entry for table \"{qualifier}\""),
                        ));
                    }
                    for i in columns {
                        wildcard_cols.push(items.len());
                        items.push((from.column_ref(i), scope.columns[i].name.clone()));
                    }
                }
                _ => return Err(Error::unsupported("this select item is not supported")),
            }
        }
        let grouped = !group_asts.is_empty()
            || items.iter().any(|(e, _)| contains_aggregate(e))
            || select.having.is_some()
            || q.order_by.as_ref().is_some_and(|o| match &o.kind {
                ast::OrderByKind::Expressions(v) => v.iter().any(|x| contains_aggregate(&x.expr)),
                _ => false,
            });
        let mut aggregation = None;
        if grouped {
            let mut keys = Vec::new();
            for g in &group_asts {
                // GROUP BY n refers to the n-th output column; GROUP BY name may name one.
                let target = match g {
                    ast::Expr::Value(v) => match &v.value {
                        ast::Value::Number(n, _) => {
                            let pos: usize = n
                                .parse()
                                .map_err(|_| Error::syntax("bad GROUP BY position"))?;
                            match items.get(pos.wrapping_sub(1)) {
                                Some((e, _)) => e.clone(),
                                None => {
                                    return Err(Error::new(
                                        SqlState::INVALID_COLUMN_REFERENCE,
                                        format!("GROUP BY position {pos} is not in select list"),
                                    ))
                                }
                            }
                        }
                        _ => g.clone(),
                    },
                    ast::Expr::Identifier(i)
                        if scope.columns.iter().all(|c| c.name != ident_name(i)) =>
                    {
                        match items.iter().find(|(_, n)| *n == ident_name(i)) {
                            Some((e, _)) => e.clone(),
                            None => g.clone(),
                        }
                    }
                    _ => g.clone(),
                };
                self.binder.no_aggregates = Some("GROUP BY");
                let t = self.binder.bind(&target, &scope)?;
                self.binder.no_aggregates = None;
                let ty = if t.1 == DataType::Unknown {
                    DataType::Text
                } else {
                    t.1
                };
                let e = self.binder.coerce(t, ty)?;
                keys.push((target.to_string(), e, ty));
                // Bare columns also match when written differently (e.g. qualified).
                if let ast::Expr::Identifier(i) = &target {
                    let n = ident_name(i);
                    let text = ast::Expr::Identifier(ast::Ident::new(n.clone())).to_string();
                    let ty2 = ty;
                    let e2 = keys
                        .last()
                        .map(|k| k.1.clone())
                        .unwrap_or(Expr::Const(crate::types::Value::Null));
                    if text != target.to_string() {
                        keys.push((text, e2, ty2));
                    }
                }
            }
            // As in PostgreSQL, a table whose whole primary key is grouped by determines
            // its other columns (a functional dependency): they may be selected too, so
            // they group as well, which makes no group different.
            let mut at = 0;
            for t in &from.tables {
                let width = t.def.columns.len();
                let is_key = |c: usize| {
                    keys.iter()
                        .any(|(_, e, _)| matches!(e, Expr::Column(k) if *k == at + c))
                };
                let stored = t.system.is_none() && t.derived.is_none() && t.function.is_none();
                if stored
                    && !t.def.primary_key.is_empty()
                    && t.def.primary_key.iter().all(|&c| is_key(c))
                {
                    let dependent: Vec<usize> =
                        t.def.live_columns().filter(|&c| !is_key(c)).collect();
                    for c in dependent {
                        keys.push((
                            format!("{}.{}", t.qualifier, t.def.columns[c].name),
                            Expr::Column(at + c),
                            t.def.columns[c].data_type,
                        ));
                    }
                }
                at += width;
            }
            self.binder.grouping = Some(Grouping {
                keys,
                aggs: Vec::new(),
            });
        }
        let mut projection = Vec::new();
        let mut names = Vec::new();
        let mut types = Vec::new();
        let mut sources = Vec::new();
        // Window calls are allowed in the select list and ORDER BY. Their values follow
        // the row they are computed over: FROM's row, or a grouped query's group, whose
        // width is known only once every aggregate is bound; until then they are numbered
        // from WINDOW_COLUMNS_PENDING and moved after it below.
        self.binder.windows = Some((
            Vec::new(),
            if grouped {
                WINDOW_COLUMNS_PENDING
            } else {
                scope.columns.len()
            },
        ));
        for (i, (e, name)) in items.iter().enumerate() {
            self.binder.allow_set_returning = true;
            let t = self.binder.bind(e, &scope);
            self.binder.allow_set_returning = false;
            let t = t?;
            let ty = if t.1 == DataType::Unknown {
                DataType::Text
            } else {
                t.1
            };
            let src = match &t.0 {
                Expr::Column(c) if !grouped => from.origin(*c),
                _ => None,
            };
            let _ = wildcard_cols.contains(&i);
            projection.push(self.binder.coerce(t, ty)?);
            names.push(name.clone());
            types.push(ty);
            sources.push(src);
        }
        let having = match &select.having {
            Some(h) => {
                let windows = self.binder.windows.take();
                self.binder.no_windows = Some("HAVING");
                let having = self.binder.bind_bool(h, &scope, "HAVING");
                self.binder.no_windows = None;
                self.binder.windows = windows;
                Some(having?)
            }
            None => None,
        };
        // ORDER BY: output position, output name, or an expression.
        let mut order_by = Vec::new();
        if let Some(ob) = &q.order_by {
            let exprs = match &ob.kind {
                ast::OrderByKind::Expressions(v) => v,
                ast::OrderByKind::All(_) => {
                    return Err(Error::unsupported("ORDER BY ALL is not supported"))
                }
            };
            for o in exprs {
                let expr = self.sort_expr(&o.expr, &projection, &names, &scope)?;
                let desc = match &o.options.sort {
                    Some(ast::OrderBySort::Desc) => true,
                    Some(ast::OrderBySort::Using(_)) => {
                        return Err(Error::unsupported("ORDER BY ... USING is not supported"))
                    }
                    _ => false,
                };
                order_by.push(OrderKey {
                    expr,
                    desc,
                    nulls_first: o.options.nulls_first.unwrap_or(desc),
                });
            }
        }
        // DISTINCT ON: its expressions lead ORDER BY (and make it when there is none).
        let distinct_on = distinct_on_exprs.len();
        for (k, e) in distinct_on_exprs.iter().enumerate() {
            let expr = self.sort_expr(e, &projection, &names, &scope)?;
            match order_by.get(k) {
                Some(key) if format!("{:?}", key.expr) == format!("{expr:?}") => {}
                Some(_) => {
                    return Err(Error::new(
                        SqlState::INVALID_COLUMN_REFERENCE,
                        "SELECT DISTINCT ON expressions must match initial ORDER BY expressions",
                    ))
                }
                None if q.order_by.is_none() => order_by.push(OrderKey {
                    expr,
                    desc: false,
                    nulls_first: false,
                }),
                None => {
                    return Err(Error::new(
                        SqlState::INVALID_COLUMN_REFERENCE,
                        "SELECT DISTINCT ON expressions must match initial ORDER BY expressions",
                    ))
                }
            }
        }
        if distinct_on > 0 && row_lock.is_some() {
            return Err(Error::unsupported(
                "FOR UPDATE is not allowed with DISTINCT clause",
            ));
        }
        let windows = self
            .binder
            .windows
            .take()
            .map(|(w, _)| w)
            .unwrap_or_default();
        if !windows.is_empty() && (distinct || distinct_on > 0 || row_lock.is_some()) {
            return Err(Error::unsupported(
                "window functions with DISTINCT or FOR UPDATE are not supported yet",
            ));
        }
        if let Some(g) = self.binder.grouping.take() {
            let width = g.keys.len() + g.aggs.len();
            let place = |c: usize| match c.checked_sub(WINDOW_COLUMNS_PENDING) {
                Some(w) => width + w,
                None => c,
            };
            if !windows.is_empty() {
                projection = projection.iter().map(|e| e.map_columns(&place)).collect();
                for key in &mut order_by {
                    key.expr = key.expr.map_columns(&place);
                }
            }
            let keys: Vec<Expr> = g.keys.into_iter().map(|(_, e, _)| e).collect();
            aggregation = Some(Aggregation {
                keys,
                aggs: g.aggs,
                having,
            });
        } else if having.is_some() {
            return Err(Error::internal("HAVING without grouping"));
        }
        let (limit, offset) = self.bind_limit_offset(q)?;
        if let Some(lock) = &row_lock {
            let what = match lock.want {
                Want::Write => "FOR UPDATE",
                Want::NoKeyWrite => "FOR NO KEY UPDATE",
                Want::Share | Want::Increment => "FOR SHARE",
                Want::KeyShare => "FOR KEY SHARE",
            };
            if aggregation.is_some() {
                return Err(Error::unsupported(format!(
                    "{what} is not allowed with aggregate functions or GROUP BY"
                )));
            }
            if system.is_some() {
                return Err(Error::unsupported(format!(
                    "{what} cannot be applied to a system view"
                )));
            }
            if derived.is_some() {
                return Err(Error::unsupported(format!(
                    "{what} cannot be applied to a subquery yet"
                )));
            }
            if from.tables.len() > 1 {
                return Err(Error::unsupported(format!(
                    "{what} is not supported with joins yet"
                )));
            }
            if distinct {
                return Err(Error::unsupported(format!(
                    "{what} is not allowed with DISTINCT clause"
                )));
            }
            // Locking rows needs UPDATE as well as SELECT, as in PostgreSQL.
            if let Some(t) = from.tables.first() {
                let table = t.table.clone();
                self.require_on_table(&table, acl::UPDATE);
            }
        }
        if distinct {
            // Sorting comes after DISTINCT, so it can only use what DISTINCT kept.
            let outputs: Vec<String> = projection.iter().map(|e| format!("{e:?}")).collect();
            if order_by
                .iter()
                .any(|k| !outputs.contains(&format!("{:?}", k.expr)))
            {
                return Err(Error::new(
                    SqlState::INVALID_COLUMN_REFERENCE,
                    "for SELECT DISTINCT, ORDER BY expressions must appear in select list",
                ));
            }
        }
        let (source, joins, filter, join_layout) = if from.tables.len() > 1 {
            // Rows locked FOR UPDATE are found in FROM's order.
            let (from, filter, layout) = match row_lock {
                None => join_order::reorder(from, filter),
                Some(_) => (from, filter, None),
            };
            let (first, joins, rest) = plan_joins(from, filter)?;
            (Some(first), joins, rest, layout)
        } else {
            let (source, filter) =
                Self::single_source(source_table, system, derived, function, filter);
            (source, Vec::new(), filter, None)
        };
        Ok((
            SelectPlan {
                source,
                joins,
                join_layout,
                filter,
                aggregation,
                projection,
                order_by,
                limit,
                offset,
                row_lock,
                distinct,
                distinct_on,
                set_op: None,
                subqueries: std::mem::take(&mut self.binder.subplans),
                windows,
                materialize: false,
            },
            names,
            types,
            sources,
        ))
    }

    /// A query whose body is UNION, INTERSECT or EXCEPT: its ORDER BY may name only result
    /// columns (by name or position), and its LIMIT and OFFSET apply to the result.
    fn plan_set_query(&mut self, q: &ast::Query) -> Result<PlannedQuery> {
        if !q.locks.is_empty() {
            return Err(Error::unsupported(
                "FOR UPDATE is not allowed with UNION/INTERSECT/EXCEPT",
            ));
        }
        let (set_op, names, types) = self.plan_set_expr(q, &q.body)?;
        let mut order_by = Vec::new();
        if let Some(ob) = &q.order_by {
            let ast::OrderByKind::Expressions(exprs) = &ob.kind else {
                return Err(Error::unsupported("ORDER BY ALL is not supported"));
            };
            for o in exprs {
                let position = match &o.expr {
                    ast::Expr::Value(_) => order_position(&o.expr, names.len())?,
                    ast::Expr::Identifier(i) => {
                        let n = ident_name(i);
                        match names.iter().position(|x| *x == n) {
                            Some(k) => Some(k),
                            None => {
                                return Err(Error::new(
                                    SqlState::UNDEFINED_COLUMN,
                                    format!("column \"{n}\" does not exist"),
                                ))
                            }
                        }
                    }
                    _ => None,
                };
                let Some(k) = position else {
                    return Err(Error::unsupported(
                        "invalid UNION/INTERSECT/EXCEPT ORDER BY clause",
                    )
                    .with_detail(
                        "Only result column names can be used, not expressions or functions.",
                    ));
                };
                let desc = matches!(o.options.sort, Some(ast::OrderBySort::Desc));
                order_by.push(OrderKey {
                    expr: Expr::Column(k),
                    desc,
                    nulls_first: o.options.nulls_first.unwrap_or(desc),
                });
            }
        }
        let (limit, offset) = self.bind_limit_offset(q)?;
        let sources = vec![None; names.len()];
        let plan = SelectPlan {
            source: None,
            joins: Vec::new(),
            join_layout: None,
            filter: None,
            aggregation: None,
            projection: (0..names.len()).map(Expr::Column).collect(),
            order_by,
            limit,
            offset,
            row_lock: None,
            distinct: false,
            distinct_on: 0,
            set_op: Some(Box::new(set_op)),
            subqueries: std::mem::take(&mut self.binder.subplans),
            windows: Vec::new(),
            materialize: false,
        };
        Ok((plan, names, types, sources))
    }

    /// One side of a set operation (a SELECT, a parenthesized query, or another set
    /// operation), planned as a query of its own.
    fn plan_set_side(
        &mut self,
        outer: &ast::Query,
        side: &ast::SetExpr,
    ) -> Result<(SelectPlan, Vec<String>, Vec<DataType>)> {
        match side {
            ast::SetExpr::Query(q) => {
                let (plan, names, types, _) = self.plan_query(q)?;
                Ok((plan, names, types))
            }
            ast::SetExpr::Select(_)
            | ast::SetExpr::SetOperation { .. }
            | ast::SetExpr::Values(_) => {
                let mut q = outer.clone();
                *q.body = side.clone();
                q.order_by = None;
                q.limit_clause = None;
                q.locks = Vec::new();
                let (plan, names, types, _) = self.plan_query(&q)?;
                Ok((plan, names, types))
            }
            _ => Err(Error::unsupported(
                "this query is not supported in a set operation",
            )),
        }
    }

    fn plan_set_expr(
        &mut self,
        q: &ast::Query,
        body: &ast::SetExpr,
    ) -> Result<(SetOpPlan, Vec<String>, Vec<DataType>)> {
        let ast::SetExpr::SetOperation {
            left,
            op,
            set_quantifier,
            right,
        } = body
        else {
            return Err(Error::internal("not a set operation"));
        };
        let (op, what) = match op {
            ast::SetOperator::Union => (SetOp::Union, "UNION"),
            ast::SetOperator::Intersect => (SetOp::Intersect, "INTERSECT"),
            ast::SetOperator::Except | ast::SetOperator::Minus => (SetOp::Except, "EXCEPT"),
        };
        let all = match set_quantifier {
            ast::SetQuantifier::All => true,
            ast::SetQuantifier::Distinct | ast::SetQuantifier::None => false,
            _ => {
                return Err(Error::unsupported(format!(
                    "{what} BY NAME is not supported"
                )))
            }
        };
        let params = self.binder.params.clone();
        let (left_unknown, right_unknown) = (
            unknown_columns(left, &params),
            unknown_columns(right, &params),
        );
        let (left, names, left_types) = self.plan_set_side(q, left)?;
        let (right, _, right_types) = self.plan_set_side(q, right)?;
        if left_types.len() != right_types.len() {
            return Err(Error::syntax(format!(
                "each {what} query must have the same number of columns"
            )));
        }
        let mut types = Vec::new();
        let mut left_casts = Vec::new();
        let mut right_casts = Vec::new();
        // A column that is only a NULL or string literal on one side takes the other
        // side's type, as PostgreSQL's unknown-typed literals do.
        for (i, (&l, &r)) in left_types.iter().zip(&right_types).enumerate() {
            let (l_unknown, r_unknown) = (
                left_unknown.get(i).copied().unwrap_or(false),
                right_unknown.get(i).copied().unwrap_or(false),
            );
            let resolved = match (l_unknown, r_unknown) {
                (true, false) => Some(r),
                (false, true) => Some(l),
                _ => set_result_type(l, r),
            };
            let t = resolved.ok_or_else(|| {
                Error::new(
                    SqlState::DATATYPE_MISMATCH,
                    format!(
                        "{what} types {} and {} cannot be matched",
                        type_name_only(l),
                        type_name_only(r)
                    ),
                )
            })?;
            left_casts.push((t != l).then_some(t));
            right_casts.push((t != r).then_some(t));
            types.push(t);
        }
        Ok((
            SetOpPlan {
                op,
                all,
                left,
                right,
                left_casts,
                right_casts,
            },
            names,
            types,
        ))
    }

    /// The scan of a single-table FROM, which carries the WHERE clause.
    fn single_source(
        source_table: Option<(Arc<Table>, Arc<TableDef>, String)>,
        system: Option<super::system::SystemView>,
        derived: Option<Arc<SelectPlan>>,
        function: Option<Arc<TableFunction>>,
        filter: Option<Expr>,
    ) -> (Option<ScanPlan>, Option<Expr>) {
        match source_table {
            Some((table, def, qualifier)) => {
                let access = access_path(&def, &table.indexes(), filter.as_ref());
                (
                    Some(ScanPlan {
                        table,
                        system,
                        derived,
                        function,
                        def,
                        access,
                        filter,
                        qualifier,
                    }),
                    None,
                )
            }
            None => (None, filter),
        }
    }

    /// A table of no pages that carries `def`: what a system view or a subquery in FROM
    /// is scanned as (its rows come from elsewhere).
    fn placeholder_table(&self, def: TableDef) -> Arc<Table> {
        Arc::new(Table::open(
            crate::storage::TableId(0),
            def,
            self.engine.txn.catalog.pool().clone(),
            crate::storage::page::PageId::NONE,
            1,
        ))
    }

    /// A table of FROM: its definition (a system view's placeholder table, which has no
    /// pages) and the name its columns are qualified with.
    fn bind_from_table(&mut self, factor: &ast::TableFactor) -> Result<FromTable> {
        match factor {
            ast::TableFactor::Table {
                name,
                alias,
                args: None,
                ..
            } if self.cte_named(name).is_some() => {
                let i = self.cte_named(name).unwrap_or_default();
                if let Some(work) = self.binder.ctes[i].work_table.clone() {
                    return self.work_table_from(
                        &self.binder.ctes[i].name.clone(),
                        work,
                        alias.as_ref(),
                    );
                }
                // The WITH query sees only the ones before it.
                let later = self.binder.ctes.split_off(i);
                let mut later = later;
                let cte = &later[0];
                let mut columns: Vec<String> = cte.columns.clone();
                let qualifier = match alias {
                    Some(a) => {
                        for (k, c) in a.columns.iter().enumerate() {
                            match columns.get_mut(k) {
                                Some(n) => *n = ident_name(&c.name),
                                None => columns.push(ident_name(&c.name)),
                            }
                        }
                        ident_name(&a.name)
                    }
                    None => cte.name.clone(),
                };
                let planned = match later[0].planned.clone() {
                    Some(p) => Ok(p),
                    None => {
                        let query = later[0].query.clone();
                        let captured = |b: &Binder| -> usize {
                            b.outers.iter().map(|o| o.captured.len()).sum()
                        };
                        let before = captured(&self.binder);
                        let planned = if later[0].recursive {
                            let (name, columns) = (later[0].name.clone(), later[0].columns.clone());
                            self.plan_recursive_cte(&name, &query, &columns)
                        } else {
                            self.plan_derived(&query)
                        };
                        if captured(&self.binder) != before {
                            Err(Error::unsupported(
                                "a WITH query that refers to a column of an enclosing query is not supported yet",
                            ))
                        } else {
                            planned.map(|(mut plan, names, types)| {
                                plan.materialize = true;
                                (Arc::new(plan), names, types)
                            })
                        }
                    }
                };
                if let Ok(p) = &planned {
                    later[0].planned = Some(p.clone());
                }
                self.binder.ctes.extend(later);
                let (plan, names, types) = planned?;
                self.derived_from(plan, names, types, qualifier, columns)
            }
            ast::TableFactor::Table {
                name,
                alias,
                args: None,
                ..
            } => {
                let view = match system_view(name) {
                    None => self.visible_view(&object_name(name)?),
                    Some(_) => None,
                };
                if let Some(view) = view {
                    return self.view_table(&view, alias.as_ref());
                }
                if alias.as_ref().is_some_and(|a| !a.columns.is_empty()) {
                    return Err(Error::unsupported(
                        "column aliases in FROM are not supported yet",
                    ));
                }
                let system = system_view(name);
                if system.is_none() {
                    let n = object_name(name)?;
                    if self.engine.txn.catalog.table(&n).is_none()
                        && self.visible_sequence(&n).is_some()
                    {
                        if let Some(oid) = super::pg_catalog::sequence_oid(self.engine, &n) {
                            self.require(oid, acl::SELECT, "sequence", &n);
                        }
                        return Ok(self.sequence_from(&n, alias.as_ref()));
                    }
                }
                let table = match system {
                    Some(view) => self.placeholder_table(view.def()),
                    None => {
                        let table = self.table(name)?;
                        self.require_on_table(&table, acl::SELECT);
                        table
                    }
                };
                let def = table.def();
                let qualifier = match alias {
                    Some(a) => ident_name(&a.name),
                    None => def.name.clone(),
                };
                Ok(FromTable {
                    table,
                    def,
                    system,
                    derived: None,
                    function: None,
                    qualifier,
                })
            }
            ast::TableFactor::Derived {
                lateral,
                subquery,
                alias,
                ..
            } => {
                if *lateral {
                    return Err(Error::unsupported("LATERAL is not supported yet"));
                }
                if let ast::SetExpr::Values(values) = subquery.body.as_ref() {
                    if is_bare_body(subquery) {
                        return self.values_table(values, alias.as_ref());
                    }
                }
                let Some(alias) = alias else {
                    return Err(Error::syntax("subquery in FROM must have an alias")
                        .with_hint("For example, FROM (SELECT ...) [AS] foo."));
                };
                let columns = alias.columns.iter().map(|c| ident_name(&c.name)).collect();
                self.derived_table(subquery, ident_name(&alias.name), columns)
            }
            ast::TableFactor::Table {
                name,
                alias,
                args: Some(args),
                with_ordinality,
                ..
            } => {
                let mut exprs = Vec::new();
                for a in &args.args {
                    match a {
                        ast::FunctionArg::Unnamed(ast::FunctionArgExpr::Expr(e)) => exprs.push(e),
                        _ => {
                            return Err(Error::unsupported(format!(
                                "argument form not supported in {name}()"
                            )))
                        }
                    }
                }
                let fname = name.to_string().to_lowercase();
                let fname = fname.trim_start_matches("pg_catalog.");
                let fname = match fname {
                    "information_schema._pg_expandarray" => "_pg_expandarray",
                    other => other,
                };
                self.bind_table_function(fname, &exprs, alias.as_ref(), *with_ordinality)
            }
            ast::TableFactor::UNNEST {
                alias,
                array_exprs,
                with_offset: false,
                with_ordinality,
                ..
            } => {
                let exprs: Vec<&ast::Expr> = array_exprs.iter().collect();
                self.bind_table_function("unnest", &exprs, alias.as_ref(), *with_ordinality)
            }
            ast::TableFactor::NestedJoin { .. } => Err(Error::unsupported(
                "parenthesized joins in FROM are not supported yet",
            )),
            _ => Err(Error::unsupported("this FROM item is not supported yet")),
        }
    }

    /// A sequence in FROM: its state as one row.
    fn sequence_from(&mut self, name: &str, alias: Option<&ast::TableAlias>) -> FromTable {
        let qualifier = alias.map_or(name.to_string(), |a| ident_name(&a.name));
        let def = TableDef::of_columns(
            &qualifier,
            [
                ("last_value", DataType::Int8),
                ("log_cnt", DataType::Int8),
                ("is_called", DataType::Bool),
            ]
            .into_iter(),
        );
        let table = self.placeholder_table(def);
        FromTable {
            def: table.def(),
            table,
            system: None,
            derived: None,
            function: Some(Arc::new(TableFunction {
                kind: TableFunctionKind::SequenceState,
                args: vec![Expr::Const(crate::types::Value::Text(name.to_string()))],
                ordinality: false,
            })),
            qualifier,
        }
    }

    /// A reference to a recursive WITH query from its own recursive term: a scan of its
    /// working table.
    fn work_table_from(
        &mut self,
        name: &str,
        work: super::bind::WorkTableRef,
        alias: Option<&ast::TableAlias>,
    ) -> Result<FromTable> {
        if self.binder.outers.len() != work.outers {
            return Err(Error::new(
                SqlState::INVALID_RECURSION,
                format!(
                    "recursive reference to query \"{name}\" must not appear within a subquery"
                ),
            ));
        }
        self.binder.work_table_refs += 1;
        let mut names = work.names.clone();
        let qualifier = match alias {
            Some(a) => {
                for (n, c) in names.iter_mut().zip(&a.columns) {
                    *n = ident_name(&c.name);
                }
                ident_name(&a.name)
            }
            None => name.to_string(),
        };
        let def = TableDef::of_columns(
            &qualifier,
            names
                .iter()
                .map(String::as_str)
                .zip(work.types.iter().copied()),
        );
        let table = self.placeholder_table(def);
        Ok(FromTable {
            def: table.def(),
            table,
            system: None,
            derived: None,
            function: Some(Arc::new(TableFunction {
                kind: TableFunctionKind::WorkTable(work.id),
                args: Vec::new(),
                ordinality: false,
            })),
            qualifier,
        })
    }

    /// A WITH RECURSIVE query `non-recursive term UNION [ALL] recursive term`: the
    /// recursive term is planned with the query's name reading its working table.
    /// One that does not refer to itself is planned as any other query.
    fn plan_recursive_cte(
        &mut self,
        name: &str,
        query: &ast::Query,
        columns: &[String],
    ) -> Result<(SelectPlan, Vec<String>, Vec<DataType>)> {
        let ast::SetExpr::SetOperation {
            left,
            op: ast::SetOperator::Union,
            set_quantifier,
            right,
        } = query.body.as_ref()
        else {
            return self.plan_derived(query);
        };
        let all = match set_quantifier {
            ast::SetQuantifier::All => true,
            ast::SetQuantifier::Distinct | ast::SetQuantifier::None => false,
            _ => return self.plan_derived(query),
        };
        let grouping = self.binder.grouping.take();
        let no_aggregates = self.binder.no_aggregates.take();
        let windows = self.binder.windows.take();
        let fields = std::mem::take(&mut self.fields);
        let planned = self.plan_recursive_terms(name, query, left, right, columns);
        self.binder.grouping = grouping;
        self.binder.no_aggregates = no_aggregates;
        self.binder.windows = windows;
        self.fields = fields;
        let Some((init, step, names, types, step_types)) = planned? else {
            return self.plan_derived(query);
        };
        if query.order_by.is_some() {
            return Err(Error::unsupported(
                "ORDER BY in a recursive query is not implemented",
            ));
        }
        if query.limit_clause.is_some() || query.fetch.is_some() {
            return Err(Error::unsupported(
                "LIMIT in a recursive query is not implemented",
            ));
        }
        if types.len() != step_types.len() {
            return Err(Error::syntax(
                "each UNION query must have the same number of columns",
            ));
        }
        let mut right_casts = Vec::new();
        for (i, (&l, &r)) in types.iter().zip(&step_types).enumerate() {
            let overall = set_result_type(l, r).ok_or_else(|| {
                Error::new(
                    SqlState::DATATYPE_MISMATCH,
                    format!(
                        "UNION types {} and {} cannot be matched",
                        type_name_only(l),
                        type_name_only(r)
                    ),
                )
            })?;
            if overall != l {
                return Err(Error::new(
                    SqlState::DATATYPE_MISMATCH,
                    format!(
                        "recursive query \"{name}\" column {} has type {} in non-recursive term but type {} overall",
                        i + 1,
                        type_name_only(l),
                        type_name_only(overall)
                    ),
                )
                .with_hint("Cast the output of the non-recursive term to the correct type."));
            }
            right_casts.push((r != l).then_some(l));
        }
        let width = types.len();
        let plan = SelectPlan {
            projection: (0..width).map(Expr::Column).collect(),
            set_op: Some(Box::new(SetOpPlan {
                op: SetOp::RecursiveUnion(step.1),
                all,
                left: init,
                right: step.0,
                left_casts: vec![None; width],
                right_casts,
            })),
            ..SelectPlan::empty()
        };
        Ok((plan, names, types))
    }

    /// The two terms of a recursive WITH query planned: (non-recursive term, (recursive
    /// term, working table id), column names, types, the recursive term's types); None
    /// when the recursive term does not refer to the query.
    #[allow(clippy::type_complexity)]
    fn plan_recursive_terms(
        &mut self,
        name: &str,
        query: &ast::Query,
        left: &ast::SetExpr,
        right: &ast::SetExpr,
        columns: &[String],
    ) -> Result<
        Option<(
            SelectPlan,
            (SelectPlan, usize),
            Vec<String>,
            Vec<DataType>,
            Vec<DataType>,
        )>,
    > {
        let (init, mut names, types) = self.plan_set_side(query, left)?;
        for (n, c) in names.iter_mut().zip(columns) {
            n.clone_from(c);
        }
        let id = NEXT_WORK_TABLE.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let refs_before = self.binder.work_table_refs;
        self.binder.ctes.push(super::bind::Cte {
            name: name.to_string(),
            query: query.clone(),
            columns: names.clone(),
            planned: None,
            recursive: false,
            work_table: Some(super::bind::WorkTableRef {
                id,
                names: names.clone(),
                types: types.clone(),
                outers: self.binder.outers.len(),
            }),
        });
        let step = self.plan_set_side(query, right);
        self.binder.ctes.pop();
        let (step, _, step_types) = step?;
        if self.binder.work_table_refs == refs_before {
            return Ok(None);
        }
        Ok(Some((init, (step, id), names, types, step_types)))
    }

    /// The WITH query `name` refers to, innermost first: its index in the binder's list.
    fn cte_named(&self, name: &ast::ObjectName) -> Option<usize> {
        let [ast::ObjectNamePart::Identifier(id)] = name.0.as_slice() else {
            return None;
        };
        let n = ident_name(id);
        self.binder.ctes.iter().rposition(|c| c.name == n)
    }

    /// A subquery in FROM (or a WITH query), planned on its own: it cannot see the FROM
    /// items beside it. `columns` rename its first columns.
    fn derived_table(
        &mut self,
        subquery: &ast::Query,
        qualifier: String,
        columns: Vec<String>,
    ) -> Result<FromTable> {
        let (plan, names, types) = self.plan_derived(subquery)?;
        self.derived_from(Arc::new(plan), names, types, qualifier, columns)
    }

    /// Plan a query of its own (a subquery in FROM or a WITH query): its plan, column
    /// names and types.
    fn plan_derived(
        &mut self,
        subquery: &ast::Query,
    ) -> Result<(SelectPlan, Vec<String>, Vec<DataType>)> {
        let grouping = self.binder.grouping.take();
        let no_aggregates = self.binder.no_aggregates.take();
        let windows = self.binder.windows.take();
        let fields = std::mem::take(&mut self.fields);
        let planned = self.plan_query(subquery);
        self.binder.grouping = grouping;
        self.binder.no_aggregates = no_aggregates;
        self.binder.windows = windows;
        self.fields = fields;
        let (plan, names, types, _) = planned?;
        Ok((plan, names, types))
    }

    /// A FROM item scanning a planned query, its first columns renamed by `columns`.
    fn derived_from(
        &mut self,
        plan: Arc<SelectPlan>,
        mut names: Vec<String>,
        types: Vec<DataType>,
        qualifier: String,
        columns: Vec<String>,
    ) -> Result<FromTable> {
        if columns.len() > names.len() {
            return Err(Error::new(
                SqlState::INVALID_COLUMN_REFERENCE,
                format!(
                    "table \"{qualifier}\" has {} columns available but {} columns specified",
                    names.len(),
                    columns.len()
                ),
            ));
        }
        for (name, column) in names.iter_mut().zip(columns) {
            *name = column;
        }
        let def = TableDef::of_columns(
            &qualifier,
            names.iter().map(String::as_str).zip(types.iter().copied()),
        );
        let table = self.placeholder_table(def);
        Ok(FromTable {
            def: table.def(),
            table,
            system: None,
            derived: Some(plan),
            function: None,
            qualifier,
        })
    }

    /// `WITH ... query`: the WITH queries are visible, by name, to the query and to the
    /// WITH queries after them; each reference plans one as a subquery in FROM (as
    /// PostgreSQL inlines a WITH query it does not need to materialize).
    fn plan_with_query(&mut self, q: &ast::Query, with: &ast::With) -> Result<PlannedQuery> {
        let base = self.binder.ctes.len();
        let mut names: Vec<String> = Vec::new();
        for cte in &with.cte_tables {
            let name = ident_name(&cte.alias.name);
            if names.contains(&name) {
                self.binder.ctes.truncate(base);
                return Err(Error::new(
                    SqlState::DUPLICATE_ALIAS,
                    format!("WITH query name \"{name}\" specified more than once"),
                ));
            }
            if !matches!(
                cte.query.body.as_ref(),
                ast::SetExpr::Select(_)
                    | ast::SetExpr::Query(_)
                    | ast::SetExpr::SetOperation { .. }
                    | ast::SetExpr::Values(_)
            ) {
                self.binder.ctes.truncate(base);
                return Err(Error::unsupported(
                    "data-modifying statements in WITH are not supported yet",
                ));
            }
            names.push(name.clone());
            self.binder.ctes.push(super::bind::Cte {
                recursive: with.recursive,
                work_table: None,
                name,
                query: cte.query.as_ref().clone(),
                columns: cte
                    .alias
                    .columns
                    .iter()
                    .map(|c| ident_name(&c.name))
                    .collect(),
                planned: None,
            });
        }
        let mut inner = q.clone();
        inner.with = None;
        let planned = self.plan_query(&inner);
        self.binder.ctes.truncate(base);
        planned
    }

    /// `VALUES ...` as a query: `SELECT * FROM (VALUES ...) AS "*VALUES*"` with the
    /// query's ORDER BY, LIMIT and OFFSET.
    fn plan_values_query(&mut self, q: &ast::Query) -> Result<PlannedQuery> {
        let mut inner = q.clone();
        inner.order_by = None;
        inner.limit_clause = None;
        inner.fetch = None;
        inner.locks = Vec::new();
        let select = ast::Select {
            select_token: sqlparser::ast::helpers::attached_token::AttachedToken::empty(),
            optimizer_hints: Vec::new(),
            select_modifiers: None,
            distinct: None,
            top: None,
            top_before_distinct: false,
            projection: vec![ast::SelectItem::Wildcard(
                ast::WildcardAdditionalOptions::default(),
            )],
            exclude: None,
            into: None,
            from: vec![ast::TableWithJoins {
                relation: ast::TableFactor::Derived {
                    lateral: false,
                    subquery: Box::new(inner),
                    alias: Some(ast::TableAlias {
                        explicit: true,
                        name: ast::Ident::with_quote('"', "*VALUES*"),
                        columns: Vec::new(),
                        at: None,
                    }),
                    sample: None,
                },
                joins: Vec::new(),
            }],
            lateral_views: Vec::new(),
            prewhere: None,
            selection: None,
            connect_by: Vec::new(),
            group_by: ast::GroupByExpr::Expressions(Vec::new(), Vec::new()),
            cluster_by: Vec::new(),
            distribute_by: Vec::new(),
            sort_by: Vec::new(),
            having: None,
            named_window: Vec::new(),
            qualify: None,
            window_before_qualify: false,
            value_table_mode: None,
            flavor: ast::SelectFlavor::Standard,
        };
        let mut outer = q.clone();
        *outer.body = ast::SetExpr::Select(Box::new(select));
        self.plan_query(&outer)
    }

    /// `(VALUES (...), ...) AS alias(columns)` in FROM: its rows, of the types resolved
    /// across them as PostgreSQL resolves them (42804 when they cannot be matched).
    fn values_table(
        &mut self,
        values: &ast::Values,
        alias: Option<&ast::TableAlias>,
    ) -> Result<FromTable> {
        let width = values.rows.first().map_or(0, |r| r.len());
        if values.rows.iter().any(|r| r.len() != width) {
            return Err(Error::syntax("VALUES lists must all be the same length"));
        }
        let grouping = self.binder.grouping.take();
        let no_aggregates = self.binder.no_aggregates.replace("VALUES");
        let bound: Result<Vec<Vec<_>>> = values
            .rows
            .iter()
            .map(|r| {
                r.iter()
                    .map(|e| self.binder.bind(e, &Scope::default()))
                    .collect()
            })
            .collect();
        self.binder.grouping = grouping;
        self.binder.no_aggregates = no_aggregates;
        let bound = bound?;
        let mut types = vec![DataType::Unknown; width];
        for row in &bound {
            for (t, (_, ty)) in types.iter_mut().zip(row) {
                *t = match (*t, *ty) {
                    (DataType::Unknown, ty) => ty,
                    (t, DataType::Unknown) => t,
                    (a, b) => set_result_type(a, b).ok_or_else(|| {
                        Error::new(
                            SqlState::DATATYPE_MISMATCH,
                            format!(
                                "VALUES types {} and {} cannot be matched",
                                type_name_only(a),
                                type_name_only(b)
                            ),
                        )
                    })?,
                };
            }
        }
        for t in types.iter_mut() {
            if *t == DataType::Unknown {
                *t = DataType::Text;
            }
        }
        let mut args = Vec::with_capacity(width * bound.len());
        for row in bound {
            for (t, to) in row.into_iter().zip(&types) {
                args.push(if t.1 == *to || t.1 == DataType::Unknown {
                    self.binder.coerce(t, *to)?
                } else {
                    Expr::Cast(Box::new(t.0), *to)
                });
            }
        }
        let qualifier = alias.map_or("*VALUES*".to_string(), |a| ident_name(&a.name));
        let column_aliases: Vec<String> = alias
            .map(|a| a.columns.iter().map(|c| ident_name(&c.name)).collect())
            .unwrap_or_default();
        if column_aliases.len() > width {
            return Err(Error::new(
                SqlState::INVALID_COLUMN_REFERENCE,
                format!(
                    "table \"{qualifier}\" has {width} columns available but {} columns specified",
                    column_aliases.len()
                ),
            ));
        }
        let names: Vec<String> = (0..width)
            .map(|i| {
                column_aliases
                    .get(i)
                    .cloned()
                    .unwrap_or_else(|| format!("column{}", i + 1))
            })
            .collect();
        let def = TableDef::of_columns(
            &qualifier,
            names.iter().map(String::as_str).zip(types.iter().copied()),
        );
        let table = self.placeholder_table(def);
        Ok(FromTable {
            def: table.def(),
            table,
            system: None,
            derived: None,
            function: Some(Arc::new(TableFunction {
                kind: TableFunctionKind::Values { width },
                args,
                ordinality: false,
            })),
            qualifier,
        })
    }

    /// A set-returning function in FROM: `generate_series` or `unnest`. Its arguments
    /// may not refer to the other FROM items (no LATERAL), but may to an enclosing query.
    fn bind_table_function(
        &mut self,
        fname: &str,
        exprs: &[&ast::Expr],
        alias: Option<&ast::TableAlias>,
        ordinality: bool,
    ) -> Result<FromTable> {
        let fname = fname.to_string();
        let grouping = self.binder.grouping.take();
        let no_aggregates = self.binder.no_aggregates.replace("functions in FROM");
        // Over the columns of the FROM items before it: per row of theirs.
        let scope = self.lateral.take().unwrap_or_default();
        let bound: Result<Vec<_>> = exprs.iter().map(|e| self.binder.bind(e, &scope)).collect();
        self.binder.grouping = grouping;
        self.binder.no_aggregates = no_aggregates;
        let bound = bound?;
        let arg_types: Vec<String> = bound.iter().map(|(_, t)| t.name()).collect();
        let no_function = || {
            Error::new(
                SqlState::UNDEFINED_FUNCTION,
                format!("function {fname}({}) does not exist", arg_types.join(", ")),
            )
            .with_hint("No function matches the given name and argument types. You might need to add explicit type casts.")
        };
        let (kind, args, types) = match fname.as_str() {
            "generate_series" if (2..=3).contains(&bound.len()) => {
                let (args, ty) = self
                    .binder
                    .generate_series_args(bound)?
                    .ok_or_else(no_function)?;
                (TableFunctionKind::GenerateSeries, args, vec![ty])
            }
            "_pg_expandarray" if bound.len() == 1 => {
                let mut bound = bound;
                let Some((e, t)) = bound.pop() else {
                    return Err(no_function());
                };
                let Some(DataType::Record(fields)) =
                    t.element().and_then(crate::types::expanded_array_type)
                else {
                    return Err(no_function());
                };
                (
                    TableFunctionKind::ExpandArray(super::plan::ExpandOutput::Columns),
                    vec![e],
                    fields.iter().map(|(_, t)| *t).collect(),
                )
            }
            "pg_partition_ancestors" if bound.len() == 1 => {
                let mut bound = bound;
                let Some(a) = bound.pop() else {
                    return Err(no_function());
                };
                let a = self.binder.coerce(a, DataType::RegClass)?;
                (
                    TableFunctionKind::PartitionAncestors,
                    vec![a],
                    vec![DataType::RegClass],
                )
            }
            "regexp_matches" | "regexp_split_to_table" => {
                let (kind, args, ty) = self
                    .binder
                    .regexp_set_function(&fname, bound)?
                    .ok_or_else(no_function)?;
                (kind, args, vec![ty])
            }
            "pg_options_to_table" if bound.len() == 1 => {
                let mut bound = bound;
                let Some(a) = bound.pop() else {
                    return Err(no_function());
                };
                let a = self.binder.coerce(a, DataType::Array(&DataType::Text))?;
                (
                    TableFunctionKind::OptionsToTable,
                    vec![a],
                    vec![DataType::Text, DataType::Text],
                )
            }
            n if super::json_functions::JsonbSet::by_name(n).is_some() && bound.len() == 1 => {
                let set = super::json_functions::JsonbSet::by_name(n).ok_or_else(no_function)?;
                let a = self
                    .binder
                    .jsonb_document(bound)
                    .ok_or_else(no_function)??;
                (
                    TableFunctionKind::Jsonb(set),
                    vec![a],
                    set.columns().iter().map(|(_, t)| *t).collect(),
                )
            }
            "unnest" if !bound.is_empty() => {
                let mut types = Vec::new();
                let mut args = Vec::new();
                for (e, t) in bound {
                    let Some(elem) = t.element() else {
                        return Err(no_function());
                    };
                    types.push(elem);
                    args.push(e);
                }
                (TableFunctionKind::Unnest, args, types)
            }
            _ => return Err(no_function()),
        };
        let mut types = types;
        let function_columns = types.len();
        if ordinality {
            types.push(DataType::Int8);
        }
        let qualifier = alias.map_or(fname.clone(), |a| ident_name(&a.name));
        let column_aliases: Vec<String> = alias
            .map(|a| a.columns.iter().map(|c| ident_name(&c.name)).collect())
            .unwrap_or_default();
        if column_aliases.len() > types.len() {
            return Err(Error::new(
                SqlState::SYNTAX_ERROR,
                format!("too many column aliases specified for function {fname}"),
            ));
        }
        // One column takes the alias's name, as in PostgreSQL; more are named by the
        // function.
        let names: Vec<String> = (0..types.len())
            .map(|i| match column_aliases.get(i) {
                Some(n) => n.clone(),
                None if i == function_columns => "ordinality".into(),
                None => match out_parameter_name(kind, i) {
                    Some(n) => n.into(),
                    None if function_columns == 1 => qualifier.clone(),
                    None => fname.clone(),
                },
            })
            .collect();
        let def = TableDef::of_columns(
            &qualifier,
            names.iter().map(String::as_str).zip(types.iter().copied()),
        );
        let table = self.placeholder_table(def);
        Ok(FromTable {
            def: table.def(),
            table,
            system: None,
            derived: None,
            function: Some(Arc::new(TableFunction {
                kind,
                args,
                ordinality,
            })),
            qualifier,
        })
    }

    /// FROM: its tables, left to right, with the scope their columns make together, the
    /// columns `*` stands for, and each join's kind and condition.
    fn plan_from(&mut self, from: &[ast::TableWithJoins]) -> Result<FromPlan> {
        let mut plan = FromPlan::default();
        for (item, twj) in from.iter().enumerate() {
            // A join's condition may refer only to the tables of its own FROM item.
            plan.item_start = plan.scope.columns.len();
            // A function in FROM may read the columns of the items before it (an
            // implicit LATERAL, as in PostgreSQL).
            self.lateral = Some(plan.scope.clone());
            let first = self.bind_from_table(&twj.relation);
            self.lateral = None;
            let first = first?;
            let kind = if item == 0 {
                None
            } else {
                Some(JoinKind::Inner)
            };
            self.add_from_table(&mut plan, first, kind, &ast::JoinConstraint::None)?;
            for join in &twj.joins {
                use ast::JoinOperator as J;
                let (kind, constraint) = match &join.join_operator {
                    J::Join(c) | J::Inner(c) => (JoinKind::Inner, c),
                    J::CrossJoin(c) => (JoinKind::Inner, c),
                    J::Left(c) | J::LeftOuter(c) => (JoinKind::Left, c),
                    J::Right(c) | J::RightOuter(c) => (JoinKind::Right, c),
                    J::FullOuter(c) => (JoinKind::Full, c),
                    _ => return Err(Error::unsupported("this kind of join is not supported")),
                };
                if item > 0 && matches!(kind, JoinKind::Right | JoinKind::Full) {
                    return Err(Error::unsupported(
                        "RIGHT and FULL joins after a comma in FROM are not supported yet",
                    ));
                }
                self.lateral = Some(plan.scope.clone());
                let table = self.bind_from_table(&join.relation);
                self.lateral = None;
                self.add_from_table(&mut plan, table?, Some(kind), constraint)?;
            }
        }
        Ok(plan)
    }

    /// Join `table` to the tables of `plan` (the first table when `kind` is None).
    fn add_from_table(
        &mut self,
        plan: &mut FromPlan,
        table: FromTable,
        kind: Option<JoinKind>,
        constraint: &ast::JoinConstraint,
    ) -> Result<()> {
        if plan.tables.len() >= MAX_JOINED_TABLES {
            return Err(Error::unsupported(format!(
                "more than {MAX_JOINED_TABLES} tables in one FROM clause are not supported"
            )));
        }
        if plan.tables.iter().any(|t| t.qualifier == table.qualifier) {
            return Err(Error::new(
                SqlState::DUPLICATE_ALIAS,
                format!(
                    "table name \"{}\" specified more than once",
                    table.qualifier
                ),
            ));
        }
        let outer_width = plan.scope.columns.len();
        let table_scope = table_scope(&table.table, &table.def, Some(&table.qualifier));
        plan.scope.columns.extend(table_scope.columns);
        if table.derived.is_none() && table.function.is_none() {
            plan.scope.relations.extend(table_scope.relations);
        }
        let width = table.def.columns.len();
        plan.origins.extend((0..width).map(|c| {
            (table.system.is_none() && table.derived.is_none() && table.function.is_none())
                .then_some((super::pg_catalog::table_oid(&table.table), c as i16 + 1))
        }));
        let Some(kind) = kind else {
            plan.star
                .extend((0..width).filter(|&c| !table.def.columns[c].dropped));
            plan.tables.push(table);
            return Ok(());
        };
        // USING and NATURAL: the named columns are compared, and shown once.
        let using: Vec<String> = match constraint {
            ast::JoinConstraint::Using(names) => names
                .iter()
                .map(|n| match n.0.last() {
                    Some(ast::ObjectNamePart::Identifier(i)) => Ok(ident_name(i)),
                    _ => Err(Error::syntax("syntax error in USING")),
                })
                .collect::<Result<_>>()?,
            ast::JoinConstraint::Natural => table
                .def
                .columns
                .iter()
                .filter(|c| !c.dropped)
                .map(|c| c.name.clone())
                .filter(|n| {
                    plan.star
                        .iter()
                        .any(|&i| plan.scope.columns[i].name == *n && !plan.scope.columns[i].hidden)
                })
                .collect(),
            _ => Vec::new(),
        };
        let mut on = None;
        let mut merged = Vec::new();
        for name in &using {
            if kind == JoinKind::Full {
                return Err(Error::unsupported(
                    "FULL JOIN with USING is not supported yet",
                ));
            }
            let left: Vec<usize> = (0..outer_width)
                .filter(|&i| plan.scope.columns[i].name == *name && !plan.scope.columns[i].hidden)
                .collect();
            let left = match left.as_slice() {
                [i] => *i,
                [] => {
                    return Err(Error::new(
                        SqlState::UNDEFINED_COLUMN,
                        format!(
                        "column \"{name}\" specified in USING clause does not exist in left table"
                    ),
                    ))
                }
                _ => {
                    return Err(Error::new(
                        SqlState::AMBIGUOUS_COLUMN,
                        format!(
                            "common column name \"{name}\" appears more than once in left table"
                        ),
                    ))
                }
            };
            let Some(right) = table.def.column_index(name).map(|c| outer_width + c) else {
                return Err(Error::new(
                    SqlState::UNDEFINED_COLUMN,
                    format!(
                        "column \"{name}\" specified in USING clause does not exist in right table"
                    ),
                ));
            };
            let (lt, rt) = (
                plan.scope.columns[left].data_type,
                plan.scope.columns[right].data_type,
            );
            let eq = self.binder.compare_columns(left, lt, right, rt)?;
            on = Some(match on {
                None => eq,
                Some(prev) => Expr::And(Box::new(prev), Box::new(eq)),
            });
            // The merged column is the side whose rows are always there.
            let (shown, hidden) = match kind {
                JoinKind::Right => (right, left),
                _ => (left, right),
            };
            plan.scope.columns[hidden].hidden = true;
            merged.push(shown);
        }
        if let ast::JoinConstraint::On(e) = constraint {
            self.binder.no_aggregates = Some("JOIN conditions");
            let bound = self.binder.bind_bool(e, &plan.scope, "JOIN/ON");
            self.binder.no_aggregates = None;
            let bound = bound?;
            let earlier = std::cell::Cell::new(None);
            bound.reads_only(&|c| {
                if c < plan.item_start && earlier.get().is_none() {
                    earlier.set(Some(c));
                }
                true
            });
            if let Some(c) = earlier.get() {
                let table = plan.scope.columns[c]
                    .qualifiers
                    .first()
                    .cloned()
                    .unwrap_or_default();
                return Err(Error::new(
                    SqlState::UNDEFINED_TABLE,
                    format!("invalid reference to FROM-clause entry for table \"{table}\""),
                )
                .with_hint(format!(
                    "There is an entry for table \"{table}\", but it cannot be referenced from this part of the query."
                )));
            }
            on = Some(bound);
        }
        // `*`: the merged columns first, then the rest of each side, as PostgreSQL.
        let mut star = merged.clone();
        star.extend(
            plan.star
                .iter()
                .copied()
                .filter(|i| !merged.contains(i) && !plan.scope.columns[*i].hidden),
        );
        star.extend(
            (outer_width..outer_width + width)
                .filter(|i| !merged.contains(i) && !plan.scope.columns[*i].hidden),
        );
        plan.star = star;
        plan.steps.push(PendingJoin {
            kind,
            on,
            outer_width,
        });
        plan.tables.push(table);
        Ok(())
    }

    /// A query's LIMIT and OFFSET, bound.
    fn bind_limit_offset(&mut self, q: &ast::Query) -> Result<(Option<Expr>, Option<Expr>)> {
        match &q.limit_clause {
            None => Ok((None, None)),
            Some(ast::LimitClause::LimitOffset {
                limit,
                offset,
                limit_by,
            }) => {
                if !limit_by.is_empty() {
                    return Err(Error::unsupported("LIMIT BY is not supported"));
                }
                let limit = limit
                    .as_ref()
                    .map(|e| self.bind_count(e, "LIMIT"))
                    .transpose()?;
                let offset = offset
                    .as_ref()
                    .map(|o| self.bind_count(&o.value, "OFFSET"))
                    .transpose()?;
                Ok((limit, offset))
            }
            Some(ast::LimitClause::OffsetCommaLimit { .. }) => {
                Err(Error::syntax("LIMIT #,# syntax is not supported"))
            }
        }
    }

    fn bind_count(&mut self, e: &ast::Expr, clause: &'static str) -> Result<Expr> {
        self.binder.no_aggregates = Some(clause);
        let t = self.binder.bind(e, &Scope::default())?;
        self.binder.no_aggregates = None;
        if t.1 != DataType::Unknown && !t.1.is_integer() && !t.1.is_numeric() {
            return Err(Error::new(
                SqlState::DATATYPE_MISMATCH,
                format!(
                    "argument of {clause} must be type bigint, not type {}",
                    t.1.name()
                ),
            ));
        }
        let ty = t.1;
        let e = self.binder.coerce(t, DataType::Int8)?;
        Ok(if ty == DataType::Int8 || ty == DataType::Unknown {
            e
        } else {
            Expr::Cast(Box::new(e), DataType::Int8)
        })
    }

    fn returning(
        &mut self,
        items: &Option<Vec<ast::SelectItem>>,
        scope: &Scope,
        table: &Table,
    ) -> Result<Vec<Expr>> {
        let Some(items) = items else {
            return Ok(Vec::new());
        };
        let mut exprs = Vec::new();
        let mut names = Vec::new();
        let mut types = Vec::new();
        let mut sources = Vec::new();
        for item in items {
            let list: Vec<(ast::Expr, String)> = match item {
                ast::SelectItem::UnnamedExpr(e) => vec![(e.clone(), column_name(e))],
                ast::SelectItem::ExprWithAlias { expr, alias } => {
                    vec![(expr.clone(), ident_name(alias))]
                }
                ast::SelectItem::Wildcard(_) | ast::SelectItem::QualifiedWildcard(..) => scope
                    .columns
                    .iter()
                    .filter(|c| !c.qualifiers.iter().any(|q| q == "excluded") && !is_dropped(c))
                    .map(|c| {
                        (
                            ast::Expr::Identifier(ast::Ident::with_quote('"', c.name.clone())),
                            c.name.clone(),
                        )
                    })
                    .collect(),
                _ => return Err(Error::unsupported("this RETURNING item is not supported")),
            };
            for (e, name) in list {
                let t = self.binder.bind(&e, scope)?;
                let ty = if t.1 == DataType::Unknown {
                    DataType::Text
                } else {
                    t.1
                };
                sources.push(match &t.0 {
                    Expr::Column(c) => Some((super::pg_catalog::table_oid(table), *c as i16 + 1)),
                    _ => None,
                });
                exprs.push(self.binder.coerce(t, ty)?);
                names.push(name);
                types.push(ty);
            }
        }
        self.set_fields(names, types, sources);
        Ok(exprs)
    }

    fn plan_insert(&mut self, ins: &ast::Insert) -> Result<Plan> {
        let name = match &ins.table {
            ast::TableObject::TableName(n) => n.clone(),
            _ => {
                return Err(Error::unsupported(
                    "INSERT INTO a table function is not supported",
                ))
            }
        };
        let table = self.table(&name)?;
        let mut wanted = acl::INSERT;
        if ins.returning.is_some() {
            wanted |= acl::SELECT;
        }
        if let Some(ast::OnInsert::OnConflict(ast::OnConflict {
            action: ast::OnConflictAction::DoUpdate(_),
            ..
        })) = &ins.on
        {
            wanted |= acl::UPDATE | acl::SELECT;
        }
        self.require_on_table(&table, wanted);
        let def = table.def();
        let alias = ins.table_alias.as_ref().map(|a| ident_name(&a.alias));
        let cols: Vec<String> = ins
            .columns
            .iter()
            .map(|c| {
                c.0.last()
                    .map(|p| match p {
                        ast::ObjectNamePart::Identifier(i) => ident_name(i),
                        other => other.to_string(),
                    })
                    .unwrap_or_default()
            })
            .collect();
        let explicit_columns = !cols.is_empty();
        let mut targets = self.target_columns(&def, cols.into_iter())?;
        let defaults = self.defaults(&def)?;
        let source = match ins.source.as_ref().map(|src| (src, src.body.as_ref())) {
            // DEFAULT VALUES: one row of every column's default.
            None if !explicit_columns => {
                targets.clear();
                InsertSource::Values(vec![Vec::new()])
            }
            None => return Err(Error::syntax("syntax error at or near \"DEFAULT\"")),
            Some((src, ast::SetExpr::Values(values)))
                if src.order_by.is_none() && src.limit_clause.is_none() =>
            {
                let width = values.rows.first().map_or(0, |r| r.content.len());
                if values.rows.iter().any(|r| r.content.len() != width) {
                    return Err(Error::syntax("VALUES lists must all be the same length"));
                }
                fit_insert_targets(&mut targets, width, explicit_columns)?;
                let mut rows = Vec::new();
                for row in &values.rows {
                    let mut out = Vec::new();
                    for (e, &col) in row.content.iter().zip(&targets) {
                        if let ast::Expr::Identifier(i) = e {
                            if i.quote_style.is_none() && i.value.eq_ignore_ascii_case("default") {
                                out.push(None);
                                continue;
                            }
                        }
                        self.binder.no_aggregates = Some("VALUES");
                        let t = self.binder.bind(e, &Scope::default())?;
                        self.binder.no_aggregates = None;
                        let column = &def.columns[col];
                        out.push(Some(self.binder.assign(
                            t,
                            &column.name,
                            column.data_type,
                        )?));
                    }
                    rows.push(out);
                }
                InsertSource::Values(rows)
            }
            Some((src, _)) => {
                let saved = std::mem::take(&mut self.fields);
                let (plan, _, types, _) = self.plan_query(src)?;
                self.fields = saved;
                fit_insert_targets(&mut targets, types.len(), explicit_columns)?;
                InsertSource::Select(Box::new(plan))
            }
        };
        let scope = table_scope(&table, &def, alias.as_deref());
        let on_conflict = match &ins.on {
            None => OnConflict::Error,
            Some(ast::OnInsert::OnConflict(oc)) => {
                match &oc.conflict_target {
                    None => {}
                    Some(ast::ConflictTarget::OnConstraint(n)) => {
                        let n = object_name(n)?;
                        if def.pkey_name.as_deref() != Some(n.as_str()) {
                            return Err(Error::new(
                                SqlState::UNDEFINED_OBJECT,
                                format!(
                                    "constraint \"{n}\" for table \"{}\" does not exist",
                                    def.name
                                ),
                            ));
                        }
                    }
                    Some(ast::ConflictTarget::Columns(cols)) => {
                        let mut idx: Vec<usize> = Vec::new();
                        for c in cols {
                            let n = ident_name(c);
                            idx.push(def.column_index(&n).ok_or_else(|| {
                                Error::new(
                                    SqlState::UNDEFINED_COLUMN,
                                    format!("column \"{n}\" does not exist"),
                                )
                            })?);
                        }
                        let mut a = idx.clone();
                        a.sort();
                        let mut b = def.primary_key.clone();
                        b.sort();
                        if a != b || b.is_empty() {
                            return Err(Error::new(
                                SqlState::INVALID_COLUMN_REFERENCE,
                                "there is no unique or exclusion constraint matching the ON CONFLICT specification",
                            ));
                        }
                    }
                }
                match &oc.action {
                    ast::OnConflictAction::DoNothing => OnConflict::Nothing,
                    ast::OnConflictAction::DoUpdate(du) => {
                        if def.primary_key.is_empty() || oc.conflict_target.is_none() {
                            return Err(Error::syntax("ON CONFLICT DO UPDATE requires inference specification or constraint name"));
                        }
                        let mut both = scope.clone();
                        for c in &def.columns {
                            both.columns.push(ScopeColumn {
                                qualifiers: vec!["excluded".into()],
                                name: c.name.clone(),
                                data_type: c.data_type,
                                hidden: false,
                            });
                        }
                        let assignments = self.assignments(&du.assignments, &def, &both)?;
                        let filter = match &du.selection {
                            Some(w) => Some(self.binder.bind_bool(w, &both, "WHERE")?),
                            None => None,
                        };
                        OnConflict::Update {
                            assignments,
                            filter,
                        }
                    }
                }
            }
            Some(_) => {
                return Err(Error::unsupported(
                    "ON DUPLICATE KEY UPDATE is not PostgreSQL syntax",
                ))
            }
        };
        let returning = self.returning(&ins.returning, &scope, &table)?;
        refuse_reading_target(&table, &returning.iter().collect::<Vec<_>>(), false)?;
        if let OnConflict::Update {
            assignments,
            filter,
        } = &on_conflict
        {
            let mut exprs: Vec<&Expr> = assignments.iter().map(|(_, e)| e).collect();
            exprs.extend(filter.iter());
            refuse_reading_target(&table, &exprs, false)?;
        }
        let subqueries = std::mem::take(&mut self.binder.subplans);
        let checks = self.checks(&table, &def)?;
        Ok(Plan::Insert(Box::new(InsertPlan {
            table,
            def,
            targets,
            source,
            defaults,
            checks,
            on_conflict,
            returning,
            subqueries,
        })))
    }

    fn assignments(
        &mut self,
        list: &[ast::Assignment],
        def: &TableDef,
        scope: &Scope,
    ) -> Result<Vec<(usize, Expr)>> {
        let mut out = Vec::new();
        for a in list {
            let name = match &a.target {
                ast::AssignmentTarget::ColumnName(n) => match n.0.last() {
                    Some(ast::ObjectNamePart::Identifier(i)) => ident_name(i),
                    _ => return Err(Error::syntax("bad assignment target")),
                },
                ast::AssignmentTarget::Tuple(_) => {
                    return Err(Error::unsupported(
                        "multiple-column assignment is not supported yet",
                    ))
                }
            };
            let col = def.column_index(&name).ok_or_else(|| {
                Error::new(
                    SqlState::UNDEFINED_COLUMN,
                    format!(
                        "column \"{name}\" of relation \"{}\" does not exist",
                        def.name
                    ),
                )
            })?;
            if out.iter().any(|(c, _)| *c == col) {
                return Err(Error::new(
                    SqlState::DUPLICATE_COLUMN,
                    format!("multiple assignments to same column \"{name}\""),
                ));
            }
            let expr = if matches!(&a.value, ast::Expr::Identifier(i) if i.quote_style.is_none() && i.value.eq_ignore_ascii_case("default"))
            {
                match &def.columns[col].default {
                    Some(_) => self.defaults(def)?[col]
                        .clone()
                        .unwrap_or(Expr::Const(crate::types::Value::Null)),
                    None => Expr::Const(crate::types::Value::Null),
                }
            } else {
                self.binder.no_aggregates = Some("UPDATE");
                let t = self.binder.bind(&a.value, scope)?;
                self.binder.no_aggregates = None;
                let column = &def.columns[col];
                self.binder.assign(t, &column.name, column.data_type)?
            };
            out.push((col, expr));
        }
        Ok(out)
    }

    fn single_table(&mut self, twj: &ast::TableWithJoins) -> Result<(Arc<Table>, Option<String>)> {
        if !twj.joins.is_empty() {
            return Err(Error::unsupported("joins are not supported yet"));
        }
        match &twj.relation {
            ast::TableFactor::Table { name, alias, .. } => Ok((
                self.table(name)?,
                alias.as_ref().map(|a| ident_name(&a.name)),
            )),
            _ => Err(Error::unsupported(
                "this table reference is not supported yet",
            )),
        }
    }

    /// The scan of an UPDATE or DELETE target: its WHERE bound (no aggregates), and the
    /// access path chosen from it.
    fn target_scan(
        &mut self,
        table: Arc<Table>,
        scope: &Scope,
        selection: &Option<ast::Expr>,
    ) -> Result<ScanPlan> {
        let def = table.def();
        self.binder.no_aggregates = Some("WHERE");
        let filter = match selection {
            Some(w) => self.binder.bind_bool(w, scope, "WHERE").map(Some),
            None => Ok(None),
        };
        self.binder.no_aggregates = None;
        let filter = filter?;
        let access = access_path(&def, &table.indexes(), filter.as_ref());
        Ok(ScanPlan {
            table,
            system: None,
            derived: None,
            function: None,
            qualifier: def.name.clone(),
            def,
            access,
            filter,
        })
    }

    fn plan_update(&mut self, u: &ast::Update) -> Result<Plan> {
        if u.from.is_some() {
            return Err(Error::unsupported("UPDATE ... FROM is not supported yet"));
        }
        let (table, alias) = self.single_table(&u.table)?;
        // SELECT too when it reads the table's values (PostgreSQL asks it per column).
        let reads = u.selection.is_some()
            || u.returning.is_some()
            || u.assignments
                .iter()
                .any(|a| !matches!(a.value, ast::Expr::Value(_)));
        self.require_on_table(&table, acl::UPDATE | if reads { acl::SELECT } else { 0 });
        let def = table.def();
        let scope = table_scope(&table, &def, alias.as_deref());
        let assignments = self.assignments(&u.assignments, &def, &scope)?;
        let scan = self.target_scan(table.clone(), &scope, &u.selection)?;
        let returning = self.returning(&u.returning, &scope, &table)?;
        let increments = if self.binder.subplans.is_empty() {
            increment_form(&def, &scan, &assignments, &returning)
        } else {
            None
        };
        let set_exprs: Vec<&Expr> = assignments.iter().map(|(_, e)| e).collect();
        refuse_reading_target(&table, &set_exprs, true)?;
        refuse_reading_target(&table, &returning.iter().collect::<Vec<_>>(), false)?;
        let subqueries = std::mem::take(&mut self.binder.subplans);
        let checks = self.checks(&table, &def)?;
        let unique_changes = assignments.iter().any(|(c, _)| {
            def.primary_key.contains(c)
                || def
                    .indexes
                    .iter()
                    .any(|i| i.unique && i.columns.contains(c))
        });
        let action_targets = if unique_changes {
            super::foreign_keys::action_targets(&self.engine.txn.catalog, table.id)
        } else {
            Vec::new()
        };
        Ok(Plan::Update(Box::new(UpdatePlan {
            scan,
            assignments,
            checks,
            returning,
            increments,
            defer: Default::default(),
            subqueries,
            action_targets,
        })))
    }

    fn plan_delete(&mut self, d: &ast::Delete) -> Result<Plan> {
        if d.using.is_some() || !d.tables.is_empty() {
            return Err(Error::unsupported("DELETE ... USING is not supported yet"));
        }
        let from = match &d.from {
            ast::FromTable::WithFromKeyword(v) | ast::FromTable::WithoutKeyword(v) => v,
        };
        let [twj] = from.as_slice() else {
            return Err(Error::unsupported(
                "DELETE from several tables is not supported",
            ));
        };
        let (table, alias) = self.single_table(twj)?;
        let reads = d.selection.is_some() || d.returning.is_some();
        self.require_on_table(&table, acl::DELETE | if reads { acl::SELECT } else { 0 });
        let def = table.def();
        let scope = table_scope(&table, &def, alias.as_deref());
        let scan = self.target_scan(table.clone(), &scope, &d.selection)?;
        let returning = self.returning(&d.returning, &scope, &table)?;
        refuse_reading_target(&table, &returning.iter().collect::<Vec<_>>(), false)?;
        let subqueries = std::mem::take(&mut self.binder.subplans);
        let action_targets =
            super::foreign_keys::action_targets(&self.engine.txn.catalog, table.id);
        Ok(Plan::Delete(Box::new(DeletePlan {
            scan,
            returning,
            subqueries,
            action_targets,
        })))
    }
}

/// A query that is only its body: no WITH, ORDER BY, LIMIT, OFFSET, FETCH or locks.
/// Where a grouped query's window values are numbered from while its select list is
/// bound (past any real column), before they are placed after its groups' columns.
const WINDOW_COLUMNS_PENDING: usize = 1 << 24;

/// The TimeZone setting `SET TIME ZONE value` gives: a string or a number (hours east of
/// UTC) as SET TimeZone reads it, an interval (an offset east of UTC), or LOCAL and
/// DEFAULT (None: the default).
fn time_zone_value(value: &ast::Expr) -> Result<Option<String>> {
    use crate::types::zone::Zone;
    Ok(Some(match value {
        ast::Expr::Value(v) => match &v.value {
            ast::Value::SingleQuotedString(s) => s.clone(),
            other => other.to_string(),
        },
        ast::Expr::Identifier(id)
            if id.quote_style.is_none()
                && (id.value.eq_ignore_ascii_case("local")
                    || id.value.eq_ignore_ascii_case("default")) =>
        {
            return Ok(None)
        }
        ast::Expr::Interval(iv) => {
            let text = match iv.value.as_ref() {
                ast::Expr::Value(v) => match &v.value {
                    ast::Value::SingleQuotedString(s) => s.clone(),
                    other => other.to_string(),
                },
                other => other.to_string(),
            };
            let parsed = crate::types::parse_interval(&text)?;
            if parsed.months != 0 || parsed.days != 0 {
                return Err(Error::new(
                    SqlState::INVALID_PARAMETER_VALUE,
                    format!("invalid value for parameter \"TimeZone\": \"{value}\""),
                )
                .with_detail(format!(
                    "Cannot specify {} in time zone interval.",
                    if parsed.months != 0 { "months" } else { "days" }
                )));
            }
            let offset_secs = i32::try_from(parsed.micros / 1_000_000).unwrap_or(i32::MAX);
            Zone::hours_east(offset_secs).name()
        }
        other => other.to_string(),
    }))
}

fn is_bare_body(q: &ast::Query) -> bool {
    q.with.is_none()
        && q.order_by.is_none()
        && q.limit_clause.is_none()
        && q.fetch.is_none()
        && q.locks.is_empty()
}

/// A statement sees the table it changes as it was before the statement, but the
/// executor evaluates SET and RETURNING while it writes: a subquery there that reads the
/// target table, and would run after the first write, is refused. Uncorrelated subqueries
/// in SET run once, before the first write, so only correlated ones are refused there.
fn refuse_reading_target(table: &Arc<Table>, exprs: &[&Expr], correlated_only: bool) -> Result<()> {
    let mut subs = Vec::new();
    for e in exprs {
        e.subqueries(&mut subs);
    }
    for sub in subs {
        if correlated_only && sub.args.is_empty() {
            continue;
        }
        if sub.plan.tables_read().iter().any(|t| Arc::ptr_eq(t, table)) {
            return Err(Error::unsupported(
                "a subquery reading the table being changed is not supported here yet",
            ));
        }
    }
    Ok(())
}

/// A SELECT's FOR UPDATE / FOR SHARE clauses (several combine to the strongest; OF lists
/// are accepted, as a query reads one table).
fn row_lock_of(clauses: &[ast::LockClause]) -> Result<Option<RowLock>> {
    let mut out: Option<RowLock> = None;
    for c in clauses {
        let marked = |mark: &str| {
            c.of.as_ref()
                .is_some_and(|of| of.to_string() == format!("\"{mark}\""))
        };
        let want = match c.lock_type {
            ast::LockType::Update if marked(super::parser::NO_KEY_LOCK_MARK) => Want::NoKeyWrite,
            ast::LockType::Update => Want::Write,
            ast::LockType::Share if marked(super::parser::KEY_SHARE_LOCK_MARK) => Want::KeyShare,
            ast::LockType::Share => Want::Share,
        };
        let wait = match c.nonblock {
            None => RowLockWait::Block,
            Some(ast::NonBlock::Nowait) => RowLockWait::NoWait,
            Some(ast::NonBlock::SkipLocked) => RowLockWait::SkipLocked,
        };
        out = Some(match out {
            None => RowLock { want, wait },
            Some(prev) => RowLock {
                // The strongest: `Want`'s variants are in order, strongest first.
                want: if (prev.want as u8) < (want as u8) {
                    prev.want
                } else {
                    want
                },
                wait: if prev.wait == RowLockWait::Block {
                    wait
                } else {
                    prev.wait
                },
            },
        });
    }
    Ok(out)
}

fn txn_modes(modes: &[ast::TransactionMode]) -> Result<TxnModes> {
    let mut out = TxnModes::default();
    for m in modes {
        match m {
            ast::TransactionMode::IsolationLevel(l) => {
                out.isolation = Some(match l {
                    ast::TransactionIsolationLevel::ReadUncommitted => Isolation::ReadUncommitted,
                    ast::TransactionIsolationLevel::ReadCommitted => Isolation::ReadCommitted,
                    ast::TransactionIsolationLevel::RepeatableRead => Isolation::RepeatableRead,
                    ast::TransactionIsolationLevel::Serializable => Isolation::Serializable,
                    ast::TransactionIsolationLevel::Snapshot => {
                        return Err(Error::syntax("syntax error at or near \"SNAPSHOT\""))
                    }
                })
            }
            ast::TransactionMode::AccessMode(mode) => {
                out.read_only = Some(*mode == ast::TransactionAccessMode::ReadOnly)
            }
        }
    }
    Ok(out)
}

/// The column a PRIMARY KEY element names (expressions are not supported).
/// The columns of `def` that `e` names, each once, in order (an unnamed CHECK
/// constraint is named for its column when it reads just one).
fn referenced_columns(e: &ast::Expr, def: &TableDef, out: &mut Vec<String>) {
    use ast::Expr as E;
    let mut column = |i: &ast::Ident| {
        let n = ident_name(i);
        if def.column_index(&n).is_some() && !out.contains(&n) {
            out.push(n);
        }
    };
    match e {
        E::Identifier(i) => column(i),
        E::CompoundIdentifier(parts) => {
            if let Some(i) = parts.last() {
                column(i)
            }
        }
        E::BinaryOp { left, right, .. } => {
            referenced_columns(left, def, out);
            referenced_columns(right, def, out);
        }
        E::UnaryOp { expr, .. }
        | E::Nested(expr)
        | E::IsNull(expr)
        | E::IsNotNull(expr)
        | E::IsTrue(expr)
        | E::IsFalse(expr)
        | E::Cast { expr, .. } => referenced_columns(expr, def, out),
        E::Between {
            expr, low, high, ..
        } => {
            for x in [expr, low, high] {
                referenced_columns(x, def, out);
            }
        }
        E::InList { expr, list, .. } => {
            referenced_columns(expr, def, out);
            for x in list {
                referenced_columns(x, def, out);
            }
        }
        E::Like { expr, pattern, .. } | E::ILike { expr, pattern, .. } => {
            referenced_columns(expr, def, out);
            referenced_columns(pattern, def, out);
        }
        E::Function(f) => {
            if let ast::FunctionArguments::List(l) = &f.args {
                for a in &l.args {
                    if let ast::FunctionArg::Unnamed(ast::FunctionArgExpr::Expr(x)) = a {
                        referenced_columns(x, def, out);
                    }
                }
            }
        }
        _ => {}
    }
}

/// `table_col1_col2`: what PostgreSQL names an index or key after, before its suffix.
fn column_name_base(table: &str, columns: &[Column], named: &[usize]) -> String {
    let names: Vec<&str> = named.iter().map(|&c| columns[c].name.as_str()).collect();
    format!("{table}_{}", names.join("_"))
}

/// A constant integer of a statement (sequence options).
/// A sequence's AS type: smallint, integer or bigint.
fn sequence_type(dt: &ast::DataType) -> Result<DataType> {
    match super::bind::data_type(dt)?.0 {
        t @ (DataType::Int2 | DataType::Int4 | DataType::Int8) => Ok(t),
        _ => Err(Error::new(
            SqlState::INVALID_PARAMETER_VALUE,
            "sequence type must be smallint, integer, or bigint",
        )),
    }
}

/// The options a CREATE or ALTER SEQUENCE names.
fn sequence_changes(
    data_type: Option<DataType>,
    options: &[ast::SequenceOptions],
) -> Result<super::plan::SequenceChanges> {
    let mut c = super::plan::SequenceChanges {
        data_type,
        ..Default::default()
    };
    for opt in options {
        match opt {
            ast::SequenceOptions::IncrementBy(e, _) => c.increment = Some(constant_i64(e)?),
            ast::SequenceOptions::MinValue(e) => {
                c.min = Some(e.as_ref().map(constant_i64).transpose()?)
            }
            ast::SequenceOptions::MaxValue(e) => {
                c.max = Some(e.as_ref().map(constant_i64).transpose()?)
            }
            ast::SequenceOptions::StartWith(e, _) => c.start = Some(constant_i64(e)?),
            ast::SequenceOptions::Cache(e) => c.cache = Some(constant_i64(e)?),
            ast::SequenceOptions::Cycle(false) => {}
            ast::SequenceOptions::Cycle(true) => {
                return Err(Error::unsupported("CYCLE sequences are not supported yet"))
            }
        }
    }
    Ok(c)
}

fn constant_i64(e: &ast::Expr) -> Result<i64> {
    let parsed = match e {
        ast::Expr::Value(v) => match &v.value {
            ast::Value::Number(n, _) => n.parse::<i64>().ok(),
            _ => None,
        },
        ast::Expr::UnaryOp {
            op: ast::UnaryOperator::Minus,
            expr,
        } => constant_i64(expr).ok().and_then(i64::checked_neg),
        ast::Expr::UnaryOp {
            op: ast::UnaryOperator::Plus,
            expr,
        } => constant_i64(expr).ok(),
        _ => None,
    };
    parsed.ok_or_else(|| Error::syntax(format!("syntax error at or near \"{e}\"")))
}

/// A DEFAULT's text as stored: `nextval('seq'::regclass)`, however qualified, as the
/// `nextval('seq')` a serial column's default is (the catalogs find its sequence so).
fn canonical_default(e: &ast::Expr) -> String {
    if let ast::Expr::Function(f) = e {
        if function_name(f) == "nextval" {
            if let ast::FunctionArguments::List(l) = &f.args {
                if let [ast::FunctionArg::Unnamed(ast::FunctionArgExpr::Expr(arg))] =
                    l.args.as_slice()
                {
                    let inner = match arg {
                        ast::Expr::Cast { expr, .. } => expr.as_ref(),
                        other => other,
                    };
                    if let ast::Expr::Value(v) = inner {
                        if let ast::Value::SingleQuotedString(s) = &v.value {
                            let bare = s.strip_prefix("public.").unwrap_or(s);
                            if !bare.contains(['.', '"', '\'']) {
                                return format!("nextval('{bare}')");
                            }
                        }
                    }
                }
            }
        }
    }
    e.to_string()
}

/// Refuse what a UNIQUE constraint names that is not supported.
fn check_unique_options(uc: &ast::UniqueConstraint) -> Result<()> {
    if !uc.include.is_empty()
        || !uc.index_options.is_empty()
        || uc.index_type.is_some()
        || uc.characteristics.is_some()
        || matches!(uc.nulls_distinct, ast::NullsDistinctOption::NotDistinct)
    {
        return Err(Error::unsupported(format!(
            "{uc} is not supported yet: only UNIQUE (columns)"
        )));
    }
    Ok(())
}

/// Whether a foreign key may pair a column of type `a` with a referenced one of `b`:
/// types of one family, whose values compare (and key) alike once cast.
fn comparable_key_types(a: DataType, b: DataType) -> bool {
    let family = |t: DataType| match t {
        DataType::Int2 | DataType::Int4 | DataType::Int8 => 1,
        DataType::Text | DataType::Varchar(_) | DataType::Char(_) => 2,
        DataType::Float4 | DataType::Float8 => 3,
        DataType::Numeric(_) => 4,
        DataType::Timestamp => 5,
        DataType::TimestampTz => 6,
        _ => 0,
    };
    match (family(a), family(b)) {
        (0, _) | (_, 0) => a == b,
        (x, y) => x == y,
    }
}

/// The operator class `name` names for an index column of type `t`: None for the
/// type's default class (which the catalogs do not show), or the pattern class of a
/// string type. Strings compare byte by byte here (the C collation), so a pattern class
/// orders exactly as the default one does.
fn index_opclass(name: &str, t: DataType) -> Result<Option<String>> {
    let defaults: &[&str] = match t {
        DataType::Text => &["text_ops"],
        DataType::Varchar(_) => &["text_ops", "varchar_ops"],
        DataType::Char(_) => &["bpchar_ops"],
        DataType::Int2 | DataType::Int4 | DataType::Int8 => &["int2_ops", "int4_ops", "int8_ops"],
        DataType::Numeric(_) => &["numeric_ops"],
        DataType::Bool => &["bool_ops"],
        DataType::Float4 | DataType::Float8 => &["float4_ops", "float8_ops"],
        DataType::Date => &["date_ops"],
        DataType::Timestamp => &["timestamp_ops"],
        DataType::TimestampTz => &["timestamptz_ops"],
        DataType::Bytea => &["bytea_ops"],
        _ => &[],
    };
    let pattern = match t {
        DataType::Text => Some("text_pattern_ops"),
        DataType::Varchar(_) => Some("varchar_pattern_ops"),
        DataType::Char(_) => Some("bpchar_pattern_ops"),
        _ => None,
    };
    if defaults.contains(&name) {
        return Ok(None);
    }
    if pattern == Some(name) || (pattern.is_some() && name == "text_pattern_ops") {
        return Ok(Some(name.to_string()));
    }
    let known = [
        "text_pattern_ops",
        "varchar_pattern_ops",
        "bpchar_pattern_ops",
    ];
    if known.contains(&name) || name.ends_with("_ops") && !defaults.is_empty() {
        return Err(Error::new(
            SqlState::DATATYPE_MISMATCH,
            format!(
                "operator class \"{name}\" does not accept data type {}",
                t.name()
            ),
        ));
    }
    Err(Error::new(
        SqlState::UNDEFINED_OBJECT,
        format!("operator class \"{name}\" does not exist for access method \"btree\""),
    ))
}

fn key_column_name(ic: &ast::IndexColumn) -> Result<String> {
    match &ic.column.expr {
        ast::Expr::Identifier(i) => Ok(ident_name(i)),
        other => Err(Error::unsupported(format!(
            "primary key on expression {other}"
        ))),
    }
}

/// Match an INSERT's target columns to the width of its rows, as PostgreSQL does: more
/// expressions than columns is an error; fewer is an error against an explicit column
/// list, but without one the rows fill the leading columns and the rest take defaults.
fn fit_insert_targets(targets: &mut Vec<usize>, width: usize, explicit: bool) -> Result<()> {
    if width > targets.len() {
        return Err(Error::syntax(
            "INSERT has more expressions than target columns",
        ));
    }
    if width < targets.len() {
        if explicit {
            return Err(Error::syntax(
                "INSERT has more target columns than expressions",
            ));
        }
        targets.truncate(width);
    }
    Ok(())
}

/// The UPDATE as deferrable increments, if it is one (see [`UpdatePlan::increments`]).
fn increment_form(
    def: &TableDef,
    scan: &ScanPlan,
    assignments: &[(usize, Expr)],
    returning: &[Expr],
) -> Option<Vec<Increment<Expr>>> {
    let is_key = |c: usize| def.primary_key.contains(&c);
    let names_one_row = matches!(scan.access, Access::Point(_))
        && scan.filter.as_ref().is_none_or(|f| f.reads_only(&is_key));
    if !names_one_row || !returning.is_empty() || assignments.is_empty() {
        return None;
    }
    let mut out = Vec::with_capacity(assignments.len());
    for (column, e) in assignments {
        let column = *column;
        let numeric = matches!(
            def.columns[column].data_type,
            DataType::Int2 | DataType::Int4 | DataType::Int8 | DataType::Numeric(_)
        );
        // An indexed column's new value must be known before commit (its entry, and a
        // unique index's check).
        let indexed = def.indexes.iter().any(|i| i.columns.contains(&column));
        if is_key(column)
            || !numeric
            || indexed
            || !def.checks.is_empty()
            || def
                .foreign_keys
                .iter()
                .any(|fk| fk.columns.contains(&column))
        {
            return None;
        }
        let e = match e {
            Expr::Cast(inner, ty) if *ty == def.columns[column].data_type => inner.as_ref(),
            e => e,
        };
        let Expr::Arith(op, a, b) = e else {
            return None;
        };
        let own = |x: &Expr| matches!(x, Expr::Column(c) if *c == column);
        let (operand, operand_first) = match op {
            ArithOp::Add | ArithOp::Sub if own(a) => (b.as_ref(), false),
            ArithOp::Add if own(b) => (a.as_ref(), true),
            _ => return None,
        };
        if !operand.is_row_independent() {
            return None;
        }
        out.push(Increment {
            column,
            op: *op,
            operand: operand.clone(),
            operand_first,
        });
    }
    Some(out)
}

/// The name PostgreSQL gives column `i` of a function in FROM by its OUT parameters (None
/// for a function without them, whose one column takes the function's or alias's name).
fn out_parameter_name(kind: TableFunctionKind, i: usize) -> Option<&'static str> {
    let last = |names: &[&'static str]| names.get(i).or(names.last()).copied();
    match kind {
        TableFunctionKind::PartitionAncestors => Some("relid"),
        TableFunctionKind::OptionsToTable => last(&["option_name", "option_value"]),
        TableFunctionKind::ExpandArray(_) => last(&["x", "n"]),
        TableFunctionKind::Jsonb(super::json_functions::JsonbSet::ObjectKeys) => None,
        TableFunctionKind::Jsonb(set) => set.columns().get(i).map(|(n, _)| *n),
        _ => None,
    }
}
