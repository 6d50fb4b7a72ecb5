//! What the command line offers servers: `--root`, elicitation asked on a
//! terminal (a real pty), declined without one, `--accept-defaults`, and
//! sampling declined; against server-everything and a Python `mcp` 2.x
//! server that asks in the 2026-07-28 input-required form.

use crate::common;

use std::{
    io::{Read, Write},
    os::fd::FromRawFd,
    path::Path,
    process::{Command, Stdio},
    sync::{Arc, Mutex},
    time::Duration,
};

use common::*;
use serde_json::json;

/// A sandbox whose config has server-everything (`everything`) and the
/// input-required Python server (`asks`).
fn sandbox() -> Sandbox {
    let sandbox = Sandbox::new();
    sandbox.write_config(&json!({"mcpServers": {
        "everything": {"command": "node", "args": [everything_js(), "stdio"]},
        "asks": {"command": python(), "args": [test_server("input_required.py")]},
    }}));
    sandbox
}

/// `toolbridge args...` in `sandbox`, with its own HOME and config folder.
fn run(sandbox: &Sandbox, args: &[&str]) -> Run {
    sandbox.run_with(args, |cmd| private_home(cmd, sandbox))
}

fn private_home(cmd: &mut Command, sandbox: &Sandbox) {
    cmd.env("HOME", sandbox.dir.path())
        .env("XDG_CONFIG_HOME", sandbox.dir.path().join("config-home"));
}

/// The file:// URI `--root dir` offers.
fn uri_of(dir: &Path) -> String {
    format!("file://{}", dir.canonicalize().unwrap().display())
}

#[test]
fn root_offers_the_folders_to_servers_as_canonical_file_uris() {
    let sandbox = sandbox();
    let project = sandbox.dir.path().join("project");
    std::fs::create_dir(&project).unwrap();
    let dotted = project.join("..").join("project");
    let out = run(
        &sandbox,
        &[
            "--root",
            dotted.to_str().unwrap(),
            "call",
            "everything",
            "get-roots-list",
        ],
    );
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    assert!(out.stdout.contains(&uri_of(&project)), "{}", out.stdout);
    assert!(out.stdout.contains("1. project"), "{}", out.stdout);

    let missing = run(
        &sandbox,
        &[
            "--root",
            "/no/such/folder",
            "call",
            "everything",
            "get-roots-list",
        ],
    );
    assert_eq!(missing.code, Some(2), "{}", missing.stderr);
    assert!(
        missing
            .stderr
            .contains("--root /no/such/folder: no such folder"),
        "{}",
        missing.stderr
    );
}

/// Regression (issue 24, item 7): server-filesystem started without
/// folders asks for its roots when initialized and applies them after the
/// answer; the first call went out before, and was denied ("path outside
/// allowed directories"). The answer must reach it before the first call.
#[test]
fn root_is_applied_by_server_filesystem_before_the_first_call() {
    let sandbox = Sandbox::new();
    let server = deps().join("node/node_modules/.bin/mcp-server-filesystem");
    sandbox.write_config(&json!({"mcpServers": {"fs": {"command": server}}}));
    let project = sandbox.dir.path().join("project");
    std::fs::create_dir(&project).unwrap();
    let file = project.join("notes.txt");
    std::fs::write(&file, "rooted\n").unwrap();
    let path = file.canonicalize().unwrap();
    let arguments = json!({ "path": path }).to_string();
    let out = run(
        &sandbox,
        &[
            "--root",
            project.to_str().unwrap(),
            "call",
            "fs",
            "read_text_file",
            "--args",
            &arguments,
        ],
    );
    assert_eq!(out.code, Some(0), "{}\n{}", out.stdout, out.stderr);
    assert_eq!(out.stdout.trim(), "rooted", "{}", out.stderr);
}

#[test]
fn without_a_terminal_a_request_for_input_is_declined_and_the_user_told_why() {
    let sandbox = sandbox();
    let out = run(&sandbox, &["--root", ".", "call", "asks", "greet"]);
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    assert_eq!(out.stdout.trim(), "no name given (decline)");
    assert!(
        out.stderr
            .contains("declined server \"asks\"'s request for input (\"What is your name?\")"),
        "{}",
        out.stderr
    );
    assert!(out.stderr.contains("--accept-defaults"), "{}", out.stderr);
}

#[test]
fn accept_defaults_answers_with_the_schemas_defaults() {
    let sandbox = sandbox();
    let out = run(
        &sandbox,
        &["--accept-defaults", "call", "asks", "preferences"],
    );
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    let answered: serde_json::Value = serde_json::from_str(out.stdout.trim()).unwrap();
    assert_eq!(
        answered,
        json!({"colour": "green", "size": 3, "ratio": 0.5, "subscribe": true, "nickname": "friend"})
    );

    // A required field without a default cannot be accepted so: declined,
    // saying which.
    let out = run(
        &sandbox,
        &["--accept-defaults", "--root", ".", "call", "asks", "greet"],
    );
    assert_eq!(
        out.stdout.trim(),
        "no name given (decline)",
        "{}",
        out.stderr
    );
    assert!(
        out.stderr.contains("required field(s) name"),
        "{}",
        out.stderr
    );
}

