// MCP Apps (SEP-1865, extension `io.modelcontextprotocol/ui`, spec
// 2026-01-26): a tool that links a `ui://` resource in its definition
// (`_meta.ui.resourceUri`, or the older `_meta["ui/resourceUri"]`) shows
// that resource's HTML (`text/html;profile=mcp-app`) under its result, and
// this is the host side of the app's JSON-RPC over postMessage.
//
// The frame: /assets/app-sandbox.html, `sandbox="allow-scripts"` and never
// `allow-same-origin`, served with a policy of its own (an opaque origin, no
// network; src/web/app_sandbox.rs says why a proxy document and not srcdoc:
// the page's policy, which a srcdoc frame inherits, runs no inline script).
// The app can reach nothing of the page: what it asks goes through here.
//
// What an app may do, all through the page's own API so that the gateway's
// rights, pins and `disabledTools` apply as for any try-it call:
// - `tools/call`: tools of the same server only, and only those whose
//   `_meta.ui.visibility` includes "app" (absent: ["model", "app"]);
//   through POST /api/tools/{server}/{tool}/call;
// - `resources/read`: the same server's resources, GET /api/resources/read;
// - `ui/open-link`: http(s) addresses, in a new tab without an opener;
// - `notifications/message`: its log lines, shown under the frame;
// - `ui/notifications/size-changed`: its height (within MAX_HEIGHT);
// - `ui/request-display-mode`: always "inline"; `ping`.
// `ui/message` and `ui/update-model-context` are refused: the page has no
// conversation. The host sends `ui/notifications/tool-input` and
// `ui/notifications/tool-result` once the app says it is initialized, and
// `ui/resource-teardown` before the app goes (`region.teardown(reason)`,
// called by the tools view when the tool runs again and by the router when
// the view is left), waiting a moment for the app's answer so that it can
// finish what it was doing.
//
// Hand-written rather than the SDK's AppBridge
// (@modelcontextprotocol/ext-apps/app-bridge): the page has no build step
// (plain modules embedded in the binary as they are), and AppBridge imports
// the TypeScript SDK and zod by bare specifiers, so it would take a bundler
// and a few hundred kB of vendored code for the dozen messages a host
// answers. The tests' app uses the SDK's own App class
// (crates/toolbridge/tests/servers/apps_server.mjs), so this side is
// checked against the reference implementation.
//
// Accessible names (English): region "App: {tool}" holding the frame
// "App of {tool}" and its status line; disclosure "App activity (N)" with
// one line per call the app made ("record_click: Done") and per log line.
import { h, replace, uid } from '../dom.js';
import { t, currentLanguage } from '../i18n.js';
import { get, post, ApiError } from '../api.js';

/** The versions of the MCP Apps protocol this host speaks, newest first. */
const PROTOCOL_VERSIONS = ['2026-01-26'];
/** The MIME type of an app's HTML. */
const APP_MIME = 'text/html;profile=mcp-app';
/** The sandbox document (src/web/app_sandbox.rs). */
const SANDBOX = '/assets/app-sandbox.html';
/** The tallest an app may make its frame, in CSS pixels. */
const MAX_HEIGHT = 800;
/** How long an app is given to answer `ui/resource-teardown`, in ms. */
const TEARDOWN_MS = 2000;
/** The most activity lines kept per app. */
const MAX_ACTIVITY = 200;
/** The tool fields MCP defines: what an app is told of its tool. */
const TOOL_FIELDS = ['name', 'title', 'description', 'inputSchema', 'outputSchema', 'annotations', 'execution', 'icons', '_meta'];
/** The result fields MCP defines: what an app is given of a call. */
const RESULT_FIELDS = ['content', 'structuredContent', 'isError', '_meta'];

/** JSON-RPC error codes. */
const METHOD_NOT_FOUND = -32601;
const INVALID_PARAMS = -32602;
const INTERNAL_ERROR = -32603;

let version = null;
/** The gateway's version (`GET /api/version`), asked once: the host's. */
function gatewayVersion() {
  if (!version) {
    version = get('/version').then((v) => String((v && v.version) || 'unknown'), () => 'unknown');
  }
  return version;
}

