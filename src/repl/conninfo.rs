//! `primary_conninfo`: how a standby (and `steadydb basebackup`) reaches its primary, in
//! libpq's `keyword=value` form, with libpq's defaults. Keywords that libpq knows but that
//! change nothing here (`dbname`, `connect_timeout`, ...) are accepted; an unknown one is
//! an error, as in libpq.
//!
//! TLS follows libpq's `sslmode`: `disable`; `allow` (plain); `prefer`, the default (TLS
//! when the primary offers it, else plain); `require` (TLS or nothing); `verify-ca` (and
//! the primary's certificate signed by a CA of `sslrootcert`); `verify-full` (and issued
//! for `host`). As in libpq, a root certificate file that exists makes `prefer` and
//! `require` verify the chain too; its default is `~/.postgresql/root.crt`, and a client
//! certificate's `~/.postgresql/postgresql.crt` and `.key`.

use std::fmt;
use std::path::PathBuf;

use crate::error::{Error, Result, SqlState};

/// libpq's `sslmode`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SslMode {
    Disable,
    Allow,
    Prefer,
    Require,
    VerifyCa,
    VerifyFull,
}

impl SslMode {
    pub fn name(self) -> &'static str {
        match self {
            SslMode::Disable => "disable",
            SslMode::Allow => "allow",
            SslMode::Prefer => "prefer",
            SslMode::Require => "require",
            SslMode::VerifyCa => "verify-ca",
            SslMode::VerifyFull => "verify-full",
        }
    }

    /// Whether the connection asks the primary for TLS.
    pub fn asks_for_tls(self) -> bool {
        !matches!(self, SslMode::Disable | SslMode::Allow)
    }

    /// Whether a plain connection will not do.
    pub fn requires_tls(self) -> bool {
        matches!(
            self,
            SslMode::Require | SslMode::VerifyCa | SslMode::VerifyFull
        )
    }
}

/// libpq's `channel_binding`: whether SCRAM binds its proof to the TLS channel.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ChannelBinding {
    Disable,
    Prefer,
    Require,
}

impl ChannelBinding {
    pub fn name(self) -> &'static str {
        match self {
            ChannelBinding::Disable => "disable",
            ChannelBinding::Prefer => "prefer",
            ChannelBinding::Require => "require",
        }
    }
}

/// `primary_conninfo`, parsed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Conninfo {
    /// As given: a name (what `verify-full` checks the certificate against) or an address.
    pub host: String,
    pub port: u16,
    pub user: String,
    pub application_name: String,
    /// `password=`, else the environment's `PGPASSWORD`, as libpq takes it: what the
    /// primary's password methods (SCRAM, md5, password) are answered with.
    pub password: Option<String>,
    pub sslmode: SslMode,
    /// `sslrootcert`, `sslcert`, `sslkey`: None means libpq's default file, if it exists.
    pub sslrootcert: Option<PathBuf>,
    pub sslcert: Option<PathBuf>,
    pub sslkey: Option<PathBuf>,
    pub channel_binding: ChannelBinding,
}

impl Conninfo {
    /// libpq's defaults.
    pub fn new(host: &str, port: u16, user: &str, application_name: &str) -> Conninfo {
        Conninfo {
            host: host.to_string(),
            port,
            user: user.to_string(),
            application_name: application_name.to_string(),
            password: std::env::var("PGPASSWORD").ok(),
            sslmode: SslMode::Prefer,
            sslrootcert: None,
            sslcert: None,
            sslkey: None,
            channel_binding: ChannelBinding::Prefer,
        }
    }

    /// The address to connect to: `localhost` is the IPv4 loopback, as the primary
    /// listens there by default.
    pub fn address_host(&self) -> &str {
        match self.host.as_str() {
            "localhost" => "127.0.0.1",
            host => host,
        }
    }
}

/// The connection string without the password (what pg_stat_wal_receiver shows and
/// `steadydb basebackup` writes into the standby's configuration); it parses back to the
/// same settings.
impl fmt::Display for Conninfo {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut parts = vec![
            ("host", self.host.clone()),
            ("port", self.port.to_string()),
            ("user", self.user.clone()),
            ("application_name", self.application_name.clone()),
            ("sslmode", self.sslmode.name().to_string()),
        ];
        for (key, path) in [
            ("sslrootcert", &self.sslrootcert),
            ("sslcert", &self.sslcert),
            ("sslkey", &self.sslkey),
        ] {
            if let Some(path) = path {
                parts.push((key, path.display().to_string()));
            }
        }
        if self.channel_binding != ChannelBinding::Prefer {
            parts.push(("channel_binding", self.channel_binding.name().to_string()));
        }
        let quoted: Vec<String> = parts
            .into_iter()
            .map(|(k, v)| format!("{k}={}", quote_value(&v)))
            .collect();
        f.write_str(&quoted.join(" "))
    }
}

/// A value as libpq reads it back: bare when it has no space or quote, else quoted.
fn quote_value(v: &str) -> String {
    let plain = !v.is_empty()
        && !v
            .chars()
            .any(|c| c.is_whitespace() || c == '\'' || c == '\\');
    if plain {
        return v.to_string();
    }
    let escaped = v.replace('\\', "\\\\").replace('\'', "\\'");
    format!("'{escaped}'")
}

