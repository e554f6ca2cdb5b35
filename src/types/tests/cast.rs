use super::*;
use crate::types::{cast, cast_assign, cast_assign_from, cast_from};

fn c(v: Value, to: DataType) -> Value {
    cast(v.clone(), &to).unwrap_or_else(|e| panic!("{v:?}::{}: {e}", to.name()))
}

fn ct(v: Value, to: DataType) -> String {
    text_of(&c(v, to))
}

fn fails(v: Value, to: DataType) -> (String, String) {
    let e = cast(v, &to).expect_err("cast should fail");
    (e.code.0.to_string(), e.message)
}

fn text(s: &str) -> Value {
    Value::Text(s.to_string())
}

#[test]
fn null_casts_to_null() {
    for ty in ALL_TYPES {
        assert!(cast(Value::Null, &ty).unwrap().is_null());
        assert!(cast_assign(Value::Null, &ty).unwrap().is_null());
    }
}

#[test]
fn integer_casts() {
    assert!(matches!(c(Value::Int8(5), DataType::Int2), Value::Int2(5)));
    assert!(matches!(
        c(Value::Int2(-5), DataType::Int8),
        Value::Int8(-5)
    ));
    assert_eq!(
        fails(Value::Int8(1 << 40), DataType::Int4),
        ("22003".into(), "integer out of range".into())
    );
    assert_eq!(
        fails(Value::Int4(40000), DataType::Int2),
        ("22003".into(), "smallint out of range".into())
    );
    assert!(matches!(c(Value::Int4(3), DataType::Float4), Value::Float4(f) if f == 3.0));
    assert!(
        matches!(c(Value::Int8(i64::MAX), DataType::Float8), Value::Float8(f) if f == 9.223372036854776e18)
    );
    assert_eq!(ct(Value::Int4(7), DataType::Numeric(None)), "7");
    assert_eq!(ct(Value::Int4(7), DataType::Numeric(Some((5, 2)))), "7.00");
    assert_eq!(
        fails(Value::Int4(1000), DataType::Numeric(Some((4, 2)))).1,
        "numeric field overflow"
    );
}

#[test]
fn float_to_integer_rounds_half_even() {
    let i4 = |f: f64| match c(Value::Float8(f), DataType::Int4) {
        Value::Int4(i) => i,
        other => panic!("{other:?}"),
    };
    assert_eq!(i4(2.5), 2);
    assert_eq!(i4(3.5), 4);
    assert_eq!(i4(-2.5), -2);
    assert_eq!(i4(2.4999), 2);
    assert_eq!(i4(-2147483648.4), i32::MIN);
    assert!(matches!(
        c(Value::Float4(1.5), DataType::Int2),
        Value::Int2(2)
    ));
    assert_eq!(
        fails(Value::Float8(2147483647.5), DataType::Int4).1,
        "integer out of range"
    );
    assert_eq!(
        fails(Value::Float8(f64::NAN), DataType::Int8).1,
        "bigint out of range"
    );
    assert_eq!(
        fails(Value::Float8(f64::INFINITY), DataType::Int8).0,
        "22003"
    );
    assert_eq!(
        fails(Value::Float4(32767.5), DataType::Int2).1,
        "smallint out of range"
    );
    assert!(matches!(
        c(Value::Float8(-9223372036854775808.0), DataType::Int8),
        Value::Int8(i64::MIN)
    ));
    assert_eq!(
        fails(Value::Float8(9223372036854775808.0), DataType::Int8).1,
        "bigint out of range"
    );
}

