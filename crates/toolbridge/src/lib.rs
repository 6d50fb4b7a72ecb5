//! toolbridge: connect LLM applications to MCP servers.
//!
//! toolbridge starts and pools connections to many MCP servers, lists their
//! tools, converts them into each LLM provider's tool format, executes the calls
//! a model makes, and guarantees that every server process it started is gone
//! when it is done.
//!
//! # Quick start
//!
//! Converting tools and reading a model's tool calls are pure functions:
//!
//! ```
//! use std::sync::Arc;
//! use serde_json::json;
//! use toolbridge::{Format, FormatOptions, McpTool, NameTable, convert_tools, parse_calls};
//!
//! let schema = json!({"type": "object", "properties": {"city": {"type": "string"}}});
//! let tool = McpTool {
//!     id: McpTool::id_for("weather", "forecast"),
//!     name: "forecast".into(),
//!     description: "Tomorrow's weather".into(),
//!     input_schema: Arc::new(schema.as_object().unwrap().clone()),
//!     server_id: "weather".into(),
//!     server_name: "weather".into(),
//!     ..McpTool::default()
//! };
//! let tools = [tool];
//! let names = NameTable::for_tools(&tools);
//!
//! // What goes into the request's `tools`.
//! let openai = convert_tools(Format::OpenAi, &tools, &names, &FormatOptions::default());
//! assert_eq!(openai[0]["type"], "function");
//! assert_eq!(openai[0]["function"]["name"], "mcp__weather__forecast");
//!
//! // What came back: the name is mapped to (server, tool) through the table.
//! let response = json!({"choices": [{"message": {"role": "assistant", "tool_calls": [{
//!     "id": "call_1", "type": "function",
//!     "function": {"name": "mcp__weather__forecast", "arguments": "{\"city\":\"Oslo\"}"}
//! }]}}]});
//! let calls = parse_calls(Format::OpenAi, &response, &names)?;
//! let (tool, arguments) = calls[0].invocation()?;
//! assert_eq!((tool.server_id.as_str(), tool.tool.as_str()), ("weather", "forecast"));
//! assert_eq!(arguments["city"], "Oslo");
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! Running them takes a [`Pool`] of servers (feature `client`, on by default).
//! The results go back to the model with [`render_results`]:
//!
//! ```no_run
//! # #[cfg(feature = "client")]
//! # async fn run() -> Result<(), Box<dyn std::error::Error>> {
//! use std::path::Path;
//! use toolbridge::{
//!     Config, Format, FormatOptions, McpTool, NameTable, Pool, PoolOptions, ToolRegistry,
//!     convert_tools, load_mcp_tools, parse_calls, render_results,
//! };
//!
//! let config = Config::load(Path::new("mcp.json"))?;
//! let servers = config.resolve_enabled().into_iter().collect::<Result<Vec<_>, _>>()?;
//! let pool = Pool::new(servers, PoolOptions::default());
//!
//! // Every enabled server's tools, executable, in a registry that routes calls.
//! let mut registry = ToolRegistry::new();
//! for adapter in load_mcp_tools(&pool, &pool.active_server_names()).await {
//!     registry.register(adapter)?;
//! }
//! let tools: Vec<McpTool> = registry.tools().map(|t| t.mcp_tool().clone()).collect();
//! let names = NameTable::for_tools(&tools);
//! let request_tools = convert_tools(Format::OpenAi, &tools, &names, &FormatOptions::default());
//! // ... send `request_tools` with the conversation; the model answers ...
//! # let response = serde_json::json!({"tool_calls": []});
//! let calls = parse_calls(Format::OpenAi, &response, &names)?;
//! let results = registry.execute_calls(calls).await; // in parallel
//! let messages = render_results(Format::OpenAi, &results)?; // append these
//! # let _ = (request_tools, messages);
//! pool.close_all().await;
//! # Ok(())
//! # }
//! ```
//!
//! `examples/list_tools.rs` and `examples/agent_loop.rs` are whole programs.
//!
//! # Features
//!
//! - `client` (default): [`config`], [`pool`], [`process`], the stdio
//!   transport, [`adapter`], [`loader`], [`deps`], [`doctor`]; tokio.
//! - `http` (default): streamable HTTP and legacy HTTP+SSE servers (reqwest,
//!   rustls).
//! - `websocket` (default, needs `http`): WebSocket servers.
//! - `auth` (default, needs `http`): [`auth`], OAuth sign-in for remote
//!   servers (rmcp's `auth`).
//! - `example-server` (default): [`example_server`], rmcp's server side.
//!
//! With no features, [`tools`], [`format`](mod@format), [`search`] and [`presets`] remain: no tokio
//! runtime, no HTTP, no TLS. A config entry whose transport was left out
//! fails when its server starts, with an error naming the server and the
//! feature.
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
//!   lazy or parallel start, tool cache, timeouts, cancellation, restart;
//!   resources, resource templates, prompts and completion on the same
//!   connections.
//! - [`tools`]: the tool model shared by the loader, the formats and the adapters.
//! - [`loader`]: which servers' tools to load (disabled, auto, manual).
//! - [`format`](mod@format): pure conversions to and from OpenAI, Anthropic and Gemini.
//! - [`adapter`]: executable tools for an agent engine, and the registry.
//! - [`hidden_chars`]: characters a person cannot see in a definition,
//!   reported and kept from providers.
//! - [`json_kind`]: what kind of JSON value a value is, as messages say it.
//! - [`pins`]: trust on first use of tool definitions: pinned, and a
//!   changed or new one withheld until approved.
//! - [`search`]: a BM25 index over tool definitions, to find the tools for a
//!   task described in words.
//! - [`presets`]: curated real MCP servers.
//! - [`auth`]: OAuth for remote servers: sign-in, tokens stored and refreshed.
//! - [`deps`]: is `npx`/`uvx`/... installed, and how to install it.
//! - [`doctor`]: what stops each configured server from starting, and the fix.
//! - [`redact`]: the one place that decides how secrets are hidden
//!   in listings, findings, errors and logs.
//! - [`sandbox`]: what a stdio server may read, write and reach (Landlock,
//!   limits, namespaces), set up between fork and exec.
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

