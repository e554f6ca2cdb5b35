//! Server settings (GUCs) with PostgreSQL's names, units, contexts and SHOW formats.
//!
//! Every setting has one definition in [`DEFS`]. Server-wide values come from the defaults,
//! then `steadydb.conf`, then `-c name=value`; a session may override `User` settings with
//! SET. Values are kept in canonical form (the form SHOW prints), so `SET shared_buffers`
//! style inputs like `131072kB` and `128MB` show the same.

use std::cell::RefCell;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use parking_lot::RwLock;
use rustc_hash::FxHashMap;

use crate::error::{Error, Result, SqlState};

/// When a setting may change, as PostgreSQL's `pg_settings.context`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Context {
    /// Fixed by the server (e.g. server_version).
    Internal,
    /// Only at server start.
    Postmaster,
    /// In the configuration file (no SET).
    Sighup,
    /// By SET in any session.
    User,
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Kind {
    Bool,
    /// An integer, optionally with a unit of memory (base kB) or time (base ms or s).
    Int {
        min: i64,
        max: i64,
        unit: Unit,
    },
    Real {
        min: f64,
        max: f64,
    },
    Enum(&'static [&'static str]),
    Str,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Unit {
    None,
    Kb,
    Ms,
    S,
    /// No unit; read as C reads an integer literal (`0777` octal, `0x1ff` hex, `511`) and
    /// shown in octal, as PostgreSQL shows a file mode.
    Octal,
}

#[derive(Debug)]
pub struct Def {
    pub name: &'static str,
    pub default: &'static str,
    pub kind: Kind,
    pub context: Context,
    pub description: &'static str,
}

const NO: Unit = Unit::None;

pub const SERVER_VERSION: &str = "15.0 (SteadyDB 0.1.0)";

