//! `to_char`: a timestamp, interval or number written by a template, as PostgreSQL 15
//! writes it in the C locale (a timestamptz in the session's TimeZone).
//!
//! A template is read left to right. At each place the longest template pattern that
//! matches is taken (`HH24` before `HH`, `MONTH` before `MON`); text in double quotes and
//! every other character is copied. Names come in three spellings that set their case
//! (`MONTH`, `Month`, `month`); numeric fields in upper or lower case. The prefix `FM`
//! drops a field's padding; `TH`/`th` after a numeric field adds its English ordinal.
//!
//! A number's template has digit positions (`9`, `0`), a decimal point (`.`, `D`), group
//! separators (`,`, `G`) and sign patterns (`S`, `MI`, `PL`, `SG`, `PR`). Without a sign
//! pattern the sign takes one place before the first digit (a blank when positive). A
//! number with more integer digits than the template has positions prints `#` in each.
//! The patterns of other locales' conventions (`L`, `V`, `EEEE`, `RN`, `TH`) answer
//! 0A000.

use std::fmt::Write;

use rust_decimal::{Decimal, RoundingStrategy};

use super::datetime::{civil_from_days, days_from_civil, USECS_PER_DAY};
use super::{Interval, Value};
use crate::err;
use crate::error::Result;

/// The longest template to_char reads (PostgreSQL has no limit; this bounds its work).
const MAX_TEMPLATE_CHARS: usize = 10_000;

/// The broken-down fields a datetime pattern prints.
struct Fields {
    /// Year as in the proleptic calendar (0 is 1 BC); for an interval, its years.
    year: i64,
    month: u32,
    day: i64,
    hour: i64,
    minute: i64,
    second: i64,
    micros: i64,
    /// Days since 2000-01-01; None for an interval.
    days: Option<i64>,
    /// A timestamptz's zone abbreviation and offset east of UTC in seconds (None for a
    /// timestamp or an interval).
    zone: Option<(String, i32)>,
}

pub(super) const MONTHS: [&str; 12] = [
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
];
pub(super) const DAYS: [&str; 7] = [
    "Sunday",
    "Monday",
    "Tuesday",
    "Wednesday",
    "Thursday",
    "Friday",
    "Saturday",
];
const ROMAN_MONTHS: [&str; 12] = [
    "I", "II", "III", "IV", "V", "VI", "VII", "VIII", "IX", "X", "XI", "XII",
];

/// The datetime patterns, longest first where one is a prefix of another.
const DATETIME_PATTERNS: &[&str] = &[
    "A.D.", "A.M.", "AD", "AM", "B.C.", "BC", "CC", "DAY", "DDD", "DD", "DY", "D", "FF1", "FF2",
    "FF3", "FF4", "FF5", "FF6", "HH24", "HH12", "HH", "IDDD", "ID", "IW", "IYYY", "IYY", "IY", "I",
    "J", "MI", "MM", "MONTH", "MON", "MS", "OF", "P.M.", "PM", "Q", "RM", "SSSSS", "SSSS", "SS",
    "TZH", "TZM", "TZ", "US", "WW", "W", "Y,YYY", "YYYY", "YYY", "YY", "Y",
];

/// Which case a name pattern was written in.
#[derive(Clone, Copy, PartialEq)]
pub(super) enum Case {
    Upper,
    Capitalized,
    Lower,
}

impl Case {
    fn apply(self, name: &str) -> String {
        match self {
            Case::Upper => name.to_uppercase(),
            Case::Capitalized => name.to_string(),
            Case::Lower => name.to_lowercase(),
        }
    }
}

/// The pattern at the start of `s`, and the case it was written in. Names (`MONTH`,
/// `DAY`, ...) take three spellings; other patterns all upper or all lower case.
pub(super) fn datetime_pattern(s: &str) -> Option<(&'static str, Case)> {
    let names = ["MONTH", "MON", "DAY", "DY"];
    for p in DATETIME_PATTERNS {
        let Some(head) = s.get(..p.len()) else {
            continue;
        };
        if head == *p {
            return Some((p, Case::Upper));
        }
        if head == p.to_lowercase() {
            return Some((p, Case::Lower));
        }
        if names.contains(p) {
            let mut chars = p.chars();
            let first = chars.next().unwrap_or_default().to_string();
            if head == first + &chars.as_str().to_lowercase() {
                return Some((p, Case::Capitalized));
            }
        }
    }
    None
}

