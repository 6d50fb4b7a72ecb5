//! [`Config`]: a loaded config file (or the built-in default), from which
//! servers are resolved into [`ServerSpec`]s.

use std::{
    fmt, fs, io,
    path::{Path, PathBuf},
    sync::Arc,
};

use serde_json::Value;

use super::{
    document::parse_object,
    env::{Env, Input, ProcessEnv},
    error::ConfigError,
    expand::Scope,
    fields::Source,
    jsonc,
    layout::{Layout, detect},
    listing::ServerListing,
    locate::ConfigLocation,
    profile::{PROFILES_KEY, Profile, parse_profiles},
    record::ServerRecord,
    rules::check_profiles,
    settings::Settings,
    settings_keys::SETTINGS_KEY,
    spec::{ServerSpec, StdioSpec},
    warning::{ConfigWarning, unknown_server_keys, unknown_setting_keys},
};

/// The name of the built-in example server.
pub const EXAMPLE_SERVER: &str = "example";

/// The servers of one config file, checked and ready to resolve.
///
/// Loading checks every field of every server, so a mistake anywhere is
/// reported at once with its `file:line:column`. `${VAR}` references are
/// expanded by [`resolve`](Config::resolve), one server at a time, so a
/// variable missing for one server does not stop the others.
#[derive(Clone)]
pub struct Config {
    /// The file the servers came from (or would, for the built-in default).
    path: PathBuf,
    /// Its text (comments blanked), to point errors found at resolve time
    /// at a line and column.
    text: String,
    /// The servers in file order.
    records: Vec<ServerRecord>,
    /// Where each record is in the file (`["mcpServers"]`,
    /// `["projects", DIR, "mcpServers"]`, ...), in step with `records`.
    places: Vec<Vec<String>>,
    /// The global `"toolbridge"` settings.
    settings: Settings,
    /// The gateway's profiles (`"profiles"`), in file order.
    profiles: Vec<Profile>,
    /// What the file declares for `${input:ID}` (VS Code's `inputs`).
    inputs: Vec<Input>,
    /// `${workspaceFolder}`: the folder holding `.vscode/` when the file is
    /// in one, else the file's folder.
    workspace: Option<PathBuf>,
    /// Keys that are ignored and probably misspelt.
    warnings: Vec<ConfigWarning>,
    /// True when no file exists and `records` holds only the example server.
    builtin: bool,
    /// Where `${VAR}` values come from.
    env: Arc<dyn Env>,
}

impl Config {
    /// Reads and checks the config file at `path`.
    pub fn load(path: &Path) -> Result<Self, ConfigError> {
        let text = fs::read_to_string(path).map_err(|source| ConfigError::Read {
            path: path.to_path_buf(),
            source,
        })?;
        Self::parse(path, text)
    }

    /// Like [`load`](Config::load), but when the file does not exist the
    /// config is the built-in default: one stdio server named
    /// [`EXAMPLE_SERVER`] started as `example` says (the CLI passes its own
    /// executable and `example-server`).
    pub fn load_or_builtin(path: &Path, example: StdioSpec) -> Result<Self, ConfigError> {
        match fs::read_to_string(path) {
            Ok(text) => Self::parse(path, text),
            Err(error) if error.kind() == io::ErrorKind::NotFound => {
                Ok(Self::builtin(path, example))
            }
            Err(source) => Err(ConfigError::Read {
                path: path.to_path_buf(),
                source,
            }),
        }
    }

    /// The config at `location`: [`load`](Config::load) for a file the user
    /// named, where a missing file is [`ConfigError::Missing`];
    /// [`load_or_builtin`](Config::load_or_builtin) for the default location.
    pub fn load_located(
        location: &ConfigLocation,
        example: StdioSpec,
    ) -> Result<Self, ConfigError> {
        if !location.named {
            return Self::load_or_builtin(&location.path, example);
        }
        Self::load(&location.path).map_err(|error| match error {
            ConfigError::Read { path, source } if source.kind() == io::ErrorKind::NotFound => {
                ConfigError::Missing { path }
            }
            other => other,
        })
    }

    /// The built-in default for a config file at `path` that does not exist.
    pub fn builtin(path: &Path, example: StdioSpec) -> Self {
        Config {
            path: path.to_path_buf(),
            text: String::new(),
            records: vec![ServerRecord::from_stdio(EXAMPLE_SERVER, &example)],
            places: vec![vec!["mcpServers".to_string()]],
            settings: Settings::default(),
            profiles: Vec::new(),
            inputs: Vec::new(),
            workspace: workspace_of(path),
            warnings: Vec::new(),
            builtin: true,
            env: Arc::new(ProcessEnv),
        }
    }

