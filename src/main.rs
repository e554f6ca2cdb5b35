//! The `steadydb` binary: `steadydb server [-D DIR] [-p PORT] [-c name=value]...`.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

/// Every statement allocates and frees many small buffers, often freed on another worker
/// thread than the one that allocated them; mimalloc's per-thread free lists make that
/// cheaper than the system allocator's locked arenas. Counted per thread, so that a
/// prepared statement is charged the memory it holds (`steadydb::memory`).
#[global_allocator]
static ALLOCATOR: steadydb::memory::CountingAllocator<mimalloc::MiMalloc> =
    steadydb::memory::CountingAllocator(mimalloc::MiMalloc);

extern "C" {
    /// mimalloc's collection: frees what the calling thread's heap holds unused and purges
    /// the free memory of the arenas, process-wide, whose purge delay has passed.
    fn mi_collect(force: bool);
}

/// Give memory freed by any thread back to the system within about a second. mimalloc
/// purges freed memory only from a thread that allocates or collects; worker threads idle
/// after a session that held much memory (a million prepared statements) never would.
fn start_memory_return() {
    let started = std::thread::Builder::new()
        .name("memory-return".into())
        .spawn(|| loop {
            std::thread::sleep(steadydb::constants::MEMORY_RETURN_INTERVAL);
            // SAFETY: mi_collect takes no pointers and may be called from any thread.
            unsafe { mi_collect(false) };
        });
    if let Err(e) = started {
        tracing::warn!("could not start the thread that returns freed memory: {e}");
    }
}

#[derive(Parser)]
#[command(
    name = "steadydb",
    version,
    about = "A PostgreSQL-compatible OLTP database server"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Run the database server.
    Server {
        /// Data directory (created if missing).
        #[arg(short = 'D', long = "data-dir", default_value = steadydb::constants::DEFAULT_DATA_DIR)]
        data_dir: PathBuf,
        /// TCP port to listen on (default 5433, or `port` in steadydb.conf).
        #[arg(short = 'p', long = "port")]
        port: Option<u16>,
        /// Set a configuration parameter, as `-c name=value`; may be repeated.
        #[arg(short = 'c', value_name = "NAME=VALUE")]
        settings: Vec<String>,
        /// What a new data directory's pg_hba.conf allows: scram-sha-256 (peer for local
        /// connections, SCRAM passwords over TCP from this machine) or trust (everyone on
        /// this machine, for tests).
        #[arg(long = "auth", value_name = "METHOD", default_value = "scram-sha-256",
              value_parser = ["scram-sha-256", "trust"])]
        auth: String,
        /// Read the superuser's first password from this file (else one is generated).
        #[arg(long = "pwfile", value_name = "FILE")]
        pwfile: Option<PathBuf>,
    },
    /// Promote the standby running in a data directory to a primary.
    Promote {
        /// The standby's data directory.
        #[arg(short = 'D', long = "data-dir", default_value = steadydb::constants::DEFAULT_DATA_DIR)]
        data_dir: PathBuf,
        /// Seconds to wait for the promotion to complete.
        #[arg(short = 't', long = "timeout", default_value_t = 60)]
        timeout: u64,
    },
    /// Make a standby's data directory from a running primary (a base backup).
    #[command(disable_help_flag = true)]
    Basebackup {
        /// Print help.
        #[arg(long = "help", action = clap::ArgAction::Help)]
        help: Option<bool>,
        /// The primary's host.
        #[arg(short = 'h', long = "host", default_value = "127.0.0.1")]
        host: String,
        /// The primary's port.
        #[arg(short = 'p', long = "port", default_value_t = 5433)]
        port: u16,
        /// The user to connect as.
        #[arg(short = 'U', long = "username", default_value = "postgres")]
        user: String,
        /// The new standby's data directory (must not exist, or be empty).
        #[arg(short = 'D', long = "data-dir")]
        data_dir: PathBuf,
        /// A physical replication slot for the standby (created if missing).
        #[arg(short = 'S', long = "slot")]
        slot: Option<String>,
        /// The standby's application_name, the name synchronous_standby_names lists.
        #[arg(long = "application-name", default_value = "walreceiver")]
        application_name: String,
        /// More connection settings, in libpq's keyword=value form (sslmode=verify-full
        /// sslrootcert=ca.crt ...); they override the options above and go into the
        /// standby's primary_conninfo (a password never does).
        #[arg(short = 'd', long = "dbname")]
        conninfo: Option<String>,
    },
}

fn main() -> ExitCode {
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_env("STEADYDB_LOG")
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info")),
        )
        .with_writer(std::io::stderr)
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        // A log line that cannot be written (a full disk under a redirected stderr) is
        // dropped. Reporting it would go through `eprintln!`, which panics when stderr
        // fails, and so end the connection whose statement was being logged.
        .log_internal_errors(false)
        .init();
    let cli = Cli::parse();
    start_memory_return();
    match cli.command {
        Command::Server {
            data_dir,
            port,
            settings,
            auth,
            pwfile,
        } => {
            let mut overrides = Vec::new();
            for s in settings {
                match s.split_once('=') {
                    Some((n, v)) => overrides.push((n.trim().to_string(), v.trim().to_string())),
                    None => {
                        eprintln!("steadydb: -c {s} requires a value (-c name=value)");
                        return ExitCode::from(2);
                    }
                }
            }
            let opts = steadydb::server::ServerOptions {
                data_dir,
                port,
                overrides,
                auth: match auth.as_str() {
                    "trust" => steadydb::auth::DefaultAuth::Trust,
                    _ => steadydb::auth::DefaultAuth::Safe,
                },
                password_file: pwfile,
            };
            match steadydb::server::run(opts) {
                Ok(()) => ExitCode::SUCCESS,
                Err(e) => {
                    tracing::error!("{}", e.message);
                    eprintln!("steadydb: {}", e.message);
                    ExitCode::FAILURE
                }
            }
        }
        Command::Promote { data_dir, timeout } => {
            let wait = std::time::Duration::from_secs(timeout);
            match steadydb::server::promote(&data_dir, wait) {
                Ok(()) => {
                    eprintln!("server promoted");
                    ExitCode::SUCCESS
                }
                Err(e) => {
                    eprintln!("steadydb promote: {}", e.message);
                    ExitCode::FAILURE
                }
            }
        }
        Command::Basebackup {
            help: _,
            host,
            port,
            user,
            data_dir,
            slot,
            application_name,
            conninfo,
        } => {
            let opts = steadydb::repl::basebackup::BackupOptions {
                host,
                port,
                user,
                data_dir,
                slot,
                application_name,
                conninfo,
            };
            match steadydb::repl::basebackup::run(&opts) {
                Ok(()) => ExitCode::SUCCESS,
                Err(e) => {
                    eprintln!("steadydb basebackup: {}", e.message);
                    ExitCode::FAILURE
                }
            }
        }
    }
}
