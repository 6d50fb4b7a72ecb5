//! What the gateway is doing, for the settings page's Activity view: the
//! tool calls in flight with the latest progress their server reported,
//! and the last calls that ended, with their outcome and duration (what
//! each call's [`crate::audit`] line says, kept in memory).
//!
//! Memory is bounded: a call in flight is held while it runs (the gateway's
//! limits bound how many run), and at most [`RECENT`] ended calls are kept.
//! Arguments and results are never kept.
//!
//! Progress is noted only while someone watches (the page asked for the
//! activity in the last [`WATCH`]): noting it wraps the call in the pool's
//! progress forward, a registration per call that calls do not otherwise
//! pay when their client asks for no progress.

use std::{
    collections::{BTreeMap, VecDeque},
    sync::{Arc, Mutex},
    time::Duration,
};

use rmcp::model::ProgressNotificationParam;
use serde::Serialize;
use toolbridge::{lock::LockUnpoisoned as _, pool::ProgressForward};

use crate::{audit::Outcome, connected_clients::now_ms};

/// The most ended calls kept.
pub const RECENT: usize = 100;

/// How long after the page last asked for the activity progress is noted.
pub const WATCH: std::time::Duration = std::time::Duration::from_secs(30);

/// A call in flight.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RunningCall {
    /// This call's id in the activity (not the client's request id).
    pub id: u64,
    /// The upstream server.
    pub server: String,
    /// The tool, as the server names it.
    pub tool: String,
    /// The client that made it (its name, or `local`).
    pub client: String,
    /// When it started, in ms since the Unix epoch.
    pub started_ms: u64,
    /// The server's latest progress, if it sent any.
    pub progress: Option<f64>,
    /// The total the server gave with it, if any.
    pub total: Option<f64>,
    /// The server's progress message, if any.
    pub message: Option<String>,
}

/// A call that ended.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct EndedCall {
    /// The upstream server.
    pub server: String,
    /// The tool.
    pub tool: String,
    /// The client that made it.
    pub client: String,
    /// When it started, in ms since the Unix epoch.
    pub started_ms: u64,
    /// How long it took, in ms.
    pub duration_ms: f64,
    /// `ok`, `tool_error`, `failed` or `cancelled`, as the audit line says.
    pub outcome: &'static str,
}

/// The calls in flight and the last ones ended. Cheap to clone.
#[derive(Debug, Clone, Default)]
pub struct Activity {
    state: Arc<Mutex<State>>,
    /// Until when (ms since the Unix epoch) progress is noted.
    watched_until: Arc<std::sync::atomic::AtomicU64>,
}

#[derive(Debug, Default)]
struct State {
    next: u64,
    running: BTreeMap<u64, RunningCall>,
    ended: VecDeque<EndedCall>,
}

/// What the page shows: the calls in flight, oldest first, and the ended
/// ones, latest first.
#[derive(Debug, Clone, Serialize)]
pub struct Snapshot {
    /// In flight.
    pub running: Vec<RunningCall>,
    /// Ended.
    pub recent: Vec<EndedCall>,
}

impl Activity {
    /// A call of `tool` on `server` by `client` starts; its id.
    pub fn start(&self, server: &str, tool: &str, client: &str) -> u64 {
        let mut state = self.state.lock_unpoisoned();
        state.next += 1;
        let id = state.next;
        state.running.insert(
            id,
            RunningCall {
                id,
                server: server.to_owned(),
                tool: tool.to_owned(),
                client: client.to_owned(),
                started_ms: now_ms(),
                progress: None,
                total: None,
                message: None,
            },
        );
        id
    }

    /// Call `id`'s server reported `params`.
    pub fn progress(&self, id: u64, params: &ProgressNotificationParam) {
        if let Some(call) = self.state.lock_unpoisoned().running.get_mut(&id) {
            call.progress = Some(params.progress);
            call.total = params.total;
            call.message.clone_from(&params.message);
        }
    }

    /// A forward that notes call `id`'s progress, for
    /// [`toolbridge::pool::forward_progress`]; `None` while nobody watches.
    pub fn tap(&self, id: u64) -> Option<ProgressForward> {
        let until = self
            .watched_until
            .load(std::sync::atomic::Ordering::Relaxed);
        (now_ms() < until).then(|| self.tap_always(id))
    }

    fn tap_always(&self, id: u64) -> ProgressForward {
        let activity = self.clone();
        Arc::new(move |params: ProgressNotificationParam| activity.progress(id, &params))
    }

    /// Call `id` ended with `outcome` after `took`.
    pub fn finish(&self, id: u64, outcome: Outcome, took: Duration) {
        let mut state = self.state.lock_unpoisoned();
        let Some(call) = state.running.remove(&id) else {
            return;
        };
        if state.ended.len() == RECENT {
            state.ended.pop_back();
        }
        state.ended.push_front(EndedCall {
            server: call.server,
            tool: call.tool,
            client: call.client,
            started_ms: call.started_ms,
            duration_ms: took.as_secs_f64() * 1000.0,
            outcome: outcome.as_str(),
        });
    }

    /// The calls in flight and the last ended; progress is noted for the
    /// next [`WATCH`].
    pub fn snapshot(&self) -> Snapshot {
        let until = now_ms() + WATCH.as_millis() as u64;
        self.watched_until
            .store(until, std::sync::atomic::Ordering::Relaxed);
        let state = self.state.lock_unpoisoned();
        Snapshot {
            running: state.running.values().cloned().collect(),
            recent: state.ended.iter().cloned().collect(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_call_shows_its_progress_then_ends_in_the_recent_calls() {
        let activity = Activity::default();
        let id = activity.start("example", "slow", "local");
        let mut params = ProgressNotificationParam::new(
            rmcp::model::ProgressToken(rmcp::model::NumberOrString::Number(1)),
            300.0,
        );
        params.total = Some(1000.0);
        assert!(activity.tap(id).is_none(), "nobody watches yet");
        activity.snapshot();
        activity.tap(id).expect("watched")(params);
        let shown = activity.snapshot();
        assert_eq!(shown.running.len(), 1);
        assert_eq!(shown.running[0].progress, Some(300.0));
        assert_eq!(shown.running[0].total, Some(1000.0));
        activity.finish(id, Outcome::Ok, Duration::from_millis(1200));
        let shown = activity.snapshot();
        assert!(shown.running.is_empty());
        assert_eq!(shown.recent[0].outcome, "ok");
        assert_eq!(shown.recent[0].duration_ms, 1200.0);
    }

    #[test]
    fn at_most_the_last_hundred_ended_calls_are_kept_latest_first() {
        let activity = Activity::default();
        for n in 0..(RECENT + 20) {
            let id = activity.start("s", &format!("t{n}"), "local");
            activity.finish(id, Outcome::Failed, Duration::ZERO);
        }
        let recent = activity.snapshot().recent;
        assert_eq!(recent.len(), RECENT);
        assert_eq!(recent[0].tool, format!("t{}", RECENT + 19));
    }
}
