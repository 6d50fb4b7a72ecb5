// One scenario of the settings page, in headless Chromium, against a running
// `toolbridge serve` (tests/web/web_ui.rs starts it and this script):
//
//   node scenarios.cjs SCENARIO
//
// Environment: BASE_URL (the page, `http://127.0.0.1:PORT/`), CONFIG (the
// gateway's config file), TOOLBRIDGE (the binary, for a server's command),
// TOKEN (the gateway's token, for token_login).
// A scenario asserts as it goes and exits 1 with a message saying what the
// user would have seen; on success it prints one JSON line of facts the
// Rust side checks too. Every scenario fails on any console error, page
// error or failed request.
'use strict';

const fs = require('node:fs');
const b = require('./browser.cjs');

const BASE = process.env.BASE_URL;
const CONFIG = process.env.CONFIG;
const TOOLBRIDGE = process.env.TOOLBRIDGE;
// Every view, and one tool open in the tools view (its form and definitions).
const VIEWS = ['servers', 'profiles', 'presets', 'doctor', 'tools', 'catalog', 'tools/example/echo'];
const LANGUAGES = ['en', 'zh', 'ja'];
// Chinese and Japanese both use the CJK ideographs; only Japanese has kana.
const HAN = /[\u4e00-\u9fff]/;
const KANA = /[\u3040-\u30ff]/;
const CJK = { zh: HAN, ja: /[\u3040-\u30ff\u4e00-\u9fff]/ };

/**
 * Clicks `signIn` (a "Sign in" button) on `page`, then in the tab it opens
 * at the authorization server at `issuer` (an oidc-provider) logs in and
 * consents; returns once the tab is back at the gateway's loopback
 * listener, with the tab and the "Open the sign-in page" link's address.
 */
async function signInAtProvider(browser, page, signIn, issuer) {
  const opened = new Promise(resolve => browser.once('targetcreated', resolve));
  const shown = await signIn.evaluate(el => el.textContent.trim());
  if (shown !== 'Sign in') b.fail(`the sign-in button reads "${shown}"`);
  await signIn.click();
  const tab = await (await opened).page();
  if (!tab) b.fail('the click opened no tab');
  await b.until('the tab at the authorization server', () => tab.url().startsWith(issuer));
  const link = await b.button(page, 'Open the sign-in page');
  const linked = await link.evaluate(a => a.href);
  if (!linked.startsWith(issuer)) b.fail(`the link goes to ${linked}`);
  // The provider's own login, then consent.
  await tab.waitForSelector('input[name="login"]');
  await tab.type('input[name="login"]', 'alice');
  await tab.type('input[name="password"]', 'any');
  await Promise.all([tab.waitForNavigation(), tab.click('button[type="submit"]')]);
  await tab.waitForSelector('button[type="submit"]');
  await tab.click('button[type="submit"]');
  await b.until('the tab back at the gateway\'s listener', () => /^http:\/\/127\.0\.0\.1:\d+\/callback\?/.test(tab.url()));
  return { tab, linked };
}

/** Opens the add-server form from the servers view. */
async function openAddForm(page) {
  await b.openView(page, BASE, 'servers');
  await (await b.button(page, 'Add server')).click();
  return b.field(page, 'Name');
}

/** Fills the add/edit form for a stdio server running the example server. */
async function fillStdio(page, name, args) {
  await b.typeInto(await b.field(page, 'Name'), name);
  await b.choose(await b.field(page, 'Transport'), 'stdio');
  await b.typeInto(await b.field(page, 'Command'), TOOLBRIDGE);
  await b.fillList(await b.field(page, 'Arguments'), args);
}

