//! A seeded, deterministic simulation of a primary and two standbys, driving the
//! protocol's real decisions (`machine`, `quorum::decide`, the visibility tracker) through
//! lost connections, delays, stale reports from old connections, crashes, restarts and
//! failovers. Each seed is one history; a failing seed replays exactly
//! (`STEADYDB_SIM_SEED=n cargo test --lib repl::sim_tests`).
//!
//! The model: the log is a sequence of commits, one LSN each; a node's log is the list of
//! commit ids it holds, and how far it is written, durable (flushed) and applied. Messages
//! travel on connections in order, after a random delay; a dropped connection loses what
//! is in flight, and the primary may go on reading the old connection's reports for a
//! while (they reach only that connection's record). Safety, checked at every step:
//!
//! 1. **No commit is visible before its level is met**: whenever the primary's
//!    `visible_lsn` passes a commit at a remote level, enough standbys (by the
//!    configuration) truly hold that very commit (the same id at that LSN) written,
//!    flushed or applied.
//! 2. **No acknowledged commit is lost**: at a failover the standby promoted (the one with
//!    the most durable log, as an operator or a consensus layer would choose) holds every
//!    commit acknowledged at `on` or `remote_apply`.
//! 3. **One primary per timeline**: no two nodes ever accept writes on the same timeline,
//!    and a fenced node accepts none.

use std::collections::VecDeque;

use super::location::WalLocation;
use super::machine::{self, Chunk, FollowVerdict, Reported, StreamVerdict};
use super::names::{self, SyncStandbys};
use super::quorum::{self, Replicated, StandbyPositions};
use crate::txn::VisibilityTracker;
use crate::wal::{Lsn, SyncLevel};

/// splitmix64: small, fast and the same everywhere.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
    fn chance(&mut self, percent: u64) -> bool {
        self.below(100) < percent
    }
}

const NODES: usize = 3;

#[derive(Clone, Debug)]
struct Node {
    name: String,
    up: bool,
    timeline: u32,
    history: Vec<(u32, WalLocation)>,
    fenced: bool,
    /// Commit ids by LSN - 1.
    log: Vec<u64>,
    /// Written (received), durable and applied ends, as LSNs (= lengths of `log`).
    written: u64,
    flushed: u64,
    applied: u64,
    /// Which node it streams from, on a standby.
    primary: usize,
    /// The commits it acknowledged as a primary, with their levels.
    acked: Vec<(u64, SyncLevel)>,
}

enum Msg {
    /// Log from `start` (the commit ids that follow it).
    Data {
        start: u64,
        ids: Vec<u64>,
    },
    Status(Reported),
}

struct Conn {
    id: u64,
    standby: usize,
    primary: usize,
    /// Open; a closed one still delivers what the primary had read (`to_primary`).
    open: bool,
    to_standby: VecDeque<(u64, Msg)>,
    to_primary: VecDeque<(u64, Msg)>,
    /// What the primary has sent on it, and what it has read of its reports.
    sent: u64,
    reported: Reported,
    streaming: bool,
}

struct World {
    rng: Rng,
    now: u64,
    nodes: Vec<Node>,
    primary: usize,
    conns: Vec<Conn>,
    next_conn: u64,
    next_commit: u64,
    config: Option<SyncStandbys>,
    /// The primary's commit order and visibility, with its commits' levels.
    tracker: VisibilityTracker,
    levels: Vec<SyncLevel>,
    published: (Option<SyncStandbys>, Replicated),
    visible: u64,
    /// Which node accepted writes on which timeline.
    writers: Vec<(u32, usize)>,
    failovers: u64,
}

fn loc(lsn: u64) -> WalLocation {
    WalLocation(lsn)
}

impl World {
    fn new(seed: u64) -> World {
        let mut rng = Rng(seed);
        let config = match rng.below(3) {
            0 => "FIRST 1 (n0, n1, n2)",
            1 => "ANY 1 (n0, n1, n2)",
            _ => "ANY 2 (n0, n1, n2)",
        };
        let nodes = (0..NODES)
            .map(|i| Node {
                name: format!("n{i}"),
                up: true,
                timeline: 1,
                history: Vec::new(),
                fenced: false,
                log: Vec::new(),
                written: 0,
                flushed: 0,
                applied: 0,
                primary: 0,
                acked: Vec::new(),
            })
            .collect();
        let tracker = VisibilityTracker::default();
        tracker.replicated(Replicated::NONE);
        World {
            rng,
            now: 0,
            nodes,
            primary: 0,
            conns: Vec::new(),
            next_conn: 1,
            next_commit: 1,
            config: names::parse(config).ok().flatten(),
            tracker,
            levels: Vec::new(),
            published: (None, Replicated::UNCONDITIONAL),
            visible: 0,
            writers: vec![(1, 0)],
            failovers: 0,
        }
    }

