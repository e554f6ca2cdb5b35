use super::*;
use crate::types::{decode_binary, decode_text, encode_binary};

fn parse(ty: DataType, s: &str) -> Value {
    decode_text(&ty, s).unwrap_or_else(|e| panic!("{s:?} as {}: {e}", ty.name()))
}

fn round(ty: DataType, s: &str) -> String {
    text_of(&parse(ty, s))
}

fn error(ty: DataType, s: &str) -> (String, String) {
    let e = decode_text(&ty, s).expect_err(s);
    (e.code.0.to_string(), e.message)
}

fn binary(v: &Value) -> Vec<u8> {
    let mut out = Vec::new();
    encode_binary(v, &mut out);
    out
}

#[test]
fn bool_text() {
    for t in [
        "t", "true", "TRUE", " yes ", "y", "on", "1", "tr", "Tru", "\ttrue\n",
    ] {
        assert!(
            matches!(parse(DataType::Bool, t), Value::Bool(true)),
            "{t:?}"
        );
    }
    for f in ["f", "false", "FaLsE", "no", "n", "off", "of", "0", " fal "] {
        assert!(
            matches!(parse(DataType::Bool, f), Value::Bool(false)),
            "{f:?}"
        );
    }
    for bad in ["", "o", "x", "truex", "2", "yess", "10", "t r"] {
        let (c, m) = error(DataType::Bool, bad);
        assert_eq!(c, "22P02");
        assert_eq!(
            m,
            format!("invalid input syntax for type boolean: \"{bad}\"")
        );
    }
    assert_eq!(text_of(&Value::Bool(true)), "t");
    assert_eq!(text_of(&Value::Bool(false)), "f");
}

#[test]
fn integer_text() {
    assert!(matches!(parse(DataType::Int4, "  1  "), Value::Int4(1)));
    assert!(matches!(parse(DataType::Int2, "+1"), Value::Int2(1)));
    assert!(matches!(parse(DataType::Int8, "-0"), Value::Int8(0)));
    assert!(matches!(
        parse(DataType::Int2, "-32768"),
        Value::Int2(i16::MIN)
    ));
    assert!(matches!(
        parse(DataType::Int4, "2147483647"),
        Value::Int4(i32::MAX)
    ));
    assert!(matches!(
        parse(DataType::Int8, "-9223372036854775808"),
        Value::Int8(i64::MIN)
    ));
    assert!(matches!(parse(DataType::Int8, "007"), Value::Int8(7)));
    for bad in [
        "abc", "", " ", "1 2", "1.5", "1e3", "--1", "+", "0x10", "1_000",
    ] {
        assert_eq!(
            error(DataType::Int4, bad),
            (
                "22P02".into(),
                format!("invalid input syntax for type integer: \"{bad}\"")
            )
        );
    }
    assert_eq!(
        error(DataType::Int2, "x").1,
        "invalid input syntax for type smallint: \"x\""
    );
    assert_eq!(
        error(DataType::Int8, "x").1,
        "invalid input syntax for type bigint: \"x\""
    );
    let range = [
        (DataType::Int4, "99999999999", "integer"),
        (DataType::Int4, "99999999999x", "integer"),
        (DataType::Int4, "2147483648", "integer"),
        (DataType::Int4, "-2147483649", "integer"),
        (DataType::Int2, "32768", "smallint"),
        (DataType::Int8, "9223372036854775808", "bigint"),
    ];
    for (ty, s, name) in range {
        assert_eq!(
            error(ty, s),
            (
                "22003".into(),
                format!("value \"{s}\" is out of range for type {name}")
            )
        );
    }
    assert_eq!(text_of(&Value::Int2(-32768)), "-32768");
    assert_eq!(text_of(&Value::Int8(i64::MAX)), "9223372036854775807");
}

#[test]
fn float_text() {
    assert_eq!(round(DataType::Float8, "1e15"), "1e+15");
    assert_eq!(round(DataType::Float8, "1e16"), "1e+16");
    assert_eq!(round(DataType::Float8, "0.0001"), "0.0001");
    assert_eq!(round(DataType::Float8, "1e-5"), "1e-05");
    assert_eq!(round(DataType::Float8, "1.5"), "1.5");
    assert_eq!(round(DataType::Float8, "100"), "100");
    assert_eq!(round(DataType::Float8, " nan "), "NaN");
    assert_eq!(round(DataType::Float8, "-Infinity"), "-Infinity");
    assert_eq!(round(DataType::Float8, "-0"), "-0");
    assert_eq!(round(DataType::Float4, "1e6"), "1e+06");
    assert_eq!(round(DataType::Float4, "0.1"), "0.1");
    assert_eq!(round(DataType::Float4, "inf"), "Infinity");
    assert_eq!(error(DataType::Float8, "1e400").0, "22003");
    assert_eq!(
        error(DataType::Float4, "abc").1,
        "invalid input syntax for type real: \"abc\""
    );
}

