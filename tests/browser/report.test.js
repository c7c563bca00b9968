// report.test.js — the index.html that `marple display` writes, in Chromium:
// opens with no error and no network, shows every section of the capture
// with its metadata, each picture loaded inline (the real renderers built
// here), links that point at files that exist, and hostile names from the
// data shown as text, never run.
'use strict';
const { launch, open, pass, fail, check, checkNoErrors, checkNoRequests, run, BIN, TOP } = require('./lib.js');
const { spawnSync } = require('child_process');
const fs = require('fs');
const os = require('os');
const path = require('path');

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'marple-report-'));
const hostile = '<img src=x onerror=alert(1)> & "q"';

run('report', async () => {
  // The bundled sample (callstack, cpusched, disklat) plus a section whose
  // interface and host are markup.
  const cap = path.join(dir, 'cap <&> x.marple');
  const evil = JSON.stringify({ marple: 1, interface: hostile, datatype: 'stack', start_ns: 1000000000,
    wall_ns: 1795262401000000000, clock: 'monotonic', host: '<script>alert(2)</script>', units: { weight: 'samples' } });
  fs.writeFileSync(cap, fs.readFileSync(path.join(TOP, 'tests', 'data', 'sample.marple')) +
    evil + '\n3#a;b<script>alert(3)</script>;c\n{"trailer":1,"end_ns":2000000000,"records":1,"lost":0,"dropped":0,"ended":"signal"}\n');
  const out = path.join(dir, 'rep ;$x');
  const env = Object.assign({}, process.env, { XDG_STATE_HOME: path.join(dir, 'state') });
  delete env.MARPLE_LIBEXEC; delete env.DISPLAY; delete env.WAYLAND_DISPLAY;
  const r = spawnSync(path.join(BIN, 'marple'), ['display', '-n', '-i', cap, '-o', out], { env });
  const index = path.join(out, 'index.html');
  check('report: marple display writes index.html', fs.existsSync(index), String(r.stderr));
  check('report: prints its path', String(r.stdout).trim() === index, String(r.stdout));

  const browser = await launch();
  try {
    const page = await open(browser, index);
    const sections = await page.$$eval('section.sec', s => s.map(e => ({
      iface: e.dataset.interface, dt: e.dataset.datatype,
      pics: e.querySelectorAll('iframe.pic').length, errs: e.querySelectorAll('.err').length })));
    check('report: one block per section of the capture', sections.length === 4, JSON.stringify(sections));
    check('report: every section shows a picture or says why not',
      sections.every(s => s.pics + s.errs > 0), JSON.stringify(sections));
    check('report: hostile interface name shown as text', sections[3] && sections[3].iface === hostile,
      sections[3] && sections[3].iface);
    check('report: metadata: capture file name as text', (await page.textContent('#capture-file')) === cap);
    check('report: metadata: hosts as text', (await page.textContent('#capture-host')) === 'sample, <script>alert(2)</script>',
      await page.textContent('#capture-host'));
    check('report: metadata: section count', (await page.textContent('#capture-sections')) === '4');
    check('report: the section table lists all four', (await page.$$('table.secs tr')).length === 5);

    // Scroll every picture into view (they load lazily) and check what loaded.
    const frames = await page.$$('iframe.pic');
    let loaded = 0, empty = [];
    for (const f of frames) {
      await f.scrollIntoViewIfNeeded();
      const fr = await f.contentFrame();
      let n = 0;
      for (let k = 0; k < 50 && fr; k++) {
        n = await fr.evaluate(() => document.documentElement ? document.documentElement.querySelectorAll('*').length : 0)
          .catch(() => 0);
        if (n > 3) break;
        await page.waitForTimeout(100);
      }
      if (n > 3) loaded++; else empty.push(await f.getAttribute('src'));
    }
    check(`report: every inline picture loads (${loaded} of ${frames.length})`, frames.length > 0 && empty.length === 0,
      'empty: ' + empty.join(' '));
    const fg = await page.$('iframe[src$="-flamegraph.svg"]');
    if (fg) {
      const fr = await fg.contentFrame();
      const hasSvg = await fr.evaluate(() => document.documentElement.nodeName.toLowerCase() === 'svg');
      check('report: the flame graph is the interactive SVG itself', hasSvg);
    } else {
      pass('report: no flame graph renderer built here (skipped)');
    }
    // the event timeline's frame takes the timeline's height: the sample's
    // two CPU tracks, not 620 px with ~400 px blank under them
    const ep = await page.$('iframe[src$="-plot.html"]');
    let epH = 0;
    for (let k = 0; k < 50 && ep; k++) {
      epH = await ep.evaluate(f => f.getBoundingClientRect().height);
      if (epH < 600) break;
      await page.waitForTimeout(100);
    }
    check(`report: the event timeline's frame fits it (${epH} px)`, ep && epH > 80 && epH < 200, String(epH));
    const links = await page.$$eval('a.file', a => a.map(x => x.getAttribute('href')));
    const missing = links.filter(h => !fs.existsSync(path.join(out, decodeURIComponent(h))));
    check(`report: links point at files that exist (${links.length})`, missing.length === 0, missing.join(' '));
    const pics = await page.$$eval('iframe.pic', a => a.map(x => x.getAttribute('src')));
    const missingPics = pics.filter(h => !fs.existsSync(path.join(out, decodeURIComponent(h))));
    check('report: inline pictures are files beside the page', missingPics.length === 0, missingPics.join(' '));

    checkNoErrors('report: no script error and no alert from the data', page);
    checkNoRequests('report: no network request', page);
    console.log(`# report: opened in ${page.marpleLoadMs} ms`);
  } finally {
    await browser.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
