// The server's own messages in the page's language (issue 29): doctor's
// fixes and the presets' descriptions come from the server as data (a fix's
// kind and values, a preset's id) and are said from the page's strings.
// Run by scenarios.cjs like its own; environment as there.
'use strict';

const b = require('./browser.cjs');

const BASE = process.env.BASE_URL;
const HAN = /[\u4e00-\u9fff]/;
const KANA = /[\u3040-\u30ff]/;

/** The Doctor view's fix lines of `server`'s card, once its check is shown. */
async function fixLines(page, server) {
  await page.waitForSelector(`main article.card[aria-label="${server}"] li`);
  return page.$$eval(`main article.card[aria-label="${server}"] li > p:nth-of-type(2)`, ps => ps.map(p => p.textContent.trim()));
}

/** The visible message `control` is described by, once it is aria-invalid. */
async function errorOf(page, control) {
  const handle = await page.waitForFunction(el => {
    if (el.getAttribute('aria-invalid') !== 'true') return null;
    const ids = (el.getAttribute('aria-describedby') || '').split(/\s+/).filter(Boolean);
    return ids.map(id => document.getElementById(id)).filter(e => e && e.getClientRects().length)
      .map(e => e.textContent.trim()).filter(Boolean).join(' ') || null;
  }, {}, control).catch(() => null);
  if (!handle) b.fail('the field is not aria-invalid with a visible message');
  return handle.jsonValue();
}

module.exports = {
  /**
   * The add-server form's errors the server finds (a stdio server without
   * its command), at the field, in English, Chinese and Japanese; nothing
   * written.
   */
  async form_errors_in_each_language(browser) {
    const page = await b.openPage(browser, { allowStatus: [422] });
    const said = {};
    for (const lang of ['en', 'zh', 'ja']) {
      const L = await b.translator(BASE, lang);
      await b.openView(page, BASE, 'servers', { lang });
      await (await b.button(page, L('Add server'))).click();
      await b.typeInto(await b.field(page, L('Name')), `web-said-${lang}`);
      await b.choose(await b.field(page, L('Transport')), 'stdio');
      await (await b.button(page, L('Save'))).click();
      said[lang] = await errorOf(page, await b.field(page, L('Command')));
      await page.keyboard.press('Escape');
    }
    b.check(page, 'the form errors');
    return { said };
  },


  /**
   * Doctor's fixes for a missing command (`missing`) and an unset variable
   * (`keyless`) in English, Chinese and Japanese: English word for word
   * what the CLI says (the findings' `fix`), the others in their language
   * with the command and the variable in them; a preset's description in
   * each language.
   */
  async server_messages(browser) {
    const page = await b.openPage(browser);
    const shown = {};
    for (const lang of ['en', 'zh', 'ja']) {
      await b.openView(page, BASE, 'doctor', { lang });
      shown[lang] = { missing: await fixLines(page, 'missing'), keyless: await fixLines(page, 'keyless') };
    }
    // What the server said, in English (the CLI's sentences).
    const report = await page.evaluate(async () => (await fetch('/api/doctor', {
      method: 'POST', headers: { 'X-Toolbridge-Request': '1' } })).json());
    const said = {};
    for (const f of report.findings) (said[f.server] = said[f.server] || []).push(f.fix);
    for (const server of ['missing', 'keyless']) {
      const want = (said[server] || []).map(fix => `Fix: ${fix}`);
      if (JSON.stringify(shown.en[server]) !== JSON.stringify(want)) {
        b.fail(`the English fix of ${server} on the page is ${JSON.stringify(shown.en[server])}, the CLI's ${JSON.stringify(want)}`);
      }
      for (const lang of ['zh', 'ja']) {
        const text = shown[lang][server].join(' ');
        if (!HAN.test(text) || (lang === 'ja' && !KANA.test(text))) b.fail(`the ${lang} fix of ${server} is not in ${lang}: ${text}`);
        if (shown.en[server].some(line => text.includes(line.replace(/^Fix: /, '')))) b.fail(`the ${lang} fix of ${server} is the English one: ${text}`);
      }
    }
    const descriptions = {};
    for (const lang of ['en', 'zh', 'ja']) {
      await b.openView(page, BASE, 'presets', { lang });
      descriptions[lang] = await page.$$eval('main article.card', cards => {
        const card = cards.find(c => c.querySelector('h3').textContent.trim() === 'Time');
        return card ? card.querySelector('h3 ~ p:not(.muted), .row ~ p:not(.muted)').textContent.trim() : null;
      });
    }
    b.check(page, 'the server messages');
    return { shown, said, descriptions };
  },
};
