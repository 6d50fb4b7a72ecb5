//! The log messages (`notifications/message`) the upstream servers sent,
//! for the settings page's Logs view, beside each server's stderr tail
//! (which the pool keeps, redacted).
//!
//! Each message still goes where the pool routes it (the client whose call
//! it belongs to, see `toolbridge::pool`'s in-flight rule); a tee around
//! each call's handler notes a copy here first, and the messages no call
//! claims (the pool-wide handler's) are noted here only. Bounded: the last [`KEPT`] messages of
//! all servers.

// Logging is deprecated by SEP-2577 (rmcp 3.11 warns), but the 2025-11-25
// and 2026-07-28 protocols still carry it.
#![allow(deprecated)]

use std::{
    collections::VecDeque,
    sync::{Arc, Mutex},
};

use rmcp::model::LoggingMessageNotificationParam;
use serde::Serialize;
use toolbridge::{
    lock::LockUnpoisoned as _,
    pool::{LogHandler, RequestOrigin},
};

use crate::connected_clients::now_ms;

/// The most messages kept.
pub const KEPT: usize = 500;

/// One message.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct LogLine {
    /// The server that sent it.
    pub server: String,
    /// Its level (`debug` ... `emergency`).
    pub level: String,
    /// Its logger, if named.
    pub logger: Option<String>,
    /// Its data: a string as it is, other data as compact JSON.
    pub data: String,
    /// When it arrived, in ms since the Unix epoch.
    pub at_ms: u64,
}

/// The last messages. Cheap to clone.
#[derive(Debug, Clone, Default)]
pub struct UpstreamLogs {
    lines: Arc<Mutex<VecDeque<LogLine>>>,
}

impl UpstreamLogs {
    /// Notes `message` from `server`.
    pub fn note(&self, server: &str, message: &LoggingMessageNotificationParam) {
        let level = serde_json::to_value(message.level)
            .ok()
            .and_then(|v| v.as_str().map(str::to_owned))
            .unwrap_or_default();
        let data = match &message.data {
            serde_json::Value::String(s) => s.clone(),
            other => other.to_string(),
        };
        let mut lines = self.lines.lock_unpoisoned();
        if lines.len() == KEPT {
            lines.pop_front();
        }
        lines.push_back(LogLine {
            server: server.to_owned(),
            level,
            logger: message.logger.clone(),
            data,
            at_ms: now_ms(),
        });
    }

    /// The messages kept, oldest first.
    pub fn lines(&self) -> Vec<LogLine> {
        self.lines.lock_unpoisoned().iter().cloned().collect()
    }

    /// `inner` (a call's handler, or none: the pool-wide handler), noting
    /// each message here first.
    pub fn tee(&self, inner: Option<Arc<dyn LogHandler>>) -> Arc<dyn LogHandler> {
        Arc::new(Tee {
            logs: self.clone(),
            inner,
        })
    }
}

/// A log handler that notes each message in [`UpstreamLogs`], then passes it on.
struct Tee {
    logs: UpstreamLogs,
    inner: Option<Arc<dyn LogHandler>>,
}

impl LogHandler for Tee {
    fn log(&self, origin: RequestOrigin, message: LoggingMessageNotificationParam) {
        self.logs.note(&origin.server, &message);
        if let Some(inner) = &self.inner {
            inner.log(origin, message);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_last_messages_are_kept_and_passed_on() {
        let logs = UpstreamLogs::default();
        let seen = UpstreamLogs::default();
        let tee = logs.tee(Some(seen.tee(None)));
        for n in 0..(KEPT + 3) {
            let message = LoggingMessageNotificationParam::new(
                rmcp::model::LoggingLevel::Warning,
                serde_json::json!(format!("line {n}")),
            );
            tee.log(RequestOrigin { server: "s".into() }, message);
        }
        let lines = logs.lines();
        assert_eq!(lines.len(), KEPT);
        assert_eq!(lines.last().unwrap().data, format!("line {}", KEPT + 2));
        assert_eq!(lines[0].level, "warning");
        assert_eq!(seen.lines().len(), KEPT);
    }
}