pub static DEFS: &[Def] = &[
    Def { name: "application_name", default: "", kind: Kind::Str, context: Context::User, description: "Sets the application name to be reported in statistics and logs." },
    Def { name: "authentication_timeout", default: "1min", kind: Kind::Int { min: 1, max: 600, unit: Unit::S }, context: Context::Sighup, description: "Sets the maximum allowed time to complete client authentication." },
    Def { name: "autovacuum", default: "on", kind: Kind::Bool, context: Context::Sighup, description: "Starts the autovacuum subprocess (SteadyDB's measures tables for the planner: it has nothing to vacuum)." },
    Def { name: "autovacuum_analyze_scale_factor", default: "0.1", kind: Kind::Real { min: 0.0, max: 100.0 }, context: Context::Sighup, description: "Number of tuple inserts, updates, or deletes prior to analyze as a fraction of reltuples." },
    Def { name: "autovacuum_analyze_threshold", default: "50", kind: Kind::Int { min: 0, max: i32::MAX as i64, unit: NO }, context: Context::Sighup, description: "Minimum number of tuple inserts, updates, or deletes prior to analyze." },
    Def { name: "autovacuum_naptime", default: "1min", kind: Kind::Int { min: 1, max: 2147483, unit: Unit::S }, context: Context::Sighup, description: "Time to sleep between autovacuum runs." },
    Def { name: "block_size", default: "8192", kind: Kind::Int { min: 8192, max: 8192, unit: NO }, context: Context::Internal, description: "Shows the size of a disk block." },
    Def { name: "check_function_bodies", default: "on", kind: Kind::Bool, context: Context::User, description: "Check routine bodies during CREATE FUNCTION and CREATE PROCEDURE (SteadyDB has no user-defined routines)." },
    Def { name: "checkpoint_completion_target", default: "0.9", kind: Kind::Real { min: 0.0, max: 1.0 }, context: Context::Sighup, description: "Time spent flushing dirty buffers during checkpoint, as fraction of checkpoint interval." },
    Def { name: "checkpoint_flush_after", default: "256kB", kind: Kind::Int { min: 0, max: 2048, unit: Unit::Kb }, context: Context::Sighup, description: "Number of pages after which previously performed writes are flushed to disk." },
    Def { name: "checkpoint_timeout", default: "5min", kind: Kind::Int { min: 30, max: 86400, unit: Unit::S }, context: Context::Sighup, description: "Sets the maximum time between automatic WAL checkpoints." },
    Def { name: "client_encoding", default: "UTF8", kind: Kind::Enum(&["UTF8"]), context: Context::User, description: "Sets the client's character set encoding." },
    Def { name: "client_min_messages", default: "notice", kind: Kind::Enum(&["debug5", "debug4", "debug3", "debug2", "debug1", "log", "notice", "warning", "error"]), context: Context::User, description: "Sets the message levels that are sent to the client." },
    Def { name: "commit_delay", default: "0", kind: Kind::Int { min: 0, max: 100000, unit: NO }, context: Context::User, description: "Sets the delay in microseconds between transaction commit and flushing WAL to disk." },
    Def { name: "commit_siblings", default: "0", kind: Kind::Int { min: 0, max: 1000, unit: NO }, context: Context::User, description: "Sets the minimum number of concurrent open transactions required before performing commit_delay." },
    Def { name: "data_directory", default: "", kind: Kind::Str, context: Context::Postmaster, description: "Sets the server's data directory." },
    Def { name: "data_directory_mode", default: "0700", kind: Kind::Int { min: 0, max: 0o777, unit: Unit::Octal }, context: Context::Internal, description: "Shows the mode of the data directory." },
    Def { name: "DateStyle", default: "ISO, MDY", kind: Kind::Enum(&["ISO, MDY"]), context: Context::User, description: "Sets the display format for date and time values." },
    Def { name: "default_table_access_method", default: "heap", kind: Kind::Enum(&["heap"]), context: Context::User, description: "Sets the default table access method for new tables." },
    Def { name: "default_tablespace", default: "", kind: Kind::Enum(&["", "pg_default"]), context: Context::User, description: "Sets the default tablespace to create tables and indexes in (SteadyDB has pg_default only)." },
    Def { name: "default_transaction_isolation", default: "read committed", kind: Kind::Enum(&["serializable", "repeatable read", "read committed", "read uncommitted"]), context: Context::User, description: "Sets the transaction isolation level of each new transaction." },
    Def { name: "default_transaction_read_only", default: "off", kind: Kind::Bool, context: Context::User, description: "Sets the default read-only status of new transactions." },
    Def { name: "extra_float_digits", default: "1", kind: Kind::Int { min: -15, max: 3, unit: NO }, context: Context::User, description: "Sets the number of digits displayed for floating-point values (values above 0 all give the shortest exact form)." },
    Def { name: "recovery_cut_corrupt_wal", default: "off", kind: Kind::Bool, context: Context::Postmaster, description: "Starts even when the WAL is corrupt (an invalid record followed by valid ones), cutting it at the invalid record and losing every change logged after it." },
    Def { name: "fsync", default: "on", kind: Kind::Bool, context: Context::Sighup, description: "Forces synchronization of updates to disk." },
    Def { name: "hot_standby", default: "on", kind: Kind::Bool, context: Context::Postmaster, description: "Allows connections and queries during recovery." },
    Def { name: "idle_in_transaction_session_timeout", default: "0", kind: Kind::Int { min: 0, max: 0, unit: Unit::Ms }, context: Context::User, description: "Sets the maximum allowed idle time between queries, when in a transaction (not enforced: 0 only)." },
    Def { name: "integer_datetimes", default: "on", kind: Kind::Bool, context: Context::Internal, description: "Shows whether datetimes are integer based." },
    Def { name: "IntervalStyle", default: "postgres", kind: Kind::Enum(&["postgres"]), context: Context::User, description: "Sets the display format for interval values." },
    Def { name: "role", default: "none", kind: Kind::Str, context: Context::User, description: "Sets the current role." },
    Def { name: "session_authorization", default: "", kind: Kind::Str, context: Context::User, description: "Sets the session user name." },
    Def { name: "is_superuser", default: "on", kind: Kind::Bool, context: Context::Internal, description: "Shows whether the current user is a superuser." },
    Def { name: "lc_collate", default: "C", kind: Kind::Str, context: Context::Internal, description: "Shows the collation order locale." },
    Def { name: "lc_ctype", default: "C", kind: Kind::Str, context: Context::Internal, description: "Shows the character classification and case conversion locale." },
    Def { name: "listen_addresses", default: "127.0.0.1", kind: Kind::Str, context: Context::Postmaster, description: "Sets the host name or IP address(es) to listen to." },
    Def { name: "log_checkpoints", default: "on", kind: Kind::Bool, context: Context::Sighup, description: "Logs each checkpoint." },
    Def { name: "lock_timeout", default: "0", kind: Kind::Int { min: 0, max: i32::MAX as i64, unit: Unit::Ms }, context: Context::User, description: "Sets the maximum allowed duration of any wait for a lock." },
    Def { name: "max_connections", default: "1000", kind: Kind::Int { min: 1, max: 10000, unit: NO }, context: Context::Postmaster, description: "Sets the maximum number of concurrent connections." },
    Def { name: "max_replication_slots", default: "10", kind: Kind::Int { min: 0, max: 1000, unit: NO }, context: Context::Postmaster, description: "Sets the maximum number of simultaneously defined replication slots." },
    Def { name: "max_wal_senders", default: "10", kind: Kind::Int { min: 0, max: 1000, unit: NO }, context: Context::Postmaster, description: "Sets the maximum number of simultaneously running WAL sender processes." },
    Def { name: "max_identifier_length", default: "63", kind: Kind::Int { min: 63, max: 63, unit: NO }, context: Context::Internal, description: "Shows the maximum identifier length." },
    Def { name: "max_wal_size", default: "1GB", kind: Kind::Int { min: 2, max: i32::MAX as i64, unit: Unit::Kb }, context: Context::Sighup, description: "Sets the WAL size that triggers a checkpoint." },
    Def { name: "password_encryption", default: "scram-sha-256", kind: Kind::Enum(&["md5", "scram-sha-256"]), context: Context::User, description: "Chooses the algorithm for encrypting passwords." },
    Def { name: "port", default: "5433", kind: Kind::Int { min: 1, max: 65535, unit: NO }, context: Context::Postmaster, description: "Sets the TCP port the server listens on." },
    Def { name: "primary_conninfo", default: "", kind: Kind::Str, context: Context::Postmaster, description: "Sets the connection string to be used to connect to the sending server." },
    Def { name: "primary_slot_name", default: "", kind: Kind::Str, context: Context::Postmaster, description: "Sets the name of the replication slot to use on the sending server." },
    Def { name: "row_security", default: "on", kind: Kind::Bool, context: Context::User, description: "Enable row security (SteadyDB has no row security policies)." },
    Def { name: "search_path", default: "\"$user\", public", kind: Kind::Str, context: Context::User, description: "Sets the schema search order for names that are not schema-qualified." },
    Def { name: "server_encoding", default: "UTF8", kind: Kind::Str, context: Context::Internal, description: "Shows the server (database) character set encoding." },
    Def { name: "server_version", default: SERVER_VERSION, kind: Kind::Str, context: Context::Internal, description: "Shows the server version." },
    Def { name: "server_version_num", default: "150000", kind: Kind::Int { min: 150000, max: 150000, unit: NO }, context: Context::Internal, description: "Shows the server version as an integer." },
    Def { name: "shared_buffers", default: "128MB", kind: Kind::Int { min: 16, max: 1 << 30, unit: Unit::Kb }, context: Context::Postmaster, description: "Sets the number of shared memory buffers used by the server." },
    Def { name: "ssl", default: "off", kind: Kind::Bool, context: Context::Sighup, description: "Enables SSL connections." },
    Def { name: "ssl_ca_file", default: "", kind: Kind::Str, context: Context::Sighup, description: "Location of the SSL certificate authority file." },
    Def { name: "ssl_cert_file", default: "server.crt", kind: Kind::Str, context: Context::Sighup, description: "Location of the SSL server certificate file." },
    Def { name: "ssl_key_file", default: "server.key", kind: Kind::Str, context: Context::Sighup, description: "Location of the SSL server private key file." },
    Def { name: "standard_conforming_strings", default: "on", kind: Kind::Enum(&["on"]), context: Context::User, description: "Causes '...' strings to treat backslashes literally." },
    Def { name: "statement_timeout", default: "0", kind: Kind::Int { min: 0, max: i32::MAX as i64, unit: Unit::Ms }, context: Context::User, description: "Sets the maximum allowed duration of any statement." },
    Def { name: "synchronize_seqscans", default: "on", kind: Kind::Bool, context: Context::User, description: "Enable synchronized sequential scans (scans here always start at the first key)." },
    Def { name: "synchronous_commit", default: "on", kind: Kind::Enum(&["on", "off", "local", "remote_write", "remote_apply"]), context: Context::User, description: "Sets the current transaction's synchronization level." },
    Def { name: "synchronous_standby_names", default: "", kind: Kind::Str, context: Context::Sighup, description: "Number of synchronous standbys and list of names of potential synchronous ones." },
    Def { name: "TimeZone", default: "UTC", kind: Kind::Str, context: Context::User, description: "Sets the time zone for displaying and interpreting time stamps." },
    Def { name: "unix_socket_directories", default: "/tmp", kind: Kind::Str, context: Context::Postmaster, description: "Sets the directories where Unix-domain sockets will be created." },
    Def { name: "unix_socket_group", default: "", kind: Kind::Str, context: Context::Postmaster, description: "Sets the owning group of the Unix-domain socket." },
    Def { name: "unix_socket_permissions", default: "0777", kind: Kind::Int { min: 0, max: 0o777, unit: Unit::Octal }, context: Context::Postmaster, description: "Sets the access permissions of the Unix-domain socket." },
    Def { name: "xmloption", default: "content", kind: Kind::Enum(&["content", "document"]), context: Context::User, description: "Sets whether XML data in implicit parsing and serialization operations is to be considered as documents or content fragments (SteadyDB has no xml type)." },
    Def { name: "work_mem", default: "4MB", kind: Kind::Int { min: 64, max: i32::MAX as i64, unit: Unit::Kb }, context: Context::User, description: "Sets the maximum memory to be used for query workspaces: a SELECT's ORDER BY sorts past it on disk." },
    Def { name: "write_set_work_mem", default: "64MB", kind: Kind::Int { min: 64, max: i32::MAX as i64, unit: Unit::Kb }, context: Context::User, description: "Sets the maximum memory a transaction's own uncommitted rows use before they spill to disk (from its next transaction on)." },
    Def { name: "wal_writer_delay", default: "200ms", kind: Kind::Int { min: 1, max: 10000, unit: Unit::Ms }, context: Context::Sighup, description: "Time between WAL flushes performed in the WAL writer." },
    Def { name: "wal_level", default: "replica", kind: Kind::Enum(&["minimal", "replica"]), context: Context::Postmaster, description: "Sets the level of information written to the WAL: minimal lets a bulk load write pages instead of log records, which a standby could not replay." },
    Def { name: "wal_receiver_status_interval", default: "10s", kind: Kind::Int { min: 0, max: i32::MAX as i64 / 1000, unit: Unit::S }, context: Context::Sighup, description: "Sets the maximum interval between WAL receiver status reports to the sending server." },
    Def { name: "wal_receiver_timeout", default: "1min", kind: Kind::Int { min: 0, max: i32::MAX as i64, unit: Unit::Ms }, context: Context::Sighup, description: "Sets the maximum wait time to receive data from the sending server." },
    Def { name: "wal_segment_size", default: "16MB", kind: Kind::Int { min: 16384, max: 16384, unit: Unit::Kb }, context: Context::Internal, description: "Shows the size of write ahead log segments." },
    Def { name: "wal_sender_timeout", default: "1min", kind: Kind::Int { min: 0, max: i32::MAX as i64, unit: Unit::Ms }, context: Context::Sighup, description: "Sets the maximum time to wait for WAL replication." },
];

