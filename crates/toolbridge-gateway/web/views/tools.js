// The tools view: every tool of every served server in one list, searched
// (name, title, description, server) and filtered by server and by
// annotation, each with a switch that writes the server's `disabledTools`;
// each server's withheld tools with their diff and Approve; beside the list
// the open tool: "try it" (a form from the tool's schema, Run, Cancel, the
// server's progress as a progress bar, a question the server asks
// (elicitation) answered in a form, the result rendered), what each LLM
// provider does with the tool said in words ("Compatibility"), and the
// definitions each provider is sent.
//
// Routes: #/tools (every server), #/tools/{server} (the list filtered to
// that server), #/tools/{server}/{tool} (that tool open).
//
// Accessible names the browser tests can use (English; other languages
// translate them). A tool opens directly at #/tools/{server}/{tool}, e.g.
// #/tools/example/tiny_image.
// - heading level 1 "Tools"
// - searchbox "Search tools"; comboboxes "Server" ("All servers" or one)
//   and "Annotation" ("Any", "read-only", "destructive", "idempotent",
//   "open world", "runs as a task", "switched off"); status "N of M tools"
// - navigation "All tools" (or "Tools of {server}" with one server
//   picked): one link per tool named by the tool's name (e.g. link
//   "tiny_image"; a switched-off tool has no link), its server's name, and
//   a switch "Use {tool} of {server}" (checked: listed and callable), and
//   a badge "pinned" when its server's definitions are pinned
// - heading level 2: the open tool's name (focused when the tool opens)
// - form "Try {tool}": fields labelled by the argument's name (textbox
//   "text", spinbutton "ms", checkbox, combobox for an enum), buttons
//   "Add item" (named "Add item to {name}") and "Remove" for arrays,
//   checkbox "Edit as JSON" and textbox "Raw JSON", spinbutton
//   "Timeout (seconds)"
// - button "Run"; button "Cancel" while the call runs (focused then);
//   progressbar "Progress" while it runs (its value the server's progress
//   out of its total, indeterminate until the server sends some)
// - form "{server} asks" when the server asks a question during the call:
//   the server's message, its fields, buttons "Send answer", "Decline"
// - region "Result": status text "Done", "The tool reported an error",
//   "Cancelled" or "Failed:", then "took N ms"; an image result is an img
//   named "Image from the tool (image/png)"; an audio result an <audio
//   controls> named "Audio from the tool (audio/wav)"; disclosures
//   "Structured content", "Server log (N)", "As text for a model"; for a
//   tool linking a ui:// resource (MCP Apps, badge "MCP App"; a tool for
//   apps only has badge "for apps only"), region "App: {tool}" with the
//   frame "App of {tool}" (components/mcp-app.js)
// - disclosure "Compatibility": per provider a sentence on what it does
//   with the tool, and the changes made for it
// - disclosure summaries "Input schema", "Output schema"
// - group "Provider definitions" with disclosure summaries starting
//   "OpenAI", "Anthropic", "Gemini" (then a badge "changes: N")
// - region "Withheld tools" (when a server has some): per tool a heading
//   level 3 with its name and "changed" or "new", the diff, and button
//   "Approve {tool}"; button "Approve all"
// - alert "Hidden characters" in an open tool that has some
import { h, replace, uid } from '../dom.js';
import { t, currentLanguage } from '../i18n.js';
import { get, post, del, ApiError } from '../api.js';
import { schemaForm } from '../components/schema-form.js';
import { renderResult, renderFailure } from '../components/result.js';
import { appResourceUri, forAppsOnly, renderApp } from '../components/mcp-app.js';

const PROVIDERS = ['openai', 'anthropic', 'gemini'];

/** The annotation filters: key (string name), test. */
const ANNOTATIONS = [
  ['readOnly', (e) => hint(e, 'readOnlyHint')],
  ['destructive', (e) => hint(e, 'destructiveHint')],
  ['idempotent', (e) => hint(e, 'idempotentHint')],
  ['openWorld', (e) => hint(e, 'openWorldHint')],
  ['task', (e) => ['required', 'optional'].includes(e.tool.execution && e.tool.execution.taskSupport)],
  ['off', (e) => !e.enabled],
];

/** How often a running call's progress and questions are read. */
const POLL_MS = 200;

/** The call in flight, if any: cancelled when the view goes away. */
let running = null;

/** What the list is narrowed to; kept when a tool opens (a new route). */
const filters = { query: '', server: '', annotation: '' };

