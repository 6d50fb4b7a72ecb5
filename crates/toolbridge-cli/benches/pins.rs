//! What pinning tool definitions costs a listing of 1,000 tools:
//!
//! - `list`: a real stdio server (tests/servers/tool_cache.py) listing
//!   1,000 tools, with pinning off and on (the server already pinned):
//!   the first listing of a new pool (a run of the CLI: every definition
//!   hashed and compared with the pins file, read once), a listing asked
//!   again of a running pool (`forget_tools`: the same definitions, so
//!   compared with the last ones, not hashed), and a listing answered
//!   from the in-memory cache (a `stat` of the pins file at most every
//!   0.1 s). And the
//!   first sight of the server (a new pool with an empty pins folder:
//!   every definition hashed and both pins files written). Rounds
//!   interleaved; medians, the difference of the medians, the median of
//!   the per-round differences (on minus off of the same round, which
//!   cancels most of what the load does to a round) and the ratio;
//!   `ADDED first listing ms=` and `ADDED again listing ms=` print the
//!   latter for the two rows issue 26 sets a target for (at most 1 ms).
//! - `hash`: the canonical hash alone of 1,000 tools with a realistic
//!   schema (five typed properties with descriptions), median per 1,000.
//!
//! `cargo bench -p toolbridge-cli --bench pins [-- list hash] [--rounds N]`

mod common;

use std::{sync::Arc, time::Instant};

use common::{Options, median};
use toolbridge::{
    McpTool,
    config::{ServerSpec, StdioSpec, TransportSpec},
    pins::{PinOptions, PinPolicy},
    pool::{Pool, PoolOptions},
};

const TOOLS: usize = 1_000;

fn main() {
    let opts = Options::from_args(Options {
        rounds: 21,
        seq_calls: 0,
        conc_calls: 0,
        in_flight: 0,
        multi_thread: false,
        only: Vec::new(),
    });
    if opts.wants("list") {
        list(&opts);
    }
    if opts.wants("hash") {
        hash(&opts);
    }
}

fn server(dir: &std::path::Path, pin: PinPolicy) -> ServerSpec {
    let script = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../toolbridge/tests/servers/tool_cache.py"
    );
    let python = concat!(env!("CARGO_MANIFEST_DIR"), "/../../.deps/py2/bin/python");
    let python = if std::path::Path::new(python).exists() {
        python
    } else {
        "python3"
    };
    let mut spec = ServerSpec::stdio("many", python, [script]);
    let names: Vec<String> = (0..TOOLS).map(|i| format!("tool_{i}")).collect();
    if let TransportSpec::Stdio(StdioSpec { env, .. }) = &mut spec.transport {
        env.insert(
            "STARTS_FILE".to_owned(),
            dir.join("starts").to_string_lossy().into_owned(),
        );
        env.insert("TOOLS".to_owned(), names.join(","));
    }
    spec.pin = pin;
    spec
}

