// The Home, Activity and Logs views' scenarios (issue 29), run by
// scenarios.cjs like its own. Environment as there, plus NODE_DEPS (the
// folder with the TypeScript MCP SDK, .deps/node) for the client that
// connects to the gateway.
'use strict';

const fs = require('node:fs');
const path = require('node:path');
const { createRequire } = require('node:module');
const b = require('./browser.cjs');

const BASE = process.env.BASE_URL;
const LANGUAGES = ['en', 'zh', 'ja'];
const LIVE_VIEWS = ['home', 'activity', 'logs', 'servers', 'presets'];

/** A TypeScript SDK client connected to the gateway's /mcp, as `name`. */
async function sdkClient(name) {
  const sdk = createRequire(path.resolve(process.env.NODE_DEPS, 'package.json'));
  const { Client } = sdk('@modelcontextprotocol/sdk/client/index.js');
  const { StreamableHTTPClientTransport } = sdk('@modelcontextprotocol/sdk/client/streamableHttp.js');
  const client = new Client({ name, version: '7.1.0' }, { capabilities: {} });
  const transport = new StreamableHTTPClientTransport(new URL(`${BASE}mcp`));
  await client.connect(transport);
  // Ends the session (DELETE /mcp), then the client.
  client.end = async () => { await transport.terminateSession(); await client.close(); };
  return client;
}

/**
 * In the page: how many rows the elements take (their vertical centres,
 * 8 px apart or more, each start a row; centred items of one row differ in
 * height, so their tops differ).
 */
const ROWS = `window.tbRowsOf = (els) => {
  const centres = els.map(el => { const r = el.getBoundingClientRect(); return (r.top + r.bottom) / 2; }).sort((a, b) => a - b);
  return centres.filter((c, i) => i === 0 || c - centres[i - 1] >= 8).length;
};`;

/** The clipboard's text (permissions granted to the page's origin). */
const clipboard = (page) => page.evaluate(() => navigator.clipboard.readText());

