//! What `toolbridge call` prints, run as a user would against real servers:
//! every result shape flattened the way `exec` and the adapters flatten it
//! for a model (one flattener, the library's), `--timeout` checked once, and
//! a closed stdout that is not an error.

use crate::common;

use std::process::{Command, Output};

use common::*;
use serde_json::{Value, json};

/// A config with tests/servers/results_server.cjs (the TypeScript SDK) as
/// `results` and server-everything as `everything`.
struct Setup {
    _dir: tempfile::TempDir,
    config: std::path::PathBuf,
}

fn setup() -> Setup {
    let dir = tempdir();
    let config = dir.path().join("config.json");
    std::fs::write(
        &config,
        json!({ "mcpServers": {
            "results": {
                "command": "node",
                "args": [test_server("results_server.cjs")],
                "env": { "NODE_PATH": deps().join("node/node_modules") },
            },
            "everything": { "command": "node", "args": [everything_js(), "stdio"] },
        } })
        .to_string(),
    )
    .unwrap();
    Setup { _dir: dir, config }
}

impl Setup {
    fn command(&self, args: &[&str]) -> Command {
        let mut command = Command::new(toolbridge());
        command
            .arg("--config")
            .arg(&self.config)
            .args(args)
            .env_remove("TOOLBRIDGE_LOG")
            .env("XDG_CACHE_HOME", self._dir.path().join("cache"))
            .env("XDG_DATA_HOME", self._dir.path().join("data"))
            .stdin(std::process::Stdio::null());
        command
    }

    fn run(&self, args: &[&str]) -> Output {
        self.command(args).output().expect("run toolbridge")
    }

    /// `call SERVER TOOL`'s stdout, after checking that it exited 0.
    fn call(&self, server: &str, tool: &str) -> String {
        let out = self.run(&["call", server, tool]);
        assert_eq!(
            out.status.code(),
            Some(0),
            "call {server} {tool}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).expect("UTF-8 output")
    }
}

#[test]
fn call_prints_an_embedded_text_resource_as_its_uri_then_its_text() {
    let setup = setup();
    assert_eq!(
        setup.call("results", "embedded_text"),
        "[Resource: file:///notes/today.txt (text/plain)]\nbuy milk\ncall Ada\n"
    );

    // server-everything: a text item, the embedded resource, a text item.
    let out = setup.call("everything", "get-resource-reference");
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(
        lines[0], "Returning resource reference for Resource 1:",
        "{out}"
    );
    assert!(
        lines[1] == "[Resource: demo://resource/dynamic/text/1 (text/plain)]",
        "the embedded resource's URI is missing: {out}"
    );
    assert!(
        lines[2].starts_with("Resource 1: This is a plaintext resource created at"),
        "the embedded resource's text is missing: {out}"
    );
    assert!(!out.contains("[Resource]"), "{out}");
}

#[test]
fn call_prints_a_structured_content_only_result_as_its_json() {
    let setup = setup();
    let out = setup.call("results", "structured_only");
    let printed: Value = serde_json::from_str(out.trim_end()).unwrap_or_else(|e| {
        panic!("call printed {out:?}, not the structured content as JSON: {e}")
    });
    assert_eq!(printed, json!({"sum": 3, "terms": [1, 2]}));
}

#[test]
fn call_prints_a_resource_link_with_its_uri() {
    let setup = setup();
    let out = setup.call("results", "resource_link");
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 2, "{out}");
    assert_eq!(lines[0], "the report:");
    assert_eq!(
        lines[1],
        "[Resource link: <file:///reports/q3.pdf> (application/pdf)]"
    );
}

