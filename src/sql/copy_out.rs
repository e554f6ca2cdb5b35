//! COPY TO STDOUT: rows written in PostgreSQL's text, CSV and binary COPY formats, byte
//! for byte as PostgreSQL writes them (so a file made by either server loads into both).
//!
//! - **text**: fields separated by the delimiter (tab), NULL as `\N`; a backslash, the
//!   delimiter and the control characters PostgreSQL names (`\b \f \n \r \t \v`) are
//!   escaped with a backslash.
//! - **CSV**: a field is quoted when it holds the delimiter, the quote, a newline or a
//!   carriage return, when it equals the NULL string (so it reads back as a value), or
//!   when it is `\.` alone on its line; inside quotes the quote and escape characters
//!   are escaped.
//! - **binary**: the 11-byte signature, flags and header extension, then per row a 16-bit
//!   field count and each field as a 32-bit length (-1 for NULL) and its binary send
//!   format, and a trailer of -1.

use super::parser::{CopyFormat, CopyStatement};
use crate::error::{Error, Result};
use crate::types::{encode_binary, encode_text, Value};

/// The binary format's signature: `PGCOPY\n\377\r\n\0`.
pub const BINARY_SIGNATURE: &[u8; 11] = b"PGCOPY\n\xff\r\n\0";

pub struct CopyEncoder {
    format: CopyFormat,
    delimiter: u8,
    null: Vec<u8>,
    quote: u8,
    escape: u8,
    /// Column names for a header line, until it is written.
    header: Option<Vec<String>>,
    single_column: bool,
    /// Scratch space for one value's text.
    value: Vec<u8>,
}

impl CopyEncoder {
    pub fn new(stmt: &CopyStatement, names: &[String]) -> Result<CopyEncoder> {
        let csv = stmt.format == CopyFormat::Csv;
        let delimiter = stmt.delimiter.unwrap_or(if csv { ',' } else { '\t' });
        let escape = stmt.escape.unwrap_or(stmt.quote);
        if !delimiter.is_ascii() || !stmt.quote.is_ascii() || !escape.is_ascii() {
            return Err(Error::unsupported(
                "COPY delimiter, quote and escape must be single-byte characters",
            ));
        }
        Ok(CopyEncoder {
            format: stmt.format.clone(),
            delimiter: delimiter as u8,
            null: stmt
                .null
                .clone()
                .unwrap_or_else(|| if csv { String::new() } else { "\\N".into() })
                .into_bytes(),
            quote: stmt.quote as u8,
            escape: escape as u8,
            header: stmt.header.then(|| names.to_vec()),
            single_column: names.len() == 1,
            value: Vec::new(),
        })
    }

    pub fn is_binary(&self) -> bool {
        self.format == CopyFormat::Binary
    }

    /// What comes before the first row: the binary header, or a header line.
    pub fn start(&mut self, out: &mut Vec<u8>) {
        if self.is_binary() {
            out.extend_from_slice(BINARY_SIGNATURE);
            out.extend_from_slice(&0i32.to_be_bytes()); // flags: no OIDs
            out.extend_from_slice(&0i32.to_be_bytes()); // no header extension
            return;
        }
        if let Some(names) = self.header.take() {
            for (i, name) in names.iter().enumerate() {
                if i > 0 {
                    out.push(self.delimiter);
                }
                self.field(name.as_bytes(), out);
            }
            out.push(b'\n');
        }
    }

    /// One row.
    pub fn row(&mut self, row: &[Value], out: &mut Vec<u8>) -> Result<()> {
        if self.is_binary() {
            let count = i16::try_from(row.len()).map_err(|_| {
                Error::new(
                    crate::error::SqlState::PROGRAM_LIMIT_EXCEEDED,
                    "too many columns for COPY",
                )
            })?;
            out.extend_from_slice(&count.to_be_bytes());
            for v in row {
                if v.is_null() {
                    out.extend_from_slice(&(-1i32).to_be_bytes());
                    continue;
                }
                self.value.clear();
                encode_binary(v, &mut self.value);
                let len = i32::try_from(self.value.len()).map_err(|_| {
                    Error::new(
                        crate::error::SqlState::PROGRAM_LIMIT_EXCEEDED,
                        "value too large for COPY",
                    )
                })?;
                out.extend_from_slice(&len.to_be_bytes());
                out.extend_from_slice(&self.value);
            }
            return Ok(());
        }
        for (i, v) in row.iter().enumerate() {
            if i > 0 {
                out.push(self.delimiter);
            }
            if v.is_null() {
                out.extend_from_slice(&self.null);
                continue;
            }
            let mut value = std::mem::take(&mut self.value);
            value.clear();
            encode_text(v, &mut value);
            self.field(&value, out);
            self.value = value;
        }
        out.push(b'\n');
        Ok(())
    }