    fn delay(&mut self) -> u64 {
        self.now + 1 + self.rng.below(5)
    }

    /// A client commits on the primary at a random level.
    fn commit(&mut self) {
        let p = self.primary;
        if !self.nodes[p].up || self.nodes[p].fenced {
            return;
        }
        let level = [
            SyncLevel::Off,
            SyncLevel::Local,
            SyncLevel::RemoteWrite,
            SyncLevel::RemoteFlush,
            SyncLevel::RemoteApply,
        ][self.rng.below(5) as usize];
        let id = self.next_commit;
        self.next_commit += 1;
        let node = &mut self.nodes[p];
        node.log.push(id);
        node.written = node.log.len() as u64;
        let lsn = Lsn(node.log.len() as u64);
        self.levels.push(level);
        self.tracker.register(lsn, level);
        let flushed = Lsn(node.flushed);
        self.tracker.installed(lsn, || flushed);
        let tli = node.timeline;
        if !self.writers.contains(&(tli, p)) {
            self.writers.push((tli, p));
        }
    }

    fn flush_primary(&mut self) {
        let p = self.primary;
        let node = &mut self.nodes[p];
        if !node.up {
            return;
        }
        node.flushed = node.written;
        node.applied = node.written;
        self.tracker.flushed(Lsn(node.flushed));
    }

    /// The primary's walsenders send what is flushed.
    fn send(&mut self) {
        let p = self.primary;
        if !self.nodes[p].up {
            return;
        }
        let flushed = self.nodes[p].flushed;
        for i in 0..self.conns.len() {
            let c = &self.conns[i];
            if !c.open || c.primary != p || c.sent >= flushed {
                continue;
            }
            let start = c.sent;
            let end = (start + 1 + self.rng.below(4)).min(flushed);
            let ids = self.nodes[p].log[start as usize..end as usize].to_vec();
            let at = self.delay();
            let c = &mut self.conns[i];
            c.to_standby.push_back((at, Msg::Data { start, ids }));
            c.sent = end;
            c.streaming |= end == flushed;
        }
    }

    fn report(&mut self, standby: usize, conn: usize) {
        let n = &self.nodes[standby];
        let r = Reported {
            write: loc(n.written),
            flush: loc(n.flushed),
            apply: loc(n.applied),
        };
        let at = self.delay();
        self.conns[conn].to_primary.push_back((at, Msg::Status(r)));
    }

    /// Deliver due messages, in order per connection.
    fn deliver(&mut self) {
        for i in 0..self.conns.len() {
            while self.conns[i]
                .to_standby
                .front()
                .is_some_and(|m| m.0 <= self.now)
            {
                let Some((_, msg)) = self.conns[i].to_standby.pop_front() else {
                    break;
                };
                let s = self.conns[i].standby;
                if !self.conns[i].open || !self.nodes[s].up {
                    continue;
                }
                if let Msg::Data { start, ids } = msg {
                    let node = &mut self.nodes[s];
                    match machine::accept_chunk(Lsn(node.written), Lsn(start), ids.len() as u64) {
                        Chunk::Write { skip, end } => {
                            node.log.truncate(node.written as usize);
                            node.log.extend_from_slice(&ids[skip as usize..]);
                            node.written = end.0;
                        }
                        Chunk::Known => {}
                        Chunk::Gap => panic!("a gap in the stream"),
                    }
                    self.report(s, i);
                }
            }
            while self.conns[i]
                .to_primary
                .front()
                .is_some_and(|m| m.0 <= self.now)
            {
                let Some((_, msg)) = self.conns[i].to_primary.pop_front() else {
                    break;
                };
                if let Msg::Status(r) = msg {
                    if self.nodes[self.conns[i].primary].up {
                        self.conns[i].reported.merge(r.write, r.flush, r.apply);
                    }
                }
            }
        }
        self.conns.retain(|c| c.open || !c.to_primary.is_empty());
        self.syncrep();
    }

