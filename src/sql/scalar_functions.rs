//! PostgreSQL's everyday scalar functions: arithmetic (`round`, `trunc`, `ceil`, `mod`,
//! `power`, `sqrt`, `div`, `gcd`, ...), strings (`concat`, `replace`, `trim`, `strpos`,
//! `initcap`, `translate`, `regexp_replace`, `format`), `to_char`, `to_date` and
//! `to_timestamp`, `AT TIME ZONE`, `age`, `make_date`, `make_timestamp`, `make_interval`,
//! `date_bin`, `justify_*`, `overlay`, `width_bucket`, arrays (`array_position`,
//! `array_replace`, `string_to_array`, `regexp_split_to_array`), bytea encodings and
//! digests, and `pg_sleep`.
//!
//! The binder (`bind/scalar.rs`) chooses the overload as PostgreSQL's function
//! resolution would, so the values arriving here have the types the overload takes: a
//! math function gets float8 or numeric, a string function text. Every function is strict
//! (NULL in, NULL out) except those [`ScalarFunc::strict`] names.

use rust_decimal::prelude::{FromPrimitive, ToPrimitive};
use rust_decimal::{Decimal, MathematicalOps, RoundingStrategy};

use super::expr::{text_of, EvalContext};
use crate::err;
use crate::error::{Error, Result};
use crate::types::{self, ArithOp, Value};

/// How often pg_sleep checks for a cancel request or statement timeout.
const SLEEP_CHECK_INTERVAL_MS: u64 = 10;

/// Which end(s) `trim` and its relatives take characters from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TrimSide {
    Both,
    Leading,
    Trailing,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ScalarFunc {
    /// round(x) (float8: to even; numeric: half away from zero), round(numeric, n).
    Round,
    Trunc,
    Ceil,
    Floor,
    /// mod(a, b) of integers or numerics.
    Mod,
    Power,
    Sqrt,
    Cbrt,
    Exp,
    Ln,
    /// log(x) (base 10) and log10(x).
    Log10,
    /// log(base, x), of numerics.
    Log,
    Pi,
    Sign,
    Degrees,
    Radians,
    /// concat(any, ...): NULLs skipped.
    Concat,
    /// concat_ws(separator, any, ...).
    ConcatWs,
    Replace,
    /// btrim, ltrim, rtrim and `trim(...)`: (text[, characters]).
    Trim(TrimSide),
    /// strpos(text, substring) and `position(substring in text)`.
    Strpos,
    Initcap,
    Reverse,
    Chr,
    Ascii,
    StartsWith,
    Translate,
    /// regexp_replace(text, pattern, replacement[, flags]).
    RegexpReplace,
    /// format(template, any, ...).
    Format,
    /// to_char(timestamp | timestamptz | interval | number, template).
    ToChar,
    /// to_timestamp(double precision): seconds since the Unix epoch.
    ToTimestamp,
    /// to_timestamp(text, template) and to_date(text, template).
    ParseTimestamp,
    ParseDate,
    /// pg_sleep(seconds).
    PgSleep,
    /// array_position(array, element[, start]): IS NOT DISTINCT FROM, 1-based.
    ArrayPosition,
    /// string_to_array(text, delimiter[, null_string]) (not strict in the last two).
    StringToArray,
    /// encode(bytea, format) and decode(text, format): hex, base64, escape.
    Encode,
    Decode,
    /// sha224, sha256, sha384, sha512 of bytea (the digest's bits).
    Sha(u16),
    ToHex,
    /// div(numeric, numeric): the integer quotient, toward zero.
    Div,
    Gcd,
    Lcm,
    /// num_nulls(any, ...) and num_nonnulls(any, ...).
    NumNulls,
    NumNonNulls,
    /// quote_nullable(any).
    QuoteNullable,
    /// make_date(year, month, day).
    MakeDate,
    /// isfinite(date | timestamp | timestamptz | interval).
    IsFinite,
    /// age(timestamp, timestamp): the difference in years, months and days.
    Age,
    /// regexp_split_to_array(text, pattern[, flags]).
    RegexpSplitToArray,
    /// bit_length(text).
    BitLength,
    /// justify_days, justify_hours and justify_interval of an interval.
    JustifyDays,
    JustifyHours,
    JustifyInterval,
    /// date_bin(stride, timestamp, origin) of timestamps or of timestamptzs.
    DateBin,
    /// make_timestamp(year, month, day, hour, min, sec) and make_timestamptz(..., sec[,
    /// zone]): a local time (of the zone, or the session's).
    MakeTimestamp,
    MakeTimestampTz,
    /// make_interval(years, months, weeks, days, hours, mins, secs).
    MakeInterval,
    /// width_bucket(operand, low, high, count) of numerics or of floats.
    WidthBucket,
    /// array_replace(array, from, to).
    ArrayReplace,
    /// overlay(text PLACING text FROM start [FOR count]).
    Overlay,
    /// `t AT TIME ZONE zone` and timezone(zone, t): (timestamp or timestamptz, zone as
    /// text or interval); a timestamptz becomes the zone's local time, a timestamp is
    /// read as the zone's local time.
    AtTimeZone,
}

impl ScalarFunc {
    /// Whether a NULL argument makes the result NULL without calling the function.
    pub fn strict(self) -> bool {
        !matches!(
            self,
            ScalarFunc::Concat
                | ScalarFunc::ConcatWs
                | ScalarFunc::Format
                | ScalarFunc::StringToArray
                | ScalarFunc::NumNulls
                | ScalarFunc::NumNonNulls
                | ScalarFunc::QuoteNullable
                | ScalarFunc::ArrayPosition
                | ScalarFunc::ArrayReplace
        )
    }

    /// Whether each call may return something different (so it runs per row).
    pub fn volatile(self) -> bool {
        self == ScalarFunc::PgSleep
    }
}

