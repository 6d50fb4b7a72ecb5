//! The checks on the config alone (before anything is started): one enabled
//! server record at a time, remote URLs in parallel.

use std::{ffi::OsStr, path::Path, time::Duration};

use super::{
    Fix,
    finding::{Finding, Problem},
    reach::answers,
};
use crate::{
    config::{Config, ConfigError, Env, ServerRecord, expand, unset_variables},
    deps::{self, Platform},
    presets::{self, Preset, Transport},
    redact::mask_url,
};

/// How long a remote server may take to answer before it counts as down.
pub const URL_TIMEOUT: Duration = Duration::from_secs(3);

/// Checks every enabled server of `config` without starting it, taking
/// `${VAR}` values from the config's environment; returns the findings in
/// config order, those of one server together. Remote URLs are tried in
/// parallel, each for at most `url_timeout`.
pub async fn check_servers(
    config: &Config,
    platform: &Platform,
    url_timeout: Duration,
) -> Vec<Finding> {
    let per_server = config
        .records()
        .iter()
        .filter(|record| !record.disabled)
        .map(|record| {
            let preset = presets::find_by_launch(
                record.command.as_deref(),
                &record.args,
                record.url.as_deref(),
            );
            record_problems(config, record, preset, platform, url_timeout)
        });
    futures::future::join_all(per_server)
        .await
        .into_iter()
        .flatten()
        .collect()
}

/// The problems of one enabled server record, found without starting it.
pub(super) async fn record_problems(
    config: &Config,
    record: &ServerRecord,
    preset: Option<&'static Preset>,
    platform: &Platform,
    url_timeout: Duration,
) -> Vec<Finding> {
    let env = config.env();
    let finding = |problem, fix: Fix| Finding::new(record.name.clone(), problem, fix);
    let mut findings = Vec::new();
    let preset = preset.filter(|p| p.requires_api_key);
    let key_var = preset.and_then(|p| p.api_key_env_var);

    for var in unset_in(record, env) {
        match preset {
            Some(p) if key_var == Some(var.as_str()) => {
                findings.push(finding(missing_key(p, &var), export_key_fix(p, &var)))
            }
            _ => findings.push(finding(
                Problem::UnsetVariable { var: var.clone() },
                Fix::ExportVariable { var: var.clone() },
            )),
        }
    }

    // What else keeps the record from resolving (unset variables are above).
    match config.resolve(&record.name) {
        Ok(_) | Err(ConfigError::UnsetVariable { .. }) => {}
        Err(error) => findings.push(finding(
            Problem::Invalid {
                message: error.to_string(),
            },
            Fix::CorrectValue,
        )),
    }

    if let (Some(p), Some(var)) = (preset, key_var)
        && let Some(fix) = key_gap(record, p, var, env)
    {
        findings.push(finding(missing_key(p, var), fix));
    }

    if let Some(command) = &record.command
        && let Ok(command) = expand(command, env)
    {
        let own_path = record.env.iter().find(|(key, _)| key == "PATH");
        let path = match own_path {
            Some((_, raw)) => expand(raw, env).ok(),
            None => env.var("PATH"),
        };
        if is_not_executable(&command) {
            findings.push(finding(
                Problem::NotExecutable {
                    command: command.clone(),
                },
                Fix::MakeExecutable {
                    command: command.clone(),
                },
            ));
        } else if !command_exists(&command, path.as_deref().map(OsStr::new)) {
            let plan = deps::install_plan(&command, platform);
            let fix = Fix::install(&command, plan.as_ref(), own_path.is_some());
            findings.push(Finding {
                install: plan,
                ..finding(Problem::CommandNotFound { command }, fix)
            });
        }
    }

    if let Some(written) = &record.url
        && let Ok(url) = expand(written, env)
        && let Err(reason) = answers(&url, url_timeout).await
    {
        findings.push(finding(
            Problem::Unreachable {
                url: mask_url(written),
                reason,
            },
            Fix::CheckUrlReachable,
        ));
    }
    findings
}

/// Every variable the record needs that is not set, in field order, once.
fn unset_in(record: &ServerRecord, env: &dyn Env) -> Vec<String> {
    let texts = record
        .command
        .iter()
        .chain(&record.args)
        .chain(record.env.iter().map(|(_, value)| value))
        .chain(&record.url)
        .chain(record.headers.iter().map(|(_, value)| value));
    let mut unset: Vec<String> = Vec::new();
    for text in texts {
        // A malformed reference is reported by the resolve check.
        for var in unset_variables(text, env).unwrap_or_default() {
            if !unset.contains(&var) {
                unset.push(var);
            }
        }
    }
    unset
}

