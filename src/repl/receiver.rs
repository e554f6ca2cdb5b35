//! The standby's side: the walreceiver. It connects to the primary named by
//! `primary_conninfo` over the replication protocol, streams the log from where its own
//! log ends, writes it at the same positions, makes it durable, and replays each complete
//! record through the same code crash recovery uses. After each batch it reports three
//! positions to the primary: written (before the sync), flushed (after it) and applied
//! (after replay), so a commit waiting at `remote_write`, `on` or `remote_apply` is
//! released as soon as its level is met here.
//!
//! Two threads: the receiver writes, syncs and reports; the replayer follows the flushed
//! position (`flushed_lsn` of the standby's log), replays every complete record below it
//! and reports the applied position. So replay never holds up the next sync, a record is
//! replayed only once it is durable (a standby that crashes replays it again from its own
//! log), and the applied position never passes the flushed one. The connection is retried
//! every second while the primary is away; the standby keeps serving reads at its applied
//! position meanwhile.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use parking_lot::Mutex;

use super::location::{Layout, WalLocation, SEGMENT_HEADER_BYTES};
use crate::error::{Error, Result, SqlState};
use crate::settings::Settings;
use crate::txn::TxnManager;
use crate::wal::{Lsn, Wal};

/// The largest message accepted from the primary (XLogData carries at most 128 KiB).
const MAX_MESSAGE_BYTES: usize = 64 << 20;
/// How long one read waits before the loop looks at its timers and the stop flag.
const READ_POLL: Duration = Duration::from_millis(100);
/// Between connection attempts.
const RETRY_PAUSE: Duration = Duration::from_secs(1);

/// `primary_conninfo`, in libpq's `keyword=value` form.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Conninfo {
    pub host: String,
    pub port: u16,
    pub user: String,
    pub application_name: String,
    /// `password=`, else the environment's `PGPASSWORD`, as libpq takes it: what the
    /// primary's password methods (SCRAM, md5, password) are answered with.
    pub password: Option<String>,
}

pub fn parse_conninfo(s: &str) -> Result<Conninfo> {
    let mut c = Conninfo {
        host: "127.0.0.1".into(),
        port: 5432,
        user: "postgres".into(),
        application_name: "walreceiver".into(),
        password: std::env::var("PGPASSWORD").ok(),
    };
    let bad = |why: String| {
        Error::new(
            SqlState::INVALID_PARAMETER_VALUE,
            format!("invalid primary_conninfo: {why}"),
        )
    };
    let mut chars = s.chars().peekable();
    loop {
        while chars.peek().is_some_and(|c| c.is_whitespace()) {
            chars.next();
        }
        if chars.peek().is_none() {
            break;
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
        match key.as_str() {
            "host" | "hostaddr" => {
                c.host = if value == "localhost" {
                    "127.0.0.1".into()
                } else {
                    value
                }
            }
            "port" => {
                c.port = value
                    .parse()
                    .map_err(|_| bad(format!("invalid port \"{value}\"")))?
            }
            "user" => c.user = value,
            "application_name" => c.application_name = value,
            "password" => c.password = Some(value),
            // The standby speaks to its primary without TLS: a mode that needs it is
            // refused rather than ignored; `prefer` and `allow` accept a plain connection.
            "sslmode" => match value.as_str() {
                "disable" | "allow" | "prefer" => {}
                "require" | "verify-ca" | "verify-full" => {
                    return Err(Error::unsupported(format!(
                        "sslmode={value} in primary_conninfo is not supported yet: a standby connects to its primary without TLS"
                    )))
                }
                other => return Err(bad(format!("invalid sslmode value: \"{other}\""))),
            },
            "sslrootcert" | "sslcert" | "sslkey" => {}
            "dbname"
            | "connect_timeout"
            | "options"
            | "channel_binding"
            | "keepalives"
            | "target_session_attrs"
            | "gssencmode"
            | "passfile" => {}
            "" => return Err(bad("missing keyword".into())),
            other => return Err(bad(format!("invalid connection option \"{other}\""))),
        }
    }
    Ok(c)
}

/// What a standby shows of its walreceiver (`pg_stat_wal_receiver`,
/// `pg_last_wal_receive_lsn()`, `pg_last_wal_replay_lsn()`).
pub struct ReceiverStatus {
    pub conninfo: Conninfo,
    pub slot: Option<String>,
    /// The timeline it streams on (it follows the primary to a newer one).
    pub timeline: std::sync::atomic::AtomicU32,
    status: Mutex<&'static str>,
    pub receive_start: AtomicU64,
    pub written: AtomicU64,
    pub flushed: AtomicU64,
    pub applied: AtomicU64,
    pub latest_end: AtomicU64,
    pub last_send_us: AtomicI64,
    pub last_receipt_us: AtomicI64,
    pub latest_end_us: AtomicI64,
    stop: AtomicBool,
}

impl ReceiverStatus {
    pub fn new(conninfo: Conninfo, slot: Option<String>, timeline: u32) -> ReceiverStatus {
        ReceiverStatus {
            conninfo,
            slot,
            timeline: std::sync::atomic::AtomicU32::new(timeline),
            status: Mutex::new("starting"),
            receive_start: AtomicU64::new(0),
            written: AtomicU64::new(0),
            flushed: AtomicU64::new(0),
            applied: AtomicU64::new(0),
            latest_end: AtomicU64::new(0),
            last_send_us: AtomicI64::new(0),
            last_receipt_us: AtomicI64::new(0),
            latest_end_us: AtomicI64::new(0),
            stop: AtomicBool::new(false),
        }
    }

    pub fn status(&self) -> &'static str {
        *self.status.lock()
    }

    fn set_status(&self, s: &'static str) {
        *self.status.lock() = s;
    }

    pub fn stop(&self) {
        self.stop.store(true, Ordering::Release);
    }

    fn stopping(&self) -> bool {
        self.stop.load(Ordering::Acquire)
    }
}

