//! A client session: transaction state, prepared statements' plans, and execution.

use std::sync::atomic::Ordering;
use std::sync::Arc;

use parking_lot::Mutex;
use rustc_hash::{FxHashMap, FxHashSet};

use super::copy::{CopyParser, Field as CopyField};
use super::copy_out::CopyEncoder;
use super::executor::{self, Executor, Stop};
use super::expr::{now_us, EvalContext, Expr};
use super::foreign_keys::{self, ConstraintModes, PendingCheck};
use super::parser::{self, CopyFormat, Statement};
use super::plan::{InsertSource, OnConflict, Plan, TxnStatement};
use super::planner;
use crate::constants::{PLAN_CACHE_ENTRIES, PLAN_CACHE_MAX_QUERY_BYTES};
use crate::engine::Engine;
use crate::error::{Error, Result, SqlState};
use crate::settings;
use crate::storage::write_gate::Closed;
use crate::storage::{BulkLoad, IndexDef, Table, TableDef, TableId};
use crate::txn::ddl::{self, IndexChange, KeyConflict};
use crate::txn::increments::check_row;
use crate::txn::records;
use crate::txn::{close_gate_for_rebuild, Committing, Isolation, SessionSlot, Transaction, Want};
use crate::types::{self, DataType, Value};
use crate::wal::Lsn;
use crate::wal::{RecordKind, SyncLevel};

mod roles;
mod txn_control;

use txn_control::Savepoint;

/// A statement's plan, result fields and parameter types.
type Planned = (Arc<Plan>, Vec<Field>, Vec<DataType>);

/// One column of a result set, as RowDescription describes it.
#[derive(Clone, Debug, PartialEq)]
pub struct Field {
    pub name: String,
    pub data_type: DataType,
    /// OID of the table the column comes from, or 0.
    pub table_oid: u32,
    /// Attribute number in that table, or 0.
    pub column_id: i16,
}

/// The transaction status byte of ReadyForQuery.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TxnStatus {
    /// 'I': not in a transaction block.
    Idle,
    /// 'T': in a transaction block.
    InBlock,
    /// 'E': in a failed transaction block; commands are refused until ROLLBACK.
    Failed,
}

struct CachedPlan {
    catalog_version: u64,
    plan: Arc<Plan>,
    fields: Vec<Field>,
    param_types: Vec<DataType>,
    /// What the user must be allowed, checked at each execution.
    privileges: Arc<Vec<planner::Required>>,
}

/// A parsed statement shape and its plan, shared by every statement of that shape.
struct Shape {
    stmt: Statement,
    /// The statement's text (with `$n` for lifted literals), for pg_stat_activity.
    text: String,
    declared: Vec<DataType>,
    /// Whether `fields`/`param_types` were promised to the client (extended protocol).
    described: bool,
    plan: Mutex<Option<CachedPlan>>,
}

/// A prepared statement kept under its name, with the memory it holds (what its parse
/// and plan left allocated, and at least its text), which the session's limit counts.
struct NamedStatement {
    prepared: Arc<Prepared>,
    held_bytes: usize,
}

/// A parsed (and, for the extended protocol, planned) statement. Reusable with any
/// parameters; re-planned transparently when the catalog changes under it.
pub struct Prepared {
    /// Types of `$1..$n`, resolved from the client's OIDs or inferred from context.
    pub param_types: Vec<DataType>,
    /// Columns the statement returns (empty when it returns no rows).
    pub fields: Vec<Field>,
    shape: Arc<Shape>,
    /// Literals lifted out of a simple-protocol statement, bound as its parameters.
    literals: Vec<Value>,
}

/// What executing a statement produced.
pub enum Outcome {
    /// Rows (SELECT, or DML with RETURNING) and what the command tag says of them.
    Rows {
        fields: Vec<Field>,
        rows: Vec<Vec<Value>>,
        tag: RowsTag,
    },
    /// A command without rows and its tag, e.g. `INSERT 0 1`, `BEGIN`.
    Command { tag: String },
    /// The query string was empty.
    Empty,
    /// COPY ... FROM STDIN: the wire layer sends CopyInResponse and feeds CopyData to
    /// [`Session::copy_data`], then calls [`Session::copy_done`] or [`Session::copy_fail`].
    CopyIn(CopyIn),
    /// COPY ... TO STDOUT: the wire layer sends CopyOutResponse and what
    /// [`Session::copy_out_next`] returns.
    CopyOut(CopyOut),
    /// Only for a caller that streams results (see [`Session::stream_results`]): a
    /// SELECT's rows, more than one batch of them, to be sent as
    /// [`Session::row_stream_next`] reads them; the tag is `SELECT n` of the rows sent.
    RowStream {
        fields: Vec<Field>,
        stream: RowStream,
    },
    /// Only for a caller that defers commits (see [`Session::defer_commits`]): the
    /// statement met a row lock before it changed anything and stopped, having done
    /// nothing. Await [`Session::wait_for_lock`], then run the statement again.
    WaitForLock,
}

/// The CommandComplete tag of a statement that returns rows.
#[derive(Clone, Debug, PartialEq)]
pub enum RowsTag {
    /// `SELECT n`, n the rows sent: an Execute that fetches part of a portal reports the
    /// rows it sent, as in PostgreSQL.
    Select,
    /// A tag that does not depend on the rows sent (`INSERT 0 5` with RETURNING, `SHOW`).
    Fixed(String),
}

impl RowsTag {
    /// The tag, once `sent` rows have been sent.
    pub fn complete(&self, sent: usize) -> String {
        match self {
            RowsTag::Select => format!("SELECT {sent}"),
            RowsTag::Fixed(tag) => tag.clone(),
        }
    }
}

/// The state of a COPY FROM STDIN in progress.
pub struct CopyIn {
    /// Number of columns per row (for CopyInResponse).
    pub columns: usize,
    /// true for binary COPY (not supported yet), false for text/CSV.
    pub binary: bool,
    plan: Arc<Plan>,
    parser: CopyParser,
    snapshot: Lsn,
    rows: u64,
    /// Scratch space for one row's encoding, kept across CopyData messages.
    image: Vec<u8>,
    /// Foreign key checks its rows queued, run at CopyDone (the end of the statement),
    /// and how many of them failed when last settled (`Executor::fk_unsettled`).
    fk_pending: Vec<PendingCheck>,
    fk_unsettled: usize,
}

/// The state of a COPY TO STDOUT in progress: the wire layer sends CopyOutResponse, then
/// the chunks [`Session::copy_out_next`] returns, each as CopyData, then CopyDone and the
/// command tag [`CopyOut::tag`].
pub struct CopyOut {
    /// Number of columns per row (for CopyOutResponse).
    pub columns: usize,
    pub binary: bool,
    plan: Arc<Plan>,
    snapshot: Lsn,
    encoder: CopyEncoder,
    /// A query's rows still to send.
    pending: std::vec::IntoIter<Vec<Value>>,
    /// A table streamed by key: the key of the last row sent.
    after: Option<crate::storage::Key>,
    stage: CopyOutStage,
    rows: u64,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum CopyOutStage {
    Start,
    Rows,
    Done,
}

impl CopyOut {
    /// The CommandComplete tag, once every chunk was sent.
    pub fn tag(&self) -> String {
        format!("COPY {}", self.rows)
    }
}

/// The settings reported with ParameterStatus at the start and whenever they change.
const REPORTED_SETTINGS: [&str; 9] = [
    "application_name",
    "client_encoding",
    "DateStyle",
    "default_transaction_read_only",
    "IntervalStyle",
    "is_superuser",
    "session_authorization",
    "standard_conforming_strings",
    "TimeZone",
];

/// Rows per batch of a table streamed by COPY TO, and the bytes a chunk collects before
/// it is sent.
const COPY_OUT_BATCH_ROWS: usize = 1024;
const COPY_OUT_CHUNK_BYTES: usize = 64 * 1024;

/// Rows per batch of a SELECT's result read from its table by key.
const ROW_STREAM_BATCH_ROWS: usize = 1024;

/// A result without ORDER BY is held in memory up to this many times `work_mem` before
/// it goes to disk (64 MB at the default 4 MB).
const UNSORTED_RESULT_WORK_MEMS: usize = 16;

/// A grouping's or DISTINCT's hash table is held in memory up to this many times
/// `work_mem` before its new groups go to disk (PostgreSQL's `hash_mem_multiplier`).
const HASH_MEM_WORK_MEMS: usize = 2;

/// A SELECT's result being read and sent in batches: its one table read by key under
/// the statement's snapshot, in the statement's transaction (open until the caller's
/// Sync), so its rows are never all in memory.
pub struct RowStream {
    plan: Arc<Plan>,
    source: StreamSource,
    /// The first batch, read when the statement ran (to tell a short result).
    first: Option<Vec<Vec<Value>>>,
    /// OFFSET rows still to skip, and LIMIT rows still to return.
    skip: usize,
    left: Option<usize>,
    done: bool,
}

/// The SELECT of a plan whose rows are streamed.
fn streamed_select(plan: &Plan) -> Result<&super::plan::SelectPlan> {
    match plan {
        Plan::Select(sel) => Ok(sel),
        _ => Err(Error::internal(
            "a row stream of a statement that is not a SELECT",
        )),
    }
}

/// Where a streamed SELECT's rows come from.
enum StreamSource {
    /// Its one table, read in batches by key under the statement's snapshot.
    ByKey {
        params: Vec<Value>,
        snapshot: Lsn,
        /// The key of the last row read; None before the first batch.
        after: Option<crate::storage::Key>,
    },
    /// Its rows sorted past `work_mem`, merged from disk as they are taken.
    Sorted(super::executor::Sorted),
}

/// The session's current transaction: the [`Transaction`] that owns its state and rules
/// (it derefs to it), and what the SQL layer adds: the block's failed state, savepoints'
/// names, the settings it changed and the plans whose increments it deferred.
pub struct TxnState {
    txn: Transaction,
    pub failed: bool,
    /// A statement that reads or writes rows has run: the isolation level is fixed.
    queried: bool,
    /// Open savepoints, outermost first.
    savepoints: Vec<Savepoint>,
    /// UPDATE plans with increments this transaction ran (see `plan::DeferIncrements`).
    increment_plans: Vec<Arc<Plan>>,
    /// Settings changed by SET, SET LOCAL and RESET in this transaction, oldest first,
    /// with the values to restore: all of them if it rolls back (SET is transactional in
    /// PostgreSQL), the SET LOCALs when it commits.
    local_restore: Vec<SettingUndo>,
    /// Checks of deferred constraints, run before the commit (`foreign_keys`), and how
    /// many of them failed when last settled.
    deferred_checks: Vec<PendingCheck>,
    deferred_unsettled: usize,
    /// SET CONSTRAINTS's choices.
    constraint_modes: ConstraintModes,
    /// Sequences TRUNCATE ... RESTART IDENTITY restarted (at once: sequences change
    /// outside transactions here), with the next value each had: a rollback sets them
    /// back.
    sequence_undo: Vec<(String, i64)>,
}

/// A setting's value before a SET, SET LOCAL or RESET in a transaction.
pub(super) struct SettingUndo {
    name: &'static str,
    old: Option<String>,
    local: bool,
}

impl std::ops::Deref for TxnState {
    type Target = Transaction;
    fn deref(&self) -> &Transaction {
        &self.txn
    }
}

impl std::ops::DerefMut for TxnState {
    fn deref_mut(&mut self) -> &mut Transaction {
        &mut self.txn
    }
}

pub struct Session {
    engine: Arc<Engine>,
    slot: Arc<SessionSlot>,
    user: String,
    txn: Option<TxnState>,
    overrides: FxHashMap<&'static str, String>,
    /// What currval and lastval return.
    sequences: parking_lot::Mutex<crate::sql::expr::SessionSequences>,
    /// The roles whose privileges `current_user` has, as of a catalog version
    /// (`Session::privileges_of`).
    privileges_cache: parking_lot::Mutex<Option<roles::PrivilegesOf>>,
    /// The values of the reported settings the client was last told (ParameterStatus),
    /// and whether a setting may have changed since.
    reported: Vec<(&'static str, String)>,
    settings_changed: bool,
    /// The TimeZone setting the connection's zone was last made from.
    zone_setting: String,
    /// Simple-protocol statement shapes by text, with their plans.
    cache: FxHashMap<String, Arc<Shape>>,
    /// Prepared statements by name ("" is the unnamed statement): made by Parse, dropped
    /// by Close and DEALLOCATE.
    statements: FxHashMap<String, NamedStatement>,
    /// Memory held by `statements`, in bytes (bounded, with their count).
    statement_bytes: usize,
    /// Whether commits are finished by the caller (see [`Session::defer_commits`]).
    defer_commits: bool,
    /// Whether a long SELECT result may be returned as [`Outcome::RowStream`].
    stream_results: bool,
    /// A commit started by the last call and not yet finished.
    in_flight: Option<Committing>,
    /// A checkpoint the last call (`CHECKPOINT`) asked for and has not yet waited for.
    checkpoint_wait: Option<crate::engine::CheckpointWait>,
    /// How many statements the simple Query being run has (0 outside one).
    simple_query_statements: usize,
    /// Warnings raised by the last statement, sent before its result.
    notices: Vec<Error>,
    /// The last statement stopped at a row lock: its next execution is the same
    /// statement running again (see [`Outcome::WaitForLock`]).
    resuming: bool,
    /// Under EXPLAIN ANALYZE of INSERT, UPDATE or DELETE: what its executors measured.
    explain_actuals: Option<super::explain::Actuals>,
}

impl Drop for Session {
    fn drop(&mut self) {
        self.close();
        self.engine.txn.unregister_session(self.slot.pid);
    }
}

/// A statement's text as the log shows it: whole up to 1 kB, else its start and length
/// (a huge statement must not flood the log once per error).
fn logged_text(text: &str) -> std::borrow::Cow<'_, str> {
    const MAX_LOGGED_BYTES: usize = 1024;
    let text = parser::mask_passwords(text);
    if text.len() <= MAX_LOGGED_BYTES {
        return text;
    }
    let mut end = MAX_LOGGED_BYTES;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}... ({} bytes)", &text[..end], text.len()).into()
}

fn tag_rows(tag: &str, n: u64) -> String {
    format!("{tag} {n}")
}

impl Session {
    pub fn new(engine: Arc<Engine>) -> Session {
        let slot = engine.txn.register_session();
        let mut session = Session {
            engine,
            slot,
            user: "postgres".into(),
            txn: None,
            overrides: FxHashMap::default(),
            sequences: Default::default(),
            privileges_cache: Default::default(),
            reported: Vec::new(),
            settings_changed: false,
            zone_setting: String::new(),
            cache: FxHashMap::default(),
            statements: FxHashMap::default(),
            statement_bytes: 0,
            defer_commits: false,
            stream_results: false,
            in_flight: None,
            checkpoint_wait: None,
            simple_query_statements: 0,
            notices: Vec::new(),
            resuming: false,
            explain_actuals: None,
        };
        session.sync_zone();
        session
    }

    pub fn engine(&self) -> &Arc<Engine> {
        &self.engine
    }

    /// The role name the client connected as (for current_user).
    pub fn set_user(&mut self, user: &str) {
        self.user = user.to_string();
        self.slot.activity.lock().user = user.to_string();
    }

    /// The connection's TLS protocol, cipher suite and key bits, for pg_stat_ssl.
    pub fn set_ssl(&mut self, ssl: crate::txn::SslStatus) {
        self.slot.activity.lock().ssl = Some(ssl);
    }

    /// Where the client connects from, for pg_stat_activity (`None`: a Unix socket).
    pub fn set_client(&mut self, client: Option<std::net::SocketAddr>) {
        self.slot.activity.lock().client = client;
    }

    /// Publish what the session is doing, for pg_stat_activity.
    fn report_activity(&self, running: Option<&str>) {
        let mut a = self.slot.activity.lock();
        match running {
            Some(q) => {
                a.state = "active";
                a.query.clear();
                a.query.push_str(&parser::mask_passwords(q));
                a.query_start_us = Some(now_us());
            }
            None => {
                a.state = match &self.txn {
                    Some(t) if t.explicit && t.failed => "idle in transaction (aborted)",
                    Some(t) if t.explicit => "idle in transaction",
                    _ => "idle",
                };
            }
        }
        a.xact_start_us = self.txn.as_ref().map(|t| t.start_us);
        let application_name = self
            .overrides
            .get("application_name")
            .map_or("", String::as_str);
        if a.application_name != application_name {
            a.application_name = application_name.to_string();
        }
    }

    /// A setting from the startup packet (e.g. `application_name`), applied as a SET.
    /// A setting given at connect. A name that is no setting fails (42704: the caller
    /// refuses the connection, as PostgreSQL does); a value outside what SteadyDB supports
    /// is ignored with a log line, so a driver that sends, say, `DateStyle=ISO` still
    /// connects.
    pub fn apply_startup_setting(&mut self, name: &str, value: &str) -> Result<()> {
        if settings::def(name).is_none() {
            return Err(Error::new(
                SqlState::UNDEFINED_OBJECT,
                format!("unrecognized configuration parameter \"{name}\""),
            ));
        }
        match settings::check_session_set(name, value) {
            Ok((def, v)) => {
                self.overrides.insert(def.name, v);
            }
            Err(e) => tracing::warn!("ignoring startup setting {name}: {}", e.message),
        }
        Ok(())
    }

    /// The current values of the settings reported to the client whenever they change
    /// (PostgreSQL's GUC_REPORT settings that a session can change); from now on, the
    /// client is taken to know them.
    pub fn reported_settings(&mut self) -> Vec<(&'static str, String)> {
        self.sync_zone();
        self.reported = REPORTED_SETTINGS
            .iter()
            .map(|&name| (name, self.show(name).unwrap_or_default()))
            .collect();
        self.settings_changed = false;
        self.reported.clone()
    }

    /// The reported settings whose values changed since the client was last told.
    pub fn take_reported_changes(&mut self) -> Vec<(&'static str, String)> {
        if !std::mem::take(&mut self.settings_changed) {
            return Vec::new();
        }
        let mut changed = Vec::new();
        for i in 0..self.reported.len() {
            let name = self.reported[i].0;
            let now = self.show(name).unwrap_or_default();
            if now != self.reported[i].1 {
                self.reported[i].1 = now.clone();
                changed.push((name, now));
            }
        }
        changed
    }

    /// (process id, secret key) for BackendKeyData; CancelRequest quotes them back.
    pub fn backend_key(&self) -> (i32, i32) {
        (self.slot.pid, self.slot.secret)
    }

    /// Parse every statement of a simple Query message. A syntax error in any of them fails
    /// the whole message before anything runs, as in PostgreSQL. Planning happens as each
    /// statement runs, so later statements see what earlier ones created.
    pub fn prepare_simple(&mut self, sql: &str) -> Result<Vec<Arc<Prepared>>> {
        let mut out = Vec::new();
        for text in parser::split_statements(sql) {
            // Statements of the same shape (differing only in literals) share one plan.
            if let Some((mut shape_text, literals, declared)) = parser::lift_literals(text) {
                // The literals' types are part of the shape: `1` and `10000000000` plan
                // differently (int4 vs int8).
                for t in &declared {
                    shape_text.push_str(&format!("\0{}", t.oid()));
                }
                if let Some(shape) = self.cache.get(&shape_text) {
                    out.push(Arc::new(Prepared {
                        param_types: Vec::new(),
                        fields: Vec::new(),
                        shape: shape.clone(),
                        literals,
                    }));
                    continue;
                }
                let parse_text = shape_text.split('\0').next().unwrap_or_default();
                if let Ok(stmt) = parser::parse_statement(parse_text) {
                    let shape = Arc::new(Shape {
                        stmt,
                        text: parse_text.to_string(),
                        declared,
                        described: false,
                        plan: Mutex::new(None),
                    });
                    self.remember(shape_text, shape.clone());
                    out.push(Arc::new(Prepared {
                        param_types: Vec::new(),
                        fields: Vec::new(),
                        shape,
                        literals,
                    }));
                    continue;
                }
            }
            let shape = match self.cache.get(text) {
                Some(shape) => shape.clone(),
                None => {
                    let stmt = parser::parse_statement(text)?;
                    let shape = Arc::new(Shape {
                        stmt,
                        text: text.to_string(),
                        declared: Vec::new(),
                        described: false,
                        plan: Mutex::new(None),
                    });
                    self.remember(text.to_string(), shape.clone());
                    shape
                }
            };
            out.push(Arc::new(Prepared {
                param_types: Vec::new(),
                fields: Vec::new(),
                shape,
                literals: Vec::new(),
            }));
        }
        self.simple_query_statements = out.len();
        Ok(out)
    }

