//! Checkpoints: a consistent page image written to fresh slots, its page map, and the
//! atomic switch of the control file that makes it current.
//!
//! The protocol, and what a crash at each step leaves (`docs/design.md` has the byte
//! layouts):
//! 1. Under the caller's barrier (no page changes), [`BufferPool::begin_image`] fixes the
//!    image: every page as it is now. Pages changed later are copied on their first change.
//! 2. The image's dirty pages are written, sorted by slot and coalesced into runs, to slots
//!    no checkpoint refers to; writeback is started every `flush_after_bytes`, and the
//!    writes are paced to end by the deadline. The page file is fdatasynced once.
//!    A crash here: the slots written are referred to by nothing durable; they are free.
//! 3. The page map (and the caller's catalog) go to a new `map.<epoch>` file, which is
//!    fdatasynced, and the directory too. A crash here: the control file still names the
//!    previous map.
//! 4. The caller's `before_switch` runs: it makes the WAL durable up to the redo LSN, so a
//!    checkpoint never holds a commit whose log record could be lost.
//! 5. The control file is replaced: written to `control.tmp`, fdatasynced, renamed over
//!    `control`, and the directory fdatasynced. The rename is the commit point: after a
//!    crash, `control` names either the previous checkpoint or this one, both complete.
//! 6. The previous checkpoint's slots that nothing refers to become free, and its map
//!    file is removed.
//!
//! A failed write or sync before the switch abandons the image; the durable checkpoint is
//! unchanged. A write that failed for lack of space is 53100 and the caller tries again
//! later; the server treats any other failed write, and every failed sync, as fatal.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use super::page::{PageId, PAGE_BYTES};
use super::pool::{BufferPool, WrittenImage};
use crate::disk::Disk;
use crate::error::{Error, Result, SqlState};
use crate::wal::Lsn;

const CONTROL_MAGIC: u32 = 0x4344_4253; // "SBDC"
const MAP_MAGIC: u32 = 0x4D44_4253; // "SBDM"
const FORMAT_VERSION: u32 = 1;
const CONTROL_BYTES: usize = 28;
/// Pacing sleeps only once the writes are this far ahead of schedule.
const PACE_QUANTUM: Duration = Duration::from_millis(10);
/// The longest single sleep of a paced checkpoint.
const PACE_NAP: Duration = Duration::from_millis(50);
/// Most bytes written to the page file in one call (a run of consecutive slots).
const MAX_RUN_BYTES: usize = 32 * PAGE_BYTES;
/// Pages whose images are taken from the pool at a time (one pass under its lock).
const TAKE_BATCH_PAGES: usize = 32;

/// What the control file says: the current checkpoint.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Control {
    pub epoch: u64,
    /// Replay starts here: the image holds exactly the commits below it.
    pub redo: Lsn,
}

/// A checkpoint as loaded at startup.
pub struct Loaded {
    pub control: Control,
    /// Slot of each page (index = page id), 0 for none.
    pub map: Vec<u64>,
    /// The caller's catalog image, as it was given to [`Checkpointer::run`].
    pub catalog: Vec<u8>,
}

/// How fast to write: spread over the time until `deadline` (none: at full speed, and
/// at full speed from the moment `hurry` is set), and start writeback every
/// `flush_after_bytes`.
#[derive(Clone, Debug)]
pub struct Pacing {
    pub deadline: Option<Instant>,
    pub hurry: Arc<AtomicBool>,
    pub flush_after_bytes: u64,
}

/// What one checkpoint did, for `log_checkpoints` and `pg_stat_checkpointer`.
#[derive(Clone, Copy, Debug, Default)]
pub struct CheckpointStats {
    pub pages_written: u64,
    pub write_time_us: u64,
    pub sync_time_us: u64,
    pub longest_sync_us: u64,
    pub syncs: u64,
}

/// The checkpoint files of one data directory.
pub struct Checkpointer {
    disk: Arc<dyn Disk>,
    dir: PathBuf,
}

