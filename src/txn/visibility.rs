//! Tracks which commits are finished and publishes `visible_lsn`, the highest LSN below
//! which every commit is visible. One publish releases every waiter it reaches, in one pass
//! over the waiting tasks, not one signal each (`wal/watch.rs`).
//!
//! A commit is ready to be visible when both of these hold:
//!
//! - **installed**: its writes are in storage (the committer says so when it is done);
//! - **durable at its level**: for a commit that waits for the log flush, `flushed_lsn` has
//!   passed it; a commit at `synchronous_commit = off` needs nothing more. At the remote
//!   levels (`remote_write`, `on`, `remote_apply`) the synchronous standbys' quorum
//!   position for that level has passed it too. The synchronous replication task publishes
//!   those positions here ([`VisibilityTracker::replicated`]); with no synchronous standby
//!   configured they are unbounded, and the remote levels are the local one.
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

use crate::repl::quorum::Replicated;
use crate::stages::{self, Stage};
use crate::wal::{Lsn, LsnWatch, SyncLevel};

/// A commit that has its place in the order but is not visible yet.
struct Pending {
    lsn: Lsn,
    installed: bool,
    /// What it waits for: `synchronous_commit` when it committed.
    level: SyncLevel,
}

impl Pending {
    fn ready(&self, flushed: Lsn, replicated: &Replicated) -> bool {
        let remote = match self.level {
            SyncLevel::Off | SyncLevel::Local => Lsn(u64::MAX),
            SyncLevel::RemoteWrite => replicated.write,
            SyncLevel::RemoteFlush => replicated.flush,
            SyncLevel::RemoteApply => replicated.apply,
        };
        self.installed
            && (!self.level.waits_for_flush() || self.lsn <= flushed)
            && self.lsn <= remote
    }
}

struct State {
    /// Commits in LSN order that are assigned but not yet visible.
    pending: VecDeque<Pending>,
    /// How far the synchronous standbys have the log.
    replicated: Replicated,
    /// The highest `flushed_lsn` the tracker was told of.
    flushed: Lsn,
}

pub struct VisibilityTracker {
    state: Mutex<State>,
    visible: LsnWatch,
    /// Whether synchronous standbys are configured (the published positions are not
    /// unbounded): a commit at a remote level then waits for them.
    standbys: std::sync::atomic::AtomicBool,
}

impl Default for VisibilityTracker {
    fn default() -> Self {
        VisibilityTracker {
            state: Mutex::new(State {
                pending: VecDeque::new(),
                replicated: Replicated::UNCONDITIONAL,
                flushed: Lsn::ZERO,
            }),
            visible: LsnWatch::default(),
            standbys: std::sync::atomic::AtomicBool::new(false),
        }
    }
}

impl VisibilityTracker {
    pub fn visible_lsn(&self) -> Lsn {
        self.visible.get()
    }

    /// Start tracking a commit. Must be called in LSN order (under the LSN allocator's
    /// lock). `level`: what it must wait for before it may become visible.
    pub fn register(&self, lsn: Lsn, level: SyncLevel) {
        let mut st = stages::lock(Stage::Visibility, &self.state);
        debug_assert!(st.pending.back().is_none_or(|last| last.lsn < lsn));
        st.pending.push_back(Pending {
            lsn,
            installed: false,
            level,
        });
    }

    /// Mark a registered commit installed, and advance `visible_lsn` over the ready
    /// prefix. `flushed` reads the log's current `flushed_lsn` (it is read under the lock).
    pub fn installed(&self, lsn: Lsn, flushed: impl Fn() -> Lsn) {
        let mut st = stages::lock(Stage::Visibility, &self.state);
        match st.pending.binary_search_by_key(&lsn, |p| p.lsn) {
            Ok(i) => st.pending[i].installed = true,
            Err(_) => panic!("commit {lsn} installed but never registered"),
        }
        let f = flushed();
        st.flushed = st.flushed.max(f);
        self.advance(&mut st);
    }

    /// The log is durable up to `flushed` (the flusher calls this after publishing it):
    /// advance `visible_lsn` over the commits that were waiting only for that.
    pub fn flushed(&self, flushed: Lsn) {
        let mut st = stages::lock(Stage::Visibility, &self.state);
        st.flushed = st.flushed.max(flushed);
        self.advance(&mut st);
    }

    /// The synchronous standbys have the log up to `replicated` (the synchronous
    /// replication task calls this after each quorum decision): advance `visible_lsn`
    /// over the commits that waited for that. The positions may move back only when
    /// `synchronous_standby_names` changes.
    pub fn replicated(&self, replicated: Replicated) {
        let mut st = stages::lock(Stage::Visibility, &self.state);
        st.replicated = replicated;
        self.standbys.store(
            replicated != Replicated::UNCONDITIONAL,
            std::sync::atomic::Ordering::Release,
        );
        self.advance(&mut st);
    }

    /// Whether commits at remote levels wait for synchronous standbys now.
    pub fn standbys_configured(&self) -> bool {
        self.standbys.load(std::sync::atomic::Ordering::Acquire)
    }

    /// How many commits wait for synchronous standbys (for the log, while they are
    /// missing).
    pub fn waiting_for_standbys(&self) -> usize {
        let st = stages::lock(Stage::Visibility, &self.state);
        st.pending
            .iter()
            .filter(|p| p.level >= SyncLevel::RemoteWrite)
            .count()
    }

    /// How far the synchronous standbys have the log, as last published.
    pub fn replicated_positions(&self) -> Replicated {
        stages::lock(Stage::Visibility, &self.state).replicated
    }

    fn advance(&self, st: &mut State) {
        let mut advanced = None;
        let (flushed, replicated) = (st.flushed, st.replicated);
        while let Some(front) = st.pending.front() {
            if !front.ready(flushed, &replicated) {
                break;
            }
            advanced = Some(front.lsn);
            st.pending.pop_front();
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

    /// A standby replayed the log up to `end`: its readers see everything below it.
    pub fn replayed(&self, end: Lsn) {
        if end > self.visible.get() {
            self.visible.publish(end);
        }
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
            v.register(Lsn(l), SyncLevel::Off);
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
        v.register(Lsn(10), SyncLevel::Local);
        v.register(Lsn(20), SyncLevel::Off);
        v.register(Lsn(30), SyncLevel::Local);
        v.register(Lsn(40), SyncLevel::Local);
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

    #[test]
    fn a_remote_level_waits_for_its_quorum_position() {
        let v = VisibilityTracker::default();
        v.replicated(Replicated::NONE);
        v.register(Lsn(10), SyncLevel::RemoteWrite);
        v.register(Lsn(20), SyncLevel::Local);
        v.register(Lsn(30), SyncLevel::RemoteApply);
        for l in [10, 20, 30] {
            v.installed(Lsn(l), || Lsn(30));
        }
        assert_eq!(
            v.visible_lsn(),
            Lsn(0),
            "flushed locally, written nowhere else"
        );
        v.replicated(Replicated {
            write: Lsn(10),
            flush: Lsn(5),
            apply: Lsn(0),
        });
        assert_eq!(v.visible_lsn(), Lsn(20), "written at 10; 20 is local");
        v.replicated(Replicated {
            write: Lsn(40),
            flush: Lsn(40),
            apply: Lsn(29),
        });
        assert_eq!(v.visible_lsn(), Lsn(20), "30 waits to be applied");
        // synchronous_standby_names emptied: every waiter is released.
        v.replicated(Replicated::UNCONDITIONAL);
        assert_eq!(v.visible_lsn(), Lsn(30));
    }
}
