// The Activity view: the tool calls in flight, each with its server's
// progress as a progress bar (a bar without a value while the server has
// sent none, or no total), and the last calls with their outcome and
// duration (what the audit lines say). Refreshed every second.
//
// Accessible names: table "Calls in flight" (a progressbar per call, named
// "Progress of SERVER/TOOL"); table "Recent calls".
import { h, replace } from '../dom.js';
import { t, currentLanguage } from '../i18n.js';
import { get } from '../api.js';
import { liveStyles, every, ago } from '../components/live.js';

const OUTCOME_CLASS = { ok: 'ok', tool_error: 'warn', failed: 'error', cancelled: 'muted' };

export async function render(main) {
  liveStyles();
  const running = h('div', { 'aria-live': 'polite' });
  const recent = h('div');
  const failed = h('p', { class: 'error', role: 'alert', hidden: true });
  main.append(
    h('h1', {}, t('home.activity.title')),
    h('p', { class: 'muted' }, t('home.activity.intro')),
    failed,
    h('h2', {}, t('home.activity.running')), running,
    h('h2', {}, t('home.activity.recent')), recent);

  await every(1000, running, async () => {
    const snapshot = await get('/activity');
    failed.hidden = true;
    show(snapshot);
  }, (error) => { replace(failed, t('home.refreshFailed', { message: error.message })); failed.hidden = false; });

  function show({ running: calls, recent: ended }) {
    const lang = currentLanguage();
    replace(running, calls.length ? h('div', { class: 'table-wrap' }, h('table', { 'aria-label': t('home.activity.running') },
      h('thead', {}, h('tr', {}, ['tool', 'client', 'started', 'progress'].map((c) => h('th', { scope: 'col' }, t(`home.activity.column.${c}`))))),
      h('tbody', {}, calls.map((c) => h('tr', {},
        h('td', {}, h('code', {}, `${c.server}/${c.tool}`)),
        h('td', {}, c.client),
        h('td', {}, ago(c.startedMs, lang)),
        h('td', {}, progressBar(c))))))) : h('p', { class: 'muted' }, t('home.activity.none')));
    replace(recent, ended.length ? h('div', { class: 'table-wrap' }, h('table', { 'aria-label': t('home.activity.recent') },
      h('thead', {}, h('tr', {}, ['tool', 'client', 'started', 'outcome', 'duration'].map((c) => h('th', { scope: 'col' }, t(`home.activity.column.${c}`))))),
      h('tbody', {}, ended.map((c) => h('tr', {},
        h('td', {}, h('code', {}, `${c.server}/${c.tool}`)),
        h('td', {}, c.client),
        h('td', {}, ago(c.startedMs, lang)),
        h('td', {}, h('span', { class: `badge ${OUTCOME_CLASS[c.outcome] || ''}` }, t(`home.activity.outcome.${c.outcome}`))),
        h('td', {}, t('home.activity.ms', { ms: Math.round(c.durationMs) })))))))
      : h('p', { class: 'muted' }, t('home.activity.noRecent')));
  }
}

/** The call's progress: a determinate bar with a total, else indeterminate. */
function progressBar(call) {
  const name = t('home.activity.progressOf', { call: `${call.server}/${call.tool}` });
  const known = call.progress !== null && call.progress !== undefined;
  const bar = h('progress', { 'aria-label': name });
  if (known && call.total) {
    bar.max = call.total;
    bar.value = Math.min(call.progress, call.total);
  }
  const words = known
    ? (call.total ? t('home.activity.of', { progress: call.progress, total: call.total }) : String(call.progress))
    : t('home.activity.noProgress');
  return h('div', {}, bar, h('div', { class: 'muted' }, words, call.message ? ` — ${call.message}` : ''));
}
