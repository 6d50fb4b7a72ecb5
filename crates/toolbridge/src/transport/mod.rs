//! Transports: how bytes reach an MCP server.
//!
//! Each transport is its own module and implements rmcp's
//! [`Transport`](rmcp::transport::Transport) for the client role.
//! [`create_transport`] picks one from a
//! [`ServerSpec`](crate::config::ServerSpec); above this module nothing knows
//! which one it has: the pool sees an [`AnyTransport`].
//!
//! - `any`: the factory and [`AnyTransport`].
//! - `error`: [`TransportError`]; the network transports' errors are
//!   [`TransportError::Remote`], naming the server, the URL with its secrets
//!   masked, and the HTTP status when there is one.
//! - [`stdio`]: a child process in its own process group, over `lines`
//!   (newline-delimited JSON-RPC with coalesced writes) and `codec` (JSON-RPC
//!   text with a short way for `tools/call`).
//! - [`http`]: streamable HTTP (rmcp's client over reqwest), and the
//!   auto-detection that falls back to legacy SSE for a url without `type`.
//! - [`sse`]: the legacy HTTP+SSE transport (2024-11-05), with its own
//!   bounded event parser.
//! - [`websocket`]: JSON-RPC over a WebSocket, subprotocol `mcp`.
//! - `unreadable`: a message that cannot be read (over the size cap, too
//!   deep, not UTF-8) fails the request it answered at once.

mod any;
mod end_reason;
// The example server's side of the line protocol shares `codec` and `lines`,
// and the network transports use part of `codec`: without them some of it is
// unused.
#[cfg_attr(
    not(all(feature = "http", feature = "example-server")),
    allow(dead_code)
)]
pub(crate) mod codec;
mod error;
#[cfg(feature = "http")]
pub mod http;
#[cfg_attr(not(feature = "example-server"), allow(dead_code))]
pub(crate) mod lines;
#[cfg(feature = "http")]
pub(crate) use crate::redact;
#[cfg(feature = "http")]
pub(crate) mod remote;
#[cfg(feature = "http")]
mod reuse;
#[cfg(feature = "http")]
pub mod sse;
pub mod stdio;
pub(crate) mod unreadable;
#[cfg(feature = "websocket")]
pub mod websocket;

pub use any::{AnyTransport, TransportContext, create_transport};
pub use end_reason::EndReason;
pub use error::TransportError;
pub(crate) use error::{CANNOT_CONNECT, TLS_FAILED};
pub use stdio::{StderrTail, describe_exit};
