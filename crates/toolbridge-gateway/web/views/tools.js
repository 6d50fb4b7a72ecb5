// The tools view: per server, its tools (description, annotations, input
// schema), what OpenAI, Anthropic and Gemini would be sent for each and what
// conversion changed, and "try it": a form from the tool's schema, Run,
// Cancel, and the result rendered (text, images, audio, resources, errors,
// time taken).
//
// Routes: #/tools (first server), #/tools/{server}, #/tools/{server}/{tool}.
//
// Accessible names the browser tests can use (English; other languages
// translate them). A tool opens directly at #/tools/{server}/{tool}, e.g.
// #/tools/example/tiny_image.
// - heading level 1 "Tools"
// - combobox "Server": picks the server
// - navigation "Tools of {server}": one link per tool, named by the tool's
//   name (e.g. link "tiny_image"); the open tool's link has aria-current
// - heading level 2: the open tool's name (focused when the tool opens)
// - disclosure summaries "Input schema", "Output schema"
// - group "Provider definitions" with disclosure summaries starting
//   "OpenAI", "Anthropic", "Gemini" (then badges "changes: N" and
//   "refused as the server sent it")
// - form "Try {tool}": fields labelled by the argument's name (textbox
//   "text", spinbutton "ms", checkbox, combobox for an enum), buttons
//   "Add item" (named "Add item to {name}") and "Remove" for arrays,
//   checkbox "Edit as JSON" and textbox "Raw JSON", spinbutton
//   "Timeout (seconds)"
// - button "Run"; button "Cancel" while the call runs (focused then)
// - region "Result": status text "Done", "The tool reported an error",
//   "Cancelled" or "Failed:", then "took N ms"; an image result is an img
//   named "Image from the tool (image/png)"; an audio result an <audio
//   controls> named "Audio from the tool (audio/wav)"; disclosures
//   "Structured content", "Server log (N)", "As text for a model"
// - region "Withheld tools" (when the server has some): per tool a heading
//   level 3 with its name and "changed" or "new", the diff, and button
//   "Approve {tool}"; button "Approve all"
// - alert "Hidden characters" in an open tool that has some
import { h, replace, uid } from '../dom.js';
import { t } from '../i18n.js';
import { get, post, del, ApiError } from '../api.js';
import { schemaForm } from '../components/schema-form.js';
import { renderResult, renderFailure } from '../components/result.js';

const PROVIDERS = ['openai', 'anthropic', 'gemini'];

/** The call in flight, if any: cancelled when the view goes away. */
let running = null;

export async function render(main, { params = [] } = {}) {
  ensureStyles();
  stopRunning();
  const [wantedServer, wantedTool] = params;
  main.append(h('h1', {}, t('tools.title')));
  const status = h('p', { class: 'muted', role: 'status' }, t('common.loading'));
  main.append(status);

  let servers;
  try {
    ({ servers } = await get('/tools'));
  } catch (error) {
    return showError(status, error, () => rerender(main, params));
  }
  if (!servers.length) {
    replace(status, t('tools.noServers'));
    return;
  }
  const server = servers.some((s) => s.name === wantedServer) ? wantedServer : servers[0].name;
  const pickerId = uid('server');
  const picker = h('select', { id: pickerId },
    servers.map((s) => h('option', { value: s.name, selected: s.name === server }, s.name)));
  picker.addEventListener('change', () => { location.hash = `#/tools/${encodeURIComponent(picker.value)}`; });
  status.before(h('div', { class: 'field tools-picker' }, h('label', { for: pickerId }, t('tools.server')), picker));

  let listing;
  try {
    listing = await get(`/tools/${encodeURIComponent(server)}`);
  } catch (error) {
    return showError(status, error, () => rerender(main, params));
  }
  status.remove();
  if (listing.withheld && listing.withheld.length) {
    main.append(withheldSection(server, listing.withheld, () => rerender(main, params)));
  }

  const tools = listing.tools || [];
  const open = tools.find((tool) => tool.name === wantedTool) || null;
  const detail = h('section', { class: 'tools-detail', 'aria-labelledby': open ? 'tool-heading' : null });
  const list = h('nav', { class: 'tools-list', 'aria-label': t('tools.toolsOf', { server }) },
    tools.length === 0
      ? h('p', { class: 'muted' }, t('tools.noTools'))
      : h('ul', {}, tools.map((tool) => toolItem(server, tool, tool === open))));
  main.append(h('div', { class: 'tools-layout' }, list, detail));

  if (open) {
    renderTool(detail, server, open);
    const heading = detail.querySelector('#tool-heading');
    if (heading) heading.focus();
  } else {
    detail.append(h('p', { class: 'muted' }, wantedTool
      ? t('tools.unknownTool', { tool: wantedTool, server })
      : t('tools.pick')));
  }
}

