//! The gateway's traces in a real collector: Arize Phoenix (PyPI
//! `arize-phoenix`, .deps/phoenix, started by the test on free 127.0.0.1
//! ports) receives `toolbridge serve`'s spans over OTLP/HTTP, and the test
//! reads them back through Phoenix's own REST API: the gateway's span has
//! the client's trace id and the client's span as parent (sent in `_meta`,
//! and as the HTTP `traceparent` header), the upstream call is its child,
//! and the upstream (the example server behind `tee`, which records what
//! it is sent) got the upstream span's context in its request's `_meta`.
//! Every other request of a client has its span too (`tools/list`,
//! `prompts/get`, `resources/read`...), its upstream request a child, a
//! failed one an error. And a collector nobody listens at costs one
//! warning, never a call.

use crate::common;
use crate::gateway_support;

use std::{
    os::unix::process::CommandExt as _,
    path::{Path, PathBuf},
    process::{Child, Command, Stdio},
    time::Duration,
};

use serde_json::{Value, json};

use common::{deps, everything_js, poll_async, toolbridge, wait_until};
use gateway_support::{Gateway, RawClient, free_port};

/// Phoenix on a loaded 2-core machine took 2.5 minutes to answer.
const PHOENIX_START: Duration = Duration::from_secs(420);
/// How long spans may take to show in Phoenix once sent.
const SPANS_DEADLINE: Duration = Duration::from_secs(60);

/// The client's trace and span, as a W3C `traceparent`.
const CLIENT_TRACE: &str = "4bf92f3577b34da6a3ce929d0e0e4736";
const CLIENT_SPAN: &str = "00f067aa0ba902b7";
/// A second trace, sent in the HTTP header.
const HEADER_TRACE: &str = "0af7651916cd43dd8448eb211c80319c";
const HEADER_SPAN: &str = "b7ad6b7169203331";

/// An argument the spans must never carry.
const SECRET_ARGUMENT: &str = "argument-never-in-a-span-93c1";

/// Phoenix serving on `port` (OTLP/HTTP at `/v1/traces`, its REST API at
/// `/v1/...`), in its own process group, killed on drop.
struct Phoenix {
    child: Child,
    port: u16,
    _dir: tempfile::TempDir,
}

impl Phoenix {
    // The child is waited for in `Drop`, which clippy cannot see.
    #[allow(clippy::zombie_processes)]
    fn start() -> Phoenix {
        let program = deps().join("phoenix/bin/phoenix");
        assert!(
            program.exists(),
            "{} is missing: run scripts/setup-test-deps.sh",
            program.display()
        );
        let dir = tempfile::tempdir().expect("tempdir");
        let port = free_port();
        let log = std::fs::File::create(dir.path().join("phoenix.log")).expect("log");
        let child = Command::new(program)
            .arg("serve")
            .env("PHOENIX_HOST", "127.0.0.1")
            .env("PHOENIX_PORT", port.to_string())
            .env("PHOENIX_GRPC_PORT", free_port().to_string())
            .env("PHOENIX_WORKING_DIR", dir.path())
            .env("PHOENIX_TELEMETRY_ENABLED", "false")
            .env("PHOENIX_ALLOW_EXTERNAL_RESOURCES", "false")
            .env("PHOENIX_ALLOWED_SANDBOX_PROVIDERS", "NONE")
            .stdin(Stdio::null())
            .stdout(log.try_clone().expect("log"))
            .stderr(log)
            .process_group(0)
            .spawn()
            .expect("spawn phoenix");
        let phoenix = Phoenix {
            child,
            port,
            _dir: dir,
        };
        let up = wait_until(PHOENIX_START, || {
            std::net::TcpStream::connect(("127.0.0.1", port)).is_ok_and(|_| phoenix.healthy())
        });
        assert!(up, "Phoenix never answered; its log:\n{}", phoenix.log());
        phoenix
    }

    fn url(&self, path: &str) -> String {
        format!("http://127.0.0.1:{}{path}", self.port)
    }

    fn healthy(&self) -> bool {
        let path = self.url("/healthz");
        blocking_get(&path).is_some()
    }

    fn log(&self) -> String {
        std::fs::read_to_string(self._dir.path().join("phoenix.log")).unwrap_or_default()
    }

