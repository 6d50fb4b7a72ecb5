//! [`PoolError`]: what can go wrong talking to a pooled server.

use std::time::Duration;

use crate::transport::TransportError;

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
    /// The server is configured with `disabled: true`.
    #[error("server \"{server}\" is disabled; enable it with `toolbridge servers enable {server}`")]
    Disabled {
        /// The server's config name.
        server: String,
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
        /// The last lines the server wrote to stderr.
        stderr: Option<String>,
    },
    /// The server did not finish starting in time.
    #[error("server \"{server}\" did not start within {}{}", secs(.after), stderr_suffix(.stderr))]
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
    },
    /// The tool can only be called as a task (`execution.taskSupport` is
    /// `"required"`), which toolbridge does not do yet.
    #[error(
        "tool \"{tool}\" of server \"{server}\" can only be called as a task \
         (its execution.taskSupport is \"required\"), which toolbridge does not support yet; \
         use an MCP client with task support for it"
    )]
    TaskRequired {
        /// The server's config name.
        server: String,
        /// The tool's name.
        tool: String,
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

impl PoolError {
    /// True for timeouts (exit code 4 in the CLI).
    pub fn is_timeout(&self) -> bool {
        matches!(
            self,
            PoolError::Timeout { .. } | PoolError::StartTimeout { .. }
        )
    }

    /// True for errors in what the user asked for (an unknown or disabled
    /// server, a bad config): exit code 2 in the CLI.
    pub fn is_usage(&self) -> bool {
        matches!(
            self,
            PoolError::UnknownServer { .. }
                | PoolError::Disabled { .. }
                | PoolError::TaskRequired { .. }
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
