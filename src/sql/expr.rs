//! Bound expressions and their evaluation. Column references are positions in the row the
//! expression is evaluated against; types were resolved by the planner. Subqueries run
//! through [`Subqueries`] (the executor, which has the transaction); inside one, the
//! enclosing query's values it refers to are `Expr::Outer`.

use std::cmp::Ordering;

use md5::{Digest, Md5};

use crate::error::{Error, Result, SqlState};
use crate::types::{self, ArithOp, DataType, Value};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CmpOp {
    Eq,
    NotEq,
    Lt,
    LtEq,
    Gt,
    GtEq,
}

impl CmpOp {
    fn test(self, ord: Ordering) -> bool {
        match self {
            CmpOp::Eq => ord == Ordering::Equal,
            CmpOp::NotEq => ord != Ordering::Equal,
            CmpOp::Lt => ord == Ordering::Less,
            CmpOp::LtEq => ord != Ordering::Greater,
            CmpOp::Gt => ord == Ordering::Greater,
            CmpOp::GtEq => ord != Ordering::Less,
        }
    }

    pub fn symbol(self) -> &'static str {
        match self {
            CmpOp::Eq => "=",
            CmpOp::NotEq => "<>",
            CmpOp::Lt => "<",
            CmpOp::LtEq => "<=",
            CmpOp::Gt => ">",
            CmpOp::GtEq => ">=",
        }
    }

    /// The operator with its operands swapped (`a < b` is `b > a`).
    pub fn flip(self) -> CmpOp {
        match self {
            CmpOp::Lt => CmpOp::Gt,
            CmpOp::LtEq => CmpOp::GtEq,
            CmpOp::Gt => CmpOp::Lt,
            CmpOp::GtEq => CmpOp::LtEq,
            other => other,
        }
    }
}

/// Scalar functions we implement.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Func {
    Now,
    ClockTimestamp,
    Random,
    Md5,
    Length,
    /// `octet_length`: bytes, not characters.
    OctetLength,
    Lower,
    Upper,
    Coalesce,
    /// greatest(...) and least(...): NULLs skipped.
    Greatest,
    Least,
    /// left(text, n) and right(text, n): characters from one end (n < 0: all but |n|).
    Left,
    Right,
    /// lpad and rpad(text, length[, fill]).
    Lpad,
    Rpad,
    /// split_part(text, delimiter, n).
    SplitPart,
    /// date_trunc(unit, timestamp or timestamptz[, zone]).
    DateTrunc,
    Abs,
    /// Integer `&`, `|`, `#`, `<<`, `>>` (both operands of the result's type; a shift's
    /// count an integer).
    BitAnd,
    BitOr,
    BitXor,
    ShiftLeft,
    ShiftRight,
    Nextval,
    Currval,
    Lastval,
    /// setval(sequence, value[, is_called]).
    Setval,
    Version,
    CurrentDatabase,
    CurrentUser,
    SessionUser,
    BackendPid,
    CurrentSetting,
    /// `set_config(name, value, is_local)`: applied by the session when the statement
    /// ends ([`EvalContext::set_settings`]).
    SetConfig,
    /// `current_schema()`: every table is in `public`.
    CurrentSchema,
    /// `pg_reload_conf()`.
    ReloadConf,
    /// `pg_cancel_backend(pid)`.
    CancelBackend,
    /// `pg_promote([wait [, wait_seconds]])`.
    Promote,
    /// `pg_is_in_recovery()`.
    IsInRecovery,
    /// `pg_current_wal_lsn()`, `pg_current_wal_flush_lsn()`, `pg_current_wal_insert_lsn()`.
    CurrentWalLsn,
    /// `pg_last_wal_receive_lsn()`.
    LastWalReceiveLsn,
    /// `pg_last_wal_replay_lsn()`.
    LastWalReplayLsn,
    /// char(n) → text: drops trailing blanks, as PostgreSQL's bpchar-to-text conversion does.
    BpcharToText,
    /// `pg_get_userbyid(oid)`.
    UserById,
    /// `pg_table_is_visible(oid)`: whether the relation is in a schema of the search path.
    TableIsVisible,
    /// `pg_type_is_visible(oid)`.
    TypeIsVisible,
    /// `pg_collation_is_visible(oid)`.
    CollationIsVisible,
    /// `format_type(oid, typmod)`.
    FormatType,
    /// `pg_get_expr(text, relation[, pretty])`: the catalogs hold expressions as text.
    GetExpr,
    /// `pg_get_indexdef(oid[, column, pretty])`.
    IndexDef,
    /// `pg_get_constraintdef(oid[, pretty])`.
    ConstraintDef,
    /// `pg_get_viewdef(oid[, pretty])`.
    ViewDef,
    /// `pg_encoding_to_char(int)`.
    EncodingToChar,
    /// `obj_description`, `col_description`, `shobj_description`: nothing has a comment.
    Description,
    /// `pg_get_serial_sequence(table, column)`.
    SerialSequence,
    /// `text::regclass`: 42P01 when there is no such relation.
    RegClassIn,
    /// `oid::regclass`.
    RegClassOfOid,
    /// `to_regclass(text)`: NULL when there is no such relation.
    ToRegClass,
    /// `text::regtype`: 42704 when there is no such type.
    RegTypeIn,
    /// `oid::regtype`.
    RegTypeOfOid,
    /// `to_regtype(text)`.
    ToRegType,
    /// `text::regnamespace`: 3F000 when there is no such schema.
    RegNamespaceIn,
    RegProcIn,
    Extract,
    DatePart,
    Substring,
    GenRandomUuid,
    Repeat,
    FunctionDef,
    RelationSize,
    TableSize,
    IndexesSize,
    TotalRelationSize,
    DatabaseSize,
    SizePretty,
    FunctionIsVisible,
    NameChar,
    QuoteLiteral,
    AclDefault,
    CurrentSchemas,
    ArrayRemove,
    RegProcOfOid,
    /// `oid::regnamespace`.
    RegNamespaceOfOid,
    /// `quote_ident(text)`.
    QuoteIdent,
    /// `pg_get_statisticsobjdef_columns(oid)`: there are no extended statistics.
    StatisticsColumns,
    /// `pg_relation_is_publishable(regclass)`: whether it is a permanent user table.
    RelationIsPublishable,
    /// The everyday scalar functions of `scalar_functions.rs`.
    Scalar(super::scalar_functions::ScalarFunc),
    /// has_table_privilege and its relatives: (role or NULL for the current one,
    /// object, privileges).
    HasPrivilege(super::catalog_functions::PrivilegeOf),
    /// `text ~ pattern`.
    RegexMatch,
    /// `text ~* pattern`.
    RegexIMatch,
    /// `array[i]`: NULL out of bounds.
    ArrayElement,
    /// `(record).field`: the field at the (0-based) position the second argument gives.
    RecordField,
    /// `array_to_string(array, delimiter[, null_text])` (not strict in `null_text`).
    ArrayToString,
    /// `||` with an array: array || array, array || element, element || array (a NULL
    /// array counts as empty, a NULL element is an element).
    ArrayCat,
    /// `array_upper(array, dim)`.
    ArrayUpper,
    /// `array_lower(array, dim)`.
    ArrayLower,
    /// `array_length(array, dim)`.
    ArrayLength,
    /// `cardinality(array)`.
    Cardinality,
    /// `json_build_object(key, value, ...)` (not strict).
    JsonBuildObject,
    /// `json_build_array(value, ...)` (not strict).
    JsonBuildArray,
    /// `to_json(value)`.
    ToJson,
    /// `nullif(a, b)`: NULL when a = b, else a (not strict).
    NullIf,
    /// jsonb's operators and functions (`json_functions.rs`).
    Jsonb(super::json_functions::JsonbFunc),
    /// `ROW(...)`, or a whole row: a record of the arguments (not strict).
    Row(&'static [(&'static str, DataType)]),
    /// `(a1, a2, ...) op (b1, b2, ...)` over the arguments `a1, b1, a2, b2, ...`: `=`
    /// and `<>` over every pair, the others decided by the first pair that is unequal or
    /// has a NULL (not strict).
    RowCompare(CmpOp),
}

