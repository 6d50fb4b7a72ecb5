//! [`PoolError`]: what can go wrong talking to a pooled server.

use std::time::Duration;

use rmcp::model::ServerResult;

use crate::{
    tools::McpTool,
    transport::{TransportError, describe_exit},
};

/// The error for a `result` that is not what `method` answers.
pub(super) fn unexpected(server: &str, method: &str, result: &ServerResult) -> PoolError {
    PoolError::Protocol {
        server: server.to_owned(),
        message: format!(
            "it answered {method} with something else ({})",
            result_kind(result)
        ),
    }
}

/// What kind of answer `result` is, for an error that says it was not the
/// one expected.
pub(super) fn result_kind(result: &ServerResult) -> &'static str {
    match result {
        ServerResult::EmptyResult(_) => "an empty result",
        ServerResult::ListToolsResult(_) => "a tools/list result",
        _ => "another kind of result",
    }
}

/// An error from the pool. Every variant names the server; messages never
/// contain secrets.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum PoolError {
    /// No server of that name is configured.
    #[error("unknown server \"{server}\"; configured servers: {}", known_list(.known))]
    UnknownServer {
        /// The name asked for.
        server: String,
        /// The configured names.
        known: Vec<String>,
    },
    /// The request started on a server that a [`Pool::reload`](super::Pool::reload)
    /// then removed or replaced with its new entry: sending it again reaches
    /// the server as the config has it now (or names it unknown).
    #[error(
        "server \"{server}\" was removed or changed by a config reload as the request started; send it again"
    )]
    Reloaded {
        /// The server's config name.
        server: String,
    },
    /// The server does not have the tool that was called.
    #[error("server \"{server}\" has no tool \"{tool}\"; {}", tool_list(.server, .known))]
    UnknownTool {
        /// The server's config name.
        server: String,
        /// The tool asked for.
        tool: String,
        /// The tools the server lists.
        known: Vec<String>,
    },
    /// The server is configured with `disabled: true`.
    #[error("server \"{server}\" is disabled; enable it with `toolbridge servers enable {server}`")]
    Disabled {
        /// The server's config name.
        server: String,
    },
    /// The tool is in the server's `disabledTools`: it is neither listed
    /// nor callable, as if the server did not have it.
    #[error(
        "unknown tool \"{tool}\" on server \"{server}\": it is in the server's \"disabledTools\" \
         in the config; remove it from there to use it"
    )]
    ToolDisabled {
        /// The server's config name.
        server: String,
        /// The tool asked for.
        tool: String,
    },
    /// The tool's definition is not the one pinned (it changed, or it is
    /// new on a pinned server): it is withheld until approved.
    #[error("{0}")]
    Withheld(Box<crate::pins::Withheld>),
    /// The server's pins could not be written.
    #[error("cannot write the pins of server \"{server}\": {message}")]
    Pins {
        /// The server's config name.
        server: String,
        /// What went wrong, with the file.
        message: String,
    },
    /// The transport could not be created (missing command, bad URL...).
    #[error(transparent)]
    Transport(#[from] TransportError),
    /// The server started but the MCP handshake failed.
    #[error("server \"{server}\" failed to start: {reason}{}", stderr_suffix(.stderr))]
    Start {
        /// The server's config name.
        server: String,
        /// What went wrong.
        reason: String,
        /// How the server's process ended, when that is why (it exited
        /// before the handshake finished).
        exit: Option<std::process::ExitStatus>,
        /// The last lines the server wrote to stderr.
        stderr: Option<String>,
    },
    /// The server did not finish starting (spawn or connect, and the
    /// handshake) within its start timeout.
    #[error(
        "server \"{server}\" did not start within {}; if it is only slow to start, raise its \"startupTimeout\" in the config{}",
        secs(.after),
        stderr_suffix(.stderr)
    )]
    StartTimeout {
        /// The server's config name.
        server: String,
        /// The start timeout.
        after: Duration,
        /// The last lines the server wrote to stderr.
        stderr: Option<String>,
    },
    /// The connection closed (the server exited or crashed) while a request
    /// was in flight.
    #[error("server \"{server}\" closed the connection{}{}", during(.tool), stderr_suffix(.stderr))]
    Closed {
        /// The server's config name.
        server: String,
        /// The tool being called, if any.
        tool: Option<String>,
        /// The last lines the server wrote to stderr.
        stderr: Option<String>,
    },
    /// The server's process ended by itself (a crash) while a request was
    /// in flight.
    #[error("server \"{server}\" {}{}{}", describe_exit(.status), during(.tool), stderr_suffix(.stderr))]
    Exited {
        /// The server's config name.
        server: String,
        /// The tool being called, if any.
        tool: Option<String>,
        /// How it ended, shown as "exited with status 1" or "was killed by
        /// signal 9 (SIGKILL)".
        status: std::process::ExitStatus,
        /// The last lines the server wrote to stderr.
        stderr: Option<String>,
    },
    /// A tool call or a tool listing took longer than its timeout. A call
    /// is cancelled on the server (it is sent `notifications/cancelled`); a
    /// listing is only abandoned. The connection stays up either way.
    #[error("{}", timeout_message(.server, .tool, .after))]
    Timeout {
        /// The server's config name.
        server: String,
        /// The tool, or `None` for a tool listing.
        tool: Option<String>,
        /// The timeout that expired.
        after: Duration,
    },
    /// The server answered with a JSON-RPC error.
    #[error("server \"{server}\" returned an error{}: {message} (code {code})", during(.tool))]
    Server {
        /// The server's config name.
        server: String,
        /// The tool being called, if any.
        tool: Option<String>,
        /// The JSON-RPC error code.
        code: i32,
        /// The JSON-RPC error message.
        message: String,
        /// The error's `data`, as the server sent it (scrubbed of the
        /// server's secrets like the message): what a client needs to act
        /// on some errors, such as the elicitations of a URL elicitation
        /// required error (-32042), so a gateway passes it on. Boxed: most
        /// errors have none, and every `Result` of the pool carries the
        /// largest variant's size.
        data: Option<Box<serde_json::Value>>,
    },
    /// The server's answer could not be read (over the size cap, nested too
    /// deep, not UTF-8, a raw NUL byte): the request failed at once instead
    /// of waiting for its timeout.
    #[error(
        "server \"{server}\" sent an answer{} that toolbridge cannot read: {reason}",
        during(.tool)
    )]
    Unreadable {
        /// The server's config name.
        server: String,
        /// The tool being called, if any.
        tool: Option<String>,
        /// Why (size, depth, encoding).
        reason: String,
    },
    /// A listing (tools, resources, resource templates, prompts) that does
    /// not end: a `nextCursor` seen before (a page pointing to itself, or a
    /// cycle), or more pages or items than toolbridge takes (see
    /// [`MAX_TOOL_PAGES`](super::MAX_TOOL_PAGES) and
    /// [`MAX_LISTED_TOOLS`](super::MAX_LISTED_TOOLS), which bound every list).
    #[error(
        "server \"{server}\": its {list} list does not end ({reason}); toolbridge stopped \
         listing it. Tell the server's authors"
    )]
    EndlessListing {
        /// The server's config name.
        server: String,
        /// Which list: "tool", "resource", "resource template", "prompt".
        list: &'static str,
        /// What gave it away.
        reason: String,
    },
    /// A tool call run as a task ended without a result: the server
    /// cancelled the task, or it needs input toolbridge cannot give.
    #[error("tool \"{tool}\" of server \"{server}\": task {task_id}: {message}")]
    Task {
        /// The server's config name.
        server: String,
        /// The tool's name.
        tool: String,
        /// The server's id for the task.
        task_id: String,
        /// What happened, and what to do.
        message: String,
    },
    /// The server does not declare the capability a request needs (a
    /// prompt asked of a server without `prompts`, say). The all-servers
    /// listings treat such a server as having none, not as a failure.
    #[error(
        "server \"{server}\" offers no {feature} (it does not declare the capability); \
         ask a server that does"
    )]
    NotOffered {
        /// The server's config name.
        server: String,
        /// What it does not offer.
        feature: Feature,
    },
    /// The server has no resource at that URI (JSON-RPC `-32002`, or
    /// `-32602` for `resources/read`, whose only parameter is the URI).
    #[error(
        "server \"{server}\" has no resource \"{uri}\" ({message}); \
         `toolbridge resources list --server {server}` lists its resources"
    )]
    UnknownResource {
        /// The server's config name.
        server: String,
        /// The URI asked for.
        uri: String,
        /// What the server said.
        message: String,
    },
    /// The server has no prompt of that name (it refused the request and
    /// does not list it).
    #[error("server \"{server}\" has no prompt \"{prompt}\"; {}", prompt_list(.server, .known))]
    UnknownPrompt {
        /// The server's config name.
        server: String,
        /// The prompt asked for.
        prompt: String,
        /// The prompts the server lists.
        known: Vec<String>,
    },
    /// The server serves no skill of that name (or at that `SKILL.md` URI).
    #[error("server \"{server}\" has no skill \"{skill}\"; {}", skill_list(.server, .known))]
    UnknownSkill {
        /// The server's config name.
        server: String,
        /// The name or URI asked for.
        skill: String,
        /// The names (or URIs) the server lists.
        known: Vec<String>,
    },
    /// Several of the server's skills have the name asked for (names are
    /// labels, not identities): the URI says which.
    #[error(
        "server \"{server}\" has {} skills named \"{name}\" ({}); name one by its URI",
        .uris.len(),
        .uris.join(", ")
    )]
    AmbiguousSkill {
        /// The server's config name.
        server: String,
        /// The name asked for.
        name: String,
        /// The URIs of the skills with that name.
        uris: Vec<String>,
    },
    /// A skill's file (or its entry) is not what the skill's entry says:
    /// its size, digest or frontmatter differ, the entry does not list it,
    /// or the entry breaks the extension's rules. Its content was not used,
    /// and nothing after it was read.
    #[error(
        "server \"{server}\": skill file {uri} failed verification: {reason}; toolbridge did \
         not use it. List the skills again (`toolbridge skills list --server {server}`) and \
         retry; if it persists, tell the server's authors"
    )]
    SkillUnverified {
        /// The server's config name.
        server: String,
        /// The file (or the skill's `SKILL.md`) that failed.
        uri: String,
        /// What differed.
        reason: String,
    },
    /// The server refused a request's parameters (JSON-RPC `-32602`): the
    /// arguments of a prompt it has, say.
    #[error("server \"{server}\" refused {subject}: {message}; check the arguments")]
    InvalidParams {
        /// The server's config name.
        server: String,
        /// What was refused ("the arguments of prompt \"p\"").
        subject: String,
        /// What the server said.
        message: String,
    },
    /// A request other than a tool call ([`Pool::request`](super::Pool::request)
    /// and the operations built on it) took longer than its timeout; the
    /// server was sent `notifications/cancelled`.
    #[error(
        "{method} request to server \"{server}\" timed out after {}; the server was told to \
         cancel it. If the server is just slow, raise its \"timeout\" in the config",
        secs(.after)
    )]
    RequestTimeout {
        /// The server's config name.
        server: String,
        /// The request's method (`resources/read`).
        method: String,
        /// The timeout that expired.
        after: Duration,
    },
    /// The server broke the protocol (an unexpected response, say).
    #[error("server \"{server}\": protocol error: {message}")]
    Protocol {
        /// The server's config name.
        server: String,
        /// What was wrong.
        message: String,
    },
}

