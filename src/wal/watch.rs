//! [`LsnWatch`]: one published LSN that only grows, and a broadcast to everyone waiting for
//! it to pass their own LSN.
//!
//! This is the primitive behind `flushed_lsn` and `visible_lsn`. Publishing is one store
//! and one pass over the waiters; a waiter names its own target when it registers, so no
//! waiter costs the publisher a system call of its own, and a publish wakes exactly the
//! waiters it releases. Two kinds of waiter share it:
//!
//! - **tasks** (client connections running on the async runtime) await
//!   [`LsnWatch::wait_async`]; a publish makes the tasks it passes runnable, which is a push
//!   onto a run queue each, not a thread wake-up each. Waiters whose LSN it does not reach
//!   stay asleep. (Waking every waiter and letting each re-check, as this did first, woke
//!   the commits of the group still gathering too: on `update_pk`, at 32 and at 128
//!   clients, about one task in vain for every two commits.)
//! - **threads** (recovery, tests, the rare blocking paths such as DDL) call
//!   [`LsnWatch::wait`]. On a runtime worker that goes through [`blocking`], so a blocked
//!   thread never holds up the tasks queued behind it.
//!
//! Lost wake-ups: the publisher stores the value before it takes the task list's lock, and
//! a task re-reads the value under that lock before it registers. Either the task
//! registers first (and the publisher, taking the lock after it, finds and wakes it) or it
//! reads the new value and does not wait. Every entry whose LSN a publish reaches is
//! removed by that publish, so a task that completes never leaves an entry behind.

use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::task::{Context, Poll, Waker};

use parking_lot::{Condvar, Mutex};

use super::Lsn;
use crate::stages::{self, Stage};

#[derive(Default)]
pub struct LsnWatch {
    value: AtomicU64,
    /// Blocking waiters: how many there are, and the condvar they sleep on.
    sleepers: AtomicUsize,
    lock: Mutex<()>,
    cv: Condvar,
    /// Waiting tasks, each with its own target.
    tasks: Mutex<TaskWaiters>,
}

#[derive(Default)]
struct TaskWaiters {
    next_id: u64,
    /// Unordered; at most one entry per waiting task (one per connection).
    waiting: Vec<TaskWaiter>,
}

struct TaskWaiter {
    id: u64,
    lsn: u64,
    waker: Waker,
}

impl TaskWaiters {
    fn remove(&mut self, id: u64) {
        if let Some(i) = self.waiting.iter().position(|w| w.id == id) {
            self.waiting.swap_remove(i);
        }
    }

    /// Take out every waiter whose target `value` reaches.
    fn release(&mut self, value: u64) -> Vec<Waker> {
        let mut woken = Vec::new();
        let mut i = 0;
        while i < self.waiting.len() {
            if self.waiting[i].lsn <= value {
                woken.push(self.waiting.swap_remove(i).waker);
            } else {
                i += 1;
            }
        }
        woken
    }
}

impl LsnWatch {
    pub fn new(lsn: Lsn) -> LsnWatch {
        LsnWatch {
            value: AtomicU64::new(lsn.0),
            ..Default::default()
        }
    }

    pub fn get(&self) -> Lsn {
        Lsn(self.value.load(Ordering::SeqCst))
    }

    /// Publish `lsn` (which must not be below the current value) and wake every waiter
    /// it reaches.
    pub fn publish(&self, lsn: Lsn) {
        let before = self.value.swap(lsn.0, Ordering::SeqCst);
        assert!(before <= lsn.0, "a published LSN must never move backwards");
        self.wake(lsn.0);
    }

    /// Set the value without the ordering check (startup, after recovery).
    pub fn reset(&self, lsn: Lsn) {
        self.value.store(lsn.0, Ordering::SeqCst);
        self.wake(lsn.0);
    }

    fn wake(&self, value: u64) {
        if self.sleepers.load(Ordering::SeqCst) > 0 {
            // Taking the lock orders the store before a sleeper's re-check.
            drop(self.lock.lock());
            self.cv.notify_all();
        }
        let woken = stages::lock(Stage::CommitWake, &self.tasks).release(value);
        for waker in woken {
            waker.wake();
        }
    }