#[derive(Clone, Debug)]
pub enum Expr {
    Const(Value),
    /// `$n` (zero-based here).
    Param(usize),
    Column(usize),
    Neg(Box<Expr>),
    Not(Box<Expr>),
    Arith(ArithOp, Box<Expr>, Box<Expr>),
    Cmp(CmpOp, Box<Expr>, Box<Expr>),
    And(Box<Expr>, Box<Expr>),
    Or(Box<Expr>, Box<Expr>),
    Concat(Box<Expr>, Box<Expr>),
    IsNull(Box<Expr>, bool),
    /// IS [NOT] TRUE / FALSE: (expr, value tested, negated).
    IsBool(Box<Expr>, bool, bool),
    IsDistinct(Box<Expr>, Box<Expr>, bool),
    Like {
        expr: Box<Expr>,
        pattern: Box<Expr>,
        negated: bool,
        case_insensitive: bool,
    },
    InList {
        expr: Box<Expr>,
        list: Vec<Expr>,
        negated: bool,
    },
    Case {
        operand: Option<Box<Expr>>,
        whens: Vec<(Expr, Expr)>,
        otherwise: Option<Box<Expr>>,
    },
    Cast(Box<Expr>, DataType),
    Func(Func, Vec<Expr>),
    /// A value of the enclosing query, inside a subquery (see [`Subquery`]).
    Outer(usize),
    /// `ARRAY[a, b, ...]` of the element type.
    Array(&'static DataType, Vec<Expr>),
    /// A set-returning function at the top of a select list: the executor makes one
    /// output row per value (several run in lockstep); it has no single value.
    SetReturning(std::sync::Arc<super::plan::TableFunction>),
    /// `left op ANY (array)`, or with `all`, `left op ALL (array)`.
    AnyArray {
        left: Box<Expr>,
        op: CmpOp,
        all: bool,
        array: Box<Expr>,
    },
    Subquery(std::sync::Arc<Subquery>),
}

/// What an expression may need besides the row: parameters and session facts.
pub struct EvalContext<'a> {
    pub params: &'a [Value],
    /// Transaction start time (what now() returns), microseconds since 2000-01-01 UTC.
    pub txn_start_us: i64,
    pub backend_pid: i32,
    /// `current_user` (SET ROLE's role, else the session user).
    pub user: &'a str,
    /// `session_user`.
    pub session_user: &'a str,
    /// The roles whose privileges the current user has (`Catalog::roles_of`), for the
    /// functions that check privileges as they run (nextval, setval, pg_reload_conf, ...);
    /// None for a superuser, who has them all.
    pub roles: Option<&'a [u32]>,
    pub engine: &'a crate::engine::Engine,
    pub settings: &'a dyn Fn(&str) -> Option<String>,
    /// The end of any log record written while evaluating (sequence advances).
    pub logged_upto: std::cell::Cell<u64>,
    /// Settings `set_config` changed in this statement, in order: (name, value, local).
    /// `current_setting` sees them at once; the session applies them when it ends.
    pub set_settings: std::cell::RefCell<Vec<(&'static str, String, bool)>>,
    /// The session's sequence values, for currval and lastval.
    pub sequences: &'a parking_lot::Mutex<SessionSequences>,
    /// The sequences the transaction created or dropped and has not committed.
    pub pending: PendingRelations,
}

/// The relations a transaction created and dropped and has not committed: it does not
/// see those it dropped, nor those another transaction created and has not committed.
#[derive(Default)]
pub struct PendingRelations {
    pub created: Vec<crate::storage::TableId>,
    pub dropped: Vec<crate::storage::TableId>,
    /// The tables whose definitions the transaction changed: it sees its own change,
    /// others the committed definition.
    pub altered: Vec<crate::storage::TableId>,
}

impl PendingRelations {
    pub fn hides(&self, catalog: &crate::storage::Catalog, id: crate::storage::TableId) -> bool {
        catalog.hides(id, &self.created, &self.dropped)
    }

    /// The sequence named `name`, if the transaction sees it.
    pub fn sequence(
        &self,
        catalog: &crate::storage::Catalog,
        name: &str,
    ) -> Option<std::sync::Arc<crate::storage::Sequence>> {
        catalog.sequence_seen(name, &|id| self.hides(catalog, id))
    }
}

/// The last value nextval gave this session for each sequence (or setval set), and the
/// sequence nextval was last called on: what currval and lastval return.
#[derive(Debug, Default)]
pub struct SessionSequences {
    values: rustc_hash::FxHashMap<String, i64>,
    last: Option<String>,
}

fn truth(v: &Value) -> Result<Option<bool>> {
    match v {
        Value::Null => Ok(None),
        Value::Bool(b) => Ok(Some(*b)),
        other => Err(Error::new(
            SqlState::DATATYPE_MISMATCH,
            format!(
                "argument of boolean expression must be type boolean, not {:?}",
                other.data_type().map(|t| t.name())
            ),
        )),
    }
}

pub use crate::types::now_us;

/// Where an expression's subqueries run: the executor, which has the transaction.
pub trait Subqueries {
    /// Value `i` the enclosing query passed to the subquery being evaluated.
    fn outer(&self, i: usize) -> Result<Value>;
    /// The rows of `sub` for these values of its outer references.
    fn rows(&self, sub: &Subquery, args: Vec<Value>) -> Result<std::rc::Rc<Vec<Vec<Value>>>>;
}

/// A subquery in an expression. Its plan reads the enclosing query's values it refers to
/// as [`Expr::Outer`]: `Outer(i)` is `args[i]`, evaluated over the enclosing row. Without
/// args it is uncorrelated, and runs once per statement.
pub struct Subquery {
    pub plan: std::sync::Arc<super::plan::SelectPlan>,
    pub args: Vec<Expr>,
    pub test: SubqueryTest,
}

impl std::fmt::Debug for Subquery {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Subquery({:?}, args {:?})", self.test, self.args)
    }
}

#[derive(Clone, Debug)]
pub enum SubqueryTest {
    /// `(SELECT ...)`: its one value, NULL without rows; more than one row is an error.
    Scalar,
    /// `EXISTS (SELECT ...)`.
    Exists,
    /// `ARRAY(SELECT ...)`: its one column's values as an array of the element type.
    Array(&'static DataType),
    /// `left op ANY (SELECT ...)` (`IN` is `= ANY`), or with `all`, `left op ALL (...)`.
    Quantified {
        left: Box<Expr>,
        op: CmpOp,
        all: bool,
    },
}

/// `left op ANY (rights)` (true if one comparison is true, else NULL if one is NULL) or
/// `left op ALL (rights)` (false if one is false, else NULL if one is NULL).
fn quantified<'v>(
    left: &Value,
    op: CmpOp,
    all: bool,
    rights: impl Iterator<Item = &'v Value>,
) -> Result<Value> {
    let mut unknown = false;
    for right in rights {
        match compare_values(op, left, right)? {
            Value::Bool(b) if b != all => return Ok(Value::Bool(b)),
            Value::Null => unknown = true,
            _ => {}
        }
    }
    Ok(if unknown {
        Value::Null
    } else {
        Value::Bool(all)
    })
}

