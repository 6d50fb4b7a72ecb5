//! The settings page's Profiles API (`/api/profiles`, `/api/profile-preview`)
//! on the real binary (`toolbridge serve`) with the example server and real
//! HTTP on 127.0.0.1: an edit lands in the config file with every other
//! byte kept, a refused record names its field and writes nothing, writes
//! need the page's header and origin, the preview says what a profile would
//! serve, and `/mcp/NAME` serves the edited view to a real MCP client
//! (rmcp's), which is told its tool list changed.

use crate::common;
use crate::gateway_support;
use crate::web_api_client;

use std::{
    path::PathBuf,
    sync::{Arc, Mutex},
    time::Duration,
};

use common::toolbridge;
use gateway_support::{Gateway, TOKEN};
use rmcp::{
    RoleClient, ServiceExt as _,
    service::NotificationContext,
    transport::{
        StreamableHttpClientTransport, streamable_http_client::StreamableHttpClientTransportConfig,
    },
};
use serde_json::{Value, json};
use web_api_client::{Api, WRITE_HEADER};

/// A commented config: the example server `ex`, a disabled `off`, and the
/// profile `team` (with comments around it).
fn config_text() -> String {
    format!(
        "{{\n  // my servers\n  \"mcpServers\": {{\n    \"ex\": {{\"command\": {cmd}, \"args\": [\"example-server\"]}},\n    \"off\": {{\"command\": \"never\", \"disabled\": true}}\n  }},\n  \"profiles\": {{\n    // the team's view\n    \"team\": {{\"servers\": [\"ex\"], \"tools\": [\"ex__echo\"]}} // keep\n  }}\n}}\n",
        cmd = serde_json::to_string(&toolbridge()).expect("json")
    )
}

struct Page {
    api: Api,
    gateway: Gateway,
    config: PathBuf,
    _home: tempfile::TempDir,
}

impl Page {
    fn start() -> Page {
        let home = tempfile::tempdir().expect("tempdir");
        let config = home.path().join("config.json");
        std::fs::write(&config, config_text()).expect("write config");
        let gateway = Gateway::start(&config, home.path(), &[]);
        Page {
            api: Api::new(&gateway.addr()),
            gateway,
            config,
            _home: home,
        }
    }

    fn file(&self) -> String {
        std::fs::read_to_string(&self.config).expect("read config")
    }
}

#[test]
fn profiles_are_listed_saved_and_removed_keeping_the_files_other_bytes() {
    let page = Page::start();
    let listed = page.api.get("/profiles");
    assert_eq!(listed.status, 200, "{listed:?}");
    assert_eq!(
        listed.json["profiles"],
        json!([{"name": "team", "path": "/mcp/team", "served": true,
                "record": {"servers": ["ex"], "tools": ["ex__echo"]}}])
    );
    let servers: Vec<&str> = listed.json["servers"]
        .as_array()
        .expect("servers")
        .iter()
        .filter_map(|s| s["name"].as_str())
        .collect();
    assert_eq!(servers, ["ex", "off"]);
    assert_eq!(listed.json["editable"], true);

    let original = page.file();
    let record = json!({"servers": ["ex"], "tools": ["ex__*", "!ex__slow"],
                        "rename": {"ex__echo": "say"},
                        "descriptions": {"ex__tiny_image": "A very small picture."},
                        "discovery": "list"});
    let saved = page.api.put("/profiles/dev", record.clone());
    assert_eq!(saved.status, 200, "{saved:?}");
    assert_eq!(saved.json["created"], true, "{saved:?}");
    assert_eq!(saved.json["profile"]["path"], "/mcp/dev");
    let text = page.file();
    // Everything up to the end of `team`'s record is byte for byte the
    // same; a comma follows it, its comment stays on its line, then the new
    // profile.
    let kept = &original[..original.find(" // keep").expect("marker")];
    assert!(
        text.starts_with(&format!("{kept}, // keep\n    \"dev\": {{\n")),
        "{text}"
    );
    assert!(text.ends_with("\n    }\n  }\n}\n"), "{text}");
    let file: Value = serde_json::from_str(
        &text
            .lines()
            .map(|l| l.split(" //").next().unwrap_or(l))
            .filter(|l| !l.trim_start().starts_with("//"))
            .collect::<Vec<_>>()
            .join("\n"),
    )
    .unwrap_or_else(|e| panic!("{e}: {text}"));
    assert_eq!(file["profiles"]["dev"], record);

    // Replaced in place: `team` and the comments stay.
    let edited = page.api.put(
        "/profiles/team",
        json!({"tools": ["!ex__slow"], "discovery": "search"}),
    );
    assert_eq!(edited.status, 200, "{edited:?}");
    assert_eq!(edited.json["created"], false);
    let text = page.file();
    assert!(
        text.starts_with(&original[..original.find("\"team\"").expect("team")]),
        "{text}"
    );
    assert!(text.contains("}, // keep\n    \"dev\""), "{text}");

    let removed = page.api.delete("/profiles/dev");
    assert_eq!(removed.status, 204, "{removed:?}");
    assert_eq!(page.api.delete("/profiles/dev").status, 404);
    let names: Vec<Value> = page.api.get("/profiles").json["profiles"]
        .as_array()
        .expect("profiles")
        .iter()
        .map(|p| p["name"].clone())
        .collect();
    assert_eq!(names, [json!("team")]);
    assert!(
        page.file()
            .starts_with(kept.split("\"team\"").next().expect("head"))
    );
}