fn io(what: String, e: std::io::Error) -> Error {
    Error::new(SqlState::IO_ERROR, format!("could not {what}: {e}"))
}

/// Run one sync, counting its time in `stats`.
fn timed_sync(
    stats: &mut CheckpointStats,
    what: &str,
    sync: impl FnOnce() -> std::io::Result<()>,
) -> Result<()> {
    let start = Instant::now();
    sync().map_err(|e| io(format!("fdatasync {what}"), e))?;
    let us = start.elapsed().as_micros() as u64;
    stats.sync_time_us += us;
    stats.longest_sync_us = stats.longest_sync_us.max(us);
    stats.syncs += 1;
    Ok(())
}

fn corrupt(what: String) -> Error {
    Error::new(SqlState::DATA_CORRUPTED, what)
}

fn le_u32(b: &[u8], at: usize) -> u32 {
    let mut a = [0; 4];
    a.copy_from_slice(&b[at..at + 4]);
    u32::from_le_bytes(a)
}

fn le_u64(b: &[u8], at: usize) -> u64 {
    let mut a = [0; 8];
    a.copy_from_slice(&b[at..at + 8]);
    u64::from_le_bytes(a)
}

impl Checkpointer {
    pub fn new(disk: Arc<dyn Disk>, dir: &Path) -> Checkpointer {
        Checkpointer {
            disk,
            dir: dir.to_path_buf(),
        }
    }

    fn control_path(&self) -> PathBuf {
        self.dir.join("control")
    }

    fn map_path(&self, epoch: u64) -> PathBuf {
        self.dir.join(format!("map.{epoch:016X}"))
    }

    fn read_file(&self, path: &Path) -> Result<Vec<u8>> {
        let file = self
            .disk
            .open(path, false)
            .map_err(|e| io(format!("open \"{}\"", path.display()), e))?;
        let len = file
            .len()
            .map_err(|e| io(format!("stat \"{}\"", path.display()), e))?;
        let mut bytes = vec![0; len as usize];
        let n = file
            .read_at(&mut bytes, 0)
            .map_err(|e| io(format!("read \"{}\"", path.display()), e))?;
        bytes.truncate(n);
        Ok(bytes)
    }

    /// The current checkpoint, or `None` if there has never been one.
    pub fn load(&self) -> Result<Option<Loaded>> {
        if !self.disk.exists(&self.control_path()) {
            return Ok(None);
        }
        let c = self.read_file(&self.control_path())?;
        if c.len() != CONTROL_BYTES
            || le_u32(&c, 0) != CONTROL_MAGIC
            || le_u32(&c, 24) != crc32c::crc32c(&c[..24])
        {
            return Err(corrupt("control file is invalid".into()));
        }
        if le_u32(&c, 4) != FORMAT_VERSION {
            return Err(corrupt(format!(
                "control file has format version {}",
                le_u32(&c, 4)
            )));
        }
        let control = Control {
            epoch: le_u64(&c, 8),
            redo: Lsn(le_u64(&c, 16)),
        };
        let m = self.read_file(&self.map_path(control.epoch))?;
        let bad = || {
            corrupt(format!(
                "page map of checkpoint {} is invalid",
                control.epoch
            ))
        };
        if m.len() < 36 || le_u32(&m, 0) != MAP_MAGIC || le_u64(&m, 8) != control.epoch {
            return Err(bad());
        }
        let pages = le_u64(&m, 16) as usize;
        let catalog_bytes = le_u64(&m, 24) as usize;
        let body = 32usize
            .checked_add(pages.checked_mul(8).ok_or_else(bad)?)
            .and_then(|n| n.checked_add(catalog_bytes))
            .ok_or_else(bad)?;
        if m.len() != body + 4 || le_u32(&m, body) != crc32c::crc32c(&m[..body]) {
            return Err(bad());
        }
        let map = (0..pages).map(|i| le_u64(&m, 32 + 8 * i)).collect();
        let catalog = m[32 + 8 * pages..body].to_vec();
        Ok(Some(Loaded {
            control,
            map,
            catalog,
        }))
    }

