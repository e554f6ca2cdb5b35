//! The server: configuration, startup, the listener, and shutdown.
//!
//! Startup order: parse the command line, create the data directory if needed (with a
//! commented `steadydb.conf`), apply settings (defaults < `steadydb.conf` < `-c`), build the
//! engine, then listen on TCP and on the Unix-domain sockets (`listen`). The listeners and
//! signals run on the main thread; each accepted connection is served by the wire layer as
//! a task on one of the worker runtimes, one per core (`workers`). SIGINT or SIGTERM stops accepting, terminates the open
//! connections and exits 0.

mod config;
mod listen;
mod workers;

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
    /// What a new `pg_hba.conf` allows (`--auth`).
    pub auth: crate::auth::DefaultAuth,
    /// The bootstrap superuser's first password, from `--pwfile` (else one is generated
    /// when `pg_hba.conf` is made with passwords required).
    pub password_file: Option<PathBuf>,
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

/// The file `steadydb promote` leaves for the server it signals.
pub const PROMOTE_SIGNAL: &str = "promote.signal";

/// `steadydb promote -D DIR`: ask the standby running in `DIR` to become a primary, and
/// wait (up to `wait`) until it has (its `standby.signal` is gone).
pub fn promote(dir: &Path, wait: std::time::Duration) -> Result<()> {
    let pid_path = dir.join("postmaster.pid");
    let pid: i32 = std::fs::read_to_string(&pid_path)
        .map_err(|e| io_error(&pid_path, e))?
        .trim()
        .parse()
        .map_err(|_| Error::internal(format!("\"{}\" holds no process id", pid_path.display())))?;
    let standby = dir.join(crate::engine::STANDBY_SIGNAL);
    if !standby.exists() {
        return Err(Error::new(
            crate::error::SqlState::OBJECT_NOT_IN_PREREQUISITE_STATE,
            "cannot promote server: server is not in standby mode",
        ));
    }
    let signal = dir.join(PROMOTE_SIGNAL);
    std::fs::write(&signal, b"").map_err(|e| io_error(&signal, e))?;
    // SAFETY: kill(2) with a process id and a signal number; no memory is involved.
    if unsafe { libc::kill(pid, libc::SIGUSR1) } != 0 {
        let _ = std::fs::remove_file(&signal);
        return Err(Error::internal(format!(
            "could not send promote signal to process {pid}: {}",
            std::io::Error::last_os_error()
        )));
    }
    let until = std::time::Instant::now() + wait;
    while standby.exists() {
        if std::time::Instant::now() >= until {
            return Err(Error::internal("server did not promote in time"));
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    Ok(())
}

/// Apply the configuration file again (SIGHUP, `pg_reload_conf()`), logging what
/// changed; a file with an error is logged and changes nothing.
fn reload(settings: &Settings, conf: &Path, overrides: &[(String, String)]) {
    let result = load_config_file(conf).and_then(|file| settings.reload(&file, overrides));
    match result {
        Ok(changed) => {
            for (name, value) in changed {
                tracing::info!("parameter \"{name}\" changed to \"{value}\"");
            }
        }
        Err(e) => tracing::warn!(
            "configuration file \"{}\" contains errors; no changes were applied: {}",
            conf.display(),
            e.message
        ),
    }
}

/// Load `pg_hba.conf`, making it first if the data directory has none (`--auth` says
/// what it allows). When it requires passwords, the bootstrap superuser gets one if it
/// has none: `--pwfile`'s, or a generated one printed once on standard output (never to
/// the log or the data directory).
fn prepare_authentication(
    engine: &Arc<Engine>,
    opts: &ServerOptions,
) -> Result<crate::auth::Authenticator> {
    use crate::auth::{default_hba, DefaultAuth, HBA_FILE};
    use crate::storage::roles::BOOTSTRAP_ROLE_NAME;
    let path = opts.data_dir.join(HBA_FILE);
    if !path.exists() {
        write_private_file(&path, default_hba(opts.auth).as_bytes())?;
        tracing::info!("created {} ({:?} defaults)", path.display(), opts.auth);
    }
    let authenticator = crate::auth::Authenticator::load(&path)?;
    authenticator.set_tls(load_tls(&engine.settings, &opts.data_dir)?);
    let has_password = engine
        .txn
        .catalog
        .role(BOOTSTRAP_ROLE_NAME)
        .is_some_and(|r| r.password.is_some());
    let wanted = opts.password_file.is_some() || opts.auth == DefaultAuth::Safe;
    if !has_password && wanted && !engine.is_standby() {
        let (password, generated) = match &opts.password_file {
            Some(file) => {
                let text = std::fs::read_to_string(file).map_err(|e| io_error(file, e))?;
                let first = text.lines().next().unwrap_or_default().to_string();
                if first.is_empty() {
                    return Err(Error::new(
                        crate::error::SqlState::INVALID_PARAMETER_VALUE,
                        format!("password file \"{}\" is empty", file.display()),
                    ));
                }
                (first, false)
            }
            None => (generate_password(), true),
        };
        set_bootstrap_password(engine, &password)?;
        if generated {
            println!(
                "The password of superuser \"{BOOTSTRAP_ROLE_NAME}\" is {password} (shown only now; change it with \\password in psql)."
            );
        }
    }
    Ok(authenticator)
}

/// The TLS configuration `ssl`, `ssl_cert_file`, `ssl_key_file` and `ssl_ca_file` ask
/// for (None when `ssl` is off).
fn load_tls(settings: &Settings, data_dir: &Path) -> Result<Option<crate::auth::tls::TlsConfig>> {
    if !settings.is("ssl", "on") {
        return Ok(None);
    }
    let file = |name: &str| data_dir.join(settings.show(name).unwrap_or_default());
    let ca_file = settings
        .show("ssl_ca_file")
        .filter(|f| !f.is_empty())
        .map(|f| data_dir.join(f));
    crate::auth::tls::server_config(
        &file("ssl_cert_file"),
        &file("ssl_key_file"),
        ca_file.as_deref(),
    )
    .map(Some)
}

fn write_private_file(path: &Path, contents: &[u8]) -> Result<()> {
    use std::io::Write;
    use std::os::unix::fs::OpenOptionsExt;
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(path)
        .map_err(|e| io_error(path, e))?;
    file.write_all(contents)
        .and_then(|_| file.sync_all())
        .map_err(|e| io_error(path, e))
}

/// 24 letters and digits from the OS's random source (about 143 bits).
fn generate_password() -> String {
    use rand::Rng;
    const ALPHABET: &[u8] = b"ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz23456789";
    let mut rng = rand::rngs::OsRng;
    (0..24)
        .map(|_| ALPHABET[rng.gen_range(0..ALPHABET.len())] as char)
        .collect()
}

/// ALTER ROLE of the bootstrap superuser's password, as that superuser.
fn set_bootstrap_password(engine: &Arc<Engine>, password: &str) -> Result<()> {
    use crate::storage::roles::BOOTSTRAP_ROLE_NAME;
    let mut session = crate::sql::Session::new(engine.clone());
    session.set_user(BOOTSTRAP_ROLE_NAME);
    let sql = format!(
        "ALTER ROLE {BOOTSTRAP_ROLE_NAME} PASSWORD '{}'",
        password.replace('\'', "''")
    );
    let result = session.prepare_simple(&sql).and_then(|stmts| {
        for stmt in stmts {
            session.execute(&stmt, &[])?;
        }
        Ok(())
    });
    session.close();
    result
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
    raise_descriptor_limit(settings.get_int("max_connections") as u64);
    let engine = Engine::open(settings.clone(), &opts.data_dir)?;
    let authenticator = Arc::new(prepare_authentication(&engine, &opts)?);
    let _ = engine.auth.set(authenticator.clone());
    {
        let weak = Arc::downgrade(&engine);
        std::thread::Builder::new()
            .name("autoanalyze".into())
            .spawn(move || crate::sql::run_autoanalyze(weak))
            .map_err(|e| Error::internal(format!("could not start the autoanalyze thread: {e}")))?;
    }
    {
        let (settings, conf, overrides) = (
            settings.clone(),
            opts.data_dir.join("steadydb.conf"),
            opts.overrides.clone(),
        );
        let data_dir = opts.data_dir.clone();
        let _ = engine.reload.set(Box::new(move || {
            reload(&settings, &conf, &overrides);
            authenticator.reload();
            match load_tls(&settings, &data_dir) {
                Ok(tls) => authenticator.set_tls(tls),
                Err(e) => tracing::warn!("{}; the SSL configuration was not reloaded", e.message),
            }
        }));
    }
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
    let cores = std::thread::available_parallelism().map_or(2, |n| n.get());
    let layout = workers::Layout::from_environment();
    let workers = Arc::new(workers::Workers::start(
        workers::runtime_count(cores),
        layout,
    )?);
    // The listeners and signals run on this thread; connections on the workers.
    let acceptor = tokio::runtime::Builder::new_current_thread()
        .enable_io()
        .enable_time()
        .build()
        .map_err(|e| Error::internal(format!("could not start runtime: {e}")))?;
    let served = acceptor.block_on(serve(addr, engine, settings, workers.clone()));
    drop(acceptor);
    drop(workers);
    served
}

async fn serve(
    addr: SocketAddr,
    engine: Arc<Engine>,
    settings: Arc<Settings>,
    workers: Arc<workers::Workers>,
) -> Result<()> {
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
        let workers = workers.clone();
        unix_accepts.spawn(async move {
            let mut failures = AcceptFailures::default();
            loop {
                match socket.listener.accept().await {
                    Ok((stream, _)) => {
                        failures.succeeded();
                        admit(stream, None, &engine, &workers, max_connections);
                    }
                    Err(e) => {
                        let place = format!("\"{}\"", socket.path.display());
                        failures.failed(&place, &e).await;
                    }
                }
            }
        });
    }
    let mut sigterm =
        signal(SignalKind::terminate()).map_err(|e| Error::internal(e.to_string()))?;
    let mut sigint = signal(SignalKind::interrupt()).map_err(|e| Error::internal(e.to_string()))?;
    let mut sighup = signal(SignalKind::hangup()).map_err(|e| Error::internal(e.to_string()))?;
    let mut sigusr1 =
        signal(SignalKind::user_defined1()).map_err(|e| Error::internal(e.to_string()))?;
    let mut failures = AcceptFailures::default();
    let place = addr.to_string();
    loop {
        tokio::select! {
            accepted = listener.accept() => {
                let (stream, peer) = match accepted {
                    Ok(x) => x,
                    Err(e) => {
                        failures.failed(&place, &e).await;
                        continue;
                    }
                };
                failures.succeeded();
                if let Err(e) = stream.set_nodelay(true) {
                    tracing::debug!(%peer, error = %e, "could not set TCP_NODELAY");
                }
                admit(stream, Some(peer), &engine, &workers, max_connections);
            }
            _ = sigterm.recv() => {
                tracing::info!("received SIGTERM, shutting down");
                break;
            }
            _ = sigint.recv() => {
                tracing::info!("received SIGINT, shutting down");
                break;
            }
            _ = sigusr1.recv() => {
                // `steadydb promote` leaves promote.signal and sends SIGUSR1.
                let signal_file = engine.data_dir.as_ref().map(|d| d.join(PROMOTE_SIGNAL));
                if let Some(path) = signal_file.filter(|p| p.exists()) {
                    let _ = std::fs::remove_file(&path);
                    let engine = engine.clone();
                    tokio::task::spawn_blocking(move || {
                        if let Err(e) = engine.promote() {
                            tracing::error!("promotion failed: {}", e.message);
                        }
                    });
                }
            }
            _ = sighup.recv() => {
                tracing::info!("received SIGHUP, reloading configuration files");
                let engine = engine.clone();
                tokio::task::spawn_blocking(move || engine.reload_config());
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

/// Failed accepts of one listener: each failure pauses the loop, longer while they go on
/// (out of descriptors, nothing but time frees one), and they are logged at most once a
/// second, with how many there were.
#[derive(Default)]
struct AcceptFailures {
    backoff_ms: u64,
    unlogged: u64,
    last_log: Option<std::time::Instant>,
}

impl AcceptFailures {
    async fn failed(&mut self, place: &str, e: &std::io::Error) {
        self.unlogged += 1;
        let due = self
            .last_log
            .is_none_or(|t| t.elapsed() >= std::time::Duration::from_secs(1));
        if due {
            tracing::warn!(
                "accept failed on {place}: {e} ({} time(s) since the last report)",
                self.unlogged
            );
            self.unlogged = 0;
            self.last_log = Some(std::time::Instant::now());
        }
        self.backoff_ms = (self.backoff_ms * 2).clamp(5, crate::constants::MAX_ACCEPT_BACKOFF_MS);
        tokio::time::sleep(std::time::Duration::from_millis(self.backoff_ms)).await;
    }

    fn succeeded(&mut self) {
        self.backoff_ms = 0;
    }
}

/// Events counted as they happen and reported at most once a second, with their count.
struct Throttled {
    count: std::sync::atomic::AtomicU64,
    last_report_ms: std::sync::atomic::AtomicU64,
}

impl Throttled {
    const fn new() -> Throttled {
        Throttled {
            count: std::sync::atomic::AtomicU64::new(0),
            last_report_ms: std::sync::atomic::AtomicU64::new(0),
        }
    }

    /// Count one event; returns the count to report when a report is due.
    fn hit(&self) -> Option<u64> {
        use std::sync::atomic::Ordering;
        static START: std::sync::OnceLock<std::time::Instant> = std::sync::OnceLock::new();
        self.count.fetch_add(1, Ordering::AcqRel);
        // Milliseconds since the first event, plus one so the first report is due at once.
        let now = START
            .get_or_init(std::time::Instant::now)
            .elapsed()
            .as_millis() as u64
            + 1001;
        let last = self.last_report_ms.load(Ordering::Acquire);
        if now.saturating_sub(last) < 1000 {
            return None;
        }
        self.last_report_ms
            .compare_exchange(last, now, Ordering::AcqRel, Ordering::Acquire)
            .ok()
            .map(|_| self.count.swap(0, Ordering::AcqRel))
    }
}

/// Connections refused for `max_connections`, reported at most once a second.
static REFUSALS_TO_REPORT: Throttled = Throttled::new();

/// Refused connections being answered now.
static REFUSALS_IN_FLIGHT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

/// Serve an accepted client as a task of its own, or refuse it (FATAL 53300) when
/// `max_connections` connections are open already, started or not: so the server runs
/// out of clients before it runs out of descriptors.
fn admit<S: workers::Movable>(
    stream: S,
    client: Option<SocketAddr>,
    engine: &Arc<Engine>,
    workers: &workers::Workers,
    max_connections: usize,
) {
    use std::sync::atomic::Ordering;
    // Accepted here, the socket is registered with this thread's I/O driver: it moves to
    // the driver of the runtime that will serve it (`workers::Movable`).
    let stream = match stream.detach() {
        Ok(stream) => stream,
        Err(e) => {
            tracing::warn!("could not hand an accepted connection to a worker: {e}");
            return;
        }
    };
    if crate::wire::open_connections() >= max_connections {
        let peer = client.map_or_else(|| "[local]".to_string(), |c| c.to_string());
        let refusing = REFUSALS_IN_FLIGHT.fetch_add(1, Ordering::AcqRel);
        if refusing >= crate::constants::MAX_REFUSALS_IN_FLIGHT {
            // A flood: close at once rather than hold a descriptor for each.
            REFUSALS_IN_FLIGHT.fetch_sub(1, Ordering::AcqRel);
            drop(stream);
            return;
        }
        if let Some(count) = REFUSALS_TO_REPORT.hit() {
            tracing::warn!(
                "too many connections; refusing {peer} ({count} refused since the last report)"
            );
        }
        workers.spawn_connection(async move {
            if let Ok(stream) = S::attach(stream) {
                crate::wire::refuse_connection(stream, "sorry, too many clients already").await;
            }
            REFUSALS_IN_FLIGHT.fetch_sub(1, Ordering::AcqRel);
        });
        return;
    }
    let engine = engine.clone();
    workers.spawn_connection(async move {
        match S::attach(stream) {
            Ok(stream) => crate::wire::serve_connection(stream, client, engine).await,
            Err(e) => tracing::warn!("could not register a connection with its worker: {e}"),
        }
    });
}

/// Raise the soft limit on open descriptors to the hard limit (as far as the process may),
/// and warn if even that leaves too few for `max_connections` clients and the server's own
/// files.
fn raise_descriptor_limit(max_connections: u64) {
    let mut limit = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit and setrlimit only read and write the struct passed.
    if unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) } != 0 {
        return;
    }
    if limit.rlim_cur < limit.rlim_max {
        let raised = libc::rlimit {
            rlim_cur: limit.rlim_max,
            rlim_max: limit.rlim_max,
        };
        // SAFETY: as above.
        if unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, &raised) } == 0 {
            limit = raised;
        }
    }
    let needed = max_connections + crate::constants::RESERVED_FILE_DESCRIPTORS;
    if limit.rlim_cur < needed {
        tracing::warn!(
            "the open file limit ({}) is below max_connections ({max_connections}) plus {} for the server's own files: connections may fail to be accepted",
            limit.rlim_cur,
            crate::constants::RESERVED_FILE_DESCRIPTORS
        );
    }
}
