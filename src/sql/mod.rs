//! The SQL layer: parsing, planning and executing statements for one session.
//!
//! A [`Session`] is what the wire layer talks to. It owns the session's transaction state
//! and plan cache; statements go through [`Session::prepare`] (planned once) and
//! [`Session::execute`]. Statements run inside the session's current transaction, which is
//! either explicit (BEGIN ... COMMIT) or implicit: an implicit transaction starts with the
//! first statement after a [`Session::sync`] and commits at the next `sync` (the end of a
//! simple Query message, or a Sync message), as in PostgreSQL.

pub mod engine;
pub mod session;

pub use engine::Engine;
pub use session::{CopyIn, Field, Outcome, Prepared, Session, TxnStatus};
