//! Argument parsing, logging, signals and exit codes.

use std::{path::PathBuf, process::ExitCode, time::Duration};

use clap::{ArgGroup, Args, Parser, Subcommand, ValueEnum};
use toolbridge::config::TransportKind;

use crate::commands;

/// Exit codes, as DESIGN.md fixes them.
pub mod exit {
    /// The tool returned `isError`.
    pub const TOOL_ERROR: u8 = 1;
    /// Usage or config error.
    pub const USAGE: u8 = 2;
    /// Connection or protocol error.
    pub const CONNECTION: u8 = 3;
    /// Timeout.
    pub const TIMEOUT: u8 = 4;
}

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
    Servers(ServersCommand),
    /// Curated MCP servers: list them, show one, add one to the config.
    Presets(commands::presets::PresetsArgs),
    /// Check that every configured server can start, and install launchers.
    Doctor(commands::doctor::DoctorArgs),
}

/// `toolbridge servers ...`
#[derive(Debug, Subcommand)]
pub enum ServersCommand {
    /// List the servers (header and env values shown as ***).
    List {
        /// Print a JSON array instead of a table.
        #[arg(long)]
        json: bool,
    },
    /// Add a stdio server (--command, or -- CMD ARGS...) or a network server (--url).
    Add(Box<AddArgs>),
    /// Remove a server.
    Remove {
        /// The server's name.
        name: String,
    },
    /// Enable a disabled server.
    Enable {
        /// The server's name.
        name: String,
    },
    /// Disable a server: its record is kept but it is never started.
    Disable {
        /// The server's name.
        name: String,
    },
    /// Start servers and show their transport, protocol version, tool count and start time.
    Test(crate::commands::servers::TestArgs),
    /// Merge the servers of a Claude Desktop, Cursor, Claude Code or VS Code config file.
    Import {
        /// The file to import (claude_desktop_config.json, .mcp.json, mcp.json, settings.json).
        file: PathBuf,
        /// Replace servers whose name is already taken (default: skip them).
        #[arg(long)]
        force: bool,
    },
}

/// `toolbridge servers add`
#[derive(Debug, Clone, Args)]
#[command(
    group(ArgGroup::new("target").required(true).args(["command", "url", "argv"])),
    override_usage = "toolbridge servers add NAME --command CMD [--arg ARG]... [--env KEY=VALUE]... [--cwd DIR]\n       \
                      toolbridge servers add NAME [OPTIONS] -- CMD [ARGS]...\n       \
                      toolbridge servers add NAME --url URL [--transport http|sse|websocket] [--header 'NAME: VALUE']..."
)]
pub struct AddArgs {
    /// The server's name.
    pub name: String,
    /// Program to run (a stdio server).
    #[arg(long, value_name = "CMD")]
    pub command: Option<String>,
    /// An argument for --command (repeatable).
    #[arg(
        long = "arg",
        value_name = "ARG",
        allow_hyphen_values = true,
        requires = "command"
    )]
    pub args: Vec<String>,
    /// The program and its arguments, after `--` (instead of --command and --arg).
    #[arg(last = true, value_name = "CMD ARGS")]
    pub argv: Vec<String>,
    /// Environment variable for a stdio server, KEY=VALUE (repeatable; ${VAR} allowed).
    #[arg(long = "env", value_name = "KEY=VALUE", value_parser = parse_env, conflicts_with = "url")]
    pub env: Vec<(String, String)>,
    /// Working directory for a stdio server.
    #[arg(long, value_name = "DIR", conflicts_with = "url")]
    pub cwd: Option<PathBuf>,
    /// URL of a network server.
    #[arg(long, value_name = "URL")]
    pub url: Option<String>,
    /// Transport for --url [default: websocket for ws:// URLs, else streamable HTTP
    /// with a fallback to SSE].
    #[arg(long, value_enum, requires = "url")]
    pub transport: Option<RemoteTransport>,
    /// Header sent with every request, 'Name: value' (repeatable; ${VAR} allowed).
    #[arg(long = "header", value_name = "NAME: VALUE", value_parser = parse_header, requires = "url")]
    pub headers: Vec<(String, String)>,
    /// Seconds one tool call may take [default: 120].
    #[arg(long, value_name = "SECS", value_parser = parse_timeout)]
    pub timeout: Option<Duration>,
    /// Add the server disabled.
    #[arg(long)]
    pub disabled: bool,
}

/// The network transports `servers add --transport` accepts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum RemoteTransport {
    /// Streamable HTTP.
    #[value(alias = "streamable-http")]
    Http,
    /// Legacy HTTP+SSE.
    Sse,
    /// WebSocket.
    #[value(alias = "ws")]
    Websocket,
}

