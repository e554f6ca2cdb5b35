//! The replication protocol's decisions, as pure functions of what each side knows: no
//! I/O, no clock. The walsender, the walreceiver and the synchronous replication task are
//! shells that read sockets and files and call these; `sim_tests.rs` drives the same
//! functions through a seeded simulation of a primary and standbys with lost connections,
//! delays, crashes, restarts and failovers, and checks the safety properties.

use super::location::WalLocation;
use super::names::SyncStandbys;
use super::quorum::Replicated;
use crate::wal::Lsn;

/// What the primary keeps of one standby's reports. A report never moves a position
/// back: one that would is stale (sent before a reconnect and delivered after it).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Reported {
    pub write: WalLocation,
    pub flush: WalLocation,
    pub apply: WalLocation,
}

impl Reported {
    pub fn merge(&mut self, write: WalLocation, flush: WalLocation, apply: WalLocation) {
        self.write = self.write.max(write);
        self.flush = self.flush.max(flush);
        self.apply = self.apply.max(apply);
    }
}

/// Whether a standby's report could raise a published quorum position: only if one of
/// its positions is above the published one (a minimum or an n-th highest of the reports
/// grows only when some report passes it). `lsn` converts a WAL location.
pub fn may_raise(r: &Reported, published: &Replicated, lsn: impl Fn(WalLocation) -> Lsn) -> bool {
    lsn(r.write) > published.write
        || lsn(r.flush) > published.flush
        || lsn(r.apply) > published.apply
}

/// What the synchronous replication task publishes after a decision, given what it
/// published last (`last`, for `last_config`): `None` when nothing changed.
///
/// Within one configuration the positions only move forward. A new configuration starts
/// from its own decision (it may be lower: other standbys), or from nothing if too few of
/// its standbys stream. Without a configuration every remote level is met at once.
pub fn next_published(
    last_config: &Option<SyncStandbys>,
    last: Replicated,
    config: &Option<SyncStandbys>,
    decision: Option<Replicated>,
) -> Option<Replicated> {
    let config_changed = last_config != config;
    let next = match decision {
        Some(r) if config_changed => r,
        Some(r) => Replicated {
            write: r.write.max(last.write),
            flush: r.flush.max(last.flush),
            apply: r.apply.max(last.apply),
        },
        None if config_changed || last == Replicated::UNCONDITIONAL => Replicated::NONE,
        None => last,
    };
    (next != last || config_changed).then_some(next)
}

/// A chunk of log `[at, at + len)` arriving at a standby whose log ends at `received`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Chunk {
    /// Write the chunk's bytes from `skip` on at `received`; the log then ends at `end`.
    Write { skip: u64, end: Lsn },
    /// The standby has all of it already.
    Known,
    /// It starts past the standby's end: a gap the standby cannot fill.
    Gap,
}

pub fn accept_chunk(received: Lsn, at: Lsn, len: u64) -> Chunk {
    let end = Lsn(at.0 + len);
    if at > received {
        Chunk::Gap
    } else if end <= received {
        Chunk::Known
    } else {
        Chunk::Write {
            skip: received.0 - at.0,
            end,
        }
    }
}

/// A standby asks the primary (on timeline `current`, whose history says where earlier
/// timelines ended) to stream timeline `requested` from `start`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StreamVerdict {
    Stream,
    /// A newer timeline exists: this server is no longer the primary.
    Fence(u32),
    /// The requested timeline ended before `start`, or is unknown here.
    NotInHistory(Option<WalLocation>),
}

pub fn stream_request(
    current: u32,
    history: &[(u32, WalLocation)],
    requested: u32,
    start: WalLocation,
) -> StreamVerdict {
    if requested > current {
        return StreamVerdict::Fence(requested);
    }
    if requested == current {
        return StreamVerdict::Stream;
    }
    match shared_end(history, requested) {
        Some(end) if start <= end => StreamVerdict::Stream,
        Some(end) => StreamVerdict::NotInHistory(Some(end)),
        None => StreamVerdict::NotInHistory(None),
    }
}

