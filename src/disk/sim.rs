//! `SimDisk`: an in-memory disk that crashes, tears sectors and fails on purpose.
//!
//! Crash-consistency tests run a workload against a `SimDisk`, stop it at a chosen operation,
//! call [`SimDisk::crash`] and recover from the returned disk. The only randomness is the
//! SplitMix64 generator below, seeded by `crash`'s `u64`, so a failing seed replays forever.
//!
//! *Data.* An inode has `durable` bytes (what survives a crash), `volatile` bytes (what reads
//! see: short at EOF, zero-filled gaps) and the ordered list of its unsynced `write_all_at`s
//! and `set_len`s. Invariant: replaying that list onto `durable` yields `volatile`.
//! `sync_data` makes the current contents durable and empties the list. Handles name the
//! inode, not the path, so they keep working after a rename or remove.
//!
//! *Names* are independent of data, as on ext4. Durable and volatile namespaces map path ->
//! inode, and an ordered list holds the unsynced directory operations (link on create, unlink,
//! rename). Invariant: replaying that list onto the durable namespace yields the volatile one.
//! `sync_dir(dir)` copies the volatile entries directly inside `dir` into the durable
//! namespace, removals included, and drops those operations (or the half of a cross-directory
//! rename that lives in `dir`) from the list. So a synced file whose directory never was may
//! vanish, and a rename may revert. Directories (`create_dir_all`) are durable as soon as they
//! exist and are never removed; `list` returns files and subdirectories, like `read_dir`.
//!
//! *A crash* builds a fresh disk from durable state, drawing from the seed in a fixed order:
//! 1. Each unsynced directory operation, in order, independently survives with probability
//!    1/2 (metadata committed early). A surviving rename moves the name atomically: never both
//!    names nor neither. A later operation may survive an earlier one: this is the POSIX
//!    worst case, harsher than an ordered journal.
//! 2. For every inode still named: from `durable`, each unsynced `set_len` applies or not
//!    (1/2); each unsynced write is dropped, applied or torn (1/3 each). A torn write applies
//!    a random subset of its sectors, a sector being an aligned 512-byte range of offsets: the
//!    part of a write inside one sector applies entirely or not at all. Writes are decided
//!    independently, so a later write may survive an earlier lost one (reordering). A piece
//!    surviving past EOF extends the file with zeros.
//!
//! `crash` leaves the original disk untouched, so it can be crashed again with other seeds;
//! the new disk has no faults, is not armed and counts operations from 0.
//!
//! *Faults* fail `write_all_at`, `set_len`, `sync_data` or `sync_dir` with `EIO` or `ENOSPC`,
//! once or forever, optionally only where the path contains a substring (a file's path is
//! the one it was opened with). A failed operation changes nothing. In particular a failed
//! `sync_data` makes nothing durable and leaves every write unsynced: after a failed fsync
//! the durable state is unknown (fsyncgate), and callers must stop. Linux may also drop the
//! dirty pages and let a retried fsync succeed; that is not modelled (a retry here does make
//! the writes durable), so tests should check that callers do not retry.
//!
//! *Crash points.* Each mutating operation (`write_all_at`, `set_len`, `sync_data`, creating
//! `open`, `rename`, `remove`, `sync_dir`) that passes argument checks counts one operation,
//! even if an injected fault then fails it. After [`SimDisk::arm_crash_after`]`(n)`, once
//! `op_count() == n` every mutation fails with [`SimulatedCrash`] ([`is_simulated_crash`])
//! uncounted, while reads keep working: a test can enumerate crash points `0..total_ops`.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::io::{self, ErrorKind::InvalidInput, ErrorKind::NotFound};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use parking_lot::Mutex;

use super::{Disk, File};

/// The unit a crash tears unsynced writes at.
pub const SECTOR_SIZE_BYTES: u64 = 512;

const EIO: i32 = 5;
const ENOSPC: i32 = 28;

/// The operation a [`Fault`] matches.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FaultOp {
    Write,
    SetLen,
    SyncData,
    SyncDir,
}

/// The error an injected [`Fault`] returns.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FaultError {
    /// `EIO` (5).
    Eio,
    /// `ENOSPC` (28).
    Enospc,
}