/**
 * The server's withheld tools (their definition is not the pinned one):
 * each with its diff and an Approve button; Approve all.
 */
function withheldSection(server, withheld, done) {
  const headingId = uid('withheld');
  const problem = h('p', { class: 'error', role: 'alert', hidden: true });
  const approve = async (tools, button) => {
    button.disabled = true;
    problem.hidden = true;
    try {
      await post(`/tools/${encodeURIComponent(server)}/approve`, { tools });
      done();
    } catch (error) {
      button.disabled = false;
      problem.hidden = false;
      replace(problem, error.message || String(error));
    }
  };
  const items = withheld.map((w) => {
    const button = h('button', { type: 'button', class: 'primary' }, t('tools.withheld.approve', { tool: w.tool }));
    button.addEventListener('click', () => approve([w.tool], button));
    return h('li', { class: 'tools-withheld-item' },
      h('h3', {}, w.tool, ' ', h('span', { class: 'badge warn' }, t(`tools.withheld.change.${w.change}`))),
      h('pre', { class: 'tools-diff' }, w.readable),
      h('p', { class: 'hint' }, t('tools.withheld.orRun'), ' ', h('code', {}, w.approveCommand)),
      button);
  });
  const all = h('button', { type: 'button' }, t('tools.withheld.approveAll'));
  all.addEventListener('click', () => approve([], all));
  return h('section', { class: 'tools-withheld', role: 'region', 'aria-labelledby': headingId },
    h('h2', { id: headingId }, t('tools.withheld.title')),
    h('p', {}, t('tools.withheld.hint', { n: withheld.length })),
    problem,
    h('ul', {}, items),
    withheld.length > 1 ? all : null);
}

/** The hidden characters found in the tool's definition, as a warning. */
function hiddenCharacters(tool) {
  const found = tool.hiddenCharacters || [];
  if (found.length === 0) return null;
  return h('div', { class: 'tools-hidden warn', role: 'alert', 'aria-label': t('tools.hidden.title') },
    h('p', {}, h('strong', {}, t('tools.hidden.title')), ' ', t('tools.hidden.hint')),
    h('ul', {}, found.map((f) => h('li', {},
      t('tools.hidden.finding', { field: f.field, codePoint: f.codePoint, count: f.count })))));
}

function rerender(main, params) {
  replace(main);
  return render(main, { params });
}

function showError(status, error, retry) {
  status.className = 'error';
  status.setAttribute('role', 'alert');
  replace(status, error.message || String(error), ' ',
    h('button', { type: 'button', onclick: retry }, t('common.actions.retry')));
}

function toolItem(server, tool, current) {
  const href = `#/tools/${encodeURIComponent(server)}/${encodeURIComponent(tool.name)}`;
  return h('li', {},
    h('a', { href, 'aria-current': current ? 'true' : null }, tool.name),
    titleOf(tool) ? h('span', { class: 'tools-item-title' }, titleOf(tool)) : null,
    tool.description ? h('span', { class: 'muted tools-item-description' }, tool.description) : null,
    badges(tool));
}

/** The tool's human title: its own, else its annotations'. */
function titleOf(tool) {
  return tool.title || (tool.annotations && tool.annotations.title) || null;
}

