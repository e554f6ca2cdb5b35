//! The log: segment files, the append buffer, the group flusher, and replay.
//!
//! Segment file `wal/NNNNNNNNNNNNNNNN` (hex segment number) holds a 32-byte header and then
//! log bytes `[n * DATA, (n + 1) * DATA)`, where DATA is the segment size minus the header.
//! Records are contiguous in the log and may cross segment boundaries. The server builds
//! the next segment on a thread of its own as soon as writing enters a segment
//! (`WalOptions::prepare_ahead`), so the flusher does not build one in the commit path;
//! segments past the log's end hold no records, and recovery removes them.
//!
//! Recycling: a checkpoint retires the segments below its redo LSN. Up to the number the
//! checkpointer asks to keep, they are renamed `NNNNNNNNNNNNNNNN.spare` instead of
//! removed, and the next segment is built from a spare: its first block is rewritten (the
//! new header, then zeros), synced, and the file renamed to its new number. Otherwise a
//! segment is built by writing zeros through the whole file. So past the end of the log a
//! segment holds zeros or an older segment's bytes, and the end is where a record's
//! length field is zero or its LSN field names a position whole segments earlier: a
//! record written there before the file was recycled. Either way nothing past the end
//! passes as a record, because every record carries its own LSN. The first block is zeroed
//! so that a segment built ahead and never written to reads as empty from its start, as a
//! zero-filled one does.
//!
//! Reservations: a record's room is reserved before it is appended ([`Wal::reserve`]), and
//! the segments it needs are built by then (by the thread that builds ahead, or by the
//! reserving thread). So the flusher writes only into built segments and never grows a
//! file; on a full disk the reservation fails with 53100 and the commit that asked fails
//! cleanly, with nothing appended. `WAL_HEADROOM_BYTES` stay free beyond every reservation
//! for the records that take none.
//!
//! Segment header: magic `SDBWAL01` (8), segment number (8, LE), segment size (8, LE),
//! reserved (4), CRC32C of the first 28 bytes (4, LE).
//!
//! The flusher writes segments in whole `WAL_BLOCK_BYTES` blocks, with direct I/O unless
//! the flush is large (`WAL_DIRECT_MAX_BYTES`). A flush that ends inside a block writes
//! the block whole, the log's bytes followed by zeros, and the next flush writes that
//! block again with more of the log in it. The bytes a rewrite repeats are the same bytes,
//! so a crash that tears it at any sector leaves every earlier record as it was. Why: a
//! buffered write copies the log into the page cache only for `fdatasync` to find, lock
//! and submit those pages again; a direct write submits the log itself. On the benchmark
//! machine (`update_pk`, 32 clients, two 10 s runs each) the flush's median fell from 118
//! and 114 µs to 105 and 109 µs, its 99th percentile from 268 and 239 µs to 224 and 228.
//!

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use parking_lot::{Condvar, Mutex, MutexGuard};

use super::record::{
    check_header, check_record, durable_before, Invalid, PendingRecord, RecordKind,
    RECORD_HEADER_BYTES,
};
use super::stats::WalStats;
use super::watch::LsnWatch;
use super::Lsn;
use crate::constants::{
    WAL_BLOCK_BYTES, WAL_BUFFER_BYTES, WAL_DIRECT_MAX_BYTES, WAL_HEADROOM_BYTES,
    WAL_SEGMENT_RETRY_PAUSE, WAL_WRITE_MAX_BYTES,
};
use crate::disk::{Disk, File};
use crate::error::{Error, Result, SqlState};
use crate::stages::{self, Stage};

const SEGMENT_HEADER_BYTES: u64 = 32;
const SEGMENT_MAGIC: &[u8; 8] = b"SDBWAL01";
/// Suffix of a retired segment kept for reuse.
const SPARE_SUFFIX: &str = ".spare";
/// How long a group gathers commits at most, while most clients wait on it.
const GATHER_MAX: Duration = Duration::from_micros(100);
/// How long it may gather while the workers have other statements to run (see
/// [`gather_window`]).
const GATHER_MAX_BUSY: Duration = Duration::from_micros(1000);
/// Open transactions per commit of the last group, and per core, from which the workers
/// count as busy.
const BUSY_OPEN_PER_COMMIT: u64 = 2;
const BUSY_OPEN_PER_CORE: u64 = 8;

/// How long the next group may gather, given the transactions open now (begun, not yet
/// committing), the size of the last group and the cores the workers run on. Every flush
/// costs the flusher a write and a sync, tens of microseconds of CPU. While many more
/// transactions are open than commit in a group, and several per core, their statements
/// keep the workers busy, so a group that waits longer idles no CPU and saves flushes.
/// Otherwise most clients wait on this group, or the cores have time to spare, and a
/// longer wait would only add to each commit's latency.
fn gather_window(open_transactions: u64, last_group_commits: u64, cores: u64) -> Duration {
    let busy = open_transactions >= BUSY_OPEN_PER_COMMIT * last_group_commits.max(1)
        && open_transactions >= BUSY_OPEN_PER_CORE * cores.max(1);
    if busy {
        GATHER_MAX_BUSY
    } else {
        GATHER_MAX
    }
}

pub fn segment_name(n: u64) -> String {
    format!("{n:016X}")
}

pub fn segment_header(n: u64, segment_bytes: u64) -> [u8; 32] {
    let mut h = [0u8; 32];
    h[..8].copy_from_slice(SEGMENT_MAGIC);
    h[8..16].copy_from_slice(&n.to_le_bytes());
    h[16..24].copy_from_slice(&segment_bytes.to_le_bytes());
    let crc = crc32c::crc32c(&h[..28]);
    h[28..32].copy_from_slice(&crc.to_le_bytes());
    h
}

/// A failed write or sync of the log leaves its durable state unknown. Never acknowledge
/// anything again: stop the process now; recovery will sort it out from what is on disk.
fn fatal(what: &str, e: &std::io::Error) -> ! {
    crate::error::stop_server(&format!("could not {what}: {e}"))
}

/// How commits wait for durability: `synchronous_commit`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum SyncLevel {
    /// Return at append; the flusher makes it durable within `wal_writer_delay`.
    Off,
    /// Wait until the local log is flushed (`local`).
    Local,
    /// Also until the synchronous standbys have written it (`remote_write`).
    RemoteWrite,
    /// Also until they have flushed it (`on`).
    RemoteFlush,
    /// Also until they have applied it: visible there (`remote_apply`).
    RemoteApply,
}

impl SyncLevel {
    /// The level a value of `synchronous_commit` names.
    pub fn from_setting(value: &str) -> SyncLevel {
        match value {
            "off" | "false" | "no" | "0" => SyncLevel::Off,
            "local" => SyncLevel::Local,
            "remote_write" => SyncLevel::RemoteWrite,
            "remote_apply" => SyncLevel::RemoteApply,
            _ => SyncLevel::RemoteFlush,
        }
    }

    /// Whether the commit waits for the local flush (every level but `off`).
    pub fn waits_for_flush(self) -> bool {
        self != SyncLevel::Off
    }
}

/// Settings the log reads at start (changes need a restart).
#[derive(Clone, Debug)]
pub struct WalOptions {
    pub fsync: bool,
    /// `commit_delay` in microseconds and `commit_siblings`.
    pub commit_delay_us: u64,
    pub commit_siblings: u64,
    /// `wal_writer_delay`: the longest an asynchronous commit stays unflushed.
    pub writer_delay: Duration,
    /// Size of a segment file, header included (`WAL_SEGMENT_BYTES`; tests use less).
    pub segment_bytes: u64,
    /// Build the next segment on a thread of its own as soon as writing moves into a new
    /// one, so that the flusher does not stop to zero-fill and sync a whole segment in the
    /// middle of the commit path. (Off in tests that count disk operations.)
    pub prepare_ahead: bool,
    /// `recovery_cut_corrupt_wal`: cut the log at an invalid record even when valid
    /// records follow it (corruption, not a torn tail), losing them. Off: refuse to start.
    pub cut_corrupt: bool,
}

struct AppendState {
    /// Records appended but not yet handed to the flusher.
    buffer: Vec<u8>,
    /// A recycled buffer for the next swap.
    spare: Vec<u8>,
    /// Commits in `buffer` (for the commit-group statistics).
    commits: u64,
    /// Commits in the last group taken for a flush.
    last_group_commits: u64,
    /// While the flusher gathers a group, appends wake it only once this many commits
    /// are in the buffer.
    gather_target: u64,
    /// The log position after the last appended record.
    end: Lsn,
    shutdown: bool,
}

