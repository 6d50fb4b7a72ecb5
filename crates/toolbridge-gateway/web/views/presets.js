// The Presets view: the curated servers in their five categories, searched
// by words (name, description, tools), each with its details (tools,
// documentation, whether a key is needed) and an add dialog whose API-key
// field follows the CLI's rule: a ${VAR} reference unless "Store the key in
// the config file" is ticked (then the file becomes readable by its owner
// only). Errors from the server are shown next to their field.
//
// Accessible names (English) for the browser tests:
//   searchbox "Search presets"; combobox "Category" (option "All categories");
//   a region per category, named by its heading ("Search", "Vision",
//   "Web reading", "Code and repositories", "General");
//   per preset: a disclosure "Details" inside its card, button "Add <preset name>"
//   (e.g. "Add Tavily"), and when the config has it, the text "Added as <names>";
//   the add dialog (named "Add <preset name>"): textbox "Name",
//   checkbox "Store the key in the config file", textbox "API key"
//   (shown when ticked), textbox "Extra arguments" (stdio presets),
//   buttons "Add" and "Cancel"; after adding, a status message
//   "Added server <name>." (role=status).
import { h, replace, uid } from '../dom.js';
import { t } from '../i18n.js';
import { get, post } from '../api.js';
import { toast } from '../app.js';
import { modal } from '../components/dialog.js';

const CATEGORY_KEYS = {
  'search': 'presets.category.search',
  'vision': 'presets.category.vision',
  'web-reading': 'presets.category.webReading',
  'code-repo': 'presets.category.codeRepo',
  'general': 'presets.category.general',
};

export async function render(main) {
  const searchId = uid('preset-search');
  const categoryId = uid('preset-category');
  const search = h('input', { id: searchId, type: 'search', autocomplete: 'off' });
  const category = h('select', { id: categoryId },
    h('option', { value: '' }, t('presets.allCategories')),
    Object.entries(CATEGORY_KEYS).map(([value, key]) => h('option', { value }, t(key))));
  const status = h('div', { role: 'status', 'aria-live': 'polite' });
  const results = h('div', { 'aria-busy': 'true' }, h('p', { class: 'muted' }, t('common.loading')));

  main.append(
    h('h1', {}, t('presets.title')),
    h('p', { class: 'muted' }, t('presets.intro')),
    h('div', { class: 'row' },
      h('div', { class: 'field' },
        h('label', { for: searchId }, t('presets.search')),
        search,
        h('span', { class: 'hint' }, t('presets.searchHint'))),
      h('div', { class: 'field' },
        h('label', { for: categoryId }, t('presets.categoryLabel')),
        category)),
    status,
    results,
  );

  let controller = null;
  let timer = null;
  async function load() {
    if (controller) controller.abort();
    controller = new AbortController();
    const params = new URLSearchParams({ q: search.value.trim(), category: category.value });
    results.setAttribute('aria-busy', 'true');
    try {
      const data = await get(`/presets?${params}`, { signal: controller.signal });
      showResults(results, data.presets, status, load);
    } catch (error) {
      if (error.name === 'AbortError') return;
      replace(results, h('p', { class: 'error', role: 'alert' }, t('presets.loadFailed', { message: error.message })));
    } finally {
      results.setAttribute('aria-busy', 'false');
    }
  }
  search.addEventListener('input', () => {
    clearTimeout(timer);
    timer = setTimeout(load, 200);
  });
  category.addEventListener('change', load);
  await load();
}

function showResults(results, presets, status, onAdded) {
  if (presets.length === 0) {
    replace(results, h('p', { class: 'muted' }, t('presets.noMatch')));
    return;
  }
  const sections = Object.entries(CATEGORY_KEYS).map(([name, key]) => {
    const inCategory = presets.filter((p) => p.category === name);
    if (inCategory.length === 0) return null;
    const headingId = uid('preset-cat');
    return h('section', { 'aria-labelledby': headingId },
      h('h2', { id: headingId }, t(key)),
      h('div', { class: 'preset-grid' }, inCategory.map((preset) => card(preset, status, onAdded))));
  });
  replace(results, sections);
}

