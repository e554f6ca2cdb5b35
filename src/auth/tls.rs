//! TLS: the server's certificate and key, loaded from PEM files into a rustls
//! configuration that `wire` hands each connection whose SSLRequest it accepts.
//!
//! `ssl = on` loads `ssl_cert_file` and `ssl_key_file` (relative paths are in the data
//! directory) at startup, where a missing or bad file stops the server, and again on
//! reload, where it is logged and the configuration in force stays, as PostgreSQL does.
//! TLS 1.2 and 1.3 are offered (PostgreSQL's `ssl_min_protocol_version` default is
//! TLSv1.2), with rustls's cipher suites.
//!
//! With `ssl_ca_file`, the server asks each client for a certificate, as PostgreSQL
//! does: one it sends must be signed by a CA of that file (else the handshake fails);
//! one it does not send is allowed here and refused later by a `pg_hba.conf` line that
//! needs one (method `cert`, or `clientcert=verify-ca` / `verify-full`). The verified
//! certificate's names ([`ClientCertificate`]) are what those lines compare with the
//! user name, and what pg_stat_ssl shows.
//!
//! webpki verifies X.509 v3 certificates only, but OpenSSL 3.0 makes v1 ones (no
//! extensions), as PostgreSQL's documented `openssl x509 -req` does for client
//! certificates: a v1 client certificate is accepted when a CA of `ssl_ca_file` signed it
//! directly and it is within its validity period ([`ClientVerifier`]); a v1 certificate
//! can be no CA, so there is no chain to follow.

use std::path::Path;
use std::sync::Arc;

use rustls_pki_types::pem::PemObject;
use rustls_pki_types::{CertificateDer, PrivateKeyDer};
use tokio_rustls::rustls::ServerConfig;

use crate::error::{Error, Result, SqlState};

fn config_error(message: String) -> Error {
    Error::new(SqlState::CONFIG_FILE_ERROR, message)
}

/// The TLS configuration in force.
#[derive(Clone)]
pub struct TlsConfig {
    pub server: Arc<ServerConfig>,
    /// SCRAM's `tls-server-end-point` channel binding data (RFC 5929): the hash of the
    /// server's certificate.
    pub end_point_hash: Vec<u8>,
    /// Whether client certificates are asked for and verified (`ssl_ca_file` is set).
    pub checks_client_certificates: bool,
}

/// The server configuration of a certificate chain and its key, each a PEM file, and
/// the CAs whose client certificates it accepts (`ca_file`, PEM; None: it asks for none).
pub fn server_config(
    cert_file: &Path,
    key_file: &Path,
    ca_file: Option<&Path>,
) -> Result<TlsConfig> {
    let certs = pem_certificates(cert_file).map_err(|e| {
        config_error(format!(
            "could not load server certificate file \"{}\": {e}",
            cert_file.display()
        ))
    })?;
    let key = pem_private_key(key_file).map_err(|e| {
        config_error(format!(
            "could not load private key file \"{}\": {e}",
            key_file.display()
        ))
    })?;
    let provider = Arc::new(tokio_rustls::rustls::crypto::ring::default_provider());
    let builder = ServerConfig::builder_with_provider(provider.clone())
        .with_safe_default_protocol_versions()
        .map_err(|e| config_error(format!("could not set up TLS: {e}")))?;
    let end_point_hash = end_point_hash(&certs[0]);
    let builder = match ca_file {
        None => builder.with_no_client_auth(),
        Some(ca_file) => builder.with_client_cert_verifier(client_verifier(ca_file, provider)?),
    };
    let config = builder.with_single_cert(certs, key).map_err(|e| {
        config_error(format!(
            "private key file \"{}\" does not match server certificate file \"{}\": {e}",
            key_file.display(),
            cert_file.display()
        ))
    })?;
    Ok(TlsConfig {
        server: Arc::new(config),
        end_point_hash,
        checks_client_certificates: ca_file.is_some(),
    })
}

