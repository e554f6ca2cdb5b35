//! `interval`: months, days and microseconds, kept apart as PostgreSQL keeps them (a
//! month is not a fixed number of days, nor a day of hours across a DST change), and
//! compared by their span with a month as 30 days and a day as 24 hours.
//!
//! Text input takes `[@] quantity unit [...] [ago]` (units from microseconds to
//! millennia, fractions carried down: `1.5 months` is `1 mon 15 days`), a time
//! `[-]HH:MM[:SS[.frac]]`, a bare number of seconds, and ISO 8601 `P1Y2M3DT4H5M6S`.
//! Output is IntervalStyle `postgres`: `1 year 2 mons -3 days +04:05:06.5`.

use super::datetime::USECS_PER_DAY;
use crate::err;
use crate::error::{Error, Result};

const USECS_PER_SEC: i64 = 1_000_000;
const USECS_PER_HOUR: i64 = 3_600_000_000;
const DAYS_PER_MONTH: i64 = 30;

#[derive(Clone, Copy, Debug, Default)]
pub struct Interval {
    pub months: i32,
    pub days: i32,
    pub micros: i64,
}

fn out_of_range() -> Error {
    err!(DATETIME_FIELD_OVERFLOW, "interval out of range")
}

impl Interval {
    /// Its length with a month as 30 days and a day as 24 hours: what orders and equates
    /// intervals (`'1 day' = '24 hours'`).
    pub fn span(&self) -> i128 {
        (self.months as i128 * DAYS_PER_MONTH as i128 + self.days as i128) * USECS_PER_DAY as i128
            + self.micros as i128
    }

    pub fn checked_add(&self, other: &Interval) -> Result<Interval> {
        Ok(Interval {
            months: self
                .months
                .checked_add(other.months)
                .ok_or_else(out_of_range)?,
            days: self.days.checked_add(other.days).ok_or_else(out_of_range)?,
            micros: self
                .micros
                .checked_add(other.micros)
                .ok_or_else(out_of_range)?,
        })
    }

    pub fn checked_neg(&self) -> Result<Interval> {
        Ok(Interval {
            months: self.months.checked_neg().ok_or_else(out_of_range)?,
            days: self.days.checked_neg().ok_or_else(out_of_range)?,
            micros: self.micros.checked_neg().ok_or_else(out_of_range)?,
        })
    }

    /// `interval * factor`: each field scaled, the fractions of months and days carried
    /// down to days and microseconds.
    pub fn scaled(&self, factor: f64) -> Result<Interval> {
        if factor.is_nan() {
            return Err(out_of_range());
        }
        carried_down(
            self.months as f64 * factor,
            self.days as f64 * factor,
            self.micros as f64 * factor,
        )
        .ok_or_else(out_of_range)
    }

    /// `timestamp - timestamp`: the microseconds apart, whole days taken out as days.
    pub fn between(later: i64, earlier: i64) -> Result<Interval> {
        let diff = later.checked_sub(earlier).ok_or_else(out_of_range)?;
        let days = diff / USECS_PER_DAY;
        Ok(Interval {
            months: 0,
            days: i32::try_from(days).map_err(|_| out_of_range())?,
            micros: diff % USECS_PER_DAY,
        })
    }
}

/// A unit of an interval's text, as the microseconds, days or months it is.
#[derive(Clone, Copy)]
enum Unit {
    Micros(i64),
    Days(i64),
    Months(i64),
}

fn unit(word: &str) -> Option<Unit> {
    Some(match word {
        "microsecond" | "microseconds" | "us" | "usec" | "usecs" | "useconds" => Unit::Micros(1),
        "millisecond" | "milliseconds" | "ms" | "msec" | "msecs" | "mseconds" => Unit::Micros(1000),
        "second" | "seconds" | "s" | "sec" | "secs" => Unit::Micros(USECS_PER_SEC),
        "minute" | "minutes" | "m" | "min" | "mins" => Unit::Micros(60 * USECS_PER_SEC),
        "hour" | "hours" | "h" | "hr" | "hrs" => Unit::Micros(USECS_PER_HOUR),
        "day" | "days" | "d" => Unit::Days(1),
        "week" | "weeks" | "w" => Unit::Days(7),
        "month" | "months" | "mon" | "mons" => Unit::Months(1),
        "year" | "years" | "y" | "yr" | "yrs" => Unit::Months(12),
        "decade" | "decades" => Unit::Months(120),
        "century" | "centuries" => Unit::Months(1200),
        "millennium" | "millennia" | "millenniums" => Unit::Months(12000),
        _ => return None,
    })
}

