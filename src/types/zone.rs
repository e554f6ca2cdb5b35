//! Time zones: the session's `TimeZone`, and the zones `AT TIME ZONE` and literals name.
//!
//! A `timestamptz` is an instant, microseconds since 2000-01-01 UTC, and is stored,
//! compared, indexed and sent in binary as that. A zone matters only where the instant
//! meets a calendar: its text (`2024-07-01 08:00:00-04`), a literal without an offset,
//! casts to and from `timestamp` and `date`, `extract`, `date_trunc`, `to_char`, and
//! adding days and months. Each of those asks the session's zone ([`session_zone`]).
//!
//! # Invariants
//!
//! - **One zone per session, changed only by the session.** The zone lives in a
//!   task-local of the connection's task ([`session_scope`]): the session sets it
//!   whenever its `TimeZone` setting changes (SET, RESET, a rollback, SET LOCAL ending),
//!   so every statement and every row it sends sees the setting in force. Code outside a
//!   connection (recovery, background work, unit tests) sees UTC, or what its thread
//!   set.
//! - **Local times resolve as PostgreSQL's do.** A local time that a transition skips
//!   (spring forward) takes the offset in force before it, so `02:30` reads as `03:30`
//!   summer time; one that occurs twice (fall back) takes the offset in force after it,
//!   standard time. [`Zone::offset_of_local`] chooses.
//! - **The zone database is compiled in** (the IANA database of the `chrono-tz` crate),
//!   so results do not depend on the machine's `/usr/share/zoneinfo`. Past the last
//!   transition it holds, a zone keeps its last offset.

use std::cell::RefCell;
use std::sync::{Arc, LazyLock};

use chrono::{Offset, TimeZone};
use chrono_tz::{OffsetName, Tz};

use super::datetime::USECS_PER_DAY;
use crate::err;
use crate::error::Result;

/// Seconds from 1970-01-01 to 2000-01-01.
const UNIX_TO_PG_SECS: i64 = 946_684_800;

/// A time zone: a fixed offset, or a zone of the IANA database with its rules.
#[derive(Clone, Debug, PartialEq)]
pub enum Zone {
    /// A fixed offset east of UTC, as `SET TIME ZONE -7` or `'UTC+5'` give, with the
    /// name SHOW prints and the abbreviation `to_char`'s TZ prints.
    Fixed {
        offset_secs: i32,
        name: String,
        abbrev: String,
    },
    Named(Tz),
}

static UTC: LazyLock<Arc<Zone>> = LazyLock::new(|| Arc::new(Zone::utc()));

tokio::task_local! {
    /// The zone of the session whose connection this task serves.
    static SESSION_ZONE: RefCell<Arc<Zone>>;
}

thread_local! {
    /// The zone of a session run outside a connection's task (tests, tools).
    static THREAD_ZONE: RefCell<Option<Arc<Zone>>> = const { RefCell::new(None) };
}

/// Run a connection's future with a session zone of its own, UTC until the session
/// sets another.
pub fn session_scope<F: std::future::Future>(
    future: F,
) -> tokio::task::futures::TaskLocalFuture<RefCell<Arc<Zone>>, F> {
    SESSION_ZONE.scope(RefCell::new(UTC.clone()), future)
}

/// The current session's zone (UTC outside a session).
pub fn session_zone() -> Arc<Zone> {
    SESSION_ZONE
        .try_with(|z| z.borrow().clone())
        .ok()
        .or_else(|| THREAD_ZONE.with(|z| z.borrow().clone()))
        .unwrap_or_else(|| UTC.clone())
}

/// Make `zone` the current session's zone.
pub fn set_session_zone(zone: Arc<Zone>) {
    if let Err(zone) = SESSION_ZONE
        .try_with(|z| *z.borrow_mut() = zone.clone())
        .map_err(|_| zone)
    {
        THREAD_ZONE.with(|z| *z.borrow_mut() = Some(zone));
    }
}

impl Zone {
    pub fn utc() -> Zone {
        Zone::Fixed {
            offset_secs: 0,
            name: "UTC".into(),
            abbrev: "UTC".into(),
        }
    }

    /// A fixed zone `hours_east` hours east of UTC, named as PostgreSQL names it
    /// (`SET TIME ZONE -7` shows as `<-07>+07`).
    pub fn hours_east(offset_secs: i32) -> Zone {
        let abbrev = numeric_abbrev(offset_secs, true);
        let posix = numeric_abbrev(-offset_secs, true);
        Zone::Fixed {
            offset_secs,
            name: format!("<{abbrev}>{posix}"),
            abbrev,
        }
    }

