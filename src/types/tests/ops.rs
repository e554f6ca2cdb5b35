use std::cmp::Ordering::{self, Equal, Greater, Less};

use super::*;
use crate::types::{arith, compare, compare_typed, negate, ArithOp};

fn text(s: &str) -> Value {
    Value::Text(s.to_string())
}

fn num(s: &str) -> Value {
    Value::Numeric(dec(s))
}

fn cmp(a: Value, b: Value) -> Option<Ordering> {
    compare(&a, &b)
}

fn ok(op: ArithOp, a: Value, b: Value) -> Value {
    arith(op, &a, &b).unwrap_or_else(|e| panic!("{a:?} {op:?} {b:?}: {e}"))
}

fn fail(op: ArithOp, a: Value, b: Value) -> (String, String) {
    let e = arith(op, &a, &b).expect_err("operation should fail");
    (e.code.0.to_string(), e.message)
}

#[test]
fn numbers_compare_across_kinds() {
    assert_eq!(cmp(Value::Int2(1), Value::Int8(1)), Some(Equal));
    assert_eq!(cmp(Value::Int4(-1), Value::Int2(1)), Some(Less));
    assert_eq!(
        cmp(Value::Int8(i64::MAX), Value::Int4(i32::MAX)),
        Some(Greater)
    );
    assert_eq!(cmp(Value::Int4(1), num("1.00")), Some(Equal));
    assert_eq!(cmp(num("1.5"), Value::Int4(2)), Some(Less));
    assert_eq!(cmp(num("1.0"), num("1.000")), Some(Equal));
    assert_eq!(cmp(Value::Int4(1), Value::Float8(1.0)), Some(Equal));
    assert_eq!(cmp(Value::Float4(0.5), Value::Float8(0.5)), Some(Equal));
    assert_eq!(cmp(num("0.1"), Value::Float8(0.1)), Some(Equal));
    assert_eq!(
        cmp(Value::Float8(f64::NAN), Value::Float8(f64::INFINITY)),
        Some(Greater)
    );
    assert_eq!(
        cmp(Value::Float8(f64::NAN), Value::Float4(f32::NAN)),
        Some(Equal)
    );
    assert_eq!(cmp(Value::Int4(5), Value::Float8(f64::NAN)), Some(Less));
    assert_eq!(cmp(Value::Float8(-0.0), Value::Float8(0.0)), Some(Equal));
    assert_eq!(
        cmp(Value::Float8(f64::NEG_INFINITY), Value::Int8(i64::MIN)),
        Some(Less)
    );
    assert!(Value::Int2(3) == Value::Numeric(dec("3.0")));
    assert!(Value::Float8(f64::NAN) == Value::Float8(f64::NAN));
}

#[test]
fn other_types_compare() {
    assert_eq!(cmp(text("a"), text("b")), Some(Less));
    assert_eq!(cmp(text("a"), text("a ")), Some(Less));
    assert_eq!(cmp(text("B"), text("a")), Some(Less)); // "C" collation
    assert_eq!(cmp(text("\u{e9}"), text("z")), Some(Greater));
    let ch = DataType::Char(5);
    assert_eq!(compare_typed(&text("a"), &text("a    "), &ch), Some(Equal));
    assert_eq!(
        compare_typed(&text("a\u{1}"), &text("a    "), &ch),
        Some(Greater)
    );
    assert_eq!(
        compare_typed(&text("a"), &text("a "), &DataType::Text),
        Some(Less)
    );
    assert_eq!(cmp(Value::Bool(false), Value::Bool(true)), Some(Less));
    assert_eq!(
        cmp(Value::Bytea(vec![1, 2]), Value::Bytea(vec![1, 2, 0])),
        Some(Less)
    );
    assert_eq!(
        cmp(Value::Bytea(vec![0xFF]), Value::Bytea(vec![1, 2])),
        Some(Greater)
    );
    assert_eq!(cmp(Value::Date(1), Value::Date(2)), Some(Less));
    assert_eq!(cmp(Value::Timestamp(5), Value::TimestampTz(5)), Some(Equal));
    let day = 86_400_000_000;
    assert_eq!(cmp(Value::Date(1), Value::Timestamp(day)), Some(Equal));
    assert_eq!(cmp(Value::Date(1), Value::Timestamp(day + 1)), Some(Less));
    assert_eq!(cmp(Value::TimestampTz(day - 1), Value::Date(1)), Some(Less));
    assert_eq!(
        cmp(Value::Date(i32::MAX), Value::Timestamp(i64::MAX)),
        Some(Equal)
    );
    assert_eq!(
        cmp(Value::Date(2_000_000_000), Value::Timestamp(i64::MAX)),
        Some(Less)
    );
    assert_eq!(
        cmp(Value::Date(2_000_000_000), Value::Timestamp(i64::MAX - 1)),
        Some(Greater)
    );
    assert_eq!(
        cmp(Value::Date(i32::MIN), Value::TimestampTz(i64::MIN)),
        Some(Equal)
    );
    // incomparable pairs
    assert_eq!(cmp(Value::Bool(true), Value::Int4(1)), None);
    assert_eq!(cmp(text("1"), Value::Int4(1)), None);
    assert_eq!(cmp(Value::Bytea(vec![]), text("")), None);
    assert_eq!(cmp(Value::Date(0), Value::Int4(0)), None);
    assert_eq!(cmp(Value::Null, Value::Int4(0)), None);
}

