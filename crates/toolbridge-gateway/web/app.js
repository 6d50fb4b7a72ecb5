// The page: a hash router over the views (views/<name>.js, each exporting
// `render(main)`), the language switch, and a toast for short messages.
import { detectLanguage, setLanguage, onLanguageChange, currentLanguage, t } from './i18n.js';
import { replace, h } from './dom.js';

const VIEWS = ['servers', 'presets', 'doctor', 'tools', 'catalog'];
const main = document.getElementById('main');

function route() {
  const [name, ...rest] = location.hash.replace(/^#\/?/, '').split('/');
  return { name: VIEWS.includes(name) ? name : 'servers', params: rest.map(decodeURIComponent) };
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
    // Views open their dialogs on <body>: close them with the view they
    // belong to (Back while one is open), else one stays, modal, over the next.
    for (const dialog of document.querySelectorAll('dialog[open]')) dialog.close();
    replace(main);
    await view.render(main, { params });
  } catch (error) {
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

async function start() {
  const select = document.getElementById('lang');
  await setLanguage(detectLanguage(), { remember: false });
  select.value = currentLanguage();
  select.addEventListener('change', () => setLanguage(select.value));
  onLanguageChange(() => show());
  window.addEventListener('hashchange', show);
  await show();
  document.body.dataset.ready = 'true';
}

start();
