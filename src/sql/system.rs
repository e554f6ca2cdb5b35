//! System views: statistics as tables, computed when scanned.
//!
//! - `pg_stat_wal`: PostgreSQL's columns. `wal_fpi` is always 0: SteadyDB never logs full
//!   page images. Times are milliseconds, always tracked.
//! - `steadydb_stat_commit_groups`: how many commits each WAL flush made durable, and how
//!   long flushes take.
//! - `steadydb_stat_reply_batches`: how many replies of different connections went out
//!   together in one system call (see `wire::reply_batch`).
//! - `pg_stat_checkpointer`: PostgreSQL 17's columns (restart points are always 0: there
//!   are no standbys yet). Times are milliseconds.
//! - `steadydb_stat_buffers`: the buffer pool: its frames, how many hold a page and how
//!   many of those are dirty, and counters of reads, evictions (and the dirty pages they
//!   wrote) and of the frames the clock hand passed over to find them.
//! - `steadydb_stat_stages`: every serial stage (a lock all connections share, a step one
//!   thread does for all of them, the log device): how often it was entered, how long it
//!   was busy, and how long others waited for it (see `crate::stages`).
//! - `pg_stat_activity`: one row per session, with `wait_event` (`Lock`/`transactionid`
//!   while waiting for a row lock, `IO`/`WALSync` while waiting for the log,
//!   `IPC`/`CheckpointDone` while a `CHECKPOINT` waits for its checkpoint).

use std::sync::atomic::Ordering;

use rust_decimal::Decimal;

use crate::engine::Engine;
use crate::storage::{Column, Row, TableDef};
use crate::types::{DataType, Value};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SystemView {
    StatWal,
    CommitGroups,
    ReplyBatches,
    Activity,
    Checkpointer,
    Buffers,
    Stages,
}

impl SystemView {
    pub fn by_name(name: &str) -> Option<SystemView> {
        match name {
            "pg_stat_wal" => Some(SystemView::StatWal),
            "steadydb_stat_commit_groups" => Some(SystemView::CommitGroups),
            "steadydb_stat_reply_batches" => Some(SystemView::ReplyBatches),
            "pg_stat_activity" => Some(SystemView::Activity),
            "pg_stat_checkpointer" => Some(SystemView::Checkpointer),
            "steadydb_stat_buffers" => Some(SystemView::Buffers),
            "steadydb_stat_stages" => Some(SystemView::Stages),
            _ => None,
        }
    }

