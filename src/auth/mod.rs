//! Authentication: who may connect, and how they prove it.
//!
//! - `scram`: SCRAM-SHA-256 (RFC 5802, RFC 7677) as PostgreSQL speaks it: password
//!   verifiers, the server's side of the exchange and the client's (for replication);
//!   the md5 method's hashes.
//! - `hba`: `pg_hba.conf`, PostgreSQL's host-based authentication file: its parser and
//!   the first-match lookup of a connection's line.
//! - `ident`: `pg_ident.conf`, the user name maps of peer and cert lines with `map=`.
//! - `tls`: the server's certificate and key for TLS, the verification of client
//!   certificates (`ssl_ca_file`), and SCRAM's channel binding data.
//! - [`Authenticator`] (here): the server's rules and TLS configuration in force,
//!   reloaded on SIGHUP and `pg_reload_conf()`, and the slowing of clients that keep
//!   failing.
//!
//! The exchange with the client is `wire/auth.rs`; roles and their verifiers are the
//! catalog's (`storage/roles.rs`).
//!
//! # Invariants
//!
//! - **First match wins, no match rejects**: a connection is decided by the first line
//!   of `pg_hba.conf` whose type, database, user and address match it; with none, it is
//!   refused (28000), as in PostgreSQL.
//! - **A bad file changes nothing**: at startup it stops the server; on reload it is
//!   logged with the line at fault and the rules in force stay.
//! - **A failure says nothing more than "failed"**: an unknown role, a role without a
//!   password, an expired password and a wrong one all get the same 28P01 message after
//!   the same exchange (SCRAM runs to its end with a mock verifier); the reason goes to
//!   the server's log only.
//! - **Repeated failures are slowed**: each failed password from an address delays its
//!   answer, longer with each consecutive failure (up to [`MAX_FAILURE_DELAY`]), so
//!   guessing is slow; the table of addresses is bounded ([`MAX_TRACKED_ADDRESSES`]).

pub mod hba;
pub mod ident;
pub mod scram;
pub mod tls;

use std::collections::HashMap;
use std::net::IpAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use parking_lot::{Mutex, RwLock};

use crate::error::{Error, Result, SqlState};

/// The name of the file, in the data directory.
pub const HBA_FILE: &str = "pg_hba.conf";

/// The delay after a first failed password; each consecutive failure from the same
/// address doubles it, up to [`MAX_FAILURE_DELAY`].
pub const FIRST_FAILURE_DELAY: Duration = Duration::from_millis(200);
pub const MAX_FAILURE_DELAY: Duration = Duration::from_secs(5);

/// Addresses whose failures are remembered; past it the stalest is forgotten.
pub const MAX_TRACKED_ADDRESSES: usize = 10_000;

/// What `--auth` writes into a new data directory's `pg_hba.conf`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DefaultAuth {
    /// Local connections by peer (the OS user must be the role), TCP from the loopback
    /// addresses by SCRAM password: PostgreSQL's recommended setup.
    Safe,
    /// Every connection from this machine is trusted (tests, benchmarks).
    Trust,
}

/// The contents of a new `pg_hba.conf`.
pub fn default_hba(auth: DefaultAuth) -> String {
    let (local, host) = match auth {
        DefaultAuth::Safe => ("peer", "scram-sha-256"),
        DefaultAuth::Trust => ("trust", "trust"),
    };
    format!(
        "# PostgreSQL Client Authentication Configuration File (SteadyDB)\n\
         #\n\
         # TYPE  DATABASE        USER            ADDRESS                 METHOD\n\
         \n\
         # \"local\" is for Unix domain socket connections only\n\
         local   all             all                                     {local}\n\
         # IPv4 local connections:\n\
         host    all             all             127.0.0.1/32            {host}\n\
         # IPv6 local connections:\n\
         host    all             all             ::1/128                 {host}\n\
         # Allow replication connections from localhost, by a user with the\n\
         # replication privilege.\n\
         local   replication     all                                     {local}\n\
         host    replication     all             127.0.0.1/32            {host}\n\
         host    replication     all             ::1/128                 {host}\n"
    )
}

/// What decides a connection.
pub enum Rule {
    /// No `pg_hba.conf` (an engine without a data directory): every connection is trusted.
    TrustAll,
    /// The first line that matches it.
    Line(hba::HbaLine),
    /// No line matches: refused.
    NoMatch,
}

/// The rules in force and the memory of recent failures.
pub struct Authenticator {
    /// None: no file (an engine without a data directory): everyone is trusted.
    path: Option<PathBuf>,
    lines: RwLock<Arc<Vec<hba::HbaLine>>>,
    /// `pg_ident.conf`'s maps (none when it is missing).
    ident: RwLock<Arc<Vec<ident::IdentLine>>>,
    /// TLS, when `ssl = on`.
    tls: RwLock<Option<tls::TlsConfig>>,
    /// A per-server secret from which SCRAM's mock salts for unknown roles are made.
    mock_secret: [u8; 32],
    failures: Mutex<HashMap<IpAddr, (u32, Instant)>>,
}

fn read_rules(path: &Path) -> Result<Vec<hba::HbaLine>> {
    let text = std::fs::read_to_string(path).map_err(|e| {
        Error::new(
            SqlState::CONFIG_FILE_ERROR,
            format!("could not open file \"{}\": {e}", path.display()),
        )
    })?;
    hba::parse(&text).map_err(|e| {
        Error::new(
            SqlState::CONFIG_FILE_ERROR,
            e.describe(&path.display().to_string()),
        )
    })
}

