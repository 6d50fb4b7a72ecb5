//! Resuming event streams that a streamable HTTP server ends early.
//!
//! A server may end the event stream that carries a request's answer before
//! the answer, and send the answer later on a `GET` that names the last
//! event seen (`Last-Event-ID`), after the delay its `retry:` field asked for
//! (SEP-1699; the conformance suite's `sse-retry` scenario). rmcp resumes such
//! streams itself, but without a bound: a server that ends every stream at
//! once with `retry: 0` gets a tight loop of `GET`s for as long as the call
//! runs. [`resuming`] takes the job over from rmcp:
//!
//! - it honours `retry:`, with a floor of [`RESUME_FLOOR`] and a default of
//!   [`DEFAULT_RETRY`] when the server gave none;
//! - resumes that bring no JSON-RPC message back off (the delay doubles, up
//!   to [`MAX_RESUME_DELAY`] or the server's `retry:` if longer); one that
//!   brings a message (progress, say) starts the count again;
//! - after [`RESUME_ATTEMPTS`] fruitless resumes in a row, [`FAILED_RESUMES`]
//!   failed `GET`s in a row (no connection, 5xx), or one `GET` that cannot
//!   succeed (405, 401, 403, another 4xx), a request's stream ends
//!   with a JSON-RPC error answering the request, naming the server and what
//!   happened, so the call fails with that message at once;
//! - the session's standalone `GET` stream is reopened the same way, and
//!   after the bound simply left closed (it is optional).
//!
//! rmcp must not resume on its own as well, so the event ids and `retry:`
//! fields are taken out of the events it sees: without an id rmcp ends a
//! request's stream instead of resuming it.

use std::{collections::HashMap, sync::Arc, time::Duration};

use futures::{StreamExt, stream::BoxStream};
use http::{HeaderName, HeaderValue};
use rmcp::{
    model::{ErrorCode, ErrorData, RequestId, ServerJsonRpcMessage},
    transport::streamable_http_client::{SseError, StreamableHttpError},
};
use serde::de::IgnoredAny;
use sse_stream::Sse;

use super::{HttpClient, HttpClientError, http_error};

/// The shortest wait before a resume, whatever `retry:` says.
pub const RESUME_FLOOR: Duration = Duration::from_millis(100);
/// The wait before a resume when the server gave no `retry:`.
pub const DEFAULT_RETRY: Duration = Duration::from_millis(500);
/// The longest wait the backoff reaches (unless `retry:` asks for more).
pub const MAX_RESUME_DELAY: Duration = Duration::from_secs(5);
/// Resumes in a row that bring no message before giving up.
pub const RESUME_ATTEMPTS: u32 = 5;
/// `GET`s in a row that fail (no connection, 5xx) before giving up: a
/// server that died fails the call within seconds.
pub const FAILED_RESUMES: u32 = 2;

/// Everything a resuming `GET` sends.
#[derive(Clone)]
pub struct GetTarget {
    /// The client that sends it (scrubbed errors).
    pub client: HttpClient,
    /// The endpoint.
    pub uri: Arc<str>,
    /// The session, if the server gave one.
    pub session_id: Option<Arc<str>>,
    /// rmcp's `Authorization` value, if any.
    pub auth_header: Option<String>,
    /// rmcp's protocol headers (`MCP-Protocol-Version`, ...).
    pub headers: HashMap<HeaderName, HeaderValue>,
    /// The largest event accepted.
    pub max_event_size: usize,
}

type Events = BoxStream<'static, Result<Sse, SseError>>;

/// `stream`, resumed with `GET` + `Last-Event-ID` when it ends (or breaks)
/// before the answer to `request` (or, for the standalone stream,
/// `request = None`, whenever it ends).
pub fn resuming(stream: Events, target: GetTarget, request: Option<RequestId>) -> Events {
    let state = Resumer {
        target,
        request,
        stream: Some(stream),
        last_event_id: None,
        server_retry: None,
        fruitless: 0,
        failures: 0,
        answered: false,
    };
    futures::stream::unfold(Some(state), |state| async move {
        let mut state = state?;
        match state.next().await {
            Step::Event(event) => Some((Ok(event), Some(state))),
            Step::Last(event) => Some((Ok(event), None)),
            Step::End => None,
        }
    })
    .boxed()
}

