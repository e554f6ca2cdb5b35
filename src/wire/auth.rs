//! The authentication exchange, between the StartupMessage and AuthenticationOk.
//!
//! The connection's `pg_hba.conf` line (`auth::Authenticator`) names the method; this
//! runs it with the client: nothing (trust), a refusal (reject), the peer's OS user
//! (peer), the client certificate's name (cert), a SCRAM-SHA-256 exchange (bound to the
//! server's certificate over TLS when the client chooses SCRAM-SHA-256-PLUS), an md5
//! challenge (or SCRAM, when the role's password is a SCRAM verifier, as PostgreSQL
//! does), or a clear-text password (only on an encrypted or local connection). A line's
//! `clientcert` needs a verified certificate before the method runs, and with
//! `verify-full` its name after; peer and cert compare names through `pg_ident.conf`
//! when the line has `map=`. Then the role itself must exist, may log in, may
//! replicate if it asks to, and must be under its connection limit.
//!
//! Every password failure is answered after a delay that grows with the address's
//! consecutive failures (`Authenticator::failed`) and with one message, whatever the
//! reason, which goes to the server's log only.

use std::net::{IpAddr, SocketAddr};

use bytes::Bytes;
use pgwire::messages::startup::Authentication;
use pgwire::messages::PgWireBackendMessage;

use super::connection::{Io, Next, Transport};
use super::startup::StartupParams;
use crate::auth::hba::{self, Method};
use crate::auth::scram::{self, ScramError, ScramServer, Verifier};
use crate::auth::Rule;
use crate::engine::Engine;
use crate::error::{Error, SqlState};
use crate::storage::Role;

/// PostgreSQL's limit on one authentication message's body.
const MAX_AUTH_MESSAGE_BYTES: usize = 65_535;

/// How an authentication ended when it did not admit the client.
pub enum Refusal {
    /// Send this FATAL error and close.
    Fatal(Error),
    /// The client went away (as psql does to ask for a password): close quietly.
    Gone,
}

impl From<Error> for Refusal {
    fn from(e: Error) -> Refusal {
        Refusal::Fatal(e)
    }
}

/// Where a connection comes from.
pub struct Origin {
    pub client: Option<SocketAddr>,
    pub ssl: bool,
    /// The certificate the client sent over TLS, verified against `ssl_ca_file`.
    pub client_certificate: Option<crate::auth::tls::ClientCertificate>,
}

impl Origin {
    fn address(&self) -> Option<IpAddr> {
        self.client.map(|c| c.ip())
    }

    /// How PostgreSQL names the client's host in its messages.
    fn host(&self) -> String {
        self.client
            .map_or_else(|| "[local]".to_string(), |c| c.ip().to_string())
    }

    /// The connection as PostgreSQL's refusals name it: `host "h", user "u", database
    /// "d", no encryption` (no database for a replication connection).
    fn describe(&self, params: &StartupParams) -> String {
        let database = match params.replication {
            true => String::new(),
            false => format!(" database \"{}\",", params.database),
        };
        format!(
            "host \"{}\", user \"{}\",{database} {}",
            self.host(),
            params.user,
            self.encryption()
        )
    }

    fn encryption(&self) -> &'static str {
        if self.ssl {
            "SSL encryption"
        } else {
            "no encryption"
        }
    }
}

fn invalid_authorization(message: String) -> Refusal {
    Refusal::Fatal(Error::new(SqlState::INVALID_AUTHORIZATION, message))
}

fn password_failed(user: &str) -> Error {
    Error::new(
        SqlState::INVALID_PASSWORD,
        format!("password authentication failed for user \"{user}\""),
    )
}

fn protocol_violation(message: impl Into<String>) -> Refusal {
    Refusal::Fatal(Error::new(SqlState::PROTOCOL_VIOLATION, message))
}

/// What a `pg_hba.conf` line's certificate check found.
#[derive(Debug, PartialEq, Eq)]
enum CertificateName {
    /// The line asks for no certificate (no `clientcert`, a method other than cert), or
    /// only for one the CAs signed (`verify-ca`), which the client sent.
    NotChecked,
    /// `verify-full` or method cert: the certificate's name is the user's.
    Matches,
    /// `verify-full` or method cert: the certificate names someone else.
    Differs,
}

