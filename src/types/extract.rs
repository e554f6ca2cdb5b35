//! `EXTRACT(field FROM x)` and `date_part`: a field of a timestamp, date or interval, as
//! PostgreSQL 15 computes it (numeric; seconds with six decimals, milliseconds with
//! three).

use rust_decimal::Decimal;

use super::datetime::{civil_from_days, days_from_civil, USECS_PER_DAY};
use super::{Interval, Value};
use crate::err;
use crate::error::{Error, Result};

/// The Unix epoch in PostgreSQL's days (2000-01-01 is day 0).
const UNIX_EPOCH_DAYS: i64 = -10_957;
const USECS_PER_HOUR: i64 = 3_600_000_000;

fn not_recognized(unit: &str, type_name: &str) -> Error {
    err!(
        INVALID_PARAMETER_VALUE,
        "unit \"{}\" not recognized for type {}",
        unit,
        type_name
    )
}

fn not_supported(unit: &str, type_name: &str) -> Error {
    err!(
        FEATURE_NOT_SUPPORTED,
        "unit \"{}\" not supported for type {}",
        unit,
        type_name
    )
}

/// A unit's canonical name (PostgreSQL's abbreviations and plurals accepted).
fn canonical(unit: &str) -> Option<&'static str> {
    Some(match unit {
        "microsecond" | "microseconds" | "us" | "usec" | "usecs" | "useconds" => "microseconds",
        "millisecond" | "milliseconds" | "ms" | "msec" | "msecs" | "mseconds" => "milliseconds",
        "second" | "seconds" | "s" | "sec" | "secs" => "second",
        "minute" | "minutes" | "m" | "min" | "mins" => "minute",
        "hour" | "hours" | "h" | "hr" | "hrs" => "hour",
        "day" | "days" | "d" => "day",
        "month" | "months" | "mon" | "mons" => "month",
        "year" | "years" | "y" | "yr" | "yrs" => "year",
        "week" | "weeks" | "w" => "week",
        "quarter" | "qtr" => "quarter",
        "decade" | "decades" => "decade",
        "century" | "centuries" | "c" => "century",
        "millennium" | "millennia" | "millenniums" | "mil" | "mils" => "millennium",
        "epoch" => "epoch",
        "dow" => "dow",
        "isodow" => "isodow",
        "doy" => "doy",
        "isoyear" => "isoyear",
        "julian" | "j" => "julian",
        "timezone" => "timezone",
        "timezone_hour" => "timezone_hour",
        "timezone_minute" => "timezone_minute",
        _ => return None,
    })
}

/// `date_trunc(unit, t)` of a timestamptz in `zone`: truncated on the zone's calendar.
/// From a day up, the result is the zone's midnight (its offset then); below, the offset
/// of `t` is kept, as PostgreSQL keeps it.
pub fn date_trunc_tz(unit: &str, t: i64, zone: &super::zone::Zone) -> Result<i64> {
    let offset_us = zone.offset_at(t) as i64 * 1_000_000;
    let local = date_trunc(unit, zone.local_of(t), "timestamp with time zone")?;
    if local == i64::MIN || local == i64::MAX {
        return Ok(local);
    }
    let lower = unit.to_ascii_lowercase();
    let below_day = matches!(
        canonical(&lower),
        Some("microseconds" | "milliseconds" | "second" | "minute" | "hour")
    );
    let t = if below_day {
        local.saturating_sub(offset_us)
    } else {
        zone.utc_of_local(local)
    };
    if super::datetime::is_valid_timestamp(t) {
        Ok(t)
    } else {
        Err(err!(DATETIME_FIELD_OVERFLOW, "timestamp out of range"))
    }
}

