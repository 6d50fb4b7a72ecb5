//! The real binary with the tool-list cache (issue 11 items 6, 7, 8): a
//! second `tools` starts no server, `--refresh` starts them all, `exec` and
//! `call` start only the server they use, a server that cannot start is
//! named to the model, and a tool that can only run as a task stays out of
//! provider formats and is run as a task by `call`. Servers are
//! `tests/servers/tool_cache.py`, each noting its starts in a file.

use crate::common;

use std::path::PathBuf;

use common::*;
use serde_json::{Value, json};

const SERVERS: [&str; 3] = ["a", "b", "c"];

/// A sandbox whose config has the three servers.
fn setup() -> Sandbox {
    let sandbox = Sandbox::new();
    let dir = sandbox.dir.path();
    let mut servers = serde_json::Map::new();
    for name in SERVERS {
        servers.insert(
            name.to_owned(),
            json!({
                "command": python(),
                "args": [test_server("tool_cache.py")],
                "env": {
                    "STARTS_FILE": dir.join(format!("{name}.starts")),
                    "FAIL_FILE": dir.join(format!("{name}.fail")),
                    "TOOLS": "ping",
                },
            }),
        );
    }
    sandbox.write_config(&json!({ "mcpServers": servers }));
    sandbox
}

fn starts(sandbox: &Sandbox) -> [usize; 3] {
    SERVERS.map(|name| {
        std::fs::read_to_string(sandbox.dir.path().join(format!("{name}.starts")))
            .map(|s| s.lines().count())
            .unwrap_or(0)
    })
}

fn fail_file(sandbox: &Sandbox, name: &str) -> PathBuf {
    sandbox.dir.path().join(format!("{name}.fail"))
}

/// One OpenAI chat completion calling `mcp__{server}__{tool}`.
fn openai_call(server: &str, tool: &str) -> String {
    json!({ "choices": [{ "message": { "role": "assistant", "tool_calls": [
        { "id": "call_1", "type": "function",
          "function": { "name": format!("mcp__{server}__{tool}"), "arguments": "{}" } }
    ] } }] })
    .to_string()
}

fn exec(sandbox: &Sandbox, input: &str) -> Run {
    let mut cmd = sandbox.command(&["exec", "--format", "openai"]);
    Run::from(output_with_stdin(&mut cmd, input.as_bytes()))
}

#[test]
fn a_second_tools_answers_from_the_cache_and_refresh_lists_again() {
    let sandbox = setup();
    let first = sandbox.run(&["tools"]);
    assert_eq!(first.code, Some(0), "{}", first.stderr);
    assert_eq!(starts(&sandbox), [1, 1, 1]);
    let entries = std::fs::read_dir(sandbox.cache_home().join("toolbridge/tools"))
        .expect("cache written under $XDG_CACHE_HOME/toolbridge")
        .count();
    assert_eq!(entries, 3);

    let second = sandbox.run(&["tools"]);
    assert_eq!(second.code, Some(0), "{}", second.stderr);
    assert_eq!(second.stdout, first.stdout);
    assert_eq!(
        starts(&sandbox),
        [1, 1, 1],
        "a cached `tools` started servers"
    );

    let refreshed = sandbox.run(&["tools", "--refresh"]);
    assert_eq!(refreshed.code, Some(0), "{}", refreshed.stderr);
    assert_eq!(refreshed.stdout, first.stdout);
    assert_eq!(starts(&sandbox), [2, 2, 2]);
}

/// The config's `toolbridge.toolCacheTtl` is the freshness window: past it,
/// `tools` lists again.
#[test]
fn the_configs_tool_cache_ttl_is_the_freshness_window() {
    let sandbox = setup();
    let mut config = sandbox.read_config();
    config["toolbridge"] = json!({ "toolCacheTtl": 0.001 });
    sandbox.write_config(&config);
    assert_eq!(sandbox.run(&["tools"]).code, Some(0));
    assert_eq!(starts(&sandbox), [1, 1, 1]);
    // Every entry is older than a millisecond by the time `tools` runs again.
    let second = sandbox.run(&["tools"]);
    assert_eq!(second.code, Some(0), "{}", second.stderr);
    assert_eq!(starts(&sandbox), [2, 2, 2], "stale entries were used");
}

