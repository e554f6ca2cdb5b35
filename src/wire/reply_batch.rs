//! Replies of many connections, sent with one system call.
//!
//! A worker thread serves many connections. When it writes a reply with `send`, the kernel
//! wakes the client thread waiting for it, and on a busy machine that thread takes the core
//! as the system call returns: the worker is switched out in the middle of its run queue,
//! and the client, woken for one reply, goes back to `poll` over all its sockets for the
//! next. At 128 clients that ping-pong is most of the CPU a transaction costs, on both
//! sides of the socket.
//!
//! So a reply that ends a round trip (the one written just before the connection waits for
//! its client) is not written at once. It joins the worker's open [`Batch`], and the task
//! yields to the back of the worker's queue (tokio's `yield_now`, which runs it again only
//! after every task that was ready has run and the I/O driver was polled). The first task
//! of the batch to run again sends the whole batch: one `io_uring_enter` carrying one
//! `IORING_OP_SEND` per reply. The clients are all woken inside that one system call, and
//! the core changes hands once per batch, when it returns.
//!
//! Not every reply waits. One is written at once when a worker thread is parked (a core
//! is idle: there is nothing to gather, and the yield would only add a pass of the
//! scheduler), when its connection is the only busy one (there is nothing to batch
//! with), when the client has already sent more (a pipelining
//! client), and when its transaction holds a row lock another transaction waits for (the
//! sooner that client has its reply, the sooner the lock is released). The connection
//! layer decides; this module only batches.
//!
//! # Invariants
//!
//! - **Every reply is written whole, in order, or the connection is marked broken.** A send
//!   is issued with `MSG_DONTWAIT`: one that would block, or that wrote only part of the
//!   reply, reports how much went out, and the connection writes the rest itself through
//!   its ordinary async write before it reads again. Nothing else is written to that socket
//!   in between, because its task is suspended in [`send`] until the batch has gone out.
//! - **A file descriptor in a batch is open until the batch is sent.** The batch holds the
//!   descriptor number, not the socket. A task dropped while its reply waits (at runtime
//!   shutdown) withdraws the reply under the batch's lock before its socket can be closed,
//!   and the batch is sent under that same lock, so a number reused by a new socket is
//!   never written to.
//! - **One task sends a batch; the others wait without blocking their thread.** A batch
//!   is claimed by the first of its tasks to run again, which sends it; a task of the
//!   batch that runs meanwhile on another worker is suspended until the send is done and
//!   woken then, rather than holding its thread on the batch's lock for the length of the
//!   system call. A reply never joins a batch that is claimed.
//! - **Bounded.** A batch holds at most [`REPLY_BATCH_MAX_SENDS`] replies; the next reply
//!   opens a new batch. A batch waits at most for one pass over the worker's ready tasks.
//! - **Falls back, never fails.** Where io_uring cannot be set up (an old kernel, a seccomp
//!   profile that forbids it), or `io_uring_enter` fails, replies are written one by one as
//!   before. Batching changes when bytes reach the socket, never which bytes.

use std::cell::RefCell;
use std::io;
use std::os::fd::RawFd;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicU8, AtomicUsize, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll, Waker};

use bytes::Bytes;
use io_uring::{opcode, types, IoUring};
use parking_lot::Mutex;

use crate::constants::REPLY_BATCH_MAX_SENDS;

/// What a batched send did with one reply.
#[derive(Debug)]
pub enum Sent {
    /// This many leading bytes reached the socket (all, some, or none if it would block);
    /// the caller writes the rest.
    Bytes(usize),
    /// The socket failed (the client is gone).
    Failed(io::Error),
    /// The batch could not be sent; the caller writes the whole reply itself.
    NotSent,
}

struct Entry {
    fd: RawFd,
    data: Bytes,
    withdrawn: bool,
    outcome: Option<Sent>,
}

/// Replies waiting to be sent together.
struct Batch {
    entries: Vec<Entry>,
    sent: bool,
}

/// A batch, and how its tasks agree on which of them sends it.
struct BatchCell {
    /// Set by the one task that sends the batch, before it takes the lock to send.
    claimed: AtomicBool,
    /// Set once the send is done and every entry that was in it has its outcome.
    finished: AtomicBool,
    batch: Mutex<Batch>,
    /// Tasks of the batch waiting for the claimer to finish.
    waiters: Mutex<Vec<Waker>>,
}

