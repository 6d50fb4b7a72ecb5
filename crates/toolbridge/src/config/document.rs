//! [`Document`]: the config file as JSON, for editing without losing what
//! toolbridge does not know (unknown fields, key order).

use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use super::{
    error::{ConfigError, Location},
    fields::Source,
    jsonc,
    layout::{Layout, detect},
    patch,
    profile::{PROFILES_KEY, Profile},
    record::ServerRecord,
    rules::RULES_KEY,
    settings_keys::{GATEWAY_KEY, SETTINGS_KEY},
    span,
};
use crate::{
    json_kind::kind_of,
    redact::{mask_args, mask_url},
};

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
    /// Where the servers are (or go): the key the file already uses, else
    /// the one its application reads.
    layout: Layout,
    /// False when the file did not exist and this document is new.
    existed: bool,
}

impl Document {
    /// Parses `text`, the contents of `path`, checking the JSON syntax and
    /// the file's structure (not the servers' fields, so a broken server can
    /// still be removed).
    pub(crate) fn parse(path: &Path, text: &str) -> Result<Self, ConfigError> {
        let root = parse_object(path, text)?;
        let layout = detect(path, text, &root)?.unwrap_or_else(|| Layout::for_new_file(path));
        Ok(Document {
            path: path.to_path_buf(),
            root,
            layout,
            existed: true,
        })
    }

