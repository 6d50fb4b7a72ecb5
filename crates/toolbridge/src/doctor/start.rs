//! Starting a server for real, as doctor's last check: spawn (or connect),
//! complete the handshake and list the tools, within a short start timeout;
//! on failure, say why with the server's stderr tail and what to do.

use std::{
    path::{Path, PathBuf},
    time::Duration,
};

use serde::Serialize;

use super::{
    Fix,
    finding::{Finding, Problem},
};
use crate::{
    config::{ServerSpec, TransportKind, TransportSpec},
    pool::{ConnectionInfo, FailureKind, Pool, PoolError},
    redact::Redactor,
    transport::TransportError,
};

/// How long doctor gives a server to start and list its tools, unless the
/// server sets its own `startupTimeout` or `--start-timeout` says otherwise:
/// 15 s, enough for a warm `npx` or `uvx` start on a slow machine, short
/// enough that a hung server does not hold doctor for a minute.
pub const START_TIMEOUT: Duration = Duration::from_secs(15);

/// A server that started and listed its tools.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Started {
    /// What the server said about itself, and how long its start took (in
    /// JSON: `transport`, `protocolVersion`, `serverName`, `serverVersion`,
    /// `startMs`).
    #[serde(flatten)]
    pub info: ConnectionInfo,
    /// How many tools it lists.
    pub tool_count: usize,
    /// What hides in its tools' definitions, one per tool that has
    /// hidden characters (not serialized: they are findings).
    #[serde(skip)]
    pub hidden: Vec<Finding>,
}

/// Starts `spec`'s server in `pool` (which holds it, with the start
/// timeout that applies to it), lists its tools within `list_limit`, and
/// reports what it said, or a finding that says why it cannot work and
/// what to do. A server that starts but never lists its tools is as useless
/// as one that never starts.
pub(super) async fn start_server(
    pool: &Pool,
    spec: &ServerSpec,
    list_limit: Duration,
) -> Result<Started, Finding> {
    let server = spec.name.as_str();
    let tried = async {
        let info = pool.connect(server).await?;
        let tools = match tokio::time::timeout(list_limit, pool.list_server_tools(server)).await {
            Ok(tools) => tools?,
            Err(_) => {
                return Err(PoolError::Timeout {
                    server: server.to_owned(),
                    tool: None,
                    after: list_limit,
                });
            }
        };
        Ok::<_, PoolError>((info, tools))
    };
    match tried.await {
        Ok((info, tools)) => Ok(Started {
            info,
            tool_count: tools.len(),
            hidden: tools
                .iter()
                .filter_map(|t| hidden_finding(spec, t))
                .collect(),
        }),
        Err(error) => {
            let stderr = pool.stderr_tail(server);
            Err(finding_for(spec, &error, stderr))
        }
    }
}

/// The finding about the hidden characters in `tool`'s definition, if it
/// has any.
fn hidden_finding(spec: &ServerSpec, tool: &crate::tools::McpTool) -> Option<Finding> {
    let found = crate::hidden_chars::tool_findings(tool);
    let first = found.first()?;
    Some(Finding::new(
        spec.name.clone(),
        Problem::HiddenCharacters {
            tool: tool.name.clone(),
            field: first.field.clone(),
            code_point: first.code_point.clone(),
            count: found.iter().map(|f| f.count).sum(),
        },
        Fix::HiddenCharacters {
            server: spec.name.clone(),
        },
    ))
}

/// The finding for a start that failed with `error`: the problem (the
/// server's stderr tail included, its config secrets masked) and the fix.
/// `running_stderr` is the tail of a server still running (one that started
/// but did not list its tools), when the error carries none.
fn finding_for(spec: &ServerSpec, error: &PoolError, running_stderr: Option<String>) -> Finding {
    let redactor = Redactor::for_server(spec);
    let scrub = |text: &str| redactor.redact(text).into_owned();
    let carried = match error {
        PoolError::Start { stderr, .. }
        | PoolError::Closed { stderr, .. }
        | PoolError::StartTimeout { stderr, .. } => stderr.clone(),
        _ => None,
    };
    let stderr = carried.or(running_stderr).as_deref().map(scrub);
    let (problem, fix) = match error {
        PoolError::StartTimeout { after, .. }
        | PoolError::Timeout {
            tool: None, after, ..
        } => (
            Problem::StartTimeout {
                timeout_ms: after.as_millis().min(u128::from(u64::MAX)) as u64,
                stderr,
            },
            timeout_fix(spec),
        ),
        other => {
            let status = http_status(other);
            let fix = failure_fix(spec, other, status, stderr.as_deref());
            (
                Problem::StartFailed {
                    reason: scrub(&reason(spec, other)),
                    reason_kind: FailureKind::of(other),
                    http_status: status,
                    stderr,
                },
                fix,
            )
        }
    };
    Finding::new(spec.name.clone(), problem, fix)
}

