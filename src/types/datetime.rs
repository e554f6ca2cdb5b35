//! date, timestamp and timestamptz text I/O with DateStyle ISO, MDY, in the session's
//! TimeZone (`super::zone`).
//!
//! Dates are days and timestamps microseconds since 2000-01-01, as in PostgreSQL; the
//! extreme values `i32::MIN`/`i32::MAX` (dates) and `i64::MIN`/`i64::MAX` (timestamps)
//! are `-infinity`/`infinity`. Input accepts ISO 8601 (`2024-01-31 12:34:56.5+05:30`,
//! `T` separator, `Z`), `YYYYMMDD`, `MM/DD/YYYY`, `AD`/`BC`, common zone abbreviations, and
//! the special values `epoch`, `infinity`, `-infinity`, `now`, `today`, `tomorrow`,
//! `yesterday`, `allballs`, and zone names of the database (`America/New_York`) after the
//! time. Month names are not supported.

use crate::err;
use crate::error::{Error, Result, SqlState};
use std::fmt::Write;

pub const USECS_PER_DAY: i64 = 86_400_000_000;
pub const DATE_NOBEGIN: i32 = i32::MIN;
pub const DATE_NOEND: i32 = i32::MAX;
pub const TIMESTAMP_NOBEGIN: i64 = i64::MIN;
pub const TIMESTAMP_NOEND: i64 = i64::MAX;
/// 4714-11-24 BC, the first valid date (Julian day 0).
const MIN_DATE: i64 = -2_451_545;
/// 5874898-01-01, the first date past the valid range.
const END_DATE: i64 = 2_145_031_949;
const MIN_TIMESTAMP: i64 = -211_813_488_000_000_000;
const END_TIMESTAMP: i64 = 9_223_371_331_200_000_000;
/// 294277-01-01, the first date that does not fit in a timestamp.
pub const TIMESTAMP_END_DATE: i32 = 106_751_983;
/// Days from 1970-01-01 to 2000-01-01.
const UNIX_TO_PG_DAYS: i64 = 10_957;

/// Which input function is parsing: decides messages and whether the zone matters.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Kind {
    Date,
    Timestamp,
    TimestampTz,
}

impl Kind {
    fn name(self) -> &'static str {
        match self {
            Kind::Date => "date",
            Kind::Timestamp => "timestamp",
            Kind::TimestampTz => "timestamp with time zone",
        }
    }
}

pub fn is_valid_date(d: i32) -> bool {
    d == DATE_NOBEGIN || d == DATE_NOEND || (MIN_DATE..END_DATE).contains(&(d as i64))
}

pub fn is_valid_timestamp(t: i64) -> bool {
    t == TIMESTAMP_NOBEGIN || t == TIMESTAMP_NOEND || (MIN_TIMESTAMP..END_TIMESTAMP).contains(&t)
}

/// Days since 2000-01-01 of a proleptic Gregorian date (year 0 is 1 BC).
pub fn days_from_civil(year: i64, month: u32, day: u32) -> i64 {
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (month as i64 + 9) % 12;
    let doy = (153 * mp + 2) / 5 + day as i64 - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468 - UNIX_TO_PG_DAYS
}

/// Inverse of [`days_from_civil`]: `(year, month, day)` with year 0 meaning 1 BC.
pub fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + UNIX_TO_PG_DAYS + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let month = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let year = yoe + era * 400 + (month <= 2) as i64;
    (year, month, day)
}