impl FaultError {
    fn to_io(self) -> io::Error {
        match self {
            FaultError::Eio => io::Error::from_raw_os_error(EIO),
            FaultError::Enospc => io::Error::from_raw_os_error(ENOSPC),
        }
    }
}

/// An injected failure: `Fault::once(FaultOp::Write, FaultError::Eio).path_contains("wal")`.
#[derive(Clone, Debug)]
pub struct Fault {
    op: FaultOp,
    error: FaultError,
    forever: bool,
    path_contains: Option<String>,
    /// Matching operations to let through before the fault strikes.
    skip: u64,
}

impl Fault {
    /// The next matching operation fails; then the fault is gone.
    pub fn once(op: FaultOp, error: FaultError) -> Fault {
        let forever = false;
        Fault {
            op,
            error,
            forever,
            path_contains: None,
            skip: 0,
        }
    }

    /// Every matching operation from now on fails (until [`SimDisk::clear_faults`]).
    pub fn forever(op: FaultOp, error: FaultError) -> Fault {
        Fault {
            forever: true,
            ..Fault::once(op, error)
        }
    }

    /// Let the first `n` matching operations succeed.
    pub fn after(mut self, n: u64) -> Fault {
        self.skip = n;
        self
    }

    /// Match only operations whose path contains `substring`.
    pub fn path_contains(mut self, substring: &str) -> Fault {
        self.path_contains = Some(substring.to_string());
        self
    }

    fn matches(&self, op: FaultOp, path: &Path) -> bool {
        self.op == op
            && match &self.path_contains {
                None => true,
                Some(s) => path.to_string_lossy().contains(s.as_str()),
            }
    }
}

/// The payload of the error every mutation returns once the disk has crashed.
#[derive(Debug)]
pub struct SimulatedCrash;

impl fmt::Display for SimulatedCrash {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("simulated crash")
    }
}

impl std::error::Error for SimulatedCrash {}

/// Print nothing for the panics of [`SimDisk::arm_stop_after`]; other panics print as
/// before.
pub fn silence_simulated_crash_panics() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            let payload = info.payload();
            if !payload.is::<SimulatedCrash>() && !payload.is::<crate::error::ServerStopped>() {
                previous(info);
            }
        }));
    });
}

/// Whether `err` is the error of a mutation refused because the disk crashed.
pub fn is_simulated_crash(err: &io::Error) -> bool {
    err.get_ref().is_some_and(|e| e.is::<SimulatedCrash>())
}

/// SplitMix64 (Steele, Lea and Flood, 2014), fixed here so seeds replay forever. Seeded
/// tests of other layers draw from it too.
pub struct Prng {
    state: u64,
}

impl Prng {
    pub fn new(seed: u64) -> Prng {
        Prng { state: seed }
    }

    pub fn next_u64(&mut self) -> u64 {
        self.state = self.state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: u64) -> u64 {
        assert!(n > 0);
        self.next_u64() % n
    }

    fn coin(&mut self) -> bool {
        self.below(2) == 1
    }
}

enum DataOp {
    /// `write_all_at(data, offset)`.
    Write(usize, Vec<u8>),
    /// `set_len(len)`.
    SetLen(usize),
}

#[derive(Default)]
struct Inode {
    durable: Vec<u8>,
    volatile: Vec<u8>,
    unsynced: Vec<DataOp>,
}

/// Copy `data` to `offset`, extending `contents` with zeros as needed.
fn write_into(contents: &mut Vec<u8>, offset: usize, data: &[u8]) {
    let end = offset + data.len();
    if contents.len() < end {
        contents.resize(end, 0);
    }
    contents[offset..end].copy_from_slice(data);
}

fn apply_data(contents: &mut Vec<u8>, op: &DataOp) {
    match op {
        DataOp::Write(offset, data) => write_into(contents, *offset, data),
        DataOp::SetLen(len) => contents.resize(*len, 0),
    }
}