    fn remember(&mut self, text: String, shape: Arc<Shape>) {
        if text.len() > PLAN_CACHE_MAX_QUERY_BYTES {
            return;
        }
        if self.cache.len() >= PLAN_CACHE_ENTRIES {
            self.cache.clear();
        }
        self.cache.insert(text, shape);
    }

    /// Parse and plan one statement for the extended protocol (Parse message).
    /// `param_oids` are the client's declared parameter types (0 = infer).
    pub fn prepare(&mut self, sql: &str, param_oids: &[u32]) -> Result<Arc<Prepared>> {
        let texts = parser::split_statements(sql);
        if texts.len() > 1 {
            return Err(Error::syntax(
                "cannot insert multiple commands into a prepared statement",
            ));
        }
        let declared = param_oids
            .iter()
            .map(|&oid| {
                DataType::from_oid(oid).ok_or_else(|| {
                    Error::unsupported(format!("parameter type with OID {oid} is not supported"))
                })
            })
            .collect::<Result<Vec<_>>>()?;
        let Some(text) = texts.first() else {
            return Ok(Arc::new(Prepared {
                param_types: declared.clone(),
                fields: Vec::new(),
                shape: Arc::new(Shape {
                    stmt: Statement::Empty,
                    text: String::new(),
                    declared,
                    described: false,
                    plan: Mutex::new(None),
                }),
                literals: Vec::new(),
            }));
        };
        let stmt = parser::parse_statement(text)?;
        let mut planned =
            planner::plan(&self.engine, &stmt, declared.clone(), &self.hidden_tables())?;
        if let Plan::Execute { name, .. } = &planned.plan {
            // EXECUTE describes as the statement it runs.
            planned.fields = self.statement(name)?.fields.clone();
        }
        let cached = CachedPlan {
            catalog_version: self.engine.txn.catalog.version(),
            plan: Arc::new(planned.plan),
            fields: planned.fields.clone(),
            param_types: planned.param_types.clone(),
            privileges: Arc::new(planned.privileges),
        };
        Ok(Arc::new(Prepared {
            param_types: planned.param_types,
            fields: planned.fields,
            shape: Arc::new(Shape {
                stmt,
                text: text.to_string(),
                declared,
                described: true,
                plan: Mutex::new(Some(cached)),
            }),
            literals: Vec::new(),
        }))
    }

    /// Parse message: prepare `sql` as the statement `name`. The unnamed statement ("")
    /// is replaced; a named one must not exist yet.
    pub fn parse_statement(&mut self, name: String, sql: &str, param_oids: &[u32]) -> Result<()> {
        if name.is_empty() {
            self.close_statement("");
        } else if self.statements.contains_key(&name) {
            return Err(Error::new(
                SqlState::DUPLICATE_PREPARED_STATEMENT,
                format!("prepared statement \"{name}\" already exists"),
            ));
        } else {
            // Refused before the work of preparing it when it would not fit if it held as
            // much as the session's statements do on average.
            let average = self.statement_bytes / self.statements.len().max(1);
            self.check_statement_room(sql.len().max(average))?;
        }
        let (prepared, retained) = crate::memory::retained_by(|| self.prepare(sql, param_oids));
        let prepared = prepared?;
        let held_bytes = retained.max(sql.len());
        if !name.is_empty() {
            self.check_statement_room(held_bytes)?;
        }
        self.statement_bytes += held_bytes;
        let named = NamedStatement {
            prepared,
            held_bytes,
        };
        if let Some(old) = self.statements.insert(name, named) {
            self.statement_bytes -= old.held_bytes;
        }
        Ok(())
    }

    /// Whether one more named prepared statement holding `held_bytes` fits the session's
    /// limits (53200 if not: the client must deallocate some first).
    fn check_statement_room(&self, held_bytes: usize) -> Result<()> {
        use crate::constants::{MAX_PREPARED_STATEMENTS, MAX_PREPARED_STATEMENT_BYTES};
        let count = self.statements.len();
        if count >= MAX_PREPARED_STATEMENTS
            || self.statement_bytes + held_bytes > MAX_PREPARED_STATEMENT_BYTES
        {
            return Err(Error::new(
                SqlState::OUT_OF_MEMORY,
                "out of memory for prepared statements",
            )
            .with_detail(format!(
                "This session holds {count} prepared statements in {} kB; the limit is {MAX_PREPARED_STATEMENTS} statements or {} kB.",
                self.statement_bytes / 1024,
                MAX_PREPARED_STATEMENT_BYTES / 1024
            ))
            .with_hint("Deallocate prepared statements that are no longer needed (DEALLOCATE, or the protocol's Close)."));
        }
        Ok(())
    }

    /// The prepared statement `name` (26000 if there is none).
    pub fn statement(&self, name: &str) -> Result<Arc<Prepared>> {
        self.statements
            .get(name)
            .map(|n| n.prepared.clone())
            .ok_or_else(|| {
                let message = if name.is_empty() {
                    "unnamed prepared statement does not exist".to_owned()
                } else {
                    format!("prepared statement \"{name}\" does not exist")
                };
                Error::new(SqlState::INVALID_SQL_STATEMENT_NAME, message)
            })
    }

    /// Close message: drop the statement `name`; closing one that does not exist is not
    /// an error.
    pub fn close_statement(&mut self, name: &str) {
        if let Some(old) = self.statements.remove(name) {
            self.statement_bytes -= old.held_bytes;
        }
    }

    /// DEALLOCATE: drop one named prepared statement, or all of them (the unnamed
    /// statement is not one of them, as in PostgreSQL).
    /// EXECUTE: run a named prepared statement with `args`, each cast to its parameter's
    /// type; the result is the statement's own.
    fn execute_prepared(&mut self, name: &str, args: &[Expr], params: &[Value]) -> Result<Outcome> {
        let stmt = self.statement(name)?;
        if args.len() != stmt.param_types.len() {
            return Err(Error::syntax(format!(
                "wrong number of parameters for prepared statement \"{name}\""
            ))
            .with_detail(format!(
                "Expected {} parameters but got {}.",
                stmt.param_types.len(),
                args.len()
            )));
        }
        let values: Vec<Value> = self.with_executor(Lsn::ZERO, params, false, |exec| {
            args.iter()
                .zip(&stmt.param_types)
                .map(|(a, t)| exec.eval(a, &[]).and_then(|v| types::cast(v, t)))
                .collect::<Result<Vec<Value>>>()
        })?;
        self.execute_inner(&stmt, &values)
    }

    fn deallocate(&mut self, name: Option<&str>) -> Result<Outcome> {
        let tag = match name {
            None => {
                self.statements.retain(|n, _| n.is_empty());
                self.statement_bytes = self.statements.values().map(|n| n.held_bytes).sum();
                "DEALLOCATE ALL"
            }
            Some(n) => {
                if n.is_empty() || !self.statements.contains_key(n) {
                    return Err(Error::new(
                        SqlState::INVALID_SQL_STATEMENT_NAME,
                        format!("prepared statement \"{n}\" does not exist"),
                    ));
                }
                self.close_statement(n);
                "DEALLOCATE"
            }
        };
        Ok(Outcome::Command { tag: tag.into() })
    }

    /// The plan to run for `stmt`, re-planned if the catalog changed since it was made.
    fn plan_for(&self, stmt: &Prepared) -> Result<Planned> {
        let shape = &stmt.shape;
        let version = self.engine.txn.catalog.version();
        let mut cached = shape.plan.lock();
        if let Some(c) = cached.as_ref() {
            if c.catalog_version == version {
                self.check_privileges(&c.privileges)?;
                return Ok((c.plan.clone(), c.fields.clone(), c.param_types.clone()));
            }
        }
        let planned = planner::plan(
            &self.engine,
            &shape.stmt,
            shape.declared.clone(),
            &self.hidden_tables(),
        )?;
        if shape.described
            && (planned.fields != stmt.fields || planned.param_types != stmt.param_types)
        {
            return Err(Error::unsupported(
                "cached plan must not change result type",
            ));
        }
        self.check_privileges(&planned.privileges)?;
        let plan = Arc::new(planned.plan);
        *cached = Some(CachedPlan {
            catalog_version: version,
            plan: plan.clone(),
            fields: planned.fields.clone(),
            param_types: planned.param_types.clone(),
            privileges: Arc::new(planned.privileges),
        });
        Ok((plan, planned.fields, planned.param_types))
    }

    /// Execute a prepared statement with bound parameters, in the current transaction.
    /// On error the transaction is marked failed (explicit block) or rolled back
    /// (implicit), and the error is returned for the wire layer to send.
    pub fn execute(&mut self, stmt: &Prepared, params: &[Value]) -> Result<Outcome> {
        self.finish_commit_blocking();
        if matches!(stmt.shape.stmt, Statement::Empty) {
            return Ok(Outcome::Empty);
        }
        if !std::mem::take(&mut self.resuming) {
            // A new statement, not one running again after a lock wait.
            self.start_statement_clock();
        }
        self.report_activity(Some(&stmt.shape.text));
        let result = self.execute_inner(stmt, params);
        self.resuming = matches!(result, Ok(Outcome::WaitForLock));
        if let Err(e) = &result {
            // As PostgreSQL's log_min_error_statement = error: the error and its statement.
            tracing::info!(code = %e.code, "ERROR: {}; STATEMENT: {}", e.message, logged_text(&stmt.shape.text));
        }
        // A statement waiting for a row lock is still running, and so is one whose rows
        // are still to be read (until they are: `end_streamed_statement`).
        if !matches!(
            result,
            Ok(Outcome::WaitForLock | Outcome::RowStream { .. } | Outcome::CopyOut(_))
        ) {
            self.report_activity(None);
            self.slot.end_statement();
        }
        result
    }

    fn execute_inner(&mut self, stmt: &Prepared, params: &[Value]) -> Result<Outcome> {
        // In a failed block only COMMIT and ROLLBACK run; anything else is refused before
        // it is planned (a name it cannot find is not what the client should hear).
        if self.txn.as_ref().is_some_and(|t| t.failed) && !ends_a_failed_block(&stmt.shape.stmt) {
            return Err(Error::in_failed_transaction());
        }
        let conflict = match &self.txn {
            Some(t) if !t.failed => t.txn.check_recovery_conflicts(),
            _ => Ok(()),
        };
        let result = conflict
            .and_then(|()| self.plan_for(stmt))
            .and_then(|planned| self.pass_write_gates(stmt, planned))
            .and_then(|(plan, fields, param_types)| {
                if stmt.literals.is_empty() {
                    return self.run(&plan, fields, params);
                }
                // Lifted literals: typed now that planning resolved their types.
                let bound = stmt
                    .literals
                    .iter()
                    .zip(&param_types)
                    .map(|(v, t)| match v {
                        Value::Text(s) => types::decode_text(t, s),
                        other => types::cast(other.clone(), t),
                    })
                    .collect::<Result<Vec<_>>>()?;
                self.run(&plan, fields, &bound)
            });
        if result.is_err() {
            self.on_error();
        }
        result
    }

    /// Pass the write gate (`storage::write_gate`) of every table `planned` writes, drops
    /// or truncates, once per transaction. A gate that a rebuild has closed is waited at;
    /// the rebuild changed the table's definition, so the statement is planned again.
    fn pass_write_gates(&mut self, stmt: &Prepared, mut planned: Planned) -> Result<Planned> {
        loop {
            if self.txn.as_ref().is_some_and(|t| t.failed) {
                return Ok(planned);
            }
            let written = written_tables(&planned.0);
            let read = read_tables(&planned.0);
            if !self.txn().pass_gates(&written, &read)? {
                return Ok(planned);
            }
            planned = self.plan_for(stmt)?;
        }
    }

    /// Wait, as a task, for the row lock the last statement stopped at, and take it. On
    /// an error (deadlock, cancel) the transaction fails as after any statement error.
    pub async fn wait_for_lock(&mut self) -> Result<()> {
        let Some(t) = self.txn.as_mut() else {
            return Ok(());
        };
        match t.txn.wait_for_lock().await {
            Ok(()) => Ok(()),
            Err(e) => {
                tracing::info!(code = %e.code, "ERROR: {}", e.message);
                self.resuming = false;
                self.on_error();
                self.report_activity(None);
                Err(e)
            }
        }
    }

    fn on_error(&mut self) {
        match &mut self.txn {
            Some(t) if t.explicit && !t.savepoints.is_empty() => {
                // ROLLBACK TO SAVEPOINT may yet take back only part of it: keep it all.
                t.failed = true;
                t.forget_wait();
            }
            Some(t) if t.explicit => {
                // As in PostgreSQL, the transaction is aborted now (its locks released, its
                // writes dropped); only the block stays open, failed, until ROLLBACK.
                t.failed = true;
                t.queried = true;
                t.increment_plans.clear();
                t.txn.abort_in_place();
            }
            Some(_) => {
                if let Some(t) = self.txn.take() {
                    self.rollback(t);
                }
            }
            None => {}
        }
    }

    /// End of a simple Query message or a Sync message: commit the implicit transaction.
    pub fn sync(&mut self) -> Result<()> {
        self.simple_query_statements = 0;
        self.finish_commit_blocking();
        if self.txn.as_ref().is_some_and(|t| !t.explicit) {
            self.commit_open()?;
        }
        Ok(())
    }

    /// Commit the open transaction, once its deferred constraints hold: if one does not,
    /// it rolls back, and the error is the commit's.
    pub(super) fn commit_open(&mut self) -> Result<()> {
        if let Err(e) = self.run_deferred_checks(None) {
            if let Some(t) = self.txn.take() {
                self.rollback(t);
            }
            return Err(e);
        }
        match self.txn.take() {
            Some(t) => self.commit(t),
            None => Ok(()),
        }
    }

    /// Run the transaction's checks of deferred constraints: all of them (`names`
    /// None, at commit), or those SET CONSTRAINTS just made immediate.
    pub(super) fn run_deferred_checks(
        &mut self,
        now_immediate: Option<&ConstraintModes>,
    ) -> Result<()> {
        let Some(t) = self.txn.as_mut() else {
            return Ok(());
        };
        if t.deferred_checks.is_empty() {
            return Ok(());
        }
        let checks = std::mem::take(&mut t.deferred_checks);
        let (run, keep): (Vec<PendingCheck>, Vec<PendingCheck>) = match now_immediate {
            None => (checks, Vec::new()),
            Some(modes) => checks.into_iter().partition(|c| !c.deferred_under(modes)),
        };
        let snapshot = self.statement_snapshot();
        let result = self.with_executor(snapshot, &[], false, |exec| {
            for check in &run {
                exec.run_check(check)?;
            }
            exec.finish_foreign_key_checks()
        });
        if let Some(t) = self.txn.as_mut() {
            t.deferred_checks.extend(keep);
        }
        match result {
            Ok(()) => Ok(()),
            Err(Stop::Error(e)) => Err(e),
            Err(Stop::WaitForLock) => Err(Error::internal(
                "a deferred constraint check stopped at a lock it blocks at",
            )),
        }
    }

    /// Whether another transaction waits for a row lock this session's transaction holds:
    /// its replies should not wait for anything (see `wire::reply_batch`).
    pub fn blocks_others(&self) -> bool {
        self.txn.as_ref().is_some_and(|t| t.blocks_others())
    }

    pub fn txn_status(&self) -> TxnStatus {
        match &self.txn {
            Some(t) if t.explicit && t.failed => TxnStatus::Failed,
            Some(t) if t.explicit => TxnStatus::InBlock,
            _ => TxnStatus::Idle,
        }
    }

    /// The client went away: roll back whatever is open and release locks.
    pub fn close(&mut self) {
        if let Some(committing) = self.in_flight.take() {
            committing.finish();
        }
        if let Some(t) = self.txn.take() {
            self.rollback(t);
        }
    }

    /// Whether setting `name` (a canonical name; not `transaction_isolation`) is `value`
    /// in this session, as SHOW would print it.
    fn setting_is(&self, name: &'static str, value: &str) -> bool {
        debug_assert_eq!(settings::def(name).map(|d| d.name), Some(name));
        match self.overrides.get(name) {
            Some(v) => v == value,
            None => self.engine.settings.is(name, value),
        }
    }

    fn txn(&mut self) -> &mut TxnState {
        if self.txn.is_none() {
            let isolation = self.default_isolation();
            let read_only = self.setting_is("default_transaction_read_only", "on");
            let mut txn =
                Transaction::begin(&self.engine.txn, &self.slot, isolation, read_only, now_us());
            let work_mem_kb = match self.overrides.get("write_set_work_mem") {
                Some(shown) => settings::kilobytes(shown),
                None => u64::try_from(self.engine.settings.get_int("write_set_work_mem")).ok(),
            };
            if let Some(kb) = work_mem_kb.filter(|kb| *kb > 0) {
                txn.writes
                    .spill_after(usize::try_from(kb.saturating_mul(1024)).unwrap_or(usize::MAX));
            }
            self.txn = Some(TxnState {
                txn,
                failed: false,
                queried: false,
                savepoints: Vec::new(),
                increment_plans: Vec::new(),
                local_restore: Vec::new(),
                deferred_checks: Vec::new(),
                deferred_unsettled: 0,
                constraint_modes: ConstraintModes::default(),
                sequence_undo: Vec::new(),
            });
        }
        self.txn.as_mut().expect("transaction just begun")
    }

    fn sync_level(&self) -> SyncLevel {
        match self.overrides.get("synchronous_commit") {
            Some(v) => SyncLevel::from_setting(v),
            None => self.engine.settings.sync_level(),
        }
    }

    /// Commit `t`. Its record takes its place in the log now; the rest (durability,
    /// install, visibility, releasing locks) happens here, or, when commits are deferred,
    /// in [`Session::finish_commit`], which the caller must await before anything else.
    fn commit(&mut self, t: TxnState) -> Result<()> {
        self.finish_commit_blocking();
        let level = self.sync_level();
        let TxnState {
            txn,
            increment_plans,
            local_restore,
            ..
        } = t;
        let committed = txn.commit(level, || {
            for p in increment_plans {
                if let Plan::Update(u) = p.as_ref() {
                    u.defer.committed_untouched();
                }
            }
        });
        self.restore_at_commit(local_restore);
        let committing = committed?;
        if self.defer_commits {
            self.in_flight = Some(committing);
        } else {
            committing.finish();
        }
        Ok(())
    }

    /// Let commits be finished by the caller, as a task ([`Session::finish_commit`]),
    /// instead of blocking inside the statement that commits.
    pub fn defer_commits(&mut self) {
        self.defer_commits = true;
    }

    /// Let a SELECT whose result is longer than a batch return [`Outcome::RowStream`]:
    /// the caller sends its rows as [`Session::row_stream_next`] reads them, before it
    /// runs anything else in this session.
    pub fn stream_results(&mut self) {
        self.stream_results = true;
    }

    /// The next rows of a streamed SELECT, None once all were returned. An error ends the
    /// statement as any statement's error does.
    pub fn row_stream_next(&mut self, stream: &mut RowStream) -> Result<Option<Vec<Vec<Value>>>> {
        if let Some(first) = stream.first.take() {
            return Ok(Some(first));
        }
        if stream.done {
            self.end_streamed_statement();
            return Ok(None);
        }
        match self.row_stream_batch(stream) {
            Ok(rows) if rows.is_empty() => {
                self.end_streamed_statement();
                Ok(None)
            }
            Ok(rows) => Ok(Some(rows)),
            Err(e) => {
                stream.done = true;
                self.end_streamed_statement();
                self.on_error();
                Err(e)
            }
        }
    }

    /// A statement whose rows were streamed has sent its last (or failed).
    fn end_streamed_statement(&mut self) {
        self.report_activity(None);
        self.slot.end_statement();
    }

    /// A streamed SELECT's portal was suspended (Execute with a row limit): it is not
    /// running until its next Execute (the session is idle in its transaction meanwhile,
    /// and no `statement_timeout` counts).
    pub fn suspend_streamed_statement(&mut self) {
        self.end_streamed_statement();
    }

    /// A suspended streamed SELECT runs again (its next Execute): cancel and timeouts
    /// count from now, as for any statement.
    pub fn resume_streamed_statement(&mut self, stmt: &Prepared) {
        self.start_statement_clock();
        self.report_activity(Some(&stmt.shape.text));
    }

