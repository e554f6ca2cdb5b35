//! [`Transaction`]: the one owner of a running transaction's state and rules.
//!
//! The SQL layer executes against this narrow API: it takes snapshots, locks rows, passes
//! and closes write gates, records serializable reads and writes, sets savepoint marks,
//! and commits or rolls back, all through a `Transaction`. Nothing in `sql/` calls the
//! lock table, a write gate, the dependency graph or the commit sequence itself.
//!
//! Invariants the owner keeps:
//! - Every row lock it takes is in `locks` exactly once until it is released (rollback,
//!   rollback to a savepoint that precedes it, commit): so ending the transaction
//!   releases everything it holds, and nothing it does not.
//! - A lock it cannot get at once is either waited for in place (blocking) or, when the
//!   caller asked to stop, remembered as `lock_wait` with nothing taken: the caller
//!   awaits [`Transaction::wait_for_lock`] as a task and runs the statement again at the
//!   statement's snapshot ([`Transaction::retry_at`]). A wait is a typed result
//!   ([`LockStep::MustWait`]), never an error.
//! - Each table it writes is entered through its write gate once per transaction, and a
//!   gate it closes (DROP TABLE, TRUNCATE) stays closed until its commit is visible or it
//!   rolls back ([`Committing`] carries the closed gates to the end of the commit).
//! - Ending it (commit or rollback) consumes it: no statement can run in a transaction
//!   that has ended. A commit that fails before its log append rolls the transaction back
//!   itself; after the append nothing may fail (`TxnManager::start_commit`).

use std::ops::Bound;
use std::sync::Arc;

use super::increments::apply_increments;
use super::{
    fatal_after_logging, records, CommitInFlight, CommitRequest, Isolation, JournalMark,
    SessionSlot, TxnId, TxnManager, Want, WriteSet,
};
use crate::constants::DEADLOCK_TIMEOUT;
use crate::error::{Error, Result, SqlState};
use crate::storage::write_gate::{Closed, ClosedGate, Interrupts, Writer};
use crate::storage::{Key, Table, TableDef, TableId};
use crate::wal::{LogReservation, Lsn, RecordKind, SyncLevel};

use super::locks::LockTable;
use super::Increment;

/// A row lock a statement stopped at, to be awaited before it runs again.
struct LockWait {
    table: TableId,
    key: Key,
    want: Want,
    /// The transaction does not hold the key yet: it joins `locks` once granted.
    new_lock: bool,
}

/// The result of asking for a row lock.
#[must_use]
pub enum LockStep {
    Held,
    /// Held by another transaction: the caller asked to stop rather than block, so the
    /// statement must stop and wait ([`Transaction::wait_for_lock`]).
    MustWait,
}

/// Where a savepoint puts the transaction back to.
#[derive(Clone, Copy)]
pub struct TxnMark {
    writes: JournalMark,
    locks: usize,
    created: usize,
    dropped: usize,
    altered: usize,
}

/// A commit whose record is in the log: finish it (durable, installed, visible) before
/// replying. The gates its DROP TABLE and TRUNCATE closed open when it is visible.
pub struct Committing {
    manager: Arc<TxnManager>,
    slot: Arc<SessionSlot>,
    flight: CommitInFlight,
    closed_gates: Vec<ClosedGate>,
}

impl Committing {
    /// A catalog change committed on its own ([`TxnManager::commit_ddl`]), to be finished
    /// like a transaction's commit.
    pub fn ddl(manager: Arc<TxnManager>, slot: Arc<SessionSlot>, flight: CommitInFlight) -> Self {
        Committing {
            manager,
            slot,
            flight,
            closed_gates: Vec::new(),
        }
    }

    /// Finish the commit, blocking.
    pub fn finish(self) {
        self.manager.finish_commit(self.flight, Some(&self.slot));
        drop(self.closed_gates);
    }

    /// Finish the commit as a task.
    /// Returns a warning if a wait for synchronous standbys was cancelled.
    pub async fn finish_async(self) -> Option<crate::error::Error> {
        let warning = self
            .manager
            .finish_commit_async(self.flight, Some(&self.slot))
            .await;
        drop(self.closed_gates);
        warning
    }
}

