//! Values and data types: PostgreSQL's built-in scalar types as SteadyDB stores them.
//!
//! Invariants:
//! - A [`Value`] stored in a table column always has exactly that column's [`DataType`]
//!   (after assignment casts), with typmods (varchar(n), char(n), numeric(p,s)) enforced.
//!   `char(n)` values are stored blank-padded to n, as PostgreSQL does.
//! - Text input/output matches PostgreSQL's output functions under `DateStyle = ISO, MDY`,
//!   `extra_float_digits = 1` and the session's `TimeZone` ([`zone`]), so clients parse
//!   our text like PostgreSQL's.
//! - Binary input/output matches PostgreSQL's `*recv`/`*send` functions byte for byte.
//! - Key encoding is order-preserving: `encode_key(a) < encode_key(b)` (memcmp) exactly when
//!   `a < b` in SQL order, column by column, so a B+tree can range-scan on encoded keys.
//! - Decoding never panics on bad bytes: bytes from disk or the network give an error.
//! - A `Value::Text` does not know whether it came from a `char(n)` column. Where bpchar
//!   semantics matter (trailing blanks insignificant), use the typed variants
//!   [`compare_typed`], [`encode_key_typed`] and [`cast_from`] with the static type.

mod array;
mod cast;
mod datetime;
mod encoding;
mod extract;
mod float;
mod interval;
mod io;
pub mod jsonb;
mod numeric;
mod ops;
mod record;
mod shortest;
#[cfg(test)]
mod tests;
mod to_char;
mod to_timestamp;
pub mod zone;

pub use array::{array_of, array_oid, array_type_of_oid, static_element};
pub use cast::{cast, cast_assign, cast_assign_from, cast_from};
pub use datetime::{
    civil_from_days, days_from_civil, days_in_month, is_valid_date, is_valid_timestamp,
    push_offset, timestamptz_to_timestamp,
};
pub use datetime::{date_to_timestamp, parse_timestamp, timestamp_to_date, USECS_PER_DAY};
pub use encoding::{
    decode_leading_columns, decode_row, decode_row_filled, decode_row_prefix, encode_key,
    encode_key_typed, encode_row,
};
pub use extract::{date_trunc, date_trunc_tz, extract};
pub use interval::{
    add_to_timestamp as interval_add_to_timestamp,
    add_to_timestamptz as interval_add_to_timestamptz, format_interval, parse_interval,
    parse_interval_in_fields, Interval, IntervalField,
};
pub use io::{
    decode_binary, decode_text, encode_binary, encode_text, format_text, utf8, utf8_text,
};
pub use jsonb::Jsonb;
pub use numeric::div as numeric_div;
pub use numeric::parse_numeric;
pub use ops::{arith, compare, compare_typed, negate, ArithOp};
pub use record::record_shape;
pub use to_char::{interval_to_char, number_to_char, timestamp_to_char};
pub use to_timestamp::{to_date, to_timestamp};

/// The element type an `int2vector` value carries (see [`DataType::Int2Vector`]).
pub static INT2VECTOR: DataType = DataType::Int2Vector;
/// The element type an `oidvector` value carries (see [`DataType::OidVector`]).
pub static OIDVECTOR: DataType = DataType::OidVector;

/// An `int2vector` or `oidvector` (`vector`) of `items`.
pub fn vector_value(vector: &'static DataType, items: Vec<Value>) -> Value {
    debug_assert!(vector.is_vector());
    Value::Array(vector, items.into())
}

use rust_decimal::Decimal;

/// PostgreSQL type OIDs (from `pg_type.dat`) for the types we support.
pub mod oid {
    pub const BOOL: u32 = 16;
    pub const BYTEA: u32 = 17;
    pub const INT8: u32 = 20;
    pub const INT2: u32 = 21;
    pub const INT4: u32 = 23;
    pub const TEXT: u32 = 25;
    pub const OID: u32 = 26;
    pub const CHAR: u32 = 18;
    pub const JSON: u32 = 114;
    pub const RECORD: u32 = 2249;
    pub const NAME: u32 = 19;
    pub const REGCLASS: u32 = 2205;
    pub const REGTYPE: u32 = 2206;
    pub const REGNAMESPACE: u32 = 4089;
    pub const REGPROC: u32 = 24;
    pub const UUID: u32 = 2950;
    pub const INTERVAL: u32 = 1186;
    pub const JSONB: u32 = 3802;
    pub const INT2VECTOR: u32 = 22;
    pub const OIDVECTOR: u32 = 30;
    pub const FLOAT4: u32 = 700;
    pub const FLOAT8: u32 = 701;
    pub const UNKNOWN: u32 = 705;
    pub const BPCHAR: u32 = 1042;
    pub const VARCHAR: u32 = 1043;
    pub const DATE: u32 = 1082;
    pub const TIMESTAMP: u32 = 1114;
    pub const TIMESTAMPTZ: u32 = 1184;
    pub const NUMERIC: u32 = 1700;
    pub const VOID: u32 = 2278;
}

