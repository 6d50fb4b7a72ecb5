//! The page as the client of the calls it makes: it keeps the log messages
//! a server sends during the call (shown with the result) and the call's
//! latest progress, gives no roots, refuses sampling with a sentence that
//! says why, and puts a form-mode elicitation before the person at the
//! page: the request waits in [`PageClient::state`] (which the page polls,
//! `GET /api/calls/{callId}`) until the page answers it
//! ([`PageClient::answer`], `POST /api/calls/{callId}/elicitation`), the
//! call ends, or the page goes away, which cancels the elicitation.

// Sampling, roots and logging are deprecated by SEP-2577 in rmcp 3.11, but
// 2025-11-25 servers use them.
#![allow(deprecated)]

use std::sync::{Arc, Mutex};
use toolbridge::lock::LockUnpoisoned as _;

use futures::future::BoxFuture;
use rmcp::{
    ErrorData,
    model::{
        CreateMessageRequestParams, CreateMessageResult, ElicitRequestParams, ElicitResult,
        ElicitationAction, ListRootsResult, LoggingLevel, LoggingMessageNotificationParam,
        ProgressNotificationParam,
    },
};
use serde_json::{Value, json};
use tokio::sync::oneshot;
use tokio_util::sync::CancellationToken;
use toolbridge::pool::{
    ClientFeatures, ElicitationHandler, Form, LogHandler, ProgressForward, RequestOrigin,
    RootsProvider, SamplingHandler,
};

/// At most this many log messages are kept per call (the first ones).
const MAX_LOGS: usize = 200;

/// One page call's client side.
#[derive(Default)]
pub struct PageClient {
    logs: Mutex<Vec<LoggingMessageNotificationParam>>,
    /// The server's latest progress notification for the call.
    progress: Mutex<Option<ProgressNotificationParam>>,
    /// The elicitation waiting for the page's answer, if any.
    asking: Mutex<Option<Asking>>,
    /// Numbers the elicitations of the call.
    asked: std::sync::atomic::AtomicU64,
    /// Cancelled when the call ends: an elicitation still waiting is
    /// cancelled with it.
    ended: CancellationToken,
}

/// An elicitation the page has not answered yet.
struct Asking {
    id: u64,
    /// The request as the server sent it (`message`, `requestedSchema`).
    request: Value,
    form: Form,
    answer: oneshot::Sender<ElicitResult>,
}

/// Why the page's answer to an elicitation was not taken.
#[derive(Debug, PartialEq, Eq)]
pub enum AnswerError {
    /// No elicitation with that id is waiting (answered, or the call ended).
    NotWaiting,
    /// An accepted answer leaves out these required fields.
    Missing(Vec<String>),
}

impl PageClient {
    /// The features to call with, all answered by `client`. Log messages
    /// are asked for from debug up: on 2026-07-28 servers that is this
    /// request's own level; on earlier ones the connection's level stays
    /// as it is (nothing is set for the other clients).
    pub fn features(client: &Arc<PageClient>) -> ClientFeatures {
        ClientFeatures {
            roots: Some(client.clone()),
            sampling: Some(client.clone()),
            elicitation: Some(client.clone()),
            logs: Some(client.clone()),
            log_level: Some(LoggingLevel::Debug),
            // Declared by the pool's own features (`Unrouted`).
            renders_apps: false,
            // Each page call is a client of its own.
            client: Some(ClientFeatures::new_client()),
        }
    }

    /// Where the call's progress notifications go (for
    /// [`toolbridge::pool::forward_progress`]).
    pub fn progress_forward(client: &Arc<PageClient>) -> ProgressForward {
        let client = client.clone();
        Arc::new(move |progress| *client.progress.lock_unpoisoned() = Some(progress))
    }

    /// The log messages received so far.
    pub fn logs(&self) -> Vec<LoggingMessageNotificationParam> {
        self.logs.lock_unpoisoned().clone()
    }

    /// The call's state for the page: `{"progress": {progress, total,
    /// message} | null, "elicitation": {id, message, requestedSchema} |
    /// null}`.
    pub fn state(&self) -> Value {
        let progress = self
            .progress
            .lock_unpoisoned()
            .as_ref()
            .map(|p| json!({ "progress": p.progress, "total": p.total, "message": p.message }));
        let elicitation = self.asking.lock_unpoisoned().as_ref().map(|a| {
            let mut shown = a.request.clone();
            shown["id"] = a.id.into();
            shown
        });
        json!({ "progress": progress, "elicitation": elicitation })
    }

