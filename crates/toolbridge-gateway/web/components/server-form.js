// The add/edit form of one server (the spec's McpServerForm): a field set
// per transport, errors from the server shown next to their field.
//
// stdio: Name, Transport, Command, Arguments (one per line), Environment
// (variable/value rows); http and sse: URL, Headers (name/value rows);
// websocket: URL and its subprotocol (always "mcp": shown, not editable).
// Secret values (env and header values) come from the server as "***" and
// are shown in password inputs; sent back unchanged they keep the saved
// value.
import { h, uid, replace } from '../dom.js';
import { t } from '../i18n.js';

export const TRANSPORTS = ['stdio', 'http', 'sse', 'websocket'];

/**
 * serverForm({server, onSubmit, onCancel}) -> {element, showError, focus}.
 * `server` is a server of GET /api/servers (or null to add one);
 * `onSubmit(body)` returns a promise; a rejected ApiError is shown.
 */
export function serverForm({ server = null, onSubmit, onCancel }) {
  const fields = new Map(); // field name -> {input, error}
  const formError = h('p', { class: 'error', role: 'alert', tabindex: '-1', hidden: true });

  function field(name, label, input, hint) {
    const id = uid(`server-${name}`);
    input.id = id;
    input.name = name;
    const error = h('p', { class: 'field-error', id: `${id}-error`, hidden: true });
    const hintEl = hint ? h('p', { class: 'hint', id: `${id}-hint` }, hint) : null;
    if (hintEl) input.setAttribute('aria-describedby', hintEl.id);
    fields.set(name, { input, error, hint: hintEl });
    return h('div', { class: 'field' }, h('label', { for: id }, label), input, hintEl, error);
  }

  const name = h('input', { type: 'text', required: true, autocomplete: 'off', value: server ? server.name : '' });
  const transport = h('select', {},
    TRANSPORTS.map((value) => h('option', { value }, t(`servers.form.transports.${value}`))));
  transport.value = server ? server.transport : 'stdio';
  const command = h('input', { type: 'text', autocomplete: 'off', spellcheck: 'false', value: server && server.command ? server.command : '' });
  const args = h('textarea', { rows: 3, spellcheck: 'false' });
  args.value = server && server.args ? server.args.join('\n') : '';
  const url = h('input', { type: 'url', autocomplete: 'off', spellcheck: 'false', value: server && server.url ? server.url : '' });
  const subprotocol = h('input', { type: 'text', value: 'mcp', readonly: true });

  const env = pairs('env', server && server.env, t('servers.form.env'), t('servers.form.envKey'), t('servers.form.addEnv'));
  const headers = pairs('headers', server && server.headers, t('servers.form.headers'), t('servers.form.headerKey'), t('servers.form.addHeader'));

  const stdioPart = h('div', {},
    field('command', t('servers.form.command'), command, t('servers.form.commandHint')),
    field('args', t('servers.form.args'), args, t('servers.form.argsHint')),
    env.element);
  const urlField = field('url', t('servers.form.url'), url, t('servers.form.urlHint'));
  const wsPart = field('subprotocol', t('servers.form.subprotocol'), subprotocol, t('servers.form.subprotocolHint'));
  const remotePart = h('div', {}, urlField, wsPart, headers.element);

  function showPart() {
    const stdio = transport.value === 'stdio';
    stdioPart.hidden = !stdio;
    remotePart.hidden = stdio;
    wsPart.hidden = transport.value !== 'websocket';
  }
  transport.addEventListener('change', showPart);

  const save = h('button', { type: 'submit', class: 'primary' }, t('common.actions.save'));
  const cancel = h('button', { type: 'button', onclick: () => onCancel && onCancel() }, t('common.actions.cancel'));
  const element = h('form', { novalidate: true, class: 'server-form' },
    formError,
    field('name', t('servers.form.name'), name),
    field('transport', t('servers.form.transport'), transport),
    stdioPart,
    remotePart,
    h('div', { class: 'actions' }, save, cancel));
  showPart();

  function body() {
    const stdio = transport.value === 'stdio';
    return {
      name: name.value.trim(),
      transport: transport.value,
      command: stdio ? command.value.trim() : '',
      args: stdio ? args.value.split('\n').map((a) => a.trim()).filter((a) => a !== '') : [],
      env: stdio ? env.values() : [],
      url: stdio ? '' : url.value.trim(),
      headers: stdio ? [] : headers.values(),
    };
  }

  function clearErrors() {
    formError.hidden = true;
    for (const { input, error, hint } of [...fields.values(), ...env.fields(), ...headers.fields()]) {
      input.removeAttribute('aria-invalid');
      error.hidden = true;
      replace(error);
      if (hint) input.setAttribute('aria-describedby', hint.id);
      else input.removeAttribute('aria-describedby');
    }
  }

  /** Shows `error` (an ApiError) next to its field, or above the form. */
  function showError(error) {
    const target = error.field ? findField(error.field) : null;
    if (!target) {
      replace(formError, t('servers.form.notSaved', { message: error.message }));
      formError.hidden = false;
      formError.focus();
      return;
    }
    replace(target.error, error.message);
    target.error.hidden = false;
    target.input.setAttribute('aria-invalid', 'true');
    target.input.setAttribute('aria-describedby', [target.hint && target.hint.id, target.error.id].filter(Boolean).join(' '));
    target.input.focus();
  }

  function findField(name) {
    if (fields.has(name)) return fields.get(name);
    const [group, key] = name.split(/\.(.*)/s);
    const rows = group === 'env' ? env : group === 'headers' ? headers : null;
    if (!rows) return null;
    return (key !== undefined && rows.field(key)) || rows.groupField();
  }

  element.addEventListener('submit', async (event) => {
    event.preventDefault();
    clearErrors();
    save.disabled = true;
    save.setAttribute('aria-busy', 'true');
    try {
      await onSubmit(body());
    } catch (error) {
      showError(error);
    } finally {
      save.disabled = false;
      save.removeAttribute('aria-busy');
    }
  });

  return { element, showError, focus: () => name.focus() };
}