/// The interval being read, its parts as wide numbers until the end.
#[derive(Default)]
struct Parts {
    months: f64,
    days: f64,
    micros: f64,
}

impl Parts {
    fn add(&mut self, quantity: f64, unit: Unit) {
        match unit {
            Unit::Micros(m) => self.micros += quantity * m as f64,
            Unit::Days(d) => self.days += quantity * d as f64,
            Unit::Months(m) => self.months += quantity * m as f64,
        }
    }

    fn finish(self, negate: bool) -> Option<Interval> {
        let sign = if negate { -1.0 } else { 1.0 };
        carried_down(self.months * sign, self.days * sign, self.micros * sign)
    }
}

/// An interval of these (fractional) months, days and microseconds: the fractions of a
/// month go down as 30 days, of a day as 24 hours. None if out of range.
fn carried_down(months: f64, days: f64, micros: f64) -> Option<Interval> {
    let whole_months = months.trunc();
    let days = days + (months - whole_months) * DAYS_PER_MONTH as f64;
    let whole_days = days.trunc();
    let micros = micros + (days - whole_days) * USECS_PER_DAY as f64;
    let fits32 = |v: f64| v >= i32::MIN as f64 && v <= i32::MAX as f64;
    let fits64 = micros.is_finite() && micros.abs() < 9.2e18;
    if !fits32(whole_months) || !fits32(whole_days) || !fits64 {
        return None;
    }
    Some(Interval {
        months: whole_months as i32,
        days: whole_days as i32,
        micros: micros.round() as i64,
    })
}

/// `interval_in`.
pub fn parse_interval(text: &str) -> Result<Interval> {
    let bad = || {
        err!(
            INVALID_DATETIME_FORMAT,
            "invalid input syntax for type interval: \"{}\"",
            text
        )
    };
    let lower = text.trim().to_ascii_lowercase();
    if let Some(iso) = lower.strip_prefix('p') {
        return parse_iso(iso).ok_or_else(bad);
    }
    let mut words: Vec<&str> = lower.split_ascii_whitespace().collect();
    if words.first() == Some(&"@") {
        words.remove(0);
    }
    let ago = words.last() == Some(&"ago");
    if ago {
        words.pop();
    }
    if words.is_empty() {
        return Err(bad());
    }
    let mut parts = Parts::default();
    let mut i = 0;
    while i < words.len() {
        let word = words[i];
        if word.contains(':') {
            parts.micros += parse_time(word).ok_or_else(bad)? as f64;
            i += 1;
            continue;
        }
        // SQL's `years-months` (`1-2`).
        if let Some(months) = year_month(word) {
            parts.add(months, Unit::Months(1));
            i += 1;
            continue;
        }
        // A number and a unit, written apart or together (`5min`, `1.5h`).
        let split = word
            .find(|c: char| c.is_ascii_alphabetic())
            .unwrap_or(word.len());
        let (number, attached) = word.split_at(split);
        let quantity: f64 = number.parse().map_err(|_| bad())?;
        let unit_word = if attached.is_empty() {
            match words.get(i + 1) {
                Some(w) if unit(w).is_some() => {
                    i += 1;
                    *w
                }
                // Before a time (SQL's `days hh:mm:ss`), days.
                Some(w) if w.contains(':') => "day",
                // A bare number is seconds.
                _ => "second",
            }
        } else {
            attached
        };
        parts.add(quantity, unit(unit_word).ok_or_else(bad)?);
        i += 1;
    }
    parts.finish(ago).ok_or_else(out_of_range)
}