#[test]
fn numeric_text() {
    assert_eq!(round(DataType::Numeric(None), "1.50"), "1.50");
    assert_eq!(round(DataType::Numeric(None), " -1.5e3 "), "-1500");
    assert_eq!(round(DataType::Numeric(None), "0.000"), "0.000");
    assert_eq!(round(DataType::Numeric(Some((5, 2))), "1.005"), "1.01");
    assert_eq!(round(DataType::Numeric(Some((5, 2))), "-1.005"), "-1.01");
    assert_eq!(round(DataType::Numeric(Some((5, 2))), "7"), "7.00");
    assert_eq!(round(DataType::Numeric(Some((3, 0))), "999.4"), "999");
    let e = decode_text(&DataType::Numeric(Some((5, 2))), "1000").unwrap_err();
    assert_eq!(
        (e.code.0, e.message.as_str()),
        ("22003", "numeric field overflow")
    );
    assert_eq!(
        e.detail.as_deref(),
        Some("A field with precision 5, scale 2 must round to an absolute value less than 10^3.")
    );
    assert_eq!(error(DataType::Numeric(None), "NaN").0, "0A000");
    assert_eq!(error(DataType::Numeric(None), "1e40").0, "22003");
    assert_eq!(
        error(DataType::Numeric(None), "1,5"),
        (
            "22P02".into(),
            "invalid input syntax for type numeric: \"1,5\"".into()
        )
    );
    assert_eq!(text_of(&Value::Numeric(dec("-0.0"))), "0.0");
}

#[test]
fn string_text_and_typmods() {
    assert_eq!(round(DataType::Text, " a b "), " a b ");
    assert_eq!(round(DataType::Unknown, "x"), "x");
    assert_eq!(round(DataType::Char(4), "ab"), "ab  ");
    assert_eq!(round(DataType::Char(2), "ab   "), "ab");
    assert_eq!(round(DataType::Char(3), "\u{e9}\u{e9}"), "\u{e9}\u{e9} ");
    assert_eq!(round(DataType::Varchar(Some(3)), "abc  "), "abc");
    assert_eq!(
        round(DataType::Varchar(Some(3)), "\u{e9}\u{e9}\u{e9}"),
        "\u{e9}\u{e9}\u{e9}"
    );
    assert_eq!(round(DataType::Varchar(Some(3)), "a"), "a");
    assert_eq!(round(DataType::Varchar(None), "abcdef"), "abcdef");
    assert_eq!(
        error(DataType::Varchar(Some(3)), "abcd"),
        (
            "22001".into(),
            "value too long for type character varying(3)".into()
        )
    );
    assert_eq!(
        error(DataType::Char(2), "abc"),
        (
            "22001".into(),
            "value too long for type character(2)".into()
        )
    );
    assert_eq!(
        error(DataType::Varchar(Some(2)), "a\u{e9}\u{e9}").0,
        "22001"
    );
}

#[test]
fn bytea_text() {
    let b = |s: &str| match parse(DataType::Bytea, s) {
        Value::Bytea(b) => b,
        other => panic!("{other:?}"),
    };
    assert_eq!(b("\\x0A0b"), vec![0x0a, 0x0b]);
    assert_eq!(b("\\x 0a 0b\n"), vec![0x0a, 0x0b]);
    assert_eq!(b("\\x"), Vec::<u8>::new());
    assert_eq!(b("a\\\\b\\001"), vec![b'a', b'\\', b'b', 1]);
    assert_eq!(b("\\377\\000x"), vec![0xFF, 0, b'x']);
    assert_eq!(b("abc"), b"abc".to_vec());
    assert_eq!(
        error(DataType::Bytea, "\\x0g"),
        ("22023".into(), "invalid hexadecimal digit: \"g\"".into())
    );
    assert_eq!(
        error(DataType::Bytea, "\\x0\u{e9}").1,
        "invalid hexadecimal digit: \"\u{e9}\""
    );
    assert_eq!(
        error(DataType::Bytea, "\\x0"),
        (
            "22023".into(),
            "invalid hexadecimal data: odd number of digits".into()
        )
    );
    assert_eq!(error(DataType::Bytea, "\\x0 a").0, "22023");
    assert_eq!(
        error(DataType::Bytea, "a\\b"),
        ("22P02".into(), "invalid input syntax for type bytea".into())
    );
    assert_eq!(error(DataType::Bytea, "\\400").0, "22P02");
    assert_eq!(error(DataType::Bytea, "\\12").0, "22P02");
    assert_eq!(text_of(&Value::Bytea(vec![0x0a, 0xFF, 0])), "\\x0aff00");
    assert_eq!(text_of(&Value::Bytea(vec![])), "\\x");
}

