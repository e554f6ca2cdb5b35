//! Tracks which commits are finished and publishes `visible_lsn`, the highest LSN below
//! which every commit is visible. One publish releases every waiter it reaches, in one pass
//! over the waiting tasks, not one signal each (`wal/watch.rs`).
//!
//! A commit is ready to be visible when both of these hold:
//!
//! - **installed**: its writes are in storage (the committer says so when it is done);
//! - **durable at its level**: for a commit that waits for the log flush, `flushed_lsn` has
//!   passed it; a commit at `synchronous_commit = off` needs nothing more.
//!
//! `visible_lsn` advances over the prefix of ready commits, in LSN order. Whichever event
//! completes a prefix advances it: a committer finishing its install, or the flusher after
//! it publishes `flushed_lsn`. So a whole flushed group becomes visible with one publish
//! from the flusher, and each of its committers is woken once, by that publish, instead of
//! once for the flush and again for each commit ahead of it that turned visible.
//!
//! Both events read the other's state under the one `pending` lock, and the flusher
//! publishes `flushed_lsn` before it takes that lock, so no commit is left ready but not
//! visible: whichever of the two takes the lock second sees both done.

use std::collections::VecDeque;

use parking_lot::Mutex;

use crate::stages::{self, Stage};
use crate::wal::{Lsn, LsnWatch};

/// A commit that has its place in the order but is not visible yet.
struct Pending {
    lsn: Lsn,
    installed: bool,
    /// It becomes visible only once `flushed_lsn` passes it.
    needs_flush: bool,
}

impl Pending {
    fn ready(&self, flushed: Lsn) -> bool {
        self.installed && (!self.needs_flush || self.lsn <= flushed)
    }
}

#[derive(Default)]
pub struct VisibilityTracker {
    /// Commits in LSN order that are assigned but not yet visible.
    pending: Mutex<VecDeque<Pending>>,
    visible: LsnWatch,
}

impl VisibilityTracker {
    pub fn visible_lsn(&self) -> Lsn {
        self.visible.get()
    }

    /// Start tracking a commit. Must be called in LSN order (under the LSN allocator's
    /// lock). `needs_flush`: it may become visible only once the log is flushed past it.
    pub fn register(&self, lsn: Lsn, needs_flush: bool) {
        let mut pending = stages::lock(Stage::Visibility, &self.pending);
        debug_assert!(pending.back().is_none_or(|last| last.lsn < lsn));
        pending.push_back(Pending {
            lsn,
            installed: false,
            needs_flush,
        });
    }

    /// Mark a registered commit installed, and advance `visible_lsn` over the ready
    /// prefix. `flushed` reads the log's current `flushed_lsn` (it is read under the lock).
    pub fn installed(&self, lsn: Lsn, flushed: impl Fn() -> Lsn) {
        let mut pending = stages::lock(Stage::Visibility, &self.pending);
        match pending.binary_search_by_key(&lsn, |p| p.lsn) {
            Ok(i) => pending[i].installed = true,
            Err(_) => panic!("commit {lsn} installed but never registered"),
        }
        self.advance(&mut pending, flushed());
    }

    /// The log is durable up to `flushed` (the flusher calls this after publishing it):
    /// advance `visible_lsn` over the commits that were waiting only for that.
    pub fn flushed(&self, flushed: Lsn) {
        let mut pending = stages::lock(Stage::Visibility, &self.pending);
        self.advance(&mut pending, flushed);
    }

    fn advance(&self, pending: &mut VecDeque<Pending>, flushed: Lsn) {
        let mut advanced = None;
        while let Some(front) = pending.front() {
            if !front.ready(flushed) {
                break;
            }
            advanced = Some(front.lsn);
            pending.pop_front();
        }
        if let Some(l) = advanced {
            // Published under the lock, so publications happen in order.
            self.visible.publish(l);
        }
    }

    /// Block until `visible_lsn >= lsn`.
    pub fn wait_visible(&self, lsn: Lsn) {
        self.visible.wait(lsn)
    }

    /// [`VisibilityTracker::wait_visible`] for a task.
    pub async fn wait_visible_async(&self, lsn: Lsn) {
        self.visible.wait_async(lsn).await
    }

    /// Set the starting point (after recovery).
    pub fn reset(&self, lsn: Lsn) {
        self.visible.reset(lsn);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn visible_lsn_advances_only_over_installed_prefix() {
        let v = VisibilityTracker::default();
        let unflushed = || Lsn(0);
        for l in 1..=3 {
            v.register(Lsn(l), false);
        }
        v.installed(Lsn(2), unflushed);
        assert_eq!(v.visible_lsn(), Lsn(0), "2 is installed but 1 is not");
        v.installed(Lsn(1), unflushed);
        assert_eq!(v.visible_lsn(), Lsn(2));
        v.installed(Lsn(3), unflushed);
        assert_eq!(v.visible_lsn(), Lsn(3));
        v.wait_visible(Lsn(3));
    }

    #[test]
    fn a_commit_that_needs_the_flush_waits_for_it_and_for_its_install() {
        let v = VisibilityTracker::default();
        v.register(Lsn(10), true);
        v.register(Lsn(20), false);
        v.register(Lsn(30), true);
        v.register(Lsn(40), true);
        // Installed before its flush: not visible, and it holds back the commit after it.
        v.installed(Lsn(10), || Lsn(5));
        v.installed(Lsn(20), || Lsn(5));
        assert_eq!(v.visible_lsn(), Lsn(0));
        // The flush passes 10: the flusher makes 10 and the unflushed 20 visible at once.
        v.flushed(Lsn(25));
        assert_eq!(v.visible_lsn(), Lsn(20));
        // Flushed before its install: the committer's install makes it visible.
        v.flushed(Lsn(40));
        assert_eq!(v.visible_lsn(), Lsn(20), "30 is durable but not installed");
        v.installed(Lsn(40), || Lsn(40));
        assert_eq!(v.visible_lsn(), Lsn(20), "40 is ready but 30 is not");
        v.installed(Lsn(30), || Lsn(40));
        assert_eq!(v.visible_lsn(), Lsn(40));
    }
}
