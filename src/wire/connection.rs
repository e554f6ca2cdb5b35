//! The per-connection state machine: socket I/O with batching, the main message loop, and
//! the simple query protocol. The extended protocol is in `extended.rs`, COPY in `copy.rs`.

use std::io;
use std::os::fd::{AsRawFd, RawFd};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use parking_lot::Mutex;
use tokio::io::{AsyncRead, AsyncWrite, AsyncWriteExt};
use tokio::sync::Notify;

use super::backend::{Output, Severity};
use super::extended::Portals;
use super::frontend::{decode_message, Framed, FrontendMessage, Input};
use super::reply_batch::{self, Sent};
use super::startup::{self, Startup};
use super::stream::Stream;
use crate::engine::Engine;
use crate::error::{Error, SqlState};
use crate::sql::{Outcome, Prepared, RowStream, RowsTag, Session, TxnStatus};
use crate::types::Value;

/// How long a client may take to complete the startup phase and authentication: the
/// `authentication_timeout` setting (a minute unless set). Idle connections after
/// startup have no timeout.
fn authentication_timeout(engine: &Engine) -> Duration {
    let seconds = engine.settings.get_int("authentication_timeout");
    Duration::from_secs(if seconds > 0 { seconds as u64 } else { 60 })
}

/// A byte stream a connection runs on: a TCP or Unix-domain socket, or an in-memory
/// stream in tests.
pub trait Transport: AsyncRead + AsyncWrite + Unpin + Send {
    /// The socket's descriptor, if replies may be sent on it by [`reply_batch`]: a
    /// nonblocking stream socket that stays open as long as `self`.
    fn socket_fd(&self) -> Option<RawFd> {
        None
    }

    /// The bytes that carry `reply` on the socket, for [`reply_batch`]: the reply itself,
    /// or over TLS the records the session encrypts it into now. The caller puts them on
    /// the socket whole, before anything else is written ([`Transport::write_sealed`]).
    fn seal(&mut self, reply: Bytes) -> io::Result<Bytes> {
        Ok(reply)
    }

    /// Write bytes [`Transport::seal`] made (what a batched send left of them) straight
    /// to the socket.
    fn write_sealed(
        &mut self,
        bytes: &[u8],
    ) -> impl std::future::Future<Output = io::Result<()>> + Send {
        async move { self.write_all(bytes).await }
    }
}

impl Transport for tokio::net::TcpStream {
    fn socket_fd(&self) -> Option<RawFd> {
        Some(self.as_raw_fd())
    }
}

impl Transport for tokio::net::UnixStream {
    fn socket_fd(&self) -> Option<RawFd> {
        Some(self.as_raw_fd())
    }
}

/// State shared between a connection's task and the connection registry.
pub struct Shared {
    /// The session's backend key, once it has one (used to cancel it at shutdown).
    pub backend_key: Mutex<Option<(i32, i32)>>,
    /// Raised (and `stop` notified) when the server shuts down.
    pub stopping: AtomicBool,
    pub stop: Notify,
}

impl Shared {
    pub fn new() -> Shared {
        Shared {
            backend_key: Mutex::new(None),
            stopping: AtomicBool::new(false),
            stop: Notify::new(),
        }
    }

    /// Ask the connection to close when it next waits for its client.
    pub fn request_stop(&self) {
        self.stopping.store(true, Ordering::SeqCst);
        self.stop.notify_waiters();
    }

    /// Resolves once [`Shared::request_stop`] was called.
    async fn stopped(&self) {
        loop {
            let notified = self.stop.notified();
            tokio::pin!(notified);
            notified.as_mut().enable();
            if self.stopping.load(Ordering::SeqCst) {
                return;
            }
            notified.await;
        }
    }
}

/// What the message loop does next.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Flow {
    Continue,
    Close,
}

/// What reading the next message produced.
pub enum Next {
    Message(u8, Bytes),
    /// End of stream, or the socket failed: close quietly.
    Eof,
    /// The stream cannot be framed any more: send this FATAL error and close.
    Fatal(Error),
}

/// The socket with its read and write buffers.
///
/// Write errors are sticky: once the socket fails, output is discarded and the next read
/// reports [`Next::Eof`], so handlers never have to thread I/O errors through.
pub struct Io<S> {
    stream: Stream<S>,
    shared: Arc<Shared>,
    pub input: Input,
    pub output: Output,
    broken: bool,
    /// Whether this connection counts in [`reply_batch::busy_connections`]: it has read a
    /// request and not yet gone back to waiting for the next.
    busy: bool,
    /// Over TLS: SCRAM's channel binding data (`TlsConfig::end_point_hash`).
    channel_binding: Option<Vec<u8>>,
}

