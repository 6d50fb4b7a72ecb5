//! The MCP handshake: `server/discover` first (2026-07-28, no session), the
//! `initialize` handshake for servers that do not speak it.
//!
//! rmcp's [`ClientLifecycleMode::Auto`] gives `server/discover` a fixed,
//! private 10 s and then sends `initialize` on the same connection. A
//! 2026-07-28 server slower to start than that (the Python SDK importing on a
//! busy machine, a cold `uvx` download) answers discover late and refuses the
//! `initialize` (-32022), so it never started although its `startupTimeout`
//! was far away. So [`probe`] sends `server/discover` itself before rmcp runs
//! and waits for the answer under the caller's deadline (the server's
//! `startupTimeout`) only; [`DiscoverGuard`] then answers rmcp's own
//! `server/discover` from that answer at once, without sending it again.
//! A server that is up (it answered a `ping`) but does not answer discover
//! at all is taken for a legacy one, as rmcp would after its 10 s.
//!
//! rmcp also falls back to `initialize` when `server/discover` is answered
//! with a JSON-RPC error, but fails the start when it is answered with any
//! other *result*: many servers answer every method they do not know with
//! `{}` (the official conformance suite's mock servers do), and rmcp then
//! gives up with "expect initialized result, but received EmptyResult".
//! [`DiscoverGuard`] turns such an answer into the `-32601 method not found`
//! a server without `server/discover` should have sent, so the fallback runs
//! on the same connection (no second process, no second TCP connection).

use std::{collections::VecDeque, time::Duration};

use rmcp::{
    RoleClient,
    model::{
        ClientJsonRpcMessage, ClientRequest, DiscoverRequest, DiscoverRequestParams, ErrorCode,
        ErrorData, PingRequest, ProtocolVersion, RequestId, RequestMetaObject,
        ServerJsonRpcMessage, ServerResult,
    },
    service::{
        ClientInitializeError, ClientLifecycleMode, ClientServiceExt, RunningService, Service,
    },
    transport::Transport,
};

/// How long [`probe`] waits for the answer to `server/discover` before it
/// asks whether the server is up at all (a `ping`): rmcp's own wait.
const ASK_IF_UP_AFTER: Duration = Duration::from_secs(10);
/// How long, after a server answered the `ping`, its answer to discover may
/// still come (a server may answer requests out of order) before it is taken
/// for a server that does not speak discover.
const DISCOVER_AFTER_PING: Duration = Duration::from_secs(2);

/// The id of [`probe`]'s `server/discover`: past every id rmcp gives (a
/// `u32` counter from 0), so it never meets one of rmcp's. Not a string id:
/// with one, server-everything's error answer to the probe was not matched
/// (the start waited for the ping, 10 s), as if its id had been lost.
fn probe_id() -> RequestId {
    RequestId::Number(i64::from(u32::MAX) + 1)
}

/// The id of [`probe`]'s `ping`.
fn ping_id() -> RequestId {
    RequestId::Number(i64::from(u32::MAX) + 2)
}

/// Starts `service` over `transport`: `server/discover` at the latest
/// version, else `initialize` at the latest version that has it.
pub(in crate::pool) async fn start<S, T>(
    service: S,
    mut transport: T,
) -> Result<RunningService<RoleClient, S>, ClientInitializeError>
where
    S: Service<RoleClient>,
    T: Transport<RoleClient> + 'static,
{
    let probed = probe(&service, &mut transport).await;
    let lifecycle = ClientLifecycleMode::Auto {
        preferred_versions: vec![ProtocolVersion::LATEST],
        legacy_version: Some(ProtocolVersion::LATEST_WITH_INITIALIZE),
    };
    service
        .serve_with_lifecycle(DiscoverGuard::probed(transport, probed), lifecycle)
        .await
}

/// Starts `service` over `transport` with `initialize` at the latest
/// version that has it, without `server/discover`: the session connection
/// of a server that speaks both generations (`session_connection`). The
/// version asked is `service`'s own ([`ClientConfig::protocol_version`]).
///
/// [`ClientConfig::protocol_version`]: rmcp::model::InitializeRequestParams::protocol_version
pub(in crate::pool) async fn start_session<S, T>(
    service: S,
    transport: T,
) -> Result<RunningService<RoleClient, S>, ClientInitializeError>
where
    S: Service<RoleClient>,
    T: Transport<RoleClient> + 'static,
{
    service
        .serve_with_lifecycle(transport, ClientLifecycleMode::Initialize)
        .await
}