/**
 * Key/value rows (environment variables, headers) in a fieldset; values
 * are password inputs (secrets). `initial` maps keys to values.
 */
function pairs(group, initial, legend, keyLabel, addLabel) {
  const list = h('div', { class: 'pairs' });
  const error = h('p', { class: 'field-error', id: uid(`${group}-error`), hidden: true });
  const add = h('button', { type: 'button' }, addLabel);
  const fieldset = h('fieldset', { class: 'field' }, h('legend', {}, legend), list, error, add);
  const rows = [];

  function addRow(key = '', value = '') {
    const keyId = uid(`${group}-key`);
    const valueId = uid(`${group}-value`);
    const keyInput = h('input', { type: 'text', id: keyId, autocomplete: 'off', spellcheck: 'false', value: key });
    const valueInput = h('input', { type: 'password', id: valueId, autocomplete: 'off', value });
    const rowError = h('p', { class: 'field-error', id: `${keyId}-error`, hidden: true });
    const row = { keyInput, valueInput, error: rowError };
    const remove = h('button', {
      type: 'button',
      'aria-label': t('servers.form.removeRow', { key: key || '…' }),
      onclick: () => {
        rows.splice(rows.indexOf(row), 1);
        element.remove();
        add.focus();
      },
    }, '×');
    keyInput.addEventListener('input', () => remove.setAttribute('aria-label', t('servers.form.removeRow', { key: keyInput.value || '…' })));
    const element = h('div', { class: 'row pair' },
      h('div', { class: 'field' }, h('label', { for: keyId }, keyLabel), keyInput),
      h('div', { class: 'field' }, h('label', { for: valueId }, t('servers.form.value')), valueInput),
      remove,
      rowError);
    rows.push(row);
    list.append(element);
    return row;
  }

  for (const [key, value] of Object.entries(initial || {})) addRow(key, value);
  add.addEventListener('click', () => addRow().keyInput.focus());

  return {
    element: fieldset,
    values: () => rows.filter((r) => r.keyInput.value.trim() !== '' || r.valueInput.value !== '')
      .map((r) => ({ key: r.keyInput.value.trim(), value: r.valueInput.value })),
    fields: () => [
      ...rows.map((r) => ({ input: r.keyInput, error: r.error, hint: null })),
      { input: add, error, hint: null },
    ],
    field: (key) => {
      const row = rows.find((r) => r.keyInput.value.trim() === key);
      return row ? { input: row.keyInput, error: row.error, hint: null } : null;
    },
    groupField: () => ({ input: rows.length ? rows[rows.length - 1].keyInput : add, error, hint: null }),
  };
}
