//! The gateway's OpenTelemetry traces: a span per request a client makes
//! (kind server: every `tools/call` here, the other methods through
//! [`crate::request_spans`]) and, inside it, one per request the gateway
//! makes to an upstream for it (kind client), exported over OTLP/HTTP
//! (protobuf) in batches.
//!
//! Where they go, the first set wins:
//! 1. `toolbridge.gateway.tracing.otlpEndpoint` in the config, the
//!    collector's base URL (`/v1/traces` is appended);
//! 2. `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`, the full URL, as given;
//! 3. `OTEL_EXPORTER_OTLP_ENDPOINT`, the base URL (`/v1/traces` appended).
//!
//! With none of them (or with `OTEL_SDK_DISABLED=true`) tracing is off: no
//! exporter, no thread, and a call pays one branch. `OTEL_SERVICE_NAME`
//! names the service (default `toolbridge-gateway`); the SDK reads the
//! other standard variables (`OTEL_EXPORTER_OTLP_TRACES_HEADERS`,
//! `..._TIMEOUT`, `OTEL_RESOURCE_ATTRIBUTES`, `OTEL_BSP_*`).
//!
//! Spans are batched by the SDK's batch processor on its own thread, so a
//! call never waits on the collector; a full queue drops spans, never
//! calls. The export itself runs on the gateway's tokio runtime through
//! the tree's reqwest. A collector that cannot be reached is logged once
//! (a warning, and an info line when it answers again); spans still queued
//! are sent when the gateway stops ([`Tracing::shutdown`]).
//!
//! Attributes: `toolbridge.server`, `toolbridge.tool`, `toolbridge.client`
//! (its name), `toolbridge.client.kind`, `toolbridge.profile` (the profile
//! the client reached, absent at `/mcp`), `toolbridge.outcome`, with the
//! OpenTelemetry MCP conventions' `mcp.method.name`, `gen_ai.tool.name`,
//! `gen_ai.prompt.name`, `mcp.resource.uri` and, on a request that failed,
//! `rpc.response.status_code` (the JSON-RPC error code; the span's status
//! is an error with the message). Never arguments, results, tokens or
//! headers.

use std::{
    borrow::Cow,
    sync::{
        Arc,
        atomic::{AtomicBool, Ordering},
    },
    time::Duration,
};

use opentelemetry::{
    Context, KeyValue,
    trace::{SpanKind, Status, TraceContextExt, Tracer as _, TracerProvider as _},
};
use opentelemetry_http::{Bytes, HttpClient, HttpError, Request, Response};
use opentelemetry_otlp::{Protocol, WithExportConfig, WithHttpConfig};
use opentelemetry_sdk::{
    Resource,
    trace::{SdkTracer, SdkTracerProvider},
};
use rmcp::model::{ErrorData, JsonObject};
use toolbridge::config::GatewayTracing;

use crate::{
    GatewayError, audit::Outcome, identity::ClientIdentity, profile::ViewName,
    trace_context::TraceContext,
};

/// The service name without `OTEL_SERVICE_NAME`.
pub const SERVICE_NAME: &str = "toolbridge-gateway";

/// The path of the traces under an OTLP/HTTP base URL.
const TRACES_PATH: &str = "/v1/traces";

/// How long one export may take.
const EXPORT_TIMEOUT: Duration = Duration::from_secs(10);

/// The gateway's tracing: off, or a tracer whose spans go to a collector.
/// Cheap to clone.
#[derive(Clone, Default)]
pub struct Tracing {
    exporting: Option<Arc<Exporting>>,
}

impl std::fmt::Debug for Tracing {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.exporting {
            None => f.write_str("Tracing(off)"),
            Some(e) => write!(f, "Tracing({})", e.endpoint),
        }
    }
}

struct Exporting {
    provider: SdkTracerProvider,
    tracer: SdkTracer,
    /// Where spans go, for the log lines.
    endpoint: String,
}

/// Where the spans go, and which setting said so.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Endpoint {
    /// The URL spans are posted to (`.../v1/traces`).
    pub url: String,
    /// The config key or environment variable it came from.
    pub from: &'static str,
}

impl Tracing {
    /// Tracing off.
    pub fn off() -> Tracing {
        Tracing::default()
    }