#[test]
fn numeric_casts() {
    let n = |s: &str| Value::Numeric(dec(s));
    assert!(matches!(c(n("2.5"), DataType::Int4), Value::Int4(3)));
    assert!(matches!(c(n("-2.5"), DataType::Int4), Value::Int4(-3)));
    assert!(matches!(c(n("2.49"), DataType::Int8), Value::Int8(2)));
    assert_eq!(
        fails(n("2147483647.5"), DataType::Int4).1,
        "integer out of range"
    );
    assert_eq!(
        fails(n("32767.5"), DataType::Int2).1,
        "smallint out of range"
    );
    assert_eq!(
        fails(n("9223372036854775808"), DataType::Int8).1,
        "bigint out of range"
    );
    assert!(matches!(c(n("0.1"), DataType::Float8), Value::Float8(f) if f == 0.1));
    assert!(matches!(c(n("0.1"), DataType::Float4), Value::Float4(f) if f == 0.1f32));
    assert_eq!(ct(n("12.345"), DataType::Numeric(Some((4, 2)))), "12.35");
    assert_eq!(ct(n("12.345"), DataType::Numeric(None)), "12.345");
    assert_eq!(ct(Value::Float8(1.5), DataType::Numeric(None)), "1.5");
    assert_eq!(
        ct(
            Value::Float8(1.234_567_890_123_456_7),
            DataType::Numeric(None)
        ),
        "1.23456789012346"
    );
    assert_eq!(ct(Value::Float4(0.1), DataType::Numeric(None)), "0.1");
    assert_eq!(
        ct(Value::Float8(1e20), DataType::Numeric(None)),
        "100000000000000000000"
    );
    assert_eq!(
        ct(Value::Float8(2.675), DataType::Numeric(Some((5, 2)))),
        "2.68"
    );
    assert_eq!(
        fails(Value::Float8(f64::NAN), DataType::Numeric(None)).0,
        "0A000"
    );
}

#[test]
fn float_width_casts() {
    assert!(
        matches!(c(Value::Float4(0.1), DataType::Float8), Value::Float8(f) if f == 0.10000000149011612)
    );
    assert_eq!(
        ct(Value::Float4(0.1), DataType::Float8),
        "0.10000000149011612"
    );
    assert!(matches!(c(Value::Float8(0.1), DataType::Float4), Value::Float4(f) if f == 0.1f32));
    assert!(
        matches!(c(Value::Float8(f64::INFINITY), DataType::Float4), Value::Float4(f) if f.is_infinite())
    );
    assert_eq!(
        fails(Value::Float8(1e39), DataType::Float4),
        ("22003".into(), "value out of range: overflow".into())
    );
    assert_eq!(
        fails(Value::Float8(1e-50), DataType::Float4),
        ("22003".into(), "value out of range: underflow".into())
    );
}

#[test]
fn bool_casts() {
    assert!(matches!(
        c(Value::Int4(7), DataType::Bool),
        Value::Bool(true)
    ));
    assert!(matches!(
        c(Value::Int4(0), DataType::Bool),
        Value::Bool(false)
    ));
    assert!(matches!(
        c(Value::Bool(true), DataType::Int4),
        Value::Int4(1)
    ));
    assert_eq!(
        fails(Value::Int8(1), DataType::Bool),
        ("42846".into(), "cannot cast type bigint to boolean".into())
    );
    assert_eq!(
        fails(Value::Bool(true), DataType::Int8).1,
        "cannot cast type boolean to bigint"
    );
    assert_eq!(
        fails(Value::Bool(true), DataType::Float8).1,
        "cannot cast type boolean to double precision"
    );
    assert_eq!(ct(Value::Bool(true), DataType::Text), "true");
    assert_eq!(ct(Value::Bool(false), DataType::Varchar(None)), "false");
    assert_eq!(ct(Value::Bool(true), DataType::Char(3)), "tru");
    assert_eq!(ct(Value::Bool(true), DataType::Char(1)), "t");
    assert!(matches!(
        c(text(" YES "), DataType::Bool),
        Value::Bool(true)
    ));
    // bool <-> int4 is explicit-only
    let e = cast_assign(Value::Bool(true), &DataType::Int4).unwrap_err();
    assert_eq!(e.code.0, "42804");
    assert_eq!(code(cast_assign(Value::Int4(1), &DataType::Bool)), "42804");
}

