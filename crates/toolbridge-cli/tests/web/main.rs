//! The settings page (`toolbridge serve`'s /api and the page in a real
//! browser) against the real binary.
//!
//! Each file of this folder is one module (named as the file) of one test
//! binary: run one file's tests with `cargo test -p toolbridge-cli --test web NAME::`.
//! The shared helpers are in ../common (one module for the crate's tests).

#[path = "../common/mod.rs"]
mod common;
#[path = "../gateway_support/mod.rs"]
mod gateway_support;
#[path = "../web_api_client/mod.rs"]
mod web_api_client;

mod web_catalog;
mod web_doctor;
mod web_presets;
mod web_profiles;
mod web_security;
mod web_server_names;
mod web_servers;
mod web_sign_in;
mod web_tools;
mod web_ui;
