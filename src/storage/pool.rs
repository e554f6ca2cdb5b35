//! The buffer pool: a fixed number of 8 KiB frames over one page file, with clock-sweep
//! eviction, pin counts and a latch per frame, and the page map from logical pages to the
//! physical slots that hold their images.
//!
//! Invariants:
//! - A frame is evicted only when nobody pins it. A guard ([`PageRef`], [`PageMut`]) pins
//!   its frame and holds its latch (shared or exclusive) for as long as it lives. Which
//!   frame holds a page is in the page table, split into shards by page id, so that
//!   pinning a resident page takes one shard's lock and never the pool lock: every
//!   statement pins pages, and one lock for all of them would serialize every core. A pin
//!   is raised under the pool lock or under the shard lock of the page its frame holds,
//!   and dropped without either. The evictor holds both when it takes a page out of the
//!   table, and does so only if the frame is unpinned then: once unmapped, a frame can be
//!   pinned only by whoever holds the pool lock.
//! - A page image is never written over a slot that a checkpoint may still need (shadow
//!   paging): every write of a page goes to a free slot, and the page map moves to it. A
//!   slot is free only when neither the durable checkpoint, the checkpoint being written,
//!   nor the current map refers to it ([`SlotRefs`]).
//! - Zeros go only to slots past every slot in use, claimed (`PREPARING`) before they are
//!   written and free only after ([`BufferPool::prepare_slots`]): growing the page file
//!   ahead of a checkpoint never touches a page.
//! - While a checkpoint is being written, a page that belongs to its image and is about to
//!   change is first copied in memory (copy on first write), so the checkpointer always
//!   writes the image as it was at the checkpoint's start. Nothing goes to the WAL for it.
//!   Neither that copy nor the checkpointer's copy of a frame is made under the pool lock:
//!   each is made under the frame's latch, and a frame whose copy is under way is marked
//!   (`image_copying`) so the checkpointer waits on its latch rather than miss the copy.
//! - A logical page id freed while a checkpoint may need it is reused only after the next
//!   checkpoint is durable.
//! - A bulk load's pages are private until its commit: no checkpoint image includes them
//!   (their ids are marked reserved). Once committed, the slots its log record names are
//!   referred to (LOGGED) until a checkpoint at or past that record is durable, and while
//!   recovery replays, no page is written over a slot that a record still to be replayed
//!   names (recovery's first pass over the log finds them: NAMED); so replay always finds
//!   a load's pages where its record says. Shared pages take even fresh ids,
//!   bulk loads odd ones, so replay never takes an id a later record names.
//! - Every image read is verified ([`Page::verify`]); every image written is sealed
//!   ([`Page::seal`]) with a checksum first.
//! - A commit is promised frames that hold no change (free or clean) before its record
//!   is logged ([`BufferPool::promise_frames`]), only while that many remain beyond the
//!   frames already promised and a share kept for readers; dirty pages are written out
//!   first if they must be. So its install never has to write a page out (and cannot
//!   fail on a full disk), and a reader can bring a page in. A page whose write fails stays
//!   dirty in its frame; the sweep takes a clean frame instead.

use std::collections::BTreeSet;
use std::mem::ManuallyDrop;
use std::ops::{Deref, DerefMut};
use std::sync::atomic::{AtomicU32, AtomicU64, AtomicU8, AtomicUsize, Ordering};
use std::sync::Arc;

use parking_lot::lock_api::{ArcRwLockReadGuard, ArcRwLockWriteGuard};
use parking_lot::{Mutex, MutexGuard, RawRwLock, RwLock};
use rustc_hash::{FxHashMap, FxHashSet};

use super::page::{Page, PageId, PageKind, PAGE_BYTES};
use crate::constants::{PREPARED_SLOTS_MARGIN, READER_FRAMES_MIN};
use crate::disk::File;
use crate::error::{Error, Result, SqlState};
use crate::stages::{self, Held, Stage};
use crate::wal::Lsn;

/// A physical place in the page file: bytes `slot · 8192 ..`. Slot 0 is never used.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct SlotNo(pub u64);

/// Who refers to a slot; a slot with no referrer is free.
#[derive(Clone, Copy, Default, Debug, PartialEq, Eq)]
struct SlotRefs(u8);

impl SlotRefs {
    const DURABLE: u8 = 1;
    const IMAGE: u8 = 2;
    const CURRENT: u8 = 4;
    /// A committed bulk load's log record names the slot: recovery from a checkpoint
    /// older than that record reads it.
    const LOGGED: u8 = 8;
    /// While recovery replays: a record not replayed yet names the slot as a bulk load's
    /// page (found by recovery's first pass over the log); replay claims it or, at its
    /// end, frees it.
    const NAMED: u8 = 16;
    /// [`BufferPool::prepare_slots`] is writing zeros to the slot (past the end of the
    /// page file): no one may take it until that is done.
    const PREPARING: u8 = 32;
}

/// In a page map: a page id held by a bulk load that had not committed when the image
/// was fixed. It is neither free nor mapped; replaying the load's commit claims it.
pub const RESERVED_SLOT: u64 = u64::MAX;

/// Who a new page is for: the shared trees, or the private tree a bulk load builds (its
/// tag). Shared pages take reused ids first, else fresh even ones; a bulk load's pages take
/// fresh odd ids. Every id allocated after a checkpoint's image is fixed is at or past
/// the image's length, so replay from that checkpoint (which allocates shared pages only)
/// can never take an id that a bulk load's commit record, later in the log, names.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Owner {
    Shared,
    Bulk(u64),
}

#[derive(Clone, Copy, Default)]
struct FrameMeta {
    page: Option<PageId>,
    /// The frame differs from the image at the page's current slot.
    dirty: bool,
    /// The frame holds the image the running checkpoint must write, not yet taken.
    image_pending: bool,
    /// The writer that cleared `image_pending` is copying the image out (outside the pool
    /// lock, under the frame's exclusive latch); the copy is in `image_copies` once the
    /// latch is released.
    image_copying: bool,
    /// Changes made to the frame's page, counted: tells whether an image taken from the
    /// frame is still its current content when written.
    changes: u64,
}

/// Logical page ids and physical slots: what is mapped where, and what is free.
pub struct PageMap {
    /// Current slot of each logical page, indexed by page id; 0 = none yet (never written).
    current: Vec<u64>,
    /// The image map of the checkpoint being written, if one is.
    image: Option<Vec<u64>>,
    refs: Vec<SlotRefs>,
    free_slots: BTreeSet<u64>,
    /// Fresh ids start here: shared pages take the first even one, bulk loads the first
    /// odd one (ids skipped over are reused after a restart).
    next_page: u64,
    free_pages: Vec<u64>,
    /// Pages of bulk loads not yet committed, with their load's tag.
    private: FxHashMap<u64, u64>,
    /// Page ids the loaded checkpoint marked [`RESERVED_SLOT`], not claimed yet.
    reserved: FxHashSet<u64>,
    /// Slots named by committed bulk loads, by commit LSN: kept until a checkpoint whose
    /// redo LSN is at or past that LSN is durable.
    logged: Vec<(Lsn, Vec<u64>)>,
    /// While recovery replays: the loaded checkpoint's number of page ids; odd ids from
    /// here on are fresh bulk-load ids.
    replay_fresh_from: u64,
    /// Freed while a checkpoint may refer to them: reusable after the next one.
    freed_pages_pending: Vec<u64>,
    /// A checkpoint exists that may refer to freed page ids.
    checkpointed: bool,
}

impl Default for PageMap {
    /// An empty map (a new data directory).
    fn default() -> PageMap {
        PageMap {
            current: vec![0],
            image: None,
            refs: Vec::new(),
            free_slots: BTreeSet::new(),
            next_page: 1,
            free_pages: Vec::new(),
            private: FxHashMap::default(),
            reserved: FxHashSet::default(),
            logged: Vec::new(),
            replay_fresh_from: 0,
            freed_pages_pending: Vec::new(),
            checkpointed: false,
        }
    }
}

impl PageMap {
    /// A map loaded from a checkpoint (`slots[i]` is page i's slot, 0 = unused page).
    pub fn from_checkpoint(mut slots: Vec<u64>) -> PageMap {
        let len = slots.len() as u64;
        let mut map = PageMap {
            next_page: len.max(1),
            checkpointed: true,
            ..PageMap::default()
        };
        for (page, slot) in slots.iter_mut().enumerate() {
            if *slot == RESERVED_SLOT {
                map.reserved.insert(page as u64);
                *slot = 0;
            } else if *slot != 0 {
                map.add_ref(*slot, SlotRefs::DURABLE | SlotRefs::CURRENT);
            } else if page != 0 {
                map.free_pages.push(page as u64);
            }
        }
        map.current = slots;
        let end = map.refs.len() as u64;
        map.free_slots = (1..end).filter(|&s| map.refs[s as usize].0 == 0).collect();
        map
    }

