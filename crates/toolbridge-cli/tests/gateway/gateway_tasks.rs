//! The gateway's own tasks (extension `io.modelcontextprotocol/tasks`) as a
//! 2026-07-28 client sees them on the wire: a long call of a server that
//! knows nothing of tasks answered with a task and polled to its result,
//! cancelled (its upstream call with it), invisible to another client; a
//! task-capable upstream's task followed inside the gateway's. Real gateway,
//! real upstreams (a Python `mcp` 1.x server with the conformance suite's
//! tools, server-everything), plain HTTP from reqwest.

use std::time::Duration;

use crate::common;
use crate::gateway_support;

use common::*;
use gateway_support::*;
use serde_json::{Value, json};

const TASKS: &str = "io.modelcontextprotocol/tasks";

/// The tasks fixture (tests/servers/tasks_fixture.py) over stdio.
fn fixture(home: &std::path::Path) -> std::path::PathBuf {
    let python = deps().join("py1/bin/python");
    write_config(
        home,
        json!({ "fixture": { "command": python, "args": [test_server("tasks_fixture.py"), "stdio"] } }),
    )
}

/// A stateless (2026-07-28) request `method` with `params` from a client
/// that declares the tasks extension, sent with bearer `token`: the
/// JSON-RPC answer.
async fn request(url: &str, token: &str, method: &str, params: Value) -> Value {
    let declared = json!({ "extensions": { TASKS: {} } });
    request_declaring(url, token, method, params, declared).await
}

/// [`request`] from a client that declares `capabilities`.
async fn request_declaring(
    url: &str,
    token: &str,
    method: &str,
    mut params: Value,
    capabilities: Value,
) -> Value {
    params["_meta"] = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientInfo": { "name": "tasks-test", "version": "1" },
        "io.modelcontextprotocol/clientCapabilities": capabilities,
    });
    let mut post = reqwest::Client::new()
        .post(url)
        .bearer_auth(token)
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2026-07-28")
        .header("mcp-method", method)
        .timeout(Duration::from_secs(30));
    if let Some(name) = params["name"].as_str().or(params["taskId"].as_str()) {
        post = post.header("mcp-name", name);
    }
    let response = post
        .json(&json!({ "jsonrpc": "2.0", "id": 3, "method": method, "params": params }))
        .send()
        .await
        .expect("POST to the gateway");
    let sse = response
        .headers()
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .is_some_and(|t| t.starts_with("text/event-stream"));
    let body = response.text().await.expect("the answer's body");
    let messages: Vec<Value> = if sse {
        body.lines()
            .filter_map(|l| l.strip_prefix("data:"))
            .filter_map(|d| serde_json::from_str(d.trim()).ok())
            .collect()
    } else {
        vec![serde_json::from_str(&body).expect("a JSON body")]
    };
    messages
        .into_iter()
        .find(|m| m["id"] == 3)
        .unwrap_or_else(|| panic!("no answer to {method} in {body}"))
}

