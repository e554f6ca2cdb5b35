//! COPY FROM STDIN: parsing PostgreSQL's text, CSV and binary formats from a byte stream
//! that may be split anywhere across CopyData messages.

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
    /// Set after the end-of-data marker `\.` (binary: the trailer).
    done: bool,
    /// Binary format: whether the file header has been read.
    binary_header_read: bool,
    pub line: u64,
}

/// One parsed COPY line: its line number and its fields, unescaped, in one string (or,
/// in binary format, their bytes).
#[derive(Debug, Default)]
pub struct Record {
    pub line: u64,
    text: String,
    /// A binary-format row's field bytes.
    raw: Vec<u8>,
    binary: bool,
    /// Each field's bytes in `text` (or `raw`), or None for NULL.
    fields: Vec<Option<std::ops::Range<usize>>>,
}

/// A field of a COPY row, in the format it came in.
#[derive(Debug, PartialEq)]
pub enum Field<'a> {
    Text(&'a str),
    Binary(&'a [u8]),
}

impl Record {
    pub fn field_count(&self) -> usize {
        self.fields.len()
    }

    /// Whether it came in binary format.
    pub fn is_binary(&self) -> bool {
        self.binary
    }

    /// The fields in order (None = NULL).
    pub fn fields(&self) -> impl Iterator<Item = Option<Field<'_>>> {
        self.fields.iter().map(|f| {
            f.as_ref().map(|r| {
                if self.binary {
                    Field::Binary(&self.raw[r.clone()])
                } else {
                    Field::Text(&self.text[r.clone()])
                }
            })
        })
    }

    fn push_null(&mut self) {
        self.fields.push(None);
    }

    /// End the field that started at byte `start` of the text.
    fn end_field(&mut self, start: usize) {
        self.fields.push(Some(start..self.text.len()));
    }
}

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
            binary_header_read: false,
            line: 0,
        })
    }

    /// Feed bytes; returns the records completed by them.
    pub fn feed(&mut self, data: &[u8]) -> Result<Vec<Record>> {
        if self.format == CopyFormat::Binary {
            return self.feed_binary(data);
        }
        if self.done {
            return Ok(Vec::new());
        }
        self.buf.extend_from_slice(data);
        let buf = std::mem::take(&mut self.buf);
        let mut out = Vec::new();
        let mut start = 0;
        let parsed = (|| {
            while let Some(end) = self.record_end(&buf, start) {
                let raw = &buf[start..end];
                start = end + 1;
                if let Some(rec) = self.record(raw)? {
                    out.push(rec);
                }
                if self.done {
                    break;
                }
            }
            Ok(())
        })();
        self.buf = buf;
        parsed?;
        self.buf.drain(..start);
        self.check_buffered()?;
        Ok(out)
    }

    /// What waits for the rest of its record must stay below the longest record.
    fn check_buffered(&self) -> Result<()> {
        if self.buf.len() > MAX_RECORD_BYTES {
            return Err(Error::new(
                SqlState::PROGRAM_LIMIT_EXCEEDED,
                "COPY record is too long",
            ));
        }
        Ok(())
    }

    /// Binary format: the header, then rows of a 16-bit field count and each field's
    /// 32-bit length (-1: NULL) and bytes, up to the trailer (a count of -1).
    fn feed_binary(&mut self, data: &[u8]) -> Result<Vec<Record>> {
        if self.done {
            if data.is_empty() {
                return Ok(Vec::new());
            }
            return Err(bad("received copy data after EOF marker"));
        }
        self.buf.extend_from_slice(data);
        let mut at = 0;
        let mut out = Vec::new();
        let parsed = (|| -> Result<()> {
            if !self.binary_header_read {
                match binary_header_len(&self.buf)? {
                    Some(len) => {
                        at = len;
                        self.binary_header_read = true;
                    }
                    None => return Ok(()),
                }
            }
            while let Some((record, len)) = Self::binary_row(&mut self.line, &self.buf[at..])? {
                at += len;
                match record {
                    Some(record) => out.push(record),
                    None => {
                        self.done = true;
                        if at < self.buf.len() {
                            return Err(bad("received copy data after EOF marker"));
                        }
                        break;
                    }
                }
            }
            Ok(())
        })();
        parsed?;
        self.buf.drain(..at);
        self.check_buffered()?;
        Ok(out)
    }

    /// The binary row at the start of `bytes`, and its length: `Some((None, 2))` for the
    /// trailer, None if it is not all there yet.
    fn binary_row(line: &mut u64, bytes: &[u8]) -> Result<Option<(Option<Record>, usize)>> {
        let Some(count) = bytes.get(..2) else {
            return Ok(None);
        };
        let count = i16::from_be_bytes([count[0], count[1]]);
        if count == -1 {
            return Ok(Some((None, 2)));
        }
        if count < 0 {
            return Err(bad(format!("row field count is {count}, expected a count")));
        }
        let mut at = 2;
        let mut fields = Vec::with_capacity(count as usize);
        for _ in 0..count {
            let Some(len) = bytes.get(at..at + 4) else {
                return Ok(None);
            };
            let len = i32::from_be_bytes([len[0], len[1], len[2], len[3]]);
            at += 4;
            if len == -1 {
                fields.push(None);
                continue;
            }
            let Ok(len) = usize::try_from(len) else {
                return Err(bad("invalid field size"));
            };
            if len > MAX_RECORD_BYTES {
                return Err(Error::new(
                    SqlState::PROGRAM_LIMIT_EXCEEDED,
                    "COPY record is too long",
                ));
            }
            if bytes.len() < at + len {
                return Ok(None);
            }
            fields.push(Some(at..at + len));
            at += len;
        }
        *line += 1;
        let record = Record {
            line: *line,
            raw: bytes[..at].to_vec(),
            binary: true,
            fields,
            ..Record::default()
        };
        Ok(Some((Some(record), at)))
    }

    /// End of input: a final record without a newline.
    pub fn finish(&mut self) -> Result<Vec<Record>> {
        if self.format == CopyFormat::Binary {
            if !self.binary_header_read {
                return Err(bad("COPY file signature not recognized"));
            }
            if !self.done && !self.buf.is_empty() {
                return Err(bad("unexpected EOF in COPY data"));
            }
            return Ok(Vec::new());
        }
        if self.done || self.buf.is_empty() {
            return Ok(Vec::new());
        }
        if self.format == CopyFormat::Csv
            && self.record_end(&self.buf, 0).is_none()
            && self.in_quotes_at_end()
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
    fn record_end(&self, buf: &[u8], start: usize) -> Option<usize> {
        let bytes = &buf[start..];
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
        let mut rec = Record {
            line: self.line,
            ..Record::default()
        };
        match self.format {
            CopyFormat::Csv => self.csv_record(text, &mut rec)?,
            _ => self.text_record(text, &mut rec)?,
        }
        Ok(Some(rec))
    }

    fn text_record(&self, line: &str, rec: &mut Record) -> Result<()> {
        let delim = self.delimiter as char;
        rec.text.reserve(line.len());
        for field in line.split(delim) {
            if field == self.null {
                rec.push_null();
            } else {
                let start = rec.text.len();
                unescape_text(field, &mut rec.text)?;
                rec.end_field(start);
            }
        }
        Ok(())
    }

    fn csv_record(&self, line: &str, rec: &mut Record) -> Result<()> {
        let (delim, quote, escape) = (
            self.delimiter as char,
            self.quote as char,
            self.escape as char,
        );
        rec.text.reserve(line.len());
        let mut chars = line.chars().peekable();
        let mut start = 0;
        let mut quoted = false;
        let mut in_quotes = false;
        loop {
            match chars.next() {
                None => {
                    if in_quotes {
                        return Err(bad("unterminated CSV quoted field"));
                    }
                    if !quoted && rec.text[start..] == *self.null {
                        rec.text.truncate(start);
                        rec.push_null();
                    } else {
                        rec.end_field(start);
                    }
                    return Ok(());
                }
                Some(c) if in_quotes => {
                    if c == escape && chars.peek() == Some(&quote) {
                        // An escaped quote (a doubled quote by default) is one quote.
                        chars.next();
                        rec.text.push(quote);
                    } else if c == quote {
                        in_quotes = false;
                    } else {
                        rec.text.push(c);
                    }
                }
                Some(c) if c == quote => {
                    in_quotes = true;
                    quoted = true;
                }
                Some(c) if c == delim => {
                    if !quoted && rec.text[start..] == *self.null {
                        rec.text.truncate(start);
                        rec.push_null();
                    } else {
                        rec.end_field(start);
                    }
                    start = rec.text.len();
                    quoted = false;
                }
                Some(c) => rec.text.push(c),
            }
        }
    }
}

