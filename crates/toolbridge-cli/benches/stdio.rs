//! Tool calls over stdio against `toolbridge example-server`, one process,
//! rounds interleaved:
//!
//! - the pipe floor: precomputed JSON-RPC lines written to the server's
//!   stdin and responses read from its stdout, no JSON work on our side (the
//!   server's own ceiling when many are in flight);
//! - the raw rmcp client (`().serve(TokioChildProcess)` + `peer.call_tool`),
//!   with its default `initialize` handshake, and with the `server/discover`
//!   lifecycle toolbridge uses (protocol 2026-07-28: every request carries
//!   its own `_meta`);
//! - toolbridge's full path (pool → transport → flattened string).
//!
//! Each sequentially and with 64 in flight, on a current-thread client
//! runtime (then a multi-thread one). The last two lines are the ratios of
//! toolbridge to the default rmcp client, medians of per-round ratios:
//! `RATIO seq toolbridge/rmcp=<x>` and `RATIO conc toolbridge/rmcp=<x>`.
//!
//! `cargo bench -p toolbridge-cli --bench stdio [-- --rounds 5 --seq 4000 --conc 40000 --in-flight 64 --no-multi-thread]`

mod common;

use std::{
    collections::BTreeSet,
    io::{BufRead, BufReader, Read, Write},
    process::{Child, ChildStdin, ChildStdout, Stdio},
    time::{Duration, Instant},
};

use common::*;
use rmcp::{
    RoleClient, ServiceExt,
    model::{CallToolRequestParams, ProtocolVersion},
    service::{ClientLifecycleMode, ClientServiceExt, Peer, RunningService},
    transport::TokioChildProcess,
};
use toolbridge::{
    config::ServerSpec,
    pool::{Pool, PoolOptions},
    rmcp_model::JsonObject,
};

const FLOOR: &str = "pipe floor (no JSON work)";
const FLOOR_MODERN: &str = "pipe floor, 2026-07-28 requests";
const RMCP: &str = "rmcp 3.11 (initialize)";
const RMCP_DISCOVER: &str = "rmcp 3.11 (discover, as toolbridge)";
const TOOLBRIDGE: &str = "toolbridge full path";
const CEILING: &str = "pipe floor, 256 in flight (ceiling)";
const CEILING_MODERN: &str = "pipe floor, 2026-07-28, 256 in flight";

/// Ids of pipe-floor requests cycle through this many precomputed lines; more
/// than can ever be in flight, so ids in flight are unique.
const FLOOR_SLOTS: usize = 4096;
/// The window of the "server ceiling" row: deep pipelining.
const CEILING_IN_FLIGHT: u64 = 256;

fn main() {
    let opts = Options::from_args(Options {
        rounds: 5,
        seq_calls: 4_000,
        conc_calls: 40_000,
        in_flight: 64,
        multi_thread: true,
        only: Vec::new(),
    });
    println!(
        "stdio benchmark: echo with a 100-byte argument against `toolbridge example-server`; \
         {} rounds interleaved, {} sequential calls and {} calls with {} in flight per run; \
         figures are medians over rounds",
        opts.rounds, opts.seq_calls, opts.conc_calls, opts.in_flight
    );
    let current = run_pass(&opts, false);
    if opts.multi_thread {
        let multi = run_pass(&opts, true);
        println!();
        println!(
            "multi-thread client runtime: toolbridge/rmcp seq={:.3} conc={:.3}",
            multi.0, multi.1
        );
    }
    if !current.0.is_nan() {
        println!();
        println!("RATIO seq toolbridge/rmcp={:.3}", current.0);
        println!("RATIO conc toolbridge/rmcp={:.3}", current.1);
    }
}

/// One client under test.
enum Client {
    /// Raw pipe I/O with precomputed lines.
    Floor(PipeFloor),
    /// The rmcp client; the service is kept so the connection stays up.
    Rmcp {
        peer: Peer<RoleClient>,
        service: RunningService<RoleClient, ()>,
    },
    /// toolbridge's pool.
    Toolbridge(Pool),
}

struct Variant {
    label: &'static str,
    client: Client,
    /// The server process, to read its CPU time.
    server_pid: Option<u32>,
    /// Runs in the concurrent phase use this window instead of the common one.
    in_flight: Option<u64>,
    /// Only in the concurrent phase.
    conc_only: bool,
}

