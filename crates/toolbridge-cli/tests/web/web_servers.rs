//! The settings page's Servers API (`/api/servers`) on the real binary
//! (`toolbridge serve`), with a temp config, real stdio servers (the
//! built-in example server) and real HTTP on 127.0.0.1: what the page
//! writes lands in the config file (comments kept, nothing written on
//! invalid input), secrets never reach the page, writes need the page's
//! header and the page's origin, and the gateway's state follows the file.

use crate::common;
use crate::gateway_support;
use crate::web_api_client;

use std::{
    path::{Path, PathBuf},
    process::Command,
    time::Duration,
};

use common::{toolbridge, wait_until};
use gateway_support::Gateway;
use serde_json::{Value, json};
use web_api_client::{Api, Reply, WRITE_HEADER};

/// The example server as a config entry.
fn example() -> Value {
    json!({ "command": toolbridge(), "args": ["example-server"] })
}

/// A gateway over the config `text` (written as is: comments and all),
/// its API, the temp folder and the config path.
struct Page {
    api: Api,
    gateway: Gateway,
    config: PathBuf,
    home: tempfile::TempDir,
}

impl Page {
    fn start(text: &str) -> Page {
        let home = tempfile::tempdir().expect("tempdir");
        let config = home.path().join("config.json");
        std::fs::write(&config, text).expect("write config");
        let gateway = Gateway::start(&config, home.path(), &[]);
        Page {
            api: Api::new(&gateway.addr()),
            gateway,
            config,
            home,
        }
    }

    fn file(&self) -> String {
        std::fs::read_to_string(&self.config).expect("read config")
    }

    fn servers(&self) -> Value {
        let reply = self.api.get("/servers");
        assert_eq!(reply.status, 200, "{reply:?}");
        reply.json["servers"].clone()
    }

    fn server(&self, name: &str) -> Value {
        self.servers()
            .as_array()
            .and_then(|s| s.iter().find(|s| s["name"] == name).cloned())
            .unwrap_or_else(|| panic!("no server {name} in {}", self.servers()))
    }

    /// Polls (60 s at most) until server `name`'s view satisfies `check`.
    fn wait_for(&self, name: &str, what: &str, check: impl Fn(&Value) -> bool) -> Value {
        let mut last = Value::Null;
        let ok = wait_until(Duration::from_secs(60), || {
            last = self.server(name);
            check(&last)
        });
        assert!(
            ok,
            "server {name} never got {what}; last: {last}\ngateway log:\n{}",
            self.gateway.log()
        );
        last
    }

    /// `toolbridge --config CONFIG args...` with this page's home folders.
    fn cli(&self, args: &[&str]) -> Command {
        let home = self.home.path();
        let mut command = Command::new(toolbridge());
        command
            .arg("--config")
            .arg(&self.config)
            .args(args)
            .env("HOME", home)
            .env("XDG_CONFIG_HOME", home.join("config"))
            .env("XDG_CACHE_HOME", home.join("cache"))
            .env("XDG_DATA_HOME", home.join("data"))
            .env_remove("TOOLBRIDGE_CONFIG")
            .stdin(std::process::Stdio::null());
        command
    }
}

fn config_text(servers: Value) -> String {
    serde_json::to_string_pretty(&json!({ "mcpServers": servers })).expect("json")
}

fn parsed(path: &Path) -> Value {
    let text = std::fs::read_to_string(path).expect("read config");
    // The file may hold comments: strip whole-line `//` comments to parse.
    let plain: String = text
        .lines()
        .filter(|l| !l.trim_start().starts_with("//"))
        .collect::<Vec<_>>()
        .join("\n");
    serde_json::from_str(&plain).unwrap_or_else(|e| panic!("{e}: {text}"))
}

