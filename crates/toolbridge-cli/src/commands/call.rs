//! `toolbridge call SERVER TOOL`: call one tool and print its result.

use std::{process::ExitCode, time::Duration};

use toolbridge::{format::flatten_content, pool::CallOptions};

use crate::{
    context::Context,
    outcome::{Failure, Outcome, exit},
};

#[derive(Debug, clap::Args)]
pub struct Args {
    /// The server's name in the config.
    pub server: String,
    /// The tool's name.
    pub tool: String,
    /// Arguments: a JSON object, @FILE to read it from a file, or - for stdin.
    #[arg(long, value_name = "JSON|@FILE|-")]
    pub args: Option<String>,
    /// Seconds the call may take (default: the server's `timeout`, else 120).
    #[arg(long, value_name = "SECS", value_parser = crate::timeout::parse)]
    pub timeout: Option<Duration>,
    /// Print the raw MCP result instead of the flattened text.
    #[arg(long)]
    pub json: bool,
}

pub async fn run(args: Args, ctx: &Context) -> Outcome {
    // Read before the servers open: until then Ctrl-C ends a read of stdin.
    let arguments = crate::input::tool_arguments(args.args.as_deref()).map_err(Failure::usage)?;
    let servers = ctx.servers()?;
    if let Some(error) = servers.unresolved(&args.server) {
        return Err(Failure::usage(anyhow::anyhow!("{error}")));
    }
    let options = CallOptions {
        timeout: args.timeout,
        call_id: None,
    };
    let result = servers
        .pool
        .call_tool(&args.server, &args.tool, arguments, options)
        .await?;
    if args.json {
        crate::output::json(&result)?;
    } else {
        // The same text `exec` and the adapters give a model.
        crate::output::line(&flatten_content(&result))?;
    }
    Ok(if result.is_error == Some(true) {
        ExitCode::from(exit::TOOL_ERROR)
    } else {
        ExitCode::SUCCESS
    })
}