/// Evaluate `f` on its arguments (none NULL if it is strict).
pub fn eval(f: ScalarFunc, vals: &[Value], ctx: &EvalContext) -> Result<Value> {
    use ScalarFunc as S;
    Ok(match f {
        S::Round | S::Trunc | S::Ceil | S::Floor => round(f, &vals[0], vals.get(1))?,
        S::Mod => types::arith(ArithOp::Mod, &vals[0], &vals[1])?,
        S::Power => power(&vals[0], &vals[1])?,
        S::Sqrt => sqrt(&vals[0])?,
        S::Cbrt => Value::Float8(float(&vals[0]).cbrt()),
        S::Exp | S::Ln | S::Log10 if matches!(vals[0], Value::Numeric(_)) => {
            numeric_log_exp(f, &vals[0])?
        }
        S::Log => numeric_log(&vals[0], &vals[1])?,
        S::Exp => {
            let r = float(&vals[0]).exp();
            if r.is_infinite() {
                return Err(err!(
                    NUMERIC_VALUE_OUT_OF_RANGE,
                    "value out of range: overflow"
                ));
            }
            Value::Float8(r)
        }
        S::Ln | S::Log10 => {
            let x = float(&vals[0]);
            if x == 0.0 {
                return Err(err!(
                    INVALID_ARGUMENT_FOR_LOG,
                    "cannot take logarithm of zero"
                ));
            }
            if x < 0.0 {
                return Err(err!(
                    INVALID_ARGUMENT_FOR_LOG,
                    "cannot take logarithm of a negative number"
                ));
            }
            Value::Float8(if f == S::Ln { x.ln() } else { x.log10() })
        }
        S::Pi => Value::Float8(std::f64::consts::PI),
        S::Sign => match &vals[0] {
            Value::Numeric(d) => Value::Numeric(if d.is_zero() {
                Decimal::ZERO
            } else if d.is_sign_negative() {
                Decimal::NEGATIVE_ONE
            } else {
                Decimal::ONE
            }),
            v => {
                let x = float(v);
                Value::Float8(if x > 0.0 {
                    1.0
                } else if x < 0.0 {
                    -1.0
                } else {
                    0.0
                })
            }
        },
        S::Degrees => Value::Float8(float(&vals[0]).to_degrees()),
        S::Radians => Value::Float8(float(&vals[0]).to_radians()),
        S::Concat => Value::Text(join(vals, "")),
        S::ConcatWs => match vals.first() {
            None | Some(Value::Null) => Value::Null,
            Some(sep) => Value::Text(join(&vals[1..], &text_of(sep))),
        },
        S::Replace => {
            let (s, from, to) = (text_of(&vals[0]), text_of(&vals[1]), text_of(&vals[2]));
            check_length(s.len().saturating_add(s.len().saturating_mul(to.len())))?;
            Value::Text(if from.is_empty() {
                s
            } else {
                s.replace(&from, &to)
            })
        }
        S::Trim(side) => {
            let s = text_of(&vals[0]);
            let set: Vec<char> = match vals.get(1) {
                Some(v) => text_of(v).chars().collect(),
                None => vec![' '],
            };
            let drop = |c: char| set.contains(&c);
            Value::Text(
                match side {
                    TrimSide::Both => s.trim_matches(drop),
                    TrimSide::Leading => s.trim_start_matches(drop),
                    TrimSide::Trailing => s.trim_end_matches(drop),
                }
                .to_string(),
            )
        }
        S::Strpos => {
            let (s, sub) = (text_of(&vals[0]), text_of(&vals[1]));
            Value::Int4(match s.find(&sub) {
                Some(at) => s[..at].chars().count() as i32 + 1,
                None => 0,
            })
        }
        S::Initcap => Value::Text(initcap(&text_of(&vals[0]))),
        S::Reverse => Value::Text(text_of(&vals[0]).chars().rev().collect()),
        S::Chr => chr(vals[0].as_i64().unwrap_or(0))?,
        S::Ascii => Value::Int4(text_of(&vals[0]).chars().next().map_or(0, |c| c as i32)),
        S::StartsWith => Value::Bool(text_of(&vals[0]).starts_with(&text_of(&vals[1]))),
        S::Translate => Value::Text(translate(
            &text_of(&vals[0]),
            &text_of(&vals[1]),
            &text_of(&vals[2]),
        )),
        S::RegexpReplace => {
            let flags = vals.get(3).map(text_of).unwrap_or_default();
            Value::Text(super::catalog_functions::regexp_replace(
                &text_of(&vals[0]),
                &text_of(&vals[1]),
                &text_of(&vals[2]),
                &flags,
            )?)
        }
        S::Format => match vals.first() {
            None | Some(Value::Null) => Value::Null,
            Some(template) => Value::Text(format(&text_of(template), &vals[1..])?),
        },
        S::ToChar => {
            let template = text_of(&vals[1]);
            match &vals[0] {
                Value::Timestamp(t) => types::timestamp_to_char(*t, false, &template)?,
                Value::TimestampTz(t) => types::timestamp_to_char(*t, true, &template)?,
                Value::Interval(iv) => types::interval_to_char(iv, &template)?,
                v => types::number_to_char(v, &template)?,
            }
        }
        S::ToTimestamp => to_timestamp(float(&vals[0]))?,
        S::ParseTimestamp => {
            Value::TimestampTz(types::to_timestamp(&text_of(&vals[0]), &text_of(&vals[1]))?)
        }
        S::ParseDate => Value::Date(types::to_date(&text_of(&vals[0]), &text_of(&vals[1]))?),
        S::AtTimeZone => at_time_zone(&vals[0], &vals[1])?,
        S::ArrayPosition => array_position(vals)?,
        S::StringToArray => string_to_array(vals),
        S::Encode => Value::Text(encode(&vals[0], &text_of(&vals[1]))?),
        S::Decode => Value::Bytea(decode(&text_of(&vals[0]), &text_of(&vals[1]))?),
        S::Sha(bits) => Value::Bytea(sha(bits, &vals[0])),
        S::ToHex => Value::Text(match &vals[0] {
            Value::Int4(n) => format!("{:x}", *n as u32),
            v => format!("{:x}", v.as_i64().unwrap_or(0) as u64),
        }),
        S::Div => match (&vals[0], &vals[1]) {
            (Value::Numeric(a), Value::Numeric(b)) => {
                if b.is_zero() {
                    return Err(err!(DIVISION_BY_ZERO, "division by zero"));
                }
                let q = a.checked_div(*b).ok_or_else(numeric_overflow)?.trunc();
                at_scale(q, 0)
            }
            _ => return Err(Error::internal("div of non-numerics")),
        },
        S::Gcd | S::Lcm => gcd_lcm(f, &vals[0], &vals[1])?,
        S::NumNulls => Value::Int4(vals.iter().filter(|v| v.is_null()).count() as i32),
        S::NumNonNulls => Value::Int4(vals.iter().filter(|v| !v.is_null()).count() as i32),
        S::QuoteNullable => Value::Text(match &vals[0] {
            Value::Null => "NULL".to_string(),
            v => super::catalog_functions::quote_literal(&text_of(v)),
        }),
        S::MakeDate => make_date(&vals[0], &vals[1], &vals[2])?,
        S::IsFinite => Value::Bool(match &vals[0] {
            Value::Date(d) => *d != i32::MIN && *d != i32::MAX,
            Value::Timestamp(t) | Value::TimestampTz(t) => *t != i64::MIN && *t != i64::MAX,
            _ => true,
        }),
        S::Age => age(&vals[0], &vals[1])?,
        S::RegexpSplitToArray => {
            let text = |i: usize| vals.get(i).map(text_of).unwrap_or_default();
            let pieces = super::catalog_functions::regexp_split(
                &text(0),
                &text(1),
                &text(2),
                "regexp_split_to_array",
            )?;
            let items: Vec<Value> = pieces.into_iter().map(Value::Text).collect();
            Value::Array(&types::DataType::Text, items.into())
        }
        S::BitLength => Value::Int4((text_of(&vals[0]).len() * 8) as i32),
        S::JustifyDays | S::JustifyHours | S::JustifyInterval => {
            let Value::Interval(iv) = &vals[0] else {
                return Err(Error::internal("justify of a non-interval"));
            };
            Value::Interval(justify(f, *iv)?)
        }
        S::DateBin => date_bin(&vals[0], &vals[1], &vals[2])?,
        S::MakeTimestamp | S::MakeTimestampTz => make_timestamp(f, vals)?,
        S::MakeInterval => make_interval(vals)?,
        S::WidthBucket => width_bucket(vals)?,
        S::ArrayReplace => array_replace(vals),
        S::Overlay => overlay(vals)?,
        S::PgSleep => {
            sleep(float(&vals[0]), ctx)?;
            Value::Text(String::new())
        }
    })
}

fn interval_out_of_range() -> Error {
    err!(DATETIME_FIELD_OVERFLOW, "interval out of range")
}