/// Measures one pass (one client runtime flavour); returns the
/// toolbridge/rmcp throughput ratios (sequential, concurrent).
fn run_pass(opts: &Options, multi_thread: bool) -> (f64, f64) {
    let flavour = if multi_thread {
        "multi-thread"
    } else {
        "current-thread"
    };
    let rt = runtime(multi_thread);
    let args = echo_args();

    let mut variants: Vec<Variant> = Vec::new();
    if !multi_thread && opts.wants("floor") {
        variants.push(start_variant(FLOOR, None, false, || {
            Client::Floor(PipeFloor::start(Protocol::Initialize))
        }));
        // The same requests as toolbridge's and rmcp's discover lifecycle
        // send (each with its `_meta`), which cost the server more.
        variants.push(start_variant(FLOOR_MODERN, None, false, || {
            Client::Floor(PipeFloor::start(Protocol::Discover))
        }));
    }
    if opts.wants("rmcp") {
        variants.push(start_variant(RMCP, None, false, || {
            rt.block_on(rmcp_client(ClientLifecycleMode::Initialize))
        }));
    }
    if opts.wants("rmcp-discover") {
        variants.push(start_variant(RMCP_DISCOVER, None, false, || {
            rt.block_on(rmcp_client(ClientLifecycleMode::Auto {
                preferred_versions: vec![ProtocolVersion::LATEST],
                legacy_version: Some(ProtocolVersion::LATEST_WITH_INITIALIZE),
            }))
        }));
    }
    if opts.wants("toolbridge") {
        variants.push(start_variant(TOOLBRIDGE, None, false, || {
            let pool = Pool::new(
                [ServerSpec::stdio(
                    "example",
                    toolbridge_exe(),
                    ["example-server"],
                )],
                PoolOptions::default(),
            );
            rt.block_on(pool.connect("example")).expect("connect");
            Client::Toolbridge(pool)
        }));
    }
    if !multi_thread && opts.wants("ceiling") {
        // The server's ceiling: the floor with a deep pipeline.
        variants.push(start_variant(
            CEILING,
            Some(CEILING_IN_FLIGHT),
            true,
            || Client::Floor(PipeFloor::start(Protocol::Initialize)),
        ));
        variants.push(start_variant(
            CEILING_MODERN,
            Some(CEILING_IN_FLIGHT),
            true,
            || Client::Floor(PipeFloor::start(Protocol::Discover)),
        ));
    }

    // Correctness and warm-up.
    for v in &mut variants {
        let run = measure(&rt, v, &args, 2_000, 16);
        assert_eq!(run.errors, 0, "{} failed during warm-up", v.label);
    }

    let n = variants.len();
    let mut seq: Vec<Row> = (0..n).map(|_| Row::default()).collect();
    let mut conc: Vec<Row> = (0..n).map(|_| Row::default()).collect();
    let mut seq_server: Vec<Vec<f64>> = vec![Vec::new(); n];
    let mut conc_server: Vec<Vec<f64>> = vec![Vec::new(); n];
    for round in 0..opts.rounds {
        // Rotate the order so no client always runs first (or last).
        let order: Vec<usize> = (0..n).map(|i| (i + round) % n).collect();
        for &i in &order {
            if variants[i].conc_only {
                continue;
            }
            let server = ServerCpu::start(variants[i].server_pid);
            let run = measure(&rt, &mut variants[i], &args, opts.seq_calls, 1);
            seq_server[i].push(server.us_per_call(run.calls));
            seq[i].runs.push(run);
        }
        for &i in &order {
            let in_flight = variants[i].in_flight.unwrap_or(opts.in_flight);
            let server = ServerCpu::start(variants[i].server_pid);
            let run = measure(&rt, &mut variants[i], &args, opts.conc_calls, in_flight);
            conc_server[i].push(server.us_per_call(run.calls));
            conc[i].runs.push(run);
        }
        eprintln!("{flavour}: round {} of {} done", round + 1, opts.rounds);
    }

    let label = |i: usize| -> String {
        format!(
            "{} (server {:.1} µs/call)",
            variants[i].label,
            median(&seq_server[i])
        )
    };
    let rows: Vec<(String, &Row)> = (0..n)
        .filter(|&i| !variants[i].conc_only)
        .map(|i| (label(i), &seq[i]))
        .collect();
    print_table(&format!("sequential, {flavour} client runtime"), &rows);
    let rows: Vec<(String, &Row)> = (0..n)
        .map(|i| {
            (
                format!(
                    "{} (server {:.1} µs/call)",
                    variants[i].label,
                    median(&conc_server[i])
                ),
                &conc[i],
            )
        })
        .collect();
    print_table(
        &format!("{} in flight, {flavour} client runtime", opts.in_flight),
        &rows,
    );

    let find = |label: &str| variants.iter().position(|v| v.label == label);
    let cps = |r: &Run| r.calls_per_sec();
    let cpu = |r: &Run| r.cpu_us_per_call();
    println!();
    println!("ratios ({flavour}), medians of per-round ratios:");
    let mut result = (f64::NAN, f64::NAN);
    for (other, name) in [
        (RMCP, "rmcp"),
        (RMCP_DISCOVER, "rmcp-discover"),
        (FLOOR, "pipe floor"),
        (FLOOR_MODERN, "pipe floor 2026-07-28"),
    ] {
        let (Some(tb), Some(o)) = (find(TOOLBRIDGE), find(other)) else {
            continue;
        };
        println!(
            "  toolbridge/{name}: calls/s seq {:.3} conc {:.3}; client CPU per call seq {:.3} conc {:.3}",
            ratio(&seq[tb], &seq[o], cps),
            ratio(&conc[tb], &conc[o], cps),
            ratio(&seq[tb], &seq[o], cpu),
            ratio(&conc[tb], &conc[o], cpu),
        );
        if other == RMCP {
            result = (
                ratio(&seq[tb], &seq[o], cps),
                ratio(&conc[tb], &conc[o], cps),
            );
        }
    }
    for (ceiling, name) in [
        (CEILING, "server ceiling"),
        (CEILING_MODERN, "server ceiling with 2026-07-28 requests"),
    ] {
        if let (Some(tb), Some(c)) = (find(TOOLBRIDGE), find(ceiling)) {
            println!(
                "  toolbridge at {} in flight / {name}: {:.3}",
                opts.in_flight,
                ratio(&conc[tb], &conc[c], cps)
            );
        }
    }

    // Close everything while the runtime still runs.
    for v in variants {
        match v.client {
            Client::Floor(floor) => floor.stop(),
            Client::Rmcp { service, .. } => {
                let _ = rt.block_on(service.cancel());
            }
            Client::Toolbridge(pool) => rt.block_on(pool.close_all()),
        }
    }
    result
}

