//! Tool calls over streamable HTTP against the example server served in this
//! process by rmcp's `StreamableHttpService` (axum, on its own thread and
//! current-thread runtime), rounds interleaved:
//!
//! - a raw floor: precomputed JSON-RPC bodies POSTed with a pooled reqwest
//!   client, response bodies read as bytes, no JSON work on our side;
//! - the raw rmcp client as shipped (`StreamableHttpClientTransport::from_uri`:
//!   no idle-connection reuse, at most 16 POSTs at once), with its default
//!   `initialize` handshake and with the `server/discover` lifecycle;
//! - the rmcp client tuned (a pooled reqwest client, 64 POSTs at once), with
//!   `initialize` (sessions; answers are an SSE priming event, then the
//!   response) and with `server/discover`;
//! - toolbridge's full path, when `toolbridge::transport` can open an `http`
//!   server in this build (the HTTP transport is issue 3's work; until it
//!   lands this row says it is unavailable and the ratio lines are omitted).
//!
//! Client CPU is the process's CPU minus the server thread's CPU.
//!
//! `cargo bench -p toolbridge-cli --bench http [-- --rounds 5 --seq 2000 --conc 20000]`
//! (`HTTP_BENCH_SERVER_NAGLE=1` in the environment: a server without
//! TCP_NODELAY; words after the options keep only the rows whose label
//! contains one of them)

mod common;

use std::{sync::Arc, time::Duration};

use common::*;
use rmcp::{
    RoleClient, ServiceExt,
    model::{CallToolRequestParams, ProtocolVersion},
    service::{ClientLifecycleMode, ClientServiceExt, Peer, RunningService},
    transport::{
        StreamableHttpClientTransport,
        streamable_http_client::StreamableHttpClientTransportConfig,
        streamable_http_server::{
            StreamableHttpServerConfig, StreamableHttpService, session::local::LocalSessionManager,
        },
    },
};
use toolbridge::{
    config::{ServerSpec, TransportKind},
    example_server::ExampleServer,
    pool::{Pool, PoolOptions},
};