#[test]
fn integer_arithmetic() {
    assert!(matches!(
        ok(ArithOp::Add, Value::Int2(2), Value::Int2(3)),
        Value::Int2(5)
    ));
    assert!(matches!(
        ok(ArithOp::Add, Value::Int2(2), Value::Int4(3)),
        Value::Int4(5)
    ));
    assert!(matches!(
        ok(ArithOp::Mul, Value::Int8(2), Value::Int2(3)),
        Value::Int8(6)
    ));
    assert!(matches!(
        ok(ArithOp::Div, Value::Int4(-7), Value::Int4(2)),
        Value::Int4(-3)
    ));
    assert!(matches!(
        ok(ArithOp::Mod, Value::Int4(-7), Value::Int4(2)),
        Value::Int4(-1)
    ));
    assert!(matches!(
        ok(ArithOp::Mod, Value::Int4(7), Value::Int4(-2)),
        Value::Int4(1)
    ));
    assert!(matches!(
        ok(ArithOp::Mod, Value::Int4(i32::MIN), Value::Int4(-1)),
        Value::Int4(0)
    ));
    assert!(matches!(
        ok(ArithOp::Mod, Value::Int8(i64::MIN), Value::Int8(-1)),
        Value::Int8(0)
    ));
    assert!(matches!(
        ok(ArithOp::Sub, Value::Int8(i64::MIN + 1), Value::Int8(1)),
        Value::Int8(i64::MIN)
    ));
    let overflow = [
        (
            ArithOp::Add,
            Value::Int2(32767),
            Value::Int2(1),
            "smallint out of range",
        ),
        (
            ArithOp::Mul,
            Value::Int4(65536),
            Value::Int4(65536),
            "integer out of range",
        ),
        (
            ArithOp::Div,
            Value::Int4(i32::MIN),
            Value::Int4(-1),
            "integer out of range",
        ),
        (
            ArithOp::Div,
            Value::Int8(i64::MIN),
            Value::Int8(-1),
            "bigint out of range",
        ),
        (
            ArithOp::Sub,
            Value::Int8(i64::MIN),
            Value::Int2(1),
            "bigint out of range",
        ),
        (
            ArithOp::Mul,
            Value::Int2(200),
            Value::Int2(200),
            "smallint out of range",
        ),
    ];
    for (op, a, b, msg) in overflow {
        assert_eq!(fail(op, a, b), ("22003".into(), msg.into()));
    }
    for op in [ArithOp::Div, ArithOp::Mod] {
        assert_eq!(
            fail(op, Value::Int4(1), Value::Int2(0)),
            ("22012".into(), "division by zero".into())
        );
    }
}

