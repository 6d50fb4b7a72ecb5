//! What a hostile or huge server can do to a running `toolbridge`, seen from
//! the real binary (issue 16): daemons that leave the server's process
//! group (item 10), hundreds of servers against the open-file limit (item
//! 13), escape sequences on a terminal (item 12).

#![cfg(target_os = "linux")]

use crate::common;

use std::{
    io::{BufRead, BufReader},
    path::{Path, PathBuf},
    process::{Command, Stdio},
    time::Duration,
};

use common::{alive, python, test_server, toolbridge, wait_until};
use serde_json::{Value, json};

/// A temp home with a config file; every command gets its own XDG folders.
struct Home {
    dir: tempfile::TempDir,
}

impl Home {
    fn with_servers(servers: Value) -> Home {
        let home = Home {
            dir: common::tempdir(),
        };
        let text = serde_json::to_string_pretty(&json!({ "mcpServers": servers })).unwrap();
        std::fs::write(home.config(), text).unwrap();
        home
    }

    fn path(&self) -> &Path {
        self.dir.path()
    }

    fn config(&self) -> PathBuf {
        self.path().join("config.json")
    }

    fn command(&self, args: &[&str]) -> Command {
        let mut cmd = Command::new(toolbridge());
        cmd.arg("--config")
            .arg(self.config())
            .args(args)
            .env_remove("TOOLBRIDGE_CONFIG")
            .env_remove("TOOLBRIDGE_LOG")
            .env("HOME", self.path())
            .env("XDG_CONFIG_HOME", self.path().join("config"))
            .env("XDG_CACHE_HOME", self.path().join("cache"))
            .env("XDG_DATA_HOME", self.path().join("data"))
            .stdin(Stdio::null());
        cmd
    }
}

const SOON: Duration = Duration::from_secs(20);

/// A home whose server `esc` starts a daemon in a session of its own
/// (tests/servers/escape.py); the daemon's pid lands in the returned file.
fn escaping_home() -> (Home, PathBuf) {
    let home = Home::with_servers(json!({}));
    let pid_file = home.path().join("daemon");
    let config = json!({ "mcpServers": { "esc": {
        "command": python(),
        "args": [test_server("escape.py"), "start"],
        "env": { "PID_FILE": pid_file },
    } } });
    std::fs::write(home.config(), config.to_string()).unwrap();
    (home, pid_file)
}

/// The daemon's pid, once it wrote it (it is in a session of its own by then).
fn daemon_pid(pid_file: &Path) -> u32 {
    assert!(
        wait_until(SOON, || pid_file.exists()),
        "the server's daemon never started"
    );
    std::fs::read_to_string(pid_file)
        .unwrap()
        .trim()
        .parse()
        .unwrap()
}

/// Kills a leaked daemon at the end of a failed test.
struct Leak(u32);

impl Drop for Leak {
    fn drop(&mut self) {
        if alive(self.0) {
            // SAFETY: kill only sends a signal.
            unsafe { libc::kill(self.0 as i32, libc::SIGKILL) };
        }
    }
}

