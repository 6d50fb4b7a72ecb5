//! The pool's fixed costs, each part selectable by name:
//!
//! - `memory`: RSS of this process holding 50 pooled stdio connections to
//!   the example server (VmRSS before and after; run first, in a fresh process);
//! - `start`: 20 stdio servers that each take 300 ms before answering the
//!   handshake, time until `list_all_active_server_tools` returns, for
//!   several `max_parallel_starts` caps, rounds interleaved; then the same
//!   with 20 Python servers (CPU-bound starts) to show what a higher cap
//!   costs when starting is not just waiting;
//! - `cli`: `toolbridge call example hello` from start to exit, next to
//!   `toolbridge --version` (the process-start floor), runs interleaved;
//! - `lazy`: `toolbridge tools` with 20 configured servers that each take
//!   300 ms to start, first with an empty tool-list cache, then again
//!   (answered from the cache, no server started); medians and their ratio.
//!
//! `cargo bench -p toolbridge-cli --bench pool [-- memory start cli lazy] [--rounds N]`

mod common;

use std::{
    path::{Path, PathBuf},
    process::{Command, Stdio},
    time::{Duration, Instant},
};

use common::*;
use toolbridge::{
    config::{ServerSpec, StdioSpec, TransportSpec},
    pool::{CallOptions, Pool, PoolOptions},
};

fn main() {
    let opts = Options::from_args(Options {
        rounds: 5,
        seq_calls: 0,
        conc_calls: 0,
        in_flight: 0,
        multi_thread: false,
        only: Vec::new(),
    });
    if opts.wants("memory") {
        memory();
    }
    if opts.wants("start") {
        parallel_start(&opts);
    }
    if opts.wants("cli") {
        cli_start_to_exit(&opts);
    }
    if opts.wants("lazy") {
        lazy_tools(&opts);
    }
}

