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
//!   `IPC`/`CheckpointDone` while a `CHECKPOINT` waits for its checkpoint, `IPC`/`SyncRep`
//!   while a commit waits for synchronous standbys).
//! - `pg_stat_replication` (on a primary, one row per walsender), `pg_stat_wal_receiver`
//!   (on a standby, its walreceiver) and `pg_replication_slots`: PostgreSQL's columns. LSNs
//!   are WAL locations in PostgreSQL's `X/X` form and lags are intervals, both as text.
//! - `information_schema.tables` and `information_schema.columns` (`information_schema.rs`).
//! - PostgreSQL's system catalogs, `pg_class` and the rest (`pg_catalog.rs`).

use std::sync::atomic::Ordering;

use rust_decimal::Decimal;

use crate::engine::Engine;
use crate::storage::{Row, Table, TableDef};
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
    Replication,
    WalReceiver,
    ReplicationSlots,
    /// `information_schema.tables`.
    InfoTables,
    /// `information_schema.columns`.
    InfoColumns,
    /// `information_schema.table_constraints`.
    InfoTableConstraints,
    /// `information_schema.key_column_usage`.
    InfoKeyColumnUsage,
    /// `information_schema.referential_constraints`.
    InfoReferentialConstraints,
    /// `information_schema.views`.
    InfoViews,
    /// `pg_stat_ssl`: which sessions are encrypted, and how.
    Ssl,
    /// A catalog of `pg_catalog` (`pg_catalog.rs`).
    Catalog(super::pg_catalog::PgCatalog),
}

impl SystemView {
    pub fn by_name(name: &str) -> Option<SystemView> {
        match name {
            "pg_stat_wal" => Some(SystemView::StatWal),
            "steadydb_stat_commit_groups" => Some(SystemView::CommitGroups),
            "steadydb_stat_reply_batches" => Some(SystemView::ReplyBatches),
            "pg_stat_activity" => Some(SystemView::Activity),
            "pg_stat_ssl" => Some(SystemView::Ssl),
            "pg_stat_checkpointer" => Some(SystemView::Checkpointer),
            "steadydb_stat_buffers" => Some(SystemView::Buffers),
            "steadydb_stat_stages" => Some(SystemView::Stages),
            "pg_stat_replication" => Some(SystemView::Replication),
            "pg_stat_wal_receiver" => Some(SystemView::WalReceiver),
            "pg_replication_slots" => Some(SystemView::ReplicationSlots),
            _ => super::pg_catalog::PgCatalog::by_name(name).map(SystemView::Catalog),
        }
    }

    /// A view of schema `information_schema`, by name.
    pub fn in_information_schema(name: &str) -> Option<SystemView> {
        match name {
            "tables" => Some(SystemView::InfoTables),
            "columns" => Some(SystemView::InfoColumns),
            "table_constraints" => Some(SystemView::InfoTableConstraints),
            "key_column_usage" => Some(SystemView::InfoKeyColumnUsage),
            "referential_constraints" => Some(SystemView::InfoReferentialConstraints),
            "views" => Some(SystemView::InfoViews),
            _ => None,
        }
    }

