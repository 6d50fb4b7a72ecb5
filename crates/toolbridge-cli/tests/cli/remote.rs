//! The CLI over every network transport, against real servers nobody here
//! wrote: results must be the same as over stdio.

use crate::common;

use std::process::{Command, Stdio};

use common::*;
use serde_json::{Value, json};

fn toolbridge_with(config: &std::path::Path, args: &[&str]) -> std::process::Output {
    Command::new(toolbridge())
        .arg("--config")
        .arg(config)
        .args(args)
        .stdin(Stdio::null())
        .output()
        .expect("run toolbridge")
}

#[test]
fn tools_and_call_work_over_http_sse_and_websocket_like_over_stdio() {
    let ev_http = everything_listening("streamableHttp");
    let ev_sse = everything_listening("sse");
    let py_http = python_listening("streamable-http");
    let py_sse = python_listening("sse");
    let py_ws = python_listening("websocket");
    let dir = tempdir();
    let config = dir.path().join("config.json");
    std::fs::write(
        &config,
        json!({ "mcpServers": {
            "ev-stdio": { "command": "node", "args": [everything_js(), "stdio"] },
            "ev-http": { "type": "http", "url": ev_http.url("/mcp") },
            "ev-sse": { "type": "sse", "url": ev_sse.url("/sse") },
            "py-http": { "url": py_http.url("/mcp") },
            // No type: streamable HTTP is tried first, then legacy SSE.
            "py-sse": { "url": py_sse.url("/sse") },
            "py-ws": { "url": format!("ws://127.0.0.1:{}/ws", py_ws.port) },
        } })
        .to_string(),
    )
    .unwrap();

    let out = toolbridge_with(&config, &["servers", "test", "--json"]);
    let reports: Vec<Value> = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stderr)));
    let transport_of = |name: &str| {
        let report = reports
            .iter()
            .find(|r| r["server"] == name)
            .expect("reported");
        assert_eq!(report["ok"], true, "{report}");
        assert!(report["toolCount"].as_u64().unwrap() > 0, "{report}");
        assert!(
            !report["protocolVersion"].as_str().unwrap().is_empty(),
            "{report}"
        );
        report["transport"].as_str().unwrap().to_owned()
    };
    assert_eq!(transport_of("ev-stdio"), "stdio");
    assert_eq!(transport_of("ev-http"), "http");
    assert_eq!(transport_of("ev-sse"), "sse");
    assert_eq!(transport_of("py-http"), "http");
    assert_eq!(
        transport_of("py-sse"),
        "sse",
        "an SSE-only server without a type is detected"
    );
    assert_eq!(transport_of("py-ws"), "websocket");
    assert_eq!(out.status.code(), Some(0));

    let out = toolbridge_with(&config, &["tools"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let tools: Vec<Value> = serde_json::from_slice(&out.stdout).unwrap();
    for id in [
        "mcp__ev-http__echo",
        "mcp__ev-sse__echo",
        "mcp__py-http__echo",
        "mcp__py-sse__echo",
        "mcp__py-ws__echo",
    ] {
        assert!(tools.iter().any(|t| t["id"] == id), "{id} missing");
    }

    let echo = |server: &str| {
        let out = toolbridge_with(
            &config,
            &[
                "call",
                server,
                "echo",
                "--args",
                r#"{"message":"same everywhere"}"#,
            ],
        );
        assert_eq!(
            out.status.code(),
            Some(0),
            "{server}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap()
    };
    let over_stdio = echo("ev-stdio");
    assert_eq!(over_stdio, "Echo: same everywhere\n");
    for server in ["ev-http", "ev-sse", "py-http", "py-sse", "py-ws"] {
        assert_eq!(echo(server), over_stdio, "{server} differs from stdio");
    }
}

#[test]
fn an_unreachable_url_exits_3_with_a_clear_message() {
    // A port nothing listens on: bind one, note it, close it.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let dir = tempdir();
    let config = dir.path().join("config.json");
    let url = format!("http://127.0.0.1:{port}/mcp?token=s3cr3t-value");
    std::fs::write(
        &config,
        json!({ "mcpServers": { "gone": { "type": "http", "url": url } } }).to_string(),
    )
    .unwrap();
    let out = toolbridge_with(&config, &["call", "gone", "echo"]);
    assert_eq!(out.status.code(), Some(3));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("server \"gone\""), "{err}");
    assert!(err.contains(&format!("127.0.0.1:{port}")), "{err}");
    assert!(!err.contains("s3cr3t-value"), "a secret leaked: {err}");
}
