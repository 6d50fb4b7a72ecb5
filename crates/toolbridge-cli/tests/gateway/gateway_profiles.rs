//! Profiles in the gateway (`toolbridge serve`): each profile of the
//! config at `/mcp/NAME`, for 2025-11-25 clients (rmcp's client, with a
//! session) and 2026-07-28 ones (stateless POSTs), and over
//! `serve --stdio --profile NAME`. Real gateway, real upstreams: the
//! example server and `tool_cache.py` (a stdio server whose `change` tool
//! adds a tool and says its list changed).

use crate::common;
use crate::gateway_support;

use std::{
    path::{Path, PathBuf},
    sync::{Arc, Mutex},
    time::Duration,
};

use common::{python, test_server, toolbridge};
use gateway_support::{Gateway, RawClient, TOKEN};
use rmcp::{
    RoleClient, ServiceExt as _,
    model::{CallToolRequestParams, CallToolResult, Tool},
    service::{NotificationContext, RunningService},
    transport::{
        StreamableHttpClientTransport, TokioChildProcess,
        streamable_http_client::StreamableHttpClientTransportConfig,
    },
};
use serde_json::{Value, json};

/// How long an event the test waits for may take on a loaded machine.
const DEADLINE: Duration = Duration::from_secs(30);

/// The config: `ex` (the example server), `cache` (tool_cache.py listing
/// `ping`), and the profiles `greet` (two tools of `ex`, one renamed, one
/// described anew), `ops` (`cache`'s tools but two, and `ex__echo`) and
/// `pings` (`cache`'s `ping` and `change` only). Pinning is off for
/// `cache`, so the tool its `change` adds is listed at once.
fn config(dir: &Path, greet_description: &str) -> PathBuf {
    let path = dir.join("config.json");
    let text = json!({
        "mcpServers": {
            "ex": { "command": toolbridge(), "args": ["example-server"] },
            "cache": {
                "command": python(),
                "args": [test_server("tool_cache.py")],
                "env": { "STARTS_FILE": dir.join("starts"), "TOOLS": "ping" },
                // The tool `change` adds is listed at once (not withheld).
                "pin": "off",
            },
        },
        "profiles": {
            "greet": {
                "servers": ["ex"],
                "tools": ["ex__hello", "ex__echo"],
                "rename": { "ex__echo": "say" },
                "descriptions": { "hello": greet_description },
            },
            "ops": { "tools": ["cache__*", "!cache__research", "!cache__notified", "ex__echo"] },
            "pings": { "servers": ["cache"], "tools": ["cache__ping", "cache__change"] },
        },
    });
    // Replaced by a rename, as editors and toolbridge write it.
    let temp = dir.join("config.json.new");
    std::fs::write(&temp, text.to_string()).expect("write config");
    std::fs::rename(&temp, &path).expect("rename config");
    path
}

/// What a client got from the server on its own, in order.
#[derive(Clone, Default)]
struct Notes(Arc<Mutex<Vec<&'static str>>>);

impl Notes {
    fn seen(&self) -> Vec<&'static str> {
        self.0.lock().unwrap().clone()
    }
}

impl rmcp::ClientHandler for Notes {
    async fn on_tool_list_changed(&self, _: NotificationContext<RoleClient>) {
        self.0.lock().unwrap().push("tools");
    }
    async fn on_prompt_list_changed(&self, _: NotificationContext<RoleClient>) {
        self.0.lock().unwrap().push("prompts");
    }
    async fn on_resource_list_changed(&self, _: NotificationContext<RoleClient>) {
        self.0.lock().unwrap().push("resources");
    }
}

type Client = RunningService<RoleClient, Notes>;

async fn connect(url: &str) -> (Client, Notes) {
    let notes = Notes::default();
    let config = StreamableHttpClientTransportConfig::with_uri(url.to_owned()).auth_header(TOKEN);
    let client = notes
        .clone()
        .serve(StreamableHttpClientTransport::from_config(config))
        .await
        .unwrap_or_else(|e| panic!("connect to {url}: {e}"));
    (client, notes)
}

