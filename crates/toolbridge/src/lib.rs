//! toolbridge: connect LLM applications to MCP servers.
//!
//! toolbridge starts and pools connections to many MCP servers, lists their
//! tools, converts them into each LLM provider's tool format, executes the calls
//! a model makes, and guarantees that every server process it started is gone
//! when it is done.
//!
//! # Layout
//!
//! One module per concept, named after it:
//!
//! - [`config`]: the JSON config file (`mcpServers`): parse, validate, expand
//!   `${VAR}`, save atomically, import other clients' files.
//! - [`transport`]: one module per transport (stdio, streamable HTTP, legacy
//!   SSE, WebSocket), all behind rmcp's `Transport` trait.
//! - [`process`]: process groups for stdio servers and the reaper that kills
//!   them even when toolbridge itself is killed.
//! - [`pool`]: the connection pool: one supervised rmcp client per server,
//!   lazy or parallel start, tool cache, timeouts, cancellation, restart.
//! - [`tools`]: the tool model shared by the loader, the formats and the adapters.
//! - [`loader`]: which servers' tools to load (disabled, auto, manual).
//! - [`format`]: pure conversions to and from OpenAI, Anthropic and Gemini.
//! - [`adapter`]: executable tools for an agent engine, and the registry.
//! - [`presets`]: curated real MCP servers.
//! - [`deps`]: is `npx`/`uvx`/... installed, and how to install it.
//! - [`doctor`]: what stops each configured server from starting, and the fix.
//! - `redact` (internal): the one place that decides how secrets are hidden
//!   in listings, findings, errors and logs.
//! - [`example_server`]: the built-in example MCP server.
//!
//! # Data flow
//!
//! ```text
//! config file ─► config::ServerSpec[] ─► pool (one client per server) ─► transport ─► MCP server
//!                                           │ list_tools (cached)              ▲
//!                                           ▼                                  │ call_tool(timeout, cancel)
//!                loader (auto | manual) ─► McpTool[] ─► format::{openai,anthropic,gemini} ─► provider request
//!                                           │
//!                                           ▼
//!                adapter::Tool (registry) ◄─ provider tool call ── execute ─► flatten ─► provider tool result
//! ```
//!
//! The library never prints to stdout; the `toolbridge` binary decides what
//! goes where.

pub mod adapter;
pub mod config;
pub mod deps;
pub mod doctor;
pub mod example_server;
pub mod format;
pub mod loader;
pub mod pool;
pub mod presets;
pub mod process;
mod redact;
pub mod tools;
pub mod transport;

/// The rmcp protocol model types toolbridge exposes (results, content).
pub use rmcp::model as rmcp_model;

#[cfg(test)]
mod test_support {
    /// The size of the future `make` would return. `make` is never called,
    /// so it may conjure its receiver with `unreachable!()`.
    pub(crate) fn future_size<F>(_: &impl FnOnce() -> F) -> usize {
        std::mem::size_of::<F>()
    }
}