/// A column or expression type. Typmods are carried in the variants that have them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum DataType {
    Bool,
    Int2,
    Int4,
    Int8,
    Float4,
    Float8,
    /// numeric(precision, scale); `None` is unconstrained `numeric`.
    Numeric(Option<(u8, u8)>),
    Text,
    /// varchar(n); `None` is unbounded.
    Varchar(Option<u32>),
    /// char(n), blank-padded; `char` alone is char(1).
    Char(u32),
    Bytea,
    Date,
    Timestamp,
    TimestampTz,
    /// The type of an untyped string literal or parameter before it is resolved by context.
    Unknown,
    /// `oid`: an unsigned 32-bit object identifier ([`Value::Oid`]).
    Oid,
    /// `name`: a catalog identifier, text ([`Value::Text`]).
    Name,
    /// `"char"`: one byte, text of at most one character ([`Value::Text`]).
    InternalChar,
    /// `regclass`: a relation's oid shown as its name ([`Value::Reg`]).
    RegClass,
    /// `regtype`: a type's oid shown as its name ([`Value::Reg`]).
    RegType,
    /// `regnamespace`: a schema's oid shown as its name ([`Value::Reg`]).
    RegNamespace,
    /// `regproc`: a function's oid shown as its name ([`Value::Reg`]), `-` for 0.
    RegProc,
    /// `int2vector` and `oidvector` (catalog columns): arrays of int2 / oid subscripted
    /// from 0, written space-separated. Their values are [`Value::Array`]s whose element
    /// type is the vector type itself ([`INT2VECTOR`], [`OIDVECTOR`]), the items int2 /
    /// oid values.
    Int2Vector,
    OidVector,
    /// `uuid` ([`Value::Uuid`]).
    Uuid,
    /// `interval` ([`Value::Interval`]).
    Interval,
    /// `json`: JSON text, kept as written ([`Value::Text`]).
    Json,
    /// `jsonb`: a JSON document as a tree ([`Value::Jsonb`]).
    Jsonb,
    /// A one-dimensional array of the element type ([`Value::Array`]); see `array.rs`
    /// for the element types there are.
    Array(&'static DataType),
    /// An anonymous row type (`record`) with these named fields ([`Value::Record`]):
    /// what `information_schema._pg_expandarray` returns, `(x, n)`.
    Record(&'static [(&'static str, DataType)]),
    /// `void`: what a function returns that returns nothing (`pg_sleep`); its value is an
    /// empty [`Value::Text`], written as an empty string.
    Void,
}

/// The row type of `information_schema._pg_expandarray(anyarray)`, `(x element, n
/// integer)`, for an array of `element`; None for the element types it is not made for
/// (those with a typmod).
pub fn expanded_array_type(element: DataType) -> Option<DataType> {
    macro_rules! row {
        ($t:expr) => {{
            static FIELDS: [(&str, DataType); 2] = [("x", $t), ("n", DataType::Int4)];
            &FIELDS
        }};
    }
    Some(DataType::Record(match element {
        DataType::Bool => row!(DataType::Bool),
        DataType::Int2 => row!(DataType::Int2),
        DataType::Int4 => row!(DataType::Int4),
        DataType::Int8 => row!(DataType::Int8),
        DataType::Float4 => row!(DataType::Float4),
        DataType::Float8 => row!(DataType::Float8),
        DataType::Text => row!(DataType::Text),
        DataType::Oid => row!(DataType::Oid),
        DataType::Name => row!(DataType::Name),
        DataType::Date => row!(DataType::Date),
        DataType::Timestamp => row!(DataType::Timestamp),
        DataType::TimestampTz => row!(DataType::TimestampTz),
        _ => return None,
    }))
}

