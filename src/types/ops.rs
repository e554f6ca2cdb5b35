//! Comparison and arithmetic operators with PostgreSQL's type promotion and error rules.

use std::cmp::Ordering;

use rust_decimal::Decimal;

use super::datetime::{
    date_as_instant, is_valid_date, timestamp_as_instant, DATE_NOBEGIN, DATE_NOEND,
};
use super::numeric::{self, fix_zero, numeric_to_f64};
use super::{DataType, Value};
use crate::err;
use crate::error::{Error, Result};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ArithOp {
    Add,
    Sub,
    Mul,
    Div,
    Mod,
}

impl ArithOp {
    pub fn symbol(self) -> &'static str {
        match self {
            ArithOp::Add => "+",
            ArithOp::Sub => "-",
            ArithOp::Mul => "*",
            ArithOp::Div => "/",
            ArithOp::Mod => "%",
        }
    }
}

/// A number of any kind, for cross-type comparison and arithmetic.
#[derive(Clone, Copy)]
enum Num {
    Int(i64),
    Dec(Decimal),
    Float(f64),
}

fn as_num(v: &Value) -> Option<Num> {
    Some(match v {
        Value::Int2(_) | Value::Int4(_) | Value::Int8(_) | Value::Oid(_) | Value::Reg(..) => {
            Num::Int(v.as_i64()?)
        }
        Value::Numeric(d) => Num::Dec(*d),
        Value::Float4(f) => Num::Float(*f as f64),
        Value::Float8(f) => Num::Float(*f),
        _ => return None,
    })
}

fn num_to_f64(n: Num) -> f64 {
    match n {
        Num::Int(i) => i as f64,
        Num::Dec(d) => numeric_to_f64(&d),
        Num::Float(f) => f,
    }
}

/// PostgreSQL's float ordering: NaN equals NaN and sorts above everything; -0 = 0.
pub fn float_cmp(x: f64, y: f64) -> Ordering {
    match (x.is_nan(), y.is_nan()) {
        (true, true) => Ordering::Equal,
        (true, false) => Ordering::Greater,
        (false, true) => Ordering::Less,
        _ => x.partial_cmp(&y).unwrap_or(Ordering::Equal),
    }
}

fn compare_nums(a: Num, b: Num) -> Ordering {
    match (a, b) {
        (Num::Int(x), Num::Int(y)) => x.cmp(&y),
        (Num::Int(x), Num::Dec(y)) => Decimal::from(x).cmp(&y),
        (Num::Dec(x), Num::Int(y)) => x.cmp(&Decimal::from(y)),
        (Num::Dec(x), Num::Dec(y)) => x.cmp(&y),
        // A float on either side: both sides are compared as float8, like PostgreSQL's
        // implicit casts to double precision.
        _ => float_cmp(num_to_f64(a), num_to_f64(b)),
    }
}

/// SQL comparison of two non-NULL values; `None` when the types are not comparable.
/// Numbers compare across widths and kinds; char(n) compares ignoring trailing blanks.
pub fn compare(a: &Value, b: &Value) -> Option<Ordering> {
    use Value::*;
    Some(match (a, b) {
        (Bool(x), Bool(y)) => x.cmp(y),
        (Text(x), Text(y)) => x.as_bytes().cmp(y.as_bytes()),
        (Bytea(x), Bytea(y)) => x.cmp(y),
        (Uuid(x), Uuid(y)) => x.cmp(y),
        (Interval(x), Interval(y)) => x.span().cmp(&y.span()),
        (Jsonb(x), Jsonb(y)) => super::jsonb::compare(x, y),
        // Element by element, NULL elements after the others (as btree's array order),
        // then by length.
        (Array(_, x), Array(_, y)) | (Record(_, x), Record(_, y)) => {
            for (a, b) in x.iter().zip(y.iter()) {
                let ord = match (a.is_null(), b.is_null()) {
                    (true, true) => Ordering::Equal,
                    (true, false) => Ordering::Greater,
                    (false, true) => Ordering::Less,
                    (false, false) => compare(a, b)?,
                };
                if ord != Ordering::Equal {
                    return Some(ord);
                }
            }
            x.len().cmp(&y.len())
        }
        (Date(x), Date(y)) => x.cmp(y),
        (Timestamp(x), Timestamp(y)) | (TimestampTz(x), TimestampTz(y)) => x.cmp(y),
        // Across types a timestamp or date is a local time of the session's zone.
        (Timestamp(x), TimestampTz(y)) => local_as_instant(*x).cmp(&timestamp_as_instant(*y)),
        (TimestampTz(x), Timestamp(y)) => timestamp_as_instant(*x).cmp(&local_as_instant(*y)),
        (Date(d), Timestamp(t)) => date_as_instant(*d).cmp(&timestamp_as_instant(*t)),
        (Timestamp(t), Date(d)) => timestamp_as_instant(*t).cmp(&date_as_instant(*d)),
        (Date(d), TimestampTz(t)) => local_date_as_instant(*d).cmp(&timestamp_as_instant(*t)),
        (TimestampTz(t), Date(d)) => timestamp_as_instant(*t).cmp(&local_date_as_instant(*d)),
        _ => compare_nums(as_num(a)?, as_num(b)?),
    })
}

