use std::cmp::Ordering;

use super::Value;
use crate::error::Result;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ArithOp {
    Add,
    Sub,
    Mul,
    Div,
    Mod,
}

/// SQL comparison of two non-NULL values; `None` when the types are not comparable.
/// Numbers compare across widths and kinds; char(n) compares ignoring trailing blanks.
pub fn compare(a: &Value, b: &Value) -> Option<Ordering> {
    let _ = (a, b);
    unimplemented!("types::compare")
}

/// Arithmetic with PostgreSQL's promotion rules and overflow checks (22003, 22012).
pub fn arith(op: ArithOp, a: &Value, b: &Value) -> Result<Value> {
    let _ = (op, a, b);
    unimplemented!("types::arith")
}

/// Unary minus.
pub fn negate(a: &Value) -> Result<Value> {
    let _ = a;
    unimplemented!("types::negate")
}
