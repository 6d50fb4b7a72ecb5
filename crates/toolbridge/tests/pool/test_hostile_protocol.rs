//! What a server that breaks the protocol can do to a pool, against real
//! processes (`tests/servers/hostile_proto.py`) and a real WebSocket:
//! listings that never end, tools with broken or repeated definitions,
//! answers toolbridge cannot read, and servers that print only noise on
//! stdout. Each must fail fast (well under the configured timeouts) with a
//! message that names the server and says why, or keep what is valid.

use crate::common;

use std::time::{Duration, Instant};

use common::fixtures::{object_args, pool_with, python, test_server};
use futures::{SinkExt, StreamExt};
use serde_json::json;
use tokio_tungstenite::tungstenite::{
    Message,
    protocol::frame::{
        Frame,
        coding::{Data, OpCode},
    },
};
use toolbridge::{
    config::{ServerSpec, TransportKind},
    pool::{PoolError, PoolOptions, SkipReason},
};

/// Every timeout in these tests: a failure must come well before it.
const TIMEOUT: Duration = Duration::from_secs(60);
/// What "well before" means.
const FAST: Duration = Duration::from_secs(15);

fn hostile(mode: &str) -> ServerSpec {
    let mut spec = ServerSpec::stdio(
        "hostile",
        python(),
        [test_server("hostile_proto.py"), mode.to_owned()],
    );
    spec.timeout = Some(TIMEOUT);
    spec
}

fn options() -> PoolOptions {
    PoolOptions {
        start_timeout: TIMEOUT,
        ..PoolOptions::default()
    }
}

async fn list_error(mode: &str) -> (PoolError, Duration) {
    let pool = pool_with(vec![hostile(mode)], options());
    let started = Instant::now();
    let error = pool.list_server_tools("hostile").await.unwrap_err();
    let took = started.elapsed();
    pool.close_all().await;
    (error, took)
}

#[tokio::test]
async fn a_tools_list_page_pointing_to_itself_fails_at_once_naming_the_server() {
    let (error, took) = list_error("cursor-self").await;
    assert!(took < FAST, "took {took:?}");
    assert!(
        matches!(error, PoolError::EndlessListing { .. }),
        "{error:?}"
    );
    let message = error.to_string();
    assert!(message.starts_with("server \"hostile\""), "{message}");
    assert!(
        message.contains("page 2 points back to cursor \"again\""),
        "{message}"
    );
}

#[tokio::test]
async fn a_cycle_of_cursors_fails_the_listing() {
    let (error, took) = list_error("cursor-cycle").await;
    assert!(took < FAST, "took {took:?}");
    assert!(
        error
            .to_string()
            .contains("page 3 points back to cursor \"a\""),
        "{error}"
    );
}

#[tokio::test]
async fn new_cursors_without_end_stop_at_the_page_cap() {
    let (error, took) = list_error("endless-pages").await;
    assert!(took < FAST, "took {took:?}");
    assert!(
        error
            .to_string()
            .contains("it still had more after 1000 pages"),
        "{error}"
    );
}

#[tokio::test]
async fn a_malformed_input_schema_leaves_out_that_tool_only_and_names_it() {
    let pool = pool_with(vec![hostile("bad-schema")], options());
    let listing = pool.list_tools_of(&["hostile".to_owned()]).await;
    assert!(listing.failures.is_empty(), "{:?}", listing.failures);
    let names: Vec<_> = listing.tools.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(names, ["good", "also_good"]);
    let skipped: Vec<_> = listing.skipped.iter().map(|s| s.tool.as_str()).collect();
    assert_eq!(
        skipped,
        [
            "schema_string",
            "schema_null",
            "schema_true",
            "schema_array",
            "schema_number"
        ]
    );
    assert!(
        listing
            .skipped
            .iter()
            .all(|s| matches!(s.reason, SkipReason::Invalid(_)))
    );
    let message = listing.skipped[0].to_string();
    assert!(
        message.starts_with(
            "server \"hostile\": tool \"schema_string\" is left out because its definition is invalid"
        ),
        "{message}"
    );
    pool.close_all().await;
}

#[tokio::test]
async fn of_two_tools_with_one_name_the_first_is_kept_and_the_second_reported() {
    let pool = pool_with(vec![hostile("duplicate")], options());
    let listing = pool.list_tools_of(&["hostile".to_owned()]).await;
    let tools: Vec<_> = listing
        .tools
        .iter()
        .map(|t| (t.name.as_str(), t.description.as_str()))
        .collect();
    assert_eq!(
        tools,
        [("echo", "Echo the text back."), ("other", "")],
        "the first echo only"
    );
    assert_eq!(listing.skipped.len(), 1);
    assert_eq!(listing.skipped[0].reason, SkipReason::DuplicateName);
    assert_eq!(
        listing.skipped[0].to_string(),
        "server \"hostile\" lists two tools named \"echo\"; the first is kept and the second \
         left out. Tell the server's authors"
    );
    pool.close_all().await;
}

