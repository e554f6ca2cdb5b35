//! Backend (server → client) messages: encoding through `pgwire` into one write buffer.
//!
//! [`Output`] accumulates whole messages; the connection decides when they go to the socket
//! (see the batching rules in the module doc of `wire`). Every message is appended whole or
//! not at all, so the buffer always ends on a message boundary and may be written out at
//! any time without splitting a message.

use std::io;

use tokio::io::{AsyncWrite, AsyncWriteExt};

use bytes::{BufMut, Bytes, BytesMut};
use pgwire::messages::copy::{CopyInResponse, CopyOutResponse};
use pgwire::messages::data::{
    DataRow, FieldDescription, NoData, ParameterDescription, RowDescription, FORMAT_CODE_BINARY,
};
use pgwire::messages::extendedquery::{
    BindComplete, CloseComplete, ParseComplete, PortalSuspended,
};
use pgwire::messages::response::{
    CommandComplete, EmptyQueryResponse, ErrorResponse, NoticeResponse, ReadyForQuery,
    TransactionStatus,
};
use pgwire::messages::startup::{BackendKeyData, ParameterStatus, SecretKey};
use pgwire::messages::{Message, PgWireBackendMessage};

use crate::constants::WIRE_WRITE_BUFFER_BYTES;
use crate::error::{Error, Result, SqlState};
use crate::sql::{Field, TxnStatus};
use crate::types::{encode_binary, encode_text, DataType, Value};

/// Severity of an ErrorResponse. FATAL ends the connection after it is sent.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Severity {
    Error,
    Fatal,
}

impl Severity {
    fn as_str(self) -> &'static str {
        match self {
            Severity::Error => "ERROR",
            Severity::Fatal => "FATAL",
        }
    }
}

/// Strings in backend messages are NUL-terminated: drop any NUL inside one.
fn cstring(s: &str) -> String {
    if s.contains('\0') {
        s.replace('\0', "")
    } else {
        s.to_owned()
    }
}

/// The type a result column or parameter is described as. `unknown` is reported as `text`,
/// as PostgreSQL resolves unknown-typed output columns, so that clients get a concrete type.
pub fn described_type(ty: &DataType) -> DataType {
    match ty {
        DataType::Unknown => DataType::Text,
        other => *other,
    }
}

/// The bytes of a complete ErrorResponse, for callers that write outside an [`Output`].
pub fn error_response_bytes(err: &Error, severity: Severity) -> BytesMut {
    let mut out = Output::new();
    out.error(err, severity);
    out.buf
}

/// The connection's write buffer.
pub struct Output {
    buf: BytesMut,
    /// Reused for the body of each DataRow.
    row: BytesMut,
    /// Reused for each value's text or binary form.
    value: Vec<u8>,
}

impl Default for Output {
    fn default() -> Self {
        Output::new()
    }
}

impl Output {
    pub fn new() -> Output {
        Output {
            buf: BytesMut::with_capacity(8 * 1024),
            row: BytesMut::new(),
            value: Vec::new(),
        }
    }

    /// Bytes waiting to be written.
    pub fn pending(&self) -> usize {
        self.buf.len()
    }

    /// Whether the buffer has grown past the size at which it is written without waiting
    /// for a Sync, Flush or the end of the query.
    pub fn is_full(&self) -> bool {
        self.buf.len() >= WIRE_WRITE_BUFFER_BYTES
    }

    /// Drop everything buffered (the client is gone).
    pub fn clear(&mut self) {
        self.buf.clear();
    }

    /// Take everything buffered, leaving the buffer empty.
    pub fn take(&mut self) -> Bytes {
        let taken = self.buf.split().freeze();
        self.release_if_huge();
        taken
    }

    /// One huge reply should not pin its memory for the rest of the session.
    fn release_if_huge(&mut self) {
        if self.buf.capacity() > 4 * WIRE_WRITE_BUFFER_BYTES {
            self.buf = BytesMut::with_capacity(8 * 1024);
        }
    }

    /// Write everything buffered with one `write_all` and empty the buffer.
    pub async fn flush_to<W: AsyncWrite + Unpin>(&mut self, w: &mut W) -> io::Result<()> {
        if self.buf.is_empty() {
            return Ok(());
        }
        let result = match w.write_all(&self.buf).await {
            Ok(()) => w.flush().await,
            Err(e) => Err(e),
        };
        self.buf.clear();
        self.release_if_huge();
        result
    }

