use super::{DataType, Value};
use crate::error::Result;

/// Append the order-preserving (memcomparable) encoding of a key tuple to `out`.
pub fn encode_key(values: &[Value], out: &mut Vec<u8>) {
    let _ = (values, out);
    unimplemented!("types::encode_key")
}

/// Append a compact self-delimiting encoding of a row to `out` (for WAL and pages).
pub fn encode_row(values: &[Value], out: &mut Vec<u8>) {
    let _ = (values, out);
    unimplemented!("types::encode_row")
}

/// Decode a row encoded by [`encode_row`] whose columns have `types`; never panics.
pub fn decode_row(bytes: &[u8], types: &[DataType]) -> Result<Vec<Value>> {
    let _ = (bytes, types);
    unimplemented!("types::decode_row")
}