#[test]
fn date_text() {
    let cases = [
        ("2024-01-31", "2024-01-31"),
        ("2024-1-5", "2024-01-05"),
        ("20240131", "2024-01-31"),
        ("01/31/2024", "2024-01-31"),
        ("1/2/24", "2024-01-02"),
        ("1/2/99", "1999-01-02"),
        ("2024-01-31 12:00:00+05", "2024-01-31"),
        ("  2024-01-31  ", "2024-01-31"),
        ("2000-02-29", "2000-02-29"),
        ("124-01-31", "0124-01-31"),
        ("10000-01-01", "10000-01-01"),
        ("0001-01-01 BC", "0001-01-01 BC"),
        ("4714-11-24 BC", "4714-11-24 BC"),
        ("5874897-12-31", "5874897-12-31"),
        ("2024-01-31 AD", "2024-01-31"),
        ("infinity", "infinity"),
        ("-INFINITY", "-infinity"),
        ("epoch", "1970-01-01"),
        ("1999-12-31", "1999-12-31"),
    ];
    for (input, output) in cases {
        assert_eq!(round(DataType::Date, input), output, "{input:?}");
    }
    assert!(matches!(
        parse(DataType::Date, "2000-01-01"),
        Value::Date(0)
    ));
    assert!(matches!(
        parse(DataType::Date, "1999-12-31"),
        Value::Date(-1)
    ));
    for bad in [
        "24-01-31",
        "0000-01-01",
        "2024-02-30",
        "2023-02-29",
        "2024-13-01",
        "2024-00-10",
        "2024-01-31 25:00",
    ] {
        assert_eq!(
            error(DataType::Date, bad),
            (
                "22008".into(),
                format!("date/time field value out of range: \"{bad}\"")
            )
        );
    }
    for bad in [
        "abc",
        "",
        "2024-01",
        "2024-01-31x",
        "2024/01-31",
        "2024-01-31 12",
    ] {
        assert_eq!(
            error(DataType::Date, bad),
            (
                "22007".into(),
                format!("invalid input syntax for type date: \"{bad}\"")
            )
        );
    }
    for bad in ["4714-11-23 BC", "5874898-01-01"] {
        assert_eq!(
            error(DataType::Date, bad),
            ("22008".into(), format!("date out of range: \"{bad}\""))
        );
    }
    // today is a real date close to now
    assert!(matches!(parse(DataType::Date, "today"), Value::Date(d) if d > 8000));
}

