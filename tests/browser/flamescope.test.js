// flamescope.test.js — marple-flamescope's page in headless Chromium: the
// heat-map cells a person sees (pixels of the canvas), the flame graph after a
// click and a drag (frames and the title with the range), a shift-drag baseline
// (differential colours), the search (lit cells, share), the process/thread
// filter, the URL fragment, a hostile frame name shown as text, and the
// intervals of --every drawn on one time axis.
'use strict';
const { launch, open, check, checkNoErrors, checkNoRequests, run, BIN } = require('./lib.js');
const { execFileSync } = require('child_process');
const fs = require('fs');

// 4 s: phase_a in seconds 0-2 (tid 11), phase_b in seconds 2-4 (tid 12), one
// sample every 10 ms, none in the second half of second 1; a hostile frame in second 3.
function capture() {
  const start = 5000000000;
  let s = '{"marple":1,"interface":"callstack","datatype":"stack","timed":"stacks","start_ns":' + start + ',"units":{"weight":"samples"}}\n';
  const samples = [];
  for (let t = 0; t < 4000; t += 10) {
    if (t >= 1500 && t < 2000) continue;
    samples.push([start + t * 1e6 + 1000, t < 2000 ? 0 : 1, t < 2000 ? 11 : 12]);
    if (t >= 3000 && t < 3100) samples.push([start + t * 1e6 + 2000, 2, 12]);
  }
  const w = [0, 0, 0];
  samples.forEach(x => w[x[1]]++);
  s += w[0] + '#work;main;phase_a\n' + w[1] + '#work;main;phase_b\n' + w[2] + '#work;main;<img src=x onerror=alert(1)>\n';
  s += '{"trailer":1,"records":3}\n';
  s += '{"marple":1,"interface":"callstack","datatype":"event","timed":"samples","start_ns":' + start + '}\n';
  samples.forEach(x => { s += x[0] + ',sample,cpu0,stack=' + x[1] + ',pid=10,tid=' + x[2] + '\n'; });
  s += '{"trailer":1,"records":' + samples.length + ',"lost":0}\n';
  return s;
}

// Colour of the canvas pixel in the middle of the cell of column col, row row.
async function pixel(page, col, row) {
  return page.evaluate(([c, r]) => {
    const ctx = document.getElementById('cv').getContext('2d');
    const g = window.marpleScope.cellBox(c * window.marpleScope.rows + r);
    return Array.from(ctx.getImageData(g[0] + g[2] / 2, g[1] + g[3] / 2, 1, 1).data.slice(0, 3));
  }, [col, row]);
}
async function dragCells(page, a, b, shift) {
  const box = await page.locator('#cv').boundingBox();
  const ga = await page.evaluate(c => window.marpleScope.cellBox(c), a);
  const gb = await page.evaluate(c => window.marpleScope.cellBox(c), b);
  if (shift) await page.keyboard.down('Shift');
  await page.mouse.move(box.x + ga[0] + ga[2] / 2, box.y + ga[1] + ga[3] / 2);
  await page.mouse.down();
  await page.mouse.move(box.x + gb[0] + gb[2] / 2, box.y + gb[1] + gb[3] / 2);
  await page.mouse.up();
  if (shift) await page.keyboard.up('Shift');
}
// 70,000 stacks, one sample each, in a shuffled order: the page's arrays need 2
// and 4 bytes a value (frame ids past 65,535; a cell's first stack id), which
// the writer stores as byte planes; the page must put them back together.
function wideCapture() {
  const start = 5000000000, n = 70000;
  let s = '{"marple":1,"interface":"callstack","datatype":"stack","timed":"stacks","start_ns":' + start + ',"units":{"weight":"samples"}}\n';
  for (let i = 0; i < n; i++) s += '1#wide;main;g' + i + '\n';
  s += '{"trailer":1,"records":' + n + '}\n';
  s += '{"marple":1,"interface":"callstack","datatype":"event","timed":"samples","start_ns":' + start + '}\n';
  for (let i = 0; i < n; i++) s += (start + i * 50000) + ',sample,cpu0,stack=' + (i * 7919 % n) + ',pid=10,tid=10\n';
  return s + '{"trailer":1,"records":' + n + ',"lost":0}\n';
}
async function wideArrays(browser) {
  fs.writeFileSync('wide.marple', wideCapture());
  execFileSync(BIN + '/marple-flamescope', ['-o', 'wide.html', 'wide.marple']);
  const html = fs.readFileSync('wide.html', 'latin1');
  check('flamescope: the wide test page has 2- and 4-byte arrays', /data-w="[24]"/.test(html) && /w:4,/.test(html),
    (html.match(/w:\d,|data-w="\d"/g) || []).join(' '));
  const page = await open(browser, 'wide.html');
  await page.waitForSelector('body[data-ready="1"]', { timeout: 30000 });
  await page.fill('#q', '^g(69998|12345)$');
  const share = await page.textContent('#share');
  check('flamescope: 4-byte frame ids and stack ids read back (search finds g69998 and g12345)',
    /matched: 2 samples of 70,000/.test(share), share);
  // sample i (at i * 50 us) has stack i * 7919 % 70000: the first 20 ms cell holds samples 0-399
  await page.fill('#q', '');
  await dragCells(page, 0, 0);
  const title = await page.textContent('#fgtitle');
  const names = await frameNames(page);
  check('flamescope: a cell of the wide page has its 400 samples',
    title.startsWith('0 s \u2013 20 ms \u00b7 400 samples') && names.includes('wide'), title + ' ' + names.length);
  checkNoErrors('flamescope: the wide page loads without errors', page);
}
const frameNames = page => page.$$eval('#fg .fr', els => els.map(e => e.textContent));