/// `value` with `scrub` applied to every string in it (keys too).
fn scrub_strings(value: serde_json::Value, scrub: &impl Fn(String) -> String) -> serde_json::Value {
    use serde_json::Value;
    match value {
        Value::String(text) => Value::String(scrub(text)),
        Value::Array(items) => Value::Array(
            items
                .into_iter()
                .map(|item| scrub_strings(item, scrub))
                .collect(),
        ),
        Value::Object(map) => Value::Object(
            map.into_iter()
                .map(|(key, item)| (scrub(key), scrub_strings(item, scrub)))
                .collect(),
        ),
        other => other,
    }
}

impl PoolError {
    /// `server` has no tool `tool`: the error, naming the `tools` it lists.
    pub(super) fn unknown_tool(server: &str, tool: impl Into<String>, tools: &[McpTool]) -> Self {
        PoolError::UnknownTool {
            server: server.to_owned(),
            tool: tool.into(),
            known: tools.iter().map(|t| t.name.clone()).collect(),
        }
    }

    /// True when the server refused toolbridge for want of an OAuth
    /// sign-in (its 401 asked for a bearer token), so signing in is the
    /// fix.
    pub fn needs_sign_in(&self) -> bool {
        matches!(self, PoolError::Transport(e) if e.needs_sign_in())
    }