impl Subquery {
    fn eval(&self, row: &[Value], ctx: &EvalContext, sq: &dyn Subqueries) -> Result<Value> {
        let args = self
            .args
            .iter()
            .map(|a| a.eval(row, ctx, sq))
            .collect::<Result<Vec<_>>>()?;
        match &self.test {
            SubqueryTest::Scalar => {
                let rows = sq.rows(self, args)?;
                if rows.len() > 1 {
                    return Err(Error::new(
                        SqlState::CARDINALITY_VIOLATION,
                        "more than one row returned by a subquery used as an expression",
                    ));
                }
                Ok(rows
                    .first()
                    .and_then(|r| r.first().cloned())
                    .unwrap_or(Value::Null))
            }
            SubqueryTest::Exists => Ok(Value::Bool(!sq.rows(self, args)?.is_empty())),
            SubqueryTest::Array(e) => {
                let rows = sq.rows(self, args)?;
                let items: Vec<Value> = rows
                    .iter()
                    .map(|r| r.first().cloned().unwrap_or(Value::Null))
                    .collect();
                Ok(Value::Array(e, items.into()))
            }
            SubqueryTest::Quantified { left, op, all } => {
                let left = left.eval(row, ctx, sq)?;
                let rows = sq.rows(self, args)?;
                quantified(
                    &left,
                    *op,
                    *all,
                    rows.iter().map(|r| r.first().unwrap_or(&Value::Null)),
                )
            }
        }
    }
}

impl Expr {
    pub fn eval(&self, row: &[Value], ctx: &EvalContext, sq: &dyn Subqueries) -> Result<Value> {
        Ok(match self {
            Expr::Outer(i) => sq.outer(*i)?,
            Expr::SetReturning(_) => {
                return Err(Error::internal(
                    "set-returning function evaluated for one value",
                ))
            }
            Expr::Array(e, items) => {
                let values = items
                    .iter()
                    .map(|x| x.eval(row, ctx, sq))
                    .collect::<Result<Vec<_>>>()?;
                Value::Array(e, values.into())
            }
            Expr::AnyArray {
                left,
                op,
                all,
                array,
            } => {
                let l = left.eval(row, ctx, sq)?;
                match array.eval(row, ctx, sq)? {
                    Value::Null => Value::Null,
                    Value::Array(_, items) => quantified(&l, *op, *all, items.iter())?,
                    _ => return Err(Error::internal("ANY over a value that is not an array")),
                }
            }
            Expr::Subquery(sub) => sub.eval(row, ctx, sq)?,
            Expr::Const(v) => v.clone(),
            Expr::Param(i) => ctx.params.get(*i).cloned().ok_or_else(|| {
                Error::new(
                    SqlState::UNDEFINED_PARAMETER,
                    format!("there is no parameter ${}", i + 1),
                )
            })?,
            Expr::Column(i) => row
                .get(*i)
                .cloned()
                .ok_or_else(|| Error::internal("column index out of range"))?,
            Expr::Neg(e) => match e.eval(row, ctx, sq)? {
                Value::Null => Value::Null,
                v => types::negate(&v)?,
            },
            Expr::Not(e) => match truth(&e.eval(row, ctx, sq)?)? {
                None => Value::Null,
                Some(b) => Value::Bool(!b),
            },
            Expr::Arith(op, a, b) => {
                let (a, b) = (a.eval(row, ctx, sq)?, b.eval(row, ctx, sq)?);
                if a.is_null() || b.is_null() {
                    Value::Null
                } else {
                    types::arith(*op, &a, &b)?
                }
            }
            Expr::Cmp(op, a, b) => {
                let (a, b) = (a.eval(row, ctx, sq)?, b.eval(row, ctx, sq)?);
                compare_values(*op, &a, &b)?
            }
            Expr::And(a, b) => {
                let l = truth(&a.eval(row, ctx, sq)?)?;
                if l == Some(false) {
                    return Ok(Value::Bool(false));
                }
                match (l, truth(&b.eval(row, ctx, sq)?)?) {
                    (_, Some(false)) => Value::Bool(false),
                    (Some(true), Some(true)) => Value::Bool(true),
                    _ => Value::Null,
                }
            }
            Expr::Or(a, b) => {
                let l = truth(&a.eval(row, ctx, sq)?)?;
                if l == Some(true) {
                    return Ok(Value::Bool(true));
                }
                match (l, truth(&b.eval(row, ctx, sq)?)?) {
                    (_, Some(true)) => Value::Bool(true),
                    (Some(false), Some(false)) => Value::Bool(false),
                    _ => Value::Null,
                }
            }
            Expr::Concat(a, b) => {
                let (a, b) = (a.eval(row, ctx, sq)?, b.eval(row, ctx, sq)?);
                if a.is_null() || b.is_null() {
                    Value::Null
                } else {
                    let mut s = text_of(&a);
                    s.push_str(&text_of(&b));
                    Value::Text(s)
                }
            }
            // A row is NULL when all its fields are, and NOT NULL when none is.
            Expr::IsNull(e, negated) => Value::Bool(match (e.eval(row, ctx, sq)?, negated) {
                (Value::Record(_, fields), false) => fields.iter().all(Value::is_null),
                (Value::Record(_, fields), true) => !fields.iter().any(Value::is_null),
                (v, negated) => v.is_null() != *negated,
            }),
            Expr::IsBool(e, want, negated) => {
                let v = truth(&e.eval(row, ctx, sq)?)?;
                Value::Bool((v == Some(*want)) != *negated)
            }
            Expr::IsDistinct(a, b, negated) => {
                let (a, b) = (a.eval(row, ctx, sq)?, b.eval(row, ctx, sq)?);
                let distinct = match (a.is_null(), b.is_null()) {
                    (true, true) => false,
                    (true, false) | (false, true) => true,
                    _ => types::compare(&a, &b) != Some(Ordering::Equal),
                };
                Value::Bool(distinct != *negated)
            }
            Expr::Like {
                expr,
                pattern,
                negated,
                case_insensitive,
            } => {
                let (v, p) = (expr.eval(row, ctx, sq)?, pattern.eval(row, ctx, sq)?);
                if v.is_null() || p.is_null() {
                    Value::Null
                } else {
                    let (mut s, mut p) = (text_of(&v), text_of(&p));
                    if *case_insensitive {
                        s = s.to_lowercase();
                        p = p.to_lowercase();
                    }
                    Value::Bool(like(&s, &p)? != *negated)
                }
            }
            Expr::InList {
                expr,
                list,
                negated,
            } => {
                let v = expr.eval(row, ctx, sq)?;
                if v.is_null() {
                    return Ok(Value::Null);
                }
                let mut saw_null = false;
                for item in list {
                    let x = item.eval(row, ctx, sq)?;
                    if x.is_null() {
                        saw_null = true;
                    } else if compare_values(CmpOp::Eq, &v, &x)? == Value::Bool(true) {
                        return Ok(Value::Bool(!negated));
                    }
                }
                if saw_null {
                    Value::Null
                } else {
                    Value::Bool(*negated)
                }
            }
            Expr::Case {
                operand,
                whens,
                otherwise,
            } => {
                let op = match operand {
                    Some(o) => Some(o.eval(row, ctx, sq)?),
                    None => None,
                };
                for (cond, result) in whens {
                    let hit = match &op {
                        Some(o) => {
                            compare_values(CmpOp::Eq, o, &cond.eval(row, ctx, sq)?)?
                                == Value::Bool(true)
                        }
                        None => truth(&cond.eval(row, ctx, sq)?)? == Some(true),
                    };
                    if hit {
                        return result.eval(row, ctx, sq);
                    }
                }
                match otherwise {
                    Some(e) => e.eval(row, ctx, sq)?,
                    None => Value::Null,
                }
            }
            Expr::Cast(e, ty) => types::cast(e.eval(row, ctx, sq)?, ty)?,
            Expr::Func(f, args) => eval_func(*f, args, row, ctx, sq)?,
        })
    }

