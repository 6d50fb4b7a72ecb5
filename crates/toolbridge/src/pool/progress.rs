//! Waiting for a tool call's response: a timeout that progress restarts, up
//! to a total bound, and `notifications/cancelled` when the wait ends early.
//!
//! rmcp can do the timeout itself (`PeerRequestOptions::reset_timeout_on_progress`),
//! but it pays for it on every request: a channel, an async lock taken twice,
//! a map insert and remove, and a second timer for the total bound. That was
//! most of what toolbridge added to a call in the stdio benchmark. Progress
//! is rare and calls are many, so here the cost sits on the rare side: the
//! client handler notes when progress arrives ([`ProgressLog::record`]), and
//! a call reads that note only when its one timer fires.
//!
//! A server waiting on the client is not silent either: while the client
//! answers a server-to-client request (a user typing the answer to an
//! elicitation), no call on the connection times out, and the silence
//! counts from the answer ([`ProgressLog::answering`]). The total bound
//! still holds.
//!
//! A call given up on is cancelled before the questions it asked are
//! answered: while a `notifications/cancelled` is on its way to the server,
//! the connection's answers to the server's requests wait for it
//! ([`ProgressLog::after_cancels`]). A server may resume a call when its
//! question is answered and then fail at a cancellation that arrives while
//! that call finishes: the Python `mcp` 1.x SDK ends the whole session then
//! (every response stream on it closes unanswered), so the order matters.
//!
//! A caller that relays progress to someone else (the gateway, to the
//! client whose call it is) wraps the call in [`forward_progress`]: the
//! requests it sends register their progress token, and the handler hands
//! each notification for it to the caller's [`ProgressForward`]. Calls not
//! wrapped pay one task-local lookup.

use crate::lock::LockUnpoisoned as _;
use std::{
    collections::HashMap,
    sync::{
        Arc, Mutex,
        atomic::{AtomicUsize, Ordering},
    },
    time::Duration,
};

use rmcp::{
    RoleClient,
    model::{
        CancelledNotification, CancelledNotificationParam, ClientNotification,
        ProgressNotificationParam, ProgressToken, RequestId, ServerResult,
    },
    service::{Peer, RequestHandle, ServiceError},
};
use tokio::time::Instant;

/// Above this many notes, [`ProgressLog::record`] drops the ones too old to
/// matter (progress for calls that already ended).
const PRUNE_AT: usize = 256;

/// Receives the progress notifications of the requests made inside
/// [`forward_progress`], with the token the pool gave the request upstream.
pub type ProgressForward = Arc<dyn Fn(ProgressNotificationParam) + Send + Sync>;

tokio::task_local! {
    static FORWARD: ProgressForward;
}

/// Runs `call` (a [`Pool::call_tool`](super::Pool::call_tool) or
/// [`Pool::request`](super::Pool::request)) with its progress notifications
/// handed to `forward` as they arrive, until its response.
pub async fn forward_progress<F: std::future::Future>(
    forward: ProgressForward,
    call: F,
) -> F::Output {
    FORWARD.scope(forward, call).await
}

/// When progress last arrived, per progress token, on one connection.
pub(super) struct ProgressLog {
    last: Mutex<HashMap<ProgressToken, Instant>>,
    /// Where the notifications of requests made in [`forward_progress`] go.
    forwards: Mutex<HashMap<ProgressToken, ProgressForward>>,
    /// Notes older than this can no longer extend any call (it is the pool's
    /// `max_total_call_time`).
    horizon: Duration,
    /// Server-to-client requests being answered now (a user typing the
    /// answer to an elicitation): a server waiting on the client is not
    /// silent, so no call on the connection times out meanwhile.
    answering: AtomicUsize,
    /// When the client last finished answering one; the silence of the
    /// calls waiting on it starts there.
    answered: Mutex<Option<Instant>>,
    /// The `notifications/cancelled` being sent now, which answers to the
    /// server's requests wait for (see the module).
    cancels: Arc<Cancels>,
}

/// How long an answer to a server's request waits for cancellations on
/// their way: a cancellation is one small POST (or line); a server that
/// takes longer to accept it does not hold the answer for good.
const CANCEL_WAIT: Duration = Duration::from_secs(5);

/// The cancellations in flight on one connection.
#[derive(Default)]
struct Cancels {
    sending: AtomicUsize,
    sent: tokio::sync::Notify,
}

/// A cancellation on its way; noted as sent when dropped.
struct Cancelling(Arc<Cancels>);

impl Cancelling {
    fn new(cancels: &Arc<Cancels>) -> Self {
        cancels.sending.fetch_add(1, Ordering::AcqRel);
        Cancelling(cancels.clone())
    }
}

