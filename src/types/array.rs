//! One-dimensional arrays (`int4[]`, `text[]`, ...): PostgreSQL's text and binary formats,
//! with lower bound 1. Multidimensional arrays and other lower bounds answer 0A000.

use std::sync::Arc;

use super::io::{decode_binary, decode_text, encode_binary_sized, format_text};
use super::{DataType, Value};
use crate::err;
use crate::error::{Error, Result};

/// The element types arrays may have (their typmods are not kept).
static ELEMENTS: &[DataType] = &[
    DataType::Bool,
    DataType::Bytea,
    DataType::InternalChar,
    DataType::Name,
    DataType::Int2,
    DataType::Int4,
    DataType::Text,
    DataType::Char(1),
    DataType::Varchar(None),
    DataType::Int8,
    DataType::Float4,
    DataType::Float8,
    DataType::Oid,
    DataType::Timestamp,
    DataType::Date,
    DataType::TimestampTz,
    DataType::Numeric(None),
    DataType::RegClass,
    DataType::RegType,
    DataType::Uuid,
    DataType::Interval,
    DataType::Jsonb,
];

/// Array type OIDs, in the order of [`ELEMENTS`].
const ARRAY_OIDS: &[u32] = &[
    1000, 1001, 1002, 1003, 1005, 1007, 1009, 1014, 1015, 1016, 1021, 1022, 1028, 1115, 1182, 1185,
    1231, 2210, 2211, 2951, 1187, 3807,
];

fn index_of(elem: DataType) -> Option<usize> {
    let elem = match elem {
        DataType::Char(_) => DataType::Char(1),
        t => t.without_typmod(),
    };
    ELEMENTS.iter().position(|e| *e == elem)
}

/// The array type of `elem`, if arrays of it are supported.
pub fn array_of(elem: DataType) -> Option<DataType> {
    index_of(elem).map(|i| DataType::Array(&ELEMENTS[i]))
}

/// The array type's OID.
pub fn array_oid(elem: DataType) -> u32 {
    index_of(elem).map_or(0, |i| ARRAY_OIDS[i])
}

/// The array type of an array type OID.
pub fn array_type_of_oid(oid: u32) -> Option<DataType> {
    ARRAY_OIDS
        .iter()
        .position(|o| *o == oid)
        .map(|i| DataType::Array(&ELEMENTS[i]))
}

fn malformed(text: &str, detail: &str) -> Error {
    err!(
        INVALID_TEXT_REPRESENTATION,
        "malformed array literal: \"{}\"",
        text
    )
    .with_detail(detail.to_string())
}

fn multidimensional() -> Error {
    Error::unsupported("multidimensional arrays are not supported yet")
}

/// The static element type for `elem` (what [`Value::Array`] carries).
pub fn static_element(elem: &DataType) -> Option<&'static DataType> {
    index_of(*elem).map(|i| &ELEMENTS[i])
}

fn unsupported_element(elem: &DataType) -> Error {
    Error::unsupported(format!(
        "arrays of type {} are not supported yet",
        elem.name()
    ))
}

/// `array_in`: `{a,b,"c d",NULL}`.
pub fn parse_array(elem: &DataType, text: &str) -> Result<Value> {
    let element = static_element(elem).ok_or_else(|| unsupported_element(elem))?;
    let s = text.trim_matches(|c: char| c.is_ascii_whitespace());
    if s.starts_with('[') {
        return Err(Error::unsupported(
            "array bounds other than the default are not supported yet",
        ));
    }
    let Some(body) = s.strip_prefix('{') else {
        return Err(malformed(
            text,
            "Array value must start with \"{\" or dimension information.",
        ));
    };
    let mut values = Vec::new();
    let mut chars = body.chars().peekable();
    let mut closed = false;
    let mut expect_item = true;
    while let Some(&c) = chars.peek() {
        match c {
            c if c.is_ascii_whitespace() => {
                chars.next();
            }
            '}' if values.is_empty() && expect_item => {
                chars.next();
                closed = true;
                break;
            }
            '{' => return Err(multidimensional()),
            _ if !expect_item => match c {
                ',' => {
                    chars.next();
                    expect_item = true;
                }
                '}' => {
                    chars.next();
                    closed = true;
                    break;
                }
                _ => return Err(malformed(text, "Unexpected array element.")),
            },
            '"' => {
                chars.next();
                let mut item = String::new();
                loop {
                    match chars.next() {
                        Some('"') => break,
                        Some('\\') => match chars.next() {
                            Some(e) => item.push(e),
                            None => return Err(malformed(text, "Unexpected end of input.")),
                        },
                        Some(c) => item.push(c),
                        None => return Err(malformed(text, "Unexpected end of input.")),
                    }
                }
                values.push(decode_text(elem, &item)?);
                expect_item = false;
            }
            _ => {
                let mut item = String::new();
                let mut escaped = false;
                while let Some(&c) = chars.peek() {
                    match c {
                        ',' | '}' => break,
                        '{' | '"' => return Err(malformed(text, "Unexpected array element.")),
                        '\\' => {
                            chars.next();
                            escaped = true;
                            match chars.next() {
                                Some(e) => item.push(e),
                                None => return Err(malformed(text, "Unexpected end of input.")),
                            }
                            continue;
                        }
                        c => item.push(c),
                    }
                    chars.next();
                }
                let item = item.trim_end_matches(|c: char| c.is_ascii_whitespace());
                if item.is_empty() {
                    return Err(malformed(text, "Unexpected \",\" character."));
                }
                values.push(if !escaped && item.eq_ignore_ascii_case("null") {
                    Value::Null
                } else {
                    decode_text(elem, item)?
                });
                expect_item = false;
            }
        }
    }
    if !closed || expect_item && !values.is_empty() {
        return Err(malformed(text, "Unexpected end of input."));
    }
    if chars.any(|c| !c.is_ascii_whitespace()) {
        return Err(malformed(text, "Junk after closing right brace."));
    }
    Ok(Value::Array(element, Arc::from(values)))
}