/// The length of the binary format's header at the start of `buf`, None if it is not all
/// there yet; 22P04 if it is not a COPY binary header.
fn binary_header_len(buf: &[u8]) -> Result<Option<usize>> {
    let signature = super::copy_out::BINARY_SIGNATURE;
    let n = buf.len().min(signature.len());
    if buf[..n] != signature[..n] {
        return Err(bad("COPY file signature not recognized"));
    }
    let Some(fixed) = buf.get(..signature.len() + 8) else {
        return Ok(None);
    };
    let flags = u32::from_be_bytes([fixed[11], fixed[12], fixed[13], fixed[14]]);
    if flags & (1 << 16) != 0 {
        return Err(bad("COPY with OIDs is not supported anymore"));
    }
    if flags & 0xFFFE_0000 != 0 {
        return Err(bad("unrecognized critical flags in COPY file header"));
    }
    let extension = u32::from_be_bytes([fixed[15], fixed[16], fixed[17], fixed[18]]);
    let Ok(extension) = usize::try_from(extension) else {
        return Err(bad("invalid COPY file header (wrong length)"));
    };
    if extension > MAX_RECORD_BYTES {
        return Err(bad("invalid COPY file header (wrong length)"));
    }
    let len = fixed.len() + extension;
    Ok((buf.len() >= len).then_some(len))
}

