// A form generated from a JSON schema (a tool's inputSchema), with raw JSON
// as the fallback for what a form cannot express and as a toggle for the
// whole object.
//
//   const form = schemaForm(tool.inputSchema);
//   container.append(form.element);
//   const { ok, value } = form.read();   // errors shown next to the fields
//
// Supported: strings (enum -> select), numbers and integers, booleans
// (checkbox), arrays (rows added and removed), nested objects (fieldset),
// required marks, defaults, descriptions as hints, local $refs. Anything
// else (anyOf, oneOf, free-form objects, type lists) is a JSON textarea for
// that field. Every input has a <label for>; an error sits next to its field
// (aria-invalid, aria-describedby).
import { h, uid } from '../dom.js';
import { t } from '../i18n.js';

/** How deep $refs and nesting are followed before a field falls back to JSON. */
const MAX_DEPTH = 8;

/**
 * The form of `schema`, filled with `initial` (an object of argument
 * values) or else the schema's defaults.
 * Returns { element, read() -> {ok, value}, mode() -> 'form'|'json' }.
 */
export function schemaForm(schema, { initial } = {}) {
  const root = isObject(schema) ? schema : {};
  const element = h('div', { class: 'schema-form' });
  const toggleId = uid('json-toggle');
  const toggle = h('input', { type: 'checkbox', id: toggleId });
  const body = h('div', { class: 'schema-form-body' });
  element.append(
    h('div', { class: 'field check' }, toggle, h('label', { for: toggleId }, t('tools.form.editAsJson'))),
    body,
  );

  // The form only when the root is an object schema the form can show.
  const formable = objectLike(resolve(root, root)) !== null;
  let editor = null;
  let raw = null;
  let current = initial;

  function showForm(values) {
    raw = null;
    editor = objectEditor(root, resolve(root, root), { values, depth: 0, top: true });
    body.replaceChildren(editor.element);
  }

  function showJson(values) {
    editor = null;
    raw = rawEditor(values);
    body.replaceChildren(raw.element);
  }

  toggle.addEventListener('change', () => {
    if (toggle.checked) {
      const { value } = editor ? editor.read({ quiet: true }) : { value: current };
      showJson(value || {});
      raw.focus();
      return;
    }
    const parsed = raw.read();
    if (!parsed.ok) {
      toggle.checked = true; // stay in JSON until it parses
      return;
    }
    current = parsed.value;
    showForm(current);
  });

  if (formable) {
    showForm(current);
  } else {
    toggle.checked = true;
    toggle.disabled = true;
    showJson(current || {});
  }

  return {
    element,
    mode: () => (raw ? 'json' : 'form'),
    read() {
      if (raw) return raw.read();
      const result = editor.read({});
      if (!result.ok) editor.focusInvalid();
      return { ok: result.ok, value: result.present ? result.value : {} };
    },
  };
}

// ---------------------------------------------------------------- editors
// An editor is { element, read({quiet}) -> {ok, present, value}, focus(),
// focusInvalid() -> bool, clear() (hides its errors) }. `quiet` reads without showing errors (switching
// to JSON keeps what can be kept).

function editorFor(root, schema, opts) {
  const node = unwrapNullable(root, resolve(root, schema));
  if (opts.depth > MAX_DEPTH || node === null) return jsonEditor(node || {}, opts);
  const type = singleType(node);
  if (Array.isArray(node.enum) && node.enum.length > 0) return enumEditor(node, node.enum, opts);
  if ('const' in node) return enumEditor(node, [node.const], opts);
  if (type === 'string') return stringEditor(node, opts);
  if (type === 'number' || type === 'integer') return numberEditor(node, type, opts);
  if (type === 'boolean') return booleanEditor(node, opts);
  if (type === 'array' && isObject(resolve(root, node.items))) return arrayEditor(root, node, opts);
  // A nested object with named properties is a fieldset; one whose keys
  // are free is JSON.
  if (objectLike(node) && isObject(node.properties) && Object.keys(node.properties).length > 0) {
    return objectEditor(root, node, { ...opts, depth: opts.depth + 1 });
  }
  return jsonEditor(node, opts);
}

