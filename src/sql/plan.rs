//! Plans: what the planner produces and the executor runs. A plan is immutable and may be
//! executed many times with different parameters.

use std::sync::Arc;

use super::bind::AggCall;
use super::expr::Expr;
use super::parser::CopyStatement;
use crate::storage::{Table, TableDef};
use crate::txn::{Increment, Isolation, Want};

/// How a scan finds its rows. The filter is always applied as well, so an access path only
/// has to return a superset of the matching rows.
#[derive(Clone, Debug)]
pub enum Access {
    Full,
    /// Every primary key column equals a row-independent expression (in key order).
    Point(Vec<Expr>),
    /// Bounds on a single-column primary key: (expression, inclusive).
    Range {
        low: Option<(Expr, bool)>,
        high: Option<(Expr, bool)>,
    },
    /// Through a secondary index: its leading columns equal `prefix` (expressions
    /// independent of the row, or of a join's inner row), the next one within the bounds.
    Index {
        index: Arc<crate::storage::Index>,
        prefix: Vec<Expr>,
        low: Option<(Expr, bool)>,
        high: Option<(Expr, bool)>,
    },
}

pub struct ScanPlan {
    /// For a system view or a subquery, a placeholder table carrying its definition.
    pub table: Arc<Table>,
    pub system: Option<super::system::SystemView>,
    /// A subquery in FROM: its rows are the scan's.
    pub derived: Option<Arc<SelectPlan>>,
    /// A function in FROM: its rows are the scan's.
    pub function: Option<Arc<TableFunction>>,
    pub def: Arc<TableDef>,
    pub access: Access,
    pub filter: Option<Expr>,
    /// The name the query gives the scanned relation (its alias, else its name).
    pub qualifier: String,
}

/// A set-returning function: in FROM, over row-independent arguments; or at the top of
/// a select list (`Expr::SetReturning`), over the row.
#[derive(Debug)]
pub struct TableFunction {
    pub kind: TableFunctionKind,
    pub args: Vec<Expr>,
    /// WITH ORDINALITY: a last column numbering the rows from 1.
    pub ordinality: bool,
}