impl From<RemoteTransport> for TransportKind {
    fn from(transport: RemoteTransport) -> Self {
        match transport {
            RemoteTransport::Http => TransportKind::Http,
            RemoteTransport::Sse => TransportKind::Sse,
            RemoteTransport::Websocket => TransportKind::WebSocket,
        }
    }
}

fn parse_env(text: &str) -> Result<(String, String), String> {
    match text.split_once('=') {
        Some((key, value)) if !key.is_empty() => Ok((key.to_string(), value.to_string())),
        _ => Err(format!("expected KEY=VALUE, got \"{text}\"")),
    }
}

fn parse_header(text: &str) -> Result<(String, String), String> {
    match text.split_once(':') {
        Some((name, value)) if !name.trim().is_empty() => {
            Ok((name.trim().to_string(), value.trim().to_string()))
        }
        _ => Err("expected 'Name: value', e.g. 'Authorization: Bearer ${TOKEN}'".to_string()),
    }
}

fn parse_timeout(text: &str) -> Result<Duration, String> {
    text.parse::<f64>()
        .ok()
        .filter(|secs| secs.is_finite() && *secs > 0.0)
        .and_then(|secs| Duration::try_from_secs_f64(secs).ok())
        .ok_or_else(|| format!("expected a positive number of seconds, got \"{text}\""))
}

/// An error on its way to becoming an exit code: the message is printed once
/// on stderr by [`main`].
#[derive(Debug)]
pub struct Failure {
    pub code: u8,
    pub error: anyhow::Error,
}

impl Failure {
    pub fn new(code: u8, error: impl Into<anyhow::Error>) -> Self {
        Failure {
            code,
            error: error.into(),
        }
    }

    pub fn usage(error: impl Into<anyhow::Error>) -> Self {
        Self::new(exit::USAGE, error)
    }
}

impl From<toolbridge::pool::PoolError> for Failure {
    fn from(e: toolbridge::pool::PoolError) -> Self {
        let code = if e.is_usage() {
            exit::USAGE
        } else if e.is_timeout() {
            exit::TIMEOUT
        } else {
            exit::CONNECTION
        };
        Failure::new(code, e)
    }
}

/// What a command returns: `Ok(code)` with 0 or 1, or a failure to report.
pub type Outcome = Result<u8, Failure>;

pub fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            let _ = e.print();
            return if e.use_stderr() {
                ExitCode::from(exit::USAGE)
            } else {
                ExitCode::SUCCESS
            };
        }
    };
    init_logging(&cli);
    let outcome = match cli.command {
        Command::ExampleServer(ref args) => commands::example_server::run(args),
        Command::Tools(ref args) => {
            commands::run_with_pool(&cli, |ctx| commands::tools::run(ctx, args))
        }
        Command::Call(ref args) => {
            commands::run_with_pool(&cli, |ctx| commands::call::run(ctx, args))
        }
        Command::Exec(ref args) => {
            commands::run_with_pool(&cli, |ctx| commands::exec::run(ctx, args))
        }
        Command::Servers(ref command) => commands::servers::run(&cli, command),
        Command::Presets(args) => return commands::presets::run(cli.config.as_deref(), args),
        Command::Doctor(args) => return commands::doctor::run(cli.config.as_deref(), args),
        Command::Bench(ref args) => {
            commands::run_with_pool(&cli, |ctx| commands::bench::run(ctx, args))
        }
    };
    match outcome {
        Ok(code) => ExitCode::from(code),
        Err(failure) => {
            eprintln!("toolbridge: {}", chain(&failure.error));
            ExitCode::from(failure.code)
        }
    }
}

/// The error and its causes, each once.
fn chain(error: &anyhow::Error) -> String {
    let mut text = error.to_string();
    for cause in error.chain().skip(1) {
        let cause = cause.to_string();
        if !text.contains(&cause) {
            text.push_str(": ");
            text.push_str(&cause);
        }
    }
    text
}

fn init_logging(cli: &Cli) {
    use tracing_subscriber::EnvFilter;
    let default = if cli.verbose {
        "toolbridge=debug,toolbridge_cli=debug,rmcp=info"
    } else if cli.quiet {
        "off"
    } else {
        "warn"
    };
    let filter =
        EnvFilter::try_from_env("TOOLBRIDGE_LOG").unwrap_or_else(|_| EnvFilter::new(default));
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_target(cli.verbose)
        .without_time()
        .try_init();
}
