//! `doctor`: what stops each configured server from starting, and the fix.
//!
//! The checks work on [`ServerCheck`], the raw (unexpanded) view of one config
//! entry, so they can report an unset `${VAR}` instead of failing on it.
//! [`ServerCheck::from_entry`] builds one from an `mcpServers` entry as JSON;
//! that is the only place that knows the file format. For each enabled server
//! [`check_servers`] reports, one [`Finding`] per problem:
//!
//! - a `${VAR}` without a default that is not set;
//! - a preset's API key that is missing (see [`presets::find_by_launch`]);
//! - a stdio command that is not on `PATH` (the server's `env` `PATH` when it
//!   sets one), with an install plan when toolbridge knows one;
//! - a remote URL that does not answer (any HTTP status counts as an answer;
//!   a refused connection, a DNS failure or a timeout does not).

use std::{
    collections::{BTreeMap, HashMap},
    ffi::OsStr,
    fmt,
    path::Path,
    time::Duration,
};

use serde_json::Value;

use crate::{
    deps::{self, InstallPlan, Platform},
    presets::{self, Preset, Transport},
};

/// How long a remote server may take to answer before it counts as down.
pub const URL_TIMEOUT: Duration = Duration::from_secs(3);

/// One configured server as `doctor` sees it: values as written, `${VAR}`s
/// not expanded.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ServerCheck {
    /// The server's name in the config.
    pub name: String,
    /// The stdio command, if it is a stdio server.
    pub command: Option<String>,
    /// The stdio arguments.
    pub args: Vec<String>,
    /// The stdio server's `env`.
    pub env: BTreeMap<String, String>,
    /// The remote URL, if it is a remote server.
    pub url: Option<String>,
    /// The remote server's headers (values are secrets; never printed).
    pub headers: BTreeMap<String, String>,
    /// Every `${VAR}` without a default that the entry references, once each.
    pub referenced_vars: Vec<String>,
    /// The id of the preset the server came from, if known.
    pub preset: Option<String>,
    /// A disabled server is never started, so it is not checked.
    pub disabled: bool,
}

impl ServerCheck {
    /// The view of one `mcpServers` entry (`name` is its key). Unknown or
    /// mistyped fields are ignored here: validating them is the config's job.
    pub fn from_entry(name: &str, entry: &Value) -> ServerCheck {
        let string = |key: &str| entry.get(key).and_then(Value::as_str).map(String::from);
        let map = |key: &str| -> BTreeMap<String, String> {
            entry
                .get(key)
                .and_then(Value::as_object)
                .map(|m| {
                    m.iter()
                        .filter_map(|(k, v)| Some((k.clone(), v.as_str()?.to_owned())))
                        .collect()
                })
                .unwrap_or_default()
        };
        let command = string("command");
        let args: Vec<String> = entry
            .get("args")
            .and_then(Value::as_array)
            .map(|a| {
                a.iter()
                    .filter_map(Value::as_str)
                    .map(String::from)
                    .collect()
            })
            .unwrap_or_default();
        let env = map("env");
        let url = string("url");
        let headers = map("headers");

        let texts = command
            .iter()
            .chain(&args)
            .chain(env.values())
            .chain(&url)
            .chain(headers.values());
        let mut referenced_vars: Vec<String> = Vec::new();
        for text in texts {
            for var in required_vars(text) {
                if !referenced_vars.contains(&var) {
                    referenced_vars.push(var);
                }
            }
        }
        let preset = presets::find_by_launch(command.as_deref(), &args, url.as_deref())
            .map(|p| p.id.to_owned());
        ServerCheck {
            name: name.to_owned(),
            command,
            args,
            env,
            url,
            headers,
            referenced_vars,
            preset,
            disabled: entry
                .get("disabled")
                .and_then(Value::as_bool)
                .unwrap_or(false),
        }
    }
}

/// The environment the checks run against (toolbridge's own, or a test's).
#[derive(Debug, Clone, Default)]
pub struct Environment {
    vars: HashMap<String, String>,
}

