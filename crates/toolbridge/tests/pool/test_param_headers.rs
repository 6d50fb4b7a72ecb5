//! SEP-2243's tool headers (protocol 2026-07-28 over streamable HTTP),
//! against a Python `mcp` 2.x server (`tests/servers/param_headers.py`)
//! whose SDK refuses a `tools/call` whose `Mcp-Param-*` headers are missing
//! or do not match the arguments: a call that succeeds sent them right
//! (Base64 for values a header cannot carry, none for a null).
//!
//! The calls are made the way the CLI's `call` makes them: with no listing
//! on the connection first (no tool cache, or one from an earlier pool).

use crate::common;

use common::{ServerProcess, deps, fixtures::*};
use rmcp::model::CallToolResult;
use serde_json::json;
use tokio::process::Command;
use toolbridge::{
    config::{ServerSpec, TransportKind},
    pool::{CallOptions, PoolError, PoolOptions, ToolCacheOptions},
};

async fn start() -> ServerProcess {
    let mut command = Command::new(deps().join("py2/bin/python"));
    command
        .arg(test_server("param_headers.py"))
        .env("PYTHONUNBUFFERED", "1");
    ServerProcess::start(command).await
}

fn spec(server: &ServerProcess) -> ServerSpec {
    ServerSpec::remote("weather", TransportKind::Http, server.url("/mcp"))
}

fn text(result: &CallToolResult) -> String {
    result
        .content
        .iter()
        .filter_map(|c| c.as_text())
        .map(|t| t.text.clone())
        .collect()
}

/// Arguments the headers must carry as they are, in Base64 (a leading
/// space, a non-ASCII letter, a line break), and a null (no header).
fn arguments() -> serde_json::Value {
    json!({"region": " Zürich\nwest", "days": 3, "metric": null, "note": "not mirrored"})
}

#[tokio::test]
async fn a_call_with_nothing_listed_carries_its_tools_headers() {
    let server = start().await;
    let pool = pool(vec![spec(&server)]);
    let result = pool
        .call_tool(
            "weather",
            "forecast",
            object_args(arguments()),
            CallOptions::default(),
        )
        .await
        .expect("the server accepts the call's headers");
    assert!(
        text(&result).contains(r#""region": " Z\u00fcrich\nwest""#),
        "{}",
        text(&result)
    );
    assert_eq!(
        pool.connection_info("weather").unwrap().protocol_version,
        "2026-07-28",
        "tool headers are a 2026-07-28 rule"
    );
    pool.close_all().await;
}

#[tokio::test]
async fn a_call_from_an_earlier_runs_tool_cache_carries_its_tools_headers() {
    let server = start().await;
    let dir = tempdir();
    let options = || PoolOptions {
        tool_cache: Some(ToolCacheOptions::in_dir(dir.path().join("cache"))),
        ..PoolOptions::default()
    };
    let first = pool_with(vec![spec(&server)], options());
    let listed = first.list_server_tools("weather").await.unwrap();
    assert!(listed.iter().any(|t| t.name == "forecast"));
    first.close_all().await;
    // The next run lists from the disk: its connection has listed nothing.
    let next = pool_with(vec![spec(&server)], options());
    let result = next
        .call_tool(
            "weather",
            "forecast",
            object_args(arguments()),
            CallOptions::default(),
        )
        .await
        .expect("the server accepts the call's headers");
    assert!(text(&result).contains(r#""days": 3"#), "{}", text(&result));
    next.close_all().await;
}

#[tokio::test]
async fn a_tool_with_invalid_header_designations_is_left_out_and_never_called() {
    let server = start().await;
    let pool = pool(vec![spec(&server)]);
    // Called before anything was listed, then after.
    for _ in 0..2 {
        let refused = pool
            .call_tool(
                "weather",
                "broken",
                object_args(json!({"score": 1.5})),
                CallOptions::default(),
            )
            .await
            .unwrap_err();
        assert!(
            matches!(&refused, PoolError::UnknownTool { tool, known, .. }
                if tool == "broken" && known == &["forecast".to_owned()]),
            "{refused:?}"
        );
    }
    // The malformed tool hides neither the listing nor the use of the other.
    let tools = pool.list_server_tools("weather").await.unwrap();
    let names: Vec<_> = tools.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(names, ["forecast"]);
    pool.call_tool(
        "weather",
        "forecast",
        object_args(json!({"region": "north"})),
        CallOptions::default(),
    )
    .await
    .unwrap();
    pool.close_all().await;
    // The server prints it before it answers a call of the tool.
    assert!(
        !server.output().contains("CALLED broken"),
        "the server was called: {}",
        server.output()
    );
}

/// The W3C trace context a call carries in `_meta` (the gateway passes its
/// client's on in `CallOptions::meta`) reaches an HTTP server as the
/// `traceparent` header too.
#[tokio::test]
async fn a_calls_trace_context_in_meta_is_also_its_traceparent_header() {
    let server = start().await;
    let pool = pool(vec![spec(&server)]);
    let traceparent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
    let mut meta = serde_json::Map::new();
    meta.insert("traceparent".into(), json!(traceparent));
    let options = CallOptions {
        meta: Some(meta),
        ..CallOptions::default()
    };
    pool.call_tool(
        "weather",
        "forecast",
        object_args(json!({"region": "west"})),
        options,
    )
    .await
    .expect("the call");
    let line = format!("TRACEPARENT {traceparent}");
    assert!(
        server
            .wait_for_line(&line, std::time::Duration::from_secs(10))
            .await,
        "no {line} in the server's output: {}",
        server.output()
    );
    pool.close_all().await;
}