/// English ordinal suffix of `n`: st, nd, rd, th.
fn ordinal(n: i64) -> &'static str {
    let n = n.unsigned_abs();
    match (n % 10, n % 100) {
        (_, 11..=13) => "th",
        (1, _) => "st",
        (2, _) => "nd",
        (3, _) => "rd",
        _ => "th",
    }
}

/// ISO 8601 week-numbering year and week of a day (days since 2000-01-01).
fn iso_week(days: i64) -> (i64, i64) {
    // 2000-01-03 was a Monday.
    let weekday_mon0 = (days - 2).rem_euclid(7);
    // The Thursday of this week decides the year.
    let thursday = days - weekday_mon0 + 3;
    let (year, _, _) = civil_from_days(thursday);
    let jan1 = days_from_civil(year, 1, 1);
    let week = (thursday - jan1) / 7 + 1;
    (year, week)
}

/// The first day (a Monday) of ISO year `year`.
fn iso_year_start(year: i64) -> i64 {
    let jan4 = days_from_civil(year, 1, 4);
    jan4 - (jan4 - 2).rem_euclid(7)
}

fn timestamp_fields(t: i64, zone: Option<(String, i32)>) -> Fields {
    let days = t.div_euclid(USECS_PER_DAY);
    let time = t.rem_euclid(USECS_PER_DAY);
    let (year, month, day) = civil_from_days(days);
    let secs = time / 1_000_000;
    Fields {
        year,
        month,
        day: day as i64,
        hour: secs / 3600,
        minute: secs / 60 % 60,
        second: secs % 60,
        micros: time % 1_000_000,
        days: Some(days),
        zone,
    }
}

/// `to_char(timestamp, template)`; `with_tz` for timestamptz (shown in the session's
/// zone). Infinite values give NULL, as PostgreSQL's do.
pub fn timestamp_to_char(t: i64, with_tz: bool, template: &str) -> Result<Value> {
    if t == i64::MIN || t == i64::MAX {
        return Ok(Value::Null);
    }
    let fields = if with_tz {
        let zone = super::zone::session_zone();
        let zone_fields = (zone.abbrev_at(t), zone.offset_at(t));
        timestamp_fields(zone.local_of(t), Some(zone_fields))
    } else {
        timestamp_fields(t, None)
    };
    Ok(Value::Text(datetime_to_char(&fields, template)?))
}

/// `to_char(interval, template)`: the fields as `justify`-free parts of the interval.
pub fn interval_to_char(iv: &Interval, template: &str) -> Result<Value> {
    let secs = iv.micros / 1_000_000;
    let fields = Fields {
        year: i64::from(iv.months / 12),
        month: (iv.months % 12).unsigned_abs(),
        day: i64::from(iv.days),
        hour: secs / 3600,
        minute: secs / 60 % 60,
        second: secs % 60,
        micros: iv.micros % 1_000_000,
        days: None,
        zone: None,
    };
    Ok(Value::Text(datetime_to_char(&fields, template)?))
}

fn check_template(template: &str) -> Result<()> {
    if template.chars().count() > MAX_TEMPLATE_CHARS {
        return Err(err!(
            PROGRAM_LIMIT_EXCEEDED,
            "to_char template is longer than {} characters",
            MAX_TEMPLATE_CHARS
        ));
    }
    Ok(())
}

/// Copy a double-quoted literal starting at `rest` (after the quote); returns what
/// follows it. A backslash escapes the next character.
fn copy_quoted<'a>(rest: &'a str, out: &mut String) -> &'a str {
    let mut chars = rest.char_indices();
    while let Some((i, c)) = chars.next() {
        match c {
            '"' => return &rest[i + 1..],
            '\\' => {
                if let Some((_, next)) = chars.next() {
                    out.push(next);
                }
            }
            _ => out.push(c),
        }
    }
    ""
}

