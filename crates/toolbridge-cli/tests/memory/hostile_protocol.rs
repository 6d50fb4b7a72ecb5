//! The real binary against servers that break the protocol
//! (`crates/toolbridge/tests/servers/hostile_proto.py`): each run must end
//! well before the configured timeout, with the documented exit code, a
//! message naming the server and the cause, and bounded peak memory (read
//! from the process by `wait4`).

use crate::common;

use std::{process::Command, time::Duration};

use common::{Measured, Sandbox, python, run_measured, test_server};
use serde_json::json;

/// The configured call timeout: every failure must come well before it.
const TIMEOUT_SECS: u64 = 60;
/// What "well before" means.
const FAST: Duration = Duration::from_secs(15);

/// A sandbox whose only server is `hostile_proto.py MODE`, named "hostile".
fn sandbox(mode: &str) -> Sandbox {
    let sandbox = Sandbox::new();
    sandbox.write_config(&json!({"mcpServers": {"hostile": {
        "command": python(),
        "args": [test_server("hostile_proto.py"), mode],
        "timeout": TIMEOUT_SECS,
    }}}));
    sandbox
}

/// `toolbridge args...` in `sandbox`, with its own cache and config homes.
fn measured(sandbox: &Sandbox, args: &[&str]) -> Measured {
    let mut cmd: Command = sandbox.command(args);
    let home = sandbox.dir.path();
    cmd.env("HOME", home)
        .env("XDG_CONFIG_HOME", home.join("config-home"))
        .env("XDG_CACHE_HOME", home.join("cache"))
        .env("XDG_DATA_HOME", home.join("data"));
    run_measured(&mut cmd)
}

#[test]
fn tools_from_a_page_pointing_to_itself_exits_3_at_once() {
    let sandbox = sandbox("cursor-self");
    let run = measured(&sandbox, &["tools"]);
    assert_eq!(run.run.code, Some(3), "{}", run.run.stderr);
    assert!(run.elapsed < FAST, "took {:?}", run.elapsed);
    assert!(
        run.run
            .stderr
            .contains("server \"hostile\": its tool list does not end (page 2 points back"),
        "{}",
        run.run.stderr
    );
    // It used to grow to 4 GB; now it stops at the second page.
    assert!(run.peak_kib < 100 * 1024, "peak {} KiB", run.peak_kib);
}

#[test]
fn tools_from_a_list_without_end_stops_at_the_tool_cap_with_bounded_memory() {
    // 10,000 new tools per page, new cursors forever.
    let sandbox = sandbox("many-tools");
    let run = measured(&sandbox, &["tools"]);
    eprintln!("many-tools: peak {} KiB, {:?}", run.peak_kib, run.elapsed);
    assert_eq!(run.run.code, Some(3), "{}", run.run.stderr);
    assert!(
        run.elapsed < Duration::from_secs(TIMEOUT_SECS),
        "took {:?}",
        run.elapsed
    );
    assert!(
        run.run.stderr.contains("it listed more than 100000 tools"),
        "{}",
        run.run.stderr
    );
    assert!(run.peak_kib < 400 * 1024, "peak {} KiB", run.peak_kib);
}

