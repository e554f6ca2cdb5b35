use super::{DataType, Value};
use crate::error::Result;

/// Explicit cast (`CAST(v AS t)`, `v::t`), with PostgreSQL's semantics: any type to and
/// from text through the text I/O functions, between numeric types with rounding
/// and range checks (22003), typmods applied (varchar(n) truncates silently on explicit
/// cast, numeric(p,s) rounds to s and errors on overflow).
pub fn cast(value: Value, to: &DataType) -> Result<Value> {
    let _ = (value, to);
    unimplemented!("types::cast")
}

/// Assignment cast (INSERT/UPDATE into a column of type `to`): like [`cast`], but
/// varchar(n)/char(n) values longer than n give 22001 (unless the excess is all spaces),
/// char(n) is blank-padded, and Unknown/Text literals are parsed with the input function.
pub fn cast_assign(value: Value, to: &DataType) -> Result<Value> {
    let _ = (value, to);
    unimplemented!("types::cast_assign")
}
