//! Argument parsing, logging, signals and exit codes.

use std::{path::PathBuf, process::ExitCode};

use clap::{Parser, Subcommand};

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
    /// Load-test one tool of a server: calls/s and latency percentiles.
    Bench(commands::bench::Args),
    /// Run the built-in example MCP server over stdio.
    ExampleServer(commands::example_server::Args),
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