impl Inode {
    /// The contents after a crash: durable bytes plus a seeded choice of unsynced operations.
    fn crash_contents(&self, rng: &mut Prng) -> Vec<u8> {
        let sector_bytes = SECTOR_SIZE_BYTES as usize;
        let mut contents = self.durable.clone();
        for op in &self.unsynced {
            match op {
                DataOp::SetLen(_) => {
                    if rng.coin() {
                        apply_data(&mut contents, op);
                    }
                }
                DataOp::Write(offset, data) => match rng.below(3) {
                    0 => {}
                    1 => apply_data(&mut contents, op),
                    _ => {
                        let end = offset + data.len();
                        let mut start = *offset;
                        while start < end {
                            let sector_end = ((start / sector_bytes + 1) * sector_bytes).min(end);
                            if rng.coin() {
                                let piece = &data[start - offset..sector_end - offset];
                                write_into(&mut contents, start, piece);
                            }
                            start = sector_end;
                        }
                    }
                },
            }
        }
        contents
    }
}

/// An unsynced directory operation on inode `ino`.
#[derive(Clone)]
enum DirOp {
    /// `Link(path, ino)`: a creating `open`.
    Link(PathBuf, u64),
    /// `Unlink(path, ino)`: `remove`.
    Unlink(PathBuf, u64),
    /// `Rename(from, to, ino)`.
    Rename(PathBuf, PathBuf, u64),
}

fn parent_of(path: &Path) -> &Path {
    path.parent().unwrap_or(Path::new(""))
}

impl DirOp {
    /// Each operation's effect on a path depends only on that path's entry, which is what
    /// keeps the replay invariant true when `sync_dir` settles one directory.
    fn apply(&self, names: &mut BTreeMap<PathBuf, u64>) {
        match self {
            DirOp::Link(path, ino) => {
                names.insert(path.clone(), *ino);
            }
            DirOp::Unlink(path, ino) => {
                if names.get(path) == Some(ino) {
                    names.remove(path);
                }
            }
            DirOp::Rename(from, to, ino) => {
                if names.get(from) == Some(ino) {
                    names.remove(from);
                }
                names.insert(to.clone(), *ino);
            }
        }
    }

    /// What remains unsynced of this operation once `dir` is synced.
    fn without_dir(self, dir: &Path) -> Option<DirOp> {
        match self {
            DirOp::Link(ref path, _) | DirOp::Unlink(ref path, _) => {
                (parent_of(path) != dir).then_some(self)
            }
            DirOp::Rename(from, to, ino) => {
                match (parent_of(&from) == dir, parent_of(&to) == dir) {
                    (true, true) => None,
                    (true, false) => Some(DirOp::Link(to, ino)),
                    (false, true) => Some(DirOp::Unlink(from, ino)),
                    (false, false) => Some(DirOp::Rename(from, to, ino)),
                }
            }
        }
    }
}

#[derive(Default)]
struct State {
    inodes: BTreeMap<u64, Inode>,
    ino_next: u64,
    names_durable: BTreeMap<PathBuf, u64>,
    names_volatile: BTreeMap<PathBuf, u64>,
    dir_ops_unsynced: Vec<DirOp>,
    dirs: BTreeSet<PathBuf>,
    faults: Vec<Fault>,
    op_count: u64,
    crash_at_op_count: Option<u64>,
    crashed: bool,
    /// At the crash point, unwind the calling thread instead of returning an error.
    stop_at_crash: bool,
}

fn error(kind: io::ErrorKind, path: &Path) -> io::Error {
    io::Error::new(kind, format!("{}: {kind}", path.display()))
}

impl State {
    fn refuse_if_crashed(&self) -> io::Result<()> {
        if self.crashed {
            if self.stop_at_crash {
                std::panic::panic_any(SimulatedCrash);
            }
            return Err(io::Error::other(SimulatedCrash));
        }
        Ok(())
    }

    /// Admit one mutating operation: refuse it if crashed, count it, apply matching faults.
    fn mutate(&mut self, fault_target: Option<(FaultOp, &Path)>) -> io::Result<()> {
        if self.crash_at_op_count.is_some_and(|n| self.op_count >= n) {
            self.crashed = true;
        }
        self.refuse_if_crashed()?;
        self.op_count += 1;
        if let Some((op, path)) = fault_target {
            if let Some(i) = self.faults.iter().position(|f| f.matches(op, path)) {
                if self.faults[i].skip > 0 {
                    self.faults[i].skip -= 1;
                    return Ok(());
                }
                let fault = if self.faults[i].forever {
                    self.faults[i].clone()
                } else {
                    self.faults.remove(i)
                };
                return Err(fault.error.to_io());
            }
        }
        Ok(())
    }

