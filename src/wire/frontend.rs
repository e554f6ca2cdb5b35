//! Strict decoding of frontend (client → server) messages.
//!
//! Every read is bounds-checked against the bytes that are actually there: a truncated
//! body, a count larger than the rest of the message, a negative length or invalid UTF-8
//! gives an [`Error`] (08P01 or 22021), never a panic. Message lengths are checked from the
//! header before anything is buffered for the body, so an oversized claim costs nothing.
//!
//! [`Input`] is the connection's read buffer: it reads the socket in large chunks and hands
//! out whole messages as [`Bytes`] slices of that buffer (no copy), so pipelined messages
//! are parsed without a syscall each.

use std::io;

use bytes::{BufMut, Bytes, BytesMut};
use tokio::io::{AsyncRead, AsyncReadExt};

use crate::constants::{MAX_MESSAGE_BYTES, MAX_STARTUP_PACKET_BYTES};
use crate::error::{Error, Result, SqlState};

/// Largest message accepted for the frontend message types that carry at most a name
/// (Describe, Close, Execute, Sync, Flush, Terminate, CopyDone, CopyFail), like
/// PostgreSQL's `PQ_SMALL_MESSAGE_LIMIT`. Query, Parse, Bind, CopyData and FunctionCall
/// may be up to [`MAX_MESSAGE_BYTES`].
pub const SMALL_MESSAGE_BYTES: usize = 10_000;

/// Bytes asked of the socket per `read` call.
pub const READ_CHUNK_BYTES: usize = 64 * 1024;

/// An empty read buffer with more capacity than this is given back before the next read.
const SHRINK_ABOVE_BYTES: usize = 4 * READ_CHUNK_BYTES;

/// Startup-phase request codes (the Int32 after the length word).
pub const SSL_REQUEST_CODE: u32 = 80_877_103;
pub const GSSENC_REQUEST_CODE: u32 = 80_877_104;
pub const CANCEL_REQUEST_CODE: u32 = 80_877_102;

/// A packet of the startup phase (before the first typed message).
#[derive(Debug, PartialEq, Eq)]
pub enum StartupPacket {
    SslRequest,
    GssEncRequest,
    Cancel {
        pid: i32,
        secret: i32,
    },
    /// A StartupMessage. `params` is the raw parameter block, parsed by
    /// [`parse_startup_params`] once the protocol version has been accepted.
    Startup {
        major: u16,
        minor: u16,
        params: Bytes,
    },
}

/// Which object a Describe or Close message names.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Target {
    Statement,
    Portal,
}

/// A decoded typed frontend message.
#[derive(Debug, PartialEq, Eq)]
pub enum FrontendMessage {
    Query {
        sql: String,
    },
    Parse {
        name: String,
        sql: String,
        param_oids: Vec<u32>,
    },
    Bind {
        portal: String,
        statement: String,
        param_formats: Vec<i16>,
        /// `None` is SQL NULL (length -1).
        params: Vec<Option<Bytes>>,
        result_formats: Vec<i16>,
    },
    Describe {
        target: Target,
        name: String,
    },
    Execute {
        portal: String,
        max_rows: i32,
    },
    Close {
        target: Target,
        name: String,
    },
    Sync,
    Flush,
    Terminate,
    /// FunctionCall ('F'): recognised so that the framing stays intact, but not supported.
    FunctionCall,
    CopyData(Bytes),
    CopyDone,
    CopyFail {
        message: String,
    },
}

fn protocol_violation(message: impl Into<String>) -> Error {
    Error::new(SqlState::PROTOCOL_VIOLATION, message)
}

fn insufficient_data() -> Error {
    protocol_violation("insufficient data left in message")
}

/// Whether `tag` is a frontend message type we accept after startup.
pub fn is_known_type(tag: u8) -> bool {
    matches!(
        tag,
        b'Q' | b'P'
            | b'B'
            | b'D'
            | b'E'
            | b'C'
            | b'S'
            | b'H'
            | b'X'
            | b'F'
            | b'd'
            | b'c'
            | b'f'
            | b'p'
    )
}

