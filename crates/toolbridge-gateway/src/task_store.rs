//! [`Tasks`]: the gateway's own tasks (see `gateway_tasks`, which starts
//! them from `tools/call`s), by id: each one's state, its run and its
//! resumes with the client's answers, `tasks/get`, `tasks/update` and
//! `tasks/cancel`, the bounds (at most [`MAX_PER_CLIENT`] per client, each
//! forgotten [`TTL`] after its last change) and the owner check. Apart from
//! `gateway_tasks` so that the gateway, which holds the store, does not
//! depend on the calls that use the gateway.

use std::{
    collections::HashMap,
    sync::{Arc, Mutex, Weak},
    time::Duration,
};

use futures::future::BoxFuture;
use rmcp::model::{
    CallToolResponse, CreateTaskResult, DetailedTask, ErrorData, GetTaskResult, InputRequests,
    InputResponses, JsonObject, Task, TaskPayload, TaskStatus,
};
use tokio::{sync::oneshot, time::Instant};
use tokio_util::sync::CancellationToken;
use toolbridge::lock::LockUnpoisoned as _;

use crate::{held_calls::HeldCalls, request_errors::cancelled};

/// A call that ends within this long is answered as a plain call; a longer
/// one becomes a task.
pub const SYNC_WINDOW: Duration = Duration::from_millis(250);

/// The poll interval the gateway suggests (`pollIntervalMs`).
pub const POLL_INTERVAL: Duration = Duration::from_millis(500);

/// How long a task is kept after its last change (`ttlMs`): an ended
/// task's result, or a task waiting for answers.
pub const TTL: Duration = Duration::from_secs(300);

/// At most this many tasks per client at once.
pub const MAX_PER_CLIENT: usize = 64;

/// What one run of a task's call gives.
type Outcome = Result<CallToolResponse, ErrorData>;

/// One run of a task's call: the first, or a resume with the client's
/// answers (`inputResponses`) and the `requestState` they answer.
pub(crate) type Run = Arc<
    dyn Fn(Option<InputResponses>, Option<String>, CancellationToken) -> BoxFuture<'static, Outcome>
        + Send
        + Sync,
>;

/// The gateway's tasks, by id.
#[derive(Default)]
pub struct Tasks {
    entries: Mutex<HashMap<String, Entry>>,
    /// Each owner as one client of the pool (`ClientFeatures::client`):
    /// one stateless client's tasks are its calls, whichever request
    /// started them, so an upstream's question during one of them is not
    /// taken for a late one of another client's.
    clients: Mutex<HashMap<String, u64>>,
}

/// One task.
struct Entry {
    /// The client and view that made it: no one else finds it.
    owner: String,
    created_at: String,
    updated_at: String,
    /// When it is forgotten, once it ended or waits for answers.
    expires: Instant,
    state: State,
    /// How its call runs (again, with answers).
    run: Run,
    /// Where its call waits while it waits for answers
    /// ([`crate::held_calls`]), let go of when it is cancelled or expires.
    held: Weak<HeldCalls>,
    /// Cancels its call (`tasks/cancel`, or its expiry).
    ct: CancellationToken,
    /// The `tools/call` still waiting, within [`SYNC_WINDOW`], for the
    /// first outcome: while set, the task is not yet the client's.
    waiter: Option<oneshot::Sender<First>>,
    /// Which run is current: the outcome of a cancelled run is not kept.
    run_id: u64,
}

/// Where a task stands.
enum State {
    Working,
    /// The upstream asked the client something: the questions not yet
    /// answered, the answers so far, and the `requestState` a resume brings.
    InputRequired {
        requests: InputRequests,
        answers: InputResponses,
        request_state: Option<String>,
    },
    Completed(JsonObject),
    Failed(JsonObject),
    Cancelled,
}

