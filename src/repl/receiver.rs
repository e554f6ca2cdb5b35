//! The standby's side: the walreceiver. It connects to the primary named by
//! `primary_conninfo` (`conninfo`) over the replication protocol (`client`), over TLS as
//! its `sslmode` asks (`transport`), streams the log from where its own
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

use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use parking_lot::Mutex;

use super::client::{server_error, Client, Polled};
use super::conninfo::Conninfo;
use super::location::{Layout, WalLocation, SEGMENT_HEADER_BYTES};
use super::transport::{conn_error, Sender};
use crate::error::{Error, Result, SqlState};
use crate::settings::Settings;
use crate::txn::TxnManager;
use crate::wal::{Lsn, Wal};

/// Between connection attempts.
const RETRY_PAUSE: Duration = Duration::from_secs(1);

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

/// Where the replayer sends its reports: the current connection, if any.
type ReportTo = Arc<Mutex<Option<Sender>>>;

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
        Some(sender) => sender
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
        *report_to.lock() = Some(client.sender()?);
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
                        if client.buffered() < 5 {
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
