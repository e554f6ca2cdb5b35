//! Shared helpers for the integration tests: start the `steadydb` binary on a
//! free port with a fresh data directory, or use an external server given by
//! `STEADYDB_TEST_EXTERNAL` (a libpq-style string such as
//! `host=127.0.0.1 port=5432 user=postgres`).
#![allow(dead_code)]

use std::fs::File;
use std::net::TcpListener;
use std::path::PathBuf;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use tokio_postgres::{Client, NoTls};

pub const EXTERNAL_ENV: &str = "STEADYDB_TEST_EXTERNAL";
const READY_TIMEOUT: Duration = Duration::from_secs(30);
const STOP_TIMEOUT: Duration = Duration::from_secs(10);
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

pub struct TestServer {
    conninfo: String,
    child: Option<Child>,
    dir: Option<PathBuf>,
    log: Option<PathBuf>,
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .expect("bind an ephemeral port")
        .local_addr()
        .expect("local addr")
        .port()
}

fn fresh_dir() -> PathBuf {
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0);
    let dir = std::env::temp_dir().join(format!(
        "steadydb-test-{}-{}-{}",
        std::process::id(),
        nanos,
        rand::random::<u32>()
    ));
    std::fs::create_dir_all(&dir).expect("create temp dir");
    dir
}

async fn try_connect(conninfo: &str) -> Result<Client, String> {
    let fut = tokio_postgres::connect(conninfo, NoTls);
    let (client, connection) = tokio::time::timeout(CONNECT_TIMEOUT, fut)
        .await
        .map_err(|_| "connect timed out".to_string())?
        .map_err(|e| e.to_string())?;
    tokio::spawn(async move {
        let _ = connection.await;
    });
    Ok(client)
}

async fn ready(conninfo: &str) -> bool {
    match try_connect(conninfo).await {
        Ok(client) => {
            matches!(
                tokio::time::timeout(Duration::from_secs(5), client.simple_query("select 1")).await,
                Ok(Ok(_))
            )
        }
        Err(_) => false,
    }
}

impl TestServer {
    /// Start the server under test (or attach to the external one).
    pub async fn start() -> TestServer {
        if let Ok(ext) = std::env::var(EXTERNAL_ENV) {
            let mut conninfo = ext.trim().to_string();
            if !conninfo.contains("dbname=") {
                conninfo.push_str(" dbname=postgres");
            }
            if !conninfo.contains("user=") {
                conninfo.push_str(" user=postgres");
            }
            assert!(
                ready(&conninfo).await,
                "external server {conninfo:?} is not reachable"
            );
            return TestServer {
                conninfo,
                child: None,
                dir: None,
                log: None,
            };
        }

        let bin = env!("CARGO_BIN_EXE_steadydb");
        let dir = fresh_dir();
        let datadir = dir.join("data");
        let log_path = dir.join("server.log");
        let mut last_err = String::new();
        for _attempt in 0..3 {
            let port = free_port();
            let log = File::options()
                .create(true)
                .append(true)
                .open(&log_path)
                .expect("open server log");
            let log2 = log.try_clone().expect("clone log handle");
            let mut child = Command::new(bin)
                .arg("server")
                .args(["--auth", "trust"])
                .arg("-D")
                .arg(&datadir)
                .arg("-p")
                .arg(port.to_string())
                .stdin(Stdio::null())
                .stdout(log)
                .stderr(log2)
                .spawn()
                .unwrap_or_else(|e| panic!("cannot start {bin}: {e}"));
            let conninfo = format!("host=127.0.0.1 port={port} user=postgres dbname=postgres");
            let deadline = Instant::now() + READY_TIMEOUT;
            let mut exited = None;
            while Instant::now() < deadline {
                if let Some(status) = child.try_wait().expect("try_wait") {
                    exited = Some(status);
                    break;
                }
                if ready(&conninfo).await {
                    return TestServer {
                        conninfo,
                        child: Some(child),
                        dir: Some(dir),
                        log: Some(log_path),
                    };
                }
                tokio::time::sleep(Duration::from_millis(200)).await;
            }
            match exited {
                Some(status) => {
                    last_err = format!("server exited during startup with {status}");
                }
                None => {
                    let _ = child.kill();
                    let _ = child.wait();
                    last_err = "server not ready within 30 s".to_string();
                    break;
                }
            }
        }
        let log = std::fs::read_to_string(&log_path).unwrap_or_default();
        panic!("{last_err}\n--- server log\n{log}");
    }

    pub fn is_external(&self) -> bool {
        self.child.is_none()
    }

    pub fn conninfo(&self) -> &str {
        &self.conninfo
    }

    pub async fn connect(&self) -> Client {
        try_connect(&self.conninfo)
            .await
            .unwrap_or_else(|e| panic!("connect {}: {e}\n{}", self.conninfo, self.log_tail()))
    }

    pub fn log_tail(&self) -> String {
        match &self.log {
            Some(p) => {
                let text = std::fs::read_to_string(p).unwrap_or_default();
                let lines: Vec<&str> = text.lines().collect();
                let start = lines.len().saturating_sub(60);
                lines[start..].join("\n")
            }
            None => String::new(),
        }
    }

    /// Stop with SIGTERM and check a clean exit within 10 s.
    pub fn stop(mut self) {
        if let Some(status) = self.terminate() {
            assert!(
                status.success(),
                "server exited with {status} after SIGTERM\n{}",
                self.log_tail()
            );
        }
        self.cleanup_dir();
    }

    fn terminate(&mut self) -> Option<ExitStatus> {
        let mut child = self.child.take()?;
        if let Some(status) = child.try_wait().expect("try_wait") {
            panic!(
                "server died during the test with {status}\n{}",
                self.log_tail()
            );
        }
        let ok = Command::new("kill")
            .arg("-TERM")
            .arg(child.id().to_string())
            .status()
            .map(|s| s.success())
            .unwrap_or(false);
        assert!(ok, "could not send SIGTERM");
        let deadline = Instant::now() + STOP_TIMEOUT;
        loop {
            if let Some(status) = child.try_wait().expect("try_wait") {
                return Some(status);
            }
            if Instant::now() >= deadline {
                let _ = child.kill();
                let _ = child.wait();
                panic!(
                    "server did not exit within 10 s of SIGTERM\n{}",
                    self.log_tail()
                );
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    fn cleanup_dir(&mut self) {
        if let Some(dir) = self.dir.take() {
            let _ = std::fs::remove_dir_all(dir);
        }
    }
}

impl Drop for TestServer {
    fn drop(&mut self) {
        // Reached only when a test panicked before calling stop().
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
            eprintln!("--- server log\n{}", self.log_tail());
        }
        self.cleanup_dir();
    }
}

/// A table name no other test uses.
pub fn unique_table(prefix: &str) -> String {
    format!(
        "{prefix}_{}_{:08x}",
        std::process::id(),
        rand::random::<u32>()
    )
}