    /// Write a checkpoint of `pool` at `redo` (steps 2 to 6 of the protocol); the caller
    /// has called `pool.begin_image(epoch)`, which returned `pending`.
    pub fn run(
        &self,
        pool: &BufferPool,
        pending: &[PageId],
        control: Control,
        catalog: &[u8],
        pacing: Pacing,
        before_switch: impl FnOnce() -> Result<()>,
    ) -> Result<CheckpointStats> {
        let steps = || {
            let mut stats = write_image(pool, pending, control.epoch, &pacing)?;
            let map = pool.image_map();
            self.write_map(control.epoch, &map, catalog, &mut stats)?;
            before_switch()?;
            self.switch_control(control, &mut stats)?;
            pool.image_durable(control.redo);
            self.remove_old_maps(control.epoch);
            Ok(stats)
        };
        let result = steps();
        if result.is_err() {
            pool.abort_image();
        }
        result
    }

    fn write_map(
        &self,
        epoch: u64,
        map: &[u64],
        catalog: &[u8],
        stats: &mut CheckpointStats,
    ) -> Result<()> {
        let mut m = Vec::with_capacity(36 + 8 * map.len() + catalog.len());
        m.extend_from_slice(&MAP_MAGIC.to_le_bytes());
        m.extend_from_slice(&FORMAT_VERSION.to_le_bytes());
        m.extend_from_slice(&epoch.to_le_bytes());
        m.extend_from_slice(&(map.len() as u64).to_le_bytes());
        m.extend_from_slice(&(catalog.len() as u64).to_le_bytes());
        for slot in map {
            m.extend_from_slice(&slot.to_le_bytes());
        }
        m.extend_from_slice(catalog);
        let crc = crc32c::crc32c(&m);
        m.extend_from_slice(&crc.to_le_bytes());
        let path = self.map_path(epoch);
        let file = self
            .disk
            .open(&path, true)
            .and_then(|file| file.set_len(0).map(|_| file))
            .and_then(|file| file.write_all_at(&m, 0).map(|_| file))
            .map_err(|e| Error::write_failed(&format!("\"{}\"", path.display()), &e))?;
        timed_sync(stats, "page map", || file.sync_data())?;
        timed_sync(stats, "checkpoint directory", || {
            self.disk.sync_dir(&self.dir)
        })
    }

    fn switch_control(&self, control: Control, stats: &mut CheckpointStats) -> Result<()> {
        let mut c = Vec::with_capacity(CONTROL_BYTES);
        c.extend_from_slice(&CONTROL_MAGIC.to_le_bytes());
        c.extend_from_slice(&FORMAT_VERSION.to_le_bytes());
        c.extend_from_slice(&control.epoch.to_le_bytes());
        c.extend_from_slice(&control.redo.0.to_le_bytes());
        let crc = crc32c::crc32c(&c);
        c.extend_from_slice(&crc.to_le_bytes());
        debug_assert_eq!(c.len(), CONTROL_BYTES);
        let tmp = self.dir.join("control.tmp");
        let file = self
            .disk
            .open(&tmp, true)
            .and_then(|file| file.set_len(0).map(|_| file))
            .and_then(|file| file.write_all_at(&c, 0).map(|_| file))
            .map_err(|e| Error::write_failed("control.tmp", &e))?;
        timed_sync(stats, "control.tmp", || file.sync_data())?;
        self.disk
            .rename(&tmp, &self.control_path())
            .map_err(|e| io("rename control.tmp".into(), e))?;
        timed_sync(stats, "checkpoint directory", || {
            self.disk.sync_dir(&self.dir)
        })
    }

    /// Remove map files of checkpoints before `current` (best effort: a leftover is
    /// harmless and removed next time).
    fn remove_old_maps(&self, current: u64) {
        let Ok(names) = self.disk.list(&self.dir) else {
            return;
        };
        for name in names {
            let old = name
                .strip_prefix("map.")
                .and_then(|e| u64::from_str_radix(e, 16).ok())
                .is_some_and(|e| e != current);
            if old {
                if let Err(e) = self.disk.remove(&self.dir.join(&name)) {
                    tracing::warn!("could not remove old page map {name}: {e}");
                }
            }
        }
    }
}

