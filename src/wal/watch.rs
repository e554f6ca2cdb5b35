//! [`LsnWatch`]: one published LSN that only grows, and a broadcast to everyone waiting for
//! it to pass their own LSN.
//!
//! This is the primitive behind `flushed_lsn` and `visible_lsn`. Publishing is one store
//! and one broadcast; a waiter compares its own target with the published value, so no one
//! walks a queue of waiters deciding whom to wake, and no waiter costs the publisher a
//! system call of its own. Two kinds of waiter share it:
//!
//! - **tasks** (client connections running on the async runtime) await
//!   [`LsnWatch::wait_async`]; a broadcast makes them runnable, which is a push onto a run
//!   queue, not a thread wake-up each;
//! - **threads** (recovery, tests, the rare blocking paths such as DDL) call
//!   [`LsnWatch::wait`]. On a runtime worker that goes through [`blocking`], so a blocked
//!   thread never holds up the tasks queued behind it.

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

use parking_lot::{Condvar, Mutex};
use tokio::sync::Notify;

use super::Lsn;

#[derive(Default)]
pub struct LsnWatch {
    value: AtomicU64,
    /// Blocking waiters: how many there are, and the condvar they sleep on.
    sleepers: AtomicUsize,
    lock: Mutex<()>,
    cv: Condvar,
    /// Async waiters.
    notify: Notify,
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

    /// Publish `lsn` (which must not be below the current value) and wake every waiter.
    pub fn publish(&self, lsn: Lsn) {
        let before = self.value.swap(lsn.0, Ordering::SeqCst);
        assert!(before <= lsn.0, "a published LSN must never move backwards");
        if self.sleepers.load(Ordering::SeqCst) > 0 {
            // Taking the lock orders this store before a sleeper's re-check.
            drop(self.lock.lock());
            self.cv.notify_all();
        }
        self.notify.notify_waiters();
    }

    /// Set the value without the ordering check (startup, after recovery).
    pub fn reset(&self, lsn: Lsn) {
        self.value.store(lsn.0, Ordering::Release);
        self.notify.notify_waiters();
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

    /// Wait, as a task, until the value is at least `lsn`.
    pub async fn wait_async(&self, lsn: Lsn) {
        loop {
            if self.get() >= lsn {
                return;
            }
            let notified = self.notify.notified();
            tokio::pin!(notified);
            // Registered before the re-check, so a publish in between is not missed.
            notified.as_mut().enable();
            if self.get() >= lsn {
                return;
            }
            notified.await;
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

    #[test]
    #[should_panic(expected = "backwards")]
    fn publishing_backwards_is_a_bug() {
        let watch = LsnWatch::new(Lsn(10));
        watch.publish(Lsn(9));
    }
}