    /// Whether the expression reads no column (so it can be evaluated once per statement).
    pub fn is_row_independent(&self) -> bool {
        self.reads_only(&|_| false)
    }

    /// Whether the expression reads no column but those `column_ok` accepts, and calls no
    /// volatile function.
    pub fn reads_only(&self, column_ok: &impl Fn(usize) -> bool) -> bool {
        let go = |e: &Expr| e.reads_only(column_ok);
        match self {
            Expr::Const(_) | Expr::Param(_) | Expr::Outer(_) => true,
            Expr::Column(c) => column_ok(*c),
            Expr::Array(_, items) => items.iter().all(go),
            Expr::SetReturning(f) => f.args.iter().all(go),
            Expr::AnyArray { left, array, .. } => go(left) && go(array),
            Expr::Subquery(sub) => {
                sub.args.iter().all(go)
                    && match &sub.test {
                        SubqueryTest::Quantified { left, .. } => go(left),
                        _ => true,
                    }
            }
            Expr::Neg(e)
            | Expr::Not(e)
            | Expr::IsNull(e, _)
            | Expr::IsBool(e, _, _)
            | Expr::Cast(e, _) => go(e),
            Expr::Arith(_, a, b)
            | Expr::Cmp(_, a, b)
            | Expr::And(a, b)
            | Expr::Or(a, b)
            | Expr::Concat(a, b)
            | Expr::IsDistinct(a, b, _) => go(a) && go(b),
            Expr::Like { expr, pattern, .. } => go(expr) && go(pattern),
            Expr::InList { expr, list, .. } => go(expr) && list.iter().all(go),
            Expr::Case {
                operand,
                whens,
                otherwise,
            } => {
                operand.as_ref().is_none_or(|o| go(o))
                    && whens.iter().all(|(a, b)| go(a) && go(b))
                    && otherwise.as_ref().is_none_or(|o| go(o))
            }
            // Volatile functions must run per row.
            Expr::Func(f, args) => {
                !matches!(
                    f,
                    Func::Random
                        | Func::GenRandomUuid
                        | Func::ClockTimestamp
                        | Func::Nextval
                        | Func::Currval
                        | Func::Lastval
                        | Func::Setval
                        | Func::SetConfig
                ) && !matches!(f, Func::Scalar(s) if s.volatile())
                    && args.iter().all(go)
            }
        }
    }
}

impl Expr {
    /// The subqueries in the expression (not those nested in them).
    pub fn subqueries<'e>(&'e self, out: &mut Vec<&'e Subquery>) {
        let mut go = |e: &'e Expr| e.subqueries(out);
        match self {
            Expr::Const(_) | Expr::Param(_) | Expr::Outer(_) | Expr::Column(_) => {}
            Expr::Array(_, items) => items.iter().for_each(go),
            Expr::SetReturning(f) => f.args.iter().for_each(go),
            Expr::AnyArray { left, array, .. } => {
                go(left);
                go(array);
            }
            Expr::Subquery(sub) => {
                for a in &sub.args {
                    a.subqueries(out);
                }
                if let SubqueryTest::Quantified { left, .. } = &sub.test {
                    left.subqueries(out);
                }
                out.push(sub);
            }
            Expr::Neg(e)
            | Expr::Not(e)
            | Expr::IsNull(e, _)
            | Expr::IsBool(e, _, _)
            | Expr::Cast(e, _) => go(e),
            Expr::Arith(_, a, b)
            | Expr::Cmp(_, a, b)
            | Expr::And(a, b)
            | Expr::Or(a, b)
            | Expr::Concat(a, b)
            | Expr::IsDistinct(a, b, _) => {
                go(a);
                go(b);
            }
            Expr::Like { expr, pattern, .. } => {
                go(expr);
                go(pattern);
            }
            Expr::InList { expr, list, .. } => {
                go(expr);
                list.iter().for_each(go);
            }
            Expr::Case {
                operand,
                whens,
                otherwise,
            } => {
                operand.iter().for_each(|e| go(e));
                for (a, b) in whens {
                    go(a);
                    go(b);
                }
                otherwise.iter().for_each(|e| go(e));
            }
            Expr::Func(_, args) => args.iter().for_each(go),
        }
    }

    /// The same expression over another row layout: column `i` becomes column `f(i)`
    /// (a join moves a condition onto one table's row).
    pub fn map_columns(&self, f: &impl Fn(usize) -> usize) -> Expr {
        self.rewrite(&|e| match e {
            Expr::Column(c) => Some(Expr::Column(f(*c))),
            _ => None,
        })
    }

    /// Every node of the expression, this one first, then its children's (the arguments
    /// of its set-returning functions and subqueries too, not their plans).
    pub fn visit<'e>(&'e self, f: &mut impl FnMut(&'e Expr)) {
        f(self);
        match self {
            Expr::Const(_) | Expr::Param(_) | Expr::Outer(_) | Expr::Column(_) => {}
            Expr::Array(_, items) => items.iter().for_each(|e| e.visit(f)),
            Expr::SetReturning(func) => func.args.iter().for_each(|e| e.visit(f)),
            Expr::AnyArray { left, array, .. } => {
                left.visit(f);
                array.visit(f);
            }
            Expr::Subquery(sub) => {
                sub.args.iter().for_each(|e| e.visit(f));
                if let SubqueryTest::Quantified { left, .. } = &sub.test {
                    left.visit(f);
                }
            }
            Expr::Neg(e)
            | Expr::Not(e)
            | Expr::IsNull(e, _)
            | Expr::IsBool(e, _, _)
            | Expr::Cast(e, _) => e.visit(f),
            Expr::Arith(_, a, b)
            | Expr::Cmp(_, a, b)
            | Expr::And(a, b)
            | Expr::Or(a, b)
            | Expr::Concat(a, b)
            | Expr::IsDistinct(a, b, _) => {
                a.visit(f);
                b.visit(f);
            }
            Expr::Like { expr, pattern, .. } => {
                expr.visit(f);
                pattern.visit(f);
            }
            Expr::InList { expr, list, .. } => {
                expr.visit(f);
                list.iter().for_each(|e| e.visit(f));
            }
            Expr::Case {
                operand,
                whens,
                otherwise,
            } => {
                operand.iter().for_each(|e| e.visit(f));
                for (a, b) in whens {
                    a.visit(f);
                    b.visit(f);
                }
                otherwise.iter().for_each(|e| e.visit(f));
            }
            Expr::Func(_, args) => args.iter().for_each(|e| e.visit(f)),
        }
    }

    /// Whether a set-returning function is in the expression, at its top or inside.
    pub fn has_set_returning(&self) -> bool {
        let mut found = false;
        self.visit(&mut |e| found |= matches!(e, Expr::SetReturning(_)));
        found
    }

    /// The expression with every node `f` gives a replacement for replaced by it (and
    /// not looked into); other nodes are kept, their children rewritten.
    pub fn rewrite(&self, f: &impl Fn(&Expr) -> Option<Expr>) -> Expr {
        if let Some(e) = f(self) {
            return e;
        }
        let go = |e: &Expr| Box::new(e.rewrite(f));
        let all = |es: &[Expr]| es.iter().map(|e| e.rewrite(f)).collect::<Vec<_>>();
        match self {
            Expr::Const(_) | Expr::Param(_) | Expr::Outer(_) | Expr::Column(_) => self.clone(),
            Expr::Array(e, items) => Expr::Array(e, all(items)),
            Expr::SetReturning(func) => {
                Expr::SetReturning(std::sync::Arc::new(super::plan::TableFunction {
                    kind: func.kind,
                    args: all(&func.args),
                    ordinality: func.ordinality,
                }))
            }
            Expr::AnyArray {
                left,
                op,
                all: quantifier,
                array,
            } => Expr::AnyArray {
                left: go(left),
                op: *op,
                all: *quantifier,
                array: go(array),
            },
            Expr::Subquery(sub) => Expr::Subquery(std::sync::Arc::new(Subquery {
                plan: sub.plan.clone(),
                args: all(&sub.args),
                test: match &sub.test {
                    SubqueryTest::Quantified { left, op, all } => SubqueryTest::Quantified {
                        left: go(left),
                        op: *op,
                        all: *all,
                    },
                    t => t.clone(),
                },
            })),
            Expr::Neg(e) => Expr::Neg(go(e)),
            Expr::Not(e) => Expr::Not(go(e)),
            Expr::Arith(op, a, b) => Expr::Arith(*op, go(a), go(b)),
            Expr::Cmp(op, a, b) => Expr::Cmp(*op, go(a), go(b)),
            Expr::And(a, b) => Expr::And(go(a), go(b)),
            Expr::Or(a, b) => Expr::Or(go(a), go(b)),
            Expr::Concat(a, b) => Expr::Concat(go(a), go(b)),
            Expr::IsNull(e, n) => Expr::IsNull(go(e), *n),
            Expr::IsBool(e, v, n) => Expr::IsBool(go(e), *v, *n),
            Expr::IsDistinct(a, b, n) => Expr::IsDistinct(go(a), go(b), *n),
            Expr::Like {
                expr,
                pattern,
                negated,
                case_insensitive,
            } => Expr::Like {
                expr: go(expr),
                pattern: go(pattern),
                negated: *negated,
                case_insensitive: *case_insensitive,
            },
            Expr::InList {
                expr,
                list,
                negated,
            } => Expr::InList {
                expr: go(expr),
                list: all(list),
                negated: *negated,
            },
            Expr::Case {
                operand,
                whens,
                otherwise,
            } => Expr::Case {
                operand: operand.as_ref().map(|o| go(o)),
                whens: whens
                    .iter()
                    .map(|(a, b)| (a.rewrite(f), b.rewrite(f)))
                    .collect(),
                otherwise: otherwise.as_ref().map(|o| go(o)),
            },
            Expr::Cast(e, ty) => Expr::Cast(go(e), *ty),
            Expr::Func(func, args) => Expr::Func(*func, all(args)),
        }
    }
}