/// justify_days (30 days make a month), justify_hours (24 hours make a day) and
/// justify_interval (both, with the signs made to agree), as PostgreSQL 15 computes them.
fn justify(f: ScalarFunc, iv: types::Interval) -> Result<types::Interval> {
    const DAY_US: i64 = types::USECS_PER_DAY;
    let (mut months, mut days, mut time) = (iv.months, iv.days, iv.micros);
    let days_to_months = |months: &mut i32, days: &mut i32| -> Result<()> {
        let whole = *days / 30;
        *days -= whole * 30;
        *months = months
            .checked_add(whole)
            .ok_or_else(interval_out_of_range)?;
        Ok(())
    };
    let time_to_days = |days: &mut i32, time: &mut i64| -> Result<()> {
        let whole = *time / DAY_US;
        *time -= whole * DAY_US;
        *days = i32::try_from(whole)
            .ok()
            .and_then(|w| days.checked_add(w))
            .ok_or_else(interval_out_of_range)?;
        Ok(())
    };
    // A whole month of days (or a day of time) moved to make the smaller part's sign
    // agree with the larger's.
    let month_sign = |months: &mut i32, days: &mut i32, time: i64| {
        if *months > 0 && (*days < 0 || (*days == 0 && time < 0)) {
            *days += 30;
            *months -= 1;
        } else if *months < 0 && (*days > 0 || (*days == 0 && time > 0)) {
            *days -= 30;
            *months += 1;
        }
    };
    let day_sign = |days: &mut i32, time: &mut i64| {
        if *days > 0 && *time < 0 {
            *time += DAY_US;
            *days -= 1;
        } else if *days < 0 && *time > 0 {
            *time -= DAY_US;
            *days += 1;
        }
    };
    match f {
        ScalarFunc::JustifyDays => {
            days_to_months(&mut months, &mut days)?;
            // justify_days looks at the days alone.
            month_sign(&mut months, &mut days, 0);
        }
        ScalarFunc::JustifyHours => {
            time_to_days(&mut days, &mut time)?;
            day_sign(&mut days, &mut time);
        }
        _ => {
            if (days > 0 && time > 0) || (days < 0 && time < 0) {
                days_to_months(&mut months, &mut days)?;
            }
            time_to_days(&mut days, &mut time)?;
            days_to_months(&mut months, &mut days)?;
            month_sign(&mut months, &mut days, time);
            day_sign(&mut days, &mut time);
        }
    }
    Ok(types::Interval {
        months,
        days,
        micros: time,
    })
}

/// date_bin(stride, t, origin): the start of the stride-long bin, counted from origin,
/// that holds t (rounded toward the past).
fn date_bin(stride: &Value, source: &Value, origin: &Value) -> Result<Value> {
    let (Value::Interval(stride), Value::Timestamp(t) | Value::TimestampTz(t)) = (stride, source)
    else {
        return Err(Error::internal("date_bin arguments"));
    };
    let (Value::Timestamp(origin) | Value::TimestampTz(origin)) = origin else {
        return Err(Error::internal("date_bin origin"));
    };
    let infinite = |x: i64| x == i64::MIN || x == i64::MAX;
    if infinite(*t) {
        return Ok(source.clone());
    }
    if infinite(*origin) {
        return Err(err!(DATETIME_FIELD_OVERFLOW, "origin out of range"));
    }
    if stride.months != 0 {
        return Err(err!(
            FEATURE_NOT_SUPPORTED,
            "timestamps cannot be binned into intervals containing months or years"
        ));
    }
    let stride_us = i64::from(stride.days)
        .checked_mul(types::USECS_PER_DAY)
        .and_then(|d| d.checked_add(stride.micros))
        .ok_or_else(interval_out_of_range)?;
    if stride_us <= 0 {
        return Err(err!(
            DATETIME_FIELD_OVERFLOW,
            "stride must be greater than zero"
        ));
    }
    let diff = t.checked_sub(*origin).ok_or_else(interval_out_of_range)?;
    let modulo = diff % stride_us;
    let mut bin = origin + (diff - modulo);
    if modulo < 0 {
        bin -= stride_us;
    }
    if !types::is_valid_timestamp(bin) {
        return Err(err!(DATETIME_FIELD_OVERFLOW, "timestamp out of range"));
    }
    Ok(match source {
        Value::TimestampTz(_) => Value::TimestampTz(bin),
        _ => Value::Timestamp(bin),
    })
}

/// make_timestamp and make_timestamptz: the date and time fields (a negative year is
/// BC; seconds may have a fraction), for make_timestamptz a local time of the zone
/// named or the session's.
fn make_timestamp(f: ScalarFunc, vals: &[Value]) -> Result<Value> {
    let Value::Date(day) = make_date(&vals[0], &vals[1], &vals[2])? else {
        return Err(Error::internal("make_date"));
    };
    let (hour, minute, second) = (
        vals[3].as_i64().unwrap_or(0),
        vals[4].as_i64().unwrap_or(0),
        float(&vals[5]),
    );
    if !(0..=24).contains(&hour)
        || !(0..=59).contains(&minute)
        || !(0.0..=60.0).contains(&second)
        || (hour == 24 && (minute != 0 || second != 0.0))
    {
        return Err(err!(
            DATETIME_FIELD_OVERFLOW,
            "time field value out of range: {}:{:02}:{:02}",
            hour,
            minute,
            format_float_seconds(second)
        ));
    }
    let time_us = (hour * 3600 + minute * 60) * 1_000_000 + (second * 1e6).round() as i64;
    let out_of_range = || err!(DATETIME_FIELD_OVERFLOW, "timestamp out of range");
    let local = i64::from(day)
        .checked_mul(types::USECS_PER_DAY)
        .and_then(|d| d.checked_add(time_us))
        .filter(|t| types::is_valid_timestamp(*t))
        .ok_or_else(out_of_range)?;
    if f == ScalarFunc::MakeTimestamp {
        return Ok(Value::Timestamp(local));
    }
    let zone = match vals.get(6) {
        Some(z) => std::sync::Arc::new(types::zone::zone_named(&text_of(z))?),
        None => types::zone::session_zone(),
    };
    Some(zone.utc_of_local(local))
        .filter(|t| types::is_valid_timestamp(*t))
        .map(Value::TimestampTz)
        .ok_or_else(out_of_range)
}

/// Seconds as PostgreSQL's message shows them (`61`, `1.5`).
fn format_float_seconds(s: f64) -> String {
    if s.fract() == 0.0 {
        format!("{s:02}")
    } else {
        format!("{s}")
    }
}

/// make_interval(years, months, weeks, days, hours, mins, secs): the parts given (0 for
/// the rest), as `interval` holds them.
fn make_interval(vals: &[Value]) -> Result<Value> {
    let int = |i: usize| vals.get(i).and_then(Value::as_i64).unwrap_or(0);
    let months = int(0)
        .checked_mul(12)
        .and_then(|m| m.checked_add(int(1)))
        .and_then(|m| i32::try_from(m).ok())
        .ok_or_else(interval_out_of_range)?;
    let days = int(2)
        .checked_mul(7)
        .and_then(|d| d.checked_add(int(3)))
        .and_then(|d| i32::try_from(d).ok())
        .ok_or_else(interval_out_of_range)?;
    let secs = vals.get(6).map_or(0.0, float);
    let micros = (int(4) as f64 * 3600.0 + int(5) as f64 * 60.0 + secs) * 1e6;
    if !micros.is_finite() || micros.abs() >= 9.2e18 {
        return Err(interval_out_of_range());
    }
    Ok(Value::Interval(types::Interval {
        months,
        days,
        micros: micros.round() as i64,
    }))
}

