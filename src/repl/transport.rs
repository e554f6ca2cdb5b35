//! The bytes between a standby (or `steadydb basebackup`) and its primary: a TCP socket,
//! and TLS over it when `primary_conninfo`'s `sslmode` asks for it (see `conninfo`).
//!
//! Two threads use one connection: the walreceiver reads the stream (and writes its
//! replies), the replayer writes its applied-position reports. A plain socket is simply
//! shared. A TLS session is one state for both directions, so it sits behind a mutex,
//! held only to decrypt bytes already read or to encrypt and send one message: the
//! blocking read of the socket happens outside it, so a report never waits for the
//! reader's poll, and the reader never waits for more than one report's write.
//!
//! The handshake follows libpq: an SSLRequest, then `S` (TLS), `N` (the primary has no
//! TLS: a plain connection if `sslmode` allows one) or anything else (an error). With
//! `prefer`, a failed handshake is retried without TLS, as libpq does. The primary's
//! certificate is verified as `sslmode` and `sslrootcert` say: its chain against the root
//! certificates, and for `verify-full` its names against `host` (webpki checks
//! subjectAltName entries; a certificate with only a common name does not match).
//! Whatever the mode, the handshake's signatures are verified with the certificate's key,
//! so SCRAM channel binding to that certificate means something.

