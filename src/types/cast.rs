//! Explicit and assignment casts between the supported types, following `pg_cast`.

use rust_decimal::Decimal;

use super::datetime::{date_to_timestamp, timestamp_to_date};
use super::io::{apply_string_typmod, decode_text, format_text};
use super::numeric::{
    apply_typmod, float_to_numeric, numeric_to_f32, numeric_to_f64, round_to_integer,
};
use super::{DataType, Value};
use crate::err;
use crate::error::{Error, Result, SqlState};

/// Explicit cast (`CAST(v AS t)`, `v::t`), with PostgreSQL's semantics: any type to and
/// from text through the text I/O functions, between numeric types with rounding
/// and range checks (22003), typmods applied (varchar(n) truncates silently on explicit
/// cast, numeric(p,s) rounds to s and errors on overflow).
pub fn cast(value: Value, to: &DataType) -> Result<Value> {
    convert(value, None, to, true)
}

/// Assignment cast (INSERT/UPDATE into a column of type `to`): like [`cast`], but
/// varchar(n)/char(n) values longer than n give 22001 (unless the excess is all spaces),
/// char(n) is blank-padded, and Unknown/Text literals are parsed with the input function.
pub fn cast_assign(value: Value, to: &DataType) -> Result<Value> {
    convert(value, None, to, false)
}

/// [`cast`] for a value whose static type is `from`. This matters only for `char(n)`:
/// its trailing blanks are insignificant and are removed when converting to other types
/// (`'a  '::char(3)::text` is `'a'`).
pub fn cast_from(value: Value, from: &DataType, to: &DataType) -> Result<Value> {
    convert(value, Some(from), to, true)
}

/// [`cast_assign`] for a value whose static type is `from` (see [`cast_from`]).
pub fn cast_assign_from(value: Value, from: &DataType, to: &DataType) -> Result<Value> {
    convert(value, Some(from), to, false)
}

fn cannot_cast(value: &Value, to: &DataType) -> Error {
    let from = value
        .data_type()
        .map(|t| t.name())
        .unwrap_or_else(|| "unknown".into());
    Error::new(
        SqlState("42846"),
        format!("cannot cast type {from} to {}", to.without_typmod().name()),
    )
}

fn int_out_of_range(to: &DataType) -> Error {
    match to {
        DataType::Int2 => err!(NUMERIC_VALUE_OUT_OF_RANGE, "smallint out of range"),
        DataType::Int4 => err!(NUMERIC_VALUE_OUT_OF_RANGE, "integer out of range"),
        _ => err!(NUMERIC_VALUE_OUT_OF_RANGE, "bigint out of range"),
    }
}

fn make_int(v: i128, to: &DataType) -> Result<Value> {
    let out = || int_out_of_range(to);
    Ok(match to {
        DataType::Int2 => Value::Int2(i16::try_from(v).map_err(|_| out())?),
        DataType::Int4 => Value::Int4(i32::try_from(v).map_err(|_| out())?),
        _ => Value::Int8(i64::try_from(v).map_err(|_| out())?),
    })
}

/// float → integer: round half to even (`rint`), then range-check (NaN is out of range).
fn float_to_int(f: f64, to: &DataType) -> Result<Value> {
    let r = f.round_ties_even();
    let limit = match to {
        DataType::Int2 => 32768.0,
        DataType::Int4 => 2147483648.0,
        _ => 9223372036854775808.0,
    };
    if r.is_nan() || r < -limit || r >= limit {
        return Err(int_out_of_range(to));
    }
    make_int(r as i128, to)
}

fn with_numeric_typmod(d: Decimal, to: &DataType) -> Result<Value> {
    Ok(Value::Numeric(match to {
        DataType::Numeric(Some((p, s))) => apply_typmod(d, *p, *s)?,
        _ => d,
    }))
}

fn f64_to_f32(f: f64) -> Result<f32> {
    let r = f as f32;
    if r.is_infinite() && !f.is_infinite() {
        return Err(err!(
            NUMERIC_VALUE_OUT_OF_RANGE,
            "value out of range: overflow"
        ));
    }
    if r == 0.0 && f != 0.0 {
        return Err(err!(
            NUMERIC_VALUE_OUT_OF_RANGE,
            "value out of range: underflow"
        ));
    }
    Ok(r)
}

