//! The connection pool against real processes: the example server, servers
//! written with the Python SDK and server-everything, and misbehaving ones.
//! (What dropping a pool does is in `test_pool_drop.rs`.)

use crate::common;

use std::{sync::Arc, time::Duration};

use common::fixtures::*;
use futures::future::join_all;
use serde_json::json;
use toolbridge::{
    config::{TransportKind, TransportSpec},
    pool::{CallOptions, PoolError, ServerStatus},
    rmcp_model::{CallToolResult, ContentBlock},
};

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

fn timeout(d: Duration) -> CallOptions {
    CallOptions {
        timeout: Some(d),
        call_id: None,
        ..CallOptions::default()
    }
}

#[tokio::test]
async fn sixty_four_concurrent_calls_each_get_their_own_result() {
    let pool = pool(vec![example("example")]);
    let calls = (0..64).map(|i| {
        let pool = pool.clone();
        async move {
            let sent = format!("message number {i} {}", "x".repeat(100));
            let result = pool
                .call_tool(
                    "example",
                    "echo",
                    object_args(json!({ "text": sent })),
                    CallOptions::default(),
                )
                .await
                .expect("echo call");
            (sent, text(&result))
        }
    });
    for (sent, got) in join_all(calls).await {
        assert_eq!(sent, got);
    }
    pool.close_all().await;
}

#[tokio::test]
async fn a_hanging_call_times_out_and_the_server_is_told_to_cancel() {
    let dir = tempdir();
    let log = dir.path().join("cancelled.log");
    let log_str = log.to_string_lossy().into_owned();
    let pool = pool(vec![misbehave("hang", "hang", &[("CANCEL_LOG", &log_str)])]);
    // Started first: the 300 ms are the call's, not a start's on a busy
    // machine (a start within the bound is `test_startup_timeout`'s matter).
    pool.connect("hang").await.expect("the server starts");
    let err = pool
        .call_tool(
            "hang",
            "echo",
            object_args(json!({"text": "hi"})),
            timeout(Duration::from_millis(300)),
        )
        .await
        .expect_err("the call must time out");
    assert!(matches!(err, PoolError::Timeout { .. }), "{err}");
    assert!(err.to_string().contains("\"hang\""), "{err}");
    assert!(
        wait_until(Duration::from_secs(5), || std::fs::read_to_string(&log)
            .is_ok_and(|s| !s.is_empty())),
        "the server never received notifications/cancelled"
    );
    let cancelled: serde_json::Value = serde_json::from_str(
        std::fs::read_to_string(&log)
            .unwrap()
            .lines()
            .next()
            .unwrap(),
    )
    .unwrap();
    assert!(cancelled.get("requestId").is_some(), "{cancelled}");
    // The connection is still usable after the timeout.
    let before = pool.connection_info("hang").expect("still connected");
    let tools = pool
        .list_server_tools("hang")
        .await
        .expect("list after timeout");
    assert_eq!(tools.len(), 2);
    assert_eq!(pool.connection_info("hang"), Some(before));
    pool.close_all().await;
}

#[tokio::test]
async fn a_server_killed_mid_call_fails_the_call_at_once_with_its_stderr() {
    let pool = pool(vec![misbehave("crashy", "crash", &[])]);
    // The call's own timeout is two minutes; the crash must be reported long before.
    let call = pool.call_tool(
        "crashy",
        "echo",
        object_args(json!({"text": "hi"})),
        timeout(Duration::from_secs(120)),
    );
    let err = tokio::time::timeout(Duration::from_secs(30), call)
        .await
        .expect("a crash must not wait for the call timeout")
        .expect_err("the call must fail");
    assert!(matches!(err, PoolError::Exited { .. }), "{err}");
    let message = err.to_string();
    assert!(
        message.contains("server \"crashy\" exited with status 3"),
        "{message}"
    );
    assert!(message.contains("boom: crashing on purpose"), "{message}");
    // The next use starts the server again.
    let info = pool
        .connect("crashy")
        .await
        .expect("restart after the crash");
    assert_eq!(info.server_name, "misbehave-crash");
    pool.close_all().await;
}