/** The tool's annotations (hints from the server) and task support as badges. */
function badges(tool) {
  const a = tool.annotations || {};
  const items = [];
  if (a.readOnlyHint === true) items.push(['ok', t('tools.annotations.readOnly')]);
  if (a.destructiveHint === true) items.push(['warn', t('tools.annotations.destructive')]);
  if (a.idempotentHint === true) items.push(['', t('tools.annotations.idempotent')]);
  if (a.openWorldHint === true) items.push(['', t('tools.annotations.openWorld')]);
  const task = tool.execution && tool.execution.taskSupport;
  if (task === 'required' || task === 'optional') items.push(['', t(`tools.annotations.task.${task}`)]);
  if (items.length === 0) return null;
  return h('span', { class: 'tools-badges' },
    items.map(([tone, text]) => h('span', { class: `badge ${tone}` }, text)));
}

function renderTool(container, server, tool) {
  replace(container,
    h('h2', { id: 'tool-heading', tabindex: '-1' }, tool.name),
    hiddenCharacters(tool),
    titleOf(tool) ? h('p', { class: 'tools-title' }, titleOf(tool)) : null,
    tool.description ? h('p', { class: 'tools-description' }, tool.description) : null,
    badges(tool),
    h('p', { class: 'muted' }, t('tools.exposedAs'), ' ', h('code', {}, tool.exposedName || tool.id || tool.name)),
    h('details', {}, h('summary', {}, t('tools.inputSchema')),
      h('pre', {}, JSON.stringify(tool.inputSchema || {}, null, 2))),
    tool.outputSchema ? h('details', {}, h('summary', {}, t('tools.outputSchema')),
      h('pre', {}, JSON.stringify(tool.outputSchema, null, 2))) : null,
    previews(tool),
    tryIt(server, tool),
  );
}

function previews(tool) {
  const headingId = uid('providers');
  const byFormat = Object.fromEntries((tool.previews || []).map((p) => [p.format, p]));
  return h('section', { class: 'tools-previews', role: 'group', 'aria-labelledby': headingId },
    h('h3', { id: headingId }, t('tools.previews.title')),
    h('p', { class: 'hint' }, t('tools.previews.hint')),
    PROVIDERS.filter((f) => byFormat[f]).map((format) => preview(format, byFormat[format])));
}

function preview(format, p) {
  const changes = p.changes || [];
  const summary = h('summary', {}, t(`tools.previews.${format}`), ' ',
    h('span', { class: 'badge' }, t('tools.previews.changes', { n: changes.length })),
    p.wouldReject ? h('span', { class: 'badge warn' }, t('tools.previews.wouldReject')) : null);
  const body = [];
  if (changes.length === 0) {
    body.push(h('p', { class: 'muted' }, t('tools.previews.unchanged')));
  } else {
    body.push(h('ul', { class: 'tools-changes' }, changes.map((c) => h('li', {},
      h('code', {}, c.path || t('tools.previews.wholeTool')), ' ',
      c.detail,
      c.wouldReject ? h('span', { class: 'badge warn' }, t('tools.previews.refusedUnchanged')) : null))));
  }
  if (p.definition === null || p.definition === undefined) {
    body.push(h('p', { class: 'warn' }, t('tools.previews.notSent')));
  } else {
    if (format === 'gemini') body.push(h('p', { class: 'hint' }, t('tools.previews.geminiHint')));
    body.push(h('pre', {}, JSON.stringify(p.definition, null, 2)));
  }
  return h('details', { class: 'tools-preview' }, summary, body);
}