// A small capture as a person sees it: 5 s in which every 20 ms cell holds 9 or
// 10 samples (rows alternate; 99 Hz on 5 CPUs), one stack 400 frames deep.
// Scaled from 0, 9 and 10 were both dark red; scaled from the lightest cell
// they differ, and a legend says what the colours mean.  Drawn with its root
// at the bottom, the tower put the root 6,800 px below the top of the page.
function smallCapture() {
  const start = 5000000000, tower = [];
  for (let i = 0; i < 400; i++) tower.push(i ? 'f' + i : 'tower');
  let s = '{"marple":1,"interface":"callstack","datatype":"stack","timed":"stacks","start_ns":' + start + ',"units":{"weight":"samples"}}\n';
  const samples = [];
  for (let cell = 0; cell < 250; cell++)
    for (let k = 0; k < (cell % 2 ? 10 : 9); k++) samples.push(start + cell * 20e6 + k * 1e6 + 500);
  s += samples.length + '#' + tower.join(';') + '\n{"trailer":1,"records":1}\n';
  s += '{"marple":1,"interface":"callstack","datatype":"event","timed":"samples","start_ns":' + start + '}\n';
  samples.forEach(t => { s += t + ',sample,cpu0,stack=0,pid=10,tid=10\n'; });
  return s + '{"trailer":1,"records":' + samples.length + ',"lost":0}\n';
}
async function smallAndDeep(browser) {
  fs.writeFileSync('small.marple', smallCapture());
  execFileSync(BIN + '/marple-flamescope', ['-o', 'small.html', 'small.marple']);
  const page = await open(browser, 'small.html');
  await page.waitForSelector('body[data-ready="1"]', { timeout: 30000 });
  const nine = await pixel(page, 0, 0), ten = await pixel(page, 0, 1);
  const diff = Math.max(...nine.map((v, i) => Math.abs(v - ten[i])));
  check('flamescope: cells of 9 and 10 samples differ in colour (' + nine + ' / ' + ten + ')', diff >= 100, 'largest channel difference ' + diff);
  const scale = await page.textContent('#scale').catch(() => '(no #scale element)');
  check('flamescope: a legend gives the colours\' range', /^by quantile: 9.*10 samples a cell$/.test(scale), scale);
  const root = await page.locator('#fg .fr', { hasText: /^tower$/ }).boundingBox();
  const vh = page.viewportSize().height;
  check('flamescope: a 400-frame tower\'s root is in view without scrolling', root && root.y >= 0 && root.y + root.height <= vh,
    root ? 'root at y ' + Math.round(root.y) + ' in a ' + vh + ' px window' : 'no root frame');
  checkNoErrors('flamescope: the small page loads without errors', page);
}