/// PostgreSQL's checks of the client's certificate for a `pg_hba.conf` line: with
/// `clientcert` (or method cert, which is `verify-full`), a certificate is needed (else
/// 28000 before any method runs), and with `verify-full` its name (the CN, or the whole
/// DN with `clientname=DN`) is compared with the user's; a mismatch is logged here and
/// refused as the line's method fails ([`method_failed`]). A user map (`map=`) is not
/// supported.
fn check_client_certificate(
    line: &hba::HbaLine,
    auth: &crate::auth::Authenticator,
    params: &StartupParams,
    origin: &Origin,
) -> Result<CertificateName, Refusal> {
    let cert_method = line.method == Method::Cert;
    let full = cert_method || line.option("clientcert") == Some("verify-full");
    if !full && line.option("clientcert") != Some("verify-ca") {
        return Ok(CertificateName::NotChecked);
    }
    if !auth.checks_client_certificates() {
        return Err(Refusal::Fatal(Error::new(
            SqlState::CONFIG_FILE_ERROR,
            "client certificates can only be checked if a root certificate store is available",
        )));
    }
    let Some(cert) = &origin.client_certificate else {
        return Err(invalid_authorization(
            "connection requires a valid client certificate".to_string(),
        ));
    };
    if !full {
        return Ok(CertificateName::NotChecked);
    }
    let by_dn = line.option("clientname") == Some("DN");
    let name = match by_dn {
        true => Some(cert.subject_rfc2253.as_str()),
        false => cert.common_name.as_deref(),
    };
    let matches = match (name, line.option("map")) {
        (Some(name), Some(map)) => auth.maps(map, name, &params.user),
        (name, None) => name == Some(params.user.as_str()),
        (None, Some(_)) => false,
    };
    if matches {
        return Ok(CertificateName::Matches);
    }
    let what = if by_dn { "DN" } else { "CN" };
    match cert_method {
        true => tracing::info!(
            "certificate authentication failed for user \"{}\": {what} \"{}\" is not the user name",
            params.user,
            name.unwrap_or("")
        ),
        false => tracing::info!(
            "certificate validation (clientcert=verify-full) failed for user \"{}\": {what} mismatch ({what} \"{}\")",
            params.user,
            name.unwrap_or("")
        ),
    }
    Ok(CertificateName::Differs)
}

/// How PostgreSQL refuses a client whose method failed (`auth_failed`): each method's
/// own message, 28P01 for the password methods, else 28000.
fn method_failed(method: &Method, user: &str) -> Refusal {
    let message = match method {
        Method::ScramSha256 | Method::Md5 | Method::Password => {
            return Refusal::Fatal(password_failed(user))
        }
        Method::Trust => format!("\"trust\" authentication failed for user \"{user}\""),
        Method::Peer => format!("Peer authentication failed for user \"{user}\""),
        Method::Cert => format!("certificate authentication failed for user \"{user}\""),
        Method::Reject => format!("authentication failed for user \"{user}\""),
    };
    invalid_authorization(message)
}

