//! The Presets view's API (`/api/presets`) on the real binary: `toolbridge
//! serve` with a temp config, driven over HTTP as the page drives it. Adding
//! a preset goes through the CLI's code: a `${VAR}` reference by default, a
//! stored key only when one is sent, and then the file is 0600; the key is
//! never sent back.

use crate::common;
use crate::web_api_client;

use std::{os::unix::fs::PermissionsExt as _, path::Path};

use serde_json::{Value, json};
use web_api_client::{Reply, Served};

/// A gateway over the built-in example server, and its config file.
fn start() -> Served {
    Served::start(
        json!({ "example": { "command": common::toolbridge(), "args": ["example-server"] } }),
    )
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
    let page = start();
    let before = mode(&page.config);
    let Reply {
        status, json: body, ..
    } = page.api.post("/presets/tavily", json!({})).await;
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
    let Reply { json: listed, .. } = page.api.get("/presets?q=tavily").await;
    let tavily = listed["presets"]
        .as_array()
        .and_then(|p| p.iter().find(|p| p["id"] == "tavily"))
        .unwrap_or_else(|| panic!("{listed}"));
    assert_eq!(tavily["configuredAs"], json!(["tavily"]));
    let Reply { json: listed, .. } = page.api.get("/presets?q=create_entities").await;
    assert_eq!(listed["presets"][0]["configuredAs"], json!([]));
}

#[tokio::test]
async fn a_preset_added_with_a_key_stores_it_and_makes_the_file_private() {
    let page = start();
    std::fs::set_permissions(&page.config, std::fs::Permissions::from_mode(0o644)).unwrap();
    let key = "tvly-web-secret-4821";
    let Reply {
        status, json: body, ..
    } = page
        .api
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
        let Reply {
            status, json: body, ..
        } = page.api.get(path).await;
        assert_eq!(status, 200);
        assert!(!body.to_string().contains(key), "{path}: {body}");
    }
    assert!(!page.gateway.log().contains(key), "{}", page.gateway.log());
}

#[tokio::test]
async fn search_finds_presets_by_words_and_category() {
    let page = start();
    let ids = |body: &Value| -> Vec<String> {
        body["presets"]
            .as_array()
            .expect("presets")
            .iter()
            .map(|p| p["id"].as_str().unwrap_or_default().to_owned())
            .collect()
    };
    let Reply {
        status, json: all, ..
    } = page.api.get("/presets").await;
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
    let Reply { json: by_tool, .. } = page.api.get("/presets?q=create_entities").await;
    assert_eq!(ids(&by_tool), ["memory"]);
    let Reply { json: by_name, .. } = page.api.get("/presets?q=TAVILY").await;
    assert!(ids(&by_name).contains(&"tavily".to_owned()), "{by_name}");
    let Reply { json: none, .. } = page.api.get("/presets?q=no-such-preset-anywhere").await;
    assert_eq!(ids(&none), Vec::<String>::new());

    let Reply { json: vision, .. } = page.api.get("/presets?category=vision").await;
    assert!(!ids(&vision).is_empty());
    assert!(
        vision["presets"]
            .as_array()
            .unwrap()
            .iter()
            .all(|p| p["category"] == "vision"),
        "{vision}"
    );
    let Reply {
        status, json: body, ..
    } = page.api.get("/presets?category=nope").await;
    assert_eq!((status, &body["error"]["field"]), (422, &json!("category")));
}

#[tokio::test]
async fn an_unknown_preset_is_404_and_writes_nothing() {
    let page = start();
    let before = page.config_text();
    let Reply {
        status, json: body, ..
    } = page.api.get("/presets/no-such-preset").await;
    assert_eq!(status, 404, "{body}");
    assert!(
        body["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("no-such-preset")),
        "{body}"
    );
    let Reply { status, .. } = page.api.post("/presets/no-such-preset", json!({})).await;
    assert_eq!(status, 404);
    assert_eq!(page.config_text(), before);
}

#[tokio::test]
async fn form_errors_name_their_field_and_change_nothing() {
    let page = start();
    let Reply { status, .. } = page.api.post("/presets/memory", json!({})).await;
    assert_eq!(status, 201);
    let before = page.config_text();

    // The name is taken.
    let Reply {
        status, json: body, ..
    } = page.api.post("/presets/memory", json!({})).await;
    assert_eq!(
        (status, &body["error"]["field"]),
        (422, &json!("name")),
        "{body}"
    );
    // A key for a preset that takes none.
    let Reply {
        status, json: body, ..
    } = page.api.post("/presets/time", json!({"apiKey": "k"})).await;
    assert_eq!(
        (status, &body["error"]["field"]),
        (422, &json!("apiKey")),
        "{body}"
    );
    // "Store the key" ticked with no key typed.
    let Reply {
        status, json: body, ..
    } = page
        .api
        .post("/presets/tavily", json!({"apiKey": "  "}))
        .await;
    assert_eq!(
        (status, &body["error"]["field"]),
        (422, &json!("apiKey")),
        "{body}"
    );
    assert_eq!(page.config_text(), before);

    // A write without the page's header is refused before anything runs.
    let response = page
        .api
        .send("POST", "/presets/time", Some(json!({})), &[])
        .await;
    assert_eq!(response.status, 403);
    assert_eq!(page.config_text(), before);
}