fn datetime_to_char(f: &Fields, template: &str) -> Result<String> {
    check_template(template)?;
    let mut out = String::new();
    let mut rest = template;
    while !rest.is_empty() {
        let mut fill_mode = false;
        let mut body = rest;
        loop {
            if let Some(r) = body.strip_prefix("FM").or_else(|| body.strip_prefix("fm")) {
                fill_mode = true;
                body = r;
            } else if let Some(r) = body.strip_prefix("TM").or_else(|| body.strip_prefix("tm")) {
                body = r;
            } else {
                break;
            }
        }
        if let Some((pattern, case)) = datetime_pattern(body) {
            body = &body[pattern.len()..];
            let ordinal_case = if body.starts_with("TH") {
                body = &body[2..];
                Some(Case::Upper)
            } else if body.starts_with("th") {
                body = &body[2..];
                Some(Case::Lower)
            } else {
                None
            };
            let number = write_field(f, pattern, case, fill_mode, &mut out);
            if let (Some(case), Some(n)) = (ordinal_case, number) {
                out.push_str(&case.apply(ordinal(n)));
            }
            rest = body;
            continue;
        }
        if let Some(r) = body.strip_prefix("FX").or_else(|| body.strip_prefix("fx")) {
            rest = r;
            continue;
        }
        let mut chars = body.chars();
        match chars.next() {
            Some('"') => rest = copy_quoted(chars.as_str(), &mut out),
            Some('\\') if chars.as_str().starts_with('"') => {
                out.push('"');
                rest = &chars.as_str()[1..];
            }
            Some(c) => {
                out.push(c);
                rest = chars.as_str();
            }
            None => rest = body,
        }
    }
    Ok(out)
}

