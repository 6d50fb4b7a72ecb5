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
    /// Show debug logs on stderr; servers' log messages from info (-v) or
    /// debug (-vv) up.
    #[arg(short, long, global = true, action = clap::ArgAction::Count, conflicts_with = "quiet")]
    pub verbose: u8,
    /// The least severe server log message shown on stderr (default: warning;
    /// info with -v, debug with -vv; none with -q).
    #[arg(long, global = true, value_name = "LEVEL")]
    pub log_level: Option<crate::server_logs::LogLevel>,
    /// Show no logs or progress, only errors.
    #[arg(short, long, global = true)]
    pub quiet: bool,
    /// Offer DIR to servers as a root (repeatable).
    #[arg(long = "root", global = true, value_name = "DIR")]
    pub roots: Vec<PathBuf>,
    /// Answer servers' requests for input with the schema's defaults, without asking.
    #[arg(long, global = true)]
    pub accept_defaults: bool,
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
    /// List the resources or resource templates of the servers, or read one resource.
    #[command(subcommand)]
    Resources(commands::resources::ResourcesCommand),
    /// List the prompts of the servers, or get one filled in with arguments.
    #[command(subcommand)]
    Prompts(commands::prompts::PromptsCommand),
    /// List the skills of the servers (SEP-2640), or load one, verified.
    #[command(subcommand)]
    Skills(commands::skills::SkillsCommand),
    /// Ask a server to complete an argument of a prompt or resource template.
    Complete(commands::complete::Args),
    /// Curated MCP servers: list them, show one, add one to the config.
    Presets(commands::presets::PresetsArgs),
    /// Check that every configured server can start, and install launchers.
    Doctor(commands::doctor::DoctorArgs),
    /// Sign in to remote servers with OAuth, sign out, or see who is signed in.
    #[command(subcommand)]
    Auth(commands::auth::AuthCommand),
    /// Print the shell completion script for bash, zsh, fish or powershell.
    Completions(commands::completions::Args),
    /// The gateway: serve every configured server as one MCP server (HTTP or stdio).
    Serve(commands::serve::Args),
    /// The settings page: start the gateway on loopback and open its page in the browser.
    Ui(commands::ui::Args),
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
            Command::Resources(command) => commands::resources::run(command, ctx).await,
            Command::Prompts(command) => commands::prompts::run(command, ctx).await,
            Command::Skills(command) => commands::skills::run(command, ctx).await,
            Command::Complete(args) => commands::complete::run(args, ctx).await,
            Command::Presets(args) => commands::presets::run(args, ctx).await,
            Command::Doctor(args) => commands::doctor::run(args, ctx).await,
            Command::Auth(command) => commands::auth::run(command, ctx).await,
            Command::Completions(args) => commands::completions::run(args, ctx).await,
            Command::Serve(args) => commands::serve::run(args, ctx).await,
            Command::Ui(args) => commands::ui::run(args, ctx).await,
        }
    }
}
