//! Reading a config's JSON records with located errors: [`Source`] (where a
//! record is, to say where a value is wrong) and [`Fields`] (typed access to
//! an object's fields: strings, arrays, maps, numbers, timeouts). Every part
//! of the config reads its records through these: servers (`record`),
//! settings, sandboxes, profiles, rules and limits.

use std::{path::Path, time::Duration};

use serde_json::{Map, Value};

use super::{
    error::{ConfigError, Location},
    span::{self, Step},
};
use crate::{json_kind::kind_of, pins::PinPolicy};

/// Where records come from, so errors can say where a value is.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Source<'a> {
    /// The file, as the caller named it.
    pub(crate) path: &'a Path,
    /// Its text, for finding line and column; empty when the record was not
    /// read from a file (a record built by `servers add`).
    pub(crate) text: &'a str,
    /// The keys leading to the servers object: `["mcpServers"]`, `["servers"]`
    /// or `["mcp", "servers"]`.
    pub(crate) servers_at: &'a [&'a str],
}

impl Source<'_> {
    /// The location of `steps` inside `server`'s record (or inside the
    /// document when `server` is `None`); when the exact value is missing,
    /// the nearest enclosing one that exists.
    pub(crate) fn locate(&self, server: Option<&str>, steps: &[Step<'_>]) -> Location {
        if self.text.is_empty() {
            return Location::file(self.path);
        }
        let mut full: Vec<Step<'_>> = self.servers_at.iter().map(|key| Step::Key(key)).collect();
        full.extend(server.map(Step::Key));
        full.extend_from_slice(steps);
        let line_col = (0..=full.len())
            .rev()
            .find_map(|n| span::find(self.text, &full[..n]));
        Location {
            path: self.path.to_path_buf(),
            line_col,
        }
    }

    /// An [`ConfigError::Invalid`] located at `steps` in `server`'s record.
    pub(crate) fn invalid(
        &self,
        server: Option<&str>,
        field: Option<&str>,
        steps: &[Step<'_>],
        message: impl Into<String>,
    ) -> ConfigError {
        ConfigError::Invalid {
            at: self.locate(server, steps),
            server: server.map(str::to_string),
            field: field.map(str::to_string),
            message: message.into(),
        }
    }
}

/// Typed access to one record's fields, with located errors. `null` counts
/// as absent.
pub(crate) struct Fields<'a> {
    /// Where the object is, for errors.
    pub(crate) src: &'a Source<'a>,
    /// The server whose record this is; `None` for the `toolbridge` settings.
    pub(crate) server: Option<&'a str>,
    /// The object's fields.
    pub(crate) obj: &'a Map<String, Value>,
}