    /// Where `settings` and the environment send spans (see the module):
    /// `None` when tracing is off.
    pub fn endpoint(
        settings: &GatewayTracing,
        env: impl Fn(&str) -> Option<String>,
    ) -> Option<Endpoint> {
        let set = |name: &str| env(name).filter(|v| !v.trim().is_empty());
        if set("OTEL_SDK_DISABLED").is_some_and(|v| v.trim().eq_ignore_ascii_case("true")) {
            return None;
        }
        let base = |url: &str| format!("{}{TRACES_PATH}", url.trim().trim_end_matches('/'));
        if let Some(url) = &settings.otlp_endpoint {
            return Some(Endpoint {
                url: base(url),
                from: "toolbridge.gateway.tracing.otlpEndpoint",
            });
        }
        if let Some(url) = set("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") {
            return Some(Endpoint {
                url: url.trim().to_owned(),
                from: "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
            });
        }
        set("OTEL_EXPORTER_OTLP_ENDPOINT").map(|url| Endpoint {
            url: base(&url),
            from: "OTEL_EXPORTER_OTLP_ENDPOINT",
        })
    }

    /// The tracing `settings` and the process's environment ask for. Must
    /// be called within the gateway's tokio runtime (exports run on it).
    pub fn start(settings: &GatewayTracing) -> Result<Tracing, GatewayError> {
        let Some(endpoint) = Tracing::endpoint(settings, |name| std::env::var(name).ok()) else {
            return Ok(Tracing::off());
        };
        let runtime = tokio::runtime::Handle::try_current().map_err(|_| {
            GatewayError::Config("tracing must be started within the gateway's runtime".into())
        })?;
        let client = reqwest::Client::builder()
            .timeout(EXPORT_TIMEOUT)
            .build()
            .map_err(|e| GatewayError::Config(format!("cannot make the OTLP client: {e}")))?;
        let sender = OnRuntime {
            client,
            runtime,
            state: Arc::new(Reachability {
                endpoint: endpoint.url.clone(),
                failing: AtomicBool::new(false),
            }),
        };
        let exporter = opentelemetry_otlp::SpanExporter::builder()
            .with_http()
            .with_protocol(Protocol::HttpBinary)
            .with_endpoint(endpoint.url.clone())
            .with_timeout(EXPORT_TIMEOUT)
            .with_http_client(sender)
            .build()
            .map_err(|e| {
                GatewayError::Config(format!(
                    "the OTLP endpoint {} (from {}) cannot be used: {e}",
                    endpoint.url, endpoint.from
                ))
            })?;
        let mut resource = Resource::builder();
        if std::env::var_os("OTEL_SERVICE_NAME").is_none_or(|v| v.is_empty()) {
            resource = resource.with_service_name(SERVICE_NAME);
        }
        let provider = SdkTracerProvider::builder()
            .with_batch_exporter(exporter)
            .with_resource(resource.build())
            .build();
        let tracer = provider.tracer(SERVICE_NAME);
        tracing::info!(endpoint = %endpoint.url, from = endpoint.from, "exporting traces over OTLP");
        Ok(Tracing {
            exporting: Some(Arc::new(Exporting {
                provider,
                tracer,
                endpoint: endpoint.url,
            })),
        })
    }

    /// Whether spans are made and exported.
    pub fn enabled(&self) -> bool {
        self.exporting.is_some()
    }

    /// Sends the spans still queued and stops the exporter (bounded by the
    /// export timeout). Spans made afterwards are dropped.
    pub async fn shutdown(&self) {
        let Some(exporting) = self.exporting.clone() else {
            return;
        };
        // The SDK blocks until its thread has exported, which it does on
        // this runtime: off the runtime's threads, so a current-thread
        // runtime can run the export meanwhile.
        let done = tokio::task::spawn_blocking(move || {
            let result = exporting.provider.shutdown();
            (result, exporting.endpoint.clone())
        })
        .await;
        if let Ok((Err(e), endpoint)) = done {
            tracing::warn!(%endpoint, "the last traces could not be sent: {e}");
        }
    }

    /// The trace of one `tools/call` of `tool` (the client's name for it)
    /// by `client` through `view`, a child of the client's `incoming`
    /// context when it sent one.
    pub(crate) fn request(
        &self,
        client: Option<&ClientIdentity>,
        view: &ViewName,
        incoming: Option<&TraceContext>,
        tool: &str,
    ) -> RequestTrace {
        let request = Served {
            method: "tools/call",
            target: Some(tool),
            client,
            view,
            incoming,
        };
        self.served(request, || {
            vec![KeyValue::new("gen_ai.tool.name", tool.to_owned())]
        })
    }

