//! `toolbridge presets list | show | add`, run as a user would.

use crate::common;

use std::collections::HashSet;

use common::Sandbox;
use serde_json::{Value, json};

const FIELDS: [&str; 17] = [
    "id",
    "name",
    "provider",
    "category",
    "description",
    "tools",
    "transportType",
    "command",
    "args",
    "url",
    "requiresApiKey",
    "apiKeyEnvVar",
    "linkedProviderIds",
    "extraEnv",
    "documentationUrl",
    "icon",
    "headers",
];

fn listed(sandbox: &Sandbox, args: &[&str]) -> Vec<Value> {
    let run = sandbox.run(args);
    assert_eq!(run.code, Some(0), "{run:?}");
    serde_json::from_str(&run.stdout).unwrap()
}

#[test]
fn list_json_has_at_least_15_presets_with_every_field_and_category() {
    let sandbox = Sandbox::new();
    let presets = listed(&sandbox, &["presets", "list", "--json"]);
    assert!(presets.len() >= 15, "{} presets", presets.len());
    for p in &presets {
        for field in FIELDS {
            assert!(p.get(field).is_some(), "{} lacks {field}", p["id"]);
        }
        assert!(!p["tools"].as_array().unwrap().is_empty(), "{}", p["id"]);
        match p["transportType"].as_str().unwrap() {
            "stdio" => assert!(p["command"].is_string(), "{}", p["id"]),
            "http" => assert!(p["url"].is_string(), "{}", p["id"]),
            other => panic!("transport {other}"),
        }
    }
    let categories: HashSet<&str> = presets
        .iter()
        .map(|p| p["category"].as_str().unwrap())
        .collect();
    for c in ["search", "vision", "web-reading", "code-repo", "general"] {
        assert!(categories.contains(c), "no {c} preset");
    }
}

#[test]
fn list_filters_by_category() {
    let sandbox = Sandbox::new();
    let vision = listed(
        &sandbox,
        &["presets", "list", "--category", "vision", "--json"],
    );
    assert!(!vision.is_empty());
    assert!(vision.iter().all(|p| p["category"] == "vision"));

    let run = sandbox.run(&["presets", "list", "--category", "images"]);
    assert_eq!(run.code, Some(2), "{run:?}");
    assert!(run.stderr.contains("web-reading"), "{}", run.stderr);
}

#[test]
fn list_table_and_show_are_readable() {
    let sandbox = Sandbox::new();
    let run = sandbox.run(&["presets", "list"]);
    assert_eq!(run.code, Some(0));
    assert!(
        run.stdout.lines().any(|l| l.starts_with("tavily ")),
        "{}",
        run.stdout
    );

    let run = sandbox.run(&["presets", "show", "time"]);
    assert_eq!(run.code, Some(0), "{run:?}");
    assert!(run.stdout.contains("get_current_time, convert_time"));
    assert!(run.stdout.contains("\"mcp-server-time==2026.*\""));

    let run = sandbox.run(&["presets", "show", "no-such-preset"]);
    assert_eq!(run.code, Some(2));
    assert!(run.stderr.contains("unknown preset \"no-such-preset\""));
}

#[test]
fn add_stores_a_key_reference_and_says_what_to_export() {
    let sandbox = Sandbox::new();
    let run = sandbox.run(&["presets", "add", "tavily"]);
    assert_eq!(run.code, Some(0), "{run:?}");
    assert!(
        run.stderr.contains("export TAVILY_API_KEY="),
        "{}",
        run.stderr
    );
    assert_eq!(
        sandbox.read_config(),
        json!({"mcpServers": {"tavily": {
            "command": "npx",
            "args": ["-y", "tavily-mcp@0.2"],
            "env": {"TAVILY_API_KEY": "${TAVILY_API_KEY}"}
        }}})
    );
}