#[tokio::test]
async fn a_server_that_stops_reading_fails_calls_instead_of_leaving_them_to_time_out() {
    let pool = pool(vec![misbehave("deaf", "deaf", &[])]);
    // Listing makes the server close its stdin; it stays alive, stdout open.
    let tools = pool.list_server_tools("deaf").await.expect("list");
    assert_eq!(tools[0].name, "echo");
    let call = pool.call_tool(
        "deaf",
        "echo",
        object_args(json!({"text": "hi"})),
        timeout(Duration::from_secs(120)),
    );
    let err = tokio::time::timeout(Duration::from_secs(30), call)
        .await
        .expect("a server that cannot be written to must not wait for the call timeout")
        .expect_err("the call must fail");
    assert!(!err.is_timeout(), "{err}");
    let message = err.to_string();
    assert!(message.contains("server \"deaf\""), "{message}");
    pool.close_all().await;
}

#[tokio::test]
async fn a_server_that_exits_at_start_shows_what_it_said() {
    let pool = pool(vec![misbehave("nokey", "die-at-start", &[])]);
    let err = pool.connect("nokey").await.expect_err("must fail to start");
    let message = err.to_string();
    assert!(message.contains("server \"nokey\""), "{message}");
    assert!(message.contains("EXAMPLE_API_KEY is not set"), "{message}");
}

#[tokio::test]
async fn non_json_lines_on_stdout_are_skipped() {
    let pool = pool(vec![misbehave("noisy", "garbage", &[])]);
    let tools = pool
        .list_server_tools("noisy")
        .await
        .expect("list despite noise");
    assert_eq!(tools[0].name, "echo");
    let result = pool
        .call_tool(
            "noisy",
            "echo",
            object_args(json!({"text": "clean"})),
            CallOptions::default(),
        )
        .await
        .expect("call despite noise");
    assert_eq!(text(&result), "clean");
    pool.close_all().await;
}

#[tokio::test]
async fn close_all_leaves_no_process_of_the_tree() {
    let dir = tempdir();
    let pid_file = dir.path().join("pids");
    let pool = pool(vec![process_tree("tree", &pid_file)]);
    pool.connect("tree").await.expect("start");
    let pids = read_pids(&pid_file);
    let (pgid, python_pid, sleep_pid) = (pids[0], pids[1], pids[2]);
    assert!(alive(sleep_pid));
    pool.close_all().await;
    let gone = || tree_gone(pgid, &[python_pid, sleep_pid]);
    assert!(
        wait_until(Duration::from_secs(2), gone),
        "processes of the server tree survived close_all"
    );
}

#[tokio::test]
async fn a_hanging_server_does_not_slow_another() {
    let pool = pool(vec![misbehave("stuck", "hang", &[]), example("quick")]);
    let hanging = pool.call_tool(
        "stuck",
        "echo",
        object_args(json!({"text": "x"})),
        timeout(Duration::from_secs(60)),
    );
    let quick = async {
        for i in 0..20 {
            let result = pool
                .call_tool(
                    "quick",
                    "hello",
                    object_args(json!({"name": i.to_string()})),
                    CallOptions::default(),
                )
                .await
                .expect("quick call");
            assert_eq!(text(&result), format!("Hello, {i}!"));
        }
    };
    tokio::select! {
        _ = quick => {}
        r = hanging => panic!("the hanging call finished first: {r:?}"),
    }
    pool.close_all().await;
}

#[tokio::test]
async fn progress_restarts_the_call_timer() {
    // The config's `timeout` is restarted by progress (a caller's explicit
    // timeout is a bound instead: see call_deadlines.rs in the CLI).
    let mut spec = example("example");
    spec.timeout = Some(Duration::from_millis(300));
    let pool = pool(vec![spec]);
    // 600 ms of work with a 300 ms timeout: progress every 100 ms keeps it alive.
    let result = pool
        .call_tool(
            "example",
            "slow",
            object_args(json!({"ms": 600})),
            CallOptions::default(),
        )
        .await
        .expect("progress must restart the timer");
    assert_eq!(text(&result), "slept 600 ms");
    pool.close_all().await;
}

#[tokio::test]
async fn unknown_and_disabled_servers_are_named() {
    let mut off = example("off");
    off.disabled = true;
    let pool = pool(vec![example("example"), off]);
    let err = pool.list_server_tools("nope").await.unwrap_err();
    assert!(err.is_usage());
    assert!(err.to_string().contains("unknown server \"nope\""), "{err}");
    assert!(err.to_string().contains("example, off"), "{err}");
    let err = pool.connect("off").await.unwrap_err();
    assert!(
        err.to_string().contains("server \"off\" is disabled"),
        "{err}"
    );
    assert_eq!(pool.active_server_names(), vec!["example".to_owned()]);
}

