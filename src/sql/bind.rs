//! Binding: turning sqlparser expressions into typed [`Expr`]s against a scope of columns,
//! resolving untyped literals and parameters from context as PostgreSQL does.

mod json;
mod row;
mod scalar;
mod window;

pub use window::{Frame, FrameBound, FrameUnits};

use sqlparser::ast;

use super::expr::{CmpOp, Expr, Func, Subquery, SubqueryTest};
use crate::error::{Error, Result, SqlState};
use crate::types::{self, ArithOp, DataType, Value};

/// A column visible to an expression: its qualifier (table name or alias), name and type.
#[derive(Clone, Debug)]
pub struct ScopeColumn {
    pub qualifiers: Vec<String>,
    pub name: String,
    pub data_type: DataType,
    /// A column that USING merged into the other side's: reachable only qualified.
    pub hidden: bool,
}

#[derive(Clone, Debug, Default)]
pub struct Scope {
    pub columns: Vec<ScopeColumn>,
    /// The stored relations in scope, (qualifier, OID): what their system column
    /// `tableoid` reads.
    pub relations: Vec<(String, u32)>,
}

/// An aggregate call found while binding a grouped query's output.
#[derive(Clone, Debug)]
pub struct AggCall {
    pub func: AggFunc,
    /// None for count(*).
    pub arg: Option<Expr>,
    pub arg_type: DataType,
    /// string_agg's delimiter (evaluated per row, as in PostgreSQL).
    pub delimiter: Option<Expr>,
    /// `agg(x ORDER BY ...)`: the order its inputs are taken in (over input rows).
    pub order_by: Vec<super::plan::OrderKey>,
    /// `agg(DISTINCT x)`: each distinct input once.
    pub distinct: bool,
    /// `FILTER (WHERE cond)` (over input rows): only rows it holds for are taken.
    pub filter: Option<Expr>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AggFunc {
    Count,
    Sum,
    Min,
    Max,
    Avg,
    StringAgg,
    ArrayAgg,
    /// bool_and and every.
    BoolAnd,
    BoolOr,
    JsonbAgg,
    /// jsonb_object_agg(key, value): the value travels as the delimiter does.
    JsonbObjectAgg,
    JsonAgg,
    /// json_object_agg(key, value), as jsonb_object_agg's.
    JsonObjectAgg,
    /// var_samp (variance), var_pop, stddev_samp (stddev), stddev_pop.
    Variance {
        sample: bool,
        root: bool,
    },
    /// bit_and and bit_or of integers.
    BitAnd,
    BitOr,
    /// The ordered-set aggregates, `f(direct) WITHIN GROUP (ORDER BY x)`: their sorted
    /// input is `x`, their fraction (percentiles) travels as a delimiter does.
    PercentileCont,
    PercentileDisc,
    Mode,
}

impl AggFunc {
    /// An ordered-set aggregate, called `f(...) WITHIN GROUP (ORDER BY ...)`.
    pub fn is_ordered_set(self) -> bool {
        matches!(
            self,
            AggFunc::PercentileCont | AggFunc::PercentileDisc | AggFunc::Mode
        )
    }

    fn from_name(name: &str) -> Option<AggFunc> {
        Some(match name {
            "count" => AggFunc::Count,
            "sum" => AggFunc::Sum,
            "min" => AggFunc::Min,
            "max" => AggFunc::Max,
            "avg" => AggFunc::Avg,
            "string_agg" => AggFunc::StringAgg,
            "array_agg" => AggFunc::ArrayAgg,
            "bool_and" | "every" => AggFunc::BoolAnd,
            "percentile_cont" => AggFunc::PercentileCont,
            "percentile_disc" => AggFunc::PercentileDisc,
            "mode" => AggFunc::Mode,
            "bool_or" => AggFunc::BoolOr,
            "jsonb_agg" => AggFunc::JsonbAgg,
            "json_agg" => AggFunc::JsonAgg,
            "json_object_agg" => AggFunc::JsonObjectAgg,
            "jsonb_object_agg" => AggFunc::JsonbObjectAgg,
            "variance" | "var_samp" => AggFunc::Variance {
                sample: true,
                root: false,
            },
            "var_pop" => AggFunc::Variance {
                sample: false,
                root: false,
            },
            "stddev" | "stddev_samp" => AggFunc::Variance {
                sample: true,
                root: true,
            },
            "stddev_pop" => AggFunc::Variance {
                sample: false,
                root: true,
            },
            "bit_and" => AggFunc::BitAnd,
            "bit_or" => AggFunc::BitOr,
            _ => return None,
        })
    }

    pub fn result_type(self, arg: DataType) -> DataType {
        match (self, arg) {
            (AggFunc::Count, _) => DataType::Int8,
            (AggFunc::Sum, DataType::Int2 | DataType::Int4) => DataType::Int8,
            (AggFunc::Sum, DataType::Int8 | DataType::Numeric(_)) => DataType::Numeric(None),
            (AggFunc::Sum, t) => t.without_typmod(),
            (AggFunc::Avg, DataType::Float4 | DataType::Float8) => DataType::Float8,
            (AggFunc::Avg, DataType::Interval) => DataType::Interval,
            (AggFunc::Avg, _) => DataType::Numeric(None),
            (AggFunc::Variance { .. }, DataType::Float4 | DataType::Float8) => DataType::Float8,
            (AggFunc::Variance { .. }, _) => DataType::Numeric(None),
            (AggFunc::StringAgg, DataType::Bytea) => DataType::Bytea,
            (AggFunc::StringAgg, _) => DataType::Text,
            (AggFunc::ArrayAgg, t) => {
                types::array_of(t).unwrap_or(DataType::Array(&DataType::Text))
            }
            (AggFunc::BoolAnd | AggFunc::BoolOr, _) => DataType::Bool,
            (AggFunc::JsonbAgg | AggFunc::JsonbObjectAgg, _) => DataType::Jsonb,
            (AggFunc::JsonAgg | AggFunc::JsonObjectAgg, _) => DataType::Json,
            (AggFunc::PercentileCont, DataType::Interval) => DataType::Interval,
            (AggFunc::PercentileCont, _) => DataType::Float8,
            (_, t) => t.without_typmod(),
        }
    }
}

/// A window function call: computed over all the query's rows, then read by the select
/// list and ORDER BY as a column after the input row's.
#[derive(Clone, Debug)]
pub struct WindowCall {
    pub func: WindowFunc,
    /// An aggregate's or a value function's argument (None for count(*) and the
    /// ranking functions).
    pub arg: Option<Expr>,
    /// lag's and lead's offset and default, nth_value's n, ntile's count.
    pub extra: Vec<Expr>,
    pub arg_type: DataType,
    pub partition_by: Vec<Expr>,
    pub order_by: Vec<super::plan::OrderKey>,
    pub frame: Frame,
    /// An aggregate's `FILTER (WHERE cond)`: only the frame's rows it holds for are taken.
    pub filter: Option<Expr>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WindowFunc {
    RowNumber,
    Rank,
    DenseRank,
    PercentRank,
    CumeDist,
    Ntile,
    /// The argument `offset` rows before (lag) or after (lead) in the partition.
    Lag,
    Lead,
    /// The argument at the frame's first, last or n-th row.
    FirstValue,
    LastValue,
    NthValue,
    /// An aggregate over the frame.
    Aggregate(AggFunc),
}

/// State for binding the output of a grouped query: GROUP BY expressions become columns
/// 0..g of the aggregate row, aggregates become columns g.. .
pub struct Grouping {
    pub keys: Vec<(String, Expr, DataType)>,
    pub aggs: Vec<AggCall>,
}

/// 42883 for a call of `name` with arguments of these types.
fn no_such_function(name: &str, types: &[String]) -> Error {
    Error::new(
        SqlState::UNDEFINED_FUNCTION,
        format!("function {name}({}) does not exist", types.join(", ")),
    )
    .with_hint("No function matches the given name and argument types. You might need to add explicit type casts.")
}

/// make_interval's parameters, in order.
const MAKE_INTERVAL_PARAMETERS: [&str; 7] =
    ["years", "months", "weeks", "days", "hours", "mins", "secs"];

/// A query enclosing the one being bound, whose columns a subquery may refer to.
pub struct OuterScope {
    pub scope: Scope,
    /// Its GROUP BY expressions (as text) and types, when its output is being bound: a
    /// subquery there may use only those.
    pub group_keys: Option<Vec<(String, Expr, DataType)>>,
    /// What it passes to the subquery one level in: expressions over its row (or its own
    /// outer values). The inner query reads the i-th as `Expr::Outer(i)`.
    pub captured: Vec<Expr>,
}

/// The catalog a statement is planned against, and the tables hidden from it.
pub type CatalogView<'a> = (
    &'a crate::engine::Engine,
    &'a dyn Fn(crate::storage::TableId) -> bool,
);

pub struct Binder<'a> {
    /// Parameter types; `Unknown` until resolved by context.
    pub params: Vec<DataType>,
    /// The enclosing queries, outermost first, while binding a subquery.
    pub outers: Vec<OuterScope>,
    /// The catalog and the tables hidden from the statement, to plan subqueries with;
    /// None where subqueries are not allowed.
    pub catalog: Option<CatalogView<'a>>,
    /// Where subqueries are not allowed although a planner is at hand, the clause name.
    pub no_subqueries: Option<&'static str>,
    /// Every subquery bound since the caller last took them (their tables are read).
    pub subplans: Vec<std::sync::Arc<super::plan::SelectPlan>>,
    /// Grouping in effect while binding a grouped query's output.
    pub grouping: Option<Grouping>,
    /// Where aggregates are not allowed, the clause name for the error.
    pub no_aggregates: Option<&'static str>,
    /// Current expression nesting depth (a subquery's binder starts at its parent's).
    pub depth: usize,
    /// What the subquery planned last captured of the scope being bound.
    pub last_captured: Vec<Expr>,
    /// A select list item is being bound: a set-returning function may be in it.
    pub allow_set_returning: bool,
    /// Inside a select list item, where it may not: the construct, for the error.
    pub no_set_returning: Option<&'static str>,
    /// The query's WINDOW clause: the windows `OVER name` refers to.
    pub named_windows: Vec<ast::NamedWindowDefinition>,
    /// While a select list and ORDER BY are bound: the window calls met, and the width
    /// of the input row (the first window call's column).
    pub windows: Option<(Vec<WindowCall>, usize)>,
    /// The clause being bound where window calls may not be though aggregates may
    /// (HAVING), for the error's message.
    pub no_windows: Option<&'static str>,
    /// The WITH queries in scope, outermost first.
    /// The tables and views the statement names (a view depends on them).
    pub relations_read: Vec<String>,
    /// The privileges the statement needs, its subqueries' included (see
    /// `planner::Required`).
    pub privileges: Vec<super::planner::Required>,
    /// Inside a view's query: its tables are read with its owner's privileges, not
    /// checked against the user's.
    pub view_depth: usize,
    pub ctes: Vec<Cte>,
    /// References to a recursive WITH query's working table bound so far.
    pub work_table_refs: usize,
}

/// A planned WITH query: its plan, column names and types.
pub type PlannedCte = (
    std::sync::Arc<super::plan::SelectPlan>,
    Vec<String>,
    Vec<DataType>,
);

/// A WITH query: its name, its query and the names given to its columns.
#[derive(Clone)]
pub struct Cte {
    pub name: String,
    pub query: ast::Query,
    pub columns: Vec<String>,
    /// Its plan, column names and types, once a reference planned it: every reference
    /// scans this one plan.
    pub planned: Option<PlannedCte>,
    /// Of WITH RECURSIVE: its query may refer to itself.
    pub recursive: bool,
    /// While its recursive term is planned: what a reference to it reads instead.
    pub work_table: Option<WorkTableRef>,
}

/// The working table of a recursive WITH query: the rows its last iteration added.
#[derive(Clone, Debug)]
pub struct WorkTableRef {
    pub id: usize,
    pub names: Vec<String>,
    pub types: Vec<DataType>,
    /// How many enclosing queries the recursive term has: a reference from deeper (a
    /// subquery) is refused, as in PostgreSQL.
    pub outers: usize,
}

pub type Typed = (Expr, DataType);

pub fn ident_name(ident: &ast::Ident) -> String {
    if ident.quote_style.is_some() {
        ident.value.clone()
    } else {
        ident.value.to_lowercase()
    }
}

/// Whether a word is one of PostgreSQL's reserved words.
pub fn is_reserved(word: &str) -> bool {
    RESERVED.contains(&word)
}

/// PostgreSQL's reserved words that can never be a bare table name.
const RESERVED: &[&str] = &[
    "all",
    "and",
    "any",
    "as",
    "asc",
    "case",
    "check",
    "column",
    "constraint",
    "create",
    "default",
    "desc",
    "distinct",
    "do",
    "else",
    "end",
    "except",
    "false",
    "fetch",
    "for",
    "foreign",
    "from",
    "grant",
    "group",
    "having",
    "in",
    "intersect",
    "into",
    "limit",
    "not",
    "null",
    "offset",
    "on",
    "only",
    "or",
    "order",
    "primary",
    "references",
    "returning",
    "select",
    "table",
    "then",
    "to",
    "true",
    "union",
    "unique",
    "user",
    "using",
    "when",
    "where",
    "window",
    "with",
];

/// A table name, without a `public.` or `pg_catalog.` schema.
pub fn object_name(name: &ast::ObjectName) -> Result<String> {
    let mut parts = Vec::new();
    for p in &name.0 {
        match p {
            ast::ObjectNamePart::Identifier(i)
                if i.quote_style.is_none()
                    && RESERVED.contains(&i.value.to_lowercase().as_str()) =>
            {
                return Err(Error::syntax(format!(
                    "syntax error at or near \"{}\"",
                    i.value
                )));
            }
            ast::ObjectNamePart::Identifier(i) => parts.push(ident_name(i)),
            _ => return Err(Error::unsupported(format!("unsupported name: {name}"))),
        }
    }
    match parts.as_slice() {
        [t] => Ok(t.clone()),
        [schema, t] if schema == "public" => Ok(t.clone()),
        [schema, _] if schema == "pg_catalog" || schema == "information_schema" => Err(
            Error::unsupported(format!("system catalog \"{name}\" is not supported yet")),
        ),
        [schema, _] => Err(Error::new(
            SqlState::UNDEFINED_TABLE,
            format!("schema \"{schema}\" does not exist"),
        )),
        _ => Err(Error::unsupported(format!("unsupported name: {name}"))),
    }
}

