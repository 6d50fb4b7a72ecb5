//! Streamable HTTP faults, against an in-process rmcp server and small
//! misbehaving HTTP servers: every one ends in a clear error or a recovery,
//! never a hang.

use crate::common;

use std::{
    sync::Arc,
    time::{Duration, Instant},
};

use axum::{body::Body, response::Response};
use common::{
    Lifecycle, SOON, args, call_text, client, client_error, closed_port, remote, response_soon,
    rmcp_server::RmcpServer, send_request, serve, tool_names,
};
use rmcp::{
    model::{CallToolRequest, CallToolRequestParams, ClientRequest},
    service::{PeerRequestOptions, ServiceError},
};
use serde_json::json;
use tokio::sync::watch;
use toolbridge::config::TransportKind;

/// Both protocol generations: 2025-11-25 with a session, 2026-07-28 without.
const MODES: [(bool, Lifecycle); 2] = [(true, Lifecycle::Initialize), (false, Lifecycle::Auto)];

fn hang_request() -> ClientRequest {
    ClientRequest::CallToolRequest(CallToolRequest::new(CallToolRequestParams::new("hang")))
}

#[tokio::test]
async fn a_server_killed_mid_call_fails_the_call_quickly_and_a_restarted_one_works() {
    for (sessions, lifecycle) in MODES {
        let mut server = RmcpServer::start(sessions).await;
        let spec = remote(TransportKind::Http, &server.url(), &[]);
        let client = client(&spec, lifecycle).await.unwrap();
        let call = tokio::spawn({
            let peer = client.peer().clone();
            async move {
                let handle = peer
                    .send_request_with_option(
                        hang_request(),
                        PeerRequestOptions::with_timeout(Duration::from_secs(120)),
                    )
                    .await?;
                handle.await_response().await
            }
        });
        assert!(server.log.wait_for("hang started", SOON).await.is_some());
        let killed = Instant::now();
        server.kill().await;
        let result = tokio::time::timeout(SOON, call)
            .await
            .expect("the call ends well before its timeout")
            .unwrap();
        assert!(result.is_err(), "{result:?}");
        assert!(!matches!(result, Err(ServiceError::Timeout { .. })));
        assert!(
            killed.elapsed() < Duration::from_secs(15),
            "{:?}",
            killed.elapsed()
        );
        drop(client);

        server.restart().await;
        let client = client_for(&server, lifecycle).await;
        assert_eq!(
            call_text(&client, "echo", args(&[("message", json!("again"))]))
                .await
                .unwrap(),
            "Echo: again",
            "sessions: {sessions}"
        );
        client.cancel().await.unwrap();
    }
}

async fn client_for(server: &RmcpServer, lifecycle: Lifecycle) -> common::Client {
    client(&remote(TransportKind::Http, &server.url(), &[]), lifecycle)
        .await
        .unwrap()
}

#[tokio::test]
async fn a_call_that_never_returns_times_out_and_the_server_is_told() {
    for (sessions, lifecycle) in MODES {
        let server = RmcpServer::start(sessions).await;
        let client = client_for(&server, lifecycle).await;
        let handle = send_request(&client, hang_request(), Duration::from_millis(500)).await;
        let result = response_soon(handle).await;
        assert!(
            matches!(result, Err(ServiceError::Timeout { .. })),
            "{result:?}"
        );
        // 2025-11-25: notifications/cancelled; 2026-07-28: the response stream closes.
        assert!(
            server.log.wait_for("hang cancelled", SOON).await.is_some(),
            "the server's handler was cancelled (sessions: {sessions})"
        );
        // The connection is still usable.
        assert_eq!(
            call_text(&client, "echo", args(&[("message", json!("ok"))]))
                .await
                .unwrap(),
            "Echo: ok"
        );
        client.cancel().await.unwrap();
    }
}

#[tokio::test]
async fn an_unreachable_url_is_a_clear_error() {
    let url = format!("http://127.0.0.1:{}/mcp", closed_port().await);
    for lifecycle in [Lifecycle::Initialize, Lifecycle::Auto] {
        let error = client_error(&remote(TransportKind::Http, &url, &[]), lifecycle).await;
        assert!(
            error.contains(&format!("server \"test\": {url}: cannot connect")),
            "{error}"
        );
        assert!(error.contains("is the server running"), "{error}");
    }
}

/// A server answering every request with `status`, `content_type` and `body`.
pub async fn fixed_server(status: u16, content_type: &'static str, body: &'static str) -> String {
    let app = axum::Router::new().fallback(move || async move {
        Response::builder()
            .status(status)
            .header("content-type", content_type)
            .body(Body::from(body))
            .unwrap()
    });
    format!("{}/mcp", serve(app).await)
}

#[tokio::test]
async fn error_statuses_are_clear_errors_naming_server_url_and_status() {
    let html = fixed_server(
        500,
        "text/html",
        "<html><body>Internal\nServer Error</body></html>",
    )
    .await;
    let unauthorized = fixed_server(401, "text/plain", "no token").await;
    let cases = [
        (html.as_str(), "HTTP 500 Internal Server Error"),
        (unauthorized.as_str(), "HTTP 401 Unauthorized"),
    ];
    for (url, status) in cases {
        for lifecycle in [Lifecycle::Initialize, Lifecycle::Auto] {
            let started = Instant::now();
            let error = client_error(&remote(TransportKind::Http, url, &[]), lifecycle).await;
            assert!(
                started.elapsed() < Duration::from_secs(10),
                "{lifecycle:?}: {error}"
            );
            assert!(
                error.contains(&format!("server \"test\": {url}: {status}")),
                "{lifecycle:?}: {error}"
            );
        }
    }
    let error = client_error(
        &remote(TransportKind::Http, &unauthorized, &[]),
        Lifecycle::Initialize,
    )
    .await;
    assert!(error.contains("check the credentials"), "{error}");
}

