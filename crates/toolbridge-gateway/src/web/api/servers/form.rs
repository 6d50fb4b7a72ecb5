//! [`ServerForm`]: the page's add/edit form for one server, checked field
//! by field and turned into a config record, with the stored secrets kept
//! where the page sent back their masks unchanged.
//!
//! The page never sees a secret: env and header values come to it as
//! [`MASK`], secrets in arguments and URLs masked in place (the listing's
//! masking). A value sent back exactly as it was shown means "unchanged":
//! the stored value is kept. A mask anywhere else (in a new env row, in an
//! argument that moved) cannot be resolved and is refused, naming the
//! field, rather than written into the file.

use serde::Deserialize;
use serde_json::{Map, Value, json};
use toolbridge::{
    config::{
        NewServer, NewTarget, TransportKind,
        server_keys::{ReadBy, TRANSPORT_KEYS, server_key},
    },
    redact::{MASK, mask_args, mask_url},
};

use super::super::ApiError;
use crate::web::said::Said;

/// One key/value row of the form (an env variable, a header).
#[derive(Debug, Clone, Deserialize)]
pub struct Pair {
    /// The variable or header name.
    pub key: String,
    /// Its value; [`MASK`] for "unchanged".
    #[serde(default)]
    pub value: String,
}

/// The form as the page sends it.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ServerForm {
    /// The server's name (a new name renames it).
    #[serde(default)]
    pub name: String,
    /// `stdio`, `http`, `sse` or `websocket`.
    #[serde(default)]
    pub transport: String,
    /// Stdio: the program.
    #[serde(default)]
    pub command: String,
    /// Stdio: its arguments.
    #[serde(default)]
    pub args: Vec<String>,
    /// Stdio: environment variables.
    #[serde(default)]
    pub env: Vec<Pair>,
    /// Network: the endpoint.
    #[serde(default)]
    pub url: String,
    /// Network: request headers.
    #[serde(default)]
    pub headers: Vec<Pair>,
    /// Add it enabled (default) or disabled; ignored on edit (the switch
    /// in the list does that).
    #[serde(default)]
    pub enabled: Option<bool>,
}

/// Whether the form owns `key` of a stored record (the transport and the
/// endpoint); every other key (`timeout`, `disabled`, `description`,
/// `disabledTools`...) is kept.
fn form_owns(key: &str) -> bool {
    server_key(key).is_some_and(|key| key.in_form)
}

/// Whether `key` of a stored record is one that a server of `kind` does not
/// read (`cwd` for a network server, `oauth` for a stdio one): dropped when
/// the form changes the transport.
fn read_by_other(key: &str, kind: TransportKind) -> bool {
    let other = if kind == TransportKind::Stdio {
        ReadBy::Remote
    } else {
        ReadBy::Stdio
    };
    server_key(key).is_some_and(|key| key.read_by == other)
}

impl ServerForm {
    /// The name, trimmed, or a field error.
    pub fn checked_name(&self) -> Result<String, ApiError> {
        let name = self.name.trim();
        if name.is_empty() {
            return Err(ApiError::said_at(
                "name",
                Said::new("servers.errors.nameMissing", json!({})),
            ));
        }
        // The rest of the rule for a new name is the config's own
        // (`toolbridge::config::server_name`), checked where it is written.
        if let Some(problem) = toolbridge::config::server_name::problem(name) {
            return Err(ApiError::field("name", problem));
        }
        Ok(name.to_owned())
    }

