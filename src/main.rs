//! The `steadydb` binary: `steadydb server [-D DIR] [-p PORT] [-c name=value]...`.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

/// Every statement allocates and frees many small buffers, often freed on another worker
/// thread than the one that allocated them; mimalloc's per-thread free lists make that
/// cheaper than the system allocator's locked arenas.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

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
    match cli.command {
        Command::Server {
            data_dir,
            port,
            settings,
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
    }
}
