//! The one narrow file interface every byte of SteadyDB's durable state goes through.
//!
//! The WAL (and, later, pages and the control file) use [`Disk`] and [`File`] only, so a
//! test can swap in a simulated disk that loses unsynced writes, tears sectors and injects
//! I/O errors at chosen points.
//!
//! What we assume of a real disk (and what the simulated one models):
//! - A write that returned may still be lost by a crash until a `sync_data` of that file
//!   returns; after that it survives.
//! - A crash may tear an unsynced write at sector (512-byte) granularity and may persist
//!   unsynced writes in any order.
//! - A file's creation or rename survives a crash only after `sync_dir` of its directory.
//! - A failed `sync_data` leaves the file's durable state unknown: the caller must treat it
//!   as fatal and never report success ("fsyncgate").

use std::fs::{self, OpenOptions};
use std::io;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// An open file: positional reads and writes, and syncs.
pub trait File: Send + Sync {
    fn write_all_at(&self, buf: &[u8], offset: u64) -> io::Result<()>;
    /// Read up to `buf.len()` bytes at `offset`; returns how many were read (0 at EOF).
    fn read_at(&self, buf: &mut [u8], offset: u64) -> io::Result<usize>;
    fn sync_data(&self) -> io::Result<()>;
    /// Start writeback of a byte range without waiting for it (a hint: it makes nothing
    /// durable, but leaves less for the next `sync_data` to write).
    fn start_writeback(&self, _offset: u64, _len: u64) -> io::Result<()> {
        Ok(())
    }
    fn set_len(&self, len: u64) -> io::Result<()>;
    fn len(&self) -> io::Result<u64>;
    fn is_empty(&self) -> io::Result<bool> {
        Ok(self.len()? == 0)
    }
}

/// A directory tree of files.
pub trait Disk: Send + Sync {
    /// Open a file, creating it if `create`.
    fn open(&self, path: &Path, create: bool) -> io::Result<Arc<dyn File>>;
    /// Open an existing file for direct writes (`O_DIRECT`: no copy into the page cache).
    /// Every write through the handle must start and end at multiples of
    /// [`WAL_BLOCK_BYTES`](crate::constants::WAL_BLOCK_BYTES), from memory aligned to it;
    /// the handle is for writing and syncing only. What is durable when is unchanged: a
    /// write is durable once `sync_data` returns. Where the file system refuses direct
    /// I/O, the file is opened as usual.
    fn open_direct(&self, path: &Path) -> io::Result<Arc<dyn File>> {
        self.open(path, false)
    }
    fn exists(&self, path: &Path) -> bool;
    /// File names in a directory (not paths), unsorted.
    fn list(&self, dir: &Path) -> io::Result<Vec<String>>;
    fn create_dir_all(&self, dir: &Path) -> io::Result<()>;
    fn remove(&self, path: &Path) -> io::Result<()>;
    fn rename(&self, from: &Path, to: &Path) -> io::Result<()>;
    /// Make creations, renames and removals in `dir` durable.
    fn sync_dir(&self, dir: &Path) -> io::Result<()>;
}

/// The operating system's file system.
pub struct OsDisk;

struct OsFile(fs::File);

impl File for OsFile {
    fn write_all_at(&self, buf: &[u8], offset: u64) -> io::Result<()> {
        self.0.write_all_at(buf, offset)
    }

    fn read_at(&self, buf: &mut [u8], offset: u64) -> io::Result<usize> {
        let mut done = 0;
        while done < buf.len() {
            match self.0.read_at(&mut buf[done..], offset + done as u64) {
                Ok(0) => break,
                Ok(n) => done += n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        Ok(done)
    }

    fn sync_data(&self) -> io::Result<()> {
        self.0.sync_data()
    }

    fn start_writeback(&self, offset: u64, len: u64) -> io::Result<()> {
        use std::os::fd::AsRawFd;
        // SAFETY: a plain system call on a file descriptor this struct owns.
        let rc = unsafe {
            libc::sync_file_range(
                self.0.as_raw_fd(),
                offset as libc::off64_t,
                len as libc::off64_t,
                libc::SYNC_FILE_RANGE_WRITE,
            )
        };
        if rc == 0 {
            Ok(())
        } else {
            Err(io::Error::last_os_error())
        }
    }

    fn set_len(&self, len: u64) -> io::Result<()> {
        self.0.set_len(len)
    }

    fn len(&self) -> io::Result<u64> {
        Ok(self.0.metadata()?.len())
    }
}

impl Disk for OsDisk {
    fn open(&self, path: &Path, create: bool) -> io::Result<Arc<dyn File>> {
        let f = OpenOptions::new()
            .read(true)
            .write(true)
            .create(create)
            .truncate(false)
            .open(path)?;
        Ok(Arc::new(OsFile(f)))
    }

    fn open_direct(&self, path: &Path) -> io::Result<Arc<dyn File>> {
        use std::os::unix::fs::OpenOptionsExt;
        match OpenOptions::new()
            .write(true)
            .custom_flags(libc::O_DIRECT)
            .open(path)
        {
            Ok(f) => Ok(Arc::new(OsFile(f))),
            // tmpfs and some others refuse O_DIRECT: buffered writes are just as durable
            // once synced, and the aligned writes do no harm.
            Err(e) if e.raw_os_error() == Some(libc::EINVAL) => self.open(path, false),
            Err(e) => Err(e),
        }
    }

    fn exists(&self, path: &Path) -> bool {
        path.exists()
    }

    fn list(&self, dir: &Path) -> io::Result<Vec<String>> {
        let mut names = Vec::new();
        for entry in fs::read_dir(dir)? {
            let entry = entry?;
            if let Some(n) = entry.file_name().to_str() {
                names.push(n.to_string());
            }
        }
        Ok(names)
    }

    fn create_dir_all(&self, dir: &Path) -> io::Result<()> {
        fs::create_dir_all(dir)
    }

    fn remove(&self, path: &Path) -> io::Result<()> {
        fs::remove_file(path)
    }

    fn rename(&self, from: &Path, to: &Path) -> io::Result<()> {
        fs::rename(from, to)
    }

    fn sync_dir(&self, dir: &Path) -> io::Result<()> {
        fs::File::open(dir)?.sync_all()
    }
}

/// `dir/name` as a path.
pub fn join(dir: &Path, name: &str) -> PathBuf {
    dir.join(name)
}

pub mod sim;
