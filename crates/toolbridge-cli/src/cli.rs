//! Argument parsing, logging setup and exit codes.

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
    /// Run the built-in example MCP server over stdio.
    ExampleServer,
    /// Curated MCP servers: list them, show one, add one to the config.
    Presets(commands::presets::PresetsArgs),
    /// Check that every configured server can start, and install launchers.
    Doctor(commands::doctor::DoctorArgs),
}

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
    match cli.command {
        Command::ExampleServer => commands::example_server::run(),
        Command::Presets(args) => commands::presets::run(cli.config.as_deref(), args),
        Command::Doctor(args) => commands::doctor::run(cli.config.as_deref(), args),
    }
}
