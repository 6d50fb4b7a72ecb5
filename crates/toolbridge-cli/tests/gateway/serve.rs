//! `toolbridge serve`, the gateway, run as the real binary in front of real
//! servers (the built-in example server as stdio children), with rmcp's own
//! client over real sockets on 127.0.0.1 and over stdio.

use crate::common;

use std::{
    io::BufRead as _,
    os::unix::process::CommandExt as _,
    process::{Child, Stdio},
    sync::{Arc, Mutex},
    time::Duration,
};

use common::{Sandbox, toolbridge, wait_until};
use rmcp::{
    RoleClient, ServiceExt as _,
    model::{CallToolRequestParams, CallToolResult},
    service::RunningService,
    transport::{
        StreamableHttpClientTransport, TokioChildProcess,
        streamable_http_client::StreamableHttpClientTransportConfig,
    },
};
use serde_json::json;

/// A running `toolbridge serve`, its URL and what it logged on stderr.
struct Served {
    child: Child,
    /// `http://127.0.0.1:PORT/mcp`
    url: String,
    stderr: Arc<Mutex<Vec<String>>>,
}

impl Served {
    /// Starts `toolbridge serve --listen 127.0.0.1:0 extra...` (another
    /// `--listen` in `extra` replaces it) on the
    /// sandbox's config and waits for its "listening on" line.
    fn start(sandbox: &Sandbox, extra: &[&str], env: &[(&str, &str)]) -> Served {
        let mut args = vec!["serve"];
        if !extra.contains(&"--listen") {
            args.extend(["--listen", "127.0.0.1:0"]);
        }
        args.extend_from_slice(extra);
        let mut cmd = sandbox.command(&args);
        cmd.env("HOME", sandbox.dir.path())
            .env("XDG_CONFIG_HOME", sandbox.dir.path())
            .env_remove("TOOLBRIDGE_GATEWAY_TOKEN")
            .envs(env.iter().copied())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .process_group(0);
        let mut child = cmd.spawn().expect("spawn toolbridge serve");
        let stderr = Arc::new(Mutex::new(Vec::new()));
        let (tx, rx) = std::sync::mpsc::channel();
        let lines = stderr.clone();
        let pipe = child.stderr.take().expect("stderr");
        std::thread::spawn(move || {
            for line in std::io::BufReader::new(pipe).lines().map_while(Result::ok) {
                if let Some((_, url)) = line.split_once("listening on ") {
                    let _ = tx.send(url.trim().to_owned());
                }
                lines.lock().unwrap().push(line);
            }
        });
        let url = rx
            .recv_timeout(Duration::from_secs(30))
            .unwrap_or_else(|_| {
                panic!(
                    "toolbridge serve never said where it listens:\n{}",
                    stderr.lock().unwrap().join("\n")
                )
            });
        Served { child, url, stderr }
    }

    /// `http://127.0.0.1:PORT` + `path`.
    fn at(&self, path: &str) -> String {
        self.url.trim_end_matches("/mcp").to_owned() + path
    }

    fn log(&self) -> String {
        self.stderr.lock().unwrap().join("\n")
    }

    /// The example servers running as the gateway's children.
    fn example_servers(&self) -> usize {
        let me = self.child.id().to_string();
        std::fs::read_dir("/proc")
            .unwrap()
            .filter_map(|e| e.ok()?.file_name().into_string().ok())
            .filter(|pid| pid.bytes().all(|b| b.is_ascii_digit()))
            .filter(|pid| {
                let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
                // pid (comm) state ppid ...
                let ppid = stat
                    .rsplit_once(") ")
                    .map(|(_, rest)| rest.split(' ').nth(1));
                let cmdline =
                    std::fs::read_to_string(format!("/proc/{pid}/cmdline")).unwrap_or_default();
                ppid.flatten() == Some(me.as_str()) && cmdline.contains("example-server")
            })
            .count()
    }
}

impl Drop for Served {
    fn drop(&mut self) {
        // SIGTERM: the gateway closes its servers; then make sure.
        let pid = self.child.id() as i32;
        // SAFETY: kill only sends a signal.
        unsafe { libc::kill(pid, libc::SIGTERM) };
        let exited = wait_until(Duration::from_secs(15), || {
            matches!(self.child.try_wait(), Ok(Some(_)))
        });
        if !exited {
            // SAFETY: killpg only sends a signal.
            unsafe { libc::killpg(pid, libc::SIGKILL) };
            let _ = self.child.wait();
        }
    }
}

/// A config of example servers named `names`.
fn examples(sandbox: &Sandbox, names: &[&str]) {
    let servers: serde_json::Map<String, serde_json::Value> = names
        .iter()
        .map(|n| {
            (
                (*n).to_owned(),
                json!({ "command": toolbridge(), "args": ["example-server"] }),
            )
        })
        .collect();
    sandbox.write_config(&json!({ "mcpServers": servers }));
}

