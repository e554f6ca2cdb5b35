//! Crash consistency of pages, page maps and checkpoints on the simulated disk.
//!
//! A seeded workload changes a B+tree through a small buffer pool (so pages are evicted
//! to fresh slots all the time), and takes checkpoints with more changes made between
//! the image's start and its writing (so copy-on-first-write and eviction of image pages
//! both happen). It is stopped after every single disk operation in turn; each stopped
//! disk is crashed with a seed (unsynced writes dropped, torn or reordered) and recovered.
//! Every recovered database must: load; pass the tree integrity check (checksums,
//! order, separators, depth, overflow chains); hold exactly the reference model's
//! contents at the checkpoint the control file names; and that checkpoint must be at
//! least the last one whose `run` returned. Then it keeps working: more changes and a
//! checkpoint on the recovered disk, crashed again, must recover to the new model.
//!
//! A failure prints the crash point and seed, and [`replay`] runs exactly that case.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

use super::btree::BTree;
use super::checkpoint::{Checkpointer, Control, Pacing};
use super::page::PageId;
use super::pool::{BufferPool, PageMap};
use crate::disk::sim::{Prng, SimDisk};
use crate::disk::Disk;
use crate::error::Result;
use crate::wal::Lsn;

type Model = BTreeMap<Vec<u8>, Vec<u8>>;

const DIR: &str = "/data";
/// Distinct keys: enough pages that the pool of `FRAMES` evicts all the time.
const KEYS: u64 = 2000;
const ROUNDS: u64 = 6;
const FRAMES: usize = 16;

struct Db {
    pool: BufferPool,
    tree: BTree,
    checkpointer: Checkpointer,
    epoch: u64,
}

fn open(disk: &SimDisk) -> Result<(Db, Model)> {
    let dir = Path::new(DIR);
    disk.create_dir_all(dir)
        .map_err(|e| crate::error::Error::internal(e.to_string()))?;
    let disk_arc: Arc<dyn Disk> = Arc::new(disk.clone());
    let checkpointer = Checkpointer::new(disk_arc.clone(), dir);
    let file = disk_arc
        .open(&dir.join("pages"), true)
        .map_err(|e| crate::error::Error::internal(e.to_string()))?;
    match checkpointer.load()? {
        None => {
            let pool = BufferPool::new(file, PageMap::default(), FRAMES);
            let tree = BTree::create(&pool)?;
            Ok((
                Db {
                    pool,
                    tree,
                    checkpointer,
                    epoch: 0,
                },
                Model::new(),
            ))
        }
        Some(loaded) => {
            let root = PageId(u64::from_le_bytes(
                loaded.catalog[..8]
                    .try_into()
                    .expect("catalog holds the root"),
            ));
            let pool = BufferPool::new(file, PageMap::from_checkpoint(loaded.map), FRAMES);
            let tree = BTree::open(root);
            let mut model = Model::new();
            tree.scan(
                &pool,
                (std::ops::Bound::Unbounded, std::ops::Bound::Unbounded),
                false,
                &mut |k, _, v| {
                    model.insert(k.to_vec(), v.unwrap_or_default().to_vec());
                    Ok(true)
                },
            )?;
            Ok((
                Db {
                    pool,
                    tree,
                    checkpointer,
                    epoch: loaded.control.epoch,
                },
                model,
            ))
        }
    }
}

fn change(db: &Db, model: &mut Model, rng: &mut Prng, step: u64) -> Result<()> {
    let key = format!("key{:04}", rng.next_u64() % KEYS).into_bytes();
    if rng.next_u64().is_multiple_of(4) {
        db.tree.remove(&db.pool, &key)?;
        model.remove(&key);
    } else {
        let len = if rng.next_u64().is_multiple_of(25) {
            9000
        } else {
            20 + (rng.next_u64() % 400) as usize
        };
        let value = vec![(step % 253) as u8; len];
        db.tree.put(&db.pool, &key, Lsn(step), Some(&value))?;
        model.insert(key, value);
    }
    Ok(())
}

/// Changes and checkpoints. Returns the models of the checkpoints started (by epoch) and
/// the last epoch whose checkpoint returned.
fn workload(
    db: &mut Db,
    model: &mut Model,
    seed: u64,
    rounds: u64,
    images: &mut BTreeMap<u64, Model>,
) -> Result<u64> {
    let mut rng = Prng::new(seed);
    let mut done = db.epoch;
    for round in 0..rounds {
        for i in 0..150 {
            change(db, model, &mut rng, round * 1000 + i + 1)?;
        }
        let epoch = db.epoch + 1;
        let pending = db.pool.begin_image(epoch);
        images.insert(epoch, model.clone());
        // Changes while the image is written: copied on first write, never in the image.
        for i in 0..60 {
            if let Err(e) = change(db, model, &mut rng, round * 1000 + 500 + i) {
                db.pool.abort_image();
                return Err(e);
            }
        }
        let control = Control {
            epoch,
            redo: Lsn(epoch),
        };
        let pacing = Pacing {
            deadline: None,
            hurry: Default::default(),
            flush_after_bytes: 64 * 1024,
        };
        db.checkpointer.run(
            &db.pool,
            &pending,
            control,
            &db.tree.root.0.to_le_bytes(),
            pacing,
            || Ok(()),
        )?;
        db.epoch = epoch;
        done = epoch;
    }
    Ok(done)
}

