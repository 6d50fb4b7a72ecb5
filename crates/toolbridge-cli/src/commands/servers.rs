//! `toolbridge servers list|add|remove|enable|disable|import|test`: show and
//! edit the config file, and test servers. Data (the list) goes to stdout,
//! messages to stderr.

use std::{
    path::{Path, PathBuf},
    process::ExitCode,
};

use anyhow::bail;
use clap::Subcommand;
use toolbridge::config::{self, ImportReport};

use crate::{
    context::Context,
    outcome::{Failure, Outcome},
};

mod add;
mod list;
mod test;

pub use add::AddArgs;
pub use test::TestArgs;

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
    Test(TestArgs),
    /// Merge the servers of a Claude Desktop, Cursor, Claude Code or VS Code config file.
    Import {
        /// The file to import (claude_desktop_config.json, .mcp.json, mcp.json, settings.json).
        file: PathBuf,
        /// Replace servers whose name is already taken (default: skip them).
        #[arg(long)]
        force: bool,
    },
}

/// Runs one `servers` subcommand against the config file. Every failure of
/// the config-editing subcommands is a usage or config error: exit 2.
pub async fn run(command: ServersCommand, ctx: &Context) -> Outcome {
    let path = ctx.config_path();
    let result = match command {
        ServersCommand::Test(args) => return test::run(args, ctx).await,
        ServersCommand::List { json } => return list::run(path, json, ctx),
        ServersCommand::Add(args) => add::run(path, *args, ctx),
        ServersCommand::Remove { name } => remove(path, &name, ctx),
        ServersCommand::Enable { name } => set_disabled(path, &name, false, ctx),
        ServersCommand::Disable { name } => set_disabled(path, &name, true, ctx),
        ServersCommand::Import { file, force } => import(path, &file, force, ctx),
    };
    result.map(|()| ExitCode::SUCCESS).map_err(Failure::usage)
}

fn remove(path: &Path, name: &str, ctx: &Context) -> anyhow::Result<()> {
    require_file(path, name)?;
    config::edit(path, |doc| doc.remove_server(name).map(drop))?;
    ctx.say(format_args!(
        "removed server \"{name}\" from {}",
        path.display()
    ));
    Ok(())
}

fn set_disabled(path: &Path, name: &str, disabled: bool, ctx: &Context) -> anyhow::Result<()> {
    require_file(path, name)?;
    config::edit(path, |doc| doc.set_disabled(name, disabled))?;
    let done = if disabled { "disabled" } else { "enabled" };
    ctx.say(format_args!(
        "{done} server \"{name}\" in {}",
        path.display()
    ));
    Ok(())
}

/// Editing a server needs a config file; without one only the built-in
/// example server exists, and it cannot be edited.
fn require_file(path: &Path, name: &str) -> anyhow::Result<()> {
    if !path.exists() {
        bail!(
            "unknown server \"{name}\": there is no config file at {} (only the built-in \
             example server exists); add a server with `toolbridge servers add`",
            path.display()
        );
    }
    Ok(())
}

fn import(path: &Path, from: &Path, force: bool, ctx: &Context) -> anyhow::Result<()> {
    let report = config::import(path, from, force)?;
    say_import(&report, path, from, ctx);
    Ok(())
}

fn say_import(report: &ImportReport, path: &Path, from: &Path, ctx: &Context) {
    let names = |names: &[String]| names.join(", ");
    let from = from.display();
    if !report.added.is_empty() {
        ctx.say(format_args!(
            "added from {from} ({}): {}",
            report.found_in,
            names(&report.added)
        ));
    }
    if !report.replaced.is_empty() {
        ctx.say(format_args!("replaced: {}", names(&report.replaced)));
    }
    if !report.skipped.is_empty() {
        ctx.say(format_args!(
            "skipped, already in {}: {} (use --force to replace)",
            path.display(),
            names(&report.skipped)
        ));
    }
    if let Some(folder) = &report.workspace {
        ctx.say(format_args!(
            "${{workspaceFolder}} is now {}, the folder it meant there",
            folder.display()
        ));
    }
    if !report.inputs.is_empty() {
        ctx.say(format_args!(
            "inputs added to {}: {} (toolbridge asks for them, or reads {})",
            path.display(),
            names(&report.inputs),
            report
                .inputs
                .iter()
                .map(|id| config::input_variable(id))
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    if let Some(error) = &report.inputs_error {
        // Worth seeing even with -q: the prompts' descriptions were lost.
        eprintln!(
            "inputs not added: {error}; toolbridge still asks for each ${{input:ID}} \
             (or reads TOOLBRIDGE_INPUT_<ID>), without its description"
        );
    }
    for error in &report.invalid {
        // Invalid records are worth seeing even with -q: they were dropped.
        eprintln!("not imported: {error}");
    }
    if report.added.is_empty() && report.replaced.is_empty() {
        ctx.say("nothing imported");
    }
}
