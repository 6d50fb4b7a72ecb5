//! Calls of stateless (2026-07-28) clients held open while an upstream of
//! the older protocols (2025-11-25 and before) waits, mid-call, for an
//! answer only the client can give (elicitation, sampling, roots).
//!
//! The gateway cannot send a stateless client a request: each of the
//! client's requests gets one answer. So the call runs in a task of its
//! own; when the upstream asks, the client's `tools/call` is answered with
//! an `InputRequiredResult` carrying the question and a `requestState`
//! naming the held call. The client's retry brings its answers
//! (`inputResponses`) and that `requestState`: the answers go to the
//! upstream, and the retry waits for what the call does next (its result,
//! or another question).
//!
//! Bounded: at most [`MAX_HELD`] calls held at once (more are refused); a
//! call whose client does not come back within [`HOLD_TIMEOUT`] is
//! abandoned (its upstream request cancelled); a `requestState` is 32
//! random bytes, so one client cannot resume another's call. A retry whose
//! `requestState` the gateway did not make (a 2026-07-28 upstream's own)
//! goes on to the upstream as it came.

// Sampling and roots are deprecated by SEP-2577 (rmcp 3.11 warns), but the
// 2025-11-25 upstreams this is for still send them.
#![allow(deprecated)]

use std::{
    collections::HashMap,
    future::Future,
    sync::{Arc, Mutex, Weak},
    time::Duration,
};
use toolbridge::lock::LockUnpoisoned as _;

use futures::future::BoxFuture;
use rmcp::model::{
    ClientCapabilities, CreateMessageRequest, CreateMessageRequestParams, CreateMessageResult,
    ElicitRequest, ElicitRequestParams, ElicitResult, ErrorData, InputRequest, InputRequests,
    InputRequiredResult, InputResponses, ListRootsRequest, ListRootsResult,
    ProgressNotificationParam, ServerResult,
};
use serde::de::DeserializeOwned;
use tokio::sync::{mpsc, oneshot};
use toolbridge::pool::{
    ClientFeatures, ElicitationHandler, RequestOrigin, RootsProvider, SamplingHandler,
};

use crate::progress_relay::ProgressRelay;

/// At most this many calls wait for their clients at once.
pub const MAX_HELD: usize = 256;

/// How long a held call waits for its client's retry.
pub const HOLD_TIMEOUT: Duration = Duration::from_secs(300);

/// Questions an upstream asks within this long of each other go to the
/// client in one answer (a tool that asks two things at once sends two
/// requests, which arrive one after the other).
const TOGETHER: Duration = Duration::from_millis(20);

/// A question an upstream asked during a call, and where its answer goes.
struct Ask {
    request: InputRequest,
    reply: oneshot::Sender<Result<serde_json::Value, ErrorData>>,
}

/// A stateless client as the call's handlers: each question is put in the
/// call's answer to the client (see the module).
struct Asker {
    asks: mpsc::UnboundedSender<Ask>,
}

fn abandoned() -> ErrorData {
    ErrorData::internal_error(
        "the gateway's client did not come back to answer; call the tool again",
        None,
    )
}

impl Asker {
    async fn ask<T: DeserializeOwned>(
        &self,
        request: InputRequest,
        what: &str,
    ) -> Result<T, ErrorData> {
        let (reply, answer) = oneshot::channel();
        self.asks
            .send(Ask { request, reply })
            .map_err(|_| abandoned())?;
        let value = answer.await.map_err(|_| abandoned())??;
        serde_json::from_value(value).map_err(|e| {
            ErrorData::invalid_params(
                format!("the client's answer is not a valid {what} result: {e}"),
                None,
            )
        })
    }
}

impl ElicitationHandler for Asker {
    fn elicit(
        &self,
        _origin: RequestOrigin,
        params: ElicitRequestParams,
    ) -> BoxFuture<'_, Result<ElicitResult, ErrorData>> {
        Box::pin(self.ask(
            InputRequest::Elicitation(ElicitRequest::new(params)),
            "elicitation/create",
        ))
    }
}