#[cfg(feature = "client")]
pub mod adapter;
#[cfg(feature = "auth")]
pub mod auth;
#[cfg(feature = "client")]
pub mod config;
#[cfg(feature = "client")]
pub mod deps;
#[cfg(feature = "client")]
pub mod doctor;
#[cfg(feature = "example-server")]
pub mod example_server;
pub mod format;
pub mod hidden_chars;
pub mod json_kind;
#[cfg(feature = "client")]
pub mod loader;
pub mod lock;
#[cfg(feature = "client")]
pub mod pins;
#[cfg(feature = "client")]
pub mod pool;
pub mod presets;
#[cfg(feature = "client")]
pub mod process;
#[cfg(feature = "client")]
// Without `http` only the config's masking uses it.
#[cfg_attr(not(feature = "http"), allow(dead_code))]
pub mod redact;
#[cfg(feature = "client")]
pub mod sandbox;
pub mod search;
pub mod tools;
#[cfg(feature = "client")]
pub mod transport;

/// The rmcp protocol model types toolbridge exposes (results, content).
pub use rmcp::model as rmcp_model;

pub use format::{
    CallsError, Format, FormatOptions, NameStyle, NameTable, ToolCall, ToolOutcome, ToolRef,
    convert_tools, flatten_content, parse_calls, render_results,
};
pub use tools::McpTool;

#[cfg(feature = "client")]
pub use adapter::{McpToolAdapter, RegistryError, Tool, ToolError, ToolRegistry, load_mcp_tools};
#[cfg(feature = "client")]
pub use config::{Config, ConfigError, ServerSpec};
#[cfg(feature = "client")]
pub use pool::{CallOptions, Pool, PoolError, PoolOptions};
#[cfg(feature = "client")]
pub use transport::TransportError;

#[cfg(test)]
mod test_support {
    /// The size of the future `make` would return. `make` is never called,
    /// so it may conjure its receiver with `unreachable!()`.
    pub(crate) fn future_size<F>(_: &impl FnOnce() -> F) -> usize {
        std::mem::size_of::<F>()
    }
}
