//! The MCP Apps sandbox (SEP-1865): the document the page frames an app's
//! `ui://` HTML in, `/assets/app-sandbox.html`, and the policy it is served
//! with instead of the page's.
//!
//! The page's own policy allows no inline script, and a `srcdoc` or `blob:`
//! frame inherits its parent's policy, so an app's HTML (inline scripts, as
//! apps are built) cannot run in a frame of the page itself. The spec's
//! answer for web hosts is a sandbox proxy: the page frames this document
//! (`sandbox="allow-scripts"`, never `allow-same-origin`), which receives
//! the HTML by `postMessage` (`ui/notifications/sandbox-resource-ready`)
//! and puts it in an inner `srcdoc` frame, sandboxed the same way, that
//! inherits *this* policy, and relays the app's JSON-RPC both ways.
//!
//! The spec has the proxy framed with `allow-scripts allow-same-origin` on
//! an origin of its own; the gateway has one origin, where
//! `allow-same-origin` would give the proxy the page's (its session id, its
//! DOM), so the proxy is sandboxed as the app is and runs in an opaque
//! origin, as apart from the page as a foreign one.
//!
//! The policy's `sandbox` directive keeps the document in an opaque origin
//! even when it is opened on its own: it can read none of the page's
//! storage (its session id) and its requests are not the page's. Scripts
//! may be inline (apps are) or the page's own files (this document's
//! relay); styles, images, media and fonts inline or `data:`/`blob:`; no
//! network at all (`connect-src 'none'`: a resource's declared
//! `connectDomains` and `resourceDomains` are not granted, so the page stays
//! offline-safe), no forms, no plugins, no workers; only the page may frame
//! it.

/// Where the page frames apps.
pub const PATH: &str = "/assets/app-sandbox.html";

/// The sandbox document's Content-Security-Policy (see the module's doc).
pub const CSP: &str = "sandbox allow-scripts; default-src 'none'; \
    script-src 'self' 'unsafe-inline'; style-src 'unsafe-inline'; \
    img-src data: blob:; media-src data: blob:; font-src data:; connect-src 'none'; \
    worker-src 'none'; object-src 'none'; base-uri 'none'; form-action 'none'; \
    frame-ancestors 'self'";

/// True for a request of the sandbox document.
pub fn is_sandbox(path: &str) -> bool {
    path == PATH
}