/// Write one datetime field; returns its number where `TH` may follow it.
fn write_field(f: &Fields, pattern: &str, case: Case, fm: bool, out: &mut String) -> Option<i64> {
    let num = |out: &mut String, n: i64, width: usize| {
        if fm {
            let _ = write!(out, "{n}");
        } else if n < 0 {
            let _ = write!(out, "-{:0width$}", -n, width = width.saturating_sub(1));
        } else {
            let _ = write!(out, "{n:0width$}");
        }
        Some(n)
    };
    let name = |out: &mut String, name: &str, width: usize| {
        let text = case.apply(name);
        if fm {
            out.push_str(&text);
        } else {
            let _ = write!(out, "{text:<width$}");
        }
        None
    };
    // A BC year prints as its positive number (year 0 is 1 BC).
    let shown_year = if f.days.is_some() && f.year <= 0 {
        1 - f.year
    } else {
        f.year
    };
    let bc = f.days.is_some() && f.year <= 0;
    let pm = f.hour % 24 >= 12;
    let days = f.days.unwrap_or(0);
    let year_day = f
        .days
        .map(|d| d - days_from_civil(f.year, 1, 1) + 1)
        .unwrap_or(f.day);
    let weekday = (days + 6).rem_euclid(7); // 2000-01-01 was a Saturday: 0 is Sunday.
    let month_index = (f.month.max(1) - 1) as usize % 12;
    match pattern {
        "HH" | "HH12" => {
            let h = f.hour % 12;
            num(out, if h == 0 { 12 } else { h }, 2)
        }
        "HH24" => num(out, f.hour, 2),
        "MI" => num(out, f.minute, 2),
        "SS" => num(out, f.second, 2),
        "MS" => num(out, f.micros / 1000, 3),
        "US" => num(out, f.micros, 6),
        "FF1" | "FF2" | "FF3" | "FF4" | "FF5" | "FF6" => {
            let digits = u32::from(pattern.as_bytes()[2] - b'0');
            let n = f.micros / 10_i64.pow(6 - digits);
            num(out, n, digits as usize)
        }
        "SSSS" | "SSSSS" => {
            let n = f.hour * 3600 + f.minute * 60 + f.second;
            let _ = write!(out, "{n}");
            Some(n)
        }
        "AM" | "PM" => {
            out.push_str(&case.apply(if pm { "PM" } else { "AM" }));
            None
        }
        "A.M." | "P.M." => {
            out.push_str(&case.apply(if pm { "P.M." } else { "A.M." }));
            None
        }
        "AD" | "BC" => {
            out.push_str(&case.apply(if bc { "BC" } else { "AD" }));
            None
        }
        "A.D." | "B.C." => {
            out.push_str(&case.apply(if bc { "B.C." } else { "A.D." }));
            None
        }
        "Y,YYY" => {
            let _ = write!(out, "{},{:03}", shown_year / 1000, shown_year % 1000);
            Some(shown_year)
        }
        "YYYY" => num(out, shown_year, 4),
        "YYY" => num(out, shown_year % 1000, 3),
        "YY" => num(out, shown_year % 100, 2),
        "Y" => num(out, shown_year % 10, 1),
        "IYYY" | "IYY" | "IY" | "I" => {
            let iso_year = iso_week(days).0;
            let (modulus, width) = match pattern {
                "IYYY" => (i64::MAX, 4),
                "IYY" => (1000, 3),
                "IY" => (100, 2),
                _ => (10, 1),
            };
            num(out, iso_year % modulus, width)
        }
        "MONTH" => name(out, MONTHS[month_index], 9),
        "MON" => name(out, &MONTHS[month_index][..3], 3),
        "MM" => num(out, i64::from(f.month), 2),
        "DAY" => name(out, DAYS[weekday as usize], 9),
        "DY" => name(out, &DAYS[weekday as usize][..3], 3),
        "DDD" => num(out, year_day, 3),
        "IDDD" => num(out, days - iso_year_start(iso_week(days).0) + 1, 3),
        "DD" => num(out, f.day, 2),
        "D" => num(out, weekday + 1, 1),
        "ID" => num(out, if weekday == 0 { 7 } else { weekday }, 1),
        "W" => num(out, (f.day - 1) / 7 + 1, 1),
        "WW" => num(out, (year_day - 1) / 7 + 1, 2),
        "IW" => num(out, iso_week(days).1, 2),
        "CC" => {
            let cc = if f.days.is_none() {
                f.year / 100
            } else if f.year > 0 {
                (f.year + 99) / 100
            } else {
                -((99 - f.year) / 100)
            };
            num(out, cc, 2)
        }
        "J" => num(out, days + 2_451_545, 1),
        "Q" => num(out, i64::from((f.month.max(1) - 1) / 3 + 1), 1),
        "RM" => {
            let roman = ROMAN_MONTHS[month_index];
            let text = case.apply(roman);
            if fm {
                out.push_str(&text);
            } else {
                let _ = write!(out, "{text:<4}");
            }
            None
        }
        "TZ" => {
            if let Some((abbrev, _)) = &f.zone {
                out.push_str(&case.apply(abbrev));
            }
            None
        }
        "TZH" | "TZM" | "OF" => {
            if let Some((_, offset_secs)) = f.zone {
                let sign = if offset_secs < 0 { '-' } else { '+' };
                let (hours, minutes) = (offset_secs.abs() / 3600, offset_secs.abs() / 60 % 60);
                let _ = match pattern {
                    "TZH" => write!(out, "{sign}{hours:02}"),
                    "TZM" => write!(out, "{minutes:02}"),
                    _ if minutes != 0 => write!(out, "{sign}{hours:02}:{minutes:02}"),
                    _ => write!(out, "{sign}{hours:02}"),
                };
            }
            None
        }
        _ => None,
    }
}

/// One element of a number's template.
#[derive(Clone, Debug, PartialEq)]
enum NumItem {
    /// `9` (false) or `0` (true).
    Digit(bool),
    Point,
    Group,
    /// `S`: the sign, next to the number.
    Sign,
    Minus,
    Plus,
    SignAlways,
    Brackets,
    Literal(String),
}