impl SamplingHandler for Asker {
    fn create_message(
        &self,
        _origin: RequestOrigin,
        params: CreateMessageRequestParams,
    ) -> BoxFuture<'_, Result<CreateMessageResult, ErrorData>> {
        Box::pin(self.ask(
            InputRequest::CreateMessage(CreateMessageRequest::new(params)),
            "sampling/createMessage",
        ))
    }
}

impl RootsProvider for Asker {
    fn list_roots(
        &self,
        _origin: RequestOrigin,
    ) -> BoxFuture<'_, Result<ListRootsResult, ErrorData>> {
        Box::pin(self.ask(
            InputRequest::ListRoots(ListRootsRequest::default()),
            "roots/list",
        ))
    }
}

/// The stateless client of a call, as a held call sees it.
pub(crate) struct Client<'a> {
    /// What it declared in its request's `_meta`: the questions it can be
    /// asked.
    pub(crate) declared: Option<&'a ClientCapabilities>,
    /// Where the call's progress goes, when the client asked for it.
    pub(crate) progress: Option<&'a ProgressRelay>,
}

/// A stateless client's call running in its own task, with what it asked
/// and has not had answered yet. Dropping it abandons the call: its
/// upstream request is cancelled first, and only once the call has ended
/// (the pool then has its `notifications/cancelled` on the way, which the
/// answers wait for) are its questions answered, with an error. Answered
/// first, a Python `mcp` 1.x server resumes the call, and the cancellation
/// that comes while it finishes ends the server's whole session.
pub struct HeldCall {
    task: tokio::task::JoinHandle<Result<ServerResult, ErrorData>>,
    /// Hears when the task's future is gone (finished or dropped).
    ended: Option<oneshot::Receiver<()>>,
    asks: mpsc::UnboundedReceiver<Ask>,
    progress: mpsc::UnboundedReceiver<ProgressNotificationParam>,
    /// The questions asked and not answered yet, by their key in the
    /// client's `inputRequests`.
    pending: Vec<(
        String,
        oneshot::Sender<Result<serde_json::Value, ErrorData>>,
    )>,
}

impl Drop for HeldCall {
    fn drop(&mut self) {
        // A call that ended by itself has nothing left to cancel first.
        if self.task.is_finished() && self.pending.is_empty() {
            return;
        }
        self.task.abort();
        let pending = std::mem::take(&mut self.pending);
        let (Some(ended), Ok(runtime)) = (self.ended.take(), tokio::runtime::Handle::try_current())
        else {
            return;
        };
        // The questions asked and not yet taken from `asks` too: dropping
        // their replies answers them.
        let (_, asks) = mpsc::unbounded_channel();
        let asks = std::mem::replace(&mut self.asks, asks);
        runtime.spawn(async move {
            let _ = ended.await;
            drop(pending);
            drop(asks);
        });
    }
}

/// A future that drops `ended` right after `call`, however it ends.
struct Ends<F> {
    // Fields drop in order: the call (and its cancellation) first.
    call: std::pin::Pin<Box<F>>,
    _ended: oneshot::Sender<()>,
}

impl<F: Future> Future for Ends<F> {
    type Output = F::Output;
    fn poll(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<F::Output> {
        self.call.as_mut().poll(cx)
    }
}

/// What a call did next.
#[expect(
    clippy::large_enum_variant,
    reason = "returned once and taken apart at once: boxing the result would cost an allocation per call"
)]
pub enum Step {
    /// It ended.
    Done(Result<ServerResult, ErrorData>),
    /// Its upstream asked `InputRequests`; the call waits for the answers.
    Asked(HeldCall, InputRequests),
}

