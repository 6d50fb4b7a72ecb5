//! The gateway (`toolbridge serve`, over HTTP and stdio) against the real
//! binary, real sockets on 127.0.0.1 and real upstream servers.
//!
//! Each file of this folder is one module (named as the file) of one test
//! binary: run one file's tests with `cargo test -p toolbridge-cli --test gateway NAME::`.
//! The shared helpers are in ../common (one module for the crate's tests).

#[path = "../common/mod.rs"]
mod common;
#[path = "../gateway_support/mod.rs"]
mod gateway_support;
#[path = "../web_api_client/mod.rs"]
mod web_api_client;

mod gateway_apps;
mod gateway_generations;
mod gateway_identity;
mod gateway_interop;
mod gateway_late_requests;
mod gateway_limits;
mod gateway_pins;
mod gateway_profiles;
mod gateway_replicas;
mod gateway_rights;
mod gateway_sessions;
mod gateway_stateless;
mod gateway_tasks;
mod gateway_traces;
mod serve;
mod serve_stdio;
mod upstream_listen;