/**
 * The `ui://` resource `tool` (a tools/list entry) links, or null. The link
 * is the definition's, as the spec has it (not a result's: through the
 * gateway only the definitions' links are made unique per server).
 */
export function appResourceUri(tool) {
  const meta = tool && tool._meta;
  if (!meta || typeof meta !== 'object') return null;
  const uri = (meta.ui && typeof meta.ui === 'object' && meta.ui.resourceUri) || meta['ui/resourceUri'];
  return typeof uri === 'string' && uri.startsWith('ui://') ? uri : null;
}

/** Whether `tool` is for apps only: its visibility leaves out "model". */
export function forAppsOnly(tool) {
  const visibility = tool && tool._meta && tool._meta.ui && tool._meta.ui.visibility;
  return Array.isArray(visibility) && !visibility.includes('model');
}

/** Whether an app may call `tool`: its visibility includes "app" (the default). */
export function appMayCall(tool) {
  const visibility = tool && tool._meta && tool._meta.ui && tool._meta.ui.visibility;
  return !Array.isArray(visibility) || visibility.includes('app');
}

function pick(object, fields) {
  const out = {};
  for (const field of fields) if (object && object[field] !== undefined) out[field] = object[field];
  return out;
}

/** The HTML of a read resource's content item, or an Error saying why not. */
function appHtml(contents, uri) {
  const items = Array.isArray(contents) ? contents : [];
  const item = items.find((c) => c && c.uri === uri) || items[0];
  if (!item) return new Error(t('tools.app.noContent', { uri }));
  const mime = String(item.mimeType || '').replace(/\s+/g, '').toLowerCase();
  if (mime !== APP_MIME) return new Error(t('tools.app.notAnApp', { uri, mime: item.mimeType || '?', want: APP_MIME }));
  if (typeof item.text === 'string') return item.text;
  if (typeof item.blob === 'string') {
    try {
      const bytes = Uint8Array.from(atob(item.blob.replace(/\s/g, '')), (c) => c.charCodeAt(0));
      return new TextDecoder().decode(bytes);
    } catch {
      return new Error(t('tools.app.noContent', { uri }));
    }
  }
  return new Error(t('tools.app.noContent', { uri }));
}

/**
 * The app of `tool` (of `server`) at `uri`, given the call's `args` and
 * `result` (the API's answer): a region with the sandboxed frame. The
 * bridge stops when the region leaves the page.
 */
