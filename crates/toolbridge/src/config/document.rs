//! [`Document`]: the config file as JSON, for editing without losing what
//! toolbridge does not know (unknown fields, key order).

use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use super::{
    error::{ConfigError, Location},
    record::{ServerRecord, Source, kind_of},
    span::{self, Step},
};
use crate::redact::{mask_args, mask_url};

/// The top-level keys that hold the servers: Claude Desktop, Cursor and
/// Claude Code write `mcpServers`, VS Code writes `servers`.
pub(crate) const SERVERS_KEYS: [&str; 2] = ["mcpServers", "servers"];

/// The config file as a JSON document, for [`edit`](super::edit).
///
/// Every change goes through the methods here so the servers stay valid;
/// everything else in the file is kept as it was, in its order.
#[derive(Debug, Clone, PartialEq)]
pub struct Document {
    /// The file, for error messages.
    path: PathBuf,
    /// The whole top-level object.
    pub(crate) root: Map<String, Value>,
    /// False when the file did not exist and this document is new.
    existed: bool,
}

impl Document {
    /// Parses `text`, the contents of `path`, checking the JSON syntax and
    /// the file's structure (not the servers' fields, so a broken server can
    /// still be removed).
    pub(crate) fn parse(path: &Path, text: &str) -> Result<Self, ConfigError> {
        let root = parse_object(path, text)?;
        servers_key(path, text, &root)?;
        Ok(Document {
            path: path.to_path_buf(),
            root,
            existed: true,
        })
    }

    /// A document for a file that does not exist yet: `{"mcpServers": {}}`.
    pub(crate) fn new_file(path: &Path) -> Self {
        let mut root = Map::new();
        root.insert(SERVERS_KEYS[0].to_string(), Value::Object(Map::new()));
        Document {
            path: path.to_path_buf(),
            root,
            existed: false,
        }
    }

    /// The file this document is (or will be) saved to.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// False when the file did not exist and saving will create it.
    pub fn existed(&self) -> bool {
        self.existed
    }

    /// The servers' names, in file order.
    pub fn server_names(&self) -> Vec<String> {
        self.servers()
            .map(|s| s.keys().cloned().collect())
            .unwrap_or_default()
    }

    /// True when a server of that name exists.
    pub fn contains(&self, name: &str) -> bool {
        self.servers().is_some_and(|s| s.contains_key(name))
    }

    /// The record of server `name`, as written.
    pub fn server(&self, name: &str) -> Option<&Value> {
        self.servers().and_then(|s| s.get(name))
    }

    /// Adds server `name` with `record`, after checking the record. A name
    /// already in use is [`ConfigError::ServerExists`].
    pub fn add_server(&mut self, name: &str, record: Value) -> Result<(), ConfigError> {
        if self.contains(name) {
            return Err(ConfigError::ServerExists {
                path: self.path.clone(),
                name: name.to_string(),
            });
        }
        self.put_server(name, record).map(drop)
    }

    /// Adds server `name`, or replaces its record in place; returns the old
    /// record. The new record is checked first.
    pub fn put_server(&mut self, name: &str, record: Value) -> Result<Option<Value>, ConfigError> {
        check_name(&self.path, name)?;
        let servers_at = [self.key()];
        let src = Source {
            path: &self.path,
            text: "",
            servers_at: &servers_at,
        };
        ServerRecord::parse(&src, name, &record)?;
        Ok(self.servers_mut()?.insert(name.to_string(), record))
    }

    /// Removes server `name` and returns its record; the others keep their
    /// order.
    pub fn remove_server(&mut self, name: &str) -> Result<Value, ConfigError> {
        let known = self.server_names();
        self.servers_mut()?
            .shift_remove(name)
            .ok_or_else(|| ConfigError::UnknownServer {
                path: self.path.clone(),
                name: name.to_string(),
                known,
            })
    }

    /// Sets or clears `"disabled": true` on server `name`. Enabling removes
    /// the field (enabled is the default); disabling adds it.
    pub fn set_disabled(&mut self, name: &str, disabled: bool) -> Result<(), ConfigError> {
        let known = self.server_names();
        let path = self.path.clone();
        let key = self.key();
        let Some(record) = self.servers_mut()?.get_mut(name) else {
            return Err(ConfigError::UnknownServer {
                path,
                name: name.to_string(),
                known,
            });
        };
        let Value::Object(fields) = record else {
            return Err(ConfigError::Invalid {
                at: Location::file(&path),
                server: Some(name.to_string()),
                field: None,
                message: format!(
                    "must be an object, not {}; fix \"{key}\".\"{name}\" first",
                    kind_of(record)
                ),
            });
        };
        if disabled {
            fields.insert("disabled".to_string(), Value::Bool(true));
        } else {
            fields.shift_remove("disabled");
        }
        Ok(())
    }