pub fn days_in_month(year: i64, month: u32) -> u32 {
    let leap = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0);
    match month {
        2 if leap => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

enum DtError {
    Syntax,
    FieldOverflow,
    TzOverflow,
    UnknownZone(String),
}

/// A parsed literal: special value, or fields relative to the zone given, if any.
enum Parsed {
    NegInfinity,
    Infinity,
    /// `epoch`: 1970-01-01 00:00, in UTC for a timestamptz.
    Epoch,
    /// `now`.
    Now,
    /// `today` plus this many days (`tomorrow` is 1, `yesterday` -1), at midnight of the
    /// session's zone.
    Today(i64),
    Fields {
        days: i64,
        usecs: i64,
        zone: Option<LiteralZone>,
    },
}

/// The zone a literal names after its time.
enum LiteralZone {
    /// An offset (`+05:30`) or an abbreviation (`EST`), in seconds east of UTC.
    Offset(i64),
    /// A zone of the database (`America/New_York`), whose rules give the offset.
    Named(chrono_tz::Tz),
}

/// The offset of a zone abbreviation of PostgreSQL's `Default` set (lower case), in
/// seconds east of UTC.
pub fn abbreviation_offset_secs(lower: &str) -> Option<i64> {
    ZONES
        .iter()
        .find(|(name, _)| *name == lower)
        .map(|&(_, off)| off)
}

/// Zone abbreviations from PostgreSQL's `Default` set, in seconds east of UTC.
const ZONES: &[(&str, i64)] = &[
    ("utc", 0),
    ("gmt", 0),
    ("ut", 0),
    ("z", 0),
    ("zulu", 0),
    ("wet", 0),
    ("universal", 0),
    ("etc/utc", 0),
    ("etc/gmt", 0),
    ("etc/universal", 0),
    ("est", -18000),
    ("edt", -14400),
    ("cst", -21600),
    ("cdt", -18000),
    ("mst", -25200),
    ("mdt", -21600),
    ("pst", -28800),
    ("pdt", -25200),
    ("akst", -32400),
    ("akdt", -28800),
    ("hst", -36000),
    ("ast", -14400),
    ("adt", -10800),
    ("nst", -12600),
    ("ndt", -9000),
    ("bst", 3600),
    ("west", 3600),
    ("cet", 3600),
    ("cest", 7200),
    ("met", 3600),
    ("mest", 7200),
    ("wat", 3600),
    ("eet", 7200),
    ("eest", 10800),
    ("ist", 7200),
    ("sast", 7200),
    ("msk", 10800),
    ("eat", 10800),
    ("hkt", 28800),
    ("sgt", 28800),
    ("pht", 28800),
    ("awst", 28800),
    ("jst", 32400),
    ("kst", 32400),
    ("acst", 34200),
    ("acdt", 37800),
    ("aest", 36000),
    ("aedt", 39600),
    ("nzst", 43200),
    ("nzdt", 46800),
];

fn now_usecs() -> i128 {
    let since_unix = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_micros() as i128)
        .unwrap_or(0);
    since_unix - UNIX_TO_PG_DAYS as i128 * USECS_PER_DAY as i128
}

struct Cursor<'a> {
    b: &'a [u8],
    i: usize,
}

impl Cursor<'_> {
    fn peek(&self) -> Option<u8> {
        self.b.get(self.i).copied()
    }

    fn eat(&mut self, c: u8) -> bool {
        if self.peek() == Some(c) {
            self.i += 1;
            true
        } else {
            false
        }
    }

    /// A run of ASCII digits: `(value, length)`; the value saturates.
    fn digits(&mut self) -> (i64, usize) {
        let start = self.i;
        let mut v: i64 = 0;
        while let Some(c @ b'0'..=b'9') = self.peek() {
            v = v.saturating_mul(10).saturating_add((c - b'0') as i64);
            self.i += 1;
        }
        (v, self.i - start)
    }

    fn skip_spaces(&mut self) -> bool {
        let start = self.i;
        while matches!(self.peek(), Some(c) if super::float::is_pg_space(c as char)) {
            self.i += 1;
        }
        self.i > start
    }
}

/// `(year, month, day)` of the date part; years are as written (AD/BC applied later).
fn parse_date_part(c: &mut Cursor) -> Result<(i64, i64, i64), DtError> {
    let (v1, len1) = c.digits();
    if len1 == 0 {
        return Err(DtError::Syntax);
    }
    let sep = match c.peek() {
        Some(s @ (b'-' | b'/' | b'.')) => s,
        // Run-together YYYYMMDD (or YYMMDD, YYYMMDD): the last four digits are MMDD.
        _ if (6..=8).contains(&len1) => {
            let year = v1 / 10000;
            let year = if len1 == 6 {
                two_digit_year(year)
            } else {
                year
            };
            return Ok((year, v1 / 100 % 100, v1 % 100));
        }
        _ if len1 > 8 => return Err(DtError::FieldOverflow),
        _ => return Err(DtError::Syntax),
    };
    c.i += 1;
    let (v2, len2) = c.digits();
    if len2 == 0 || !c.eat(sep) {
        return Err(DtError::Syntax);
    }
    let (v3, len3) = c.digits();
    if len3 == 0 {
        return Err(DtError::Syntax);
    }
    if len1 >= 3 {
        return Ok((v1, v2, v3));
    }
    // DateStyle MDY: month/day/year.
    let year = if len3 <= 2 { two_digit_year(v3) } else { v3 };
    Ok((year, v1, v2))
}