/// What [`probe`] learnt before rmcp's handshake runs.
#[derive(Debug)]
pub(in crate::pool) struct Probed<E> {
    /// The server's answer to `server/discover` (its id is the probe's);
    /// `None` when the server is up but does not answer it.
    answer: Option<ServerJsonRpcMessage>,
    /// What the server sent before the answer, in order (log messages,
    /// pings), for rmcp to handle.
    before: VecDeque<ServerJsonRpcMessage>,
    /// The connection ended before an answer.
    closed: bool,
    /// Why the probe's discover could not be sent: rmcp's own discover
    /// fails with it, so rmcp reports the transport's error (a sign-in
    /// needed, an HTTP status) as it always did.
    unsent: Option<E>,
    /// How many of the probe's requests are still unanswered (their late
    /// answers are dropped).
    unanswered: u8,
}

/// Sends `server/discover` at the latest version (as rmcp would, with the
/// same client context) and waits for its answer, with no deadline of its
/// own: the caller's start deadline bounds it. After [`ASK_IF_UP_AFTER`]
/// without an answer it sends a `ping`; a server that answers the ping but,
/// [`DISCOVER_AFTER_PING`] later, still not discover does not speak it.
async fn probe<S, T>(service: &S, transport: &mut T) -> Probed<T::Error>
where
    S: Service<RoleClient>,
    T: Transport<RoleClient> + 'static,
{
    let mut probed = Probed {
        answer: None,
        before: VecDeque::new(),
        closed: false,
        unsent: None,
        unanswered: 1,
    };
    let info = service.get_info();
    let mut discover = DiscoverRequest::new(DiscoverRequestParams {});
    discover
        .extensions
        .insert(RequestMetaObject::with_client_context(
            ProtocolVersion::LATEST,
            info.client_info,
            info.capabilities,
        ));
    let request =
        ClientJsonRpcMessage::request(ClientRequest::DiscoverRequest(discover), probe_id());
    if let Err(error) = transport.send(request).await {
        probed.unsent = Some(error);
        probed.unanswered = 0;
        return probed;
    }
    let ask_if_up = tokio::time::sleep(ASK_IF_UP_AFTER);
    tokio::pin!(ask_if_up);
    let mut asked = false;
    // Set once the server answered the ping: the last moment for discover.
    let mut give_up: Option<std::pin::Pin<Box<tokio::time::Sleep>>> = None;
    loop {
        let message = tokio::select! {
            message = transport.receive() => message,
            () = &mut ask_if_up, if !asked => {
                asked = true;
                let ping = ClientJsonRpcMessage::request(
                    ClientRequest::PingRequest(PingRequest::default()),
                    ping_id(),
                );
                // Unsent, it only leaves the wait to discover's answer.
                if transport.send(ping).await.is_ok() {
                    probed.unanswered += 1;
                }
                continue;
            }
            () = async { give_up.as_mut().expect("guarded").await }, if give_up.is_some() => {
                tracing::debug!(
                    "the server answered a ping but not server/discover; using initialize"
                );
                return probed;
            }
        };
        let Some(message) = message else {
            probed.closed = true;
            return probed;
        };
        let id = answered_id(&message);
        if id == Some(&probe_id()) {
            probed.unanswered -= 1;
            probed.answer = Some(message);
            return probed;
        }
        if id == Some(&ping_id()) {
            probed.unanswered -= 1;
            give_up = Some(Box::pin(tokio::time::sleep(DISCOVER_AFTER_PING)));
            continue;
        }
        probed.before.push_back(message);
    }
}

/// The id of the request `message` answers, if it is an answer.
fn answered_id(message: &ServerJsonRpcMessage) -> Option<&RequestId> {
    match message {
        ServerJsonRpcMessage::Response(response) => Some(&response.id),
        ServerJsonRpcMessage::Error(error) => error.id.as_ref(),
        _ => None,
    }
}

/// `answer` (to the probe's discover) as the answer to rmcp's `id`.
fn readdressed(answer: ServerJsonRpcMessage, id: RequestId) -> ServerJsonRpcMessage {
    match answer {
        ServerJsonRpcMessage::Response(mut response) => {
            response.id = id;
            ServerJsonRpcMessage::Response(response)
        }
        ServerJsonRpcMessage::Error(mut error) => {
            error.id = Some(id);
            ServerJsonRpcMessage::Error(error)
        }
        other => other,
    }
}

