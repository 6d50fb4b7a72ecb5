//! What the gateway knows of a client's request beyond its JSON-RPC:
//! [`Incoming`], a session request taken past rmcp (`direct_sessions`),
//! and [`stateless`], whether a request's client is a stateless
//! (2026-07-28) one. Used by the session handler and the gateway's tasks
//! alike, so neither imports the other for it.

use rmcp::{
    RoleServer,
    model::{RequestId, RequestMetaObject},
    service::{Peer, RequestContext},
};

use crate::identity::ClientIdentity;

/// A session request taken past rmcp (`Session::call_tool_directly`):
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

/// Whether the client of `context` is a stateless (2026-07-28) one: the
/// gateway cannot send it a request mid-call, so an upstream's input
/// requests go back to it in the call's result.
pub(crate) fn stateless(context: &RequestContext<RoleServer>) -> bool {
    context
        .peer
        .peer_info()
        .is_none_or(|info| !info.protocol_version.has_initialize())
}
