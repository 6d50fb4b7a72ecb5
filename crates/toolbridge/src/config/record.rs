//! [`ServerRecord`]: one server as written in the file, with every field
//! checked but no `${VAR}` expanded yet (the `resolve` module makes it a
//! [`ServerSpec`](super::ServerSpec)).
//!
//! Checking happens when the file is loaded, so a typo anywhere is reported
//! at once with its line and column. Expansion happens when a server is
//! resolved, so a variable missing for one server does not stop the others.

use std::{fmt, time::Duration};

use serde_json::Value;

use super::{
    error::ConfigError,
    fields::{Fields, Source},
    oauth_record::OAuthRecord,
    sandbox::SandboxRecord,
    span::Step,
    spec::{StdioSpec, TransportKind},
};
use crate::{
    json_kind::kind_of,
    pins::PinPolicy,
    redact::{MASK, mask_args, mask_url},
};

/// One server as written in the config: checked, not yet expanded. The one
/// model behind resolving ([`ServerSpec`](super::ServerSpec)), listing
/// ([`ServerListing`](super::ServerListing)) and `doctor`.
///
/// Its `Debug` masks what could be a secret written into the file as it is
/// (env and header values, URL and argument secrets).
#[derive(Clone, PartialEq)]
pub(crate) struct ServerRecord {
    /// The key in `mcpServers`.
    pub(crate) name: String,
    /// `type` (or `transport`) when given; otherwise inferred on resolve.
    pub(crate) declared: Option<TransportKind>,
    /// Stdio: the program.
    pub(crate) command: Option<String>,
    /// Stdio: its arguments.
    pub(crate) args: Vec<String>,
    /// Stdio: extra environment, in file order.
    pub(crate) env: Vec<(String, String)>,
    /// Stdio: working directory as written.
    pub(crate) cwd: Option<String>,
    /// Stdio: a `.env` file whose variables `env` may override (`envFile`,
    /// as VS Code writes it).
    pub(crate) env_file: Option<String>,
    /// Stdio: toolbridge's own variables passed on (`inheritEnv`): names,
    /// or prefixes ending in `*` (`LC_*`).
    pub(crate) inherit_env: Vec<String>,
    /// Network: the endpoint.
    pub(crate) url: Option<String>,
    /// The key the endpoint was under: `url`, or Windsurf's `serverUrl`.
    pub(crate) url_key: &'static str,
    /// Network: request headers, in file order.
    pub(crate) headers: Vec<(String, String)>,
    /// Per-call timeout; `None` means the default.
    pub(crate) timeout: Option<Duration>,
    /// Time to start and answer the handshake (`startupTimeout`).
    pub(crate) startup_timeout: Option<Duration>,
    /// Tools never listed nor called (`disabledTools`).
    pub(crate) disabled_tools: Vec<String>,
    /// The only tools listed and called, when set (`enabledTools`).
    pub(crate) enabled_tools: Option<Vec<String>>,
    /// Most characters of one result given to a model (`resultBudget`).
    pub(crate) result_budget: Option<usize>,
    /// Pinning of the tool definitions (`pin`).
    pub(crate) pin: Option<PinPolicy>,
    /// Kept in the file but never started.
    pub(crate) disabled: bool,
    /// Network: the `oauth` object, not yet expanded.
    pub(crate) oauth: OAuthRecord,
    /// Stdio: the `sandbox`, when the record has one.
    pub(crate) sandbox: Option<SandboxRecord>,
}

impl fmt::Debug for ServerRecord {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let masked = |pairs: &[(String, String)]| -> Vec<(String, &str)> {
            pairs.iter().map(|(key, _)| (key.clone(), MASK)).collect()
        };
        f.debug_struct("ServerRecord")
            .field("name", &self.name)
            .field("declared", &self.declared)
            .field("command", &self.command)
            .field("args", &mask_args(&self.args))
            .field("env", &masked(&self.env))
            .field("cwd", &self.cwd)
            .field("env_file", &self.env_file)
            .field("inherit_env", &self.inherit_env)
            .field("url", &self.url.as_deref().map(mask_url))
            .field("headers", &masked(&self.headers))
            .field("timeout", &self.timeout)
            .field("startup_timeout", &self.startup_timeout)
            .field("disabled_tools", &self.disabled_tools)
            .field("enabled_tools", &self.enabled_tools)
            .field("result_budget", &self.result_budget)
            .field("pin", &self.pin)
            .field("disabled", &self.disabled)
            .field("oauth", &self.oauth)
            .field("sandbox", &self.sandbox)
            .finish()
    }
}