use std::io::{self, Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use parking_lot::Mutex;
use rustls_pki_types::{CertificateDer, PrivateKeyDer, ServerName, UnixTime};
use tokio_rustls::rustls::{self, ClientConfig, ClientConnection};

use super::conninfo::{Conninfo, SslMode};
use crate::error::{Error, Result, SqlState};

/// How long connecting, the TLS negotiation and each write may take.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);
const WRITE_TIMEOUT: Duration = Duration::from_secs(30);
/// The most bytes one read takes from the socket.
const READ_CHUNK_BYTES: usize = 128 * 1024;
/// PostgreSQL's SSLRequest code.
const SSL_REQUEST_CODE: i32 = 80877103;

pub(crate) fn conn_error(what: String) -> Error {
    Error::new(SqlState::CONNECTION_FAILURE, what)
}

/// One connection to the primary: what the walreceiver's thread reads and writes.
pub(crate) struct Transport {
    socket: TcpStream,
    tls: Option<TlsInput>,
    sender: Sender,
}

/// The reading side of a TLS session: ciphertext read from the socket, and plaintext
/// decrypted but not yet taken.
struct TlsInput {
    session: Arc<Mutex<ClientConnection>>,
    ciphertext: Vec<u8>,
    plaintext: Vec<u8>,
    taken: usize,
    /// The primary ended the session (close_notify).
    closed: bool,
}

/// The writing side: the reader's thread and the replayer's each have one.
pub(crate) struct Sender {
    socket: TcpStream,
    session: Option<Arc<Mutex<ClientConnection>>>,
}

impl Transport {
    /// Connect to the primary, negotiating TLS as `c.sslmode` says; reads then wait at
    /// most `read_poll`.
    pub(crate) fn connect(c: &Conninfo, read_poll: Duration) -> Result<Transport> {
        let tls = match c.sslmode.asks_for_tls() {
            true => Some(client_config(c)?),
            false => None,
        };
        let transport = match tls {
            None => Transport::plain(tcp_connect(c)?)?,
            Some(config) => match Transport::negotiate(c, tcp_connect(c)?, config) {
                Err(e)
                    if c.sslmode == SslMode::Prefer && e.code != SqlState::CONNECTION_FAILURE =>
                {
                    tracing::info!("{}; connecting without TLS (sslmode=prefer)", e.message);
                    Transport::plain(tcp_connect(c)?)?
                }
                other => other?,
            },
        };
        transport
            .socket
            .set_read_timeout(Some(read_poll))
            .map_err(|e| conn_error(e.to_string()))?;
        Ok(transport)
    }

    fn plain(socket: TcpStream) -> Result<Transport> {
        let sender = Sender {
            socket: socket
                .try_clone()
                .map_err(|e| conn_error(format!("could not share the connection: {e}")))?,
            session: None,
        };
        Ok(Transport {
            socket,
            tls: None,
            sender,
        })
    }

    /// SSLRequest, then the handshake if the primary agrees. A TLS failure is 08P01
    /// (which `prefer` answers with a plain connection); a refusal of plain when TLS is
    /// required is 08001.
    fn negotiate(
        c: &Conninfo,
        mut socket: TcpStream,
        config: Arc<ClientConfig>,
    ) -> Result<Transport> {
        let mut request = Vec::with_capacity(8);
        request.extend_from_slice(&8i32.to_be_bytes());
        request.extend_from_slice(&SSL_REQUEST_CODE.to_be_bytes());
        socket
            .write_all(&request)
            .map_err(|e| conn_error(format!("could not send SSL negotiation packet: {e}")))?;
        let mut answer = [0u8; 1];
        socket
            .read_exact(&mut answer)
            .map_err(|e| conn_error(format!("could not receive SSL negotiation answer: {e}")))?;
        match answer[0] {
            b'S' => {}
            b'N' if c.sslmode.requires_tls() => {
                return Err(Error::new(
                    SqlState::SQLCLIENT_UNABLE_TO_ESTABLISH_SQLCONNECTION,
                    "server does not support SSL, but SSL was required",
                ))
            }
            b'N' => return Transport::plain(socket),
            other => {
                return Err(conn_error(format!(
                    "received invalid response to SSL negotiation: {}",
                    char::from(other)
                )))
            }
        }
        let name = server_name(c)?;
        let mut session = ClientConnection::new(config, name)
            .map_err(|e| tls_error(format!("could not start TLS: {e}")))?;
        while session.is_handshaking() {
            session
                .complete_io(&mut socket)
                .map_err(|e| tls_error(format!("SSL error: {e}")))?;
        }
        let session = Arc::new(Mutex::new(session));
        let sender = Sender {
            socket: socket
                .try_clone()
                .map_err(|e| conn_error(format!("could not share the connection: {e}")))?,
            session: Some(session.clone()),
        };
        Ok(Transport {
            socket,
            tls: Some(TlsInput {
                session,
                ciphertext: vec![0; READ_CHUNK_BYTES],
                plaintext: Vec::new(),
                taken: 0,
                closed: false,
            }),
            sender,
        })
    }

    /// Whether the connection is encrypted.
    pub(crate) fn is_tls(&self) -> bool {
        self.tls.is_some()
    }

    /// SCRAM's `tls-server-end-point` data: the hash of the primary's certificate.
    pub(crate) fn end_point_hash(&self) -> Option<Vec<u8>> {
        let tls = self.tls.as_ref()?;
        let session = tls.session.lock();
        let cert = session.peer_certificates()?.first()?;
        Some(crate::auth::tls::end_point_hash(cert))
    }

    /// Another handle that sends on this connection.
    pub(crate) fn sender(&self) -> Result<Sender> {
        Ok(Sender {
            socket: self
                .socket
                .try_clone()
                .map_err(|e| conn_error(format!("could not share the connection: {e}")))?,
            session: self.tls.as_ref().map(|t| t.session.clone()),
        })
    }

    pub(crate) fn send(&mut self, data: &[u8]) -> io::Result<()> {
        self.sender.write_all(data)
    }

    /// Read what has arrived into `out`: 0 when the primary closed the connection,
    /// WouldBlock / TimedOut when nothing came within the read's wait.
    pub(crate) fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        let Some(tls) = self.tls.as_mut() else {
            return self.socket.read(out);
        };
        loop {
            if tls.taken < tls.plaintext.len() {
                let n = out.len().min(tls.plaintext.len() - tls.taken);
                out[..n].copy_from_slice(&tls.plaintext[tls.taken..tls.taken + n]);
                tls.taken += n;
                if tls.taken == tls.plaintext.len() {
                    tls.plaintext.clear();
                    tls.taken = 0;
                }
                return Ok(n);
            }
            if tls.closed {
                return Ok(0);
            }
            // Blocking, and outside the session's lock.
            let n = self.socket.read(&mut tls.ciphertext)?;
            if n == 0 {
                return Ok(0);
            }
            tls.decrypt(n, &self.socket)?;
        }
    }
}

