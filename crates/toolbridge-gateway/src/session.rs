//! [`Session`]: the MCP server one client talks to. Every request is
//! resolved, within the client's view (`/mcp` or a profile, see
//! [`crate::profile`]), to its upstream server (names and resource routes
//! from [`Gateway`]) and forwarded through that server's pool, with the
//! client's own handlers for what the server asks back.

// Logging and resources/subscribe are deprecated by SEP-2577 / SEP-2567 in
// rmcp 3.11, but 2025-11-25 clients use them.
#![allow(deprecated)]

use std::{
    sync::{Arc, OnceLock},
    time::Instant,
};
use toolbridge::lock::LockUnpoisoned as _;

use rmcp::{
    ErrorData, RoleServer, ServerHandler,
    model::{
        CallToolRequest, CallToolRequestParams, CallToolResponse, ClientCapabilities,
        ClientRequest, CompleteRequest, CompleteRequestParams, CompleteResult, GetPromptRequest,
        GetPromptRequestParams, GetPromptResponse, GetSkillRequestParams, GetSkillResult,
        Implementation, ListPromptsResult, ListResourceTemplatesResult, ListResourcesResult,
        ListSkillsResult, ListToolsResult, PaginatedRequestParams, ProgressNotificationParam,
        ProgressToken, ReadResourceRequest, ReadResourceRequestParams, ReadResourceResponse,
        Reference, RequestId, RequestMetaObject, ServerCapabilities, ServerConfig, ServerResult,
        SetLevelRequest, SetLevelRequestParams, SubscribeRequestParams, SubscriptionFilter,
        UnsubscribeRequestParams,
    },
    service::{NotificationContext, Peer, RequestContext, SubscriptionContext},
};
use tokio_util::sync::CancellationToken;
use toolbridge::pool::{CallOptions, PoolError, ProgressForward, forward_progress};

use crate::{
    audit::{self, Outcome},
    client_peer::ClientPeer,
    direct_sessions::{DirectSessions, Registration},
    gateway::{Gateway, page, to_mcp_error},
    held_calls::{self, HeldCall},
    identity::ClientIdentity,
    profile::{self, View, ViewName},
    subscriptions::{ClientKey, Target},
    trace_context::TraceContext,
    tracing_export::RequestTrace,
};

/// One client session (over HTTP: one `Mcp-Session-Id`, or one request of a
/// stateless 2026-07-28 client; over stdio: the one client).
#[derive(Clone)]
pub struct Session {
    gateway: Gateway,
    /// What the client sees: every server, or a profile.
    view: ViewName,
    /// The log level the client asked for (`logging/setLevel`, or on
    /// 2026-07-28 the request's `_meta`): its calls
    /// ask the upstreams for it (on 2026-07-28 each request carries it) and
    /// its log messages are filtered at it.
    log_level: Arc<std::sync::Mutex<Option<rmcp::model::LoggingLevel>>>,
    /// The session as a resource subscriber, from its first subscription;
    /// its subscriptions end when the session does.
    subscriber: Arc<OnceLock<ClientKey>>,
    /// Who this client is to the pool: a server's request is never routed
    /// to another client's call (`ClientFeatures::client`).
    client: u64,
    /// The session's place under the gateway's session caps (HTTP
    /// sessions only), freed when rmcp drops the session.
    _slot: Option<Arc<crate::limits::SessionSlot>>,
    /// The session among the page's connected clients, from its handshake;
    /// marked closed when the session ends.
    connected: Arc<OnceLock<crate::connected_clients::Connected>>,
    /// The endpoint's table of sessions whose `tools/call` is answered
    /// directly ([`crate::direct_sessions`]), HTTP sessions only.
    direct: Option<Arc<DirectSessions>>,
    /// This session's entry in it, from its handshake; gone when rmcp
    /// drops the session.
    registered: Arc<OnceLock<Registration>>,
}

impl Session {
    /// A session on `gateway` with `view`.
    pub fn new(gateway: Gateway, view: ViewName) -> Session {
        Session {
            gateway,
            view,
            log_level: Arc::default(),
            subscriber: Arc::default(),
            client: toolbridge::pool::ClientFeatures::new_client(),
            _slot: None,
            connected: Arc::default(),
            direct: None,
            registered: Arc::default(),
        }
    }

