// The browser side of the settings page's tests: headless Chromium
// (@sparticuz/chromium, driven by puppeteer-core, both pinned in
// scripts/setup-test-deps.sh into .deps/web) and helpers that find the
// page's elements the way a user does: by their visible label or
// accessible name, never by CSS classes the views may change.
//
// Every page opened here records console errors, uncaught page errors,
// missing-string warnings and failed requests; `check()` fails the scenario
// when any was seen.
'use strict';

const fs = require('node:fs');
const path = require('node:path');

const modules = process.env.WEB_DEPS
  ? path.join(process.env.WEB_DEPS, 'node_modules')
  : path.join(__dirname, '../../../../.deps/web/node_modules');
const chromium = (m => m.default || m)(require(path.join(modules, '@sparticuz/chromium')));
const puppeteer = require(path.join(modules, 'puppeteer-core'));

/** How long one wait for the page may take (ms); the machine may be loaded. */
const LIMIT = Number(process.env.WEB_WAIT_MS || 30000);

/** A failed expectation: the message says what the user would have seen. */
class Failure extends Error {}

function fail(message) {
  throw new Failure(message);
}

/** Unpacks Chromium into $TMPDIR once (idempotent); its path. */
async function executable() {
  return chromium.executablePath();
}

// The package's flags, minus those that weaken the page's security (the
// tests must see what a user's browser enforces: CSP, same origin).
const WEAKENING = ['--disable-web-security', '--allow-running-insecure-content'];
// One process is meant for Lambda; here it crashes on a second browser context.
const DROPPED = [...WEAKENING, '--single-process'];

/** A fresh browser (its own profile: no remembered language). */
async function launch({ width = 1100, height = 800 } = {}) {
  const args = chromium.args.filter(a => !DROPPED.includes(a));
  return puppeteer.launch({
    executablePath: await executable(),
    headless: 'shell',
    args: [...args, '--no-sandbox', '--lang=en-US'],
    defaultViewport: { width, height },
    protocolTimeout: LIMIT * 2,
  });
}

/**
 * A new page that records what went wrong on it. `allowStatus` lists HTTP
 * statuses of /api responses the scenario provokes on purpose (a refused
 * form answers 400); anything else failing is a problem.
 */
async function openPage(browser, { allowStatus = [] } = {}) {
  const page = await browser.newPage();
  const problems = [];
  page.problems = problems;
  page.allowStatus = allowStatus;
  page.on('console', msg => {
    const text = msg.text();
    if (msg.type() === 'error') {
      const status = /status of (\d{3})/.exec(text);
      if (status && allowStatus.includes(Number(status[1]))) return;
      problems.push(`console error: ${text} (${msg.location().url || 'page'})`);
    } else if (msg.type() === 'warn' && text.startsWith('missing string')) {
      problems.push(`console: ${text}`);
    }
  });
  page.on('pageerror', error => problems.push(`page error: ${error.message}`));
  page.on('requestfailed', request => {
    const reason = request.failure() && request.failure().errorText;
    // A fetch the page aborted itself (cancel, navigation) is no failure.
    if (reason === 'net::ERR_ABORTED') return;
    problems.push(`request failed: ${request.method()} ${request.url()}: ${reason}`);
  });
  page.on('response', response => {
    const status = response.status();
    if (status >= 400 && !allowStatus.includes(status)) {
      problems.push(`HTTP ${status} for ${response.request().method()} ${response.url()}`);
    }
  });
  page.setDefaultTimeout(LIMIT);
  return page;
}

/** Fails when the page logged errors (`where` names the step). */
function check(page, where) {
  if (page.problems.length) {
    fail(`${where}: ${page.problems.length} problem(s) on the page:\n  ${page.problems.join('\n  ')}`);
  }
}

/**
 * Opens `#/view` (with `?lang=` when given) and waits until the page has
 * started and the view has rendered and gone quiet.
 */
