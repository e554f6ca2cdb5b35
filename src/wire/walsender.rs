//! A replication connection (`replication=true` in the startup packet): PostgreSQL's
//! replication commands, and streaming the log to a standby or to `pg_receivewal`.
//!
//! Commands: `IDENTIFY_SYSTEM`, `SHOW name`, `TIMELINE_HISTORY tli`,
//! `CREATE_REPLICATION_SLOT name [TEMPORARY] PHYSICAL [RESERVE_WAL | (RESERVE_WAL)]`,
//! `DROP_REPLICATION_SLOT name [WAIT]`, `READ_REPLICATION_SLOT name`,
//! `START_REPLICATION [SLOT name] [PHYSICAL] X/X [TIMELINE tli]`, and
//! `STEADYDB_BASE_BACKUP` (the copy `steadydb basebackup` makes a standby from).
//!
//! Streaming is CopyBoth: XLogData (`w`: start, end of what the primary has flushed, send
//! time, the bytes) and keepalives (`k`) out; standby status updates (`r`: written,
//! flushed and applied locations) in. Only flushed log is sent, so a standby never holds a
//! record the primary could lose in a crash. Output is always written out before the task
//! waits, so waiting for the client and for new log can race without tearing a message.

use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;

use super::backend::Severity;
use super::connection::{Io, Next, Protocol, Transport};
use super::startup::StartupParams;
use crate::engine::Engine;
use crate::error::{Error, Result, SqlState};
use crate::repl::location::WalLocation;
use crate::repl::primary::SenderStart;
use crate::repl::read::LogFiles;
use crate::sql::{Field, TxnStatus};
use crate::types::{DataType, Value};
use crate::wal::Lsn;

/// The most log bytes in one XLogData message.
const MAX_SEND_BYTES: usize = 128 * 1024;

/// Serve a replication connection until it ends.
pub async fn serve<S: Transport>(
    io: &mut Io<S>,
    state: &mut Protocol,
    engine: &Arc<Engine>,
    params: &StartupParams,
    client: Option<std::net::SocketAddr>,
) {
    loop {
        let (tag, body) = match io.read_message().await {
            Next::Message(tag, body) => (tag, body),
            Next::Eof => return,
            Next::Fatal(e) => return io.fatal(&e).await,
        };
        match tag {
            b'Q' => {}
            b'X' => return,
            _ => {
                let e = Error::new(
                    SqlState::PROTOCOL_VIOLATION,
                    format!("invalid message type \"{}\" in a WAL sender", tag as char),
                );
                return io.fatal(&e).await;
            }
        }
        let sql = match query_text(&body) {
            Ok(sql) => sql,
            Err(e) => return io.fatal(&e).await,
        };
        let words = match tokens(&sql) {
            Ok(w) => w,
            Err(e) => {
                io.output.error(&e, Severity::Error);
                ready(io).await;
                continue;
            }
        };
        let command = words
            .first()
            .map(|w| w.to_ascii_uppercase())
            .unwrap_or_default();
        if command == "SHOW" {
            state.simple_query(io, &sql).await;
            continue;
        }
        let result = match command.as_str() {
            "" => {
                io.output.empty_query();
                Ok(Done::Ready)
            }
            "IDENTIFY_SYSTEM" => identify_system(io, engine),
            "TIMELINE_HISTORY" => timeline_history(io, engine, &words[1..]),
            "CREATE_REPLICATION_SLOT" => create_slot(io, engine, state, &words[1..]),
            "DROP_REPLICATION_SLOT" => drop_slot(io, engine, state, &words[1..]),
            "READ_REPLICATION_SLOT" => read_slot(io, engine, &words[1..]),
            "START_REPLICATION" => {
                start_replication(io, engine, state, params, client, &words[1..]).await
            }
            "STEADYDB_BASE_BACKUP" => super::basebackup::send(io, engine).await,
            "BASE_BACKUP" => Err(Error::unsupported(
                "BASE_BACKUP is not supported: SteadyDB's pages are not PostgreSQL's",
            )
            .with_hint("Make a standby with \"steadydb basebackup\".")),
            _ => Err(Error::new(
                SqlState::SYNTAX_ERROR,
                format!("syntax error at or near \"{}\"", words[0]),
            )
            .with_hint("A physical replication connection runs replication commands only.")),
        };
        match result {
            Ok(Done::Ready) => ready(io).await,
            Ok(Done::Close) => return,
            Err(e) => {
                io.output.error(&e, Severity::Error);
                ready(io).await;
            }
        }
        if io.is_broken() {
            return;
        }
    }
}

