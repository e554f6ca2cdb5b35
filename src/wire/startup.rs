//! The startup phase: SSL/GSS negotiation, CancelRequest, and the StartupMessage with its
//! parameters, up to the greeting (AuthenticationOk ... ReadyForQuery).

use pgwire::messages::response::{GssEncResponse, SslResponse};
use pgwire::messages::startup::{Authentication, NegotiateProtocolVersion};
use pgwire::messages::PgWireBackendMessage;

use super::backend::{Output, Severity};
use super::connection::{Io, Transport};
use super::frontend::{parse_startup_params, Framed, StartupPacket};
use crate::error::{Error, SqlState};
use crate::sql::TxnStatus;

/// The `server_version` reported to clients. libpq parses the leading `15.0` as server
/// version 150000, so clients enable their PostgreSQL 15 behaviour.
pub const SERVER_VERSION: &str = concat!("15.0 (SteadyDB ", env!("CARGO_PKG_VERSION"), ")");

/// The protocol version we speak, as PostgreSQL encodes it (major << 16 | minor). It is
/// also what PostgreSQL sends in NegotiateProtocolVersion, and what libpq expects there.
const PROTOCOL_3_0: i32 = 3 << 16;

/// Longest user or database name, in bytes; longer names are truncated as PostgreSQL
/// truncates identifiers to `NAMEDATALEN - 1`.
const MAX_NAME_BYTES: usize = 63;

/// What the client asked for in its StartupMessage, once accepted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StartupParams {
    pub user: String,
    pub database: String,
    pub application_name: String,
    /// The client encoding to report: `UTF8`, or `SQL_ASCII` (no conversion, which is the
    /// same thing for a UTF8 server).
    pub client_encoding: &'static str,
    /// `replication=true`: a physical replication connection (a walsender).
    pub replication: bool,
    /// Settings given in the startup packet, by name or in `options` (`-c name=value`,
    /// `--name=value`), in the order given.
    pub settings: Vec<(String, String)>,
}

/// How the startup phase ended.
#[derive(Debug, PartialEq, Eq)]
pub enum Startup {
    /// The client may proceed; the caller sends the greeting.
    Ready(StartupParams),
    /// A CancelRequest: the caller cancels and closes without replying.
    Cancel { pid: i32, secret: i32 },
    /// Close the connection; any FATAL error is already in the output buffer.
    Close,
}

fn fatal(io: &mut Io<impl Transport>, err: Error) -> Startup {
    tracing::warn!(code = %err.code, "startup failed: {}", err.message);
    io.output.error(&err, Severity::Fatal);
    Startup::Close
}

/// Read startup packets until a StartupMessage or CancelRequest arrives.
pub async fn negotiate<S: Transport>(
    io: &mut Io<S>,
    database_exists: &(dyn Fn(&str) -> bool + Sync),
    tls: Option<crate::auth::tls::TlsConfig>,
) -> Startup {
    let mut ssl_done = false;
    let mut gss_done = false;
    loop {
        let packet = match io.input.take_startup() {
            Ok(Framed::Ready(packet)) => packet,
            Ok(Framed::Incomplete) => match io.fill().await {
                Ok(0) => {
                    if io.input.buffered() > 0 {
                        tracing::warn!("incomplete startup packet");
                    } else {
                        tracing::debug!("client closed the connection before startup");
                    }
                    return Startup::Close;
                }
                Ok(_) => continue,
                Err(e) => {
                    tracing::warn!(error = %e, "could not read the startup packet");
                    return Startup::Close;
                }
            },
            Err(e) => {
                // Like PostgreSQL, send nothing: the peer may not even speak the protocol.
                tracing::warn!("{}", e.message);
                return Startup::Close;
            }
        };
        match packet {
            StartupPacket::SslRequest if !ssl_done => {
                ssl_done = true;
                let Some(config) = tls.clone() else {
                    io.output
                        .message(&PgWireBackendMessage::SslResponse(SslResponse::Refuse));
                    io.flush().await;
                    continue;
                };
                // Bytes sent after the request, before the handshake, would be taken as
                // if they had come encrypted (CVE-2021-23222's class of attack).
                if io.input.buffered() > 0 {
                    return fatal(
                        io,
                        Error::new(
                            SqlState::PROTOCOL_VIOLATION,
                            "received unencrypted data after SSL request",
                        )
                        .with_detail(
                            "This could be either a client-software bug or evidence of an attempted man-in-the-middle attack.",
                        ),
                    );
                }
                io.output
                    .message(&PgWireBackendMessage::SslResponse(SslResponse::Accept));
                io.flush().await;
                if let Err(e) = io.start_tls(config.server, config.end_point_hash).await {
                    tracing::info!("could not accept SSL connection: {e}");
                    return Startup::Close;
                }
            }
            StartupPacket::GssEncRequest if !gss_done => {
                gss_done = true;
                io.output.message(&PgWireBackendMessage::GssEncResponse(
                    GssEncResponse::Refuse,
                ));
                io.flush().await;
            }
            // A repeated request is answered as PostgreSQL does: as an unknown protocol.
            StartupPacket::SslRequest => return unsupported_protocol(io, 1234, 5679),
            StartupPacket::GssEncRequest => return unsupported_protocol(io, 1234, 5680),
            StartupPacket::Cancel { pid, secret } => return Startup::Cancel { pid, secret },
            StartupPacket::Startup {
                major,
                minor,
                params,
            } => {
                if major != 3 {
                    return unsupported_protocol(io, major, minor);
                }
                let params = match parse_startup_params(&params) {
                    Ok(params) => params,
                    Err(e) => return fatal(io, e),
                };
                return accept(io, minor, params, database_exists);
            }
        }
    }
}