function hint(entry, name) {
  return Boolean(entry.tool.annotations && entry.tool.annotations[name] === true);
}

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
  // #/tools is every server, #/tools/{server} that one; an open tool keeps
  // the list as it was.
  if (wantedTool === undefined) {
    filters.server = servers.some((s) => s.name === wantedServer) ? wantedServer : '';
  }
  if (!servers.some((s) => s.name === filters.server)) filters.server = '';

  // Every server's listing at once; one that fails is said, the rest shown.
  const listings = await Promise.all(servers.map((server) =>
    get(`/tools/${encodeURIComponent(server.name)}`).then(
      (listing) => ({ server, listing }),
      (error) => ({ server, error }))));
  status.remove();

  for (const { server, listing } of listings) {
    if (listing && listing.withheld && listing.withheld.length) {
      main.append(withheldSection(server.name, listing.withheld, () => rerender(main, params)));
    }
  }
  const failures = listings.filter((l) => l.error).map(({ server, error }) =>
    h('p', { class: 'error', role: 'alert' }, t('tools.listFailed', { server: server.name }), ' ', error.message || String(error)));

  const entries = [];
  for (const { server, listing } of listings) {
    if (!listing) continue;
    const listed = listing.tools || [];
    for (const tool of listed) entries.push({ server: server.name, tool, enabled: true, pinned: listing.pinned === true });
    for (const name of server.disabledTools || []) {
      if (!listed.some((tool) => tool.name === name)) entries.push({ server: server.name, tool: { name }, enabled: false });
    }
  }
  const open = wantedTool === undefined ? null
    : entries.find((e) => e.enabled && e.server === wantedServer && e.tool.name === wantedTool) || null;

  const detail = h('section', { class: 'tools-detail', 'aria-labelledby': open ? 'tool-heading' : null });
  const side = toolList(entries, open, servers.map((s) => s.name));
  main.append(...failures, h('div', { class: 'tools-layout' }, side, detail));

  if (open) {
    renderTool(detail, open.server, open.tool, { pinned: open.pinned });
    const heading = detail.querySelector('#tool-heading');
    if (heading) heading.focus();
  } else {
    detail.append(h('p', { class: 'muted' }, wantedTool !== undefined
      ? t('tools.unknownTool', { tool: wantedTool, server: wantedServer })
      : t('tools.pick')));
  }
}

/**
 * The searchable, filtered list of `entries` ({server, tool, enabled}),
 * each with its switch; `open` is marked current.
 */