/// Map a SQL type name to our type; 0A000 for types we lack. Also reports serial columns.
pub fn data_type(dt: &ast::DataType) -> Result<(DataType, bool)> {
    use ast::DataType as A;
    let len = |l: &Option<ast::CharacterLength>| -> Result<Option<u32>> {
        match l {
            None => Ok(None),
            Some(ast::CharacterLength::IntegerLength { length, .. }) => {
                if *length == 0 || *length > 10_485_760 {
                    return Err(Error::new(
                        SqlState::INVALID_PARAMETER_VALUE,
                        "length for type varchar must be between 1 and 10485760",
                    ));
                }
                Ok(Some(*length as u32))
            }
            Some(_) => Err(Error::unsupported("VARCHAR(MAX) is not supported")),
        }
    };
    let numeric = |info: &ast::ExactNumberInfo| -> Result<DataType> {
        match info {
            ast::ExactNumberInfo::None => Ok(DataType::Numeric(None)),
            ast::ExactNumberInfo::Precision(p) => numeric_typmod(*p as i64, 0),
            ast::ExactNumberInfo::PrecisionAndScale(p, s) => numeric_typmod(*p as i64, *s),
        }
    };
    Ok((
        match dt {
            A::SmallInt(_) | A::Int2(_) => DataType::Int2,
            A::Int(_) | A::Integer(_) | A::Int4(_) => DataType::Int4,
            A::BigInt(_) | A::Int8(_) => DataType::Int8,
            A::Real | A::Float4 => DataType::Float4,
            A::DoublePrecision | A::Float8 | A::Double(ast::ExactNumberInfo::None) => {
                DataType::Float8
            }
            A::Float(ast::ExactNumberInfo::Precision(p)) if *p <= 24 => DataType::Float4,
            A::Float(_) => DataType::Float8,
            A::Numeric(info) | A::Decimal(info) | A::Dec(info) => numeric(info)?,
            A::Bool | A::Boolean => DataType::Bool,
            A::Text | A::String(None) => DataType::Text,
            A::Varchar(l) | A::CharacterVarying(l) | A::CharVarying(l) => {
                DataType::Varchar(len(l)?)
            }
            A::Char(l) | A::Character(l) => DataType::Char(len(l)?.unwrap_or(1)),
            A::Bytea => DataType::Bytea,
            A::Uuid => DataType::Uuid,
            A::Interval {
                fields: None,
                precision: None,
            } => DataType::Interval,
            A::Regclass => DataType::RegClass,
            A::JSON => DataType::Json,
            A::JSONB => DataType::Jsonb,
            A::Array(
                ast::ArrayElemTypeDef::SquareBracket(inner, _)
                | ast::ArrayElemTypeDef::Qualified(inner, _)
                | ast::ArrayElemTypeDef::AngleBracket(inner)
                | ast::ArrayElemTypeDef::Parenthesis(inner),
            ) => {
                let (elem, serial) = data_type(inner)?;
                if serial || elem.element().is_some() {
                    return Err(Error::unsupported(
                        "multidimensional arrays are not supported yet",
                    ));
                }
                array_type(elem)?
            }
            A::Date => DataType::Date,
            A::Timestamp(_, ast::TimezoneInfo::WithTimeZone) => DataType::TimestampTz,
            A::Timestamp(_, ast::TimezoneInfo::Tz) => DataType::TimestampTz,
            A::Timestamp(_, _) => DataType::Timestamp,
            A::Custom(name, mods) => {
                let n = name.to_string().to_lowercase();
                let n = n.trim_start_matches("pg_catalog.");
                match (n, mods.len()) {
                    ("serial" | "serial4", 0) => return Ok((DataType::Int4, true)),
                    ("bigserial" | "serial8", 0) => return Ok((DataType::Int8, true)),
                    ("smallserial" | "serial2", 0) => return Ok((DataType::Int2, true)),
                    ("timestamptz", _) => DataType::TimestampTz,
                    ("bpchar", 0) => DataType::Char(1),
                    ("regclass", 0) => DataType::RegClass,
                    ("regtype", 0) => DataType::RegType,
                    ("regnamespace", 0) => DataType::RegNamespace,
                    ("regproc", 0) => DataType::RegProc,
                    ("oid", 0) => DataType::Oid,
                    ("name", 0) => DataType::Name,
                    ("\"char\"", 0) => DataType::InternalChar,
                    ("json", 0) => DataType::Json,
                    ("uuid", 0) => DataType::Uuid,
                    ("interval", 0) => DataType::Interval,
                    ("jsonb", 0) => DataType::Jsonb,
                    (n, 0) if n.starts_with('_') => {
                        let elem = super::pg_catalog::type_by_name(&n[1..]).ok_or_else(|| {
                            Error::new(
                                SqlState::UNDEFINED_OBJECT,
                                format!("type \"{n}\" does not exist"),
                            )
                        })?;
                        array_type(elem)?
                    }
                    ("int2", 0) => DataType::Int2,
                    ("int4", 0) => DataType::Int4,
                    ("int8", 0) => DataType::Int8,
                    ("float4", 0) => DataType::Float4,
                    ("float8", 0) => DataType::Float8,
                    ("bool", 0) => DataType::Bool,
                    ("text", 0) => DataType::Text,
                    ("varchar", 0) => DataType::Varchar(None),
                    _ => {
                        return Err(Error::new(
                            SqlState::UNDEFINED_OBJECT,
                            format!("type \"{n}\" does not exist"),
                        ))
                    }
                }
            }
            other => {
                return Err(Error::unsupported(format!(
                    "type {other} is not supported yet"
                )))
            }
        },
        false,
    ))
}

fn numeric_typmod(p: i64, s: i64) -> Result<DataType> {
    if !(1..=1000).contains(&p) {
        return Err(Error::new(
            SqlState::INVALID_PARAMETER_VALUE,
            format!("NUMERIC precision {p} must be between 1 and 1000"),
        ));
    }
    if s < 0 || s > p {
        return Err(Error::new(
            SqlState::INVALID_PARAMETER_VALUE,
            format!("NUMERIC scale {s} must be between 0 and precision {p}"),
        ));
    }
    if p > 28 {
        return Err(Error::unsupported(format!(
            "NUMERIC precision {p} exceeds the supported maximum of 28"
        )));
    }
    Ok(DataType::Numeric(Some((p as u8, s as u8))))
}

pub(super) fn function_name(f: &ast::Function) -> String {
    let name = f.name.to_string().to_lowercase();
    let name = name.trim_start_matches("pg_catalog.");
    // The one function of information_schema there is.
    match name.strip_prefix("information_schema.") {
        Some("_pg_expandarray") => "_pg_expandarray".into(),
        _ => name.to_string(),
    }
}

/// Whether an expression contains an aggregate call (outside subqueries).
pub fn contains_aggregate(e: &ast::Expr) -> bool {
    use ast::Expr as E;
    match e {
        E::Function(f) => {
            // An aggregate over a window is a window function, not grouping.
            (AggFunc::from_name(&function_name(f)).is_some() && f.over.is_none())
                || match &f.over {
                    // A window over an aggregate's groups (`rank() OVER (ORDER BY count(*))`).
                    Some(ast::WindowType::WindowSpec(spec)) => {
                        spec.partition_by.iter().any(contains_aggregate)
                            || spec.order_by.iter().any(|o| contains_aggregate(&o.expr))
                    }
                    _ => false,
                }
                || match &f.args {
                    ast::FunctionArguments::List(l) => l.args.iter().any(|a| match a {
                        ast::FunctionArg::Unnamed(ast::FunctionArgExpr::Expr(e)) => {
                            contains_aggregate(e)
                        }
                        _ => false,
                    }),
                    _ => false,
                }
        }
        E::BinaryOp { left, right, .. } => contains_aggregate(left) || contains_aggregate(right),
        E::UnaryOp { expr, .. } | E::Nested(expr) | E::Cast { expr, .. } => {
            contains_aggregate(expr)
        }
        E::IsNull(e)
        | E::IsNotNull(e)
        | E::IsTrue(e)
        | E::IsFalse(e)
        | E::IsNotTrue(e)
        | E::IsNotFalse(e) => contains_aggregate(e),
        E::Between {
            expr, low, high, ..
        } => contains_aggregate(expr) || contains_aggregate(low) || contains_aggregate(high),
        E::InList { expr, list, .. } => {
            contains_aggregate(expr) || list.iter().any(contains_aggregate)
        }
        E::Case {
            operand,
            conditions,
            else_result,
            ..
        } => {
            operand.as_deref().is_some_and(contains_aggregate)
                || conditions
                    .iter()
                    .any(|c| contains_aggregate(&c.condition) || contains_aggregate(&c.result))
                || else_result.as_deref().is_some_and(contains_aggregate)
        }
        E::Like { expr, pattern, .. } | E::ILike { expr, pattern, .. } => {
            contains_aggregate(expr) || contains_aggregate(pattern)
        }
        _ => false,
    }
}

/// The type two operands are unified to for comparison or arithmetic.
/// The array type of `elem`, or 0A000.
fn array_type(elem: DataType) -> Result<DataType> {
    types::array_of(elem).ok_or_else(|| {
        Error::unsupported(format!(
            "arrays of type {} are not supported yet",
            elem.name()
        ))
    })
}

/// The type two numeric types meet in (as arithmetic on them yields).
fn numeric_common(a: DataType, b: DataType) -> DataType {
    arith_type(ArithOp::Add, a, b).unwrap_or(a)
}

fn cmp_op(op: &ast::BinaryOperator) -> Option<CmpOp> {
    use ast::BinaryOperator as B;
    Some(match op {
        B::Eq => CmpOp::Eq,
        B::NotEq => CmpOp::NotEq,
        B::Lt => CmpOp::Lt,
        B::LtEq => CmpOp::LtEq,
        B::Gt => CmpOp::Gt,
        B::GtEq => CmpOp::GtEq,
        _ => return None,
    })
}

/// Whether PostgreSQL casts a value of type `from` to `to` in assignment: between
/// numbers, dates and times, integers and oids, json and jsonb, and to and from strings
/// (SteadyDB also reads a text value as any type, as its input function does).
pub(super) fn assignable(from: DataType, to: DataType) -> bool {
    use DataType::*;
    let datetime = |t: DataType| matches!(t, Date | Timestamp | TimestampTz);
    let oid_or_integer = |t: DataType| {
        t.is_integer() || matches!(t, Oid | RegClass | RegType | RegNamespace | RegProc)
    };
    match (from, to) {
        (f, t) if f.without_typmod() == t.without_typmod() => true,
        (f, t) if f.is_string() || t.is_string() => true,
        (Bool, _) | (_, Bool) => false,
        (f, t) if f.is_numeric() && t.is_numeric() => true,
        (f, t) if datetime(f) && datetime(t) => true,
        (f, t) if oid_or_integer(f) && oid_or_integer(t) => true,
        (Json, Jsonb) | (Jsonb, Json) => true,
        (Array(a), Array(b)) => assignable(*a, *b),
        _ => false,
    }
}

fn unify(a: DataType, b: DataType) -> DataType {
    match (a, b) {
        (DataType::Unknown, t) | (t, DataType::Unknown) => t,
        (a, _) => a,
    }
}

fn comparable(a: DataType, b: DataType) -> bool {
    let class = |t: DataType| match t {
        t if t.is_numeric() => 1,
        t if t.is_string() => 2,
        DataType::Date | DataType::Timestamp | DataType::TimestampTz => 3,
        DataType::Bool => 4,
        DataType::Bytea => 5,
        DataType::Oid
        | DataType::RegClass
        | DataType::RegType
        | DataType::RegNamespace
        | DataType::RegProc => 6,
        DataType::Array(_) => 7,
        DataType::Uuid => 8,
        DataType::Interval => 9,
        DataType::Jsonb => 10,
        _ => 0,
    };
    let oid_and_integer = |x: DataType, y: DataType| class(x) == 6 && y.is_integer();
    // json has no comparison operators.
    if a == DataType::Json || b == DataType::Json {
        return false;
    }
    a == DataType::Unknown
        || b == DataType::Unknown
        || class(a) == class(b)
        || oid_and_integer(a, b)
        || oid_and_integer(b, a)
}

/// PostgreSQL's result type for arithmetic on two types, or 42883.
pub fn arith_type(op: ArithOp, a: DataType, b: DataType) -> Result<DataType> {
    use DataType::*;
    let rank = |t: DataType| match t {
        Int2 => 1,
        Int4 => 2,
        Int8 => 3,
        Numeric(_) => 4,
        Float4 => 5,
        Float8 => 6,
        _ => 0,
    };
    let add_or_sub = matches!(op, ArithOp::Add | ArithOp::Sub);
    Ok(match (a, b) {
        (Date, t) | (t, Date) if t.is_integer() && add_or_sub => Date,
        // Interval arithmetic: a timestamp moved by an interval, the interval between two
        // timestamps, intervals added and scaled.
        (Timestamp | TimestampTz, Interval) if add_or_sub => a,
        (Interval, Timestamp | TimestampTz) if op == ArithOp::Add => b,
        (Date, Interval) if add_or_sub => Timestamp,
        (Interval, Date) if op == ArithOp::Add => Timestamp,
        (Timestamp, Timestamp) | (TimestampTz, TimestampTz) if op == ArithOp::Sub => Interval,
        (Interval, Interval) if add_or_sub => Interval,
        (Interval, t) if t.is_numeric() && matches!(op, ArithOp::Mul | ArithOp::Div) => Interval,
        (t, Interval) if t.is_numeric() && op == ArithOp::Mul => Interval,
        (Date, Date) if op == ArithOp::Sub => Int4,
        (Float4, Float4) => Float4,
        (Float4, x) | (x, Float4) if x.is_integer() || matches!(x, Float8 | Numeric(_)) => Float8,
        (x, y) if rank(x) > 0 && rank(y) > 0 => {
            if rank(x) >= rank(y) {
                x.without_typmod()
            } else {
                y.without_typmod()
            }
        }
        _ => {
            let sym = op.symbol();
            return Err(Error::new(SqlState::UNDEFINED_FUNCTION, format!("operator does not exist: {} {} {}", a.name(), sym, b.name()))
                .with_hint("No operator matches the given name and argument types. You might need to add explicit type casts."));
        }
    })
}

/// A non-integer numeric literal: numeric if our numeric (28 digits) holds it exactly
/// enough to round-trip as a double, else double precision (e.g. `1e-300`, `1e+308`).
pub fn numeric_literal(s: &str) -> Result<(Value, DataType)> {
    let as_float = s.parse::<f64>().ok().filter(|f| f.is_finite());
    match types::decode_text(&DataType::Numeric(None), s) {
        Ok(Value::Numeric(d)) => {
            let exact = match (as_float, d.to_string().parse::<f64>()) {
                (Some(f), Ok(g)) => f == g,
                _ => true,
            };
            match as_float {
                Some(f) if !exact => Ok((Value::Float8(f), DataType::Float8)),
                _ => Ok((Value::Numeric(d), DataType::Numeric(None))),
            }
        }
        Ok(other) => Ok((other, DataType::Numeric(None))),
        Err(e) => match as_float {
            Some(f) => Ok((Value::Float8(f), DataType::Float8)),
            None => Err(e),
        },
    }
}

/// The name under which a `*` expansion refers to column `i` of its FROM when no name
/// tells it from another (two `?column?` of a subquery): no SQL identifier holds a NUL.
pub fn positional_column_name(i: usize) -> String {
    format!("\u{0}{i}")
}

fn positional_column(name: &str) -> Option<usize> {
    name.strip_prefix('\u{0}')?.parse().ok()
}

