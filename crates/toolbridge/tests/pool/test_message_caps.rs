//! A message over the 16 MiB cap, sent through a real socket: the legacy
//! SSE transport ends the connection with an error that names the server
//! and says why, and never holds the message; the WebSocket transport
//! refuses it too.
//!
//! In its own test binary, so the process's peak memory is this test's.

use crate::common;

use std::{sync::Arc, time::Duration};

use axum::{
    body::{Body, Bytes},
    http::StatusCode,
    response::Response,
    routing::{get, post},
};
use futures::{SinkExt, StreamExt};
use rmcp::{model::ClientJsonRpcMessage, transport::Transport};
use tokio::sync::Notify;
use tokio_tungstenite::tungstenite::{
    Message,
    protocol::frame::{
        Frame,
        coding::{Data, OpCode},
    },
};
use toolbridge::{
    config::RemoteSpec,
    transport::{sse::SseTransport, websocket::WebSocketTransport},
};

/// The process's peak resident memory so far, in bytes (`VmHWM`).
fn peak_rss() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let kib: u64 = status
        .lines()
        .find_map(|line| line.strip_prefix("VmHWM:"))
        .and_then(|rest| rest.trim().strip_suffix("kB"))
        .and_then(|kib| kib.trim().parse().ok())
        .expect("VmHWM in /proc/self/status");
    kib * 1024
}

fn ping() -> ClientJsonRpcMessage {
    serde_json::from_value(serde_json::json!({"jsonrpc": "2.0", "id": 1, "method": "ping"}))
        .unwrap()
}

/// A legacy SSE server whose answer to the first POST is one `data:` line
/// of `size` bytes on the event stream (then the stream stays open).
async fn server_with_a_long_line(size: usize) -> String {
    let posted = Arc::new(Notify::new());
    let stream = {
        let posted = posted.clone();
        get(move || {
            let posted = posted.clone();
            async move {
                let block = Bytes::from(vec![b'x'; 64 * 1024]);
                let head = futures::stream::iter([Bytes::from_static(
                    b"event: endpoint\ndata: /messages\n\n",
                )]);
                let line = futures::stream::once(async move {
                    posted.notified().await;
                    Bytes::from_static(b"data: ")
                })
                .chain(futures::stream::iter(std::iter::repeat_n(
                    block,
                    size.div_ceil(64 * 1024),
                )))
                .chain(futures::stream::iter([Bytes::from_static(b"\n\n")]))
                .chain(futures::stream::pending());
                Response::builder()
                    .header("content-type", "text/event-stream")
                    .body(Body::from_stream(
                        head.chain(line).map(Ok::<_, std::io::Error>),
                    ))
                    .unwrap()
            }
        })
    };
    let message = post(move || {
        let posted = posted.clone();
        async move {
            posted.notify_one();
            StatusCode::ACCEPTED
        }
    });
    let app = axum::Router::new()
        .route("/sse", stream)
        .route("/messages", message);
    format!("{}/sse", common::serve(app).await)
}

#[tokio::test]
async fn a_100_mb_legacy_sse_event_ends_the_connection_with_a_clear_error() {
    let url = server_with_a_long_line(100 * 1024 * 1024).await;
    let before = peak_rss();
    let spec = RemoteSpec {
        url: url.clone(),
        ..RemoteSpec::default()
    };
    let mut transport = SseTransport::connect("huge", &spec).await.unwrap();
    transport.send(ping()).await.unwrap();

    // The answer never fits: the stream ends instead of growing, and the
    // ping in flight fails at once with the reason (issue 16 item 6).
    let received = tokio::time::timeout(Duration::from_secs(60), transport.receive())
        .await
        .expect("the transport kept reading an endless event");
    let Some(rmcp::model::JsonRpcMessage::Error(failed)) = received else {
        panic!("expected the ping to fail, got {received:?}");
    };
    assert_eq!(failed.id, Some(rmcp::model::NumberOrString::Number(1)));
    assert!(
        failed.error.message.contains("larger than 16 MiB"),
        "{}",
        failed.error.message
    );
    let received = transport.receive().await;
    assert!(received.is_none(), "{received:?}");

    // What a caller sees next says which server and why.
    let error = transport.send(ping()).await.unwrap_err().to_string();
    assert_eq!(
        error,
        format!(
            "server \"huge\": {url}: an event on the stream is larger than 16 MiB, \
             the most toolbridge accepts; the connection is closed"
        )
    );

    // Held at most the cap (and a buffer's growth), not the 100 MB.
    let grown = peak_rss().saturating_sub(before);
    assert!(
        grown < 64 * 1024 * 1024,
        "peak memory grew by {} MiB",
        grown / (1024 * 1024)
    );
    transport.close().await.unwrap();
}

#[tokio::test]
async fn a_websocket_message_over_16_mib_ends_the_connection() {
    // 17 MiB in 1 MiB frames: each frame is within tungstenite's frame
    // limit, the message is over the cap.
    let (url, listener) = common::websocket_listener().await;
    tokio::spawn(async move {
        let mut socket = common::accept_mcp_websocket(&listener).await;
        let piece = vec![b'x'; 1024 * 1024];
        for i in 0..17 {
            let opcode = if i == 0 { Data::Text } else { Data::Continue };
            let frame = Frame::message(piece.clone(), OpCode::Data(opcode), i == 16);
            if socket.feed(Message::Frame(frame)).await.is_err() {
                return;
            }
        }
        let _ = socket.flush().await;
        while let Some(Ok(_)) = socket.next().await {}
    });
    let spec = RemoteSpec {
        url,
        ..RemoteSpec::default()
    };
    let mut transport = WebSocketTransport::connect("huge", &spec).await.unwrap();
    let received = tokio::time::timeout(Duration::from_secs(60), transport.receive())
        .await
        .expect("the transport took a message over the cap");
    assert!(received.is_none(), "{received:?}");
    transport.close().await.unwrap();
}