    /// A statement starts: no cancel pending, its `statement_timeout` and `lock_timeout`
    /// counted from now.
    fn start_statement_clock(&mut self) {
        self.slot.cancel.store(false, Ordering::Release);
        // Read only when set: a disabled timeout costs no formatting per statement.
        let ms = |name| match self.setting_is(name, "0") {
            true => 0,
            false => self
                .show(name)
                .as_deref()
                .and_then(settings::millis)
                .unwrap_or(0),
        };
        self.slot
            .start_statement(ms("statement_timeout"), ms("lock_timeout"));
    }

    /// Start streaming `plan`'s rows: read the first batch; if that was all of them, the
    /// result is ordinary rows.
    fn start_row_stream(
        &mut self,
        plan: &Arc<Plan>,
        fields: Vec<Field>,
        params: &[Value],
    ) -> Result<Outcome> {
        let sel = streamed_select(plan)?;
        let snapshot = self.statement_snapshot();
        let (skip, left) =
            self.with_executor(snapshot, params, false, |exec| exec.offset_and_limit(sel))?;
        let mut stream = RowStream {
            plan: plan.clone(),
            source: StreamSource::ByKey {
                params: params.to_vec(),
                snapshot,
                after: None,
            },
            first: None,
            skip,
            left,
            done: false,
        };
        let first = self.row_stream_batch(&mut stream)?;
        if stream.done {
            return Ok(Outcome::Rows {
                fields,
                rows: first,
                tag: RowsTag::Select,
            });
        }
        stream.first = Some(first);
        Ok(Outcome::RowStream { fields, stream })
    }

    /// Start a SELECT whose rows may go to disk: collect (and sort) them, in memory up
    /// to `work_mem`, then return them as ordinary rows if they stayed in memory, or as
    /// a stream read back (merged) from disk.
    fn start_sorted_stream(
        &mut self,
        plan: &Arc<Plan>,
        fields: Vec<Field>,
        params: &[Value],
    ) -> Result<Outcome> {
        let sel = streamed_select(plan)?;
        let snapshot = self.statement_snapshot();
        // Rows without ORDER BY are only held, not sorted: they may take more memory
        // before they go to disk, where reading them back costs more than it saves.
        let memory_bytes = match sel.order_by.is_empty() {
            true => self
                .work_mem_bytes()
                .saturating_mul(UNSORTED_RESULT_WORK_MEMS),
            false => self.work_mem_bytes(),
        };
        let to = super::executor::SpillTo {
            hash_mem_bytes: self.work_mem_bytes().saturating_mul(HASH_MEM_WORK_MEMS),
            sort_mem_bytes: memory_bytes,
            temp_dir: self.temp_dir(),
        };
        let (skip, left, sorted) = self.with_executor(snapshot, params, false, |exec| {
            let (skip, left) = exec.offset_and_limit(sel)?;
            if left == Some(0) {
                // As LIMIT 0 reads nothing.
                return Ok::<_, Error>((skip, left, None));
            }
            let keep = left.map(|l| l.saturating_add(skip));
            let sorted = exec.sort_externally(sel, to, keep)?;
            Ok((skip, left, Some(sorted)))
        })?;
        let Some(sorted) = sorted else {
            return Ok(Outcome::Rows {
                fields,
                rows: Vec::new(),
                tag: RowsTag::Select,
            });
        };
        let sorted = match sorted {
            super::executor::Sorted::InMemory(rows) => {
                let rows = rows.map(|(_, row)| row).skip(skip);
                return Ok(Outcome::Rows {
                    fields,
                    rows: match left {
                        Some(n) => rows.take(n).collect(),
                        None => rows.collect(),
                    },
                    tag: RowsTag::Select,
                });
            }
            spilled => spilled,
        };
        let stream = RowStream {
            plan: plan.clone(),
            source: StreamSource::Sorted(sorted),
            first: None,
            skip,
            left,
            done: false,
        };
        Ok(Outcome::RowStream { fields, stream })
    }

    /// The session's `work_mem`, in bytes.
    fn work_mem_bytes(&self) -> usize {
        let kb = match self.overrides.get("work_mem") {
            Some(shown) => settings::kilobytes(shown),
            None => u64::try_from(self.engine.settings.get_int("work_mem")).ok(),
        };
        kb.map_or(4 << 20, |kb| {
            usize::try_from(kb.saturating_mul(1024)).unwrap_or(usize::MAX)
        })
    }

    /// Where sorts spill: `pgsql_tmp` in the data directory, as PostgreSQL's
    /// `base/pgsql_tmp` (its files are unlinked as soon as they are made).
    fn temp_dir(&self) -> std::path::PathBuf {
        match &self.engine.data_dir {
            Some(dir) => dir.join("pgsql_tmp"),
            None => std::env::temp_dir(),
        }
    }

    /// The stream's next rows (none only at its end), after OFFSET, within LIMIT.
    fn row_stream_batch(&mut self, stream: &mut RowStream) -> Result<Vec<Vec<Value>>> {
        let plan = stream.plan.clone();
        let sel = streamed_select(&plan)?;
        while !stream.done {
            if stream.left == Some(0) {
                stream.done = true;
                break;
            }
            let mut rows = match &mut stream.source {
                StreamSource::ByKey {
                    params,
                    snapshot,
                    after,
                } => {
                    let from = after.take();
                    // No row past LIMIT is read: its filter and projection must not run.
                    let wanted = stream
                        .left
                        .map_or(ROW_STREAM_BATCH_ROWS, |left| {
                            left.saturating_add(stream.skip)
                        })
                        .clamp(1, ROW_STREAM_BATCH_ROWS);
                    let (rows, last) = self.with_executor(*snapshot, params, false, |exec| {
                        exec.scan_batch(sel, from.as_deref(), wanted)
                    })?;
                    stream.done = last.is_none();
                    *after = last;
                    rows
                }
                StreamSource::Sorted(sorted) => {
                    self.slot.check_in()?;
                    let mut rows = Vec::new();
                    while rows.len() < ROW_STREAM_BATCH_ROWS {
                        match sorted.next_row(&sel.order_by)? {
                            Some(row) => rows.push(row),
                            None => {
                                stream.done = true;
                                break;
                            }
                        }
                    }
                    rows
                }
            };
            let skipped = stream.skip.min(rows.len());
            rows.drain(..skipped);
            stream.skip -= skipped;
            if let Some(left) = &mut stream.left {
                rows.truncate(*left);
                *left -= rows.len();
                if *left == 0 {
                    stream.done = true;
                }
            }
            if !rows.is_empty() {
                return Ok(rows);
            }
            self.slot.check_in()?;
        }
        Ok(Vec::new())
    }

    /// Finish the commit the last call started, if it started one: wait until it is
    /// durable and visible, yielding meanwhile. Call after every call that may commit
    /// (`execute`, `sync`), before replying to the client. An error is a CHECKPOINT's
    /// that failed: the statement's result is that error.
    pub async fn finish_commit(&mut self) -> Result<()> {
        if let Some(committing) = self.in_flight.take() {
            // The statement is over, but its commit waits (for the log, or for standbys):
            // pg_stat_activity shows the session active until it is acknowledged.
            self.slot.activity.lock().state = "active";
            let warning = committing.finish_async().await;
            self.report_activity(None);
            if let Some(warning) = warning {
                self.warn(warning);
            }
        }
        let mut checkpointed = Ok(());
        if let Some(wait) = self.checkpoint_wait.take() {
            *self.slot.wait_event.lock() = Some(("IPC", "CheckpointDone"));
            checkpointed = wait.finish().await;
            *self.slot.wait_event.lock() = None;
        }
        self.engine.txn.wait_for_seen_commits(&self.slot).await;
        checkpointed
    }

    /// A started commit that the caller did not finish is finished here, blocking.
    fn finish_commit_blocking(&mut self) {
        if let Some(committing) = self.in_flight.take() {
            debug_assert!(false, "a deferred commit was not finished by the caller");
            committing.finish();
        }
        if let Some(wait) = self.checkpoint_wait.take() {
            debug_assert!(false, "a CHECKPOINT was not waited for by the caller");
            if let Err(e) = wait.finish_blocking() {
                tracing::warn!("{}", e.message);
            }
        }
    }

    fn rollback(&mut self, t: TxnState) {
        let TxnState {
            txn,
            local_restore,
            sequence_undo,
            ..
        } = t;
        txn.rollback();
        self.restore_locals(local_restore);
        for (name, next) in sequence_undo.into_iter().rev() {
            if let Err(e) = self.restart_sequence(&name, Some(next)) {
                tracing::warn!("sequence \"{name}\" could not be set back: {}", e.message);
            }
        }
    }

