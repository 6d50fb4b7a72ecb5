// The page's one way to talk to the gateway's /api. Writes carry the header
// the gateway requires of them (a foreign page cannot send it).

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
    throw new ApiError(response.status, error.message, error.field);
  }
  return data;
}

export const get = (path, opts) => api('GET', path, undefined, opts);
export const post = (path, body, opts) => api('POST', path, body === undefined ? {} : body, opts);
export const put = (path, body, opts) => api('PUT', path, body, opts);
export const del = (path, opts) => api('DELETE', path, undefined, opts);