/// A client connection speaking the replication protocol, with its own input buffer so
/// that a read that times out never loses part of a message.
pub(crate) struct Client {
    pub(crate) stream: TcpStream,
    input: Vec<u8>,
    start: usize,
}

pub(crate) enum Polled {
    Message(u8, Vec<u8>),
    Nothing,
}

fn conn_error(what: String) -> Error {
    Error::new(SqlState::CONNECTION_FAILURE, what)
}

impl Client {
    pub(crate) fn connect(c: &Conninfo) -> Result<Client> {
        let addr = format!("{}:{}", c.host, c.port);
        let addrs = std::net::ToSocketAddrs::to_socket_addrs(&addr).map_err(|e| {
            conn_error(format!("could not translate host name \"{}\": {e}", c.host))
        })?;
        let mut last = None;
        for a in addrs {
            match TcpStream::connect_timeout(&a, Duration::from_secs(10)) {
                Ok(stream) => {
                    let _ = stream.set_nodelay(true);
                    stream
                        .set_read_timeout(Some(READ_POLL))
                        .map_err(|e| conn_error(e.to_string()))?;
                    let mut client = Client {
                        stream,
                        input: Vec::with_capacity(256 * 1024),
                        start: 0,
                    };
                    client.startup(c)?;
                    return Ok(client);
                }
                Err(e) => last = Some(e),
            }
        }
        Err(conn_error(format!(
            "could not connect to the primary server at {addr}: {}",
            last.map_or("no address".to_string(), |e| e.to_string())
        )))
    }

    pub(crate) fn send(&mut self, tag: Option<u8>, body: &[u8]) -> Result<()> {
        let mut msg = Vec::with_capacity(body.len() + 5);
        msg.extend(tag);
        msg.extend_from_slice(&((body.len() + 4) as i32).to_be_bytes());
        msg.extend_from_slice(body);
        self.stream
            .write_all(&msg)
            .map_err(|e| conn_error(format!("could not send data to WAL stream: {e}")))
    }

