//! The `toolbridge` binary, run as a user would: a fresh machine, real
//! third-party servers, faults, exit codes, and process cleanup even when
//! toolbridge is killed.

use crate::common;

use std::{
    path::{Path, PathBuf},
    process::{Command, Output, Stdio},
    time::Duration,
};

use common::*;
use serde_json::{Value, json};

/// A temporary home with a config file holding `servers` (`mcpServers`).
struct Home {
    dir: tempfile::TempDir,
}

impl Home {
    fn new() -> Self {
        let home = Home { dir: tempdir() };
        std::fs::create_dir_all(home.config().parent().unwrap()).unwrap();
        home
    }

    fn with_servers(servers: Value) -> Self {
        let home = Home::new();
        let text = serde_json::to_string_pretty(&json!({ "mcpServers": servers })).unwrap();
        std::fs::write(home.config(), text).unwrap();
        home
    }

    fn path(&self) -> &Path {
        self.dir.path()
    }

    /// The default location: only there does a missing file mean the
    /// built-in example server (a named one must exist).
    fn config(&self) -> PathBuf {
        self.path().join("xdg/toolbridge/config.json")
    }

    /// `toolbridge ARGS` with this home's config and nothing from the real
    /// one. Without a config file, none is named: the default location is
    /// empty, so the built-in example server is the only server.
    fn command(&self, args: &[&str]) -> Command {
        let mut cmd = Command::new(toolbridge());
        cmd.args(args)
            .env("HOME", self.path())
            .env("XDG_CONFIG_HOME", self.path().join("xdg"))
            .env("XDG_CACHE_HOME", self.path().join("cache"))
            .env("XDG_DATA_HOME", self.path().join("data"))
            .env_remove("TOOLBRIDGE_LOG")
            .env_remove("NO_COLOR")
            .stdin(Stdio::null());
        if self.config().exists() {
            cmd.env("TOOLBRIDGE_CONFIG", self.config());
        } else {
            cmd.env_remove("TOOLBRIDGE_CONFIG");
        }
        cmd
    }

