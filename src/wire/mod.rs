//! The PostgreSQL wire protocol (version 3.0, PostgreSQL 15 semantics).
//!
//! Each client connection is a task on one of the server's runtimes (one per core, each
//! with one worker thread: `server::workers`), not a thread of its own: the server layer accepts a socket and spawns
//! [`serve_connection`]. The connection owns one [`Session`](crate::sql::Session) and
//! translates protocol messages into calls on it. Statements run synchronously inside the
//! task; a task yields only where it waits: on the socket, and for its commit to become
//! durable and visible ([`Session::finish_commit`](crate::sql::Session::finish_commit)).
//! That is what lets one flush release hundreds of commits without a thread wake-up each.
//! The rare waits inside a statement (a row lock, DDL) block their worker thread through
//! [`blocking`](crate::wal::blocking), which first hands the worker's other tasks on.
//!
//! Modules:
//! - `frontend`: strict decoding of client messages and the read buffer;
//! - `backend`: encoding of server messages and the write buffer;
//! - `startup`: SSLRequest (TLS when `ssl = on`, else refused), GSSENC refusal,
//!   CancelRequest, StartupMessage, the greeting;
//! - `stream`: the socket, or TLS over it;
//! - `auth`: the authentication exchange its `pg_hba.conf` line asks for;
//! - `connection`: the message loop and the simple query protocol;
//! - `extended`: Parse/Bind/Describe/Execute/Close and portals (the statements they name
//!   are the session's: `sql::Session::parse_statement`);
//! - `copy`: COPY FROM STDIN;
//! - `reply_batch`: the replies of many connections sent with one system call.
//!
//! # Invariants
//!
//! - **Bytes from the network never cause a panic.** Every read in the decoder is
//!   bounds-checked, every count and length is checked against the bytes that remain, and
//!   every string must be valid UTF-8 (else `22021 invalid byte sequence for encoding
//!   "UTF8"`). Message lengths are checked against [`MAX_MESSAGE_BYTES`] (or a 10 kB limit
//!   for the types that only carry names) from the header, before any of the body is
//!   buffered, so an oversized claim is refused without allocating it.
//! - **Framing errors are fatal, body errors are not.** An unknown message type or an
//!   invalid length leaves the stream impossible to re-synchronise: FATAL 08P01 and close.
//!   A malformed body of a known type still has a valid length, so it is an ERROR 08P01
//!   and the connection carries on (skipping to Sync in the extended protocol).
//! - **Replies are batched.** Messages accumulate in one write buffer, which always ends on
//!   a message boundary, and reach the socket only at ReadyForQuery, at Flush, on entering
//!   COPY IN, before blocking on a read with nothing left to parse, or when the buffer
//!   passes [`WIRE_WRITE_BUFFER_BYTES`]. Reads fetch large chunks, so pipelined messages
//!   are parsed without a syscall each. While other connections are busy too, the reply
//!   that ends a round trip goes out with theirs in one system call (`reply_batch`).
//! - **After an error in the extended protocol, messages are discarded until Sync**, which
//!   answers ReadyForQuery. An error in a simple query skips its remaining statements.
//! - **Portals die with their transaction** (at the Sync or statement that ends it, as
//!   PostgreSQL closes non-holdable portals at commit and rollback); a simple Query
//!   destroys the unnamed statement and portal. Named statements live until Close or
//!   DEALLOCATE; a session holds a bounded number of them, a connection of named portals.
//! - **The wire layer speaks the protocol only.** It runs no statement itself: every
//!   statement, DEALLOCATE included, goes to the session, and a result's tag comes typed
//!   (`sql::RowsTag`), counted as the rows this Execute sent.
//! - **The server never crashes because of one connection.** A panic in a lower layer is
//!   caught per connection and becomes FATAL XX000 to that client and a closed connection.
//! - **The session is always closed** (its transaction rolled back, its locks released)
//!   when the connection ends, however it ends.
//! - **Shutdown never corrupts a reply.** [`shutdown_all_connections`] raises a flag that
//!   each connection sees when it next waits for its client; the connection itself then
//!   sends FATAL 57P01 between two whole replies. A commit already started is finished
//!   first.
//!
//! # Use of `pgwire`
//!
//! `pgwire` is used only to *encode* backend messages (`pgwire::messages`). Its frontend
//! decoders are deliberately not used: they read with `get_u16()`/`get_i32()` on buffers
//! whose length they have not checked (a truncated body panics) and decode strings lossily
//! (invalid UTF-8 silently becomes U+FFFD, where PostgreSQL reports 22021). Both would
//! break the first invariant, so `frontend` is our own strict decoder.
//!
//! # Choices visible to clients
//!
//! - `server_version` is `15.0 (SteadyDB <version>)`: libpq parses the leading `15.0` as
//!   version 150000, so psql, pgbench and drivers use their PostgreSQL 15 behaviour (for
//!   example pgbench's `COPY ... WITH (FREEZE ON)`).
//! - SSL and GSS encryption requests are refused with `N`; authentication is trust.
//! - NegotiateProtocolVersion (sent for a minor version above 0 or unknown `_pq_.`
//!   options) carries the full version number of 3.0, as PostgreSQL sends it and libpq
//!   expects it.
//! - `client_encoding` may be UTF8 or SQL_ASCII (no conversion, which on a UTF8 server is
//!   the same); other encodings are refused with FATAL 0A000. Other startup options (GUCs)
//!   are ignored.
//! - The FunctionCall message is answered with ERROR 0A000.

