//! The quorum: from the standbys' latest reports and `synchronous_standby_names`, how far
//! the log is written, flushed and applied on enough synchronous standbys, and which
//! standby is in which synchronous state. A pure function, O(standbys); the synchronous
//! replication task calls it after reports arrive and publishes the result once for every
//! waiting commit (`txn::visibility`).

use super::names::{Method, SyncStandbys};
use crate::wal::Lsn;

/// What one standby last reported, as the quorum reads it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StandbyPositions {
    pub application_name: String,
    /// It has caught up and streams: only then may it count as synchronous.
    pub streaming: bool,
    pub write: Lsn,
    pub flush: Lsn,
    pub apply: Lsn,
}

/// How far the log has reached on the synchronous standbys.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Replicated {
    pub write: Lsn,
    pub flush: Lsn,
    pub apply: Lsn,
}

impl Replicated {
    /// With no synchronous standby configured, every remote level is met at once.
    pub const UNCONDITIONAL: Replicated = Replicated {
        write: Lsn(u64::MAX),
        flush: Lsn(u64::MAX),
        apply: Lsn(u64::MAX),
    };
    pub const NONE: Replicated = Replicated {
        write: Lsn::ZERO,
        flush: Lsn::ZERO,
        apply: Lsn::ZERO,
    };
}

/// A standby's `sync_state` in `pg_stat_replication`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SyncState {
    Async,
    Potential,
    Sync,
    Quorum,
}

impl SyncState {
    pub fn name(self) -> &'static str {
        match self {
            SyncState::Async => "async",
            SyncState::Potential => "potential",
            SyncState::Sync => "sync",
            SyncState::Quorum => "quorum",
        }
    }
}

/// The quorum's verdict.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Decision {
    /// How far enough synchronous standbys have the log; `None` while fewer of them
    /// stream than a commit waits for (the positions then stay where they were).
    pub replicated: Option<Replicated>,
    /// Per standby, in the order given: its priority and its state.
    pub states: Vec<(u32, SyncState)>,
}

/// Decide, for `config` (`None`: no synchronous standby), from the standbys' reports.
pub fn decide(config: Option<&SyncStandbys>, standbys: &[StandbyPositions]) -> Decision {
    let Some(config) = config else {
        return Decision {
            replicated: Some(Replicated::UNCONDITIONAL),
            states: vec![(0, SyncState::Async); standbys.len()],
        };
    };
    let priorities: Vec<u32> = standbys
        .iter()
        .map(|s| config.priority(&s.application_name))
        .collect();
    let mut states: Vec<(u32, SyncState)> = priorities
        .iter()
        .map(|&p| {
            (
                p,
                if p == 0 {
                    SyncState::Async
                } else {
                    SyncState::Potential
                },
            )
        })
        .collect();
    // Candidates: streaming standbys the list names, by priority, then connection order.
    let mut candidates: Vec<usize> = (0..standbys.len())
        .filter(|&i| priorities[i] > 0 && standbys[i].streaming)
        .collect();
    candidates.sort_by_key(|&i| (priorities[i], i));
    let n = config.num_sync;
    let replicated = match config.method {
        Method::Priority => {
            candidates.truncate(n);
            for &i in &candidates {
                states[i].1 = SyncState::Sync;
            }
            (candidates.len() == n).then(|| {
                let min = |f: fn(&StandbyPositions) -> Lsn| {
                    candidates
                        .iter()
                        .map(|&i| f(&standbys[i]))
                        .min()
                        .unwrap_or(Lsn::ZERO)
                };
                Replicated {
                    write: min(|s| s.write),
                    flush: min(|s| s.flush),
                    apply: min(|s| s.apply),
                }
            })
        }
        Method::Quorum => {
            for &i in &candidates {
                states[i].1 = SyncState::Quorum;
            }
            (candidates.len() >= n).then(|| {
                let nth = |f: fn(&StandbyPositions) -> Lsn| {
                    let mut v: Vec<Lsn> = candidates.iter().map(|&i| f(&standbys[i])).collect();
                    // The n-th highest: the position n of them have reached.
                    let (_, nth, _) = v.select_nth_unstable_by(n - 1, |a, b| b.cmp(a));
                    *nth
                };
                Replicated {
                    write: nth(|s| s.write),
                    flush: nth(|s| s.flush),
                    apply: nth(|s| s.apply),
                }
            })
        }
    };
    Decision { replicated, states }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::repl::names::parse;

    fn s(name: &str, streaming: bool, w: u64, f: u64, a: u64) -> StandbyPositions {
        StandbyPositions {
            application_name: name.into(),
            streaming,
            write: Lsn(w),
            flush: Lsn(f),
            apply: Lsn(a),
        }
    }

    #[test]
    fn no_config_means_every_level_is_met() {
        let d = decide(None, &[s("a", true, 1, 1, 1)]);
        assert_eq!(d.replicated, Some(Replicated::UNCONDITIONAL));
        assert_eq!(d.states, [(0, SyncState::Async)]);
    }

    #[test]
    fn first_takes_the_highest_priorities_that_stream() {
        let cfg = parse("FIRST 1 (a, b, c)").unwrap().unwrap();
        let standbys = [
            s("c", true, 50, 50, 50),
            s("a", false, 90, 90, 90),
            s("b", true, 30, 20, 10),
            s("x", true, 99, 99, 99),
        ];
        let d = decide(Some(&cfg), &standbys);
        // a does not stream yet: b, the next by priority, is the synchronous one.
        assert_eq!(d.replicated.unwrap().flush, Lsn(20));
        let st: Vec<_> = d.states.iter().map(|x| x.1).collect();
        use SyncState::*;
        assert_eq!(st, [Potential, Potential, Sync, Async]);
        assert_eq!(d.states[0].0, 3);
        // Two needed, two streaming: the lower of b and c.
        let two = parse("FIRST 2 (a, b, c)").unwrap().unwrap();
        let d = decide(Some(&two), &standbys);
        assert_eq!(d.replicated.unwrap().write, Lsn(30));
        // Three needed: not enough.
        let three = parse("FIRST 3 (a, b, c)").unwrap().unwrap();
        assert_eq!(decide(Some(&three), &standbys).replicated, None);
    }

    #[test]
    fn any_takes_the_nth_highest() {
        let cfg = parse("ANY 2 (a, b, c)").unwrap().unwrap();
        let standbys = [
            s("a", true, 10, 10, 10),
            s("b", true, 30, 25, 5),
            s("c", true, 20, 20, 20),
        ];
        let d = decide(Some(&cfg), &standbys);
        let r = d.replicated.unwrap();
        assert_eq!((r.write, r.flush, r.apply), (Lsn(20), Lsn(20), Lsn(10)));
        assert!(d.states.iter().all(|x| x == &(1, SyncState::Quorum)));
        let one_streams = [s("a", true, 10, 10, 10), s("b", false, 30, 25, 5)];
        assert_eq!(decide(Some(&cfg), &one_streams).replicated, None);
    }

    #[test]
    fn star_matches_every_name() {
        let cfg = parse("*").unwrap().unwrap();
        let d = decide(Some(&cfg), &[s("q", true, 7, 7, 7), s("r", true, 9, 9, 9)]);
        assert_eq!(d.replicated.unwrap().flush, Lsn(7));
        assert_eq!(d.states[1], (1, SyncState::Potential));
    }
}