    fn run(&self, args: &[&str]) -> Output {
        self.command(args).output().expect("run toolbridge")
    }
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn misbehave_entry(mode: &str, env: Value) -> Value {
    json!({ "command": python(), "args": [test_server("misbehave.py"), mode], "env": env })
}

#[test]
fn a_fresh_machine_lists_the_example_servers_tools() {
    let home = Home::new();
    let out = home.run(&["tools"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let tools: Vec<Value> = serde_json::from_slice(&out.stdout).expect("one JSON array");
    let ids: Vec<&str> = tools.iter().map(|t| t["id"].as_str().unwrap()).collect();
    for id in [
        "mcp__example__hello",
        "mcp__example__echo",
        "mcp__example__tiny_image",
        "mcp__example__tiny_audio",
        "mcp__example__slow",
    ] {
        assert!(ids.contains(&id), "{id} missing from {ids:?}");
    }
    let hello = tools.iter().find(|t| t["name"] == "hello").unwrap();
    assert_eq!(hello["serverId"], "example");
    assert_eq!(hello["inputSchema"]["required"], json!(["name"]));
}

#[test]
fn a_fresh_machine_calls_hello() {
    let home = Home::new();
    let out = home.run(&["call", "example", "hello", "--args", r#"{"name":"Ada"}"#]);
    assert_eq!(stdout(&out), "Hello, Ada!\n", "{}", stderr(&out));
    assert_eq!(out.status.code(), Some(0));
}

#[test]
fn images_audio_and_unknown_tools_of_the_example_server() {
    let home = Home::new();
    let out = home.run(&["call", "example", "tiny_image"]);
    assert_eq!(stdout(&out), "[Image: image/png]\n");
    let out = home.run(&["call", "example", "tiny_audio", "--json"]);
    let raw: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(raw["content"][0]["mimeType"], "audio/wav");
    let out = home.run(&["call", "example", "no_such_tool"]);
    assert_eq!(stdout(&out), "");
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("server \"example\" has no tool \"no_such_tool\""),
        "{}",
        stderr(&out)
    );
}

/// Issue 11, item 4: an unknown tool was exit 1 on one server (an `isError`
/// result) and 3 on another (a JSON-RPC error). It is a usage error, exit
/// 2, on every server and transport, and the message names the server's
/// tools: a few, then how many more.
#[test]
fn an_unknown_tool_exits_2_naming_the_servers_tools_on_every_server() {
    let http = everything_listening("streamableHttp");
    let home = Home::with_servers(json!({
        "example": { "command": toolbridge(), "args": ["example-server"] },
        "py": { "command": python(), "args": [test_server("py_sdk_server.py")] },
        "everything": { "command": "node", "args": [everything_js(), "stdio"] },
        "remote": { "type": "http", "url": http.url("/mcp") },
    }));
    for (server, a_tool, more) in [
        ("example", "hello", false),
        ("py", "echo", false),
        ("everything", "echo", true),
        ("remote", "echo", true),
    ] {
        let out = home.run(&["call", server, "no_such_tool"]);
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(2), "{server}: {err}");
        assert!(
            err.contains(&format!(
                "server \"{server}\" has no tool \"no_such_tool\"; its tools are"
            )),
            "{server}: {err}"
        );
        assert!(err.contains(a_tool), "{server}: {err}");
        assert_eq!(
            err.contains(" more (`toolbridge tools"),
            more,
            "{server}: {err}"
        );
        assert_eq!(stdout(&out), "", "{server}");
    }
}

/// A socket on 127.0.0.1 that accepts connections and never answers.
fn silent_listener() -> std::net::SocketAddr {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    std::thread::spawn(move || {
        let mut held = Vec::new();
        for stream in listener.incoming().map_while(Result::ok) {
            held.push(stream);
        }
    });
    addr
}

/// Issue 11, item 4: every timeout is exit 4. A network server that
/// accepts and never answers gave exit 3 (the transport's own deadline) or
/// waited for the whole start timeout; `--timeout` bounds the start too.
#[test]
fn a_network_server_that_never_answers_exits_4_within_the_timeout() {
    let addr = silent_listener();
    let home = Home::with_servers(json!({
        "http": { "type": "http", "url": format!("http://{addr}/mcp") },
        "detected": { "url": format!("http://{addr}/mcp") },
        "sse": { "type": "sse", "url": format!("http://{addr}/sse") },
        "ws": { "type": "websocket", "url": format!("ws://{addr}/ws") },
    }));
    for server in ["http", "detected", "sse", "ws"] {
        let started = std::time::Instant::now();
        let out = home.run(&["call", server, "echo", "--timeout", "1"]);
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(4), "{server}: {err}");
        assert!(
            started.elapsed() < Duration::from_secs(4),
            "{server}: {:?}",
            started.elapsed()
        );
        assert!(
            err.contains(&format!("server \"{server}\" did not start within 1 s")),
            "{server}: {err}"
        );
    }
}

/// Issue 11, item 11: a crashed server's error says how its process ended.
#[test]
fn a_crashed_servers_error_says_how_it_ended() {
    let dir = tempdir();
    let killed = dir.path().join("killed.sh");
    // Reads the first request, then kills itself.
    script(&killed, "read line\nkill -9 $$");
    let home = Home::with_servers(json!({
        "crashy": misbehave_entry("crash", json!({})),
        "nokey": misbehave_entry("die-at-start", json!({})),
        "killed": { "command": killed },
    }));
    let out = home.run(&["call", "crashy", "echo", "--args", r#"{"text":"x"}"#]);
    assert_eq!(out.status.code(), Some(3), "{}", stderr(&out));
    assert!(
        stderr(&out).starts_with(
            "toolbridge: server \"crashy\" exited with status 3 during a call to tool \"echo\"\n"
        ),
        "{}",
        stderr(&out)
    );
    let out = home.run(&["call", "nokey", "echo"]);
    assert_eq!(out.status.code(), Some(3), "{}", stderr(&out));
    assert!(
        stderr(&out).starts_with(
            "toolbridge: server \"nokey\" failed to start: the server exited with status 1 \
             before the handshake finished\n"
        ),
        "{}",
        stderr(&out)
    );
    assert!(stderr(&out).contains("EXAMPLE_API_KEY is not set"));
    let out = home.run(&["call", "killed", "echo"]);
    assert_eq!(out.status.code(), Some(3), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("was killed by signal 9 (SIGKILL) before the handshake finished"),
        "{}",
        stderr(&out)
    );
}

/// A server on 127.0.0.1 that answers every HTTP request with 501.
fn refusing_listener() -> std::net::SocketAddr {
    use std::io::{BufRead, BufReader, Write};
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    std::thread::spawn(move || {
        for mut stream in listener.incoming().map_while(Result::ok) {
            let mut reader = BufReader::new(stream.try_clone().unwrap());
            let mut line = String::new();
            while reader.read_line(&mut line).is_ok_and(|n| n > 2) {
                line.clear();
            }
            let _ = stream.write_all(
                b"HTTP/1.1 501 Not Implemented\r\ncontent-length: 0\r\nconnection: close\r\n\r\n",
            );
        }
    });
    addr
}

/// Issue 11, item 11: one plain sentence on stderr, not rmcp's
/// `ERROR worker quit with fatal: Transport channel closed, when ...` line
/// before it, and no colour codes when stderr is not a terminal.
#[test]
fn errors_are_one_plain_sentence_without_rmcp_logs_or_colour() {
    let addr = refusing_listener();
    let home = Home::with_servers(json!({
        "refusing": { "type": "http", "url": format!("http://{addr}/mcp") },
        "nokey": misbehave_entry("die-at-start", json!({})),
    }));
    let out = home.run(&["call", "refusing", "echo"]);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(3), "{err}");
    assert_eq!(
        err,
        format!("toolbridge: server \"refusing\": http://{addr}/mcp: HTTP 501 Not Implemented\n")
    );
    for args in [
        &["call", "refusing", "echo"][..],
        &["call", "nokey", "echo"],
        &["tools"],
    ] {
        let err = stderr(&home.run(args));
        for internal in ["ERROR", "WARN", "worker quit", "Transport [", "\x1b["] {
            assert!(!err.contains(internal), "{args:?}: {internal:?} in {err}");
        }
    }
    // -v shows what rmcp said.
    let err = stderr(&home.run(&["-v", "call", "refusing", "echo"]));
    assert!(err.contains("worker quit"), "{err}");
}

#[test]
fn third_party_servers_over_stdio_list_and_call() {
    let home = Home::with_servers(json!({
        "everything": { "command": "node", "args": [everything_js(), "stdio"] },
        "py": { "command": python(), "args": [test_server("py_sdk_server.py")] },
    }));
    let out = home.run(&["tools"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let tools: Vec<Value> = serde_json::from_slice(&out.stdout).unwrap();
    assert!(tools.iter().any(|t| t["id"] == "mcp__everything__echo"));
    assert!(tools.iter().any(|t| t["id"] == "mcp__py__image"));

    let out = home.run(&[
        "call",
        "everything",
        "echo",
        "--args",
        r#"{"message":"hi"}"#,
    ]);
    assert_eq!(stdout(&out), "Echo: hi\n", "{}", stderr(&out));
    let out = home.run(&["call", "everything", "get-tiny-image"]);
    assert!(
        stdout(&out).contains("[Image: image/png]"),
        "{}",
        stdout(&out)
    );
    let out = home.run(&["call", "py", "image"]);
    assert_eq!(stdout(&out), "[Image: image/png]\n", "{}", stderr(&out));
    let out = home.run(&["call", "py", "fail", "--args", r#"{"message":"bad input"}"#]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(stdout(&out).contains("bad input"));
}

#[test]
fn a_hanging_tool_exits_4_and_the_server_is_told_to_cancel() {
    let home = Home::new();
    let log = home.path().join("cancelled.log");
    std::fs::write(
        home.config(),
        json!({ "mcpServers": { "hang": misbehave_entry("hang", json!({ "CANCEL_LOG": log })) } })
            .to_string(),
    )
    .unwrap();
    let out = home.run(&[
        "call",
        "hang",
        "echo",
        "--args",
        r#"{"text":"x"}"#,
        "--timeout",
        "0.5",
    ]);
    assert_eq!(out.status.code(), Some(4), "{}", stderr(&out));
    assert!(stderr(&out).contains("timed out"), "{}", stderr(&out));
    let cancelled = std::fs::read_to_string(&log).unwrap_or_default();
    assert!(
        cancelled.contains("requestId"),
        "server got no notifications/cancelled: {cancelled:?}"
    );
}

#[test]
fn a_server_killed_mid_call_exits_3_with_its_stderr() {
    let home = Home::with_servers(json!({ "crashy": misbehave_entry("crash", json!({})) }));
    let out = home.run(&["call", "crashy", "echo", "--args", r#"{"text":"x"}"#]);
    assert_eq!(out.status.code(), Some(3), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(err.contains("server \"crashy\""), "{err}");
    assert!(err.contains("boom: crashing on purpose"), "{err}");
}

#[test]
fn a_server_that_exits_at_start_shows_its_message() {
    let home = Home::with_servers(json!({ "nokey": misbehave_entry("die-at-start", json!({})) }));
    let out = home.run(&["tools"]);
    assert_eq!(out.status.code(), Some(3));
    assert!(
        stderr(&out).contains("EXAMPLE_API_KEY is not set"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn noise_on_stdout_does_not_break_a_server() {
    let home = Home::with_servers(json!({ "noisy": misbehave_entry("garbage", json!({})) }));
    let out = home.run(&[
        "call",
        "noisy",
        "echo",
        "--args",
        r#"{"text":"still fine"}"#,
    ]);
    assert_eq!(stdout(&out), "still fine\n", "{}", stderr(&out));
}

#[test]
fn a_malformed_config_exits_2_with_its_position_and_is_left_alone() {
    let home = Home::new();
    // A missing colon: a trailing comma is JSONC, which every read accepts.
    let broken = "{\n  \"mcpServers\": {\n    \"time\": { \"command\" \"uvx\" }\n  }\n}\n";
    std::fs::write(home.config(), broken).unwrap();
    for args in [&["tools"][..], &["call", "time", "now"][..]] {
        let out = home.run(args);
        assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
        let err = stderr(&out);
        assert!(err.contains("config.json:3:"), "no file:line:col in {err}");
    }
    assert_eq!(std::fs::read_to_string(home.config()).unwrap(), broken);
}

/// Regression (issue 24, item 1): `"a",, }` was accepted (the config is
/// stripped of JSONC twice, and each strip took one comma), so the server
/// was started and the user saw exit 3 "command a not found".
#[test]
fn a_doubled_comma_is_a_syntax_error_at_its_position() {
    let home = Home::new();
    let broken = "{\n  \"mcpServers\": {\n    \"x\": {\"command\": \"a\",, }\n  }\n}\n";
    std::fs::write(home.config(), broken).unwrap();
    for args in [
        &["tools"][..],
        &["call", "x", "t"][..],
        &["servers", "list"][..],
    ] {
        let out = home.run(args);
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        // The second comma: line 3, column 26.
        assert!(
            err.contains("config.json:3:26"),
            "{args:?}: no file:line:col in {err}"
        );
    }
    assert_eq!(std::fs::read_to_string(home.config()).unwrap(), broken);
}

/// Regression (issue 24, item 4): a disabled server with an unset
/// `${VAR}` made `tools` exit 2, `servers test` FAIL and `serve` warn,
/// while `doctor`, `call` and `exec` skipped it. No command resolves a
/// disabled server.
#[test]
fn a_disabled_server_with_an_unset_variable_troubles_no_command() {
    let home = Home::with_servers(json!({
        "example": { "command": toolbridge(), "args": ["example-server"] },
        "off": { "command": "x", "env": { "KEY": "${TB_TEST_NEVER_SET}" }, "disabled": true },
        "remote": { "url": "${TB_TEST_NEVER_SET_URL}/mcp", "disabled": true },
    }));
    for args in [&["tools"][..], &["servers", "test"][..]] {
        let out = home.run(args);
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(0), "{args:?}: {err}");
        assert!(!err.contains("TB_TEST_NEVER_SET"), "{args:?}: {err}");
        assert!(!stdout(&out).contains("FAIL"), "{args:?}: {}", stdout(&out));
    }
    // `serve --stdio` with no client: it ends at once; what it said about
    // its servers is what matters.
    let out = home.run(&["serve", "--stdio"]);
    let err = stderr(&out);
    assert!(!err.contains("not serving"), "{err}");
    assert!(!err.contains("TB_TEST_NEVER_SET"), "{err}");
    // Still refused as disabled, not as unknown or unresolved.
    let out = home.run(&["call", "off", "t"]);
    assert!(stderr(&out).contains("is disabled"), "{}", stderr(&out));
}

/// Regression (issue 24, item 6): behind a TLS-intercepting proxy every
/// `npx`/`uvx` server failed: stdio servers lost the trust-store and proxy
/// variables. server-everything's `get-env` shows what it was given.
#[test]
fn stdio_servers_keep_the_trust_store_and_proxy_variables() {
    let home = Home::with_servers(json!({
        "everything": { "command": "node", "args": [everything_js(), "stdio"] },
    }));
    let passed = [
        ("SSL_CERT_FILE", "/etc/corp/ca.pem"),
        ("SSL_CERT_DIR", "/etc/corp/certs"),
        ("NODE_EXTRA_CA_CERTS", "/etc/corp/node-ca.pem"),
        ("REQUESTS_CA_BUNDLE", "/etc/corp/py-ca.pem"),
        ("CURL_CA_BUNDLE", "/etc/corp/curl-ca.pem"),
        ("HTTPS_PROXY", "http://proxy.corp:3128"),
        ("HTTP_PROXY", "http://proxy.corp:3128"),
        ("NO_PROXY", "localhost,.corp"),
        ("https_proxy", "http://proxy.corp:3128"),
        ("http_proxy", "http://proxy.corp:3128"),
        ("no_proxy", "localhost"),
    ];
    let mut cmd = home.command(&["call", "everything", "get-env"]);
    cmd.envs(passed).env("TB_TEST_NOT_PASSED", "secret-ish");
    let out = cmd.output().unwrap();
    let text = stdout(&out);
    assert!(out.status.success(), "{}", stderr(&out));
    let env: Value = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{e}: {text}"));
    for (name, value) in passed {
        assert_eq!(env[name], value, "{name} in {env}");
    }
    assert!(env.get("TB_TEST_NOT_PASSED").is_none(), "{env}");
}

#[test]
fn bad_arguments_are_usage_errors() {
    let home = Home::new();
    let out = home.run(&["call", "example", "hello", "--args", "[1,2]"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("must be a JSON object"),
        "{}",
        stderr(&out)
    );
    let out = home.run(&["call", "nope", "hello"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("unknown server \"nope\""),
        "{}",
        stderr(&out)
    );
}

/// Starts `toolbridge call` on a server tree (sh → python → sleep) whose
/// tool hangs, and returns the child and the tree's (pgid, pids) once the
/// server is up.
fn start_tree(home: &Home) -> (std::process::Child, u32, Vec<u32>) {
    let pid_file = home.path().join("pids");
    let script = format!(
        "{} {} grandchild,hang",
        python(),
        test_server("misbehave.py")
    );
    std::fs::write(
        home.config(),
        json!({ "mcpServers": { "tree": {
            "command": "sh", "args": ["-c", script], "env": { "PID_FILE": pid_file }
        } } })
        .to_string(),
    )
    .unwrap();
    let child = home
        .command(&[
            "call",
            "tree",
            "echo",
            "--args",
            r#"{"text":"x"}"#,
            "--timeout",
            "120",
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    assert!(
        wait_until(Duration::from_secs(20), || std::fs::read_to_string(
            &pid_file
        )
        .is_ok_and(|s| s.ends_with('\n'))),
        "the server never started"
    );
    let pids = read_pids(&pid_file);
    (child, pids[0], pids[1..].to_vec())
}

#[test]
fn kill_9_of_toolbridge_leaves_no_server_process_behind() {
    let home = Home::new();
    let (mut child, pgid, pids) = start_tree(&home);
    assert!(pids.iter().all(|p| alive(*p)));
    child.kill().unwrap(); // SIGKILL: toolbridge gets no chance to clean up.
    child.wait().unwrap();
    assert!(
        wait_until(Duration::from_secs(2), || tree_gone(pgid, &pids)),
        "server processes survived kill -9 of toolbridge"
    );
}

#[test]
fn sigterm_closes_every_server_and_exits() {
    let home = Home::new();
    let (mut child, pgid, pids) = start_tree(&home);
    // SAFETY: kill has no memory-safety preconditions.
    unsafe { libc::kill(child.id() as i32, libc::SIGTERM) };
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(128 + 15));
    assert!(
        wait_until(Duration::from_secs(2), || tree_gone(pgid, &pids)),
        "server processes survived SIGTERM of toolbridge"
    );
}

/// Issue 11, item 14: `toolbridge completions SHELL` prints a script for
/// each shell that knows the commands; an unknown shell is a usage error.
#[test]
fn completions_for_every_shell_know_the_commands() {
    let home = Home::new();
    for (shell, marker) in [
        ("bash", "complete -F"),
        ("zsh", "#compdef toolbridge"),
        ("fish", "complete -c toolbridge"),
        ("powershell", "Register-ArgumentCompleter"),
    ] {
        let out = home.run(&["completions", shell]);
        assert_eq!(out.status.code(), Some(0), "{shell}: {}", stderr(&out));
        let script = stdout(&out);
        assert!(script.contains(marker), "{shell}: {script}");
        for command in ["tools", "call", "exec", "servers", "doctor", "completions"] {
            assert!(script.contains(command), "{shell}: {command} missing");
        }
        // `call`'s flag (fish spells it `-l timeout`).
        assert!(script.contains("timeout"), "{shell}: --timeout missing");
    }
    let out = home.run(&["completions", "tcsh"]);
    assert_eq!(out.status.code(), Some(2));
}
