use std::cmp::Ordering;

use super::*;
use crate::types::{
    compare, compare_typed, decode_row, decode_row_prefix, encode_key, encode_key_typed, encode_row,
};

fn key(values: &[Value]) -> Vec<u8> {
    let mut out = Vec::new();
    encode_key(values, &mut out);
    out
}

/// SQL tuple order: column by column, NULLs last.
fn sql_order(a: &[Value], b: &[Value], types: &[DataType]) -> Ordering {
    for ((x, y), ty) in a.iter().zip(b).zip(types) {
        let o = match (x.is_null(), y.is_null()) {
            (true, true) => Ordering::Equal,
            (true, false) => Ordering::Greater,
            (false, true) => Ordering::Less,
            _ => compare_typed(x, y, ty).expect("comparable"),
        };
        if o != Ordering::Equal {
            return o;
        }
    }
    Ordering::Equal
}

fn random_tuple(r: &mut StdRng, types: &[DataType]) -> Vec<Value> {
    types
        .iter()
        .map(|ty| {
            if r.gen_bool(0.1) {
                return Value::Null;
            }
            match ty {
                // mix integer widths within one column: they must encode alike
                DataType::Int8 => match r.gen_range(0..3) {
                    0 => random_value(r, &DataType::Int2),
                    1 => random_value(r, &DataType::Int4),
                    _ => random_value(r, &DataType::Int8),
                },
                // raw texts include NUL bytes to exercise escaping
                DataType::Text => Value::Text(random_text(r)),
                DataType::Numeric(_) => {
                    let d = random_value(r, ty);
                    // same value at a larger scale where it fits, to test normalization
                    match d {
                        Value::Numeric(d) if r.gen_bool(0.3) && d.scale() < 28 => {
                            let mut wider = d;
                            wider.rescale(d.scale() + 1);
                            Value::Numeric(wider)
                        }
                        other => other,
                    }
                }
                _ => random_value(r, ty),
            }
        })
        .collect()
}

fn check_key_order(types: &[DataType], seed: u64, n: usize) {
    let mut r = rng(seed);
    let tuples: Vec<Vec<Value>> = (0..n).map(|_| random_tuple(&mut r, types)).collect();
    let keys: Vec<Vec<u8>> = tuples
        .iter()
        .map(|t| {
            let mut out = Vec::new();
            encode_key_typed(t, types, &mut out);
            out
        })
        .collect();
    for i in 0..n {
        for j in 0..n {
            let want = sql_order(&tuples[i], &tuples[j], types);
            let got = keys[i].cmp(&keys[j]);
            assert_eq!(
                want, got,
                "{:?} vs {:?}\n{:?}\n{:?}",
                tuples[i], tuples[j], keys[i], keys[j]
            );
        }
    }
}

#[test]
fn key_order_matches_sql_order_per_type() {
    let types = [
        DataType::Bool,
        DataType::Int8,
        DataType::Float4,
        DataType::Float8,
        DataType::Numeric(None),
        DataType::Text,
        DataType::Char(5),
        DataType::Bytea,
        DataType::Date,
        DataType::Timestamp,
        DataType::TimestampTz,
        DataType::Jsonb,
    ];
    for (i, ty) in types.iter().enumerate() {
        check_key_order(&[*ty], 100 + i as u64, 400);
    }
}

#[test]
fn key_order_matches_sql_order_for_tuples() {
    check_key_order(&[DataType::Bool, DataType::Int8, DataType::Text], 1, 300);
    check_key_order(
        &[DataType::Text, DataType::Numeric(None), DataType::Bytea],
        2,
        300,
    );
    check_key_order(
        &[DataType::Char(3), DataType::Date, DataType::Float8],
        3,
        300,
    );
}