#[test]
fn sampling_is_declined_with_the_reason() {
    let sandbox = sandbox();
    let out = run(
        &sandbox,
        &[
            "call",
            "everything",
            "trigger-sampling-request",
            "--args",
            r#"{"prompt": "hi"}"#,
        ],
    );
    assert_ne!(out.code, Some(0), "{}", out.stdout);
    let said = format!("{}{}", out.stdout, out.stderr);
    assert!(said.contains("toolbridge has no LLM configured"), "{said}");
}

/// A command on a pseudo-terminal: what it wrote so far, and its input.
struct Pty {
    master: std::fs::File,
    output: Arc<Mutex<String>>,
    child: std::process::Child,
}

impl Pty {
    fn spawn(mut cmd: Command) -> Pty {
        let (mut master, mut slave) = (0, 0);
        // SAFETY: openpty fills in two new descriptors, owned below.
        let rc = unsafe {
            libc::openpty(
                &mut master,
                &mut slave,
                std::ptr::null_mut(),
                std::ptr::null(),
                std::ptr::null(),
            )
        };
        assert_eq!(rc, 0, "openpty");
        // SAFETY: both descriptors are ours alone.
        let (master, slave) = unsafe {
            (
                std::fs::File::from_raw_fd(master),
                std::fs::File::from_raw_fd(slave),
            )
        };
        cmd.stdin(Stdio::from(slave.try_clone().unwrap()))
            .stdout(Stdio::from(slave.try_clone().unwrap()))
            .stderr(Stdio::from(slave));
        let child = cmd.spawn().unwrap();
        // The parent's copies of the terminal's end go with `cmd`.
        drop(cmd);
        let output = Arc::new(Mutex::new(String::new()));
        let mut reader = master.try_clone().unwrap();
        let sink = output.clone();
        std::thread::spawn(move || {
            let mut buf = [0u8; 4096];
            // Ends with EIO once the child has closed the terminal.
            while let Ok(n) = reader.read(&mut buf) {
                if n == 0 {
                    break;
                }
                sink.lock()
                    .unwrap()
                    .push_str(&String::from_utf8_lossy(&buf[..n]));
            }
        });
        Pty {
            master,
            output,
            child,
        }
    }

    fn output(&self) -> String {
        self.output.lock().unwrap().clone()
    }

    /// Waits (60 s at most) until the output holds `text`.
    fn expect(&self, text: &str) {
        assert!(
            wait_until(Duration::from_secs(60), || self.output().contains(text)),
            "never saw {text:?}; output:\n{}",
            self.output()
        );
    }

    fn type_line(&mut self, line: &str) {
        self.master
            .write_all(format!("{line}\n").as_bytes())
            .unwrap();
    }
}

impl Drop for Pty {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn on_a_terminal_each_field_is_asked_with_its_default_and_the_answer_sent() {
    let sandbox = sandbox();
    let project = sandbox.dir.path().join("src");
    std::fs::create_dir(&project).unwrap();
    let mut cmd = sandbox.command(&["--root", project.to_str().unwrap(), "call", "asks", "greet"]);
    private_home(&mut cmd, &sandbox);
    let mut pty = Pty::spawn(cmd);
    pty.expect("Server \"asks\" asks: What is your name?");
    pty.expect("Name *: ");
    // Required, and no default: an empty answer is asked again.
    pty.type_line("");
    pty.expect("a value is required");
    pty.type_line("Ada");
    pty.expect("Send these answers to \"asks\"? [Y/n] ");
    pty.type_line("y");
    pty.expect(&format!("Hello, Ada! Roots: {}", uri_of(&project)));
    let ended = wait_until(Duration::from_secs(30), || {
        matches!(pty.child.try_wait(), Ok(Some(_)))
    });
    assert!(ended, "toolbridge did not exit:\n{}", pty.output());

    // Defaults are offered, and Enter keeps them; numbers are checked.
    let mut cmd = sandbox.command(&["call", "asks", "preferences"]);
    private_home(&mut cmd, &sandbox);
    let mut pty = Pty::spawn(cmd);
    pty.expect("3) blue");
    pty.expect("Colour (number or value) [green]: ");
    pty.type_line("3");
    pty.expect("Size (whole number) [3]: ");
    pty.type_line("2.5");
    pty.expect("2.5 is not a whole number");
    pty.type_line("7");
    pty.expect("Ratio (number) [0.5]: ");
    pty.type_line("");
    pty.expect("Subscribe (y/n) [y]: ");
    pty.type_line("n");
    pty.expect("Nickname [friend]: ");
    pty.type_line("");
    pty.expect("Send these answers");
    pty.type_line("");
    pty.expect(
        r#"{"colour": "blue", "nickname": "friend", "ratio": 0.5, "size": 7, "subscribe": false}"#,
    );
}
