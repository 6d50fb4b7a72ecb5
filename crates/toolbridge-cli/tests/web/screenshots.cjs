// Screenshots of the settings page's main views in en, zh and ja, for the
// docs (scripts/screenshots.sh serves a demo config and runs this; CI does
// not). Environment: BASE_URL as for scenarios.cjs; NODE_DEPS (the
// TypeScript MCP SDK's folder, .deps/node) for the client the Home and
// Activity shots show connected and calling a slow tool.
//
//   node screenshots.cjs OUT_DIR
'use strict';

const path = require('node:path');
const { createRequire } = require('node:module');
const b = require('./browser.cjs');

const BASE = process.env.BASE_URL;

/** Each shot: its file name and how to bring the page there. */
const SHOTS = [
  ['servers', async (page, L, lang) => b.openView(page, BASE, 'servers', { lang })],
  ['add-server', async (page, L, lang) => {
    await b.openView(page, BASE, 'servers', { lang });
    await (await b.button(page, L('Add server'))).click();
    await b.typeInto(await b.field(page, L('Name')), 'time');
    await b.typeInto(await b.field(page, L('Command')), 'uvx');
    await b.fillList(await b.field(page, L('Arguments')), ['mcp-server-time']);
  }],
  ['presets', async (page, L, lang) => b.openView(page, BASE, 'presets', { lang })],
  // The tools view at 1280 px (the list beside the try-it pane with an
  // image result) and at 390 px (one column, scrolled to the result).
  ['tools', async (page, L, lang) => tryImage(page, L, lang), { width: 1280, height: 800 }],
  ['tools-390', async (page, L, lang) => {
    await tryImage(page, L, lang);
    await page.evaluate(() => document.querySelector('main img').scrollIntoView({ block: 'center' }));
  }, { width: 390, height: 844 }],
  // The Import dialog with a Claude Desktop file's servers previewed.
  ['import', async (page, L, lang) => {
    await b.openView(page, BASE, 'servers', { lang });
    await (await b.button(page, L('Import servers from another app'))).click();
    await (await b.field(page, L('Config file'), { within: 'dialog[open]' })).uploadFile(claudeDesktopFile());
    await page.waitForSelector('dialog[open] input[type="checkbox"]');
  }, { width: 1280, height: 800 }],
  // At 390 px the navigation is a menu: shown open.
  ['menu-390', async (page, L, lang) => {
    await b.openView(page, BASE, 'servers', { lang });
    await (await b.button(page, L('Menu'))).click();
    await page.waitForSelector('#menu[aria-expanded="true"]');
  }, { width: 390, height: 844 }],
];

/**
 * Doctor's findings with their fixes in the page's language, for a "notes"
 * server (added last, through the API, so the other shots show the demo
 * config) whose program is not installed.
 */
async function doctor(page, lang) {
  await b.openView(page, BASE, 'doctor', { lang });
  await page.waitForSelector('main article.card[aria-label="notes"] li');
  await page.evaluate(() => document.querySelector('main article.card[aria-label="notes"]').scrollIntoView({ block: 'center' }));
}

/** A Claude Desktop config with two servers, in a temp folder (once). */
function claudeDesktopFile() {
  const fs = require('node:fs');
  const os = require('node:os');
  const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'shots-import-')), 'claude_desktop_config.json');
  fs.writeFileSync(file, JSON.stringify({ mcpServers: {
    filesystem: { command: 'npx', args: ['-y', '@modelcontextprotocol/server-filesystem@2026', '/home/me/notes'] },
    github: { command: 'docker', args: ['run', '-i', '--rm', '-e', 'GITHUB_PERSONAL_ACCESS_TOKEN', 'ghcr.io/github/github-mcp-server'],
      env: { GITHUB_PERSONAL_ACCESS_TOKEN: 'ghp_example' } },
    example: { command: 'toolbridge', args: ['example-server'] },
  } }, null, 2));
  return file;
}

/** Opens example's tiny_image and runs it until its image shows. */
async function tryImage(page, L, lang) {
  await b.openView(page, BASE, 'tools/example/tiny_image', { lang });
  await (await b.button(page, L('Run'))).click();
  await page.waitForFunction(() => [...document.querySelectorAll('main img')].some(i => i.naturalWidth > 0));
}

