//! [`Traced`]: a span for every request a client sends the gateway's MCP
//! server, not only `tools/call` (which `tool_calls::call_tool`
//! traces itself, with its upstream call): `initialize`, `tools/list`,
//! `prompts/get`, `resources/read`, `completion/complete`... each a span
//! of kind server named as the OpenTelemetry MCP conventions name it
//! (`prompts/get NAME`, `resources/read`), with the client, its kind and
//! the profile it reached ([`crate::tracing_export`]), ended ok or as an
//! error carrying the JSON-RPC error (a client that goes away mid-request:
//! cancelled, not an error). While it is served the span is the task's
//! current OpenTelemetry context, so the request the gateway sends an
//! upstream for it (`session`'s `forward`) is its child
//! (`Tracing::upstream`).
//!
//! A wrapper of the session's handler rather than a line in each of its
//! methods: rmcp's HTTP service takes a [`ServerHandler`], and the one
//! place every request passes (`Service::handle_request`) is rmcp's own
//! dispatch. Every method is forwarded as rmcp's own wrappers (`Box`,
//! `Arc`) forward them; `subscriptions/listen`, a stream that lasts as long
//! as the client listens, gets no span.
//!
//! With tracing off a request pays one branch.

// Logging and resources/subscribe are deprecated by SEP-2577 / SEP-2567 in
// rmcp 3.11, but 2025-11-25 clients use them.
#![allow(deprecated)]

use std::{borrow::Cow, future::Future};

use opentelemetry::{KeyValue, trace::FutureExt as _};
use rmcp::{
    ErrorData, RoleServer, ServerHandler,
    model::{
        CallToolRequestParams, CallToolResponse, CancelTaskParams, CancelledNotificationParam,
        CompleteRequestParams, CompleteResult, CustomNotification, CustomRequest, CustomResult,
        DiscoverResult, GetPromptRequestParams, GetPromptResponse, GetSkillRequestParams,
        GetSkillResult, GetTaskParams, GetTaskResult, InitializeRequestParams, InitializeResult,
        ListPromptsResult, ListResourceTemplatesResult, ListResourcesResult, ListSkillsResult,
        ListToolsResult, PaginatedRequestParams, ProgressNotificationParam, ProtocolVersion,
        ReadResourceDirectoryRequestParams, ReadResourceDirectoryResult, ReadResourceRequestParams,
        ReadResourceResponse, ServerConfig, SetLevelRequestParams, SubscribeRequestParams,
        SubscriptionFilter, Tool, UnsubscribeRequestParams, UpdateTaskParams,
    },
    service::{NotificationContext, RequestContext, SubscriptionContext},
};

use crate::{
    gateway::Gateway,
    identity::ClientIdentity,
    profile::ViewName,
    trace_context::TraceContext,
    tracing_export::{RequestTrace, Served},
};

/// `handler` (a session) with a span per request of its client.
#[derive(Clone)]
pub struct Traced<H> {
    handler: H,
    gateway: Gateway,
    view: ViewName,
}

impl<H> Traced<H> {
    /// `handler`, serving `view` of `gateway`, traced.
    pub fn new(handler: H, gateway: Gateway, view: ViewName) -> Traced<H> {
        Traced {
            handler,
            gateway,
            view,
        }
    }

    /// The span of the request of `context`, `method` about `target`, with
    /// the attributes `more` gives (only made when tracing is on).
    fn span(
        &self,
        method: &'static str,
        target: Option<&str>,
        context: &RequestContext<RoleServer>,
        more: impl FnOnce() -> Vec<KeyValue>,
    ) -> RequestTrace {
        let tracing = self.gateway.tracing();
        let incoming = tracing
            .enabled()
            .then(|| TraceContext::incoming(Some(&context.meta.0), headers(context)))
            .flatten();
        let request = Served {
            method,
            target,
            client: ClientIdentity::of_rmcp(&context.extensions),
            view: &self.view,
            incoming: incoming.as_ref(),
        };
        tracing.served(request, more)
    }
}

