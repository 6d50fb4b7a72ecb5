//! [`Finding`]: one problem with one server, and what to do about it.

use std::fmt;

use serde::{Serialize, Serializer};

use super::Fix;
use crate::{deps::InstallPlan, pool::FailureKind};

/// One problem with one server, and what to do about it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Finding {
    /// The server's name in the config.
    pub server: String,
    /// What is wrong.
    pub problem: Problem,
    /// What to do, in one English sentence (`fix_kind`'s).
    pub fix: String,
    /// What to do, as data: the page says it in its reader's language.
    #[serde(rename = "fixKind")]
    pub fix_kind: Fix,
    /// How to install a missing command, when toolbridge knows how (in JSON:
    /// the best command line, when there is one).
    #[serde(
        rename = "installCommand",
        serialize_with = "first_method",
        skip_serializing_if = "no_method"
    )]
    pub install: Option<InstallPlan>,
}

/// What is wrong with a server.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(
    tag = "kind",
    rename_all = "camelCase",
    rename_all_fields = "camelCase"
)]
#[non_exhaustive]
pub enum Problem {
    /// The stdio command is not installed (not on the `PATH` it would get).
    CommandNotFound {
        /// The command as configured, expanded.
        command: String,
    },
    /// A `${VAR}` without a default is not set.
    UnsetVariable {
        /// The variable.
        var: String,
    },
    /// The preset the server came from needs an API key that is not there.
    MissingApiKey {
        /// The preset's id.
        preset: String,
        /// The variable that should hold the key.
        var: String,
    },
    /// A value cannot be resolved (a malformed `${...}`, a URL that is not
    /// one once expanded).
    Invalid {
        /// The config's error, naming the file, line, server and field.
        message: String,
    },
    /// The remote server did not answer.
    Unreachable {
        /// The URL as written in the config, secrets masked.
        url: String,
        /// Why: connection refused, DNS failure, timeout, ...
        reason: String,
    },
    /// The stdio command is a file, but not one this user may run.
    NotExecutable {
        /// The command as configured, expanded.
        command: String,
    },
    /// The server was started and failed: it exited, refused the
    /// handshake, answered with an HTTP error, or could not list its tools.
    StartFailed {
        /// What went wrong (config secrets masked).
        reason: String,
        /// What kind of failure that was, as data: the settings page says
        /// it in its reader's language (`reason` is its English).
        reason_kind: FailureKind,
        /// The HTTP status a remote server answered with, if that is why.
        #[serde(skip_serializing_if = "Option::is_none")]
        http_status: Option<u16>,
        /// The last lines the server wrote to stderr, config secrets masked.
        #[serde(skip_serializing_if = "Option::is_none")]
        stderr: Option<String>,
    },
    /// A tool's definition holds characters a person cannot see
    /// (zero-width, bidirectional controls, Unicode tags, control
    /// characters): a way to hide instructions for a model.
    HiddenCharacters {
        /// The tool.
        tool: String,
        /// Where the first one is (`description`, a schema pointer...).
        field: String,
        /// The first one, as `U+200B`.
        code_point: String,
        /// How many the tool's definition holds in all.
        count: usize,
    },
    /// The server did not finish starting (or listing its tools) in time.
    StartTimeout {
        /// The limit, in milliseconds.
        timeout_ms: u64,
        /// The last lines the server wrote to stderr, config secrets masked.
        #[serde(skip_serializing_if = "Option::is_none")]
        stderr: Option<String>,
    },
}

impl Finding {
    /// The finding `problem` of `server`, to be fixed by `fix`.
    pub fn new(server: impl Into<String>, problem: Problem, fix: Fix) -> Finding {
        Finding {
            server: server.into(),
            problem,
            fix: fix.to_string(),
            fix_kind: fix,
            install: None,
        }
    }
}

impl Problem {
    /// The last lines the server wrote to stderr, when it was started and
    /// wrote any.
    pub fn stderr(&self) -> Option<&str> {
        match self {
            Problem::StartFailed { stderr, .. } | Problem::StartTimeout { stderr, .. } => {
                stderr.as_deref()
            }
            _ => None,
        }
    }
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Problem::CommandNotFound { command } => {
                write!(f, "command \"{command}\" not found on PATH")
            }
            Problem::UnsetVariable { var } => write!(f, "${{{var}}} is not set"),
            Problem::MissingApiKey { preset, var } => {
                write!(f, "API key {var} for preset \"{preset}\" is missing")
            }
            Problem::Invalid { message } => f.write_str(message),
            Problem::Unreachable { url, reason } => write!(f, "{url} does not answer: {reason}"),
            Problem::NotExecutable { command } => {
                write!(f, "command \"{command}\" is not executable")
            }
            Problem::StartFailed { reason, .. } => write!(f, "failed to start: {reason}"),
            Problem::HiddenCharacters {
                tool,
                field,
                code_point,
                count,
            } => write!(
                f,
                "tool \"{tool}\" hides {count} invisible character(s) in its definition, \
                 the first ({code_point}) in {field}"
            ),
            Problem::StartTimeout { timeout_ms, .. } => {
                let secs = *timeout_ms as f64 / 1000.0;
                if timeout_ms % 1000 == 0 {
                    write!(f, "did not start and list its tools within {secs:.0} s")
                } else {
                    write!(f, "did not start and list its tools within {secs:.1} s")
                }
            }
        }
    }
}

impl fmt::Display for Finding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}; fix: {}", self.server, self.problem, self.fix)
    }
}

fn no_method(plan: &Option<InstallPlan>) -> bool {
    plan.as_ref().is_none_or(|plan| plan.methods.is_empty())
}

fn first_method<S: Serializer>(plan: &Option<InstallPlan>, s: S) -> Result<S::Ok, S::Error> {
    match plan.as_ref().and_then(|plan| plan.methods.first()) {
        Some(method) => s.serialize_str(&method.display()),
        None => s.serialize_none(),
    }
}