    fn startup(&mut self, c: &Conninfo) -> Result<()> {
        let mut body = Vec::new();
        body.extend_from_slice(&196608i32.to_be_bytes());
        for (k, v) in [
            ("user", c.user.as_str()),
            ("database", "replication"),
            ("replication", "true"),
            ("application_name", c.application_name.as_str()),
        ] {
            body.extend_from_slice(k.as_bytes());
            body.push(0);
            body.extend_from_slice(v.as_bytes());
            body.push(0);
        }
        body.push(0);
        self.send(None, &body)?;
        let mut scram: Option<crate::auth::scram::ScramClient> = None;
        loop {
            let (tag, body) = self.message(Duration::from_secs(30))?;
            match tag {
                b'R' => self.authenticate(c, &body, &mut scram)?,
                b'E' => return Err(server_error(&body)),
                b'Z' => return Ok(()),
                _ => {}
            }
        }
    }

    /// Answer one Authentication request of the primary as libpq does: SCRAM-SHA-256,
    /// md5 or a clear-text password (from `c.password`), or nothing for AuthenticationOk.
    fn authenticate(
        &mut self,
        c: &Conninfo,
        body: &[u8],
        scram: &mut Option<crate::auth::scram::ScramClient>,
    ) -> Result<()> {
        use crate::auth::scram::{self, ScramClient};
        let (code, data) = match body.split_first_chunk::<4>() {
            Some((code, data)) => (i32::from_be_bytes(*code), data),
            None => return Err(conn_error("invalid authentication request".into())),
        };
        let password = || {
            c.password.clone().ok_or_else(|| {
                Error::new(
                    SqlState::INVALID_PASSWORD,
                    "the primary asks for a password: give it in primary_conninfo or PGPASSWORD",
                )
            })
        };
        let mut reply = Vec::new();
        match code {
            0 => return Ok(()),
            // AuthenticationCleartextPassword
            3 => {
                reply.extend_from_slice(password()?.as_bytes());
                reply.push(0);
            }
            // AuthenticationMD5Password: md5(md5(password || user) || salt).
            5 => {
                let salt: [u8; 4] = data
                    .get(..4)
                    .and_then(|s| s.try_into().ok())
                    .ok_or_else(|| conn_error("invalid MD5 authentication request".into()))?;
                let stored = scram::md5_verifier(&password()?, &c.user);
                reply.extend_from_slice(scram::md5_response(&stored, &salt).as_bytes());
                reply.push(0);
            }
            // AuthenticationSASL: the mechanisms offered.
            10 => {
                let offered = data
                    .split(|&b| b == 0)
                    .any(|m| m == scram::MECHANISM.as_bytes());
                if !offered {
                    return Err(conn_error(
                        "the primary offers no SASL mechanism the walreceiver supports".into(),
                    ));
                }
                let client = ScramClient::new(&password()?);
                let first = client.client_first();
                reply.extend_from_slice(scram::MECHANISM.as_bytes());
                reply.push(0);
                reply.extend_from_slice(&(first.len() as i32).to_be_bytes());
                reply.extend_from_slice(&first);
                *scram = Some(client);
            }
            // AuthenticationSASLContinue: the server-first-message.
            11 => {
                let client = scram
                    .as_mut()
                    .ok_or_else(|| conn_error("SASLContinue before SASL".into()))?;
                reply = client.client_final(data)?;
            }
            // AuthenticationSASLFinal: the server's signature.
            12 => {
                let client = scram
                    .as_ref()
                    .ok_or_else(|| conn_error("SASLFinal before SASL".into()))?;
                return client.verify_server_final(data);
            }
            _ => return Err(conn_error(
                "the primary asks for an authentication method the walreceiver does not support"
                    .into(),
            )),
        }
        self.send(Some(b'p'), &reply)
    }

