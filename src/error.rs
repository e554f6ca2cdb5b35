//! The one error type that crosses layers. Every error a client can see carries a SQLSTATE,
//! so that PostgreSQL clients can react to it exactly as they would to PostgreSQL.

use std::fmt;

/// A five-character SQLSTATE code, as PostgreSQL sends it in the `C` field of ErrorResponse.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub struct SqlState(pub &'static str);

impl SqlState {
    pub const SUCCESSFUL_COMPLETION: SqlState = SqlState("00000");
    pub const WARNING: SqlState = SqlState("01000");
    pub const FEATURE_NOT_SUPPORTED: SqlState = SqlState("0A000");
    pub const CARDINALITY_VIOLATION: SqlState = SqlState("21000");
    pub const STRING_DATA_RIGHT_TRUNCATION: SqlState = SqlState("22001");
    pub const NUMERIC_VALUE_OUT_OF_RANGE: SqlState = SqlState("22003");
    pub const INVALID_DATETIME_FORMAT: SqlState = SqlState("22007");
    pub const DATETIME_FIELD_OVERFLOW: SqlState = SqlState("22008");
    pub const DIVISION_BY_ZERO: SqlState = SqlState("22012");
    pub const NULL_VALUE_NOT_ALLOWED: SqlState = SqlState("22004");
    pub const INVALID_ARGUMENT_FOR_LOG: SqlState = SqlState("2201E");
    pub const INVALID_ARGUMENT_FOR_POWER_FUNCTION: SqlState = SqlState("2201F");
    pub const CHARACTER_NOT_IN_REPERTOIRE: SqlState = SqlState("22021");
    pub const INVALID_PARAMETER_VALUE: SqlState = SqlState("22023");
    pub const UNTRANSLATABLE_CHARACTER: SqlState = SqlState("22P05");
    pub const INVALID_ESCAPE_SEQUENCE: SqlState = SqlState("22025");
    pub const INVALID_REGULAR_EXPRESSION: SqlState = SqlState("2201B");
    pub const INVALID_TEXT_REPRESENTATION: SqlState = SqlState("22P02");
    pub const INVALID_BINARY_REPRESENTATION: SqlState = SqlState("22P03");
    pub const BAD_COPY_FILE_FORMAT: SqlState = SqlState("22P04");
    pub const CANNOT_COERCE: SqlState = SqlState("42846");
    pub const WINDOWING_ERROR: SqlState = SqlState("42P20");
    pub const INVALID_SCHEMA_NAME: SqlState = SqlState("3F000");
    pub const NOT_NULL_VIOLATION: SqlState = SqlState("23502");
    pub const UNIQUE_VIOLATION: SqlState = SqlState("23505");
    pub const FOREIGN_KEY_VIOLATION: SqlState = SqlState("23503");
    pub const INVALID_CURSOR_STATE: SqlState = SqlState("24000");
    pub const ACTIVE_SQL_TRANSACTION: SqlState = SqlState("25001");
    pub const NO_ACTIVE_SQL_TRANSACTION: SqlState = SqlState("25P01");
    pub const IN_FAILED_SQL_TRANSACTION: SqlState = SqlState("25P02");
    pub const INVALID_SQL_STATEMENT_NAME: SqlState = SqlState("26000");
    pub const INVALID_CURSOR_NAME: SqlState = SqlState("34000");
    pub const INVALID_CATALOG_NAME: SqlState = SqlState("3D000");
    pub const SERIALIZATION_FAILURE: SqlState = SqlState("40001");
    pub const DEADLOCK_DETECTED: SqlState = SqlState("40P01");
    pub const OBJECT_IN_USE: SqlState = SqlState("55006");
    pub const SYNTAX_ERROR: SqlState = SqlState("42601");
    pub const INSUFFICIENT_PRIVILEGE: SqlState = SqlState("42501");
    pub const UNDEFINED_COLUMN: SqlState = SqlState("42703");
    pub const UNDEFINED_FUNCTION: SqlState = SqlState("42883");
    pub const UNDEFINED_TABLE: SqlState = SqlState("42P01");
    pub const UNDEFINED_PARAMETER: SqlState = SqlState("42P02");
    pub const UNDEFINED_OBJECT: SqlState = SqlState("42704");
    pub const DUPLICATE_TABLE: SqlState = SqlState("42P07");
    pub const DUPLICATE_OBJECT: SqlState = SqlState("42710");
    pub const CHECK_VIOLATION: SqlState = SqlState("23514");
    pub const DUPLICATE_PREPARED_STATEMENT: SqlState = SqlState("42P05");
    pub const DUPLICATE_CURSOR: SqlState = SqlState("42P03");
    pub const AMBIGUOUS_COLUMN: SqlState = SqlState("42702");
    pub const DATATYPE_MISMATCH: SqlState = SqlState("42804");
    pub const INVALID_TABLE_DEFINITION: SqlState = SqlState("42P16");
    pub const INVALID_COLUMN_REFERENCE: SqlState = SqlState("42P10");
    pub const GROUPING_ERROR: SqlState = SqlState("42803");
    pub const UNDEFINED_DATABASE: SqlState = SqlState("3D000");
    pub const INVALID_PARAMETER_VALUE_SETTING: SqlState = SqlState("22023");
    pub const CANT_CHANGE_RUNTIME_PARAM: SqlState = SqlState("55P02");
    pub const PROGRAM_LIMIT_EXCEEDED: SqlState = SqlState("54000");
    pub const INVALID_RECURSION: SqlState = SqlState("42P19");
    pub const SUBSTRING_ERROR: SqlState = SqlState("22011");
    pub const INVALID_ARGUMENT_FOR_WIDTH_BUCKET_FUNCTION: SqlState = SqlState("2201G");
    pub const AMBIGUOUS_FUNCTION: SqlState = SqlState("42725");
    pub const STATEMENT_TOO_COMPLEX: SqlState = SqlState("54001");
    pub const TOO_MANY_CONNECTIONS: SqlState = SqlState("53300");
    pub const QUERY_CANCELED: SqlState = SqlState("57014");
    pub const ADMIN_SHUTDOWN: SqlState = SqlState("57P01");
    pub const PROTOCOL_VIOLATION: SqlState = SqlState("08P01");
    pub const CONNECTION_EXCEPTION: SqlState = SqlState("08000");
    pub const INVALID_AUTHORIZATION: SqlState = SqlState("28000");
    pub const INVALID_PASSWORD: SqlState = SqlState("28P01");
    pub const RESERVED_NAME: SqlState = SqlState("42939");
    pub const INVALID_GRANT_OPERATION: SqlState = SqlState("0LP01");
    pub const CONFIG_FILE_ERROR: SqlState = SqlState("F0000");
    pub const INTERNAL_ERROR: SqlState = SqlState("XX000");
    pub const IO_ERROR: SqlState = SqlState("58030");
    pub const DATA_CORRUPTED: SqlState = SqlState("XX001");
    pub const OUT_OF_MEMORY: SqlState = SqlState("53200");
    pub const DISK_FULL: SqlState = SqlState("53100");
    pub const UNDEFINED_SETTING: SqlState = SqlState("42704");
    pub const INVALID_TRANSACTION_STATE: SqlState = SqlState("25000");
    pub const READ_ONLY_SQL_TRANSACTION: SqlState = SqlState("25006");
    pub const INVALID_SAVEPOINT_SPECIFICATION: SqlState = SqlState("3B001");
    pub const LOCK_NOT_AVAILABLE: SqlState = SqlState("55P03");
    pub const INVALID_COLUMN_DEFINITION: SqlState = SqlState("42611");
    pub const INVALID_FOREIGN_KEY: SqlState = SqlState("42830");
    pub const DUPLICATE_COLUMN: SqlState = SqlState("42701");
    pub const INVALID_PRECEDING_OR_FOLLOWING_SIZE: SqlState = SqlState("22013");
    pub const WRONG_OBJECT_TYPE: SqlState = SqlState("42809");
    pub const TOO_MANY_COLUMNS: SqlState = SqlState("54011");
    pub const SEQUENCE_GENERATOR_LIMIT_EXCEEDED: SqlState = SqlState("2200H");
    pub const DEPENDENT_OBJECTS_STILL_EXIST: SqlState = SqlState("2BP01");
    pub const INDETERMINATE_DATATYPE: SqlState = SqlState("42P18");
    pub const INVALID_NAME: SqlState = SqlState("42602");
    pub const NAME_TOO_LONG: SqlState = SqlState("42622");
    pub const CONFIGURATION_LIMIT_EXCEEDED: SqlState = SqlState("53400");
    pub const UNDEFINED_FILE: SqlState = SqlState("58P01");
    pub const OBJECT_NOT_IN_PREREQUISITE_STATE: SqlState = SqlState("55000");
    pub const CONNECTION_FAILURE: SqlState = SqlState("08006");
    pub const SQLCLIENT_UNABLE_TO_ESTABLISH_SQLCONNECTION: SqlState = SqlState("08001");
    pub const INVALID_ROW_COUNT: SqlState = SqlState("2201W");
    pub const DUPLICATE_ALIAS: SqlState = SqlState("42712");
}