/// Check one crash point: run until the disk stops at `crash_after` operations, crash
/// with `seed`, recover and verify; then continue on the recovered disk and verify again.
fn replay(workload_seed: u64, crash_after: u64, seed: u64) {
    let disk = SimDisk::new();
    disk.arm_crash_after(crash_after);
    let mut images = BTreeMap::new();
    images.insert(0, Model::new());
    let mut acknowledged = 0;
    if let Ok((mut db, mut model)) = open(&disk) {
        // On an error, the newest checkpoint whose `run` returned is the database's epoch.
        acknowledged =
            workload(&mut db, &mut model, workload_seed, ROUNDS, &mut images).unwrap_or(db.epoch);
    }
    let context = format!(
        "workload {workload_seed}, crash after {crash_after} operations, seed {seed} \
         (replay({workload_seed}, {crash_after}, {seed}))"
    );
    let crashed = disk.crash(seed);
    let (mut db, mut model) =
        open(&crashed).unwrap_or_else(|e| panic!("{context}: recovery failed: {e}"));
    let count = db
        .tree
        .check(&db.pool)
        .unwrap_or_else(|e| panic!("{context}: integrity: {e}"));
    assert!(
        db.epoch >= acknowledged,
        "{context}: checkpoint {acknowledged} was lost (found {})",
        db.epoch
    );
    let expected = images
        .get(&db.epoch)
        .unwrap_or_else(|| panic!("{context}: unknown epoch {}", db.epoch));
    assert_eq!(count, expected.len(), "{context}: wrong number of rows");
    assert!(
        &model == expected,
        "{context}: contents differ from checkpoint {}",
        db.epoch
    );
    // The recovered database keeps working, and its free space does not overlap live data.
    let mut more = BTreeMap::new();
    let epoch = workload(&mut db, &mut model, seed ^ 0xABCD, 2, &mut more)
        .unwrap_or_else(|e| panic!("{context}: work after recovery failed: {e}"));
    let (db2, model2) = open(&crashed.crash(seed.rotate_left(17)))
        .unwrap_or_else(|e| panic!("{context}: second recovery failed: {e}"));
    assert_eq!(
        db2.epoch, epoch,
        "{context}: second crash lost a checkpoint"
    );
    db2.tree
        .check(&db2.pool)
        .unwrap_or_else(|e| panic!("{context}: second integrity: {e}"));
    assert!(
        &model2 == more.get(&epoch).expect("image model"),
        "{context}: second contents differ"
    );
}

fn total_operations(workload_seed: u64) -> u64 {
    let disk = SimDisk::new();
    let (mut db, mut model) = open(&disk).expect("open");
    let mut images = BTreeMap::new();
    workload(&mut db, &mut model, workload_seed, ROUNDS, &mut images).expect("workload");
    disk.op_count()
}

/// Every crash point of one workload, each crashed with its own seed.
fn sweep(workload_seed: u64) -> u64 {
    let total = total_operations(workload_seed);
    for at in 0..=total {
        replay(
            workload_seed,
            at,
            at.wrapping_mul(0x2545_F491_4F6C_DD1D) ^ workload_seed,
        );
    }
    total + 1
}

/// Distinct crash points to cover per run: the full count in release builds (the test
/// command), a tenth in debug builds.
const CRASH_POINTS: u64 = if cfg!(debug_assertions) {
    1_000
} else {
    10_000
};

#[test]
fn every_crash_point_recovers_to_its_checkpoint() {
    let mut points = 0;
    let mut workloads = 0;
    while points < CRASH_POINTS {
        points += sweep(1000 + workloads);
        workloads += 1;
    }
    eprintln!("storage crash points checked: {points} in {workloads} workloads");
}

/// Each injected I/O error (EIO or ENOSPC, on a write or a sync of the page file, the page
/// map or the control file) makes the checkpoint fail; it is not reported done, and a crash
/// then recovers the previous checkpoint, intact.
#[test]
fn a_failed_write_or_sync_never_completes_a_checkpoint() {
    use crate::disk::sim::{Fault, FaultError, FaultOp};
    let cases = [
        (FaultOp::Write, "pages"),
        (FaultOp::SyncData, "pages"),
        (FaultOp::Write, "map."),
        (FaultOp::SyncData, "map."),
        (FaultOp::SyncDir, "data"),
        (FaultOp::Write, "control"),
        (FaultOp::SyncData, "control"),
    ];
    for (n, (op, path)) in cases.into_iter().enumerate() {
        for error in [FaultError::Eio, FaultError::Enospc] {
            let seed = 77 + n as u64;
            let context = format!("{op:?} on {path} fails with {error:?}");
            let disk = SimDisk::new();
            let (mut db, mut model) = open(&disk).expect("open");
            let mut images = BTreeMap::new();
            let first =
                workload(&mut db, &mut model, seed, 1, &mut images).expect("first checkpoint");
            disk.inject(Fault::forever(op, error).path_contains(path));
            let failed = workload(&mut db, &mut model, seed + 1, 1, &mut images);
            assert!(
                failed.is_err(),
                "{context}: the checkpoint was reported done"
            );
            assert_eq!(db.epoch, first, "{context}");
            for crash_seed in 0..20 {
                let (db2, model2) = open(&disk.crash(crash_seed)).expect("recover");
                db2.tree
                    .check(&db2.pool)
                    .unwrap_or_else(|e| panic!("{context}: {e}"));
                assert_eq!(db2.epoch, first, "{context}: seed {crash_seed}");
                assert!(
                    &model2 == images.get(&first).expect("model"),
                    "{context}: seed {crash_seed}"
                );
            }
        }
    }
}
