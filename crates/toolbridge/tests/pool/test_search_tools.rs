//! `Pool::search_tools` against real servers: server-everything and the
//! example server are ranked for tasks in words; the index follows a
//! server's `tools/list_changed` (`tests/servers/tool_cache.py` adds a
//! tool when its `change` tool is called); a tool the listing leaves out
//! (`disabledTools`, the filter every model-facing listing applies) is
//! never found; a query that matches nothing is an empty list.

use crate::common;

use common::{SOON, fixtures::*, wait::poll_async};
use toolbridge::{
    config::{ServerSpec, StdioSpec, TransportSpec},
    pool::{CallOptions, ToolSearch},
};

fn found(search: &ToolSearch) -> Vec<String> {
    search
        .hits
        .iter()
        .map(|hit| format!("{}/{}", hit.tool.server_id, hit.tool.name))
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tasks_in_words_find_the_real_servers_tools_best_first() {
    let pool = pool(vec![everything_stdio("everything"), example("example")]);
    let search = pool.search_tools("add two numbers together", 3).await;
    assert!(search.failures.is_empty(), "{:?}", search.failures);
    assert_eq!(found(&search)[0], "everything/get-sum", "{search:?}");
    assert!(search.hits.windows(2).all(|w| w[0].score >= w[1].score));

    let search = pool.search_tools("greet Ada", 1).await;
    assert_eq!(found(&search), ["example/hello"]);

    // Only the servers asked for.
    let only = pool
        .search_tools_of(&["example".into()], "echo the text back", 5)
        .await;
    assert!(!only.hits.is_empty());
    assert!(only.hits.iter().all(|hit| hit.tool.server_id == "example"));

    let none = pool.search_tools("zebra xylophone quasar", 5).await;
    assert!(none.hits.is_empty() && none.failures.is_empty(), "{none:?}");
    pool.close_all().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_disabled_tool_is_never_found() {
    let mut everything = everything_stdio("everything");
    everything.disabled_tools = vec!["get-sum".into()];
    let pool = pool(vec![everything, everything_stdio("control")]);
    let search = pool.search_tools("add two numbers together", 10).await;
    let found = found(&search);
    // The same server without the filter has it: the query does find it.
    assert!(found.contains(&"control/get-sum".to_owned()), "{found:?}");
    assert!(
        !found.contains(&"everything/get-sum".to_owned()),
        "{found:?}"
    );
    pool.close_all().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_index_follows_a_tools_list_changed() {
    let dir = tempdir();
    let mut spec = ServerSpec::stdio("cache", python(), [test_server("tool_cache.py")]);
    if let TransportSpec::Stdio(StdioSpec { env, .. }) = &mut spec.transport {
        let starts = dir.path().join("cache.starts");
        env.insert("STARTS_FILE".into(), starts.to_string_lossy().into_owned());
        env.insert("TOOLS".into(), "ping".into());
    }
    let pool = pool(vec![spec]);
    let before = pool.search_tools("added", 5).await;
    assert!(before.failures.is_empty(), "{:?}", before.failures);
    assert!(!found(&before).contains(&"cache/added".to_owned()));
    // `change` adds the tool "added" and sends notifications/tools/list_changed.
    pool.call_tool("cache", "change", None, CallOptions::default())
        .await
        .expect("change");
    let after = poll_async(SOON, || async {
        let search = pool.search_tools("added", 5).await;
        found(&search)
            .contains(&"cache/added".to_owned())
            .then_some(search)
    })
    .await;
    assert!(after.is_some(), "the new tool was never found");
    // Nothing changed since: the same index answers.
    let again = pool.search_tools("added", 5).await;
    assert_eq!(found(&again)[0], "cache/added");
    pool.close_all().await;
}

/// The adapters' pair: the model searches, then calls the tool by the name
/// the search gave, and gets the real server's result.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_search_then_call_pair_runs_the_tool_it_found() {
    use toolbridge::{
        adapter::{
            SearchThenCall,
            search::{CALL_TOOL, SEARCH_TOOL},
        },
        format::NameStyle,
    };
    let mut everything = everything_stdio("everything");
    everything.disabled_tools = vec!["get-sum".into()];
    let pool = pool(vec![example("example"), everything]);
    let pair = SearchThenCall::new(pool.clone(), pool.server_names().to_vec(), NameStyle::Mcp);
    let [search, call] = pair.tools();
    assert_eq!((search.name(), call.name()), (SEARCH_TOOL, CALL_TOOL));
    assert_eq!(
        search.parameters()["required"],
        serde_json::json!(["query"])
    );

    let found = search
        .call(
            object_args(serde_json::json!({"query": "greet someone by name", "limit": 2})).unwrap(),
        )
        .await
        .expect("search");
    let tools = found.structured_content.expect("structured")["tools"].clone();
    assert_eq!(tools[0]["name"], "mcp__example__hello", "{tools}");
    assert!(tools[0]["inputSchema"]["properties"]["name"].is_object());
    assert!(tools.as_array().is_some_and(|t| t.len() <= 2));

    let result = call
        .call(
            object_args(serde_json::json!({
            "name": tools[0]["name"], "arguments": {"name": "Ada"}}))
            .unwrap(),
        )
        .await
        .expect("call");
    assert_ne!(result.is_error, Some(true), "{result:?}");
    let text = result.content[0]
        .as_text()
        .map(|t| t.text.clone())
        .unwrap_or_default();
    assert!(text.contains("Ada"), "{text}");

    // A disabled tool is neither found nor callable by its name.
    let sums = search
        .call(object_args(serde_json::json!({"query": "add two numbers", "limit": 20})).unwrap())
        .await
        .expect("search");
    let names = sums.structured_content.expect("structured")["tools"].to_string();
    assert!(!names.contains("get-sum"), "{names}");
    let refused = call
        .call(
            object_args(serde_json::json!({
            "name": "mcp__everything__get-sum", "arguments": {"a": 1, "b": 2}}))
            .unwrap(),
        )
        .await
        .expect("an error result, not a failure");
    assert_eq!(refused.is_error, Some(true));
    let text = refused.content[0]
        .as_text()
        .map(|t| t.text.clone())
        .unwrap_or_default();
    assert!(text.contains("no tool is named"), "{text}");

    let none = search
        .call(object_args(serde_json::json!({"query": "zebra xylophone quasar"})).unwrap())
        .await
        .expect("search");
    assert_ne!(none.is_error, Some(true), "no match is not an error");
    assert_eq!(
        none.structured_content.expect("structured")["tools"],
        serde_json::json!([])
    );
    pool.close_all().await;
}