    /// Poll for one message: `Nothing` when none arrived within one read's wait.
    pub(crate) fn poll(&mut self) -> Result<Polled> {
        if let Some(m) = self.take() {
            return Ok(Polled::Message(m.0, m.1));
        }
        if self.start > 0 && self.start == self.input.len() {
            self.input.clear();
            self.start = 0;
        } else if self.start > 128 * 1024 {
            self.input.drain(..self.start);
            self.start = 0;
        }
        let old = self.input.len();
        self.input.resize(old + 128 * 1024, 0);
        let got = self.stream.read(&mut self.input[old..]);
        match got {
            Ok(0) => {
                self.input.truncate(old);
                Err(conn_error("the primary closed the connection".into()))
            }
            Ok(n) => {
                self.input.truncate(old + n);
                Ok(match self.take() {
                    Some((t, b)) => Polled::Message(t, b),
                    None => Polled::Nothing,
                })
            }
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                ) =>
            {
                self.input.truncate(old);
                Ok(Polled::Nothing)
            }
            Err(e) => {
                self.input.truncate(old);
                Err(conn_error(format!(
                    "could not receive data from WAL stream: {e}"
                )))
            }
        }
    }

    fn take(&mut self) -> Option<(u8, Vec<u8>)> {
        let buf = &self.input[self.start..];
        if buf.len() < 5 {
            return None;
        }
        let len = i32::from_be_bytes([buf[1], buf[2], buf[3], buf[4]]) as usize;
        if buf.len() < 1 + len {
            return None;
        }
        let tag = buf[0];
        let body = buf[5..1 + len].to_vec();
        self.start += 1 + len;
        Some((tag, body))
    }

    /// The next message within `wait`.
    pub(crate) fn message(&mut self, wait: Duration) -> Result<(u8, Vec<u8>)> {
        let until = Instant::now() + wait;
        loop {
            if let Some(buf) = self.input.get(self.start..self.start + 5) {
                let len = i32::from_be_bytes([buf[1], buf[2], buf[3], buf[4]]);
                if len < 4 || len as usize > MAX_MESSAGE_BYTES {
                    return Err(conn_error(format!(
                        "invalid message length {len} from the primary"
                    )));
                }
            }
            match self.poll()? {
                Polled::Message(t, b) => return Ok((t, b)),
                Polled::Nothing if Instant::now() >= until => {
                    return Err(conn_error("timed out waiting for the primary".into()))
                }
                Polled::Nothing => {}
            }
        }
    }

    /// A simple query's rows, as text.
    pub(crate) fn query(&mut self, sql: &str) -> Result<Vec<Vec<Option<String>>>> {
        let mut body = sql.as_bytes().to_vec();
        body.push(0);
        self.send(Some(b'Q'), &body)?;
        let mut rows = Vec::new();
        let mut error = None;
        loop {
            let (tag, body) = self.message(Duration::from_secs(30))?;
            match tag {
                b'D' => rows.push(data_row_text(&body)),
                b'E' => error = Some(server_error(&body)),
                b'Z' => break,
                _ => {}
            }
        }
        match error {
            Some(e) => Err(e),
            None => Ok(rows),
        }
    }
}

pub(crate) fn data_row_text(body: &[u8]) -> Vec<Option<String>> {
    let mut out = Vec::new();
    let n = body
        .get(..2)
        .map_or(0, |b| i16::from_be_bytes([b[0], b[1]]).max(0) as usize);
    let mut at = 2;
    for _ in 0..n {
        let Some(len) = body.get(at..at + 4) else {
            break;
        };
        let len = i32::from_be_bytes([len[0], len[1], len[2], len[3]]);
        at += 4;
        if len < 0 {
            out.push(None);
            continue;
        }
        let end = (at + len as usize).min(body.len());
        out.push(Some(String::from_utf8_lossy(&body[at..end]).into_owned()));
        at = end;
    }
    out
}

/// An ErrorResponse from the primary, as an error here.
pub(crate) fn server_error(body: &[u8]) -> Error {
    let mut code = String::new();
    let mut message = String::from("error from the primary");
    for field in body.split(|&b| b == 0) {
        match field.first() {
            Some(b'C') => code = String::from_utf8_lossy(&field[1..]).into_owned(),
            Some(b'M') => message = String::from_utf8_lossy(&field[1..]).into_owned(),
            _ => {}
        }
    }
    Error::new(
        SqlState::CONNECTION_FAILURE,
        format!("the primary server reported an error: {message} (SQLSTATE {code})"),
    )
}

/// What the receiver works with.
pub struct Receiver {
    pub status: Arc<ReceiverStatus>,
    pub txn: Arc<TxnManager>,
    pub wal: Arc<Wal>,
    pub settings: Arc<Settings>,
    /// The standby's identity (system identifier, timeline and its history).
    pub repl: Arc<super::primary::Replication>,
    pub layout: Layout,
}