/// How much of timeline `tli`'s log the newest timeline of `history` shares: up to where
/// `tli` ended, or less if a later timeline of the lineage forked earlier still (a standby
/// promoted while it lagged forks below its own timeline's end). `None` if `tli` is not in
/// the history.
pub fn shared_end(history: &[(u32, WalLocation)], tli: u32) -> Option<WalLocation> {
    let at = history.iter().position(|(t, _)| *t == tli)?;
    history[at..].iter().map(|&(_, l)| l).min()
}

/// A standby on timeline `mine`, whose log ends at `end`, finds its primary on a newer
/// timeline with `history`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FollowVerdict {
    /// Its log is a prefix of the new timeline's: adopt it.
    Follow,
    /// Its log passes the fork point: it holds changes the new primary does not.
    Diverged(WalLocation),
    /// The new timeline does not descend from ours.
    Unrelated,
}

pub fn follow(mine: u32, end: WalLocation, history: &[(u32, WalLocation)]) -> FollowVerdict {
    match shared_end(history, mine) {
        Some(fork) if end <= fork => FollowVerdict::Follow,
        Some(fork) => FollowVerdict::Diverged(fork),
        None => FollowVerdict::Unrelated,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_report_past_a_published_position_wakes_the_quorum_task() {
        let published = Replicated {
            write: Lsn(30),
            flush: Lsn(20),
            apply: Lsn(10),
        };
        let r = |w, f, a| Reported {
            write: WalLocation(w),
            flush: WalLocation(f),
            apply: WalLocation(a),
        };
        let id = |l: WalLocation| Lsn(l.0);
        assert!(!may_raise(&r(30, 20, 10), &published, id));
        assert!(may_raise(&r(30, 21, 10), &published, id));
        assert!(!may_raise(&r(1, 1, 1), &Replicated::UNCONDITIONAL, id));
    }

    #[test]
    fn chunks_overlap_and_gaps() {
        assert_eq!(
            accept_chunk(Lsn(10), Lsn(5), 10),
            Chunk::Write {
                skip: 5,
                end: Lsn(15)
            }
        );
        assert_eq!(accept_chunk(Lsn(10), Lsn(5), 5), Chunk::Known);
        assert_eq!(accept_chunk(Lsn(10), Lsn(11), 5), Chunk::Gap);
    }

    #[test]
    fn timelines() {
        let h = [(1, WalLocation(100)), (2, WalLocation(200))];
        assert_eq!(
            stream_request(3, &h, 4, WalLocation(0)),
            StreamVerdict::Fence(4)
        );
        assert_eq!(
            stream_request(3, &h, 2, WalLocation(150)),
            StreamVerdict::Stream
        );
        assert_eq!(
            stream_request(3, &h, 1, WalLocation(150)),
            StreamVerdict::NotInHistory(Some(WalLocation(100)))
        );
        assert_eq!(follow(1, WalLocation(100), &h), FollowVerdict::Follow);
        assert_eq!(
            follow(2, WalLocation(201), &h),
            FollowVerdict::Diverged(WalLocation(200))
        );
        assert_eq!(follow(5, WalLocation(1), &h), FollowVerdict::Unrelated);
        // Timeline 3 forked from 2 below where 2 forked from 1: timeline 1's log is shared
        // only up to the lower point. (Found by the simulation, seed 24395.)
        let lagging = [(1, WalLocation(215)), (2, WalLocation(65))];
        assert_eq!(
            follow(1, WalLocation(215), &lagging),
            FollowVerdict::Diverged(WalLocation(65))
        );
        assert_eq!(follow(1, WalLocation(60), &lagging), FollowVerdict::Follow);
        assert_eq!(
            stream_request(3, &lagging, 1, WalLocation(100)),
            StreamVerdict::NotInHistory(Some(WalLocation(65)))
        );
    }
}