/// `array_out`.
pub fn format_array(values: &[Value], out: &mut String) {
    out.push('{');
    for (i, v) in values.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        if v.is_null() {
            out.push_str("NULL");
            continue;
        }
        let s = format_text(v);
        let quote = s.is_empty()
            || s.eq_ignore_ascii_case("null")
            || s.chars()
                .any(|c| matches!(c, '{' | '}' | ',' | '"' | '\\') || c.is_ascii_whitespace());
        if quote {
            out.push('"');
            for c in s.chars() {
                if c == '"' || c == '\\' {
                    out.push('\\');
                }
                out.push(c);
            }
            out.push('"');
        } else {
            out.push_str(&s);
        }
    }
    out.push('}');
}

fn be_i32(bytes: &[u8], at: usize) -> Result<i32> {
    bytes
        .get(at..at + 4)
        .map(|b| i32::from_be_bytes([b[0], b[1], b[2], b[3]]))
        .ok_or_else(|| {
            err!(
                INVALID_BINARY_REPRESENTATION,
                "insufficient data left in message"
            )
        })
}

/// `array_recv`.
pub fn decode_array_binary(elem: &DataType, bytes: &[u8]) -> Result<Value> {
    let element = static_element(elem).ok_or_else(|| unsupported_element(elem))?;
    let ndim = be_i32(bytes, 0)?;
    let element_oid = be_i32(bytes, 8)? as u32;
    if element_oid != elem.oid() && !(elem.oid() == super::oid::BPCHAR && element_oid == 1042) {
        return Err(err!(
            DATATYPE_MISMATCH,
            "binary data has array element type {} instead of expected {}",
            element_oid,
            elem.oid()
        ));
    }
    match ndim {
        0 => return Ok(Value::Array(element, Arc::from(Vec::new()))),
        1 => {}
        n if n < 0 => {
            return Err(err!(
                INVALID_BINARY_REPRESENTATION,
                "invalid number of dimensions: {}",
                n
            ))
        }
        _ => return Err(multidimensional()),
    }
    let len = be_i32(bytes, 12)?;
    if be_i32(bytes, 16)? != 1 {
        return Err(Error::unsupported(
            "array bounds other than the default are not supported yet",
        ));
    }
    let len = usize::try_from(len)
        .map_err(|_| err!(INVALID_BINARY_REPRESENTATION, "invalid array length"))?;
    let mut at = 20;
    let mut values = Vec::with_capacity(len.min(1 << 16));
    for _ in 0..len {
        let n = be_i32(bytes, at)?;
        at += 4;
        if n == -1 {
            values.push(Value::Null);
            continue;
        }
        let n = usize::try_from(n).map_err(|_| {
            err!(
                INVALID_BINARY_REPRESENTATION,
                "invalid array element length"
            )
        })?;
        let item = bytes.get(at..at + n).ok_or_else(|| {
            err!(
                INVALID_BINARY_REPRESENTATION,
                "insufficient data left in message"
            )
        })?;
        values.push(decode_binary(elem, item)?);
        at += n;
    }
    if at != bytes.len() {
        return Err(err!(
            INVALID_BINARY_REPRESENTATION,
            "incorrect binary data format in array"
        ));
    }
    Ok(Value::Array(element, Arc::from(values)))
}

/// `array_send`.
/// `int2vector` / `oidvector` binary: an array of int2 / oid with lower bound 0.
pub fn encode_vector_binary(values: &[Value], vector: &DataType, out: &mut Vec<u8>) {
    let elem_oid = vector.element().map_or(0, |e| e.oid());
    let ndim: i32 = if values.is_empty() { 0 } else { 1 };
    out.extend_from_slice(&ndim.to_be_bytes());
    out.extend_from_slice(&0i32.to_be_bytes());
    out.extend_from_slice(&elem_oid.to_be_bytes());
    if values.is_empty() {
        return;
    }
    out.extend_from_slice(&(values.len() as i32).to_be_bytes());
    out.extend_from_slice(&0i32.to_be_bytes());
    for v in values {
        encode_binary_sized(v, out);
    }
}

pub fn encode_array_binary(values: &[Value], elem: &DataType, out: &mut Vec<u8>) {
    let elem_oid = elem.oid();
    let ndim: i32 = if values.is_empty() { 0 } else { 1 };
    out.extend_from_slice(&ndim.to_be_bytes());
    let has_null = values.iter().any(Value::is_null) as i32;
    out.extend_from_slice(&has_null.to_be_bytes());
    out.extend_from_slice(&elem_oid.to_be_bytes());
    if values.is_empty() {
        return;
    }
    out.extend_from_slice(&(values.len() as i32).to_be_bytes());
    out.extend_from_slice(&1i32.to_be_bytes());
    for v in values {
        encode_binary_sized(v, out);
    }
}