/// A transport that answers rmcp's `server/discover` from [`probe`]'s answer
/// and makes an answer to `server/discover` which is not a discover result
/// look like the error a legacy server sends. Once the handshake is over it
/// only forwards (one branch per message).
pub(in crate::pool) struct DiscoverGuard<T, E> {
    /// The transport it forwards to.
    inner: T,
    /// The id of the `server/discover` request whose answer is awaited.
    awaiting: Option<RequestId>,
    /// The handshake is over: nothing is inspected any more.
    done: bool,
    /// What the probe learnt, until rmcp sends its own `server/discover`.
    probed: Option<Probed<E>>,
    /// Messages to hand to rmcp before reading the transport again: what the
    /// server sent before its answer, then the answer to rmcp's discover.
    queued: VecDeque<ServerJsonRpcMessage>,
    /// The connection ended during the probe.
    closed: bool,
    /// How many of the probe's requests may still be answered late.
    strays: u8,
}

impl<T, E> DiscoverGuard<T, E> {
    /// Guards `inner`'s handshake, without a probe.
    #[cfg(test)]
    fn new(inner: T) -> Self {
        DiscoverGuard {
            inner,
            awaiting: None,
            done: false,
            probed: None,
            queued: VecDeque::new(),
            closed: false,
            strays: 0,
        }
    }

    /// Guards `inner`'s handshake, `probed` standing for the server's answer
    /// to rmcp's first `server/discover`.
    pub(in crate::pool) fn probed(inner: T, probed: Probed<E>) -> Self {
        DiscoverGuard {
            inner,
            awaiting: None,
            done: false,
            strays: probed.unanswered,
            probed: Some(probed),
            queued: VecDeque::new(),
            closed: false,
        }
    }

    /// What to do with `message` instead of sending it, when it is rmcp's
    /// first `server/discover`, which the probe sent already: queue the
    /// probe's answer, addressed to rmcp's request (`Ok`), or fail the send
    /// with the probe's own (`Err`). `None`: send it.
    fn answer_from_probe(&mut self, message: &ClientJsonRpcMessage) -> Option<Result<(), E>> {
        let ClientJsonRpcMessage::Request(request) = message else {
            return None;
        };
        if !matches!(request.request, ClientRequest::DiscoverRequest(_)) {
            return None;
        }
        let probed = self.probed.take()?;
        if let Some(error) = probed.unsent {
            return Some(Err(error));
        }
        self.queued.extend(probed.before);
        if probed.closed {
            self.closed = true;
            return Some(Ok(()));
        }
        let id = request.id.clone();
        self.awaiting = Some(id.clone());
        let answer = match probed.answer {
            Some(answer) => readdressed(answer, id),
            None => ServerJsonRpcMessage::error(
                ErrorData::new(
                    ErrorCode::METHOD_NOT_FOUND,
                    "the server answered a ping but not server/discover",
                    None,
                ),
                Some(id),
            ),
        };
        if let Some(answer) = self.check_received(answer) {
            self.queued.push_back(answer);
        }
        Some(Ok(()))
    }

    /// Whether `message` is a late answer to the probe's discover or ping.
    fn is_stray(&self, message: &ServerJsonRpcMessage) -> bool {
        let id = answered_id(message);
        id.is_some() && (id == Some(&probe_id()) || id == Some(&ping_id()))
    }

    /// Notes the handshake requests the client sends.
    fn watch_sent(&mut self, message: &ClientJsonRpcMessage) {
        if let ClientJsonRpcMessage::Request(request) = message {
            match &request.request {
                // rmcp may ask again at another version; watch the latest.
                ClientRequest::DiscoverRequest(_) => self.awaiting = Some(request.id.clone()),
                ClientRequest::InitializeRequest(_) => self.done = true,
                _ => {}
            }
        }
    }

    /// `message`, or the error it stands for when it answers the awaited
    /// `server/discover` with something other than a discover result; `None`
    /// to drop it.
    ///
    /// rmcp's Auto mode gives `server/discover` 10 s and then sends
    /// `initialize` on the same connection. A server that is merely slow to
    /// start (a cold `npx`, Python importing its SDK on a busy machine)
    /// answers the discover request later, and rmcp would take that answer
    /// for the answer to `initialize` ("conflict initialized response id").
    /// Once `initialize` is out, the late answer to discover is dropped.
    fn check_received(&mut self, message: ServerJsonRpcMessage) -> Option<ServerJsonRpcMessage> {
        let answered = match &message {
            ServerJsonRpcMessage::Response(response) => Some(&response.id),
            ServerJsonRpcMessage::Error(error) => error.id.as_ref(),
            _ => None,
        };
        if answered.is_none() || answered != self.awaiting.as_ref() {
            return Some(message);
        }
        self.awaiting = None;
        if self.done {
            tracing::debug!(
                "dropping a late answer to server/discover: initialize was sent after it timed out"
            );
            return None;
        }
        Some(match message {
            ServerJsonRpcMessage::Response(response)
                if !matches!(response.result, ServerResult::DiscoverResult(_)) =>
            {
                tracing::debug!(
                    "server/discover was answered with a result that is not a discover \
                     result; using initialize"
                );
                ServerJsonRpcMessage::error(
                    ErrorData::new(
                        ErrorCode::METHOD_NOT_FOUND,
                        "server/discover was answered with something that is not a discover \
                         result",
                        None,
                    ),
                    Some(response.id),
                )
            }
            ServerJsonRpcMessage::Response(response) => {
                self.done = true;
                ServerJsonRpcMessage::Response(response)
            }
            other => other,
        })
    }
}

