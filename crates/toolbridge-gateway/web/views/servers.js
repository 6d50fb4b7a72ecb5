// The Servers view: every configured server with its state, and the
// buttons to add, edit, enable/disable, test and remove them.
//
// Accessible names for the browser tests (English; other languages
// translate them):
// - button "Add server" (opens the dialog "Add server"); button "Import
//   servers from another app" (the dialog "Import servers", see
//   components/import-dialog.js);
// - per server NAME: checkbox "Enable NAME" (checked when enabled),
//   buttons "Edit NAME", "Test NAME", "Remove NAME";
// - dialog "Add server" / "Edit NAME": fields "Name", "Transport" (select:
//   stdio, http, sse, websocket), "Command", "Arguments" (one per line),
//   group "Environment" (rows "Variable" + "Value", button "Add variable"),
//   "URL", group "Headers" (rows "Header" + "Value", button "Add header"),
//   "Subprotocol" (websocket, read-only); buttons "Save", "Cancel";
//   Enter submits, Escape closes; a field the server refused has
//   aria-invalid="true" and its message in aria-describedby;
// - dialog "Remove server?": buttons "Remove", "Cancel";
// - a remote server that needs an OAuth sign-in: button "Sign in to NAME"
//   (visible text "Sign in"; it opens the authorization server's page in a
//   new tab and shows it as the link "Open the sign-in page"); one signed
//   in: button "Sign out of NAME" (visible text "Sign out");
// - each server is a list item (article) labelled by its name, with a
//   status badge (Running, Stopped, Failed, Disabled), a stdio server's
//   sandbox ("Sandbox: default", "Sandbox: off", or its rules; and, when
//   this system cannot sandbox it, why) and a test result region
//   (role=status).
import { h, replace, uid } from '../dom.js';
import { t, currentLanguage } from '../i18n.js';
import { get, post, put, del } from '../api.js';
import { toast } from '../app.js';
import { serverForm } from '../components/server-form.js';
import { describeFailure, describeFix, describeProblem } from '../components/problem.js';
import { modal } from '../components/dialog.js';
import { openImport } from '../components/import-dialog.js';
import { signInButton } from '../components/sign-in.js';