fn main() {
    let opts = Options::from_args(Options {
        rounds: 5,
        seq_calls: 2_000,
        conc_calls: 20_000,
        in_flight: 64,
        multi_thread: false,
        only: Vec::new(),
    });
    println!(
        "streamable HTTP benchmark: echo with a 100-byte argument against the example server \
         behind rmcp's StreamableHttpService (default config) in this process; {} rounds \
         interleaved, {} sequential calls and {} calls with {} in flight per run; current-thread \
         client runtime; medians over rounds",
        opts.rounds, opts.seq_calls, opts.conc_calls, opts.in_flight
    );
    let server = HttpServer::start();
    let url = server.url.clone();
    let server_clock = server.clock;
    let client_cpu = move || cpu_process().saturating_sub(server_clock.now());

    let rt = runtime(false);
    let args = echo_args();
    let mut variants: Vec<(String, Client)> = Vec::new();
    match rt.block_on(Floor::connect(&url)) {
        Ok(floor) => variants.push((
            "raw POST floor (pooled reqwest, no JSON work)".into(),
            Client::Floor(floor),
        )),
        Err(e) => println!("raw POST floor unavailable: {e}"),
    }
    let discover = || ClientLifecycleMode::Auto {
        preferred_versions: vec![ProtocolVersion::LATEST],
        legacy_version: Some(ProtocolVersion::LATEST_WITH_INITIALIZE),
    };
    variants.push((
        "rmcp 3.11 from_uri (initialize)".into(),
        rt.block_on(rmcp_client(&url, false, ClientLifecycleMode::Initialize)),
    ));
    variants.push((
        "rmcp 3.11 from_uri (discover)".into(),
        rt.block_on(rmcp_client(&url, false, discover())),
    ));
    variants.push((
        "rmcp 3.11 tuned: pooled, 64 POSTs (initialize)".into(),
        rt.block_on(rmcp_client(&url, true, ClientLifecycleMode::Initialize)),
    ));
    variants.push((
        "rmcp 3.11 tuned: pooled, 64 POSTs (discover)".into(),
        rt.block_on(rmcp_client(&url, true, discover())),
    ));
    // HOOK(http transport, issue 3): toolbridge's own path over HTTP. It is
    // measured as soon as `create_transport` can open an `http` server.
    let pool = Pool::new(
        [ServerSpec::remote("http", TransportKind::Http, url.clone())],
        PoolOptions::default(),
    );
    let toolbridge_ok = match rt.block_on(pool.connect("http")) {
        Ok(_) => {
            variants.push((
                "toolbridge full path".into(),
                Client::Toolbridge(pool.clone()),
            ));
            true
        }
        Err(e) => {
            println!("toolbridge full path over HTTP: unavailable in this build ({e})");
            false
        }
    };
    // Words after the options keep only the rows whose label has one of
    // them (`-- toolbridge "tuned: pooled, 64 POSTs (discover)"`, to profile).
    if !opts.only.is_empty() {
        variants.retain(|(label, _)| opts.only.iter().any(|word| label.contains(word.as_str())));
    }

    for (label, client) in &variants {
        let run = measure(&rt, client, &args, 500, 16, &client_cpu);
        assert_eq!(run.errors, 0, "{label} failed during warm-up");
    }

    let n = variants.len();
    let mut seq: Vec<Row> = (0..n).map(|_| Row::default()).collect();
    let mut conc: Vec<Row> = (0..n).map(|_| Row::default()).collect();
    for round in 0..opts.rounds {
        let order: Vec<usize> = (0..n).map(|i| (i + round) % n).collect();
        for &i in &order {
            seq[i].runs.push(measure(
                &rt,
                &variants[i].1,
                &args,
                opts.seq_calls,
                1,
                &client_cpu,
            ));
        }
        for &i in &order {
            conc[i].runs.push(measure(
                &rt,
                &variants[i].1,
                &args,
                opts.conc_calls,
                opts.in_flight,
                &client_cpu,
            ));
        }
        eprintln!("round {} of {} done", round + 1, opts.rounds);
    }
    fn rows<'a>(variants: &[(String, Client)], rows: &'a [Row]) -> Vec<(String, &'a Row)> {
        variants
            .iter()
            .zip(rows)
            .map(|((label, _), row)| (label.clone(), row))
            .collect()
    }
    print_table(
        "sequential, current-thread client runtime",
        &rows(&variants, &seq),
    );
    print_table(
        &format!(
            "{} in flight, current-thread client runtime",
            opts.in_flight
        ),
        &rows(&variants, &conc),
    );

    let find = |label: &str| variants.iter().position(|(l, _)| l == label);
    if let (true, Some(tb), Some(rmcp)) = (
        toolbridge_ok,
        find("toolbridge full path"),
        find("rmcp 3.11 from_uri (initialize)"),
    ) {
        let cps = |r: &Run| r.calls_per_sec();
        println!();
        println!(
            "RATIO seq toolbridge/rmcp={:.3}",
            ratio(&seq[tb], &seq[rmcp], cps)
        );
        println!(
            "RATIO conc toolbridge/rmcp={:.3}",
            ratio(&conc[tb], &conc[rmcp], cps)
        );
    }

    for (_, client) in variants {
        match client {
            Client::Rmcp { service, .. } => {
                let _ = rt.block_on(service.cancel());
            }
            Client::Toolbridge(pool) => rt.block_on(pool.close_all()),
            Client::Floor(_) => {}
        }
    }
    rt.block_on(pool.close_all());
    // The server thread ends with the process (open SSE streams would keep
    // a graceful shutdown waiting).
    drop(server);
}

enum Client {
    Floor(Floor),
    Rmcp {
        peer: Peer<RoleClient>,
        service: RunningService<RoleClient, ()>,
    },
    Toolbridge(Pool),
}

