//! The toolbridge gateway: one MCP server over every server toolbridge pools
//! (`toolbridge serve`).
//!
//! Clients (Claude Desktop, Cursor, VS Code, agents) connect to the gateway
//! over streamable HTTP (`/mcp`) or stdio; the gateway keeps one upstream
//! connection per configured server, shared by all of them, and forwards
//! what MCP carries: tools, resources, prompts, completion, logging levels,
//! ping; server-to-client requests go back to the client whose request
//! caused them.
//!
//! Layout, one file per concept:
//! - [`gateway`]: the state every session shares, over one
//!   `toolbridge::pool::Pool` of every upstream server (a config change
//!   reloads it, starting and stopping only what changed);
//! - [`names`]: the names clients see (unchanged with one upstream,
//!   `{server}__{name}` with several) and the tables that route them back;
//! - [`profile`]: what one client sees: `/mcp` every server, `/mcp/NAME` a
//!   profile of the config (its servers, tool globs, renames,
//!   descriptions, search mode), one path for both;
//! - [`session`]: the rmcp `ServerHandler` one client session talks to,
//!   and [`session_owners`]: which client opened each session;
//! - [`held_calls`]: a stateless client's call held open while an older
//!   upstream waits for the client's answer to a question it asked mid-call;
//! - [`gateway_tasks`]: any call run as a task (extension
//!   `io.modelcontextprotocol/tasks`) for a client that asks for tasks;
//! - [`client_peer`]: a client's peer as the pool's handlers for sampling,
//!   elicitation, roots and log messages;
//! - [`upstream_events`]: what upstreams send on their own (list changes, resource
//!   updates) passed on to clients, and [`subscriptions`]: which client
//!   session wants the updates of which resource;
//! - [`http`]: the axum router (`/mcp`, `/mcp/NAME`, `/healthz`, `/metrics`) served by
//!   [`connections`] (the accept loop: TCP_NODELAY, the connection cap,
//!   header and idle timeouts), and
//!   [`endpoint`]: stateless `tools/call` and `tools/list` answered
//!   without a per-request rmcp service;
//!   [`security`]: Host and Origin checks, and who the client is
//!   ([`identity`]): the admin token, named client tokens
//!   ([`client_tokens`]), OAuth access tokens ([`resource_server`]);
//!   [`limits`]: sessions and requests in flight per client, and request
//!   ids in flight once per session;
//!   [`rights`]: which tools each client may list and call (the config's
//!   rules), [`rate_limits`]: calls per second per client and per tool,
//!   calls in flight per upstream, and [`admission`]: both checked before
//!   an HTTP `tools/call` is dispatched (403 `insufficient_scope`, 429);
//!   [`peer`]: the local user behind a loopback connection;
//! - [`stdio`]: the same server on stdin/stdout;
//! - [`metrics`] and [`audit`]: what each call leaves behind, and
//!   [`activity`] (calls in flight and the last ended) and
//!   [`connected_clients`] and [`upstream_logs`]: what the settings page's
//!   Home, Activity and Logs show;
//! - [`metrics`] and [`audit`]: what each call leaves behind, and its spans
//!   ([`tracing_export`], OTLP) under the client's W3C trace context
//!   ([`trace_context`]);
//! - [`watch`]: the config file watcher;
//! - [`web`]: the settings web page at `/` and its JSON API under `/api`.
//!
//! Data flow: client ─► session (its view; names resolved) ─► upstream pool
//! (`Pool::call_tool` / `Pool::request`) ─► MCP server, and back.

pub mod activity;
pub mod admission;
pub mod audit;
pub mod client_peer;
pub mod client_tokens;
pub mod connected_clients;
pub mod connections;
pub mod direct_sessions;
pub mod endpoint;
pub mod error;
pub mod gateway;
pub mod gateway_tasks;
pub mod held_calls;
pub mod http;
pub mod identity;
mod incoming;
pub mod lean_answers;
pub mod lean_requests;
pub mod limits;
pub mod metrics;
pub mod names;
pub mod peer;
pub mod profile;
pub mod progress_relay;
pub mod rate_limits;
pub mod request_caps;
pub mod request_errors;
pub mod request_spans;
pub mod resource_server;
pub mod rights;
mod secret_tokens;
pub mod security;
pub mod session;
pub mod session_owners;
pub mod session_table;
pub mod skills;
pub mod stateless_calls;
pub mod stdio;
pub mod subscriptions;
pub mod task_store;
pub mod tool_calls;
pub mod trace_context;
pub mod tracing_export;
pub mod ui_resources;
pub mod upstream_events;
pub mod upstream_logs;
pub mod watch;
pub mod web;

pub use connections::ConnectionLimits;
pub use error::GatewayError;
pub use gateway::{Gateway, GatewayOptions};
pub use identity::{ClientIdentity, ClientKind};
pub use limits::Limits;
pub use security::{Clients, Security, TokenSource};