#[test]
fn equal_values_encode_identically() {
    let same = [
        (Value::Int2(7), Value::Int8(7)),
        (Value::Int4(-1), Value::Int2(-1)),
        (Value::Numeric(dec("1.0")), Value::Numeric(dec("1.00"))),
        (Value::Numeric(dec("100")), Value::Numeric(dec("100.000"))),
        (Value::Numeric(dec("0.00")), Value::Numeric(dec("0"))),
        (Value::Float8(-0.0), Value::Float8(0.0)),
        (Value::Float8(f64::NAN), Value::Float8(-f64::NAN)),
        (Value::Float4(0.5), Value::Float8(0.5)),
    ];
    for (a, b) in same {
        assert_eq!(
            key(std::slice::from_ref(&a)),
            key(std::slice::from_ref(&b)),
            "{a:?} {b:?}"
        );
    }
    let mut padded = Vec::new();
    encode_key_typed(
        &[Value::Text("ab   ".into())],
        &[DataType::Char(5)],
        &mut padded,
    );
    let mut short = Vec::new();
    encode_key_typed(
        &[Value::Text("ab".into())],
        &[DataType::Char(2)],
        &mut short,
    );
    assert_eq!(padded, short);
    // but text keeps trailing spaces significant
    assert_ne!(
        key(&[Value::Text("ab ".into())]),
        key(&[Value::Text("ab".into())])
    );
}

#[test]
fn key_layout() {
    assert_eq!(key(&[Value::Null]), [0x02]);
    assert_eq!(key(&[Value::Int4(0)]), [0x01, 0x80, 0, 0, 0, 0, 0, 0, 0]);
    assert_eq!(
        key(&[Value::Text("a\0".into())]),
        [0x01, b'a', 0x00, 0xFF, 0x00, 0x01]
    );
    assert_eq!(key(&[Value::Bool(true), Value::Null]), [0x01, 0x01, 0x02]);
    // NULL sorts after every non-NULL value, whatever its encoding
    assert!(key(&[Value::Null]) > key(&[Value::Float8(f64::NAN)]));
    assert!(key(&[Value::Null]) > key(&[Value::Bytea(vec![0xFF; 4])]));
    assert!(key(&[Value::Null]) > key(&[Value::Timestamp(i64::MAX)]));
    // prefix property: a shorter key tuple sorts before its extensions
    assert!(key(&[Value::Int4(1)]) < key(&[Value::Int4(1), Value::Int4(i32::MIN)]));
}

#[test]
fn numeric_keys_in_order() {
    let sorted = [
        "-79228162514264337593543950335",
        "-100",
        "-12.5",
        "-12.34",
        "-12",
        "-1.2",
        "-0.05",
        "-0.0000000000000000000000000001",
        "0",
        "0.0000000000000000000000000001",
        "0.05",
        "0.5",
        "1",
        "1.2",
        "1.21",
        "1.3",
        "9.99",
        "10",
        "12",
        "12.34",
        "12.5",
        "100",
        "79228162514264337593543950335",
    ];
    let keys: Vec<Vec<u8>> = sorted
        .iter()
        .map(|s| key(&[Value::Numeric(dec(s))]))
        .collect();
    for w in keys.windows(2) {
        assert!(w[0] < w[1], "{w:?}");
    }
}

fn row(values: &[Value], types: &[DataType]) -> Vec<u8> {
    let mut out = Vec::new();
    encode_row(values, types, &mut out);
    out
}

#[test]
fn row_round_trip_is_exact() {
    let mut r = rng(42);
    for _ in 0..500 {
        let n = r.gen_range(0..8);
        let types: Vec<DataType> = (0..n)
            .map(|_| ALL_TYPES[r.gen_range(0..ALL_TYPES.len())])
            .collect();
        let values: Vec<Value> = types
            .iter()
            .map(|ty| {
                if r.gen_bool(0.15) {
                    Value::Null
                } else {
                    match ty {
                        // any float bit pattern, NaN payloads included
                        DataType::Float8 => Value::Float8(f64::from_bits(r.gen())),
                        DataType::Float4 => Value::Float4(f32::from_bits(r.gen())),
                        DataType::Text => Value::Text(random_text(&mut r)),
                        _ => random_value(&mut r, ty),
                    }
                }
            })
            .collect();
        let bytes = row(&values, &types);
        let back = decode_row(&bytes, &types).unwrap_or_else(|e| panic!("{values:?}: {e}"));
        assert_eq!(back.len(), values.len());
        for (a, b) in values.iter().zip(&back) {
            let same = match (a, b) {
                (Value::Null, Value::Null) => true,
                _ => identical(a, b),
            };
            assert!(same, "{a:?} -> {b:?}");
        }
        // concatenated rows decode one at a time
        let mut two = bytes.clone();
        two.extend_from_slice(&bytes);
        let (_, used) = decode_row_prefix(&two, &types).unwrap();
        assert_eq!(used, bytes.len());
        assert_eq!(code(decode_row(&two, &types)), "XX001");
    }
}