/// See [`Func::RowCompare`].
fn row_compare(op: CmpOp, vals: &[Value]) -> Result<Value> {
    let pairs = vals.chunks_exact(2);
    if matches!(op, CmpOp::Eq | CmpOp::NotEq) {
        let mut null = false;
        for p in pairs {
            match compare_values(CmpOp::Eq, &p[0], &p[1])? {
                Value::Bool(false) => return Ok(Value::Bool(op == CmpOp::NotEq)),
                Value::Null => null = true,
                _ => {}
            }
        }
        return Ok(if null {
            Value::Null
        } else {
            Value::Bool(op == CmpOp::Eq)
        });
    }
    for p in pairs {
        match compare_values(CmpOp::Eq, &p[0], &p[1])? {
            Value::Bool(true) => {}
            Value::Null => return Ok(Value::Null),
            _ => return compare_values(op, &p[0], &p[1]),
        }
    }
    Ok(Value::Bool(op.test(Ordering::Equal)))
}

/// A SQL comparison: NULL if either side is NULL.
pub fn compare_values(op: CmpOp, a: &Value, b: &Value) -> Result<Value> {
    if a.is_null() || b.is_null() {
        return Ok(Value::Null);
    }
    match types::compare(a, b) {
        Some(ord) => Ok(Value::Bool(op.test(ord))),
        None => Err(Error::new(
            SqlState::UNDEFINED_FUNCTION,
            format!(
                "operator does not exist: {} {} {}",
                a.data_type().map(|t| t.name()).unwrap_or_default(),
                match op {
                    CmpOp::Eq => "=",
                    CmpOp::NotEq => "<>",
                    CmpOp::Lt => "<",
                    CmpOp::LtEq => "<=",
                    CmpOp::Gt => ">",
                    CmpOp::GtEq => ">=",
                },
                b.data_type().map(|t| t.name()).unwrap_or_default()
            ),
        )),
    }
}

/// The text form of a value (for ||, LIKE and string functions).
pub fn text_of(v: &Value) -> String {
    match v {
        Value::Text(s) => s.clone(),
        other => {
            let mut out = Vec::new();
            types::encode_text(other, &mut out);
            String::from_utf8(out).unwrap_or_default()
        }
    }
}

/// SQL LIKE with `%`, `_` and backslash escapes.
fn like(s: &str, pattern: &str) -> Result<bool> {
    let s: Vec<char> = s.chars().collect();
    let mut p: Vec<(char, bool)> = Vec::new(); // (char, is_literal)
    let mut it = pattern.chars();
    while let Some(c) = it.next() {
        if c == '\\' {
            match it.next() {
                Some(n) => p.push((n, true)),
                None => {
                    return Err(Error::new(
                        SqlState::INVALID_ESCAPE_SEQUENCE,
                        "LIKE pattern must not end with escape character",
                    ))
                }
            }
        } else {
            p.push((c, false));
        }
    }
    // Iterative matching with backtracking on the last %.
    let (mut si, mut pi) = (0, 0);
    let (mut star_p, mut star_s) = (None, 0);
    while si < s.len() {
        if pi < p.len() && !p[pi].1 && p[pi].0 == '%' {
            star_p = Some(pi);
            star_s = si;
            pi += 1;
        } else if pi < p.len() && ((!p[pi].1 && p[pi].0 == '_') || p[pi].0 == s[si]) {
            si += 1;
            pi += 1;
        } else if let Some(sp) = star_p {
            pi = sp + 1;
            star_s += 1;
            si = star_s;
        } else {
            return Ok(false);
        }
    }
    while pi < p.len() && !p[pi].1 && p[pi].0 == '%' {
        pi += 1;
    }
    Ok(pi == p.len())
}

