//! The `toolbridge` command-line program: a thin layer over the library.
//!
//! Layout, in the order a run goes through it:
//! - `cli`: the command line (clap) and which command runs;
//! - `context`: what every command gets (config path, `-q`, the pool of
//!   servers, opened on first use) and `signals`, caught once servers exist;
//! - `client`: what the pool offers servers (`--root`, elicitation on the
//!   terminal or `--accept-defaults`, sampling declined);
//! - `commands/`: one file per command, each an
//!   `async fn run(args, &Context) -> Outcome`;
//! - `outcome`: exit codes, and the one place an error is printed;
//! - `listing`: what the commands that list several servers' resources or
//!   prompts share (which servers, failures, JSON with `serverId`);
//! - `output` (stdout, where a closed pipe is not an error), `input` (the
//!   `--args`/`--input` reader), `timeout` (`--timeout`), `progress`,
//!   `terminal` (a server's control characters never reach a terminal raw),
//!   `server_logs` (servers' log messages on stderr).

mod cli;
mod client;
mod commands;
mod config_inputs;
mod context;
mod json_input;
mod listing;
mod outcome;
mod output;
mod progress;
mod saved_file;
mod server_logs;
mod signals;
mod terminal;
mod timeout;

use std::process::ExitCode;

use clap::Parser;

use crate::{
    cli::Cli,
    context::Context,
    outcome::{Failure, Outcome, exit},
};

#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            let _ = e.print();
            return if e.use_stderr() {
                ExitCode::from(exit::USAGE)
            } else {
                ExitCode::SUCCESS
            };
        }
    };
    init_logging(&cli);
    raise_open_file_limit();
    // What a crashed server leaves behind comes to us, not to init, and is
    // killed with the servers (toolbridge starts no other children in
    // process groups of their own).
    if let Err(e) = toolbridge::process::adopt_orphans() {
        tracing::debug!("cannot adopt the orphans of servers: {e}");
    }
    outcome::report(run(cli))
}

/// Runs the command on one current-thread runtime. A SIGINT, SIGTERM or
/// SIGHUP while servers are open stops it (exit 128 + N); every server it
/// started is closed on every way out, and a second signal while they close
/// ends the process at once (their process groups are killed all the same).
fn run(cli: Cli) -> Outcome {
    // The gateway serves many clients at once: worker threads when it is
    // given more than one (see `serve::Args::worker_threads`); with one,
    // the current-thread runtime, which made 8% more calls per second than
    // a multi-thread runtime of one worker (docs/performance.md, "Fourth
    // round"). Every other command is one client of its servers: one
    // thread is enough.
    let mut builder = match &cli.command {
        cli::Command::Serve(args) if args.worker_threads() > 1 => {
            let mut builder = tokio::runtime::Builder::new_multi_thread();
            builder.worker_threads(args.worker_threads());
            builder
        }
        _ => tokio::runtime::Builder::new_current_thread(),
    };
    let runtime = builder.enable_all().build().map_err(|e| {
        Failure::new(
            exit::CONNECTION,
            anyhow::Error::new(e).context("cannot start the async runtime"),
        )
    })?;
    let server_logs = server_logs::LogLevel::chosen(cli.log_level, cli.verbose, cli.quiet);
    let ctx = Context::new(cli.config.as_deref(), cli.quiet)
        .with_client(client::Settings {
            roots: cli.roots.clone(),
            accept_defaults: cli.accept_defaults,
        })
        .with_server_logs(server_logs);
    runtime.block_on(async {
        let outcome = tokio::select! {
            outcome = cli.command.run(&ctx) => outcome,
            signal = ctx.stop_signal() => {
                tracing::info!("received {}; closing servers", signal.name());
                ctx.say_closing();
                Ok(signal.exit_code())
            }
        };
        ctx.close().await;
        outcome
    })
}

/// Each stdio server holds three pipes here: hundreds of servers need more
/// descriptors than the usual soft limit of 1024.
fn raise_open_file_limit() {
    match toolbridge::process::raise_open_file_limit() {
        Ok(limit) if limit.after != limit.before => {
            tracing::debug!(
                from = limit.before,
                to = limit.after,
                "raised the open-file limit"
            );
        }
        Ok(_) => {}
        Err(e) => tracing::debug!("cannot raise the open-file limit: {e}"),
    }
}

/// Logs on stderr. At the default verbosity rmcp says nothing: what it
/// would log (`worker quit with fatal ...`) is in toolbridge's own error, in
/// plain words; `-v` shows it. Colour only on a terminal, and not with
/// `NO_COLOR`.
fn init_logging(cli: &Cli) {
    use std::io::IsTerminal;
    use tracing_subscriber::EnvFilter;
    let mut default = log_filter(cli.verbose > 0, cli.quiet);
    // The gateway's audit lines (one per call) are its default output.
    if matches!(cli.command, cli::Command::Serve(_)) && default == log_filter(false, false) {
        default = "warn,rmcp=off,toolbridge::audit=info";
    }
    let filter =
        EnvFilter::try_from_env("TOOLBRIDGE_LOG").unwrap_or_else(|_| EnvFilter::new(default));
    // `TOOLBRIDGE_LOG_FORMAT=json`: one JSON object a line (the gateway's
    // audit lines for log shippers), with the time and the target.
    if std::env::var("TOOLBRIDGE_LOG_FORMAT").is_ok_and(|f| f.eq_ignore_ascii_case("json")) {
        let _ = tracing_subscriber::fmt()
            .json()
            .flatten_event(true)
            .with_env_filter(filter)
            .with_writer(std::io::stderr)
            .try_init();
        return;
    }
    let colour = std::io::stderr().is_terminal()
        && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty());
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(colour)
        .with_target(cli.verbose > 0)
        .without_time()
        .try_init();
}

/// The log filter for `-v`, `-q` or neither (`$TOOLBRIDGE_LOG` overrides it).
fn log_filter(verbose: bool, quiet: bool) -> &'static str {
    if verbose {
        "toolbridge=debug,toolbridge_cli=debug,rmcp=info"
    } else if quiet {
        "off"
    } else {
        "warn,rmcp=off"
    }
}