/// The largest total length (including the length word) accepted for a message type.
pub fn max_length(tag: u8) -> usize {
    match tag {
        b'Q' | b'P' | b'B' | b'd' | b'F' => MAX_MESSAGE_BYTES,
        _ => SMALL_MESSAGE_BYTES,
    }
}

/// Validate a typed message's header; returns the body length. Both failures are fatal to
/// the connection, since the stream can no longer be framed.
pub fn check_header(tag: u8, length: i32) -> Result<usize> {
    if !is_known_type(tag) {
        return Err(protocol_violation(format!(
            "invalid frontend message type {tag}"
        )));
    }
    match usize::try_from(length) {
        Ok(len) if len >= 4 && len <= max_length(tag) => Ok(len - 4),
        _ => Err(protocol_violation("invalid message length")),
    }
}

/// Validate a startup packet's length word (which counts itself); returns the body length.
pub fn check_startup_length(length: i32) -> Result<usize> {
    match usize::try_from(length) {
        Ok(len) if (8..=MAX_STARTUP_PACKET_BYTES).contains(&len) => Ok(len - 4),
        _ => Err(protocol_violation("invalid length of startup packet")),
    }
}

pub use crate::types::{utf8, utf8_text};

/// A bounds-checked reader over one message body.
struct Reader {
    buf: Bytes,
    pos: usize,
}

impl Reader {
    fn new(buf: Bytes) -> Reader {
        Reader { buf, pos: 0 }
    }

    fn remaining(&self) -> usize {
        self.buf.len() - self.pos
    }

    fn take(&mut self, n: usize) -> Result<&[u8]> {
        if n > self.remaining() {
            return Err(insufficient_data());
        }
        let start = self.pos;
        self.pos += n;
        Ok(&self.buf[start..self.pos])
    }

    fn u8(&mut self) -> Result<u8> {
        Ok(self.take(1)?[0])
    }

    fn u16(&mut self) -> Result<u16> {
        let b = self.take(2)?;
        Ok(u16::from_be_bytes([b[0], b[1]]))
    }

    fn i16(&mut self) -> Result<i16> {
        let b = self.take(2)?;
        Ok(i16::from_be_bytes([b[0], b[1]]))
    }

    fn i32(&mut self) -> Result<i32> {
        let b = self.take(4)?;
        Ok(i32::from_be_bytes([b[0], b[1], b[2], b[3]]))
    }

    fn u32(&mut self) -> Result<u32> {
        let b = self.take(4)?;
        Ok(u32::from_be_bytes([b[0], b[1], b[2], b[3]]))
    }

    /// `n` bytes as a zero-copy slice of the message.
    fn bytes(&mut self, n: usize) -> Result<Bytes> {
        if n > self.remaining() {
            return Err(insufficient_data());
        }
        let start = self.pos;
        self.pos += n;
        Ok(self.buf.slice(start..self.pos))
    }

    /// A NUL-terminated string, which must be valid UTF-8.
    fn cstring(&mut self) -> Result<String> {
        let rest = &self.buf[self.pos..];
        let Some(nul) = rest.iter().position(|&b| b == 0) else {
            return Err(protocol_violation("invalid string in message"));
        };
        let s = utf8(&rest[..nul])?.to_owned();
        self.pos += nul + 1;
        Ok(s)
    }

    /// A count of `elem_size`-byte elements that must fit in the rest of the message.
    fn count(&mut self, elem_size: usize) -> Result<usize> {
        let n = usize::from(self.u16()?);
        if n.saturating_mul(elem_size) > self.remaining() {
            return Err(insufficient_data());
        }
        Ok(n)
    }

    fn format_codes(&mut self) -> Result<Vec<i16>> {
        let n = self.count(2)?;
        (0..n).map(|_| self.i16()).collect()
    }