    /// Checks `text` as the contents of the config file at `path`.
    ///
    /// ```
    /// use std::path::Path;
    /// use toolbridge::config::{Config, TransportKind};
    ///
    /// let text = r#"{
    ///   "mcpServers": {
    ///     "time": { "command": "uvx", "args": ["mcp-server-time"] },
    ///     "docs": { "url": "https://example.com/mcp", "timeout": 30 }
    ///   }
    /// }"#;
    /// let config = Config::parse(Path::new("mcp.json"), text)?;
    /// assert_eq!(config.server_names(), ["time", "docs"]);
    /// let docs = config.resolve("docs")?;
    /// assert_eq!(docs.kind(), TransportKind::Http);
    /// assert_eq!(docs.call_timeout().as_secs(), 30);
    ///
    /// // A mistake names the file, the place and the field.
    /// let error = Config::parse(Path::new("mcp.json"), r#"{"mcpServers": {"x": {}}}"#);
    /// assert!(error.unwrap_err().to_string().contains("mcp.json"));
    /// # Ok::<(), toolbridge::config::ConfigError>(())
    /// ```
    pub fn parse(path: &Path, text: impl Into<String>) -> Result<Self, ConfigError> {
        // Comments and trailing commas become spaces: every line and column
        // stays where it was, for errors found later.
        let text = jsonc::strip(&text.into());
        let root = parse_object(path, &text)?;
        let mut config = Config {
            path: path.to_path_buf(),
            text: String::new(),
            records: Vec::new(),
            places: Vec::new(),
            settings: Settings::default(),
            profiles: Vec::new(),
            inputs: inputs(root.get("inputs")),
            workspace: workspace_of(path),
            warnings: Vec::new(),
            builtin: false,
            env: Arc::new(ProcessEnv),
        };
        if let Some(value) = root.get(SETTINGS_KEY).filter(|v| !v.is_null()) {
            let src = Source {
                path,
                text: &text,
                servers_at: &[SETTINGS_KEY],
            };
            config.settings = Settings::parse(&src, value)?;
            if let Some(obj) = value.as_object() {
                config.warnings.extend(unknown_setting_keys(&src, obj));
            }
        }
        let layout = detect(path, &text, &root)?;
        if let Some(layout) = layout {
            let keys: Vec<String> = layout.keys().iter().map(|k| k.to_string()).collect();
            config.add_servers(&text, &root, keys, layout)?;
        }
        // `~/.claude.json`: the servers of the project Claude Code would use
        // here (the current directory or its nearest ancestor), which
        // replace user servers of the same name, as in Claude Code.
        if let Some(project) = claude_project(&root) {
            let keys = vec!["projects".to_string(), project, "mcpServers".to_string()];
            config.add_servers(&text, &root, keys, Layout::McpServers)?;
        }
        // After the servers: a profile may name only servers the file has.
        // Not in an editor's settings.json, whose own `profiles` (Zed's
        // settings profiles) are not toolbridge's.
        let editor_settings = matches!(layout, Some(Layout::VsCodeSettings | Layout::Zed));
        if let Some(value) = root
            .get(PROFILES_KEY)
            .filter(|v| !v.is_null() && !editor_settings)
        {
            let src = Source {
                path,
                text: &text,
                servers_at: &[PROFILES_KEY],
            };
            config.profiles = parse_profiles(&src, value, &config.server_names())?;
        }
        // And the gateway's rules may name only profiles the file has.
        let rules = &config.settings.gateway.rules;
        if !rules.is_empty() {
            let src = Source {
                path,
                text: &text,
                servers_at: &[SETTINGS_KEY],
            };
            let known: Vec<&str> = config.profiles.iter().map(|p| p.name.as_str()).collect();
            check_profiles(&src, rules, &known)?;
        }
        config.text = text;
        Ok(config)
    }

    /// Checks and adds the servers of the object at `keys` in `root`.
    fn add_servers(
        &mut self,
        text: &str,
        root: &serde_json::Map<String, Value>,
        keys: Vec<String>,
        layout: Layout,
    ) -> Result<(), ConfigError> {
        let mut value = root.get(&keys[0]);
        for key in &keys[1..] {
            value = value.and_then(|v| v.get(key));
        }
        let Some(Value::Object(servers)) = value else {
            return Ok(());
        };
        let servers_at: Vec<&str> = keys.iter().map(String::as_str).collect();
        let src = Source {
            path: &self.path,
            text,
            servers_at: &servers_at,
        };
        for (name, value) in servers {
            if let Some(obj) = value.as_object() {
                // A Zed extension's server: Zed starts it, toolbridge cannot.
                if layout == Layout::Zed && !obj.contains_key("command") && !obj.contains_key("url")
                {
                    self.warnings.push(ConfigWarning {
                        at: src.locate(Some(name), &[]),
                        server: Some(name.clone()),
                        key: name.clone(),
                        suggestion: None,
                        note: Some(
                            "provided by a Zed extension, which toolbridge cannot start; skipped"
                                .to_string(),
                        ),
                    });
                    continue;
                }
                self.warnings.extend(unknown_server_keys(&src, name, obj));
            }
            let record = ServerRecord::parse(&src, name, value)?;
            match self.records.iter().position(|r| r.name == *name) {
                Some(i) => {
                    self.records[i] = record;
                    self.places[i] = keys.clone();
                }
                None => {
                    self.records.push(record);
                    self.places.push(keys.clone());
                }
            }
        }
        Ok(())
    }

    /// This config, taking `${VAR}` values from `env` instead of the process
    /// environment.
    pub fn with_env(mut self, env: impl Env + 'static) -> Self {
        self.env = Arc::new(env);
        self
    }

    /// The config file's path (for the built-in default, where it was
    /// looked for).
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// True when no config file exists and the built-in example server is
    /// the only server.
    pub fn is_builtin(&self) -> bool {
        self.builtin
    }

    /// Every server's name, in file order, disabled ones included.
    pub fn server_names(&self) -> Vec<&str> {
        self.records.iter().map(|r| r.name.as_str()).collect()
    }

    /// True when a server of that name exists.
    pub fn contains(&self, name: &str) -> bool {
        self.server_names().contains(&name)
    }

    /// True when server `name` exists and is disabled.
    pub fn is_disabled(&self, name: &str) -> bool {
        self.records.iter().any(|r| r.name == name && r.disabled)
    }

    /// Server `name`, expanded and ready to connect; a disabled one (see
    /// [`ServerSpec::disabled`]) is not expanded, and never fails for an
    /// unset variable. An unknown name is an error listing the known ones.
    pub fn resolve(&self, name: &str) -> Result<ServerSpec, ConfigError> {
        let record = self
            .records
            .iter()
            .find(|r| r.name == name)
            .ok_or_else(|| ConfigError::UnknownServer {
                path: self.path.clone(),
                name: name.to_string(),
                known: self
                    .server_names()
                    .into_iter()
                    .map(str::to_string)
                    .collect(),
            })?;
        self.resolve_record(record)
    }

    /// Every enabled server, resolved one by one in file order: a server
    /// whose `${VAR}` is missing is an `Err` (naming it; see
    /// [`ConfigError::server`]) and the others are unaffected.
    pub fn resolve_enabled(&self) -> Vec<Result<ServerSpec, ConfigError>> {
        self.records
            .iter()
            .filter(|r| !r.disabled)
            .map(|r| self.resolve_record(r))
            .collect()
    }

    /// Every server for display, secrets masked, in file order.
    pub fn listing(&self) -> Vec<ServerListing> {
        self.records
            .iter()
            .map(|record| {
                ServerListing::from_record(record, self.builtin, self.settings.sandbox.as_ref())
            })
            .collect()
    }

    /// The global settings (the file's `"toolbridge"` object).
    pub fn settings(&self) -> &Settings {
        &self.settings
    }

    /// The gateway's profiles (the file's `"profiles"`), in file order.
    pub fn profiles(&self) -> &[Profile] {
        &self.profiles
    }

    /// Profile `name`, if the file has it.
    pub fn profile(&self, name: &str) -> Option<&Profile> {
        self.profiles.iter().find(|p| p.name == name)
    }