    /// A copy for the direct table: the same client, view and log level,
    /// without what ends with the session (its slot, its place among the
    /// connected clients, its entry), which rmcp's own copy holds.
    fn detached(&self) -> Session {
        Session {
            _slot: None,
            connected: Arc::default(),
            direct: None,
            registered: Arc::default(),
            subscriber: Arc::default(),
            ..self.clone()
        }
    }

    /// The session's view as the config says now.
    fn view(&self) -> Result<View, ErrorData> {
        self.gateway.view(&self.view)
    }

    /// The options of a call made for the request of `context`: its
    /// client's handlers, at its log level.
    fn call_options(&self, context: &RequestContext<RoleServer>) -> CallOptions {
        self.options_for(&context.peer, &context.id, &context.meta)
    }

    /// The options of a call made for request `id` of the client of `peer`,
    /// whose `_meta` is `meta`.
    fn options_for(
        &self,
        peer: &Peer<RoleServer>,
        id: &RequestId,
        meta: &RequestMetaObject,
    ) -> CallOptions {
        let mut features = ClientPeer::features(peer.clone(), Some(id.clone()));
        features.client = Some(self.client);
        features.logs = Some(self.gateway.upstream_logs().tee(features.logs.take()));
        // A 2026-07-28 client names the level in each request's `_meta`.
        features.log_level = meta.log_level().or(*self.log_level.lock_unpoisoned());
        CallOptions {
            client_features: Some(features),
            ..CallOptions::default()
        }
    }

    /// Forwards `request` to `server`, ending it when the client cancels.
    async fn forward(
        &self,
        server: &str,
        request: ClientRequest,
        context: &RequestContext<RoleServer>,
    ) -> Result<ServerResult, ErrorData> {
        let pool = self.gateway.pool();
        let mut options = self.call_options(context);
        // Its span, a child of the client request's ([`crate::request_spans`]).
        let incoming = crate::request_spans::incoming(context);
        let mut span = self
            .gateway
            .tracing()
            .upstream(server, request.method(), incoming);
        options.meta = span.meta();
        let may_ask = matches!(
            request,
            ClientRequest::GetPromptRequest(_) | ClientRequest::ReadResourceRequest(_)
        );
        if may_ask && stateless(context) {
            // As a stateless client's tool call: its upstream's questions
            // come back in the result ([`held_calls`]).
            options.relay_input_required = true;
            let declared = context.client_capabilities();
            let progress = progress_relay(context);
            let client = held_calls::Client {
                declared: declared.as_ref(),
                progress: progress.as_ref(),
            };
            return tokio::select! {
                result = span.around(held_request(&self.gateway, pool, server, request, options, client)) => {
                    result.map(stamp_complete)
                }
                () = context.ct.cancelled() => Err(cancelled()),
            };
        }
        tokio::select! {
            result = relaying_progress(progress_relay(context), None, span.around(pool.request(server, request, &options))) => {
                result.map(stamp_complete).map_err(to_mcp_error)
            }
            () = context.ct.cancelled() => Err(cancelled()),
        }
    }

    /// Forwards `request` to each of `servers` until one knows the resource
    /// (an error other than "not found" stops there).
    async fn forward_resource(
        &self,
        uri: &str,
        request: impl Fn() -> ClientRequest,
        context: &RequestContext<RoleServer>,
    ) -> Result<ServerResult, ErrorData> {
        let servers = self.gateway.servers_for_uri(&self.view()?, uri).await;
        let mut last = None;
        for server in &servers {
            match self.forward(server, request(), context).await {
                Ok(result) => return Ok(result),
                Err(e) if servers.len() > 1 && is_not_found(&e) => last = Some(e),
                Err(e) => return Err(e),
            }
        }
        Err(last.unwrap_or_else(|| {
            ErrorData::resource_not_found(
                format!("no server of the gateway has resource {uri}"),
                None,
            )
        }))
    }
}