    /// The trace of one request of a client, any method (`tools/call` is
    /// [`Tracing::request`]): its span is named `METHOD TARGET` (the MCP
    /// conventions' name) and carries `more` besides who made it.
    pub(crate) fn served(
        &self,
        request: Served<'_>,
        more: impl FnOnce() -> Vec<KeyValue>,
    ) -> RequestTrace {
        let Some(exporting) = &self.exporting else {
            return RequestTrace {
                spans: None,
                incoming: request.incoming.cloned(),
            };
        };
        let parent = request
            .incoming
            .map_or_else(Context::new, TraceContext::as_parent);
        let (kind, name) = crate::audit::who(request.client);
        let mut attributes = vec![
            KeyValue::new("mcp.method.name", request.method),
            KeyValue::new("toolbridge.client", name.to_owned()),
            KeyValue::new("toolbridge.client.kind", kind),
        ];
        if let Some(profile) = request.view.profile_name() {
            attributes.push(KeyValue::new("toolbridge.profile", profile.to_owned()));
        }
        attributes.extend(more());
        let span_name = match request.target {
            Some(target) => format!("{} {target}", request.method),
            None => request.method.to_owned(),
        };
        let span = exporting
            .tracer
            .span_builder(span_name)
            .with_kind(SpanKind::Server)
            .with_attributes(attributes)
            .start_with_context(&exporting.tracer, &parent);
        RequestTrace {
            spans: Some(Box::new(Spans {
                tracer: exporting.tracer.clone(),
                request: parent.with_span(span),
                upstream: None,
            })),
            incoming: None,
        }
    }

    /// The span of a request (not a `tools/call`) the gateway sends to
    /// `server` for the client's request being served, `method`: a child
    /// of the client request's span, current in this task's OpenTelemetry
    /// context ([`crate::request_spans`]), which learns the server. With
    /// tracing off none; the upstream request then carries the client's
    /// own context, `incoming`, unchanged (as a `tools/call` does).
    pub(crate) fn upstream(
        &self,
        server: &str,
        method: &str,
        incoming: Option<TraceContext>,
    ) -> UpstreamTrace {
        let current = Context::current();
        let Some(exporting) = self
            .exporting
            .as_ref()
            .filter(|_| current.span().span_context().is_valid())
        else {
            return UpstreamTrace {
                meta: incoming.as_ref().map(TraceContext::to_meta),
                span: None,
                outcome: Outcome::Cancelled,
            };
        };
        current
            .span()
            .set_attribute(KeyValue::new("toolbridge.server", server.to_owned()));
        let span = exporting
            .tracer
            .span_builder(method.to_owned())
            .with_kind(SpanKind::Client)
            .with_attributes([
                KeyValue::new("mcp.method.name", method.to_owned()),
                KeyValue::new("toolbridge.server", server.to_owned()),
            ])
            .start_with_context(&exporting.tracer, &current);
        let upstream = current.with_span(span);
        UpstreamTrace {
            meta: TraceContext::of(&upstream).map(|c| c.to_meta()),
            span: Some(upstream),
            outcome: Outcome::Cancelled,
        }
    }
}

/// A client's request as its span names it.
pub(crate) struct Served<'a> {
    /// The JSON-RPC method.
    pub method: &'static str,
    /// What it is about, for the span's name (a tool's or a prompt's name).
    pub target: Option<&'a str>,
    /// Who sent it (`None`: stdio's client).
    pub client: Option<&'a ClientIdentity>,
    /// The view it came to.
    pub view: &'a ViewName,
    /// The client's trace context, when it sent one.
    pub incoming: Option<&'a TraceContext>,
}

/// The span of one upstream request that is not a `tools/call`
/// ([`Tracing::upstream`]); ended with the outcome [`UpstreamTrace::around`]
/// saw, or as cancelled when dropped before.
pub(crate) struct UpstreamTrace {
    meta: Option<JsonObject>,
    span: Option<Context>,
    outcome: Outcome,
}

impl UpstreamTrace {
    /// The `_meta` entries the upstream request carries (its W3C context).
    pub(crate) fn meta(&self) -> Option<JsonObject> {
        self.meta.clone()
    }