    /// The name SHOW TimeZone prints.
    pub fn name(&self) -> String {
        match self {
            Zone::Fixed { name, .. } => name.clone(),
            Zone::Named(tz) => tz.name().to_string(),
        }
    }

    fn is_utc(&self) -> bool {
        matches!(self, Zone::Fixed { offset_secs: 0, .. })
    }

    /// The offset east of UTC in force at the instant `t_us`, in seconds.
    pub fn offset_at(&self, t_us: i64) -> i32 {
        match self {
            Zone::Fixed { offset_secs, .. } => *offset_secs,
            Zone::Named(tz) => tz
                .offset_from_utc_datetime(&naive_utc(t_us))
                .fix()
                .local_minus_utc(),
        }
    }

    /// The zone's abbreviation at the instant `t_us` (`EDT`; `+03` where the zone has
    /// no letters for it), as `to_char`'s TZ prints it.
    pub fn abbrev_at(&self, t_us: i64) -> String {
        match self {
            Zone::Fixed { abbrev, .. } => abbrev.clone(),
            Zone::Named(tz) => {
                let offset = tz.offset_from_utc_datetime(&naive_utc(t_us));
                match offset.abbreviation() {
                    Some(a) => a.to_string(),
                    None => numeric_abbrev(offset.fix().local_minus_utc(), false),
                }
            }
        }
    }

    /// Whether daylight-saving time is in force at the instant `t_us`.
    pub fn is_dst_at(&self, t_us: i64) -> bool {
        use chrono_tz::OffsetComponents;
        match self {
            Zone::Fixed { .. } => false,
            Zone::Named(tz) => !tz
                .offset_from_utc_datetime(&naive_utc(t_us))
                .dst_offset()
                .is_zero(),
        }
    }

    /// The local wall-clock time of the instant `t_us`, as microseconds since
    /// 2000-01-01 on the local calendar; infinities stay infinite.
    pub fn local_of(&self, t_us: i64) -> i64 {
        if t_us == i64::MIN || t_us == i64::MAX || self.is_utc() {
            return t_us;
        }
        t_us.saturating_add(self.offset_at(t_us) as i64 * 1_000_000)
    }

    /// The offset east of UTC, in seconds, that the local time `local_us` has: PostgreSQL's
    /// choice where a transition skips the time (the offset before it) or repeats it (the
    /// offset after it).
    pub fn offset_of_local(&self, local_us: i64) -> i32 {
        let Zone::Named(_) = self else {
            return self.offset_at(local_us);
        };
        let before = self.offset_at(local_us.saturating_sub(USECS_PER_DAY));
        let after = self.offset_at(local_us.saturating_add(USECS_PER_DAY));
        let fits = |offset: i32| {
            self.offset_at(local_us.saturating_sub(offset as i64 * 1_000_000)) == offset
        };
        if before == after && fits(before) {
            return before;
        }
        match (fits(before), fits(after)) {
            (true, false) => before,
            (false, true) => after,
            // Skipped (the offset grew): read with the offset before; repeated: after.
            _ if before < after => before,
            _ => after,
        }
    }

    /// The instant of the local time `local_us`; infinities stay infinite.
    pub fn utc_of_local(&self, local_us: i64) -> i64 {
        if local_us == i64::MIN || local_us == i64::MAX || self.is_utc() {
            return local_us;
        }
        local_us.saturating_sub(self.offset_of_local(local_us) as i64 * 1_000_000)
    }
}

/// `+03`, `-04:30` (with `colon`) or `-0430`: an offset east of UTC as an abbreviation.
fn numeric_abbrev(offset_secs: i32, colon: bool) -> String {
    let sign = if offset_secs < 0 { '-' } else { '+' };
    let abs = offset_secs.unsigned_abs();
    let (h, m, s) = (abs / 3600, abs / 60 % 60, abs % 60);
    let sep = if colon { ":" } else { "" };
    match (m, s) {
        (0, 0) => format!("{sign}{h:02}"),
        (_, 0) => format!("{sign}{h:02}{sep}{m:02}"),
        _ => format!("{sign}{h:02}{sep}{m:02}{sep}{s:02}"),
    }
}

/// The instant `t_us` as a chrono date-time, clamped to chrono's range (a zone's offset
/// there is its first or last anyway).
fn naive_utc(t_us: i64) -> chrono::NaiveDateTime {
    const MIN_SECS: i64 = -8_000_000_000_000;
    const MAX_SECS: i64 = 8_000_000_000_000;
    let secs = t_us.div_euclid(1_000_000).saturating_add(UNIX_TO_PG_SECS);
    chrono::DateTime::from_timestamp(secs.clamp(MIN_SECS, MAX_SECS), 0)
        .unwrap_or_default()
        .naive_utc()
}