impl Drop for Cancelling {
    fn drop(&mut self) {
        self.0.sending.fetch_sub(1, Ordering::AcqRel);
        self.0.sent.notify_waiters();
    }
}

/// A server-to-client request being answered; noted as answered when
/// dropped.
pub(super) struct Answering(Arc<ProgressLog>);

impl Drop for Answering {
    fn drop(&mut self) {
        *self.0.answered.lock_unpoisoned() = Some(Instant::now());
        self.0.answering.fetch_sub(1, Ordering::Release);
    }
}

impl ProgressLog {
    pub(super) fn new(horizon: Duration) -> Self {
        ProgressLog {
            last: Mutex::new(HashMap::new()),
            forwards: Mutex::new(HashMap::new()),
            horizon,
            answering: AtomicUsize::new(0),
            answered: Mutex::new(None),
            cancels: Arc::default(),
        }
    }

    /// Notes that the client is answering a server-to-client request until
    /// the returned guard is dropped.
    pub(super) fn answering(self: &Arc<Self>) -> Answering {
        self.answering.fetch_add(1, Ordering::Acquire);
        Answering(self.clone())
    }

    /// Waits until no `notifications/cancelled` is on its way to the server
    /// (at most [`CANCEL_WAIT`]): an answer to a server's request goes
    /// after the cancellations of the calls given up on before it (see the
    /// module). Costs one atomic load when none is.
    pub(super) async fn after_cancels(&self) {
        let cancels = &self.cancels;
        let _ = tokio::time::timeout(CANCEL_WAIT, async {
            loop {
                let sent = cancels.sent.notified();
                tokio::pin!(sent);
                sent.as_mut().enable();
                if cancels.sending.load(Ordering::Acquire) == 0 {
                    return;
                }
                sent.await;
            }
        })
        .await;
    }

    /// The latest moment the calls' silence can be counted from, besides
    /// their own progress: now while the client answers the server, else
    /// when it last did.
    fn client_busy(&self) -> Option<Instant> {
        if self.answering.load(Ordering::Acquire) > 0 {
            return Some(Instant::now());
        }
        *self.answered.lock_unpoisoned()
    }

    /// Notes `params` (see [`ProgressLog::record`]) and hands it to the
    /// forward registered for its token, if any.
    pub(super) fn arrived(&self, params: ProgressNotificationParam) {
        let forward = {
            let forwards = self.forwards.lock_unpoisoned();
            if forwards.is_empty() {
                None
            } else {
                forwards.get(&params.progress_token).cloned()
            }
        };
        self.record(params.progress_token.clone());
        if let Some(forward) = forward {
            forward(params);
        }
    }

    /// Notes that progress for `token` arrived now.
    pub(super) fn record(&self, token: ProgressToken) {
        let now = Instant::now();
        let mut last = self.last.lock_unpoisoned();
        if last.len() >= PRUNE_AT {
            let horizon = self.horizon;
            last.retain(|_, at| now.duration_since(*at) < horizon);
        }
        last.insert(token, now);
    }

    fn last(&self, token: &ProgressToken) -> Option<Instant> {
        let last = self.last.lock_unpoisoned();
        last.get(token).copied()
    }

    fn forget(&self, token: &ProgressToken) {
        let mut last = self.last.lock_unpoisoned();
        if !last.is_empty() {
            last.remove(token);
        }
    }
}

/// How long a call may take.
#[derive(Debug, Clone, Copy)]
pub(super) struct Limits {
    /// Without progress.
    pub(super) idle: Duration,
    /// In all, even with progress.
    pub(super) total: Duration,
}

/// Waits for the response to the request behind `handle`.
///
/// `at + after`, or a year from `at` where that sum overflows the clock (a
/// library user's `Duration::MAX`): adding would panic.
pub(super) fn later(at: Instant, after: std::time::Duration) -> Instant {
    at.checked_add(after)
        .unwrap_or_else(|| at + std::time::Duration::from_secs(365 * 24 * 3600))
}

