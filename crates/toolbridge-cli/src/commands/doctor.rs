//! `toolbridge doctor [--json] [--start-timeout SECS] [--install CMD [--yes]]`.
//!
//! The checks run on the config as `servers list` reads it (JSONC, the same
//! records, the same `${VAR}` expansion), then start every enabled server
//! that passed them (in parallel; handshake and tool listing within a short
//! start timeout) and close it again. What is shown is masked the same way
//! as `servers list`, so no expanded secret reaches stdout; a server's own
//! stderr is shown with the config's env and header values masked.
//!
//! Exit codes: 0 every enabled server started and listed its tools; 1
//! something is missing or a server does not work (or an install was
//! declined or failed); 2 usage or config error.

use std::{
    io::{BufRead, IsTerminal, Write},
    process::ExitCode,
    time::Duration,
};

use anyhow::{Context, Result, bail};
use clap::Args;
use toolbridge::{
    config::Config,
    deps::{self, Platform, Probe, ProbeStatus},
    doctor::{self, CheckOptions, Finding, Problem, ServerCheck},
};

use crate::{
    context,
    outcome::{Failure, Outcome},
    progress::Progress,
};

/// Something needed is missing.
const MISSING: u8 = 1;

/// `toolbridge doctor ...`
#[derive(Debug, Args)]
pub struct DoctorArgs {
    /// Install the software that provides CMD (node, npm, npx, uv, uvx,
    /// python3): shows the exact command and runs it after you confirm.
    #[arg(long, value_name = "CMD")]
    pub install: Option<String>,
    /// Run the install command without asking.
    #[arg(long, requires = "install")]
    pub yes: bool,
    /// Print the findings as one JSON document.
    #[arg(long, conflicts_with = "install")]
    pub json: bool,
    /// Seconds each server may take to start and list its tools (default:
    /// the server's "startupTimeout", else 15).
    #[arg(long, value_name = "SECS", value_parser = crate::timeout::parse, conflicts_with = "install")]
    pub start_timeout: Option<Duration>,
}

pub async fn run(args: DoctorArgs, ctx: &context::Context) -> Outcome {
    match &args.install {
        Some(command) => install(command, args.yes).await,
        None => {
            let options = CheckOptions {
                start_timeout: args.start_timeout,
                ..CheckOptions::default()
            };
            let quiet = ctx.quiet || args.json;
            // As every other command reads it: a named file that does not
            // exist is an error, not the example server.
            let config = ctx.load_config()?;
            check(&config, args.json, &options, quiet).await
        }
    }
    .map_err(Failure::usage)
}

async fn check(
    config: &Config,
    json: bool,
    options: &CheckOptions,
    quiet: bool,
) -> Result<ExitCode> {
    let platform = Platform::current();
    let enabled: Vec<String> = config
        .listing()
        .into_iter()
        .filter(|server| server.enabled)
        .map(|server| server.name)
        .collect();
    let progress = Progress::naming(&enabled, "checking", quiet);
    let (probes, checks) = tokio::join!(
        deps::probe_all(&deps::KNOWN_COMMANDS, None, deps::PROBE_TIMEOUT),
        doctor::diagnose(config, &platform, options, |name| progress.done(name)),
    );
    drop(progress);
    let out = if json {
        let mut text =
            serde_json::to_string_pretty(&doctor::report_json(config, &probes, &checks))?;
        text.push('\n');
        text
    } else {
        report_text(config, &probes, &checks)
    };
    write_stdout(&out)?;
    Ok(if checks.iter().all(|c| c.findings.is_empty()) {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(MISSING)
    })
}

fn report_text(config: &Config, probes: &[Probe], checks: &[ServerCheck]) -> String {
    let mut out = String::from("launchers:\n");
    for probe in probes {
        out.push_str(&probe_line(probe));
    }
    out.push_str(&format!(
        "\nsandbox: {}\n",
        toolbridge::sandbox::Support::get().summary()
    ));
    if config.is_builtin() {
        out.push_str(&format!(
            "\nno config file at {}; only the built-in example server is configured:\n",
            config.path().display()
        ));
    } else {
        out.push_str(&format!("\nservers in {}:\n", config.path().display()));
    }
    for check in checks {
        if !check.enabled {
            out.push_str(&format!(
                "  off      {} (disabled, not checked)\n",
                check.server
            ));
            continue;
        }
        if let Some(started) = &check.started
            && check.findings.is_empty()
        {
            let count = started.tool_count;
            out.push_str(&format!(
                "  ok       {}: {count} tool{}, started in {} ms{}\n",
                check.server,
                if count == 1 { "" } else { "s" },
                started.info.start_time.as_millis(),
                sandbox_note(check),
            ));
        }
        for finding in &check.findings {
            out.push_str(&format!("  problem  {}\n", finding_line(finding)));
            if let Some(stderr) = finding.problem.stderr() {
                out.push_str("           last lines of its stderr:\n");
                for line in stderr.lines() {
                    out.push_str(&format!("           | {line}\n"));
                }
            }
        }
    }
    let problems: usize = checks.iter().map(|c| c.findings.len()).sum();
    if problems == 0 {
        out.push_str("\nevery enabled server started and listed its tools\n");
    } else {
        out.push_str(&format!(
            "\n{problems} problem{} found\n",
            if problems == 1 { "" } else { "s" }
        ));
    }
    out
}