/// What went wrong, without the server's name (the finding names it) and
/// without the stderr tail (the problem holds it apart).
fn reason(spec: &ServerSpec, error: &PoolError) -> String {
    let text = match error {
        PoolError::Start { reason, .. } => reason.clone(),
        PoolError::Closed { .. } => "the server closed the connection".to_owned(),
        other => other.to_string(),
    };
    // Layers name the server in their messages; the finding does already.
    text.replace(&format!("server \"{}\": ", spec.name), "")
}

/// The HTTP status a remote server answered with, when it is known: from the
/// transport's error, else from the `HTTP 401 ...` its message starts a
/// part with.
fn http_status(error: &PoolError) -> Option<u16> {
    if let PoolError::Transport(TransportError::Remote {
        status: Some(status),
        ..
    }) = error
    {
        return Some(*status);
    }
    let text = error.to_string();
    text.match_indices("HTTP ").find_map(|(at, _)| {
        let digits = text.get(at + 5..at + 8)?;
        let after = text[at + 8..].chars().next();
        (digits.bytes().all(|b| b.is_ascii_digit()) && after.is_none_or(|c| !c.is_ascii_digit()))
            .then(|| digits.parse().ok())
            .flatten()
    })
}

fn timeout_fix(spec: &ServerSpec) -> Fix {
    match spec.kind() {
        TransportKind::Stdio => Fix::StartTimeoutStdio,
        _ => Fix::StartTimeoutRemote,
    }
}

fn failure_fix(
    spec: &ServerSpec,
    error: &PoolError,
    status: Option<u16>,
    stderr: Option<&str>,
) -> Fix {
    if stderr.is_some_and(is_certificate_error) || is_certificate_error(&error.to_string()) {
        return Fix::Certificate;
    }
    match (status, &spec.transport) {
        // An OAuth server (its 401 carries a Bearer challenge).
        _ if error.needs_sign_in() => {
            return Fix::SignIn {
                server: spec.name.clone(),
            };
        }
        (Some(401 | 403), _) => return Fix::CheckToken,
        (Some(404), _) => return Fix::CheckEndpointPath,
        (Some(_), _) => return Fix::CheckUrlAndLogs,
        (None, TransportSpec::Stdio(stdio)) => {
            if let PoolError::Transport(TransportError::Connect { .. }) = error {
                let reason = error.to_string();
                let command = stdio.command.clone();
                if reason.contains("Permission denied") || reason.contains("os error 13") {
                    return Fix::MakeExecutable { command };
                }
                return Fix::CheckProgram { command };
            }
            let missing = missing_paths(&stdio.args, stdio.cwd.as_deref());
            if !missing.is_empty() {
                return Fix::create_folders(&missing);
            }
        }
        (None, _) => return Fix::CheckUrlReachable,
    }
    if stderr.is_some() {
        Fix::ReadStderr
    } else {
        Fix::RunYourself
    }
}

/// Whether `text` (a server's stderr, or an error) says a TLS certificate
/// was not trusted, as rustls, OpenSSL, Node and Python say it.
pub(crate) fn is_certificate_error(text: &str) -> bool {
    const SIGNS: &[&str] = &[
        "UnknownIssuer",
        "CERTIFICATE_VERIFY_FAILED",
        "CERT_",
        "self signed certificate",
        "self-signed certificate",
        "unable to get local issuer certificate",
        "unable to verify the first certificate",
        "certificate verify failed",
        "invalid peer certificate",
    ];
    SIGNS.iter().any(|sign| text.contains(sign))
}