    pub fn def(self) -> TableDef {
        if let SystemView::Catalog(c) = self {
            return c.def();
        }
        let info_tables: Vec<(&str, DataType)> = super::information_schema::TABLES_COLUMNS
            .iter()
            .map(|n| (*n, DataType::Text))
            .collect();
        let cols: &[(&str, DataType)] = match self {
            SystemView::Catalog(_) => &[],
            SystemView::InfoTables => &info_tables,
            SystemView::InfoColumns => super::information_schema::COLUMNS_COLUMNS,
            SystemView::InfoTableConstraints => {
                super::information_schema::TABLE_CONSTRAINTS_COLUMNS
            }
            SystemView::InfoKeyColumnUsage => super::information_schema::KEY_COLUMN_USAGE_COLUMNS,
            SystemView::InfoReferentialConstraints => {
                super::information_schema::REFERENTIAL_CONSTRAINTS_COLUMNS
            }
            SystemView::InfoViews => super::information_schema::VIEWS_COLUMNS,
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
            SystemView::Ssl => &[
                ("pid", DataType::Int4),
                ("ssl", DataType::Bool),
                ("version", DataType::Text),
                ("cipher", DataType::Text),
                ("bits", DataType::Int4),
                ("client_dn", DataType::Text),
                ("client_serial", DataType::Numeric(None)),
                ("issuer_dn", DataType::Text),
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
            SystemView::Replication => &[
                ("pid", DataType::Int4),
                ("usesysid", DataType::Int8),
                ("usename", DataType::Text),
                ("application_name", DataType::Text),
                ("client_addr", DataType::Text),
                ("client_hostname", DataType::Text),
                ("client_port", DataType::Int4),
                ("backend_start", DataType::TimestampTz),
                ("backend_xmin", DataType::Text),
                ("state", DataType::Text),
                ("sent_lsn", DataType::Text),
                ("write_lsn", DataType::Text),
                ("flush_lsn", DataType::Text),
                ("replay_lsn", DataType::Text),
                ("write_lag", DataType::Text),
                ("flush_lag", DataType::Text),
                ("replay_lag", DataType::Text),
                ("sync_priority", DataType::Int4),
                ("sync_state", DataType::Text),
                ("reply_time", DataType::TimestampTz),
            ],
            SystemView::WalReceiver => &[
                ("pid", DataType::Int4),
                ("status", DataType::Text),
                ("receive_start_lsn", DataType::Text),
                ("receive_start_tli", DataType::Int4),
                ("written_lsn", DataType::Text),
                ("flushed_lsn", DataType::Text),
                ("received_tli", DataType::Int4),
                ("last_msg_send_time", DataType::TimestampTz),
                ("last_msg_receipt_time", DataType::TimestampTz),
                ("latest_end_lsn", DataType::Text),
                ("latest_end_time", DataType::TimestampTz),
                ("slot_name", DataType::Text),
                ("sender_host", DataType::Text),
                ("sender_port", DataType::Int4),
                ("conninfo", DataType::Text),
            ],
            SystemView::ReplicationSlots => &[
                ("slot_name", DataType::Text),
                ("plugin", DataType::Text),
                ("slot_type", DataType::Text),
                ("datoid", DataType::Int8),
                ("database", DataType::Text),
                ("temporary", DataType::Bool),
                ("active", DataType::Bool),
                ("active_pid", DataType::Int4),
                ("xmin", DataType::Text),
                ("catalog_xmin", DataType::Text),
                ("restart_lsn", DataType::Text),
                ("confirmed_flush_lsn", DataType::Text),
                ("wal_status", DataType::Text),
                ("safe_wal_size", DataType::Int8),
                ("two_phase", DataType::Bool),
            ],
        };
        let name = match self {
            SystemView::StatWal => "pg_stat_wal",
            SystemView::CommitGroups => "steadydb_stat_commit_groups",
            SystemView::ReplyBatches => "steadydb_stat_reply_batches",
            SystemView::Activity => "pg_stat_activity",
            SystemView::Ssl => "pg_stat_ssl",
            SystemView::Checkpointer => "pg_stat_checkpointer",
            SystemView::Buffers => "steadydb_stat_buffers",
            SystemView::Stages => "steadydb_stat_stages",
            SystemView::Replication => "pg_stat_replication",
            SystemView::WalReceiver => "pg_stat_wal_receiver",
            SystemView::ReplicationSlots => "pg_replication_slots",
            SystemView::InfoTables => "tables",
            SystemView::InfoColumns => "columns",
            SystemView::InfoTableConstraints => "table_constraints",
            SystemView::InfoKeyColumnUsage => "key_column_usage",
            SystemView::InfoReferentialConstraints => "referential_constraints",
            SystemView::InfoViews => "views",
            SystemView::Catalog(_) => "",
        };
        TableDef::of_columns(name, cols.iter().copied())
    }

    /// The view's rows; `visible` is what the scanning transaction sees of the catalog.
    /// `viewer`: the roles whose privileges the reader has (None: a superuser), which
    /// decide what pg_stat_activity shows of other roles' sessions.
    pub fn rows(
        self,
        engine: &Engine,
        visible: &CatalogView,
        settings: &dyn Fn(&str) -> Option<String>,
        viewer: Option<&[u32]>,
    ) -> Vec<Row> {
        let i = |v: u64| Value::Int8(v as i64);
        match self {
            SystemView::Catalog(c) => c.rows(engine, visible, settings),
            SystemView::InfoTables => super::information_schema::tables(engine, visible),
            SystemView::InfoColumns => super::information_schema::columns(engine, visible),
            SystemView::InfoTableConstraints => {
                super::information_schema::table_constraints(engine, visible)
            }
            SystemView::InfoKeyColumnUsage => {
                super::information_schema::key_column_usage(engine, visible)
            }
            SystemView::InfoReferentialConstraints => {
                super::information_schema::referential_constraints(engine, visible)
            }
            SystemView::InfoViews => super::information_schema::views(engine, visible),
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
                    // Only a superuser, or a role with the session role's privileges, sees
                    // what another session does (PostgreSQL's HAS_PGSTAT_PERMISSIONS).
                    let permitted = viewer.is_none_or(|roles| {
                        engine
                            .txn
                            .catalog
                            .role(&a.user)
                            .is_some_and(|r| roles.contains(&r.oid))
                    });
                    if !permitted {
                        let mut row = vec![
                            text("postgres"),
                            Value::Int4(slot.pid),
                            text(&a.user),
                            text(&a.application_name),
                        ];
                        row.resize(13, Value::Null);
                        row.push(text("<insufficient privilege>"));
                        row.push(Value::Null);
                        return row.into();
                    }
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
            SystemView::Ssl => engine
                .txn
                .sessions()
                .iter()
                .map(|slot| {
                    let ssl = slot.activity.lock().ssl.clone();
                    let Some(ssl) = ssl else {
                        let mut row = vec![Value::Int4(slot.pid), Value::Bool(false)];
                        row.resize(8, Value::Null);
                        return row.into();
                    };
                    let cert = ssl.client_certificate.as_ref();
                    let text = |f: fn(&crate::auth::tls::ClientCertificate) -> &String| {
                        cert.map_or(Value::Null, |c| Value::Text(f(c).clone()))
                    };
                    // NULL for a serial past numeric's 28 digits here.
                    let serial = cert
                        .and_then(|c| crate::types::parse_numeric(&c.serial).ok())
                        .map_or(Value::Null, Value::Numeric);
                    vec![
                        Value::Int4(slot.pid),
                        Value::Bool(true),
                        Value::Text(ssl.version),
                        Value::Text(ssl.cipher),
                        Value::Int4(ssl.bits),
                        text(|c| &c.subject),
                        serial,
                        text(|c| &c.issuer),
                    ]
                    .into()
                })
                .collect(),
            SystemView::Replication => replication_rows(engine),
            SystemView::WalReceiver => wal_receiver_rows(engine),
            SystemView::ReplicationSlots => slot_rows(engine),
        }
    }
}

/// An interval of `us` microseconds as PostgreSQL prints one under an hour or a day.
fn interval_text(us: i64) -> String {
    let (s, frac) = (us / 1_000_000, us % 1_000_000);
    format!("{:02}:{:02}:{:02}.{frac:06}", s / 3600, s / 60 % 60, s % 60)
}

fn replication_rows(engine: &Engine) -> Vec<Row> {
    let text = |s: &str| Value::Text(s.to_string());
    let loc = |l: crate::repl::location::WalLocation| {
        if l.0 == 0 {
            Value::Null
        } else {
            Value::Text(l.to_string())
        }
    };
    let lag = |v: Option<i64>| v.map_or(Value::Null, |us| Value::Text(interval_text(us)));
    engine
        .repl
        .senders()
        .into_iter()
        .map(|s| {
            vec![
                Value::Int4(s.pid),
                Value::Int8(10),
                text(&s.user),
                text(&s.application_name),
                s.client.map_or(Value::Null, |c| text(&c.ip().to_string())),
                Value::Null,
                Value::Int4(s.client.map_or(-1, |c| i32::from(c.port()))),
                Value::TimestampTz(s.backend_start_us),
                Value::Null,
                text(s.state.name()),
                loc(s.sent),
                loc(s.write),
                loc(s.flush),
                loc(s.apply),
                lag(s.write_lag_us),
                lag(s.flush_lag_us),
                lag(s.apply_lag_us),
                Value::Int4(s.sync_priority as i32),
                text(s.sync_state.name()),
                s.reply_time_us.map_or(Value::Null, Value::TimestampTz),
            ]
            .into()
        })
        .collect()
}

fn wal_receiver_rows(engine: &Engine) -> Vec<Row> {
    let Some(r) = engine.receiver.as_ref().filter(|_| engine.is_standby()) else {
        return Vec::new();
    };
    let text = |s: &str| Value::Text(s.to_string());
    let loc = |a: &std::sync::atomic::AtomicU64| {
        Value::Text(crate::repl::location::WalLocation(a.load(Ordering::Acquire)).to_string())
    };
    let time = |a: &std::sync::atomic::AtomicI64| match a.load(Ordering::Acquire) {
        0 => Value::Null,
        t => Value::TimestampTz(t),
    };
    let c = &r.conninfo;
    vec![vec![
        Value::Int4(std::process::id() as i32),
        text(r.status()),
        loc(&r.receive_start),
        Value::Int4(r.timeline.load(Ordering::Acquire) as i32),
        loc(&r.written),
        loc(&r.flushed),
        Value::Int4(r.timeline.load(Ordering::Acquire) as i32),
        time(&r.last_send_us),
        time(&r.last_receipt_us),
        loc(&r.latest_end),
        time(&r.latest_end_us),
        r.slot.as_deref().map_or(Value::Null, text),
        text(&c.host),
        Value::Int4(i32::from(c.port)),
        text(&c.to_string()),
    ]
    .into()]
}

fn slot_rows(engine: &Engine) -> Vec<Row> {
    let text = |s: &str| Value::Text(s.to_string());
    let slots = engine.repl.slots.lock().list().to_vec();
    slots
        .into_iter()
        .map(|s| {
            vec![
                text(&s.name),
                Value::Null,
                text("physical"),
                Value::Null,
                Value::Null,
                Value::Bool(s.temporary),
                Value::Bool(s.active_pid.is_some()),
                s.active_pid.map_or(Value::Null, Value::Int4),
                Value::Null,
                Value::Null,
                s.restart.map_or(Value::Null, |l| {
                    Value::Text(engine.repl.layout.location(l).to_string())
                }),
                Value::Null,
                s.restart.map_or(Value::Null, |_| text("reserved")),
                Value::Null,
                Value::Bool(false),
            ]
            .into()
        })
        .collect()
}

/// What one transaction sees of the catalog: which tables (not those another
/// transaction created and has not committed, nor those it dropped itself), and which
/// definition of each (the committed one while another transaction's change to it is
/// pending, as PostgreSQL's catalogs show another session's uncommitted DDL).
pub struct CatalogView<'a> {
    sees: Box<dyn Fn(crate::storage::TableId) -> bool + 'a>,
    /// Whether a pending change of the table's definition is this transaction's.
    own_change: Box<dyn Fn(&Table) -> bool + 'a>,
}

impl<'a> CatalogView<'a> {
    pub fn new(
        sees: impl Fn(crate::storage::TableId) -> bool + 'a,
        own_change: impl Fn(&Table) -> bool + 'a,
    ) -> CatalogView<'a> {
        CatalogView {
            sees: Box::new(sees),
            own_change: Box::new(own_change),
        }
    }

    /// Every table whose creation is committed, with its newest definition: what
    /// functions that look a relation up by name or OID read (they have no transaction
    /// at hand).
    pub fn confirmed(engine: &'a crate::engine::Engine) -> CatalogView<'a> {
        CatalogView::new(
            move |id| !engine.txn.catalog.is_unconfirmed(id),
            |_: &Table| true,
        )
    }

    /// Whether the relation with this id is seen.
    pub fn sees_id(&self, id: crate::storage::TableId) -> bool {
        (self.sees)(id)
    }

    /// The definition of `t` this transaction sees.
    pub fn def(&self, t: &Table) -> std::sync::Arc<crate::storage::TableDef> {
        if (self.own_change)(t) {
            t.def()
        } else {
            t.committed_def()
        }
    }
}
