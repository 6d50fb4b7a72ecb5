//! Other applications' config files, read unchanged: each fixture under
//! `tests/configs/` (realistic, comments and all) is loaded, resolved, and
//! its servers started, listed and called — real example-server processes
//! through a wrapper script the test writes.

use crate::common;

use std::{
    collections::HashMap,
    fs,
    os::unix::fs::PermissionsExt,
    path::{Path, PathBuf},
};

use common::fixtures::example_server;
use serde_json::json;
use toolbridge::{
    config::{Config, ConfigError, TransportKind, TransportSpec},
    pool::{CallOptions, Pool, PoolError, PoolOptions},
    rmcp_model::ContentBlock,
};

/// A temporary home with the wrapper script that starts the example server
/// and writes its environment to `<script>.env` first.
struct Home {
    dir: tempfile::TempDir,
}

impl Home {
    fn new() -> Home {
        let home = Home {
            dir: tempfile::tempdir().unwrap(),
        };
        home.script("bin/tb-example");
        home
    }

    fn path(&self, relative: &str) -> PathBuf {
        self.dir.path().join(relative)
    }

    /// Writes the wrapper script at `relative` and returns its path.
    fn script(&self, relative: &str) -> PathBuf {
        let path = self.path(relative);
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        let text = format!("#!/bin/sh\nenv > \"$0.env\"\nexec '{}'\n", example_server());
        fs::write(&path, text).unwrap();
        fs::set_permissions(&path, fs::Permissions::from_mode(0o755)).unwrap();
        path
    }

    /// The environment the config's `${VAR}`s see.
    fn env(&self) -> HashMap<String, String> {
        HashMap::from([
            ("HOME".to_string(), self.dir.path().display().to_string()),
            (
                "TB_EXAMPLE".to_string(),
                self.path("bin/tb-example").display().to_string(),
            ),
            ("TB_MARKER".to_string(), "marker-value".to_string()),
        ])
    }

    /// Copies fixture `name` to `relative` in this home, with
    /// `__PROJECT__` replaced by the current directory.
    fn fixture(&self, name: &str, relative: &str) -> PathBuf {
        let text = fs::read_to_string(
            Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("tests/configs")
                .join(name),
        )
        .unwrap();
        let cwd = std::env::current_dir().unwrap();
        let text = text.replace("__PROJECT__", cwd.to_str().unwrap());
        let path = self.path(relative);
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(&path, text).unwrap();
        path
    }

    fn load(&self, path: &Path) -> Config {
        Config::load(path)
            .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
            .with_env(self.env())
    }
}

/// Starts every enabled server of `config`, checks that each lists `echo`
/// and answers it, and returns the tool names per server.
async fn list_and_call(config: &Config) -> HashMap<String, Vec<String>> {
    let specs: Vec<_> = config
        .resolve_enabled()
        .into_iter()
        .map(|spec| spec.unwrap_or_else(|e| panic!("{e}")))
        .collect();
    let names: Vec<String> = specs.iter().map(|s| s.name.clone()).collect();
    assert!(!names.is_empty());
    let pool = Pool::new(specs, PoolOptions::default());
    let listing = pool.list_tools_of(&names).await;
    assert!(listing.failures.is_empty(), "{:?}", listing.failures);
    let mut tools: HashMap<String, Vec<String>> = HashMap::new();
    for tool in listing.tools {
        tools.entry(tool.server_id).or_default().push(tool.name);
    }
    for name in &names {
        assert!(
            tools[name].contains(&"echo".to_string()),
            "{name}: {tools:?}"
        );
        let result = pool
            .call_tool(
                name,
                "echo",
                json!({"text": "hi"}).as_object().cloned(),
                CallOptions::default(),
            )
            .await
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        let ContentBlock::Text(text) = &result.content[0] else {
            panic!("{name}: {result:?}")
        };
        assert!(text.text.contains("hi"), "{name}: {}", text.text);
    }
    pool.close_all().await;
    tools
}

fn child_env(script: &Path) -> String {
    let mut env = script.as_os_str().to_owned();
    env.push(".env");
    fs::read_to_string(env).unwrap()
}

#[tokio::test]
async fn claude_desktop_config_is_read_and_its_server_answers() {
    let home = Home::new();
    let path = home.fixture(
        "claude_desktop_config.json",
        "Claude/claude_desktop_config.json",
    );
    let config = home.load(&path);
    assert!(config.warnings().is_empty(), "{:?}", config.warnings());
    list_and_call(&config).await;
    assert!(child_env(&home.path("bin/tb-example")).contains("TZ=UTC"));
}

#[tokio::test]
async fn vs_code_mcp_json_with_inputs_env_file_and_workspace_folder() {
    let home = Home::new();
    let project = home.path("project");
    let script = home.script("project/tools/tb-example");
    fs::write(
        project.join(".env"),
        "# from the env file\nFROM_FILE=file-value\nAPI_KEY=overridden\n",
    )
    .unwrap();
    let path = home.fixture("vscode-mcp.json", "project/.vscode/mcp.json");

    // Without an answer the input is an error naming server, field and input.
    let config = home.load(&path);
    assert!(config.warnings().is_empty(), "{:?}", config.warnings());
    let error = config.resolve("example").unwrap_err();
    assert!(matches!(error, ConfigError::UnsetInput { .. }), "{error:?}");
    let message = error.to_string();
    for part in [
        "server \"example\"",
        "\"env\"",
        "${input:api-key}",
        "TOOLBRIDGE_INPUT_API_KEY",
    ] {
        assert!(message.contains(part), "{part} not in {message}");
    }

    let mut env = home.env();
    env.insert("TOOLBRIDGE_INPUT_API_KEY".into(), "s3cret".into());
    let config = Config::load(&path).unwrap().with_env(env);
    list_and_call(&config).await;
    let child = child_env(&script);
    for line in [
        "API_KEY=s3cret",
        "FROM_FILE=file-value",
        "FROM_ENV=marker-value",
    ] {
        assert!(child.lines().any(|l| l == line), "{line} not in {child}");
    }
}

