//! JSON-RPC messages as text, for the transports that frame messages
//! themselves (stdio lines, WebSocket frames, SSE events).
//!
//! Both directions have a short way for `tools/call`, the message a busy
//! client sends and receives most, and rmcp's own serde types for the rest:
//!
//! - [`encode`]: a `tools/call` request is written straight from rmcp's
//!   request struct, where rmcp's serializer first turns the params
//!   (arguments included) into a `serde_json::Value` tree.
//! - [`decode`]: a response whose result can only be a `CallToolResult` is
//!   parsed as one, where rmcp's untagged `ServerResult` tries fifteen other
//!   result types first.
//!
//! Each short way gives exactly what rmcp's own path gives (byte for byte
//! when writing, the same message when reading); the property tests in
//! `properties` compare the two on arbitrary messages.

mod decode;
mod encode;
#[cfg(test)]
pub(crate) mod properties;

// Some of these serve only the network transports.
#[cfg_attr(
    not(all(feature = "http", feature = "example-server")),
    allow(unused_imports)
)]
pub(crate) use decode::{Decoded, MAX_MESSAGE_BYTES, Present, decode, decode_as};
#[cfg_attr(
    not(all(feature = "http", feature = "example-server")),
    allow(unused_imports)
)]
pub(crate) use encode::{encode_client_json, encode_client_line, encode_line};