#[tokio::test]
async fn a_missing_command_says_what_to_install() {
    let pool = pool(vec![toolbridge::config::ServerSpec::stdio(
        "time",
        "uvx-not-installed-here",
        ["x"],
    )]);
    let err = pool.connect("time").await.unwrap_err();
    let message = err.to_string();
    assert!(
        message.contains("server \"time\": command \"uvx-not-installed-here\" not found on PATH"),
        "{message}"
    );
    assert!(message.contains("toolbridge doctor"), "{message}");
}

#[tokio::test]
async fn protocol_versions_are_negotiated_with_modern_and_legacy_servers() {
    let pool = pool(vec![example("modern"), misbehave("legacy", "garbage", &[])]);
    let modern = pool.connect("modern").await.unwrap();
    assert_eq!(modern.protocol_version, "2026-07-28");
    assert_eq!(modern.server_name, "toolbridge-example");
    let legacy = pool.connect("legacy").await.unwrap();
    assert_eq!(legacy.protocol_version, "2025-11-25");
    pool.close_all().await;
}

#[tokio::test]
async fn the_python_sdk_server_lists_and_calls_over_stdio() {
    let pool = pool(vec![python_sdk("py")]);
    let tools = pool.list_server_tools("py").await.expect("list");
    let mut names: Vec<&str> = tools.iter().map(|t| t.name.as_str()).collect();
    names.sort();
    assert_eq!(names, ["add", "chatty", "echo", "fail", "image"]);
    assert_eq!(tools[0].id, format!("mcp__py__{}", tools[0].name));
    let result = pool
        .call_tool(
            "py",
            "echo",
            object_args(json!({"text": "from rust"})),
            CallOptions::default(),
        )
        .await
        .unwrap();
    assert_eq!(text(&result), "from rust");
    let result = pool
        .call_tool("py", "image", None, CallOptions::default())
        .await
        .unwrap();
    assert!(matches!(&result.content[0], ContentBlock::Image(i) if i.mime_type == "image/png"));
    let result = pool
        .call_tool(
            "py",
            "fail",
            object_args(json!({"message": "nope"})),
            CallOptions::default(),
        )
        .await
        .unwrap();
    assert_eq!(result.is_error, Some(true));
    assert!(text(&result).contains("nope"), "{result:?}");
    pool.close_all().await;
}

#[tokio::test]
async fn server_everything_lists_and_calls_over_stdio() {
    let pool = pool(vec![everything_stdio("everything")]);
    let tools = pool.list_server_tools("everything").await.expect("list");
    assert!(
        tools.iter().any(|t| t.name == "echo"),
        "{:?}",
        tools.iter().map(|t| &t.name).collect::<Vec<_>>()
    );
    let result = pool
        .call_tool(
            "everything",
            "echo",
            object_args(json!({"message": "hi"})),
            CallOptions::default(),
        )
        .await
        .unwrap();
    assert_eq!(text(&result), "Echo: hi");
    pool.close_all().await;
}

#[tokio::test]
async fn the_tool_cache_is_dropped_when_the_server_says_the_list_changed() {
    let pool = pool(vec![misbehave("growing", "normal", &[])]);
    let before = pool.list_server_tools("growing").await.unwrap();
    assert_eq!(before.len(), 2);
    // Cached: the same list without asking the server again.
    assert!(Arc::ptr_eq(
        &before,
        &pool.list_server_tools("growing").await.unwrap()
    ));
    let result = pool
        .call_tool("growing", "grow", None, CallOptions::default())
        .await
        .unwrap();
    assert_eq!(text(&result), "grown_1");
    // The notification is handled on its own task: poll, with a deadline.
    let pool_ref = &pool;
    let after = poll_async(Duration::from_secs(5), move || async move {
        let names: Vec<String> = pool_ref
            .list_server_tools("growing")
            .await
            .unwrap()
            .iter()
            .map(|t| t.name.clone())
            .collect();
        (names.len() == 3).then_some(names)
    })
    .await;
    assert_eq!(
        after,
        Some(vec![
            "echo".to_owned(),
            "grow".to_owned(),
            "grown_1".to_owned()
        ]),
        "the cached tool list was never refreshed"
    );
    pool.close_all().await;
}