#[test]
fn string_casts_and_typmods() {
    assert_eq!(ct(Value::Int4(12345), DataType::Varchar(Some(3))), "123");
    let e = cast_assign(Value::Int4(12345), &DataType::Varchar(Some(3))).unwrap_err();
    assert_eq!(
        (e.code.0, e.message.as_str()),
        ("22001", "value too long for type character varying(3)")
    );
    assert_eq!(ct(text("abcd"), DataType::Varchar(Some(2))), "ab");
    assert_eq!(ct(text("abcd"), DataType::Char(2)), "ab");
    assert_eq!(ct(text("ab"), DataType::Char(4)), "ab  ");
    let assign = |s: &str, ty: DataType| cast_assign(text(s), &ty).map(|v| text_of(&v));
    assert_eq!(assign("abc  ", DataType::Varchar(Some(3))).unwrap(), "abc");
    assert_eq!(assign("ab", DataType::Char(3)).unwrap(), "ab ");
    assert_eq!(assign("abc   ", DataType::Char(3)).unwrap(), "abc");
    assert_eq!(
        assign("abcd", DataType::Char(3)).unwrap_err().message,
        "value too long for type character(3)"
    );
    assert_eq!(
        assign("ab d", DataType::Varchar(Some(3)))
            .unwrap_err()
            .code
            .0,
        "22001"
    );
    assert_eq!(
        assign("\u{e9}\u{e9}\u{e9}", DataType::Varchar(Some(3))).unwrap(),
        "\u{e9}\u{e9}\u{e9}"
    );
    assert_eq!(ct(Value::Float8(1e15), DataType::Text), "1e+15");
    assert_eq!(ct(Value::Numeric(dec("1.50")), DataType::Text), "1.50");
    assert_eq!(ct(Value::Date(0), DataType::Text), "2000-01-01");
    assert_eq!(
        ct(Value::TimestampTz(0), DataType::Text),
        "2000-01-01 00:00:00+00"
    );
    assert_eq!(
        ct(Value::Bytea(vec![0x61, 0x62]), DataType::Text),
        "\\x6162"
    );
    assert!(matches!(c(text("\\x6162"), DataType::Bytea), Value::Bytea(b) if b == b"ab"));
    assert!(matches!(c(text("abc"), DataType::Bytea), Value::Bytea(b) if b == b"abc"));
    assert!(matches!(c(text("42"), DataType::Int4), Value::Int4(42)));
    assert_eq!(
        fails(text("4x"), DataType::Int4).1,
        "invalid input syntax for type integer: \"4x\""
    );
    assert!(matches!(
        cast_assign(text(" 42 "), &DataType::Int8),
        Ok(Value::Int8(42))
    ));
    assert_eq!(
        cast_assign(text("1.234"), &DataType::Numeric(Some((3, 2))))
            .map(|v| text_of(&v))
            .unwrap(),
        "1.23"
    );
}

#[test]
fn bpchar_source_drops_trailing_blanks() {
    let padded = text("a  ");
    let t = cast_from(padded.clone(), &DataType::Char(3), &DataType::Text).unwrap();
    assert_eq!(text_of(&t), "a");
    assert_eq!(
        text_of(&cast(padded.clone(), &DataType::Text).unwrap()),
        "a  "
    );
    let v = cast_from(
        padded.clone(),
        &DataType::Char(3),
        &DataType::Varchar(Some(1)),
    )
    .unwrap();
    assert_eq!(text_of(&v), "a");
    let widened = cast_assign_from(padded.clone(), &DataType::Char(3), &DataType::Char(5)).unwrap();
    assert_eq!(text_of(&widened), "a    ");
    let narrowed = cast_assign_from(text("ab "), &DataType::Char(3), &DataType::Char(2)).unwrap();
    assert_eq!(text_of(&narrowed), "ab");
    assert!(matches!(
        cast_from(text("7  "), &DataType::Char(3), &DataType::Int4),
        Ok(Value::Int4(7))
    ));
}

