//! `toolbridge exec --format F`: run the tool calls in a provider's response
//! and print the messages to append to the conversation.
//!
//! Only the servers the calls use are started. The calls' names are
//! resolved through the same name table `tools --format` built, from the
//! servers' tool lists, which come from the tool-list cache after a `tools`
//! (a server whose list is not cached is started to list it); then each
//! call starts its own server, and no other.

use std::process::ExitCode;

use toolbridge::{
    adapter::{McpToolAdapter, ToolRegistry},
    format::{Format, NameStyle, NameTable, ToolOutcome, parse_calls, render_results},
    pool::PoolError,
};

use crate::{
    context::Context,
    outcome::{Failure, Outcome},
};

#[derive(Debug, clap::Args)]
pub struct Args {
    /// The provider whose response is read: openai, openai-responses, anthropic or gemini.
    #[arg(long)]
    pub format: Format,
    /// The response (a whole response, a message, or its list of calls): a file, or - for stdin.
    #[arg(long, value_name = "FILE|-", default_value = "-")]
    pub input: String,
    /// Only these servers' tools (as given to `tools --server`); default: every enabled server.
    #[arg(long = "server", value_name = "NAME")]
    pub servers: Vec<String>,
    /// The tools were sent in OpenAI strict mode: drop the nulls the model
    /// sends for optional properties before calling the server.
    #[arg(long)]
    pub strict: bool,
}

pub async fn run(args: Args, ctx: &Context) -> Outcome {
    let input = crate::input::response(&args.input).map_err(Failure::usage)?;
    let pool = &ctx.servers()?.pool;
    let servers = if args.servers.is_empty() {
        pool.active_server_names()
    } else {
        args.servers
    };
    let listing = pool.list_tools_of(&servers).await;
    for (server, error) in &listing.failures {
        tracing::warn!(server = %server, error = %error, "skipping the server's tools");
    }
    let adapters = McpToolAdapter::wrap_all(pool, listing.tools, NameStyle::Mcp);
    let tools: Vec<_> = adapters.iter().map(|a| a.mcp_tool().clone()).collect();
    // The same names `toolbridge tools --format` gave the model.
    let names = NameTable::for_tools(&tools);
    let mut registry = ToolRegistry::new();
    registry.set_strip_strict_nulls(args.strict);
    for adapter in adapters {
        registry.register(adapter).map_err(Failure::usage)?;
    }
    let calls = parse_calls(args.format, &input, &names).map_err(Failure::usage)?;
    if calls.is_empty() {
        tracing::warn!("the {} response has no tool calls", args.format);
    }
    let mut results = registry.execute_calls(calls).await;
    explain_unlisted_servers(&mut results, &listing.failures);
    let messages = render_results(args.format, &results).map_err(Failure::usage)?;
    crate::output::json(&messages)?;
    Ok(ExitCode::SUCCESS)
}

/// A call to a server whose tools could not be listed (it failed to start,
/// say) did not resolve to a tool: tell the model why the server is missing
/// ("server \"X\" failed to start: ...") rather than "unknown tool". The
/// server is recognised by the name's `mcp__{server}__` prefix, for this
/// message only; calls are never routed by it.
fn explain_unlisted_servers(
    results: &mut [(toolbridge::format::ToolCall, ToolOutcome)],
    failures: &[(String, PoolError)],
) {
    for (call, outcome) in results.iter_mut() {
        if call.tool.is_some() {
            continue;
        }
        let failed = failures
            .iter()
            .filter(|(server, _)| call.name.starts_with(&name_prefix(server)))
            .max_by_key(|(server, _)| server.len());
        if let Some((_, error)) = failed {
            *outcome = ToolOutcome::Failed(error.to_string());
        }
    }
}

/// `mcp__{server}__` with the characters a provider refuses replaced, as
/// the name table writes it.
fn name_prefix(server: &str) -> String {
    let server: String = server
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect();
    format!("mcp__{server}__")
}