/// Decode the backslash escapes of COPY's text format, appending to `out`.
fn unescape_text(field: &str, out: &mut String) -> Result<()> {
    if !field.contains('\\') {
        out.push_str(field);
        return Ok(());
    }
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
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sql::parser::{parse_statement, Statement};

    fn owned(rec: &Record) -> Vec<Option<String>> {
        rec.fields()
            .map(|f| {
                f.map(|f| match f {
                    Field::Text(s) => s.to_string(),
                    Field::Binary(b) => format!("{b:?}"),
                })
            })
            .collect()
    }

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
        assert_eq!(
            recs.iter().map(|r| r.line).collect::<Vec<_>>(),
            vec![1, 2, 3]
        );
        let recs: Vec<_> = recs.iter().map(owned).collect();
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
        let recs: Vec<_> = recs.iter().map(owned).collect();
        assert_eq!(
            recs,
            vec![
                vec![Some("1".into()), Some("x,\"y\"\nz".into())],
                vec![Some("2".into()), None],
                vec![Some("3".into()), Some("".into())],
            ]
        );
    }

    #[test]
    fn null_markers_are_matched_before_unquoting_and_unescaping() {
        let mut p = parser("copy t from stdin with (format csv, null 'NULL')");
        let recs = p.feed(b"a,,\"\",NULL,\"NULL\"\n").unwrap();
        assert_eq!(
            recs.iter().map(owned).collect::<Vec<_>>(),
            vec![vec![
                Some("a".into()),
                Some("".into()),
                Some("".into()),
                None,
                Some("NULL".into()),
            ]]
        );
        let mut p = parser("copy t from stdin");
        let recs = p.feed(b"\\N\t\\\\N\t\t\\x41\n").unwrap();
        assert_eq!(
            recs.iter().map(owned).collect::<Vec<_>>(),
            vec![vec![
                None,
                Some("\\N".into()),
                Some("".into()),
                Some("A".into())
            ]]
        );
    }

    #[test]
    fn binary_rows_across_chunks() {
        let mut p = parser("copy t from stdin (format binary)");
        let mut data = crate::sql::copy_out::BINARY_SIGNATURE.to_vec();
        data.extend_from_slice(&[0, 0, 0, 0, 0, 0, 0, 0]);
        data.extend_from_slice(&2i16.to_be_bytes());
        data.extend_from_slice(&4i32.to_be_bytes());
        data.extend_from_slice(&7i32.to_be_bytes());
        data.extend_from_slice(&(-1i32).to_be_bytes());
        data.extend_from_slice(&(-1i16).to_be_bytes());
        let mut recs = Vec::new();
        for chunk in data.chunks(3) {
            recs.extend(p.feed(chunk).unwrap());
        }
        recs.extend(p.finish().unwrap());
        assert_eq!(recs.len(), 1);
        let fields: Vec<_> = recs[0].fields().collect();
        assert_eq!(fields, vec![Some(Field::Binary(&[0, 0, 0, 7])), None]);
        assert!(p.feed(b"x").is_err(), "data after the trailer");

        let mut p = parser("copy t from stdin (format binary)");
        assert_eq!(
            p.feed(b"PGCOPX").unwrap_err().message,
            "COPY file signature not recognized"
        );
        let mut p = parser("copy t from stdin (format binary)");
        p.feed(&data[..25]).unwrap();
        assert_eq!(
            p.finish().unwrap_err().message,
            "unexpected EOF in COPY data"
        );
    }
}
