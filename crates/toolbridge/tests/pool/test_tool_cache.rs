//! The on-disk tool-list cache (issue 11 item 8) and the tool model's
//! `execution` (item 6), against real server processes: a pool given the
//! cache lists from it without starting servers; a changed spec,
//! `tools/list_changed`, an "unknown tool" answer and `forget_tools` each
//! drop a server's entry; a corrupt entry is ignored. Starts are counted
//! from the pids each server appends to its own file
//! (`tests/servers/tool_cache.py`).

use crate::common;

use std::path::Path;

use common::{SOON, fixtures::*};
use toolbridge::{
    config::{ServerSpec, StdioSpec, TransportSpec},
    pool::{CallOptions, Pool, PoolError, PoolOptions, ToolCacheOptions},
};

/// A `tool_cache.py` server named `name` that lists `tools` and notes each
/// start in `dir/name.starts`.
fn server(dir: &Path, name: &str, tools: &str) -> ServerSpec {
    let mut spec = ServerSpec::stdio(name, python(), [test_server("tool_cache.py")]);
    if let TransportSpec::Stdio(StdioSpec { env, .. }) = &mut spec.transport {
        let starts = dir.join(format!("{name}.starts"));
        env.insert("STARTS_FILE".into(), starts.to_string_lossy().into_owned());
        env.insert("TOOLS".into(), tools.into());
    }
    spec
}

fn starts(dir: &Path, name: &str) -> usize {
    std::fs::read_to_string(dir.join(format!("{name}.starts")))
        .map(|s| s.lines().count())
        .unwrap_or(0)
}

fn cache_dir(dir: &Path) -> std::path::PathBuf {
    dir.join("cache")
}

fn cached_pool(dir: &Path, servers: Vec<ServerSpec>) -> Pool {
    pool_with(
        servers,
        PoolOptions {
            tool_cache: Some(ToolCacheOptions::in_dir(cache_dir(dir))),
            ..PoolOptions::default()
        },
    )
}

fn entries(dir: &Path) -> usize {
    std::fs::read_dir(cache_dir(dir)).map_or(0, |d| d.count())
}

fn names(listing: &toolbridge::pool::ToolListing) -> Vec<String> {
    listing
        .tools
        .iter()
        .map(|t| format!("{}/{}", t.server_id, t.name))
        .collect()
}

#[tokio::test]
async fn a_second_pool_lists_from_the_disk_cache_without_starting_any_server() {
    let dir = tempdir();
    let specs = || {
        vec![
            server(dir.path(), "a", "ping"),
            server(dir.path(), "b", "ping,pong"),
            server(dir.path(), "c", "ping"),
        ]
    };
    let first = cached_pool(dir.path(), specs());
    let listed = first.list_all_active_server_tools().await;
    assert!(listed.failures.is_empty(), "{:?}", listed.failures);
    first.close_all().await;
    assert_eq!(
        ["a", "b", "c"].map(|s| starts(dir.path(), s)),
        [1, 1, 1],
        "each server starts once to be listed"
    );
    assert_eq!(entries(dir.path()), 3);

    let second = cached_pool(dir.path(), specs());
    let cached = second.list_all_active_server_tools().await;
    assert!(cached.failures.is_empty(), "{:?}", cached.failures);
    assert_eq!(names(&cached), names(&listed));
    assert_eq!(cached.tools, listed.tools, "the cache keeps every field");
    assert_eq!(
        ["a", "b", "c"].map(|s| starts(dir.path(), s)),
        [1, 1, 1],
        "no server started for a cached listing"
    );
    // A call still starts its server, and only it.
    let result = second
        .call_tool("b", "pong", None, CallOptions::default())
        .await
        .expect("call");
    assert_eq!(result.is_error, Some(false));
    assert_eq!(["a", "b", "c"].map(|s| starts(dir.path(), s)), [1, 2, 1]);
    second.close_all().await;

    // Without the cache (the library's default), every listing starts.
    let uncached = pool(specs());
    uncached.list_all_active_server_tools().await;
    uncached.close_all().await;
    assert_eq!(["a", "b", "c"].map(|s| starts(dir.path(), s)), [2, 3, 2]);
}