#[test]
fn float_and_numeric_arithmetic() {
    assert!(
        matches!(ok(ArithOp::Add, Value::Float4(1.5), Value::Float4(1.0)), Value::Float4(f) if f == 2.5)
    );
    assert!(
        matches!(ok(ArithOp::Add, Value::Int4(1), Value::Float4(1.5)), Value::Float8(f) if f == 2.5)
    );
    assert!(
        matches!(ok(ArithOp::Mul, Value::Float4(2.0), Value::Float8(1.5)), Value::Float8(f) if f == 3.0)
    );
    assert!(
        matches!(ok(ArithOp::Add, num("1.5"), Value::Float8(1.0)), Value::Float8(f) if f == 2.5)
    );
    assert!(
        matches!(ok(ArithOp::Div, Value::Float8(f64::NAN), Value::Float8(0.0)), Value::Float8(f) if f.is_nan())
    );
    assert!(
        matches!(ok(ArithOp::Add, Value::Float8(f64::INFINITY), Value::Float8(1.0)), Value::Float8(f) if f.is_infinite())
    );
    assert_eq!(
        fail(ArithOp::Div, Value::Float8(1.0), Value::Int4(0)),
        ("22012".into(), "division by zero".into())
    );
    assert_eq!(
        fail(ArithOp::Div, Value::Float4(1.0), Value::Float4(0.0)).0,
        "22012"
    );
    assert_eq!(
        fail(ArithOp::Mul, Value::Float8(1e308), Value::Int4(10)),
        ("22003".into(), "value out of range: overflow".into())
    );
    assert_eq!(
        fail(ArithOp::Mul, Value::Float4(1e38), Value::Float4(10.0)).1,
        "value out of range: overflow"
    );
    assert_eq!(
        fail(ArithOp::Mul, Value::Float8(1e-308), Value::Float8(1e-308)).1,
        "value out of range: underflow"
    );
    assert_eq!(
        fail(ArithOp::Mod, Value::Float8(5.5), Value::Int4(2)),
        (
            "42883".into(),
            "operator does not exist: double precision % integer".into()
        )
    );
    assert_eq!(
        text_of(&ok(ArithOp::Add, num("1.5"), Value::Int4(2))),
        "3.5"
    );
    assert_eq!(text_of(&ok(ArithOp::Mul, num("1.50"), num("2.0"))), "3.000");
    assert_eq!(
        text_of(&ok(ArithOp::Div, Value::Int4(1), num("3"))),
        "0.33333333333333333333"
    );
    assert_eq!(
        text_of(&ok(ArithOp::Div, num("10"), Value::Int8(4))),
        "2.5000000000000000"
    );
    assert_eq!(
        text_of(&ok(ArithOp::Mod, num("7.5"), Value::Int2(2))),
        "1.5"
    );
    assert_eq!(text_of(&ok(ArithOp::Sub, num("1.5"), num("1.50"))), "0.00");
    assert_eq!(
        fail(ArithOp::Div, num("1"), Value::Int4(0)),
        ("22012".into(), "division by zero".into())
    );
    assert_eq!(fail(ArithOp::Mod, num("1"), num("0.0")).0, "22012");
    let max = Value::Numeric(rust_decimal::Decimal::MAX);
    assert_eq!(
        fail(ArithOp::Mul, max.clone(), Value::Int4(2)),
        ("22003".into(), "value overflows numeric format".into())
    );
}

#[test]
fn date_arithmetic() {
    assert!(matches!(
        ok(ArithOp::Add, Value::Date(10), Value::Int4(1)),
        Value::Date(11)
    ));
    assert!(matches!(
        ok(ArithOp::Add, Value::Int2(1), Value::Date(10)),
        Value::Date(11)
    ));
    assert!(matches!(
        ok(ArithOp::Sub, Value::Date(10), Value::Int4(11)),
        Value::Date(-1)
    ));
    assert!(matches!(
        ok(ArithOp::Sub, Value::Date(10), Value::Date(3)),
        Value::Int4(7)
    ));
    assert!(matches!(
        ok(ArithOp::Add, Value::Date(i32::MAX), Value::Int4(1)),
        Value::Date(i32::MAX)
    ));
    assert_eq!(
        fail(ArithOp::Add, Value::Date(2_145_031_948), Value::Int4(1)),
        ("22008".into(), "date out of range".into())
    );
    assert_eq!(
        fail(ArithOp::Sub, Value::Date(-2_451_545), Value::Int4(1)).0,
        "22008"
    );
    assert_eq!(
        fail(ArithOp::Sub, Value::Date(i32::MAX), Value::Date(0)),
        ("22008".into(), "cannot subtract infinite dates".into())
    );
    assert_eq!(
        fail(ArithOp::Add, Value::Date(0), Value::Int8(1)),
        (
            "42883".into(),
            "operator does not exist: date + bigint".into()
        )
    );
    assert_eq!(
        fail(ArithOp::Sub, Value::Int4(1), Value::Date(0)).0,
        "42883"
    );
    assert_eq!(
        fail(ArithOp::Add, Value::Date(0), Value::Date(0)).0,
        "42883"
    );
    // Two timestamps apart: an interval, whole days as days.
    let apart = ok(
        ArithOp::Sub,
        Value::Timestamp(super::super::datetime::USECS_PER_DAY + 5),
        Value::Timestamp(0),
    );
    let Value::Interval(iv) = apart else {
        panic!("not an interval: {apart:?}");
    };
    assert_eq!((iv.months, iv.days, iv.micros), (0, 1, 5));
    assert_eq!(
        fail(
            ArithOp::Sub,
            Value::Timestamp(i64::MAX),
            Value::Timestamp(0)
        )
        .0,
        "22008"
    );
}

