use super::{DataType, Value};
use crate::error::Result;

/// Input function: parse PostgreSQL text format for `ty` (22P02 / 22007 / 22003 on bad input).
pub fn decode_text(ty: &DataType, text: &str) -> Result<Value> {
    let _ = (ty, text);
    unimplemented!("types::decode_text")
}

/// Output function: append PostgreSQL's text format of `value` (not NULL) to `out`.
pub fn encode_text(value: &Value, out: &mut Vec<u8>) {
    let _ = (value, out);
    unimplemented!("types::encode_text")
}

/// Binary receive function for `ty` (22P03 on malformed bytes).
pub fn decode_binary(ty: &DataType, bytes: &[u8]) -> Result<Value> {
    let _ = (ty, bytes);
    unimplemented!("types::decode_binary")
}

/// Binary send function: append PostgreSQL's binary format of `value` (not NULL) to `out`.
pub fn encode_binary(value: &Value, out: &mut Vec<u8>) {
    let _ = (value, out);
    unimplemented!("types::encode_binary")
}
