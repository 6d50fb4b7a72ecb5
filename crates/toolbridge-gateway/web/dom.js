// Building the page's elements without innerHTML (no injection of server
// text, and nothing the Content-Security-Policy would refuse).

/**
 * h('button', {class: 'primary', onclick: f}, 'Save') -> HTMLButtonElement.
 * Attributes starting with "on" become listeners; `false`/`null` are left out;
 * children may be strings, nodes, arrays, or null.
 */
export function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs || {})) {
    if (value === false || value === null || value === undefined) continue;
    if (key.startsWith('on') && typeof value === 'function') {
      el.addEventListener(key.slice(2).toLowerCase(), value);
    } else if (key === 'class') {
      el.className = value;
    } else if (key in el && typeof value !== 'string') {
      el[key] = value;
    } else {
      el.setAttribute(key, value === true ? '' : value);
    }
  }
  append(el, children);
  return el;
}

function append(el, children) {
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    if (Array.isArray(child)) append(el, child);
    else el.append(child instanceof Node ? child : String(child));
  }
}

/** Removes every child of `el` and appends `children`. */
export function replace(el, ...children) {
  el.replaceChildren();
  append(el, children);
  return el;
}

let nextId = 0;
/** A fresh element id, for label/for and aria-describedby pairs. */
export function uid(prefix = 'f') {
  nextId += 1;
  return `${prefix}-${nextId}`;
}