    fn dir_exists(&self, dir: &Path) -> bool {
        dir.as_os_str().is_empty() || dir == Path::new("/") || self.dirs.contains(dir)
    }

    fn inode_mut(&mut self, ino: u64) -> &mut Inode {
        self.inodes.get_mut(&ino).expect("live inode")
    }

    fn check_invariants(&self, check_data: bool) {
        let mut names = self.names_durable.clone();
        for op in &self.dir_ops_unsynced {
            op.apply(&mut names);
        }
        assert!(names == self.names_volatile, "dir ops replay to volatile");
        for (path, ino) in self.names_durable.iter().chain(&self.names_volatile) {
            assert!(self.inodes.contains_key(ino) && self.dir_exists(parent_of(path)));
        }
        assert!(self.inodes.keys().all(|&ino| ino < self.ino_next));
        if check_data {
            for inode in self.inodes.values() {
                let mut contents = inode.durable.clone();
                for op in &inode.unsynced {
                    apply_data(&mut contents, op);
                }
                assert!(contents == inode.volatile, "data ops replay to volatile");
            }
        }
    }
}

/// An in-memory simulated disk; clones share the same disk.
#[derive(Clone, Default)]
pub struct SimDisk {
    state: Arc<Mutex<State>>,
}

impl SimDisk {
    pub fn new() -> SimDisk {
        SimDisk::default()
    }

    /// The disk after a power loss now, as chosen by `seed` (see the module docs). Leaves
    /// this disk as it is.
    pub fn crash(&self, seed: u64) -> SimDisk {
        let state = self.state.lock();
        state.check_invariants(true);
        let mut rng = Prng::new(seed);
        let mut names = state.names_durable.clone();
        for op in &state.dir_ops_unsynced {
            if rng.coin() {
                op.apply(&mut names);
            }
        }
        let live: BTreeSet<u64> = names.values().copied().collect();
        let mut inodes = BTreeMap::new();
        for ino in live {
            let contents = state.inodes[&ino].crash_contents(&mut rng);
            let (durable, volatile) = (contents.clone(), contents);
            inodes.insert(
                ino,
                Inode {
                    durable,
                    volatile,
                    unsynced: vec![],
                },
            );
        }
        let after = State {
            inodes,
            ino_next: state.ino_next,
            names_durable: names.clone(),
            names_volatile: names,
            dirs: state.dirs.clone(),
            ..State::default()
        };
        after.check_invariants(true);
        let state = Arc::new(Mutex::new(after));
        SimDisk { state }
    }

    pub fn inject(&self, fault: Fault) {
        self.state.lock().faults.push(fault);
    }

    pub fn clear_faults(&self) {
        self.state.lock().faults.clear();
    }

    /// Mutating operations admitted so far (see the module docs).
    pub fn op_count(&self) -> u64 {
        self.state.lock().op_count
    }

    /// Refuse every mutation once `op_count()` reaches `op_count`.
    pub fn arm_crash_after(&self, op_count: u64) {
        self.state.lock().crash_at_op_count = Some(op_count);
    }

    /// Like [`SimDisk::arm_crash_after`], but the mutation that reaches the crash point
    /// unwinds its thread with a [`SimulatedCrash`] panic, as if the process died right
    /// there: code that would stop the process on a failed write never sees an error.
    /// Tests catch the unwind ([`std::panic::catch_unwind`]) and recover from
    /// [`SimDisk::crash`]; [`silence_simulated_crash_panics`] keeps them quiet.
    pub fn arm_stop_after(&self, op_count: u64) {
        let mut state = self.state.lock();
        state.crash_at_op_count = Some(op_count);
        state.stop_at_crash = true;
    }

    /// Whether an armed crash point has refused a mutation.
    pub fn is_crashed(&self) -> bool {
        self.state.lock().crashed
    }

    fn handle(&self, ino: u64, path: &Path, direct: bool) -> Arc<dyn File> {
        Arc::new(SimFile {
            state: self.state.clone(),
            ino,
            path: path.to_path_buf(),
            direct,
        })
    }

    /// The volatile contents of every named file, for comparing disks in tests.
    pub fn contents(&self) -> BTreeMap<PathBuf, Vec<u8>> {
        let state = self.state.lock();
        let names = state.names_volatile.iter();
        names
            .map(|(path, ino)| (path.clone(), state.inodes[ino].volatile.clone()))
            .collect()
    }
}