impl ServerRecord {
    /// The record that would start `spec` (the built-in example server): its
    /// values written as a config file would hold them, `$` escaped as `$$`.
    pub(crate) fn from_stdio(name: &str, spec: &StdioSpec) -> Self {
        let escape = |text: &str| text.replace('$', "$$");
        ServerRecord {
            name: name.to_string(),
            declared: Some(TransportKind::Stdio),
            command: Some(escape(&spec.command)),
            args: spec.args.iter().map(|arg| escape(arg)).collect(),
            env: spec
                .env
                .iter()
                .map(|(key, value)| (key.clone(), escape(value)))
                .collect(),
            cwd: spec.cwd.as_ref().map(|cwd| cwd.display().to_string()),
            env_file: None,
            inherit_env: spec.inherit_env.clone(),
            url: None,
            url_key: "url",
            headers: Vec::new(),
            timeout: None,
            startup_timeout: None,
            disabled_tools: Vec::new(),
            enabled_tools: None,
            result_budget: None,
            pin: None,
            disabled: false,
            oauth: OAuthRecord::default(),
            sandbox: SandboxRecord::from_sandbox(&spec.sandbox),
        }
    }

    /// Checks `value`, the record of server `name`.
    pub(crate) fn parse(src: &Source<'_>, name: &str, value: &Value) -> Result<Self, ConfigError> {
        let Value::Object(obj) = value else {
            return Err(src.invalid(
                Some(name),
                None,
                &[],
                format!(
                    "must be an object with \"command\" or \"url\", not {}",
                    kind_of(value)
                ),
            ));
        };
        let fields = Fields {
            src,
            server: Some(name),
            obj,
        };
        let declared = fields.transport()?;
        let (command, args, env) = fields.command()?;
        let record = ServerRecord {
            name: name.to_string(),
            declared,
            command,
            args,
            env,
            cwd: fields.string("cwd")?,
            env_file: fields.string("envFile")?,
            inherit_env: fields.inherit_env("inheritEnv")?,
            url: fields.url()?,
            url_key: fields.url_key(),
            headers: fields.string_map("headers", check_header_name)?,
            timeout: fields.timeout("timeout")?,
            startup_timeout: fields.timeout("startupTimeout")?,
            disabled_tools: fields.string_array("disabledTools")?,
            enabled_tools: match fields.get("enabledTools") {
                Some(_) => Some(fields.string_array("enabledTools")?),
                None => None,
            },
            result_budget: fields.positive_integer("resultBudget")?,
            pin: fields.pin_policy("pin")?,
            disabled: fields.boolean("disabled")?,
            oauth: OAuthRecord::parse(&fields)?,
            sandbox: SandboxRecord::parse(&fields)?,
        };

        let required =
            |field: &str, message: String| Err(src.invalid(Some(name), Some(field), &[], message));
        match (declared, &record.command, &record.url) {
            (Some(TransportKind::Stdio), None, _) => {
                return required("command", "stdio transport requires \"command\"".into());
            }
            (Some(kind), _, None) if kind != TransportKind::Stdio => {
                return required("url", format!("{kind} transport requires \"url\""));
            }
            (None, Some(_), Some(_)) => {
                return required(
                    "type",
                    "has both \"command\" and \"url\"; set \"type\" to \"stdio\", \"http\", \
                     \"sse\" or \"websocket\" to say which to use"
                        .into(),
                );
            }
            (None, None, None) => return Err(needs_command_or_url(src, name)),
            _ => {}
        }
        if record
            .command
            .as_deref()
            .is_some_and(|c| c.trim().is_empty())
        {
            return Err(fields.err(
                "command",
                &[Step::Key("command")],
                "\"command\" must not be empty",
            ));
        }
        // A URL built from `${VAR}`s is checked when resolved.
        if let Some(url) = record.url.as_deref().filter(|url| !url.contains('$'))
            && record.kind() != TransportKind::Stdio
        {
            let key = fields.url_key();
            check_url(record.kind(), url)
                .map_err(|message| fields.err("url", &[Step::Key(key)], message))?;
        }
        Ok(record)
    }

    /// The transport, as far as it can be told before expansion (a `url` of
    /// `${URL}` counts as http until resolved).
    pub(crate) fn kind(&self) -> TransportKind {
        match (self.declared, &self.command, &self.url) {
            (Some(kind), _, _) => kind,
            (None, Some(_), _) => TransportKind::Stdio,
            (None, None, url) => infer_remote(url.as_deref().unwrap_or_default()),
        }
    }

