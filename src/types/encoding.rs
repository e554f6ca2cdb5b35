//! Storage encodings: order-preserving (memcomparable) keys for B+trees, and a compact
//! self-delimiting row format for the WAL and pages.
//!
//! Key format, per value: a tag byte (`0x01` present, `0x02` NULL, so NULLs sort last),
//! then for present values:
//! - bool: `0x00`/`0x01`;
//! - int2/int4/int8: the value as i64 with the sign bit flipped, big-endian (all widths of
//!   one value encode identically);
//! - float4/float8: the value as f64, sign-flipped IEEE bits (negative: all bits inverted),
//!   with -0 normalized to 0 and every NaN to one NaN that sorts above +Infinity;
//! - numeric: sign byte (`0x01` negative, `0x02` zero, `0x03` positive), then for non-zero
//!   values the decimal exponent and base-100 digit bytes ending in `0x00`, all inverted for
//!   negatives; trailing zeros are dropped, so `1.0` and `1.00` encode identically;
//! - text/bytea: the bytes with `0x00` escaped as `0x00 0xFF`, terminated by `0x00 0x01`;
//! - date: i32 sign-flipped big-endian; timestamp/timestamptz: i64 sign-flipped big-endian.
//!
//! Row format: varint column count, then per value a type tag and its payload: zigzag
//! varints for integers, dates and timestamps, raw little-endian IEEE bits for floats,
//! `sign<<7 | scale` plus a varint mantissa for numeric, varint length plus bytes for
//! text and bytea; booleans and NULL are tag-only. A `char(n)` value is stored without
//! its trailing blanks, which carry no meaning in bpchar; decoding pads it back to `n`
//! characters. (A fixed-width column of mostly blanks, such as pgbench's `filler`, would
//! otherwise take most of its row.)

use rust_decimal::Decimal;

use super::{DataType, Value};
use crate::error::{Error, Result, SqlState};

const KEY_PRESENT: u8 = 0x01;
const KEY_NULL: u8 = 0x02;

/// Append the order-preserving (memcomparable) encoding of a key tuple to `out`.
pub fn encode_key(values: &[Value], out: &mut Vec<u8>) {
    for v in values {
        encode_key_value(v, out);
    }
}

/// [`encode_key`] for columns of static types `types`: `char(n)` values have their
/// trailing blanks removed first, so keys order and compare with bpchar semantics.
pub fn encode_key_typed(values: &[Value], types: &[DataType], out: &mut Vec<u8>) {
    for (i, v) in values.iter().enumerate() {
        match (v, types.get(i)) {
            (Value::Text(s), Some(DataType::Char(_))) => {
                out.push(KEY_PRESENT);
                escape_bytes(s.trim_end_matches(' ').as_bytes(), out);
            }
            _ => encode_key_value(v, out),
        }
    }
}

fn escape_bytes(bytes: &[u8], out: &mut Vec<u8>) {
    for &b in bytes {
        out.push(b);
        if b == 0 {
            out.push(0xFF);
        }
    }
    out.extend_from_slice(&[0x00, 0x01]);
}

fn float_key(f: f64) -> [u8; 8] {
    let bits = if f.is_nan() {
        0x7FF8_0000_0000_0000
    } else if f == 0.0 {
        0
    } else {
        f.to_bits()
    };
    let ordered = if bits >> 63 == 1 {
        !bits
    } else {
        bits | 1 << 63
    };
    ordered.to_be_bytes()
}

fn numeric_key(d: &Decimal, out: &mut Vec<u8>) {
    if d.is_zero() {
        out.push(0x02);
        return;
    }
    let negative = d.is_sign_negative();
    let mut digits = d.mantissa().unsigned_abs().to_string().into_bytes();
    let exponent = digits.len() as i64 - d.scale() as i64;
    while digits.last() == Some(&b'0') {
        digits.pop();
    }
    let start = out.len();
    out.push((exponent + 64) as u8);
    for pair in digits.chunks(2) {
        let hi = pair[0] - b'0';
        let lo = pair.get(1).map_or(0, |c| c - b'0');
        out.push(hi * 10 + lo + 1);
    }
    out.push(0x00);
    if negative {
        for b in &mut out[start..] {
            *b = !*b;
        }
        out.insert(start, 0x01);
    } else {
        out.insert(start, 0x03);
    }
}