pub struct Transaction {
    manager: Arc<TxnManager>,
    slot: Arc<SessionSlot>,
    pub id: TxnId,
    pub isolation: Isolation,
    /// Opened by BEGIN (a block), not by a lone statement.
    pub explicit: bool,
    /// READ ONLY: statements that write fail with 25006.
    pub read_only: bool,
    /// REPEATABLE READ and SERIALIZABLE: the transaction's snapshot, taken by its first
    /// statement.
    pub snapshot: Option<Lsn>,
    pub writes: WriteSet,
    /// Tables this transaction dropped (logged with its commit).
    pub dropped: Vec<TableId>,
    /// Tables this transaction created; its commit confirms their creation in the log.
    pub created: Vec<TableId>,
    /// Definitions this transaction changed (logged with its commit), each change with
    /// the definition before it, oldest first.
    altered: Vec<(Arc<Table>, Arc<TableDef>)>,
    /// The end of log records it caused outside its commit record (sequence advances).
    pub logged_upto: u64,
    locks: Vec<(TableId, Key)>,
    lock_wait: Option<LockWait>,
    /// The snapshot of the statement that stopped at `lock_wait`: it runs again at the
    /// same snapshot, so that (READ COMMITTED) it acts on the rows that snapshot found,
    /// re-checked at their newest versions, and never on rows committed meanwhile.
    retry_snapshot: Option<Lsn>,
    pub start_us: i64,
    /// Per value of a unique index this transaction wrote (the lock key of the value,
    /// see `sql::executor`), the row key that took it last: where its own rows may
    /// already hold a value a new row wants.
    pub unique_claims: rustc_hash::FxHashMap<Vec<u8>, Key>,
}

impl Transaction {
    /// Whether this transaction changed the definition of table `id` (uncommitted).
    pub fn changed_definition_of(&self, id: TableId) -> bool {
        self.altered.iter().any(|(t, _)| t.id == id)
    }

    /// The tables whose definitions this transaction changed (uncommitted), each once.
    pub fn changed_definitions(&self) -> Vec<TableId> {
        self.altered_tables().iter().map(|t| t.id).collect()
    }

    pub fn begin(
        manager: &Arc<TxnManager>,
        slot: &Arc<SessionSlot>,
        isolation: Isolation,
        read_only: bool,
        start_us: i64,
    ) -> Transaction {
        Transaction {
            manager: manager.clone(),
            slot: slot.clone(),
            id: manager.begin(),
            isolation,
            explicit: false,
            read_only,
            snapshot: None,
            writes: WriteSet::default(),
            dropped: Vec::new(),
            created: Vec::new(),
            altered: Vec::new(),
            logged_upto: 0,
            locks: Vec::new(),
            lock_wait: None,
            retry_snapshot: None,
            start_us,
            unique_claims: Default::default(),
        }
    }

    // --- snapshots ------------------------------------------------------------------

    /// The snapshot for the next statement: the one a statement that stopped at a lock
    /// runs again at; else READ COMMITTED's fresh one, or the transaction's, taken on
    /// first use (SERIALIZABLE: as it joins the dependency graph, `txn::Ssi`).
    pub fn statement_snapshot(&mut self) -> Lsn {
        if let Some(retry) = self.retry_snapshot.take() {
            return retry;
        }
        if !self.isolation.snapshot_per_transaction() {
            return self.manager.snapshot(&self.slot);
        }
        if let Some(snapshot) = self.snapshot {
            return snapshot;
        }
        let snapshot = if self.isolation == Isolation::Serializable {
            let visible = self.manager.visibility.visible_lsn();
            let (manager, slot) = (&self.manager, &self.slot);
            manager
                .ssi
                .begin(self.id, self.read_only, visible, || manager.snapshot(slot))
        } else {
            self.manager.snapshot(&self.slot)
        };
        self.snapshot = Some(snapshot);
        snapshot
    }

    /// The statement that ran at `snapshot` stopped at a row lock: it runs again there.
    pub fn retry_at(&mut self, snapshot: Lsn) {
        self.retry_snapshot = Some(snapshot);
    }

    /// A statement starts, or the last one's wait is abandoned.
    pub fn forget_wait(&mut self) {
        self.lock_wait = None;
    }

    // --- row locks ------------------------------------------------------------------

    /// Get `want` on a row, waiting if another transaction is in the way: blocking, or,
    /// with `stop`, by returning [`LockStep::MustWait`] having taken nothing. `new_lock`:
    /// the transaction does not hold the key yet.
    pub fn lock_row(
        &mut self,
        table: TableId,
        key: &[u8],
        want: Want,
        new_lock: bool,
        stop: bool,
    ) -> Result<LockStep> {
        let locks = &self.manager.locks;
        let mut new_lock = new_lock;
        if let Some(fresh) = locks.try_lock_new(self.id, table, key, want) {
            // A key held already (in a weaker mode, say) is in the list once.
            new_lock &= fresh;
        } else {
            new_lock &= !locks.holds(self.id, table, key);
            if stop {
                self.lock_wait = Some(LockWait {
                    table,
                    key: key.to_vec(),
                    want,
                    new_lock,
                });
                return Ok(LockStep::MustWait);
            }
            *self.slot.wait_event.lock() = Some(("Lock", "transactionid"));
            let interrupts = self.slot.lock_wait_interrupts();
            let r = locks.lock(self.id, table, key, want, &interrupts);
            *self.slot.wait_event.lock() = None;
            r?;
        }
        if new_lock {
            self.locks.push((table, key.to_vec()));
        }
        Ok(LockStep::Held)
    }

