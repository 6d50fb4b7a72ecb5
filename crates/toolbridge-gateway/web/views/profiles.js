// The Profiles view: the config's profiles (each a view of the gateway
// served at /mcp/NAME), an editor for one, and a live preview of the tools
// it would serve (POST /api/profile-preview) as the form changes.
//
// Accessible names for the browser tests (English; other languages
// translate them):
// - button "New profile"; per profile NAME a list item (article) labelled
//   by its name with its URL, buttons "Edit NAME" and "Delete NAME";
// - the editor, a form labelled "New profile" / "Edit profile NAME":
//   field "Name"; group "Servers" with checkbox "Every enabled server" and
//   one checkbox per server (its name); fields "Tool globs" and
//   "Exclusions" (one glob per line), "Renames" and "Description
//   overrides" (one `TOOL = TEXT` per line), "Discovery" (select: list,
//   search); buttons "Save", "Delete", "Cancel"; a field the server refused
//   has aria-invalid="true" and its message in aria-describedby;
// - the preview: region "Preview" holding table "Tools of the profile"
//   (columns Tool, Served as, Why, Description);
// - dialog "Delete profile?": buttons "Delete", "Cancel".
import { h, replace, uid } from '../dom.js';
import { t } from '../i18n.js';
import { get, post, put, del } from '../api.js';
import { toast } from '../app.js';
import { modal } from '../components/dialog.js';

/** Adds views/profiles.css to the page once. */
function styles() {
  if (document.getElementById('profiles-styles')) return;
  document.head.append(h('link', { id: 'profiles-styles', rel: 'stylesheet', href: '/assets/views/profiles.css' }));
}