/// Streaming needs a primary whose log carries every change.
pub fn check_can_stream(engine: &Engine) -> Result<()> {
    if engine.is_standby() {
        return Err(Error::unsupported(
            "cascading replication is not supported: stream from the primary",
        ));
    }
    if engine.settings.is("wal_level", "minimal") {
        return Err(Error::new(
            SqlState::OBJECT_NOT_IN_PREREQUISITE_STATE,
            "WAL streaming requires wal_level \"replica\"",
        )
        .with_hint("Set wal_level = replica and restart: with minimal, bulk loads write pages a standby never receives."));
    }
    Ok(())
}

/// What happens after a command.
pub enum Done {
    Ready,
    Close,
}

async fn ready<S: Transport>(io: &mut Io<S>) {
    io.output.ready_for_query(TxnStatus::Idle);
    io.flush().await;
}

fn query_text(body: &Bytes) -> Result<String> {
    let text = body.strip_suffix(&[0]).unwrap_or(body);
    String::from_utf8(text.to_vec())
        .map_err(|_| Error::new(SqlState::PROTOCOL_VIOLATION, "invalid UTF-8 in a query"))
}

/// Split a replication command into words: identifiers (double quotes keep case and may
/// hold anything), numbers, locations, and `(`, `)`, `,` each as a word of its own.
fn tokens(sql: &str) -> Result<Vec<String>> {
    let mut out = Vec::new();
    let mut chars = sql.trim().trim_end_matches(';').chars().peekable();
    while let Some(&c) = chars.peek() {
        if c.is_whitespace() {
            chars.next();
        } else if c == '(' || c == ')' || c == ',' {
            chars.next();
            out.push(c.to_string());
        } else if c == '"' {
            chars.next();
            let mut w = String::new();
            loop {
                match chars.next() {
                    Some('"') if chars.peek() == Some(&'"') => {
                        chars.next();
                        w.push('"');
                    }
                    Some('"') => break,
                    Some(c) => w.push(c),
                    None => {
                        return Err(Error::new(
                            SqlState::SYNTAX_ERROR,
                            "unterminated quoted identifier",
                        ))
                    }
                }
            }
            out.push(w);
        } else if c == '\'' {
            chars.next();
            let mut w = String::new();
            for c in chars.by_ref() {
                if c == '\'' {
                    break;
                }
                w.push(c);
            }
            out.push(w);
        } else {
            let mut w = String::new();
            while let Some(&c) = chars.peek() {
                if c.is_whitespace() || c == '(' || c == ')' || c == ',' {
                    break;
                }
                w.push(c);
                chars.next();
            }
            out.push(w);
        }
        if out.len() > 64 {
            return Err(Error::new(
                SqlState::SYNTAX_ERROR,
                "replication command too long",
            ));
        }
    }
    Ok(out)
}

fn text_field(name: &str) -> Field {
    field(name, DataType::Text)
}

fn field(name: &str, data_type: DataType) -> Field {
    Field {
        name: name.into(),
        data_type,
        table_oid: 0,
        column_id: 0,
    }
}

fn one_row<S: Transport>(io: &mut Io<S>, fields: &[Field], row: &[Value], tag: &str) -> Result<()> {
    io.output.row_description(fields, &[])?;
    io.output.data_row(row, &[])?;
    io.output.command_complete(tag);
    Ok(())
}