impl Session {
    /// A `tools/call` of this session's client, as
    /// [`ServerHandler::call_tool`] makes it, taken past rmcp's session
    /// machinery ([`crate::direct_sessions`]); ended when `ct` is
    /// cancelled.
    pub(crate) async fn call_tool_directly(
        &self,
        incoming: Incoming<'_>,
        request: CallToolRequestParams,
        ct: &CancellationToken,
    ) -> Result<CallToolResponse, ErrorData> {
        self.gateway.connected_clients().called(self.client);
        let trace = TraceContext::incoming(Some(&incoming.meta.0), Some(incoming.headers));
        let info = incoming.peer.peer_info();
        let requester = Requester {
            view: &self.view,
            client: incoming.client,
            app: info.as_deref().map(|i| i.client_info.name.as_str()),
            trace: trace.as_ref(),
        };
        let options = self.options_for(incoming.peer, incoming.id, incoming.meta);
        call_tool(
            &self.gateway,
            requester,
            request,
            options,
            Caller::Session,
            None,
            ct,
        )
        .await
    }
}

/// A session request taken past rmcp ([`Session::call_tool_directly`]):
/// what rmcp's `RequestContext` would have held.
pub(crate) struct Incoming<'a> {
    /// The session's client.
    pub peer: &'a Peer<RoleServer>,
    /// The request's id.
    pub id: &'a RequestId,
    /// Its `_meta` (no progress token: nothing is sent before the result).
    pub meta: &'a RequestMetaObject,
    /// Its HTTP headers.
    pub headers: &'a http::HeaderMap,
    /// Who sent it, as the HTTP layer knows.
    pub client: Option<&'a ClientIdentity>,
}

impl ServerHandler for Session {
    fn get_info(&self) -> ServerConfig {
        let capabilities = ServerCapabilities::builder()
            .enable_tools()
            .enable_tool_list_changed()
            .enable_prompts()
            .enable_prompts_list_changed()
            .enable_resources()
            .enable_resources_list_changed()
            .enable_resources_subscribe()
            .enable_completions()
            .enable_logging()
            .enable_skills()
            .build();
        ServerConfig::new(capabilities).with_server_info(Implementation::new(
            "toolbridge-gateway",
            env!("CARGO_PKG_VERSION"),
        ))
    }

    fn accepted_subscription_filter(
        &self,
        requested: &SubscriptionFilter,
    ) -> Option<SubscriptionFilter> {
        // Everything asked; a resource no server has gets no updates.
        Some(requested.clone())
    }

    async fn listen(&self, context: SubscriptionContext) -> Result<(), ErrorData> {
        let view = self.view()?;
        let _listening = self
            .gateway
            .listen(self.view.clone(), context.sink().clone());
        // The stream's resource subscriptions end with it (the key drops).
        let subscriber = self.gateway.client_key();
        for uri in context.accepted().resource_subscriptions.iter().flatten() {
            let target = Target::Stream(context.sink().clone());
            if let Err(e) = self
                .gateway
                .subscribe(&view, uri, &subscriber, target)
                .await
            {
                tracing::debug!(uri, error = %e.message, "cannot subscribe to the resource");
            }
        }
        context.cancelled().await;
        Ok(())
    }

    async fn on_initialized(&self, context: NotificationContext<RoleServer>) {
        if let Some(info) = context.peer.peer_info() {
            let identity = ClientIdentity::of_rmcp(&context.extensions);
            self.connected.get_or_init(|| {
                self.gateway.connected_clients().opened(
                    self.client,
                    &info.client_info,
                    info.protocol_version.as_str(),
                    &self.view,
                    identity,
                )
            });
        }
        if let Some(direct) = &self.direct
            && let Some(id) = crate::direct_sessions::session_id(&context.extensions)
        {
            self.registered
                .get_or_init(|| direct.register(id, self.detached(), context.peer.clone()));
        }
        self.gateway
            .register_client(self.view.clone(), context.peer);
    }

    async fn list_tools(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let requester = Requester {
            view: &self.view,
            client: ClientIdentity::of_rmcp(&context.extensions),
            app: None,
            trace: None,
        };
        list_tools(&self.gateway, requester, request).await
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let caller = if stateless(&context) {
            Caller::Stateless {
                declared: context.client_capabilities().map(Box::new),
            }
        } else {
            Caller::Session
        };
        self.gateway.connected_clients().called(self.client);
        if stateless(&context)
            && let Some(app) = context.meta.client_info()
        {
            self.gateway.connected_clients().stateless_call(
                &app,
                &self.view,
                ClientIdentity::of_rmcp(&context.extensions),
            );
        }
        let headers = context
            .extensions
            .get::<http::request::Parts>()
            .map(|p| &p.headers);
        let trace = TraceContext::incoming(Some(&context.meta.0), headers);
        let info = context.peer.peer_info();
        let requester = Requester {
            view: &self.view,
            client: ClientIdentity::of_rmcp(&context.extensions),
            app: info.as_deref().map(|i| i.client_info.name.as_str()),
            trace: trace.as_ref(),
        };
        call_tool(
            &self.gateway,
            requester,
            request,
            self.call_options(&context),
            caller,
            progress_relay(&context),
            &context.ct,
        )
        .await
    }