/// Where the replayer sends its reports: the current connection's socket, if any.
type ReportTo = Arc<Mutex<Option<TcpStream>>>;

/// A standby status update: written, flushed and applied locations, as of now.
fn status_message(s: &ReceiverStatus, reply_requested: bool) -> Vec<u8> {
    let mut body = vec![b'r'];
    for v in [&s.written, &s.flushed, &s.applied] {
        body.extend_from_slice(&v.load(Ordering::Acquire).to_be_bytes());
    }
    body.extend_from_slice(&crate::types::now_us().to_be_bytes());
    body.push(u8::from(reply_requested));
    let mut msg = vec![b'd'];
    msg.extend_from_slice(&((body.len() + 4) as i32).to_be_bytes());
    msg.extend_from_slice(&body);
    msg
}

fn send_report(to: &ReportTo, s: &ReceiverStatus) -> Result<()> {
    send_status(to, s, false)
}

/// A status update; with `reply_requested`, the primary answers with a keepalive (how a
/// quiet connection is told from a dead one).
fn send_status(to: &ReportTo, s: &ReceiverStatus, reply_requested: bool) -> Result<()> {
    let msg = status_message(s, reply_requested);
    match to.lock().as_mut() {
        Some(stream) => stream
            .write_all(&msg)
            .map_err(|e| conn_error(format!("could not send data to WAL stream: {e}"))),
        None => Ok(()),
    }
}

impl Receiver {
    /// Run until stopped: stream, write, sync, report, with the replayer beside; reconnect
    /// on failure.
    pub fn run(&self) {
        let end = self.wal.flushed_lsn();
        let loc = |l: Lsn| self.layout.location(l).0;
        self.status
            .applied
            .store(loc(self.txn.replayed_end().max(end)), Ordering::Release);
        self.status.flushed.store(loc(end), Ordering::Release);
        let report_to: ReportTo = Arc::new(Mutex::new(None));
        let replayer = {
            let (status, txn, wal, report_to) = (
                self.status.clone(),
                self.txn.clone(),
                self.wal.clone(),
                report_to.clone(),
            );
            let layout = self.layout;
            std::thread::Builder::new()
                .name("replayer".into())
                .spawn(move || replay_loop(&status, &txn, &wal, layout, &report_to))
        };
        let replayer = match replayer {
            Ok(t) => t,
            Err(e) => {
                crate::error::stop_server(&format!("could not start the replayer thread: {e}"))
            }
        };
        while !self.status.stopping() {
            self.status.set_status("starting");
            match self.stream(&report_to) {
                Ok(()) => {}
                Err(e) => {
                    tracing::warn!("walreceiver: {}", e.message);
                }
            }
            *report_to.lock() = None;
            self.status.set_status("waiting");
            let until = Instant::now() + RETRY_PAUSE;
            while Instant::now() < until && !self.status.stopping() {
                std::thread::sleep(Duration::from_millis(50));
            }
        }
        self.status.set_status("stopping");
        // Wake the replayer so that it sees the stop.
        self.wal.sync_received(self.wal.flushed_lsn());
        let _ = replayer.join();
    }

