//! Transactions. (stub)