    /// `self` with every text that came from the server or its transport
    /// (its stderr, its error messages, a reason) scrubbed of `redactor`'s
    /// secrets: the server's env and header values and the secret parts of
    /// its URL and arguments. The pool applies it where errors are made from
    /// a server's failures ([`super::Pool`]'s start and its rmcp errors), so
    /// no path lets one out unscrubbed.
    pub(crate) fn redacted(self, redactor: &crate::redact::Redactor) -> PoolError {
        let scrub = |text: String| match redactor.redact(&text) {
            std::borrow::Cow::Borrowed(_) => text,
            std::borrow::Cow::Owned(clean) => clean,
        };
        let scrub_opt = |text: Option<String>| text.map(scrub);
        match self {
            PoolError::Start {
                server,
                reason,
                exit,
                stderr,
            } => PoolError::Start {
                server,
                reason: scrub(reason),
                exit,
                stderr: scrub_opt(stderr),
            },
            PoolError::StartTimeout {
                server,
                after,
                stderr,
            } => PoolError::StartTimeout {
                server,
                after,
                stderr: scrub_opt(stderr),
            },
            PoolError::Closed {
                server,
                tool,
                stderr,
            } => PoolError::Closed {
                server,
                tool,
                stderr: scrub_opt(stderr),
            },
            PoolError::Exited {
                server,
                tool,
                status,
                stderr,
            } => PoolError::Exited {
                server,
                tool,
                status,
                stderr: scrub_opt(stderr),
            },
            PoolError::Server {
                server,
                tool,
                code,
                message,
                data,
            } => PoolError::Server {
                server,
                tool,
                code,
                message: scrub(message),
                data: data.map(|data| Box::new(scrub_strings(*data, &scrub))),
            },
            PoolError::Unreadable {
                server,
                tool,
                reason,
            } => PoolError::Unreadable {
                server,
                tool,
                reason: scrub(reason),
            },
            PoolError::EndlessListing {
                server,
                list,
                reason,
            } => PoolError::EndlessListing {
                server,
                list,
                reason: scrub(reason),
            },
            PoolError::Task {
                server,
                tool,
                task_id,
                message,
            } => PoolError::Task {
                server,
                tool,
                task_id,
                message: scrub(message),
            },
            PoolError::UnknownResource {
                server,
                uri,
                message,
            } => PoolError::UnknownResource {
                server,
                uri,
                message: scrub(message),
            },
            PoolError::InvalidParams {
                server,
                subject,
                message,
            } => PoolError::InvalidParams {
                server,
                subject,
                message: scrub(message),
            },
            PoolError::Protocol { server, message } => PoolError::Protocol {
                server,
                message: scrub(message),
            },
            other => other,
        }
    }