fn measure(
    rt: &tokio::runtime::Runtime,
    client: &Client,
    args: &toolbridge::rmcp_model::JsonObject,
    calls: u64,
    in_flight: u64,
    cpu: &(impl Fn() -> Duration + Clone),
) -> Run {
    match client {
        Client::Floor(floor) => {
            let floor = floor.clone();
            rt.block_on(drive(calls, in_flight, cpu.clone(), move || {
                let floor = floor.clone();
                async move { floor.call().await }
            }))
        }
        Client::Rmcp { peer, .. } => {
            let peer = peer.clone();
            let args = args.clone();
            rt.block_on(drive(calls, in_flight, cpu.clone(), move || {
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
            let registry = std::sync::Arc::new(rt.block_on(registry_for(pool, "http")));
            // Shared, so the one clone per call is toolbridge_call's (as
            // the rmcp client's is `with_arguments`).
            let args = std::sync::Arc::new(args.clone());
            rt.block_on(drive(calls, in_flight, cpu.clone(), move || {
                let registry = registry.clone();
                let args = args.clone();
                async move {
                    toolbridge_call(&registry, "mcp__http__echo", &args)
                        .await
                        .is_ok_and(|text| text.len() == 100)
                }
            }))
        }
    }
}

async fn rmcp_client(url: &str, tuned: bool, lifecycle: ClientLifecycleMode) -> Client {
    let transport = if tuned {
        let config = StreamableHttpClientTransportConfig::with_uri(url).max_concurrent_requests(64);
        StreamableHttpClientTransport::with_client(reqwest::Client::new(), config)
    } else {
        StreamableHttpClientTransport::from_uri(url)
    };
    let service = match lifecycle {
        ClientLifecycleMode::Initialize => ().serve(transport).await,
        lifecycle => ().serve_with_lifecycle(transport, lifecycle).await,
    }
    .expect("rmcp handshake over HTTP");
    Client::Rmcp {
        peer: service.peer().clone(),
        service,
    }
}

/// The raw floor over HTTP: precomputed protocol-2026-07-28 `tools/call`
/// bodies (stateless, so no session), POSTed with a pooled client.
#[derive(Clone)]
struct Floor {
    client: reqwest::Client,
    url: Arc<str>,
    bodies: Arc<Vec<bytes::Bytes>>,
    next: Arc<std::sync::atomic::AtomicUsize>,
}

impl Floor {
    async fn connect(url: &str) -> Result<Floor, String> {
        let text = "x".repeat(100);
        let bodies = (0..4096)
            .map(|i| {
                bytes::Bytes::from(format!(
                    concat!(
                        r#"{{"jsonrpc":"2.0","id":{},"method":"tools/call","params":{{"name":"echo","#,
                        r#""arguments":{{"text":"{}"}},"_meta":{{"io.modelcontextprotocol/protocolVersion":"2026-07-28","#,
                        r#""io.modelcontextprotocol/clientInfo":{{"name":"floor","version":"1"}},"#,
                        r#""io.modelcontextprotocol/clientCapabilities":{{}}}}}}}}"#
                    ),
                    i + 1,
                    text
                ))
            })
            .collect();
        let floor = Floor {
            client: reqwest::Client::new(),
            url: url.into(),
            bodies: Arc::new(bodies),
            next: Default::default(),
        };
        match floor.post().await {
            Ok((status, body))
                if status.is_success() && body.windows(9).any(|w| w == b"\"result\":") =>
            {
                Ok(floor)
            }
            Ok((status, body)) => Err(format!(
                "the server answered {status}: {}",
                String::from_utf8_lossy(&body)
            )),
            Err(e) => Err(e.to_string()),
        }
    }

    async fn post(&self) -> Result<(reqwest::StatusCode, bytes::Bytes), reqwest::Error> {
        let i = self.next.fetch_add(1, std::sync::atomic::Ordering::Relaxed) % self.bodies.len();
        let response = self
            .client
            .post(&*self.url)
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .header("mcp-protocol-version", "2026-07-28")
            .header("mcp-method", "tools/call")
            .header("mcp-name", "echo")
            .body(self.bodies[i].clone())
            .send()
            .await?;
        let status = response.status();
        Ok((status, response.bytes().await?))
    }

    async fn call(&self) -> bool {
        matches!(self.post().await, Ok((status, _)) if status.is_success())
    }
}

/// The example server behind rmcp's streamable HTTP service, on its own
/// thread with a current-thread runtime (so its CPU can be told apart).
struct HttpServer {
    url: String,
    clock: ThreadClock,
    /// Kept so the thread's CPU clock stays valid.
    _thread: std::thread::JoinHandle<()>,
}

impl HttpServer {
    fn start() -> HttpServer {
        let (ready_tx, ready_rx) = std::sync::mpsc::channel();
        let thread = std::thread::spawn(move || {
            let rt = runtime(false);
            rt.block_on(async move {
                // One server, cloned per session (a clone shares the tool
                // router; `new` would rebuild it and its schemas every time).
                let example = ExampleServer::new();
                let service = StreamableHttpService::new(
                    move || Ok(example.clone()),
                    Arc::new(LocalSessionManager::default()),
                    StreamableHttpServerConfig::default(),
                );
                let router = axum::Router::new().nest_service("/mcp", service);
                let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
                    .await
                    .expect("bind 127.0.0.1");
                let addr = listener.local_addr().expect("local addr");
                ready_tx
                    .send(format!("http://{addr}/mcp"))
                    .expect("report the url");
                // TCP_NODELAY, as production servers set it. Without it
                // (`HTTP_BENCH_SERVER_NAGLE=1`, as `axum::serve` does by
                // default) the server holds back each write after the first
                // of an answer until the client ACKs, which on a reused
                // connection is a delayed ACK (~40 ms): the pooled
                // `initialize` row shows it.
                let nagle = std::env::var_os("HTTP_BENCH_SERVER_NAGLE").is_some_and(|v| v == "1");
                use axum::serve::ListenerExt;
                let listener = listener.tap_io(move |tcp| {
                    let _ = tcp.set_nodelay(!nagle);
                });
                axum::serve(listener, router).await.expect("serve");
            });
        });
        let url = ready_rx.recv().expect("server url");
        let clock = ThreadClock::of(&thread);
        HttpServer {
            url,
            clock,
            _thread: thread,
        }
    }
}
