//! Issue 32's fourth and ninth findings, as the probe ran them: raw HTTP
//! against a real `toolbridge serve` (the example server upstream), from
//! this test's user and from a second local user (uid 65534, raw sockets).
//! Sessions are capped per client and in all, a client's requests in flight
//! are capped while another client is served, and a request that reuses the
//! id of one in flight gets an error instead of being held.

use crate::common;
use crate::gateway_support;

use std::{path::Path, time::Duration};

use common::{poll_async, tempdir, toolbridge};
use gateway_support::{
    Gateway, RawClient, TOKEN, as_other_user, http_text, status_of, write_config,
};
use serde_json::{Value, json};

fn example_config(dir: &Path) -> std::path::PathBuf {
    write_config(
        dir,
        json!({ "example": { "command": toolbridge(), "args": ["example-server"] } }),
    )
}

const INITIALIZE: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"probe","version":"1"}}}"#;

/// A raw `initialize` from the second local user: its whole HTTP answer.
fn initialize_as_other_user(gateway: &Gateway) -> String {
    let addr = gateway.addr();
    as_other_user(
        &addr,
        &http_text(
            &addr,
            "POST",
            "/mcp",
            &[
                &format!("Authorization: Bearer {TOKEN}"),
                "Accept: application/json, text/event-stream",
            ],
            INITIALIZE,
        ),
    )
}

/// A raw POST of `message` (in `session`, if any) from this test's user.
async fn post(gateway: &Gateway, session: Option<&str>, message: &Value) -> (u16, Value, String) {
    let mut request = reqwest::Client::new()
        .post(&gateway.url)
        .bearer_auth(TOKEN)
        .header("accept", "application/json, text/event-stream")
        .timeout(Duration::from_secs(60))
        .json(message);
    if let Some(session) = session {
        request = request
            .header("mcp-session-id", session)
            .header("mcp-protocol-version", "2025-11-25");
    }
    let response = request.send().await.expect("POST to the gateway");
    let status = response.status().as_u16();
    let text = response.text().await.unwrap_or_default();
    let body = serde_json::from_str(&text)
        .ok()
        .or_else(|| {
            text.lines()
                .filter_map(|l| l.strip_prefix("data:"))
                .filter_map(|d| serde_json::from_str::<Value>(d.trim()).ok())
                .find(|v| v.get("id").is_some())
        })
        .unwrap_or(Value::Null);
    (status, body, text)
}