async function openView(page, base, view, { lang, query = '' } = {}) {
  const params = new URLSearchParams(query);
  if (lang) params.set('lang', lang);
  const search = params.toString() ? `?${params}` : '';
  await page.goto(`${base}${search}#/${view}`, { waitUntil: 'domcontentloaded' });
  await page.waitForSelector('body[data-ready="true"]');
  await settled(page);
}

/** Waits until the view shows its heading and no request is in flight. */
async function settled(page) {
  await page.waitForSelector('main h1, main h2');
  await page.waitForNetworkIdle({ idleTime: 300, timeout: LIMIT });
  await page.waitForFunction(() => !document.querySelector('main [aria-busy="true"]'));
}

/** Polls `condition()` (in Node) until true or LIMIT passes. */
async function until(what, condition, limit = LIMIT) {
  const deadline = Date.now() + limit;
  let last;
  while (Date.now() < deadline) {
    try {
      last = await condition();
      if (last) return last;
    } catch (error) {
      last = error;
    }
    await new Promise(r => setTimeout(r, 50));
  }
  fail(`timed out waiting for ${what} (last: ${last instanceof Error ? last.message : JSON.stringify(last)})`);
}

// In the page: the visible text of an element, normalised; whether it is
// visible. Shared by the finders below (passed as source, run in the page).
const PAGE_HELPERS = `
  const norm = s => (s || '').replace(/\\s+/g, ' ').trim();
  const visible = el => !!el && el.getClientRects().length > 0 &&
    getComputedStyle(el).visibility !== 'hidden';
  const labelText = label => {
    const copy = label.cloneNode(true);
    for (const inner of copy.querySelectorAll('input, select, textarea, .hint, .field-error, [aria-hidden="true"]')) inner.remove();
    return norm(copy.textContent).replace(/\\s*[*:：]$/, '');
  };
  const nameOf = el => norm(el.getAttribute('aria-label')) ||
    (el.getAttribute('aria-labelledby') || '').split(/\\s+/).map(id => norm((document.getElementById(id) || {}).textContent)).join(' ').trim() ||
    norm(el.textContent) || norm(el.value) || norm(el.title);
`;

/**
 * The visible form control labelled `label` (a <label for> or wrapping
 * <label>, else aria-label), optionally inside `within` (a selector).
 * `label` may be a list of names the control may have.
 */
async function field(page, label, { within = 'body' } = {}) {
  const names = [label].flat();
  const handle = await page.waitForFunction(new Function('names', 'within', `${PAGE_HELPERS}
    for (const scope of document.querySelectorAll(within)) {
      for (const l of scope.querySelectorAll('label')) {
        if (names.includes(labelText(l)) && l.control && visible(l.control)) return l.control;
      }
      for (const el of scope.querySelectorAll('input, select, textarea')) {
        if (names.includes(norm(el.getAttribute('aria-label'))) && visible(el)) return el;
      }
    }
    return null;`), { timeout: LIMIT }, names, within).catch(() => null);
  if (!handle) fail(`no visible field labelled "${label}" (in ${within}); labels on the page: ${await labels(page)}`);
  return handle.asElement();
}

/** The visible labels on the page, for a failure's message. */
async function labels(page) {
  return page.evaluate(new Function(`${PAGE_HELPERS}
    return JSON.stringify([...document.querySelectorAll('label')].filter(visible).map(labelText));`));
}

/**
 * The visible button (or link, or element with role=button) whose accessible
 * name is `name` (or one of a list), optionally inside `within` (a selector
 * or an element).
 */
async function button(page, name, { within = 'body', exact = true } = {}) {
  const names = [name].flat();
  const handle = await page.waitForFunction(new Function('names', 'within', 'exact', `${PAGE_HELPERS}
    const scopes = typeof within === 'string' ? document.querySelectorAll(within) : [within];
    for (const scope of scopes) {
      for (const el of scope.querySelectorAll('button, a[href], [role="button"], input[type="submit"], input[type="button"]')) {
        const n = nameOf(el);
        if (names.some(name => exact ? n === name : n.startsWith(name)) && visible(el) && !el.disabled) return el;
      }
    }
    return null;`), { timeout: LIMIT }, names, within, exact).catch(() => null);
  if (!handle) fail(`no visible, enabled button named "${name}"; buttons on the page: ${await buttons(page)}`);
  return handle.asElement();
}

