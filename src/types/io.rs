//! Text and binary input/output functions, matching PostgreSQL's `*in`/`*out` and
//! `*recv`/`*send` for each supported type.

use super::datetime::{format_date, format_timestamp, is_valid_date, is_valid_timestamp};
use super::float::{format_f32, format_f64, is_pg_space, parse_f32, parse_f64, trim_pg};
use super::numeric::{
    apply_typmod, decode_numeric_binary, encode_numeric_binary, fix_zero, parse_numeric,
};
use super::{DataType, Value};
use crate::err;
use crate::error::{Error, Result, SqlState};

/// Input function: parse PostgreSQL text format for `ty` (22P02 / 22007 / 22003 on bad input).
pub fn decode_text(ty: &DataType, text: &str) -> Result<Value> {
    Ok(match ty {
        DataType::Bool => Value::Bool(parse_bool(text)?),
        DataType::Int2 => {
            Value::Int2(parse_int(text, i16::MIN as i64, i16::MAX as i64, ty)? as i16)
        }
        DataType::Int4 => {
            Value::Int4(parse_int(text, i32::MIN as i64, i32::MAX as i64, ty)? as i32)
        }
        DataType::Int8 => Value::Int8(parse_int(text, i64::MIN, i64::MAX, ty)?),
        DataType::Float4 => Value::Float4(parse_f32(text)?),
        DataType::Float8 => Value::Float8(parse_f64(text)?),
        DataType::Numeric(typmod) => {
            let d = parse_numeric(text)?;
            Value::Numeric(match typmod {
                Some((p, s)) => apply_typmod(d, *p, *s)?,
                None => d,
            })
        }
        DataType::Text | DataType::Unknown | DataType::Varchar(_) | DataType::Char(_) => {
            Value::Text(apply_string_typmod(text.to_string(), ty, false)?)
        }
        DataType::Name => Value::Text(truncate_name(text)),
        DataType::InternalChar => Value::Text(text.chars().take(1).collect()),
        DataType::Json => Value::Text(check_json(text)?),
        DataType::Oid => Value::Oid(parse_int(text, i32::MIN as i64, u32::MAX as i64, ty)? as u32),
        // Names are looked up by the caller, which has the catalog.
        DataType::RegClass | DataType::RegType | DataType::RegNamespace | DataType::RegProc => {
            let oid = parse_int(text, 0, u32::MAX as i64, &DataType::Oid)? as u32;
            Value::Reg(oid, text.trim().into())
        }
        DataType::Bytea => Value::Bytea(parse_bytea(text)?),
        DataType::Uuid => Value::Uuid(parse_uuid(text)?),
        DataType::Interval => Value::Interval(super::parse_interval(text)?),
        DataType::Jsonb => Value::Jsonb(std::sync::Arc::new(super::jsonb::parse(text)?)),
        DataType::Int2Vector | DataType::OidVector => parse_vector(ty, text)?,
        DataType::Array(e) => super::array::parse_array(e, text)?,
        DataType::Record(_) => return Err(record_input()),
        DataType::Void => Value::Text(String::new()),
        DataType::Date => Value::Date(super::datetime::parse_date(text)?),
        DataType::Timestamp => Value::Timestamp(super::datetime::parse_timestamp(text, false)?),
        DataType::TimestampTz => Value::TimestampTz(super::datetime::parse_timestamp(text, true)?),
    })
}

/// The static marker a vector type's values carry.
fn vector_of(ty: &DataType) -> &'static DataType {
    match ty {
        DataType::OidVector => &super::OIDVECTOR,
        _ => &super::INT2VECTOR,
    }
}

/// `int2vectorin` / `oidvectorin`: numbers separated by spaces.
fn parse_vector(ty: &DataType, text: &str) -> Result<Value> {
    let element = ty.element().unwrap_or(DataType::Int2);
    let items = text
        .split_ascii_whitespace()
        .map(|t| decode_text(&element, t))
        .collect::<Result<Vec<_>>>()?;
    Ok(Value::Array(vector_of(ty), items.into()))
}