    fn stream(&self, report_to: &ReportTo) -> Result<()> {
        let c = &self.status.conninfo;
        let mut client = Client::connect(c)?;
        let rows = client.query("IDENTIFY_SYSTEM")?;
        let row = rows
            .first()
            .ok_or_else(|| conn_error("IDENTIFY_SYSTEM returned no row".into()))?;
        let system_id: u64 = row
            .first()
            .cloned()
            .flatten()
            .and_then(|v| v.parse().ok())
            .ok_or_else(|| conn_error("IDENTIFY_SYSTEM returned no system identifier".into()))?;
        if system_id != self.repl.system_id {
            return Err(conn_error(format!(
                "database system identifier differs between the primary and standby: the primary's identifier is {system_id}, the standby's identifier is {}",
                self.repl.system_id
            )));
        }
        let primary_timeline: u32 = row
            .get(1)
            .cloned()
            .flatten()
            .and_then(|v| v.parse().ok())
            .unwrap_or(0);
        let start = self.wal.flushed_lsn();
        let start_loc = self.layout.location(start);
        let mine = self.repl.timeline();
        if primary_timeline > mine {
            self.follow_timeline(&mut client, primary_timeline, start_loc)?;
        }
        let timeline = self.repl.timeline();
        self.status.timeline.store(timeline, Ordering::Release);
        let slot = match &self.status.slot {
            Some(s) => format!("SLOT \"{s}\" "),
            None => String::new(),
        };
        // On an older timeline the primary refuses, and learns that it has been
        // superseded (it fences itself off).
        let cmd = format!("START_REPLICATION {slot}PHYSICAL {start_loc} TIMELINE {timeline}");
        let mut body = cmd.into_bytes();
        body.push(0);
        client.send(Some(b'Q'), &body)?;
        loop {
            let (tag, body) = client.message(Duration::from_secs(30))?;
            match tag {
                b'W' => break,
                b'E' => return Err(server_error(&body)),
                _ => {}
            }
        }
        tracing::info!("started streaming WAL from primary at {start_loc} on timeline {timeline}");
        self.status.set_status("streaming");
        let writer = client
            .stream
            .try_clone()
            .map_err(|e| conn_error(format!("could not share the connection: {e}")))?;
        *report_to.lock() = Some(writer);
        self.status
            .receive_start
            .store(start_loc.0, Ordering::Release);
        let mut received = start;
        let status_interval = Duration::from_secs(
            self.settings.get_int("wal_receiver_status_interval").max(0) as u64,
        );
        let timeout_ms = self.settings.get_int("wal_receiver_timeout").max(0) as u64;
        let mut last_report = Instant::now();
        let mut last_heard = Instant::now();
        let mut pinged = false;
        loop {
            if self.status.stopping() {
                let _ = client.send(Some(b'c'), &[]);
                return Ok(());
            }
            let mut wrote = false;
            let mut reply_requested = false;
            // Everything that has arrived, then one sync and one round of reports.
            loop {
                match client.poll()? {
                    Polled::Nothing => break,
                    Polled::Message(b'd', body) => {
                        last_heard = Instant::now();
                        pinged = false;
                        match body.first() {
                            Some(b'w') if body.len() >= 25 => {
                                let data_start = WalLocation(be_u64(&body[1..9]));
                                let wal_end = be_u64(&body[9..17]);
                                self.note_message(be_u64(&body[17..25]) as i64, wal_end);
                                received = self.write(data_start, &body[25..], received)?;
                                self.status
                                    .written
                                    .store(self.layout.location(received).0, Ordering::Release);
                                wrote = true;
                            }
                            Some(b'k') if body.len() >= 18 => {
                                self.note_message(be_u64(&body[9..17]) as i64, be_u64(&body[1..9]));
                                reply_requested |= body[17] != 0;
                            }
                            _ => {}
                        }
                        if client.input.len() - client.start < 5 {
                            break;
                        }
                    }
                    Polled::Message(b'c', _) => {
                        tracing::info!("replication terminated by the primary");
                        let _ = client.send(Some(b'c'), &[]);
                        return Ok(());
                    }
                    Polled::Message(b'E', body) => return Err(server_error(&body)),
                    Polled::Message(_, _) => {}
                }
            }
            if wrote {
                // Written: a remote_write commit may go on.
                send_report(report_to, &self.status)?;
                self.status
                    .flushed
                    .store(self.layout.location(received).0, Ordering::Release);
                // Publishing the flush wakes the replayer.
                self.wal.sync_received(received);
                send_report(report_to, &self.status)?;
                last_report = Instant::now();
            } else if reply_requested
                || (!status_interval.is_zero() && last_report.elapsed() >= status_interval)
            {
                send_report(report_to, &self.status)?;
                last_report = Instant::now();
            }
            if timeout_ms > 0
                && !pinged
                && last_heard.elapsed() >= Duration::from_millis(timeout_ms / 2)
            {
                // Nothing heard for half the timeout: ask the primary for a reply.
                send_status(report_to, &self.status, true)?;
                pinged = true;
            }
            if timeout_ms > 0 && last_heard.elapsed() >= Duration::from_millis(timeout_ms) {
                return Err(conn_error("terminating walreceiver due to timeout".into()));
            }
        }
    }