/// ", sandbox: default" for a stdio server; nothing for a network one.
fn sandbox_note(check: &ServerCheck) -> String {
    check
        .sandbox
        .as_ref()
        .map(|sandbox| format!(", sandbox: {sandbox}"))
        .unwrap_or_default()
}

fn probe_line(probe: &Probe) -> String {
    match &probe.status {
        ProbeStatus::Found { path, version } => format!(
            "  ok       {:<8} {version} ({})\n",
            probe.command,
            path.display()
        ),
        ProbeStatus::Missing => format!("  missing  {}\n", probe.command),
        ProbeStatus::Broken { path, reason } => format!(
            "  broken   {:<8} {} ({reason})\n",
            probe.command,
            path.display()
        ),
    }
}

/// One line: the finding, its fix, and `--install` when it would help.
fn finding_line(finding: &Finding) -> String {
    let mut line = finding.to_string();
    if let (Problem::CommandNotFound { command }, Some(plan)) = (&finding.problem, &finding.install)
        && !plan.methods.is_empty()
    {
        line.push_str(&format!(", or run `toolbridge doctor --install {command}`"));
    }
    line
}

/// The report holds what servers said (stderr tails, names): on a terminal
/// their control characters are neutralised.
fn write_stdout(text: &str) -> Result<()> {
    crate::output::write(&crate::terminal::for_stdout(text)).context("cannot write to stdout")
}

async fn install(command: &str, yes: bool) -> Result<ExitCode> {
    let platform = Platform::current();
    let Some(plan) = deps::install_plan(command, &platform) else {
        bail!(
            "no install plan for \"{command}\"; toolbridge knows node, npm, npx, uv, uvx, \
             python3 and docker"
        );
    };
    let before = deps::probe(command, None, deps::PROBE_TIMEOUT).await;
    if let ProbeStatus::Found { path, version } = &before.status {
        write_stdout(&format!(
            "{command} is already installed: {version} ({})\n",
            path.display()
        ))?;
        return Ok(ExitCode::SUCCESS);
    }
    let Some(method) = plan.choose(|c| deps::find_command(c, None).is_some()) else {
        write_stdout(&format!(
            "no automatic way to install {} here; download it from {}\n",
            plan.software, plan.download_url
        ))?;
        return Ok(ExitCode::from(MISSING));
    };
    write_stdout(&format!(
        "to install {} ({command}) with {}, toolbridge would run:\n  {}\n",
        plan.software,
        method.via,
        method.display()
    ))?;

    if !yes {
        if !std::io::stdin().is_terminal() {
            eprintln!(
                "toolbridge: not running it: there is no terminal to confirm on; run the \
                 command above yourself, or re-run with --yes"
            );
            return Ok(ExitCode::from(MISSING));
        }
        if !confirm("run it? [y/N] ")? {
            eprintln!("toolbridge: not run");
            return Ok(ExitCode::from(MISSING));
        }
    }

    if let Err(e) = method.run(deps::InstallOutput::Inherit) {
        eprintln!("toolbridge: {:#}", anyhow::Error::from(e));
        return Ok(ExitCode::from(MISSING));
    }
    let after = deps::probe(command, None, deps::PROBE_TIMEOUT).await;
    match &after.status {
        ProbeStatus::Found { path, version } => {
            write_stdout(&format!(
                "{command} is installed: {version} ({})\n",
                path.display()
            ))?;
            Ok(ExitCode::SUCCESS)
        }
        _ => {
            eprintln!(
                "toolbridge: the install command finished, but {command} is still not on PATH; \
                 open a new shell (or add the directory it was installed to, such as \
                 ~/.local/bin, to PATH) and run `toolbridge doctor` again"
            );
            Ok(ExitCode::from(MISSING))
        }
    }
}

/// Asks on stderr, reads the answer from stdin; only "y"/"yes" is yes.
fn confirm(question: &str) -> Result<bool> {
    eprint!("{question}");
    std::io::stderr().flush()?;
    let mut answer = String::new();
    std::io::stdin().lock().read_line(&mut answer)?;
    Ok(matches!(
        answer.trim().to_ascii_lowercase().as_str(),
        "y" | "yes"
    ))
}
