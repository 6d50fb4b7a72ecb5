//! The `/mcp` endpoint (or a profile's `/mcp/NAME`): each POST counted
//! against its client's caps ([`crate::request_caps`]) and rights
//! ([`crate::admission`]), then answered in one of three lanes: a stateless
//! (2026-07-28) `tools/call` or `tools/list` here, without a per-request
//! rmcp service ([`crate::lean_requests`]); a session's plain `tools/call`
//! past rmcp's session worker ([`crate::direct_sessions`]); everything
//! else by rmcp's streamable HTTP service, unchanged.
//!
//! rmcp's streamable HTTP server serves each stateless request by starting a
//! whole service for it (a peer, its channels, a serve loop and a handler
//! task), which was most of the gateway's time per call. Here the JSON-RPC
//! body is parsed once and handed to the same functions the rmcp handler
//! ([`crate::session`]) calls ([`crate::tool_calls`]); the answer goes back
//! as `application/json` ([`crate::lean_answers`]).
//!
//! Progress and log messages of a stateless call (which rmcp sends on the
//! request's event stream) are not lost: when one comes before the result,
//! the answer is an event stream after all, with the messages in order and
//! then the result, as rmcp would send it. (rmcp's client puts a progress
//! token on every request, so a token alone cannot mean "stream this".)

// Logging is deprecated by SEP-2577 (rmcp 3.11 warns), but 2026-07-28
// clients still ask for log messages in a request's `_meta`.
#![allow(deprecated)]

use std::sync::Arc;

use axum::{
    body::Body,
    response::{IntoResponse, Response},
};
use futures::StreamExt;
use http::{Request, StatusCode};
use rmcp::{
    model::{
        CallToolRequestParams, ProgressNotification, ProgressNotificationParam, ProgressToken,
        RequestId, ServerJsonRpcMessage, ServerNotification, ServerResult,
    },
    transport::streamable_http_server::{
        StreamableHttpService, session::local::LocalSessionManager,
    },
};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;
use toolbridge::pool::{CallOptions, ClientFeatures};

use crate::{
    Gateway,
    direct_sessions::{self, DirectCall, DirectSessions, Taken},
    identity::ClientIdentity,
    lean_answers::{Outbox, Pending, event_stream, finished, json_answer},
    lean_requests::{Lean, lean_headers, parse, read_body},
    limits,
    profile::ViewName,
    progress_relay::ProgressRelay,
    request_caps::{Admitted, admit, is_event_stream},
    session,
    session_owners::SessionOwners,
    tool_calls::{self, Caller},
    trace_context::TraceContext,
};

/// The header naming a 2025-11-25 client's session.
const SESSION_HEADER: &str = "mcp-session-id";

/// rmcp's streamable HTTP service as the gateway configures it.
pub type RmcpService =
    StreamableHttpService<crate::request_spans::Traced<session::Session>, LocalSessionManager>;

/// The `/mcp` endpoint (or a profile's `/mcp/NAME`): stateless calls
/// answered here, the rest by rmcp.
#[derive(Clone)]
pub struct Endpoint {
    gateway: Gateway,
    view: ViewName,
    rmcp: Arc<RmcpService>,
    owners: Arc<SessionOwners>,
    direct: Arc<DirectSessions>,
}

/// Who answers a request.
enum Lane {
    /// This module.
    Lean(Lean),
    /// rmcp's service, with the request as it came (its body already read
    /// when it was looked at).
    Rmcp(Request<Body>),
    /// A session's `tools/call`, past rmcp's session ([`crate::direct_sessions`]).
    Session(Box<DirectCall>),
}

impl Endpoint {
    /// The endpoint of `gateway`'s `view` in front of `rmcp` (whose
    /// sessions have the same view).
    pub fn new(
        gateway: Gateway,
        view: ViewName,
        rmcp: RmcpService,
        owners: SessionOwners,
        direct: Arc<DirectSessions>,
    ) -> Endpoint {
        Endpoint {
            gateway,
            view,
            rmcp: Arc::new(rmcp),
            owners: Arc::new(owners),
            direct,
        }
    }

