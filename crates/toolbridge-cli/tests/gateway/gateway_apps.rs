//! MCP Apps (SEP-1865) through the gateway: two upstreams built on the MCP
//! Apps SDK (`tests/servers/apps_server.mjs`) both link their tool to
//! `ui://counter/app.html`. With both in the view, each `ui://` URI gets
//! its server's name (`ui_resources`): in `resources/list`, in each tool's
//! `_meta` link (both spellings), and in what a read answers, and a read of
//! one reaches that server. A profile of one server keeps the URIs. The
//! gateway's pool declares the `io.modelcontextprotocol/ui` extension to
//! its servers (its page renders apps); the CLI's does not.

use crate::common;
use crate::gateway_support;

use common::{root, test_server};
use gateway_support::{Gateway, RawClient, write_config};
use serde_json::{Value, json};

fn apps_server(label: &str) -> Value {
    json!({
        "command": "node",
        "args": [test_server("apps_server.mjs"), root().join(".deps/ext-apps")],
        "env": { "APPS_LABEL": label },
    })
}

/// The `_meta` of tool `name` in a `tools/list` answer.
fn meta_of(listed: &Value, name: &str) -> Value {
    listed["result"]["tools"]
        .as_array()
        .and_then(|tools| tools.iter().find(|t| t["name"] == name))
        .map(|t| t["_meta"].clone())
        .unwrap_or_else(|| panic!("no tool {name} in {listed}"))
}

/// The URIs of a `resources/list` answer.
fn uris(listed: &Value) -> Vec<String> {
    listed["result"]["resources"]
        .as_array()
        .map(|r| {
            r.iter()
                .filter_map(|r| r["uri"].as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_servers_ui_uris_stay_its_own_and_a_read_reaches_that_server() {
    assert!(
        root()
            .join(".deps/ext-apps/node_modules/@modelcontextprotocol/ext-apps")
            .is_dir(),
        "the MCP Apps SDK is missing from .deps/ext-apps: run scripts/setup-test-deps.sh"
    );
    let home = tempfile::tempdir().unwrap();
    let config = write_config(
        home.path(),
        json!({ "a": apps_server("server-a"), "b": apps_server("server-b") }),
    );
    // A profile of `a` alone: one server, URIs as it gives them.
    let mut text: Value = serde_json::from_str(&std::fs::read_to_string(&config).unwrap()).unwrap();
    text["profiles"] = json!({ "only-a": { "servers": ["a"] } });
    std::fs::write(&config, text.to_string()).unwrap();
    let gateway = Gateway::start(&config, home.path(), &[]);

    let mut client = RawClient::new(&gateway.url);
    client.initialize().await;
    let tools = client.request("tools/list", json!({})).await;
    let tools = tools.body.expect("a tools/list answer");
    for server in ["a", "b"] {
        let meta = meta_of(&tools, &format!("{server}__counter"));
        let uri = format!("ui://{server}/counter/app.html");
        assert_eq!(meta["ui"]["resourceUri"], json!(uri), "{tools}");
        assert_eq!(meta["ui/resourceUri"], json!(uri), "{tools}");
        // What else the link says stays.
        let app_only = meta_of(&tools, &format!("{server}__record_click"));
        assert_eq!(app_only["ui"]["visibility"], json!(["app"]), "{tools}");
        assert_eq!(app_only["ui"]["resourceUri"], json!(uri), "{tools}");
    }

    let listed = client.request("resources/list", json!({})).await;
    let listed = listed.body.expect("a resources/list answer");
    assert_eq!(
        uris(&listed),
        ["ui://a/counter/app.html", "ui://b/counter/app.html"],
        "{listed}"
    );

    for (server, label) in [("b", "server-b"), ("a", "server-a")] {
        let uri = format!("ui://{server}/counter/app.html");
        let read = client
            .request("resources/read", json!({ "uri": uri }))
            .await;
        let read = read.body.expect("a resources/read answer");
        let content = &read["result"]["contents"][0];
        assert_eq!(content["uri"], json!(uri), "{read}");
        assert_eq!(content["mimeType"], "text/html;profile=mcp-app", "{read}");
        let html = content["text"].as_str().unwrap_or_default();
        assert!(
            html.contains(&format!("<meta name=\"served-by\" content=\"{label}\">")),
            "{uri} was not read from {server}: {}",
            &html[..html.len().min(400)]
        );
    }

    // One server in the view: its URIs and links as it gives them.
    let only = gateway.url.replace("/mcp", "/mcp/only-a");
    let mut single = RawClient::new(&only);
    single.initialize().await;
    let tools = single.request("tools/list", json!({})).await;
    let tools = tools.body.expect("a tools/list answer");
    assert_eq!(
        meta_of(&tools, "counter")["ui"]["resourceUri"],
        "ui://counter/app.html",
        "{tools}"
    );
    let listed = single.request("resources/list", json!({})).await;
    let listed = listed.body.expect("a resources/list answer");
    assert_eq!(uris(&listed), ["ui://counter/app.html"], "{listed}");
    let read = single
        .request("resources/read", json!({ "uri": "ui://counter/app.html" }))
        .await;
    let read = read.body.expect("a resources/read answer");
    assert_eq!(
        read["result"]["contents"][0]["uri"], "ui://counter/app.html",
        "{read}"
    );
}

/// The `host_ui` tool's text: what the server saw declared of the MCP Apps
/// extension (`ui: null` for nothing).
fn host_ui_text(called: &Value) -> String {
    called["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_default()
        .to_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_gateway_declares_the_apps_extension_to_its_servers_and_the_cli_does_not() {
    let home = tempfile::tempdir().unwrap();
    let config = write_config(home.path(), json!({ "a": apps_server("server-a") }));
    let gateway = Gateway::start(&config, home.path(), &[]);
    let mut client = RawClient::new(&gateway.url);
    client.initialize().await;
    let called = client
        .request("tools/call", json!({ "name": "host_ui", "arguments": {} }))
        .await;
    let called = called.body.expect("a tools/call answer");
    assert_eq!(
        host_ui_text(&called),
        r#"ui: {"mimeTypes":["text/html;profile=mcp-app"]}"#,
        "{called}"
    );

    // `toolbridge call` renders no app: nothing declared.
    let run = std::process::Command::new(common::toolbridge())
        .arg("--config")
        .arg(&config)
        .args(["call", "a", "host_ui"])
        .env("XDG_CACHE_HOME", home.path().join("cli-cache"))
        .env("XDG_DATA_HOME", home.path().join("cli-data"))
        .stdin(std::process::Stdio::null())
        .output()
        .expect("run toolbridge call");
    let stdout = String::from_utf8_lossy(&run.stdout);
    assert!(run.status.success(), "{run:?}");
    assert!(stdout.contains("ui: null"), "{stdout}");
}