    /// The checks that need no stored record: the transport, the required
    /// fields, the rows' names.
    pub fn check(&self) -> Result<TransportKind, ApiError> {
        // The name: `checked_name` for a new one; an existing one sent back
        // unchanged is kept whatever it holds.
        if self.name.trim().is_empty() {
            return Err(ApiError::said_at(
                "name",
                Said::new("servers.errors.nameMissing", json!({})),
            ));
        }
        let kind = TransportKind::parse(self.transport.trim()).ok_or_else(|| {
            ApiError::said_at(
                "transport",
                Said::new("servers.errors.transport", json!({})),
            )
        })?;
        if kind == TransportKind::Stdio {
            if self.command.trim().is_empty() {
                return Err(ApiError::said_at(
                    "command",
                    Said::new("servers.errors.commandMissing", json!({})),
                ));
            }
            check_rows(&self.env, "env", |key| {
                key.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
                    && !key.starts_with(|c: char| c.is_ascii_digit())
            })?;
        } else {
            if self.url.trim().is_empty() {
                return Err(ApiError::said_at(
                    "url",
                    Said::new("servers.errors.urlMissing", json!({})),
                ));
            }
            check_rows(&self.headers, "headers", |key| {
                key.bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b))
            })?;
        }
        Ok(kind)
    }

    /// The record to store: the form's fields over `stored` (the server's
    /// record as written, when it is an edit), with masks sent back
    /// unchanged replaced by the stored secrets.
    pub fn to_record(&self, stored: Option<&Value>) -> Result<Value, ApiError> {
        let kind = self.check()?;
        let stored_obj = stored.and_then(Value::as_object);
        let field = |key: &str| stored_obj.and_then(|o| o.get(key));
        let target = if kind == TransportKind::Stdio {
            NewTarget::Stdio {
                command: self.command.trim().to_owned(),
                args: restore_args(&self.args, field("args"))?,
                env: restore_pairs(&self.env, field("env"), "env")?,
                cwd: None,
            }
        } else {
            let stored_url = field("url").or_else(|| field("serverUrl"));
            let was_remote = stored_url.is_some();
            let url = restore_url(self.url.trim(), stored_url)?;
            // A stored record that left its transport to detection (http
            // with a fallback to SSE, or websocket for ws:// URLs) keeps
            // doing so while the form shows the detected one unchanged.
            let declared = TRANSPORT_KEYS.iter().any(|key| field(key).is_some());
            let detected = if url.starts_with("ws://") || url.starts_with("wss://") {
                TransportKind::WebSocket
            } else {
                TransportKind::Http
            };
            let transport = if was_remote && !declared && kind == detected {
                None
            } else {
                Some(kind)
            };
            NewTarget::Remote {
                url,
                transport,
                headers: restore_pairs(&self.headers, field("headers"), "headers")?,
            }
        };
        let new = NewServer {
            target,
            timeout: None,
            disabled: stored.is_none() && self.enabled == Some(false),
        };
        let Value::Object(mut fresh) = new.to_record() else {
            return Err(ApiError::internal("the server's record is not an object"));
        };
        let Some(stored_obj) = stored_obj else {
            return Ok(Value::Object(fresh));
        };
        // The stored keys in their order, the form's replacing its own.
        let mut record = Map::new();
        for (key, value) in stored_obj {
            if form_owns(key) {
                if let Some(value) = fresh.shift_remove(key) {
                    record.insert(key.clone(), value);
                }
            } else if !read_by_other(key, kind) {
                record.insert(key.clone(), value.clone());
            }
        }
        record.extend(fresh);
        Ok(Value::Object(record))
    }
}

/// Every row needs a valid, unique name.
fn check_rows(rows: &[Pair], field: &str, valid: impl Fn(&str) -> bool) -> Result<(), ApiError> {
    let mut seen = std::collections::HashSet::new();
    for row in rows {
        let key = row.key.trim();
        if key.is_empty() {
            return Err(ApiError::said_at(
                field,
                Said::new("servers.errors.rowName", json!({})),
            ));
        }
        if !valid(key) {
            return Err(ApiError::said_at(
                format!("{field}.{key}"),
                Said::new("servers.errors.rowInvalid", json!({ "key": key })),
            ));
        }
        if !seen.insert(key) {
            return Err(ApiError::said_at(
                format!("{field}.{key}"),
                Said::new("servers.errors.rowTwice", json!({ "key": key })),
            ));
        }
    }
    Ok(())
}

/// The rows with each [`MASK`] value replaced by the stored value of the
/// same name; a mask with nothing stored is an error on that row.
fn restore_pairs(
    rows: &[Pair],
    stored: Option<&Value>,
    field: &str,
) -> Result<Vec<(String, String)>, ApiError> {
    rows.iter()
        .map(|row| {
            let key = row.key.trim().to_owned();
            if row.value != MASK {
                return Ok((key, row.value.clone()));
            }
            match stored.and_then(|s| s.get(&key)).and_then(Value::as_str) {
                Some(value) => Ok((key, value.to_owned())),
                None => Err(ApiError::said_at(
                    format!("{field}.{key}"),
                    Said::new("servers.errors.valueMissing", json!({ "key": key })),
                )),
            }
        })
        .collect()
}

/// The arguments with each one shown masked and sent back unchanged (same
/// place, same text) replaced by the stored one.
fn restore_args(args: &[String], stored: Option<&Value>) -> Result<Vec<String>, ApiError> {
    let stored: Vec<String> = stored
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(Value::as_str)
                .map(str::to_owned)
                .collect()
        })
        .unwrap_or_default();
    let shown = mask_args(&stored);
    args.iter()
        .enumerate()
        .map(|(i, arg)| match (stored.get(i), shown.get(i)) {
            (Some(stored), Some(shown)) if shown == arg => Ok(stored.clone()),
            _ if arg.contains(MASK) => Err(ApiError::said_at(
                "args",
                Said::new(
                    "servers.errors.argMasked",
                    json!({ "n": i + 1, "mask": MASK }),
                ),
            )),
            _ => Ok(arg.clone()),
        })
        .collect()
}

