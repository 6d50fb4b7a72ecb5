//! Call timeouts the pool keeps itself (see `pool::progress`): the config's
//! `timeout` is restarted by progress up to a total bound, a caller's
//! `--timeout` bounds the whole call (start included) whatever the progress,
//! and a call its caller gives up on is cancelled on the server.

use crate::common;

use std::time::Duration;

use common::*;
use serde_json::json;
use toolbridge::pool::{CallOptions, PoolError, PoolOptions};

#[tokio::test]
async fn progress_does_not_extend_a_call_past_the_total_bound() {
    // The config's `timeout` is a limit on silence: progress restarts it,
    // `max_total_call_time` bounds the whole.
    let mut spec = example("example");
    spec.timeout = Some(Duration::from_millis(300));
    let pool = pool_with(
        vec![spec],
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
            CallOptions::default(),
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

/// Regression (issue 11, item 1): `--timeout 1` on a tool that reports
/// progress every 100 ms for 5 s returned after 5 s with exit 0, because
/// progress restarted the timer. The caller's timeout is a bound.
#[tokio::test]
async fn a_callers_timeout_is_not_extended_by_progress() {
    let pool = pool(vec![example("example")]);
    pool.connect("example").await.expect("start");
    let started = std::time::Instant::now();
    let err = pool
        .call_tool(
            "example",
            "slow",
            args(json!({"ms": 5000})),
            CallOptions {
                timeout: Some(Duration::from_millis(500)),
                call_id: None,
                ..CallOptions::default()
            },
        )
        .await
        .expect_err("the caller's timeout must end the call");
    assert!(
        started.elapsed() < Duration::from_millis(2500),
        "took {:?}",
        started.elapsed()
    );
    match &err {
        PoolError::Timeout { after, .. } => assert_eq!(*after, Duration::from_millis(500)),
        other => panic!("expected a timeout, got {other}"),
    }
    pool.close_all().await;
}

/// `toolbridge call … --timeout 1`, the user's view of the same bound:
/// exit 4, long before the tool's 5 s of progress-reporting work end.
#[test]
fn call_with_timeout_1_on_a_5_s_tool_exits_4_within_the_second() {
    let home = tempdir();
    let out = common::run_measured(
        std::process::Command::new(toolbridge())
            .args(["call", "example", "slow", "--args", r#"{"ms":5000}"#])
            .args(["--timeout", "1"])
            .env_remove("TOOLBRIDGE_CONFIG")
            .env_remove("TOOLBRIDGE_LOG")
            .env("HOME", home.path())
            .env("XDG_CONFIG_HOME", home.path().join("config"))
            .env("XDG_CACHE_HOME", home.path().join("cache")),
    );
    assert_eq!(out.run.code, Some(4), "{}", out.run.stderr);
    assert!(
        out.elapsed < Duration::from_millis(3500),
        "exit after {:?}",
        out.elapsed
    );
    assert!(
        out.run.stderr.contains("timed out after 1 s"),
        "{}",
        out.run.stderr
    );
}

/// `--timeout` bounds the server's start too: a server that takes 30 s to
/// come up ends the call after the timeout, exit 4, and is not left running.
#[test]
fn call_timeout_bounds_the_servers_start() {
    let home = tempdir();
    let pid_file = home.path().join("pid");
    let server = home.path().join("sleepy.sh");
    script(
        &server,
        &format!(
            "echo $$ > {}\nsleep 30\nexec {} example-server",
            pid_file.display(),
            toolbridge()
        ),
    );
    let config = home.path().join("config.json");
    std::fs::write(
        &config,
        json!({ "mcpServers": { "sleepy": { "command": server } } }).to_string(),
    )
    .unwrap();
    let out = common::run_measured(
        std::process::Command::new(toolbridge())
            .arg("--config")
            .arg(&config)
            .args(["call", "sleepy", "hello", "--args", r#"{"name":"x"}"#])
            .args(["--timeout", "1"])
            .env_remove("TOOLBRIDGE_LOG")
            .env("HOME", home.path())
            .env("XDG_CONFIG_HOME", home.path().join("config"))
            .env("XDG_CACHE_HOME", home.path().join("cache")),
    );
    assert_eq!(out.run.code, Some(4), "{}", out.run.stderr);
    assert!(
        out.elapsed < Duration::from_millis(3500),
        "exit after {:?}",
        out.elapsed
    );
    assert!(
        out.run
            .stderr
            .contains("server \"sleepy\" did not start within 1 s"),
        "{}",
        out.run.stderr
    );
    let pid: u32 = std::fs::read_to_string(&pid_file)
        .expect("the server was started")
        .trim()
        .parse()
        .unwrap();
    assert!(
        wait_until(Duration::from_secs(5), || !alive(pid)),
        "the starting server outlived toolbridge"
    );
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

/// Issue 11, item 12: the server's progress notifications reach whoever
/// watches the server (the CLI shows them on a terminal).
#[tokio::test]
async fn progress_notifications_reach_a_watcher() {
    let pool = pool(vec![example("example")]);
    // Before the server is even started.
    let mut watch = pool.watch_progress("example").expect("a configured server");
    let result = pool
        .call_tool(
            "example",
            "slow",
            args(json!({"ms": 300})),
            CallOptions::default(),
        )
        .await
        .expect("slow 300");
    assert_eq!(result.is_error, Some(false));
    let mut seen = Vec::new();
    while let Ok(update) = watch.try_recv() {
        seen.push((update.progress, update.total));
    }
    assert_eq!(
        seen,
        [
            (100.0, Some(300.0)),
            (200.0, Some(300.0)),
            (300.0, Some(300.0))
        ]
    );
    pool.close_all().await;
}

/// Off a terminal (a pipe, a log file), `call` prints no progress: stderr
/// stays empty and stdout has the result only.
#[test]
fn call_prints_no_progress_when_stderr_is_not_a_terminal() {
    let home = tempdir();
    let out = std::process::Command::new(toolbridge())
        .args(["call", "example", "slow", "--args", r#"{"ms":400}"#])
        .env_remove("TOOLBRIDGE_CONFIG")
        .env_remove("TOOLBRIDGE_LOG")
        .env("HOME", home.path())
        .env("XDG_CONFIG_HOME", home.path().join("config"))
        .env("XDG_CACHE_HOME", home.path().join("cache"))
        .env("XDG_DATA_HOME", home.path().join("data"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(String::from_utf8_lossy(&out.stdout), "slept 400 ms\n");
    assert_eq!(String::from_utf8_lossy(&out.stderr), "");
}

/// On a terminal (a pseudo-terminal from util-linux's `script`), `call`
/// shows each progress notification on one rewritten stderr line, cleared
/// before the result.
#[test]
fn call_shows_progress_on_a_terminal() {
    let home = tempdir();
    let command = format!("{} call example slow --args '{{\"ms\":300}}'", toolbridge());
    let out = std::process::Command::new("script")
        .args(["-qec", &command, "/dev/null"])
        .env_remove("TOOLBRIDGE_CONFIG")
        .env_remove("TOOLBRIDGE_LOG")
        .env("HOME", home.path())
        .env("XDG_CONFIG_HOME", home.path().join("config"))
        .env("XDG_CACHE_HOME", home.path().join("cache"))
        .env("XDG_DATA_HOME", home.path().join("data"))
        .stdin(std::process::Stdio::null())
        .output()
        .expect("util-linux script");
    let screen = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{screen}");
    // The last notification comes with the result: whether it is drawn
    // before the line is cleared is a race nobody sees, so only the first
    // and the result are required, in that order.
    let first = screen.find("\r\x1b[2Kprogress: 100/300 (33%)");
    let result = screen.find("\r\x1b[2Kslept 300 ms");
    assert!(
        first.is_some() && result.is_some() && first < result,
        "{screen:?}"
    );
}

/// Issue 11 item 10: a server's `startupTimeout` in the config bounds its
/// start; past it, `call` exits 4 naming the server and the limit (the
/// pool's own default is 60 s).
#[test]
fn a_configs_startup_timeout_ends_a_hung_start_with_exit_4() {
    let sandbox = Sandbox::new();
    sandbox.write_config(&json!({ "mcpServers": { "hung": {
        "command": python(),
        "args": [test_server("start_faults.py"), "hang-at-start"],
        "startupTimeout": 1,
    } } }));
    let started = std::time::Instant::now();
    let run = sandbox.run_with(&["call", "hung", "echo"], |command| {
        command
            .env("XDG_CACHE_HOME", sandbox.dir.path().join("cache"))
            .env("XDG_DATA_HOME", sandbox.dir.path().join("data"));
    });
    assert_eq!(run.code, Some(4), "{run:?}");
    assert!(
        run.stderr.contains("\"hung\"") && run.stderr.contains("within 1 s"),
        "{}",
        run.stderr
    );
    assert!(started.elapsed() < Duration::from_secs(30), "{run:?}");
}

/// Regression (issue 24, item 8): `call ... --timeout 3` on server-
/// everything's long-running tool exited after 6 s: the call ended at 3 s,
/// then closing waited 3 s more for the server, busy with the cancelled
/// call, to exit on its stdin closing. The whole command is bounded; the
/// server is killed, not left behind.
#[test]
fn call_timeout_bounds_closing_a_server_busy_with_the_call() {
    let home = tempdir();
    let pid_file = home.path().join("pid");
    let server = home.path().join("everything.sh");
    script(
        &server,
        &format!(
            "echo $$ > {}\nexec node {} stdio",
            pid_file.display(),
            everything_js().display()
        ),
    );
    let config = home.path().join("config.json");
    std::fs::write(
        &config,
        json!({ "mcpServers": { "everything": { "command": server } } }).to_string(),
    )
    .unwrap();
    let out = common::run_measured(
        std::process::Command::new(toolbridge())
            .arg("--config")
            .arg(&config)
            .args(["call", "everything", "trigger-long-running-operation"])
            .args([
                "--args",
                r#"{"duration": 30, "steps": 30}"#,
                "--timeout",
                "2",
            ])
            .env_remove("TOOLBRIDGE_LOG")
            .env("HOME", home.path())
            .env("XDG_CONFIG_HOME", home.path().join("config"))
            .env("XDG_CACHE_HOME", home.path().join("cache")),
    );
    assert_eq!(out.run.code, Some(4), "{}", out.run.stderr);
    assert!(
        out.run.stderr.contains("timed out after 2 s"),
        "{}",
        out.run.stderr
    );
    // 2 s and the close, not 2 s and the 3 s stdin grace (5 s).
    assert!(
        out.elapsed < Duration::from_millis(4000),
        "exit after {:?}",
        out.elapsed
    );
    let pid: u32 = std::fs::read_to_string(&pid_file)
        .expect("the server was started")
        .trim()
        .parse()
        .unwrap();
    assert!(
        wait_until(Duration::from_secs(5), || !alive(pid)),
        "the busy server outlived toolbridge"
    );
}