    /// Profile `name`; an unknown name is an error listing the known ones.
    pub fn find_profile(&self, name: &str) -> Result<&Profile, ConfigError> {
        self.profile(name)
            .ok_or_else(|| ConfigError::UnknownProfile {
                path: self.path.clone(),
                name: name.to_string(),
                known: self.profiles.iter().map(|p| p.name.clone()).collect(),
            })
    }

    /// Keys the file has that toolbridge ignores and that look like
    /// mistakes (`"enviroment"`), in file order; for the program to show.
    pub fn warnings(&self) -> &[ConfigWarning] {
        &self.warnings
    }

    /// Every server as written, in file order (for `doctor`).
    pub(crate) fn records(&self) -> &[ServerRecord] {
        &self.records
    }

    /// Where `${VAR}` values come from.
    pub(crate) fn env(&self) -> &dyn Env {
        self.env.as_ref()
    }

    fn resolve_record(&self, record: &ServerRecord) -> Result<ServerSpec, ConfigError> {
        let place = self
            .records
            .iter()
            .position(|r| std::ptr::eq(r, record))
            .and_then(|i| self.places.get(i));
        let servers_at: Vec<&str> = place
            .map(|keys| keys.iter().map(String::as_str).collect())
            .unwrap_or_else(|| vec!["mcpServers"]);
        let src = Source {
            path: &self.path,
            text: &self.text,
            servers_at: &servers_at,
        };
        let scope = Scope {
            env: self.env.as_ref(),
            workspace: self.workspace.as_deref(),
            inputs: &self.inputs,
        };
        record.resolve(&src, scope, &self.settings)
    }
}

/// `${workspaceFolder}` for a config file at `path`: the folder holding
/// `.vscode/` when the file is in one, else the file's own folder (made
/// absolute).
pub(super) fn workspace_of(path: &Path) -> Option<PathBuf> {
    let path = std::path::absolute(path).ok()?;
    let dir = path.parent()?;
    if dir.file_name().is_some_and(|name| name == ".vscode") {
        return dir.parent().map(Path::to_path_buf);
    }
    Some(dir.to_path_buf())
}

/// VS Code's `inputs`: `[{"id", "description", "password"}, ...]`; entries
/// without an id are skipped.
fn inputs(value: Option<&Value>) -> Vec<Input> {
    let Some(Value::Array(items)) = value else {
        return Vec::new();
    };
    items
        .iter()
        .filter_map(|item| {
            Some(Input {
                id: item.get("id")?.as_str()?.to_string(),
                description: item
                    .get("description")
                    .and_then(Value::as_str)
                    .map(str::to_string),
                password: item.get("password").and_then(Value::as_bool) == Some(true),
            })
        })
        .collect()
}

/// In `~/.claude.json`, the key of `projects` Claude Code would use in the
/// current directory: the directory itself or its nearest ancestor.
fn claude_project(root: &serde_json::Map<String, Value>) -> Option<String> {
    let projects = root.get("projects")?.as_object()?;
    let cwd = std::env::current_dir().ok()?;
    cwd.ancestors().find_map(|dir| {
        let key = dir.to_str()?;
        projects
            .get(key)
            .and_then(|p| p.get("mcpServers"))
            .is_some_and(Value::is_object)
            .then(|| key.to_string())
    })
}

impl fmt::Debug for Config {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Records hold unexpanded values only, but keep Debug output short
        // and free of anything that could be a secret.
        f.debug_struct("Config")
            .field("path", &self.path)
            .field("builtin", &self.is_builtin())
            .field("servers", &self.server_names())
            .finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests {
    use std::{collections::HashMap, time::Duration};

    use super::*;
    use crate::config::{RemoteSpec, TransportKind, TransportSpec};

    const DESIGN_EXAMPLE: &str = r#"{
  "mcpServers": {
    "time":   { "command": "uvx", "args": ["mcp-server-time"], "env": { "TZ": "UTC" } },
    "github": { "type": "http", "url": "https://example.com/mcp",
                "headers": { "Authorization": "Bearer ${GITHUB_TOKEN}" } },
    "legacy": { "type": "sse", "url": "http://127.0.0.1:8000/sse" },
    "ws":     { "type": "websocket", "url": "ws://127.0.0.1:8765/ws" },
    "off":    { "command": "my-server", "disabled": true, "timeout": 600 }
  }
}"#;