/// What `_pg_expandarray` makes of each element's row: one `record` value (in a select
/// list), one of its fields (`(_pg_expandarray(a)).n`), or its two columns (in FROM).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ExpandOutput {
    Record,
    Field(usize),
    Columns,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TableFunctionKind {
    /// `generate_series(start, stop[, step])` over integers.
    GenerateSeries,
    /// `unnest(array[, array ...])`: one column per array, as long as the longest.
    Unnest,
    /// `generate_subscripts(array, dim)`: the array's subscripts.
    GenerateSubscripts,
    /// `VALUES (...), (...)`: the arguments are the rows' values, row after row, `width`
    /// to a row.
    Values { width: usize },
    /// `pg_partition_ancestors(regclass)`: the relation and the partitioned tables above
    /// it, of which there are none here: the relation itself.
    PartitionAncestors,
    /// `information_schema._pg_expandarray(array)`: per element, the row `(x element,
    /// n its subscript)`, made as `output` says.
    ExpandArray(ExpandOutput),
    /// `pg_options_to_table(text[])`: per `name=value` option, `(option_name,
    /// option_value)`.
    OptionsToTable,
    /// The working table of a recursive WITH query (see `SetOp::RecursiveUnion`).
    WorkTable(usize),
    /// A sequence read as a relation (`SELECT last_value, is_called FROM seq`): its one
    /// row `(last_value, log_cnt, is_called)`; the argument is its name.
    SequenceState,
    /// `regexp_matches(text, pattern[, flags])`: a text[] of groups per match.
    RegexpMatches,
    /// `regexp_split_to_table(text, pattern[, flags])`: the pieces between matches.
    RegexpSplitToTable,
    /// jsonb's set-returning functions of one document (see `json_functions.rs`).
    Jsonb(super::json_functions::JsonbSet),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum JoinKind {
    /// INNER and CROSS joins.
    Inner,
    /// LEFT [OUTER]: the rows so far are kept, null-extended, when nothing matches.
    Left,
    /// RIGHT [OUTER]: this step's table's rows are kept, null-extended, when nothing matches.
    Right,
    Full,
}

/// How a join step finds the rows of its table that may match a row so far. Every
/// candidate is then checked against the step's whole condition.
#[derive(Debug)]
pub enum JoinStrategy {
    /// Read the table once and try every row.
    NestedLoop,
    /// Its primary key is given by the row so far: the scan's access path (a point
    /// lookup) is evaluated over that row.
    Lookup,
    /// Read the table once into a hash table on `inner_keys` (over its row), probed with
    /// `outer_keys` (over the row so far); both sides' values are of one type family.
    Hash {
        outer_keys: Vec<Expr>,
        inner_keys: Vec<Expr>,
    },
}

/// One table joined to the rows so far (`outer_width` columns wide).
pub struct JoinStep {
    pub kind: JoinKind,
    /// The table; its filter is over its own row.
    pub scan: ScanPlan,
    /// The join condition, over the row so far followed by the table's row.
    pub on: Option<Expr>,
    pub strategy: JoinStrategy,
    pub outer_width: usize,
}

#[derive(Clone, Debug)]
pub struct OrderKey {
    pub expr: Expr,
    pub desc: bool,
    pub nulls_first: bool,
}

pub struct Aggregation {
    /// GROUP BY expressions over input rows.
    pub keys: Vec<Expr>,
    pub aggs: Vec<AggCall>,
    /// HAVING over aggregate rows.
    pub having: Option<Expr>,
}

pub struct SelectPlan {
    /// None for SELECT without FROM (one empty input row, kept if `filter` passes).
    /// With joins, the first table of FROM.
    pub source: Option<ScanPlan>,
    /// The later tables of FROM, each joined to the rows so far, in order (a left-deep
    /// join); empty for a single table.
    pub joins: Vec<JoinStep>,
    /// When the join reads the tables in another order than FROM's: the position of
    /// each of FROM's columns in the joined row (which `filter` reads); the row is put
    /// back in FROM's order for everything after.
    pub join_layout: Option<Vec<usize>>,
    /// WHERE of a SELECT without FROM, or what of a join's WHERE was not pushed into a
    /// scan or a join step (over the joined row); with a single table, the scan carries
    /// the filter.
    pub filter: Option<Expr>,
    pub aggregation: Option<Aggregation>,
    /// Output expressions, over input rows or (when aggregating) aggregate rows.
    pub projection: Vec<Expr>,
    pub order_by: Vec<OrderKey>,
    pub limit: Option<Expr>,
    pub offset: Option<Expr>,
    /// FOR UPDATE / FOR SHARE: lock each row returned.
    pub row_lock: Option<RowLock>,
    /// SELECT DISTINCT: each output row once.
    pub distinct: bool,
    /// SELECT DISTINCT ON (...): the first row (in ORDER BY's order) of each value of
    /// the first `distinct_on` ORDER BY keys, which are the DISTINCT ON expressions.
    pub distinct_on: usize,
    /// UNION, INTERSECT or EXCEPT: the rows come from it (there is no source), and the
    /// projection, ORDER BY and LIMIT apply to them.
    pub set_op: Option<Box<SetOpPlan>>,
    /// The subqueries in its expressions (`Expr::Subquery`), for the tables they read.
    pub subqueries: Vec<Arc<SelectPlan>>,
    /// Window function calls: computed over all the rows (after WHERE), each row then
    /// extended by their values, which the projection and ORDER BY read.
    pub windows: Vec<super::bind::WindowCall>,
    /// A WITH query: its rows are computed once per statement (for each set of values
    /// of the enclosing queries it refers to), however many times it is scanned.
    pub materialize: bool,
}

impl ScanPlan {
    /// Every row of `table`, in key order.
    pub fn full(table: &Arc<Table>) -> ScanPlan {
        let def = table.def();
        ScanPlan {
            table: table.clone(),
            system: None,
            derived: None,
            function: None,
            qualifier: def.name.clone(),
            def,
            access: Access::Full,
            filter: None,
        }
    }
}

impl SelectPlan {
    /// A full scan of `table` in key order, projected to `columns` (COPY TO, ANALYZE).
    pub fn whole_table(table: &Arc<Table>, columns: Vec<usize>) -> SelectPlan {
        SelectPlan {
            source: Some(ScanPlan::full(table)),
            projection: columns.into_iter().map(Expr::Column).collect(),
            ..SelectPlan::empty()
        }
    }

    /// A plan of nothing: one empty row, projected to none (what fields are not named
    /// in a plan built with `..SelectPlan::empty()` start as).
    pub fn empty() -> SelectPlan {
        SelectPlan {
            source: None,
            joins: Vec::new(),
            join_layout: None,
            filter: None,
            aggregation: None,
            projection: Vec::new(),
            order_by: Vec::new(),
            limit: None,
            offset: None,
            row_lock: None,
            distinct: false,
            distinct_on: 0,
            set_op: None,
            subqueries: Vec::new(),
            windows: Vec::new(),
            materialize: false,
        }
    }

    /// Whether its rows can be read and sent in batches by key, under one snapshot, rather
    /// than computed whole first: one table read in key order (whole or a key range), with
    /// its filter and projection applied row by row, and nothing that needs all the rows
    /// (order, aggregates, windows, DISTINCT, set operations), locks them, or runs other
    /// queries (subqueries, set-returning functions). LIMIT and OFFSET are counted as the
    /// batches go.
    pub fn streams_by_key(&self) -> bool {
        let Some(scan) = &self.source else {
            return false;
        };
        scan.system.is_none()
            && scan.derived.is_none()
            && scan.function.is_none()
            && matches!(scan.access, Access::Full | Access::Range { .. })
            && self.joins.is_empty()
            && self.filter.is_none()
            && self.aggregation.is_none()
            && self.order_by.is_empty()
            && self.row_lock.is_none()
            && !self.distinct
            && self.distinct_on == 0
            && self.set_op.is_none()
            && self.subqueries.is_empty()
            && self.windows.is_empty()
            && !self.projection.iter().any(Expr::has_set_returning)
    }

    /// Whether its rows are its FROM's rows (joined, filtered) or a set operation's,
    /// grouped and aggregated or made DISTINCT if it says so, projected, and sorted by
    /// ORDER BY if it has one, nothing else: then past `work_mem` they can go to disk (groups and distinct rows
    /// too, `executor/grouping.rs`; sorted runs, or in arrival order without ORDER BY)
    /// and be sent as they are read back. Not a lookup of one row by its key, which needs
    /// no such care.
    pub fn sorts_externally(&self) -> bool {
        let one_row = self.joins.is_empty()
            && self.source.as_ref().is_some_and(|s| {
                matches!(s.access, Access::Point(_))
                    && s.derived.is_none()
                    && s.function.is_none()
                    && s.system.is_none()
            });
        // A set operation's rows come from it (`executor/set_ops.rs`), except a
        // recursive WITH query's, which are computed whole.
        let set_op_streams = self
            .set_op
            .as_ref()
            .is_none_or(|op| !matches!(op.op, SetOp::RecursiveUnion(_)));
        (self.source.is_some() || self.set_op.is_some())
            && !one_row
            && self.row_lock.is_none()
            && self.distinct_on == 0
            && set_op_streams
            && (self.windows.is_empty() || self.aggregation.is_none())
            && !self.projection.iter().any(Expr::has_set_returning)
            && !self.order_by.iter().any(|k| k.expr.has_set_returning())
    }

    /// The tables it reads: its FROM's, its subqueries', and both sides' of a set
    /// operation (not system views or placeholders).
    pub fn tables_read(&self) -> Vec<&Arc<Table>> {
        let scans = || self.source.iter().chain(self.joins.iter().map(|j| &j.scan));
        let mut tables: Vec<&Arc<Table>> = scans()
            .filter(|s| s.system.is_none() && s.derived.is_none() && s.function.is_none())
            .map(|s| &s.table)
            .collect();
        for derived in scans().filter_map(|s| s.derived.as_deref()) {
            tables.extend(derived.tables_read());
        }
        for sub in &self.subqueries {
            tables.extend(sub.tables_read());
        }
        if let Some(op) = &self.set_op {
            tables.extend(op.left.tables_read());
            tables.extend(op.right.tables_read());
        }
        tables
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SetOp {
    Union,
    Intersect,
    Except,
    /// A recursive WITH query: the left side's rows, then the right side's over and
    /// over, each time reading the rows the last time added as working table `id`
    /// (`TableFunctionKind::WorkTable`), until it adds none.
    RecursiveUnion(usize),
}

/// Two queries' rows combined. Each side's values are cast to the result's column type
/// where its own differs (`Some`).
pub struct SetOpPlan {
    pub op: SetOp,
    /// ALL: duplicates are kept (as many as the operation's multiset semantics give).
    pub all: bool,
    pub left: SelectPlan,
    pub right: SelectPlan,
    pub left_casts: Vec<Option<crate::types::DataType>>,
    pub right_casts: Vec<Option<crate::types::DataType>>,
}

/// A locking SELECT's clause. FOR NO KEY UPDATE locks as FOR UPDATE does, FOR KEY SHARE
/// as FOR SHARE: there are no foreign keys for the weaker modes to favour.
#[derive(Clone, Copy, Debug)]
pub struct RowLock {
    pub want: Want,
    pub wait: RowLockWait,
}

/// What a locking SELECT does at a row another transaction holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RowLockWait {
    Block,
    /// NOWAIT: fail with 55P03.
    NoWait,
    /// SKIP LOCKED: pass over the row.
    SkipLocked,
}

pub enum InsertSource {
    /// Rows of expressions, one per target column; None means DEFAULT.
    Values(Vec<Vec<Option<Expr>>>),
    Select(Box<SelectPlan>),
}

pub enum OnConflict {
    Error,
    Nothing,
    /// Assignments (column, expression) and WHERE, over [existing row ++ excluded row].
    Update {
        assignments: Vec<(usize, Expr)>,
        filter: Option<Expr>,
    },
}

pub struct InsertPlan {
    pub table: Arc<Table>,
    pub def: Arc<TableDef>,
    /// Table column position for each source column.
    pub targets: Vec<usize>,
    pub source: InsertSource,
    /// Per table column: its DEFAULT expression (None → NULL).
    pub defaults: Vec<Option<Expr>>,
    /// The table's CHECK constraints: (name, expression over a row).
    pub checks: Vec<(String, Expr)>,
    pub on_conflict: OnConflict,
    pub returning: Vec<Expr>,
    /// The subqueries in its expressions (their tables are read).
    pub subqueries: Vec<Arc<SelectPlan>>,
}

pub struct UpdatePlan {
    pub scan: ScanPlan,
    pub assignments: Vec<(usize, Expr)>,
    /// The table's CHECK constraints: (name, expression over a row).
    pub checks: Vec<(String, Expr)>,
    pub returning: Vec<Expr>,
    /// The same assignments as increments, when the UPDATE may defer them (see
    /// `Executor::defer_increment`): it names one row by its whole key, its WHERE reads
    /// only key columns, it returns nothing, and every assignment is
    /// `c = c + e`, `c = c - e` or `c = e + c` for a numeric non-key column `c` and a
    /// row-independent `e`. Then the statement's outcome does not depend on the row's
    /// other contents, so the increments may be applied to whatever version is latest
    /// when the transaction commits.
    pub increments: Option<Vec<Increment<Expr>>>,
    /// Whether this statement defers its increments, learned per plan (see
    /// [`DeferIncrements`]).
    pub defer: DeferIncrements,
    /// The subqueries in its expressions (their tables are read).
    pub subqueries: Vec<Arc<SelectPlan>>,
    /// The tables its foreign keys' referential actions may write (if it changes a
    /// referenced key): it passes their write gates too.
    pub action_targets: Vec<Arc<Table>>,
}

/// Whether an UPDATE whose assignments are increments defers them. Deferring pays only
/// for a row the transaction does not read again: one it reads must first be fixed
/// ("materialized", which waits for the increments ahead of it), and a transaction that
/// waits there while holding other rows could deadlock where an ordinary UPDATE, which
/// waits before taking anything, would not. So a plan starts by running the ordinary
/// way; once a transaction that ran it commits without having touched its table again
/// afterwards, it defers; a transaction that touches the table after it (reads, writes
/// or DDL) turns deferring off for good.
#[derive(Default)]
pub struct DeferIncrements(std::sync::atomic::AtomicU8);

impl DeferIncrements {
    const UNTRIED: u8 = 0;
    const ALLOWED: u8 = 1;
    const NEVER: u8 = 2;

    pub fn allowed(&self) -> bool {
        self.0.load(std::sync::atomic::Ordering::Relaxed) == Self::ALLOWED
    }

    /// A transaction that ran the plan touched its table again.
    pub fn touched_after(&self) {
        self.0
            .store(Self::NEVER, std::sync::atomic::Ordering::Relaxed);
    }

    /// A transaction that ran the plan committed without touching its table again.
    pub fn committed_untouched(&self) {
        let _ = self.0.compare_exchange(
            Self::UNTRIED,
            Self::ALLOWED,
            std::sync::atomic::Ordering::Relaxed,
            std::sync::atomic::Ordering::Relaxed,
        );
    }
}

pub struct DeletePlan {
    pub scan: ScanPlan,
    pub returning: Vec<Expr>,
    /// The subqueries in its expressions (their tables are read).
    pub subqueries: Vec<Arc<SelectPlan>>,
    /// The tables its foreign keys' referential actions may write: it passes their
    /// write gates too.
    pub action_targets: Vec<Arc<Table>>,
}

pub struct CopyPlan {
    pub table: Arc<Table>,
    pub def: Arc<TableDef>,
    pub targets: Vec<usize>,
    pub defaults: Vec<Option<Expr>>,
    /// The table's CHECK constraints: (name, expression over a row).
    pub checks: Vec<(String, Expr)>,
    pub stmt: CopyStatement,
}

/// COPY ... TO STDOUT: the rows of a query, or of a table's columns (a plain scan, which
/// the session streams in batches by key).
pub struct CopyToPlan {
    pub select: SelectPlan,
    /// The output columns' names (a header line) and types (binary format).
    pub names: Vec<String>,
    pub types: Vec<crate::types::DataType>,
    /// The select is a plain scan of a table that may be read in batches.
    pub by_key: bool,
    pub stmt: CopyStatement,
}

/// BEGIN, COMMIT, savepoints and the like.
pub enum TxnStatement {
    /// BEGIN or START TRANSACTION (`tag`), with its modes.
    Begin {
        modes: TxnModes,
        tag: &'static str,
    },
    SetTransaction {
        modes: TxnModes,
    },
    /// SET SESSION CHARACTERISTICS AS TRANSACTION: the defaults of later transactions.
    SetSessionCharacteristics {
        modes: TxnModes,
    },
    /// COMMIT, or with `chain` COMMIT AND CHAIN.
    Commit {
        chain: bool,
    },
    /// ROLLBACK, or with `chain` ROLLBACK AND CHAIN.
    Rollback {
        chain: bool,
    },
    Savepoint {
        name: String,
    },
    ReleaseSavepoint {
        name: String,
    },
    RollbackToSavepoint {
        name: String,
    },
}

impl From<TxnStatement> for Plan {
    fn from(statement: TxnStatement) -> Plan {
        Plan::Transaction(statement)
    }
}

/// The modes a BEGIN or SET TRANSACTION names; None: not named.
#[derive(Clone, Copy, Debug, Default)]
pub struct TxnModes {
    pub isolation: Option<Isolation>,
    pub read_only: Option<bool>,
}

pub enum Plan {
    Select(Box<SelectPlan>),
    Insert(Box<InsertPlan>),
    Update(Box<UpdatePlan>),
    Delete(Box<DeletePlan>),
    Copy(Box<CopyPlan>),
    CopyTo(Box<CopyToPlan>),
    CreateTable {
        def: crate::storage::TableDef,
        if_not_exists: bool,
    },
    DropTable {
        names: Vec<String>,
        if_exists: bool,
        /// CASCADE: the foreign keys of other tables that reference them go too.
        cascade: bool,
    },
    Truncate {
        tables: Vec<Arc<Table>>,
        /// CASCADE: the tables whose foreign keys reference them are truncated too.
        cascade: bool,
        /// RESTART IDENTITY: their owned sequences start over.
        restart_identity: bool,
    },
    /// LOCK TABLE: `exclusive` (ACCESS EXCLUSIVE) closes the tables' gates until the
    /// transaction ends; the weaker modes there are (ACCESS SHARE, ROW SHARE, ROW
    /// EXCLUSIVE) hold them as a transaction block that read them does.
    /// ALTER TABLE ... ADD GENERATED BY DEFAULT AS IDENTITY: `sequence` (a
    /// `CreateSequence` plan) is created, owned by the column, whose default it becomes.
    AddIdentity {
        table: Arc<Table>,
        column: usize,
        sequence: Box<Plan>,
    },
    /// EXPLAIN [ANALYZE] of a query or DML statement (`inner`); ANALYZE runs a query.
    Explain {
        inner: Box<Plan>,
        analyze: bool,
        options: super::explain::Options,
    },
    LockTables {
        tables: Vec<Arc<Table>>,
        exclusive: bool,
        nowait: bool,
    },
    AddPrimaryKey {
        table: Arc<Table>,
        name: Option<String>,
        columns: Vec<usize>,
    },
    /// ALTER TABLE ... DROP CONSTRAINT of the table's primary key (`name`).
    DropPrimaryKey {
        table: Arc<Table>,
        name: String,
    },
    /// CREATE [UNIQUE] INDEX; `def.name` is the name given or chosen.
    CreateIndex {
        table: Arc<Table>,
        def: crate::storage::IndexDef,
        if_not_exists: bool,
    },
    CreateSequence {
        name: String,
        options: crate::storage::SequenceOptions,
        if_not_exists: bool,
        /// OWNED BY table.column.
        owned_by: Option<(Arc<Table>, usize)>,
    },
    DropSequence {
        names: Vec<String>,
        if_exists: bool,
    },
    /// ALTER SEQUENCE ... OWNED BY (`Some`: the new owner, `None` inside: none).
    SequenceOwner {
        name: String,
        owned_by: Option<(Arc<Table>, usize)>,
    },
    /// ALTER SEQUENCE ... RESTART [WITH n] (None: its start).
    RestartSequence {
        name: String,
        at: Option<i64>,
    },
    /// ALTER SEQUENCE with options: those named change, the others keep their values;
    /// and perhaps RESTART (`Some(None)`: at the start).
    AlterSequence {
        name: String,
        changes: SequenceChanges,
        restart: Option<Option<i64>>,
    },
    CreateView {
        view: crate::storage::View,
        /// CREATE OR REPLACE VIEW of a view that exists: its new query (the columns it had
        /// come first, unchanged).
        replace: bool,
    },
    /// CREATE / ALTER / DROP ROLE (or USER).
    Role(super::roles::RoleStatement),
    DropView {
        names: Vec<String>,
        if_exists: bool,
        /// CASCADE: the views that read them go too.
        cascade: bool,
    },
    /// ALTER TABLE ... ADD COLUMN: the column, and its default's value for the rows
    /// already there (an expression of no row, evaluated when the statement runs).
    AddColumn {
        table: Arc<Table>,
        column: crate::storage::Column,
        existing_rows: Option<Expr>,
        if_not_exists: bool,
        /// `REFERENCES` on the new column: its foreign key.
        foreign_key: Option<crate::storage::ForeignKeyDef>,
        /// `UNIQUE` on the new column: its constraint's index, made after the column.
        unique: Option<crate::storage::IndexDef>,
    },
    /// COMMENT ON TABLE (no `column`) or COLUMN ... IS text (None: IS NULL, removing it).
    Comment {
        table: Arc<Table>,
        column: Option<usize>,
        comment: Option<String>,
    },
    /// ALTER TABLE ... RENAME COLUMN a TO b, or RENAME TO (the table's new definition).
    Rename {
        table: Arc<Table>,
        def: crate::storage::TableDef,
    },
    /// ALTER TABLE ... ADD CONSTRAINT ... FOREIGN KEY: `fk`, of `table`, referencing
    /// `parent` (perhaps `table` itself).
    AddForeignKey {
        table: Arc<Table>,
        parent: Arc<Table>,
        fk: crate::storage::ForeignKeyDef,
    },
    /// ALTER TABLE ... DROP CONSTRAINT of a foreign key.
    DropForeignKey {
        table: Arc<Table>,
        name: String,
    },
    /// ALTER TABLE ... ADD [CONSTRAINT name] CHECK (e) [NOT VALID]: `check`, with `expr`
    /// bound over the table's rows (to validate them unless NOT VALID).
    AddCheck {
        table: Arc<Table>,
        check: crate::storage::CheckDef,
        expr: Expr,
    },
    /// ALTER TABLE ... DROP CONSTRAINT of a CHECK constraint.
    DropCheck {
        table: Arc<Table>,
        name: String,
    },
    /// ALTER TABLE ... VALIDATE CONSTRAINT of a foreign key or (with its bound
    /// expression) a CHECK constraint added NOT VALID.
    ValidateConstraint {
        table: Arc<Table>,
        name: String,
        check: Option<Expr>,
    },
    /// SET CONSTRAINTS { ALL | names } { DEFERRED | IMMEDIATE }: `names` None for ALL.
    SetConstraints {
        names: Option<Vec<String>>,
        deferred: bool,
    },
    /// ALTER TABLE ... DROP COLUMN: the table's definition with the column dropped.
    DropColumn {
        table: Arc<Table>,
        def: TableDef,
    },
    /// ALTER TABLE ... ALTER COLUMN ... SET NOT NULL / DROP NOT NULL.
    SetNotNull {
        table: Arc<Table>,
        column: usize,
        not_null: bool,
    },
    /// ALTER TABLE ... ALTER COLUMN ... TYPE, for a change no row needs rewriting for;
    /// `max_chars`: the new type's length, which every value must fit.
    SetColumnType {
        table: Arc<Table>,
        column: usize,
        data_type: crate::types::DataType,
        max_chars: Option<u32>,
    },
    /// ALTER TABLE ... ALTER COLUMN ... TYPE [USING] whose rows are rewritten: each row's
    /// new value is `convert` of the row (of the table's columns).
    RewriteColumnType {
        table: Arc<Table>,
        column: usize,
        data_type: crate::types::DataType,
        convert: Expr,
    },
    /// ALTER TABLE ... ALTER COLUMN ... SET DEFAULT / DROP DEFAULT (None).
    SetColumnDefault {
        table: Arc<Table>,
        column: usize,
        default: Option<String>,
    },
    /// DROP INDEX, or ALTER TABLE ... DROP CONSTRAINT of a unique constraint
    /// (`constraint`): the indexes found, by table.
    DropIndex {
        indexes: Vec<(Arc<Table>, String)>,
        constraint: bool,
        /// DROP INDEX IF EXISTS: the names that are not there (a NOTICE each).
        missing: Vec<String>,
    },
    /// A transaction-control statement (`session::txn_control` runs it).
    Transaction(TxnStatement),
    Set {
        name: String,
        value: Option<String>,
        local: bool,
    },
    Reset {
        name: Option<String>,
    },
    Show {
        name: String,
    },
    ShowAll,
    /// PREPARE name [(types)] AS statement: a named prepared statement, as a Parse
    /// message makes one.
    Prepare {
        name: String,
        sql: String,
        param_oids: Vec<u32>,
    },
    /// EXECUTE name [(arguments)]: the arguments are row-independent expressions.
    Execute {
        name: String,
        args: Vec<Expr>,
    },
    /// DEALLOCATE name, or DEALLOCATE ALL (None): the connection drops its prepared
    /// statements.
    Deallocate {
        name: Option<String>,
    },
    Checkpoint,
    Maintenance {
        tag: &'static str,
        /// The tables named, or every table.
        tables: Vec<Arc<crate::storage::Table>>,
        /// Whether their statistics are measured (ANALYZE, VACUUM ANALYZE).
        analyze: bool,
        /// What an IF [NOT] EXISTS that skips the statement says (a NOTICE).
        notice: Option<String>,
    },
}

/// The options a CREATE or ALTER SEQUENCE names (None: not named; `Some(None)` for NO
/// MINVALUE / NO MAXVALUE).
#[derive(Clone, Copy, Debug, Default)]
pub struct SequenceChanges {
    pub data_type: Option<crate::types::DataType>,
    pub increment: Option<i64>,
    pub min: Option<Option<i64>>,
    pub max: Option<Option<i64>>,
    pub start: Option<i64>,
    pub cache: Option<i64>,
}

impl SequenceChanges {
    /// The options after these changes to `base` (`creating`: CREATE SEQUENCE's, whose
    /// start is its minimum unless named), checked as PostgreSQL checks them (22023).
    pub fn applied_to(
        &self,
        base: crate::storage::SequenceOptions,
        creating: bool,
    ) -> crate::error::Result<crate::storage::SequenceOptions> {
        use crate::error::{Error, SqlState};
        use crate::types::DataType;
        let invalid = |m: String| Error::new(SqlState::INVALID_PARAMETER_VALUE, m);
        let type_max = |t: DataType| match t {
            DataType::Int2 => i16::MAX as i64,
            DataType::Int4 => i32::MAX as i64,
            _ => i64::MAX,
        };
        let mut o = base;
        let old_type_max = type_max(base.data_type);
        o.data_type = self.data_type.unwrap_or(base.data_type);
        let new_type_max = type_max(o.data_type);
        if let Some(increment) = self.increment {
            o.increment = increment;
        }
        if o.increment == 0 {
            return Err(invalid("INCREMENT must not be zero".into()));
        }
        if o.increment < 0 {
            return Err(Error::unsupported(
                "descending sequences are not supported yet",
            ));
        }
        o.min = match self.min {
            Some(min) => min.unwrap_or(1),
            None => base.min,
        };
        o.max = match self.max {
            Some(max) => max.unwrap_or(new_type_max),
            // A maximum that was its old type's follows the new type.
            None if base.max == old_type_max => new_type_max,
            None => base.max,
        };
        if let Some(cache) = self.cache {
            o.cache = cache;
        }
        let type_min = -new_type_max - 1;
        let name_of = o.data_type.name();
        if o.max > new_type_max || o.max < type_min {
            return Err(invalid(format!(
                "MAXVALUE ({}) is out of range for sequence data type {name_of}",
                o.max
            )));
        }
        if o.min > new_type_max || o.min < type_min {
            return Err(invalid(format!(
                "MINVALUE ({}) is out of range for sequence data type {name_of}",
                o.min
            )));
        }
        if o.min >= o.max {
            return Err(invalid(format!(
                "MINVALUE ({}) must be less than MAXVALUE ({})",
                o.min, o.max
            )));
        }
        o.start = match (self.start, creating) {
            (Some(start), _) => start,
            (None, true) => o.min,
            (None, false) => base.start,
        };
        if o.start < o.min {
            return Err(invalid(format!(
                "START value ({}) cannot be less than MINVALUE ({})",
                o.start, o.min
            )));
        }
        if o.start > o.max {
            return Err(invalid(format!(
                "START value ({}) cannot be greater than MAXVALUE ({})",
                o.start, o.max
            )));
        }
        if o.cache < 1 {
            return Err(invalid(format!(
                "CACHE ({}) must be greater than zero",
                o.cache
            )));
        }
        Ok(o)
    }
}