impl BatchCell {
    fn new(first: Entry) -> BatchCell {
        BatchCell {
            claimed: AtomicBool::new(false),
            finished: AtomicBool::new(false),
            batch: Mutex::new(Batch {
                entries: vec![first],
                sent: false,
            }),
            waiters: Mutex::new(Vec::new()),
        }
    }

    /// Send the batch if no other task has claimed it; either way, return once it is sent.
    async fn send_once(&self) {
        if self.claimed.swap(true, Ordering::AcqRel) {
            std::future::poll_fn(|cx| self.poll_finished(cx)).await;
            return;
        }
        send_all(&mut self.batch.lock());
        self.finished.store(true, Ordering::Release);
        let waiters = std::mem::take(&mut *self.waiters.lock());
        for waker in waiters {
            waker.wake();
        }
    }

    /// Ready once the claimer has finished. The claimer sets `finished` before it takes
    /// the waiters, and a waiter checks `finished` again after adding itself under the
    /// same lock, so no waiter is left behind.
    fn poll_finished(&self, cx: &mut Context<'_>) -> Poll<()> {
        if self.finished.load(Ordering::Acquire) {
            return Poll::Ready(());
        }
        let mut waiters = self.waiters.lock();
        if self.finished.load(Ordering::Acquire) {
            return Poll::Ready(());
        }
        if !waiters.iter().any(|w| w.will_wake(cx.waker())) {
            waiters.push(cx.waker().clone());
        }
        Poll::Pending
    }
}

type SharedBatch = Arc<BatchCell>;

thread_local! {
    /// The batch that replies written on this thread join, until it is sent or full.
    static OPEN: RefCell<Option<SharedBatch>> = const { RefCell::new(None) };
    /// This thread's ring, set up on first use.
    static RING: RefCell<Option<IoUring>> = const { RefCell::new(None) };
}

const UNKNOWN: u8 = 0;
const AVAILABLE: u8 = 1;
const UNAVAILABLE: u8 = 2;

/// Whether io_uring works here; settled by the first ring set up.
static SUPPORT: AtomicU8 = AtomicU8::new(UNKNOWN);

/// Whether replies may be batched at all: io_uring has not been found missing, and the
/// server was not told to write replies one by one.
pub fn enabled() -> bool {
    SUPPORT.load(Ordering::Relaxed) != UNAVAILABLE && !disabled_by_environment()
}

fn disabled_by_environment() -> bool {
    static DISABLED: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *DISABLED
        .get_or_init(|| std::env::var_os("STEADYDB_REPLY_BATCHING").is_some_and(|v| v == "off"))
}

/// Connections that have read a request and not yet gone back to waiting for the next,
/// counted in stripes so that counting is not one cache line every core writes: a
/// connection counts itself in on one thread and out on whichever it runs on then, so a
/// stripe alone means nothing, and only the sum (wrapping) is the count.
static BUSY_CONNECTIONS: [BusyStripe; BUSY_STRIPES] =
    [const { BusyStripe(AtomicUsize::new(0)) }; BUSY_STRIPES];

const BUSY_STRIPES: usize = 16;

#[repr(align(128))]
struct BusyStripe(AtomicUsize);

fn busy_stripe() -> &'static AtomicUsize {
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    thread_local! {
        static STRIPE: usize = NEXT.fetch_add(1, Ordering::Relaxed) % BUSY_STRIPES;
    }
    &BUSY_CONNECTIONS[STRIPE.with(|s| *s)].0
}

/// Count a connection in or out of [`busy_connections`].
pub fn set_busy(busy: bool) {
    if busy {
        busy_stripe().fetch_add(1, Ordering::Relaxed);
    } else {
        busy_stripe().fetch_sub(1, Ordering::Relaxed);
    }
}

/// How many connections are between a request and their reply. A reply is batched only
/// when another one is: alone, it would wait for nothing and gain nothing.
pub fn busy_connections() -> usize {
    BUSY_CONNECTIONS.iter().fold(0usize, |sum, s| {
        sum.wrapping_add(s.0.load(Ordering::Relaxed))
    })
}

