//! [`NewServer`]: a server described on the command line (`servers add`),
//! turned into a config record.

use std::{path::PathBuf, time::Duration};

use serde_json::{Map, Value};

use super::spec::TransportKind;

/// A server to add to the config.
#[derive(Debug, Clone, PartialEq)]
pub struct NewServer {
    /// How to reach it.
    pub target: NewTarget,
    /// Per-call timeout; `None` leaves the default.
    pub timeout: Option<Duration>,
    /// Add it disabled.
    pub disabled: bool,
}

/// How a [`NewServer`] is reached.
#[derive(Debug, Clone, PartialEq)]
pub enum NewTarget {
    /// A child process.
    Stdio {
        /// The program.
        command: String,
        /// Its arguments.
        args: Vec<String>,
        /// Extra environment variables, in order.
        env: Vec<(String, String)>,
        /// Working directory; best absolute, since a relative one is taken
        /// relative to the config file's directory.
        cwd: Option<PathBuf>,
    },
    /// A network server.
    Remote {
        /// The endpoint.
        url: String,
        /// The transport; `None` infers it from the URL when connecting
        /// (WebSocket for `ws://`, else streamable HTTP with SSE fallback).
        transport: Option<TransportKind>,
        /// Request headers, in order.
        headers: Vec<(String, String)>,
    },
}

impl NewServer {
    /// A stdio server running `command args...`.
    pub fn stdio(command: impl Into<String>, args: Vec<String>) -> Self {
        NewServer {
            target: NewTarget::Stdio {
                command: command.into(),
                args,
                env: Vec::new(),
                cwd: None,
            },
            timeout: None,
            disabled: false,
        }
    }

    /// A network server at `url`.
    pub fn remote(url: impl Into<String>, transport: Option<TransportKind>) -> Self {
        NewServer {
            target: NewTarget::Remote {
                url: url.into(),
                transport,
                headers: Vec::new(),
            },
            timeout: None,
            disabled: false,
        }
    }

    /// The record as it goes into `mcpServers`, in the shape Claude Desktop
    /// and Claude Code write (no `type` for stdio or when it is inferred).
    pub fn to_record(&self) -> Value {
        let mut record = Map::new();
        let strings =
            |items: &[String]| Value::Array(items.iter().cloned().map(Value::String).collect());
        let object = |pairs: &[(String, String)]| {
            Value::Object(
                pairs
                    .iter()
                    .map(|(k, v)| (k.clone(), Value::String(v.clone())))
                    .collect(),
            )
        };
        match &self.target {
            NewTarget::Stdio {
                command,
                args,
                env,
                cwd,
            } => {
                record.insert("command".into(), Value::String(command.clone()));
                if !args.is_empty() {
                    record.insert("args".into(), strings(args));
                }
                if !env.is_empty() {
                    record.insert("env".into(), object(env));
                }
                if let Some(cwd) = cwd {
                    record.insert(
                        "cwd".into(),
                        Value::String(cwd.to_string_lossy().into_owned()),
                    );
                }
            }
            NewTarget::Remote {
                url,
                transport,
                headers,
            } => {
                if let Some(kind) = transport {
                    record.insert("type".into(), Value::String(kind.as_str().into()));
                }
                record.insert("url".into(), Value::String(url.clone()));
                if !headers.is_empty() {
                    record.insert("headers".into(), object(headers));
                }
            }
        }
        if let Some(timeout) = self.timeout {
            let secs = timeout.as_secs_f64();
            let number = if timeout.subsec_nanos() == 0 {
                Some(serde_json::Number::from(timeout.as_secs()))
            } else {
                serde_json::Number::from_f64(secs)
            };
            if let Some(number) = number {
                record.insert("timeout".into(), Value::Number(number));
            }
        }
        if self.disabled {
            record.insert("disabled".into(), Value::Bool(true));
        }
        Value::Object(record)
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn stdio_records_have_the_claude_desktop_shape() {
        let server = NewServer {
            target: NewTarget::Stdio {
                command: "uvx".into(),
                args: vec!["mcp-server-time".into()],
                env: vec![("TZ".into(), "UTC".into()), ("A".into(), "1".into())],
                cwd: Some("/srv".into()),
            },
            timeout: Some(Duration::from_secs(30)),
            disabled: true,
        };
        let record = server.to_record();
        assert_eq!(
            record,
            json!({"command": "uvx", "args": ["mcp-server-time"], "env": {"TZ": "UTC", "A": "1"},
                   "cwd": "/srv", "timeout": 30, "disabled": true})
        );
        let keys: Vec<&String> = record["env"].as_object().unwrap().keys().collect();
        assert_eq!(keys, ["TZ", "A"], "env keeps the order given");
    }

    #[test]
    fn remote_records_declare_the_type_only_when_given() {
        assert_eq!(
            NewServer::remote("https://h/mcp", None).to_record(),
            json!({"url": "https://h/mcp"})
        );
        let mut sse = NewServer::remote("https://h/sse", Some(TransportKind::Sse));
        sse.timeout = Some(Duration::from_millis(1500));
        assert_eq!(
            sse.to_record(),
            json!({"type": "sse", "url": "https://h/sse", "timeout": 1.5})
        );
    }
}