struct SimFile {
    state: Arc<Mutex<State>>,
    ino: u64,
    /// The path this handle was opened with, for matching faults.
    path: PathBuf,
    /// Opened with [`Disk::open_direct`]: writes must be whole aligned blocks, as with
    /// `O_DIRECT` (a misaligned one fails with EINVAL, like the real thing).
    direct: bool,
}

/// Whether a direct write of `buf` at `offset` is aligned as `O_DIRECT` requires.
fn direct_aligned(buf: &[u8], offset: usize) -> bool {
    let block = crate::constants::WAL_BLOCK_BYTES;
    offset.is_multiple_of(block)
        && buf.len().is_multiple_of(block)
        && (buf.as_ptr() as usize).is_multiple_of(block)
}

impl File for SimFile {
    fn write_all_at(&self, buf: &[u8], offset: u64) -> io::Result<()> {
        let offset = usize::try_from(offset).ok();
        let Some(offset) = offset.filter(|o| o.checked_add(buf.len()).is_some()) else {
            return Err(error(InvalidInput, &self.path));
        };
        if self.direct && !direct_aligned(buf, offset) {
            return Err(error(InvalidInput, &self.path));
        }
        let mut state = self.state.lock();
        state.mutate(Some((FaultOp::Write, &self.path)))?;
        let inode = state.inode_mut(self.ino);
        if !buf.is_empty() {
            write_into(&mut inode.volatile, offset, buf);
            inode.unsynced.push(DataOp::Write(offset, buf.to_vec()));
        }
        Ok(())
    }

    fn read_at(&self, buf: &mut [u8], offset: u64) -> io::Result<usize> {
        let mut state = self.state.lock();
        let contents = &state.inode_mut(self.ino).volatile;
        let Some(start) = usize::try_from(offset).ok().filter(|&s| s < contents.len()) else {
            return Ok(0);
        };
        let count = buf.len().min(contents.len() - start);
        buf[..count].copy_from_slice(&contents[start..start + count]);
        Ok(count)
    }

    fn sync_data(&self) -> io::Result<()> {
        let mut state = self.state.lock();
        state.mutate(Some((FaultOp::SyncData, &self.path)))?;
        let inode = state.inode_mut(self.ino);
        for op in std::mem::take(&mut inode.unsynced) {
            apply_data(&mut inode.durable, &op);
        }
        assert_eq!(inode.durable.len(), inode.volatile.len());
        Ok(())
    }

    fn set_len(&self, len: u64) -> io::Result<()> {
        let Ok(len) = usize::try_from(len) else {
            return Err(error(InvalidInput, &self.path));
        };
        let mut state = self.state.lock();
        state.mutate(Some((FaultOp::SetLen, &self.path)))?;
        let inode = state.inode_mut(self.ino);
        inode.volatile.resize(len, 0);
        inode.unsynced.push(DataOp::SetLen(len));
        Ok(())
    }

    fn len(&self) -> io::Result<u64> {
        Ok(self.state.lock().inode_mut(self.ino).volatile.len() as u64)
    }
}

impl Disk for SimDisk {
    fn open(&self, path: &Path, create: bool) -> io::Result<Arc<dyn File>> {
        let mut state = self.state.lock();
        let ino = match state.names_volatile.get(path) {
            Some(&ino) => ino,
            None if !create => return Err(error(NotFound, path)),
            None => {
                if state.dirs.contains(path) {
                    return Err(error(InvalidInput, path));
                }
                if !state.dir_exists(parent_of(path)) {
                    return Err(error(NotFound, parent_of(path)));
                }
                state.mutate(None)?;
                let ino = state.ino_next;
                state.ino_next += 1;
                state.inodes.insert(ino, Inode::default());
                state.names_volatile.insert(path.to_path_buf(), ino);
                state
                    .dir_ops_unsynced
                    .push(DirOp::Link(path.to_path_buf(), ino));
                ino
            }
        };
        Ok(self.handle(ino, path, false))
    }

    fn open_direct(&self, path: &Path) -> io::Result<Arc<dyn File>> {
        let Some(&ino) = self.state.lock().names_volatile.get(path) else {
            return Err(error(NotFound, path));
        };
        Ok(self.handle(ino, path, true))
    }