    pub fn def(self) -> TableDef {
        let cols: &[(&str, DataType)] = match self {
            SystemView::StatWal => &[
                ("wal_records", DataType::Int8),
                ("wal_fpi", DataType::Int8),
                ("wal_bytes", DataType::Numeric(None)),
                ("wal_buffers_full", DataType::Int8),
                ("wal_write", DataType::Int8),
                ("wal_sync", DataType::Int8),
                ("wal_write_time", DataType::Float8),
                ("wal_sync_time", DataType::Float8),
                ("stats_reset", DataType::TimestampTz),
            ],
            SystemView::CommitGroups => &[
                ("flushes", DataType::Int8),
                ("commits", DataType::Int8),
                ("commits_per_flush_mean", DataType::Float8),
                ("commits_per_flush_max", DataType::Int8),
                ("flush_latency_p50_us", DataType::Int8),
                ("flush_latency_p90_us", DataType::Int8),
                ("flush_latency_p99_us", DataType::Int8),
                ("flush_latency_max_us", DataType::Int8),
            ],
            SystemView::ReplyBatches => &[
                ("state", DataType::Text),
                ("batches", DataType::Int8),
                ("replies", DataType::Int8),
                ("replies_per_batch_mean", DataType::Float8),
                ("replies_per_batch_max", DataType::Int8),
                ("finished_by_connection", DataType::Int8),
            ],
            SystemView::Activity => &[
                ("datname", DataType::Text),
                ("pid", DataType::Int4),
                ("usename", DataType::Text),
                ("application_name", DataType::Text),
                ("client_addr", DataType::Text),
                ("client_hostname", DataType::Text),
                ("client_port", DataType::Int4),
                ("backend_start", DataType::TimestampTz),
                ("xact_start", DataType::TimestampTz),
                ("query_start", DataType::TimestampTz),
                ("wait_event_type", DataType::Text),
                ("wait_event", DataType::Text),
                ("state", DataType::Text),
                ("query", DataType::Text),
                ("backend_type", DataType::Text),
            ],
            SystemView::Checkpointer => &[
                ("num_timed", DataType::Int8),
                ("num_requested", DataType::Int8),
                ("restartpoints_timed", DataType::Int8),
                ("restartpoints_req", DataType::Int8),
                ("restartpoints_done", DataType::Int8),
                ("write_time", DataType::Float8),
                ("sync_time", DataType::Float8),
                ("buffers_written", DataType::Int8),
                ("stats_reset", DataType::TimestampTz),
            ],
            SystemView::Buffers => &[
                ("frames", DataType::Int8),
                ("pages_resident", DataType::Int8),
                ("pages_dirty", DataType::Int8),
                ("reads", DataType::Int8),
                ("evictions", DataType::Int8),
                ("evictions_written", DataType::Int8),
                ("pages_cleaned", DataType::Int8),
                ("sweep_steps", DataType::Int8),
            ],
            SystemView::Stages => &[
                ("stage", DataType::Text),
                ("kind", DataType::Text),
                ("partitions", DataType::Int4),
                ("acquisitions", DataType::Int8),
                ("busy_us", DataType::Int8),
                ("waits", DataType::Int8),
                ("wait_us", DataType::Int8),
            ],
        };
        TableDef {
            name: match self {
                SystemView::StatWal => "pg_stat_wal",
                SystemView::CommitGroups => "steadydb_stat_commit_groups",
                SystemView::ReplyBatches => "steadydb_stat_reply_batches",
                SystemView::Activity => "pg_stat_activity",
                SystemView::Checkpointer => "pg_stat_checkpointer",
                SystemView::Buffers => "steadydb_stat_buffers",
                SystemView::Stages => "steadydb_stat_stages",
            }
            .into(),
            columns: cols
                .iter()
                .map(|(n, t)| Column {
                    name: n.to_string(),
                    data_type: *t,
                    not_null: false,
                    default: None,
                })
                .collect(),
            primary_key: Vec::new(),
            pkey_name: None,
            owned_sequences: Vec::new(),
        }
    }