/** The parts every field has: label, hint, error, and their wiring. */
function fieldParts(node, opts, inputId) {
  const hintId = uid('hint');
  const errorId = uid('error');
  const label = h('label', { for: inputId }, opts.label,
    opts.required ? h('span', { class: 'req', 'aria-hidden': 'true' }, '*') : null);
  const hintText = [node.title && squash(node.title) !== squash(opts.label) ? node.title : null, node.description]
    .filter(Boolean).join(' — ');
  const hint = hintText ? h('span', { class: 'hint', id: hintId }, hintText) : null;
  const error = h('span', { class: 'field-error', id: errorId, hidden: true });
  const describedBy = [hint ? hintId : null, errorId].filter(Boolean).join(' ');
  return { label, hint, error, describedBy };
}

function wire(input, parts, opts) {
  input.setAttribute('aria-describedby', parts.describedBy);
  if (opts.required) input.setAttribute('aria-required', 'true');
}

function setError(input, parts, message) {
  if (message) {
    input.setAttribute('aria-invalid', 'true');
    parts.error.textContent = message;
    parts.error.hidden = false;
  } else {
    input.removeAttribute('aria-invalid');
    parts.error.textContent = '';
    parts.error.hidden = true;
  }
  return !message;
}

function initialOf(node, opts) {
  if (opts.values !== undefined) return opts.values;
  return node.default;
}

function stringEditor(node, opts) {
  const id = uid('f');
  const parts = fieldParts(node, opts, id);
  const long = (node.maxLength || 0) > 200 || node.format === 'textarea' || node.contentMediaType;
  const type = { email: 'email', uri: 'url', url: 'url', date: 'date' }[node.format] || 'text';
  const input = long ? h('textarea', { id, rows: 4 }) : h('input', { id, type });
  const start = initialOf(node, opts);
  if (start !== undefined && start !== null) input.value = String(start);
  wire(input, parts, opts);
  const element = h('div', { class: 'field' }, parts.label, input, parts.hint, parts.error);
  let valid = true;
  return {
    element,
    focus: () => input.focus(),
    focusInvalid: () => !valid && (input.focus(), true),
    clear: () => { valid = setError(input, parts, null); },
    read({ quiet }) {
      const value = input.value;
      if (value === '') {
        valid = quiet || setError(input, parts, opts.required ? t('tools.form.required') : null);
        return { ok: valid || quiet, present: false };
      }
      valid = quiet || setError(input, parts, null);
      return { ok: true, present: true, value };
    },
  };
}

function numberEditor(node, type, opts) {
  const id = uid('f');
  const parts = fieldParts(node, opts, id);
  const input = h('input', {
    id, type: 'number', inputmode: type === 'integer' ? 'numeric' : 'decimal',
    step: type === 'integer' ? '1' : 'any',
  });
  if (typeof node.minimum === 'number') input.min = String(node.minimum);
  if (typeof node.maximum === 'number') input.max = String(node.maximum);
  const start = initialOf(node, opts);
  if (typeof start === 'number') input.value = String(start);
  wire(input, parts, opts);
  const element = h('div', { class: 'field' }, parts.label, input, parts.hint, parts.error);
  let valid = true;
  return {
    element,
    focus: () => input.focus(),
    focusInvalid: () => !valid && (input.focus(), true),
    clear: () => { valid = setError(input, parts, null); },
    read({ quiet }) {
      const text = input.value.trim();
      // A number input whose text is not a number reports '' with badInput.
      if (text === '' && !(input.validity && input.validity.badInput)) {
        valid = quiet || setError(input, parts, opts.required ? t('tools.form.required') : null);
        return { ok: valid || quiet, present: false };
      }
      const value = Number(text);
      let message = null;
      if (text === '' || !Number.isFinite(value)) message = t('tools.form.notANumber');
      else if (type === 'integer' && !Number.isInteger(value)) message = t('tools.form.notAnInteger');
      valid = quiet || setError(input, parts, message);
      if (message) return { ok: quiet, present: false };
      return { ok: true, present: true, value };
    },
  };
}

