//! The `toolbridge` commands (other than `serve`) against the real binary and
//! real servers.
//!
//! Each file of this folder is one module (named as the file) of one test
//! binary: run one file's tests with `cargo test -p toolbridge-cli --test cli NAME::`.
//! The shared helpers are in ../common (one module for the crate's tests).

#[path = "../common/mod.rs"]
mod common;
#[path = "../gateway_support/mod.rs"]
mod gateway_support;

mod auth;
mod bench;
mod call_deadlines;
mod call_output;
mod cli;
mod client_features;
mod deploy_manifests;
mod exec;
mod hostile_process;
mod interrupt;
mod pins;
mod remote;
mod resources_prompts;
mod sandbox_unprivileged;
mod server_logs;
mod servers;
mod servers_test;
mod skills;
mod test_doctor_cli;
mod test_presets_cli;
mod tools_cache;
mod tools_search;