/// `uuid_in`: 32 hex digits, optionally in braces, with a hyphen allowed after any
/// group of four (the canonical form is 8-4-4-4-12).
fn parse_uuid(text: &str) -> Result<u128> {
    let bad = || {
        err!(
            INVALID_TEXT_REPRESENTATION,
            "invalid input syntax for type uuid: \"{}\"",
            text
        )
    };
    let s = text.trim_matches(|c: char| c.is_ascii_whitespace());
    let s = match s.strip_prefix('{') {
        Some(inner) => inner.strip_suffix('}').ok_or_else(bad)?,
        None => s,
    };
    let mut value: u128 = 0;
    let mut digits = 0;
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        let d = c.to_digit(16).ok_or_else(bad)?;
        value = (value << 4) | d as u128;
        digits += 1;
        if digits % 4 == 0 && digits < 32 && chars.peek() == Some(&'-') {
            chars.next();
        }
        if digits > 32 {
            return Err(bad());
        }
    }
    if digits != 32 {
        return Err(bad());
    }
    Ok(value)
}

/// `uuid_out`: lower-case 8-4-4-4-12.
pub fn format_uuid(u: u128) -> String {
    let h = format!("{u:032x}");
    format!(
        "{}-{}-{}-{}-{}",
        &h[..8],
        &h[8..12],
        &h[12..16],
        &h[16..20],
        &h[20..]
    )
}

/// Output function: append PostgreSQL's text format of `value` (not NULL) to `out`.
pub fn encode_text(value: &Value, out: &mut Vec<u8>) {
    match value {
        Value::Text(s) => out.extend_from_slice(s.as_bytes()),
        Value::Bytea(b) => {
            out.extend_from_slice(b"\\x");
            out.extend_from_slice(hex::encode(b).as_bytes());
        }
        _ => out.extend_from_slice(format_text(value).as_bytes()),
    }
}

/// The text output of a value as a `String` (empty for NULL).
pub fn format_text(value: &Value) -> String {
    let mut s = String::new();
    match value {
        Value::Null => {}
        Value::Bool(b) => s.push(if *b { 't' } else { 'f' }),
        Value::Int2(v) => s = v.to_string(),
        Value::Int4(v) => s = v.to_string(),
        Value::Int8(v) => s = v.to_string(),
        Value::Float4(v) => format_f32(*v, &mut s),
        Value::Float8(v) => format_f64(*v, &mut s),
        Value::Numeric(d) => s = fix_zero(*d).to_string(),
        Value::Text(t) => s.push_str(t),
        Value::Bytea(b) => {
            s.push_str("\\x");
            s.push_str(&hex::encode(b));
        }
        Value::Date(d) => format_date(*d, &mut s),
        Value::Timestamp(t) => format_timestamp(*t, false, &mut s),
        Value::TimestampTz(t) => format_timestamp(*t, true, &mut s),
        Value::Oid(v) => s = v.to_string(),
        Value::Reg(_, name) => s.push_str(name),
        Value::Uuid(u) => s = format_uuid(*u),
        Value::Interval(iv) => super::format_interval(iv, &mut s),
        Value::Jsonb(j) => j.write(&mut s),
        Value::Array(e, items) if e.is_vector() => {
            let shown: Vec<String> = items.iter().map(format_text).collect();
            s = shown.join(" ");
        }
        Value::Array(_, items) => super::array::format_array(items, &mut s),
        Value::Record(_, fields) => format_record(fields, &mut s),
    }
    s
}

/// `record_out`: `(1,abc,)`, a field quoted when empty or holding a delimiter, a quote,
/// a backslash or white space (doubling quotes and backslashes inside), NULL as nothing.
fn format_record(fields: &[Value], s: &mut String) {
    s.push('(');
    for (i, v) in fields.iter().enumerate() {
        if i > 0 {
            s.push(',');
        }
        if v.is_null() {
            continue;
        }
        let text = format_text(v);
        let quote = text.is_empty()
            || text
                .chars()
                .any(|c| matches!(c, '(' | ')' | ',' | '"' | '\\') || c.is_whitespace());
        if quote {
            s.push('"');
            for c in text.chars() {
                if c == '"' || c == '\\' {
                    s.push(c);
                }
                s.push(c);
            }
            s.push('"');
        } else {
            s.push_str(&text);
        }
    }
    s.push(')');
}

