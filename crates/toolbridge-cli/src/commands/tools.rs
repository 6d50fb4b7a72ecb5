//! `toolbridge tools`: the tools of the configured servers as one JSON document.

use toolbridge::format::{Format, FormatOptions, NameTable, check, convert_tools};

use crate::{
    cli::{Failure, Outcome},
    progress::Progress,
};

use super::Context;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Output format: mcp, openai, openai-responses, anthropic or gemini.
    #[arg(long, default_value = "mcp")]
    pub format: Format,
    /// Only these servers (manual mode); without it, every enabled server.
    #[arg(long = "server", value_name = "NAME")]
    pub servers: Vec<String>,
    /// OpenAI: strict mode (closed objects, every property required, optional
    /// ones nullable); tools that cannot be strict are sent non-strict.
    #[arg(long)]
    pub strict: bool,
    /// Gemini: send the full JSON Schema as `parametersJsonSchema`.
    #[arg(long)]
    pub gemini_json_schema: bool,
    /// Instead of the tools, report per tool and provider what had to change
    /// and what a provider would reject.
    #[arg(long)]
    pub check: bool,
}

pub async fn run(ctx: Context<'_>, args: &Args) -> Outcome {
    let mut worst: Option<u8> = None;
    let mut fail = |failure: Failure| {
        eprintln!("toolbridge: {}", failure.error);
        worst = Some(worst.map_or(failure.code, |w: u8| w.max(failure.code)));
    };
    let servers = if args.servers.is_empty() {
        for (_, error) in &ctx.unresolved {
            fail(Failure::usage(anyhow::anyhow!("{error}")));
        }
        ctx.pool.active_server_names()
    } else {
        let (unresolved, servers): (Vec<String>, Vec<String>) = args
            .servers
            .iter()
            .cloned()
            .partition(|s| ctx.unresolved(s).is_some());
        for server in unresolved {
            if let Some(error) = ctx.unresolved(&server) {
                fail(Failure::usage(anyhow::anyhow!("{error}")));
            }
        }
        servers
    };
    let progress = Progress::servers(servers.len(), "listing tools of", ctx.cli.quiet);
    let listing = ctx
        .pool
        .list_tools_reporting(&servers, |_| progress.inc())
        .await;
    drop(progress);
    for (_, error) in listing.failures {
        fail(Failure::from(error));
    }
    let tools = listing.tools;
    let names = NameTable::for_tools(&tools);
    let options = FormatOptions {
        strict: args.strict,
        gemini_json_schema: args.gemini_json_schema,
    };
    if args.check {
        crate::output::json(&check(&tools, &names, &options))?;
    } else {
        crate::output::json(&convert_tools(args.format, &tools, &names, &options))?;
    }
    match worst {
        Some(code) => Err(Failure::new(
            code,
            anyhow::anyhow!("some servers could not be listed (see above)"),
        )),
        None => Ok(0),
    }
}
