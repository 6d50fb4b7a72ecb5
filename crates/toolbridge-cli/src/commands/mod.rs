//! One module per command, each `async fn run(args, &Context) -> Outcome`;
//! `crate::cli` says which one runs.

pub mod auth;
pub mod bench;
pub mod call;
pub mod complete;
pub mod completions;
pub mod doctor;
pub mod example_server;
pub mod exec;
pub mod presets;
pub mod prompts;
pub mod resources;
pub mod serve;
pub mod serve_token;
pub mod servers;
pub mod skills;
pub mod tools;
pub mod tools_search;
pub mod ui;
