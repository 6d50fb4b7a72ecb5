//! The tools view's API (`/api/tools`, `/api/calls`) on the real
//! `toolbridge serve`, in front of the built-in example server and
//! server-everything: tools with their schemas and provider previews, trying
//! tools (text, image, audio, errors) and cancelling a call upstream.
//!
//! Where a test must see what the upstream received, the example server is
//! started behind `tee`, which copies every message the gateway sends it to
//! a file (the server is the real one; only its input is tapped).

use crate::common;
use crate::gateway_support;
use crate::web_api_client;

use std::{
    path::{Path, PathBuf},
    time::{Duration, Instant},
};

use common::{deps, poll_async, python, test_server, toolbridge};
use gateway_support::{Gateway, write_config};
use serde_json::{Value, json};
use web_api_client::{AsyncApi, Reply};

/// `POST /api/tools/{server}/{tool}/call` with `body`, as the page's Run
/// button sends it.
async fn call(page: &AsyncApi, server: &str, tool: &str, body: Value) -> Reply {
    page.post(&format!("/tools/{server}/{tool}/call"), body)
        .await
}

/// `DELETE /api/calls/{call_id}`, as the page's Cancel button sends it: the
/// status.
async fn cancel(page: &AsyncApi, call_id: &str) -> u16 {
    page.delete(&format!("/calls/{call_id}")).await.status
}

/// Starts the example's `slow` (a minute) as call `call_id` from a page of
/// its own, once the server has it: the page's answer, when it comes.
async fn slow_call(gateway: &Gateway, tap: &Tap, call_id: &str) -> tokio::task::JoinHandle<Reply> {
    let page = AsyncApi::new(&gateway.addr());
    let body = json!({ "arguments": { "ms": 60_000 }, "callId": call_id });
    let slow = tokio::spawn(async move { call(&page, "example", "slow", body).await });
    assert!(
        tap.wait_for(&["tools/call", "\"slow\""]).await,
        "the call never reached the server; it got:\n{}",
        tap.input()
    );
    slow
}

/// The example server as a config entry.
fn example() -> Value {
    json!({ "command": toolbridge(), "args": ["example-server"] })
}

/// The example server behind `tee`: what the gateway sends it is appended
/// to `dir/upstream-in.jsonl`, what it says on stderr to
/// `dir/upstream-err.log`.
fn tapped_example(dir: &Path) -> (Value, Tap) {
    let tap = Tap {
        input: dir.join("upstream-in.jsonl"),
        stderr: dir.join("upstream-err.log"),
    };
    let script = format!(
        "/usr/bin/tee -a '{}' | exec '{}' example-server 2>>'{}'",
        tap.input.display(),
        toolbridge(),
        tap.stderr.display()
    );
    (json!({ "command": "/bin/sh", "args": ["-c", script] }), tap)
}

struct Tap {
    input: PathBuf,
    stderr: PathBuf,
}

impl Tap {
    fn input(&self) -> String {
        std::fs::read_to_string(&self.input).unwrap_or_default()
    }

    fn stderr(&self) -> String {
        std::fs::read_to_string(&self.stderr).unwrap_or_default()
    }

    /// Waits (30 s at most) until the upstream has received a message
    /// containing every one of `parts`.
    async fn wait_for(&self, parts: &[&str]) -> bool {
        poll_async(Duration::from_secs(30), || async {
            self.input()
                .lines()
                .any(|l| parts.iter().all(|p| l.contains(p)))
                .then_some(())
        })
        .await
        .is_some()
    }
}

/// Waits (10 s at most) for the gateway's audit line of a call of `tool`
/// that ended with `outcome`.
async fn logged(gateway: &Gateway, tool: &str, outcome: &str) -> bool {
    let tool = format!(r#"tool="{tool}""#);
    let outcome = format!(r#"outcome="{outcome}""#);
    poll_async(Duration::from_secs(10), || async {
        gateway
            .log()
            .lines()
            .any(|l| l.contains("tool call") && l.contains(&tool) && l.contains(&outcome))
            .then_some(())
    })
    .await
    .is_some()
}

fn home() -> tempfile::TempDir {
    tempfile::tempdir().expect("tempdir")
}

fn tool<'a>(listing: &'a Value, name: &str) -> &'a Value {
    listing["tools"]
        .as_array()
        .and_then(|tools| tools.iter().find(|t| t["name"] == name))
        .unwrap_or_else(|| panic!("no tool {name} in {listing}"))
}