module.exports = {
  /**
   * Home: the URL is shown; "Copy for Claude Code" and "Copy for VS Code"
   * put the exact config on the clipboard; a TypeScript SDK client that
   * connects and calls a tool appears in "Connected clients" with its
   * name, version, protocol and call count; no serious accessibility
   * violation.
   */
  async home_connect(browser) {
    const origin = new URL(BASE).origin;
    await browser.defaultBrowserContext().overridePermissions(origin, ['clipboard-read', 'clipboard-write', 'clipboard-sanitized-write']);
    const page = await b.openPage(browser);
    await b.openView(page, BASE, 'home');
    const url = `${origin}/mcp`;
    const urls = await page.$$eval('main code.url', els => els.map(e => e.textContent));
    if (!urls.includes(url)) b.fail(`the Home shows the URLs ${JSON.stringify(urls)}, not ${url}`);
    await (await b.button(page, 'Copy for Claude Code')).click();
    const claudeCode = await b.until('the Claude Code command on the clipboard', async () => {
      const text = await clipboard(page);
      return text.startsWith('claude ') && text;
    });
    await (await b.button(page, 'Copy for VS Code')).click();
    const vscode = await b.until('the VS Code config on the clipboard', async () => {
      const text = await clipboard(page);
      return text.includes('"servers"') && JSON.parse(text);
    });
    await (await b.button(page, `Copy URL ${url}`)).click();
    const copiedUrl = await b.until('the URL on the clipboard', async () => {
      const text = await clipboard(page);
      return text === url && text;
    });

    const client = await sdkClient('web-ui-ts-client');
    const called = await client.callTool({ name: 'echo', arguments: { text: 'from the page test' } });
    if (!JSON.stringify(called).includes('from the page test')) b.fail(`echo answered ${JSON.stringify(called)}`);
    const row = await b.until('the SDK client in "Connected clients"', () => page.evaluate(() => {
      const table = document.querySelector('main table[aria-label="Connected clients"]');
      const rows = table ? [...table.querySelectorAll('tbody tr')] : [];
      const mine = rows.find(r => r.cells[0].textContent.startsWith('web-ui-ts-client'));
      return mine && mine.cells[4].textContent === '1' && [...mine.cells].map(c => c.textContent);
    }));
    await client.end();
    const closed = await b.until('the client shown disconnected', () => page.evaluate(() => {
      const rows = [...document.querySelectorAll('main table[aria-label="Connected clients"] tbody tr')];
      const mine = rows.find(r => r.cells[0].textContent.startsWith('web-ui-ts-client'));
      return mine && mine.cells[6].textContent === 'disconnected';
    }));
    const violations = await b.axeViolations(page);
    if (violations.length) b.fail(`axe on the Home: ${JSON.stringify(violations)}`);
    b.check(page, 'home');
    return { claudeCode, vscode, copiedUrl, url, row, closed };
  },

  /**
   * Activity: a slow tool (the example server's `slow`, which reports
   * progress every 100 ms) called by an SDK client: its progress bar moves
   * (two or more rising values seen) and the call then shows under
   * "Recent calls" as ok.
   */
  async activity_progress(browser) {
    const page = await b.openPage(browser);
    await b.openView(page, BASE, 'activity');
    const client = await sdkClient('web-ui-slow-client');
    const call = client.callTool({ name: 'slow', arguments: { ms: 5000 } }, undefined, { timeout: 60000 });
    const seen = [];
    await b.until('the progress bar of example/slow to move', async () => {
      const value = await page.evaluate(() => {
        const bar = document.querySelector('main progress[aria-label="Progress of example/slow"]');
        return bar && bar.hasAttribute('value') ? { value: bar.value, max: bar.max } : null;
      });
      if (value && (seen.length === 0 || seen[seen.length - 1].value !== value.value)) seen.push(value);
      return seen.length >= 2 && seen[seen.length - 1].value > seen[0].value;
    });
    await call;
    const recent = await b.until('the call under "Recent calls"', () => page.evaluate(() => {
      const rows = [...document.querySelectorAll('main table[aria-label="Recent calls"] tbody tr')];
      const row = rows.find(r => r.cells[0].textContent === 'example/slow');
      return row && [...row.cells].map(c => c.textContent);
    }));
    await client.close();
    if (recent[3] !== 'ok') b.fail(`the slow call ended as ${JSON.stringify(recent)}`);
    const violations = await b.axeViolations(page);
    if (violations.length) b.fail(`axe on Activity: ${JSON.stringify(violations)}`);
    b.check(page, 'activity');
    return { seen, recent };
  },

  /**
   * A server whose env uses an unset ${VAR}: its card says so plainly, and
   * the value entered there is stored in its env; the gateway then serves
   * it without a restart (the page's API lists it served, and a call through
   * /mcp reaches it).
   */
  async servers_unset_variable(browser) {
    const page = await b.openPage(browser);
    await b.openView(page, BASE, 'servers');
    const variable = 'WEB_UI_UNSET_KEY_29';
    const card = await page.waitForSelector('main article[aria-labelledby]');
    const reason = await b.until('the plain reason on the card', () => page.evaluate((variable) => {
      const p = [...document.querySelectorAll('main article p.warn')].find(el => el.textContent.includes(variable));
      return p && p.textContent;
    }, variable));
    void card;
    await b.typeInto(await b.field(page, `Value of ${variable}`), 's3cret-29');
    await (await b.button(page, `Save ${variable}`)).click();
    const stored = await b.until('the value in the config file', () => {
      const env = (b.servers(process.env.CONFIG).keyed || {}).env || {};
      return env.WEB_UI_KEY === 's3cret-29' && env;
    });
    const mode = (fs.statSync(process.env.CONFIG).mode & 0o777).toString(8);
    const served = await b.until('the gateway serving keyed', async () => {
      const list = await page.evaluate(async () => (await (await fetch('/api/servers')).json()).servers);
      const keyed = list.find(s => s.name === 'keyed');
      return keyed && keyed.served && keyed;
    });
    if (JSON.stringify(served).includes('s3cret-29')) b.fail('the API shows the stored value');
    const client = await sdkClient('web-ui-after-fix');
    const tools = (await client.listTools()).tools.map(t => t.name);
    await client.end();
    await b.openView(page, BASE, 'servers');
    const after = await page.evaluate((variable) => document.querySelector('main').innerText.includes(variable), variable);
    b.check(page, 'servers unset variable');
    return { reason, stored, mode, tools, reasonAfter: after };
  },

  /**
   * Logs: a log message a server sends during an SDK client's call shows
   * in the Logs view, with its server and level; so does each server's
   * card. No serious accessibility violation.
   */
  async logs_live(browser) {
    const page = await b.openPage(browser);
    await b.openView(page, BASE, 'logs');
    const client = await sdkClient('web-ui-logs-client');
    // As a client that shows logs does: it asks for them.
    await client.setLoggingLevel('info');
    const said = await client.callTool({ name: 'whisper', arguments: { text: 'hello from the logs test' } });
    await client.end();
    if (!JSON.stringify(said).includes('hello from the logs test')) b.fail(`whisper answered ${JSON.stringify(said)}`);
    const line = await b.until('the log message in the Logs view', () => page.evaluate(() => {
      const list = document.querySelector('main ul[aria-label="Log messages"]');
      const item = list && [...list.querySelectorAll('li')].find(li => li.textContent.includes('about to say hello from the logs test'));
      return item && item.textContent;
    }));
    const card = await page.$eval('main section[aria-label="whisper"] h3', el => el.textContent);
    const violations = await b.axeViolations(page);
    if (violations.length) b.fail(`axe on Logs: ${JSON.stringify(violations)}`);
    b.check(page, 'logs');
    return { line, card };
  },

  /**
   * At 390 px, the servers view's config path (a long one) stays within
   * the width, and the page does not scroll sideways.
   */
  async long_config_path(browser) {
    const page = await b.openPage(browser);
    await page.setViewport({ width: 390, height: 844 });
    await b.openView(page, BASE, 'servers');
    const box = await page.evaluate(() => {
      const about = [...document.querySelectorAll('main > p')].find(p => p.textContent.includes('config.json'));
      const doc = document.documentElement;
      return about && { right: about.getBoundingClientRect().right, scrollRight: about.scrollWidth > about.clientWidth, client: doc.clientWidth, scroll: doc.scrollWidth, text: about.textContent };
    });
    if (!box) b.fail('the servers view shows no config path');
    if (box.right > box.client || box.scrollRight || box.scroll > box.client) b.fail(`the config path overflows at 390 px: ${JSON.stringify(box)}`);
    b.check(page, 'long config path');
    return box;
  },

  /**
   * Presets at 1280 px: the cards are a grid (several side by side); a
   * search keeps only the matching ones, a category only its own.
   */
  async presets_grid(browser) {
    const page = await b.openPage(browser);
    await page.setViewport({ width: 1280, height: 900 });
    await b.openView(page, BASE, 'presets');
    const cards = () => page.evaluate(() => [...document.querySelectorAll('main .preset-grid > article')].map(a => {
      const r = a.getBoundingClientRect();
      return { name: a.querySelector('h3').textContent, left: Math.round(r.left), top: Math.round(r.top) };
    }));
    const all = await cards();
    const columns = new Set(all.filter(c => c.top === all[0].top).map(c => c.left)).size;
    if (columns < 2) b.fail(`the presets are ${columns} column(s) at 1280 px`);
    await b.typeInto(await b.field(page, 'Search presets'), 'tavily');
    const searched = await b.until('the search to narrow the presets', async () => {
      const now = await cards();
      return now.length > 0 && now.length < all.length && now;
    });
    if (!searched.every(c => /tavily/i.test(c.name))) b.fail(`searching "tavily" shows ${JSON.stringify(searched.map(c => c.name))}`);
    await b.typeInto(await b.field(page, 'Search presets'), '');
    // Until the cleared search shows every card again: before that, the
    // search's own one section ("Search", Tavily's) would pass for the
    // category's.
    await b.until('the cleared search to show every preset', async () => (await cards()).length === all.length);
    await b.choose(await b.field(page, 'Category'), 'Vision');
    const vision = await b.until('the category to narrow the presets', async () => {
      const now = await page.$$eval('main section h2', hs => hs.map(h2 => h2.textContent));
      return now.length === 1 && now;
    });
    b.check(page, 'presets grid');
    return { total: all.length, columns, searched: searched.map(c => c.name), vision };
  },

  /**
   * At 390 px the navigation is a menu behind one "Menu" button (a
   * disclosure: aria-expanded, its links hidden until opened), used with the
   * keyboard alone: Tab reaches the button, Enter opens it, Tab reaches a
   * link, Enter follows it and closes the menu; Escape closes it and gives
   * the focus back to the button. No serious accessibility violation open or
   * closed, in every language. At 1280 px there is no menu: the links are
   * one row.
   */
  async nav_menu(browser) {
    const page = await b.openPage(browser);
    await page.setViewport({ width: 390, height: 800 });
    // In every document the page loads (no eval: the page's CSP forbids it).
    await page.evaluateOnNewDocument(ROWS);
    const state = () => page.evaluate(() => {
      const rowsOf = window.tbRowsOf;
      const visible = el => el.getClientRects().length > 0 && getComputedStyle(el).visibility !== 'hidden';
      const links = [...document.querySelectorAll('.top nav a')];
      const shown = links.filter(visible);
      const menu = [...document.querySelectorAll('header button')].find(el => el.textContent.trim() === 'Menu' || el.getAttribute('aria-label') === 'Menu');
      const active = document.activeElement;
      return {
        links: links.length,
        shown: shown.length,
        rows: rowsOf(shown),
        widest: Math.max(0, ...shown.map(a => Math.round(a.getBoundingClientRect().right))),
        menu: menu && visible(menu) ? menu.getAttribute('aria-expanded') : null,
        focused: active === menu ? 'menu' : (active && active.closest('nav') ? active.textContent.trim() : active && active.tagName),
        hash: location.hash,
        current: (document.querySelector('.top nav a[aria-current="page"]') || {}).textContent,
        headerRows: rowsOf([...document.querySelector('.top').children].filter(visible).filter(el => el.tagName !== 'NAV')),
      };
    });
    await b.openView(page, BASE, 'home');
    const closed = await state();
    if (closed.menu !== 'false') b.fail(`at 390 px there is no closed "Menu" button in the header: ${JSON.stringify(closed)}`);
    if (closed.shown !== 0) b.fail(`at 390 px ${closed.shown} navigation links show with the menu closed`);
    if (closed.headerRows !== 1) b.fail(`at 390 px the header takes ${closed.headerRows} rows`);
    let violations = await b.axeViolations(page);
    if (violations.length) b.fail(`axe with the menu closed: ${JSON.stringify(violations)}`);
    // The keyboard alone: Tab from the top of the page to the button.
    await page.evaluate(() => document.activeElement && document.activeElement.blur());
    let tabs = 0;
    while ((await state()).focused !== 'menu') {
      if (++tabs > 6) b.fail(`Tab never reached the Menu button: ${JSON.stringify(await state())}`);
      await page.keyboard.press('Tab');
    }
    await page.keyboard.press('Enter');
    const open = await b.until('the menu to open', async () => {
      const s = await state();
      return s.menu === 'true' && s.shown === s.links && s;
    });
    if (open.rows !== open.links) b.fail(`the open menu's ${open.links} links are on ${open.rows} rows, not one each`);
    if (open.widest > 390) b.fail(`the open menu reaches ${open.widest} px, wider than the screen`);
    violations = await b.axeViolations(page);
    if (violations.length) b.fail(`axe with the menu open: ${JSON.stringify(violations)}`);
    // Tab into the links: Home, then Servers; Enter follows it.
    await page.keyboard.press('Tab');
    await page.keyboard.press('Tab');
    const onServers = await state();
    if (onServers.focused !== 'Servers') b.fail(`two Tabs after the Menu button are on ${onServers.focused}, not Servers`);
    await page.keyboard.press('Enter');
    // The link closes the menu at once; the view follows on hashchange.
    const followed = await b.until('Servers shown and the menu closed', async () => {
      const s = await state();
      return s.hash === '#/servers' && s.menu === 'false' && s.shown === 0 && s.current === 'Servers' && s;
    });
    await b.settled(page);
    // Opened again and closed with Escape: the focus is back on the button.
    await (await b.button(page, 'Menu')).click();
    await b.until('the menu to open again', async () => (await state()).menu === 'true');
    await page.keyboard.press('Escape');
    const escaped = await b.until('Escape to close the menu', async () => {
      const s = await state();
      return s.menu === 'false' && s.shown === 0 && s;
    });
    if (escaped.focused !== 'menu') b.fail(`after Escape the focus is on ${escaped.focused}, not the Menu button`);
    // Every language: the button says Menu in it, axe finds nothing open.
    const labels = {};
    for (const lang of LANGUAGES) {
      await b.openView(page, BASE, 'servers', { lang });
      const button = await page.$('header button[aria-expanded]');
      if (!button) b.fail(`no menu button in ${lang}`);
      labels[lang] = await button.evaluate(el => el.textContent.trim());
      await button.click();
      await b.until(`the menu to open in ${lang}`, async () => (await button.evaluate(el => el.getAttribute('aria-expanded'))) === 'true');
      violations = await b.axeViolations(page);
      if (violations.length) b.fail(`axe with the menu open in ${lang}: ${JSON.stringify(violations)}`);
      const rows = await page.evaluate(() => window.tbRowsOf([...document.querySelector('.top').children]
        .filter(el => el.tagName !== 'NAV' && el.getClientRects().length > 0)));
      if (rows !== 1) b.fail(`in ${lang} at 390 px the header takes ${rows} rows`);
    }
    // Wide: no menu, the links in one row.
    await page.setViewport({ width: 1280, height: 800 });
    await b.openView(page, BASE, 'home');
    const wide = await state();
    if (wide.menu !== null) b.fail(`at 1280 px the Menu button shows (${wide.menu})`);
    if (wide.shown !== wide.links || wide.rows !== 1) b.fail(`at 1280 px the links are not one row: ${JSON.stringify(wide)}`);
    b.check(page, 'the navigation menu');
    return { closed, open, followed, escaped, wide, labels, tabs };
  },

  /**
   * Home, Activity, Logs, Servers and Presets in every language at 1280
   * and 390 px: shown,
   * in that language, no console error, no serious accessibility violation;
   * the header is one row (at 390 px with the navigation behind its menu
   * button), the links one row at 1280 px, and nothing scrolls sideways.
   */
  async live_views(browser) {
    const page = await b.openPage(browser);
    await page.evaluateOnNewDocument(ROWS);
    const rows = {};
    for (const width of [1280, 390]) {
      await page.setViewport({ width, height: 800 });
      for (const lang of LANGUAGES) {
        for (const view of LIVE_VIEWS) {
          await b.openView(page, BASE, view, { lang });
          const text = await page.$eval('main', m => m.innerText);
          if (lang !== 'en' && !/[\u3040-\u30ff\u4e00-\u9fff]/.test(text)) b.fail(`#/${view} in ${lang} shows no ${lang} text`);
          const layout = await page.evaluate(() => {
            const rowsOf = window.tbRowsOf;
            const visible = el => el.getClientRects().length > 0;
            const links = [...document.querySelectorAll('.top nav a')].filter(visible);
            const doc = document.documentElement;
            // Wide: the links are part of the header's row; narrow: a menu
            // button stands for them (nav_menu opens it).
            return { headerRows: rowsOf([...document.querySelector('.top').children].filter(visible)),
              links: links.length, navRows: rowsOf(links), scroll: doc.scrollWidth, client: doc.clientWidth };
          });
          if (layout.headerRows !== 1) b.fail(`#/${view} in ${lang} at ${width} px: the header takes ${layout.headerRows} rows`);
          if (width === 1280 && layout.navRows !== 1) b.fail(`#/${view} in ${lang} at ${width} px: the navigation takes ${layout.navRows} rows`);
          if (width === 390 && layout.links !== 0) b.fail(`#/${view} in ${lang} at ${width} px: ${layout.links} links show outside the menu`);
          if (layout.scroll > layout.client) b.fail(`#/${view} in ${lang} at ${width} px scrolls sideways (${layout.scroll} > ${layout.client})`);
          rows[`${width}/${lang}/${view}`] = layout.headerRows;
          const violations = await b.axeViolations(page);
          if (violations.length) b.fail(`axe on #/${view} in ${lang} at ${width} px: ${JSON.stringify(violations)}`);
          b.check(page, `#/${view} in ${lang} at ${width} px`);
        }
      }
    }
    return { rows };
  },
};