export async function render(main) {
  styles();
  const about = h('p', { class: 'muted' });
  const list = h('div', { 'aria-busy': 'true' }, h('p', { class: 'muted' }, t('common.loading')));
  const editor = h('section', { class: 'profile-editor', hidden: true });
  const newButton = h('button', { type: 'button', class: 'primary', onclick: () => edit(null, newButton) }, t('profiles.new'));
  main.append(
    h('h1', {}, t('profiles.title')),
    h('p', { class: 'muted' }, t('profiles.intro')),
    about,
    h('div', { class: 'actions' }, newButton),
    list,
    editor);

  let data = { servers: [], profiles: [] };

  async function refresh() {
    list.setAttribute('aria-busy', 'true');
    try {
      data = await get('/profiles');
      replace(about, t('profiles.configFile', { path: data.configPath }));
      newButton.disabled = !data.editable;
      if (!data.profiles.length) {
        replace(list, h('p', { class: 'muted' }, t('profiles.empty')));
      } else {
        const items = h('ul', { class: 'plain' }, data.profiles.map((p) => h('li', {}, card(p))));
        replace(list, items);
      }
    } catch (error) {
      replace(list, h('p', { class: 'error', role: 'alert' }, t('profiles.loadFailed', { message: error.message })));
    } finally {
      list.removeAttribute('aria-busy');
    }
  }

  function card(profile) {
    const headingId = uid('profile');
    const url = `${location.origin}${profile.path}`;
    const r = profile.record;
    const facts = [
      h('span', {}, r.servers ? t('profiles.serversOf', { servers: r.servers.join(', ') }) : t('profiles.allServers')),
      h('span', {}, t('profiles.globCount', { count: (r.tools || []).length })),
      h('span', { class: 'badge' }, t(`profiles.discovery.${r.discovery || 'list'}`)),
      profile.served ? null : h('span', { class: 'muted' }, t('profiles.notServedYet')),
    ];
    const editButton = h('button', { type: 'button', 'data-profile': profile.name, 'data-action': 'edit', 'aria-label': t('profiles.editLabel', { name: profile.name }) }, t('common.actions.edit'));
    editButton.addEventListener('click', () => edit(profile, editButton));
    const deleteButton = h('button', { type: 'button', class: 'danger', 'aria-label': t('profiles.deleteLabel', { name: profile.name }) }, t('profiles.delete'));
    deleteButton.addEventListener('click', () => confirmDelete(profile, deleteButton));
    return h('article', { class: 'card', 'aria-labelledby': headingId },
      h('h2', { id: headingId }, profile.name),
      h('p', {}, h('code', { class: 'profile-url' }, url)),
      h('p', { class: 'row' }, facts),
      h('div', { class: 'actions' }, editButton, deleteButton));
  }

  function confirmDelete(profile, opener, after) {
    const { dialog, heading, open } = modal(t('profiles.deleteTitle'), opener, { role: 'alertdialog' });
    const error = h('p', { class: 'error', role: 'alert', hidden: true });
    const cancel = h('button', { type: 'button', onclick: () => dialog.close() }, t('common.actions.cancel'));
    const confirm = h('button', { type: 'button', class: 'danger' }, t('profiles.delete'));
    confirm.addEventListener('click', async () => {
      confirm.disabled = true;
      try {
        await del(`/profiles/${encodeURIComponent(profile.name)}`);
        dialog.close();
        toast(t('profiles.deleted', { name: profile.name }));
        if (after) after();
        await refresh();
        newButton.focus();
      } catch (e) {
        replace(error, e.message);
        error.hidden = false;
        confirm.disabled = false;
      }
    });
    dialog.append(heading, h('p', {}, t('profiles.deleteQuestion', { name: profile.name })), error,
      h('div', { class: 'actions' }, cancel, confirm));
    open(cancel);
  }

  /** Opens the editor for `profile` (null: a new one). */
  function edit(profile, opener) {
    const record = profile ? profile.record : {};
    const titleId = uid('editor-title');
    const fields = new Map();
    const formError = h('p', { class: 'error', role: 'alert', tabindex: '-1', hidden: true });

    function field(name, label, input, hint) {
      const id = uid(`profile-${name}`);
      input.id = id;
      const error = h('p', { class: 'field-error', id: `${id}-error`, hidden: true });
      const hintEl = hint ? h('p', { class: 'hint', id: `${id}-hint` }, hint) : null;
      if (hintEl) input.setAttribute('aria-describedby', hintEl.id);
      fields.set(name, { input, error, hint: hintEl });
      return h('div', { class: 'field' }, h('label', { for: id }, label), input, hintEl, error);
    }
    const lines = (values) => (values || []).join('\n');
    const pairs = (map) => Object.entries(map || {}).map(([k, v]) => `${k} = ${v}`).join('\n');

    const name = h('input', { type: 'text', required: true, autocomplete: 'off', spellcheck: 'false', value: profile ? profile.name : '', readonly: Boolean(profile) });
    const everyServer = h('input', { type: 'checkbox', id: uid('every'), checked: !record.servers });
    const serverBoxes = data.servers.map((s) => {
      const box = h('input', { type: 'checkbox', id: uid('server'), value: s.name, checked: Boolean(record.servers && record.servers.includes(s.name)) });
      return { box, element: h('label', { class: 'row', for: box.id }, box, h('span', {}, s.name), s.enabled ? null : h('span', { class: 'muted' }, t('profiles.disabledServer'))) };
    });
    const serversError = h('p', { class: 'field-error', id: uid('servers-error'), hidden: true });
    const serverList = h('div', { class: 'server-boxes' }, serverBoxes.map((s) => s.element));
    const showBoxes = () => { serverList.hidden = everyServer.checked; };
    everyServer.addEventListener('change', showBoxes);
    showBoxes();
    const serversSet = h('fieldset', { class: 'field' },
      h('legend', {}, t('profiles.form.servers')),
      h('label', { class: 'row', for: everyServer.id }, everyServer, h('span', {}, t('profiles.form.everyServer'))),
      serverList, serversError);
    fields.set('servers', { input: everyServer, error: serversError, hint: null });

    const tools = (record.tools || []);
    const includes = h('textarea', { rows: 3, spellcheck: 'false' });
    includes.value = lines(tools.filter((g) => !g.startsWith('!')));
    const excludes = h('textarea', { rows: 2, spellcheck: 'false' });
    excludes.value = lines(tools.filter((g) => g.startsWith('!')).map((g) => g.slice(1)));
    const renames = h('textarea', { rows: 2, spellcheck: 'false' });
    renames.value = pairs(record.rename);
    const descriptions = h('textarea', { rows: 2 });
    descriptions.value = pairs(record.descriptions);
    const discovery = h('select', {},
      ['list', 'search'].map((value) => h('option', { value }, t(`profiles.discovery.${value}`))));
    discovery.value = record.discovery || 'list';

    const save = h('button', { type: 'submit', class: 'primary' }, t('common.actions.save'));
    const cancel = h('button', { type: 'button', onclick: close }, t('common.actions.cancel'));
    const remove = profile ? h('button', { type: 'button', class: 'danger' }, t('profiles.delete')) : null;
    if (remove) remove.addEventListener('click', () => confirmDelete(profile, remove, close));

    const preview = h('div', { 'aria-live': 'polite' });
    const form = h('form', { novalidate: true, 'aria-labelledby': titleId, class: 'profile-form' },
      formError,
      field('name', t('profiles.form.name'), name, t('profiles.form.nameHint')),
      serversSet,
      field('tools', t('profiles.form.tools'), includes, t('profiles.form.toolsHint')),
      field('exclusions', t('profiles.form.exclusions'), excludes, t('profiles.form.exclusionsHint')),
      field('rename', t('profiles.form.rename'), renames, t('profiles.form.renameHint')),
      field('descriptions', t('profiles.form.descriptions'), descriptions, t('profiles.form.descriptionsHint')),
      field('discovery', t('profiles.form.discovery'), discovery, t('profiles.form.discoveryHint')),
      h('div', { class: 'actions' }, save, remove, cancel));
    replace(editor,
      h('h2', { id: titleId }, profile ? t('profiles.editTitle', { name: profile.name }) : t('profiles.new')),
      form,
      h('section', { 'aria-label': t('profiles.preview.title') }, h('h3', {}, t('profiles.preview.title')), preview));
    editor.hidden = false;

    function close() {
      editor.hidden = true;
      replace(editor);
      if (opener && opener.isConnected) opener.focus();
    }

    /** `TOOL = TEXT` lines as an object, or the line that is not one. */
    function parsePairs(text) {
      const out = {};
      for (const line of text.split('\n').map((l) => l.trim()).filter(Boolean)) {
        const at = line.indexOf('=');
        if (at <= 0) return { bad: line };
        out[line.slice(0, at).trim()] = line.slice(at + 1).trim();
      }
      return { value: out };
    }

    /** The record the form describes; `{bad: field, line}` for a line that is not `TOOL = TEXT`. */
    function body() {
      const globs = (el) => el.value.split('\n').map((l) => l.trim()).filter(Boolean);
      const out = {};
      if (!everyServer.checked) out.servers = serverBoxes.filter((s) => s.box.checked).map((s) => s.box.value);
      const all = [...globs(includes), ...globs(excludes).map((g) => (g.startsWith('!') ? g : `!${g}`))];
      if (all.length) out.tools = all;
      for (const [key, el] of [['rename', renames], ['descriptions', descriptions]]) {
        const parsed = parsePairs(el.value);
        if (parsed.bad !== undefined) return { bad: key, line: parsed.bad };
        if (Object.keys(parsed.value).length) out[key] = parsed.value;
      }
      if (discovery.value !== 'list') out.discovery = discovery.value;
      return { record: out };
    }

    function clearErrors() {
      formError.hidden = true;
      for (const { input, error, hint } of fields.values()) {
        input.removeAttribute('aria-invalid');
        error.hidden = true;
        replace(error);
        if (hint) input.setAttribute('aria-describedby', hint.id);
        else input.removeAttribute('aria-describedby');
      }
    }

    function showError(fieldName, message, { focus = true } = {}) {
      const target = fields.get(fieldName === 'tools' && !includes.value.trim() ? 'exclusions' : fieldName);
      if (!target) {
        replace(formError, t('profiles.form.notSaved', { message }));
        formError.hidden = false;
        if (focus) formError.focus();
        return;
      }
      replace(target.error, message);
      target.error.hidden = false;
      target.input.setAttribute('aria-invalid', 'true');
      target.input.setAttribute('aria-describedby', [target.hint && target.hint.id, target.error.id].filter(Boolean).join(' '));
      if (focus) target.input.focus();
    }

    let ticket = 0;
    let timer = null;
    async function showPreview() {
      const mine = ++ticket;
      const built = body();
      if (built.bad) {
        replace(preview, h('p', { class: 'warn' }, t('profiles.form.badLine', { line: built.line })));
        return;
      }
      try {
        const result = await post('/profile-preview', { name: name.value.trim() || null, record: built.record });
        if (mine !== ticket || !preview.isConnected) return;
        replace(preview, previewOf(result));
      } catch (error) {
        if (mine !== ticket || !preview.isConnected) return;
        replace(preview, h('p', { class: 'warn' }, t('profiles.preview.invalid', { message: error.message })));
      }
    }
    form.addEventListener('input', () => { clearTimeout(timer); timer = setTimeout(showPreview, 300); });
    form.addEventListener('change', () => { clearTimeout(timer); timer = setTimeout(showPreview, 100); });
    showPreview();

    form.addEventListener('submit', async (event) => {
      event.preventDefault();
      clearErrors();
      const profileName = name.value.trim();
      if (!profileName) { showError('name', t('profiles.form.nameMissing')); return; }
      const built = body();
      if (built.bad) { showError(built.bad, t('profiles.form.badLine', { line: built.line })); return; }
      save.disabled = true;
      try {
        const saved = await put(`/profiles/${encodeURIComponent(profileName)}`, built.record);
        toast(t(saved.created ? 'profiles.created' : 'profiles.saved', { name: profileName }));
        close();
        await refresh();
        const again = list.querySelector(`[data-action="edit"][data-profile="${CSS.escape(profileName)}"]`);
        if (again) again.focus();
      } catch (error) {
        showError(error.field, error.message);
      } finally {
        save.disabled = false;
      }
    });
    name.focus();
  }

  await refresh();
}