#[tokio::test]
async fn a_tls_failure_is_a_clear_error() {
    // https:// and wss:// to a server that speaks plain HTTP: the TLS
    // handshake fails.
    let plain = fixed_server(200, "text/plain", "plain").await;
    let https = plain.replacen("http://", "https://", 1);
    let wss = plain.replacen("http://", "wss://", 1);
    for (kind, url) in [
        (TransportKind::Http, &https),
        (TransportKind::WebSocket, &wss),
    ] {
        let started = Instant::now();
        let error = client_error(&remote(kind, url, &[]), Lifecycle::Initialize).await;
        assert!(started.elapsed() < Duration::from_secs(10), "{error}");
        assert!(
            error.contains(&format!("server \"test\": {url}: ")),
            "{error}"
        );
        assert!(error.contains("TLS handshake failed"), "{error}");
    }
}

/// A 2025-11-25 server that ends every event stream at once, before the
/// answer, asking for `retry: 0`. Counts the `GET`s that resume the stream.
/// With `session`, it starts a session (so the client opens the standalone
/// `GET` stream) and answers `tools/list`.
async fn stream_ending_server(gets: Arc<watch::Sender<usize>>, session: bool) -> String {
    let app = axum::Router::new().route(
        "/mcp",
        axum::routing::any(move |request: axum::extract::Request| {
            let gets = gets.clone();
            async move {
                let priming = || {
                    Response::builder()
                        .header("content-type", "text/event-stream")
                        .body(Body::from("id: ev-1\nretry: 0\ndata: \n\n"))
                        .unwrap()
                };
                if request.method() == http::Method::GET {
                    gets.send_modify(|n| *n += 1);
                    return priming();
                }
                let body = axum::body::to_bytes(request.into_body(), 1 << 20)
                    .await
                    .unwrap();
                let message: serde_json::Value = serde_json::from_slice(&body).unwrap();
                match message["method"].as_str() {
                    Some("tools/list") if session => Response::builder()
                        .header("content-type", "application/json")
                        .body(Body::from(
                            json!({"jsonrpc": "2.0", "id": message["id"], "result": {"tools": []}})
                                .to_string(),
                        ))
                        .unwrap(),
                    Some("initialize") => {
                        let builder =
                            Response::builder().header("content-type", "application/json");
                        let builder = if session {
                            builder.header("mcp-session-id", "s1")
                        } else {
                            builder
                        };
                        builder
                            .body(Body::from(
                                json!({"jsonrpc": "2.0", "id": message["id"], "result": {
                                    "protocolVersion": "2025-11-25",
                                    "capabilities": {"tools": {}},
                                    "serverInfo": {"name": "ends-streams", "version": "1"}
                                }})
                                .to_string(),
                            ))
                            .unwrap()
                    }
                    Some("tools/call") => priming(),
                    _ => Response::builder()
                        .status(http::StatusCode::ACCEPTED)
                        .body(Body::empty())
                        .unwrap(),
                }
            }
        }),
    );
    format!("{}/mcp", serve(app).await)
}

/// Regression: rmcp resumed such a stream without a bound, a tight loop of
/// `GET`s (thousands a second with `retry: 0`) until the call timed out.
#[tokio::test]
async fn a_server_ending_every_stream_gets_a_bounded_number_of_resumes() {
    let gets = Arc::new(watch::Sender::new(0));
    let url = stream_ending_server(gets.clone(), false).await;
    let client = client(
        &remote(TransportKind::Http, &url, &[]),
        Lifecycle::Initialize,
    )
    .await
    .unwrap();
    let error = call_text(&client, "anything", args(&[])).await.unwrap_err();
    assert!(
        error.contains("server \"test\"") && error.contains("5 times in a row"),
        "{error}"
    );
    assert_eq!(*gets.borrow(), 5);
    client.cancel().await.unwrap();
}

/// Regression: rmcp reopened a standalone `GET` stream that the server ends
/// at once (`retry: 0`) in a tight loop for the whole session.
#[tokio::test]
async fn a_standalone_stream_ended_at_once_is_reopened_a_bounded_number_of_times() {
    let gets = Arc::new(watch::Sender::new(0));
    let mut seen = gets.subscribe();
    let url = stream_ending_server(gets.clone(), true).await;
    let client = client(
        &remote(TransportKind::Http, &url, &[]),
        Lifecycle::Initialize,
    )
    .await
    .unwrap();
    // The first GET and five reopenings.
    let six = tokio::time::timeout(SOON, seen.wait_for(|n| *n >= 6))
        .await
        .is_ok();
    assert!(six, "{} GETs", *gets.borrow());
    // The session still works, and no seventh GET comes: not within a round
    // trip (a tight loop would have made hundreds), and not after the
    // longest wait a sixth resume would have had (`retry: 0` doubles from
    // the 100 ms floor: 3.2 s), which a backed-off but endless loop would
    // have reached. Proving an absence takes waiting that long.
    assert!(tool_names(&client).await.is_empty());
    let no_seventh = tokio::time::timeout(
        Duration::from_millis(3_200 + 800),
        seen.wait_for(|n| *n > 6),
    )
    .await
    .is_err();
    assert!(no_seventh, "the stream was reopened again");
    assert_eq!(*gets.borrow(), 6);
    client.cancel().await.unwrap();
}
