//! The cluster's identity, in `DATA/identity` (made with the data directory, copied by a
//! base backup, rewritten durably when it changes):
//!
//! ```text
//! system_identifier 7712584935130151444
//! timeline 3
//! history 1 0/3000020
//! history 2 0/5A0F1C8
//! fenced_by 4
//! ```
//!
//! - `system_identifier`: the same on a primary and every standby made from it; a standby
//!   refuses to stream from a server with another.
//! - `timeline`: incremented by each promotion. A log written after a promotion belongs to
//!   the new timeline; `history t L` says timeline `t` ended at WAL location `L`, where the
//!   next one forked from it. A standby may follow a newer timeline only if its own log
//!   does not pass that fork point.
//! - `fenced_by`: a server that learned of a newer timeline than its own (a standby of
//!   that timeline asked it to stream) knows it is no longer the primary, and refuses
//!   writes from then on, across restarts.

use std::io::Write;
use std::path::Path;

use super::location::WalLocation;
use crate::error::{Error, Result, SqlState};

const FILE_NAME: &str = "identity";

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Identity {
    pub system_id: u64,
    pub timeline: u32,
    /// (timeline, the location where it ended), oldest first.
    pub history: Vec<(u32, WalLocation)>,
    pub fenced_by: Option<u32>,
}

impl Identity {
    /// Load it, or make a new one for a new data directory.
    pub fn load_or_create(dir: &Path) -> Result<Identity> {
        let path = dir.join(FILE_NAME);
        match std::fs::read_to_string(&path) {
            Ok(text) => Identity::parse(&text).ok_or_else(|| {
                Error::new(
                    SqlState::DATA_CORRUPTED,
                    format!("file \"{}\" is corrupt", path.display()),
                )
            }),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                // PostgreSQL's recipe: seconds since 1970 in the high bits, microseconds
                // and the process id below.
                let now = std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .unwrap_or_default();
                let id = Identity {
                    system_id: (now.as_secs() << 32)
                        | ((now.subsec_micros() as u64) << 12)
                        | (std::process::id() as u64 & 0xfff),
                    timeline: 1,
                    history: Vec::new(),
                    fenced_by: None,
                };
                id.save(dir)?;
                Ok(id)
            }
            Err(e) => Err(Error::new(
                SqlState::IO_ERROR,
                format!("could not read \"{}\": {e}", path.display()),
            )),
        }
    }

    pub fn parse(text: &str) -> Option<Identity> {
        let mut system_id = None;
        let mut timeline = None;
        let mut history = Vec::new();
        let mut fenced_by = None;
        for line in text.lines() {
            let mut words = line.split_whitespace();
            match (words.next(), words.next(), words.next()) {
                (Some("system_identifier"), Some(v), None) => system_id = v.parse().ok(),
                (Some("timeline"), Some(v), None) => timeline = v.parse().ok(),
                (Some("history"), Some(t), Some(l)) => {
                    history.push((t.parse().ok()?, WalLocation::parse(l)?))
                }
                (Some("fenced_by"), Some(v), None) => fenced_by = Some(v.parse().ok()?),
                (None, _, _) => {}
                _ => return None,
            }
        }
        Some(Identity {
            system_id: system_id?,
            timeline: timeline?,
            history,
            fenced_by,
        })
    }

    pub fn text(&self) -> String {
        let mut s = format!(
            "system_identifier {}\ntimeline {}\n",
            self.system_id, self.timeline
        );
        for (t, l) in &self.history {
            s.push_str(&format!("history {t} {l}\n"));
        }
        if let Some(t) = self.fenced_by {
            s.push_str(&format!("fenced_by {t}\n"));
        }
        s
    }

    /// Write it durably: a temporary file, synced, renamed over the old one, the directory
    /// synced.
    pub fn save(&self, dir: &Path) -> Result<()> {
        let path = dir.join(FILE_NAME);
        let tmp = dir.join("identity.tmp");
        let text = self.text();
        let write = || -> std::io::Result<()> {
            let mut f = std::fs::File::create(&tmp)?;
            f.write_all(text.as_bytes())?;
            f.sync_all()?;
            std::fs::rename(&tmp, &path)?;
            std::fs::File::open(dir)?.sync_all()
        };
        write().map_err(|e| {
            Error::new(
                SqlState::IO_ERROR,
                format!("could not write \"{}\": {e}", path.display()),
            )
        })
    }

    /// Where timeline `tli` ended, if a later one forked from it.
    pub fn switchpoint(&self, tli: u32) -> Option<WalLocation> {
        self.history
            .iter()
            .find(|(t, _)| *t == tli)
            .map(|&(_, l)| l)
    }

    /// The history as PostgreSQL's `TIMELINE_HISTORY` content: one line per ended timeline.
    pub fn history_file(&self) -> String {
        self.history
            .iter()
            .map(|(t, l)| format!("{t}\t{l}\tpromoted\n"))
            .collect()
    }

    /// Parse a `TIMELINE_HISTORY` content back into (timeline, end) pairs.
    pub fn parse_history_file(text: &str) -> Option<Vec<(u32, WalLocation)>> {
        text.lines()
            .filter(|l| !l.trim().is_empty())
            .map(|l| {
                let mut w = l.split('\t');
                Some((
                    w.next()?.trim().parse().ok()?,
                    WalLocation::parse(w.next()?)?,
                ))
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn identity_round_trips_with_its_history() {
        let id = Identity {
            system_id: 42,
            timeline: 3,
            history: vec![(1, WalLocation(0x100)), (2, WalLocation(0x1_0000_0200))],
            fenced_by: Some(4),
        };
        assert_eq!(Identity::parse(&id.text()), Some(id.clone()));
        assert_eq!(id.switchpoint(2), Some(WalLocation(0x1_0000_0200)));
        assert_eq!(id.switchpoint(3), None);
        assert_eq!(
            Identity::parse_history_file(&id.history_file()),
            Some(id.history.clone())
        );
        assert_eq!(Identity::parse("timeline 1\n"), None);
        assert_eq!(Identity::parse("system_identifier 1\ntimeline x\n"), None);
    }
}
