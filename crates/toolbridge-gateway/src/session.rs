//! [`Session`]: the MCP server one client talks to. Every request is
//! resolved, within the client's view (`/mcp` or a profile, see
//! [`crate::profile`]), to its upstream server (names and resource routes
//! from [`Gateway`]) and forwarded through that server's pool, with the
//! client's own handlers for what the server asks back.

// Logging and resources/subscribe are deprecated by SEP-2577 / SEP-2567 in
// rmcp 3.11, but 2025-11-25 clients use them.
#![allow(deprecated)]

use std::sync::{Arc, OnceLock};
use toolbridge::lock::LockUnpoisoned as _;

use rmcp::{
    ErrorData, RoleServer, ServerHandler,
    model::{
        CallToolRequestParams, CallToolResponse, CancelTaskParams, ClientRequest, CompleteRequest,
        CompleteRequestParams, CompleteResult, GetPromptRequest, GetPromptRequestParams,
        GetPromptResponse, GetSkillRequestParams, GetSkillResult, GetTaskParams, GetTaskResult,
        Implementation, ListPromptsResult, ListResourceTemplatesResult, ListResourcesResult,
        ListSkillsResult, ListToolsResult, PaginatedRequestParams, ReadResourceRequest,
        ReadResourceRequestParams, ReadResourceResponse, Reference, RequestId, RequestMetaObject,
        ServerCapabilities, ServerConfig, ServerResult, SetLevelRequest, SetLevelRequestParams,
        SubscribeRequestParams, SubscriptionFilter, UnsubscribeRequestParams, UpdateTaskParams,
    },
    service::{NotificationContext, Peer, RequestContext, SubscriptionContext},
};
use tokio_util::sync::CancellationToken;
use toolbridge::pool::{CallOptions, PoolError};

use crate::{
    client_peer::ClientPeer,
    gateway::{Gateway, page, resource_subscriptions::ClientKey, to_mcp_error},
    held_calls,
    identity::ClientIdentity,
    incoming::{Incoming, stateless},
    profile::{View, ViewName},
    progress_relay::{ProgressRelay, relaying_progress},
    request_errors::{cancelled, is_not_found, unexpected},
    session_table::{Registration, SessionTable},
    stateless_calls::held_request,
    subscriptions::Target,
    tool_calls::{Caller, Requester, call_tool, list_tools},
    trace_context::TraceContext,
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
    direct: Option<Arc<SessionTable<Session>>>,
    /// This session's entry in it, from its handshake; gone when rmcp
    /// drops the session.
    registered: Arc<OnceLock<Registration<Session>>>,
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
            session_client: can_be_asked(peer),
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
        let declared = info.as_deref().map(|i| &i.capabilities);
        if crate::gateway_tasks::wanted(declared) {
            let call = crate::gateway_tasks::session_call(&self.view, request, options, &incoming);
            return crate::gateway_tasks::call_tool(&self.gateway, call, ct).await;
        }
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
            .enable_tasks()
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
            && let Some(id) = crate::session_table::session_id(&context.extensions)
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
        if crate::gateway_tasks::wanted(context.client_capabilities().as_ref()) {
            let options = self.call_options(&context);
            return crate::gateway_tasks::call_for(
                &self.gateway,
                &self.view,
                request,
                options,
                &context,
            )
            .await;
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

    async fn get_task(
        &self,
        request: GetTaskParams,
        context: RequestContext<RoleServer>,
    ) -> Result<GetTaskResult, ErrorData> {
        let owner = crate::gateway_tasks::owner_of(&self.view, &context);
        self.gateway.tasks().get(&owner, &request.task_id)
    }

    async fn update_task(
        &self,
        request: UpdateTaskParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        let owner = crate::gateway_tasks::owner_of(&self.view, &context);
        let tasks = self.gateway.tasks();
        tasks.update(&owner, &request.task_id, request.input_responses)
    }

    async fn cancel_task(
        &self,
        request: CancelTaskParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        let owner = crate::gateway_tasks::owner_of(&self.view, &context);
        self.gateway.tasks().cancel(&owner, &request.task_id)
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
        // A skill's file, or an MCP App's ui:// page, renamed for its server
        // (`skills`, `ui_resources`).
        let view = self.view()?;
        let names = self.gateway.pool().server_names();
        let renamed = crate::skills::route(&self.gateway, &view, &request.uri)
            .or_else(|| crate::ui_resources::route(&view.servers(&names), &request.uri));
        if let Some((server, upstream)) = renamed {
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

/// The progress relay of the request of `context`, when its client asked
/// for progress.
fn progress_relay(context: &RequestContext<RoleServer>) -> Option<ProgressRelay> {
    let token = context.meta.get_progress_token()?;
    Some(ProgressRelay::Peer {
        token,
        peer: context.peer.clone(),
    })
}

/// Whether the client of `peer` is a 2025-11-25 session client that a
/// server may ask something mid-call (it declared roots, sampling or
/// elicitation): a server of both generations asks such a client over
/// 2025-11-25 only, so its requests take the upstream's 2025-11-25
/// connection ([`CallOptions::session_client`]). One that declared none
/// keeps the 2026-07-28 one: a second connection (for a stdio upstream, a
/// second process) would give it nothing.
fn can_be_asked(peer: &Peer<RoleServer>) -> bool {
    peer.peer_info().is_some_and(|info| {
        let caps = &info.capabilities;
        info.protocol_version.has_initialize()
            && (caps.roots.is_some() || caps.sampling.is_some() || caps.elicitation.is_some())
    })
}

/// A factory of sessions for rmcp's HTTP service, each noted in `direct`
/// from its handshake.
pub fn factory(
    gateway: Gateway,
    view: ViewName,
    direct: Arc<SessionTable<Session>>,
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
