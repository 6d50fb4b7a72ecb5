//! The Presets view's API (`/api/presets`) on the real binary: `toolbridge
//! serve` with a temp config, driven over HTTP as the page drives it. Adding
//! a preset goes through the CLI's code: a `${VAR}` reference by default, a
//! stored key only when one is sent, and then the file is 0600; the key is
//! never sent back.

mod common;
mod gateway_support;

use std::{os::unix::fs::PermissionsExt as _, path::Path};

use gateway_support::{Gateway, TOKEN, write_config};
use serde_json::{Value, json};

/// A gateway over the built-in example server, and its config file.
struct Page {
    gateway: Gateway,
    config: std::path::PathBuf,
    client: reqwest::Client,
    _dir: tempfile::TempDir,
}

impl Page {
    fn start() -> Page {
        let dir = tempfile::tempdir().expect("tempdir");
        let config = write_config(
            dir.path(),
            json!({ "example": { "command": common::toolbridge(), "args": ["example-server"] } }),
        );
        let gateway = Gateway::start(&config, dir.path(), &[]);
        Page {
            gateway,
            config,
            client: reqwest::Client::new(),
            _dir: dir,
        }
    }

    fn url(&self, path: &str) -> String {
        format!("http://{}/api{path}", self.gateway.addr())
    }

    async fn get(&self, path: &str) -> (u16, Value) {
        let response = self
            .client
            .get(self.url(path))
            .bearer_auth(TOKEN)
            .send()
            .await
            .expect("GET");
        answer(response).await
    }

    async fn post(&self, path: &str, body: Value) -> (u16, Value) {
        let response = self
            .client
            .post(self.url(path))
            .bearer_auth(TOKEN)
            .header("X-Toolbridge-Request", "1")
            .json(&body)
            .send()
            .await
            .expect("POST");
        answer(response).await
    }

    fn config_text(&self) -> String {
        std::fs::read_to_string(&self.config).expect("config")
    }
}

async fn answer(response: reqwest::Response) -> (u16, Value) {
    let status = response.status().as_u16();
    let text = response.text().await.expect("body");
    let body = serde_json::from_str(&text).unwrap_or_else(|_| Value::String(text));
    (status, body)
}

fn mode(path: &Path) -> u32 {
    std::fs::metadata(path)
        .expect("metadata")
        .permissions()
        .mode()
        & 0o777
}

#[tokio::test]
async fn a_preset_added_without_a_key_refers_to_its_variable() {
    let page = Page::start();
    let before = mode(&page.config);
    let (status, body) = page.post("/presets/tavily", json!({})).await;
    assert_eq!(status, 201, "{body}");
    assert_eq!(
        body,
        json!({"name": "tavily", "preset": "tavily", "key": "reference",
               "keyVar": "TAVILY_API_KEY", "keyRequired": true})
    );
    let config: Value = serde_json::from_str(&page.config_text()).expect("json");
    assert_eq!(
        config["mcpServers"]["tavily"]["env"]["TAVILY_API_KEY"],
        "${TAVILY_API_KEY}"
    );
    // The example server is still there, and the file's mode unchanged.
    assert!(config["mcpServers"]["example"].is_object());
    assert_eq!(mode(&page.config), before);
    // The list now says the preset is in the config, and under which name.
    let (_, listed) = page.get("/presets?q=tavily").await;
    let tavily = listed["presets"]
        .as_array()
        .and_then(|p| p.iter().find(|p| p["id"] == "tavily"))
        .unwrap_or_else(|| panic!("{listed}"));
    assert_eq!(tavily["configuredAs"], json!(["tavily"]));
    let (_, listed) = page.get("/presets?q=create_entities").await;
    assert_eq!(listed["presets"][0]["configuredAs"], json!([]));
}

