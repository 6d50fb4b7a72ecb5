// A remote server's OAuth sign-in from the page (issue 29): the Servers
// view's cards and the Doctor view's sign-in findings share it.
//
// Accessible names: button "Sign in to NAME" (visible text "Sign in"); while
// it waits, the link "Open the sign-in page".
import { h, replace } from '../dom.js';
import { t } from '../i18n.js';
import { get, post } from '../api.js';
import { toast } from '../app.js';

/**
 * The "Sign in" button of `server` (`{name, ref}`): its click opens a
 * blank tab at once (one opened after the request comes back is no longer
 * the user's doing, and is blocked) and runs the sign-in, saying its
 * progress in `result`. `alive()` says whether the view is still shown
 * (polling stops when it is not); `done()` runs once the server is signed
 * in.
 */
export function signInButton(server, result, { alive, done }) {
  const button = h('button', { type: 'button', class: 'primary', 'data-server': server.name, 'data-action': 'sign-in' }, t('servers.signIn.button'));
  button.setAttribute('aria-label', t('servers.signIn.label', { name: server.name }));
  button.addEventListener('click', () => signIn(server, button, result, window.open('', '_blank'), { alive, done }));
  return button;
}

/**
 * Signs in to `server`: the gateway starts the library's sign-in and hands
 * back the authorization server's URL, which `tab` (opened blank by the
 * click) is sent to; the phase is then polled until the browser came back
 * to the gateway.
 */
async function signIn(server, button, result, tab, { alive, done }) {
  const path = `/servers/${encodeURIComponent(server.ref)}/sign-in`;
  const name = server.name;
  button.disabled = true;
  if (tab) {
    // The authorization server's page gets no handle on this one.
    try { tab.opener = null; tab.document.title = t('servers.signIn.starting', { name }); } catch { /* already gone */ }
  }
  replace(result, h('p', { class: 'muted' }, t('servers.signIn.starting', { name })));
  const leave = () => { try { if (tab && !tab.closed) tab.close(); } catch { /* not ours any more */ } };
  try {
    let phase = await post(path);
    while (phase.state === 'starting' && alive()) phase = await later(() => get(path));
    if (phase.state === 'waiting') {
      const url = phase.authorizationUrl;
      try { if (tab && !tab.closed) tab.location.href = url; } catch { /* the link below still works */ }
      replace(result,
        h('p', {}, t('servers.signIn.waiting', { name })),
        tab ? null : h('p', { class: 'warn' }, t('servers.signIn.blocked')),
        h('p', {}, h('a', { href: url, target: '_blank', rel: 'noopener noreferrer' }, t('servers.signIn.open'))));
      while (phase.state === 'waiting' && alive()) phase = await later(() => get(path));
    } else {
      // Signed in without a browser (an unattended grant): no page to show.
      leave();
    }
    if (phase.state === 'failed') throw new Error(phase.message);
    if (phase.state === 'signedIn') {
      toast(t('servers.signIn.done', { name }));
      await done();
    }
  } catch (error) {
    leave();
    replace(result, h('p', { class: 'error', role: 'alert' }, t('servers.signIn.failed', { name, message: error.message })));
    button.disabled = false;
  }
}

/** `next()`'s answer a second from now (a sign-in's phase, polled). */
function later(next) {
  return new Promise((resolve) => setTimeout(resolve, 1000)).then(next);
}