fn preview<'a>(tool: &'a Value, format: &str) -> &'a Value {
    tool["previews"]
        .as_array()
        .and_then(|p| p.iter().find(|p| p["format"] == format))
        .unwrap_or_else(|| panic!("no {format} preview in {tool}"))
}

fn change_kinds(preview: &Value) -> Vec<String> {
    preview["changes"]
        .as_array()
        .map(|changes| {
            changes
                .iter()
                .filter_map(|c| c["kind"].as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tools_are_listed_with_schemas_and_each_providers_definition_and_changes() {
    let home = home();
    let everything = deps().join("node/node_modules/.bin/mcp-server-everything");
    let config = write_config(
        home.path(),
        json!({
            // A dot: providers refuse it in a tool name.
            "web.tools": example(),
            "everything": { "command": everything, "args": ["stdio"] },
        }),
    );
    let gateway = Gateway::start(&config, home.path(), &[]);
    let page = AsyncApi::new(&gateway.addr());

    let Reply {
        status,
        json: servers,
        ..
    } = page.get("/tools").await;
    assert_eq!(status, 200, "{servers}");
    let names: Vec<&str> = servers["servers"]
        .as_array()
        .map(|s| s.iter().filter_map(|s| s["name"].as_str()).collect())
        .unwrap_or_default();
    assert_eq!(names, ["web.tools", "everything"]);

    let Reply {
        status,
        json: listing,
        ..
    } = page.get("/tools/web.tools").await;
    assert_eq!(status, 200, "{listing}");
    let echo = tool(&listing, "echo");
    assert_eq!(echo["description"], "Echo the text back unchanged");
    assert_eq!(echo["inputSchema"]["properties"]["text"]["type"], "string");
    assert_eq!(echo["inputSchema"]["required"], json!(["text"]));
    assert_eq!(echo["exposedName"], "mcp__web_tools__echo");
    for name in ["tiny_image", "tiny_audio", "slow"] {
        tool(&listing, name);
    }

    let openai = preview(echo, "openai");
    assert_eq!(openai["definition"]["type"], "function");
    assert_eq!(
        openai["definition"]["function"]["name"],
        "mcp__web_tools__echo"
    );
    assert_eq!(
        openai["definition"]["function"]["parameters"]["properties"]["text"]["type"],
        "string"
    );
    let anthropic = preview(echo, "anthropic");
    assert_eq!(anthropic["definition"]["name"], "mcp__web_tools__echo");
    assert_eq!(
        anthropic["definition"]["input_schema"]["required"],
        json!(["text"])
    );
    let gemini = preview(echo, "gemini");
    assert_eq!(gemini["definition"]["name"], "mcp__web_tools__echo");
    assert_eq!(gemini["definition"]["parameters"]["type"], "object");
    for provider in [openai, anthropic, gemini] {
        // The dot was replaced, and the provider would have refused it.
        assert!(
            change_kinds(provider).contains(&"nameSanitized".to_owned()),
            "{provider}"
        );
        assert_eq!(provider["wouldReject"], true, "{provider}");
    }

    // server-everything's file tool declares `format: uri`, which Gemini's
    // schema does not take: dropped for Gemini only.
    let Reply {
        status,
        json: listing,
        ..
    } = page.get("/tools/everything").await;
    assert_eq!(status, 200, "{listing}");
    let gzip = tool(&listing, "gzip-file-as-resource");
    assert!(gzip["inputSchema"]["properties"].is_object(), "{gzip}");
    let gemini = preview(gzip, "gemini");
    assert!(
        change_kinds(gemini).contains(&"formatDropped".to_owned()),
        "{gemini}"
    );
    assert!(
        !gemini.to_string().contains(r#""format":"uri""#),
        "{gemini}"
    );
    let anthropic = preview(gzip, "anthropic");
    assert!(!change_kinds(anthropic).contains(&"formatDropped".to_owned()));
    assert!(
        anthropic.to_string().contains(r#""format":"uri""#),
        "{anthropic}"
    );

    // The page cannot answer a server's sampling request: the server is
    // told so in a sentence, and its error comes back as the result.
    let Reply {
        status,
        json: refused,
        ..
    } = call(
        &page,
        "everything",
        "trigger-sampling-request",
        json!({ "arguments": { "prompt": "hi" } }),
    )
    .await;
    assert_eq!(status, 200, "{refused}");
    assert_eq!(refused["isError"], true, "{refused}");
    assert!(
        refused["text"]
            .as_str()
            .is_some_and(|t| t.contains("the settings page cannot answer")),
        "{refused}"
    );

    let Reply {
        status,
        json: error,
        ..
    } = page.get("/tools/nowhere").await;
    assert_eq!(status, 404, "{error}");
    assert!(
        error["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("\"nowhere\"")),
        "{error}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn echo_image_and_audio_come_back_raw_and_flattened_with_the_time_taken() {
    let home = home();
    let config = write_config(home.path(), json!({ "example": example() }));
    let gateway = Gateway::start(&config, home.path(), &[]);
    let page = AsyncApi::new(&gateway.addr());

    let Reply {
        status, json: echo, ..
    } = call(
        &page,
        "example",
        "echo",
        json!({ "arguments": { "text": "hi there" }, "callId": "echo-1" }),
    )
    .await;
    assert_eq!(status, 200, "{echo}");
    assert_eq!(
        echo["content"],
        json!([{ "type": "text", "text": "hi there" }])
    );
    assert_eq!(echo["text"], "hi there");
    assert_eq!(echo["isError"], false);
    assert_eq!(echo["outcome"], "ok");
    assert_eq!(echo["callId"], "echo-1");
    assert!(echo["elapsedMs"].is_u64(), "{echo}");

    let Reply {
        status,
        json: image,
        ..
    } = call(&page, "example", "tiny_image", json!({})).await;
    assert_eq!(status, 200, "{image}");
    assert_eq!(image["content"][0]["type"], "image");
    assert_eq!(image["content"][0]["mimeType"], "image/png");
    // base64 of the PNG signature.
    assert!(
        image["content"][0]["data"]
            .as_str()
            .is_some_and(|d| d.starts_with("iVBORw0KGgo")),
        "{image}"
    );
    assert_eq!(image["text"], "[Image: image/png]");

    let Reply {
        status,
        json: audio,
        ..
    } = call(&page, "example", "tiny_audio", json!({ "arguments": null })).await;
    assert_eq!(status, 200, "{audio}");
    assert_eq!(audio["content"][0]["type"], "audio");
    assert_eq!(audio["content"][0]["mimeType"], "audio/wav");
    // base64 of "RIFF".
    assert!(
        audio["content"][0]["data"]
            .as_str()
            .is_some_and(|d| d.starts_with("UklGR")),
        "{audio}"
    );
    assert_eq!(audio["text"], "[Audio: audio/wav]");

    // Each call left the gateway's audit line and metrics, as a client's.
    // (Read from the gateway's stderr by another thread: waited for.)
    for tool in ["echo", "tiny_image", "tiny_audio"] {
        assert!(
            logged(&gateway, tool, "ok").await,
            "no audit line for {tool}:\n{}",
            gateway.log()
        );
    }
    let metrics = gateway.metrics().await;
    assert!(
        metrics.contains(r#"toolbridge_gateway_tool_calls_total{server="example",tool="echo",client="admin",profile=""} 1"#),
        "{metrics}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancelling_a_call_ends_it_at_once_and_the_upstream_is_told() {
    let home = home();
    let (server, tap) = tapped_example(home.path());
    let config = write_config(home.path(), json!({ "example": server }));
    let gateway = Gateway::start(&config, home.path(), &[]);
    let page = AsyncApi::new(&gateway.addr());

    let started = Instant::now();
    let slow = slow_call(&gateway, &tap, "slow-1").await;
    // One id, one call at a time.
    let Reply {
        status,
        json: taken,
        ..
    } = call(
        &page,
        "example",
        "echo",
        json!({ "arguments": { "text": "x" }, "callId": "slow-1" }),
    )
    .await;
    assert_eq!(status, 409, "{taken}");

    assert_eq!(cancel(&page, "slow-1").await, 204);
    let Reply {
        status,
        json: cancelled,
        ..
    } = slow.await.expect("the call's task");
    let took = started.elapsed();
    assert_eq!(status, 200, "{cancelled}");
    assert_eq!(cancelled["outcome"], "cancelled", "{cancelled}");
    assert!(
        took < Duration::from_secs(30) && cancelled["elapsedMs"].as_u64() < Some(30_000),
        "the call ran on for {took:?}: {cancelled}"
    );
    assert!(
        tap.wait_for(&["notifications/cancelled"]).await,
        "the server was never told; it got:\n{}",
        tap.input()
    );
    let stopped = poll_async(Duration::from_secs(10), || async {
        tap.stderr().contains("slow: cancelled after").then_some(())
    })
    .await;
    assert!(stopped.is_some(), "the server's stderr:\n{}", tap.stderr());
    assert!(
        logged(&gateway, "slow", "cancelled").await,
        "{}",
        gateway.log()
    );
    // Finished: nothing left to cancel.
    assert_eq!(cancel(&page, "slow-1").await, 404);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_page_that_goes_away_cancels_its_call_upstream() {
    let home = home();
    let (server, tap) = tapped_example(home.path());
    let config = write_config(home.path(), json!({ "example": server }));
    let gateway = Gateway::start(&config, home.path(), &[]);

    let slow = slow_call(&gateway, &tap, "gone-1").await;
    // The browser aborting its fetch: the request's connection closes.
    slow.abort();
    assert!(
        tap.wait_for(&["notifications/cancelled"]).await,
        "the server was never told; it got:\n{}",
        tap.input()
    );
    assert!(
        logged(&gateway, "slow", "cancelled").await,
        "{}",
        gateway.log()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unknown_tools_refused_arguments_and_timeouts_are_explained() {
    let home = home();
    let config = write_config(home.path(), json!({ "example": example() }));
    let gateway = Gateway::start(&config, home.path(), &[]);
    let page = AsyncApi::new(&gateway.addr());

    let Reply {
        status,
        json: error,
        ..
    } = call(&page, "example", "no_such_tool", json!({})).await;
    assert_eq!(status, 404, "{error}");
    let message = error["error"]["message"].as_str().unwrap_or_default();
    assert!(
        message.contains("\"no_such_tool\"") && message.contains("\"example\""),
        "{error}"
    );
    let Reply {
        status,
        json: error,
        ..
    } = call(&page, "nowhere", "echo", json!({})).await;
    assert_eq!(status, 404, "{error}");

    // The server refuses the arguments: its own words come back.
    let Reply {
        status,
        json: refused,
        ..
    } = call(
        &page,
        "example",
        "echo",
        json!({ "arguments": { "text": 5 } }),
    )
    .await;
    assert_eq!(status, 200, "{refused}");
    assert_eq!(refused["isError"], true, "{refused}");
    assert_eq!(refused["outcome"], "toolError");
    assert!(
        refused["text"]
            .as_str()
            .is_some_and(|t| t.contains("invalid type: integer `5`, expected a string")),
        "{refused}"
    );

    // Arguments that are not an object never reach the server.
    let Reply {
        status,
        json: error,
        ..
    } = call(&page, "example", "echo", json!({ "arguments": ["hi"] })).await;
    assert_eq!(status, 422, "{error}");
    assert_eq!(error["error"]["field"], "arguments");

    // The page's own timeout bounds the call.
    let started = Instant::now();
    let Reply {
        status,
        json: error,
        ..
    } = call(
        &page,
        "example",
        "slow",
        json!({ "arguments": { "ms": 60_000 }, "timeoutMs": 300 }),
    )
    .await;
    assert_eq!(status, 504, "{error}");
    assert!(started.elapsed() < Duration::from_secs(30));
    assert!(
        error["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("\"slow\"") && m.contains("timed out")),
        "{error}"
    );

    // A write without the page's header is refused.
    let forged = page
        .send(
            "POST",
            "/tools/example/echo/call",
            Some(json!({ "arguments": { "text": "x" } })),
            &[],
        )
        .await;
    assert_eq!(forged.status, 403);
    let log = gateway.log();
    assert!(
        !log.lines()
            .any(|l| l.contains("tool call") && l.contains("no_such_tool")),
        "an unknown tool is not called: {log}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_python_servers_log_messages_and_errors_come_with_the_result() {
    let home = home();
    let config = write_config(
        home.path(),
        json!({ "py": { "command": python(), "args": [test_server("py_sdk_server.py")] } }),
    );
    let gateway = Gateway::start(&config, home.path(), &[]);
    let page = AsyncApi::new(&gateway.addr());

    let Reply {
        status,
        json: chatty,
        ..
    } = call(&page, "py", "chatty", json!({})).await;
    assert_eq!(status, 200, "{chatty}");
    assert_eq!(chatty["outcome"], "ok", "{chatty}");
    let logs = chatty["logs"].as_array().cloned().unwrap_or_default();
    let levels: Vec<&str> = logs.iter().filter_map(|l| l["level"].as_str()).collect();
    assert!(
        levels.contains(&"info") && levels.contains(&"warning") && levels.contains(&"error"),
        "{chatty}"
    );
    assert!(
        logs.iter()
            .any(|l| l["data"] == "warning from chatty" && l["logger"] == "chatty"),
        "{chatty}"
    );

    let Reply {
        status,
        json: failed,
        ..
    } = call(
        &page,
        "py",
        "fail",
        json!({ "arguments": { "message": "no luck" } }),
    )
    .await;
    assert_eq!(status, 200, "{failed}");
    assert_eq!(failed["isError"], true, "{failed}");
    assert_eq!(failed["outcome"], "toolError");
    assert!(
        failed["text"]
            .as_str()
            .is_some_and(|t| t.contains("no luck")),
        "{failed}"
    );
}

/// A page call whose server asks a question: `GET /api/calls/{id}` shows
/// it, an accepted answer without the required field is refused (422,
/// naming it), the answer with it reaches the server (its result quotes
/// it), and the call's state then says it is over.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_question_the_server_asks_during_a_page_call_is_answered_through_the_api() {
    let home = home();
    let everything = deps().join("node/node_modules/.bin/mcp-server-everything");
    let config = write_config(
        home.path(),
        json!({ "everything": { "command": everything, "args": ["stdio"] } }),
    );
    let gateway = Gateway::start(&config, home.path(), &[]);
    let page = AsyncApi::new(&gateway.addr());
    let caller = page.clone();
    let running = tokio::spawn(async move {
        call(
            &caller,
            "everything",
            "trigger-elicitation-request",
            json!({ "arguments": {}, "callId": "web-asks-1" }),
        )
        .await
    });
    let asked = poll_async(Duration::from_secs(60), || {
        let page = page.clone();
        async move {
            let state = page.get("/calls/web-asks-1").await.json;
            state["elicitation"].is_object().then_some(state)
        }
    })
    .await
    .expect("the question shows in the call's state");
    assert_eq!(asked["running"], true, "{asked}");
    let question = &asked["elicitation"];
    assert!(
        question["message"]
            .as_str()
            .is_some_and(|m| m.contains("Please provide inputs")),
        "{asked}"
    );
    assert_eq!(question["requestedSchema"]["required"], json!(["name"]));
    let id = question["id"].clone();

    let refused = page
        .post(
            "/calls/web-asks-1/elicitation",
            json!({ "id": id, "action": "accept", "content": {} }),
        )
        .await;
    assert_eq!(refused.status, 422, "{}", refused.json);
    assert_eq!(refused.json["error"]["field"], "name", "{}", refused.json);
    let unknown = page
        .post(
            "/calls/web-asks-1/elicitation",
            json!({ "id": id, "action": "maybe" }),
        )
        .await;
    assert_eq!(unknown.status, 422, "{}", unknown.json);
    assert_eq!(unknown.json["error"]["field"], "action", "{}", unknown.json);

    let answered = page
        .post(
            "/calls/web-asks-1/elicitation",
            json!({ "id": id, "action": "accept", "content": { "name": "Ada Lovelace" } }),
        )
        .await;
    assert_eq!(answered.status, 204, "{}", answered.json);
    let Reply { status, json, .. } = running.await.expect("the call's task");
    assert_eq!(status, 200, "{json}");
    let text = json["text"].as_str().unwrap_or_default();
    assert!(text.contains("Name: Ada Lovelace"), "{json}");
    assert!(
        text.contains("Favorite Integer: 42"),
        "defaults filled: {json}"
    );
    assert_eq!(
        page.get("/calls/web-asks-1").await.json,
        json!({ "running": false })
    );
    let late = page
        .post(
            "/calls/web-asks-1/elicitation",
            json!({ "id": id, "action": "decline" }),
        )
        .await;
    assert_eq!(late.status, 404, "{}", late.json);
}

/// The switch per tool writes `disabledTools` and the page's list of the
/// server's switched-off tools follows; an unknown server is a 404 naming
/// it, and the file is left as it was.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tools_switch_writes_disabled_tools_in_the_config() {
    let home = home();
    let config = write_config(home.path(), json!({ "example": example() }));
    let gateway = Gateway::start(&config, home.path(), &[]);
    let page = AsyncApi::new(&gateway.addr());
    let off = page.post("/tools/example/slow/disable", json!({})).await;
    assert_eq!(off.status, 200, "{}", off.json);
    assert_eq!(off.json["changed"], true, "{}", off.json);
    let written: Value = serde_json::from_str(&std::fs::read_to_string(&config).unwrap()).unwrap();
    assert_eq!(
        written["mcpServers"]["example"]["disabledTools"],
        json!(["slow"])
    );
    let servers = page.get("/tools").await.json;
    assert_eq!(
        servers["servers"][0]["disabledTools"],
        json!(["slow"]),
        "{servers}"
    );
    let again = page.post("/tools/example/slow/disable", json!({})).await;
    assert_eq!(again.json["changed"], false, "{}", again.json);

    let before = std::fs::read(&config).unwrap();
    let unknown = page.post("/tools/nowhere/slow/disable", json!({})).await;
    assert_eq!(unknown.status, 404, "{}", unknown.json);
    assert!(
        unknown.json["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("nowhere")),
        "{}",
        unknown.json
    );
    assert_eq!(std::fs::read(&config).unwrap(), before);

    let on = page.post("/tools/example/slow/enable", json!({})).await;
    assert_eq!(on.status, 200, "{}", on.json);
    let written: Value = serde_json::from_str(&std::fs::read_to_string(&config).unwrap()).unwrap();
    assert_eq!(written["mcpServers"]["example"], example());
}

/// Cancelling a page call while its server's question waits ends both:
/// the call answers "cancelled" and the question can no longer be
/// answered.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancelling_a_call_whose_question_waits_ends_the_question_too() {
    let home = home();
    let everything = deps().join("node/node_modules/.bin/mcp-server-everything");
    let config = write_config(
        home.path(),
        json!({ "everything": { "command": everything, "args": ["stdio"] } }),
    );
    let gateway = Gateway::start(&config, home.path(), &[]);
    let page = AsyncApi::new(&gateway.addr());
    let caller = page.clone();
    let running = tokio::spawn(async move {
        call(
            &caller,
            "everything",
            "trigger-elicitation-request",
            json!({ "arguments": {}, "callId": "web-asks-2" }),
        )
        .await
    });
    let asked = poll_async(Duration::from_secs(60), || {
        let page = page.clone();
        async move {
            let state = page.get("/calls/web-asks-2").await.json;
            state["elicitation"].is_object().then_some(state)
        }
    })
    .await
    .expect("the question shows in the call's state");
    let id = asked["elicitation"]["id"].clone();
    assert_eq!(page.delete("/calls/web-asks-2").await.status, 204);
    let Reply { status, json, .. } = running.await.expect("the call's task");
    assert_eq!(status, 200, "{json}");
    assert_eq!(json["outcome"], "cancelled", "{json}");
    let late = page
        .post(
            "/calls/web-asks-2/elicitation",
            json!({ "id": id, "action": "accept", "content": { "name": "late" } }),
        )
        .await;
    assert_eq!(late.status, 404, "{}", late.json);
    assert_eq!(
        page.get("/calls/web-asks-2").await.json,
        json!({ "running": false })
    );
}