impl Environment {
    /// toolbridge's environment.
    pub fn from_process() -> Environment {
        Environment::from_vars(std::env::vars_os().map(|(k, v)| {
            (
                k.to_string_lossy().into_owned(),
                v.to_string_lossy().into_owned(),
            )
        }))
    }

    /// An environment holding exactly `vars`.
    pub fn from_vars(
        vars: impl IntoIterator<Item = (impl Into<String>, impl Into<String>)>,
    ) -> Environment {
        Environment {
            vars: vars
                .into_iter()
                .map(|(k, v)| (k.into(), v.into()))
                .collect(),
        }
    }

    /// The value of `name`, if set.
    pub fn get(&self, name: &str) -> Option<&str> {
        self.vars.get(name).map(String::as_str)
    }
}

/// One problem with one server, and what to do about it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finding {
    /// The server's name in the config.
    pub server: String,
    /// What is wrong.
    pub problem: Problem,
    /// What to do, in one sentence.
    pub fix: String,
    /// How to install a missing command, when toolbridge knows how.
    pub install: Option<InstallPlan>,
}

/// What is wrong with a server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Problem {
    /// The stdio command is not installed (not on the `PATH` it would get).
    CommandNotFound {
        /// The command as configured.
        command: String,
    },
    /// A `${VAR}` without a default is not set.
    UnsetVariable {
        /// The variable.
        var: String,
    },
    /// The preset the server came from needs an API key that is not there.
    MissingApiKey {
        /// The preset's id.
        preset: String,
        /// The variable that should hold the key.
        var: String,
    },
    /// The remote server did not answer.
    Unreachable {
        /// The URL (with `${VAR}`s expanded; URLs carry no secrets here).
        url: String,
        /// Why: connection refused, DNS failure, timeout, ...
        reason: String,
    },
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Problem::CommandNotFound { command } => {
                write!(f, "command \"{command}\" not found on PATH")
            }
            Problem::UnsetVariable { var } => write!(f, "${{{var}}} is not set"),
            Problem::MissingApiKey { preset, var } => {
                write!(f, "API key {var} for preset \"{preset}\" is missing")
            }
            Problem::Unreachable { url, reason } => write!(f, "{url} does not answer: {reason}"),
        }
    }
}

impl fmt::Display for Finding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}; fix: {}", self.server, self.problem, self.fix)
    }
}

/// Checks every enabled server; returns the findings in config order, those of
/// one server together. Remote URLs are tried in parallel, each for at most
/// `url_timeout`.
pub async fn check_servers(
    servers: &[ServerCheck],
    env: &Environment,
    platform: &Platform,
    url_timeout: Duration,
) -> Vec<Finding> {
    let per_server = servers
        .iter()
        .filter(|s| !s.disabled)
        .map(|s| check_server(s, env, platform, url_timeout));
    futures::future::join_all(per_server)
        .await
        .into_iter()
        .flatten()
        .collect()
}

async fn check_server(
    server: &ServerCheck,
    env: &Environment,
    platform: &Platform,
    url_timeout: Duration,
) -> Vec<Finding> {
    let finding = |problem, fix: String| Finding {
        server: server.name.clone(),
        problem,
        fix,
        install: None,
    };
    let mut findings = Vec::new();
    let preset = server
        .preset
        .as_deref()
        .and_then(|id| presets::get(id).ok())
        .filter(|p| p.requires_api_key);
    let key_var = preset.and_then(|p| p.api_key_env_var);

    for var in &server.referenced_vars {
        if env.get(var).is_some() {
            continue;
        }
        match preset {
            Some(p) if key_var == Some(var.as_str()) => {
                findings.push(finding(missing_key(p, var), export_key_fix(p, var)))
            }
            _ => findings.push(finding(
                Problem::UnsetVariable { var: var.clone() },
                format!(
                    "export {var}=... before starting toolbridge, or write ${{{var}:-default}} \
                     in the config"
                ),
            )),
        }
    }

    if let (Some(p), Some(var)) = (preset, key_var)
        && let Some(fix) = key_gap(server, p, var, env)
    {
        findings.push(finding(missing_key(p, var), fix));
    }

    if let Some(command) = &server.command
        && let Ok(command) = expand(command, env)
    {
        let path = match server.env.get("PATH") {
            Some(raw) => expand(raw, env).ok(),
            None => env.get("PATH").map(String::from),
        };
        if !command_exists(&command, path.as_deref().map(OsStr::new)) {
            let plan = deps::install_plan(&command, platform);
            findings.push(Finding {
                server: server.name.clone(),
                fix: install_fix(&command, plan.as_ref(), server.env.contains_key("PATH")),
                problem: Problem::CommandNotFound { command },
                install: plan,
            });
        }
    }

    if let Some(url) = &server.url
        && let Ok(url) = expand(url, env)
        && let Err(reason) = answers(&url, url_timeout).await
    {
        findings.push(finding(
            Problem::Unreachable { url, reason },
            "check the URL, and that the server is running and reachable from here".into(),
        ));
    }
    findings
}

