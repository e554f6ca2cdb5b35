//! A connection's byte stream: the socket as accepted, or TLS over it once the client's
//! SSLRequest was accepted.
//!
//! Only a plain socket offers its descriptor for replies written by `reply_batch`
//! (which writes to descriptors directly): bytes written past TLS would not be
//! encrypted. A TLS stream is flushed after every write ([`super::backend::Output`]
//! does), so no reply waits in rustls's buffer.

use std::io;
use std::os::fd::RawFd;
use std::pin::Pin;
use std::task::{Context, Poll};

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
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
            _ => None,
        }
    }
}

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