/// Worker threads of the server's runtimes parked now (with one runtime per core, the
/// runtime's own metrics see only the thread asking).
static PARKED_WORKERS: AtomicUsize = AtomicUsize::new(0);

/// A worker thread of one of the server's runtimes parks (`true`) or wakes (`false`):
/// called by the runtimes' park hooks.
pub fn note_worker_parked(parked: bool) {
    if parked {
        PARKED_WORKERS.fetch_add(1, Ordering::Relaxed);
    } else {
        // A wake without a park (a hook installed late) must not wrap the count.
        let _ =
            PARKED_WORKERS.fetch_update(Ordering::Relaxed, Ordering::Relaxed, |n| n.checked_sub(1));
    }
}

/// Whether a worker thread of one of the server's runtimes is parked, with nothing to
/// run: then a core is idle, and a reply that waited for a batch would only wait. Batching pays where
/// every worker is busy (the reply's task yields to the tasks queued behind it and the
/// replies go out together); where cores are idle there is nothing to gather, and the
/// yield would add a pass of the scheduler to the round trip.
pub fn cores_idle() -> bool {
    if PARKED_WORKERS.load(Ordering::Relaxed) > 0 {
        return true;
    }
    thread_local! {
        static METRICS: Option<tokio::runtime::RuntimeMetrics> =
            tokio::runtime::Handle::try_current().ok().map(|h| h.metrics());
    }
    METRICS.with(|m| {
        let Some(m) = m else {
            return true;
        };
        // An odd count of parks and unparks: parked now.
        (0..m.num_workers()).any(|w| m.worker_park_unpark_count(w) % 2 == 1)
    })
}

/// Counters behind the `steadydb_stat_reply_batches` view.
struct Counters {
    batches: AtomicU64,
    replies: AtomicU64,
    max_replies_per_batch: AtomicU64,
    finished_by_connection: AtomicU64,
}

static STATS: Counters = Counters {
    batches: AtomicU64::new(0),
    replies: AtomicU64::new(0),
    max_replies_per_batch: AtomicU64::new(0),
    finished_by_connection: AtomicU64::new(0),
};

/// What reply batching has done since the server started.
#[derive(Clone, Debug)]
pub struct Stats {
    /// Batches sent (one `io_uring_enter` each).
    pub batches: u64,
    /// Replies in those batches.
    pub replies: u64,
    /// The largest batch.
    pub max_replies_per_batch: u64,
    /// Batched replies that the connection had to finish writing itself (the socket was
    /// full, or the batch could not be sent).
    pub finished_by_connection: u64,
    /// `on`, `unavailable` (io_uring could not be used) or `off` (disabled at start).
    pub state: &'static str,
}

pub fn stats() -> Stats {
    let l = |a: &AtomicU64| a.load(Ordering::Relaxed);
    Stats {
        batches: l(&STATS.batches),
        replies: l(&STATS.replies),
        max_replies_per_batch: l(&STATS.max_replies_per_batch),
        finished_by_connection: l(&STATS.finished_by_connection),
        state: if disabled_by_environment() {
            "off"
        } else if SUPPORT.load(Ordering::Relaxed) == UNAVAILABLE {
            "unavailable"
        } else {
            "on"
        },
    }
}

/// Count a batched reply whose rest the connection wrote itself.
pub fn note_finished_by_connection() {
    STATS.finished_by_connection.fetch_add(1, Ordering::Relaxed);
}

/// Withdraws a reply from its batch if the waiting task is dropped before the batch is sent.
struct Membership {
    batch: SharedBatch,
    index: usize,
    done: bool,
}

impl Membership {
    fn new(batch: SharedBatch, index: usize) -> Membership {
        Membership {
            batch,
            index,
            done: false,
        }
    }
}

impl Drop for Membership {
    fn drop(&mut self) {
        if !self.done {
            let mut batch = self.batch.batch.lock();
            if !batch.sent {
                batch.entries[self.index].withdrawn = true;
            }
        }
    }
}

