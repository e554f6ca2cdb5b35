//! The threads that serve connections: one async runtime per core, each with one worker
//! thread and its own I/O driver.
//!
//! A connection is a task (see `wire`). Where it runs decides how a request reaches it:
//! with one runtime shared by every core, a socket's readiness is seen by whichever worker
//! holds the runtime's one I/O driver, which queues the task and wakes another worker to
//! steal it: two thread wake-ups per request, and cores that spin looking for work. On a
//! 16-core machine at 32 clients that left 45% of the CPUs idle while `select_pk` ran at
//! 0.38 of PostgreSQL's rate (docs/perf-log.md). With a runtime per core, a connection
//! stays on the runtime it was placed on; the kernel wakes exactly the thread whose epoll
//! holds the socket, which reads, runs the statement and replies, as a PostgreSQL backend
//! does, with one wake-up per request.
//!
//! # Invariants
//!
//! - **A socket is polled by the runtime that serves it.** The acceptor's thread accepts
//!   it, so tokio registered it with the acceptor's I/O driver; it is deregistered there
//!   and registered again by its task on its own runtime ([`Movable`]).
//! - **A new connection goes to the runtime serving the fewest connections**, counted
//!   from its start to its end, so that the runtimes' loads stay within one connection of
//!   each other while connections come and go.
//! - **No connection waits behind a long statement of another.** Nothing steals work
//!   between runtimes, so a statement that runs long hands its runtime's core to a fresh
//!   thread ([`crate::wal::release_core`], called by the statement's checks between rows,
//!   once it has run [`crate::constants::STATEMENT_CORE_RELEASE_US`]) and finishes on its
//!   own thread, as a wait does through [`crate::wal::blocking`]. Each runtime is a
//!   multi-threaded one with one worker for exactly this: a current-thread runtime could
//!   not hand its core on.
//! - **Parked workers are counted** (`wire::reply_batch::note_worker_parked`): a reply
//!   is batched with others only while no core is idle.
//!
//! `STEADYDB_RUNTIME_LAYOUT=shared` in the server's environment selects the former layout,
//! one runtime whose workers steal from each other, for measurements side by side.

use std::future::Future;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use crate::error::{Error, Result};

/// The runtimes that serve connections and how many connections each serves.
pub struct Workers {
    runtimes: Vec<tokio::runtime::Runtime>,
    connections: Vec<Arc<AtomicUsize>>,
}

/// How connections are spread over threads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Layout {
    /// One runtime with one worker per core; tasks move between workers.
    Shared,
    /// One runtime per core with one worker each; a task stays on its runtime.
    PerCore,
}

impl Layout {
    /// The layout the environment asks for: per core unless
    /// `STEADYDB_RUNTIME_LAYOUT=shared`.
    pub fn from_environment() -> Layout {
        match std::env::var("STEADYDB_RUNTIME_LAYOUT") {
            Ok(v) if v == "shared" => Layout::Shared,
            _ => Layout::PerCore,
        }
    }
}

/// How many worker threads to start on a machine with `cores` CPUs: one per core, unless
/// `STEADYDB_WORKER_THREADS` in the environment names another count (for measuring
/// layouts with more threads than cores; at most [`MAX_WORKER_THREADS`]).
pub fn runtime_count(cores: usize) -> usize {
    match std::env::var("STEADYDB_WORKER_THREADS")
        .ok()
        .and_then(|v| v.parse::<usize>().ok())
    {
        Some(n) if n > 0 => n.min(MAX_WORKER_THREADS),
        _ => cores,
    }
}

/// The most worker threads `STEADYDB_WORKER_THREADS` may ask for.
pub const MAX_WORKER_THREADS: usize = 1024;

impl Workers {
    /// Start the worker threads: `cores` of them, in `layout`.
    pub fn start(cores: usize, layout: Layout) -> Result<Workers> {
        let cores = cores.max(1);
        let (count, workers_each) = match layout {
            Layout::Shared => (1, cores),
            Layout::PerCore => (cores, 1),
        };
        let mut runtimes = Vec::with_capacity(count);
        for i in 0..count {
            let runtime = tokio::runtime::Builder::new_multi_thread()
                .worker_threads(workers_each)
                .thread_name(if count == 1 {
                    "steadydb-worker".to_string()
                } else {
                    format!("steadydb-worker-{i}")
                })
                // Statements run on these threads' stacks (deeply nested expressions recurse).
                .thread_stack_size(crate::constants::CONNECTION_STACK_BYTES)
                .on_thread_park(|| crate::wire::note_worker_parked(true))
                .on_thread_unpark(|| crate::wire::note_worker_parked(false))
                .enable_io()
                .enable_time()
                .build()
                .map_err(|e| Error::internal(format!("could not start runtime: {e}")))?;
            runtimes.push(runtime);
        }
        let connections = (0..count).map(|_| Arc::new(AtomicUsize::new(0))).collect();
        tracing::debug!(?layout, runtimes = count, "worker threads started");
        Ok(Workers {
            runtimes,
            connections,
        })
    }

