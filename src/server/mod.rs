//! The server: configuration, startup, the listener, and shutdown.
//!
//! Startup order: parse the command line, create the data directory if needed (with a
//! commented `steadydb.conf`), apply settings (defaults < `steadydb.conf` < `-c`), build the
//! engine, then listen on TCP and on the Unix-domain sockets (`listen`). Each accepted
//! connection is served by the wire layer as a task on a multi-threaded async runtime with
//! one worker thread per core. SIGINT or SIGTERM stops accepting, terminates the open
//! connections and exits 0.

mod config;
mod listen;

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::engine::Engine;
use crate::error::{Error, Result};
use crate::settings::Settings;

pub use config::{load_config_file, parse_config, DEFAULT_CONFIG};

/// What the `server` subcommand was asked to do.
pub struct ServerOptions {
    pub data_dir: PathBuf,
    pub port: Option<u16>,
    /// `-c name=value` overrides, in order.
    pub overrides: Vec<(String, String)>,
}

/// Prepare the data directory and settings. Fails with a clear message on bad settings.
pub fn configure(opts: &ServerOptions) -> Result<Arc<Settings>> {
    let dir = &opts.data_dir;
    std::fs::create_dir_all(dir).map_err(|e| io_error(dir, e))?;
    let conf = dir.join("steadydb.conf");
    if !conf.exists() {
        std::fs::write(&conf, DEFAULT_CONFIG).map_err(|e| io_error(&conf, e))?;
    }
    let settings = Settings::default();
    for (line, name, value) in load_config_file(&conf)? {
        settings.set_at_startup(&name, &value).map_err(|e| {
            Error::new(
                e.code,
                format!("{} line {line}: {}", conf.display(), e.message),
            )
        })?;
    }
    for (name, value) in &opts.overrides {
        settings.set_at_startup(name, value)?;
    }
    if let Some(port) = opts.port {
        settings.set_at_startup("port", &port.to_string())?;
    }
    let abs = std::fs::canonicalize(dir).map_err(|e| io_error(dir, e))?;
    settings.set_at_startup("data_directory", &abs.display().to_string())?;
    Ok(Arc::new(settings))
}

fn io_error(path: &Path, e: std::io::Error) -> Error {
    Error::new(
        crate::error::SqlState::IO_ERROR,
        format!("could not access \"{}\": {e}", path.display()),
    )
}

/// Hold the data directory for this process: an exclusive lock on `postmaster.pid` (with
/// our process id in it), released when the process exits, however it exits. Two servers
/// on one data directory would overwrite each other's log and pages.
fn lock_data_dir(dir: &Path) -> Result<std::fs::File> {
    use std::io::Write;
    use std::os::fd::AsRawFd;
    let path = dir.join("postmaster.pid");
    let mut file = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .read(true)
        .write(true)
        .open(&path)
        .map_err(|e| io_error(&path, e))?;
    // SAFETY: flock on a file descriptor we own; no memory is involved.
    if unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) } != 0 {
        let other = std::fs::read_to_string(&path).unwrap_or_default();
        return Err(Error::new(
            crate::error::SqlState::OBJECT_IN_USE,
            format!(
                "lock file \"{}\" is held by another server (PID {}): is another server running in this data directory?",
                path.display(),
                other.trim()
            ),
        ));
    }
    file.set_len(0)
        .and_then(|_| write!(file, "{}", std::process::id()))
        .map_err(|e| io_error(&path, e))?;
    Ok(file)
}

/// Run the server until SIGINT/SIGTERM.
pub fn run(opts: ServerOptions) -> Result<()> {
    let settings = configure(&opts)?;
    let _lock = lock_data_dir(&opts.data_dir)?;
    let engine = Engine::open(settings.clone(), &opts.data_dir)?;
    let host = settings
        .show("listen_addresses")
        .unwrap_or_else(|| crate::constants::DEFAULT_LISTEN_ADDRESS.into());
    let port = settings.get_int("port") as u16;
    let host = if host == "localhost" || host == "*" {
        "127.0.0.1".to_string()
    } else {
        host
    };
    let addr: SocketAddr = format!("{host}:{port}").parse().map_err(|_| {
        Error::new(
            crate::error::SqlState::INVALID_PARAMETER_VALUE,
            format!("invalid listen address \"{host}\""),
        )
    })?;
    let workers = std::thread::available_parallelism().map_or(2, |n| n.get());
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(workers)
        .thread_name("steadydb-worker")
        // Statements run on these threads' stacks (deeply nested expressions recurse).
        .thread_stack_size(crate::constants::CONNECTION_STACK_BYTES)
        .enable_io()
        .enable_time()
        .build()
        .map_err(|e| Error::internal(format!("could not start runtime: {e}")))?;
    runtime.block_on(serve(addr, engine, settings))
}