#[test]
fn timestamp_text() {
    let ts = |s: &str| round(DataType::Timestamp, s);
    assert_eq!(ts("2024-01-31 12:34:56"), "2024-01-31 12:34:56");
    assert_eq!(
        ts("2024-01-31T12:34:56.1234567"),
        "2024-01-31 12:34:56.123457"
    );
    assert_eq!(ts("2024-01-31 12:34:56.0000005"), "2024-01-31 12:34:56");
    assert_eq!(
        ts("2024-01-31 12:34:56.0000015"),
        "2024-01-31 12:34:56.000002"
    );
    assert_eq!(ts("2024-01-31 12:34:56.500"), "2024-01-31 12:34:56.5");
    assert_eq!(ts("2024-01-31 12:34:56."), "2024-01-31 12:34:56");
    assert_eq!(ts("2024-01-31 23:59:59.9999999"), "2024-02-01 00:00:00");
    assert_eq!(ts("2024-01-31 24:00:00"), "2024-02-01 00:00:00");
    assert_eq!(ts("2024-01-31 23:59:60"), "2024-02-01 00:00:00");
    assert_eq!(ts("2024-01-31 12:34"), "2024-01-31 12:34:00");
    assert_eq!(ts("2024-01-31 1:2:3"), "2024-01-31 01:02:03");
    assert_eq!(ts("2024-01-31"), "2024-01-31 00:00:00");
    assert_eq!(ts("2024-01-31 12:34:56+05:30"), "2024-01-31 12:34:56");
    assert_eq!(
        ts("2024-01-31 12:34:56 America/New_York"),
        "2024-01-31 12:34:56"
    );
    assert_eq!(ts("2024-01-31 allballs"), "2024-01-31 00:00:00");
    assert_eq!(
        ts("294276-12-31 23:59:59.999999"),
        "294276-12-31 23:59:59.999999"
    );
    assert_eq!(ts("4714-11-24 00:00:00 BC"), "4714-11-24 00:00:00 BC");
    assert_eq!(ts("epoch"), "1970-01-01 00:00:00");
    assert_eq!(ts("Infinity"), "infinity");
    assert!(matches!(
        parse(DataType::Timestamp, "2000-01-01 00:00:01"),
        Value::Timestamp(1_000_000)
    ));
    assert!(matches!(
        parse(DataType::Timestamp, "1999-12-31 23:59:59.999999"),
        Value::Timestamp(-1)
    ));

    let tz = |s: &str| round(DataType::TimestampTz, s);
    assert_eq!(tz("2024-01-31 12:34:56+05:30"), "2024-01-31 07:04:56+00");
    assert_eq!(tz("2024-01-31 12:34:56 +05:30"), "2024-01-31 07:04:56+00");
    assert_eq!(tz("2024-01-31T12:34:56Z"), "2024-01-31 12:34:56+00");
    assert_eq!(tz("2024-01-31 12:34:56 UTC"), "2024-01-31 12:34:56+00");
    assert_eq!(tz("2024-01-31 12:34:56-0830"), "2024-01-31 21:04:56+00");
    assert_eq!(tz("2024-01-31 12:34:56+05:30:15"), "2024-01-31 07:04:41+00");
    assert_eq!(tz("2024-01-31 12:34:56 +5"), "2024-01-31 07:34:56+00");
    assert_eq!(tz("1999-01-08 04:05:06 -8:00"), "1999-01-08 12:05:06+00");
    assert_eq!(tz("2024-01-31 12:00 EST"), "2024-01-31 17:00:00+00");
    assert_eq!(tz("2024-01-31 12:00 cest"), "2024-01-31 10:00:00+00");
    assert_eq!(
        tz("2024-01-31 12:34:56.123 +02:00 BC"),
        "2024-01-31 10:34:56.123+00 BC"
    );
    assert_eq!(tz("2024-01-31"), "2024-01-31 00:00:00+00");
    assert_eq!(tz("-infinity"), "-infinity");

    let bad_ts = [
        "x",
        "2024-01-31 12",
        "2024-01-31 12:34:56 foo",
        "2024-01-31 12:34:56 1",
        "2024-01-31 12:34 12:34",
    ];
    for bad in bad_ts {
        assert_eq!(
            error(DataType::Timestamp, bad),
            (
                "22007".into(),
                format!("invalid input syntax for type timestamp: \"{bad}\"")
            )
        );
        assert_eq!(
            error(DataType::TimestampTz, bad),
            (
                "22007".into(),
                format!("invalid input syntax for type timestamp with time zone: \"{bad}\"")
            )
        );
    }
    for bad in [
        "2024-01-31 25:00",
        "2024-01-31 12:60",
        "2024-01-31 24:00:01",
        "2024-02-30 00:00",
    ] {
        assert_eq!(
            error(DataType::Timestamp, bad),
            (
                "22008".into(),
                format!("date/time field value out of range: \"{bad}\"")
            )
        );
    }
    assert_eq!(
        error(DataType::TimestampTz, "2024-01-31 12:34:56+16"),
        (
            "22009".into(),
            "time zone displacement out of range: \"2024-01-31 12:34:56+16\"".into()
        )
    );
    assert_eq!(
        error(DataType::TimestampTz, "2024-01-31 12:00 Europe/Nowhere"),
        (
            "22023".into(),
            "time zone \"europe/nowhere\" not recognized".into()
        )
    );
    assert_eq!(
        error(DataType::Timestamp, "294277-01-01"),
        (
            "22008".into(),
            "timestamp out of range: \"294277-01-01\"".into()
        )
    );
    assert_eq!(
        error(DataType::Timestamp, "4714-11-23 23:59:59 BC").0,
        "22008"
    );
}