/// Two-digit years mean 1970..2069.
fn two_digit_year(y: i64) -> i64 {
    if y < 70 {
        y + 2000
    } else {
        y + 1900
    }
}

/// Microseconds since midnight of `H:M[:S[.frac]]`; the fraction is rounded like `rint`.
/// Up to 24:00:00 is accepted, and a leap second 60 as long as the total stays in range.
fn parse_time_part(c: &mut Cursor) -> Result<i64, DtError> {
    let (h, hl) = c.digits();
    if hl == 0 || !c.eat(b':') {
        return Err(DtError::Syntax);
    }
    let (m, ml) = c.digits();
    if ml == 0 {
        return Err(DtError::Syntax);
    }
    let (mut s, mut fsec) = (0, 0);
    if c.eat(b':') {
        let (sv, sl) = c.digits();
        if sl == 0 {
            return Err(DtError::Syntax);
        }
        s = sv;
        if c.eat(b'.') {
            let start = c.i;
            c.digits();
            let frac = std::str::from_utf8(&c.b[start..c.i]).unwrap_or("");
            let f: f64 = format!("0.{frac}").parse().unwrap_or(0.0);
            fsec = (f * 1e6).round_ties_even() as i64;
        }
    }
    if h > 24 || m > 59 || s > 60 {
        return Err(DtError::FieldOverflow);
    }
    let usecs = ((h * 60 + m) * 60 + s) * 1_000_000 + fsec;
    if usecs > USECS_PER_DAY {
        return Err(DtError::FieldOverflow);
    }
    Ok(usecs)
}

/// `+hh`, `+hhmm`, `+hh:mm`, `+hh:mm:ss` (and `-`): seconds east of UTC.
fn parse_offset(c: &mut Cursor) -> Result<i64, DtError> {
    let negative = c.peek() == Some(b'-');
    c.i += 1;
    let start = c.i;
    let (mut h, hl) = c.digits();
    if hl == 0 {
        return Err(DtError::Syntax);
    }
    let (mut m, mut s) = (0, 0);
    if c.eat(b':') {
        let (mv, ml) = c.digits();
        if ml == 0 {
            return Err(DtError::Syntax);
        }
        m = mv;
        if c.eat(b':') {
            let (sv, sl) = c.digits();
            if sl == 0 {
                return Err(DtError::Syntax);
            }
            s = sv;
        }
    } else if c.i - start > 2 {
        m = h % 100;
        h /= 100;
    }
    if h > 15 || m > 59 || s > 59 {
        return Err(DtError::TzOverflow);
    }
    let secs = (h * 60 + m) * 60 + s;
    Ok(if negative { -secs } else { secs })
}