fn error_message(body: &Value) -> &str {
    body.pointer("/error/message")
        .and_then(Value::as_str)
        .unwrap_or_default()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sessions_are_capped_per_client_and_in_all_and_a_deleted_session_frees_its_slot() {
    let home = tempdir();
    let config = example_config(home.path());
    let gateway = Gateway::start(
        &config,
        home.path(),
        &["--max-sessions-per-client", "3", "--max-sessions", "4"],
    );
    let mut mine = Vec::new();
    for _ in 0..3 {
        let mut client = RawClient::new(&gateway.url);
        client.initialize().await;
        mine.push(client);
    }
    // The fourth of this user's sessions: 429, naming the limit.
    let (status, body, text) =
        post(&gateway, None, &serde_json::from_str(INITIALIZE).unwrap()).await;
    assert_eq!(status, 429, "{text}");
    let message = error_message(&body);
    assert!(
        message.contains("local user")
            && message.contains("3 MCP sessions open")
            && message.contains("--max-sessions-per-client"),
        "{text}"
    );
    assert_eq!(body["id"], 1, "{text}");

    // Another local user is another client: its first session opens (the
    // fourth in all), its second is past the gateway's limit: 503.
    let theirs = initialize_as_other_user(&gateway);
    assert_eq!(status_of(&theirs), "200", "{theirs}");
    let full = initialize_as_other_user(&gateway);
    assert_eq!(status_of(&full), "503", "{full}");
    assert!(
        full.contains("4 MCP sessions open") && full.contains("--max-sessions)"),
        "{full}"
    );

    // The sessions already open go on.
    let listed = mine[0].request("tools/list", json!({})).await;
    assert_eq!(listed.status, 200, "{listed:?}");
    assert!(
        listed
            .body
            .as_ref()
            .and_then(|b| b.pointer("/result/tools"))
            .is_some(),
        "{listed:?}"
    );

    // A DELETEd session frees its slot.
    let session = mine[0].session.clone().expect("a session");
    let deleted = reqwest::Client::new()
        .delete(&gateway.url)
        .bearer_auth(TOKEN)
        .header("mcp-session-id", &session)
        .header("mcp-protocol-version", "2025-11-25")
        .send()
        .await
        .expect("DELETE");
    assert!(deleted.status().is_success(), "{deleted:?}");
    let gateway = &gateway;
    let reopened = poll_async(Duration::from_secs(30), || async move {
        let (status, _, _) = post(gateway, None, &serde_json::from_str(INITIALIZE).unwrap()).await;
        (status == 200).then_some(())
    })
    .await;
    assert!(
        reopened.is_some(),
        "the DELETEd session's slot was never freed"
    );
}

fn slow(id: u64, ms: u64) -> Value {
    json!({ "jsonrpc": "2.0", "id": id, "method": "tools/call",
            "params": { "name": "slow", "arguments": { "ms": ms } } })
}

fn ping(id: u64) -> Value {
    json!({ "jsonrpc": "2.0", "id": id, "method": "ping" })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_clients_requests_past_its_limit_get_an_error_while_another_client_is_served() {
    let home = tempdir();
    let config = example_config(home.path());
    let gateway = Gateway::start(&config, home.path(), &["--max-calls-per-client", "2"]);
    let mut client = RawClient::new(&gateway.url);
    client.initialize().await;
    let session = client.session.clone().expect("a session");
    let url = gateway.url.clone();
    // Two slow calls, each dropped by its client once the call runs (its
    // first progress came): the calls go on upstream, and still count.
    let held: Vec<_> = (0..2)
        .map(|i| {
            let (url, session) = (url.clone(), session.clone());
            tokio::spawn(async move {
                let mut call = slow(100 + i, 20_000);
                call["params"]["_meta"] = json!({ "progressToken": i });
                let mut response = reqwest::Client::new()
                    .post(&url)
                    .bearer_auth(TOKEN)
                    .header("accept", "application/json, text/event-stream")
                    .header("mcp-session-id", &session)
                    .header("mcp-protocol-version", "2025-11-25")
                    .json(&call)
                    .send()
                    .await
                    .expect("a slow call");
                let mut seen = String::new();
                while !seen.contains("notifications/progress") {
                    match response.chunk().await {
                        Ok(Some(chunk)) => seen.push_str(&String::from_utf8_lossy(&chunk)),
                        other => {
                            panic!("the slow call ended before its progress: {other:?} {seen}")
                        }
                    }
                }
            })
        })
        .collect();
    for task in held {
        task.await.unwrap();
    }
    // A third request of this client is refused.
    let (gateway_ref, session_ref) = (&gateway, session.as_str());
    let (status, body, text) = post(&gateway, Some(&session), &ping(8)).await;
    assert_eq!(status, 200, "{text}");
    assert_eq!(body["id"], 8, "{text}");
    let message = error_message(&body);
    assert!(
        message.contains("2 requests in flight") && message.contains("--max-calls-per-client"),
        "{text}"
    );

    // Another local user, another client: served meanwhile.
    let addr = gateway.addr();
    let theirs = as_other_user(
        &addr,
        &http_text(
            &addr,
            "POST",
            "/mcp",
            &[
                &format!("Authorization: Bearer {TOKEN}"),
                "Accept: application/json, text/event-stream",
                "MCP-Protocol-Version: 2026-07-28",
                "Mcp-Method: tools/call",
                "Mcp-Name: echo",
            ],
            &json!({ "jsonrpc": "2.0", "id": 1, "method": "tools/call",
                     "params": { "name": "echo", "arguments": { "text": "other user" },
                                 "_meta": { "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                                            "io.modelcontextprotocol/clientCapabilities": {} } } })
            .to_string(),
        ),
    );
    assert_eq!(status_of(&theirs), "200", "{theirs}");
    assert!(theirs.contains("other user"), "{theirs}");

    // The calls ending frees their slots.
    let freed = poll_async(Duration::from_secs(90), || async move {
        let (_, body, _) = post(gateway_ref, Some(session_ref), &ping(9)).await;
        body.get("result").map(|_| ())
    })
    .await;
    assert!(
        freed.is_some(),
        "the slots of requests that ended were never freed"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_request_reusing_the_id_of_one_in_flight_gets_an_error_answer() {
    let home = tempdir();
    let config = example_config(home.path());
    let gateway = Gateway::start(&config, home.path(), &[]);
    let mut client = RawClient::new(&gateway.url);
    client.initialize().await;
    let session = client.session.clone().expect("a session");
    let (gateway_ref, session_ref) = (&gateway, session.as_str());
    let first = tokio::spawn({
        let (url, session) = (gateway.url.clone(), session.clone());
        async move {
            let response = reqwest::Client::new()
                .post(&url)
                .bearer_auth(TOKEN)
                .header("accept", "application/json, text/event-stream")
                .header("mcp-session-id", &session)
                .header("mcp-protocol-version", "2025-11-25")
                // Long enough that the two pings below land while it is in
                // flight on a loaded machine (3 s was not: CI's load can
                // spend that on the upstream's start and the first pings).
                .json(&slow(42, 15_000))
                .send()
                .await
                .expect("the first request");
            response.text().await.unwrap_or_default()
        }
    });
    // A ping with id 42 while the call 42 is in flight: answered at once
    // with an error (before the call arrives, it is a ping like any other).
    let answered = poll_async(Duration::from_secs(30), || async move {
        let (_, body, _) = post(gateway_ref, Some(session_ref), &ping(42)).await;
        error_message(&body)
            .contains("request id 42 is already in flight")
            .then_some(())
    })
    .await;
    assert!(
        answered.is_some(),
        "the reused id was never answered with an error"
    );
    let (status, body, text) = post(&gateway, Some(&session), &ping(42)).await;
    assert_eq!((status, body["id"].clone()), (200, json!(42)), "{text}");
    assert_eq!(body.pointer("/error/code"), Some(&json!(-32600)), "{text}");
    // The first request with that id still gets its own answer.
    let first = tokio::time::timeout(Duration::from_secs(60), first)
        .await
        .expect("the first call's answer")
        .unwrap();
    assert!(
        first.contains("\"id\":42") && first.contains("result"),
        "{first}"
    );
}