fn eval_func(
    f: Func,
    args: &[Expr],
    row: &[Value],
    ctx: &EvalContext,
    sq: &dyn Subqueries,
) -> Result<Value> {
    if f == Func::Coalesce {
        for a in args {
            let v = a.eval(row, ctx, sq)?;
            if !v.is_null() {
                return Ok(v);
            }
        }
        return Ok(Value::Null);
    }
    if matches!(f, Func::Greatest | Func::Least) {
        let mut best = Value::Null;
        for a in args {
            let v = a.eval(row, ctx, sq)?;
            if v.is_null() {
                continue;
            }
            let better = best.is_null()
                || match crate::types::compare(&v, &best) {
                    Some(std::cmp::Ordering::Greater) => f == Func::Greatest,
                    Some(std::cmp::Ordering::Less) => f == Func::Least,
                    _ => false,
                };
            if better {
                best = v;
            }
        }
        return Ok(best);
    }
    let vals = args
        .iter()
        .map(|a| a.eval(row, ctx, sq))
        .collect::<Result<Vec<_>>>()?;
    // Every other function is strict: NULL in, NULL out (format_type reads a NULL
    // typmod as none).
    let strict_args = match f {
        Func::FormatType => &vals[..1],
        Func::ArrayToString => &vals[..2],
        Func::ArrayCat => &[],
        Func::JsonBuildObject | Func::JsonBuildArray | Func::NullIf => &[],
        Func::Jsonb(j) if !j.strict() => &[],
        Func::Scalar(f) if !f.strict() => &[],
        Func::HasPrivilege(_) => &vals[1..],
        Func::Row(shape) => return Ok(Value::Record(shape, vals.into())),
        Func::RowCompare(op) => return row_compare(op, &vals),
        _ => &vals[..],
    };
    if strict_args.iter().any(Value::is_null) {
        return Ok(Value::Null);
    }
    if let Func::Jsonb(j) = f {
        return super::json_functions::eval(j, &vals);
    }
    if let Func::Scalar(s) = f {
        return super::scalar_functions::eval(s, &vals, ctx);
    }
    if let Some(v) = super::catalog_functions::eval(f, &vals, ctx)? {
        return Ok(v);
    }
    Ok(match f {
        Func::Now => Value::TimestampTz(ctx.txn_start_us),
        Func::ClockTimestamp => Value::TimestampTz(now_us()),
        Func::Random => Value::Float8(rand::random::<f64>()),
        // Version 4 (random), variant 10: RFC 4122's bits set over random ones.
        Func::GenRandomUuid => Value::Uuid(
            (rand::random::<u128>() & !(0xF << 76) & !(0x3 << 62)) | (0x4 << 76) | (0x2 << 62),
        ),
        Func::Md5 => {
            let digest = Md5::digest(text_of(&vals[0]).as_bytes());
            Value::Text(hex::encode(digest))
        }
        Func::Length | Func::OctetLength => {
            // bytea counts bytes; strings count characters (char(n) arrives blank-trimmed),
            // or bytes for octet_length.
            let len = match &vals[0] {
                Value::Bytea(b) => b.len(),
                v if f == Func::OctetLength => text_of(v).len(),
                v => text_of(v).chars().count(),
            };
            Value::Int4(len as i32)
        }
        Func::BitAnd | Func::BitOr | Func::BitXor | Func::ShiftLeft | Func::ShiftRight => {
            bitwise(f, &vals[0], &vals[1])?
        }
        Func::Lower => Value::Text(text_of(&vals[0]).to_lowercase()),
        Func::Upper => Value::Text(text_of(&vals[0]).to_uppercase()),
        Func::Extract => Value::Numeric(types::extract(&text_of(&vals[0]), &vals[1])?),
        Func::DateTrunc => match &vals[1] {
            Value::Timestamp(t) => Value::Timestamp(types::date_trunc(
                &text_of(&vals[0]),
                *t,
                "timestamp without time zone",
            )?),
            Value::TimestampTz(t) => {
                let zone = match vals.get(2) {
                    Some(Value::Null) => return Ok(Value::Null),
                    Some(z) => std::sync::Arc::new(types::zone::zone_named(&text_of(z))?),
                    None => types::zone::session_zone(),
                };
                Value::TimestampTz(types::date_trunc_tz(&text_of(&vals[0]), *t, &zone)?)
            }
            _ => return Err(Error::internal("date_trunc of a value not a timestamp")),
        },
        Func::DatePart => {
            let d = types::extract(&text_of(&vals[0]), &vals[1])?;
            Value::Float8(d.to_string().parse::<f64>().unwrap_or(f64::NAN))
        }
        // substring(s FROM start [FOR count]): characters from `start` (1 the first;
        // before it counts too) for `count` of them.
        Func::Substring => {
            let s = text_of(&vals[0]);
            let start = vals[1].as_i64().unwrap_or(1);
            let end = match vals.get(2).map(|v| v.as_i64().unwrap_or(0)) {
                Some(n) if n < 0 => {
                    return Err(Error::new(
                        SqlState::SUBSTRING_ERROR,
                        "negative substring length not allowed",
                    ))
                }
                Some(n) => Some(start.saturating_add(n)),
                None => None,
            };
            let skip = (start - 1).max(0) as usize;
            let take = match end {
                Some(e) => (e - 1).max(0) as usize - skip.min((e - 1).max(0) as usize),
                None => usize::MAX,
            };
            Value::Text(s.chars().skip(skip).take(take).collect())
        }
        Func::Left | Func::Right => {
            let chars: Vec<char> = text_of(&vals[0]).chars().collect();
            let n = vals[1].as_i64().unwrap_or(0);
            let len = chars.len() as i64;
            // n < 0: every character but the last (or first) |n|.
            let take = if n >= 0 { n.min(len) } else { (len + n).max(0) } as usize;
            Value::Text(match f {
                Func::Left => chars[..take].iter().collect(),
                _ => chars[chars.len() - take..].iter().collect(),
            })
        }
        Func::Lpad | Func::Rpad => {
            let chars: Vec<char> = text_of(&vals[0]).chars().collect();
            let length = vals[1].as_i64().unwrap_or(0).max(0) as usize;
            if length.saturating_mul(4) > crate::constants::MAX_VALUE_BYTES {
                return Err(Error::new(
                    SqlState::PROGRAM_LIMIT_EXCEEDED,
                    "requested length too large",
                ));
            }
            let fill: Vec<char> = match vals.get(2) {
                Some(v) => text_of(v).chars().collect(),
                None => vec![' '],
            };
            if chars.len() >= length || fill.is_empty() {
                return Ok(Value::Text(chars.iter().take(length).collect()));
            }
            let padding: String = fill.iter().cycle().take(length - chars.len()).collect();
            let text: String = chars.iter().collect();
            Value::Text(match f {
                Func::Lpad => padding + &text,
                _ => text + &padding,
            })
        }
        Func::SplitPart => {
            let text = text_of(&vals[0]);
            let delimiter = text_of(&vals[1]);
            let n = vals[2].as_i64().unwrap_or(0);
            if n == 0 {
                return Err(Error::new(
                    SqlState::INVALID_PARAMETER_VALUE,
                    "field position must not be zero",
                ));
            }
            let parts: Vec<&str> = if delimiter.is_empty() {
                vec![text.as_str()]
            } else {
                text.split(delimiter.as_str()).collect()
            };
            // Negative: counted from the end.
            let at = if n > 0 {
                usize::try_from(n - 1).ok()
            } else {
                usize::try_from(parts.len() as i64 + n).ok()
            };
            Value::Text(
                at.and_then(|i| parts.get(i))
                    .copied()
                    .unwrap_or("")
                    .to_string(),
            )
        }
        Func::Repeat => {
            let s = text_of(&vals[0]);
            let n = vals[1].as_i64().unwrap_or(0).max(0) as usize;
            if s.len().saturating_mul(n) > crate::constants::MAX_VALUE_BYTES {
                return Err(Error::new(
                    SqlState::PROGRAM_LIMIT_EXCEEDED,
                    "requested length too large",
                ));
            }
            Value::Text(s.repeat(n))
        }
        Func::Abs => match &vals[0] {
            Value::Int2(v) => Value::Int2(v.checked_abs().ok_or_else(|| {
                Error::new(
                    SqlState::NUMERIC_VALUE_OUT_OF_RANGE,
                    "smallint out of range",
                )
            })?),
            Value::Int4(v) => Value::Int4(v.checked_abs().ok_or_else(|| {
                Error::new(SqlState::NUMERIC_VALUE_OUT_OF_RANGE, "integer out of range")
            })?),
            Value::Int8(v) => Value::Int8(v.checked_abs().ok_or_else(|| {
                Error::new(SqlState::NUMERIC_VALUE_OUT_OF_RANGE, "bigint out of range")
            })?),
            Value::Float4(v) => Value::Float4(v.abs()),
            Value::Float8(v) => Value::Float8(v.abs()),
            Value::Numeric(d) => Value::Numeric(d.abs()),
            other => {
                return Err(Error::new(
                    SqlState::UNDEFINED_FUNCTION,
                    format!(
                        "function abs({}) does not exist",
                        other.data_type().map(|t| t.name()).unwrap_or_default()
                    ),
                ))
            }
        },
        Func::Setval => {
            let seq = sequence_named(ctx, &vals[0], crate::storage::acl::UPDATE)?;
            let (Some(v), called) = (vals[1].as_i64(), vals.get(2)) else {
                return Ok(Value::Null);
            };
            let called = match called {
                None => true,
                Some(Value::Bool(b)) => *b,
                Some(_) => return Ok(Value::Null),
            };
            super::session::check_sequence_value(&seq, v, "setval")?;
            if called {
                ctx.sequences.lock().values.insert(seq.name.clone(), v);
            }
            let next = if called {
                v.checked_add(seq.increment()).unwrap_or(i64::MAX)
            } else {
                v
            };
            let logged = ctx.engine.txn.set_sequence(&seq, next)?;
            if let Some(l) = logged {
                ctx.logged_upto.set(ctx.logged_upto.get().max(l.0));
            }
            Value::Int8(v)
        }
        Func::Nextval => {
            let seq = sequence_named(
                ctx,
                &vals[0],
                crate::storage::acl::USAGE | crate::storage::acl::UPDATE,
            )?;
            {
                let (v, logged) = ctx.engine.txn.nextval(&seq)?;
                if let Some(l) = logged {
                    ctx.logged_upto.set(ctx.logged_upto.get().max(l.0));
                }
                let mut sequences = ctx.sequences.lock();
                sequences.values.insert(seq.name.clone(), v);
                sequences.last = Some(seq.name.clone());
                Value::Int8(v)
            }
        }
        Func::Currval => {
            let seq = sequence_named(
                ctx,
                &vals[0],
                crate::storage::acl::SELECT | crate::storage::acl::USAGE,
            )?;
            match ctx.sequences.lock().values.get(&seq.name) {
                Some(v) => Value::Int8(*v),
                None => {
                    return Err(Error::new(
                        SqlState::OBJECT_NOT_IN_PREREQUISITE_STATE,
                        format!(
                            "currval of sequence \"{}\" is not yet defined in this session",
                            seq.name
                        ),
                    ))
                }
            }
        }
        Func::Lastval => {
            let not_yet = || {
                Error::new(
                    SqlState::OBJECT_NOT_IN_PREREQUISITE_STATE,
                    "lastval is not yet defined in this session",
                )
            };
            let sequences = ctx.sequences.lock();
            let name = sequences.last.clone().ok_or_else(not_yet)?;
            let seq = ctx
                .pending
                .sequence(&ctx.engine.txn.catalog, &name)
                .ok_or_else(not_yet)?;
            check_sequence_privilege(
                ctx,
                &seq,
                crate::storage::acl::SELECT | crate::storage::acl::USAGE,
            )?;
            Value::Int8(*sequences.values.get(&name).ok_or_else(not_yet)?)
        }
        Func::Version => Value::Text(format!(
            "PostgreSQL {} on x86_64-pc-linux-gnu, compiled by rustc, 64-bit",
            crate::settings::SERVER_VERSION
        )),
        Func::CurrentDatabase => Value::Text("postgres".into()),
        Func::CurrentUser => Value::Text(ctx.user.to_string()),
        Func::SessionUser => Value::Text(ctx.session_user.to_string()),
        Func::BackendPid => Value::Int4(ctx.backend_pid),
        Func::ReloadConf => {
            superuser_function(ctx, "pg_reload_conf")?;
            Value::Bool(ctx.engine.reload_config())
        }
        Func::CancelBackend => {
            let pid = match &vals[0] {
                Value::Null => return Ok(Value::Null),
                Value::Int2(pid) => i32::from(*pid),
                Value::Int4(pid) => *pid,
                Value::Int8(pid) => match i32::try_from(*pid) {
                    Ok(pid) => pid,
                    Err(_) => return Ok(Value::Bool(false)),
                },
                other => return Err(Error::internal(format!("pg_cancel_backend of {other:?}"))),
            };
            may_signal(ctx, pid)?;
            Value::Bool(ctx.engine.txn.cancel_pid(pid))
        }
        Func::IsInRecovery => Value::Bool(ctx.engine.is_standby()),
        Func::Promote => {
            superuser_function(ctx, "pg_promote")?;
            ctx.engine.promote()?;
            Value::Bool(true)
        }
        Func::CurrentWalLsn => match ctx.engine.current_wal_location()? {
            Some(l) => Value::Text(l.to_string()),
            None => Value::Null,
        },
        Func::LastWalReceiveLsn => ctx
            .engine
            .standby_locations()
            .map_or(Value::Null, |(received, _)| {
                Value::Text(received.to_string())
            }),
        Func::LastWalReplayLsn => ctx
            .engine
            .standby_locations()
            .map_or(Value::Null, |(_, replayed)| {
                Value::Text(replayed.to_string())
            }),
        Func::SetConfig => {
            let (name, value) = (text_of(&vals[0]), text_of(&vals[1]));
            let local = matches!(vals[2], Value::Bool(true));
            let (def, value) = crate::settings::check_session_set(&name, &value)?;
            ctx.set_settings
                .borrow_mut()
                .push((def.name, value.clone(), local));
            Value::Text(value)
        }
        Func::CurrentSchema => Value::Text(crate::error::TABLE_SCHEMA.to_string()),
        Func::CurrentSchemas => {
            let path = session_setting(ctx, "search_path").unwrap_or_default();
            let implicit = matches!(vals[0], Value::Bool(true));
            let schemas = super::pg_catalog::search_path_schemas(&path, implicit);
            Value::Array(
                &DataType::Name,
                schemas
                    .into_iter()
                    .map(Value::Text)
                    .collect::<Vec<_>>()
                    .into(),
            )
        }
        Func::CurrentSetting => {
            let name = text_of(&vals[0]);
            match session_setting(ctx, &name) {
                Some(v) => Value::Text(v),
                None => {
                    return Err(Error::new(
                        SqlState::UNDEFINED_OBJECT,
                        format!("unrecognized configuration parameter \"{name}\""),
                    ))
                }
            }
        }
        Func::BpcharToText => Value::Text(text_of(&vals[0]).trim_end_matches(' ').to_string()),
        Func::Coalesce | Func::Greatest | Func::Least => unreachable!("handled above"),
        Func::UserById
        | Func::TableIsVisible
        | Func::TypeIsVisible
        | Func::CollationIsVisible
        | Func::FormatType
        | Func::GetExpr
        | Func::IndexDef
        | Func::ConstraintDef
        | Func::ViewDef
        | Func::EncodingToChar
        | Func::Description
        | Func::SerialSequence
        | Func::RegClassIn
        | Func::RegClassOfOid
        | Func::ToRegClass
        | Func::RegTypeIn
        | Func::RegTypeOfOid
        | Func::ToRegType
        | Func::RegNamespaceIn
        | Func::RegProcIn
        | Func::FunctionDef
        | Func::RelationSize
        | Func::TableSize
        | Func::IndexesSize
        | Func::TotalRelationSize
        | Func::DatabaseSize
        | Func::SizePretty
        | Func::FunctionIsVisible
        | Func::NameChar
        | Func::QuoteLiteral
        | Func::AclDefault
        | Func::ArrayRemove
        | Func::RegProcOfOid
        | Func::RegNamespaceOfOid
        | Func::QuoteIdent
        | Func::StatisticsColumns
        | Func::RelationIsPublishable
        | Func::RegexMatch
        | Func::RegexIMatch
        | Func::ArrayElement
        | Func::RecordField
        | Func::ArrayToString
        | Func::ArrayCat
        | Func::ArrayUpper
        | Func::ArrayLower
        | Func::ArrayLength
        | Func::Cardinality
        | Func::JsonBuildObject
        | Func::JsonBuildArray
        | Func::ToJson
        | Func::NullIf
        | Func::Jsonb(_)
        | Func::Scalar(_)
        | Func::HasPrivilege(_)
        | Func::Row(_)
        | Func::RowCompare(_) => return Err(Error::internal("catalog function not evaluated")),
    })
}