/// SQL's `[-|+]Y-M` as months.
fn year_month(word: &str) -> Option<f64> {
    let (negative, body) = match word.strip_prefix('-') {
        Some(b) => (true, b),
        None => (false, word.strip_prefix('+').unwrap_or(word)),
    };
    let (y, m) = body.split_once('-')?;
    let digits = |s: &str| !s.is_empty() && s.chars().all(|c| c.is_ascii_digit());
    if !digits(y) || !digits(m) {
        return None;
    }
    let months = y.parse::<f64>().ok()? * 12.0 + m.parse::<f64>().ok()?;
    Some(if negative { -months } else { months })
}

/// A field of an interval qualifier (`DAY`, `HOUR TO SECOND`), largest first.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum IntervalField {
    Year,
    Month,
    Day,
    Hour,
    Minute,
    Second,
}

/// `interval 'text' leading [TO last]` (`precision`: SECOND's digits of a second): the
/// text read as `interval_in` reads it, a bare number counting units of the last field;
/// then, as PostgreSQL applies an interval's qualifier, the parts below the last field
/// cleared and the seconds rounded to `precision` digits.
pub fn parse_interval_in_fields(
    text: &str,
    leading: IntervalField,
    last: Option<IntervalField>,
    precision: Option<u32>,
) -> Result<Interval> {
    let last = last.unwrap_or(leading);
    let mut iv = match text.trim().parse::<f64>() {
        Ok(n) if n.is_finite() => {
            let mut parts = Parts::default();
            parts.add(
                n,
                match last {
                    IntervalField::Year => Unit::Months(12),
                    IntervalField::Month => Unit::Months(1),
                    IntervalField::Day => Unit::Days(1),
                    IntervalField::Hour => Unit::Micros(USECS_PER_HOUR),
                    IntervalField::Minute => Unit::Micros(60 * USECS_PER_SEC),
                    IntervalField::Second => Unit::Micros(USECS_PER_SEC),
                },
            );
            parts.finish(false).ok_or_else(out_of_range)?
        }
        _ => parse_interval(text)?,
    };
    match last {
        IntervalField::Year => {
            iv.months = iv.months / 12 * 12;
            iv.days = 0;
            iv.micros = 0;
        }
        IntervalField::Month => {
            iv.days = 0;
            iv.micros = 0;
        }
        IntervalField::Day => iv.micros = 0,
        IntervalField::Hour => iv.micros = iv.micros / USECS_PER_HOUR * USECS_PER_HOUR,
        IntervalField::Minute => {
            let minute = 60 * USECS_PER_SEC;
            iv.micros = iv.micros / minute * minute;
        }
        IntervalField::Second => {}
    }
    if let Some(p) = precision.filter(|&p| p < 6) {
        // Rounded half away from zero, as PostgreSQL rounds.
        let scale = 10i64.pow(6 - p);
        let half = if iv.micros >= 0 {
            scale / 2
        } else {
            -(scale / 2)
        };
        iv.micros = (iv.micros + half) / scale * scale;
    }
    Ok(iv)
}

/// `[-|+]HH:MM[:SS[.frac]]` (or `MM:SS.frac`) as microseconds.
fn parse_time(word: &str) -> Option<i64> {
    let (negative, body) = match word.strip_prefix('-') {
        Some(b) => (true, b),
        None => (false, word.strip_prefix('+').unwrap_or(word)),
    };
    let fields: Vec<&str> = body.split(':').collect();
    let number = |s: &str| -> Option<f64> {
        (!s.is_empty() && s.chars().all(|c| c.is_ascii_digit() || c == '.'))
            .then(|| s.parse().ok())
            .flatten()
    };
    let micros = match fields.as_slice() {
        [h, m] if !m.contains('.') => number(h)? * USECS_PER_HOUR as f64 + number(m)? * 60e6,
        // Minutes and seconds when the second part has a fraction.
        [m, s] => number(m)? * 60e6 + number(s)? * 1e6,
        [h, m, s] => number(h)? * USECS_PER_HOUR as f64 + number(m)? * 60e6 + number(s)? * 1e6,
        _ => return None,
    };
    let micros = micros.round() as i64;
    Some(if negative { -micros } else { micros })
}