/// Input of an anonymous `record`: PostgreSQL refuses it too.
fn record_input() -> Error {
    err!(
        FEATURE_NOT_SUPPORTED,
        "input of anonymous composite types is not implemented"
    )
}

fn insufficient() -> Error {
    err!(
        INVALID_BINARY_REPRESENTATION,
        "insufficient data left in message"
    )
}

fn wrong_format() -> Error {
    err!(
        INVALID_BINARY_REPRESENTATION,
        "incorrect binary data format"
    )
}

fn fixed<const N: usize>(bytes: &[u8]) -> Result<[u8; N]> {
    match bytes.len().cmp(&N) {
        std::cmp::Ordering::Less => Err(insufficient()),
        std::cmp::Ordering::Greater => Err(wrong_format()),
        std::cmp::Ordering::Equal => {
            let mut a = [0u8; N];
            a.copy_from_slice(bytes);
            Ok(a)
        }
    }
}

/// 22021 for an invalid byte sequence, showing its bytes as PostgreSQL does.
fn invalid_byte_sequence(sequence: &[u8]) -> Error {
    let shown: Vec<String> = sequence.iter().map(|b| format!("0x{b:02x}")).collect();
    Error::new(
        SqlState::CHARACTER_NOT_IN_REPERTOIRE,
        format!(
            "invalid byte sequence for encoding \"UTF8\": {}",
            shown.join(" ")
        ),
    )
}

/// Check that client bytes are valid UTF-8 (22021 otherwise), reporting the offending
/// bytes as PostgreSQL does.
pub fn utf8(bytes: &[u8]) -> Result<&str> {
    std::str::from_utf8(bytes).map_err(|e| {
        let start = e.valid_up_to();
        let len = e.error_len().unwrap_or(bytes.len() - start).max(1);
        invalid_byte_sequence(&bytes[start..start.saturating_add(len).min(bytes.len())])
    })
}

/// Validate client text as UTF-8 without NUL bytes (22021), as `pg_verifymbstr` does:
/// whichever offending byte comes first is reported.
pub fn utf8_text(bytes: &[u8]) -> Result<&str> {
    let valid_up_to = match std::str::from_utf8(bytes) {
        Ok(_) => bytes.len(),
        Err(e) => e.valid_up_to(),
    };
    match bytes[..valid_up_to].iter().position(|&b| b == 0) {
        Some(at) => Err(invalid_byte_sequence(&bytes[at..at + 1])),
        None => utf8(bytes),
    }
}