impl<S> Drop for Io<S> {
    fn drop(&mut self) {
        if self.busy {
            reply_batch::set_busy(false);
        }
    }
}

impl<S: Transport> Io<S> {
    pub fn new(stream: S, shared: Arc<Shared>) -> Io<S> {
        Io {
            stream: Stream::Plain(stream),
            shared,
            input: Input::new(),
            output: Output::new(),
            broken: false,
            busy: false,
            channel_binding: None,
        }
    }

    #[cfg(test)]
    pub fn stream(&self) -> &S {
        match &self.stream {
            Stream::Plain(s) => s,
            _ => panic!("not a plain stream"),
        }
    }

    /// Whether the connection is encrypted.
    pub fn is_tls(&self) -> bool {
        matches!(self.stream, Stream::Tls(_))
    }

    pub fn tls_info(&self) -> Option<super::stream::TlsInfo> {
        self.stream.tls_info()
    }

    /// Run the TLS handshake over the socket (after answering an SSLRequest with 'S');
    /// from then on every byte is encrypted. On failure the connection is closed.
    pub async fn start_tls(
        &mut self,
        config: Arc<tokio_rustls::rustls::ServerConfig>,
        channel_binding: Vec<u8>,
    ) -> io::Result<()> {
        let Stream::Plain(plain) = std::mem::replace(&mut self.stream, Stream::Closed) else {
            return Err(io::Error::other("TLS is already on"));
        };
        let tls = tokio_rustls::TlsAcceptor::from(config)
            .accept(plain)
            .await?;
        self.stream = Stream::Tls(Box::new(tls));
        self.channel_binding = Some(channel_binding);
        Ok(())
    }

    /// SCRAM's `tls-server-end-point` data, over TLS.
    pub fn channel_binding(&self) -> Option<&[u8]> {
        self.channel_binding.as_deref()
    }

    pub fn shared(&self) -> &Arc<Shared> {
        &self.shared
    }

    /// Whether writing to the socket has failed (the client is gone).
    pub fn is_broken(&self) -> bool {
        self.broken
    }

    /// Write out everything buffered.
    pub async fn flush(&mut self) {
        if self.broken {
            self.output.clear();
            return;
        }
        if self.output.pending() == 0 {
            return;
        }
        if let Err(e) = self.output.flush_to(&mut self.stream).await {
            tracing::debug!(error = %e, "write to client failed");
            self.broken = true;
        }
    }

    /// Write out everything buffered at the end of a round trip, before waiting for the
    /// client: together with other connections' replies (see [`reply_batch`]) when the
    /// socket allows it, every worker thread is busy, other connections are busy too, and
    /// the client has not already sent more (a pipelining client is answered at once);
    /// else as [`Io::flush`] does.
    pub async fn flush_reply(&mut self) {
        let fd = match self.stream.socket_fd() {
            Some(fd)
                if !self.broken
                    && self.output.pending() > 0
                    && self.input.buffered() == 0
                    && reply_batch::enabled()
                    && !reply_batch::cores_idle()
                    && reply_batch::busy_connections() > 1 =>
            {
                fd
            }
            _ => return self.flush().await,
        };
        let reply = match self.stream.seal(self.output.take()) {
            Ok(sealed) => sealed,
            Err(e) => {
                tracing::debug!(error = %e, "could not encrypt a reply");
                self.broken = true;
                return;
            }
        };
        let written = match reply_batch::send(fd, reply.clone()).await {
            Sent::Bytes(n) => n.min(reply.len()),
            Sent::NotSent => 0,
            Sent::Failed(e) => {
                tracing::debug!(error = %e, "write to client failed");
                self.broken = true;
                return;
            }
        };
        if written < reply.len() {
            reply_batch::note_finished_by_connection();
            if let Err(e) = self.stream.write_sealed(&reply[written..]).await {
                tracing::debug!(error = %e, "write to client failed");
                self.broken = true;
            }
        }
    }

    /// Write out the buffer if it has grown past `WIRE_WRITE_BUFFER_BYTES`.
    pub async fn flush_if_full(&mut self) {
        if self.output.is_full() {
            self.flush().await;
        }
    }