function booleanEditor(node, opts) {
  const id = uid('f');
  const parts = fieldParts(node, opts, id);
  const input = h('input', { id, type: 'checkbox' });
  const start = initialOf(node, opts);
  input.checked = start === true;
  // An optional boolean is sent when it has a value to start with or the
  // user touched it; otherwise the server's own default applies.
  let touched = typeof start === 'boolean';
  input.addEventListener('change', () => { touched = true; });
  wire(input, parts, opts);
  const element = h('div', { class: 'field' },
    h('div', { class: 'check' }, input, parts.label), parts.hint, parts.error);
  return {
    element,
    focus: () => input.focus(),
    focusInvalid: () => false,
    clear: () => {},
    read() {
      const present = opts.required || touched;
      return { ok: true, present, value: input.checked };
    },
  };
}

function enumEditor(node, values, opts) {
  const id = uid('f');
  const parts = fieldParts(node, opts, id);
  const start = initialOf(node, opts);
  const select = h('select', { id },
    h('option', { value: '' }, opts.required ? t('tools.form.choose') : t('tools.form.none')),
    values.map((v, i) => h('option', { value: String(i) }, typeof v === 'string' ? v : JSON.stringify(v))));
  const index = values.findIndex((v) => JSON.stringify(v) === JSON.stringify(start));
  if (index >= 0) select.value = String(index);
  wire(select, parts, opts);
  const element = h('div', { class: 'field' }, parts.label, select, parts.hint, parts.error);
  let valid = true;
  return {
    element,
    focus: () => select.focus(),
    focusInvalid: () => !valid && (select.focus(), true),
    clear: () => { valid = setError(select, parts, null); },
    read({ quiet }) {
      if (select.value === '') {
        valid = quiet || setError(select, parts, opts.required ? t('tools.form.required') : null);
        return { ok: valid || quiet, present: false };
      }
      valid = quiet || setError(select, parts, null);
      return { ok: true, present: true, value: values[Number(select.value)] };
    },
  };
}

function jsonEditor(node, opts) {
  const id = uid('f');
  const parts = fieldParts(node, opts, id);
  const input = h('textarea', { id, rows: 3, spellcheck: 'false', class: 'json' });
  const start = initialOf(node, opts);
  if (start !== undefined) input.value = JSON.stringify(start, null, 2);
  wire(input, parts, opts);
  const note = h('span', { class: 'hint' }, t('tools.form.jsonValue'));
  const element = h('div', { class: 'field' }, parts.label, input, note, parts.hint, parts.error);
  let valid = true;
  return {
    element,
    focus: () => input.focus(),
    focusInvalid: () => !valid && (input.focus(), true),
    clear: () => { valid = setError(input, parts, null); },
    read({ quiet }) {
      const text = input.value.trim();
      if (text === '') {
        valid = quiet || setError(input, parts, opts.required ? t('tools.form.required') : null);
        return { ok: valid || quiet, present: false };
      }
      try {
        const value = JSON.parse(text);
        valid = quiet || setError(input, parts, null);
        return { ok: true, present: true, value };
      } catch (error) {
        valid = quiet || setError(input, parts, t('tools.form.invalidJson', { message: error.message }));
        return { ok: quiet, present: false };
      }
    },
  };
}

