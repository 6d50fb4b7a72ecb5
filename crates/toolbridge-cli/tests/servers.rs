//! `toolbridge servers ...` run as a real process, each test in its own
//! temporary directory with its own `--config`.

use std::{
    fs,
    path::{Path, PathBuf},
    process::{Command, Output, Stdio},
};

use serde_json::{Value, json};

/// A temporary directory holding the config file for one test.
struct Sandbox {
    dir: tempfile::TempDir,
    config: PathBuf,
}

impl Sandbox {
    fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let config = dir.path().join("config.json");
        Sandbox { dir, config }
    }

    fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    fn command(&self, args: &[&str]) -> Command {
        let mut command = Command::new(env!("CARGO_BIN_EXE_toolbridge"));
        command
            .arg("--config")
            .arg(&self.config)
            .args(args)
            .env_remove("TOOLBRIDGE_CONFIG")
            .env("HOME", self.dir.path())
            .env("XDG_CONFIG_HOME", self.dir.path());
        command
    }

    fn run(&self, args: &[&str]) -> Run {
        Run(self.command(args).output().unwrap())
    }

    /// Runs and asserts success.
    fn ok(&self, args: &[&str]) -> Run {
        let run = self.run(args);
        assert_eq!(run.code(), 0, "{args:?} failed: {}", run.stderr());
        run
    }

    fn list(&self) -> Value {
        serde_json::from_str(&self.ok(&["servers", "list", "--json"]).stdout()).unwrap()
    }

    fn names(&self) -> Vec<String> {
        self.list()
            .as_array()
            .unwrap()
            .iter()
            .map(|s| s["name"].as_str().unwrap().to_string())
            .collect()
    }

    fn saved(&self) -> Value {
        serde_json::from_str(&fs::read_to_string(&self.config).unwrap()).unwrap()
    }
}

struct Run(Output);

impl Run {
    fn code(&self) -> i32 {
        self.0.status.code().unwrap()
    }
    fn stdout(&self) -> String {
        String::from_utf8(self.0.stdout.clone()).unwrap()
    }
    fn stderr(&self) -> String {
        String::from_utf8(self.0.stderr.clone()).unwrap()
    }
}

fn server<'a>(list: &'a Value, name: &str) -> &'a Value {
    list.as_array()
        .unwrap()
        .iter()
        .find(|s| s["name"] == name)
        .unwrap_or_else(|| panic!("{name} not in {list}"))
}

#[test]
fn a_fresh_machine_lists_the_built_in_example_server() {
    let sandbox = Sandbox::new();
    let run = sandbox.ok(&["servers", "list", "--json"]);
    let list: Value = serde_json::from_str(&run.stdout()).unwrap();
    assert_eq!(list.as_array().unwrap().len(), 1);
    let example = server(&list, "example");
    assert_eq!(example["builtin"], true);
    assert_eq!(example["transport"], "stdio");
    assert_eq!(
        example["command"],
        Path::new(env!("CARGO_BIN_EXE_toolbridge"))
            .to_string_lossy()
            .as_ref()
    );
    assert_eq!(example["args"], json!(["example-server"]));
    assert!(
        run.stderr().contains("no config file at"),
        "{}",
        run.stderr()
    );
    assert!(!sandbox.config.exists(), "listing creates nothing");
}