impl DataType {
    pub fn oid(&self) -> u32 {
        match self {
            DataType::Bool => oid::BOOL,
            DataType::Int2 => oid::INT2,
            DataType::Int4 => oid::INT4,
            DataType::Int8 => oid::INT8,
            DataType::Float4 => oid::FLOAT4,
            DataType::Float8 => oid::FLOAT8,
            DataType::Numeric(_) => oid::NUMERIC,
            DataType::Text => oid::TEXT,
            DataType::Varchar(_) => oid::VARCHAR,
            DataType::Char(_) => oid::BPCHAR,
            DataType::Bytea => oid::BYTEA,
            DataType::Date => oid::DATE,
            DataType::Timestamp => oid::TIMESTAMP,
            DataType::TimestampTz => oid::TIMESTAMPTZ,
            DataType::Unknown => oid::UNKNOWN,
            DataType::Oid => oid::OID,
            DataType::Name => oid::NAME,
            DataType::InternalChar => oid::CHAR,
            DataType::Json => oid::JSON,
            DataType::RegClass => oid::REGCLASS,
            DataType::RegType => oid::REGTYPE,
            DataType::RegNamespace => oid::REGNAMESPACE,
            DataType::RegProc => oid::REGPROC,
            DataType::Int2Vector => oid::INT2VECTOR,
            DataType::Uuid => oid::UUID,
            DataType::Interval => oid::INTERVAL,
            DataType::Jsonb => oid::JSONB,
            DataType::OidVector => oid::OIDVECTOR,
            DataType::Array(e) => array::array_oid(**e),
            DataType::Record(_) => oid::RECORD,
            DataType::Void => oid::VOID,
        }
    }

    /// The type for a parameter OID a client declared; `None` for OIDs we do not support.
    /// OID 0 means "unspecified" and maps to `Unknown`.
    pub fn from_oid(oid: u32) -> Option<DataType> {
        Some(match oid {
            0 | oid::UNKNOWN => DataType::Unknown,
            oid::BOOL => DataType::Bool,
            oid::INT2 => DataType::Int2,
            oid::INT4 => DataType::Int4,
            oid::OID => DataType::Oid,
            oid::NAME => DataType::Name,
            oid::CHAR => DataType::InternalChar,
            oid::JSON => DataType::Json,
            oid::REGCLASS => DataType::RegClass,
            oid::REGTYPE => DataType::RegType,
            oid::REGNAMESPACE => DataType::RegNamespace,
            oid::REGPROC => DataType::RegProc,
            oid::INT2VECTOR => DataType::Int2Vector,
            oid::UUID => DataType::Uuid,
            oid::INTERVAL => DataType::Interval,
            oid::JSONB => DataType::Jsonb,
            oid::OIDVECTOR => DataType::OidVector,
            oid::INT8 => DataType::Int8,
            oid::FLOAT4 => DataType::Float4,
            oid::FLOAT8 => DataType::Float8,
            oid::NUMERIC => DataType::Numeric(None),
            oid::TEXT => DataType::Text,
            oid::VARCHAR => DataType::Varchar(None),
            oid::BPCHAR => DataType::Char(1),
            oid::BYTEA => DataType::Bytea,
            oid::DATE => DataType::Date,
            oid::TIMESTAMP => DataType::Timestamp,
            oid::TIMESTAMPTZ => DataType::TimestampTz,
            other => return array::array_type_of_oid(other),
        })
    }

    /// `pg_type.typlen`: fixed width in bytes, or -1 for variable length.
    pub fn typlen(&self) -> i16 {
        match self {
            DataType::Bool => 1,
            DataType::Int2 => 2,
            DataType::Int4
            | DataType::Float4
            | DataType::Date
            | DataType::Oid
            | DataType::RegClass
            | DataType::RegType
            | DataType::RegNamespace
            | DataType::RegProc => 4,
            DataType::Name => 64,
            DataType::InternalChar => 1,
            DataType::Int8 | DataType::Float8 | DataType::Timestamp | DataType::TimestampTz => 8,
            DataType::Uuid | DataType::Interval => 16,
            DataType::Unknown => -2,
            _ => -1,
        }
    }

    /// The typmod sent in RowDescription (-1 when there is none).
    pub fn typmod(&self) -> i32 {
        match self {
            DataType::Varchar(Some(n)) => *n as i32 + 4,
            DataType::Char(n) => *n as i32 + 4,
            DataType::Numeric(Some((p, s))) => (((*p as i32) << 16) | *s as i32) + 4,
            _ => -1,
        }
    }