    /// `request`, its outcome noted for the span.
    pub(crate) async fn around<T, E>(
        &mut self,
        request: impl std::future::Future<Output = Result<T, E>>,
    ) -> Result<T, E> {
        let result = request.await;
        self.outcome = match result {
            Ok(_) => Outcome::Ok,
            Err(_) => Outcome::Failed,
        };
        result
    }
}

impl Drop for UpstreamTrace {
    fn drop(&mut self) {
        if let Some(span) = &self.span {
            end(&span.span(), self.outcome);
        }
    }
}

/// The spans of one `tools/call` (none with tracing off). Ended by
/// [`RequestTrace::finish`], or when dropped: a call that ended before
/// reaching an upstream (unknown tool, refused) as failed.
pub(crate) struct RequestTrace {
    /// Boxed: a call's future holds a pointer, not the spans.
    spans: Option<Box<Spans>>,
    /// With tracing off, the client's context, passed on as it came.
    incoming: Option<TraceContext>,
}

struct Spans {
    tracer: SdkTracer,
    /// The gateway's request span, current in this context.
    request: Context,
    /// The upstream call's span, once started.
    upstream: Option<Context>,
}

impl RequestTrace {
    /// The call goes to `tool` of `server`: its upstream span starts.
    /// Returns the `_meta` entries the upstream request carries: the
    /// upstream span's context, or with tracing off the client's own.
    pub(crate) fn upstream(&mut self, server: &str, tool: &str) -> Option<JsonObject> {
        let Some(spans) = &mut self.spans else {
            return self.incoming.as_ref().map(TraceContext::to_meta);
        };
        let request = spans.request.span();
        request.set_attribute(KeyValue::new("toolbridge.server", server.to_owned()));
        request.set_attribute(KeyValue::new("toolbridge.tool", tool.to_owned()));
        let span = spans
            .tracer
            .span_builder(format!("tools/call {tool}"))
            .with_kind(SpanKind::Client)
            .with_attributes([
                KeyValue::new("mcp.method.name", "tools/call"),
                KeyValue::new("gen_ai.tool.name", tool.to_owned()),
                KeyValue::new("toolbridge.server", server.to_owned()),
                KeyValue::new("toolbridge.tool", tool.to_owned()),
            ])
            .start_with_context(&spans.tracer, &spans.request);
        let upstream = spans.request.with_span(span);
        let meta = TraceContext::of(&upstream).map(|c| c.to_meta());
        spans.upstream = Some(upstream);
        meta
    }

    /// The OpenTelemetry context the request's span is current in (for
    /// the upstream spans made while it is served); `None` with tracing off.
    pub(crate) fn context(&self) -> Option<Context> {
        self.spans.as_ref().map(|s| s.request.clone())
    }

    /// Ends the spans as `result` says: ok, or an error with the JSON-RPC
    /// error's code and message.
    pub(crate) fn finish_with<T>(&mut self, result: &Result<T, ErrorData>) {
        let Err(error) = result else {
            return self.finish(Outcome::Ok);
        };
        let Some(spans) = self.spans.take() else {
            return;
        };
        if let Some(upstream) = &spans.upstream {
            end(&upstream.span(), Outcome::Failed);
        }
        let span = spans.request.span();
        span.set_attribute(KeyValue::new(
            "rpc.response.status_code",
            error.code.0.to_string(),
        ));
        span.set_attribute(KeyValue::new(
            "toolbridge.outcome",
            Outcome::Failed.as_str(),
        ));
        span.set_attribute(KeyValue::new("error.type", Outcome::Failed.as_str()));
        span.set_status(Status::Error {
            description: Cow::Owned(error.message.to_string()),
        });
        span.end();
    }

    /// Ends the spans with `outcome`.
    pub(crate) fn finish(&mut self, outcome: Outcome) {
        let Some(spans) = self.spans.take() else {
            return;
        };
        if let Some(upstream) = &spans.upstream {
            end(&upstream.span(), outcome);
        }
        end(&spans.request.span(), outcome);
    }
}

impl Drop for RequestTrace {
    fn drop(&mut self) {
        self.finish(Outcome::Failed);
    }
}

fn end(span: &opentelemetry::trace::SpanRef<'_>, outcome: Outcome) {
    span.set_attribute(KeyValue::new("toolbridge.outcome", outcome.as_str()));
    match outcome {
        Outcome::Ok => span.set_status(Status::Ok),
        Outcome::Cancelled => {}
        Outcome::ToolError | Outcome::Failed | Outcome::Refused => {
            span.set_attribute(KeyValue::new("error.type", outcome.as_str()));
            span.set_status(Status::Error {
                description: Cow::Borrowed(outcome.as_str()),
            });
        }
    }
    span.end();
}