fn convert(value: Value, from: Option<&DataType>, to: &DataType, explicit: bool) -> Result<Value> {
    let value = match (value, from) {
        (Value::Null, _) => return Ok(Value::Null),
        // bpchar → anything else drops the insignificant trailing blanks first.
        (Value::Text(s), Some(DataType::Char(_))) => {
            Value::Text(s.trim_end_matches(' ').to_string())
        }
        (v, _) => v,
    };
    match to {
        DataType::Text | DataType::Varchar(_) | DataType::Char(_) | DataType::Unknown => {
            let s = match value {
                Value::Text(s) => s,
                // booltext: casts to string types spell booleans out.
                Value::Bool(b) => (if b { "true" } else { "false" }).to_string(),
                other => format_text(&other),
            };
            return Ok(Value::Text(apply_string_typmod(s, to, explicit)?));
        }
        _ => {}
    }
    if let Value::Text(s) = &value {
        return decode_text(to, s);
    }
    if let (Value::Array(_, items), true) = (&value, to.is_vector()) {
        let (marker, e) = match to {
            DataType::OidVector => (&super::OIDVECTOR, DataType::Oid),
            _ => (&super::INT2VECTOR, DataType::Int2),
        };
        let items = items
            .iter()
            .map(|v| convert(v.clone(), None, &e, explicit))
            .collect::<Result<Vec<_>>>()?;
        return Ok(Value::Array(marker, items.into()));
    }
    if let (Value::Array(_, items), DataType::Array(e)) = (&value, to) {
        let items = items
            .iter()
            .map(|v| convert(v.clone(), None, e, explicit))
            .collect::<Result<Vec<_>>>()?;
        return Ok(Value::Array(e, items.into()));
    }
    match (value, to) {
        (
            v @ Value::Reg(..),
            DataType::RegClass | DataType::RegType | DataType::RegNamespace | DataType::RegProc,
        ) => Ok(v),
        (v @ Value::Uuid(_), DataType::Uuid) => Ok(v),
        (v @ Value::Interval(_), DataType::Interval) => Ok(v),
        (v @ Value::Jsonb(_), DataType::Jsonb) => Ok(v),
        (Value::Jsonb(j), DataType::Json) => Ok(Value::Text(j.to_string())),
        (v @ Value::Jsonb(_), _) if !explicit => Err(not_assignable(&v, to)),
        (Value::Jsonb(j), _) => jsonb_to_scalar(&j, to),
        (
            v @ (Value::Int2(_) | Value::Int4(_) | Value::Int8(_) | Value::Oid(_) | Value::Reg(..)),
            _,
        ) => {
            let i = v.as_i64().unwrap_or(0);
            match to {
                // int4 → oid reinterprets the bits, as PostgreSQL does; oid → int4 too.
                DataType::Oid if matches!(v, Value::Int4(_)) => Ok(Value::Oid(i as i32 as u32)),
                DataType::Oid if (0..=u32::MAX as i64).contains(&i) => Ok(Value::Oid(i as u32)),
                DataType::Oid => Err(err!(NUMERIC_VALUE_OUT_OF_RANGE, "OID out of range")),
                DataType::Int4 if matches!(v, Value::Oid(_) | Value::Reg(..)) => {
                    Ok(Value::Int4(i as u32 as i32))
                }
                DataType::Int2 | DataType::Int4 | DataType::Int8 => make_int(i as i128, to),
                DataType::Float4 => Ok(Value::Float4(i as f32)),
                DataType::Float8 => Ok(Value::Float8(i as f64)),
                DataType::Numeric(_) => with_numeric_typmod(Decimal::from(i), to),
                DataType::Bool if matches!(v, Value::Int4(_)) => {
                    if explicit {
                        Ok(Value::Bool(i != 0))
                    } else {
                        Err(not_assignable(&v, to))
                    }
                }
                _ => Err(cannot_cast(&v, to)),
            }
        }
        (Value::Float4(f), DataType::Float4) => Ok(Value::Float4(f)),
        (Value::Float4(f), _) => cast_float(f as f64, 6, Value::Float4(f), to),
        (Value::Float8(f), _) => cast_float(f, 15, Value::Float8(f), to),
        (Value::Numeric(d), _) => match to {
            DataType::Int2 | DataType::Int4 | DataType::Int8 => make_int(round_to_integer(&d), to),
            DataType::Float4 => Ok(Value::Float4(numeric_to_f32(&d))),
            DataType::Float8 => Ok(Value::Float8(numeric_to_f64(&d))),
            DataType::Numeric(_) => with_numeric_typmod(d, to),
            _ => Err(cannot_cast(&Value::Numeric(d), to)),
        },
        (Value::Bool(b), DataType::Bool) => Ok(Value::Bool(b)),
        (v @ Value::Bool(_), DataType::Int4) if !explicit => Err(not_assignable(&v, to)),
        (Value::Bool(b), DataType::Int4) => Ok(Value::Int4(b as i32)),
        (Value::Bytea(b), DataType::Bytea) => Ok(Value::Bytea(b)),
        (Value::Date(d), DataType::Date) => Ok(Value::Date(d)),
        (Value::Date(d), DataType::Timestamp) => Ok(Value::Timestamp(date_to_timestamp(d)?)),
        (Value::Date(d), DataType::TimestampTz) => {
            Ok(Value::TimestampTz(super::datetime::date_to_timestamptz(d)?))
        }
        (Value::Timestamp(t), DataType::Date) => Ok(Value::Date(timestamp_to_date(t)?)),
        (Value::TimestampTz(t), DataType::Date) => {
            Ok(Value::Date(super::datetime::timestamptz_to_date(t)?))
        }
        (Value::Timestamp(t), DataType::Timestamp) => Ok(Value::Timestamp(t)),
        (Value::TimestampTz(t), DataType::Timestamp) => Ok(Value::Timestamp(
            super::datetime::timestamptz_to_timestamp(t)?,
        )),
        (Value::TimestampTz(t), DataType::TimestampTz) => Ok(Value::TimestampTz(t)),
        (Value::Timestamp(t), DataType::TimestampTz) => Ok(Value::TimestampTz(
            super::datetime::timestamp_to_timestamptz(t)?,
        )),
        (v, _) => Err(cannot_cast(&v, to)),
    }
}