/// An integer bitwise operator, as PostgreSQL's: `&`, `|`, `#` on one type, and shifts
/// whose count is taken modulo the width (C's behaviour, which PostgreSQL inherits).
pub(super) fn bitwise(f: Func, a: &Value, b: &Value) -> Result<Value> {
    let (Some(x), Some(y)) = (a.as_i64(), b.as_i64()) else {
        return Err(Error::internal("a bitwise operator on non-integers"));
    };
    let bits = match a {
        Value::Int2(_) => 16u32,
        Value::Int4(_) => 32,
        _ => 64,
    };
    let r = match f {
        Func::BitAnd => x & y,
        Func::BitOr => x | y,
        Func::BitXor => x ^ y,
        Func::ShiftLeft => match bits {
            16 => i64::from((x as i16).wrapping_shl(y as u32)),
            32 => i64::from((x as i32).wrapping_shl(y as u32)),
            _ => x.wrapping_shl(y as u32),
        },
        _ => match bits {
            16 => i64::from((x as i16).wrapping_shr(y as u32)),
            32 => i64::from((x as i32).wrapping_shr(y as u32)),
            _ => x.wrapping_shr(y as u32),
        },
    };
    Ok(match a {
        Value::Int2(_) => Value::Int2(r as i16),
        Value::Int4(_) => Value::Int4(r as i32),
        _ => Value::Int8(r),
    })
}