#[tokio::test]
async fn a_changed_config_for_a_server_misses_its_entry_only() {
    let dir = tempdir();
    let first = cached_pool(
        dir.path(),
        vec![
            server(dir.path(), "a", "ping"),
            server(dir.path(), "b", "ping"),
        ],
    );
    first.list_all_active_server_tools().await;
    first.close_all().await;
    let changed = cached_pool(
        dir.path(),
        vec![
            server(dir.path(), "a", "ping"),
            server(dir.path(), "b", "ping,new"),
        ],
    );
    let listing = changed.list_all_active_server_tools().await;
    changed.close_all().await;
    assert!(
        names(&listing).contains(&"b/new".to_owned()),
        "{:?}",
        names(&listing)
    );
    assert_eq!([starts(dir.path(), "a"), starts(dir.path(), "b")], [1, 2]);
}

#[tokio::test]
async fn list_changed_drops_the_servers_entry() {
    let dir = tempdir();
    let spec = || vec![server(dir.path(), "a", "ping")];
    let first = cached_pool(dir.path(), spec());
    first.list_all_active_server_tools().await;
    assert_eq!(entries(dir.path()), 1);
    first
        .call_tool("a", "change", None, CallOptions::default())
        .await
        .expect("change");
    assert!(
        wait_until(SOON, || entries(dir.path()) == 0),
        "the entry outlived tools/list_changed"
    );
    // The running server's new list is listed (and cached) again.
    let listing = first.list_all_active_server_tools().await;
    assert!(names(&listing).contains(&"a/added".to_owned()));
    assert_eq!(entries(dir.path()), 1);
    first.close_all().await;
    assert_eq!(starts(dir.path(), "a"), 1);
}

/// A server upgraded under the same config loses a tool: the cached list
/// still has it, the server answers "Unknown tool", and the pool does not
/// believe the stale list: it lists again and names the tools there are now.
#[tokio::test]
async fn an_unknown_tool_answer_drops_the_servers_entry() {
    let dir = tempdir();
    let tools_file = dir.path().join("tools.txt");
    std::fs::write(&tools_file, "ping,gone").unwrap();
    let spec = || {
        let mut spec = server(dir.path(), "a", "ping");
        if let TransportSpec::Stdio(StdioSpec { env, .. }) = &mut spec.transport {
            env.insert(
                "TOOLS_FILE".into(),
                tools_file.to_string_lossy().into_owned(),
            );
        }
        vec![spec]
    };
    let first = cached_pool(dir.path(), spec());
    first.list_all_active_server_tools().await;
    first.close_all().await;
    std::fs::write(&tools_file, "ping").unwrap();

    let second = cached_pool(dir.path(), spec());
    let cached = second.list_all_active_server_tools().await;
    assert!(
        names(&cached).contains(&"a/gone".to_owned()),
        "the cached list is the old one"
    );
    let error = second
        .call_tool("a", "gone", None, CallOptions::default())
        .await
        .expect_err("an unknown tool is an error");
    match &error {
        PoolError::UnknownTool { tool, known, .. } => {
            assert_eq!(tool, "gone");
            assert!(known.contains(&"ping".to_owned()), "{known:?}");
            assert!(
                !known.contains(&"gone".to_owned()),
                "the stale list was believed: {known:?}"
            );
        }
        other => panic!("{other:?}"),
    }
    second.close_all().await;
    assert_eq!(starts(dir.path(), "a"), 2);

    // The entry now holds the server's new list: a third pool uses it
    // without starting the server.
    let third = cached_pool(dir.path(), spec());
    let listed = third.list_all_active_server_tools().await;
    third.close_all().await;
    assert!(!names(&listed).contains(&"a/gone".to_owned()));
    assert_eq!(starts(dir.path(), "a"), 2, "the fresh entry was not used");
}