    fn add_ref(&mut self, slot: u64, flag: u8) {
        let i = slot as usize;
        if self.refs.len() <= i {
            self.refs.resize(i + 1, SlotRefs::default());
        }
        self.refs[i].0 |= flag;
    }

    fn drop_ref(&mut self, slot: u64, flag: u8) {
        if slot == 0 {
            return;
        }
        let r = &mut self.refs[slot as usize];
        r.0 &= !flag;
        if r.0 == 0 {
            self.free_slots.insert(slot);
        }
    }

    fn allocate_slot(&mut self) -> u64 {
        let reusable = self.free_slots.first().copied();
        let slot = match reusable {
            Some(s) => {
                self.free_slots.remove(&s);
                s
            }
            None => (self.refs.len() as u64).max(1),
        };
        self.add_ref(slot, 0);
        assert_eq!(
            self.refs[slot as usize].0, 0,
            "an allocated slot must be free"
        );
        slot
    }

    fn allocate_page(&mut self, owner: Owner) -> PageId {
        fn fresh(counter: &mut u64, odd: bool) -> u64 {
            let id = if (*counter % 2 == 1) == odd {
                *counter
            } else {
                *counter + 1
            };
            *counter = id + 1;
            id
        }
        let id = match owner {
            Owner::Shared => match self.free_pages.pop() {
                Some(id) => id,
                None => fresh(&mut self.next_page, false),
            },
            Owner::Bulk(tag) => {
                let id = fresh(&mut self.next_page, true);
                self.private.insert(id, tag);
                id
            }
        };
        if self.current.len() <= id as usize {
            self.current.resize(id as usize + 1, 0);
        }
        debug_assert_eq!(self.current[id as usize], 0);
        PageId(id)
    }

    /// Page `id` now lives at `slot` (a fresh slot just written).
    fn move_current(&mut self, id: PageId, slot: u64) {
        let old = std::mem::replace(&mut self.current[id.0 as usize], slot);
        self.add_ref(slot, SlotRefs::CURRENT);
        self.drop_ref(old, SlotRefs::CURRENT);
    }

    fn set_image(&mut self, id: PageId, slot: u64) {
        let image = self.image.as_mut().expect("a checkpoint is being written");
        let old = std::mem::replace(&mut image[id.0 as usize], slot);
        assert_ne!(
            old, RESERVED_SLOT,
            "a bulk load's private page is in no image"
        );
        self.add_ref(slot, SlotRefs::IMAGE);
        self.drop_ref(old, SlotRefs::IMAGE);
    }

    /// Replay claims page `id` at `slot`, as a committed bulk load's record (at `lsn`)
    /// names it: the id was reserved in the loaded checkpoint or is past all its ids, and
    /// the slot is one nothing else refers to.
    fn claim(&mut self, id: PageId, slot: u64, fresh_from: u64) -> Result<()> {
        let i = id.0 as usize;
        let known = self.reserved.remove(&id.0) || (id.0 >= fresh_from && id.0 % 2 == 1);
        let slot_free = slot != 0
            && slot != RESERVED_SLOT
            && self
                .refs
                .get(slot as usize)
                .is_none_or(|r| r.0 & !SlotRefs::NAMED == 0);
        let why = if !known {
            Some("the page id is in use")
        } else if !slot_free || self.current.get(i).is_some_and(|&s| s != 0) {
            Some("the slot is in use")
        } else {
            None
        };
        if let Some(why) = why {
            return Err(Error::new(
                SqlState::DATA_CORRUPTED,
                format!("bulk load record names page {} at slot {slot}: {why}", id.0),
            ));
        }
        if self.current.len() <= i {
            self.current.resize(i + 1, 0);
        }
        self.next_page = self.next_page.max(id.0 + 1);
        self.current[i] = slot;
        self.free_slots.remove(&slot);
        self.add_ref(slot, SlotRefs::CURRENT | SlotRefs::LOGGED);
        self.drop_ref(slot, SlotRefs::NAMED);
        Ok(())
    }

    /// Drop the LOGGED protection of bulk loads committed at or below `redo`.
    fn release_logged(&mut self, redo: Lsn) {
        let logged = std::mem::take(&mut self.logged);
        for (lsn, slots) in logged {
            if lsn <= redo {
                for slot in slots {
                    self.drop_ref(slot, SlotRefs::LOGGED);
                }
            } else {
                self.logged.push((lsn, slots));
            }
        }
    }

    /// Highest slot number ever allocated plus one: the page file's length in slots.
    pub fn file_slots(&self) -> u64 {
        self.refs.len() as u64
    }
}

impl FrameMeta {
    /// Whether the frame's page differs from its slot, or the running checkpoint must
    /// still write it: whether the next checkpoint writes it.
    fn counts_dirty(&self) -> bool {
        self.page.is_some() && (self.dirty || self.image_pending)
    }
}

struct Inner {
    meta: Vec<FrameMeta>,
    hand: usize,
    map: PageMap,
    /// Copies made on first write of pages the running checkpoint has not taken yet.
    image_copies: FxHashMap<PageId, Page>,
    /// Epoch stamped into images written now.
    epoch: u64,
    /// Images begun so far (a copy made for one is never kept for another).
    images_begun: u64,
    /// Frames that [`FrameMeta::counts_dirty`]: kept in step by [`Inner::change_meta`],
    /// the only way frame state that it depends on is changed, so that it is known
    /// without a walk over every frame. Changed only under the pool lock; read without it
    /// by [`BufferPool::promise_frames`].
    dirty_frames: Arc<AtomicUsize>,
}

impl Inner {
    /// Change frame `frame`'s state through `change`, keeping `dirty_frames` in step.
    fn change_meta<R>(&mut self, frame: usize, change: impl FnOnce(&mut FrameMeta) -> R) -> R {
        let was = self.meta[frame].counts_dirty();
        let result = change(&mut self.meta[frame]);
        let now = self.meta[frame].counts_dirty();
        if now != was {
            let d = self.dirty_frames.load(Ordering::Relaxed);
            let d = if now { d + 1 } else { d - 1 };
            self.dirty_frames.store(d, Ordering::Release);
        }
        result
    }
}

/// Frames that hold no change, promised to one commit's install by
/// [`BufferPool::promise_frames`] and given back with [`BufferPool::release_frames`].
#[must_use]
#[derive(Debug)]
pub struct FramePromise {
    frames: usize,
}

impl FramePromise {
    /// How many pages the install of a commit may change: for each row written, its leaf
    /// and a page its insert splits off, plus the overflow pages of its image; and a few
    /// more for splits further up.
    pub fn pages_for(rows: usize, overflow_pages: usize) -> usize {
        2 * rows + overflow_pages + 16
    }
}

impl Drop for FramePromise {
    fn drop(&mut self) {
        // Unwinding (a simulated crash in the middle of an install) may drop one early.
        if !std::thread::panicking() {
            debug_assert_eq!(self.frames, 0, "a frame promise is released");
        }
    }
}

/// A page image taken for a checkpoint, with its frame and the frame's change count then
/// if it came from the frame (not from a copy made on a first change).
pub type TakenImage = (Page, Option<(usize, u64)>);

/// A checkpoint image written: its page, its slot, and where it was taken from.
pub type WrittenImage = (PageId, u64, Option<(usize, u64)>);

/// Counters for statistics and tests.
#[derive(Clone, Copy, Debug, Default)]
pub struct PoolStats {
    /// Pages read from the page file into a frame.
    pub reads: u64,
    /// Frames taken from one page for another.
    pub evictions: u64,
    /// Evictions that had to write the page out first (it was dirty).
    pub evictions_written: u64,
    /// Dirty pages written out before a commit, so that its install needs no write
    /// ([`BufferPool::promise_frames`]); they stay in their frames, clean.
    pub pages_cleaned: u64,
    /// Frames the clock hand passed over to find the evicted ones.
    pub sweep_steps: u64,
}

/// The counters behind [`PoolStats`], kept without a lock.
#[derive(Default)]
struct PoolCounters {
    reads: AtomicU64,
    evictions: AtomicU64,
    evictions_written: AtomicU64,
    pages_cleaned: AtomicU64,
    sweep_steps: AtomicU64,
}