function tryIt(server, tool) {
  const headingId = uid('try');
  const form = schemaForm(tool.inputSchema || {});
  const timeoutId = uid('timeout');
  const timeoutHintId = uid('hint');
  const timeoutErrorId = uid('error');
  const timeout = h('input', {
    id: timeoutId, type: 'number', min: '0', step: 'any', inputmode: 'decimal',
    'aria-describedby': `${timeoutHintId} ${timeoutErrorId}`,
  });
  const timeoutError = h('span', { class: 'field-error', id: timeoutErrorId, hidden: true });
  const runButton = h('button', { type: 'submit', class: 'primary' }, t('tools.run'));
  const cancelButton = h('button', { type: 'button', hidden: true }, t('common.actions.cancel'));
  const progress = h('p', { class: 'muted tools-progress', hidden: true });
  const result = h('div', {
    class: 'tools-result', role: 'region', 'aria-label': t('tools.result.label'), 'aria-live': 'polite',
  });

  const formElement = h('form', { class: 'tools-try', novalidate: true, 'aria-labelledby': headingId },
    h('h3', { id: headingId }, t('tools.tryIt', { tool: tool.name })),
    form.element,
    h('div', { class: 'field' },
      h('label', { for: timeoutId }, t('tools.timeout')), timeout,
      h('span', { class: 'hint', id: timeoutHintId }, t('tools.timeoutHint')), timeoutError),
    h('div', { class: 'actions' }, runButton, cancelButton),
    progress);

  function readTimeout() {
    const text = timeout.value.trim();
    const seconds = Number(text);
    const bad = (timeout.validity && timeout.validity.badInput) || (text !== '' && !(seconds >= 0));
    timeoutError.hidden = !bad;
    timeoutError.textContent = bad ? t('tools.form.notANumber') : '';
    if (bad) timeout.setAttribute('aria-invalid', 'true');
    else timeout.removeAttribute('aria-invalid');
    return { ok: !bad, ms: text === '' || seconds === 0 ? undefined : Math.round(seconds * 1000) };
  }

  async function run(event) {
    event.preventDefault();
    if (running) return;
    const args = form.read();
    const limit = readTimeout();
    if (!args.ok) return;
    if (!limit.ok) { timeout.focus(); return; }
    const callId = newCallId();
    const controller = new AbortController();
    const started = performance.now();
    const call = { callId, controller, cancelling: false };
    running = call;
    runButton.disabled = true;
    cancelButton.hidden = false;
    cancelButton.removeAttribute('aria-disabled');
    cancelButton.focus();
    replace(result);
    progress.hidden = false;
    const tick = () => replace(progress, t('tools.running', { seconds: ((performance.now() - started) / 1000).toFixed(1) }));
    tick();
    const timer = setInterval(tick, 100);
    try {
      const body = { arguments: args.value, callId };
      if (limit.ms !== undefined) body.timeoutMs = limit.ms;
      const answer = await post(`/tools/${encodeURIComponent(server)}/${encodeURIComponent(tool.name)}/call`,
        body, { signal: controller.signal });
      replace(result, renderResult(answer));
    } catch (error) {
      if (error.name === 'AbortError' || call.cancelling) {
        replace(result, renderResult({ outcome: 'cancelled', elapsedMs: Math.round(performance.now() - started) }));
      } else {
        replace(result, renderFailure(error instanceof ApiError ? error.message : String(error.message || error)));
      }
    } finally {
      clearInterval(timer);
      progress.hidden = true;
      const hadFocus = document.activeElement === cancelButton;
      cancelButton.hidden = true;
      runButton.disabled = false;
      if (hadFocus) runButton.focus();
      if (running === call) running = null;
      if (result.firstChild && typeof result.scrollIntoView === 'function') {
        result.scrollIntoView({ block: 'nearest' });
      }
    }
  }

  async function cancel() {
    const call = running;
    if (!call || call.cancelling) return;
    call.cancelling = true;
    // Not `disabled`: that would drop the keyboard focus on the floor.
    cancelButton.setAttribute('aria-disabled', 'true');
    try {
      // The server ends the call and answers the run with "cancelled".
      await del(`/calls/${encodeURIComponent(call.callId)}`);
    } catch (error) {
      // 404: it had just finished (its answer shows). Anything else: drop
      // the request, which cancels the call on the server too.
      if (!(error instanceof ApiError && error.status === 404)) call.controller.abort();
    }
  }

  formElement.addEventListener('submit', run);
  cancelButton.addEventListener('click', cancel);
  return h('section', { class: 'tools-try-section' }, formElement, result);
}

/** Cancels the call of a view being left (its result has nowhere to go). */
function stopRunning() {
  const call = running;
  running = null;
  if (!call) return;
  call.cancelling = true;
  del(`/calls/${encodeURIComponent(call.callId)}`).catch(() => {}).finally(() => call.controller.abort());
}

function newCallId() {
  if (globalThis.crypto && typeof crypto.randomUUID === 'function') return `web-${crypto.randomUUID()}`;
  return `web-${Date.now().toString(36)}-${Math.random().toString(36).slice(2)}`;
}

function ensureStyles() {
  if (document.getElementById('tools-styles')) return;
  document.head.append(h('link', { id: 'tools-styles', rel: 'stylesheet', href: '/assets/views/tools.css' }));
}