impl State {
    fn status(&self) -> TaskStatus {
        match self {
            State::Working => TaskStatus::Working,
            State::InputRequired { .. } => TaskStatus::InputRequired,
            State::Completed(_) => TaskStatus::Completed,
            State::Failed(_) => TaskStatus::Failed,
            State::Cancelled => TaskStatus::Cancelled,
        }
    }
}

/// What the waiting `tools/call` gets: the call's outcome when it ended
/// within the window (answered as a plain call's), `None` when it asked the
/// client something (answered as a task).
type First = Option<Outcome>;

impl Tasks {
    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Entry>> {
        self.entries.lock_unpoisoned()
    }

    /// The pool's client id of `owner`'s task calls.
    pub(crate) fn client_of(&self, owner: &str) -> u64 {
        *self
            .clients
            .lock_unpoisoned()
            .entry(owner.to_owned())
            .or_insert_with(toolbridge::pool::ClientFeatures::new_client)
    }

    /// Starts `run` as a task of `owner` and waits up to [`SYNC_WINDOW`]
    /// for it: its outcome if it ended, else the task.
    pub(crate) async fn start(
        self: &Arc<Self>,
        owner: String,
        run: Run,
        held: Weak<HeldCalls>,
        request_ct: &CancellationToken,
    ) -> Result<CallToolResponse, ErrorData> {
        let now = timestamp();
        let ct = CancellationToken::new();
        let (waiter, first) = oneshot::channel();
        let id = {
            let mut entries = self.lock();
            forget_expired(&mut entries);
            let full = entries.values().filter(|e| e.owner == owner).count() >= MAX_PER_CLIENT;
            let id = crate::secret_tokens::random_token().ok().filter(|_| !full);
            if let Some(id) = &id {
                entries.insert(
                    id.clone(),
                    Entry {
                        owner,
                        created_at: now.clone(),
                        updated_at: now,
                        expires: Instant::now() + TTL,
                        state: State::Working,
                        run: run.clone(),
                        held,
                        ct: ct.clone(),
                        waiter: Some(waiter),
                        run_id: 0,
                    },
                );
            }
            id
        };
        let Some(id) = id else {
            // No room for another task of this client: a plain call.
            return run(None, None, request_ct.child_token()).await;
        };
        tokio::spawn(drive(
            Arc::downgrade(self),
            id.clone(),
            0,
            run,
            None,
            None,
            ct,
        ));
        let mut first = first;
        let waited = tokio::select! {
            waited = tokio::time::timeout(SYNC_WINDOW, &mut first) => waited,
            () = request_ct.cancelled() => {
                if let Some(entry) = self.lock().remove(&id) {
                    entry.ct.cancel();
                }
                return Err(cancelled());
            }
        };
        match waited {
            Ok(Ok(Some(outcome))) => return outcome,
            Ok(Ok(None)) => return self.created(&id),
            Ok(Err(_)) | Err(_) => {}
        }
        // The window passed: the task is the client's from now on, unless
        // its call ended just now.
        {
            let mut entries = self.lock();
            if let Some(entry) = entries.get_mut(&id)
                && entry.waiter.take().is_some()
            {
                drop(entries);
                return self.created(&id);
            }
        }
        match first.try_recv() {
            Ok(Some(outcome)) => outcome,
            Ok(None) | Err(_) => self.created(&id),
        }
    }

    /// The `CreateTaskResult` of task `id`.
    fn created(&self, id: &str) -> Result<CallToolResponse, ErrorData> {
        let entries = self.lock();
        let entry = entries.get(id).ok_or_else(|| not_found(id))?;
        Ok(CallToolResponse::Task(CreateTaskResult::new(task(
            id, entry,
        ))))
    }

