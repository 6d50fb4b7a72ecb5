//! `tools/list` and `tools/call` of every client: the rmcp handler's
//! ([`crate::session`]), the stateless endpoint's ([`crate::endpoint`]) and
//! the sessions' calls answered past rmcp ([`crate::direct_sessions`]). A
//! tool is resolved to its upstream within the client's view, checked
//! against the client's rights and rates, called, audited and counted.

use std::time::Instant;

use rmcp::{
    ErrorData,
    model::{
        CallToolRequestParams, CallToolResponse, CallToolResult, ClientCapabilities,
        ListToolsResult, PaginatedRequestParams,
    },
};
use tokio_util::sync::CancellationToken;
use toolbridge::pool::CallOptions;

use crate::{
    audit::{self, Outcome},
    gateway::{Gateway, page, to_mcp_error},
    held_calls,
    identity::ClientIdentity,
    names::Route,
    profile::{self, View, ViewName},
    progress_relay::{ProgressRelay, relaying_progress},
    rate_limits::UpstreamSlot,
    request_errors::cancelled,
    stateless_calls::{held_request, relay_call, tool_request, tool_response},
    trace_context::TraceContext,
    tracing_export::RequestTrace,
};

/// The tools of `view`, a page at a time: `tools/list` of every client
/// (the rmcp handler's and [`crate::endpoint`]'s). In search mode, the
/// search and call tools. Only those `requester`'s client may call
/// ([`crate::rights`]).
pub(crate) async fn list_tools(
    gateway: &Gateway,
    requester: Requester<'_>,
    request: Option<PaginatedRequestParams>,
) -> Result<ListToolsResult, ErrorData> {
    let view = gateway.view(requester.view)?;
    let cursor = request.as_ref().and_then(|r| r.cursor.as_deref());
    let rights = gateway.rights();
    let meta;
    let tools;
    let listed;
    let items: &[rmcp::model::Tool] = if view.searches() {
        // The pair only to a client that may call some tool of the view.
        let any = !rights.has_rules()
            || rights.any(requester.client, &view.name, &*gateway.tools(&view).await);
        meta = if any {
            profile::meta_tools()
        } else {
            Vec::new()
        };
        &meta
    } else {
        gateway.client_listed(&view);
        tools = gateway.tools(&view).await;
        listed = rights.listed(requester.client, &view.name, &tools);
        &listed
    };
    let (tools, next) = page(items, cursor, gateway.page_size())?;
    let mut result = ListToolsResult::with_all_items(tools);
    result.next_cursor = next;
    Ok(result)
}

/// `tools/call` of every client (the rmcp handler's and
/// [`crate::endpoint`]'s): the tool resolved to its upstream within the
/// client's `view` (in search mode, the search answered here and a call
/// through the call tool made as the call of the tool it names), called with
/// `options` (the client's handlers and log level), its progress relayed by
/// `progress`, ended when `ct` is cancelled or the future is dropped; audited
/// (as made by `requester`'s client) and counted either way. A stateless
/// (2026-07-28) client gets an upstream's input requests in the result.
pub(crate) async fn call_tool(
    gateway: &Gateway,
    requester: Requester<'_>,
    request: CallToolRequestParams,
    mut options: CallOptions,
    caller: Caller,
    progress: Option<ProgressRelay>,
    ct: &CancellationToken,
) -> Result<CallToolResponse, ErrorData> {
    let client = requester.client;
    let view = gateway.view(requester.view)?;
    let mut trace =
        gateway
            .tracing()
            .request(client, requester.view, requester.trace, &request.name);
    let (request, through_call_tool) = match unwrap_search(gateway, client, &view, request).await? {
        Unwrapped::Answered(result, outcome) => {
            trace.finish(outcome);
            return Ok(answered_here(result));
        }
        Unwrapped::Call {
            request,
            through_call_tool,
        } => (request, through_call_tool),
    };
    let Some(route) = gateway.resolve_tool(&view, &request.name).await else {
        return unknown_tool(&mut trace, &request.name, through_call_tool);
    };
    let _upstream_slot = admit(gateway, client, &view, &route, ct).await?;
    audit::arguments(&route.server, &route.name, request.arguments.as_ref());
    options_for_upstream(&mut options, &caller, &mut trace, &route);
    // A held call relays its own progress (it outlives this request).
    let (progress, held_progress) = match caller {
        Caller::Stateless { .. } => (None, progress),
        _ => (progress, None),
    };
    let activity = gateway
        .activity()
        .start(&route.server, &route.name, &requester.who());
    let mut audited = Audited {
        gateway,
        route: &route,
        started: Instant::now(),
        outcome: Outcome::Cancelled,
        client,
        activity,
        view: requester.view,
        trace,
    };
    // Pinned here, once: a future this size moved into each layer above
    // was copied each time (docs/performance.md, "Fourth round").
    let call = std::pin::pin!(call_upstream(
        gateway,
        &route,
        request,
        &options,
        caller,
        held_progress
    ));
    let result = tokio::select! {
        result = relaying_progress(progress, gateway.activity().tap(activity), call) => result,
        () = ct.cancelled() => return Err(cancelled()),
    };
    audited.outcome = match &result {
        Ok(CallToolResponse::Complete(r)) if r.is_error == Some(true) => Outcome::ToolError,
        Ok(_) => Outcome::Ok,
        Err(_) => Outcome::Failed,
    };
    result.map(|response| match response {
        CallToolResponse::Complete(mut result) => {
            result
                .result_type
                .get_or_insert(rmcp::model::ResultType::COMPLETE);
            CallToolResponse::Complete(result)
        }
        other => other,
    })
}