// Three intervals as marple-callstack --every 1 --timed writes them, the third
// after a second with no capture; each section numbers its stacks its own way.
// Second 0: interval_one in rows 0-4 and shared in rows 25-26; second 1:
// interval_two in rows 0-6; second 2: nothing; second 3: interval_three in rows
// 0-8 and shared in rows 25-27.
function intervalsCapture() {
  const start = 5000000000;
  let s = '';
  const section = (t, stacks, samples) => {
    s += '{"marple":1,"interface":"callstack","datatype":"stack","timed":"stacks","start_ns":' + t + ',"units":{"weight":"samples"}}\n';
    stacks.forEach(x => { s += x[1] + '#work;main;' + x[0] + '\n'; });
    s += '{"trailer":1,"records":' + stacks.length + ',"end_ns":' + (t + 1e9) + ',"ended":"interval"}\n';
    s += '{"marple":1,"interface":"callstack","datatype":"event","timed":"samples","start_ns":' + t + '}\n';
    samples.forEach(x => { s += (t + x[0] * 20e6 + 1000) + ',sample,cpu0,stack=' + x[1] + ',pid=10,tid=10\n'; });
    s += '{"trailer":1,"records":' + samples.length + ',"lost":0,"ended":"interval"}\n';
  };
  const rowsOf = (from, n, stack) => Array.from({ length: n }, (_, i) => [from + i, stack]);
  section(start, [['interval_one', 5], ['shared', 2]], rowsOf(0, 5, 0).concat(rowsOf(25, 2, 1)));
  section(start + 1e9, [['interval_two', 7]], rowsOf(0, 7, 0));
  section(start + 3e9, [['shared', 3], ['interval_three', 9]], rowsOf(0, 9, 1).concat(rowsOf(25, 3, 0)));
  return s;
}
async function intervals(browser) {
  fs.writeFileSync('every.marple', intervalsCapture());
  execFileSync(BIN + '/marple-flamescope', ['-o', 'every.html', 'every.marple']);
  const page = await open(browser, 'every.html');
  await page.waitForSelector('body[data-ready="1"]', { timeout: 30000 });
  const status = await page.textContent('#status');
  check('flamescope: 3 intervals: the status counts every interval\'s samples', /^26 samples from 3 sections \u00b7 4 columns/.test(status), status);
  const two = await pixel(page, 1, 3), gap = await pixel(page, 2, 3), three = await pixel(page, 3, 8), after = await pixel(page, 3, 9);
  check('flamescope: 3 intervals: the 2nd and 3rd intervals\' cells are coloured, the second without capture is white',
    two.join() !== '255,255,255' && three.join() !== '255,255,255' && gap.join() === '255,255,255' && after.join() === '255,255,255',
    'second 1 ' + two + ', second 2 ' + gap + ', second 3 ' + three + ' / ' + after);
  const rows = await page.evaluate(() => window.marpleScope.rows);
  await dragCells(page, 3 * rows, 3 * rows + 49);
  const title = await page.textContent('#fgtitle'), names = await frameNames(page);
  check('flamescope: 3 intervals: second 3 is the 3rd interval\'s samples',
    title.startsWith('3 s \u2013 4 s \u00b7 12 samples') && names.includes('interval_three') && names.includes('shared') &&
    !names.includes('interval_one'), title + ' ' + names.join('|'));
  await dragCells(page, 0, 4 * rows - 1);
  const all = await frameNames(page);
  check('flamescope: 3 intervals: a stack of two intervals is one frame of the flame graph',
    all.filter(n => n === 'shared').length === 1 && all.includes('interval_two'), all.join('|'));
  checkNoErrors('flamescope: the intervals page loads without errors', page);
}