/// Starts a client and finds the server process it started.
fn start_variant(
    label: &'static str,
    in_flight: Option<u64>,
    conc_only: bool,
    start: impl FnOnce() -> Client,
) -> Variant {
    let before = example_servers();
    let client = start();
    let after = example_servers();
    let server_pid = after.difference(&before).next().copied();
    Variant {
        label,
        client,
        server_pid,
        in_flight,
        conc_only,
    }
}

async fn rmcp_client(lifecycle: ClientLifecycleMode) -> Client {
    let mut command = tokio::process::Command::new(toolbridge_exe());
    command.arg("example-server");
    let transport = TokioChildProcess::new(command).expect("spawn example server");
    let service = match lifecycle {
        ClientLifecycleMode::Initialize => ().serve(transport).await,
        lifecycle => ().serve_with_lifecycle(transport, lifecycle).await,
    }
    .expect("rmcp handshake");
    Client::Rmcp {
        peer: service.peer().clone(),
        service,
    }
}

fn measure(
    rt: &tokio::runtime::Runtime,
    v: &mut Variant,
    args: &JsonObject,
    calls: u64,
    in_flight: u64,
) -> Run {
    match &mut v.client {
        Client::Floor(floor) => floor.run(calls, in_flight),
        Client::Rmcp { peer, .. } => {
            let peer = peer.clone();
            let args = args.clone();
            rt.block_on(drive(calls, in_flight, cpu_process, move || {
                let peer = peer.clone();
                let params = CallToolRequestParams::new("echo").with_arguments(args.clone());
                async move {
                    match peer.call_tool(params).await {
                        Ok(result) => result.is_error != Some(true),
                        Err(_) => false,
                    }
                }
            }))
        }
        Client::Toolbridge(pool) => {
            // Set up once, outside the timed calls.
            let registry = std::sync::Arc::new(rt.block_on(registry_for(pool, "example")));
            // Shared, so the one clone per call is toolbridge_call's (as
            // the rmcp client's is `with_arguments`).
            let args = std::sync::Arc::new(args.clone());
            rt.block_on(drive(calls, in_flight, cpu_process, move || {
                let registry = registry.clone();
                let args = args.clone();
                async move {
                    toolbridge_call(&registry, "mcp__example__echo", &args)
                        .await
                        .is_ok_and(|text| text.len() == 100)
                }
            }))
        }
    }
}