/// Regression (issue 10, defect 1): when a crashed server's report arrived
/// late (the pool waits up to 500 ms for its last stderr lines), a call made
/// meanwhile started a new connection, which the late report then removed
/// and counted as the crash, so the next use started the server yet again.
#[tokio::test]
async fn a_crash_reported_late_does_not_remove_the_connection_that_replaced_it() {
    let dir = tempdir();
    // The crashed server hands its stderr to this process, which the test
    // started: no server's group or tree holds it, so closing the crashed
    // server cannot end it (an orphan of the server's own could be found
    // and killed on the way, and that close then waited on the frozen
    // clock below).
    let socket = dir.path().join("hold.sock");
    let mut holder = std::process::Command::new(python())
        .arg(test_server("fd_holder.py"))
        .arg(&socket)
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("start fd_holder.py");
    let holder_pid = KillOnDrop(holder.id());
    let mut ready = String::new();
    std::io::BufRead::read_line(
        &mut std::io::BufReader::new(holder.stdout.take().expect("holder stdout")),
        &mut ready,
    )
    .expect("fd_holder.py says it is ready");
    assert_eq!(ready.trim(), "ready");
    let (logs, _capture) = Logs::capture();
    let socket = socket.to_string_lossy().into_owned();
    let pool = pool(vec![misbehave(
        "flaky",
        "crash,stderr-held",
        &[("HOLD_SOCKET", &socket)],
    )]);
    pool.connect("flaky").await.expect("first start");

    // Freeze the clock (a blocking task stops paused time from advancing by
    // itself): the pool's wait for the crashed server's stderr then lasts
    // until that stderr closes, held open by fd_holder.py.
    let (thaw, frozen) = std::sync::mpsc::channel::<()>();
    let freezer = tokio::task::spawn_blocking(move || frozen.recv());
    tokio::time::pause();

    let err = pool
        .call_tool(
            "flaky",
            "echo",
            object_args(json!({"text": "x"})),
            CallOptions::default(),
        )
        .await
        .expect_err("the server crashes");
    assert!(matches!(err, PoolError::Exited { .. }), "{err}");
    // The crash is not fully reported yet; a use now starts the server again.
    let replacement = pool.connect("flaky").await.expect("restart");

    // Let the report finish: stderr closes, time runs again.
    drop(holder_pid);
    let _ = holder.wait();
    tokio::time::resume();
    thaw.send(()).expect("freezer waiting");
    freezer.await.expect("freezer").expect("thawed");
    assert!(
        logs.wait_for("stderr before the server ended", Duration::from_secs(20))
            .await,
        "the crash was never reported:\n{}",
        logs.text()
    );
    assert_eq!(
        pool.connection_info("flaky"),
        Some(replacement),
        "the late crash report removed the connection that replaced the crashed one"
    );
    pool.close_all().await;
}

/// Regression (issue 10, defect 9): a listing that timed out was reported as
/// cancelled on the server, which only happens to calls.
#[tokio::test]
async fn a_listing_that_times_out_does_not_claim_the_server_was_told_to_cancel() {
    let mut spec = misbehave("mute", "hang-list", &[]);
    spec.timeout = Some(Duration::from_millis(300));
    let pool = pool(vec![spec]);
    let err = pool
        .list_server_tools("mute")
        .await
        .expect_err("the listing must time out");
    assert!(err.is_timeout(), "{err}");
    let message = err.to_string();
    assert!(
        message.starts_with("listing tools on server \"mute\" timed out after 0.3 s"),
        "{message}"
    );
    assert!(!message.contains("cancel"), "{message}");
    // The connection is still usable.
    assert!(pool.connection_info("mute").is_some());
    pool.close_all().await;
}

