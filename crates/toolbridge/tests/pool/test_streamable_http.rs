//! Streamable HTTP against real servers: server-everything (2025-11-25,
//! sessions), the Python SDK 2.x (2026-07-28, no sessions) and an in-process
//! rmcp server (headers, session deletion, session expiry, resumption).

use crate::common;

use std::{
    sync::{Arc, Mutex},
    time::Instant,
};

use axum::{body::Body, http::StatusCode, response::Response};
use common::rmcp_server::RmcpServer;
use common::{Lifecycle, args, call_text, client, everything, python, remote, serve, tool_names};
use http::Method;
use serde_json::json;
use toolbridge::{
    config::TransportKind,
    pool::{Pool, PoolOptions},
};

#[tokio::test]
async fn server_everything_works_with_sessions_under_both_lifecycles() {
    let server = everything("streamableHttp").await;
    let spec = remote(TransportKind::Http, &server.url("/mcp"), &[]);
    for lifecycle in [Lifecycle::Initialize, Lifecycle::Auto] {
        let client = client(&spec, lifecycle).await.unwrap();
        let info = client.peer_info().expect("server info");
        assert_eq!(
            info.protocol_version.as_str(),
            "2025-11-25",
            "{lifecycle:?}"
        );
        assert!(tool_names(&client).await.contains(&"echo".to_owned()));
        let text = call_text(&client, "echo", args(&[("message", json!("hello"))]))
            .await
            .unwrap();
        assert_eq!(text, "Echo: hello", "{lifecycle:?}");
        client.cancel().await.unwrap();
    }
}