/// Step 2: write the image's pending pages to fresh slots in coalesced runs, paced, then
/// fdatasync the page file.
fn write_image(
    pool: &BufferPool,
    pending: &[PageId],
    epoch: u64,
    pacing: &Pacing,
) -> Result<CheckpointStats> {
    let mut stats = CheckpointStats::default();
    let start = Instant::now();
    let file = pool.file().clone();
    let slots = pool.allocate_slots(pending.len());
    let mut run: Vec<u8> = Vec::with_capacity(MAX_RUN_BYTES);
    let mut run_start = 0u64;
    let mut run_pages: Vec<WrittenImage> = Vec::new();
    let mut unflushed_bytes = 0u64;
    let mut flush_from = u64::MAX;
    let total = pending.len().max(1) as f64;
    let mut write_run = |run: &mut Vec<u8>,
                         run_pages: &mut Vec<WrittenImage>,
                         run_start: u64,
                         stats: &mut CheckpointStats|
     -> Result<()> {
        if run.is_empty() {
            return Ok(());
        }
        let offset = run_start * PAGE_BYTES as u64;
        file.write_all_at(run, offset)
            .map_err(|e| Error::write_failed("page file", &e))?;
        pool.images_written(run_pages);
        stats.pages_written += run_pages.len() as u64;
        run_pages.clear();
        flush_from = flush_from.min(offset);
        unflushed_bytes += run.len() as u64;
        if unflushed_bytes >= pacing.flush_after_bytes && pacing.flush_after_bytes > 0 {
            // Push writeback now, so the final fdatasync finds little left to write.
            file.start_writeback(flush_from, offset + run.len() as u64 - flush_from)
                .map_err(|e| io("start writeback of page file".into(), e))?;
            unflushed_bytes = 0;
            flush_from = u64::MAX;
        }
        run.clear();
        Ok(())
    };
    let mut taken = Vec::new().into_iter();
    for (n, (&id, &slot)) in pending.iter().zip(&slots).enumerate() {
        if n % TAKE_BATCH_PAGES == 0 {
            let end = (n + TAKE_BATCH_PAGES).min(pending.len());
            taken = pool.take_images(&pending[n..end]).into_iter();
        }
        let Some((mut image, from_frame)) = taken.next().flatten() else {
            pool.release_slot(slot);
            continue;
        };
        image.seal(epoch);
        let contiguous = !run.is_empty() && run_start + (run.len() / PAGE_BYTES) as u64 == slot;
        if !contiguous || run.len() >= MAX_RUN_BYTES {
            write_run(&mut run, &mut run_pages, run_start, &mut stats)?;
            run_start = slot;
        }
        run.extend_from_slice(image.bytes());
        run_pages.push((id, slot, from_frame));
        if let Some(deadline) = pacing.deadline {
            // On schedule when the fraction written equals the fraction of time used.
            let now = Instant::now();
            if deadline > now {
                let span = deadline.duration_since(start).as_secs_f64();
                let due = start + Duration::from_secs_f64(span * (n + 1) as f64 / total);
                // Sleep only when well ahead, so runs still coalesce and sleeps are long
                // enough to be accurate.
                if due > now + PACE_QUANTUM {
                    write_run(&mut run, &mut run_pages, run_start, &mut stats)?;
                    // In short naps, so a CHECKPOINT command or a shutdown that comes
                    // meanwhile is not kept waiting for the schedule.
                    while !pacing.hurry.load(Ordering::Acquire) {
                        let now = Instant::now();
                        if now >= due {
                            break;
                        }
                        std::thread::sleep((due - now).min(PACE_NAP));
                    }
                }
            }
        }
    }
    write_run(&mut run, &mut run_pages, run_start, &mut stats)?;
    stats.write_time_us = start.elapsed().as_micros() as u64;
    timed_sync(&mut stats, "page file", || file.sync_data())?;
    Ok(stats)
}
