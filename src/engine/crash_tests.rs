//! Crash consistency of the whole write path on the simulated disk: the WAL, the pages,
//! the page maps and the control file together, through the real commit path, recovery
//! and checkpoints.
//!
//! A seeded workload commits small transactions (inserts, updates and deletes, some rows
//! large enough for overflow pages) and now and then a bulk load that replaces the table
//! (some with a checkpoint taken while the load is still private, some abandoned),
//! and takes a second table through its life one step at a time: created without a
//! primary key, filled with a copy of the first table's rows under hidden row ids, given
//! its primary key (`txn::ddl`: a bulk load of its rows under the new key, named by the
//! SetPrimaryKey record), and dropped. All of it runs synchronously on one thread,
//! through a pool small enough that pages are evicted all the time, with checkpoints in
//! between and WAL segments small enough that they are created, retired and recycled. It
//! is stopped at every disk operation in turn ([`SimDisk::arm_stop_after`]: the thread
//! unwinds there, as if the process died); the stopped disk is crashed with a seed (unsynced
//! writes dropped, torn or kept) and recovered. Every recovered database must:
//! - hold every acknowledged commit, and of the one commit in flight at the crash either
//!   all of its rows or none (nothing partly visible);
//! - pass the tree integrity check (page checksums on every read, key order, separators,
//!   depth, overflow chains) with exactly the rows of the reference model;
//! - start from a checkpoint no older than the last one that completed;
//! - keep working: more commits and a checkpoint on the recovered disk, crashed again,
//!   recover to the new model.
//!
//! A failure names the seed and the crash point; [`replay`] runs that one case.
//!
//! A second suite injects I/O errors instead (EIO or ENOSPC, once or for good, on a write
//! or sync of the WAL, the pages, the page maps or the control file, after a seeded number
//! of matching operations). Whatever the error does (stop the server, fail a checkpoint,
//! fail a bulk load's commit), the disk is then crashed and recovered, and the same checks
//! apply: above all, no commit acknowledged after a failed sync is missing. A failure
//! names the seed; [`replay_fault`] runs that one case.

use std::collections::BTreeMap;
use std::ops::Bound;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::Path;
use std::sync::Arc;

use super::{recover, Recovered};
use crate::disk::sim::{
    silence_simulated_crash_panics, Fault, FaultError, FaultOp, Prng, SimDisk, SimulatedCrash,
};
use crate::error::{stop_server, ServerStopped};
use crate::settings::Settings;
use crate::storage::{BulkLoad, Column, IndexDef, Table, TableDef};
use crate::txn::checkpoints::Reason;
use crate::txn::{records, CommitRequest, TxnManager, WriteSet};
use crate::types::{encode_key, encode_row, DataType, Value};
use crate::wal::{Lsn, RecordKind, SyncLevel};

type Model = BTreeMap<i64, String>;

const DIR: &str = "/db";
/// Small segments, so that they are created, filled, retired and recycled during a workload.
const SEGMENT_BYTES: u64 = 64 * 1024;
const KEYS: u64 = 400;
const TXNS: u64 = 48;
const CHECKPOINT_EVERY: u64 = 12;
/// Page-file slots of zeros added before each checkpoint, as the checkpointer adds between
/// checkpoints.
const PREPARE_SLOTS: usize = 2;

fn settings() -> Arc<Settings> {
    let s = Settings::default();
    s.set_at_startup("shared_buffers", "128kB")
        .expect("valid setting");
    s.set_at_startup("max_connections", "1")
        .expect("valid setting");
    Arc::new(s)
}

pub(super) fn open(disk: &SimDisk) -> Recovered {
    recover(
        &settings(),
        Arc::new(disk.clone()),
        Path::new(DIR),
        SEGMENT_BYTES,
        false,
    )
    .unwrap_or_else(|e| panic!("recovery failed: {e}"))
}

/// The rows of table `t` visible now (empty if it does not exist), after checking its tree.
fn contents(txn: &TxnManager) -> Model {
    table_contents(txn, "t")
        .map(|(rows, _)| rows)
        .unwrap_or_default()
}

