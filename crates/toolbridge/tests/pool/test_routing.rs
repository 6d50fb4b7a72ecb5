//! Whose a server's log message is, when it names no request (stdio: one
//! stream for everything), with calls of two clients on one connection:
//! the pool's in-flight rule (`pool::in_flight`) against a Python `mcp`
//! 1.x server that logs on its session (tests/servers/late_asker.py).

// Logging is deprecated by SEP-2577 (rmcp 3.11 warns), but the 2025-11-25
// protocol this server speaks still carries it.
#![allow(deprecated)]

use crate::common;

use std::{
    path::Path,
    sync::{Arc, Mutex},
    time::Duration,
};

use common::{deps, fixtures::*};
use serde_json::json;
use toolbridge::{
    config::ServerSpec,
    pool::{CallOptions, ClientFeatures, LogHandler, Pool, PoolOptions, RequestOrigin},
    rmcp_model::{CallToolResult, ContentBlock, LoggingMessageNotificationParam},
};

/// How long a message may take to reach its handler.
const ARRIVAL: Duration = Duration::from_secs(10);

/// Keeps the `data` of the log messages it is given.
#[derive(Default)]
struct Collect(Mutex<Vec<String>>);

impl LogHandler for Collect {
    fn log(&self, _origin: RequestOrigin, message: LoggingMessageNotificationParam) {
        let data = message.data.as_str().unwrap_or_default().to_owned();
        self.0.lock().unwrap().push(data);
    }
}

impl Collect {
    fn got(&self) -> Vec<String> {
        self.0.lock().unwrap().clone()
    }
}

/// late_asker.py over stdio, with the 1.x SDK (2025-11-25: a server logs
/// on its session, naming no request).
fn asker() -> ServerSpec {
    let python = deps().join("py1/bin/python").to_string_lossy().into_owned();
    ServerSpec::stdio(
        "asker",
        python,
        [test_server("late_asker.py"), "stdio".to_owned()],
    )
}

/// A pool over the asker whose own log handler is `pooled`.
fn pool_logging_to(pooled: &Arc<Collect>) -> Pool {
    pool_with(
        vec![asker()],
        PoolOptions {
            client_features: ClientFeatures {
                logs: Some(pooled.clone()),
                ..ClientFeatures::default()
            },
            ..PoolOptions::default()
        },
    )
}

/// The options of a call of a client of its own, logging to `handler`.
fn client(handler: &Arc<Collect>) -> CallOptions {
    CallOptions {
        client_features: Some(ClientFeatures {
            logs: Some(handler.clone()),
            client: Some(ClientFeatures::new_client()),
            ..ClientFeatures::default()
        }),
        timeout: Some(Duration::from_secs(60)),
        ..CallOptions::default()
    }
}

fn text(result: &CallToolResult) -> String {
    result
        .content
        .iter()
        .filter_map(|c| match c {
            ContentBlock::Text(t) => Some(t.text.clone()),
            _ => None,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

fn mkfifo(path: &Path) {
    let made = std::process::Command::new("mkfifo")
        .arg(path)
        .status()
        .expect("run mkfifo");
    assert!(made.success(), "mkfifo {}", path.display());
}

/// Which of `handlers` (by name) got `message`, once one did.
async fn who_got(message: &str, handlers: &[(&str, &Arc<Collect>)]) -> Vec<String> {
    let arrived = poll_async(ARRIVAL, || async {
        handlers
            .iter()
            .any(|(_, h)| h.got().iter().any(|m| m == message))
            .then_some(())
    })
    .await;
    assert!(arrived.is_some(), "{message:?} reached no handler");
    handlers
        .iter()
        .filter(|(_, h)| h.got().iter().any(|m| m == message))
        .map(|(name, _)| (*name).to_owned())
        .collect()
}

/// Client A's call is in flight; client B's call ends; the server then
/// logs for B naming no request. Before, the message went to A's handler,
/// A's call being the only one in flight (as issue 32's eighth finding for
/// requests): it goes to the pool's now, never to another client's call.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_late_log_message_never_goes_to_another_clients_call() {
    let home = tempdir();
    let fifo = home.path().join("go");
    mkfifo(&fifo);
    let (pooled, a, b): (Arc<Collect>, Arc<Collect>, Arc<Collect>) = Default::default();
    let pool = pool_logging_to(&pooled);
    let holding = {
        let (pool, options) = (pool.clone(), client(&a));
        let args = object_args(json!({ "fifo": fifo.to_string_lossy() }));
        tokio::spawn(async move { pool.call_tool("asker", "hold", args, options).await })
    };
    // log_late returns only once A's hold runs: A's call is in flight
    // while B's ends.
    let late = pool
        .call_tool("asker", "log_late", None, client(&b))
        .await
        .unwrap();
    assert_eq!(text(&late), "will log later");
    let writer = fifo.clone();
    tokio::task::spawn_blocking(move || std::fs::write(writer, b"go"))
        .await
        .unwrap()
        .expect("write the FIFO");
    let held = holding.await.unwrap().unwrap();
    assert_eq!(text(&held), "logged late");
    let got = who_got(
        "the late log of log_late's caller",
        &[("pool", &pooled), ("a", &a), ("b", &b)],
    )
    .await;
    assert_eq!(got, ["pool"]);
    pool.close_all().await;
}

/// Two calls in flight and a log message naming no request: it may be
/// either's, so it goes to the pool's handler, never to one of them.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_log_message_naming_no_request_with_two_calls_in_flight_goes_to_the_pools() {
    let home = tempdir();
    let fifo = home.path().join("go");
    mkfifo(&fifo);
    let (pooled, a, b): (Arc<Collect>, Arc<Collect>, Arc<Collect>) = Default::default();
    let pool = pool_logging_to(&pooled);
    let holding = {
        let (pool, options) = (pool.clone(), client(&a));
        let args = object_args(json!({ "fifo": fifo.to_string_lossy() }));
        tokio::spawn(async move { pool.call_tool("asker", "hold", args, options).await })
    };
    let args = object_args(json!({ "who": "b", "after_hold": true }));
    let logged = pool
        .call_tool("asker", "log_now", args, client(&b))
        .await
        .unwrap();
    assert_eq!(text(&logged), "logged");
    let got = who_got("log of b", &[("pool", &pooled), ("a", &a), ("b", &b)]).await;
    assert_eq!(got, ["pool"]);
    let writer = fifo.clone();
    tokio::task::spawn_blocking(move || std::fs::write(writer, b"go"))
        .await
        .unwrap()
        .expect("write the FIFO");
    let held = holding.await.unwrap().unwrap();
    assert_eq!(text(&held), "nothing was left to send");
    pool.close_all().await;
}

/// The one call in flight gets the log message its server sends just
/// before the answer, naming no request; the next, after it, too.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_one_call_in_flight_gets_the_log_message_sent_just_before_its_answer() {
    let (pooled, a): (Arc<Collect>, Arc<Collect>) = Default::default();
    let pool = pool_logging_to(&pooled);
    for round in 0..20 {
        let who = format!("a, round {round}");
        let args = object_args(json!({ "who": who }));
        let logged = pool
            .call_tool("asker", "log_now", args, client(&a))
            .await
            .unwrap();
        assert_eq!(text(&logged), "logged");
        let got = who_got(&format!("log of {who}"), &[("pool", &pooled), ("a", &a)]).await;
        assert_eq!(got, ["a"], "round {round}");
    }
    pool.close_all().await;
}