/// ISO 8601 designators after the `P`: `nY nM nW nD` then `T nH nM nS`.
fn parse_iso(body: &str) -> Option<Interval> {
    let mut parts = Parts::default();
    let mut in_time = false;
    let mut number = String::new();
    for c in body.chars() {
        match c {
            't' if number.is_empty() && !in_time => in_time = true,
            '0'..='9' | '.' | '-' | '+' => number.push(c),
            _ => {
                let quantity: f64 = number.parse().ok()?;
                number.clear();
                let unit = match (c, in_time) {
                    ('y', false) => Unit::Months(12),
                    ('m', false) => Unit::Months(1),
                    ('w', false) => Unit::Days(7),
                    ('d', false) => Unit::Days(1),
                    ('h', true) => Unit::Micros(USECS_PER_HOUR),
                    ('m', true) => Unit::Micros(60 * USECS_PER_SEC),
                    ('s', true) => Unit::Micros(USECS_PER_SEC),
                    _ => return None,
                };
                parts.add(quantity, unit);
            }
        }
    }
    if !number.is_empty() {
        return None;
    }
    parts.finish(false)
}

/// `interval_out` with IntervalStyle `postgres`.
pub fn format_interval(iv: &Interval, out: &mut String) {
    let years = iv.months / 12;
    let months = iv.months % 12;
    // Whether the last part written was negative (a later positive one gets a `+`), and
    // whether anything was written.
    let mut before_negative = false;
    let mut empty = true;
    for (value, unit) in [
        (years as i64, "year"),
        (months as i64, "mon"),
        (iv.days as i64, "day"),
    ] {
        if value == 0 {
            continue;
        }
        if !empty {
            out.push(' ');
        }
        if before_negative && value > 0 {
            out.push('+');
        }
        out.push_str(&format!(
            "{value} {unit}{}",
            if value == 1 { "" } else { "s" }
        ));
        before_negative = value < 0;
        empty = false;
    }
    if empty || iv.micros != 0 {
        if !empty {
            out.push(' ');
        }
        let negative = iv.micros < 0;
        if negative {
            out.push('-');
        } else if before_negative {
            out.push('+');
        }
        let abs = iv.micros.unsigned_abs();
        let hours = abs / USECS_PER_HOUR as u64;
        let minutes = abs / 60_000_000 % 60;
        let seconds = abs / 1_000_000 % 60;
        let fraction = abs % 1_000_000;
        out.push_str(&format!("{hours:02}:{minutes:02}:{seconds:02}"));
        if fraction != 0 {
            let digits = format!("{fraction:06}");
            out.push('.');
            out.push_str(digits.trim_end_matches('0'));
        }
    }
}

/// `timestamp + interval`: the months on the calendar (the day of month kept, or the
/// month's last), then the days, then the microseconds; infinite timestamps unchanged.
pub fn add_to_timestamp(t: i64, iv: &Interval) -> Result<i64> {
    use super::datetime::{civil_from_days, days_from_civil, is_valid_timestamp};
    if t == super::datetime::TIMESTAMP_NOBEGIN || t == super::datetime::TIMESTAMP_NOEND {
        return Ok(t);
    }
    let overflow = || err!(DATETIME_FIELD_OVERFLOW, "timestamp out of range");
    let mut days = t.div_euclid(USECS_PER_DAY);
    let time = t.rem_euclid(USECS_PER_DAY);
    if iv.months != 0 {
        let (year, month, day) = civil_from_days(days);
        let total = year * 12 + (month as i64 - 1) + iv.months as i64;
        let (year, month) = (total.div_euclid(12), total.rem_euclid(12) as u32 + 1);
        let last = super::datetime::days_in_month(year, month);
        days = days_from_civil(year, month, day.min(last));
    }
    days += iv.days as i64;
    let result = days
        .checked_mul(USECS_PER_DAY)
        .and_then(|d| d.checked_add(time))
        .and_then(|d| d.checked_add(iv.micros))
        .ok_or_else(overflow)?;
    if !is_valid_timestamp(result) {
        return Err(overflow());
    }
    Ok(result)
}