    /// One read from the socket into the input buffer; 0 at end of stream. At server
    /// shutdown it fails with `ErrorKind::Interrupted` instead of waiting for the client.
    pub async fn fill(&mut self) -> io::Result<usize> {
        self.set_busy(false);
        let shared = &self.shared;
        let read = tokio::select! {
            biased;
            _ = shared.stopped() => {
                Err(io::Error::new(io::ErrorKind::Interrupted, "server shutting down"))
            }
            read = self.input.fill(&mut self.stream) => read,
        };
        self.set_busy(true);
        read
    }

    fn set_busy(&mut self, busy: bool) {
        if self.busy != busy {
            self.busy = busy;
            reply_batch::set_busy(busy);
        }
    }

    /// The next typed message. Output is flushed before waiting on the socket, so the
    /// client always has our replies before we wait for it.
    pub async fn read_message(&mut self) -> Next {
        loop {
            match self.input.take_message() {
                Ok(Framed::Ready((tag, body))) => return Next::Message(tag, body),
                Ok(Framed::Incomplete) => {}
                Err(e) => return Next::Fatal(e),
            }
            self.flush_reply().await;
            if self.broken {
                return Next::Eof;
            }
            match self.fill().await {
                Ok(0) => {
                    if self.input.buffered() > 0 {
                        tracing::warn!("unexpected EOF within a message");
                    }
                    return Next::Eof;
                }
                Ok(_) => {}
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {
                    return Next::Fatal(Error::new(
                        SqlState::ADMIN_SHUTDOWN,
                        "terminating connection due to administrator command",
                    ));
                }
                Err(e) => {
                    tracing::debug!(error = %e, "read from client failed");
                    return Next::Eof;
                }
            }
        }
    }

    /// The OS user at the other end of a Unix-domain socket (for `peer`), if the
    /// kernel tells it.
    pub fn peer_os_user(&self) -> Option<String> {
        let fd = self.stream.socket_fd()?;
        // SAFETY: getsockopt writes at most `len` bytes into `cred`, a plain C struct.
        let mut cred: libc::ucred = unsafe { std::mem::zeroed() };
        let mut len = std::mem::size_of::<libc::ucred>() as libc::socklen_t;
        let got = unsafe {
            libc::getsockopt(
                fd,
                libc::SOL_SOCKET,
                libc::SO_PEERCRED,
                &mut cred as *mut libc::ucred as *mut libc::c_void,
                &mut len,
            )
        };
        if got != 0 || len as usize != std::mem::size_of::<libc::ucred>() {
            return None;
        }
        let mut buf = vec![0 as libc::c_char; 16 * 1024];
        // SAFETY: getpwuid_r fills `pwd` with pointers into `buf`, which outlives their
        // use below; `found` is null unless the entry was found.
        let mut pwd: libc::passwd = unsafe { std::mem::zeroed() };
        let mut found: *mut libc::passwd = std::ptr::null_mut();
        let rc = unsafe {
            libc::getpwuid_r(cred.uid, &mut pwd, buf.as_mut_ptr(), buf.len(), &mut found)
        };
        if rc != 0 || found.is_null() || pwd.pw_name.is_null() {
            return None;
        }
        // SAFETY: pw_name points at a NUL-terminated string inside `buf`.
        let name = unsafe { std::ffi::CStr::from_ptr(pwd.pw_name) };
        name.to_str().ok().map(str::to_string)
    }

    /// Send a FATAL error and write everything out; the caller then closes.
    pub async fn fatal(&mut self, err: &Error) {
        tracing::warn!(code = %err.code, "closing connection: {}", err.message);
        self.output.error(err, Severity::Fatal);
        self.flush().await;
    }
}

/// The protocol state of a connection after startup.
pub struct Protocol {
    pub session: Session,
    /// Portals by name ("" is the unnamed portal).
    pub portals: Portals,
    /// After an error in an extended-protocol message, messages are discarded until Sync.
    pub skip_until_sync: bool,
}