impl Fields<'_> {
    pub(crate) fn get(&self, field: &str) -> Option<&Value> {
        self.obj.get(field).filter(|value| !value.is_null())
    }

    pub(crate) fn err(
        &self,
        field: &str,
        steps: &[Step<'_>],
        message: impl Into<String>,
    ) -> ConfigError {
        self.src.invalid(self.server, Some(field), steps, message)
    }

    /// A positive whole number (`resultBudget`).
    pub(crate) fn positive_integer(&self, field: &str) -> Result<Option<usize>, ConfigError> {
        let Some(value) = self.get(field) else {
            return Ok(None);
        };
        value
            .as_u64()
            .filter(|n| *n > 0)
            .and_then(|n| usize::try_from(n).ok())
            .map(Some)
            .ok_or_else(|| {
                self.err(
                    field,
                    &[Step::Key(field)],
                    format!("\"{field}\" must be a positive whole number, not {value}"),
                )
            })
    }

    /// `"block"`, `"warn"` or `"off"` (`pin`).
    pub(crate) fn pin_policy(&self, field: &str) -> Result<Option<PinPolicy>, ConfigError> {
        let Some(value) = self.get(field) else {
            return Ok(None);
        };
        value
            .as_str()
            .and_then(PinPolicy::parse)
            .map(Some)
            .ok_or_else(|| {
                self.err(
                    field,
                    &[Step::Key(field)],
                    format!("\"{field}\" must be \"block\", \"warn\" or \"off\", not {value}"),
                )
            })
    }

    /// Variable names, or prefixes ending in `*` (`inheritEnv`).
    pub(crate) fn inherit_env(&self, field: &str) -> Result<Vec<String>, ConfigError> {
        let names = self.string_array(field)?;
        for (i, name) in names.iter().enumerate() {
            let stem = name.strip_suffix('*').unwrap_or(name);
            let valid = (!stem.is_empty() || name == "*")
                && stem.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
                && !stem.starts_with(|c: char| c.is_ascii_digit());
            if !valid || name == "*" {
                return Err(self.err(
                    field,
                    &[Step::Key(field), Step::Index(i)],
                    format!(
                        "\"{field}\" item {i} (\"{name}\") is not a variable name or a \
                         prefix like \"LC_*\""
                    ),
                ));
            }
        }
        Ok(names)
    }

    pub(crate) fn string(&self, field: &str) -> Result<Option<String>, ConfigError> {
        match self.get(field) {
            None => Ok(None),
            Some(Value::String(s)) => Ok(Some(s.clone())),
            Some(other) => Err(self.err(
                field,
                &[Step::Key(field)],
                format!("\"{field}\" must be a string, not {}", kind_of(other)),
            )),
        }
    }

    pub(crate) fn boolean(&self, field: &str) -> Result<bool, ConfigError> {
        match self.get(field) {
            None => Ok(false),
            Some(Value::Bool(b)) => Ok(*b),
            Some(other) => Err(self.err(
                field,
                &[Step::Key(field)],
                format!("\"{field}\" must be true or false, not {}", kind_of(other)),
            )),
        }
    }

    pub(crate) fn string_array(&self, field: &str) -> Result<Vec<String>, ConfigError> {
        let message = format!("\"{field}\" must be an array of strings");
        let items = match self.get(field) {
            None => return Ok(Vec::new()),
            Some(Value::Array(items)) => items,
            Some(other) => {
                return Err(self.err(
                    field,
                    &[Step::Key(field)],
                    format!("{message}, not {}", kind_of(other)),
                ));
            }
        };
        items
            .iter()
            .enumerate()
            .map(|(i, item)| match item {
                Value::String(s) => Ok(s.clone()),
                other => Err(self.err(
                    field,
                    &[Step::Key(field), Step::Index(i)],
                    format!("{message}; item {i} is {}", kind_of(other)),
                )),
            })
            .collect()
    }

    pub(crate) fn string_map(
        &self,
        field: &str,
        check_key: fn(&str) -> Option<&'static str>,
    ) -> Result<Vec<(String, String)>, ConfigError> {
        let message = format!("\"{field}\" must be an object of strings");
        let entries = match self.get(field) {
            None => return Ok(Vec::new()),
            Some(Value::Object(entries)) => entries,
            Some(other) => {
                return Err(self.err(
                    field,
                    &[Step::Key(field)],
                    format!("{message}, not {}", kind_of(other)),
                ));
            }
        };
        entries
            .iter()
            .map(|(key, value)| {
                let steps = [Step::Key(field), Step::Key(key)];
                if let Some(problem) = check_key(key) {
                    return Err(self.err(
                        field,
                        &steps,
                        format!("\"{field}\": \"{key}\" {problem}"),
                    ));
                }
                match value {
                    Value::String(s) => Ok((key.clone(), s.clone())),
                    other => Err(self.err(
                        field,
                        &steps,
                        format!("{message}; \"{key}\" is {}", kind_of(other)),
                    )),
                }
            })
            .collect()
    }

    /// Seconds, checked as `timeout` is ([`timeout_from_secs`](super::spec::timeout_from_secs)).
    pub(crate) fn timeout(&self, field: &str) -> Result<Option<Duration>, ConfigError> {
        let Some(value) = self.get(field) else {
            return Ok(None);
        };
        value
            .as_f64()
            .and_then(super::spec::timeout_from_secs)
            .map(Some)
            .ok_or_else(|| {
                self.err(
                    field,
                    &[Step::Key(field)],
                    format!(
                        "\"{field}\" must be a positive number of seconds, at most {}",
                        super::spec::MAX_TIMEOUT.as_secs()
                    ),
                )
            })
    }
}