    /// The spans of trace `trace_id` in the default project, read through
    /// Phoenix's REST API.
    async fn spans_of(&self, trace_id: &str) -> Vec<Value> {
        let url = self.url("/v1/projects/default/spans?limit=1000");
        let Ok(response) = reqwest::get(&url).await else {
            return Vec::new();
        };
        let Ok(body) = response.json::<Value>().await else {
            return Vec::new();
        };
        body["data"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|s| s["context"]["trace_id"] == trace_id)
            .cloned()
            .collect()
    }

    /// Waits until trace `trace_id` has `count` spans; they.
    async fn wait_for_spans(&self, trace_id: &str, count: usize) -> Vec<Value> {
        let last = std::sync::Mutex::new(Vec::new());
        let found = poll_async(SPANS_DEADLINE, || async {
            let spans = self.spans_of(trace_id).await;
            *last.lock().unwrap() = spans.clone();
            (spans.len() >= count).then_some(spans)
        })
        .await;
        found.unwrap_or_else(|| {
            panic!(
                "Phoenix never had {count} spans of trace {trace_id}; it has {:#?}",
                last.lock().unwrap()
            )
        })
    }
}

impl Drop for Phoenix {
    fn drop(&mut self) {
        // SAFETY: killpg only sends a signal.
        unsafe { libc::killpg(self.child.id() as i32, libc::SIGKILL) };
        let _ = self.child.wait();
    }
}

/// A GET answered 2xx, from a thread of its own (the caller may be within
/// a runtime or not).
fn blocking_get(url: &str) -> Option<String> {
    let url = url.to_owned();
    std::thread::spawn(move || {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .ok()?;
        runtime.block_on(async {
            let response = reqwest::Client::new()
                .get(&url)
                .timeout(Duration::from_secs(5))
                .send()
                .await
                .ok()?;
            if !response.status().is_success() {
                return None;
            }
            response.text().await.ok()
        })
    })
    .join()
    .ok()
    .flatten()
}

/// The config: the example server (one upstream: its tools keep their
/// names) behind `tee -a RECORD`, a profile `team`, and `tracing`.
fn config(dir: &Path, record: &Path, tracing: Value) -> PathBuf {
    let path = dir.join("config.json");
    let command = format!(
        "/usr/bin/tee -a '{}' | exec '{}' example-server",
        record.display(),
        toolbridge()
    );
    let text = json!({
        "toolbridge": { "gateway": { "tracing": tracing } },
        "mcpServers": { "ex": { "command": "/bin/sh", "args": ["-c", command] } },
        "profiles": { "team": { "servers": ["ex"] } },
    });
    std::fs::write(&path, text.to_string()).expect("write config");
    path
}

/// `toolbridge --config CONFIG serve token create NAME --profile team`:
/// the token.
fn client_token(config: &Path, name: &str) -> String {
    let output = Command::new(toolbridge())
        .arg("--config")
        .arg(config)
        .args(["serve", "token", "create", name, "--profile", "team"])
        .env_remove("TOOLBRIDGE_CONFIG")
        .stdin(Stdio::null())
        .output()
        .expect("toolbridge serve token create");
    assert!(output.status.success(), "{output:?}");
    String::from_utf8(output.stdout).unwrap().trim().to_owned()
}

/// The `tools/call` requests the upstream was sent, as recorded.
fn upstream_calls(record: &Path) -> Vec<Value> {
    std::fs::read_to_string(record)
        .unwrap_or_default()
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|m| m["method"] == "tools/call")
        .collect()
}

/// `tools/call` of `echo` in `client`'s session with the HTTP `headers`.
async fn call_with_headers(
    client: &RawClient,
    token: &str,
    params: Value,
    headers: &[(&str, &str)],
) -> Value {
    let mut request = reqwest::Client::new()
        .post(&client.url)
        .bearer_auth(token)
        .header("accept", "application/json, text/event-stream")
        .header("content-type", "application/json")
        .header(
            "mcp-session-id",
            client.session.as_deref().expect("session"),
        )
        .header("mcp-protocol-version", "2025-11-25")
        .timeout(Duration::from_secs(30))
        .json(&json!({ "jsonrpc": "2.0", "id": 99, "method": "tools/call", "params": params }));
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    let response = request.send().await.expect("POST");
    assert_eq!(response.status(), 200);
    let text = response.text().await.expect("body");
    text.lines()
        .filter_map(|l| l.strip_prefix("data:"))
        .filter_map(|d| serde_json::from_str::<Value>(d.trim()).ok())
        .find(|v| v["id"] == 99)
        .or_else(|| serde_json::from_str(&text).ok())
        .unwrap_or_else(|| panic!("no answer in {text}"))
}