/// Look up a setting's definition, case-insensitively as PostgreSQL does.
pub fn def(name: &str) -> Option<&'static Def> {
    DEFS.iter().find(|d| d.name.eq_ignore_ascii_case(name))
}

fn unknown(name: &str) -> Error {
    Error::new(
        SqlState::UNDEFINED_OBJECT,
        format!("unrecognized configuration parameter \"{name}\""),
    )
}

fn invalid(def: &Def, value: &str) -> Error {
    let hint = match def.kind {
        Kind::Enum(values) => format!("Available values: {}.", values.join(", ")),
        Kind::Int { min, max, .. } => {
            format!("Valid values are between {min} and {max} (before units).")
        }
        Kind::Real { min, max } => format!("Valid values are between {min} and {max}."),
        _ => String::new(),
    };
    let e = Error::new(
        SqlState::INVALID_PARAMETER_VALUE,
        format!(
            "invalid value for parameter \"{}\": \"{}\"",
            def.name, value
        ),
    );
    if hint.is_empty() {
        e
    } else {
        e.with_hint(hint)
    }
}

/// Parse `value` for `def` into canonical SHOW form.
pub fn canonicalize(def: &Def, value: &str) -> Result<String> {
    let v = value.trim();
    match def.kind {
        Kind::Bool => match v.to_ascii_lowercase().as_str() {
            "on" | "true" | "yes" | "1" | "t" | "y" => Ok("on".into()),
            "off" | "false" | "no" | "0" | "f" | "n" => Ok("off".into()),
            _ => Err(Error::new(
                SqlState::INVALID_PARAMETER_VALUE,
                format!("parameter \"{}\" requires a Boolean value", def.name),
            )),
        },
        Kind::Int { min, max, unit } => {
            let n = parse_with_unit(v, unit).ok_or_else(|| invalid(def, value))?;
            let scaled = match unit {
                Unit::Kb if def.name == "checkpoint_flush_after" => n / 8,
                Unit::Kb if def.name == "shared_buffers" => n / 8,
                Unit::Kb if def.name == "max_wal_size" => n / 1024,
                _ => n,
            };
            if scaled < min || scaled > max {
                // As PostgreSQL: the value in the parameter's own unit, and the range.
                let unit_name = match unit {
                    Unit::Kb if scaled != n => "",
                    Unit::Kb => " kB",
                    Unit::Ms => " ms",
                    Unit::S => " s",
                    Unit::None | Unit::Octal => "",
                };
                return Err(Error::new(
                    SqlState::INVALID_PARAMETER_VALUE,
                    format!(
                        "{scaled}{unit_name} is outside the valid range for parameter \"{}\" ({min} .. {max})",
                        def.name
                    ),
                ));
            }
            Ok(format_with_unit(n, unit))
        }
        Kind::Real { min, max } => match v.parse::<f64>() {
            Ok(x) if x >= min && x <= max => Ok(format!("{x}")),
            _ => Err(invalid(def, value)),
        },
        Kind::Enum(values) => {
            let norm = |s: &str| {
                s.to_ascii_lowercase()
                    .replace(['-', '_'], "")
                    .replace(' ', "")
            };
            let aliases: &[(&str, &str)] = &[
                ("unicode", "UTF8"),
                ("utf8", "UTF8"),
                ("iso", "ISO, MDY"),
                ("iso,mdy", "ISO, MDY"),
            ];
            if let Some(found) = values.iter().find(|x| norm(x) == norm(v)) {
                return Ok(found.to_string());
            }
            if let Some((_, to)) = aliases.iter().find(|(from, _)| norm(from) == norm(v)) {
                if values.contains(to) {
                    return Ok(to.to_string());
                }
            }
            Err(invalid(def, value))
        }
        Kind::Str => {
            if def.name == "TimeZone" {
                return crate::types::zone::parse_setting(v)
                    .map(|zone| zone.name())
                    .ok_or_else(|| invalid(def, value));
            }
            if def.name == "synchronous_standby_names" {
                crate::repl::names::parse(v)?;
            }
            Ok(v.to_string())
        }
    }
}