#[tokio::test]
async fn python_sdk_2_speaks_2026_07_28_without_sessions() {
    let server = python("streamable-http", None).await;
    let spec = remote(TransportKind::Http, &server.url("/mcp"), &[]);
    let client = client(&spec, Lifecycle::Auto).await.unwrap();
    let info = client.peer_info().expect("server info");
    assert_eq!(info.protocol_version.as_str(), "2026-07-28");
    assert_eq!(tool_names(&client).await, ["echo", "slow"]);
    let text = call_text(&client, "echo", args(&[("message", json!("hi"))]))
        .await
        .unwrap();
    assert_eq!(text, "Echo: hi");
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn config_headers_go_on_every_request_and_the_session_is_deleted_on_close() {
    let server = RmcpServer::start(true).await;
    let spec = remote(
        TransportKind::Http,
        &server.url(),
        &[("Authorization", "Bearer t0ken"), ("X-Team", "blue")],
    );
    let client = client(&spec, Lifecycle::Initialize).await.unwrap();
    let text = call_text(&client, "echo", args(&[("message", json!("x"))]))
        .await
        .unwrap();
    assert_eq!(text, "Echo: x");
    client.cancel().await.unwrap();

    let requests = server.requests();
    assert!(requests.len() >= 4, "{requests:?}");
    for request in &requests {
        assert_eq!(
            request.headers["authorization"], "Bearer t0ken",
            "{request:?}"
        );
        assert_eq!(request.headers["x-team"], "blue", "{request:?}");
    }
    let delete = requests
        .iter()
        .find(|r| r.method == Method::DELETE)
        .expect("the session is deleted on close");
    assert!(delete.headers.contains_key("mcp-session-id"));
}

#[tokio::test]
async fn an_expired_session_is_reinitialized_once_and_the_call_retried() {
    let mut server = RmcpServer::start(true).await;
    let spec = remote(TransportKind::Http, &server.url(), &[]);
    let client = client(&spec, Lifecycle::Initialize).await.unwrap();
    assert_eq!(
        call_text(&client, "echo", args(&[("message", json!("before"))]))
            .await
            .unwrap(),
        "Echo: before"
    );

    // A restarted server knows no sessions: it answers 404 to the old one.
    server.restart().await;
    assert_eq!(
        call_text(&client, "echo", args(&[("message", json!("after"))]))
            .await
            .unwrap(),
        "Echo: after"
    );
    let sessions: std::collections::BTreeSet<_> = server
        .requests()
        .iter()
        .filter_map(|r| r.headers.get("mcp-session-id").cloned())
        .collect();
    assert_eq!(
        sessions.len(),
        2,
        "a new session after the restart: {sessions:?}"
    );
    client.cancel().await.unwrap();
}

/// Sequential calls share one connection when the server sets TCP_NODELAY.
/// A server that leaves Nagle on (axum's default) holds back the answer
/// after the SSE priming event until the client's delayed ACK (~40 ms) on a
/// reused connection; the transport notices and switches that server to a
/// new connection per request, so later calls do not stall.
#[tokio::test]
async fn connections_are_reused_unless_answers_stall_on_them() {
    for nodelay in [true, false] {
        let server = RmcpServer::start_with(true, nodelay).await;
        let spec = remote(TransportKind::Http, &server.url(), &[]);
        let client = client(&spec, Lifecycle::Initialize).await.unwrap();
        for i in 0..20 {
            let text = call_text(&client, "echo", args(&[("message", json!(i.to_string()))]))
                .await
                .unwrap();
            assert_eq!(text, format!("Echo: {i}"));
        }
        let connections = server.connections();
        client.cancel().await.unwrap();
        // Counted, not timed: a server whose answers stall on reused
        // connections must end up with a new connection per request (each
        // stalled call would cost a delayed ACK, ~40 ms).
        if nodelay {
            // The POSTs' connection and the session's GET stream.
            assert!(connections <= 4, "{connections} connections for 20 calls");
        } else {
            assert!(connections >= 10, "{connections} connections for 20 calls");
        }
    }
}

/// What the resumption server saw.
#[derive(Default)]
struct Resumption {
    call_id: Option<serde_json::Value>,
    stream_dropped_at: Option<Instant>,
    resumed: Option<(String, Instant)>,
}

/// A minimal 2025-11-25 server whose response stream for `tools/call` sends
/// an event id and `retry: 300`, then drops; the answer comes on the `GET`
/// that resumes it.
async fn resumption_server(state: Arc<Mutex<Resumption>>) -> String {
    let app = axum::Router::new().route(
        "/mcp",
        axum::routing::any(move |request: axum::extract::Request| {
            let state = state.clone();
            async move {
                let method = request.method().clone();
                let last_event_id = request
                    .headers()
                    .get("last-event-id")
                    .map(|v| v.to_str().unwrap().to_owned());
                let body = axum::body::to_bytes(request.into_body(), 1 << 20)
                    .await
                    .unwrap();
                let sse = |text: String| {
                    Response::builder()
                        .header("content-type", "text/event-stream")
                        .header("mcp-session-id", "s1")
                        .body(Body::from(text))
                        .unwrap()
                };
                match method {
                    Method::POST => {
                        let message: serde_json::Value = serde_json::from_slice(&body).unwrap();
                        match message["method"].as_str() {
                            Some("initialize") => Response::builder()
                                .header("content-type", "application/json")
                                .header("mcp-session-id", "s1")
                                .body(Body::from(
                                    json!({"jsonrpc": "2.0", "id": message["id"], "result": {
                                        "protocolVersion": "2025-11-25",
                                        "capabilities": {"tools": {}},
                                        "serverInfo": {"name": "resumable", "version": "1"}
                                    }})
                                    .to_string(),
                                ))
                                .unwrap(),
                            Some("tools/call") => {
                                let mut state = state.lock().unwrap();
                                state.call_id = Some(message["id"].clone());
                                state.stream_dropped_at = Some(Instant::now());
                                sse("id: ev-1\nretry: 300\ndata: \n\n".to_owned())
                            }
                            _ => Response::builder()
                                .status(StatusCode::ACCEPTED)
                                .body(Body::empty())
                                .unwrap(),
                        }
                    }
                    Method::GET => match last_event_id {
                        Some(id) => {
                            let mut state = state.lock().unwrap();
                            state.resumed = Some((id, Instant::now()));
                            let answer = json!({"jsonrpc": "2.0", "id": state.call_id, "result": {
                                "content": [{"type": "text", "text": "resumed"}]
                            }});
                            sse(format!("id: ev-2\ndata: {answer}\n\n"))
                        }
                        None => Response::builder()
                            .status(StatusCode::METHOD_NOT_ALLOWED)
                            .body(Body::empty())
                            .unwrap(),
                    },
                    _ => Response::new(Body::empty()),
                }
            }
        }),
    );
    format!("{}/mcp", serve(app).await)
}

#[tokio::test]
async fn a_dropped_response_stream_is_resumed_with_last_event_id_after_retry() {
    let state = Arc::new(Mutex::new(Resumption::default()));
    let url = resumption_server(state.clone()).await;
    let spec = remote(TransportKind::Http, &url, &[]);
    let client = client(&spec, Lifecycle::Initialize).await.unwrap();
    let text = call_text(&client, "anything", args(&[])).await.unwrap();
    assert_eq!(text, "resumed");

    let state = state.lock().unwrap();
    let (last_event_id, resumed_at) = state.resumed.clone().expect("resumed with GET");
    assert_eq!(last_event_id, "ev-1");
    let waited = resumed_at - state.stream_dropped_at.unwrap();
    assert!(
        waited.as_millis() >= 300,
        "resumed after {waited:?}, before retry: 300"
    );
}

/// A 2025-11-25 server of the kind the conformance suite mocks: it answers
/// every request it does not know, `server/discover` included, with `{}`.
/// Records the JSON-RPC methods it was sent.
async fn empty_result_server(methods: Arc<Mutex<Vec<String>>>) -> String {
    let app = axum::Router::new().route(
        "/mcp",
        axum::routing::post(move |body: axum::body::Bytes| {
            let methods = methods.clone();
            async move {
                let message: serde_json::Value = serde_json::from_slice(&body).unwrap();
                let method = message["method"].as_str().unwrap_or_default().to_owned();
                methods.lock().unwrap().push(method.clone());
                let result = match method.as_str() {
                    _ if message.get("id").is_none() => {
                        return Response::builder()
                            .status(StatusCode::ACCEPTED)
                            .body(Body::empty())
                            .unwrap();
                    }
                    "initialize" => json!({
                        "protocolVersion": "2025-11-25",
                        "capabilities": {"tools": {}},
                        "serverInfo": {"name": "empty-answers", "version": "1"}
                    }),
                    "tools/list" => json!({"tools": [{
                        "name": "noop", "inputSchema": {"type": "object"}
                    }]}),
                    _ => json!({}),
                };
                Response::builder()
                    .header("content-type", "application/json")
                    .body(Body::from(
                        json!({"jsonrpc": "2.0", "id": message["id"], "result": result})
                            .to_string(),
                    ))
                    .unwrap()
            }
        }),
    );
    format!("{}/mcp", serve(app).await)
}

/// Regression: rmcp's discover-first start failed with "expect initialized
/// result, but received EmptyResult" against such a server.
#[tokio::test]
async fn a_server_answering_discover_with_an_empty_result_is_initialized() {
    let methods = Arc::new(Mutex::new(Vec::new()));
    let url = empty_result_server(methods.clone()).await;
    let pool = Pool::new(
        [remote(TransportKind::Http, &url, &[])],
        PoolOptions::default(),
    );
    let info = pool.connect("test").await.unwrap();
    assert_eq!(info.protocol_version, "2025-11-25");
    assert_eq!(info.server_name, "empty-answers");
    let tools = pool.list_server_tools("test").await.unwrap();
    assert_eq!(tools.len(), 1);
    pool.close_all().await;
    // One connection: discover, then initialize on it, no restart.
    assert_eq!(
        methods.lock().unwrap()[..4],
        [
            "server/discover",
            "initialize",
            "notifications/initialized",
            "tools/list"
        ]
    );
}
