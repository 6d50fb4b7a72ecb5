//! `toolbridge bench SERVER TOOL`: a load generator for one tool of any
//! configured server. It starts the server, then keeps `--concurrency` calls
//! in flight until `--calls` calls are done, and reports calls/s, latency
//! percentiles and errors.
//!
//! Every call goes through the same pool path as `toolbridge call` (timeouts,
//! cancellation), so the figures are what an application using toolbridge
//! would see.

use std::{
    cell::Cell,
    io::IsTerminal,
    process::ExitCode,
    time::{Duration, Instant},
};

use futures::future::join_all;
use indicatif::{ProgressBar, ProgressStyle};
use toolbridge::{format::flatten_content, pool::CallOptions};

use crate::{
    context::Context,
    outcome::{Failure, Outcome, exit},
};

#[derive(Debug, clap::Args)]
pub struct Args {
    /// The server's name in the config.
    pub server: String,
    /// The tool's name.
    pub tool: String,
    /// Arguments for every call: a JSON object, @FILE, or - for stdin.
    #[arg(long, value_name = "JSON|@FILE|-")]
    pub args: Option<String>,
    /// How many calls to make.
    #[arg(long, value_name = "N", default_value_t = 1000,
          value_parser = clap::value_parser!(u64).range(1..))]
    pub calls: u64,
    /// How many calls to keep in flight at once.
    #[arg(long, value_name = "C", default_value_t = 1,
          value_parser = clap::value_parser!(u64).range(1..=100_000))]
    pub concurrency: u64,
    /// Stop starting calls after this many seconds (`--calls` is then only
    /// an upper bound): for soak runs (scripts/soak.sh).
    #[arg(long, value_name = "SECS", value_parser = crate::timeout::parse)]
    pub duration: Option<Duration>,
    /// Print the report as JSON.
    #[arg(long)]
    pub json: bool,
}

/// What one run measured, with the MCP key style (camelCase) and the unit
/// in each name.
#[derive(Debug, serde::Serialize)]
#[serde(rename_all = "camelCase")]
struct Report {
    server: String,
    tool: String,
    calls: u64,
    concurrency: u64,
    /// Calls that returned a result that is not `isError`.
    ok: u64,
    /// Calls that failed: errors from the pool plus `isError` results.
    errors: u64,
    /// How many of `errors` were `isError` results.
    tool_errors: u64,
    /// The first error, for a hint at what went wrong.
    first_error: Option<String>,
    /// Time to start the server and finish its handshake.
    start_ms: f64,
    /// Wall time of the calls.
    elapsed_ms: f64,
    calls_per_sec: f64,
    /// CPU time (user + system) this process spent per call: the cost of
    /// the client side, the server's excluded.
    client_cpu_us_per_call: f64,
    latency_ms: Latency,
}

#[derive(Debug, serde::Serialize)]
struct Latency {
    min: f64,
    mean: f64,
    p50: f64,
    p90: f64,
    p99: f64,
    max: f64,
}

pub async fn run(args: Args, ctx: &Context) -> Outcome {
    let arguments =
        crate::json_input::tool_arguments(args.args.as_deref()).map_err(Failure::usage)?;
    let pool = &ctx.servers()?.pool;
    let started = Instant::now();
    pool.connect(&args.server).await?;
    let start_ms = millis(started.elapsed());

    let calls = args.calls;
    let workers = args.concurrency.min(calls);
    let progress = progress_bar(ctx.quiet, calls);
    // All workers run on this task's thread (the runtime is current-thread),
    // so plain cells are enough to share the counters.
    let next = Cell::new(0u64);
    let tool_errors = Cell::new(0u64);
    let pool_errors = Cell::new(0u64);
    let first_error: Cell<Option<String>> = Cell::new(None);
    // A call that is wrong whoever makes it (an unknown tool) makes the
    // whole run a usage error (exit 2), not a count of failures.
    let usage_error = Cell::new(false);
    let note_error = |message: String| {
        let first = first_error.take();
        first_error.set(first.or(Some(message)));
    };

    let cpu_before = process_cpu();
    let began = Instant::now();
    let deadline = args.duration.map(|d| began + d);
    let worker = || async {
        let mut latencies = Vec::new();
        loop {
            let i = next.get();
            if i >= calls || deadline.is_some_and(|d| Instant::now() >= d) {
                break;
            }
            next.set(i + 1);
            let sent = Instant::now();
            let result = pool
                .call_tool(
                    &args.server,
                    &args.tool,
                    arguments.clone(),
                    CallOptions::default(),
                )
                .await;
            latencies.push(sent.elapsed());
            match result {
                Ok(result) if result.is_error == Some(true) => {
                    tool_errors.set(tool_errors.get() + 1);
                    note_error(format!(
                        "the tool returned isError: {}",
                        flatten_content(&result)
                    ));
                }
                Ok(_) => {}
                Err(e) => {
                    pool_errors.set(pool_errors.get() + 1);
                    usage_error.set(usage_error.get() || e.is_usage());
                    note_error(e.to_string());
                }
            }
            if let Some(bar) = &progress {
                bar.inc(1);
            }
        }
        latencies
    };
    let mut latencies: Vec<Duration> = join_all((0..workers).map(|_| worker()))
        .await
        .into_iter()
        .flatten()
        .collect();
    let elapsed = began.elapsed();
    let cpu = process_cpu().saturating_sub(cpu_before);
    if let Some(bar) = progress {
        bar.finish_and_clear();
    }

    latencies.sort_unstable();
    // Fewer than `--calls` when `--duration` ended the run.
    let calls = next.get().max(1);
    let errors = tool_errors.get() + pool_errors.get();
    let report = Report {
        server: args.server.clone(),
        tool: args.tool.clone(),
        calls,
        concurrency: workers,
        ok: calls - errors,
        errors,
        tool_errors: tool_errors.get(),
        first_error: first_error.take(),
        start_ms,
        elapsed_ms: millis(elapsed),
        calls_per_sec: calls as f64 / elapsed.as_secs_f64().max(1e-9),
        client_cpu_us_per_call: cpu.as_secs_f64() * 1e6 / calls as f64,
        latency_ms: latency(&latencies),
    };
    if args.json {
        crate::output::json(&report)?;
    } else {
        crate::output::line(&render(&report))?;
    }
    if errors > 0 {
        let code = if usage_error.get() {
            exit::USAGE
        } else {
            exit::TOOL_ERROR
        };
        return Err(Failure::new(
            code,
            anyhow::anyhow!(
                "{errors} of {calls} calls failed; the first: {}",
                report.first_error.as_deref().unwrap_or("unknown")
            ),
        ));
    }
    Ok(ExitCode::SUCCESS)
}