/// A time setting's value as SHOW prints it (`100ms`, `5s`, `0`), in milliseconds.
pub fn millis(shown: &str) -> Option<u64> {
    parse_with_unit(shown, Unit::Ms).and_then(|n| u64::try_from(n).ok())
}

/// A memory setting's value as SHOW prints it (`64MB`), in kilobytes.
pub fn kilobytes(shown: &str) -> Option<u64> {
    parse_with_unit(shown, Unit::Kb).and_then(|n| u64::try_from(n).ok())
}

/// Parse an integer with an optional unit into the base unit (kB, ms or s).
fn parse_with_unit(v: &str, unit: Unit) -> Option<i64> {
    if unit == Unit::Octal {
        let v = v.trim();
        return match (
            v.strip_prefix("0x").or_else(|| v.strip_prefix("0X")),
            v.strip_prefix('0'),
        ) {
            (Some(hex), _) => i64::from_str_radix(hex, 16).ok(),
            (None, Some(oct)) if !oct.is_empty() => i64::from_str_radix(oct, 8).ok(),
            _ => v.parse().ok(),
        };
    }
    let split = v
        .find(|c: char| !(c.is_ascii_digit() || c == '-'))
        .unwrap_or(v.len());
    let (num, suffix) = v.split_at(split);
    let n: i64 = num.trim().parse().ok()?;
    let factor: i64 = match (unit, suffix.trim()) {
        (_, "") => 1,
        (Unit::Kb, "kB") => 1,
        (Unit::Kb, "MB") => 1024,
        (Unit::Kb, "GB") => 1024 * 1024,
        (Unit::Kb, "TB") => 1024 * 1024 * 1024,
        (Unit::Ms, "us") => return Some(n / 1000),
        (Unit::Ms, "ms") => 1,
        (Unit::Ms, "s") => 1000,
        (Unit::Ms, "min") => 60_000,
        (Unit::Ms, "h") => 3_600_000,
        (Unit::Ms, "d") => 86_400_000,
        (Unit::S, "ms") => return Some(n / 1000),
        (Unit::S, "s") => 1,
        (Unit::S, "min") => 60,
        (Unit::S, "h") => 3600,
        (Unit::S, "d") => 86400,
        _ => return None,
    };
    n.checked_mul(factor)
}