/// Open segment files, by number (touched only by the flusher and at startup).
struct Segments {
    disk: Arc<dyn Disk>,
    dir: PathBuf,
    open: HashMap<u64, Arc<dyn File>>,
    segment_bytes: u64,
    prepare_ahead: bool,
    /// The segment being built ahead of need, and the thread building it.
    preparing: Option<(u64, std::thread::JoinHandle<std::io::Result<()>>)>,
    /// Spares to build segments from (shared with the thread that builds ahead).
    supply: Arc<SegmentSupply>,
    /// The segment last written to.
    writing: Option<u64>,
    /// Handles for the flusher's direct writes, by segment number.
    direct: HashMap<u64, Arc<dyn File>>,
    /// Staging for direct writes; over-allocated by a block so that an aligned window fits.
    stage: Vec<u8>,
    /// The block that holds the end of the log as last written: its segment, its offset
    /// in the file, and its bytes. The next write starts by rewriting it.
    tail: Option<TailBlock>,
    /// Whether small writes go around the page cache. A standby's writes do not: it
    /// reports them written before it syncs them, and a buffered write returns sooner.
    direct_writes: bool,
}

struct TailBlock {
    segment: u64,
    offset: u64,
    bytes: Box<[u8; WAL_BLOCK_BYTES]>,
}

/// Segments retired for reuse, by file name (`NNNNNNNNNNNNNNNN.spare`), how many
/// segments were built from zeros since [`Wal::take_segments_added`] last asked, and how
/// far the built segments reach.
#[derive(Default)]
struct SegmentSupply {
    spares: Mutex<Vec<String>>,
    added: AtomicU64,
    /// The log position where the segments built so far end: every segment below it exists,
    /// whole and synced, so writing the log below it needs no new space on disk.
    ready_end: AtomicU64,
    /// Held while a segment is built (by the thread that builds ahead, an appender that
    /// reserves, or the flusher), so that one segment is never built twice at once.
    building: Mutex<()>,
}

fn spare_name(n: u64) -> String {
    format!("{n:016X}{SPARE_SUFFIX}")
}

/// Build segment `n` (unless it exists): from a spare if there is one (its first block
/// rewritten with the header and zeros), else from zeros under a temporary name. Either
/// way the file is synced before it is renamed into place and the directory synced, so a
/// crash never leaves a segment without its header, and the segment reads as empty.
fn build_segment(
    disk: &dyn Disk,
    dir: &Path,
    n: u64,
    segment_bytes: u64,
    supply: &SegmentSupply,
) -> std::io::Result<()> {
    let _building = supply.building.lock();
    let path = dir.join(segment_name(n));
    if !disk.exists(&path) {
        build_segment_file(disk, dir, &path, n, segment_bytes, supply)?;
    }
    let end = (n + 1) * (segment_bytes - SEGMENT_HEADER_BYTES);
    supply.ready_end.fetch_max(end, Ordering::AcqRel);
    Ok(())
}

fn build_segment_file(
    disk: &dyn Disk,
    dir: &Path,
    path: &Path,
    n: u64,
    segment_bytes: u64,
    supply: &SegmentSupply,
) -> std::io::Result<()> {
    loop {
        let Some(spare) = supply.spares.lock().pop() else {
            break;
        };
        let from = dir.join(&spare);
        let f = match disk.open(&from, false) {
            Ok(f) => f,
            // Removed by hand since it was listed: take the next.
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
            Err(e) => return Err(e),
        };
        if f.len()? != segment_bytes {
            // Left by a server with another segment size: of no use.
            drop(f);
            disk.remove(&from)?;
            continue;
        }
        let mut head = vec![0u8; WAL_BLOCK_BYTES];
        head[..SEGMENT_HEADER_BYTES as usize].copy_from_slice(&segment_header(n, segment_bytes));
        f.write_all_at(&head, 0)?;
        f.sync_data()?;
        disk.rename(&from, path)?;
        return disk.sync_dir(dir);
    }
    let tmp = dir.join(format!("{}.tmp", segment_name(n)));
    let zero_filled = || -> std::io::Result<()> {
        let f = disk.open(&tmp, true)?;
        let zeros = vec![0u8; 1 << 20];
        let mut off = 0;
        while off < segment_bytes {
            let len = (segment_bytes - off).min(zeros.len() as u64) as usize;
            f.write_all_at(&zeros[..len], off)?;
            off += len as u64;
        }
        f.write_all_at(&segment_header(n, segment_bytes), 0)?;
        f.sync_data()
    };
    if let Err(e) = zero_filled() {
        // Out of space, most likely: give back what the unfinished file took.
        let _ = disk.remove(&tmp);
        return Err(e);
    }
    disk.rename(&tmp, path)?;
    disk.sync_dir(dir)?;
    supply.added.fetch_add(1, Ordering::Relaxed);
    Ok(())
}

/// Whether a record header that names position `at`, found at position `pos`, was
/// written there before its segment was recycled: it names the same offset in a segment
/// whole segments earlier. It marks the end of the log.
fn written_before_recycling(at: u64, pos: u64, data_bytes: u64) -> bool {
    at < pos && (pos - at).is_multiple_of(data_bytes)
}

impl Segments {
    fn new(disk: Arc<dyn Disk>, dir: &Path, segment_bytes: u64, prepare_ahead: bool) -> Segments {
        Segments {
            disk,
            dir: dir.to_path_buf(),
            open: HashMap::new(),
            segment_bytes,
            prepare_ahead,
            preparing: None,
            supply: Arc::default(),
            writing: None,
            direct: HashMap::new(),
            stage: Vec::new(),
            tail: None,
            direct_writes: true,
        }
    }

    /// Log bytes held by one segment.
    fn data_bytes(&self) -> u64 {
        self.segment_bytes - SEGMENT_HEADER_BYTES
    }

    fn file(&mut self, n: u64, create: bool) -> std::io::Result<Arc<dyn File>> {
        if let Some(f) = self.open.get(&n) {
            return Ok(f.clone());
        }
        if create && self.preparing.as_ref().is_some_and(|(m, _)| *m == n) {
            // Built ahead: wait for it (an error of its own is found again below).
            if let Some((_, thread)) = self.preparing.take() {
                let _ = thread.join();
            }
        }
        let path = self.dir.join(segment_name(n));
        let existed = self.disk.exists(&path);
        if !existed && !create {
            return Err(std::io::Error::new(
                std::io::ErrorKind::NotFound,
                "segment missing",
            ));
        }
        if !existed {
            build_segment(&*self.disk, &self.dir, n, self.segment_bytes, &self.supply)?;
        }
        let f = self.disk.open(&path, false)?;
        // Keep at most a few files open.
        if self.open.len() > 4 {
            self.open.clear();
            self.direct.clear();
        }
        self.open.insert(n, f.clone());
        Ok(f)
    }

    /// Read log bytes at `pos`; returns how many were available.
    fn read(&mut self, mut pos: u64, buf: &mut [u8]) -> std::io::Result<usize> {
        let mut done = 0;
        while done < buf.len() {
            let n = pos / self.data_bytes();
            let off = pos % self.data_bytes();
            let f = match self.file(n, false) {
                Ok(f) => f,
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => break,
                Err(e) => return Err(e),
            };
            let want = ((self.data_bytes() - off) as usize).min(buf.len() - done);
            let got = f.read_at(&mut buf[done..done + want], SEGMENT_HEADER_BYTES + off)?;
            done += got;
            pos += got as u64;
            if got < want {
                break;
            }
        }
        Ok(done)
    }

    /// Write log bytes at `pos`; returns the segments written (to sync).
    fn write(
        &mut self,
        mut pos: u64,
        mut data: &[u8],
        touched: &mut Vec<u64>,
    ) -> std::io::Result<()> {
        while !data.is_empty() {
            let n = pos / self.data_bytes();
            let off = pos % self.data_bytes();
            let f = self.file(n, true)?;
            if self.writing != Some(n) {
                self.writing = Some(n);
                self.prepare(n + 1);
            }
            let len = ((self.data_bytes() - off) as usize)
                .min(data.len())
                .min(WAL_WRITE_MAX_BYTES);
            self.write_blocks(n, &f, SEGMENT_HEADER_BYTES + off, &data[..len])?;
            if !touched.contains(&n) {
                touched.push(n);
            }
            data = &data[len..];
            pos += len as u64;
        }
        Ok(())
    }