impl<T: Transport<RoleClient>> Transport<RoleClient> for DiscoverGuard<T, T::Error> {
    type Error = T::Error;

    fn name() -> std::borrow::Cow<'static, str> {
        T::name()
    }

    fn send(
        &mut self,
        item: ClientJsonRpcMessage,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        let instead = if self.done {
            None
        } else {
            self.answer_from_probe(&item)
        };
        let forward = match instead {
            Some(_) => None,
            None => {
                if !self.done {
                    self.watch_sent(&item);
                }
                Some(self.inner.send(item))
            }
        };
        async move {
            match (forward, instead) {
                (Some(sent), _) => sent.await,
                (None, Some(outcome)) => outcome,
                (None, None) => Ok(()),
            }
        }
    }

    async fn receive(&mut self) -> Option<ServerJsonRpcMessage> {
        if let Some(message) = self.queued.pop_front() {
            return Some(message);
        }
        if self.closed {
            return None;
        }
        loop {
            let message = self.inner.receive().await?;
            // A late answer to the probe's discover or ping: rmcp never
            // asked, and would fail on an answer it cannot match.
            if self.strays > 0 && self.is_stray(&message) {
                self.strays -= 1;
                continue;
            }
            if self.awaiting.is_none() {
                return Some(message);
            }
            if let Some(message) = self.check_received(message) {
                return Some(message);
            }
        }
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        self.inner.close().await
    }
}

#[cfg(test)]
mod tests {
    use rmcp::model::{
        ClientCapabilities, EmptyResult, Implementation, InitializeRequest, InitializeRequestParams,
    };

    use super::*;

    type Guard = DiscoverGuard<(), std::io::Error>;

    fn guard_awaiting(id: i64) -> Guard {
        let mut guard: Guard = DiscoverGuard::new(());
        guard.watch_sent(&ClientJsonRpcMessage::request(
            ClientRequest::DiscoverRequest(DiscoverRequest::new(DiscoverRequestParams {})),
            RequestId::Number(id),
        ));
        guard
    }

    #[test]
    fn an_empty_answer_to_discover_becomes_method_not_found() {
        let mut guard = guard_awaiting(7);
        let answer = ServerJsonRpcMessage::response(
            ServerResult::EmptyResult(EmptyResult {}),
            RequestId::Number(7),
        );
        match guard.check_received(answer) {
            Some(ServerJsonRpcMessage::Error(error)) => {
                assert_eq!(error.error.code, ErrorCode::METHOD_NOT_FOUND);
                assert_eq!(error.id, Some(RequestId::Number(7)));
            }
            other => panic!("{other:?}"),
        }
        assert!(guard.awaiting.is_none());
    }

    #[test]
    fn other_answers_pass_and_initialize_ends_the_watch() {
        let mut guard = guard_awaiting(7);
        let unrelated = ServerJsonRpcMessage::response(
            ServerResult::EmptyResult(EmptyResult {}),
            RequestId::Number(8),
        );
        assert!(matches!(
            guard.check_received(unrelated),
            Some(ServerJsonRpcMessage::Response(_))
        ));
        assert_eq!(guard.awaiting, Some(RequestId::Number(7)));
        guard.watch_sent(&ClientJsonRpcMessage::request(
            ClientRequest::InitializeRequest(InitializeRequest::new(InitializeRequestParams::new(
                ClientCapabilities::default(),
                Implementation::new("t", "1"),
            ))),
            RequestId::Number(9),
        ));
        assert!(guard.done);
    }

