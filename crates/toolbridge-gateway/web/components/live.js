// What the live views (Home, Activity, Logs) share: their stylesheet, and a
// refresh every few seconds while the view is on screen.
import { h } from '../dom.js';

/** Adds views/home.css to the page once. */
export function liveStyles() {
  if (document.getElementById('live-styles')) return;
  document.head.append(h('link', { id: 'live-styles', rel: 'stylesheet', href: '/assets/views/home.css' }));
}

/**
 * Calls `refresh()` now and every `ms` while `anchor` is in the page (the
 * router replaces a view's elements when another is shown); a failed
 * refresh is reported once to `onError` and tried again.
 */
export async function every(ms, anchor, refresh, onError) {
  const tick = async () => {
    if (!anchor.isConnected) return;
    try { await refresh(); } catch (error) { onError(error); }
    if (anchor.isConnected) setTimeout(tick, ms);
  };
  await refresh().catch(onError);
  setTimeout(tick, ms);
}

/** "3 s ago", in the page's language. */
export function ago(ms, lang) {
  const seconds = Math.round((ms - Date.now()) / 1000);
  const rtf = new Intl.RelativeTimeFormat(lang, { numeric: 'auto' });
  if (Math.abs(seconds) < 60) return rtf.format(seconds, 'second');
  const minutes = Math.round(seconds / 60);
  if (Math.abs(minutes) < 60) return rtf.format(minutes, 'minute');
  return rtf.format(Math.round(minutes / 60), 'hour');
}
