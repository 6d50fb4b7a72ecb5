//! The spec's loader and adapters against real servers: auto, manual and
//! disabled loading, per-server isolation, direct adapters and their
//! session-scoped connections.

use crate::common;

use std::time::Duration;

use common::fixtures::*;
use serde_json::json;
use toolbridge::{
    adapter::{Tool, ToolRegistry, load_direct_mcp_tools, load_mcp_tools},
    config::DEFAULT_CALL_TIMEOUT,
    format::{Format, FormatOptions, NameTable, ToolOutcome, parse_calls},
    loader::{LoaderConfig, count_by_server, fetch_mcp_tools, setup_mcp_tools},
};

fn object(v: serde_json::Value) -> serde_json::Map<String, serde_json::Value> {
    v.as_object().cloned().unwrap_or_default()
}

#[tokio::test]
async fn disabled_loading_gives_nothing_and_starts_nothing() {
    let pool = pool(vec![example("a")]);
    assert!(
        fetch_mcp_tools(&pool, &LoaderConfig::default())
            .await
            .is_empty()
    );
    assert!(
        setup_mcp_tools(
            &pool,
            &LoaderConfig::default(),
            Format::OpenAi,
            &FormatOptions::default()
        )
        .await
        .is_none()
    );
    assert_eq!(
        pool.connection_info("a"),
        None,
        "a disabled loader must not start servers"
    );
}

#[tokio::test]
async fn auto_loads_every_active_server_and_manual_only_the_selected() {
    let mut off = example("off");
    off.disabled = true;
    let pool = pool(vec![example("a"), example("b"), off]);
    let auto = fetch_mcp_tools(&pool, &LoaderConfig::auto()).await;
    let servers: Vec<(&str, usize)> = count_by_server(&auto);
    assert_eq!(servers, [("a", 5), ("b", 5)]);
    let manual = fetch_mcp_tools(&pool, &LoaderConfig::manual(["b"])).await;
    assert!(manual.iter().all(|t| t.server_id == "b") && manual.len() == 5);

    let setup = setup_mcp_tools(
        &pool,
        &LoaderConfig::auto(),
        Format::Gemini,
        &FormatOptions::default(),
    )
    .await
    .expect("tools");
    assert_eq!(setup.mcp_tools.len(), 10);
    let declarations = setup.tools[0]["functionDeclarations"].as_array().unwrap();
    assert_eq!(declarations.len(), 10);
    let first = declarations[0]["name"].as_str().unwrap();
    assert!(setup.names.resolve(first).is_some());
    pool.close_all().await;
}

#[tokio::test]
async fn a_failing_server_does_not_stop_the_others_tools() {
    let pool = pool(vec![
        misbehave("broken", "die-at-start", &[]),
        example("good"),
    ]);
    let adapters = load_mcp_tools(&pool, &["broken".to_owned(), "good".to_owned()]).await;
    assert_eq!(adapters.len(), 5);
    assert!(adapters.iter().all(|a| a.mcp_tool().server_id == "good"));
    let hello = adapters
        .iter()
        .find(|a| a.name() == "mcp__good__hello")
        .expect("hello adapter");
    assert_eq!(
        hello.execute(object(json!({"name": "Lin"}))).await,
        "Hello, Lin!"
    );
    pool.close_all().await;
}

#[tokio::test]
async fn the_default_call_timeout_is_120_seconds() {
    assert_eq!(DEFAULT_CALL_TIMEOUT, Duration::from_secs(120));
    assert_eq!(example("x").call_timeout(), Duration::from_secs(120));
}

#[tokio::test]
async fn adapters_flatten_images_and_report_failures_as_text() {
    let pool = pool(vec![example("ex"), misbehave("crashy", "crash", &[])]);
    let adapters = load_mcp_tools(&pool, &["ex".to_owned(), "crashy".to_owned()]).await;
    let by_name = |n: &str| adapters.iter().find(|a| a.name() == n).unwrap();
    assert_eq!(
        by_name("mcp__ex__tiny_image")
            .execute(Default::default())
            .await,
        "[Image: image/png]"
    );
    assert_eq!(
        by_name("mcp__ex__tiny_audio")
            .execute(Default::default())
            .await,
        "[Audio: audio/wav]"
    );
    let crashed = by_name("mcp__crashy__echo")
        .execute(object(json!({"text": "x"})))
        .await;
    assert!(
        crashed.contains("server \"crashy\"") && crashed.contains("boom"),
        "{crashed}"
    );
    pool.close_all().await;
}