mod auth;
mod backend;
mod basebackup;
mod connection;
mod copy;
mod extended;
mod frontend;
pub mod reply_batch;
mod startup;
mod stream;
#[cfg(test)]
mod test_support;
mod walsender;

use std::collections::HashMap;
use std::future::Future;
use std::panic::{self, AssertUnwindSafe};
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use parking_lot::Mutex;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

#[cfg(doc)]
use crate::constants::{MAX_MESSAGE_BYTES, WIRE_WRITE_BUFFER_BYTES};
use crate::engine::Engine;
use crate::error::{Error, SqlState};

use backend::{error_response_bytes, Severity};
pub use connection::Transport;
use connection::{Io, Protocol, Shared};
pub use reply_batch::note_worker_parked;

/// How long [`shutdown_all_connections`] waits for connections to finish (and close their
/// sessions) after it asked them to.
const SHUTDOWN_DRAIN_WAIT: Duration = Duration::from_secs(5);

/// A live connection, as the registry sees it.
struct Registered {
    shared: Arc<Shared>,
    engine: Arc<Engine>,
}

struct Registry {
    next_id: AtomicU64,
    live: Mutex<HashMap<u64, Registered>>,
}

fn registry() -> &'static Registry {
    static REGISTRY: OnceLock<Registry> = OnceLock::new();
    REGISTRY.get_or_init(|| Registry {
        next_id: AtomicU64::new(1),
        live: Mutex::new(HashMap::new()),
    })
}

/// Connections being served now, started or not (each holds a descriptor).
pub fn open_connections() -> usize {
    registry().live.lock().len()
}

/// Removes a connection from the registry when dropped (even during a panic).
struct Registration(u64);

impl Registration {
    fn new(entry: Registered) -> Registration {
        let reg = registry();
        let id = reg.next_id.fetch_add(1, Ordering::Relaxed);
        reg.live.lock().insert(id, entry);
        Registration(id)
    }
}

impl Drop for Registration {
    fn drop(&mut self) {
        registry().live.lock().remove(&self.0);
    }
}

fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    if let Some(s) = payload.downcast_ref::<&str>() {
        (*s).to_owned()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "unknown panic".to_owned()
    }
}

/// A future that turns a panic while polling its inner future into an `Err`.
struct CatchUnwind<F>(F);

impl<F: Future + Unpin> Future for CatchUnwind<F> {
    type Output = Result<F::Output, Box<dyn std::any::Any + Send>>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let inner = &mut self.0;
        match panic::catch_unwind(AssertUnwindSafe(|| Pin::new(inner).poll(cx))) {
            Ok(Poll::Pending) => Poll::Pending,
            Ok(Poll::Ready(v)) => Poll::Ready(Ok(v)),
            Err(payload) => Poll::Ready(Err(payload)),
        }
    }
}