/// Binary receive function for `ty` (22P03 on malformed bytes).
pub fn decode_binary(ty: &DataType, bytes: &[u8]) -> Result<Value> {
    Ok(match ty {
        DataType::Bool => Value::Bool(fixed::<1>(bytes)?[0] != 0),
        DataType::Int2 => Value::Int2(i16::from_be_bytes(fixed(bytes)?)),
        DataType::Int4 => Value::Int4(i32::from_be_bytes(fixed(bytes)?)),
        DataType::Int8 => Value::Int8(i64::from_be_bytes(fixed(bytes)?)),
        DataType::Float4 => Value::Float4(f32::from_bits(u32::from_be_bytes(fixed(bytes)?))),
        DataType::Float8 => Value::Float8(f64::from_bits(u64::from_be_bytes(fixed(bytes)?))),
        DataType::Numeric(typmod) => {
            let d = decode_numeric_binary(bytes)?;
            Value::Numeric(match typmod {
                Some((p, s)) => apply_typmod(d, *p, *s)?,
                None => d,
            })
        }
        DataType::Text | DataType::Unknown | DataType::Varchar(_) | DataType::Char(_) => {
            Value::Text(apply_string_typmod(
                utf8_text(bytes)?.to_string(),
                ty,
                false,
            )?)
        }
        DataType::Name => Value::Text(truncate_name(utf8_text(bytes)?)),
        DataType::InternalChar => Value::Text(utf8_text(bytes)?.chars().take(1).collect()),
        DataType::Json => Value::Text(check_json(utf8_text(bytes)?)?),
        DataType::Oid => Value::Oid(u32::from_be_bytes(fixed(bytes)?)),
        DataType::RegClass | DataType::RegType | DataType::RegNamespace | DataType::RegProc => {
            let oid = u32::from_be_bytes(fixed(bytes)?);
            Value::Reg(oid, oid.to_string().into())
        }
        DataType::Bytea => Value::Bytea(bytes.to_vec()),
        DataType::Uuid => Value::Uuid(u128::from_be_bytes(fixed(bytes)?)),
        // jsonb_recv: a version byte (1), then the text.
        DataType::Jsonb => match bytes.split_first() {
            Some((1, text)) => {
                Value::Jsonb(std::sync::Arc::new(super::jsonb::parse(utf8_text(text)?)?))
            }
            _ => {
                return Err(err!(
                    INVALID_BINARY_REPRESENTATION,
                    "unsupported jsonb version number {}",
                    bytes.first().copied().unwrap_or(0)
                ))
            }
        },
        DataType::Interval => {
            // interval_send: microseconds, days, months.
            let b: [u8; 16] = fixed(bytes)?;
            let micros = i64::from_be_bytes([b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7]]);
            let days = i32::from_be_bytes([b[8], b[9], b[10], b[11]]);
            let months = i32::from_be_bytes([b[12], b[13], b[14], b[15]]);
            Value::Interval(super::Interval {
                months,
                days,
                micros,
            })
        }
        DataType::Int2Vector | DataType::OidVector => {
            let element = ty.element().unwrap_or(DataType::Int2);
            match super::array::decode_array_binary(&element, bytes)? {
                Value::Array(_, items) => Value::Array(vector_of(ty), items),
                other => other,
            }
        }
        DataType::Array(e) => super::array::decode_array_binary(e, bytes)?,
        DataType::Record(_) => return Err(record_input()),
        DataType::Void => Value::Text(String::new()),
        DataType::Date => {
            let d = i32::from_be_bytes(fixed(bytes)?);
            if !is_valid_date(d) {
                return Err(err!(DATETIME_FIELD_OVERFLOW, "date out of range"));
            }
            Value::Date(d)
        }
        DataType::Timestamp | DataType::TimestampTz => {
            let t = i64::from_be_bytes(fixed(bytes)?);
            if !is_valid_timestamp(t) {
                return Err(err!(DATETIME_FIELD_OVERFLOW, "timestamp out of range"));
            }
            if *ty == DataType::Timestamp {
                Value::Timestamp(t)
            } else {
                Value::TimestampTz(t)
            }
        }
    })
}

/// Binary send function: append PostgreSQL's binary format of `value` (not NULL) to `out`.
pub fn encode_binary(value: &Value, out: &mut Vec<u8>) {
    match value {
        Value::Null => {}
        Value::Bool(b) => out.push(*b as u8),
        Value::Int2(v) => out.extend_from_slice(&v.to_be_bytes()),
        Value::Int4(v) => out.extend_from_slice(&v.to_be_bytes()),
        Value::Int8(v) => out.extend_from_slice(&v.to_be_bytes()),
        Value::Float4(v) => out.extend_from_slice(&v.to_bits().to_be_bytes()),
        Value::Float8(v) => out.extend_from_slice(&v.to_bits().to_be_bytes()),
        Value::Numeric(d) => encode_numeric_binary(d, out),
        Value::Text(s) => out.extend_from_slice(s.as_bytes()),
        Value::Bytea(b) => out.extend_from_slice(b),
        Value::Uuid(u) => out.extend_from_slice(&u.to_be_bytes()),
        Value::Jsonb(j) => {
            out.push(1);
            out.extend_from_slice(j.to_string().as_bytes());
        }
        Value::Interval(iv) => {
            out.extend_from_slice(&iv.micros.to_be_bytes());
            out.extend_from_slice(&iv.days.to_be_bytes());
            out.extend_from_slice(&iv.months.to_be_bytes());
        }
        Value::Date(d) => out.extend_from_slice(&d.to_be_bytes()),
        Value::Timestamp(t) | Value::TimestampTz(t) => out.extend_from_slice(&t.to_be_bytes()),
        Value::Oid(v) | Value::Reg(v, _) => out.extend_from_slice(&v.to_be_bytes()),
        Value::Array(e, items) if e.is_vector() => {
            super::array::encode_vector_binary(items, e, out)
        }
        Value::Array(e, items) => super::array::encode_array_binary(items, e, out),
        Value::Record(types, fields) => {
            // `record_send`: the field count, then per field its type's OID and its
            // length-prefixed binary value (-1 for NULL).
            out.extend_from_slice(&(fields.len() as i32).to_be_bytes());
            for ((_, t), v) in types.iter().zip(fields.iter()) {
                out.extend_from_slice(&t.oid().to_be_bytes());
                encode_binary_sized(v, out);
            }
        }
    }
}