/// Send `data` on the socket `fd` as part of this thread's batch, and report what was sent.
/// The caller must keep the socket open until this returns (or is dropped).
pub async fn send(fd: RawFd, data: Bytes) -> Sent {
    let mut member = join(fd, data);
    tokio::task::yield_now().await;
    member.batch.send_once().await;
    let outcome = member.batch.batch.lock().entries[member.index]
        .outcome
        .take();
    member.done = true;
    outcome.unwrap_or(Sent::NotSent)
}

fn join(fd: RawFd, data: Bytes) -> Membership {
    let entry = Entry {
        fd,
        data,
        withdrawn: false,
        outcome: None,
    };
    OPEN.with(|open| {
        let mut open = open.borrow_mut();
        if let Some(cell) = open.as_ref() {
            // A claimed batch is being sent, perhaps by another thread holding its lock.
            let unclaimed = !cell.claimed.load(Ordering::Acquire);
            if let Some(mut b) = unclaimed.then(|| cell.batch.try_lock()).flatten() {
                if !b.sent && b.entries.len() < REPLY_BATCH_MAX_SENDS {
                    b.entries.push(entry);
                    return Membership::new(cell.clone(), b.entries.len() - 1);
                }
            }
        }
        let batch = Arc::new(BatchCell::new(entry));
        *open = Some(batch.clone());
        Membership::new(batch, 0)
    })
}

/// Send every reply of the batch with one `io_uring_enter`, on the calling thread's ring.
/// Called with the batch locked; afterwards every entry that was not withdrawn has an
/// outcome.
fn send_all(batch: &mut Batch) {
    batch.sent = true;
    let replies = batch.entries.iter().filter(|e| !e.withdrawn).count() as u64;
    STATS.batches.fetch_add(1, Ordering::Relaxed);
    STATS.replies.fetch_add(replies, Ordering::Relaxed);
    STATS
        .max_replies_per_batch
        .fetch_max(replies, Ordering::Relaxed);
    // The ring goes back to its slot only after a successful submission: after a failed
    // one, dropping it makes sure the kernel never reads what was left in it.
    let result = RING.with(|slot| {
        let mut ring = match slot.borrow_mut().take() {
            Some(ring) => ring,
            None => new_ring()?,
        };
        submit(&mut ring, &mut batch.entries)?;
        *slot.borrow_mut() = Some(ring);
        Ok(())
    });
    if let Err(e) = result {
        // Replies without an outcome were never read by the kernel: their tasks write them.
        give_up(
            &e,
            "batched reply send failed; replies are sent one by one from now on",
        );
    }
}

/// Stop batching for the rest of the server's life, logging why once.
fn give_up(e: &io::Error, why: &str) {
    if SUPPORT.swap(UNAVAILABLE, Ordering::Relaxed) != UNAVAILABLE {
        tracing::warn!(error = %e, "{why}");
    }
}

/// A ring whose kernel supports `IORING_OP_SEND` (Linux 5.6 and later; the probe is as
/// old), or the reason there is none.
fn new_ring() -> io::Result<IoUring> {
    let ring = IoUring::new(REPLY_BATCH_MAX_SENDS as u32).and_then(|ring| {
        let mut probe = io_uring::Probe::new();
        ring.submitter().register_probe(&mut probe)?;
        if probe.is_supported(opcode::Send::CODE) {
            Ok(ring)
        } else {
            Err(io::Error::new(
                io::ErrorKind::Unsupported,
                "the kernel's io_uring has no send operation",
            ))
        }
    });
    match ring {
        Ok(ring) => {
            SUPPORT.store(AVAILABLE, Ordering::Relaxed);
            Ok(ring)
        }
        Err(e) => {
            give_up(&e, "io_uring is not available; replies are sent one by one");
            Err(e)
        }
    }
}

