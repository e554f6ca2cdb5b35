//! Where clients connect: the TCP address of `listen_addresses` and `port`, and a
//! Unix-domain socket `.s.PGSQL.<port>` in each directory of `unix_socket_directories`,
//! named as PostgreSQL names it, so `psql -h /tmp -p 5433` (or libpq's default socket
//! directory) finds the server.
//!
//! A socket file outlives a server that was killed, so a file already at the path is
//! probed: if something accepts a connection there, another server owns it and startup
//! fails; otherwise the stale file is removed and the socket created anew. A directory
//! where no socket can be created is logged and skipped, as PostgreSQL does; startup
//! fails only if directories were listed and none of them worked. The socket files are
//! removed again at shutdown. Each socket file gets the mode of `unix_socket_permissions`
//! and, if `unix_socket_group` names one, that group, as PostgreSQL sets them.

use std::os::unix::fs::{FileTypeExt, PermissionsExt};
use std::path::{Path, PathBuf};

use tokio::net::UnixListener;

use crate::error::{Error, Result, SqlState};

/// The longest socket path the kernel accepts (`sun_path` less its terminating NUL).
const MAX_SOCKET_PATH_BYTES: usize = 107;

/// A listening Unix-domain socket; dropping it removes its file.
pub struct UnixSocket {
    pub listener: UnixListener,
    pub path: PathBuf,
}

impl Drop for UnixSocket {
    fn drop(&mut self) {
        if let Err(e) = std::fs::remove_file(&self.path) {
            tracing::warn!(
                "could not remove socket file \"{}\": {e}",
                self.path.display()
            );
        }
    }
}

/// The directories of a `unix_socket_directories` value: a comma-separated list, each
/// element optionally double-quoted. Empty means no Unix-domain sockets.
pub fn socket_directories(value: &str) -> Vec<String> {
    value
        .split(',')
        .map(|d| d.trim())
        .map(|d| {
            d.strip_prefix('"')
                .and_then(|d| d.strip_suffix('"'))
                .unwrap_or(d)
        })
        .filter(|d| !d.is_empty())
        .map(str::to_owned)
        .collect()
}

/// The socket's path in `dir` for `port`, as libpq computes it.
pub fn socket_path(dir: &str, port: u16) -> PathBuf {
    Path::new(dir).join(format!(".s.PGSQL.{port}"))
}

/// Who may connect through a socket file: `unix_socket_permissions` and
/// `unix_socket_group`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SocketAccess {
    pub mode: u32,
    pub group: Option<u32>,
}

impl SocketAccess {
    /// From the settings' values: a mode, and a group name, number or nothing.
    pub fn new(mode: i64, group: &str) -> Result<SocketAccess> {
        let mode = u32::try_from(mode)
            .ok()
            .filter(|m| *m <= 0o777)
            .ok_or_else(|| Error::internal("unix_socket_permissions out of range"))?;
        Ok(SocketAccess {
            mode,
            group: group_id(group)?,
        })
    }
}

impl Default for SocketAccess {
    /// PostgreSQL's defaults: anyone may connect, and the group is the server's.
    fn default() -> SocketAccess {
        SocketAccess {
            mode: 0o777,
            group: None,
        }
    }
}

/// The id of group `name` (a name or a number); `None` for an empty name.
fn group_id(name: &str) -> Result<Option<u32>> {
    if name.is_empty() {
        return Ok(None);
    }
    if let Ok(gid) = name.parse::<u32>() {
        return Ok(Some(gid));
    }
    let missing = || {
        Error::new(
            SqlState::INVALID_PARAMETER_VALUE,
            format!("group \"{name}\" does not exist"),
        )
    };
    let c_name = std::ffi::CString::new(name).map_err(|_| missing())?;
    // SAFETY: `group` is plain data, filled in (with pointers into `buf`) by getgrnam_r.
    let mut group: libc::group = unsafe { std::mem::zeroed() };
    let mut buf = vec![0 as libc::c_char; 64 * 1024];
    let mut found: *mut libc::group = std::ptr::null_mut();
    // SAFETY: every pointer is valid for the call, and `buf.len()` is its buffer's size.
    let rc = unsafe {
        libc::getgrnam_r(
            c_name.as_ptr(),
            &mut group,
            buf.as_mut_ptr(),
            buf.len(),
            &mut found,
        )
    };
    if rc != 0 || found.is_null() {
        return Err(missing());
    }
    Ok(Some(group.gr_gid))
}

/// Create the sockets of `unix_socket_directories`. Must run inside the async runtime.
pub fn bind_unix_sockets(
    directories: &str,
    port: u16,
    access: SocketAccess,
) -> Result<Vec<UnixSocket>> {
    let dirs = socket_directories(directories);
    let mut sockets = Vec::new();
    for dir in &dirs {
        match bind_one(dir, port, access) {
            Ok(socket) => sockets.push(socket),
            Err(e) if e.code == SqlState::OBJECT_IN_USE => return Err(e),
            Err(e) => tracing::warn!("{}", e.message),
        }
    }
    if !dirs.is_empty() && sockets.is_empty() {
        return Err(Error::new(
            SqlState::IO_ERROR,
            "could not create any Unix-domain sockets",
        ));
    }
    Ok(sockets)
}