/// A call through a view, past search mode.
enum Unwrapped {
    /// Answered here, with the outcome to trace.
    Answered(CallToolResult, Outcome),
    /// The call of a tool of the view: `request`, made through the call
    /// tool when `through_call_tool`.
    Call {
        request: CallToolRequestParams,
        through_call_tool: bool,
    },
}

/// In search mode, the search tool is answered here (with the tools the
/// client may call), and a call of the call tool becomes the call of the
/// tool it names (one that names none properly is answered here, for the
/// model to read). Any other call goes on as it is.
async fn unwrap_search(
    gateway: &Gateway,
    client: Option<&ClientIdentity>,
    view: &View,
    request: CallToolRequestParams,
) -> Result<Unwrapped, ErrorData> {
    if !view.searches() {
        return Ok(Unwrapped::Call {
            request,
            through_call_tool: false,
        });
    }
    match request.name.as_ref() {
        toolbridge::adapter::search::SEARCH_TOOL => {
            let arguments = request.arguments.unwrap_or_default();
            if client.is_none() {
                over_rate(gateway, None)?;
            }
            let rights = gateway.rights();
            let result = gateway.tools(view).await.search_where(&arguments, |route| {
                rights.check(client, &view.name, route).is_ok()
            });
            Ok(Unwrapped::Answered(result, Outcome::Ok))
        }
        toolbridge::adapter::search::CALL_TOOL => Ok(match profile::unwrap_call(request) {
            Ok(inner) => Unwrapped::Call {
                request: inner,
                through_call_tool: true,
            },
            Err(message) => Unwrapped::Answered(profile::error_result(message), Outcome::ToolError),
        }),
        _ => Ok(Unwrapped::Call {
            request,
            through_call_tool: false,
        }),
    }
}

/// A result the gateway answers itself: complete, nothing to wait for.
fn answered_here(mut result: CallToolResult) -> CallToolResponse {
    result.result_type = Some(rmcp::model::ResultType::COMPLETE);
    CallToolResponse::Complete(result)
}

/// The answer to a call of tool `name`, which the view does not have:
/// through the call tool it is the model's mistake, in a result for the
/// model to read; else the client's, an invalid-params error.
fn unknown_tool(
    trace: &mut RequestTrace,
    name: &str,
    through_call_tool: bool,
) -> Result<CallToolResponse, ErrorData> {
    if through_call_tool {
        trace.finish(Outcome::ToolError);
        return Ok(answered_here(profile::error_result(format!(
            "no tool is named `{name}`; search_tools gives the names of the tools there are"
        ))));
    }
    Err(ErrorData::invalid_params(
        format!("the gateway has no tool named {name:?}; list the tools to see their names"),
        None,
    ))
}

/// Lets the call of `route` go ahead: rights always; rates here over stdio
/// only (over HTTP they were taken before the request was dispatched,
/// `admission`); then a place among the calls its upstream may have at
/// once, held for the call. A refusal is audited; a cancelled wait ends it.
async fn admit(
    gateway: &Gateway,
    client: Option<&ClientIdentity>,
    view: &View,
    route: &Route,
    ct: &CancellationToken,
) -> Result<Option<UpstreamSlot>, ErrorData> {
    let refused = |error: ErrorData| {
        audit::call(
            &route.server,
            &route.name,
            std::time::Duration::ZERO,
            Outcome::Refused,
            client,
            view.name.profile_name(),
        );
        error
    };
    gateway
        .rights()
        .check(client, &view.name, route)
        .map_err(|denied| refused(denied.error()))?;
    if client.is_none() {
        over_rate(gateway, Some(route))?;
    }
    tokio::select! {
        slot = gateway.rate_limits().enter_upstream(&route.server) => {
            slot.map_err(|limited| refused(limited.error()))
        }
        () = ct.cancelled() => Err(cancelled()),
    }
}

/// `options` as `route`'s upstream is to get them from `caller`: the W3C
/// trace context in its request's `_meta`, and what this client can be
/// asked (a 2026-07-28 upstream is told that, not what the gateway's pool
/// could answer for anyone), its questions relayed in the result unless
/// the client has a session to ask them on.
fn options_for_upstream(
    options: &mut CallOptions,
    caller: &Caller,
    trace: &mut RequestTrace,
    route: &Route,
) {
    options.meta = trace.upstream(&route.server, &route.name);
    options.client_capabilities = Some(match caller {
        Caller::Session => options
            .client_features
            .as_ref()
            .map(toolbridge::pool::ClientFeatures::capabilities)
            .unwrap_or_default(),
        Caller::Stateless { declared } => declared.as_deref().cloned().unwrap_or_default(),
        Caller::Direct => ClientCapabilities::default(),
    });
    options.relay_input_required = !matches!(caller, Caller::Session);
}