fn list(opts: &Options) {
    let dir = tempfile::tempdir().expect("tempdir");
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    let off = Pool::new(
        [server(dir.path(), PinPolicy::Off)],
        PoolOptions {
            listen_for_changes: false,
            ..PoolOptions::default()
        },
    );
    let on = Pool::new(
        [server(dir.path(), PinPolicy::Block)],
        PoolOptions {
            listen_for_changes: false,
            pins: Some(PinOptions::in_dir(dir.path().join("pins"))),
            ..PoolOptions::default()
        },
    );
    runtime.block_on(async {
        // Start both, and pin on first sight.
        for pool in [&off, &on] {
            let tools = pool.list_server_tools("many").await.expect("list");
            assert!(tools.len() >= TOOLS, "{} tools", tools.len());
        }
        let listed_ms = |pool: &Pool| {
            let pool = pool.clone();
            async move {
                pool.forget_tools("many");
                let started = Instant::now();
                let tools = pool.list_server_tools("many").await.expect("list");
                let ms = started.elapsed().as_secs_f64() * 1000.0;
                assert!(tools.len() >= TOOLS, "withheld: {}", tools.len());
                ms
            }
        };
        let cached_us = |pool: &Pool| {
            let pool = pool.clone();
            async move {
                let started = Instant::now();
                for _ in 0..100 {
                    let tools = pool.list_server_tools("many").await.expect("list");
                    assert!(tools.len() >= TOOLS);
                }
                started.elapsed().as_secs_f64() * 1e6 / 100.0
            }
        };
        // A new pool each time: its first listing (the server started
        // first, not timed).
        let first_ms = |pin: PinPolicy| {
            let spec = server(dir.path(), pin);
            let pins = dir.path().join("pins");
            async move {
                let pool = Pool::new([spec], PoolOptions {
                    listen_for_changes: false,
                    pins: Some(PinOptions::in_dir(pins)),
                    ..PoolOptions::default()
                });
                pool.connect("many").await.expect("start");
                let started = Instant::now();
                let tools = pool.list_server_tools("many").await.expect("list");
                let ms = started.elapsed().as_secs_f64() * 1000.0;
                assert!(tools.len() >= TOOLS, "withheld: {}", tools.len());
                pool.close_all().await;
                ms
            }
        };
        // A new pool with a pins folder of its own: the server seen for the
        // first time, so its listing writes its pins.
        let sight_ms = |pin: PinPolicy, round: usize| {
            let spec = server(dir.path(), pin);
            let pins = dir.path().join(format!("sight-{round}-{}", pin.as_str()));
            async move {
                let pool = Pool::new([spec], PoolOptions {
                    listen_for_changes: false,
                    pins: Some(PinOptions::in_dir(&pins)),
                    ..PoolOptions::default()
                });
                pool.connect("many").await.expect("start");
                let started = Instant::now();
                let tools = pool.list_server_tools("many").await.expect("list");
                let ms = started.elapsed().as_secs_f64() * 1000.0;
                assert!(tools.len() >= TOOLS, "withheld: {}", tools.len());
                pool.close_all().await;
                ms
            }
        };
        let (mut off_sight, mut on_sight) = (Vec::new(), Vec::new());
        let (mut off_first, mut on_first) = (Vec::new(), Vec::new());
        let (mut off_ms, mut on_ms, mut off_hit, mut on_hit) =
            (Vec::new(), Vec::new(), Vec::new(), Vec::new());
        for round in 0..opts.rounds {
            if round % 2 == 0 {
                off_sight.push(sight_ms(PinPolicy::Off, round).await);
                on_sight.push(sight_ms(PinPolicy::Block, round).await);
            } else {
                on_sight.push(sight_ms(PinPolicy::Block, round).await);
                off_sight.push(sight_ms(PinPolicy::Off, round).await);
            }
            if round % 2 == 0 {
                off_first.push(first_ms(PinPolicy::Off).await);
                on_first.push(first_ms(PinPolicy::Block).await);
            } else {
                on_first.push(first_ms(PinPolicy::Block).await);
                off_first.push(first_ms(PinPolicy::Off).await);
            }
            // Alternate which goes first, so neither always runs warm.
            if round % 2 == 0 {
                off_ms.push(listed_ms(&off).await);
                on_ms.push(listed_ms(&on).await);
            } else {
                on_ms.push(listed_ms(&on).await);
                off_ms.push(listed_ms(&off).await);
            }
            off_hit.push(cached_us(&off).await);
            on_hit.push(cached_us(&on).await);
        }
        println!();
        println!(
            "pins: listing {TOOLS} tools of a stdio server (tool_cache.py), {} rounds interleaved",
            opts.rounds
        );
        println!(
            "| listing | pinning off | pinning on | added | added, median of per-round differences | ratio on / off |"
        );
        println!("|---|--:|--:|--:|--:|--:|");
        let rows: [(&str, &str, &[f64], &[f64]); 4] = [
            ("first sight (no pins yet: written), median ms", "ms", &off_sight, &on_sight),
            ("first listing of a new pool, median ms", "ms", &off_first, &on_first),
            ("asked again of a running pool, median ms", "ms", &off_ms, &on_ms),
            ("from the cache, median µs", "µs", &off_hit, &on_hit),
        ];
        for (what, unit, off, on) in rows {
            let (off_p50, on_p50) = (median(off), median(on));
            // Each round's on and off ran back to back: their difference
            // cancels what the load did to that round.
            let added: Vec<f64> = on.iter().zip(off).map(|(on, off)| on - off).collect();
            let digits = if unit == "ms" { 2 } else { 1 };
            println!(
                "| {what} | {off_p50:.digits$} | {on_p50:.digits$} | {:.digits$} {unit} | {:.digits$} {unit} | {:.3} |",
                on_p50 - off_p50,
                median(&added),
                on_p50 / off_p50
            );
        }
        for (what, off, on) in [("first", &off_first, &on_first), ("again", &off_ms, &on_ms)] {
            let added: Vec<f64> = on.iter().zip(off.iter()).map(|(on, off)| on - off).collect();
            println!("ADDED {what} listing ms={:.2}", median(&added));
        }
        off.close_all().await;
        on.close_all().await;
    });
}

fn realistic(i: usize) -> McpTool {
    let schema = serde_json::json!({
        "type": "object",
        "properties": {
            "path": {"type": "string", "description": "The file to read, relative to the root."},
            "offset": {"type": "integer", "minimum": 0, "description": "Where to start, in bytes."},
            "limit": {"type": "integer", "minimum": 1, "maximum": 1_000_000, "description": "How many bytes at most."},
            "encoding": {"type": "string", "enum": ["utf-8", "latin-1", "base64"], "description": "How to decode."},
            "follow": {"type": "boolean", "description": "Follow symbolic links."}
        },
        "required": ["path"],
        "additionalProperties": false
    });
    McpTool {
        id: McpTool::id_for("s", &format!("read_{i}")),
        name: format!("read_{i}"),
        description: "Read part of a file under the server's root and return it as text, \
                      decoded as asked; fails when the path leaves the root."
            .into(),
        input_schema: Arc::new(schema.as_object().cloned().unwrap_or_default()),
        server_id: "s".into(),
        server_name: "s".into(),
        ..McpTool::default()
    }
}

fn hash(opts: &Options) {
    let tools: Vec<McpTool> = (0..TOOLS).map(realistic).collect();
    // The pin as its text (`canonical::hash`, as in earlier runs) and as
    // the 32 bytes the pool keeps (`canonical::digest`), interleaved.
    let (mut text_ms, mut digest_ms) = (Vec::new(), Vec::new());
    for _ in 0..opts.rounds {
        let started = Instant::now();
        let pins: Vec<String> = tools
            .iter()
            .map(toolbridge::pins::canonical::hash)
            .collect();
        text_ms.push(started.elapsed().as_secs_f64() * 1000.0);
        assert_eq!(pins.len(), TOOLS);
        let started = Instant::now();
        let pins: Vec<[u8; 32]> = tools
            .iter()
            .map(toolbridge::pins::canonical::digest)
            .collect();
        digest_ms.push(started.elapsed().as_secs_f64() * 1000.0);
        assert_eq!(pins.len(), TOOLS);
    }
    println!();
    println!(
        "pins: canonical hash of {TOOLS} tools with a five-property schema, median of {} rounds: \
         {:.2} ms as text, {:.2} ms as 32 bytes (what the pool keeps)",
        opts.rounds,
        median(&text_ms),
        median(&digest_ms)
    );
}