    fn env(vars: &[(&str, &str)]) -> HashMap<String, String> {
        vars.iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    fn parse(text: &str) -> Result<Config, ConfigError> {
        Config::parse(Path::new("config.json"), text)
    }

    /// A config with one server `s` whose record is `record`, on line 3
    /// starting at column 10.
    fn one(record: &str) -> String {
        format!("{{\n  \"mcpServers\": {{\n    \"s\": {record}\n  }}\n}}")
    }

    fn error_of(record: &str) -> ConfigError {
        match parse(&one(record)) {
            Ok(_) => panic!("{record} should be rejected"),
            Err(error) => error,
        }
    }

    fn remote(url: &str, auto_detect: bool) -> RemoteSpec {
        RemoteSpec {
            url: url.to_string(),
            headers: Default::default(),
            auto_detect,
            oauth: Default::default(),
        }
    }

    #[test]
    fn the_design_example_resolves_to_the_specs_the_pool_needs() {
        let config = parse(DESIGN_EXAMPLE)
            .unwrap()
            .with_env(env(&[("GITHUB_TOKEN", "ghp_x")]));
        assert_eq!(
            config.server_names(),
            ["time", "github", "legacy", "ws", "off"]
        );
        assert!(!config.is_builtin());

        let time = config.resolve("time").unwrap();
        let TransportSpec::Stdio(stdio) = &time.transport else {
            panic!("time is stdio: {time:?}")
        };
        assert_eq!(stdio.command, "uvx");
        assert_eq!(stdio.args, ["mcp-server-time"]);
        assert_eq!(stdio.env["TZ"], "UTC");
        assert_eq!(time.call_timeout(), Duration::from_secs(120));

        let github = config.resolve("github").unwrap();
        let TransportSpec::Http(http) = &github.transport else {
            panic!("github is http: {github:?}")
        };
        assert_eq!(http.headers["Authorization"], "Bearer ghp_x");
        assert!(!http.auto_detect, "the type was declared");

        assert_eq!(
            config.resolve("legacy").unwrap().transport,
            TransportSpec::Sse(remote("http://127.0.0.1:8000/sse", false))
        );
        assert_eq!(
            config.resolve("ws").unwrap().transport,
            TransportSpec::WebSocket(remote("ws://127.0.0.1:8765/ws", false))
        );
        let off = config.resolve("off").unwrap();
        assert!(off.disabled);
        assert_eq!(off.call_timeout(), Duration::from_secs(600));
    }

    #[test]
    fn a_disabled_server_is_not_expanded() {
        let config = parse(
            r#"{"mcpServers": {
                "off": {"command": "${CMD}", "env": {"K": "${UNSET}"},
                        "envFile": "missing.env", "disabled": true},
                "web": {"url": "${BASE}/mcp", "disabled": true}
            }}"#,
        )
        .unwrap()
        .with_env(env(&[]));
        let off = config.resolve("off").expect("a disabled server resolves");
        assert!(off.disabled);
        let TransportSpec::Stdio(stdio) = off.transport else {
            panic!("{off:?}")
        };
        assert_eq!(stdio.command, "${CMD}");
        assert!(
            config
                .resolve("web")
                .expect("not checked as a URL")
                .disabled
        );
    }

    #[test]
    fn resolve_enabled_skips_disabled_servers() {
        let config = parse(DESIGN_EXAMPLE)
            .unwrap()
            .with_env(env(&[("GITHUB_TOKEN", "t")]));
        let names: Vec<String> = config
            .resolve_enabled()
            .into_iter()
            .map(|spec| spec.unwrap().name)
            .collect();
        assert_eq!(names, ["time", "github", "legacy", "ws"]);
        assert!(config.is_disabled("off"));
    }

    #[test]
    fn transport_is_inferred_without_type() {
        let config = parse(
            r#"{"mcpServers": {
                "cmd": {"command": "srv"},
                "ws": {"url": "ws://h/ws"},
                "wss": {"url": "WSS://h/ws"},
                "web": {"url": "https://h/mcp"}
            }}"#,
        )
        .unwrap();
        let kinds: Vec<(TransportKind, bool)> = config
            .resolve_enabled()
            .into_iter()
            .map(|spec| {
                let spec = spec.unwrap();
                let auto = matches!(&spec.transport, TransportSpec::Http(r) if r.auto_detect);
                (spec.kind(), auto)
            })
            .collect();
        assert_eq!(
            kinds,
            [
                (TransportKind::Stdio, false),
                (TransportKind::WebSocket, false),
                (TransportKind::WebSocket, false),
                (TransportKind::Http, true),
            ]
        );
    }

    #[test]
    fn transport_field_and_aliases_are_accepted() {
        let config = parse(
            r#"{"mcpServers": {
                "a": {"transport": "streamableHttp", "url": "http://h/mcp"},
                "b": {"type": "streamable-http", "url": "http://h/mcp"},
                "c": {"type": "ws", "url": "ws://h"},
                "d": {"type": "stdio", "command": "x"}
            }}"#,
        )
        .unwrap();
        let kinds: Vec<TransportKind> = config
            .resolve_enabled()
            .into_iter()
            .map(|spec| spec.unwrap().kind())
            .collect();
        use TransportKind::*;
        assert_eq!(kinds, [Http, Http, WebSocket, Stdio]);
    }

    #[test]
    fn vs_code_top_level_servers_key_is_read() {
        let config =
            parse(r#"{"servers": {"v": {"type": "stdio", "command": "x"}}, "inputs": []}"#)
                .unwrap();
        assert_eq!(config.server_names(), ["v"]);
        assert_eq!(config.resolve("v").unwrap().kind(), TransportKind::Stdio);
    }

    #[test]
    fn a_file_without_servers_has_none() {
        assert!(parse("{}").unwrap().server_names().is_empty());
        assert!(
            parse(r#"{"mcpServers": null}"#)
                .unwrap()
                .server_names()
                .is_empty()
        );
    }

    #[test]
    fn syntax_errors_have_file_line_and_column() {
        // A missing colon (a trailing comma is JSONC, and read).
        let text = "{\n  \"mcpServers\": {\n    \"a\": {\"command\" \"x\"}\n  }\n}";
        let error = parse(text).unwrap_err();
        assert!(matches!(error, ConfigError::Syntax { .. }), "{error:?}");
        assert_eq!(error.line_col(), Some((3, 21)));
        let message = error.to_string();
        assert!(
            message.starts_with("config.json:3:21: invalid JSON: expected `:`"),
            "{message}"
        );
    }

    #[test]
    fn comments_and_trailing_commas_are_read_and_errors_keep_their_place() {
        let text = "{\n  // mine\n  \"mcpServers\": {\n    /* a */ \"a\": {\"command\": \"x\", \"args\": 5,},\n  },\n}";
        let error = parse(text).unwrap_err();
        assert_eq!(error.line_col(), Some((4, 43)), "{error}");
        let text = text.replace("\"args\": 5,", "\"args\": [\"y\",],");
        assert_eq!(parse(&text).unwrap().server_names(), ["a"]);
    }

    #[test]
    fn an_empty_file_is_a_syntax_error() {
        let error = parse("").unwrap_err();
        assert!(
            error
                .to_string()
                .starts_with("config.json:1:1: invalid JSON: EOF"),
            "{error}"
        );
    }

    #[test]
    fn field_errors_name_file_line_column_server_and_field() {
        // The issue's example, at the same place.
        let text = r#"{
  "mcpServers": {
    "github": { "url": "https://example.com/mcp" },
    "time": {
      "command": "uvx",
      "args":
           "mcp-server-time"
    }
  }
}"#;
        let error = parse(text).unwrap_err();
        assert_eq!(
            error.to_string(),
            "config.json:7:12: server \"time\": \"args\" must be an array of strings, not a string"
        );
        assert_eq!(error.server(), Some("time"));
        assert_eq!(error.field(), Some("args"));
        assert_eq!(error.path(), Path::new("config.json"));
    }

    #[test]
    fn each_field_is_checked() {
        // (record, field, message, column of the offending value on line 3)
        let cases: &[(&str, Option<&str>, &str, usize)] = &[
            (
                r#"{"command": 5}"#,
                Some("command"),
                "\"command\" must be a string, not a number",
                22,
            ),
            (
                r#"{"command": "  "}"#,
                Some("command"),
                "\"command\" must not be empty",
                22,
            ),
            (
                r#"{"command": "x", "args": "a b"}"#,
                Some("args"),
                "\"args\" must be an array of strings, not a string",
                35,
            ),
            (
                r#"{"command": "x", "args": ["a", 1]}"#,
                Some("args"),
                "\"args\" must be an array of strings; item 1 is a number",
                41,
            ),
            (
                r#"{"command": "x", "env": []}"#,
                Some("env"),
                "\"env\" must be an object of strings, not an array",
                34,
            ),
            (
                r#"{"command": "x", "env": {"A": 1}}"#,
                Some("env"),
                "\"env\" must be an object of strings; \"A\" is a number",
                40,
            ),
            (
                r#"{"command": "x", "env": {"A=B": "1"}}"#,
                Some("env"),
                "\"env\": \"A=B\" is not a valid variable name",
                42,
            ),
            (
                r#"{"command": "x", "cwd": 1}"#,
                Some("cwd"),
                "\"cwd\" must be a string, not a number",
                34,
            ),
            (
                r#"{"url": 1}"#,
                Some("url"),
                "\"url\" must be a string, not a number",
                18,
            ),
            (
                r#"{"url": "not a url"}"#,
                Some("url"),
                "\"url\" is not a valid URL (relative URL without a base)",
                18,
            ),
            (
                r#"{"type": "websocket", "url": "http://h"}"#,
                Some("url"),
                "\"url\" must start with ws:// or wss:// for the websocket transport",
                39,
            ),
            (
                r#"{"type": "sse", "url": "ws://h"}"#,
                Some("url"),
                "\"url\" must start with http:// or https:// for the sse transport",
                33,
            ),
            (
                r#"{"url": "http://h", "headers": {"A": true}}"#,
                Some("headers"),
                "\"headers\" must be an object of strings; \"A\" is a boolean",
                47,
            ),
            (
                r#"{"url": "http://h", "headers": {"Bad Name": "v"}}"#,
                Some("headers"),
                "\"headers\": \"Bad Name\" is not a valid header name",
                54,
            ),
            (
                r#"{"command": "x", "timeout": 0}"#,
                Some("timeout"),
                "\"timeout\" must be a positive number of seconds, at most 2592000",
                38,
            ),
            (
                r#"{"command": "x", "timeout": -5}"#,
                Some("timeout"),
                "\"timeout\" must be a positive number of seconds, at most 2592000",
                38,
            ),
            // Regression: 1e19 s fits a Duration but not a clock reading
            // plus it; the pool panicked (exit 101) on the first call.
            (
                r#"{"command": "x", "timeout": 1e19}"#,
                Some("timeout"),
                "\"timeout\" must be a positive number of seconds, at most 2592000",
                38,
            ),
            (
                r#"{"command": "x", "timeout": "10"}"#,
                Some("timeout"),
                "\"timeout\" must be a positive number of seconds, at most 2592000",
                38,
            ),
            (
                r#"{"command": "x", "disabled": "yes"}"#,
                Some("disabled"),
                "\"disabled\" must be true or false, not a string",
                39,
            ),
            (
                r#"{"type": 3, "command": "x"}"#,
                Some("type"),
                "\"type\" must be a string, not a number",
                19,
            ),
            (
                r#"{"type": "grpc", "url": "http://h"}"#,
                Some("type"),
                "unsupported transport \"grpc\"; expected stdio, http, sse or websocket",
                19,
            ),
            (
                r#"{"transport": "grpc", "url": "http://h"}"#,
                Some("transport"),
                "unsupported transport \"grpc\"; expected stdio, http, sse or websocket",
                24,
            ),
            (
                r#"{"type": "websocket"}"#,
                Some("url"),
                "websocket transport requires \"url\"",
                10,
            ),
            (
                r#"{"type": "http", "command": "x"}"#,
                Some("url"),
                "http transport requires \"url\"",
                10,
            ),
            (
                r#"{"type": "stdio", "url": "http://h"}"#,
                Some("command"),
                "stdio transport requires \"command\"",
                10,
            ),
            (
                r#"{"command": "x", "url": "http://h"}"#,
                Some("type"),
                "has both \"command\" and \"url\"; set \"type\" to \"stdio\", \"http\", \"sse\" or \"websocket\" to say which to use",
                10,
            ),
            (
                r#"{"args": ["x"]}"#,
                None,
                "needs \"command\" (a stdio server) or \"url\" (a network server)",
                10,
            ),
            (
                r#""uvx time""#,
                None,
                "must be an object with \"command\" or \"url\", not a string",
                10,
            ),
        ];
        for (record, field, message, column) in cases {
            let error = error_of(record);
            assert_eq!(
                error.to_string(),
                format!("config.json:3:{column}: server \"s\": {message}"),
                "{record}"
            );
            assert_eq!(error.field(), *field, "{record}");
            assert_eq!(error.server(), Some("s"), "{record}");
        }
    }

    #[test]
    fn the_file_structure_is_checked() {
        let cases = [
            (
                "[]",
                "config.json:1:1: the top level must be an object like {\"mcpServers\": {...}}, not an array",
            ),
            (
                r#"{"mcpServers": ["a"]}"#,
                "config.json:1:16: \"mcpServers\" must be an object mapping server names to servers, not an array",
            ),
            (
                r#"{"mcpServers": {}, "servers": {}}"#,
                "config.json:1:31: has both \"mcpServers\" and \"servers\"; move every server into one of them",
            ),
        ];
        for (text, message) in cases {
            assert_eq!(parse(text).unwrap_err().to_string(), message, "{text}");
        }
    }

    #[test]
    fn variables_expand_in_every_expandable_field() {
        let text = r#"{"mcpServers": {
            "s": {"command": "${BIN}", "args": ["--port=${PORT:-8080}", "${HOME}/x"],
                  "env": {"TOKEN": "${TOKEN}", "MODE": "${MODE:-dev}"}},
            "r": {"type": "http", "url": "https://${HOST}/mcp?k=${KEY:-none}",
                  "headers": {"Authorization": "Bearer ${TOKEN}"}}
        }}"#;
        let config = parse(text).unwrap().with_env(env(&[
            ("BIN", "/usr/bin/srv"),
            ("HOME", "/home/a"),
            ("TOKEN", "t0k"),
            ("HOST", "h.example"),
        ]));
        let s = config.resolve("s").unwrap();
        let TransportSpec::Stdio(stdio) = s.transport else {
            panic!()
        };
        assert_eq!(stdio.command, "/usr/bin/srv");
        assert_eq!(stdio.args, ["--port=8080", "/home/a/x"]);
        assert_eq!(stdio.env["TOKEN"], "t0k");
        assert_eq!(stdio.env["MODE"], "dev");
        let r = config.resolve("r").unwrap();
        let TransportSpec::Http(http) = r.transport else {
            panic!()
        };
        assert_eq!(http.url, "https://h.example/mcp?k=none");
        assert_eq!(http.headers["Authorization"], "Bearer t0k");
    }

    #[test]
    fn an_unset_variable_fails_only_its_server_naming_server_and_field() {
        let text = r#"{
  "mcpServers": {
    "github": {"url": "https://h/mcp",
               "headers": {"Authorization": "Bearer ${GITHUB_TOKEN}"}},
    "time": {"command": "uvx", "args": ["mcp-server-time"]}
  }
}"#;
        let config = parse(text).unwrap().with_env(env(&[]));
        let results = config.resolve_enabled();
        assert_eq!(results.len(), 2);
        let error = results[0].as_ref().unwrap_err();
        assert_eq!(
            error.to_string(),
            "config.json:4:45: server \"github\": \"headers\" uses ${GITHUB_TOKEN}, which is \
             not set; set it, or give a default: ${GITHUB_TOKEN:-value}"
        );
        assert_eq!(error.server(), Some("github"));
        assert_eq!(error.field(), Some("headers"));
        assert_eq!(results[1].as_ref().unwrap().name, "time");
    }

    #[test]
    fn a_vs_code_input_without_an_answer_names_server_field_and_variable() {
        let config = parse(&one(r#"{"command": "x", "args": ["${input:key}"]}"#))
            .unwrap()
            .with_env(env(&[]));
        let error = config.resolve("s").unwrap_err();
        assert_eq!(error.field(), Some("args"));
        assert_eq!(error.line_col(), Some((3, 36)));
        assert_eq!(
            error.to_string(),
            "config.json:3:36: server \"s\": \"args\" uses ${input:key}; set \
             TOOLBRIDGE_INPUT_KEY, or run toolbridge on a terminal to be asked for it"
        );
        let answered = config.with_env(env(&[("TOOLBRIDGE_INPUT_KEY", "k")]));
        let TransportSpec::Stdio(stdio) = answered.resolve("s").unwrap().transport else {
            panic!()
        };
        assert_eq!(stdio.args, ["k"]);
    }

    #[test]
    fn a_malformed_reference_is_reported_at_resolve() {
        let config = parse(&one(r#"{"command": "x", "args": ["${in put}"]}"#))
            .unwrap()
            .with_env(env(&[]));
        let error = config.resolve("s").unwrap_err();
        assert_eq!(error.field(), Some("args"));
        assert_eq!(error.line_col(), Some((3, 36)));
        assert!(
            error.to_string().contains("is not a variable reference"),
            "{error}"
        );
    }

    #[test]
    fn a_url_from_a_variable_is_checked_and_its_transport_inferred_after_expansion() {
        let config = parse(&one(r#"{"url": "${URL}"}"#)).unwrap();
        let ws = config.clone().with_env(env(&[("URL", "wss://h/ws")]));
        assert_eq!(ws.resolve("s").unwrap().kind(), TransportKind::WebSocket);
        let bad = config.with_env(env(&[("URL", "nope")]));
        let error = bad.resolve("s").unwrap_err();
        assert!(
            error.to_string().contains("\"url\" is not a valid URL"),
            "{error}"
        );
        assert!(
            !error.to_string().contains("nope"),
            "the url is not repeated: {error}"
        );
    }

    #[test]
    fn relative_cwd_is_relative_to_the_config_file() {
        let text = r#"{"mcpServers": {"a": {"command": "x", "cwd": "proj"}, "b": {"command": "x", "cwd": "/abs"}}}"#;
        let config = Config::parse(Path::new("/etc/tb/config.json"), text).unwrap();
        let cwd = |name| match config.resolve(name).unwrap().transport {
            TransportSpec::Stdio(stdio) => stdio.cwd,
            _ => None,
        };
        assert_eq!(cwd("a"), Some(PathBuf::from("/etc/tb/proj")));
        assert_eq!(cwd("b"), Some(PathBuf::from("/abs")));
    }

    #[test]
    fn unknown_servers_are_errors_listing_the_known_ones() {
        let config = parse(DESIGN_EXAMPLE).unwrap();
        assert_eq!(
            config.resolve("tiem").unwrap_err().to_string(),
            "unknown server \"tiem\"; config.json has: time, github, legacy, ws, off"
        );
        assert_eq!(
            parse("{}").unwrap().resolve("x").unwrap_err().to_string(),
            "unknown server \"x\": config.json has no servers"
        );
    }

    #[test]
    fn without_a_file_the_example_server_is_the_only_server() {
        let dir = tempfile::tempdir().unwrap();
        let example = StdioSpec {
            command: "/bin/toolbridge".into(),
            args: vec!["example-server".into()],
            ..StdioSpec::default()
        };
        let path = dir.path().join("missing.json");
        let config = Config::load_or_builtin(&path, example.clone()).unwrap();
        assert!(config.is_builtin());
        assert_eq!(config.path(), path);
        assert_eq!(config.server_names(), [EXAMPLE_SERVER]);
        let spec = config.resolve("example").unwrap();
        assert_eq!(spec.transport, TransportSpec::Stdio(example.clone()));
        // The example server is a record like any other; a `$` in the
        // executable's path is not taken for a variable.
        let dollar = StdioSpec {
            command: "/opt/$HOME/${X}/toolbridge".into(),
            ..example.clone()
        };
        let spec = Config::builtin(&path, dollar.clone())
            .resolve(EXAMPLE_SERVER)
            .unwrap();
        assert_eq!(spec.transport, TransportSpec::Stdio(dollar));
        assert_eq!(config.resolve_enabled().len(), 1);
        assert!(config.listing()[0].builtin);

        std::fs::write(&path, "{\"mcpServers\": {}}").unwrap();
        let config = Config::load_or_builtin(&path, example).unwrap();
        assert!(!config.is_builtin());
        assert!(config.server_names().is_empty());
    }

    #[test]
    fn a_named_missing_file_is_an_error_and_only_the_default_falls_back() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("missing.json");
        let named = ConfigLocation {
            path: path.clone(),
            named: true,
        };
        let error = Config::load_located(&named, StdioSpec::default()).unwrap_err();
        assert!(matches!(error, ConfigError::Missing { .. }), "{error:?}");
        assert!(
            error.to_string().contains("missing.json does not exist"),
            "{error}"
        );
        assert!(error.to_string().contains("servers add"), "{error}");
        let default = ConfigLocation { path, named: false };
        assert!(
            Config::load_located(&default, StdioSpec::default())
                .unwrap()
                .is_builtin()
        );
    }

    #[test]
    fn load_of_a_missing_file_is_a_read_error() {
        let error = Config::load(Path::new("/nonexistent/config.json")).unwrap_err();
        assert!(matches!(error, ConfigError::Read { .. }));
        assert_eq!(error.to_string(), "cannot read /nonexistent/config.json");
    }

    #[test]
    fn listing_masks_every_secret() {
        let text = r#"{"mcpServers": {
            "s": {"command": "npx", "args": ["-y", "srv", "--api-key", "sk-live-1", "--port", "80"],
                  "env": {"API_KEY": "sk-live-2", "TZ": "UTC"}},
            "r": {"url": "https://h/mcp?token=tok-3&page=2",
                  "headers": {"Authorization": "Bearer tok-4", "Accept": "x"}, "timeout": 30},
            "off": {"type": "sse", "url": "http://h/sse", "disabled": true}
        }}"#;
        let listing = parse(text).unwrap().listing();
        let json = serde_json::to_string(&listing).unwrap();
        for secret in ["sk-live-1", "sk-live-2", "tok-3", "tok-4", "UTC"] {
            assert!(!json.contains(secret), "{secret} leaked: {json}");
        }
        assert_eq!(
            serde_json::to_value(&listing).unwrap(),
            serde_json::json!([
                {"name": "s", "transport": "stdio", "enabled": true, "command": "npx",
                 "args": ["-y", "srv", "--api-key", "***", "--port", "80"],
                 "env": {"API_KEY": "***", "TZ": "***"}, "timeout": 120.0,
                 "sandbox": "default"},
                {"name": "r", "transport": "http", "autoDetect": true, "enabled": true,
                 "url": "https://h/mcp?token=***&page=2",
                 "headers": {"Accept": "***", "Authorization": "***"}, "timeout": 30.0},
                {"name": "off", "transport": "sse", "enabled": false,
                 "url": "http://h/sse", "timeout": 120.0}
            ])
        );
    }

    #[test]
    fn global_settings_are_read_and_fill_what_a_server_leaves_out() {
        let text = r#"{
  "toolbridge": {"inheritEnv": ["LC_*", "HTTPS_PROXY"], "toolCacheTtl": 90,
                 "resultBudget": 5000, "startupTimeout": 20},
  "mcpServers": {
    "own": {"command": "x", "inheritEnv": ["DISPLAY", "HTTPS_PROXY"], "startupTimeout": 5,
            "resultBudget": 100, "disabledTools": ["rm"], "enabledTools": ["ls", "rm"]},
    "plain": {"command": "y"}
  }
}"#;
        let config = parse(text).unwrap();
        let settings = config.settings();
        assert_eq!(settings.tool_cache_ttl, Some(Duration::from_secs(90)));
        assert_eq!(settings.inherit_env, ["LC_*", "HTTPS_PROXY"]);

        let own = config.resolve("own").unwrap();
        assert_eq!(own.startup_timeout, Some(Duration::from_secs(5)));
        assert_eq!(own.result_budget, Some(100));
        assert!(!own.tool_enabled("rm") && own.tool_enabled("ls"));
        // Not in the allow list.
        assert!(!own.tool_enabled("cat"));
        assert!(config.resolve("plain").unwrap().tool_enabled("cat"));
        let TransportSpec::Stdio(stdio) = &own.transport else {
            panic!()
        };
        assert_eq!(stdio.inherit_env, ["DISPLAY", "HTTPS_PROXY", "LC_*"]);

        let plain = config.resolve("plain").unwrap();
        assert_eq!(plain.startup_timeout, Some(Duration::from_secs(20)));
        assert_eq!(plain.result_budget, Some(5000));

        let none = parse(r#"{"mcpServers": {"p": {"command": "y"}}}"#).unwrap();
        assert_eq!(none.settings(), &Settings::default());
        assert_eq!(none.resolve("p").unwrap().startup_timeout, None);

        let error = parse(r#"{"toolbridge": {"toolCacheTtl": "1h"}}"#).unwrap_err();
        assert_eq!(
            error.to_string(),
            "config.json:1:33: \"toolCacheTtl\" must be a positive number of seconds, at most 2592000"
        );
    }

    #[test]
    fn debug_output_holds_no_values() {
        let config = parse(&one(r#"{"command": "x", "env": {"K": "secret-value"}}"#)).unwrap();
        assert!(!format!("{config:?}").contains("secret-value"));
    }

    #[test]
    fn the_oauth_block_is_read_and_its_secret_expanded() {
        let text = r#"{"mcpServers": {
            "r": {"type": "http", "url": "https://h/mcp",
                  "oauth": {"clientId": "tb-${TEAM}", "clientSecret": "${OAUTH_SECRET}",
                            "clientMetadataUrl": "https://tb.example/client.json",
                            "scopes": ["read", "write"]}},
            "plain": {"type": "http", "url": "https://h/mcp"}
        }}"#;
        let config = parse(text)
            .unwrap()
            .with_env(env(&[("TEAM", "a"), ("OAUTH_SECRET", "s3cr3t")]));
        let TransportSpec::Http(http) = config.resolve("r").unwrap().transport else {
            panic!()
        };
        assert_eq!(http.oauth.client_id.as_deref(), Some("tb-a"));
        assert_eq!(http.oauth.client_secret.as_deref(), Some("s3cr3t"));
        assert_eq!(
            http.oauth.client_metadata_url.as_deref(),
            Some("https://tb.example/client.json")
        );
        assert_eq!(http.oauth.scopes, ["read", "write"]);
        assert!(!format!("{http:?}").contains("s3cr3t"));
        let TransportSpec::Http(plain) = config.resolve("plain").unwrap().transport else {
            panic!()
        };
        assert_eq!(plain.oauth, crate::config::OAuthSpec::default());

        let unset = parse(text).unwrap().with_env(env(&[("TEAM", "a")]));
        let error = unset.resolve("r").unwrap_err();
        assert_eq!(error.field(), Some("oauth"), "{error}");
        assert!(error.to_string().contains("OAUTH_SECRET"), "{error}");
    }

    #[test]
    fn a_malformed_oauth_block_is_an_error_naming_the_field() {
        for (oauth, message) in [
            (r#""x""#, "\"oauth\" must be an object, not a string"),
            (
                r#"{"clientId": 1}"#,
                "\"oauth\".\"clientId\" must be a string",
            ),
            (
                r#"{"scopes": "read"}"#,
                "\"oauth\".\"scopes\" must be an array of strings",
            ),
            (
                r#"{"grant": "password"}"#,
                "\"oauth\".\"grant\" must be one of",
            ),
            (
                r#"{"grant": "client_credentials"}"#,
                "\"grant\": \"client_credentials\" needs \"clientId\"",
            ),
            (
                r#"{"grant": "client_credentials", "clientId": "c"}"#,
                "needs \"clientSecret\", or \"privateKey\"",
            ),
            (
                r#"{"grant": "client_credentials", "clientId": "c", "clientSecret": "s", "clientAuth": "private_key_jwt"}"#,
                "\"clientAuth\": \"private_key_jwt\" needs \"privateKey\" or \"privateKeyFile\"",
            ),
            (
                r#"{"clientAuth": "tls_client_auth"}"#,
                "\"oauth\".\"clientAuth\" must be one of",
            ),
            (
                r#"{"grant": "jwt_bearer", "assertion": "a", "assertionFile": "/t"}"#,
                "are two ways to give one secret",
            ),
            (
                r#"{"grant": "jwt_bearer"}"#,
                "needs \"assertion\" or \"assertionFile\"",
            ),
            (r#"{"grant": "id_jag", "clientId": "c"}"#, "needs \"idp\""),
            (
                r#"{"grant": "id_jag", "clientId": "c", "idp": {"issuer": "https://i", "clientId": "x"}}"#,
                "\"oauth\".\"idp\" needs \"idToken\" or \"idTokenFile\"",
            ),
            (
                r#"{"dpop": "yes"}"#,
                "\"oauth\".\"dpop\" must be true or false",
            ),
        ] {
            let text = one(&format!(r#"{{"url": "https://h/mcp", "oauth": {oauth}}}"#));
            let error = parse(&text).unwrap_err();
            assert_eq!(error.field(), Some("oauth"), "{error}");
            assert!(error.to_string().contains(message), "{error}");
        }
    }

    #[test]
    fn a_wrong_id_token_of_the_idp_is_located_at_its_own_line() {
        // Line 5 holds the idp's idToken, a number: the error points there,
        // not at the `oauth` object on line 4 (as it did).
        let text = "{\n  \"mcpServers\": {\n    \"s\": {\"url\": \"https://h/mcp\",\n      \"oauth\": {\"grant\": \"id_jag\", \"clientId\": \"c\", \"idp\": {\"issuer\": \"https://i\", \"clientId\": \"x\",\n        \"idToken\": 5}}}\n  }\n}";
        let error = parse(text).unwrap_err();
        assert!(
            error.to_string().contains("\"idToken\" must be a string"),
            "{error}"
        );
        assert_eq!(error.line_col().map(|(line, _)| line), Some(5), "{error}");
    }

    #[test]
    fn the_unattended_grants_are_read_with_their_secrets_expanded_and_masked() {
        use crate::config::{ClientAuth, OAuthGrant, SecretSource};
        let text = r#"{"mcpServers": {
            "cc": {"url": "https://h/mcp", "oauth": {"grant": "client_credentials",
                   "clientId": "bot", "clientAuth": "private_key_jwt",
                   "privateKey": "${BOT_KEY}", "signingAlgorithm": "ES384"}},
            "wif": {"url": "https://h/mcp", "oauth": {"grant": "jwt_bearer",
                    "assertionFile": "${TOKENS}/mcp"}},
            "ent": {"url": "https://h/mcp", "oauth": {"grant": "id_jag", "clientId": "tb",
                    "clientSecret": "${AS_SECRET}", "dpop": true,
                    "idp": {"issuer": "https://idp.example", "clientId": "tb-idp",
                            "idToken": "${ID_TOKEN}"}}}
        }}"#;
        let config = parse(text).unwrap().with_env(env(&[
            ("BOT_KEY", "-----BEGIN PRIVATE KEY-----"),
            ("TOKENS", "/var/run/secrets/tokens"),
            ("AS_SECRET", "as-secret"),
            ("ID_TOKEN", "eyJ-id-token"),
        ]));
        let oauth = |name: &str| match config.resolve(name).unwrap().transport {
            TransportSpec::Http(http) => http.oauth,
            _ => panic!(),
        };
        let cc = oauth("cc");
        assert_eq!(cc.grant, OAuthGrant::ClientCredentials);
        assert_eq!(cc.client_auth, Some(ClientAuth::PrivateKeyJwt));
        assert_eq!(
            cc.private_key,
            Some(SecretSource::Value("-----BEGIN PRIVATE KEY-----".into()))
        );
        assert_eq!(cc.signing_algorithm.as_deref(), Some("ES384"));
        let wif = oauth("wif");
        assert_eq!(wif.grant, OAuthGrant::JwtBearer);
        assert_eq!(
            wif.assertion,
            Some(SecretSource::File("/var/run/secrets/tokens/mcp".into()))
        );
        let ent = oauth("ent");
        assert_eq!(ent.grant, OAuthGrant::IdJag);
        assert_eq!(ent.dpop, Some(true));
        let idp = ent.idp.clone().unwrap();
        assert_eq!(idp.issuer, "https://idp.example");
        assert_eq!(idp.token_endpoint, None);
        assert_eq!(idp.id_token, SecretSource::Value("eyJ-id-token".into()));
        // The secrets are masked, and known to the redactor.
        let shown = format!("{ent:?} {cc:?}");
        for secret in ["as-secret", "eyJ-id-token", "BEGIN PRIVATE KEY"] {
            assert!(!shown.contains(secret), "{secret} in {shown}");
        }
        let secrets: Vec<&str> = ent.secrets().collect();
        assert_eq!(secrets, ["as-secret", "eyJ-id-token"]);
        let redactor = crate::redact::Redactor::for_server(&config.resolve("ent").unwrap());
        assert_eq!(
            redactor.redact("token eyJ-id-token refused"),
            "token *** refused"
        );
    }
}
