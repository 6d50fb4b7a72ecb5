//! [`ServerListing`]: one server as `servers list` shows it, secrets masked.

use std::collections::BTreeMap;

use serde::{Serialize, Serializer};

use super::{
    mask::{MASK, mask_args, mask_url},
    record::ServerRecord,
    spec::{DEFAULT_CALL_TIMEOUT, ServerSpec, TransportKind, TransportSpec},
};

/// One server for display: values as written in the file (`${VAR}` not
/// expanded), every env and header value shown as `***`, and secrets in URLs
/// and arguments masked (see [`mask_url`], [`mask_args`]).
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
}

impl ServerListing {
    pub(crate) fn from_record(record: &ServerRecord) -> Self {
        let masked = |pairs: &[(String, String)]| {
            pairs
                .iter()
                .map(|(key, _)| (key.clone(), MASK.to_string()))
                .collect()
        };
        ServerListing {
            name: record.name.clone(),
            transport: record.kind(),
            auto_detect: record.auto_detect(),
            enabled: !record.disabled,
            builtin: false,
            command: record.command.clone(),
            args: mask_args(&record.args),
            env: masked(&record.env),
            cwd: record.cwd.clone(),
            url: record.url.as_deref().map(mask_url),
            headers: masked(&record.headers),
            timeout: record.timeout.unwrap_or(DEFAULT_CALL_TIMEOUT).as_secs_f64(),
        }
    }

    pub(crate) fn from_builtin(spec: &ServerSpec) -> Self {
        let mask_all = |map: &BTreeMap<String, String>| {
            map.keys()
                .map(|key| (key.clone(), MASK.to_string()))
                .collect()
        };
        let mut listing = ServerListing {
            name: spec.name.clone(),
            transport: spec.kind(),
            auto_detect: false,
            enabled: !spec.disabled,
            builtin: true,
            command: None,
            args: Vec::new(),
            env: BTreeMap::new(),
            cwd: None,
            url: None,
            headers: BTreeMap::new(),
            timeout: spec.call_timeout().as_secs_f64(),
        };
        match &spec.transport {
            TransportSpec::Stdio(stdio) => {
                listing.command = Some(stdio.command.clone());
                listing.args = mask_args(&stdio.args);
                listing.env = mask_all(&stdio.env);
                listing.cwd = stdio.cwd.as_ref().map(|cwd| cwd.display().to_string());
            }
            TransportSpec::Http(remote)
            | TransportSpec::Sse(remote)
            | TransportSpec::WebSocket(remote) => {
                listing.auto_detect = remote.auto_detect;
                listing.url = Some(mask_url(&remote.url));
                listing.headers = mask_all(&remote.headers);
            }
        }
        listing
    }
}

fn kind_str<S: Serializer>(kind: &TransportKind, serializer: S) -> Result<S::Ok, S::Error> {
    serializer.serialize_str(kind.as_str())
}

fn is_false(value: &bool) -> bool {
    !value
}
