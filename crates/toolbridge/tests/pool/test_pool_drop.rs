//! Dropping a pool without `close_all` stops its servers (issue 10,
//! defect 2): the graceful way in the background while the runtime runs,
//! and by killing each server's process group when the runtime is gone.

use crate::common;

use std::time::Duration;

use common::fixtures::*;
use serde_json::json;
use toolbridge::pool::CallOptions;

/// How long stopped servers may take to go (the graceful close waits for
/// the example server to see its stdin close).
const GONE_WITHIN: Duration = Duration::from_secs(30);

async fn hello(pool: &toolbridge::pool::Pool, server: &str) {
    pool.call_tool(
        server,
        "hello",
        object_args(json!({"name": "drop"})),
        CallOptions::default(),
    )
    .await
    .expect("hello");
}

/// Regression: the supervisor task owned the running service, so a dropped
/// pool left every server running until the runtime ended.
#[tokio::test]
async fn fifty_pools_dropped_without_close_leave_no_server_running() {
    let dir = tempdir();
    let pid_file = dir.path().join("pids");
    for round in 0..50 {
        let pool = pool(vec![example_noting_pid("example", &pid_file)]);
        hello(&pool, "example").await;
        assert_eq!(read_pids(&pid_file).len(), round + 1);
        drop(pool);
    }
    let pids = read_pids(&pid_file);
    // Polled without blocking: the servers close on this runtime.
    let gone = poll_async(GONE_WITHIN, || async {
        pids.iter().all(|p| !alive(*p)).then_some(())
    })
    .await
    .is_some();
    let left: Vec<u32> = pids.iter().copied().filter(|p| alive(*p)).collect();
    assert!(
        gone,
        "{} of 50 servers still run after their pools were dropped: {left:?}",
        left.len()
    );
}

#[tokio::test]
async fn a_pool_dropped_during_a_call_stops_its_server_once_the_call_ends() {
    let dir = tempdir();
    let pid_file = dir.path().join("pids");
    let pool = pool(vec![example_noting_pid("example", &pid_file)]);
    let call = {
        let pool = pool.clone();
        async move {
            pool.call_tool(
                "example",
                "slow",
                object_args(json!({"ms": 200})),
                CallOptions::default(),
            )
            .await
        }
    };
    let call = tokio::spawn(call);
    // Wait for the server to be up, then drop our handle while the call runs.
    let started = poll_async(GONE_WITHIN, || async {
        std::fs::read_to_string(&pid_file)
            .ok()
            .filter(|s| !s.is_empty())
    })
    .await;
    assert!(started.is_some(), "the server never started");
    drop(pool);
    let result = call.await.expect("call task").expect("the call finishes");
    assert!(!result.content.is_empty());
    let pid = read_pids(&pid_file)[0];
    let gone = poll_async(GONE_WITHIN, || async { (!alive(pid)).then_some(()) }).await;
    assert!(gone.is_some(), "the server survived its pool");
}

#[test]
fn a_pool_whose_runtime_is_gone_leaves_no_server_running() {
    let dir = tempdir();
    let pid_file = dir.path().join("pids");
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .expect("runtime");
    let pool = runtime.block_on(async {
        let pool = pool(vec![example_noting_pid("example", &pid_file)]);
        hello(&pool, "example").await;
        pool
    });
    let pid = read_pids(&pid_file)[0];
    // The runtime ends first, then the pool is dropped outside any runtime:
    // no panic, and the server's group is killed.
    drop(runtime);
    drop(pool);
    assert!(
        wait_until(GONE_WITHIN, || !alive(pid)),
        "the server survived the runtime and the pool"
    );
}

/// A server that stopped reading (its calls fail with a send error) is
/// forgotten by the pool, and does not keep running until `close_all`.
#[tokio::test]
async fn a_server_the_pool_gave_up_on_is_stopped_without_close_all() {
    let dir = tempdir();
    let pid_file = dir.path().join("pids");
    let script = format!(
        "echo $$ >> '{}' && exec '{}' '{}' deaf",
        pid_file.display(),
        python(),
        test_server("misbehave.py")
    );
    let spec = toolbridge::config::ServerSpec::stdio("deaf", "sh", ["-c".to_owned(), script]);
    let pool = pool(vec![spec]);
    pool.list_server_tools("deaf").await.expect("list");
    let err = pool
        .call_tool(
            "deaf",
            "echo",
            object_args(json!({"text": "hi"})),
            CallOptions::default(),
        )
        .await
        .expect_err("the server no longer reads");
    assert!(!err.is_timeout(), "{err}");
    let pid = read_pids(&pid_file)[0];
    let gone = poll_async(GONE_WITHIN, || async { (!alive(pid)).then_some(()) }).await;
    assert!(gone.is_some(), "the server the pool gave up on still runs");
    drop(pool);
}