    /// The primary is on a newer timeline (a standby was promoted): follow it if this
    /// standby's log is a prefix of that timeline's, that is, if it does not pass the
    /// point where the new timeline forked from ours; else it holds changes the new
    /// primary does not have, and must be made again from it.
    fn follow_timeline(&self, client: &mut Client, newest: u32, end: WalLocation) -> Result<()> {
        let rows = client.query(&format!("TIMELINE_HISTORY {newest}"))?;
        let content = rows
            .first()
            .and_then(|r| r.get(1).cloned().flatten())
            .ok_or_else(|| conn_error("TIMELINE_HISTORY returned no content".into()))?;
        let history = super::identity::Identity::parse_history_file(&content).ok_or_else(|| {
            conn_error("the primary sent a timeline history that cannot be read".into())
        })?;
        let mine = self.repl.timeline();
        match super::machine::follow(mine, end, &history) {
            super::machine::FollowVerdict::Follow => {}
            super::machine::FollowVerdict::Diverged(fork) => {
                return Err(conn_error(format!(
                    "this standby's log ends at {end}, past {fork} where the primary's timeline {newest} forked from timeline {mine}: it holds changes the new primary does not have; make it again with steadydb basebackup"
                )))
            }
            super::machine::FollowVerdict::Unrelated => {
                return Err(conn_error(format!(
                    "timeline {mine} of this standby is not in the history of the primary's timeline {newest}"
                )))
            }
        }
        let fork = super::machine::shared_end(&history, mine).unwrap_or(end);
        self.repl.update_identity(|id| {
            id.timeline = newest;
            id.history = history.clone();
        })?;
        tracing::info!(
            "following the primary to timeline {newest} (timeline {mine} ended at {fork})"
        );
        Ok(())
    }

    fn note_message(&self, send_us: i64, wal_end: u64) {
        let now = crate::types::now_us();
        self.status.last_send_us.store(send_us, Ordering::Release);
        self.status.last_receipt_us.store(now, Ordering::Release);
        if wal_end > self.status.latest_end.swap(wal_end, Ordering::AcqRel) {
            self.status.latest_end_us.store(now, Ordering::Release);
        }
    }

    /// Write one XLogData's bytes: segment headers are skipped (ours are the same bytes),
    /// log bytes go to their positions. Returns the new end of what was received.
    fn write(&self, start: WalLocation, data: &[u8], received: Lsn) -> Result<Lsn> {
        let seg = self.layout.segment_bytes;
        let mut loc = start.0;
        let mut rest = data;
        let mut end = received;
        while !rest.is_empty() {
            let off = loc % seg;
            let in_segment = ((seg - off) as usize).min(rest.len());
            let (piece, tail) = rest.split_at(in_segment);
            let skip = SEGMENT_HEADER_BYTES
                .saturating_sub(off)
                .min(piece.len() as u64) as usize;
            let log_bytes = &piece[skip..];
            let at = self.layout.lsn(WalLocation(loc + skip as u64));
            // Bytes this standby already has are not written again.
            match super::machine::accept_chunk(end, at, log_bytes.len() as u64) {
                super::machine::Chunk::Known => {}
                super::machine::Chunk::Gap => {
                    return Err(conn_error(format!(
                        "the primary sent log from {} but the standby has it only up to {}",
                        self.layout.location(at),
                        self.layout.location(end)
                    )))
                }
                super::machine::Chunk::Write { skip, end: new_end } => {
                    self.wal
                        .receive(end, &log_bytes[skip as usize..])
                        .map_err(|e| {
                            Error::new(
                                SqlState::IO_ERROR,
                                format!("could not write received WAL: {e}"),
                            )
                        })?;
                    end = new_end;
                }
            }
            loc += in_segment as u64;
            rest = tail;
        }
        Ok(end)
    }
}

/// The most log the replayer reads from its segments in one call.
const REPLAY_READ_BYTES: usize = 4 << 20;

