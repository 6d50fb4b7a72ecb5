//! The library against real servers (stdio processes, HTTP, SSE, WebSocket on
//! 127.0.0.1): the pool, its transports, caches, pins, sandbox, tasks and the
//! conformance suite's reference server.
//!
//! Each file of this folder is one module (named as the file) of one test
//! binary: run one file's tests with `cargo test -p toolbridge --test pool NAME::`.
//! The shared helpers are in ../common (one module for the crate's tests).

#[path = "../common/mod.rs"]
mod common;

mod test_adapter;
mod test_client_features;
mod test_config_formats;
mod test_hostile_protocol;
mod test_http_faults;
mod test_legacy_sse;
mod test_message_caps;
mod test_no_secrets;
mod test_param_headers;
mod test_pins;
mod test_pool;
mod test_pool_drop;
mod test_process_escape;
mod test_prompts;
mod test_reference_server;
mod test_reload;
mod test_resources;
mod test_routing;
mod test_sandbox;
mod test_schema_preservation;
mod test_search_tools;
mod test_skills;
mod test_startup_timeout;
mod test_streamable_http;
mod test_tasks;
mod test_tool_cache;
mod test_websocket;