    /// `tasks/get` of `owner`: task `id` as it stands.
    pub(crate) fn get(&self, owner: &str, id: &str) -> Result<GetTaskResult, ErrorData> {
        let mut entries = self.lock();
        forget_expired(&mut entries);
        let entry = visible(&entries, owner, id)?;
        let payload = match &entry.state {
            State::Working => TaskPayload::Working,
            State::InputRequired { requests, .. } => TaskPayload::InputRequired {
                input_requests: requests.clone(),
            },
            State::Completed(result) => TaskPayload::Completed {
                result: result.clone(),
            },
            State::Failed(error) => TaskPayload::Failed {
                error: error.clone(),
            },
            State::Cancelled => TaskPayload::Cancelled,
        };
        Ok(GetTaskResult::new(DetailedTask::new(
            task(id, entry),
            payload,
        )))
    }

    /// `tasks/cancel` of `owner`: task `id`'s call cancelled, the task
    /// `cancelled` from now on. A task that already ended stays as it
    /// ended.
    pub(crate) fn cancel(&self, owner: &str, id: &str) -> Result<(), ErrorData> {
        let mut entries = self.lock();
        forget_expired(&mut entries);
        visible(&entries, owner, id)?;
        if let Some(entry) = entries.get_mut(id)
            && !entry.state.status().is_terminal()
        {
            entry.ct.cancel();
            entry.run_id += 1;
            let was = std::mem::replace(&mut entry.state, State::Cancelled);
            let_go(&entry.held, was);
            touch(entry);
        }
        Ok(())
    }

    /// `tasks/update` of `owner`: `responses` to task `id`'s questions.
    /// Once every question is answered, the call resumes with the answers.
    /// A response to no outstanding question (or to a task that waits for
    /// none) is acknowledged and left aside: what the task asks is in
    /// `tasks/get`.
    pub(crate) fn update(
        self: &Arc<Self>,
        owner: &str,
        id: &str,
        responses: InputResponses,
    ) -> Result<(), ErrorData> {
        let mut entries = self.lock();
        forget_expired(&mut entries);
        visible(&entries, owner, id)?;
        let Some(entry) = entries.get_mut(id) else {
            return Err(not_found(id));
        };
        let State::InputRequired {
            requests,
            answers,
            request_state,
        } = &mut entry.state
        else {
            tracing::debug!(task = id, "tasks/update of a task that waits for no input");
            return Ok(());
        };
        for (key, response) in responses {
            if requests.remove(&key).is_some() {
                answers.insert(key, response);
            } else {
                tracing::debug!(
                    task = id,
                    key,
                    "tasks/update answers no outstanding request"
                );
            }
        }
        if requests.is_empty() {
            let (answers, request_state) = (std::mem::take(answers), request_state.take());
            entry.state = State::Working;
            entry.run_id += 1;
            let (run, ct, run_id) = (entry.run.clone(), entry.ct.clone(), entry.run_id);
            tokio::spawn(drive(
                Arc::downgrade(self),
                id.to_owned(),
                run_id,
                run,
                Some(answers),
                request_state,
                ct,
            ));
        }
        touch(entry);
        Ok(())
    }

    /// Keeps `outcome`, the end of run `run_id` of task `id`.
    fn finish(&self, id: &str, run_id: u64, outcome: Outcome) {
        let mut entries = self.lock();
        let Some(entry) = entries.get_mut(id) else {
            return;
        };
        if entry.run_id != run_id || entry.ct.is_cancelled() {
            return;
        }
        let outcome = match outcome {
            // An upstream's own input-required round (2026-07-28) within
            // the window: nothing runs while the client answers, so it goes
            // back as it came, and the client's retry is a call of its own
            // (a task if it takes long: MRTR, then a task).
            Ok(CallToolResponse::InputRequired(asked))
                if entry.waiter.is_some() && !parks(&entry.held, &asked) =>
            {
                Ok(CallToolResponse::InputRequired(asked))
            }
            Ok(CallToolResponse::InputRequired(asked)) => {
                entry.state = State::InputRequired {
                    requests: asked.input_requests.unwrap_or_default(),
                    answers: InputResponses::new(),
                    request_state: asked.request_state,
                };
                touch(entry);
                if let Some(waiter) = entry.waiter.take() {
                    let _ = waiter.send(None);
                }
                return;
            }
            other => other,
        };
        if let Some(waiter) = entry.waiter.take() {
            // Within the window: a plain answer, and no task.
            entries.remove(id);
            let _ = waiter.send(Some(outcome));
            return;
        }
        entry.state = match outcome {
            Ok(CallToolResponse::Complete(result)) => State::Completed(as_object(&result)),
            Ok(_) => State::Failed(as_object(&ErrorData::internal_error(
                "the upstream answered the call with a task of its own the gateway does not follow",
                None,
            ))),
            Err(error) => State::Failed(as_object(&error)),
        };
        touch(entry);
    }

