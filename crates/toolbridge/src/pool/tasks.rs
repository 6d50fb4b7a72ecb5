//! Tool calls run as tasks: created, polled, their result fetched, and
//! cancelled when the caller stops waiting.
//!
//! A tool whose `execution.taskSupport` is `"required"` (or `"optional"`,
//! with [`CallOptions::as_task`](super::CallOptions::as_task)) is called
//! with a `task` parameter. The server answers with a task instead of the
//! result; the pool then asks `tasks/get` every `pollInterval` the server
//! suggests (a `notifications/tasks/status` for the task asks at once), and
//! once the task is `completed`, `failed` or `input_required`, fetches the
//! outcome with `tasks/result` (the server's questions of an
//! `input_required` task arrive through it, to the pool's handlers, and the
//! answer waits for the final result).
//!
//! Two versions of the protocol exist: 2025-11-25's (SEP-1686, what
//! server-everything and the Python SDK 1.x serve: the task in `{"task":
//! {...}}`, the result from `tasks/result`) and the tasks extension of
//! 2026-07-28 (SEP-2663, rmcp's model: `resultType: "task"`, the result
//! inline in `tasks/get`). Both are read here, from the JSON: rmcp's
//! `GetTaskResult` has no `pollInterval` (it says `pollIntervalMs`).
//!
//! Timeouts are those of a call: [`CallOptions::timeout`](super::CallOptions::timeout)
//! bounds the whole; without it the server's `timeout` bounds each silence,
//! where any change of the task's status, status message or update time
//! counts as activity, up to [`PoolOptions::max_total_call_time`](super::PoolOptions::max_total_call_time).
//! When the bound passes, or the caller drops the call, the server is sent
//! `tasks/cancel`.

use std::{sync::Arc, time::Duration};

use rmcp::{
    RoleClient,
    model::{
        CallToolResult, ClientRequest, CustomRequest, ErrorCode, GetMeta as _, JsonObject,
        RequestMetaObject, ServerResult,
    },
    service::{Peer, PeerRequestOptions, ServiceError},
};
use serde::Deserialize;
use serde_json::{Value, json};
use tokio::time::Instant;

use super::{
    Pool, PoolError,
    connection::Connection,
    progress::{self, Limits, later},
    slot::Slot,
};

/// How long to wait between polls when the server suggests nothing.
const DEFAULT_POLL: Duration = Duration::from_millis(500);
/// The shortest wait between polls, whatever the server suggests.
const MIN_POLL: Duration = Duration::from_millis(20);

/// What a server said about a task: the fields both protocol versions share.
#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(rename_all = "camelCase")]
struct TaskState {
    task_id: String,
    status: String,
    #[serde(default)]
    status_message: Option<String>,
    #[serde(default)]
    last_updated_at: Option<String>,
    /// 2025-11-25's name.
    #[serde(default)]
    poll_interval: Option<u64>,
    /// SEP-2663's name.
    #[serde(default)]
    poll_interval_ms: Option<u64>,
    /// SEP-2663: the result of a `completed` task.
    #[serde(default)]
    result: Option<Value>,
    /// SEP-2663: the JSON-RPC error of a `failed` task.
    #[serde(default)]
    error: Option<Value>,
}

impl TaskState {
    /// The task in a `tools/call` or `tasks/get` answer: `{"task": {...}}`
    /// (2025-11-25) or the task's fields at the top (`tasks/get`, SEP-2663).
    fn from_result(result: &ServerResult) -> Option<TaskState> {
        let value = serde_json::to_value(result).ok()?;
        let task = match value.get("task") {
            Some(task) if task.is_object() => task.clone(),
            _ => value,
        };
        serde_json::from_value(task).ok()
    }

    fn poll_interval(&self) -> Duration {
        self.poll_interval
            .or(self.poll_interval_ms)
            .map_or(DEFAULT_POLL, Duration::from_millis)
            .max(MIN_POLL)
    }

    /// Whether `self` says something `before` did not: activity.
    fn moved_on_from(&self, before: &TaskState) -> bool {
        self.status != before.status
            || self.status_message != before.status_message
            || self.last_updated_at != before.last_updated_at
    }
}

/// Where a task's call stands after one answer.
enum Answer {
    /// The server ran the call at once: its result.
    Done(CallToolResult),
    /// A task to follow.
    Task(TaskState),
}

