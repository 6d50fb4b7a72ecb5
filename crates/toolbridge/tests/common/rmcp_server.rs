//! An rmcp streamable HTTP server run in-process for fault tests: it can be
//! killed (its runtime shut down, so every connection drops at once, as when
//! a process dies) and restarted on the same port (its sessions gone), and it
//! records every HTTP request it receives.

use std::{
    net::SocketAddr,
    sync::{
        Arc, Mutex,
        atomic::{AtomicUsize, Ordering},
    },
    time::Duration,
};

use axum::{extract::State, middleware::Next};
use http::{HeaderMap, Method};
use rmcp::{
    ErrorData as McpError, RoleServer, ServerHandler,
    model::{
        CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, ListToolsResult,
        PaginatedRequestParams, ServerCapabilities, ServerConfig, Tool,
    },
    service::RequestContext,
    transport::streamable_http_server::{
        StreamableHttpServerConfig, StreamableHttpService, session::local::LocalSessionManager,
    },
};
use tokio::runtime::Runtime;

use super::Log;

/// One HTTP request the server received.
#[derive(Debug, Clone)]
pub struct Recorded {
    pub method: Method,
    pub headers: HeaderMap,
}

/// The in-process server.
pub struct RmcpServer {
    pub addr: SocketAddr,
    /// Sessions (2025-11-25 `initialize` clients get an `Mcp-Session-Id`).
    legacy_sessions: bool,
    /// TCP_NODELAY on accepted connections (`axum::serve` leaves Nagle on).
    nodelay: bool,
    /// TCP connections accepted, across restarts.
    connections: Arc<AtomicUsize>,
    /// Tool activity: `hang started`, `hang cancelled`.
    pub log: Arc<Log>,
    /// Every HTTP request, across restarts.
    pub requests: Arc<Mutex<Vec<Recorded>>>,
    runtime: Option<Runtime>,
}

impl RmcpServer {
    /// Starts on a free port of 127.0.0.1, leaving Nagle's algorithm on as
    /// `axum::serve` does.
    pub async fn start(legacy_sessions: bool) -> RmcpServer {
        Self::start_with(legacy_sessions, false).await
    }

    /// Starts on a free port of 127.0.0.1, with TCP_NODELAY if `nodelay`.
    pub async fn start_with(legacy_sessions: bool, nodelay: bool) -> RmcpServer {
        let mut server = RmcpServer {
            addr: SocketAddr::from(([127, 0, 0, 1], 0)),
            legacy_sessions,
            nodelay,
            connections: Arc::default(),
            log: Arc::default(),
            requests: Arc::default(),
            runtime: None,
        };
        server.serve().await;
        server
    }

    /// `http://127.0.0.1:<port>/mcp`
    pub fn url(&self) -> String {
        format!("http://{}/mcp", self.addr)
    }

    /// Drops every connection and stops listening, like a killed process;
    /// returns once the port is free.
    pub async fn kill(&mut self) {
        if let Some(runtime) = self.runtime.take() {
            // Shutting down drops every task, and with them every socket.
            tokio::task::spawn_blocking(move || runtime.shutdown_timeout(Duration::from_secs(5)))
                .await
                .unwrap();
        }
    }

    /// Kills the server and starts a new one on the same port: every
    /// session the old one knew is gone.
    pub async fn restart(&mut self) {
        self.kill().await;
        self.serve().await;
    }

    /// How many TCP connections were accepted so far.
    pub fn connections(&self) -> usize {
        self.connections.load(Ordering::SeqCst)
    }

    /// The requests received so far.
    pub fn requests(&self) -> Vec<Recorded> {
        self.requests.lock().unwrap().clone()
    }

    async fn serve(&mut self) {
        let listener = std::net::TcpListener::bind(self.addr).unwrap();
        listener.set_nonblocking(true).unwrap();
        self.addr = listener.local_addr().unwrap();
        let handler = TestHandler {
            log: self.log.clone(),
        };
        let config = StreamableHttpServerConfig::default()
            .with_legacy_session_mode(self.legacy_sessions)
            .with_sse_keep_alive(Some(Duration::from_millis(200)));
        let service: StreamableHttpService<TestHandler, LocalSessionManager> =
            StreamableHttpService::new(
                move || Ok(handler.clone()),
                Arc::new(LocalSessionManager::default()),
                config,
            );
        let router = axum::Router::new().nest_service("/mcp", service).layer(
            axum::middleware::from_fn_with_state(self.requests.clone(), record),
        );
        // Its own runtime, so that shutting it down drops every connection.
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .unwrap();
        let (nodelay, connections) = (self.nodelay, self.connections.clone());
        runtime.spawn(async move {
            use axum::serve::ListenerExt;
            let listener =
                tokio::net::TcpListener::from_std(listener)
                    .unwrap()
                    .tap_io(move |tcp| {
                        connections.fetch_add(1, Ordering::SeqCst);
                        if nodelay {
                            let _ = tcp.set_nodelay(true);
                        }
                    });
            let _ = axum::serve(listener, router).await;
        });
        self.runtime = Some(runtime);
    }
}

impl Drop for RmcpServer {
    fn drop(&mut self) {
        if let Some(runtime) = self.runtime.take() {
            runtime.shutdown_background();
        }
    }
}

async fn record(
    State(requests): State<Arc<Mutex<Vec<Recorded>>>>,
    request: axum::extract::Request,
    next: Next,
) -> axum::response::Response {
    requests.lock().unwrap().push(Recorded {
        method: request.method().clone(),
        headers: request.headers().clone(),
    });
    next.run(request).await
}

#[derive(Clone)]
struct TestHandler {
    log: Arc<Log>,
}

fn schema(properties: serde_json::Value) -> Arc<serde_json::Map<String, serde_json::Value>> {
    let serde_json::Value::Object(schema) =
        serde_json::json!({ "type": "object", "properties": properties })
    else {
        unreachable!()
    };
    Arc::new(schema)
}

impl ServerHandler for TestHandler {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, McpError> {
        Ok(ListToolsResult::with_all_items(vec![
            Tool::new(
                "echo",
                "Echoes the message back",
                schema(serde_json::json!({ "message": { "type": "string" } })),
            ),
            Tool::new(
                "hang",
                "Never answers (until cancelled)",
                schema(serde_json::json!({})),
            ),
        ]))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        let text = match request.name.as_ref() {
            "echo" => {
                let message = request
                    .arguments
                    .as_ref()
                    .and_then(|a| a.get("message"))
                    .and_then(|m| m.as_str())
                    .unwrap_or_default();
                format!("Echo: {message}")
            }
            "hang" => {
                self.log.push("hang started");
                context.ct.cancelled().await;
                self.log.push("hang cancelled");
                "cancelled".to_owned()
            }
            other => return Err(McpError::invalid_params(format!("no tool {other}"), None)),
        };
        Ok(CallToolResult::success(vec![ContentBlock::text(text)]).into())
    }
}
