// The Logs view: each server's stderr tail (as the pool keeps it, secrets
// masked) and the log messages (`notifications/message`) the servers sent,
// refreshed every 2 s.
//
// Accessible names: per server, region "SERVER"; list "Log messages".
import { h, replace } from '../dom.js';
import { t, currentLanguage } from '../i18n.js';
import { get } from '../api.js';
import { liveStyles, every, ago } from '../components/live.js';

export async function render(main) {
  liveStyles();
  const messages = h('div', { 'aria-live': 'polite' });
  const servers = h('div');
  const failed = h('p', { class: 'error', role: 'alert', hidden: true });
  main.append(
    h('h1', {}, t('home.logs.title')),
    h('p', { class: 'muted' }, t('home.logs.intro')),
    failed,
    h('h2', {}, t('home.logs.messages')), messages,
    h('h2', {}, t('home.logs.stderr')), servers);

  await every(2000, messages, async () => {
    const logs = await get('/logs');
    failed.hidden = true;
    show(logs);
  }, (error) => { replace(failed, t('home.refreshFailed', { message: error.message })); failed.hidden = false; });

  function show(logs) {
    const lang = currentLanguage();
    const lines = logs.messages.slice(-200).reverse();
    replace(messages, lines.length
      ? h('ul', { class: 'card log', 'aria-label': t('home.logs.messages') }, lines.map((m) => h('li', {},
        h('span', { class: 'muted' }, ago(m.atMs, lang)), ' ',
        h('strong', {}, m.server), ' ',
        h('span', { class: `level-${m.level}` }, m.level), ': ',
        m.logger ? `${m.logger}: ` : '', m.data)))
      : h('p', { class: 'muted' }, t('home.logs.noMessages')));
    replace(servers, logs.servers.length ? logs.servers.map((s) => h('section', { class: 'card', 'aria-label': s.name },
      h('h3', { class: 'row' }, h('span', {}, s.name),
        h('span', { class: `badge ${s.running ? 'ok' : 'muted'}` }, t(s.running ? 'home.logs.running' : 'home.logs.stopped'))),
      s.stderr ? h('pre', { class: 'log' }, s.stderr) : h('p', { class: 'muted' }, t('home.logs.noStderr'))))
      : h('p', { class: 'muted' }, t('home.logs.noServers')));
  }
}
