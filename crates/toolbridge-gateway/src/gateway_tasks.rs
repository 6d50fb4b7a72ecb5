//! The gateway's own tasks (the `io.modelcontextprotocol/tasks` extension,
//! SEP-2663): any tool of any upstream may run as a task, whether or not
//! its server knows of tasks.
//!
//! A client that declares the extension (in the request's
//! `_meta` capabilities, or at `initialize`) has its `tools/call` started in
//! a job of its own. A call that ends within [`SYNC_WINDOW`](crate::task_store::SYNC_WINDOW) is answered
//! as it would be without tasks (the extension lets a server answer
//! synchronously); a longer one is answered with a task (`resultType:
//! "task"`), which the client follows with `tasks/get` (its result or
//! error inlined once it ended), answers with `tasks/update` when the
//! upstream asked something (`input_required`, the questions in
//! `inputRequests`), and ends with `tasks/cancel` (the upstream call is
//! cancelled: `notifications/cancelled`, or `tasks/cancel` for an upstream
//! task). This is the spec's advice for a tool longer than a client's
//! request timeout ("return a task ID first and provide a polling
//! interface"), done once for every server.
//!
//! An upstream that runs its own tasks (a tool with `execution.taskSupport`)
//! is followed by the pool (`toolbridge::pool`'s task calls, either
//! protocol version) inside the gateway's task: the client sees one task
//! whose id is the gateway's (unique over every server), and its
//! cancellation cancels the upstream's task.
//!
//! Bounded: at most [`MAX_PER_CLIENT`](crate::task_store::MAX_PER_CLIENT) tasks per client (a call past it is
//! answered synchronously); a task that ended (or waits for answers that
//! never come) is forgotten [`TTL`](crate::task_store::TTL) after its last change; a task id is 32
//! random bytes, bound to the client that made it and the view it was made
//! through: any other client asking for it is told it does not exist.
//!
//! Written here rather than taken from rmcp: rmcp 3.11 has the extension's
//! types and routes its methods to the handler, but keeps no tasks.

//!
//! This module is the calls' side (a `tools/call` started as a task, for
//! sessions and stateless clients); the tasks themselves are kept in
//! [`crate::task_store`].

use std::sync::Arc;

use rmcp::{
    RoleServer,
    model::{CallToolRequestParams, CallToolResponse, ClientCapabilities, ErrorData},
    service::RequestContext,
};
use tokio_util::sync::CancellationToken;
use toolbridge::pool::CallOptions;

use crate::{
    gateway::Gateway,
    identity::ClientIdentity,
    profile::ViewName,
    task_store::Run,
    tool_calls::{self, Caller, Requester},
    trace_context::TraceContext,
};

/// A `tools/call` to run as a task: what its every run needs.
pub(crate) struct TaskCall {
    /// The view it was made through.
    pub view: ViewName,
    /// Who made it.
    pub client: Option<ClientIdentity>,
    /// The application, as its `clientInfo` names it.
    pub app: Option<String>,
    /// The client's trace context.
    pub trace: Option<TraceContext>,
    /// The call as the client sent it.
    pub request: CallToolRequestParams,
    /// The client's handlers and log level.
    pub options: CallOptions,
    /// A stateless (2026-07-28) client's declared capabilities: an
    /// upstream's questions become the task's `inputRequests`. `None` for a
    /// session, whose peer is asked.
    pub stateless: Option<Option<ClientCapabilities>>,
}

/// Whether a client with capabilities `declared` asked for tasks.
pub(crate) fn wanted(declared: Option<&ClientCapabilities>) -> bool {
    declared.is_some_and(ClientCapabilities::supports_tasks)
}

/// The owner key of the tasks `client` makes through `view`.
pub(crate) fn owner(view: &ViewName, client: Option<&ClientIdentity>) -> String {
    let who = client.map_or_else(|| "stdio".to_owned(), ClientIdentity::key);
    format!("{view:?}\u{0}{who}")
}

/// The owner key of the tasks of the client of `context` through `view`.
pub(crate) fn owner_of(view: &ViewName, context: &RequestContext<RoleServer>) -> String {
    owner(view, ClientIdentity::of_rmcp(&context.extensions))
}

/// The `tools/call` `request` of the client of `context` (through `view`,
/// with `options`) run as a task: what the rmcp handler
/// ([`crate::session`]) does for a client that asked for tasks.
pub(crate) async fn call_for(
    gateway: &Gateway,
    view: &ViewName,
    request: CallToolRequestParams,
    options: CallOptions,
    context: &RequestContext<RoleServer>,
) -> Result<CallToolResponse, ErrorData> {
    let headers = context
        .extensions
        .get::<http::request::Parts>()
        .map(|p| &p.headers);
    let app = match context.peer.peer_info() {
        Some(info) => Some(info.client_info.name.clone()),
        None => context.meta.client_info().map(|i| i.name),
    };
    let call = TaskCall {
        view: view.clone(),
        client: ClientIdentity::of_rmcp(&context.extensions).cloned(),
        app,
        trace: TraceContext::incoming(Some(&context.meta.0), headers),
        request,
        options,
        stateless: crate::incoming::stateless(context).then(|| context.client_capabilities()),
    };
    call_tool(gateway, call, &context.ct).await
}

/// The `tools/call` `request` of a session's client that declared the
/// extension at `initialize`, taken past rmcp ([`crate::direct_sessions`]),
/// as a task call.
pub(crate) fn session_call(
    view: &ViewName,
    request: CallToolRequestParams,
    options: CallOptions,
    incoming: &crate::incoming::Incoming<'_>,
) -> TaskCall {
    let info = incoming.peer.peer_info();
    TaskCall {
        view: view.clone(),
        client: incoming.client.cloned(),
        app: info.map(|i| i.client_info.name.clone()),
        trace: TraceContext::incoming(Some(&incoming.meta.0), Some(incoming.headers)),
        request,
        options,
        stateless: None,
    }
}

/// `call` run as a task of `gateway` (see the module docs): a plain answer
/// when it ends within [`SYNC_WINDOW`](crate::task_store::SYNC_WINDOW), else the task. `ct` is the
/// request's: cancelled within the window, the call ends.
pub(crate) async fn call_tool(
    gateway: &Gateway,
    call: TaskCall,
    ct: &CancellationToken,
) -> Result<CallToolResponse, ErrorData> {
    let owner = owner(&call.view, call.client.as_ref());
    let mut call = call;
    if let Some(features) = call.options.client_features.as_mut()
        && call.stateless.is_some()
    {
        features.client = Some(gateway.tasks().client_of(&owner));
    }
    let call = Arc::new(call);
    let weak = gateway.downgrade();
    let held = Arc::downgrade(gateway.held_calls());
    let run: Run = Arc::new(move |answers, request_state, ct| {
        let call = call.clone();
        let gateway = weak.upgrade();
        Box::pin(async move {
            let Some(gateway) = gateway else {
                return Err(ErrorData::internal_error("the gateway stopped", None));
            };
            let mut request = call.request.clone();
            if answers.is_some() {
                request.input_responses = answers;
                request.request_state = request_state;
            }
            let caller = match &call.stateless {
                Some(declared) => Caller::Stateless {
                    declared: declared.clone().map(Box::new),
                },
                None => Caller::Session,
            };
            let requester = Requester {
                view: &call.view,
                client: call.client.as_ref(),
                app: call.app.as_deref(),
                trace: call.trace.as_ref(),
            };
            let options = call.options.clone();
            tool_calls::call_tool(&gateway, requester, request, options, caller, None, &ct).await
        })
    });
    gateway.tasks().start(owner, run, held, ct).await
}