#[test]
fn operators_on_wrong_types() {
    let e = arith(ArithOp::Add, &text("a"), &Value::Int4(1)).unwrap_err();
    assert_eq!(
        (e.code.0, e.message.as_str()),
        ("42883", "operator does not exist: text + integer")
    );
    assert!(e.hint.is_some());
    assert_eq!(
        fail(ArithOp::Add, Value::Bool(true), Value::Bool(true)).1,
        "operator does not exist: boolean + boolean"
    );
    assert_eq!(
        fail(ArithOp::Mul, Value::Bytea(vec![]), Value::Int8(1)).1,
        "operator does not exist: bytea * bigint"
    );
    assert!(arith(ArithOp::Add, &Value::Null, &Value::Int4(1))
        .unwrap()
        .is_null());
    assert!(arith(ArithOp::Div, &Value::Int4(1), &Value::Null)
        .unwrap()
        .is_null());
}

#[test]
fn negation() {
    assert!(matches!(negate(&Value::Int4(5)), Ok(Value::Int4(-5))));
    assert_eq!(
        negate(&Value::Int2(i16::MIN)).unwrap_err().message,
        "smallint out of range"
    );
    assert_eq!(
        negate(&Value::Int4(i32::MIN)).unwrap_err().message,
        "integer out of range"
    );
    assert_eq!(
        negate(&Value::Int8(i64::MIN)).unwrap_err().message,
        "bigint out of range"
    );
    assert_eq!(text_of(&negate(&Value::Float8(0.0)).unwrap()), "-0");
    assert!(matches!(negate(&Value::Float4(f32::NAN)), Ok(Value::Float4(f)) if f.is_nan()));
    assert_eq!(text_of(&negate(&num("0.0")).unwrap()), "0.0");
    assert_eq!(text_of(&negate(&num("1.50")).unwrap()), "-1.50");
    assert!(negate(&Value::Null).unwrap().is_null());
    let e = negate(&text("a")).unwrap_err();
    assert_eq!(
        (e.code.0, e.message.as_str()),
        ("42883", "operator does not exist: - text")
    );
}

#[test]
fn random_integer_arithmetic_matches_i128() {
    let mut r = rng(5);
    let ops = [
        ArithOp::Add,
        ArithOp::Sub,
        ArithOp::Mul,
        ArithOp::Div,
        ArithOp::Mod,
    ];
    for _ in 0..5000 {
        let (a, b) = (
            random_value(&mut r, &DataType::Int4),
            random_value(&mut r, &DataType::Int2),
        );
        let op = ops[r.gen_range(0..ops.len())];
        let (x, y) = (a.as_i64().unwrap() as i128, b.as_i64().unwrap() as i128);
        let want = match op {
            ArithOp::Add => Some(x + y),
            ArithOp::Sub => Some(x - y),
            ArithOp::Mul => Some(x * y),
            ArithOp::Div => (y != 0).then(|| x / y),
            ArithOp::Mod => (y != 0).then(|| x % y),
        };
        match (want, arith(op, &a, &b)) {
            (None, Err(e)) => assert_eq!(e.code.0, "22012"),
            (Some(w), Ok(Value::Int4(got))) => assert_eq!(got as i128, w),
            (Some(w), Err(e)) => {
                assert!(i32::try_from(w).is_err(), "{a:?} {op:?} {b:?}");
                assert_eq!(e.message, "integer out of range");
            }
            (w, got) => panic!("{a:?} {op:?} {b:?}: want {w:?}, got {got:?}"),
        }
    }
}