impl HeldCall {
    /// Starts the call `make` makes with `features`, where the
    /// elicitation, sampling and roots the client `declared` (in its
    /// request's `_meta`) become questions to the client.
    pub fn start<F>(
        mut features: ClientFeatures,
        declared: Option<&ClientCapabilities>,
        make: impl FnOnce(ClientFeatures) -> F,
    ) -> Self
    where
        F: Future<Output = Result<ServerResult, ErrorData>> + Send + 'static,
    {
        let (asks_tx, asks) = mpsc::unbounded_channel();
        let asker = Arc::new(Asker { asks: asks_tx });
        if let Some(declared) = declared {
            if declared.elicitation.is_some() {
                features.elicitation = Some(asker.clone());
            }
            if declared.sampling.is_some() {
                features.sampling = Some(asker.clone());
            }
            if declared.roots.is_some() {
                features.roots = Some(asker);
            }
        }
        let (progress_tx, progress) = mpsc::unbounded_channel();
        let forward: toolbridge::pool::ProgressForward =
            Arc::new(move |params: ProgressNotificationParam| {
                let _ = progress_tx.send(params);
            });
        let call = make(features);
        let (ended_tx, ended) = oneshot::channel();
        // Boxed: a pool request's state machine is kilobytes, copied into
        // the task's cell by value and again as it finishes.
        let task = tokio::spawn(Ends {
            call: Box::pin(toolbridge::pool::forward_progress(forward, call)),
            _ended: ended_tx,
        });
        HeldCall {
            task,
            ended: Some(ended),
            asks,
            progress,
            pending: Vec::new(),
        }
    }

    /// Waits for the call's result or its next questions, passing its
    /// progress on to the client meanwhile.
    pub(crate) async fn next(mut self, progress: Option<&ProgressRelay>) -> Step {
        loop {
            tokio::select! {
                joined = &mut self.task => {
                    return Step::Done(joined.unwrap_or_else(|e| {
                        Err(ErrorData::internal_error(format!("the call ended abruptly: {e}"), None))
                    }));
                }
                Some(ask) = self.asks.recv() => {
                    let mut requests = InputRequests::new();
                    let mut ask = Some(ask);
                    while let Some(Ask { request, reply }) = ask {
                        let key = format!("input-{}", self.pending.len() + requests.len());
                        requests.insert(key.clone(), request);
                        self.pending.push((key, reply));
                        ask = match self.asks.try_recv() {
                            Ok(next) => Some(next),
                            Err(_) => tokio::time::timeout(TOGETHER, self.asks.recv())
                                .await
                                .ok()
                                .flatten(),
                        };
                    }
                    return Step::Asked(self, requests);
                }
                Some(params) = self.progress.recv() => {
                    if let Some(progress) = progress {
                        progress.send(params).await;
                    }
                }
            }
        }
    }

    /// Gives the client's `responses` to the questions waiting for them; a
    /// question left unanswered gets an error.
    fn answer(&mut self, mut responses: InputResponses) {
        for (key, reply) in self.pending.drain(..) {
            let answer = responses.remove(&key).ok_or_else(|| {
                ErrorData::invalid_params(
                    format!("the client's retry did not answer input request {key}"),
                    None,
                )
            });
            let _ = reply.send(answer);
        }
    }
}

/// The calls waiting for their clients' answers, by `requestState`.
#[derive(Default)]
pub struct HeldCalls {
    calls: Mutex<HashMap<String, HeldCall>>,
}

impl HeldCalls {
    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, HeldCall>> {
        self.calls.lock_unpoisoned()
    }

    /// Holds `call` until its client comes back (or [`HOLD_TIMEOUT`]
    /// passes); the `requestState` that names it.
    pub fn hold(self: &Arc<Self>, call: HeldCall) -> Result<String, ErrorData> {
        let state = crate::secret_tokens::random_token().map_err(|e| {
            ErrorData::internal_error(format!("cannot make a request state: {e}"), None)
        })?;
        {
            let mut calls = self.lock();
            if calls.len() >= MAX_HELD {
                return Err(ErrorData::internal_error(
                    format!(
                        "the gateway already holds {MAX_HELD} calls waiting for their clients' \
                         answers; try again later"
                    ),
                    None,
                ));
            }
            calls.insert(state.clone(), call);
        }
        let (held, key) = (Arc::downgrade(self), state.clone());
        tokio::spawn(expire(held, key));
        Ok(state)
    }