    /// True when some server has env values, headers, or secrets in its URL
    /// or arguments: such a file is created readable by its owner only.
    pub fn has_secrets(&self) -> bool {
        let Some(servers) = self.servers() else {
            return false;
        };
        servers.values().filter_map(Value::as_object).any(|record| {
            let non_empty = |field: &str| {
                record
                    .get(field)
                    .and_then(Value::as_object)
                    .is_some_and(|m| !m.is_empty())
            };
            let url_secret = record
                .get("url")
                .and_then(Value::as_str)
                .is_some_and(|url| mask_url(url) != url);
            let args_secret = record
                .get("args")
                .and_then(Value::as_array)
                .map(|args| {
                    args.iter()
                        .filter_map(Value::as_str)
                        .map(str::to_string)
                        .collect::<Vec<_>>()
                })
                .is_some_and(|args| mask_args(&args) != args);
            non_empty("env") || non_empty("headers") || url_secret || args_secret
        })
    }

    /// The document as the file's new contents: pretty JSON, keys in their
    /// original order, ending with a newline.
    pub fn to_json_string(&self) -> Result<String, ConfigError> {
        let mut text =
            serde_json::to_string_pretty(&self.root).map_err(|error| ConfigError::Write {
                path: self.path.clone(),
                source: std::io::Error::other(error),
            })?;
        text.push('\n');
        Ok(text)
    }

    /// The key holding the servers: the one the file uses, else `mcpServers`.
    fn key(&self) -> &'static str {
        let present = |key: &&str| self.root.get(*key).is_some_and(|v| !v.is_null());
        SERVERS_KEYS
            .into_iter()
            .find(present)
            .or_else(|| {
                SERVERS_KEYS
                    .into_iter()
                    .find(|key| self.root.contains_key(*key))
            })
            .unwrap_or(SERVERS_KEYS[0])
    }

    fn servers(&self) -> Option<&Map<String, Value>> {
        self.root.get(self.key()).and_then(Value::as_object)
    }

    fn servers_mut(&mut self) -> Result<&mut Map<String, Value>, ConfigError> {
        let key = self.key();
        let path = self.path.clone();
        let slot = self.root.entry(key).or_insert(Value::Null);
        if slot.is_null() {
            *slot = Value::Object(Map::new());
        }
        // `parse` checked that the servers are an object (or null).
        let found = kind_of(slot);
        slot.as_object_mut().ok_or_else(|| ConfigError::Invalid {
            at: Location::file(&path),
            server: None,
            field: Some(key.to_string()),
            message: format!(
                "\"{key}\" must be an object mapping server names to servers, not {found}"
            ),
        })
    }
}

/// Parses `text` as JSON whose top level is an object.
pub(crate) fn parse_object(path: &Path, text: &str) -> Result<Map<String, Value>, ConfigError> {
    match serde_json::from_str::<Value>(text) {
        Ok(Value::Object(root)) => Ok(root),
        Ok(other) => Err(ConfigError::Invalid {
            at: Location {
                path: path.to_path_buf(),
                line_col: span::find(text, &[]),
            },
            server: None,
            field: None,
            message: format!(
                "the top level must be an object like {{\"mcpServers\": {{...}}}}, not {}",
                kind_of(&other)
            ),
        }),
        Err(error) => Err(syntax_error(path, &error)),
    }
}

/// serde_json's error as a [`ConfigError::Syntax`] with `path:line:column`.
pub(crate) fn syntax_error(path: &Path, error: &serde_json::Error) -> ConfigError {
    let full = error.to_string();
    let position = format!(" at line {} column {}", error.line(), error.column());
    let message = full.strip_suffix(&position).unwrap_or(&full).to_string();
    ConfigError::Syntax {
        at: Location {
            path: path.to_path_buf(),
            line_col: Some((
                span::saturate(error.line().max(1)),
                span::saturate(error.column().max(1)),
            )),
        },
        message,
    }
}

/// Which of [`SERVERS_KEYS`] the file uses (`None` when neither: no
/// servers), checking that it is an object and that only one is present.
pub(crate) fn servers_key(
    path: &Path,
    text: &str,
    root: &Map<String, Value>,
) -> Result<Option<&'static str>, ConfigError> {
    let src = Source {
        path,
        text,
        servers_at: &[],
    };
    let present: Vec<&'static str> = SERVERS_KEYS
        .into_iter()
        .filter(|key| root.get(*key).is_some_and(|v| !v.is_null()))
        .collect();
    if present.len() > 1 {
        return Err(src.invalid(
            None,
            Some(present[1]),
            &[Step::Key(present[1])],
            "has both \"mcpServers\" and \"servers\"; move every server into one of them",
        ));
    }
    let Some(&key) = present.first() else {
        return Ok(None);
    };
    match &root[key] {
        Value::Object(_) => Ok(Some(key)),
        other => Err(src.invalid(
            None,
            Some(key),
            &[Step::Key(key)],
            format!(
                "\"{key}\" must be an object mapping server names to servers, not {}",
                kind_of(other)
            ),
        )),
    }
}

fn check_name(path: &Path, name: &str) -> Result<(), ConfigError> {
    let problem = if name.trim().is_empty() {
        "a server name must not be empty"
    } else if name.chars().any(char::is_control) {
        "a server name must not contain control characters"
    } else {
        return Ok(());
    };
    Err(ConfigError::Invalid {
        at: Location::file(path),
        server: Some(name.to_string()),
        field: None,
        message: problem.to_string(),
    })
}
