//! What the stdio sandbox costs, against `toolbridge example-server`, the
//! sandboxed and the unsandboxed server measured in the same rounds,
//! interleaved:
//!
//! - start: spawn, handshake and first tool list of a fresh pool's server
//!   (`"sandbox": "default"` versus `false`); the median of per-round
//!   medians, and `OVERHEAD start ms=<x>`, the median per-round difference;
//! - calls: sequential `echo` calls per second on a started server;
//!   `RATIO calls sandboxed/unsandboxed=<x>`, the median per-round ratio.
//!
//! `cargo bench -p toolbridge-cli --bench sandbox [-- --rounds 7 --seq 2000]`

mod common;

use std::time::Instant;

use common::*;
use toolbridge::{
    config::{ServerSpec, TransportSpec},
    pool::{CallOptions, Pool, PoolOptions},
    sandbox::Sandbox,
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

/// Sequential calls per second on a started server.
async fn calls_per_sec(pool: &Pool, calls: u64) -> f64 {
    let began = Instant::now();
    for _ in 0..calls {
        pool.call_tool("example", "echo", Some(echo_args()), CallOptions::default())
            .await
            .expect("echo");
    }
    calls as f64 / began.elapsed().as_secs_f64()
}

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
    let configs = [
        ("sandboxed", Sandbox::Default),
        ("unsandboxed", Sandbox::Off),
    ];
    let mut starts: [Vec<f64>; 2] = Default::default();
    let mut overheads = Vec::new();
    let mut rates: [Vec<f64>; 2] = Default::default();
    let mut ratios = Vec::new();
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
            let mut round = [Vec::new(), Vec::new()];
            for _ in 0..STARTS {
                for (i, (_, sandbox)) in configs.iter().enumerate() {
                    round[i].push(start_ms(sandbox).await);
                }
            }
            let medians = [median(&round[0]), median(&round[1])];
            for i in 0..2 {
                starts[i].push(medians[i]);
            }
            overheads.push(medians[0] - medians[1]);
            // Which goes first alternates, so neither always runs warm.
            let order = if r % 2 == 0 { [0, 1] } else { [1, 0] };
            let mut rate = [0.0; 2];
            for i in order {
                rate[i] = calls_per_sec(&pools[i], opts.seq_calls).await;
                rates[i].push(rate[i]);
            }
            ratios.push(rate[0] / rate[1]);
        }
        for pool in &pools {
            pool.close_all().await;
        }
    });
    println!();
    println!("{:<12} {:>14} {:>14}", "", "start ms p50", "calls/s p50");
    for (i, (name, _)) in configs.iter().enumerate() {
        println!(
            "{name:<12} {:>14.2} {:>14.0}",
            median(&starts[i]),
            median(&rates[i])
        );
    }
    println!();
    println!("OVERHEAD start ms={:.2}", median(&overheads));
    println!("RATIO calls sandboxed/unsandboxed={:.3}", median(&ratios));
}
