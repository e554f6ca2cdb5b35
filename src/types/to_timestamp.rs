//! `to_timestamp(text, template)` and `to_date(text, template)`: a date and time read
//! from text by the patterns `to_char` writes, as PostgreSQL 15 reads them.
//!
//! The template is read left to right against the input. A numeric field reads its
//! digits: as many as its width where the next pattern follows at once (`YYYYMMDD`),
//! else every digit there is. A name (`Mon`, `Month`, `Dy`, `AM`, `BC`) matches in any
//! case. A space or other separator in the template skips the blanks and one separator
//! in the input; other template text skips as many input characters. Input left over is
//! ignored. Fields not given are those of 0001-01-01 BC, 00:00. Years of fewer than four
//! digits (`YY`, `YYY`) are taken nearest 2020. The day of the week and the quarter are
//! read and ignored, as PostgreSQL ignores them; ISO week dates, time zone fields, `RM`
//! and `FX` answer 0A000.

use super::datetime::{days_from_civil, days_in_month, USECS_PER_DAY};
use super::to_char::{datetime_pattern, DAYS, MONTHS};
use crate::err;
use crate::error::{Error, Result};

/// What the input gave.
#[derive(Default)]
struct Parsed {
    year: Option<i64>,
    century: Option<i64>,
    bc: bool,
    month: Option<u32>,
    day: Option<u32>,
    day_of_year: Option<u32>,
    julian: Option<i64>,
    hour: Option<i64>,
    twelve_hour: bool,
    pm: Option<bool>,
    minute: i64,
    second: i64,
    micros: i64,
    seconds_of_day: Option<i64>,
}

fn out_of_range(input: &str) -> Error {
    err!(
        DATETIME_FIELD_OVERFLOW,
        "date/time field value out of range: \"{}\"",
        input
    )
}

fn is_separator(c: char) -> bool {
    !c.is_alphanumeric()
}

/// A year of fewer than four digits, nearest 2020 (PostgreSQL's rule).
fn year_near_2020(year: i64) -> i64 {
    match year {
        0..=69 => year + 2000,
        70..=99 => year + 1900,
        100..=519 => year + 2000,
        520..=999 => year + 1000,
        _ => year,
    }
}

/// Width of a numeric pattern's field where the next pattern follows at once.
fn field_width(pattern: &str) -> Option<usize> {
    Some(match pattern {
        "YYYY" | "SSSS" => 4,
        "YYY" | "DDD" | "MS" => 3,
        "YY" | "MM" | "DD" | "HH" | "HH12" | "HH24" | "MI" | "SS" | "CC" | "WW" => 2,
        "Y" | "D" | "Q" | "W" => 1,
        "US" => 6,
        "SSSSS" => 5,
        "J" => 7,
        "FF1" | "FF2" | "FF3" | "FF4" | "FF5" | "FF6" => usize::from(pattern.as_bytes()[2] - b'0'),
        _ => return None,
    })
}

/// `to_date(text, template)`: days since 2000-01-01.
pub fn to_date(input: &str, template: &str) -> Result<i32> {
    let (days, _) = parse(input, template)?;
    i32::try_from(days).map_err(|_| out_of_range(input))
}

/// `to_timestamp(text, template)`: microseconds since 2000-01-01 UTC.
pub fn to_timestamp(input: &str, template: &str) -> Result<i64> {
    let (days, micros) = parse(input, template)?;
    let zone = super::zone::session_zone();
    days.checked_mul(USECS_PER_DAY)
        .and_then(|t| t.checked_add(micros))
        .filter(|t| super::datetime::is_valid_timestamp(*t))
        // The fields are a local time of the session's zone.
        .map(|local| zone.utc_of_local(local))
        .filter(|t| super::datetime::is_valid_timestamp(*t))
        .ok_or_else(|| err!(DATETIME_FIELD_OVERFLOW, "timestamp out of range"))
}

