//! The W3C trace context (`traceparent`, `tracestate`) a client sends with
//! a request, and the one the gateway sends on to an upstream.
//!
//! Taken from the request's `params._meta` (the keys SEP-414 reserves, on
//! every protocol version, as the 2026-07-28 revision documents), else from
//! the HTTP `traceparent`/`tracestate` headers; `_meta` wins, as it belongs
//! to the one request where a header belongs to the HTTP exchange. Parsed
//! and written by the OpenTelemetry SDK's W3C propagator: a malformed
//! `traceparent` is ignored, never an error.
//!
//! On the way out it goes in the upstream request's `_meta` (every
//! transport): with tracing on, the context of the gateway's upstream span
//! (`tracing_export`); with tracing off, the client's own, unchanged, so
//! the upstream's spans still join the client's trace.

use http::HeaderMap;
use opentelemetry::{
    Context,
    propagation::{Extractor, Injector, TextMapPropagator},
    trace::{SpanContext, TraceContextExt},
};
use opentelemetry_sdk::propagation::TraceContextPropagator;
use rmcp::model::{JsonObject, MetaObject};

/// The key of the W3C `traceparent`, in `_meta` and as an HTTP header.
pub const TRACEPARENT: &str = "traceparent";
/// The key of the W3C `tracestate`, in `_meta` and as an HTTP header.
pub const TRACESTATE: &str = "tracestate";

/// A valid remote span context: the client's, or the gateway's own span to
/// be the parent of an upstream's.
#[derive(Debug, Clone, PartialEq)]
pub struct TraceContext(SpanContext);

impl TraceContext {
    /// The context a client sent with a request: in its `meta`, else in
    /// the HTTP `headers`. `None` without one, or when it is malformed.
    pub fn incoming(meta: Option<&MetaObject>, headers: Option<&HeaderMap>) -> Option<Self> {
        if let Some(meta) = meta
            && let Some(parent) = meta.get_traceparent()
        {
            return Self::parse(parent, meta.get_tracestate());
        }
        let headers = headers?;
        let parent = headers.get(TRACEPARENT)?.to_str().ok()?;
        let state = headers.get(TRACESTATE).and_then(|v| v.to_str().ok());
        Self::parse(parent, state)
    }

    /// `traceparent` (and `tracestate`) as W3C Trace Context says.
    pub fn parse(traceparent: &str, tracestate: Option<&str>) -> Option<Self> {
        let carrier = Carrier {
            traceparent: Some(traceparent.to_owned()),
            tracestate: tracestate.map(str::to_owned),
        };
        let context = TraceContextPropagator::new().extract(&carrier);
        let span = context.span().span_context().clone();
        span.is_valid().then_some(TraceContext(span))
    }

    /// The context of the span that is current in `context`, if valid.
    pub fn of(context: &Context) -> Option<Self> {
        let span = context.span().span_context().clone();
        span.is_valid().then_some(TraceContext(span))
    }

    /// The span context itself.
    pub fn span_context(&self) -> &SpanContext {
        &self.0
    }

    /// An OpenTelemetry context whose (remote) parent is this one.
    pub fn as_parent(&self) -> Context {
        Context::new().with_remote_span_context(self.0.clone())
    }

    /// The `_meta` entries that carry this context: `traceparent`, and
    /// `tracestate` when it is not empty.
    pub fn to_meta(&self) -> JsonObject {
        let mut carrier = Carrier::default();
        TraceContextPropagator::new().inject_context(&self.as_parent(), &mut carrier);
        let mut meta = JsonObject::new();
        if let Some(parent) = carrier.traceparent {
            meta.insert(TRACEPARENT.into(), parent.into());
        }
        if let Some(state) = carrier.tracestate.filter(|s| !s.is_empty()) {
            meta.insert(TRACESTATE.into(), state.into());
        }
        meta
    }
}

/// The two W3C keys, as the propagator reads and writes them.
#[derive(Default)]
struct Carrier {
    traceparent: Option<String>,
    tracestate: Option<String>,
}

impl Extractor for Carrier {
    fn get(&self, key: &str) -> Option<&str> {
        match key {
            TRACEPARENT => self.traceparent.as_deref(),
            TRACESTATE => self.tracestate.as_deref(),
            _ => None,
        }
    }

    fn keys(&self) -> Vec<&str> {
        vec![TRACEPARENT, TRACESTATE]
    }
}

impl Injector for Carrier {
    fn set(&mut self, key: &str, value: String) {
        match key {
            TRACEPARENT => self.traceparent = Some(value),
            TRACESTATE => self.tracestate = Some(value),
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const PARENT: &str = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01";

    #[test]
    fn a_clients_context_is_read_from_meta_before_the_header() {
        let mut headers = HeaderMap::new();
        headers.insert(
            TRACEPARENT,
            "00-11111111111111111111111111111111-2222222222222222-01"
                .parse()
                .unwrap(),
        );
        let mut meta = MetaObject::new();
        meta.set_traceparent(PARENT);
        meta.set_tracestate("vendor=value");
        let from_meta = TraceContext::incoming(Some(&meta), Some(&headers)).expect("meta");
        assert_eq!(
            from_meta.span_context().trace_id().to_string(),
            "0af7651916cd43dd8448eb211c80319c"
        );
        assert_eq!(
            from_meta.span_context().span_id().to_string(),
            "b7ad6b7169203331"
        );
        let out = from_meta.to_meta();
        assert_eq!(out[TRACEPARENT], PARENT);
        assert_eq!(out[TRACESTATE], "vendor=value");
        let from_header = TraceContext::incoming(None, Some(&headers)).expect("header");
        assert_eq!(
            from_header.span_context().trace_id().to_string(),
            "11111111111111111111111111111111"
        );
    }

    #[test]
    fn a_malformed_or_missing_context_is_none() {
        for bad in [
            "",
            "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331",
            "00-00000000000000000000000000000000-b7ad6b7169203331-01",
            "00-0af7651916cd43dd8448eb211c80319c-0000000000000000-01",
            "zz-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01",
        ] {
            assert_eq!(TraceContext::parse(bad, None), None, "{bad:?}");
        }
        assert_eq!(TraceContext::incoming(None, None), None);
        assert_eq!(TraceContext::incoming(None, Some(&HeaderMap::new())), None);
        // Without a tracestate, none goes out.
        let out = TraceContext::parse(PARENT, None).unwrap().to_meta();
        assert!(!out.contains_key(TRACESTATE), "{out:?}");
    }
}