#[test]
fn exec_starts_only_the_server_its_call_uses() {
    let sandbox = setup();
    let tools = sandbox.run(&["tools", "--format", "openai"]);
    assert_eq!(tools.code, Some(0), "{}", tools.stderr);
    assert_eq!(starts(&sandbox), [1, 1, 1]);

    let run = exec(&sandbox, &openai_call("b", "ping"));
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    let messages: Value = serde_json::from_str(&run.stdout).expect("JSON");
    assert_eq!(messages[0]["content"], "pong from ping", "{messages}");
    assert_eq!(
        starts(&sandbox),
        [1, 2, 1],
        "exec started servers it did not use"
    );

    // `call` too.
    let call = sandbox.run(&["call", "c", "ping"]);
    assert_eq!(call.code, Some(0), "{}", call.stderr);
    assert_eq!(call.stdout.trim(), "pong from ping");
    assert_eq!(starts(&sandbox), [1, 2, 2]);
}

#[test]
fn exec_tells_the_model_which_server_failed_to_start() {
    let sandbox = setup();
    // Cached list, then the server breaks: the call resolves and its
    // server's start fails.
    assert_eq!(sandbox.run(&["tools"]).code, Some(0));
    std::fs::write(fail_file(&sandbox, "b"), "").expect("break b");
    let run = exec(&sandbox, &openai_call("b", "ping"));
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    let messages: Value = serde_json::from_str(&run.stdout).expect("JSON");
    let text = messages[0]["content"].as_str().unwrap_or_default();
    assert!(text.contains("server \"b\""), "{text}");
    assert!(!text.contains("unknown tool"), "{text}");
    assert_eq!(starts(&sandbox), [1, 2, 1]);

    // No cached list (a new cache folder): b cannot even be listed.
    let cold = Sandbox::new();
    cold.write_config(&sandbox.read_config());
    let run = exec(&cold, &openai_call("b", "ping"));
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    let messages: Value = serde_json::from_str(&run.stdout).expect("JSON");
    let text = messages[0]["content"].as_str().unwrap_or_default();
    assert!(text.contains("server \"b\""), "{text}");
    assert!(!text.contains("unknown tool"), "{text}");
}

#[test]
fn a_tool_that_requires_a_task_is_left_out_for_providers_and_run_as_a_task_by_call() {
    let sandbox = setup();
    let mcp = sandbox.run(&["tools", "--server", "a"]);
    assert_eq!(mcp.code, Some(0), "{}", mcp.stderr);
    let tools: Value = serde_json::from_str(&mcp.stdout).expect("JSON");
    let research = tools
        .as_array()
        .expect("array")
        .iter()
        .find(|t| t["name"] == "research")
        .expect("research listed in the MCP format");
    assert_eq!(research["execution"]["taskSupport"], "required");
    assert_eq!(research["title"], "Research");
    assert_eq!(research["annotations"]["readOnlyHint"], true);

    for format in ["openai", "anthropic", "gemini"] {
        let run = sandbox.run(&["tools", "--server", "a", "--format", format]);
        assert_eq!(run.code, Some(0), "{}", run.stderr);
        assert!(
            run.stdout.contains("mcp__a__ping"),
            "{format}: {}",
            run.stdout
        );
        assert!(!run.stdout.contains("research"), "{format}: {}", run.stdout);
        assert!(
            run.stderr.contains("\"research\"") && run.stderr.contains("as a task"),
            "{format}: {}",
            run.stderr
        );
    }

    // `call` runs it as a task: created, polled, its result fetched.
    let call = sandbox.run(&["call", "a", "research"]);
    assert_eq!(call.code, Some(0), "{}", call.stderr);
    assert_eq!(call.stdout, "research done\n");
}