/// The OTLP exporter's HTTP client: the tree's reqwest, run on the
/// gateway's runtime (the SDK's batch thread has none), saying once when
/// the collector cannot be reached.
#[derive(Debug)]
struct OnRuntime {
    client: reqwest::Client,
    runtime: tokio::runtime::Handle,
    state: Arc<Reachability>,
}

#[derive(Debug)]
struct Reachability {
    endpoint: String,
    /// The last export failed (its warning is logged).
    failing: AtomicBool,
}

impl Reachability {
    fn note(&self, failure: Option<String>) {
        match failure {
            Some(why) => {
                tracing::debug!(endpoint = %self.endpoint, "an OTLP export failed: {why}");
                if !self.failing.swap(true, Ordering::Relaxed) {
                    tracing::warn!(
                        endpoint = %self.endpoint,
                        "cannot send traces to the OTLP collector ({why}); calls go on, \
                         their spans are dropped until it answers"
                    );
                }
            }
            None => {
                if self.failing.swap(false, Ordering::Relaxed) {
                    tracing::info!(endpoint = %self.endpoint, "the OTLP collector answers again");
                }
            }
        }
    }
}

#[async_trait::async_trait]
impl HttpClient for OnRuntime {
    async fn send_bytes(&self, request: Request<Bytes>) -> Result<Response<Bytes>, HttpError> {
        let client = self.client.clone();
        let sent = self
            .runtime
            .spawn(async move { client.send_bytes(request).await })
            .await;
        let result = match sent {
            Ok(result) => result,
            Err(e) => Err(format!("the export task failed: {e}").into()),
        };
        match &result {
            Ok(response) if response.status().is_success() => self.state.note(None),
            Ok(response) => self
                .state
                .note(Some(format!("it answered {}", response.status()))),
            Err(e) => self.state.note(Some(e.to_string())),
        }
        result
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn endpoint(config: Option<&str>, env: &[(&str, &str)]) -> Option<Endpoint> {
        let mut settings = GatewayTracing::default();
        settings.otlp_endpoint = config.map(str::to_owned);
        let env: Vec<(String, String)> = env
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect();
        Tracing::endpoint(&settings, |name| {
            env.iter().find(|(k, _)| k == name).map(|(_, v)| v.clone())
        })
    }

    #[test]
    fn the_config_wins_over_the_environment_and_the_traces_path_is_appended() {
        assert_eq!(endpoint(None, &[]), None);
        let both = endpoint(
            Some("http://127.0.0.1:4318/"),
            &[("OTEL_EXPORTER_OTLP_ENDPOINT", "http://10.0.0.1:4318")],
        )
        .unwrap();
        assert_eq!(both.url, "http://127.0.0.1:4318/v1/traces");
        assert_eq!(both.from, "toolbridge.gateway.tracing.otlpEndpoint");
        let base = endpoint(None, &[("OTEL_EXPORTER_OTLP_ENDPOINT", "http://c:4318")]).unwrap();
        assert_eq!(base.url, "http://c:4318/v1/traces");
        let signal = endpoint(
            None,
            &[
                ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://c:4318"),
                ("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "http://t:9/traces"),
            ],
        )
        .unwrap();
        assert_eq!(signal.url, "http://t:9/traces");
        assert_eq!(
            endpoint(None, &[("OTEL_EXPORTER_OTLP_ENDPOINT", " ")]),
            None,
            "an empty variable is unset"
        );
        assert_eq!(
            endpoint(
                Some("http://127.0.0.1:4318"),
                &[("OTEL_SDK_DISABLED", "true")]
            ),
            None
        );
    }

    #[test]
    fn with_tracing_off_the_clients_context_goes_on_unchanged() {
        let incoming = TraceContext::parse(
            "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01",
            Some("a=b"),
        )
        .unwrap();
        let mut trace = Tracing::off().request(None, &ViewName::All, Some(&incoming), "t");
        let meta = trace.upstream("s", "t").expect("passed on");
        assert_eq!(
            meta["traceparent"],
            "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
        );
        assert_eq!(meta["tracestate"], "a=b");
        let mut none = Tracing::off().request(None, &ViewName::All, None, "t");
        assert_eq!(none.upstream("s", "t"), None);
    }
}
