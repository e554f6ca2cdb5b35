//! Server. (stub)