    async fn list_prompts(
        &self,
        request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, ErrorData> {
        let catalog = self.gateway.prompts(&self.view()?).await;
        let cursor = request.as_ref().and_then(|r| r.cursor.as_deref());
        let (prompts, next) = page(&catalog.items, cursor, self.gateway.page_size())?;
        let mut result = ListPromptsResult::with_all_items(prompts);
        result.next_cursor = next;
        Ok(result)
    }

    async fn get_prompt(
        &self,
        mut request: GetPromptRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, ErrorData> {
        let Some(route) = self
            .gateway
            .resolve_prompt(&self.view()?, &request.name)
            .await
        else {
            return Err(ErrorData::invalid_params(
                format!(
                    "the gateway has no prompt named {:?}; list the prompts to see their names",
                    request.name
                ),
                None,
            ));
        };
        request.name = route.name;
        let request = ClientRequest::GetPromptRequest(GetPromptRequest::new(request));
        match self.forward(&route.server, request, &context).await? {
            ServerResult::GetPromptResult(result) => Ok(GetPromptResponse::Complete(result)),
            ServerResult::InputRequiredResult(result) => {
                Ok(GetPromptResponse::InputRequired(result))
            }
            _ => Err(unexpected(&route.server, "prompts/get")),
        }
    }

    async fn list_resources(
        &self,
        request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        let resources = self.gateway.resources(&self.view()?).await;
        let cursor = request.as_ref().and_then(|r| r.cursor.as_deref());
        let (resources, next) = page(&resources, cursor, self.gateway.page_size())?;
        let mut result = ListResourcesResult::with_all_items(resources);
        result.next_cursor = next;
        Ok(result)
    }

    async fn list_resource_templates(
        &self,
        request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, ErrorData> {
        let templates = self.gateway.resource_templates(&self.view()?).await;
        let cursor = request.as_ref().and_then(|r| r.cursor.as_deref());
        let (templates, next) = page(&templates, cursor, self.gateway.page_size())?;
        let mut result = ListResourceTemplatesResult::with_all_items(templates);
        result.next_cursor = next;
        Ok(result)
    }

    async fn list_skills(
        &self,
        request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListSkillsResult, ErrorData> {
        let skills = crate::skills::list(&self.gateway, &self.view()?).await;
        let cursor = request.as_ref().and_then(|r| r.cursor.as_deref());
        let (skills, next) = page(&skills, cursor, self.gateway.page_size())?;
        let mut result = ListSkillsResult::with_all_items(skills);
        result.next_cursor = next;
        Ok(result)
    }

    async fn get_skill(
        &self,
        request: GetSkillRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<GetSkillResult, ErrorData> {
        let view = self.view()?;
        let options = self.call_options(&context);
        let skill = crate::skills::get(&self.gateway, &view, &request.uri, &options).await?;
        Ok(GetSkillResult::new(skill))
    }

    async fn read_resource(
        &self,
        mut request: ReadResourceRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        // A skill's file, renamed for its server (`skills`).
        if let Some((server, upstream)) =
            crate::skills::route(&self.gateway, &self.view()?, &request.uri)
        {
            let uri = std::mem::replace(&mut request.uri, upstream.clone());
            let request = ClientRequest::ReadResourceRequest(ReadResourceRequest::new(request));
            return match self.forward(&server, request, &context).await? {
                ServerResult::ReadResourceResult(mut result) => {
                    crate::skills::rename_contents(&mut result.contents, &upstream, &uri);
                    Ok(ReadResourceResponse::Complete(result))
                }
                ServerResult::InputRequiredResult(result) => {
                    Ok(ReadResourceResponse::InputRequired(result))
                }
                _ => Err(unexpected(&server, "resources/read")),
            };
        }
        let uri = request.uri.clone();
        let forwarded = self
            .forward_resource(
                &uri,
                || ClientRequest::ReadResourceRequest(ReadResourceRequest::new(request.clone())),
                &context,
            )
            .await?;
        match forwarded {
            ServerResult::ReadResourceResult(result) => Ok(ReadResourceResponse::Complete(result)),
            ServerResult::InputRequiredResult(result) => {
                Ok(ReadResourceResponse::InputRequired(result))
            }
            _ => Err(unexpected(&uri, "resources/read")),
        }
    }

    async fn subscribe(
        &self,
        request: SubscribeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        let view = self.view()?;
        let subscriber = self.subscriber.get_or_init(|| self.gateway.client_key());
        self.gateway
            .subscribe(
                &view,
                &request.uri,
                subscriber,
                Target::Session(context.peer),
            )
            .await
    }

    async fn unsubscribe(
        &self,
        request: UnsubscribeRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        if let Some(subscriber) = self.subscriber.get() {
            self.gateway.unsubscribe(&request.uri, subscriber).await;
        }
        Ok(())
    }

    async fn complete(
        &self,
        mut request: CompleteRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CompleteResult, ErrorData> {
        let view = self.view()?;
        let server = match &mut request.r#ref {
            Reference::Prompt(prompt) => {
                let route = self
                    .gateway
                    .resolve_prompt(&view, &prompt.name)
                    .await
                    .ok_or_else(|| {
                        ErrorData::invalid_params(
                            format!("the gateway has no prompt named {:?}", prompt.name),
                            None,
                        )
                    })?;
                prompt.name = route.name;
                route.server
            }
            Reference::Resource(template) => {
                let servers = self.gateway.servers_for_uri(&view, &template.uri).await;
                servers.into_iter().next().ok_or_else(|| {
                    ErrorData::invalid_params(
                        format!("no server of the gateway has template {}", template.uri),
                        None,
                    )
                })?
            }
            _ => {
                return Err(ErrorData::invalid_params(
                    "the gateway completes prompt and resource template arguments only",
                    None,
                ));
            }
        };
        let request = ClientRequest::CompleteRequest(CompleteRequest::new(request));
        match self.forward(&server, request, &context).await? {
            ServerResult::CompleteResult(result) => Ok(result),
            _ => Err(unexpected(&server, "completion/complete")),
        }
    }

    async fn set_level(
        &self,
        request: SetLevelRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        *self.log_level.lock_unpoisoned() = Some(request.level);
        // Every running upstream of the view that offers logging; the
        // others ignore it.
        let view = self.view()?;
        let pool = self.gateway.pool();
        let options = self.call_options(&context);
        let servers = pool.server_names();
        let servers = servers
            .iter()
            .filter(|server| view.profile.includes_server(server));
        let sends = servers.map(|server| {
            let request = ClientRequest::SetLevelRequest(SetLevelRequest::new(request.clone()));
            let options = &options;
            async move {
                match pool.request(server, request, options).await {
                    Ok(_) => {}
                    Err(PoolError::Server { .. }) => {}
                    Err(e) => tracing::debug!(server, error = %e, "cannot set the log level"),
                }
            }
        });
        futures::future::join_all(sends).await;
        Ok(())
    }
}

/// The tools of `view`, a page at a time: `tools/list` of every client
/// (the rmcp handler's and [`crate::stateless`]'s). In search mode, the
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
/// [`crate::stateless`]'s): the tool resolved to its upstream within the
/// client's `view` (in search mode, the search answered here and a call
/// through the call tool made as the call of the tool it names), called with
/// `options` (the client's handlers and log level), its progress relayed by
/// `progress`, ended when `ct` is cancelled or the future is dropped; audited
/// (as made by `requester`'s client) and counted either way. A stateless
/// (2026-07-28) client gets an upstream's input requests in the result.
pub(crate) async fn call_tool(
    gateway: &Gateway,
    requester: Requester<'_>,
    mut request: CallToolRequestParams,
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
    let mut through_call_tool = false;
    if view.searches() {
        match request.name.as_ref() {
            toolbridge::adapter::search::SEARCH_TOOL => {
                let arguments = request.arguments.unwrap_or_default();
                if client.is_none() {
                    over_rate(gateway, None)?;
                }
                let rights = gateway.rights();
                let mut result = gateway
                    .tools(&view)
                    .await
                    .search_where(&arguments, |route| {
                        rights.check(client, &view.name, route).is_ok()
                    });
                result.result_type = Some(rmcp::model::ResultType::COMPLETE);
                trace.finish(Outcome::Ok);
                return Ok(CallToolResponse::Complete(result));
            }
            toolbridge::adapter::search::CALL_TOOL => match profile::unwrap_call(request) {
                Ok(inner) => {
                    request = inner;
                    through_call_tool = true;
                }
                Err(message) => {
                    let mut result = profile::error_result(message);
                    result.result_type = Some(rmcp::model::ResultType::COMPLETE);
                    trace.finish(Outcome::ToolError);
                    return Ok(CallToolResponse::Complete(result));
                }
            },
            _ => {}
        }
    }
    let Some(route) = gateway.resolve_tool(&view, &request.name).await else {
        if through_call_tool {
            // The model's mistake, for the model to read.
            let mut result = profile::error_result(format!(
                "no tool is named `{}`; search_tools gives the names of the tools there are",
                request.name
            ));
            result.result_type = Some(rmcp::model::ResultType::COMPLETE);
            trace.finish(Outcome::ToolError);
            return Ok(CallToolResponse::Complete(result));
        }
        return Err(ErrorData::invalid_params(
            format!(
                "the gateway has no tool named {:?}; list the tools to see their names",
                request.name
            ),
            None,
        ));
    };
    // Rights always; rates here over stdio only (over HTTP they were
    // taken before the request was dispatched, `admission`).
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
        .check(client, &view.name, &route)
        .map_err(|denied| refused(denied.error()))?;
    if client.is_none() {
        over_rate(gateway, Some(&route))?;
    }
    let pool = gateway.pool();
    let _upstream_slot = tokio::select! {
        slot = gateway.rate_limits().enter_upstream(&route.server) => {
            slot.map_err(|limited| refused(limited.error()))?
        }
        () = ct.cancelled() => return Err(cancelled()),
    };
    audit::arguments(&route.server, &route.name, request.arguments.as_ref());
    // The upstream's W3C trace context, in its request's `_meta`.
    options.meta = trace.upstream(&route.server, &route.name);
    options.relay_input_required = !matches!(caller, Caller::Session);
    // A held call relays its own progress (it outlives this request).
    let (progress, held_progress) = match caller {
        Caller::Stateless { .. } => (None, progress),
        _ => (progress, None),
    };
    let who = match (requester.app, client) {
        (Some(app), Some(c)) => format!("{app} ({})", c.name),
        (Some(app), None) => app.to_owned(),
        (None, Some(c)) => c.name.clone(),
        (None, None) => "local".to_owned(),
    };
    let activity = gateway.activity().start(&route.server, &route.name, &who);
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
    let call = std::pin::pin!(async {
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
                    held_request(gateway, pool, &route.server, request, options.clone(), held)
                        .await?;
                tool_response(&route.server, result)
            }
            Caller::Direct => relay_call(pool, &route.server, &route.name, request, &options).await,
        }
    });
    let result = tokio::select! {
        result = relaying_progress(progress, gateway.activity().tap(activity), call) => result,
        () = ct.cancelled() => return Err(cancelled()),
    };
    audited.outcome = match &result {
        Ok(CallToolResponse::Complete(r)) if r.is_error == Some(true) => Outcome::ToolError,
        Ok(_) => Outcome::Ok,
        Err(_) => Outcome::Failed,
    };
    match result {
        Ok(CallToolResponse::Complete(mut result)) => {
            result
                .result_type
                .get_or_insert(rmcp::model::ResultType::COMPLETE);
            Ok(CallToolResponse::Complete(result))
        }
        other => other,
    }
}

/// A call of the stdio client (no HTTP identity) taken from the rate
/// limits' buckets: `route`'s tool, or the search tool (`None`).
fn over_rate(gateway: &Gateway, route: Option<&crate::names::Route>) -> Result<(), ErrorData> {
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
    route: &'a crate::names::Route,
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

/// Where a request's upstream progress goes, under the client's own
/// progress token.
pub(crate) enum ProgressRelay {
    /// To the client's peer (rmcp's service).
    Peer {
        token: ProgressToken,
        peer: Peer<RoleServer>,
    },
    /// Handed, as it comes, to a forward that puts the client's token on
    /// ([`crate::stateless`]'s answer).
    Direct(ProgressForward),
}

impl ProgressRelay {
    /// Sends `params` on, under the client's token; false once the client
    /// is gone.
    pub(crate) async fn send(&self, mut params: ProgressNotificationParam) -> bool {
        match self {
            ProgressRelay::Peer { token, peer } => {
                params.progress_token = token.clone();
                peer.notify_progress(params).await.is_ok()
            }
            ProgressRelay::Direct(forward) => {
                forward(params);
                true
            }
        }
    }
}

/// The progress relay of the request of `context`, when its client asked
/// for progress.
fn progress_relay(context: &RequestContext<RoleServer>) -> Option<ProgressRelay> {
    let token = context.meta.get_progress_token()?;
    Some(ProgressRelay::Peer {
        token,
        peer: context.peer.clone(),
    })
}

/// Runs `call` relaying its upstream progress to the client under the
/// client's own progress token, when the client asked for progress; the
/// notifications are sent in order, all before the result. `tap` (the
/// page's [`crate::activity`]) sees each one too, asked for or not.
async fn relaying_progress<F: std::future::Future>(
    progress: Option<ProgressRelay>,
    tap: Option<ProgressForward>,
    call: F,
) -> F::Output {
    let relay = match (progress, tap) {
        (None, None) => return call.await,
        (None, Some(tap)) => return forward_progress(tap, call).await,
        (Some(ProgressRelay::Direct(forward)), tap) => {
            return forward_progress(tapped(tap, forward), call).await;
        }
        (Some(relay), tap) => (relay, tap),
    };
    let (relay, tap) = relay;
    // The peer's sends are async: they go through a task, in order.
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<ProgressNotificationParam>();
    let forward: ProgressForward = tapped(
        tap,
        Arc::new(move |params: ProgressNotificationParam| {
            let _ = tx.send(params);
        }),
    );
    let sending = tokio::spawn(async move {
        while let Some(params) = rx.recv().await {
            if !relay.send(params).await {
                break;
            }
        }
    });
    let output = forward_progress(forward, call).await;
    // The forward is gone with the call: the task ends once it has sent
    // what it holds. Bounded, should a client stop reading.
    let _ = tokio::time::timeout(RELAY_DRAIN, sending).await;
    output
}

/// `forward`, after `tap` has seen each notification.
fn tapped(tap: Option<ProgressForward>, forward: ProgressForward) -> ProgressForward {
    match tap {
        None => forward,
        Some(tap) => Arc::new(move |params: ProgressNotificationParam| {
            tap(params.clone());
            forward(params);
        }),
    }
}

/// The longest a call's result waits for its progress to reach the client.
const RELAY_DRAIN: std::time::Duration = std::time::Duration::from_secs(1);

fn cancelled() -> ErrorData {
    ErrorData::internal_error("the client cancelled the request", None)
}

fn unexpected(what: &str, method: &str) -> ErrorData {
    ErrorData::internal_error(
        format!("{what} answered {method} with another kind of result"),
        None,
    )
}

fn is_not_found(error: &ErrorData) -> bool {
    error.code == rmcp::model::ErrorCode::RESOURCE_NOT_FOUND
        || error.code == rmcp::model::ErrorCode::INVALID_PARAMS
}

/// Whether the client of `context` is a stateless (2026-07-28) one: the
/// gateway cannot send it a request mid-call, so an upstream's input
/// requests go back to it in the call's result.
fn stateless(context: &RequestContext<RoleServer>) -> bool {
    context
        .peer
        .peer_info()
        .is_none_or(|info| !info.protocol_version.has_initialize())
}

/// The `tools/call` of `tool` (the upstream's name) with the client's
/// arguments and, on a retry, its answers and the upstream's `requestState`.
fn tool_request(tool: &str, request: CallToolRequestParams) -> ClientRequest {
    let mut params = CallToolRequestParams::new(tool.to_owned());
    params.arguments = request.arguments;
    params.input_responses = request.input_responses;
    params.request_state = request.request_state;
    ClientRequest::CallToolRequest(CallToolRequest::new(params))
}

/// A `tools/call` answer as the tool handler returns it.
fn tool_response(server: &str, result: ServerResult) -> Result<CallToolResponse, ErrorData> {
    match result {
        ServerResult::CallToolResult(result) => Ok(CallToolResponse::Complete(result)),
        ServerResult::InputRequiredResult(result) => Ok(CallToolResponse::InputRequired(result)),
        _ => Err(unexpected(server, "tools/call")),
    }
}

/// `tool` of `server` called for a stateless client: an input-required
/// result (2026-07-28) goes back to the client as it came, and the client's
/// retry (its answers and the upstream's `requestState`) goes on to the
/// upstream, so no call is held open in the gateway.
async fn relay_call(
    pool: &toolbridge::pool::Pool,
    server: &str,
    tool: &str,
    request: CallToolRequestParams,
    options: &CallOptions,
) -> Result<CallToolResponse, ErrorData> {
    let result = pool
        .request(server, tool_request(tool, request), options)
        .await
        .map_err(to_mcp_error)?;
    tool_response(server, result)
}

/// The `requestState` of a retry of `request` (a call, a prompt, a read:
/// the requests an upstream may ask something during) and the answers it
/// brings.
fn retry_of(
    request: &mut ClientRequest,
) -> Option<(&str, &mut Option<rmcp::model::InputResponses>)> {
    let (state, responses) = match request {
        ClientRequest::CallToolRequest(r) => {
            (&r.params.request_state, &mut r.params.input_responses)
        }
        ClientRequest::GetPromptRequest(r) => {
            (&r.params.request_state, &mut r.params.input_responses)
        }
        ClientRequest::ReadResourceRequest(r) => {
            (&r.params.request_state, &mut r.params.input_responses)
        }
        _ => return None,
    };
    Some((state.as_deref()?, responses))
}

/// A stateless client's `request` to `server`: a retry naming a request
/// the gateway holds resumes it with the client's answers; any other
/// request starts (held open whenever its upstream asks the client
/// something mid-way).
async fn held_request(
    gateway: &Gateway,
    pool: &toolbridge::pool::Pool,
    server: &str,
    mut request: ClientRequest,
    options: CallOptions,
    client: held_calls::Client<'_>,
) -> Result<ServerResult, ErrorData> {
    let held = gateway.held_calls();
    let resumed =
        retry_of(&mut request).and_then(|(state, responses)| held.resume(state, responses));
    let call = match resumed {
        Some(call) => call,
        None => {
            let (pool, server) = (pool.clone(), server.to_owned());
            let features = options.client_features.clone().unwrap_or_default();
            HeldCall::start(features, client.declared, move |features| async move {
                let options = CallOptions {
                    client_features: Some(features),
                    ..options
                };
                pool.request(&server, request, &options)
                    .await
                    .map_err(to_mcp_error)
            })
        }
    };
    held_calls::respond(held, call.next(client.progress).await)
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

/// A factory of sessions for rmcp's HTTP service, each noted in `direct`
/// from its handshake.
pub fn factory(
    gateway: Gateway,
    view: ViewName,
    direct: Arc<DirectSessions>,
) -> impl Fn() -> Result<Session, std::io::Error> + Send + Sync {
    move || {
        let mut session = Session::new(gateway.clone(), view.clone());
        session.direct = Some(direct.clone());
        // The `initialize` that opens a session brought its slot.
        session._slot = crate::limits::take_opening().map(Arc::new);
        Ok(session)
    }
}

/// `result` with `resultType: "complete"` where the upstream left it out:
/// 2026-07-28 requires it on every result, and rmcp removes it again for
/// clients of older versions.
fn stamp_complete(mut result: ServerResult) -> ServerResult {
    let result_type = match &mut result {
        ServerResult::CompleteResult(r) => &mut r.result_type,
        ServerResult::GetPromptResult(r) => &mut r.result_type,
        ServerResult::ReadResourceResult(r) => &mut r.result_type,
        ServerResult::CallToolResult(r) => &mut r.result_type,
        _ => return result,
    };
    result_type.get_or_insert(rmcp::model::ResultType::COMPLETE);
    result
}
