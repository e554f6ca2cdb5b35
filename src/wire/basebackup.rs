//! `STEADYDB_BASE_BACKUP` on a replication connection: a consistent copy of the data
//! directory for a new standby (`steadydb basebackup`).
//!
//! It takes a checkpoint, then holds checkpoints off while it copies, so that the
//! checkpoint's control file, page map and the page-file slots the map names stay as they
//! are (shadow paging writes no other change over them), and no log segment is retired.
//! Then it sends the log from that checkpoint's redo LSN up to what the primary has
//! flushed, and nothing past it: a standby never holds a record the primary could lose.
//! The standby replays that log at its first start, as crash recovery would, and then
//! streams from where it ends.
//!
//! The reply: one row (redo location, end location, timeline), then CopyOut whose CopyData
//! frames are `F` (u16 name length, name, u64 file size), `D` (bytes of that file, in order)
//! and `E` (end of the file: the client syncs it). A file's bytes past what is sent are
//! zeros.

use std::io::Read;
use std::path::Path;
use std::sync::Arc;

use super::connection::{Io, Transport};
use super::walsender::{check_can_stream, Done};
use crate::engine::Engine;
use crate::error::{Error, Result, SqlState};
use crate::sql::Field;
use crate::types::{DataType, Value};
use crate::wal::segment_name;

const CHUNK_BYTES: usize = 256 * 1024;

pub async fn send<S: Transport>(io: &mut Io<S>, engine: &Arc<Engine>) -> Result<Done> {
    check_can_stream(engine)?;
    let (Some(checkpoints), Some(data_dir), Some(wal)) = (
        engine.checkpoints.clone(),
        engine.data_dir.clone(),
        engine.txn.wal.clone(),
    ) else {
        return Err(Error::unsupported(
            "this server has no data directory to copy",
        ));
    };
    // A fresh checkpoint keeps the log to copy short.
    if let Some(wait) = engine.request_checkpoint() {
        wait.finish().await?;
    }
    let hold = {
        let cps = checkpoints.clone();
        tokio::task::spawn_blocking(move || cps.hold())
            .await
            .map_err(|e| Error::internal(format!("could not hold checkpoints: {e}")))?
    };
    let last = checkpoints.last();
    let flushed = wal.flushed_lsn();
    let layout = engine.repl.layout;
    let text = |name: &str| Field {
        name: name.into(),
        data_type: DataType::Text,
        table_oid: 0,
        column_id: 0,
    };
    io.output.row_description(
        &[
            text("redo_lsn"),
            text("end_lsn"),
            Field {
                data_type: DataType::Int4,
                ..text("timeline")
            },
        ],
        &[],
    )?;
    io.output.data_row(
        &[
            Value::Text(layout.location(last.redo).to_string()),
            Value::Text(layout.location(flushed).to_string()),
            Value::Int4(engine.repl.timeline() as i32),
        ],
        &[],
    )?;
    io.output.command_complete("SELECT 1");
    // CopyOutResponse: binary, no columns.
    io.output.raw(b'H', &[1, 0, 0]);
    let mut files: Vec<(String, Option<u64>)> = vec![
        ("identity".into(), None),
        ("steadydb.conf".into(), None),
        ("storage/control".into(), None),
        (format!("storage/map.{:016X}", last.epoch), None),
        ("storage/pages".into(), None),
    ];
    let seg = layout.segment_bytes;
    let first = layout.segment_of(layout.location(last.redo)).0;
    let (last_seg, end_off) = layout.segment_of(layout.location(flushed));
    for n in first..=last_seg {
        let sent = if n == last_seg { end_off } else { seg };
        files.push((format!("wal/{}", segment_name(n)), Some(sent)));
    }
    for (name, limit) in files {
        send_file(io, &data_dir, &name, limit, seg).await?;
    }
    drop(hold);
    io.output.copy_done();
    io.output.command_complete("STEADYDB_BASE_BACKUP");
    Ok(Done::Ready)
}

/// Send one file: whole, or its first `limit` bytes with the rest as zeros (a segment's
/// log past the flushed end).
async fn send_file<S: Transport>(
    io: &mut Io<S>,
    data_dir: &Path,
    name: &str,
    limit: Option<u64>,
    segment_bytes: u64,
) -> Result<()> {
    let path = data_dir.join(name);
    let io_err = |e: std::io::Error| {
        Error::new(
            SqlState::IO_ERROR,
            format!("could not read file \"{}\": {e}", path.display()),
        )
    };
    let mut file = std::fs::File::open(&path).map_err(io_err)?;
    let len = file.metadata().map_err(io_err)?.len();
    let (size, mut left) = match limit {
        Some(l) => (segment_bytes, l.min(len)),
        None => (len, len),
    };
    let mut head = vec![b'F'];
    head.extend_from_slice(&(name.len() as u16).to_be_bytes());
    head.extend_from_slice(name.as_bytes());
    head.extend_from_slice(&size.to_be_bytes());
    io.output.raw(b'd', &head);
    let mut buf = vec![0u8; CHUNK_BYTES + 1];
    while left > 0 {
        let want = (left as usize).min(CHUNK_BYTES);
        buf[0] = b'D';
        file.read_exact(&mut buf[1..1 + want]).map_err(io_err)?;
        io.output.raw(b'd', &buf[..1 + want]);
        left -= want as u64;
        io.flush_if_full().await;
        if io.is_broken() {
            return Err(Error::new(
                SqlState::CONNECTION_EXCEPTION,
                "connection to client lost",
            ));
        }
    }
    io.output.raw(b'd', b"E");
    Ok(())
}