    /// True when the transport was not declared and the URL is not a
    /// WebSocket one: streamable HTTP is tried first, legacy SSE second.
    pub(crate) fn auto_detect(&self) -> bool {
        self.declared.is_none() && self.kind() == TransportKind::Http
    }
}

/// The error for a record with neither `command` nor `url`.
pub(super) fn needs_command_or_url(src: &Source<'_>, name: &str) -> ConfigError {
    src.invalid(
        Some(name),
        None,
        &[],
        "needs \"command\" (a stdio server) or \"url\" (a network server)",
    )
}

/// A WebSocket URL means the websocket transport; anything else, http.
pub(super) fn infer_remote(url: &str) -> TransportKind {
    let lower = url.get(..6).unwrap_or(url).to_ascii_lowercase();
    if lower.starts_with("ws://") || lower.starts_with("wss://") {
        TransportKind::WebSocket
    } else {
        TransportKind::Http
    }
}

/// Checks that `url` parses and has a scheme `kind` can use. The message
/// never repeats the URL, which may hold a token.
pub(super) fn check_url(kind: TransportKind, url: &str) -> Result<(), String> {
    let parsed =
        url::Url::parse(url).map_err(|error| format!("\"url\" is not a valid URL ({error})"))?;
    let (schemes, expected): (&[&str], &str) = match kind {
        TransportKind::WebSocket => (&["ws", "wss"], "ws:// or wss://"),
        TransportKind::Http | TransportKind::Sse | TransportKind::Stdio => {
            (&["http", "https"], "http:// or https://")
        }
    };
    if schemes.contains(&parsed.scheme()) {
        Ok(())
    } else {
        Err(format!(
            "\"url\" must start with {expected} for the {kind} transport"
        ))
    }
}

fn check_env_name(name: &str) -> Option<&'static str> {
    (name.is_empty() || name.contains(['=', '\0'])).then_some("is not a valid variable name")
}

fn check_header_name(name: &str) -> Option<&'static str> {
    let valid = !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "!#$%&'*+-.^_`|~".contains(c));
    (!valid).then_some("is not a valid header name")
}

impl Fields<'_> {
    /// `type`, else `transport`, else Cline's `transportType`: the declared
    /// transport, if any.
    fn transport(&self) -> Result<Option<TransportKind>, ConfigError> {
        let Some((field, value)) = super::server_keys::TRANSPORT_KEYS
            .into_iter()
            .find_map(|field| self.get(field).map(|value| (field, value)))
        else {
            return Ok(None);
        };
        let steps = [Step::Key(field)];
        let Value::String(name) = value else {
            return Err(self.err(
                field,
                &steps,
                format!("\"{field}\" must be a string, not {}", kind_of(value)),
            ));
        };
        match TransportKind::parse(name) {
            Some(kind) => Ok(Some(kind)),
            None => Err(self.err(
                field,
                &steps,
                format!("unsupported transport \"{name}\"; expected stdio, http, sse or websocket"),
            )),
        }
    }

    /// `command`, `args` and `env`; Zed's older form nests them as
    /// `"command": {"path", "args", "env"}`.
    #[allow(clippy::type_complexity)]
    fn command(&self) -> Result<(Option<String>, Vec<String>, Vec<(String, String)>), ConfigError> {
        let Some(Value::Object(nested)) = self.get("command") else {
            return Ok((
                self.string("command")?,
                self.string_array("args")?,
                self.string_map("env", check_env_name)?,
            ));
        };
        let inner = Fields {
            src: self.src,
            server: self.server,
            obj: nested,
        };
        let path = inner.string("path")?.ok_or_else(|| {
            self.err(
                "command",
                &[Step::Key("command")],
                "\"command\" must be a string, or an object with \"path\" (Zed)",
            )
        })?;
        Ok((
            Some(path),
            inner.string_array("args")?,
            inner.string_map("env", check_env_name)?,
        ))
    }

    /// The key holding the endpoint: `url`, else Windsurf's `serverUrl`.
    pub(crate) fn url_key(&self) -> &'static str {
        if self.get("url").is_none() && self.get("serverUrl").is_some() {
            "serverUrl"
        } else {
            "url"
        }
    }

    fn url(&self) -> Result<Option<String>, ConfigError> {
        let key = self.url_key();
        self.string(key).map_err(|error| match error {
            ConfigError::Invalid {
                at,
                server,
                message,
                ..
            } => ConfigError::Invalid {
                at,
                server,
                field: Some("url".to_string()),
                message,
            },
            other => other,
        })
    }
}
