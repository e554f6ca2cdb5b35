//! Physical replication slots: a name and the oldest log position its standby still
//! needs (`restart_lsn`). Checkpoints keep every segment at or above the lowest one, so a
//! standby that was away finds the log where it left it.
//!
//! Persistent slots live in `DATA/replication_slots`, rewritten whole on every change
//! (written to a temporary file, synced, renamed over the old one, directory synced):
//!
//! ```text
//! steadydb replication slots 1
//! <name> <restart_lsn as 16 hex digits, or "-" for none>
//! ...
//! crc <CRC32C of every byte above, 8 hex digits>
//! ```
//!
//! A slot's position moves forward in memory as its standby reports flushes, and is
//! written at each checkpoint, before the checkpoint retires segments: a crash loses only
//! advances, so the file can only keep more log than needed, never less.

use std::io::Write;
use std::path::{Path, PathBuf};

use crate::error::{Error, Result, SqlState};
use crate::wal::Lsn;

const HEADER: &str = "steadydb replication slots 1";
const FILE_NAME: &str = "replication_slots";
/// Longest slot name (PostgreSQL's NAMEDATALEN - 1).
const MAX_NAME_BYTES: usize = 63;

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Slot {
    pub name: String,
    /// The oldest log position the slot keeps; `None` until WAL is reserved for it.
    pub restart: Option<Lsn>,
    /// Dropped when the session that made it ends (`TEMPORARY`).
    pub temporary: bool,
    /// The walsender using it, by process id.
    pub active_pid: Option<i32>,
}

/// Every slot; the caller holds it under a lock.
pub struct Slots {
    file: Option<PathBuf>,
    slots: Vec<Slot>,
    limit: usize,
    /// A restart position moved since the file was written.
    dirty: bool,
}

/// PostgreSQL's rule for slot names: lower-case letters, digits and underscores.
pub fn check_name(name: &str) -> Result<()> {
    if name.is_empty() {
        return Err(Error::new(
            SqlState::INVALID_NAME,
            format!("replication slot name \"{name}\" is too short"),
        ));
    }
    if name.len() > MAX_NAME_BYTES {
        return Err(Error::new(
            SqlState::NAME_TOO_LONG,
            format!("replication slot name \"{name}\" is too long"),
        ));
    }
    if !name
        .bytes()
        .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_')
    {
        return Err(Error::new(
            SqlState::INVALID_NAME,
            format!("replication slot name \"{name}\" contains invalid character"),
        )
        .with_hint(
            "Replication slot names may only contain lower case letters, numbers, and the underscore character.",
        ));
    }
    Ok(())
}

fn io_error(what: &str, path: &Path, e: std::io::Error) -> Error {
    Error::new(
        SqlState::IO_ERROR,
        format!("could not {what} file \"{}\": {e}", path.display()),
    )
}

impl Slots {
    /// Load the slots of the data directory `dir` (none if it has no slot file); `None`
    /// keeps them in memory only.
    pub fn load(dir: Option<&Path>, limit: usize) -> Result<Slots> {
        let file = dir.map(|d| d.join(FILE_NAME));
        let mut slots = Vec::new();
        if let Some(path) = &file {
            match std::fs::read_to_string(path) {
                Ok(text) => {
                    slots = parse(&text).map_err(|why| {
                        Error::new(
                            SqlState::DATA_CORRUPTED,
                            format!(
                                "replication slot file \"{}\" is corrupt: {why}",
                                path.display()
                            ),
                        )
                    })?
                }
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(e) => return Err(io_error("read", path, e)),
            }
        }
        Ok(Slots {
            file,
            slots,
            limit,
            dirty: false,
        })
    }

    pub fn list(&self) -> &[Slot] {
        &self.slots
    }

    pub fn get(&self, name: &str) -> Option<&Slot> {
        self.slots.iter().find(|s| s.name == name)
    }

    fn get_mut(&mut self, name: &str) -> Option<&mut Slot> {
        self.slots.iter_mut().find(|s| s.name == name)
    }