/// A progress bar on stderr, only when stderr is a terminal and logs are on.
fn progress_bar(quiet: bool, calls: u64) -> Option<ProgressBar> {
    if quiet || !std::io::stderr().is_terminal() {
        return None;
    }
    let bar = ProgressBar::new(calls);
    let style = ProgressStyle::with_template("{bar:40} {pos}/{len} calls, {per_sec}, eta {eta}")
        .unwrap_or_else(|_| ProgressStyle::default_bar());
    bar.set_style(style);
    Some(bar)
}

/// Nearest-rank percentiles of sorted latencies.
fn latency(sorted: &[Duration]) -> Latency {
    let at = |q: f64| -> f64 {
        if sorted.is_empty() {
            return 0.0;
        }
        let rank = ((q * sorted.len() as f64).ceil() as usize).clamp(1, sorted.len());
        millis(sorted[rank - 1])
    };
    let total: Duration = sorted.iter().sum();
    Latency {
        min: sorted.first().map_or(0.0, |d| millis(*d)),
        mean: if sorted.is_empty() {
            0.0
        } else {
            millis(total) / sorted.len() as f64
        },
        p50: at(0.50),
        p90: at(0.90),
        p99: at(0.99),
        max: sorted.last().map_or(0.0, |d| millis(*d)),
    }
}

/// CPU time (user + system) of this process so far, its children excluded.
fn process_cpu() -> Duration {
    // SAFETY: getrusage only writes the struct it is given.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    if unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut usage) } != 0 {
        return Duration::ZERO;
    }
    let tv =
        |t: libc::timeval| Duration::new(t.tv_sec.max(0) as u64, (t.tv_usec.max(0) as u32) * 1000);
    tv(usage.ru_utime) + tv(usage.ru_stime)
}

fn millis(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

fn render(r: &Report) -> String {
    let l = &r.latency_ms;
    format!(
        "{server}/{tool}: {calls} calls, {conc} in flight, {errors} errors (server started in {start:.1} ms)\n\
         throughput  {rate:.0} calls/s ({secs:.3} s), client CPU {cpu:.1} µs per call\n\
         latency ms  p50 {p50:.3}  p90 {p90:.3}  p99 {p99:.3}  max {max:.3}  (min {min:.3}, mean {mean:.3})",
        server = r.server,
        tool = r.tool,
        calls = r.calls,
        conc = r.concurrency,
        errors = r.errors,
        start = r.start_ms,
        rate = r.calls_per_sec,
        secs = r.elapsed_ms / 1000.0,
        cpu = r.client_cpu_us_per_call,
        p50 = l.p50,
        p90 = l.p90,
        p99 = l.p99,
        max = l.max,
        min = l.min,
        mean = l.mean,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles_are_nearest_rank() {
        let sorted: Vec<Duration> = (1..=100).map(Duration::from_millis).collect();
        let l = latency(&sorted);
        assert_eq!(l.min, 1.0);
        assert_eq!(l.p50, 50.0);
        assert_eq!(l.p90, 90.0);
        assert_eq!(l.p99, 99.0);
        assert_eq!(l.max, 100.0);
    }

    #[test]
    fn one_sample_is_every_percentile() {
        let l = latency(&[Duration::from_millis(3)]);
        assert_eq!((l.p50, l.p99, l.max), (3.0, 3.0, 3.0));
    }
}