impl TlsInput {
    /// Feed the first `n` bytes of `ciphertext` to the session and take the plaintext
    /// out; send what the session has to say back (alerts, key updates).
    fn decrypt(&mut self, n: usize, socket: &TcpStream) -> io::Result<()> {
        let mut session = self.session.lock();
        let mut rest = &self.ciphertext[..n];
        while !rest.is_empty() {
            session.read_tls(&mut rest)?;
            let state = session
                .process_new_packets()
                .map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))?;
            let mut chunk = [0u8; 16 * 1024];
            loop {
                match session.reader().read(&mut chunk) {
                    Ok(0) => {
                        self.closed = true;
                        break;
                    }
                    Ok(k) => self.plaintext.extend_from_slice(&chunk[..k]),
                    Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
                    Err(e) => return Err(e),
                }
            }
            if state.peer_has_closed() {
                self.closed = true;
            }
        }
        while session.wants_write() {
            session.write_tls(&mut &*socket)?;
        }
        Ok(())
    }
}

impl Sender {
    /// Send `data` whole (encrypted over TLS).
    pub(crate) fn write_all(&mut self, data: &[u8]) -> io::Result<()> {
        let Some(session) = &self.session else {
            return self.socket.write_all(data);
        };
        let mut session = session.lock();
        let mut rest = data;
        while !rest.is_empty() {
            let n = session.writer().write(rest)?;
            rest = &rest[n..];
            while session.wants_write() {
                session.write_tls(&mut &self.socket)?;
            }
        }
        Ok(())
    }
}

fn tcp_connect(c: &Conninfo) -> Result<TcpStream> {
    let addr = format!("{}:{}", c.address_host(), c.port);
    let addrs = std::net::ToSocketAddrs::to_socket_addrs(&addr)
        .map_err(|e| conn_error(format!("could not translate host name \"{}\": {e}", c.host)))?;
    let mut last = None;
    for a in addrs {
        match TcpStream::connect_timeout(&a, CONNECT_TIMEOUT) {
            Ok(stream) => {
                let _ = stream.set_nodelay(true);
                stream
                    .set_read_timeout(Some(CONNECT_TIMEOUT))
                    .and_then(|_| stream.set_write_timeout(Some(WRITE_TIMEOUT)))
                    .map_err(|e| conn_error(e.to_string()))?;
                return Ok(stream);
            }
            Err(e) => last = Some(e),
        }
    }
    Err(conn_error(format!(
        "could not connect to the primary server at {addr}: {}",
        last.map_or("no address".to_string(), |e| e.to_string())
    )))
}

fn tls_error(message: String) -> Error {
    Error::new(SqlState::PROTOCOL_VIOLATION, message)
}

/// The name the primary's certificate must carry (and SNI sends): `host`.
fn server_name(c: &Conninfo) -> Result<ServerName<'static>> {
    match ServerName::try_from(c.host.clone()) {
        Ok(name) => Ok(name),
        Err(_) if c.sslmode != SslMode::VerifyFull => Ok(ServerName::try_from("localhost")
            .map_err(|e| conn_error(e.to_string()))?
            .to_owned()),
        Err(e) => Err(conn_error(format!(
            "host name \"{}\" cannot be checked against a certificate: {e}",
            c.host
        ))),
    }
}

/// `~/.postgresql/NAME`, libpq's default place for its certificate files.
fn default_file(name: &str) -> Option<PathBuf> {
    std::env::var_os("HOME").map(|home| Path::new(&home).join(".postgresql").join(name))
}