/// Run a connection: startup, then messages until Terminate, EOF or a FATAL error.
/// `protocol` is filled in once the session exists, so that the caller can close the
/// session even if this panics.
pub async fn run<S: Transport>(
    io: &mut Io<S>,
    engine: &Arc<Engine>,
    client: Option<std::net::SocketAddr>,
    protocol: &mut Option<Protocol>,
) {
    let timeout = authentication_timeout(engine);
    let deadline = tokio::time::Instant::now() + timeout;
    let negotiated = tokio::time::timeout_at(
        deadline,
        startup::negotiate(
            io,
            &|db| engine.database_exists(db),
            engine.auth.get().and_then(|a| a.tls()),
        ),
    )
    .await;
    let params = match negotiated {
        Ok(Startup::Ready(params)) => {
            let origin = super::auth::Origin {
                client,
                ssl: io.is_tls(),
                client_certificate: io.tls_info().and_then(|t| t.client_certificate),
            };
            let authenticated = tokio::time::timeout_at(
                deadline,
                super::auth::authenticate(io, engine, &params, &origin),
            )
            .await;
            match authenticated {
                Ok(Ok(())) => params,
                Ok(Err(super::auth::Refusal::Fatal(e))) => {
                    io.fatal(&e).await;
                    return;
                }
                Ok(Err(super::auth::Refusal::Gone)) => return,
                Err(_) => {
                    tracing::warn!("client did not complete authentication in time");
                    return;
                }
            }
        }
        Ok(Startup::Cancel { pid, secret }) => {
            let found = engine.cancel(pid, secret);
            tracing::debug!(pid, found, "cancel request");
            return;
        }
        Ok(Startup::Close) => {
            io.flush().await;
            return;
        }
        Err(_) => {
            tracing::warn!("client did not complete the startup phase in time");
            return;
        }
    };
    let mut session = Session::new(engine.clone());
    session.defer_commits();
    session.stream_results();
    let state = protocol.insert(Protocol {
        session,
        portals: Portals::default(),
        skip_until_sync: false,
    });
    state.session.set_user(&params.user);
    state.session.set_client(client);
    if let Some(tls) = io.tls_info() {
        state.session.set_ssl(crate::txn::SslStatus {
            version: tls.version,
            cipher: tls.cipher,
            bits: tls.bits,
            client_certificate: tls.client_certificate,
        });
    }
    state.session.apply_role_settings(&params.user);
    if !params.application_name.is_empty() {
        let _ = state
            .session
            .apply_startup_setting("application_name", &params.application_name);
    }
    for (name, value) in &params.settings {
        if let Err(e) = state.session.apply_startup_setting(name, value) {
            io.fatal(&e).await;
            return;
        }
    }
    let (pid, secret) = state.session.backend_key();
    *io.shared().backend_key.lock() = Some((pid, secret));
    tracing::debug!(user = %params.user, database = %params.database, pid, "session started");
    let reported = state.session.reported_settings();
    startup::greeting(
        &mut io.output,
        &params,
        pid,
        secret,
        engine.is_standby(),
        engine.auth.get().is_none()
            || engine
                .txn
                .catalog
                .role(&params.user)
                .is_some_and(|r| r.superuser),
        &reported,
    );
    io.flush().await;
    if params.replication {
        return super::walsender::serve(io, state, engine, &params, client).await;
    }
    loop {
        let flow = match io.read_message().await {
            Next::Message(tag, body) => state.dispatch(io, tag, body).await,
            Next::Eof => Flow::Close,
            Next::Fatal(e) => {
                io.fatal(&e).await;
                Flow::Close
            }
        };
        if flow == Flow::Close {
            return;
        }
        io.flush_if_full().await;
    }
}