/// The raw floor: one example server, driven with precomputed request lines
/// and blocking pipe I/O on the calling thread. The only parsing is finding
/// the response id, to time each call.
struct PipeFloor {
    child: Child,
    stdin: ChildStdin,
    stdout: ChildStdout,
    /// `FLOOR_SLOTS` request lines; line `i` has id `FIRST_ID + i`.
    lines: Vec<Vec<u8>>,
}

const FIRST_ID: usize = 1000;

/// Which lifecycle the pipe floor speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Protocol {
    /// `initialize` (2025-11-25): the cheapest requests the server takes.
    Initialize,
    /// `server/discover` (2026-07-28): every request carries its `_meta`,
    /// byte for byte what toolbridge sends.
    Discover,
}

/// The `_meta` of a 2026-07-28 request.
const MODERN_META: &str = concat!(
    r#""io.modelcontextprotocol/protocolVersion":"2026-07-28","#,
    r#""io.modelcontextprotocol/clientInfo":{"name":"toolbridge","version":"0.1.0"},"#,
    r#""io.modelcontextprotocol/clientCapabilities":{}"#
);

impl PipeFloor {
    fn start(protocol: Protocol) -> PipeFloor {
        let mut child = std::process::Command::new(toolbridge_exe())
            .arg("example-server")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("spawn example server");
        let mut stdin = child.stdin.take().expect("stdin");
        let stdout = child.stdout.take().expect("stdout");
        let handshake = match protocol {
            Protocol::Initialize => concat!(
                r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","#,
                r#""capabilities":{},"clientInfo":{"name":"floor","version":"1"}}}"#,
                "\n"
            )
            .to_owned(),
            Protocol::Discover => format!(
                r#"{{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{{"_meta":{{{MODERN_META}}}}}}}"#
            ) + "\n",
        };
        stdin
            .write_all(handshake.as_bytes())
            .expect("write the handshake");
        let mut reader = BufReader::new(stdout);
        let mut line = String::new();
        reader.read_line(&mut line).expect("handshake response");
        assert!(line.contains("\"result\""), "handshake failed: {line}");
        if protocol == Protocol::Initialize {
            stdin
                .write_all(b"{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n")
                .expect("write initialized");
        }
        assert!(
            reader.buffer().is_empty(),
            "unexpected output after initialize"
        );
        let text = "x".repeat(100);
        let lines = (0..FLOOR_SLOTS)
            .map(|i| {
                let id = FIRST_ID + i;
                match protocol {
                    Protocol::Initialize => format!(
                        r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"echo","arguments":{{"text":"{text}"}}}}}}"#
                    ),
                    Protocol::Discover => format!(
                        r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"_meta":{{{MODERN_META},"progressToken":{i}}},"name":"echo","arguments":{{"text":"{text}"}}}}}}"#
                    ),
                }
                .into_bytes()
                .into_iter()
                .chain([b'\n'])
                .collect()
            })
            .collect();
        PipeFloor {
            child,
            stdin,
            stdout: reader.into_inner(),
            lines,
        }
    }

    fn run(&mut self, calls: u64, in_flight: u64) -> Run {
        let cpu_before = cpu_thread();
        let began = Instant::now();
        let mut sent_at = vec![began; FLOOR_SLOTS];
        let mut latencies = Vec::with_capacity(calls as usize);
        let mut errors = 0;
        let mut sent = 0u64;
        let mut out = Vec::with_capacity(64 * 1024);
        let send = |sent: &mut u64, out: &mut Vec<u8>, sent_at: &mut [Instant]| {
            let slot = (*sent as usize) % FLOOR_SLOTS;
            out.extend_from_slice(&self.lines[slot]);
            sent_at[slot] = Instant::now();
            *sent += 1;
        };
        while sent < in_flight.min(calls) {
            send(&mut sent, &mut out, &mut sent_at);
        }
        self.stdin.write_all(&out).expect("write requests");
        out.clear();
        let mut buf = vec![0u8; 256 * 1024];
        let mut filled = 0;
        let mut received = 0u64;
        while received < calls {
            let n = self
                .stdout
                .read(&mut buf[filled..])
                .expect("read responses");
            assert!(n > 0, "the example server closed its stdout");
            filled += n;
            let mut start = 0;
            while let Some(pos) = buf[start..filled].iter().position(|b| *b == b'\n') {
                let line = &buf[start..start + pos];
                match response_id(line) {
                    Some(id) if (FIRST_ID..FIRST_ID + FLOOR_SLOTS).contains(&id) => {
                        latencies.push(sent_at[id - FIRST_ID].elapsed());
                        if !line.windows(9).any(|w| w == b"\"result\":") {
                            errors += 1;
                        }
                    }
                    _ => errors += 1,
                }
                received += 1;
                start += pos + 1;
                if sent < calls {
                    send(&mut sent, &mut out, &mut sent_at);
                }
            }
            buf.copy_within(start..filled, 0);
            filled -= start;
            if filled == buf.len() {
                buf.resize(buf.len() * 2, 0);
            }
            if !out.is_empty() {
                self.stdin.write_all(&out).expect("write requests");
                out.clear();
            }
        }
        let wall = began.elapsed();
        latencies.sort_unstable();
        Run {
            calls,
            errors,
            wall,
            cpu: cpu_thread().saturating_sub(cpu_before),
            latencies,
        }
    }

    fn stop(mut self) {
        drop(self.stdin);
        let _ = self.child.wait();
    }
}

