// The Doctor view: `toolbridge doctor` in the page. The launchers found,
// then each server with its findings and their fixes; a missing launcher
// toolbridge knows how to install gets an "Install" button, which shows the
// exact command and runs it only after a confirmation in a dialog.
//
// Accessible names: button "Check again"; per finding with an install
// command and per missing launcher, button "Install COMMAND"; per finding
// whose fix is to sign in, button "Sign in to NAME" (the Servers view's
// sign-in, components/sign-in.js); dialog
// "Install COMMAND?" (showing the exact command) with buttons "Install" and
// "Cancel".
import { h, replace } from '../dom.js';
import { t } from '../i18n.js';
import { get, post } from '../api.js';
import { describeFix, describeProblem } from '../components/problem.js';
import { modal } from '../components/dialog.js';
import { signInButton } from '../components/sign-in.js';

export async function render(main) {
  const body = h('div', { 'aria-live': 'polite' });
  const again = h('button', { type: 'button', onclick: () => check() }, t('doctor.again'));
  main.append(
    h('h1', {}, t('doctor.title')),
    h('p', { class: 'muted' }, t('doctor.intro')),
    h('div', { class: 'actions' }, again),
    body);

  async function check() {
    again.disabled = true;
    body.setAttribute('aria-busy', 'true');
    replace(body, h('p', { class: 'muted' }, t('doctor.checking')));
    try {
      show(await post('/doctor'));
    } catch (error) {
      replace(body, h('p', { class: 'error', role: 'alert' }, t('doctor.failed', { message: error.message })));
    } finally {
      again.disabled = false;
      body.removeAttribute('aria-busy');
    }
  }

  function show(report) {
    const launchers = h('ul', {}, report.launchers.map((l) => h('li', {},
      h('span', { class: `badge ${l.status === 'ok' ? 'ok' : 'warn'}` }, t(`doctor.launcher.${l.status}`)), ' ',
      h('code', {}, l.command),
      l.version ? ` ${l.version}` : '',
      l.reason ? h('span', { class: 'muted' }, ` (${l.reason})`) : null,
      l.status === 'ok' ? null : installControl(l.command, null))));
    const servers = report.servers.map((server) => {
      const findings = report.findings.filter((f) => f.server === server.name);
      return h('article', { class: 'card', 'aria-label': server.name },
        h('h3', { class: 'row' },
          h('span', {}, server.name),
          h('span', { class: `badge ${statusClass(server.status)}` }, t(`doctor.status.${server.status}`))),
        server.status === 'ok'
          ? h('p', { class: 'ok' }, t('doctor.works', { count: server.toolCount, ms: server.startMs }))
          : null,
        findings.length ? h('ul', {}, findings.map((f) => h('li', {}, finding(f, server)))) : null);
    });
    replace(body,
      h('h2', {}, t('doctor.launchers')), launchers,
      h('h2', {}, t('doctor.servers')),
      servers.length ? servers : h('p', { class: 'muted' }, t('doctor.noServers')),
      h('p', {}, report.findings.length
        ? t('doctor.problemCount', { count: report.findings.length })
        : t('doctor.allGood')));
  }

  function finding(f, server) {
    const command = f.problem.kind === 'commandNotFound' ? f.problem.command : null;
    return [
      h('p', { class: 'error' }, describeProblem(f.problem)),
      h('p', {}, t('doctor.fix', { fix: describeFix(f.fixKind) })),
      f.problem.stderr ? h('details', {}, h('summary', {}, t('doctor.stderr')), h('pre', {}, f.problem.stderr)) : null,
      command && f.installCommand ? installControl(command, f.installCommand) : null,
      f.fixKind.kind === 'signIn' ? signInControl(server) : null,
    ];
  }

  /**
   * The Servers view's Sign in, for a finding whose fix is a sign-in: once
   * signed in, the servers are checked again.
   */
  function signInControl(server) {
    const result = h('div', { role: 'status' });
    const button = signInButton(server, result, { alive: () => body.isConnected, done: () => check() });
    return h('div', {}, h('div', { class: 'actions' }, button), result);
  }

  /**
   * An "Install COMMAND" button and where its outcome goes. `line` is the
   * install command when known; else it is asked for before the dialog.
   */
  function installControl(command, line) {
    const result = h('div', { role: 'status' });
    const install = h('button', { type: 'button' }, t('doctor.install'));
    install.setAttribute('aria-label', t('doctor.installLabel', { command }));
    install.addEventListener('click', async () => {
      if (line) return confirmInstall(command, line, install, result);
      try {
        const plan = await get(`/doctor/install/${encodeURIComponent(command)}`);
        if (plan.ran) confirmInstall(command, plan.ran, install, result);
        else replace(result, h('p', { class: 'warn' }, t('doctor.noAutomaticInstall', { software: plan.software, url: plan.downloadUrl })));
      } catch (error) {
        replace(result, h('p', { class: 'error' }, error.message));
      }
    });
    return h('div', {}, h('div', { class: 'actions' }, install), result);
  }

  function confirmInstall(command, line, opener, result) {
    const { dialog, heading, open } = modal(
      t('doctor.installTitle', { command }), opener, { role: 'alertdialog' });
    const cancel = h('button', { type: 'button', onclick: () => dialog.close() }, t('common.actions.cancel'));
    const run = h('button', { type: 'button', class: 'primary' }, t('doctor.install'));
    run.addEventListener('click', async () => {
      dialog.close();
      opener.disabled = true;
      replace(result, h('p', { class: 'muted' }, t('doctor.installing', { command })));
      try {
        const outcome = await post('/doctor/install', { command, confirm: true });
        replace(result,
          outcome.installed
            ? h('p', { class: 'ok' }, t('doctor.installed', { command, version: outcome.version || '' }))
            : h('p', { class: 'warn' }, t('doctor.notOnPath', { command })),
          outcome.output ? h('pre', {}, outcome.output) : null);
      } catch (error) {
        replace(result, h('p', { class: 'error' }, error.message));
      } finally {
        opener.disabled = false;
      }
    });
    dialog.append(
      heading,
      h('p', {}, t('doctor.installQuestion')),
      h('pre', {}, line),
      h('div', { class: 'actions' }, cancel, run));
    open(cancel);
  }

  await check();
}

function statusClass(status) {
  return { ok: 'ok', problem: 'error', disabled: 'muted' }[status] || '';
}
