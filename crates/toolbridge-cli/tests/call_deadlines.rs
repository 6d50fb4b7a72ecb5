//! Call timeouts the pool keeps itself (see `pool::progress`): the total
//! bound holds even while progress keeps arriving, and a call its caller
//! gives up on is cancelled on the server.

mod common;

use std::time::Duration;

use common::*;
use serde_json::json;
use toolbridge::pool::{CallOptions, PoolError, PoolOptions};

#[tokio::test]
async fn progress_does_not_extend_a_call_past_the_total_bound() {
    let pool = pool_with(
        vec![example("example")],
        PoolOptions {
            max_total_call_time: Duration::from_millis(500),
            ..PoolOptions::default()
        },
    );
    // Progress every 100 ms keeps the 300 ms idle timer from firing; the
    // 500 ms total bound ends the call long before its 5 s of work.
    let err = pool
        .call_tool(
            "example",
            "slow",
            args(json!({"ms": 5000})),
            CallOptions {
                timeout: Some(Duration::from_millis(300)),
                call_id: None,
            },
        )
        .await
        .expect_err("the total bound must end the call");
    match &err {
        PoolError::Timeout { after, .. } => assert_eq!(*after, Duration::from_millis(500)),
        other => panic!("expected a timeout, got {other}"),
    }
    // The connection is still usable.
    let result = pool
        .call_tool(
            "example",
            "echo",
            args(json!({"text": "still here"})),
            CallOptions::default(),
        )
        .await
        .expect("echo after the timeout");
    assert_eq!(result.is_error, Some(false));
    pool.close_all().await;
}

#[tokio::test]
async fn a_call_its_caller_drops_is_cancelled_on_the_server() {
    let dir = tempdir();
    let log = dir.path().join("cancelled.log");
    let log_str = log.to_string_lossy().into_owned();
    let pool = pool(vec![misbehave("hang", "hang", &[("CANCEL_LOG", &log_str)])]);
    pool.connect("hang").await.expect("start");
    // The caller stops waiting (its own deadline) long before the pool's.
    let gave_up = tokio::time::timeout(
        Duration::from_millis(200),
        pool.call_tool(
            "hang",
            "echo",
            args(json!({"text": "hi"})),
            CallOptions::default(),
        ),
    )
    .await;
    assert!(gave_up.is_err(), "the hanging call cannot have returned");
    // The cancellation is sent from a spawned task: let the runtime run it.
    let log_ref = &log;
    let line = poll_async(Duration::from_secs(5), move || async move {
        std::fs::read_to_string(log_ref)
            .ok()
            .and_then(|s| s.lines().next().map(str::to_owned))
    })
    .await
    .expect("the server never received notifications/cancelled");
    let cancelled: serde_json::Value = serde_json::from_str(&line).expect("JSON params");
    assert!(cancelled.get("requestId").is_some(), "{cancelled}");
    assert_eq!(cancelled["reason"], "request abandoned by the caller");
    pool.close_all().await;
}
