//! `toolbridge tools`: the tools of the configured servers as one JSON document.

use crate::cli::{Failure, Outcome};

use super::Context;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Only these servers (manual mode); without it, every enabled server.
    #[arg(long = "server", value_name = "NAME")]
    pub servers: Vec<String>,
}

pub async fn run(ctx: Context<'_>, args: &Args) -> Outcome {
    let servers = if args.servers.is_empty() {
        ctx.pool.active_server_names()
    } else {
        args.servers.clone()
    };
    let (tools, failures) = ctx.pool.list_tools_of(&servers).await;
    crate::output::json(&tools)?;
    let mut worst = None;
    for (_server, error) in failures {
        let failure = Failure::from(error);
        eprintln!("toolbridge: {}", failure.error);
        worst = Some(worst.map_or(failure.code, |w: u8| w.max(failure.code)));
    }
    match worst {
        Some(code) => Err(Failure::new(
            code,
            anyhow::anyhow!("some servers could not be listed (see above)"),
        )),
        None => Ok(0),
    }
}