    /// The name PostgreSQL uses in messages, e.g. `integer`, `character varying(10)`.
    pub fn name(&self) -> String {
        match self {
            DataType::Bool => "boolean".into(),
            DataType::Int2 => "smallint".into(),
            DataType::Int4 => "integer".into(),
            DataType::Int8 => "bigint".into(),
            DataType::Float4 => "real".into(),
            DataType::Float8 => "double precision".into(),
            DataType::Numeric(None) => "numeric".into(),
            DataType::Numeric(Some((p, s))) => format!("numeric({p},{s})"),
            DataType::Text => "text".into(),
            DataType::Varchar(None) => "character varying".into(),
            DataType::Varchar(Some(n)) => format!("character varying({n})"),
            DataType::Char(n) => format!("character({n})"),
            DataType::Bytea => "bytea".into(),
            DataType::Date => "date".into(),
            DataType::Timestamp => "timestamp without time zone".into(),
            DataType::TimestampTz => "timestamp with time zone".into(),
            DataType::Unknown => "unknown".into(),
            DataType::Oid => "oid".into(),
            DataType::Name => "name".into(),
            DataType::InternalChar => "\"char\"".into(),
            DataType::Json => "json".into(),
            DataType::RegClass => "regclass".into(),
            DataType::RegType => "regtype".into(),
            DataType::RegNamespace => "regnamespace".into(),
            DataType::RegProc => "regproc".into(),
            DataType::Int2Vector => "int2vector".into(),
            DataType::Uuid => "uuid".into(),
            DataType::Interval => "interval".into(),
            DataType::Jsonb => "jsonb".into(),
            DataType::OidVector => "oidvector".into(),
            DataType::Array(e) => format!("{}[]", e.name()),
            DataType::Record(_) => "record".into(),
            DataType::Void => "void".into(),
        }
    }

    /// The catalog types that only system views and expressions have: user tables cannot
    /// store them.
    pub fn is_catalog_only(&self) -> bool {
        match self {
            DataType::Oid
            | DataType::Name
            | DataType::InternalChar
            | DataType::RegClass
            | DataType::RegType
            | DataType::RegNamespace
            | DataType::RegProc
            | DataType::Int2Vector
            | DataType::OidVector
            | DataType::Record(_)
            | DataType::Void => true,
            DataType::Array(e) => e.is_catalog_only(),
            _ => false,
        }
    }

    /// The element type of an array type.
    pub fn element(&self) -> Option<DataType> {
        match self {
            DataType::Array(e) => Some(**e),
            DataType::Int2Vector => Some(DataType::Int2),
            DataType::OidVector => Some(DataType::Oid),
            _ => None,
        }
    }

    pub fn is_integer(&self) -> bool {
        matches!(self, DataType::Int2 | DataType::Int4 | DataType::Int8)
    }

    pub fn is_numeric(&self) -> bool {
        matches!(
            self,
            DataType::Int2
                | DataType::Int4
                | DataType::Int8
                | DataType::Float4
                | DataType::Float8
                | DataType::Numeric(_)
        )
    }

    /// `int2vector` or `oidvector`.
    pub fn is_vector(&self) -> bool {
        matches!(self, DataType::Int2Vector | DataType::OidVector)
    }

    pub fn is_string(&self) -> bool {
        matches!(
            self,
            DataType::Text
                | DataType::Varchar(_)
                | DataType::Char(_)
                | DataType::Unknown
                | DataType::Name
                | DataType::InternalChar
        )
    }

    /// The same type without its typmod (what an expression of this type yields).
    pub fn without_typmod(&self) -> DataType {
        match self {
            DataType::Varchar(_) => DataType::Varchar(None),
            DataType::Numeric(_) => DataType::Numeric(None),
            other => *other,
        }
    }
}

/// A single SQL value. Dates and timestamps use PostgreSQL's epoch, 2000-01-01:
/// `Date` is days since it, `Timestamp`/`TimestampTz` are microseconds since its midnight
/// (UTC for `TimestampTz`). These are exactly the binary wire representations.
#[derive(Clone, Debug)]
pub enum Value {
    Null,
    Bool(bool),
    Int2(i16),
    Int4(i32),
    Int8(i64),
    Float4(f32),
    Float8(f64),
    Numeric(Decimal),
    /// text, varchar and char values (and untyped literals).
    Text(String),
    Bytea(Vec<u8>),
    Date(i32),
    Timestamp(i64),
    TimestampTz(i64),
    /// An `oid`.
    Oid(u32),
    /// A `regclass` or `regtype`: the oid, and the name it is shown as (looked up in the
    /// catalog when the value was made).
    Reg(u32, std::sync::Arc<str>),
    /// A one-dimensional array (lower bound 1) of values of the element type.
    Array(&'static DataType, std::sync::Arc<[Value]>),
    /// A `uuid`, its 16 bytes as one big-endian number.
    Uuid(u128),
    Interval(Interval),
    Jsonb(std::sync::Arc<Jsonb>),
    /// A row of a `record` type: its fields' values, of its type's fields' types.
    Record(&'static [(&'static str, DataType)], std::sync::Arc<[Value]>),
}