    fn exists(&self, path: &Path) -> bool {
        let state = self.state.lock();
        state.names_volatile.contains_key(path) || state.dir_exists(path)
    }

    fn list(&self, dir: &Path) -> io::Result<Vec<String>> {
        let state = self.state.lock();
        if !state.dir_exists(dir) {
            return Err(error(NotFound, dir));
        }
        let entries = state.names_volatile.keys().chain(&state.dirs);
        let inside = entries.filter(|p| parent_of(p) == dir && p.as_path() != dir);
        let names = inside.filter_map(|p| p.file_name()?.to_str().map(str::to_string));
        Ok(names.collect())
    }

    fn create_dir_all(&self, dir: &Path) -> io::Result<()> {
        let mut state = self.state.lock();
        state.refuse_if_crashed()?;
        if dir
            .ancestors()
            .any(|a| state.names_volatile.contains_key(a))
        {
            return Err(error(InvalidInput, dir));
        }
        for ancestor in dir.ancestors() {
            if !state.dir_exists(ancestor) {
                state.dirs.insert(ancestor.to_path_buf());
            }
        }
        Ok(())
    }

    fn remove(&self, path: &Path) -> io::Result<()> {
        let mut state = self.state.lock();
        let Some(&ino) = state.names_volatile.get(path) else {
            return Err(error(NotFound, path));
        };
        state.mutate(None)?;
        state.names_volatile.remove(path);
        state
            .dir_ops_unsynced
            .push(DirOp::Unlink(path.to_path_buf(), ino));
        Ok(())
    }

    fn rename(&self, from: &Path, to: &Path) -> io::Result<()> {
        let mut state = self.state.lock();
        let Some(&ino) = state.names_volatile.get(from) else {
            return Err(error(NotFound, from));
        };
        if state.dirs.contains(to) {
            return Err(error(InvalidInput, to));
        }
        if !state.dir_exists(parent_of(to)) {
            return Err(error(NotFound, parent_of(to)));
        }
        state.mutate(None)?;
        let op = DirOp::Rename(from.to_path_buf(), to.to_path_buf(), ino);
        op.apply(&mut state.names_volatile);
        state.dir_ops_unsynced.push(op);
        Ok(())
    }

