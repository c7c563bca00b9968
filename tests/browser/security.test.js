// security.test.js — hostile names (frame names, comms, titles, labels with
// <script>, ]]>, quotes, control bytes, invalid UTF-8, javascript: URLs and
// template-literal breakers) rendered by every SVG/HTML renderer in the
// build, opened in Chromium and poked (mouse moves, hovers, clicks): no
// dialog fires (every payload calls alert), no injected element or event
// handler exists, no page error, no network request.
'use strict';
const { launch, pass, fail, check, run, BIN, TOP } = require('./lib.js');
const { spawnSync } = require('child_process');
const fs = require('fs');
const path = require('path');

const TITLE = '<script>alert(11)</script>]]><img src=x onerror=alert(12)>"\'\u0007';
const inputs = fs.readdirSync(path.join(TOP, 'tests/bad-input'))
  .filter(f => /^any-hostile-/.test(f)).map(f => path.join(TOP, 'tests/bad-input', f));

function renderers() {
  return fs.readdirSync(path.join(TOP, 'renderers'))
    .filter(f => /^marple-.*\.c$/.test(f)).map(f => f.replace(/\.c$/, ''))
    .filter(p => fs.existsSync(path.join(BIN, p)));
}

// Render one input; returns the output file if it is SVG or HTML, else null.
function render(prog, input, out) {
  for (const extra of [['--title', TITLE], ['-t', TITLE], []]) {
    const r = spawnSync(path.join(BIN, prog), [...extra, '-o', out, input], { timeout: 60000 });
    if (r.status === 2 && extra.length) continue;	// no such option: try the next
    if (r.status !== 0 && !fs.existsSync(out)) return null;
    // Chromium picks the parser from the extension: name the page by its content.
    const head = fs.readFileSync(out).subarray(0, 300).toString().trimStart().toLowerCase();
    const ext = /^<!doctype html|^<html/.test(head) ? '.html' : /^(<\?xml[^>]*>\s*)?(<!--[^]*?-->\s*)*(<!doctype svg[^>]*>\s*)?<svg/.test(head) ? '.svg' : null;
    if (!ext) return null;
    fs.renameSync(out, out + ext);
    return out + ext;
  }
  return null;
}

async function poke(browser, file) {
  const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
  const dialogs = [], errors = [], requests = [];
  page.on('dialog', d => { dialogs.push(d.type() + ': ' + d.message()); d.dismiss().catch(() => {}); });
  page.on('pageerror', e => errors.push(String(e)));
  page.on('request', r => { if (!r.url().startsWith('file:') && !r.url().startsWith('data:')) requests.push(r.url()); });
  await page.goto('file://' + path.resolve(file));
  // Real pointer moves over a grid (tooltips), then synthetic hovers and
  // clicks on the drawn elements (details boxes, zoom, search results).
  for (let y = 20; y < 900; y += 60)
    for (let x = 20; x < 1400; x += 90) await page.mouse.move(x, y);
  await page.evaluate(() => {
    const els = [...document.querySelectorAll('rect, g, text, path, div, span, td, li, circle, polygon')].slice(0, 400);
    for (const el of els) {
      const r = el.getBoundingClientRect();
      const o = { bubbles: true, clientX: r.x + r.width / 2, clientY: r.y + r.height / 2 };
      for (const t of ['mouseover', 'mousemove', 'mouseenter'])
        try { el.dispatchEvent(new MouseEvent(t, o)); } catch (e) {}
    }
    for (const el of els.slice(0, 60)) {
      if (el.closest('a')) continue;		// no navigation away
      try { el.dispatchEvent(new MouseEvent('click', { bubbles: true })); } catch (e) {}
    }
  });
  await page.waitForTimeout(200);
  const injected = await page.evaluate(() => {
    const bad = [];
    for (const el of document.querySelectorAll('*')) {
      const tag = el.localName;
      if (tag === 'x' || tag === 'img' || tag === 'iframe' || tag === 'object' || tag === 'embed')
        bad.push('<' + tag + '>');
      // the payload's own script element (data inside the page's scripts is
      // fine as long as it stays a string: the alert canary checks that)
      if (tag === 'script' && /^\s*alert\(\d+\)\s*$/.test(el.textContent)) bad.push('injected <script>' + el.textContent);
      for (const a of el.attributes) {
        if (/^on/i.test(a.name) && /alert\(/.test(a.value)) bad.push(tag + ' ' + a.name + '=' + a.value);
        if (/^(href|xlink:href|src|action)$/i.test(a.name) && /^\s*javascript:/i.test(a.value)) bad.push(tag + ' ' + a.name + '=' + a.value);
      }
    }
    return bad;
  });
  await page.close();
  return { dialogs, errors, requests, injected };
}

run('security', async () => {
  const progs = renderers();
  const browser = await launch();
  let pages = 0;
  try {
    for (const prog of progs) {
      for (const input of inputs) {
        const name = prog + ' ' + path.basename(input);
        const out = path.resolve(prog + '-' + path.basename(input) + '.out');
        const file = render(prog, input, out);
        if (!file) continue;		// not this renderer's datatype, or not a page
        pages++;
        const r = await poke(browser, file);
        const alerts = r.dialogs.filter(d => /^alert/.test(d) || /\d/.test(d));
        check(name + ': no script from the data runs (no alert)', alerts.length === 0, alerts.join('; '));
        check(name + ': no injected element or handler', r.injected.length === 0, r.injected.slice(0, 5).join('; '));
        check(name + ': no page error', r.errors.length === 0, r.errors.slice(0, 3).join('; '));
        check(name + ': no network request', r.requests.length === 0, r.requests.slice(0, 3).join(' '));
      }
    }
    check('security: at least one hostile page rendered and opened', pages > 0, 'no renderer produced SVG/HTML');
  } finally {
    await browser.close();
  }
});