    /// True for timeouts (exit code 4 in the CLI).
    pub fn is_timeout(&self) -> bool {
        matches!(
            self,
            PoolError::Timeout { .. }
                | PoolError::StartTimeout { .. }
                | PoolError::RequestTimeout { .. }
                | PoolError::Transport(TransportError::Timeout { .. })
        )
    }

    /// True for errors in what the user asked for (an unknown or disabled
    /// server, an unknown tool, a bad config): exit code 2 in the CLI.
    pub fn is_usage(&self) -> bool {
        matches!(
            self,
            PoolError::UnknownServer { .. }
                | PoolError::UnknownTool { .. }
                | PoolError::Disabled { .. }
                | PoolError::ToolDisabled { .. }
                | PoolError::Withheld(_)
                | PoolError::NotOffered { .. }
                | PoolError::UnknownResource { .. }
                | PoolError::UnknownPrompt { .. }
                | PoolError::UnknownSkill { .. }
                | PoolError::AmbiguousSkill { .. }
                | PoolError::InvalidParams { .. }
                | PoolError::Transport(TransportError::Config { .. })
        )
    }
}

fn known_list(known: &[String]) -> String {
    if known.is_empty() {
        "none".to_owned()
    } else {
        known.join(", ")
    }
}

/// How many tool names an unknown-tool message shows before "and N more".
const TOOLS_SHOWN: usize = 8;