/// The replayer: replay every complete record below the standby's flushed position, in
/// order, then report the applied position; wait for the next flush. It reads the log in
/// large pieces and takes records out of memory (a record larger than a piece is read on
/// its own).
fn replay_loop(
    status: &ReceiverStatus,
    txn: &TxnManager,
    wal: &Wal,
    layout: Layout,
    report_to: &ReportTo,
) {
    use crate::wal::record::{check_header, check_record, Invalid, RECORD_HEADER_BYTES};
    let mut reader = wal.record_reader();
    let mut pieces = wal.record_reader();
    let mut at = txn.replayed_end();
    // Log bytes from `at` on, read ahead.
    let mut buf: Vec<u8> = Vec::new();
    let mut used = 0usize;
    let fail = |what: String| -> ! { crate::error::stop_server(&what) };
    loop {
        // Read before the pass: a stop seen here still gets one last pass over what is
        // flushed, so a promotion finds everything durable replayed.
        let stopping = status.stopping();
        let flushed = wal.flushed_lsn();
        let mut any = false;
        while at < flushed {
            if used > 0 && used * 2 >= buf.len() {
                buf.drain(..used);
                used = 0;
            }
            let have_end = at.0 + (buf.len() - used) as u64;
            if have_end < flushed.0 && buf.len() - used < REPLAY_READ_BYTES {
                let want = ((flushed.0 - have_end) as usize).min(REPLAY_READ_BYTES);
                let old = buf.len();
                buf.resize(old + want, 0);
                match reader.read_bytes(Lsn(have_end), &mut buf[old..]) {
                    Ok(n) => buf.truncate(old + n),
                    Err(e) => fail(format!("could not replay the WAL: {e}")),
                }
            }
            let avail = &buf[used..];
            let Some(header) = avail.get(..16).and_then(|h| <[u8; 16]>::try_from(h).ok()) else {
                break;
            };
            let len = match check_header(&header, at) {
                Ok(len) => len,
                Err(Invalid::End) => break,
                Err(why) => fail(format!("invalid WAL record at {at}: {why:?}")),
            };
            let end = Lsn(at.0 + len as u64);
            if end > flushed {
                break;
            }
            let replayed = if avail.len() >= len {
                let kind = match check_record(&avail[..len]) {
                    Ok(k) => k,
                    Err(why) => fail(format!("invalid WAL record at {at}: {why:?}")),
                };
                txn.replay_streamed(kind, &avail[RECORD_HEADER_BYTES..len], end, &mut |p| {
                    pieces.read(p)
                })
            } else {
                // Larger than what is read ahead: read it on its own.
                buf.clear();
                used = 0;
                reader.read(at).and_then(|(kind, payload)| {
                    txn.replay_streamed(kind, &payload, end, &mut |p| pieces.read(p))
                })
            };
            if let Err(e) = replayed {
                fail(format!("could not replay the record at {at}: {e}"));
            }
            if !buf.is_empty() {
                used += len;
            }
            at = end;
            any = true;
        }
        if any {
            status
                .applied
                .store(layout.location(at).0, Ordering::Release);
            if let Err(e) = send_report(report_to, status) {
                tracing::debug!("walreceiver: {}", e.message);
            }
        }
        if stopping {
            return;
        }
        // The receiver's next sync (or its stop) publishes a new flushed position.
        wal.wait_flushed_timeout(Lsn(flushed.0 + 1), Duration::from_millis(200));
    }
}

fn be_u64(b: &[u8]) -> u64 {
    let mut a = [0u8; 8];
    a.copy_from_slice(&b[..8]);
    u64::from_be_bytes(a)
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
        assert_eq!(
            c,
            Conninfo {
                host: "127.0.0.1".into(),
                port: 5433,
                user: "repl".into(),
                application_name: "s 1".into(),
                password: Some("p w".into()),
            }
        );
        assert!(parse_conninfo("port=x").is_err());
        assert!(parse_conninfo("host=p sslmode=prefer").is_ok());
        for mode in ["require", "verify-ca", "verify-full"] {
            let e = parse_conninfo(&format!("host=p sslmode={mode}")).expect_err(mode);
            assert_eq!(e.code, SqlState::FEATURE_NOT_SUPPORTED, "{mode}");
        }
        assert!(parse_conninfo("sslmode=bogus").is_err());
        assert!(parse_conninfo("bogus=1").is_err());
    }
}