/// The HTTP headers of the request of `context` (none over stdio).
fn headers(context: &RequestContext<RoleServer>) -> Option<&http::HeaderMap> {
    context
        .extensions
        .get::<http::request::Parts>()
        .map(|p| &p.headers)
}

/// The client's trace context of the request of `context`: for the
/// upstream request, passed on as it came when tracing is off.
pub(crate) fn incoming(context: &RequestContext<RoleServer>) -> Option<TraceContext> {
    TraceContext::incoming(Some(&context.meta.0), headers(context))
}

/// Serves `request` within `trace`: its span current meanwhile, ended with
/// the result (as cancelled when the future is dropped first).
async fn serve<T>(
    trace: RequestTrace,
    request: impl Future<Output = Result<T, ErrorData>>,
) -> Result<T, ErrorData> {
    let Some(current) = trace.context() else {
        return request.await;
    };
    let mut trace = Ending(trace);
    let result = request.with_context(current).await;
    trace.0.finish_with(&result);
    result
}

/// A request's trace, ended as cancelled when dropped unfinished.
struct Ending(RequestTrace);

impl Drop for Ending {
    fn drop(&mut self) {
        self.0.finish(crate::audit::Outcome::Cancelled);
    }
}

fn none() -> Vec<KeyValue> {
    Vec::new()
}

impl<H: ServerHandler> ServerHandler for Traced<H> {
    async fn ping(&self, context: RequestContext<RoleServer>) -> Result<(), ErrorData> {
        let trace = self.span("ping", None, &context, none);
        serve(trace, self.handler.ping(context)).await
    }

    async fn initialize(
        &self,
        request: InitializeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<InitializeResult, ErrorData> {
        let trace = self.span("initialize", None, &context, none);
        serve(trace, self.handler.initialize(request, context)).await
    }

    fn negotiate_initialize(
        &self,
        request: &InitializeRequestParams,
    ) -> Result<InitializeResult, ErrorData> {
        self.handler.negotiate_initialize(request)
    }

    fn supported_protocol_versions(&self) -> Cow<'static, [ProtocolVersion]> {
        self.handler.supported_protocol_versions()
    }

    async fn discover(
        &self,
        context: RequestContext<RoleServer>,
    ) -> Result<DiscoverResult, ErrorData> {
        let trace = self.span("server/discover", None, &context, none);
        serve(trace, self.handler.discover(context)).await
    }