#[test]
fn add_edit_rename_and_remove_land_in_the_file_with_its_comments_kept() {
    let text = format!(
        "{{\n  // my servers, keep this note\n  \"mcpServers\": {{\n    \"ex\": {}\n  }}\n}}\n",
        example()
    );
    let page = Page::start(&text);

    let added = page.api.post(
        "/servers",
        json!({
            "name": "two", "transport": "stdio", "command": toolbridge(),
            "args": ["example-server"],
            "env": [{"key": "API_KEY", "value": "s3cret-value-1"}, {"key": "TZ", "value": "UTC"}]
        }),
    );
    assert_eq!(added.status, 201, "{added:?}");
    assert_eq!(added.json["name"], "two");
    assert_eq!(added.json["env"], json!({"API_KEY": "***", "TZ": "***"}));
    assert!(page.file().contains("// my servers, keep this note"));
    assert_eq!(
        parsed(&page.config)["mcpServers"]["two"]["env"],
        json!({"API_KEY": "s3cret-value-1", "TZ": "UTC"})
    );

    // The page sends the masked value back unchanged: the secret stays.
    let edited = page.api.put(
        "/servers/two",
        json!({
            "name": "two", "transport": "stdio", "command": toolbridge(),
            "args": ["example-server", "--verbose"],
            "env": [{"key": "API_KEY", "value": "***"}, {"key": "TZ", "value": "Europe/Paris"}]
        }),
    );
    assert_eq!(edited.status, 200, "{edited:?}");
    let two = &parsed(&page.config)["mcpServers"]["two"];
    assert_eq!(two["args"], json!(["example-server", "--verbose"]));
    assert_eq!(
        two["env"],
        json!({"API_KEY": "s3cret-value-1", "TZ": "Europe/Paris"})
    );

    // A new name renames it; another transport replaces the stdio fields.
    let renamed = page.api.put(
        "/servers/two",
        json!({"name": "remote", "transport": "sse", "url": "http://127.0.0.1:9/sse",
               "headers": [{"key": "Authorization", "value": "Bearer ${TOKEN}"}]}),
    );
    assert_eq!(renamed.status, 200, "{renamed:?}");
    let servers = parsed(&page.config)["mcpServers"].clone();
    assert!(servers.get("two").is_none(), "{servers}");
    assert_eq!(
        servers["remote"],
        json!({"type": "sse", "url": "http://127.0.0.1:9/sse",
               "headers": {"Authorization": "Bearer ${TOKEN}"}})
    );

    let removed = page.api.delete("/servers/remote");
    assert_eq!(removed.status, 204, "{removed:?}");
    assert!(parsed(&page.config)["mcpServers"].get("remote").is_none());
    assert!(page.file().contains("// my servers, keep this note"));
    assert_eq!(page.api.delete("/servers/remote").status, 404);
}

#[test]
fn invalid_input_names_the_field_and_leaves_the_file_byte_identical() {
    let page = Page::start(&format!(
        "{{\n  // note\n  \"mcpServers\": {{\n    \"ex\": {}\n  }}\n}}\n",
        example()
    ));
    let before = std::fs::read(&page.config).expect("read");
    let cases = [
        (
            json!({"name": "", "transport": "stdio", "command": "x"}),
            "name",
        ),
        (
            json!({"name": "ex", "transport": "stdio", "command": "x"}),
            "name",
        ),
        (
            json!({"name": "a", "transport": "carrier-pigeon"}),
            "transport",
        ),
        (
            json!({"name": "a", "transport": "stdio", "command": "  "}),
            "command",
        ),
        (json!({"name": "a", "transport": "http", "url": ""}), "url"),
        (
            json!({"name": "a", "transport": "http", "url": "not a url"}),
            "url",
        ),
        (
            json!({"name": "a", "transport": "websocket", "url": "https://h/ws"}),
            "url",
        ),
        (
            json!({"name": "a", "transport": "stdio", "command": "x",
                   "env": [{"key": "BAD KEY", "value": "1"}]}),
            "env.BAD KEY",
        ),
        (
            json!({"name": "a", "transport": "http", "url": "https://h/mcp",
                   "headers": [{"key": "Authorization", "value": "***"}]}),
            "headers.Authorization",
        ),
    ];
    for (form, field) in cases {
        let reply = page.api.post("/servers", form.clone());
        assert!(
            (400..500).contains(&reply.status),
            "{form} was accepted: {reply:?}"
        );
        assert_eq!(reply.field(), Some(field), "{form}: {reply:?}");
        assert_eq!(
            std::fs::read(&page.config).expect("read"),
            before,
            "{form} changed the file"
        );
    }
    // The same through an edit.
    let reply = page.api.put(
        "/servers/ex",
        json!({"name": "ex", "transport": "stdio", "command": ""}),
    );
    assert_eq!(reply.field(), Some("command"), "{reply:?}");
    let reply = page.api.put(
        "/servers/nope",
        json!({"name": "nope", "transport": "stdio", "command": "x"}),
    );
    assert_eq!(reply.status, 404, "{reply:?}");
    assert_eq!(std::fs::read(&page.config).expect("read"), before);
}