fn parse(s: &str) -> Result<Parsed, DtError> {
    let lower = s.to_ascii_lowercase();
    match lower.as_str() {
        "infinity" | "+infinity" => return Ok(Parsed::Infinity),
        "-infinity" => return Ok(Parsed::NegInfinity),
        "epoch" => return Ok(Parsed::Epoch),
        "now" => return Ok(Parsed::Now),
        "today" => return Ok(Parsed::Today(0)),
        "tomorrow" => return Ok(Parsed::Today(1)),
        "yesterday" => return Ok(Parsed::Today(-1)),
        _ => {}
    }
    let mut c = Cursor {
        b: lower.as_bytes(),
        i: 0,
    };
    let (year, month, day) = parse_date_part(&mut c)?;
    let mut usecs = None;
    let mut zone = None;
    let mut era_bc = None;
    if matches!(c.peek(), Some(b't')) && matches!(c.b.get(c.i + 1), Some(b'0'..=b'9')) {
        c.i += 1;
        usecs = Some(parse_time_part(&mut c)?);
    }
    loop {
        let spaced = c.skip_spaces();
        let Some(ch) = c.peek() else { break };
        if ch.is_ascii_digit() && spaced && usecs.is_none() {
            usecs = Some(parse_time_part(&mut c)?);
        } else if (ch == b'+' || ch == b'-') && zone.is_none() {
            zone = Some(LiteralZone::Offset(parse_offset(&mut c)?));
        } else if ch.is_ascii_alphabetic() {
            let start = c.i;
            while matches!(c.peek(), Some(b) if b.is_ascii_alphanumeric() || b == b'/' || b == b'_')
            {
                c.i += 1;
            }
            let word = &lower[start..c.i];
            match word {
                "ad" | "bc" if era_bc.is_none() => era_bc = Some(word == "bc"),
                "allballs" if usecs.is_none() => usecs = Some(0),
                _ if zone.is_some() => return Err(DtError::Syntax),
                _ => {
                    let name = &s[start..c.i];
                    if let Some(off) = abbreviation_offset_secs(word) {
                        zone = Some(LiteralZone::Offset(off));
                    } else if let Some(tz) = super::zone::named_zone(name) {
                        zone = Some(LiteralZone::Named(tz));
                    } else if word.contains('/') {
                        return Err(DtError::UnknownZone(name.to_string()));
                    } else {
                        return Err(DtError::Syntax);
                    }
                }
            }
        } else {
            return Err(DtError::Syntax);
        }
    }
    // Year 0 does not exist in AD/BC notation; BC years count back from 1 BC = year 0.
    if year == 0 || !(1..=12).contains(&month) || year > 100_000_000 {
        return Err(DtError::FieldOverflow);
    }
    let year = if era_bc == Some(true) { 1 - year } else { year };
    if day < 1 || day > days_in_month(year, month as u32) as i64 {
        return Err(DtError::FieldOverflow);
    }
    let days = days_from_civil(year, month as u32, day as u32);
    Ok(Parsed::Fields {
        days,
        usecs: usecs.unwrap_or(0),
        zone,
    })
}

fn parse_error(e: DtError, text: &str, kind: Kind) -> Error {
    match e {
        DtError::Syntax => {
            err!(
                INVALID_DATETIME_FORMAT,
                "invalid input syntax for type {}: \"{text}\"",
                kind.name()
            )
        }
        DtError::FieldOverflow => {
            err!(
                DATETIME_FIELD_OVERFLOW,
                "date/time field value out of range: \"{text}\""
            )
        }
        DtError::TzOverflow => Error::new(
            SqlState("22009"),
            format!("time zone displacement out of range: \"{text}\""),
        ),
        DtError::UnknownZone(name) => err!(
            INVALID_PARAMETER_VALUE,
            "time zone \"{}\" not recognized",
            name.to_ascii_lowercase()
        ),
    }
}

/// `date_in`: a time of day and zone, if present, are validated and ignored.
pub fn parse_date(text: &str) -> Result<i32> {
    let s = super::float::trim_pg(text);
    let days = match parse(s).map_err(|e| parse_error(e, text, Kind::Date))? {
        Parsed::NegInfinity => return Ok(DATE_NOBEGIN),
        Parsed::Infinity => return Ok(DATE_NOEND),
        Parsed::Epoch => -UNIX_TO_PG_DAYS,
        Parsed::Now => local_now_us().div_euclid(USECS_PER_DAY as i128) as i64,
        Parsed::Today(plus) => local_now_us().div_euclid(USECS_PER_DAY as i128) as i64 + plus,
        Parsed::Fields { days, .. } => days,
    };
    if !(MIN_DATE..END_DATE).contains(&days) {
        return Err(err!(
            DATETIME_FIELD_OVERFLOW,
            "date out of range: \"{text}\""
        ));
    }
    Ok(days as i32)
}

/// The wall-clock time now in the session's zone, microseconds since 2000-01-01.
fn local_now_us() -> i128 {
    let now = now_usecs();
    let offset = super::zone::session_zone().offset_at(now.clamp(0, i64::MAX as i128) as i64);
    now + offset as i128 * 1_000_000
}