/// The rows of table `name` visible now and whether it has its primary key, or `None`
/// if it does not exist; after checking its tree and that every row is stored under its
/// key (the primary key's encoding, or an 8-byte hidden row id without one).
fn table_contents(txn: &TxnManager, name: &str) -> Option<(Model, bool)> {
    let table = txn.catalog.table(name)?;
    let keyed = !table.def().primary_key.is_empty();
    let stored = table
        .check()
        .unwrap_or_else(|e| panic!("integrity check of {name} failed: {e}"));
    let mut rows = Model::new();
    table
        .scan(
            (Bound::Unbounded, Bound::Unbounded),
            txn.visibility.visible_lsn(),
            false,
            |key, row| {
                let (k, v) = match (&row[0], &row[1]) {
                    (Value::Int8(k), Value::Text(v)) => (*k, v.clone()),
                    other => panic!("unexpected row {other:?}"),
                };
                if keyed {
                    let mut want = Vec::new();
                    encode_key(&[Value::Int8(k)], &mut want);
                    assert_eq!(key, &want[..], "{name}: row {k} is stored under its key");
                } else {
                    assert_eq!(key.len(), 8, "{name}: row {k} is stored under a row id");
                }
                assert!(rows.insert(k, v).is_none(), "{name}: key {k} twice");
                true
            },
        )
        .unwrap_or_else(|e| panic!("scan failed: {e}"));
    assert_eq!(
        stored,
        rows.len(),
        "the tree of {name} stores exactly the visible rows"
    );
    for index in table.indexes().iter() {
        let entries = index
            .check()
            .unwrap_or_else(|e| panic!("integrity check of index {} failed: {e}", index.def.name));
        assert_eq!(
            entries,
            rows.len(),
            "index {} has an entry per row",
            index.def.name
        );
        let mut found = Vec::new();
        let mut after = None;
        loop {
            let (keys, last) = index
                .row_keys(
                    (Bound::Unbounded, Bound::Unbounded),
                    txn.visibility.visible_lsn(),
                    after.as_deref(),
                )
                .unwrap_or_else(|e| panic!("index scan failed: {e}"));
            found.extend(keys);
            match last {
                Some(l) => after = Some(l),
                None => break,
            }
        }
        let want: Vec<Vec<u8>> = rows
            .keys()
            .map(|&k| {
                let mut key = Vec::new();
                encode_key(&[Value::Int8(k)], &mut key);
                key
            })
            .collect();
        assert_eq!(
            found, want,
            "index {} leads to exactly the rows",
            index.def.name
        );
    }
    Some((rows, keyed))
}

/// Create table `name` (k int8, v text), with `k` as its primary key if `keyed`.
pub(super) fn create_table(txn: &TxnManager, name: &str, keyed: bool) {
    let def = TableDef {
        name: name.into(),
        columns: vec![
            Column {
                name: "k".into(),
                data_type: DataType::Int8,
                not_null: true,
                default: None,
                missing: None,
                dropped: false,
                identity: false,
                description: None,
            },
            Column {
                name: "v".into(),
                data_type: DataType::Text,
                not_null: false,
                default: None,
                missing: None,
                dropped: false,
                identity: false,
                description: None,
            },
        ],
        primary_key: if keyed { vec![0] } else { vec![] },
        pkey_name: keyed.then(|| format!("{name}_pkey")),
        owned_sequences: vec![],
        // The first table has a secondary index (on its key column: the rows' long
        // values would not fit an index entry): its entries must follow every commit,
        // bulk load, checkpoint and recovery.
        indexes: if name == "t" {
            vec![IndexDef {
                name: "t_k".into(),
                columns: vec![0],
                unique: true,
                constraint: false,
                number: 0,
                opclasses: Vec::new(),
            }]
        } else {
            Vec::new()
        },
        checks: Vec::new(),
        foreign_keys: Vec::new(),
        description: None,
    };
    let id = txn.catalog.allocate_table_id();
    let payload = records::encode_table_def(id, &def);
    let reservation = txn
        .reserve_log(payload.len())
        .unwrap_or_else(|e| stop_server(&format!("CREATE TABLE failed: {e}")));
    let created = txn.commit_ddl(
        RecordKind::CreateTable,
        &payload,
        reservation,
        crate::wal::SyncLevel::Local,
        |_| {
            if let Err(e) = txn.catalog.create_table_with_id(id, def.clone()) {
                stop_server(&format!("could not create a table: {e}"));
            }
        },
    );
    txn.finish_commit(created, None);
    if !commit(txn, WriteSet::default(), &[id]) {
        stop_server("CREATE TABLE refused for lack of space");
    }
}

