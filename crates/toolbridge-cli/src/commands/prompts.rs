//! `toolbridge prompts list|get`: the prompts of the configured servers,
//! and one prompt's messages filled in with arguments.

use std::{process::ExitCode, time::Duration};

use serde_json::Value;
use toolbridge::{
    format::flatten::block_text,
    pool::CallOptions,
    rmcp_model::{GetPromptResult, Prompt, Role},
};

use crate::{
    context::Context,
    listing::{self, Failures, one_line},
    outcome::{Failure, Outcome},
};

#[derive(Debug, clap::Subcommand)]
pub enum PromptsCommand {
    /// List the prompts of every enabled server (or of --server NAME...).
    List(ListArgs),
    /// Get one prompt's messages, filled in with --args.
    Get(GetArgs),
}

#[derive(Debug, clap::Args)]
pub struct ListArgs {
    /// Only these servers; without it, every enabled server.
    #[arg(long = "server", value_name = "NAME")]
    pub servers: Vec<String>,
    /// Print MCP's own JSON, one array, each prompt with its `serverId`.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, clap::Args)]
pub struct GetArgs {
    /// The server's name in the config.
    pub server: String,
    /// The prompt's name.
    pub name: String,
    /// The prompt's arguments: a JSON object, @FILE to read it from a file,
    /// or - for stdin. Values that are not strings are sent as their JSON
    /// text (MCP prompt arguments are strings).
    #[arg(long, value_name = "JSON|@FILE|-")]
    pub args: Option<String>,
    /// Seconds the request may take, the server's start included (default:
    /// the server's `timeout`, else 120).
    #[arg(long, value_name = "SECS", value_parser = crate::timeout::parse)]
    pub timeout: Option<Duration>,
    /// Print the raw MCP result instead of `role: text` lines.
    #[arg(long)]
    pub json: bool,
}

pub async fn run(command: PromptsCommand, ctx: &Context) -> Outcome {
    match command {
        PromptsCommand::List(args) => list(args, ctx).await,
        PromptsCommand::Get(args) => get(args, ctx).await,
    }
}

async fn list(args: ListArgs, ctx: &Context) -> Outcome {
    let servers = ctx.servers()?;
    let mut failures = Failures::default();
    let chosen = listing::chosen(servers, &args.servers, &mut failures);
    let listed = listing::items(servers.pool.list_prompts_of(&chosen).await, &mut failures);
    listing::print(&listed, args.json, prompt_line)?;
    failures.outcome()
}

/// `server  name(arg, optional?) — description`.
fn prompt_line(server: &str, prompt: &Prompt) -> String {
    let arguments: Vec<String> = prompt
        .arguments
        .iter()
        .flatten()
        .map(|a| {
            if a.required == Some(true) {
                a.name.clone()
            } else {
                format!("{}?", a.name)
            }
        })
        .collect();
    let mut line = format!("{server}  {}({})", prompt.name, arguments.join(", "));
    if let Some(description) = prompt.description.as_deref()
        && !description.trim().is_empty()
    {
        line.push_str(&format!(" — {}", one_line(description)));
    }
    line
}

async fn get(args: GetArgs, ctx: &Context) -> Outcome {
    // Read before the servers open: until then Ctrl-C ends a read of stdin.
    let arguments =
        crate::json_input::tool_arguments(args.args.as_deref()).map_err(Failure::usage)?;
    let arguments = arguments.map(|map| {
        map.into_iter()
            .map(|(name, value)| match value {
                Value::String(_) => (name, value),
                other => (name, Value::String(other.to_string())),
            })
            .collect()
    });
    let servers = ctx.servers()?;
    if let Some(error) = servers.unresolved(&args.server) {
        return Err(Failure::usage(anyhow::anyhow!("{error}")));
    }
    let options = CallOptions {
        timeout: args.timeout,
        ..CallOptions::default()
    };
    let result = servers
        .pool
        .get_prompt(&args.server, &args.name, arguments, &options)
        .await?;
    if args.json {
        crate::output::json(&result)?;
    } else {
        crate::output::line(&messages_text(&result))?;
    }
    Ok(ExitCode::SUCCESS)
}

/// Each message as `role: text`, its content as the flattener gives it to
/// a model (`[Image: image/png]`, an embedded resource's text).
fn messages_text(result: &GetPromptResult) -> String {
    result
        .messages
        .iter()
        .map(|message| {
            let role = match message.role {
                Role::User => "user",
                Role::Assistant => "assistant",
            };
            format!("{role}: {}", block_text(&message.content))
        })
        .collect::<Vec<_>>()
        .join("\n")
}