impl Protocol {
    async fn dispatch<S: Transport>(&mut self, io: &mut Io<S>, tag: u8, body: Bytes) -> Flow {
        let msg = match decode_message(tag, body) {
            Ok(msg) => msg,
            Err(e) => return self.malformed(io, tag, e).await,
        };
        if self.skip_until_sync {
            match msg {
                FrontendMessage::Sync => {}
                FrontendMessage::Terminate => return Flow::Close,
                _ => return Flow::Continue,
            }
        }
        // Another statement is about to run: a portal read as it is fetched is read whole
        // first, so it never sees what that statement does.
        let settled = match &msg {
            FrontendMessage::Query { .. } | FrontendMessage::FunctionCall => {
                self.settle_streaming_portals(None)
            }
            FrontendMessage::Execute { portal, .. } => {
                self.settle_streaming_portals(Some(portal.as_str()))
            }
            _ => Ok(()),
        };
        if let Err(e) = settled {
            io.output.error(&e, Severity::Error);
            if matches!(msg, FrontendMessage::Query { .. }) {
                self.sync_and_ready(io).await;
            } else {
                self.skip_until_sync = true;
            }
            return Flow::Continue;
        }
        match msg {
            FrontendMessage::Query { sql } => self.simple_query(io, &sql).await,
            FrontendMessage::Parse {
                name,
                sql,
                param_oids,
            } => {
                let r = self.parse(io, name, &sql, &param_oids);
                self.extended_result(io, r)
            }
            FrontendMessage::Bind {
                portal,
                statement,
                param_formats,
                params,
                result_formats,
            } => {
                let r = self.bind(
                    io,
                    portal,
                    &statement,
                    &param_formats,
                    &params,
                    &result_formats,
                );
                self.extended_result(io, r)
            }
            FrontendMessage::Describe { target, name } => {
                let r = self.describe(io, target, &name);
                self.extended_result(io, r)
            }
            FrontendMessage::Execute { portal, max_rows } => {
                let r = self.execute(io, &portal, max_rows).await;
                self.extended_result(io, r)
            }
            FrontendMessage::Close { target, name } => {
                self.close(io, target, &name);
                Flow::Continue
            }
            FrontendMessage::Sync => {
                self.skip_until_sync = false;
                self.sync_and_ready(io).await;
                Flow::Continue
            }
            FrontendMessage::Flush => {
                io.flush().await;
                Flow::Continue
            }
            FrontendMessage::Terminate => Flow::Close,
            FrontendMessage::FunctionCall => {
                let err = Error::unsupported("the FunctionCall protocol message is not supported");
                io.output.error(&err, Severity::Error);
                self.sync_and_ready(io).await;
                Flow::Continue
            }
            // Outside COPY these are ignored, as PostgreSQL does: they are what a client is
            // still sending after a COPY failed.
            FrontendMessage::CopyData(_)
            | FrontendMessage::CopyDone
            | FrontendMessage::CopyFail { .. } => Flow::Continue,
        }
    }

    /// A message of a known type whose body is malformed. Its length was valid, so the
    /// stream is still framed: report an ERROR and carry on as after any other error.
    async fn malformed<S: Transport>(&mut self, io: &mut Io<S>, tag: u8, err: Error) -> Flow {
        match tag {
            // Left-over COPY traffic is ignored whatever it contains.
            b'd' | b'c' | b'f' => return Flow::Continue,
            // A Sync ends the skipping even if it is malformed.
            b'S' => self.skip_until_sync = false,
            _ if self.skip_until_sync => return Flow::Continue,
            _ => {}
        }
        tracing::warn!(code = %err.code, "malformed '{}' message: {}", tag as char, err.message);
        io.output.error(&err, Severity::Error);
        match tag {
            b'Q' | b'S' => self.sync_and_ready(io).await,
            _ => self.skip_until_sync = true,
        }
        Flow::Continue
    }

    /// Report an extended-protocol handler's error and start skipping until Sync.
    fn extended_result<S: Transport>(&mut self, io: &mut Io<S>, r: Result<Flow, Error>) -> Flow {
        match r {
            Ok(flow) => flow,
            Err(e) => {
                io.output.error(&e, Severity::Error);
                self.skip_until_sync = true;
                Flow::Continue
            }
        }
    }

    /// Run a statement in the session and finish the commit it started, if any, before
    /// anything else happens. The commit's waits, and a row lock the statement stopped
    /// at before changing anything (after which it runs again), are where this task
    /// yields. Never returns [`Outcome::WaitForLock`].
    pub async fn execute_statement(
        &mut self,
        stmt: &Prepared,
        params: &[Value],
    ) -> Result<Outcome, Error> {
        loop {
            let mut outcome = self.session.execute(stmt, params);
            if let Err(e) = self.session.finish_commit().await {
                outcome = outcome.and(Err(e));
            }
            match outcome {
                Ok(Outcome::WaitForLock) => self.session.wait_for_lock().await?,
                other => return other,
            }
        }
    }

    /// End of a simple query or a Sync: commit the implicit transaction, report the
    /// transaction status, and write everything out.
    pub async fn sync_and_ready<S: Transport>(&mut self, io: &mut Io<S>) {
        let mut synced = self.session.sync();
        if let Err(e) = self.session.finish_commit().await {
            synced = synced.and(Err(e));
        }
        self.send_warnings(io);
        if let Err(e) = synced {
            io.output.error(&e, Severity::Error);
        }
        let status = self.session.txn_status();
        if status == TxnStatus::Idle {
            // Portals do not outlive their transaction.
            self.portals.clear();
        }
        // As PostgreSQL, report the settings that changed just before ReadyForQuery.
        for (name, value) in self.session.take_reported_changes() {
            io.output.parameter_status(name, &value);
        }
        io.output.ready_for_query(status);
        if self.session.blocks_others() {
            // Others wait for this transaction's locks: the sooner its client has the
            // reply, the sooner it commits and lets them go.
            io.flush().await;
        } else {
            io.flush_reply().await;
        }
    }