impl Authenticator {
    /// Everyone is trusted (an engine without a data directory).
    pub fn trust_all() -> Authenticator {
        Authenticator {
            path: None,
            lines: RwLock::new(Arc::new(Vec::new())),
            ident: RwLock::new(Arc::new(Vec::new())),
            tls: RwLock::new(None),
            mock_secret: rand::random(),
            failures: Mutex::new(HashMap::new()),
        }
    }

    /// The rules of `path`; an unreadable or invalid file is an error. The maps of
    /// `pg_ident.conf` beside it: a bad one is logged, and no map matches.
    pub fn load(path: &Path) -> Result<Authenticator> {
        let authenticator = Authenticator {
            lines: RwLock::new(Arc::new(read_rules(path)?)),
            path: Some(path.to_path_buf()),
            ..Authenticator::trust_all()
        };
        authenticator.reload_maps();
        Ok(authenticator)
    }

    /// Read `pg_ident.conf` again; a missing file is no maps, a bad one is logged and
    /// the maps in force stay.
    fn reload_maps(&self) {
        let Some(path) = self
            .path
            .as_ref()
            .map(|p| p.with_file_name(ident::IDENT_FILE))
        else {
            return;
        };
        let text = match std::fs::read_to_string(&path) {
            Ok(text) => text,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
            Err(e) => {
                tracing::warn!("could not open usermap file \"{}\": {e}", path.display());
                return;
            }
        };
        match ident::parse(&text) {
            Ok(lines) => *self.ident.write() = Arc::new(lines),
            Err(e) => tracing::warn!(
                "{}; {} was not reloaded",
                e.describe(&path.display().to_string()),
                ident::IDENT_FILE
            ),
        }
    }

    /// Whether map `map` of `pg_ident.conf` lets `system_user` log in as `role`.
    pub fn maps(&self, map: &str, system_user: &str, role: &str) -> bool {
        ident::maps(&self.ident.read(), map, system_user, role)
    }

    /// Read the file again (SIGHUP, `pg_reload_conf()`); a bad file is logged and the
    /// rules in force stay.
    pub fn reload(&self) {
        let Some(path) = &self.path else {
            return;
        };
        match read_rules(path) {
            Ok(lines) => *self.lines.write() = Arc::new(lines),
            Err(e) => tracing::warn!("{}; {} was not reloaded", e.message, HBA_FILE),
        }
        self.reload_maps();
    }

    /// What decides `conn`.
    pub fn rule_for(&self, conn: &hba::Connection, is_member: &dyn Fn(&str, &str) -> bool) -> Rule {
        if self.path.is_none() {
            return Rule::TrustAll;
        }
        let lines = self.lines.read().clone();
        match hba::find(&lines, conn, is_member) {
            Some(line) => Rule::Line(line.clone()),
            None => Rule::NoMatch,
        }
    }

    /// Use `config` for TLS from now on (None: refuse SSLRequests).
    pub fn set_tls(&self, config: Option<tls::TlsConfig>) {
        *self.tls.write() = config;
    }

    pub fn tls(&self) -> Option<tls::TlsConfig> {
        self.tls.read().clone()
    }

    /// Whether client certificates are verified (`ssl_ca_file`), so that `pg_hba.conf`
    /// lines may ask for one.
    pub fn checks_client_certificates(&self) -> bool {
        self.tls
            .read()
            .as_ref()
            .is_some_and(|t| t.checks_client_certificates)
    }

    pub fn mock_secret(&self) -> &[u8] {
        &self.mock_secret
    }

    /// A password failed from `address`: how long to wait before answering.
    pub fn failed(&self, address: Option<IpAddr>) -> Duration {
        let Some(address) = address else {
            return FIRST_FAILURE_DELAY;
        };
        let mut failures = self.failures.lock();
        if failures.len() >= MAX_TRACKED_ADDRESSES && !failures.contains_key(&address) {
            if let Some(stalest) = failures
                .iter()
                .min_by_key(|(_, (_, at))| *at)
                .map(|(a, _)| *a)
            {
                failures.remove(&stalest);
            }
        }
        let entry = failures.entry(address).or_insert((0, Instant::now()));
        entry.0 = entry.0.saturating_add(1);
        entry.1 = Instant::now();
        let doublings = entry.0.saturating_sub(1).min(16);
        FIRST_FAILURE_DELAY
            .saturating_mul(1u32 << doublings)
            .min(MAX_FAILURE_DELAY)
    }

    /// A password succeeded from `address`: its failures are forgotten.
    pub fn succeeded(&self, address: Option<IpAddr>) {
        if let Some(address) = address {
            self.failures.lock().remove(&address);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn failures_from_one_address_wait_longer_each_time_up_to_the_limit() {
        let auth = Authenticator::trust_all();
        let a: IpAddr = "10.0.0.1".parse().unwrap();
        let b: IpAddr = "10.0.0.2".parse().unwrap();
        let delays: Vec<Duration> = (0..8).map(|_| auth.failed(Some(a))).collect();
        assert_eq!(delays[0], FIRST_FAILURE_DELAY);
        assert_eq!(delays[1], FIRST_FAILURE_DELAY * 2);
        assert!(delays.windows(2).all(|w| w[0] <= w[1]));
        assert_eq!(*delays.last().unwrap(), MAX_FAILURE_DELAY);
        assert_eq!(auth.failed(Some(b)), FIRST_FAILURE_DELAY);
        auth.succeeded(Some(a));
        assert_eq!(auth.failed(Some(a)), FIRST_FAILURE_DELAY);
    }

    #[test]
    fn the_default_files_parse() {
        for auth in [DefaultAuth::Safe, DefaultAuth::Trust] {
            let lines = hba::parse(&default_hba(auth)).unwrap();
            assert_eq!(lines.len(), 6);
        }
    }
}