run('flamescope', async () => {
  fs.writeFileSync('fs.marple', capture());
  execFileSync(BIN + '/marple-flamescope', ['-o', 'fs.html', 'fs.marple']);
  const browser = await launch();
  try {
    let page = await open(browser, 'fs.html');
    await page.waitForSelector('body[data-ready="1"]', { timeout: 10000 });
    checkNoErrors('flamescope: page loads without errors', page);
    check('flamescope: status counts the samples', /^360 samples/.test(await page.textContent('#status')), await page.textContent('#status'));
    const full = await pixel(page, 0, 10), empty = await pixel(page, 1, 30), busy = await pixel(page, 1, 10);
    check('flamescope: a cell with samples is coloured, one without is white',
      full.join() !== '255,255,255' && busy.join() !== '255,255,255' && empty.join() === '255,255,255',
      'full ' + full + ', empty ' + empty + ', busy ' + busy);
    let names = await frameNames(page);
    check('flamescope: without a selection the flame graph shows everything',
      names.includes('phase_a') && names.includes('phase_b'), names.join('|'));
    const rows = await page.evaluate(() => window.marpleScope.rows);
    // click one cell of second 0: 2 samples (20 ms rows, one sample every 10 ms)
    await dragCells(page, 5, 5);
    names = await frameNames(page);
    let title = await page.textContent('#fgtitle');
    check('flamescope: a click shows the flame graph of that cell', names.includes('phase_a') && !names.includes('phase_b'), names.join('|'));
    check('flamescope: the title says the cell\'s time and samples', title.startsWith('100 ms \u2013 120 ms \u00b7 2 samples'), title);
    // drag from second 1 into second 2
    await dragCells(page, rows + 10, 2 * rows + 9);
    names = await frameNames(page);
    title = await page.textContent('#fgtitle');
    check('flamescope: a drag across columns shows both phases', names.includes('phase_a') && names.includes('phase_b'), names.join('|'));
    check('flamescope: the title has the dragged range', title.startsWith('1.2 s \u2013 2.2 s \u00b7 50 samples'), title);
    // selection in second 0 against a baseline in second 2: phase_a grew (red), phase_b shrank (blue)
    await dragCells(page, 0, rows - 1);
    await dragCells(page, 2 * rows, 3 * rows - 1, true);
    title = await page.textContent('#fgtitle');
    const colour = n => page.$eval('#fg .fr >> text="' + n + '"', e => getComputedStyle(e).backgroundColor);
    const ca = await colour('phase_a'), cb = await colour('phase_b');
    const rgb = c => c.match(/\d+/g).map(Number);
    check('flamescope: shift-drag sets a baseline named in the title', /vs baseline 2 s \u2013 3 s \u00b7 100 samples/.test(title), title);
    check('flamescope: differential colours: grown red, shrunk blue',
      rgb(ca)[0] > rgb(ca)[2] + 50 && rgb(cb)[2] > rgb(cb)[0] + 50, ca + ' / ' + cb);
    // search: lit cells where the hostile frame was sampled (second 3, first 100 ms), and its share
    await page.keyboard.press('Escape');
    await page.fill('#q', 'onerror');
    const share = await page.textContent('#share');
    check('flamescope: search shows the matched share', /matched: 10 samples of 360 \(2\.8%\)/.test(share), share);
    const litPx = await pixel(page, 3, 2), unlit = await pixel(page, 3, 10);
    check('flamescope: search lights the cells where it matched', litPx.join() === '190,0,255' && unlit.join() !== '190,0,255',
      'lit ' + litPx + ', unlit ' + unlit);
    names = await frameNames(page);
    check('flamescope: a hostile frame name is shown as text', names.includes('<img src=x onerror=alert(1)>'), names.join('|'));
    // filter to thread 11: phase_b (thread 12) is gone from the flame graph and its cells
    await page.fill('#q', '');
    await page.selectOption('#flt', 't11');
    names = await frameNames(page);
    const gone = await pixel(page, 3, 10);
    check('flamescope: filtering to one thread keeps only its stacks and cells',
      names.includes('phase_a') && !names.includes('phase_b') && gone.join() === '255,255,255', names.join('|') + ' ' + gone);
    // the fragment keeps the selection: reopen the page with it
    await page.selectOption('#flt', '');
    await dragCells(page, rows + 10, 2 * rows + 9);
    const url = await page.evaluate(() => location.href);
    check('flamescope: the URL fragment holds the selection', /#sel=\d+-\d+/.test(url), url);
    const page2 = await browser.newPage();
    await page2.goto(url);
    await page2.waitForSelector('body[data-ready="1"]', { timeout: 10000 });
    const title2 = await page2.textContent('#fgtitle');
    check('flamescope: a link with the fragment reopens the selection', title2.startsWith('1.2 s \u2013 2.2 s \u00b7 50 samples'), title2);
    checkNoErrors('flamescope: no script errors (no alert from the hostile name)', page);
    checkNoRequests('flamescope: no network requests', page);
    await wideArrays(browser);
    await smallAndDeep(browser);
    await intervals(browser);
  } finally {
    await browser.close();
  }
});
