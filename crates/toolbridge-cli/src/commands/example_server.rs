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
}

pub async fn run(args: Args, _ctx: &Context) -> Outcome {
    if args.start_delay_ms > 0 {
        tokio::time::sleep(Duration::from_millis(args.start_delay_ms)).await;
    }
    toolbridge::example_server::serve_stdio()
        .await
        .map_err(|e| Failure::new(exit::CONNECTION, anyhow::anyhow!(e)))?;
    Ok(ExitCode::SUCCESS)
}