function toolList(entries, open, serverNames) {
  const searchId = uid('search');
  const serverId = uid('server');
  const annotationId = uid('annotation');
  const search = h('input', { id: searchId, type: 'search', value: filters.query, autocomplete: 'off', spellcheck: false });
  const serverPick = h('select', { id: serverId },
    h('option', { value: '' }, t('tools.allServers')),
    serverNames.map((name) => h('option', { value: name, selected: name === filters.server }, name)));
  const annotationPick = h('select', { id: annotationId },
    h('option', { value: '' }, t('tools.anyAnnotation')),
    ANNOTATIONS.map(([key]) => h('option', { value: key, selected: key === filters.annotation }, t(`tools.filter.${key}`))));
  const count = h('p', { class: 'muted tools-count', role: 'status' });
  const problem = h('p', { class: 'error', role: 'alert', hidden: true });
  const items = entries.map((entry) => ({ entry, element: toolItem(entry, entry === open, problem) }));
  const none = h('p', { class: 'muted', hidden: true }, t('tools.noMatch'));
  const nav = h('nav', { class: 'tools-list' },
    entries.length === 0 ? h('p', { class: 'muted' }, t('tools.noTools')) : h('ul', {}, items.map((i) => i.element)),
    none);

  // A filter over the list shown, by substring ("ech" finds echo as it is
  // typed): not the tool-search index (Pool::search_tools), which ranks by
  // whole stemmed words for a model's task, keeps the best few, and never
  // holds a switched-off tool, which this list shows to switch it on again.
  const apply = () => {
    const words = filters.query.toLowerCase().split(/\s+/).filter(Boolean);
    const test = (ANNOTATIONS.find(([key]) => key === filters.annotation) || [])[1];
    let shown = 0;
    for (const { entry, element } of items) {
      const text = [entry.tool.name, titleOf(entry.tool), entry.tool.description, entry.server]
        .filter(Boolean).join(' ').toLowerCase();
      const match = (!filters.server || entry.server === filters.server)
        && (!test || test(entry))
        && words.every((w) => text.includes(w));
      element.hidden = !match;
      if (match) shown += 1;
    }
    none.hidden = shown > 0 || entries.length === 0;
    nav.setAttribute('aria-label', filters.server ? t('tools.toolsOf', { server: filters.server }) : t('tools.allTools'));
    replace(count, t('tools.count', { shown, total: entries.length }));
  };
  search.addEventListener('input', () => { filters.query = search.value; apply(); });
  serverPick.addEventListener('change', () => { filters.server = serverPick.value; apply(); });
  annotationPick.addEventListener('change', () => { filters.annotation = annotationPick.value; apply(); });
  apply();

  return h('div', { class: 'tools-side' },
    h('div', { class: 'tools-filters' },
      h('div', { class: 'field tools-search' }, h('label', { for: searchId }, t('tools.search')), search),
      h('div', { class: 'field' }, h('label', { for: serverId }, t('tools.server')), serverPick),
      h('div', { class: 'field' }, h('label', { for: annotationId }, t('tools.annotation')), annotationPick)),
    count, problem, nav);
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
    h('p', {}, t('tools.withheld.hint', { n: withheld.length, server })),
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

/** One entry of the list: its link, server, switch, title, description, badges. */
function toolItem(entry, current, problem) {
  const { server, tool } = entry;
  const href = `#/tools/${encodeURIComponent(server)}/${encodeURIComponent(tool.name)}`;
  const name = entry.enabled
    ? h('a', { href, 'aria-current': current ? 'true' : null }, tool.name)
    : h('span', { class: 'tools-item-name' }, tool.name);
  const toggle = h('input', {
    type: 'checkbox', role: 'switch', checked: entry.enabled,
    'aria-label': t('tools.switch', { tool: tool.name, server }),
  });
  const off = h('span', { class: 'badge', hidden: entry.enabled }, t('tools.off'));
  toggle.addEventListener('change', async () => {
    const enable = toggle.checked;
    toggle.disabled = true;
    problem.hidden = true;
    try {
      await post(`/tools/${encodeURIComponent(server)}/${encodeURIComponent(tool.name)}/${enable ? 'enable' : 'disable'}`);
      entry.enabled = enable;
      off.hidden = enable;
    } catch (error) {
      toggle.checked = !enable;
      problem.hidden = false;
      replace(problem, error.message || String(error));
    } finally {
      toggle.disabled = false;
    }
  });
  return h('li', {},
    h('div', { class: 'tools-item-head' }, name,
      h('span', { class: 'badge tools-item-server' }, server), off,
      h('label', { class: 'tools-switch' }, toggle)),
    titleOf(tool) ? h('span', { class: 'tools-item-title' }, titleOf(tool)) : null,
    tool.description ? h('span', { class: 'muted tools-item-description' }, tool.description) : null,
    badges(tool, { list: true, pinned: entry.pinned }));
}

/** The tool's human title: its own, else its annotations'. */
function titleOf(tool) {
  return tool.title || (tool.annotations && tool.annotations.title) || null;
}

/**
 * The tool's annotations (hints from the server) and task support as
 * badges; in the list also one per provider that cannot be sent the tool
 * at all (the only provider warning worth a badge).
 */
function badges(tool, { list = false, pinned = false } = {}) {
  const a = tool.annotations || {};
  const items = [];
  if (pinned) items.push(['ok', t('tools.pinned')]);
  if (a.readOnlyHint === true) items.push(['ok', t('tools.annotations.readOnly')]);
  if (a.destructiveHint === true) items.push(['warn', t('tools.annotations.destructive')]);
  if (a.idempotentHint === true) items.push(['', t('tools.annotations.idempotent')]);
  if (a.openWorldHint === true) items.push(['', t('tools.annotations.openWorld')]);
  const task = tool.execution && tool.execution.taskSupport;
  if (task === 'required' || task === 'optional') items.push(['', t(`tools.annotations.task.${task}`)]);
  if (appResourceUri(tool)) items.push(['', t('tools.app.badge')]);
  if (forAppsOnly(tool)) items.push(['', t('tools.app.appOnly')]);
  if (list) {
    for (const p of tool.previews || []) {
      if (p.definition === null || p.definition === undefined) {
        items.push(['warn', t('tools.compat.notSentBadge', { provider: t(`tools.previews.${p.format}`) })]);
      }
    }
  }
  if (items.length === 0) return null;
  return h('span', { class: 'tools-badges' },
    items.map(([tone, text]) => h('span', { class: `badge ${tone}` }, text)));
}

function renderTool(container, server, tool, { pinned = false } = {}) {
  replace(container,
    h('h2', { id: 'tool-heading', tabindex: '-1' }, tool.name, ' ', h('span', { class: 'badge tools-item-server' }, server)),
    hiddenCharacters(tool),
    titleOf(tool) ? h('p', { class: 'tools-title' }, titleOf(tool)) : null,
    tool.description ? h('p', { class: 'tools-description' }, tool.description) : null,
    badges(tool, { pinned }),
    pinned ? h('p', { class: 'hint' }, t('tools.pinnedHint')) : null,
    tryIt(server, tool),
    compatibility(tool),
    h('p', { class: 'muted' }, t('tools.exposedAs'), ' ', h('code', {}, tool.exposedName || tool.id || tool.name)),
    h('details', {}, h('summary', {}, t('tools.inputSchema')),
      h('pre', {}, JSON.stringify(tool.inputSchema || {}, null, 2))),
    tool.outputSchema ? h('details', {}, h('summary', {}, t('tools.outputSchema')),
      h('pre', {}, JSON.stringify(tool.outputSchema, null, 2))) : null,
    previews(tool),
  );
}

/**
 * One change made for a provider, in words: the library's own sentence in
 * English (it names the keyword, the type...), else its kind's sentence in
 * the page's language (`tools.changeKinds.KIND`; with the path beside it).
 */
function changeWords(change) {
  return currentLanguage() === 'en' ? change.detail : t(`tools.changeKinds.${change.kind}`);
}

/**
 * What each provider does with the tool, in words: taken as written,
 * adjusted (which changes), fixed where it would have refused it, or not
 * sent at all; and, for OpenAI, whether it is sent strict.
 */
function compatibility(tool) {
  const byFormat = Object.fromEntries((tool.previews || []).map((p) => [p.format, p]));
  const rows = PROVIDERS.filter((f) => byFormat[f]).map((format) => {
    const p = byFormat[format];
    const provider = t(`tools.previews.${format}`);
    const changes = p.changes || [];
    let sentence;
    if (p.definition === null || p.definition === undefined) sentence = t('tools.compat.notSent', { provider });
    else if (p.wouldReject) sentence = t('tools.compat.fixed', { provider, n: changes.length });
    else if (changes.length) sentence = t('tools.compat.adjusted', { provider, n: changes.length });
    else sentence = t('tools.compat.asIs', { provider });
    const strict = p.strict === true ? t('tools.compat.strict') : p.strict === false ? t('tools.compat.notStrict') : null;
    return h('li', {},
      h('p', {}, h('strong', {}, provider), ' ', sentence, strict ? ` ${strict}` : ''),
      h('p', { class: 'hint' }, t(`tools.compat.about.${format}`)),
      changes.length ? h('ul', { class: 'tools-changes' }, changes.map((c) => h('li', {},
        h('code', {}, c.path || t('tools.previews.wholeTool')), ' ', changeWords(c)))) : null);
  });
  return h('details', { class: 'tools-compat' },
    h('summary', {}, t('tools.compat.title')),
    h('ul', { class: 'tools-compat-list' }, rows));
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
    h('span', { class: 'badge' }, t('tools.previews.changes', { n: changes.length })));
  const body = [];
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
  const bar = h('progress', { class: 'tools-progress-bar', 'aria-label': t('tools.progress.label') });
  const elapsed = h('span', { class: 'muted' });
  const note = h('span', { class: 'tools-progress-note' });
  const progress = h('div', { class: 'tools-progress', hidden: true }, bar, ' ', elapsed, ' ', note);
  const question = h('div', { class: 'tools-question' });
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

  /** The server's progress on the bar: a fraction of its total, else indeterminate. */
  function showProgress(p) {
    if (!p) return;
    const value = Number(p.progress);
    const total = Number(p.total);
    if (Number.isFinite(total) && total > 0 && Number.isFinite(value)) {
      bar.max = total;
      bar.value = Math.min(value, total);
      bar.setAttribute('aria-valuetext', t('tools.progress.of', { progress: formatNumber(value), total: formatNumber(total) }));
    } else if (Number.isFinite(value)) {
      bar.removeAttribute('value');
      bar.setAttribute('aria-valuetext', t('tools.progress.sofar', { progress: formatNumber(value) }));
    }
    replace(note, typeof p.message === 'string' ? p.message : '');
  }

  /** The question the server asks during the call, as a form; or none. */
  function showQuestion(call, asked) {
    if (!asked) {
      if (call.question && !call.question.sending) { replace(question); call.question = null; }
      return;
    }
    if (call.question && call.question.id === asked.id) return;
    const titleId = uid('question');
    const answers = schemaForm(asked.requestedSchema || {});
    const problem = h('p', { class: 'error', role: 'alert', hidden: true });
    const send = h('button', { type: 'submit', class: 'primary' }, t('tools.question.send'));
    const decline = h('button', { type: 'button' }, t('tools.question.decline'));
    const box = h('form', { class: 'tools-question-form', novalidate: true, 'aria-labelledby': titleId },
      h('h4', { id: titleId }, t('tools.question.title', { server })),
      h('p', { class: 'tools-question-message' }, String(asked.message ?? '')),
      answers.element, problem,
      h('div', { class: 'actions' }, send, decline));
    const shown = { id: asked.id, sending: false };
    call.question = shown;
    const answer = async (action, content) => {
      shown.sending = true;
      send.disabled = true;
      decline.disabled = true;
      problem.hidden = true;
      try {
        await post(`/calls/${encodeURIComponent(call.callId)}/elicitation`, { id: asked.id, action, content });
        replace(question, h('p', { class: 'muted' }, t(action === 'accept' ? 'tools.question.sent' : 'tools.question.declined')));
        if (document.activeElement === document.body || !document.activeElement) cancelButton.focus();
      } catch (error) {
        shown.sending = false;
        send.disabled = false;
        decline.disabled = false;
        problem.hidden = false;
        replace(problem, error.message || String(error));
      }
    };
    box.addEventListener('submit', (event) => {
      event.preventDefault();
      const read = answers.read();
      if (read.ok) answer('accept', read.value || {});
    });
    decline.addEventListener('click', () => answer('decline'));
    replace(question, box);
    const first = box.querySelector('input:not([type="checkbox"]), select, textarea');
    if (first) first.focus();
  }

  /** Reads the call's progress and questions until it answers. */
  async function watch(call) {
    while (!call.done) {
      let state = null;
      try { state = await get(`/calls/${encodeURIComponent(call.callId)}`); } catch { state = null; }
      if (call.done) return;
      if (state && state.running) {
        showProgress(state.progress);
        showQuestion(call, state.elicitation);
      }
      await new Promise((resolve) => setTimeout(resolve, POLL_MS));
    }
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
    const call = { callId, controller, cancelling: false, done: false, question: null };
    running = call;
    runButton.disabled = true;
    cancelButton.hidden = false;
    cancelButton.removeAttribute('aria-disabled');
    cancelButton.focus();
    // An app shown for the last run is told it goes, and given a moment.
    await Promise.all([...result.querySelectorAll('.mcp-app')]
      .map((app) => (typeof app.teardown === 'function' ? app.teardown('the tool runs again') : null)));
    // The view was left meanwhile: nothing to run for.
    if (running !== call) return;
    const started = performance.now();
    replace(result);
    replace(question);
    bar.removeAttribute('value');
    bar.removeAttribute('aria-valuetext');
    replace(note);
    progress.hidden = false;
    const tick = () => replace(elapsed, t('tools.running', { seconds: ((performance.now() - started) / 1000).toFixed(1) }));
    tick();
    const timer = setInterval(tick, 100);
    const body = { arguments: args.value, callId };
    if (limit.ms !== undefined) body.timeoutMs = limit.ms;
    const answered = post(`/tools/${encodeURIComponent(server)}/${encodeURIComponent(tool.name)}/call`,
      body, { signal: controller.signal });
    watch(call);
    try {
      const answer = await answered;
      replace(result, renderResult(answer));
      // A tool linking a ui:// resource (MCP Apps): its app under the result.
      const uri = appResourceUri(tool);
      if (uri) result.append(renderApp({ server, tool, uri, args: args.value, result: answer }));
    } catch (error) {
      if (error.name === 'AbortError' || call.cancelling) {
        replace(result, renderResult({ outcome: 'cancelled', elapsedMs: Math.round(performance.now() - started) }));
      } else {
        replace(result, renderFailure(error instanceof ApiError ? error.message : String(error.message || error)));
      }
    } finally {
      call.done = true;
      clearInterval(timer);
      progress.hidden = true;
      replace(question);
      const hadFocus = document.activeElement === cancelButton || question.contains(document.activeElement);
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
  return h('section', { class: 'tools-try-section' }, formElement, question, result);
}

function formatNumber(n) {
  return Number.isInteger(n) ? String(n) : n.toFixed(1);
}

/** Cancels the call of a view being left (its result has nowhere to go). */
function stopRunning() {
  const call = running;
  running = null;
  if (!call) return;
  call.cancelling = true;
  call.done = true;
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
