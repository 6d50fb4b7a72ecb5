// The MCP Apps sandbox proxy (SEP-1865's web-host pattern), framed by the
// page at /assets/app-sandbox.html with `sandbox="allow-scripts"` and served
// with a policy of its own (crates/toolbridge-gateway/src/web/app_sandbox.rs:
// an opaque origin, inline scripts, no network).
//
// It says `ui/notifications/sandbox-proxy-ready` to the page, takes the
// app's HTML from `ui/notifications/sandbox-resource-ready`, puts it in an
// inner srcdoc frame (sandboxed the same way; it inherits this document's
// policy) and relays every other message: the inner frame's to the page,
// the page's to the inner frame. Messages from any other window are
// dropped. The page's host bridge (web/components/mcp-app.js) answers them.
'use strict';

(() => {
  let inner = null;

  window.addEventListener('message', (event) => {
    const message = event.data;
    if (event.source === window.parent) {
      if (message && message.method === 'ui/notifications/sandbox-resource-ready') {
        if (inner) return; // one app per sandbox
        const params = message.params || {};
        inner = document.createElement('iframe');
        inner.setAttribute('sandbox', 'allow-scripts');
        inner.title = typeof params.title === 'string' ? params.title : 'MCP App';
        inner.srcdoc = String(params.html ?? '');
        document.body.append(inner);
        return;
      }
      if (inner && inner.contentWindow) inner.contentWindow.postMessage(message, '*');
    } else if (inner && event.source === inner.contentWindow) {
      window.parent.postMessage(message, '*');
    }
  });

  window.parent.postMessage({ jsonrpc: '2.0', method: 'ui/notifications/sandbox-proxy-ready', params: {} }, '*');
})();
