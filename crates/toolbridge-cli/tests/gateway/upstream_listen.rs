//! The pool in front of a 2026-07-28 server: `toolbridge serve` (a real
//! process over HTTP on 127.0.0.1), which sends its list changes and
//! resource updates only on `subscriptions/listen` streams. The pool keeps
//! one open per connection (the library's `pool::listen`), so what the
//! gateway says reaches the pool's caches and watchers as a 2025-11-25
//! server's notifications do.

use crate::common;
use crate::gateway_support;

use std::time::Duration;

use common::{everything_js, poll_async, toolbridge};
use gateway_support::{Gateway, free_port, write_config};
use serde_json::{Value, json};
use toolbridge::{
    config::{ServerSpec, TransportKind},
    pool::{CallOptions, Pool, ServerStatus},
};

/// How long anything in these tests may take.
const DEADLINE: Duration = Duration::from_secs(60);

/// The pool's name for the gateway.
const UPSTREAM: &str = "upstream";

/// `mcpServers` with one example server per name.
fn examples(names: &[&str]) -> Value {
    names
        .iter()
        .map(|n| {
            let server = json!({ "command": toolbridge(), "args": ["example-server"] });
            ((*n).to_owned(), server)
        })
        .collect::<serde_json::Map<_, _>>()
        .into()
}

/// A pool whose one server is the gateway at `url`, connected, after
/// checking it speaks 2026-07-28 (else this tests the older protocol).
async fn pool_before(gateway: &Gateway) -> Pool {
    let spec = ServerSpec::remote(UPSTREAM, TransportKind::Http, gateway.url.clone());
    let pool = common::pool(vec![spec]);
    let info = pool
        .connect(UPSTREAM)
        .await
        .expect("connect to the gateway");
    assert_eq!(info.protocol_version, "2026-07-28", "{info:?}");
    pool
}

async fn tool_names(pool: &Pool) -> Vec<String> {
    match pool.list_server_tools(UPSTREAM).await {
        Ok(tools) => tools.iter().map(|t| t.name.clone()).collect(),
        // The gateway may be restarting.
        Err(_) => Vec::new(),
    }
}

/// Lists until `tool` is among the tools; panics after [`DEADLINE`].
async fn wait_for_tool(pool: &Pool, tool: &str, gateway: &Gateway) {
    let listed = poll_async(DEADLINE, || async {
        tool_names(pool)
            .await
            .iter()
            .any(|t| t == tool)
            .then_some(())
    })
    .await;
    assert!(
        listed.is_some(),
        "the pool never listed {tool}: {:?}; gateway log:\n{}",
        tool_names(pool).await,
        gateway.log()
    );
}

