//! `toolbridge bench` against the built-in example server.

mod common;

use std::process::Command;

use common::*;

#[test]
fn bench_reports_every_call_and_ordered_percentiles() {
    let dir = tempdir();
    let output = Command::new(toolbridge())
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
        // No config file at the default location: the built-in example server.
        .env_remove("TOOLBRIDGE_CONFIG")
        .env("XDG_CONFIG_HOME", dir.path())
        .env("HOME", dir.path())
        .env("XDG_CACHE_HOME", dir.path().join("cache"))
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
        report["calls_per_sec"].as_f64().is_some_and(|r| r > 0.0),
        "{report}"
    );
    assert!(
        report["client_cpu_us_per_call"]
            .as_f64()
            .is_some_and(|c| c >= 0.0),
        "{report}"
    );
    let l = &report["latency_ms"];
    let get = |k: &str| {
        l[k].as_f64()
            .unwrap_or_else(|| panic!("latency_ms.{k} missing: {report}"))
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
    let output = Command::new(toolbridge())
        .args(["bench", "example", "no_such_tool", "--calls", "5", "--json"])
        // No config file at the default location: the built-in example server.
        .env_remove("TOOLBRIDGE_CONFIG")
        .env("XDG_CONFIG_HOME", dir.path())
        .env("HOME", dir.path())
        .env("XDG_CACHE_HOME", dir.path().join("cache"))
        .output()
        .expect("run toolbridge bench");
    assert_eq!(output.status.code(), Some(1));
    let report: serde_json::Value = serde_json::from_slice(&output.stdout).expect("JSON report");
    assert_eq!(report["errors"], 5, "{report}");
    assert_eq!(report["tool_errors"], 5, "{report}");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("Unknown tool: no_such_tool"), "{stderr}");
}
