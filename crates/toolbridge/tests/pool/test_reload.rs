//! `Pool::reload` against real processes: an unchanged server keeps its
//! process and the call in flight on it, a changed one restarts with its new
//! spec, a removed one's process is gone, an added one is callable, and every
//! server, old or new, shares the one `max_parallel_starts`.

use crate::common;

use std::path::Path;

use common::{SOON, fixtures::*};
use serde_json::json;
use toolbridge::{
    config::ServerSpec,
    pool::{CallOptions, Changes, PoolError, PoolOptions},
};

/// The example server, started through `sh`, which notes its pid in
/// `pid_file` (as [`example_noting_pid`]) and says `hello` as `greeting`:
/// two of these with different greetings are different specs (other args).
fn noting_pid(name: &str, pid_file: &Path, greeting: &str) -> ServerSpec {
    let script = format!(
        "echo $$ >> '{}' && exec '{}'",
        pid_file.display(),
        example_server()
    );
    ServerSpec::stdio(name, "sh", ["-c".to_owned(), script, greeting.to_owned()])
}

/// The one pid noted in `pid_file` (the server started once).
fn only_pid(pid_file: &Path) -> u32 {
    let pids = read_pids(pid_file);
    assert_eq!(pids.len(), 1, "started {} times: {pids:?}", pids.len());
    pids[0]
}

async fn echo(pool: &toolbridge::pool::Pool, server: &str) -> Result<String, PoolError> {
    let result = pool
        .call_tool(
            server,
            "echo",
            object_args(json!({"text": server})),
            CallOptions::default(),
        )
        .await?;
    Ok(result
        .content
        .iter()
        .filter_map(|c| c.as_text().map(|t| t.text.clone()))
        .collect())
}

#[tokio::test]
async fn an_unchanged_server_keeps_its_process_and_its_call_in_flight() {
    let dir = tempdir();
    let (kept_pids, other_pids) = (dir.path().join("kept"), dir.path().join("other"));
    let kept = noting_pid("kept", &kept_pids, "a");
    let pool = pool(vec![kept.clone(), noting_pid("other", &other_pids, "a")]);
    pool.connect("kept").await.expect("kept starts");
    pool.connect("other").await.expect("other starts");
    let pid = only_pid(&kept_pids);
    let info = pool.connection_info("kept");

    // A slow call in flight on `kept` (its first progress says it runs).
    let mut progress = pool.watch_progress("kept").expect("watch");
    let call = tokio::spawn({
        let pool = pool.clone();
        async move {
            pool.call_tool(
                "kept",
                "slow",
                object_args(json!({"ms": 1500})),
                CallOptions::default(),
            )
            .await
        }
    });
    tokio::time::timeout(SOON, progress.recv())
        .await
        .expect("the slow call reports progress")
        .expect("progress");

    let changes = pool
        .reload(vec![kept.clone(), noting_pid("other", &other_pids, "b")])
        .await;
    assert_eq!(
        changes,
        Changes {
            changed: vec!["other".to_owned()],
            ..Changes::default()
        }
    );
    assert!(!call.is_finished(), "the reload waited for the slow call");
    let result = call.await.expect("task").expect("the slow call completes");
    assert_ne!(result.is_error, Some(true), "{result:?}");
    assert_eq!(only_pid(&kept_pids), pid, "kept was started again");
    assert!(alive(pid));
    assert_eq!(pool.connection_info("kept"), info);

    // The same specs again change nothing.
    let again = pool
        .reload(vec![kept, noting_pid("other", &other_pids, "b")])
        .await;
    assert!(again.is_empty(), "{again:?}");
    assert_eq!(
        read_pids(&other_pids).len(),
        1,
        "nothing restarted other yet"
    );
    pool.close_all().await;
}

#[tokio::test]
async fn a_changed_server_restarts_with_its_new_spec_and_caches() {
    let dir = tempdir();
    let (before, after) = (dir.path().join("before"), dir.path().join("after"));
    let pool = pool(vec![noting_pid("s", &before, "a")]);
    let tools = pool.list_server_tools("s").await.expect("tools");
    assert!(tools.iter().any(|t| t.name == "echo"), "{tools:?}");
    let old_pid = only_pid(&before);

    // New args (another pid file), and `echo` disabled.
    let mut changed = noting_pid("s", &after, "b");
    changed.disabled_tools = vec!["echo".to_owned()];
    let changes = pool.reload(vec![changed.clone()]).await;
    assert_eq!(changes.changed, ["s"]);
    assert!(
        wait_until(SOON, || !alive(old_pid)),
        "the old process {old_pid} still runs"
    );
    assert_eq!(pool.spec("s"), Some(changed));
    // Its cached list is gone with the old entry: listed again, by the new
    // process, under the new spec.
    let tools = pool.list_server_tools("s").await.expect("tools");
    assert!(tools.iter().all(|t| t.name != "echo"), "{tools:?}");
    assert!(tools.iter().any(|t| t.name == "hello"), "{tools:?}");
    let new_pid = only_pid(&after);
    assert!(alive(new_pid));
    assert_eq!(read_pids(&before), [old_pid], "the old spec started again");
    let err = echo(&pool, "s").await.expect_err("echo is disabled now");
    assert!(matches!(err, PoolError::ToolDisabled { .. }), "{err}");
    pool.close_all().await;
}