fn bad(why: String) -> Error {
    Error::new(
        SqlState::INVALID_PARAMETER_VALUE,
        format!("invalid primary_conninfo: {why}"),
    )
}

/// The `keyword=value` pairs of a connection string, values unquoted.
fn pairs(s: &str) -> Result<Vec<(String, String)>> {
    let mut out = Vec::new();
    let mut chars = s.chars().peekable();
    loop {
        while chars.peek().is_some_and(|c| c.is_whitespace()) {
            chars.next();
        }
        if chars.peek().is_none() {
            return Ok(out);
        }
        let key: String = chars
            .by_ref()
            .take_while(|&c| c != '=')
            .collect::<String>()
            .trim()
            .to_string();
        while chars.peek().is_some_and(|c| c.is_whitespace()) {
            chars.next();
        }
        let mut value = String::new();
        if chars.peek() == Some(&'\'') {
            chars.next();
            loop {
                match chars.next() {
                    Some('\\') => value.extend(chars.next()),
                    Some('\'') => break,
                    Some(c) => value.push(c),
                    None => return Err(bad("unterminated quoted string".into())),
                }
            }
        } else {
            while let Some(&c) = chars.peek() {
                if c.is_whitespace() {
                    break;
                }
                value.push(c);
                chars.next();
            }
        }
        out.push((key, value));
    }
}

/// A connection string over libpq's defaults (host localhost, port 5432, user postgres).
pub fn parse_conninfo(s: &str) -> Result<Conninfo> {
    let mut c = Conninfo::new("localhost", 5432, "postgres", "walreceiver");
    c.apply(s)?;
    Ok(c)
}

impl Conninfo {
    /// Set what the connection string `s` names; the rest stays.
    pub fn apply(&mut self, s: &str) -> Result<()> {
        for (key, value) in pairs(s)? {
            self.set(&key, value)?;
        }
        Ok(())
    }

    fn set(&mut self, key: &str, value: String) -> Result<()> {
        let c = self;
        let path = || (!value.is_empty()).then(|| PathBuf::from(&value));
        match key {
            "host" | "hostaddr" => c.host = value,
            "port" => {
                c.port = value
                    .parse()
                    .map_err(|_| bad(format!("invalid port \"{value}\"")))?
            }
            "user" => c.user = value,
            "application_name" => c.application_name = value,
            "password" => c.password = Some(value),
            "sslmode" => {
                c.sslmode = match value.as_str() {
                    "disable" => SslMode::Disable,
                    "allow" => SslMode::Allow,
                    "prefer" => SslMode::Prefer,
                    "require" => SslMode::Require,
                    "verify-ca" => SslMode::VerifyCa,
                    "verify-full" => SslMode::VerifyFull,
                    other => return Err(bad(format!("invalid sslmode value: \"{other}\""))),
                }
            }
            "sslrootcert" => c.sslrootcert = path(),
            "sslcert" => c.sslcert = path(),
            "sslkey" => c.sslkey = path(),
            "channel_binding" => {
                c.channel_binding = match value.as_str() {
                    "disable" => ChannelBinding::Disable,
                    "prefer" => ChannelBinding::Prefer,
                    "require" => ChannelBinding::Require,
                    other => {
                        return Err(bad(format!("invalid channel_binding value: \"{other}\"")))
                    }
                }
            }
            "dbname"
            | "connect_timeout"
            | "options"
            | "keepalives"
            | "target_session_attrs"
            | "gssencmode"
            | "sslsni"
            | "sslcompression"
            | "passfile" => {}
            "" => return Err(bad("missing keyword".into())),
            other => return Err(bad(format!("invalid connection option \"{other}\""))),
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn conninfo_in_keyword_form() {
        let c = parse_conninfo(
            "host=localhost port=5433 user=repl application_name='s 1' password='p w'",
        )
        .unwrap();
        let mut want = Conninfo::new("localhost", 5433, "repl", "s 1");
        want.password = Some("p w".into());
        assert_eq!(c, want);
        assert_eq!(c.address_host(), "127.0.0.1");
        assert!(parse_conninfo("port=x").is_err());
        assert!(parse_conninfo("sslmode=bogus").is_err());
        assert!(parse_conninfo("channel_binding=maybe").is_err());
        assert!(parse_conninfo("bogus=1").is_err());
        assert!(parse_conninfo("'unterminated").is_err());
    }

    #[test]
    fn tls_settings_parse_and_print_back_without_the_password() {
        let c = parse_conninfo(
            "host=db.example port=5432 user=r password=secret sslmode=verify-full \
             sslrootcert='/etc/ssl/my ca.crt' sslcert=/c.crt sslkey=/c.key channel_binding=require",
        )
        .unwrap();
        assert_eq!(c.sslmode, SslMode::VerifyFull);
        assert_eq!(c.sslrootcert, Some(PathBuf::from("/etc/ssl/my ca.crt")));
        assert_eq!(c.channel_binding, ChannelBinding::Require);
        let printed = c.to_string();
        assert!(!printed.contains("secret"), "{printed}");
        let mut back = parse_conninfo(&printed).unwrap();
        back.password = c.password.clone();
        assert_eq!(back, c);
        assert_eq!(parse_conninfo("").unwrap().sslmode, SslMode::Prefer);
    }
}
