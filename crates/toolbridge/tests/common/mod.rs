//! Shared fixtures for the transport tests: real third-party servers started
//! from `.deps/` (installed by `scripts/setup-test-deps.sh`), an in-process
//! rmcp streamable HTTP server that can be killed and restarted, and a client
//! made through `create_transport`.
//!
//! Every server binds 127.0.0.1 on a port the OS picks and says which; tests
//! wait for that (and for other output) with deadlines, never with sleeps.
//! Every process is killed with its whole group when its handle drops.

#![allow(dead_code)]

pub mod fixtures;
pub mod reference;
pub mod rmcp_server;
pub mod wait;

use std::{
    path::PathBuf,
    process::Stdio,
    sync::{Arc, Mutex},
    time::{Duration, Instant},
};

use rmcp::{
    RoleClient, ServiceExt,
    model::{CallToolRequest, CallToolRequestParams, ClientRequest, ProtocolVersion, ServerResult},
    service::{
        ClientInitializeError, ClientLifecycleMode, ClientServiceExt, PeerRequestOptions,
        RequestHandle, RunningService, ServiceError,
    },
};
use serde_json::json;
use tokio::{
    io::{AsyncBufReadExt, AsyncRead, BufReader},
    process::{Child, Command},
    sync::Notify,
};
use toolbridge::{
    config::{RemoteSpec, ServerSpec, TransportKind, TransportSpec},
    process::ProcessTracker,
    transport::{AnyTransport, TransportContext, TransportError, create_transport},
};

/// How long a server may take to start listening.
pub const START_TIMEOUT: Duration = Duration::from_secs(60);
/// A deadline for things that should happen promptly.
pub const SOON: Duration = Duration::from_secs(20);

/// The workspace's `.deps` directory; panics with what to run if it is missing.
pub fn deps() -> PathBuf {
    let deps = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../.deps");
    let ready = deps
        .join("node/node_modules/@modelcontextprotocol/server-everything")
        .is_dir()
        && deps.join("py2/bin/python").is_file()
        && deps.join("py1/bin/python").is_file();
    assert!(
        ready,
        "test dependencies missing in {}: run scripts/setup-test-deps.sh",
        deps.display()
    );
    deps
}

fn servers_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/servers")
}

/// A server process: its output lines are kept so tests can wait for them.
pub struct ServerProcess {
    child: Child,
    /// The port it reported listening on.
    pub port: u16,
    output: Arc<Log>,
}

/// Lines written by a server (or recorded by an in-process one), which tests
/// can wait for.
#[derive(Default)]
pub struct Log {
    lines: Mutex<Vec<String>>,
    changed: Notify,
}

impl Log {
    /// Adds a line and wakes the waiters.
    pub fn push(&self, line: impl Into<String>) {
        let line = line.into();
        self.lines.lock().unwrap().push(line);
        self.changed.notify_waiters();
    }

    /// Waits until a line containing `needle` has been written.
    pub async fn wait_for(&self, needle: &str, timeout: Duration) -> Option<String> {
        tokio::time::timeout(timeout, async {
            loop {
                let changed = self.changed.notified();
                tokio::pin!(changed);
                changed.as_mut().enable();
                if let Some(line) = self
                    .lines
                    .lock()
                    .unwrap()
                    .iter()
                    .find(|l| l.contains(needle))
                {
                    return line.clone();
                }
                changed.await;
            }
        })
        .await
        .ok()
    }

    /// All lines so far.
    pub fn lines(&self) -> Vec<String> {
        self.lines.lock().unwrap().clone()
    }
}

fn drain(stream: impl AsyncRead + Unpin + Send + 'static, output: Arc<Log>) {
    tokio::spawn(async move {
        let mut lines = BufReader::new(stream).lines();
        while let Ok(Some(line)) = lines.next_line().await {
            output.push(line);
        }
    });
}

impl ServerProcess {
    /// Starts `command` in its own process group and waits for `LISTENING <port>`.
    pub async fn start(mut command: Command) -> ServerProcess {
        command
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .process_group(0)
            .kill_on_drop(true);
        let mut child = command.spawn().expect("spawn test server");
        let output = Arc::new(Log::default());
        drain(child.stdout.take().unwrap(), output.clone());
        drain(child.stderr.take().unwrap(), output.clone());
        let Some(line) = output.wait_for("LISTENING ", START_TIMEOUT).await else {
            let lines = output.lines.lock().unwrap().join("\n");
            panic!("server did not start listening within {START_TIMEOUT:?}; output:\n{lines}");
        };
        let port = line
            .rsplit(' ')
            .next()
            .and_then(|p| p.trim().parse().ok())
            .expect("LISTENING line has a port");
        ServerProcess {
            child,
            port,
            output,
        }
    }

    /// `http://127.0.0.1:<port><path>`
    pub fn url(&self, path: &str) -> String {
        format!("http://127.0.0.1:{}{path}", self.port)
    }

    /// Waits until the server has written a line containing `needle`.
    pub async fn wait_for_line(&self, needle: &str, timeout: Duration) -> bool {
        self.output.wait_for(needle, timeout).await.is_some()
    }

