// Screenshots of the settings page's views in en, zh and ja, for the docs
// (scripts/screenshots.sh serves a demo config and runs this; CI does
// not). Every file is `<name>-<lang>-<width>.png`. Environment: BASE_URL
// as for scenarios.cjs; NODE_DEPS (the TypeScript MCP SDK's folder,
// .deps/node) for the client the Home and Activity shots show connected
// and calling a slow tool; APPS_SERVER and EXT_APPS_DEPS (the test server
// apps_server.mjs and the MCP Apps SDK's folder, .deps/ext-apps) for the
// MCP App shot.
//
//   node screenshots.cjs OUT_DIR
'use strict';

const fs = require('node:fs');
const http = require('node:http');
const os = require('node:os');
const path = require('node:path');
const { createRequire } = require('node:module');
const b = require('./browser.cjs');

const BASE = process.env.BASE_URL;

/** The browser's size at each width the shots are taken at. */
const SIZES = { 1280: { width: 1280, height: 800 }, 390: { width: 390, height: 844 } };

/**
 * The shots of the demo config: name, how to bring the page there
 * (`go(page, L, lang, width)`) and the widths it is taken at.
 */
const VIEWS = [
  ['home', async (page, L, lang) => b.openView(page, BASE, 'home', { lang }), [1280, 390]],
  ['servers', async (page, L, lang) => b.openView(page, BASE, 'servers', { lang }), [1280, 390]],
  ['add-server', async (page, L, lang) => {
    await b.openView(page, BASE, 'servers', { lang });
    await (await b.button(page, L('Add server'))).click();
    await b.typeInto(await b.field(page, L('Name')), 'time');
    await b.typeInto(await b.field(page, L('Command')), 'uvx');
    await b.fillList(await b.field(page, L('Arguments')), ['mcp-server-time']);
  }, [1280]],
  // The Import dialog with a Claude Desktop file's servers previewed.
  ['import', async (page, L, lang) => {
    await b.openView(page, BASE, 'servers', { lang });
    await (await b.button(page, L('Import servers from another app'))).click();
    await (await b.field(page, L('Config file'), { within: 'dialog[open]' })).uploadFile(claudeDesktopFile());
    await page.waitForSelector('dialog[open] input[type="checkbox"]');
  }, [1280]],
  // At 390 px the navigation is a menu: shown open.
  ['menu', async (page, L, lang) => {
    await b.openView(page, BASE, 'servers', { lang });
    await (await b.button(page, L('Menu'))).click();
    await page.waitForSelector('#menu[aria-expanded="true"]');
  }, [390]],
  // The tools list beside the try-it pane with an image result (at 390
  // px one column, scrolled to the result).
  ['tools', async (page, L, lang, width) => {
    await tryImage(page, L, lang);
    if (width < 800) await page.evaluate(() => document.querySelector('main img').scrollIntoView({ block: 'center' }));
  }, [1280, 390]],
  ['activity', async (page, L, lang) => {
    await b.openView(page, BASE, 'activity', { lang });
    // The gateway notes a call's progress for the page only while the page
    // watches Activity: the slow call starts once it does.
    busy.startSlow();
    await page.waitForSelector('main progress[value]');
  }, [1280, 390]],
  ['logs', async (page, L, lang) => b.openView(page, BASE, 'logs', { lang }), [1280, 390]],
  ['presets', async (page, L, lang) => b.openView(page, BASE, 'presets', { lang }), [1280, 390]],
  ['profiles', async (page, L, lang) => b.openView(page, BASE, 'profiles', { lang }), [1280, 390]],
  // The editor of the demo profile, scrolled to its live preview.
  ['profile-editor', async (page, L, lang) => {
    await b.openView(page, BASE, 'profiles', { lang });
    await (await page.waitForSelector('button[data-profile="demo"][data-action="edit"]')).click();
    await page.waitForSelector('.profile-editor table tr[data-tool]');
    await b.settled(page);
    await page.evaluate(() => document.querySelector('.profile-editor table').closest('section').scrollIntoView({ block: 'start' }));
  }, [1280, 390]],
];

/**
 * The shots taken once the `notes` and `tracker` servers are added
 * (through the API, so that the others show the demo config alone).
 */
const ADDED = [
  // Doctor's findings with their fixes in the page's language, for `notes`,
  // whose program is not installed.
  ['doctor', async (page, L, lang) => {
    await b.openView(page, BASE, 'doctor', { lang });
    await page.waitForSelector('main article.card[aria-label="notes"] li');
    await page.evaluate(() => document.querySelector('main article.card[aria-label="notes"]').scrollIntoView({ block: 'center' }));
  }, [1280, 390]],
  // A remote server that answered 401 with a bearer challenge: its card
  // offers Sign in.
  ['sign-in', async (page, L, lang) => {
    await b.openView(page, BASE, 'servers', { lang });
    const button = await page.waitForSelector('button[data-action="sign-in"][data-server="tracker"]');
    await button.evaluate(el => el.closest('article').scrollIntoView({ block: 'end' }));
  }, [1280]],
];

/**
 * The shot taken once the `apps` server is added, last (its card's long
 * paths are in no other shot).
 */