async fn serve(addr: SocketAddr, engine: Arc<Engine>, settings: Arc<Settings>) -> Result<()> {
    use tokio::signal::unix::{signal, SignalKind};
    let listener = tokio::net::TcpListener::bind(addr).await.map_err(|e| {
        Error::new(
            crate::error::SqlState::IO_ERROR,
            format!("could not bind to {addr}: {e}"),
        )
    })?;
    let max_connections = settings.get_int("max_connections") as usize;
    let access = listen::SocketAccess::new(
        settings.get_int("unix_socket_permissions"),
        &settings.show("unix_socket_group").unwrap_or_default(),
    )?;
    let unix = listen::bind_unix_sockets(
        &settings.show("unix_socket_directories").unwrap_or_default(),
        addr.port(),
        access,
    )?;
    tracing::info!(
        "SteadyDB {} listening on {addr}, data directory {}",
        crate::settings::SERVER_VERSION,
        settings.show("data_directory").unwrap_or_default()
    );
    let mut unix_accepts = tokio::task::JoinSet::new();
    for socket in unix {
        tracing::info!("listening on Unix socket \"{}\"", socket.path.display());
        let engine = engine.clone();
        unix_accepts.spawn(async move {
            loop {
                match socket.listener.accept().await {
                    Ok((stream, _)) => admit(stream, None, &engine, max_connections),
                    Err(e) => {
                        tracing::warn!("accept failed on \"{}\": {e}", socket.path.display());
                        // Out of file descriptors, say: let connections close first.
                        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
                    }
                }
            }
        });
    }
    let mut sigterm =
        signal(SignalKind::terminate()).map_err(|e| Error::internal(e.to_string()))?;
    let mut sigint = signal(SignalKind::interrupt()).map_err(|e| Error::internal(e.to_string()))?;
    loop {
        tokio::select! {
            accepted = listener.accept() => {
                let (stream, peer) = match accepted {
                    Ok(x) => x,
                    Err(e) => {
                        tracing::warn!("accept failed: {e}");
                        continue;
                    }
                };
                if let Err(e) = stream.set_nodelay(true) {
                    tracing::debug!(%peer, error = %e, "could not set TCP_NODELAY");
                }
                admit(stream, Some(peer), &engine, max_connections);
            }
            _ = sigterm.recv() => {
                tracing::info!("received SIGTERM, shutting down");
                break;
            }
            _ = sigint.recv() => {
                tracing::info!("received SIGINT, shutting down");
                break;
            }
        }
    }
    // Stop accepting everywhere; the sockets' files go with their tasks.
    unix_accepts.shutdown().await;
    drop(listener);
    crate::wire::shutdown_all_connections().await;
    crate::wal::blocking(|| engine.shutdown());
    tracing::info!("database system is shut down");
    Ok(())
}

/// Serve an accepted client as a task of its own, or refuse it (FATAL 53300) when
/// `max_connections` sessions are open already.
fn admit<S: crate::wire::Transport + 'static>(
    stream: S,
    client: Option<SocketAddr>,
    engine: &Arc<Engine>,
    max_connections: usize,
) {
    if engine.txn.session_count() >= max_connections {
        let peer = client.map_or_else(|| "[local]".to_string(), |c| c.to_string());
        tracing::warn!("too many connections; refusing {peer}");
        tokio::spawn(crate::wire::refuse_connection(
            stream,
            "sorry, too many clients already",
        ));
        return;
    }
    tokio::spawn(crate::wire::serve_connection(
        stream,
        client,
        engine.clone(),
    ));
}
