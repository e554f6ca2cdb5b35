//! A client session: transaction state, prepared statements' plans, and execution.

use std::sync::Arc;

use crate::error::Result;
use crate::types::{DataType, Value};

use super::Engine;

/// One column of a result set, as RowDescription describes it.
#[derive(Clone, Debug)]
pub struct Field {
    pub name: String,
    pub data_type: DataType,
    /// OID of the table the column comes from, or 0.
    pub table_oid: u32,
    /// Attribute number in that table, or 0.
    pub column_id: i16,
}

/// The transaction status byte of ReadyForQuery.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TxnStatus {
    /// 'I': not in a transaction block.
    Idle,
    /// 'T': in a transaction block.
    InBlock,
    /// 'E': in a failed transaction block; commands are refused until ROLLBACK.
    Failed,
}

/// A parsed and planned statement. Cheap to clone (Arc) and reusable with any parameters.
pub struct Prepared {
    /// Types of `$1..$n`, resolved from the client's OIDs or inferred from context.
    pub param_types: Vec<DataType>,
    /// Columns the statement returns (empty when it returns no rows).
    pub fields: Vec<Field>,
}

/// What executing a statement produced.
pub enum Outcome {
    /// Rows (SELECT, or DML with RETURNING) and the command tag, e.g. `SELECT 3`.
    Rows { fields: Vec<Field>, rows: Vec<Vec<Value>>, tag: String },
    /// A command without rows and its tag, e.g. `INSERT 0 1`, `BEGIN`.
    Command { tag: String },
    /// The query string was empty.
    Empty,
    /// COPY ... FROM STDIN: the wire layer sends CopyInResponse and feeds CopyData to
    /// [`Session::copy_data`], then calls [`Session::copy_done`] or [`Session::copy_fail`].
    CopyIn(CopyIn),
}

/// The state of a COPY FROM STDIN in progress.
pub struct CopyIn {
    /// Number of columns per row (for CopyInResponse).
    pub columns: usize,
    /// true for binary COPY (not supported yet), false for text/CSV.
    pub binary: bool,
}

pub struct Session {
    engine: Arc<Engine>,
}

impl Session {
    pub fn new(engine: Arc<Engine>) -> Session {
        Session { engine }
    }

    pub fn engine(&self) -> &Arc<Engine> {
        &self.engine
    }

    /// (process id, secret key) for BackendKeyData; CancelRequest quotes them back.
    pub fn backend_key(&self) -> (i32, i32) {
        unimplemented!("Session::backend_key")
    }

    /// Parse and plan every statement of a simple Query message. A syntax error in any of
    /// them fails the whole message before anything runs, as in PostgreSQL.
    pub fn prepare_simple(&mut self, sql: &str) -> Result<Vec<Arc<Prepared>>> {
        let _ = sql;
        unimplemented!("Session::prepare_simple")
    }

    /// Parse and plan one statement for the extended protocol (Parse message).
    /// `param_oids` are the client's declared parameter types (0 = infer).
    pub fn prepare(&mut self, sql: &str, param_oids: &[u32]) -> Result<Arc<Prepared>> {
        let _ = (sql, param_oids);
        unimplemented!("Session::prepare")
    }

    /// Execute a prepared statement with bound parameters, in the current transaction.
    /// On error the transaction is marked failed (explicit block) or rolled back
    /// (implicit), and the error is returned for the wire layer to send.
    pub fn execute(&mut self, stmt: &Prepared, params: &[Value]) -> Result<Outcome> {
        let _ = (stmt, params);
        unimplemented!("Session::execute")
    }

    /// End of a simple Query message or a Sync message: commit the implicit transaction.
    pub fn sync(&mut self) -> Result<()> {
        unimplemented!("Session::sync")
    }

    pub fn txn_status(&self) -> TxnStatus {
        unimplemented!("Session::txn_status")
    }

    /// Feed one CopyData message's bytes (any split across rows).
    pub fn copy_data(&mut self, copy: &mut CopyIn, data: &[u8]) -> Result<()> {
        let _ = (copy, data);
        unimplemented!("Session::copy_data")
    }

    /// CopyDone: finish the COPY, returning the number of rows copied.
    pub fn copy_done(&mut self, copy: CopyIn) -> Result<u64> {
        let _ = copy;
        unimplemented!("Session::copy_done")
    }

    /// CopyFail from the client: abandon the COPY; returns the error to report.
    pub fn copy_fail(&mut self, copy: CopyIn, message: &str) -> crate::error::Error {
        let _ = (copy, message);
        unimplemented!("Session::copy_fail")
    }

    /// The client went away: roll back whatever is open and release locks.
    pub fn close(&mut self) {}
}