/// The `tools/call` request that asks for `tool` to run as a task, with
/// `arguments`, its `_meta` extended with `meta` (the log level, on
/// 2026-07-28).
pub(super) fn task_request(
    tool: &str,
    arguments: Option<JsonObject>,
    meta: Option<RequestMetaObject>,
) -> ClientRequest {
    let mut params = JsonObject::new();
    params.insert("name".to_owned(), tool.into());
    if let Some(arguments) = arguments {
        params.insert("arguments".to_owned(), Value::Object(arguments));
    }
    params.insert("task".to_owned(), json!({}));
    let mut request = CustomRequest::new("tools/call", Some(Value::Object(params)));
    if let Some(meta) = meta {
        request.get_meta_mut().extend(meta);
    }
    ClientRequest::CustomRequest(request)
}

impl Pool {
    /// Calls `tool` as a task on `conn` (see the module docs), with
    /// `create`, from [`task_request`]. `timeout` is the caller's bound, for
    /// the error.
    pub(super) async fn call_as_task(
        &self,
        slot: &Arc<Slot>,
        conn: &Arc<Connection>,
        tool: &str,
        create: ClientRequest,
        limits: Limits,
        timeout: Option<Duration>,
    ) -> Result<CallToolResult, PoolError> {
        let started = Instant::now();
        let total = later(started, limits.total);
        let mut idle = later(started, limits.idle).min(total);
        // Before the task exists, so that no notification is missed.
        let mut events = slot.task_events.subscribe();
        let call = Call {
            pool: self,
            slot,
            conn,
            tool,
            timeout,
            limits,
        };
        let mut state = match call.answer(call.send(create, None, idle, total).await?)? {
            Answer::Done(result) if result.is_error == Some(true) => {
                let refused = Ok(ServerResult::CallToolResult(result));
                return self.call_failed(slot, conn, tool, timeout, refused).await;
            }
            Answer::Done(result) => return Ok(result),
            Answer::Task(state) => state,
        };
        tracing::debug!(task = %state.task_id, status = %state.status, "task created");
        let mut guard = CancelOnDrop {
            peer: conn.peer.clone(),
            task_id: Some(state.task_id.clone()),
        };
        let outcome = loop {
            match state.status.as_str() {
                "completed" | "failed" | "input_required" => {
                    break call.outcome(&state, idle, total).await;
                }
                "cancelled" => {
                    break Err(
                        call.task_error(&state, "the server cancelled it; call the tool again")
                    );
                }
                _ => {}
            }
            let now = Instant::now();
            if now >= idle || now >= total {
                break Err(call.timed_out(now >= total));
            }
            let wake = (now + state.poll_interval()).min(idle).min(total);
            let woken = tokio::select! {
                () = tokio::time::sleep_until(wake) => false,
                () = notified(&mut events, &state.task_id) => true,
            };
            let now = Instant::now();
            if woken {
                idle = later(now, limits.idle).min(total);
            } else if now >= idle || now >= total {
                break Err(call.timed_out(now >= total));
            }
            let get = ClientRequest::CustomRequest(CustomRequest::new(
                "tasks/get",
                Some(json!({ "taskId": state.task_id })),
            ));
            let next = match call.send(get, None, idle, total).await {
                Ok(result) => TaskState::from_result(&result).ok_or_else(|| PoolError::Protocol {
                    server: slot.spec.name.clone(),
                    message: format!(
                        "expected a task from tasks/get for task {}, got {}",
                        state.task_id,
                        super::error::result_kind(&result)
                    ),
                }),
                Err(e) => Err(e),
            };
            match next {
                Ok(next) => {
                    if next.moved_on_from(&state) {
                        idle = later(Instant::now(), limits.idle).min(total);
                    }
                    state = next;
                }
                Err(e) => break Err(e),
            }
        };
        match &outcome {
            // Timed out: cancelled now, on the way out. Ended or closed:
            // nothing left to cancel.
            Err(PoolError::Timeout { .. }) => {}
            _ => guard.task_id = None,
        }
        match outcome {
            // Refused: as a plain call's refusal is (an unknown tool, say).
            Ok(result) if result.is_error == Some(true) => {
                let refused = Ok(ServerResult::CallToolResult(result));
                self.call_failed(slot, conn, tool, timeout, refused).await
            }
            other => other,
        }
    }
}

/// One task's call: what its requests and errors need.
struct Call<'a> {
    pool: &'a Pool,
    slot: &'a Arc<Slot>,
    conn: &'a Arc<Connection>,
    tool: &'a str,
    /// The caller's bound, for the error.
    timeout: Option<Duration>,
    limits: Limits,
}