    fn missing(name: &str) -> Error {
        Error::new(
            SqlState::UNDEFINED_OBJECT,
            format!("replication slot \"{name}\" does not exist"),
        )
    }

    /// `CREATE_REPLICATION_SLOT name [TEMPORARY] PHYSICAL [RESERVE_WAL]`: `reserve` is the
    /// position to keep from, if WAL is reserved now.
    pub fn create(
        &mut self,
        name: &str,
        temporary: bool,
        reserve: Option<Lsn>,
        pid: i32,
    ) -> Result<()> {
        check_name(name)?;
        if self.get(name).is_some() {
            return Err(Error::new(
                SqlState::DUPLICATE_OBJECT,
                format!("replication slot \"{name}\" already exists"),
            ));
        }
        if self.slots.len() >= self.limit {
            return Err(Error::new(
                SqlState::CONFIGURATION_LIMIT_EXCEEDED,
                "all replication slots are in use",
            )
            .with_hint("Free one or increase max_replication_slots."));
        }
        self.slots.push(Slot {
            name: name.to_string(),
            restart: reserve,
            temporary,
            active_pid: temporary.then_some(pid),
        });
        if !temporary {
            if let Err(e) = self.save() {
                self.slots.pop();
                return Err(e);
            }
        }
        Ok(())
    }

    /// `DROP_REPLICATION_SLOT name`.
    pub fn drop_slot(&mut self, name: &str, by_pid: i32) -> Result<()> {
        let slot = self.get(name).ok_or_else(|| Self::missing(name))?;
        if let Some(pid) = slot.active_pid.filter(|&p| p != by_pid) {
            return Err(Error::new(
                SqlState::OBJECT_IN_USE,
                format!("replication slot \"{name}\" is active for PID {pid}"),
            ));
        }
        let persistent = !slot.temporary;
        self.slots.retain(|s| s.name != name);
        if persistent {
            self.save()?;
        }
        Ok(())
    }

    /// A walsender starts streaming through a slot.
    pub fn acquire(&mut self, name: &str, pid: i32, from: Lsn) -> Result<()> {
        let slot = self.get_mut(name).ok_or_else(|| Self::missing(name))?;
        if let Some(other) = slot.active_pid.filter(|&p| p != pid) {
            return Err(Error::new(
                SqlState::OBJECT_IN_USE,
                format!("replication slot \"{name}\" is active for PID {other}"),
            ));
        }
        slot.active_pid = Some(pid);
        if slot.restart.is_none() {
            slot.restart = Some(from);
            self.dirty = true;
        }
        Ok(())
    }

    /// The session `pid` ended: its slots are released, its temporary ones dropped.
    pub fn release_all(&mut self, pid: i32) {
        self.slots
            .retain(|s| !(s.temporary && s.active_pid == Some(pid)));
        for s in self.slots.iter_mut().filter(|s| s.active_pid == Some(pid)) {
            s.active_pid = None;
        }
    }

    /// The slot's standby has flushed up to `flushed`: it needs nothing below.
    pub fn advance(&mut self, name: &str, flushed: Lsn) {
        if let Some(s) = self.get_mut(name) {
            if s.restart.is_none_or(|r| r < flushed) {
                s.restart = Some(flushed);
                self.dirty |= !s.temporary;
            }
        }
    }

    /// The lowest position any slot keeps.
    pub fn oldest_needed(&self) -> Option<Lsn> {
        self.slots.iter().filter_map(|s| s.restart).min()
    }

    /// Write the file if positions moved since it was written (at each checkpoint).
    pub fn save_if_moved(&mut self) -> Result<()> {
        if self.dirty {
            self.save()?;
        }
        Ok(())
    }

