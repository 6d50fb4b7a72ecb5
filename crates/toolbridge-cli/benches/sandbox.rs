//! What the stdio sandbox costs, against `toolbridge example-server`, the
//! sandboxed and the unsandboxed server measured in the same rounds,
//! interleaved:
//!
//! - start: spawn, handshake and first tool list of a fresh pool's server
//!   (`"sandbox": "default"` versus `false`); the median of per-round
//!   medians, and `OVERHEAD start ms=<x>`, the median per-round difference;
//! - calls: sequential `echo` calls per second on a started server, each
//!   round's calls in blocks interleaved across the configurations;
//!   `RATIO calls sandboxed/unsandboxed=<x>`, the median per-round ratio.
//!
//! And the same for the strictest sandbox (`"network": "none"`, which adds a
//! network namespace (and, not as root, a user namespace), with `memoryMb`
//! and `processes`, which add limits and, as root, a `pids` cgroup): the
//! `strict` row and its own `OVERHEAD`/`RATIO` lines against the same
//! unsandboxed baseline.
//!
//! With the word `parts`, also each part of those sandboxes alone, against
//! the same baseline: an empty object (the system and the server's own
//! files, no temporary folder to write), `write` of the temporary folder,
//! `"network": "none"`, `memoryMb`, `processes`.
//!
//! `cargo bench -p toolbridge-cli --bench sandbox [-- --rounds 7 --seq 2000] [parts]`
//!
//! On a 2-vCPU machine the calls rate of one configuration moves threefold
//! between runs with where the scheduler puts the client's and the server's
//! wake-ups; run the bench binary under `taskset -c 1` to hold that equal
//! for every configuration (docs/performance.md, the sandbox's round 31).

mod common;

use std::time::Instant;

use common::*;
use toolbridge::{
    config::{ServerSpec, TransportSpec},
    pool::{CallOptions, Pool, PoolOptions},
    sandbox::{Network, Sandbox, SandboxRules},
};

/// Starts per configuration per round.
const STARTS: usize = 10;

fn spec(sandbox: Sandbox) -> ServerSpec {
    let mut spec = ServerSpec::stdio("example", toolbridge_exe(), ["example-server"]);
    if let TransportSpec::Stdio(stdio) = &mut spec.transport {
        stdio.sandbox = sandbox;
    }
    spec
}

/// Milliseconds from a new pool to its server's tool list.
async fn start_ms(sandbox: &Sandbox) -> f64 {
    let pool = Pool::new(vec![spec(sandbox.clone())], PoolOptions::default());
    let began = Instant::now();
    pool.list_server_tools("example").await.expect("start");
    let ms = began.elapsed().as_secs_f64() * 1e3;
    pool.close_all().await;
    ms
}

/// Seconds for `calls` sequential calls on a started server.
async fn calls_secs(pool: &Pool, calls: u64) -> f64 {
    let began = Instant::now();
    for _ in 0..calls {
        pool.call_tool("example", "echo", Some(echo_args()), CallOptions::default())
            .await
            .expect("echo");
    }
    began.elapsed().as_secs_f64()
}

/// Sequential calls per second on a started server.
async fn calls_per_sec(pool: &Pool, calls: u64) -> f64 {
    calls as f64 / calls_secs(pool, calls).await
}

/// The calls of a round come in this many blocks, the configurations'
/// blocks interleaved: a change of the machine's load during the round
/// (other builds on the two cores) falls on every configuration alike,
/// not on whichever ran its calls then.
const BLOCKS: u64 = 10;