#[test]
fn cli_adds_and_page_edits_at_once_lose_nothing() {
    const EACH: usize = 8;
    let mut servers = serde_json::Map::new();
    servers.insert("ex".into(), example());
    for i in 0..EACH {
        servers.insert(format!("edit-{i}"), json!({"command": "old-server"}));
    }
    let page = Page::start(&config_text(Value::Object(servers)));
    let cli: Vec<std::process::Child> = (0..EACH)
        .map(|i| {
            page.cli(&["servers", "add", &format!("cli-{i}"), "--", "cli-server"])
                .stdout(std::process::Stdio::null())
                .stderr(std::process::Stdio::null())
                .spawn()
                .expect("spawn toolbridge servers add")
        })
        .collect();
    let api = page.api.asynchronous();
    let edits = (0..EACH).map(|i| async move {
        let body = json!({"name": format!("edit-{i}"), "transport": "stdio",
                          "command": "new-server", "args": [format!("{i}")]});
        api.put(&format!("/servers/edit-{i}"), body).await
    });
    let adds = (0..EACH).map(|i| async move {
        let body = json!({"name": format!("page-{i}"), "transport": "stdio",
                          "command": "page-server"});
        api.post("/servers", body).await
    });
    let (mut replies, added): (Vec<Reply>, Vec<Reply>) = page.api.block_on(futures::future::join(
        futures::future::join_all(edits),
        futures::future::join_all(adds),
    ));
    replies.extend(added);
    for reply in &replies {
        assert!(reply.status == 200 || reply.status == 201, "{reply:?}");
    }
    for mut child in cli {
        assert!(child.wait().expect("wait").success());
    }
    let servers = parsed(&page.config)["mcpServers"].clone();
    for i in 0..EACH {
        assert!(
            servers.get(format!("cli-{i}")).is_some(),
            "cli-{i} lost: {servers}"
        );
        assert!(
            servers.get(format!("page-{i}")).is_some(),
            "page-{i} lost: {servers}"
        );
        assert_eq!(
            servers[format!("edit-{i}")],
            json!({"command": "new-server", "args": [format!("{i}")]}),
            "edit-{i} lost its edit"
        );
    }
}

#[test]
fn masked_secrets_never_appear_in_any_response() {
    let secrets = [
        "hdr-secret-4711",
        "env-secret-4712",
        "arg-secret-4713",
        "url-secret-4714",
    ];
    let page = Page::start(&config_text(json!({
        "ex": example(),
        // `sh -c SCRIPT --api-key SECRET`: the script ignores its $0 and $1.
        "local": {"command": "sh",
                  "args": ["-c", format!("exec {} example-server", toolbridge()),
                           "--api-key", secrets[2]],
                  "env": {"API_KEY": secrets[1]}},
        "remote": {"type": "http", "url": format!("http://127.0.0.1:9/mcp?token={}", secrets[3]),
                   "headers": {"Authorization": format!("Bearer {}", secrets[0])}},
    })));
    let mut replies = vec![page.api.get("/servers"), page.api.get("/servers/local")];
    let local = page.server("local");
    let remote = page.server("remote");
    // The page's edit sends back what it was shown.
    let pairs = |map: &Value| -> Vec<Value> {
        map.as_object()
            .map(|m| {
                m.iter()
                    .map(|(k, v)| json!({"key": k, "value": v}))
                    .collect()
            })
            .unwrap_or_default()
    };
    replies.push(page.api.put(
        "/servers/local",
        json!({"name": "local", "transport": "stdio", "command": local["command"],
               "args": local["args"], "env": pairs(&local["env"])}),
    ));
    replies.push(page.api.put(
        "/servers/remote",
        json!({"name": "remote", "transport": "http", "url": remote["url"],
               "headers": pairs(&remote["headers"])}),
    ));
    replies.push(page.api.post("/servers/remote/disable", json!({})));
    replies.push(page.api.post("/servers/remote/enable", json!({})));
    replies.push(page.api.post("/servers/remote/test", json!({})));
    replies.push(page.api.post("/servers/local/test", json!({})));
    replies.push(page.api.get("/doctor"));
    for reply in &replies {
        assert!(reply.status < 500, "{reply:?}");
        for secret in secrets {
            assert!(
                !reply.text.contains(secret),
                "{secret} leaked: {}",
                reply.text
            );
        }
    }
    assert_eq!(replies[2].status, 200, "{:?}", replies[2]);
    assert_eq!(replies[3].status, 200, "{:?}", replies[3]);
    // ... and the stored secrets are all still there.
    let file = page.file();
    for secret in secrets {
        assert!(file.contains(secret), "{secret} lost from the file: {file}");
    }
    assert_eq!(replies[7].json["ok"], true, "{:?}", replies[7]);
}

