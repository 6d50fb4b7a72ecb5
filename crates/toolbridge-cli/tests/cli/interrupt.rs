//! Ctrl-C (SIGINT) while `toolbridge call` waits on a slow tool of a server
//! that ignores its stdin closing and SIGTERM: the first says at once that
//! the servers are closing and closes them; a second exits at once. Either
//! way no process of the server is left.

use crate::common;

use std::{
    io::{BufRead, BufReader},
    path::Path,
    process::{Child, Stdio},
    sync::mpsc,
    time::{Duration, Instant},
};

use common::Sandbox;
use serde_json::json;

/// How long things that should happen promptly may take on a busy machine.
const SOON: Duration = Duration::from_secs(60);

/// `toolbridge call stubborn wait` on a server that only SIGKILL ends,
/// started in its own home, config and cache folders; returns once the call
/// reached the server, with the server's process group and pid, and the
/// lines toolbridge writes to stderr.
fn call_a_stubborn_server(sandbox: &Sandbox) -> (Child, u32, u32, mpsc::Receiver<String>) {
    let pid_file = sandbox.dir.path().join("pids");
    sandbox.write_config(&json!({"mcpServers": {"stubborn": {
        "command": common::python(),
        "args": [common::test_server("start_faults.py"), "stubborn"],
        "env": {"PID_FILE": pid_file},
    }}}));
    let home = sandbox.dir.path().join("home");
    std::fs::create_dir_all(&home).unwrap();
    let mut child = sandbox
        .command(&["call", "stubborn", "wait", "--args", r#"{"ms": 600000}"#])
        .env("HOME", &home)
        .env("XDG_CONFIG_HOME", home.join(".config"))
        .env("XDG_CACHE_HOME", home.join(".cache"))
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let (tx, lines) = mpsc::channel();
    let stderr = child.stderr.take().unwrap();
    std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            let _ = tx.send(line);
        }
    });
    assert!(
        common::wait_until(SOON, || Path::new(&pid_file).exists()),
        "the call never reached the server"
    );
    let pids = common::read_pids(&pid_file);
    (child, pids[0], pids[1], lines)
}

fn interrupt(child: &Child) {
    // SAFETY: kill only sends a signal.
    assert_eq!(unsafe { libc::kill(child.id() as i32, libc::SIGINT) }, 0);
}

/// The next stderr line that holds `text`.
fn line_with(lines: &mpsc::Receiver<String>, text: &str) -> String {
    let deadline = Instant::now() + SOON;
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        match lines.recv_timeout(left) {
            Ok(line) if line.contains(text) => return line,
            Ok(_) => continue,
            Err(e) => panic!("no stderr line with \"{text}\": {e}"),
        }
    }
}

/// Waits for `child` to exit, at most `limit`; its exit code.
fn exit_code_within(child: &mut Child, limit: Duration) -> Option<i32> {
    let mut code = None;
    let exited = common::wait_until(limit, || match child.try_wait() {
        Ok(Some(status)) => {
            code = status.code();
            true
        }
        _ => false,
    });
    assert!(exited, "toolbridge did not exit within {limit:?}");
    code
}

#[test]
fn one_ctrl_c_says_servers_are_closing_then_closes_them() {
    let sandbox = Sandbox::new();
    let (mut child, pgid, pid, lines) = call_a_stubborn_server(&sandbox);
    interrupt(&child);
    let notice = line_with(&lines, "closing");
    assert_eq!(
        notice,
        "toolbridge: closing 1 server… (Ctrl-C again to exit now)"
    );
    assert_eq!(exit_code_within(&mut child, SOON), Some(130));
    assert!(
        common::wait_until(SOON, || common::tree_gone(pgid, &[pid])),
        "the server outlived toolbridge"
    );
}

#[test]
fn a_second_ctrl_c_exits_at_once_and_the_server_is_still_killed() {
    let sandbox = Sandbox::new();
    let (mut child, pgid, pid, lines) = call_a_stubborn_server(&sandbox);
    interrupt(&child);
    line_with(&lines, "closing 1 server");
    let second = Instant::now();
    interrupt(&child);
    // Closing this server gracefully takes 3 s (stdin) + 3 s (SIGTERM).
    assert_eq!(exit_code_within(&mut child, SOON), Some(130));
    let took = second.elapsed();
    assert!(
        took < Duration::from_secs(3),
        "exited {took:?} after the second Ctrl-C: it waited for the server"
    );
    assert!(
        common::wait_until(SOON, || common::tree_gone(pgid, &[pid])),
        "the server outlived toolbridge"
    );
}