    /// A standby syncs what it wrote, or replays what is durable.
    fn standby_work(&mut self, s: usize) {
        let node = &mut self.nodes[s];
        if !node.up || s == self.primary {
            return;
        }
        if self.rng.chance(50) {
            node.flushed = node.written;
        } else {
            node.applied = node.flushed;
        }
        if let Some(i) = self.conns.iter().position(|c| c.open && c.standby == s) {
            self.report(s, i);
        }
    }

    /// The synchronous replication task: decide from the open connections' reports.
    fn syncrep(&mut self) {
        let p = self.primary;
        let positions: Vec<StandbyPositions> = self
            .conns
            .iter()
            .filter(|c| c.primary == p)
            .map(|c| StandbyPositions {
                application_name: self.nodes[c.standby].name.clone(),
                streaming: c.streaming,
                write: Lsn(c.reported.write.0),
                flush: Lsn(c.reported.flush.0),
                apply: Lsn(c.reported.apply.0),
            })
            .collect();
        let decision = quorum::decide(self.config.as_ref(), &positions);
        if let Some(next) = machine::next_published(
            &self.published.0,
            self.published.1,
            &self.config,
            decision.replicated,
        ) {
            self.published = (self.config.clone(), next);
            self.tracker.replicated(next);
        }
        self.check_visible();
    }

    /// Safety 1: what became visible was durable at its level.
    fn check_visible(&mut self) {
        let p = self.primary;
        let now_visible = self.tracker.visible_lsn().0;
        while self.visible < now_visible {
            self.visible += 1;
            let lsn = self.visible;
            let level = self.levels[lsn as usize - 1];
            let id = self.nodes[p].log[lsn as usize - 1];
            if level != SyncLevel::Off {
                assert!(
                    self.nodes[p].flushed >= lsn,
                    "commit {lsn} visible before its local flush"
                );
            }
            // remote_write is not checked against the standbys' state now: what a standby
            // wrote but did not sync may be gone after its crash, which that level allows.
            if level >= SyncLevel::RemoteFlush {
                let holds = |n: &Node| {
                    let upto = match level {
                        SyncLevel::RemoteFlush => n.flushed,
                        _ => n.applied,
                    };
                    upto >= lsn && n.log.get(lsn as usize - 1) == Some(&id)
                };
                let config = self.config.as_ref().expect("a configuration");
                let holding = self
                    .nodes
                    .iter()
                    .enumerate()
                    .filter(|&(i, n)| i != p && config.priority(&n.name) > 0 && holds(n))
                    .count();
                assert!(
                    holding >= config.num_sync,
                    "commit {lsn} at {level:?} visible while {holding} standby(s) hold it"
                );
            }
            self.nodes[p].acked.push((id, level));
        }
    }

    /// A standby (re)connects to the node it follows.
    fn connect(&mut self, s: usize) {
        let target = self.nodes[s].primary;
        if !self.nodes[s].up || !self.nodes[target].up || s == self.primary {
            return;
        }
        if self.conns.iter().any(|c| c.open && c.standby == s) {
            return;
        }
        // It adopts a newer timeline if its log is a prefix of it.
        let (mine, end) = (self.nodes[s].timeline, self.nodes[s].flushed);
        if self.nodes[target].timeline > mine {
            let history = self.nodes[target].history.clone();
            match machine::follow(mine, loc(end), &history) {
                FollowVerdict::Follow => {
                    if std::env::var("STEADYDB_SIM_TRACE").is_ok() {
                        eprintln!(
                            "t={} node {s} follows {target} to tli {} (end {end})",
                            self.now, self.nodes[target].timeline
                        );
                    }
                    let t = &self.nodes[target];
                    let (tli, h) = (t.timeline, t.history.clone());
                    let n = &mut self.nodes[s];
                    n.timeline = tli;
                    n.history = h;
                }
                FollowVerdict::Diverged(_) | FollowVerdict::Unrelated => {
                    if std::env::var("STEADYDB_SIM_TRACE").is_ok() {
                        eprintln!("t={} node {s} rebuilt from {target}", self.now);
                    }
                    // Made again from the primary (a base backup).
                    let t = self.nodes[target].clone();
                    let n = &mut self.nodes[s];
                    n.log = t.log[..t.flushed as usize].to_vec();
                    n.written = t.flushed;
                    n.flushed = t.flushed;
                    n.applied = t.flushed;
                    n.timeline = t.timeline;
                    n.history = t.history;
                }
            }
        }
        let n = &self.nodes[s];
        // Unflushed bytes past its durable end are streamed again.
        let start = n.flushed;
        let t = &self.nodes[target];
        match machine::stream_request(t.timeline, &t.history, n.timeline, loc(start)) {
            StreamVerdict::Stream => {}
            StreamVerdict::Fence(_) => {
                self.nodes[target].fenced = true;
                return;
            }
            StreamVerdict::NotInHistory(_) => return,
        }
        if start > t.flushed {
            return; // ahead of the primary's flush: wait for it
        }
        let n = &mut self.nodes[s];
        n.written = n.flushed;
        n.log.truncate(n.flushed as usize);
        let id = self.next_conn;
        self.next_conn += 1;
        self.conns.push(Conn {
            id,
            standby: s,
            primary: target,
            open: true,
            to_standby: VecDeque::new(),
            to_primary: VecDeque::new(),
            sent: start,
            reported: Reported::default(),
            streaming: false,
        });
    }

