//! `toolbridge example-server`: the built-in example MCP server over stdio.

use std::time::Duration;

use crate::cli::{Failure, Outcome, exit};

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Wait this long before reading the first message, like a server with a
    /// slow start (for the parallel-start benchmark).
    #[arg(long, hide = true, value_name = "MS", default_value_t = 0)]
    pub start_delay_ms: u64,
}

pub fn run(args: &Args) -> Outcome {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| Failure::new(exit::CONNECTION, e))?;
    runtime
        .block_on(async {
            if args.start_delay_ms > 0 {
                tokio::time::sleep(Duration::from_millis(args.start_delay_ms)).await;
            }
            toolbridge::example_server::serve_stdio().await
        })
        .map_err(|e| Failure::new(exit::CONNECTION, anyhow::anyhow!(e)))?;
    Ok(0)
}