/// `timestamptz + interval`: the months and days on the calendar of the session's zone
/// (a day across a daylight-saving change keeps the wall-clock time), then the
/// microseconds as elapsed time.
pub fn add_to_timestamptz(t: i64, iv: &Interval) -> Result<i64> {
    if t == super::datetime::TIMESTAMP_NOBEGIN || t == super::datetime::TIMESTAMP_NOEND {
        return Ok(t);
    }
    let mut t = t;
    if iv.months != 0 || iv.days != 0 {
        let zone = super::zone::session_zone();
        let calendar = Interval { micros: 0, ..*iv };
        let local = add_to_timestamp(zone.local_of(t), &calendar)?;
        t = zone.utc_of_local(local);
    }
    add_to_timestamp(
        t,
        &Interval {
            months: 0,
            days: 0,
            micros: iv.micros,
        },
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_qualifier_counts_bare_numbers_and_clears_the_smaller_parts() {
        use IntervalField as F;
        let q = |text: &str, leading, last, p| {
            let mut s = String::new();
            format_interval(
                &parse_interval_in_fields(text, leading, last, p).unwrap(),
                &mut s,
            );
            s
        };
        assert_eq!(q("90", F::Minute, None, None), "01:30:00");
        assert_eq!(q("-1.5", F::Hour, None, None), "-01:00:00");
        assert_eq!(q("1-2", F::Year, Some(F::Month), None), "1 year 2 mons");
        assert_eq!(q("1 year 5 months 3 days", F::Year, None, None), "1 year");
        assert_eq!(
            q("2 days 10:30:15.5", F::Day, Some(F::Minute), None),
            "2 days 10:30:00"
        );
        assert_eq!(q("1.23456", F::Second, None, Some(2)), "00:00:01.23");
        assert_eq!(q("-1.235", F::Second, None, Some(2)), "-00:00:01.24");
    }

    fn shown(text: &str) -> String {
        let mut s = String::new();
        format_interval(&parse_interval(text).expect("parses"), &mut s);
        s
    }

    #[test]
    fn reads_and_writes_as_postgresql() {
        for (input, output) in [
            ("1 day", "1 day"),
            ("2 days 3 hours", "2 days 03:00:00"),
            (
                "1 year 2 months 3 days 04:05:06.789",
                "1 year 2 mons 3 days 04:05:06.789",
            ),
            ("-1 day 2 hours", "-1 days +02:00:00"),
            ("1 day -2 hours", "1 day -02:00:00"),
            ("0", "00:00:00"),
            ("90 minutes", "01:30:00"),
            ("1.5 months", "1 mon 15 days"),
            ("1 week ago", "-7 days"),
            ("@ 3 mins 4 secs", "00:03:04"),
            ("P1Y2M3DT4H5M6S", "1 year 2 mons 3 days 04:05:06"),
            ("-01:02:03", "-01:02:03"),
            ("1 day 100000 seconds", "1 day 27:46:40"),
            ("10 days 3600.000000 seconds", "10 days 01:00:00"),
        ] {
            assert_eq!(shown(input), output, "{input}");
        }
        assert!(parse_interval("xyz").is_err());
        assert!(parse_interval("1 fortnight").is_err());
        assert!(parse_interval("").is_err());
    }

    #[test]
    fn spans_compare_months_as_thirty_days() {
        let a = parse_interval("1 mon").expect("parses");
        let b = parse_interval("30 days").expect("parses");
        let c = parse_interval("720 hours").expect("parses");
        assert_eq!(a.span(), b.span());
        assert_eq!(b.span(), c.span());
    }

    #[test]
    fn months_land_on_the_last_day_of_a_shorter_month() {
        use super::super::datetime::{days_from_civil, USECS_PER_DAY};
        let jan31 = days_from_civil(2024, 1, 31) * USECS_PER_DAY;
        let month = Interval {
            months: 1,
            ..Interval::default()
        };
        assert_eq!(
            add_to_timestamp(jan31, &month).expect("in range"),
            days_from_civil(2024, 2, 29) * USECS_PER_DAY
        );
    }
}
