//! Tool calls run as tasks, against server-everything's
//! `simulate-research-query` (`execution.taskSupport: "required"`, four
//! stages of a second each, `pollInterval` 1000 ms): the result is fetched,
//! and a call that times out or is dropped cancels the task on the server,
//! which the server's own `tasks/list` shows.

use crate::common;

use std::time::Duration;

use common::{SOON, fixtures::*};
use rmcp::model::{ClientRequest, CustomRequest};
use serde_json::{Value, json};
use toolbridge::pool::{CallOptions, Pool, PoolError};

const TOOL: &str = "simulate-research-query";

/// A pool with server-everything, its tools listed (so the pool knows the
/// tool is task-only).
async fn everything_pool() -> Pool {
    let pool = pool(vec![everything_stdio("everything")]);
    let tools = pool
        .list_server_tools("everything")
        .await
        .expect("server-everything lists its tools");
    assert!(tools.iter().any(|t| t.name == TOOL && t.requires_task()));
    pool
}

fn topic(topic: &str) -> Option<serde_json::Map<String, Value>> {
    match json!({ "topic": topic }) {
        Value::Object(map) => Some(map),
        _ => None,
    }
}

/// The statuses of the server's tasks, from its own `tasks/list`.
async fn task_statuses(pool: &Pool) -> Vec<String> {
    let list = ClientRequest::CustomRequest(CustomRequest::new("tasks/list", Some(json!({}))));
    let listed = pool
        .request("everything", list, &CallOptions::default())
        .await
        .expect("tasks/list");
    let listed = serde_json::to_value(listed).expect("JSON");
    listed["tasks"]
        .as_array()
        .map(|tasks| {
            tasks
                .iter()
                .filter_map(|t| t["status"].as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default()
}

/// Waits until the server lists a task in `status`.
async fn wait_for_status(pool: &Pool, status: &str) -> bool {
    poll_async(SOON, || async {
        task_statuses(pool)
            .await
            .iter()
            .any(|s| s == status)
            .then_some(())
    })
    .await
    .is_some()
}

#[tokio::test]
async fn a_task_only_tool_is_run_as_a_task_and_its_result_fetched() {
    let pool = everything_pool().await;
    let result = pool
        .call_tool("everything", TOOL, topic("tides"), CallOptions::default())
        .await
        .expect("the research report");
    let text = result.content[0]
        .as_text()
        .map(|t| t.text.clone())
        .unwrap_or_default();
    assert!(text.contains("# Research Report: tides"), "{text}");
    assert_eq!(task_statuses(&pool).await, ["completed"]);
    pool.close_all().await;
}

/// Regression (issue 24, item 3): server-everything sends
/// `tools/list_changed` right after it connects, which drops the cached
/// list; a call made without a cached list was sent as a plain call and
/// refused ("requires task augmentation"). Whether a call is a task must
/// not depend on the cache: here nothing was ever listed.
#[tokio::test]
async fn a_task_only_tool_called_before_any_listing_is_run_as_a_task() {
    let pool = pool(vec![everything_stdio("everything")]);
    let result = pool
        .call_tool("everything", TOOL, topic("reefs"), CallOptions::default())
        .await
        .expect("the research report without a listing first");
    let text = result.content[0]
        .as_text()
        .map(|t| t.text.clone())
        .unwrap_or_default();
    assert!(text.contains("# Research Report: reefs"), "{text}");
    pool.close_all().await;
}

#[tokio::test]
async fn a_task_whose_call_times_out_is_cancelled_on_the_server() {
    let pool = everything_pool().await;
    let options = CallOptions {
        timeout: Some(Duration::from_millis(1500)),
        ..CallOptions::default()
    };
    let error = pool
        .call_tool("everything", TOOL, topic("tides"), options)
        .await
        .expect_err("four seconds of research do not fit in 1.5");
    assert!(
        matches!(&error, PoolError::Timeout { after, .. } if *after == Duration::from_millis(1500)),
        "{error:?}"
    );
    // The server was told: its task is cancelled, not left working.
    assert!(
        wait_for_status(&pool, "cancelled").await,
        "{:?}",
        task_statuses(&pool).await
    );
    pool.close_all().await;
}

#[tokio::test]
async fn a_task_call_dropped_by_its_caller_is_cancelled_on_the_server() {
    let pool = everything_pool().await;
    let call = tokio::spawn({
        let pool = pool.clone();
        async move {
            pool.call_tool("everything", TOOL, topic("tides"), CallOptions::default())
                .await
        }
    });
    assert!(
        wait_for_status(&pool, "working").await,
        "the task never started"
    );
    call.abort();
    assert!(call.await.is_err_and(|e| e.is_cancelled()));
    assert!(
        wait_for_status(&pool, "cancelled").await,
        "{:?}",
        task_statuses(&pool).await
    );
    pool.close_all().await;
}

/// `tests/servers/tool_cache.py`, whose `notified` tool may run as a task
/// that asks to be polled once a day and says at once that it is done.
fn notifying_server(dir: &std::path::Path) -> toolbridge::config::ServerSpec {
    let mut spec =
        toolbridge::config::ServerSpec::stdio("n", python(), [test_server("tool_cache.py")]);
    if let toolbridge::config::TransportSpec::Stdio(stdio) = &mut spec.transport {
        let starts = dir.join("n.starts").to_string_lossy().into_owned();
        stdio.env.insert("STARTS_FILE".into(), starts);
    }
    spec
}

#[tokio::test]
async fn an_optional_task_tool_runs_as_a_task_when_asked_and_a_status_notification_ends_the_wait() {
    let dir = tempfile::tempdir().expect("temp dir");
    let pool = pool(vec![notifying_server(dir.path())]);
    pool.list_server_tools("n").await.expect("listed");
    let plain = pool
        .call_tool("n", "notified", None, CallOptions::default())
        .await
        .expect("a plain call");
    assert_eq!(flat(&plain), "done plainly");
    // Polled once a day, it would time out after 20 s: the server's
    // notifications/tasks/status wakes the poller.
    let as_task = CallOptions {
        as_task: true,
        timeout: Some(SOON),
        ..CallOptions::default()
    };
    let result = pool
        .call_tool("n", "notified", None, as_task)
        .await
        .expect("the task's result");
    assert_eq!(flat(&result), "research done");
    pool.close_all().await;
}

fn flat(result: &toolbridge::rmcp_model::CallToolResult) -> String {
    toolbridge::flatten_content(result)
}
