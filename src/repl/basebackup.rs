//! `steadydb basebackup`: make a standby's data directory from a running primary.
//!
//! It connects over the replication protocol, creates the replication slot it is given
//! (unless it exists), receives the primary's `STEADYDB_BASE_BACKUP` (a checkpoint's files
//! and the log since its redo LSN, see `wire/basebackup.rs`), writes each file and syncs it,
//! and then makes the directory a standby's: `standby.signal`, and `primary_conninfo` (and
//! `primary_slot_name`) appended to the copied `steadydb.conf`.

use std::io::Write;
use std::path::{Component, Path};

use super::client::{data_row_text, server_error, Client};
use super::conninfo::Conninfo;
use crate::error::{Error, Result, SqlState};

/// What `steadydb basebackup` was asked for.
pub struct BackupOptions {
    pub host: String,
    pub port: u16,
    pub user: String,
    pub data_dir: std::path::PathBuf,
    pub slot: Option<String>,
    pub application_name: String,
    /// More connection settings in libpq's `keyword=value` form (`sslmode`,
    /// `sslrootcert`, ...): they override the options above, and the standby keeps them.
    pub conninfo: Option<String>,
}

impl BackupOptions {
    /// The standby's `primary_conninfo`: the options, then the connection string's.
    fn standby_conninfo(&self) -> Result<Conninfo> {
        let mut c = Conninfo::new(&self.host, self.port, &self.user, &self.application_name);
        c.apply(self.conninfo.as_deref().unwrap_or(""))?;
        Ok(c)
    }
}

fn io_error(what: &str, path: &Path, e: std::io::Error) -> Error {
    Error::new(
        SqlState::IO_ERROR,
        format!("could not {what} \"{}\": {e}", path.display()),
    )
}

fn protocol(what: &str) -> Error {
    Error::new(SqlState::PROTOCOL_VIOLATION, format!("base backup: {what}"))
}

/// A file name from the primary: relative, no `..`, no more than two levels.
fn safe_name(name: &str) -> Result<&Path> {
    let p = Path::new(name);
    let ok =
        p.components().count() <= 2 && p.components().all(|c| matches!(c, Component::Normal(_)));
    if ok {
        Ok(p)
    } else {
        Err(protocol(&format!("unsafe file name \"{name}\"")))
    }
}

pub fn run(opts: &BackupOptions) -> Result<()> {
    let dir = &opts.data_dir;
    if dir.exists()
        && std::fs::read_dir(dir)
            .map_err(|e| io_error("read directory", dir, e))?
            .next()
            .is_some()
    {
        return Err(Error::new(
            SqlState::OBJECT_IN_USE,
            format!("directory \"{}\" exists but is not empty", dir.display()),
        ));
    }
    for sub in ["", "storage", "wal"] {
        let d = dir.join(sub);
        std::fs::create_dir_all(&d).map_err(|e| io_error("create directory", &d, e))?;
    }
    let standby = opts.standby_conninfo()?;
    let conninfo = Conninfo {
        application_name: "steadydb basebackup".into(),
        ..standby.clone()
    };
    let mut client = Client::connect(&conninfo)?;
    if let Some(slot) = &opts.slot {
        let exists = client
            .query(&format!("READ_REPLICATION_SLOT \"{slot}\""))?
            .first()
            .is_some_and(|row| row.first().is_some_and(|v| v.is_some()));
        if !exists {
            client.query(&format!(
                "CREATE_REPLICATION_SLOT \"{slot}\" PHYSICAL RESERVE_WAL"
            ))?;
            eprintln!("steadydb basebackup: created replication slot \"{slot}\"");
        }
    }
    let mut body = b"STEADYDB_BASE_BACKUP".to_vec();
    body.push(0);
    client.send(Some(b'Q'), &body)?;
    let mut current: Option<(std::fs::File, std::path::PathBuf, u64, u64)> = None;
    let mut files = 0;
    let wait = std::time::Duration::from_secs(600);
    loop {
        let (tag, body) = client.message(wait)?;
        match tag {
            b'D' => {
                let row = data_row_text(&body);
                eprintln!(
                    "steadydb basebackup: checkpoint redo at {}, log copied to {}, timeline {}",
                    row.first().cloned().flatten().unwrap_or_default(),
                    row.get(1).cloned().flatten().unwrap_or_default(),
                    row.get(2).cloned().flatten().unwrap_or_default()
                );
            }
            b'd' => match body.first() {
                Some(b'F') if body.len() >= 3 => {
                    let n = u16::from_be_bytes([body[1], body[2]]) as usize;
                    let name = body
                        .get(3..3 + n)
                        .and_then(|b| std::str::from_utf8(b).ok())
                        .ok_or_else(|| protocol("bad file header"))?;
                    let size = body
                        .get(3 + n..11 + n)
                        .map(|b| u64::from_be_bytes(b.try_into().unwrap_or([0; 8])))
                        .ok_or_else(|| protocol("bad file header"))?;
                    let path = dir.join(safe_name(name)?);
                    let f =
                        std::fs::File::create(&path).map_err(|e| io_error("create", &path, e))?;
                    current = Some((f, path, size, 0));
                }
                Some(b'D') => {
                    let (f, path, size, written) = current
                        .as_mut()
                        .ok_or_else(|| protocol("data before a file"))?;
                    let data = &body[1..];
                    if *written + data.len() as u64 > *size {
                        return Err(protocol("file longer than announced"));
                    }
                    f.write_all(data).map_err(|e| io_error("write", path, e))?;
                    *written += data.len() as u64;
                }
                Some(b'E') => {
                    let (f, path, size, _) = current
                        .take()
                        .ok_or_else(|| protocol("end before a file"))?;
                    f.set_len(size).map_err(|e| io_error("extend", &path, e))?;
                    f.sync_all().map_err(|e| io_error("fsync", &path, e))?;
                    files += 1;
                }
                _ => return Err(protocol("unknown copy frame")),
            },
            b'E' => return Err(server_error(&body)),
            b'Z' => break,
            _ => {}
        }
    }
    if files == 0 {
        return Err(protocol("the primary sent no files"));
    }
    // The standby's own settings.
    let conf = dir.join("steadydb.conf");
    // The password is never written into the new directory: the standby takes it from
    // PGPASSWORD.
    let mut extra = format!(
        "\n# Added by steadydb basebackup: this directory is a standby of {}:{}.\nprimary_conninfo = '{}'\n",
        standby.host,
        standby.port,
        standby.to_string().replace('\'', "''")
    );
    if let Some(slot) = &opts.slot {
        extra.push_str(&format!("primary_slot_name = '{slot}'\n"));
    }
    let mut f = std::fs::OpenOptions::new()
        .append(true)
        .open(&conf)
        .map_err(|e| io_error("open", &conf, e))?;
    f.write_all(extra.as_bytes())
        .and_then(|_| f.sync_all())
        .map_err(|e| io_error("write", &conf, e))?;
    let signal = dir.join(crate::engine::STANDBY_SIGNAL);
    std::fs::File::create(&signal)
        .and_then(|f| f.sync_all())
        .map_err(|e| io_error("create", &signal, e))?;
    for sub in ["storage", "wal", ""] {
        let d = dir.join(sub);
        std::fs::File::open(&d)
            .and_then(|f| f.sync_all())
            .map_err(|e| io_error("fsync", &d, e))?;
    }
    eprintln!(
        "steadydb basebackup: {files} files written to \"{}\"; start it with: steadydb server -D {} -p PORT",
        dir.display(),
        dir.display()
    );
    Ok(())
}
