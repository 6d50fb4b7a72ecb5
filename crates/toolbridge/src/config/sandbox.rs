//! The config's `sandbox` value (per server, and `toolbridge.sandbox` for
//! all) as written: checked when the file loads, its paths expanded (`~`,
//! `${VAR}`) when a server resolves into a [`Sandbox`].

use std::path::PathBuf;

use serde_json::{Map, Value, json};

use super::{error::ConfigError, fields::Fields, span::Step};
use crate::sandbox::{Network, Sandbox, SandboxRules};

/// The keys of the object form.
const RULE_KEYS: [&str; 5] = ["read", "write", "network", "memoryMb", "processes"];

/// Expands one path of field `label` at `steps` (`${VAR}`, `${userHome}`).
pub(crate) type ExpandPath<'a> = &'a dyn Fn(&str, &[Step<'_>], &str) -> Result<String, ConfigError>;

/// `sandbox` as written: checked, paths not yet expanded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum SandboxRecord {
    /// `false`.
    Off,
    /// `"default"` (or `true`).
    Default,
    /// The object form.
    Rules {
        read: Vec<String>,
        write: Vec<String>,
        network: Network,
        memory_mb: Option<u64>,
        processes: Option<u64>,
    },
}

impl SandboxRecord {
    /// Reads `fields`' `sandbox`, if it has one.
    pub(crate) fn parse(fields: &Fields<'_>) -> Result<Option<Self>, ConfigError> {
        let key = "sandbox";
        let Some(value) = fields.get(key) else {
            return Ok(None);
        };
        let invalid = |steps: &[Step<'_>], message: String| fields.err(key, steps, message);
        let obj = match value {
            Value::Bool(false) => return Ok(Some(SandboxRecord::Off)),
            Value::Bool(true) => return Ok(Some(SandboxRecord::Default)),
            Value::String(s) if s == "default" => return Ok(Some(SandboxRecord::Default)),
            Value::Object(obj) => obj,
            other => {
                return Err(invalid(
                    &[Step::Key(key)],
                    format!(
                        "\"sandbox\" must be false, \"default\" or an object with \"read\", \
                         \"write\", \"network\", \"memoryMb\", \"processes\"; not {other}"
                    ),
                ));
            }
        };
        if let Some(unknown) = obj.keys().find(|k| !RULE_KEYS.contains(&k.as_str())) {
            return Err(invalid(
                &[Step::Key(key), Step::Key(unknown)],
                format!(
                    "\"sandbox\" has an unknown key \"{unknown}\"; it takes \"read\", \
                     \"write\", \"network\", \"memoryMb\" and \"processes\""
                ),
            ));
        }
        let paths = |name: &str| -> Result<Vec<String>, ConfigError> {
            match obj.get(name).filter(|v| !v.is_null()) {
                None => Ok(Vec::new()),
                Some(Value::Array(items)) => items
                    .iter()
                    .enumerate()
                    .map(|(i, item)| match item.as_str() {
                        Some(path) if !path.trim().is_empty() => Ok(path.to_owned()),
                        _ => Err(invalid(
                            &[Step::Key(key), Step::Key(name), Step::Index(i)],
                            format!("\"sandbox\".\"{name}\" item {i} must be a path"),
                        )),
                    })
                    .collect(),
                Some(_) => Err(invalid(
                    &[Step::Key(key), Step::Key(name)],
                    format!("\"sandbox\".\"{name}\" must be an array of paths"),
                )),
            }
        };
        let count = |name: &str| -> Result<Option<u64>, ConfigError> {
            match obj.get(name).filter(|v| !v.is_null()) {
                None => Ok(None),
                Some(v) => v.as_u64().filter(|n| *n > 0).map(Some).ok_or_else(|| {
                    invalid(
                        &[Step::Key(key), Step::Key(name)],
                        format!("\"sandbox\".\"{name}\" must be a positive whole number, not {v}"),
                    )
                }),
            }
        };
        let network = match obj.get("network").filter(|v| !v.is_null()) {
            None => Network::Any,
            Some(v) => v.as_str().and_then(Network::parse).ok_or_else(|| {
                invalid(
                    &[Step::Key(key), Step::Key("network")],
                    format!(
                        "\"sandbox\".\"network\" must be \"any\", \"loopback\" or \"none\", not {v}"
                    ),
                )
            })?,
        };
        Ok(Some(SandboxRecord::Rules {
            read: paths("read")?,
            write: paths("write")?,
            network,
            memory_mb: count("memoryMb")?,
            processes: count("processes")?,
        }))
    }

    /// The sandbox, each path through `expand` (`${VAR}`, with a leading
    /// `~` as the home directory) and then `relative` (to the config file's
    /// folder).
    pub(crate) fn resolve(
        &self,
        expand: ExpandPath<'_>,
        relative: &dyn Fn(&str) -> PathBuf,
    ) -> Result<Sandbox, ConfigError> {
        Ok(match self {
            SandboxRecord::Off => Sandbox::Off,
            SandboxRecord::Default => Sandbox::Default,
            SandboxRecord::Rules {
                read,
                write,
                network,
                memory_mb,
                processes,
            } => {
                let expand_all = |name: &str, paths: &[String]| {
                    paths
                        .iter()
                        .enumerate()
                        .map(|(i, path)| {
                            let path = match path.strip_prefix('~') {
                                Some(rest) if rest.is_empty() || rest.starts_with('/') => {
                                    format!("${{userHome}}{rest}")
                                }
                                _ => path.clone(),
                            };
                            let label = format!("\"sandbox\".\"{name}\"[{i}]");
                            let steps = [Step::Key("sandbox"), Step::Key(name), Step::Index(i)];
                            expand(&label, &steps, &path).map(|p| relative(&p))
                        })
                        .collect::<Result<Vec<_>, _>>()
                };
                Sandbox::Rules(SandboxRules {
                    read: expand_all("read", read)?,
                    write: expand_all("write", write)?,
                    network: *network,
                    memory_mb: *memory_mb,
                    processes: *processes,
                })
            }
        })
    }

    /// Why this system cannot set up this sandbox, if it cannot
    /// ([`crate::sandbox::Support::refuses`]; paths play no part in it).
    pub(crate) fn unavailable(&self) -> Option<String> {
        let sandbox = match self {
            SandboxRecord::Off => Sandbox::Off,
            SandboxRecord::Default => Sandbox::Default,
            SandboxRecord::Rules {
                network, processes, ..
            } => Sandbox::Rules(SandboxRules {
                network: *network,
                processes: *processes,
                ..SandboxRules::default()
            }),
        };
        crate::sandbox::Support::get().refuses(&sandbox)
    }

    /// The record that says `sandbox` (`None` for the default).
    pub(crate) fn from_sandbox(sandbox: &Sandbox) -> Option<Self> {
        let shown = |paths: &[PathBuf]| {
            paths
                .iter()
                .map(|p| p.display().to_string().replace('$', "$$"))
                .collect()
        };
        match sandbox {
            Sandbox::Default => None,
            Sandbox::Off => Some(SandboxRecord::Off),
            Sandbox::Rules(rules) => Some(SandboxRecord::Rules {
                read: shown(&rules.read),
                write: shown(&rules.write),
                network: rules.network,
                memory_mb: rules.memory_mb,
                processes: rules.processes,
            }),
        }
    }

    /// As `servers list --json` shows it: `false`, `"default"` or the object
    /// as written.
    pub(crate) fn to_json(&self) -> Value {
        match self {
            SandboxRecord::Off => Value::Bool(false),
            SandboxRecord::Default => json!("default"),
            SandboxRecord::Rules {
                read,
                write,
                network,
                memory_mb,
                processes,
            } => {
                let mut obj = Map::new();
                obj.insert("read".into(), json!(read));
                obj.insert("write".into(), json!(write));
                obj.insert("network".into(), json!(network.as_str()));
                if let Some(mb) = memory_mb {
                    obj.insert("memoryMb".into(), json!(mb));
                }
                if let Some(n) = processes {
                    obj.insert("processes".into(), json!(n));
                }
                Value::Object(obj)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use std::{collections::HashMap, path::Path};

    use super::*;
    use crate::config::{Config, TransportSpec};

    fn sandbox_of(text: &str, server: &str) -> Result<Sandbox, ConfigError> {
        let env: HashMap<String, String> = [("HOME", "/home/a"), ("DATA", "/srv/data")]
            .into_iter()
            .map(|(k, v)| (k.to_owned(), v.to_owned()))
            .collect();
        let config = Config::parse(Path::new("/etc/tb/config.json"), text)?.with_env(env);
        match config.resolve(server)?.transport {
            TransportSpec::Stdio(stdio) => Ok(stdio.sandbox),
            other => panic!("not stdio: {other:?}"),
        }
    }

    #[test]
    fn the_three_forms_resolve_with_paths_expanded() {
        let text = r#"{"toolbridge": {"sandbox": false}, "mcpServers": {
            "own": {"command": "x", "sandbox": {"read": ["~/docs", "rel"],
                    "write": ["${DATA}/out"], "network": "loopback",
                    "memoryMb": 512, "processes": 32}},
            "plain": {"command": "x", "sandbox": "default"},
            "global": {"command": "x"}
        }}"#;
        assert_eq!(
            sandbox_of(text, "own").unwrap(),
            Sandbox::Rules(SandboxRules {
                read: vec!["/home/a/docs".into(), "/etc/tb/rel".into()],
                write: vec!["/srv/data/out".into()],
                network: Network::Loopback,
                memory_mb: Some(512),
                processes: Some(32),
            })
        );
        assert_eq!(sandbox_of(text, "plain").unwrap(), Sandbox::Default);
        assert_eq!(sandbox_of(text, "global").unwrap(), Sandbox::Off);
        let bare = r#"{"mcpServers": {"s": {"command": "x"}}}"#;
        assert_eq!(sandbox_of(bare, "s").unwrap(), Sandbox::Default);
    }

    #[test]
    fn a_wrong_sandbox_is_an_error_naming_the_server_and_the_key() {
        for (sandbox, expected) in [
            (r#""strict""#, "must be false, \"default\" or an object"),
            (r#"{"writes": []}"#, "unknown key \"writes\""),
            (r#"{"network": "lan"}"#, "\"any\", \"loopback\" or \"none\""),
            (r#"{"read": "/x"}"#, "must be an array of paths"),
            (r#"{"processes": 0}"#, "positive whole number"),
            (r#"{"write": ["${NOPE}/x"]}"#, "NOPE"),
        ] {
            let text =
                format!(r#"{{"mcpServers": {{"s": {{"command": "x", "sandbox": {sandbox}}}}}}}"#);
            let error = sandbox_of(&text, "s").unwrap_err().to_string();
            assert!(error.contains("\"s\""), "{sandbox}: {error}");
            assert!(error.contains(expected), "{sandbox}: {error}");
        }
    }
}
