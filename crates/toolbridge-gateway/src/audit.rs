//! The audit trail: one line per tool call, at info level on target
//! `toolbridge::audit` (server, tool, the client: its kind, name and
//! profile binding, the profile it reached, duration, outcome),
//! and one per change pinning saw (a tool withheld, approved, a server
//! pinned the first time). Arguments only at debug level; tokens and
//! headers never.

use std::time::Duration;

use rmcp::model::JsonObject;

use crate::identity::ClientIdentity;

/// The log target of audit lines.
pub const TARGET: &str = "toolbridge::audit";

/// How a call ended, as the audit line and the metrics say it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// The tool answered.
    Ok,
    /// The tool answered `isError`.
    ToolError,
    /// The call failed (unknown tool, server down, timeout...).
    Failed,
    /// The client cancelled it.
    Cancelled,
    /// The gateway refused it: no right to the tool (`crate::rights`), or
    /// its upstream's bound full (`crate::rate_limits`; a refusal over a
    /// rate is no audit line, so a flood of them is not one of lines).
    Refused,
}

impl Outcome {
    /// The word in the audit line.
    pub fn as_str(self) -> &'static str {
        match self {
            Outcome::Ok => "ok",
            Outcome::ToolError => "tool_error",
            Outcome::Failed => "failed",
            Outcome::Cancelled => "cancelled",
            Outcome::Refused => "refused",
        }
    }
}

/// Logs a call about to be made: its arguments, at debug level only.
pub fn arguments(server: &str, tool: &str, arguments: Option<&JsonObject>) {
    if tracing::enabled!(target: TARGET, tracing::Level::DEBUG) {
        let arguments = arguments
            .map(|a| serde_json::Value::Object(a.clone()).to_string())
            .unwrap_or_default();
        tracing::debug!(target: TARGET, server, tool, %arguments, "tool call arguments");
    }
}

/// The kind and name of `client` as audit lines, metrics and spans give
/// them (`None`: a client the auth layer did not name, such as stdio's).
pub fn who(client: Option<&ClientIdentity>) -> (&'static str, &str) {
    match client {
        Some(c) => (c.kind.as_str(), c.name.as_str()),
        None => ("local", "stdio"),
    }
}

/// Logs one finished call, made by `client` (`None`: a client the auth
/// layer did not name, such as stdio's, logged as `local`) through
/// `profile` (`None`: `/mcp`, or the web page).
pub fn call(
    server: &str,
    tool: &str,
    took: Duration,
    outcome: Outcome,
    client: Option<&ClientIdentity>,
    profile: Option<&str>,
) {
    let (kind, name) = who(client);
    let bound = client.and_then(|c| c.profile.as_deref());
    tracing::info!(
        target: TARGET,
        server,
        tool,
        client = name,
        client_kind = kind,
        client_profile = bound.unwrap_or(""),
        profile = profile.unwrap_or(""),
        duration_ms = took.as_secs_f64() * 1000.0,
        outcome = outcome.as_str(),
        "tool call"
    );
}

/// Logs what pinning saw: a withheld definition (a warning: a server's
/// tool changed under its users), an approval, a first pinning.
pub fn pin_event(event: &toolbridge::pins::PinEvent) {
    use toolbridge::pins::PinEvent;
    match event {
        PinEvent::Withheld(w) => tracing::warn!(
            target: TARGET,
            server = %w.server,
            tool = %w.tool,
            change = w.change.as_str(),
            hash = %w.hash,
            "tool definition withheld"
        ),
        PinEvent::Approved(w) => tracing::info!(
            target: TARGET,
            server = %w.server,
            tool = %w.tool,
            change = w.change.as_str(),
            hash = %w.hash,
            "tool definition approved"
        ),
        PinEvent::FirstPinned { server, tools } => tracing::info!(
            target: TARGET,
            server = %server,
            tools,
            "tool definitions pinned on first sight"
        ),
    }
}