/// `toolbridge call esc hang`, running (stderr piped, with `-v`).
fn hanging_call(home: &Home) -> std::process::Child {
    home.command(&["-v", "call", "esc", "hang", "--timeout", "120"])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

#[test]
fn a_setsid_daemon_dies_when_a_call_ends_normally() {
    let (home, pid_file) = escaping_home();
    let out = home
        .command(&["call", "esc", "echo", "--args", r#"{"text":"hi"}"#])
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let daemon = Leak(daemon_pid(&pid_file));
    assert!(
        wait_until(SOON, || !alive(daemon.0)),
        "the daemon survived toolbridge's normal exit"
    );
}

/// Found by the soak test: a daemon started as its server crashes lost its
/// subreaper with the server and went to init. toolbridge adopts such
/// orphans and kills them with the crashed server's group.
#[test]
fn a_daemon_started_as_its_server_crashes_dies_too() {
    let (home, pid_file) = escaping_home();
    let config = std::fs::read_to_string(home.config())
        .unwrap()
        .replace("\"start\"", "\"call\"");
    std::fs::write(home.config(), config).unwrap();
    let out = home.command(&["call", "esc", "crash"]).output().unwrap();
    assert_eq!(
        out.status.code(),
        Some(3),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let daemon = Leak(daemon_pid(&pid_file));
    assert!(
        wait_until(SOON, || !alive(daemon.0)),
        "the daemon of a crashed server survived"
    );
}

#[test]
fn a_setsid_daemon_dies_when_toolbridge_gets_sigterm() {
    let (home, pid_file) = escaping_home();
    let child = hanging_call(&home);
    let daemon = Leak(daemon_pid(&pid_file));
    // SAFETY: kill only sends a signal.
    unsafe { libc::kill(child.id() as i32, libc::SIGTERM) };
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(128 + 15), "{stderr}");
    assert!(
        wait_until(SOON, || !alive(daemon.0)),
        "the daemon survived SIGTERM of toolbridge:\n{stderr}"
    );
}

#[test]
fn a_setsid_daemon_dies_when_toolbridge_gets_sigkill() {
    let (home, pid_file) = escaping_home();
    let mut child = hanging_call(&home);
    let daemon = Leak(daemon_pid(&pid_file));
    // Wait (on toolbridge's own log) until the daemon is tracked: a process
    // that left the group after the last walk is out of reach of a SIGKILL.
    let mut stderr = BufReader::new(child.stderr.take().unwrap());
    let wanted = format!("process {} left the process group", daemon.0);
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut line = String::new();
        while stderr.read_line(&mut line).is_ok_and(|n| n > 0) {
            if line.contains(&wanted) {
                let _ = tx.send(());
            }
            line.clear();
        }
    });
    rx.recv_timeout(SOON)
        .expect("toolbridge never tracked the daemon");
    child.kill().unwrap(); // SIGKILL: no cleanup by toolbridge itself.
    child.wait().unwrap();
    assert!(
        wait_until(SOON, || !alive(daemon.0)),
        "the daemon survived SIGKILL of toolbridge"
    );
}

/// Regression (item 13): 300 servers ran out of descriptors ("Too many open
/// files") under the common soft limit; toolbridge now raises it to the hard
/// limit. Here the soft limit is lowered to 256 for the run.
#[test]
fn three_hundred_servers_list_under_a_low_soft_open_file_limit() {
    use std::os::unix::process::CommandExt;
    let servers: serde_json::Map<String, Value> = (0..300)
        .map(|i| {
            (
                format!("s{i}"),
                json!({ "command": toolbridge(), "args": ["example-server"] }),
            )
        })
        .collect();
    let home = Home::with_servers(Value::Object(servers));
    let mut cmd = home.command(&["tools"]);
    // SAFETY: only getrlimit/setrlimit between fork and exec.
    unsafe {
        cmd.pre_exec(|| {
            let mut limit = libc::rlimit {
                rlim_cur: 0,
                rlim_max: 0,
            };
            libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit);
            if limit.rlim_max < 2048 {
                return Err(std::io::Error::other("hard open-file limit below 2048"));
            }
            limit.rlim_cur = 256;
            if libc::setrlimit(libc::RLIMIT_NOFILE, &limit) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let out = cmd.output().expect("run toolbridge");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(!stderr.contains("Too many open files"), "{stderr}");
    let tools: Vec<Value> = serde_json::from_slice(&out.stdout).expect("JSON");
    let hello = tools.iter().filter(|t| t["name"] == "hello").count();
    assert_eq!(hello, 300, "{stderr}");
}

/// Runs `toolbridge ARGS` with stdout and stderr on a pseudo-terminal
/// (util-linux `script`) and returns what the terminal received.
fn on_a_terminal(home: &Home, args: &[&str]) -> Vec<u8> {
    let cmd = home.command(args);
    let mut line = shell_quote(toolbridge());
    for arg in cmd.get_args() {
        line.push(' ');
        line.push_str(&shell_quote(&arg.to_string_lossy()));
    }
    let mut script = Command::new("script");
    script.args(["-q", "-e", "-c", &line, "/dev/null"]);
    for (key, value) in cmd.get_envs() {
        match value {
            Some(v) => script.env(key, v),
            None => script.env_remove(key),
        };
    }
    let out = script.stdin(Stdio::null()).output().expect("run script");
    out.stdout
}

fn shell_quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', r"'\''"))
}

fn has_script() -> bool {
    Command::new("script")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
}

/// Regression (item 12): a tool's text with escape sequences was printed
/// raw to the terminal; a tool name in an error message too.
#[test]
fn escape_sequences_from_a_server_are_neutralised_on_a_terminal_only() {
    let home = Home::with_servers(json!({ "example": {
        "command": toolbridge(), "args": ["example-server"]
    } }));
    let hostile = "\u{1b}[31mred\u{1b}]0;pwned\u{7}\u{9b}2J";
    let args = json!({ "text": hostile }).to_string();
    let call = ["call", "example", "echo", "--args", args.as_str()];

    // Not a terminal: the server's characters are kept.
    let piped = home.command(&call).output().unwrap();
    assert_eq!(
        String::from_utf8_lossy(&piped.stdout),
        format!("{hostile}\n")
    );

    assert!(
        has_script(),
        "util-linux `script` is needed for the terminal test"
    );
    let shown = on_a_terminal(&home, &call);
    let text = String::from_utf8_lossy(&shown);
    assert!(
        !shown.contains(&0x1b),
        "raw ESC reached the terminal: {text:?}"
    );
    assert!(
        !text.contains('\u{9b}'),
        "raw CSI reached the terminal: {text:?}"
    );
    assert!(
        text.contains("\\x1b[31mred\\x1b]0;pwned\\x07\\u{9b}2J"),
        "{text:?}"
    );

    // --json keeps the characters (escaped the JSON way).
    let mut json_call = call.to_vec();
    json_call.push("--json");
    let shown = on_a_terminal(&home, &json_call);
    assert!(String::from_utf8_lossy(&shown).contains(r"\u001b[31mred"));

    // An error naming a hostile tool name.
    let shown = on_a_terminal(&home, &["call", "example", "\u{1b}[2Jgone"]);
    let text = String::from_utf8_lossy(&shown);
    assert!(
        !shown.contains(&0x1b),
        "raw ESC reached the terminal: {text:?}"
    );
    assert!(text.contains("\\x1b[2Jgone"), "{text:?}");
}

/// What a failing server printed reaches `doctor`'s and `tools`' reports on
/// a terminal neutralised too, not only `call`'s.
#[test]
fn a_failing_servers_escape_sequences_are_neutralised_in_doctor_and_tools() {
    let home = Home::with_servers(json!({ "loud": {
        "command": "sh", "args": ["-c", "printf '\\033[2Jboom\\n' >&2; exit 1"]
    } }));
    assert!(
        has_script(),
        "util-linux `script` is needed for the terminal test"
    );
    for args in [&["-q", "doctor"][..], &["-q", "tools"][..]] {
        let shown = on_a_terminal(&home, args);
        let text = String::from_utf8_lossy(&shown);
        assert!(text.contains("boom"), "{args:?}: {text:?}");
        assert!(
            !shown.contains(&0x1b),
            "{args:?}: raw ESC reached the terminal: {text:?}"
        );
    }
}

/// Regression (item 4 and "Results a model can hold"): `exec` with 100
/// calls each returning 15 MB held 5.4 GB and printed 1.57 GB. Each result
/// is now cut to its budget (100,000 characters) as it arrives, with at most
/// 8 calls in flight, and saved whole under the cache folder. 40 calls (five
/// times the calls in flight, 600 MB of results) keep the debug-build test
/// short; 100 calls measured 128 MiB peak and 9.5 MiB printed.
#[test]
fn exec_of_40_results_of_15_mb_holds_and_prints_a_bounded_amount() {
    const CALLS: usize = 40;
    let home = Home::with_servers(json!({ "huge": {
        "command": python(), "args": [test_server("huge_results.py")]
    } }));
    let calls: Vec<Value> = (0..CALLS)
        .map(|i| {
            json!({ "id": format!("c{i}"), "type": "function",
            "function": { "name": "mcp__huge__big", "arguments": "{}" } })
        })
        .collect();
    let response =
        json!({ "choices": [{ "message": { "role": "assistant", "tool_calls": calls } }] });
    let input = home.path().join("response.json");
    std::fs::write(&input, response.to_string()).unwrap();
    let measured = common::run_measured(&mut home.command(&[
        "exec",
        "--format",
        "openai",
        "--input",
        &input.to_string_lossy(),
    ]));
    let run = &measured.run;
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    eprintln!(
        "exec {CALLS} x 15 MB: peak {} MiB, printed {} KiB, {:?}",
        measured.peak_kib / 1024,
        run.stdout.len() / 1024,
        measured.elapsed
    );
    assert!(
        measured.peak_kib < 300 * 1024,
        "peak memory {} MiB",
        measured.peak_kib / 1024
    );
    assert!(
        run.stdout.len() < CALLS * 110_000,
        "printed {} bytes",
        run.stdout.len()
    );
    let messages: Vec<Value> = serde_json::from_str(&run.stdout).expect("JSON");
    assert_eq!(messages.len(), CALLS);
    let results = home.path().join("cache/toolbridge/results");
    for message in &messages {
        let content = message["content"].as_str().expect("text content");
        assert!(content.starts_with("HEADxxx") && content.ends_with("xxxTAIL"));
        assert!(content.contains("characters cut here to fit the result budget of 100,000"));
        let saved = content
            .split("the whole result is saved in ")
            .nth(1)
            .and_then(|rest| rest.split(" …]").next())
            .expect("the note names the saved file");
        assert!(Path::new(saved).starts_with(&results), "{saved}");
    }
    let first = messages[0]["content"].as_str().unwrap();
    let saved = first
        .split("saved in ")
        .nth(1)
        .unwrap()
        .split(" …]")
        .next()
        .unwrap();
    let meta = std::fs::metadata(saved).unwrap();
    assert!(meta.len() > 15_000_000, "the saved result is not whole");
    use std::os::unix::fs::PermissionsExt;
    assert_eq!(meta.permissions().mode() & 0o777, 0o600);
}

/// `call` keeps everything: the whole 15 MB as text, and in `--json`.
#[test]
fn call_prints_a_huge_result_whole() {
    let home = Home::with_servers(json!({ "huge": {
        "command": python(), "args": [test_server("huge_results.py")],
        "env": { "RESULT_BYTES": "3000000" }
    } }));
    let out = home.command(&["call", "huge", "big"]).output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(out.stdout.len(), 3_000_001);
    let out = home
        .command(&["call", "huge", "big", "--json"])
        .output()
        .unwrap();
    let raw: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(raw["content"][0]["text"].as_str().unwrap().len(), 3_000_000);
}