    /// How many tasks the gateway keeps now.
    pub fn len(&self) -> usize {
        self.lock().len()
    }

    /// True when the gateway keeps no task.
    pub fn is_empty(&self) -> bool {
        self.lock().is_empty()
    }
}

/// Runs task `id`'s call (run `run_id`) and keeps its outcome.
async fn drive(
    tasks: Weak<Tasks>,
    id: String,
    run_id: u64,
    run: Run,
    answers: Option<InputResponses>,
    request_state: Option<String>,
    ct: CancellationToken,
) {
    let outcome = tokio::select! {
        outcome = run(answers, request_state, ct.clone()) => outcome,
        () = ct.cancelled() => return,
    };
    if let Some(tasks) = tasks.upgrade() {
        tasks.finish(&id, run_id, outcome);
    }
}

/// Task `id` when `owner` may see it: the same error as for a task there
/// is not, otherwise.
fn visible<'a>(
    entries: &'a HashMap<String, Entry>,
    owner: &str,
    id: &str,
) -> Result<&'a Entry, ErrorData> {
    entries
        .get(id)
        .filter(|e| e.owner == owner && e.waiter.is_none())
        .ok_or_else(|| not_found(id))
}

fn not_found(id: &str) -> ErrorData {
    ErrorData::invalid_params(
        format!("the gateway has no task {id:?} of this client; it may have expired"),
        None,
    )
}

/// Forgets the tasks past their TTL that ended or wait for answers (their
/// call cancelled); a task still working is kept.
fn forget_expired(entries: &mut HashMap<String, Entry>) {
    let now = Instant::now();
    entries.retain(|_, e| {
        let keep = e.expires > now || matches!(e.state, State::Working);
        if !keep {
            e.ct.cancel();
            let_go(&e.held, std::mem::replace(&mut e.state, State::Cancelled));
        }
        keep
    });
}

/// Whether the input-required round `asked` is a call the gateway holds
/// (an upstream that asked mid-call), which the task then waits in.
fn parks(held: &Weak<HeldCalls>, asked: &rmcp::model::InputRequiredResult) -> bool {
    let state = asked.request_state.as_deref();
    state.is_some_and(|state| held.upgrade().is_some_and(|held| held.holds(state)))
}

/// Lets go of the call of a task that was in state `was`, if it waited
/// for answers.
fn let_go(held: &Weak<HeldCalls>, was: State) {
    if let State::InputRequired {
        request_state: Some(request_state),
        ..
    } = was
        && let Some(held) = held.upgrade()
    {
        // Its upstream call is cancelled, then its questions answered (see
        // `HeldCall`).
        held.abandon(&request_state);
    }
}

/// The task's base fields.
fn task(id: &str, entry: &Entry) -> Task {
    Task::new(
        id,
        entry.state.status(),
        &entry.created_at,
        &entry.updated_at,
    )
    .with_ttl_ms(u64::try_from(TTL.as_millis()).unwrap_or(u64::MAX))
    .with_poll_interval_ms(u64::try_from(POLL_INTERVAL.as_millis()).unwrap_or(u64::MAX))
}

fn touch(entry: &mut Entry) {
    entry.updated_at = timestamp();
    entry.expires = Instant::now() + TTL;
}

fn timestamp() -> String {
    chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
}