async fn connect(url: &str, token: Option<&str>) -> RunningService<RoleClient, ()> {
    let mut config = StreamableHttpClientTransportConfig::with_uri(url.to_owned());
    if let Some(token) = token {
        config = config.auth_header(token.to_owned());
    }
    ().serve(StreamableHttpClientTransport::from_config(config))
        .await
        .expect("connect to the gateway")
}

async fn tool_names(client: &RunningService<RoleClient, ()>) -> Vec<String> {
    let mut names: Vec<String> = client
        .list_all_tools()
        .await
        .expect("tools/list")
        .into_iter()
        .map(|t| t.name.into_owned())
        .collect();
    names.sort();
    names
}

async fn echo(client: &RunningService<RoleClient, ()>, tool: &str, text: &str) -> CallToolResult {
    client
        .call_tool(
            CallToolRequestParams::new(tool.to_owned())
                .with_arguments(json!({ "text": text }).as_object().cloned().unwrap()),
        )
        .await
        .expect("tools/call")
}

fn text(result: &CallToolResult) -> String {
    result
        .content
        .iter()
        .filter_map(|c| c.as_text().map(|t| t.text.clone()))
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_upstream_keeps_its_tool_names_and_metrics_count_the_call() {
    let sandbox = Sandbox::new();
    examples(&sandbox, &["example"]);
    let served = Served::start(&sandbox, &[], &[]);
    let client = connect(&served.url, None).await;
    let names = tool_names(&client).await;
    assert!(names.contains(&"echo".to_owned()), "{names:?}");
    assert!(!names.iter().any(|n| n.contains("__")), "{names:?}");
    assert_eq!(
        text(&echo(&client, "echo", "through the gateway").await),
        "through the gateway"
    );

    let metrics = reqwest::get(served.at("/metrics"))
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(
        metrics.contains(r#"toolbridge_gateway_tool_calls_total{server="example",tool="echo",client="local",profile=""} 1"#),
        "{metrics}"
    );
    assert!(
        metrics.contains(r#"toolbridge_gateway_upstream_up{server="example"} 1"#),
        "{metrics}"
    );
    let health = reqwest::get(served.at("/healthz")).await.unwrap();
    assert_eq!(health.status(), 200);
    // One audit line for the call, without its arguments at the default level.
    let log = served.log();
    assert!(
        log.lines().any(|l| l.contains("tool call")
            && l.contains(r#"server="example""#)
            && l.contains(r#"tool="echo""#)
            && l.contains(r#"outcome="ok""#)),
        "{log}"
    );
    assert!(!log.contains("through the gateway"), "{log}");
    client.cancel().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn several_upstreams_are_prefixed_and_each_call_reaches_its_server() {
    let sandbox = Sandbox::new();
    examples(&sandbox, &["alpha", "beta.two"]);
    let served = Served::start(&sandbox, &[], &[]);
    let client = connect(&served.url, None).await;
    let names = tool_names(&client).await;
    assert!(names.contains(&"alpha__echo".to_owned()), "{names:?}");
    // The dot is not allowed by providers: replaced, and still routed.
    assert!(names.contains(&"beta_two__echo".to_owned()), "{names:?}");
    assert_eq!(
        text(&echo(&client, "beta_two__echo", "to beta").await),
        "to beta"
    );
    let log = served.log();
    assert!(
        log.lines()
            .any(|l| l.contains("tool call") && l.contains(r#"server="beta.two""#)),
        "{log}"
    );
    // `--server` serves a subset: one upstream, names unchanged.
    let only = Served::start(&sandbox, &["--server", "alpha"], &[]);
    let only_client = connect(&only.url, None).await;
    assert!(tool_names(&only_client).await.contains(&"echo".to_owned()));
    client.cancel().await.unwrap();
    only_client.cancel().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_clients_share_one_upstream_process() {
    let sandbox = Sandbox::new();
    examples(&sandbox, &["example"]);
    // Two worker threads: the multi-thread runtime, where the default on
    // a 2-core machine (one thread) runs the current-thread one.
    let served = Served::start(&sandbox, &["--threads", "2"], &[]);
    let first = connect(&served.url, None).await;
    let second = connect(&served.url, None).await;
    let (a, b) = tokio::join!(echo(&first, "echo", "one"), echo(&second, "echo", "two"));
    assert_eq!((text(&a), text(&b)), ("one".to_owned(), "two".to_owned()));
    assert_eq!(served.example_servers(), 1);
    first.cancel().await.unwrap();
    second.cancel().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_config_change_is_picked_up_without_a_restart() {
    let sandbox = Sandbox::new();
    examples(&sandbox, &["alpha"]);
    let served = Served::start(&sandbox, &[], &[]);
    let client = connect(&served.url, None).await;
    assert!(tool_names(&client).await.contains(&"echo".to_owned()));
    examples(&sandbox, &["alpha", "beta"]);
    let listing = &client;
    let both = common::poll_async(Duration::from_secs(20), || async move {
        let names = tool_names(listing).await;
        (names.contains(&"beta__echo".to_owned()) && names.contains(&"alpha__echo".to_owned()))
            .then_some(names)
    })
    .await;
    assert!(both.is_some(), "never saw beta__echo beside alpha__echo");
    assert_eq!(text(&echo(&client, "beta__echo", "new").await), "new");
    client.cancel().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_foreign_origin_or_host_is_refused() {
    let sandbox = Sandbox::new();
    examples(&sandbox, &["example"]);
    let served = Served::start(&sandbox, &[], &[]);
    let http = reqwest::Client::new();
    let initialize = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "t", "version": "1"}}});
    let post = |origin: Option<&str>, host: Option<&str>| {
        let mut request = http
            .post(&served.url)
            .header("accept", "application/json, text/event-stream")
            .json(&initialize);
        if let Some(origin) = origin {
            request = request.header("origin", origin);
        }
        if let Some(host) = host {
            request = request.header("host", host);
        }
        request.send()
    };
    assert_eq!(
        post(Some("http://evil.example.com"), None)
            .await
            .unwrap()
            .status(),
        403
    );
    assert_eq!(
        post(None, Some("evil.example.com")).await.unwrap().status(),
        403
    );
    let port = served
        .url
        .split(':')
        .nth(2)
        .unwrap()
        .trim_end_matches("/mcp")
        .to_owned();
    let own = format!("http://localhost:{port}");
    assert_eq!(post(Some(&own), None).await.unwrap().status(), 200);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_a_token_set_requests_need_it_and_it_is_never_logged() {
    const TOKEN: &str = "s3cret-gateway-token-4711";
    let sandbox = Sandbox::new();
    examples(&sandbox, &["example"]);
    let served = Served::start(
        &sandbox,
        &[],
        &[
            ("TOOLBRIDGE_GATEWAY_TOKEN", TOKEN),
            ("TOOLBRIDGE_LOG", "debug"),
        ],
    );
    let http = reqwest::Client::new();
    for auth in [None, Some("Bearer wrong"), Some(TOKEN)] {
        let mut request = http.get(served.at("/metrics"));
        if let Some(auth) = auth {
            request = request.header("authorization", auth);
        }
        assert_eq!(request.send().await.unwrap().status(), 401, "{auth:?}");
    }
    let allowed = http
        .get(served.at("/metrics"))
        .bearer_auth(TOKEN)
        .send()
        .await
        .unwrap();
    assert_eq!(allowed.status(), 200);
    let client = connect(&served.url, Some(TOKEN)).await;
    assert_eq!(
        text(&echo(&client, "echo", "authorised").await),
        "authorised"
    );
    client.cancel().await.unwrap();
    let log = served.log();
    assert!(log.contains("tool call"), "debug logs were on: {log}");
    assert!(
        !log.contains(TOKEN),
        "the token leaked into the logs:\n{log}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn off_loopback_a_token_is_generated_into_a_private_file() {
    use std::os::unix::fs::PermissionsExt as _;
    let sandbox = Sandbox::new();
    examples(&sandbox, &["example"]);
    let served = Served::start(&sandbox, &["--listen", "0.0.0.0:0"], &[]);
    let file = sandbox.dir.path().join("gateway-token");
    let mode = std::fs::metadata(&file).unwrap().permissions().mode();
    assert_eq!(mode & 0o777, 0o600);
    let token = std::fs::read_to_string(&file).unwrap().trim().to_owned();
    assert!(served.log().contains(&file.display().to_string()));
    let url = served.url.replace("0.0.0.0", "127.0.0.1");
    let http = reqwest::Client::new();
    let status = |auth: Option<String>| {
        let mut request = http.get(url.replace("/mcp", "/metrics"));
        if let Some(auth) = auth {
            request = request.bearer_auth(auth);
        }
        request.send()
    };
    assert_eq!(status(None).await.unwrap().status(), 401);
    assert_eq!(status(Some(token.clone())).await.unwrap().status(), 200);
    assert!(!served.log().contains(&token));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stdio_serves_the_same_tools() {
    let sandbox = Sandbox::new();
    examples(&sandbox, &["example"]);
    let mut cmd = tokio::process::Command::new(toolbridge());
    cmd.arg("--config")
        .arg(sandbox.config())
        .args(["serve", "--stdio"])
        .env("HOME", sandbox.dir.path())
        .env("XDG_CONFIG_HOME", sandbox.dir.path())
        .env("XDG_CACHE_HOME", sandbox.cache_home())
        .env("XDG_DATA_HOME", sandbox.data_home());
    let client = ().serve(TokioChildProcess::new(cmd).unwrap()).await.unwrap();
    assert!(tool_names(&client).await.contains(&"echo".to_owned()));
    assert_eq!(
        text(&echo(&client, "echo", "over stdio").await),
        "over stdio"
    );
    client.cancel().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn allow_and_deny_lists_limit_what_clients_see_and_call() {
    let sandbox = Sandbox::new();
    let server = json!({ "command": toolbridge(), "args": ["example-server"] });
    let mut allowed = server.clone();
    allowed["enabledTools"] = json!(["echo", "hello"]);
    allowed["disabledTools"] = json!(["hello"]);
    sandbox.write_config(&json!({ "mcpServers": { "example": allowed } }));
    let served = Served::start(&sandbox, &[], &[]);
    let client = connect(&served.url, None).await;
    assert_eq!(tool_names(&client).await, ["echo"]);
    let refused = client
        .call_tool(
            CallToolRequestParams::new("hello")
                .with_arguments(json!({ "name": "x" }).as_object().cloned().unwrap()),
        )
        .await;
    assert!(refused.is_err(), "{refused:?}");
    client.cancel().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_upstream_tool_list_change_reaches_the_clients() {
    let sandbox = Sandbox::new();
    let starts = sandbox.dir.path().join("starts");
    // The tool it adds would be withheld as new on a pinned server (that
    // is tests/gateway/gateway_pins.rs); this test is about the relay.
    sandbox.write_config(&json!({ "mcpServers": { "changing": {
        "command": common::python(),
        "args": [common::test_server("tool_cache.py")],
        "env": { "STARTS_FILE": starts, "TOOLS": "ping" },
        "pin": "off",
    } } }));
    let served = Served::start(&sandbox, &[], &[]);
    let (tx, mut changed) = tokio::sync::mpsc::unbounded_channel();
    let client = common::ListWatcher(tx)
        .serve(StreamableHttpClientTransport::from_uri(served.url.clone()))
        .await
        .unwrap();
    let before = client.list_all_tools().await.unwrap();
    assert!(!before.iter().any(|t| t.name == "added"));
    client
        .call_tool(CallToolRequestParams::new("change"))
        .await
        .unwrap();
    tokio::time::timeout(Duration::from_secs(10), changed.recv())
        .await
        .expect("no tools/list_changed from the gateway");
    let after = client.list_all_tools().await.unwrap();
    assert!(after.iter().any(|t| t.name == "added"), "{after:?}");
    client.cancel().await.unwrap();
}

/// A client that keeps the progress notifications it gets.
#[derive(Clone, Default)]
struct ProgressWatcher(Arc<Mutex<Vec<rmcp::model::ProgressNotificationParam>>>);

impl rmcp::ClientHandler for ProgressWatcher {
    async fn on_progress(
        &self,
        params: rmcp::model::ProgressNotificationParam,
        _context: rmcp::service::NotificationContext<RoleClient>,
    ) {
        self.0.lock().unwrap().push(params);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_client_gets_only_its_own_progress_under_its_own_token() {
    let sandbox = Sandbox::new();
    examples(&sandbox, &["example"]);
    let served = Served::start(&sandbox, &[], &[]);
    let (first, second) = (ProgressWatcher::default(), ProgressWatcher::default());
    let a = first
        .clone()
        .serve(StreamableHttpClientTransport::from_uri(served.url.clone()))
        .await
        .unwrap();
    let b = second
        .clone()
        .serve(StreamableHttpClientTransport::from_uri(served.url.clone()))
        .await
        .unwrap();
    let slow = |ms: u64| {
        CallToolRequestParams::new("slow")
            .with_arguments(json!({ "ms": ms }).as_object().cloned().unwrap())
    };
    // Concurrent calls on the one upstream connection: the upstream sees
    // two tokens of the gateway's, each client must get back its own.
    let (ra, rb) = tokio::join!(a.call_tool(slow(300)), b.call_tool(slow(500)));
    ra.unwrap();
    rb.unwrap();
    for (watcher, ms) in [(&first, 300.0), (&second, 500.0)] {
        let got = watcher.0.lock().unwrap().clone();
        assert!(!got.is_empty(), "no progress for the {ms} ms call");
        assert!(got.iter().all(|p| p.total == Some(ms)), "{ms}: {got:?}");
        // rmcp's client numbers its tokens from its own counter: the
        // gateway handed each notification back under the client's token.
        let tokens: std::collections::HashSet<_> =
            got.iter().map(|p| p.progress_token.clone()).collect();
        assert_eq!(tokens.len(), 1, "{tokens:?}");
    }
    a.cancel().await.unwrap();
    b.cancel().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_cancelling_a_call_cancels_it_upstream() {
    use rmcp::{
        model::{CallToolRequest, ClientRequest},
        service::PeerRequestOptions,
    };
    let sandbox = Sandbox::new();
    examples(&sandbox, &["example"]);
    // At debug level the gateway logs its servers' stderr, where the
    // example server says when a call was cancelled.
    let served = Served::start(&sandbox, &[], &[("TOOLBRIDGE_LOG", "debug")]);
    let watcher = ProgressWatcher::default();
    let client = watcher
        .clone()
        .serve(StreamableHttpClientTransport::from_uri(served.url.clone()))
        .await
        .unwrap();
    let call = CallToolRequestParams::new("slow")
        .with_arguments(json!({ "ms": 60_000 }).as_object().cloned().unwrap());
    let handle = client
        .peer()
        .send_request_with_option(
            ClientRequest::CallToolRequest(CallToolRequest::new(call)),
            PeerRequestOptions::no_options(),
        )
        .await
        .unwrap();
    // The first progress note: the upstream is running the call.
    assert!(
        common::poll_async(Duration::from_secs(10), || async {
            (!watcher.0.lock().unwrap().is_empty()).then_some(())
        })
        .await
        .is_some(),
        "the call never started"
    );
    handle
        .cancel(Some("the user gave up".into()))
        .await
        .unwrap();
    let cancelled = wait_until(Duration::from_secs(10), || {
        served
            .log()
            .lines()
            .any(|l| l.contains(r#"tool="slow""#) && l.contains(r#"outcome="cancelled""#))
            && served.log().contains("slow: cancelled after")
    });
    assert!(cancelled, "{}", served.log());
    client.cancel().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_2025_client_gets_a_session_and_a_2026_client_goes_stateless() {
    let sandbox = Sandbox::new();
    examples(&sandbox, &["example"]);
    let served = Served::start(&sandbox, &[], &[]);
    let http = reqwest::Client::new();
    let accept = "application/json, text/event-stream";
    let initialize = http
        .post(&served.url)
        .header("accept", accept)
        .json(
            &json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "t", "version": "1"}}}),
        )
        .send()
        .await
        .unwrap();
    assert_eq!(initialize.status(), 200);
    assert!(initialize.headers().contains_key("mcp-session-id"));

    let meta = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientInfo": {"name": "t", "version": "1"},
        "io.modelcontextprotocol/clientCapabilities": {},
    });
    // 2026-07-28 puts the method (and a tool's name) in headers too.
    let post = |method: &str, params: serde_json::Value| {
        let mut request = http
            .post(&served.url)
            .header("accept", accept)
            .header("mcp-protocol-version", "2026-07-28")
            .header("mcp-method", method);
        if let Some(name) = params["name"].as_str() {
            request = request.header("mcp-name", name);
        }
        request
            .json(&json!({"jsonrpc": "2.0", "id": 2, "method": method, "params": params}))
            .send()
    };
    let discover = post("server/discover", json!({ "_meta": meta }))
        .await
        .unwrap();
    assert_eq!(discover.status(), 200);
    assert!(!discover.headers().contains_key("mcp-session-id"));
    let body = discover.text().await.unwrap();
    assert!(
        body.contains(r#""2026-07-28""#) && body.contains("toolbridge-gateway"),
        "{body}"
    );
    // A call with no session at all.
    let call = post(
        "tools/call",
        json!({ "name": "echo", "arguments": { "text": "stateless" }, "_meta": meta }),
    )
    .await
    .unwrap();
    assert_eq!(call.status(), 200);
    let body = call.text().await.unwrap();
    assert!(body.contains("stateless"), "{body}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_2026_client_listening_hears_of_a_config_change() {
    let sandbox = Sandbox::new();
    examples(&sandbox, &["alpha"]);
    let served = Served::start(&sandbox, &[], &[]);
    let meta = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientInfo": {"name": "t", "version": "1"},
        "io.modelcontextprotocol/clientCapabilities": {},
    });
    let mut stream = reqwest::Client::new()
        .post(&served.url)
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2026-07-28")
        .header("mcp-method", "subscriptions/listen")
        .json(
            &json!({"jsonrpc": "2.0", "id": 7, "method": "subscriptions/listen",
            "params": { "notifications": { "toolsListChanged": true }, "_meta": meta }}),
        )
        .send()
        .await
        .unwrap();
    assert_eq!(stream.status(), 200);
    let mut seen = String::new();
    let mut read_until = async |needle: &str| {
        let found = tokio::time::timeout(Duration::from_secs(20), async {
            while !seen.contains(needle) {
                match stream.chunk().await.unwrap() {
                    Some(chunk) => seen.push_str(&String::from_utf8_lossy(&chunk)),
                    None => break,
                }
            }
        })
        .await;
        assert!(
            found.is_ok() && seen.contains(needle),
            "no {needle} in {seen}"
        );
    };
    read_until("notifications/subscriptions/acknowledged").await;
    examples(&sandbox, &["alpha", "beta"]);
    read_until("notifications/tools/list_changed").await;
}

/// A client that notes what the gateway tells it on its own: resource
/// updates (`updated URI`) and list changes (`prompts`, `resources`).
#[derive(Clone, Default)]
struct Told(Arc<Mutex<Vec<String>>>);

impl Told {
    fn count(&self, what: &str) -> usize {
        self.0.lock().unwrap().iter().filter(|w| *w == what).count()
    }

    /// Waits (30 s at most) until it was told `what` `n` times in all.
    async fn wait_for(&self, what: &str, n: usize) {
        let told = common::poll_async(Duration::from_secs(30), || async {
            (self.count(what) >= n).then_some(())
        })
        .await;
        assert!(
            told.is_some(),
            "never told {what:?} {n} times; told {:?}",
            self.0.lock().unwrap()
        );
    }
}

impl rmcp::ClientHandler for Told {
    async fn on_resource_updated(
        &self,
        params: rmcp::model::ResourceUpdatedNotificationParam,
        _context: rmcp::service::NotificationContext<RoleClient>,
    ) {
        self.0
            .lock()
            .unwrap()
            .push(format!("updated {}", params.uri));
    }

    async fn on_prompt_list_changed(
        &self,
        _context: rmcp::service::NotificationContext<RoleClient>,
    ) {
        self.0.lock().unwrap().push("prompts".to_owned());
    }

    async fn on_resource_list_changed(
        &self,
        _context: rmcp::service::NotificationContext<RoleClient>,
    ) {
        self.0.lock().unwrap().push("resources".to_owned());
    }
}

// resources/subscribe is legacy in rmcp 3.11, but 2025-11-25 clients use it.
#[allow(deprecated)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_resource_update_reaches_only_the_client_sessions_subscribed_to_it() {
    use rmcp::model::{SubscribeRequestParams, UnsubscribeRequestParams};
    let sandbox = Sandbox::new();
    // server-everything over stdio, with `tee` recording what the gateway
    // sends it.
    let record = sandbox.dir.path().join("upstream.jsonl");
    sandbox.write_config(&json!({ "mcpServers": { "everything": {
        "command": "sh",
        "args": ["-c", r#"tee -a "$0" | exec node "$1" stdio"#, record, common::everything_js()],
    } } }));
    let served = Served::start(&sandbox, &[], &[]);
    let connect = |told: &Told| {
        told.clone()
            .serve(StreamableHttpClientTransport::from_uri(served.url.clone()))
    };
    let (a, b, c) = (Told::default(), Told::default(), Told::default());
    let (client_a, client_b, client_c) = (
        connect(&a).await.unwrap(),
        connect(&b).await.unwrap(),
        connect(&c).await.unwrap(),
    );
    let (one, two) = (
        "demo://resource/dynamic/text/1",
        "demo://resource/dynamic/text/2",
    );
    let (updated_one, updated_two) = (format!("updated {one}"), format!("updated {two}"));
    client_a
        .subscribe(SubscribeRequestParams::new(one))
        .await
        .unwrap();
    client_b
        .subscribe(SubscribeRequestParams::new(two))
        .await
        .unwrap();
    // server-everything sends an update of each subscribed URI at once,
    // then every 5 s.
    client_a
        .call_tool(CallToolRequestParams::new("toggle-subscriber-updates"))
        .await
        .unwrap();
    // Two rounds each: a stray update of the first round would have come
    // before the second.
    a.wait_for(&updated_one, 2).await;
    b.wait_for(&updated_two, 2).await;
    assert_eq!(a.count(&updated_two), 0, "a never subscribed to {two}");
    assert_eq!(b.count(&updated_one), 0, "b never subscribed to {one}");
    assert_eq!(c.count(&updated_one) + c.count(&updated_two), 0);

    // a unsubscribes: nobody wants `one`, so the upstream is unsubscribed.
    client_a
        .unsubscribe(UnsubscribeRequestParams::new(one))
        .await
        .unwrap();
    let a_had = a.count(&updated_one);
    assert!(
        wait_until(Duration::from_secs(10), || {
            common::upstream_requests(&record, "resources/unsubscribe", one) == 1
        }),
        "the upstream was never unsubscribed from {one}"
    );
    // b takes `one`, c joins b on `two`: the upstream hears of `two` once.
    client_b
        .subscribe(SubscribeRequestParams::new(one))
        .await
        .unwrap();
    client_c
        .subscribe(SubscribeRequestParams::new(two))
        .await
        .unwrap();
    let b_had = b.count(&updated_one);
    b.wait_for(&updated_one, b_had + 2).await;
    c.wait_for(&updated_two, 1).await;
    assert_eq!(
        a.count(&updated_one),
        a_had,
        "a unsubscribed but still got updates"
    );
    assert_eq!(
        common::upstream_requests(&record, "resources/subscribe", two),
        1
    );

    // b goes away: `one` has nobody left, `two` still has c.
    client_b.cancel().await.unwrap();
    assert!(
        wait_until(Duration::from_secs(10), || {
            common::upstream_requests(&record, "resources/unsubscribe", one) == 2
        }),
        "the upstream was not unsubscribed from {one} when its last client went away"
    );
    let c_had = c.count(&updated_two);
    c.wait_for(&updated_two, c_had + 1).await;
    assert_eq!(
        common::upstream_requests(&record, "resources/unsubscribe", two),
        0
    );
    client_a.cancel().await.unwrap();
    client_c.cancel().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn upstream_prompt_and_resource_list_changes_reach_the_clients() {
    let sandbox = Sandbox::new();
    sandbox.write_config(&json!({ "mcpServers": { "lists": {
        "command": common::deps().join("py1/bin/python"),
        "args": [common::test_server("py_lists.py")],
    } } }));
    let served = Served::start(&sandbox, &[], &[]);
    let connect = |told: &Told| {
        told.clone()
            .serve(StreamableHttpClientTransport::from_uri(served.url.clone()))
    };
    let (a, b) = (Told::default(), Told::default());
    let (client_a, client_b) = (connect(&a).await.unwrap(), connect(&b).await.unwrap());
    let prompts = |client: &RunningService<RoleClient, Told>| {
        let client = client.peer().clone();
        async move {
            let listed = client.list_all_prompts().await.expect("prompts/list");
            listed.into_iter().map(|p| p.name).collect::<Vec<_>>()
        }
    };
    let resources = |client: &RunningService<RoleClient, Told>| {
        let client = client.peer().clone();
        async move {
            let listed = client.list_all_resources().await.expect("resources/list");
            listed
                .into_iter()
                .map(|r| r.uri.clone())
                .collect::<Vec<_>>()
        }
    };
    assert_eq!(prompts(&client_b).await, ["first"]);
    assert_eq!(resources(&client_b).await, ["note://first"]);

    // a changes the lists; b, which did nothing, is told too.
    client_a
        .call_tool(CallToolRequestParams::new("add_prompt"))
        .await
        .unwrap();
    for told in [&a, &b] {
        told.wait_for("prompts", 1).await;
    }
    assert_eq!(prompts(&client_b).await, ["first", "added"]);
    client_a
        .call_tool(CallToolRequestParams::new("add_resource"))
        .await
        .unwrap();
    for told in [&a, &b] {
        told.wait_for("resources", 1).await;
    }
    assert_eq!(resources(&client_b).await, ["note://first", "note://added"]);
    client_a.cancel().await.unwrap();
    client_b.cancel().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stateless_client_answers_an_older_upstreams_question_through_a_held_call() {
    // server-everything speaks 2025-11-25 and asks with elicitation/create
    // mid-call; the Python SDK 2.x client is stateless (2026-07-28): it can
    // only be asked in its call's result, and answers in its retry.
    let sandbox = Sandbox::new();
    sandbox.write_config(&json!({ "mcpServers": { "everything": {
        "command": "node", "args": [common::everything_js(), "stdio"],
    } } }));
    let served = Served::start(&sandbox, &[], &[]);
    let home = sandbox.dir.path();
    let out = std::process::Command::new(common::python())
        .arg(common::root().join("crates/toolbridge-cli/tests/interop/client.py"))
        .arg(json!({ "ask": { "name": "trigger-elicitation-request" } }).to_string())
        .args(["http", &served.url])
        .env("HOME", home)
        .env("XDG_CONFIG_HOME", home.join("config"))
        .env("XDG_CACHE_HOME", home.join("cache"))
        .env("XDG_DATA_HOME", home.join("data"))
        .env_remove("INTEROP_TOKEN")
        .stdin(Stdio::null())
        .output()
        .expect("run the Python client");
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    assert!(
        out.status.success(),
        "the Python client failed:\n{stderr}\ngateway:\n{}",
        served.log()
    );
    let seen: serde_json::Value = serde_json::from_str(stdout.lines().last().unwrap_or_default())
        .unwrap_or_else(|e| panic!("no JSON from the client ({e}): {stdout}\n{stderr}"));
    assert_eq!(
        seen["elicitations"],
        json!(["Please provide inputs for the following fields:"]),
        "{seen}"
    );
    assert_eq!(seen["isError"], false, "{seen}");
    let result = seen["result"].to_string();
    assert!(
        result.contains("py answer to Please provide inputs"),
        "the upstream never got the client's answer: {seen}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_2026_client_listening_gets_the_updates_of_the_resources_it_named() {
    let sandbox = Sandbox::new();
    sandbox.write_config(&json!({ "mcpServers": { "everything": {
        "command": "node", "args": [common::everything_js(), "stdio"],
    } } }));
    let served = Served::start(&sandbox, &[], &[]);
    let meta = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientInfo": {"name": "t", "version": "1"},
        "io.modelcontextprotocol/clientCapabilities": {},
    });
    let http = reqwest::Client::new();
    let post = |id: u32, method: &str, params: serde_json::Value| {
        let mut request = http
            .post(&served.url)
            .header("accept", "application/json, text/event-stream")
            .header("mcp-protocol-version", "2026-07-28")
            .header("mcp-method", method);
        if let Some(name) = params["name"].as_str() {
            request = request.header("mcp-name", name);
        }
        request
            .json(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}))
            .send()
    };
    let (one, two) = (
        "demo://resource/dynamic/text/1",
        "demo://resource/dynamic/text/2",
    );
    // Two streams, each naming one resource.
    let listen = |id: u32, uri: &str| {
        post(
            id,
            "subscriptions/listen",
            json!({ "notifications": { "resourceSubscriptions": [uri] }, "_meta": meta }),
        )
    };
    let mut streams = Vec::new();
    for (id, uri) in [(1, one), (2, two)] {
        let stream = listen(id, uri).await.unwrap();
        assert_eq!(stream.status(), 200);
        streams.push((stream, String::new()));
    }
    // Reads `stream` until `needle` has come `n` times.
    async fn read_until(stream: &mut (reqwest::Response, String), needle: &str, n: usize) {
        let (response, seen) = stream;
        let found = tokio::time::timeout(Duration::from_secs(30), async {
            while seen.matches(needle).count() < n {
                match response.chunk().await.unwrap() {
                    Some(chunk) => seen.push_str(&String::from_utf8_lossy(&chunk)),
                    None => break,
                }
            }
        })
        .await;
        assert!(
            found.is_ok() && seen.matches(needle).count() >= n,
            "{needle} not {n} times in {seen}"
        );
    }
    for stream in &mut streams {
        read_until(stream, "notifications/subscriptions/acknowledged", 1).await;
    }
    // server-everything sends an update of each subscribed URI at once,
    // then every 5 s.
    let toggled = post(
        3,
        "tools/call",
        json!({ "name": "toggle-subscriber-updates", "arguments": {}, "_meta": meta }),
    )
    .await
    .unwrap();
    assert_eq!(toggled.status(), 200);
    let (first, second) = streams.split_at_mut(1);
    // Two rounds each: a stray update of the first round would have come
    // before the second.
    read_until(&mut first[0], &format!(r#""uri":"{one}""#), 2).await;
    read_until(&mut second[0], &format!(r#""uri":"{two}""#), 2).await;
    assert!(!first[0].1.contains(two), "{}", first[0].1);
    assert!(!second[0].1.contains(one), "{}", second[0].1);
}

// resources/subscribe is legacy in rmcp 3.11, but 2025-11-25 clients use it.
#[allow(deprecated)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_subscription_is_renewed_when_its_servers_entry_changes() {
    use rmcp::model::SubscribeRequestParams;
    let sandbox = Sandbox::new();
    let everything = |generation: &str| {
        json!({ "mcpServers": { "everything": {
            "command": "node", "args": [common::everything_js(), "stdio"],
            "env": { "GENERATION": generation },
        } } })
    };
    sandbox.write_config(&everything("1"));
    let served = Served::start(
        &sandbox,
        &[],
        &[("TOOLBRIDGE_LOG", "warn,toolbridge_gateway=info")],
    );
    let told = Told::default();
    let client = told
        .clone()
        .serve(StreamableHttpClientTransport::from_uri(served.url.clone()))
        .await
        .unwrap();
    let uri = "demo://resource/dynamic/text/1";
    client
        .subscribe(SubscribeRequestParams::new(uri))
        .await
        .unwrap();
    // A new entry: the gateway replaces the server with a new process,
    // which knows nothing of the old one's subscriptions.
    sandbox.write_config(&everything("2"));
    assert!(
        wait_until(Duration::from_secs(20), || served
            .log()
            .contains("config changed")),
        "the gateway never saw the config change:\n{}",
        served.log()
    );
    // The new process sends updates of what it was subscribed to.
    client
        .call_tool(CallToolRequestParams::new("toggle-subscriber-updates"))
        .await
        .unwrap();
    told.wait_for(&format!("updated {uri}"), 1).await;
    client.cancel().await.unwrap();
}

// resources/subscribe is legacy in rmcp 3.11, but 2025-11-25 clients use it.
#[allow(deprecated)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_subscription_outlives_a_crash_of_its_upstream() {
    use rmcp::model::SubscribeRequestParams;
    let sandbox = Sandbox::new();
    sandbox.write_config(&json!({ "mcpServers": { "everything": {
        "command": "node", "args": [common::everything_js(), "stdio"],
    } } }));
    let served = Served::start(&sandbox, &[], &[]);
    let told = Told::default();
    let client = told
        .clone()
        .serve(StreamableHttpClientTransport::from_uri(served.url.clone()))
        .await
        .unwrap();
    let uri = "demo://resource/dynamic/text/1";
    client
        .subscribe(SubscribeRequestParams::new(uri))
        .await
        .unwrap();
    // The upstream dies (SIGKILL): the gateway starts it again on the next
    // call, and the pool subscribes the new process again.
    let gateway = served.child.id().to_string();
    let upstream = std::fs::read_dir("/proc")
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter(|pid| pid.bytes().all(|b| b.is_ascii_digit()))
        .find(|pid| {
            let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
            let ppid = stat
                .rsplit_once(") ")
                .and_then(|(_, r)| r.split(' ').nth(1));
            let cmdline =
                std::fs::read_to_string(format!("/proc/{pid}/cmdline")).unwrap_or_default();
            ppid == Some(gateway.as_str()) && cmdline.contains("server-everything")
        })
        .expect("server-everything runs as the gateway's child");
    let upstream: i32 = upstream.parse().unwrap();
    // SAFETY: kill only sends a signal.
    unsafe { libc::kill(upstream, libc::SIGKILL) };
    assert!(
        wait_until(Duration::from_secs(10), || !common::alive(upstream as u32)),
        "server-everything did not die"
    );
    // The first call may still meet the dead connection.
    let toggled = common::poll_async(Duration::from_secs(30), || async {
        let result = client
            .call_tool(CallToolRequestParams::new("toggle-subscriber-updates"))
            .await
            .ok()?;
        (result.is_error != Some(true)).then_some(())
    })
    .await;
    assert!(
        toggled.is_some(),
        "the upstream never came back:\n{}",
        served.log()
    );
    told.wait_for(&format!("updated {uri}"), 1).await;
    client.cancel().await.unwrap();
}