fn format_with_unit(n: i64, unit: Unit) -> String {
    let pick = |units: &[(i64, &str)]| {
        if n == 0 {
            // As PostgreSQL shows a zero (a disabled timeout, say): no unit.
            return "0".to_string();
        }
        for (factor, name) in units {
            if n != 0 && n % factor == 0 {
                return format!("{}{}", n / factor, name);
            }
        }
        format!("{}{}", n, units.last().map(|u| u.1).unwrap_or(""))
    };
    match unit {
        Unit::None => n.to_string(),
        Unit::Kb => pick(&[(1 << 30, "TB"), (1 << 20, "GB"), (1 << 10, "MB"), (1, "kB")]),
        Unit::Ms => pick(&[
            (86_400_000, "d"),
            (3_600_000, "h"),
            (60_000, "min"),
            (1000, "s"),
            (1, "ms"),
        ]),
        Unit::S => pick(&[(86400, "d"), (3600, "h"), (60, "min"), (1, "s")]),
        Unit::Octal => format!("{n:04o}"),
    }
}

type Values = FxHashMap<&'static str, String>;

/// The server-wide values. Every transaction reads some (`synchronous_commit`,
/// `default_transaction_read_only`, ...), and they change only at startup, so they are
/// published by pointer: a change makes a new map and bumps `generation`, and each
/// thread keeps the map it last read until the generation moves. A read is then one load
/// of a cache line nobody writes, not a lock every core takes.
pub struct Settings {
    /// Tells one `Settings` from another in a thread's cached copy.
    id: u64,
    generation: AtomicU64,
    values: RwLock<Arc<Values>>,
}