/// A timestamp's local time as an instant in the session's zone, on the scale of
/// [`timestamp_as_instant`].
fn local_as_instant(t: i64) -> (u8, i128) {
    let (class, us) = timestamp_as_instant(t);
    if class != 1 {
        return (class, us);
    }
    let zone = super::zone::session_zone();
    let clamped = t.clamp(-(i64::MAX / 2), i64::MAX / 2);
    (
        class,
        us - zone.offset_of_local(clamped) as i128 * 1_000_000,
    )
}

/// A date's local midnight as an instant in the session's zone.
fn local_date_as_instant(d: i32) -> (u8, i128) {
    let (class, us) = date_as_instant(d);
    if class != 1 {
        return (class, us);
    }
    let zone = super::zone::session_zone();
    let clamped = us.clamp(-(i64::MAX as i128 / 2), i64::MAX as i128 / 2) as i64;
    (
        class,
        us - zone.offset_of_local(clamped) as i128 * 1_000_000,
    )
}

/// [`compare`] for two values of static type `ty`: `char(n)` values ignore trailing
/// blanks (bpchar semantics); other types compare as [`compare`] does.
pub fn compare_typed(a: &Value, b: &Value, ty: &DataType) -> Option<Ordering> {
    match (a, b, ty) {
        (Value::Text(x), Value::Text(y), DataType::Char(_)) => Some(
            x.trim_end_matches(' ')
                .as_bytes()
                .cmp(y.trim_end_matches(' ').as_bytes()),
        ),
        _ => compare(a, b),
    }
}

fn type_name(v: &Value) -> String {
    v.data_type()
        .map(|t| t.name())
        .unwrap_or_else(|| "unknown".into())
}

fn no_operator(op: ArithOp, a: &Value, b: &Value) -> Error {
    err!(UNDEFINED_FUNCTION, "operator does not exist: {} {} {}", type_name(a), op.symbol(), type_name(b))
        .with_hint("No operator matches the given name and argument types. You might need to add explicit type casts.")
}

fn int_rank(v: &Value) -> u8 {
    match v {
        Value::Int2(_) => 2,
        Value::Int4(_) => 4,
        _ => 8,
    }
}

fn make_int(v: Option<i64>, rank: u8) -> Result<Value> {
    match rank {
        2 => v
            .and_then(|v| i16::try_from(v).ok())
            .map(Value::Int2)
            .ok_or_else(|| err!(NUMERIC_VALUE_OUT_OF_RANGE, "smallint out of range")),
        4 => v
            .and_then(|v| i32::try_from(v).ok())
            .map(Value::Int4)
            .ok_or_else(|| err!(NUMERIC_VALUE_OUT_OF_RANGE, "integer out of range")),
        _ => v
            .map(Value::Int8)
            .ok_or_else(|| err!(NUMERIC_VALUE_OUT_OF_RANGE, "bigint out of range")),
    }
}

fn division_by_zero() -> Error {
    err!(DIVISION_BY_ZERO, "division by zero")
}

fn int_arith(op: ArithOp, x: i64, y: i64, rank: u8) -> Result<Value> {
    let r = match op {
        ArithOp::Add => x.checked_add(y),
        ArithOp::Sub => x.checked_sub(y),
        ArithOp::Mul => x.checked_mul(y),
        ArithOp::Div if y == 0 => return Err(division_by_zero()),
        ArithOp::Div => x.checked_div(y),
        ArithOp::Mod if y == 0 => return Err(division_by_zero()),
        // i64::MIN % -1 overflows in two's complement, but the remainder is 0.
        ArithOp::Mod => Some(x.checked_rem(y).unwrap_or(0)),
    };
    make_int(r, rank)
}