fn tool_list(server: &str, known: &[String]) -> String {
    name_list(
        known,
        "tool",
        &format!("toolbridge tools --server {server}"),
    )
}

fn skill_list(server: &str, known: &[String]) -> String {
    name_list(
        known,
        "skill",
        &format!("toolbridge skills list --server {server}"),
    )
}

fn prompt_list(server: &str, known: &[String]) -> String {
    name_list(
        known,
        "prompt",
        &format!("toolbridge prompts list --server {server}"),
    )
}

/// A few of `known` (the names of a server's `what`s), then how many more,
/// and the command that lists them all.
fn name_list(known: &[String], what: &str, command: &str) -> String {
    let shown = known.len().min(TOOLS_SHOWN);
    let mut names = known[..shown].join(", ");
    if known.len() > shown {
        names.push_str(&format!(" and {} more", known.len() - shown));
    }
    match known.len() {
        0 => format!("it lists no {what}s"),
        1 => format!("its only {what} is {names}"),
        _ => format!("its {what}s are {names} (`{command}` lists them)"),
    }
}

/// What a server may offer besides tools, for [`PoolError::NotOffered`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Feature {
    /// `resources/list`, `resources/templates/list`, `resources/read`.
    Resources,
    /// `resources/subscribe` and `resources/unsubscribe`.
    ResourceSubscriptions,
    /// `prompts/list`, `prompts/get`.
    Prompts,
    /// `completion/complete`.
    Completions,
    /// The skills extension (SEP-2640): `skills/list`, `skills/get`.
    Skills,
}

impl std::fmt::Display for Feature {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Feature::Resources => "resources",
            Feature::ResourceSubscriptions => "resource subscriptions",
            Feature::Prompts => "prompts",
            Feature::Completions => "argument completion",
            Feature::Skills => "skills",
        })
    }
}

fn secs(d: &Duration) -> String {
    let s = d.as_secs_f64();
    if s.fract() == 0.0 {
        format!("{s:.0} s")
    } else {
        format!("{s:.1} s")
    }
}

fn timeout_message(server: &str, tool: &Option<String>, after: &Duration) -> String {
    let after = secs(after);
    match tool {
        Some(tool) => format!(
            "call to tool \"{tool}\" on server \"{server}\" timed out after {after}; \
             the server was told to cancel it"
        ),
        None => format!(
            "listing tools on server \"{server}\" timed out after {after}; if the server \
             is just slow, raise its \"timeout\" in the config"
        ),
    }
}

fn during(tool: &Option<String>) -> String {
    match tool {
        Some(tool) => format!(" during a call to tool \"{tool}\""),
        None => String::new(),
    }
}