/// A parsed number template.
struct NumTemplate {
    items: Vec<NumItem>,
    fill_mode: bool,
    /// Digit positions before and after the decimal point.
    pre: usize,
    post: usize,
    /// Index (among the integer positions) of the first `0`, from which zeros print.
    zero_start: Option<usize>,
    /// Index (among the fraction positions) of the last `0`: FM keeps zeros up to it.
    zero_end: Option<usize>,
    /// Whether a sign pattern places the sign (else it precedes the first digit). `PL`
    /// does not: it adds a `+` and leaves the sign where it is.
    explicit_sign: bool,
}

fn parse_number_template(template: &str) -> Result<NumTemplate> {
    check_template(template)?;
    let mut t = NumTemplate {
        items: Vec::new(),
        fill_mode: false,
        pre: 0,
        post: 0,
        zero_start: None,
        zero_end: None,
        explicit_sign: false,
    };
    let mut seen_point = false;
    let mut rest = template;
    let unsupported = |p: &str| {
        err!(
            FEATURE_NOT_SUPPORTED,
            "the number template pattern \"{}\" is not supported yet",
            p
        )
    };
    while let Some(c) = rest.chars().next() {
        let upper = rest.to_ascii_uppercase();
        let (item, len) = match c {
            '9' | '0' => {
                let zero = c == '0';
                if seen_point {
                    if zero {
                        t.zero_end = Some(t.post);
                    }
                    t.post += 1;
                } else {
                    if zero && t.zero_start.is_none() {
                        t.zero_start = Some(t.pre);
                    }
                    t.pre += 1;
                }
                (NumItem::Digit(zero), 1)
            }
            '.' | 'D' | 'd' => {
                if seen_point {
                    return Err(err!(SYNTAX_ERROR, "multiple decimal points"));
                }
                seen_point = true;
                (NumItem::Point, 1)
            }
            ',' | 'G' | 'g' => (NumItem::Group, 1),
            '"' => {
                let mut text = String::new();
                rest = copy_quoted(&rest[1..], &mut text);
                t.items.push(NumItem::Literal(text));
                continue;
            }
            _ if upper.starts_with("FM") => {
                t.fill_mode = true;
                rest = &rest[2..];
                continue;
            }
            _ if upper.starts_with("PR") => (NumItem::Brackets, 2),
            _ if upper.starts_with("MI") => (NumItem::Minus, 2),
            _ if upper.starts_with("PL") => (NumItem::Plus, 2),
            _ if upper.starts_with("SG") => (NumItem::SignAlways, 2),
            'S' | 's' => (NumItem::Sign, 1),
            _ if upper.starts_with("EEEE") => return Err(unsupported("EEEE")),
            _ if upper.starts_with("RN") => return Err(unsupported("RN")),
            _ if upper.starts_with("TH") => return Err(unsupported("TH")),
            'L' | 'l' | 'V' | 'v' | 'B' | 'b' => {
                return Err(unsupported(&c.to_ascii_uppercase().to_string()))
            }
            _ => (NumItem::Literal(c.to_string()), c.len_utf8()),
        };
        if matches!(
            item,
            NumItem::Sign | NumItem::Minus | NumItem::SignAlways | NumItem::Brackets
        ) {
            if t.explicit_sign {
                return Err(err!(SYNTAX_ERROR, "cannot use \"S\" twice"));
            }
            t.explicit_sign = true;
        }
        t.items.push(item);
        rest = &rest[len..];
    }
    Ok(t)
}

/// A number written with `post` fraction digits: its sign, integer digits (without a
/// lone leading `0`) and fraction digits.
struct Digits {
    negative: bool,
    integer: String,
    fraction: String,
}

/// A lone `0` before the point is written only where the template has no fraction.
fn split_digits(text: &str, negative: bool) -> Digits {
    let (integer, fraction) = text.split_once('.').unwrap_or((text, ""));
    Digits {
        negative,
        integer: if integer == "0" && !fraction.is_empty() {
            String::new()
        } else {
            integer.to_string()
        },
        fraction: fraction.to_string(),
    }
}

