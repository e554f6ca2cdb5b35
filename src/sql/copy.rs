//! COPY FROM STDIN: parsing PostgreSQL's text and CSV formats from a byte stream that may
//! be split anywhere across CopyData messages.

use super::parser::{CopyFormat, CopyStatement};
use crate::error::{Error, Result, SqlState};

/// Largest single COPY record accepted, in bytes.
const MAX_RECORD_BYTES: usize = 64 * 1024 * 1024;

pub struct CopyParser {
    format: CopyFormat,
    delimiter: u8,
    null: String,
    quote: u8,
    escape: u8,
    skip_header: bool,
    buf: Vec<u8>,
    /// Set after the end-of-data marker `\.`.
    done: bool,
    pub line: u64,
}

/// One parsed COPY line: its line number and fields (None = NULL).
pub type Record = (u64, Vec<Option<String>>);

fn bad(msg: impl Into<String>) -> Error {
    Error::new(SqlState::BAD_COPY_FILE_FORMAT, msg)
}

impl CopyParser {
    pub fn new(stmt: &CopyStatement) -> Result<CopyParser> {
        let csv = stmt.format == CopyFormat::Csv;
        let delimiter = stmt.delimiter.unwrap_or(if csv { ',' } else { '\t' });
        if !delimiter.is_ascii()
            || !stmt.quote.is_ascii()
            || stmt.escape.is_some_and(|c| !c.is_ascii())
        {
            return Err(Error::unsupported(
                "COPY delimiter, quote and escape must be single-byte characters",
            ));
        }
        if stmt.header && !csv {
            return Err(Error::unsupported(
                "COPY HEADER is available only in CSV mode",
            ));
        }
        Ok(CopyParser {
            format: stmt.format.clone(),
            delimiter: delimiter as u8,
            null: stmt
                .null
                .clone()
                .unwrap_or_else(|| if csv { String::new() } else { "\\N".into() }),
            quote: stmt.quote as u8,
            escape: stmt.escape.unwrap_or(stmt.quote) as u8,
            skip_header: stmt.header,
            buf: Vec::new(),
            done: false,
            line: 0,
        })
    }

    /// Feed bytes; returns the records completed by them.
    pub fn feed(&mut self, data: &[u8]) -> Result<Vec<Record>> {
        if self.done {
            return Ok(Vec::new());
        }
        self.buf.extend_from_slice(data);
        let mut out = Vec::new();
        let mut start = 0;
        while let Some(end) = self.record_end(start) {
            let raw = self.buf[start..end].to_vec();
            start = end + 1;
            if let Some(rec) = self.record(&raw)? {
                out.push(rec);
            }
            if self.done {
                break;
            }
        }
        self.buf.drain(..start);
        if self.buf.len() > MAX_RECORD_BYTES {
            return Err(Error::new(
                SqlState::PROGRAM_LIMIT_EXCEEDED,
                "COPY record is too long",
            ));
        }
        Ok(out)
    }

    /// End of input: a final record without a newline.
    pub fn finish(&mut self) -> Result<Vec<Record>> {
        if self.done || self.buf.is_empty() {
            return Ok(Vec::new());
        }
        if self.format == CopyFormat::Csv && self.record_end(0).is_none() && self.in_quotes_at_end()
        {
            return Err(bad("unterminated CSV quoted field"));
        }
        let raw = std::mem::take(&mut self.buf);
        Ok(self.record(&raw)?.into_iter().collect())
    }

    fn in_quotes_at_end(&self) -> bool {
        let mut q = false;
        for &b in &self.buf {
            if b == self.quote {
                q = !q;
            }
        }
        q
    }

    /// Index of the newline ending the record that starts at `start`.
    fn record_end(&self, start: usize) -> Option<usize> {
        let bytes = &self.buf[start..];
        if self.format == CopyFormat::Text {
            return bytes.iter().position(|&b| b == b'\n').map(|p| start + p);
        }
        let mut in_quotes = false;
        let mut i = 0;
        while i < bytes.len() {
            let b = bytes[i];
            if in_quotes {
                if b == self.escape
                    && self.escape != self.quote
                    && bytes.get(i + 1) == Some(&self.quote)
                {
                    i += 2;
                    continue;
                }
                if b == self.quote {
                    if self.escape == self.quote && bytes.get(i + 1) == Some(&self.quote) {
                        i += 2;
                        continue;
                    }
                    in_quotes = false;
                }
            } else if b == self.quote {
                in_quotes = true;
            } else if b == b'\n' {
                return Some(start + i);
            }
            i += 1;
        }
        None
    }

    fn record(&mut self, raw: &[u8]) -> Result<Option<Record>> {
        let line = self.line + 1;
        Ok(self.fields(raw)?.map(|f| (line, f)))
    }

    fn fields(&mut self, raw: &[u8]) -> Result<Option<Vec<Option<String>>>> {
        self.line += 1;
        let raw = raw.strip_suffix(b"\r").unwrap_or(raw);
        if raw == b"\\." {
            self.done = true;
            return Ok(None);
        }
        if self.skip_header {
            self.skip_header = false;
            return Ok(None);
        }
        let text = std::str::from_utf8(raw).map_err(|_| {
            Error::new(
                SqlState::CHARACTER_NOT_IN_REPERTOIRE,
                "invalid byte sequence for encoding \"UTF8\"",
            )
        })?;
        match self.format {
            CopyFormat::Csv => self.csv_record(text).map(Some),
            _ => self.text_record(text).map(Some),
        }
    }