/// `date_trunc(unit, t)` of a timestamp: `t` with
/// the parts smaller than `unit` at their first value (a week starts on Monday; a
/// decade, century or millennium at PostgreSQL's first year of it).
pub fn date_trunc(unit: &str, t: i64, type_name: &str) -> Result<i64> {
    use super::datetime::{TIMESTAMP_NOBEGIN, TIMESTAMP_NOEND};
    let lower = unit.to_ascii_lowercase();
    let field = canonical(&lower).ok_or_else(|| not_recognized(unit, type_name))?;
    if t == TIMESTAMP_NOBEGIN || t == TIMESTAMP_NOEND {
        return Ok(t);
    }
    let days = t.div_euclid(USECS_PER_DAY);
    let time = t.rem_euclid(USECS_PER_DAY);
    let within_day = |unit_us: i64| Ok(days * USECS_PER_DAY + time / unit_us * unit_us);
    let (year, month, _) = civil_from_days(days);
    let first_of = |year: i64, month: u32| days_from_civil(year, month, 1) * USECS_PER_DAY;
    match field {
        "microseconds" => Ok(t),
        "milliseconds" => within_day(1_000),
        "second" => within_day(1_000_000),
        "minute" => within_day(60_000_000),
        "hour" => within_day(USECS_PER_HOUR),
        "day" => within_day(USECS_PER_DAY),
        // 2000-01-01, day 0, was a Saturday: Monday is day 2.
        "week" => Ok((days - (days - 2).rem_euclid(7)) * USECS_PER_DAY),
        "month" => Ok(first_of(year, month)),
        "quarter" => Ok(first_of(year, (month - 1) / 3 * 3 + 1)),
        "year" => Ok(first_of(year, 1)),
        "decade" => Ok(first_of(
            if year > 0 {
                year / 10 * 10
            } else {
                -((8 - (year - 1)) / 10) * 10
            },
            1,
        )),
        "century" => Ok(first_of(
            if year > 0 {
                (year + 99) / 100 * 100 - 99
            } else {
                -((99 - (year - 1)) / 100) * 100 + 1
            },
            1,
        )),
        "millennium" => Ok(first_of(
            if year > 0 {
                (year + 999) / 1000 * 1000 - 999
            } else {
                -((999 - (year - 1)) / 1000) * 1000 + 1
            },
            1,
        )),
        _ => Err(not_recognized(unit, type_name)),
    }
}

/// `EXTRACT(unit FROM v)`; v is not NULL.
pub fn extract(unit: &str, v: &Value) -> Result<Decimal> {
    let lower = unit.to_ascii_lowercase();
    let type_name = match v {
        Value::Date(_) => "date",
        Value::Timestamp(_) => "timestamp without time zone",
        Value::TimestampTz(_) => "timestamp with time zone",
        Value::Interval(_) => "interval",
        other => {
            let shown = other.data_type().map_or("unknown".into(), |t| t.name());
            return Err(err!(
                UNDEFINED_FUNCTION,
                "function extract(unknown, {}) does not exist",
                shown
            ));
        }
    };
    let Some(field) = canonical(&lower) else {
        return Err(not_recognized(&lower, type_name));
    };
    match v {
        Value::Interval(iv) => {
            interval_field(field, iv).ok_or_else(|| not_supported(&lower, type_name))
        }
        Value::Date(d) => {
            if *d == i32::MIN || *d == i32::MAX {
                return Err(Error::unsupported(
                    "EXTRACT from an infinite date is not supported yet",
                ));
            }
            if matches!(
                field,
                "hour"
                    | "minute"
                    | "second"
                    | "milliseconds"
                    | "microseconds"
                    | "timezone"
                    | "timezone_hour"
                    | "timezone_minute"
            ) {
                return Err(not_supported(&lower, type_name));
            }
            if field == "epoch" {
                return Ok(Decimal::from((*d as i64 - UNIX_EPOCH_DAYS) * 86_400));
            }
            Ok(timestamp_field(field, *d as i64 * USECS_PER_DAY, true)
                .ok_or_else(|| not_supported(&lower, type_name))?)
        }
        Value::Timestamp(t) | Value::TimestampTz(t) => {
            if *t == i64::MIN || *t == i64::MAX {
                return Err(Error::unsupported(
                    "EXTRACT from an infinite timestamp is not supported yet",
                ));
            }
            let Value::TimestampTz(t) = v else {
                if matches!(field, "timezone" | "timezone_hour" | "timezone_minute") {
                    return Err(not_supported(&lower, type_name));
                }
                return timestamp_field(field, *t, false)
                    .ok_or_else(|| not_supported(&lower, type_name));
            };
            // A timestamptz's fields are those of the session's zone; its epoch is not.
            let zone = super::zone::session_zone();
            let offset_secs = zone.offset_at(*t) as i64;
            match field {
                "timezone" => return Ok(Decimal::from(offset_secs)),
                "timezone_hour" => return Ok(Decimal::from(offset_secs / 3600)),
                "timezone_minute" => return Ok(Decimal::from(offset_secs / 60 % 60)),
                "epoch" => return Ok(timestamp_field(field, *t, false).unwrap_or_default()),
                _ => {}
            }
            timestamp_field(field, zone.local_of(*t), false)
                .ok_or_else(|| not_supported(&lower, type_name))
        }
        _ => unreachable!("checked above"),
    }
}

