// A tool call's result, as the spec's ToolCallDisplay shows it: text in
// <pre>, images as <img>, audio with a player, embedded resources and
// resource links, structured content, the server's log messages during the
// call, an error result in red, and the time taken. Server text only ever becomes text nodes or checked data: URLs.
import { h } from '../dom.js';
import { t } from '../i18n.js';

/** A MIME type fit for a data: URL (type/subtype, no parameters). */
const MIME = /^[a-z0-9][a-z0-9!#$&^_.+-]*\/[a-z0-9][a-z0-9!#$&^_.+-]*$/i;
/** Base64, as MCP carries images, audio and blobs. */
const BASE64 = /^[A-Za-z0-9+/\s]*={0,2}\s*$/;

function dataUrl(mime, data) {
  if (typeof mime !== 'string' || typeof data !== 'string') return null;
  if (!MIME.test(mime) || !BASE64.test(data)) return null;
  return `data:${mime.toLowerCase()};base64,${data.replace(/\s/g, '')}`;
}

/**
 * The element showing `response` (the API's answer to a call: MCP's
 * `content`, `structuredContent`, `isError`, plus `text`, `outcome`,
 * `elapsedMs`).
 */
export function renderResult(response) {
  const outcome = response.outcome || (response.isError ? 'toolError' : 'ok');
  const took = t('tools.result.took', { ms: response.elapsedMs ?? 0 });
  const statusText = {
    ok: t('tools.result.ok'),
    toolError: t('tools.result.toolError'),
    cancelled: t('tools.result.cancelled'),
  }[outcome] || t('tools.result.ok');
  const status = h('p', { class: `result-status ${outcome === 'toolError' ? 'error' : outcome === 'cancelled' ? 'warn' : 'ok'}` },
    h('strong', {}, statusText), ' ', h('span', { class: 'muted' }, took));
  const box = h('div', { class: `result${outcome === 'toolError' ? ' is-error' : ''}` }, status);
  if (outcome === 'cancelled') return box;

  const content = Array.isArray(response.content) ? response.content : [];
  if (content.length === 0 && response.structuredContent === undefined) {
    box.append(h('p', { class: 'muted' }, t('tools.result.empty')));
  }
  for (const block of content) box.append(renderBlock(block, outcome === 'toolError'));
  if (response.structuredContent !== undefined && response.structuredContent !== null) {
    box.append(h('details', { class: 'result-structured', open: content.length === 0 },
      h('summary', {}, t('tools.result.structured')),
      h('pre', {}, JSON.stringify(response.structuredContent, null, 2))));
  }
  if (Array.isArray(response.logs) && response.logs.length > 0) {
    box.append(h('details', { class: 'result-logs' },
      h('summary', {}, t('tools.result.logs', { n: response.logs.length })),
      h('ul', {}, response.logs.map((entry) => h('li', {},
        h('span', { class: `badge ${['error', 'critical', 'alert', 'emergency'].includes(entry.level) ? 'error' : entry.level === 'warning' ? 'warn' : ''}` }, String(entry.level ?? '')),
        entry.logger ? h('span', { class: 'muted' }, ` ${entry.logger}`) : null, ' ',
        typeof entry.data === 'string' ? entry.data : JSON.stringify(entry.data))))));
  }
  if (typeof response.text === 'string' && content.some((b) => b && b.type !== 'text')) {
    box.append(h('details', { class: 'result-flat' },
      h('summary', {}, t('tools.result.flattened')),
      h('pre', {}, response.text)));
  }
  return box;
}

/** An API failure (unknown tool, timeout, server down) in the same place. */
export function renderFailure(message) {
  return h('div', { class: 'result is-error' },
    h('p', { class: 'result-status error', role: 'alert' },
      h('strong', {}, t('tools.result.failed')), ' ', message));
}

function renderBlock(block, isError) {
  if (!block || typeof block !== 'object') return h('pre', {}, JSON.stringify(block));
  switch (block.type) {
    case 'text':
      return h('pre', { class: isError ? 'error' : null }, String(block.text ?? ''));
    case 'image': {
      const src = dataUrl(block.mimeType, block.data);
      if (!src) return unreadable(block);
      return h('figure', { class: 'result-media' },
        h('img', { src, alt: t('tools.result.imageAlt', { mime: block.mimeType }) }),
        h('figcaption', { class: 'muted' }, block.mimeType));
    }
    case 'audio': {
      const src = dataUrl(block.mimeType, block.data);
      if (!src) return unreadable(block);
      return h('figure', { class: 'result-media' },
        h('audio', { controls: true, preload: 'metadata', src, 'aria-label': t('tools.result.audioLabel', { mime: block.mimeType }) }),
        h('figcaption', { class: 'muted' }, block.mimeType));
    }
    case 'resource':
      return renderResource(block.resource || {});
    case 'resource_link':
      return renderLink(block);
    default:
      return h('div', { class: 'result-unknown' },
        h('p', { class: 'muted' }, t('tools.result.unknownType', { type: String(block.type) })),
        h('pre', {}, JSON.stringify(block, null, 2)));
  }
}

function unreadable(block) {
  return h('p', { class: 'warn' }, t('tools.result.unreadable', { type: String(block.type), mime: String(block.mimeType) }));
}

function renderResource(resource) {
  const mime = resource.mimeType || '';
  const header = h('p', {}, h('span', { class: 'badge' }, t('tools.result.resource')), ' ',
    h('code', {}, String(resource.uri ?? '')), mime ? h('span', { class: 'muted' }, ` (${mime})`) : null);
  const card = h('div', { class: 'card result-resource' }, header);
  if (typeof resource.text === 'string') {
    card.append(h('pre', {}, resource.text));
  } else if (typeof resource.blob === 'string') {
    const src = dataUrl(mime || 'application/octet-stream', resource.blob);
    if (!src) {
      card.append(unreadable({ type: 'resource', mimeType: mime }));
    } else if (mime.startsWith('image/')) {
      card.append(h('img', { src, alt: t('tools.result.imageAlt', { mime }) }));
    } else if (mime.startsWith('audio/')) {
      card.append(h('audio', { controls: true, preload: 'metadata', src, 'aria-label': t('tools.result.audioLabel', { mime }) }));
    } else {
      const name = String(resource.uri || 'resource').split('/').pop() || 'resource';
      const bytes = Math.floor((resource.blob.replace(/[\s=]/g, '').length * 3) / 4);
      card.append(h('a', { href: src, download: name }, t('tools.result.download', { bytes })));
    }
  }
  return card;
}

function renderLink(link) {
  const uri = String(link.uri ?? '');
  const label = link.title || link.name || uri;
  // Only web addresses become links; other schemes (file:, custom) are text.
  const web = /^https?:\/\//i.test(uri);
  const target = web
    ? h('a', { href: uri, target: '_blank', rel: 'noopener noreferrer' }, label)
    : h('strong', {}, label);
  return h('div', { class: 'card result-link' },
    h('p', {}, h('span', { class: 'badge' }, t('tools.result.resourceLink')), ' ', target),
    label !== uri ? h('p', {}, h('code', {}, uri)) : null,
    link.description ? h('p', { class: 'muted' }, link.description) : null,
    link.mimeType ? h('p', { class: 'muted' }, link.mimeType) : null);
}