    fn text_record(&self, line: &str) -> Result<Vec<Option<String>>> {
        let delim = self.delimiter as char;
        line.split(delim)
            .map(|field| {
                if field == self.null {
                    Ok(None)
                } else {
                    unescape_text(field).map(Some)
                }
            })
            .collect()
    }

    fn csv_record(&self, line: &str) -> Result<Vec<Option<String>>> {
        let (delim, quote, escape) = (
            self.delimiter as char,
            self.quote as char,
            self.escape as char,
        );
        let mut fields = Vec::new();
        let mut chars = line.chars().peekable();
        let mut value = String::new();
        let mut quoted = false;
        let mut in_quotes = false;
        loop {
            match chars.next() {
                None => {
                    if in_quotes {
                        return Err(bad("unterminated CSV quoted field"));
                    }
                    fields.push(if !quoted && value == self.null {
                        None
                    } else {
                        Some(value)
                    });
                    return Ok(fields);
                }
                Some(c) if in_quotes => {
                    if c == escape && chars.peek() == Some(&quote) {
                        // An escaped quote (a doubled quote by default) is one quote.
                        chars.next();
                        value.push(quote);
                    } else if c == quote {
                        in_quotes = false;
                    } else {
                        value.push(c);
                    }
                }
                Some(c) if c == quote => {
                    in_quotes = true;
                    quoted = true;
                }
                Some(c) if c == delim => {
                    let v = std::mem::take(&mut value);
                    fields.push(if !quoted && v == self.null {
                        None
                    } else {
                        Some(v)
                    });
                    quoted = false;
                }
                Some(c) => value.push(c),
            }
        }
    }
}

/// Decode the backslash escapes of COPY's text format.
fn unescape_text(field: &str) -> Result<String> {
    if !field.contains('\\') {
        return Ok(field.to_string());
    }
    let mut out = String::with_capacity(field.len());
    let mut chars = field.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            None => return Err(bad("end-of-copy marker corrupt")),
            Some('b') => out.push('\u{8}'),
            Some('f') => out.push('\u{c}'),
            Some('n') => out.push('\n'),
            Some('r') => out.push('\r'),
            Some('t') => out.push('\t'),
            Some('v') => out.push('\u{b}'),
            Some('x') => {
                let mut n = 0u32;
                let mut digits = 0;
                while digits < 2 {
                    match chars.peek().and_then(|c| c.to_digit(16)) {
                        Some(d) => {
                            n = n * 16 + d;
                            chars.next();
                            digits += 1;
                        }
                        None => break,
                    }
                }
                if digits == 0 {
                    out.push('x');
                } else {
                    out.push(char::from_u32(n).ok_or_else(|| bad("invalid escape"))?);
                }
            }
            Some(d @ '0'..='7') => {
                let mut n = d.to_digit(8).unwrap_or(0);
                for _ in 0..2 {
                    match chars.peek().and_then(|c| c.to_digit(8)) {
                        Some(x) => {
                            n = n * 8 + x;
                            chars.next();
                        }
                        None => break,
                    }
                }
                out.push(char::from_u32(n).ok_or_else(|| bad("invalid escape"))?);
            }
            Some(other) => out.push(other),
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sql::parser::{parse_statement, Statement};

    fn parser(sql: &str) -> CopyParser {
        match parse_statement(sql).unwrap() {
            Statement::Copy(c) => CopyParser::new(&c).unwrap(),
            _ => panic!("not copy"),
        }
    }

    #[test]
    fn text_format_across_chunks() {
        let mut p = parser("copy t from stdin");
        let mut recs = p.feed(b"1\tab\\tc\n2\t\\N\n3\t").unwrap();
        recs.extend(p.feed(b"x\\\\y\n\\.\nignored\n").unwrap());
        assert_eq!(recs.iter().map(|r| r.0).collect::<Vec<_>>(), vec![1, 2, 3]);
        let recs: Vec<_> = recs.into_iter().map(|r| r.1).collect();
        assert_eq!(
            recs,
            vec![
                vec![Some("1".into()), Some("ab\tc".into())],
                vec![Some("2".into()), None],
                vec![Some("3".into()), Some("x\\y".into())],
            ]
        );
    }

    #[test]
    fn csv_quotes_newlines_and_nulls() {
        let mut p = parser("copy t from stdin with (format csv, header)");
        let mut recs = p.feed(b"a,b\n1,\"x,\"\"y\"\"\nz\"\n2,\n3,\"\"").unwrap();
        recs.extend(p.finish().unwrap());
        let recs: Vec<_> = recs.into_iter().map(|r| r.1).collect();
        assert_eq!(
            recs,
            vec![
                vec![Some("1".into()), Some("x,\"y\"\nz".into())],
                vec![Some("2".into()), None],
                vec![Some("3".into()), Some("".into())],
            ]
        );
    }
}
