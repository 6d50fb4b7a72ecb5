//! `toolbridge example-server`: the built-in example MCP server over stdio.

use std::{process::ExitCode, time::Duration};

use crate::{
    context::Context,
    outcome::{Failure, Outcome, exit},
};

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Wait this long before reading the first message, like a server with a
    /// slow start (for the parallel-start benchmark).
    #[arg(long, hide = true, value_name = "MS", default_value_t = 0)]
    pub start_delay_ms: u64,
    /// Also serve one skill (the skills extension, SEP-2640), with its
    /// SKILL.md as a resource.
    #[arg(long)]
    pub skill: bool,
}

pub async fn run(args: Args, _ctx: &Context) -> Outcome {
    if args.start_delay_ms > 0 {
        tokio::time::sleep(Duration::from_millis(args.start_delay_ms)).await;
    }
    let server = toolbridge::example_server::ExampleServer::new();
    let server = if args.skill {
        server.with_skill()
    } else {
        server
    };
    toolbridge::example_server::serve_stdio_as(server)
        .await
        .map_err(|e| Failure::new(exit::CONNECTION, anyhow::anyhow!(e)))?;
    Ok(ExitCode::SUCCESS)
}
