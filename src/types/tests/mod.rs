//! Unit tests for the types module: I/O formats, casts, operators and encodings.

mod cast;
mod encoding;
mod io;
mod jsonb;
mod ops;
mod zone;

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use rust_decimal::Decimal;

use super::{DataType, Value};

pub(super) fn rng(seed: u64) -> StdRng {
    StdRng::seed_from_u64(seed)
}

pub(super) fn dec(s: &str) -> Decimal {
    s.parse().expect("test decimal")
}

/// Exact equality: same variant, same float bits, same numeric scale.
pub(super) fn identical(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Float4(x), Value::Float4(y)) => x.to_bits() == y.to_bits(),
        (Value::Float8(x), Value::Float8(y)) => x.to_bits() == y.to_bits(),
        (Value::Numeric(x), Value::Numeric(y)) => x == y && x.scale() == y.scale(),
        _ => std::mem::discriminant(a) == std::mem::discriminant(b) && a == b,
    }
}

pub(super) fn text_of(v: &Value) -> String {
    let mut out = Vec::new();
    super::encode_text(v, &mut out);
    String::from_utf8(out).expect("text output is UTF-8")
}

/// The error code of a failed result (panics if it succeeded, failing the test).
pub(super) fn code<T: std::fmt::Debug>(r: crate::error::Result<T>) -> &'static str {
    r.expect_err("expected an error").code.0
}

pub(super) fn random_decimal(r: &mut StdRng) -> Decimal {
    let scale = r.gen_range(0..=28u32);
    let mantissa: i128 = match r.gen_range(0..4) {
        0 => r.gen_range(-1000..1000),
        1 => r.gen_range(-1_000_000_000i128..1_000_000_000),
        2 => r.gen_range(-(1i128 << 62)..(1i128 << 62)),
        _ => r.gen_range(-((1i128 << 96) - 1)..(1i128 << 96)),
    };
    Decimal::from_i128_with_scale(mantissa, scale)
}

pub(super) fn random_text(r: &mut StdRng) -> String {
    const ALPHABET: [char; 8] = ['\0', ' ', 'a', 'b', 'z', '\u{7f}', '\u{e9}', '\u{10348}'];
    let len = r.gen_range(0..6);
    (0..len)
        .map(|_| ALPHABET[r.gen_range(0..ALPHABET.len())])
        .collect()
}

pub(super) fn random_float(r: &mut StdRng) -> f64 {
    const SPECIAL: [f64; 10] = [
        0.0,
        -0.0,
        1.0,
        -1.0,
        f64::INFINITY,
        f64::NEG_INFINITY,
        f64::MIN_POSITIVE,
        5e-324,
        f64::MAX,
        0.1,
    ];
    match r.gen_range(0..4) {
        0 => SPECIAL[r.gen_range(0..SPECIAL.len())],
        1 => f64::NAN,
        2 => r.gen_range(-1000.0..1000.0),
        _ => f64::from_bits(r.gen()),
    }
}