    /// Append one message, or nothing if it cannot be encoded (it is too large).
    fn encode<M: Message>(&mut self, msg: &M) -> Result<()> {
        let mark = self.buf.len();
        msg.encode(&mut self.buf).map_err(|e| {
            self.buf.truncate(mark);
            Error::new(
                SqlState::PROGRAM_LIMIT_EXCEEDED,
                format!("reply too large to send: {e}"),
            )
        })
    }

    /// Append a message that cannot realistically be too large; if it is, log and drop it.
    fn push<M: Message>(&mut self, msg: &M) {
        if let Err(e) = self.encode(msg) {
            tracing::warn!(error = %e, "could not encode a reply message");
        }
    }

    /// Append any backend message (used for the startup-phase messages).
    pub fn message(&mut self, msg: &PgWireBackendMessage) {
        let mark = self.buf.len();
        if let Err(e) = msg.encode(&mut self.buf) {
            self.buf.truncate(mark);
            tracing::warn!(error = %e, "could not encode a reply message");
        }
    }

    pub fn error(&mut self, err: &Error, severity: Severity) {
        let mut fields = vec![
            (b'S', severity.as_str().to_owned()),
            (b'V', severity.as_str().to_owned()),
            (b'C', err.code.0.to_owned()),
            (b'M', cstring(&err.message)),
        ];
        if let Some(detail) = &err.detail {
            fields.push((b'D', cstring(detail)));
        }
        if let Some(hint) = &err.hint {
            fields.push((b'H', cstring(hint)));
        }
        if let Some(object) = &err.object {
            for (tag, value) in [
                (b's', &object.schema),
                (b't', &object.table),
                (b'c', &object.column),
                (b'd', &object.datatype),
                (b'n', &object.constraint),
            ] {
                if let Some(value) = value {
                    fields.push((tag, cstring(value)));
                }
            }
        }
        self.push(&ErrorResponse::new(fields));
    }

    /// A NoticeResponse: at WARNING severity (PostgreSQL's 25001 on a nested BEGIN, say),
    /// or NOTICE for a message of code 00000 (`truncate cascades to table ...`).
    pub fn warning(&mut self, warning: &Error) {
        let severity = match warning.code.0 {
            "00000" => "NOTICE",
            _ => "WARNING",
        };
        let mut fields = vec![
            (b'S', severity.to_owned()),
            (b'V', severity.to_owned()),
            (b'C', warning.code.0.to_owned()),
            (b'M', cstring(&warning.message)),
        ];
        if let Some(detail) = &warning.detail {
            fields.push((b'D', cstring(detail)));
        }
        if let Some(hint) = &warning.hint {
            fields.push((b'H', cstring(hint)));
        }
        self.push(&NoticeResponse::new(fields));
    }

    pub fn parameter_status(&mut self, name: &str, value: &str) {
        self.push(&ParameterStatus::new(cstring(name), cstring(value)));
    }

    pub fn backend_key_data(&mut self, pid: i32, secret: i32) {
        self.push(&BackendKeyData::new(pid, SecretKey::I32(secret)));
    }

    pub fn ready_for_query(&mut self, status: TxnStatus) {
        let status = match status {
            TxnStatus::Idle => TransactionStatus::Idle,
            TxnStatus::InBlock => TransactionStatus::Transaction,
            TxnStatus::Failed => TransactionStatus::Error,
        };
        self.push(&ReadyForQuery::new(status));
    }

    pub fn command_complete(&mut self, tag: &str) {
        self.push(&CommandComplete::new(cstring(tag)));
    }

    pub fn empty_query(&mut self) {
        self.push(&EmptyQueryResponse::new());
    }

    pub fn parse_complete(&mut self) {
        self.push(&ParseComplete::new());
    }

    pub fn bind_complete(&mut self) {
        self.push(&BindComplete::new());
    }

    pub fn close_complete(&mut self) {
        self.push(&CloseComplete::new());
    }

    pub fn portal_suspended(&mut self) {
        self.push(&PortalSuspended::new());
    }