    /// Block the calling thread until the value is at least `lsn`.
    pub fn wait(&self, lsn: Lsn) {
        if self.get() >= lsn {
            return;
        }
        blocking(|| {
            self.sleepers.fetch_add(1, Ordering::SeqCst);
            let mut g = self.lock.lock();
            while self.get() < lsn {
                self.cv.wait(&mut g);
            }
            drop(g);
            self.sleepers.fetch_sub(1, Ordering::AcqRel);
        })
    }

    /// Block until the value is at least `lsn` or `timeout` passes.
    pub fn wait_timeout(&self, lsn: Lsn, timeout: std::time::Duration) {
        if self.get() >= lsn {
            return;
        }
        let until = std::time::Instant::now() + timeout;
        self.sleepers.fetch_add(1, Ordering::SeqCst);
        let mut g = self.lock.lock();
        while self.get() < lsn {
            if self.cv.wait_until(&mut g, until).timed_out() {
                break;
            }
        }
        drop(g);
        self.sleepers.fetch_sub(1, Ordering::AcqRel);
    }

    /// Wait, as a task, until the value is at least `lsn`.
    pub fn wait_async(&self, lsn: Lsn) -> WaitLsn<'_> {
        WaitLsn {
            watch: self,
            lsn: lsn.0,
            id: None,
        }
    }
}

/// The future of [`LsnWatch::wait_async`]. Dropping it before it completes withdraws it.
pub struct WaitLsn<'a> {
    watch: &'a LsnWatch,
    lsn: u64,
    /// Its entry in the task list, once registered.
    id: Option<u64>,
}

impl Future for WaitLsn<'_> {
    type Output = ();

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        let this = &mut *self;
        let watch = this.watch;
        if watch.value.load(Ordering::SeqCst) >= this.lsn {
            // A registered entry is removed by the publish that reached it.
            this.id = None;
            return Poll::Ready(());
        }
        let mut tasks = stages::lock(Stage::CommitWake, &watch.tasks);
        if watch.value.load(Ordering::SeqCst) >= this.lsn {
            this.id = None;
            return Poll::Ready(());
        }
        let lsn = this.lsn;
        let registered = this
            .id
            .and_then(|id| tasks.waiting.iter_mut().find(|w| w.id == id));
        match registered {
            Some(entry) => entry.waker.clone_from(cx.waker()),
            None => {
                let id = tasks.next_id;
                tasks.next_id += 1;
                tasks.waiting.push(TaskWaiter {
                    id,
                    lsn,
                    waker: cx.waker().clone(),
                });
                this.id = Some(id);
            }
        }
        Poll::Pending
    }
}

impl Drop for WaitLsn<'_> {
    fn drop(&mut self) {
        if let Some(id) = self.id {
            if self.watch.value.load(Ordering::SeqCst) < self.lsn {
                stages::lock(Stage::CommitWake, &self.watch.tasks).remove(id);
            }
        }
    }
}

/// Run `f`, which may block the thread, without starving the async runtime: on a worker of
/// a multi-threaded runtime the worker's queued tasks are handed to another thread first
/// (`block_in_place`); anywhere else `f` just runs.
pub fn blocking<R>(f: impl FnOnce() -> R) -> R {
    use tokio::runtime::{Handle, RuntimeFlavor};
    match Handle::try_current() {
        Ok(h) if h.runtime_flavor() == RuntimeFlavor::MultiThread => tokio::task::block_in_place(f),
        _ => f(),
    }
}