/// The certificates of a PEM file, in order; an error (its reason) when it cannot be
/// read or holds none.
pub(crate) fn pem_certificates(
    path: &Path,
) -> std::result::Result<Vec<CertificateDer<'static>>, String> {
    let certs: Vec<CertificateDer<'static>> = CertificateDer::pem_file_iter(path)
        .and_then(|certs| certs.collect::<std::result::Result<_, _>>())
        .map_err(|e| e.to_string())?;
    match certs.is_empty() {
        true => Err("no certificate in it".into()),
        false => Ok(certs),
    }
}

/// The private key of a PEM file; an error (its reason) when there is none.
pub(crate) fn pem_private_key(path: &Path) -> std::result::Result<PrivateKeyDer<'static>, String> {
    PrivateKeyDer::from_pem_file(path).map_err(|e| e.to_string())
}

/// The CA certificates of a PEM file, as trust anchors.
pub(crate) fn pem_root_store(
    path: &Path,
) -> std::result::Result<tokio_rustls::rustls::RootCertStore, String> {
    let mut roots = tokio_rustls::rustls::RootCertStore::empty();
    for cert in pem_certificates(path)? {
        roots.add(cert).map_err(|e| e.to_string())?;
    }
    Ok(roots)
}

/// RFC 5929's `tls-server-end-point` data: the certificate hashed with its signature's
/// hash function, SHA-256 in place of MD5 or SHA-1 (or when it cannot be read), as
/// PostgreSQL's `be_tls_get_certificate_hash` does.
pub(crate) fn end_point_hash(cert: &[u8]) -> Vec<u8> {
    use sha2::Digest;
    let oid = x509_parser::parse_x509_certificate(cert)
        .map(|(_, c)| c.signature_algorithm.algorithm.to_id_string())
        .unwrap_or_default();
    match oid.as_str() {
        // sha384WithRSAEncryption, ecdsa-with-SHA384
        "1.2.840.113549.1.1.12" | "1.2.840.10045.4.3.3" => sha2::Sha384::digest(cert).to_vec(),
        // sha512WithRSAEncryption, ecdsa-with-SHA512
        "1.2.840.113549.1.1.13" | "1.2.840.10045.4.3.4" => sha2::Sha512::digest(cert).to_vec(),
        _ => sha2::Sha256::digest(cert).to_vec(),
    }
}

/// A verifier of client certificates against the CAs of `ca_file`, which lets a client
/// without one through (its `pg_hba.conf` line decides).
fn client_verifier(
    ca_file: &Path,
    provider: Arc<tokio_rustls::rustls::crypto::CryptoProvider>,
) -> Result<Arc<dyn tokio_rustls::rustls::server::danger::ClientCertVerifier>> {
    let failed = |e: &dyn std::fmt::Display| {
        config_error(format!(
            "could not load root certificate file \"{}\": {e}",
            ca_file.display()
        ))
    };
    let roots = pem_root_store(ca_file).map_err(|e| failed(&e))?;
    let v1_issuers = pem_certificates(ca_file).map_err(|e| failed(&e))?;
    let webpki = tokio_rustls::rustls::server::WebPkiClientVerifier::builder_with_provider(
        Arc::new(roots),
        provider.clone(),
    )
    .allow_unauthenticated()
    .build()
    .map_err(|e| failed(&e))?;
    Ok(Arc::new(ClientVerifier {
        webpki,
        cas: v1_issuers,
        algorithms: provider.signature_verification_algorithms,
    }))
}

use tokio_rustls::rustls;

/// webpki's client certificate verifier, and PostgreSQL's acceptance of X.509 v1 client
/// certificates a CA signed directly (see the module's notes).
#[derive(Debug)]
struct ClientVerifier {
    webpki: Arc<dyn rustls::server::danger::ClientCertVerifier>,
    /// The CA certificates of `ssl_ca_file`, as DER.
    cas: Vec<CertificateDer<'static>>,
    algorithms: rustls::crypto::WebPkiSupportedAlgorithms,
}