/** The browser's size for the shots that do not name one. */
const VIEWPORT = { width: 840, height: 600 };

/** The views shot at 1280 and 390 px: `<name>-<lang>-<width>.png`. */
const WIDE_AND_NARROW = [
  ['home', async (page, lang) => b.openView(page, BASE, 'home', { lang })],
  ['activity', async (page, lang) => {
    await b.openView(page, BASE, 'activity', { lang });
    // The gateway notes a call's progress for the page only while the page
    // watches Activity: the slow call starts once it does.
    busy.startSlow();
    await page.waitForSelector('main progress[value]');
  }],
  ['logs', async (page, lang) => b.openView(page, BASE, 'logs', { lang })],
  ['presets-grid', async (page, lang) => b.openView(page, BASE, 'presets', { lang })],
];

/** A TypeScript SDK client, connected, with a long slow call under way. */
async function busyClient() {
  const sdk = createRequire(path.resolve(process.env.NODE_DEPS, 'package.json'));
  const { Client } = sdk('@modelcontextprotocol/sdk/client/index.js');
  const { StreamableHTTPClientTransport } = sdk('@modelcontextprotocol/sdk/client/streamableHttp.js');
  const client = new Client({ name: 'claude-code', version: '2.1.0' }, { capabilities: {} });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${BASE}mcp`)));
  await client.callTool({ name: 'echo', arguments: { text: 'hello' } });
  let slow = null;
  const startSlow = () => {
    slow = slow || client.callTool({ name: 'slow', arguments: { ms: 600000 } }, undefined, { timeout: 700000 }).catch(() => {});
  };
  return { client, startSlow };
}

/** The connected client (main() connects it before the shots). */
let busy = null;

async function main() {
  const out = process.argv[2];
  busy = await busyClient();
  const browser = await b.launch(VIEWPORT);
  try {
    for (const lang of ['en', 'zh', 'ja']) {
      const page = await b.openPage(browser);
      // Each shot opens its view with ?lang=; labels are found in that language.
      const L = await b.translator(BASE, lang);
      for (const [name, go, viewport] of SHOTS) {
        await page.setViewport(viewport || VIEWPORT);
        await go(page, L, lang);
        await b.settled(page);
        const file = path.join(out, `${name}-${lang}.png`);
        await page.screenshot({ path: file });
        console.log(file);
        // A dialog (or the menu) stays open across a route change: close it first.
        if (await page.$('dialog[open], #menu[aria-expanded="true"]')) await page.keyboard.press('Escape');
      }
      for (const width of [1280, 390]) {
        await page.setViewport({ width, height: width > 800 ? 800 : 844 });
        for (const [name, go] of WIDE_AND_NARROW) {
          await go(page, lang);
          await b.settled(page);
          const file = path.join(out, `${name}-${lang}-${width}.png`);
          await page.screenshot({ path: file });
          console.log(file);
        }
      }
      await page.setViewport(VIEWPORT);
      b.check(page, `screenshots in ${lang}`);
      await page.close();
    }
    const added = await fetch(new URL('api/servers', BASE), {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', 'X-Toolbridge-Request': '1' },
      body: JSON.stringify({ name: 'notes', transport: 'stdio', command: 'notes-mcp', args: ['--stdio'], env: [] }),
    });
    if (!added.ok) throw new Error(`adding the notes server: ${added.status} ${await added.text()}`);
    for (const lang of ['en', 'zh', 'ja']) {
      const page = await b.openPage(browser);
      await page.setViewport({ width: 1280, height: 800 });
      await doctor(page, lang);
      await b.settled(page);
      const file = path.join(out, `doctor-${lang}.png`);
      await page.screenshot({ path: file });
      console.log(file);
      b.check(page, `the doctor screenshot in ${lang}`);
      await page.close();
    }
  } finally {
    await browser.close();
    await busy.client.close();
  }
}

main().catch(error => {
  console.error(error.stack || String(error));
  process.exit(1);
});