/// width_bucket(operand, low, high, count): which of `count` equal buckets between low
/// and high holds operand (0 below, count + 1 at or above high; reversed when high <
/// low).
fn width_bucket(vals: &[Value]) -> Result<Value> {
    let count = vals[3].as_i64().unwrap_or(0);
    if count <= 0 {
        return Err(err!(
            INVALID_ARGUMENT_FOR_WIDTH_BUCKET_FUNCTION,
            "count must be greater than zero"
        ));
    }
    if let [Value::Numeric(x), Value::Numeric(low), Value::Numeric(high), _] = vals {
        return numeric_width_bucket(*x, *low, *high, count);
    }
    let (x, low, high) = (float(&vals[0]), float(&vals[1]), float(&vals[2]));
    if x.is_nan() || low.is_nan() || high.is_nan() {
        return Err(err!(
            INVALID_ARGUMENT_FOR_WIDTH_BUCKET_FUNCTION,
            "operand, lower bound, and upper bound cannot be NaN"
        ));
    }
    if low == high {
        return Err(err!(
            INVALID_ARGUMENT_FOR_WIDTH_BUCKET_FUNCTION,
            "lower bound cannot equal upper bound"
        ));
    }
    let bucket = if low < high {
        if x < low {
            0
        } else if x >= high {
            count + 1
        } else {
            ((x - low) / (high - low) * count as f64) as i64 + 1
        }
    } else if x > low {
        0
    } else if x <= high {
        count + 1
    } else {
        ((low - x) / (low - high) * count as f64) as i64 + 1
    };
    i32::try_from(bucket)
        .map(Value::Int4)
        .map_err(|_| err!(NUMERIC_VALUE_OUT_OF_RANGE, "integer out of range"))
}

/// width_bucket of numerics, exactly.
fn numeric_width_bucket(x: Decimal, low: Decimal, high: Decimal, count: i64) -> Result<Value> {
    if low == high {
        return Err(err!(
            INVALID_ARGUMENT_FOR_WIDTH_BUCKET_FUNCTION,
            "lower bound cannot equal upper bound"
        ));
    }
    let n = Decimal::from(count);
    let within = |num: Decimal, den: Decimal| -> Result<i64> {
        let q = num
            .checked_mul(n)
            .and_then(|m| m.checked_div(den))
            .ok_or_else(|| err!(NUMERIC_VALUE_OUT_OF_RANGE, "value out of range"))?;
        Ok(q.floor().to_i64().unwrap_or(i64::MAX).saturating_add(1))
    };
    let bucket = if low < high {
        if x < low {
            0
        } else if x >= high {
            count + 1
        } else {
            within(x - low, high - low)?
        }
    } else if x > low {
        0
    } else if x <= high {
        count + 1
    } else {
        within(low - x, low - high)?
    };
    i32::try_from(bucket)
        .map(Value::Int4)
        .map_err(|_| err!(NUMERIC_VALUE_OUT_OF_RANGE, "integer out of range"))
}

/// array_replace(array, from, to): each element IS NOT DISTINCT FROM `from` made `to`.
fn array_replace(vals: &[Value]) -> Value {
    let Value::Array(element, items) = &vals[0] else {
        return Value::Null;
    };
    let (from, to) = (&vals[1], &vals[2]);
    let same = |x: &Value| match (x.is_null(), from.is_null()) {
        (true, true) => true,
        (false, false) => types::compare(x, from) == Some(std::cmp::Ordering::Equal),
        _ => false,
    };
    let replaced: Vec<Value> = items
        .iter()
        .map(|x| if same(x) { to.clone() } else { x.clone() })
        .collect();
    Value::Array(element, replaced.into())
}

/// overlay(s PLACING r FROM start [FOR count]): s with `count` characters (r's length
/// without FOR) from `start` replaced by r.
fn overlay(vals: &[Value]) -> Result<Value> {
    let (s, r) = (text_of(&vals[0]), text_of(&vals[1]));
    let start = vals[2].as_i64().unwrap_or(1);
    let count = match vals.get(3) {
        Some(v) => v.as_i64().unwrap_or(0),
        None => r.chars().count() as i64,
    };
    if start <= 0 || count < 0 {
        return Err(err!(
            SUBSTRING_ERROR,
            "negative substring length not allowed"
        ));
    }
    let chars: Vec<char> = s.chars().collect();
    let head = (start - 1).min(chars.len() as i64) as usize;
    let tail = (start - 1).saturating_add(count).min(chars.len() as i64) as usize;
    let mut out: String = chars[..head].iter().collect();
    out.push_str(&r);
    out.extend(&chars[tail..]);
    Ok(Value::Text(out))
}

fn float(v: &Value) -> f64 {
    match v {
        Value::Float8(x) => *x,
        Value::Float4(x) => f64::from(*x),
        Value::Numeric(d) => d.to_f64().unwrap_or(f64::NAN),
        v => v.as_i64().map_or(f64::NAN, |n| n as f64),
    }
}

fn check_length(bytes: usize) -> Result<()> {
    if bytes > crate::constants::MAX_VALUE_BYTES {
        return Err(err!(PROGRAM_LIMIT_EXCEEDED, "requested length too large"));
    }
    Ok(())
}

fn join(vals: &[Value], sep: &str) -> String {
    vals.iter()
        .filter(|v| !v.is_null())
        .map(text_of)
        .collect::<Vec<_>>()
        .join(sep)
}

/// round, trunc, ceil and floor; `digits` only for numeric round and trunc.
fn round(f: ScalarFunc, v: &Value, digits: Option<&Value>) -> Result<Value> {
    let d = match v {
        Value::Numeric(d) => *d,
        v => {
            let x = float(v);
            return Ok(Value::Float8(match f {
                ScalarFunc::Round => x.round_ties_even(),
                ScalarFunc::Trunc => x.trunc(),
                ScalarFunc::Ceil => x.ceil(),
                _ => x.floor(),
            }));
        }
    };
    let strategy = match f {
        ScalarFunc::Round => RoundingStrategy::MidpointAwayFromZero,
        ScalarFunc::Trunc => RoundingStrategy::ToZero,
        ScalarFunc::Ceil => RoundingStrategy::ToPositiveInfinity,
        _ => RoundingStrategy::ToNegativeInfinity,
    };
    let n = digits.and_then(Value::as_i64).unwrap_or(0);
    let rounded = if n >= 0 {
        let scale = (n as u32).min(Decimal::MAX_SCALE);
        let mut r = d.round_dp_with_strategy(scale, strategy);
        // The result shows `n` digits even where the argument had fewer.
        r.rescale(scale);
        r
    } else {
        // To tens, hundreds, ...: digits beyond the mantissa's range round to zero.
        let places = (-n).min(29) as u32;
        let unit = Decimal::from_i128_with_scale(10i128.pow(places), 0);
        match d.checked_div(unit) {
            Some(q) => q
                .round_dp_with_strategy(0, strategy)
                .checked_mul(unit)
                .ok_or_else(|| {
                    err!(NUMERIC_VALUE_OUT_OF_RANGE, "value overflows numeric format")
                })?,
            None => Decimal::ZERO,
        }
    };
    let mut r = rounded;
    if r.is_zero() {
        r.set_sign_positive(true);
    }
    Ok(Value::Numeric(r))
}

/// PostgreSQL's `NUMERIC_MIN_SIG_DIGITS`: the transcendental functions of numerics
/// give at least this many significant digits.
const MIN_SIG_DIGITS: i64 = 16;

fn numeric_overflow() -> Error {
    err!(NUMERIC_VALUE_OUT_OF_RANGE, "value overflows numeric format")
}