#[test]
fn binary_formats_match_postgres() {
    assert_eq!(binary(&Value::Bool(true)), [1]);
    assert_eq!(binary(&Value::Int2(-2)), [0xFF, 0xFE]);
    assert_eq!(binary(&Value::Int4(258)), [0, 0, 1, 2]);
    assert_eq!(binary(&Value::Int8(1)), [0, 0, 0, 0, 0, 0, 0, 1]);
    assert_eq!(binary(&Value::Float4(1.5)), [0x3F, 0xC0, 0, 0]);
    assert_eq!(binary(&Value::Float8(-2.0)), [0xC0, 0, 0, 0, 0, 0, 0, 0]);
    assert_eq!(
        binary(&Value::Numeric(dec("1.50"))),
        [0, 2, 0, 0, 0, 0, 0, 2, 0, 1, 0x13, 0x88]
    );
    assert_eq!(binary(&Value::Text("h\u{e9}".into())), [b'h', 0xC3, 0xA9]);
    assert_eq!(binary(&Value::Bytea(vec![0, 1])), [0, 1]);
    assert_eq!(binary(&Value::Date(-1)), [0xFF; 4]);
    assert_eq!(binary(&Value::Timestamp(1)), [0, 0, 0, 0, 0, 0, 0, 1]);
    assert_eq!(binary(&Value::TimestampTz(-1)), [0xFF; 8]);

    assert!(matches!(
        decode_binary(&DataType::Bool, &[2]),
        Ok(Value::Bool(true))
    ));
    assert!(matches!(
        decode_binary(&DataType::Bool, &[0]),
        Ok(Value::Bool(false))
    ));
    assert!(matches!(
        decode_binary(&DataType::Int4, &[0xFF, 0xFF, 0xFF, 0xFE]),
        Ok(Value::Int4(-2))
    ));
    assert!(matches!(decode_binary(&DataType::Text, b"abc"), Ok(Value::Text(s)) if s == "abc"));
    assert!(matches!(decode_binary(&DataType::Char(3), b"a"), Ok(Value::Text(s)) if s == "a  "));
    let e = decode_binary(&DataType::Varchar(Some(2)), b"abc").unwrap_err();
    assert_eq!(
        (e.code.0, e.message.as_str()),
        ("22001", "value too long for type character varying(2)")
    );
    let e = decode_binary(
        &DataType::Numeric(Some((3, 1))),
        &binary(&Value::Numeric(dec("123.45"))),
    )
    .unwrap_err();
    assert_eq!(e.message, "numeric field overflow");
}

#[test]
fn binary_input_errors() {
    let cases: [(DataType, &[u8], &str); 12] = [
        (DataType::Bool, &[], "insufficient data left in message"),
        (DataType::Bool, &[1, 0], "incorrect binary data format"),
        (DataType::Int2, &[1], "insufficient data left in message"),
        (
            DataType::Int4,
            &[0, 0, 0],
            "insufficient data left in message",
        ),
        (
            DataType::Int4,
            &[0, 0, 0, 0, 0],
            "incorrect binary data format",
        ),
        (DataType::Int8, &[0; 4], "insufficient data left in message"),
        (DataType::Float4, &[0; 8], "incorrect binary data format"),
        (
            DataType::Float8,
            &[0; 4],
            "insufficient data left in message",
        ),
        (DataType::Date, &[0; 2], "insufficient data left in message"),
        (DataType::Timestamp, &[0; 9], "incorrect binary data format"),
        (
            DataType::Numeric(None),
            &[0, 1],
            "insufficient data left in message",
        ),
        (
            DataType::Numeric(None),
            &[0, 1, 0, 0, 0, 0, 0, 0, 0x27, 0x10],
            "invalid digit in external \"numeric\" value",
        ),
    ];
    for (ty, bytes, msg) in cases {
        let e = decode_binary(&ty, bytes).unwrap_err();
        assert_eq!(
            (e.code.0, e.message.as_str()),
            ("22P03", msg),
            "{} {bytes:?}",
            ty.name()
        );
    }
    let e = decode_binary(&DataType::Text, &[b'a', 0xC3, 0x28]).unwrap_err();
    assert_eq!(
        (e.code.0, e.message.as_str()),
        ("22021", "invalid byte sequence for encoding \"UTF8\": 0xc3")
    );
    let e = decode_binary(&DataType::Varchar(None), &[b'a', 0]).unwrap_err();
    assert_eq!(
        e.message,
        "invalid byte sequence for encoding \"UTF8\": 0x00"
    );
    assert_eq!(code(decode_binary(&DataType::Text, &[0xF0, 0x90])), "22021");
    let e = decode_binary(&DataType::Date, &(-2_451_546i32).to_be_bytes()).unwrap_err();
    assert_eq!(
        (e.code.0, e.message.as_str()),
        ("22008", "date out of range")
    );
    let e = decode_binary(
        &DataType::TimestampTz,
        &i64::to_be_bytes(9_223_371_331_200_000_000),
    )
    .unwrap_err();
    assert_eq!(
        (e.code.0, e.message.as_str()),
        ("22008", "timestamp out of range")
    );
    assert!(decode_binary(&DataType::Date, &i32::MAX.to_be_bytes()).is_ok());
    assert!(decode_binary(&DataType::Timestamp, &i64::MIN.to_be_bytes()).is_ok());
}

