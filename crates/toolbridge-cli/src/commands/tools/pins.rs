//! `toolbridge tools diff` and `toolbridge tools approve`: the tools withheld
//! because their definition is not the pinned one (DESIGN.md, "Trust").

use std::process::ExitCode;

use crate::{
    context::Context,
    listing::{self, Failures},
    outcome::{Failure, Outcome},
};

#[derive(Debug, clap::Args)]
pub struct DiffArgs {
    /// Only these servers; without any, every enabled server.
    #[arg(value_name = "SERVER")]
    pub servers: Vec<String>,
    /// Print a JSON array, one object per tool: server, tool, change
    /// (added or changed), before (the pinned definition, null for a new
    /// tool) and after.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, clap::Args)]
pub struct ApproveArgs {
    /// The server.
    pub server: String,
    /// Its tools to approve; without any, every withheld tool of the server.
    #[arg(value_name = "TOOL")]
    pub tools: Vec<String>,
}

pub async fn diff(args: DiffArgs, ctx: &Context) -> Outcome {
    let servers = ctx.servers()?;
    let mut failures = Failures::default();
    let chosen = listing::chosen(servers, &args.servers, &mut failures);
    // What the servers give now, not a cached list: the diff is what an
    // approval would pin.
    for server in &chosen {
        servers.pool.forget_tools(server);
    }
    let results =
        futures::future::join_all(chosen.iter().map(|server| servers.pool.pin_diff(server))).await;
    let mut diffs = Vec::new();
    for result in results {
        match result {
            Ok(found) => diffs.extend(found),
            Err(e) => failures.add(Failure::from(e)),
        }
    }
    if args.json {
        crate::output::json(&diffs)?;
    } else if diffs.is_empty() {
        ctx.say("no tool is withheld: every listed definition is the pinned one");
    } else {
        let text: Vec<String> = diffs.iter().map(|d| d.readable()).collect();
        crate::output::text(&text.join("\n"))?;
        ctx.say(format!(
            "approve with `toolbridge tools approve SERVER [TOOL]...` ({} withheld)",
            diffs.len()
        ));
    }
    failures.outcome()
}

pub async fn approve(args: ApproveArgs, ctx: &Context) -> Outcome {
    let servers = ctx.servers()?;
    if let Some(error) = servers.unresolved(&args.server) {
        return Err(Failure::usage(anyhow::anyhow!("{error}")));
    }
    if servers
        .pool
        .spec(&args.server)
        .is_some_and(|spec| spec.pin == toolbridge::pins::PinPolicy::Off)
    {
        ctx.say(format!(
            "pinning is off for server \"{}\" (\"pin\": \"off\" in the config): nothing is withheld",
            args.server
        ));
        return Ok(ExitCode::SUCCESS);
    }
    // The definitions the server gives now: a cached list (up to a day
    // old) would approve nothing while a running gateway, which lists
    // afresh, withholds the change.
    servers.pool.forget_tools(&args.server);
    let approved = servers
        .pool
        .approve_tools(&args.server, &args.tools)
        .await?;
    if approved.is_empty() {
        ctx.say(format!(
            "nothing to approve: the definitions server \"{}\" gives are the pinned ones",
            args.server
        ));
    }
    for w in &approved {
        ctx.say(format!(
            "approved tool \"{}\" of server \"{}\" ({})",
            w.tool,
            w.server,
            w.change.as_str()
        ));
    }
    Ok(ExitCode::SUCCESS)
}