/// Whether `der` is an X.509 v1 certificate (which webpki does not verify).
fn is_v1(der: &[u8]) -> bool {
    x509_parser::parse_x509_certificate(der)
        .is_ok_and(|(_, c)| c.version() == x509_parser::x509::X509Version::V1)
}

impl ClientVerifier {
    /// A v1 certificate: signed by one of the CAs, and valid now.
    fn verify_v1(
        &self,
        der: &[u8],
        now: rustls_pki_types::UnixTime,
    ) -> std::result::Result<rustls::server::danger::ClientCertVerified, rustls::Error> {
        let bad = |e: rustls::CertificateError| rustls::Error::InvalidCertificate(e);
        let (_, cert) = x509_parser::parse_x509_certificate(der)
            .map_err(|_| bad(rustls::CertificateError::BadEncoding))?;
        let now = x509_parser::time::ASN1Time::from_timestamp(now.as_secs() as i64)
            .map_err(|_| bad(rustls::CertificateError::BadEncoding))?;
        if !cert.validity().is_valid_at(now) {
            return Err(bad(rustls::CertificateError::Expired));
        }
        let signed_by_a_ca = self.cas.iter().any(|ca| {
            x509_parser::parse_x509_certificate(ca).is_ok_and(|(_, ca)| {
                ca.subject().as_raw() == cert.issuer().as_raw()
                    && cert.verify_signature(Some(ca.public_key())).is_ok()
            })
        });
        match signed_by_a_ca {
            true => Ok(rustls::server::danger::ClientCertVerified::assertion()),
            false => Err(bad(rustls::CertificateError::UnknownIssuer)),
        }
    }

    /// The handshake's signature by a v1 certificate's key.
    fn verify_v1_signature(
        &self,
        message: &[u8],
        der: &[u8],
        dss: &rustls::DigitallySignedStruct,
        tls13: bool,
    ) -> std::result::Result<rustls::client::danger::HandshakeSignatureValid, rustls::Error> {
        let (_, cert) = x509_parser::parse_x509_certificate(der).map_err(|_| {
            rustls::Error::InvalidCertificate(rustls::CertificateError::BadEncoding)
        })?;
        let spki = rustls_pki_types::SubjectPublicKeyInfoDer::from(cert.public_key().raw);
        if tls13 {
            return rustls::crypto::verify_tls13_signature_with_raw_key(
                message,
                &spki,
                dss,
                &self.algorithms,
            );
        }
        let key = webpki::RawPublicKeyEntity::try_from(&spki).map_err(|_| {
            rustls::Error::InvalidCertificate(rustls::CertificateError::BadEncoding)
        })?;
        let algorithms = self
            .algorithms
            .mapping
            .iter()
            .find(|(scheme, _)| *scheme == dss.scheme)
            .map_or(&[][..], |(_, algorithms)| *algorithms);
        match algorithms
            .iter()
            .any(|alg| key.verify_signature(*alg, message, dss.signature()).is_ok())
        {
            true => Ok(rustls::client::danger::HandshakeSignatureValid::assertion()),
            false => Err(rustls::Error::InvalidCertificate(
                rustls::CertificateError::BadSignature,
            )),
        }
    }
}

impl rustls::server::danger::ClientCertVerifier for ClientVerifier {
    fn offer_client_auth(&self) -> bool {
        self.webpki.offer_client_auth()
    }

    fn client_auth_mandatory(&self) -> bool {
        self.webpki.client_auth_mandatory()
    }

    fn root_hint_subjects(&self) -> &[rustls::DistinguishedName] {
        self.webpki.root_hint_subjects()
    }