impl fmt::Display for SqlState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.0)
    }
}

/// An error as the client will see it: SQLSTATE, message, and optional detail and hint,
/// and the database object it concerns.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Error {
    pub code: SqlState,
    pub message: String,
    pub detail: Option<String>,
    pub hint: Option<String>,
    /// The object it concerns, as ErrorResponse's `s`, `t`, `c`, `d` and `n` fields name
    /// it (drivers and ORMs map a violation to a constraint with them). Boxed: most
    /// errors name none.
    pub object: Option<Box<ErrorObject>>,
}

/// The schema, table, column, data type and constraint an error concerns.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ErrorObject {
    pub schema: Option<String>,
    pub table: Option<String>,
    pub column: Option<String>,
    pub datatype: Option<String>,
    pub constraint: Option<String>,
}

/// The schema every table is in.
pub const TABLE_SCHEMA: &str = "public";

pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    pub fn new(code: SqlState, message: impl Into<String>) -> Error {
        Error {
            code,
            message: message.into(),
            detail: None,
            hint: None,
            object: None,
        }
    }

    fn object_mut(&mut self) -> &mut ErrorObject {
        self.object.get_or_insert_with(Box::default)
    }

    /// It concerns table `table` (in schema `public`).
    pub fn with_table(mut self, table: impl Into<String>) -> Error {
        let o = self.object_mut();
        o.schema = Some(TABLE_SCHEMA.to_string());
        o.table = Some(table.into());
        self
    }

    pub fn with_column(mut self, column: impl Into<String>) -> Error {
        self.object_mut().column = Some(column.into());
        self
    }

    pub fn with_constraint(mut self, constraint: impl Into<String>) -> Error {
        self.object_mut().constraint = Some(constraint.into());
        self
    }

    pub fn with_detail(mut self, detail: impl Into<String>) -> Error {
        self.detail = Some(detail.into());
        self
    }

    pub fn with_hint(mut self, hint: impl Into<String>) -> Error {
        self.hint = Some(hint.into());
        self
    }

    /// `0A000 feature_not_supported`: what SteadyDB does not do (yet) says so clearly.
    pub fn unsupported(what: impl Into<String>) -> Error {
        Error::new(SqlState::FEATURE_NOT_SUPPORTED, what)
    }

    pub fn syntax(message: impl Into<String>) -> Error {
        Error::new(SqlState::SYNTAX_ERROR, message)
    }

    /// A failed write (never a failed sync) of `what`: 53100 when the file system is out
    /// of space or quota, which the operator can fix and the server waits out; 58030
    /// otherwise.
    pub fn write_failed(what: &str, e: &std::io::Error) -> Error {
        // ENOSPC and EDQUOT.
        let code = match e.raw_os_error() {
            Some(28) | Some(122) => SqlState::DISK_FULL,
            _ => SqlState::IO_ERROR,
        };
        Error::new(code, format!("could not write {what}: {e}"))
    }

    /// 54001: a statement nested too deeply to analyse or run, as PostgreSQL reports it.
    pub fn stack_depth() -> Error {
        Error::new(SqlState::STATEMENT_TOO_COMPLEX, "stack depth limit exceeded").with_hint(
            "Increase the configuration parameter \"max_stack_depth\" (currently 2048kB), after ensuring the platform's stack depth limit is adequate.",
        )
    }

    pub fn internal(message: impl Into<String>) -> Error {
        Error::new(SqlState::INTERNAL_ERROR, message)
    }

    pub fn canceled() -> Error {
        Error::new(
            SqlState::QUERY_CANCELED,
            "canceling statement due to user request",
        )
    }

    pub fn in_failed_transaction() -> Error {
        Error::new(
            SqlState::IN_FAILED_SQL_TRANSACTION,
            "current transaction is aborted, commands ignored until end of transaction block",
        )
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} ({})", self.message, self.code)
    }
}