    fn sync_dir(&self, dir: &Path) -> io::Result<()> {
        let mut state = self.state.lock();
        if !state.dir_exists(dir) {
            return Err(error(NotFound, dir));
        }
        state.mutate(Some((FaultOp::SyncDir, dir)))?;
        let state = &mut *state;
        state.names_durable.retain(|path, _| parent_of(path) != dir);
        for (path, &ino) in &state.names_volatile {
            if parent_of(path) == dir {
                state.names_durable.insert(path.clone(), ino);
            }
        }
        let ops = std::mem::take(&mut state.dir_ops_unsynced);
        let kept = ops.into_iter().filter_map(|op| op.without_dir(dir));
        state.dir_ops_unsynced = kept.collect();
        state.check_invariants(false);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SEEDS: u64 = 300;

    fn path(s: &str) -> PathBuf {
        PathBuf::from(s)
    }

    /// A disk with directory `d` and a durable, empty file `d/f`.
    fn disk_with_file() -> (SimDisk, Arc<dyn File>) {
        let disk = SimDisk::new();
        disk.create_dir_all(&path("d")).unwrap();
        let file = disk.open(&path("d/f"), true).unwrap();
        disk.sync_dir(&path("d")).unwrap();
        (disk, file)
    }

    /// The outcomes of `name`'s contents over all seeds.
    fn outcomes(disk: &SimDisk, name: &str) -> Vec<Option<Vec<u8>>> {
        (0..SEEDS)
            .map(|seed| disk.crash(seed).contents().remove(&path(name)))
            .collect()
    }

    #[test]
    fn synced_data_survives_every_crash() {
        let (disk, file) = disk_with_file();
        file.write_all_at(&[7; 1000], 100).unwrap();
        file.sync_data().unwrap();
        let expected: Vec<u8> = [[0; 100].as_slice(), &[7; 1000]].concat();
        assert!(outcomes(&disk, "d/f")
            .iter()
            .all(|c| c.as_ref() == Some(&expected)));
    }

    #[test]
    fn reads_see_volatile_contents() {
        let (disk, file) = disk_with_file();
        file.write_all_at(b"abc", 4).unwrap();
        assert_eq!(file.len().unwrap(), 7);
        let mut buf = [9; 10];
        assert_eq!(file.read_at(&mut buf, 2).unwrap(), 5);
        assert_eq!(&buf[..5], &[0, 0, b'a', b'b', b'c']);
        assert_eq!(file.read_at(&mut buf, 7).unwrap(), 0);
        file.set_len(5).unwrap();
        assert_eq!(disk.contents()[&path("d/f")], vec![0, 0, 0, 0, b'a']);
        assert_eq!(disk.list(&path("")).unwrap(), vec!["d".to_string()]);
        assert_eq!(disk.list(&path("d")).unwrap(), vec!["f".to_string()]);
        assert_eq!(
            disk.open(&path("x/y"), true).err().map(|e| e.kind()),
            Some(NotFound)
        );
    }

    #[test]
    fn unsynced_data_may_be_lost() {
        let (disk, file) = disk_with_file();
        file.write_all_at(&[1; 100], 0).unwrap();
        let lens: BTreeSet<Option<usize>> = outcomes(&disk, "d/f")
            .iter()
            .map(|c| c.as_ref().map(Vec::len))
            .collect();
        assert_eq!(lens, BTreeSet::from([Some(0), Some(100)]));
    }

    #[test]
    fn torn_writes_tear_per_sector() {
        let (disk, file) = disk_with_file();
        file.write_all_at(&[0xAA; 2048], 0).unwrap();
        file.sync_data().unwrap();
        // Misaligned: the second half of sector 0, sectors 1 and 2, the first half of 3.
        file.write_all_at(&[0xBB; 1536], 256).unwrap();
        let (mut dropped, mut full, mut torn) = (0, 0, 0);
        for contents in outcomes(&disk, "d/f") {
            let contents = contents.expect("the name is durable");
            assert_eq!(contents.len(), 2048);
            let mut new_pieces = 0;
            for piece in [256..512, 512..1024, 1024..1536, 1536..1792] {
                let bytes = &contents[piece];
                assert!(
                    bytes.iter().all(|&b| b == bytes[0]),
                    "a sector's piece is atomic"
                );
                new_pieces += usize::from(bytes[0] == 0xBB);
            }
            assert!(contents[..256]
                .iter()
                .chain(&contents[1792..])
                .all(|&b| b == 0xAA));
            match new_pieces {
                0 => dropped += 1,
                4 => full += 1,
                _ => torn += 1,
            }
        }
        assert!(
            dropped > 0 && full > 0 && torn > 0,
            "{dropped} {full} {torn}"
        );
    }

    #[test]
    fn rename_reverts_without_sync_dir_and_survives_with_it() {
        let (disk, file) = disk_with_file();
        file.write_all_at(b"data", 0).unwrap();
        file.sync_data().unwrap();
        disk.rename(&path("d/f"), &path("d/g")).unwrap();
        file.write_all_at(b"more", 4).unwrap();
        assert_eq!(disk.contents()[&path("d/g")], b"datamore".to_vec());
        let names = |seed| disk.crash(seed).contents().into_keys().collect::<Vec<_>>();
        let all: BTreeSet<Vec<PathBuf>> = (0..SEEDS).map(names).collect();
        assert_eq!(all, BTreeSet::from([vec![path("d/f")], vec![path("d/g")]]));
        disk.sync_dir(&path("d")).unwrap();
        assert!((0..SEEDS).all(|seed| names(seed) == vec![path("d/g")]));
    }

    #[test]
    fn create_without_sync_dir_may_vanish() {
        let disk = SimDisk::new();
        disk.create_dir_all(&path("d")).unwrap();
        let file = disk.open(&path("d/new"), true).unwrap();
        file.write_all_at(b"x", 0).unwrap();
        file.sync_data().unwrap();
        let all: BTreeSet<_> = outcomes(&disk, "d/new").into_iter().collect();
        assert_eq!(all, BTreeSet::from([None, Some(b"x".to_vec())]));
        disk.sync_dir(&path("d")).unwrap();
        assert!(outcomes(&disk, "d/new")
            .iter()
            .all(|c| c.as_deref() == Some(b"x")));
    }

    #[test]
    fn eio_once_then_success() {
        let (disk, file) = disk_with_file();
        disk.inject(Fault::once(FaultOp::Write, FaultError::Eio));
        let err = file.write_all_at(b"abc", 0).unwrap_err();
        assert_eq!(err.raw_os_error(), Some(EIO));
        assert_eq!(file.len().unwrap(), 0, "a failed write changes nothing");
        file.write_all_at(b"abc", 0).unwrap();
        assert_eq!(disk.contents()[&path("d/f")], b"abc".to_vec());
    }

    #[test]
    fn enospc_forever_on_matching_paths() {
        let (disk, file) = disk_with_file();
        let other = disk.open(&path("d/other"), true).unwrap();
        disk.inject(Fault::forever(FaultOp::Write, FaultError::Enospc).path_contains("d/f"));
        for _ in 0..3 {
            let err = file.write_all_at(b"abc", 0).unwrap_err();
            assert_eq!(err.raw_os_error(), Some(ENOSPC));
        }
        other.write_all_at(b"ok", 0).unwrap();
        file.sync_data().unwrap();
        disk.clear_faults();
        file.write_all_at(b"abc", 0).unwrap();
    }

    #[test]
    fn failed_sync_makes_nothing_durable() {
        let (disk, file) = disk_with_file();
        file.write_all_at(&[5; 100], 0).unwrap();
        disk.inject(Fault::once(FaultOp::SyncData, FaultError::Eio));
        assert_eq!(file.sync_data().unwrap_err().raw_os_error(), Some(EIO));
        assert!(outcomes(&disk, "d/f").contains(&Some(vec![])));
        disk.open(&path("d/x"), true).unwrap();
        disk.inject(Fault::once(FaultOp::SyncDir, FaultError::Enospc));
        assert!(disk.sync_dir(&path("d")).is_err());
        assert!(outcomes(&disk, "d/x").contains(&None));
    }

    /// Creates, writes, syncs, renames and removes: 9 mutating operations.
    fn workload(disk: &dyn Disk) -> io::Result<()> {
        disk.create_dir_all(&path("w"))?;
        let file = disk.open(&path("w/tmp"), true)?;
        file.write_all_at(&[1; 700], 0)?;
        file.write_all_at(&[2; 700], 700)?;
        file.set_len(1500)?;
        file.sync_data()?;
        disk.rename(&path("w/tmp"), &path("w/log"))?;
        disk.sync_dir(&path("w"))?;
        file.write_all_at(&[3; 10], 1500)?;
        disk.remove(&path("w/log"))
    }

    #[test]
    fn crash_after_n_stops_at_exactly_n_ops() {
        let disk = SimDisk::new();
        workload(&disk).unwrap();
        assert_eq!(disk.op_count(), 9);
        for n in 0..9 {
            let disk = SimDisk::new();
            disk.arm_crash_after(n);
            let err = workload(&disk).unwrap_err();
            assert!(is_simulated_crash(&err), "{err}");
            assert!(disk.is_crashed());
            assert_eq!(disk.op_count(), n);
            assert!(disk.list(&path("w")).is_ok(), "reads keep working");
            for seed in 0..20 {
                let after = disk.crash(seed);
                assert!(!after.is_crashed());
                let log = after.contents().remove(&path("w/log"));
                assert!(n < 7 || log.is_some_and(|c| c.starts_with(&[1; 700])));
            }
        }
    }

    #[test]
    fn same_seed_gives_same_state() {
        let disk = SimDisk::new();
        let shared: Arc<dyn Disk> = Arc::new(disk.clone());
        workload(shared.as_ref()).unwrap();
        disk.create_dir_all(&path("v")).unwrap();
        for i in 0..5u8 {
            let file = disk.open(&path(&format!("v/{i}")), true).unwrap();
            file.write_all_at(&[i; 3000], 100 * u64::from(i)).unwrap();
        }
        let states: Vec<_> = (0..50).map(|seed| disk.crash(seed).contents()).collect();
        for (seed, state) in (0..50).zip(&states) {
            assert_eq!(&disk.crash(seed).contents(), state);
        }
        assert!(states.iter().any(|s| s != &states[0]));
    }
}