    /// What this session's transaction must not see of the catalog: tables another
    /// transaction created and has not committed, and tables it dropped itself.
    fn hidden_tables(&self) -> impl Fn(TableId) -> bool + '_ {
        let catalog = &self.engine.txn.catalog;
        let (created, dropped) = match &self.txn {
            Some(t) => (&t.created[..], &t.dropped[..]),
            None => (&[][..], &[][..]),
        };
        move |id: TableId| catalog.hides(id, created, dropped)
    }

    /// Undo the settings changed in a transaction (or since a savepoint) that rolled back.
    fn restore_locals(&mut self, list: Vec<SettingUndo>) {
        let changed = !list.is_empty();
        for undo in list.into_iter().rev() {
            self.restore_setting(undo.name, undo.old);
        }
        if changed {
            self.note_settings_changed();
        }
    }

    /// A transaction committed: its SET LOCALs end, unless a later SET of the same
    /// setting in it gave it a session value.
    fn restore_at_commit(&mut self, list: Vec<SettingUndo>) {
        let mut set_later: Vec<&'static str> = Vec::new();
        for undo in list.into_iter().rev() {
            if !undo.local {
                set_later.push(undo.name);
            } else if !set_later.contains(&undo.name) {
                self.restore_setting(undo.name, undo.old);
                self.note_settings_changed();
            }
        }
    }

    /// A setting changed: the client is told if it is a reported one, and the
    /// connection's zone follows TimeZone.
    fn note_settings_changed(&mut self) {
        self.settings_changed = true;
        self.sync_zone();
    }

    /// Make the connection's zone (`types::zone`) the one the TimeZone setting names, if
    /// the setting changed since it was last made.
    fn sync_zone(&mut self) {
        let setting = self.show("TimeZone").unwrap_or_default();
        if setting != self.zone_setting {
            let zone = crate::types::zone::parse_setting(&setting)
                .unwrap_or_else(crate::types::zone::Zone::utc);
            crate::types::zone::set_session_zone(Arc::new(zone));
            self.zone_setting = setting;
        }
    }

    fn restore_setting(&mut self, name: &'static str, old: Option<String>) {
        match old {
            Some(v) => self.overrides.insert(name, v),
            None => self.overrides.remove(name),
        };
    }

    /// Remember a setting's value before a change in the current transaction.
    fn note_setting_change(&mut self, name: &'static str, local: bool) {
        let old = self.overrides.get(name).cloned();
        if let Some(t) = self.txn.as_mut() {
            t.local_restore.push(SettingUndo { name, old, local });
        }
    }

    /// A setting's value as this session sees it.
    pub fn show(&self, name: &str) -> Option<String> {
        if name.eq_ignore_ascii_case("session_authorization") {
            return Some(self.session_user().to_string());
        }
        show_setting(
            &self.overrides,
            &self.engine,
            self.txn.as_ref().map(|t| t.isolation),
            self.txn.as_ref().map(|t| t.read_only),
            self.superuser_now(),
            name,
        )
    }

    /// The snapshot for the next statement (READ COMMITTED: fresh; REPEATABLE READ: the
    /// transaction's, taken on first use).
    fn statement_snapshot(&mut self) -> Lsn {
        let t = self.txn();
        t.queried = true;
        t.statement_snapshot()
    }

    fn run(
        &mut self,
        plan_arc: &Arc<Plan>,
        fields: Vec<Field>,
        params: &[Value],
    ) -> Result<Outcome> {
        let plan = plan_arc.as_ref();
        if self.txn.as_ref().is_some_and(|t| t.failed)
            && !matches!(
                plan,
                Plan::Transaction(
                    TxnStatement::Commit { .. }
                        | TxnStatement::Rollback { .. }
                        | TxnStatement::RollbackToSavepoint { .. }
                )
            )
        {
            return Err(Error::in_failed_transaction());
        }
        if let Some(what) = writes_what(plan) {
            if let Some(tli) = self.engine.fenced_by() {
                return Err(Error::new(
                    SqlState::READ_ONLY_SQL_TRANSACTION,
                    format!("cannot execute {what}: this server is no longer the primary"),
                )
                .with_detail(format!(
                    "A standby was promoted to timeline {tli}; this server stays on timeline {}.",
                    self.engine.repl.timeline()
                ))
                .with_hint("Make it a standby of the new primary with steadydb basebackup."));
            }
            if self.txn_read_only() {
                return Err(Error::new(
                    SqlState::READ_ONLY_SQL_TRANSACTION,
                    format!("cannot execute {what} in a read-only transaction"),
                ));
            }
        }
        let command = |tag: &str| {
            Ok(Outcome::Command {
                tag: tag.to_string(),
            })
        };
        if let Some(t) = self.txn.as_ref().filter(|t| !t.increment_plans.is_empty()) {
            if let Some(tables) = touched_tables(plan, true) {
                for p in &t.increment_plans {
                    if let Plan::Update(u) = p.as_ref() {
                        if tables
                            .as_ref()
                            .is_none_or(|ts| ts.contains(&u.scan.table.id))
                        {
                            u.defer.touched_after();
                        }
                    }
                }
            }
        }
        if self.txn.as_ref().is_some_and(|t| t.writes.has_increments()) {
            if let Some(tables) = touched_tables(plan, false) {
                let materialized = self.with_executor(Lsn::ZERO, params, true, |exec| {
                    exec.materialize(tables.as_deref())
                });
                match materialized {
                    Ok(()) => {}
                    Err(Stop::WaitForLock) => return Ok(Outcome::WaitForLock),
                    Err(Stop::Error(e)) => return Err(e),
                }
            }
        }
        self.refuse_unless_owner(plan)?;
        match plan {
            Plan::Update(u) if u.increments.is_some() => {
                let t = self.txn();
                if !t.increment_plans.iter().any(|p| Arc::ptr_eq(p, plan_arc)) {
                    t.increment_plans.push(plan_arc.clone());
                }
                self.run_dml(plan, fields, params)
            }
            Plan::Select(sel) if self.stream_results && sel.streams_by_key() => {
                self.start_row_stream(plan_arc, fields, params)
            }
            Plan::Select(sel) if self.stream_results && sel.sorts_externally() => {
                self.start_sorted_stream(plan_arc, fields, params)
            }
            Plan::Select(_) | Plan::Insert(_) | Plan::Update(_) | Plan::Delete(_) => {
                self.run_dml(plan, fields, params)
            }
            Plan::Copy(_) => {
                let snapshot = self.statement_snapshot();
                let Plan::Copy(cp) = plan else { unreachable!() };
                let parser = CopyParser::new(&cp.stmt)?;
                Ok(Outcome::CopyIn(CopyIn {
                    columns: cp.targets.len(),
                    binary: cp.stmt.format == CopyFormat::Binary,
                    plan: plan_arc.clone(),
                    parser,
                    snapshot,
                    rows: 0,
                    fk_pending: Vec::new(),
                    fk_unsettled: 0,
                    image: Vec::new(),
                }))
            }
            Plan::CopyTo(cp) => {
                let snapshot = self.statement_snapshot();
                let encoder = CopyEncoder::new(&cp.stmt, &cp.names)?;
                let pending = if cp.by_key {
                    Vec::new()
                } else {
                    // A query's rows are computed at once, as a SELECT's are.
                    self.with_executor(snapshot, params, false, |exec| exec.select(&cp.select))?
                };
                Ok(Outcome::CopyOut(CopyOut {
                    columns: cp.types.len(),
                    binary: encoder.is_binary(),
                    plan: plan_arc.clone(),
                    snapshot,
                    encoder,
                    pending: pending.into_iter(),
                    after: None,
                    stage: CopyOutStage::Start,
                    rows: 0,
                }))
            }
            Plan::Transaction(statement) => self.run_txn_control(statement),
            Plan::Set { name, value, local } => {
                let (def, value) = match value {
                    Some(v) => {
                        let (def, v) = settings::check_session_set(name, v)?;
                        (def, Some(v))
                    }
                    None => (
                        settings::check_session_set(name, "")
                            .map(|(d, _)| d)
                            .or_else(|e| {
                                settings::def(name)
                                    .filter(|d| d.context == settings::Context::User)
                                    .ok_or(e)
                            })?,
                        None,
                    ),
                };
                if *local && !self.txn.as_ref().is_some_and(|t| t.explicit) {
                    return command("SET");
                }
                let value = self.check_identity_change(def.name, value, *local)?;
                self.note_setting_change(def.name, *local);
                match value {
                    Some(v) => self.overrides.insert(def.name, v),
                    None => self.overrides.remove(def.name),
                };
                self.note_settings_changed();
                command("SET")
            }
            Plan::Reset { name } => {
                match name {
                    None => {
                        // RESET ALL leaves the session's identity (role, session
                        // authorization) as it is, as PostgreSQL's does.
                        let names: Vec<&'static str> = self
                            .overrides
                            .keys()
                            .copied()
                            .filter(|n| !matches!(*n, "role" | "session_authorization"))
                            .collect();
                        for n in names {
                            self.note_setting_change(n, false);
                            self.overrides.remove(n);
                        }
                    }
                    Some(n) => {
                        let def = settings::def(n).ok_or_else(|| {
                            Error::new(
                                SqlState::UNDEFINED_OBJECT,
                                format!("unrecognized configuration parameter \"{n}\""),
                            )
                        })?;
                        settings::check_session_set(def.name, def.default)?;
                        self.check_identity_change(def.name, None, false)?;
                        self.note_setting_change(def.name, false);
                        self.overrides.remove(def.name);
                    }
                }
                self.note_settings_changed();
                command("RESET")
            }
            Plan::Show { name } => {
                let value = self.show(name).ok_or_else(|| {
                    Error::new(
                        SqlState::UNDEFINED_OBJECT,
                        format!("unrecognized configuration parameter \"{name}\""),
                    )
                })?;
                Ok(Outcome::Rows {
                    fields,
                    rows: vec![vec![Value::Text(value)]],
                    tag: RowsTag::Fixed("SHOW".into()),
                })
            }
            Plan::Deallocate { name } => self.deallocate(name.as_deref()),
            Plan::Prepare {
                name,
                sql,
                param_oids,
            } => {
                if name.is_empty() {
                    return Err(Error::syntax("a prepared statement needs a name"));
                }
                self.parse_statement(name.clone(), sql, param_oids)?;
                command("PREPARE")
            }
            Plan::Execute { name, args } => self.execute_prepared(name, args, params),
            Plan::ShowAll => {
                let rows = settings::DEFS
                    .iter()
                    .map(|d| {
                        vec![
                            Value::Text(d.name.to_string()),
                            Value::Text(self.show(d.name).unwrap_or_default()),
                            Value::Text(d.description.to_string()),
                        ]
                    })
                    .collect();
                Ok(Outcome::Rows {
                    fields,
                    rows,
                    tag: RowsTag::Fixed("SHOW".into()),
                })
            }
            Plan::Checkpoint => {
                if self.defer_commits {
                    // Waited for as a task by the caller, like a commit.
                    self.checkpoint_wait = self.engine.request_checkpoint();
                } else {
                    self.engine.checkpoint()?;
                }
                command("CHECKPOINT")
            }
            Plan::Maintenance {
                tag,
                tables,
                analyze,
                notice,
            } => {
                if let Some(notice) = notice {
                    self.warn(Error::new(SqlState::SUCCESSFUL_COMPLETION, notice.clone()));
                }
                if *tag == "VACUUM" && self.txn.as_ref().is_some_and(|t| t.explicit) {
                    return Err(Error::new(
                        SqlState::ACTIVE_SQL_TRANSACTION,
                        "VACUUM cannot run inside a transaction block",
                    ));
                }
                // Only the owner (a superuser, or a role with its privileges) may; others
                // are told each table is skipped, as PostgreSQL does.
                let owner = self.owns_every_table();
                for table in tables {
                    if !owner {
                        self.warn(Error::new(
                            SqlState::WARNING,
                            format!(
                                "skipping \"{}\" --- only table or database owner can {} it",
                                table.def().name,
                                tag.to_ascii_lowercase()
                            ),
                        ));
                    } else if *analyze {
                        self.analyze(table)?;
                    }
                }
                command(tag)
            }
            Plan::CreateTable { def, if_not_exists } => {
                let catalog = &self.engine.txn.catalog;
                if *if_not_exists && catalog.table(&def.name).is_some() {
                    self.txn().create_table(def, true)?;
                    return command("CREATE TABLE");
                }
                // The tables its foreign keys reference keep their writers out while it
                // is created (or, in a transaction block, until the block ends).
                // Each once: two foreign keys to one table must not close its gate twice
                // (the second would wait for the first).
                let mut parents: Vec<Arc<Table>> = Vec::new();
                for parent in def
                    .foreign_keys
                    .iter()
                    .filter_map(|fk| catalog.table_by_id(fk.referenced))
                {
                    if !parents.iter().any(|p| p.id == parent.id) {
                        parents.push(parent);
                    }
                }
                let mut closed = Vec::new();
                for parent in &parents {
                    closed.push(self.keep_referenced_writers_out(parent)?);
                }
                self.txn().create_table(def, *if_not_exists)?;
                drop(closed);
                command("CREATE TABLE")
            }
            Plan::SetConstraints { names, deferred } => {
                self.set_constraints(names.as_deref(), *deferred)
            }
            Plan::AddForeignKey { table, parent, fk } => {
                self.add_foreign_key(table, parent, fk)?;
                command("ALTER TABLE")
            }
            Plan::DropForeignKey { table, name } | Plan::DropCheck { table, name } => {
                self.drop_constraint(table, name)?;
                command("ALTER TABLE")
            }
            Plan::AddCheck { table, check, expr } => {
                self.add_check(table, check, expr)?;
                command("ALTER TABLE")
            }
            Plan::ValidateConstraint { table, name, check } => {
                self.validate_constraint(table, name, check.as_ref())?;
                command("ALTER TABLE")
            }
            Plan::DropTable {
                names,
                if_exists,
                cascade,
            } => {
                self.drop_tables(names, *if_exists, *cascade)?;
                command("DROP TABLE")
            }
            Plan::Explain {
                inner,
                analyze,
                options,
            } => {
                let actual = match (analyze, inner.as_ref()) {
                    (true, Plan::Select(sel)) => {
                        let snapshot = self.statement_snapshot();
                        let started = std::time::Instant::now();
                        let actuals = self.with_executor(snapshot, params, false, |exec| {
                            exec.actuals = Some(Default::default());
                            exec.select(sel)?;
                            Ok(exec.actuals.take().unwrap_or_default().into_inner())
                        })?;
                        Some((actuals, started.elapsed().as_secs_f64() * 1000.0))
                    }
                    // The statement runs, its changes made as without EXPLAIN.
                    (true, Plan::Insert(_) | Plan::Update(_) | Plan::Delete(_)) => {
                        let started = std::time::Instant::now();
                        self.explain_actuals = Some(Default::default());
                        // (Any fields: so that RETURNING's rows come back to be counted.)
                        let ran = self.run_dml(inner, fields.clone(), params);
                        let mut actuals = self.explain_actuals.take().unwrap_or_default();
                        // The statement's own node: the rows it returned (none without
                        // RETURNING, as PostgreSQL counts them).
                        let returned = match ran? {
                            Outcome::WaitForLock => return Ok(Outcome::WaitForLock),
                            Outcome::Rows { rows, .. } => rows.len() as u64,
                            _ => 0,
                        };
                        actuals.add_statement(super::explain::node_id(inner.as_ref()), returned);
                        Some((actuals, started.elapsed().as_secs_f64() * 1000.0))
                    }
                    _ => None,
                };
                let actual = actual.as_ref().map(|(a, ms)| (a, *ms));
                let rows = super::explain::explain(inner, options, actual)
                    .into_iter()
                    .map(|line| vec![Value::Text(line)])
                    .collect();
                Ok(Outcome::Rows {
                    fields,
                    rows,
                    tag: RowsTag::Fixed("EXPLAIN".into()),
                })
            }
            Plan::AddIdentity {
                table,
                column,
                sequence,
            } => {
                self.add_identity(table, *column, sequence)?;
                command("ALTER TABLE")
            }
            Plan::LockTables {
                tables,
                exclusive,
                nowait,
            } => {
                if self.block().is_none() {
                    return Err(Error::new(
                        SqlState::NO_ACTIVE_SQL_TRANSACTION,
                        "LOCK TABLE can only be used in transaction blocks",
                    ));
                }
                for table in tables {
                    if *exclusive {
                        self.txn().close_gate(table)?;
                    } else {
                        self.txn().hold_table(table, *nowait)?;
                    }
                }
                command("LOCK TABLE")
            }
            Plan::Truncate {
                tables,
                cascade,
                restart_identity,
            } => {
                let mut tables = tables.clone();
                if *cascade {
                    // The tables referencing them, and those referencing those.
                    let txn = self.engine.txn.clone();
                    let catalog = &txn.catalog;
                    let mut i = 0;
                    while i < tables.len() {
                        for (child, _) in catalog.referencing(tables[i].id) {
                            if !tables.iter().any(|t| t.id == child.id) {
                                self.warn(Error::new(
                                    SqlState::SUCCESSFUL_COMPLETION,
                                    format!("truncate cascades to table \"{}\"", child.def().name),
                                ));
                                tables.push(child);
                            }
                        }
                        i += 1;
                    }
                }
                let tables = &tables;
                let ids: Vec<TableId> = tables.iter().map(|t| t.id).collect();
                for table in tables {
                    let catalog = &self.engine.txn.catalog;
                    if let Some((child, _)) =
                        foreign_keys::referenced_from(catalog, table.id, &ids).first()
                    {
                        return Err(Error::unsupported(
                            "cannot truncate a table referenced in a foreign key constraint",
                        )
                        .with_detail(format!(
                            "Table \"{child}\" references \"{}\".",
                            table.def().name
                        ))
                        .with_hint(format!(
                            "Truncate table \"{child}\" at the same time, or use TRUNCATE ... CASCADE."
                        )));
                    }
                }
                for table in tables {
                    self.txn().close_gate(table)?;
                }
                let t = self.txn();
                for table in tables {
                    if t.writes.has_marks()
                        && t.writes.table(table.id).is_some_and(|w| w.bulk.is_some())
                    {
                        return Err(Error::unsupported(
                            "TRUNCATE of a table loaded by COPY in the same transaction is not supported after a SAVEPOINT",
                        ));
                    }
                    t.writes.truncate(table);
                }
                if *restart_identity {
                    // The sequences restart at once (a rollback sets them back).
                    for table in tables {
                        for seq in table.def().owned_sequences.clone() {
                            let Some(before) = self.engine.txn.catalog.sequence(&seq) else {
                                continue;
                            };
                            let next = before.peek_next();
                            self.restart_sequence(&seq, None)?;
                            self.txn().sequence_undo.push((seq, next));
                        }
                    }
                }
                command("TRUNCATE TABLE")
            }
            Plan::AddPrimaryKey {
                table,
                name,
                columns,
            } => {
                self.add_primary_key(table, name.clone(), columns)?;
                command("ALTER TABLE")
            }
            Plan::DropPrimaryKey { table, name } => {
                self.drop_primary_key(table, name)?;
                command("ALTER TABLE")
            }
            Plan::CreateIndex {
                table,
                def,
                if_not_exists,
            } => {
                self.create_index(table, def.clone(), *if_not_exists)?;
                command(if def.constraint {
                    "ALTER TABLE"
                } else {
                    "CREATE INDEX"
                })
            }
            Plan::CreateSequence {
                name,
                options,
                if_not_exists,
                owned_by,
            } => {
                self.create_sequence(name, *options, *if_not_exists, owned_by.as_ref())?;
                command("CREATE SEQUENCE")
            }
            Plan::Role(stmt) => self.run_role_statement(stmt),
            Plan::CreateView { view, replace } => {
                self.create_view(view, *replace)?;
                command("CREATE VIEW")
            }
            Plan::DropView {
                names,
                if_exists,
                cascade,
            } => {
                self.drop_views(names, *if_exists, *cascade)?;
                command("DROP VIEW")
            }
            Plan::DropSequence { names, if_exists } => {
                for name in names {
                    self.drop_sequence(name, *if_exists)?;
                }
                command("DROP SEQUENCE")
            }
            Plan::SequenceOwner { name, owned_by } => {
                self.set_sequence_owner(name, owned_by.as_ref())?;
                command("ALTER SEQUENCE")
            }
            Plan::RestartSequence { name, at } => {
                self.refuse_in_block("ALTER SEQUENCE", None)?;
                self.restart_sequence(name, *at)?;
                command("ALTER SEQUENCE")
            }
            Plan::AlterSequence {
                name,
                changes,
                restart,
            } => {
                self.refuse_in_block("ALTER SEQUENCE", None)?;
                self.alter_sequence(name, changes, *restart)?;
                command("ALTER SEQUENCE")
            }
            Plan::AddColumn {
                table,
                column,
                existing_rows,
                if_not_exists,
                foreign_key,
                unique,
            } => {
                self.add_column(
                    table,
                    column.clone(),
                    existing_rows.as_ref(),
                    *if_not_exists,
                    foreign_key.as_ref(),
                )?;
                if let Some(unique) = unique {
                    // Over the rows there, which hold the column's default.
                    self.create_index(table, unique.clone(), false)?;
                }
                command("ALTER TABLE")
            }
            Plan::Comment {
                table,
                column,
                comment,
            } => {
                let (column, comment) = (*column, comment.clone());
                self.alter_table_definition(table, "COMMENT", |current| {
                    let mut new_def = current.clone();
                    let slot =
                        match column {
                            None => &mut new_def.description,
                            Some(c) => match new_def.columns.get_mut(c) {
                                Some(col) if !col.dropped => &mut col.description,
                                _ => return Err(Error::new(
                                    SqlState::OBJECT_NOT_IN_PREREQUISITE_STATE,
                                    "the table changed while the comment was planned; run it again",
                                )),
                            },
                        };
                    *slot = comment;
                    Ok(new_def)
                })?;
                command("COMMENT")
            }
            Plan::Rename { table, def } => {
                let old_name = table.def().name.clone();
                let in_block = self.changes_in_block(table);
                let renamed = def.clone();
                self.alter_table_definition(table, "ALTER TABLE", |current| {
                    let mut new_def = current.clone();
                    new_def.name = renamed.name;
                    for (c, r) in new_def.columns.iter_mut().zip(renamed.columns) {
                        c.name = r.name;
                    }
                    Ok(new_def)
                })?;
                if in_block && def.name != old_name {
                    // The block's new name is the table's from now (others looking the
                    // table up by it wait at its gate); a rollback gives the old back.
                    self.engine.txn.catalog.rename_table(&old_name);
                }
                command("ALTER TABLE")
            }
            Plan::DropColumn { table, def } => {
                let planned = def.clone();
                self.alter_table_definition(table, "ALTER TABLE", |current| {
                    // Planned against this definition: anything else re-plans.
                    if current.columns.len() != planned.columns.len() {
                        return Err(Error::new(
                            SqlState::OBJECT_NOT_IN_PREREQUISITE_STATE,
                            "the table changed while the statement was planned",
                        ));
                    }
                    Ok(planned)
                })?;
                command("ALTER TABLE")
            }
            Plan::SetNotNull {
                table,
                column,
                not_null,
            } => {
                let (column, not_null) = (*column, *not_null);
                // With the table's writers kept out: no NULL may remain, committed or
                // this transaction's.
                let check = |session: &mut Self| {
                    if !not_null || !session.column_has_null(table, column)? {
                        return Ok(());
                    }
                    let def = table.def();
                    Err(Error::new(
                        SqlState::NOT_NULL_VIOLATION,
                        format!(
                            "column \"{}\" of relation \"{}\" contains null values",
                            def.columns[column].name, def.name
                        ),
                    )
                    .with_table(def.name.clone())
                    .with_column(def.columns[column].name.clone()))
                };
                self.alter_table_definition_checked(table, "ALTER TABLE", check, |current| {
                    let mut new_def = current.clone();
                    new_def.columns[column].not_null = not_null;
                    Ok(new_def)
                })?;
                command("ALTER TABLE")
            }
            Plan::SetColumnType {
                table,
                column,
                data_type,
                max_chars,
            } => {
                let (column, data_type, max_chars) = (*column, *data_type, *max_chars);
                // With the table's writers kept out: every value must fit the new type.
                let check = |session: &mut Self| match max_chars {
                    Some(n) => session.column_values_fit(table, column, n, data_type),
                    None => Ok(()),
                };
                self.alter_table_definition_checked(table, "ALTER TABLE", check, |current| {
                    let mut new_def = current.clone();
                    new_def.columns[column].data_type = data_type;
                    Ok(new_def)
                })?;
                command("ALTER TABLE")
            }
            Plan::RewriteColumnType {
                table,
                column,
                data_type,
                convert,
            } => {
                self.rewrite_column_type(table, *column, *data_type, convert)?;
                command("ALTER TABLE")
            }
            Plan::SetColumnDefault {
                table,
                column,
                default,
            } => {
                let (column, default) = (*column, default.clone());
                self.alter_table_definition(table, "ALTER TABLE", |current| {
                    let mut new_def = current.clone();
                    new_def.columns[column].default = default;
                    Ok(new_def)
                })?;
                command("ALTER TABLE")
            }
            Plan::DropIndex {
                indexes,
                constraint,
                missing,
            } => {
                for name in missing {
                    self.skipping("index", name);
                }
                for (table, name) in indexes {
                    self.drop_index(table, name, *constraint)?;
                }
                command(if *constraint {
                    "ALTER TABLE"
                } else {
                    "DROP INDEX"
                })
            }
        }
    }

    /// Keep writers out of `table` for a catalog change logged on its own: its write gate
    /// closed, or nothing to close when this transaction block created the table (nobody
    /// else sees it until the block commits, and a rollback drops it with its indexes).
    /// Refused (0A000) inside any other transaction block.
    fn keep_writers_out<'t>(&self, table: &'t Table, what: &str) -> Result<Option<Closed<'t>>> {
        if let Some(t) = self.txn.as_ref().filter(|t| t.created.contains(&table.id)) {
            if t.writes.table(table.id).is_some_and(|w| w.bulk.is_some()) {
                return Err(Error::unsupported(format!(
                    "{what} on a table loaded by COPY in the same transaction is not supported yet"
                )));
            }
            if t.writes.has_marks() {
                return Err(Error::unsupported(format!(
                    "{what} after a SAVEPOINT on a table created in the same transaction is not supported yet"
                )));
            }
            return Ok(None);
        }
        self.refuse_in_block(what, Some(table))?;
        Ok(Some(close_gate_for_rebuild(&self.slot, table)?))
    }

    /// Keep the writers of `parent` out while a foreign key that references it is added:
    /// their plans do not know the constraint. Nothing to keep out of a table this
    /// transaction created; inside a transaction block the gate stays closed until the
    /// block ends (the constraint is seen by others only then).
    fn keep_referenced_writers_out<'t>(
        &mut self,
        parent: &'t Arc<Table>,
    ) -> Result<Option<Closed<'t>>> {
        let in_block = self.simple_query_statements > 1;
        let t = self.txn();
        if t.created.contains(&parent.id) {
            return Ok(None);
        }
        if t.explicit || in_block {
            t.close_gate(parent)?;
            return Ok(None);
        }
        Ok(Some(close_gate_for_rebuild(&self.slot, parent)?))
    }

    /// ALTER TABLE ... ADD FOREIGN KEY: with the writers of both tables kept out, every
    /// row must find the row it references; then the definition changes.
    fn add_foreign_key(
        &mut self,
        table: &Arc<Table>,
        parent: &Arc<Table>,
        fk: &crate::storage::ForeignKeyDef,
    ) -> Result<()> {
        let parent_closed = if parent.id == table.id {
            None
        } else {
            self.keep_referenced_writers_out(parent)?
        };
        let validate = |session: &mut Self| match fk.validated {
            true => session.rows_reference(table, fk),
            false => Ok(()),
        };
        let added = self.alter_table_definition_checked(
            table,
            "ALTER TABLE ... ADD FOREIGN KEY",
            validate,
            |current| {
                if current.has_constraint(&fk.name) {
                    return Err(duplicate_constraint(&fk.name, &current.name));
                }
                let mut new_def = current.clone();
                new_def.foreign_keys.push(fk.clone());
                Ok(new_def)
            },
        );
        drop(parent_closed);
        added
    }

    /// DROP TABLE. With CASCADE, the foreign keys that reference the tables go too, and
    /// the views that read them (directly or through other views), with the tables when
    /// the transaction commits.
    fn drop_tables(&mut self, names: &[String], if_exists: bool, cascade: bool) -> Result<()> {
        let engine = self.engine.clone();
        let catalog = &engine.txn.catalog;
        let mut tables: Vec<Arc<Table>> = Vec::new();
        for n in names {
            let found = {
                let hidden = self.hidden_tables();
                catalog.table_seen(n, &hidden)
            };
            match found {
                Some(t) => {
                    if !tables.iter().any(|x| x.id == t.id) {
                        tables.push(t);
                    }
                }
                None if if_exists => self.skipping("table", n),
                None => {
                    return Err(Error::new(
                        SqlState::UNDEFINED_TABLE,
                        format!("table \"{n}\" does not exist"),
                    ))
                }
            }
        }
        let ids: Vec<TableId> = tables.iter().map(|t| t.id).collect();
        let mut cascaded: Vec<(Arc<Table>, String, String)> = Vec::new();
        let mut views: Vec<String> = Vec::new();
        let mut notices: Vec<String> = Vec::new();
        for table in &tables {
            let name = table.def().name.clone();
            let referencing = foreign_keys::referenced_from(catalog, table.id, &ids);
            let readers = catalog.dependent_views_deep(&name, &self.hidden_tables());
            if !cascade {
                // As PostgreSQL lists them: the constraints, then the views as found.
                let mut detail: Vec<String> = referencing
                    .iter()
                    .map(|(child, fk)| {
                        format!("constraint {fk} on table {child} depends on table {name}")
                    })
                    .collect();
                detail.extend(dependency_lines(catalog, &readers));
                if detail.is_empty() {
                    continue;
                }
                return Err(Error::new(
                    SqlState::DEPENDENT_OBJECTS_STILL_EXIST,
                    format!("cannot drop table {name} because other objects depend on it"),
                )
                .with_detail(detail.join("\n"))
                .with_hint("Use DROP ... CASCADE to drop the dependent objects too."));
            }
            for (child, fk) in referencing {
                if let Some(t) = catalog.table(&child) {
                    notices.push(format!("drop cascades to constraint {fk} on table {child}"));
                    cascaded.push((t, fk, child));
                }
            }
            for (view, _) in &readers.found {
                if !views.contains(view) {
                    notices.push(format!("drop cascades to view {view}"));
                }
            }
            for view in readers.drop_order {
                if !views.contains(&view) {
                    views.push(view);
                }
            }
        }
        self.cascade_notice(notices);
        for view in &views {
            self.drop_view(view)?;
        }
        for table in &tables {
            self.txn().drop_table(table)?;
        }
        // After the drops: the changes belong to the same transaction.
        for (child, fk, _) in &cascaded {
            let fk = fk.clone();
            self.alter_table_definition(child, "ALTER TABLE", |current| {
                let mut new_def = current.clone();
                new_def.foreign_keys.retain(|f| f.name != fk);
                Ok(new_def)
            })?;
        }
        Ok(())
    }

    /// CREATE [OR REPLACE] VIEW. A new view is created by the transaction: seen by others
    /// once it commits, gone if it rolls back. Replacing one the transaction created
    /// logs the new definition in its place; replacing a committed one is a change
    /// logged on its own, so refused inside a transaction block.
    fn create_view(&mut self, view: &crate::storage::View, replace: bool) -> Result<()> {
        let engine = self.engine.clone();
        let catalog = &engine.txn.catalog;
        let _ddl = catalog.ddl_lock();
        // Replaced: the same view (its OID) still, else a new one.
        let existing = self.visible_view(&view.name);
        let same = existing.as_ref().is_some_and(|v| v.id == view.id);
        let dropped = self.txn.as_ref().map_or(&[][..], |t| &t.dropped[..]);
        let taken = catalog.relation_exists_seen(&view.name, &|id| dropped.contains(&id));
        if (replace && !same) || (!replace && taken) {
            return Err(Error::new(
                SqlState::DUPLICATE_TABLE,
                format!("relation \"{}\" already exists", view.name),
            ));
        }
        if !same {
            let mut view = view.clone();
            view.id = catalog.allocate_table_id();
            return self.txn().create_view(view);
        }
        let own = self
            .txn
            .as_ref()
            .is_some_and(|t| t.created.contains(&view.id));
        if !own {
            self.refuse_in_block("CREATE OR REPLACE VIEW of an existing view", None)?;
        }
        let mut payload = crate::wal::Writer::default();
        view.put(&mut payload);
        let flight = ddl::commit_catalog_change(
            &engine.txn,
            RecordKind::CreateView,
            &payload.buf,
            self.sync_level(),
            |_| catalog.create_view(view.clone()),
        )?;
        self.finish_catalog_change(flight);
        Ok(())
    }

    /// The view named `name`, if this transaction sees it.
    fn visible_view(&self, name: &str) -> Option<Arc<crate::storage::View>> {
        self.engine
            .txn
            .catalog
            .view_seen(name, &self.hidden_tables())
    }

    /// The sequence named `name`, if this transaction sees it.
    fn visible_sequence(&self, name: &str) -> Option<Arc<crate::storage::Sequence>> {
        self.engine
            .txn
            .catalog
            .sequence_seen(name, &self.hidden_tables())
    }

    /// DROP VIEW: each view goes when the transaction commits (this transaction no
    /// longer sees it). With CASCADE, the views that read it (directly or through
    /// others) go first.
    fn drop_views(&mut self, names: &[String], if_exists: bool, cascade: bool) -> Result<()> {
        let engine = self.engine.clone();
        let catalog = &engine.txn.catalog;
        let mut dropping: Vec<String> = Vec::new();
        let mut notices = Vec::new();
        for name in names {
            if self.visible_view(name).is_none() {
                if if_exists {
                    self.skipping("view", name);
                    continue;
                }
                return Err(Error::new(
                    SqlState::UNDEFINED_TABLE,
                    format!("view \"{name}\" does not exist"),
                ));
            }
            let mut readers = catalog.dependent_views_deep(name, &self.hidden_tables());
            if !cascade {
                // Views the statement drops too are no obstacle (dropped first).
                readers.found.retain(|(v, _)| !names.contains(v));
            }
            if !cascade && !readers.found.is_empty() {
                return Err(Error::new(
                    SqlState::DEPENDENT_OBJECTS_STILL_EXIST,
                    format!("cannot drop view {name} because other objects depend on it"),
                )
                .with_detail(dependency_lines(catalog, &readers).join("\n"))
                .with_hint("Use DROP ... CASCADE to drop the dependent objects too."));
            }
            for (view, _) in &readers.found {
                if !dropping.contains(view) && !names.contains(view) {
                    notices.push(format!("drop cascades to view {view}"));
                }
            }
            for view in readers.drop_order {
                if !dropping.contains(&view) {
                    dropping.push(view);
                }
            }
            if !dropping.contains(name) {
                dropping.push(name.clone());
            }
        }
        self.cascade_notice(notices);
        for view in &dropping {
            self.drop_view(view)?;
        }
        Ok(())
    }

    /// Drop one view (none reads it any more) when the transaction commits.
    fn drop_view(&mut self, name: &str) -> Result<()> {
        let engine = self.engine.clone();
        let catalog = &engine.txn.catalog;
        let _ddl = catalog.ddl_lock();
        let Some(view) = self.visible_view(name) else {
            return Ok(());
        };
        refuse_dependents(catalog, &self.hidden_tables(), "view", name)?;
        self.txn().drop_relation(view.id);
        Ok(())
    }

    /// PostgreSQL's NOTICE of what a DROP ... CASCADE also drops: the one object, or a
    /// count and each in the DETAIL.
    fn cascade_notice(&mut self, notices: Vec<String>) {
        match notices.as_slice() {
            [] => {}
            [one] => self.warn(Error::new(SqlState::SUCCESSFUL_COMPLETION, one.clone())),
            many => self.warn(
                Error::new(
                    SqlState::SUCCESSFUL_COMPLETION,
                    format!("drop cascades to {} other objects", many.len()),
                )
                .with_detail(many.join("\n")),
            ),
        }
    }

    /// ALTER TABLE ... DROP CONSTRAINT of a foreign key or a CHECK constraint.
    fn drop_constraint(&mut self, table: &Arc<Table>, name: &str) -> Result<()> {
        self.alter_table_definition(table, "ALTER TABLE", |current| {
            let mut new_def = current.clone();
            new_def.foreign_keys.retain(|f| f.name != name);
            new_def.checks.retain(|c| c.name != name);
            Ok(new_def)
        })
    }

    /// ALTER TABLE ... ADD CHECK: unless NOT VALID, every row must pass it (checked with
    /// the table's writers kept out), as in PostgreSQL.
    fn add_check(
        &mut self,
        table: &Arc<Table>,
        check: &crate::storage::CheckDef,
        expr: &Expr,
    ) -> Result<()> {
        let validate = |session: &mut Self| match check.validated {
            true => session.rows_pass_check(table, &check.name, expr),
            false => Ok(()),
        };
        self.alter_table_definition_checked(table, "ALTER TABLE", validate, |current| {
            if current.has_constraint(&check.name) {
                return Err(duplicate_constraint(&check.name, &current.name));
            }
            let mut new_def = current.clone();
            new_def.checks.push(check.clone());
            Ok(new_def)
        })
    }

    /// ALTER TABLE ... VALIDATE CONSTRAINT: the rows there must pass a constraint added
    /// NOT VALID; then it is valid. One already valid is left as it is.
    fn validate_constraint(
        &mut self,
        table: &Arc<Table>,
        name: &str,
        check: Option<&Expr>,
    ) -> Result<()> {
        let def = table.def();
        let fk = def.foreign_keys.iter().find(|f| f.name == name).cloned();
        let validated = match (&fk, check) {
            (Some(fk), _) => fk.validated,
            (None, _) => def.checks.iter().any(|c| c.name == name && c.validated),
        };
        if validated {
            return Ok(());
        }
        let parent = match &fk {
            Some(fk) if fk.referenced != table.id => Some(
                self.engine
                    .txn
                    .catalog
                    .table_by_id(fk.referenced)
                    .ok_or_else(|| Error::internal("a referenced table went away"))?,
            ),
            _ => None,
        };
        let parent_closed = match &parent {
            Some(p) => self.keep_referenced_writers_out(p)?,
            None => None,
        };
        let validate = |session: &mut Self| match (&fk, check) {
            (Some(fk), _) => session.rows_reference(table, fk),
            (None, Some(expr)) => session.rows_pass_check(table, name, expr),
            (None, None) => Err(Error::internal("a CHECK constraint without its expression")),
        };
        let result =
            self.alter_table_definition_checked(table, "ALTER TABLE", validate, |current| {
                let mut new_def = current.clone();
                for f in new_def.foreign_keys.iter_mut().filter(|f| f.name == name) {
                    f.validated = true;
                }
                for c in new_def.checks.iter_mut().filter(|c| c.name == name) {
                    c.validated = true;
                }
                Ok(new_def)
            });
        drop(parent_closed);
        result
    }

    /// 23503 unless every row of `table` (its newest committed versions, or this
    /// transaction's own) finds the row its foreign key `fk` references.
    fn rows_reference(
        &mut self,
        table: &Arc<Table>,
        fk: &crate::storage::ForeignKeyDef,
    ) -> Result<()> {
        let snapshot = self.statement_snapshot();
        let validated = self.with_executor(snapshot, &[], false, |exec| {
            exec.validate_foreign_key(table, fk)
        });
        match validated {
            Ok(()) => Ok(()),
            Err(Stop::Error(e)) => Err(e),
            Err(Stop::WaitForLock) => Err(Error::internal("a validation stopped at a lock")),
        }
    }

    /// 23514 unless every row of `table` (its newest committed versions, or this
    /// transaction's own) passes the CHECK constraint `name` (`expr`).
    fn rows_pass_check(&mut self, table: &Arc<Table>, name: &str, expr: &Expr) -> Result<()> {
        let snapshot = self.statement_snapshot();
        let failed = self.with_executor(snapshot, &[], false, |exec| {
            let mut after: Option<crate::storage::Key> = None;
            loop {
                let (rows, last) = exec.newest_rows(table, after.as_deref(), 4096)?;
                for row in &rows {
                    if exec.eval(expr, row)? == Value::Bool(false) {
                        return Ok(true);
                    }
                }
                match last {
                    Some(k) => after = Some(k),
                    None => return Ok(false),
                }
            }
        });
        let failed = match failed {
            Ok(failed) => failed,
            Err(Stop::Error(e)) => return Err(e),
            Err(Stop::WaitForLock) => {
                return Err(Error::internal("a validation stopped at a lock"))
            }
        };
        if failed {
            let table_name = table.def().name.clone();
            return Err(Error::new(
                SqlState::CHECK_VIOLATION,
                format!("check constraint \"{name}\" of relation \"{table_name}\" is violated by some row"),
            )
            .with_table(table_name)
            .with_constraint(name.to_string()));
        }
        Ok(())
    }

    /// Whether a row of `table` (its newest committed versions, or this transaction's
    /// own) holds NULL in `column`.
    fn column_has_null(&mut self, table: &Table, column: usize) -> Result<bool> {
        let snapshot = self.statement_snapshot();
        self.with_executor(snapshot, &[], false, |exec| {
            let mut after: Option<crate::storage::Key> = None;
            loop {
                let (rows, last) = exec.newest_rows(table, after.as_deref(), 4096)?;
                if rows
                    .iter()
                    .any(|r| r.get(column).is_none_or(Value::is_null))
                {
                    return Ok(true);
                }
                match last {
                    Some(k) => after = Some(k),
                    None => return Ok(false),
                }
            }
        })
    }

    /// ALTER COLUMN ... TYPE to a string type of `max_chars`: every value of the column
    /// (the newest committed, or this transaction's) must fit, as PostgreSQL's rewrite
    /// would check (22001); one longer only by blanks, which PostgreSQL would cut, is
    /// refused (0A000): the rows are not rewritten.
    fn column_values_fit(
        &mut self,
        table: &Table,
        column: usize,
        max_chars: u32,
        to: DataType,
    ) -> Result<()> {
        let snapshot = self.statement_snapshot();
        let fits = self.with_executor(snapshot, &[], false, |exec| {
            let mut after: Option<crate::storage::Key> = None;
            loop {
                let (rows, last) = exec.newest_rows(table, after.as_deref(), 4096)?;
                for row in &rows {
                    let Some(Value::Text(s)) = row.get(column) else {
                        continue;
                    };
                    if s.chars().count() > max_chars as usize {
                        let blanks_over = s.chars().skip(max_chars as usize).all(|c| c == ' ');
                        return Ok(Some(blanks_over));
                    }
                }
                match last {
                    Some(k) => after = Some(k),
                    None => return Ok(None),
                }
            }
        })?;
        match fits {
            None => Ok(()),
            Some(true) => Err(Error::unsupported(
                "ALTER COLUMN ... TYPE that would cut the trailing blanks of values is not supported yet",
            )),
            Some(false) => Err(Error::new(
                SqlState::STRING_DATA_RIGHT_TRUNCATION,
                format!(
                    "value too long for type {}",
                    super::pg_catalog::format_type(to.oid(), to.typmod().into())
                ),
            )),
        }
    }

    /// Whether a change of `table`'s definition belongs to the open transaction block,
    /// logged with its commit (a table the block did not create; the block's own are
    /// changed at once, and dropped if it rolls back).
    fn changes_in_block(&self, table: &Table) -> bool {
        let created = self
            .txn
            .as_ref()
            .is_none_or(|t| t.created.contains(&table.id));
        !created && self.in_block(Some(table))
    }

    /// Whether a relation (or index) is named `name`, not counting those this session's
    /// transaction dropped (it may give their names to new ones).
    fn relation_taken(&self, name: &str) -> bool {
        let dropped = self.txn.as_ref().map_or(&[][..], |t| &t.dropped[..]);
        self.engine
            .txn
            .catalog
            .relation_exists_seen(name, &|id| dropped.contains(&id))
    }

    /// Whether the session is inside a transaction block (one that has begun, written,
    /// created or dropped, or passed `table`'s write gate), or runs a statement beside
    /// others in one query string.
    fn in_block(&self, table: Option<&Table>) -> bool {
        let in_block = self.txn.as_ref().is_some_and(|t| {
            t.explicit
                || !t.writes.is_empty()
                || table.is_some_and(|table| t.writes.passed_gate(table.id))
                || !t.created.is_empty()
                || !t.dropped.is_empty()
        });
        in_block || self.simple_query_statements > 1
    }

    /// A serial column's sequence `name` becomes one as CREATE SEQUENCE makes, with the
    /// options PostgreSQL gives a serial column's of its type, where it stands; logged
    /// and applied at once.
    fn give_sequence_id(&mut self, name: &str) -> Result<Arc<crate::storage::Sequence>> {
        let engine = self.engine.clone();
        let catalog = &engine.txn.catalog;
        let column_type = self
            .sequence_owners(name)
            .iter()
            .find_map(|t| {
                // (As committed: the block may have dropped the column's default.)
                let def = t.committed_def();
                def.columns
                    .iter()
                    .find(|c| c.default.as_deref() == Some(format!("nextval('{name}')").as_str()))
                    .map(|c| c.data_type)
            })
            .unwrap_or(DataType::Int8);
        let options = crate::storage::SequenceOptions::defaults(column_type);
        let id = catalog.allocate_table_id();
        let flight = ddl::commit_catalog_change(
            &engine.txn,
            RecordKind::CreateSequence,
            &records::encode_give_sequence_id(name, id, &options),
            self.sync_level(),
            |_| {
                catalog.give_sequence_id(name, id, options);
            },
        )?;
        self.finish_catalog_change(flight);
        catalog
            .sequence(name)
            .ok_or_else(|| Error::internal("a sequence given an id is gone"))
    }

    /// Refuse a catalog change that is logged on its own inside a transaction block (one
    /// that has begun, written, created or dropped, or passed `table`'s write gate).
    fn refuse_in_block(&self, what: &str, table: Option<&Table>) -> Result<()> {
        if self.in_block(table) {
            return Err(Error::unsupported(format!(
                "{what} inside a transaction block is not supported yet"
            ))
            .with_hint("Run it as a statement of its own, outside BEGIN ... COMMIT."));
        }
        Ok(())
    }

    /// Give `table` the definition `change` makes of its current one (its indexes
    /// unchanged), logged as a SetIndexes record, with the table's writers kept out from
    /// before `change` reads the table until the change is made.
    fn alter_table_definition(
        &mut self,
        table: &Arc<Table>,
        what: &str,
        change: impl FnOnce(&TableDef) -> Result<TableDef>,
    ) -> Result<()> {
        self.alter_table_definition_checked(table, what, |_| Ok(()), change)
    }

    /// [`Session::alter_table_definition`], once `check` (of the table's rows, with its
    /// writers kept out) passes.
    fn alter_table_definition_checked(
        &mut self,
        table: &Arc<Table>,
        what: &str,
        check: impl FnOnce(&mut Self) -> Result<()>,
        change: impl FnOnce(&TableDef) -> Result<TableDef>,
    ) -> Result<()> {
        if self.changes_in_block(table) {
            // Others wait for the table until this transaction ends; the change is
            // logged with its commit.
            self.txn().close_gate(table)?;
            check(self)?;
            let new_def = {
                let _ddl = self.engine.txn.catalog.ddl_lock();
                change(&table.def())?
            };
            self.txn().change_definition(table, new_def);
            return Ok(());
        }
        let closed = self.keep_writers_out(table, what)?;
        check(self)?;
        let txn = self.engine.txn.clone();
        let flight = {
            let _ddl = txn.catalog.ddl_lock();
            let new_def = change(&table.def())?;
            ddl::commit_indexes(
                &txn,
                table,
                new_def,
                IndexChange::Definition,
                self.sync_level(),
            )?
        };
        drop(closed);
        self.finish_catalog_change(flight);
        Ok(())
    }

    /// ALTER TABLE ... ADD COLUMN: a change of the definition alone. The rows there keep
    /// their images and read the column as the value its default has now (or NULL). With
    /// REFERENCES, that value must be in the referenced table if any row is there.
    fn add_column(
        &mut self,
        table: &Arc<Table>,
        mut column: crate::storage::Column,
        existing_rows: Option<&Expr>,
        if_not_exists: bool,
        foreign_key: Option<&crate::storage::ForeignKeyDef>,
    ) -> Result<()> {
        let value = match existing_rows {
            None => Value::Null,
            Some(e) => {
                let v = self.with_executor(Lsn::ZERO, &[], false, |exec| exec.eval(e, &[]))?;
                types::cast_assign(v, &column.data_type)?
            }
        };
        if !value.is_null() {
            let mut text = Vec::new();
            types::encode_text(&value, &mut text);
            column.missing = Some(String::from_utf8_lossy(&text).into_owned());
        }
        // Rows this transaction wrote are held at the table's width of then.
        if self
            .txn
            .as_ref()
            .is_some_and(|t| t.writes.table(table.id).is_some())
        {
            return Err(Error::unsupported(
                "ADD COLUMN to a table the same transaction has written is not supported yet",
            ));
        }
        // The referenced table's writers are kept out while the column is added (in a
        // transaction block, until it ends), so the value found stays there.
        let parent = foreign_key
            .map(|fk| {
                self.engine
                    .txn
                    .catalog
                    .table_by_id(fk.referenced)
                    .ok_or_else(|| Error::internal("a referenced table went away"))
            })
            .transpose()?;
        let parent_closed = match &parent {
            Some(p) if p.id != table.id => self.keep_referenced_writers_out(p)?,
            _ => None,
        };
        let missing_reference = match foreign_key {
            Some(fk) if !value.is_null() => {
                let snapshot = self.statement_snapshot();
                let values = [value.clone()];
                let found = self.with_executor(snapshot, &[], false, |exec| {
                    exec.referenced_value_exists(fk, &values)
                });
                match found {
                    Ok(found) => !found,
                    Err(Stop::Error(e)) => return Err(e),
                    Err(Stop::WaitForLock) => {
                        return Err(Error::internal("a validation stopped at a lock"))
                    }
                }
            }
            _ => false,
        };
        let refused = |session: &mut Self| {
            let (Some(fk), Some(parent)) = (foreign_key, &parent) else {
                return Ok(());
            };
            if !missing_reference || !session.has_rows(table)? {
                return Ok(());
            }
            let mut with_column = (*table.def()).clone();
            with_column.columns.push(column.clone());
            Err(foreign_keys::not_present(
                &with_column,
                &parent.def(),
                fk,
                std::slice::from_ref(&value),
            ))
        };
        let added = column.clone();
        let result = self.alter_table_definition_checked(table, "ALTER TABLE", refused, |def| {
            let column = added;
            if def.column_index(&column.name).is_some() {
                if if_not_exists {
                    return Ok(def.clone());
                }
                return Err(Error::new(
                    SqlState::DUPLICATE_COLUMN,
                    format!(
                        "column \"{}\" of relation \"{}\" already exists",
                        column.name, def.name
                    ),
                ));
            }
            // With the gate closed: no row arrives while this looks.
            if column.not_null && value.is_null() && committed_rows_exist(table)? {
                return Err(Error::new(
                    SqlState::NOT_NULL_VIOLATION,
                    format!(
                        "column \"{}\" of relation \"{}\" contains null values",
                        column.name, def.name
                    ),
                )
                .with_table(def.name.clone())
                .with_column(column.name.clone()));
            }
            let mut new_def = def.clone();
            new_def.columns.push(column);
            new_def.foreign_keys.extend(foreign_key.cloned());
            Ok(new_def)
        });
        drop(parent_closed);
        result
    }

    /// Whether `table` has a row: committed, or this transaction's.
    fn has_rows(&self, table: &Table) -> Result<bool> {
        let own = self.txn.as_ref().and_then(|t| t.writes.table(table.id));
        if own.is_some_and(|o| !o.has_no_rows()) {
            return Ok(true);
        }
        committed_rows_exist(table)
    }

    /// CREATE SEQUENCE, logged on its own (not inside a transaction block).
    /// ALTER TABLE ... ADD GENERATED BY DEFAULT AS IDENTITY: the sequence is created,
    /// owned by the column, and becomes its default (an identity's).
    fn add_identity(&mut self, table: &Arc<Table>, column: usize, sequence: &Plan) -> Result<()> {
        let Plan::CreateSequence { name, options, .. } = sequence else {
            return Err(Error::internal("identity without a sequence"));
        };
        let def = table.def();
        let c = &def.columns[column];
        let refuse = |what: &str| {
            Err(Error::new(
                SqlState::OBJECT_NOT_IN_PREREQUISITE_STATE,
                format!("column \"{}\" of relation \"{}\" {what}", c.name, def.name),
            ))
        };
        if c.identity {
            return refuse("is already an identity column");
        }
        if c.default.is_some() {
            return refuse("already has a default value");
        }
        if !c.not_null {
            return refuse("must be declared NOT NULL before identity can be added");
        }
        self.create_sequence(name, *options, false, Some(&(table.clone(), column)))?;
        let default = format!("nextval('{name}')");
        self.alter_table_definition(table, "ALTER TABLE", |current| {
            let mut new_def = current.clone();
            new_def.columns[column].default = Some(default.clone());
            new_def.columns[column].identity = true;
            Ok(new_def)
        })
    }

    /// CREATE SEQUENCE: created by the transaction, seen by others once it commits.
    fn create_sequence(
        &mut self,
        name: &str,
        options: crate::storage::SequenceOptions,
        if_not_exists: bool,
        owned_by: Option<&(Arc<Table>, usize)>,
    ) -> Result<()> {
        let engine = self.engine.clone();
        let catalog = &engine.txn.catalog;
        {
            let _ddl = catalog.ddl_lock();
            if self.relation_taken(name) {
                if if_not_exists {
                    self.skipping_existing("relation", name);
                    return Ok(());
                }
                return Err(Error::new(
                    SqlState::DUPLICATE_TABLE,
                    format!("relation \"{name}\" already exists"),
                ));
            }
            self.txn().create_sequence(name, options)?;
        }
        if let Some(owner) = owned_by {
            self.set_sequence_owner(name, Some(owner))?;
        }
        Ok(())
    }

    /// The tables whose definitions list sequence `name` as theirs.
    fn sequence_owners(&self, name: &str) -> Vec<Arc<Table>> {
        let catalog = &self.engine.txn.catalog;
        catalog
            .table_names()
            .iter()
            .filter_map(|n| catalog.table(n))
            .filter(|t| t.def().owned_sequences.iter().any(|s| s == name))
            .collect()
    }

    /// ALTER SEQUENCE ... OWNED BY: the sequence moves to `owner`'s list of the sequences
    /// it drops with it (or to none).
    fn set_sequence_owner(
        &mut self,
        name: &str,
        owner: Option<&(Arc<Table>, usize)>,
    ) -> Result<()> {
        for table in self.sequence_owners(name) {
            if owner.is_some_and(|(t, _)| t.id == table.id) {
                return Ok(());
            }
            self.alter_table_definition(&table, "ALTER SEQUENCE", |current| {
                let mut new_def = current.clone();
                new_def.owned_sequences.retain(|s| s != name);
                Ok(new_def)
            })?;
        }
        if let Some((table, _)) = owner {
            self.alter_table_definition(table, "ALTER SEQUENCE", |current| {
                let mut new_def = current.clone();
                new_def.owned_sequences.push(name.to_string());
                Ok(new_def)
            })?;
        }
        Ok(())
    }

    /// DROP SEQUENCE of one sequence.
    fn drop_sequence(&mut self, name: &str, if_exists: bool) -> Result<()> {
        let Some(sequence) = self.visible_sequence(name) else {
            if if_exists {
                self.skipping("sequence", name);
                return Ok(());
            }
            return Err(Error::new(
                SqlState::UNDEFINED_TABLE,
                format!("sequence \"{name}\" does not exist"),
            ));
        };
        let catalog = &self.engine.txn.catalog;
        let tables: Vec<Arc<Table>> = { catalog.tables_seen(&self.hidden_tables()) };
        for table in tables {
            let def = table.def();
            let user = def.columns.iter().find(|c| {
                c.default
                    .as_deref()
                    .is_some_and(|d| d.contains(&format!("'{name}'")))
            });
            if let Some(c) = user {
                return Err(Error::new(
                    SqlState::DEPENDENT_OBJECTS_STILL_EXIST,
                    format!("cannot drop sequence {name} because other objects depend on it"),
                )
                .with_detail(format!(
                    "default value for column {} of table {} depends on sequence {name}",
                    c.name, def.name
                ))
                .with_hint("Use DROP ... CASCADE to drop the dependent objects too."));
            }
        }
        let in_block = self.in_block(None);
        let sequence = match sequence.created() {
            // A serial column's sequence gets an id first (at once: nothing else about it
            // changes), so the block drops it as it drops CREATE SEQUENCE's.
            None if in_block => self.give_sequence_id(name)?,
            _ => sequence,
        };
        self.set_sequence_owner(name, None)?;
        if let Some((id, _)) = sequence.created() {
            // Gone when the transaction commits.
            self.txn().drop_relation(id);
            return Ok(());
        }
        // A serial column's whose default no longer uses it: logged on its own.
        self.refuse_in_block("DROP SEQUENCE", None)?;
        let txn = self.engine.txn.clone();
        let flight = ddl::commit_catalog_change(
            &txn,
            RecordKind::DropSequence,
            &records::encode_sequence_name(name),
            self.sync_level(),
            |_| {
                txn.catalog.drop_sequence(name);
            },
        )?;
        self.finish_catalog_change(flight);
        Ok(())
    }

    /// ALTER SEQUENCE ... RESTART [WITH at]: logged at once.
    fn restart_sequence(&mut self, name: &str, at: Option<i64>) -> Result<()> {
        let seq = self.engine.txn.catalog.sequence(name).ok_or_else(|| {
            Error::new(
                SqlState::UNDEFINED_TABLE,
                format!("relation \"{name}\" does not exist"),
            )
        })?;
        let start = seq.created().map_or(1, |(_, o)| o.start);
        let next = at.unwrap_or(start);
        check_sequence_value(&seq, next, "RESTART")?;
        let flight = ddl::commit_catalog_change(
            &self.engine.txn,
            RecordKind::SetSequence,
            &records::encode_set_sequence(name, next),
            self.sync_level(),
            |_| seq.set_next(next),
        )?;
        self.finish_catalog_change(flight);
        Ok(())
    }

    /// ALTER SEQUENCE with options (a serial column's sequence gets an id first, as
    /// CREATE SEQUENCE's): the new options and the next value are logged at once. The
    /// next value is the last one handed out plus the (new) increment, or `restart`.
    fn alter_sequence(
        &mut self,
        name: &str,
        changes: &super::plan::SequenceChanges,
        restart: Option<Option<i64>>,
    ) -> Result<()> {
        let seq = self.engine.txn.catalog.sequence(name).ok_or_else(|| {
            Error::new(
                SqlState::UNDEFINED_TABLE,
                format!("relation \"{name}\" does not exist"),
            )
        })?;
        let seq = match seq.created() {
            Some(_) => seq,
            None => self.give_sequence_id(name)?,
        };
        let Some((_, current)) = seq.created() else {
            return Err(Error::internal(
                "a sequence without options after getting an id",
            ));
        };
        let options = changes.applied_to(current, false)?;
        let invalid = |m: String| Error::new(SqlState::INVALID_PARAMETER_VALUE, m);
        let (last, called) = seq.last_value();
        let (checked, next) = match restart {
            Some(at) => {
                let at = at.unwrap_or(options.start);
                (at, at)
            }
            None if called => (last, last.saturating_add(options.increment)),
            None => (last, last),
        };
        if checked < options.min {
            return Err(invalid(format!(
                "RESTART value ({checked}) cannot be less than MINVALUE ({})",
                options.min
            )));
        }
        if checked > options.max {
            return Err(invalid(format!(
                "RESTART value ({checked}) cannot be greater than MAXVALUE ({})",
                options.max
            )));
        }
        let flight = ddl::commit_catalog_change(
            &self.engine.txn,
            RecordKind::SetSequence,
            &records::encode_alter_sequence(name, next, &options),
            self.sync_level(),
            |_| seq.alter(options, next),
        )?;
        self.finish_catalog_change(flight);
        Ok(())
    }

    /// CREATE INDEX: with the table's write gate closed, the entries are built from
    /// every row's newest version (a unique index finds duplicates on the way), then the
    /// SetIndexes record is logged and the index is used from its LSN on (`txn::ddl`).
    fn create_index(
        &mut self,
        table: &Arc<Table>,
        def: IndexDef,
        if_not_exists: bool,
    ) -> Result<()> {
        if self.changes_in_block(table) {
            return self.create_index_in_block(table, def, if_not_exists);
        }
        let closed = self.keep_writers_out(table, "CREATE INDEX")?;
        let txn = self.engine.txn.clone();
        let catalog = &txn.catalog;
        {
            let _ddl = catalog.ddl_lock();
            if self.relation_taken(&def.name) {
                if if_not_exists {
                    return Ok(());
                }
                return Err(Error::new(
                    SqlState::DUPLICATE_TABLE,
                    format!("relation \"{}\" already exists", def.name),
                ));
            }
        }
        let (def, entries, newest, new_def) = build_new_index(table, def)?;
        if let Err(e) = self.claim_own_unique_values(table, &def) {
            let _ = entries.destroy();
            return Err(e);
        }
        if let Some(closed) = &closed {
            closed.assert_closed();
        }
        let flight = {
            let _ddl = catalog.ddl_lock();
            if self.relation_taken(&def.name) {
                let _ = entries.destroy();
                return Err(Error::new(
                    SqlState::DUPLICATE_TABLE,
                    format!("relation \"{}\" already exists", def.name),
                ));
            }
            ddl::commit_indexes(
                &txn,
                table,
                new_def,
                IndexChange::Add(def, Box::new(entries), newest),
                self.sync_level(),
            )?
        };
        drop(closed);
        self.finish_catalog_change(flight);
        Ok(())
    }

    /// A unique index on a table this transaction created: the rows it wrote there (not
    /// in the table until it commits) must hold distinct values, and are claimed for its
    /// later rows' checks (`Executor::claim_own_unique_values`).
    fn claim_own_unique_values(&mut self, table: &Arc<Table>, def: &IndexDef) -> Result<()> {
        let own_rows = self
            .txn
            .as_ref()
            .is_some_and(|t| t.created.contains(&table.id) && t.writes.table(table.id).is_some());
        if !def.unique || !own_rows {
            return Ok(());
        }
        let snapshot = self.statement_snapshot();
        let duplicate = self.with_executor(snapshot, &[], false, |exec| {
            exec.claim_own_unique_values(table, def)
        })?;
        match duplicate {
            None => Ok(()),
            Some(row) => {
                let table_def = table.def();
                let mut named = (*table_def).clone();
                named.pkey_name = Some(def.name.clone());
                Err(duplicate_key(&table_def, &named, &def.columns, &row))
            }
        }
    }

    /// CREATE INDEX (or ADD UNIQUE) inside a transaction block: the table's gate stays
    /// closed until the block ends, as behind PostgreSQL's lock; the index is built now
    /// from the committed rows, used by the block, and logged with its commit (replay
    /// builds it again). The rows the block wrote one by one get their entries when it
    /// commits, as those it writes later; until then its index scans read them from its
    /// writes. A unique index checks them now. Refused after the block truncated or
    /// rebuilt the table: the committed rows are not the table's any more.
    fn create_index_in_block(
        &mut self,
        table: &Arc<Table>,
        def: IndexDef,
        if_not_exists: bool,
    ) -> Result<()> {
        let writes = self.txn.as_ref().and_then(|t| t.writes.table(table.id));
        if writes.is_some_and(|w| w.truncated || w.bulk.is_some()) {
            return Err(Error::unsupported(
                "CREATE INDEX on a table truncated, loaded by COPY or rebuilt earlier in the same transaction block is not supported yet",
            ));
        }
        let written = writes.is_some_and(|w| !w.has_no_rows());
        self.txn().close_gate(table)?;
        let txn = self.engine.txn.clone();
        let catalog = &txn.catalog;
        let index_name = def.name.clone();
        let exists = || {
            Error::new(
                SqlState::DUPLICATE_TABLE,
                format!("relation \"{index_name}\" already exists"),
            )
        };
        {
            let _ddl = catalog.ddl_lock();
            if self.relation_taken(&def.name) {
                if if_not_exists {
                    return Ok(());
                }
                return Err(exists());
            }
        }
        let (def, entries, newest, new_def) = build_new_index(table, def)?;
        {
            let _ddl = catalog.ddl_lock();
            if self.relation_taken(&def.name) {
                let _ = entries.destroy();
                return Err(exists());
            }
            self.txn()
                .add_index_in_block(table, new_def, def.clone(), entries, newest);
        }
        if !(written && def.unique) {
            return Ok(());
        }
        // (A failure leaves the block failed; its rollback takes the index away.)
        let snapshot = self.statement_snapshot();
        let duplicate = self.with_executor(snapshot, &[], false, |exec| {
            exec.check_own_rows_against_index(table, &def.name)
        });
        match duplicate {
            Ok(None) => Ok(()),
            Ok(Some(row)) => {
                let table_def = table.def();
                let mut named = (*table_def).clone();
                named.pkey_name = Some(def.name.clone());
                Err(duplicate_key(&table_def, &named, &def.columns, &row))
            }
            Err(Stop::Error(e)) => Err(e),
            // Nobody else is inside the closed gate to hold a value's lock.
            Err(Stop::WaitForLock) => Err(Error::internal("a lock wait behind a closed gate")),
        }
    }

    /// DROP INDEX of `name` on `table`.
    fn drop_index(&mut self, table: &Arc<Table>, name: &str, constraint: bool) -> Result<()> {
        let def = table.def();
        match def.indexes.iter().find(|i| i.name == name) {
            Some(index) if index.constraint && !constraint => {
                return Err(Error::new(
                    SqlState::DEPENDENT_OBJECTS_STILL_EXIST,
                    format!(
                    "cannot drop index {name} because constraint {name} on table {} requires it",
                    def.name
                ),
                )
                .with_hint(format!(
                    "You can drop constraint {name} on table {} instead.",
                    def.name
                )))
            }
            Some(_) => {}
            None => {
                return Err(Error::new(
                    SqlState::UNDEFINED_OBJECT,
                    format!("index \"{name}\" does not exist"),
                ))
            }
        }
        if self.changes_in_block(table) {
            // The block's: others wait for the table until it ends; the index's pages
            // are freed when it commits.
            self.txn().close_gate(table)?;
            let txn = self.engine.txn.clone();
            let _ddl = txn.catalog.ddl_lock();
            let mut new_def = (*table.def()).clone();
            new_def.indexes.retain(|i| i.name != name);
            self.txn().drop_index_in_block(table, new_def, name);
            return Ok(());
        }
        let closed = self.keep_writers_out(table, "DROP INDEX")?;
        let txn = self.engine.txn.clone();
        let flight = {
            let _ddl = txn.catalog.ddl_lock();
            let mut new_def = (*table.def()).clone();
            new_def.indexes.retain(|i| i.name != name);
            ddl::commit_indexes(
                &txn,
                table,
                new_def,
                IndexChange::Drop(name.to_string()),
                self.sync_level(),
            )?
        };
        drop(closed);
        self.finish_catalog_change(flight);
        Ok(())
    }

    /// Acknowledge a logged catalog change like a commit: once durable at the session's
    /// level.
    fn finish_catalog_change(&mut self, flight: crate::txn::CommitInFlight) {
        let committing = Committing::ddl(self.engine.txn.clone(), self.slot.clone(), flight);
        if self.defer_commits {
            self.in_flight = Some(committing);
        } else {
            committing.finish();
        }
    }

    /// ALTER TABLE ... ADD PRIMARY KEY. With the table's write gate closed, every row is
    /// read once and loaded under its new key into a private tree, which finds duplicate
    /// keys on the way; at commit its pages are synced, the log record names them, and the
    /// table takes the tree in place of its rows (`txn::ddl`).
    fn add_primary_key(
        &mut self,
        table: &Arc<Table>,
        name: Option<String>,
        columns: &[usize],
    ) -> Result<()> {
        // Alone, the new key is logged and durable when the statement ends; a table the
        // transaction created gets it so too (a rollback drops it, key and all: pg_dump's
        // output restored in one transaction adds keys to the tables it created and
        // filled); in a block, another table gets it at commit.
        if self.changes_in_block(table) {
            return self.add_primary_key_in_block(table, name, columns);
        }
        let closed = self.keep_writers_out(table, "ALTER TABLE ... ADD PRIMARY KEY")?;
        // Checked with the gate closed: a concurrent ALTER may have added one meanwhile.
        let def = table.def();
        let new_def = keyed_definition(&def, name, columns)?;
        let created = self
            .txn
            .as_ref()
            .is_some_and(|t| t.created.contains(&table.id));
        // A table the transaction created and loaded by COPY (as a restored dump's):
        // its load is loaded again under the key, to replace it once the key is there.
        let mut rekeyed = None;
        if let Some(load) = self
            .txn
            .as_ref()
            .filter(|t| created && !t.writes.has_marks())
            .and_then(|t| t.writes.table(table.id))
            .filter(|w| w.has_no_rows())
            .and_then(|w| w.bulk.as_ref())
        {
            let source = ddl::RebuildSource::Load(load);
            match ddl::load_under_key(&self.engine.txn, table, columns, &source)? {
                Ok(load) => rekeyed = Some(load),
                Err(conflict) => return Err(key_conflict(&def, &new_def, columns, conflict)),
            }
        }
        // Other rows the transaction wrote to a table it created (not in the table until
        // it commits) are put aside, checked for the key, and go in again once it is there.
        let mut spooled = None;
        if created && rekeyed.is_none() && self.txn().writes.table(table.id).is_some() {
            let snapshot = self.statement_snapshot();
            let own = self.with_executor(snapshot, &[], false, |exec| {
                exec.spool_own_rows(table, columns)
            })?;
            match own {
                Ok(spool) => spooled = Some(spool),
                Err(conflict) => return Err(key_conflict(&def, &new_def, columns, conflict)),
            }
        }
        // No writer is inside the gate, so every version in the table is committed and
        // installed; reading at the last assigned LSN sees the newest of each.
        let txn = self.engine.txn.clone();
        let source = ddl::RebuildSource::Table(table, txn.last_assigned_lsn());
        let load = match ddl::load_under_key(&txn, table, columns, &source)? {
            Ok(load) => load,
            Err(conflict) => return Err(key_conflict(&def, &new_def, columns, conflict)),
        };
        if let Some(closed) = &closed {
            closed.assert_closed();
        }
        if spooled.is_some() {
            self.txn().writes.truncate(table);
        }
        let flight = ddl::commit_primary_key(&txn, table, new_def, load, self.sync_level())?;
        // Writers waiting at the gate now plan against the new definition.
        drop(closed);
        // Acknowledged like a commit: once durable at the session's level.
        let committing = Committing::ddl(self.engine.txn.clone(), self.slot.clone(), flight);
        if self.defer_commits {
            self.in_flight = Some(committing);
        } else {
            committing.finish();
        }
        if let Some(load) = rekeyed {
            self.txn().writes.replace_bulk(table, load);
        }
        if let Some(spool) = spooled {
            let snapshot = self.statement_snapshot();
            let inserted = self.with_executor(snapshot, &[], false, |exec| {
                exec.insert_spooled(table, spool)
            });
            match inserted {
                Ok(()) => {}
                Err(Stop::Error(e)) => return Err(e),
                Err(Stop::WaitForLock) => {
                    return Err(Error::internal("a lock wait on a table nobody else sees"))
                }
            }
        }
        Ok(())
    }

    /// ADD PRIMARY KEY of a table a transaction block did not create: its gate stays
    /// closed to the end of the block, and the rows, loaded under the new key, replace
    /// the table's at commit as a TRUNCATE and a COPY of the block would (the block may
    /// read them, not write them). The block may have truncated or bulk-loaded the
    /// table, not written its rows one by one.
    fn add_primary_key_in_block(
        &mut self,
        table: &Arc<Table>,
        name: Option<String>,
        columns: &[usize],
    ) -> Result<()> {
        let what = "ALTER TABLE ... ADD PRIMARY KEY inside a transaction block";
        self.refuse_rows_replaced_in_block(what)?;
        self.txn().close_gate(table)?;
        let def = table.def();
        let new_def = keyed_definition(&def, name, columns)?;
        // Others are out of the gate: every version is committed and installed.
        let txn = self.engine.txn.clone();
        let writes = self.txn.as_ref().and_then(|t| t.writes.table(table.id));
        let source = rebuild_source(writes, table, txn.last_assigned_lsn(), what)?;
        let load = match ddl::load_under_key(&txn, table, columns, &source)? {
            Ok(load) => load,
            Err(conflict) => return Err(key_conflict(&def, &new_def, columns, conflict)),
        };
        let t = self.txn();
        t.writes.replace_rows(table, load);
        t.change_definition(table, new_def);
        Ok(())
    }

    /// ALTER COLUMN ... TYPE that rewrites the rows: as ADD PRIMARY KEY in a block, the
    /// table's gate stays closed to the end of the transaction (the statement's own, or
    /// its block), each row is read once, given its new value (`convert`, which may fail
    /// as a cast does) and loaded under its key (a new one where the column is in the
    /// primary key) into a private tree that replaces the table's rows at commit.
    fn rewrite_column_type(
        &mut self,
        table: &Arc<Table>,
        column: usize,
        to: DataType,
        convert: &Expr,
    ) -> Result<()> {
        let what = "ALTER COLUMN ... TYPE that rewrites the rows";
        self.refuse_rows_replaced_in_block(what)?;
        self.txn().close_gate(table)?;
        let def = table.def();
        let mut new_def: TableDef = (*def).clone();
        new_def.columns[column].data_type = to;
        let new_types: Vec<DataType> = new_def.columns.iter().map(|c| c.data_type).collect();
        let types = table.column_types();
        let missing = table.column_missing();
        let txn = self.engine.txn.clone();
        // Others are out of the gate: every version is committed and installed.
        let newest = txn.last_assigned_lsn();
        let snapshot = self.statement_snapshot();
        let load = self.with_executor(snapshot, &[], false, |exec| -> Result<BulkLoad> {
            let exec: &Executor = exec;
            let source = rebuild_source(exec.txn.writes.table(table.id), table, newest, what)?;
            let mut load = BulkLoad::new(txn.catalog.pool().clone())?;
            let mut image = Vec::new();
            let mut failed = None;
            source.scan(&mut |key, old| {
                let mut row =
                    crate::types::decode_leading_columns(old, &types, types.len(), &missing)?;
                let value = match exec.eval(convert, &row)? {
                    Value::Null => Value::Null,
                    v => types::cast_assign(v, &to)?,
                };
                if value.is_null() && new_def.columns[column].not_null {
                    failed = Some(key_conflict(
                        &def,
                        &new_def,
                        &[column],
                        KeyConflict::Null { column },
                    ));
                    return Ok(false);
                }
                row[column] = value;
                image.clear();
                crate::types::encode_row(&row, &new_types, &mut image);
                let new_key = match new_def.primary_key.contains(&column) {
                    true => records::primary_key_of(&new_def.primary_key, &row),
                    false => key.to_vec(),
                };
                if load.insert(&new_key, &image)? {
                    return Ok(true);
                }
                let key_columns = new_def.primary_key.clone();
                failed = Some(key_conflict(
                    &def,
                    &new_def,
                    &key_columns,
                    KeyConflict::Duplicate { row },
                ));
                Ok(false)
            })?;
            match failed {
                // (A load dropped frees its pages.)
                Some(e) => Err(e),
                None => Ok(load),
            }
        })?;
        let t = self.txn();
        t.writes.replace_rows(table, load);
        t.change_definition(table, new_def);
        Ok(())
    }

    /// Refuse to replace a table's rows at the commit of this block (`what`) with a
    /// savepoint open (a bulk load is not journaled).
    fn refuse_rows_replaced_in_block(&mut self, what: &str) -> Result<()> {
        if self.txn().writes.has_marks() {
            return Err(Error::unsupported(format!(
                "{what} after a SAVEPOINT is not supported yet"
            )));
        }
        Ok(())
    }

    /// ALTER TABLE ... DROP CONSTRAINT of the primary key: as ADD PRIMARY KEY, the rows
    /// are loaded into a private tree, under hidden row ids in the order of the key, and
    /// the table takes it at commit (a transaction of its own). The key's columns stay
    /// NOT NULL, as in PostgreSQL.
    ///
    /// Inside a transaction block the table's gate stays closed to the end of the block,
    /// and the rows replace the table's at commit as a TRUNCATE and a COPY of the same
    /// block would (`WriteSet::replace_rows`), the definition with them; as after such a
    /// COPY, the block may read the table but not write it.
    fn drop_primary_key(&mut self, table: &Arc<Table>, name: &str) -> Result<()> {
        let what = "ALTER TABLE ... DROP CONSTRAINT of a primary key";
        let created = self
            .txn
            .as_ref()
            .is_some_and(|t| t.created.contains(&table.id));
        let in_block = !created && self.changes_in_block(table);
        if in_block {
            self.refuse_rows_replaced_in_block(what)?;
        } else if self
            .txn
            .as_ref()
            .and_then(|t| t.writes.table(table.id))
            .is_some_and(|w| w.truncated || w.bulk.is_some() || !w.has_no_rows())
        {
            return Err(Error::unsupported(format!(
                "{what} of a table written in the same transaction is not supported yet"
            )));
        }
        let closed = match in_block {
            true => {
                self.txn().close_gate(table)?;
                None
            }
            false => self.keep_writers_out(table, what)?,
        };
        // Checked with the gate closed: a concurrent ALTER may have changed the key.
        let def = table.def();
        if def.primary_key.is_empty() || def.pkey_name.as_deref() != Some(name) {
            return Err(Error::new(
                SqlState::UNDEFINED_OBJECT,
                format!(
                    "constraint \"{name}\" of relation \"{}\" does not exist",
                    def.name
                ),
            ));
        }
        let mut key = def.primary_key.clone();
        key.sort_unstable();
        let dependents: Vec<String> = self
            .engine
            .txn
            .catalog
            .referencing(table.id)
            .iter()
            .filter(|(_, fk)| {
                let mut referenced = fk.referenced_columns.clone();
                referenced.sort_unstable();
                referenced == key
            })
            .map(|(child, fk)| {
                format!(
                    "constraint {} on table {} depends on index {name}",
                    fk.name,
                    child.def().name
                )
            })
            .collect();
        if !dependents.is_empty() {
            return Err(Error::new(
                SqlState::DEPENDENT_OBJECTS_STILL_EXIST,
                format!(
                    "cannot drop constraint {name} on table {} because other objects depend on it",
                    def.name
                ),
            )
            .with_detail(dependents.join("\n"))
            .with_hint("Use DROP ... CASCADE to drop the dependent objects too."));
        }
        let mut new_def: TableDef = (*def).clone();
        new_def.primary_key.clear();
        new_def.pkey_name = None;
        // No writer is inside the gate: every version is committed and installed.
        let txn = self.engine.txn.clone();
        let writes = self.txn.as_ref().and_then(|t| t.writes.table(table.id));
        let source = rebuild_source(writes, table, txn.last_assigned_lsn(), what)?;
        let (load, rows) = ddl::load_under_row_ids(&txn, &source)?;
        if in_block {
            // The block's later rows (after its commit) take ids past the loaded ones.
            table.continue_row_ids_after(rows);
            let t = self.txn();
            t.writes.replace_rows(table, load);
            t.change_definition(table, new_def);
            return Ok(());
        }
        if let Some(closed) = &closed {
            closed.assert_closed();
        }
        let flight = ddl::commit_primary_key(&txn, table, new_def, load, self.sync_level())?;
        table.continue_row_ids_after(rows);
        drop(closed);
        let committing = Committing::ddl(self.engine.txn.clone(), self.slot.clone(), flight);
        if self.defer_commits {
            self.in_flight = Some(committing);
        } else {
            committing.finish();
        }
        Ok(())
    }

    fn run_dml(&mut self, plan: &Plan, fields: Vec<Field>, params: &[Value]) -> Result<Outcome> {
        let snapshot = self.statement_snapshot();
        let with_rows = |tag: String, rows: Vec<Vec<Value>>, fields: Vec<Field>| {
            if fields.is_empty() {
                Outcome::Command { tag }
            } else {
                Outcome::Rows {
                    fields,
                    rows,
                    tag: RowsTag::Fixed(tag),
                }
            }
        };
        let result = self.with_executor(snapshot, params, true, |exec| match plan {
            Plan::Select(sel) => {
                let rows = match &sel.row_lock {
                    Some(lock) => exec.select_locking(sel, lock)?,
                    None => exec.select(sel)?,
                };
                Ok(Outcome::Rows {
                    fields,
                    rows,
                    tag: RowsTag::Select,
                })
            }
            Plan::Insert(ins) => {
                let (n, rows) = exec.insert(ins)?;
                exec.finish_foreign_key_checks()?;
                Ok(with_rows(format!("INSERT 0 {n}"), rows, fields))
            }
            Plan::Update(upd) => {
                let (n, rows) = exec.update(upd)?;
                exec.finish_foreign_key_checks()?;
                Ok(with_rows(tag_rows("UPDATE", n), rows, fields))
            }
            Plan::Delete(del) => {
                let (n, rows) = exec.delete(del)?;
                exec.finish_foreign_key_checks()?;
                Ok(with_rows(tag_rows("DELETE", n), rows, fields))
            }
            _ => Err(Error::internal("not a DML plan").into()),
        });
        match result {
            Ok(outcome) => Ok(outcome),
            Err(Stop::Error(e)) => Err(e),
            Err(Stop::WaitForLock) => {
                if let Some(t) = self.txn.as_mut() {
                    t.retry_at(snapshot);
                }
                Ok(Outcome::WaitForLock)
            }
        }
    }

    /// Run `f` with an executor over the current transaction at `snapshot`. Log records the
    /// statement caused outside its commit record (sequence advances) are remembered in the
    /// transaction, which must not commit before they are durable.
    /// With `may_stop`, when commits are deferred (the caller waits as a task), a row lock
    /// held by another transaction stops the statement if it has changed nothing yet
    /// (`Stop::WaitForLock`); else the statement blocks there.
    fn with_executor<R, E: From<Error>>(
        &mut self,
        snapshot: Lsn,
        params: &[Value],
        may_stop: bool,
        f: impl FnOnce(&mut Executor) -> std::result::Result<R, E>,
    ) -> std::result::Result<R, E> {
        let engine = self.engine.clone();
        let isolation = self.txn.as_ref().map(|t| t.isolation);
        let read_only = self.txn.as_ref().map(|t| t.read_only);
        let overrides = &self.overrides;
        let superuser = self.superuser_now();
        let (current_user, session_user) = roles::identity(overrides, &self.user);
        let privileges = (!superuser).then(|| self.privileges_of());
        let settings_fn =
            |n: &str| show_setting(overrides, &engine, isolation, read_only, superuser, n);
        let spill = super::executor::SpillTo {
            hash_mem_bytes: self.work_mem_bytes().saturating_mul(HASH_MEM_WORK_MEMS),
            sort_mem_bytes: self.work_mem_bytes(),
            temp_dir: self.temp_dir(),
        };
        let Some(txn) = self.txn.as_mut() else {
            return Err(Error::internal("statement without a transaction").into());
        };
        txn.forget_wait();
        let constraint_modes = txn.constraint_modes.clone();
        let writes_before = txn.writes.row_count();
        let mut exec = Executor {
            engine: &engine,
            slot: &self.slot,
            snapshot,
            defer_lock_waits: (may_stop && self.defer_commits).then_some(writes_before),
            ctx: EvalContext {
                params,
                txn_start_us: txn.start_us,
                backend_pid: self.slot.pid,
                user: current_user,
                session_user,
                roles: privileges.as_deref(),
                engine: &engine,
                settings: &settings_fn,
                logged_upto: std::cell::Cell::new(0),
                set_settings: Default::default(),
                sequences: &self.sequences,
                pending: super::expr::PendingRelations {
                    created: txn.created.clone(),
                    dropped: txn.dropped.clone(),
                    altered: txn.changed_definitions(),
                },
            },
            txn,
            outer_values: Default::default(),
            subquery_rows: Default::default(),
            materialized_rows: Default::default(),
            fk_pending: Vec::new(),
            fk_deferred: Vec::new(),
            constraint_modes,
            fk_depth: 0,
            fk_unsettled: 0,
            fk_incoming: Default::default(),
            fk_rules: Default::default(),
            work_tables: Default::default(),
            spill,
            actuals: self.explain_actuals.take().map(std::cell::RefCell::new),
        };
        let result = f(&mut exec);
        exec.txn.logged_upto = exec.txn.logged_upto.max(exec.ctx.logged_upto.get());
        let set = exec.ctx.set_settings.take();
        let deferred = std::mem::take(&mut exec.fk_deferred);
        debug_assert!(result.is_err() || exec.fk_pending.is_empty());
        let measured = exec.actuals.take();
        drop(exec);
        if let Some(measured) = measured {
            self.explain_actuals = Some(measured.into_inner());
        }
        if result.is_ok() {
            self.apply_set_config(set);
            if let Some(t) = self.txn.as_mut() {
                t.deferred_checks.extend(deferred);
                // Not under a savepoint, whose rollback takes back the checks queued
                // since by their number.
                if t.savepoints.is_empty()
                    && t.deferred_checks.len()
                        >= foreign_keys::SETTLE_PENDING_AT.max(2 * t.deferred_unsettled)
                {
                    self.settle_deferred_checks()?;
                }
            }
        }
        result
    }

    /// The transaction's deferred checks, once there are many: those that pass now are
    /// done (see `Executor::settle_pending_checks`), the others stay.
    fn settle_deferred_checks(&mut self) -> Result<()> {
        let Some(t) = self.txn.as_mut() else {
            return Ok(());
        };
        let checks = std::mem::take(&mut t.deferred_checks);
        let snapshot = self.statement_snapshot();
        let mut kept = Vec::new();
        let settled = self.with_executor(snapshot, &[], false, |exec| {
            exec.fk_pending = checks;
            let settled = exec.settle_pending_checks();
            kept = std::mem::take(&mut exec.fk_pending);
            settled
        });
        if let Some(t) = self.txn.as_mut() {
            t.deferred_unsettled = kept.len();
            t.deferred_checks = kept;
        }
        match settled {
            Ok(()) => Ok(()),
            Err(Stop::Error(e)) => Err(e),
            Err(Stop::WaitForLock) => Err(Error::internal(
                "a deferred constraint check stopped at a lock it blocks at",
            )),
        }
    }

    /// The settings a statement's `set_config` calls changed, applied as SET (or SET
    /// LOCAL, which outside a transaction block has no effect) would.
    fn apply_set_config(&mut self, set: Vec<(&'static str, String, bool)>) {
        for (name, value, local) in set {
            if local && !self.txn.as_ref().is_some_and(|t| t.explicit) {
                continue;
            }
            self.note_setting_change(name, local);
            self.overrides.insert(name, value);
            self.note_settings_changed();
        }
    }

    /// Feed one CopyData message's bytes (any split across rows).
    pub fn copy_data(&mut self, copy: &mut CopyIn, data: &[u8]) -> Result<()> {
        let result = copy
            .parser
            .feed(data)
            .and_then(|records| self.copy_rows(copy, records));
        if result.is_err() {
            self.on_error();
        }
        result
    }

    fn copy_rows(&mut self, copy: &mut CopyIn, records: Vec<super::copy::Record>) -> Result<()> {
        if records.is_empty() {
            return Ok(());
        }
        let plan = copy.plan.clone();
        let Plan::Copy(cp) = plan.as_ref() else {
            return Err(Error::internal("not a COPY plan"));
        };
        let snapshot = copy.snapshot;
        // A COPY blocks at a row lock: it has no statement to run again.
        self.with_executor(snapshot, &[], false, |exec| {
            exec.fk_pending = std::mem::take(&mut copy.fk_pending);
            exec.fk_unsettled = copy.fk_unsettled;
            let copied = copy_records(exec, cp, copy, records);
            copy.fk_pending = std::mem::take(&mut exec.fk_pending);
            copy.fk_unsettled = exec.fk_unsettled;
            copied
        })
    }
}