/// Commit; false when it was refused for lack of space (53100), with nothing logged, as
/// the server refuses it. Any other failure stops the workload.
#[must_use]
fn commit(txn: &TxnManager, writes: WriteSet, created: &[crate::storage::TableId]) -> bool {
    commit_with_drops(txn, writes, created, &[])
}

fn commit_with_drops(
    txn: &TxnManager,
    writes: WriteSet,
    created: &[crate::storage::TableId],
    dropped: &[crate::storage::TableId],
) -> bool {
    let id = txn.begin();
    let record = match txn.prepare_commit_record(&writes, created, dropped, &[]) {
        Ok(record) => record,
        Err(e) if e.code == crate::error::SqlState::DISK_FULL => {
            txn.end_transaction();
            return false;
        }
        Err(e) => stop_server(&format!("commit failed: {e}")),
    };
    let flight = txn.start_commit(CommitRequest {
        txn: id,
        writes,
        created,
        dropped,
        altered: &[],
        locks: Vec::new(),
        level: SyncLevel::Local,
        logged_upto: Lsn::ZERO,
        record,
    });
    txn.finish_commit(flight, None);
    true
}

/// The text stored under key `k` by transaction `n`: `len` letters.
fn text_value(k: i64, n: u64, len: u64) -> String {
    (0..len)
        .map(|i| char::from(b'a' + ((k as u64 + i + n) % 26) as u8))
        .collect()
}

/// What table `p` holds: `None` before it is created and after it is dropped, else its
/// rows and whether it has its primary key.
type Side = Option<(Model, bool)>;

/// What the workload has seen acknowledged, and the commit in flight (if any).
#[derive(Default, Clone)]
struct Ledger {
    acked: Model,
    in_flight: Option<Model>,
    /// Table `p`, which goes through creation without a key, a copy of `t`'s rows, ADD
    /// PRIMARY KEY and DROP TABLE, one step at a time.
    side: Side,
    side_in_flight: Option<Side>,
    /// How many times `p` was given its primary key (to show the suite covers it).
    keys_added: u64,
    /// The epoch of the last checkpoint that completed.
    checkpoint_epoch: u64,
}

/// `txns` transactions of random writes, a checkpoint every `CHECKPOINT_EVERY`.
fn workload(db: &Recovered, rng: &mut Prng, txns: u64, ledger: &mut Ledger) {
    if db.txn.catalog.table("t").is_none() {
        ledger.in_flight = Some(Model::new());
        create_table(&db.txn, "t", true);
        ledger.in_flight = None;
    }
    let table = db.txn.catalog.table("t").expect("table t");
    for n in 1..=txns {
        if rng.next_u64().is_multiple_of(8) {
            bulk_load(db, &table, rng, n, ledger);
            continue;
        }
        if rng.next_u64().is_multiple_of(10) {
            side_step(db, ledger);
            continue;
        }
        let mut next = ledger.acked.clone();
        let mut writes = WriteSet::default();
        if rng.next_u64().is_multiple_of(4) {
            // Spilled at every write: its commit is logged in pieces.
            writes.spill_after(1);
        }
        let mut spilled = Ok(());
        for _ in 0..1 + rng.next_u64() % 4 {
            let k = (rng.next_u64() % KEYS) as i64;
            let mut key = Vec::new();
            encode_key(&[Value::Int8(k)], &mut key);
            if rng.next_u64().is_multiple_of(5) {
                spilled = spilled.and(writes.put(&table, key, None).map(drop));
                next.remove(&k);
            } else {
                // Now and then a row too large for a page: an overflow chain.
                let len = if rng.next_u64().is_multiple_of(10) {
                    3000 + rng.next_u64() % 9000
                } else {
                    rng.next_u64() % 300
                };
                let v = text_value(k, n, len);
                let row = Some(vec![Value::Int8(k), Value::Text(v.clone())].into());
                spilled = spilled.and(writes.put(&table, key, row).map(drop));
                next.insert(k, v);
            }
        }
        if spilled.is_err() {
            // The disk stopped while the write set spilled: nothing was logged.
            continue;
        }
        ledger.in_flight = Some(next.clone());
        if commit(&db.txn, writes, &[]) {
            ledger.acked = next;
        }
        ledger.in_flight = None;
        if n % CHECKPOINT_EVERY == 0 {
            checkpoint(db, ledger);
        }
    }
}