/// Decide whether the client of `params` may connect, running its method's exchange.
pub async fn authenticate<S: Transport>(
    io: &mut Io<S>,
    engine: &Engine,
    params: &StartupParams,
    origin: &Origin,
) -> Result<(), Refusal> {
    let Some(auth) = engine.auth.get() else {
        // An engine without a data directory trusts everyone.
        return Ok(());
    };
    let catalog = &engine.txn.catalog;
    let role = catalog.role(&params.user);
    let conn = hba::Connection {
        local: origin.client.is_none(),
        address: origin.address(),
        ssl: origin.ssl,
        database: &params.database,
        user: &params.user,
        replication: params.replication,
    };
    // `+group` and `samerole` count every membership, inherited or not, as PostgreSQL's
    // `is_member` does; a superuser is not a member of every group here.
    let is_member = |member: &str, group: &str| {
        member == group
            || match (catalog.role(member), catalog.role(group)) {
                (Some(m), Some(g)) => catalog.roles_of(&m, false).contains(&g.oid),
                _ => false,
            }
    };
    let line = match auth.rule_for(&conn, &is_member) {
        Rule::TrustAll => None,
        Rule::Line(line) => Some(line),
        Rule::NoMatch => {
            let whom = origin.describe(params);
            return Err(invalid_authorization(if params.replication {
                format!("no pg_hba.conf entry for replication connection from {whom}")
            } else {
                format!("no pg_hba.conf entry for {whom}")
            }));
        }
    };
    let method = line.as_ref().map_or(Method::Trust, |l| l.method.clone());
    if let Some(line) = &line {
        tracing::debug!(line = line.line_number, ?method, "pg_hba.conf line matched");
    }
    let password_method = matches!(method, Method::ScramSha256 | Method::Md5 | Method::Password);
    let client_cert = match &line {
        Some(line) => check_client_certificate(line, auth, params, origin)?,
        None => CertificateName::NotChecked,
    };
    match method {
        Method::Trust => {}
        Method::Reject => {
            let whom = origin.describe(params);
            return Err(invalid_authorization(if params.replication {
                format!("pg_hba.conf rejects replication connection for {whom}")
            } else {
                format!("pg_hba.conf rejects connection for {whom}")
            }));
        }
        Method::Peer => {
            let os_user = io.peer_os_user();
            let map = line.as_ref().and_then(|l| l.option("map"));
            let allowed = match (&os_user, map) {
                (Some(os_user), Some(map)) => auth.maps(map, os_user, &params.user),
                (os_user, None) => os_user.as_deref() == Some(params.user.as_str()),
                (None, Some(_)) => false,
            };
            if !allowed {
                tracing::info!(
                    "provided user name ({}) and authenticated user name ({}) do not match",
                    params.user,
                    os_user.as_deref().unwrap_or("unknown")
                );
                return Err(invalid_authorization(format!(
                    "Peer authentication failed for user \"{}\"",
                    params.user
                )));
            }
        }
        // The certificate's name, checked with the line's clientcert (cert implies
        // verify-full), is the method.
        Method::Cert => {}
        Method::ScramSha256 | Method::Md5 | Method::Password => {
            let proven = prove_password(io, auth, role.as_deref(), params, origin, &method).await?;
            if !proven {
                let delay = auth.failed(origin.address());
                tokio::time::sleep(delay).await;
                return Err(Refusal::Fatal(password_failed(&params.user)));
            }
            auth.succeeded(origin.address());
        }
    }
    if client_cert == CertificateName::Differs {
        return Err(method_failed(&method, &params.user));
    }
    let Some(role) = role else {
        return Err(invalid_authorization(format!(
            "role \"{}\" does not exist",
            params.user
        )));
    };
    if !role.login {
        return Err(invalid_authorization(format!(
            "role \"{}\" is not permitted to log in",
            role.name
        )));
    }
    if password_method && expired(&role) {
        return Err(Refusal::Fatal(password_failed(&params.user)));
    }
    if params.replication && !role.replication && !role.superuser {
        return Err(Refusal::Fatal(Error::new(
            SqlState::INSUFFICIENT_PRIVILEGE,
            "must be superuser or replication role to start walsender",
        )));
    }
    if !role.superuser && !params.replication {
        let list = catalog.acl(crate::sql::DATABASE_OID);
        if list.is_some_and(|list| {
            let roles = catalog.roles_of(&role, true);
            !crate::storage::acl::allows(&list, &roles, crate::storage::acl::CONNECT)
        }) {
            return Err(Refusal::Fatal(
                Error::new(
                    SqlState::INSUFFICIENT_PRIVILEGE,
                    format!("permission denied for database \"{}\"", params.database),
                )
                .with_detail("User does not have CONNECT privilege."),
            ));
        }
    }
    if role.connection_limit >= 0 && !role.superuser {
        let open = engine
            .txn
            .sessions()
            .iter()
            .filter(|s| s.activity.lock().user == role.name)
            .count();
        if open >= role.connection_limit as usize {
            return Err(Refusal::Fatal(Error::new(
                SqlState::TOO_MANY_CONNECTIONS,
                format!("too many connections for role \"{}\"", role.name),
            )));
        }
    }
    Ok(())
}

fn constant_time_eq(a: impl AsRef<[u8]>, b: impl AsRef<[u8]>) -> bool {
    use subtle::ConstantTimeEq;
    bool::from(a.as_ref().ct_eq(b.as_ref()))
}

fn expired(role: &Role) -> bool {
    role.valid_until_us
        .is_some_and(|until| until < crate::types::now_us())
}

