//! The WebSocket transport against the Python SDK 1.x WebSocket server
//! (subprotocol `mcp`) under uvicorn.

use crate::common;

use common::{
    Lifecycle, args, assert_a_killed_server_fails_the_call_in_flight,
    assert_a_timed_out_call_is_cancelled_on_the_server, call_text, client, client_error,
    closed_port, python, remote, tool_names,
};
use serde_json::json;
use toolbridge::config::TransportKind;

const TOKEN: &str = "ws-t0ken";

fn ws_spec(server: &common::ServerProcess, token: Option<&str>) -> toolbridge::config::ServerSpec {
    let url = format!("ws://127.0.0.1:{}/ws", server.port);
    let bearer = token.map(|t| format!("Bearer {t}"));
    let headers: Vec<(&str, &str)> = bearer
        .iter()
        .map(|b| ("Authorization", b.as_str()))
        .collect();
    remote(TransportKind::WebSocket, &url, &headers)
}

#[tokio::test]
async fn python_websocket_server_with_header_auth_lists_and_calls_tools() {
    let server = python("websocket", Some(TOKEN)).await;
    for lifecycle in [Lifecycle::Initialize, Lifecycle::Auto] {
        let client = client(&ws_spec(&server, Some(TOKEN)), lifecycle)
            .await
            .unwrap();
        assert_eq!(tool_names(&client).await, ["echo", "slow"]);
        let text = call_text(&client, "echo", args(&[("message", json!("ws"))]))
            .await
            .unwrap();
        assert_eq!(text, "Echo: ws", "{lifecycle:?}");
        client.cancel().await.unwrap();
    }
}

#[tokio::test]
async fn pings_are_answered_during_a_long_call() {
    // The server pings every 0.2 s and drops a client that has not answered
    // within 1 s; this call takes 1.5 s.
    let server = python("websocket", None).await;
    let client = client(&ws_spec(&server, None), Lifecycle::Initialize)
        .await
        .unwrap();
    let text = call_text(&client, "slow", args(&[("seconds", json!(1.5))]))
        .await
        .unwrap();
    assert_eq!(text, "slept 1.5");
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn a_refused_handshake_is_a_clear_error_with_status() {
    let server = python("websocket", Some(TOKEN)).await;
    let url = format!("ws://127.0.0.1:{}/ws", server.port);
    let error = client_error(&ws_spec(&server, None), Lifecycle::Initialize).await;
    assert!(
        error.contains(&format!("server \"test\": {url}: HTTP 403 Forbidden")),
        "{error}"
    );
}

#[tokio::test]
async fn an_unreachable_url_is_a_clear_error() {
    let url = format!("ws://127.0.0.1:{}/ws", closed_port().await);
    let error = client_error(
        &remote(TransportKind::WebSocket, &url, &[]),
        Lifecycle::Initialize,
    )
    .await;
    assert!(
        error.contains(&format!("server \"test\": {url}: cannot connect")),
        "{error}"
    );
}

#[tokio::test]
async fn a_killed_server_fails_the_call_in_flight_at_once() {
    let mut server = python("websocket", None).await;
    let client = client(&ws_spec(&server, None), Lifecycle::Initialize)
        .await
        .unwrap();
    assert_a_killed_server_fails_the_call_in_flight(&mut server, &client).await;
}

#[tokio::test]
async fn a_call_that_times_out_is_cancelled_on_the_server() {
    let server = python("websocket", None).await;
    let client = client(&ws_spec(&server, None), Lifecycle::Initialize)
        .await
        .unwrap();
    assert_a_timed_out_call_is_cancelled_on_the_server(&server, &client).await;
    // Still connected.
    let text = call_text(&client, "echo", args(&[("message", json!("still here"))]))
        .await
        .unwrap();
    assert_eq!(text, "Echo: still here");
    client.cancel().await.unwrap();
}