/// Logs name the server, the tool and the call (issue 10, defect 9), and
/// never carry a server's secrets.
#[tokio::test]
async fn logs_name_the_server_the_tool_and_the_call_but_no_secret() {
    const SECRET: &str = "sk-do-not-log-0123456789";
    let (logs, _capture) = Logs::capture();
    let mut local = example("local");
    if let TransportSpec::Stdio(stdio) = &mut local.transport {
        stdio.env.insert("API_KEY".into(), SECRET.into());
    }
    let port = common::closed_port().await;
    let mut remote = common::remote(
        TransportKind::Http,
        &format!("http://127.0.0.1:{port}/mcp"),
        &[("Authorization", &format!("Bearer {SECRET}"))],
    );
    remote.name = "remote".into();
    let pool = pool(vec![local, remote]);
    let options = CallOptions {
        timeout: None,
        call_id: Some("call_abc".into()),
        ..CallOptions::default()
    };
    pool.call_tool(
        "local",
        "hello",
        object_args(json!({"name": "Ada"})),
        options,
    )
    .await
    .expect("call");
    pool.list_server_tools("local").await.expect("list");
    pool.call_tool(
        "local",
        "echo",
        object_args(json!({"text": "x"})),
        CallOptions::default(),
    )
    .await
    .expect("call without an id");
    let _ = pool
        .connect("remote")
        .await
        .expect_err("nothing listens there");
    pool.close_all().await;

    let text = logs.text();
    assert!(text.contains("mcp_server{server=\"local\"}"), "{text}");
    assert!(
        text.contains("tool_call{server=\"local\" tool=\"hello\" call_id=call_abc}"),
        "{text}"
    );
    assert!(
        text.contains("tool_call{server=\"local\" tool=\"echo\" call_id=#"),
        "{text}"
    );
    assert!(text.contains("list_tools{server=\"local\"}"), "{text}");
    // The connection outlives the call that started it: its span is its own.
    assert!(!text.contains("call_id=call_abc}:mcp_server"), "{text}");
    assert!(!text.contains(SECRET), "a secret reached the logs:\n{text}");
}

#[tokio::test]
async fn any_request_goes_through_the_pool_and_an_unknown_method_names_the_server() {
    use toolbridge::rmcp_model::{ClientRequest, PingRequest, ServerResult};
    let pool = pool(vec![example("example")]);
    let answer = pool
        .request(
            "example",
            ClientRequest::PingRequest(PingRequest::default()),
            &CallOptions::default(),
        )
        .await
        .expect("ping");
    assert!(matches!(answer, ServerResult::EmptyResult(_)), "{answer:?}");
    // The example server offers no prompts: its refusal is the server's.
    let refused = pool
        .request(
            "example",
            ClientRequest::ListPromptsRequest(Default::default()),
            &CallOptions::default(),
        )
        .await
        .expect_err("the example server has no prompts");
    assert!(matches!(refused, PoolError::Server { .. }), "{refused:?}");
    assert!(refused.to_string().contains("example"), "{refused}");
    pool.close_all().await;
}

#[tokio::test]
async fn the_status_says_since_when_a_server_runs_and_why_it_stopped() {
    let pool = pool(vec![misbehave("crashy", "crash", &[])]);
    assert_eq!(pool.status("crashy"), Some(ServerStatus::Stopped));
    assert_eq!(pool.status("nobody"), None);
    let before = std::time::SystemTime::now();
    pool.connect("crashy").await.expect("start");
    match pool.status("crashy") {
        Some(ServerStatus::Running { info, since }) => {
            assert_eq!(info.server_name, "misbehave-crash");
            assert!(since >= before, "{since:?} is before the start");
        }
        other => panic!("not running: {other:?}"),
    }
    let call = pool.call_tool(
        "crashy",
        "echo",
        object_args(json!({"text": "hi"})),
        timeout(Duration::from_secs(120)),
    );
    call.await.expect_err("the server crashes");
    let failed = poll_async(Duration::from_secs(30), || async {
        match pool.status("crashy") {
            Some(ServerStatus::Failed(failure)) => Some(failure),
            _ => None,
        }
    })
    .await
    .expect("the crash shows as failed");
    assert!(failed.error.contains("server \"crashy\""), "{failed:?}");
    assert!(
        failed
            .stderr
            .as_deref()
            .is_some_and(|s| s.contains("boom: crashing on purpose")),
        "{failed:?}"
    );
    // A new start clears the failure.
    pool.connect("crashy").await.expect("restart");
    assert!(
        matches!(pool.status("crashy"), Some(ServerStatus::Running { .. })),
        "{:?}",
        pool.status("crashy")
    );
    pool.close_all().await;
    assert_eq!(pool.status("crashy"), Some(ServerStatus::Stopped));
}