/// What the frames hold right now.
#[derive(Clone, Copy, Debug, Default)]
pub struct PoolUsage {
    pub frames: u64,
    pub resident: u64,
    pub dirty: u64,
}

/// Shards of the page table ([`BufferPool::shard`]).
pub const POOL_TABLE_SHARDS: usize = 64;

/// Which frame holds each resident page, for the pages of one shard.
type TableShard = Mutex<FxHashMap<PageId, usize>>;

pub struct BufferPool {
    frames: Vec<Arc<RwLock<Page>>>,
    /// Each frame's pin count: raised under `inner` or under the table shard of the page
    /// the frame holds, lowered anywhere.
    pins: Vec<AtomicU32>,
    /// Each frame's clock-sweep usage: set by every pin, lowered by the sweep.
    usage: Vec<AtomicU8>,
    /// The page table: which frame holds each resident page, in shards by page id.
    table: Vec<TableShard>,
    inner: Mutex<Inner>,
    /// [`Inner::dirty_frames`], readable without the pool lock.
    dirty_frames: Arc<AtomicUsize>,
    /// Frames promised to installs in flight ([`BufferPool::promise_frames`]).
    promised_frames: AtomicUsize,
    file: Arc<dyn File>,
    stats: PoolCounters,
    /// The next bulk load's tag ([`Owner::Bulk`]).
    bulk_tags: AtomicU64,
}

fn io_error(what: &str, e: std::io::Error) -> Error {
    Error::new(
        SqlState::IO_ERROR,
        format!("could not {what} page file: {e}"),
    )
}

/// A pinned page, latched shared.
pub struct PageRef<'a> {
    pool: &'a BufferPool,
    frame: usize,
    guard: ManuallyDrop<ArcRwLockReadGuard<RawRwLock, Page>>,
}

/// A pinned page, latched exclusively; marked dirty.
pub struct PageMut<'a> {
    pool: &'a BufferPool,
    frame: usize,
    guard: ManuallyDrop<ArcRwLockWriteGuard<RawRwLock, Page>>,
}

impl Deref for PageRef<'_> {
    type Target = Page;
    fn deref(&self) -> &Page {
        &self.guard
    }
}

impl Deref for PageMut<'_> {
    type Target = Page;
    fn deref(&self) -> &Page {
        &self.guard
    }
}

impl DerefMut for PageMut<'_> {
    fn deref_mut(&mut self) -> &mut Page {
        &mut self.guard
    }
}

// The latch is released before the pin: an unpinned frame is never latched, so the
// evictor may take it at once.
impl Drop for PageRef<'_> {
    fn drop(&mut self) {
        // SAFETY: the guard is not used again after this.
        unsafe { ManuallyDrop::drop(&mut self.guard) };
        self.pool.unpin(self.frame);
    }
}

impl Drop for PageMut<'_> {
    fn drop(&mut self) {
        // SAFETY: the guard is not used again after this.
        unsafe { ManuallyDrop::drop(&mut self.guard) };
        self.pool.unpin(self.frame);
    }
}

impl BufferPool {
    /// A pool of `frames` frames over `file`, whose pages are mapped by `map`.
    pub fn new(file: Arc<dyn File>, map: PageMap, frames: usize) -> BufferPool {
        assert!(
            frames >= 16,
            "a tree operation pins a handful of pages at once"
        );
        let dirty_frames = Arc::new(AtomicUsize::new(0));
        BufferPool {
            frames: (0..frames)
                .map(|_| Arc::new(RwLock::new(Page::new(PageKind::Leaf, PageId::NONE))))
                .collect(),
            pins: (0..frames).map(|_| AtomicU32::new(0)).collect(),
            usage: (0..frames).map(|_| AtomicU8::new(0)).collect(),
            table: (0..POOL_TABLE_SHARDS)
                .map(|_| {
                    let per_shard = frames / POOL_TABLE_SHARDS + 1;
                    Mutex::new(FxHashMap::with_capacity_and_hasher(
                        per_shard,
                        Default::default(),
                    ))
                })
                .collect(),
            inner: Mutex::new(Inner {
                meta: vec![FrameMeta::default(); frames],
                hand: 0,
                map,
                image_copies: FxHashMap::default(),
                epoch: 0,
                images_begun: 0,
                dirty_frames: dirty_frames.clone(),
            }),
            dirty_frames,
            promised_frames: AtomicUsize::new(0),
            file,
            stats: PoolCounters::default(),
            bulk_tags: AtomicU64::new(1),
        }
    }

    pub fn stats(&self) -> PoolStats {
        let c = &self.stats;
        let get = |a: &AtomicU64| a.load(Ordering::Relaxed);
        PoolStats {
            reads: get(&c.reads),
            evictions: get(&c.evictions),
            evictions_written: get(&c.evictions_written),
            pages_cleaned: get(&c.pages_cleaned),
            sweep_steps: get(&c.sweep_steps),
        }
    }

    /// How many frames hold a page, and how many of those differ from their slot.
    pub fn usage(&self) -> PoolUsage {
        let inner = self.lock_inner();
        let mut usage = PoolUsage {
            frames: self.frames.len() as u64,
            ..PoolUsage::default()
        };
        for meta in inner.meta.iter().filter(|m| m.page.is_some()) {
            usage.resident += 1;
            usage.dirty += u64::from(meta.counts_dirty());
        }
        assert_eq!(
            usage.dirty,
            inner.dirty_frames.load(Ordering::Relaxed) as u64,
            "the count of dirty frames must match the frames"
        );
        usage
    }

    /// A pool of `frames` frames over a page file on a fresh simulated disk (tests).
    #[cfg(test)]
    pub fn on_sim_disk(frames: usize) -> BufferPool {
        use crate::disk::Disk;
        let disk = crate::disk::sim::SimDisk::new();
        disk.create_dir_all(std::path::Path::new("/d"))
            .expect("dir");
        let file = disk
            .open(std::path::Path::new("/d/pages"), true)
            .expect("file");
        BufferPool::new(file, PageMap::default(), frames)
    }

    /// The number of frames (`shared_buffers` in pages).
    pub fn frames(&self) -> usize {
        self.frames.len()
    }

    /// Pin `frame`; the caller holds the pool lock (`_inner`).
    fn pin_locked(&self, _inner: &Inner, frame: usize) {
        self.pins[frame].fetch_add(1, Ordering::Relaxed);
    }