    /// The call `state` names, with the client's `responses` taken and
    /// given to it; `None` (and `responses` left as they are, for the
    /// upstream) if the gateway holds no such call.
    pub fn resume(&self, state: &str, responses: &mut Option<InputResponses>) -> Option<HeldCall> {
        let mut call = self.lock().remove(state)?;
        call.answer(responses.take().unwrap_or_default());
        Some(call)
    }

    /// Abandons the call `state` names, if held: see [`HeldCall`]'s drop.
    pub fn abandon(&self, state: &str) {
        let call = self.lock().remove(state);
        drop(call);
    }

    /// Whether `state` names a call held here (not an upstream's own
    /// `requestState`).
    pub fn holds(&self, state: &str) -> bool {
        self.lock().contains_key(state)
    }

    /// How many calls are held now.
    pub fn len(&self) -> usize {
        self.lock().len()
    }

    /// True when no call is held.
    pub fn is_empty(&self) -> bool {
        self.lock().is_empty()
    }
}

/// Abandons the call `state` names if it is still held after
/// [`HOLD_TIMEOUT`].
async fn expire(held: Weak<HeldCalls>, state: String) {
    tokio::time::sleep(HOLD_TIMEOUT).await;
    if let Some(held) = held.upgrade() {
        let call = held.lock().remove(&state);
        if call.is_some() {
            tracing::info!("a client never came back to answer its held call; abandoning it");
        }
    }
}

/// The answer to a stateless client's request for `step`: the result, or
/// the questions with the `requestState` of the request, now held in
/// `held`.
pub fn respond(held: &Arc<HeldCalls>, step: Step) -> Result<ServerResult, ErrorData> {
    match step {
        Step::Done(result) => result,
        Step::Asked(call, requests) => {
            let state = held.hold(call)?;
            Ok(ServerResult::InputRequiredResult(InputRequiredResult::new(
                Some(requests),
                Some(state),
            )))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A held call that never ends by itself; `dropped` hears when it is
    /// abandoned (its task's future dropped).
    fn endless() -> (HeldCall, oneshot::Receiver<()>) {
        let (alive, dropped) = oneshot::channel::<()>();
        let call = HeldCall::start(ClientFeatures::default(), None, move |_| async move {
            let _alive = alive;
            std::future::pending::<()>().await;
            Err(abandoned())
        });
        (call, dropped)
    }

    #[tokio::test(start_paused = true)]
    async fn a_call_whose_client_never_comes_back_is_abandoned() {
        let held = Arc::new(HeldCalls::default());
        let (call, dropped) = endless();
        let state = held.hold(call).unwrap_or_default();
        tokio::time::sleep(HOLD_TIMEOUT - Duration::from_secs(1)).await;
        assert_eq!(held.len(), 1);
        tokio::time::sleep(Duration::from_secs(2)).await;
        assert!(held.is_empty());
        // The call's task was aborted: its future is gone.
        assert!(dropped.await.is_err());
        assert!(held.resume(&state, &mut None).is_none());
    }

    #[tokio::test]
    async fn no_more_calls_are_held_than_the_cap() {
        let held = Arc::new(HeldCalls::default());
        let mut states = std::collections::HashSet::new();
        for _ in 0..MAX_HELD {
            let state = held.hold(endless().0).unwrap_or_default();
            // 32 random bytes: nothing to guess from the others.
            assert_eq!(state.len(), 64);
            states.insert(state);
        }
        assert_eq!(states.len(), MAX_HELD);
        let refused = held.hold(endless().0);
        assert!(refused.is_err_and(|e| e.message.contains("try again later")));
    }

    #[tokio::test]
    async fn a_request_state_the_gateway_did_not_make_goes_on_untouched() {
        let held = Arc::new(HeldCalls::default());
        held.hold(endless().0).unwrap_or_default();
        let mut responses = Some(InputResponses::from([(
            "upstream-key".to_owned(),
            serde_json::json!({ "action": "accept" }),
        )]));
        assert!(
            held.resume("an upstream's own state", &mut responses)
                .is_none()
        );
        assert_eq!(responses.map(|r| r.len()), Some(1));
    }
}