    async fn complete(
        &self,
        request: CompleteRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CompleteResult, ErrorData> {
        let trace = self.span("completion/complete", None, &context, none);
        serve(trace, self.handler.complete(request, context)).await
    }

    async fn set_level(
        &self,
        request: SetLevelRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        let trace = self.span("logging/setLevel", None, &context, none);
        serve(trace, self.handler.set_level(request, context)).await
    }

    async fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, ErrorData> {
        let name = request.name.clone();
        let trace = self.span("prompts/get", Some(&name), &context, || {
            vec![KeyValue::new("gen_ai.prompt.name", name.clone())]
        });
        serve(trace, self.handler.get_prompt(request, context)).await
    }

    async fn list_prompts(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, ErrorData> {
        let trace = self.span("prompts/list", None, &context, none);
        serve(trace, self.handler.list_prompts(request, context)).await
    }

    async fn list_resources(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        let trace = self.span("resources/list", None, &context, none);
        serve(trace, self.handler.list_resources(request, context)).await
    }

    async fn list_resource_templates(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, ErrorData> {
        let trace = self.span("resources/templates/list", None, &context, none);
        serve(
            trace,
            self.handler.list_resource_templates(request, context),
        )
        .await
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        let trace = self.span("resources/read", None, &context, || {
            vec![KeyValue::new("mcp.resource.uri", request.uri.clone())]
        });
        serve(trace, self.handler.read_resource(request, context)).await
    }

    fn accepted_subscription_filter(
        &self,
        requested: &SubscriptionFilter,
    ) -> Option<SubscriptionFilter> {
        self.handler.accepted_subscription_filter(requested)
    }

    async fn listen(&self, context: SubscriptionContext) -> Result<(), ErrorData> {
        self.handler.listen(context).await
    }

    async fn subscribe(
        &self,
        request: SubscribeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        let trace = self.span("resources/subscribe", None, &context, || {
            vec![KeyValue::new("mcp.resource.uri", request.uri.clone())]
        });
        serve(trace, self.handler.subscribe(request, context)).await
    }

    async fn unsubscribe(
        &self,
        request: UnsubscribeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        let trace = self.span("resources/unsubscribe", None, &context, || {
            vec![KeyValue::new("mcp.resource.uri", request.uri.clone())]
        });
        serve(trace, self.handler.unsubscribe(request, context)).await
    }

    /// Traced by the call itself (its span and its upstream call's).
    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        self.handler.call_tool(request, context).await
    }

    async fn list_tools(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let trace = self.span("tools/list", None, &context, none);
        serve(trace, self.handler.list_tools(request, context)).await
    }

    fn get_tool(&self, name: &str) -> Option<Tool> {
        self.handler.get_tool(name)
    }

    async fn on_custom_request(
        &self,
        request: CustomRequest,
        context: RequestContext<RoleServer>,
    ) -> Result<CustomResult, ErrorData> {
        // The method is the client's: not a span name of its choosing.
        let trace = self.span("custom", None, &context, none);
        serve(trace, self.handler.on_custom_request(request, context)).await
    }

    async fn on_cancelled(
        &self,
        notification: CancelledNotificationParam,
        context: NotificationContext<RoleServer>,
    ) {
        self.handler.on_cancelled(notification, context).await
    }

    async fn on_progress(
        &self,
        notification: ProgressNotificationParam,
        context: NotificationContext<RoleServer>,
    ) {
        self.handler.on_progress(notification, context).await
    }

    async fn on_initialized(&self, context: NotificationContext<RoleServer>) {
        self.handler.on_initialized(context).await
    }

    async fn on_roots_list_changed(&self, context: NotificationContext<RoleServer>) {
        self.handler.on_roots_list_changed(context).await
    }

    async fn on_custom_notification(
        &self,
        notification: CustomNotification,
        context: NotificationContext<RoleServer>,
    ) {
        self.handler
            .on_custom_notification(notification, context)
            .await
    }

    fn get_info(&self) -> ServerConfig {
        self.handler.get_info()
    }

    async fn get_task(
        &self,
        request: GetTaskParams,
        context: RequestContext<RoleServer>,
    ) -> Result<GetTaskResult, ErrorData> {
        let trace = self.span("tasks/get", None, &context, none);
        serve(trace, self.handler.get_task(request, context)).await
    }

    async fn update_task(
        &self,
        request: UpdateTaskParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        let trace = self.span("tasks/update", None, &context, none);
        serve(trace, self.handler.update_task(request, context)).await
    }

    async fn cancel_task(
        &self,
        request: CancelTaskParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        let trace = self.span("tasks/cancel", None, &context, none);
        serve(trace, self.handler.cancel_task(request, context)).await
    }

    async fn list_skills(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListSkillsResult, ErrorData> {
        let trace = self.span("skills/list", None, &context, none);
        serve(trace, self.handler.list_skills(request, context)).await
    }

    async fn get_skill(
        &self,
        request: GetSkillRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<GetSkillResult, ErrorData> {
        let trace = self.span("skills/get", None, &context, none);
        serve(trace, self.handler.get_skill(request, context)).await
    }

    async fn read_resource_directory(
        &self,
        request: ReadResourceDirectoryRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceDirectoryResult, ErrorData> {
        let trace = self.span("resources/directory/read", None, &context, || {
            vec![KeyValue::new("mcp.resource.uri", request.uri.clone())]
        });
        serve(
            trace,
            self.handler.read_resource_directory(request, context),
        )
        .await
    }
}