    /// Store our own version of a row (`None`: deleted) in the write set. When that
    /// spills it, the row locks of the keys that moved to the spill trees move there too
    /// (`txn::locks`), and leave the transaction's list.
    pub fn put(
        &mut self,
        table: &Arc<Table>,
        key: Key,
        row: Option<crate::storage::Row>,
    ) -> Result<()> {
        let spilled = self.writes.put(table, key, row)?;
        if spilled.is_empty() {
            return Ok(());
        }
        let locks = &self.manager.locks;
        let mut moved: rustc_hash::FxHashSet<(TableId, Key)> = Default::default();
        for batch in spilled {
            locks.spill_locks(self.id, batch.table, &batch.tree);
            for key in batch.keys {
                if locks.forget_spilled(self.id, batch.table, key.clone()) {
                    moved.insert((batch.table, key));
                }
            }
        }
        if !moved.is_empty() {
            self.locks.retain(|lock| !moved.contains(lock));
            if self.locks.capacity() > 4 * self.locks.len() + 1024 {
                self.locks.shrink_to_fit();
            }
        }
        Ok(())
    }

    /// NOWAIT / SKIP LOCKED: get `want` on a row only if nobody is in the way.
    pub fn try_lock_row(&mut self, table: TableId, key: &[u8], want: Want) -> bool {
        match self.manager.locks.try_lock_new(self.id, table, key, want) {
            Some(true) => {
                self.locks.push((table, key.to_vec()));
                true
            }
            Some(false) => true,
            None => false,
        }
    }

    /// Give back a lock taken by this statement for a row it turned out not to write.
    pub fn unlock_row(&mut self, table: TableId, key: &[u8]) {
        if let Some(i) = self
            .locks
            .iter()
            .rposition(|(t, k)| *t == table && k == key)
        {
            let lock = self.locks.remove(i);
            self.manager.locks.release_all(self.id, &[lock]);
        }
    }

    /// Wait, as a task, for the row lock the last statement stopped at, and take it.
    pub async fn wait_for_lock(&mut self) -> Result<()> {
        let Some(wait) = self.lock_wait.take() else {
            return Ok(());
        };
        *self.slot.wait_event.lock() = Some(("Lock", "transactionid"));
        let locked = self
            .manager
            .locks
            .lock_async(
                self.id,
                wait.table,
                &wait.key,
                wait.want,
                &self.slot.lock_wait_interrupts(),
            )
            .await;
        *self.slot.wait_event.lock() = None;
        locked?;
        if wait.new_lock {
            self.locks.push((wait.table, wait.key));
        }
        Ok(())
    }

    /// Whether another transaction waits for a row lock this one holds.
    pub fn blocks_others(&self) -> bool {
        !self.locks.is_empty() && self.manager.locks.is_waited_on(self.id)
    }

    // --- deferred increments --------------------------------------------------------