    fn target(&mut self, what: &str) -> Result<Target> {
        match self.u8()? {
            b'S' => Ok(Target::Statement),
            b'P' => Ok(Target::Portal),
            other => Err(protocol_violation(format!(
                "invalid {what} message subtype {other}"
            ))),
        }
    }

    fn finish(&self) -> Result<()> {
        if self.remaining() != 0 {
            return Err(protocol_violation("invalid message format"));
        }
        Ok(())
    }
}

/// Decode the body of a typed message whose header passed [`check_header`].
pub fn decode_message(tag: u8, body: Bytes) -> Result<FrontendMessage> {
    let mut r = Reader::new(body);
    let msg = match tag {
        b'Q' => FrontendMessage::Query { sql: r.cstring()? },
        b'P' => {
            let name = r.cstring()?;
            let sql = r.cstring()?;
            let n = r.count(4)?;
            let param_oids = (0..n).map(|_| r.u32()).collect::<Result<Vec<_>>>()?;
            FrontendMessage::Parse {
                name,
                sql,
                param_oids,
            }
        }
        b'B' => decode_bind(&mut r)?,
        b'D' => {
            let target = r.target("DESCRIBE")?;
            FrontendMessage::Describe {
                target,
                name: r.cstring()?,
            }
        }
        b'E' => {
            let portal = r.cstring()?;
            FrontendMessage::Execute {
                portal,
                max_rows: r.i32()?,
            }
        }
        b'C' => {
            let target = r.target("CLOSE")?;
            FrontendMessage::Close {
                target,
                name: r.cstring()?,
            }
        }
        b'S' => FrontendMessage::Sync,
        b'H' => FrontendMessage::Flush,
        // Nothing in these bodies matters; PostgreSQL does not check them either.
        b'X' => return Ok(FrontendMessage::Terminate),
        b'c' => return Ok(FrontendMessage::CopyDone),
        b'F' => return Ok(FrontendMessage::FunctionCall),
        b'd' => return Ok(FrontendMessage::CopyData(r.buf)),
        b'f' => FrontendMessage::CopyFail {
            message: r.cstring()?,
        },
        other => {
            return Err(protocol_violation(format!(
                "invalid frontend message type {other}"
            )))
        }
    };
    r.finish()?;
    Ok(msg)
}

fn decode_bind(r: &mut Reader) -> Result<FrontendMessage> {
    let portal = r.cstring()?;
    let statement = r.cstring()?;
    let param_formats = r.format_codes()?;
    let n = r.count(4)?;
    let mut params = Vec::with_capacity(n);
    for i in 0..n {
        let len = r.i32()?;
        if len == -1 {
            params.push(None);
            continue;
        }
        let len = usize::try_from(len).map_err(|_| {
            protocol_violation(format!("invalid length {len} of bind parameter {}", i + 1))
        })?;
        params.push(Some(r.bytes(len)?));
    }
    let result_formats = r.format_codes()?;
    Ok(FrontendMessage::Bind {
        portal,
        statement,
        param_formats,
        params,
        result_formats,
    })
}

/// Decode the body of a startup-phase packet whose length passed [`check_startup_length`].
pub fn decode_startup(body: Bytes) -> Result<StartupPacket> {
    let mut r = Reader::new(body);
    let code = r.u32()?;
    let packet = match code {
        SSL_REQUEST_CODE => StartupPacket::SslRequest,
        GSSENC_REQUEST_CODE => StartupPacket::GssEncRequest,
        CANCEL_REQUEST_CODE => {
            let pid = r.i32()?;
            StartupPacket::Cancel {
                pid,
                secret: r.i32()?,
            }
        }
        _ => {
            let params = r.bytes(r.remaining())?;
            StartupPacket::Startup {
                major: (code >> 16) as u16,
                minor: code as u16,
                params,
            }
        }
    };
    if r.remaining() != 0 {
        return Err(protocol_violation("invalid length of startup packet"));
    }
    Ok(packet)
}