    fn save(&mut self) -> Result<()> {
        let Some(path) = &self.file else {
            return Ok(());
        };
        let mut text = format!("{HEADER}\n");
        for s in self.slots.iter().filter(|s| !s.temporary) {
            let restart = s
                .restart
                .map_or("-".to_string(), |l| format!("{:016X}", l.0));
            text.push_str(&format!("{} {restart}\n", s.name));
        }
        let crc = crc32c::crc32c(text.as_bytes());
        text.push_str(&format!("crc {crc:08X}\n"));
        let tmp = path.with_extension("tmp");
        let write = || -> std::io::Result<()> {
            let mut f = std::fs::File::create(&tmp)?;
            f.write_all(text.as_bytes())?;
            f.sync_all()?;
            std::fs::rename(&tmp, path)?;
            if let Some(dir) = path.parent() {
                std::fs::File::open(dir)?.sync_all()?;
            }
            Ok(())
        };
        write().map_err(|e| io_error("write", path, e))?;
        self.dirty = false;
        Ok(())
    }
}

fn parse(text: &str) -> std::result::Result<Vec<Slot>, String> {
    let body_end = text.rfind("crc ").ok_or("no checksum")?;
    let (body, crc_line) = text.split_at(body_end);
    let want = u32::from_str_radix(crc_line.trim_start_matches("crc ").trim(), 16)
        .map_err(|_| "bad checksum line")?;
    if crc32c::crc32c(body.as_bytes()) != want {
        return Err("checksum mismatch".into());
    }
    let mut lines = body.lines();
    if lines.next() != Some(HEADER) {
        return Err("unknown header".into());
    }
    let mut slots = Vec::new();
    for line in lines {
        let (name, restart) = line.split_once(' ').ok_or("bad line")?;
        check_name(name).map_err(|e| e.message)?;
        let restart = match restart {
            "-" => None,
            hex => Some(Lsn(
                u64::from_str_radix(hex, 16).map_err(|_| "bad position")?
            )),
        };
        slots.push(Slot {
            name: name.to_string(),
            restart,
            temporary: false,
            active_pid: None,
        });
    }
    Ok(slots)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slots_survive_a_restart_and_keep_the_oldest_position() {
        let dir = std::env::temp_dir().join(format!("steadydb-slots-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let mut s = Slots::load(Some(&dir), 4).unwrap();
        s.create("s1", false, Some(Lsn(100)), 7).unwrap();
        s.create("s2", false, None, 7).unwrap();
        s.create("tmp", true, Some(Lsn(5)), 7).unwrap();
        assert_eq!(s.oldest_needed(), Some(Lsn(5)));
        assert_eq!(
            s.create("s1", false, None, 7).unwrap_err().code,
            SqlState::DUPLICATE_OBJECT
        );
        assert_eq!(
            s.create("Bad", false, None, 7).unwrap_err().code,
            SqlState::INVALID_NAME
        );
        s.release_all(7);
        assert_eq!(
            s.oldest_needed(),
            Some(Lsn(100)),
            "the temporary slot went with its session"
        );
        s.acquire("s2", 9, Lsn(50)).unwrap();
        assert_eq!(
            s.acquire("s2", 10, Lsn(50)).unwrap_err().code,
            SqlState::OBJECT_IN_USE
        );
        s.advance("s2", Lsn(70));
        s.save_if_moved().unwrap();
        let again = Slots::load(Some(&dir), 4).unwrap();
        let names: Vec<_> = again
            .list()
            .iter()
            .map(|s| (s.name.as_str(), s.restart))
            .collect();
        assert_eq!(names, [("s1", Some(Lsn(100))), ("s2", Some(Lsn(70)))]);
        let mut again = again;
        again.drop_slot("s1", 1).unwrap();
        assert_eq!(
            again.drop_slot("s1", 1).unwrap_err().code,
            SqlState::UNDEFINED_OBJECT
        );
        // A damaged file is refused, not read as empty.
        let path = dir.join(FILE_NAME);
        let mut text = std::fs::read_to_string(&path).unwrap();
        text = text.replacen("s2", "s3", 1);
        std::fs::write(&path, text).unwrap();
        assert_eq!(
            Slots::load(Some(&dir), 4).err().unwrap().code,
            SqlState::DATA_CORRUPTED
        );
        let _ = std::fs::remove_dir_all(&dir);
    }
}