    /// The key's increment latch: held from reading a row's latest version to deciding
    /// on an increment to it (`LockTable::latch_increments`).
    pub fn increment_latch(
        &self,
        table: TableId,
        key: &[u8],
    ) -> Vec<parking_lot::MutexGuard<'_, ()>> {
        self.manager
            .locks
            .latch_increments(std::iter::once((table, key)))
    }

    /// The increments other transactions hold on a row.
    pub fn others_increments(&self, table: TableId, key: &[u8]) -> Vec<Increment> {
        self.manager.locks.others_increments(self.id, table, key)
    }

    /// This transaction holds `incs` on a row (with [`Want::Increment`]).
    pub fn hold_increments(&mut self, table: &Arc<Table>, key: Key, incs: Vec<Increment>) {
        self.writes.take_increments(table, &key);
        self.writes.set_increments(table, key.clone(), incs.clone());
        self.manager
            .locks
            .record_increments(self.id, table.id, &key, incs);
    }

    // --- SERIALIZABLE ---------------------------------------------------------------

    /// A statement reads `range` of `table` (SERIALIZABLE: the graph learns of it).
    pub fn note_read(&self, table: TableId, range: (Bound<Key>, Bound<Key>)) -> Result<()> {
        if self.isolation != Isolation::Serializable {
            return Ok(());
        }
        self.manager.ssi.read(self.id, table, range)
    }

    /// A statement is about to write `key` of `table` (SERIALIZABLE: the graph learns of
    /// it, and may fail it with 40001).
    pub fn note_write(&self, table: TableId, key: &[u8]) -> Result<()> {
        if self.isolation != Isolation::Serializable {
            return Ok(());
        }
        let point = (Bound::Included(key.to_vec()), Bound::Included(key.to_vec()));
        self.manager.ssi.write(self.id, table, point)
    }

    // --- write gates and DDL --------------------------------------------------------

    /// Pass the write gate of each table in `written` (once per transaction), and wait
    /// at the gates of those in `read` that another transaction closed. Returns whether it waited:
    /// the table may have been rebuilt meanwhile, so the statement is planned again.
    ///
    /// A transaction block passes the gate of the tables it reads too, and stays inside
    /// until it ends, as PostgreSQL's ACCESS SHARE lock: a DROP TABLE, TRUNCATE or ALTER
    /// TABLE elsewhere waits until it is over, so it never finds a table it has read gone
    /// or rewritten under its snapshot. (A lone statement holds the table it reads; its
    /// snapshot ends with it.)
    pub fn pass_gates(&mut self, written: &[Arc<Table>], read: &[&Arc<Table>]) -> Result<bool> {
        let mut waited = false;
        let read_inside = read.iter().copied().filter(|_| self.explicit);
        for table in written.iter().chain(read_inside) {
            if self.writes.passed_gate(table.id) {
                continue;
            }
            let writer = match Writer::try_enter(table) {
                Some(writer) => writer,
                None => {
                    waited = true;
                    self.wait_at_gate(|interrupts| Writer::enter_waiting(table, interrupts))?
                }
            };
            self.writes.writers.push(writer);
        }
        for table in read.iter().filter(|_| !self.explicit) {
            if table.write_gate().is_closed() && !self.writes.closed_gate(table.id) {
                waited = true;
                self.wait_at_gate(|interrupts| table.write_gate().wait_open(interrupts))?;
            }
        }
        Ok(waited)
    }

    /// On a hot standby, replay does not wait at gates: a DROP TABLE or a rewrite it
    /// replays goes ahead of the transactions inside (PostgreSQL with
    /// `max_standby_streaming_delay = 0`). A transaction that read a table dropped since,
    /// or rewritten after its snapshot, is cancelled with PostgreSQL's recovery-conflict
    /// error (40001) rather than see it gone or changed.
    /// Checked before each statement of the transaction is planned.
    pub fn check_recovery_conflicts(&self) -> Result<()> {
        if !self.manager.in_recovery() {
            return Ok(());
        }
        for writer in &self.writes.writers {
            let table = writer.table();
            let rewritten = self.snapshot.is_some_and(|at| table.rewritten_lsn() > at);
            if table.is_destroyed() || rewritten {
                return Err(Error::new(
                    SqlState::SERIALIZATION_FAILURE,
                    "canceling statement due to conflict with recovery",
                )
                .with_detail("User was holding a relation lock for too long."));
            }
        }
        Ok(())
    }

    /// LOCK TABLE in ACCESS SHARE, ROW SHARE or ROW EXCLUSIVE mode: pass `table`'s gate
    /// and stay inside until the transaction ends, as a block that read it does; with
    /// `nowait`, 55P03 rather than wait at a gate another transaction closed.
    pub fn hold_table(&mut self, table: &Arc<Table>, nowait: bool) -> Result<()> {
        if self.writes.passed_gate(table.id) || self.writes.closed_gate(table.id) {
            return Ok(());
        }
        let name = || table.def().name.clone();
        let writer = match Writer::try_enter(table) {
            Some(writer) => writer,
            None if nowait => {
                return Err(Error::new(
                    SqlState::LOCK_NOT_AVAILABLE,
                    format!("could not obtain lock on relation \"{}\"", name()),
                ))
            }
            None => self.wait_at_gate(|interrupts| Writer::enter_waiting(table, interrupts))?,
        };
        self.writes.writers.push(writer);
        if table.is_destroyed() {
            return Err(Error::new(
                SqlState::UNDEFINED_TABLE,
                format!("relation \"{}\" does not exist", name()),
            ));
        }
        Ok(())
    }

    /// Close `table`'s gate for this transaction (DROP TABLE, TRUNCATE), waiting for the
    /// transactions writing it to end: from now until this one ends, every other
    /// statement on the table waits (`storage::write_gate`).
    pub fn close_gate(&mut self, table: &Arc<Table>) -> Result<()> {
        if self.writes.closed_gate(table.id) {
            return Ok(());
        }
        self.writes.leave_gate(table.id);
        let closed = self.wait_at_gate(|interrupts| ClosedGate::close(table, interrupts))?;
        self.writes.closed.push(closed);
        if self.isolation == Isolation::Serializable {
            // It writes the whole table.
            let whole = (Bound::Unbounded, Bound::Unbounded);
            self.manager.ssi.write(self.id, table.id, whole)?;
        }
        Ok(())
    }

    /// Run `wait`, a wait at a table's gate, off the async runtime's threads, shown in
    /// pg_stat_activity as a relation lock wait, and ended by [`gate_wait_interrupts`].
    fn wait_at_gate<T>(&self, wait: impl FnOnce(Interrupts<'_>) -> Result<T>) -> Result<T> {
        let interrupts = gate_wait_interrupts(&self.slot, &self.manager.locks, self.id);
        *self.slot.wait_event.lock() = Some(("Lock", "relation"));
        let waited = crate::wal::blocking(|| wait(&interrupts));
        *self.slot.wait_event.lock() = None;
        waited
    }

    /// CREATE TABLE: logged and durable before anyone can see the table, so no commit
    /// that writes to it can precede its creation in the log; invisible to others until
    /// this transaction commits, and dropped again if it rolls back. Returns false (and
    /// creates nothing) when the name is taken and `if_not_exists`. A table this
    /// transaction dropped gives up its name to the new one (the others see it until the
    /// transaction commits).
    pub fn create_table(&mut self, def: &TableDef, if_not_exists: bool) -> Result<bool> {
        let catalog = &self.manager.catalog;
        let _ddl = catalog.ddl_lock();
        let holder = catalog.table(&def.name);
        if holder.is_some_and(|t| !self.dropped.contains(&t.id)) {
            if if_not_exists {
                return Ok(false);
            }
            return Err(Error::new(
                SqlState::DUPLICATE_TABLE,
                format!("relation \"{}\" already exists", def.name),
            ));
        }
        let id = catalog.allocate_table_id();
        let mut def = def.clone();
        for fk in &mut def.foreign_keys {
            if fk.referenced == TableId::SELF_REFERENCE {
                fk.referenced = id;
            }
        }
        let def = &def;
        let payload = records::encode_table_def(id, def);
        // The table's first page gets a frame without writing another page out, and the
        // record its room: once it is logged, nothing fails.
        let pool = catalog.pool();
        let frames = pool.promise_frames(1, 0)?;
        let reservation = match self.manager.reserve_log(payload.len()) {
            Ok(reservation) => reservation,
            Err(e) => {
                pool.release_frames(frames);
                return Err(e);
            }
        };
        // Local durability is enough here: the table is seen by others only through
        // this transaction's commit, which waits at the session's level.
        let created = self.manager.commit_ddl(
            RecordKind::CreateTable,
            &payload,
            reservation,
            SyncLevel::Local,
            |_| {
                if let Err(e) = catalog.create_table_replacing(id, def.clone()) {
                    fatal_after_logging("create a table", &e);
                }
            },
        );
        self.manager.finish_commit(created, None);
        pool.release_frames(frames);
        self.created.push(id);
        Ok(true)
    }

    /// CREATE SEQUENCE, as CREATE TABLE: logged now, seen by others only once this
    /// transaction commits, dropped again if it rolls back. The caller has checked the
    /// name under the catalog's DDL lock, which it holds: free, or a sequence this
    /// transaction dropped, which gives it up as a table does.
    pub fn create_sequence(
        &mut self,
        name: &str,
        options: crate::storage::SequenceOptions,
    ) -> Result<()> {
        let catalog = &self.manager.catalog;
        let id = catalog.allocate_table_id();
        let payload = records::encode_create_sequence(name, id, &options);
        self.log_creation(RecordKind::CreateSequence, &payload, id, |catalog| {
            catalog.create_sequence_replacing(name, id, options)
        })
    }

    /// CREATE VIEW of a new view (`view.id` its fresh id), as CREATE SEQUENCE. The caller
    /// has checked the name under the catalog's DDL lock, which it holds.
    pub fn create_view(&mut self, view: crate::storage::View) -> Result<()> {
        let id = view.id;
        let payload = records::encode_create_view(&view);
        self.log_creation(RecordKind::CreateView, &payload, id, |catalog| {
            catalog.create_view(view);
            Ok(())
        })
    }

    /// Log the creation of sequence or view `id` (`payload` marks it unconfirmed) and
    /// make it with `create`; its commit confirms it.
    fn log_creation(
        &mut self,
        kind: RecordKind,
        payload: &[u8],
        id: TableId,
        create: impl FnOnce(&crate::storage::Catalog) -> Result<()>,
    ) -> Result<()> {
        let catalog = &self.manager.catalog;
        let reservation = self.manager.reserve_log(payload.len())?;
        // Local durability is enough here, as for CREATE TABLE.
        let created = self
            .manager
            .commit_ddl(kind, payload, reservation, SyncLevel::Local, |_| {
                catalog.mark_unconfirmed(id);
                if let Err(e) = create(catalog) {
                    fatal_after_logging("create a sequence or view", &e);
                }
            });
        self.manager.finish_commit(created, None);
        self.created.push(id);
        Ok(())
    }

    /// DROP SEQUENCE or DROP VIEW of the one with id `id`: this transaction no longer
    /// sees it; others do until it commits, when it goes (a rollback keeps it).
    pub fn drop_relation(&mut self, id: TableId) {
        if !self.dropped.contains(&id) {
            self.dropped.push(id);
        }
        // This transaction's plans no longer see it.
        self.manager.catalog.table_altered();
    }

    /// DROP TABLE: others wait for the table until this transaction ends; the drop is
    /// logged with its commit, and the table leaves the catalog then.
    pub fn drop_table(&mut self, table: &Arc<Table>) -> Result<()> {
        self.close_gate(table)?;
        self.dropped.push(table.id);
        // This transaction's plans no longer see the table.
        self.manager.catalog.table_altered();
        Ok(())
    }

    /// Drop the tables created after the first `keep` (a rollback), newest first.
    fn drop_created(&mut self, keep: usize) {
        let catalog = &self.manager.catalog;
        while self.created.len() > keep {
            let Some(id) = self.created.pop() else {
                break;
            };
            // A table is dropped by name; a sequence or view by id (the id space is
            // shared: its DropTable record names its id, and replay drops whichever it is).
            let table_name = catalog.table_by_id(id).map(|t| t.def().name.clone());
            let exists = table_name.is_some()
                || catalog.view_by_id(id).is_some()
                || catalog.sequence_by_id(id).is_some();
            if !exists {
                continue;
            }
            let _ddl = catalog.ddl_lock();
            let mut gone = Vec::new();
            // In the log's headroom: a rollback does not fail for lack of space.
            let dropped = self.manager.commit_ddl(
                RecordKind::DropTable,
                &records::encode_drop_table(id),
                LogReservation::none(),
                SyncLevel::Local,
                |_| {
                    let named = table_name
                        .as_deref()
                        .filter(|name| catalog.table(name).is_some_and(|holder| holder.id == id));
                    if let Some(name) = named {
                        catalog.drop_table(name);
                    }
                    // Gone for good, as its replay drops it: its foreign keys no longer
                    // reference anything.
                    gone = catalog.finish_drops(&[id]);
                },
            );
            self.manager.finish_commit(dropped, None);
            for table in gone {
                if let Err(e) = table.destroy() {
                    tracing::warn!(
                        "could not free the pages of table {} whose creation rolled back: {e}",
                        table.id.0
                    );
                }
            }
        }
    }

    // --- savepoints -----------------------------------------------------------------

    pub fn mark(&mut self) -> TxnMark {
        TxnMark {
            writes: self.writes.mark(),
            locks: self.locks.len(),
            created: self.created.len(),
            dropped: self.dropped.len(),
            altered: self.altered.len(),
        }
    }

    /// Change the definition of `table`, whose gate this transaction has closed (see
    /// [`Transaction::close_gate`]): others wait for the table until it ends. The change
    /// is logged with the commit, and undone by a rollback.
    pub fn change_definition(&mut self, table: &Arc<Table>, def: TableDef) {
        debug_assert!(self.writes.closed_gate(table.id));
        self.altered.push((table.clone(), table.def()));
        table.change_def_uncommitted(def);
        self.manager.catalog.table_altered();
    }

    /// CREATE INDEX in a transaction block (the table's gate closed by it): the built
    /// index is the table's until the transaction ends; rolled back, it is dropped.
    pub fn add_index_in_block(
        &mut self,
        table: &Arc<Table>,
        new_def: TableDef,
        def: crate::storage::IndexDef,
        entries: Table,
        valid_from: Lsn,
    ) {
        debug_assert!(self.writes.closed_gate(table.id));
        self.altered.push((table.clone(), table.def()));
        table.add_index_uncommitted(new_def, def, entries, valid_from);
        self.manager.catalog.table_altered();
    }

    /// DROP INDEX in a transaction block (the table's gate closed by it): the index is
    /// out of use until the transaction ends; committed, its pages are freed.
    pub fn drop_index_in_block(&mut self, table: &Arc<Table>, new_def: TableDef, name: &str) {
        debug_assert!(self.writes.closed_gate(table.id));
        self.altered.push((table.clone(), table.def()));
        table.drop_index_uncommitted(new_def, name);
        self.manager.catalog.table_altered();
    }

    /// Undo the definition changes after the first `keep`, newest first.
    fn undo_definitions(&mut self, keep: usize) {
        if self.altered.len() <= keep {
            return;
        }
        while self.altered.len() > keep {
            let Some((table, before)) = self.altered.pop() else {
                break;
            };
            let last = !self.altered.iter().any(|(t, _)| t.id == table.id);
            let name = table.def().name.clone();
            table.undo_def(&before, last);
            if name != before.name {
                // A RENAME TO is undone: the table is found by its old name again.
                self.manager.catalog.rename_table(&name);
            }
        }
        self.manager.catalog.table_altered();
    }

    /// The tables whose definitions this transaction changed, each once.
    fn altered_tables(&self) -> Vec<Arc<Table>> {
        let mut tables: Vec<Arc<Table>> = Vec::new();
        for (t, _) in &self.altered {
            if !tables.iter().any(|x| x.id == t.id) {
                tables.push(t.clone());
            }
        }
        tables
    }

    /// ROLLBACK TO SAVEPOINT: undo the writes since `mark`, release the row locks taken
    /// since (a transaction waiting for one goes on, as in PostgreSQL, where they
    /// belonged to the aborted subtransaction), drop the tables created since, and see
    /// the tables dropped since again.
    pub fn rollback_to(&mut self, mark: &TxnMark) {
        self.writes.rollback_to(mark.writes);
        let locks = self.locks.split_off(mark.locks.min(self.locks.len()));
        self.manager.rollback(self.id, &locks);
        self.drop_created(mark.created);
        self.undo_definitions(mark.altered);
        if self.dropped.len() > mark.dropped {
            self.dropped.truncate(mark.dropped);
            self.manager.catalog.table_altered();
        }
        self.lock_wait = None;
        self.retry_snapshot = None;
    }

    /// All savepoints are gone (RELEASE of the outermost).
    pub fn forget_marks(&mut self) {
        self.writes.forget_marks();
    }

    // --- ending ---------------------------------------------------------------------

    /// Commit. Its record takes its place in the log now (after `before_append`, which
    /// runs only if it gets that far); the rest, durability, install, visibility and the
    /// release of locks, is [`Committing::finish`]. A commit that fails on the way (a
    /// bulk load's pages, an increment out of range, a serialization failure) has rolled
    /// the transaction back.
    pub fn commit(mut self, level: SyncLevel, before_append: impl FnOnce()) -> Result<Committing> {
        if let Err(e) = self.manager.flush_bulk_loads(&mut self.writes) {
            self.rollback();
            return Err(e);
        }
        // Held until the commit is installed. (Only a transaction with deferred increments
        // takes latches, and only it pays for a handle on the lock table that outlives it.)
        let latch_owner = self.writes.has_increments().then(|| self.manager.clone());
        let _latches = match &latch_owner {
            Some(manager) => {
                match increments_to_images(&manager.locks, self.id, &mut self.writes) {
                    Ok(latches) => latches,
                    Err(e) => {
                        self.rollback();
                        return Err(e);
                    }
                }
            }
            None => Vec::new(),
        };
        // The record and its room in the log: a full disk fails the commit here, with
        // nothing logged.
        let altered = self.altered_tables();
        let record = match self.manager.prepare_commit_record(
            &self.writes,
            &self.created,
            &self.dropped,
            &altered,
        ) {
            Ok(record) => record,
            Err(e) => {
                drop(_latches);
                self.rollback();
                return Err(e);
            }
        };
        let mut record = Some(record);
        before_append();
        // Others wait at these gates until the commit is visible, not just installed:
        // the statement they run next takes a snapshot that must hold it.
        let closed_gates = std::mem::take(&mut self.writes.closed);
        // The transaction's own handles on the manager and its session go on to finish the
        // commit: no reference count changes on the commit path.
        let start = |t: Transaction| {
            let Transaction {
                manager,
                slot,
                id,
                writes,
                created,
                dropped,
                locks,
                logged_upto,
                ..
            } = t;
            let flight = manager.start_commit(CommitRequest {
                txn: id,
                writes,
                created: &created,
                dropped: &dropped,
                altered: &altered,
                locks,
                level,
                logged_upto: Lsn(logged_upto),
                record: record.take().flatten(),
            });
            manager.release_snapshot(&slot);
            let lsn = flight.lsn;
            let committing = Committing {
                manager,
                slot,
                flight,
                closed_gates,
            };
            (committing, lsn)
        };
        match (self.isolation, self.snapshot) {
            // SERIALIZABLE: checked against the dependency graph, and appended under its
            // lock (`txn::Ssi`).
            (Isolation::Serializable, Some(_)) => {
                let manager = self.manager.clone();
                let visible = manager.visibility.visible_lsn();
                match manager.ssi.commit(self.id, visible, self, start) {
                    Ok(committing) => Ok(committing),
                    Err((e, t)) => {
                        if let Some(unused) = record.take().flatten() {
                            manager.release_commit_record(unused);
                        }
                        t.rollback();
                        Err(e)
                    }
                }
            }
            _ => Ok(start(self).0),
        }
    }

    /// Roll back: release the row locks and the snapshot, leave the dependency graph,
    /// drop the tables it created and bring back those it dropped.
    pub fn rollback(mut self) {
        self.abort_in_place();
        self.manager.end_transaction();
    }

    /// Abort the transaction's work now (its locks released, its writes dropped, its
    /// tables undone) while the block that ran it stays open, failed, until ROLLBACK.
    pub fn abort_in_place(&mut self) {
        if self.isolation == Isolation::Serializable {
            let visible = self.manager.visibility.visible_lsn();
            self.manager.ssi.abort(self.id, visible);
        }
        if !self.dropped.is_empty() {
            // The tables it dropped are back: its plans see them again.
            self.dropped.clear();
            self.manager.catalog.table_altered();
        }
        self.undo_definitions(0);
        let locks = std::mem::take(&mut self.locks);
        self.manager.rollback(self.id, &locks);
        self.manager.release_snapshot(&self.slot);
        self.writes = WriteSet::default();
        self.drop_created(0);
        self.snapshot = None;
        self.lock_wait = None;
        self.retry_snapshot = None;
    }
}