/// The TLS client configuration `c` asks for.
fn client_config(c: &Conninfo) -> Result<Arc<ClientConfig>> {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let root_file = c.sslrootcert.clone().or_else(|| default_file("root.crt"));
    let roots = match root_file {
        Some(path) if path.exists() => Some(load_roots(&path)?),
        Some(path) if matches!(c.sslmode, SslMode::VerifyCa | SslMode::VerifyFull) => {
            return Err(Error::new(
                SqlState::SQLCLIENT_UNABLE_TO_ESTABLISH_SQLCONNECTION,
                format!(
                    "root certificate file \"{}\" does not exist\nEither provide the file or change sslmode to disable server certificate verification.",
                    path.display()
                ),
            ))
        }
        _ => None,
    };
    let webpki = match roots {
        Some(roots) => Some(
            rustls::client::WebPkiServerVerifier::builder_with_provider(
                Arc::new(roots),
                provider.clone(),
            )
            .build()
            .map_err(|e| conn_error(format!("could not set up TLS: {e}")))?,
        ),
        None => None,
    };
    let verifier = Arc::new(PrimaryVerifier {
        webpki,
        check_name: c.sslmode == SslMode::VerifyFull,
        algorithms: provider.signature_verification_algorithms,
    });
    let builder = ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| conn_error(format!("could not set up TLS: {e}")))?
        .dangerous()
        .with_custom_certificate_verifier(verifier);
    let cert_file = c.sslcert.clone().or_else(|| default_file("postgresql.crt"));
    let config = match cert_file.filter(|p| p.exists()) {
        None => builder.with_no_client_auth(),
        Some(cert_file) => {
            let key_file = c
                .sslkey
                .clone()
                .or_else(|| default_file("postgresql.key"))
                .unwrap_or_default();
            let (certs, key) = load_client_certificate(&cert_file, &key_file)?;
            builder
                .with_client_auth_cert(certs, key)
                .map_err(|e| conn_error(format!("could not load client certificate: {e}")))?
        }
    };
    Ok(Arc::new(config))
}

fn load_roots(path: &Path) -> Result<rustls::RootCertStore> {
    crate::auth::tls::pem_root_store(path).map_err(|e| {
        conn_error(format!(
            "could not read root certificate file \"{}\": {e}",
            path.display()
        ))
    })
}

fn load_client_certificate(
    cert_file: &Path,
    key_file: &Path,
) -> Result<(Vec<CertificateDer<'static>>, PrivateKeyDer<'static>)> {
    let certs = crate::auth::tls::pem_certificates(cert_file).map_err(|e| {
        conn_error(format!(
            "could not read certificate file \"{}\": {e}",
            cert_file.display()
        ))
    })?;
    if !key_file.exists() {
        return Err(conn_error(format!(
            "certificate present, but not private key file \"{}\"",
            key_file.display()
        )));
    }
    let key = crate::auth::tls::pem_private_key(key_file).map_err(|e| {
        conn_error(format!(
            "could not load private key file \"{}\": {e}",
            key_file.display()
        ))
    })?;
    Ok((certs, key))
}

/// The primary's certificate, checked as `sslmode` asks: its chain when there are root
/// certificates (None: not at all, as libpq's `require` without a root file), its names
/// for `verify-full`; the handshake's signatures always.
#[derive(Debug)]
struct PrimaryVerifier {
    webpki: Option<Arc<rustls::client::WebPkiServerVerifier>>,
    check_name: bool,
    algorithms: rustls::crypto::WebPkiSupportedAlgorithms,
}

impl rustls::client::danger::ServerCertVerifier for PrimaryVerifier {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp_response: &[u8],
        now: UnixTime,
    ) -> std::result::Result<rustls::client::danger::ServerCertVerified, rustls::Error> {
        let Some(webpki) = &self.webpki else {
            return Ok(rustls::client::danger::ServerCertVerified::assertion());
        };
        match webpki.verify_server_cert(end_entity, intermediates, server_name, ocsp_response, now)
        {
            Err(rustls::Error::InvalidCertificate(
                rustls::CertificateError::NotValidForName
                | rustls::CertificateError::NotValidForNameContext { .. },
            )) if !self.check_name => Ok(rustls::client::danger::ServerCertVerified::assertion()),
            other => other,
        }
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &rustls::DigitallySignedStruct,
    ) -> std::result::Result<rustls::client::danger::HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls12_signature(message, cert, dss, &self.algorithms)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &rustls::DigitallySignedStruct,
    ) -> std::result::Result<rustls::client::danger::HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(message, cert, dss, &self.algorithms)
    }

    fn supported_verify_schemes(&self) -> Vec<rustls::SignatureScheme> {
        self.algorithms.supported_schemes()
    }
}