    /// Everything the server wrote so far.
    pub fn output(&self) -> String {
        self.output.lines.lock().unwrap().join("\n")
    }

    /// Kills the server's whole process group at once (SIGKILL).
    pub fn kill(&mut self) {
        if let Some(pid) = self.child.id() {
            // SAFETY: killpg only sends a signal.
            unsafe {
                libc::killpg(pid as libc::pid_t, libc::SIGKILL);
            }
        }
    }
}

impl Drop for ServerProcess {
    fn drop(&mut self) {
        self.kill();
    }
}

/// `@modelcontextprotocol/server-everything` in `mode` (`sse` or
/// `streamableHttp`), bound to 127.0.0.1.
pub async fn everything(mode: &str) -> ServerProcess {
    let deps = deps();
    let mut command = Command::new("node");
    command
        .arg("--require")
        .arg(servers_dir().join("listen_localhost.cjs"))
        .arg(deps.join("node/node_modules/@modelcontextprotocol/server-everything/dist/index.js"))
        .arg(mode)
        .env("PORT", "0");
    ServerProcess::start(command).await
}

/// `tests/servers/py_server.py` over `transport`: `sse` and `streamable-http`
/// with the Python SDK 2.x, `websocket` with 1.x. `token`, when given, must be
/// sent as `Authorization: Bearer <token>`.
pub async fn python(transport: &str, token: Option<&str>) -> ServerProcess {
    let venv = if transport == "websocket" {
        "py1"
    } else {
        "py2"
    };
    let mut command = Command::new(deps().join(venv).join("bin/python"));
    command
        .arg(servers_dir().join("py_server.py"))
        .arg(transport)
        .env("PYTHONUNBUFFERED", "1");
    if let Some(token) = token {
        command.env("TOOLBRIDGE_TEST_TOKEN", token);
    }
    ServerProcess::start(command).await
}

/// A call to py_server.py's `slow` tool, sleeping `seconds`.
pub fn slow_request(seconds: f64) -> ClientRequest {
    let params =
        CallToolRequestParams::new("slow").with_arguments(args(&[("seconds", json!(seconds))]));
    ClientRequest::CallToolRequest(CallToolRequest::new(params))
}

/// `server` (py_server.py) is killed while a 60 s `slow` call is in flight:
/// the call fails at once, and not by timing out.
pub async fn assert_a_killed_server_fails_the_call_in_flight(
    server: &mut ServerProcess,
    client: &Client,
) {
    let handle = send_request(client, slow_request(60.0), Duration::from_secs(120)).await;
    assert!(server.wait_for_line("STARTED slow", SOON).await);
    let killed = Instant::now();
    server.kill();
    let result = response_soon(handle).await;
    assert!(
        result.is_err() && !matches!(result, Err(ServiceError::Timeout { .. })),
        "{result:?}"
    );
    assert!(
        killed.elapsed() < Duration::from_secs(5),
        "{:?}",
        killed.elapsed()
    );
}

/// A 60 s `slow` call given 500 ms times out, and `server` (py_server.py)
/// hears that it was cancelled.
pub async fn assert_a_timed_out_call_is_cancelled_on_the_server(
    server: &ServerProcess,
    client: &Client,
) {
    let handle = send_request(client, slow_request(60.0), Duration::from_millis(500)).await;
    let result = response_soon(handle).await;
    assert!(
        matches!(result, Err(ServiceError::Timeout { .. })),
        "{result:?}"
    );
    assert!(
        server.wait_for_line("CANCELLED slow", SOON).await,
        "notifications/cancelled reached the server:\n{}",
        server.output()
    );
}

/// Serves `app` on a free port of 127.0.0.1; returns `http://127.0.0.1:<port>`.
pub async fn serve(app: axum::Router) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await });
    url
}

/// A port of 127.0.0.1 on which nothing listens.
pub async fn closed_port() -> u16 {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    listener.local_addr().unwrap().port()
}

/// A remote server spec of `kind` at `url` with `headers`.
pub fn remote(kind: TransportKind, url: &str, headers: &[(&str, &str)]) -> ServerSpec {
    let mut spec = ServerSpec::remote("test", kind, url);
    let headers = headers
        .iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect();
    match &mut spec.transport {
        TransportSpec::Http(r) | TransportSpec::Sse(r) | TransportSpec::WebSocket(r) => {
            r.headers = headers;
        }
        TransportSpec::Stdio(_) => unreachable!(),
    }
    spec
}

/// A spec with a url and no `type`: streamable HTTP first, legacy SSE as fallback.
pub fn untyped(url: &str) -> ServerSpec {
    let mut spec = ServerSpec::remote("test", TransportKind::Http, url);
    spec.transport = TransportSpec::Http(RemoteSpec {
        url: url.to_owned(),
        auto_detect: true,
        ..RemoteSpec::default()
    });
    spec
}

pub fn context() -> TransportContext {
    TransportContext {
        tracker: Arc::new(ProcessTracker::new()),
        #[cfg(feature = "auth")]
        sign_in: None,
    }
}

/// `create_transport` for `spec`.
pub async fn transport(spec: &ServerSpec) -> Result<AnyTransport, TransportError> {
    create_transport(spec, &context()).await
}