/// After `limits.idle` without a response or progress, or `limits.total` in
/// all, the server is sent `notifications/cancelled` and the result is
/// [`ServiceError::Timeout`]. If the returned future is dropped before the
/// response arrives (the caller gave up), the server is sent
/// `notifications/cancelled` too, from a spawned task.
pub(super) async fn await_response(
    handle: RequestHandle<RoleClient>,
    log: &ProgressLog,
    limits: Limits,
) -> Result<ServerResult, ServiceError> {
    let _forwarding = FORWARD.try_with(Clone::clone).ok().map(|forward| {
        log.forwards
            .lock_unpoisoned()
            .insert(handle.progress_token.clone(), forward);
        Forwarding {
            log,
            token: handle.progress_token.clone(),
        }
    });
    let mut pending = Pending {
        handle,
        armed: true,
        log,
    };
    let started = Instant::now();
    let total_deadline = later(started, limits.total);
    let timer = tokio::time::sleep_until(later(started, limits.idle).min(total_deadline));
    tokio::pin!(timer);
    let outcome = loop {
        tokio::select! {
            biased;
            response = &mut pending.handle.rx => {
                break response.unwrap_or(Err(ServiceError::TransportClosed));
            }
            () = &mut timer => {
                let now = Instant::now();
                // Progress, or the client answering the server (the server
                // waits on the user, not the other way round).
                let extended = log
                    .last(&pending.handle.progress_token)
                    .max(log.client_busy())
                    .map(|at| later(at, limits.idle).min(total_deadline))
                    .filter(|deadline| *deadline > now);
                match extended {
                    Some(deadline) => timer.as_mut().reset(deadline),
                    None => {
                        let (after, reason) = if now >= total_deadline {
                            (limits.total, "maximum total timeout exceeded")
                        } else {
                            (limits.idle, "request timeout")
                        };
                        pending.armed = false;
                        let _cancelling = Cancelling::new(&log.cancels);
                        let _ = send_cancel(
                            &pending.handle.peer,
                            pending.handle.id.clone(),
                            reason,
                        )
                        .await;
                        break Err(ServiceError::Timeout { timeout: after });
                    }
                }
            }
        }
    };
    pending.armed = false;
    log.forget(&pending.handle.progress_token);
    outcome
}

/// A request whose progress is forwarded; unregisters it when dropped.
struct Forwarding<'a> {
    log: &'a ProgressLog,
    token: ProgressToken,
}

impl Drop for Forwarding<'_> {
    fn drop(&mut self) {
        self.log.forwards.lock_unpoisoned().remove(&self.token);
    }
}

impl std::fmt::Debug for ProgressLog {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ProgressLog")
            .field("horizon", &self.horizon)
            .finish_non_exhaustive()
    }
}

/// A request in flight; tells the server to cancel it if dropped while armed.
struct Pending<'a> {
    handle: RequestHandle<RoleClient>,
    armed: bool,
    /// Where the cancellation is noted as on its way, from the drop on (so
    /// an answer the caller gives after dropping the call goes after it).
    log: &'a ProgressLog,
}

impl Drop for Pending<'_> {
    fn drop(&mut self) {
        if !self.armed {
            return;
        }
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            return;
        };
        let peer = self.handle.peer.clone();
        let id = self.handle.id.clone();
        let cancelling = Cancelling::new(&self.log.cancels);
        runtime.spawn(async move {
            let _ = send_cancel(&peer, id, "request abandoned by the caller").await;
            drop(cancelling);
        });
    }
}

async fn send_cancel(
    peer: &Peer<RoleClient>,
    id: RequestId,
    reason: &str,
) -> Result<(), ServiceError> {
    let params = CancelledNotificationParam::new(Some(id), Some(reason.to_owned()));
    peer.send_notification(ClientNotification::CancelledNotification(
        CancelledNotification::new(params),
    ))
    .await
}

#[cfg(test)]
mod tests {
    use super::*;

    fn token(n: i64) -> ProgressToken {
        ProgressToken(rmcp::model::NumberOrString::Number(n))
    }

    /// Regression: a timeout of 1e19 s (or `Duration::MAX` from a library
    /// user) was added to the clock and panicked.
    #[test]
    fn a_deadline_too_far_for_the_clock_is_a_year_away() {
        let now = Instant::now();
        assert_eq!(
            later(now, Duration::from_secs(5)),
            now + Duration::from_secs(5)
        );
        for huge in [
            Duration::MAX,
            Duration::from_secs(10_000_000_000_000_000_000),
        ] {
            assert_eq!(later(now, huge), now + Duration::from_secs(365 * 24 * 3600));
        }
    }

    #[tokio::test(start_paused = true)]
    async fn notes_too_old_to_matter_are_dropped_once_there_are_many() {
        let log = ProgressLog::new(Duration::from_secs(1));
        for n in 0..PRUNE_AT as i64 {
            log.record(token(n));
        }
        tokio::time::advance(Duration::from_secs(2)).await;
        log.record(token(-1));
        assert!(log.last(&token(-1)).is_some());
        assert!(log.last(&token(0)).is_none());
        assert_eq!(log.last.lock().map(|m| m.len()).unwrap_or(0), 1);
    }

    #[tokio::test(start_paused = true)]
    async fn a_finished_call_forgets_its_note() {
        let log = ProgressLog::new(Duration::from_secs(600));
        log.record(token(7));
        assert!(log.last(&token(7)).is_some());
        log.forget(&token(7));
        assert!(log.last(&token(7)).is_none());
    }
}