/// `d` rounded to `scale` fraction digits (at most 28, numeric's limit here) and shown
/// with that many.
fn at_scale(d: Decimal, scale: i64) -> Value {
    let scale = scale.clamp(0, i64::from(Decimal::MAX_SCALE)) as u32;
    let mut r = d.round_dp_with_strategy(scale, RoundingStrategy::MidpointAwayFromZero);
    r.rescale(scale);
    if r.is_zero() {
        r.set_sign_positive(true);
    }
    Value::Numeric(r)
}

/// PostgreSQL's estimate of the decimal weight of ln(x) (x > 0), which sets the scale
/// of logarithms.
fn ln_weight(x: Decimal) -> i64 {
    let near_one = Decimal::new(9, 1) <= x && x <= Decimal::new(11, 1);
    if near_one {
        let d = (x - Decimal::ONE).abs();
        if d.is_zero() {
            return 0;
        }
        return d.to_f64().map_or(0, |f| f.log10().floor() as i64);
    }
    x.to_f64().map_or(0, |f| f.ln().abs().log10() as i64)
}

fn check_log_argument(x: Decimal) -> Result<()> {
    if x.is_zero() {
        return Err(err!(
            INVALID_ARGUMENT_FOR_LOG,
            "cannot take logarithm of zero"
        ));
    }
    if x.is_sign_negative() {
        return Err(err!(
            INVALID_ARGUMENT_FOR_LOG,
            "cannot take logarithm of a negative number"
        ));
    }
    Ok(())
}

/// exp, ln and log10 of a numeric, with PostgreSQL's result scales.
fn numeric_log_exp(f: ScalarFunc, v: &Value) -> Result<Value> {
    let Value::Numeric(x) = v else {
        return Err(Error::internal("a numeric function of a non-numeric"));
    };
    let x = *x;
    let dscale = i64::from(x.scale());
    match f {
        ScalarFunc::Exp => {
            let weight = x
                .to_f64()
                .map_or(0, |f| (f * std::f64::consts::LOG10_E) as i64);
            let r = x.checked_exp().ok_or_else(numeric_overflow)?;
            Ok(at_scale(r, (MIN_SIG_DIGITS - weight).max(dscale)))
        }
        _ => {
            check_log_argument(x)?;
            let r = match f {
                ScalarFunc::Ln => x.checked_ln(),
                _ => x.checked_log10(),
            }
            .ok_or_else(numeric_overflow)?;
            Ok(at_scale(r, (MIN_SIG_DIGITS - ln_weight(x)).max(dscale)))
        }
    }
}

/// log(base, x) of numerics.
fn numeric_log(base: &Value, x: &Value) -> Result<Value> {
    let (Value::Numeric(b), Value::Numeric(x)) = (base, x) else {
        return Err(Error::internal("log of non-numerics"));
    };
    check_log_argument(*b)?;
    check_log_argument(*x)?;
    let ln_b = b.checked_ln().ok_or_else(numeric_overflow)?;
    if ln_b.is_zero() {
        return Err(err!(DIVISION_BY_ZERO, "division by zero"));
    }
    let ln_x = x.checked_ln().ok_or_else(numeric_overflow)?;
    let r = ln_x.checked_div(ln_b).ok_or_else(numeric_overflow)?;
    let scale = (MIN_SIG_DIGITS - (ln_weight(*x) - ln_weight(*b)))
        .max(i64::from(b.scale()))
        .max(i64::from(x.scale()));
    Ok(at_scale(r, scale))
}

/// power(numeric, numeric), with PostgreSQL 15's result scales: at least 16 fraction
/// digits for an integer exponent, else 16 significant ones.
fn numeric_power(a: Decimal, b: Decimal) -> Result<Value> {
    let scales = i64::from(a.scale()).max(i64::from(b.scale()));
    if a.is_zero() {
        if b.is_sign_negative() && !b.is_zero() {
            return Err(err!(
                INVALID_ARGUMENT_FOR_POWER_FUNCTION,
                "zero raised to a negative power is undefined"
            ));
        }
        let r = if b.is_zero() {
            Decimal::ONE
        } else {
            Decimal::ZERO
        };
        return Ok(at_scale(r, MIN_SIG_DIGITS.max(scales)));
    }
    if b.fract().is_zero() {
        let n = b.to_i64().ok_or_else(numeric_overflow)?;
        let r = a.checked_powi(n).ok_or_else(numeric_overflow)?;
        return Ok(at_scale(r, MIN_SIG_DIGITS.max(i64::from(a.scale()))));
    }
    if a.is_sign_negative() {
        return Err(err!(
            INVALID_ARGUMENT_FOR_POWER_FUNCTION,
            "a negative number raised to a non-integer power yields a complex result"
        ));
    }
    let ln = a.checked_ln().ok_or_else(numeric_overflow)?;
    let product = ln.checked_mul(b).ok_or_else(numeric_overflow)?;
    let weight = product
        .to_f64()
        .map_or(0, |f| (f * std::f64::consts::LOG10_E) as i64);
    let r = product.checked_exp().ok_or_else(numeric_overflow)?;
    Ok(at_scale(r, (MIN_SIG_DIGITS - weight).max(scales)))
}

fn power(a: &Value, b: &Value) -> Result<Value> {
    if let (Value::Numeric(x), Value::Numeric(y)) = (a, b) {
        return numeric_power(*x, *y);
    }
    let (x, y) = (float(a), float(b));
    if x == 0.0 && y < 0.0 {
        return Err(err!(
            INVALID_ARGUMENT_FOR_POWER_FUNCTION,
            "zero raised to a negative power is undefined"
        ));
    }
    if x < 0.0 && y.fract() != 0.0 {
        return Err(err!(
            INVALID_ARGUMENT_FOR_POWER_FUNCTION,
            "a negative number raised to a non-integer power yields a complex result"
        ));
    }
    let r = x.powf(y);
    if r.is_infinite() && x.is_finite() && y.is_finite() {
        return Err(err!(
            NUMERIC_VALUE_OUT_OF_RANGE,
            "value out of range: overflow"
        ));
    }
    if r == 0.0 && x != 0.0 && y.is_finite() && x.is_finite() && x.abs() != 1.0 {
        return Err(err!(
            NUMERIC_VALUE_OUT_OF_RANGE,
            "value out of range: underflow"
        ));
    }
    Ok(Value::Float8(r))
}

/// sqrt of a float8, or of a numeric with PostgreSQL's result scale: at least 16
/// significant digits, and no fewer fraction digits than the argument.
fn sqrt(v: &Value) -> Result<Value> {
    let negative = || {
        err!(
            INVALID_ARGUMENT_FOR_POWER_FUNCTION,
            "cannot take square root of a negative number"
        )
    };
    let Value::Numeric(d) = v else {
        let x = float(v);
        if x < 0.0 {
            return Err(negative());
        }
        return Ok(Value::Float8(x.sqrt()));
    };
    if d.is_sign_negative() && !d.is_zero() {
        return Err(negative());
    }
    // PostgreSQL weighs the argument in base-10000 digits: weight w gives an estimate of
    // (w + 1) * 2 - 1 decimal digits before the point in the root.
    let int_digits = d.trunc().abs().to_string().trim_start_matches('0').len() as i64;
    let weight = if d.is_zero() {
        0
    } else if int_digits > 0 {
        (int_digits - 1).div_euclid(4)
    } else {
        let fraction = d.abs().fract().to_string();
        let zeros = fraction[2..].len() - fraction[2..].trim_start_matches('0').len();
        -((zeros as i64) / 4) - 1
    };
    let root_weight = (weight + 1) * 4 / 2 - 1;
    let scale = (16 - root_weight)
        .max(i64::from(d.scale()))
        .clamp(0, i64::from(Decimal::MAX_SCALE)) as u32;
    let root = d
        .sqrt()
        .ok_or_else(negative)?
        .round_dp_with_strategy(scale, RoundingStrategy::MidpointAwayFromZero);
    let mut r = root;
    r.rescale(scale);
    Ok(Value::Numeric(r))
}