/// A random non-NULL value of the given type, valid for that type.
pub(super) fn random_value(r: &mut StdRng, ty: &DataType) -> Value {
    use super::datetime::{DATE_NOBEGIN, DATE_NOEND, TIMESTAMP_NOBEGIN, TIMESTAMP_NOEND};
    match ty {
        DataType::Bool => Value::Bool(r.gen()),
        DataType::Int2 => Value::Int2(r.gen()),
        DataType::Int4 => Value::Int4(if r.gen_bool(0.5) {
            r.gen_range(-5..5)
        } else {
            r.gen()
        }),
        DataType::Int8 => Value::Int8(if r.gen_bool(0.5) {
            r.gen_range(-5..5)
        } else {
            r.gen()
        }),
        DataType::Float4 => Value::Float4(random_float(r) as f32),
        DataType::Float8 => Value::Float8(random_float(r)),
        DataType::Numeric(_) => Value::Numeric(super::numeric::fix_zero(random_decimal(r))),
        DataType::Text | DataType::Varchar(_) | DataType::Char(_) | DataType::Unknown => {
            let s = random_text(r).replace('\0', "");
            Value::Text(super::io::apply_string_typmod(s, ty, true).expect("explicit fit"))
        }
        DataType::Oid
        | DataType::RegClass
        | DataType::RegType
        | DataType::RegNamespace
        | DataType::RegProc => Value::Oid(r.gen()),
        DataType::Name | DataType::InternalChar => Value::Text("n".into()),
        DataType::Json => Value::Text("{\"a\": [1, null]}".into()),
        DataType::Jsonb => Value::Jsonb(std::sync::Arc::new(random_jsonb(r, 0))),
        DataType::Record(fields) => Value::Record(
            fields,
            fields
                .iter()
                .map(|(_, t)| random_value(r, t))
                .collect::<Vec<_>>()
                .into(),
        ),
        DataType::Void => Value::Text(String::new()),
        DataType::Uuid => Value::Uuid(r.gen()),
        DataType::Interval => Value::Interval(super::Interval {
            months: r.gen_range(-1000..1000),
            days: r.gen_range(-1000..1000),
            micros: r.gen_range(-1_000_000_000_000..1_000_000_000_000),
        }),
        DataType::Int2Vector | DataType::OidVector => {
            let e = ty.element().unwrap_or(DataType::Int2);
            let marker = match ty {
                DataType::OidVector => &super::OIDVECTOR,
                _ => &super::INT2VECTOR,
            };
            Value::Array(
                marker,
                (0..r.gen_range(0..3))
                    .map(|_| random_value(r, &e))
                    .collect::<Vec<_>>()
                    .into(),
            )
        }
        DataType::Array(e) => Value::Array(
            e,
            (0..r.gen_range(0..3))
                .map(|_| random_value(r, e))
                .collect::<Vec<_>>()
                .into(),
        ),
        DataType::Bytea => Value::Bytea(
            (0..r.gen_range(0..5))
                .map(|_| [0u8, 1, 0xFF, b'a'][r.gen_range(0..4)])
                .collect(),
        ),
        DataType::Date => Value::Date(match r.gen_range(0..10) {
            0 => DATE_NOBEGIN,
            1 => DATE_NOEND,
            _ => r.gen_range(-2_451_545..2_145_031_949),
        }),
        DataType::Timestamp | DataType::TimestampTz => {
            let t = match r.gen_range(0..10) {
                0 => TIMESTAMP_NOBEGIN,
                1 => TIMESTAMP_NOEND,
                2 => r.gen_range(-10_000_000_000..10_000_000_000) * 1_000_000,
                _ => r.gen_range(-211_813_488_000_000_000..9_223_371_331_200_000_000),
            };
            if *ty == DataType::Timestamp {
                Value::Timestamp(t)
            } else {
                Value::TimestampTz(t)
            }
        }
    }
}

/// A random document: scalars of every kind (strings of few letters, so that equal ones
/// and prefixes meet), arrays and objects up to three deep.
pub(super) fn random_jsonb(r: &mut StdRng, depth: usize) -> super::Jsonb {
    use super::Jsonb;
    let word = |r: &mut StdRng| -> String {
        (0..r.gen_range(0..3))
            .map(|_| ['a', 'b', '\u{e9}', '"'][r.gen_range(0..4)])
            .collect()
    };
    match r.gen_range(0..if depth >= 3 { 4 } else { 6 }) {
        0 => Jsonb::Null,
        1 => Jsonb::Bool(r.gen()),
        2 => Jsonb::Number(super::numeric::fix_zero(Decimal::new(
            r.gen_range(-20..20),
            r.gen_range(0..3),
        ))),
        3 => Jsonb::String(word(r)),
        4 => Jsonb::Array(
            (0..r.gen_range(0..3))
                .map(|_| random_jsonb(r, depth + 1))
                .collect(),
        ),
        _ => Jsonb::object(
            (0..r.gen_range(0..3))
                .map(|_| (word(r), random_jsonb(r, depth + 1)))
                .collect(),
        ),
    }
}

pub(super) const ALL_TYPES: [DataType; 16] = [
    DataType::Bool,
    DataType::Int2,
    DataType::Int4,
    DataType::Int8,
    DataType::Float4,
    DataType::Float8,
    DataType::Numeric(None),
    DataType::Text,
    DataType::Varchar(None),
    DataType::Char(5),
    DataType::Bytea,
    DataType::Date,
    DataType::Timestamp,
    DataType::TimestampTz,
    DataType::Unknown,
    DataType::Jsonb,
];