    /// Write `bytes` at file offset `at` of segment `n` in whole blocks, through the direct
    /// handle: the first block's bytes before `at` are what the log already holds there
    /// (the tail block, or read back through `plain`), and the last block is padded with
    /// zeros, which is what a segment holds past the end of the log.
    fn write_blocks(
        &mut self,
        n: u64,
        plain: &Arc<dyn File>,
        at: u64,
        bytes: &[u8],
    ) -> std::io::Result<()> {
        const BLOCK: u64 = WAL_BLOCK_BYTES as u64;
        let start = at / BLOCK * BLOCK;
        let end = (at + bytes.len() as u64).div_ceil(BLOCK) * BLOCK;
        assert!(
            end <= self.segment_bytes,
            "a write stays inside its segment"
        );
        let span = (end - start) as usize;
        let head = (at - start) as usize;
        if self.stage.len() < span + WAL_BLOCK_BYTES {
            self.stage.resize(span + WAL_BLOCK_BYTES, 0);
        }
        let shift = self.stage.as_ptr().align_offset(WAL_BLOCK_BYTES);
        let window = &mut self.stage[shift..shift + span];
        // Taken now: the tail is only trusted again once the write that makes it true
        // has returned.
        let tail = self.tail.take();
        match &tail {
            Some(t) if t.segment == n && t.offset == start => {
                window[..head].copy_from_slice(&t.bytes[..head]);
            }
            _ => {
                if plain.read_at(&mut window[..head], start)? != head {
                    return Err(std::io::Error::new(
                        std::io::ErrorKind::UnexpectedEof,
                        "WAL segment shorter than the log",
                    ));
                }
            }
        }
        window[head..head + bytes.len()].copy_from_slice(bytes);
        window[head + bytes.len()..].fill(0);
        if span <= WAL_DIRECT_MAX_BYTES && self.direct_writes {
            let direct = match self.direct.get(&n) {
                Some(f) => f,
                None => {
                    let f = self.disk.open_direct(&self.dir.join(segment_name(n)))?;
                    self.direct.entry(n).or_insert(f)
                }
            };
            direct.write_all_at(window, start)?;
        } else {
            // A large flush (a big transaction, a COPY) goes through the page cache, from
            // which fdatasync submits it all at once: a direct write of it would wait for
            // the device chunk by chunk.
            plain.write_all_at(window, start)?;
        }
        let mut block = tail.map_or_else(|| Box::new([0u8; WAL_BLOCK_BYTES]), |t| t.bytes);
        block.copy_from_slice(&window[span - WAL_BLOCK_BYTES..]);
        self.tail = Some(TailBlock {
            segment: n,
            offset: end - BLOCK,
            bytes: block,
        });
        Ok(())
    }

    /// Start building segment `n` on a thread of its own, if it is not there yet.
    fn prepare(&mut self, n: u64) {
        if !self.prepare_ahead || self.preparing.is_some() {
            return;
        }
        if self.disk.exists(&self.dir.join(segment_name(n))) {
            return;
        }
        let (disk, dir, bytes) = (self.disk.clone(), self.dir.clone(), self.segment_bytes);
        let supply = self.supply.clone();
        match std::thread::Builder::new()
            .name("wal-prepare".into())
            .spawn(move || build_segment(&*disk, &dir, n, bytes, &supply))
        {
            Ok(thread) => self.preparing = Some((n, thread)),
            // Not fatal: the segment is built when it is needed.
            Err(e) => tracing::warn!("could not start a thread to build WAL segment {n}: {e}"),
        }
    }

    /// Zero the log from `pos` to the end of its segment and remove later segments.
    ///
    /// Later segments are removed, never kept as spares: their records name positions
    /// after `pos`, and segment `m` built again from its own old file would hold them at the
    /// positions they name, where one would read as a valid record once appending ended at
    /// its start. (A checkpoint's spares hold only positions below the redo LSN, which no
    /// new record can have.)
    fn cut(&mut self, pos: u64) -> std::io::Result<usize> {
        self.tail = None;
        let n = pos / self.data_bytes();
        let off = pos % self.data_bytes();
        if let Ok(f) = self.file(n, false) {
            let zeros = vec![0u8; (self.data_bytes() - off) as usize];
            f.write_all_at(&zeros, SEGMENT_HEADER_BYTES + off)?;
            f.sync_data()?;
        }
        let mut removed = 0;
        for name in self.disk.list(&self.dir)? {
            if let Ok(m) = u64::from_str_radix(&name, 16) {
                if m > n {
                    self.open.remove(&m);
                    self.direct.remove(&m);
                    self.disk.remove(&self.dir.join(&name))?;
                    removed += 1;
                }
            }
        }
        self.disk.sync_dir(&self.dir)?;
        let built = if self.disk.exists(&self.dir.join(segment_name(n))) {
            n + 1
        } else {
            n
        };
        self.supply
            .ready_end
            .store(built * self.data_bytes(), Ordering::Release);
        Ok(removed)
    }
}

/// See [`Wal::on_flushed`].
pub type AfterFlush = Box<dyn Fn(Lsn) + Send + Sync>;

pub struct Wal {
    opts: WalOptions,
    state: Mutex<AppendState>,
    /// Wakes the flusher when records are appended.
    appended: Condvar,
    /// Wakes appenders waiting for room in a full buffer.
    drained: Condvar,
    segments: Mutex<Segments>,
    /// Segments a standby wrote received log to since its last sync.
    received_unsynced: Mutex<Vec<u64>>,
    /// The single published durability point: everything below it is on disk.
    flushed: LsnWatch,
    /// Held by whoever is flushing (the flusher or a leading committer).
    flushing: Mutex<()>,
    /// Called by whoever flushed, right after it published `flushed_lsn`, with the new
    /// value (the commit order makes the flushed commits visible: see [`Wal::on_flushed`]).
    after_flush: OnceLock<AfterFlush>,
    pub stats: WalStats,
    /// Transactions open right now, for `commit_siblings`.
    pub active_transactions: AtomicU64,
    stopped: AtomicBool,
    /// The last failure to build a segment for a reservation, and when: reservations fail
    /// at once with it for `WAL_SEGMENT_RETRY_PAUSE`, so that writers on a full disk do not
    /// each fill it again with the zeros of a segment that cannot be finished.
    build_failure: Mutex<Option<(Instant, Error)>>,
    /// Where the log ends once every reservation made so far is appended: the log's end
    /// plus the bytes reserved and not yet used ([`Wal::reserve`]).
    claimed_end: AtomicU64,
    /// What segments are built with, for reservations (the flusher's are in `segments`).
    segments_supply: Arc<SegmentSupply>,
    disk: Arc<dyn Disk>,
    dir: PathBuf,
}

/// Room in the log for one record, taken by [`Wal::reserve`]: the segments it will be
/// written to exist. Used by the append of a record of exactly its size, or given back
/// with [`Wal::release`].
#[must_use]
#[derive(Debug)]
pub struct LogReservation {
    bytes: u64,
}

impl LogReservation {
    /// Nothing reserved: for a record appended without a log.
    pub fn none() -> LogReservation {
        LogReservation { bytes: 0 }
    }

    fn take(&mut self) -> u64 {
        std::mem::take(&mut self.bytes)
    }
}

impl Drop for LogReservation {
    fn drop(&mut self) {
        debug_assert_eq!(self.bytes, 0, "a log reservation is used or released");
    }
}

