// heatmap.test.js — marple-heatmap's SVG in headless Chromium: hovering a
// bucket shows a tooltip with its range and count, clicking it shows the
// distribution details box naming the processes that contributed.
'use strict';
const { launch, open, check, checkNoErrors, checkNoRequests, run, BIN } = require('./lib.js');
const { execFileSync } = require('child_process');
const fs = require('fs');

run('heatmap', async () => {
  // Events every 0.25 s from "ticker", plus two from a hostile name in one bucket.
  let s = '{"marple":1,"interface":"synth","datatype":"event","start_ns":1000000000,"wall_ns":1795262401000000000}\n';
  for (let i = 0; i < 40; i++) s += (1000000000 + i * 250000000) + ',tick,cpu0,comm=ticker,pid=42\n';
  s += '3000000001,tick,cpu1,comm=<b>&amp;"x\',pid=7\n3000000002,tick,cpu1,comm=<b>&amp;"x\',pid=7\n';
  fs.writeFileSync('ev.marple', s);
  execFileSync(BIN + '/marple-heatmap', ['--highlight', 'ticker', '-o', 'ev.svg', 'ev.marple']);
  const browser = await launch();
  try {
    const page = await open(browser, 'ev.svg');
    checkNoErrors('heatmap: page loads without errors', page);
    const cell = page.locator('#hm-cells rect[data-c="2"][data-r="0"]');
    const box = await cell.boundingBox();
    await page.mouse.move(box.x + box.width / 2, box.y + box.height / 2);
    const tipVis = await page.getAttribute('#marple-tip', 'visibility');
    const tip = await page.textContent('#marple-tip text');
    check('heatmap: hover shows a tooltip', tipVis === 'visible', 'visibility ' + tipVis);
    check('heatmap: tooltip has time, offset range and count',
      /time 2\u20133 s/.test(tip) && /offset 0\u201320 ms/.test(tip) && /count 3 events/.test(tip), tip);
    await page.mouse.click(box.x + box.width / 2, box.y + box.height / 2);
    const det = await page.textContent('#hm-details');
    check('heatmap: click shows the distribution details', /Distribution details/.test(det), det);
    check('heatmap: details name the processes and counts',
      /<b>&amp;"x': 2 \(66\.7%\)/.test(det) && /ticker: 1 \(33\.3%\)/.test(det), det);
    // clicking a name in the details shows only the buckets it contributed to
    await page.click('#hm-details .hm-ditem[data-id="1"]');
    const faded = await page.$$eval('#hm-cells rect[data-n]', rs => rs.filter(r => r.getAttribute('opacity') === '0.12').length);
    const lit = await page.$$eval('#hm-cells rect[data-n]', rs => rs.filter(r => !r.hasAttribute('opacity')).length);
    check('heatmap: clicking a name in the details isolates its buckets', faded === 39 && lit === 1, faded + ' faded, ' + lit + ' lit');
    await page.click('#hm-details .hm-ditem[data-id="1"]');
    const faded2 = await page.$$eval('#hm-cells rect[opacity]', rs => rs.length);
    check('heatmap: clicking it again shows all buckets', faded2 === 0, faded2 + ' still faded');
    await page.mouse.move(5, 5);
    check('heatmap: tooltip hides off the map',
      (await page.getAttribute('#marple-tip', 'visibility')) === 'hidden');
    checkNoRequests('heatmap: no network requests', page);
    if (process.env.SHOT) await page.screenshot({ path: process.env.SHOT });

    // A latency heat map of points: the tooltip gives the value range in the header's unit.
    fs.writeFileSync('lat.marple', '{"marple":1,"interface":"memtime","datatype":"point","units":{"x":"s","y":"MiB"}}\n' +
      '0.5,15,bash,pid=1\n0.7,12,bash,pid=1\n1.5,95,python3,pid=2\n');
    execFileSync(BIN + '/marple-heatmap', ['--stepsec', '1', '--maxlat', '100', '--rows', '10', '-o', 'lat.svg', 'lat.marple']);
    const p2 = await open(browser, 'lat.svg');
    const c2 = await p2.locator('#hm-cells rect[data-c="0"][data-r="1"]').boundingBox();
    await p2.mouse.move(c2.x + c2.width / 2, c2.y + c2.height / 2);
    const tip2 = await p2.textContent('#marple-tip text');
    check('heatmap: latency tooltip: time, value range with unit, count',
      /time 0 s/.test(tip2) && /value 10\u201320 MiB/.test(tip2) && /count 2 points/.test(tip2), tip2);
    await p2.mouse.click(c2.x + c2.width / 2, c2.y + c2.height / 2);
    const det2 = await p2.textContent('#hm-details');
    check('heatmap: latency details name the info label', /bash: 2 \(100\.0%\)/.test(det2), det2);
    checkNoErrors('heatmap: latency page without errors', p2);

    // Clipped at the 99th percentile: 200 values of 1-2 ms and 2 of 900 ms;
    // the top row's tooltip says what it holds (one outlier in column 0).
    let clip = '{"marple":1,"interface":"disklat","datatype":"point","units":{"x":"s","y":"ms"}}\n';
    for (let i = 0; i < 202; i++) clip += (i * 0.01).toFixed(2) + ',' + (i % 100 === 5 ? 900 : 1 + (i % 2)) + ',dd\n';
    fs.writeFileSync('clip.marple', clip);
    execFileSync(BIN + '/marple-heatmap', ['--stepsec', '1', '-o', 'clip.svg', 'clip.marple']);
    const p3 = await open(browser, 'clip.svg');
    const c3 = await p3.locator('#hm-cells rect[data-r="49"]').first().boundingBox();
    await p3.mouse.move(c3.x + c3.width / 2, c3.y + c3.height / 2);
    const tip3 = await p3.textContent('#marple-tip text');
    check('heatmap: the clipped top row\'s tooltip: value \u2265 the clip, its count',
      /value \u2265 [0-9.]+ ms \(the clipped top row\)/.test(tip3) && /count 1 points/.test(tip3), tip3);
  } finally {
    await browser.close();
  }
});
