//! Server log messages (`notifications/message`) on stderr, as
//! `[server] level: message`, at the level `--log-level` or `-v` chose.
//! Never on stdout: that is the command's data.

// Logging is deprecated by SEP-2577 (rmcp 3.11 warns), but the 2025-11-25
// and 2026-07-28 protocols still carry it.
#![allow(deprecated)]

use std::io::Write as _;

use clap::ValueEnum;
use serde_json::Value;
use toolbridge::pool::{LogHandler, RequestOrigin};
use toolbridge::rmcp_model::{LoggingLevel, LoggingMessageNotificationParam};

/// `--log-level`: the least severe server log message shown.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum LogLevel {
    /// Everything.
    Debug,
    /// Informational messages and above (`-v`).
    Info,
    /// Normal but significant events and above.
    Notice,
    /// Warnings and above (the default).
    Warning,
    /// Errors and above.
    Error,
    /// Critical conditions and above.
    Critical,
    /// Action must be taken at once, and emergencies.
    Alert,
    /// Only emergencies.
    Emergency,
}

impl LogLevel {
    /// The level for `--log-level`, else `-v` (info) or `-vv` (debug), else
    /// warning; `None` (no server logs at all) with `-q` alone.
    pub fn chosen(explicit: Option<LogLevel>, verbose: u8, quiet: bool) -> Option<LogLevel> {
        match (explicit, verbose, quiet) {
            (Some(level), _, _) => Some(level),
            (None, _, true) => None,
            (None, 0, false) => Some(LogLevel::Warning),
            (None, 1, false) => Some(LogLevel::Info),
            (None, _, false) => Some(LogLevel::Debug),
        }
    }

    /// As MCP spells it.
    pub fn mcp(self) -> LoggingLevel {
        match self {
            LogLevel::Debug => LoggingLevel::Debug,
            LogLevel::Info => LoggingLevel::Info,
            LogLevel::Notice => LoggingLevel::Notice,
            LogLevel::Warning => LoggingLevel::Warning,
            LogLevel::Error => LoggingLevel::Error,
            LogLevel::Critical => LoggingLevel::Critical,
            LogLevel::Alert => LoggingLevel::Alert,
            LogLevel::Emergency => LoggingLevel::Emergency,
        }
    }
}

/// Writes each server log message to stderr (the pool filters by level).
#[derive(Debug, Default)]
pub struct StderrLogs;

impl LogHandler for StderrLogs {
    fn log(&self, origin: RequestOrigin, message: LoggingMessageNotificationParam) {
        let line = format_line(&origin.server, &message);
        let line = crate::terminal::for_stderr(&line);
        // A closed stderr is nowhere to complain to.
        let _ = writeln!(std::io::stderr().lock(), "{line}");
    }
}

/// `[server] level: message`, `[server] level: logger: message` with a
/// logger; a string as it is, other data as compact JSON.
fn format_line(server: &str, message: &LoggingMessageNotificationParam) -> String {
    let level = serde_json::to_value(message.level)
        .ok()
        .and_then(|v| v.as_str().map(str::to_owned))
        .unwrap_or_default();
    let data = match &message.data {
        Value::String(text) => text.clone(),
        other => other.to_string(),
    };
    match &message.logger {
        Some(logger) => format!("[{server}] {level}: {logger}: {data}"),
        None => format!("[{server}] {level}: {data}"),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn a_message_is_one_line_naming_the_server_level_and_logger() {
        let plain = LoggingMessageNotificationParam::new(LoggingLevel::Warning, json!("disk low"));
        assert_eq!(format_line("fs", &plain), "[fs] warning: disk low");
        let mut structured = LoggingMessageNotificationParam::new(
            LoggingLevel::Error,
            json!({"code": 7, "ok": false}),
        );
        structured.logger = Some("db".to_owned());
        assert_eq!(
            format_line("fs", &structured),
            r#"[fs] error: db: {"code":7,"ok":false}"#
        );
    }

    #[test]
    fn the_level_comes_from_the_flag_else_the_verbosity() {
        assert_eq!(LogLevel::chosen(None, 0, false), Some(LogLevel::Warning));
        assert_eq!(LogLevel::chosen(None, 1, false), Some(LogLevel::Info));
        assert_eq!(LogLevel::chosen(None, 2, false), Some(LogLevel::Debug));
        assert_eq!(LogLevel::chosen(None, 0, true), None);
        assert_eq!(
            LogLevel::chosen(Some(LogLevel::Error), 2, true),
            Some(LogLevel::Error)
        );
    }
}
