// The Home view (the landing view): the gateway's URLs (`/mcp` and each
// profile's `/mcp/NAME`), how clients sign in (never a token), "Connect a
// client" with the exact config of each application and a copy button for
// each, and the clients connected now (refreshed every 2 s).
//
// Accessible names: select "Profile"; per snippet, button "Copy for APP";
// per URL, button "Copy URL"; table "Connected clients".
import { h, replace, uid } from '../dom.js';
import { t, currentLanguage } from '../i18n.js';
import { get } from '../api.js';
import { toast } from '../app.js';
import { snippets } from '../components/connect.js';
import { liveStyles, every, ago } from '../components/live.js';

async function copy(text) {
  try {
    await navigator.clipboard.writeText(text);
    toast(t('home.copied'));
  } catch (error) {
    toast(t('home.copyFailed', { message: error.message }));
  }
}

function copyButton(label, text) {
  return h('button', { type: 'button', class: 'copy', onclick: () => copy(text) }, label);
}

export async function render(main) {
  liveStyles();
  const info = await get('/home');
  const base = location.origin;
  const urlOf = (profile) => `${base}/mcp${profile ? `/${encodeURIComponent(profile)}` : ''}`;

  const urls = h('ul', { class: 'urls' },
    [null, ...info.profiles].map((profile) => h('li', {},
      h('code', { class: 'url' }, urlOf(profile)), ' ',
      h('span', { class: 'muted' }, profile ? t('home.profileUrl', { name: profile }) : t('home.allUrl')), ' ',
      h('button', { type: 'button', class: 'copy', 'aria-label': t('home.copyUrlOf', { url: urlOf(profile) }), onclick: () => copy(urlOf(profile)) }, t('home.copyUrl')))));

  const token = info.token.source === 'env'
    ? t('home.token.env', { variable: info.token.variable })
    : info.token.source === 'file' ? t('home.token.file', { file: info.token.file }) : t('home.token.none');

  const profileId = uid('profile');
  const select = h('select', { id: profileId },
    h('option', { value: '' }, t('home.allServers')),
    info.profiles.map((p) => h('option', { value: p }, p)));
  const panel = h('div', { class: 'snippets' });
  const showSnippets = () => {
    const profile = select.value || null;
    const list = snippets({ url: urlOf(profile), profile, configPath: info.configPath, token: info.token });
    replace(panel, list.map((s) => h('article', { class: 'card snippet', 'aria-label': s.app },
      h('div', { class: 'row' },
        h('h3', {}, s.app),
        h('span', { class: 'muted where' }, s.where === 'shell' ? t('home.inShell') : s.where),
        copyButton(t('home.copyFor', { app: s.app }), s.text)),
      h('pre', {}, h('code', {}, s.text)))));
  };
  select.addEventListener('change', showSnippets);
  showSnippets();

  const clients = h('div', { 'aria-live': 'polite' });
  const failed = h('p', { class: 'error', role: 'alert', hidden: true });
  main.append(
    h('h1', {}, t('home.title')),
    h('p', { class: 'muted' }, t('home.intro')),
    h('h2', {}, t('home.urls')), urls,
    h('p', {}, h('strong', {}, t('home.token.label')), ' ', token),
    info.oauth ? h('p', {}, t('home.oauth')) : '',
    h('p', { class: 'muted' }, t('home.clientTokens')),
    h('h2', {}, t('home.connect')),
    h('p', { class: 'muted' }, info.token.source === 'none' ? t('home.connectIntro') : t('home.connectIntroToken')),
    h('div', { class: 'field' }, h('label', { for: profileId }, t('home.profile')), select),
    panel,
    h('h2', {}, t('home.clients')), failed, clients);

  await every(2000, clients, async () => {
    const { clients: list } = await get('/home');
    failed.hidden = true;
    showClients(list);
  }, (error) => { replace(failed, t('home.refreshFailed', { message: error.message })); failed.hidden = false; });

  function showClients(list) {
    if (!list.length) {
      replace(clients, h('p', { class: 'muted' }, t('home.noClients')));
      return;
    }
    const lang = currentLanguage();
    replace(clients, h('div', { class: 'table-wrap' }, h('table', { 'aria-label': t('home.clients') },
      h('thead', {}, h('tr', {}, ['name', 'version', 'protocol', 'profile', 'calls', 'lastSeen', 'state']
        .map((c) => h('th', { scope: 'col' }, t(`home.column.${c}`))))),
      h('tbody', {}, list.map((c) => h('tr', {},
        h('td', {}, c.name, c.signedInAs ? h('div', { class: 'muted' }, c.signedInAs) : null),
        h('td', {}, c.version),
        h('td', {}, c.protocol),
        h('td', {}, c.profile || '/mcp'),
        h('td', {}, String(c.calls)),
        h('td', {}, ago(c.lastSeenMs, lang)),
        h('td', {}, h('span', { class: `badge ${c.open ? 'ok' : 'muted'}` }, t(c.stateless ? 'home.stateless' : c.open ? 'home.open' : 'home.closed')))))))));
  }
}