/// Check the segments from `start`'s on (none missing, every header right), then hand
/// each record from `start` to `apply`, in order, up to the first invalid one.
fn read_log(
    segments: &mut Segments,
    start: Lsn,
    cut_corrupt: bool,
    apply: &mut impl FnMut(RecordKind, &[u8], Lsn) -> Result<()>,
) -> Result<Replayed> {
    let io = |what: &str, e: std::io::Error| {
        Error::new(SqlState::IO_ERROR, format!("could not {what}: {e}"))
    };
    let disk = segments.disk.clone();
    let mut names: Vec<u64> = disk
        .list(&segments.dir)
        .map_err(|e| io("list the WAL directory", e))?
        .iter()
        .filter_map(|n| u64::from_str_radix(n, 16).ok())
        .collect();
    names.sort();
    // Segments below the redo LSN's may have been removed; from it on, none may be.
    let first = start.0 / segments.data_bytes();
    names.retain(|n| *n >= first);
    // Segments built ahead of need and never written to may follow a lost segment:
    // they hold no records, and the cut at the end of the log removes them.
    if let Some(gap) = names
        .iter()
        .enumerate()
        .position(|(i, n)| *n != first + i as u64)
    {
        let mut unused = true;
        for &n in &names[gap..] {
            let f = segments
                .file(n, false)
                .map_err(|e| io("open a WAL segment", e))?;
            let mut head = [0u8; 16];
            let got = f
                .read_at(&mut head, SEGMENT_HEADER_BYTES)
                .map_err(|e| io("read a WAL segment", e))?;
            unused &= head[..got].iter().all(|b| *b == 0);
        }
        if unused {
            names.truncate(gap);
        }
    }
    for (i, n) in names.iter().enumerate() {
        if *n != first + i as u64 {
            return Err(Error::new(
                SqlState::DATA_CORRUPTED,
                format!("WAL segment {} is missing", segment_name(first + i as u64)),
            ));
        }
        let f = segments
            .file(*n, false)
            .map_err(|e| io("open a WAL segment", e))?;
        let mut h = [0u8; 32];
        if f.read_at(&mut h, 0)
            .map_err(|e| io("read a WAL segment", e))?
            < 32
            || h != segment_header(*n, segments.segment_bytes)
        {
            return Err(Error::new(
                SqlState("XX001"),
                format!("WAL segment {} has a bad header", segment_name(*n)),
            ));
        }
    }
    let mut pos = start.0;
    let mut records = 0u64;
    let mut cut = None;
    let mut record = Vec::new();
    loop {
        let mut header = [0u8; 16];
        let got = segments
            .read(pos, &mut header)
            .map_err(|e| io("read the WAL", e))?;
        let invalid = if got < 16 {
            if got == 0 || header[..got].iter().all(|b| *b == 0) {
                Invalid::End
            } else {
                Invalid::Truncated
            }
        } else {
            match check_header(&header, Lsn(pos)) {
                Err(Invalid::BadLsn(at))
                    if written_before_recycling(at, pos, segments.data_bytes()) =>
                {
                    Invalid::End
                }
                Err(i) => i,
                Ok(len) => {
                    record.resize(len, 0);
                    let got = segments
                        .read(pos, &mut record)
                        .map_err(|e| io("read the WAL", e))?;
                    if got < len {
                        Invalid::Truncated
                    } else {
                        match check_record(&record) {
                            Err(i) => i,
                            Ok(kind) => {
                                let end = Lsn(pos + len as u64);
                                apply(kind, &record[RECORD_HEADER_BYTES..], end)?;
                                records += 1;
                                pos = end.0;
                                continue;
                            }
                        }
                    }
                }
            }
        };
        if invalid != Invalid::End {
            let mut why = format!("{invalid:?}");
            let bad_len = <[u8; 16]>::try_from(&header[..])
                .ok()
                .and_then(|h| check_header(&h, Lsn(pos)).ok());
            if let Some(later) = record_proving_corruption(segments, pos, bad_len)? {
                let segment = segment_name(pos / segments.data_bytes());
                if !cut_corrupt {
                    return Err(Error::new(
                        SqlState::DATA_CORRUPTED,
                        format!(
                            "WAL is corrupt: invalid record at {} in segment {segment} ({why}), but a valid record follows at {}",
                            Lsn(pos),
                            later
                        ),
                    )
                    .with_detail("A torn write at the end of the log leaves nothing valid after it; the records after this one were written, and made durable, after it.")
                    .with_hint(format!(
                        "Restore the data directory from a backup. To start anyway, losing every change logged from {} on, set recovery_cut_corrupt_wal = on for one start.",
                        Lsn(pos)
                    )));
                }
                why = format!("{why}; corrupt, valid records from {later} on are lost");
            }
            cut = Some((Lsn(pos), why));
        }
        break;
    }
    Ok(Replayed {
        end: Lsn(pos),
        records,
        bytes: pos - start.0,
        cut,
    })
}

/// A valid record after an invalid one at `bad` (its header's sane length `bad_len`, or
/// none) that proves the invalid one corrupt: its durable LSN says the log was durable
/// past the whole invalid record before it was appended, so no crash can have torn it
/// (`record`, the durable LSN). Records after a torn tail were appended before the torn
/// flush became durable and carry a durable LSN below it. The search recognises a record
/// by its header, which names its own position, and its CRC; it reads the rest of the
/// log in large pieces, steps over each valid record whole, and stops where the
/// segments end.
fn record_proving_corruption(
    segments: &mut Segments,
    bad: u64,
    bad_len: Option<usize>,
) -> Result<Option<Lsn>> {
    const CHUNK_BYTES: usize = 1 << 20;
    let io =
        |e: std::io::Error| Error::new(SqlState::IO_ERROR, format!("could not read the WAL: {e}"));
    let bad_end = bad + bad_len.unwrap_or(16) as u64;
    let mut from = bad + 1;
    let mut chunk = vec![0u8; CHUNK_BYTES];
    let mut record = Vec::new();
    loop {
        let got = segments.read(from, &mut chunk).map_err(io)?;
        if got < 16 {
            return Ok(None);
        }
        let mut i = 0;
        let mut next = None;
        while i + 16 <= got {
            let at = from + i as u64;
            let mut header = [0u8; 16];
            header.copy_from_slice(&chunk[i..i + 16]);
            let Ok(len) = check_header(&header, Lsn(at)) else {
                i += 1;
                continue;
            };
            record.resize(len, 0);
            if segments.read(at, &mut record).map_err(io)? < len || check_record(&record).is_err() {
                i += 1;
                continue;
            }
            if durable_before(&record).0 >= bad_end {
                return Ok(Some(Lsn(at)));
            }
            // The next record starts right after this one, maybe past this piece.
            i += len;
            if i + 16 > got {
                next = Some(at + len as u64);
            }
        }
        if got < CHUNK_BYTES && next.is_none() {
            return Ok(None);
        }
        // Headers that straddle the piece's end are looked at again in the next one.
        from = next.unwrap_or(from + (got - 15) as u64);
    }
}

/// Reads records at given positions: recovery reads back the pieces a large commit logged
/// ahead of its Commit record when it replays that record (`txn::records`).
pub struct RecordReader {
    segments: Segments,
}

impl RecordReader {
    pub fn new(disk: Arc<dyn Disk>, dir: &Path, opts: &WalOptions) -> RecordReader {
        RecordReader {
            segments: Segments::new(disk, dir, opts.segment_bytes, false),
        }
    }

    /// Log bytes from `at` into `buf`; returns how many were there (fewer at the end of
    /// what was written).
    pub fn read_bytes(&mut self, at: Lsn, buf: &mut [u8]) -> Result<usize> {
        self.segments
            .read(at.0, buf)
            .map_err(|e| Error::new(SqlState::IO_ERROR, format!("could not read the WAL: {e}")))
    }

    /// The length of the record that starts at `at`, if its header is there and valid
    /// (`None` at the end of what was written).
    pub fn record_len(&mut self, at: Lsn) -> Result<Option<usize>> {
        let mut header = [0u8; 16];
        let got = self
            .segments
            .read(at.0, &mut header)
            .map_err(|e| Error::new(SqlState::IO_ERROR, format!("could not read the WAL: {e}")))?;
        if got < 16 {
            return Ok(None);
        }
        match check_header(&header, at) {
            Ok(len) => Ok(Some(len)),
            Err(Invalid::End) => Ok(None),
            Err(why) => Err(Error::new(
                SqlState::DATA_CORRUPTED,
                format!("invalid WAL record header at {at}: {why:?}"),
            )),
        }
    }

    /// The record that starts at `at`: its kind and payload. A record that is missing or
    /// invalid there is corruption (XX001): a commit that names it was logged after it.
    pub fn read(&mut self, at: Lsn) -> Result<(RecordKind, Vec<u8>)> {
        let bad = |why: String| {
            Error::new(
                SqlState::DATA_CORRUPTED,
                format!(
                    "WAL is corrupt: no valid record at {at}, which a later commit names ({why})"
                ),
            )
        };
        let io = |e: std::io::Error| {
            Error::new(SqlState::IO_ERROR, format!("could not read the WAL: {e}"))
        };
        let mut header = [0u8; 16];
        if self.segments.read(at.0, &mut header).map_err(io)? < 16 {
            return Err(bad(format!(
                "segment {} ends first or is gone",
                segment_name(at.0 / self.segments.data_bytes())
            )));
        }
        let len = check_header(&header, at).map_err(|i| bad(format!("{i:?}")))?;
        let mut record = vec![0u8; len];
        if self.segments.read(at.0, &mut record).map_err(io)? < len {
            return Err(bad("truncated".into()));
        }
        let kind = check_record(&record).map_err(|i| bad(format!("{i:?}")))?;
        record.drain(..RECORD_HEADER_BYTES);
        Ok((kind, record))
    }
}

/// What replay found.
pub struct Replayed {
    pub end: Lsn,
    pub records: u64,
    pub bytes: u64,
    /// Where the log was cut, if it was, and why.
    pub cut: Option<(Lsn, String)>,
}

impl Wal {
    /// Read the records from `start` to the log's end without opening it for writing:
    /// recovery's first pass, which learns what the records name before any is
    /// replayed. It sees exactly the records that [`Wal::open`] then replays, and changes
    /// nothing on disk. A log directory that does not exist yet holds no records.
    pub fn scan(
        disk: Arc<dyn Disk>,
        dir: &Path,
        opts: &WalOptions,
        start: Lsn,
        mut visit: impl FnMut(RecordKind, &[u8], Lsn) -> Result<()>,
    ) -> Result<()> {
        if !disk.exists(dir) {
            return Ok(());
        }
        let mut segments = Segments::new(disk, dir, opts.segment_bytes, false);
        read_log(&mut segments, start, opts.cut_corrupt, &mut visit).map(|_| ())
    }

