//! 2025-11-25 session requests to `toolbridge serve` as a client sees them
//! on the wire (issue 31): a session's plain `tools/call` is answered with
//! one JSON body, shaped as rmcp's event stream would have carried it; a
//! call that may bring something before its result (a progress token, a
//! client that can be asked) still gets rmcp's event stream; a cancelled
//! call ends without an answer and is cancelled upstream; a client's
//! disconnect does not end its call. Real gateway, the real example server,
//! plain HTTP from reqwest.

use std::time::Duration;

use crate::common;
use crate::gateway_support;

use common::*;
use gateway_support::*;
use serde_json::{Value, json};

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a tokio runtime")
}

/// A gateway in front of the example server, at debug level (its log has
/// each call's arguments and the server's stderr).
fn gateway(home: &std::path::Path) -> Gateway {
    let config = write_config(
        home,
        json!({ "example": { "command": toolbridge(), "args": ["example-server"] } }),
    );
    let gateway = Gateway::start(&config, home, &["-v"]);
    gateway.wait_for_tools(&["echo", "slow"]);
    gateway
}

fn content_type(answer: &Answer) -> &str {
    answer.header("content-type")
}

#[test]
fn a_session_tool_call_is_answered_with_one_json_body_as_rmcp_would_shape_it() {
    let home = tempfile::tempdir().unwrap();
    let gateway = gateway(home.path());
    runtime().block_on(async {
        let mut client = RawClient::keep_alive(&gateway.url, TOKEN);
        client.initialize().await;
        let plain = client.call("echo", json!({ "text": "hi" })).await;
        assert_eq!(plain.status, 200, "{plain:?}");
        assert_eq!(content_type(&plain), "application/json", "{plain:?}");
        // With a progress token rmcp's session answers (an event stream):
        // the same result, as rmcp shapes it for a 2025-11-25 client.
        let streamed = client
            .request(
                "tools/call",
                json!({ "name": "echo", "arguments": { "text": "hi" },
                        "_meta": { "progressToken": "p" } }),
            )
            .await;
        assert!(
            content_type(&streamed).starts_with("text/event-stream"),
            "{streamed:?}"
        );
        let result = |answer: &Answer| -> Value {
            answer.body.as_ref().expect("an answer")["result"].clone()
        };
        assert_eq!(result(&plain), result(&streamed));
        assert_eq!(result(&plain)["content"][0]["text"], "hi", "{plain:?}");
        assert!(result(&plain).get("resultType").is_none(), "{plain:?}");
        // An unknown tool: the error in the JSON body, as in the stream.
        let unknown = client.call("nope", json!({})).await;
        assert_eq!(content_type(&unknown), "application/json", "{unknown:?}");
        let error = &unknown.body.as_ref().expect("an answer")["error"];
        assert!(
            error["message"]
                .as_str()
                .unwrap_or_default()
                .contains("nope"),
            "{unknown:?}"
        );
    });
}

#[test]
fn a_session_whose_client_can_be_asked_keeps_the_event_stream() {
    // An upstream may elicit mid-call: the question must ride the call's
    // own stream, so the call stays on rmcp's session path.
    let home = tempfile::tempdir().unwrap();
    let gateway = gateway(home.path());
    runtime().block_on(async {
        let mut client = RawClient::keep_alive(&gateway.url, TOKEN);
        client.initialize_with(json!({ "elicitation": {} })).await;
        let answer = client.call("echo", json!({ "text": "hi" })).await;
        assert!(
            content_type(&answer).starts_with("text/event-stream"),
            "{answer:?}"
        );
        let body = answer.body.expect("an answer");
        assert_eq!(body["result"]["content"][0]["text"], "hi");
    });
}

#[test]
fn a_session_call_the_client_cancels_ends_without_an_answer_and_upstream() {
    let home = tempfile::tempdir().unwrap();
    let gateway = gateway(home.path());
    runtime().block_on(async {
        let mut client = RawClient::keep_alive(&gateway.url, TOKEN);
        client.initialize().await;
        let mut canceller = RawClient::keep_alive(&gateway.url, TOKEN);
        canceller.session = client.session.clone();
        // The call is request 2 (the initialize was 1).
        let call = tokio::spawn(async move { client.call("slow", json!({ "ms": 60_000 })).await });
        let started = poll_async(Duration::from_secs(10), || async {
            gateway
                .log()
                .lines()
                .any(|l| l.contains("tool call arguments") && l.contains("slow"))
                .then_some(())
        })
        .await;
        assert!(
            started.is_some(),
            "the call never started: {}",
            gateway.log()
        );
        let notified = canceller
            .notify(
                "notifications/cancelled",
                json!({ "requestId": 2, "reason": "the user gave up" }),
            )
            .await;
        assert_eq!(notified.status, 202, "{notified:?}");
        let answer = tokio::time::timeout(Duration::from_secs(20), call)
            .await
            .expect("the cancelled call's POST ended")
            .expect("the call task");
        assert_eq!(answer.status, 200, "{answer:?}");
        assert!(
            answer.body.is_none(),
            "a cancelled call got an answer: {answer:?}"
        );
        let cancelled = wait_until(Duration::from_secs(10), || {
            let log = gateway.log();
            log.lines()
                .any(|l| l.contains(r#"tool="slow""#) && l.contains(r#"outcome="cancelled""#))
                && log.contains("slow: cancelled after")
        });
        assert!(cancelled, "{}", gateway.log());
    });
}

#[test]
fn a_session_call_outlives_its_clients_disconnect() {
    // The spec: a disconnection is not a cancellation. The call runs on and
    // is audited as done.
    let home = tempfile::tempdir().unwrap();
    let gateway = gateway(home.path());
    runtime().block_on(async {
        let mut client = RawClient::keep_alive(&gateway.url, TOKEN);
        client.initialize().await;
        let session = client.session.clone().expect("a session");
        // Gone either way: timed out waiting for a JSON answer, or the
        // event stream's response dropped unread.
        let _gone = reqwest::Client::new()
            .post(&gateway.url)
            .bearer_auth(TOKEN)
            .header("accept", "application/json, text/event-stream")
            .header("mcp-session-id", session)
            .header("mcp-protocol-version", "2025-11-25")
            .timeout(Duration::from_millis(300))
            .json(&json!({ "jsonrpc": "2.0", "id": 9, "method": "tools/call",
                           "params": { "name": "slow", "arguments": { "ms": 1_500 } } }))
            .send()
            .await;
    });
    let done = wait_until(Duration::from_secs(20), || {
        gateway
            .log()
            .lines()
            .any(|l| l.contains(r#"tool="slow""#) && l.contains(r#"outcome="ok""#))
    });
    assert!(done, "{}", gateway.log());
    assert!(
        !gateway.log().contains("slow: cancelled after"),
        "{}",
        gateway.log()
    );
}