/// The one span of `spans` whose parent is the span `parent`.
fn child_of<'a>(spans: &'a [Value], parent: &str) -> &'a Value {
    let children: Vec<&Value> = spans.iter().filter(|s| s["parent_id"] == parent).collect();
    assert_eq!(children.len(), 1, "one child of {parent} in {spans:#?}");
    children[0]
}

/// Checks the gateway's two spans of the trace `trace` the client's span
/// `parent` began, and the upstream request `sent` of that call.
fn check_trace(spans: &[Value], trace: &str, parent: &str, sent: &Value) {
    assert_eq!(spans.len(), 2, "{spans:#?}");
    // The gateway's span continues the client's trace under its span.
    let request = child_of(spans, parent);
    assert_eq!(request["context"]["trace_id"], trace, "{request:#}");
    // The upstream call is its child.
    let upstream = child_of(spans, request["context"]["span_id"].as_str().unwrap());
    assert_eq!(upstream["context"]["trace_id"], trace, "{upstream:#}");
    // Only the request span names the client (the upstream span is the
    // gateway's own call).
    assert!(
        upstream["attributes"]["toolbridge.client"].is_null(),
        "{upstream:#}"
    );
    for span in [request, upstream] {
        let attributes = &span["attributes"];
        assert_eq!(attributes["toolbridge.server"], "ex", "{span:#}");
        assert_eq!(attributes["toolbridge.tool"], "echo", "{span:#}");
        assert_eq!(attributes["toolbridge.outcome"], "ok", "{span:#}");
        assert_eq!(attributes["mcp.method.name"], "tools/call", "{span:#}");
        let text = span.to_string();
        assert!(
            !text.contains(SECRET_ARGUMENT),
            "an argument in a span: {text}"
        );
        assert!(!text.contains("tbc_"), "a token in a span: {text}");
    }
    assert_eq!(request["attributes"]["toolbridge.client"], "alice");
    assert_eq!(request["attributes"]["toolbridge.client.kind"], "token");
    assert_eq!(request["attributes"]["toolbridge.profile"], "team");
    // The upstream got the upstream span's context in `_meta`.
    let upstream_span = upstream["context"]["span_id"].as_str().unwrap();
    let traceparent = sent["params"]["_meta"]["traceparent"]
        .as_str()
        .unwrap_or_else(|| panic!("no traceparent sent upstream: {sent:#}"));
    assert_eq!(
        traceparent,
        format!("00-{trace}-{upstream_span}-01"),
        "{sent:#}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn phoenix_receives_the_gateways_spans_under_the_clients_trace() {
    let phoenix = Phoenix::start();
    let dir = tempfile::tempdir().unwrap();
    let record = dir.path().join("upstream.jsonl");
    let config = config(
        dir.path(),
        &record,
        json!({ "otlpEndpoint": phoenix.url("") }),
    );
    let token = client_token(&config, "alice");
    // Spans leave in batches every 200 ms here (the SDK's
    // OTEL_BSP_SCHEDULE_DELAY) instead of 5 s.
    let gateway = Gateway::start_with_env(
        &config,
        dir.path(),
        &[],
        Some(gateway_support::TOKEN),
        &[
            ("OTEL_BSP_SCHEDULE_DELAY", "200"),
            // The audit lines as JSON, checked below.
            ("TOOLBRIDGE_LOG_FORMAT", "json"),
        ],
    );
    let url = gateway.url.replace("/mcp", "/mcp/team");
    let mut client = RawClient::with_token(&url, &token);
    client.initialize().await;

    // The client's context in `_meta`.
    let answer = client
        .request(
            "tools/call",
            json!({
                "name": "echo",
                "arguments": { "text": SECRET_ARGUMENT },
                "_meta": {
                    "traceparent": format!("00-{CLIENT_TRACE}-{CLIENT_SPAN}-01"),
                    "tracestate": "client=1",
                },
            }),
        )
        .await;
    assert_eq!(answer.status, 200, "{answer:?}");
    assert!(
        answer.body.as_ref().unwrap()["result"].is_object(),
        "{answer:?}\n{}",
        gateway.log()
    );
    let spans = phoenix.wait_for_spans(CLIENT_TRACE, 2).await;
    let calls = upstream_calls(&record);
    assert_eq!(calls.len(), 1, "{calls:#?}");
    check_trace(&spans, CLIENT_TRACE, CLIENT_SPAN, &calls[0]);
    assert_eq!(calls[0]["params"]["_meta"]["tracestate"], "client=1");

    // The client's context in the HTTP header.
    let header = format!("00-{HEADER_TRACE}-{HEADER_SPAN}-01");
    let answer = call_with_headers(
        &client,
        &token,
        json!({ "name": "echo", "arguments": { "text": SECRET_ARGUMENT } }),
        &[("traceparent", &header)],
    )
    .await;
    assert!(answer["result"].is_object(), "{answer}");
    let spans = phoenix.wait_for_spans(HEADER_TRACE, 2).await;
    let calls = upstream_calls(&record);
    assert_eq!(calls.len(), 2, "{calls:#?}");
    check_trace(&spans, HEADER_TRACE, HEADER_SPAN, &calls[1]);

    // One JSON audit line per call: who, through which profile, what, how
    // it went, how long; never the argument or the token.
    let audited = |log: &str| -> Vec<Value> {
        log.lines()
            .filter_map(|l| serde_json::from_str::<Value>(l).ok())
            .filter(|l| l["target"] == "toolbridge::audit" && l["message"] == "tool call")
            .collect()
    };
    let lines = poll_async(SPANS_DEADLINE, || async {
        let lines = audited(&gateway.log());
        (lines.len() >= 2).then_some(lines)
    })
    .await
    .unwrap_or_else(|| panic!("no two JSON audit lines in:\n{}", gateway.log()));
    assert_eq!(lines.len(), 2, "{lines:#?}");
    for line in &lines {
        assert_eq!(line["client"], "alice", "{line}");
        assert_eq!(line["client_kind"], "token", "{line}");
        assert_eq!(line["client_profile"], "team", "{line}");
        assert_eq!(line["profile"], "team", "{line}");
        assert_eq!(line["server"], "ex", "{line}");
        assert_eq!(line["tool"], "echo", "{line}");
        assert_eq!(line["outcome"], "ok", "{line}");
        assert!(
            line["duration_ms"].as_f64().is_some_and(|d| d > 0.0),
            "{line}"
        );
    }
    let log = gateway.log();
    assert!(!log.contains(SECRET_ARGUMENT), "an argument logged: {log}");
    assert!(!log.contains(&token), "a token logged: {log}");
}

/// The config: server-everything (its prompts and resources) over stdio
/// behind `tee -a RECORD` as `ev`, a profile `team`, tracing to `phoenix`.
fn everything_config(dir: &Path, record: &Path, phoenix: &Phoenix) -> PathBuf {
    let path = dir.join("config.json");
    let command = format!(
        "/usr/bin/tee -a '{}' | exec node '{}' stdio",
        record.display(),
        everything_js().display()
    );
    let text = json!({
        "toolbridge": { "gateway": { "tracing": { "otlpEndpoint": phoenix.url("") } } },
        "mcpServers": { "ev": { "command": "/bin/sh", "args": ["-c", command] } },
        "profiles": { "team": { "servers": ["ev"] } },
    });
    std::fs::write(&path, text.to_string()).expect("write config");
    path
}

/// The trace id of the `n`th request of the test below (its client span is
/// [`CLIENT_SPAN`]).
fn trace_of(n: u8) -> String {
    format!("5ac0ffee{n:024x}")
}

/// Checks the gateway's span of a client request of `method` under the
/// client's span in `spans` (one trace's), made by alice through the team
/// profile; the span.
fn request_span<'a>(spans: &'a [Value], method: &str, name: &str) -> &'a Value {
    let span = child_of(spans, CLIENT_SPAN);
    assert_eq!(span["name"], name, "{span:#}");
    let attributes = &span["attributes"];
    assert_eq!(attributes["mcp.method.name"], method, "{span:#}");
    assert_eq!(attributes["toolbridge.client"], "alice", "{span:#}");
    assert_eq!(attributes["toolbridge.client.kind"], "token", "{span:#}");
    assert_eq!(attributes["toolbridge.profile"], "team", "{span:#}");
    assert!(!span.to_string().contains("tbc_"), "a token in {span:#}");
    span
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_request_of_a_client_has_its_span_and_a_failed_one_is_an_error() {
    let phoenix = Phoenix::start();
    let dir = tempfile::tempdir().unwrap();
    let record = dir.path().join("upstream.jsonl");
    let config = everything_config(dir.path(), &record, &phoenix);
    let token = client_token(&config, "alice");
    let gateway = Gateway::start_with_env(
        &config,
        dir.path(),
        &[],
        Some(gateway_support::TOKEN),
        &[("OTEL_BSP_SCHEDULE_DELAY", "200")],
    );
    let url = gateway.url.replace("/mcp", "/mcp/team");
    let mut client = RawClient::with_token(&url, &token);
    client.initialize().await;
    let meta = |n: u8| json!({ "traceparent": format!("00-{}-{CLIENT_SPAN}-01", trace_of(n)) });
    let requests = [
        ("tools/list", json!({ "_meta": meta(1) })),
        ("prompts/list", json!({ "_meta": meta(2) })),
        (
            "prompts/get",
            json!({ "name": "simple-prompt", "_meta": meta(3) }),
        ),
        (
            "resources/read",
            json!({ "uri": "demo://resource/static/document/architecture.md", "_meta": meta(4) }),
        ),
        (
            "prompts/get",
            json!({ "name": "no-such-prompt", "_meta": meta(5) }),
        ),
    ];
    let mut answers = Vec::new();
    for (method, params) in requests {
        let answer = client.request(method, params).await;
        assert_eq!(answer.status, 200, "{method}: {answer:?}");
        answers.push(answer.body.unwrap_or_else(|| panic!("{method}: no answer")));
    }
    for (n, answer) in answers[..4].iter().enumerate() {
        assert!(
            answer["result"].is_object(),
            "request {}: {answer:#}",
            n + 1
        );
    }
    assert!(answers[4]["error"].is_object(), "{:#}", answers[4]);

    // Answered by the gateway itself: one span each.
    let spans = phoenix.wait_for_spans(&trace_of(1), 1).await;
    let list = request_span(&spans, "tools/list", "tools/list");
    assert_eq!(list["status_code"], "OK", "{list:#}");
    let spans = phoenix.wait_for_spans(&trace_of(2), 1).await;
    request_span(&spans, "prompts/list", "prompts/list");

    // Forwarded: the upstream request is the request span's child and
    // carries its context to the server.
    for (n, method, name) in [
        (3, "prompts/get", "prompts/get simple-prompt"),
        (4, "resources/read", "resources/read"),
    ] {
        let spans = phoenix.wait_for_spans(&trace_of(n), 2).await;
        let request = request_span(&spans, method, name);
        assert_eq!(request["status_code"], "OK", "{request:#}");
        assert_eq!(
            request["attributes"]["toolbridge.server"], "ev",
            "{request:#}"
        );
        let upstream = child_of(&spans, request["context"]["span_id"].as_str().unwrap());
        assert_eq!(
            upstream["attributes"]["mcp.method.name"], method,
            "{upstream:#}"
        );
        assert_eq!(
            upstream["attributes"]["toolbridge.server"], "ev",
            "{upstream:#}"
        );
        assert_eq!(
            upstream["attributes"]["toolbridge.outcome"], "ok",
            "{upstream:#}"
        );
        let traceparent = format!(
            "00-{}-{}-01",
            trace_of(n),
            upstream["context"]["span_id"].as_str().unwrap()
        );
        let sent: Vec<Value> = std::fs::read_to_string(&record)
            .unwrap_or_default()
            .lines()
            .filter_map(|l| serde_json::from_str::<Value>(l).ok())
            .filter(|m| m["method"] == method && m["params"]["_meta"]["traceparent"] == traceparent)
            .collect();
        assert_eq!(sent.len(), 1, "{method}: the upstream got no {traceparent}");
    }
    let spans = phoenix.wait_for_spans(&trace_of(3), 2).await;
    let request = request_span(&spans, "prompts/get", "prompts/get simple-prompt");
    assert_eq!(
        request["attributes"]["gen_ai.prompt.name"], "simple-prompt",
        "{request:#}"
    );
    let spans = phoenix.wait_for_spans(&trace_of(4), 2).await;
    let request = request_span(&spans, "resources/read", "resources/read");
    assert_eq!(
        request["attributes"]["mcp.resource.uri"],
        "demo://resource/static/document/architecture.md",
        "{request:#}"
    );

    // A request the gateway refuses: its span is an error with the
    // JSON-RPC error's code and message.
    let spans = phoenix.wait_for_spans(&trace_of(5), 1).await;
    let failed = request_span(&spans, "prompts/get", "prompts/get no-such-prompt");
    assert_eq!(failed["status_code"], "ERROR", "{failed:#}");
    assert_eq!(
        failed["attributes"]["toolbridge.outcome"], "failed",
        "{failed:#}"
    );
    assert_eq!(
        failed["attributes"]["rpc.response.status_code"],
        answers[4]["error"]["code"].to_string(),
        "{failed:#}"
    );
    let message = answers[4]["error"]["message"].as_str().unwrap();
    assert_eq!(failed["status_message"], message, "{failed:#}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn spans_still_queued_are_sent_when_the_gateway_stops() {
    let phoenix = Phoenix::start();
    let dir = tempfile::tempdir().unwrap();
    let record = dir.path().join("upstream.jsonl");
    let config = config(
        dir.path(),
        &record,
        json!({ "otlpEndpoint": phoenix.url("") }),
    );
    let token = client_token(&config, "alice");
    // No batch leaves on its own within the test: only the shutdown's.
    let gateway = Gateway::start_with_env(
        &config,
        dir.path(),
        &[],
        Some(gateway_support::TOKEN),
        &[("OTEL_BSP_SCHEDULE_DELAY", "3600000")],
    );
    let url = gateway.url.replace("/mcp", "/mcp/team");
    let mut client = RawClient::with_token(&url, &token);
    client.initialize().await;
    let answer = client
        .request(
            "tools/call",
            json!({
                "name": "echo",
                "arguments": { "text": SECRET_ARGUMENT },
                "_meta": { "traceparent": format!("00-{CLIENT_TRACE}-{CLIENT_SPAN}-01") },
            }),
        )
        .await;
    assert_eq!(answer.status, 200, "{answer:?}");
    assert!(
        phoenix.spans_of(CLIENT_TRACE).await.is_empty(),
        "sent before the shutdown"
    );
    // SIGTERM: the gateway closes its servers, then sends its spans.
    // SAFETY: kill only sends a signal.
    unsafe { libc::kill(gateway.pid() as i32, libc::SIGTERM) };
    let spans = phoenix.wait_for_spans(CLIENT_TRACE, 2).await;
    let calls = upstream_calls(&record);
    assert_eq!(calls.len(), 1, "{calls:#?}");
    check_trace(&spans, CLIENT_TRACE, CLIENT_SPAN, &calls[0]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_collector_nobody_listens_at_is_one_warning_and_calls_go_on() {
    let dir = tempfile::tempdir().unwrap();
    let record = dir.path().join("upstream.jsonl");
    let nobody = format!("http://127.0.0.1:{}", free_port());
    let config = config(dir.path(), &record, json!({ "otlpEndpoint": nobody }));
    let gateway = Gateway::start_with_env(
        &config,
        dir.path(),
        &[],
        Some(gateway_support::TOKEN),
        &[
            ("OTEL_BSP_SCHEDULE_DELAY", "100"),
            // Each failed export is a debug line: the test counts them.
            (
                "TOOLBRIDGE_LOG",
                "info,toolbridge_gateway::tracing_export=debug",
            ),
        ],
    );
    let mut client = RawClient::new(&gateway.url);
    client.initialize().await;
    let count = |what: &str| gateway.log().lines().filter(|l| l.contains(what)).count();
    let failed = || count("an OTLP export failed");
    for round in 1..=3 {
        let answer = client.call("echo", json!({ "text": "on" })).await;
        assert_eq!(answer.status, 200, "{answer:?}");
        assert_eq!(
            answer.body.as_ref().unwrap()["result"]["content"][0]["text"],
            "on",
            "{answer:?}"
        );
        // This round's spans are exported (and refused) before the next.
        let exported = wait_until(Duration::from_secs(60), || failed() >= round);
        assert!(
            exported,
            "round {round}: no failed export; log:\n{}",
            gateway.log()
        );
    }
    assert_eq!(upstream_calls(&record).len(), 3);
    assert_eq!(
        count("cannot send traces to the OTLP collector"),
        1,
        "one warning for {} failed exports:\n{}",
        failed(),
        gateway.log()
    );
}