    fn drop_connection(&mut self) {
        let open: Vec<usize> = (0..self.conns.len())
            .filter(|&i| self.conns[i].open)
            .collect();
        if open.is_empty() {
            return;
        }
        let i = open[self.rng.below(open.len() as u64) as usize];
        let c = &mut self.conns[i];
        c.open = false;
        c.to_standby.clear();
        // Reports in flight may still reach the primary, for this connection only.
        c.streaming = false;
        let _ = c.id;
    }

    fn crash_standby(&mut self) {
        let s = (self.primary + 1 + self.rng.below(NODES as u64 - 1) as usize) % NODES;
        let n = &mut self.nodes[s];
        if !n.up {
            n.up = true;
            return;
        }
        n.up = false;
        n.written = n.flushed;
        n.log.truncate(n.flushed as usize);
        n.applied = n.applied.min(n.flushed);
        for c in self.conns.iter_mut().filter(|c| c.standby == s) {
            c.open = false;
            c.to_standby.clear();
        }
    }

    /// The primary dies. Promoted: a standby on the primary's own timeline (one that
    /// followed it), the one with the most durable log, as an operator or a consensus
    /// layer chooses; a standby still on an older timeline is never promoted, so a new
    /// timeline number is always new. Without such a standby the primary restarts.
    fn failover(&mut self) {
        let old = self.primary;
        let tli = self.nodes[old].timeline;
        let candidates: Vec<usize> = (0..NODES)
            .filter(|&i| i != old && self.nodes[i].timeline == tli)
            .collect();
        let Some(&new) = candidates
            .iter()
            .max_by_key(|&&i| (self.nodes[i].flushed, i))
        else {
            self.restart_primary();
            return;
        };
        {
            let o = &mut self.nodes[old];
            o.up = false;
            o.written = o.flushed;
            o.log.truncate(o.flushed as usize);
        }
        for c in self.conns.iter_mut() {
            c.open = false;
            c.to_standby.clear();
            c.to_primary.clear();
        }
        self.conns.clear();
        // Safety 2: every commit acknowledged at on or remote_apply is on the new primary.
        let promoted = &self.nodes[new];
        for &(id, level) in &self.nodes[old].acked {
            if level >= SyncLevel::RemoteFlush {
                if !promoted.log[..promoted.flushed as usize].contains(&id) {
                    for (i, n) in self.nodes.iter().enumerate() {
                        eprintln!(
                            "node {i} up={} tli={} written={} flushed={} applied={} pos_of_id={:?} primary={}",
                            n.up, n.timeline, n.written, n.flushed, n.applied,
                            n.log.iter().position(|&x| x == id), n.primary
                        );
                    }
                    eprintln!(
                        "old={old} new={new} config={:?} published={:?}",
                        self.config, self.published
                    );
                }
                assert!(
                    promoted.log[..promoted.flushed as usize].contains(&id),
                    "acknowledged commit {id} ({level:?}) lost at failover"
                );
            }
        }
        // Promotion: the log ends at what is durable; a new timeline forks there.
        let n = &mut self.nodes[new];
        n.up = true;
        n.log.truncate(n.flushed as usize);
        n.written = n.flushed;
        n.applied = n.flushed;
        let fork = loc(n.flushed);
        n.history.push((n.timeline, fork));
        n.timeline += 1;
        let tli = n.timeline;
        assert!(
            !self.writers.iter().any(|&(t, w)| t == tli && w != new),
            "timeline {tli} already had a primary"
        );
        self.writers.push((tli, new));
        if std::env::var("STEADYDB_SIM_TRACE").is_ok() {
            eprintln!(
                "t={} failover {old} -> {new} tli {tli} fork {:?}; flushed: {:?}",
                self.now,
                fork,
                self.nodes
                    .iter()
                    .map(|n| (n.timeline, n.flushed, n.up))
                    .collect::<Vec<_>>()
            );
        }
        self.primary = new;
        for (i, node) in self.nodes.iter_mut().enumerate() {
            if i != new {
                node.primary = new;
            }
            node.acked.clear();
        }
        // The new primary's commit order continues from its log; everything in it counts
        // as visible, as after crash recovery.
        self.tracker = VisibilityTracker::default();
        self.tracker.reset(Lsn(self.nodes[new].flushed));
        self.tracker.replicated(Replicated::NONE);
        self.levels.truncate(self.nodes[new].flushed as usize);
        self.visible = self.nodes[new].flushed;
        self.published = (None, Replicated::UNCONDITIONAL);
        self.failovers += 1;
        // Sometimes the old primary comes back, still thinking it is the primary, and is
        // reached by a standby of the newer timeline: it must fence itself.
        if self.rng.chance(50) {
            let o = &mut self.nodes[old];
            o.up = true;
            let (t, h) = (o.timeline, o.history.clone());
            match machine::stream_request(t, &h, tli, loc(0)) {
                StreamVerdict::Fence(_) => o.fenced = true,
                other => panic!("an old primary asked for a newer timeline answered {other:?}"),
            }
            // It rejoins as a standby of the new primary later (made again if needed).
            o.fenced = false;
            o.primary = new;
        }
    }