/** The preview's table and notes. */
function previewOf(result) {
  const served = result.tools.filter((tool) => tool.included);
  const why = (tool) => {
    if (tool.why === 'glob') return t('profiles.preview.byGlob', { glob: tool.glob });
    if (tool.why === 'all') return t('profiles.preview.all');
    if (tool.why === 'excluded') return t('profiles.preview.excludedBy', { glob: tool.glob });
    return t('profiles.preview.notIncluded');
  };
  const notes = [];
  for (const server of result.servers) {
    if (server.served === false) notes.push(t('profiles.preview.serverNotServed', { name: server.name }));
    else if (!server.listed) notes.push(t('profiles.preview.serverFailed', { name: server.name, message: server.error || '' }));
  }
  for (const key of result.unused.rename) notes.push(t('profiles.preview.unusedRename', { tool: key }));
  for (const key of result.unused.descriptions) notes.push(t('profiles.preview.unusedDescription', { tool: key }));
  for (const tool of result.tools) {
    if (tool.renameNotApplied) notes.push(t('profiles.preview.renameTaken', { tool: `${tool.server}__${tool.tool}`, name: tool.renameNotApplied }));
  }
  return h('div', {},
    h('p', {}, t(result.discovery === 'search' ? 'profiles.preview.summarySearch' : 'profiles.preview.summary', { count: served.length, total: result.tools.length })),
    notes.length ? h('ul', { class: 'warn' }, notes.map((n) => h('li', {}, n))) : null,
    result.tools.length ? h('div', { class: 'table-wrap profile-preview' }, h('table', { 'aria-label': t('profiles.preview.table') },
      h('thead', {}, h('tr', {}, ['tool', 'name', 'why', 'description'].map((c) => h('th', { scope: 'col' }, t(`profiles.preview.column.${c}`))))),
      h('tbody', {}, result.tools.map((tool) => h('tr', { class: tool.included ? '' : 'muted', 'data-tool': `${tool.server}__${tool.tool}` },
        // A narrow column breaks the name after its server's "__".
        h('td', {}, h('code', {}, `${tool.server}__`, h('wbr'), tool.tool)),
        h('td', {}, tool.included
          ? [h('code', {}, tool.name), tool.renamed ? h('span', { class: 'badge' }, t('profiles.preview.renamed')) : null]
          : h('span', {}, t('profiles.preview.notServed'))),
        h('td', {}, why(tool)),
        h('td', {}, tool.description || '', tool.describedAnew ? h('span', { class: 'badge' }, t('profiles.preview.describedAnew')) : null))))))
      : h('p', { class: 'muted' }, t('profiles.preview.noTools')));
}