/// The arguments that name a path (absolute, or `./`, `../`) that does not
/// exist, as written: what a server given a missing folder fails on.
fn missing_paths(args: &[String], cwd: Option<&Path>) -> Vec<String> {
    args.iter()
        .filter(|arg| {
            let path = Path::new(arg.as_str());
            let looks_like_path =
                path.is_absolute() || arg.starts_with("./") || arg.starts_with("../");
            if !looks_like_path {
                return false;
            }
            let full: PathBuf = match cwd {
                Some(cwd) if !path.is_absolute() => cwd.join(path),
                _ => path.to_path_buf(),
            };
            !full.exists()
        })
        .cloned()
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_paths_that_do_not_exist_are_missing() {
        let dir = tempfile::tempdir().unwrap();
        let here = dir.path().display().to_string();
        let gone = dir.path().join("gone").display().to_string();
        let args = vec![
            "-y".to_owned(),
            "@scope/server".to_owned(),
            here,
            gone.clone(),
            "./nope".to_owned(),
        ];
        assert_eq!(
            missing_paths(&args, Some(dir.path())),
            [gone, "./nope".to_owned()]
        );
    }

    #[test]
    fn the_http_status_is_read_from_a_transport_error_or_its_text() {
        let start = |reason: &str| PoolError::Start {
            server: "s".into(),
            reason: reason.into(),
            exit: None,
            stderr: None,
        };
        assert_eq!(
            http_status(&start(
                "send initialize: http://x/mcp: HTTP 401 Unauthorized"
            )),
            Some(401)
        );
        assert_eq!(http_status(&start("HTTP 4040 nothing")), None);
        assert_eq!(http_status(&start("connection refused")), None);
    }

    /// Issue 24, item 6: behind a TLS-intercepting proxy every npx/uvx
    /// server failed with a certificate error, and doctor said only "its
    /// stderr says why".
    #[test]
    fn a_certificate_error_in_stderr_names_the_trust_store_variables() {
        let spec = ServerSpec::stdio("s", "npx", ["-y", "@scope/server"]);
        for said in [
            "npm error code UNABLE_TO_GET_ISSUER_CERT_LOCALLY",
            "Error: self signed certificate in certificate chain",
            "error: invalid peer certificate: UnknownIssuer",
            "ssl.SSLCertVerificationError: [SSL: CERTIFICATE_VERIFY_FAILED] certificate verify failed",
        ] {
            let error = PoolError::Start {
                server: "s".into(),
                reason: "the server closed the connection during the handshake".into(),
                exit: None,
                stderr: Some(format!("starting\n{said}")),
            };
            let finding = finding_for(&spec, &error, None);
            assert!(
                finding.fix.contains("SSL_CERT_FILE"),
                "{said}: {}",
                finding.fix
            );
            assert!(finding.fix.contains("NODE_EXTRA_CA_CERTS"), "{said}");
        }
        let error = PoolError::Start {
            server: "s".into(),
            reason: "the server closed the connection during the handshake".into(),
            exit: None,
            stderr: Some("Error: API_KEY is not set".into()),
        };
        assert!(
            !finding_for(&spec, &error, None)
                .fix
                .contains("SSL_CERT_FILE")
        );
    }

    #[test]
    fn a_servers_stderr_loses_the_configs_secrets() {
        let mut spec = ServerSpec::stdio("s", "srv", ["--api-key", "ak-SECRET-0001", "/data"]);
        if let TransportSpec::Stdio(stdio) = &mut spec.transport {
            stdio.env.insert("TOKEN".into(), "tok-SECRET-0002".into());
        }
        let error = PoolError::Start {
            server: "s".into(),
            reason: "the server closed the connection during the handshake".into(),
            exit: None,
            stderr: Some("bad key ak-SECRET-0001\nbad token tok-SECRET-0002".into()),
        };
        let finding = finding_for(&spec, &error, None);
        let shown = format!("{finding} {}", serde_json::to_string(&finding).unwrap());
        assert!(!shown.contains("SECRET"), "{shown}");
        assert!(shown.contains("bad key ***"), "{shown}");
    }
}
