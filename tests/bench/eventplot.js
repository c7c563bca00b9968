// eventplot.js — marple-eventplot's page in Chromium (Playwright, the browser
// tests' setup): the time from opening it to its first drawing, then zoom and
// pan frames at the whole capture (summaries per pixel), a 1/100 view and a
// 1/100000 view (events drawn one by one).  Prints one JSON object.
'use strict';
const { launch, open } = require("../browser/lib.js");

(async () => {
  const browser = await launch();
  try {
    const page = await open(browser, process.argv[2], { width: 1600, height: 1000 });
    const r = await page.evaluate(() => {
      const ep = window.eventplot, v = ep.view(), span = v[1] - v[0], out = { events: ep.events, load_phases_ms: ep.timings };
      function frames(label, a, b) {
        ep.setView(a, b);
        const z = [], p = [];
        for (let i = 0; i < 6; i++) {
          let t = performance.now(); ep.zoom(i % 2 ? 1 / 1.25 : 1.25); z.push(performance.now() - t);
          const w = ep.view()[1] - ep.view()[0];
          t = performance.now(); ep.setView(ep.view()[0] + w / 10, ep.view()[1] + w / 10); p.push(performance.now() - t);
        }
        out[label] = { zoom_ms: Math.max(...z), pan_ms: Math.max(...p), summarized_tracks: ep.summarized() };
      }
      frames('whole', v[0], v[1]);
      frames('1/100', v[0] + span * 0.4, v[0] + span * 0.41);
      frames('1/100000', v[0] + span * 0.5, v[0] + span * 0.50001);
      return out;
    });
    r.load_ms = page.marpleLoadMs;
    r.errors = page.marpleErrors;
    console.log(JSON.stringify(r));
  } finally {
    await browser.close();
  }
})().catch(e => { console.log(JSON.stringify({ error: String(e && e.stack || e) })); process.exitCode = 1; });