impl std::error::Error for Error {}

/// Shorthand for building an error: `err!(UNIQUE_VIOLATION, "duplicate key {}", k)`.
#[macro_export]
macro_rules! err {
    ($code:ident, $($arg:tt)*) => {
        $crate::error::Error::new($crate::error::SqlState::$code, format!($($arg)*))
    };
}

/// What a stopped server unwinds with in tests (see [`stop_server`]).
#[derive(Debug)]
pub struct ServerStopped;

/// Stop the server because a promise to clients could no longer be kept: a write or sync of
/// the log failed, a logged commit could not be installed, a checkpoint failed. Nothing is
/// acknowledged after this; recovery sorts it out from what is on disk. The message is
/// logged, then the process aborts. In unit tests the calling thread unwinds with
/// [`ServerStopped`] instead, so a test can recover the disk it left behind.
pub fn stop_server(message: &str) -> ! {
    tracing::error!("PANIC: {message}; stopping the server");
    // Not `eprintln!`: it panics when stderr cannot be written (a full disk under the
    // log), and a panic here would unwind instead of stopping the server.
    let _ = std::io::Write::write_fmt(
        &mut std::io::stderr(),
        format_args!("steadydb: PANIC: {message}\n"),
    );
    #[cfg(test)]
    std::panic::panic_any(ServerStopped);
    #[cfg(not(test))]
    std::process::abort();
}