/// Calls `echo` on a server in `mode`, which answers with something
/// toolbridge cannot read: the call fails at once, saying why.
async fn unreadable_call(mode: &str) -> String {
    let pool = pool_with(vec![hostile(mode)], options());
    let started = Instant::now();
    let error = pool
        .call_tool(
            "hostile",
            "echo",
            object_args(json!({"text": "hi"})),
            Default::default(),
        )
        .await
        .unwrap_err();
    let took = started.elapsed();
    assert!(took < FAST, "{mode}: took {took:?}");
    assert!(
        matches!(error, PoolError::Unreadable { .. }),
        "{mode}: {error:?}"
    );
    // The connection is still usable: the next request is answered.
    assert!(pool.list_server_tools("hostile").await.is_ok(), "{mode}");
    pool.close_all().await;
    error.to_string()
}

#[tokio::test]
async fn an_answer_over_16_mib_fails_its_call_at_once_with_the_size() {
    // "id" after "result", as the TypeScript SDK writes it: found in the tail.
    let message = unreadable_call("huge-result").await;
    assert_eq!(
        message,
        "server \"hostile\" sent an answer during a call to tool \"echo\" that toolbridge \
         cannot read: it is 17.0 MiB, over the 16 MiB limit on one message"
    );
}

#[tokio::test]
async fn an_answer_over_16_mib_without_an_id_fails_every_request_in_flight() {
    let message = unreadable_call("huge-noid").await;
    assert!(message.contains("over the 16 MiB limit"), "{message}");
}

#[tokio::test]
async fn answers_too_deep_not_utf8_or_with_a_nul_byte_fail_their_call_at_once() {
    for (mode, why) in [
        ("deep-result", "nested deeper than the 128 levels"),
        ("bad-utf8", "not valid UTF-8"),
        ("nul-result", "raw NUL byte"),
    ] {
        let message = unreadable_call(mode).await;
        assert!(message.contains(why), "{mode}: {message}");
    }
}

#[tokio::test]
async fn a_server_printing_one_banner_line_and_then_answering_works() {
    let pool = pool_with(vec![hostile("banner")], options());
    let tools = pool.list_server_tools("hostile").await.unwrap();
    assert_eq!(tools[0].name, "echo");
    pool.close_all().await;
}

#[tokio::test]
async fn a_server_printing_only_noise_fails_its_start_fast_naming_the_first_line() {
    let pool = pool_with(vec![hostile("banner-only")], options());
    let started = Instant::now();
    let error = pool.connect("hostile").await.unwrap_err();
    let took = started.elapsed();
    assert!(took < FAST, "took {took:?}");
    let message = error.to_string();
    assert!(
        message.starts_with(
            "server \"hostile\" failed to start: it printed \"Server running on stdio\" on \
             stdout, which is not an MCP message, and nothing else within 5 s"
        ),
        "{message}"
    );
}

#[tokio::test]
async fn a_server_that_prints_noise_and_exits_fails_at_once_naming_the_line() {
    let pool = pool_with(vec![hostile("garbage-exit")], options());
    let started = Instant::now();
    let error = pool.connect("hostile").await.unwrap_err();
    assert!(started.elapsed() < FAST, "took {:?}", started.elapsed());
    let message = error.to_string();
    assert!(
        message.contains(
            "it printed \"Error: cannot find module 'server.js'\" on stdout, which is not an \
             MCP message, and then closed its stdout"
        ),
        "{message}"
    );
}

/// A WebSocket MCP server on 127.0.0.1 that answers the handshake and
/// sends a 17 MiB message (in 1 MiB frames) in answer to the request whose
/// method is `huge_for`.
async fn websocket_server(huge_for: &'static str) -> String {
    let (url, listener) = common::websocket_listener().await;
    tokio::spawn(async move {
        let mut socket = common::accept_mcp_websocket(&listener).await;
        while let Some(Ok(message)) = socket.next().await {
            let Message::Text(text) = message else {
                continue;
            };
            let request: serde_json::Value = serde_json::from_str(&text).unwrap();
            let (Some(id), Some(method)) = (request.get("id"), request["method"].as_str()) else {
                continue;
            };
            if method == huge_for {
                let piece = vec![b'x'; 1024 * 1024];
                for i in 0..17 {
                    let opcode = if i == 0 { Data::Text } else { Data::Continue };
                    let frame = Frame::message(piece.clone(), OpCode::Data(opcode), i == 16);
                    if socket.feed(Message::Frame(frame)).await.is_err() {
                        return;
                    }
                }
                let _ = socket.flush().await;
                continue;
            }
            let answer = match method {
                "initialize" => json!({"jsonrpc": "2.0", "id": id, "result": {
                    "protocolVersion": request["params"]["protocolVersion"],
                    "capabilities": {"tools": {}},
                    "serverInfo": {"name": "ws-huge", "version": "1"}}}),
                "tools/list" => json!({"jsonrpc": "2.0", "id": id, "result": {"tools": [
                    {"name": "echo", "inputSchema": {"type": "object"}}]}}),
                _ => json!({"jsonrpc": "2.0", "id": id,
                    "error": {"code": -32601, "message": "Method not found"}}),
            };
            if socket
                .send(Message::text(answer.to_string()))
                .await
                .is_err()
            {
                return;
            }
        }
    });
    url
}