/// Float arithmetic in the operand precision, with PostgreSQL's overflow, underflow and
/// division-by-zero checks (`float_overflow_error` and friends).
macro_rules! float_arith {
    ($name:ident, $t:ty) => {
        fn $name(op: ArithOp, x: $t, y: $t) -> Result<$t> {
            let r = match op {
                ArithOp::Add => x + y,
                ArithOp::Sub => x - y,
                ArithOp::Mul => x * y,
                ArithOp::Div => {
                    if y == 0.0 && !x.is_nan() {
                        return Err(division_by_zero());
                    }
                    x / y
                }
                ArithOp::Mod => return Err(err!(INTERNAL_ERROR, "float modulo")),
            };
            let overflow = match op {
                ArithOp::Div => r.is_infinite() && !x.is_infinite(),
                _ => r.is_infinite() && !x.is_infinite() && !y.is_infinite(),
            };
            if overflow {
                return Err(err!(
                    NUMERIC_VALUE_OUT_OF_RANGE,
                    "value out of range: overflow"
                ));
            }
            let underflow = match op {
                ArithOp::Mul => r == 0.0 && x != 0.0 && y != 0.0,
                ArithOp::Div => r == 0.0 && x != 0.0 && !y.is_infinite(),
                _ => false,
            };
            if underflow {
                return Err(err!(
                    NUMERIC_VALUE_OUT_OF_RANGE,
                    "value out of range: underflow"
                ));
            }
            Ok(r)
        }
    };
}

float_arith!(float8_arith, f64);
float_arith!(float4_arith, f32);

fn numeric_arith(op: ArithOp, x: &Decimal, y: &Decimal) -> Result<Decimal> {
    match op {
        ArithOp::Add => numeric::add(x, y),
        ArithOp::Sub => numeric::sub(x, y),
        ArithOp::Mul => numeric::mul(x, y),
        ArithOp::Div => numeric::div(x, y),
        ArithOp::Mod => numeric::rem(x, y),
    }
}

fn date_out_of_range() -> Error {
    err!(DATETIME_FIELD_OVERFLOW, "date out of range")
}

/// `date + integer` (`date_pli`); infinite dates stay infinite.
fn date_plus(d: i32, days: i64) -> Result<Value> {
    if d == DATE_NOBEGIN || d == DATE_NOEND {
        return Ok(Value::Date(d));
    }
    let r = i32::try_from(d as i64 + days).map_err(|_| date_out_of_range())?;
    if !is_valid_date(r) || r == DATE_NOBEGIN || r == DATE_NOEND {
        return Err(date_out_of_range());
    }
    Ok(Value::Date(r))
}

