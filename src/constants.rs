//! Every limit on a queue, buffer or message lives here, so that the bounds of the system
//! can be read in one place.

/// The TCP port the server listens on unless told otherwise.
pub const DEFAULT_PORT: u16 = 5433;
/// The address the server listens on unless told otherwise.
pub const DEFAULT_LISTEN_ADDRESS: &str = "127.0.0.1";
/// The data directory used when none is given.
pub const DEFAULT_DATA_DIR: &str = "steadydb-data";

/// Largest frontend message accepted, in bytes (PostgreSQL's own limit is 1 GiB - 1).
pub const MAX_MESSAGE_BYTES: usize = 64 * 1024 * 1024;
/// Largest startup packet accepted, in bytes (PostgreSQL uses 10,000).
pub const MAX_STARTUP_PACKET_BYTES: usize = 10_000;
/// Most simultaneous client connections (`max_connections`).
pub const DEFAULT_MAX_CONNECTIONS: usize = 1000;
/// Most named prepared statements one session holds (each holds its parse tree and plan);
/// one more fails with 53200 until some are deallocated. (Their memory is bounded too:
/// `MAX_PREPARED_STATEMENT_BYTES`.)
pub const MAX_PREPARED_STATEMENTS: usize = 10_000;
/// Most memory, in bytes, that the named prepared statements of one session hold (what
/// each one's parse and plan left allocated, `memory::retained_by`).
pub const MAX_PREPARED_STATEMENT_BYTES: usize = 256 * 1024 * 1024;
/// Most open portals (bound statements) one connection holds.
pub const MAX_PORTALS: usize = 10_000;
/// Most refused connections answered at once (each holds a descriptor for up to the
/// refusal's read timeout); past this a refused connection is closed without a word.
pub const MAX_REFUSALS_IN_FLIGHT: usize = 256;
/// Descriptors kept for the server's own files (WAL segments, the page file, sockets)
/// beyond its connections.
pub const RESERVED_FILE_DESCRIPTORS: u64 = 64;
/// Longest pause of an accept loop after a failed accept (out of descriptors, say).
pub const MAX_ACCEPT_BACKOFF_MS: u64 = 1000;
/// Bytes of replies buffered before they are written to the socket even without Sync/Flush.
pub const WIRE_WRITE_BUFFER_BYTES: usize = 256 * 1024;
/// Most replies of different connections sent by one system call (see `wire::reply_batch`).
pub const REPLY_BATCH_MAX_SENDS: usize = 128;
/// Most parameters in one Bind message (the protocol's Int16 count).
pub const MAX_BIND_PARAMETERS: usize = 65_535;

/// Bytes of rows a bulk load holds before it moves them into its tree's last leaf
/// (`storage::bulk`): enough for a few leaves' worth of typical rows at a time.
pub const BULK_PENDING_MAX_BYTES: usize = 64 * 1024;

/// About how much of a spilled write set's rows one WriteSetPiece record holds: a commit
/// of any size is logged, and replayed, this much at a time.
pub const WRITE_SET_PIECE_BYTES: usize = 256 * 1024;

/// Most distinct statement shapes kept in a session's simple-protocol plan cache.
pub const PLAN_CACHE_ENTRIES: usize = 256;
/// Longest query text whose plan is cached, in bytes.
pub const PLAN_CACHE_MAX_QUERY_BYTES: usize = 8 * 1024;

/// How often memory freed anywhere in the process is given back to the system.
pub const MEMORY_RETURN_INTERVAL: std::time::Duration = std::time::Duration::from_secs(1);

/// Stack size of the runtime's worker threads, on which statements run, in bytes. Reserved
/// address space, committed only as it is used; deep expressions recurse in the binder and
/// evaluator.
pub const CONNECTION_STACK_BYTES: usize = 64 * 1024 * 1024;

/// A statement that has run this long hands its runtime's core to another thread at its
/// next check between batches of rows (`SessionSlot::check_in`, `wal::release_core`), so that the other connections placed on
/// the same runtime are not held up behind it. The hand-off costs a thread wake-up (tens
/// of microseconds), under 1% of a statement this long.
pub const STATEMENT_CORE_RELEASE_US: u64 = 5_000;

/// How long `wal::release_core` waits for the other thread to take the core. Starting
/// that thread takes tens of microseconds on an idle machine and was seen to take over
/// 0.5 ms on a loaded 2-core one, where a 0.5 ms wait kept failing (and the runtime's
/// other connections waited); past this wait the hand-off is tried again 5 ms later.
pub const CORE_RELEASE_WAIT_US: u64 = 2_000;
/// Deepest expression nesting accepted (deeper gives 54001, like max_stack_depth).
pub const MAX_EXPRESSION_DEPTH: usize = 10_000;

/// Size of one WAL segment file, in bytes (a multiple of `WAL_BLOCK_BYTES`).
pub const WAL_SEGMENT_BYTES: u64 = 16 * 1024 * 1024;
/// The unit of a WAL write: the log goes to its segments in whole blocks of this size, from
/// memory aligned to it, as direct I/O requires (`Disk::open_direct`).
pub const WAL_BLOCK_BYTES: usize = 4096;
/// Most log bytes written to a segment by one system call (bounds the staging buffer).
pub const WAL_WRITE_MAX_BYTES: usize = 1024 * 1024;
/// Largest WAL write sent with direct I/O; larger ones go through the page cache, so that
/// fdatasync submits them at once rather than the device taking them one call at a time.
pub const WAL_DIRECT_MAX_BYTES: usize = 256 * 1024;
/// Built WAL kept free by every reservation (`Wal::reserve`), for the few records that
/// take none because they must not fail: the drops that undo a rolled-back CREATE TABLE.
pub const WAL_HEADROOM_BYTES: u64 = 1024 * 1024;
/// After a WAL segment could not be built (a full disk), writers fail at once with that
/// error for this long before one tries again.
pub const WAL_SEGMENT_RETRY_PAUSE: std::time::Duration = std::time::Duration::from_millis(500);
/// Appended-but-unflushed WAL bytes before appenders wait for the flusher (`wal_buffers`).
pub const WAL_BUFFER_BYTES: usize = 16 * 1024 * 1024;

/// How often a wait at a table's write gate (a writer at a closed gate, or a rebuild
/// waiting for the gate to empty) re-checks its statement's cancel flag.
pub const WRITE_GATE_POLL: std::time::Duration = std::time::Duration::from_millis(20);

/// Free page-file slots kept ready beyond one per dirty page (for evictions between
/// checkpoints): 8 MiB.
pub const PREPARED_SLOTS_MARGIN: usize = 1024;
/// Fewest buffer frames kept from promises to commits (`storage::pool`, `promise_frames`),
/// so that readers can bring pages in while no dirty page can be written (a full disk).
pub const READER_FRAMES_MIN: usize = 64;
/// Slots of zeros the checkpointer adds to the page file at a time between checkpoints
/// (256 KiB, the default `checkpoint_flush_after`).
pub const PREPARE_BATCH_SLOTS: usize = 32;
/// The pause after each batch of prepared slots: the page file grows by at most
/// `PREPARE_BATCH_SLOTS` pages per pause (about 10 MiB/s).
pub const PREPARE_PAUSE: std::time::Duration = std::time::Duration::from_millis(25);

/// How long a wait at a table's gate goes on before it is checked for a deadlock that the
/// row-lock table cannot see (PostgreSQL's `deadlock_timeout` default).
pub const DEADLOCK_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(1);

/// The largest text or bytea value a function may make (PostgreSQL's limit: 1 GB).
pub const MAX_VALUE_BYTES: usize = 1024 * 1024 * 1024 - 1;