fn missing_key(preset: &Preset, var: &str) -> Problem {
    Problem::MissingApiKey {
        preset: preset.id.to_owned(),
        var: var.to_owned(),
    }
}

fn export_key_fix(preset: &Preset, var: &str) -> Fix {
    let var = var.to_owned();
    match preset.documentation_url {
        Some(url) => Fix::ExportKeyWithDocs {
            var,
            url: url.to_owned(),
        },
        None => Fix::ExportKey { var },
    }
}

/// Why the key is missing when no unset variable explains it: the entry has no
/// place for it, or what is there expands to nothing.
fn key_gap(record: &ServerRecord, preset: &Preset, var: &str, env: &dyn Env) -> Option<Fix> {
    let (raw, where_, add) = match preset.transport {
        Transport::Stdio => (
            record.env.iter().find(|(key, _)| key == var),
            "env",
            Fix::AddKeyToEnv {
                var: var.to_owned(),
            },
        ),
        Transport::Http => (
            record
                .headers
                .iter()
                .find(|(key, _)| key.eq_ignore_ascii_case("authorization")),
            "headers",
            Fix::AddKeyToHeaders {
                var: var.to_owned(),
            },
        ),
    };
    let Some((_, raw)) = raw else {
        return Some(add);
    };
    // Unset variables were reported already; only an empty result is left.
    let value = expand(raw, env).ok()?;
    let token = value.trim().trim_start_matches("Bearer").trim();
    token.is_empty().then(|| Fix::EmptyKey {
        place: where_.to_owned(),
        then: Box::new(export_key_fix(preset, var)),
    })
}

/// True for a command given as a path to a file that has no execute bit.
fn is_not_executable(command: &str) -> bool {
    if !(command.contains('/') || command.contains('\\')) {
        return false;
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::metadata(command)
            .is_ok_and(|meta| meta.is_file() && meta.permissions().mode() & 0o111 == 0)
    }
    #[cfg(not(unix))]
    {
        false
    }
}

fn command_exists(command: &str, path_var: Option<&OsStr>) -> bool {
    if command.contains('/') || command.contains('\\') {
        return Path::new(command).is_file();
    }
    deps::find_command(command, path_var).is_some()
}

#[cfg(test)]
mod tests {
    use std::{collections::HashMap, net::TcpListener};

    use serde_json::{Value, json};

    use super::*;
    use crate::deps::Os;

    type Vars = HashMap<String, String>;

    fn platform() -> Platform {
        Platform::of(Os::MacOs, false)
    }

    fn config(entry: Value, env: &Vars) -> Config {
        let text = json!({"mcpServers": {"s": entry}}).to_string();
        Config::parse(Path::new("config.json"), text)
            .unwrap()
            .with_env(env.clone())
    }

    async fn check(entry: Value, env: &Vars) -> Vec<Finding> {
        check_servers(&config(entry, env), &platform(), Duration::from_secs(2)).await
    }