#[test]
fn add_list_disable_enable_remove_round_trip() {
    let sandbox = Sandbox::new();
    let run = sandbox.ok(&[
        "servers",
        "add",
        "time",
        "--",
        "uvx",
        "mcp-server-time",
        "--local-timezone",
        "UTC",
    ]);
    assert!(
        run.stderr().contains("added server \"time\""),
        "{}",
        run.stderr()
    );
    assert!(run.stdout().is_empty(), "messages go to stderr");
    sandbox.ok(&[
        "servers",
        "add",
        "node",
        "--command",
        "node",
        "--arg",
        "--inspect",
        "--arg",
        "server.js",
        "--env",
        "TZ=UTC",
        "--cwd",
        "/srv",
        "--timeout",
        "30",
    ]);
    sandbox.ok(&[
        "servers",
        "add",
        "remote",
        "--url",
        "https://example.com/mcp",
        "--header",
        "Authorization: Bearer ${TOKEN}",
    ]);
    sandbox.ok(&[
        "servers",
        "add",
        "legacy",
        "--url",
        "http://127.0.0.1:8000/sse",
        "--transport",
        "sse",
    ]);
    sandbox.ok(&["servers", "add", "ws", "--url", "ws://127.0.0.1:8765/ws"]);

    assert_eq!(sandbox.names(), ["time", "node", "remote", "legacy", "ws"]);
    assert_eq!(
        sandbox.saved(),
        json!({"mcpServers": {
            "time": {"command": "uvx", "args": ["mcp-server-time", "--local-timezone", "UTC"]},
            "node": {"command": "node", "args": ["--inspect", "server.js"], "env": {"TZ": "UTC"},
                     "cwd": "/srv", "timeout": 30},
            "remote": {"url": "https://example.com/mcp",
                       "headers": {"Authorization": "Bearer ${TOKEN}"}},
            "legacy": {"type": "sse", "url": "http://127.0.0.1:8000/sse"},
            "ws": {"url": "ws://127.0.0.1:8765/ws"}
        }})
    );
    let list = sandbox.list();
    assert_eq!(server(&list, "remote")["transport"], "http");
    assert_eq!(server(&list, "remote")["autoDetect"], true);
    assert_eq!(server(&list, "legacy")["transport"], "sse");
    assert_eq!(server(&list, "ws")["transport"], "websocket");
    assert_eq!(server(&list, "node")["timeout"], 30.0);

    sandbox.ok(&["servers", "disable", "time"]);
    assert_eq!(server(&sandbox.list(), "time")["enabled"], false);
    assert_eq!(sandbox.saved()["mcpServers"]["time"]["disabled"], true);
    let table = sandbox.ok(&["servers", "list"]).stdout();
    let time_line = table.lines().find(|l| l.starts_with("time ")).unwrap();
    assert!(time_line.contains("disabled"), "{table}");

    sandbox.ok(&["servers", "enable", "time"]);
    assert_eq!(server(&sandbox.list(), "time")["enabled"], true);
    assert!(
        sandbox.saved()["mcpServers"]["time"]
            .get("disabled")
            .is_none()
    );

    sandbox.ok(&["servers", "remove", "node"]);
    assert_eq!(sandbox.names(), ["time", "remote", "legacy", "ws"]);
}

#[test]
fn a_relative_cwd_is_saved_as_an_absolute_path() {
    let sandbox = Sandbox::new();
    let work = sandbox.path("work");
    fs::create_dir(&work).unwrap();
    let output = sandbox
        .command(&["servers", "add", "s", "--command", "x", "--cwd", "sub"])
        .current_dir(&work)
        .output()
        .unwrap();
    assert!(output.status.success(), "{output:?}");
    assert_eq!(
        sandbox.saved()["mcpServers"]["s"]["cwd"],
        work.join("sub").to_string_lossy().as_ref()
    );
}

#[test]
fn adding_an_existing_name_is_a_usage_error_and_changes_nothing() {
    let sandbox = Sandbox::new();
    sandbox.ok(&["servers", "add", "time", "--command", "uvx"]);
    let before = fs::read(&sandbox.config).unwrap();
    let run = sandbox.run(&["servers", "add", "time", "--command", "other"]);
    assert_eq!(run.code(), 2);
    assert!(
        run.stderr().contains("server \"time\" already exists"),
        "{}",
        run.stderr()
    );
    assert_eq!(fs::read(&sandbox.config).unwrap(), before);
}

#[test]
fn unknown_names_are_usage_errors_listing_the_known_ones() {
    let sandbox = Sandbox::new();
    sandbox.ok(&["servers", "add", "time", "--command", "uvx"]);
    for verb in ["remove", "enable", "disable"] {
        let run = sandbox.run(&["servers", verb, "tiem"]);
        assert_eq!(run.code(), 2, "{verb}");
        assert!(
            run.stderr().contains("unknown server \"tiem\"") && run.stderr().contains("has: time"),
            "{verb}: {}",
            run.stderr()
        );
    }
}

#[test]
fn editing_without_a_config_file_is_an_error_and_creates_nothing() {
    let sandbox = Sandbox::new();
    let run = sandbox.run(&["servers", "disable", "example"]);
    assert_eq!(run.code(), 2);
    assert!(run.stderr().contains("no config file"), "{}", run.stderr());
    assert!(!sandbox.config.exists());
}