fn bind_one(dir: &str, port: u16, access: SocketAccess) -> Result<UnixSocket> {
    let path = &socket_path(dir, port);
    let shown = path.display();
    if path.as_os_str().len() > MAX_SOCKET_PATH_BYTES {
        return Err(Error::new(
            SqlState::INVALID_PARAMETER_VALUE,
            format!(
                "Unix-domain socket path \"{shown}\" is too long (maximum {MAX_SOCKET_PATH_BYTES} bytes)"
            ),
        ));
    }
    let io = |what: &str, e: std::io::Error| {
        Error::new(
            SqlState::IO_ERROR,
            format!("could not {what} \"{shown}\": {e}"),
        )
    };
    match std::fs::symlink_metadata(path) {
        Ok(meta) if !meta.file_type().is_socket() => {
            return Err(Error::new(
                SqlState::OBJECT_IN_USE,
                format!("\"{shown}\" exists and is not a socket; remove it, or choose another port or unix_socket_directories"),
            ));
        }
        Ok(_) => {
            if std::os::unix::net::UnixStream::connect(path).is_ok() {
                return Err(Error::new(
                    SqlState::OBJECT_IN_USE,
                    format!("another server is listening on the socket \"{shown}\": is another server running on port {port}?"),
                ));
            }
            tracing::info!("removing stale socket file \"{shown}\"");
            std::fs::remove_file(path).map_err(|e| io("remove stale socket file", e))?;
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => return Err(io("inspect socket file", e)),
    }
    let listener = UnixListener::bind(path).map_err(|e| io("create Unix-domain socket", e))?;
    let socket = UnixSocket {
        listener,
        path: path.to_owned(),
    };
    // By default anyone may connect (0777); authentication decides the rest.
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(access.mode))
        .map_err(|e| io("set the permissions of", e))?;
    if let Some(gid) = access.group {
        std::os::unix::fs::chown(path, None, Some(gid)).map_err(|e| io("set the group of", e))?;
    }
    Ok(socket)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn directories_are_a_comma_separated_list() {
        assert_eq!(socket_directories(""), Vec::<String>::new());
        assert_eq!(socket_directories(" /tmp "), vec!["/tmp"]);
        assert_eq!(
            socket_directories("/tmp, \"/var/run/my dir\",,"),
            vec!["/tmp", "/var/run/my dir"]
        );
        assert_eq!(
            socket_path("/tmp", 5433),
            PathBuf::from("/tmp/.s.PGSQL.5433")
        );
    }

    fn runtime() -> tokio::runtime::Runtime {
        tokio::runtime::Builder::new_current_thread()
            .enable_io()
            .build()
            .expect("runtime")
    }

    #[test]
    fn a_stale_socket_is_replaced_and_a_live_one_refused() {
        let dir = std::env::temp_dir().join(format!("sdb-listen-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("dir");
        let d = dir.to_str().expect("utf-8 path").to_owned();
        let path = socket_path(&d, 5999);
        // A socket file nobody listens on any more.
        drop(std::os::unix::net::UnixListener::bind(&path).expect("bind"));
        assert!(path.exists());
        let rt = runtime();
        rt.block_on(async {
            let live =
                bind_unix_sockets(&d, 5999, SocketAccess::default()).expect("stale file replaced");
            assert_eq!(live.len(), 1);
            let mode = std::fs::metadata(&path).expect("meta").permissions().mode();
            assert_eq!(mode & 0o777, 0o777);
            let err = bind_unix_sockets(&d, 5999, SocketAccess::default())
                .err()
                .expect("in use");
            assert_eq!(err.code, SqlState::OBJECT_IN_USE);
            drop(live);
            assert!(!path.exists(), "removed at drop");
        });
        std::fs::write(&path, b"not a socket").expect("file");
        let err = rt.block_on(async {
            bind_unix_sockets(&d, 5999, SocketAccess::default())
                .err()
                .expect("not a socket")
        });
        assert_eq!(err.code, SqlState::OBJECT_IN_USE);
        std::fs::remove_dir_all(&dir).expect("cleanup");
    }

    #[test]
    fn a_missing_directory_is_skipped_but_not_all_of_them() {
        let rt = runtime();
        rt.block_on(async {
            let err = bind_unix_sockets("/nonexistent-sdb-dir", 5998, SocketAccess::default())
                .err()
                .expect("no socket at all");
            assert_eq!(err.code, SqlState::IO_ERROR);
            let tmp = std::env::temp_dir();
            let both = format!("/nonexistent-sdb-dir,{}", tmp.display());
            let live = bind_unix_sockets(&both, 5998, SocketAccess::default()).expect("one of two");
            assert_eq!(live.len(), 1);
            assert_eq!(live[0].path, socket_path(&tmp.display().to_string(), 5998));
        });
        let long = "/tmp/".to_owned() + &"d".repeat(120);
        let err = rt.block_on(async {
            bind_one(&long, 5997, SocketAccess::default())
                .err()
                .expect("too long")
        });
        assert_eq!(err.code, SqlState::INVALID_PARAMETER_VALUE);
    }

    #[test]
    fn the_socket_file_gets_the_configured_mode_and_group() {
        use std::os::unix::fs::MetadataExt;
        let dir = std::env::temp_dir().join(format!("sdb-access-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("dir");
        let d = dir.to_str().expect("utf-8 path").to_owned();
        // SAFETY: getgid has no preconditions.
        let gid = unsafe { libc::getgid() };
        let access = SocketAccess::new(0o770, &gid.to_string()).expect("numeric group");
        assert_eq!(access.group, Some(gid));
        runtime().block_on(async {
            let live = bind_unix_sockets(&d, 5996, access).expect("socket");
            let meta = std::fs::metadata(&live[0].path).expect("meta");
            assert_eq!(meta.permissions().mode() & 0o777, 0o770);
            assert_eq!(meta.gid(), gid);
        });
        let err = SocketAccess::new(0o777, "no-such-group-sdb").expect_err("unknown group");
        assert_eq!(err.code, SqlState::INVALID_PARAMETER_VALUE);
        assert!(err.message.contains("does not exist"), "{}", err.message);
        assert_eq!(SocketAccess::new(0o777, "").expect("none").group, None);
        std::fs::remove_dir_all(&dir).expect("cleanup");
    }
}