/// When the pool's connection to the gateway started.
fn connected_since(pool: &Pool) -> std::time::SystemTime {
    match pool.status(UPSTREAM) {
        Some(ServerStatus::Running { since, .. }) => since,
        other => panic!("the pool is not connected to the gateway: {other:?}"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_2026_upstreams_tool_list_change_drops_the_pools_cache_and_tells_its_watchers() {
    let home = common::tempdir();
    let config = write_config(home.path(), examples(&["alpha"]));
    let gateway = Gateway::start_with(&config, home.path(), &[], None);
    let pool = pool_before(&gateway).await;
    let mut changes = pool.watch_tool_list_changes(UPSTREAM).unwrap();
    // One upstream: its tools keep their names.
    assert!(tool_names(&pool).await.contains(&"echo".to_owned()));
    assert!(pool.cached_tool_count(UPSTREAM).is_some());

    // A second upstream: the gateway's tools are now `alpha__echo`, ...
    write_config(home.path(), examples(&["alpha", "beta"]));
    let told = tokio::time::timeout(DEADLINE, changes.recv()).await;
    assert!(
        matches!(told, Ok(Ok(()))),
        "the pool's watcher was never told; gateway log:\n{}",
        gateway.log()
    );
    assert_eq!(pool.cached_tool_count(UPSTREAM), None, "the cache was kept");
    wait_for_tool(&pool, "beta__echo", &gateway).await;
    pool.close_all().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_listen_stream_that_breaks_is_opened_again_and_the_lists_it_covers_are_listed_again() {
    let home = common::tempdir();
    let config = write_config(home.path(), examples(&["alpha"]));
    let listen = format!("127.0.0.1:{}", free_port());
    let mut gateway = Gateway::start_with(&config, home.path(), &["--listen", &listen], None);
    let pool = pool_before(&gateway).await;
    let since = connected_since(&pool);
    assert!(tool_names(&pool).await.contains(&"echo".to_owned()));

    let mut changes = pool.watch_tool_list_changes(UPSTREAM).unwrap();
    // The gateway dies (its stream with it) and comes back at the same
    // address with another server: nobody tells the pool, whose stream was
    // down meanwhile.
    gateway.kill();
    write_config(home.path(), examples(&["alpha", "beta"]));
    let gateway = Gateway::start_with(&config, home.path(), &["--listen", &listen], None);
    let told = tokio::time::timeout(DEADLINE, changes.recv()).await;
    assert!(
        matches!(told, Ok(Ok(()))),
        "the pool's stream was never opened again; gateway log:\n{}",
        gateway.log()
    );
    wait_for_tool(&pool, "beta__echo", &gateway).await;
    // Stateless HTTP: the connection itself lived on, only the stream broke.
    assert_eq!(connected_since(&pool), since);
    pool.close_all().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn resource_updates_of_a_2026_upstream_reach_the_pool_for_the_uris_subscribed() {
    let home = common::tempdir();
    // server-everything behind the gateway, with `tee` recording what the
    // gateway sends it.
    let record = home.path().join("upstream.jsonl");
    let config = write_config(
        home.path(),
        json!({ "everything": {
            "command": "sh",
            "args": ["-c", r#"tee -a "$0" | exec node "$1" stdio"#, record, everything_js()],
        } }),
    );
    let gateway = Gateway::start_with(&config, home.path(), &[], None);
    let pool = pool_before(&gateway).await;
    let mut updates = pool.watch_resource_updates(UPSTREAM).unwrap();
    let (one, two) = (
        "demo://resource/dynamic/text/1",
        "demo://resource/dynamic/text/2",
    );
    pool.subscribe_resource(UPSTREAM, one).await.unwrap();
    // server-everything sends an update of each subscribed URI at once,
    // then every 5 s.
    pool.call_tool(
        UPSTREAM,
        "toggle-subscriber-updates",
        None,
        CallOptions::default(),
    )
    .await
    .unwrap();
    // Reads updates until one of `uri` came; the URIs seen meanwhile.
    let mut until_update_of = async |uri: &str| {
        let mut seen = Vec::new();
        let found = tokio::time::timeout(DEADLINE, async {
            loop {
                let update = updates.recv().await.expect("the update feed");
                seen.push(update.uri.clone());
                if update.uri == uri {
                    return;
                }
            }
        })
        .await;
        assert!(found.is_ok(), "no update of {uri}; got {seen:?}");
        seen
    };
    let seen = until_update_of(one).await;
    assert!(!seen.iter().any(|u| u == two), "{two} was never subscribed");

    // A second URI: the stream is opened again naming both.
    pool.subscribe_resource(UPSTREAM, two).await.unwrap();
    until_update_of(two).await;
    until_update_of(one).await;

    // Unsubscribed: the stream stops naming it, so the gateway, which
    // subscribed its upstream for the pool's stream, lets go of it.
    pool.unsubscribe_resource(UPSTREAM, one).await.unwrap();
    let released = poll_async(DEADLINE, || async {
        (common::upstream_requests(&record, "resources/unsubscribe", one) > 0).then_some(())
    })
    .await;
    assert!(
        released.is_some(),
        "the gateway was never told the pool no longer wants {one}"
    );
    assert_eq!(
        common::upstream_requests(&record, "resources/unsubscribe", two),
        0
    );
    pool.close_all().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_gateway_in_front_of_a_2026_gateway_tells_its_clients_when_the_tools_behind_change() {
    use rmcp::{ServiceExt as _, transport::StreamableHttpClientTransport};
    // The client → gateway B → gateway A → example servers.
    let (home_a, home_b) = (common::tempdir(), common::tempdir());
    let config_a = write_config(home_a.path(), examples(&["alpha"]));
    let a = Gateway::start_with(&config_a, home_a.path(), &[], None);
    // A's new server's tools would be withheld by B as new on a pinned
    // server (tests/gateway/gateway_pins.rs tests that); this test is about the relay.
    let config_b = write_config(
        home_b.path(),
        json!({ "a": { "type": "http", "url": a.url.clone(), "pin": "off" } }),
    );
    let b = Gateway::start_with(&config_b, home_b.path(), &[], None);
    let (tx, mut changed) = tokio::sync::mpsc::unbounded_channel();
    let client = common::ListWatcher(tx)
        .serve(StreamableHttpClientTransport::from_uri(b.url.clone()))
        .await
        .expect("connect to gateway B");
    // B connects to A to list: from then on it listens to A.
    let before = client.list_all_tools().await.unwrap();
    assert!(before.iter().any(|t| t.name == "echo"), "{before:?}");

    write_config(home_a.path(), examples(&["alpha", "beta"]));
    let told = tokio::time::timeout(DEADLINE, changed.recv()).await;
    assert!(
        matches!(told, Ok(Some(()))),
        "gateway B's client was never told; A's log:\n{}\nB's log:\n{}",
        a.log(),
        b.log()
    );
    let after = client.list_all_tools().await.unwrap();
    assert!(after.iter().any(|t| t.name == "beta__echo"), "{after:?}");
    client.cancel().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_python_sdk_2_server_over_stdio_is_heard_on_its_listen_stream() {
    // A server nobody here wrote the listen side of: the Python SDK's.
    let spec = ServerSpec::stdio(
        "py",
        common::python(),
        [common::test_server("py_listen.py")],
    );
    let pool = common::pool(vec![spec]);
    let info = pool.connect("py").await.expect("start the Python server");
    assert_eq!(info.protocol_version, "2026-07-28", "{info:?}");
    let mut changes = pool.watch_tool_list_changes("py").unwrap();
    let mut updates = pool.watch_resource_updates("py").unwrap();
    let names = |tools: &[toolbridge::tools::McpTool]| {
        tools.iter().map(|t| t.name.clone()).collect::<Vec<_>>()
    };
    let before = pool.list_server_tools("py").await.unwrap();
    assert!(!names(&before).contains(&"added".to_owned()), "{before:?}");

    pool.call_tool("py", "add_tool", None, CallOptions::default())
        .await
        .unwrap();
    let told = tokio::time::timeout(DEADLINE, changes.recv()).await;
    assert!(matches!(told, Ok(Ok(()))), "never told the tools changed");
    let after = pool.list_server_tools("py").await.unwrap();
    assert!(names(&after).contains(&"added".to_owned()), "{after:?}");

    pool.subscribe_resource("py", "note://one").await.unwrap();
    pool.call_tool("py", "touch", None, CallOptions::default())
        .await
        .unwrap();
    let update = tokio::time::timeout(DEADLINE, updates.recv()).await;
    match update {
        Ok(Ok(update)) => assert_eq!(update.uri, "note://one"),
        other => panic!("no update of note://one: {other:?}"),
    }
    // Closing waits for the stream's task, which ends with the connection.
    let closed = tokio::time::timeout(DEADLINE, pool.close("py")).await;
    assert!(closed.is_ok(), "the listen stream outlived its connection");
}