/// An explicit cast of a jsonb number or boolean to a number or boolean type.
fn jsonb_to_scalar(j: &super::Jsonb, to: &DataType) -> Result<Value> {
    use super::Jsonb;
    match (j, to) {
        (Jsonb::Number(d), _) if to.is_numeric() => convert(Value::Numeric(*d), None, to, true),
        (Jsonb::Bool(b), DataType::Bool) => Ok(Value::Bool(*b)),
        (_, DataType::Bool) => Err(super::jsonb::cast_error(j, "boolean")),
        (_, t) if t.is_numeric() => Err(super::jsonb::cast_error(j, &t.without_typmod().name())),
        _ => Err(cannot_cast(
            &Value::Jsonb(std::sync::Arc::new(j.clone())),
            to,
        )),
    }
}

/// float4/float8 → other numeric types; `sig` is the digits kept going to numeric.
fn cast_float(f: f64, sig: usize, original: Value, to: &DataType) -> Result<Value> {
    match to {
        DataType::Int2 | DataType::Int4 | DataType::Int8 => float_to_int(f, to),
        DataType::Float4 => Ok(Value::Float4(f64_to_f32(f)?)),
        DataType::Float8 => Ok(Value::Float8(f)),
        DataType::Numeric(_) => with_numeric_typmod(float_to_numeric(f, sig)?, to),
        _ => Err(cannot_cast(&original, to)),
    }
}

/// An explicit-only cast (bool ↔ integer) attempted in assignment context.
fn not_assignable(value: &Value, to: &DataType) -> Error {
    let from = value.data_type().map(|t| t.name()).unwrap_or_default();
    Error::new(
        SqlState::DATATYPE_MISMATCH,
        format!(
            "column is of type {} but expression is of type {from}",
            to.name()
        ),
    )
    .with_hint("You will need to rewrite or cast the expression.")
}