/// A value inside a composite binary form (an array's element, a record's field): its
/// length as an int32, then `encode_binary`'s bytes; -1 alone for NULL.
pub(super) fn encode_binary_sized(v: &Value, out: &mut Vec<u8>) {
    if v.is_null() {
        out.extend_from_slice(&(-1i32).to_be_bytes());
        return;
    }
    let at = out.len();
    out.extend_from_slice(&[0; 4]);
    encode_binary(v, out);
    let len = (out.len() - at - 4) as i32;
    out[at..at + 4].copy_from_slice(&len.to_be_bytes());
}

/// `json_in`: the text itself, once it parses as JSON (22P02 otherwise).
fn check_json(text: &str) -> Result<String> {
    serde_json::from_str::<serde_json::Value>(text).map_err(|e| {
        err!(
            INVALID_TEXT_REPRESENTATION,
            "invalid input syntax for type json"
        )
        .with_detail(e.to_string())
    })?;
    Ok(text.to_string())
}

/// A `name`: at most 63 bytes, cut at a character boundary (as PostgreSQL's namein).
fn truncate_name(s: &str) -> String {
    let mut end = s.len().min(63);
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    s[..end].to_string()
}

/// Apply a varchar(n)/char(n) length limit, counting characters. Excess characters are cut
/// silently by explicit casts; otherwise they must all be spaces (else 22001). char(n) is
/// blank-padded to n.
pub(crate) fn apply_string_typmod(mut s: String, ty: &DataType, explicit: bool) -> Result<String> {
    let (n, pad) = match ty {
        DataType::Varchar(Some(n)) => (*n as usize, false),
        DataType::Char(n) => (*n as usize, true),
        _ => return Ok(s),
    };
    // In ASCII a character is a byte: no walk over the characters (COPY of pgbench's
    // char(84) filler spent about 8% of its samples here).
    let (cut, len) = if s.is_ascii() {
        ((s.len() > n).then_some(n), s.len())
    } else {
        match s.char_indices().nth(n) {
            Some((cut, _)) => (Some(cut), n),
            None => (None, s.chars().count()),
        }
    };
    match cut {
        Some(cut) => {
            if !explicit && !s[cut..].bytes().all(|b| b == b' ') {
                return Err(err!(
                    STRING_DATA_RIGHT_TRUNCATION,
                    "value too long for type {}",
                    ty.name()
                ));
            }
            s.truncate(cut);
        }
        None if pad => {
            const SPACES: &str = "                                                                ";
            let mut missing = n - len;
            s.reserve(missing);
            while missing > 0 {
                let k = missing.min(SPACES.len());
                s.push_str(&SPACES[..k]);
                missing -= k;
            }
        }
        None => {}
    }
    Ok(s)
}

/// `boolin`: t/true/y/yes/on/1 and f/false/n/no/off/0, case-insensitive unique prefixes.
fn parse_bool(text: &str) -> Result<bool> {
    let s = trim_pg(text).to_ascii_lowercase();
    let prefix_of = |word: &str, min_len: usize| s.len() >= min_len && word.starts_with(s.as_str());
    let v = match s.as_bytes().first() {
        Some(b't') if prefix_of("true", 1) => Some(true),
        Some(b'y') if prefix_of("yes", 1) => Some(true),
        Some(b'f') if prefix_of("false", 1) => Some(false),
        Some(b'n') if prefix_of("no", 1) => Some(false),
        Some(b'o') if prefix_of("on", 2) => Some(true),
        Some(b'o') if prefix_of("off", 2) => Some(false),
        Some(b'1') if s.len() == 1 => Some(true),
        Some(b'0') if s.len() == 1 => Some(false),
        _ => None,
    };
    v.ok_or_else(|| {
        err!(
            INVALID_TEXT_REPRESENTATION,
            "invalid input syntax for type boolean: \"{text}\""
        )
    })
}