fn missing_key(preset: &Preset, var: &str) -> Problem {
    Problem::MissingApiKey {
        preset: preset.id.to_owned(),
        var: var.to_owned(),
    }
}

fn export_key_fix(preset: &Preset, var: &str) -> String {
    match preset.documentation_url {
        Some(url) => format!("export {var}=<your key> (how to get one: {url})"),
        None => format!("export {var}=<your key>"),
    }
}

/// Why the key is missing when no unset variable explains it: the entry has no
/// place for it, or what is there expands to nothing.
fn key_gap(server: &ServerCheck, preset: &Preset, var: &str, env: &Environment) -> Option<String> {
    let (raw, where_, add) = match preset.transport {
        Transport::Stdio => (
            server.env.get(var),
            "env",
            format!("add \"{var}\": \"${{{var}}}\" to the server's env and export {var}"),
        ),
        Transport::Http => (
            server
                .headers
                .iter()
                .find(|(k, _)| k.eq_ignore_ascii_case("authorization"))
                .map(|(_, v)| v),
            "headers",
            format!(
                "add \"Authorization\": \"Bearer ${{{var}}}\" to the server's headers and \
                 export {var}"
            ),
        ),
    };
    let Some(raw) = raw else {
        return Some(add);
    };
    // Unset variables were reported already; only an empty result is left.
    let value = expand(raw, env).ok()?;
    let token = value.trim().trim_start_matches("Bearer").trim();
    token.is_empty().then(|| {
        format!(
            "the key in the server's {where_} is empty; {}",
            export_key_fix(preset, var)
        )
    })
}

/// What to do about a missing `command`: the best install line for this
/// platform when toolbridge knows one.
pub(crate) fn install_fix(command: &str, plan: Option<&InstallPlan>, own_path: bool) -> String {
    let path_note = if own_path {
        " (this server sets its own PATH in env; the command must be on that one)"
    } else {
        ""
    };
    match plan {
        Some(plan) => match plan.methods.first() {
            Some(method) => format!(
                "install {}: `{}`{path_note} (or see {})",
                plan.software,
                method.display(),
                plan.download_url
            ),
            None => format!(
                "install {} from {}{path_note}",
                plan.software, plan.download_url
            ),
        },
        None => format!("install \"{command}\" or put its directory on PATH{path_note}"),
    }
}

fn command_exists(command: &str, path_var: Option<&OsStr>) -> bool {
    if command.contains('/') || command.contains('\\') {
        return Path::new(command).is_file();
    }
    deps::find_command(command, path_var).is_some()
}

/// Without the `http` feature no remote server can run, so no URL is tried.
#[cfg(not(feature = "http"))]
async fn answers(_url: &str, _timeout: Duration) -> Result<(), String> {
    Err("not tried: this toolbridge was built without the \"http\" feature, which remote servers need".into())
}