async fn tools(client: &Client) -> Vec<Tool> {
    client.list_all_tools().await.expect("tools/list")
}

fn sorted(tools: &[Tool]) -> Vec<String> {
    let mut names: Vec<String> = tools.iter().map(|t| t.name.to_string()).collect();
    names.sort();
    names
}

async fn call(client: &Client, name: &str, arguments: Value) -> Result<CallToolResult, String> {
    let mut params = CallToolRequestParams::new(name.to_owned());
    params.arguments = arguments.as_object().cloned();
    client.call_tool(params).await.map_err(|e| e.to_string())
}

fn text(result: &CallToolResult) -> String {
    result
        .content
        .iter()
        .filter_map(|c| c.as_text().map(|t| t.text.clone()))
        .collect::<Vec<_>>()
        .join("\n")
}

/// Polls `until` every 50 ms for [`DEADLINE`].
async fn eventually(what: &str, mut until: impl FnMut() -> bool) {
    let deadline = tokio::time::Instant::now() + DEADLINE;
    while !until() {
        assert!(tokio::time::Instant::now() < deadline, "never: {what}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// A stateless (2026-07-28) request to `url`: its HTTP status and JSON-RPC
/// answer (`null` when the body is not one).
async fn stateless(url: &str, method: &str, params: Value) -> (u16, Value) {
    let answer = RawClient::new(url).stateless(method, params).await;
    (answer.status, answer.body.unwrap_or_default())
}

fn listed(answer: &Value) -> Vec<String> {
    let mut names: Vec<String> = answer["result"]["tools"]
        .as_array()
        .unwrap_or_else(|| panic!("no tools: {answer}"))
        .iter()
        .map(|t| t["name"].as_str().unwrap_or_default().to_owned())
        .collect();
    names.sort();
    names
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_profiles_see_and_call_only_their_own_tools_in_both_protocol_generations() {
    let home = common::tempdir();
    let config = config(home.path(), "Greets someone by name.");
    let gateway = Gateway::start(&config, home.path(), &[]);
    let greet_url = format!("{}/greet", gateway.url);
    let ops_url = format!("{}/ops", gateway.url);

    // 2025-11-25, with sessions.
    let (greet, _) = connect(&greet_url).await;
    let (ops, _) = connect(&ops_url).await;
    let greet_tools = tools(&greet).await;
    assert_eq!(sorted(&greet_tools), ["hello", "say"], "{}", gateway.log());
    let hello = greet_tools.iter().find(|t| t.name == "hello").unwrap();
    assert_eq!(
        hello.description.as_deref(),
        Some("Greets someone by name.")
    );
    assert_eq!(
        sorted(&tools(&ops).await),
        ["cache__change", "cache__ping", "ex__echo"],
        "the exclusions take research and notified out; {}",
        gateway.log()
    );
    // A renamed tool is called by its new name, the old one is gone.
    let said = call(&greet, "say", json!({ "text": "renamed" }))
        .await
        .unwrap();
    assert_eq!(text(&said), "renamed");
    for outside in ["echo", "ex__echo", "ping", "cache__ping", "tiny_image"] {
        let refused = call(&greet, outside, json!({ "text": "x" })).await;
        assert!(
            refused.as_ref().is_err_and(|e| e.contains("no tool named")),
            "greet called {outside}: {refused:?}"
        );
    }
    assert_eq!(
        text(&call(&ops, "cache__ping", json!({})).await.unwrap()),
        "pong from ping"
    );
    for outside in ["hello", "ex__hello", "say", "cache__research"] {
        let refused = call(&ops, outside, json!({})).await;
        assert!(refused.is_err(), "ops called {outside}: {refused:?}");
    }
    // Prompts and resources: only those of the profile's servers (the
    // example server has none, tool_cache.py offers neither).
    let prompts = ops.list_all_prompts().await;
    assert!(prompts.is_ok_and(|p| p.is_empty()));

    // 2026-07-28, stateless: the same views.
    let (status, list) = stateless(&greet_url, "tools/list", json!({})).await;
    assert_eq!(status, 200, "{list}");
    assert_eq!(listed(&list), ["hello", "say"]);
    let (_, said) = stateless(
        &greet_url,
        "tools/call",
        json!({ "name": "say", "arguments": { "text": "stateless" } }),
    )
    .await;
    assert_eq!(said["result"]["content"][0]["text"], "stateless", "{said}");
    let (_, refused) = stateless(
        &greet_url,
        "tools/call",
        json!({ "name": "cache__ping", "arguments": {} }),
    )
    .await;
    assert!(
        refused["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("no tool named")),
        "{refused}"
    );
    let (_, list) = stateless(&ops_url, "tools/list", json!({})).await;
    assert_eq!(listed(&list), ["cache__change", "cache__ping", "ex__echo"]);
    // A stateless request rmcp answers (not tools/*): through the
    // profile's own service.
    let (status, discovered) = stateless(&greet_url, "server/discover", json!({})).await;
    assert_eq!(status, 200, "{discovered}");

    // `/mcp` is every server, as before.
    let (all, _) = connect(&gateway.url).await;
    let everything = sorted(&tools(&all).await);
    for name in [
        "ex__hello",
        "ex__echo",
        "ex__tiny_image",
        "cache__ping",
        "cache__research",
    ] {
        assert!(
            everything.contains(&name.to_owned()),
            "{name}: {everything:?}"
        );
    }
    // A profile the config does not have.
    let missing = reqwest::Client::new()
        .post(format!("{}/nope", gateway.url))
        .bearer_auth(TOKEN)
        .header("accept", "application/json, text/event-stream")
        .json(&json!({ "jsonrpc": "2.0", "id": 1, "method": "ping" }))
        .send()
        .await
        .unwrap();
    assert_eq!(missing.status(), 404);
    assert!(
        missing
            .text()
            .await
            .unwrap()
            .contains("no profile \"nope\"")
    );
    for client in [greet, ops, all] {
        client.cancel().await.unwrap();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn list_changed_reaches_only_the_profiles_whose_view_changed() {
    let home = common::tempdir();
    let config = config(home.path(), "Greets someone by name.");
    let gateway = Gateway::start(&config, home.path(), &[]);
    let (ops, ops_seen) = connect(&format!("{}/ops", gateway.url)).await;
    let (pings, pings_seen) = connect(&format!("{}/pings", gateway.url)).await;
    let (greet, greet_seen) = connect(&format!("{}/greet", gateway.url)).await;
    assert_eq!(sorted(&tools(&pings).await), ["change", "ping"]);
    assert_eq!(sorted(&tools(&greet).await), ["hello", "say"]);
    tools(&ops).await;

    // `change` adds the tool `added`: in ops's view (cache__*), not in
    // pings's (its globs name two tools), and greet does not show `cache`.
    call(&ops, "cache__change", json!({})).await.unwrap();
    eventually("ops is told its tools changed", || {
        ops_seen.seen().contains(&"tools")
    })
    .await;
    assert!(
        sorted(&tools(&ops).await).contains(&"cache__added".to_owned()),
        "{}",
        gateway.log()
    );

    // A config change to greet and pings (a description each): both are
    // told all three lists may have changed. Had the tool change reached
    // pings or greet, it would have come a second or more before these
    // (the config is looked at once a second), so a second "tools" would
    // be there when the three kinds are.
    let text = std::fs::read_to_string(&config).unwrap();
    let mut edited: Value = serde_json::from_str(&text).unwrap();
    edited["profiles"]["greet"]["descriptions"]["hello"] = json!("Says hello.");
    edited["profiles"]["pings"]["descriptions"] = json!({ "ping": "Answers pong." });
    let temp = home.path().join("config.json.new");
    std::fs::write(&temp, edited.to_string()).unwrap();
    std::fs::rename(&temp, &config).unwrap();
    for (name, seen) in [("pings", &pings_seen), ("greet", &greet_seen)] {
        eventually(&format!("{name} is told of the config change"), || {
            let seen = seen.seen();
            ["tools", "prompts", "resources"]
                .iter()
                .all(|kind| seen.contains(kind))
        })
        .await;
        // The client's handlers run as the notifications come, not
        // necessarily in the order they were sent.
        let mut got = seen.seen();
        got.sort();
        assert_eq!(
            got,
            ["prompts", "resources", "tools"],
            "{name} got a notification that was not about its view; {}",
            gateway.log()
        );
    }
    let greet_tools = tools(&greet).await;
    let hello = greet_tools.iter().find(|t| t.name == "hello").unwrap();
    assert_eq!(hello.description.as_deref(), Some("Says hello."));
    assert_eq!(sorted(&tools(&pings).await), ["change", "ping"]);

    // A profile removed from the config is served no more (its open
    // session's requests get the 404 too); one added is served at once.
    edited["profiles"].as_object_mut().unwrap().remove("pings");
    edited["profiles"]["fresh"] = json!({ "servers": ["ex"], "tools": ["ex__echo"] });
    std::fs::write(&temp, edited.to_string()).unwrap();
    std::fs::rename(&temp, &config).unwrap();
    let fresh = format!("{}/fresh", gateway.url);
    let deadline = tokio::time::Instant::now() + DEADLINE;
    loop {
        let (status, answer) = stateless(&fresh, "tools/list", json!({})).await;
        if status == 200 {
            assert_eq!(listed(&answer), ["echo"]);
            break;
        }
        assert_eq!(status, 404, "{answer}");
        assert!(tokio::time::Instant::now() < deadline, "fresh never served");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let (status, _) = stateless(&format!("{}/pings", gateway.url), "tools/list", json!({})).await;
    assert_eq!(status, 404);
    let gone = pings.list_all_tools().await.map(|t| sorted(&t));
    assert!(
        format!("{gone:?}")
            .contains("404 Not Found: Not Found: the gateway's config has no profile"),
        "{gone:?}"
    );
    for client in [ops, pings, greet] {
        client.cancel().await.unwrap();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn serve_stdio_with_a_profile_serves_that_profile_and_an_unknown_one_is_a_usage_error() {
    let home = common::tempdir();
    let config = config(home.path(), "Greets someone by name.");
    let command = |profile: &str| {
        let mut cmd = tokio::process::Command::new(toolbridge());
        cmd.arg("--config")
            .arg(&config)
            .args(["serve", "--stdio", "--profile", profile])
            .env("HOME", home.path())
            .env("XDG_CONFIG_HOME", home.path().join("config"))
            .env("XDG_CACHE_HOME", home.path().join("cache"))
            .env("XDG_DATA_HOME", home.path().join("data"))
            .env_remove("TOOLBRIDGE_CONFIG");
        cmd
    };
    let client = ().serve(TokioChildProcess::new(command("greet")).unwrap()).await.unwrap();
    let listed = client.list_all_tools().await.unwrap();
    assert_eq!(sorted(&listed), ["hello", "say"]);
    let mut params = CallToolRequestParams::new("say");
    params.arguments = json!({ "text": "over stdio" }).as_object().cloned();
    let said = client.call_tool(params).await.unwrap();
    assert_eq!(text(&said), "over stdio");
    let refused = client
        .call_tool(CallToolRequestParams::new("tiny_image"))
        .await;
    assert!(refused.is_err(), "{refused:?}");
    client.cancel().await.unwrap();

    let out = command("nope")
        .stdin(std::process::Stdio::null())
        .output()
        .await
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("unknown profile \"nope\"") && stderr.contains("greet, ops, pings"),
        "{stderr}"
    );
}