fn encode_key_value(v: &Value, out: &mut Vec<u8>) {
    if v.is_null() {
        out.push(KEY_NULL);
        return;
    }
    out.push(KEY_PRESENT);
    match v {
        Value::Null => {}
        Value::Bool(b) => out.push(*b as u8),
        Value::Int2(_) | Value::Int4(_) | Value::Int8(_) | Value::Oid(_) | Value::Reg(..) => {
            let i = v.as_i64().unwrap_or(0);
            out.extend_from_slice(&((i as u64) ^ (1 << 63)).to_be_bytes());
        }
        Value::Float4(f) => out.extend_from_slice(&float_key(*f as f64)),
        Value::Float8(f) => out.extend_from_slice(&float_key(*f)),
        Value::Numeric(d) => numeric_key(d, out),
        Value::Text(s) => escape_bytes(s.as_bytes(), out),
        Value::Bytea(b) => escape_bytes(b, out),
        Value::Uuid(u) => out.extend_from_slice(&u.to_be_bytes()),
        // By span, as intervals compare: '1 day' and '24 hours' are one key.
        Value::Interval(iv) => {
            out.extend_from_slice(&((iv.span() as u128) ^ (1 << 127)).to_be_bytes())
        }
        Value::Jsonb(j) => super::jsonb::encode_key(j, numeric_key, out),
        Value::Date(d) => out.extend_from_slice(&((*d as u32) ^ (1 << 31)).to_be_bytes()),
        Value::Timestamp(t) | Value::TimestampTz(t) => {
            out.extend_from_slice(&((*t as u64) ^ (1 << 63)).to_be_bytes())
        }
        // Each element after `0x02`, then `0x01`: a prefix sorts first. A record's
        // fields likewise, in order.
        Value::Array(_, items) | Value::Record(_, items) => {
            for item in items.iter() {
                out.push(0x02);
                encode_key_value(item, out);
            }
            out.push(0x01);
        }
    }
}

const T_NULL: u8 = 0;
const T_FALSE: u8 = 1;
const T_TRUE: u8 = 2;
const T_INT2: u8 = 3;
const T_INT4: u8 = 4;
const T_INT8: u8 = 5;
const T_FLOAT4: u8 = 6;
const T_FLOAT8: u8 = 7;
const T_NUMERIC: u8 = 8;
const T_TEXT: u8 = 9;
const T_BYTEA: u8 = 10;
const T_DATE: u8 = 11;
const T_TIMESTAMP: u8 = 12;
const T_TIMESTAMPTZ: u8 = 13;
const T_ARRAY: u8 = 14;
const T_UUID: u8 = 15;
const T_INTERVAL: u8 = 16;
/// A jsonb document, as its text.
const T_JSONB: u8 = 17;

fn put_varint(mut v: u128, out: &mut Vec<u8>) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

fn zigzag(v: i64) -> u128 {
    ((v << 1) ^ (v >> 63)) as u64 as u128
}

/// Append a compact self-delimiting encoding of a row whose columns have `types` to
/// `out` (for WAL and pages).
pub fn encode_row(values: &[Value], types: &[DataType], out: &mut Vec<u8>) {
    debug_assert_eq!(values.len(), types.len(), "a type for every column");
    put_varint(values.len() as u128, out);
    for (i, v) in values.iter().enumerate() {
        encode_value(v, types.get(i), out);
    }
}

