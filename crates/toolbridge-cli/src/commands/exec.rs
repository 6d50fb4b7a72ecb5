//! `toolbridge exec --format F`: run the tool calls in a provider's response
//! and print the messages to append to the conversation.

use std::process::ExitCode;

use toolbridge::{
    adapter::{ToolRegistry, load_mcp_tools},
    format::{Format, NameTable, parse_calls, render_results},
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
    let adapters = load_mcp_tools(pool, &servers).await;
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
    let results = registry.execute_calls(calls).await;
    let messages = render_results(args.format, &results).map_err(Failure::usage)?;
    crate::output::json(&messages)?;
    Ok(ExitCode::SUCCESS)
}