    pub fn rows(self, engine: &Engine) -> Vec<Row> {
        let i = |v: u64| Value::Int8(v as i64);
        match self {
            SystemView::StatWal => {
                let Some(wal) = &engine.txn.wal else {
                    return vec![vec![
                        i(0),
                        i(0),
                        Value::Numeric(Decimal::ZERO),
                        i(0),
                        i(0),
                        i(0),
                        Value::Float8(0.0),
                        Value::Float8(0.0),
                        Value::Null,
                    ]
                    .into()];
                };
                let s = &wal.stats;
                let l = |a: &std::sync::atomic::AtomicU64| a.load(Ordering::Relaxed);
                vec![vec![
                    i(l(&s.records)),
                    i(0),
                    Value::Numeric(Decimal::from(l(&s.bytes))),
                    i(l(&s.buffers_full)),
                    i(l(&s.writes)),
                    i(l(&s.syncs)),
                    Value::Float8(l(&s.write_time_us) as f64 / 1000.0),
                    Value::Float8(l(&s.sync_time_us) as f64 / 1000.0),
                    Value::TimestampTz(l(&s.reset_at_us) as i64),
                ]
                .into()]
            }
            SystemView::CommitGroups => {
                let (flushes, commits, max, lat) = match &engine.txn.wal {
                    Some(wal) => {
                        let s = &wal.stats;
                        (
                            s.flushes.load(Ordering::Relaxed),
                            s.flushed_commits.load(Ordering::Relaxed),
                            s.max_commits_per_flush.load(Ordering::Relaxed),
                            Some(s.flush_latency()),
                        )
                    }
                    None => (0, 0, 0, None),
                };
                let mean = if flushes == 0 {
                    0.0
                } else {
                    commits as f64 / flushes as f64
                };
                let p = |f: fn(&crate::wal::FlushLatency) -> u64| {
                    lat.as_ref().map(|l| i(f(l))).unwrap_or(Value::Null)
                };
                vec![vec![
                    i(flushes),
                    i(commits),
                    Value::Float8(mean),
                    i(max),
                    p(|l| l.p50),
                    p(|l| l.p90),
                    p(|l| l.p99),
                    p(|l| l.max),
                ]
                .into()]
            }
            SystemView::ReplyBatches => {
                let s = crate::wire::reply_batch::stats();
                let mean = if s.batches == 0 {
                    0.0
                } else {
                    s.replies as f64 / s.batches as f64
                };
                vec![vec![
                    Value::Text(s.state.into()),
                    i(s.batches),
                    i(s.replies),
                    Value::Float8(mean),
                    i(s.max_replies_per_batch),
                    i(s.finished_by_connection),
                ]
                .into()]
            }
            SystemView::Checkpointer => {
                let s = engine
                    .checkpoints
                    .as_ref()
                    .map(|c| c.stats())
                    .unwrap_or_default();
                vec![vec![
                    i(s.num_timed),
                    i(s.num_requested),
                    i(0),
                    i(0),
                    i(0),
                    Value::Float8(s.write_time_ms),
                    Value::Float8(s.sync_time_ms),
                    i(s.buffers_written),
                    match engine.checkpoints {
                        Some(_) => Value::TimestampTz(s.stats_reset_us),
                        None => Value::Null,
                    },
                ]
                .into()]
            }
            SystemView::Buffers => {
                let pool = engine.txn.catalog.pool();
                let usage = pool.usage();
                let s = pool.stats();
                vec![vec![
                    i(usage.frames),
                    i(usage.resident),
                    i(usage.dirty),
                    i(s.reads),
                    i(s.evictions),
                    i(s.evictions_written),
                    i(s.pages_cleaned),
                    i(s.sweep_steps),
                ]
                .into()]
            }
            SystemView::Stages => crate::stages::snapshot()
                .into_iter()
                .map(|(stage, c)| {
                    vec![
                        Value::Text(stage.name().into()),
                        Value::Text(stage.kind().into()),
                        Value::Int4(stage.partitions() as i32),
                        i(c.acquisitions),
                        i(c.busy_ns / 1000),
                        i(c.waits),
                        i(c.wait_ns / 1000),
                    ]
                    .into()
                })
                .collect(),
            SystemView::Activity => engine
                .txn
                .sessions()
                .iter()
                .map(|slot| {
                    let a = slot.activity.lock().clone();
                    let wait = *slot.wait_event.lock();
                    let ts = |v: Option<i64>| v.map(Value::TimestampTz).unwrap_or(Value::Null);
                    let text = |s: &str| Value::Text(s.to_string());
                    vec![
                        text("postgres"),
                        Value::Int4(slot.pid),
                        text(&a.user),
                        text(&a.application_name),
                        a.client.map_or(Value::Null, |c| text(&c.ip().to_string())),
                        Value::Null,
                        Value::Int4(a.client.map_or(-1, |c| i32::from(c.port()))),
                        Value::TimestampTz(a.backend_start_us),
                        ts(a.xact_start_us),
                        ts(a.query_start_us),
                        wait.map(|w| text(w.0)).unwrap_or(Value::Null),
                        wait.map(|w| text(w.1)).unwrap_or(Value::Null),
                        text(a.state),
                        text(&a.query),
                        text("client backend"),
                    ]
                    .into()
                })
                .collect(),
        }
    }
}