impl<'a> Binder<'a> {
    pub fn new(param_types: Vec<DataType>) -> Binder<'a> {
        Binder {
            params: param_types,
            outers: Vec::new(),
            catalog: None,
            no_subqueries: None,
            subplans: Vec::new(),
            grouping: None,
            no_aggregates: None,
            depth: 0,
            last_captured: Vec::new(),
            allow_set_returning: false,
            no_set_returning: None,
            named_windows: Vec::new(),
            windows: None,
            no_windows: None,
            ctes: Vec::new(),
            relations_read: Vec::new(),
            privileges: Vec::new(),
            view_depth: 0,
            work_table_refs: 0,
        }
    }

    /// Resolve an untyped expression to `to`: literals are parsed now, parameters take the
    /// type. Typed expressions are returned unchanged.
    pub fn coerce(&mut self, (expr, ty): Typed, to: DataType) -> Result<Expr> {
        if ty != DataType::Unknown || to == DataType::Unknown {
            return Ok(expr);
        }
        if matches!(
            to,
            DataType::RegClass | DataType::RegType | DataType::RegNamespace | DataType::RegProc
        ) {
            return Ok(self.cast((expr, ty), to)?.0);
        }
        match expr {
            Expr::Const(Value::Text(s)) => Ok(Expr::Const(types::decode_text(&to, &s)?)),
            Expr::Const(v) => Ok(Expr::Const(v)),
            Expr::Param(i) => {
                self.params[i] = to.without_typmod();
                Ok(Expr::Param(i))
            }
            other => Ok(Expr::Cast(Box::new(other), to)),
        }
    }

    /// A value for column `name` of type `to` (INSERT, UPDATE): an untyped one is read as
    /// the column's type; a typed one needs an assignment cast (42804 where PostgreSQL
    /// has none), applied when the row is written.
    pub fn assign(&mut self, t: Typed, name: &str, to: DataType) -> Result<Expr> {
        if !assignable(t.1, to) {
            return Err(Error::new(
                SqlState::DATATYPE_MISMATCH,
                format!(
                    "column \"{name}\" is of type {} but expression is of type {}",
                    to.name(),
                    t.1.name()
                ),
            )
            .with_hint("You will need to rewrite or cast the expression."));
        }
        self.coerce(t, to)
    }

    /// `bind` run where a set-returning function may not be (`construct` names it).
    fn without_set_returning<T>(
        &mut self,
        construct: &'static str,
        bind: impl FnOnce(&mut Self) -> Result<T>,
    ) -> Result<T> {
        let outer = self.no_set_returning.replace(construct);
        let out = bind(self);
        self.no_set_returning = outer;
        out
    }

    /// Any value as text: an untyped literal read as text, `char(n)` without its padding,
    /// other types cast (through their output functions).
    fn as_text(&mut self, t: Typed) -> Result<Expr> {
        Ok(match t.1 {
            DataType::Unknown => self.coerce(t, DataType::Text)?,
            DataType::Char(_) => Expr::Func(Func::BpcharToText, vec![t.0]),
            ty if ty.is_string() => t.0,
            _ => Expr::Cast(Box::new(t.0), DataType::Text),
        })
    }

    /// Bind and resolve to text if still untyped; char(n) values become text (blank-trimmed).
    fn bind_text(&mut self, e: &ast::Expr, scope: &Scope) -> Result<Expr> {
        let t = self.bind(e, scope)?;
        self.text_of_typed(t)
    }

    /// A bound expression as text for a string function: unknown literals become text,
    /// `char(n)` loses its padding.
    fn text_of_typed(&mut self, t: Typed) -> Result<Expr> {
        Ok(match t.1 {
            DataType::Unknown => self.coerce(t, DataType::Text)?,
            DataType::Char(_) => Expr::Func(Func::BpcharToText, vec![t.0]),
            _ => t.0,
        })
    }

    pub fn bind_bool(&mut self, e: &ast::Expr, scope: &Scope, clause: &str) -> Result<Expr> {
        let t = self.bind(e, scope)?;
        match t.1 {
            DataType::Bool => Ok(t.0),
            DataType::Unknown => self.coerce(t, DataType::Bool),
            other => Err(Error::new(
                SqlState::DATATYPE_MISMATCH,
                format!(
                    "argument of {clause} must be type boolean, not type {}",
                    other.name()
                ),
            )),
        }
    }

    /// Plan a subquery of the expression being bound, with the scope being bound (pushed
    /// by the caller) as its outer scope.
    fn plan_subquery(
        &mut self,
        q: &ast::Query,
        scope: &Scope,
    ) -> Result<(std::sync::Arc<super::plan::SelectPlan>, Vec<DataType>)> {
        let Some((engine, hidden)) = self.catalog else {
            return Err(Error::unsupported("cannot use subquery here"));
        };
        if let Some(clause) = self.no_subqueries {
            return Err(Error::unsupported(format!(
                "cannot use subquery in {clause}"
            )));
        }
        let group_keys = self.grouping.as_ref().map(|g| g.keys.clone());
        self.outers.push(OuterScope {
            scope: scope.clone(),
            group_keys,
            captured: Vec::new(),
        });
        let planned = super::planner::plan_subquery(engine, hidden, self, q);
        self.last_captured = self.outers.pop().map(|o| o.captured).unwrap_or_default();
        let (plan, types) = planned?;
        let plan = std::sync::Arc::new(plan);
        self.subplans.push(plan.clone());
        Ok((plan, types))
    }

    /// The expression for a planned subquery: what it captured of the scope being bound
    /// (the outer scope the planner pushed and popped) becomes its arguments.
    fn subquery(
        &mut self,
        plan: std::sync::Arc<super::plan::SelectPlan>,
        test: SubqueryTest,
    ) -> Expr {
        let args = std::mem::take(&mut self.last_captured);
        Expr::Subquery(std::sync::Arc::new(Subquery { plan, args, test }))
    }

    fn bind_quantified(
        &mut self,
        left: &ast::Expr,
        op: CmpOp,
        query: &ast::Query,
        all: bool,
        scope: &Scope,
    ) -> Result<Expr> {
        let l = self.bind(left, scope)?;
        let (plan, types) = self.plan_subquery(query, scope)?;
        let captured = std::mem::take(&mut self.last_captured);
        if types.len() != 1 {
            return Err(Error::syntax("subquery has too many columns"));
        }
        let rt = types[0];
        if !comparable(l.1, rt) {
            return Err(Error::new(
                SqlState::UNDEFINED_FUNCTION,
                format!("operator does not exist: {} {} {}", l.1.name(), op.symbol(), rt.name()),
            )
            .with_hint("No operator matches the given name and argument types. You might need to add explicit type casts."));
        }
        let left = self.coerce(
            l,
            if rt == DataType::Unknown {
                DataType::Text
            } else {
                rt
            },
        )?;
        self.last_captured = captured;
        Ok(self.subquery(
            plan,
            SubqueryTest::Quantified {
                left: Box::new(left),
                op,
                all,
            },
        ))
    }

    /// A column of the scope, or else of an enclosing query's (outermost last): that one
    /// is captured through every query between, and read here as an outer value.
    fn lookup_or_outer(
        &mut self,
        qualifier: Option<&str>,
        name: &str,
        scope: &Scope,
        e: &ast::Expr,
    ) -> Result<Typed> {
        let err = match self.lookup(qualifier, name, scope) {
            Ok(t) => return Ok(t),
            Err(err) => err,
        };
        if !matches!(
            err.code,
            SqlState::UNDEFINED_COLUMN | SqlState::UNDEFINED_TABLE
        ) {
            return Err(err);
        }
        let text = e.to_string();
        for level in (0..self.outers.len()).rev() {
            let outer = &self.outers[level];
            if let Some(keys) = &outer.group_keys {
                if let Some(k) = keys.iter().position(|(t, _, _)| *t == text) {
                    let ty = keys[k].2;
                    return Ok((self.capture(level, Expr::Column(k)), ty));
                }
            }
            let probe = Binder::new(Vec::new());
            match probe.lookup(qualifier, name, &outer.scope) {
                Ok((Expr::Column(i), ty)) => {
                    if let Some(keys) = &outer.group_keys {
                        if let Some(k) = keys
                            .iter()
                            .position(|(_, e, _)| matches!(e, Expr::Column(c) if *c == i))
                        {
                            return Ok((self.capture(level, Expr::Column(k)), ty));
                        }
                        let full = match qualifier {
                            Some(q) => format!("{q}.{name}"),
                            None => name.to_string(),
                        };
                        return Err(Error::new(
                            SqlState::GROUPING_ERROR,
                            format!("subquery uses ungrouped column \"{full}\" from outer query"),
                        ));
                    }
                    return Ok((self.capture(level, Expr::Column(i)), ty));
                }
                Ok(_) => return Err(Error::internal("outer column lookup")),
                Err(e)
                    if matches!(
                        e.code,
                        SqlState::UNDEFINED_COLUMN | SqlState::UNDEFINED_TABLE
                    ) => {}
                Err(e) => return Err(e),
            }
        }
        // No column of that name at any level: a FROM item's whole row, if one has
        // that name (in this query, then outward).
        if qualifier.is_none() {
            if self.grouping.is_none() {
                if let Some((shape, columns)) = Self::whole_row_columns(name, scope)? {
                    let columns = columns.into_iter().map(Expr::Column).collect();
                    return Ok(Self::whole_row_value(shape, columns));
                }
            }
            for level in (0..self.outers.len()).rev() {
                if self.outers[level].group_keys.is_some() {
                    continue;
                }
                let found = Self::whole_row_columns(name, &self.outers[level].scope)?;
                if let Some((shape, columns)) = found {
                    let columns = columns
                        .into_iter()
                        .map(|c| self.capture(level, Expr::Column(c)))
                        .collect();
                    return Ok(Self::whole_row_value(shape, columns));
                }
            }
        }
        Err(err)
    }

    /// `expr`, over the row of enclosing query `level`, as read by the query being bound.
    fn capture(&mut self, level: usize, expr: Expr) -> Expr {
        let mut e = expr;
        for outer in &mut self.outers[level..] {
            let same = |c: &Expr| match (c, &e) {
                (Expr::Column(a), Expr::Column(b)) | (Expr::Outer(a), Expr::Outer(b)) => a == b,
                _ => false,
            };
            let i = match outer.captured.iter().position(same) {
                Some(i) => i,
                None => {
                    outer.captured.push(e);
                    outer.captured.len() - 1
                }
            };
            e = Expr::Outer(i);
        }
        e
    }

    fn lookup(&self, qualifier: Option<&str>, name: &str, scope: &Scope) -> Result<Typed> {
        if let Some(i) = positional_column(name).filter(|&i| i < scope.columns.len()) {
            return Ok((Expr::Column(i), scope.columns[i].data_type));
        }
        let mut found = None;
        for (i, c) in scope.columns.iter().enumerate() {
            let reachable = match qualifier {
                None => !c.hidden,
                Some(q) => c.qualifiers.iter().any(|x| x == q),
            };
            if c.name == name && reachable {
                if found.is_some() {
                    return Err(Error::new(
                        SqlState::AMBIGUOUS_COLUMN,
                        format!("column reference \"{name}\" is ambiguous"),
                    ));
                }
                found = Some((Expr::Column(i), c.data_type));
            }
        }
        if let Some(f) = found {
            if let Some(g) = &self.grouping {
                // A GROUP BY column named another way (qualified or not).
                if let Expr::Column(i) = f.0 {
                    if let Some(k) = g
                        .keys
                        .iter()
                        .position(|(_, e, _)| matches!(e, Expr::Column(c) if *c == i))
                    {
                        return Ok((Expr::Column(k), f.1));
                    }
                }
                // Named by its relation, as PostgreSQL names it.
                let relation = match (qualifier, &f.0) {
                    (Some(q), _) => Some(q.to_string()),
                    (None, Expr::Column(i)) => scope
                        .columns
                        .get(*i)
                        .and_then(|c| c.qualifiers.first().cloned()),
                    _ => None,
                };
                let full = match relation {
                    Some(q) if !q.is_empty() => format!("{q}.{name}"),
                    _ => name.to_string(),
                };
                return Err(Error::new(
                    SqlState::GROUPING_ERROR,
                    format!("column \"{full}\" must appear in the GROUP BY clause or be used in an aggregate function"),
                ));
            }
            return Ok(f);
        }
        if name == "tableoid" {
            let mut matching = scope
                .relations
                .iter()
                .filter(|(q, _)| qualifier.is_none_or(|want| want == q));
            if let (Some((_, oid)), None) = (matching.next(), matching.next()) {
                return Ok((Expr::Const(Value::Oid(*oid)), DataType::Oid));
            }
            if qualifier.is_none() && scope.relations.len() > 1 {
                return Err(Error::new(
                    SqlState::AMBIGUOUS_COLUMN,
                    "column reference \"tableoid\" is ambiguous",
                ));
            }
        }
        if let Some(q) = qualifier {
            if !scope
                .columns
                .iter()
                .any(|c| c.qualifiers.iter().any(|x| x == q))
            {
                return Err(Error::new(
                    SqlState::UNDEFINED_TABLE,
                    format!("missing FROM-clause entry for table \"{q}\""),
                ));
            }
            return Err(Error::new(
                SqlState::UNDEFINED_COLUMN,
                format!("column {q}.{name} does not exist"),
            ));
        }
        Err(Error::new(
            SqlState::UNDEFINED_COLUMN,
            format!("column \"{name}\" does not exist"),
        ))
    }

    pub fn bind(&mut self, e: &ast::Expr, scope: &Scope) -> Result<Typed> {
        if self.depth >= crate::constants::MAX_EXPRESSION_DEPTH {
            return Err(Error::stack_depth());
        }
        self.depth += 1;
        let result = self.bind_inner(e, scope);
        self.depth -= 1;
        result
    }

    fn bind_inner(&mut self, e: &ast::Expr, scope: &Scope) -> Result<Typed> {
        use ast::Expr as E;
        if let Some(g) = &self.grouping {
            let text = e.to_string();
            if let Some(k) = g.keys.iter().position(|(t, _, _)| *t == text) {
                return Ok((Expr::Column(k), g.keys[k].2));
            }
        }
        match e {
            E::Identifier(id) => {
                let name = ident_name(id);
                if id.quote_style.is_none() {
                    match name.as_str() {
                        "current_user" | "user" | "current_role" => {
                            return Ok((Expr::Func(Func::CurrentUser, vec![]), DataType::Text))
                        }
                        "session_user" => {
                            return Ok((Expr::Func(Func::SessionUser, vec![]), DataType::Text))
                        }
                        "current_schema" if self.lookup(None, &name, scope).is_err() => {
                            return Ok((Expr::Func(Func::CurrentSchema, vec![]), DataType::Text))
                        }
                        "current_timestamp" => {
                            return Ok((Expr::Func(Func::Now, vec![]), DataType::TimestampTz))
                        }
                        "localtimestamp" => {
                            return Ok((
                                Expr::Cast(
                                    Box::new(Expr::Func(Func::Now, vec![])),
                                    DataType::Timestamp,
                                ),
                                DataType::Timestamp,
                            ))
                        }
                        "current_date" => {
                            return Ok((
                                Expr::Cast(Box::new(Expr::Func(Func::Now, vec![])), DataType::Date),
                                DataType::Date,
                            ))
                        }
                        _ => {}
                    }
                }
                self.lookup_or_outer(None, &name, scope, e)
            }
            E::CompoundIdentifier(ids) => match ids.as_slice() {
                [t, c] => self.lookup_or_outer(Some(&ident_name(t)), &ident_name(c), scope, e),
                [s, t, c]
                    if matches!(
                        ident_name(s).as_str(),
                        "public" | "pg_catalog" | "information_schema"
                    ) =>
                {
                    self.lookup_or_outer(Some(&ident_name(t)), &ident_name(c), scope, e)
                }
                _ => Err(Error::unsupported(format!(
                    "unsupported column reference {e}"
                ))),
            },
            E::Value(v) => self.bind_value(&v.value),
            E::Nested(inner) => self.bind(inner, scope),
            E::Tuple(items) => self.bind_row(&items.iter().collect::<Vec<_>>(), scope),
            E::UnaryOp { op, expr } => match op {
                ast::UnaryOperator::Minus => {
                    let t = self.bind(expr, scope)?;
                    match t {
                        (Expr::Const(v), ty) if !v.is_null() && ty != DataType::Unknown => {
                            Ok((Expr::Const(types::negate(&v)?), ty))
                        }
                        (ex, DataType::Unknown) => {
                            let ex =
                                self.coerce((ex, DataType::Unknown), DataType::Numeric(None))?;
                            Ok((Expr::Neg(Box::new(ex)), DataType::Numeric(None)))
                        }
                        (ex, ty) if ty.is_numeric() || ty == DataType::Interval => {
                            Ok((Expr::Neg(Box::new(ex)), ty))
                        }
                        (_, ty) => Err(Error::new(
                            SqlState::UNDEFINED_FUNCTION,
                            format!("operator does not exist: - {}", ty.name()),
                        )),
                    }
                }
                ast::UnaryOperator::Plus => self.bind(expr, scope),
                ast::UnaryOperator::Not => {
                    let inner = self.bind_bool(expr, scope, "NOT")?;
                    Ok((Expr::Not(Box::new(inner)), DataType::Bool))
                }
                other => Err(Error::unsupported(format!(
                    "operator {other} is not supported"
                ))),
            },
            E::BinaryOp { left, op, right } => self.bind_binary(left, op, right, scope),
            E::IsNull(x) | E::IsNotNull(x) => {
                let t = self.bind(x, scope)?;
                Ok((
                    Expr::IsNull(Box::new(t.0), matches!(e, E::IsNotNull(_))),
                    DataType::Bool,
                ))
            }
            E::IsTrue(x) | E::IsNotTrue(x) | E::IsFalse(x) | E::IsNotFalse(x) => {
                let inner = self.bind_bool(x, scope, "IS TRUE")?;
                let want = matches!(e, E::IsTrue(_) | E::IsNotTrue(_));
                let negated = matches!(e, E::IsNotTrue(_) | E::IsNotFalse(_));
                Ok((Expr::IsBool(Box::new(inner), want, negated), DataType::Bool))
            }
            E::IsDistinctFrom(a, b) | E::IsNotDistinctFrom(a, b) => {
                let (l, r) = self.bind_pair(a, b, scope)?;
                Ok((
                    Expr::IsDistinct(
                        Box::new(l),
                        Box::new(r),
                        matches!(e, E::IsNotDistinctFrom(..)),
                    ),
                    DataType::Bool,
                ))
            }
            E::Between {
                expr,
                negated,
                low,
                high,
            } => {
                let x = self.bind(expr, scope)?;
                let lo = self.bind(low, scope)?;
                let hi = self.bind(high, scope)?;
                let ty = unify(unify(x.1, lo.1), hi.1);
                let ty = if ty == DataType::Unknown {
                    DataType::Text
                } else {
                    ty
                };
                for t in [x.1, lo.1, hi.1] {
                    if !comparable(t, ty) {
                        return Err(Error::new(
                            SqlState::UNDEFINED_FUNCTION,
                            format!("operator does not exist: {} >= {}", ty.name(), t.name()),
                        ));
                    }
                }
                let x = self.coerce(x, ty)?;
                let lo = self.coerce(lo, ty)?;
                let hi = self.coerce(hi, ty)?;
                let both = Expr::And(
                    Box::new(Expr::Cmp(CmpOp::GtEq, Box::new(x.clone()), Box::new(lo))),
                    Box::new(Expr::Cmp(CmpOp::LtEq, Box::new(x), Box::new(hi))),
                );
                Ok((
                    if *negated {
                        Expr::Not(Box::new(both))
                    } else {
                        both
                    },
                    DataType::Bool,
                ))
            }
            E::InList {
                expr,
                list,
                negated,
            } => {
                if let Some(left) = row::row_items(expr) {
                    return self.row_in_list(&left, list, *negated, scope);
                }
                let x = self.bind(expr, scope)?;
                let items = list
                    .iter()
                    .map(|i| self.bind(i, scope))
                    .collect::<Result<Vec<_>>>()?;
                let mut ty = x.1;
                for i in &items {
                    ty = unify(ty, i.1);
                }
                let ty = if ty == DataType::Unknown {
                    DataType::Text
                } else {
                    ty
                };
                let x = self.coerce(x, ty)?;
                let mut bound = Vec::new();
                for i in items {
                    if !comparable(i.1, ty) {
                        return Err(Error::new(
                            SqlState::UNDEFINED_FUNCTION,
                            format!("operator does not exist: {} = {}", ty.name(), i.1.name()),
                        ));
                    }
                    bound.push(self.coerce(i, ty)?);
                }
                Ok((
                    Expr::InList {
                        expr: Box::new(x),
                        list: bound,
                        negated: *negated,
                    },
                    DataType::Bool,
                ))
            }
            E::Like {
                negated,
                expr,
                pattern,
                escape_char,
                any: false,
            }
            | E::ILike {
                negated,
                expr,
                pattern,
                escape_char,
                any: false,
            } => {
                if escape_char.is_some() {
                    return Err(Error::unsupported("LIKE ... ESCAPE is not supported yet"));
                }
                let x = self.bind_text(expr, scope)?;
                let p = self.bind_text(pattern, scope)?;
                Ok((
                    Expr::Like {
                        expr: Box::new(x),
                        pattern: Box::new(p),
                        negated: *negated,
                        case_insensitive: matches!(e, E::ILike { .. }),
                    },
                    DataType::Bool,
                ))
            }
            E::Cast {
                expr,
                data_type: dt,
                kind,
                ..
            } => {
                if matches!(kind, ast::CastKind::TryCast | ast::CastKind::SafeCast) {
                    return Err(Error::unsupported("TRY_CAST is not supported"));
                }
                let (to, serial) = data_type(dt)?;
                if serial {
                    return Err(Error::new(
                        SqlState::UNDEFINED_OBJECT,
                        "type \"serial\" does not exist",
                    ));
                }
                if let (E::Array(a), Some(elem)) = (expr.as_ref(), to.element()) {
                    return self.bind_array(&a.elem, Some(elem), scope);
                }
                let t = self.bind(expr, scope)?;
                self.cast(t, to)
            }
            E::TypedString(ts) => {
                let (to, _) = data_type(&ts.data_type)?;
                let t = self.bind_value(&ts.value.value)?;
                self.cast(t, to)
            }
            E::Case {
                operand,
                conditions,
                else_result,
                ..
            } => self.without_set_returning("CASE", |b| {
                b.bind_case(
                    operand.as_deref(),
                    conditions,
                    else_result.as_deref(),
                    scope,
                )
            }),
            E::Function(f) => self.bind_function(f, scope),
            // `interval '1 day'`, or with a qualifier (`interval '1' day`, `interval '1-2'
            // year to month`), which says how a bare number counts and which parts stay.
            E::Interval(iv) => {
                let qualified = iv.leading_field.is_some()
                    || iv.last_field.is_some()
                    || iv.leading_precision.is_some()
                    || iv.fractional_seconds_precision.is_some();
                if !qualified {
                    let t = self.bind(&iv.value, scope)?;
                    return self.cast(t, DataType::Interval);
                }
                qualified_interval(iv)
                    .map(|v| (Expr::Const(Value::Interval(v)), DataType::Interval))
            }
            E::Extract { field, expr, .. } => {
                let unit = match field {
                    ast::DateTimeField::Custom(i) => i.value.clone(),
                    other => other.to_string(),
                };
                let t = self.bind(expr, scope)?;
                let arg = self.datetime_arg(t, "pg_catalog.extract")?;
                Ok((
                    Expr::Func(
                        Func::Extract,
                        vec![Expr::Const(Value::Text(unit.to_lowercase())), arg],
                    ),
                    DataType::Numeric(None),
                ))
            }
            E::Trim {
                expr,
                trim_where,
                trim_what,
                trim_characters: None,
            } => self.bind_trim(expr, trim_where.as_ref(), trim_what.as_deref(), scope),
            E::Position { expr, r#in } => self.bind_position(expr, r#in, scope),
            E::Overlay {
                expr,
                overlay_what,
                overlay_from,
                overlay_for,
            } => self.bind_overlay(
                [expr, overlay_what, overlay_from],
                overlay_for.as_deref(),
                scope,
            ),
            E::AtTimeZone {
                timestamp,
                time_zone,
            } => self.bind_at_time_zone(timestamp, time_zone, scope),
            E::Ceil { expr, field } => self.bind_ceil_floor(expr, field, true, scope),
            E::Floor { expr, field } => self.bind_ceil_floor(expr, field, false, scope),
            E::Substring {
                expr,
                substring_from,
                substring_for,
                ..
            } => {
                let t = self.bind(expr, scope)?;
                let s = self.text_of_typed(t)?;
                let from = match substring_from {
                    Some(f) => self.bind_as(f, scope, DataType::Int4)?,
                    None => Expr::Const(Value::Int4(1)),
                };
                let mut args = vec![s, from];
                if let Some(n) = substring_for {
                    args.push(self.bind_as(n, scope, DataType::Int4)?);
                }
                Ok((Expr::Func(Func::Substring, args), DataType::Text))
            }
            E::Array(a) => self.bind_array(&a.elem, None, scope),
            E::CompoundFieldAccess { root, access_chain }
                if matches!(
                    access_chain.as_slice(),
                    [ast::AccessExpr::Dot(E::Identifier(_))]
                ) =>
            {
                let [ast::AccessExpr::Dot(E::Identifier(field))] = access_chain.as_slice() else {
                    return Err(Error::internal("a field access without its field"));
                };
                self.bind_field(root, &ident_name(field), scope)
            }
            E::CompoundFieldAccess { root, access_chain } => {
                // `t.column[i]` parses as `t` with the access chain `.column`, `[i]`.
                let mut names = match root.as_ref() {
                    E::Identifier(i) => vec![i.clone()],
                    E::CompoundIdentifier(parts) => parts.clone(),
                    _ => Vec::new(),
                };
                let mut chain = access_chain.as_slice();
                while let [ast::AccessExpr::Dot(E::Identifier(i)), rest @ ..] = chain {
                    if names.is_empty() {
                        break;
                    }
                    names.push(i.clone());
                    chain = rest;
                }
                let [ast::AccessExpr::Subscript(ast::Subscript::Index { index })] = chain else {
                    return Err(Error::unsupported(format!(
                        "expression is not supported yet: {e}"
                    )));
                };
                let folded;
                let root: &ast::Expr = if chain.len() < access_chain.len() {
                    folded = E::CompoundIdentifier(names);
                    &folded
                } else {
                    root
                };
                let arr = self.bind(root, scope)?;
                if arr.1 == DataType::Name {
                    // A name is an array of 64 "char"s, from 0.
                    let i = self.bind_as(index, scope, DataType::Int4)?;
                    return Ok((
                        Expr::Func(Func::NameChar, vec![arr.0, i]),
                        DataType::InternalChar,
                    ));
                }
                let Some(elem) = arr.1.element() else {
                    return Err(Error::new(
                        SqlState::DATATYPE_MISMATCH,
                        format!(
                            "cannot subscript type {} because it does not support subscripting",
                            arr.1.name()
                        ),
                    ));
                };
                let mut i = self.bind_as(index, scope, DataType::Int4)?;
                if arr.1.is_vector() {
                    // Subscripted from 0.
                    i = Expr::Arith(
                        ArithOp::Add,
                        Box::new(i),
                        Box::new(Expr::Const(Value::Int4(1))),
                    );
                }
                Ok((Expr::Func(Func::ArrayElement, vec![arr.0, i]), elem))
            }
            E::Collate { expr, collation } => {
                // Text compares byte by byte here: the "C" collation, which is also the
                // database's default. Those are the collations there are.
                let c = match collation.0.last() {
                    Some(ast::ObjectNamePart::Identifier(i)) => ident_name(i),
                    _ => collation.to_string(),
                };
                let c = c.as_str();
                if !matches!(c, "default" | "C" | "POSIX" | "ucs_basic") {
                    return Err(Error::new(
                        SqlState::UNDEFINED_OBJECT,
                        format!("collation \"{c}\" for encoding \"UTF8\" does not exist"),
                    ));
                }
                let t = self.bind(expr, scope)?;
                if !t.1.is_string() {
                    return Err(Error::new(
                        SqlState::DATATYPE_MISMATCH,
                        format!("collations are not supported by type {}", t.1.name()),
                    ));
                }
                Ok(t)
            }
            E::Subquery(q) => {
                let (plan, types) = self.plan_subquery(q, scope)?;
                if types.len() != 1 {
                    return Err(Error::syntax("subquery must return only one column"));
                }
                let ty = types[0];
                Ok((self.subquery(plan, SubqueryTest::Scalar), ty))
            }
            E::Exists { subquery, negated } => {
                let (plan, _) = self.plan_subquery(subquery, scope)?;
                let e = self.subquery(plan, SubqueryTest::Exists);
                Ok((
                    if *negated { Expr::Not(Box::new(e)) } else { e },
                    DataType::Bool,
                ))
            }
            E::InSubquery {
                expr,
                subquery,
                negated,
            } => {
                let e = self.bind_quantified(expr, CmpOp::Eq, subquery, false, scope)?;
                Ok((
                    if *negated { Expr::Not(Box::new(e)) } else { e },
                    DataType::Bool,
                ))
            }
            E::AnyOp {
                left,
                compare_op,
                right,
                ..
            }
            | E::AllOp {
                left,
                compare_op,
                right,
            } => {
                let all = matches!(e, E::AllOp { .. });
                let op = cmp_op(compare_op).ok_or_else(|| {
                    Error::unsupported(format!(
                        "operator {compare_op} with ANY/ALL is not supported"
                    ))
                })?;
                let query = match right.as_ref() {
                    E::Subquery(q) => q,
                    E::Nested(inner) => match inner.as_ref() {
                        E::Subquery(q) => q,
                        _ => return self.bind_any_array(left, op, right, all, scope),
                    },
                    _ => return self.bind_any_array(left, op, right, all, scope),
                };
                Ok((
                    self.bind_quantified(left, op, query, all, scope)?,
                    DataType::Bool,
                ))
            }
            other => Err(Error::unsupported(format!(
                "expression is not supported yet: {other}"
            ))),
        }
    }

    fn cast(&mut self, t: Typed, to: DataType) -> Result<Typed> {
        // regclass and regtype are looked up in the catalog when the value is made.
        // regclass, regtype and regnamespace are looked up in the catalog when the value
        // is made.
        if matches!(
            to,
            DataType::RegClass | DataType::RegType | DataType::RegNamespace | DataType::RegProc
        ) && t.1 != to
        {
            let (from_text, from_oid) = match to {
                DataType::RegClass => (Func::RegClassIn, Func::RegClassOfOid),
                DataType::RegType => (Func::RegTypeIn, Func::RegTypeOfOid),
                DataType::RegProc => (Func::RegProcIn, Func::RegProcOfOid),
                _ => (Func::RegNamespaceIn, Func::RegNamespaceOfOid),
            };
            if t.1.is_string() {
                let arg = self.coerce(t, DataType::Text)?;
                return Ok((Expr::Func(from_text, vec![arg]), to));
            }
            if !(t.1.is_integer() || comparable(t.1, DataType::Oid)) {
                return Err(Error::new(
                    SqlState::CANNOT_COERCE,
                    format!("cannot cast type {} to {}", t.1.name(), to.name()),
                ));
            }
            let arg = Expr::Cast(Box::new(t.0), DataType::Oid);
            return Ok((Expr::Func(from_oid, vec![arg]), to));
        }
        Ok(match t {
            (Expr::Const(v), _) => (Expr::Const(types::cast(v, &to)?), to),
            (Expr::Param(i), DataType::Unknown) => {
                self.params[i] = to.without_typmod();
                (Expr::Cast(Box::new(Expr::Param(i)), to), to)
            }
            (ex, DataType::Char(_)) if to.is_string() && !matches!(to, DataType::Char(_)) => (
                Expr::Cast(Box::new(Expr::Func(Func::BpcharToText, vec![ex])), to),
                to,
            ),
            (ex, _) => (Expr::Cast(Box::new(ex), to), to),
        })
    }

    fn bind_value(&mut self, v: &ast::Value) -> Result<Typed> {
        use ast::Value as V;
        Ok(match v {
            V::Number(s, _) => {
                if let Ok(i) = s.parse::<i32>() {
                    (Expr::Const(Value::Int4(i)), DataType::Int4)
                } else if let Ok(i) = s.parse::<i64>() {
                    (Expr::Const(Value::Int8(i)), DataType::Int8)
                } else {
                    let (v, t) = numeric_literal(s)?;
                    (Expr::Const(v), t)
                }
            }
            V::SingleQuotedString(s) | V::EscapedStringLiteral(s) | V::UnicodeStringLiteral(s) => {
                (Expr::Const(Value::Text(s.clone())), DataType::Unknown)
            }
            V::DollarQuotedString(d) => {
                (Expr::Const(Value::Text(d.value.clone())), DataType::Unknown)
            }
            V::HexStringLiteral(h) => (
                Expr::Const(Value::Text(format!("\\x{h}"))),
                DataType::Unknown,
            ),
            V::Boolean(b) => (Expr::Const(Value::Bool(*b)), DataType::Bool),
            V::Null => (Expr::Const(Value::Null), DataType::Unknown),
            V::Placeholder(p) => {
                let n: usize = p
                    .strip_prefix('$')
                    .and_then(|n| n.parse().ok())
                    .filter(|n| *n >= 1 && *n <= crate::constants::MAX_BIND_PARAMETERS)
                    .ok_or_else(|| Error::syntax(format!("syntax error at or near \"{p}\"")))?;
                if self.params.len() < n {
                    self.params.resize(n, DataType::Unknown);
                }
                (Expr::Param(n - 1), self.params[n - 1])
            }
            other => {
                return Err(Error::unsupported(format!(
                    "literal {other} is not supported"
                )))
            }
        })
    }

    /// `left = right` for two columns of a scope (a join's USING), or 42883 if their
    /// types cannot be compared.
    pub fn compare_columns(
        &self,
        left: usize,
        left_type: DataType,
        right: usize,
        right_type: DataType,
    ) -> Result<Expr> {
        if !comparable(left_type, right_type) {
            return Err(Error::new(
                SqlState::UNDEFINED_FUNCTION,
                format!(
                    "operator does not exist: {} = {}",
                    left_type.name(),
                    right_type.name()
                ),
            )
            .with_hint("No operator matches the given name and argument types. You might need to add explicit type casts."));
        }
        Ok(Expr::Cmp(
            CmpOp::Eq,
            Box::new(Expr::Column(left)),
            Box::new(Expr::Column(right)),
        ))
    }

    fn bind_pair(&mut self, a: &ast::Expr, b: &ast::Expr, scope: &Scope) -> Result<(Expr, Expr)> {
        let l = self.bind(a, scope)?;
        let r = self.bind(b, scope)?;
        let ty = unify(l.1, r.1);
        let ty = if ty == DataType::Unknown {
            DataType::Text
        } else {
            ty
        };
        if !comparable(l.1, r.1) {
            return Err(Error::new(SqlState::UNDEFINED_FUNCTION, format!("operator does not exist: {} = {}", l.1.name(), r.1.name()))
                .with_hint("No operator matches the given name and argument types. You might need to add explicit type casts."));
        }
        Ok((self.coerce(l, ty)?, self.coerce(r, ty)?))
    }

    /// Bind to type `ty`: an untyped literal is read as one, another type is cast.
    fn bind_as(&mut self, e: &ast::Expr, scope: &Scope, ty: DataType) -> Result<Expr> {
        let t = self.bind(e, scope)?;
        if t.1 == ty || t.1 == DataType::Unknown {
            return self.coerce(t, ty);
        }
        if ty == DataType::Oid && !(t.1.is_integer() || comparable(t.1, ty))
            || ty.is_string() && !t.1.is_string()
        {
            return Err(Error::new(
                SqlState::UNDEFINED_FUNCTION,
                format!(
                    "argument of type {} where {} is wanted",
                    t.1.name(),
                    ty.name()
                ),
            ));
        }
        Ok(Expr::Cast(Box::new(t.0), ty))
    }

    /// `ARRAY[...]`: its elements resolved to one type (`elem` when the array is cast).
    fn bind_array(
        &mut self,
        items: &[ast::Expr],
        elem: Option<DataType>,
        scope: &Scope,
    ) -> Result<Typed> {
        let bound = items
            .iter()
            .map(|i| self.bind(i, scope))
            .collect::<Result<Vec<_>>>()?;
        let ty = match elem {
            Some(t) => t,
            None => {
                let mut ty = DataType::Unknown;
                for (_, t) in &bound {
                    if !comparable(ty, *t) {
                        return Err(Error::new(
                            SqlState::DATATYPE_MISMATCH,
                            format!(
                                "ARRAY types {} and {} cannot be matched",
                                ty.name(),
                                t.name()
                            ),
                        ));
                    }
                    ty = match (ty, *t) {
                        (DataType::Unknown, t) => t.without_typmod(),
                        (a, b) if a.is_numeric() && b.is_numeric() => numeric_common(a, b),
                        (a, _) => a,
                    };
                }
                if bound.is_empty() {
                    return Err(Error::new(
                        SqlState::INDETERMINATE_DATATYPE,
                        "cannot determine type of empty array",
                    )
                    .with_hint(
                        "Explicitly cast to the desired type, for example ARRAY[]::integer[].",
                    ));
                }
                if ty == DataType::Unknown {
                    DataType::Text
                } else {
                    ty
                }
            }
        };
        let array = array_type(ty)?;
        let element =
            types::static_element(&ty).ok_or_else(|| Error::internal("array element type"))?;
        let mut exprs = Vec::with_capacity(bound.len());
        for t in bound {
            let e = if t.1 == *element || t.1 == DataType::Unknown {
                self.coerce(t, *element)?
            } else {
                Expr::Cast(Box::new(t.0), *element)
            };
            exprs.push(e);
        }
        Ok((Expr::Array(element, exprs), array))
    }

    /// `left op ANY (array)` / `left op ALL (array)`.
    fn bind_any_array(
        &mut self,
        left: &ast::Expr,
        op: CmpOp,
        right: &ast::Expr,
        all: bool,
        scope: &Scope,
    ) -> Result<Typed> {
        let l = self.bind(left, scope)?;
        let r = self.bind(right, scope)?;
        let (l, r) = match (l.1, r.1) {
            (_, rt @ (DataType::Array(_) | DataType::Int2Vector | DataType::OidVector)) => {
                let elem = rt.element().unwrap_or(DataType::Unknown);
                if !comparable(l.1, elem) {
                    return Err(Error::new(
                        SqlState::UNDEFINED_FUNCTION,
                        format!(
                            "operator does not exist: {} {} {}",
                            l.1.name(),
                            op.symbol(),
                            elem.name()
                        ),
                    ));
                }
                (self.coerce(l, elem)?, r.0)
            }
            (lt, DataType::Unknown) if lt != DataType::Unknown => {
                let at = array_type(lt)?;
                let r = self.coerce(r, at)?;
                (l.0, r)
            }
            (_, other) => {
                return Err(Error::new(
                    SqlState::WRONG_OBJECT_TYPE,
                    if other == DataType::Unknown {
                        "could not determine the type of the array".to_string()
                    } else {
                        "op ANY/ALL (array) requires array on right side".to_string()
                    },
                ))
            }
        };
        Ok((
            Expr::AnyArray {
                left: Box::new(l),
                op,
                all,
                array: Box::new(r),
            },
            DataType::Bool,
        ))
    }

    /// The argument of EXTRACT or date_part: a timestamp, date or interval (an untyped
    /// literal could be several of them: 42725, as in PostgreSQL).
    fn datetime_arg(&mut self, t: Typed, function: &str) -> Result<Expr> {
        match t.1 {
            DataType::Unknown => Err(Error::new(
                SqlState::AMBIGUOUS_FUNCTION,
                format!("function {function}(unknown, unknown) is not unique"),
            )
            .with_hint("Could not choose a best candidate function. You might need to add explicit type casts.")),
            DataType::Timestamp | DataType::TimestampTz | DataType::Date | DataType::Interval => {
                Ok(t.0)
            }
            other => Err(Error::new(
                SqlState::UNDEFINED_FUNCTION,
                format!("function {function}(unknown, {}) does not exist", other.name()),
            )
            .with_hint("No function matches the given name and argument types. You might need to add explicit type casts.")),
        }
    }

    /// `t` as type `to`: untyped literals are read as one, others cast.
    fn cast_or_coerce(&mut self, t: Typed, to: DataType) -> Result<Expr> {
        if t.1 == DataType::Unknown {
            return self.coerce(t, to);
        }
        Ok(self.cast(t, to)?.0)
    }

    /// An array argument of function `name`.
    fn bind_array_arg(&mut self, e: &ast::Expr, scope: &Scope, name: &str) -> Result<Typed> {
        let t = self.bind(e, scope)?;
        match t.1 {
            DataType::Array(_) => Ok(t),
            other => Err(Error::new(
                SqlState::UNDEFINED_FUNCTION,
                format!("function {name}({}) does not exist", other.name()),
            )
            .with_hint("No function matches the given name and argument types. You might need to add explicit type casts.")),
        }
    }

    /// `~`, `~*`, `!~`, `!~*`: POSIX regular expression matches.
    fn bind_regex(
        &mut self,
        left: &ast::Expr,
        right: &ast::Expr,
        case_insensitive: bool,
        negated: bool,
        scope: &Scope,
    ) -> Result<Typed> {
        let l = self.bind_text(left, scope)?;
        let r = self.bind_text(right, scope)?;
        let func = if case_insensitive {
            Func::RegexIMatch
        } else {
            Func::RegexMatch
        };
        let m = Expr::Func(func, vec![l, r]);
        Ok((
            if negated { Expr::Not(Box::new(m)) } else { m },
            DataType::Bool,
        ))
    }

    fn bind_binary(
        &mut self,
        left: &ast::Expr,
        op: &ast::BinaryOperator,
        right: &ast::Expr,
        scope: &Scope,
    ) -> Result<Typed> {
        use ast::BinaryOperator as B;
        let op = match op {
            // OPERATOR(pg_catalog.op) is the operator itself.
            B::PGCustomBinaryOperator(parts)
                if parts.len() == 2 && parts[0].eq_ignore_ascii_case("pg_catalog") =>
            {
                match parts[1].as_str() {
                    "~" => &B::PGRegexMatch,
                    "~*" => &B::PGRegexIMatch,
                    "!~" => &B::PGRegexNotMatch,
                    "!~*" => &B::PGRegexNotIMatch,
                    "=" => &B::Eq,
                    "<>" => &B::NotEq,
                    "<" => &B::Lt,
                    "<=" => &B::LtEq,
                    ">" => &B::Gt,
                    ">=" => &B::GtEq,
                    "||" => &B::StringConcat,
                    "+" => &B::Plus,
                    "-" => &B::Minus,
                    "*" => &B::Multiply,
                    "/" => &B::Divide,
                    "%" => &B::Modulo,
                    other => {
                        return Err(Error::new(
                            SqlState::UNDEFINED_FUNCTION,
                            format!("operator does not exist: pg_catalog.{other}"),
                        ))
                    }
                }
            }
            op => op,
        };
        if cmp_op(op).is_some() {
            if let (Some(l), Some(r)) = (row::row_items(left), row::row_items(right)) {
                return self.compare_rows(&l, op, &r, scope);
            }
        }
        if json::is_jsonb_operator(op) {
            let l = self.bind(left, scope)?;
            let r = self.bind(right, scope)?;
            return self.bind_jsonb_operator(op, l, r);
        }
        match op {
            B::PGRegexMatch => return self.bind_regex(left, right, false, false, scope),
            B::PGRegexIMatch => return self.bind_regex(left, right, true, false, scope),
            B::PGRegexNotMatch => return self.bind_regex(left, right, false, true, scope),
            B::PGRegexNotIMatch => return self.bind_regex(left, right, true, true, scope),
            _ => {}
        }
        let cmp = match op {
            B::Eq => Some(CmpOp::Eq),
            B::NotEq => Some(CmpOp::NotEq),
            B::Lt => Some(CmpOp::Lt),
            B::LtEq => Some(CmpOp::LtEq),
            B::Gt => Some(CmpOp::Gt),
            B::GtEq => Some(CmpOp::GtEq),
            _ => None,
        };
        if let Some(c) = cmp {
            let l = self.bind(left, scope)?;
            let r = self.bind(right, scope)?;
            if !comparable(l.1, r.1) {
                return Err(Error::new(SqlState::UNDEFINED_FUNCTION, format!("operator does not exist: {} {} {}", l.1.name(), op, r.1.name()))
                    .with_hint("No operator matches the given name and argument types. You might need to add explicit type casts."));
            }
            let ty = unify(l.1, r.1);
            let ty = if ty == DataType::Unknown {
                DataType::Text
            } else {
                ty
            };
            let (l, r) = (self.coerce(l, ty)?, self.coerce(r, ty)?);
            return Ok((Expr::Cmp(c, Box::new(l), Box::new(r)), DataType::Bool));
        }
        let arith = match op {
            B::Plus => Some(ArithOp::Add),
            B::Minus => Some(ArithOp::Sub),
            B::Multiply => Some(ArithOp::Mul),
            B::Divide => Some(ArithOp::Div),
            B::Modulo => Some(ArithOp::Mod),
            _ => None,
        };
        if let Some(a) = arith {
            let l = self.bind(left, scope)?;
            let r = self.bind(right, scope)?;
            if a == ArithOp::Sub && l.1 == DataType::Jsonb {
                return self.bind_jsonb_operator(op, l, r);
            }
            // The type an untyped literal beside `t` takes: its own, except that a date
            // adds days and a timestamp adds an interval (there is no timestamp +
            // timestamp), as PostgreSQL's operator resolution finds.
            let beside = |t: DataType| match t {
                DataType::Date => DataType::Int4,
                DataType::Timestamp | DataType::TimestampTz if a == ArithOp::Add => {
                    DataType::Interval
                }
                t => t,
            };
            let (lt, rt) = match (l.1, r.1) {
                (DataType::Unknown, DataType::Unknown) => {
                    return Err(Error::new(
                        SqlState::INDETERMINATE_DATATYPE,
                        "could not determine data type of an operand; add an explicit cast",
                    ))
                }
                (DataType::Unknown, t) => (beside(t), t),
                (t, DataType::Unknown) => (t, beside(t)),
                (a, b) => (a, b),
            };
            let ty = arith_type(a, lt, rt)?;
            let (l, r) = (self.coerce(l, lt)?, self.coerce(r, rt)?);
            if let (Expr::Const(x), Expr::Const(y)) = (&l, &r) {
                if !x.is_null() && !y.is_null() {
                    return Ok((Expr::Const(types::arith(a, x, y)?), ty));
                }
            }
            return Ok((Expr::Arith(a, Box::new(l), Box::new(r)), ty));
        }
        match op {
            B::And | B::Or => {
                let l = self.bind_bool(left, scope, if *op == B::And { "AND" } else { "OR" })?;
                let r = self.bind_bool(right, scope, if *op == B::And { "AND" } else { "OR" })?;
                Ok((
                    if *op == B::And {
                        Expr::And(Box::new(l), Box::new(r))
                    } else {
                        Expr::Or(Box::new(l), Box::new(r))
                    },
                    DataType::Bool,
                ))
            }
            B::StringConcat => {
                let l = self.bind(left, scope)?;
                let r = self.bind(right, scope)?;
                if json::is_jsonb_concat(l.1, r.1) {
                    return self.bind_jsonb_operator(op, l, r);
                }
                if let Some(t) = [l.1, r.1].into_iter().find(|t| t.element().is_some()) {
                    return self.array_concat(l, r, t);
                }
                let l = self.text_of_typed(l)?;
                let r = self.text_of_typed(r)?;
                Ok((Expr::Concat(Box::new(l), Box::new(r)), DataType::Text))
            }
            B::BitwiseAnd
            | B::BitwiseOr
            | B::PGBitwiseXor
            | B::PGBitwiseShiftLeft
            | B::PGBitwiseShiftRight => {
                let f = match op {
                    B::BitwiseAnd => Func::BitAnd,
                    B::BitwiseOr => Func::BitOr,
                    B::PGBitwiseXor => Func::BitXor,
                    B::PGBitwiseShiftLeft => Func::ShiftLeft,
                    _ => Func::ShiftRight,
                };
                let l = self.bind(left, scope)?;
                let r = self.bind(right, scope)?;
                let shift = matches!(f, Func::ShiftLeft | Func::ShiftRight);
                let known = |t: DataType| {
                    if t == DataType::Unknown {
                        DataType::Int4
                    } else {
                        t
                    }
                };
                let (lt, rt) = (known(l.1), known(r.1));
                if !lt.is_integer() || !rt.is_integer() {
                    return Err(Error::new(
                        SqlState::UNDEFINED_FUNCTION,
                        format!("operator does not exist: {} {op} {}", lt.name(), rt.name()),
                    )
                    .with_hint("No operator matches the given name and argument types. You might need to add explicit type casts."));
                }
                let ty = if shift { lt } else { unify(lt, rt) };
                let l = self.coerce(l, ty)?;
                let r = self.coerce(r, if shift { DataType::Int4 } else { ty })?;
                Ok((Expr::Func(f, vec![l, r]), ty))
            }
            other => Err(Error::unsupported(format!(
                "operator {other} is not supported yet"
            ))),
        }
    }

    /// `(expr).field` of a record: `(_pg_expandarray(a)).n` at the top of a select list is
    /// the set-returning function making that field; otherwise the field of a record
    /// value.
    fn bind_field(&mut self, root: &ast::Expr, field: &str, scope: &Scope) -> Result<Typed> {
        let mut inner = root;
        while let ast::Expr::Nested(e) = inner {
            inner = e;
        }
        let (e, t) = match inner {
            ast::Expr::Function(f) if function_name(f) == "_pg_expandarray" => {
                // The field of a set-returning call at the top of a select list is at the
                // top too.
                self.depth -= 1;
                let bound = self.bind(inner, scope);
                self.depth += 1;
                bound?
            }
            _ => self.bind(root, scope)?,
        };
        let DataType::Record(fields) = t else {
            return Err(Error::new(
                SqlState::WRONG_OBJECT_TYPE,
                format!(
                    "column notation .{field} applied to type {}, which is not a composite type",
                    t.name()
                ),
            ));
        };
        let Some(i) = fields.iter().position(|(n, _)| *n == field) else {
            return Err(Error::new(
                SqlState::UNDEFINED_COLUMN,
                format!("could not identify column \"{field}\" in record data type"),
            ));
        };
        let ty = fields[i].1;
        if let Expr::SetReturning(f) = &e {
            if let super::plan::TableFunctionKind::ExpandArray(_) = f.kind {
                let f = super::plan::TableFunction {
                    kind: super::plan::TableFunctionKind::ExpandArray(
                        super::plan::ExpandOutput::Field(i),
                    ),
                    args: f.args.clone(),
                    ordinality: f.ordinality,
                };
                return Ok((Expr::SetReturning(std::sync::Arc::new(f)), ty));
            }
        }
        Ok((
            Expr::Func(
                Func::RecordField,
                vec![e, Expr::Const(Value::Int4(i as i32))],
            ),
            ty,
        ))
    }

    /// `||` with an array of type `t` on one side: the other is an array of it or an
    /// element of it.
    pub(super) fn array_concat(&mut self, l: Typed, r: Typed, t: DataType) -> Result<Typed> {
        let element = t.element().unwrap_or(DataType::Text);
        let side = |x: &Typed| {
            if x.1 == t || x.1 == DataType::Unknown {
                0
            } else {
                1
            }
        };
        let (ls, rs) = (side(&l), side(&r));
        let (l, r, which) = match (l.1 == t, r.1 == t) {
            (true, true) => (l.0, r.0, 0),
            (true, false) if rs == 0 => (l.0, self.coerce(r, t)?, 0),
            (false, true) if ls == 0 => (self.coerce(l, t)?, r.0, 0),
            (true, false) => (l.0, self.coerce(r, element)?, 2),
            (false, true) => (self.coerce(l, element)?, r.0, 1),
            (false, false) => unreachable!("one side is an array"),
        };
        let element_oid = Expr::Const(Value::Oid(element.oid()));
        Ok((
            Expr::Func(
                Func::ArrayCat,
                vec![l, r, Expr::Const(Value::Int8(which)), element_oid],
            ),
            t,
        ))
    }

    fn bind_case(
        &mut self,
        operand: Option<&ast::Expr>,
        conditions: &[ast::CaseWhen],
        otherwise: Option<&ast::Expr>,
        scope: &Scope,
    ) -> Result<Typed> {
        let op = match operand {
            Some(o) => Some(self.bind(o, scope)?),
            None => None,
        };
        let mut whens = Vec::new();
        let mut results = Vec::new();
        for c in conditions {
            let cond = match &op {
                Some(o) => {
                    let t = self.bind(&c.condition, scope)?;
                    let ty = unify(o.1, t.1);
                    self.coerce(t, ty)?
                }
                None => self.bind_bool(&c.condition, scope, "CASE/WHEN")?,
            };
            whens.push(cond);
            results.push(self.bind(&c.result, scope)?);
        }
        let other = match otherwise {
            Some(e) => Some(self.bind(e, scope)?),
            None => None,
        };
        let mut ty = DataType::Unknown;
        for r in results.iter().chain(other.iter()) {
            ty = unify(ty, r.1);
        }
        let ty = if ty == DataType::Unknown {
            DataType::Text
        } else {
            ty.without_typmod()
        };
        let op = match op {
            Some(o) => {
                let oty = if o.1 == DataType::Unknown {
                    DataType::Text
                } else {
                    o.1
                };
                Some(Box::new(self.coerce(o, oty)?))
            }
            None => None,
        };
        let mut pairs = Vec::new();
        for (w, r) in whens.into_iter().zip(results) {
            let rt = r.1;
            let r = self.coerce(r, ty)?;
            pairs.push((
                w,
                if rt != ty && rt != DataType::Unknown {
                    Expr::Cast(Box::new(r), ty)
                } else {
                    r
                },
            ));
        }
        let otherwise = match other {
            Some(o) => {
                let ot = o.1;
                let e = self.coerce(o, ty)?;
                Some(Box::new(if ot != ty && ot != DataType::Unknown {
                    Expr::Cast(Box::new(e), ty)
                } else {
                    e
                }))
            }
            None => None,
        };
        Ok((
            Expr::Case {
                operand: op,
                whens: pairs,
                otherwise,
            },
            ty,
        ))
    }

    fn bind_function(&mut self, f: &ast::Function, scope: &Scope) -> Result<Typed> {
        let name = function_name(f);
        if f.filter.is_some() && f.over.is_none() && AggFunc::from_name(&name).is_none() {
            return Err(Error::new(
                SqlState::WRONG_OBJECT_TYPE,
                format!("FILTER specified, but {name} is not an aggregate function"),
            ));
        }
        if let Some(over) = &f.over {
            return self.bind_window(f, &name, over, scope);
        }
        if !f.within_group.is_empty() {
            return self.bind_ordered_set(f, &name, scope);
        }
        let mut agg_order: &[ast::OrderByExpr] = &[];
        if let ast::FunctionArguments::List(l) = &f.args {
            for c in &l.clauses {
                match c {
                    ast::FunctionArgumentClause::OrderBy(o)
                        if AggFunc::from_name(&name).is_some() =>
                    {
                        agg_order = o
                    }
                    _ => {
                        return Err(Error::unsupported(format!(
                            "this clause in a call of {name}() is not supported yet: {c}"
                        )))
                    }
                }
            }
        }
        let (args, star, distinct) = match &f.args {
            ast::FunctionArguments::None => (Vec::new(), false, false),
            ast::FunctionArguments::List(l) => {
                let mut args = Vec::new();
                let mut star = false;
                for a in &l.args {
                    match a {
                        ast::FunctionArg::Unnamed(ast::FunctionArgExpr::Expr(e)) => {
                            args.push(e.clone())
                        }
                        ast::FunctionArg::Unnamed(ast::FunctionArgExpr::Wildcard) => star = true,
                        ast::FunctionArg::Named {
                            name: param,
                            arg: ast::FunctionArgExpr::Expr(e),
                            ..
                        }
                        | ast::FunctionArg::ExprNamed {
                            name: ast::Expr::Identifier(param),
                            arg: ast::FunctionArgExpr::Expr(e),
                            ..
                        } if name == "make_interval" => {
                            // Its parameters by name; those before it not given are 0.
                            let at = MAKE_INTERVAL_PARAMETERS
                                .iter()
                                .position(|p| param.value.eq_ignore_ascii_case(p))
                                .ok_or_else(|| {
                                    Error::new(
                                        SqlState::UNDEFINED_FUNCTION,
                                        format!(
                                            "function make_interval({} => unknown) does not exist",
                                            param.value
                                        ),
                                    )
                                })?;
                            let zero = ast::Expr::value(ast::Value::Number("0".into(), false));
                            if args.len() <= at {
                                args.resize(at + 1, zero);
                            }
                            args[at] = e.clone();
                        }
                        _ => {
                            return Err(Error::unsupported(format!(
                                "argument form not supported in {name}()"
                            )))
                        }
                    }
                }
                (
                    args,
                    star,
                    matches!(
                        l.duplicate_treatment,
                        Some(ast::DuplicateTreatment::Distinct)
                    ),
                )
            }
            ast::FunctionArguments::Subquery(q) if name == "array" => {
                let (plan, types) = self.plan_subquery(q, scope)?;
                if types.len() != 1 {
                    return Err(Error::syntax("subquery must return only one column"));
                }
                let elem = if types[0] == DataType::Unknown {
                    DataType::Text
                } else {
                    types[0]
                };
                let array = array_type(elem)?;
                let element = types::static_element(&elem)
                    .ok_or_else(|| Error::internal("array element type"))?;
                return Ok((self.subquery(plan, SubqueryTest::Array(element)), array));
            }
            ast::FunctionArguments::Subquery(_) => {
                return Err(Error::unsupported(format!(
                    "a subquery as the argument of {name}() is not supported"
                )))
            }
        };
        if name == "pg_partition_ancestors"
            && !(self.allow_set_returning && self.no_set_returning.is_none())
            && args.len() == 1
        {
            // Its one row (no table here is a partition) is its argument: where a set
            // cannot be returned (a subquery's select list), it is that value.
            let a = self.bind(&args[0], scope)?;
            return Ok((self.coerce(a, DataType::RegClass)?, DataType::RegClass));
        }
        if matches!(
            name.as_str(),
            "unnest"
                | "generate_series"
                | "generate_subscripts"
                | "pg_partition_ancestors"
                | "_pg_expandarray"
                | "regexp_matches"
                | "regexp_split_to_table"
        ) || super::json_functions::JsonbSet::by_name(&name).is_some()
        {
            return self.bind_set_returning(&name, &args, scope);
        }
        if let Some(t) = self.bind_jsonb_function(&name, &args, scope)? {
            return Ok(t);
        }
        if let Some(of) = super::catalog_functions::PrivilegeOf::by_function(&name) {
            return self.bind_has_privilege(of, &name, &args, scope);
        }
        if !distinct && !star && AggFunc::from_name(&name).is_none() {
            if let Some(t) = self.bind_scalar_function(&name, &args, scope)? {
                return Ok(t);
            }
        }
        if name == "row" {
            return self.bind_row(&args.iter().collect::<Vec<_>>(), scope);
        }
        if let Some(agg) = AggFunc::from_name(&name) {
            let (e, ty) = self.bind_aggregate(agg, &name, &args, star, distinct, scope)?;
            if !agg_order.is_empty() {
                self.order_last_aggregate(agg_order, scope)?;
            }
            if let Some(filter) = &f.filter {
                self.filter_last_aggregate(filter, scope)?;
            }
            return Ok((e, ty));
        }
        if distinct {
            return Err(Error::new(
                SqlState::WRONG_OBJECT_TYPE,
                format!("DISTINCT specified, but {name} is not an aggregate function"),
            ));
        }
        let arity = |n: usize| -> Result<()> {
            if args.len() == n {
                Ok(())
            } else {
                Err(Error::new(
                    SqlState::UNDEFINED_FUNCTION,
                    format!(
                        "function {name} with {} arguments does not exist",
                        args.len()
                    ),
                ))
            }
        };
        let (func, ty, bound) = match name.as_str() {
            "now" | "current_timestamp" | "transaction_timestamp" | "statement_timestamp" => {
                arity(0)?;
                (Func::Now, DataType::TimestampTz, vec![])
            }
            "localtimestamp" | "current_date" => {
                arity(0)?;
                let now = (Expr::Func(Func::Now, vec![]), DataType::TimestampTz);
                let to = match name.as_str() {
                    "current_date" => DataType::Date,
                    _ => DataType::Timestamp,
                };
                return self.cast(now, to);
            }
            "clock_timestamp" => {
                arity(0)?;
                (Func::ClockTimestamp, DataType::TimestampTz, vec![])
            }
            "random" => {
                arity(0)?;
                (Func::Random, DataType::Float8, vec![])
            }
            "gen_random_uuid" => {
                arity(0)?;
                (Func::GenRandomUuid, DataType::Uuid, vec![])
            }
            "repeat" => {
                arity(2)?;
                let a = self.bind_text(&args[0], scope)?;
                let n = self.bind_as(&args[1], scope, DataType::Int4)?;
                (Func::Repeat, DataType::Text, vec![a, n])
            }
            "pg_get_function_result"
            | "pg_get_function_arguments"
            | "pg_get_function_identity_arguments" => {
                arity(1)?;
                let a = self.bind_as(&args[0], scope, DataType::Oid)?;
                (Func::FunctionDef, DataType::Text, vec![a])
            }
            "md5" | "lower" | "upper" => {
                arity(1)?;
                let a = self.bind_text(&args[0], scope)?;
                let func = match name.as_str() {
                    "md5" => Func::Md5,
                    "lower" => Func::Lower,
                    _ => Func::Upper,
                };
                (func, DataType::Text, vec![a])
            }
            "length" | "char_length" | "character_length" | "octet_length" => {
                arity(1)?;
                let t = self.bind(&args[0], scope)?;
                let octets = name == "octet_length";
                let a = match t.1 {
                    DataType::Bytea => t.0,
                    // octet_length(character) counts the padding, as PostgreSQL's does.
                    DataType::Char(_) if octets => t.0,
                    DataType::Char(_) => Expr::Func(Func::BpcharToText, vec![t.0]),
                    DataType::Unknown => self.coerce(t, DataType::Text)?,
                    ty if ty.is_string() => t.0,
                    other => {
                        return Err(Error::new(
                            SqlState::UNDEFINED_FUNCTION,
                            format!("function length({}) does not exist", other.name()),
                        ))
                    }
                };
                let func = if octets {
                    Func::OctetLength
                } else {
                    Func::Length
                };
                (func, DataType::Int4, vec![a])
            }
            "abs" => {
                arity(1)?;
                let t = self.bind(&args[0], scope)?;
                let ty = if t.1 == DataType::Unknown {
                    DataType::Float8
                } else {
                    t.1
                };
                if !ty.is_numeric() {
                    return Err(Error::new(
                        SqlState::UNDEFINED_FUNCTION,
                        format!("function abs({}) does not exist", ty.name()),
                    ));
                }
                let a = self.coerce(t, ty)?;
                (Func::Abs, ty.without_typmod(), vec![a])
            }
            "left" | "right" => {
                arity(2)?;
                let a = self.bind_text(&args[0], scope)?;
                let n = self.bind_as(&args[1], scope, DataType::Int4)?;
                let func = if name == "left" {
                    Func::Left
                } else {
                    Func::Right
                };
                (func, DataType::Text, vec![a, n])
            }
            "lpad" | "rpad" => {
                if !(2..=3).contains(&args.len()) {
                    arity(3)?;
                }
                let mut bound = vec![
                    self.bind_text(&args[0], scope)?,
                    self.bind_as(&args[1], scope, DataType::Int4)?,
                ];
                if let Some(fill) = args.get(2) {
                    bound.push(self.bind_text(fill, scope)?);
                }
                let func = if name == "lpad" {
                    Func::Lpad
                } else {
                    Func::Rpad
                };
                (func, DataType::Text, bound)
            }
            "split_part" => {
                arity(3)?;
                let a = self.bind_text(&args[0], scope)?;
                let d = self.bind_text(&args[1], scope)?;
                let n = self.bind_as(&args[2], scope, DataType::Int4)?;
                (Func::SplitPart, DataType::Text, vec![a, d, n])
            }
            "coalesce" | "greatest" | "least" => {
                if args.is_empty() {
                    return Err(Error::syntax("syntax error at or near \")\""));
                }
                let func = match name.as_str() {
                    "greatest" => Func::Greatest,
                    "least" => Func::Least,
                    _ => Func::Coalesce,
                };
                let construct: &'static str = match func {
                    Func::Greatest => "GREATEST",
                    Func::Least => "LEAST",
                    _ => "COALESCE",
                };
                let items = args
                    .iter()
                    .map(|a| self.without_set_returning(construct, |b| b.bind(a, scope)))
                    .collect::<Result<Vec<_>>>()?;
                let mut ty = DataType::Unknown;
                for i in &items {
                    if !comparable(ty, i.1) {
                        return Err(Error::new(
                            SqlState::DATATYPE_MISMATCH,
                            format!(
                                "{construct} types {} and {} cannot be matched",
                                ty.name(),
                                i.1.name()
                            ),
                        ));
                    }
                    ty = unify(ty, i.1);
                }
                let ty = if ty == DataType::Unknown {
                    DataType::Text
                } else {
                    ty.without_typmod()
                };
                let mut bound = Vec::new();
                for i in items {
                    let it = i.1;
                    let e = self.coerce(i, ty)?;
                    bound.push(if it != ty && it != DataType::Unknown {
                        Expr::Cast(Box::new(e), ty)
                    } else {
                        e
                    });
                }
                (func, ty, bound)
            }
            "nextval" => {
                arity(1)?;
                let a = self.bind_text(&args[0], scope)?;
                (Func::Nextval, DataType::Int8, vec![a])
            }
            "currval" => {
                arity(1)?;
                let a = self.bind_text(&args[0], scope)?;
                (Func::Currval, DataType::Int8, vec![a])
            }
            "lastval" => {
                arity(0)?;
                (Func::Lastval, DataType::Int8, vec![])
            }
            "setval" => {
                if !(2..=3).contains(&args.len()) {
                    arity(2)?;
                }
                let a = self.bind_text(&args[0], scope)?;
                let v = self.bind(&args[1], scope)?;
                let v = self.coerce(v, DataType::Int8)?;
                let mut bound = vec![a, v];
                if let Some(called) = args.get(2) {
                    let c = self.bind(called, scope)?;
                    bound.push(self.coerce(c, DataType::Bool)?);
                }
                (Func::Setval, DataType::Int8, bound)
            }
            "version" => {
                arity(0)?;
                (Func::Version, DataType::Text, vec![])
            }
            "current_database" | "current_catalog" => {
                arity(0)?;
                (Func::CurrentDatabase, DataType::Text, vec![])
            }
            "current_user" | "user" | "current_role" => {
                arity(0)?;
                (Func::CurrentUser, DataType::Text, vec![])
            }
            "session_user" => {
                arity(0)?;
                (Func::SessionUser, DataType::Text, vec![])
            }
            "pg_backend_pid" => {
                arity(0)?;
                (Func::BackendPid, DataType::Int4, vec![])
            }
            "pg_cancel_backend" => {
                arity(1)?;
                let t = self.bind(&args[0], scope)?;
                let a = self.coerce(t, DataType::Int4)?;
                (Func::CancelBackend, DataType::Bool, vec![a])
            }
            "pg_promote" => {
                if args.len() > 2 {
                    arity(2)?;
                }
                // The arguments (wait, wait_seconds) are accepted: a promotion here always
                // completes before the function returns.
                (Func::Promote, DataType::Bool, vec![])
            }
            "pg_reload_conf" => {
                arity(0)?;
                (Func::ReloadConf, DataType::Bool, vec![])
            }
            "pg_is_in_recovery" => {
                arity(0)?;
                (Func::IsInRecovery, DataType::Bool, vec![])
            }
            "pg_current_wal_lsn" | "pg_current_wal_flush_lsn" | "pg_current_wal_insert_lsn" => {
                arity(0)?;
                (Func::CurrentWalLsn, DataType::Text, vec![])
            }
            "pg_last_wal_receive_lsn" => {
                arity(0)?;
                (Func::LastWalReceiveLsn, DataType::Text, vec![])
            }
            "pg_last_wal_replay_lsn" => {
                arity(0)?;
                (Func::LastWalReplayLsn, DataType::Text, vec![])
            }
            "current_setting" => {
                arity(1)?;
                let a = self.bind_text(&args[0], scope)?;
                (Func::CurrentSetting, DataType::Text, vec![a])
            }
            "set_config" => {
                arity(3)?;
                let name = self.bind_text(&args[0], scope)?;
                let value = self.bind_text(&args[1], scope)?;
                let local = self.bind(&args[2], scope)?;
                let local = self.coerce(local, DataType::Bool)?;
                (Func::SetConfig, DataType::Text, vec![name, value, local])
            }
            "current_schema" => {
                arity(0)?;
                (Func::CurrentSchema, DataType::Text, vec![])
            }
            "current_schemas" => {
                arity(1)?;
                let a = self.bind_as(&args[0], scope, DataType::Bool)?;
                (
                    Func::CurrentSchemas,
                    DataType::Array(&DataType::Name),
                    vec![a],
                )
            }
            "acldefault" => {
                arity(2)?;
                let kind = self.bind_as(&args[0], scope, DataType::InternalChar)?;
                let owner = self.bind_as(&args[1], scope, DataType::Oid)?;
                // aclitem[] is shown as text[] (its text form is the same).
                (
                    Func::AclDefault,
                    DataType::Array(&DataType::Text),
                    vec![kind, owner],
                )
            }
            "array_remove" => {
                arity(2)?;
                let (a, ty) = self.bind_array_arg(&args[0], scope, &name)?;
                let elem = ty.element().unwrap_or(DataType::Text);
                let e = self.bind_as(&args[1], scope, elem)?;
                (Func::ArrayRemove, ty, vec![a, e])
            }
            "pg_get_userbyid" => {
                arity(1)?;
                let a = self.bind_as(&args[0], scope, DataType::Oid)?;
                (Func::UserById, DataType::Name, vec![a])
            }
            "pg_table_is_visible" | "pg_type_is_visible" | "pg_collation_is_visible" => {
                arity(1)?;
                let a = self.bind_as(&args[0], scope, DataType::Oid)?;
                let func = match name.as_str() {
                    "pg_table_is_visible" => Func::TableIsVisible,
                    "pg_type_is_visible" => Func::TypeIsVisible,
                    _ => Func::CollationIsVisible,
                };
                (func, DataType::Bool, vec![a])
            }
            "format_type" => {
                arity(2)?;
                let a = self.bind_as(&args[0], scope, DataType::Oid)?;
                let m = self.bind_as(&args[1], scope, DataType::Int4)?;
                (Func::FormatType, DataType::Text, vec![a, m])
            }
            "pg_get_viewdef" => {
                if !(1..=2).contains(&args.len()) {
                    arity(1)?;
                }
                let t = self.bind(&args[0], scope)?;
                let a = self.cast_or_coerce(t, DataType::RegClass)?;
                let a = Expr::Cast(Box::new(a), DataType::Oid);
                (Func::ViewDef, DataType::Text, vec![a])
            }
            "pg_get_expr" => {
                if !(2..=3).contains(&args.len()) {
                    arity(2)?;
                }
                let e = self.bind_text(&args[0], scope)?;
                let r = self.bind_as(&args[1], scope, DataType::Oid)?;
                (Func::GetExpr, DataType::Text, vec![e, r])
            }
            "pg_get_indexdef" => {
                if args.len() != 1 && args.len() != 3 {
                    arity(1)?;
                }
                let mut bound = vec![self.bind_as(&args[0], scope, DataType::Oid)?];
                if args.len() == 3 {
                    bound.push(self.bind_as(&args[1], scope, DataType::Int4)?);
                    self.bind_as(&args[2], scope, DataType::Bool)?;
                }
                (Func::IndexDef, DataType::Text, bound)
            }
            "pg_get_constraintdef" => {
                if !(1..=2).contains(&args.len()) {
                    arity(1)?;
                }
                let mut bound = vec![self.bind_as(&args[0], scope, DataType::Oid)?];
                if let Some(pretty) = args.get(1) {
                    bound.push(self.bind_as(pretty, scope, DataType::Bool)?);
                }
                (Func::ConstraintDef, DataType::Text, bound)
            }
            "pg_relation_size" | "pg_table_size" | "pg_indexes_size" | "pg_total_relation_size" => {
                if name == "pg_relation_size" && args.len() == 2 {
                    let fork = self.bind_text(&args[1], scope)?;
                    let t = self.bind(&args[0], scope)?;
                    let a = self.cast_or_coerce(t, DataType::RegClass)?;
                    (Func::RelationSize, DataType::Int8, vec![a, fork])
                } else {
                    arity(1)?;
                    let t = self.bind(&args[0], scope)?;
                    let a = self.cast_or_coerce(t, DataType::RegClass)?;
                    let func = match name.as_str() {
                        "pg_relation_size" => Func::RelationSize,
                        "pg_table_size" => Func::TableSize,
                        "pg_indexes_size" => Func::IndexesSize,
                        _ => Func::TotalRelationSize,
                    };
                    (func, DataType::Int8, vec![a])
                }
            }
            "pg_database_size" => {
                arity(1)?;
                let t = self.bind(&args[0], scope)?;
                let a = match t.1 {
                    DataType::Unknown => self.coerce(t, DataType::Name)?,
                    _ => t.0,
                };
                (Func::DatabaseSize, DataType::Int8, vec![a])
            }
            "pg_size_pretty" => {
                arity(1)?;
                let a = self.bind_as(&args[0], scope, DataType::Int8)?;
                (Func::SizePretty, DataType::Text, vec![a])
            }
            "pg_function_is_visible" => {
                arity(1)?;
                let a = self.bind_as(&args[0], scope, DataType::Oid)?;
                (Func::FunctionIsVisible, DataType::Bool, vec![a])
            }
            "pg_typeof" => {
                arity(1)?;
                let t = self.bind(&args[0], scope)?;
                let ty = t.1;
                let shown = super::pg_catalog::format_type(ty.oid(), None);
                return Ok((
                    Expr::Const(Value::Reg(ty.oid(), shown.into())),
                    DataType::RegType,
                ));
            }
            "date_trunc" => {
                if args.len() == 3 {
                    // date_trunc(unit, timestamptz, zone): truncated in the zone named.
                    let unit = self.bind_text(&args[0], scope)?;
                    let t = self.bind(&args[1], scope)?;
                    let t = self.cast(t, DataType::TimestampTz)?.0;
                    let zone = self.bind_text(&args[2], scope)?;
                    return Ok((
                        Expr::Func(Func::DateTrunc, vec![unit, t, zone]),
                        DataType::TimestampTz,
                    ));
                }
                arity(2)?;
                let unit = self.bind_text(&args[0], scope)?;
                let t = self.bind(&args[1], scope)?;
                // A date is taken as a timestamptz, as PostgreSQL resolves it.
                let (arg, ty) = match t.1 {
                    DataType::Timestamp => (t.0, DataType::Timestamp),
                    DataType::TimestampTz => (t.0, DataType::TimestampTz),
                    DataType::Date => (self.cast(t, DataType::TimestampTz)?.0, DataType::TimestampTz),
                    DataType::Unknown => {
                        return Err(Error::new(
                            SqlState::AMBIGUOUS_FUNCTION,
                            "function date_trunc(unknown, unknown) is not unique",
                        )
                        .with_hint("Could not choose a best candidate function. You might need to add explicit type casts."))
                    }
                    DataType::Interval => {
                        return Err(Error::unsupported(
                            "date_trunc of an interval is not supported yet",
                        ))
                    }
                    other => {
                        return Err(Error::new(
                            SqlState::UNDEFINED_FUNCTION,
                            format!("function date_trunc(unknown, {}) does not exist", other.name()),
                        )
                        .with_hint("No function matches the given name and argument types. You might need to add explicit type casts."))
                    }
                };
                (Func::DateTrunc, ty, vec![unit, arg])
            }
            "date_part" => {
                arity(2)?;
                let unit = self.bind_text(&args[0], scope)?;
                let t = self.bind(&args[1], scope)?;
                let arg = self.datetime_arg(t, "date_part")?;
                (Func::DatePart, DataType::Float8, vec![unit, arg])
            }
            "quote_literal" => {
                arity(1)?;
                let t = self.bind(&args[0], scope)?;
                let a = self.as_text(t)?;
                (Func::QuoteLiteral, DataType::Text, vec![a])
            }
            "quote_ident" => {
                arity(1)?;
                let a = self.bind_text(&args[0], scope)?;
                (Func::QuoteIdent, DataType::Text, vec![a])
            }
            "pg_get_statisticsobjdef_columns" => {
                arity(1)?;
                let a = self.bind_as(&args[0], scope, DataType::Oid)?;
                (Func::StatisticsColumns, DataType::Text, vec![a])
            }
            "pg_relation_is_publishable" => {
                arity(1)?;
                let t = self.bind(&args[0], scope)?;
                let a = self.cast_or_coerce(t, DataType::RegClass)?;
                (Func::RelationIsPublishable, DataType::Bool, vec![a])
            }
            "pg_encoding_to_char" => {
                arity(1)?;
                let a = self.bind_as(&args[0], scope, DataType::Int4)?;
                (Func::EncodingToChar, DataType::Name, vec![a])
            }
            "pg_get_triggerdef" => {
                if !(1..=2).contains(&args.len()) {
                    arity(1)?;
                }
                let a = self.bind_as(&args[0], scope, DataType::Oid)?;
                if let Some(p) = args.get(1) {
                    self.bind_as(p, scope, DataType::Bool)?;
                }
                // No trigger exists here (pg_trigger is empty): no definition.
                (
                    Func::Description,
                    DataType::Text,
                    vec![a, Expr::Const(Value::Null)],
                )
            }
            "obj_description" | "col_description" | "shobj_description" => {
                arity(2)?;
                let a = self.bind_as(&args[0], scope, DataType::Oid)?;
                let bound = if name == "col_description" {
                    let column = self.bind_as(&args[1], scope, DataType::Int4)?;
                    vec![a, Expr::Const(Value::Text("pg_class".into())), column]
                } else {
                    vec![a, self.bind_as(&args[1], scope, DataType::Name)?]
                };
                (Func::Description, DataType::Text, bound)
            }
            "pg_get_serial_sequence" => {
                arity(2)?;
                let t = self.bind_text(&args[0], scope)?;
                let c = self.bind_text(&args[1], scope)?;
                (Func::SerialSequence, DataType::Text, vec![t, c])
            }
            "array_to_string" => {
                if !(2..=3).contains(&args.len()) {
                    arity(2)?;
                }
                let a = self.bind_array_arg(&args[0], scope, &name)?;
                let mut bound = vec![a.0, self.bind_text(&args[1], scope)?];
                if let Some(n) = args.get(2) {
                    bound.push(self.bind_text(n, scope)?);
                }
                (Func::ArrayToString, DataType::Text, bound)
            }
            "array_upper" | "array_lower" | "array_length" => {
                arity(2)?;
                let a = self.bind_array_arg(&args[0], scope, &name)?;
                let d = self.bind_as(&args[1], scope, DataType::Int4)?;
                let func = match name.as_str() {
                    "array_upper" => Func::ArrayUpper,
                    "array_lower" => Func::ArrayLower,
                    _ => Func::ArrayLength,
                };
                (func, DataType::Int4, vec![a.0, d])
            }
            "cardinality" => {
                arity(1)?;
                let a = self.bind_array_arg(&args[0], scope, &name)?;
                (Func::Cardinality, DataType::Int4, vec![a.0])
            }
            "row_to_json" => {
                arity(1)?;
                let t = self.bind(&args[0], scope)?;
                if !matches!(t.1, DataType::Record(_)) {
                    return Err(Error::new(
                        SqlState::UNDEFINED_FUNCTION,
                        format!("function row_to_json({}) does not exist", t.1.name()),
                    ));
                }
                (Func::ToJson, DataType::Json, vec![t.0])
            }
            "json_build_object" | "json_build_array" | "to_json" | "array_to_json" => {
                if name == "to_json" || name == "array_to_json" {
                    arity(1)?;
                }
                if name == "array_to_json" {
                    let t = self.bind(&args[0], scope)?;
                    if t.1.element().is_none() || t.1.is_vector() {
                        return Err(Error::new(
                            SqlState::UNDEFINED_FUNCTION,
                            format!("function array_to_json({}) does not exist", t.1.name()),
                        )
                        .with_hint("No function matches the given name and argument types. You might need to add explicit type casts."));
                    }
                    return Ok((Expr::Func(Func::ToJson, vec![t.0]), DataType::Json));
                }
                // Keys are text; values are made JSON here (json values are already).
                let mut bound = Vec::with_capacity(args.len());
                for (i, a) in args.iter().enumerate() {
                    let t = self.bind(a, scope)?;
                    let e = match t.1 {
                        DataType::Unknown => self.coerce(t, DataType::Text)?,
                        DataType::Char(_) => Expr::Func(Func::BpcharToText, vec![t.0]),
                        DataType::Json => {
                            bound.push(t.0);
                            continue;
                        }
                        _ => t.0,
                    };
                    let key = name == "json_build_object" && i % 2 == 0;
                    bound.push(if key {
                        e
                    } else {
                        Expr::Func(Func::ToJson, vec![e])
                    });
                }
                match name.as_str() {
                    "json_build_object" => (Func::JsonBuildObject, DataType::Json, bound),
                    "json_build_array" => (Func::JsonBuildArray, DataType::Json, bound),
                    _ => {
                        return Ok((
                            bound.pop().unwrap_or(Expr::Const(Value::Null)),
                            DataType::Json,
                        ))
                    }
                }
            }
            "nullif" => {
                arity(2)?;
                let (a, b) = self.bind_pair(&args[0], &args[1], scope)?;
                let ty = self.bind(&args[0], scope)?.1;
                let ty = if ty == DataType::Unknown {
                    DataType::Text
                } else {
                    ty
                };
                (Func::NullIf, ty, vec![a, b])
            }
            "to_regclass" | "to_regtype" => {
                arity(1)?;
                let a = self.bind_text(&args[0], scope)?;
                if name == "to_regclass" {
                    (Func::ToRegClass, DataType::RegClass, vec![a])
                } else {
                    (Func::ToRegType, DataType::RegType, vec![a])
                }
            }
            _ => {
                // Named with its arguments' types, as PostgreSQL names it.
                let mut types = Vec::with_capacity(args.len());
                for a in args.iter() {
                    types.push(match self.bind(a, scope)?.1 {
                        DataType::Unknown => "unknown".to_string(),
                        t => t.name(),
                    });
                }
                return Err(Error::new(
                    SqlState::UNDEFINED_FUNCTION,
                    format!("function {name}({}) does not exist", types.join(", ")),
                )
                .with_hint("No function matches the given name and argument types. You might need to add explicit type casts."));
            }
        };
        Ok((Expr::Func(func, bound), ty))
    }

    fn bind_aggregate(
        &mut self,
        agg: AggFunc,
        name: &str,
        args: &[ast::Expr],
        star: bool,
        distinct: bool,
        scope: &Scope,
    ) -> Result<Typed> {
        if let Some(clause) = self.no_aggregates {
            return Err(Error::new(
                SqlState::GROUPING_ERROR,
                format!("aggregate functions are not allowed in {clause}"),
            ));
        }
        if agg.is_ordered_set() {
            // Without WITHIN GROUP there is no such function, as PostgreSQL finds.
            let grouping = self.grouping.take();
            let types = args
                .iter()
                .map(|a| Ok(self.bind(a, scope)?.1.name()))
                .collect::<Result<Vec<_>>>();
            self.grouping = grouping;
            return Err(no_such_function(name, &types?));
        }
        if self.grouping.is_none() {
            return Err(Error::internal("aggregate outside a grouped query"));
        }
        let (arg, arg_type) = if star {
            if agg != AggFunc::Count {
                return Err(Error::syntax(format!(
                    "{name}(*) is not valid; only count(*) takes *"
                )));
            }
            (None, DataType::Int8)
        } else {
            let want = match agg {
                AggFunc::StringAgg | AggFunc::JsonbObjectAgg | AggFunc::JsonObjectAgg => 2,
                _ => 1,
            };
            if args.len() != want {
                return Err(Error::new(
                    SqlState::UNDEFINED_FUNCTION,
                    format!(
                        "function {name} with {} arguments does not exist",
                        args.len()
                    ),
                ));
            }
            // Arguments are bound against input rows, where aggregates may not nest.
            let grouping = self.grouping.take();
            self.no_aggregates = Some("aggregate function calls");
            let bound = self.bind(&args[0], scope);
            let delimiter = args.get(1).map(|d| self.bind(d, scope));
            self.no_aggregates = None;
            self.grouping = grouping;
            let t = bound?;
            let delimiter = match (agg, delimiter) {
                (AggFunc::JsonbAgg, _) => {
                    let v = self.jsonb_value(t)?;
                    return self.push_aggregate(agg, Some(v), DataType::Jsonb, None, distinct);
                }
                (AggFunc::JsonAgg, _) => {
                    let ty = match t.1 {
                        DataType::Unknown => DataType::Text,
                        ty => ty,
                    };
                    let v = self.coerce(t, ty)?;
                    return self.push_aggregate(agg, Some(v), ty, None, distinct);
                }
                (AggFunc::JsonObjectAgg, Some(v)) => {
                    let key = self.as_text(t)?;
                    // The call's argument is the key (text) and its "delimiter" the
                    // value, whose type `arg_type` carries (json values are embedded).
                    let v = v?;
                    let ty = match v.1 {
                        DataType::Unknown => DataType::Text,
                        ty => ty,
                    };
                    let v = self.coerce(v, ty)?;
                    return self.push_aggregate(agg, Some(key), ty, Some(v), distinct);
                }
                (AggFunc::JsonbObjectAgg, Some(v)) => {
                    let key = self.as_text(t)?;
                    let v = self.jsonb_value(v?)?;
                    return self.push_aggregate(agg, Some(key), DataType::Text, Some(v), distinct);
                }
                (_, delimiter) => delimiter,
            };
            if let Some(d) = delimiter {
                let d = d?;
                let (value_type, d_type) = match (t.1, d.1) {
                    (DataType::Bytea, DataType::Bytea | DataType::Unknown) => {
                        (DataType::Bytea, DataType::Bytea)
                    }
                    (v, dt) if (v.is_string() || v == DataType::Unknown)
                        && (dt.is_string() || dt == DataType::Unknown) =>
                    {
                        (DataType::Text, DataType::Text)
                    }
                    (v, dt) => {
                        return Err(Error::new(
                            SqlState::UNDEFINED_FUNCTION,
                            format!("function string_agg({}, {}) does not exist", v.name(), dt.name()),
                        )
                        .with_hint("No function matches the given name and argument types. You might need to add explicit type casts."))
                    }
                };
                let value = self.coerce(t, value_type)?;
                let d = self.coerce(d, d_type)?;
                return self.push_aggregate(agg, Some(value), value_type, Some(d), distinct);
            }
            let ty = match (agg, t.1) {
                (AggFunc::Count, DataType::Unknown) => DataType::Text,
                (_, DataType::Unknown) => {
                    return Err(Error::new(
                        SqlState::UNDEFINED_FUNCTION,
                        format!("function {name}(unknown) is not unique"),
                    ));
                }
                (AggFunc::BoolAnd | AggFunc::BoolOr, t) if t != DataType::Bool => {
                    return Err(Error::new(
                        SqlState::UNDEFINED_FUNCTION,
                        format!("function {name}({}) does not exist", t.name()),
                    ));
                }
                (AggFunc::ArrayAgg, t) if types::array_of(t).is_none() => {
                    return Err(Error::unsupported(format!(
                        "arrays of type {} are not supported yet",
                        t.name()
                    )));
                }
                // uuid has no min or max (nor any aggregate but count), as in
                // PostgreSQL 15.
                (AggFunc::Min | AggFunc::Max, t @ (DataType::Uuid | DataType::Jsonb)) => {
                    return Err(Error::new(
                        SqlState::UNDEFINED_FUNCTION,
                        format!("function {name}({}) does not exist", t.name()),
                    ));
                }
                (AggFunc::Variance { .. }, t) if !t.is_numeric() => {
                    return Err(Error::new(
                        SqlState::UNDEFINED_FUNCTION,
                        format!("function {name}({}) does not exist", t.name()),
                    ));
                }
                (AggFunc::BitAnd | AggFunc::BitOr, t) if !t.is_integer() => {
                    return Err(Error::new(
                        SqlState::UNDEFINED_FUNCTION,
                        format!("function {name}({}) does not exist", t.name()),
                    ));
                }
                (AggFunc::Sum | AggFunc::Avg, t) if !t.is_numeric() && t != DataType::Interval => {
                    return Err(Error::new(
                        SqlState::UNDEFINED_FUNCTION,
                        format!("function {name}({}) does not exist", t.name()),
                    ));
                }
                (_, t) => t,
            };
            let e = self.coerce(t, ty)?;
            (Some(e), ty)
        };
        self.push_aggregate(agg, arg, arg_type, None, distinct)
    }

    /// `generate_series`'s bound arguments resolved to one integer type (bigint if one
    /// is), or to timestamps stepped by an interval (timestamptz if a date or a
    /// timestamptz starts or stops it); None when they are neither.
    pub fn generate_series_args(
        &mut self,
        bound: Vec<Typed>,
    ) -> Result<Option<(Vec<Expr>, DataType)>> {
        let ends: Vec<DataType> = bound.iter().take(2).map(|(_, t)| *t).collect();
        let datetime = |t: &DataType| {
            matches!(
                t,
                DataType::Timestamp | DataType::TimestampTz | DataType::Date
            )
        };
        if bound.len() == 3 && ends.iter().any(datetime) {
            let ty = if ends
                .iter()
                .any(|t| *t != DataType::Timestamp && datetime(t))
            {
                DataType::TimestampTz
            } else {
                DataType::Timestamp
            };
            if !ends.iter().all(|t| datetime(t) || *t == DataType::Unknown)
                || !matches!(bound[2].1, DataType::Interval | DataType::Unknown)
            {
                return Ok(None);
            }
            let mut args = Vec::new();
            for (i, t) in bound.into_iter().enumerate() {
                let to = if i < 2 { ty } else { DataType::Interval };
                args.push(match t.1 {
                    DataType::Unknown => self.coerce(t, to)?,
                    from if from != to => self.cast(t, to)?.0,
                    _ => t.0,
                });
            }
            return Ok(Some((args, ty)));
        }
        let ty = if bound.iter().any(|(_, t)| *t == DataType::Int8) {
            DataType::Int8
        } else {
            DataType::Int4
        };
        let mut args = Vec::new();
        for t in bound {
            if !(t.1.is_integer() || t.1 == DataType::Unknown) {
                return Ok(None);
            }
            args.push(self.coerce(t, ty)?);
        }
        Ok(Some((args, ty)))
    }

    /// A set-returning function in an expression: only at the top of a select list.
    fn bind_set_returning(
        &mut self,
        name: &str,
        args: &[ast::Expr],
        scope: &Scope,
    ) -> Result<Typed> {
        // In a select list (at the top of an item, or inside one: the item is evaluated
        // per value), but not in an aggregate's argument nor in another's arguments.
        if let Some(construct) = self.no_set_returning {
            return Err(Error::unsupported(format!(
                "set-returning functions are not allowed in {construct}"
            )));
        }
        if !self.allow_set_returning || self.no_aggregates.is_some() {
            return Err(Error::unsupported(match self.no_aggregates {
                Some(clause) => format!("set-returning functions are not allowed in {clause}"),
                None => "set-returning functions are supported only in a select list".into(),
            }));
        }
        self.allow_set_returning = false;
        let bound = args
            .iter()
            .map(|a| self.bind(a, scope))
            .collect::<Result<Vec<_>>>();
        self.allow_set_returning = true;
        let bound = bound?;
        let arg_types: Vec<String> = bound.iter().map(|(_, t)| t.name()).collect();
        let no_function = || {
            Error::new(
                SqlState::UNDEFINED_FUNCTION,
                format!("function {name}({}) does not exist", arg_types.join(", ")),
            )
            .with_hint("No function matches the given name and argument types. You might need to add explicit type casts.")
        };
        use super::plan::TableFunctionKind as K;
        let (kind, args, ty) = match (name, bound.len()) {
            ("unnest", 1) => {
                let mut bound = bound;
                let Some((e, t)) = bound.pop() else {
                    return Err(no_function());
                };
                let Some(elem) = t.element() else {
                    return Err(no_function());
                };
                (K::Unnest, vec![e], elem)
            }
            ("generate_series", 2 | 3) => {
                let (args, ty) = self.generate_series_args(bound)?.ok_or_else(no_function)?;
                (K::GenerateSeries, args, ty)
            }
            ("regexp_matches" | "regexp_split_to_table", _) => self
                .regexp_set_function(name, bound)?
                .ok_or_else(no_function)?,
            ("_pg_expandarray", 1) => {
                let mut bound = bound;
                let Some((e, t)) = bound.pop() else {
                    return Err(no_function());
                };
                let row = t.element().and_then(types::expanded_array_type);
                let Some(row) = row else {
                    return Err(no_function());
                };
                (
                    K::ExpandArray(super::plan::ExpandOutput::Record),
                    vec![e],
                    row,
                )
            }
            ("pg_partition_ancestors", 1) => {
                let mut bound = bound;
                let Some(a) = bound.pop() else {
                    return Err(no_function());
                };
                let a = self.coerce(a, DataType::RegClass)?;
                (K::PartitionAncestors, vec![a], DataType::RegClass)
            }
            (n, 1) if super::json_functions::JsonbSet::by_name(n).is_some() => {
                let set = super::json_functions::JsonbSet::by_name(n).ok_or_else(no_function)?;
                let a = self.jsonb_document(bound).ok_or_else(no_function)??;
                // In a select list, more than one column is a record of them.
                let ty = match set.columns() {
                    [(_, t)] => *t,
                    columns => DataType::Record(columns),
                };
                (K::Jsonb(set), vec![a], ty)
            }
            ("generate_subscripts", 2) => {
                let mut bound = bound.into_iter();
                let (Some(a), Some(d)) = (bound.next(), bound.next()) else {
                    return Err(no_function());
                };
                if a.1.element().is_none() || !(d.1 == DataType::Int4 || d.1 == DataType::Unknown) {
                    return Err(no_function());
                }
                let d = self.coerce(d, DataType::Int4)?;
                (K::GenerateSubscripts, vec![a.0, d], DataType::Int4)
            }
            _ => return Err(no_function()),
        };
        let f = super::plan::TableFunction {
            kind,
            args,
            ordinality: false,
        };
        Ok((Expr::SetReturning(std::sync::Arc::new(f)), ty))
    }

    /// `agg(x) FILTER (WHERE cond)`: the aggregate just added takes only the input rows
    /// the condition holds for.
    fn filter_last_aggregate(&mut self, filter: &ast::Expr, scope: &Scope) -> Result<()> {
        let grouping = self.grouping.take();
        self.no_aggregates = Some("FILTER");
        let cond = self.bind_bool(filter, scope, "FILTER");
        self.no_aggregates = None;
        self.grouping = grouping;
        let cond = cond?;
        let call = self
            .grouping
            .as_mut()
            .and_then(|g| g.aggs.last_mut())
            .ok_or_else(|| Error::internal("filtered aggregate outside a grouped query"))?;
        call.filter = Some(cond);
        Ok(())
    }

    /// `agg(x ORDER BY ...)`: the keys of the aggregate just added, over input rows.
    fn order_last_aggregate(&mut self, order: &[ast::OrderByExpr], scope: &Scope) -> Result<()> {
        let grouping = self.grouping.take();
        self.no_aggregates = Some("aggregate function calls");
        let keys: Result<Vec<_>> = order
            .iter()
            .map(|o| {
                let t = self.bind(&o.expr, scope)?;
                let expr = self.coerce(t, DataType::Text)?;
                let desc = matches!(o.options.sort, Some(ast::OrderBySort::Desc));
                Ok(super::plan::OrderKey {
                    expr,
                    desc,
                    nulls_first: o.options.nulls_first.unwrap_or(desc),
                })
            })
            .collect();
        self.no_aggregates = None;
        self.grouping = grouping;
        let keys = keys?;
        let call = self
            .grouping
            .as_mut()
            .and_then(|g| g.aggs.last_mut())
            .ok_or_else(|| Error::internal("ordered aggregate outside a grouped query"))?;
        if call.distinct {
            let arg = format!("{:?}", call.arg);
            if keys.iter().any(|k| format!("{:?}", Some(&k.expr)) != arg) {
                return Err(Error::new(
                    SqlState::INVALID_COLUMN_REFERENCE,
                    "in an aggregate with DISTINCT, ORDER BY expressions must appear in argument list",
                ));
            }
        }
        call.order_by = keys;
        Ok(())
    }

    /// `percentile_cont(fraction)`, `percentile_disc(fraction)` or `mode()` `WITHIN GROUP
    /// (ORDER BY x)`: an aggregate over the sorted `x`, NULLs left out.
    fn bind_ordered_set(&mut self, f: &ast::Function, name: &str, scope: &Scope) -> Result<Typed> {
        if let Some(clause) = self.no_aggregates {
            return Err(Error::new(
                SqlState::GROUPING_ERROR,
                format!("aggregate functions are not allowed in {clause}"),
            ));
        }
        let direct: Vec<&ast::Expr> = match &f.args {
            ast::FunctionArguments::None => Vec::new(),
            ast::FunctionArguments::List(l) if l.clauses.is_empty() => l
                .args
                .iter()
                .map(|a| match a {
                    ast::FunctionArg::Unnamed(ast::FunctionArgExpr::Expr(e)) => Ok(e),
                    _ => Err(Error::unsupported(format!(
                        "argument form not supported in {name}()"
                    ))),
                })
                .collect::<Result<_>>()?,
            _ => {
                return Err(Error::unsupported(format!(
                    "this call of {name}() is not supported"
                )))
            }
        };
        // The sorted input and the fraction are over input rows.
        let grouping = self.grouping.take();
        self.no_aggregates = Some("aggregate function calls");
        let bound = (|| -> Result<_> {
            let sorted = f
                .within_group
                .iter()
                .map(|o| Ok((self.bind(&o.expr, scope)?, o)))
                .collect::<Result<Vec<_>>>()?;
            let direct = direct
                .iter()
                .map(|e| self.bind(e, scope))
                .collect::<Result<Vec<_>>>()?;
            Ok((sorted, direct))
        })();
        self.no_aggregates = None;
        self.grouping = grouping;
        let (mut sorted, mut direct) = bound?;
        let agg = AggFunc::from_name(name).filter(|a| a.is_ordered_set());
        let wanted_direct = usize::from(agg != Some(AggFunc::Mode));
        let Some(agg) = agg.filter(|_| sorted.len() == 1 && direct.len() == wanted_direct) else {
            let types: Vec<String> = direct
                .iter()
                .map(|t| t.1.name())
                .chain(sorted.iter().map(|(t, _)| t.1.name()))
                .collect();
            return Err(no_such_function(name, &types));
        };
        let (x, order) = sorted.remove(0);
        let shown: Vec<String> = direct
            .iter()
            .map(|t| t.1.name())
            .chain([x.1.name()])
            .collect();
        let (x, arg_type) = match agg {
            AggFunc::PercentileCont if x.1 == DataType::Interval => (x.0, DataType::Interval),
            AggFunc::PercentileCont => {
                if !(x.1.is_numeric() || x.1 == DataType::Unknown) {
                    return Err(no_such_function(name, &shown));
                }
                (self.cast_or_coerce(x, DataType::Float8)?, DataType::Float8)
            }
            _ if x.1 == DataType::Unknown => (self.coerce(x, DataType::Text)?, DataType::Text),
            _ => (x.0, x.1),
        };
        let fraction = match direct.pop() {
            Some(t) => {
                if !(t.1.is_numeric() || t.1 == DataType::Unknown) {
                    return Err(no_such_function(name, &shown));
                }
                Some(self.cast_or_coerce(t, DataType::Float8)?)
            }
            None => None,
        };
        let desc = matches!(order.options.sort, Some(ast::OrderBySort::Desc));
        let typed = self.push_aggregate(agg, Some(x.clone()), arg_type, fraction, false)?;
        if let Some(call) = self.grouping.as_mut().and_then(|g| g.aggs.last_mut()) {
            call.order_by = vec![super::plan::OrderKey {
                expr: x,
                desc,
                nulls_first: order.options.nulls_first.unwrap_or(desc),
            }];
        }
        if let Some(filter) = &f.filter {
            self.filter_last_aggregate(filter, scope)?;
        }
        Ok(typed)
    }

    /// Add an aggregate call to the grouped query: it is the aggregate row's next column.
    fn push_aggregate(
        &mut self,
        func: AggFunc,
        arg: Option<Expr>,
        arg_type: DataType,
        delimiter: Option<Expr>,
        distinct: bool,
    ) -> Result<Typed> {
        let g = self
            .grouping
            .as_mut()
            .ok_or_else(|| Error::internal("aggregate outside a grouped query"))?;
        let idx = g.keys.len() + g.aggs.len();
        // DISTINCT takes its inputs in order (as PostgreSQL's sort does), unless ORDER BY
        // says otherwise.
        let order_by = match (&arg, distinct) {
            (Some(a), true) => vec![super::plan::OrderKey {
                expr: a.clone(),
                desc: false,
                nulls_first: false,
            }],
            _ => Vec::new(),
        };
        g.aggs.push(AggCall {
            func,
            arg,
            arg_type,
            delimiter,
            order_by,
            distinct,
            filter: None,
        });
        Ok((Expr::Column(idx), func.result_type(arg_type)))
    }
}

