//! The SQL layer: parsing, planning and executing statements for one session.
//!
//! A [`Session`] is what the wire layer talks to. It owns the session's transaction state
//! and plan cache; statements go through [`Session::prepare`] (planned once) and
//! [`Session::execute`]. Statements run inside the session's current transaction, which is
//! either explicit (BEGIN ... COMMIT) or implicit: an implicit transaction starts with the
//! first statement after a [`Session::sync`] and commits at the next `sync` (the end of a
//! simple Query message, or a Sync message), as in PostgreSQL.
//!
//! Invariants:
//! - Plans are immutable and carry the catalog version they were made under; a plan made
//!   under an older catalog is re-planned before it runs, and if its result columns would
//!   change the statement fails with 0A000 ("cached plan must not change result type").
//! - A failed statement in an explicit transaction puts it in the failed state (25P02 for
//!   everything but ROLLBACK/COMMIT); in an implicit transaction it rolls back at once.

mod bind;
mod catalog_functions;
mod copy;
mod copy_out;
mod estimate;
mod executor;
mod explain;
mod expr;
mod foreign_keys;
#[cfg(test)]
mod fuzz_tests;
#[cfg(test)]
mod golden;
mod information_schema;
mod json_functions;
pub mod parser;
mod pg_catalog;
mod plan;
mod planner;
#[cfg(test)]
mod range_tests;
mod roles;
mod scalar_functions;
pub mod session;
mod statistics;
mod system;

pub use pg_catalog::DATABASE_OID;
pub use session::{
    CopyIn, CopyOut, Field, Outcome, Prepared, RowStream, RowsTag, Session, TxnStatus,
};
pub use statistics::run_autoanalyze;