/// What the resumer hands rmcp next.
enum Step {
    /// An event; more may follow.
    Event(Sse),
    /// The last event (an error answering the request).
    Last(Sse),
    /// Nothing more.
    End,
}

struct Resumer {
    target: GetTarget,
    /// The request whose answer the stream carries (`None`: the session's
    /// standalone stream, which has no end).
    request: Option<RequestId>,
    /// The current response or `GET` stream.
    stream: Option<Events>,
    /// The last event id seen, for `Last-Event-ID`.
    last_event_id: Option<String>,
    /// The server's last `retry:`.
    server_retry: Option<Duration>,
    /// Resumes in a row that brought no message.
    fruitless: u32,
    /// `GET`s in a row that failed.
    failures: u32,
    /// The answer to `request` has come: no more resuming.
    answered: bool,
}

impl Resumer {
    async fn next(&mut self) -> Step {
        loop {
            if let Some(stream) = &mut self.stream {
                match stream.next().await {
                    Some(Ok(event)) => {
                        if let Some(event) = self.take_event(event) {
                            return Step::Event(event);
                        }
                        continue;
                    }
                    Some(Err(error)) => {
                        tracing::debug!(
                            server = %self.target.client.remote.server,
                            %error,
                            "event stream broke"
                        );
                    }
                    None => {}
                }
                self.stream = None;
            }
            if self.answered {
                return Step::End;
            }
            if let Some(step) = self.resume().await {
                return step;
            }
        }
    }

    /// Notes an event's id and `retry:` (and removes them, so rmcp does not
    /// resume by itself); `None` for events that carry nothing else.
    fn take_event(&mut self, mut event: Sse) -> Option<Sse> {
        if let Some(id) = event.id.take() {
            self.last_event_id = Some(id);
        }
        if let Some(ms) = event.retry.take() {
            self.server_retry = Some(Duration::from_millis(ms));
        }
        let data = event.data.as_deref().unwrap_or("");
        if data.trim().is_empty() && event.event.is_none() {
            return None;
        }
        if !data.trim().is_empty() {
            self.fruitless = 0;
            if let Some(request) = &self.request
                && !self.answered
            {
                self.answered = answers(data, request);
            }
        }
        Some(event)
    }

    /// Waits and reopens the stream; `Some` when it is over.
    async fn resume(&mut self) -> Option<Step> {
        let Some(last_event_id) = self.last_event_id.clone().or_else(|| {
            // The standalone stream may be reopened without an id.
            self.request.is_none().then(String::new)
        }) else {
            return Some(self.give_up(
                "the server ended the response stream before answering, without an event id \
                 to resume it from",
            ));
        };
        if self.fruitless >= RESUME_ATTEMPTS {
            let text = format!(
                "the server ended the response stream {RESUME_ATTEMPTS} times in a row before \
                 answering (each time resumed with GET and Last-Event-ID); giving up"
            );
            return Some(self.give_up(&text));
        }
        let delay = delay(self.server_retry, self.fruitless);
        self.fruitless += 1;
        tracing::debug!(
            server = %self.target.client.remote.server,
            ?delay,
            attempt = self.fruitless,
            "resuming the event stream"
        );
        tokio::time::sleep(delay).await;
        let last_event_id = Some(last_event_id).filter(|id| !id.is_empty());
        let target = &self.target;
        match target
            .client
            .open_stream(
                target.uri.clone(),
                target.session_id.clone(),
                last_event_id,
                target.auth_header.clone(),
                target.headers.clone(),
                target.max_event_size,
            )
            .await
        {
            Ok(stream) => {
                self.failures = 0;
                self.stream = Some(stream);
            }
            Err(error) if is_final(&error) || self.failures + 1 >= FAILED_RESUMES => {
                let text = format!(
                    "the response stream ended before the answer, and resuming it failed: {}",
                    http_error(&target.client.remote, error)
                );
                return Some(self.give_up(&text));
            }
            Err(error) => {
                self.failures += 1;
                tracing::debug!(
                    server = %target.client.remote.server,
                    %error,
                    "resuming the event stream failed"
                );
            }
        }
        None
    }