/// Let the rest of a long computation on a runtime's worker run on this thread alone, with
/// the runtime's core (its queue of ready tasks and its I/O driver) handed to another
/// thread that goes on serving the runtime's other tasks. The current task keeps this
/// thread until it next yields; then the thread returns to the blocking pool.
///
/// `block_in_place` hands the core on and takes it back when its closure returns, unless
/// the other thread has taken it meanwhile; so the closure waits, at most
/// [`CORE_RELEASE_WAIT_US`](crate::constants::CORE_RELEASE_WAIT_US), until a probe task
/// queued on the runtime has run, which proves the other thread holds the core. Off a
/// runtime's worker (no runtime, a current-thread runtime, a thread whose core is already
/// handed on), it changes nothing and costs at most that wait.
///
/// Returns whether the core was seen taken (the probe ran).
pub fn release_core() -> bool {
    use std::sync::atomic::AtomicBool;
    use tokio::runtime::{Handle, RuntimeFlavor};
    let Ok(handle) = Handle::try_current() else {
        return false;
    };
    if handle.runtime_flavor() != RuntimeFlavor::MultiThread {
        return false;
    }
    let ran = std::sync::Arc::new(AtomicBool::new(false));
    let probe = ran.clone();
    tokio::task::block_in_place(move || {
        handle.spawn(async move { probe.store(true, Ordering::Release) });
        let deadline = std::time::Instant::now()
            + std::time::Duration::from_micros(crate::constants::CORE_RELEASE_WAIT_US);
        while !ran.load(Ordering::Acquire) && std::time::Instant::now() < deadline {
            std::thread::sleep(std::time::Duration::from_micros(20));
        }
        ran.load(Ordering::Acquire)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    #[test]
    fn threads_and_tasks_are_released_by_one_publish() {
        let watch = Arc::new(LsnWatch::new(Lsn(10)));
        watch.wait(Lsn(10));
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .build()
            .expect("runtime");
        let tasks: Vec<_> = (0..8)
            .map(|i| {
                let w = watch.clone();
                runtime.spawn(async move { w.wait_async(Lsn(11 + i)).await })
            })
            .collect();
        let w = watch.clone();
        let thread = std::thread::spawn(move || w.wait(Lsn(15)));
        std::thread::sleep(std::time::Duration::from_millis(20));
        assert!(tasks.iter().all(|t| !t.is_finished()));
        assert!(!thread.is_finished());
        watch.publish(Lsn(20));
        thread.join().expect("thread waiter");
        for t in tasks {
            runtime.block_on(t).expect("task waiter");
        }
        assert_eq!(watch.get(), Lsn(20));
    }

    struct CountWakes(std::sync::atomic::AtomicUsize);

    impl std::task::Wake for CountWakes {
        fn wake(self: Arc<Self>) {
            self.0.fetch_add(1, Ordering::SeqCst);
        }
    }

    #[test]
    fn a_publish_wakes_only_the_tasks_it_reaches() {
        let watch = LsnWatch::new(Lsn(10));
        let wakes = Arc::new(CountWakes(AtomicUsize::new(0)));
        let waker = Waker::from(wakes.clone());
        let mut cx = Context::from_waker(&waker);
        let mut near = Box::pin(watch.wait_async(Lsn(12)));
        let mut far = Box::pin(watch.wait_async(Lsn(20)));
        assert!(near.as_mut().poll(&mut cx).is_pending());
        assert!(far.as_mut().poll(&mut cx).is_pending());
        assert!(
            far.as_mut().poll(&mut cx).is_pending(),
            "a re-poll keeps one entry"
        );
        assert_eq!(watch.tasks.lock().waiting.len(), 2);
        watch.publish(Lsn(15));
        assert_eq!(
            wakes.0.load(Ordering::SeqCst),
            1,
            "only the task at 12 is woken"
        );
        assert!(near.as_mut().poll(&mut cx).is_ready());
        assert!(far.as_mut().poll(&mut cx).is_pending());
        drop(far);
        assert!(
            watch.tasks.lock().waiting.is_empty(),
            "a dropped waiter withdraws"
        );
        watch.publish(Lsn(25));
        assert_eq!(wakes.0.load(Ordering::SeqCst), 1);
    }

    #[test]
    #[should_panic(expected = "backwards")]
    fn publishing_backwards_is_a_bug() {
        let watch = LsnWatch::new(Lsn(10));
        watch.publish(Lsn(9));
    }
}