fn identify_system<S: Transport>(io: &mut Io<S>, engine: &Engine) -> Result<Done> {
    let repl = &engine.repl;
    let flushed = engine
        .txn
        .wal
        .as_ref()
        .map_or(Lsn::ZERO, |w| w.flushed_lsn());
    one_row(
        io,
        &[
            text_field("systemid"),
            field("timeline", DataType::Int4),
            text_field("xlogpos"),
            text_field("dbname"),
        ],
        &[
            Value::Text(repl.system_id.to_string()),
            Value::Int4(repl.timeline() as i32),
            Value::Text(repl.layout.location(flushed).to_string()),
            Value::Null,
        ],
        "IDENTIFY_SYSTEM",
    )?;
    Ok(Done::Ready)
}

fn pid_of(state: &Protocol) -> i32 {
    state.session.backend_key().0
}

fn bad_syntax(near: Option<&String>) -> Error {
    match near {
        Some(w) => Error::new(
            SqlState::SYNTAX_ERROR,
            format!("syntax error at or near \"{w}\""),
        ),
        None => Error::new(SqlState::SYNTAX_ERROR, "syntax error at end of input"),
    }
}

fn create_slot<S: Transport>(
    io: &mut Io<S>,
    engine: &Engine,
    state: &Protocol,
    words: &[String],
) -> Result<Done> {
    let name = words.first().ok_or_else(|| bad_syntax(None))?;
    let mut rest = &words[1..];
    let temporary = rest
        .first()
        .is_some_and(|w| w.eq_ignore_ascii_case("TEMPORARY"));
    if temporary {
        rest = &rest[1..];
    }
    match rest.first() {
        Some(w) if w.eq_ignore_ascii_case("PHYSICAL") => rest = &rest[1..],
        Some(w) if w.eq_ignore_ascii_case("LOGICAL") => {
            return Err(Error::unsupported(
                "logical replication slots are not supported",
            ))
        }
        other => return Err(bad_syntax(other)),
    }
    let mut reserve = false;
    for w in rest {
        match w.to_ascii_uppercase().as_str() {
            "(" | ")" | "," | "TRUE" | "ON" | "1" => {}
            "RESERVE_WAL" => reserve = true,
            "FALSE" | "OFF" | "0" => reserve = false,
            _ => return Err(bad_syntax(Some(w))),
        }
    }
    let flushed = engine
        .txn
        .wal
        .as_ref()
        .map_or(Lsn::ZERO, |w| w.flushed_lsn());
    let at = reserve.then_some(flushed);
    engine
        .repl
        .slots
        .lock()
        .create(name, temporary, at, pid_of(state))?;
    let point = at.map(|l| Value::Text(engine.repl.layout.location(l).to_string()));
    one_row(
        io,
        &[
            text_field("slot_name"),
            text_field("consistent_point"),
            text_field("snapshot_name"),
            text_field("output_plugin"),
        ],
        &[
            Value::Text(name.clone()),
            point.unwrap_or(Value::Null),
            Value::Null,
            Value::Null,
        ],
        "CREATE_REPLICATION_SLOT",
    )?;
    Ok(Done::Ready)
}

fn drop_slot<S: Transport>(
    io: &mut Io<S>,
    engine: &Engine,
    state: &Protocol,
    words: &[String],
) -> Result<Done> {
    let name = words.first().ok_or_else(|| bad_syntax(None))?;
    engine.repl.slots.lock().drop_slot(name, pid_of(state))?;
    io.output.command_complete("DROP_REPLICATION_SLOT");
    Ok(Done::Ready)
}