#[tokio::test]
async fn forget_tools_lists_again_and_corrupt_entries_are_ignored() {
    let dir = tempdir();
    let spec = || vec![server(dir.path(), "a", "ping")];
    let first = cached_pool(dir.path(), spec());
    let listed = first.list_all_active_server_tools().await;
    first.close_all().await;

    let refreshed = cached_pool(dir.path(), spec());
    refreshed.forget_tools("a");
    assert_eq!(
        refreshed.list_all_active_server_tools().await.tools,
        listed.tools
    );
    refreshed.close_all().await;
    assert_eq!(starts(dir.path(), "a"), 2);

    for garbage in [&b"{not json"[..], b"", &[0xff, 0xfe, 0x00]] {
        for entry in std::fs::read_dir(cache_dir(dir.path())).expect("cache dir") {
            std::fs::write(entry.expect("entry").path(), garbage).expect("corrupt");
        }
        let pool = cached_pool(dir.path(), spec());
        let listing = pool.list_all_active_server_tools().await;
        pool.close_all().await;
        assert!(listing.failures.is_empty(), "{:?}", listing.failures);
        assert_eq!(listing.tools, listed.tools);
    }
    assert_eq!(starts(dir.path(), "a"), 5);
    // The last listing rewrote a good entry.
    let pool = cached_pool(dir.path(), spec());
    pool.list_all_active_server_tools().await;
    assert_eq!(starts(dir.path(), "a"), 5);
}

#[tokio::test]
async fn a_tool_that_requires_a_task_keeps_its_execution_and_is_called_as_one() {
    let dir = tempdir();
    let pool = cached_pool(
        dir.path(),
        vec![
            server(dir.path(), "a", "ping"),
            everything_stdio("everything"),
        ],
    );
    let listing = pool.list_all_active_server_tools().await;
    assert!(listing.failures.is_empty(), "{:?}", listing.failures);
    let tool = |server: &str, name: &str| {
        listing
            .tools
            .iter()
            .find(|t| t.server_id == server && t.name == name)
            .unwrap_or_else(|| panic!("{server}/{name} not listed"))
            .clone()
    };
    let research = tool("a", "research");
    assert!(research.requires_task());
    assert_eq!(research.title.as_deref(), Some("Research"));
    // server-everything (a server nobody here wrote) marks one tool so.
    let simulate = tool("everything", "simulate-research-query");
    assert!(simulate.requires_task());
    assert!(!tool("everything", "echo").requires_task());
    assert_eq!(
        tool("everything", "echo")
            .annotations
            .and_then(|a| a.read_only_hint),
        Some(true)
    );
    // Called, it runs as a task (test_tasks.rs has the details).
    let result = pool
        .call_tool("a", "research", None, CallOptions::default())
        .await
        .expect("the task's result");
    assert_eq!(
        result.content[0].as_text().map(|t| t.text.as_str()),
        Some("research done")
    );
    // Nor is it offered to a model by the adapters.
    let adapters = toolbridge::load_mcp_tools(&pool, &["a".to_owned()]).await;
    let offered: Vec<&str> = adapters
        .iter()
        .map(|a| a.mcp_tool().name.as_str())
        .collect();
    assert!(
        offered.contains(&"ping") && !offered.contains(&"research"),
        "{offered:?}"
    );
    pool.close_all().await;
    // The execution travelled through the disk cache too.
    let cached = cached_pool(dir.path(), vec![server(dir.path(), "a", "ping")]);
    let again = cached.list_all_active_server_tools().await;
    assert!(
        again
            .tools
            .iter()
            .any(|t| t.name == "research" && t.requires_task())
    );
    assert_eq!(starts(dir.path(), "a"), 1);
}