#[test]
fn char_values_are_stored_without_their_padding_and_read_back_padded() {
    let types = [DataType::Char(6), DataType::Text, DataType::Char(3)];
    let values = [
        Value::Text("h\u{e9}    ".into()),
        Value::Text("kept  ".into()),
        Value::Text("   ".into()),
    ];
    let bytes = row(&values, &types);
    // The char columns' trailing blanks are not stored; the text column's are.
    let unpadded = row(
        &[
            Value::Text("h\u{e9}".into()),
            Value::Text("kept  ".into()),
            Value::Text(String::new()),
        ],
        &[DataType::Text, DataType::Text, DataType::Text],
    );
    assert_eq!(bytes, unpadded);
    let back = decode_row(&bytes, &types).unwrap();
    assert_eq!(back, values, "padded to the width in characters");
    // A value stored padded (as rows written before were) reads back the same.
    let stored_padded = row(&values, &[DataType::Text, DataType::Text, DataType::Text]);
    assert_eq!(decode_row(&stored_padded, &types).unwrap(), values);
    // Read as a wider char column, or as text after a type change, it is padded to the
    // new width, or not at all, as a cast from char would.
    let wider = decode_row(&bytes, &[DataType::Char(8), DataType::Text, DataType::Text]);
    assert_eq!(
        wider.unwrap(),
        [
            Value::Text("h\u{e9}      ".into()),
            Value::Text("kept  ".into()),
            Value::Text(String::new()),
        ]
    );
}

#[test]
fn row_extremes_round_trip() {
    let values = vec![
        Value::Int2(i16::MIN),
        Value::Int4(i32::MAX),
        Value::Int8(i64::MIN),
        Value::Numeric(rust_decimal::Decimal::MIN),
        Value::Numeric(dec("0.0000000000000000000000000001")),
        Value::Numeric(dec("0.00")),
        Value::Date(i32::MIN),
        Value::Timestamp(i64::MAX),
        Value::TimestampTz(i64::MIN),
        Value::Bytea(vec![0; 300]),
        Value::Text("\0\u{10348}".into()),
        Value::Bool(false),
        Value::Float8(-0.0),
    ];
    let types = [
        DataType::Int2,
        DataType::Int4,
        DataType::Int8,
        DataType::Numeric(None),
        DataType::Numeric(Some((30, 28))),
        DataType::Numeric(None),
        DataType::Date,
        DataType::Timestamp,
        DataType::TimestampTz,
        DataType::Bytea,
        DataType::Varchar(None),
        DataType::Bool,
        DataType::Float8,
    ];
    let back = decode_row(&row(&values, &types), &types).unwrap();
    for (a, b) in values.iter().zip(&back) {
        assert!(identical(a, b), "{a:?} -> {b:?}");
    }
}

