//! Concurrency of a table: installs that change single leaves under the shared tree lock,
//! side by side with installs that split, delete or overflow, and with readers. Every
//! read must see exactly the snapshot it asked for.

use std::collections::BTreeMap;
use std::ops::Bound;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::thread;

use parking_lot::Mutex;

use super::catalog::{Column, TableDef};
use super::pool::BufferPool;
use super::table::{Table, TableId};
use crate::disk::sim::Prng;
use crate::types::{encode_key, encode_row, DataType, Value};
use crate::wal::Lsn;

const KEYS: u64 = 400;
const COMMITS_PER_WRITER: u64 = 1500;

fn table(frames: usize) -> Table {
    let pool = Arc::new(BufferPool::on_sim_disk(frames));
    let column = |name: &str, data_type| Column {
        name: name.into(),
        data_type,
        not_null: false,
        default: None,
        missing: None,
        dropped: false,
        identity: false,
        description: None,
    };
    let def = TableDef {
        name: "t".into(),
        columns: vec![column("k", DataType::Int8), column("v", DataType::Text)],
        primary_key: vec![0],
        pkey_name: Some("t_pkey".into()),
        owned_sequences: vec![],
        indexes: Vec::new(),
        checks: Vec::new(),
        foreign_keys: Vec::new(),
        description: None,
    };
    Table::create(TableId(1), def, pool).expect("table")
}

fn key_of(k: u64) -> Vec<u8> {
    let mut key = Vec::new();
    encode_key(&[Value::Int8(k as i64)], &mut key);
    key
}

/// Commits in LSN order (each one key and its new value, `None` for a deletion), and
/// which of them are installed: `visible` is the last LSN below which all are.
#[derive(Default)]
struct History {
    commits: BTreeMap<u64, (u64, Option<String>)>,
    installed: Vec<bool>,
    visible: u64,
    /// Each reader's snapshot while it reads.
    reading: [Option<u64>; 2],
}

impl History {
    /// The oldest snapshot anyone reads at: what installs may prune to.
    fn horizon(&self) -> Lsn {
        Lsn(self
            .reading
            .iter()
            .flatten()
            .fold(self.visible, |a, &b| a.min(b)))
    }

    fn model_at(&self, snapshot: u64) -> BTreeMap<u64, String> {
        let mut model = BTreeMap::new();
        for (_, (k, v)) in self.commits.range(..=snapshot) {
            match v {
                Some(v) => model.insert(*k, v.clone()),
                None => model.remove(k),
            };
        }
        model
    }
}

fn row_of(row: &[Value]) -> (u64, String) {
    match (&row[0], &row[1]) {
        (Value::Int8(k), Value::Text(v)) => (*k as u64, v.clone()),
        other => panic!("unexpected row {other:?}"),
    }
}

#[test]
fn readers_see_exact_snapshots_while_installs_run_in_parallel() {
    // Few frames, so that installs and reads also evict and reload pages.
    let table = Arc::new(table(64));
    let history = Arc::new(Mutex::new(History::default()));
    let next_lsn = Arc::new(AtomicU64::new(1));
    let writers_done = Arc::new(AtomicU64::new(0));
    let mut threads = Vec::new();
    // Two writers on interleaved keys (even and odd), so they share leaves.
    for parity in 0..2u64 {
        let (table, history, next_lsn, done) = (
            table.clone(),
            history.clone(),
            next_lsn.clone(),
            writers_done.clone(),
        );
        threads.push(thread::spawn(move || {
            let mut rng = Prng::new(7 + parity);
            for _ in 0..COMMITS_PER_WRITER {
                let k = (rng.next_u64() % (KEYS / 2)) * 2 + parity;
                let value = match rng.next_u64() % 12 {
                    0 => None,
                    1 => Some("x".repeat(2500 + (rng.next_u64() % 4000) as usize)),
                    _ => Some(format!(
                        "{k}:{}",
                        "y".repeat((rng.next_u64() % 120) as usize)
                    )),
                };
                // Take an LSN and record the commit; a key's commits are this writer's
                // alone, so they install in LSN order, as row locks make them.
                let lsn = {
                    let mut h = history.lock();
                    let lsn = next_lsn.fetch_add(1, Ordering::SeqCst);
                    h.commits.insert(lsn, (k, value.clone()));
                    lsn
                };
                let image = value.as_ref().map(|v| {
                    let mut image = Vec::new();
                    encode_row(
                        &[Value::Int8(k as i64), Value::Text(v.clone())],
                        &[DataType::Int8, DataType::Text],
                        &mut image,
                    );
                    image
                });
                let horizon = history.lock().horizon();
                let key = key_of(k);
                table
                    .install(
                        Lsn(lsn),
                        [(key.as_slice(), image.as_deref())],
                        false,
                        horizon,
                    )
                    .expect("install");
                let mut h = history.lock();
                let at = lsn as usize;
                if h.installed.len() <= at {
                    h.installed.resize(at + 1, false);
                }
                h.installed[at] = true;
                while h.installed.get(h.visible as usize + 1) == Some(&true) {
                    h.visible += 1;
                }
            }
            done.fetch_add(1, Ordering::SeqCst);
        }));
    }
    // Two readers: whole scans in both directions and point reads, each at a snapshot
    // the horizon writers prune to never passes.
    for reader in 0..2u64 {
        let (table, history, done) = (table.clone(), history.clone(), writers_done.clone());
        threads.push(thread::spawn(move || {
            let mut rng = Prng::new(100 + reader);
            let mut checks = 0;
            while done.load(Ordering::SeqCst) < 2 || checks < 10 {
                let (snapshot, model) = {
                    let mut h = history.lock();
                    h.reading[reader as usize] = Some(h.visible);
                    (h.visible, h.model_at(h.visible))
                };
                let reverse = rng.next_u64().is_multiple_of(2);
                let mut got = Vec::new();
                table
                    .scan(
                        (Bound::Unbounded, Bound::Unbounded),
                        Lsn(snapshot),
                        reverse,
                        |_, row| {
                            got.push(row_of(row));
                            true
                        },
                    )
                    .expect("scan");
                if reverse {
                    got.reverse();
                }
                let expected: Vec<_> = model.iter().map(|(k, v)| (*k, v.clone())).collect();
                assert!(
                    got == expected,
                    "scan at {snapshot} saw {} rows, expected {}",
                    got.len(),
                    expected.len()
                );
                for _ in 0..20 {
                    let k = rng.next_u64() % KEYS;
                    let row = table.get(&key_of(k), Lsn(snapshot)).expect("get");
                    assert_eq!(
                        row.map(|r| row_of(&r).1),
                        model.get(&k).cloned(),
                        "get of key {k} at {snapshot}"
                    );
                }
                history.lock().reading[reader as usize] = None;
                checks += 1;
            }
        }));
    }
    for t in threads {
        t.join().expect("no thread failed");
    }
    let h = history.lock();
    assert_eq!(h.visible, 2 * COMMITS_PER_WRITER, "every commit installed");
    assert_eq!(
        table.check().expect("valid tree"),
        h.model_at(h.visible).len()
    );
}