    /// After a statement ran: if it ended a transaction block, its portals are gone.
    /// Send the warnings the last statement raised, before its result.
    pub fn send_warnings<S: Transport>(&mut self, io: &mut Io<S>) {
        for warning in self.session.take_notices() {
            io.output.warning(&warning);
        }
    }

    pub fn after_statement(&mut self, before: TxnStatus) -> bool {
        let ended = before != TxnStatus::Idle && self.session.txn_status() == TxnStatus::Idle;
        if ended {
            self.portals.clear();
        }
        ended
    }

    pub async fn simple_query<S: Transport>(&mut self, io: &mut Io<S>, sql: &str) -> Flow {
        // A simple Query destroys the unnamed statement and portal, as in PostgreSQL.
        self.session.close_statement("");
        self.portals.remove("");
        match self.session.prepare_simple(sql) {
            Err(e) => io.output.error(&e, Severity::Error),
            Ok(statements) if statements.is_empty() => io.output.empty_query(),
            Ok(statements) => {
                for stmt in &statements {
                    if io.is_broken() {
                        break;
                    }
                    match self.run_simple(io, stmt).await {
                        Ok(Flow::Continue) => {}
                        Ok(Flow::Close) => return Flow::Close,
                        Err(e) => {
                            io.output.error(&e, Severity::Error);
                            break;
                        }
                    }
                }
            }
        }
        self.sync_and_ready(io).await;
        Flow::Continue
    }

    /// Run one statement of a simple query and send its results.
    async fn run_simple<S: Transport>(
        &mut self,
        io: &mut Io<S>,
        stmt: &Prepared,
    ) -> Result<Flow, Error> {
        let before = self.session.txn_status();
        let outcome = self.execute_statement(stmt, &[]).await;
        self.send_warnings(io);
        self.after_statement(before);
        match outcome? {
            Outcome::Rows { fields, rows, tag } => {
                io.output.row_description(&fields, &[])?;
                send_rows(io, rows.iter(), &[]).await?;
                io.output.command_complete(&tag.complete(rows.len()));
            }
            Outcome::RowStream { fields, stream } => {
                io.output.row_description(&fields, &[])?;
                let sent = self.send_row_stream(io, stream, &[]).await?;
                io.output.command_complete(&RowsTag::Select.complete(sent));
            }
            Outcome::Command { tag } => io.output.command_complete(&tag),
            Outcome::Empty => io.output.empty_query(),
            Outcome::CopyIn(copy) => return self.copy_in(io, copy).await,
            Outcome::CopyOut(copy) => return self.copy_out(io, copy).await,
            Outcome::WaitForLock => return Err(Error::internal("unexpected outcome")),
        }
        Ok(Flow::Continue)
    }
}

impl Protocol {
    /// Send a streamed SELECT's rows as they are read, writing out the buffer whenever it
    /// fills up (so a client that reads slowly holds the statement, not memory); returns
    /// how many were sent.
    pub async fn send_row_stream<S: Transport>(
        &mut self,
        io: &mut Io<S>,
        mut stream: RowStream,
        formats: &[i16],
    ) -> Result<usize, Error> {
        let mut sent = 0;
        while let Some(rows) = self.session.row_stream_next(&mut stream)? {
            sent += send_rows(io, rows.iter(), formats).await?;
        }
        Ok(sent)
    }
}

/// Send DataRows, writing out the buffer whenever it fills up.
pub async fn send_rows<S: Transport, R: AsRef<[Value]>>(
    io: &mut Io<S>,
    rows: impl Iterator<Item = R>,
    formats: &[i16],
) -> Result<usize, Error> {
    let mut sent = 0;
    for row in rows {
        io.output.data_row(row.as_ref(), formats)?;
        sent += 1;
        io.flush_if_full().await;
        if io.is_broken() {
            return Err(Error::new(
                SqlState::CONNECTION_EXCEPTION,
                "connection to client lost",
            ));
        }
    }
    Ok(sent)
}
