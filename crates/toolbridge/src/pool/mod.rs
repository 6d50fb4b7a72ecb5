//! The connection pool: the spec's McpService.
//!
//! One [`Pool`] holds every configured server. Each server has a slot that
//! connects lazily on first use (or all at once with [`Pool::connect_all`]),
//! caches the server's tool list until the server says it changed, and
//! restarts the server on the next use after it crashed, with backoff when it
//! keeps crashing.
//!
//! Ownership: one supervisor task per connected server owns its rmcp
//! `RunningService` (which owns the transport). Callers talk to it only
//! through the rmcp `Peer`, a channel handle, so calls to one server run
//! concurrently and a slow server never blocks another. When the service
//! ends, the supervisor marks the slot disconnected; in-flight calls fail at
//! once with the server's stderr tail.

mod connection;
mod error;
mod progress;
mod service;
mod slot;

pub use connection::ConnectionInfo;
pub use error::PoolError;
pub use service::{CallOptions, Pool, PoolOptions, StartReport};