const scenarios = {
  /** Add, edit and remove a server through the form; the file follows. */
  async servers_form(browser) {
    const page = await b.openPage(browser);
    await openAddForm(page);
    await fillStdio(page, 'web-added', ['example-server']);
    await (await b.button(page, 'Save')).click();
    const added = await b.until('web-added in the config file', () => b.servers(CONFIG)['web-added']);
    if (added.command !== TOOLBRIDGE || JSON.stringify(added.args) !== '["example-server"]') {
      b.fail(`the form wrote ${JSON.stringify(added)}`);
    }
    await b.settled(page);

    // Edit: the form comes back filled in; change the arguments.
    await (await b.button(page, 'Edit web-added')).click();
    const name = await b.field(page, 'Name');
    const shown = await name.evaluate(el => el.value);
    const argsField = await b.field(page, 'Arguments');
    const shownArgs = await argsField.evaluate(el => el.value);
    if (!shownArgs.includes('example-server')) b.fail(`the edit form shows arguments "${shownArgs}"`);
    await b.fillList(argsField, ['example-server', '--edited']);
    await (await b.button(page, 'Save')).click();
    const edited = await b.until('the edited arguments in the config file', () => {
      const s = b.servers(CONFIG)['web-added'];
      return s && JSON.stringify(s.args) === '["example-server","--edited"]' && s;
    });
    await b.settled(page);

    // Remove, after a confirmation.
    await (await b.button(page, 'Remove web-added')).click();
    const dialog = await page.waitForSelector('dialog[open]');
    await (await b.button(page, ['Remove', 'Confirm'], { within: dialog })).click();
    await b.until('web-added gone from the config file', () => !('web-added' in b.servers(CONFIG)));
    await b.settled(page);
    b.check(page, 'servers form');
    return { added, edited, nameShownOnEdit: shown };
  },

  /**
   * A profile made in the Profiles view: the live preview says what it
   * would serve (final names, the glob that took or left out each tool),
   * Save writes it, Delete (after a confirmation) takes it out.
   */
  async profiles_editor(browser) {
    // A form half filled in may describe a profile the config refuses (no
    // server ticked yet): its preview is then a 422, shown as "No preview".
    const page = await b.openPage(browser, { allowStatus: [422] });
    await b.openView(page, BASE, 'profiles');
    await (await b.button(page, 'New profile')).click();
    await b.typeInto(await b.field(page, 'Name'), 'web-dev');
    const every = await b.field(page, 'Every enabled server');
    await every.click();
    await (await b.field(page, 'example')).click();
    await b.fillList(await b.field(page, 'Tool globs'), ['example__echo', 'example__tiny_*']);
    await b.fillList(await b.field(page, 'Exclusions'), ['example__tiny_audio']);
    await b.fillList(await b.field(page, 'Renames'), ['example__echo = say']);
    await b.fillList(await b.field(page, 'Description overrides'), ['example__tiny_image = A very small picture.']);
    // The preview follows the form.
    const row = (tool) => page.evaluate((tool) => {
      const tr = document.querySelector(`table[aria-label="Tools of the profile"] tr[data-tool="${tool}"]`);
      return tr ? [...tr.cells].map((c) => c.innerText.trim()) : null;
    }, tool);
    const echo = await b.until('the preview showing echo served as say', async () => {
      const r = await row('example__echo');
      return r && r[1].startsWith('say') && r;
    });
    const audio = await b.until('the preview showing tiny_audio left out', async () => {
      const r = await row('example__tiny_audio');
      return r && r[2] === 'left out by !example__tiny_audio' && r;
    });
    // The description is typed last: its preview may come a moment later.
    await b.until('the preview showing the overridden description of tiny_image', async () => {
      const r = await row('example__tiny_image');
      return r && r[3].startsWith('A very small picture.') && r;
    });
    const violations = await b.axeViolations(page);
    if (violations.length) b.fail(`axe finds in the profile editor: ${JSON.stringify(violations)}`);

    await (await b.button(page, 'Save')).click();
    const saved = await b.until('web-dev in the config file', () => (b.readConfig(CONFIG).profiles || {})['web-dev']);
    await b.settled(page);
    const url = await page.evaluate(() => [...document.querySelectorAll('main code')].map((c) => c.textContent).find((t) => t.endsWith('/mcp/web-dev')));
    if (!url) b.fail('the saved profile is not listed with its URL');

    // Edit it again: the form comes back filled in.
    await (await b.button(page, 'Edit web-dev')).click();
    const shown = await (await b.field(page, 'Renames')).evaluate((el) => el.value);
    if (shown !== 'example__echo = say') b.fail(`the edit form shows renames "${shown}"`);
    await (await b.button(page, 'Cancel')).click();

    await (await b.button(page, 'Delete web-dev')).click();
    const dialog = await page.waitForSelector('dialog[open]');
    await (await b.button(page, 'Delete', { within: dialog })).click();
    await b.until('web-dev gone from the config file', () => !('web-dev' in (b.readConfig(CONFIG).profiles || {})));
    await b.settled(page);
    b.check(page, 'profiles editor');
    return { saved, echo, audio, url };
  },

  /** A refused form: the error sits at the field, the file is untouched. */
  async invalid_input(browser) {
    const before = fs.readFileSync(CONFIG);
    const page = await b.openPage(browser, { allowStatus: [400, 422] });
    await openAddForm(page);
    await b.typeInto(await b.field(page, 'Name'), 'web-invalid');
    await b.choose(await b.field(page, 'Transport'), 'http');
    const url = await b.field(page, 'URL');
    await b.typeInto(url, 'not a url');
    await (await b.button(page, 'Save')).click();
    // The URL field is marked invalid and described by a visible message.
    const message = await page.waitForFunction(el => {
      if (el.getAttribute('aria-invalid') !== 'true') return null;
      const ids = (el.getAttribute('aria-describedby') || '').split(/\s+/).filter(Boolean);
      const text = ids.map(id => document.getElementById(id)).filter(e => e && e.getClientRects().length)
        .map(e => e.textContent.trim()).filter(Boolean).join(' ');
      return text || null;
    }, {}, url).catch(() => null);
    if (!message) b.fail('after Save with URL "not a url", the URL field is not aria-invalid with a visible message it is described by');
    const after = fs.readFileSync(CONFIG);
    if (!before.equals(after)) b.fail(`the config file changed:\n${after}`);
    // The message sits next to the field: inside the same .field block, or
    // right after it (no further than the field's parent's box).
    const near = await url.evaluate(el => {
      const ids = (el.getAttribute('aria-describedby') || '').split(/\s+/);
      const box = el.closest('.field') || el.parentElement;
      return ids.some(id => { const m = document.getElementById(id); return m && (box.contains(m) || m.previousElementSibling === el); });
    });
    if (!near) b.fail('the URL error is not beside the URL field');
    b.check(page, 'invalid input');
    return { message: await message.jsonValue() };
  },

  /** Disable, then enable a server with its switch; the file follows. */
  async disable_enable(browser) {
    const page = await b.openPage(browser);
    await b.openView(page, BASE, 'servers');
    const enabled = () => b.field(page, 'Enable example').then(f => f.evaluate(el => el.checked && !el.disabled));
    if (!(await b.until('the example switch on and usable', enabled))) b.fail('example is not shown enabled');
    await (await b.field(page, 'Enable example')).click();
    await b.until('example disabled in the file', () => b.servers(CONFIG).example.disabled === true);
    await b.settled(page);
    await b.until('the example switch off', async () => !(await (await b.field(page, 'Enable example')).evaluate(el => el.checked || el.disabled)));
    await (await b.field(page, 'Enable example')).click();
    await b.until('example enabled in the file', () => !b.servers(CONFIG).example.disabled);
    await b.settled(page);
    await b.until('the example switch on', enabled);
    b.check(page, 'disable and enable');
    return { example: b.servers(CONFIG).example };
  },

  /**
   * Add Tavily (it needs a key) twice: as the CLI does by default, with a
   * ${VAR} reference; then under another name with the key itself, which
   * makes the file readable by its owner only.
   */
  async preset_with_key(browser) {
    const page = await b.openPage(browser);
    await b.openView(page, BASE, 'presets');
    await (await b.button(page, 'Add Tavily')).click();
    let dialog = await page.waitForSelector('dialog[open]');
    await (await b.button(page, 'Add', { within: dialog })).click();
    const reference = await b.until('tavily in the config file', () => b.servers(CONFIG).tavily);
    await page.waitForFunction(() => !document.querySelector('dialog[open]'));
    await b.settled(page);

    await (await b.button(page, 'Add Tavily')).click();
    dialog = await page.waitForSelector('dialog[open]');
    await b.typeInto(await b.field(page, 'Name', { within: 'dialog[open]' }), 'tavily-keyed');
    await (await b.field(page, 'Store the key in the config file', { within: 'dialog[open]' })).click();
    await b.typeInto(await b.field(page, 'API key', { within: 'dialog[open]' }), 'tvly-web-test-key');
    await (await b.button(page, 'Add', { within: dialog })).click();
    const keyed = await b.until('tavily-keyed in the config file', () => b.servers(CONFIG)['tavily-keyed']);
    await b.settled(page);
    // The key is never sent back to the page.
    const shown = await page.evaluate(() => document.body.innerText);
    if (shown.includes('tvly-web-test-key')) b.fail('the page shows the stored key');
    b.check(page, 'preset with a key');
    return { reference, keyed, mode: (fs.statSync(CONFIG).mode & 0o777).toString(8) };
  },

  /** Try tiny_image and tiny_audio: a decoded image, an audio player. */
  async tool_media(browser) {
    const page = await b.openPage(browser);
    const results = {};
    for (const [tool, check] of [
      ['tiny_image', () => page.waitForFunction(() => [...document.querySelectorAll('main img')]
        .some(img => img.complete && img.naturalWidth > 0 && /^(data|blob):/.test(img.src)))],
      ['tiny_audio', () => page.waitForFunction(() => [...document.querySelectorAll('main audio')]
        .some(a => a.controls && (a.src || (a.querySelector('source') || {}).src)))],
    ]) {
      await b.openView(page, BASE, `tools/example/${tool}`);
      await (await b.button(page, 'Run')).click();
      await check().catch(() => b.fail(`after Run, ${tool}'s result shows no ${tool === 'tiny_image' ? 'decoded <img>' : '<audio controls> with a source'}`));
      results[tool] = await page.evaluate(() => ({
        img: [...document.querySelectorAll('main img')].map(i => i.naturalWidth),
        audio: document.querySelectorAll('main audio').length,
      }));
    }
    b.check(page, 'tool media');
    return results;
  },

  /**
   * The rug server's withheld tools: listed with their diff, approved one
   * by one from the page, then gone from the list and back among the tools.
   */
  async withheld_tools(browser) {
    const page = await b.openPage(browser);
    await b.openView(page, BASE, 'tools/rug');
    const region = () => page.$('section[aria-labelledby][role="region"].tools-withheld');
    await b.until('the region "Withheld tools"', region);
    const shown = await page.$eval('.tools-withheld', el => ({
      headings: [...el.querySelectorAll('h3')].map(h => h.textContent.trim()),
      diffs: [...el.querySelectorAll('pre')].map(p => p.textContent),
      title: el.querySelector('h2').textContent.trim(),
    }));
    const linked = async () => page.$$eval('nav[aria-label="Tools of rug"] a', links => links.map(a => a.textContent.trim()));
    const before = await linked();
    for (const tool of ['add', 'send_report']) {
      await (await b.button(page, `Approve ${tool}`)).click();
      await b.until(`${tool} among the tools after Approve`, async () => (await linked()).includes(tool));
      await b.settled(page);
    }
    const after = await linked();
    const regionLeft = !!(await region());
    const pinned = await page.$$eval('nav[aria-label="Tools of rug"] li', items => items
      .filter(li => [...li.querySelectorAll('.badge')].some(b => b.textContent.trim() === 'pinned' && b.getClientRects().length > 0))
      .map(li => li.querySelector('a').textContent.trim()));
    b.check(page, 'withheld tools');
    return { shown, before, after, regionLeft, pinned };
  },

  /**
   * One list of every server's tools: the search narrows it across both
   * servers, the server filter to one, the start of a word finds the
   * tool as it is typed. What is listed at each step, as
   * "server/tool".
   */
  async tools_search(browser) {
    const page = await b.openPage(browser);
    await b.openView(page, BASE, 'tools');
    const listed = () => page.$$eval('nav.tools-list li', items => items
      .filter(li => li.getClientRects().length > 0 && getComputedStyle(li).visibility !== 'hidden')
      .map(li => `${li.querySelector('.tools-item-server').textContent.trim()}/${li.querySelector('a, .tools-item-name').textContent.trim()}`));
    const count = () => page.$eval('.tools-count', el => el.textContent.trim());
    await b.until('tools of both servers listed', async () => {
      const all = await listed();
      return all.some(e => e.startsWith('example/')) && all.some(e => e.startsWith('everything/'));
    });
    const all = await listed();
    const search = await b.field(page, 'Search tools');
    await b.typeInto(search, 'echo');
    const echo = await listed();
    const echoCount = await count();
    await b.choose(await b.field(page, 'Server'), 'example');
    const echoOfExample = await listed();
    const navLabel = await page.$eval('nav.tools-list', n => n.getAttribute('aria-label'));
    await b.choose(await b.field(page, 'Server'), '');
    await b.typeInto(search, 'tiny image');
    const tinyImage = await listed();
    // What is typed so far: the start of a word ("ech" of echo).
    await b.typeInto(search, 'ech');
    const prefix = await listed();
    b.check(page, 'tools search');
    return { all, echo, echoCount, echoOfExample, navLabel, tinyImage, prefix };
  },

  /**
   * echo's "Compatibility" disclosure: one sentence per provider, said on
   * demand (closed at first); no provider warning in the list; the changes
   * made for a provider in en, zh and ja.
   */
  async tool_compat(browser) {
    const page = await b.openPage(browser);
    await b.openView(page, BASE, 'tools/example/echo');
    const details = await page.waitForFunction(() => [...document.querySelectorAll('main details')]
      .find(d => d.querySelector('summary').textContent.trim() === 'Compatibility')).then(h => h.asElement());
    const closed = await details.evaluate(d => !d.open);
    await (await details.$('summary')).click();
    const sentences = await details.$$eval(':scope > ul > li > p:first-child', ps => ps.map(p => p.textContent.replace(/\s+/g, ' ').trim()));
    const visible = await details.evaluate(d => d.querySelector('ul').getClientRects().length > 0);
    const listText = await page.$eval('nav.tools-list', n => n.innerText);
    // The changes made for each provider, in each language (the library's
    // sentence in English, its kind's in the others).
    const changes = {};
    for (const lang of LANGUAGES) {
      await b.openView(page, BASE, 'tools/example/echo', { lang });
      changes[lang] = await page.$$eval('main details.tools-compat ul.tools-changes > li', lis => lis.map(li => li.textContent.replace(/\s+/g, ' ').trim()));
    }
    b.check(page, 'tool compatibility');
    return { closed, visible, sentences, listText, changes };
  },

  /**
   * The switch of example's tiny_audio: off (SWITCH=off) or on again
   * (SWITCH=on); waits until the config file says so.
   */
  async tool_switch(browser) {
    const want = process.env.SWITCH === 'on';
    const page = await b.openPage(browser);
    await b.openView(page, BASE, 'tools/example');
    const name = 'Use tiny_audio of example';
    const toggle = await page.waitForFunction(name => [...document.querySelectorAll('input[role="switch"]')]
      .find(el => el.getAttribute('aria-label') === name), {}, name).then(h => h.asElement());
    const before = await toggle.evaluate(el => el.checked);
    if (before === want) b.fail(`the switch "${name}" is already ${want ? 'on' : 'off'}`);
    await toggle.click();
    await b.until(`the config's disabledTools ${want ? 'without' : 'with'} tiny_audio`, () => {
      const disabled = (b.servers(CONFIG).example || {}).disabledTools || [];
      return disabled.includes('tiny_audio') !== want;
    });
    await b.settled(page);
    const after = await toggle.evaluate(el => el.checked);
    // The item says "switched off" (visibly) only while it is.
    const offShown = await toggle.evaluate(el => [...el.closest('li').querySelectorAll('.badge')]
      .some(badge => badge.textContent.trim() === 'switched off' && badge.getClientRects().length > 0));
    b.check(page, 'tool switch');
    return { before, after, offShown, disabledTools: (b.servers(CONFIG).example || {}).disabledTools || null };
  },

  /**
   * slow (3 s, progress every 100 ms) in the try-it pane: the progress
   * bar's value, sampled as it runs, then the result. The pane's Run
   * button is within the first screen at 1280 x 800.
   */
  async tool_progress(browser) {
    const page = await b.openPage(browser);
    await page.setViewport({ width: 1280, height: 800 });
    await b.openView(page, BASE, 'tools/example/slow');
    const run = await b.button(page, 'Run');
    const runBox = await run.boundingBox();
    await b.typeInto(await b.field(page, 'ms', { within: 'form.tools-try' }), '3000');
    await run.click();
    const value = () => page.evaluate(() => {
      const bar = document.querySelector('progress[aria-label="Progress"]');
      return bar && bar.getClientRects().length && bar.hasAttribute('value') ? { value: bar.value, max: bar.max } : null;
    });
    const first = await b.until('the progress bar to show the server\'s progress', value);
    const later = await b.until('the progress bar to move', async () => {
      const now = await value();
      return now && now.value > first.value ? now : null;
    });
    await page.waitForFunction(() => /Done/.test((document.querySelector('[role="region"][aria-label="Result"]') || {}).textContent || ''), { timeout: b.LIMIT });
    const barLeft = await page.evaluate(() => {
      const bar = document.querySelector('progress[aria-label="Progress"]');
      return !!bar && bar.getClientRects().length > 0;
    });
    b.check(page, 'tool progress');
    return { first, later, barLeft, runTop: runBox.y, runBottom: runBox.y + runBox.height };
  },

  /**
   * server-everything's trigger-elicitation-request: its question is
   * answered in the form on the page; the result shows the answer.
   */
  async tool_elicitation(browser) {
    const page = await b.openPage(browser);
    await b.openView(page, BASE, 'tools/everything/trigger-elicitation-request');
    await (await b.button(page, 'Run')).click();
    const asks = 'form.tools-question-form';
    await page.waitForSelector(asks, { visible: true });
    const title = await page.$eval(`${asks} h4`, el => el.textContent.trim());
    const message = await page.$eval(`${asks} .tools-question-message`, el => el.textContent.trim());
    await b.typeInto(await b.field(page, 'name', { within: asks }), 'Ada Lovelace');
    await (await b.button(page, 'Send answer', { within: asks })).click();
    const result = await page.waitForFunction(() => {
      const region = document.querySelector('[role="region"][aria-label="Result"]');
      return region && /Done/.test(region.textContent) ? region.innerText : null;
    }, { timeout: b.LIMIT }).then(h => h.jsonValue());
    b.check(page, 'tool elicitation');
    return { title, message, result };
  },

  /**
   * axe-core over the tools view (the list, and a tool open with its
   * result and disclosures shown), at 1280 and 390 px: the serious and
   * critical violations.
   */
  async tools_axe(browser) {
    const page = await b.openPage(browser);
    const found = {};
    for (const width of [1280, 390]) {
      await page.setViewport({ width, height: 800 });
      for (const view of ['tools', 'tools/example/echo']) {
        await b.openView(page, BASE, view);
        if (view !== 'tools') {
          await b.typeInto(await b.field(page, 'text', { within: 'form.tools-try' }), 'hi');
          await (await b.button(page, 'Run')).click();
          await page.waitForFunction(() => /Done/.test((document.querySelector('[role="region"][aria-label="Result"]') || {}).textContent || ''));
          await page.$$eval('main details', ds => ds.forEach(d => { d.open = true; }));
        }
        const violations = await b.axeViolations(page);
        found[`${view}@${width}`] = violations;
      }
    }
    b.check(page, 'tools axe');
    return { found };
  },

  /**
   * An MCP App (tests/servers/apps_server.mjs, on the MCP Apps SDK): Run
   * the tool `counter` on the try-it pane, see its app render in the
   * sandboxed frame with the tool's result, click the app's "Record a
   * click" button inside the frame, and see the server's answer in the app
   * and the call among the app's activity; its "Try a model-only tool"
   * button is refused by the page; axe over the page and the app; Run
   * again tears the app down (it tells its server) and shows a new one;
   * leaving the view tears that one down too.
   */
  async mcp_app(browser) {
    const page = await b.openPage(browser);
    await b.openView(page, BASE, 'tools/apps/counter');
    const badges = await page.$eval('.tools-detail .tools-badges', el => el.innerText);
    const appOnlyBadge = await page.evaluate(() => [...document.querySelectorAll('.tools-list li')]
      .filter(li => /for apps only/.test(li.innerText)).map(li => li.querySelector('a').textContent.trim()));
    await (await b.button(page, 'Run')).click();
    await page.waitForFunction(() => /Done/.test((document.querySelector('[role="region"][aria-label="Result"]') || {}).textContent || ''));
    const outer = await page.waitForSelector('iframe[title="App of counter"]');
    const framed = await outer.evaluate(f => ({ sandbox: f.getAttribute('sandbox'), src: f.getAttribute('src') }));
    const sandboxFrame = await outer.contentFrame();
    // The app: the sandbox's inner frame, once its page is there.
    const app = await b.until('the app to render in the sandbox', async () => {
      const inner = sandboxFrame.childFrames()[0];
      return inner && (await inner.evaluate(() => Boolean(document.querySelector('button')))) && inner;
    });
    const inner = await sandboxFrame.$('iframe');
    const innerSandbox = await inner.evaluate(f => f.getAttribute('sandbox'));
    const greeting = await b.until('the app to show the tool\'s result', () =>
      app.evaluate(() => {
        const text = document.getElementById('greeting').textContent;
        return /click\(s\)/.test(text) && text;
      }));
    await b.until('the page to say the app runs', () => page.evaluate(() =>
      /The app is running/.test((document.querySelector('.mcp-app [role="status"]') || {}).textContent || '')));
    // What the app (the SDK's App class) was told of its host.
    const host = await b.until('the app to show its host', () =>
      app.evaluate(() => document.getElementById('host').textContent));
    // Neither frame runs with the page's origin or can reach its document.
    const origins = {
      sandbox: await sandboxFrame.evaluate(() => window.origin),
      app: await app.evaluate(() => window.origin),
      appReachesPage: await app.evaluate(() => { try { return Boolean(window.top.document); } catch { return false; } }),
    };
    await (await b.button(app, 'Record a click')).click();
    const counted = await b.until('the app to show the server\'s answer', () =>
      app.evaluate(() => {
        const text = document.getElementById('count').textContent;
        return /counted/.test(text) && text;
      }));
    const activity = await b.until('the click among the app\'s activity', () => page.evaluate(() => {
      const list = document.querySelector('.mcp-app details');
      return list && !list.hidden && list.textContent.includes('record_click: Done') && list.textContent;
    }));
    // A tool for the model only is refused, whatever the app asks.
    await (await b.button(app, 'Try a model-only tool')).click();
    const refused = await b.until('the app to be told the host refused', () =>
      app.evaluate(() => {
        const text = document.getElementById('reset-status').textContent;
        return /^Refused|called/.test(text) && text;
      }));
    const refusedActivity = await b.until('the refusal among the app\'s activity', () => page.evaluate(() => {
      const list = document.querySelector('.mcp-app details');
      return list && list.textContent.includes('reset: refused') && list.textContent;
    }));
    const violations = {
      page: await b.axeViolations(page),
      app: await b.axeViolations(app),
    };
    // Run again: the app shown is torn down first (it tells its server),
    // and a new one shows the new result.
    await (await b.button(page, 'Run')).click();
    const again = await b.until('a new app to show the new result', async () => {
      const el = await page.$('iframe[title="App of counter"]');
      const sandbox = el && await el.contentFrame();
      const inner = sandbox && sandbox.childFrames()[0];
      if (!inner || inner === app) return null;
      return inner.evaluate(() => {
        const text = (document.getElementById('greeting') || {}).textContent || '';
        return /click\(s\)/.test(text) && text;
      });
    });
    // Leaving the view tears the app down too (the router waits for it).
    await b.openView(page, BASE, 'tools');
    const left = await page.evaluate(() => document.querySelectorAll('iframe').length);
    b.check(page, 'mcp app');
    return { badges, appOnlyBadge, framed, innerSandbox, greeting, host, origins, counted, activity, refused, refusedActivity, violations, again, left };
  },

  /**
   * Each server's sandbox on its card, as its config resolves it (and in
   * Chinese too): what each card says, by server name.
   */
  async servers_sandbox(browser) {
    const page = await b.openPage(browser);
    const cards = () => page.$$eval('article.card', els => Object.fromEntries(els.map(el => [
      el.querySelector('h2').textContent.trim(),
      { sandbox: (el.querySelector('.sandbox') || {}).textContent || null,
        unavailable: [...el.querySelectorAll('p.error')].map(p => p.textContent.trim()) },
    ])));
    const shown = {};
    for (const lang of ['en', 'zh']) {
      await b.openView(page, BASE, 'servers', { lang });
      await b.until(`the four servers' cards in ${lang}`, async () => Object.keys(await cards()).length === 4);
      await b.settled(page);
      shown[lang] = await cards();
    }
    b.check(page, 'servers sandbox');
    return shown;
  },

  /** The language switch: strings change, CJK appears, remembered, ?lang=. */
  async languages(browser) {
    const page = await b.openPage(browser);
    const nav = async () => page.$$eval('nav a', links => links.map(a => a.textContent.trim()));
    await b.openView(page, BASE, 'servers');
    const english = await b.visibleText(page);
    const navEn = await nav();
    if (HAN.test(english)) b.fail('the English page shows CJK characters');
    const select = await b.field(page, 'Language');
    const seen = { en: english };
    for (const lang of ['zh', 'ja']) {
      await select.select(lang);
      await b.until(`the page in ${lang}`, async () => (await page.evaluate(() => document.documentElement.lang)).startsWith(lang));
      await b.settled(page);
      seen[lang] = await b.visibleText(page);
      if (!HAN.test(seen[lang])) b.fail(`in ${lang}, no CJK ideographs are visible:\n${seen[lang]}`);
    }
    if (!KANA.test(seen.ja)) b.fail(`in Japanese, no kana are visible:\n${seen.ja}`);
    if (KANA.test(seen.zh)) b.fail(`in Chinese, kana are visible:\n${seen.zh}`);
    // Remembered across a reload (the last choice was Japanese).
    await page.reload({ waitUntil: 'domcontentloaded' });
    await page.waitForSelector('body[data-ready="true"]');
    await b.settled(page);
    const reloaded = await page.evaluate(() => ({ lang: document.documentElement.lang, select: document.getElementById('lang').value }));
    if (reloaded.lang !== 'ja' || reloaded.select !== 'ja') b.fail(`after a reload the page is in ${JSON.stringify(reloaded)}, not the chosen ja`);
    const navJa = await nav();
    // ?lang= wins over the remembered choice, in a fresh profile too.
    await b.openView(page, BASE, 'servers', { lang: 'zh' });
    const navZh = await nav();
    const fresh = await browser.createBrowserContext();
    const other = await b.openPage(fresh);
    await b.openView(other, BASE, 'tools', { lang: 'ja' });
    const freshLang = await other.evaluate(() => document.documentElement.lang);
    if (freshLang !== 'ja') b.fail(`?lang=ja in a fresh browser gave ${freshLang}`);
    await b.openView(other, BASE, 'tools');
    const defaultLang = await other.evaluate(() => document.documentElement.lang);
    if (JSON.stringify(navEn) === JSON.stringify(navZh) || JSON.stringify(navZh) === JSON.stringify(navJa)) {
      b.fail(`the navigation did not change with the language: en ${navEn}, zh ${navZh}, ja ${navJa}`);
    }
    b.check(page, 'languages');
    b.check(other, 'languages (fresh profile)');
    await fresh.close();
    return { navEn, navZh, navJa, defaultLangAfterJa: defaultLang };
  },

  /** The add-server form with the keyboard alone: Tab, typing, Enter. */
  async keyboard_add(browser) {
    const page = await b.openPage(browser);
    await b.openView(page, BASE, 'servers');
    const focused = () => page.evaluate(new Function(`
      const el = document.activeElement;
      if (!el || el === document.body) return '';
      const label = el.labels && el.labels[0] ? el.labels[0].cloneNode(true) : null;
      if (label) for (const inner of label.querySelectorAll('input, select, textarea, .hint, .field-error')) inner.remove();
      const text = label ? label.textContent : (el.getAttribute('aria-label') || el.textContent || el.value);
      return (text || '').replace(/\\s+/g, ' ').trim().replace(/\\s*[*:：]$/, '');`));
    // Where the keyboard focus is must be visible (an outline or a shadow).
    const focusShown = () => page.evaluate(() => {
      const style = getComputedStyle(document.activeElement);
      return (style.outlineStyle !== 'none' && parseFloat(style.outlineWidth) > 0) || style.boxShadow !== 'none';
    });
    // Tab to `name` (at most 60 presses from wherever the focus is).
    const tabTo = async (name) => {
      const path = [];
      for (let i = 0; i < 60; i++) {
        const now = await focused();
        if (now === name) {
          if (!(await focusShown())) b.fail(`the focus on "${name}" is not visible (no outline)`);
          return;
        }
        path.push(now);
        await page.keyboard.press('Tab');
      }
      b.fail(`Tab never reached "${name}"; it went through: ${JSON.stringify(path)}`);
    };
    await tabTo('Add server');
    await page.keyboard.press('Enter');
    await b.field(page, 'Name');
    await tabTo('Name');
    await page.keyboard.type('web-keys');
    await tabTo('Transport');
    const transport = await page.evaluate(() => document.activeElement.value);
    if (transport !== 'stdio') b.fail(`the form starts on transport "${transport}", not stdio`);
    await tabTo('Command');
    await page.keyboard.type(TOOLBRIDGE);
    await tabTo('Arguments');
    await page.keyboard.type('example-server');
    await tabTo('Save');
    await page.keyboard.press('Enter');
    const added = await b.until('web-keys in the config file', () => b.servers(CONFIG)['web-keys']);
    await b.settled(page);
    b.check(page, 'keyboard');
    return { added };
  },

  /**
   * A gateway that requires a token (TOKEN): the page's files load, but the
   * API refuses a browser without a session and the page asks for the token;
   * a wrong one opens nothing. The right one, pasted into the form, opens a
   * session the page keeps in its own origin's storage (no cookie, which
   * other ports of the host would get) and the page works, writes included.
   * "Sign out" ends it: the API refuses the old session id.
   */
  async token_login(browser) {
    const token = process.env.TOKEN;
    const page = await b.openPage(browser, { allowStatus: [401] });
    await page.goto(BASE, { waitUntil: 'domcontentloaded' });
    await page.waitForSelector('body[data-ready="true"]');
    const tokenField = await b.field(page, 'Gateway token');
    await b.typeInto(tokenField, `${token}x`);
    await (await b.button(page, 'Sign in')).click();
    await page.waitForFunction(() => {
      const alert = document.querySelector('main p.error[role="alert"]');
      return alert && !alert.hidden && alert.textContent.includes('Not signed in');
    });
    await b.typeInto(await b.field(page, 'Gateway token'), token);
    await (await b.button(page, 'Sign in')).click();
    await page.waitForSelector('nav a[aria-current="page"]');
    await b.settled(page);
    // The landing view is Home; the servers are one link away.
    await (await b.button(page, 'Servers', { within: 'nav' })).click();
    await b.settled(page);
    // A write through the session: disable the example server.
    await (await b.field(page, 'Enable example')).click();
    await b.until('example disabled in the file', () => b.servers(CONFIG).example.disabled === true);
    await b.settled(page);
    const kept = await page.evaluate(() => ({
      cookie: document.cookie,
      session: sessionStorage.getItem('toolbridge-session'),
      address: location.href,
    }));
    if (kept.cookie !== '') b.fail(`the page holds cookies: ${kept.cookie}`);
    if (!kept.session) b.fail('no session kept in sessionStorage');
    if (kept.address.includes(token)) b.fail(`the token is in the address: ${kept.address}`);
    // A page on another port of the same host (any local dev server): the
    // browser sends it the host's cookies, whatever their port. It must get
    // nothing of the gateway's.
    const seen = [];
    const other = require('node:http').createServer((request, response) => {
      seen.push(request.headers.cookie || '');
      response.end('<!doctype html><title>other</title>');
    });
    await new Promise(resolve => other.listen(0, '127.0.0.1', resolve));
    await page.goto(`http://127.0.0.1:${other.address().port}/`);
    other.close();
    if (seen.length === 0) b.fail('the other port was never visited');
    if (seen.some(c => c !== '')) b.fail(`another port of the host got cookies: ${seen.join(' | ')}`);
    await page.goto(BASE, { waitUntil: 'domcontentloaded' });
    await page.waitForSelector('body[data-ready="true"]');
    await page.waitForSelector('nav a[aria-current="page"]');
    await b.settled(page);
    await (await b.button(page, 'Sign out')).click();
    await page.waitForSelector('#sign-in-token');
    const after = await page.evaluate(async (id) => (await fetch('/api/version', {
      headers: { 'X-Toolbridge-Session': id },
    })).status, kept.session);
    if (after !== 401) b.fail(`a signed-out session still answered ${after}`);
    b.check(page, 'signed in and out');
    return { landed: new URL(kept.address).pathname, signedOut: after };
  },

  /**
   * Doctor's finding for a remote server that needs an OAuth sign-in
   * (ISSUER's, as in remote_sign_in): its problem said in Chinese and
   * Japanese (the library's English in English), and its Sign in button,
   * the Servers view's flow: the provider's login in the tab the click
   * opened, then Doctor checks again and finds the server working.
   */
  async doctor_sign_in(browser) {
    const issuer = process.env.ISSUER;
    const page = await b.openPage(browser);
    const problem = async () => {
      await page.waitForSelector('main article.card[aria-label="gw"] li');
      return page.$eval('main article.card[aria-label="gw"] li > p', p => p.textContent.trim());
    };
    const problems = {};
    for (const lang of ['zh', 'ja', 'en']) {
      await b.openView(page, BASE, 'doctor', { lang });
      problems[lang] = await problem();
    }
    const signIn = await b.button(page, 'Sign in to gw');
    const violations = await b.axeViolations(page);
    if (violations.length) b.fail(`axe finds on Doctor with Sign in: ${JSON.stringify(violations)}`);
    const { tab } = await signInAtProvider(browser, page, signIn, issuer);
    const status = () => page.evaluate(() => {
      const card = document.querySelector('main article.card[aria-label="gw"]');
      const badge = card && card.querySelector('.badge');
      return badge ? badge.textContent.trim() : null;
    });
    await b.until('gw OK in Doctor', async () => (await status()) === 'OK', b.LIMIT * 2);
    await b.settled(page);
    b.check(page, 'sign-in from Doctor');
    return { problems, status: await status(), backAt: new URL(tab.url()).pathname };
  },

  /**
   * A server whose command is not installed, once a use has failed: its
   * card says so in each language, the library's sentence in English and
   * the page's, naming the command, in Chinese and Japanese.
   */
  async failure_on_card(browser) {
    // A client's use of `missing` (the page's tool listing, from Node)
    // fails: its card then says why.
    await fetch(new URL('api/tools/missing', BASE));
    const page = await b.openPage(browser);
    const said = {};
    for (const lang of LANGUAGES) {
      await b.openView(page, BASE, 'servers', { lang });
      said[lang] = await page.evaluate(() => {
        const heading = [...document.querySelectorAll('main h2')].find(h => h.textContent.trim() === 'missing');
        const error = heading && heading.closest('article').querySelector('p.error');
        return error ? error.textContent.trim() : null;
      });
      if (!said[lang]) b.fail(`the card of missing shows no failure in ${lang}`);
    }
    const listed = await page.evaluate(async () => (await fetch('/api/servers')).json());
    const missing = listed.servers.find(s => s.name === 'missing');
    b.check(page, 'a failure on a card');
    return { said, error: missing.error, errorKind: missing.errorKind };
  },

  /**
   * A remote server that needs an OAuth sign-in (ISSUER's, a real
   * oidc-provider): its card offers Sign in; the click opens the provider's
   * page in a new tab (and shows it as a link), the user logs in and
   * consents there, the browser goes back to the gateway's loopback
   * listener, and the card turns to Running with a Sign out button.
   */
  async remote_sign_in(browser) {
    const issuer = process.env.ISSUER;
    // A client's use of gw (here the page's own tool listing, from Node)
    // meets its 401: its card then says it needs a sign-in.
    await fetch(new URL('api/tools/gw', BASE));
    const page = await b.openPage(browser);
    await b.openView(page, BASE, 'servers');
    const signIn = await b.button(page, 'Sign in to gw');
    const violations = await b.axeViolations(page);
    if (violations.length) b.fail(`axe finds on the card with Sign in: ${JSON.stringify(violations)}`);
    const { tab, linked } = await signInAtProvider(browser, page, signIn, issuer);
    const status = () => page.evaluate(() => {
      const heading = [...document.querySelectorAll('main h2')].find(h => h.textContent.trim() === 'gw');
      const badge = heading && heading.closest('article').querySelector('.badge');
      return badge ? badge.textContent.trim() : null;
    });
    await b.until('gw\'s card Running', async () => (await status()) === 'Running', b.LIMIT * 2);
    await b.button(page, 'Sign out of gw');
    await b.settled(page);
    const after = await b.axeViolations(page);
    if (after.length) b.fail(`axe finds on the signed-in card: ${JSON.stringify(after)}`);
    b.check(page, 'remote sign-in');
    return { link: linked, status: await status(), backAt: new URL(tab.url()).pathname };
  },

  /**
   * A dialog open when the route changes (the Back button) closes: it would
   * otherwise sit, modal, over the next view and make it unusable.
   */
  async dialog_and_back(browser) {
    const page = await b.openPage(browser);
    await b.openView(page, BASE, 'presets');
    await b.openView(page, BASE, 'servers');
    await (await b.button(page, 'Add server')).click();
    await page.waitForSelector('dialog[open]');
    await page.goBack();
    await b.until('the presets view', async () => (await page.evaluate(() => location.hash)) === '#/presets');
    await b.settled(page);
    const open = await page.$$eval('dialog[open]', ds => ds.map(d => d.textContent.trim().slice(0, 40)));
    if (open.length) b.fail(`after Back, a dialog is still open over the presets view: ${JSON.stringify(open)}`);
    b.check(page, 'dialog and back');
    return {};
  },

  /** Every view in every language: rendered, no console errors. */
  async all_views(browser) {
    const page = await b.openPage(browser);
    const visited = [];
    for (const lang of LANGUAGES) {
      for (const view of VIEWS) {
        await b.openView(page, BASE, view, { lang });
        const text = await page.$eval('main', m => m.innerText);
        if (!text.trim()) b.fail(`#/${view} in ${lang} shows nothing`);
        if (lang !== 'en' && !CJK[lang].test(text)) b.fail(`#/${view} in ${lang} shows no ${lang} text:\n${text}`);
        if (lang === 'en' && HAN.test(text)) b.fail(`#/${view} in English shows CJK text:\n${text}`);
        b.check(page, `#/${view} in ${lang}`);
        visited.push(`${lang}/${view}`);
      }
    }
    return { visited };
  },

  /** At 360 px wide, no view scrolls sideways (nor the add-server form). */
  async narrow(browser) {
    const page = await b.openPage(browser);
    await page.setViewport({ width: 360, height: 740 });
    const overflow = () => page.evaluate(() => {
      const doc = document.documentElement;
      const wide = [...document.querySelectorAll('body *')].filter(el => el.getBoundingClientRect().right > doc.clientWidth + 1)
        .slice(0, 3).map(el => `${el.tagName.toLowerCase()}${el.id ? '#' + el.id : ''}${el.className ? '.' + String(el.className).split(' ').join('.') : ''}`);
      return { scroll: doc.scrollWidth, client: doc.clientWidth, wide };
    });
    const widths = {};
    for (const lang of LANGUAGES) {
      for (const view of VIEWS) {
        await b.openView(page, BASE, view, { lang });
        const o = await overflow();
        widths[`${lang}/${view}`] = o.scroll;
        if (o.scroll > o.client) b.fail(`#/${view} in ${lang} at 360 px scrolls sideways (${o.scroll} > ${o.client}); too wide: ${o.wide.join(', ')}`);
      }
    }
    await openAddForm(page);
    const form = await overflow();
    if (form.scroll > form.client) b.fail(`the add-server form at 360 px scrolls sideways (${form.scroll} > ${form.client}); too wide: ${form.wide.join(', ')}`);
    b.check(page, 'narrow');
    return { widths };
  },
};

// The Home, Activity and Logs views' scenarios, and the server messages',
// live in their own files.
Object.assign(scenarios, require('./home.cjs'));
Object.assign(scenarios, require('./messages.cjs'));
Object.assign(scenarios, require('./import.cjs'));

async function main() {
  const name = process.argv[2];
  if (name === 'prepare') {
    console.log(JSON.stringify({ chromium: await b.executable() }));
    return;
  }
  const scenario = scenarios[name];
  if (!scenario) throw new b.Failure(`no scenario "${name}"; there are: ${Object.keys(scenarios).join(', ')}`);
  const browser = await b.launch();
  try {
    const facts = await scenario(browser);
    console.log(JSON.stringify(facts || {}));
  } finally {
    await browser.close();
  }
}

main().catch(error => {
  console.error(error instanceof b.Failure ? `scenario failed: ${error.message}` : error.stack || String(error));
  process.exit(1);
});