fn read_slot<S: Transport>(io: &mut Io<S>, engine: &Engine, words: &[String]) -> Result<Done> {
    let name = words.first().ok_or_else(|| bad_syntax(None))?;
    let slot = engine.repl.slots.lock().get(name).cloned();
    let row = match slot {
        // PostgreSQL answers a row of nulls for a slot that does not exist.
        None => vec![Value::Null, Value::Null, Value::Null],
        Some(s) => vec![
            Value::Text("physical".into()),
            s.restart.map_or(Value::Null, |l| {
                Value::Text(engine.repl.layout.location(l).to_string())
            }),
            s.restart
                .map_or(Value::Null, |_| Value::Int8(engine.repl.timeline() as i64)),
        ],
    };
    one_row(
        io,
        &[
            text_field("slot_type"),
            text_field("restart_lsn"),
            field("restart_tli", DataType::Int8),
        ],
        &row,
        "READ_REPLICATION_SLOT",
    )?;
    Ok(Done::Ready)
}

/// `START_REPLICATION [SLOT name] [PHYSICAL] X/X [TIMELINE tli]`, parsed.
struct StartCommand {
    slot: Option<String>,
    start: WalLocation,
    timeline: Option<u32>,
}

fn parse_start(words: &[String]) -> Result<StartCommand> {
    let mut i = 0;
    let mut slot = None;
    if words.get(i).is_some_and(|w| w.eq_ignore_ascii_case("SLOT")) {
        slot = Some(words.get(i + 1).ok_or_else(|| bad_syntax(None))?.clone());
        i += 2;
    }
    match words.get(i) {
        Some(w) if w.eq_ignore_ascii_case("PHYSICAL") => i += 1,
        Some(w) if w.eq_ignore_ascii_case("LOGICAL") => {
            return Err(Error::unsupported("logical replication is not supported"))
        }
        _ => {}
    }
    let start = words
        .get(i)
        .and_then(|w| WalLocation::parse(w))
        .ok_or_else(|| bad_syntax(words.get(i)))?;
    i += 1;
    let mut timeline = None;
    if words
        .get(i)
        .is_some_and(|w| w.eq_ignore_ascii_case("TIMELINE"))
    {
        timeline = Some(
            words
                .get(i + 1)
                .and_then(|w| w.parse::<u32>().ok())
                .ok_or_else(|| bad_syntax(words.get(i + 1)))?,
        );
        i += 2;
    }
    if i != words.len() {
        return Err(bad_syntax(words.get(i)));
    }
    Ok(StartCommand {
        slot,
        start,
        timeline,
    })
}