#[test]
fn writes_without_the_page_header_or_from_a_foreign_origin_are_refused() {
    let page = Page::start(&config_text(json!({ "ex": example() })));
    let before = std::fs::read(&page.config).expect("read");
    let form = json!({"name": "a", "transport": "stdio", "command": "x"});
    let no_header = page.api.send("POST", "/servers", Some(form.clone()), &[]);
    assert_eq!(no_header.status, 403, "{no_header:?}");
    let delete = page.api.send("DELETE", "/servers/ex", None, &[]);
    assert_eq!(delete.status, 403, "{delete:?}");
    let foreign = page.api.send(
        "POST",
        "/servers",
        Some(form),
        &[(WRITE_HEADER, "1"), ("Origin", "http://evil.example.com")],
    );
    assert_eq!(foreign.status, 403, "{foreign:?}");
    let foreign_read = page.api.send(
        "GET",
        "/servers",
        None,
        &[("Origin", "http://evil.example.com")],
    );
    assert_eq!(foreign_read.status, 403, "{foreign_read:?}");
    assert_eq!(std::fs::read(&page.config).expect("read"), before);
}

#[test]
fn disable_and_enable_reach_the_gateway_through_its_config_watcher() {
    let page = Page::start(&config_text(json!({ "ex": example() })));
    page.gateway.wait_for_tools(&["echo"]);
    let running = page.wait_for("ex", "running", |s| s["status"] == "running");
    assert!(
        running["startedAtMs"]
            .as_u64()
            .is_some_and(|ms| ms > 1_600_000_000_000),
        "{running}"
    );
    assert!(
        running["toolCount"].as_u64().is_some_and(|n| n >= 4),
        "{running}"
    );
    assert_eq!(running["served"], true);

    let disabled = page.api.post("/servers/ex/disable", json!({}));
    assert_eq!(disabled.status, 200, "{disabled:?}");
    assert_eq!(parsed(&page.config)["mcpServers"]["ex"]["disabled"], true);
    page.wait_for("ex", "left out by the gateway", |s| {
        s["status"] == "disabled" && s["served"] == false
    });

    let enabled = page.api.post("/servers/ex/enable", json!({}));
    assert_eq!(enabled.status, 200, "{enabled:?}");
    assert!(
        parsed(&page.config)["mcpServers"]["ex"]
            .get("disabled")
            .is_none()
    );
    page.wait_for("ex", "served again", |s| s["served"] == true);
    page.gateway.wait_for_tools(&["echo"]);
    page.wait_for("ex", "running again", |s| s["status"] == "running");
}

#[test]
fn a_server_that_fails_shows_failed_with_its_stderr_tail() {
    let page = Page::start(&config_text(json!({
        "ex": example(),
        "broken": {"command": "sh", "args": ["-c", "echo broken-marker-42 >&2; exit 3"]},
        "off": {"command": "never-started", "disabled": true},
    })));
    page.gateway.wait_for_tools(&["ex__echo"]);
    let broken = page.wait_for("broken", "failed", |s| s["status"] == "failed");
    assert!(
        broken["stderr"]
            .as_str()
            .is_some_and(|s| s.contains("broken-marker-42")),
        "{broken}"
    );
    assert!(
        broken["error"]
            .as_str()
            .is_some_and(|e| e.contains("broken")),
        "{broken}"
    );
    let off = page.server("off");
    assert_eq!(off["status"], "disabled");
    assert_eq!(off["served"], false);
}

#[test]
fn test_reports_the_tool_count_or_the_error() {
    let page = Page::start(&config_text(json!({
        "ex": example(),
        "missing": {"command": "toolbridge-test-no-such-command"},
        "off": {"command": toolbridge(), "args": ["example-server"], "disabled": true},
    })));
    let ok = page.api.post("/servers/ex/test", json!({}));
    assert_eq!(ok.status, 200, "{ok:?}");
    assert_eq!(ok.json["ok"], true, "{ok:?}");
    assert!(
        ok.json["toolCount"].as_u64().is_some_and(|n| n >= 4),
        "{ok:?}"
    );
    let missing = page.api.post("/servers/missing/test", json!({}));
    assert_eq!(missing.status, 200, "{missing:?}");
    assert_eq!(missing.json["ok"], false);
    assert_eq!(
        missing.json["findings"][0]["problem"]["kind"], "commandNotFound",
        "{missing:?}"
    );
    // A disabled server is tested too: asked for by name.
    let off = page.api.post("/servers/off/test", json!({}));
    assert_eq!(off.json["ok"], true, "{off:?}");
    assert_eq!(page.api.post("/servers/nope/test", json!({})).status, 404);
}
