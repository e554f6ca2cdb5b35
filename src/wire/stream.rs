//! A connection's byte stream: the socket as accepted, or TLS over it once the client's
//! SSLRequest was accepted.
//!
//! Replies written by `reply_batch` go to the socket's descriptor directly. Over TLS the
//! session first encrypts the reply into its records ([`Transport::seal`]), which are
//! what goes out; the descriptor is offered only while the session has nothing of its
//! own waiting to be written, so records leave in the order the session made them. A TLS
//! stream is flushed after every write ([`super::backend::Output`] does), so that is
//! the case at the end of every round trip.

use std::io;
use std::os::fd::RawFd;
use std::pin::Pin;
use std::task::{Context, Poll};

use bytes::Bytes;
use std::io::Write;
use tokio::io::{AsyncRead, AsyncWrite, AsyncWriteExt, ReadBuf};
use tokio_rustls::server::TlsStream;

use super::connection::Transport;

pub enum Stream<S> {
    Plain(S),
    Tls(Box<TlsStream<S>>),
    /// A TLS handshake failed midway: the socket is gone.
    Closed,
}

/// What pg_stat_ssl shows of a TLS connection.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TlsInfo {
    pub version: String,
    pub cipher: String,
    pub bits: i32,
    /// The client's certificate, which the handshake verified (`ssl_ca_file`).
    pub client_certificate: Option<crate::auth::tls::ClientCertificate>,
}

impl<S: Transport> Stream<S> {
    /// The protocol and cipher suite, once TLS is up.
    pub fn tls_info(&self) -> Option<TlsInfo> {
        let Stream::Tls(tls) = self else {
            return None;
        };
        let (_, conn) = tls.get_ref();
        let version = match conn.protocol_version()? {
            tokio_rustls::rustls::ProtocolVersion::TLSv1_3 => "TLSv1.3".to_string(),
            tokio_rustls::rustls::ProtocolVersion::TLSv1_2 => "TLSv1.2".to_string(),
            other => format!("{other:?}"),
        };
        let suite = conn.negotiated_cipher_suite()?;
        let cipher = suite
            .suite()
            .as_str()
            .unwrap_or("unknown")
            .trim_start_matches("TLS13_")
            .trim_start_matches("TLS_")
            .to_string();
        let bits = if cipher.contains("256") || cipher.contains("CHACHA20") {
            256
        } else {
            128
        };
        let client_certificate = conn
            .peer_certificates()
            .and_then(|chain| chain.first())
            .and_then(|der| crate::auth::tls::ClientCertificate::from_der(der));
        Some(TlsInfo {
            version,
            cipher,
            bits,
            client_certificate,
        })
    }
}

impl<S: Transport> Transport for Stream<S> {
    fn socket_fd(&self) -> Option<RawFd> {
        match self {
            Stream::Plain(s) => s.socket_fd(),
            Stream::Tls(tls) => {
                let (socket, session) = tls.get_ref();
                match session.wants_write() {
                    true => None,
                    false => socket.socket_fd(),
                }
            }
            Stream::Closed => None,
        }
    }

    fn seal(&mut self, reply: Bytes) -> io::Result<Bytes> {
        let Stream::Tls(tls) = self else {
            return Ok(reply);
        };
        let (_, session) = tls.get_mut();
        let mut records = Vec::with_capacity(reply.len() + TLS_RECORD_OVERHEAD_BYTES);
        let mut rest: &[u8] = &reply;
        // The session takes what its buffer limit allows each time; drained, it takes more.
        while !rest.is_empty() {
            let taken = session.writer().write(rest)?;
            while session.wants_write() {
                session.write_tls(&mut records)?;
            }
            if taken == 0 {
                return Err(io::Error::new(
                    io::ErrorKind::WriteZero,
                    "the TLS session took none of a reply",
                ));
            }
            rest = &rest[taken..];
        }
        Ok(Bytes::from(records))
    }

    async fn write_sealed(&mut self, bytes: &[u8]) -> io::Result<()> {
        match self {
            Stream::Plain(s) => s.write_all(bytes).await,
            Stream::Tls(tls) => tls.get_mut().0.write_all(bytes).await,
            Stream::Closed => Err(closed()),
        }
    }
}

/// Room for a TLS record's header and tag per reply: records are encrypted into a buffer
/// this much larger than the reply (it grows if that is not enough).
const TLS_RECORD_OVERHEAD_BYTES: usize = 64;

fn closed() -> io::Error {
    io::Error::new(io::ErrorKind::NotConnected, "the connection is closed")
}

impl<S: Transport> AsyncRead for Stream<S> {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        match self.get_mut() {
            Stream::Plain(s) => Pin::new(s).poll_read(cx, buf),
            Stream::Tls(s) => Pin::new(s.as_mut()).poll_read(cx, buf),
            Stream::Closed => Poll::Ready(Ok(())),
        }
    }
}

impl<S: Transport> AsyncWrite for Stream<S> {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        match self.get_mut() {
            Stream::Plain(s) => Pin::new(s).poll_write(cx, buf),
            Stream::Tls(s) => Pin::new(s.as_mut()).poll_write(cx, buf),
            Stream::Closed => Poll::Ready(Err(closed())),
        }
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match self.get_mut() {
            Stream::Plain(s) => Pin::new(s).poll_flush(cx),
            Stream::Tls(s) => Pin::new(s.as_mut()).poll_flush(cx),
            Stream::Closed => Poll::Ready(Ok(())),
        }
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match self.get_mut() {
            Stream::Plain(s) => Pin::new(s).poll_shutdown(cx),
            Stream::Tls(s) => Pin::new(s.as_mut()).poll_shutdown(cx),
            Stream::Closed => Poll::Ready(Ok(())),
        }
    }
}