fn checkpoint(db: &Recovered, ledger: &mut Ledger) {
    // As the checkpointer does while it waits: extend the page file ahead of the
    // checkpoint (a few slots, so the simulated file stays small). A failure is only
    // logged there, and changes nothing a recovery reads.
    if let Err(e) = db.txn.catalog.pool().prepare_slots(PREPARE_SLOTS) {
        tracing::warn!("{e}");
    }
    db.checkpoints
        .checkpoint(&db.txn, Reason::Requested)
        .unwrap_or_else(|e| stop_server(&format!("checkpoint failed: {e}")));
    ledger.checkpoint_epoch = db.checkpoints.last().epoch;
}

/// A transaction that truncates the table and loads new rows straight into pages;
/// sometimes a checkpoint runs while the load is private, sometimes it is abandoned.
fn bulk_load(db: &Recovered, table: &Arc<Table>, rng: &mut Prng, n: u64, ledger: &mut Ledger) {
    let mut writes = WriteSet::default();
    let w = writes.table_mut(table);
    w.truncated = true;
    // A failed load or flush fails the transaction in the server; here the workload stops.
    fn failed<T>(e: crate::error::Error) -> T {
        stop_server(&format!("bulk load failed: {e}"))
    }
    let mut load = BulkLoad::new(db.txn.catalog.pool().clone()).unwrap_or_else(failed);
    let mut next = Model::new();
    let mut k = (rng.next_u64() % 10) as i64;
    for _ in 0..rng.next_u64() % 150 {
        let len = if rng.next_u64().is_multiple_of(12) {
            3000 + rng.next_u64() % 6000
        } else {
            rng.next_u64() % 200
        };
        let v = text_value(k, n, len);
        let (mut key, mut image) = (Vec::new(), Vec::new());
        encode_key(&[Value::Int8(k)], &mut key);
        encode_row(
            &[Value::Int8(k), Value::Text(v.clone())],
            &[DataType::Int8, DataType::Text],
            &mut image,
        );
        assert!(
            load.insert(&key, &image).unwrap_or_else(failed),
            "keys ascend"
        );
        next.insert(k, v);
        k += 1 + (rng.next_u64() % 4) as i64;
    }
    w.bulk = Some(load);
    if rng.next_u64().is_multiple_of(2) {
        checkpoint(db, ledger);
    }
    if rng.next_u64().is_multiple_of(5) {
        return; // abandoned: dropping the writes frees the load's pages
    }
    ledger.in_flight = Some(next.clone());
    db.txn.flush_bulk_loads(&mut writes).unwrap_or_else(failed);
    if commit(&db.txn, writes, &[]) {
        ledger.acked = next;
    }
    ledger.in_flight = None;
}

