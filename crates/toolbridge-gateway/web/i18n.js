// Every visible string comes from locales/{lang}/{namespace}.json. A key is
// "namespace.path.to.string"; `{name}` placeholders are filled from `vars`.
// The language: ?lang= in the URL, else the one chosen before (remembered),
// else the browser's, else English.

export const LANGUAGES = ['en', 'zh', 'ja'];
export const NAMESPACES = ['common', 'servers', 'presets', 'doctor', 'tools', 'catalog', 'home', 'profiles'];
const STORAGE_KEY = 'toolbridge.lang';

let language = 'en';
let strings = {};
const listeners = new Set();

export function currentLanguage() {
  return language;
}

export function detectLanguage() {
  const fromUrl = new URLSearchParams(location.search).get('lang');
  if (fromUrl && LANGUAGES.includes(fromUrl)) return fromUrl;
  const saved = safeStorage(() => localStorage.getItem(STORAGE_KEY));
  if (saved && LANGUAGES.includes(saved)) return saved;
  for (const tag of navigator.languages || [navigator.language || 'en']) {
    const base = String(tag).toLowerCase().split('-')[0];
    if (LANGUAGES.includes(base)) return base;
  }
  return 'en';
}

export async function setLanguage(lang, { remember = true } = {}) {
  const loaded = {};
  await Promise.all(NAMESPACES.map(async (ns) => {
    const response = await fetch(`/assets/locales/${lang}/${ns}.json`);
    loaded[ns] = response.ok ? await response.json() : {};
  }));
  strings = loaded;
  language = lang;
  document.documentElement.lang = lang === 'zh' ? 'zh-CN' : lang;
  if (remember) safeStorage(() => localStorage.setItem(STORAGE_KEY, lang));
  apply(document);
  for (const listener of listeners) listener(lang);
}

/** Calls `listener(lang)` after each language change. */
export function onLanguageChange(listener) {
  listeners.add(listener);
}

/** The string for `key` in the current language, or undefined. */
function lookup(key) {
  const [ns, ...path] = key.split('.');
  let value = strings[ns];
  for (const part of path) value = value && typeof value === 'object' ? value[part] : undefined;
  return typeof value === 'string' ? value : undefined;
}

/**
 * Whether the current language has a string for `key`: for a kind the
 * server names that this page may not know (a newer gateway's), said then
 * as the server's own English.
 */
export function has(key) {
  return lookup(key) !== undefined;
}

/** The string for `key` in the current language; the key itself when missing. */
export function t(key, vars = {}) {
  const value = lookup(key);
  if (value === undefined) {
    console.warn(`missing string ${key} (${language})`);
    return key;
  }
  return value.replace(/\{(\w+)\}/g, (_, name) => (name in vars ? String(vars[name]) : `{${name}}`));
}

/**
 * Fills elements marked data-i18n (text), data-i18n-placeholder,
 * data-i18n-title and data-i18n-aria-label under `root`.
 */
export function apply(root) {
  for (const el of root.querySelectorAll('[data-i18n]')) el.textContent = t(el.dataset.i18n);
  for (const [attr, data] of [['placeholder', 'i18nPlaceholder'], ['title', 'i18nTitle'], ['aria-label', 'i18nAriaLabel']]) {
    for (const el of root.querySelectorAll(`[data-${attr === 'aria-label' ? 'i18n-aria-label' : `i18n-${attr}`}]`)) {
      el.setAttribute(attr, t(el.dataset[data]));
    }
  }
}

function safeStorage(f) {
  try { return f(); } catch { return null; }
}