#[tokio::test]
async fn a_removed_server_is_stopped_and_an_added_one_is_callable() {
    let dir = tempdir();
    let pids = dir.path().join("pids");
    let pool = pool(vec![noting_pid("old", &pids, "a")]);
    assert_eq!(echo(&pool, "old").await.expect("old answers"), "old");
    let pid = only_pid(&pids);

    let changes = pool.reload(vec![example("new")]).await;
    assert_eq!(
        changes,
        Changes {
            added: vec!["new".to_owned()],
            removed: vec!["old".to_owned()],
            changed: vec![],
        }
    );
    assert!(
        wait_until(SOON, || !alive(pid)),
        "the removed server's process {pid} still runs"
    );
    assert_eq!(pool.server_names(), ["new"]);
    let err = echo(&pool, "old").await.expect_err("old is gone");
    assert!(matches!(err, PoolError::UnknownServer { .. }), "{err}");
    assert_eq!(echo(&pool, "new").await.expect("new answers"), "new");
    pool.close_all().await;
}

#[tokio::test]
async fn a_server_removed_while_it_starts_leaves_no_process() {
    let dir = tempdir();
    let pids = dir.path().join("pids");
    // It notes its pid, then takes 2 s before it is the server.
    let script = format!(
        "echo $$ >> '{}' && sleep 2 && exec '{}'",
        pids.display(),
        example_server()
    );
    let slow = ServerSpec::stdio("slow", "sh", ["-c".to_owned(), script]);
    let pool = pool(vec![slow]);
    let start = tokio::spawn({
        let pool = pool.clone();
        async move { pool.connect("slow").await }
    });
    let noted = || std::fs::read_to_string(&pids).is_ok_and(|s| !s.trim().is_empty());
    let started = poll_async(SOON, || async { noted().then_some(()) }).await;
    assert!(started.is_some(), "the server never started");
    let pid = only_pid(&pids);

    let changes = pool.reload(Vec::new()).await;
    assert_eq!(changes.removed, ["slow"]);
    let err = start
        .await
        .expect("task")
        .expect_err("a start under way when its server is removed fails");
    assert!(matches!(err, PoolError::Reloaded { .. }), "{err}");
    assert!(err.to_string().contains("\"slow\""), "{err}");
    assert!(
        wait_until(SOON, || !alive(pid)),
        "the removed server's process {pid} still runs"
    );
    assert!(pool.running_server_names().is_empty());
}

#[tokio::test]
async fn servers_added_by_a_reload_share_the_pools_parallel_start_limit() {
    let dir = tempdir();
    let log = dir.path().join("starts");
    // Each start notes `+` as it begins and `-` 200 ms later, just before it
    // becomes the server (whose handshake is still part of the start).
    let starting = |name: &str| {
        let script = format!(
            "echo + >> '{log}' && sleep 0.2 && echo - >> '{log}' && exec '{server}'",
            log = log.display(),
            server = example_server()
        );
        ServerSpec::stdio(name, "sh", ["-c".to_owned(), script])
    };
    let options = PoolOptions {
        max_parallel_starts: 1,
        ..PoolOptions::default()
    };
    let pool = pool_with(vec![starting("a"), starting("b")], options);
    let changes = pool
        .reload(vec![
            starting("a"),
            starting("b"),
            starting("c"),
            starting("d"),
        ])
        .await;
    assert_eq!(changes.added, ["c", "d"]);
    let reports = pool.connect_all(|_| {}).await;
    for report in &reports {
        assert!(
            report.result.is_ok(),
            "{}: {:?}",
            report.server,
            report.result
        );
    }
    let marks: String = std::fs::read_to_string(&log)
        .expect("the starts' log")
        .split_whitespace()
        .collect();
    assert_eq!(marks, "+-".repeat(4), "starts overlapped");
    pool.close_all().await;
}