/// The next step in the life of table `p`: create it without a primary key, copy `t`'s
/// rows into it under hidden row ids, give it its primary key (a bulk load of its rows
/// under the new key, see `txn::ddl`), or drop it.
fn side_step(db: &Recovered, ledger: &mut Ledger) {
    fn failed<T>(e: crate::error::Error) -> T {
        stop_server(&format!("ALTER TABLE failed: {e}"))
    }
    let txn = &db.txn;
    let next = match ledger.side.clone() {
        None => Some((Model::new(), false)),
        Some((rows, false)) if rows.is_empty() => Some((ledger.acked.clone(), false)),
        Some((rows, false)) => Some((rows, true)),
        Some((_, true)) => None,
    };
    ledger.side_in_flight = Some(next.clone());
    let done = match (&ledger.side, &next) {
        (None, _) => {
            create_table(txn, "p", false);
            true
        }
        (Some((_, false)), Some((rows, false))) => {
            let table = txn.catalog.table("p").expect("table p");
            let mut writes = WriteSet::default();
            for (k, v) in rows {
                let key = table.next_row_id().to_be_bytes().to_vec();
                writes
                    .put(
                        &table,
                        key,
                        Some(vec![Value::Int8(*k), Value::Text(v.clone())].into()),
                    )
                    .expect("a write set that does not spill takes every row");
            }
            commit(txn, writes, &[])
        }
        (Some((_, false)), Some((_, true))) => {
            let table = txn.catalog.table("p").expect("table p");
            let mut def = (*table.def()).clone();
            def.primary_key = vec![0];
            def.pkey_name = Some("p_pkey".into());
            def.columns[0].not_null = true;
            let load = crate::txn::ddl::load_under_key(
                txn,
                &table,
                &[0],
                &crate::txn::ddl::RebuildSource::Table(&table, txn.last_assigned_lsn()),
            )
            .unwrap_or_else(failed)
            .unwrap_or_else(|conflict| panic!("p's keys are unique and not null: {conflict:?}"));
            let flight = crate::txn::ddl::commit_primary_key(
                txn,
                &table,
                def,
                load,
                crate::wal::SyncLevel::Local,
            )
            .unwrap_or_else(failed);
            txn.finish_commit(flight, None);
            ledger.keys_added += 1;
            true
        }
        (Some(_), None) => {
            let (table, _) = txn.catalog.drop_table("p").expect("table p");
            if !commit_with_drops(txn, WriteSet::default(), &[], &[table.id]) {
                stop_server("DROP TABLE refused for lack of space");
            }
            true
        }
        _ => unreachable!("the steps above cover every state of p"),
    };
    if done {
        ledger.side = next;
    }
    ledger.side_in_flight = None;
}

/// Check a recovered database against the ledger; returns what it holds.
fn verify(db: &Recovered, ledger: &Ledger, what: &str) -> (Model, Side) {
    let got = contents(&db.txn);
    let ok = got == ledger.acked || ledger.in_flight.as_ref() == Some(&got);
    assert!(
        ok,
        "{what}: recovered {} rows; acknowledged {} rows{}",
        got.len(),
        ledger.acked.len(),
        match &ledger.in_flight {
            Some(m) => format!(", in flight {} rows", m.len()),
            None => String::new(),
        }
    );
    let side = table_contents(&db.txn, "p");
    assert!(
        side == ledger.side || ledger.side_in_flight.as_ref() == Some(&side),
        "{what}: table p recovered as {}; acknowledged {}{}",
        describe(&side),
        describe(&ledger.side),
        match &ledger.side_in_flight {
            Some(s) => format!(", in flight {}", describe(s)),
            None => String::new(),
        }
    );
    assert!(
        db.checkpoints.last().epoch >= ledger.checkpoint_epoch,
        "{what}: recovered from checkpoint {} but checkpoint {} had completed",
        db.checkpoints.last().epoch,
        ledger.checkpoint_epoch
    );
    (got, side)
}

fn describe(side: &Side) -> String {
    match side {
        None => "absent".into(),
        Some((rows, keyed)) => format!(
            "{} rows {}",
            rows.len(),
            if *keyed {
                "with its key"
            } else {
                "without a key"
            }
        ),
    }
}

/// One case: stop the workload at disk operation `stop_at`, crash with `seed`, recover
/// and verify; then work on and crash again.
pub fn replay(workload_seed: u64, stop_at: u64, crash_seed: u64) {
    silence_simulated_crash_panics();
    let what =
        format!("workload seed {workload_seed}, stopped at op {stop_at}, crash seed {crash_seed}");
    let disk = SimDisk::new();
    disk.arm_stop_after(stop_at);
    let mut ledger = Ledger::default();
    let stopped = catch_unwind(AssertUnwindSafe(|| {
        let db = open(&disk);
        workload(&db, &mut Prng::new(workload_seed), TXNS, &mut ledger);
    }));
    match stopped {
        Ok(()) => {}
        Err(payload) if payload.is::<SimulatedCrash>() => {}
        Err(payload) => std::panic::resume_unwind(payload),
    }
    let crashed = disk.crash(crash_seed);
    let db = open(&crashed);
    let (acked, side) = verify(&db, &ledger, &what);
    // The recovered database keeps working, and survives the next crash too.
    let mut after = Ledger {
        acked,
        side,
        checkpoint_epoch: db.checkpoints.last().epoch,
        ..Ledger::default()
    };
    workload(&db, &mut Prng::new(crash_seed ^ 0x5EED), 8, &mut after);
    drop(db);
    let again = open(&crashed.crash(crash_seed.wrapping_add(1)));
    verify(
        &again,
        &after,
        &format!("{what}, after more work and a second crash"),
    );
}