fn unsupported_protocol(io: &mut Io<impl Transport>, major: u16, minor: u16) -> Startup {
    let err = Error::unsupported(format!(
        "unsupported frontend protocol {major}.{minor}: server supports 3.0 to 3.0"
    ));
    fatal(io, err)
}

/// Truncate a name to `MAX_NAME_BYTES` on a character boundary.
fn truncate_name(mut name: String) -> String {
    if name.len() > MAX_NAME_BYTES {
        let mut end = MAX_NAME_BYTES;
        while !name.is_char_boundary(end) {
            end -= 1;
        }
        name.truncate(end);
    }
    name
}

/// The client encodings we accept, normalised as PostgreSQL normalises encoding names.
fn client_encoding(value: &str) -> Option<&'static str> {
    let clean: String = value
        .chars()
        .filter(|c| c.is_ascii_alphanumeric())
        .map(|c| c.to_ascii_lowercase())
        .collect();
    match clean.as_str() {
        "utf8" | "unicode" => Some("UTF8"),
        "sqlascii" => Some("SQL_ASCII"),
        _ => None,
    }
}

fn is_false(value: &str) -> bool {
    matches!(
        value.to_ascii_lowercase().as_str(),
        "0" | "f" | "false" | "n" | "no" | "off"
    )
}

fn accept(
    io: &mut Io<impl Transport>,
    minor: u16,
    params: Vec<(String, String)>,
    database_exists: &dyn Fn(&str) -> bool,
) -> Startup {
    let mut user = String::new();
    let mut database = String::new();
    let mut application_name = String::new();
    let mut encoding = "UTF8";
    let mut unrecognized = Vec::new();
    let mut encoding_error = None;
    let mut replication = false;
    let mut settings = Vec::new();
    for (name, value) in params {
        match name.as_str() {
            "user" => user = value,
            "database" => database = value,
            "application_name" => application_name = value,
            "client_encoding" => match client_encoding(&value) {
                Some(e) => encoding = e,
                None => encoding_error = Some(value),
            },
            "replication" => {
                if value.eq_ignore_ascii_case("database") {
                    return fatal(
                        io,
                        Error::unsupported("logical replication connections are not supported"),
                    );
                }
                replication = !is_false(&value)
            }
            "options" => match command_line_settings(&value) {
                Ok(given) => settings.extend(given),
                Err(e) => return fatal(io, e),
            },
            _ if name.starts_with("_pq_.") => unrecognized.push(name),
            _ => settings.push((name, value)),
        }
    }
    if minor > 0 || !unrecognized.is_empty() {
        io.output
            .message(&PgWireBackendMessage::NegotiateProtocolVersion(
                NegotiateProtocolVersion::new(PROTOCOL_3_0, unrecognized),
            ));
    }
    if user.is_empty() {
        return fatal(
            io,
            Error::new(
                SqlState::INVALID_AUTHORIZATION,
                "no PostgreSQL user name specified in startup packet",
            ),
        );
    }
    let user = truncate_name(user);
    let database = if database.is_empty() {
        user.clone()
    } else {
        truncate_name(database)
    };
    // A physical replication connection is to the cluster, not to a database.
    if !replication && !database_exists(&database) {
        return fatal(
            io,
            Error::new(
                SqlState::INVALID_CATALOG_NAME,
                format!("database \"{database}\" does not exist"),
            ),
        );
    }
    if let Some(value) = encoding_error {
        return fatal(
            io,
            Error::unsupported(format!("client_encoding \"{value}\" is not supported"))
                .with_detail("SteadyDB only supports the UTF8 encoding.")
                .with_hint("Set client_encoding to UTF8."),
        );
    }
    Startup::Ready(StartupParams {
        user,
        database,
        application_name,
        client_encoding: encoding,
        replication,
        settings,
    })
}

