//! `toolbridge tools --format` and `toolbridge exec` round trips: the names a
//! provider is given route its calls back to the right server, for OpenAI,
//! Anthropic and Gemini, with images and tool errors.

use crate::common;

use std::process::Command;

use common::*;
use serde_json::{Value, json};

struct Setup {
    _dir: tempfile::TempDir,
    config: std::path::PathBuf,
}

/// The example server twice (under a short and a 70-character name) and
/// server-everything, so two servers offer the same tool names.
fn setup() -> Setup {
    let dir = tempdir();
    let config = dir.path().join("config.json");
    let long = "l".repeat(70);
    std::fs::write(
        &config,
        json!({ "mcpServers": {
            "example": { "command": toolbridge(), "args": ["example-server"] },
            long: { "command": toolbridge(), "args": ["example-server"] },
            "everything": { "command": "node", "args": [everything_js(), "stdio"] },
        } })
        .to_string(),
    )
    .unwrap();
    Setup { _dir: dir, config }
}

impl Setup {
    fn run(&self, args: &[&str], stdin: &str) -> Value {
        let out = output_with_stdin(
            Command::new(toolbridge())
                .arg("--config")
                .arg(&self.config)
                .args(args),
            stdin.as_bytes(),
        );
        assert!(
            out.status.success(),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        serde_json::from_slice(&out.stdout).unwrap()
    }

    /// The provider names of `tools --format FORMAT`.
    fn names(&self, format: &str) -> Vec<String> {
        let tools = self.run(&["tools", "--format", format], "");
        let list = match format {
            "gemini" => tools[0]["functionDeclarations"].as_array().unwrap().clone(),
            _ => tools.as_array().unwrap().clone(),
        };
        list.iter()
            .map(|t| {
                let name = if format == "openai" {
                    &t["function"]["name"]
                } else {
                    &t["name"]
                };
                name.as_str().unwrap().to_owned()
            })
            .collect()
    }
}

fn valid(name: &str) -> bool {
    let mut chars = name.chars();
    matches!(chars.next(), Some(c) if c.is_ascii_alphabetic() || c == '_')
        && name.len() <= 64
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
}

/// The exposed name of `tool` on `server` (found by its raw prefix and suffix).
fn name_of<'a>(names: &'a [String], server_prefix: &str, tool: &str) -> &'a str {
    let matching: Vec<&String> = names
        .iter()
        .filter(|n| {
            n.starts_with(&format!("mcp__{server_prefix}"))
                && (n.ends_with(&format!("__{tool}")) || n.contains(&format!("__{tool}")))
        })
        .collect();
    assert_eq!(matching.len(), 1, "{server_prefix}/{tool} in {names:?}");
    matching[0]
}

#[test]
fn names_are_valid_distinct_and_stable_for_every_provider() {
    let setup = setup();
    for format in ["openai", "anthropic", "gemini"] {
        let names = setup.names(format);
        assert!(names.iter().all(|n| valid(n)), "{format}: {names:?}");
        let mut unique = names.clone();
        unique.sort();
        unique.dedup();
        assert_eq!(unique.len(), names.len(), "{format}: duplicate names");
        assert_eq!(
            setup.names(format),
            names,
            "{format}: names changed between runs"
        );
    }
}

#[test]
fn openai_calls_route_to_the_right_server_and_return_tool_messages() {
    let setup = setup();
    let names = setup.names("openai");
    let short = name_of(&names, "example__", "hello");
    let long = name_of(&names, "lll", "hello");
    assert_ne!(short, long);
    let response = json!({ "choices": [{ "message": { "role": "assistant", "tool_calls": [
        { "id": "c1", "type": "function", "function": { "name": short, "arguments": "{\"name\":\"short\"}" } },
        { "id": "c2", "type": "function", "function": { "name": long, "arguments": "{\"name\":\"long\"}" } },
        { "id": "c3", "type": "function", "function": { "name": "mcp__everything__echo", "arguments": "{\"message\":\"hi\"}" } },
        { "id": "c4", "type": "function", "function": { "name": short, "arguments": "{not json" } },
        { "id": "c5", "type": "function", "function": { "name": "mcp__example__tiny_image", "arguments": "{}" } },
    ] } }] });
    let messages = setup.run(&["exec", "--format", "openai"], &response.to_string());
    let messages = messages.as_array().unwrap();
    assert_eq!(messages.len(), 5);
    let by_id = |id: &str| messages.iter().find(|m| m["tool_call_id"] == id).unwrap();
    assert_eq!(by_id("c1")["role"], "tool");
    assert_eq!(by_id("c1")["content"], "Hello, short!");
    assert_eq!(by_id("c2")["content"], "Hello, long!");
    assert_eq!(by_id("c3")["content"], "Echo: hi");
    assert!(
        by_id("c4")["content"]
            .as_str()
            .unwrap()
            .contains("invalid arguments"),
        "{}",
        by_id("c4")
    );
    assert_eq!(by_id("c5")["content"], "[Image: image/png]");
}