impl Default for Settings {
    fn default() -> Self {
        static NEXT_ID: AtomicU64 = AtomicU64::new(1);
        Settings {
            id: NEXT_ID.fetch_add(1, Ordering::Relaxed),
            generation: AtomicU64::new(0),
            values: RwLock::new(Arc::new(
                DEFS.iter()
                    .map(|d| (d.name, d.default.to_string()))
                    .collect(),
            )),
        }
    }
}

impl Settings {
    /// Set a server-wide value at startup (configuration file or `-c`).
    pub fn set_at_startup(&self, name: &str, value: &str) -> Result<()> {
        let def = def(name).ok_or_else(|| unknown(name))?;
        if def.context == Context::Internal {
            return Err(Error::new(
                SqlState::CANT_CHANGE_RUNTIME_PARAM,
                format!("parameter \"{}\" cannot be changed", def.name),
            ));
        }
        let v = canonicalize(def, value)?;
        let mut values = self.values.write();
        let mut changed = Values::clone(&values);
        changed.insert(def.name, v);
        *values = Arc::new(changed);
        // After the new map is in place: a thread that sees the new generation reads it.
        self.generation.fetch_add(1, Ordering::AcqRel);
        Ok(())
    }

    /// Reload: the configuration file's entries (`file`, with their line numbers) and the
    /// command line's (`overrides`) applied again over the defaults, for the settings a
    /// reload may change (`Sighup` and `User`); a setting no longer in the file returns to
    /// its default. A file with an invalid entry changes nothing. Returns what changed, as
    /// (name, new value).
    pub fn reload(
        &self,
        file: &[(usize, String, String)],
        overrides: &[(String, String)],
    ) -> Result<Vec<(&'static str, String)>> {
        let reloadable = |d: &Def| matches!(d.context, Context::Sighup | Context::User);
        let mut next: Values = self.values.read().as_ref().clone();
        for d in DEFS.iter().filter(|d| reloadable(d)) {
            next.insert(d.name, d.default.to_string());
        }
        let entries = file
            .iter()
            .map(|(line, n, v)| (Some(*line), n.as_str(), v.as_str()))
            .chain(
                overrides
                    .iter()
                    .map(|(n, v)| (None, n.as_str(), v.as_str())),
            );
        for (line, name, value) in entries {
            let at = |e: Error| match line {
                Some(l) => Error::new(e.code, format!("line {l}: {}", e.message)),
                None => e,
            };
            let d = def(name).ok_or_else(|| at(unknown(name)))?;
            let v = canonicalize(d, value).map_err(at)?;
            if reloadable(d) {
                next.insert(d.name, v);
            } else if d.context == Context::Postmaster && self.show(d.name).as_deref() != Some(&v) {
                tracing::warn!(
                    "parameter \"{}\" cannot be changed without restarting the server",
                    d.name
                );
            }
        }
        let mut values = self.values.write();
        let changed = DEFS
            .iter()
            .filter(|d| values.get(d.name) != next.get(d.name))
            .map(|d| (d.name, next.get(d.name).cloned().unwrap_or_default()))
            .collect();
        *values = Arc::new(next);
        self.generation.fetch_add(1, Ordering::AcqRel);
        Ok(changed)
    }