/// One value of a row (or an array element): its tag and payload.
fn encode_value(v: &Value, ty: Option<&DataType>, out: &mut Vec<u8>) {
    match v {
        Value::Null => out.push(T_NULL),
        Value::Bool(b) => out.push(if *b { T_TRUE } else { T_FALSE }),
        Value::Int2(i) => {
            out.push(T_INT2);
            put_varint(zigzag(*i as i64), out);
        }
        Value::Int4(i) => {
            out.push(T_INT4);
            put_varint(zigzag(*i as i64), out);
        }
        Value::Int8(i) => {
            out.push(T_INT8);
            put_varint(zigzag(*i), out);
        }
        // Catalog types are never stored in tables (see `DataType::is_catalog_only`);
        // an oid is written as the number it is.
        Value::Oid(v) | Value::Reg(v, _) => {
            out.push(T_INT8);
            put_varint(zigzag(*v as i64), out);
        }
        Value::Float4(f) => {
            out.push(T_FLOAT4);
            out.extend_from_slice(&f.to_bits().to_le_bytes());
        }
        Value::Float8(f) => {
            out.push(T_FLOAT8);
            out.extend_from_slice(&f.to_bits().to_le_bytes());
        }
        Value::Numeric(d) => {
            out.push(T_NUMERIC);
            out.push((d.is_sign_negative() as u8) << 7 | d.scale() as u8);
            put_varint(d.mantissa().unsigned_abs(), out);
        }
        Value::Text(s) => {
            let s = match ty {
                Some(DataType::Char(_)) => s.trim_end_matches(' '),
                _ => s,
            };
            out.push(T_TEXT);
            put_varint(s.len() as u128, out);
            out.extend_from_slice(s.as_bytes());
        }
        Value::Bytea(b) => {
            out.push(T_BYTEA);
            put_varint(b.len() as u128, out);
            out.extend_from_slice(b);
        }
        Value::Uuid(u) => {
            out.push(T_UUID);
            out.extend_from_slice(&u.to_be_bytes());
        }
        Value::Interval(iv) => {
            out.push(T_INTERVAL);
            put_varint(zigzag(iv.months as i64), out);
            put_varint(zigzag(iv.days as i64), out);
            put_varint(zigzag(iv.micros), out);
        }
        Value::Jsonb(j) => {
            let s = j.to_string();
            out.push(T_JSONB);
            put_varint(s.len() as u128, out);
            out.extend_from_slice(s.as_bytes());
        }
        Value::Date(d) => {
            out.push(T_DATE);
            put_varint(zigzag(*d as i64), out);
        }
        Value::Timestamp(t) => {
            out.push(T_TIMESTAMP);
            put_varint(zigzag(*t), out);
        }
        Value::TimestampTz(t) => {
            out.push(T_TIMESTAMPTZ);
            put_varint(zigzag(*t), out);
        }
        Value::Array(e, items) => {
            out.push(T_ARRAY);
            put_varint(items.len() as u128, out);
            for item in items.iter() {
                encode_value(item, Some(e), out);
            }
        }
        // Records are catalog values, never stored in tables (`DataType::is_catalog_only`):
        // written as the list of their fields, which no column accepts back.
        Value::Record(types, fields) => {
            out.push(T_ARRAY);
            put_varint(fields.len() as u128, out);
            for ((_, t), v) in types.iter().zip(fields.iter()) {
                encode_value(v, Some(t), out);
            }
        }
    }
}

fn corrupt(what: &str) -> Error {
    Error::new(SqlState("XX001"), format!("row data is corrupted: {what}"))
}

struct Reader<'a> {
    b: &'a [u8],
    i: usize,
}

impl<'a> Reader<'a> {
    fn byte(&mut self) -> Result<u8> {
        let b = *self
            .b
            .get(self.i)
            .ok_or_else(|| corrupt("unexpected end of data"))?;
        self.i += 1;
        Ok(b)
    }

    fn take(&mut self, n: usize) -> Result<&'a [u8]> {
        let end = self.i.checked_add(n).filter(|e| *e <= self.b.len());
        let end = end.ok_or_else(|| corrupt("unexpected end of data"))?;
        let s = &self.b[self.i..end];
        self.i = end;
        Ok(s)
    }

    /// An unsigned LEB128 varint of at most `bits` bits.
    fn varint(&mut self, bits: u32) -> Result<u128> {
        let mut v: u128 = 0;
        let mut shift = 0;
        loop {
            let b = self.byte()?;
            let part = (b & 0x7F) as u128;
            if shift >= bits || (bits - shift < 7 && part >> (bits - shift) != 0) {
                return Err(corrupt("varint out of range"));
            }
            v |= part << shift;
            if b & 0x80 == 0 {
                return Ok(v);
            }
            shift += 7;
        }
    }

    fn signed(&mut self) -> Result<i64> {
        let z = self.varint(64)? as u64;
        Ok((z >> 1) as i64 ^ -((z & 1) as i64))
    }

    fn len(&mut self) -> Result<usize> {
        usize::try_from(self.varint(64)?).map_err(|_| corrupt("length out of range"))
    }
}