#[tokio::test]
async fn the_registry_refuses_duplicates_and_routes_calls() {
    let pool = pool(vec![example("ex")]);
    let adapters = load_mcp_tools(&pool, &["ex".to_owned()]).await;
    let mut registry = ToolRegistry::new();
    for adapter in &adapters {
        registry.register(adapter.clone()).unwrap();
    }
    let again = registry.register(adapters[0].clone()).unwrap_err();
    assert!(again.to_string().contains("already registered"), "{again}");
    // The calls are read the way `exec` reads them: through the name table
    // the model's tools were named with.
    let tools: Vec<_> = adapters.iter().map(|a| a.mcp_tool().clone()).collect();
    let names = NameTable::for_tools(&tools);
    let response = json!([
        {"id": "1", "type": "function",
         "function": {"name": "mcp__ex__echo", "arguments": "{\"text\": \"a\"}"}},
        {"id": "2", "type": "function",
         "function": {"name": "mcp__ex__nope", "arguments": "{}"}},
        {"id": "3", "type": "function",
         "function": {"name": "mcp__ex__echo", "arguments": "not JSON"}},
    ]);
    let calls = parse_calls(Format::OpenAi, &response, &names).expect("calls");
    let results = registry.execute_calls(calls).await;
    assert!(matches!(&results[0].1, ToolOutcome::Completed(r) if r.is_error != Some(true)));
    assert!(matches!(&results[1].1, ToolOutcome::Failed(m) if m.contains("unknown tool")));
    assert!(matches!(&results[2].1, ToolOutcome::Failed(m) if m.contains("invalid arguments")));
    pool.close_all().await;
}

/// Calls are routed by the tool their name resolved to in the name table,
/// not by the name string: a tool whose name had to change (too long for a
/// provider) is still reached under its exposed name.
#[tokio::test]
async fn the_registry_routes_a_shortened_name_to_its_tool() {
    let server = "a-server-with-a-name-long-enough-to-push-every-tool-past-64-chars";
    let pool = pool(vec![example(server)]);
    let adapters = load_mcp_tools(&pool, &[server.to_owned()]).await;
    let mut registry = ToolRegistry::new();
    for adapter in &adapters {
        registry.register(adapter.clone()).unwrap();
    }
    let tools: Vec<_> = adapters.iter().map(|a| a.mcp_tool().clone()).collect();
    let names = NameTable::for_tools(&tools);
    let exposed = names.name(server, "hello").expect("named").to_owned();
    assert!(exposed.len() <= 64 && exposed != format!("mcp__{server}__hello"));
    let response = json!([{"id": "c1", "type": "function",
        "function": {"name": exposed, "arguments": "{\"name\": \"Lin\"}"}}]);
    let calls = parse_calls(Format::OpenAi, &response, &names).expect("calls");
    let results = registry.execute_calls(calls).await;
    match &results[0].1 {
        ToolOutcome::Completed(result) => {
            assert_eq!(toolbridge::format::flatten_content(result), "Hello, Lin!")
        }
        other => panic!("{other:?}"),
    }
    pool.close_all().await;
}

#[tokio::test]
async fn direct_adapters_are_named_server_then_tool_and_their_connections_close_at_session_end() {
    let dir = tempdir();
    let pid_file = dir.path().join("pids");
    let session = load_direct_mcp_tools(vec![
        process_tree("builtin", &pid_file),
        example("helper"),
        misbehave("bad", "die-at-start", &[]),
    ])
    .await;
    let mut names: Vec<&str> = session.tools.iter().map(|t| t.name()).collect();
    names.sort();
    assert_eq!(
        names,
        [
            "builtin__echo",
            "builtin__grow",
            "helper__echo",
            "helper__hello",
            "helper__slow",
            "helper__tiny_audio",
            "helper__tiny_image"
        ]
    );
    assert_eq!(session.failures.len(), 1);
    assert_eq!(session.failures[0].0, "bad");
    assert_eq!(session.connections.len(), 2);
    let hello = session
        .tools
        .iter()
        .find(|t| t.name() == "helper__hello")
        .unwrap();
    assert_eq!(
        hello.execute(object(json!({"name": "direct"}))).await,
        "Hello, direct!"
    );

    let pids = read_pids(&pid_file);
    for connection in &session.connections {
        connection.close().await;
    }
    assert!(
        wait_until(Duration::from_secs(2), || tree_gone(pids[0], &pids[1..])),
        "a direct server's processes survived the end of the session"
    );
}