fn parse(input: &str, template: &str) -> Result<(i64, i64)> {
    let mut p = Parsed::default();
    let mut rest = input;
    let mut tpl = template;
    while !tpl.is_empty() {
        // Once the input is spent, the rest of the template gives nothing.
        if rest.trim().is_empty() {
            break;
        }
        let mut body = tpl;
        loop {
            if let Some(r) = body.strip_prefix("FM").or_else(|| body.strip_prefix("fm")) {
                body = r;
            } else if let Some(r) = body.strip_prefix("TM").or_else(|| body.strip_prefix("tm")) {
                body = r;
            } else {
                break;
            }
        }
        if body.starts_with("FX") || body.starts_with("fx") {
            return Err(err!(
                FEATURE_NOT_SUPPORTED,
                "FX in a to_timestamp or to_date template is not supported yet"
            ));
        }
        if let Some((pattern, case)) = datetime_pattern(body) {
            body = &body[pattern.len()..];
            // A TH suffix reads the ordinal's letters too.
            let ordinal = body.starts_with("TH") || body.starts_with("th");
            if ordinal {
                body = &body[2..];
            }
            let adjacent = datetime_pattern(body.trim_start_matches("FM")).is_some();
            let shown = match case {
                super::to_char::Case::Upper => pattern.to_string(),
                super::to_char::Case::Lower => pattern.to_lowercase(),
                super::to_char::Case::Capitalized => {
                    let mut c = pattern.chars();
                    c.next().map_or(String::new(), |f| f.to_string()) + &c.as_str().to_lowercase()
                }
            };
            rest = rest.trim_start();
            rest = read_field(&mut p, pattern, &shown, rest, adjacent, input)?;
            if ordinal {
                let letters = rest.chars().take_while(|c| c.is_alphabetic()).count();
                rest = &rest[rest
                    .char_indices()
                    .nth(letters)
                    .map_or(rest.len(), |(i, _)| i)..];
            }
            tpl = body;
            continue;
        }
        let mut chars = body.chars();
        let c = chars.next().unwrap_or(' ');
        tpl = chars.as_str();
        if c == '"' {
            // Quoted text skips as many input characters.
            let mut n = 0;
            let mut quoted = tpl.chars();
            for q in quoted.by_ref() {
                if q == '"' {
                    break;
                }
                n += 1;
            }
            tpl = quoted.as_str();
            rest = skip_chars(rest, n);
        } else if c.is_whitespace() {
            rest = rest.trim_start();
        } else if is_separator(c) {
            rest = rest.trim_start();
            if rest.chars().next().is_some_and(is_separator) {
                rest = skip_chars(rest, 1);
            }
            rest = rest.trim_start();
        } else {
            rest = skip_chars(rest, 1);
        }
    }
    finish(&p, input)
}

fn skip_chars(s: &str, n: usize) -> &str {
    match s.char_indices().nth(n) {
        Some((i, _)) => &s[i..],
        None => "",
    }
}

