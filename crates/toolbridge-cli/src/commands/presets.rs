//! `toolbridge presets list | show | add`.

use std::{path::Path, process::ExitCode};

use anyhow::{Context as _, Result};
use clap::{Args, Subcommand};
use toolbridge::presets::{self, Category, Preset, Transport};

use crate::{
    context::Context,
    outcome::{Failure, Outcome},
};

/// `toolbridge presets ...`
#[derive(Debug, Args)]
pub struct PresetsArgs {
    #[command(subcommand)]
    pub command: PresetsCommand,
}

#[derive(Debug, Subcommand)]
pub enum PresetsCommand {
    /// List the curated MCP servers.
    List {
        /// Only this category: search, vision, web-reading, code-repo, general.
        #[arg(long, value_name = "C", value_parser = parse_category)]
        category: Option<Category>,
        /// Print JSON (every field) instead of a table.
        #[arg(long)]
        json: bool,
    },
    /// Show one preset and the config entry it adds.
    Show {
        /// The preset's id (see `presets list`).
        id: String,
        /// Print the preset as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Add a preset to the config file as a server.
    Add {
        /// The preset's id (see `presets list`).
        id: String,
        /// The server's name in the config (default: the preset's id).
        #[arg(long, value_name = "N")]
        name: Option<String>,
        /// Store this API key in the config (made readable by you only)
        /// instead of a ${VAR} reference to the environment.
        #[arg(long, value_name = "KEY")]
        api_key: Option<String>,
        /// Extra arguments for the server (after `--`), e.g. directories.
        #[arg(last = true, value_name = "EXTRA ARGS")]
        extra: Vec<String>,
    },
}

fn parse_category(s: &str) -> Result<Category, String> {
    s.parse().map_err(|e: presets::PresetError| e.to_string())
}

pub async fn run(args: PresetsArgs, ctx: &Context) -> Outcome {
    let result = match args.command {
        PresetsCommand::List { category, json } => list(category, json),
        PresetsCommand::Show { id, json } => show(&id, json),
        PresetsCommand::Add {
            id,
            name,
            api_key,
            extra,
        } => add(ctx.config_path(), &id, name, api_key.as_deref(), &extra),
    };
    result.map(|()| ExitCode::SUCCESS).map_err(Failure::usage)
}

fn print_stdout(text: &str) -> Result<()> {
    crate::output::write(text).context("cannot write to stdout")
}

fn list(category: Option<Category>, json: bool) -> Result<()> {
    let chosen: Vec<&Preset> = presets::all()
        .iter()
        .filter(|p| category.is_none_or(|c| p.category == c))
        .collect();
    if json {
        let mut text = serde_json::to_string_pretty(&chosen)?;
        text.push('\n');
        return print_stdout(&text);
    }
    let mut text = format!(
        "{:<20} {:<12} {:<10} {:<28} {}\n",
        "ID", "CATEGORY", "TRANSPORT", "API KEY", "NAME"
    );
    for p in chosen {
        text.push_str(&format!(
            "{:<20} {:<12} {:<10} {:<28} {}\n",
            p.id,
            p.category.as_str(),
            transport_name(p.transport),
            key_summary(p),
            p.name
        ));
    }
    print_stdout(&text)
}

fn transport_name(t: Transport) -> &'static str {
    match t {
        Transport::Stdio => "stdio",
        Transport::Http => "http",
    }
}

fn key_summary(p: &Preset) -> String {
    match (p.api_key_env_var, p.requires_api_key) {
        (Some(var), true) => var.to_owned(),
        (Some(var), false) => format!("{var} (optional)"),
        (None, _) => "-".to_owned(),
    }
}

fn show(id: &str, json: bool) -> Result<()> {
    let p = presets::get(id)?;
    if json {
        let mut text = serde_json::to_string_pretty(p)?;
        text.push('\n');
        return print_stdout(&text);
    }
    let launch = match p.transport {
        Transport::Stdio => format!("{} {}", p.command.unwrap_or_default(), p.args.join(" ")),
        Transport::Http => p.url.unwrap_or_default().to_owned(),
    };
    let entry = presets::to_config_entry(p, None, &[])?;
    let mut text = format!("{} ({}), by {}\n", p.name, p.id, p.provider);
    text.push_str(&format!("  {}\n\n", p.description));
    text.push_str(&format!("  category:   {}\n", p.category));
    text.push_str(&format!("  transport:  {}\n", transport_name(p.transport)));
    text.push_str(&format!("  runs:       {launch}\n"));
    text.push_str(&format!("  api key:    {}\n", key_summary(p)));
    text.push_str(&format!("  tools:      {}\n", p.tools.join(", ")));
    if let Some(url) = p.documentation_url {
        text.push_str(&format!("  docs:       {url}\n"));
    }
    text.push_str(&format!(
        "\n`toolbridge presets add {}` adds:\n{}\n",
        p.id,
        serde_json::to_string_pretty(&entry)?
    ));
    print_stdout(&text)
}

fn add(
    path: &Path,
    id: &str,
    name: Option<String>,
    api_key: Option<&str>,
    extra: &[String],
) -> Result<()> {
    // The library's one code path (the web page's too): locked, atomic,
    // never over a file that fails to parse; a stored key makes the file 0600.
    let added = presets::add(
        path,
        &presets::AddPreset {
            id,
            name: name.as_deref(),
            api_key,
            extra_args: extra,
        },
    )?;
    let preset = added.preset;
    eprintln!(
        "toolbridge: added server \"{}\" (preset {}) to {}",
        added.name,
        preset.id,
        path.display()
    );
    let how = preset
        .documentation_url
        .map(|u| format!(" (how to get a key: {u})"))
        .unwrap_or_default();
    match added.key {
        presets::KeyPlace::Stored => eprintln!(
            "toolbridge: the API key is stored in the file; it is now readable by you only (0600)"
        ),
        presets::KeyPlace::Reference {
            var,
            required: true,
        } => eprintln!(
            "toolbridge: this server needs an API key: export {var}=<your key> before \
             starting toolbridge{how}"
        ),
        presets::KeyPlace::Reference {
            var,
            required: false,
        } => eprintln!("toolbridge: optional: export {var}=<your key> for higher limits{how}"),
        presets::KeyPlace::NoKey => {}
    }
    Ok(())
}