/// `interval 'text' FIELD [TO FIELD]` (or `SECOND(p)`) of a constant text.
fn qualified_interval(iv: &ast::Interval) -> Result<crate::types::Interval> {
    use crate::types::IntervalField as F;
    let field = |f: &ast::DateTimeField| -> Result<F> {
        Ok(match f {
            ast::DateTimeField::Year | ast::DateTimeField::Years => F::Year,
            ast::DateTimeField::Month | ast::DateTimeField::Months => F::Month,
            ast::DateTimeField::Day | ast::DateTimeField::Days => F::Day,
            ast::DateTimeField::Hour | ast::DateTimeField::Hours => F::Hour,
            ast::DateTimeField::Minute | ast::DateTimeField::Minutes => F::Minute,
            ast::DateTimeField::Second | ast::DateTimeField::Seconds => F::Second,
            other => {
                return Err(Error::syntax(format!(
                    "syntax error at or near \"{}\"",
                    other.to_string().to_lowercase()
                )))
            }
        })
    };
    let leading = match &iv.leading_field {
        Some(f) => field(f)?,
        None => F::Second,
    };
    let last = iv.last_field.as_ref().map(field).transpose()?;
    if let (Some(l), Some(f)) = (last, &iv.last_field) {
        if l <= leading {
            return Err(Error::syntax(format!(
                "syntax error at or near \"{}\"",
                f.to_string().to_lowercase()
            )));
        }
    }
    // SECOND(p) alone gives its precision as the leading one.
    let precision = match (leading, last) {
        (F::Second, None) => iv.fractional_seconds_precision.or(iv.leading_precision),
        _ => iv.fractional_seconds_precision,
    };
    let precision = precision.map(|p| p.min(6) as u32);
    let text = match iv.value.as_ref() {
        ast::Expr::Value(v) => match &v.value {
            ast::Value::SingleQuotedString(s) => s.clone(),
            ast::Value::Number(n, _) => n.clone(),
            _ => String::new(),
        },
        _ => {
            return Err(Error::unsupported(
                "an interval qualifier on a value other than a constant is not supported yet",
            ))
        }
    };
    crate::types::parse_interval_in_fields(&text, leading, last, precision)
}