    /// A document for a file that does not exist yet: `{"mcpServers": {}}`
    /// (or the key the application the file's name suggests reads).
    pub(crate) fn new_file(path: &Path) -> Self {
        let layout = Layout::for_new_file(path);
        let mut root = Map::new();
        layout.lookup_mut(&mut root);
        Document {
            path: path.to_path_buf(),
            root,
            layout,
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

    /// Adds server `name` with `record` (written as toolbridge writes
    /// `mcpServers` records: it is reshaped for the file's application),
    /// after checking it. A name already in use is
    /// [`ConfigError::ServerExists`]; a key the file's application does not
    /// read (`timeout` in VS Code's files, say) is [`ConfigError::Invalid`].
    pub fn add_server(&mut self, name: &str, record: Value) -> Result<(), ConfigError> {
        if self.contains(name) {
            return Err(ConfigError::ServerExists {
                path: self.path.clone(),
                name: name.to_string(),
            });
        }
        if let Some(key) = self
            .layout
            .unread_keys()
            .iter()
            .find(|key| record.get(**key).is_some())
        {
            return Err(self.unread(name, key));
        }
        self.put_server(name, record).map(drop)
    }

    /// The error for writing `key`, which the file's application does not
    /// read, into server `name`.
    fn unread(&self, name: &str, key: &str) -> ConfigError {
        ConfigError::Invalid {
            at: Location::file(&self.path),
            server: Some(name.to_string()),
            field: Some(key.to_string()),
            message: format!(
                "{} does not read \"{key}\" in {}, so toolbridge does not write it there; \
                 leave it out, or keep the server in toolbridge's own config",
                self.layout.application(),
                self.layout.dotted()
            ),
        }
    }

    /// Appends to the file's `inputs` (VS Code's declarations of what
    /// `${input:ID}` asks for) the entries of `inputs` whose id it does not
    /// declare yet; returns their ids. A file whose `inputs` is not an
    /// array is left alone.
    pub fn add_inputs(&mut self, inputs: &[Value]) -> Vec<String> {
        let id = |input: &Value| input.get("id").and_then(Value::as_str).map(str::to_owned);
        let declared: Vec<String> = match self.root.get("inputs") {
            None => Vec::new(),
            Some(Value::Array(items)) => items.iter().filter_map(id).collect(),
            Some(_) => return Vec::new(),
        };
        let new: Vec<&Value> = inputs
            .iter()
            .filter(|input| id(input).is_some_and(|i| !declared.contains(&i)))
            .collect();
        if new.is_empty() {
            return Vec::new();
        }
        let list = self
            .root
            .entry("inputs")
            .or_insert_with(|| Value::Array(Vec::new()));
        if let Value::Array(items) = list {
            items.extend(new.iter().map(|input| (*input).clone()));
        }
        new.into_iter().filter_map(id).collect()
    }

    /// Adds server `name`, or replaces its record in place; returns the old
    /// record. The new record is reshaped for the file's application (as in
    /// [`add_server`](Document::add_server)) and checked first.
    pub fn put_server(&mut self, name: &str, record: Value) -> Result<Option<Value>, ConfigError> {
        // A name already in the file stays manageable, whatever it holds;
        // a new one follows the rule.
        if !self.contains(name) {
            check_name(&self.path, name)?;
        }
        if !self.contains(name)
            && let Some(problem) = super::server_name::problem(name)
        {
            return Err(ConfigError::Invalid {
                at: Location::file(&self.path),
                server: None,
                field: Some("name".to_owned()),
                message: format!(
                    "server name {} is not allowed: {problem}; choose another name",
                    super::server_name::shown(name)
                ),
            });
        }
        let record = self.layout.shape(record);
        let src = Source {
            path: &self.path,
            text: "",
            servers_at: self.layout.keys(),
        };
        ServerRecord::parse(&src, name, &record)?;
        Ok(self.servers_mut()?.insert(name.to_string(), record))
    }

    /// Removes server `name` and returns its record; the others keep their
    /// order. A server a profile names is not removed (the file would no longer
    /// load): the error names the profile.
    pub fn remove_server(&mut self, name: &str) -> Result<Value, ConfigError> {
        if let Some(profile) = self.profile_naming(name) {
            return Err(ConfigError::Profile {
                at: Location::file(&self.path),
                profile: profile.clone(),
                server: Some(name.into()),
                field: Some("servers"),
                message: format!(
                    "\"servers\" names server \"{name}\"; take it out of the profile before \
                     removing the server"
                ),
            });
        }
        let known = self.server_names();
        self.servers_mut()?
            .shift_remove(name)
            .ok_or_else(|| ConfigError::UnknownServer {
                path: self.path.clone(),
                name: name.to_string(),
                known,
            })
    }

    /// The profiles' names (the file's `"profiles"`), in file order.
    pub fn profile_names(&self) -> Vec<String> {
        self.profiles()
            .map(|p| p.keys().cloned().collect())
            .unwrap_or_default()
    }

    /// The record of profile `name`, as written.
    pub fn profile(&self, name: &str) -> Option<&Value> {
        self.profiles().and_then(|p| p.get(name))
    }

    /// Adds profile `name` with `record` (at the end of `"profiles"`, which
    /// is created when missing), or replaces its record in place; returns
    /// the old record. The record is checked first as the file's loading
    /// checks it ([`Profile::check`]: its servers must be the file's, its
    /// globs and new names valid, its keys known): an error names the
    /// profile and the field, and nothing changes.
    pub fn put_profile(&mut self, name: &str, record: Value) -> Result<Option<Value>, ConfigError> {
        self.profiles_are_read()?;
        let known = self.server_names();
        let known: Vec<&str> = known.iter().map(String::as_str).collect();
        Profile::check(&self.path, name, &record, &known)?;
        Ok(self.profiles_mut()?.insert(name.to_string(), record))
    }

    /// Removes profile `name` and returns its record; the others keep their
    /// order (an emptied `"profiles"` stays, as `{}`). A profile a gateway
    /// rule names is not removed (the file would no longer load): the error
    /// names the rule.
    pub fn remove_profile(&mut self, name: &str) -> Result<Value, ConfigError> {
        if let Some(rule) = self.rule_naming(name) {
            return Err(ConfigError::Profile {
                at: Location::file(&self.path),
                profile: name.to_string(),
                server: None,
                field: None,
                message: format!(
                    "toolbridge.gateway.rules[{rule}] names it in \"profiles\"; take it out of \
                     the rule before removing the profile"
                ),
            });
        }
        let (path, known) = (self.path.clone(), self.profile_names());
        self.profiles_mut()?
            .shift_remove(name)
            .ok_or_else(|| ConfigError::UnknownProfile {
                path,
                name: name.to_string(),
                known,
            })
    }

    fn profiles(&self) -> Option<&Map<String, Value>> {
        self.root.get(PROFILES_KEY)?.as_object()
    }

    /// The profiles object, created when missing (or `null`); an error when
    /// it is something else.
    fn profiles_mut(&mut self) -> Result<&mut Map<String, Value>, ConfigError> {
        let path = self.path.clone();
        let slot = self.root.entry(PROFILES_KEY).or_insert(Value::Null);
        if slot.is_null() {
            *slot = Value::Object(Map::new());
        }
        let found = kind_of(slot);
        slot.as_object_mut().ok_or_else(|| ConfigError::Invalid {
            at: Location::file(&path),
            server: None,
            field: Some(PROFILES_KEY.to_string()),
            message: format!(
                "\"{PROFILES_KEY}\" must be an object of profiles by name, not {found}; fix it \
                 in your editor first"
            ),
        })
    }

    /// An error when this file's application has `"profiles"` of its own
    /// (Zed's and VS Code's settings.json), which toolbridge does not read
    /// as its profiles.
    fn profiles_are_read(&self) -> Result<(), ConfigError> {
        if !matches!(self.layout, Layout::Zed | Layout::VsCodeSettings) {
            return Ok(());
        }
        Err(ConfigError::Invalid {
            at: Location::file(&self.path),
            server: None,
            field: Some(PROFILES_KEY.to_string()),
            message: format!(
                "{}'s settings file has \"{PROFILES_KEY}\" of its own, which toolbridge does not \
                 read; keep the gateway's profiles in toolbridge's own config file",
                self.layout.application()
            ),
        })
    }

    /// The place in `toolbridge.gateway.rules` of the first rule whose
    /// `profiles` names profile `name`.
    fn rule_naming(&self, name: &str) -> Option<usize> {
        let rules = self
            .root
            .get(SETTINGS_KEY)?
            .get(GATEWAY_KEY)?
            .get(RULES_KEY)?
            .as_array()?;
        rules.iter().position(|rule| {
            rule.get("profiles")
                .and_then(Value::as_array)
                .is_some_and(|names| names.iter().any(|n| n.as_str() == Some(name)))
        })
    }

    /// The first profile whose `servers` names server `name`.
    fn profile_naming(&self, name: &str) -> Option<&String> {
        let profiles = self.root.get(super::PROFILES_KEY)?.as_object()?;
        profiles.iter().find_map(|(profile, value)| {
            let servers = value.get("servers")?.as_array()?;
            servers
                .iter()
                .any(|s| s.as_str() == Some(name))
                .then_some(profile)
        })
    }

    /// The fields of server `name`'s record, to edit in place: an error
    /// naming the file when the config has no such server, or when its
    /// record is not an object.
    fn record_mut(
        &mut self,
        name: &str,
    ) -> Result<&mut serde_json::Map<String, Value>, ConfigError> {
        let known = self.server_names();
        let path = self.path.clone();
        let key = self.layout.dotted();
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
        Ok(fields)
    }

    /// Sets or clears `"disabled": true` on server `name`. Enabling removes
    /// the field (enabled is the default); disabling adds it, except in a
    /// file whose application does not read it (VS Code's, Zed's): an error.
    pub fn set_disabled(&mut self, name: &str, disabled: bool) -> Result<(), ConfigError> {
        if disabled && self.layout.unread_keys().contains(&"disabled") && self.contains(name) {
            return Err(self.unread(name, "disabled"));
        }
        let fields = self.record_mut(name)?;
        if disabled {
            fields.insert("disabled".to_string(), Value::Bool(true));
        } else {
            fields.shift_remove("disabled");
        }
        Ok(())
    }

    /// Adds `tool` to server `name`'s `disabledTools` (it is then neither
    /// listed nor called), or takes it out; the list goes when it empties.
    /// The rest of the record stays as it is. Returns whether the file
    /// changed.
    pub fn set_tool_disabled(
        &mut self,
        name: &str,
        tool: &str,
        disabled: bool,
    ) -> Result<bool, ConfigError> {
        // For its own errors below, while the record is borrowed.
        let (path, key) = (self.path.clone(), self.layout.dotted());
        let fields = self.record_mut(name)?;
        let list = match fields.get_mut("disabledTools") {
            None => None,
            Some(Value::Array(items)) => Some(items),
            Some(other) => {
                return Err(ConfigError::Invalid {
                    at: Location::file(&path),
                    server: Some(name.to_string()),
                    field: Some("disabledTools".to_string()),
                    message: format!(
                        "\"disabledTools\" must be an array of tool names, not {}; fix \"{key}\".\"{name}\" first",
                        kind_of(other)
                    ),
                });
            }
        };
        let listed = list
            .as_ref()
            .is_some_and(|items| items.iter().any(|v| v.as_str() == Some(tool)));
        match (disabled, list) {
            (true, _) if listed => Ok(false),
            (true, Some(items)) => {
                items.push(Value::String(tool.to_string()));
                Ok(true)
            }
            (true, None) => {
                fields.insert(
                    "disabledTools".to_string(),
                    Value::Array(vec![Value::String(tool.to_string())]),
                );
                Ok(true)
            }
            (false, Some(items)) if listed => {
                items.retain(|v| v.as_str() != Some(tool));
                if items.is_empty() {
                    fields.shift_remove("disabledTools");
                }
                Ok(true)
            }
            (false, _) => Ok(false),
        }
    }

    /// True when some server has env values or headers written out (not
    /// `${VAR}` references), or secrets in its URL or arguments: such a file
    /// is made readable by its owner only. A value that names a variable
    /// (`${TAVILY_API_KEY}`, `Bearer ${TOKEN}`) holds no secret itself.
    pub fn has_secrets(&self) -> bool {
        let Some(servers) = self.servers() else {
            return false;
        };
        servers.values().filter_map(Value::as_object).any(|record| {
            let non_empty = |field: &str| {
                record
                    .get(field)
                    .and_then(Value::as_object)
                    .is_some_and(|m| {
                        m.values()
                            .any(|v| v.as_str().is_none_or(|text| !text.contains("${")))
                    })
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

    /// The document as the file's new contents: pretty JSON indented with
    /// `indent` (a tab, or spaces), keys in their original order, ending
    /// with a newline.
    pub fn to_json_string(&self, indent: &str) -> Result<String, ConfigError> {
        let root = Value::Object(self.root.clone());
        let mut text = patch::render(&root, indent, "").ok_or_else(|| ConfigError::Write {
            path: self.path.clone(),
            source: std::io::Error::other("the document cannot be written as JSON"),
        })?;
        text.push('\n');
        Ok(text)
    }

    /// Where the servers are (or go) in this file.
    pub(crate) fn layout(&self) -> Layout {
        self.layout
    }

    fn servers(&self) -> Option<&Map<String, Value>> {
        self.layout.lookup(&self.root).and_then(Value::as_object)
    }

    fn servers_mut(&mut self) -> Result<&mut Map<String, Value>, ConfigError> {
        let layout = self.layout;
        let path = self.path.clone();
        let found = layout.lookup(&self.root).map_or("null", kind_of);
        // `parse` checked that the servers are an object (or missing).
        layout
            .lookup_mut(&mut self.root)
            .ok_or_else(|| ConfigError::Invalid {
                at: Location::file(&path),
                server: None,
                field: Some(layout.dotted()),
                message: format!(
                    "\"{}\" must be an object mapping server names to servers, not {found}",
                    layout.dotted()
                ),
            })
    }
}

/// Parses `text` as JSONC (comments and trailing commas allowed, as the
/// editors that write these files allow them) whose top level is an object.
pub(crate) fn parse_object(path: &Path, text: &str) -> Result<Map<String, Value>, ConfigError> {
    match serde_json::from_str::<Value>(&jsonc::strip(text)) {
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