/// `timestamp_in` / `timestamptz_in`: for timestamptz the zone the literal names, else
/// the session's, gives the instant; for timestamp the zone is ignored.
pub fn parse_timestamp(text: &str, with_tz: bool) -> Result<i64> {
    let kind = if with_tz {
        Kind::TimestampTz
    } else {
        Kind::Timestamp
    };
    let s = super::float::trim_pg(text);
    let us: i128 = match parse(s).map_err(|e| parse_error(e, text, kind))? {
        Parsed::NegInfinity => return Ok(TIMESTAMP_NOBEGIN),
        Parsed::Infinity => return Ok(TIMESTAMP_NOEND),
        Parsed::Epoch => -(UNIX_TO_PG_DAYS as i128) * USECS_PER_DAY as i128,
        Parsed::Now if with_tz => now_usecs(),
        Parsed::Now => local_now_us(),
        Parsed::Today(plus) => {
            let day = local_now_us().div_euclid(USECS_PER_DAY as i128) + plus as i128;
            let local = day * USECS_PER_DAY as i128;
            if with_tz {
                let zone = super::zone::session_zone();
                zone.utc_of_local(local.clamp(MIN_TIMESTAMP as i128, END_TIMESTAMP as i128) as i64)
                    as i128
            } else {
                local
            }
        }
        Parsed::Fields { days, usecs, zone } => {
            let local = days as i128 * USECS_PER_DAY as i128 + usecs as i128;
            let offset_secs = match zone {
                _ if !with_tz => 0,
                Some(LiteralZone::Offset(secs)) => secs,
                // Outside the timestamp range the result is refused below anyway.
                Some(LiteralZone::Named(tz)) => {
                    local_offset_secs(&super::zone::Zone::Named(tz), local)
                }
                None => local_offset_secs(&super::zone::session_zone(), local),
            };
            local - offset_secs as i128 * 1_000_000
        }
    };
    if !(MIN_TIMESTAMP as i128..END_TIMESTAMP as i128).contains(&us) {
        return Err(err!(
            DATETIME_FIELD_OVERFLOW,
            "timestamp out of range: \"{text}\""
        ));
    }
    Ok(us as i64)
}

/// The offset east of UTC, in seconds, of the local time `local` in `zone`.
fn local_offset_secs(zone: &super::zone::Zone, local: i128) -> i64 {
    let clamped = local.clamp(MIN_TIMESTAMP as i128, END_TIMESTAMP as i128) as i64;
    zone.offset_of_local(clamped) as i64
}

fn push_ymd(out: &mut String, days: i64) -> bool {
    let (year, month, day) = civil_from_days(days);
    let bc = year <= 0;
    let shown = if bc { 1 - year } else { year };
    let _ = write!(out, "{shown:04}-{month:02}-{day:02}");
    bc
}

/// `date_out` (ISO): `2024-01-31`, `0044-03-15 BC`, `infinity`.
pub fn format_date(d: i32, out: &mut String) {
    match d {
        DATE_NOBEGIN => out.push_str("-infinity"),
        DATE_NOEND => out.push_str("infinity"),
        _ => {
            if push_ymd(out, d as i64) {
                out.push_str(" BC");
            }
        }
    }
}

/// `timestamp_out` / `timestamptz_out` (ISO): `2024-01-31 12:34:56.5[-05][ BC]`, a
/// timestamptz in the session's zone.
pub fn format_timestamp(t: i64, with_tz: bool, out: &mut String) {
    match t {
        TIMESTAMP_NOBEGIN => return out.push_str("-infinity"),
        TIMESTAMP_NOEND => return out.push_str("infinity"),
        _ => {}
    }
    if with_tz {
        let zone = super::zone::session_zone();
        let offset_secs = zone.offset_at(t);
        format_local(
            t.saturating_add(offset_secs as i64 * 1_000_000),
            Some(offset_secs),
            out,
        );
    } else {
        format_local(t, None, out);
    }
}

/// `+05`, `-04:30`, `-04:56:02`: an offset east of UTC as timestamptz text ends.
pub fn push_offset(out: &mut String, offset_secs: i32) {
    let sign = if offset_secs < 0 { '-' } else { '+' };
    let abs = offset_secs.unsigned_abs();
    let _ = write!(out, "{sign}{:02}", abs / 3600);
    if !abs.is_multiple_of(3600) {
        let _ = write!(out, ":{:02}", abs / 60 % 60);
        if !abs.is_multiple_of(60) {
            let _ = write!(out, ":{:02}", abs % 60);
        }
    }
}

