//! `toolbridge bench` against the built-in example server.

use crate::common;

use std::process::Command;

use common::*;

#[test]
fn bench_reports_every_call_and_ordered_percentiles() {
    let dir = tempdir();
    let output = bench_command(&dir)
        .args([
            "bench",
            "example",
            "echo",
            "--args",
            r#"{"text":"x"}"#,
            "--calls",
            "200",
            "--concurrency",
            "8",
            "--json",
        ])
        .output()
        .expect("run toolbridge bench");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "bench failed: {stderr}");
    let report: serde_json::Value =
        serde_json::from_slice(&output.stdout).expect("bench --json prints one JSON document");
    assert_eq!(report["calls"], 200, "{report}");
    assert_eq!(report["ok"], 200, "{report}");
    assert_eq!(report["errors"], 0, "{report}");
    assert_eq!(report["concurrency"], 8, "{report}");
    assert!(
        report["callsPerSec"].as_f64().is_some_and(|r| r > 0.0),
        "{report}"
    );
    assert!(
        report["clientCpuUsPerCall"]
            .as_f64()
            .is_some_and(|c| c >= 0.0),
        "{report}"
    );
    // One key style across commands: camelCase, the unit in the name.
    assert!(report["startMs"].as_f64().is_some(), "{report}");
    assert!(
        report["elapsedMs"].as_f64().is_some_and(|ms| ms > 0.0),
        "{report}"
    );
    for key in report.as_object().unwrap().keys() {
        assert!(!key.contains('_'), "snake_case key {key} in {report}");
    }
    let l = &report["latencyMs"];
    let get = |k: &str| {
        l[k].as_f64()
            .unwrap_or_else(|| panic!("latencyMs.{k} missing: {report}"))
    };
    let ordered = [get("min"), get("p50"), get("p90"), get("p99"), get("max")];
    assert!(ordered[0] > 0.0, "{report}");
    assert!(
        ordered.windows(2).all(|w| w[0] <= w[1]),
        "percentiles out of order: {report}"
    );
}

#[test]
fn bench_counts_tool_errors_and_exits_1() {
    let dir = tempdir();
    let config = dir.path().join("config.json");
    std::fs::write(
        &config,
        serde_json::json!({ "mcpServers": { "py": {
            "command": python(), "args": [test_server("py_sdk_server.py")]
        } } })
        .to_string(),
    )
    .unwrap();
    let output = bench_command(&dir)
        .arg("--config")
        .arg(&config)
        .args(["bench", "py", "fail", "--args", r#"{"message":"no"}"#])
        .args(["--calls", "5", "--json"])
        .output()
        .expect("run toolbridge bench");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    let report: serde_json::Value = serde_json::from_slice(&output.stdout).expect("JSON report");
    assert_eq!(report["errors"], 5, "{report}");
    assert_eq!(report["toolErrors"], 5, "{report}");
    assert!(
        stderr.contains("the tool returned isError: Error executing tool fail: no"),
        "{stderr}"
    );
}

/// Issue 11, item 4: an unknown tool is a usage error (exit 2) that names
/// the tools the server has, for `bench` as for `call`.
#[test]
fn bench_of_an_unknown_tool_exits_2_naming_the_servers_tools() {
    let dir = tempdir();
    let output = bench_command(&dir)
        .args(["bench", "example", "no_such_tool", "--calls", "5", "--json"])
        .output()
        .expect("run toolbridge bench");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("server \"example\" has no tool \"no_such_tool\""),
        "{stderr}"
    );
    assert!(stderr.contains("hello"), "{stderr}");
}

/// `toolbridge` with a home of its own: no config file at the default
/// location, so the built-in example server (unless `--config` is given).
fn bench_command(dir: &tempfile::TempDir) -> Command {
    let mut command = Command::new(toolbridge());
    command
        .env_remove("TOOLBRIDGE_CONFIG")
        .env_remove("TOOLBRIDGE_LOG")
        .env("HOME", dir.path())
        .env("XDG_CONFIG_HOME", dir.path().join("config"))
        .env("XDG_CACHE_HOME", dir.path().join("cache"))
        .env("XDG_DATA_HOME", dir.path().join("data"));
    command
}