fn digits_of(v: &Value, post: usize) -> Result<Digits> {
    Ok(match v {
        Value::Int2(_) | Value::Int4(_) | Value::Int8(_) => {
            let n = v.as_i64().unwrap_or(0);
            Digits {
                negative: n < 0,
                integer: if n == 0 && post > 0 {
                    String::new()
                } else {
                    n.unsigned_abs().to_string()
                },
                fraction: "0".repeat(post),
            }
        }
        Value::Numeric(d) => {
            let scale = post.min(Decimal::MAX_SCALE as usize) as u32;
            let rounded = d.round_dp_with_strategy(scale, RoundingStrategy::MidpointAwayFromZero);
            let negative = rounded.is_sign_negative() && !rounded.is_zero();
            let mut text = format!("{:.*}", scale as usize, rounded.abs());
            if post > scale as usize {
                if scale == 0 {
                    text.push('.');
                }
                text.push_str(&"0".repeat(post - scale as usize));
            }
            split_digits(&text, negative)
        }
        Value::Float4(_) | Value::Float8(_) => {
            let f = match v {
                Value::Float4(x) => f64::from(*x),
                Value::Float8(x) => *x,
                _ => 0.0,
            };
            if !f.is_finite() {
                return Ok(Digits {
                    negative: false,
                    integer: "#".repeat(400),
                    fraction: "#".repeat(post),
                });
            }
            let text = format!("{:.*}", post.min(400), f.abs());
            let negative = f < 0.0 && text.bytes().any(|b| b.is_ascii_digit() && b != b'0');
            split_digits(&text, negative)
        }
        _ => return Err(crate::error::Error::internal("to_char of a non-number")),
    })
}