/// Turn deferred increments into after-images of each row's latest version. Returns the
/// increment latches of those rows, which the caller holds until the commit has
/// installed them: nobody else applies to the rows meanwhile.
fn increments_to_images<'l>(
    locks: &'l LockTable,
    txn: TxnId,
    writes: &mut WriteSet,
) -> Result<Vec<parking_lot::MutexGuard<'l, ()>>> {
    if !writes.has_increments() {
        return Ok(Vec::new());
    }
    let latches = locks.latch_increments(
        writes
            .tables
            .values()
            .flat_map(|w| w.increments.keys().map(|k| (w.table.id, k.as_slice()))),
    );
    for w in writes.tables.values_mut() {
        for (key, incs) in std::mem::take(&mut w.increments) {
            if let Some(owner) = locks.owner_other_than(txn, w.table.id, &key) {
                return Err(Error::internal(format!(
                    "transaction {} owns a row transaction {} holds with an increment",
                    owner.0, txn.0
                )));
            }
            let row = apply_increments(&w.table, &key, &incs)?;
            w.rows.insert(key, Some(row.into()));
        }
    }
    Ok(latches)
}

/// What ends a wait at a table's gate (`storage::write_gate`): the session's interrupts and
/// `lock_timeout`, and a deadlock the lock table cannot see, as a gate wait is not in its
/// wait-for graph. After `DEADLOCK_TIMEOUT` of waiting (PostgreSQL's `deadlock_timeout`),
/// if another transaction waits for a row lock that `txn` holds, the wait fails with
/// 40P01: that transaction may be the one the gate waits for. (It may also not be: then
/// the 40P01 is one PostgreSQL would not have raised, and a retry succeeds.)
fn gate_wait_interrupts<'a>(
    slot: &'a SessionSlot,
    locks: &'a LockTable,
    txn: TxnId,
) -> impl Fn() -> Result<()> + Sync + 'a {
    let base = slot.lock_wait_interrupts();
    let since = std::time::Instant::now();
    move || {
        base()?;
        if since.elapsed() >= DEADLOCK_TIMEOUT && locks.is_waited_on(txn) {
            return Err(
                Error::new(SqlState::DEADLOCK_DETECTED, "deadlock detected").with_detail(format!(
                    "Transaction {} waits for a table lock while another transaction waits for its row lock.",
                    txn.0
                )),
            );
        }
        Ok(())
    }
}

/// ALTER TABLE rebuilds: close `table`'s gate for the statement alone, waiting for every
/// transaction writing it to end.
pub fn close_gate_for_rebuild<'t>(slot: &SessionSlot, table: &'t Table) -> Result<Closed<'t>> {
    *slot.wait_event.lock() = Some(("Lock", "relation"));
    let closed = crate::wal::blocking(|| table.write_gate().close(&slot.cancel));
    *slot.wait_event.lock() = None;
    closed
}