/// Parse a protocol-3 parameter block: NUL-terminated name/value pairs ending with an
/// empty name, the terminator being exactly the last byte. Later duplicates win.
pub fn parse_startup_params(block: &[u8]) -> Result<Vec<(String, String)>> {
    let layout =
        || protocol_violation("invalid startup packet layout: expected terminator as last byte");
    let mut params: Vec<(String, String)> = Vec::new();
    let mut rest = block;
    loop {
        let nul = rest.iter().position(|&b| b == 0).ok_or_else(layout)?;
        if nul == 0 {
            // The terminator: it must be the last byte.
            return if rest.len() == 1 {
                Ok(params)
            } else {
                Err(layout())
            };
        }
        let name = utf8(&rest[..nul])?.to_owned();
        rest = &rest[nul + 1..];
        let nul = rest.iter().position(|&b| b == 0).ok_or_else(layout)?;
        let value = utf8(&rest[..nul])?.to_owned();
        rest = &rest[nul + 1..];
        params.retain(|(n, _)| *n != name);
        params.push((name, value));
    }
}

/// What [`Input`] found at the front of its buffer.
#[derive(Debug)]
pub enum Framed<T> {
    /// A whole message or packet.
    Ready(T),
    /// More bytes are needed.
    Incomplete,
}

/// The connection's read buffer.
pub struct Input {
    buf: BytesMut,
}

impl Default for Input {
    fn default() -> Self {
        Input::new()
    }
}

impl Input {
    pub fn new() -> Input {
        Input {
            buf: BytesMut::new(),
        }
    }

    /// Bytes received but not yet handed out.
    pub fn buffered(&self) -> usize {
        self.buf.len()
    }

    /// One read from `src` straight into the buffer (at most `READ_CHUNK_BYTES`); returns
    /// the number of bytes read, 0 at end of stream.
    pub async fn fill<R: AsyncRead + Unpin>(&mut self, src: &mut R) -> io::Result<usize> {
        // Do not keep the memory of one huge message for the rest of the session.
        if self.buf.is_empty() && self.buf.capacity() > SHRINK_ABOVE_BYTES {
            self.buf = BytesMut::new();
        }
        self.buf.reserve(READ_CHUNK_BYTES);
        let mut limited = (&mut self.buf).limit(READ_CHUNK_BYTES);
        src.read_buf(&mut limited).await
    }

    /// Take one startup-phase packet (its body, after the length word).
    pub fn take_startup(&mut self) -> Result<Framed<StartupPacket>> {
        if self.buf.len() < 4 {
            return Ok(Framed::Incomplete);
        }
        let len = i32::from_be_bytes([self.buf[0], self.buf[1], self.buf[2], self.buf[3]]);
        let body_len = check_startup_length(len)?;
        if self.buf.len() < 4 + body_len {
            return Ok(Framed::Incomplete);
        }
        let packet = self.buf.split_to(4 + body_len).freeze();
        decode_startup(packet.slice(4..)).map(Framed::Ready)
    }

    /// Take one typed message: its type byte and body. An error means the stream can no
    /// longer be framed (unknown type or bad length) and the connection must end.
    pub fn take_message(&mut self) -> Result<Framed<(u8, Bytes)>> {
        let Some(&tag) = self.buf.first() else {
            return Ok(Framed::Incomplete);
        };
        if !is_known_type(tag) {
            return Err(protocol_violation(format!(
                "invalid frontend message type {tag}"
            )));
        }
        if self.buf.len() < 5 {
            return Ok(Framed::Incomplete);
        }
        let len = i32::from_be_bytes([self.buf[1], self.buf[2], self.buf[3], self.buf[4]]);
        let body_len = check_header(tag, len)?;
        if self.buf.len() < 5 + body_len {
            return Ok(Framed::Incomplete);
        }
        let message = self.buf.split_to(5 + body_len).freeze();
        Ok(Framed::Ready((tag, message.slice(5..))))
    }
}

#[cfg(test)]
#[path = "frontend_tests.rs"]
mod tests;