function keyBadge(preset) {
  if (!preset.apiKeyEnvVar) return h('span', { class: 'badge muted' }, t('presets.key.none'));
  if (preset.requiresApiKey) return h('span', { class: 'badge warn' }, t('presets.key.required'));
  return h('span', { class: 'badge' }, t('presets.key.optional'));
}

function card(preset, status, onAdded) {
  const headingId = uid('preset');
  const addButton = h('button', {
    type: 'button',
    class: 'primary',
    'aria-label': t('presets.addNamed', { name: preset.name }),
    onclick: () => openAdd(preset, addButton, status, onAdded),
  }, t('presets.add'));
  return h('article', { class: 'card', 'aria-labelledby': headingId },
    h('div', { class: 'row' },
      h('h3', { id: headingId }, preset.name),
      h('span', { class: 'badge' }, preset.transportType === 'http' ? t('presets.transport.http') : t('presets.transport.stdio')),
      keyBadge(preset),
      (preset.configuredAs || []).length
        ? h('span', { class: 'badge ok' }, t('presets.configuredAs', { names: preset.configuredAs.join(', ') }))
        : null),
    h('p', { class: 'muted' }, t('presets.by', { provider: preset.provider })),
    // The catalogue's description in the page's language (locales_check
    // holds every preset's, English's equal to the catalogue's).
    h('p', {}, t(`presets.descriptions.${preset.id}`)),
    details(preset),
    h('div', { class: 'actions' }, addButton));
}

function details(preset) {
  const launch = preset.transportType === 'http'
    ? preset.url
    : [preset.command, ...preset.args].join(' ');
  const rows = [
    [t('presets.details.runs'), code(launch)],
    [t('presets.details.tools'), h('ul', {}, preset.tools.map((tool) => h('li', {}, code(tool))))],
    [t('presets.details.key'), preset.apiKeyEnvVar
      ? t(preset.requiresApiKey ? 'presets.details.keyRequired' : 'presets.details.keyOptional', { var: preset.apiKeyEnvVar })
      : t('presets.details.keyNone')],
  ];
  if (preset.documentationUrl) {
    rows.push([t('presets.details.docs'),
      h('a', { href: preset.documentationUrl, target: '_blank', rel: 'noopener noreferrer' }, preset.documentationUrl)]);
  }
  const list = h('dl', {}, rows.map(([term, value]) => [h('dt', {}, term), h('dd', {}, value)]));
  // Long links and commands wrap rather than widen a 360 px page.
  list.style.overflowWrap = 'anywhere';
  return h('details', {}, h('summary', {}, t('presets.details.summary')), list);
}

/** A field: label, control, hint, and the place its error goes. */
function field(label, control, hint) {
  const errorId = uid('err');
  const hintId = hint ? uid('hint') : null;
  control.setAttribute('aria-describedby', [hintId, errorId].filter(Boolean).join(' '));
  const error = h('span', { id: errorId, class: 'field-error', hidden: true });
  const wrapper = h('div', { class: 'field' },
    h('label', { for: control.id }, label),
    control,
    hint ? h('span', { id: hintId, class: 'hint' }, hint) : null,
    error);
  return {
    wrapper,
    control,
    show(message) {
      error.textContent = message;
      error.hidden = false;
      control.setAttribute('aria-invalid', 'true');
    },
    clear() {
      error.textContent = '';
      error.hidden = true;
      control.removeAttribute('aria-invalid');
    },
  };
}