#[test]
fn decode_row_rejects_mismatches() {
    let bytes = row(
        &[Value::Int4(1), Value::Text("x".into())],
        &[DataType::Int4, DataType::Text],
    );
    assert!(decode_row(&bytes, &[DataType::Int4, DataType::Text]).is_ok());
    // A narrower integer reads widened (a column ALTER ... TYPE widened); a wider one
    // into a narrower column is corrupt.
    let widened = decode_row(&bytes, &[DataType::Int8, DataType::Text]).unwrap();
    assert!(identical(&widened[0], &Value::Int8(1)), "{widened:?}");
    let e = decode_row(&bytes, &[DataType::Int2, DataType::Text]).unwrap_err();
    assert_eq!(e.code.0, "XX001");
    assert_eq!(code(decode_row(&bytes, &[DataType::Int4])), "XX001");
    assert_eq!(
        code(decode_row(
            &bytes,
            &[DataType::Int4, DataType::Text, DataType::Int4]
        )),
        "XX001"
    );
    assert_eq!(
        code(decode_row(&bytes, &[DataType::Int4, DataType::Bytea])),
        "XX001"
    );
    assert_eq!(code(decode_row(&[], &[])), "XX001");
    // out-of-range int2 payload
    let wide = row(&[Value::Int4(70000)], &[DataType::Int4]);
    let mut as_int2 = wide.clone();
    as_int2[1] = 3; // T_INT2
    assert_eq!(code(decode_row(&as_int2, &[DataType::Int2])), "XX001");
    // invalid UTF-8 in text
    let mut bad_text = row(&[Value::Text("ab".into())], &[DataType::Text]);
    let last = bad_text.len() - 1;
    bad_text[last] = 0xFF;
    assert_eq!(code(decode_row(&bad_text, &[DataType::Text])), "XX001");
    // numeric with scale 29
    let mut bad_scale = row(&[Value::Numeric(dec("1"))], &[DataType::Numeric(None)]);
    bad_scale[2] = 29;
    assert_eq!(
        code(decode_row(&bad_scale, &[DataType::Numeric(None)])),
        "XX001"
    );
    // huge length prefix
    let huge = [
        1, 9, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x01,
    ];
    assert_eq!(code(decode_row(&huge, &[DataType::Text])), "XX001");
    // over-long varint
    let long = [
        1, 5, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x7F,
    ];
    assert_eq!(code(decode_row(&long, &[DataType::Int8])), "XX001");
}

#[test]
fn decode_row_never_panics_on_garbage() {
    let types = [
        DataType::Int4,
        DataType::Text,
        DataType::Numeric(None),
        DataType::Float8,
        DataType::Bool,
        DataType::Bytea,
        DataType::Date,
    ];
    let mut r = rng(9);
    let good = row(
        &[
            Value::Int4(-5),
            Value::Text("h\u{e9}llo".into()),
            Value::Numeric(dec("-12.345")),
            Value::Float8(1.5),
            Value::Bool(true),
            Value::Bytea(vec![1, 2, 3]),
            Value::Date(100),
        ],
        &types,
    );
    assert!(decode_row(&good, &types).is_ok());
    // every truncation fails cleanly
    for n in 0..good.len() {
        assert!(decode_row(&good[..n], &types).is_err(), "prefix {n}");
    }
    // single-byte corruptions and random garbage never panic
    for _ in 0..20_000 {
        let mut bytes = good.clone();
        for _ in 0..r.gen_range(1..4) {
            let i = r.gen_range(0..bytes.len());
            bytes[i] = r.gen();
        }
        let _ = decode_row(&bytes, &types);
        let garbage: Vec<u8> = (0..r.gen_range(0..40)).map(|_| r.gen()).collect();
        let _ = decode_row(&garbage, &types);
        let _ = decode_row(&garbage, &ALL_TYPES);
    }
}

#[test]
fn compare_agrees_with_key_encoding_for_mixed_integer_widths() {
    let mut r = rng(77);
    for _ in 0..2000 {
        let widths = [DataType::Int2, DataType::Int4, DataType::Int8];
        let (i, j) = (r.gen_range(0..3), r.gen_range(0..3));
        let (a, b) = (
            random_value(&mut r, &widths[i]),
            random_value(&mut r, &widths[j]),
        );
        let want = compare(&a, &b).unwrap();
        assert_eq!(
            key(std::slice::from_ref(&a)).cmp(&key(std::slice::from_ref(&b))),
            want
        );
    }
}