fn stderr_suffix(stderr: &Option<String>) -> String {
    match stderr {
        Some(lines) => {
            let indented: Vec<String> = lines.lines().map(|l| format!("  | {l}")).collect();
            format!("\nlast lines of its stderr:\n{}", indented.join("\n"))
        }
        None => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_servers_error_keeps_its_data_scrubbed_of_the_servers_secrets() {
        let redactor = crate::redact::Redactor::new(None, ["s3cr3t-token-value"]);
        let error = PoolError::Server {
            server: "ref".into(),
            tool: Some("t".into()),
            code: -32042,
            message: "sign in with s3cr3t-token-value".into(),
            data: Some(Box::new(serde_json::json!({
                "elicitations": [{"mode": "url", "url": "https://example.com/?k=s3cr3t-token-value"}],
                "n": 3,
            }))),
        }
        .redacted(&redactor);
        let PoolError::Server { message, data, .. } = error else {
            panic!("{error:?}")
        };
        assert!(!message.contains("s3cr3t"), "{message}");
        let data = data.expect("the data is kept");
        assert!(!data.to_string().contains("s3cr3t"), "{data}");
        assert_eq!(data["elicitations"][0]["mode"], "url");
        assert_eq!(data["n"], 3);
    }

    #[test]
    fn a_call_timeout_says_the_server_was_told_to_cancel() {
        let error = PoolError::Timeout {
            server: "slow".into(),
            tool: Some("search".into()),
            after: Duration::from_millis(1500),
        };
        assert_eq!(
            error.to_string(),
            "call to tool \"search\" on server \"slow\" timed out after 1.5 s; \
             the server was told to cancel it"
        );
    }

    #[test]
    fn an_unknown_tool_names_a_few_of_the_servers_tools_then_counts_the_rest() {
        let error = |known: &[&str]| {
            PoolError::UnknownTool {
                server: "files".into(),
                tool: "raed".into(),
                known: known.iter().map(|s| (*s).to_owned()).collect(),
            }
            .to_string()
        };
        assert_eq!(
            error(&["read", "write"]),
            "server \"files\" has no tool \"raed\"; its tools are read, write \
             (`toolbridge tools --server files` lists them)"
        );
        let many: Vec<String> = (1..=11).map(|i| format!("t{i}")).collect();
        let many: Vec<&str> = many.iter().map(String::as_str).collect();
        assert_eq!(
            error(&many),
            "server \"files\" has no tool \"raed\"; its tools are t1, t2, t3, t4, t5, t6, \
             t7, t8 and 3 more (`toolbridge tools --server files` lists them)"
        );
        assert_eq!(
            error(&[]),
            "server \"files\" has no tool \"raed\"; it lists no tools"
        );
        assert!(
            PoolError::UnknownTool {
                server: "s".into(),
                tool: "t".into(),
                known: vec![]
            }
            .is_usage()
        );
    }

    #[test]
    fn a_network_servers_timeout_is_a_timeout() {
        // Regression: a URL that accepts and never answers failed the
        // probe with "no answer within 30s", exit 3 instead of 4.
        let error = PoolError::Transport(TransportError::Timeout {
            server: "remote".into(),
            url: "http://127.0.0.1:1/mcp".into(),
            message: "no answer to the first request within 30s".into(),
        });
        assert!(error.is_timeout());
        assert!(!error.is_usage());
    }

    #[test]
    fn a_listing_timeout_does_not_claim_a_cancellation() {
        // A listing is abandoned, not cancelled: the message must not say
        // the server was told to cancel it.
        let error = PoolError::Timeout {
            server: "slow".into(),
            tool: None,
            after: Duration::from_secs(120),
        };
        let message = error.to_string();
        assert!(!message.contains("cancel"), "{message}");
        assert_eq!(
            message,
            "listing tools on server \"slow\" timed out after 120 s; if the server \
             is just slow, raise its \"timeout\" in the config"
        );
    }
}
