//! The command line: global flags, the commands, and which one runs.

use std::path::PathBuf;

use clap::{Parser, Subcommand};

use crate::{commands, context::Context, outcome::Outcome};

/// Connect LLM applications to MCP servers.
#[derive(Debug, Parser)]
#[command(name = "toolbridge", version, about, propagate_version = true)]
pub struct Cli {
    /// Config file (default: $TOOLBRIDGE_CONFIG, else ~/.config/toolbridge/config.json).
    #[arg(long, global = true, value_name = "PATH")]
    pub config: Option<PathBuf>,
    /// Show debug logs on stderr.
    #[arg(short, long, global = true, conflicts_with = "quiet")]
    pub verbose: bool,
    /// Show no logs or progress, only errors.
    #[arg(short, long, global = true)]
    pub quiet: bool,
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// List the tools of the configured servers as one JSON document.
    Tools(commands::tools::Args),
    /// Call one tool and print its result.
    Call(commands::call::Args),
    /// Run the tool calls in a provider's response; print the messages to append.
    Exec(commands::exec::Args),
    /// Load-test one tool of a server: calls/s and latency percentiles.
    Bench(commands::bench::Args),
    /// Run the built-in example MCP server over stdio.
    ExampleServer(commands::example_server::Args),
    /// List, add, remove, enable, disable or import servers in the config file.
    #[command(subcommand)]
    Servers(commands::servers::ServersCommand),
    /// Curated MCP servers: list them, show one, add one to the config.
    Presets(commands::presets::PresetsArgs),
    /// Check that every configured server can start, and install launchers.
    Doctor(commands::doctor::DoctorArgs),
    /// Print the shell completion script for bash, zsh, fish or powershell.
    Completions(commands::completions::Args),
    /// The gateway: serve every configured server as one MCP server (HTTP or stdio).
    Serve(commands::serve::Args),
}

impl Command {
    /// Runs the command.
    pub async fn run(self, ctx: &Context) -> Outcome {
        match self {
            Command::Tools(args) => commands::tools::run(args, ctx).await,
            Command::Call(args) => commands::call::run(args, ctx).await,
            Command::Exec(args) => commands::exec::run(args, ctx).await,
            Command::Bench(args) => commands::bench::run(args, ctx).await,
            Command::ExampleServer(args) => commands::example_server::run(args, ctx).await,
            Command::Servers(command) => commands::servers::run(command, ctx).await,
            Command::Presets(args) => commands::presets::run(args, ctx).await,
            Command::Doctor(args) => commands::doctor::run(args, ctx).await,
            Command::Completions(args) => commands::completions::run(args, ctx).await,
            Command::Serve(args) => commands::serve::run(args, ctx).await,
        }
    }
}