    /// The end: for a request, an error answering it; the standalone stream
    /// is left closed (without ending it, which would make rmcp reopen it).
    fn give_up(&mut self, text: &str) -> Step {
        let remote = &self.target.client.remote;
        let Some(request) = self.request.clone() else {
            tracing::debug!(server = %remote.server, "{text}; the standalone stream stays closed");
            self.stream = Some(futures::stream::pending().boxed());
            self.answered = true;
            return Step::End;
        };
        let error = ServerJsonRpcMessage::error(
            ErrorData::new(
                ErrorCode::INTERNAL_ERROR,
                remote.error(None, text).to_string(),
                None,
            ),
            Some(request),
        );
        Step::Last(Sse {
            event: None,
            data: serde_json::to_string(&error).ok(),
            id: None,
            retry: None,
        })
    }
}

/// The wait before a resume, after `fruitless` resumes in a row that brought
/// nothing, when the server last asked for `server_retry`.
fn delay(server_retry: Option<Duration>, fruitless: u32) -> Duration {
    let base = server_retry.unwrap_or(DEFAULT_RETRY).max(RESUME_FLOOR);
    let backoff = base.saturating_mul(1 << fruitless.min(16));
    backoff.min(MAX_RESUME_DELAY.max(base))
}

/// Whether the JSON-RPC message `data` answers `request`.
fn answers(data: &str, request: &RequestId) -> bool {
    #[derive(serde::Deserialize)]
    struct Peek {
        #[serde(default)]
        id: Option<RequestId>,
        #[serde(default)]
        method: Option<IgnoredAny>,
    }
    serde_json::from_str::<Peek>(data)
        .is_ok_and(|peek| peek.method.is_none() && peek.id.as_ref() == Some(request))
}

/// Whether a failed `GET` would fail again (so resuming is pointless).
fn is_final(error: &StreamableHttpError<HttpClientError>) -> bool {
    match error {
        StreamableHttpError::ServerDoesNotSupportSse
        | StreamableHttpError::AuthRequired(_)
        | StreamableHttpError::InsufficientScope(_)
        | StreamableHttpError::UnexpectedContentType(_) => true,
        StreamableHttpError::Client(e) => e.status.is_some_and(|s| (400..500).contains(&s)),
        StreamableHttpError::HttpStatus(e) => (400..500).contains(&e.status) && e.status != 429,
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resumes_honour_retry_above_a_floor_and_back_off() {
        let ms = Duration::from_millis;
        let waits = |retry: Option<u64>| -> Vec<Duration> {
            (0..RESUME_ATTEMPTS)
                .map(|n| delay(retry.map(ms), n))
                .collect()
        };
        // The first resume waits what the server asked for.
        assert_eq!(waits(Some(500))[0], ms(500));
        // `retry: 0` gets the floor, then doubles.
        assert_eq!(
            waits(Some(0)),
            [ms(100), ms(200), ms(400), ms(800), ms(1600)]
        );
        // No `retry:`: the default, doubling up to the cap.
        assert_eq!(
            waits(None),
            [ms(500), ms(1000), ms(2000), ms(4000), MAX_RESUME_DELAY]
        );
        // A server asking for more than the cap gets what it asked for.
        assert_eq!(waits(Some(60_000)), [ms(60_000); 5]);
    }

    #[test]
    fn only_the_answer_to_the_request_counts() {
        let id = RequestId::Number(3);
        assert!(answers(r#"{"jsonrpc":"2.0","id":3,"result":{}}"#, &id));
        assert!(answers(
            r#"{"jsonrpc":"2.0","id":3,"error":{"code":1,"message":"x"}}"#,
            &id
        ));
        assert!(!answers(r#"{"jsonrpc":"2.0","id":4,"result":{}}"#, &id));
        assert!(!answers(
            r#"{"jsonrpc":"2.0","id":3,"method":"sampling/createMessage"}"#,
            &id
        ));
        assert!(!answers(
            r#"{"jsonrpc":"2.0","method":"notifications/progress"}"#,
            &id
        ));
    }
}