async fn start_replication<S: Transport>(
    io: &mut Io<S>,
    engine: &Arc<Engine>,
    state: &Protocol,
    params: &StartupParams,
    client: Option<std::net::SocketAddr>,
    words: &[String],
) -> Result<Done> {
    let cmd = parse_start(words)?;
    check_can_stream(engine)?;
    let repl = &engine.repl;
    let wal = engine
        .txn
        .wal
        .clone()
        .ok_or_else(|| Error::unsupported("this server has no log to stream"))?;
    let flushed = repl.layout.location(wal.flushed_lsn());
    check_timeline(engine, cmd.timeline, cmd.start)?;
    if cmd.start > flushed {
        return Err(Error::new(
            SqlState::OBJECT_NOT_IN_PREREQUISITE_STATE,
            format!(
                "requested starting point {} is ahead of the WAL flush position of this server {}",
                cmd.start, flushed
            ),
        ));
    }
    let guard = repl.register(SenderStart {
        pid: pid_of(state),
        user: params.user.clone(),
        application_name: params.application_name.clone(),
        client,
        slot: cmd.slot.clone(),
        start: cmd.start,
    })?;
    tracing::info!(
        application_name = %params.application_name,
        "standby starts streaming at {} on timeline {}",
        cmd.start,
        repl.timeline()
    );
    io.output.copy_both_response();
    io.flush().await;
    let mut files = LogFiles::new(wal.dir().to_path_buf(), repl.layout);
    let mut sent = cmd.start;
    let mut last_reply = Instant::now();
    let mut asked_for_reply = false;
    let timeout_ms = engine.settings.get_int("wal_sender_timeout").max(0) as u64;
    loop {
        let flushed_lsn = wal.flushed_lsn();
        let end = repl.layout.location(flushed_lsn);
        while sent < end {
            let data = files.read(sent, end, MAX_SEND_BYTES)?;
            let mut msg = Vec::with_capacity(25 + data.len());
            msg.push(b'w');
            msg.extend_from_slice(&sent.0.to_be_bytes());
            msg.extend_from_slice(&end.0.to_be_bytes());
            msg.extend_from_slice(&crate::types::now_us().to_be_bytes());
            msg.extend_from_slice(&data);
            io.output.raw(b'd', &msg);
            sent = WalLocation(sent.0 + data.len() as u64);
            io.flush_if_full().await;
        }
        repl.sent(guard.id, sent, true);
        io.flush().await;
        if io.is_broken() {
            return Ok(Done::Close);
        }
        let keepalive_after = if timeout_ms == 0 {
            Duration::from_secs(10)
        } else {
            Duration::from_millis(timeout_ms / 2).max(Duration::from_millis(100))
        };
        tokio::select! {
            next = io.read_message() => match next {
                Next::Message(b'd', body) => {
                    last_reply = Instant::now();
                    asked_for_reply = false;
                    if let Some((write, flush, apply, reply_requested)) = status_update(&body) {
                        repl.report(guard.id, write, flush, apply);
                        if reply_requested {
                            keepalive(io, end, false);
                        }
                    }
                }
                Next::Message(b'c', _) => {
                    io.output.copy_done();
                    io.output.command_complete("START_STREAMING");
                    return Ok(Done::Ready);
                }
                Next::Message(b'X', _) | Next::Eof => return Ok(Done::Close),
                Next::Message(tag, _) => {
                    let e = Error::new(
                        SqlState::PROTOCOL_VIOLATION,
                        format!("unexpected message type \"{}\" while streaming", tag as char),
                    );
                    io.fatal(&e).await;
                    return Ok(Done::Close);
                }
                Next::Fatal(e) => {
                    io.fatal(&e).await;
                    return Ok(Done::Close);
                }
            },
            _ = wal.wait_flushed_async(Lsn(flushed_lsn.0 + 1)) => {}
            _ = tokio::time::sleep(keepalive_after) => {
                if timeout_ms > 0 && last_reply.elapsed() >= Duration::from_millis(timeout_ms) {
                    tracing::warn!(
                        application_name = %params.application_name,
                        "terminating walsender process due to replication timeout"
                    );
                    return Ok(Done::Close);
                }
                keepalive(io, end, !asked_for_reply);
                asked_for_reply = true;
            }
        }
    }
}

/// A requested timeline: the current one, or an older one this server's log continues
/// (the request starts at or before where that timeline ended). A newer one means a
/// standby was promoted elsewhere: this server is no longer the primary, and fences
/// itself off (it refuses writes from now on, across restarts).
fn check_timeline(engine: &Engine, requested: Option<u32>, start: WalLocation) -> Result<()> {
    use crate::repl::machine::{stream_request, StreamVerdict};
    let repl = &engine.repl;
    let Some(tli) = requested else {
        return Ok(());
    };
    let id = repl.identity();
    match stream_request(id.timeline, &id.history, tli, start) {
        StreamVerdict::Stream => Ok(()),
        StreamVerdict::Fence(tli) => {
            if repl.fenced_by().is_none_or(|f| f < tli) {
                repl.update_identity(|id| id.fenced_by = Some(tli))?;
                tracing::error!(
                    "a standby streams on timeline {tli}, newer than this server's timeline {}: another server was promoted; this one refuses writes from now on",
                    id.timeline
                );
            }
            Err(Error::new(
                SqlState::OBJECT_NOT_IN_PREREQUISITE_STATE,
                format!(
                    "requested timeline {tli} is newer than this server's timeline {}",
                    id.timeline
                ),
            )
            .with_detail("A standby was promoted: this server is no longer the primary and refuses writes."))
        }
        StreamVerdict::NotInHistory(Some(end)) => Err(Error::new(
            SqlState::OBJECT_NOT_IN_PREREQUISITE_STATE,
            format!("requested starting point {start} on timeline {tli} is not in this server's history"),
        )
        .with_detail(format!(
            "This server's history forked from requested timeline {tli} at {end}."
        ))),
        StreamVerdict::NotInHistory(None) => Err(Error::new(
            SqlState::OBJECT_NOT_IN_PREREQUISITE_STATE,
            format!("requested timeline {tli} is not in this server's history"),
        )),
    }
}