/// A field of the timestamp `t` (microseconds from 2000-01-01); `date`: of a date (its
/// Julian day is whole).
fn timestamp_field(field: &str, t: i64, date: bool) -> Option<Decimal> {
    let days = t.div_euclid(USECS_PER_DAY);
    let time = t.rem_euclid(USECS_PER_DAY);
    let (year, month, day) = civil_from_days(days);
    // 2000-01-01 was a Saturday (6).
    let dow = (days + 6).rem_euclid(7);
    let micros_in_minute = time % 60_000_000;
    Some(match field {
        "year" => Decimal::from(if year > 0 { year } else { year - 1 }),
        "month" => Decimal::from(month),
        "day" => Decimal::from(day),
        "hour" => Decimal::from(time / USECS_PER_HOUR),
        "minute" => Decimal::from(time / 60_000_000 % 60),
        "second" => Decimal::new(micros_in_minute, 6),
        "milliseconds" => Decimal::new(micros_in_minute, 3),
        "microseconds" => Decimal::from(micros_in_minute),
        "epoch" => Decimal::from_i128_with_scale(
            t as i128 - UNIX_EPOCH_DAYS as i128 * USECS_PER_DAY as i128,
            6,
        ),
        "dow" => Decimal::from(dow),
        "isodow" => Decimal::from(if dow == 0 { 7 } else { dow }),
        "doy" => Decimal::from(days - days_from_civil(year, 1, 1) + 1),
        "week" => Decimal::from(iso_week(days).1),
        "isoyear" => Decimal::from(iso_week(days).0),
        "quarter" => Decimal::from((month - 1) / 3 + 1),
        "decade" => Decimal::from(year.div_euclid(10)),
        "century" => Decimal::from(if year > 0 {
            (year + 99) / 100
        } else {
            -((99 - (year - 1)) / 100)
        }),
        "millennium" => Decimal::from(if year > 0 {
            (year + 999) / 1000
        } else {
            -((999 - (year - 1)) / 1000)
        }),
        // Julian day: 2000-01-01 is day 2451545; a timestamp adds its fraction of a day.
        "julian" if date => Decimal::from(days + 2_451_545),
        "julian" => {
            let mut j = Decimal::from(days + 2_451_545)
                + Decimal::from(time) / Decimal::from(USECS_PER_DAY);
            // numeric division's scale here.
            j.rescale(20);
            j
        }
        _ => return None,
    })
}

/// (ISO year, ISO week) of a day: weeks start on Monday; week 1 holds the year's first
/// Thursday.
fn iso_week(days: i64) -> (i64, i64) {
    let monday_based = (days + 5).rem_euclid(7); // 0 = Monday
    let thursday = days - monday_based + 3;
    let (year, _, _) = civil_from_days(thursday);
    let week = (thursday - days_from_civil(year, 1, 1)) / 7 + 1;
    (year, week)
}

/// A field of an interval (None: not one an interval has).
fn interval_field(field: &str, iv: &Interval) -> Option<Decimal> {
    let micros_in_minute = iv.micros % 60_000_000;
    Some(match field {
        "year" => Decimal::from(iv.months / 12),
        "month" => Decimal::from(iv.months % 12),
        "day" => Decimal::from(iv.days),
        "hour" => Decimal::from(iv.micros / USECS_PER_HOUR),
        "minute" => Decimal::from(iv.micros / 60_000_000 % 60),
        "second" => Decimal::new(micros_in_minute, 6),
        "milliseconds" => Decimal::new(micros_in_minute, 3),
        "microseconds" => Decimal::from(micros_in_minute),
        "quarter" => Decimal::from((iv.months % 12) / 3 + 1),
        "decade" => Decimal::from(iv.months / 12 / 10),
        "century" => Decimal::from(iv.months / 12 / 100),
        "millennium" => Decimal::from(iv.months / 12 / 1000),
        // A year as 365.25 days, a month as 30.
        "epoch" => {
            let years = Decimal::from(iv.months / 12) * Decimal::new(3_155_760_000, 2);
            let months = Decimal::from(iv.months % 12) * Decimal::from(30 * 86_400);
            let days = Decimal::from(iv.days as i64 * 86_400);
            years + months + days + Decimal::new(iv.micros, 6)
        }
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::datetime::parse_timestamp;

    #[test]
    fn date_trunc_starts_each_unit_where_postgresql_does() {
        let trunc = |unit: &str, text: &str| {
            let t = parse_timestamp(text, false).unwrap();
            let mut s = String::new();
            crate::types::datetime::format_timestamp(
                date_trunc(unit, t, "timestamp").unwrap(),
                false,
                &mut s,
            );
            s
        };
        assert_eq!(trunc("week", "2024-05-19 23:00"), "2024-05-13 00:00:00");
        assert_eq!(trunc("week", "2000-01-01"), "1999-12-27 00:00:00");
        assert_eq!(trunc("decade", "2019-12-31"), "2010-01-01 00:00:00");
        assert_eq!(trunc("century", "2001-01-01"), "2001-01-01 00:00:00");
        assert_eq!(trunc("millennium", "2000-12-31"), "1001-01-01 00:00:00");
        assert_eq!(
            trunc("minute", "1999-12-31 23:59:59.999"),
            "1999-12-31 23:59:00"
        );
        assert!(date_trunc("dow", 0, "timestamp").is_err());
    }
}