export function renderApp({ server, tool, uri, args, result }) {
  const headingId = uid('app');
  const frame = h('iframe', {
    class: 'mcp-app-frame',
    title: t('tools.app.frameTitle', { tool: tool.name }),
    sandbox: 'allow-scripts',
    referrerpolicy: 'no-referrer',
    src: SANDBOX,
  });
  const status = h('p', { class: 'muted mcp-app-status', role: 'status' }, t('tools.app.loading', { uri }));
  const activityList = h('ul', { class: 'mcp-app-activity-list' });
  const activitySummary = h('summary', {}, t('tools.app.activity', { n: 0 }));
  const activity = h('details', { class: 'mcp-app-activity', hidden: true }, activitySummary, activityList);
  const region = h('section', { class: 'mcp-app', role: 'region', 'aria-labelledby': headingId },
    h('h4', { id: headingId }, t('tools.app.heading', { tool: tool.name })),
    h('p', { class: 'hint' }, t('tools.app.sandboxHint')),
    status, frame, activity);

  let html = null;
  let proxyReady = false;
  let delivered = false;
  let serverTools = null;
  let lines = 0;
  let initialized = false;
  let stopped = false;
  /** The page's own requests to the app awaiting an answer: id → resolve. */
  const awaiting = new Map();
  let nextRequest = 0;

  const note = (text, tone = '') => {
    if (lines >= MAX_ACTIVITY) return;
    lines += 1;
    activity.hidden = false;
    activityList.append(h('li', { class: tone }, text));
    replace(activitySummary, t('tools.app.activity', { n: lines }));
  };
  const fail = (message) => {
    status.classList.remove('muted');
    status.classList.add('error');
    replace(status, t('tools.app.failed'), ' ', message);
  };
  const send = (message) => {
    if (frame.contentWindow) frame.contentWindow.postMessage(message, '*');
  };
  const reply = (id, value) => send({ jsonrpc: '2.0', id, result: value });
  const refuse = (id, code, message) => send({ jsonrpc: '2.0', id, error: { code, message } });
  const notify = (method, params) => send({ jsonrpc: '2.0', method, params });

  function deliver() {
    if (delivered || !proxyReady || typeof html !== 'string') return;
    delivered = true;
    notify('ui/notifications/sandbox-resource-ready', {
      html, sandbox: 'allow-scripts', title: t('tools.app.frameTitle', { tool: tool.name }),
    });
  }

  get(`/resources/read?server=${encodeURIComponent(server)}&uri=${encodeURIComponent(uri)}`).then(
    (read) => {
      const found = appHtml(read && read.contents, uri);
      if (found instanceof Error) { fail(found.message); return; }
      html = found;
      deliver();
    },
    (error) => fail(error.message || String(error)));

  async function toolsOfServer() {
    if (!serverTools) serverTools = get(`/tools/${encodeURIComponent(server)}`).then((l) => l.tools || []);
    return serverTools;
  }

  function hostContext() {
    const dark = typeof matchMedia === 'function' && matchMedia('(prefers-color-scheme: dark)').matches;
    return {
      toolInfo: { tool: pick(tool, TOOL_FIELDS) },
      theme: dark ? 'dark' : 'light',
      displayMode: 'inline',
      availableDisplayModes: ['inline'],
      containerDimensions: { maxHeight: MAX_HEIGHT, width: Math.round(frame.clientWidth) || 600 },
      locale: currentLanguage(),
      timeZone: Intl.DateTimeFormat().resolvedOptions().timeZone,
      platform: 'web',
    };
  }

  async function callTool(id, params) {
    const name = params && params.name;
    if (typeof name !== 'string' || !name) {
      refuse(id, INVALID_PARAMS, 'tools/call needs the name of a tool');
      return;
    }
    let listed;
    try {
      listed = (await toolsOfServer()).find((entry) => entry.name === name);
    } catch (error) {
      serverTools = null;
      refuse(id, INTERNAL_ERROR, error.message || String(error));
      return;
    }
    if (!listed) {
      note(t('tools.app.refused', { tool: name }), 'error');
      refuse(id, INVALID_PARAMS, `server "${server}" has no tool "${name}"; an app may call only the tools of its own server`);
      return;
    }
    if (!appMayCall(listed)) {
      note(t('tools.app.refused', { tool: name }), 'error');
      refuse(id, INVALID_PARAMS, `tool "${name}" of server "${server}" is for the model only (its visibility leaves out "app")`);
      return;
    }
    try {
      const answer = await post(`/tools/${encodeURIComponent(server)}/${encodeURIComponent(name)}/call`,
        { arguments: params.arguments && typeof params.arguments === 'object' ? params.arguments : {} });
      note(t('tools.app.called', {
        tool: name, outcome: t(answer.isError ? 'tools.result.toolError' : 'tools.result.ok'),
      }), answer.isError ? 'error' : '');
      reply(id, pick(answer, RESULT_FIELDS));
    } catch (error) {
      const message = error instanceof ApiError ? error.message : String(error.message || error);
      note(t('tools.app.called', { tool: name, outcome: `${t('tools.result.failed')} ${message}` }), 'error');
      refuse(id, error instanceof ApiError && error.status === 422 ? INVALID_PARAMS : INTERNAL_ERROR, message);
    }
  }

  async function readResource(id, params) {
    const wanted = params && params.uri;
    if (typeof wanted !== 'string' || !wanted) {
      refuse(id, INVALID_PARAMS, 'resources/read needs a uri');
      return;
    }
    try {
      const read = await get(`/resources/read?server=${encodeURIComponent(server)}&uri=${encodeURIComponent(wanted)}`);
      const contents = (read.contents || []).map((c) => {
        const { summary, ...item } = c;
        return item;
      });
      reply(id, { contents });
    } catch (error) {
      refuse(id, error instanceof ApiError && error.status === 404 ? INVALID_PARAMS : INTERNAL_ERROR,
        error.message || String(error));
    }
  }

  function openLink(id, params) {
    const url = params && typeof params.url === 'string' ? params.url : '';
    if (!/^https?:\/\//i.test(url)) {
      refuse(id, INVALID_PARAMS, 'an app may open http and https addresses only');
      return;
    }
    window.open(url, '_blank', 'noopener,noreferrer');
    note(t('tools.app.opened', { url }));
    reply(id, {});
  }

  function request(message) {
    const { id, method, params } = message;
    switch (method) {
      case 'ui/initialize': {
        const asked = params && params.protocolVersion;
        replace(status, t('tools.app.running'));
        gatewayVersion().then((version) => reply(id, {
          protocolVersion: PROTOCOL_VERSIONS.includes(asked) ? asked : PROTOCOL_VERSIONS[0],
          hostInfo: { name: 'toolbridge', version },
          hostCapabilities: {
            openLinks: {}, serverTools: {}, serverResources: {}, logging: {},
            // No network is granted, whatever the resource declares.
            sandbox: { csp: {} },
          },
          hostContext: hostContext(),
        }));
        return;
      }
      case 'tools/call': callTool(id, params); return;
      case 'resources/read': readResource(id, params); return;
      case 'ui/open-link': openLink(id, params); return;
      case 'ui/request-display-mode': reply(id, { mode: 'inline' }); return;
      case 'ping': reply(id, {}); return;
      case 'ui/message':
      case 'ui/update-model-context':
        refuse(id, METHOD_NOT_FOUND, `the settings page has no conversation, so it does not take ${method}`);
        return;
      default:
        refuse(id, METHOD_NOT_FOUND, `the settings page does not answer ${method}`);
    }
  }

  function notification(message) {
    const params = message.params || {};
    switch (message.method) {
      case 'ui/notifications/sandbox-proxy-ready':
        proxyReady = true;
        deliver();
        return;
      case 'ui/notifications/initialized':
        initialized = true;
        notify('ui/notifications/tool-input', { arguments: args || {} });
        notify('ui/notifications/tool-result', pick(result, RESULT_FIELDS));
        return;
      case 'ui/notifications/size-changed': {
        const height = Number(params.height);
        if (Number.isFinite(height) && height > 0) frame.style.height = `${Math.min(Math.ceil(height), MAX_HEIGHT)}px`;
        return;
      }
      case 'notifications/message': {
        const data = typeof params.data === 'string' ? params.data : JSON.stringify(params.data);
        note(`${String(params.level ?? 'info')}: ${data}`, ['error', 'critical', 'alert', 'emergency'].includes(params.level) ? 'error' : '');
        return;
      }
      default:
        // Other notifications (the app's own) need nothing of the page.
    }
  }

  function stop() {
    stopped = true;
    window.removeEventListener('message', onMessage);
    for (const resolve of awaiting.values()) resolve();
    awaiting.clear();
  }

  function onMessage(event) {
    if (!region.isConnected) { stop(); return; }
    if (stopped || event.source !== frame.contentWindow) return;
    const message = event.data;
    if (!message || typeof message !== 'object' || message.jsonrpc !== '2.0') return;
    if (typeof message.method !== 'string') {
      // An answer to one of the page's requests (`ui/resource-teardown`).
      const resolve = awaiting.get(message.id);
      if (resolve) { awaiting.delete(message.id); resolve(); }
      return;
    }
    if (message.id !== undefined && message.id !== null) request(message);
    else notification(message);
  }
  window.addEventListener('message', onMessage);

  /**
   * Tells the app it is about to go (`ui/resource-teardown` with `reason`)
   * and resolves once it answers or TEARDOWN_MS pass; the bridge then
   * stops. An app not yet initialized is sent nothing (the spec: nothing
   * before `initialized`).
   */
  region.teardown = (reason) => {
    if (stopped) return Promise.resolve();
    if (!initialized) { stop(); return Promise.resolve(); }
    nextRequest += 1;
    const id = `toolbridge-${nextRequest}`;
    const answered = new Promise((resolve) => {
      awaiting.set(id, resolve);
      setTimeout(() => { awaiting.delete(id); resolve(); }, TEARDOWN_MS);
    });
    send({ jsonrpc: '2.0', id, method: 'ui/resource-teardown', params: { reason } });
    return answered.then(stop);
  };
  return region;
}