/// Arithmetic with PostgreSQL's promotion rules and overflow checks (22003, 22012).
pub fn arith(op: ArithOp, a: &Value, b: &Value) -> Result<Value> {
    use Value::*;
    match (op, a, b) {
        (_, Null, _) | (_, _, Null) => return Ok(Null),
        (ArithOp::Add, Date(d), Int2(_) | Int4(_)) | (ArithOp::Add, Int2(_) | Int4(_), Date(d)) => {
            let days = a.as_i64().or(b.as_i64()).unwrap_or(0);
            return date_plus(*d, days);
        }
        (ArithOp::Sub, Date(d), Int2(_) | Int4(_)) => {
            return date_plus(*d, -b.as_i64().unwrap_or(0))
        }
        (ArithOp::Sub, Date(x), Date(y)) => {
            if [*x, *y]
                .iter()
                .any(|d| *d == DATE_NOBEGIN || *d == DATE_NOEND)
            {
                return Err(err!(
                    DATETIME_FIELD_OVERFLOW,
                    "cannot subtract infinite dates"
                ));
            }
            return Ok(Int4(x.wrapping_sub(*y)));
        }
        (ArithOp::Sub, Timestamp(x) | TimestampTz(x), Timestamp(y) | TimestampTz(y)) => {
            use super::datetime::{TIMESTAMP_NOBEGIN, TIMESTAMP_NOEND};
            let infinite = |t: i64| t == TIMESTAMP_NOBEGIN || t == TIMESTAMP_NOEND;
            if infinite(*x) || infinite(*y) {
                return Err(err!(
                    DATETIME_FIELD_OVERFLOW,
                    "cannot subtract infinite timestamps"
                ));
            }
            return Ok(Interval(super::Interval::between(*x, *y)?));
        }
        (ArithOp::Add | ArithOp::Sub, Timestamp(t), Interval(iv))
        | (ArithOp::Add, Interval(iv), Timestamp(t)) => {
            let iv = if op == ArithOp::Sub {
                iv.checked_neg()?
            } else {
                *iv
            };
            return Ok(Timestamp(super::interval::add_to_timestamp(*t, &iv)?));
        }
        (ArithOp::Add | ArithOp::Sub, TimestampTz(t), Interval(iv))
        | (ArithOp::Add, Interval(iv), TimestampTz(t)) => {
            let iv = if op == ArithOp::Sub {
                iv.checked_neg()?
            } else {
                *iv
            };
            return Ok(TimestampTz(super::interval::add_to_timestamptz(*t, &iv)?));
        }
        (ArithOp::Add | ArithOp::Sub, Date(d), Interval(iv))
        | (ArithOp::Add, Interval(iv), Date(d)) => {
            let iv = if op == ArithOp::Sub {
                iv.checked_neg()?
            } else {
                *iv
            };
            let t = super::datetime::date_to_timestamp(*d)?;
            return Ok(Timestamp(super::interval::add_to_timestamp(t, &iv)?));
        }
        (ArithOp::Add, Interval(x), Interval(y)) => return Ok(Interval(x.checked_add(y)?)),
        (ArithOp::Sub, Interval(x), Interval(y)) => {
            return Ok(Interval(x.checked_add(&y.checked_neg()?)?))
        }
        (ArithOp::Mul, Interval(iv), n) | (ArithOp::Mul, n, Interval(iv)) => {
            let Some(f) = as_num(n).map(num_to_f64) else {
                return Err(no_operator(op, a, b));
            };
            return Ok(Interval(iv.scaled(f)?));
        }
        (ArithOp::Div, Interval(iv), n) => {
            let Some(f) = as_num(n).map(num_to_f64) else {
                return Err(no_operator(op, a, b));
            };
            if f == 0.0 {
                return Err(err!(DIVISION_BY_ZERO, "division by zero"));
            }
            return Ok(Interval(iv.scaled(1.0 / f)?));
        }
        _ => {}
    }
    let (Some(x), Some(y)) = (as_num(a), as_num(b)) else {
        return Err(no_operator(op, a, b));
    };
    let any_float = matches!(x, Num::Float(_)) || matches!(y, Num::Float(_));
    if any_float && op == ArithOp::Mod {
        return Err(no_operator(op, a, b));
    }
    match (a, b, x, y) {
        (Float4(f), Float4(g), _, _) => Ok(Float4(float4_arith(op, *f, *g)?)),
        _ if any_float => Ok(Float8(float8_arith(op, num_to_f64(x), num_to_f64(y))?)),
        (_, _, Num::Int(x), Num::Int(y)) => int_arith(op, x, y, int_rank(a).max(int_rank(b))),
        (_, _, x, y) => {
            let to_dec = |n: Num| match n {
                Num::Int(i) => Decimal::from(i),
                Num::Dec(d) => d,
                Num::Float(_) => Decimal::ZERO,
            };
            Ok(Numeric(numeric_arith(op, &to_dec(x), &to_dec(y))?))
        }
    }
}

/// Unary minus.
pub fn negate(a: &Value) -> Result<Value> {
    match a {
        Value::Null => Ok(Value::Null),
        Value::Int2(v) => v.checked_neg().map(Value::Int2).ok_or_else(|| err!(NUMERIC_VALUE_OUT_OF_RANGE, "smallint out of range")),
        Value::Int4(v) => v.checked_neg().map(Value::Int4).ok_or_else(|| err!(NUMERIC_VALUE_OUT_OF_RANGE, "integer out of range")),
        Value::Int8(v) => v.checked_neg().map(Value::Int8).ok_or_else(|| err!(NUMERIC_VALUE_OUT_OF_RANGE, "bigint out of range")),
        Value::Float4(v) => Ok(Value::Float4(-v)),
        Value::Float8(v) => Ok(Value::Float8(-v)),
        Value::Numeric(d) => Ok(Value::Numeric(fix_zero(-*d))),
        Value::Interval(iv) => Ok(Value::Interval(iv.checked_neg()?)),
        _ => Err(err!(UNDEFINED_FUNCTION, "operator does not exist: - {}", type_name(a)).with_hint(
            "No operator matches the given name and argument type. You might need to add an explicit type cast.",
        )),
    }
}