function objectEditor(root, node, opts) {
  const properties = isObject(node.properties) ? node.properties : {};
  const required = new Set(Array.isArray(node.required) ? node.required : []);
  const values = isObject(opts.values) ? opts.values
    : isObject(node.default) ? node.default : {};
  const children = Object.entries(properties).map(([name, child]) => ({
    name,
    editor: editorFor(root, child, {
      label: name,
      required: required.has(name),
      values: values[name],
      depth: opts.depth,
    }),
  }));
  const fields = children.map((c) => c.editor.element);
  let element;
  if (opts.top) {
    element = h('div', { class: 'schema-object' },
      children.length === 0 ? h('p', { class: 'muted' }, t('tools.form.noArguments')) : null,
      required.size > 0 ? h('p', { class: 'hint' }, t('tools.form.requiredNote')) : null,
      fields);
  } else {
    const hint = node.description ? h('p', { class: 'hint' }, node.description) : null;
    element = h('fieldset', { class: 'schema-object' },
      h('legend', {}, opts.label, opts.required ? h('span', { class: 'req', 'aria-hidden': 'true' }, '*') : null),
      hint, fields);
  }
  return {
    element,
    focus: () => children[0] && children[0].editor.focus(),
    focusInvalid: () => children.some((c) => c.editor.focusInvalid()),
    clear: () => children.forEach((c) => c.editor.clear()),
    read(flags) {
      // An optional object left empty is left out, its required fields
      // with it: they are required only once the object is there.
      if (!opts.required && !opts.top && !flags.quiet
        && !children.some((c) => c.editor.read({ quiet: true }).present)) {
        children.forEach((c) => c.editor.clear());
        return { ok: true, present: false, value: {} };
      }
      const value = {};
      let ok = true;
      let present = false;
      for (const { name, editor } of children) {
        const result = editor.read(flags);
        ok = ok && result.ok;
        if (result.present) {
          value[name] = result.value;
          present = true;
        }
      }
      return { ok, present: present || !!opts.required, value };
    },
  };
}

function arrayEditor(root, node, opts) {
  const itemSchema = node.items;
  const list = h('div', { class: 'schema-array-rows' });
  const rows = [];
  const addLabel = t('tools.form.addItem');
  const add = h('button', { type: 'button', 'aria-label': t('tools.form.addItemTo', { name: opts.label }) }, addLabel);
  const errorId = uid('error');
  const error = h('span', { class: 'field-error', id: errorId, hidden: true });

  function renumber() {
    rows.forEach((row, i) => {
      row.label.textContent = t('tools.form.item', { n: i + 1 });
      row.remove.setAttribute('aria-label', t('tools.form.removeItem', { name: opts.label, n: i + 1 }));
    });
  }

  function addRow(value, focus) {
    const editor = editorFor(root, itemSchema, {
      label: t('tools.form.item', { n: rows.length + 1 }),
      required: false,
      values: value,
      depth: opts.depth + 1,
    });
    const remove = h('button', { type: 'button', class: 'danger' }, t('tools.form.remove'));
    const element = h('div', { class: 'schema-array-row' }, editor.element, remove);
    const row = { editor, element, remove, label: element.querySelector('label, legend') };
    remove.addEventListener('click', () => {
      rows.splice(rows.indexOf(row), 1);
      element.remove();
      renumber();
      add.focus();
    });
    rows.push(row);
    list.append(element);
    renumber();
    if (focus) editor.focus();
  }

  const start = initialOf(node, opts);
  if (Array.isArray(start)) for (const value of start) addRow(value, false);
  add.addEventListener('click', () => addRow(undefined, true));

  const hint = node.description ? h('p', { class: 'hint' }, node.description) : null;
  const element = h('fieldset', { class: 'schema-array', 'aria-describedby': errorId },
    h('legend', {}, opts.label, opts.required ? h('span', { class: 'req', 'aria-hidden': 'true' }, '*') : null),
    hint, list, h('div', { class: 'actions' }, add), error);
  let valid = true;
  return {
    element,
    focus: () => (rows[0] ? rows[0].editor.focus() : add.focus()),
    focusInvalid: () => rows.some((r) => r.editor.focusInvalid()) || (!valid && (add.focus(), true)),
    clear: () => {
      rows.forEach((r) => r.editor.clear());
      valid = true;
      error.hidden = true;
    },
    read(flags) {
      const value = [];
      let ok = true;
      for (const row of rows) {
        const result = row.editor.read(flags);
        ok = ok && result.ok;
        if (result.present) value.push(result.value);
      }
      const min = typeof node.minItems === 'number' ? node.minItems : 0;
      const short = !flags.quiet && value.length < min;
      valid = !short;
      error.hidden = !short;
      error.textContent = short ? t('tools.form.minItems', { n: min }) : '';
      return { ok: ok && !short, present: rows.length > 0 || !!opts.required, value };
    },
  };
}