    /// Open the log in `dir` and replay it from `start` (the redo LSN of the checkpoint
    /// recovery starts from, or zero): `apply` is called for every valid record in order,
    /// with its kind, payload and end position. The log is cut at the first invalid record
    /// (a torn or corrupt tail), and appending continues from there.
    pub fn open(
        disk: Arc<dyn Disk>,
        dir: &Path,
        opts: WalOptions,
        start: Lsn,
        mut apply: impl FnMut(RecordKind, &[u8], Lsn) -> Result<()>,
    ) -> Result<(Arc<Wal>, Replayed)> {
        assert!(
            opts.segment_bytes.is_multiple_of(WAL_BLOCK_BYTES as u64)
                && opts.segment_bytes > SEGMENT_HEADER_BYTES,
            "a WAL segment is whole blocks"
        );
        let io = |what: &str, e: std::io::Error| {
            Error::new(SqlState::IO_ERROR, format!("could not {what}: {e}"))
        };
        disk.create_dir_all(dir)
            .map_err(|e| io("create the WAL directory", e))?;
        let mut segments = Segments::new(disk.clone(), dir, opts.segment_bytes, opts.prepare_ahead);
        // Spares retired before the last stop are reused like any other; a segment whose
        // build a crash interrupted is removed.
        for name in disk
            .list(dir)
            .map_err(|e| io("list the WAL directory", e))?
        {
            if name.ends_with(SPARE_SUFFIX) {
                segments.supply.spares.lock().push(name);
            } else if name.ends_with(".tmp") {
                disk.remove(&dir.join(&name))
                    .map_err(|e| io("remove an unfinished WAL segment", e))?;
            }
        }
        let replayed = read_log(&mut segments, start, opts.cut_corrupt, &mut apply)?;
        let pos = replayed.end.0;
        // Make sure nothing stale lies beyond the end, torn or not.
        let removed = segments.cut(pos).map_err(|e| io("cut the WAL", e))?;
        let supply = segments.supply.clone();
        let stats = WalStats::default();
        stats
            .reset_at_us
            .store(crate::types::now_us().max(0) as u64, Ordering::Relaxed);
        if let Some((at, why)) = &replayed.cut {
            tracing::warn!("WAL: invalid record at {at} ({why}); log cut there, {removed} later segment(s) removed");
        }
        let wal = Arc::new(Wal {
            opts,
            state: Mutex::new(AppendState {
                buffer: Vec::with_capacity(1 << 20),
                spare: Vec::with_capacity(1 << 20),
                commits: 0,
                last_group_commits: 0,
                gather_target: 1,
                end: Lsn(pos),
                shutdown: false,
            }),
            appended: Condvar::new(),
            drained: Condvar::new(),
            segments: Mutex::new(segments),
            received_unsynced: Mutex::new(Vec::new()),
            flushed: LsnWatch::new(Lsn(pos)),
            flushing: Mutex::new(()),
            after_flush: OnceLock::new(),
            stats,
            active_transactions: AtomicU64::new(0),
            stopped: AtomicBool::new(false),
            build_failure: Mutex::new(None),
            claimed_end: AtomicU64::new(pos),
            segments_supply: supply,
            disk,
            dir: dir.to_path_buf(),
        });
        Ok((wal, replayed))
    }

    /// Reserve room in the log for a record of `bytes` bytes (header included), building
    /// the segments it needs now if they are not built yet. Fails with 53100 when a
    /// segment cannot be built for lack of space: nothing is appended, and the caller fails
    /// its statement or commit cleanly. Every reservation leaves `WAL_HEADROOM_BYTES` of
    /// built log free for the appends that take none ([`Wal::append`] without one).
    pub fn reserve(&self, bytes: usize) -> Result<LogReservation> {
        let bytes = bytes as u64;
        let data_bytes = self.opts.segment_bytes - SEGMENT_HEADER_BYTES;
        loop {
            let claimed = self.claimed_end.fetch_add(bytes, Ordering::AcqRel) + bytes;
            let need = claimed + WAL_HEADROOM_BYTES;
            if need <= self.ready_end() {
                return Ok(LogReservation { bytes });
            }
            self.claimed_end.fetch_sub(bytes, Ordering::AcqRel);
            if let Some((at, e)) = &*self.build_failure.lock() {
                if at.elapsed() < WAL_SEGMENT_RETRY_PAUSE {
                    return Err(e.clone());
                }
            }
            // Build the segments up to the one holding `need - 1`.
            let last = (need - 1) / data_bytes;
            let mut n = self.ready_end() / data_bytes;
            while n <= last {
                let (disk, dir, supply) = (&*self.disk, &self.dir, &self.segments_supply);
                if let Err(e) = build_segment(disk, dir, n, self.opts.segment_bytes, supply) {
                    let e = Error::write_failed(&format!("WAL segment {}", segment_name(n)), &e)
                        .with_hint("Free disk space; writing resumes by itself.");
                    tracing::warn!(
                        "{}; transactions that write fail until there is room",
                        e.message
                    );
                    *self.build_failure.lock() = Some((Instant::now(), e.clone()));
                    return Err(e);
                }
                n = self.ready_end() / data_bytes;
            }
            *self.build_failure.lock() = None;
        }
    }

    /// Give back a reservation that will not be used.
    pub fn release(&self, mut r: LogReservation) {
        let bytes = r.take();
        self.claimed_end.fetch_sub(bytes, Ordering::AcqRel);
    }

    /// The log position where the built segments end.
    fn ready_end(&self) -> u64 {
        self.segments_supply.ready_end.load(Ordering::Acquire)
    }

    /// Append a record. `assigned` runs under the append lock with the record's end LSN, so
    /// that whatever it registers is ordered exactly as the log is. Returns the end LSN.
    /// The record uses `reservation`, of its size, or with none the log's headroom.
    pub fn append(
        &self,
        rec: PendingRecord,
        reservation: LogReservation,
        is_commit: bool,
        assigned: impl FnOnce(Lsn),
    ) -> Lsn {
        self.append_inner(rec, reservation, is_commit, false, true, assigned)
            .0
    }

    /// Append a record that needs no flush of its own, without waking the flusher: the
    /// next flush carries it. Whoever must wait for it flushes it ([`Wal::flush_now`]) or
    /// wakes the flusher ([`Wal::wake_flusher`]). A sequence advance is one: the commit of
    /// the transaction that used the value comes after it in the log, so that commit's
    /// flush carries it, and waking the flusher for it alone would cost a lone committer a
    /// second fdatasync.
    pub fn append_unforced(&self, rec: PendingRecord, reservation: LogReservation) -> Lsn {
        self.append_inner(rec, reservation, false, false, false, |_| {})
            .0
    }

    /// Have the flusher flush whatever is buffered.
    pub fn wake_flusher(&self) {
        self.appended.notify_one();
    }

    /// Append a commit record that will be waited for. Returns its end LSN and whether the
    /// committer is to flush it itself with [`Wal::flush_now`] (then the flusher is not
    /// woken for it). A committer leads when commits are not arriving in groups: the last
    /// flush carried at most one, no other commit is waiting in the buffer, no flush is
    /// underway and there is no `commit_delay` to honour. Handing a lone commit to the
    /// flusher would only add two thread wake-ups to its latency.
    pub fn append_commit(
        &self,
        rec: PendingRecord,
        reservation: LogReservation,
        assigned: impl FnOnce(Lsn),
    ) -> (Lsn, bool) {
        self.append_inner(rec, reservation, true, true, true, assigned)
    }

    fn append_inner(
        &self,
        mut rec: PendingRecord,
        mut reservation: LogReservation,
        is_commit: bool,
        may_lead: bool,
        forced: bool,
        assigned: impl FnOnce(Lsn),
    ) -> (Lsn, bool) {
        let reserved = reservation.take();
        if reserved == 0 {
            // In the headroom: claimed now.
            self.claimed_end
                .fetch_add(rec.len() as u64, Ordering::AcqRel);
        } else {
            assert_eq!(
                reserved,
                rec.len() as u64,
                "a record uses a reservation of its size"
            );
        }
        let mut st = stages::lock(Stage::WalAppend, &self.state);
        if st.buffer.len() >= WAL_BUFFER_BYTES {
            self.stats.buffers_full.fetch_add(1, Ordering::Relaxed);
            self.appended.notify_one();
            while st.buffer.len() >= WAL_BUFFER_BYTES && !st.shutdown {
                st.not_busy(|g| self.drained.wait(g));
            }
        }
        let lead = may_lead
            && self.opts.fsync
            && self.opts.commit_delay_us == 0
            && st.commits == 0
            && st.last_group_commits <= 1
            && !self.flushing.is_locked();
        let start = st.end;
        rec.finish(start, self.flushed.get());
        st.buffer.extend_from_slice(&rec.bytes);
        st.end = Lsn(start.0 + rec.len() as u64);
        debug_assert!(
            st.end.0 <= self.claimed_end.load(Ordering::Acquire),
            "the log never passes what was claimed for it"
        );
        if is_commit {
            st.commits += 1;
        }
        let end = st.end;
        assigned(end);
        let wake = forced && !lead && (!is_commit || st.commits >= st.gather_target);
        drop(st);
        self.stats.records.fetch_add(1, Ordering::Relaxed);
        self.stats
            .bytes
            .fetch_add(rec.len() as u64, Ordering::Relaxed);
        if wake {
            self.appended.notify_one();
        }
        (end, lead)
    }