#[test]
fn broken_and_repeated_tools_are_warnings_and_the_rest_is_listed() {
    let sandbox = sandbox("bad-schema");
    let run = measured(&sandbox, &["tools", "--format", "openai"]);
    assert_eq!(run.run.code, Some(0), "{}", run.run.stderr);
    let tools: serde_json::Value = serde_json::from_str(&run.run.stdout).unwrap();
    let names: Vec<_> = tools
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["function"]["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["mcp__hostile__good", "mcp__hostile__also_good"]);
    assert!(
        run.run.stderr.contains(
            "toolbridge: warning: server \"hostile\": tool \"schema_null\" is left out \
             because its definition is invalid"
        ),
        "{}",
        run.run.stderr
    );

    let sandbox = self::sandbox("duplicate");
    let run = measured(&sandbox, &["tools", "--format", "anthropic"]);
    assert_eq!(run.run.code, Some(0), "{}", run.run.stderr);
    assert_eq!(run.run.stdout.matches("\"mcp__hostile__echo\"").count(), 1);
    assert!(
        run.run
            .stderr
            .contains("server \"hostile\" lists two tools named \"echo\""),
        "{}",
        run.run.stderr
    );

    // `--check` says it in its report too, not only on stderr.
    let run = measured(&sandbox, &["tools", "--check", "--format", "anthropic"]);
    assert_eq!(run.run.code, Some(0), "{}", run.run.stderr);
    let report: serde_json::Value = serde_json::from_str(&run.run.stdout).unwrap();
    let skipped = report["skipped"].as_array().expect("a skipped list");
    assert_eq!(skipped.len(), 1, "{report}");
    assert_eq!(skipped[0]["serverId"], "hostile");
    assert_eq!(skipped[0]["tool"], "echo");
    assert!(
        skipped[0]["detail"]
            .as_str()
            .unwrap()
            .contains("two tools named"),
        "{report}"
    );
}

#[test]
fn a_call_answered_with_17_mib_exits_3_at_once_saying_why() {
    let sandbox = sandbox("huge-result");
    let run = measured(&sandbox, &["call", "hostile", "echo", "--args", "{}"]);
    assert_eq!(run.run.code, Some(3), "{}", run.run.stderr);
    assert!(run.elapsed < FAST, "took {:?}", run.elapsed);
    assert!(
        run.run
            .stderr
            .contains("it is 17.0 MiB, over the 16 MiB limit on one message"),
        "{}",
        run.run.stderr
    );
    assert!(run.peak_kib < 150 * 1024, "peak {} KiB", run.peak_kib);
}

#[test]
fn calls_answered_too_deep_or_not_utf8_exit_3_at_once_saying_why() {
    for (mode, why) in [
        ("deep-result", "nested deeper than the 128 levels"),
        ("bad-utf8", "not valid UTF-8"),
        ("nul-result", "raw NUL byte"),
    ] {
        let sandbox = sandbox(mode);
        let run = measured(&sandbox, &["call", "hostile", "echo", "--args", "{}"]);
        assert_eq!(run.run.code, Some(3), "{mode}: {}", run.run.stderr);
        assert!(run.elapsed < FAST, "{mode}: took {:?}", run.elapsed);
        assert!(run.run.stderr.contains(why), "{mode}: {}", run.run.stderr);
    }
}

#[test]
fn a_server_printing_only_a_banner_fails_its_start_fast_naming_it() {
    let sandbox = sandbox("banner-only");
    let run = measured(&sandbox, &["call", "hostile", "echo", "--args", "{}"]);
    assert_eq!(run.run.code, Some(3), "{}", run.run.stderr);
    assert!(run.elapsed < FAST, "took {:?}", run.elapsed);
    assert!(
        run.run
            .stderr
            .contains("it printed \"Server running on stdio\" on stdout"),
        "{}",
        run.run.stderr
    );

    // One banner line, then MCP: works.
    let sandbox = self::sandbox("banner");
    let run = measured(
        &sandbox,
        &["call", "hostile", "echo", "--args", r#"{"text":"hi"}"#],
    );
    assert_eq!(run.run.code, Some(0), "{}", run.run.stderr);
    assert_eq!(run.run.stdout.trim(), "hi");
}

#[test]
fn five_hundred_thousand_content_items_are_held_in_bounded_memory() {
    // 500,000 text items, 13 MB of JSON.
    let sandbox = sandbox("many-items");
    let raw = measured(
        &sandbox,
        &["call", "hostile", "echo", "--args", "{}", "--json"],
    );
    let flat = measured(&sandbox, &["call", "hostile", "echo", "--args", "{}"]);
    eprintln!(
        "500k items: --json peak {} KiB in {:?}; flattened peak {} KiB in {:?}",
        raw.peak_kib, raw.elapsed, flat.peak_kib, flat.elapsed
    );
    assert_eq!(raw.run.code, Some(0), "{}", raw.run.stderr);
    assert_eq!(flat.run.code, Some(0), "{}", flat.run.stderr);
    assert_eq!(flat.run.stdout.lines().count(), 500_000);
    // rmcp's ContentBlock is 288 bytes, so 500,000 of them are 144 MB at
    // the least; before, the list's last doubling and our copies took the
    // peak to 211-246 MB (debug build).
    for run in [&raw, &flat] {
        assert!(run.peak_kib < 200 * 1024, "peak {} KiB", run.peak_kib);
    }
}