    pub fn no_data(&mut self) {
        self.push(&NoData::new());
    }

    pub fn parameter_description(&mut self, types: &[DataType]) {
        let oids = types.iter().map(|t| described_type(t).oid()).collect();
        self.push(&ParameterDescription::new(oids));
    }

    /// RowDescription; `formats[i]` is column i's format code (text when missing).
    pub fn row_description(&mut self, fields: &[Field], formats: &[i16]) -> Result<()> {
        let fields = fields
            .iter()
            .enumerate()
            .map(|(i, f)| {
                let ty = described_type(&f.data_type);
                FieldDescription::new(
                    cstring(&f.name),
                    f.table_oid as i32,
                    f.column_id,
                    ty.oid(),
                    ty.typlen(),
                    ty.typmod(),
                    formats.get(i).copied().unwrap_or(0),
                )
            })
            .collect();
        self.encode(&RowDescription::new(fields))
    }

    /// One DataRow; `formats[i]` is column i's format code (text when missing).
    pub fn data_row(&mut self, values: &[Value], formats: &[i16]) -> Result<()> {
        let count = i16::try_from(values.len()).map_err(|_| {
            Error::new(
                SqlState::PROGRAM_LIMIT_EXCEEDED,
                "too many columns in a result row",
            )
        })?;
        let mut row = std::mem::take(&mut self.row);
        row.clear();
        for (i, value) in values.iter().enumerate() {
            if value.is_null() {
                row.put_i32(-1);
                continue;
            }
            self.value.clear();
            if formats.get(i).copied() == Some(FORMAT_CODE_BINARY) {
                encode_binary(value, &mut self.value);
            } else {
                encode_text(value, &mut self.value);
            }
            let len = i32::try_from(self.value.len()).map_err(|_| {
                Error::new(SqlState::PROGRAM_LIMIT_EXCEEDED, "value too large to send")
            })?;
            row.put_i32(len);
            row.put_slice(&self.value);
        }
        let msg = DataRow::new(row, count);
        let result = self.encode(&msg);
        self.row = msg.data;
        result
    }

    /// A message built by hand: its type byte and body (the replication protocol's).
    pub fn raw(&mut self, tag: u8, body: &[u8]) {
        self.buf.reserve(5 + body.len());
        self.buf.extend_from_slice(&[tag]);
        self.buf
            .extend_from_slice(&((body.len() + 4) as i32).to_be_bytes());
        self.buf.extend_from_slice(body);
    }

    /// CopyBothResponse for streaming replication: binary, no columns.
    pub fn copy_both_response(&mut self) {
        self.raw(b'W', &[0, 0, 0]);
    }

    pub fn copy_done(&mut self) {
        self.raw(b'c', &[]);
    }

    pub fn copy_out_response(&mut self, columns: i16, binary: bool) {
        let format = i16::from(binary);
        let formats = vec![format; usize::try_from(columns).unwrap_or(0)];
        self.push(&CopyOutResponse::new(format as i8, columns, formats));
    }

    pub fn copy_data(&mut self, data: &[u8]) {
        self.raw(b'd', data);
    }