#[test]
fn bad_arguments_are_usage_errors() {
    let sandbox = Sandbox::new();
    for args in [
        &["servers", "add", "x"][..],
        &["servers", "add", "x", "--url", "http://h", "--command", "y"],
        &[
            "servers", "add", "x", "--url", "http://h", "--header", "no colon",
        ],
        &["servers", "add", "x", "--command", "y", "--env", "NOEQUALS"],
        &["servers", "add", "x", "--command", "y", "--timeout", "0"],
        &[
            "servers",
            "add",
            "x",
            "--url",
            "http://h",
            "--transport",
            "grpc",
        ],
        &["servers", "add", "x", "--url", "not a url"],
        &[
            "servers",
            "add",
            "x",
            "--url",
            "http://h",
            "--transport",
            "websocket",
        ],
    ] {
        let run = sandbox.run(args);
        assert_eq!(run.code(), 2, "{args:?}: {}", run.stderr());
        assert!(!run.stderr().is_empty(), "{args:?}");
    }
    assert!(!sandbox.config.exists(), "no failed add creates the file");
}

#[test]
fn list_never_prints_secrets() {
    let sandbox = Sandbox::new();
    fs::write(
        &sandbox.config,
        r#"{"mcpServers": {
            "gh": {"type": "http", "url": "https://h/mcp?api_key=sk-url-secret&page=2",
                   "headers": {"Authorization": "Bearer ghp-header-secret"}},
            "local": {"command": "npx", "args": ["srv", "--token", "arg-secret"],
                      "env": {"API_KEY": "env-secret"}},
            "proxy": {"url": "https://user:pw-secret@h/mcp"}
        }}"#,
    )
    .unwrap();
    for args in [&["servers", "list"][..], &["servers", "list", "--json"]] {
        let run = sandbox.ok(args);
        let output = run.stdout() + &run.stderr();
        for secret in [
            "sk-url-secret",
            "ghp-header-secret",
            "arg-secret",
            "env-secret",
            "pw-secret",
        ] {
            assert!(
                !output.contains(secret),
                "{secret} leaked by {args:?}:\n{output}"
            );
        }
        assert!(output.contains("***"), "{output}");
        assert!(output.contains("page=2"), "non-secrets are shown: {output}");
    }
    let list = sandbox.list();
    assert_eq!(
        server(&list, "gh")["headers"],
        json!({"Authorization": "***"})
    );
    assert_eq!(server(&list, "local")["env"], json!({"API_KEY": "***"}));
}