fn initcap(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut in_word = false;
    for c in s.chars() {
        if in_word {
            out.extend(c.to_lowercase());
        } else {
            out.extend(c.to_uppercase());
        }
        in_word = c.is_alphanumeric();
    }
    out
}

fn chr(code: i64) -> Result<Value> {
    if code < 0 {
        return Err(err!(
            INVALID_PARAMETER_VALUE,
            "character number must be positive"
        ));
    }
    if code == 0 {
        return Err(err!(PROGRAM_LIMIT_EXCEEDED, "null character not permitted"));
    }
    let c = u32::try_from(code)
        .ok()
        .and_then(char::from_u32)
        .ok_or_else(|| {
            err!(
                PROGRAM_LIMIT_EXCEEDED,
                "requested character too large for encoding: {}",
                code
            )
        })?;
    Ok(Value::Text(c.to_string()))
}

/// translate: each character of `from` becomes the one at its place in `to`, or is
/// dropped where `to` is shorter.
fn translate(s: &str, from: &str, to: &str) -> String {
    let from: Vec<char> = from.chars().collect();
    let to: Vec<char> = to.chars().collect();
    s.chars()
        .filter_map(|c| match from.iter().position(|&f| f == c) {
            Some(i) => to.get(i).copied(),
            None => Some(c),
        })
        .collect()
}

fn format_error(message: &str) -> Error {
    err!(INVALID_PARAMETER_VALUE, "{}", message)
}

/// format(): `%[n$][-][width]type` with types `s`, `I`, `L` and `%%`.
fn format(template: &str, args: &[Value]) -> Result<String> {
    let mut out = String::new();
    let mut chars = template.chars().peekable();
    let mut next_arg = 0usize;
    while let Some(c) = chars.next() {
        if c != '%' {
            out.push(c);
            continue;
        }
        if chars.peek() == Some(&'%') {
            chars.next();
            out.push('%');
            continue;
        }
        let number = |chars: &mut std::iter::Peekable<std::str::Chars>| -> Result<Option<usize>> {
            let mut n: Option<usize> = None;
            while let Some(d) = chars.peek().and_then(|c| c.to_digit(10)) {
                chars.next();
                n = Some(
                    n.unwrap_or(0)
                        .checked_mul(10)
                        .and_then(|n| n.checked_add(d as usize))
                        .filter(|n| *n <= i32::MAX as usize)
                        .ok_or_else(|| format_error("number is out of range"))?,
                );
            }
            Ok(n)
        };
        // An argument position (`n$`), then flags and width.
        let mut position = None;
        let mut first = number(&mut chars)?;
        if first.is_some() && chars.peek() == Some(&'$') {
            chars.next();
            if first == Some(0) {
                return Err(format_error(
                    "format specifies argument 0, but arguments are numbered from 1",
                ));
            }
            position = first;
            first = None;
        }
        let mut left = false;
        if first.is_none() && chars.peek() == Some(&'-') {
            chars.next();
            left = true;
        }
        let width = match first {
            Some(w) => Some(w),
            None if chars.peek() == Some(&'*') => {
                return Err(err!(
                    FEATURE_NOT_SUPPORTED,
                    "a width taken from the arguments (*) in format() is not supported yet"
                ))
            }
            None => number(&mut chars)?,
        };
        let Some(kind) = chars.next() else {
            return Err(format_error("unterminated format() type specifier"));
        };
        if !matches!(kind, 's' | 'I' | 'L') {
            return Err(err!(
                INVALID_PARAMETER_VALUE,
                "unrecognized format() type specifier \"{}\"",
                kind
            )
            .with_hint("For a single \"%\" use \"%%\"."));
        }
        let index = match position {
            Some(p) => p - 1,
            None => next_arg,
        };
        next_arg = index + 1;
        let Some(arg) = args.get(index) else {
            return Err(format_error("too few arguments for format()"));
        };
        let text = match (kind, arg) {
            ('s', Value::Null) => String::new(),
            ('L', Value::Null) => "NULL".to_string(),
            ('I', Value::Null) => {
                return Err(err!(
                    NULL_VALUE_NOT_ALLOWED,
                    "null values cannot be formatted as an SQL identifier"
                ))
            }
            ('s', v) => text_of(v),
            ('I', v) => super::pg_catalog::quote_ident(&text_of(v)),
            (_, v) => super::catalog_functions::quote_literal(&text_of(v)),
        };
        let w = width.unwrap_or(0);
        let len = text.chars().count();
        check_length(out.len().saturating_add(w).saturating_add(text.len()))?;
        if len >= w {
            out.push_str(&text);
        } else if left {
            out.push_str(&text);
            out.extend(std::iter::repeat_n(' ', w - len));
        } else {
            out.extend(std::iter::repeat_n(' ', w - len));
            out.push_str(&text);
        }
    }
    Ok(out)
}

/// `t AT TIME ZONE zone`: a timestamptz as the zone's wall-clock time, or a timestamp
/// read as the zone's wall-clock time. The zone is an interval (an offset east of UTC),
/// an abbreviation, a zone of the database or a POSIX offset.
fn at_time_zone(t: &Value, zone: &Value) -> Result<Value> {
    let zone = match zone {
        Value::Interval(iv) => {
            if iv.months != 0 || iv.days != 0 {
                return Err(err!(
                    INVALID_PARAMETER_VALUE,
                    "interval time zone \"{}\" must not include months or days",
                    text_of(zone)
                ));
            }
            let offset_secs = i32::try_from(iv.micros / 1_000_000)
                .map_err(|_| err!(DATETIME_FIELD_OVERFLOW, "timestamp out of range"))?;
            types::zone::Zone::hours_east(offset_secs)
        }
        z => types::zone::zone_named(&text_of(z))?,
    };
    let out_of_range = || err!(DATETIME_FIELD_OVERFLOW, "timestamp out of range");
    let checked = |t: i64| -> Result<i64> {
        Some(t)
            .filter(|r| types::is_valid_timestamp(*r))
            .ok_or_else(out_of_range)
    };
    Ok(match t {
        Value::TimestampTz(t) => Value::Timestamp(checked(zone.local_of(*t))?),
        Value::Timestamp(t) => Value::TimestampTz(checked(zone.utc_of_local(*t))?),
        _ => return Err(Error::internal("AT TIME ZONE of a non-timestamp")),
    })
}

fn array_position(vals: &[Value]) -> Result<Value> {
    let Some(Value::Array(_, items)) = vals.first() else {
        return Ok(Value::Null);
    };
    let wanted = vals.get(1).unwrap_or(&Value::Null);
    let start = match vals.get(2) {
        None => 1,
        Some(Value::Null) => {
            return Err(err!(
                NULL_VALUE_NOT_ALLOWED,
                "initial position must not be null"
            ))
        }
        Some(v) => v.as_i64().unwrap_or(1),
    };
    let from = usize::try_from(start.max(1) - 1).unwrap_or(0);
    let found = items
        .iter()
        .enumerate()
        .skip(from)
        .find(|(_, v)| match (v, wanted) {
            (Value::Null, Value::Null) => true,
            (Value::Null, _) | (_, Value::Null) => false,
            (a, b) => types::compare(a, b) == Some(std::cmp::Ordering::Equal),
        });
    Ok(found.map_or(Value::Null, |(i, _)| Value::Int4(i as i32 + 1)))
}