    pub fn copy_in_response(&mut self, columns: i16, binary: bool) {
        let format = i16::from(binary);
        let formats = vec![format; usize::try_from(columns).unwrap_or(0)];
        self.push(&CopyInResponse::new(format as i8, columns, formats));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::test_support::{block_on, split, CountingWriter};

    #[test]
    fn error_response_has_all_fields() {
        let err = Error::new(SqlState::UNIQUE_VIOLATION, "dup\0key")
            .with_detail("Key (id)=(1) already exists.")
            .with_hint("h");
        let bytes = error_response_bytes(&err, Severity::Fatal);
        let msgs = split(&bytes);
        assert_eq!(msgs.len(), 1);
        assert_eq!(msgs[0].0, b'E');
        assert_eq!(
            msgs[0].1,
            b"SFATAL\0VFATAL\0C23505\0Mdupkey\0DKey (id)=(1) already exists.\0Hh\0\0".to_vec()
        );
        let plain = error_response_bytes(&Error::internal("x"), Severity::Error);
        assert_eq!(
            split(&plain)[0].1,
            b"SERROR\0VERROR\0CXX000\0Mx\0\0".to_vec()
        );
    }

    #[test]
    fn describes_rows_and_parameters() {
        let mut out = Output::new();
        let fields = vec![
            Field {
                name: "id".into(),
                data_type: DataType::Int4,
                table_oid: 16384,
                column_id: 1,
            },
            Field {
                name: "v".into(),
                data_type: DataType::Varchar(Some(10)),
                table_oid: 0,
                column_id: 0,
            },
            Field {
                name: "u".into(),
                data_type: DataType::Unknown,
                table_oid: 0,
                column_id: 0,
            },
        ];
        out.row_description(&fields, &[1]).unwrap();
        out.parameter_description(&[DataType::Int8, DataType::Unknown]);
        let msgs = split(&out.buf);
        assert_eq!(msgs[0].0, b'T');
        let mut expected = vec![0, 3];
        expected.extend_from_slice(b"id\0");
        expected.extend_from_slice(&16384i32.to_be_bytes());
        expected.extend_from_slice(&1i16.to_be_bytes());
        expected.extend_from_slice(&23u32.to_be_bytes());
        expected.extend_from_slice(&4i16.to_be_bytes());
        expected.extend_from_slice(&(-1i32).to_be_bytes());
        expected.extend_from_slice(&1i16.to_be_bytes());
        expected.extend_from_slice(b"v\0");
        expected.extend_from_slice(&[0, 0, 0, 0, 0, 0]);
        expected.extend_from_slice(&1043u32.to_be_bytes());
        expected.extend_from_slice(&(-1i16).to_be_bytes());
        expected.extend_from_slice(&14i32.to_be_bytes());
        expected.extend_from_slice(&0i16.to_be_bytes());
        expected.extend_from_slice(b"u\0");
        expected.extend_from_slice(&[0, 0, 0, 0, 0, 0]);
        expected.extend_from_slice(&25u32.to_be_bytes());
        expected.extend_from_slice(&(-1i16).to_be_bytes());
        expected.extend_from_slice(&(-1i32).to_be_bytes());
        expected.extend_from_slice(&0i16.to_be_bytes());
        assert_eq!(msgs[0].1, expected);
        assert_eq!(msgs[1], (b't', vec![0, 2, 0, 0, 0, 20, 0, 0, 0, 25]));
    }

    #[test]
    fn null_data_row() {
        let mut out = Output::new();
        out.data_row(&[Value::Null, Value::Null], &[]).unwrap();
        out.data_row(&[], &[]).unwrap();
        let msgs = split(&out.buf);
        assert_eq!(
            msgs[0],
            (b'D', vec![0, 2, 255, 255, 255, 255, 255, 255, 255, 255])
        );
        assert_eq!(msgs[1], (b'D', vec![0, 0]));
    }

    #[test]
    fn small_messages() {
        let mut out = Output::new();
        out.ready_for_query(TxnStatus::Failed);
        out.command_complete("SELECT 1");
        out.copy_in_response(2, false);
        out.backend_key_data(7, -1);
        let msgs = split(&out.buf);
        assert_eq!(msgs[0], (b'Z', b"E".to_vec()));
        assert_eq!(msgs[1], (b'C', b"SELECT 1\0".to_vec()));
        assert_eq!(msgs[2], (b'G', vec![0, 0, 2, 0, 0, 0, 0]));
        assert_eq!(msgs[3], (b'K', vec![0, 0, 0, 7, 255, 255, 255, 255]));
    }

    #[test]
    fn many_messages_one_write() {
        let mut out = Output::new();
        for _ in 0..1000 {
            out.command_complete("INSERT 0 1");
            out.data_row(&[Value::Null], &[]).unwrap();
        }
        out.ready_for_query(TxnStatus::Idle);
        assert!(!out.is_full());
        let mut w = CountingWriter::default();
        let pending = out.pending();
        block_on(out.flush_to(&mut w)).unwrap();
        assert_eq!(w.writes, 1);
        assert_eq!(w.data.len(), pending);
        assert_eq!(out.pending(), 0);
        assert_eq!(split(&w.data).len(), 2001);
        // Nothing buffered: no write at all.
        block_on(out.flush_to(&mut w)).unwrap();
        assert_eq!(w.writes, 1);
    }
}