/// Run a password method; whether the client proved the role's password. Every reason
/// for failing is logged here and answered alike by the caller.
async fn prove_password<S: Transport>(
    io: &mut Io<S>,
    auth: &crate::auth::Authenticator,
    role: Option<&Role>,
    params: &StartupParams,
    origin: &Origin,
    method: &Method,
) -> Result<bool, Refusal> {
    let stored = role.and_then(|r| r.password.clone());
    match (role, &stored) {
        (None, _) => tracing::info!("role \"{}\" does not exist", params.user),
        (Some(_), None) => tracing::info!("user \"{}\" has no password assigned", params.user),
        (Some(r), Some(_)) if expired(r) => {
            tracing::info!("user \"{}\" has an expired password", params.user)
        }
        _ => {}
    }
    let scram_verifier = stored.as_deref().and_then(Verifier::parse);
    let md5_stored = stored.filter(|s| s.starts_with("md5"));
    let proven = match method {
        Method::Password => {
            if origin.client.is_some() && !origin.ssl {
                return Err(invalid_authorization(
                    "password authentication is only allowed on encrypted connections".into(),
                ));
            }
            io.output.message(&PgWireBackendMessage::Authentication(
                Authentication::CleartextPassword,
            ));
            let body = read_password_message(io).await?;
            let password = match body.split_last() {
                Some((0, text)) if !text.contains(&0) => String::from_utf8_lossy(text).into_owned(),
                _ => return Err(protocol_violation("invalid password packet size")),
            };
            match (&scram_verifier, &md5_stored) {
                (Some(v), _) => v.verify_password(&password),
                (None, Some(m)) => {
                    constant_time_eq(scram::md5_verifier(&password, &params.user), m)
                }
                (None, None) => false,
            }
        }
        Method::Md5 if scram_verifier.is_none() => {
            let salt: [u8; 4] = rand::random();
            io.output.message(&PgWireBackendMessage::Authentication(
                Authentication::MD5Password(salt.to_vec()),
            ));
            let body = read_password_message(io).await?;
            let answer = match body.split_last() {
                Some((0, text)) => text.to_vec(),
                _ => return Err(protocol_violation("invalid password packet size")),
            };
            match &md5_stored {
                Some(m) => constant_time_eq(scram::md5_response(m, &salt), &answer),
                None => false,
            }
        }
        _ => {
            if scram_verifier.is_none() && md5_stored.is_some() {
                tracing::info!(
                    "user \"{}\" does not have a valid SCRAM secret",
                    params.user
                );
            }
            scram_exchange(io, auth, scram_verifier, &params.user).await?
        }
    };
    Ok(proven && role.is_some_and(|r| !expired(r)))
}

/// The SCRAM-SHA-256 exchange: whether the client's proof was right.
async fn scram_exchange<S: Transport>(
    io: &mut Io<S>,
    auth: &crate::auth::Authenticator,
    verifier: Option<Verifier>,
    user: &str,
) -> Result<bool, Refusal> {
    let mut server = ScramServer::new(verifier, user, auth.mock_secret())
        .with_channel_binding(io.channel_binding().map(<[u8]>::to_vec));
    io.output
        .message(&PgWireBackendMessage::Authentication(Authentication::SASL(
            server.mechanisms(),
        )));
    let initial = read_password_message(io).await?;
    let (mechanism, data) = parse_sasl_initial_response(&initial)?;
    let server_first = match server.client_first(&mechanism, &data) {
        Ok(m) => m,
        Err(e) => return scram_refusal(e, user),
    };
    io.output.message(&PgWireBackendMessage::Authentication(
        Authentication::SASLContinue(Bytes::from(server_first)),
    ));
    let response = read_password_message(io).await?;
    match server.client_final(&response) {
        Ok(server_final) => {
            io.output.message(&PgWireBackendMessage::Authentication(
                Authentication::SASLFinal(Bytes::from(server_final)),
            ));
            Ok(true)
        }
        Err(e) => scram_refusal(e, user),
    }
}

/// A failed proof is a failure like any other; a malformed message ends the exchange
/// with its own error.
fn scram_refusal(e: ScramError, user: &str) -> Result<bool, Refusal> {
    match e {
        ScramError::Failed => Ok(false),
        protocol => Err(Refusal::Fatal(protocol.into_error(user))),
    }
}

/// A SASLInitialResponse: the mechanism's name, then the data's length (-1: none) and
/// the data.
fn parse_sasl_initial_response(body: &[u8]) -> Result<(String, Vec<u8>), Refusal> {
    let malformed = || protocol_violation("malformed SASLInitialResponse message");
    let nul = body.iter().position(|&b| b == 0).ok_or_else(malformed)?;
    let mechanism = std::str::from_utf8(&body[..nul])
        .map_err(|_| malformed())?
        .to_string();
    let rest = &body[nul + 1..];
    let (len, data) = match rest.split_first_chunk::<4>() {
        Some((len, data)) => (i32::from_be_bytes(*len), data),
        None => return Err(malformed()),
    };
    let data = match len {
        -1 if data.is_empty() => Vec::new(),
        n if n >= 0 && n as usize == data.len() => data.to_vec(),
        _ => return Err(malformed()),
    };
    Ok((mechanism, data))
}

/// The body of the client's next message, which must be a password-type ('p') message.
async fn read_password_message<S: Transport>(io: &mut Io<S>) -> Result<Vec<u8>, Refusal> {
    io.flush().await;
    match io.read_message().await {
        Next::Message(b'p', body) if body.len() <= MAX_AUTH_MESSAGE_BYTES => Ok(body.to_vec()),
        Next::Message(b'p', _) => Err(protocol_violation("invalid message length")),
        Next::Message(tag, _) => Err(protocol_violation(format!(
            "expected password response, got message type {tag}"
        ))),
        Next::Eof => Err(Refusal::Gone),
        Next::Fatal(e) => Err(Refusal::Fatal(e)),
    }
}