    /// After the last row: the binary trailer.
    pub fn finish(&mut self, out: &mut Vec<u8>) {
        if self.is_binary() {
            out.extend_from_slice(&(-1i16).to_be_bytes());
        }
    }

    fn field(&self, value: &[u8], out: &mut Vec<u8>) {
        match self.format {
            CopyFormat::Csv => self.csv_field(value, out),
            _ => self.text_field(value, out),
        }
    }

    fn text_field(&self, value: &[u8], out: &mut Vec<u8>) {
        for &c in value {
            let escaped = match c {
                b'\\' => Some(b'\\'),
                0x08 => Some(b'b'),
                0x0c => Some(b'f'),
                b'\n' => Some(b'n'),
                b'\r' => Some(b'r'),
                b'\t' => Some(b't'),
                0x0b => Some(b'v'),
                c if c == self.delimiter => Some(c),
                _ => None,
            };
            match escaped {
                Some(e) => {
                    out.push(b'\\');
                    out.push(e);
                }
                None => out.push(c),
            }
        }
    }

    fn csv_field(&self, value: &[u8], out: &mut Vec<u8>) {
        let quoted = value == self.null.as_slice()
            || (self.single_column && value == b"\\.")
            || value
                .iter()
                .any(|&c| c == self.delimiter || c == self.quote || c == b'\n' || c == b'\r');
        if !quoted {
            out.extend_from_slice(value);
            return;
        }
        out.push(self.quote);
        for &c in value {
            if c == self.quote || c == self.escape {
                out.push(self.escape);
            }
            out.push(c);
        }
        out.push(self.quote);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sql::parser::{parse_statement, Statement};

    fn encoder(sql: &str, names: &[&str]) -> CopyEncoder {
        match parse_statement(sql).unwrap() {
            Statement::Copy(c) => {
                let names: Vec<String> = names.iter().map(|s| s.to_string()).collect();
                CopyEncoder::new(&c, &names).unwrap()
            }
            _ => panic!("not copy"),
        }
    }

    fn encode(e: &mut CopyEncoder, rows: &[Vec<Value>]) -> Vec<u8> {
        let mut out = Vec::new();
        e.start(&mut out);
        for r in rows {
            e.row(r, &mut out).unwrap();
        }
        e.finish(&mut out);
        out
    }

    #[test]
    fn text_escapes_like_postgresql() {
        let mut e = encoder("copy t to stdout", &["a", "b"]);
        let out = encode(
            &mut e,
            &[vec![Value::Text("a\tb\\c\nd\re\u{8}".into()), Value::Null]],
        );
        assert_eq!(out, b"a\\tb\\\\c\\nd\\re\\b\t\\N\n");
        let mut e = encoder("copy t to stdout with (delimiter '|', header)", &["x|y"]);
        let out = encode(&mut e, &[vec![Value::Text("p|q\tr".into())]]);
        assert_eq!(out, b"x\\|y\np\\|q\\tr\n");
    }

    #[test]
    fn csv_quotes_only_what_needs_it() {
        let mut e = encoder("copy t to stdout with (format csv, header)", &["k", "v"]);
        let out = encode(
            &mut e,
            &[
                vec![Value::Int4(1), Value::Text("plain".into())],
                vec![Value::Int4(2), Value::Text("a,b \"q\"".into())],
                vec![Value::Int4(3), Value::Text(String::new())],
                vec![Value::Int4(4), Value::Null],
                vec![Value::Int4(5), Value::Text("line\nbreak".into())],
            ],
        );
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "k,v\n1,plain\n2,\"a,b \"\"q\"\"\"\n3,\"\"\n4,\n5,\"line\nbreak\"\n"
        );
        let mut e = encoder("copy t to stdout csv", &["only"]);
        assert_eq!(
            encode(&mut e, &[vec![Value::Text("\\.".into())]]),
            b"\"\\.\"\n"
        );
    }

    #[test]
    fn binary_header_rows_and_trailer() {
        let mut e = encoder("copy t to stdout (format binary)", &["a", "b"]);
        let out = encode(&mut e, &[vec![Value::Int4(7), Value::Null]]);
        let mut want = BINARY_SIGNATURE.to_vec();
        want.extend_from_slice(&[0, 0, 0, 0, 0, 0, 0, 0]);
        want.extend_from_slice(&2i16.to_be_bytes());
        want.extend_from_slice(&4i32.to_be_bytes());
        want.extend_from_slice(&7i32.to_be_bytes());
        want.extend_from_slice(&(-1i32).to_be_bytes());
        want.extend_from_slice(&(-1i16).to_be_bytes());
        assert_eq!(out, want);
    }
}