#[test]
fn anthropic_results_carry_errors_and_native_images() {
    let setup = setup();
    let message = json!({ "role": "assistant", "content": [
        { "type": "text", "text": "let me look" },
        { "type": "tool_use", "id": "t1", "name": "mcp__everything__get-tiny-image", "input": {} },
        { "type": "tool_use", "id": "t2", "name": "mcp__example__no_such_tool_here", "input": {} },
        { "type": "tool_use", "id": "t3", "name": "mcp__example__echo", "input": { "text": "plain" } },
    ] });
    let reply = setup.run(&["exec", "--format", "anthropic"], &message.to_string());
    assert_eq!(reply["role"], "user");
    let blocks = reply["content"].as_array().unwrap();
    let by_id = |id: &str| blocks.iter().find(|b| b["tool_use_id"] == id).unwrap();
    let image = by_id("t1");
    assert_eq!(image["type"], "tool_result");
    assert!(
        image["content"]
            .as_array()
            .unwrap()
            .iter()
            .any(|c| c["type"] == "image" && c["source"]["media_type"] == "image/png")
    );
    assert_eq!(by_id("t2")["is_error"], true);
    assert_eq!(by_id("t3")["is_error"], false);
    assert_eq!(by_id("t3")["content"][0]["text"], "plain");
}

#[test]
fn gemini_results_are_function_responses_with_inline_images() {
    let setup = setup();
    let names = setup.names("gemini");
    let long_echo = name_of(&names, "lll", "echo");
    let response = json!({ "candidates": [{ "content": { "role": "model", "parts": [
        { "functionCall": { "id": "g1", "name": long_echo, "args": { "text": "from gemini" } } },
        { "functionCall": { "name": "mcp__example__tiny_image", "args": {} } },
        { "functionCall": { "name": "mcp__everything__echo", "args": {} } },
    ] } }] });
    let content = setup.run(&["exec", "--format", "gemini"], &response.to_string());
    let parts = content["parts"].as_array().unwrap();
    let responses: Vec<&Value> = parts
        .iter()
        .filter_map(|p| p.get("functionResponse"))
        .collect();
    assert_eq!(responses.len(), 3);
    assert_eq!(responses[0]["id"], "g1");
    assert_eq!(responses[0]["name"], long_echo);
    assert!(
        responses[0]["response"].to_string().contains("from gemini"),
        "{}",
        responses[0]
    );
    assert!(
        parts
            .iter()
            .any(|p| p["inlineData"]["mimeType"] == "image/png"),
        "{content}"
    );
    // server-everything's echo without its required argument is a tool error.
    assert!(
        responses[2]["response"]
            .to_string()
            .to_lowercase()
            .contains("error"),
        "{}",
        responses[2]
    );
}

/// Issue 11, item 11: a provider's error body piped into `exec` (a bad key,
/// an overload) is reported with the provider's own message, exit 2, not as
/// "no tool calls" or a parse error.
#[test]
fn an_error_body_is_reported_with_the_providers_message() {
    let setup = setup();
    for (format, body, said) in [
        (
            "openai",
            json!({"error": {"message": "Incorrect API key provided.",
                "type": "invalid_request_error", "code": "invalid_api_key"}}),
            "Incorrect API key provided. (invalid_request_error)",
        ),
        (
            "anthropic",
            json!({"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}),
            "Overloaded (overloaded_error)",
        ),
        (
            "gemini",
            json!({"error": {"code": 400, "message": "API key not valid. Please pass a valid API key.",
                "status": "INVALID_ARGUMENT"}}),
            "API key not valid. Please pass a valid API key. (INVALID_ARGUMENT)",
        ),
    ] {
        let out = output_with_stdin(
            Command::new(toolbridge())
                .arg("--config")
                .arg(&setup.config)
                .args(["exec", "--format", format]),
            body.to_string().as_bytes(),
        );
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{format}: {err}");
        assert_eq!(
            err,
            format!("toolbridge: the {format} response is an error, not tool calls: {said}\n")
        );
        assert!(out.stdout.is_empty(), "{format}");
    }
}

/// Regression (issue 24, item 2): `exec` listed every configured server
/// before running a call that names one (4 s with a slow other server).
/// A server no call names must not even be started: this one records that
/// it was, then never answers.
#[test]
fn exec_starts_only_the_servers_its_calls_name() {
    let dir = tempdir();
    let marker = dir.path().join("started");
    let hung = dir.path().join("hung.sh");
    script(&hung, &format!("touch {}\nexec sleep 30", marker.display()));
    let config = dir.path().join("config.json");
    std::fs::write(
        &config,
        json!({ "mcpServers": {
            "example": { "command": toolbridge(), "args": ["example-server"] },
            "hung": { "command": hung, "startupTimeout": 10 },
        } })
        .to_string(),
    )
    .unwrap();
    let response = json!({ "choices": [{ "message": { "role": "assistant", "tool_calls": [
        { "id": "c1", "type": "function", "function": {
            "name": "mcp__example__echo", "arguments": "{\"text\":\"only me\"}" } },
    ] } }] });
    let out = output_with_stdin(
        Command::new(toolbridge())
            .arg("--config")
            .arg(&config)
            .args(["exec", "--format", "openai"])
            .env("XDG_CACHE_HOME", dir.path().join("cache")),
        response.to_string().as_bytes(),
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    let messages: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(messages[0]["content"], "only me", "{messages}");
    assert!(
        !marker.exists(),
        "the server no call names was started: {err}"
    );
}
