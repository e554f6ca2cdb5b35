//! TLS: the server's certificate and key, loaded from PEM files into a rustls
//! configuration that `wire` hands each connection whose SSLRequest it accepts.
//!
//! `ssl = on` loads `ssl_cert_file` and `ssl_key_file` (relative paths are in the data
//! directory) at startup, where a missing or bad file stops the server, and again on
//! reload, where it is logged and the configuration in force stays, as PostgreSQL does.
//! TLS 1.2 and 1.3 are offered (PostgreSQL's `ssl_min_protocol_version` default is
//! TLSv1.2), with rustls's cipher suites.

use std::path::Path;
use std::sync::Arc;

use rustls_pki_types::pem::PemObject;
use rustls_pki_types::{CertificateDer, PrivateKeyDer};
use tokio_rustls::rustls::ServerConfig;

use crate::error::{Error, Result, SqlState};

fn config_error(message: String) -> Error {
    Error::new(SqlState::CONFIG_FILE_ERROR, message)
}

/// The server configuration of a certificate chain and its key, each a PEM file.
pub fn server_config(cert_file: &Path, key_file: &Path) -> Result<Arc<ServerConfig>> {
    let certs: Vec<CertificateDer<'static>> = CertificateDer::pem_file_iter(cert_file)
        .and_then(|certs| certs.collect::<std::result::Result<_, _>>())
        .map_err(|e| {
            config_error(format!(
                "could not load server certificate file \"{}\": {e}",
                cert_file.display()
            ))
        })?;
    if certs.is_empty() {
        return Err(config_error(format!(
            "could not load server certificate file \"{}\": no certificate in it",
            cert_file.display()
        )));
    }
    let key = PrivateKeyDer::from_pem_file(key_file).map_err(|e| {
        config_error(format!(
            "could not load private key file \"{}\": {e}",
            key_file.display()
        ))
    })?;
    let provider = Arc::new(tokio_rustls::rustls::crypto::ring::default_provider());
    let config = ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| config_error(format!("could not set up TLS: {e}")))?
        .with_no_client_auth()
        .with_single_cert(certs, key)
        .map_err(|e| {
            config_error(format!(
                "private key file \"{}\" does not match server certificate file \"{}\": {e}",
                key_file.display(),
                cert_file.display()
            ))
        })?;
    Ok(Arc::new(config))
}