const APPS = [
  // The test server's MCP App, rendered under counter's result: the
  // browser is taller, to show the tool's form above it.
  ['mcp-app', async (page, L, lang) => {
    await b.openView(page, BASE, 'tools/apps/counter', { lang });
    await (await b.button(page, L('Run'))).click();
    const outer = await page.waitForSelector('iframe.mcp-app-frame');
    const sandbox = await outer.contentFrame();
    await b.until('the app to show the tool\'s result', async () => {
      const inner = sandbox.childFrames()[0];
      return inner && inner.evaluate(() => /click\(s\)/.test((document.getElementById('greeting') || {}).textContent || ''));
    });
    await b.until('the page to say the app runs', () => page.evaluate(() =>
      document.querySelector('.mcp-app [role="status"]').textContent !== ''));
    await outer.evaluate(el => el.closest('.mcp-app').scrollIntoView({ block: 'end' }));
  }, [1280], { height: 1100 }],
];

/** A Claude Desktop config with two servers, in a temp folder (once). */
function claudeDesktopFile() {
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

/**
 * A remote MCP server that wants an OAuth sign-in: every request gets 401
 * with a bearer challenge, as a protected resource answers a client
 * without a token (RFC 6750, RFC 9728's resource_metadata).
 */
async function protectedServer() {
  const server = http.createServer((request, response) => {
    request.resume();
    const { port } = server.address();
    response.writeHead(401, {
      'Content-Type': 'application/json',
      'WWW-Authenticate': `Bearer resource_metadata="http://127.0.0.1:${port}/.well-known/oauth-protected-resource"`,
    });
    response.end(JSON.stringify({ error: 'invalid_token', error_description: 'sign in first' }));
  });
  await new Promise(resolve => server.listen(0, '127.0.0.1', resolve));
  return server;
}

/** Adds a server through the page's API. */
async function addServer(record) {
  const added = await fetch(new URL('api/servers', BASE), {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', 'X-Toolbridge-Request': '1' },
    body: JSON.stringify(record),
  });
  if (!added.ok) throw new Error(`adding the ${record.name} server: ${added.status} ${await added.text()}`);
}

/** The servers as the Servers view lists them. */
async function listedServers() {
  const reply = await fetch(new URL('api/servers', BASE), { headers: { 'X-Toolbridge-Request': '1' } });
  return (await reply.json()).servers || [];
}

/**
 * Takes `shots` in en, zh and ja, each at its widths (`allowStatus` as
 * for b.openPage).
 */
async function take(browser, out, shots, allowStatus = []) {
  for (const lang of ['en', 'zh', 'ja']) {
    const page = await b.openPage(browser, { allowStatus });
    // Each shot opens its view with ?lang=; labels are found in that language.
    const L = await b.translator(BASE, lang);
    for (const [name, go, widths, size] of shots) {
      for (const width of widths) {
        await page.setViewport({ ...SIZES[width], ...size });
        await go(page, L, lang, width);
        await b.settled(page);
        // Nothing wider than the window (a table may scroll in its own box).
        const over = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
        if (over > 0) b.fail(`${name} in ${lang} at ${width} px is ${over} px wider than the window`);
        const file = path.join(out, `${name}-${lang}-${width}.png`);
        await page.screenshot({ path: file });
        console.log(file);
        // A dialog (or the menu) stays open across a route change: close it first.
        if (await page.$('dialog[open], #menu[aria-expanded="true"]')) await page.keyboard.press('Escape');
      }
    }
    b.check(page, `screenshots in ${lang}`);
    await page.close();
  }
}

async function main() {
  const out = process.argv[2];
  busy = await busyClient();
  const tracker = await protectedServer();
  const clicks = fs.mkdtempSync(path.join(os.tmpdir(), 'shots-clicks-'));
  const browser = await b.launch(SIZES[1280]);
  try {
    await take(browser, out, VIEWS);
    await addServer({ name: 'notes', transport: 'stdio', command: 'notes-mcp', args: ['--stdio'], env: [] });
    await addServer({ name: 'tracker', transport: 'http', url: `http://127.0.0.1:${tracker.address().port}/mcp` });
    // A remote server shows Sign in once it was used and met the 401: a
    // client's tools/list (after the gateway has read the new file) uses it.
    await b.until('tracker to fail for want of a sign-in', async () => {
      await busy.client.listTools().catch(() => {});
      const found = (await listedServers()).find(s => s.name === 'tracker');
      return found && found.signIn && found.signIn.needed;
    });
    // The Tools view asks each server for its tools: the two that cannot
    // start (notes, tracker) answer 502.
    await take(browser, out, ADDED, [502]);
    await addServer({ name: 'apps', transport: 'stdio', command: 'node',
      args: [process.env.APPS_SERVER, process.env.EXT_APPS_DEPS, clicks], env: [] });
    await b.until('apps to run', async () => {
      await busy.client.listTools().catch(() => {});
      const found = (await listedServers()).find(s => s.name === 'apps');
      return found && found.status === 'running';
    });
    await take(browser, out, APPS, [502]);
  } finally {
    await browser.close();
    await busy.client.close();
    tracker.close();
  }
}

main().catch(error => {
  console.error(error.stack || String(error));
  process.exit(1);
});