    /// The regression: a server slow to start answered `server/discover`
    /// after rmcp's 10 s had passed and `initialize` had been sent; rmcp took
    /// that answer for the answer to `initialize` and the start failed.
    #[test]
    fn a_late_answer_to_discover_after_initialize_is_dropped() {
        let mut guard = guard_awaiting(0);
        guard.watch_sent(&ClientJsonRpcMessage::request(
            ClientRequest::InitializeRequest(InitializeRequest::new(InitializeRequestParams::new(
                ClientCapabilities::default(),
                Implementation::new("t", "1"),
            ))),
            RequestId::Number(1),
        ));
        let late = ServerJsonRpcMessage::response(
            ServerResult::EmptyResult(EmptyResult {}),
            RequestId::Number(0),
        );
        assert!(guard.check_received(late).is_none());
        assert!(guard.awaiting.is_none());
        let initialized = ServerJsonRpcMessage::response(
            ServerResult::EmptyResult(EmptyResult {}),
            RequestId::Number(1),
        );
        assert!(guard.check_received(initialized).is_some());
    }

    fn discover_from_rmcp(id: i64) -> ClientJsonRpcMessage {
        ClientJsonRpcMessage::request(
            ClientRequest::DiscoverRequest(DiscoverRequest::new(DiscoverRequestParams {})),
            RequestId::Number(id),
        )
    }

    /// rmcp's discover is answered from the probe's answer (readdressed to
    /// rmcp's id, after what the server said before it) and not sent again.
    #[test]
    fn the_probes_answer_answers_rmcps_discover() {
        let log = ServerJsonRpcMessage::notification(
            rmcp::model::ServerNotification::ToolListChangedNotification(Default::default()),
        );
        let probed = Probed {
            answer: Some(ServerJsonRpcMessage::response(
                ServerResult::EmptyResult(EmptyResult {}),
                probe_id(),
            )),
            before: VecDeque::from([log]),
            closed: false,
            unsent: None,
            unanswered: 0,
        };
        let mut guard: Guard = DiscoverGuard::probed((), probed);
        assert!(matches!(
            guard.answer_from_probe(&discover_from_rmcp(0)),
            Some(Ok(()))
        ));
        assert!(matches!(
            guard.queued.pop_front(),
            Some(ServerJsonRpcMessage::Notification(_))
        ));
        match guard.queued.pop_front() {
            // `{}` is no discover result: the fallback's error, as before.
            Some(ServerJsonRpcMessage::Error(error)) => {
                assert_eq!(error.error.code, ErrorCode::METHOD_NOT_FOUND);
                assert_eq!(error.id, Some(RequestId::Number(0)));
            }
            other => panic!("{other:?}"),
        }
        // rmcp asking again (another version) goes to the server.
        assert!(guard.answer_from_probe(&discover_from_rmcp(1)).is_none());
    }

    /// A server that answered the ping but not discover: rmcp is told it
    /// does not speak discover, and a late answer to the probe is dropped.
    #[test]
    fn a_server_up_without_discover_gets_initialize() {
        let probed = Probed {
            answer: None,
            before: VecDeque::new(),
            closed: false,
            unsent: None,
            unanswered: 1,
        };
        let mut guard: Guard = DiscoverGuard::probed((), probed);
        assert_eq!(guard.strays, 1);
        assert!(matches!(
            guard.answer_from_probe(&discover_from_rmcp(0)),
            Some(Ok(()))
        ));
        match guard.queued.pop_front() {
            Some(ServerJsonRpcMessage::Error(error)) => {
                assert_eq!(error.error.code, ErrorCode::METHOD_NOT_FOUND);
                assert_eq!(error.id, Some(RequestId::Number(0)));
            }
            other => panic!("{other:?}"),
        }
        let late =
            ServerJsonRpcMessage::response(ServerResult::EmptyResult(EmptyResult {}), probe_id());
        assert!(guard.is_stray(&late));
    }

    /// A probe that could not be sent fails rmcp's discover with the
    /// transport's own error (an HTTP 401 or 501), as rmcp's send would.
    #[test]
    fn an_unsent_probe_fails_rmcps_discover_with_its_error() {
        let probed = Probed {
            answer: None,
            before: VecDeque::new(),
            closed: false,
            unsent: Some(std::io::Error::other("HTTP 501 Not Implemented")),
            unanswered: 0,
        };
        let mut guard: Guard = DiscoverGuard::probed((), probed);
        match guard.answer_from_probe(&discover_from_rmcp(0)) {
            Some(Err(error)) => assert_eq!(error.to_string(), "HTTP 501 Not Implemented"),
            other => panic!("{other:?}"),
        }
        assert!(guard.queued.is_empty() && !guard.closed);
    }
}
