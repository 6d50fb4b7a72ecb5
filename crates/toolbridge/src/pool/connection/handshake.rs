//! The MCP handshake: `server/discover` first (2026-07-28, no session), the
//! `initialize` handshake for servers that do not speak it.
//!
//! rmcp's [`ClientLifecycleMode::Auto`] falls back to `initialize` when
//! `server/discover` times out or is answered with a JSON-RPC error, but
//! fails the start when it is answered with any other *result*: many servers
//! answer every method they do not know with `{}` (the official conformance
//! suite's mock servers do), and rmcp then gives up with "expect initialized
//! result, but received EmptyResult". [`DiscoverGuard`] sits between rmcp and
//! the transport and turns such an answer into the `-32601 method not found`
//! a server without `server/discover` should have sent, so the fallback runs
//! on the same connection (no second process, no second TCP connection).

use rmcp::{
    RoleClient,
    model::{
        ClientJsonRpcMessage, ClientRequest, ErrorCode, ErrorData, ProtocolVersion, RequestId,
        ServerJsonRpcMessage, ServerResult,
    },
    service::{
        ClientInitializeError, ClientLifecycleMode, ClientServiceExt, RunningService, Service,
    },
    transport::Transport,
};

/// Starts `service` over `transport`: `server/discover` at the latest
/// version, else `initialize` at the latest version that has it.
pub(in crate::pool) async fn start<S, T>(
    service: S,
    transport: T,
) -> Result<RunningService<RoleClient, S>, ClientInitializeError>
where
    S: Service<RoleClient>,
    T: Transport<RoleClient> + 'static,
{
    let lifecycle = ClientLifecycleMode::Auto {
        preferred_versions: vec![ProtocolVersion::LATEST],
        legacy_version: Some(ProtocolVersion::LATEST_WITH_INITIALIZE),
    };
    service
        .serve_with_lifecycle(DiscoverGuard::new(transport), lifecycle)
        .await
}

/// A transport that makes an answer to `server/discover` which is not a
/// discover result look like the error a legacy server sends. Once the
/// handshake is over it only forwards (one branch per message).
pub(in crate::pool) struct DiscoverGuard<T> {
    /// The transport it forwards to.
    inner: T,
    /// The id of the `server/discover` request whose answer is awaited.
    awaiting: Option<RequestId>,
    /// The handshake is over: nothing is inspected any more.
    done: bool,
}

impl<T> DiscoverGuard<T> {
    /// Guards `inner`'s handshake.
    pub(in crate::pool) fn new(inner: T) -> Self {
        DiscoverGuard {
            inner,
            awaiting: None,
            done: false,
        }
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

impl<T: Transport<RoleClient>> Transport<RoleClient> for DiscoverGuard<T> {
    type Error = T::Error;

    fn name() -> std::borrow::Cow<'static, str> {
        T::name()
    }

    fn send(
        &mut self,
        item: ClientJsonRpcMessage,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        if !self.done {
            self.watch_sent(&item);
        }
        self.inner.send(item)
    }

    async fn receive(&mut self) -> Option<ServerJsonRpcMessage> {
        loop {
            let message = self.inner.receive().await?;
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
        ClientCapabilities, DiscoverRequest, DiscoverRequestParams, EmptyResult, Implementation,
        InitializeRequest, InitializeRequestParams,
    };

    use super::*;

    fn guard_awaiting(id: i64) -> DiscoverGuard<()> {
        let mut guard = DiscoverGuard::new(());
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
}