fn submit(ring: &mut IoUring, entries: &mut [Entry]) -> io::Result<()> {
    let mut queued = 0usize;
    {
        let mut sq = ring.submission();
        for (i, e) in entries.iter().enumerate() {
            if e.withdrawn || e.data.is_empty() {
                continue;
            }
            let len = u32::try_from(e.data.len()).unwrap_or(u32::MAX);
            let sqe = opcode::Send::new(types::Fd(e.fd), e.data.as_ptr(), len)
                .flags(libc::MSG_DONTWAIT | libc::MSG_NOSIGNAL)
                .build()
                .user_data(i as u64);
            // SAFETY: the buffer is owned by the entry, which the caller keeps locked and
            // alive until every completion below has been reaped; the descriptor stays open
            // for the same span (see the module's invariants).
            if unsafe { sq.push(&sqe) }.is_err() {
                break;
            }
            queued += 1;
        }
    }
    let mut reaped = 0usize;
    let mut failure = None;
    while reaped < queued {
        match ring.submit_and_wait(queued - reaped) {
            Ok(_) => {}
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            // Nothing was submitted by the failed call. What completed before it is reaped
            // below; the caller then drops the ring, so the rest is never read.
            Err(e) => failure = Some(e),
        }
        for cqe in ring.completion() {
            reaped += 1;
            let Some(entry) = usize::try_from(cqe.user_data())
                .ok()
                .and_then(|i| entries.get_mut(i))
            else {
                continue;
            };
            let res = cqe.result();
            entry.outcome = Some(if res >= 0 {
                Sent::Bytes(res as usize)
            } else if res == -libc::EAGAIN || res == -libc::EINTR {
                Sent::Bytes(0)
            } else {
                Sent::Failed(io::Error::from_raw_os_error(-res))
            });
        }
        if let Some(e) = failure {
            return Err(e);
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use std::io::Read;
    use std::os::fd::AsRawFd;
    use std::os::unix::net::UnixStream;

    use super::*;

    fn ring_works() -> bool {
        new_ring().is_ok()
    }

    fn pair() -> (UnixStream, UnixStream) {
        let (a, b) = UnixStream::pair().expect("socket pair");
        a.set_nonblocking(true).expect("nonblocking");
        b.set_nonblocking(true).expect("nonblocking");
        (a, b)
    }

    fn received(peer: &mut UnixStream) -> Vec<u8> {
        let mut out = Vec::new();
        let mut buf = [0u8; 65536];
        loop {
            match peer.read(&mut buf) {
                Ok(0) => break,
                Ok(n) => out.extend_from_slice(&buf[..n]),
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
                Err(e) => panic!("read: {e}"),
            }
        }
        out
    }

    /// Send one reply in a batch of its own (on this test's thread) and take its outcome.
    fn send_alone(fd: RawFd, data: Bytes) -> Option<Sent> {
        let mut member = join(fd, data);
        let batch = member.batch.clone();
        send_all(&mut batch.batch.lock());
        member.done = true;
        let outcome = batch.batch.lock().entries[member.index].outcome.take();
        outcome
    }

    #[test]
    fn a_batch_sends_every_reply_whole_and_skips_withdrawn_ones() {
        if !ring_works() {
            eprintln!("io_uring is not available here; skipped");
            return;
        }
        let sockets: Vec<_> = (0..5).map(|_| pair()).collect();
        let members: Vec<_> = sockets
            .iter()
            .enumerate()
            .map(|(i, (ours, _))| {
                join(ours.as_raw_fd(), Bytes::from(vec![b'a' + i as u8; 100 + i]))
            })
            .collect();
        assert!(members
            .iter()
            .all(|m| Arc::ptr_eq(&m.batch, &members[0].batch)));
        // The third connection goes away before the batch is sent.
        let mut members: Vec<Option<Membership>> = members.into_iter().map(Some).collect();
        drop(members[2].take());
        let batch = members[0]
            .as_ref()
            .map(|m| m.batch.clone())
            .expect("member");
        batch.claimed.store(true, Ordering::Release);
        send_all(&mut batch.batch.lock());
        // A reply joining now opens a new batch.
        let later = join(sockets[0].0.as_raw_fd(), Bytes::from_static(b"x"));
        assert!(!Arc::ptr_eq(&later.batch, &batch));
        drop(later);
        for (i, member) in members.iter_mut().enumerate() {
            let mut peer = sockets[i].1.try_clone().expect("clone");
            let got = received(&mut peer);
            match member.take() {
                None => assert!(got.is_empty(), "a withdrawn reply was sent"),
                Some(mut m) => {
                    let outcome = batch.batch.lock().entries[m.index].outcome.take();
                    m.done = true;
                    assert!(matches!(outcome, Some(Sent::Bytes(n)) if n == 100 + i));
                    assert_eq!(got, vec![b'a' + i as u8; 100 + i]);
                }
            }
        }
    }

    #[test]
    fn a_full_socket_reports_how_much_went_out() {
        if !ring_works() {
            eprintln!("io_uring is not available here; skipped");
            return;
        }
        let (ours, mut peer) = pair();
        let reply = Bytes::from(vec![7u8; 8 << 20]);
        let outcome = send_alone(ours.as_raw_fd(), reply.clone());
        let Some(Sent::Bytes(n)) = outcome else {
            panic!("unexpected outcome {outcome:?}");
        };
        assert!(n < reply.len(), "8 MiB fit in a socket buffer");
        let got = received(&mut peer);
        assert_eq!(got.len(), n);
    }

    #[test]
    fn a_closed_peer_fails_the_send() {
        if !ring_works() {
            eprintln!("io_uring is not available here; skipped");
            return;
        }
        let (ours, peer) = pair();
        drop(peer);
        let outcome = send_alone(ours.as_raw_fd(), Bytes::from_static(b"reply"));
        assert!(matches!(outcome, Some(Sent::Failed(_))), "{outcome:?}");
    }

    #[test]
    fn tasks_on_many_threads_each_get_their_own_reply() {
        if !ring_works() {
            eprintln!("io_uring is not available here; skipped");
            return;
        }
        // Tasks move between workers, so a batch is often claimed on one thread while
        // others of its tasks wait on another. Every reply must arrive whole and in order,
        // and no waiting task may be left asleep (the timeout turns a hang into a failure).
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(3)
            .enable_all()
            .build()
            .expect("runtime");
        let sockets: Vec<_> = (0..48).map(|_| pair()).collect();
        const REPLIES: usize = 200;
        let outcomes = rt.block_on(async {
            let tasks: Vec<_> = sockets
                .iter()
                .enumerate()
                .map(|(c, (ours, _))| {
                    let fd = ours.as_raw_fd();
                    tokio::spawn(async move {
                        let mut sent = Vec::new();
                        for r in 0..REPLIES {
                            let reply = Bytes::from(format!("{c}:{r};"));
                            sent.push(match send(fd, reply.clone()).await {
                                Sent::Bytes(n) => n == reply.len(),
                                _ => false,
                            });
                        }
                        sent
                    })
                })
                .collect();
            let all = async {
                let mut outcomes = Vec::new();
                for t in tasks {
                    outcomes.push(t.await.expect("task"));
                }
                outcomes
            };
            tokio::time::timeout(std::time::Duration::from_secs(60), all)
                .await
                .expect("a task waiting for its batch was never woken")
        });
        for (c, ((_, peer), sent)) in sockets.iter().zip(outcomes).enumerate() {
            assert!(
                sent.iter().all(|whole| *whole),
                "connection {c}: a reply not sent whole"
            );
            let expected: String = (0..REPLIES).map(|r| format!("{c}:{r};")).collect();
            let got = received(&mut peer.try_clone().expect("clone"));
            assert_eq!(String::from_utf8_lossy(&got), expected);
        }
    }

    #[test]
    fn tasks_on_one_thread_share_a_batch() {
        if !ring_works() {
            eprintln!("io_uring is not available here; skipped");
            return;
        }
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("runtime");
        let sockets: Vec<_> = (0..8).map(|_| pair()).collect();
        let before = stats();
        let outcomes = rt.block_on(async {
            let tasks: Vec<_> = sockets
                .iter()
                .map(|(ours, _)| {
                    let fd = ours.as_raw_fd();
                    tokio::spawn(async move { send(fd, Bytes::from_static(b"done")).await })
                })
                .collect();
            let mut outcomes = Vec::new();
            for t in tasks {
                outcomes.push(t.await.expect("task"));
            }
            outcomes
        });
        for ((_, peer), outcome) in sockets.iter().zip(outcomes) {
            assert!(matches!(outcome, Sent::Bytes(4)), "{outcome:?}");
            assert_eq!(received(&mut peer.try_clone().expect("clone")), b"done");
        }
        let after = stats();
        // Other tests may send batches at the same time; this one's eight replies went out
        // in at most a few.
        assert!(after.replies - before.replies >= 8);
        assert!(after.max_replies_per_batch >= 2);
    }
}