impl Call<'_> {
    /// Sends `request`, its `_meta` extended with `meta`, and waits for its
    /// answer until `idle` or `total`.
    async fn send(
        &self,
        request: ClientRequest,
        meta: Option<RequestMetaObject>,
        idle: Instant,
        total: Instant,
    ) -> Result<ServerResult, PoolError> {
        let now = Instant::now();
        let limits = Limits {
            idle: idle.saturating_duration_since(now),
            total: total.saturating_duration_since(now),
        };
        let mut options = PeerRequestOptions::no_options();
        options.meta = meta;
        let response = match self
            .conn
            .peer
            .send_request_with_option(request, options)
            .await
        {
            Ok(handle) => progress::await_response(handle, &self.conn.progress, limits).await,
            Err(e) => Err(e),
        };
        response.map_err(|e| match e {
            ServiceError::Timeout { .. } => self.timed_out(Instant::now() >= total),
            e => self
                .pool
                .service_error(self.slot, self.conn, Some(self.tool), e),
        })
    }

    /// What the answer to the task-creating `tools/call` was.
    fn answer(&self, result: ServerResult) -> Result<Answer, PoolError> {
        if let ServerResult::CallToolResult(result) = result {
            return Ok(Answer::Done(result));
        }
        TaskState::from_result(&result)
            .map(Answer::Task)
            .ok_or_else(|| PoolError::Protocol {
                server: self.slot.spec.name.clone(),
                message: format!(
                    "expected a task or a tools/call result for tool \"{}\", got {}",
                    self.tool,
                    super::error::result_kind(&result)
                ),
            })
    }

    /// The result of a task that ended (or needs input): inline (SEP-2663),
    /// else from `tasks/result`.
    async fn outcome(
        &self,
        state: &TaskState,
        idle: Instant,
        total: Instant,
    ) -> Result<CallToolResult, PoolError> {
        if let Some(result) = &state.result {
            return serde_json::from_value(result.clone()).map_err(|e| PoolError::Protocol {
                server: self.slot.spec.name.clone(),
                message: format!(
                    "the result of task {} is not a tools/call result: {e}",
                    state.task_id
                ),
            });
        }
        if let Some(error) = &state.error {
            let code = error.get("code").and_then(Value::as_i64).unwrap_or(0);
            let message = error
                .get("message")
                .and_then(Value::as_str)
                .unwrap_or("no message");
            return Err(PoolError::Server {
                server: self.slot.spec.name.clone(),
                tool: Some(self.tool.to_owned()),
                code: i32::try_from(code).unwrap_or(ErrorCode::INTERNAL_ERROR.0),
                message: message.to_owned(),
                data: error.get("data").cloned().map(Box::new),
            });
        }
        if state.status == "input_required" && state.result.is_none() && state.error.is_none() {
            // SEP-2663 asks for `tasks/update`, 2025-11-25 for `tasks/result`;
            // only the latter delivers the questions through this session.
            tracing::debug!(task = %state.task_id, "task needs input; asking tasks/result");
        }
        let fetch = ClientRequest::CustomRequest(CustomRequest::new(
            "tasks/result",
            Some(json!({ "taskId": state.task_id })),
        ));
        match self.send(fetch, None, idle, total).await? {
            ServerResult::CallToolResult(result) => Ok(result),
            other => Err(PoolError::Protocol {
                server: self.slot.spec.name.clone(),
                message: format!(
                    "expected a tools/call result from tasks/result for task {}, got {}",
                    state.task_id,
                    super::error::result_kind(&other)
                ),
            }),
        }
    }

    /// The error for a task the server ended without a result.
    fn task_error(&self, state: &TaskState, what: &str) -> PoolError {
        let said = state
            .status_message
            .as_deref()
            .map(|m| format!(" (it said: {m})"))
            .unwrap_or_default();
        PoolError::Task {
            server: self.slot.spec.name.clone(),
            tool: self.tool.to_owned(),
            task_id: state.task_id.clone(),
            message: format!("{what}{said}"),
        }
    }

    /// The error when a bound passed: the caller's, else the one that did.
    fn timed_out(&self, total: bool) -> PoolError {
        let after = match (self.timeout, total) {
            (Some(limit), _) => limit,
            (None, true) => self.limits.total,
            (None, false) => self.limits.idle,
        };
        PoolError::Timeout {
            server: self.slot.spec.name.clone(),
            tool: Some(self.tool.to_owned()),
            after,
        }
    }
}