/// The id of a response line `{"jsonrpc":"2.0","id":N,...}`.
fn response_id(line: &[u8]) -> Option<usize> {
    let at = line.windows(5).position(|w| w == b"\"id\":")? + 5;
    let digits = line[at..].iter().take_while(|b| b.is_ascii_digit()).count();
    std::str::from_utf8(&line[at..at + digits])
        .ok()?
        .parse()
        .ok()
}

/// The pids of the example servers that are children of this process.
fn example_servers() -> BTreeSet<u32> {
    let me = std::process::id();
    let mut pids = BTreeSet::new();
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return pids;
    };
    for entry in entries.flatten() {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|s| s.parse::<u32>().ok())
        else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
            continue;
        };
        let Some(rest) = stat.rfind(')').map(|i| &stat[i + 1..]) else {
            continue;
        };
        let ppid = rest
            .split_whitespace()
            .nth(1)
            .and_then(|s| s.parse::<u32>().ok());
        if ppid == Some(me) && stat.contains("(toolbridge)") {
            pids.insert(pid);
        }
    }
    pids
}

/// The CPU a server process used over one run.
struct ServerCpu {
    pid: Option<u32>,
    before: Duration,
}

impl ServerCpu {
    fn start(pid: Option<u32>) -> ServerCpu {
        ServerCpu {
            pid,
            before: pid.map(process_cpu).unwrap_or_default(),
        }
    }

    /// µs per call (10 ms clock-tick resolution: meaningful over runs of a
    /// second or more), NaN when the server is unknown.
    fn us_per_call(&self, calls: u64) -> f64 {
        match self.pid {
            Some(pid) => {
                (process_cpu(pid).saturating_sub(self.before)).as_secs_f64() * 1e6 / calls as f64
            }
            None => f64::NAN,
        }
    }
}

/// utime + stime of process `pid`.
fn process_cpu(pid: u32) -> Duration {
    let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
        return Duration::ZERO;
    };
    let Some(rest) = stat.rfind(')').map(|i| &stat[i + 1..]) else {
        return Duration::ZERO;
    };
    // After the command: state(0) ppid(1) ... utime(11) stime(12).
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let ticks: u64 = fields
        .get(11..13)
        .map(|f| f.iter().filter_map(|s| s.parse::<u64>().ok()).sum())
        .unwrap_or(0);
    // SAFETY: sysconf has no preconditions.
    let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) }.max(1) as u64;
    Duration::from_nanos(ticks * 1_000_000_000 / hz)
}