fn lazy_tools(opts: &Options) {
    const SERVERS: usize = 20;
    let dir = std::env::temp_dir().join(format!("toolbridge-bench-lazy-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("bench dir");
    let config = dir.join("config.json");
    let servers: serde_json::Map<String, serde_json::Value> = (0..SERVERS)
        .map(|i| {
            (
                format!("slow{i}"),
                serde_json::json!({
                    "command": toolbridge_exe(),
                    "args": ["example-server", "--start-delay-ms", "300"],
                }),
            )
        })
        .collect();
    std::fs::write(
        &config,
        serde_json::json!({ "mcpServers": servers }).to_string(),
    )
    .expect("write config");
    let tools = |cache: &Path| -> (Duration, usize) {
        let started = Instant::now();
        let output = Command::new(toolbridge_exe())
            .args(["--config"])
            .arg(&config)
            .args(["-q", "tools"])
            .env("XDG_CACHE_HOME", cache)
            .stdin(Stdio::null())
            .stderr(Stdio::null())
            .output()
            .expect("run toolbridge tools");
        let elapsed = started.elapsed();
        assert!(output.status.success(), "toolbridge tools failed");
        let listed: serde_json::Value =
            serde_json::from_slice(&output.stdout).expect("tools prints JSON");
        (elapsed, listed.as_array().map_or(0, Vec::len))
    };
    let mut first = Vec::new();
    let mut second = Vec::new();
    for round in 0..opts.rounds.max(5) {
        let cache = dir.join(format!("cache{round}"));
        let (cold, cold_tools) = tools(&cache);
        let (warm, warm_tools) = tools(&cache);
        assert_eq!(cold_tools, warm_tools, "the cached listing differs");
        assert!(cold_tools >= SERVERS, "too few tools: {cold_tools}");
        first.push(cold.as_secs_f64() * 1000.0);
        second.push(warm.as_secs_f64() * 1000.0);
    }
    let _ = std::fs::remove_dir_all(&dir);
    let (first, second) = (median(&first), median(&second));
    println!();
    println!(
        "lazy start: `toolbridge tools` with {SERVERS} servers that take 300 ms to start, \
         {} rounds (each with a new cache folder)",
        opts.rounds.max(5)
    );
    println!("| run | median ms |");
    println!("|---|--:|");
    println!("| first (empty cache: every server started) | {first:.1} |");
    println!("| second (from the cache: none started) | {second:.1} |");
    println!("| ratio first / second | {:.1}x |", first / second);
}

fn example(name: &str, extra: &[&str]) -> ServerSpec {
    let mut args = vec!["example-server".to_owned()];
    args.extend(extra.iter().map(|s| (*s).to_owned()));
    ServerSpec::stdio(name, toolbridge_exe(), args)
}

fn memory() {
    const SERVERS: usize = 50;
    let rt = runtime(false);
    let before = rss_kib("VmRSS:");
    let pool = Pool::new(
        (0..SERVERS).map(|i| example(&format!("s{i}"), &[])),
        PoolOptions {
            max_parallel_starts: SERVERS,
            ..PoolOptions::default()
        },
    );
    let started = Instant::now();
    let reports = rt.block_on(pool.connect_all(|_| {}));
    let connect_time = started.elapsed();
    let failed = reports.iter().filter(|r| r.result.is_err()).count();
    assert_eq!(failed, 0, "some servers did not start");
    let connected = rss_kib("VmRSS:");
    // One call and one listing on each, so every buffer has been used.
    rt.block_on(async {
        for name in &pool.server_names() {
            let mut args = toolbridge::rmcp_model::JsonObject::new();
            args.insert("text".into(), "x".repeat(100).into());
            pool.call_tool(name, "echo", Some(args), CallOptions::default())
                .await
                .expect("echo");
            pool.list_server_tools(name).await.expect("tools");
        }
    });
    let used = rss_kib("VmRSS:");
    let peak = rss_kib("VmHWM:");
    println!();
    println!("memory: {SERVERS} pooled stdio connections to the example server");
    println!("| measure | KiB |");
    println!("|---|--:|");
    println!("| VmRSS before the pool | {before} |");
    println!("| VmRSS with {SERVERS} connections | {connected} |");
    println!("| VmRSS after a call and a listing on each | {used} |");
    println!("| VmHWM (peak) | {peak} |");
    println!(
        "| per connection ((after - before) / {SERVERS}) | {:.0} |",
        (used.saturating_sub(before)) as f64 / SERVERS as f64
    );
    println!(
        "(all {SERVERS} started in {:.0} ms)",
        connect_time.as_secs_f64() * 1000.0
    );
    rt.block_on(pool.close_all());
}

fn parallel_start(opts: &Options) {
    const SERVERS: usize = 20;
    const DELAY_MS: &str = "300";
    let rt = runtime(false);
    let caps = [8usize, 16, 20, 32];

    let slow_example: Vec<ServerSpec> = (0..SERVERS)
        .map(|i| example(&format!("slow{i}"), &["--start-delay-ms", DELAY_MS]))
        .collect();
    println!();
    println!(
        "parallel start: {SERVERS} stdio servers that wait {DELAY_MS} ms before answering the \
         handshake; ms until `list_all_active_server_tools` returns; medians of {} rounds",
        opts.rounds
    );
    run_starts(
        &rt,
        opts,
        "example-server --start-delay-ms 300",
        &slow_example,
        &caps,
    );

    match python() {
        Some(python) => {
            let script = workspace().join("crates/toolbridge/tests/servers/misbehave.py");
            let slow_python: Vec<ServerSpec> = (0..SERVERS)
                .map(|i| {
                    let mut spec = ServerSpec::stdio(
                        format!("py{i}"),
                        python.to_string_lossy(),
                        [
                            script.to_string_lossy().into_owned(),
                            "slow-start".to_owned(),
                        ],
                    );
                    if let TransportSpec::Stdio(StdioSpec { env, .. }) = &mut spec.transport {
                        env.insert("START_DELAY_MS".into(), DELAY_MS.into());
                    }
                    spec
                })
                .collect();
            run_starts(
                &rt,
                opts,
                "python misbehave.py slow-start (CPU-bound interpreter start + 300 ms)",
                &slow_python,
                &caps,
            );
        }
        None => println!("(no Python found: skipping the Python servers)"),
    }
}

fn run_starts(
    rt: &tokio::runtime::Runtime,
    opts: &Options,
    what: &str,
    specs: &[ServerSpec],
    caps: &[usize],
) {
    let mut times: Vec<Vec<f64>> = vec![Vec::new(); caps.len()];
    let mut cpu: Vec<Vec<f64>> = vec![Vec::new(); caps.len()];
    for round in 0..opts.rounds {
        for k in 0..caps.len() {
            let i = (k + round) % caps.len();
            let pool = Pool::new(
                specs.iter().cloned(),
                PoolOptions {
                    max_parallel_starts: caps[i],
                    ..PoolOptions::default()
                },
            );
            let children_before = children_cpu();
            let started = Instant::now();
            let listing = rt.block_on(pool.list_all_active_server_tools());
            let (tools, failures) = (listing.tools, listing.failures);
            let elapsed = started.elapsed();
            assert!(failures.is_empty(), "servers failed: {failures:?}");
            assert!(tools.len() >= specs.len(), "too few tools: {}", tools.len());
            rt.block_on(pool.close_all());
            times[i].push(elapsed.as_secs_f64() * 1000.0);
            cpu[i].push((children_cpu().saturating_sub(children_before)).as_secs_f64() * 1000.0);
        }
    }
    println!();
    println!("{what}");
    println!("| max_parallel_starts | ms to list all tools | servers' CPU ms (all) |");
    println!("|--:|--:|--:|");
    for (i, cap) in caps.iter().enumerate() {
        let default = if *cap == PoolOptions::default().max_parallel_starts {
            " (default)"
        } else {
            ""
        };
        println!(
            "| {cap}{default} | {:.0} | {:.0} |",
            median(&times[i]),
            median(&cpu[i])
        );
    }
}

/// CPU time of the waited-for children (servers that have exited).
fn children_cpu() -> Duration {
    // SAFETY: getrusage writes into the struct we pass and nothing else.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    let rc = unsafe { libc::getrusage(libc::RUSAGE_CHILDREN, &mut usage) };
    assert_eq!(rc, 0, "getrusage failed");
    let tv = |t: libc::timeval| Duration::new(t.tv_sec as u64, t.tv_usec as u32 * 1000);
    tv(usage.ru_utime) + tv(usage.ru_stime)
}

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The test venv's Python if set up, else `python3` on PATH.
fn python() -> Option<PathBuf> {
    let venv = workspace().join(".deps/py2/bin/python");
    if venv.exists() {
        return Some(venv);
    }
    which("python3")
}

fn which(name: &str) -> Option<PathBuf> {
    std::env::var_os("PATH").and_then(|path| {
        std::env::split_paths(&path)
            .map(|d| d.join(name))
            .find(|p| p.exists())
    })
}

fn cli_start_to_exit(opts: &Options) {
    let runs = opts.rounds.max(5) * 6;
    let dir = std::env::temp_dir().join(format!("toolbridge-bench-{}", std::process::id()));
    let config = dir.join("no-config.json");
    let run = |args: &[&str]| -> Duration {
        let started = Instant::now();
        let status = Command::new(toolbridge_exe())
            .args(args)
            .env("TOOLBRIDGE_CONFIG", &config)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .expect("run toolbridge");
        let elapsed = started.elapsed();
        assert!(status.success(), "toolbridge {args:?} failed: {status}");
        elapsed
    };
    let call: &[&str] = &["call", "example", "hello", "--args", r#"{"name":"bench"}"#];
    let version: &[&str] = &["--version"];
    for _ in 0..3 {
        run(call);
        run(version);
    }
    let mut calls = Vec::new();
    let mut versions = Vec::new();
    for i in 0..runs {
        if i % 2 == 0 {
            calls.push(run(call).as_secs_f64() * 1000.0);
            versions.push(run(version).as_secs_f64() * 1000.0);
        } else {
            versions.push(run(version).as_secs_f64() * 1000.0);
            calls.push(run(call).as_secs_f64() * 1000.0);
        }
    }
    let p90 = |v: &[f64]| {
        let mut v = v.to_vec();
        v.sort_by(|a, b| a.total_cmp(b));
        v[((v.len() as f64 * 0.9).ceil() as usize).clamp(1, v.len()) - 1]
    };
    println!();
    println!(
        "start to exit, {runs} runs each, interleaved (no config file: the built-in example server)"
    );
    println!("| command | median ms | p90 ms |");
    println!("|---|--:|--:|");
    println!(
        "| toolbridge call example hello --args '{{\"name\":\"bench\"}}' | {:.1} | {:.1} |",
        median(&calls),
        p90(&calls)
    );
    println!(
        "| toolbridge --version (process start floor) | {:.1} | {:.1} |",
        median(&versions),
        p90(&versions)
    );
}