#[tokio::test]
async fn vs_code_settings_json_mcp_servers_are_read() {
    let home = Home::new();
    let path = home.fixture("vscode-settings.json", "Code/User/settings.json");
    let config = home.load(&path);
    assert_eq!(config.server_names(), ["example"]);
    list_and_call(&config).await;
}

#[tokio::test]
async fn cursor_user_home_is_expanded() {
    let home = Home::new();
    let path = home.fixture("cursor-mcp.json", ".cursor/mcp.json");
    let config = home.load(&path);
    list_and_call(&config).await;
    let child = child_env(&home.path("bin/tb-example"));
    let expected = format!("EXAMPLE_HOME={}", home.dir.path().display());
    assert!(child.lines().any(|l| l == expected), "{child}");
}

#[tokio::test]
async fn windsurf_server_url_is_the_url() {
    let home = Home::new();
    let path = home.fixture(
        "windsurf-mcp_config.json",
        ".codeium/windsurf/mcp_config.json",
    );
    let config = home.load(&path);
    assert!(config.warnings().is_empty(), "{:?}", config.warnings());
    let remote = config.resolve("remote").unwrap();
    let TransportSpec::Http(http) = &remote.transport else {
        panic!("{remote:?}")
    };
    assert_eq!(http.url, "https://mcp.example.com/mcp");
    // Disabled: read, never expanded (issue 24, item 4), so an unset
    // variable in it troubles no command.
    assert_eq!(http.headers["Authorization"], "Bearer ${env:TB_MARKER}");
    assert!(remote.disabled);
    list_and_call(&config).await;
}

#[tokio::test]
async fn zed_context_servers_in_both_forms_and_extensions_skipped() {
    let home = Home::new();
    let path = home.fixture("zed-settings.json", ".config/zed/settings.json");
    let config = home.load(&path);
    assert_eq!(config.server_names(), ["example", "example-flat"]);
    let warnings: Vec<String> = config.warnings().iter().map(ToString::to_string).collect();
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    assert!(
        warnings[0].contains("server \"mcp-server-github\": provided by a Zed extension"),
        "{warnings:?}"
    );
    let tools = list_and_call(&config).await;
    assert_eq!(tools.len(), 2);
    // The older form's nested env (both servers share one script, so the
    // spec is checked rather than which child wrote the env file last).
    let TransportSpec::Stdio(old) = config.resolve("example").unwrap().transport else {
        panic!("stdio")
    };
    assert_eq!(old.env["TZ"], "UTC");
    assert_eq!(old.command, home.env()["TB_EXAMPLE"]);
}

#[tokio::test]
async fn claude_json_user_servers_and_this_projects_servers() {
    let home = Home::new();
    let path = home.fixture("claude.json", ".claude.json");
    let config = home.load(&path);
    // The project whose key is the current directory; not other projects.
    assert_eq!(config.server_names(), ["example", "project-example"]);
    list_and_call(&config).await;
}

#[tokio::test]
async fn cline_transport_type_and_disabled_tools() {
    let home = Home::new();
    let path = home.fixture("cline_mcp_settings.json", "cline/cline_mcp_settings.json");
    let config = home.load(&path);
    assert!(config.warnings().is_empty(), "{:?}", config.warnings());
    assert_eq!(
        config.resolve("remote").unwrap().kind(),
        TransportKind::Http
    );
    assert_eq!(config.resolve("legacy").unwrap().kind(), TransportKind::Sse);
    let tools = list_and_call(&config).await;
    assert!(tools["example"].contains(&"hello".to_string()), "{tools:?}");
    assert!(
        !tools["example"].contains(&"tiny_audio".to_string()),
        "disabled tool listed: {tools:?}"
    );

    // Nor can it be called.
    let spec = config.resolve("example").unwrap();
    let pool = Pool::new([spec], PoolOptions::default());
    let error = pool
        .call_tool("example", "tiny_audio", None, CallOptions::default())
        .await
        .unwrap_err();
    assert!(matches!(error, PoolError::ToolDisabled { .. }), "{error:?}");
    assert!(error.is_usage());
    assert!(
        error.to_string().contains("unknown tool \"tiny_audio\""),
        "{error}"
    );
    pool.close_all().await;
}

#[test]
fn a_misspelt_key_is_a_warning_naming_server_key_and_the_nearest_known_key() {
    let text = r#"{
  "toolbridge": {"inheritEnv": ["HTTPS_PROXY"], "resultBudgte": 10},
  "mcpServers": {
    "time": {"command": "uvx", "enviroment": {"TZ": "UTC"}, "autoApprove": [], "description": "clock"}
  }
}"#;
    let config = Config::parse(Path::new("config.json"), text).unwrap();
    let warnings: Vec<String> = config.warnings().iter().map(ToString::to_string).collect();
    assert_eq!(
        warnings,
        [
            "config.json:2:65: \"toolbridge\": unknown key \"resultBudgte\" is ignored; did you mean \"resultBudget\"?",
            "config.json:4:46: server \"time\": unknown key \"enviroment\" is ignored; did you mean \"env\"?",
        ]
    );
}