/** The whole arguments object as JSON text. */
function rawEditor(values) {
  const id = uid('raw');
  const errorId = uid('error');
  const input = h('textarea', { id, rows: 10, spellcheck: 'false', class: 'json', 'aria-describedby': errorId });
  input.value = JSON.stringify(values === undefined ? {} : values, null, 2);
  const error = h('span', { class: 'field-error', id: errorId, hidden: true });
  const element = h('div', { class: 'field' }, h('label', { for: id }, t('tools.form.rawJson')), input, error);
  function fail(message) {
    input.setAttribute('aria-invalid', 'true');
    error.textContent = message;
    error.hidden = false;
    input.focus();
    return { ok: false };
  }
  return {
    element,
    focus: () => input.focus(),
    read() {
      const text = input.value.trim();
      if (text === '') return { ok: true, value: {} };
      let value;
      try {
        value = JSON.parse(text);
      } catch (e) {
        return fail(t('tools.form.invalidJson', { message: e.message }));
      }
      if (!isObject(value)) return fail(t('tools.form.notAnObject'));
      input.removeAttribute('aria-invalid');
      error.hidden = true;
      return { ok: true, value };
    },
  };
}

// ---------------------------------------------------------------- schema helpers

function isObject(value) {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/** `schema` with a local `$ref` (#/...) followed; null when it cannot be. */
function resolve(root, schema, seen = 0) {
  if (schema === true || schema === undefined) return {};
  if (!isObject(schema)) return null;
  if (typeof schema.$ref !== 'string') return schema;
  if (seen > MAX_DEPTH || !schema.$ref.startsWith('#')) return null;
  let target = root;
  for (const raw of schema.$ref.slice(1).split('/').filter(Boolean)) {
    const key = decodeURIComponent(raw).replace(/~1/g, '/').replace(/~0/g, '~');
    target = isObject(target) ? target[key] : undefined;
  }
  return resolve(root, target, seen + 1);
}

/**
 * `anyOf: [X, {type: null}]` (how Pydantic and zod say "X or nothing") as
 * X, keeping the outer title, description and default; an empty field
 * stands for null. Other unions stay as they are.
 */
function unwrapNullable(root, node) {
  if (!isObject(node)) return node;
  const union = Array.isArray(node.anyOf) ? node.anyOf : Array.isArray(node.oneOf) ? node.oneOf : null;
  if (!union || union.length !== 2) return node;
  const rest = union.filter((branch) => !(isObject(branch) && branch.type === 'null'));
  if (rest.length !== 1) return node;
  const inner = resolve(root, rest[0]);
  if (!isObject(inner)) return node;
  const { anyOf, oneOf, ...outer } = node;
  const merged = { ...inner, ...outer };
  if (merged.default === null) delete merged.default;
  return merged;
}

/** A label or title compared loosely ("zip_code" is "Zip Code"). */
function squash(text) {
  return String(text).toLowerCase().replace(/[\s_-]/g, '');
}

/** The one type of a node (`["string","null"]` counts as string), else null. */
function singleType(node) {
  if (typeof node.type === 'string') return node.type;
  if (Array.isArray(node.type)) {
    const types = node.type.filter((x) => x !== 'null');
    return types.length === 1 ? types[0] : null;
  }
  if (isObject(node.properties)) return 'object';
  return null;
}

/** The node when the form can show it as an object of fields, else null. */
function objectLike(node) {
  if (!isObject(node)) return null;
  if (node.anyOf || node.oneOf || node.allOf) return null;
  const type = singleType(node);
  if (type !== 'object' && !(type === null && node.properties)) return null;
  return node;
}