/// Insert a batch of COPY FROM records through `exec`.
fn copy_records(
    exec: &mut Executor,
    cp: &super::plan::CopyPlan,
    copy: &mut CopyIn,
    records: Vec<super::copy::Record>,
) -> Result<()> {
    {
        let ncols = cp.def.columns.len();
        // Every column, in order: the decoded fields are the row.
        let whole_rows =
            cp.targets.len() == ncols && cp.targets.iter().enumerate().all(|(i, &c)| i == c);
        let mut touched = FxHashSet::default();
        let bulk = exec.can_bulk_load(&cp.table);
        let image = &mut copy.image;
        let column_types = cp.table.column_types();
        for rec in records {
            let line = rec.line;
            let context = |e: Error| e.with_detail(format!("COPY {}, line {}", cp.def.name, line));
            if rec.is_binary() && rec.field_count() != cp.targets.len() {
                return Err(context(Error::new(
                    SqlState::BAD_COPY_FILE_FORMAT,
                    format!(
                        "row field count is {}, expected {}",
                        rec.field_count(),
                        cp.targets.len()
                    ),
                )));
            }
            if rec.field_count() > cp.targets.len() {
                return Err(context(Error::new(
                    SqlState::BAD_COPY_FILE_FORMAT,
                    "extra data after last expected column",
                )));
            }
            if rec.field_count() < cp.targets.len() {
                let missing = &cp.def.columns[cp.targets[rec.field_count()]].name;
                return Err(context(Error::new(
                    SqlState::BAD_COPY_FILE_FORMAT,
                    format!("missing data for column \"{missing}\""),
                )));
            }
            let decode = |field: Option<CopyField>, col: usize| match field {
                None => Ok(Value::Null),
                Some(CopyField::Text(s)) => types::decode_text(&cp.def.columns[col].data_type, s),
                Some(CopyField::Binary(b)) => {
                    types::decode_binary(&cp.def.columns[col].data_type, b)
                }
            };
            let row = if whole_rows {
                rec.fields()
                    .enumerate()
                    .map(|(col, field)| decode(field, col))
                    .collect::<Result<Vec<Value>>>()
                    .map_err(context)?
            } else {
                let values = rec
                    .fields()
                    .zip(&cp.targets)
                    .map(|(field, &col)| decode(field, col).map(Some))
                    .collect::<Result<Vec<Option<Value>>>>()
                    .map_err(context)?;
                exec.build_row(&cp.defaults, &cp.targets, values, ncols)?
            };
            if bulk {
                let row = check_row(&cp.def, row).map_err(context)?;
                exec.check_constraints(&cp.def, &cp.checks, &row)
                    .map_err(context)?;
                exec.bulk_insert(&cp.table, &cp.def, &column_types, &row, image)
                    .map_err(context)?;
            } else {
                // insert_row checks the row itself.
                exec.insert_row(
                    &cp.table,
                    &cp.def,
                    &cp.checks,
                    row,
                    &OnConflict::Error,
                    &mut touched,
                )
                .map_err(|stop| match stop {
                    Stop::Error(e) => context(e),
                    Stop::WaitForLock => {
                        Error::internal("a COPY stopped at a row lock it blocks at")
                    }
                })?;
            }
            copy.rows += 1;
            if copy.rows.is_multiple_of(1024) && exec.slot.cancel.load(Ordering::Acquire) {
                return Err(Error::canceled());
            }
        }
        Ok(())
    }
}