/** The visible buttons' names, for a failure's message. */
async function buttons(page) {
  return page.evaluate(new Function(`${PAGE_HELPERS}
    return JSON.stringify([...document.querySelectorAll('button, [role="button"], input[type="submit"]')].filter(visible).map(nameOf));`));
}

/** Replaces the value of `control` (an input or textarea) by typing `text`. */
async function typeInto(control, text) {
  await control.click({ count: 3 });
  await control.evaluate(el => { el.select && el.select(); });
  await control.press('Backspace');
  await control.type(text);
}

/** Selects in <select> `control` the option whose value or text is `choice`. */
async function choose(control, choice) {
  const value = await control.evaluate((el, choice) => {
    const option = [...el.options].find(o => o.value === choice || o.textContent.trim() === choice);
    return option ? option.value : null;
  }, choice);
  if (value === null) fail(`the select has no option "${choice}"`);
  await control.select(value);
}

/** Fills a list field (arguments): a textarea takes one item per line. */
async function fillList(control, items) {
  const tag = await control.evaluate(el => el.tagName);
  await typeInto(control, items.join(tag === 'TEXTAREA' ? '\n' : ' '));
}

const NAMESPACES = ['common', 'servers', 'presets', 'doctor', 'tools', 'catalog'];

/** Every string of `lang` served by the page: `ns.key` → text. */
async function strings(base, lang) {
  const out = {};
  const walk = (prefix, value) => {
    if (value && typeof value === 'object') for (const [k, v] of Object.entries(value)) walk(`${prefix}.${k}`, v);
    else out[prefix] = value;
  };
  for (const ns of NAMESPACES) {
    const response = await fetch(new URL(`assets/locales/${lang}/${ns}.json`, base));
    if (response.ok) walk(ns, await response.json());
  }
  return out;
}

/**
 * A function giving, for an English label, the same string in `lang` (the
 * key whose English text it is, looked up in `lang`'s files).
 */
async function translator(base, lang) {
  const [en, other] = await Promise.all([strings(base, 'en'), strings(base, lang)]);
  return text => {
    const key = Object.keys(en).find(k => en[k] === text);
    return (key && other[key]) || text;
  };
}

/** The config file as JSON (the gateway writes plain JSON). */
function readConfig(file) {
  return JSON.parse(fs.readFileSync(file, 'utf8'));
}

/** The config's servers (`mcpServers`, or VS Code's `servers`). */
function servers(file) {
  const config = readConfig(file);
  return config.mcpServers || config.servers || {};
}

/**
 * The visible text of the navigation and the view (not the language
 * select, whose options name each language in itself).
 */
async function visibleText(page) {
  return page.evaluate(() => [...document.querySelectorAll('nav, main')].map(e => e.innerText).join('\n'));
}

/**
 * axe-core's (Deque's accessibility rules, `.deps/web`) serious and
 * critical violations on the page as it is now.
 */
async function axeViolations(page) {
  const source = fs.readFileSync(require.resolve('axe-core/axe.min.js', { paths: [process.env.WEB_DEPS] }), 'utf8');
  // Evaluated through DevTools, not a <script>: the page's CSP allows none.
  if (!(await page.evaluate(() => Boolean(window.axe)))) await page.evaluate(source);
  const result = await page.evaluate(async () => {
    const r = await window.axe.run(document, { resultTypes: ['violations'] });
    return r.violations.map(v => ({ id: v.id, impact: v.impact, nodes: v.nodes.slice(0, 3).map(n => n.target.join(' ')) }));
  });
  return result.filter(v => v.impact === 'serious' || v.impact === 'critical');
}

module.exports = {
  LIMIT, Failure, fail, executable, launch, openPage, check, openView, settled, until,
  field, button, buttons, labels, typeInto, choose, fillList, readConfig, servers,
  visibleText, translator, axeViolations,
};