function openAdd(preset, opener, status, onAdded) {
  const { dialog, heading, open } = modal(t('presets.addNamed', { name: preset.name }), opener);
  const fields = {};
  fields.name = field(t('presets.form.name'),
    h('input', { id: uid('name'), type: 'text', value: preset.id, required: true, autocomplete: 'off' }),
    t('presets.form.nameHint'));

  let keyBox = null;
  if (preset.apiKeyEnvVar) {
    const store = h('input', { id: uid('store'), type: 'checkbox' });
    fields.apiKey = field(t('presets.form.apiKey'),
      h('input', { id: uid('key'), type: 'password', autocomplete: 'off', spellcheck: 'false' }),
      t('presets.form.apiKeyHint'));
    fields.apiKey.wrapper.hidden = true;
    store.addEventListener('change', () => {
      fields.apiKey.wrapper.hidden = !store.checked;
      fields.apiKey.clear();
      if (store.checked) fields.apiKey.control.focus();
    });
    keyBox = h('fieldset', {},
      h('legend', {}, t('presets.form.keyLegend')),
      h('p', { class: 'hint' }, t(preset.requiresApiKey ? 'presets.form.referenceRequired' : 'presets.form.referenceOptional', { var: preset.apiKeyEnvVar })),
      h('div', { class: 'row' }, store, h('label', { for: store.id }, t('presets.form.storeKey'))),
      fields.apiKey.wrapper);
    keyBox.store = store;
  }
  if (preset.transportType !== 'http') {
    fields.extraArgs = field(t('presets.form.extraArgs'),
      h('textarea', { id: uid('extra'), rows: 2, spellcheck: 'false' }),
      t('presets.form.extraArgsHint'));
  }

  const formError = h('p', { class: 'error', role: 'alert', hidden: true });
  const submit = h('button', { type: 'submit', class: 'primary' }, t('presets.form.submit'));
  const cancel = h('button', { type: 'button' }, t('common.actions.cancel'));
  const form = h('form', { novalidate: true },
    heading,
    formError,
    fields.name.wrapper,
    keyBox,
    fields.extraArgs ? fields.extraArgs.wrapper : null,
    h('div', { class: 'actions' }, submit, cancel));
  dialog.append(form);

  const close = () => {
    dialog.close();
  };
  cancel.addEventListener('click', close);

  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    for (const f of Object.values(fields)) f.clear();
    formError.hidden = true;
    const body = { name: fields.name.control.value.trim() };
    if (keyBox && keyBox.store.checked) {
      const key = fields.apiKey.control.value;
      if (!key.trim()) {
        fields.apiKey.show(t('presets.form.keyMissing'));
        fields.apiKey.control.focus();
        return;
      }
      body.apiKey = key;
    }
    if (fields.extraArgs) {
      body.extraArgs = fields.extraArgs.control.value.split('\n').map((s) => s.trim()).filter(Boolean);
    }
    if (!body.name) {
      fields.name.show(t('presets.form.nameMissing'));
      fields.name.control.focus();
      return;
    }
    submit.disabled = true;
    try {
      const added = await post(`/presets/${encodeURIComponent(preset.id)}`, body);
      close();
      const message = addedMessage(added);
      replace(status, h('p', { class: 'ok' }, message));
      toast(message);
      // The list shows "Added as" now; focus stays on this preset's button.
      const label = opener.getAttribute('aria-label');
      await onAdded();
      const again = [...document.querySelectorAll('main button[aria-label]')]
        .find((b) => b.getAttribute('aria-label') === label);
      if (again) again.focus();
    } catch (error) {
      const target = error.field && fields[error.field];
      if (target) {
        if (error.field === 'apiKey' && keyBox && !keyBox.store.checked) {
          keyBox.store.checked = true;
          fields.apiKey.wrapper.hidden = false;
        }
        target.show(error.message);
        target.control.focus();
      } else {
        formError.textContent = error.message;
        formError.hidden = false;
      }
    } finally {
      submit.disabled = false;
    }
  });

  open(fields.name.control);
}

function addedMessage(added) {
  const first = t('presets.added', { name: added.name });
  if (added.key === 'stored') return `${first} ${t('presets.addedStored')}`;
  if (added.key === 'reference') {
    return `${first} ${t(added.keyRequired ? 'presets.addedExport' : 'presets.addedExportOptional', { var: added.keyVar })}`;
  }
  return first;
}

/** Code (a URI, a command) that wraps anywhere rather than widen a 360 px page. */
function code(text) {
  const el = h('code', {}, text);
  el.style.overflowWrap = 'anywhere';
  return el;
}