    /// Have `f` called after every flush, with the new `flushed_lsn`, on the thread that
    /// flushed (flushes are serialized, so calls come in LSN order). Set once, before the
    /// first commit.
    pub fn on_flushed(&self, f: AfterFlush) {
        assert!(
            self.after_flush.set(f).is_ok(),
            "the after-flush hook is set once"
        );
    }

    /// A standby writes log bytes it received from its primary at their own positions
    /// (the stream carries the primary's log byte for byte), building segments as the
    /// flusher does. They are durable only after [`Wal::sync_received`].
    pub fn receive(&self, at: Lsn, data: &[u8]) -> std::io::Result<()> {
        let mut touched = Vec::new();
        let mut segs = self.segments.lock();
        segs.direct_writes = false;
        segs.write(at.0, data, &mut touched)?;
        let mut unsynced = self.received_unsynced.lock();
        for n in touched {
            if !unsynced.contains(&n) {
                unsynced.push(n);
            }
        }
        Ok(())
    }

    /// Make the received log durable up to `upto` (everything received so far) and
    /// publish it as `flushed_lsn`. A failed sync stops the server, as the flusher's does.
    pub fn sync_received(&self, upto: Lsn) {
        let _flushing = self.flushing.lock();
        let touched = std::mem::take(&mut *self.received_unsynced.lock());
        if self.opts.fsync {
            let mut segs = self.segments.lock();
            for n in touched {
                let f = match segs.file(n, false) {
                    Ok(f) => f,
                    Err(e) => fatal("open a WAL segment to sync it", &e),
                };
                if let Err(e) = f.sync_data() {
                    fatal("fdatasync the WAL", &e);
                }
            }
            self.stats.syncs.fetch_add(1, Ordering::Relaxed);
        }
        {
            let mut st = self.state.lock();
            st.end = st.end.max(upto);
        }
        self.claimed_end.fetch_max(upto.0, Ordering::AcqRel);
        if upto > self.flushed_lsn() {
            self.flushed.publish(upto);
        }
    }

    /// A standby becomes a primary: the log ends at `end` (the end of the last complete
    /// record it replayed). Whatever it received past that is a record cut short: it is
    /// zeroed and later segments removed, as crash recovery cuts a torn tail, and appending
    /// continues at `end` (with direct writes again).
    pub fn end_receiving_at(&self, end: Lsn) -> Result<()> {
        let _flushing = self.flushing.lock();
        {
            let mut segs = self.segments.lock();
            segs.cut(end.0).map_err(|e| {
                Error::new(
                    SqlState::IO_ERROR,
                    format!("could not cut the WAL at {end}: {e}"),
                )
            })?;
            segs.direct_writes = true;
        }
        self.received_unsynced.lock().clear();
        {
            let mut st = self.state.lock();
            assert!(st.buffer.is_empty(), "a standby appends nothing");
            st.end = end;
        }
        self.claimed_end.store(end.0, Ordering::Release);
        self.flushed.reset(end);
        Ok(())
    }

    /// A reader of this log's records by position (a standby's replay reads the pieces
    /// of a large commit back with it).
    pub fn record_reader(&self) -> RecordReader {
        RecordReader::new(self.disk.clone(), &self.dir, &self.opts)
    }

    /// Wait until `flushed_lsn` reaches `lsn` or `timeout` passes.
    pub fn wait_flushed_timeout(&self, lsn: Lsn, timeout: Duration) {
        self.flushed.wait_timeout(lsn, timeout)
    }

    /// The directory of the segment files.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The size of a segment file, header included.
    pub fn segment_bytes(&self) -> u64 {
        self.opts.segment_bytes
    }

    pub fn flushed_lsn(&self) -> Lsn {
        self.flushed.get()
    }

    /// Block until the log is durable up to `lsn`: one broadcast wakes every waiter, and
    /// each compares its own LSN with the published one.
    pub fn wait_flushed(&self, lsn: Lsn) {
        self.flushed.wait(lsn)
    }

    /// [`Wal::wait_flushed`] for a task.
    pub async fn wait_flushed_async(&self, lsn: Lsn) {
        self.flushed.wait_async(lsn).await
    }

