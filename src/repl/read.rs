//! Reading the log as segment-file bytes, by WAL location: what a walsender streams and a
//! base backup copies. A segment's header is made, not read (it is a function of the
//! segment's number), so a location at a segment's start can be sent before the segment
//! has a record, or even before it is built.

use std::os::unix::fs::FileExt;
use std::path::PathBuf;

use super::location::{Layout, WalLocation, SEGMENT_HEADER_BYTES};
use crate::error::{Error, Result, SqlState};
use crate::wal::{segment_header, segment_name};

pub struct LogFiles {
    dir: PathBuf,
    pub layout: Layout,
    open: Option<(u64, std::fs::File)>,
}

impl LogFiles {
    pub fn new(dir: PathBuf, layout: Layout) -> LogFiles {
        LogFiles {
            dir,
            layout,
            open: None,
        }
    }

    /// Up to `max` bytes from `from`, not past `end` nor past the end of `from`'s segment.
    pub fn read(&mut self, from: WalLocation, end: WalLocation, max: usize) -> Result<Vec<u8>> {
        let (segment, offset) = self.layout.segment_of(from);
        let in_segment = self.layout.segment_bytes - offset;
        let len = (end.0.saturating_sub(from.0))
            .min(in_segment)
            .min(max as u64) as usize;
        let mut out = vec![0u8; len];
        let mut filled = 0;
        if offset < SEGMENT_HEADER_BYTES {
            let header = segment_header(segment, self.layout.segment_bytes);
            let n = ((SEGMENT_HEADER_BYTES - offset) as usize).min(len);
            out[..n].copy_from_slice(&header[offset as usize..offset as usize + n]);
            filled = n;
        }
        if filled < len {
            let file = self.segment(segment)?;
            let at = offset + filled as u64;
            file.read_exact_at(&mut out[filled..], at).map_err(|e| {
                Error::new(
                    SqlState::IO_ERROR,
                    format!(
                        "could not read from WAL segment {}: {e}",
                        segment_name(segment)
                    ),
                )
            })?;
        }
        Ok(out)
    }

    fn segment(&mut self, n: u64) -> Result<&std::fs::File> {
        if self.open.as_ref().map(|(m, _)| *m) != Some(n) {
            let path = self.dir.join(segment_name(n));
            let f = std::fs::File::open(&path).map_err(|e| {
                if e.kind() == std::io::ErrorKind::NotFound {
                    Error::new(
                        SqlState::UNDEFINED_FILE,
                        format!(
                            "requested WAL segment {} has already been removed",
                            segment_name(n)
                        ),
                    )
                } else {
                    Error::new(
                        SqlState::IO_ERROR,
                        format!("could not open file \"{}\": {e}", path.display()),
                    )
                }
            })?;
            self.open = Some((n, f));
        }
        match &self.open {
            Some((_, f)) => Ok(f),
            None => Err(Error::internal("no open segment")),
        }
    }
}