/// A zone of the IANA database, its name matched without regard to case as PostgreSQL
/// matches it.
pub fn named_zone(name: &str) -> Option<Tz> {
    if let Ok(tz) = name.parse::<Tz>() {
        return Some(tz);
    }
    chrono_tz::TZ_VARIANTS
        .iter()
        .find(|tz| tz.name().eq_ignore_ascii_case(name))
        .copied()
}

/// The zone a `TimeZone` setting names (PostgreSQL's `check_timezone`): a number is
/// hours east of UTC; otherwise a zone of the database, or a POSIX offset such as
/// `UTC+5`, `<+03>-3` or `+05:30`, whose sign counts west of UTC. None if it is neither.
pub fn parse_setting(value: &str) -> Option<Zone> {
    let v = value.trim();
    if let Ok(hours) = v.parse::<f64>() {
        if hours.is_finite() && hours.abs() < 168.0 && !v.is_empty() {
            return Some(Zone::hours_east((hours * 3600.0).round() as i32));
        }
        return None;
    }
    if let Some(tz) = named_zone(v) {
        return Some(Zone::Named(tz));
    }
    posix_fixed(v).map(|(offset_secs, abbrev)| Zone::Fixed {
        offset_secs,
        name: v.to_string(),
        abbrev,
    })
}

/// A POSIX zone of a fixed offset: an optional name (letters, or anything in `<>`) and
/// an offset `[+-]hh[:mm[:ss]]` west of UTC. `(offset east, abbreviation)`.
fn posix_fixed(v: &str) -> Option<(i32, String)> {
    let (abbrev, rest) = if let Some(quoted) = v.strip_prefix('<') {
        let end = quoted.find('>')?;
        (quoted[..end].to_string(), &quoted[end + 1..])
    } else {
        let letters = v.bytes().take_while(u8::is_ascii_alphabetic).count();
        if letters != 0 && letters < 3 {
            return None;
        }
        (v[..letters].to_string(), &v[letters..])
    };
    let (sign, digits) = match rest.as_bytes().first() {
        Some(b'+') => (1, &rest[1..]),
        Some(b'-') => (-1, &rest[1..]),
        _ => (1, rest),
    };
    let parts = digits
        .split(':')
        .map(|p| {
            (!p.is_empty() && p.len() <= 2 && p.bytes().all(|b| b.is_ascii_digit()))
                .then(|| p.parse::<i32>().ok())
                .flatten()
        })
        .collect::<Option<Vec<i32>>>()?;
    let (h, m, s) = match parts.as_slice() {
        [h] => (*h, 0, 0),
        [h, m] => (*h, *m, 0),
        [h, m, s] => (*h, *m, *s),
        _ => return None,
    };
    if h > 24 || m > 59 || s > 59 {
        return None;
    }
    let east = -sign * (h * 3600 + m * 60 + s);
    let abbrev = if abbrev.is_empty() {
        numeric_abbrev(east, false)
    } else {
        abbrev
    };
    Some((east, abbrev))
}

/// The zone `AT TIME ZONE`, `timezone()` or a literal names (PostgreSQL's
/// `DecodeTimezoneName`): a zone abbreviation (a fixed offset), a zone of the database,
/// or a POSIX offset (`'-3'` is three hours east, as in PostgreSQL).
pub fn zone_named(name: &str) -> Result<Zone> {
    let trimmed = name.trim();
    let lower = trimmed.to_ascii_lowercase();
    if let Some(offset_secs) = super::datetime::abbreviation_offset_secs(&lower) {
        return Ok(Zone::Fixed {
            offset_secs: offset_secs as i32,
            name: trimmed.to_string(),
            abbrev: trimmed.to_ascii_uppercase(),
        });
    }
    if let Some(tz) = named_zone(trimmed) {
        return Ok(Zone::Named(tz));
    }
    let posix = lower
        .strip_prefix("utc")
        .or_else(|| lower.strip_prefix("gmt"))
        .unwrap_or(&lower);
    match posix_fixed(posix) {
        Some((offset_secs, abbrev))
            if posix
                .bytes()
                .next()
                .is_some_and(|b| !b.is_ascii_alphabetic()) =>
        {
            Ok(Zone::Fixed {
                offset_secs,
                name: trimmed.to_string(),
                abbrev,
            })
        }
        _ => Err(err!(
            INVALID_PARAMETER_VALUE,
            "time zone \"{}\" not recognized",
            name
        )),
    }
}
