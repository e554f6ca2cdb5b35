//! Wire. (stub)