impl Session {
    /// CopyDone: finish the COPY, returning the number of rows copied.
    pub fn copy_done(&mut self, mut copy: CopyIn) -> Result<u64> {
        let result = copy
            .parser
            .finish()
            .and_then(|records| self.copy_rows(&mut copy, records))
            .and_then(|()| {
                if copy.fk_pending.is_empty() {
                    return Ok(());
                }
                let pending = std::mem::take(&mut copy.fk_pending);
                let checked = self.with_executor(copy.snapshot, &[], false, |exec| {
                    exec.fk_pending = pending;
                    exec.finish_foreign_key_checks()
                });
                checked.map_err(|stop| match stop {
                    Stop::Error(e) => e,
                    Stop::WaitForLock => {
                        Error::internal("a COPY stopped at a row lock it blocks at")
                    }
                })
            });
        match result {
            Ok(()) => Ok(copy.rows),
            Err(e) => {
                self.on_error();
                Err(e)
            }
        }
    }

    /// The next chunk of a COPY TO's output, None once everything was returned. A table
    /// is read in batches by key under the statement's snapshot, so its rows are never
    /// all in memory.
    pub fn copy_out_next(&mut self, copy: &mut CopyOut) -> Result<Option<Vec<u8>>> {
        let result = self.copy_out_chunk(copy);
        if result.is_err() {
            copy.stage = CopyOutStage::Done;
            self.on_error();
        }
        if !matches!(result, Ok(Some(_))) {
            self.end_streamed_statement();
        }
        result
    }

