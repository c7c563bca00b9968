// stackplot.test.js — marple-stackplot's SVG in headless Chromium: hovering the
// plot shows a tooltip with each band's value at that time, and a cursor line.
'use strict';
const { launch, open, check, checkNoErrors, checkNoRequests, run, BIN } = require('./lib.js');
const { execFileSync } = require('child_process');
const fs = require('fs');

run('stackplot', async () => {
  // Three samples: big grows 100 -> 300, small stays 10, a hostile name 5.
  let s = '{"marple":1,"interface":"memtime","datatype":"point","units":{"x":"s","y":"MiB"}}\n';
  [[0, 100], [1, 200], [2, 300]].forEach(([x, y]) => {
    s += x + ',' + y + ',big,pid=1\n' + x + ',10,small,pid=2\n' + x + ',5,<i>&amp;\'"x,pid=3\n';
  });
  fs.writeFileSync('sp.marple', s);
  execFileSync(BIN + '/marple-stackplot', ['-o', 'sp.svg', 'sp.marple']);
  const browser = await launch();
  try {
    const page = await open(browser, 'sp.svg');
    checkNoErrors('stackplot: page loads without errors', page);
    const box = await page.locator('#sp-hover').boundingBox();
    // the middle sample (x = 1 s) is in the middle of the plot
    await page.mouse.move(box.x + box.width / 2 + 3, box.y + box.height / 2);
    const vis = await page.getAttribute('#marple-tip', 'visibility');
    const tip = await page.textContent('#marple-tip text');
    check('stackplot: hover shows a tooltip', vis === 'visible', 'visibility ' + vis);
    check('stackplot: tooltip shows the time and each band\'s value',
      /time 1 s/.test(tip) && /big: 200 MiB/.test(tip) && /small: 10 MiB/.test(tip) &&
      /<i>&amp;'"x: 5 MiB/.test(tip) && /total: 215 MiB/.test(tip), tip);
    check('stackplot: cursor line shown', (await page.getAttribute('#sp-cursor', 'visibility')) === 'visible');
    await page.mouse.move(box.x + 2, box.y + box.height / 2);
    const tip0 = await page.textContent('#marple-tip text');
    check('stackplot: values follow the pointer (first sample)', /big: 100 MiB/.test(tip0), tip0);
    const legend = await page.$$eval('#sp-legend text', ts => ts.map(t => t.textContent));
    check('stackplot: legend in stack order, biggest at the bottom',
      legend.join('|') === '<i>&amp;\'"x|small|big', legend.join('|'));
    checkNoRequests('stackplot: no network requests', page);
    if (process.env.SHOT) {
      await page.mouse.move(box.x + box.width * 0.7, box.y + box.height / 2);
      await page.screenshot({ path: process.env.SHOT });
    }
  } finally {
    await browser.close();
  }
});