impl Value {
    pub fn is_null(&self) -> bool {
        matches!(self, Value::Null)
    }

    /// The natural type of this value (`None` for NULL). Text values report `Text`.
    pub fn data_type(&self) -> Option<DataType> {
        Some(match self {
            Value::Null => return None,
            Value::Bool(_) => DataType::Bool,
            Value::Int2(_) => DataType::Int2,
            Value::Int4(_) => DataType::Int4,
            Value::Int8(_) => DataType::Int8,
            Value::Float4(_) => DataType::Float4,
            Value::Float8(_) => DataType::Float8,
            Value::Numeric(_) => DataType::Numeric(None),
            Value::Text(_) => DataType::Text,
            Value::Bytea(_) => DataType::Bytea,
            Value::Uuid(_) => DataType::Uuid,
            Value::Interval(_) => DataType::Interval,
            Value::Jsonb(_) => DataType::Jsonb,
            Value::Date(_) => DataType::Date,
            Value::Timestamp(_) => DataType::Timestamp,
            Value::TimestampTz(_) => DataType::TimestampTz,
            Value::Oid(_) | Value::Reg(..) => DataType::Oid,
            Value::Array(e, _) if e.is_vector() => **e,
            Value::Array(e, _) => DataType::Array(e),
            Value::Record(fields, _) => DataType::Record(fields),
        })
    }

    /// The value as an i64 if it is an integer of any width.
    pub fn as_i64(&self) -> Option<i64> {
        match self {
            Value::Int2(v) => Some(*v as i64),
            Value::Int4(v) => Some(*v as i64),
            Value::Int8(v) => Some(*v),
            Value::Oid(v) | Value::Reg(v, _) => Some(*v as i64),
            _ => None,
        }
    }
}

/// SQL equality for grouping and hashing: NULLs group together, numbers compare by value
/// across widths (so `1::int2` and `1::int8` are equal), floats by value with NaN = NaN.
impl PartialEq for Value {
    fn eq(&self, other: &Value) -> bool {
        match (self, other) {
            (Value::Null, Value::Null) => true,
            (Value::Null, _) | (_, Value::Null) => false,
            _ => compare(self, other) == Some(std::cmp::Ordering::Equal),
        }
    }
}

impl Eq for Value {}

impl std::hash::Hash for Value {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        // Hash must agree with Eq across numeric widths: hash integers as i64, and other
        // numbers through their normalized decimal/float form.
        match self {
            Value::Null => 0u8.hash(state),
            Value::Bool(b) => b.hash(state),
            Value::Int2(_) | Value::Int4(_) | Value::Int8(_) | Value::Oid(_) | Value::Reg(..) => {
                Decimal::from(self.as_i64().unwrap_or(0))
                    .normalize()
                    .hash(state)
            }
            Value::Numeric(d) => d.normalize().hash(state),
            Value::Float4(f) => float_hash(*f as f64, state),
            Value::Float8(f) => float_hash(*f, state),
            Value::Text(s) => s.trim_end_matches(' ').hash(state),
            Value::Bytea(b) => b.hash(state),
            Value::Uuid(u) => u.hash(state),
            Value::Interval(iv) => iv.span().hash(state),
            Value::Jsonb(j) => j.hash(state),
            Value::Date(d) => d.hash(state),
            Value::Timestamp(t) | Value::TimestampTz(t) => t.hash(state),
            Value::Array(_, items) | Value::Record(_, items) => {
                items.len().hash(state);
                for v in items.iter() {
                    v.hash(state);
                }
            }
        }
    }
}

fn float_hash<H: std::hash::Hasher>(f: f64, state: &mut H) {
    use std::hash::Hash;
    if f.fract() == 0.0 && f.abs() < 1e15 {
        Decimal::from(f as i64).normalize().hash(state)
    } else if f.is_nan() {
        u64::MAX.hash(state)
    } else {
        f.to_bits().hash(state)
    }
}

/// Microseconds since 2000-01-01 00:00:00 UTC (PostgreSQL's epoch), now.
pub fn now_us() -> i64 {
    const PG_EPOCH_UNIX_US: i64 = 946_684_800_000_000;
    let since_unix = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_micros() as i64)
        .unwrap_or(0);
    since_unix - PG_EPOCH_UNIX_US
}
