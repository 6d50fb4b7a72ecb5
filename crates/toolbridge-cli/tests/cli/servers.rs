//! `toolbridge servers ...` run as a real process, each test in its own
//! temporary directory whose config file is at the default location
//! (`$XDG_CONFIG_HOME/toolbridge/config.json`).

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
        // The default location: only there does a missing file mean the
        // built-in example server.
        let config = dir.path().join("toolbridge").join("config.json");
        fs::create_dir_all(dir.path().join("toolbridge")).unwrap();
        Sandbox { dir, config }
    }

    fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    fn command(&self, args: &[&str]) -> Command {
        let mut command = Command::new(env!("CARGO_BIN_EXE_toolbridge"));
        command
            .args(args)
            .env_remove("TOOLBRIDGE_CONFIG")
            .env("HOME", self.dir.path())
            .env("XDG_CONFIG_HOME", self.dir.path())
            .env("XDG_CACHE_HOME", self.dir.path().join("cache"))
            .env("XDG_DATA_HOME", self.dir.path().join("data"));
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

/// Regression: `--config` or `$TOOLBRIDGE_CONFIG` naming a file that does
/// not exist silently gave the example server instead.
#[test]
fn a_named_config_that_does_not_exist_exits_2_naming_it() {
    let sandbox = Sandbox::new();
    let missing = sandbox.path("typo.json");
    let missing_str = missing.to_str().unwrap();
    for (via_flag, args) in [
        (true, &["servers", "list"][..]),
        (true, &["tools"]),
        (
            true,
            &["call", "example", "echo", "--args", "{\"text\": \"x\"}"],
        ),
        (false, &["servers", "list"]),
        (false, &["tools"]),
    ] {
        let mut command = sandbox.command(args);
        if via_flag {
            command = sandbox.command(&[&["--config", missing_str][..], args].concat());
        } else {
            command.env("TOOLBRIDGE_CONFIG", &missing);
        }
        let run = Run(command.output().unwrap());
        assert_eq!(run.code(), 2, "{args:?}: {}", run.stderr());
        let expected = format!("config file {missing_str} does not exist");
        assert!(
            run.stderr().contains(&expected),
            "{args:?}: {}",
            run.stderr()
        );
        assert!(run.stderr().contains("servers add"), "{}", run.stderr());
        assert!(run.stdout().is_empty(), "{args:?}: {}", run.stdout());
        assert!(!missing.exists());
    }
    // Adding a server to a named file that does not exist creates it.
    let run = Run(sandbox
        .command(&[
            "--config",
            missing_str,
            "servers",
            "add",
            "t",
            "--command",
            "t",
        ])
        .output()
        .unwrap());
    assert_eq!(run.code(), 0, "{}", run.stderr());
    assert!(missing.exists());
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
    // A missing colon: trailing commas and comments are JSONC, which every
    // read accepts, so they are no longer an example of a broken file.
    let broken = "{\n  \"mcpServers\": {\n    \"time\": {\"command\" \"uvx\"}\n  }\n}\n";
    fs::write(&sandbox.config, broken).unwrap();
    let other = sandbox.path("other.json");
    fs::write(&other, r#"{"mcpServers": {"b": {"command": "b"}}}"#).unwrap();
    let other = other.to_str().unwrap();
    let location = format!("{}:3:24: invalid JSON", sandbox.config.display());
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

/// A script that starts the example server (`toolbridge example-server`),
/// writing its environment to `<script>.env` first; whatever arguments a
/// config gives it are dropped.
fn example_script(path: &Path) -> PathBuf {
    use std::os::unix::fs::PermissionsExt;
    fs::create_dir_all(path.parent().unwrap()).unwrap();
    let text = format!(
        "#!/bin/sh\nenv > \"$0.env\"\nexec '{}' example-server\n",
        env!("CARGO_BIN_EXE_toolbridge")
    );
    fs::write(path, text).unwrap();
    fs::set_permissions(path, fs::Permissions::from_mode(0o755)).unwrap();
    path.to_path_buf()
}

/// A fixture of crates/toolbridge/tests/configs, written to `to`.
fn fixture(name: &str, to: &Path) -> String {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../toolbridge/tests/configs");
    let text = fs::read_to_string(dir.join(name)).unwrap();
    fs::create_dir_all(to.parent().unwrap()).unwrap();
    fs::write(to, &text).unwrap();
    text
}

/// Regression: `--config .vscode/mcp.json` failed on VS Code's comments and
/// trailing commas although `servers import` read the same file.
#[test]
fn other_applications_files_work_with_tools_and_call_as_they_are() {
    let sandbox = Sandbox::new();
    let script = example_script(&sandbox.path("bin/tb-example"));
    example_script(&sandbox.path("project/tools/tb-example"));
    fs::write(sandbox.path("project/.env"), "FROM_FILE=1\n").unwrap();
    let cases = [
        ("vscode-mcp.json", "project/.vscode/mcp.json"),
        ("vscode-settings.json", "Code/User/settings.json"),
        ("cursor-mcp.json", ".cursor/mcp.json"),
        (
            "windsurf-mcp_config.json",
            ".codeium/windsurf/mcp_config.json",
        ),
        ("zed-settings.json", "zed/settings.json"),
        ("cline_mcp_settings.json", "cline/cline_mcp_settings.json"),
        (
            "claude_desktop_config.json",
            "Claude/claude_desktop_config.json",
        ),
    ];
    for (name, place) in cases {
        let path = sandbox.path(place);
        let original = fixture(name, &path);
        let path = path.to_str().unwrap();
        let run = |args: &[&str]| {
            let mut command = sandbox.command(&[&["--config", path][..], args].concat());
            command
                .env("TB_EXAMPLE", &script)
                .env("TB_MARKER", "m")
                .env("TOOLBRIDGE_INPUT_API_KEY", "k");
            Run(command.output().unwrap())
        };
        let tools = run(&["tools"]);
        assert_eq!(tools.code(), 0, "{name}: {}", tools.stderr());
        let tools: Value = serde_json::from_str(&tools.stdout()).unwrap();
        assert!(
            tools
                .as_array()
                .unwrap()
                .iter()
                .any(|t| t["name"] == "echo"),
            "{name}: {tools}"
        );
        let call = run(&[
            "call",
            "example",
            "echo",
            "--args",
            r#"{"text": "via-file"}"#,
        ]);
        assert_eq!(call.code(), 0, "{name}: {}", call.stderr());
        assert!(
            call.stdout().contains("via-file"),
            "{name}: {}",
            call.stdout()
        );
        assert!(
            !call.stderr().contains("unknown key"),
            "{name}: {}",
            call.stderr()
        );
        assert_eq!(
            fs::read_to_string(path).unwrap(),
            original,
            "{name}: reading changed it"
        );
    }
}

/// Regression: `servers add` wrote a top-level `mcpServers` into VS Code's
/// settings.json (which VS Code does not read), dropped its comments and
/// re-indented it, and left a `settings.json.lock` behind.
#[test]
fn writes_go_where_the_application_reads_keeping_comments_and_indentation() {
    let sandbox = Sandbox::new();
    let dir = sandbox.path("Code/User");
    let path = dir.join("settings.json");
    let original = fixture("vscode-settings.json", &path);
    let config = path.to_str().unwrap();
    let edit = |args: &[&str]| {
        let run = Run(sandbox
            .command(&[&["--config", config][..], args].concat())
            .output()
            .unwrap());
        assert_eq!(run.code(), 0, "{args:?}: {}", run.stderr());
        fs::read_to_string(&path).unwrap()
    };

    let added = edit(&["servers", "add", "time", "--", "uvx", "mcp-server-time"]);
    let expected = original.replace(
        "                \"args\": []\n            }\n",
        "                \"args\": []\n            },\n            \"time\": {\n                \"type\": \"stdio\",\n                \"command\": \"uvx\",\n                \"args\": [\n                    \"mcp-server-time\"\n                ]\n            }\n",
    );
    assert_eq!(added, expected);
    assert!(!added.contains("mcpServers"));

    // VS Code reads neither `disabled` nor `timeout`: refused, file unchanged.
    for args in [
        &["servers", "disable", "example"][..],
        &["servers", "add", "t2", "--timeout", "5", "--command", "t2"],
    ] {
        let run = Run(sandbox
            .command(&[&["--config", config][..], args].concat())
            .output()
            .unwrap());
        assert_eq!(run.code(), 2, "{args:?}");
        assert!(
            run.stderr().contains("VS Code does not read"),
            "{}",
            run.stderr()
        );
        assert_eq!(fs::read_to_string(&path).unwrap(), added, "{args:?}");
    }

    let removed = edit(&["servers", "remove", "time"]);
    assert_eq!(removed, original, "add then remove is a round trip");
    let mut entries: Vec<String> = fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    entries.sort();
    assert_eq!(entries, ["settings.json"], "no lock or temporary file left");

    // Zed: `context_servers`, in the shape Zed reads (no `type`).
    let zed = sandbox.path("zed/settings.json");
    fixture("zed-settings.json", &zed);
    let run = Run(sandbox
        .command(&[
            "--config",
            zed.to_str().unwrap(),
            "servers",
            "add",
            "srv",
            "--command",
            "srv",
        ])
        .output()
        .unwrap());
    assert_eq!(run.code(), 0, "{}", run.stderr());
    let text = fs::read_to_string(&zed).unwrap();
    assert!(text.starts_with("// Zed settings\n"), "{text}");
    assert!(
        text.contains("    \"srv\": {\n      \"source\": \"custom\",\n      \"command\": \"srv\"\n    }\n  }\n}"),
        "{text}"
    );
    assert!(
        !text.contains("mcpServers") && !text.contains("\"type\""),
        "{text}"
    );
}

#[test]
fn a_misspelt_key_is_reported_and_the_rest_works() {
    let sandbox = Sandbox::new();
    fs::write(
        &sandbox.config,
        r#"{"mcpServers": {"time": {"command": "uvx", "enviroment": {"TZ": "UTC"}, "autoApprove": []}}}"#,
    )
    .unwrap();
    let run = sandbox.ok(&["servers", "list"]);
    let stderr = run.stderr();
    assert!(
        stderr.contains(
            "server \"time\": unknown key \"enviroment\" is ignored; did you mean \"env\"?"
        ),
        "{stderr}"
    );
    assert!(!stderr.contains("autoApprove"), "{stderr}");
    assert!(run.stdout().contains("time"), "{}", run.stdout());
}

#[test]
fn new_fields_are_listed_without_secrets() {
    let sandbox = Sandbox::new();
    fs::write(
        &sandbox.config,
        r#"{
  "toolbridge": {"inheritEnv": ["LC_*"], "toolCacheTtl": 600, "resultBudget": 5000, "startupTimeout": 20},
  "mcpServers": {
    "s": {"command": "srv", "env": {"TOKEN": "sk-secret"}, "startupTimeout": 5,
          "disabledTools": ["rm"], "resultBudget": 100, "inheritEnv": ["HTTPS_PROXY"]}
  }
}"#,
    )
    .unwrap();
    let list = sandbox.list();
    let s = server(&list, "s");
    assert_eq!(s["startupTimeout"], 5.0);
    assert_eq!(s["disabledTools"], json!(["rm"]));
    assert_eq!(s["resultBudget"], 100);
    assert_eq!(s["inheritEnv"], json!(["HTTPS_PROXY"]));
    assert!(!list.to_string().contains("sk-secret"));

    for (bad, message) in [
        (
            r#""resultBudget": 0"#,
            "\"resultBudget\" must be a positive whole number",
        ),
        (
            r#""startupTimeout": -1"#,
            "\"startupTimeout\" must be a positive number of seconds",
        ),
        (
            r#""disabledTools": "rm""#,
            "\"disabledTools\" must be an array of strings",
        ),
        (
            r#""inheritEnv": ["A=B"]"#,
            "\"inheritEnv\" item 0 (\"A=B\") is not a variable name",
        ),
    ] {
        fs::write(
            &sandbox.config,
            format!(r#"{{"mcpServers": {{"s": {{"command": "srv", {bad}}}}}}}"#),
        )
        .unwrap();
        let run = sandbox.run(&["servers", "list"]);
        assert_eq!(run.code(), 2, "{bad}");
        assert!(run.stderr().contains(message), "{bad}: {}", run.stderr());
        assert!(
            run.stderr().contains("server \"s\""),
            "{bad}: {}",
            run.stderr()
        );
    }
}

/// Regression: servers got a minimal environment with no way to pass a
/// proxy, a CA bundle or a display variable.
#[test]
fn inherit_env_passes_named_variables_into_the_server() {
    let sandbox = Sandbox::new();
    let script = example_script(&sandbox.path("bin/tb-example"));
    fs::write(
        &sandbox.config,
        format!(
            r#"{{
  "toolbridge": {{"inheritEnv": ["LC_*"]}},
  "mcpServers": {{
    "s": {{"command": "{}", "inheritEnv": ["HTTPS_PROXY", "SSL_CERT_FILE"]}}
  }}
}}"#,
            script.display()
        ),
    )
    .unwrap();
    let mut command = sandbox.command(&["call", "s", "echo", "--args", r#"{"text": "x"}"#]);
    command
        .env("HTTPS_PROXY", "http://proxy.test:3128")
        .env("SSL_CERT_FILE", "/etc/ca.pem")
        .env("LC_TB_TEST", "global")
        .env("NOT_INHERITED", "secret");
    let run = Run(command.output().unwrap());
    assert_eq!(run.code(), 0, "{}", run.stderr());
    let env = fs::read_to_string(sandbox.path("bin/tb-example.env")).unwrap();
    for line in [
        "HTTPS_PROXY=http://proxy.test:3128",
        "SSL_CERT_FILE=/etc/ca.pem",
        "LC_TB_TEST=global",
    ] {
        assert!(env.lines().any(|l| l == line), "{line} not in {env}");
    }
    assert!(!env.contains("NOT_INHERITED"), "{env}");
}

/// `${input:ID}` without its variable is asked on the terminal (here a
/// pseudo-terminal from `script`), hidden for `"password": true`, and passed
/// to the server.
#[cfg(target_os = "linux")]
#[test]
fn a_vs_code_input_is_asked_on_a_terminal_without_echo() {
    use std::{
        io::{Read, Write},
        sync::{Arc, Mutex},
        time::{Duration, Instant},
    };
    let sandbox = Sandbox::new();
    example_script(&sandbox.path("project/tools/tb-example"));
    fs::write(sandbox.path("project/.env"), "").unwrap();
    let config = sandbox.path("project/.vscode/mcp.json");
    fixture("vscode-mcp.json", &config);
    let line = format!(
        "'{}' --config '{}' call example echo --args '{{\"text\": \"x\"}}'",
        env!("CARGO_BIN_EXE_toolbridge"),
        config.display()
    );
    let mut child = Command::new("/usr/bin/script")
        .args(["-q", "-e", "-c", &line, "/dev/null"])
        .env_remove("TOOLBRIDGE_CONFIG")
        .env("HOME", sandbox.dir.path())
        .env("XDG_CONFIG_HOME", sandbox.dir.path())
        .env("XDG_CACHE_HOME", sandbox.path("cache"))
        .env("XDG_DATA_HOME", sandbox.path("data"))
        .env("TB_MARKER", "m")
        .env("SHELL", "/bin/sh")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    // The reader keeps everything the terminal showed and tells the test
    // each time more came, so the test waits on that, not on a clock.
    let seen = Arc::new(Mutex::new(Vec::new()));
    let (more, arrived) = std::sync::mpsc::channel::<()>();
    let mut stdout = child.stdout.take().unwrap();
    let reader = {
        let seen = Arc::clone(&seen);
        std::thread::spawn(move || {
            let mut buf = [0u8; 4096];
            while let Ok(n) = stdout.read(&mut buf) {
                if n == 0 {
                    break;
                }
                seen.lock().unwrap().extend_from_slice(&buf[..n]);
                let _ = more.send(());
            }
        })
    };
    let deadline = Instant::now() + Duration::from_secs(30);
    while !String::from_utf8_lossy(&seen.lock().unwrap()).contains("Example API key") {
        let left = deadline.saturating_duration_since(Instant::now());
        assert!(
            arrived.recv_timeout(left).is_ok(),
            "no prompt: {:?}",
            String::from_utf8_lossy(&seen.lock().unwrap())
        );
    }
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(b"typed-s3cret\n").unwrap();
    let status = child.wait().unwrap();
    drop(stdin);
    reader.join().unwrap();
    let output = String::from_utf8_lossy(&seen.lock().unwrap()).into_owned();
    assert!(status.success(), "{output}");
    assert!(output.contains("TOOLBRIDGE_INPUT_API_KEY"), "{output}");
    assert!(
        !output.contains("typed-s3cret"),
        "the answer was echoed: {output}"
    );
    let env = fs::read_to_string(sandbox.path("project/tools/tb-example.env")).unwrap();
    assert!(env.lines().any(|l| l == "API_KEY=typed-s3cret"), "{env}");
}

#[test]
fn the_list_shows_each_stdio_servers_sandbox() {
    let sandbox = Sandbox::new();
    fs::write(
        &sandbox.config,
        json!({
            "toolbridge": {"sandbox": {"network": "none"}},
            "mcpServers": {
                "inherits": {"command": "srv"},
                "own": {"command": "srv", "sandbox": {"write": ["~/data"], "memoryMb": 512}},
                "plain": {"command": "srv", "sandbox": "default"},
                "open": {"command": "srv", "sandbox": false},
                "remote": {"url": "https://example.com/mcp"}
            }
        })
        .to_string(),
    )
    .unwrap();
    let list = sandbox.list();
    assert_eq!(
        server(&list, "inherits")["sandbox"],
        json!({"read": [], "write": [], "network": "none"})
    );
    assert_eq!(
        server(&list, "own")["sandbox"],
        json!({"read": [], "write": ["~/data"], "network": "any", "memoryMb": 512})
    );
    assert_eq!(server(&list, "plain")["sandbox"], "default");
    assert_eq!(server(&list, "open")["sandbox"], false);
    assert!(server(&list, "remote").get("sandbox").is_none(), "{list}");
    let text = sandbox.ok(&["servers", "list"]).stdout();
    let line = |name: &str| {
        text.lines()
            .find(|l| l.starts_with(name))
            .unwrap_or_else(|| panic!("{name} not in {text}"))
            .to_owned()
    };
    assert!(line("plain").contains("[sandbox default]"), "{text}");
    assert!(line("open").contains("[sandbox off]"), "{text}");
    assert!(line("own").contains(r#""memoryMb":512"#), "{text}");
    assert!(!line("remote").contains("sandbox"), "{text}");
}