/// Serve one client connection until it terminates. Runs as a task. `peer` names the
/// client in the log: its address, or `[local]` for a Unix-domain socket.
pub async fn serve_connection<S: Transport + 'static>(
    stream: S,
    client: Option<std::net::SocketAddr>,
    engine: Arc<Engine>,
) {
    let peer = client.map_or_else(|| "[local]".to_string(), |c| c.to_string());
    tracing::debug!(%peer, "connection received");
    let shared = Arc::new(Shared::new());
    let _registration = Registration::new(Registered {
        shared: shared.clone(),
        engine: engine.clone(),
    });
    let mut io = Io::new(stream, shared);
    let mut protocol: Option<Protocol> = None;
    // The session's TimeZone lives in this task (`types::zone`).
    let outcome = CatchUnwind(Box::pin(crate::types::zone::session_scope(
        connection::run(&mut io, &engine, client, &mut protocol),
    )))
    .await;
    if let Err(payload) = outcome {
        let message = panic_message(payload.as_ref());
        tracing::error!(%peer, "connection terminated by an internal error: {message}");
        let err = Error::internal(format!("internal error: {message}"));
        io.output.error(&err, Severity::Fatal);
        io.flush().await;
    }
    if let Some(mut state) = protocol {
        let closed = panic::catch_unwind(AssertUnwindSafe(|| state.session.close()));
        if let Err(payload) = closed {
            let message = panic_message(payload.as_ref());
            tracing::error!(%peer, "closing the session failed: {message}");
        }
    }
    tracing::debug!(%peer, "connection closed");
}

/// Refuse a connection before startup (e.g. too many clients): read its startup packet
/// so the client is listening, answer FATAL 53300, and close. An SSLRequest or GSSENC
/// request first is declined ('N') as on an admitted connection, so the client sends its
/// startup packet and reads the refusal as an error, not as a failed TLS exchange.
pub async fn refuse_connection<S: Transport>(mut stream: S, message: &str) {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(5);
    let mut buf = [0u8; 1024];
    for _ in 0..3 {
        let read = tokio::time::timeout_at(deadline, stream.read(&mut buf)).await;
        let Ok(Ok(n)) = read else {
            break;
        };
        let code = (n == 8).then(|| u32::from_be_bytes([buf[4], buf[5], buf[6], buf[7]]));
        match code {
            Some(frontend::SSL_REQUEST_CODE) | Some(frontend::GSSENC_REQUEST_CODE) => {
                if stream.write_all(b"N").await.is_err() {
                    return;
                }
            }
            _ => break,
        }
    }
    let err = Error::new(SqlState::TOO_MANY_CONNECTIONS, message);
    let _ = stream
        .write_all(&error_response_bytes(&err, Severity::Fatal))
        .await;
    let _ = stream.shutdown().await;
}

/// Shut down every open connection (used at server shutdown): each one sends FATAL 57P01
/// "terminating connection due to administrator command" when it next waits for its
/// client, and closes.
///
/// The running statement of each session is canceled, and the call waits (at most
/// `SHUTDOWN_DRAIN_WAIT`) for the connections to close their sessions.
pub async fn shutdown_all_connections() {
    let reg = registry();
    let live: Vec<(Arc<Shared>, Arc<Engine>)> = reg
        .live
        .lock()
        .values()
        .map(|e| (e.shared.clone(), e.engine.clone()))
        .collect();
    if live.is_empty() {
        return;
    }
    tracing::debug!(connections = live.len(), "shutting down connections");
    for (shared, engine) in live {
        shared.request_stop();
        let key = *shared.backend_key.lock();
        if let Some((pid, secret)) = key {
            if panic::catch_unwind(AssertUnwindSafe(|| engine.cancel(pid, secret))).is_err() {
                tracing::error!(pid, "canceling the session's statement failed");
            }
        }
    }
    let deadline = Instant::now() + SHUTDOWN_DRAIN_WAIT;
    while !reg.live.lock().is_empty() && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let left = reg.live.lock().len();
    if left > 0 {
        tracing::warn!(
            connections = left,
            "connections still running after shutdown"
        );
    }
}