    /// The flusher: writes and syncs whatever has accumulated, while the next group gathers
    /// in the other buffer, and publishes `flushed_lsn`. Runs until [`Wal::shutdown`].
    pub fn run_flusher(&self) {
        // Whether the last gather filled its group before its window passed.
        let mut filled = true;
        // The server runs one worker thread per core.
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get() as u64);
        loop {
            {
                let mut st = self.state.lock();
                // Gather a group as large as the last one, or one larger while groups of
                // several commits fill in time and transactions are open that may join:
                // groups grow until gathering one takes about its window
                // ([`gather_window`]), so a fast sync does not shrink them to what arrives
                // during one sync. The append that completes the group wakes the flusher,
                // or the window passes; only if nothing at all arrived by then does it
                // sleep until the next append. A lone committer never gets here: it
                // flushes for itself.
                let last = st.last_group_commits.max(1);
                let open = self.active_transactions.load(Ordering::Relaxed);
                let may_join = open > 0;
                let window = gather_window(open, last, cores);
                let target = if filled && last >= 2 && may_join {
                    last + 1
                } else {
                    last
                };
                filled = true;
                if self.opts.commit_delay_us == 0 && st.commits < target && !st.shutdown {
                    st.gather_target = target;
                    loop {
                        let timed_out = self.appended.wait_for(&mut st, window).timed_out();
                        if timed_out && st.commits < target {
                            filled = false;
                        }
                        if st.shutdown || st.commits >= target || timed_out {
                            break;
                        }
                    }
                    st.gather_target = 1;
                }
                while st.buffer.is_empty() && !st.shutdown {
                    self.appended.wait(&mut st);
                }
                if st.buffer.is_empty() {
                    break;
                }
                if self.opts.commit_delay_us > 0
                    && self.active_transactions.load(Ordering::Relaxed) >= self.opts.commit_siblings
                {
                    // PostgreSQL's commit_delay: give more commits a chance to join.
                    let delay = Duration::from_micros(self.opts.commit_delay_us);
                    self.appended.wait_for(&mut st, delay);
                }
            }
            let flushing = self.flushing.lock();
            self.flush_locked(&flushing);
        }
        self.stopped.store(true, Ordering::Release);
    }

    /// Flush on the calling thread, if `lsn` is not durable yet: a lone committer does
    /// this itself rather than hand over to the flusher and wait to be woken (see
    /// [`Wal::append_commit`]).
    pub fn flush_now(&self, lsn: Lsn) {
        if self.flushed_lsn() >= lsn {
            return;
        }
        let flushing = self.flushing.lock();
        if self.flushed_lsn() < lsn {
            self.flush_locked(&flushing);
        }
        assert!(self.flushed_lsn() >= lsn, "flushed everything appended");
    }

    /// Take whatever has accumulated, write it, sync it and publish `flushed_lsn`. Flushes
    /// are serialized by `flushing` (held by the caller), so they publish in log order.
    fn flush_locked(&self, _flushing: &MutexGuard<'_, ()>) {
        let cpu_before = stages::thread_cpu_time();
        let (mut data, end, commits) = {
            let mut st = stages::lock(Stage::WalAppend, &self.state);
            if st.buffer.is_empty() {
                return;
            }
            let spare = std::mem::take(&mut st.spare);
            let data = std::mem::replace(&mut st.buffer, spare);
            let commits = std::mem::take(&mut st.commits);
            st.last_group_commits = commits;
            (data, st.end, commits)
        };
        self.drained.notify_all();
        let start = end.0 - data.len() as u64;
        assert_eq!(start, self.flushed_lsn().0, "flushes are contiguous");
        let began = Instant::now();
        let cpu_before_io = stages::thread_cpu_time();
        let mut touched = Vec::new();
        {
            let mut segs = self.segments.lock();
            if let Err(e) = segs.write(start, &data, &mut touched) {
                fatal("write to the WAL", &e);
            }
            let wrote = Instant::now();
            self.stats.writes.fetch_add(1, Ordering::Relaxed);
            self.stats
                .write_time_us
                .fetch_add((wrote - began).as_micros() as u64, Ordering::Relaxed);
            if self.opts.fsync {
                for n in &touched {
                    let f = match segs.file(*n, false) {
                        Ok(f) => f,
                        Err(e) => fatal("open a WAL segment to sync it", &e),
                    };
                    if let Err(e) = f.sync_data() {
                        fatal("fdatasync the WAL", &e);
                    }
                }
                self.stats.syncs.fetch_add(1, Ordering::Relaxed);
                self.stats
                    .sync_time_us
                    .fetch_add(wrote.elapsed().as_micros() as u64, Ordering::Relaxed);
            }
        }
        let device = began.elapsed();
        let cpu_in_io = stages::thread_cpu_time().saturating_sub(cpu_before_io);
        stages::record_entry(Stage::WalFlush, None);
        stages::record_busy(Stage::WalFlush, device);
        self.stats.record_flush(commits, device);
        self.flushed.publish(end);
        if let Some(after) = self.after_flush.get() {
            after(end);
        }
        data.clear();
        let mut st = stages::lock(Stage::WalAppend, &self.state);
        if st.spare.capacity() < data.capacity() && data.capacity() <= 4 * WAL_BUFFER_BYTES {
            st.spare = data;
        }
        drop(st);
        stages::record_entry(Stage::WalFlushCpu, None);
        // The write and the sync (and the kernel's work for them) are the device's
        // stage; what the flush does around them is serial CPU work of its own.
        let cpu = stages::thread_cpu_time().saturating_sub(cpu_before);
        stages::record_busy(Stage::WalFlushCpu, cpu.saturating_sub(cpu_in_io));
    }

    /// Flush everything appended so far and stop the flusher.
    pub fn shutdown(&self) {
        self.state.lock().shutdown = true;
        self.appended.notify_all();
        self.drained.notify_all();
    }

    /// The longest an asynchronous commit may stay unflushed.
    pub fn writer_delay(&self) -> Duration {
        self.opts.writer_delay
    }

    pub fn end_lsn(&self) -> Lsn {
        self.state.lock().end
    }

    /// Retire the segments that hold only log below `lsn` (a durable checkpoint's redo
    /// LSN: recovery never reads below it): keep them as spares for the segments to come
    /// while fewer than `keep_spare_bytes` of spares are kept, and remove the rest.
    pub fn retire_segments_before(&self, lsn: Lsn, keep_spare_bytes: u64) -> Result<Retired> {
        let io = |e: std::io::Error| {
            Error::new(
                SqlState::IO_ERROR,
                format!("could not retire old WAL segments: {e}"),
            )
        };
        let (disk, dir, supply, keep, old) = {
            let mut segs = self.segments.lock();
            let mut old: Vec<u64> = segs
                .disk
                .list(&segs.dir)
                .map_err(io)?
                .iter()
                .filter_map(|n| u64::from_str_radix(n, 16).ok())
                .filter(|n| (n + 1) * segs.data_bytes() <= lsn.0)
                .collect();
            old.sort_unstable();
            for n in &old {
                segs.open.remove(n);
                segs.direct.remove(n);
            }
            let keep = keep_spare_bytes.div_ceil(segs.segment_bytes) as usize;
            (
                segs.disk.clone(),
                segs.dir.clone(),
                segs.supply.clone(),
                keep,
                old,
            )
        };
        let mut retired = Retired::default();
        for n in &old {
            let path = dir.join(segment_name(*n));
            if supply.spares.lock().len() < keep {
                // Usable at once: a segment built from it is renamed again, and synced in
                // its directory, before the flusher opens it; a crash before that leaves
                // it under either name, and neither is ever read as log.
                disk.rename(&path, &dir.join(spare_name(*n))).map_err(io)?;
                supply.spares.lock().push(spare_name(*n));
                retired.recycled += 1;
            } else {
                disk.remove(&path).map_err(io)?;
                retired.removed += 1;
            }
        }
        if !old.is_empty() {
            disk.sync_dir(&dir).map_err(io)?;
        }
        Ok(retired)
    }

    /// Segments built from zeros (not from spares) since the last call.
    pub fn take_segments_added(&self) -> u64 {
        self.segments.lock().supply.added.swap(0, Ordering::Relaxed)
    }
}

