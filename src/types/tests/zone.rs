//! Time zones: the session zone in text I/O, casts and arithmetic, and PostgreSQL's
//! choices at daylight-saving transitions. Each test sets its thread's zone (a unit test
//! runs outside a connection's task).

use std::sync::Arc;

use crate::types::zone::{parse_setting, set_session_zone, zone_named, Zone};
use crate::types::{cast, decode_text, format_text, DataType, Value};

fn in_zone(name: &str) {
    set_session_zone(Arc::new(parse_setting(name).expect(name)));
}

fn text(ty: DataType, s: &str) -> String {
    format_text(&decode_text(&ty, s).expect(s))
}

#[test]
fn settings_name_zones_as_postgres_shows_them() {
    let shown = |v: &str| parse_setting(v).map(|z| z.name());
    assert_eq!(
        shown("america/new_york").as_deref(),
        Some("America/New_York")
    );
    assert_eq!(shown("UTC").as_deref(), Some("UTC"));
    assert_eq!(shown("-7").as_deref(), Some("<-07>+07"));
    assert_eq!(shown("5.5").as_deref(), Some("<+05:30>-05:30"));
    assert_eq!(shown("UTC+5").as_deref(), Some("UTC+5"));
    assert_eq!(shown("<+03>-3").as_deref(), Some("<+03>-3"));
    // A name SHOW printed reads back as the same zone.
    for v in ["-7", "5.5", "UTC+5", "<+03>-3", "Asia/Kolkata"] {
        let zone = parse_setting(v).unwrap();
        assert_eq!(parse_setting(&zone.name()), Some(zone), "{v}");
    }
    for bad in ["PST", "Europe/Nowhere", "", "garbage", "UT+5"] {
        assert_eq!(parse_setting(bad), None, "{bad}");
    }
}

#[test]
fn offsets_follow_the_zone_rules() {
    let ny = parse_setting("America/New_York").unwrap();
    let t = |s: &str| match decode_text(&DataType::TimestampTz, s).unwrap() {
        Value::TimestampTz(t) => t,
        v => panic!("{v:?}"),
    };
    assert_eq!(ny.offset_at(t("2024-07-01 12:00+00")), -4 * 3600);
    assert_eq!(ny.offset_at(t("2024-01-01 12:00+00")), -5 * 3600);
    assert_eq!(ny.abbrev_at(t("2024-07-01 12:00+00")), "EDT");
    // Local mean time before the zone's first rule, to the second.
    assert_eq!(
        ny.offset_at(t("1800-01-01 00:00+00")),
        -(4 * 3600 + 56 * 60 + 2)
    );
    let kolkata = parse_setting("Asia/Kolkata").unwrap();
    assert_eq!(kolkata.offset_at(t("2024-07-01 12:00+00")), 5 * 3600 + 1800);
}

#[test]
fn skipped_and_repeated_local_times_resolve_as_in_postgres() {
    in_zone("America/New_York");
    // 02:30 does not exist on 2018-03-11: read with the offset before (EST) = 03:30 EDT.
    assert_eq!(
        text(DataType::TimestampTz, "2018-03-11 02:30"),
        "2018-03-11 03:30:00-04"
    );
    // 01:30 occurs twice on 2018-11-04: the offset after (EST).
    assert_eq!(
        text(DataType::TimestampTz, "2018-11-04 01:30"),
        "2018-11-04 01:30:00-05"
    );
    assert_eq!(
        text(DataType::TimestampTz, "2024-07-01 12:00 Asia/Tokyo"),
        "2024-06-30 23:00:00-04"
    );
}

#[test]
fn text_and_casts_use_the_session_zone() {
    in_zone("Asia/Kolkata");
    assert_eq!(
        text(DataType::TimestampTz, "2024-07-01 00:00+00"),
        "2024-07-01 05:30:00+05:30"
    );
    let tz = decode_text(&DataType::TimestampTz, "2024-07-01 20:00+00").unwrap();
    assert_eq!(
        format_text(&cast(tz.clone(), &DataType::Timestamp).unwrap()),
        "2024-07-02 01:30:00"
    );
    assert_eq!(
        format_text(&cast(tz, &DataType::Date).unwrap()),
        "2024-07-02"
    );
    let date = decode_text(&DataType::Date, "2024-07-01").unwrap();
    assert_eq!(
        format_text(&cast(date, &DataType::TimestampTz).unwrap()),
        "2024-07-01 00:00:00+05:30"
    );
    in_zone("UTC");
    assert_eq!(
        text(DataType::TimestampTz, "2024-07-01 00:00+05:30"),
        "2024-06-30 18:30:00+00"
    );
}

#[test]
fn days_and_months_are_added_on_the_local_calendar() {
    in_zone("America/New_York");
    let tz = decode_text(&DataType::TimestampTz, "2018-11-04 00:30").unwrap();
    let plus = |iv: &str| {
        let iv = decode_text(&DataType::Interval, iv).unwrap();
        format_text(&crate::types::arith(crate::types::ArithOp::Add, &tz, &iv).unwrap())
    };
    assert_eq!(plus("1 hour"), "2018-11-04 01:30:00-04");
    assert_eq!(plus("1 day"), "2018-11-05 00:30:00-05");
    assert_eq!(plus("24 hours"), "2018-11-04 23:30:00-05");
}

#[test]
fn zones_named_by_at_time_zone() {
    assert_eq!(zone_named("EST").unwrap().offset_at(0), -5 * 3600);
    assert_eq!(zone_named("-3").unwrap().offset_at(0), 3 * 3600);
    assert_eq!(zone_named("UTC+5").unwrap().offset_at(0), -5 * 3600);
    assert!(matches!(
        zone_named("europe/paris").unwrap(),
        Zone::Named(_)
    ));
    assert_eq!(zone_named("Nowhere/Land").unwrap_err().code.0, "22023");
}