/// Whether `url` answers an HTTP request at all (any status is an answer).
#[cfg(feature = "http")]
async fn answers(url: &str, timeout: Duration) -> Result<(), String> {
    // A WebSocket handshake is an HTTP request, so the same check applies.
    let url = if let Some(rest) = url.strip_prefix("ws://") {
        format!("http://{rest}")
    } else if let Some(rest) = url.strip_prefix("wss://") {
        format!("https://{rest}")
    } else {
        url.to_owned()
    };
    let client = reqwest::Client::builder()
        .connect_timeout(timeout)
        .timeout(timeout)
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .map_err(|e| format!("cannot make an HTTP client: {e}"))?;
    match client.get(&url).send().await {
        // Only the status line matters; the body (maybe an endless event
        // stream) is dropped unread.
        Ok(_) => Ok(()),
        Err(e) if e.is_timeout() => Err(format!(
            "no answer within {:.0} s",
            timeout.as_secs_f64().ceil()
        )),
        Err(e) if e.is_builder() => Err(format!("invalid URL: {}", root_cause(&e))),
        Err(e) => Err(root_cause(&e)),
    }
}

/// The innermost error message (`connection refused`, `dns error: ...`).
#[cfg(feature = "http")]
fn root_cause(e: &(dyn std::error::Error + 'static)) -> String {
    let mut cause = e;
    while let Some(next) = cause.source() {
        cause = next;
    }
    cause.to_string()
}

/// The `${VAR}` references (without a `:-default`) in `text`, in order.
pub fn required_vars(text: &str) -> Vec<String> {
    let mut vars = Vec::new();
    for_each_ref(text, |name, default| {
        if default.is_none() {
            vars.push(name.to_owned());
        }
        None
    });
    vars
}

/// `text` with `${VAR}` and `${VAR:-default}` expanded from `env`; the unset
/// variables without a default when there are any.
fn expand(text: &str, env: &Environment) -> Result<String, Vec<String>> {
    let mut unset = Vec::new();
    let out = for_each_ref(text, |name, default| match (env.get(name), default) {
        (Some(v), _) => Some(v.to_owned()),
        (None, Some(d)) => Some(d.to_owned()),
        (None, None) => {
            unset.push(name.to_owned());
            Some(String::new())
        }
    });
    if unset.is_empty() {
        Ok(out)
    } else {
        Err(unset)
    }
}

/// Calls `f(name, default)` for every well-formed `${...}` in `text` and
/// returns `text` with each replaced by what `f` returns (kept when `None`).
fn for_each_ref(text: &str, mut f: impl FnMut(&str, Option<&str>) -> Option<String>) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(start) = rest.find("${") {
        out.push_str(&rest[..start]);
        let after = &rest[start + 2..];
        let Some(end) = after.find('}') else {
            out.push_str(&rest[start..]);
            return out;
        };
        let inner = &after[..end];
        let (name, default) = match inner.split_once(":-") {
            Some((n, d)) => (n, Some(d)),
            None => (inner, None),
        };
        let valid = name
            .chars()
            .next()
            .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
            && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
        let replacement = if valid { f(name, default) } else { None };
        match replacement {
            Some(r) => out.push_str(&r),
            None => out.push_str(&rest[start..start + 2 + end + 1]),
        }
        rest = &after[end + 1..];
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use std::net::TcpListener;

    use serde_json::json;

    use super::*;
    use crate::deps::Os;

    fn platform() -> Platform {
        Platform::of(Os::MacOs, false)
    }

    async fn check(entry: Value, env: &Environment) -> Vec<Finding> {
        let server = ServerCheck::from_entry("s", &entry);
        check_servers(&[server], env, &platform(), Duration::from_secs(2)).await
    }

    fn empty_dir_env(extra: &[(&str, &str)]) -> (tempfile::TempDir, Environment) {
        let dir = tempfile::tempdir().unwrap();
        let mut vars: Vec<(String, String)> =
            vec![("PATH".into(), dir.path().display().to_string())];
        vars.extend(extra.iter().map(|(k, v)| (k.to_string(), v.to_string())));
        (dir, Environment::from_vars(vars))
    }

    /// A port on 127.0.0.1 that nothing listens on.
    fn closed_port() -> u16 {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        listener.local_addr().unwrap().port()
    }

    #[test]
    fn entries_yield_their_required_variables_once() {
        let entry = json!({
            "command": "${BIN}/run",
            "args": ["--token", "${TOKEN}", "${OPT:-x}", "${TOKEN}"],
            "env": {"A": "${A_VAR}"},
            "disabled": true
        });
        let s = ServerCheck::from_entry("s", &entry);
        assert_eq!(s.referenced_vars, ["BIN", "TOKEN", "A_VAR"]);
        assert!(s.disabled);
        let remote = ServerCheck::from_entry(
            "r",
            &json!({"url": "https://${HOST}/mcp", "headers": {"Authorization": "Bearer ${K}"}}),
        );
        assert_eq!(remote.referenced_vars, ["HOST", "K"]);
    }

    #[test]
    fn expansion_follows_the_config_rules() {
        let env = Environment::from_vars([("A", "1")]);
        assert_eq!(expand("x${A}y${B:-2}${C:-}", &env), Ok("x1y2".into()));
        assert_eq!(
            expand("${A}${B}${C}", &env),
            Err(vec!["B".into(), "C".into()])
        );
        assert_eq!(
            expand("$A ${ not-a-var} ${", &env),
            Ok("$A ${ not-a-var} ${".into())
        );
    }

    #[tokio::test]
    async fn missing_command_is_reported_with_its_install_plan() {
        let (_dir, env) = empty_dir_env(&[]);
        let findings = check(json!({"command": "npx", "args": ["-y", "x"]}), &env).await;
        assert_eq!(findings.len(), 1, "{findings:?}");
        assert_eq!(
            findings[0].problem,
            Problem::CommandNotFound {
                command: "npx".into()
            }
        );
        assert!(
            findings[0].fix.contains("brew install node"),
            "{}",
            findings[0].fix
        );
        assert_eq!(findings[0].install.as_ref().unwrap().software, "Node.js");
    }

    #[cfg(unix)]
    #[tokio::test]
    async fn the_servers_own_path_is_the_one_searched() {
        use std::os::unix::fs::PermissionsExt;
        let (_dir, env) = empty_dir_env(&[]);
        let tools = tempfile::tempdir().unwrap();
        let tool = tools.path().join("my-tool");
        std::fs::write(&tool, "#!/bin/sh\n").unwrap();
        std::fs::set_permissions(&tool, std::fs::Permissions::from_mode(0o755)).unwrap();

        let own_path = json!({"command": "my-tool", "env": {"PATH": tools.path()}});
        assert_eq!(check(own_path, &env).await, []);

        let env_with_tools = Environment::from_vars([("PATH", tools.path().display().to_string())]);
        let elsewhere = json!({"command": "my-tool", "env": {"PATH": "/nonexistent"}});
        let findings = check(elsewhere, &env_with_tools).await;
        assert_eq!(findings.len(), 1, "{findings:?}");
        assert!(
            findings[0].fix.contains("sets its own PATH"),
            "{}",
            findings[0].fix
        );
    }

    #[tokio::test]
    async fn unset_variable_is_reported_once() {
        let (_dir, env) = empty_dir_env(&[]);
        let entry = json!({"command": "/bin/sh", "args": ["${NOPE}", "${NOPE}"]});
        let findings = check(entry, &env).await;
        assert_eq!(
            findings.iter().map(|f| &f.problem).collect::<Vec<_>>(),
            [&Problem::UnsetVariable { var: "NOPE".into() }]
        );
        assert!(findings[0].fix.contains("export NOPE="));
    }

    #[tokio::test]
    async fn missing_preset_key_is_one_finding_not_two() {
        let (_dir, env) = empty_dir_env(&[]);
        let preset = presets::get("tavily").unwrap();
        let mut entry = presets::to_config_entry(preset, None, &[]).unwrap();
        entry["command"] = json!("/bin/sh");
        let findings = check(entry.clone(), &env).await;
        assert_eq!(
            findings.iter().map(|f| &f.problem).collect::<Vec<_>>(),
            [&Problem::MissingApiKey {
                preset: "tavily".into(),
                var: "TAVILY_API_KEY".into()
            }]
        );
        assert!(findings[0].fix.contains("export TAVILY_API_KEY="));

        let (_dir, with_key) = empty_dir_env(&[("TAVILY_API_KEY", "tvly-1")]);
        assert_eq!(check(entry, &with_key).await, []);
    }

    #[tokio::test]
    async fn preset_entry_without_its_key_is_reported() {
        let (_dir, env) = empty_dir_env(&[("TAVILY_API_KEY", "tvly-1")]);
        // The key is exported, but a stdio server does not inherit it.
        let bare = json!({"command": "/bin/sh", "args": ["-y", "tavily-mcp@0.2"]});
        let findings = check(bare, &env).await;
        assert_eq!(findings.len(), 1, "{findings:?}");
        assert!(matches!(findings[0].problem, Problem::MissingApiKey { .. }));
        assert!(
            findings[0].fix.contains("to the server's env"),
            "{}",
            findings[0].fix
        );

        let empty =
            json!({"command": "/bin/sh", "args": ["tavily-mcp"], "env": {"TAVILY_API_KEY": ""}});
        let findings = check(empty, &env).await;
        assert!(findings[0].fix.contains("is empty"), "{}", findings[0].fix);
    }

    #[tokio::test]
    async fn remote_preset_without_authorization_is_reported() {
        let (_dir, env) = empty_dir_env(&[]);
        let port = closed_port();
        let server = ServerCheck {
            name: "s".into(),
            url: Some(format!("http://127.0.0.1:{port}/mcp")),
            preset: Some("zhipu-web-search".into()),
            ..ServerCheck::default()
        };
        let findings = check_servers(&[server], &env, &platform(), Duration::from_secs(2)).await;
        assert!(
            matches!(&findings[0].problem, Problem::MissingApiKey { var, .. } if var == "Z_AI_API_KEY"),
            "{findings:?}"
        );
        assert!(findings[0].fix.contains("Bearer ${Z_AI_API_KEY}"));
    }

    #[tokio::test]
    #[cfg(feature = "http")]
    async fn closed_port_is_unreachable_and_an_http_error_status_is_an_answer() {
        let (_dir, env) = empty_dir_env(&[]);
        let port = closed_port();
        let findings = check(json!({"url": format!("http://127.0.0.1:{port}/mcp")}), &env).await;
        assert_eq!(findings.len(), 1, "{findings:?}");
        match &findings[0].problem {
            Problem::Unreachable { reason, .. } => {
                assert!(reason.to_lowercase().contains("refused"), "{reason}")
            }
            other => panic!("{other:?}"),
        }

        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let answer = tokio::spawn(async move {
            use tokio::io::{AsyncReadExt, AsyncWriteExt};
            let (mut socket, _) = listener.accept().await.unwrap();
            let mut buf = [0u8; 1024];
            let n = socket.read(&mut buf).await.unwrap();
            socket
                .write_all(b"HTTP/1.1 401 Unauthorized\r\ncontent-length: 0\r\n\r\n")
                .await
                .unwrap();
            String::from_utf8_lossy(&buf[..n]).into_owned()
        });
        let findings = check(json!({"url": format!("http://{addr}/mcp")}), &env).await;
        assert_eq!(findings, []);
        // Bounded, so a check that never connected fails instead of hanging.
        let request = tokio::time::timeout(Duration::from_secs(10), answer)
            .await
            .expect("the check never asked the server")
            .unwrap();
        assert!(request.starts_with("GET /mcp "), "{request}");
    }

    #[tokio::test]
    async fn disabled_servers_are_not_checked() {
        let (_dir, env) = empty_dir_env(&[]);
        let findings = check(json!({"command": "npx", "disabled": true}), &env).await;
        assert_eq!(findings, []);
    }
}