#[test]
fn adding_the_same_name_twice_is_an_error_and_changes_nothing() {
    let sandbox = Sandbox::new();
    assert_eq!(sandbox.run(&["presets", "add", "memory"]).code, Some(0));
    let before = std::fs::read(sandbox.config()).unwrap();
    let run = sandbox.run(&["presets", "add", "memory"]);
    assert_eq!(run.code, Some(2), "{run:?}");
    assert!(run.stderr.contains("already exists"), "{}", run.stderr);
    assert_eq!(std::fs::read(sandbox.config()).unwrap(), before);

    // Another name is fine.
    assert_eq!(
        sandbox
            .run(&["presets", "add", "memory", "--name", "memory2"])
            .code,
        Some(0)
    );
    let config = sandbox.read_config();
    assert_eq!(config["mcpServers"].as_object().unwrap().len(), 2);
}

#[cfg(unix)]
#[test]
fn api_key_is_stored_and_the_file_made_private() {
    use std::os::unix::fs::PermissionsExt;
    let sandbox = Sandbox::new();
    assert_eq!(sandbox.run(&["presets", "add", "memory"]).code, Some(0));
    let mode = |s: &Sandbox| std::fs::metadata(s.config()).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode(&sandbox), 0o644);

    let run = sandbox.run(&[
        "presets",
        "add",
        "zhipu-web-search",
        "--name",
        "search",
        "--api-key",
        "k-123",
    ]);
    assert_eq!(run.code, Some(0), "{run:?}");
    assert_eq!(mode(&sandbox), 0o600);
    let config = sandbox.read_config();
    assert_eq!(
        config["mcpServers"]["search"]["headers"]["Authorization"],
        "Bearer k-123"
    );
    // The earlier entry survived the rewrite.
    assert!(config["mcpServers"]["memory"].is_object());
    // And it stays private after a later add without a key.
    assert_eq!(sandbox.run(&["presets", "add", "time"]).code, Some(0));
    assert_eq!(mode(&sandbox), 0o600);
}

#[test]
fn extra_args_after_double_dash_are_appended() {
    let sandbox = Sandbox::new();
    let dir = sandbox.dir.path().to_str().unwrap().to_owned();
    let run = sandbox.run(&["presets", "add", "filesystem", "--", &dir, "--flag"]);
    assert_eq!(run.code, Some(0), "{run:?}");
    assert_eq!(
        sandbox.read_config()["mcpServers"]["filesystem"]["args"],
        json!([
            "-y",
            "@modelcontextprotocol/server-filesystem@2026",
            dir,
            "--flag"
        ])
    );
}

#[test]
fn vs_code_servers_key_is_kept() {
    let sandbox = Sandbox::new();
    sandbox.write_config(&json!({"servers": {"x": {"command": "x"}}, "other": 1}));
    assert_eq!(sandbox.run(&["presets", "add", "time"]).code, Some(0));
    let config = sandbox.read_config();
    assert!(config["servers"]["time"].is_object(), "{config}");
    assert!(config.get("mcpServers").is_none());
    assert_eq!(config["other"], 1);
}

#[test]
fn a_file_that_does_not_parse_is_never_overwritten() {
    let sandbox = Sandbox::new();
    std::fs::write(sandbox.config(), "{ not json").unwrap();
    let run = sandbox.run(&["presets", "add", "time"]);
    assert_eq!(run.code, Some(2), "{run:?}");
    assert!(
        run.stderr.contains("config.json:1:3: invalid JSON"),
        "{}",
        run.stderr
    );
    assert_eq!(
        std::fs::read_to_string(sandbox.config()).unwrap(),
        "{ not json"
    );
}

#[test]
fn key_for_a_keyless_preset_is_refused() {
    let sandbox = Sandbox::new();
    let run = sandbox.run(&["presets", "add", "time", "--api-key", "k"]);
    assert_eq!(run.code, Some(2), "{run:?}");
    assert!(run.stderr.contains("takes no API key"), "{}", run.stderr);
    assert!(!sandbox.config().exists());
}