/// Read one field of `pattern` at the start of `rest`; returns what follows it.
fn read_field<'a>(
    p: &mut Parsed,
    pattern: &str,
    shown: &str,
    rest: &'a str,
    adjacent: bool,
    input: &str,
) -> Result<&'a str> {
    let name_of = |names: &[&str], abbreviated: bool| -> Option<(usize, usize)> {
        names.iter().enumerate().find_map(|(i, n)| {
            let n = if abbreviated { &n[..3] } else { n };
            let head = rest.get(..n.len())?;
            head.eq_ignore_ascii_case(n).then_some((i, n.len()))
        })
    };
    let no_match = || {
        err!(
            INVALID_DATETIME_FORMAT,
            "invalid value \"{}\" for \"{}\"",
            rest,
            shown
        )
        .with_detail("The given value did not match any of the allowed values for this field.")
    };
    let marker = |options: &[(&str, bool)]| -> Result<(bool, usize)> {
        options
            .iter()
            .find(|(text, _)| {
                rest.get(..text.len())
                    .is_some_and(|h| h.eq_ignore_ascii_case(text))
            })
            .map(|(text, value)| (*value, text.len()))
            .ok_or_else(no_match)
    };
    match pattern {
        "MONTH" | "MON" => {
            let (i, len) = name_of(&MONTHS, pattern == "MON").ok_or_else(no_match)?;
            p.month = Some(i as u32 + 1);
            return Ok(&rest[len..]);
        }
        "DAY" | "DY" => {
            let (_, len) = name_of(&DAYS, pattern == "DY").ok_or_else(no_match)?;
            return Ok(&rest[len..]);
        }
        "AM" | "PM" => {
            let (pm, len) = marker(&[("AM", false), ("PM", true)])?;
            p.pm = Some(pm);
            return Ok(&rest[len..]);
        }
        "A.M." | "P.M." => {
            let (pm, len) = marker(&[("A.M.", false), ("P.M.", true)])?;
            p.pm = Some(pm);
            return Ok(&rest[len..]);
        }
        "AD" | "BC" => {
            let (bc, len) = marker(&[("AD", false), ("BC", true)])?;
            p.bc = bc;
            return Ok(&rest[len..]);
        }
        "A.D." | "B.C." => {
            let (bc, len) = marker(&[("A.D.", false), ("B.C.", true)])?;
            p.bc = bc;
            return Ok(&rest[len..]);
        }
        "RM" => {
            return Err(err!(
                FEATURE_NOT_SUPPORTED,
                "the template pattern \"RM\" is not supported yet in to_timestamp and to_date"
            ))
        }
        "IYYY" | "IYY" | "IY" | "I" | "IW" | "ID" | "IDDD" | "TZ" | "TZH" | "TZM" | "OF" => {
            return Err(err!(
                FEATURE_NOT_SUPPORTED,
                "the template pattern \"{}\" is not supported yet in to_timestamp and to_date",
                shown
            ))
        }
        _ => {}
    }
    if pattern == "Y,YYY" {
        let digits: String = rest
            .chars()
            .take_while(|c| c.is_ascii_digit() || *c == ',')
            .collect();
        let year = digits.replace(',', "").parse::<i64>().map_err(|_| {
            err!(
                INVALID_DATETIME_FORMAT,
                "invalid input string for \"Y,YYY\""
            )
        })?;
        p.year = Some(year);
        return Ok(&rest[digits.len()..]);
    }
    let width = field_width(pattern).unwrap_or(9);
    // Apart from the next field, every digit (at most as many as an i64 holds).
    let limit = if adjacent { width } else { 18 };
    let negative = rest.starts_with('-') && matches!(pattern, "YYYY" | "J");
    let body = if negative { &rest[1..] } else { rest };
    let digits: String = body
        .chars()
        .take_while(|c| c.is_ascii_digit())
        .take(limit)
        .collect();
    if digits.is_empty() {
        let shown_value: String = rest.chars().take(width).collect();
        return Err(err!(
            INVALID_DATETIME_FORMAT,
            "invalid value \"{}\" for \"{}\"",
            shown_value,
            shown
        )
        .with_detail("Value must be an integer."));
    }
    let after = &body[digits.len()..];
    let mut n: i64 = digits.parse().map_err(|_| out_of_range(input))?;
    if negative {
        n = -n;
    }
    match pattern {
        "YYYY" => p.year = Some(n),
        "YYY" | "YY" | "Y" => p.year = Some(year_near_2020(n)),
        "CC" => p.century = Some(n),
        "MM" => p.month = Some(u32::try_from(n).map_err(|_| out_of_range(input))?),
        "DD" => p.day = Some(u32::try_from(n).map_err(|_| out_of_range(input))?),
        "DDD" => p.day_of_year = Some(u32::try_from(n).map_err(|_| out_of_range(input))?),
        "J" => p.julian = Some(n),
        "HH" | "HH12" => {
            p.hour = Some(n);
            p.twelve_hour = true;
        }
        "HH24" => p.hour = Some(n),
        "MI" => p.minute = n,
        "SS" => p.second = n,
        "SSSS" | "SSSSS" => p.seconds_of_day = Some(n),
        "MS" => p.micros = n * 10_i64.pow(3 - digits.len().min(3) as u32) * 1000,
        "US" => p.micros = n * 10_i64.pow(6 - digits.len().min(6) as u32),
        "FF1" | "FF2" | "FF3" | "FF4" | "FF5" | "FF6" => {
            p.micros = n * 10_i64.pow(6 - digits.len().min(6) as u32)
        }
        // The day of the week, the week and the quarter are read, not used.
        _ => {}
    }
    Ok(after)
}

