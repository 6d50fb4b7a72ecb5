//! Stateless (2026-07-28) requests to `toolbridge serve`, as a client sees
//! them on the wire: a plain call or list is answered with one JSON body; a
//! call that brings progress or log messages gets an event stream with them
//! in order, the result last. Real gateway, real upstreams (the example
//! server, a Python SDK server that logs), plain HTTP from reqwest.

use crate::common;
use crate::gateway_support;

use common::*;
use gateway_support::*;
use serde_json::{Value, json};

/// A runtime for the requests (`Gateway::wait_for_tools` runs its own, so
/// the tests are plain ones).
fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a tokio runtime")
}

/// The `_meta` every 2026-07-28 request carries, plus `extra` entries.
fn meta(extra: Value) -> Value {
    let mut meta = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientInfo": { "name": "stateless-test", "version": "1" },
        "io.modelcontextprotocol/clientCapabilities": {},
    });
    if let (Some(meta), Some(extra)) = (meta.as_object_mut(), extra.as_object()) {
        meta.extend(extra.clone());
    }
    meta
}

/// An answer: its `Content-Type` and the JSON-RPC messages it carried (one
/// for a JSON body; each event's for an event stream).
struct Reply {
    content_type: String,
    messages: Vec<Value>,
}

/// POSTs the stateless request `method` with `params` (and the SEP-2243
/// headers a 2026-07-28 client sends).
async fn post(url: &str, method: &str, params: Value) -> Reply {
    let mut request = reqwest::Client::new()
        .post(url)
        .bearer_auth(TOKEN)
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2026-07-28")
        .header("mcp-method", method);
    if let Some(name) = params["name"].as_str() {
        request = request.header("mcp-name", name);
    }
    let response = request
        .json(&json!({ "jsonrpc": "2.0", "id": 5, "method": method, "params": params }))
        .send()
        .await
        .expect("POST to the gateway");
    assert_eq!(response.status(), 200, "{method}");
    let content_type = response
        .headers()
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_owned();
    let body = response.text().await.expect("the answer's body");
    let messages = if content_type.starts_with("text/event-stream") {
        body.lines()
            .filter_map(|line| line.strip_prefix("data:"))
            .filter(|data| !data.trim().is_empty())
            .map(|data| serde_json::from_str(data.trim()).expect("an event's JSON"))
            .collect()
    } else {
        vec![serde_json::from_str(&body).expect("a JSON body")]
    };
    Reply {
        content_type,
        messages,
    }
}

#[test]
fn a_plain_stateless_call_gets_json_and_one_with_progress_an_event_stream() {
    let home = tempfile::tempdir().unwrap();
    let config = write_config(
        home.path(),
        json!({ "example": { "command": toolbridge(), "args": ["example-server"] } }),
    );
    let gateway = Gateway::start(&config, home.path(), &[]);
    gateway.wait_for_tools(&["echo"]);
    runtime().block_on(async {
        let call = post(
            &gateway.url,
            "tools/call",
            json!({ "name": "echo", "arguments": { "text": "plain" }, "_meta": meta(json!({})) }),
        )
        .await;
        assert_eq!(call.content_type, "application/json");
        assert_eq!(call.messages.len(), 1);
        assert_eq!(call.messages[0]["id"], 5);
        assert_eq!(call.messages[0]["result"]["content"][0]["text"], "plain");
        assert_eq!(call.messages[0]["result"]["resultType"], "complete");

        let list = post(
            &gateway.url,
            "tools/list",
            json!({ "_meta": meta(json!({})) }),
        )
        .await;
        assert_eq!(list.content_type, "application/json");
        let tools = list.messages[0]["result"]["tools"].as_array().unwrap();
        assert!(tools.iter().any(|t| t["name"] == "echo"), "{tools:?}");

        // A call unknown to the gateway: a JSON-RPC answer all the same.
        let unknown = post(
            &gateway.url,
            "tools/call",
            json!({ "name": "nope", "arguments": {}, "_meta": meta(json!({})) }),
        )
        .await;
        assert_eq!(unknown.messages.len(), 1, "{:?}", unknown.messages);
        assert_eq!(unknown.messages[0]["id"], 5);

        // Progress needs a stream: each step under the client's token, then
        // the result.
        let slow = post(
            &gateway.url,
            "tools/call",
            json!({
                "name": "slow",
                "arguments": { "ms": 300 },
                "_meta": meta(json!({ "progressToken": "mine" })),
            }),
        )
        .await;
        assert!(
            slow.content_type.starts_with("text/event-stream"),
            "{}",
            slow.content_type
        );
        let (last, progress) = slow.messages.split_last().expect("messages");
        assert_eq!(last["id"], 5, "the result comes last: {:?}", slow.messages);
        assert!(
            last["result"]["content"][0]["text"]
                .as_str()
                .is_some_and(|t| t.contains("slept 300 ms"))
        );
        assert!(!progress.is_empty(), "no progress: {:?}", slow.messages);
        assert!(
            progress
                .iter()
                .all(|m| m["method"] == "notifications/progress"
                    && m["params"]["progressToken"] == "mine"),
            "{progress:?}"
        );
    });
}

