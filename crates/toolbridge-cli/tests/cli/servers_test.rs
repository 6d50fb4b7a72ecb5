//! `toolbridge servers test`, run as a user would, against real processes.

use crate::common;

use std::{
    io::{BufRead, BufReader},
    path::Path,
    process::{Command, Stdio},
    sync::mpsc,
    time::Duration,
};

use common::Sandbox;
use serde_json::{Value, json};

/// How long a line may take to come, on a busy machine.
const SOON: Duration = Duration::from_secs(60);

/// `toolbridge --config CONFIG args...` with its own home, config and cache
/// folders.
fn command(sandbox: &Sandbox, args: &[&str]) -> Command {
    let mut command = sandbox.command(args);
    let home = sandbox.dir.path().join("home");
    std::fs::create_dir_all(&home).unwrap();
    command
        .env("HOME", &home)
        .env("XDG_CONFIG_HOME", home.join(".config"))
        .env("XDG_CACHE_HOME", home.join(".cache"));
    command
}

/// tests/servers/start_faults.py in `mode`, with `env`, as a config entry.
fn start_faults(mode: &str, env: Value) -> Value {
    json!({
        "command": common::python(),
        "args": [common::test_server("start_faults.py"), mode],
        "env": env,
    })
}

/// Regression: every result was printed at the end, so one slow server held
/// back the lines of all the others.
#[test]
fn each_result_is_printed_as_its_server_finishes() {
    let sandbox = Sandbox::new();
    let gate = sandbox.dir.path().join("open");
    sandbox.write_config(&json!({"mcpServers": {
        // First in the config, last to finish: it starts only once the
        // test has read the other's line.
        "slow": start_faults("gated", json!({"GATE_FILE": gate})),
        "fast": {"command": common::toolbridge(), "args": ["example-server"]}
    }}));
    let mut child = command(&sandbox, &["servers", "test"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let (tx, lines) = mpsc::channel::<String>();
    let stdout = child.stdout.take().unwrap();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            let _ = tx.send(line);
        }
    });

    let first = lines
        .recv_timeout(SOON)
        .expect("no line while the slow server was still starting");
    assert!(first.starts_with("ok    fast: "), "{first}");
    assert!(!gate.exists());
    std::fs::write(&gate, "").unwrap();
    let second = lines.recv_timeout(SOON).expect("the slow server's line");
    assert!(
        second.starts_with("ok    slow: start-faults 1.0"),
        "{second}"
    );
    assert!(second.contains(", 2 tools, started in "), "{second}");
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(0));
}

#[test]
fn json_gives_the_start_time_as_start_ms() {
    let sandbox = Sandbox::new();
    sandbox.write_config(&json!({"mcpServers": {
        "fast": {"command": common::toolbridge(), "args": ["example-server"]},
        "broken": {"command": "sh", "args": ["-c", "exit 1"]}
    }}));
    let output = command(&sandbox, &["servers", "test", "--json"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(3), "{output:?}");
    let reports: Vec<Value> = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(reports.len(), 2, "{reports:?}");
    let fast = &reports[0];
    assert_eq!(fast["server"], "fast");
    assert_eq!(fast["ok"], true);
    assert!(fast["startMs"].is_u64(), "{fast}");
    assert!(fast.get("startTime").is_none(), "{fast}");
    assert!(fast["toolCount"].as_u64().unwrap() > 0, "{fast}");
    assert_eq!(reports[1]["server"], "broken");
    assert_eq!(reports[1]["ok"], false);
}

/// The line of a server that fails is printed as it fails too.
#[test]
fn a_failing_servers_line_comes_while_another_still_starts() {
    let sandbox = Sandbox::new();
    let gate = sandbox.dir.path().join("open");
    sandbox.write_config(&json!({"mcpServers": {
        "slow": start_faults("gated", json!({"GATE_FILE": gate})),
        "broken": {"command": "sh", "args": ["-c", "echo 'no token' >&2; exit 1"]}
    }}));
    let mut child = command(&sandbox, &["servers", "test"])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let mut first = String::new();
    stdout.read_line(&mut first).unwrap();
    assert!(first.starts_with("FAIL  broken: "), "{first}");
    assert!(!Path::new(&gate).exists());
    std::fs::write(&gate, "").unwrap();
    // The failure's stderr tail follows its line, indented.
    let mut next = String::new();
    loop {
        next.clear();
        assert_ne!(stdout.read_line(&mut next).unwrap(), 0, "no line for slow");
        if !next.starts_with(' ') {
            break;
        }
    }
    assert!(next.starts_with("ok    slow: "), "{next}");
    assert_eq!(child.wait().unwrap().code(), Some(3));
}