static TEXT: crate::types::DataType = crate::types::DataType::Text;

/// string_to_array: a NULL delimiter splits into characters, an empty one gives the
/// whole text; fields equal to `null_string` are NULL.
fn string_to_array(vals: &[Value]) -> Value {
    let Some(text) = vals.first().filter(|v| !v.is_null()).map(text_of) else {
        return Value::Null;
    };
    let null_string = vals.get(2).filter(|v| !v.is_null()).map(text_of);
    let fields: Vec<String> = match vals.get(1).filter(|v| !v.is_null()).map(text_of) {
        _ if text.is_empty() => Vec::new(),
        None => text.chars().map(String::from).collect(),
        Some(d) if d.is_empty() => vec![text],
        Some(d) => text.split(d.as_str()).map(String::from).collect(),
    };
    let items: Vec<Value> = fields
        .into_iter()
        .map(|f| match &null_string {
            Some(n) if *n == f => Value::Null,
            _ => Value::Text(f),
        })
        .collect();
    Value::Array(&TEXT, items.into())
}

fn bytes_of(v: &Value) -> Vec<u8> {
    match v {
        Value::Bytea(b) => b.clone(),
        v => text_of(v).into_bytes(),
    }
}

fn unrecognized_encoding(format: &str) -> Error {
    err!(
        INVALID_PARAMETER_VALUE,
        "unrecognized encoding: \"{}\"",
        format
    )
}

/// encode(bytea, format): base64 lines of 76 characters, as PostgreSQL writes them.
fn encode(v: &Value, format: &str) -> Result<String> {
    use base64::Engine;
    let bytes = bytes_of(v);
    Ok(match format.to_ascii_lowercase().as_str() {
        "hex" => hex::encode(&bytes),
        "base64" => {
            let text = base64::engine::general_purpose::STANDARD.encode(&bytes);
            let lines: Vec<&str> = text
                .as_bytes()
                .chunks(76)
                .map(|c| std::str::from_utf8(c).unwrap_or(""))
                .collect();
            lines.join("\n")
        }
        "escape" => {
            let mut out = String::new();
            for &b in &bytes {
                match b {
                    0 => out.push_str("\\000"),
                    b'\\' => out.push_str("\\\\"),
                    0x80..=0xff => out.push_str(&format!("\\{b:03o}")),
                    _ => out.push(char::from(b)),
                }
            }
            out
        }
        _ => return Err(unrecognized_encoding(format)),
    })
}

/// decode(text, format).
fn decode(text: &str, format: &str) -> Result<Vec<u8>> {
    use base64::Engine;
    Ok(match format.to_ascii_lowercase().as_str() {
        "hex" => {
            let compact: String = text.chars().filter(|c| !c.is_whitespace()).collect();
            if let Some(bad) = compact.chars().find(|c| !c.is_ascii_hexdigit()) {
                return Err(err!(
                    INVALID_PARAMETER_VALUE,
                    "invalid hexadecimal digit: \"{}\"",
                    bad
                ));
            }
            hex::decode(&compact).map_err(|_| {
                err!(
                    INVALID_PARAMETER_VALUE,
                    "invalid hexadecimal data: odd number of digits"
                )
            })?
        }
        "base64" => {
            let compact: String = text.chars().filter(|c| !c.is_whitespace()).collect();
            base64::engine::general_purpose::STANDARD
                .decode(compact)
                .map_err(|_| err!(INVALID_PARAMETER_VALUE, "invalid base64 sequence"))?
        }
        "escape" => {
            let mut out = Vec::new();
            let bytes = text.as_bytes();
            let mut i = 0;
            while i < bytes.len() {
                if bytes[i] != b'\\' {
                    out.push(bytes[i]);
                    i += 1;
                } else if bytes.get(i + 1) == Some(&b'\\') {
                    out.push(b'\\');
                    i += 2;
                } else {
                    let octal = bytes.get(i + 1..i + 4).and_then(|d| {
                        std::str::from_utf8(d)
                            .ok()
                            .and_then(|s| u8::from_str_radix(s, 8).ok())
                    });
                    let Some(b) = octal else {
                        return Err(err!(
                            INVALID_TEXT_REPRESENTATION,
                            "invalid input syntax for type bytea"
                        ));
                    };
                    out.push(b);
                    i += 4;
                }
            }
            out
        }
        _ => return Err(unrecognized_encoding(format)),
    })
}

fn sha(bits: u16, v: &Value) -> Vec<u8> {
    use sha2::Digest;
    let bytes = bytes_of(v);
    match bits {
        224 => sha2::Sha224::digest(&bytes).to_vec(),
        384 => sha2::Sha384::digest(&bytes).to_vec(),
        512 => sha2::Sha512::digest(&bytes).to_vec(),
        _ => sha2::Sha256::digest(&bytes).to_vec(),
    }
}

fn gcd_u128(mut a: u128, mut b: u128) -> u128 {
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a
}

/// gcd and lcm of integers (the type of both arguments).
fn gcd_lcm(f: ScalarFunc, a: &Value, b: &Value) -> Result<Value> {
    let (Some(x), Some(y)) = (a.as_i64(), b.as_i64()) else {
        return Err(Error::internal("gcd of non-integers"));
    };
    let g = gcd_u128(x.unsigned_abs() as u128, y.unsigned_abs() as u128);
    let r: i128 = match f {
        ScalarFunc::Gcd => g as i128,
        _ if x == 0 || y == 0 => 0,
        _ => (x.unsigned_abs() as u128 / g * y.unsigned_abs() as u128) as i128,
    };
    let out_of_range = |t: &str| err!(NUMERIC_VALUE_OUT_OF_RANGE, "{} out of range", t);
    Ok(match a {
        Value::Int4(_) => Value::Int4(i32::try_from(r).map_err(|_| out_of_range("integer"))?),
        _ => Value::Int8(i64::try_from(r).map_err(|_| out_of_range("bigint"))?),
    })
}

fn make_date(y: &Value, m: &Value, d: &Value) -> Result<Value> {
    let (year, month, day) = (
        y.as_i64().unwrap_or(0),
        m.as_i64().unwrap_or(0),
        d.as_i64().unwrap_or(0),
    );
    let out_of_range = || {
        err!(
            DATETIME_FIELD_OVERFLOW,
            "date field value out of range: {}-{:02}-{:02}",
            year,
            month,
            day
        )
    };
    if year == 0 {
        return Err(out_of_range());
    }
    // A negative year is BC: -1 is 1 BC, year 0 of the proleptic calendar.
    let proleptic = if year < 0 { year + 1 } else { year };
    if !(1..=12).contains(&month)
        || day < 1
        || day > i64::from(types::days_in_month(proleptic, month as u32))
    {
        return Err(out_of_range());
    }
    let days = types::days_from_civil(proleptic, month as u32, day as u32);
    match i32::try_from(days) {
        Ok(d) if types::is_valid_date(d) => Ok(Value::Date(d)),
        _ => Err(err!(
            DATETIME_FIELD_OVERFLOW,
            "date out of range: \"{}-{:02}-{:02}\"",
            year,
            month,
            day
        )),
    }
}

