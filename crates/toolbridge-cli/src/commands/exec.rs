//! `toolbridge exec --format F`: run the tool calls in a provider's response
//! and print the messages to append to the conversation.
//!
//! The pipeline is the library's
//! ([`toolbridge::adapter::execute_response`]): only the servers the calls
//! use are started, and the calls' names are resolved through the same name
//! table `tools --format` built, from the servers' tool lists, which come
//! from the tool-list cache after a `tools` (a server whose list is not
//! cached is started to list it).

use std::process::ExitCode;

use toolbridge::{
    adapter::{ExecOptions, execute_response},
    format::Format,
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
    let input = crate::json_input::response(&args.input).map_err(Failure::usage)?;
    let pool = &ctx.servers()?.pool;
    let options = ExecOptions {
        servers: (!args.servers.is_empty()).then_some(args.servers),
        strict: args.strict,
    };
    let messages = execute_response(pool, args.format, &input, &options)
        .await
        .map_err(Failure::usage)?;
    crate::output::json(&messages)?;
    Ok(ExitCode::SUCCESS)
}