/// The row tag a column of type `ty` may hold (besides NULL).
fn accepts(ty: &DataType, tag: u8) -> bool {
    match ty {
        DataType::Bool => tag == T_FALSE || tag == T_TRUE,
        // A narrower integer: written before ALTER COLUMN ... TYPE widened the column.
        DataType::Int2 => tag == T_INT2,
        DataType::Int4 => tag == T_INT4 || tag == T_INT2,
        DataType::Int8 => tag == T_INT8 || tag == T_INT4 || tag == T_INT2,
        DataType::Float4 => tag == T_FLOAT4,
        DataType::Float8 => tag == T_FLOAT8,
        DataType::Numeric(_) => tag == T_NUMERIC,
        DataType::Text
        | DataType::Varchar(_)
        | DataType::Char(_)
        | DataType::Unknown
        | DataType::Name
        | DataType::InternalChar
        | DataType::Json => tag == T_TEXT,
        DataType::Oid
        | DataType::RegClass
        | DataType::RegType
        | DataType::RegNamespace
        | DataType::RegProc
        | DataType::Int2Vector
        | DataType::OidVector
        | DataType::Record(_)
        | DataType::Void => false,
        DataType::Array(_) => tag == T_ARRAY,
        DataType::Bytea => tag == T_BYTEA,
        DataType::Uuid => tag == T_UUID,
        DataType::Interval => tag == T_INTERVAL,
        DataType::Jsonb => tag == T_JSONB,
        DataType::Date => tag == T_DATE,
        DataType::Timestamp => tag == T_TIMESTAMP,
        DataType::TimestampTz => tag == T_TIMESTAMPTZ,
    }
}

fn decode_value(r: &mut Reader, ty: &DataType) -> Result<Value> {
    let tag = r.byte()?;
    if tag == T_NULL {
        return Ok(Value::Null);
    }
    if !accepts(ty, tag) {
        return Err(corrupt(&format!(
            "tag {tag} for a column of type {}",
            ty.name()
        )));
    }
    let range = |_| corrupt("value out of range");
    Ok(match tag {
        T_FALSE => Value::Bool(false),
        T_TRUE => Value::Bool(true),
        // As the column's type, which is as wide or wider.
        T_INT2 | T_INT4 | T_INT8 => {
            let v = r.signed()?;
            match ty {
                DataType::Int2 => Value::Int2(i16::try_from(v).map_err(range)?),
                DataType::Int4 => Value::Int4(i32::try_from(v).map_err(range)?),
                _ => Value::Int8(v),
            }
        }
        T_FLOAT4 => {
            let b = r.take(4)?;
            Value::Float4(f32::from_bits(u32::from_le_bytes([b[0], b[1], b[2], b[3]])))
        }
        T_FLOAT8 => {
            let mut a = [0u8; 8];
            a.copy_from_slice(r.take(8)?);
            Value::Float8(f64::from_bits(u64::from_le_bytes(a)))
        }
        T_NUMERIC => {
            let flags = r.byte()?;
            let scale = (flags & 0x7F) as u32;
            let mantissa = r.varint(96)? as i128;
            let signed = if flags & 0x80 != 0 {
                -mantissa
            } else {
                mantissa
            };
            let d = Decimal::try_from_i128_with_scale(signed, scale)
                .map_err(|_| corrupt("bad numeric"))?;
            Value::Numeric(d)
        }
        T_TEXT => {
            let n = r.len()?;
            let s =
                std::str::from_utf8(r.take(n)?).map_err(|_| corrupt("invalid UTF-8 in text"))?;
            match ty {
                DataType::Char(width) => Value::Text(pad_blanks(s, *width as usize)),
                _ => Value::Text(s.to_string()),
            }
        }
        T_BYTEA => {
            let n = r.len()?;
            Value::Bytea(r.take(n)?.to_vec())
        }
        T_UUID => {
            let mut a = [0u8; 16];
            a.copy_from_slice(r.take(16)?);
            Value::Uuid(u128::from_be_bytes(a))
        }
        T_INTERVAL => Value::Interval(super::Interval {
            months: i32::try_from(r.signed()?).map_err(range)?,
            days: i32::try_from(r.signed()?).map_err(range)?,
            micros: r.signed()?,
        }),
        T_JSONB => {
            let n = r.len()?;
            let s =
                std::str::from_utf8(r.take(n)?).map_err(|_| corrupt("invalid UTF-8 in jsonb"))?;
            let j = super::jsonb::parse(s).map_err(|_| corrupt("bad jsonb"))?;
            Value::Jsonb(std::sync::Arc::new(j))
        }
        T_ARRAY => {
            let Some(e) = ty.element().and_then(|e| super::static_element(&e)) else {
                return Err(corrupt("array of an unknown type"));
            };
            let n = r.len()?;
            let mut items = Vec::with_capacity(n.min(1 << 16));
            for _ in 0..n {
                items.push(decode_value(r, e)?);
            }
            Value::Array(e, items.into())
        }
        T_DATE => Value::Date(i32::try_from(r.signed()?).map_err(range)?),
        T_TIMESTAMP => Value::Timestamp(r.signed()?),
        _ => Value::TimestampTz(r.signed()?),
    })
}