    /// Run `f` on the current values, through this thread's copy while it is current.
    fn with_values<R>(&self, f: impl FnOnce(&Values) -> R) -> R {
        thread_local! {
            static CACHED: RefCell<Option<(u64, u64, Arc<Values>)>> = const { RefCell::new(None) };
        }
        let generation = self.generation.load(Ordering::Acquire);
        CACHED.with(|cached| {
            let mut cached = cached.borrow_mut();
            // Moved out and back, not cloned: cloning would write the Arc's count, one
            // cache line for every thread again.
            let current = match cached.take() {
                Some(c) if c.0 == self.id && c.1 == generation => c,
                _ => (self.id, generation, self.values.read().clone()),
            };
            let result = f(&current.2);
            *cached = Some(current);
            result
        })
    }

    /// The server-wide value, as SHOW prints it.
    pub fn show(&self, name: &str) -> Option<String> {
        let def = def(name)?;
        self.with_values(|v| v.get(def.name).cloned())
    }

    /// Whether the server-wide value of `name` (a canonical name) is `value`, as SHOW
    /// prints it: for the per-statement checks, without copying the value.
    pub fn is(&self, name: &str, value: &str) -> bool {
        self.with_values(|v| v.get(name).is_some_and(|v| v == value))
    }

    /// The server-wide `synchronous_commit`.
    pub fn sync_level(&self) -> crate::wal::SyncLevel {
        self.with_values(|v| {
            crate::wal::SyncLevel::from_setting(v.get("synchronous_commit").map_or("on", |s| s))
        })
    }