    /// ANALYZE of one table: every row this statement's snapshot sees, read in batches
    /// as COPY TO reads them, measured (see `statistics.rs`).
    fn analyze(&mut self, table: &Arc<Table>) -> Result<()> {
        let def = table.def();
        let plan = super::plan::SelectPlan::whole_table(table, (0..def.columns.len()).collect());
        let snapshot = self.statement_snapshot();
        let mut stats = super::statistics::StatsBuilder::new(def.columns.len());
        let mut after: Option<Vec<u8>> = None;
        loop {
            let (rows, last) = self.with_executor(snapshot, &[], false, |exec| {
                exec.scan_batch(&plan, after.as_deref(), COPY_OUT_BATCH_ROWS)
            })?;
            for row in rows {
                stats.add(row);
            }
            self.slot.check_in()?;
            match last {
                Some(key) => after = Some(key),
                None => break,
            }
        }
        table.set_stats(stats.finish());
        self.engine.txn.catalog.statistics_changed();
        Ok(())
    }

    fn copy_out_chunk(&mut self, copy: &mut CopyOut) -> Result<Option<Vec<u8>>> {
        let mut out = Vec::new();
        if copy.stage == CopyOutStage::Done {
            return Ok(None);
        }
        if copy.stage == CopyOutStage::Start {
            copy.encoder.start(&mut out);
            copy.stage = CopyOutStage::Rows;
        }
        let plan = copy.plan.clone();
        let Plan::CopyTo(cp) = plan.as_ref() else {
            return Err(Error::internal("not a COPY TO plan"));
        };
        while out.len() < COPY_OUT_CHUNK_BYTES {
            let batch = if cp.by_key {
                let after = copy.after.take();
                let (rows, last) = self.with_executor(copy.snapshot, &[], false, |exec| {
                    exec.scan_batch(&cp.select, after.as_deref(), COPY_OUT_BATCH_ROWS)
                })?;
                let more = last.is_some();
                copy.after = last;
                (rows, more)
            } else {
                let rows: Vec<_> = copy.pending.by_ref().take(COPY_OUT_BATCH_ROWS).collect();
                let more = copy.pending.len() > 0;
                (rows, more)
            };
            let (rows, more) = batch;
            for row in &rows {
                copy.encoder.row(row, &mut out)?;
            }
            copy.rows += rows.len() as u64;
            self.slot.check_in()?;
            if !more {
                copy.encoder.finish(&mut out);
                copy.stage = CopyOutStage::Done;
                break;
            }
        }
        Ok(Some(out))
    }