/// `value` as a JSON object (a result, an error).
fn as_object(value: &impl serde::Serialize) -> JsonObject {
    match serde_json::to_value(value) {
        Ok(serde_json::Value::Object(object)) => object,
        _ => JsonObject::new(),
    }
}

#[cfg(test)]
mod tests {
    use rmcp::model::CallToolResult;

    use super::*;

    /// A run that ends when `go` is notified.
    fn waiting(go: Arc<tokio::sync::Notify>) -> Run {
        Arc::new(move |_, _, _| {
            let go = go.clone();
            Box::pin(async move {
                go.notified().await;
                Ok(CallToolResponse::Complete(CallToolResult::success(vec![])))
            })
        })
    }

    fn no_held() -> Weak<HeldCalls> {
        Weak::new()
    }

    fn task_id(answer: Result<CallToolResponse, ErrorData>) -> String {
        match answer {
            Ok(CallToolResponse::Task(created)) => created.task.task_id,
            other => panic!("not a task: {other:?}"),
        }
    }

    #[tokio::test(start_paused = true)]
    async fn a_task_is_its_owners_alone_and_forgotten_a_ttl_after_it_ended() {
        let tasks = Arc::new(Tasks::default());
        let go = Arc::new(tokio::sync::Notify::new());
        let ct = CancellationToken::new();
        let id = task_id(
            tasks
                .start("alice".into(), waiting(go.clone()), no_held(), &ct)
                .await,
        );
        let working = tasks.get("alice", &id).map(|t| t.task.status());
        assert_eq!(working.ok(), Some(TaskStatus::Working));
        let theirs = tasks.get("bob", &id).err().map(|e| e.code);
        assert_eq!(theirs, Some(rmcp::model::ErrorCode::INVALID_PARAMS));
        assert!(tasks.cancel("bob", &id).is_err());
        go.notify_one();
        tokio::task::yield_now().await;
        let ended = tasks.get("alice", &id).map(|t| t.task.status());
        assert_eq!(ended.ok(), Some(TaskStatus::Completed));
        tokio::time::sleep(TTL - Duration::from_secs(1)).await;
        assert!(tasks.get("alice", &id).is_ok(), "kept for its ttl");
        tokio::time::sleep(Duration::from_secs(2)).await;
        assert!(tasks.get("alice", &id).is_err(), "forgotten after it");
        assert!(tasks.is_empty());
    }

    #[tokio::test(start_paused = true)]
    async fn a_quick_call_is_no_task_and_a_client_past_its_cap_gets_plain_calls() {
        let tasks = Arc::new(Tasks::default());
        let ct = CancellationToken::new();
        let quick: Run = Arc::new(|_, _, _| {
            Box::pin(async { Ok(CallToolResponse::Complete(CallToolResult::success(vec![]))) })
        });
        let answer = tasks.start("alice".into(), quick, no_held(), &ct).await;
        assert!(matches!(answer, Ok(CallToolResponse::Complete(_))));
        assert!(tasks.is_empty());
        let go = Arc::new(tokio::sync::Notify::new());
        for _ in 0..MAX_PER_CLIENT {
            let answer = tasks
                .start("alice".into(), waiting(go.clone()), no_held(), &ct)
                .await;
            task_id(answer);
        }
        // The next one waits for its call, however long: no room for a task.
        let past = tasks.start("alice".into(), waiting(go.clone()), no_held(), &ct);
        let mut past = std::pin::pin!(past);
        tokio::select! {
            _ = &mut past => panic!("answered before its call ended"),
            () = tokio::time::sleep(SYNC_WINDOW * 4) => {}
        }
        go.notify_waiters();
        assert!(matches!(past.await, Ok(CallToolResponse::Complete(_))));
        // Another client still gets tasks.
        let bobs = tasks
            .start("bob".into(), waiting(go.clone()), no_held(), &ct)
            .await;
        task_id(bobs);
    }
}
