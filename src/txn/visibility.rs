//! Tracks which commits are installed and publishes `visible_lsn`, the highest LSN below
//! which every commit is installed. Waiters wait for it with one broadcast, never a queue walk.

use std::collections::VecDeque;

use parking_lot::Mutex;

use crate::wal::{Lsn, LsnWatch};

#[derive(Default)]
pub struct VisibilityTracker {
    /// Commits in LSN order that are assigned but not yet visible: (lsn, installed).
    pending: Mutex<VecDeque<(Lsn, bool)>>,
    visible: LsnWatch,
}

impl VisibilityTracker {
    pub fn visible_lsn(&self) -> Lsn {
        self.visible.get()
    }

    /// Start tracking a commit. Must be called in LSN order (under the LSN allocator's lock).
    pub fn register(&self, lsn: Lsn) {
        let mut pending = self.pending.lock();
        debug_assert!(pending.back().is_none_or(|(last, _)| *last < lsn));
        pending.push_back((lsn, false));
    }

    /// Mark a registered commit installed; advance `visible_lsn` over the installed prefix.
    pub fn installed(&self, lsn: Lsn) {
        let mut pending = self.pending.lock();
        match pending.iter_mut().find(|(l, _)| *l == lsn) {
            Some(entry) => entry.1 = true,
            None => panic!("commit {lsn} installed but never registered"),
        }
        let mut advanced = None;
        while let Some(&(l, true)) = pending.front() {
            pending.pop_front();
            advanced = Some(l);
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
        for l in 1..=3 {
            v.register(Lsn(l));
        }
        v.installed(Lsn(2));
        assert_eq!(v.visible_lsn(), Lsn(0), "2 is installed but 1 is not");
        v.installed(Lsn(1));
        assert_eq!(v.visible_lsn(), Lsn(2));
        v.installed(Lsn(3));
        assert_eq!(v.visible_lsn(), Lsn(3));
        v.wait_visible(Lsn(3));
    }
}
