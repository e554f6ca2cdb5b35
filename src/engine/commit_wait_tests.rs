//! A commit's wait for synchronous standbys, through the real commit path: whatever
//! configuration a reload brings while a commit is in flight, a cancel (or the
//! statement's `statement_timeout`) ends the wait, and the commit stays invisible.

use std::time::Duration;

use super::crash_tests::{create_table, open};
use crate::disk::sim::SimDisk;
use crate::error::SqlState;
use crate::repl::quorum::Replicated;
use crate::txn::{CommitRequest, WriteSet};
use crate::types::{encode_key, Value};
use crate::wal::{Lsn, SyncLevel};

/// Standbys configured by a reload after the commit took its place in the order (with
/// none configured) but before it was visible: the commit now waits for them, so its wait
/// must still answer a cancel, as it would had they been configured first.
#[test]
fn standbys_configured_during_a_commit_leave_its_wait_cancellable() {
    let disk = SimDisk::new();
    let db = open(&disk);
    create_table(&db.txn, "t", true);
    let table = db.txn.catalog.table("t").expect("table t");
    let mut writes = WriteSet::default();
    let mut key = Vec::new();
    encode_key(&[Value::Int8(1)], &mut key);
    let row = Some(vec![Value::Int8(1), Value::Text("waits".into())].into());
    writes.put(&table, key, row).expect("a write in memory");
    let slot = db.txn.register_session();
    let id = db.txn.begin();
    let record = db
        .txn
        .prepare_commit_record(&writes, &[], &[], &[])
        .expect("a commit record");
    assert!(!db.txn.visibility.standbys_configured());
    let flight = db.txn.start_commit(CommitRequest {
        txn: id,
        writes,
        created: &[],
        dropped: &[],
        altered: &[],
        locks: Vec::new(),
        level: SyncLevel::RemoteFlush,
        logged_upto: Lsn::ZERO,
        record,
    });
    let lsn = flight.lsn.expect("a commit that wrote");
    // Not flushed yet (no flusher runs here; the committer flushes in its finish).
    assert!(db.txn.visibility.visible_lsn() < lsn);
    db.txn.visibility.replicated(Replicated {
        write: Lsn::ZERO,
        flush: Lsn::ZERO,
        apply: Lsn::ZERO,
    });
    assert!(db.txn.cancel_pid(slot.pid));
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .expect("a runtime");
    let finished = rt.block_on(async {
        tokio::time::timeout(
            Duration::from_secs(60),
            db.txn.finish_commit_async(flight, Some(&slot)),
        )
        .await
    });
    let warning = finished
        .expect("the cancel ends the wait")
        .expect("a warning that the wait was cancelled");
    assert_eq!(warning.code, SqlState::WARNING);
    assert!(
        db.txn.visibility.visible_lsn() < lsn,
        "visible before the standby has it"
    );
    // The standby catches up: the commit becomes visible.
    db.txn.visibility.replicated(Replicated {
        write: lsn,
        flush: lsn,
        apply: lsn,
    });
    assert!(db.txn.visibility.visible_lsn() >= lsn);
}