    /// CopyFail from the client: abandon the COPY; returns the error to report.
    pub fn copy_fail(&mut self, copy: CopyIn, message: &str) -> Error {
        drop(copy);
        self.on_error();
        Error::new(
            SqlState::QUERY_CANCELED,
            format!("COPY from stdin failed: {message}"),
        )
    }
}

/// The tables whose rows a statement reads or rewrites, so the transaction's deferred
/// increments to them must become ordinary writes first: `Some(None)` for every table,
/// None for none. An UPDATE that defers increments reads only its own row, and adds to
/// an increment it already deferred there; one that does not defer must find its row
/// materialized, if the transaction deferred an increment to it.
/// For `learning` (whether a transaction touched a table after an increment statement),
/// no increment statement counts: one that does not defer touches only its own row.
fn touched_tables(plan: &Plan, learning: bool) -> Option<Option<Vec<TableId>>> {
    let scanned = |sel: &super::plan::SelectPlan| -> Vec<TableId> {
        sel.tables_read().iter().map(|t| t.id).collect()
    };
    let with_subqueries = |mut tables: Vec<TableId>, subs: &[Arc<super::plan::SelectPlan>]| {
        for sub in subs {
            tables.extend(scanned(sub));
        }
        Some(Some(tables))
    };
    match plan {
        Plan::Select(sel) => Some(Some(scanned(sel))),
        Plan::Insert(ins) => {
            let mut tables = vec![ins.table.id];
            if let super::plan::InsertSource::Select(sel) = &ins.source {
                tables.extend(scanned(sel));
            }
            with_subqueries(tables, &ins.subqueries)
        }
        Plan::Update(upd) if upd.increments.is_some() && (learning || upd.defer.allowed()) => None,
        Plan::Update(upd) => with_subqueries(vec![upd.scan.table.id], &upd.subqueries),
        Plan::Delete(del) => with_subqueries(vec![del.scan.table.id], &del.subqueries),
        Plan::Copy(cp) => Some(Some(vec![cp.table.id])),
        Plan::CopyTo(cp) => Some(Some(scanned(&cp.select))),
        Plan::CreateTable { .. }
        | Plan::DropTable { .. }
        | Plan::Truncate { .. }
        | Plan::CreateIndex { .. }
        | Plan::DropIndex { .. }
        | Plan::CreateSequence { .. }
        | Plan::DropSequence { .. }
        | Plan::CreateView { .. }
        | Plan::DropView { .. }
        | Plan::Role(_)
        | Plan::SequenceOwner { .. }
        | Plan::RestartSequence { .. }
        | Plan::AlterSequence { .. }
        | Plan::AddIdentity { .. }
        | Plan::SetColumnDefault { .. }
        | Plan::SetNotNull { .. }
        | Plan::SetColumnType { .. }
        | Plan::RewriteColumnType { .. }
        | Plan::DropColumn { .. }
        | Plan::AddColumn { .. }
        | Plan::Rename { .. }
        | Plan::Comment { .. }
        | Plan::AddForeignKey { .. }
        | Plan::DropForeignKey { .. }
        | Plan::AddCheck { .. }
        | Plan::DropCheck { .. }
        | Plan::ValidateConstraint { .. }
        | Plan::AddPrimaryKey { .. }
        | Plan::DropPrimaryKey { .. } => Some(None),
        Plan::Explain { inner, analyze, .. } => match analyze {
            true => touched_tables(inner, learning),
            false => None,
        },
        Plan::Transaction(_)
        | Plan::LockTables { .. }
        | Plan::SetConstraints { .. }
        | Plan::Set { .. }
        | Plan::Reset { .. }
        | Plan::Show { .. }
        | Plan::ShowAll
        | Plan::Deallocate { .. }
        | Plan::Checkpoint
        | Plan::Maintenance { .. } => None,
        // The statement EXECUTE runs answers for itself.
        Plan::Prepare { .. } | Plan::Execute { .. } => None,
    }
}

/// The tables `plan` writes, drops or truncates; borrowed from the plan but for DROP,
/// whose plan holds names.
fn written_tables(plan: &Plan) -> std::borrow::Cow<'_, [Arc<Table>]> {
    use std::borrow::Cow;
    use std::slice::from_ref;
    match plan {
        Plan::Insert(ins) => Cow::Borrowed(from_ref(&ins.table)),
        Plan::Update(upd) if upd.action_targets.is_empty() => {
            Cow::Borrowed(from_ref(&upd.scan.table))
        }
        Plan::Update(upd) => {
            let mut tables = vec![upd.scan.table.clone()];
            tables.extend(upd.action_targets.iter().cloned());
            Cow::Owned(tables)
        }
        Plan::Delete(del) if del.action_targets.is_empty() => {
            Cow::Borrowed(from_ref(&del.scan.table))
        }
        Plan::Delete(del) => {
            let mut tables = vec![del.scan.table.clone()];
            tables.extend(del.action_targets.iter().cloned());
            Cow::Owned(tables)
        }
        Plan::Copy(cp) => Cow::Borrowed(from_ref(&cp.table)),
        // DROP TABLE and TRUNCATE close the gate instead (`Session::close_gate`).
        _ => Cow::Borrowed(&[]),
    }
}

/// The tables a plan reads without writing them: a reader waits while another
/// transaction has their gates closed (an uncommitted DROP TABLE or TRUNCATE).
fn read_tables(plan: &Plan) -> Vec<&Arc<Table>> {
    fn of(subs: &[Arc<super::plan::SelectPlan>]) -> Vec<&Arc<Table>> {
        subs.iter().flat_map(|s| s.tables_read()).collect()
    }
    match plan {
        Plan::Select(sel) => sel.tables_read(),
        Plan::Explain { inner, .. } => match inner.as_ref() {
            Plan::Select(sel) => sel.tables_read(),
            _ => Vec::new(),
        },
        Plan::CopyTo(cp) => cp.select.tables_read(),
        Plan::Insert(ins) => {
            let mut tables = of(&ins.subqueries);
            if let InsertSource::Select(sel) = &ins.source {
                tables.extend(sel.tables_read());
            }
            tables
        }
        Plan::Update(upd) => of(&upd.subqueries),
        Plan::Delete(del) => of(&del.subqueries),
        _ => Vec::new(),
    }
}

/// CREATE INDEX's entries built from `table`'s rows (its gate closed by the caller):
/// the index numbered, its entries, the LSN they are complete from, and the table's
/// definition with it; 23505 if a unique index finds a duplicate.
fn build_new_index(
    table: &Table,
    def: IndexDef,
) -> Result<(IndexDef, Table, Lsn, crate::storage::TableDef)> {
    let table_def = table.def();
    let mut def = def;
    def.number = next_index_number(&table_def);
    if def.number >= super::pg_catalog::MAX_INDEXES {
        return Err(Error::new(
            SqlState::PROGRAM_LIMIT_EXCEEDED,
            format!(
                "a table can have at most {} indexes",
                super::pg_catalog::MAX_INDEXES
            ),
        ));
    }
    let (entries, newest) = match table.build_index(&def)? {
        Ok(built) => built,
        Err(row) => {
            let mut named = (*table_def).clone();
            named.pkey_name = Some(def.name.clone());
            return Err(duplicate_key(&table_def, &named, &def.columns, &row));
        }
    };
    let mut new_def = (*table_def).clone();
    new_def.indexes.push(def.clone());
    Ok((def, entries, newest, new_def))
}

/// 2BP01 if a view reads the table or view `name` (`kind`); `gone`: the views the
/// asking transaction dropped.
pub fn refuse_dependents(
    catalog: &crate::storage::Catalog,
    gone: &dyn Fn(TableId) -> bool,
    kind: &str,
    name: &str,
) -> Result<()> {
    let views = catalog.dependent_views(name, gone);
    if let Some(first) = views.first() {
        return Err(Error::new(
            SqlState::DEPENDENT_OBJECTS_STILL_EXIST,
            format!("cannot drop {kind} {name} because other objects depend on it"),
        )
        .with_detail(format!("view {first} depends on {kind} {name}"))
        .with_hint("Use DROP ... CASCADE to drop the dependent objects too."));
    }
    Ok(())
}

/// 42710 for a constraint name the table already has (for any kind of constraint).
fn duplicate_constraint(name: &str, table: &str) -> Error {
    Error::new(
        SqlState::DUPLICATE_OBJECT,
        format!("constraint \"{name}\" for relation \"{table}\" already exists"),
    )
}

/// PostgreSQL's DETAIL lines of the views that read an object: `view v depends on
/// table t` (or `on view w`), as found.
fn dependency_lines(
    catalog: &crate::storage::Catalog,
    readers: &crate::storage::DependentViews,
) -> Vec<String> {
    readers
        .found
        .iter()
        .map(|(view, reads)| {
            let kind = if catalog.view(reads).is_some() {
                "view"
            } else {
                "table"
            };
            format!("view {view} depends on {kind} {reads}")
        })
        .collect()
}

/// Whether `table` holds a committed row (its newest versions).
fn committed_rows_exist(table: &Table) -> Result<bool> {
    let mut any = false;
    table.scan(
        (std::ops::Bound::Unbounded, std::ops::Bound::Unbounded),
        Lsn(u64::MAX),
        false,
        |_, _| {
            any = true;
            false
        },
    )?;
    Ok(any)
}

/// A value `seq` may take (setval, RESTART): 22003 outside its bounds.
pub fn check_sequence_value(seq: &crate::storage::Sequence, v: i64, what: &str) -> Result<()> {
    let (min, max) = seq.created().map_or((1, i64::MAX), |(_, o)| (o.min, o.max));
    if v < min || v > max {
        let message = match what {
            "RESTART" => format!("RESTART value ({v}) cannot be less than MINVALUE ({min})"),
            _ => format!(
                "setval: value {v} is out of bounds for sequence \"{}\" ({min}..{max})",
                seq.name
            ),
        };
        let code = if what == "RESTART" {
            SqlState::INVALID_PARAMETER_VALUE
        } else {
            SqlState::NUMERIC_VALUE_OUT_OF_RANGE
        };
        return Err(Error::new(code, message));
    }
    Ok(())
}

/// The number a new index of a table takes: above those it has (and within the OIDs a
/// table has for its indexes).
pub fn next_index_number(def: &TableDef) -> u32 {
    def.indexes.iter().map(|i| i.number + 1).max().unwrap_or(0)
}

/// The error for rows that cannot take a new primary key (`new_def`'s, of `columns`).
fn key_conflict(
    def: &TableDef,
    new_def: &TableDef,
    columns: &[usize],
    conflict: KeyConflict,
) -> Error {
    match conflict {
        KeyConflict::Null { column } => Error::new(
            SqlState::NOT_NULL_VIOLATION,
            format!(
                "column \"{}\" of relation \"{}\" contains null values",
                def.columns[column].name, def.name
            ),
        )
        .with_table(def.name.clone())
        .with_column(def.columns[column].name.clone()),
        KeyConflict::Duplicate { row } => duplicate_key(def, new_def, columns, &row),
        KeyConflict::TooLong { bytes } => {
            executor::key_too_long(bytes, new_def.pkey_name.as_deref().unwrap_or(""))
        }
    }
}

/// `def` with the primary key `columns` (named `name`, or PostgreSQL's `<table>_pkey`),
/// its columns NOT NULL; 42P16 if it has one.
fn keyed_definition(def: &TableDef, name: Option<String>, columns: &[usize]) -> Result<TableDef> {
    if !def.primary_key.is_empty() {
        return Err(Error::new(
            SqlState::INVALID_TABLE_DEFINITION,
            format!(
                "multiple primary keys for table \"{}\" are not allowed",
                def.name
            ),
        ));
    }
    let mut new_def = def.clone();
    new_def.primary_key = columns.to_vec();
    new_def.pkey_name = Some(name.unwrap_or_else(|| format!("{}_pkey", def.name)));
    for &c in columns {
        new_def.columns[c].not_null = true;
    }
    Ok(new_def)
}

/// Where a rebuild of `table` reads its rows (see [`ddl::RebuildSource`]), given the
/// transaction's writes to it; 0A000 (`what`) after the transaction wrote rows of it
/// one by one (they are not in a load to rebuild from).
fn rebuild_source<'s>(
    writes: Option<&'s crate::txn::TableWrites>,
    table: &'s Table,
    newest: Lsn,
    what: &str,
) -> Result<ddl::RebuildSource<'s>> {
    let Some(w) = writes else {
        return Ok(ddl::RebuildSource::Table(table, newest));
    };
    if let Some(load) = &w.bulk {
        return Ok(ddl::RebuildSource::Load(load));
    }
    if !w.has_no_rows() {
        return Err(Error::unsupported(format!(
            "{what} of a table written in the same transaction is not supported yet"
        )));
    }
    Ok(match w.truncated {
        true => ddl::RebuildSource::Empty,
        false => ddl::RebuildSource::Table(table, newest),
    })
}

/// The error for a duplicate key found while adding a primary key.
fn duplicate_key(def: &TableDef, new_def: &TableDef, columns: &[usize], row: &[Value]) -> Error {
    let names: Vec<&str> = columns
        .iter()
        .map(|&c| def.columns[c].name.as_str())
        .collect();
    let shown: Vec<String> = columns
        .iter()
        .map(|&c| super::expr::text_of(&row[c]))
        .collect();
    Error::new(
        SqlState::UNIQUE_VIOLATION,
        format!(
            "could not create unique index \"{}\"",
            new_def.pkey_name.as_deref().unwrap_or_default()
        ),
    )
    .with_detail(format!(
        "Key ({})=({}) is duplicated.",
        names.join(", "),
        shown.join(", ")
    ))
    .with_table(def.name.clone())
    .with_constraint(new_def.pkey_name.clone().unwrap_or_default())
}

fn show_setting(
    overrides: &FxHashMap<&'static str, String>,
    engine: &Engine,
    isolation: Option<Isolation>,
    read_only: Option<bool>,
    superuser: bool,
    name: &str,
) -> Option<String> {
    if name.eq_ignore_ascii_case("is_superuser") {
        return Some(if superuser { "on" } else { "off" }.to_string());
    }
    if name.eq_ignore_ascii_case("transaction_read_only") {
        return Some(
            match read_only {
                Some(true) => "on",
                Some(false) => "off",
                None => {
                    return overrides
                        .get("default_transaction_read_only")
                        .cloned()
                        .or_else(|| engine.settings.show("default_transaction_read_only"))
                }
            }
            .to_string(),
        );
    }
    if name.eq_ignore_ascii_case("transaction_isolation") {
        return Some(
            isolation
                .map(|i| i.name().to_string())
                .or_else(|| overrides.get("default_transaction_isolation").cloned())
                .unwrap_or_else(|| {
                    engine
                        .settings
                        .show("default_transaction_isolation")
                        .unwrap_or_default()
                }),
        );
    }
    let def = settings::def(name)?;
    overrides
        .get(def.name)
        .cloned()
        .or_else(|| engine.settings.show(def.name))
}

/// The command a plan that writes is named by in a read-only transaction's 25006, or
/// None for a plan that does not write.
fn writes_what(plan: &Plan) -> Option<&'static str> {
    Some(match plan {
        Plan::Insert(_) => "INSERT",
        Plan::Update(_) => "UPDATE",
        Plan::Delete(_) => "DELETE",
        Plan::Copy(_) => "COPY FROM",
        Plan::CreateTable { .. } => "CREATE TABLE",
        Plan::DropTable { .. } => "DROP TABLE",
        Plan::Truncate { .. } => "TRUNCATE TABLE",
        Plan::AddIdentity { .. } => "ALTER TABLE",
        Plan::LockTables {
            exclusive: true, ..
        } => "LOCK TABLE",
        Plan::AddPrimaryKey { .. } | Plan::DropPrimaryKey { .. } => "ALTER TABLE",
        Plan::CreateIndex { def, .. } if def.constraint => "ALTER TABLE",
        Plan::CreateIndex { .. } => "CREATE INDEX",
        Plan::CreateSequence { .. } => "CREATE SEQUENCE",
        Plan::CreateView { .. } => "CREATE VIEW",
        Plan::DropView { .. } => "DROP VIEW",
        Plan::Role(stmt) => stmt.tag(),
        Plan::DropSequence { .. } => "DROP SEQUENCE",
        Plan::Comment { .. } => "COMMENT",
        Plan::SequenceOwner { .. } | Plan::RestartSequence { .. } | Plan::AlterSequence { .. } => {
            "ALTER SEQUENCE"
        }
        Plan::SetColumnDefault { .. }
        | Plan::SetNotNull { .. }
        | Plan::SetColumnType { .. }
        | Plan::DropColumn { .. }
        | Plan::AddColumn { .. }
        | Plan::Rename { .. }
        | Plan::AddForeignKey { .. }
        | Plan::DropForeignKey { .. }
        | Plan::AddCheck { .. }
        | Plan::DropCheck { .. }
        | Plan::ValidateConstraint { .. } => "ALTER TABLE",
        Plan::DropIndex {
            constraint: true, ..
        } => "ALTER TABLE",
        Plan::DropIndex { .. } => "DROP INDEX",
        Plan::Select(sel) => match sel.row_lock.map(|l| l.want) {
            Some(Want::Write) => "SELECT FOR UPDATE",
            Some(Want::NoKeyWrite) => "SELECT FOR NO KEY UPDATE",
            Some(Want::Share | Want::Increment) => "SELECT FOR SHARE",
            Some(Want::KeyShare) => "SELECT FOR KEY SHARE",
            None => return None,
        },
        _ => return None,
    })
}

/// Whether a statement may run in a failed transaction block: COMMIT (END), ROLLBACK
/// (ABORT) and ROLLBACK TO SAVEPOINT, as in PostgreSQL.
fn ends_a_failed_block(stmt: &parser::Statement) -> bool {
    matches!(
        stmt,
        parser::Statement::Ast(s) if matches!(
            s.as_ref(),
            sqlparser::ast::Statement::Commit { .. } | sqlparser::ast::Statement::Rollback { .. }
        )
    )
}