/// The URL, or the stored one when the page sent back its masked form.
fn restore_url(url: &str, stored: Option<&Value>) -> Result<String, ApiError> {
    if let Some(stored) = stored.and_then(Value::as_str)
        && mask_url(stored) == url
    {
        return Ok(stored.to_owned());
    }
    if url.contains(MASK) {
        return Err(ApiError::said_at(
            "url",
            Said::new("servers.errors.urlMasked", json!({ "mask": MASK })),
        ));
    }
    Ok(url.to_owned())
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn form(value: Value) -> ServerForm {
        serde_json::from_value(value).unwrap()
    }

    #[test]
    fn masks_sent_back_keep_the_stored_secrets() {
        let stored = json!({
            "command": "srv", "args": ["--api-key", "sk-123", "-v"],
            "env": {"KEY": "secret-1", "TZ": "UTC"}, "description": "kept", "timeout": 30
        });
        let edited = form(json!({
            "name": "a", "transport": "stdio", "command": "srv2",
            "args": ["--api-key", MASK, "-v"],
            "env": [{"key": "KEY", "value": MASK}, {"key": "TZ", "value": "Europe/Paris"}]
        }))
        .to_record(Some(&stored))
        .unwrap();
        assert_eq!(
            edited,
            json!({"command": "srv2", "args": ["--api-key", "sk-123", "-v"],
                   "env": {"KEY": "secret-1", "TZ": "Europe/Paris"},
                   "description": "kept", "timeout": 30})
        );
    }

    #[test]
    fn a_mask_that_matches_nothing_stored_names_its_field() {
        let error = form(json!({
            "name": "a", "transport": "http", "url": "https://h/mcp",
            "headers": [{"key": "Authorization", "value": MASK}]
        }))
        .to_record(None)
        .unwrap_err();
        assert_eq!(error.field.as_deref(), Some("headers.Authorization"));
        let error = form(json!({"name": "a", "transport": "sse", "url": "https://moved/?key=***"}))
            .to_record(Some(&json!({"url": "https://h/?key=other"})))
            .map(drop);
        assert_eq!(error.unwrap_err().field.as_deref(), Some("url"));
    }

    #[test]
    fn missing_fields_are_named() {
        let field = |v: Value| form(v).check().unwrap_err().field;
        assert_eq!(field(json!({"transport": "stdio"})), Some("name".into()));
        assert_eq!(
            field(json!({"name": "a", "transport": "ftp"})),
            Some("transport".into())
        );
        assert_eq!(
            field(json!({"name": "a", "transport": "stdio"})),
            Some("command".into())
        );
        assert_eq!(
            field(json!({"name": "a", "transport": "websocket"})),
            Some("url".into())
        );
        assert_eq!(
            field(json!({"name": "a", "transport": "stdio", "command": "x",
                         "env": [{"key": "A B", "value": "1"}]})),
            Some("env.A B".into())
        );
    }

    #[test]
    fn a_form_error_is_said_in_the_pages_strings_with_the_english_as_its_message() {
        let error = form(json!({"name": "a", "transport": "stdio", "command": "x",
                                "env": [{"key": "TZ", "value": "1"}, {"key": "TZ", "value": "2"}]}))
        .check()
        .unwrap_err();
        let said = error.said.expect("said in the page's strings");
        assert_eq!(said.key, "servers.errors.rowTwice");
        assert_eq!(said.vars["key"], "TZ");
        assert_eq!(error.message, "\"TZ\" is given twice");
        let error = form(json!({"name": "a", "transport": "stdio"}))
            .check()
            .unwrap_err();
        assert_eq!(
            error.message,
            "give the program to run (npx, uvx, a path...)"
        );
    }

    #[test]
    fn a_detected_transport_stays_detected_unless_changed() {
        let stored = json!({"url": "https://h/mcp"});
        let edit = |transport: &str| {
            form(json!({"name": "a", "transport": transport, "url": "https://h/mcp"}))
                .to_record(Some(&stored))
                .unwrap()
        };
        assert_eq!(edit("http"), json!({"url": "https://h/mcp"}));
        assert_eq!(edit("sse"), json!({"url": "https://h/mcp", "type": "sse"}));
    }

    #[test]
    fn switching_to_a_network_transport_drops_the_stdio_keys() {
        let stored = json!({"command": "srv", "cwd": "/srv", "disabled": true});
        let record = form(json!({"name": "a", "transport": "websocket", "url": "ws://h/ws"}))
            .to_record(Some(&stored))
            .unwrap();
        assert_eq!(
            record,
            json!({"disabled": true, "type": "websocket", "url": "ws://h/ws"})
        );
    }
}