/// A setting's value as the session sees it, with what this statement's `set_config`
/// calls set so far.
pub(super) fn session_setting(ctx: &EvalContext, name: &str) -> Option<String> {
    let pending = ctx
        .set_settings
        .borrow()
        .iter()
        .rev()
        .find(|(n, _, _)| n.eq_ignore_ascii_case(name))
        .map(|(_, v, _)| v.clone());
    pending.or_else(|| (ctx.settings)(name))
}

fn permission_denied(message: String) -> Error {
    Error::new(SqlState::INSUFFICIENT_PRIVILEGE, message)
}

/// A function PostgreSQL grants to superusers only (EXECUTE revoked from PUBLIC).
fn superuser_function(ctx: &EvalContext, name: &str) -> Result<()> {
    match ctx.roles {
        None => Ok(()),
        Some(_) => Err(permission_denied(format!(
            "permission denied for function {name}"
        ))),
    }
}

/// The sequence a function names (`'name'`, `'"name"'` or `'public.name'`), once the
/// current user is found to hold one of `wanted` on it.
fn sequence_named(
    ctx: &EvalContext,
    name: &Value,
    wanted: u32,
) -> Result<std::sync::Arc<crate::storage::Sequence>> {
    let name = text_of(name);
    let name = name.trim_matches('"').trim_start_matches("public.");
    let seq = ctx
        .pending
        .sequence(&ctx.engine.txn.catalog, name)
        .ok_or_else(|| {
            Error::new(
                SqlState::UNDEFINED_TABLE,
                format!("relation \"{name}\" does not exist"),
            )
        })?;
    check_sequence_privilege(ctx, &seq, wanted)?;
    Ok(seq)
}

/// nextval (USAGE or UPDATE) and setval (UPDATE) on a sequence, checked as they run
/// (the sequence may be named by a value): 42501 without any of `wanted`.
fn check_sequence_privilege(
    ctx: &EvalContext,
    seq: &crate::storage::Sequence,
    wanted: u32,
) -> Result<()> {
    let Some(roles) = ctx.roles else {
        return Ok(());
    };
    let catalog = &ctx.engine.txn.catalog;
    let oid = match seq.created() {
        Some((id, _)) => Some(super::pg_catalog::id_oid(id)),
        None => super::pg_catalog::sequence_oid(ctx.engine, &seq.name),
    };
    let allowed = match oid.and_then(|oid| catalog.acl(oid)) {
        Some(list) => crate::storage::acl::allows_any(&list, roles, wanted),
        None => roles.contains(&crate::storage::roles::BOOTSTRAP_ROLE_OID),
    };
    if allowed {
        return Ok(());
    }
    Err(permission_denied(format!(
        "permission denied for sequence {}",
        seq.name
    )))
}

/// pg_cancel_backend by a role that is not a superuser: only another session of a role
/// whose privileges it has, and never a superuser's (PostgreSQL 15's messages).
fn may_signal(ctx: &EvalContext, pid: i32) -> Result<()> {
    let Some(roles) = ctx.roles else {
        return Ok(());
    };
    let Some(slot) = ctx.engine.txn.sessions().into_iter().find(|s| s.pid == pid) else {
        return Ok(());
    };
    let user = slot.activity.lock().user.clone();
    let Some(target) = ctx.engine.txn.catalog.role(&user) else {
        return Ok(());
    };
    if target.superuser {
        return Err(permission_denied(
            "must be a superuser to cancel superuser query".to_string(),
        ));
    }
    if !roles.contains(&target.oid) {
        return Err(permission_denied(
            "must be a member of the role whose query is being canceled or member of pg_signal_backend"
                .to_string(),
        ));
    }
    Ok(())
}