#[test]
fn text_and_binary_round_trip_every_type() {
    let mut r = rng(7);
    for ty in ALL_TYPES {
        for _ in 0..400 {
            let v = random_value(&mut r, &ty);
            let text = text_of(&v);
            let back = decode_text(&ty, &text)
                .unwrap_or_else(|e| panic!("{text:?} as {}: {e}", ty.name()));
            let same = match (&v, &back) {
                // NaN payloads are not preserved by text; everything else is exact.
                (Value::Float4(x), Value::Float4(y)) if x.is_nan() => y.is_nan(),
                (Value::Float8(x), Value::Float8(y)) if x.is_nan() => y.is_nan(),
                _ => identical(&v, &back),
            };
            assert!(same, "{}: {v:?} -> {text:?} -> {back:?}", ty.name());
            let bytes = binary(&v);
            let back = decode_binary(&ty, &bytes).unwrap_or_else(|e| panic!("{v:?} binary: {e}"));
            assert!(
                identical(&v, &back),
                "{}: {v:?} -> {bytes:?} -> {back:?}",
                ty.name()
            );
        }
    }
}

#[test]
fn calendar_round_trips() {
    use crate::types::datetime::{civil_from_days, days_from_civil};
    assert_eq!(days_from_civil(2000, 1, 1), 0);
    assert_eq!(days_from_civil(1970, 1, 1), -10957);
    assert_eq!(days_from_civil(-4713, 11, 24), -2_451_545);
    assert_eq!(civil_from_days(-2_451_545), (-4713, 11, 24));
    assert_eq!(civil_from_days(59), (2000, 2, 29));
    let mut r = rng(3);
    for _ in 0..10_000 {
        let d = r.gen_range(-3_000_000..2_200_000_000i64);
        let (y, m, day) = civil_from_days(d);
        assert_eq!(days_from_civil(y, m, day), d);
    }
}

#[test]
fn char_and_varchar_lengths_count_characters() {
    use crate::types::io::apply_string_typmod as fit;
    let char_n = |n| DataType::Char(n);
    let varchar_n = |n| DataType::Varchar(Some(n));
    let ok = |s: &str, ty: &DataType, explicit| fit(s.to_string(), ty, explicit).expect(s);
    // Padding: short and longer than one chunk of spaces.
    assert_eq!(ok("", &char_n(3), false), "   ");
    assert_eq!(ok("é", &char_n(3), false), "é  ");
    assert_eq!(
        ok("ab", &char_n(84), false),
        format!("ab{}", " ".repeat(82))
    );
    assert_eq!(ok("ab", &varchar_n(5), false), "ab");
    // Excess: spaces are cut; anything else is 22001 unless the cast is explicit.
    assert_eq!(ok("ab   ", &char_n(2), false), "ab");
    assert_eq!(ok("日本 ", &varchar_n(2), false), "日本");
    assert_eq!(ok("abc", &varchar_n(2), true), "ab");
    assert_eq!(ok("日本語", &varchar_n(2), true), "日本");
    for (s, ty) in [
        ("abc", varchar_n(2)),
        ("日本語", char_n(2)),
        ("ab x", char_n(2)),
    ] {
        let e = fit(s.to_string(), &ty, false).expect_err(s);
        assert_eq!(e.code.0, "22001", "{s}");
    }
}