    /// Take the pool lock.
    fn lock_inner(&self) -> Held<MutexGuard<'_, Inner>> {
        stages::lock(Stage::PoolMap, &self.inner)
    }

    /// The table shard of page `id`.
    fn shard_of(&self, id: PageId) -> &TableShard {
        // Page ids are dense and consecutive pages are used together: spread them.
        let h = id.0.wrapping_mul(0x9E37_79B9_7F4A_7C15);
        &self.table[(h >> 58) as usize % POOL_TABLE_SHARDS]
    }

    /// Lock page `id`'s table shard.
    fn lock_shard(&self, id: PageId) -> Held<MutexGuard<'_, FxHashMap<PageId, usize>>> {
        stages::lock(Stage::PoolTable, self.shard_of(id))
    }

    /// The frame holding `id`, pinned, if `id` is resident: the pin is raised under the
    /// shard's lock, so the evictor (which checks pins under it) cannot take the frame.
    fn pin_resident(&self, id: PageId) -> Option<usize> {
        let shard = self.lock_shard(id);
        let frame = *shard.get(&id)?;
        self.pins[frame].fetch_add(1, Ordering::Relaxed);
        drop(shard);
        self.usage[frame].store(2, Ordering::Relaxed);
        Some(frame)
    }

    fn unpin(&self, frame: usize) {
        let before = self.pins[frame].fetch_sub(1, Ordering::Release);
        assert!(before > 0, "unpin of an unpinned frame");
    }

    /// Whether `frame` is pinned; the caller holds the pool lock (`_inner`), so an
    /// unpinned frame stays so until it lets go.
    fn pinned(&self, _inner: &Inner, frame: usize) -> bool {
        self.pins[frame].load(Ordering::Acquire) > 0
    }

    /// Read page `id`, latched shared.
    pub fn read(&self, id: PageId) -> Result<PageRef<'_>> {
        loop {
            let frame = self.pin(id)?;
            let guard = self.frames[frame].read_arc();
            if guard.id() == id {
                return Ok(PageRef {
                    pool: self,
                    frame,
                    guard: ManuallyDrop::new(guard),
                });
            }
            // The load we waited for failed; try again (and report its error ourselves).
            drop(guard);
            self.unpin(frame);
        }
    }

    /// Page `id`, latched exclusively, to change it.
    pub fn write(&self, id: PageId) -> Result<PageMut<'_>> {
        loop {
            let frame = self.pin(id)?;
            let guard = self.frames[frame].write_arc();
            if guard.id() != id {
                drop(guard);
                self.unpin(frame);
                continue;
            }
            self.before_change(frame, &guard);
            return Ok(PageMut {
                pool: self,
                frame,
                guard: ManuallyDrop::new(guard),
            });
        }
    }

    /// Mark the frame dirty; if the running checkpoint still needs its image, copy it first.
    /// The caller holds the frame's exclusive latch, so the page cannot change while the
    /// copy is made; it is made outside the pool lock, which every pin takes.
    fn before_change(&self, frame: usize, page: &Page) {
        let image = {
            let mut inner = self.lock_inner();
            let image = inner.images_begun;
            let copy_image = inner.change_meta(frame, |meta| {
                meta.dirty = true;
                meta.changes += 1;
                if !meta.image_pending {
                    return false;
                }
                meta.image_pending = false;
                meta.image_copying = true;
                true
            });
            if !copy_image {
                return;
            }
            image
        };
        let copy = page.clone_page();
        let mut inner = self.lock_inner();
        inner.meta[frame].image_copying = false;
        // A checkpoint that failed meanwhile has forgotten its image.
        if inner.map.image.is_some() && inner.images_begun == image {
            inner.image_copies.insert(page.id(), copy);
        }
    }

    /// A new, empty shared page of `kind`, latched exclusively.
    pub fn allocate(&self, kind: PageKind) -> Result<PageMut<'_>> {
        self.allocate_for(Owner::Shared, kind)
    }

    /// A new, empty page of `kind` for `owner`, latched exclusively.
    pub fn allocate_for(&self, owner: Owner, kind: PageKind) -> Result<PageMut<'_>> {
        let mut inner = self.lock_inner();
        let id = inner.map.allocate_page(owner);
        let claimed = self.claim_clean_frame(&mut inner, id).and_then(|c| {
            c.ok_or_else(|| Error::internal(format!("new page {} is already resident", id.0)))
        });
        let (frame, mut guard) = match claimed {
            Ok(claimed) => claimed,
            Err(e) => {
                inner.map.private.remove(&id.0);
                inner.map.free_pages.push(id.0);
                return Err(e);
            }
        };
        inner.change_meta(frame, |meta| meta.dirty = true);
        drop(inner);
        *guard = Page::new(kind, id);
        Ok(PageMut {
            pool: self,
            frame,
            guard: ManuallyDrop::new(guard),
        })
    }

    /// Give up page `page`: its id and slot become reusable (once no checkpoint needs them).
    pub fn free(&self, page: PageMut<'_>) {
        let id = page.id();
        let mut guard_inner = self.lock_inner();
        let inner = &mut *guard_inner;
        let image_pending = inner.change_meta(page.frame, |meta| {
            let image_pending = std::mem::take(&mut meta.image_pending);
            meta.dirty = false;
            meta.page = None;
            image_pending
        });
        if image_pending {
            inner.image_copies.insert(id, page.clone_page());
        }
        self.lock_shard(id).remove(&id);
        inner.map.private.remove(&id.0);
        let old = std::mem::replace(&mut inner.map.current[id.0 as usize], 0);
        inner.map.drop_ref(old, SlotRefs::CURRENT);
        if inner.map.image.is_some() || inner.map.checkpointed {
            inner.map.freed_pages_pending.push(id.0);
        } else {
            inner.map.free_pages.push(id.0);
        }
        drop(guard_inner);
        drop(page);
    }

    /// Pin the frame holding `id`, loading it if needed. The caller latches it and must
    /// check the frame still holds `id` (a failed load leaves page id 0).
    fn pin(&self, id: PageId) -> Result<usize> {
        // The page's slot; 0 for a page that does not exist (or no longer does).
        let slot_of = |inner: &Inner| inner.map.current.get(id.0 as usize).copied().unwrap_or(0);
        let missing = || Error::internal(format!("page {} does not exist", id.0));
        let (frame, mut guard, slot) = loop {
            if let Some(frame) = self.pin_resident(id) {
                return Ok(frame);
            }
            let mut inner = self.lock_inner();
            // Another thread may have loaded it meanwhile.
            if let Some(frame) = self.pin_resident(id) {
                return Ok(frame);
            }
            if slot_of(&inner) == 0 {
                return Err(missing());
            }
            let Some((frame, guard)) = self.claim_clean_frame(&mut inner, id)? else {
                continue;
            };
            // Read the slot now: the pool lock was let go while a victim was written, and
            // the page may have been loaded and freed meanwhile.
            let slot = slot_of(&inner);
            if slot == 0 {
                self.lock_shard(id).remove(&id);
                inner.change_meta(frame, |meta| meta.page = None);
                drop(inner);
                drop(guard);
                self.unpin(frame);
                return Err(missing());
            }
            break (frame, guard, slot);
        };
        // Read straight into the frame, which is latched exclusively: a reader waiting on
        // the latch finds either the checked image or, after a failure, a page of no id.
        let loaded = self
            .file
            .read_at(guard.load_buffer(), slot * PAGE_BYTES as u64)
            .map_err(|e| io_error("read", e))
            .and_then(|n| {
                if n != PAGE_BYTES {
                    return Err(Error::new(
                        SqlState::DATA_CORRUPTED,
                        format!("page {} at slot {slot}: short read of {n} bytes", id.0),
                    ));
                }
                guard.check_loaded(id).map_err(|c| {
                    Error::new(
                        SqlState::DATA_CORRUPTED,
                        format!("invalid page {} at slot {slot}: {c}", id.0),
                    )
                })
            });
        self.stats.reads.fetch_add(1, Ordering::Relaxed);
        match loaded {
            Ok(()) => Ok(frame),
            Err(e) => {
                *guard = Page::new(PageKind::Leaf, PageId::NONE);
                let mut inner = self.lock_inner();
                self.lock_shard(id).remove(&id);
                inner.change_meta(frame, |meta| meta.page = None);
                drop(inner);
                drop(guard);
                self.unpin(frame);
                Err(e)
            }
        }
    }

    /// Find an unpinned frame by clock sweep, write it out if dirty, and give it to `id`,
    /// pinned once and latched exclusively. Holds `inner` except while writing; `None`
    /// if `id` became resident meanwhile (only a page that exists can).
    fn claim_clean_frame(
        &self,
        inner: &mut Held<MutexGuard<'_, Inner>>,
        id: PageId,
    ) -> Result<Option<(usize, ArcRwLockWriteGuard<RawRwLock, Page>)>> {
        let n = self.frames.len();
        let mut swept = 0;
        // A dirty frame that cannot be written (a full disk, say) stays dirty, its
        // contents safe in the WAL, and the sweep goes on to find a clean one.
        let mut write_failed = None;
        loop {
            if swept > 4 * n {
                return Err(write_failed.unwrap_or_else(|| {
                    Error::new(SqlState::OUT_OF_MEMORY, "no unpinned buffers available")
                }));
            }
            swept += 1;
            let frame = inner.hand;
            inner.hand = (inner.hand + 1) % n;
            if self.pinned(inner, frame) {
                continue;
            }
            let usage = self.usage[frame].load(Ordering::Relaxed);
            if usage > 0 {
                self.usage[frame].store(usage - 1, Ordering::Relaxed);
                continue;
            }
            let meta = &inner.meta[frame];
            if meta.dirty || meta.image_pending {
                let victim = meta.page.expect("a dirty frame holds a page");
                self.pin_locked(inner, frame);
                let written = inner.unlocked(|| self.write_out(frame, victim));
                self.unpin(frame);
                if let Err(e) = written {
                    write_failed = Some(e);
                    continue;
                }
                self.stats.evictions_written.fetch_add(1, Ordering::Relaxed);
                let meta = &inner.meta[frame];
                if self.pinned(inner, frame) || meta.dirty || meta.image_pending {
                    continue;
                }
            }
            if let Some(old) = inner.meta[frame].page {
                // A pin of a resident page takes only its shard's lock: check for one
                // there, and unmap the page under it.
                let mut shard = self.lock_shard(old);
                if self.pins[frame].load(Ordering::Acquire) > 0 {
                    continue;
                }
                shard.remove(&old);
            }
            let evicted = inner.change_meta(frame, |meta| meta.page.take());
            self.stats
                .sweep_steps
                .fetch_add(swept as u64, Ordering::Relaxed);
            if evicted.is_some() {
                self.stats.evictions.fetch_add(1, Ordering::Relaxed);
            }
            let mut shard = self.lock_shard(id);
            if shard.contains_key(&id) {
                // Loaded by another thread while this one let the pool lock go to write a
                // victim out: two frames must never hold one page. The frame stays empty.
                return Ok(None);
            }
            inner.change_meta(frame, |meta| {
                *meta = FrameMeta {
                    page: Some(id),
                    dirty: false,
                    image_pending: false,
                    image_copying: false,
                    changes: 0,
                }
            });
            self.usage[frame].store(2, Ordering::Relaxed);
            self.pin_locked(inner, frame);
            shard.insert(id, frame);
            let guard = self.frames[frame]
                .try_write_arc()
                .expect("an unpinned frame is not latched");
            return Ok(Some((frame, guard)));
        }
    }

    /// Write pinned frame `frame` (page `id`) to a fresh slot and map it there. The frame
    /// is sealed and written in place, under its exclusive latch: no copy is made, and a
    /// frame picked for eviction is one that nobody was using.
    fn write_out(&self, frame: usize, id: PageId) -> Result<()> {
        let mut latch = self.frames[frame].write();
        let (slot, epoch) = {
            let mut inner = self.lock_inner();
            (inner.map.allocate_slot(), inner.epoch)
        };
        latch.seal(epoch);
        if let Err(e) = self
            .file
            .write_all_at(latch.bytes(), slot * PAGE_BYTES as u64)
        {
            self.release_slot(slot);
            return Err(Error::write_failed("page file", &e));
        }
        let mut inner = self.lock_inner();
        let inner = &mut *inner;
        inner.map.move_current(id, slot);
        let image_pending = inner.change_meta(frame, |meta| {
            meta.dirty = false;
            std::mem::take(&mut meta.image_pending)
        });
        if image_pending {
            inner.map.set_image(id, slot);
        }
        drop(latch);
        Ok(())
    }

    /// Start a checkpoint image of every page as it is now, stamped `epoch`. The caller
    /// makes sure no page changes during this call. Returns the pages whose image must be
    /// written (those that differ from their current slot), in page order.
    pub fn begin_image(&self, epoch: u64) -> Vec<PageId> {
        let mut inner = self.lock_inner();
        let inner = &mut *inner;
        assert!(inner.map.image.is_none(), "one checkpoint at a time");
        inner.epoch = epoch;
        inner.images_begun += 1;
        let mut image = inner.map.current.clone();
        for &id in inner.map.private.keys() {
            image[id as usize] = RESERVED_SLOT;
        }
        for &slot in &image {
            if slot != 0 && slot != RESERVED_SLOT {
                inner.map.add_ref(slot, SlotRefs::IMAGE);
            }
        }
        inner.map.image = Some(image);
        let mut pending = Vec::new();
        for frame in 0..inner.meta.len() {
            let meta = &inner.meta[frame];
            let private = meta
                .page
                .is_some_and(|id| inner.map.private.contains_key(&id.0));
            if let (Some(id), true, false) = (meta.page, meta.dirty, private) {
                inner.change_meta(frame, |meta| meta.image_pending = true);
                pending.push(id);
            }
        }
        pending.sort();
        pending
    }

    /// The images of `ids` the running checkpoint must write, each with the frame's change
    /// count if it came from the frame itself; `None` for a page eviction already wrote.
    /// One pass under the pool lock finds and pins the frames; each frame is then copied
    /// under its shared latch, outside the pool lock (which every pin takes).
    pub fn take_images(&self, ids: &[PageId]) -> Vec<Option<TakenImage>> {
        let mut taken: Vec<Option<TakenImage>> = Vec::with_capacity(ids.len());
        let mut from_frames = Vec::new();
        {
            let mut inner = self.lock_inner();
            for (at, id) in ids.iter().enumerate() {
                if let Some(copy) = inner.image_copies.remove(id) {
                    taken.push(Some((copy, None)));
                    continue;
                }
                taken.push(None);
                let Some(frame) = self.lock_shard(*id).get(id).copied() else {
                    continue;
                };
                let meta = &inner.meta[frame];
                if meta.image_pending || meta.image_copying {
                    self.pin_locked(&inner, frame);
                    from_frames.push((at, frame));
                }
            }
        }
        for (at, frame) in from_frames {
            // A writer copying the image holds the exclusive latch until its copy is
            // stored.
            let latch = self.frames[frame].read();
            let mut inner = self.lock_inner();
            // Nothing else can clear the flag or change the page while the frame is
            // pinned and latched shared, so the copy below is the image.
            let pending_changes = inner.change_meta(frame, |meta| {
                std::mem::take(&mut meta.image_pending).then_some(meta.changes)
            });
            taken[at] = if let Some(changes) = pending_changes {
                drop(inner);
                Some((latch.clone_page(), Some((frame, changes))))
            } else {
                let copy = inner.image_copies.remove(&ids[at]).map(|copy| (copy, None));
                drop(inner);
                copy
            };
            drop(latch);
            self.unpin(frame);
        }
        taken
    }

    /// Fresh slots for `n` image pages, lowest first (so writes coalesce).
    pub fn allocate_slots(&self, n: usize) -> Vec<u64> {
        let mut inner = self.lock_inner();
        let mut slots: Vec<u64> = (0..n).map(|_| inner.map.allocate_slot()).collect();
        slots.sort_unstable();
        slots
    }

    /// The images of `pages` were written at their slots. A page whose image came from
    /// its frame, and whose frame has not changed since, moves there and is clean.
    pub fn images_written(&self, pages: &[WrittenImage]) {
        let mut inner = self.lock_inner();
        let inner = &mut *inner;
        for &(id, slot, from_frame) in pages {
            inner.map.set_image(id, slot);
            if let Some((frame, changes)) = from_frame {
                let meta = &inner.meta[frame];
                if meta.page == Some(id) && meta.changes == changes && !meta.image_pending {
                    inner.change_meta(frame, |meta| meta.dirty = false);
                    inner.map.move_current(id, slot);
                }
            }
        }
    }

    /// Extend the page file by up to `max_slots` slots of zeros, when fewer slots are free
    /// than the next checkpoint needs (one per dirty page, plus
    /// [`PREPARED_SLOTS_MARGIN`]); returns how many it added, 0 when enough are free.
    ///
    /// A checkpoint then overwrites blocks the file system already allocated, instead of
    /// growing the file while it writes: growing costs block allocation and new cache
    /// pages, in the checkpoint's burst of writes, and measured about two to three times
    /// as long per page as an overwrite. The checkpointer calls this between
    /// checkpoints, a batch at a time, so a growing database extends its page file at an
    /// even pace. The slots are claimed (refs `PREPARING`) before the zeros are written,
    /// so no checkpoint or eviction can write a page there meanwhile; after, they are
    /// free. Nothing refers to them, so a crash or a failed write leaves nothing to undo.
    pub fn prepare_slots(&self, max_slots: usize) -> Result<usize> {
        self.prepare_slots_beyond(PREPARED_SLOTS_MARGIN, max_slots)
    }

    /// [`BufferPool::prepare_slots`] with `margin` free slots beyond one per dirty page.
    fn prepare_slots_beyond(&self, margin: usize, max_slots: usize) -> Result<usize> {
        let (start, n) = {
            let mut inner = self.lock_inner();
            let want = inner.dirty_frames.load(Ordering::Relaxed) + margin;
            let free = inner.map.free_slots.len();
            if free >= want || max_slots == 0 {
                return Ok(0);
            }
            let n = (want - free).min(max_slots);
            let start = (inner.map.refs.len() as u64).max(1);
            for slot in start..start + n as u64 {
                inner.map.add_ref(slot, SlotRefs::PREPARING);
            }
            (start, n)
        };
        let zeros = vec![0u8; n * PAGE_BYTES];
        let offset = start * PAGE_BYTES as u64;
        let written = self
            .file
            .write_all_at(&zeros, offset)
            .and_then(|()| self.file.start_writeback(offset, zeros.len() as u64));
        let mut inner = self.lock_inner();
        for slot in start..start + n as u64 {
            inner.map.drop_ref(slot, SlotRefs::PREPARING);
        }
        drop(inner);
        written.map_err(|e| Error::write_failed("page file", &e))?;
        Ok(n)
    }

    /// Before a commit is logged: promise its install `pages` frames that hold no
    /// change (free or clean), so that the install never has to write a page out to get
    /// a frame, and a full disk cannot fail it once its record is in the log. While fewer
    /// are unpromised (beyond the frames kept for readers), dirty frames are written out
    /// here, before anything is logged: a write that fails for lack of space fails the
    /// commit with 53100. A promise larger than half the pool is capped there; the rest of
    /// what such an install changes is evicted to free slots the file holds already,
    /// which are made first (an extension of the file that fails is 53100 too): as many
    /// as four pages per page of the `written_bytes` it installs, never more than the
    /// rest (a bound on the pages it fills, not on those it touches: see
    /// `docs/design.md`, "Full disk").
    pub fn promise_frames(&self, pages: usize, written_bytes: usize) -> Result<FramePromise> {
        let n = self.frames.len();
        let keep = self.reader_frames();
        let frames = pages.min((n - keep) / 2);
        if pages > frames {
            let filled = 4 * written_bytes.div_ceil(PAGE_BYTES) + 16;
            self.prepare_free_slots((pages - frames).min(filled))?;
        }
        let mut all_pinned = 0;
        loop {
            // Most commits find frames enough: they take them without the pool lock.
            if self.try_promise(frames, keep) {
                return Ok(FramePromise { frames });
            }
            let mut inner = self.lock_inner();
            if self.try_promise(frames, keep) {
                return Ok(FramePromise { frames });
            }
            let Some((frame, victim)) = self.dirty_victim(&mut inner) else {
                // Every dirty frame is pinned, in use by statements right now: wait for one
                // for a while.
                drop(inner);
                all_pinned += 1;
                if all_pinned > 1000 {
                    return Err(Error::new(
                        SqlState::OUT_OF_MEMORY,
                        "no unpinned buffers available",
                    ));
                }
                std::thread::sleep(std::time::Duration::from_millis(1));
                continue;
            };
            self.pin_locked(&inner, frame);
            drop(inner);
            let written = self.write_out(frame, victim);
            self.unpin(frame);
            written?;
            self.stats.pages_cleaned.fetch_add(1, Ordering::Relaxed);
        }
    }

    /// Promise `frames` if that many hold no change beyond those promised and `keep`.
    fn try_promise(&self, frames: usize, keep: usize) -> bool {
        let n = self.frames.len();
        let mut promised = self.promised_frames.load(Ordering::Acquire);
        loop {
            let unchanged = n.saturating_sub(self.dirty_frames.load(Ordering::Acquire));
            if unchanged < promised + frames + keep {
                return false;
            }
            match self.promised_frames.compare_exchange_weak(
                promised,
                promised + frames,
                Ordering::AcqRel,
                Ordering::Acquire,
            ) {
                Ok(_) => return true,
                Err(now) => promised = now,
            }
        }
    }

    /// Give back a promise: the install is done, or the commit failed before its log record.
    pub fn release_frames(&self, mut promise: FramePromise) {
        let frames = std::mem::take(&mut promise.frames);
        let before = self.promised_frames.fetch_sub(frames, Ordering::AcqRel);
        assert!(before >= frames, "no more frames released than promised");
    }

    /// Frames never promised to installs: a reader can always bring a page in.
    fn reader_frames(&self) -> usize {
        (self.frames.len() / 16)
            .max(READER_FRAMES_MIN)
            .min(self.frames.len() / 2)
    }

    /// The next unpinned dirty frame after the clock hand, and its page, if any.
    fn dirty_victim(&self, inner: &mut Inner) -> Option<(usize, PageId)> {
        let n = self.frames.len();
        for _ in 0..n {
            let frame = inner.hand;
            inner.hand = (inner.hand + 1) % n;
            let meta = &inner.meta[frame];
            if meta.counts_dirty() && !self.pinned(inner, frame) {
                return meta.page.map(|id| (frame, id));
            }
        }
        None
    }

    /// Extend the file with zeros until `slots` free slots lie inside it beyond one per
    /// dirty frame: evictions to them need no new space.
    fn prepare_free_slots(&self, slots: usize) -> Result<()> {
        loop {
            let short = {
                let inner = self.lock_inner();
                let want = inner.dirty_frames.load(Ordering::Relaxed) + slots;
                want.saturating_sub(inner.map.free_slots.len())
            };
            if short == 0 {
                return Ok(());
            }
            if self.prepare_slots_beyond(slots, short.min(8192))? == 0 {
                return Ok(());
            }
        }
    }

    /// Return a slot taken by [`BufferPool::allocate_slots`] but not written.
    pub fn release_slot(&self, slot: u64) {
        self.lock_inner().map.free_slots.insert(slot);
    }

    /// The finished image's page map (index = page id).
    pub fn image_map(&self) -> Vec<u64> {
        let inner = self.lock_inner();
        let image = inner
            .map
            .image
            .as_ref()
            .expect("a checkpoint is being written");
        assert!(
            inner.image_copies.is_empty(),
            "every image copy was written"
        );
        image.clone()
    }

    /// The image (at redo LSN `redo`) is now the durable checkpoint: the previous one's
    /// slots and page ids that nothing else refers to become free, and so do the slots of
    /// bulk loads that recovery will no longer replay.
    pub fn image_durable(&self, redo: Lsn) {
        let mut inner = self.lock_inner();
        let map = &mut inner.map;
        map.release_logged(redo);
        for slot in 1..map.refs.len() as u64 {
            let r = map.refs[slot as usize].0;
            let mut next = r & !SlotRefs::DURABLE;
            if r & SlotRefs::IMAGE != 0 {
                next = (next & !SlotRefs::IMAGE) | SlotRefs::DURABLE;
            }
            map.refs[slot as usize].0 = next;
            if next == 0 && r != 0 {
                map.free_slots.insert(slot);
            }
        }
        map.image = None;
        map.checkpointed = true;
        let pending = std::mem::take(&mut map.freed_pages_pending);
        map.free_pages.extend(pending);
    }

    /// The checkpoint failed: forget its image (the durable checkpoint stays as it was).
    pub fn abort_image(&self) {
        let mut inner = self.lock_inner();
        let inner = &mut *inner;
        if let Some(image) = inner.map.image.take() {
            for slot in image {
                if slot != 0 && slot != RESERVED_SLOT {
                    inner.map.drop_ref(slot, SlotRefs::IMAGE);
                }
            }
        }
        inner.image_copies.clear();
        for frame in 0..inner.meta.len() {
            inner.change_meta(frame, |meta| meta.image_pending = false);
        }
    }

    /// Write every dirty frame out to fresh slots (tests use this; checkpoints do not).
    pub fn write_all_dirty(&self) -> Result<()> {
        for frame in 0..self.frames.len() {
            let id = {
                let inner = self.lock_inner();
                let meta = &inner.meta[frame];
                match meta.page {
                    Some(id) if meta.dirty => {
                        self.pin_locked(&inner, frame);
                        id
                    }
                    _ => continue,
                }
            };
            let res = self.write_out(frame, id);
            self.unpin(frame);
            res?;
        }
        Ok(())
    }

    /// Write the private pages of bulk load `tag` that are not on disk yet and make the
    /// page file durable. Returns every page of the load with its slot, for the commit
    /// record. The caller makes them durable with [`BufferPool::sync`]. The pages stay
    /// private (out of checkpoint images) until [`BufferPool::publish`].
    pub fn flush_private(&self, tag: u64) -> Result<Vec<(PageId, u64)>> {
        let ids: Vec<PageId> = {
            let inner = self.lock_inner();
            let mut ids: Vec<PageId> = inner
                .map
                .private
                .iter()
                .filter(|(_, &t)| t == tag)
                .map(|(&id, _)| PageId(id))
                .collect();
            ids.sort();
            ids
        };
        for &id in &ids {
            let frame = {
                let inner = self.lock_inner();
                let resident = self.lock_shard(id).get(&id).copied();
                match resident {
                    Some(frame) if inner.meta[frame].dirty => {
                        self.pin_locked(&inner, frame);
                        Some(frame)
                    }
                    _ => None,
                }
            };
            if let Some(frame) = frame {
                let written = self.write_out(frame, id);
                self.unpin(frame);
                written?;
            }
        }
        let inner = self.lock_inner();
        let pages = ids
            .iter()
            .map(|&id| {
                let slot = inner.map.current[id.0 as usize];
                assert!(slot != 0, "a flushed private page has a slot");
                (id, slot)
            })
            .collect();
        Ok(pages)
    }

    /// A tag no other bulk load of this process has.
    pub fn new_bulk_tag(&self) -> u64 {
        self.bulk_tags.fetch_add(1, Ordering::Relaxed)
    }

    /// fdatasync the page file (a failure is fatal to the caller).
    pub fn sync(&self) -> std::io::Result<()> {
        self.file.sync_data()
    }

    /// Bulk load `tag` committed at `lsn` (its record names `pages`): its pages become
    /// shared, and their slots stay untouched until a checkpoint past `lsn` is durable.
    pub fn publish(&self, tag: u64, lsn: Lsn, pages: &[(PageId, u64)]) {
        let mut inner = self.lock_inner();
        let map = &mut inner.map;
        let mut slots = Vec::with_capacity(pages.len());
        for &(id, slot) in pages {
            assert_eq!(map.private.remove(&id.0), Some(tag), "the load's own page");
            assert_eq!(
                map.current[id.0 as usize], slot,
                "flushed pages do not move"
            );
            map.add_ref(slot, SlotRefs::LOGGED);
            slots.push(slot);
        }
        map.logged.push((lsn, slots));
    }

    /// Bytes of page-file slots that committed bulk loads' records pin until a checkpoint
    /// past them is durable (LOGGED).
    pub fn logged_bytes(&self) -> u64 {
        let inner = self.lock_inner();
        let slots: usize = inner.map.logged.iter().map(|(_, s)| s.len()).sum();
        slots as u64 * PAGE_BYTES as u64
    }

    /// Recovery is about to replay the log, whose records name `named` as bulk loads'
    /// pages (recovery's first pass finds them): until [`BufferPool::end_replay`], no page
    /// is written over those slots, so replay finds each load's pages where its record
    /// says. Every other slot the loaded checkpoint does not use is free.
    pub fn begin_replay(&self, named: &[u64]) -> Result<()> {
        let len = self.file.len().map_err(|e| io_error("stat", e))?;
        let mut inner = self.lock_inner();
        let map = &mut inner.map;
        let end = len.div_ceil(PAGE_BYTES as u64).max(1);
        if (map.refs.len() as u64) < end {
            let from = map.refs.len() as u64;
            map.refs.resize(end as usize, SlotRefs::default());
            map.free_slots.extend(from.max(1)..end);
        }
        for &slot in named {
            // The load wrote and synced its pages before its record: they are in the file.
            if slot == 0 || slot >= end {
                return Err(Error::new(
                    SqlState::DATA_CORRUPTED,
                    format!("a bulk load record names slot {slot}, past the page file's end"),
                ));
            }
            map.free_slots.remove(&slot);
            map.add_ref(slot, SlotRefs::NAMED);
        }
        map.replay_fresh_from = map.current.len() as u64;
        Ok(())
    }

    /// Replay of a bulk load's commit at `lsn`: its pages are where its record says.
    pub fn claim(&self, pages: &[(PageId, u64)], lsn: Lsn) -> Result<()> {
        let mut inner = self.lock_inner();
        let map = &mut inner.map;
        let fresh_from = map.replay_fresh_from;
        for &(id, slot) in pages {
            map.claim(id, slot, fresh_from)?;
        }
        map.logged
            .push((lsn, pages.iter().map(|&(_, slot)| slot).collect()));
        Ok(())
    }

    /// Replay is over: reserved ids no record claimed are free, writes go anywhere.
    pub fn end_replay(&self) {
        let mut inner = self.lock_inner();
        let map = &mut inner.map;
        // Slots of loads replay did not claim (into tables dropped by then) are free.
        let unclaimed: Vec<u64> = (0..map.refs.len() as u64)
            .filter(|&s| map.refs[s as usize].0 & SlotRefs::NAMED != 0)
            .collect();
        for slot in unclaimed {
            map.drop_ref(slot, SlotRefs::NAMED);
        }
        let reserved: Vec<u64> = map.reserved.drain().collect();
        map.free_pages.extend(reserved);
    }

    /// Slots of all pages (index = page id), for the tests' integrity checks.
    pub fn current_map(&self) -> Vec<u64> {
        self.lock_inner().map.current.clone()
    }

    pub fn file(&self) -> &Arc<dyn File> {
        &self.file
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::AtomicBool;

    use super::*;
    use crate::disk::{Disk, OsDisk};

    fn pool(frames: usize) -> (BufferPool, std::path::PathBuf) {
        let dir = std::env::temp_dir().join(format!(
            "steadydb-pool-{}-{}",
            std::process::id(),
            rand::random::<u32>()
        ));
        std::fs::create_dir_all(&dir).expect("temp dir");
        let file = OsDisk.open(&dir.join("pages"), true).expect("page file");
        (BufferPool::new(file, PageMap::default(), frames), dir)
    }

    /// Frames are promised to commits only while enough hold no change, beyond those kept
    /// for readers; dirty frames are written out to make them, and a write that fails for
    /// lack of space fails the promise with 53100, promising nothing.
    #[test]
    fn frames_are_promised_only_when_they_can_be_made_clean() {
        use crate::disk::sim::{Fault, FaultError, FaultOp, SimDisk};
        let disk = SimDisk::new();
        disk.create_dir_all(std::path::Path::new("/d"))
            .expect("dir");
        let file = disk
            .open(std::path::Path::new("/d/pages"), true)
            .expect("file");
        let pool = BufferPool::new(file, PageMap::default(), 128);
        assert_eq!(pool.reader_frames(), 64);
        let dirty = |n: usize| {
            for _ in 0..n {
                drop(pool.allocate(PageKind::Leaf).expect("allocate"));
            }
        };
        dirty(40);
        let p = pool
            .promise_frames(20, 0)
            .expect("88 frames hold no change");
        assert_eq!(pool.usage().dirty, 40, "nothing had to be written");
        pool.release_frames(p);
        // 30 more than the 24 unpromised beyond the readers' 64: six pages written out.
        let p = pool.promise_frames(30, 0).expect("written out");
        assert_eq!(pool.usage().dirty, 34);
        pool.release_frames(p);

        disk.inject(Fault::forever(FaultOp::Write, FaultError::Enospc));
        dirty(26);
        let err = pool
            .promise_frames(10, 0)
            .expect_err("no page can be written");
        assert_eq!(err.code, SqlState::DISK_FULL);
        assert_eq!(pool.promised_frames.load(Ordering::Relaxed), 0);
        // A promise that needs no write still holds.
        let p = pool.promise_frames(2, 0).expect("room without writing");
        pool.release_frames(p);

        disk.clear_faults();
        let p = pool.promise_frames(10, 0).expect("space is back");
        pool.release_frames(p);
        assert_eq!(pool.promised_frames.load(Ordering::Relaxed), 0);
    }

    #[test]
    fn pages_survive_eviction_and_slots_are_reused() {
        let (pool, dir) = pool(16);
        let mut ids = Vec::new();
        for i in 0..200u32 {
            let mut p = pool.allocate(PageKind::Overflow).expect("allocate");
            p.set_overflow_data(&i.to_le_bytes());
            ids.push(p.id());
        }
        for (i, id) in ids.iter().enumerate() {
            let p = pool.read(*id).expect("read back");
            assert_eq!(p.overflow_data(), &(i as u32).to_le_bytes());
        }
        let written_before = pool.stats().evictions_written;
        assert!(written_before >= 184);
        // Rewriting pages moves them to new slots; old slots (no checkpoint refers to them)
        // are reused, so the file does not grow without bound.
        for _ in 0..5 {
            for id in &ids {
                let mut p = pool.write(*id).expect("write");
                let v = p.overflow_data().to_vec();
                p.set_overflow_data(&v);
            }
        }
        let slots = pool.inner.lock().map.file_slots();
        assert!(slots <= 200 + 16 + 2, "page file has {slots} slots");
        assert_eq!(
            pool.usage().dirty,
            16,
            "the last 16 pages changed are in the pool"
        );
        let freed = pool.write(ids[0]).expect("write");
        pool.free(freed);
        assert!(pool.read(ids[0]).is_err());
        assert_eq!(pool.usage().dirty, 15);
        std::fs::remove_dir_all(dir).ok();
    }

    /// Pins of resident pages take only a table shard's lock: threads reading and
    /// changing pages that keep being evicted under them always find each page whole,
    /// and every pin is given back.
    #[test]
    fn pins_by_shard_race_evictions_safely() {
        let (pool, dir) = pool(16);
        let ids: Vec<PageId> = (0..64u32)
            .map(|i| {
                let mut p = pool.allocate(PageKind::Overflow).expect("allocate");
                p.set_overflow_data(&[i.to_le_bytes(), 0u32.to_le_bytes()].concat());
                p.id()
            })
            .collect();
        std::thread::scope(|scope| {
            for t in 0..4u32 {
                let (pool, ids) = (&pool, &ids);
                scope.spawn(move || {
                    for n in 0..3000u32 {
                        let at = ((n * 7 + t * 13) % 64) as usize;
                        let expect = (at as u32).to_le_bytes();
                        if n % 5 == 0 {
                            let mut p = pool.write(ids[at]).expect("write");
                            let data = p.overflow_data().to_vec();
                            assert_eq!(data[..4], expect, "page {at} holds its own data");
                            let count = u32::from_le_bytes(data[4..8].try_into().unwrap());
                            p.set_overflow_data(&[expect, (count + 1).to_le_bytes()].concat());
                        } else {
                            let p = pool.read(ids[at]).expect("read");
                            assert_eq!(
                                p.overflow_data()[..4],
                                expect,
                                "page {at} holds its own data"
                            );
                        }
                    }
                });
            }
        });
        let changes: u32 = ids
            .iter()
            .map(|id| {
                let p = pool.read(*id).expect("read");
                u32::from_le_bytes(p.overflow_data()[4..8].try_into().unwrap())
            })
            .sum();
        assert_eq!(changes, 4 * 600, "no change was lost to an eviction");
        assert!(
            pool.stats().evictions > 0,
            "the pages did not fit: they were evicted"
        );
        assert!(
            pool.pins.iter().all(|p| p.load(Ordering::Relaxed) == 0),
            "every pin was given back"
        );
        std::fs::remove_dir_all(dir).ok();
    }

    #[test]
    fn prepared_slots_never_overwrite_a_page_and_are_used_before_the_file_grows() {
        let (pool, dir) = pool(16);
        let ids: Vec<PageId> = (0..200u32)
            .map(|i| {
                let mut p = pool.allocate(PageKind::Overflow).expect("allocate");
                p.set_overflow_data(&[i.to_le_bytes(), 0u32.to_le_bytes()].concat());
                p.id()
            })
            .collect();
        // Evictions write pages to fresh slots while the file is extended beside them.
        let stop = AtomicBool::new(false);
        /// Stops both threads however either ends (a failed read or write panics).
        struct Stop<'a>(&'a AtomicBool);
        impl Drop for Stop<'_> {
            fn drop(&mut self) {
                self.0.store(true, Ordering::Relaxed);
            }
        }
        let prepared = AtomicU64::new(0);
        std::thread::scope(|s| {
            s.spawn(|| {
                let _stop = Stop(&stop);
                while !stop.load(Ordering::Relaxed) {
                    let n = pool.prepare_slots(4).expect("prepare");
                    prepared.fetch_add(n as u64, Ordering::Relaxed);
                }
            });
            let stopper = Stop(&stop);
            while prepared.load(Ordering::Relaxed) == 0 && !stop.load(Ordering::Relaxed) {
                std::thread::yield_now();
            }
            for round in 1..=5u32 {
                for (i, id) in ids.iter().enumerate() {
                    let mut p = pool.write(*id).expect("write");
                    p.set_overflow_data(&[(i as u32).to_le_bytes(), round.to_le_bytes()].concat());
                }
            }
            drop(stopper);
        });
        for (i, id) in ids.iter().enumerate() {
            let p = pool.read(*id).expect("read back");
            let expected = [(i as u32).to_le_bytes(), 5u32.to_le_bytes()].concat();
            assert_eq!(p.overflow_data(), expected.as_slice(), "page {i}");
        }
        // Once enough slots are prepared, writing every dirty page does not grow the file.
        while pool.prepare_slots(64).expect("prepare") > 0 {}
        let dirty = pool.usage().dirty as usize;
        let free = pool.inner.lock().map.free_slots.len();
        assert!(
            free >= dirty + PREPARED_SLOTS_MARGIN,
            "{free} free, {dirty} dirty"
        );
        let slots = pool.inner.lock().map.file_slots();
        pool.write_all_dirty().expect("write out");
        assert_eq!(pool.inner.lock().map.file_slots(), slots);
        std::fs::remove_dir_all(dir).ok();
    }

    #[test]
    fn images_taken_while_writers_change_the_pages_are_the_pages_at_the_start() {
        let (pool, dir) = pool(64);
        let mut ids = Vec::new();
        for _ in 0..48 {
            let mut p = pool.allocate(PageKind::Overflow).expect("allocate");
            p.set_overflow_data(&0u32.to_le_bytes());
            ids.push(p.id());
        }
        for round in 1..=20u32 {
            let pending = pool.begin_image(u64::from(round));
            assert_eq!(
                pending.len(),
                ids.len(),
                "every page changed since the last image"
            );
            let images = std::thread::scope(|s| {
                for writer in 0..2u32 {
                    let (pool, ids) = (&pool, &ids);
                    s.spawn(move || {
                        for (n, id) in ids.iter().enumerate().rev() {
                            if n % 2 == writer as usize {
                                let mut p = pool.write(*id).expect("write");
                                p.set_overflow_data(&round.to_le_bytes());
                            }
                        }
                    });
                }
                let mut images = Vec::new();
                for batch in pending.chunks(5) {
                    images.extend(pool.take_images(batch));
                }
                images
            });
            for (id, image) in pending.iter().zip(images) {
                let (page, _) = image.expect("every page of the image is taken");
                assert_eq!(page.id(), *id);
                let want = (round - 1).to_le_bytes();
                assert_eq!(
                    page.overflow_data(),
                    &want,
                    "page {} is as it was at the start",
                    id.0
                );
            }
            assert!(
                pool.inner.lock().image_copies.is_empty(),
                "no copy is left over"
            );
            // `usage` also checks the running count of dirty frames against the frames.
            assert_eq!(
                pool.usage().dirty,
                ids.len() as u64,
                "every page was changed"
            );
            pool.abort_image();
        }
        pool.write_all_dirty().expect("write out");
        assert_eq!(pool.usage().dirty, 0);
        std::fs::remove_dir_all(dir).ok();
    }

    #[test]
    fn replay_reuses_free_slots_but_not_the_named_ones() {
        let (pool, dir) = pool(16);
        for i in 0..64u32 {
            let mut p = pool.allocate(PageKind::Overflow).expect("allocate");
            p.set_overflow_data(&i.to_le_bytes());
        }
        pool.write_all_dirty().expect("write out");
        let file = pool.file().clone();
        drop(pool);
        let end = file.len().expect("len").div_ceil(PAGE_BYTES as u64);
        // A start with no checkpoint: every slot is free but the two a record names.
        let pool = BufferPool::new(file, PageMap::default(), 16);
        let named = [3, end - 1];
        let past_end = pool.begin_replay(&[end]).expect_err("a slot past the end");
        assert_eq!(past_end.code, SqlState::DATA_CORRUPTED);
        pool.begin_replay(&named).expect("begin");
        // Fewer pages than free slots: none needs to go past the end.
        for i in 0..60u32 {
            let mut p = pool.allocate(PageKind::Overflow).expect("allocate");
            p.set_overflow_data(&i.to_le_bytes());
        }
        pool.write_all_dirty().expect("write out");
        let used = pool.current_map();
        assert!(
            named.iter().all(|s| !used.contains(s)),
            "a named slot was written"
        );
        assert!(
            pool.inner.lock().map.file_slots() <= end,
            "the page file grew"
        );
        pool.end_replay();
        let freed = named
            .iter()
            .all(|s| pool.inner.lock().map.free_slots.contains(s));
        assert!(freed, "unclaimed slots are freed");
        std::fs::remove_dir_all(dir).ok();
    }

    #[test]
    fn all_pins_held_gives_a_clear_error() {
        let (pool, dir) = pool(16);
        let held: Vec<_> = (0..16)
            .map(|_| pool.allocate(PageKind::Leaf).expect("frame"))
            .collect();
        let err = pool.allocate(PageKind::Leaf).err().expect("no frame left");
        assert_eq!(err.code, SqlState::OUT_OF_MEMORY);
        drop(held);
        assert!(pool.allocate(PageKind::Leaf).is_ok());
        std::fs::remove_dir_all(dir).ok();
    }

    #[test]
    fn a_corrupted_slot_is_reported_not_used() {
        let (pool, dir) = pool(16);
        let id = {
            let mut p = pool.allocate(PageKind::Overflow).expect("allocate");
            p.set_overflow_data(b"hello");
            p.id()
        };
        pool.write_all_dirty().expect("write out");
        let slot = pool.current_map()[id.0 as usize];
        // Push it out of memory, then flip a byte of its slot.
        for _ in 0..32 {
            drop(pool.allocate(PageKind::Leaf).expect("allocate"));
        }
        pool.file()
            .write_all_at(&[0xFF], slot * PAGE_BYTES as u64 + 100)
            .expect("corrupt");
        let err = pool.read(id).err().expect("corruption detected");
        assert_eq!(err.code, SqlState::DATA_CORRUPTED);
        std::fs::remove_dir_all(dir).ok();
    }
}