    /// The page's answer to elicitation `id`: `action` with `content` (an
    /// object, for `accept`; the schema's defaults fill what it leaves
    /// out, as the pool does for every answer).
    pub fn answer(
        &self,
        id: u64,
        action: ElicitationAction,
        content: Option<serde_json::Map<String, Value>>,
    ) -> Result<(), AnswerError> {
        let mut asking = self.asking.lock_unpoisoned();
        if asking.as_ref().is_none_or(|a| a.id != id) {
            return Err(AnswerError::NotWaiting);
        }
        let accepted = action == ElicitationAction::Accept;
        let mut result = ElicitResult::new(action);
        if accepted {
            let content = content.unwrap_or_default();
            if let Some(form) = asking.as_ref().map(|a| &a.form) {
                let filled = form.with_defaults(Some(Value::Object(content)));
                let filled = filled.as_object().cloned().unwrap_or_default();
                let missing: Vec<String> = form
                    .missing_required(&filled)
                    .into_iter()
                    .map(str::to_owned)
                    .collect();
                if !missing.is_empty() {
                    return Err(AnswerError::Missing(missing));
                }
                result.content = Some(Value::Object(filled));
            }
        }
        if let Some(waiting) = asking.take() {
            // The call may have ended meanwhile: nobody to tell then.
            let _ = waiting.answer.send(result);
        }
        Ok(())
    }

    /// Marks the call ended: an elicitation still waiting is cancelled.
    pub fn end(&self) {
        self.ended.cancel();
    }
}

impl SamplingHandler for PageClient {
    fn create_message(
        &self,
        origin: RequestOrigin,
        _params: CreateMessageRequestParams,
    ) -> BoxFuture<'_, Result<CreateMessageResult, ErrorData>> {
        Box::pin(async move {
            Err(ErrorData::invalid_request(
                format!(
                    "server \"{}\" asked for sampling, which the settings page cannot answer; \
                     call this tool from an MCP client that supports sampling (through the gateway)",
                    origin.server
                ),
                None,
            ))
        })
    }
}

impl ElicitationHandler for PageClient {
    fn elicit(
        &self,
        origin: RequestOrigin,
        params: ElicitRequestParams,
    ) -> BoxFuture<'_, Result<ElicitResult, ErrorData>> {
        Box::pin(async move {
            let ElicitRequestParams::FormElicitationParams {
                requested_schema, ..
            } = &params
            else {
                return Err(ErrorData::invalid_request(
                    format!(
                        "server \"{}\" asked the settings page to open a link (URL-mode \
                         elicitation), which it does not do; use an MCP client that supports it",
                        origin.server
                    ),
                    None,
                ));
            };
            let (answer, answered) = oneshot::channel();
            let id = self
                .asked
                .fetch_add(1, std::sync::atomic::Ordering::Relaxed)
                + 1;
            {
                let mut asking = self.asking.lock_unpoisoned();
                if asking.is_some() {
                    return Err(ErrorData::invalid_request(
                        format!(
                            "server \"{}\" asked a second question while the page still shows \
                             its first; answer one at a time",
                            origin.server
                        ),
                        None,
                    ));
                }
                *asking = Some(Asking {
                    id,
                    request: serde_json::to_value(&params).unwrap_or_default(),
                    form: Form::from_schema(requested_schema),
                    answer,
                });
            }
            let result = tokio::select! {
                result = answered => result.ok(),
                () = self.ended.cancelled() => None,
            };
            // Not answered (the call ended, the page went away): no longer shown.
            let mut asking = self.asking.lock_unpoisoned();
            if asking.as_ref().is_some_and(|a| a.id == id) {
                *asking = None;
            }
            Ok(result.unwrap_or_else(|| ElicitResult::new(ElicitationAction::Cancel)))
        })
    }
}

impl RootsProvider for PageClient {
    fn list_roots(
        &self,
        _origin: RequestOrigin,
    ) -> BoxFuture<'_, Result<ListRootsResult, ErrorData>> {
        Box::pin(async { Ok(ListRootsResult::default()) })
    }
}

impl LogHandler for PageClient {
    fn log(&self, _origin: RequestOrigin, message: LoggingMessageNotificationParam) {
        let mut logs = self.logs.lock_unpoisoned();
        if logs.len() < MAX_LOGS {
            logs.push(message);
        }
    }
}