    /// Run `connection` to its end on the runtime serving the fewest connections.
    pub fn spawn_connection<F>(&self, connection: F)
    where
        F: Future<Output = ()> + Send + 'static,
    {
        let (index, count) = self
            .connections
            .iter()
            .enumerate()
            .min_by_key(|(_, c)| c.load(Ordering::Relaxed))
            .expect("at least one runtime");
        let counted = Counted(count.clone());
        counted.0.fetch_add(1, Ordering::Relaxed);
        self.runtimes[index].spawn(async move {
            let _counted = counted;
            connection.await;
        });
    }

    /// How many connections each runtime serves now.
    #[cfg(test)]
    pub fn connections_per_runtime(&self) -> Vec<usize> {
        self.connections
            .iter()
            .map(|c| c.load(Ordering::Relaxed))
            .collect()
    }
}

/// A socket that can leave the I/O driver of the runtime that accepted it (the
/// acceptor's) for that of the runtime that serves it: a tokio socket is polled by the
/// driver it was registered with, so without the move every connection's readiness would
/// go through the acceptor's thread.
pub trait Movable: crate::wire::Transport + Sized + 'static {
    type Detached: Send + 'static;
    /// Deregister from the current driver (the socket stays open and nonblocking).
    fn detach(self) -> std::io::Result<Self::Detached>;
    /// Register with the current runtime's driver: call on the runtime that serves it.
    fn attach(socket: Self::Detached) -> std::io::Result<Self>;
}

impl Movable for tokio::net::TcpStream {
    type Detached = std::net::TcpStream;
    fn detach(self) -> std::io::Result<std::net::TcpStream> {
        self.into_std()
    }
    fn attach(socket: std::net::TcpStream) -> std::io::Result<Self> {
        tokio::net::TcpStream::from_std(socket)
    }
}

impl Movable for tokio::net::UnixStream {
    type Detached = std::os::unix::net::UnixStream;
    fn detach(self) -> std::io::Result<std::os::unix::net::UnixStream> {
        self.into_std()
    }
    fn attach(socket: std::os::unix::net::UnixStream) -> std::io::Result<Self> {
        tokio::net::UnixStream::from_std(socket)
    }
}

impl Drop for Workers {
    fn drop(&mut self) {
        // A statement moved off its worker (`wal::release_core`) runs on a blocking
        // thread; shutdown waits for it a while, not for ever.
        for runtime in self.runtimes.drain(..) {
            runtime.shutdown_timeout(std::time::Duration::from_secs(5));
        }
    }
}

/// A connection counted on its runtime until it ends (or its task is dropped).
struct Counted(Arc<AtomicUsize>);

impl Drop for Counted {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::Relaxed);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::{Duration, Instant};

    #[test]
    fn connections_go_to_the_least_loaded_runtime() {
        let workers = Workers::start(3, Layout::PerCore).expect("workers");
        let (release, released) = std::sync::mpsc::channel::<()>();
        let released = Arc::new(parking_lot::Mutex::new(released));
        // Five long connections, then one that ends at once.
        for _ in 0..5 {
            let released = released.clone();
            workers.spawn_connection(async move {
                while released.lock().try_recv().is_err() {
                    tokio::time::sleep(Duration::from_millis(1)).await;
                }
            });
        }
        let mut loads = workers.connections_per_runtime();
        loads.sort_unstable();
        assert_eq!(loads, vec![1, 2, 2]);
        workers.spawn_connection(async {});
        let deadline = Instant::now() + Duration::from_secs(10);
        while workers.connections_per_runtime().iter().sum::<usize>() != 5 {
            assert!(
                Instant::now() < deadline,
                "a finished connection is still counted"
            );
            std::thread::sleep(Duration::from_millis(1));
        }
        for _ in 0..5 {
            let _ = release.send(());
        }
        while workers.connections_per_runtime().iter().sum::<usize>() != 0 {
            assert!(
                Instant::now() < deadline,
                "connections still counted after their end"
            );
            std::thread::sleep(Duration::from_millis(1));
        }
    }

    #[test]
    fn a_long_poll_releases_its_core_to_the_other_connections() {
        // One runtime, one worker: a task that runs without yielding, calling
        // release_core early on, must not hold up a second task on the same runtime. The
        // long task runs until the short one has finished (or 10 s, when it cannot), so
        // the order does not depend on how soon a busy machine schedules the threads.
        let workers = Workers::start(1, Layout::PerCore).expect("workers");
        let (done, finished) = std::sync::mpsc::channel::<(&'static str, Instant)>();
        let long_done = done.clone();
        let short_finished = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let short_flag = short_finished.clone();
        let (started, long_started) = std::sync::mpsc::channel::<()>();
        workers.spawn_connection(async move {
            let _ = started.send(());
            let start = Instant::now();
            crate::wal::release_core();
            while !short_finished.load(Ordering::Acquire)
                && start.elapsed() < Duration::from_secs(10)
            {
                std::hint::spin_loop();
            }
            let _ = long_done.send(("long", Instant::now()));
        });
        long_started
            .recv_timeout(Duration::from_secs(10))
            .expect("the long task started");
        workers.spawn_connection(async move {
            let _ = done.send(("short", Instant::now()));
            short_flag.store(true, Ordering::Release);
        });
        let (first, _) = finished
            .recv_timeout(Duration::from_secs(30))
            .expect("a task finished");
        assert_eq!(first, "short", "the short task waited for the long one");
    }
}
