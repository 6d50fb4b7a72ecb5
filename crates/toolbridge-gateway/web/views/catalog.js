// The Resources-and-prompts view: per served server, its resources (read
// one: text shown, images shown, audio played, other binary data offered as
// a download), its resource templates (fill in the variables, then read)
// and its prompts (fill in the arguments, then get the messages).
//
// Accessible names (English) for the browser tests:
//   a region per server named by its heading (the server's name), holding
//   regions "Resources", "Resource templates" and "Prompts";
//   per resource: button "Read <uri>";
//   per template: one textbox per variable, named by the variable, and
//   button "Read <uri template>";
//   per prompt: one textbox per argument, named by the argument (with
//   " (required)" when required), and button "Get <prompt name>";
//   the result: region "Result" (aria-live), holding the text (<pre>), an
//   image (alt "Image: <mime>"), an audio player, or a link "Download <file>".
import { h, replace, uid } from '../dom.js';
import { t } from '../i18n.js';
import { get, post } from '../api.js';

export async function render(main) {
  const resultHeading = uid('result');
  const result = h('section', { class: 'result card', 'aria-labelledby': resultHeading, 'aria-live': 'polite', hidden: true });
  const body = h('div', { 'aria-busy': 'true' }, h('p', { class: 'muted' }, t('common.loading')));
  main.append(
    h('h1', {}, t('catalog.title')),
    h('p', { class: 'muted' }, t('catalog.intro')),
    result,
    body,
  );
  const show = (title, ...content) => {
    replace(result, h('h2', { id: resultHeading }, t('catalog.result')), h('p', { class: 'muted' }, title), ...content);
    result.hidden = false;
    result.scrollIntoView({ block: 'nearest' });
  };

  let resources;
  let prompts;
  try {
    [resources, prompts] = await Promise.all([get('/resources'), get('/prompts')]);
  } catch (error) {
    replace(body, h('p', { class: 'error', role: 'alert' }, t('catalog.loadFailed', { message: error.message })));
    return;
  }
  body.setAttribute('aria-busy', 'false');
  const names = resources.servers.map((s) => s.server);
  if (names.length === 0) {
    replace(body, h('p', { class: 'muted' }, t('catalog.noServers')));
    return;
  }
  const promptsOf = new Map(prompts.servers.map((s) => [s.server, s]));
  replace(body, resources.servers.map((entry) => serverSection(entry, promptsOf.get(entry.server), show)));
}

function serverSection(entry, promptEntry, show) {
  const headingId = uid('server');
  const errors = [entry.error, promptEntry && promptEntry.error].filter(Boolean);
  const prompts = promptEntry ? promptEntry.prompts : [];
  const nothing = entry.resources.length === 0 && entry.templates.length === 0 && prompts.length === 0;
  return h('section', { class: 'card', 'aria-labelledby': headingId },
    h('h2', { id: headingId }, entry.server),
    errors.map((message) => h('p', { class: 'error' }, message)),
    nothing && errors.length === 0 ? h('p', { class: 'muted' }, t('catalog.nothing')) : null,
    entry.resources.length ? group(t('catalog.resources'), entry.resources.map((r) => resourceItem(entry.server, r, show))) : null,
    entry.templates.length ? group(t('catalog.templates'), entry.templates.map((r) => templateItem(entry.server, r, show))) : null,
    prompts.length ? group(t('catalog.prompts'), prompts.map((p) => promptItem(entry.server, p, show))) : null);
}

function group(title, items) {
  const id = uid('group');
  return h('section', { 'aria-labelledby': id },
    h('h3', { id }, title),
    h('ul', {}, items));
}

function describe(item) {
  return [
    h('strong', {}, item.title || item.name),
    item.mimeType ? [' ', h('span', { class: 'badge' }, item.mimeType)] : null,
    item.description ? h('p', { class: 'muted' }, item.description) : null,
  ];
}

function resourceItem(server, resource, show) {
  const button = h('button', {
    type: 'button',
    'aria-label': t('catalog.readNamed', { uri: resource.uri }),
    onclick: () => read(server, resource.uri, button, show),
  }, t('catalog.read'));
  return h('li', {},
    describe(resource),
    h('div', { class: 'row' }, code(resource.uri), button));
}

/** The `{name}` variables of an RFC 6570 template (operators dropped). */
function variables(template) {
  const names = [];
  for (const match of template.matchAll(/\{([^}]+)\}/g)) {
    for (const part of match[1].replace(/^[+#./;?&]/, '').split(',')) {
      const name = part.replace(/[*:].*$/, '').trim();
      if (name && !names.includes(name)) names.push(name);
    }
  }
  return names;
}

/** Fills the simple `{name}` and `{+name}` forms; others as plain values too. */
function expand(template, values) {
  return template.replace(/\{([^}]+)\}/g, (_, expr) => {
    const reserved = /^[+#]/.test(expr);
    return expr.replace(/^[+#./;?&]/, '').split(',').map((part) => {
      const value = values[part.replace(/[*:].*$/, '').trim()] || '';
      return reserved ? encodeURI(value) : encodeURIComponent(value);
    }).join(',');
  });
}

function templateItem(server, template, show) {
  const inputs = variables(template.uriTemplate).map((name) => {
    const id = uid('var');
    return { name, input: h('input', { id, type: 'text', autocomplete: 'off' }), id };
  });
  const button = h('button', { type: 'submit', 'aria-label': t('catalog.readNamed', { uri: template.uriTemplate }) }, t('catalog.read'));
  const form = h('form', {},
    inputs.map(({ name, input, id }) => h('div', { class: 'field' }, h('label', { for: id }, name), input)),
    h('div', { class: 'actions' }, button));
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    const values = Object.fromEntries(inputs.map(({ name, input }) => [name, input.value]));
    read(server, expand(template.uriTemplate, values), button, show);
  });
  return h('li', {}, describe(template), code(template.uriTemplate), form);
}