    /// The primary crashes and restarts: what it had not flushed is gone; everything in
    /// its log is visible again, as after crash recovery.
    fn restart_primary(&mut self) {
        let p = self.primary;
        let n = &mut self.nodes[p];
        n.written = n.flushed;
        n.applied = n.flushed;
        n.log.truncate(n.flushed as usize);
        for c in self.conns.iter_mut() {
            c.open = false;
            c.to_standby.clear();
            c.to_primary.clear();
        }
        self.conns.clear();
        let end = self.nodes[p].flushed;
        self.tracker = VisibilityTracker::default();
        self.tracker.reset(Lsn(end));
        self.tracker.replicated(Replicated::NONE);
        self.levels.truncate(end as usize);
        self.visible = end;
        self.published = (None, Replicated::UNCONDITIONAL);
    }

    fn step(&mut self) {
        self.now += 1;
        match self.rng.below(100) {
            0..=29 => self.commit(),
            30..=44 => self.flush_primary(),
            45..=59 => self.send(),
            60..=79 => {
                let s = self.rng.below(NODES as u64) as usize;
                self.standby_work(s);
            }
            80..=89 => {
                let s = self.rng.below(NODES as u64) as usize;
                self.connect(s);
            }
            90..=94 => self.drop_connection(),
            95..=97 => self.crash_standby(),
            _ => {
                if self.rng.chance(30) {
                    self.failover();
                }
            }
        }
        self.deliver();
        // Safety 3: one primary per timeline, and no fenced writer.
        for &(t, w) in &self.writers {
            assert_eq!(
                self.writers.iter().filter(|&&(t2, _)| t2 == t).count(),
                1,
                "timeline {t} has two primaries (one is node {w})"
            );
        }
    }
}

fn run_seed(seed: u64, steps: u64) -> (u64, u64) {
    let mut w = World::new(seed);
    for _ in 0..steps {
        w.step();
    }
    (w.next_commit - 1, w.failovers)
}

#[test]
fn a_thousand_seeded_histories_keep_every_safety_property() {
    if let Ok(seed) = std::env::var("STEADYDB_SIM_SEED") {
        let seed: u64 = seed.parse().expect("STEADYDB_SIM_SEED is a number");
        run_seed(seed, 2_000);
        return;
    }
    let base: u64 = 0x5EED;
    let (mut commits, mut failovers) = (0, 0);
    for i in 0..1_000 {
        let seed = base + i;
        let result = std::panic::catch_unwind(|| run_seed(seed, 2_000));
        match result {
            Ok((c, f)) => {
                commits += c;
                failovers += f;
            }
            Err(_) => panic!(
                "seed {seed} broke a safety property: replay it with STEADYDB_SIM_SEED={seed}"
            ),
        }
    }
    eprintln!("1000 seeds: {commits} commits, {failovers} failovers, no safety violation");
    assert!(
        failovers > 100 && commits > 100_000,
        "the simulation exercised too little: {commits} commits, {failovers} failovers"
    );
}