export async function render(main) {
  const list = h('div', { class: 'server-list', 'aria-busy': 'true' }, h('p', { class: 'muted' }, t('common.loading')));
  const about = h('p', { class: 'muted' });
  const addButton = h('button', { type: 'button', class: 'primary', onclick: () => openForm(null, addButton) }, t('servers.add'));
  const importButton = h('button', { type: 'button', 'aria-label': t('servers.import.buttonLabel') }, t('servers.import.button'));
  importButton.addEventListener('click', () => openImport(importButton, async (names) => {
    toast(t('servers.import.done', { names: names.join(', ') }));
    await changed();
  }));
  main.append(
    h('h1', {}, t('servers.title')),
    about,
    h('div', { class: 'actions' }, addButton, importButton),
    list,
  );

  // The gateway's config watcher applies a change within about a second:
  // after a write the list is shown at once, then once more when the
  // gateway has caught up (served, status).
  let settle = null;
  function refreshSoon() {
    clearTimeout(settle);
    settle = setTimeout(() => { if (list.isConnected) refresh({ keepFocus: true }); }, 1500);
  }

  async function refresh({ keepFocus = false } = {}) {
    const focused = keepFocus && document.activeElement && list.contains(document.activeElement)
      ? [document.activeElement.dataset.server, document.activeElement.dataset.action] : null;
    list.setAttribute('aria-busy', 'true');
    try {
      const data = await get('/servers');
      replace(about, t(data.builtin ? 'servers.builtin' : 'servers.configFile', { path: data.configPath }));
      if (!data.servers.length) {
        replace(list, h('p', { class: 'muted' }, t('servers.empty')));
      } else {
        const items = h('ul', {}, data.servers.map((server) => h('li', {}, card(server))));
        items.style.listStyle = 'none';
        items.style.padding = '0';
        replace(list, items);
      }
    } catch (error) {
      replace(list, h('p', { class: 'error', role: 'alert' }, t('servers.loadFailed', { message: error.message })));
    } finally {
      list.removeAttribute('aria-busy');
    }
    if (focused && focused[0]) focusControl(focused[0], focused[1]);
  }

  async function changed() {
    await refresh();
    refreshSoon();
  }

  function card(server) {
    const headingId = uid('server');
    const result = h('div', { class: 'result', role: 'status' });
    const toggle = h('input', { type: 'checkbox', id: uid('enable'), checked: server.enabled, disabled: server.builtin });
    toggle.setAttribute('aria-label', t('servers.enableLabel', { name: server.name }));
    toggle.addEventListener('change', async () => {
      toggle.disabled = true;
      try {
        await post(`/servers/${encodeURIComponent(server.ref)}/${toggle.checked ? 'enable' : 'disable'}`);
        toast(t(toggle.checked ? 'servers.enabledToast' : 'servers.disabledToast', { name: server.name }));
        await changed();
        focusControl(server.name, 'enable');
      } catch (error) {
        toggle.checked = !toggle.checked;
        toggle.disabled = false;
        replace(result, h('p', { class: 'error' }, error.message));
      }
    });
    const edit = h('button', { type: 'button', 'data-server': server.name, 'data-action': 'edit', disabled: server.builtin }, t('common.actions.edit'));
    edit.setAttribute('aria-label', t('servers.editLabel', { name: server.name }));
    edit.addEventListener('click', () => openForm(server, edit));
    const test = h('button', { type: 'button', 'data-server': server.name, 'data-action': 'test' }, t('servers.test'));
    test.setAttribute('aria-label', t('servers.testLabel', { name: server.name }));
    test.addEventListener('click', () => runTest(server, test, result));
    const remove = h('button', { type: 'button', class: 'danger', 'data-server': server.name, 'data-action': 'remove', disabled: server.builtin }, t('common.actions.remove'));
    remove.setAttribute('aria-label', t('servers.removeLabel', { name: server.name }));
    remove.addEventListener('click', () => confirmRemove(server, remove));
    toggle.dataset.server = server.name;
    toggle.dataset.action = 'enable';
    const signIn = server.signIn && server.signIn.needed
      ? signInButton(server, result, {
        alive: () => list.isConnected,
        done: async () => { await changed(); focusControl(server.name, 'sign-out'); },
      }) : null;
    const signOut = server.signIn && server.signIn.signedIn
      ? h('button', { type: 'button', 'data-server': server.name, 'data-action': 'sign-out' }, t('servers.signIn.outButton')) : null;
    if (signOut) {
      signOut.setAttribute('aria-label', t('servers.signIn.outLabel', { name: server.name }));
      signOut.addEventListener('click', () => runSignOut(server, signOut, result));
    }

    const facts = [
      h('span', { class: `badge ${statusClass(server.status)}` }, t(`servers.status.${server.status}`)),
      h('span', {}, t(`servers.form.transports.${server.transport}`)),
      server.toolCount !== undefined ? h('span', {}, t('servers.toolCount', { count: server.toolCount })) : null,
      server.startedAtMs ? h('span', {}, t('servers.startedAt', { time: new Date(server.startedAtMs).toLocaleString(locale()) })) : null,
      server.enabled && !server.served && !server.notServed ? h('span', { class: 'muted' }, t('servers.notServed')) : null,
      server.sandbox !== undefined ? h('span', { class: 'sandbox' }, t('servers.sandbox.label', { what: sandboxText(server.sandbox) })) : null,
      server.signIn && server.signIn.signedIn ? h('span', {}, t('servers.signIn.signedIn')) : null,
    ];
    const target = server.command ? [server.command, ...(server.args || [])].join(' ') : server.url;
    return h('article', { class: 'card', 'aria-labelledby': headingId },
      h('div', { class: 'row' },
        h('h2', { id: headingId, class: 'server-name' }, server.name),
        h('label', { class: 'row', for: toggle.id }, toggle, h('span', { 'aria-hidden': 'true' }, t('servers.enabled')))),
      h('p', { class: 'row' }, facts),
      target ? h('p', {}, h('code', {}, target)) : null,
      server.sandboxUnavailable ? h('p', { class: 'error' }, t('servers.sandbox.unavailable', { why: server.sandboxUnavailable })) : null,
      server.error ? h('p', { class: 'error' }, describeFailure(server.errorKind, server.error)) : null,
      signIn ? h('p', { class: 'muted' }, t('servers.signIn.needed')) : null,
      server.notServed ? whyNotServed(server) : null,
      server.stderr ? h('details', {}, h('summary', {}, t('servers.stderr')), h('pre', {}, server.stderr)) : null,
      h('div', { class: 'actions' }, signIn, signOut, edit, test, remove),
      result);
  }

  /** Why the server is not served, plainly, with the fix the page can make. */
  function whyNotServed(server) {
    const why = server.notServed;
    if (why.kind === 'invalid') return h('p', { class: 'warn' }, t('servers.why.invalid', { message: why.message }));
    if (why.kind === 'pending') return h('p', { class: 'muted' }, t('servers.why.pending'));
    const vars = { variable: why.variable, field: why.field, name: server.name };
    const reason = h('p', { class: 'warn' }, t('servers.why.unsetVariable', vars));
    if (!why.fixable) return h('div', {}, reason, h('p', { class: 'muted' }, t('servers.why.notFixable', vars)));
    const id = uid('variable');
    const input = h('input', { id, type: 'password', autocomplete: 'off', required: true });
    const error = h('p', { class: 'error', role: 'alert', hidden: true });
    const save = h('button', { type: 'submit', class: 'primary' }, t('servers.why.save', vars));
    const form = h('form', {
      onsubmit: async (event) => {
        event.preventDefault();
        save.disabled = true;
        error.hidden = true;
        try {
          await post(`/servers/${encodeURIComponent(server.ref)}/variable`, { variable: why.variable, value: input.value });
          input.value = '';
          toast(t('servers.why.saved', vars));
          await changed();
        } catch (e) {
          replace(error, e.message);
          error.hidden = false;
          save.disabled = false;
        }
      },
    },
    h('div', { class: 'field' }, h('label', { for: id }, t('servers.why.valueLabel', vars)), input,
      h('span', { class: 'hint' }, t('servers.why.fixHere', vars))),
    error,
    h('div', { class: 'actions' }, save));
    return h('div', {}, reason, form);
  }

  function focusControl(name, action) {
    for (const el of list.querySelectorAll(`[data-action="${action}"]`)) {
      if (el.dataset.server === name) { el.focus(); return; }
    }
  }

  async function runTest(server, button, result) {
    button.disabled = true;
    replace(result, h('p', { class: 'muted' }, t('servers.testing', { name: server.name })));
    try {
      const report = await post(`/servers/${encodeURIComponent(server.ref)}/test`);
      if (report.ok) {
        replace(result, h('p', { class: 'ok' }, t('servers.testOk', { name: server.name, count: report.toolCount, ms: report.startMs })));
      } else {
        replace(result,
          h('p', { class: 'error' }, t('servers.testFailed', { name: server.name })),
          h('ul', {}, report.findings.map((f) => h('li', {},
            h('span', {}, describeProblem(f.problem)), ' ',
            h('span', { class: 'muted' }, t('servers.fix', { fix: describeFix(f.fixKind) })),
            f.problem.stderr ? h('pre', {}, f.problem.stderr) : null))));
      }
    } catch (error) {
      replace(result, h('p', { class: 'error' }, error.message));
    } finally {
      button.disabled = false;
    }
  }

  async function runSignOut(server, button, result) {
    button.disabled = true;
    try {
      await post(`/servers/${encodeURIComponent(server.ref)}/sign-out`);
      toast(t('servers.signIn.outDone', { name: server.name }));
      await changed();
      focusControl(server.name, 'sign-in');
    } catch (error) {
      replace(result, h('p', { class: 'error', role: 'alert' }, t('servers.signIn.outFailed', { name: server.name, message: error.message })));
      button.disabled = false;
    }
  }

  function openForm(server, opener) {
    const { dialog, heading, open } = modal(
      server ? t('servers.editTitle', { name: server.name }) : t('servers.add'), opener);
    const close = () => { dialog.close(); };
    const form = serverForm({
      server,
      onCancel: close,
      onSubmit: async (body) => {
        const saved = server
          ? await put(`/servers/${encodeURIComponent(server.ref)}`, body)
          : await post('/servers', body);
        dialog.close();
        toast(t('servers.savedToast', { name: saved.name }));
        await changed();
        focusControl(saved.name, 'edit');
      },
    });
    dialog.append(heading, form.element);
    open(form);
  }

  function confirmRemove(server, opener) {
    const { dialog, heading, open } = modal(
      t('servers.removeTitle'), opener, { role: 'alertdialog' });
    const error = h('p', { class: 'error', role: 'alert', hidden: true });
    const cancel = h('button', { type: 'button', onclick: () => dialog.close() }, t('common.actions.cancel'));
    const confirm = h('button', { type: 'button', class: 'danger' }, t('common.actions.remove'));
    confirm.addEventListener('click', async () => {
      confirm.disabled = true;
      try {
        await del(`/servers/${encodeURIComponent(server.ref)}`);
        dialog.close();
        toast(t('servers.removedToast', { name: server.name }));
        await changed();
        addButton.focus();
      } catch (e) {
        replace(error, e.message);
        error.hidden = false;
        confirm.disabled = false;
      }
    });
    dialog.append(
      heading,
      h('p', {}, t('servers.removeQuestion', { name: server.name })),
      error,
      h('div', { class: 'actions' }, cancel, confirm));
    open(cancel);
  }

  await refresh();
}

// A stdio server's sandbox as its config resolves it (`servers list`):
// false, "default", or its rules.
function sandboxText(sandbox) {
  if (sandbox === false) return t('servers.sandbox.off');
  if (sandbox === 'default' || sandbox === true) return t('servers.sandbox.default');
  const parts = [t('servers.sandbox.rules', {
    read: (sandbox.read || []).length,
    write: (sandbox.write || []).length,
    network: sandbox.network || 'any',
  })];
  if (sandbox.memoryMb) parts.push(t('servers.sandbox.memory', { mb: sandbox.memoryMb }));
  if (sandbox.processes) parts.push(t('servers.sandbox.processes', { count: sandbox.processes }));
  return parts.join(', ');
}

function statusClass(status) {
  return { running: 'ok', failed: 'error', disabled: 'muted', stopped: '' }[status] || '';
}

function locale() {
  return { en: 'en', zh: 'zh-CN', ja: 'ja' }[currentLanguage()] || undefined;
}
