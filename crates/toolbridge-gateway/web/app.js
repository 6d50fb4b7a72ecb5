// The page: a hash router over the views (views/<name>.js, each exporting
// `render(main)`), the language switch, and a toast for short messages.
import { detectLanguage, setLanguage, onLanguageChange, currentLanguage, t } from './i18n.js';
import { replace, h } from './dom.js';
import { get, session, signIn, signOut } from './api.js';

const VIEWS = ['home', 'servers', 'profiles', 'presets', 'doctor', 'tools', 'catalog', 'activity', 'logs'];
const main = document.getElementById('main');

function route() {
  const [name, ...rest] = location.hash.replace(/^#\/?/, '').split('/');
  return { name: VIEWS.includes(name) ? name : 'home', params: rest.map(decodeURIComponent) };
}

let rendering = 0;
async function show() {
  const { name, params } = route();
  const ticket = ++rendering;
  for (const link of document.querySelectorAll('nav a')) {
    if (link.getAttribute('href') === `#/${name}`) link.setAttribute('aria-current', 'page');
    else link.removeAttribute('aria-current');
  }
  document.title = `${t(`common.nav.${name}`)} · toolbridge`;
  try {
    const view = await import(`./views/${name}.js`);
    if (ticket !== rendering) return;
    // An MCP App the view shows is told it goes, and given a moment
    // (components/mcp-app.js).
    await Promise.all([...main.querySelectorAll('.mcp-app')]
      .map((app) => (typeof app.teardown === 'function' ? app.teardown('the view is left') : null)));
    if (ticket !== rendering) return;
    // Views open their dialogs on <body>: close them with the view they
    // belong to (Back while one is open), else one stays, modal, over the next.
    for (const dialog of document.querySelectorAll('dialog[open]')) dialog.close();
    replace(main);
    await view.render(main, { params });
  } catch (error) {
    // Superseded (by the sign-in form, after a 401): not this view's to show.
    if (ticket !== rendering) return;
    console.error(error);
    replace(main, h('p', { class: 'error', role: 'alert' }, t('common.viewFailed', { message: error.message })));
  }
}

/** A short message in the corner (role=status: read by screen readers). */
export function toast(message) {
  const box = document.getElementById('toast');
  replace(box, message);
  box.classList.add('shown');
  clearTimeout(toast.timer);
  toast.timer = setTimeout(() => box.classList.remove('shown'), 4000);
}

/**
 * The sign-in form, shown when the gateway requires a token and this tab has
 * no session: the token is pasted here (never put in an address).
 */
function showSignIn() {
  rendering++;
  for (const dialog of document.querySelectorAll('dialog[open]')) dialog.close();
  const input = h('input', { id: 'sign-in-token', type: 'password', autocomplete: 'current-password', required: true });
  const error = h('p', { class: 'error', role: 'alert', hidden: true });
  const form = h('form', {
    onsubmit: async (event) => {
      event.preventDefault();
      error.hidden = true;
      try {
        await signIn({ token: input.value });
        input.value = '';
        updateSignOut();
        await show();
      } catch (e) {
        replace(error, t('common.signIn.failed', { message: e.message }));
        error.hidden = false;
        input.focus();
      }
    },
  },
  h('div', { class: 'field' }, h('label', { for: input.id }, t('common.signIn.token')), input),
  error,
  h('div', { class: 'actions' }, h('button', { type: 'submit', class: 'primary' }, t('common.signIn.submit'))));
  document.title = `${t('common.signIn.title')} · toolbridge`;
  replace(main, h('h1', {}, t('common.signIn.title')), h('p', { class: 'muted' }, t('common.signIn.intro')), form);
  updateSignOut();
  input.focus();
}

/** The "Sign out" button, shown while this tab holds a session. */
function updateSignOut() {
  const button = document.getElementById('sign-out');
  button.hidden = !session();
}

/** A one-time code in the address (`toolbridge ui` opens `/#code=...`). */
async function redeemCode() {
  const match = /^#code=([0-9a-fA-F]+)$/.exec(location.hash);
  if (!match) return;
  // Out of the address bar and the history before anything else.
  history.replaceState(null, '', location.pathname);
  try { await signIn({ code: match[1] }); } catch (e) { console.warn(`sign-in code refused: ${e.message}`); }
}

/**
 * The narrow screens' navigation menu (style.css shows the button under
 * 760 px and the links only while it is expanded): a disclosure button.
 * Following a link, Escape, or a click outside closes it; Escape gives the
 * focus back to the button.
 */
function setUpMenu() {
  const button = document.getElementById('menu');
  const nav = document.getElementById(button.getAttribute('aria-controls'));
  const setOpen = (open) => button.setAttribute('aria-expanded', String(open));
  const isOpen = () => button.getAttribute('aria-expanded') === 'true';
  button.addEventListener('click', () => setOpen(!isOpen()));
  nav.addEventListener('click', (event) => { if (event.target.closest('a')) setOpen(false); });
  document.addEventListener('keydown', (event) => {
    if (event.key !== 'Escape' || !isOpen()) return;
    setOpen(false);
    button.focus();
  });
  document.addEventListener('click', (event) => {
    if (isOpen() && !button.contains(event.target) && !nav.contains(event.target)) setOpen(false);
  });
  window.addEventListener('hashchange', () => setOpen(false));
}

async function start() {
  setUpMenu();
  const select = document.getElementById('lang');
  await setLanguage(detectLanguage(), { remember: false });
  select.value = currentLanguage();
  select.addEventListener('change', () => setLanguage(select.value));
  const out = document.getElementById('sign-out');
  out.addEventListener('click', async () => {
    try { await signOut(); } finally { showSignIn(); }
  });
  window.addEventListener('toolbridge:sign-in', showSignIn);
  await redeemCode();
  updateSignOut();
  let signedIn = true;
  try { await get('/version'); } catch (e) { signedIn = e.status !== 401; }
  onLanguageChange(() => (session() || signedIn ? show() : showSignIn()));
  window.addEventListener('hashchange', show);
  if (signedIn) await show();
  else showSignIn();
  document.body.dataset.ready = 'true';
}

start();