/// The date (days since 2000-01-01) and time of day the fields give.
fn finish(p: &Parsed, input: &str) -> Result<(i64, i64)> {
    let days = if let Some(j) = p.julian {
        j - 2_451_545
    } else {
        let mut year = match (p.year, p.century) {
            (Some(y), _) => y,
            (None, Some(cc)) => (cc - 1) * 100 + 1,
            (None, None) => 0,
        };
        if p.bc && year > 0 {
            year = 1 - year;
        }
        if p.year.is_none() && p.century.is_none() {
            year = 0;
        }
        if let Some(doy) = p
            .day_of_year
            .filter(|_| p.month.is_none() && p.day.is_none())
        {
            let leap = days_in_month(year, 2) == 29;
            if doy == 0 || doy > if leap { 366 } else { 365 } {
                return Err(out_of_range(input));
            }
            days_from_civil(year, 1, 1) + i64::from(doy) - 1
        } else {
            let month = p.month.unwrap_or(1);
            let day = p.day.unwrap_or(1);
            if !(1..=12).contains(&month) || day == 0 || day > days_in_month(year, month) {
                return Err(out_of_range(input));
            }
            days_from_civil(year, month, day)
        }
    };
    let mut hour = p.hour.unwrap_or(0);
    if p.twelve_hour || p.pm.is_some() {
        if p.hour.is_some() && !(1..=12).contains(&hour) {
            return Err(err!(
                INVALID_DATETIME_FORMAT,
                "hour \"{}\" is invalid for the 12-hour clock",
                hour
            )
            .with_hint("Use the 24-hour clock, or give an hour between 1 and 12."));
        }
        if p.pm == Some(true) && hour < 12 {
            hour += 12;
        } else if p.pm != Some(true) && hour == 12 {
            hour = 0;
        }
    }
    let micros = match p.seconds_of_day {
        Some(s) => s * 1_000_000 + p.micros,
        None => {
            if !(0..24).contains(&hour)
                || !(0..60).contains(&p.minute)
                || !(0..=60).contains(&p.second)
            {
                return Err(out_of_range(input));
            }
            ((hour * 60 + p.minute) * 60 + p.second) * 1_000_000 + p.micros
        }
    };
    Ok((days, micros))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn date(input: &str, template: &str) -> String {
        let mut out = String::new();
        super::super::datetime::format_date(to_date(input, template).unwrap(), &mut out);
        out
    }

    #[test]
    fn reads_dates_as_postgresql_does() {
        assert_eq!(date("2024-03-05", "YYYY-MM-DD"), "2024-03-05");
        assert_eq!(date("05 Mar 2024", "DD Mon YYYY"), "2024-03-05");
        assert_eq!(date("20240305", "YYYYMMDD"), "2024-03-05");
        assert_eq!(date("24-3-5", "YY-MM-DD"), "2024-03-05");
        assert_eq!(date("March 5, 2024", "Month DD, YYYY"), "2024-03-05");
        assert_eq!(date("2024 065", "YYYY DDD"), "2024-03-05");
        assert_eq!(date("2024/03/05 junk", "YYYY-MM-DD"), "2024-03-05");
        assert_eq!(date("2451545", "J"), "2000-01-01");
        assert_eq!(date("Tue 2024-03-05", "Dy YYYY-MM-DD"), "2024-03-05");
        assert_eq!(date("44 BC 03 15", "YYYY BC MM DD"), "0044-03-15 BC");
        assert_eq!(date("", "YYYY"), "0001-01-01 BC");
        assert!(to_date("2024-13-05", "YYYY-MM-DD").is_err());
        assert!(to_date("2024-02-30", "YYYY-MM-DD").is_err());
        assert!(to_date("2024-xx-05", "YYYY-MM-DD").is_err());
    }

    #[test]
    fn reads_times() {
        let t = to_timestamp("03/05/2024 02:07 PM", "MM/DD/YYYY HH:MI AM").unwrap();
        let mut out = String::new();
        super::super::datetime::format_timestamp(t, false, &mut out);
        assert_eq!(out, "2024-03-05 14:07:00");
        assert!(to_timestamp("13:00 PM", "HH:MI AM").is_err());
        assert!(to_timestamp("25:00", "HH24:MI").is_err());
    }
}
