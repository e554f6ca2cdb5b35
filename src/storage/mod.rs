//! Storage. (stub)
