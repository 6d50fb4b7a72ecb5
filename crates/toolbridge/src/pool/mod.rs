//! The connection pool (in progress).