    pub fn get_bool(&self, name: &str) -> bool {
        self.show(name).as_deref() == Some("on")
    }

    /// An integer setting in its base unit (kB, ms or s).
    pub fn get_int(&self, name: &str) -> i64 {
        let d = match def(name) {
            Some(d) => d,
            None => return 0,
        };
        let unit = match d.kind {
            Kind::Int { unit, .. } => unit,
            _ => Unit::None,
        };
        self.show(name)
            .and_then(|v| parse_with_unit(&v, unit))
            .unwrap_or(0)
    }
}

/// Validate a SET from a session: returns the definition and canonical value.
pub fn check_session_set(name: &str, value: &str) -> Result<(&'static Def, String)> {
    let def = def(name).ok_or_else(|| unknown(name))?;
    match def.context {
        Context::User => Ok((def, canonicalize(def, value)?)),
        Context::Internal => Err(Error::new(
            SqlState::CANT_CHANGE_RUNTIME_PARAM,
            format!("parameter \"{}\" cannot be changed", def.name),
        )),
        Context::Postmaster => Err(Error::new(
            SqlState::CANT_CHANGE_RUNTIME_PARAM,
            format!(
                "parameter \"{}\" cannot be changed without restarting the server",
                def.name
            ),
        )),
        Context::Sighup => Err(Error::new(
            SqlState::CANT_CHANGE_RUNTIME_PARAM,
            format!("parameter \"{}\" cannot be changed now", def.name),
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn units_canonicalize_like_postgres() {
        let sb = def("shared_buffers").unwrap();
        assert_eq!(canonicalize(sb, "128MB").unwrap(), "128MB");
        assert_eq!(canonicalize(sb, "131072kB").unwrap(), "128MB");
        assert_eq!(canonicalize(sb, "1GB").unwrap(), "1GB");
        assert!(canonicalize(sb, "12 parsecs").is_err());
        let ct = def("checkpoint_timeout").unwrap();
        assert_eq!(canonicalize(ct, "300").unwrap(), "5min");
        assert_eq!(canonicalize(ct, "90s").unwrap(), "90s");
        assert!(canonicalize(ct, "1s").is_err());
        let wd = def("wal_writer_delay").unwrap();
        assert_eq!(canonicalize(wd, "200ms").unwrap(), "200ms");
        assert_eq!(canonicalize(wd, "1s").unwrap(), "1s");
    }

    #[test]
    fn a_file_mode_reads_like_a_c_literal_and_shows_in_octal() {
        let d = def("unix_socket_permissions").expect("defined");
        assert_eq!(d.default, "0777");
        for (input, shown) in [
            ("0770", "0770"),
            ("511", "0777"),
            ("0x1c0", "0700"),
            ("0", "0000"),
        ] {
            assert_eq!(canonicalize(d, input).expect(input), shown);
        }
        for bad in ["0800", "1000", "-1", "rwx"] {
            assert!(canonicalize(d, bad).is_err(), "{bad}");
        }
        let s = Settings::default();
        s.set_at_startup("unix_socket_permissions", "0700")
            .expect("set");
        assert_eq!(s.get_int("unix_socket_permissions"), 0o700);
    }

    #[test]
    fn set_rules_follow_contexts() {
        assert_eq!(
            check_session_set("synchronous_commit", "OFF").unwrap().1,
            "off"
        );
        assert_eq!(
            check_session_set("shared_buffers", "1GB").unwrap_err().code,
            SqlState::CANT_CHANGE_RUNTIME_PARAM
        );
        assert_eq!(
            check_session_set("nonexistent", "1").unwrap_err().code,
            SqlState::UNDEFINED_OBJECT
        );
        assert_eq!(
            check_session_set("synchronous_commit", "sometimes")
                .unwrap_err()
                .code,
            SqlState::INVALID_PARAMETER_VALUE
        );
        let s = Settings::default();
        assert_eq!(s.get_int("shared_buffers"), 128 * 1024);
        assert_eq!(s.get_int("checkpoint_timeout"), 300);
    }
}
