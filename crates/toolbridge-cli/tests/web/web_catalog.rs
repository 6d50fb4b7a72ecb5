//! The Resources-and-prompts view's API (`/api/resources`, `/api/prompts`)
//! on the real binary: `toolbridge serve` in front of the conformance
//! suite's reference server (streamable HTTP, nobody here wrote it) and the
//! built-in example server (which offers neither), driven over HTTP.

use crate::common;
use crate::web_api_client;

use base64::Engine as _;
use common::reference::reference_url;
use serde_json::{Value, json};
use web_api_client::{Reply, Served};

/// A gateway over the reference server and the built-in example server.
fn start() -> Served {
    Served::start(json!({
        "ref": { "type": "http", "url": reference_url() },
        "example": { "command": common::toolbridge(), "args": ["example-server"] },
    }))
}

/// `/resources/read` of `uri` on `server`, as the page asks for it.
fn read(server: &str, uri: &str) -> String {
    let query = url::form_urlencoded::Serializer::new(String::new())
        .append_pair("server", server)
        .append_pair("uri", uri)
        .finish();
    format!("/resources/read?{query}")
}

/// The entry of `server` in a `{"servers": [...]}` answer.
fn server<'a>(body: &'a Value, name: &str) -> &'a Value {
    body["servers"]
        .as_array()
        .and_then(|s| s.iter().find(|s| s["server"] == name))
        .unwrap_or_else(|| panic!("no {name} in {body}"))
}

#[tokio::test]
async fn resources_and_templates_are_listed_per_server() {
    let page = start();
    let Reply {
        status, json: body, ..
    } = page.api.get("/resources").await;
    assert_eq!(status, 200, "{body}");
    let reference = server(&body, "ref");
    assert!(reference.get("error").is_none(), "{reference}");
    let text = reference["resources"]
        .as_array()
        .and_then(|r| r.iter().find(|r| r["uri"] == "test://static-text"))
        .unwrap_or_else(|| panic!("{reference}"));
    assert_eq!(text["mimeType"], "text/plain");
    assert!(
        reference["templates"].as_array().is_some_and(|t| t
            .iter()
            .any(|t| t["uriTemplate"] == "test://template/{id}/data")),
        "{reference}"
    );
    // A server without resources has none, and that is no error.
    let example = server(&body, "example");
    assert_eq!(
        (
            &example["resources"],
            &example["templates"],
            example.get("error")
        ),
        (&json!([]), &json!([]), None)
    );
}

#[tokio::test]
async fn a_text_resource_is_read_as_text_and_a_blob_as_base64_with_its_type() {
    let page = start();
    let Reply {
        status, json: body, ..
    } = page.api.get(&read("ref", "test://static-text")).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(
        body["contents"][0]["text"],
        "This is the content of the static text resource."
    );

    let Reply {
        status, json: body, ..
    } = page.api.get(&read("ref", "test://static-binary")).await;
    assert_eq!(status, 200, "{body}");
    let blob = &body["contents"][0];
    assert_eq!(blob["mimeType"], "image/png");
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(blob["blob"].as_str().expect("blob"))
        .expect("base64");
    assert!(bytes.starts_with(b"\x89PNG"), "{blob}");
    // The flattener's words for it, as `toolbridge resources read` says.
    assert_eq!(
        blob["summary"],
        "[Resource: test://static-binary (image/png, 70 bytes)]"
    );
}

#[tokio::test]
async fn a_prompt_is_listed_with_its_arguments_and_got_with_them_filled_in() {
    let page = start();
    let Reply {
        status, json: body, ..
    } = page.api.get("/prompts").await;
    assert_eq!(status, 200, "{body}");
    let prompt = server(&body, "ref")["prompts"]
        .as_array()
        .and_then(|p| p.iter().find(|p| p["name"] == "test_prompt_with_arguments"))
        .cloned()
        .unwrap_or_else(|| panic!("{body}"));
    let arguments: Vec<&str> = prompt["arguments"]
        .as_array()
        .expect("arguments")
        .iter()
        .filter_map(|a| a["name"].as_str())
        .collect();
    assert_eq!(arguments, ["arg1", "arg2"]);
    assert_eq!(server(&body, "example")["prompts"], json!([]));

    let Reply {
        status, json: got, ..
    } = page
        .api
        .post(
            "/prompts/get",
            json!({"server": "ref", "name": "test_prompt_with_arguments",
                   "arguments": {"arg1": "one", "arg2": "2"}}),
        )
        .await;
    assert_eq!(status, 200, "{got}");
    assert_eq!(got["messages"][0]["role"], "user");
    assert_eq!(
        got["messages"][0]["text"],
        "Prompt with arguments: arg1='one', arg2='2'"
    );

    // An image in a prompt comes as MCP content, for the page to show.
    let Reply {
        status, json: got, ..
    } = page
        .api
        .post(
            "/prompts/get",
            json!({"server": "ref", "name": "test_prompt_with_image"}),
        )
        .await;
    assert_eq!(status, 200, "{got}");
    assert_eq!(got["messages"][0]["content"]["type"], "image");
    assert_eq!(got["messages"][0]["text"], "[Image: image/png]");
}

#[tokio::test]
async fn unknown_servers_resources_and_prompts_are_404() {
    let page = start();
    let Reply {
        status, json: body, ..
    } = page.api.get(&read("ref", "test://nope")).await;
    assert_eq!(status, 404, "{body}");
    assert!(
        body["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("test://nope")),
        "{body}"
    );
    let Reply {
        status, json: body, ..
    } = page.api.get(&read("nobody", "test://static-text")).await;
    assert_eq!(status, 404, "{body}");
    let Reply {
        status, json: body, ..
    } = page
        .api
        .post("/prompts/get", json!({"server": "ref", "name": "nope"}))
        .await;
    assert_eq!(status, 404, "{body}");
}