/// Returns when a status notification for `task_id` arrives (or some were
/// missed, which may have been one); never when the feed is closed.
async fn notified(events: &mut tokio::sync::broadcast::Receiver<String>, task_id: &str) {
    use tokio::sync::broadcast::error::RecvError;
    loop {
        match events.recv().await {
            Ok(id) if id == task_id => return,
            Ok(_) => {}
            Err(RecvError::Lagged(_)) => return,
            Err(RecvError::Closed) => std::future::pending().await,
        }
    }
}

/// Sends `tasks/cancel` for the task when dropped while it has one: the
/// call timed out, or its caller gave up.
struct CancelOnDrop {
    peer: Peer<RoleClient>,
    task_id: Option<String>,
}

impl Drop for CancelOnDrop {
    fn drop(&mut self) {
        let Some(task_id) = self.task_id.take() else {
            return;
        };
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            return;
        };
        let peer = self.peer.clone();
        runtime.spawn(async move {
            tracing::debug!(task = %task_id, "cancelling the task");
            let cancel = ClientRequest::CustomRequest(CustomRequest::new(
                "tasks/cancel",
                Some(json!({ "taskId": task_id })),
            ));
            // The answer is not waited for long: the call is over.
            let sent = peer
                .send_request_with_option(cancel, PeerRequestOptions::no_options())
                .await;
            if let Ok(handle) = sent {
                let _ = tokio::time::timeout(Duration::from_secs(5), handle.await_response()).await;
            }
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(value: Value) -> ServerResult {
        serde_json::from_value(value).unwrap_or_else(|e| panic!("not a result: {e}"))
    }

    #[test]
    fn a_2025_task_is_read_from_its_task_object() {
        let created = parse(json!({"task": {
            "taskId": "t1", "status": "working", "createdAt": "2026-01-01T00:00:00Z",
            "lastUpdatedAt": "2026-01-01T00:00:00Z", "ttl": 300000, "pollInterval": 1000}}));
        let state = TaskState::from_result(&created);
        assert_eq!(state.as_ref().map(|s| s.task_id.as_str()), Some("t1"));
        assert_eq!(
            state.map(|s| s.poll_interval()),
            Some(Duration::from_secs(1))
        );
    }

    #[test]
    fn a_2025_tasks_get_answer_is_read_whatever_rmcp_made_of_it() {
        // rmcp reads a working task as its SEP-2663 GetTaskResult, which
        // drops `pollInterval`; a completed one (no inline result) as a
        // custom result.
        for status in ["working", "completed", "input_required"] {
            let got = parse(json!({
                "taskId": "t2", "status": status, "statusMessage": "Analyzing content...",
                "createdAt": "a", "lastUpdatedAt": "b", "ttl": 1000, "pollInterval": 250}));
            let state = TaskState::from_result(&got);
            assert_eq!(state.as_ref().map(|s| s.status.as_str()), Some(status));
            assert_eq!(
                state.and_then(|s| s.status_message),
                Some("Analyzing content...".to_owned())
            );
        }
    }

    #[test]
    fn a_sep_2663_task_carries_its_result() {
        let got = parse(json!({
            "resultType": "complete", "taskId": "t3", "status": "completed",
            "createdAt": "a", "lastUpdatedAt": "b", "ttlMs": null, "pollIntervalMs": 40,
            "result": {"content": [{"type": "text", "text": "done"}]}}));
        let state = TaskState::from_result(&got);
        assert_eq!(
            state.as_ref().map(|s| s.poll_interval()),
            Some(Duration::from_millis(40))
        );
        assert!(state.and_then(|s| s.result).is_some());
    }

    #[test]
    fn a_change_of_status_message_or_update_time_is_activity() {
        let base = TaskState {
            task_id: "t".into(),
            status: "working".into(),
            status_message: Some("Gathering sources...".into()),
            last_updated_at: Some("1".into()),
            poll_interval: None,
            poll_interval_ms: None,
            result: None,
            error: None,
        };
        assert!(!base.clone().moved_on_from(&base));
        let said_more = TaskState {
            status_message: Some("Analyzing content...".into()),
            ..base.clone()
        };
        assert!(said_more.moved_on_from(&base));
        let touched = TaskState {
            last_updated_at: Some("2".into()),
            ..base.clone()
        };
        assert!(touched.moved_on_from(&base));
    }
}