/// `s` padded with blanks to `width` characters, as a `char(width)` value holds it.
fn pad_blanks(s: &str, width: usize) -> String {
    let blanks = width.saturating_sub(s.chars().count());
    let mut padded = String::with_capacity(s.len() + blanks);
    padded.push_str(s);
    padded.extend(std::iter::repeat_n(' ', blanks));
    padded
}

/// Decode one row from the start of `bytes`, returning it and the number of bytes used.
pub fn decode_row_prefix(bytes: &[u8], types: &[DataType]) -> Result<(Vec<Value>, usize)> {
    let mut r = Reader { b: bytes, i: 0 };
    let count = r.len()?;
    if count != types.len() {
        return Err(corrupt(&format!(
            "{count} columns where {} were expected",
            types.len()
        )));
    }
    let values = types
        .iter()
        .map(|ty| decode_value(&mut r, ty))
        .collect::<Result<Vec<_>>>()?;
    Ok((values, r.i))
}

/// Decode the first `n` columns of a row encoded by [`encode_row`] of a table whose
/// columns have `types` now, without reading the rest; never panics. The image may hold
/// fewer columns (written before columns were added): those read as `missing` gives them
/// (see [`decode_row_filled`]).
pub fn decode_leading_columns(
    bytes: &[u8],
    types: &[DataType],
    n: usize,
    missing: &[Value],
) -> Result<Vec<Value>> {
    let mut r = Reader { b: bytes, i: 0 };
    let count = r.len()?;
    if count > types.len() || n > types.len() {
        return Err(corrupt(&format!(
            "{count} columns where at most {} were expected",
            types.len()
        )));
    }
    let stored = n.min(count);
    let mut values = types[..stored]
        .iter()
        .map(|ty| decode_value(&mut r, ty))
        .collect::<Result<Vec<_>>>()?;
    values.extend((stored..n).map(|i| missing.get(i).cloned().unwrap_or(Value::Null)));
    Ok(values)
}

/// Decode a row image of a table whose columns have `types` now. An image written before
/// columns were added holds only the leading ones; each later column reads as its entry
/// in `missing` (the value it was added with: its default then, or NULL). Never panics.
pub fn decode_row_filled(
    bytes: &[u8],
    types: &[DataType],
    missing: &[Value],
) -> Result<Vec<Value>> {
    let mut r = Reader { b: bytes, i: 0 };
    let count = r.len()?;
    if count > types.len() {
        return Err(corrupt(&format!(
            "{count} columns where at most {} were expected",
            types.len()
        )));
    }
    let mut values = types[..count]
        .iter()
        .map(|ty| decode_value(&mut r, ty))
        .collect::<Result<Vec<_>>>()?;
    if r.i != bytes.len() {
        return Err(corrupt("trailing bytes after row"));
    }
    values.extend((count..types.len()).map(|i| missing.get(i).cloned().unwrap_or(Value::Null)));
    Ok(values)
}

/// Decode a row encoded by [`encode_row`] whose columns have `types`; never panics.
pub fn decode_row(bytes: &[u8], types: &[DataType]) -> Result<Vec<Value>> {
    let (values, used) = decode_row_prefix(bytes, types)?;
    if used != bytes.len() {
        return Err(corrupt("trailing bytes after row"));
    }
    Ok(values)
}