/// What [`Wal::retire_segments_before`] did with the segments it retired.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Retired {
    pub removed: usize,
    pub recycled: usize,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::disk::sim::SimDisk;

    fn options() -> WalOptions {
        WalOptions {
            fsync: true,
            commit_delay_us: 0,
            commit_siblings: 0,
            writer_delay: Duration::from_millis(200),
            segment_bytes: 64 * 1024,
            prepare_ahead: false,
            cut_corrupt: false,
        }
    }

    /// Reservations build the segments a record needs before it is appended; when one
    /// cannot be built (no space), the reservation fails with 53100, nothing is appended,
    /// the unfinished file is gone, and once space is back reservations succeed again.
    #[test]
    fn a_reservation_builds_segments_ahead_and_fails_cleanly_without_space() {
        use crate::disk::sim::{Fault, FaultError, FaultOp};
        let disk = SimDisk::new();
        let (wal, _) = replay_all(&disk);
        let payload = vec![7u8; 1000];
        let rec = || PendingRecord::new(RecordKind::Commit, &payload);
        let r = wal.reserve(rec().len()).expect("room");
        let first = wal.append(rec(), r, true, |_| {});
        wal.flush_now(first);
        // Everything a reservation counts on is built already.
        assert!(wal.ready_end() >= first.0 + WAL_HEADROOM_BYTES);

        disk.inject(Fault::forever(FaultOp::Write, FaultError::Enospc).path_contains(".tmp"));
        let big = 4 * WAL_HEADROOM_BYTES as usize;
        let err = wal.reserve(big).expect_err("no space for the segments");
        assert_eq!(err.code, SqlState::DISK_FULL, "{err:?}");
        let files = disk.list(Path::new("/wal")).expect("list");
        assert!(files.iter().all(|f| !f.ends_with(".tmp")), "{files:?}");
        // Small records still fit in what is built.
        let r = wal.reserve(rec().len()).expect("room in built segments");
        let second = wal.append(rec(), r, true, |_| {});
        wal.flush_now(second);
        // A failed build is not retried at once: the next reservation fails without
        // touching the disk.
        let ops = disk.op_count();
        assert_eq!(
            wal.reserve(big).expect_err("still full").code,
            SqlState::DISK_FULL
        );
        assert_eq!(disk.op_count(), ops);

        disk.clear_faults();
        std::thread::sleep(WAL_SEGMENT_RETRY_PAUSE);
        let r = wal.reserve(big).expect("room again");
        wal.release(r);
        let r = wal.reserve(rec().len()).expect("room");
        let third = wal.append(rec(), r, true, |_| {});
        wal.flush_now(third);
        assert_eq!(
            wal.claimed_end.load(Ordering::Acquire),
            wal.end_lsn().0,
            "every reservation used or released"
        );
        let (_, seen) = replay_all(&disk.crash(1));
        assert_eq!(seen, vec![payload.clone(), payload.clone(), payload]);
    }

    #[test]
    fn a_group_gathers_longer_only_while_open_transactions_keep_the_cores_busy() {
        // TPC-B at 32 clients on 2 cores: 20 to 25 open, groups of 5 to 8.
        assert_eq!(gather_window(22, 7, 2), GATHER_MAX_BUSY);
        assert_eq!(gather_window(22, 12, 2), GATHER_MAX);
        // Most clients wait on the group (one-statement transactions).
        assert_eq!(gather_window(8, 12, 2), GATHER_MAX);
        // Few clients: the cores have time to spare.
        assert_eq!(gather_window(6, 1, 2), GATHER_MAX);
        assert_eq!(gather_window(8, 1, 2), GATHER_MAX);
        assert_eq!(gather_window(16, 0, 2), GATHER_MAX_BUSY);
        assert_eq!(gather_window(0, 0, 1), GATHER_MAX);
    }

    fn replay_all(disk: &SimDisk) -> (Arc<Wal>, Vec<Vec<u8>>) {
        let mut seen = Vec::new();
        let (wal, replayed) = Wal::open(
            Arc::new(disk.clone()),
            Path::new("/wal"),
            options(),
            Lsn::ZERO,
            |_, payload, _| {
                seen.push(payload.to_vec());
                Ok(())
            },
        )
        .expect("open the log");
        assert!(replayed.cut.is_none(), "nothing to cut: {:?}", replayed.cut);
        (wal, seen)
    }

    /// Flushes of every size, each ending inside a block that the next one rewrites
    /// (through the simulated disk's direct handles, which refuse a misaligned write),
    /// some crossing segments and one large enough to go through the page cache, all
    /// read back after a crash that keeps only what was synced.
    #[test]
    fn flushes_rewrite_the_tail_block_and_keep_every_record() {
        let disk = SimDisk::new();
        let sizes = [1usize, 40, 4000, 4096, 70_000, 3, 300_000, 9000, 5];
        let payloads: Vec<Vec<u8>> = sizes
            .iter()
            .enumerate()
            .map(|(i, &n)| (0..n).map(|j| (i * 31 + j) as u8).collect())
            .collect();
        let (wal, seen) = replay_all(&disk);
        assert!(seen.is_empty());
        for (i, p) in payloads.iter().enumerate() {
            let lsn = wal.append(
                PendingRecord::new(RecordKind::Commit, p),
                LogReservation::none(),
                true,
                |_| {},
            );
            wal.flush_now(lsn);
            // Reopening after a crash at any flush sees exactly the records so far.
            if i % 3 == 2 {
                let (_, seen) = replay_all(&disk.crash(i as u64));
                assert_eq!(seen, payloads[..=i]);
            }
        }
        drop(wal);
        let recovered = disk.crash(99);
        let (wal, seen) = replay_all(&recovered);
        assert_eq!(seen, payloads);
        // Appending after recovery starts from a tail block read back from the segment.
        let lsn = wal.append(
            PendingRecord::new(RecordKind::Commit, b"after"),
            LogReservation::none(),
            true,
            |_| {},
        );
        wal.flush_now(lsn);
        let (_, seen) = replay_all(&recovered.crash(100));
        assert_eq!(seen.len(), payloads.len() + 1);
        assert_eq!(seen.last().map(Vec::as_slice), Some(&b"after"[..]));
    }

    fn replay_from(disk: &SimDisk, start: Lsn) -> (Arc<Wal>, Vec<Vec<u8>>, Replayed) {
        let mut seen = Vec::new();
        let (wal, replayed) = Wal::open(
            Arc::new(disk.clone()),
            Path::new("/wal"),
            options(),
            start,
            |_, payload, _| {
                seen.push(payload.to_vec());
                Ok(())
            },
        )
        .expect("open the log");
        (wal, seen, replayed)
    }

    fn spares(disk: &SimDisk) -> Vec<String> {
        let mut names: Vec<String> = disk
            .list(Path::new("/wal"))
            .expect("list the log directory")
            .into_iter()
            .filter(|n| n.ends_with(SPARE_SUFFIX))
            .collect();
        names.sort();
        names
    }

    /// A checkpoint's retired segments become spares (as many as asked, the rest are
    /// removed), the next segments are built from them instead of from zeros, and replay
    /// after a crash reads every record from the redo LSN and nothing else: a record left
    /// past the end by the segment's older incarnation ends the log like zeros, while any
    /// other bad record there is still cut.
    #[test]
    fn retired_segments_are_recycled_and_their_old_records_end_the_log() {
        let disk = SimDisk::new();
        let payload = |i: usize| -> Vec<u8> { (0..3000).map(|j| (i * 7 + j) as u8).collect() };
        let (wal, _, _) = replay_from(&disk, Lsn::ZERO);
        let mut redo = Lsn::ZERO;
        for i in 0..140 {
            let lsn = wal.append(
                PendingRecord::new(RecordKind::Commit, &payload(i)),
                LogReservation::none(),
                true,
                |_| {},
            );
            wal.flush_now(lsn);
            if i == 69 {
                redo = lsn;
            }
            if i == 99 {
                // Segments 0..=4 are built, from zeros; 0, 1 and 2 lie below the redo LSN.
                assert_eq!(wal.take_segments_added(), 5);
                let data = options().segment_bytes - SEGMENT_HEADER_BYTES;
                assert_eq!(redo.0 / data, 3);
                let retired = wal.retire_segments_before(redo, 2 * options().segment_bytes);
                assert_eq!(
                    retired.expect("retire"),
                    Retired {
                        removed: 1,
                        recycled: 2
                    }
                );
                assert_eq!(spares(&disk), [spare_name(0), spare_name(1)]);
            }
        }
        // Segments 5 and 6 were built from the two spares.
        assert_eq!(wal.take_segments_added(), 0);
        assert!(spares(&disk).is_empty());
        let end = wal.end_lsn();
        drop(wal);

        let disk = disk.crash(7);
        let (wal, seen, replayed) = replay_from(&disk, redo);
        assert!(replayed.cut.is_none(), "nothing to cut: {:?}", replayed.cut);
        assert_eq!(replayed.end, end);
        assert_eq!(seen, (70..140).map(payload).collect::<Vec<_>>());
        drop(wal);

        // A record with a valid CRC at the end position, as the segment's older
        // incarnation wrote it there (its LSN one segment earlier), or as nothing could.
        let data = options().segment_bytes - SEGMENT_HEADER_BYTES;
        let segment = disk
            .open(&Path::new("/wal").join(segment_name(end.0 / data)), false)
            .expect("open the last segment");
        let at = SEGMENT_HEADER_BYTES + end.0 % data;
        for (lsn, ends_the_log) in [(end.0 - data, true), (end.0 + 1, false)] {
            let mut rec = PendingRecord::new(RecordKind::Commit, b"old");
            rec.finish(Lsn(lsn), Lsn::ZERO);
            segment.write_all_at(&rec.bytes, at).expect("write");
            segment.sync_data().expect("sync");
            let (_, seen, replayed) = replay_from(&disk, redo);
            assert_eq!(replayed.cut.is_none(), ends_the_log, "{:?}", replayed.cut);
            assert_eq!(replayed.end, end);
            assert_eq!(seen.len(), 70);
        }
    }

    /// A damaged record with valid records a whole write past it is corruption, not a
    /// torn tail: the log refuses to open, naming the record's position and segment,
    /// unless asked to cut it there. (A damaged record with nothing valid after it is a
    /// torn tail, cut: `retired_segments_are_recycled_and_their_old_records_end_the_log`.)
    #[test]
    fn a_damaged_record_followed_by_valid_ones_is_corruption() {
        let payload = |i: usize| -> Vec<u8> { (0..3000).map(|j| (i * 5 + j) as u8).collect() };
        let disk = SimDisk::new();
        let (wal, _, _) = replay_from(&disk, Lsn::ZERO);
        let mut ends = Vec::new();
        // About 1.5 MB: more than one write past the damaged record.
        for i in 0..500 {
            let lsn = wal.append(
                PendingRecord::new(RecordKind::Commit, &payload(i)),
                LogReservation::none(),
                true,
                |_| {},
            );
            wal.flush_now(lsn);
            ends.push(lsn);
        }
        drop(wal);
        let data = options().segment_bytes - SEGMENT_HEADER_BYTES;
        let flip = |disk: &SimDisk, lsn: u64| {
            let segment = disk
                .open(&Path::new("/wal").join(segment_name(lsn / data)), false)
                .expect("open a segment");
            let at = SEGMENT_HEADER_BYTES + lsn % data;
            let mut byte = [0u8; 1];
            segment.read_at(&mut byte, at).expect("read");
            byte[0] ^= 0x40;
            segment.write_all_at(&byte, at).expect("write");
            segment.sync_data().expect("sync");
        };
        // A byte inside the payload of record 100 (which starts where record 99 ends).
        let bad = ends[99].0;
        flip(&disk, bad + 100);
        let open = |cut_corrupt: bool| {
            let mut n = 0;
            Wal::open(
                Arc::new(disk.clone()),
                Path::new("/wal"),
                WalOptions {
                    cut_corrupt,
                    ..options()
                },
                Lsn::ZERO,
                |_, _, _| {
                    n += 1;
                    Ok(())
                },
            )
            .map(|(_, replayed)| (n, replayed))
        };
        let Err(e) = open(false) else {
            panic!("a corrupt log opened");
        };
        assert_eq!(e.code, SqlState::DATA_CORRUPTED);
        assert!(e.message.contains(&Lsn(bad).to_string()), "{}", e.message);
        assert!(
            e.message.contains(&segment_name(bad / data)),
            "{}",
            e.message
        );
        let (n, replayed) = open(true).expect("cut on purpose");
        assert_eq!(n, 100);
        assert_eq!(replayed.end, Lsn(bad));
        let (at, why) = replayed.cut.expect("cut");
        assert_eq!(at, Lsn(bad));
        assert!(why.contains("corrupt"), "{why}");
        // The cut removed everything from the damaged record on: the log ends there now.
        let (n, replayed) = open(false).expect("the cut log opens");
        assert_eq!(n, 100);
        assert!(replayed.cut.is_none());
    }
}