#[tokio::test]
async fn a_preset_added_with_a_key_stores_it_and_makes_the_file_private() {
    let page = Page::start();
    std::fs::set_permissions(&page.config, std::fs::Permissions::from_mode(0o644)).unwrap();
    let key = "tvly-web-secret-4821";
    let (status, body) = page
        .post("/presets/tavily", json!({"name": "search", "apiKey": key}))
        .await;
    assert_eq!(status, 201, "{body}");
    assert_eq!(
        body,
        json!({"name": "search", "preset": "tavily", "key": "stored"})
    );
    assert_eq!(mode(&page.config), 0o600);
    let config: Value = serde_json::from_str(&page.config_text()).expect("json");
    assert_eq!(config["mcpServers"]["search"]["env"]["TAVILY_API_KEY"], key);
    // No answer of the API holds the key.
    for path in ["/presets", "/presets/tavily", "/presets?q=tavily"] {
        let (status, body) = page.get(path).await;
        assert_eq!(status, 200);
        assert!(!body.to_string().contains(key), "{path}: {body}");
    }
    assert!(!page.gateway.log().contains(key), "{}", page.gateway.log());
}

#[tokio::test]
async fn search_finds_presets_by_words_and_category() {
    let page = Page::start();
    let ids = |body: &Value| -> Vec<String> {
        body["presets"]
            .as_array()
            .expect("presets")
            .iter()
            .map(|p| p["id"].as_str().unwrap_or_default().to_owned())
            .collect()
    };
    let (status, all) = page.get("/presets").await;
    assert_eq!(status, 200);
    assert_eq!(
        all["categories"],
        json!(["search", "vision", "web-reading", "code-repo", "general"])
    );
    assert!(ids(&all).len() >= 15, "{all}");
    // Details the view shows: tools, documentation, whether a key is needed.
    let tavily = &all["presets"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["id"] == "tavily")
        .cloned()
        .expect("tavily");
    assert_eq!(tavily["requiresApiKey"], true);
    assert!(tavily["documentationUrl"].as_str().is_some());
    assert!(tavily["tools"].as_array().is_some_and(|t| !t.is_empty()));

    // By a tool's name, by a word of a description, case-insensitively.
    let (_, by_tool) = page.get("/presets?q=create_entities").await;
    assert_eq!(ids(&by_tool), ["memory"]);
    let (_, by_name) = page.get("/presets?q=TAVILY").await;
    assert!(ids(&by_name).contains(&"tavily".to_owned()), "{by_name}");
    let (_, none) = page.get("/presets?q=no-such-preset-anywhere").await;
    assert_eq!(ids(&none), Vec::<String>::new());

    let (_, vision) = page.get("/presets?category=vision").await;
    assert!(!ids(&vision).is_empty());
    assert!(
        vision["presets"]
            .as_array()
            .unwrap()
            .iter()
            .all(|p| p["category"] == "vision"),
        "{vision}"
    );
    let (status, body) = page.get("/presets?category=nope").await;
    assert_eq!((status, &body["error"]["field"]), (422, &json!("category")));
}

#[tokio::test]
async fn an_unknown_preset_is_404_and_writes_nothing() {
    let page = Page::start();
    let before = page.config_text();
    let (status, body) = page.get("/presets/no-such-preset").await;
    assert_eq!(status, 404, "{body}");
    assert!(
        body["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("no-such-preset")),
        "{body}"
    );
    let (status, _) = page.post("/presets/no-such-preset", json!({})).await;
    assert_eq!(status, 404);
    assert_eq!(page.config_text(), before);
}

#[tokio::test]
async fn form_errors_name_their_field_and_change_nothing() {
    let page = Page::start();
    let (status, _) = page.post("/presets/memory", json!({})).await;
    assert_eq!(status, 201);
    let before = page.config_text();

    // The name is taken.
    let (status, body) = page.post("/presets/memory", json!({})).await;
    assert_eq!(
        (status, &body["error"]["field"]),
        (422, &json!("name")),
        "{body}"
    );
    // A key for a preset that takes none.
    let (status, body) = page.post("/presets/time", json!({"apiKey": "k"})).await;
    assert_eq!(
        (status, &body["error"]["field"]),
        (422, &json!("apiKey")),
        "{body}"
    );
    // "Store the key" ticked with no key typed.
    let (status, body) = page.post("/presets/tavily", json!({"apiKey": "  "})).await;
    assert_eq!(
        (status, &body["error"]["field"]),
        (422, &json!("apiKey")),
        "{body}"
    );
    assert_eq!(page.config_text(), before);

    // A write without the page's header is refused before anything runs.
    let response = page
        .client
        .post(page.url("/presets/time"))
        .bearer_auth(TOKEN)
        .json(&json!({}))
        .send()
        .await
        .expect("POST");
    assert_eq!(response.status().as_u16(), 403);
    assert_eq!(page.config_text(), before);
}