    fn verify_client_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        now: rustls_pki_types::UnixTime,
    ) -> std::result::Result<rustls::server::danger::ClientCertVerified, rustls::Error> {
        match is_v1(end_entity) {
            true => self.verify_v1(end_entity, now),
            false => self
                .webpki
                .verify_client_cert(end_entity, intermediates, now),
        }
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &rustls::DigitallySignedStruct,
    ) -> std::result::Result<rustls::client::danger::HandshakeSignatureValid, rustls::Error> {
        match is_v1(cert) {
            true => self.verify_v1_signature(message, cert, dss, false),
            false => self.webpki.verify_tls12_signature(message, cert, dss),
        }
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &rustls::DigitallySignedStruct,
    ) -> std::result::Result<rustls::client::danger::HandshakeSignatureValid, rustls::Error> {
        match is_v1(cert) {
            true => self.verify_v1_signature(message, cert, dss, true),
            false => self.webpki.verify_tls13_signature(message, cert, dss),
        }
    }

    fn supported_verify_schemes(&self) -> Vec<rustls::SignatureScheme> {
        self.webpki.supported_verify_schemes()
    }
}

/// What a connection's verified client certificate says of its holder.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ClientCertificate {
    /// The subject's common name (CN), if it has one as text.
    pub common_name: Option<String>,
    /// The subject's distinguished name as RFC 2253 writes it (`CN=alice,O=Example`),
    /// which `clientname=DN` compares with the user name.
    pub subject_rfc2253: String,
    /// The subject and the issuer as pg_stat_ssl shows them (`/O=Example/CN=alice`).
    pub subject: String,
    pub issuer: String,
    /// The serial number, in decimal.
    pub serial: String,
}

impl ClientCertificate {
    /// The names of a DER certificate the TLS handshake verified; None if it cannot be
    /// read (it then counts as no certificate).
    pub fn from_der(der: &[u8]) -> Option<ClientCertificate> {
        let (_, cert) = x509_parser::parse_x509_certificate(der).ok()?;
        let subject = cert.subject();
        let common_name = subject
            .iter_common_name()
            .next()
            .and_then(|cn| cn.as_str().ok())
            .map(str::to_string);
        Some(ClientCertificate {
            common_name,
            subject_rfc2253: names(subject)
                .iter()
                .rev()
                .map(|(k, v)| format!("{k}={}", rfc2253_escape(v)))
                .collect::<Vec<_>>()
                .join(","),
            subject: slashed(subject),
            issuer: slashed(cert.issuer()),
            serial: cert.tbs_certificate.serial.to_string(),
        })
    }
}

/// A name's attributes in order, each as (short name, text); values that are not text
/// are shown in hex, as OpenSSL does (`#` and the DER bytes).
fn names(name: &x509_parser::x509::X509Name<'_>) -> Vec<(String, String)> {
    let registry = x509_parser::objects::oid_registry();
    name.iter()
        .flat_map(|rdn| rdn.iter())
        .map(|attr| {
            let key = x509_parser::objects::oid2abbrev(attr.attr_type(), registry)
                .map(str::to_string)
                .unwrap_or_else(|_| attr.attr_type().to_id_string());
            let value = attr.as_str().map(str::to_string).unwrap_or_else(|_| {
                let hex: String = attr.as_slice().iter().map(|b| format!("{b:02X}")).collect();
                format!("#{hex}")
            });
            (key, value)
        })
        .collect()
}

/// `/K=v/K=v`, OpenSSL's one-line form that PostgreSQL's pg_stat_ssl uses.
fn slashed(name: &x509_parser::x509::X509Name<'_>) -> String {
    names(name)
        .iter()
        .map(|(k, v)| format!("/{k}={v}"))
        .collect()
}

/// A value escaped as RFC 2253 requires (`,+"\<>;`, a leading `#` or space, a trailing
/// space).
fn rfc2253_escape(value: &str) -> String {
    let mut out = String::with_capacity(value.len());
    let last = value.chars().count().saturating_sub(1);
    for (i, c) in value.chars().enumerate() {
        let special = matches!(c, ',' | '+' | '"' | '\\' | '<' | '>' | ';')
            || (i == 0 && (c == '#' || c == ' '))
            || (i == last && c == ' ');
        if special {
            out.push('\\');
        }
        out.push(c);
    }
    out
}