/// `pg_strtoint16/32/64`: optional surrounding whitespace and sign, decimal digits only.
fn parse_int(text: &str, min: i64, max: i64, ty: &DataType) -> Result<i64> {
    let invalid = || {
        err!(
            INVALID_TEXT_REPRESENTATION,
            "invalid input syntax for type {}: \"{text}\"",
            ty.name()
        )
    };
    let out_of_range = || {
        err!(
            NUMERIC_VALUE_OUT_OF_RANGE,
            "value \"{text}\" is out of range for type {}",
            ty.name()
        )
    };
    let b = text.as_bytes();
    let mut i = 0;
    while i < b.len() && is_pg_space(b[i] as char) {
        i += 1;
    }
    let negative = match b.get(i) {
        Some(b'-') => {
            i += 1;
            true
        }
        Some(b'+') => {
            i += 1;
            false
        }
        _ => false,
    };
    if !b.get(i).is_some_and(u8::is_ascii_digit) {
        return Err(invalid());
    }
    // Accumulate negatively so that the minimum value parses without overflow.
    let mut acc: i64 = 0;
    while let Some(&c) = b.get(i).filter(|c| c.is_ascii_digit()) {
        acc = acc
            .checked_mul(10)
            .and_then(|v| v.checked_sub((c - b'0') as i64))
            .filter(|v| *v >= min)
            .ok_or_else(out_of_range)?;
        i += 1;
    }
    if !text[i..].chars().all(is_pg_space) {
        return Err(invalid());
    }
    if negative {
        Ok(acc)
    } else {
        acc.checked_neg()
            .filter(|v| *v <= max)
            .ok_or_else(out_of_range)
    }
}

/// `byteain`: `\x` hex format (whitespace allowed between byte pairs) or escape format.
fn parse_bytea(text: &str) -> Result<Vec<u8>> {
    let b = text.as_bytes();
    if let Some(hex) = b.strip_prefix(b"\\x") {
        let mut out = Vec::with_capacity(hex.len() / 2);
        let mut i = 0;
        let digit = |i: usize| -> Result<u8> {
            let c = hex[i];
            (c as char).to_digit(16).map(|d| d as u8).ok_or_else(|| {
                let s = &text[2 + i..];
                let ch: String = s.chars().take(1).collect();
                err!(
                    INVALID_PARAMETER_VALUE,
                    "invalid hexadecimal digit: \"{ch}\""
                )
            })
        };
        while i < hex.len() {
            if matches!(hex[i], b' ' | b'\n' | b'\t' | b'\r') {
                i += 1;
                continue;
            }
            let hi = digit(i)?;
            if i + 1 >= hex.len() {
                return Err(err!(
                    INVALID_PARAMETER_VALUE,
                    "invalid hexadecimal data: odd number of digits"
                ));
            }
            let lo = digit(i + 1)?;
            out.push(hi << 4 | lo);
            i += 2;
        }
        return Ok(out);
    }
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] != b'\\' {
            out.push(b[i]);
            i += 1;
        } else if b.get(i + 1) == Some(&b'\\') {
            out.push(b'\\');
            i += 2;
        } else if let [d1 @ b'0'..=b'3', d2 @ b'0'..=b'7', d3 @ b'0'..=b'7'] =
            b.get(i + 1..i + 4).unwrap_or(&[])
        {
            out.push((d1 - b'0') << 6 | (d2 - b'0') << 3 | (d3 - b'0'));
            i += 4;
        } else {
            return Err(err!(
                INVALID_TEXT_REPRESENTATION,
                "invalid input syntax for type bytea"
            ));
        }
    }
    Ok(out)
}