/// The settings in a startup packet's `options`: command-line switches separated by
/// spaces (a backslash keeps the next character, a space included), of which PostgreSQL
/// takes `-c name=value` and `--name=value` for a session (42601 for others).
fn command_line_settings(options: &str) -> Result<Vec<(String, String)>, Error> {
    let mut words = Vec::new();
    let mut word = String::new();
    let mut chars = options.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => word.extend(chars.next()),
            c if c.is_ascii_whitespace() => {
                if !word.is_empty() {
                    words.push(std::mem::take(&mut word));
                }
            }
            c => word.push(c),
        }
    }
    if !word.is_empty() {
        words.push(word);
    }
    let mut settings = Vec::new();
    let mut words = words.into_iter();
    let invalid = |w: &str| {
        Error::new(
            SqlState::SYNTAX_ERROR,
            format!("invalid command-line argument for server process: {w}"),
        )
        .with_hint("Try \"postgres --help\" for more information.")
    };
    while let Some(w) = words.next() {
        let setting = if w == "-c" {
            words.next().ok_or_else(|| invalid(&w))?
        } else if let Some(rest) = w.strip_prefix("-c") {
            rest.to_string()
        } else if let Some(rest) = w.strip_prefix("--") {
            rest.to_string()
        } else {
            return Err(invalid(&w));
        };
        match setting.split_once('=') {
            Some((name, value)) => settings.push((name.replace('-', "_"), value.to_string())),
            None => {
                return Err(Error::new(
                    SqlState::SYNTAX_ERROR,
                    format!("-c {setting} requires a value"),
                ))
            }
        }
    }
    Ok(settings)
}

/// AuthenticationOk, the ParameterStatus reports, BackendKeyData and ReadyForQuery.
/// `reported`: the session's values of the settings it reports whenever they change
/// (`Session::reported_settings`); the client encoding is reported as the client named it.
pub fn greeting(
    out: &mut Output,
    params: &StartupParams,
    pid: i32,
    secret: i32,
    hot_standby: bool,
    superuser: bool,
    reported: &[(&'static str, String)],
) {
    let on_off = |b: bool| if b { "on" } else { "off" };
    out.message(&PgWireBackendMessage::Authentication(Authentication::Ok));
    let fixed: [(&str, &str); 7] = [
        ("client_encoding", params.client_encoding),
        ("in_hot_standby", on_off(hot_standby)),
        ("integer_datetimes", "on"),
        ("is_superuser", on_off(superuser)),
        ("server_encoding", "UTF8"),
        ("server_version", SERVER_VERSION),
        ("session_authorization", &params.user),
    ];
    let mut reports: Vec<(&str, &str)> = fixed.to_vec();
    for (name, value) in reported {
        if !fixed.iter().any(|(fixed, _)| fixed == name) {
            reports.push((name, value));
        }
    }
    reports.sort_by_key(|(name, _)| name.to_ascii_lowercase());
    for (name, value) in reports {
        out.parameter_status(name, value);
    }
    out.backend_key_data(pid, secret);
    out.ready_for_query(TxnStatus::Idle);
}

#[cfg(test)]
#[path = "startup_tests.rs"]
mod tests;