fn ws_spec(url: &str) -> ServerSpec {
    let mut spec = ServerSpec::remote("ws", TransportKind::WebSocket, url);
    spec.timeout = Some(TIMEOUT);
    spec
}

#[tokio::test]
async fn a_websocket_message_over_the_cap_during_the_handshake_names_the_cause() {
    let url = websocket_server("initialize").await;
    let pool = pool_with(vec![ws_spec(&url)], options());
    let started = Instant::now();
    let message = pool.connect("ws").await.unwrap_err().to_string();
    assert!(started.elapsed() < FAST, "took {:?}", started.elapsed());
    assert_eq!(
        message,
        "server \"ws\" failed to start: the server sent a message it cannot read: it is \
         17.0 MiB, over the 16 MiB limit on one message"
    );
}

#[tokio::test]
async fn a_websocket_answer_over_the_cap_fails_the_call_at_once() {
    let url = websocket_server("tools/call").await;
    let pool = pool_with(vec![ws_spec(&url)], options());
    let started = Instant::now();
    let error = pool
        .call_tool("ws", "echo", object_args(json!({})), Default::default())
        .await
        .unwrap_err();
    assert!(started.elapsed() < FAST, "took {:?}", started.elapsed());
    assert!(matches!(error, PoolError::Unreadable { .. }), "{error:?}");
    assert!(
        error.to_string().contains("over the 16 MiB limit"),
        "{error}"
    );
    pool.close_all().await;
}

/// A stateless streamable HTTP MCP server on 127.0.0.1 answering with JSON
/// bodies, whose answer to `tools/call` is a 17 MiB body.
async fn http_server_with_a_huge_answer() -> String {
    use axum::{body::Body, http::StatusCode, response::Response};
    let app = axum::Router::new().fallback(|body: axum::body::Bytes| async move {
        let request: serde_json::Value = serde_json::from_slice(&body).unwrap_or_default();
        let (Some(id), Some(method)) = (request.get("id"), request["method"].as_str()) else {
            return Response::builder()
                .status(StatusCode::ACCEPTED)
                .body(Body::empty())
                .unwrap();
        };
        let answer = match method {
            "initialize" => json!({"jsonrpc": "2.0", "id": id, "result": {
                "protocolVersion": request["params"]["protocolVersion"],
                "capabilities": {"tools": {}},
                "serverInfo": {"name": "http-huge", "version": "1"}}})
            .to_string(),
            "tools/call" => format!(
                r#"{{"jsonrpc":"2.0","id":{id},"result":{{"content":[{{"type":"text","text":"{}"}}]}}}}"#,
                "x".repeat(17 * 1024 * 1024)
            ),
            _ => json!({"jsonrpc": "2.0", "id": id,
                "error": {"code": -32601, "message": "Method not found"}})
            .to_string(),
        };
        Response::builder()
            .header("content-type", "application/json")
            .body(Body::from(answer))
            .unwrap()
    });
    format!("{}/mcp", common::serve(app).await)
}

#[tokio::test]
async fn a_streamable_http_answer_over_the_cap_fails_the_call_at_once() {
    let url = http_server_with_a_huge_answer().await;
    let mut spec = ServerSpec::remote("http", TransportKind::Http, url);
    spec.timeout = Some(TIMEOUT);
    let pool = pool_with(vec![spec], options());
    let started = Instant::now();
    let error = pool
        .call_tool("http", "echo", object_args(json!({})), Default::default())
        .await
        .unwrap_err();
    let took = started.elapsed();
    assert!(took < FAST, "took {took:?}");
    // It said "the server closed the connection" before.
    assert_eq!(
        error.to_string(),
        "server \"http\" sent an answer during a call to tool \"echo\" that toolbridge \
         cannot read: the server sent an answer over the 16 MiB limit on one message"
    );
    pool.close_all().await;
}