    fn vars(pairs: &[(&str, &str)]) -> Vars {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    fn empty_dir_env(extra: &[(&str, &str)]) -> (tempfile::TempDir, Vars) {
        let dir = tempfile::tempdir().unwrap();
        let mut env = vars(extra);
        env.insert("PATH".into(), dir.path().display().to_string());
        (dir, env)
    }

    /// A port on 127.0.0.1 that nothing listens on.
    fn closed_port() -> u16 {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        listener.local_addr().unwrap().port()
    }

    fn problems(findings: &[Finding]) -> Vec<&Problem> {
        findings.iter().map(|f| &f.problem).collect()
    }

    #[tokio::test]
    async fn each_unset_variable_is_reported_once_in_field_order() {
        let (_dir, env) = empty_dir_env(&[]);
        let entry = json!({
            "command": "${BIN}/run",
            "args": ["--token", "${TOKEN}", "${OPT:-x}", "${TOKEN}"],
            "env": {"A": "${A_VAR}"}
        });
        let unset = |var: &str| Problem::UnsetVariable { var: var.into() };
        assert_eq!(
            problems(&check(entry, &env).await),
            [&unset("BIN"), &unset("TOKEN"), &unset("A_VAR")]
        );
    }

    /// Regression: doctor had its own expander, which knew neither
    /// `${env:VAR}` nor `$$`, and left `${VAR:-default}` empty when VAR was
    /// set but empty; it reported servers that start fine.
    #[tokio::test]
    async fn expansion_is_the_configs_own() {
        let (_dir, mut env) = empty_dir_env(&[("EMPTY", ""), ("SHELL_DIR", "/bin")]);
        env.insert("PATH".into(), "/nonexistent".into());
        for entry in [
            json!({"command": "${env:SHELL_DIR}/sh"}),
            json!({"command": "${EMPTY:-/bin/sh}"}),
            json!({"command": "/bin/sh", "args": ["-c", "echo $${NOT_A_VARIABLE}"]}),
        ] {
            assert_eq!(check(entry.clone(), &env).await, [], "{entry}");
        }
    }

    #[tokio::test]
    async fn a_malformed_reference_is_reported_with_its_place() {
        let (_dir, env) = empty_dir_env(&[]);
        let findings = check(json!({"command": "/bin/sh", "args": ["${A B}"]}), &env).await;
        assert_eq!(findings.len(), 1, "{findings:?}");
        let Problem::Invalid { message } = &findings[0].problem else {
            panic!("{findings:?}")
        };
        assert!(message.starts_with("config.json:1:"), "{message}");
        assert!(message.contains("\"args\"[0]"), "{message}");
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
        let json = serde_json::to_value(&findings[0]).unwrap();
        assert_eq!(json["problem"]["kind"], "commandNotFound");
        assert_eq!(json["installCommand"], "brew install node");
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

        let env_with_tools = vars(&[("PATH", &tools.path().display().to_string())]);
        let elsewhere = json!({"command": "my-tool", "env": {"PATH": "/nonexistent"}});
        let findings = check(elsewhere, &env_with_tools).await;
        assert_eq!(findings.len(), 1, "{findings:?}");
        assert!(
            findings[0].fix.contains("sets its own PATH"),
            "{}",
            findings[0].fix
        );
    }

    #[cfg(unix)]
    #[tokio::test]
    async fn a_command_without_its_execute_bit_is_reported_with_chmod() {
        let (_dir, env) = empty_dir_env(&[]);
        let tools = tempfile::tempdir().unwrap();
        let tool = tools.path().join("server.sh");
        std::fs::write(&tool, "#!/bin/sh\n").unwrap();
        let findings = check(json!({"command": tool}), &env).await;
        let command = tool.display().to_string();
        assert_eq!(
            problems(&findings),
            [&Problem::NotExecutable {
                command: command.clone()
            }]
        );
        assert!(
            findings[0].fix.contains(&format!("chmod +x {command}")),
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
            problems(&findings),
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
            problems(&findings),
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
        let config = config(json!({"url": format!("http://127.0.0.1:{port}/mcp")}), &env);
        // The preset's real URL is not asked here: the preset is given.
        let preset = presets::get("zhipu-web-search").ok();
        let findings = record_problems(
            &config,
            &config.records()[0],
            preset,
            &platform(),
            Duration::from_secs(2),
        )
        .await;
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

    /// Regression: an unreachable URL was shown expanded, key and all.
    #[tokio::test]
    #[cfg(feature = "http")]
    async fn an_unreachable_url_is_shown_as_written_and_masked() {
        let (_dir, env) = empty_dir_env(&[("API_KEY", "k-SECRET-1"), ("PW", "pw-SECRET-2")]);
        let port = closed_port();
        let url = format!("http://me:${{PW}}@127.0.0.1:{port}/mcp?key=${{API_KEY}}&q=${{API_KEY}}");
        let findings = check(json!({"url": url}), &env).await;
        assert_eq!(findings.len(), 1, "{findings:?}");
        let shown = format!("{} {:?}", findings[0], findings[0]);
        assert!(!shown.contains("SECRET"), "{shown}");
        assert!(
            shown.contains(&format!("http://me:***@127.0.0.1:{port}/mcp?key=***")),
            "{shown}"
        );
    }

    #[tokio::test]
    async fn disabled_servers_are_not_checked() {
        let (_dir, env) = empty_dir_env(&[]);
        let findings = check(json!({"command": "npx", "disabled": true}), &env).await;
        assert_eq!(findings, []);
    }
}