#[test]
fn a_malformed_config_exits_2_with_file_line_column_and_is_left_unchanged() {
    let sandbox = Sandbox::new();
    let broken = "{\n  \"mcpServers\": {\n    \"time\": {\"command\": \"uvx\",}\n  }\n}\n";
    fs::write(&sandbox.config, broken).unwrap();
    let other = sandbox.path("other.json");
    fs::write(&other, r#"{"mcpServers": {"b": {"command": "b"}}}"#).unwrap();
    let other = other.to_str().unwrap();
    let location = format!("{}:3:31: invalid JSON", sandbox.config.display());
    for args in [
        &["servers", "list"][..],
        &["servers", "add", "b", "--command", "b"],
        &["servers", "remove", "time"],
        &["servers", "disable", "time"],
        &["servers", "enable", "time"],
        &["servers", "import", other],
    ] {
        let run = sandbox.run(args);
        assert_eq!(run.code(), 2, "{args:?}");
        assert!(
            run.stderr().contains(&location),
            "{args:?}: expected {location} in {}",
            run.stderr()
        );
        assert_eq!(
            fs::read_to_string(&sandbox.config).unwrap(),
            broken,
            "{args:?}"
        );
        assert!(run.stdout().is_empty(), "{args:?}");
    }
}

#[test]
fn a_field_error_exits_2_naming_file_line_column_server_and_field() {
    let sandbox = Sandbox::new();
    fs::write(
        &sandbox.config,
        "{\n  \"mcpServers\": {\n    \"time\": {\n      \"command\": \"uvx\",\n      \"args\": \"mcp-server-time\"\n    }\n  }\n}\n",
    )
    .unwrap();
    let run = sandbox.run(&["servers", "list"]);
    assert_eq!(run.code(), 2);
    assert_eq!(
        run.stderr().trim_end(),
        format!(
            "toolbridge: {}:5:15: server \"time\": \"args\" must be an array of strings, not a string",
            sandbox.config.display()
        )
    );
}

#[test]
fn concurrent_adds_from_separate_processes_all_land() {
    let sandbox = Sandbox::new();
    let names: Vec<String> = (0..8).map(|i| format!("server-{i}")).collect();
    let children: Vec<_> = names
        .iter()
        .map(|name| {
            sandbox
                .command(&["servers", "add", name, "--command", "srv", "--arg", name])
                .stdout(Stdio::null())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    for child in children {
        let output = child.wait_with_output().unwrap();
        assert!(
            output.status.success(),
            "{}",
            String::from_utf8_lossy(&output.stderr)
        );
    }
    let mut landed = sandbox.names();
    landed.sort();
    assert_eq!(landed, names);
}

#[test]
fn unknown_fields_survive_cli_edits() {
    let sandbox = Sandbox::new();
    fs::write(
        &sandbox.config,
        r#"{"$schema": "x", "mcpServers": {"a": {"command": "a", "autoApprove": ["t"], "note": {"k": 1}}}, "theme": "dark"}"#,
    )
    .unwrap();
    sandbox.ok(&["servers", "add", "b", "--command", "b"]);
    sandbox.ok(&["servers", "disable", "a"]);
    sandbox.ok(&["servers", "enable", "a"]);
    let saved = sandbox.saved();
    assert_eq!(
        saved.as_object().unwrap().keys().collect::<Vec<_>>(),
        ["$schema", "mcpServers", "theme"]
    );
    assert_eq!(
        saved["mcpServers"]["a"],
        json!({"command": "a", "autoApprove": ["t"], "note": {"k": 1}})
    );
}

#[test]
fn import_merges_other_clients_files_skipping_clashes_unless_forced() {
    let sandbox = Sandbox::new();
    sandbox.ok(&["servers", "add", "time", "--command", "mine"]);

    let claude = sandbox.path("claude_desktop_config.json");
    fs::write(
        &claude,
        r#"{"mcpServers": {
            "time": {"command": "uvx", "args": ["mcp-server-time"]},
            "fs": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem", "/tmp"]},
            "broken": {"command": "x", "args": "oops"}
        }}"#,
    )
    .unwrap();
    let run = sandbox.ok(&["servers", "import", claude.to_str().unwrap()]);
    let stderr = run.stderr();
    assert!(
        stderr.contains("added from") && stderr.contains("fs"),
        "{stderr}"
    );
    assert!(
        stderr.contains("skipped") && stderr.contains("time") && stderr.contains("--force"),
        "{stderr}"
    );
    assert!(
        stderr.contains("not imported") && stderr.contains("server \"broken\""),
        "{stderr}"
    );
    assert_eq!(sandbox.names(), ["time", "fs"]);
    assert_eq!(sandbox.saved()["mcpServers"]["time"]["command"], "mine");

    let run = sandbox.ok(&["servers", "import", claude.to_str().unwrap(), "--force"]);
    assert!(
        run.stderr().contains("replaced: time, fs"),
        "{}",
        run.stderr()
    );
    assert_eq!(sandbox.saved()["mcpServers"]["time"]["command"], "uvx");

    let vscode = sandbox.path("settings.json");
    fs::write(
        &vscode,
        r#"{
  // VS Code user settings
  "editor.tabSize": 2,
  "mcp": {
    "servers": {
      "fetch": {"type": "stdio", "command": "uvx", "args": ["mcp-server-fetch"]},
    },
  },
}"#,
    )
    .unwrap();
    sandbox.ok(&["servers", "import", vscode.to_str().unwrap()]);
    assert_eq!(sandbox.names(), ["time", "fs", "fetch"]);
}

#[test]
fn importing_a_file_with_no_servers_is_a_usage_error() {
    let sandbox = Sandbox::new();
    let empty = sandbox.path("empty.json");
    fs::write(&empty, "{}").unwrap();
    let run = sandbox.run(&["servers", "import", empty.to_str().unwrap()]);
    assert_eq!(run.code(), 2);
    assert!(
        run.stderr().contains("no MCP servers found"),
        "{}",
        run.stderr()
    );
    assert!(!sandbox.config.exists());
}