/// A local date and time as text, with its offset if it has one.
fn format_local(t: i64, offset_secs: Option<i32>, out: &mut String) {
    let days = t.div_euclid(USECS_PER_DAY);
    let time = t.rem_euclid(USECS_PER_DAY);
    let bc = push_ymd(out, days);
    let (secs, fsec) = (time / 1_000_000, time % 1_000_000);
    let _ = write!(
        out,
        " {:02}:{:02}:{:02}",
        secs / 3600,
        secs / 60 % 60,
        secs % 60
    );
    if fsec != 0 {
        // Six digits, trailing zeros dropped.
        let (mut digits, mut value) = (6, fsec);
        while value % 10 == 0 {
            value /= 10;
            digits -= 1;
        }
        let _ = write!(out, ".{value:0digits$}");
    }
    if let Some(offset_secs) = offset_secs {
        push_offset(out, offset_secs);
    }
    if bc {
        out.push_str(" BC");
    }
}

/// date → timestamp (`date2timestamp`); 22008 past the timestamp range.
pub fn date_to_timestamp(d: i32) -> Result<i64> {
    match d {
        DATE_NOBEGIN => Ok(TIMESTAMP_NOBEGIN),
        DATE_NOEND => Ok(TIMESTAMP_NOEND),
        _ if d >= TIMESTAMP_END_DATE => Err(err!(
            DATETIME_FIELD_OVERFLOW,
            "date out of range for timestamp"
        )),
        _ => Ok(d as i64 * USECS_PER_DAY),
    }
}

/// timestamp → date (`timestamp_date`): the day containing the instant.
pub fn timestamp_to_date(t: i64) -> Result<i32> {
    match t {
        TIMESTAMP_NOBEGIN => Ok(DATE_NOBEGIN),
        TIMESTAMP_NOEND => Ok(DATE_NOEND),
        _ => {
            let days = t.div_euclid(USECS_PER_DAY);
            i32::try_from(days)
                .ok()
                .filter(|d| is_valid_date(*d))
                .ok_or_else(|| err!(DATETIME_FIELD_OVERFLOW, "date out of range"))
        }
    }
}

fn checked_timestamp(t: i64) -> Result<i64> {
    if is_valid_timestamp(t) {
        Ok(t)
    } else {
        Err(err!(DATETIME_FIELD_OVERFLOW, "timestamp out of range"))
    }
}

/// timestamp → timestamptz (`timestamp2timestamptz`): the local time in the session's zone.
pub fn timestamp_to_timestamptz(t: i64) -> Result<i64> {
    checked_timestamp(super::zone::session_zone().utc_of_local(t))
}

/// timestamptz → timestamp (`timestamptz2timestamp`): the session zone's wall-clock time.
pub fn timestamptz_to_timestamp(t: i64) -> Result<i64> {
    checked_timestamp(super::zone::session_zone().local_of(t))
}

/// date → timestamptz (`date2timestamptz`): midnight in the session's zone.
pub fn date_to_timestamptz(d: i32) -> Result<i64> {
    timestamp_to_timestamptz(date_to_timestamp(d)?)
}

/// timestamptz → date (`timestamptz_date`): the day in the session's zone.
pub fn timestamptz_to_date(t: i64) -> Result<i32> {
    timestamp_to_date(super::zone::session_zone().local_of(t))
}

/// A date or timestamp on one scale for comparisons: `(class, micros)` where class 0 is
/// -infinity, 1 finite and 2 infinity (finite dates may lie beyond the timestamp range).
pub fn date_as_instant(d: i32) -> (u8, i128) {
    match d {
        DATE_NOBEGIN => (0, 0),
        DATE_NOEND => (2, 0),
        _ => (1, d as i128 * USECS_PER_DAY as i128),
    }
}

pub fn timestamp_as_instant(t: i64) -> (u8, i128) {
    match t {
        TIMESTAMP_NOBEGIN => (0, 0),
        TIMESTAMP_NOEND => (2, 0),
        _ => (1, t as i128),
    }
}
