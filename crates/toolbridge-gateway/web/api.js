// The page's one way to talk to the gateway's /api. Writes carry the header
// the gateway requires of them (a foreign page cannot send it). With a token
// required, every request carries the page's session id (X-Toolbridge-Session),
// kept in sessionStorage: storage of this origin alone (scheme, host, port),
// unlike a cookie, which every port of the host would receive.

import { t } from './i18n.js';

const SESSION_KEY = 'toolbridge-session';

/** The session id this tab signed in with, if any. */
export function session() {
  try { return sessionStorage.getItem(SESSION_KEY); } catch { return null; }
}

function keep(id) {
  try {
    if (id) sessionStorage.setItem(SESSION_KEY, id);
    else sessionStorage.removeItem(SESSION_KEY);
  } catch { /* storage refused: the page asks again */ }
}

/**
 * Signs in with `{token}` or `{code}` (a one-time code of `toolbridge ui`);
 * true when a session was opened (false: none is needed).
 */
export async function signIn(credentials) {
  const data = await api('POST', '/session', credentials);
  keep(data && data.session);
  return Boolean(data && data.session);
}

/** Ends this tab's session. */
export async function signOut() {
  try { await api('DELETE', '/session'); } finally { keep(null); }
}

export class ApiError extends Error {
  constructor(status, message, field) {
    super(message);
    this.status = status;
    this.field = field || null;
  }
}

export async function api(method, path, body, { signal } = {}) {
  const headers = { 'Accept': 'application/json' };
  if (method !== 'GET' && method !== 'HEAD') headers['X-Toolbridge-Request'] = '1';
  if (body !== undefined) headers['Content-Type'] = 'application/json';
  const id = session();
  if (id) headers['X-Toolbridge-Session'] = id;
  const response = await fetch(`/api${path}`, {
    method,
    headers,
    body: body === undefined ? undefined : JSON.stringify(body),
    credentials: 'same-origin',
    signal,
  });
  const text = await response.text();
  let data = null;
  try { data = text ? JSON.parse(text) : null; } catch { data = null; }
  if (!response.ok) {
    const error = data && data.error ? data.error : { message: text || response.statusText };
    // Signed out, timed out or never signed in: the page asks for the token.
    if (response.status === 401 && path !== '/session') {
      keep(null);
      window.dispatchEvent(new Event('toolbridge:sign-in'));
    }
    // A message the server says from the page's strings (`said`: a key and
    // its values) is shown in the page's language; `message` is its English.
    const message = error.said ? t(error.said.key, error.said.vars) : error.message;
    throw new ApiError(response.status, message, error.field);
  }
  return data;
}

export const get = (path, opts) => api('GET', path, undefined, opts);
export const post = (path, body, opts) => api('POST', path, body === undefined ? {} : body, opts);
export const put = (path, body, opts) => api('PUT', path, body, opts);
export const del = (path, opts) => api('DELETE', path, undefined, opts);