/// `TIMELINE_HISTORY tli`: the history of timelines that ended before `tli`, as
/// PostgreSQL's `.history` file content.
fn timeline_history<S: Transport>(
    io: &mut Io<S>,
    engine: &Engine,
    words: &[String],
) -> Result<Done> {
    let tli: u32 = words
        .first()
        .and_then(|w| w.parse().ok())
        .ok_or_else(|| bad_syntax(words.first()))?;
    let id = engine.repl.identity();
    if tli < 2 || tli > id.timeline {
        return Err(Error::new(
            SqlState::UNDEFINED_FILE,
            format!("could not open file \"pg_wal/{tli:08X}.history\": No such file or directory"),
        ));
    }
    let lines: String = id
        .history
        .iter()
        .filter(|(t, _)| *t < tli)
        .map(|(t, l)| format!("{t}\t{l}\tpromoted\n"))
        .collect();
    one_row(
        io,
        &[text_field("filename"), field("content", DataType::Text)],
        &[
            Value::Text(format!("{tli:08X}.history")),
            Value::Text(lines),
        ],
        "TIMELINE_HISTORY",
    )?;
    Ok(Done::Ready)
}

fn keepalive<S: Transport>(io: &mut Io<S>, end: WalLocation, reply_requested: bool) {
    let mut msg = Vec::with_capacity(18);
    msg.push(b'k');
    msg.extend_from_slice(&end.0.to_be_bytes());
    msg.extend_from_slice(&crate::types::now_us().to_be_bytes());
    msg.push(u8::from(reply_requested));
    io.output.raw(b'd', &msg);
}

/// A standby status update (`r`): written, flushed and applied locations, and whether
/// the standby asks for a reply. Other CopyData (hot standby feedback) is ignored.
fn status_update(body: &[u8]) -> Option<(WalLocation, WalLocation, WalLocation, bool)> {
    if body.first() != Some(&b'r') || body.len() < 34 {
        return None;
    }
    let at = |i: usize| -> Option<WalLocation> {
        Some(WalLocation(u64::from_be_bytes(
            body.get(i..i + 8)?.try_into().ok()?,
        )))
    };
    Some((at(1)?, at(9)?, at(17)?, body[33] != 0))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn commands_split_into_words() {
        let w = tokens("CREATE_REPLICATION_SLOT \"s1\" PHYSICAL (RESERVE_WAL);").unwrap();
        assert_eq!(
            w,
            [
                "CREATE_REPLICATION_SLOT",
                "s1",
                "PHYSICAL",
                "(",
                "RESERVE_WAL",
                ")"
            ]
        );
        let s = parse_start(&tokens("SLOT \"s\" 0/1000000 TIMELINE 1").unwrap()).unwrap();
        assert_eq!(
            (s.slot.as_deref(), s.start, s.timeline),
            (Some("s"), WalLocation(0x100_0000), Some(1))
        );
        let s = parse_start(&tokens("PHYSICAL 1/0").unwrap()).unwrap();
        assert_eq!(s.start, WalLocation(1 << 32));
        assert!(parse_start(&tokens("0/0 extra").unwrap()).is_err());
    }

    #[test]
    fn a_status_update_reads_three_locations() {
        let mut m = vec![b'r'];
        for v in [3u64, 2, 1, 0] {
            m.extend_from_slice(&v.to_be_bytes());
        }
        m.push(1);
        assert_eq!(
            status_update(&m),
            Some((WalLocation(3), WalLocation(2), WalLocation(1), true))
        );
        assert_eq!(status_update(b"h"), None);
    }
}
