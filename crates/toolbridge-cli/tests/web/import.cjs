// Importing another application's MCP config from the Servers view
// (issue 29). Run by scenarios.cjs like its own; environment as there.
'use strict';

const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const b = require('./browser.cjs');

const BASE = process.env.BASE_URL;
const CONFIG = process.env.CONFIG;
const TOOLBRIDGE = process.env.TOOLBRIDGE;

module.exports = {
  /**
   * Import from another application's config file (a Claude Desktop
   * `claude_desktop_config.json` picked with the file field): the preview
   * lists its servers, secrets masked, the one the config already has
   * disabled; the one left unticked is not added, the ticked one is. A
   * foreign page's import of the same file is refused, nothing written.
   */
  async import_servers(browser) {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'web-import-'));
    const file = path.join(dir, 'claude_desktop_config.json');
    fs.writeFileSync(file, JSON.stringify({ mcpServers: {
      'imported-echo': { command: TOOLBRIDGE, args: ['example-server'] },
      example: { command: TOOLBRIDGE, args: ['example-server', '--other'] },
      'remote-docs': { url: 'https://docs.example.com/mcp?token=SECRET-29-URL', headers: { Authorization: 'Bearer SECRET-29-HEADER' } },
    } }, null, 2));
    const text = fs.readFileSync(file, 'utf8');
    // A foreign page first: refused, nothing written.
    const before = fs.readFileSync(CONFIG, 'utf8');
    const foreign = await fetch(new URL('api/import', BASE), {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', 'X-Toolbridge-Request': '1', Origin: 'http://evil.example.com' },
      body: JSON.stringify({ fileName: 'claude_desktop_config.json', text, servers: ['imported-echo'] }),
    });
    if (fs.readFileSync(CONFIG, 'utf8') !== before) b.fail('a foreign page\'s import changed the config');
    const page = await b.openPage(browser);
    await b.openView(page, BASE, 'servers');
    await (await b.button(page, 'Import servers from another app')).click();
    const dialog = await page.waitForSelector('dialog[open]');
    const input = await b.field(page, 'Config file', { within: 'dialog[open]' });
    await input.uploadFile(file);
    const box = (name) => b.field(page, `Import ${name}`, { within: 'dialog[open]' });
    const state = async (name) => (await box(name)).evaluate(el => ({ checked: el.checked, disabled: el.disabled }));
    const shown = { 'imported-echo': await state('imported-echo'), example: await state('example'), 'remote-docs': await state('remote-docs') };
    const dialogText = await dialog.evaluate(d => d.innerText);
    const violations = await b.axeViolations(page);
    if (violations.length) b.fail(`axe on the import preview: ${JSON.stringify(violations)}`);
    await (await box('remote-docs')).click();
    await (await b.button(page, 'Import chosen servers', { within: 'dialog[open]' })).click();
    await b.until('imported-echo in the config', () => b.servers(CONFIG)['imported-echo']);
    await page.waitForFunction(() => !document.querySelector('dialog[open]'));
    await b.until('imported-echo listed on the page', async () =>
      (await page.$eval('main', m => m.innerText)).includes('imported-echo'));
    await b.settled(page);
    b.check(page, 'import');
    fs.rmSync(dir, { recursive: true, force: true });
    return { foreignStatus: foreign.status, shown, masked: !/SECRET-29/.test(dialogText), dialogText };
  },
};