/// `call` shows a user exactly the text `exec` hands the model.
#[test]
fn call_prints_what_exec_gives_the_model() {
    let setup = setup();
    let calls = [
        ("results", "structured_only"),
        ("results", "embedded_text"),
        ("results", "resource_link"),
        ("everything", "get-resource-links"),
        ("everything", "get-structured-content"),
    ];
    let tool_calls: Vec<Value> = calls
        .iter()
        .enumerate()
        .map(|(i, (server, tool))| {
            let arguments = if *tool == "get-structured-content" {
                r#"{"location":"Chicago"}"#
            } else {
                "{}"
            };
            json!({ "id": format!("c{i}"), "type": "function",
                    "function": { "name": format!("mcp__{server}__{tool}"), "arguments": arguments } })
        })
        .collect();
    let response = json!({ "role": "assistant", "tool_calls": tool_calls });
    let out = output_with_stdin(
        &mut setup.command(&["exec", "--format", "openai"]),
        response.to_string().as_bytes(),
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let messages: Vec<Value> = serde_json::from_slice(&out.stdout).unwrap();
    for (i, (server, tool)) in calls.iter().enumerate() {
        let message = messages
            .iter()
            .find(|m| m["tool_call_id"] == format!("c{i}"))
            .unwrap_or_else(|| panic!("no message for {tool}: {messages:?}"));
        let model_saw = message["content"].as_str().unwrap();
        let mut args = vec!["call", server, tool];
        if *tool == "get-structured-content" {
            args.extend(["--args", r#"{"location":"Chicago"}"#]);
        }
        let out = setup.run(&args);
        assert_eq!(
            String::from_utf8_lossy(&out.stdout),
            format!("{model_saw}\n"),
            "{server}/{tool}"
        );
    }
}

/// Issue 11, item 5: `--save DIR` writes images, audio and binary
/// resources to files and prints their paths where the placeholders were;
/// the other items print as the model sees them.
#[test]
fn call_save_writes_binary_items_to_files_and_prints_their_paths() {
    let setup = setup();
    let dir = tempdir();
    let saved = dir.path().join("out");
    let saved_str = saved.to_string_lossy().into_owned();
    let out = setup.run(&["call", "results", "media", "--save", &saved_str]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let printed = String::from_utf8(out.stdout).unwrap();
    let expected = [
        ("2.png", &b"PNG-BYTES"[..]),
        ("3.wav", b"WAV-BYTES"),
        ("4.pdf", b"%PDF-1.7"),
    ];
    let mut lines = vec!["three files:".to_owned()];
    lines.extend(
        expected
            .iter()
            .map(|(name, _)| saved.join(name).display().to_string()),
    );
    assert_eq!(printed, format!("{}\n", lines.join("\n")));
    for (name, bytes) in expected {
        assert_eq!(std::fs::read(saved.join(name)).unwrap(), bytes, "{name}");
    }

    // The example server's image is a real PNG.
    let home = tempdir();
    let out = Command::new(toolbridge())
        .args(["call", "example", "tiny_image", "--save", &saved_str])
        .env_remove("TOOLBRIDGE_CONFIG")
        .env("HOME", home.path())
        .env("XDG_CONFIG_HOME", home.path().join("config"))
        .env("XDG_CACHE_HOME", home.path().join("cache"))
        .env("XDG_DATA_HOME", home.path().join("data"))
        .output()
        .unwrap();
    let path = saved.join("1.png");
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        format!("{}\n", path.display())
    );
    assert!(std::fs::read(&path).unwrap().starts_with(b"\x89PNG"));
}

/// Issue 32's tenth finding: `--save DIR` followed a symlink planted in
/// DIR and overwrote its target, and overwrote existing files silently.
/// Now a name that is taken, by a link or a file, gets a new one, and
/// neither the link's target nor the file changes.
#[test]
fn call_save_never_follows_a_planted_link_nor_overwrites_a_file() {
    let setup = setup();
    let dir = tempdir();
    let saved = dir.path().join("out");
    std::fs::create_dir_all(&saved).unwrap();
    let victim = dir.path().join("victim");
    std::fs::write(&victim, "precious").unwrap();
    std::os::unix::fs::symlink(&victim, saved.join("2.png")).unwrap();
    std::fs::write(saved.join("3.wav"), "KEEP").unwrap();
    let saved_str = saved.to_string_lossy().into_owned();
    let out = setup.run(&["call", "results", "media", "--save", &saved_str]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious");
    assert_eq!(
        std::fs::read_to_string(saved.join("3.wav")).unwrap(),
        "KEEP"
    );
    let printed = String::from_utf8(out.stdout).unwrap();
    for (name, bytes) in [
        ("2-2.png", &b"PNG-BYTES"[..]),
        ("3-2.wav", b"WAV-BYTES"),
        ("4.pdf", b"%PDF-1.7"),
    ] {
        let path = saved.join(name);
        assert!(printed.contains(&path.display().to_string()), "{printed}");
        assert_eq!(std::fs::read(&path).unwrap(), bytes, "{name}");
    }
}

#[test]
fn a_timeout_that_is_not_a_positive_number_of_seconds_is_a_usage_error() {
    let home = tempdir();
    // 1e30 seconds does not fit a Duration, and 1e19 fits one but not a
    // clock reading plus it: the call used to panic (exit 101) on both.
    for bad in ["0", "-1", "NaN", "inf", "soon", "1e30", "1e19"] {
        let out = Command::new(toolbridge())
            .args(["call", "example", "hello", &format!("--timeout={bad}")])
            .env_remove("TOOLBRIDGE_CONFIG")
            .env("HOME", home.path())
            .env("XDG_CONFIG_HOME", home.path().join("config"))
            .env("XDG_CACHE_HOME", home.path().join("cache"))
            .env("XDG_DATA_HOME", home.path().join("data"))
            .env_remove("TOOLBRIDGE_LOG")
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "--timeout {bad}: {err}");
        assert!(err.contains("positive number of seconds"), "{bad}: {err}");
    }
}

/// `toolbridge … | head` closes the pipe before toolbridge is done writing:
/// every command that prints data exits 0 and says nothing about it.
#[test]
fn a_closed_stdout_is_not_an_error() {
    let setup = setup();
    for args in [
        &["tools"][..],
        &["servers", "list"],
        &["servers", "list", "--json"],
        &["presets", "list"],
        &["call", "results", "embedded_text"],
    ] {
        let (reader, writer) = std::io::pipe().unwrap();
        drop(reader);
        let out = setup
            .command(args)
            .stdout(writer)
            .stderr(std::process::Stdio::piped())
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(0), "{args:?}: {err}");
        assert!(!err.contains("toolbridge:"), "{args:?}: {err}");
    }
}

/// `--args` inline, `@FILE` and `-` (stdin), and `exec --input FILE`, all
/// read by one reader: the same arguments give the same answer, and a file
/// that is not JSON is a usage error naming the file.
#[test]
fn arguments_come_inline_from_a_file_or_from_stdin() {
    let home = tempdir();
    let file = home.path().join("args.json");
    std::fs::write(&file, r#"{"name":"Ada"}"#).unwrap();
    let toolbridge = |args: &[&str]| {
        let mut command = Command::new(toolbridge());
        command
            .args(args)
            .env_remove("TOOLBRIDGE_CONFIG")
            .env("HOME", home.path())
            .env("XDG_CONFIG_HOME", home.path().join("config"))
            .env("XDG_CACHE_HOME", home.path().join("cache"))
            .env("XDG_DATA_HOME", home.path().join("data"))
            .env_remove("TOOLBRIDGE_LOG");
        command
    };
    let at_file = format!("@{}", file.display());
    for (args, stdin) in [
        (
            vec!["call", "example", "hello", "--args", r#"{"name":"Ada"}"#],
            "",
        ),
        (vec!["call", "example", "hello", "--args", &at_file], ""),
        (
            vec!["call", "example", "hello", "--args", "-"],
            r#"{"name":"Ada"}"#,
        ),
    ] {
        let out = output_with_stdin(&mut toolbridge(&args), stdin.as_bytes());
        assert_eq!(
            String::from_utf8_lossy(&out.stdout),
            "Hello, Ada!\n",
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }

    let response = home.path().join("response.json");
    std::fs::write(
        &response,
        json!({ "role": "assistant", "tool_calls": [{ "id": "c1", "type": "function",
            "function": { "name": "mcp__example__hello", "arguments": r#"{"name":"Ada"}"# } }] })
        .to_string(),
    )
    .unwrap();
    let response = response.to_string_lossy().into_owned();
    let out = toolbridge(&["exec", "--format", "openai", "--input", &response])
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    let messages: Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stderr)));
    assert_eq!(messages[0]["content"], "Hello, Ada!");

    std::fs::write(&file, "{not json").unwrap();
    let out = toolbridge(&["call", "example", "hello", "--args", &at_file])
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains(&format!("{} is not valid JSON", file.display())),
        "{err}"
    );
}