/// `to_char(number, template)`.
pub fn number_to_char(v: &Value, template: &str) -> Result<Value> {
    let t = parse_number_template(template)?;
    let mut d = digits_of(v, t.post)?;
    let overflow = d.integer.len() > t.pre;
    if overflow {
        d.integer = "#".repeat(t.pre);
        d.fraction = "#".repeat(t.post);
    }
    // Integer positions left of the number's first digit.
    let blank_positions = t.pre - d.integer.len();
    let sign_char = |positive: char| if d.negative { '-' } else { positive };
    // FM: fraction digits past the last nonzero one (and past the last `0`) are dropped.
    let fraction_kept = if t.fill_mode && !overflow {
        let last_nonzero = d.fraction.trim_end_matches('0').len();
        last_nonzero.max(t.zero_end.map_or(0, |z| z + 1))
    } else {
        t.post
    };
    let mut out = String::new();
    let mut sign_written = t.explicit_sign;
    let mut in_number = false;
    let (mut int_pos, mut frac_pos) = (0usize, 0usize);
    let mut after_point = false;
    let implicit_sign = |out: &mut String, written: &mut bool| {
        if !*written {
            if d.negative {
                out.push('-');
            } else if !t.fill_mode {
                out.push(' ');
            }
            *written = true;
        }
    };
    let anchored_sign = t.items.iter().position(|i| *i == NumItem::Sign);
    let sign_before = anchored_sign
        .is_some_and(|at| !t.items[..at].iter().any(|i| matches!(i, NumItem::Digit(_))));
    let mut anchored_pending = sign_before;
    for item in &t.items {
        match item {
            NumItem::Digit(_) if !after_point => {
                let i = int_pos;
                int_pos += 1;
                let forced_zero = t.zero_start.is_some_and(|z| i >= z);
                if i < blank_positions && !forced_zero {
                    if !t.fill_mode {
                        out.push(' ');
                    }
                    continue;
                }
                implicit_sign(&mut out, &mut sign_written);
                if anchored_pending {
                    out.push(sign_char('+'));
                    anchored_pending = false;
                }
                in_number = true;
                if i < blank_positions {
                    out.push('0');
                } else {
                    out.push(char::from(d.integer.as_bytes()[i - blank_positions]));
                }
            }
            NumItem::Digit(_) => {
                let i = frac_pos;
                frac_pos += 1;
                if i < fraction_kept {
                    out.push(char::from(d.fraction.as_bytes()[i]));
                }
            }
            NumItem::Point => {
                implicit_sign(&mut out, &mut sign_written);
                if anchored_pending {
                    out.push(sign_char('+'));
                    anchored_pending = false;
                }
                after_point = true;
                in_number = true;
                out.push('.');
            }
            NumItem::Group => {
                if in_number {
                    out.push(',');
                } else if !t.fill_mode {
                    out.push(' ');
                }
            }
            NumItem::Sign => {
                if !sign_before {
                    out.push(sign_char('+'));
                }
            }
            NumItem::Minus => {
                if d.negative {
                    out.push('-');
                } else if !t.fill_mode {
                    out.push(' ');
                }
            }
            NumItem::Plus => {
                if !d.negative {
                    out.push('+');
                } else if !t.fill_mode {
                    out.push(' ');
                }
            }
            NumItem::SignAlways => out.push(sign_char('+')),
            NumItem::Brackets => {}
            NumItem::Literal(text) => out.push_str(text),
        }
    }
    if t.items.contains(&NumItem::Brackets) {
        let inner = out.trim_start();
        let lead = &out[..out.len() - inner.len()];
        out = if d.negative {
            format!("{lead}<{inner}>")
        } else if t.fill_mode {
            inner.to_string()
        } else {
            format!("{lead} {inner} ")
        };
    }
    Ok(Value::Text(out))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::parse_timestamp;

    fn ts(text: &str, template: &str) -> String {
        let t = parse_timestamp(text, false).unwrap();
        match timestamp_to_char(t, false, template).unwrap() {
            Value::Text(s) => s,
            other => panic!("{other:?}"),
        }
    }

    fn num(v: Value, template: &str) -> String {
        match number_to_char(&v, template).unwrap() {
            Value::Text(s) => s,
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn datetime_patterns() {
        let t = "2024-03-05 14:07:09.123456";
        assert_eq!(ts(t, "YYYY-MM-DD HH24:MI:SS"), "2024-03-05 14:07:09");
        assert_eq!(
            ts(t, "Day, DD Month YYYY HH12:MI AM"),
            "Tuesday  , 05 March     2024 02:07 PM"
        );
        assert_eq!(ts(t, "FMDay FMMonth FMDD"), "Tuesday March 5");
        assert_eq!(ts(t, "MS US"), "123 123456");
        assert_eq!(
            ts("2024-03-05", "YY Q WW IW DDD D J"),
            "24 1 10 10 065 3 2460375"
        );
        assert_eq!(ts(t, "\"Quarter\" Q, DDth \\\"x"), "Quarter 1, 05th \"x");
        assert_eq!(ts("2021-01-01", "IYYY-IW-ID"), "2020-53-5");
        assert_eq!(ts(t, "mon dy rm"), "mar tue iii ");
    }

    #[test]
    fn number_patterns() {
        let dec = |s: &str| Value::Numeric(s.parse().unwrap());
        assert_eq!(num(dec("1234.5"), "9999.99"), " 1234.50");
        assert_eq!(num(dec("1234.5"), "FM9999.99"), "1234.5");
        assert_eq!(num(dec("-1234.5"), "9,999.00"), "-1,234.50");
        assert_eq!(num(Value::Int4(42), "000"), " 042");
        assert_eq!(num(dec("0.5"), "0.99"), " 0.50");
        assert_eq!(num(dec("0.5"), "9.99"), "  .50");
        assert_eq!(num(Value::Int4(12345), "99"), " ##");
        assert_eq!(num(dec("1234567.891"), "FM999,999,999.00"), "1,234,567.89");
        assert_eq!(num(Value::Int4(-5), "S999"), "  -5");
        assert_eq!(num(Value::Int4(5), "999MI"), "  5 ");
        assert_eq!(num(Value::Float8(1.23456), "9.999"), " 1.235");
        assert_eq!(num(Value::Int4(-5), "999PR"), "  <5>");
        assert_eq!(num(Value::Int4(5), "PL999"), "+   5");
        assert_eq!(num(Value::Int4(-5), "999PL"), "  -5 ");
        assert_eq!(num(Value::Int4(0), "9999"), "    0");
        assert_eq!(num(Value::Int4(0), "9.99"), "  .00");
        assert!(number_to_char(&Value::Int4(5), "9.9.9").is_err());
    }
}
