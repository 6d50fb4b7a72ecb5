//! Descendants that leave a server's process group (issue 16, item 10): a
//! daemon that double-forks and calls `setsid()` is out of reach of a signal
//! to the group, and used to survive every way a server was stopped.

#![cfg(target_os = "linux")]

use crate::common;

use std::{path::Path, time::Duration};

use common::fixtures::*;
use serde_json::json;
use toolbridge::{config::ServerSpec, pool::CallOptions};

/// A server whose daemon (in a session of its own) writes its pid to
/// `pid_file`, at start or on the `escape` call (`when`).
fn escaping(name: &str, when: &str, pid_file: &Path) -> ServerSpec {
    let mut spec = ServerSpec::stdio(name, python(), [test_server("escape.py"), when.to_owned()]);
    if let toolbridge::config::TransportSpec::Stdio(stdio) = &mut spec.transport {
        stdio.env.insert(
            "PID_FILE".to_owned(),
            pid_file.to_string_lossy().into_owned(),
        );
    }
    spec
}

/// The daemon's pid, once it has written it.
fn daemon_pid(pid_file: &Path) -> u32 {
    assert!(
        wait_until(SOON, || pid_file.exists()),
        "the server's daemon never started"
    );
    let pid = read_pids(pid_file)[0];
    assert!(alive(pid));
    pid
}

/// The session of process `pid` (field 6 of /proc/PID/stat).
fn session_of(pid: u32) -> u32 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).expect("stat");
    let rest = &stat[stat.rfind(')').expect("comm") + 1..];
    rest.split_whitespace()
        .nth(3)
        .expect("session")
        .parse()
        .expect("number")
}

const SOON: Duration = Duration::from_secs(20);

/// Regression: a daemon that left the server's group and session survived
/// `close_all` (the group was killed; the daemon was not in it).
#[tokio::test]
async fn closing_a_server_kills_its_daemon_in_another_session() {
    let dir = tempdir();
    let pid_file = dir.path().join("daemon");
    let pool = pool(vec![escaping("esc", "start", &pid_file)]);
    pool.connect("esc").await.expect("start");
    let daemon = KillOnDrop(daemon_pid(&pid_file));
    assert_ne!(
        session_of(daemon.0),
        session_of(std::process::id()),
        "the daemon must be in a session of its own"
    );
    pool.close_all().await;
    assert!(
        wait_until(SOON, || !alive(daemon.0)),
        "the daemon survived the server's close"
    );
}

/// The same when the daemon starts during a call, long after the server
/// started, and the server exits by itself as soon as its stdin closes (so
/// the daemon is orphaned before any signal is sent).
#[tokio::test]
async fn a_daemon_started_by_a_call_dies_with_a_server_that_exits_on_eof() {
    let dir = tempdir();
    let pid_file = dir.path().join("daemon");
    let pool = pool(vec![escaping("esc", "call", &pid_file)]);
    pool.call_tool(
        "esc",
        "escape",
        object_args(json!({})),
        CallOptions::default(),
    )
    .await
    .expect("escape");
    let daemon = KillOnDrop(daemon_pid(&pid_file));
    pool.close_all().await;
    assert!(
        wait_until(SOON, || !alive(daemon.0)),
        "the daemon survived the server's close"
    );
}