#[test]
fn datetime_casts() {
    let day = 86_400_000_000i64;
    assert!(matches!(c(Value::Date(1), DataType::Timestamp), Value::Timestamp(t) if t == day));
    assert!(
        matches!(c(Value::Date(-1), DataType::TimestampTz), Value::TimestampTz(t) if t == -day)
    );
    assert!(matches!(
        c(Value::Date(i32::MAX), DataType::Timestamp),
        Value::Timestamp(i64::MAX)
    ));
    assert!(matches!(
        c(Value::Date(i32::MIN), DataType::TimestampTz),
        Value::TimestampTz(i64::MIN)
    ));
    assert_eq!(
        fails(Value::Date(106_751_983), DataType::Timestamp),
        ("22008".into(), "date out of range for timestamp".into())
    );
    assert!(matches!(
        c(Value::Timestamp(-1), DataType::Date),
        Value::Date(-1)
    ));
    assert!(matches!(
        c(Value::Timestamp(day - 1), DataType::Date),
        Value::Date(0)
    ));
    assert!(matches!(
        c(Value::TimestampTz(i64::MAX), DataType::Date),
        Value::Date(i32::MAX)
    ));
    assert!(matches!(
        c(Value::Timestamp(5), DataType::TimestampTz),
        Value::TimestampTz(5)
    ));
    assert!(matches!(
        c(Value::TimestampTz(5), DataType::Timestamp),
        Value::Timestamp(5)
    ));
    assert!(matches!(
        cast_assign(Value::Timestamp(day * 3 + 5), &DataType::Date),
        Ok(Value::Date(3))
    ));
    assert!(matches!(
        c(text("2024-01-31 12:00"), DataType::Date),
        Value::Date(_)
    ));
    assert_eq!(
        ct(Value::Date(0), DataType::TimestampTz),
        "2000-01-01 00:00:00+00"
    );
}

#[test]
fn impossible_casts() {
    let cases = [
        (
            Value::Bytea(vec![1]),
            DataType::Int4,
            "cannot cast type bytea to integer",
        ),
        (
            Value::Int4(1),
            DataType::Bytea,
            "cannot cast type integer to bytea",
        ),
        (
            Value::Date(1),
            DataType::Int4,
            "cannot cast type date to integer",
        ),
        (
            Value::Int8(1),
            DataType::Date,
            "cannot cast type bigint to date",
        ),
        (
            Value::Numeric(dec("1")),
            DataType::Bool,
            "cannot cast type numeric to boolean",
        ),
        (
            Value::Bool(true),
            DataType::Date,
            "cannot cast type boolean to date",
        ),
        (
            Value::Timestamp(0),
            DataType::Float8,
            "cannot cast type timestamp without time zone to double precision",
        ),
        (
            Value::Float8(1.0),
            DataType::Varchar(None).without_typmod(),
            "",
        ),
        (Value::Int4(1), DataType::Numeric(Some((3, 0))), ""),
        (
            Value::Bool(false),
            DataType::Bytea,
            "cannot cast type boolean to bytea",
        ),
        (
            Value::Date(0),
            DataType::Numeric(Some((5, 1))),
            "cannot cast type date to numeric",
        ),
    ];
    for (v, ty, msg) in cases {
        if msg.is_empty() {
            assert!(cast(v, &ty).is_ok());
        } else {
            assert_eq!(fails(v, ty), ("42846".into(), msg.into()));
        }
    }
}

#[test]
fn text_round_trip_through_casts() {
    // Every value survives value -> text -> value through casts (the I/O conversion path).
    let mut r = rng(11);
    for ty in ALL_TYPES {
        if matches!(ty, DataType::Bool | DataType::Float4 | DataType::Float8) {
            continue; // bool spells out "true"; NaN payloads are not kept
        }
        for _ in 0..100 {
            let v = random_value(&mut r, &ty);
            let s = cast(v.clone(), &DataType::Text).unwrap();
            let back = cast(s, &ty).unwrap();
            assert!(identical(&v, &back), "{v:?} -> {back:?}");
        }
    }
}