#[test]
fn a_log_message_sent_during_a_stateless_call_arrives_before_its_result() {
    let home = tempfile::tempdir().unwrap();
    let server = root().join("crates/toolbridge-cli/tests/interop/logging_server.py");
    let config = write_config(
        home.path(),
        json!({ "py": { "command": python(), "args": [server] } }),
    );
    let gateway = Gateway::start(&config, home.path(), &[]);
    gateway.wait_for_tools(&["whisper"]);
    runtime().block_on(async {
        let call = post(
            &gateway.url,
            "tools/call",
            json!({
                "name": "whisper",
                "arguments": { "text": "psst" },
                "_meta": meta(json!({ "io.modelcontextprotocol/logLevel": "info" })),
            }),
        )
        .await;
        assert!(
            call.content_type.starts_with("text/event-stream"),
            "{}",
            call.content_type
        );
        let [log, result] = call.messages.as_slice() else {
            panic!("a log message then the result: {:?}", call.messages);
        };
        assert_eq!(log["method"], "notifications/message", "{log}");
        assert_eq!(log["params"]["data"], "about to say psst", "{log}");
        assert_eq!(result["id"], 5, "{result}");
        assert_eq!(result["result"]["content"][0]["text"], "psst", "{result}");
    });
}

#[test]
fn a_client_that_can_be_asked_gets_the_question_in_its_result_and_answers_in_its_retry() {
    // server-everything speaks 2025-11-25 and asks with elicitation/create
    // mid-call; this client declares elicitation, so the gateway holds the
    // upstream call and puts the question in the answer.
    let home = tempfile::tempdir().unwrap();
    let config = write_config(
        home.path(),
        json!({ "everything": { "command": "node", "args": [everything_js(), "stdio"] } }),
    );
    let gateway = Gateway::start(&config, home.path(), &[]);
    gateway.wait_for_tools(&["trigger-elicitation-request"]);
    runtime().block_on(async {
        let (question, result) = ask_and_answer(
            &gateway.url,
            "tools/call",
            json!({ "name": "trigger-elicitation-request", "arguments": {} }),
            json!({ "action": "accept", "content": { "reply": "wire answer" } }),
        )
        .await;
        assert_eq!(question["method"], "elicitation/create", "{question}");
        assert!(
            result.to_string().contains("wire answer"),
            "the upstream never got the answer: {result}"
        );
    });
}

/// A request `method` with `params` from a client that declares
/// elicitation, whose upstream asks it one question: checks the first
/// answer is an `InputRequiredResult` (JSON), retries with `answer` and the
/// `requestState`, checks that answer is complete; the question and the
/// final result.
async fn ask_and_answer(url: &str, method: &str, params: Value, answer: Value) -> (Value, Value) {
    let asking = json!({ "io.modelcontextprotocol/clientCapabilities": { "elicitation": {} } });
    let mut first_params = params.clone();
    first_params["_meta"] = meta(asking.clone());
    let first = post(url, method, first_params).await;
    assert_eq!(first.content_type, "application/json");
    let result = &first.messages[0]["result"];
    assert_eq!(result["resultType"], "input_required", "{result}");
    let (key, question) = result["inputRequests"]
        .as_object()
        .and_then(|asked| asked.iter().next())
        .unwrap_or_else(|| panic!("no input request: {result}"));
    let state = result["requestState"].as_str().expect("a requestState");

    let mut retry_params = params;
    retry_params["inputResponses"] = json!({ key: answer });
    retry_params["requestState"] = json!(state);
    retry_params["_meta"] = meta(asking);
    let retry = post(url, method, retry_params).await;
    let result = retry.messages.last().expect("an answer")["result"].clone();
    assert_eq!(result["resultType"], "complete", "{result}");
    (question.clone(), result)
}