function promptItem(server, prompt, show) {
  const args = (prompt.arguments || []).map((arg) => {
    const id = uid('arg');
    const hintId = arg.description ? uid('hint') : null;
    const input = h('input', { id, type: 'text', autocomplete: 'off', required: Boolean(arg.required), 'aria-describedby': hintId });
    const label = arg.required ? t('catalog.requiredArgument', { name: arg.name }) : arg.name;
    return {
      arg,
      input,
      element: h('div', { class: 'field' },
        h('label', { for: id }, label),
        input,
        arg.description ? h('span', { id: hintId, class: 'hint' }, arg.description) : null),
    };
  });
  const error = h('p', { class: 'error', role: 'alert', hidden: true });
  const button = h('button', { type: 'submit', 'aria-label': t('catalog.getNamed', { name: prompt.name }) }, t('catalog.get'));
  const form = h('form', { novalidate: true }, args.map((a) => a.element), error, h('div', { class: 'actions' }, button));
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    error.hidden = true;
    for (const { input } of args) input.removeAttribute('aria-invalid');
    const missing = args.find(({ arg, input }) => arg.required && !input.value.trim());
    if (missing) {
      missing.input.setAttribute('aria-invalid', 'true');
      error.textContent = t('catalog.argumentMissing', { name: missing.arg.name });
      error.hidden = false;
      missing.input.focus();
      return;
    }
    const values = Object.fromEntries(args.map(({ arg, input }) => [arg.name, input.value]));
    button.disabled = true;
    try {
      const got = await post('/prompts/get', { server, name: prompt.name, arguments: values });
      show(t('catalog.promptResult', { server, name: prompt.name }),
        got.description ? h('p', {}, got.description) : null,
        h('ol', {}, got.messages.map((message) => h('li', {},
          h('span', { class: 'badge' }, message.role === 'assistant' ? t('catalog.role.assistant') : t('catalog.role.user')),
          content(message.content, message.text)))));
    } catch (failure) {
      error.textContent = failure.message;
      error.hidden = false;
    } finally {
      button.disabled = false;
    }
  });
  return h('li', {}, describe(prompt), form);
}

async function read(server, uri, button, show) {
  button.disabled = true;
  try {
    const params = new URLSearchParams({ server, uri });
    const data = await get(`/resources/read?${params}`);
    show(t('catalog.readResult', { server, uri }),
      data.contents.length === 0 ? h('p', { class: 'muted' }, t('common.empty')) : null,
      data.contents.map((item) => resourceContents(item)));
  } catch (error) {
    show(t('catalog.readResult', { server, uri }), h('p', { class: 'error', role: 'alert' }, error.message));
  } finally {
    button.disabled = false;
  }
}

/** One item of a read: text as text; a blob as text, image, audio or download. */
function resourceContents(item) {
  if (typeof item.text === 'string') return h('pre', {}, item.text);
  if (typeof item.blob === 'string') return binary(item.blob, item.mimeType || 'application/octet-stream', item.uri, item.summary);
  return h('p', { class: 'muted' }, item.summary || '');
}

function binary(base64, mime, uri, summary) {
  if (mime.startsWith('image/')) {
    return h('img', { src: `data:${mime};base64,${base64}`, alt: t('catalog.imageAlt', { mime }) });
  }
  if (mime.startsWith('audio/')) {
    return h('audio', { controls: true, src: `data:${mime};base64,${base64}` });
  }
  const bytes = Uint8Array.from(atob(base64), (c) => c.charCodeAt(0));
  if (mime.startsWith('text/')) return h('pre', {}, new TextDecoder().decode(bytes));
  const url = URL.createObjectURL(new Blob([bytes], { type: mime }));
  const file = (uri || 'resource').split(/[/?#]/).filter(Boolean).pop() || 'resource';
  return h('p', {},
    summary ? h('span', { class: 'muted' }, summary) : null, ' ',
    h('a', { href: url, download: file }, t('catalog.download', { file })));
}

/** A prompt message's content: text, image, audio or an embedded resource. */
function content(block, text) {
  if (!block) return null;
  if (block.type === 'image') return h('img', { src: `data:${block.mimeType};base64,${block.data}`, alt: t('catalog.imageAlt', { mime: block.mimeType }) });
  if (block.type === 'audio') return h('audio', { controls: true, src: `data:${block.mimeType};base64,${block.data}` });
  if (block.type === 'resource' && block.resource) return resourceContents(block.resource);
  return h('pre', {}, text);
}

/** Code (a URI, a command) that wraps anywhere rather than widen a 360 px page. */
function code(text) {
  const el = h('code', {}, text);
  el.style.overflowWrap = 'anywhere';
  return el;
}