    /// Answers one HTTP request to `/mcp`, within the caps of its client
    /// ([`crate::limits`]).
    pub async fn handle(self, request: Request<Body>) -> Response {
        let client = ClientIdentity::of(request.extensions()).cloned();
        let session = request
            .headers()
            .get(SESSION_HEADER)
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned);
        if let (Some(id), Some(client)) = (&session, &client)
            && !self.owners.permits(id, &client.key()).await
        {
            // As rmcp answers a session it does not know.
            return (StatusCode::NOT_FOUND, "Not Found: Session not found").into_response();
        }
        let (request, admitted) = match admit(self.gateway.caps(), request).await {
            Ok(admitted) => admitted,
            Err(refused) => return refused,
        };
        // The rights and rates of a `tools/call` ([`crate::admission`]).
        let request = match crate::admission::check(
            &self.gateway,
            &self.view,
            client.as_ref(),
            request,
        )
        .await
        {
            Ok(request) => request,
            Err(refused) => return refused,
        };
        let (opening, call) = match admitted {
            Admitted::Free => (None, None),
            Admitted::Session(slot) => (Some(slot), None),
            Admitted::Call(slot) => (None, Some(slot)),
        };
        let lane = match &session {
            Some(id) if self.direct.knows(id) => {
                match direct_sessions::take(&self.direct, id, request).await {
                    Ok(Taken::Call(call)) => Ok(Lane::Session(Box::new(call))),
                    Ok(Taken::Rmcp(request)) => Ok(Lane::Rmcp(request)),
                    Err(refused) => Err(refused),
                }
            }
            Some(_) => Ok(Lane::Rmcp(request)),
            None => lane(request).await,
        };
        let response = match lane {
            Ok(Lane::Lean(lean)) => self.answer(lean, client).await,
            Ok(Lane::Session(direct)) => direct.answer(client, call.clone()).await,
            // Boxed: rmcp's service future (~6 KiB) would sit in every
            // request's future, which axum moves into a box of its own.
            Ok(Lane::Rmcp(request)) => {
                let rmcp = Box::pin(self.rmcp.handle(request));
                let response = match opening {
                    Some(slot) => limits::opening(slot, rmcp).await.map(Body::new),
                    None => rmcp.await.map(Body::new),
                };
                if session.is_none()
                    && let Some(client) = client
                    && let Some(opened) = response
                        .headers()
                        .get(SESSION_HEADER)
                        .and_then(|v| v.to_str().ok())
                {
                    self.owners.opened(opened, client.key()).await;
                }
                response
            }
            Err(response) => response,
        };
        match call {
            // An event stream carries the answer later: the request is in
            // flight until it ends.
            Some(slot) if is_event_stream(&response) => response.map(|body| {
                Body::from_stream(body.into_data_stream().map(move |chunk| {
                    let _in_flight = &slot;
                    chunk
                }))
            }),
            _ => response,
        }
    }

    async fn answer(&self, lean: Lean, client: Option<ClientIdentity>) -> Response {
        match lean {
            Lean::List(id, params, trace) => {
                // Its span, as rmcp's requests get theirs (`request_spans`).
                let served = crate::tracing_export::Served {
                    method: "tools/list",
                    target: None,
                    client: client.as_ref(),
                    view: &self.view,
                    incoming: trace.as_deref(),
                };
                let mut span = self.gateway.tracing().served(served, Vec::new);
                let requester = tool_calls::Requester {
                    view: &self.view,
                    client: client.as_ref(),
                    app: None,
                    trace: None,
                };
                let result = tool_calls::list_tools(&self.gateway, requester, params)
                    .await
                    .map(ServerResult::ListToolsResult);
                span.finish_with(&result);
                json_answer(id, result)
            }
            Lean::Call {
                id,
                params,
                caller,
                log_level,
                progress,
                app,
                trace,
            } => {
                if let Some(app) = &app {
                    self.gateway.connected_clients().stateless_call(
                        app,
                        &self.view,
                        client.as_ref(),
                    );
                }
                let sender = Sender { client, trace };
                self.call(id, params, caller, log_level, progress, sender)
                    .await
            }
        }
    }

    /// `tools/call`: run as its own task, its progress (under the client's
    /// token) and log messages collected; JSON when the result comes first.
    /// In a task, each wake of the upstream call polls the call alone, not
    /// the whole HTTP connection's future above it (polled inline, a held
    /// call made 10-20% fewer calls per second at 64 in flight,
    /// docs/performance.md). A client that goes away cancels the call,
    /// audited as such.
    async fn call(
        &self,
        id: RequestId,
        params: CallToolRequestParams,
        caller: Caller,
        log_level: Option<rmcp::model::LoggingLevel>,
        progress: Option<ProgressToken>,
        sender: Sender,
    ) -> Response {
        let (outbox, mut messages) = mpsc::unbounded_channel();
        let progress = progress.map(|token| {
            let outbox = outbox.clone();
            ProgressRelay::Direct(Arc::new(move |mut params: ProgressNotificationParam| {
                params.progress_token = token.clone();
                let notification =
                    ServerNotification::ProgressNotification(ProgressNotification::new(params));
                let _ = outbox.send(ServerJsonRpcMessage::notification(notification));
            }))
        });
        let options = CallOptions {
            client_features: Some(ClientFeatures {
                logs: Some(
                    self.gateway
                        .upstream_logs()
                        .tee(Some(Arc::new(Outbox(outbox)))),
                ),
                log_level,
                // A stateless request is a client of its own.
                client: Some(ClientFeatures::new_client()),
                ..ClientFeatures::default()
            }),
            ..CallOptions::default()
        };
        let ct = CancellationToken::new();
        let gateway = self.gateway.clone();
        let view = self.view.clone();
        let task_ct = ct.clone();
        // Boxed: moved into the task's cell by value, the call's state
        // machine (~6 KiB) was copied at the spawn and again as it finished.
        let mut task = tokio::spawn(Box::pin(async move {
            let requester = tool_calls::Requester {
                view: &view,
                client: sender.client.as_ref(),
                app: None,
                trace: sender.trace.as_deref(),
            };
            tool_calls::call_tool(
                &gateway, requester, params, options, caller, progress, &task_ct,
            )
            .await
            .map(ServerResult::from)
        }));
        // Dropped with this future or the event stream (the client went
        // away): the call ends.
        let cancel_on_drop = ct.drop_guard();
        let result = tokio::select! {
            biased;
            Some(first) = messages.recv() => {
                return event_stream(Some(first), Pending {
                    messages,
                    task: Some(task),
                    result: None,
                    id,
                    _cancel_on_drop: cancel_on_drop,
                });
            }
            joined = &mut task => finished(joined),
        };
        match messages.try_recv() {
            // A log message sent just before the result.
            Ok(first) => event_stream(
                Some(first),
                Pending {
                    messages,
                    task: None,
                    result: Some(result),
                    id,
                    _cancel_on_drop: cancel_on_drop,
                },
            ),
            Err(_) => json_answer(id, result),
        }
    }
}

/// Who sent a stateless call: the client, and the trace it is part of.
struct Sender {
    client: Option<ClientIdentity>,
    trace: Option<Box<TraceContext>>,
}

/// Which lane `request` takes; `Err` when its body could not be read.
async fn lane(request: Request<Body>) -> Result<Lane, Response> {
    if !lean_headers(request.method(), request.headers()) {
        return Ok(Lane::Rmcp(request));
    }
    let (parts, body) = request.into_parts();
    let bytes = read_body(body).await?;
    match parse(&parts.headers, &bytes) {
        Some(lean) => Ok(Lane::Lean(lean)),
        None => Ok(Lane::Rmcp(Request::from_parts(parts, Body::from(bytes)))),
    }
}