pub type Client = RunningService<RoleClient, ()>;

/// How a test client starts its session.
#[derive(Clone, Copy, Debug)]
pub enum Lifecycle {
    /// `initialize` (sessions on 2025-11-25 servers).
    Initialize,
    /// `server/discover` first, `initialize` as fallback (2026-07-28).
    Auto,
}

/// A client over `create_transport(spec)`, started with `lifecycle` (bounded
/// by [`SOON`]).
pub async fn client(spec: &ServerSpec, lifecycle: Lifecycle) -> Result<Client, String> {
    let transport = transport(spec).await.map_err(|e| e.to_string())?;
    let serving = async {
        match lifecycle {
            Lifecycle::Initialize => ().serve(transport).await,
            Lifecycle::Auto => {
                ().serve_with_lifecycle(
                    transport,
                    ClientLifecycleMode::Auto {
                        preferred_versions: vec![ProtocolVersion::LATEST],
                        legacy_version: None,
                    },
                )
                .await
            }
        }
    };
    match tokio::time::timeout(SOON, serving).await {
        Ok(Ok(client)) => Ok(client),
        Ok(Err(e)) => Err(describe(&e)),
        Err(_) => Err("client start timed out".to_owned()),
    }
}

/// The error of a client that must fail to start.
pub async fn client_error(spec: &ServerSpec, lifecycle: Lifecycle) -> String {
    match client(spec, lifecycle).await {
        Ok(_) => panic!("the client started, but it should have failed"),
        Err(error) => error,
    }
}

/// An rmcp start error as a user should see it. rmcp's
/// `LegacyFallbackFailed` says only "discover and legacy initialize both
/// failed"; the fallback's error is the one that names the problem.
pub fn describe(error: &ClientInitializeError) -> String {
    match error {
        ClientInitializeError::LegacyFallbackFailed { fallback, .. } => describe(fallback),
        other => other.to_string(),
    }
}

/// Sends `request` and returns at once, without its response; rmcp fails
/// the request with `ServiceError::Timeout` after `timeout`.
pub async fn send_request(
    client: &Client,
    request: ClientRequest,
    timeout: Duration,
) -> RequestHandle<RoleClient> {
    client
        .peer()
        .send_request_with_option(request, PeerRequestOptions::with_timeout(timeout))
        .await
        .unwrap()
}

/// The response to `handle`, which must come within [`SOON`].
pub async fn response_soon(
    handle: RequestHandle<RoleClient>,
) -> Result<ServerResult, ServiceError> {
    tokio::time::timeout(SOON, handle.await_response())
        .await
        .expect("no response within SOON")
}

/// The arguments object `{key: value}`.
pub fn args(pairs: &[(&str, serde_json::Value)]) -> serde_json::Map<String, serde_json::Value> {
    pairs
        .iter()
        .map(|(k, v)| ((*k).to_owned(), v.clone()))
        .collect()
}

/// Calls `tool` and returns its text content joined by newlines.
pub async fn call_text(
    client: &Client,
    tool: &str,
    arguments: serde_json::Map<String, serde_json::Value>,
) -> Result<String, String> {
    let call =
        client.call_tool(CallToolRequestParams::new(tool.to_owned()).with_arguments(arguments));
    let result = tokio::time::timeout(SOON, call)
        .await
        .map_err(|_| format!("calling {tool} timed out"))?
        .map_err(|e| e.to_string())?;
    Ok(result
        .content
        .iter()
        .filter_map(|c| c.as_text().map(|t| t.text.clone()))
        .collect::<Vec<_>>()
        .join("\n"))
}

/// The names of the server's tools.
pub async fn tool_names(client: &Client) -> Vec<String> {
    let tools = tokio::time::timeout(SOON, client.list_all_tools())
        .await
        .expect("tools/list timed out")
        .expect("tools/list");
    tools.into_iter().map(|t| t.name.to_string()).collect()
}

/// A listener on 127.0.0.1 for a test's WebSocket server, and its
/// `ws://HOST:PORT/ws` URL.
pub async fn websocket_listener() -> (String, tokio::net::TcpListener) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("ws://{}/ws", listener.local_addr().unwrap());
    (url, listener)
}

/// The next connection to `listener`, accepted as an MCP WebSocket
/// (subprotocol `mcp`).
pub async fn accept_mcp_websocket(
    listener: &tokio::net::TcpListener,
) -> tokio_tungstenite::WebSocketStream<tokio::net::TcpStream> {
    use tokio_tungstenite::tungstenite::handshake::server::{
        ErrorResponse, Request, Response as Handshake,
    };
    let (tcp, _) = listener.accept().await.unwrap();
    // tungstenite's own callback type has the large error.
    #[allow(clippy::result_large_err)]
    let accept_mcp = |_: &Request, mut response: Handshake| {
        response
            .headers_mut()
            .insert("sec-websocket-protocol", "mcp".parse().unwrap());
        Ok::<_, ErrorResponse>(response)
    };
    tokio_tungstenite::accept_hdr_async(tcp, accept_mcp)
        .await
        .unwrap()
}