#[test]
fn a_client_that_goes_away_mid_call_cancels_it_upstream() {
    // The client hanging up ends its call: cancelled upstream, audited as
    // cancelled.
    let home = tempfile::tempdir().unwrap();
    let config = write_config(
        home.path(),
        json!({ "example": { "command": toolbridge(), "args": ["example-server"] } }),
    );
    // At debug level the gateway logs its servers' stderr, where the example
    // server says when a call was cancelled.
    let gateway = Gateway::start(&config, home.path(), &["-v"]);
    gateway.wait_for_tools(&["slow"]);
    runtime().block_on(async {
        let gone = reqwest::Client::new()
            .post(&gateway.url)
            .bearer_auth(TOKEN)
            .header("accept", "application/json, text/event-stream")
            .header("mcp-protocol-version", "2026-07-28")
            .header("mcp-method", "tools/call")
            .header("mcp-name", "slow")
            .timeout(std::time::Duration::from_millis(500))
            .json(
                &json!({ "jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
                "name": "slow", "arguments": { "ms": 60_000 }, "_meta": meta(json!({})),
            } }),
            )
            .send()
            .await;
        assert!(gone.is_err_and(|e| e.is_timeout()));
    });
    let cancelled = wait_until(std::time::Duration::from_secs(10), || {
        let log = gateway.log();
        log.lines()
            .any(|l| l.contains(r#"tool="slow""#) && l.contains(r#"outcome="cancelled""#))
            && log.contains("slow: cancelled after")
    });
    assert!(cancelled, "{}", gateway.log());
}

#[test]
fn a_prompt_whose_server_asks_mid_way_is_held_like_a_call() {
    // A 2025-11-25 Python SDK server elicits while it builds its prompt; a
    // stateless client that declares elicitation gets the question in the
    // answer to its `prompts/get`, and its retry gets the prompt.
    let home = tempfile::tempdir().unwrap();
    let server = root().join("crates/toolbridge-cli/tests/interop/asking_server.py");
    let config = write_config(
        home.path(),
        json!({ "py": { "command": deps().join("py1/bin/python"), "args": [server] } }),
    );
    let gateway = Gateway::start(&config, home.path(), &[]);
    runtime().block_on(async {
        // The first request also starts the server (it is started lazily).
        let (question, result) = ask_and_answer(
            &gateway.url,
            "prompts/get",
            json!({ "name": "greet" }),
            json!({ "action": "accept", "content": { "name": "Ada" } }),
        )
        .await;
        assert_eq!(
            question["params"]["message"], "Whom should I greet?",
            "{question}"
        );
        assert_eq!(
            result["messages"][0]["content"]["text"], "Hello, Ada!",
            "{result}"
        );
    });
}

#[test]
fn stateless_calls_show_on_the_pages_home_as_one_client_with_its_calls() {
    let home = tempfile::tempdir().unwrap();
    let config = write_config(
        home.path(),
        json!({ "example": { "command": toolbridge(), "args": ["example-server"] } }),
    );
    let gateway = Gateway::start(&config, home.path(), &[]);
    gateway.wait_for_tools(&["echo"]);
    runtime().block_on(async {
        for text in ["one", "two"] {
            let call = post(
                &gateway.url,
                "tools/call",
                json!({ "name": "echo", "arguments": { "text": text }, "_meta": meta(json!({})) }),
            )
            .await;
            assert_eq!(call.messages[0]["result"]["content"][0]["text"], text);
        }
        let page = gateway.url.trim_end_matches("/mcp");
        let home: Value = reqwest::Client::new()
            .get(format!("{page}/api/home"))
            .bearer_auth(TOKEN)
            .send()
            .await
            .expect("GET /api/home")
            .json()
            .await
            .expect("the Home's JSON");
        let clients = home["clients"].as_array().expect("the clients");
        let mine: Vec<&Value> = clients
            .iter()
            .filter(|c| c["name"] == "stateless-test")
            .collect();
        assert_eq!(mine.len(), 1, "{home}");
        assert_eq!(mine[0]["calls"], 2, "{home}");
        assert_eq!(mine[0]["protocol"], "2026-07-28", "{home}");
        assert_eq!(mine[0]["stateless"], true, "{home}");
    });
}
/// Issue 24: a stateless client's call went through the pool's general
/// request, not its tool call, so a task-only tool was sent plainly and
/// server-everything refused it ("requires task augmentation"). Both
/// stateless ways: a client that declares nothing (its call relayed) and
/// one that can be asked (its call held).
#[test]
fn a_stateless_call_of_a_task_only_tool_is_run_as_a_task() {
    let home = tempfile::tempdir().unwrap();
    let config = write_config(
        home.path(),
        json!({ "everything": { "command": "node", "args": [everything_js(), "stdio"] } }),
    );
    let gateway = Gateway::start(&config, home.path(), &[]);
    gateway.wait_for_tools(&["simulate-research-query"]);
    runtime().block_on(async {
        for declared in [json!({}), json!({ "elicitation": {} })] {
            let call = post(
                &gateway.url,
                "tools/call",
                json!({
                    "name": "simulate-research-query",
                    "arguments": { "topic": "tides" },
                    "_meta": meta(json!({ "io.modelcontextprotocol/clientCapabilities": declared })),
                }),
            )
            .await;
            let answer = call.messages.last().cloned().unwrap_or_default();
            let text = answer["result"]["content"][0]["text"]
                .as_str()
                .unwrap_or_default();
            assert!(
                text.contains("# Research Report: tides"),
                "declaring {declared}: {answer}"
            );
        }
    });
}

/// Issue 24: a stateless client's call of a tool its server no longer has
/// (the gateway's list is older) was the server's own refusal, the stale
/// list kept; a session's call was `UnknownTool`, naming the tools there
/// are. Now the same for both.
#[test]
fn a_stateless_call_of_a_tool_its_server_dropped_names_the_tools_there_are() {
    let home = tempfile::tempdir().unwrap();
    let tools_file = home.path().join("tools");
    std::fs::write(&tools_file, "ping,gone").unwrap();
    let config = write_config(
        home.path(),
        json!({ "shifting": {
            "command": python(),
            "args": [test_server("tool_cache.py")],
            "env": {
                "STARTS_FILE": home.path().join("starts"),
                "TOOLS_FILE": tools_file,
                "TOOLS_LIVE": "1",
            },
        } }),
    );
    let gateway = Gateway::start(&config, home.path(), &[]);
    gateway.wait_for_tools(&["ping", "gone"]);
    std::fs::write(&tools_file, "ping").unwrap();
    runtime().block_on(async {
        let call = post(
            &gateway.url,
            "tools/call",
            json!({ "name": "gone", "arguments": {}, "_meta": meta(json!({})) }),
        )
        .await;
        let answer = call.messages.last().cloned().unwrap_or_default();
        let message = answer["error"]["message"].as_str().unwrap_or_default();
        assert!(
            message.contains("has no tool \"gone\"") && message.contains("ping"),
            "{answer}"
        );
    });
}

/// The requests with `method` in `record` (what `tee` saw a client send
/// an upstream).
fn recorded(record: &std::path::Path, method: &str) -> usize {
    std::fs::read_to_string(record)
        .unwrap_or_default()
        .lines()
        .filter_map(|line| serde_json::from_str::<Value>(line).ok())
        .filter(|message| message["method"] == method)
        .count()
}

/// Issue 24: the gateway listed prompts and resources with a copy of the
/// pager of its own, uncached, so every client's list reached every
/// upstream. Now the pool's cached listing: a second list is answered
/// from the cache (until the server says its list changed).
#[test]
fn a_second_prompts_list_does_not_reach_the_upstream() {
    let home = tempfile::tempdir().unwrap();
    let record = home.path().join("upstream.jsonl");
    let config = write_config(
        home.path(),
        json!({ "catalog": {
            "command": "sh",
            "args": ["-c", r#"tee -a "$0" | exec "$1" "$2""#, record, python(), test_server("catalog_server.py")],
        } }),
    );
    let gateway = Gateway::start(&config, home.path(), &[]);
    gateway.wait_for_tools(&["add"]);
    runtime().block_on(async {
        for _ in 0..2 {
            let list = post(
                &gateway.url,
                "prompts/list",
                json!({ "_meta": meta(json!({})) }),
            )
            .await;
            let prompts = list.messages[0]["result"]["prompts"].clone();
            assert!(
                prompts
                    .as_array()
                    .is_some_and(|p| p.iter().any(|p| p["name"] == "greet")),
                "{:?}",
                list.messages
            );
        }
    });
    assert_eq!(
        recorded(&record, "prompts/list"),
        1,
        "the second list was not cached"
    );
}

/// Issue 24: the gateway's own pager had no cursor-loop check: an upstream
/// whose pages point back to themselves was read 100 times over and its
/// first page given 100 times. Now the listing stops at the loop, the
/// server's resources are left out, and the gateway's log says why.
#[test]
fn an_upstream_whose_resource_pages_loop_is_left_out_with_a_clear_error() {
    let home = tempfile::tempdir().unwrap();
    let config = write_config(
        home.path(),
        json!({ "looping": {
            "command": python(),
            "args": [test_server("catalog_server.py")],
            "env": { "MODE": "endless" },
        } }),
    );
    let gateway = Gateway::start(&config, home.path(), &[]);
    gateway.wait_for_tools(&["add"]);
    runtime().block_on(async {
        let list = post(
            &gateway.url,
            "resources/list",
            json!({ "_meta": meta(json!({})) }),
        )
        .await;
        let resources = list.messages[0]["result"]["resources"].clone();
        assert_eq!(resources, json!([]), "{:?}", list.messages);
    });
    let said = wait_until(std::time::Duration::from_secs(10), || {
        gateway.stderr.lock().unwrap().iter().any(|line| {
            line.contains("\"looping\": its resource list does not end")
                && line.contains("points back to cursor")
        })
    });
    assert!(said, "{}", gateway.stderr.lock().unwrap().join("\n"));
}