/// age(a, b): a - b in years, months, days and time, each field borrowed from the next
/// larger as PostgreSQL's timestamp_age does (a month borrowed is the length of the
/// earlier timestamp's month).
fn age(a: &Value, b: &Value) -> Result<Value> {
    // A timestamptz's fields are those of the session's zone.
    let local = |v: &Value| match v {
        Value::Timestamp(t) => Some(*t),
        Value::TimestampTz(t) => Some(types::zone::session_zone().local_of(*t)),
        _ => None,
    };
    let (Some(t1), Some(t2)) = (local(a), local(b)) else {
        return Err(Error::internal("age of non-timestamps"));
    };
    let (t1, t2) = (&t1, &t2);
    if [*t1, *t2].iter().any(|t| *t == i64::MIN || *t == i64::MAX) {
        return Err(err!(
            FEATURE_NOT_SUPPORTED,
            "age of an infinite timestamp is not supported yet"
        ));
    }
    let fields = |t: i64| {
        let days = t.div_euclid(types::USECS_PER_DAY);
        let time = t.rem_euclid(types::USECS_PER_DAY);
        let (y, m, d) = types::civil_from_days(days);
        [
            y,
            i64::from(m),
            i64::from(d),
            time / 3_600_000_000,
            time / 60_000_000 % 60,
            time / 1_000_000 % 60,
            time % 1_000_000,
        ]
    };
    let (f1, f2) = (fields(*t1), fields(*t2));
    let mut diff: Vec<i64> = f1.iter().zip(&f2).map(|(x, y)| x - y).collect();
    let negative = t1 < t2;
    if negative {
        diff.iter_mut().for_each(|x| *x = -*x);
    }
    let [year, month, day, hour, minute, second, micros] = &mut diff[..] else {
        return Err(Error::internal("age fields"));
    };
    while *micros < 0 {
        *micros += 1_000_000;
        *second -= 1;
    }
    while *second < 0 {
        *second += 60;
        *minute -= 1;
    }
    while *minute < 0 {
        *minute += 60;
        *hour -= 1;
    }
    while *hour < 0 {
        *hour += 24;
        *day -= 1;
    }
    while *day < 0 {
        let (y, m) = if negative {
            (f1[0], f1[1])
        } else {
            (f2[0], f2[1])
        };
        *day += i64::from(types::days_in_month(y, m as u32));
        *month -= 1;
    }
    while *month < 0 {
        *month += 12;
        *year -= 1;
    }
    let sign = if negative { -1 } else { 1 };
    let months = i32::try_from(sign * (*year * 12 + *month))
        .map_err(|_| err!(DATETIME_FIELD_OVERFLOW, "interval out of range"))?;
    let days = i32::try_from(sign * *day)
        .map_err(|_| err!(DATETIME_FIELD_OVERFLOW, "interval out of range"))?;
    let time = sign * (((*hour * 60 + *minute) * 60 + *second) * 1_000_000 + *micros);
    Ok(Value::Interval(types::Interval {
        months,
        days,
        micros: time,
    }))
}

/// to_timestamp(seconds since 1970-01-01 UTC), rounded to microseconds.
fn to_timestamp(seconds: f64) -> Result<Value> {
    if seconds.is_nan() {
        return Err(err!(DATETIME_FIELD_OVERFLOW, "timestamp cannot be NaN"));
    }
    if seconds.is_infinite() {
        return Ok(Value::TimestampTz(if seconds > 0.0 {
            i64::MAX
        } else {
            i64::MIN
        }));
    }
    const UNIX_EPOCH_US: f64 = -946_684_800_000_000.0;
    let us = (seconds * 1_000_000.0).round() + UNIX_EPOCH_US;
    let out_of_range = || {
        err!(
            DATETIME_FIELD_OVERFLOW,
            "timestamp out of range: \"{}\"",
            seconds
        )
    };
    let t = i64::from_f64(us).ok_or_else(out_of_range)?;
    match types::cast(Value::TimestampTz(t), &crate::types::DataType::TimestampTz) {
        Ok(v) if crate::types::is_valid_timestamp(t) => Ok(v),
        _ => Err(out_of_range()),
    }
}

/// pg_sleep: wait, checking for a cancel request and the statement's timeout; the
/// runtime's core goes to other connections meanwhile (`SessionSlot::check_in`).
fn sleep(seconds: f64, ctx: &EvalContext) -> Result<()> {
    if seconds.is_nan() || seconds <= 0.0 {
        return Ok(());
    }
    let slot = ctx
        .engine
        .txn
        .sessions()
        .into_iter()
        .find(|s| s.pid == ctx.backend_pid);
    let until = std::time::Instant::now() + std::time::Duration::from_secs_f64(seconds.min(1e9));
    if let Some(s) = &slot {
        *s.wait_event.lock() = Some(("Timeout", "PgSleep"));
    }
    let result = loop {
        if let Some(s) = &slot {
            if let Err(e) = s.check_in() {
                break Err(e);
            }
        }
        let now = std::time::Instant::now();
        if now >= until {
            break Ok(());
        }
        let step = (until - now).min(std::time::Duration::from_millis(SLEEP_CHECK_INTERVAL_MS));
        std::thread::sleep(step);
    };
    if let Some(s) = &slot {
        *s.wait_event.lock() = None;
    }
    result
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn format_specifiers() {
        let t = |s: &str| Value::Text(s.into());
        assert_eq!(
            format(
                "Hello %s, %I, %L",
                &[t("World"), t("my table"), t("O'Reilly")]
            )
            .unwrap(),
            "Hello World, \"my table\", 'O''Reilly'"
        );
        assert_eq!(format("%2$s %1$s", &[t("a"), t("b")]).unwrap(), "b a");
        assert_eq!(
            format("|%10s|%-10s|", &[t("x"), t("y")]).unwrap(),
            "|         x|y         |"
        );
        assert_eq!(
            format("%s %L", &[Value::Null, Value::Null]).unwrap(),
            " NULL"
        );
        assert!(format("%s %s", &[t("a")]).is_err());
        assert!(format("%x", &[t("a")]).is_err());
        assert!(format("%I", &[Value::Null]).is_err());
    }

    #[test]
    fn rounding() {
        let n = |s: &str| Value::Numeric(s.parse().unwrap());
        let r = |f, v: Value, d: Option<i64>| {
            let d = d.map(|n: i64| Value::Int4(n as i32));
            text_of(&round(f, &v, d.as_ref()).unwrap())
        };
        assert_eq!(r(ScalarFunc::Round, n("2.5"), None), "3");
        assert_eq!(r(ScalarFunc::Round, n("-2.5"), None), "-3");
        assert_eq!(r(ScalarFunc::Round, Value::Float8(2.5), None), "2");
        assert_eq!(r(ScalarFunc::Round, n("1234.5678"), Some(2)), "1234.57");
        assert_eq!(r(ScalarFunc::Round, n("1234.5678"), Some(-2)), "1200");
        assert_eq!(r(ScalarFunc::Round, n("1.5"), Some(3)), "1.500");
        assert_eq!(r(ScalarFunc::Trunc, n("-2.7"), None), "-2");
        assert_eq!(r(ScalarFunc::Ceil, n("-2.1"), None), "-2");
        assert_eq!(r(ScalarFunc::Floor, n("-2.1"), None), "-3");
        assert_eq!(r(ScalarFunc::Round, n("-0.4"), None), "0");
    }

    #[test]
    fn strings() {
        assert_eq!(
            initcap("hELLO wORLD-foo bar_baz"),
            "Hello World-Foo Bar_Baz"
        );
        assert_eq!(translate("12345", "143", "ax"), "a2x5");
        assert!(chr(0).is_err());
        assert_eq!(
            text_of(&sqrt(&Value::Numeric(2.into())).unwrap()),
            "1.414213562373095"
        );
    }
}