#[test]
fn a_refused_record_names_its_field_and_leaves_the_file_byte_identical() {
    let page = Page::start();
    let before = std::fs::read(&page.config).expect("read");
    for (name, record, field) in [
        ("dev", json!({"servers": ["nope"]}), "servers"),
        ("dev", json!({"servers": []}), "servers"),
        ("dev", json!({"tools": ["ex__[a"]}), "tools"),
        (
            "dev",
            json!({"rename": {"ex__echo": "has space"}}),
            "rename",
        ),
        (
            "dev",
            json!({"descriptions": {"ex__echo": 5}}),
            "descriptions",
        ),
        ("dev", json!({"discovery": "grep"}), "discovery"),
        ("a.b", json!({}), "name"),
    ] {
        let reply = page.api.put(&format!("/profiles/{name}"), record.clone());
        assert_eq!(reply.status, 422, "{record}: {reply:?}");
        assert_eq!(reply.field(), Some(field), "{record}: {reply:?}");
        assert!(
            reply.json["error"]["message"]
                .as_str()
                .is_some_and(|m| m.contains(&format!("profile \"{name}\""))),
            "{reply:?}"
        );
        assert_eq!(std::fs::read(&page.config).expect("read"), before);
    }
    let unknown_key = page.api.put("/profiles/dev", json!({"tool": ["*"]}));
    assert_eq!(unknown_key.status, 400, "{unknown_key:?}");
    assert_eq!(std::fs::read(&page.config).expect("read"), before);
}

#[test]
fn profile_writes_without_the_page_header_or_from_a_foreign_origin_are_refused() {
    let page = Page::start();
    let before = std::fs::read(&page.config).expect("read");
    let record = json!({"servers": ["ex"]});
    let no_header = page
        .api
        .send("PUT", "/profiles/dev", Some(record.clone()), &[]);
    assert_eq!(no_header.status, 403, "{no_header:?}");
    for (method, path, body) in [
        ("PUT", "/profiles/dev", Some(record.clone())),
        ("DELETE", "/profiles/team", None),
        ("POST", "/profile-preview", Some(json!({"record": record}))),
    ] {
        let foreign = page.api.send(
            method,
            path,
            body,
            &[(WRITE_HEADER, "1"), ("Origin", "http://evil.example.com")],
        );
        assert_eq!(foreign.status, 403, "{method} {path}: {foreign:?}");
    }
    let foreign_read = page.api.send(
        "GET",
        "/profiles",
        None,
        &[("Origin", "http://evil.example.com")],
    );
    assert_eq!(foreign_read.status, 403, "{foreign_read:?}");
    assert_eq!(std::fs::read(&page.config).expect("read"), before);
}

