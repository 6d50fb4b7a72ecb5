//! `toolbridge servers test [NAME]...`: start servers and report what they
//! said about themselves, each line as soon as its server is done.

use std::process::ExitCode;

use futures::future::join_all;
use serde::Serialize;
use toolbridge::pool::ConnectionInfo;

use crate::{
    context::{Context, Servers},
    outcome::{Failure, Outcome},
    progress::Progress,
};

#[derive(Debug, Clone, clap::Args)]
pub struct TestArgs {
    /// The servers to test (default: every enabled server).
    pub names: Vec<String>,
    /// Print a JSON array instead of one line per server.
    #[arg(long)]
    pub json: bool,
}

/// One server's result, as `--json` prints it.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Report {
    server: String,
    ok: bool,
    #[serde(flatten, skip_serializing_if = "Option::is_none")]
    info: Option<ConnectionInfo>,
    #[serde(skip_serializing_if = "Option::is_none")]
    tool_count: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    error: Option<String>,
}

pub async fn run(args: TestArgs, ctx: &Context) -> Outcome {
    let servers = ctx.servers()?;
    let names = if args.names.is_empty() {
        let mut names: Vec<String> = servers.unresolved.iter().map(|(n, _)| n.clone()).collect();
        names.extend(servers.pool.active_server_names());
        names
    } else {
        args.names
    };
    let progress = Progress::naming(&names, "starting", ctx.quiet || args.json);
    // Each line is printed as its server's test ends, so a slow server never
    // holds back the others' results; `--json` prints one array at the end,
    // in the order the servers were given.
    let reports = join_all(names.iter().map(|name| {
        let progress = &progress;
        async move {
            let report = report(name, test_one(servers, name).await);
            progress.done(name);
            if !args.json {
                progress.suspend(|| crate::output::line(&describe(&report.0)))?;
            }
            Ok::<_, Failure>(report)
        }
    }))
    .await;
    drop(progress);
    let mut worst: Option<u8> = None;
    let mut rows = Vec::new();
    for report in reports {
        let (row, code) = report?;
        if let Some(code) = code {
            worst = Some(worst.map_or(code, |w: u8| w.max(code)));
        }
        rows.push(row);
    }
    if args.json {
        crate::output::json(&rows)?;
    }
    match worst {
        Some(code) => Err(Failure::new(
            code,
            anyhow::anyhow!("some servers failed the test"),
        )),
        None => Ok(ExitCode::SUCCESS),
    }
}

/// One server's row, and the exit code its failure calls for.
fn report(name: &str, result: Result<(ConnectionInfo, usize), Failure>) -> (Report, Option<u8>) {
    match result {
        Ok((info, tools)) => (
            Report {
                server: name.to_owned(),
                ok: true,
                info: Some(info),
                tool_count: Some(tools),
                error: None,
            },
            None,
        ),
        Err(failure) => (
            Report {
                server: name.to_owned(),
                ok: false,
                info: None,
                tool_count: None,
                error: Some(format!("{:#}", failure.error)),
            },
            Some(failure.code),
        ),
    }
}

async fn test_one(servers: &Servers, name: &str) -> Result<(ConnectionInfo, usize), Failure> {
    if let Some(error) = servers.unresolved(name) {
        return Err(Failure::usage(anyhow::anyhow!("{error}")));
    }
    let info = servers.pool.connect(name).await?;
    let tools = servers.pool.list_server_tools(name).await?;
    Ok((info, tools.len()))
}

fn describe(row: &Report) -> String {
    match (&row.info, &row.error) {
        (Some(info), _) => format!(
            "ok    {}: {} {} over {}, protocol {}, {} tools, started in {} ms",
            row.server,
            if info.server_name.is_empty() {
                "(unnamed)"
            } else {
                &info.server_name
            },
            info.server_version,
            info.transport,
            info.protocol_version,
            row.tool_count.unwrap_or(0),
            info.start_time.as_millis()
        ),
        (None, Some(error)) => format!("FAIL  {}: {}", row.server, error.replace('\n', "\n      ")),
        (None, None) => format!("FAIL  {}", row.server),
    }
}