fn main() {
    let opts = Options::from_args(Options {
        rounds: 7,
        seq_calls: 2_000,
        conc_calls: 0,
        in_flight: 1,
        multi_thread: false,
        only: Vec::new(),
    });
    println!(
        "sandbox benchmark: `toolbridge example-server`, {} rounds interleaved, {STARTS} starts \
         and {} sequential echo calls per configuration per round; sandbox: {}",
        opts.rounds,
        opts.seq_calls,
        toolbridge::sandbox::Support::get().summary()
    );
    let rt = runtime(false);
    let strict = Sandbox::Rules(SandboxRules {
        network: Network::None,
        memory_mb: Some(4096),
        processes: Some(64),
        ..SandboxRules::default()
    });
    let mut configs = vec![("sandboxed", Sandbox::Default), ("strict", strict)];
    if opts.only.iter().any(|word| word == "parts") {
        // Each part of the two sandboxes alone, to tell which costs what.
        let rules = |rules: SandboxRules| Sandbox::Rules(rules);
        configs.extend([
            ("rules", rules(SandboxRules::default())),
            (
                "write-tmp",
                rules(SandboxRules {
                    write: vec![std::env::temp_dir()],
                    ..SandboxRules::default()
                }),
            ),
            (
                "netns",
                rules(SandboxRules {
                    network: Network::None,
                    ..SandboxRules::default()
                }),
            ),
            (
                "memory",
                rules(SandboxRules {
                    memory_mb: Some(4096),
                    ..SandboxRules::default()
                }),
            ),
            (
                "processes",
                rules(SandboxRules {
                    processes: Some(64),
                    ..SandboxRules::default()
                }),
            ),
        ]);
    }
    // The baseline is last: each row's figures are against it.
    configs.push(("unsandboxed", Sandbox::Off));
    let n = configs.len();
    let base = n - 1;
    let mut starts = vec![Vec::new(); n];
    let mut overheads = vec![Vec::new(); n];
    let mut rates = vec![Vec::new(); n];
    let mut ratios = vec![Vec::new(); n];
    rt.block_on(async {
        // Warm the page cache and the binary once.
        start_ms(&Sandbox::Off).await;
        let pools: Vec<Pool> = configs
            .iter()
            .map(|(_, sandbox)| Pool::new(vec![spec(sandbox.clone())], PoolOptions::default()))
            .collect();
        for pool in &pools {
            pool.list_server_tools("example").await.expect("start");
            calls_per_sec(pool, 200).await;
        }
        for r in 0..opts.rounds {
            let mut round = vec![Vec::new(); n];
            for _ in 0..STARTS {
                for (i, (_, sandbox)) in configs.iter().enumerate() {
                    round[i].push(start_ms(sandbox).await);
                }
            }
            let medians: Vec<f64> = round.iter().map(|r| median(r)).collect();
            // Which goes first rotates, so none always runs warm.
            let block = (opts.seq_calls / BLOCKS).max(1);
            let mut secs = vec![0.0; n];
            for b in 0..BLOCKS as usize {
                for k in 0..n {
                    let i = (k + r + b) % n;
                    secs[i] += calls_secs(&pools[i], block).await;
                }
            }
            let rate: Vec<f64> = secs.iter().map(|s| (block * BLOCKS) as f64 / s).collect();
            for i in 0..n {
                starts[i].push(medians[i]);
                overheads[i].push(medians[i] - medians[base]);
                rates[i].push(rate[i]);
                ratios[i].push(rate[i] / rate[base]);
            }
        }
        for pool in &pools {
            pool.close_all().await;
        }
    });
    println!();
    println!(
        "{:<12} {:>14} {:>14} {:>16} {:>14}",
        "", "start ms p50", "calls/s p50", "start overhead", "calls ratio"
    );
    for (i, (name, _)) in configs.iter().enumerate() {
        println!(
            "{name:<12} {:>14.2} {:>14.0} {:>13.2} ms {:>14.3}",
            median(&starts[i]),
            median(&rates[i]),
            median(&overheads[i]),
            median(&ratios[i]),
        );
    }
    println!();
    println!("OVERHEAD start ms={:.2}", median(&overheads[0]));
    println!(
        "RATIO calls sandboxed/unsandboxed={:.3}",
        median(&ratios[0])
    );
    println!("OVERHEAD strict start ms={:.2}", median(&overheads[1]));
    println!("RATIO calls strict/unsandboxed={:.3}", median(&ratios[1]));
}
