// The Servers view's "Import" dialog: the servers of another application's
// MCP config file (Claude Desktop, Cursor, VS Code, Claude Code, Windsurf,
// Zed), previewed, then the chosen ones added (POST /api/import/preview and
// /api/import: the CLI's `servers import` code). The file is read here, in
// the browser, and its text sent: the gateway reads no path the page names.
//
// Accessible names: dialog "Import servers"; file field "Config file";
// per server NAME a checkbox "Import NAME" (disabled when the config has
// the name already); buttons "Import chosen servers" and "Cancel".
import { h, replace, uid } from '../dom.js';
import { t } from '../i18n.js';
import { post } from '../api.js';
import { modal } from './dialog.js';

/** Opens the dialog from `opener`; `onImported(names)` after an import. */
export function openImport(opener, onImported) {
  const { dialog, heading, open } = modal(t('servers.import.title'), opener);
  const fileId = uid('import-file');
  const hintId = uid('import-hint');
  const file = h('input', { id: fileId, type: 'file', accept: '.json,.jsonc,application/json', 'aria-describedby': hintId });
  const preview = h('div', { 'aria-live': 'polite' });
  const problem = h('p', { class: 'error', role: 'alert', hidden: true });
  const submit = h('button', { type: 'submit', class: 'primary', disabled: true }, t('servers.import.submit'));
  const cancel = h('button', { type: 'button', onclick: () => dialog.close() }, t('common.actions.cancel'));
  let picked = null;
  let boxes = [];

  const fail = (message) => { replace(problem, message); problem.hidden = false; };

  file.addEventListener('change', async () => {
    problem.hidden = true;
    submit.disabled = true;
    boxes = [];
    replace(preview);
    const chosen = file.files && file.files[0];
    if (!chosen) return;
    try {
      picked = { fileName: chosen.name, text: await chosen.text() };
      preview.setAttribute('aria-busy', 'true');
      const found = await post('/import/preview', picked);
      showPreview(found);
    } catch (error) {
      fail(error.message);
    } finally {
      preview.removeAttribute('aria-busy');
    }
  });

  function showPreview(found) {
    if (!found.servers.length && !found.invalid.length) {
      replace(preview, h('p', { class: 'muted' }, t('servers.import.none')));
      return;
    }
    boxes = found.servers.map((server) => {
      const box = h('input', { type: 'checkbox', id: uid('import'), checked: !server.exists, disabled: server.exists });
      box.setAttribute('aria-label', t('servers.import.choose', { name: server.name }));
      box.dataset.server = server.name;
      box.addEventListener('change', update);
      return { box, server };
    });
    replace(preview,
      h('p', { class: 'muted' }, t('servers.import.foundIn', { count: found.servers.length, key: found.foundIn })),
      h('ul', { class: 'import-list' }, boxes.map(({ box, server }) => h('li', {},
        h('label', { for: box.id, class: 'row' }, box,
          h('strong', {}, server.name), ' ',
          h('span', { class: 'badge' }, server.transport), ' ',
          h('code', {}, server.launch)),
        server.env.length ? h('p', { class: 'hint' }, t('servers.import.env', { names: server.env.join(', ') })) : null,
        server.headers.length ? h('p', { class: 'hint' }, t('servers.import.headers', { names: server.headers.join(', ') })) : null,
        server.exists ? h('p', { class: 'hint warn' }, t('servers.import.exists', { name: server.name })) : null))),
      found.invalid.length
        ? h('details', {}, h('summary', {}, t('servers.import.invalid', { count: found.invalid.length })),
          h('ul', {}, found.invalid.map((why) => h('li', {}, why))))
        : null);
    update();
  }

  function update() {
    submit.disabled = !boxes.some(({ box }) => box.checked && !box.disabled);
  }

  const form = h('form', {
    onsubmit: async (event) => {
      event.preventDefault();
      problem.hidden = true;
      const servers = boxes.filter(({ box }) => box.checked && !box.disabled).map(({ server }) => server.name);
      submit.disabled = true;
      try {
        const report = await post('/import', { ...picked, servers });
        dialog.close();
        onImported(report.added);
      } catch (error) {
        fail(error.message);
        update();
      }
    },
  },
  h('div', { class: 'field' },
    h('label', { for: fileId }, t('servers.import.file')),
    file,
    h('span', { class: 'hint', id: hintId }, t('servers.import.where'))),
  preview,
  problem,
  h('div', { class: 'actions' }, cancel, submit));
  dialog.append(heading, form);
  open(file);
}