/// Where the I/O-error suite strikes: an operation on files whose path contains the text.
const FAULT_TARGETS: [(FaultOp, &str); 10] = [
    (FaultOp::Write, "/wal/"),
    (FaultOp::SyncData, "/wal/"),
    (FaultOp::SyncDir, "/wal"),
    (FaultOp::Write, "/pages"),
    (FaultOp::SyncData, "/pages"),
    (FaultOp::Write, "/map."),
    (FaultOp::SyncData, "/map."),
    (FaultOp::SyncDir, "/storage"),
    (FaultOp::Write, "/control"),
    (FaultOp::SyncData, "/control"),
];

/// One case of the I/O-error suite, all drawn from `seed`.
pub fn replay_fault(seed: u64) {
    silence_simulated_crash_panics();
    let mut rng = Prng::new(seed ^ 0xFA17);
    let (op, path) = FAULT_TARGETS[(rng.next_u64() % FAULT_TARGETS.len() as u64) as usize];
    let error = if rng.next_u64().is_multiple_of(2) {
        FaultError::Eio
    } else {
        FaultError::Enospc
    };
    let skip = rng.next_u64() % 60;
    let forever = rng.next_u64().is_multiple_of(2);
    let what = format!(
        "fault seed {seed}: {op:?} on {path} fails with {error:?} after {skip} \
         (forever: {forever})"
    );
    let disk = SimDisk::new();
    let mut ledger = Ledger::default();
    let outcome = catch_unwind(AssertUnwindSafe(|| {
        let db = open(&disk);
        let fault = if forever {
            Fault::forever(op, error)
        } else {
            Fault::once(op, error)
        };
        disk.inject(fault.path_contains(path).after(skip));
        workload(&db, &mut Prng::new(seed), TXNS, &mut ledger);
    }));
    if let Err(payload) = outcome {
        if !payload.is::<ServerStopped>() {
            eprintln!("{what}: unexpected panic");
            std::panic::resume_unwind(payload);
        }
    }
    // The process is gone either way: crash the disk and recover without the fault.
    disk.clear_faults();
    let db = open(&disk.crash(seed));
    verify(&db, &ledger, &what);
}

#[test]
fn no_acknowledged_commit_is_lost_to_an_io_error() {
    let seeds: u64 = if cfg!(debug_assertions) { 40 } else { 600 };
    for seed in 1..=seeds {
        replay_fault(seed);
    }
    println!("{seeds} injected I/O errors recovered");
}

/// Disk operations the whole workload of `seed` takes, and how many primary keys it adds.
fn ops_of(seed: u64) -> (u64, u64) {
    let disk = SimDisk::new();
    let db = open(&disk);
    let mut ledger = Ledger::default();
    workload(&db, &mut Prng::new(seed), TXNS, &mut ledger);
    (disk.op_count(), ledger.keys_added)
}

#[test]
fn every_crash_point_of_the_write_path_recovers() {
    let seeds: u64 = if cfg!(debug_assertions) { 4 } else { 60 };
    let (mut points, mut keys_added) = (0, 0);
    for seed in 1..=seeds {
        let (ops, keys) = ops_of(seed);
        keys_added += keys;
        for stop_at in 0..=ops {
            replay(seed, stop_at, seed * 1_000_003 + stop_at);
            points += 1;
        }
    }
    println!("{points} crash points recovered; the workloads added {keys_added} primary keys");
    assert!(points >= seeds * 100, "only {points} crash points");
    assert!(
        keys_added >= seeds / 4,
        "only {keys_added} primary keys added"
    );
}