/// The call of `route`'s tool upstream, as `caller` makes it: through the
/// pool with a session; held open while its questions go back in results
/// for a stateless client that can be asked ([`held_calls`], its progress
/// relayed by `held_progress`); else relayed as it is.
async fn call_upstream(
    gateway: &Gateway,
    route: &Route,
    request: CallToolRequestParams,
    options: &CallOptions,
    caller: Caller,
    held_progress: Option<ProgressRelay>,
) -> Result<CallToolResponse, ErrorData> {
    let pool = gateway.pool();
    match caller {
        Caller::Session => pool
            .call_tool(
                &route.server,
                &route.name,
                request.arguments,
                options.clone(),
            )
            .await
            .map(CallToolResponse::Complete)
            .map_err(to_mcp_error),
        Caller::Stateless { declared } => {
            let held = held_calls::Client {
                declared: declared.as_deref(),
                progress: held_progress.as_ref(),
            };
            let request = tool_request(&route.name, request);
            let result =
                held_request(gateway, pool, &route.server, request, options.clone(), held).await?;
            tool_response(&route.server, result)
        }
        Caller::Direct => relay_call(pool, &route.server, &route.name, request, options).await,
    }
}

/// A call of the stdio client (no HTTP identity) taken from the rate
/// limits' buckets: `route`'s tool, or the search tool (`None`).
fn over_rate(gateway: &Gateway, route: Option<&Route>) -> Result<(), ErrorData> {
    let limits = gateway.rate_limits();
    if !limits.limits_calls() {
        return Ok(());
    }
    let tool = route.map(|r| format!("{}__{}", r.server, r.name));
    limits
        .take(&ClientIdentity::stdio(), tool.as_deref())
        .map_err(|limited| limited.error())
}

/// A call's audit line and metrics, written when it ends: with the outcome
/// set, or as cancelled when the call is dropped mid-way (its client went
/// away).
struct Audited<'a> {
    gateway: &'a Gateway,
    route: &'a Route,
    started: Instant,
    outcome: Outcome,
    client: Option<&'a ClientIdentity>,
    /// The call's id in the page's [`crate::activity`].
    activity: u64,
    /// The view it was made through (its profile, for the audit line and
    /// the metrics).
    view: &'a ViewName,
    /// Its spans, ended with the outcome.
    trace: RequestTrace,
}

impl Drop for Audited<'_> {
    fn drop(&mut self) {
        let took = self.started.elapsed();
        let (server, tool) = (&self.route.server, &self.route.name);
        let profile = self.view.profile_name();
        audit::call(server, tool, took, self.outcome, self.client, profile);
        self.trace.finish(self.outcome);
        let labels = (audit::who(self.client).1, profile.unwrap_or(""));
        self.gateway
            .activity()
            .finish(self.activity, self.outcome, took);
        self.gateway
            .metrics()
            .call(server, tool, labels, took, self.outcome != Outcome::Ok);
    }
}

/// Who makes a call, and so how an upstream's questions mid-call reach them.
pub(crate) enum Caller {
    /// A client with a session: questions go to its peer.
    Session,
    /// A stateless (2026-07-28) client that `declared` it can be asked
    /// something (elicitation, sampling, roots in its request's `_meta`), or
    /// that answers questions (a retry with a `requestState`): questions
    /// come back in an `InputRequiredResult`, the upstream call held open
    /// meanwhile ([`held_calls`]).
    Stateless {
        declared: Option<Box<ClientCapabilities>>,
    },
    /// A stateless client that declares nothing it could be asked and
    /// resumes nothing: an upstream's own input-required result goes back
    /// as it came, nothing is held.
    Direct,
}

/// Who makes a call, and through which view of the gateway.
#[derive(Clone, Copy)]
pub(crate) struct Requester<'a> {
    /// The view the client reaches: every server, or a profile.
    pub view: &'a ViewName,
    /// Who the client is, where the HTTP layer knows it.
    pub client: Option<&'a ClientIdentity>,
    /// The application, as its `clientInfo` names it, where known (the
    /// page's Activity shows it).
    pub app: Option<&'a str>,
    /// The W3C trace context the client sent with the request.
    pub trace: Option<&'a TraceContext>,
}

impl Requester<'_> {
    /// Who makes the call, as the page's Activity names them: the
    /// application and the client, as far as known.
    fn who(&self) -> String {
        match (self.app, self.client) {
            (Some(app), Some(c)) => format!("{app} ({})", c.name),
            (Some(app), None) => app.to_owned(),
            (None, Some(c)) => c.name.clone(),
            (None, None) => "local".to_owned(),
        }
    }
}