#[test]
fn the_preview_says_which_glob_takes_each_tool_and_its_final_name() {
    let page = Page::start();
    page.gateway.wait_for_tools(&["echo"]);
    let before = std::fs::read(&page.config).expect("read");
    let reply = page.api.post(
        "/profile-preview",
        json!({"name": "dev", "record": {
            "servers": ["ex"], "tools": ["ex__echo", "ex__tiny_*", "!ex__tiny_audio"],
            "rename": {"ex__echo": "say", "ex__nothing": "zz"},
            "descriptions": {"tiny_image": "A very small picture."}}}),
    );
    assert_eq!(reply.status, 200, "{reply:?}");
    let tools = reply.json["tools"].as_array().expect("tools");
    let tool = |name: &str| {
        tools
            .iter()
            .find(|t| t["tool"] == name)
            .unwrap_or_else(|| panic!("no {name} in {tools:?}"))
            .clone()
    };
    let echo = tool("echo");
    assert_eq!(echo["included"], true);
    assert_eq!(echo["why"], "glob");
    assert_eq!(echo["glob"], "ex__echo");
    assert_eq!(echo["name"], "say");
    assert_eq!(echo["renamed"], true);
    let image = tool("tiny_image");
    assert_eq!(image["glob"], "ex__tiny_*");
    assert_eq!(image["name"], "tiny_image", "one server: names kept");
    assert_eq!(image["description"], "A very small picture.");
    assert_eq!(image["describedAnew"], true);
    assert!(
        image["originalDescription"]
            .as_str()
            .is_some_and(|d| !d.is_empty())
    );
    let audio = tool("tiny_audio");
    assert_eq!(audio["included"], false);
    assert_eq!(audio["why"], "excluded");
    assert_eq!(audio["glob"], "!ex__tiny_audio");
    let slow = tool("slow");
    assert_eq!(slow["included"], false);
    assert_eq!(slow["why"], "notIncluded");
    assert_eq!(reply.json["unused"]["rename"], json!(["ex__nothing"]));
    assert_eq!(reply.json["unused"]["descriptions"], json!([]));
    // A disabled server named by the profile is said not to be served.
    let off = page
        .api
        .post("/profile-preview", json!({"record": {"servers": ["off"]}}));
    assert_eq!(off.status, 200, "{off:?}");
    assert_eq!(
        off.json["servers"],
        json!([{"name": "off", "listed": false, "served": false}])
    );
    let bad = page
        .api
        .post("/profile-preview", json!({"record": {"tools": ["ex__[a"]}}));
    assert_eq!(bad.status, 422, "{bad:?}");
    assert_eq!(bad.field(), Some("tools"));
    assert_eq!(std::fs::read(&page.config).expect("read"), before);
}

/// The `tools/list_changed` notifications a client got.
#[derive(Clone, Default)]
struct Changes(Arc<Mutex<usize>>);

impl rmcp::ClientHandler for Changes {
    async fn on_tool_list_changed(&self, _: NotificationContext<RoleClient>) {
        *self.0.lock().unwrap() += 1;
    }
}

#[test]
fn an_edited_profile_is_served_at_its_url_and_its_client_is_told() {
    let page = Page::start();
    page.gateway.wait_for_tools(&["echo"]);
    let url = format!("{}/team", page.gateway.url);
    page.api.block_on(async {
        let changes = Changes::default();
        let config = StreamableHttpClientTransportConfig::with_uri(url.clone()).auth_header(TOKEN);
        let client = changes
            .clone()
            .serve(StreamableHttpClientTransport::from_config(config))
            .await
            .unwrap_or_else(|e| panic!("connect to {url}: {e}"));
        let names = |tools: Vec<rmcp::model::Tool>| -> Vec<String> {
            let mut names: Vec<String> = tools.iter().map(|t| t.name.to_string()).collect();
            names.sort();
            names
        };
        let before = names(client.list_all_tools().await.expect("tools/list"));
        assert_eq!(before, ["echo"]);

        let saved = page
            .api
            .asynchronous()
            .put(
                "/profiles/team",
                json!({"servers": ["ex"], "tools": ["ex__echo", "ex__tiny_image"],
                       "rename": {"ex__echo": "say"}}),
            )
            .await;
        assert_eq!(saved.status, 200, "{saved:?}");

        let deadline = tokio::time::Instant::now() + Duration::from_secs(60);
        while *changes.0.lock().unwrap() == 0 {
            assert!(
                tokio::time::Instant::now() < deadline,
                "the client of /mcp/team was never told its tools changed; gateway log:\n{}",
                page.gateway.log()
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        let after = names(client.list_all_tools().await.expect("tools/list"));
        assert_eq!(after, ["say", "tiny_image"]);
        let _ = client.cancel().await;
    });
}
