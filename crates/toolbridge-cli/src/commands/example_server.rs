//! `toolbridge example-server`: the built-in example MCP server over stdio.

use crate::cli::{Failure, Outcome, exit};

pub fn run() -> Outcome {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| Failure::new(exit::CONNECTION, e))?;
    runtime
        .block_on(toolbridge::example_server::serve_stdio())
        .map_err(|e| Failure::new(exit::CONNECTION, anyhow::anyhow!(e)))?;
    Ok(0)
}
