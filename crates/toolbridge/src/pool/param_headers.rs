//! SEP-2243's tool headers (protocol 2026-07-28, streamable HTTP): a
//! `tools/call` carries each argument its tool designates with
//! `x-mcp-header` as an `Mcp-Param-*` header (Base64 for values a header
//! cannot carry as they are, none for a null), and a tool whose designations
//! are invalid is left out of the list and never called.
//!
//! rmcp's transport does both, from the `tools/list` answers it saw on the
//! connection: it drops each listed tool whose designations are invalid and
//! keeps the others' schemas to build a call's headers. A call on a
//! connection that has listed nothing (the CLI's `call`, whose tool list
//! comes from the disk cache; a gateway whose list was cached before the
//! server reconnected) would go without its headers, which the server
//! refuses (the Python SDK answers 400), and could call a tool that must
//! not be called. So before such a call the pool lists the server's tools
//! on that connection, once, when the tool may designate headers (its
//! cached definition mentions `x-mcp-header`, or there is none to look at);
//! and on such a connection a tool the list does not have is refused before
//! anything is sent ([`PoolError::UnknownTool`]).

mod ready;

use std::sync::atomic::{AtomicBool, Ordering};

use rmcp::model::ProtocolVersion;
use serde_json::Value;

use crate::config::TransportKind;

/// The annotation that designates a header.
const ANNOTATION: &str = "x-mcp-header";

/// A connection whose calls carry tool headers: whether it has listed the
/// server's tools yet (rmcp knows their schemas once it has).
#[derive(Debug, Default)]
pub(super) struct ParamHeaders {
    listed: AtomicBool,
}

impl ParamHeaders {
    /// For a connection over `transport` at `protocol`: `Some` on
    /// streamable HTTP from 2026-07-28 on, where calls carry tool headers.
    pub(super) fn for_connection(transport: TransportKind, protocol: &str) -> Option<Self> {
        // Revisions are dates: they compare as strings.
        (transport == TransportKind::Http && protocol >= ProtocolVersion::STANDARD_HEADERS.as_str())
            .then(Self::default)
    }

    /// Notes that a listing of the server's tools finished on the connection.
    pub(super) fn listed(&self) {
        self.listed.store(true, Ordering::Release);
    }

    fn has_listed(&self) -> bool {
        self.listed.load(Ordering::Acquire)
    }
}

/// Whether `schema` designates a header anywhere (a cheap over-estimate:
/// rmcp decides which designations count).
fn designates_headers(schema: &serde_json::Map<String, Value>) -> bool {
    schema
        .iter()
        .any(|(key, value)| key == ANNOTATION || mentions(value))
}

fn mentions(value: &Value) -> bool {
    match value {
        Value::Object(map) => designates_headers(map),
        Value::Array(items) => items.iter().any(mentions),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn object(value: Value) -> serde_json::Map<String, Value> {
        match value {
            Value::Object(map) => map,
            _ => unreachable!(),
        }
    }

    #[test]
    fn only_streamable_http_from_2026_07_28_carries_tool_headers() {
        assert!(ParamHeaders::for_connection(TransportKind::Http, "2026-07-28").is_some());
        assert!(ParamHeaders::for_connection(TransportKind::Http, "2025-11-25").is_none());
        assert!(ParamHeaders::for_connection(TransportKind::WebSocket, "2026-07-28").is_none());
        assert!(ParamHeaders::for_connection(TransportKind::Stdio, "2026-07-28").is_none());
    }

    #[test]
    fn a_designation_is_found_at_any_depth_and_a_plain_schema_has_none() {
        let nested = json!({"type": "object", "properties": {"a": {"anyOf": [
            {"type": "string", "x-mcp-header": "A"}
        ]}}});
        assert!(designates_headers(&object(nested)));
        let plain = json!({"type": "object", "properties": {"x-mcp": {"type": "string"}}});
        assert!(!designates_headers(&object(plain)));
    }
}
