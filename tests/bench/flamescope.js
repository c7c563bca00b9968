// flamescope.js — open a marple-flamescope page in headless Chromium and print
// "DRAWN_MS READY_MS SELECT_MS SELECT_MAX_MS": from the start of navigation to
// the heat map drawn (its cells and weights come first), to the stacks and
// threads decoded too (selections, search and filter work), and the
// median and worst time to draw the flame graph of a range selection (10
// ranges of 1 s to a few minutes, each drawn as a drag draws it).
'use strict';
const { launch, open } = require('../browser/lib.js');

(async () => {
  const browser = await launch();
  try {
    const page = await open(browser, process.argv[2]);
    await page.waitForSelector('body[data-ready="1"]', { timeout: 120000 });
    const drawn = await page.getAttribute('body', 'data-drawn-ms');
    const load = await page.getAttribute('body', 'data-ready-ms');
    const times = await page.evaluate(() => {
      const s = window.marpleScope, n = s.rows * s.cols, out = [];
      for (let i = 0; i < 10; i++) {
        const a = Math.floor((i * 0.097 % 1) * (n - 1)), len = s.rows * (1 + (i * 37) % 180);
        out.push(s.select(a, Math.min(n - 1, a + len)));
      }
      return out.sort((x, y) => x - y);
    });
    console.log(drawn + ' ' + load + ' ' + Math.round(times[5]) + ' ' + Math.round(times[9]));
  } finally {
    await browser.close();
  }
})().catch(e => { console.error(String(e)); process.exit(1); });