/// Polls `tasks/get` of task `id` until it is in `status` (or ended); the
/// last answer.
async fn poll_until(url: &str, token: &str, id: &str, status: &str) -> Value {
    let got = poll_async(Duration::from_secs(60), || async {
        let got = request(url, token, "tasks/get", json!({ "taskId": id })).await;
        let now = got["result"]["status"].as_str().unwrap_or_default();
        (now == status || ["completed", "failed", "cancelled"].contains(&now)).then_some(got)
    })
    .await;
    got.unwrap_or_else(|| panic!("task {id} never reached {status}"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_long_call_of_a_server_without_tasks_runs_as_a_task_polled_to_its_result() {
    let home = tempfile::tempdir().unwrap();
    let gateway = Gateway::start(&fixture(home.path()), home.path(), &[]);
    tokio::task::block_in_place(|| gateway.wait_for_tools(&["greet", "slow_compute"]));
    let url = &gateway.url;

    // A quick call is answered as it comes, task or not.
    let quick = request(
        url,
        TOKEN,
        "tools/call",
        json!({ "name": "greet", "arguments": { "name": "T" } }),
    )
    .await;
    assert_eq!(quick["result"]["resultType"], "complete", "{quick}");
    assert_eq!(
        quick["result"]["content"][0]["text"], "Hello, T!",
        "{quick}"
    );

    // A long one is a task: its id first, then its result from tasks/get.
    let args = json!({ "seconds": 1, "label": "tide" });
    let created = request(
        url,
        TOKEN,
        "tools/call",
        json!({ "name": "slow_compute", "arguments": args }),
    )
    .await;
    let task = &created["result"];
    assert_eq!(task["resultType"], "task", "{created}");
    assert_eq!(task["status"], "working", "{created}");
    assert!(task["ttlMs"].as_u64().is_some_and(|t| t > 0), "{created}");
    let id = task["taskId"].as_str().expect("a task id").to_owned();
    assert_eq!(id.len(), 64, "32 random bytes: {id}");
    let working = request(url, TOKEN, "tasks/get", json!({ "taskId": id })).await;
    assert_eq!(working["result"]["taskId"], id.as_str(), "{working}");
    let done = poll_until(url, TOKEN, &id, "completed").await;
    assert_eq!(done["result"]["status"], "completed", "{done}");
    assert_eq!(done["result"]["resultType"], "complete", "{done}");
    assert_eq!(
        done["result"]["result"]["content"][0]["text"], "computed tide in 1s",
        "{done}"
    );

    // 2025-11-25's methods are not the extension's.
    let removed = request(url, TOKEN, "tasks/result", json!({ "taskId": id })).await;
    assert_eq!(removed["error"]["code"], -32601, "{removed}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cancelled_task_cancels_its_upstream_call() {
    let home = tempfile::tempdir().unwrap();
    let gateway = Gateway::start(&fixture(home.path()), home.path(), &[]);
    tokio::task::block_in_place(|| gateway.wait_for_tools(&["slow_compute"]));
    let url = &gateway.url;
    let args = json!({ "seconds": 60, "label": "never" });
    let created = request(
        url,
        TOKEN,
        "tools/call",
        json!({ "name": "slow_compute", "arguments": args }),
    )
    .await;
    let id = created["result"]["taskId"]
        .as_str()
        .expect("a task")
        .to_owned();

    let ack = request(url, TOKEN, "tasks/cancel", json!({ "taskId": id })).await;
    assert_eq!(ack["result"], json!({ "resultType": "complete" }), "{ack}");
    let got = request(url, TOKEN, "tasks/get", json!({ "taskId": id })).await;
    assert_eq!(got["result"]["status"], "cancelled", "{got}");
    // The upstream call ended with the task, long before its 60 s.
    let ended = poll_async(Duration::from_secs(20), || async {
        gateway
            .log()
            .lines()
            .any(|l| {
                l.contains("tool call") && l.contains("slow_compute") && l.contains("cancelled")
            })
            .then_some(())
    })
    .await;
    assert!(
        ended.is_some(),
        "the upstream call was not cancelled:\n{}",
        gateway.log()
    );
    // Cancelling again changes nothing.
    let again = request(url, TOKEN, "tasks/cancel", json!({ "taskId": id })).await;
    assert_eq!(again["result"]["resultType"], "complete", "{again}");
    let still = request(url, TOKEN, "tasks/get", json!({ "taskId": id })).await;
    assert_eq!(still["result"]["status"], "cancelled", "{still}");
}

/// A task whose upstream call waits for an answer to its question, when
/// cancelled, has that call cancelled before the question is answered (a
/// Python `mcp` 1.x upstream answered first resumes the call, and the
/// cancellation that comes while it finishes ends the upstream's whole
/// session, every response stream on it unanswered). The upstream
/// (tests/servers/cancel_order.py, over stdio: it reads the messages in the
/// order they were sent) tells the order.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cancelled_task_waiting_for_an_answer_is_cancelled_before_its_question_is_answered() {
    let home = tempfile::tempdir().unwrap();
    let python = deps().join("py1/bin/python");
    let config = write_config(
        home.path(),
        json!({ "order": { "command": python, "args": [test_server("cancel_order.py")] } }),
    );
    let gateway = Gateway::start(&config, home.path(), &[]);
    tokio::task::block_in_place(|| gateway.wait_for_tools(&["ask", "order"]));
    let url = &gateway.url;
    let declared = json!({ "elicitation": {}, "extensions": { TASKS: {} } });
    for round in 0..3 {
        let created = request_declaring(
            url,
            TOKEN,
            "tools/call",
            json!({ "name": "ask", "arguments": {} }),
            declared.clone(),
        )
        .await;
        let id = created["result"]["taskId"]
            .as_str()
            .unwrap_or_else(|| panic!("a task: {created}"))
            .to_owned();
        let waiting = poll_until(url, TOKEN, &id, "input_required").await;
        assert_eq!(waiting["result"]["status"], "input_required", "{waiting}");
        let ack = request(url, TOKEN, "tasks/cancel", json!({ "taskId": id })).await;
        assert_eq!(ack["result"], json!({ "resultType": "complete" }), "{ack}");

        // The cancellation reaches the upstream first, then the answer.
        let first = events_past(url, 2 * round).await;
        assert!(
            first[0].starts_with("cancelled "),
            "round {round}: the question was answered before the call was cancelled: {first:?}"
        );
        let then = events_past(url, 2 * round + 1).await;
        assert!(then[0].starts_with("answered "), "round {round}: {then:?}");
    }
}

/// The events cancel_order.py noted after the first `seen`, once there is
/// one.
async fn events_past(url: &str, seen: usize) -> Vec<String> {
    let events = poll_async(Duration::from_secs(20), || async {
        let got = request(
            url,
            TOKEN,
            "tools/call",
            json!({ "name": "order", "arguments": {} }),
        )
        .await;
        let text = got["result"]["content"][0]["text"]
            .as_str()
            .unwrap_or_default();
        let events: Vec<String> = text
            .split(',')
            .filter(|e| !e.is_empty())
            .skip(seen)
            .map(str::to_owned)
            .collect();
        (!events.is_empty()).then_some(events)
    })
    .await;
    events.unwrap_or_else(|| panic!("the upstream noted nothing past its first {seen} events"))
}

/// A named client token made with the real CLI.
fn client_token(config: &std::path::Path, name: &str) -> String {
    let output = std::process::Command::new(toolbridge())
        .arg("--config")
        .arg(config)
        .args(["serve", "token", "create", name])
        .env_remove("TOOLBRIDGE_CONFIG")
        .stdin(std::process::Stdio::null())
        .output()
        .expect("run toolbridge serve token create");
    assert!(output.status.success(), "{output:?}");
    String::from_utf8_lossy(&output.stdout).trim().to_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn another_client_cannot_see_or_cancel_the_task() {
    let home = tempfile::tempdir().unwrap();
    let config = fixture(home.path());
    let gateway = Gateway::start(&config, home.path(), &[]);
    tokio::task::block_in_place(|| gateway.wait_for_tools(&["slow_compute"]));
    let (alice, bob) = (client_token(&config, "alice"), client_token(&config, "bob"));
    let url = &gateway.url;
    let args = json!({ "seconds": 2, "label": "mine" });
    let created = request(
        url,
        &alice,
        "tools/call",
        json!({ "name": "slow_compute", "arguments": args }),
    )
    .await;
    let id = created["result"]["taskId"]
        .as_str()
        .expect("a task")
        .to_owned();

    // To bob the task does not exist: the answer for an id nobody made.
    let theirs = request(url, &bob, "tasks/get", json!({ "taskId": id })).await;
    let nobodys = request(url, &bob, "tasks/get", json!({ "taskId": "0".repeat(64) })).await;
    assert_eq!(theirs["error"]["code"], -32602, "{theirs}");
    assert_eq!(nobodys["error"]["code"], -32602, "{nobodys}");
    let cancel = request(url, &bob, "tasks/cancel", json!({ "taskId": id })).await;
    assert_eq!(cancel["error"]["code"], -32602, "{cancel}");
    // Nor to the admin token.
    let admin = request(url, TOKEN, "tasks/get", json!({ "taskId": id })).await;
    assert_eq!(admin["error"]["code"], -32602, "{admin}");

    // Alice's task went on: bob's cancel did nothing.
    let done = poll_until(url, &alice, &id, "completed").await;
    assert_eq!(
        done["result"]["result"]["content"][0]["text"], "computed mine in 2s",
        "{done}"
    );
}

/// Issue 25: server-everything's research tool is task-only (2025-11-25
/// tasks); a client's task of it is the gateway's, the upstream's task
/// followed inside it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_task_capable_upstreams_task_runs_inside_the_gateways_task() {
    let home = tempfile::tempdir().unwrap();
    let config = write_config(
        home.path(),
        json!({ "everything": { "command": "node", "args": [everything_js(), "stdio"] } }),
    );
    let gateway = Gateway::start(&config, home.path(), &[]);
    tokio::task::block_in_place(|| gateway.wait_for_tools(&["simulate-research-query"]));
    let url = &gateway.url;
    let args = json!({ "topic": "tides" });
    let created = request(
        url,
        TOKEN,
        "tools/call",
        json!({ "name": "simulate-research-query", "arguments": args }),
    )
    .await;
    assert_eq!(created["result"]["resultType"], "task", "{created}");
    let id = created["result"]["taskId"]
        .as_str()
        .expect("a task")
        .to_owned();
    assert_eq!(id.len(), 64, "the gateway's id, not the upstream's: {id}");
    let done = poll_until(url, TOKEN, &id, "completed").await;
    let text = done["result"]["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_default();
    assert!(text.contains("# Research Report: tides"), "{done}");
}

/// A 2025-11-25 session that declared the extension at `initialize` gets
/// the same tasks, on its session: created, polled, and not another
/// session's to see.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_that_declared_the_extension_gets_tasks_too() {
    let home = tempfile::tempdir().unwrap();
    let gateway = Gateway::start(&fixture(home.path()), home.path(), &[]);
    tokio::task::block_in_place(|| gateway.wait_for_tools(&["slow_compute"]));
    let mut session = RawClient::new(&gateway.url);
    session
        .initialize_with(json!({ "extensions": { TASKS: {} } }))
        .await;
    let created = session
        .call("slow_compute", json!({ "seconds": 1, "label": "session" }))
        .await;
    let created = created.body.unwrap_or_default();
    assert_eq!(created["result"]["resultType"], "task", "{created}");
    let id = created["result"]["taskId"]
        .as_str()
        .expect("a task")
        .to_owned();
    // Polled as poll_async polls (the session is borrowed mutably).
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    let done = loop {
        let got = session.request("tasks/get", json!({ "taskId": id })).await;
        let got = got.body.unwrap_or_default();
        if got["result"]["status"] == "completed" || std::time::Instant::now() > deadline {
            break got;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    assert_eq!(
        done["result"]["result"]["content"][0]["text"], "computed session in 1s",
        "{done}"
    );
    // A session without the extension: no tasks for it.
    let mut plain = RawClient::new(&gateway.url);
    plain.initialize().await;
    let answer = plain.request("tasks/get", json!({ "taskId": id })).await;
    let answer = answer.body.unwrap_or_default();
    assert_eq!(answer["error"]["code"], -32021, "{answer}");
}

/// A 2026-07-28 upstream's own input-required round goes back to the
/// client as it came (nothing runs while it answers); the retry that
/// outlasts the window is the gateway's task. The upstream is told the
/// client's own capabilities: a client that does not declare elicitation
/// gets the upstream's -32021, with the capability it lacks in `data`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_upstreams_own_input_round_goes_back_and_its_long_retry_is_a_task() {
    let home = tempfile::tempdir().unwrap();
    let config = write_config(
        home.path(),
        json!({ "fixture26": { "command": python(), "args": [test_server("tasks_fixture_2026.py")] } }),
    );
    let gateway = Gateway::start(&config, home.path(), &[]);
    tokio::task::block_in_place(|| gateway.wait_for_tools(&["test_tool_with_task"]));
    let url = &gateway.url;
    let call = json!({ "name": "test_tool_with_task", "arguments": {} });
    let refused = request(url, TOKEN, "tools/call", call.clone()).await;
    assert_eq!(refused["error"]["code"], -32021, "{refused}");
    assert!(
        refused["error"]["data"]["requiredCapabilities"]["elicitation"].is_object(),
        "{refused}"
    );
    let declared = json!({ "extensions": { TASKS: {} }, "elicitation": { "form": {} } });
    let ask = |params: Value| request_declaring(url, TOKEN, "tools/call", params, declared.clone());
    let round = ask(call.clone()).await;
    let asked = &round["result"];
    assert_eq!(asked["resultType"], "input_required", "{round}");
    assert!(asked.get("taskId").is_none(), "{round}");
    let key = asked["inputRequests"]
        .as_object()
        .and_then(|r| r.keys().next().cloned())
        .expect("a question");
    let mut retry = call;
    retry["inputResponses"] = json!({ key: { "action": "accept", "content": { "name": "Ada" } } });
    retry["requestState"] = asked["requestState"].clone();
    let created = ask(retry).await;
    assert_eq!(created["result"]["resultType"], "task", "{created}");
    let id = created["result"]["taskId"]
        .as_str()
        .expect("a task")
        .to_owned();
    let done = poll_until(url, TOKEN, &id, "completed").await;
    assert_eq!(
        done["result"]["result"]["content"][0]["text"], "Hello, Ada!",
        "{done}"
    );
}
