//! [`ServerListing`]: one server as `servers list` shows it, secrets masked;
//! a view of the server's record, not a model of its own.

use std::collections::BTreeMap;

use serde::{Serialize, Serializer};

use super::{
    record::ServerRecord,
    sandbox::SandboxRecord,
    spec::{DEFAULT_CALL_TIMEOUT, TransportKind},
};
use crate::redact::{MASK, mask_args, mask_url};

/// One server for display: values as written in the file (`${VAR}` not
/// expanded), every env and header value shown as `***`, and secrets in URLs
/// and arguments masked (passwords, tokens, `--api-key VALUE`).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct ServerListing {
    /// The server's name.
    pub name: String,
    /// The transport (for an undeclared URL, the one tried first).
    #[serde(serialize_with = "kind_str")]
    pub transport: TransportKind,
    /// True when the transport was not declared and is detected on connect
    /// (streamable HTTP, falling back to legacy SSE).
    #[serde(skip_serializing_if = "is_false")]
    pub auto_detect: bool,
    /// False for `"disabled": true`.
    pub enabled: bool,
    /// True for the built-in example server used when no config file exists.
    #[serde(skip_serializing_if = "is_false")]
    pub builtin: bool,
    /// Stdio: the program.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub command: Option<String>,
    /// Stdio: the arguments, secrets masked.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub args: Vec<String>,
    /// Stdio: the environment's names, every value `***`.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub env: BTreeMap<String, String>,
    /// Stdio: the working directory.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cwd: Option<String>,
    /// Network: the URL, secrets masked.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    /// Network: the header names, every value `***`.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub headers: BTreeMap<String, String>,
    /// Seconds one tool call may take (the default when not configured).
    pub timeout: f64,
    /// Stdio: the `.env` file read for the environment (`envFile`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub env_file: Option<String>,
    /// Stdio: toolbridge's variables passed on (`inheritEnv`), names only.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub inherit_env: Vec<String>,
    /// Seconds the server may take to start, when configured.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub startup_timeout: Option<f64>,
    /// Tools never listed nor called.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub disabled_tools: Vec<String>,
    /// Most characters of one result given to a model, when configured.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub result_budget: Option<usize>,
    /// Stdio: its sandbox, its own or the settings' (`"default"` when
    /// neither has one): `false`, `"default"` or the object as written.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sandbox: Option<serde_json::Value>,
    /// Stdio: why this system cannot set up its sandbox, if it cannot (the
    /// server then does not start unless its sandbox is `false`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sandbox_unavailable: Option<String>,
}

impl ServerListing {
    /// `record` for display; `builtin` marks the built-in example server;
    /// `sandbox` is the settings' sandbox for stdio servers without one.
    pub(crate) fn from_record(
        record: &ServerRecord,
        builtin: bool,
        sandbox: Option<&SandboxRecord>,
    ) -> Self {
        let masked = |pairs: &[(String, String)]| {
            pairs
                .iter()
                .map(|(key, _)| (key.clone(), MASK.to_string()))
                .collect()
        };
        let stdio = record.kind() == TransportKind::Stdio;
        let own_sandbox = record.sandbox.as_ref().or(sandbox);
        ServerListing {
            name: record.name.clone(),
            transport: record.kind(),
            auto_detect: record.auto_detect(),
            enabled: !record.disabled,
            builtin,
            command: record.command.clone(),
            args: mask_args(&record.args),
            env: masked(&record.env),
            cwd: record.cwd.clone(),
            url: record.url.as_deref().map(mask_url),
            headers: masked(&record.headers),
            timeout: record.timeout.unwrap_or(DEFAULT_CALL_TIMEOUT).as_secs_f64(),
            env_file: record.env_file.clone(),
            inherit_env: record.inherit_env.clone(),
            startup_timeout: record.startup_timeout.map(|t| t.as_secs_f64()),
            disabled_tools: record.disabled_tools.clone(),
            result_budget: record.result_budget,
            sandbox: stdio
                .then(|| own_sandbox.map_or_else(|| "default".into(), SandboxRecord::to_json)),
            sandbox_unavailable: stdio
                .then(|| own_sandbox.unwrap_or(&SandboxRecord::Default).unavailable())
                .flatten(),
        }
    }
}

fn kind_str<S: Serializer>(kind: &TransportKind, serializer: S) -> Result<S::Ok, S::Error> {
    serializer.serialize_str(kind.as_str())
}

fn is_false(value: &bool) -> bool {
    !value
}
