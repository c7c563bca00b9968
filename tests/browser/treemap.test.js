// treemap.test.js — marple-treemap's page in Chromium: loads with no error
// and no network, areas follow the weights, hover shows name, weight and
// shares, a click drills down, the breadcrumb goes back up, --depth limits.
'use strict';
const { launch, open, check, checkNoErrors, checkNoRequests, run, BIN, TOP } = require('./lib.js');
const { execFileSync } = require('child_process');
const fs = require('fs');
const os = require('os');
const path = require('path');

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'marple-tm-'));
const input = path.join(TOP, 'tests', 'flamegraph', 'basic.in');

function boxes(page) {
  return page.evaluate(() => [...document.querySelectorAll('#map .box')].map(d => {
    const r = d.getBoundingClientRect();
    return { text: d.textContent, w: +d.dataset.w, area: r.width * r.height, cls: d.className };
  }));
}

run('treemap', async () => {
  const html = path.join(dir, 'tm.html');
  execFileSync(path.join(BIN, 'marple-treemap'), ['--title', 'Map <&>', '-o', html, input]);
  const shallow = path.join(dir, 'tm1.html');
  execFileSync(path.join(BIN, 'marple-treemap'), ['--depth', '1', '-o', shallow, input]);
  const browser = await launch();
  try {
    const page = await open(browser, html);
    checkNoErrors('treemap: loads without script errors', page);
    checkNoRequests('treemap: no network requests', page);
    check('treemap: escaped title', (await page.textContent('h1')) === 'Map <&>');
    let b = await boxes(page);
    const names = b.map(x => x.text).sort().join(',');
    check('treemap: top level shows the processes', names === 'bash,python3,short,swapper', names);
    // areas proportional to weights (python3 143 of 186 ...)
    const tot = b.reduce((s, x) => s + x.area, 0), wt = b.reduce((s, x) => s + x.w, 0);
    const worst = Math.max(...b.map(x => Math.abs(x.area / tot - x.w / wt)));
    check('treemap: areas follow weights', worst < 0.02, 'worst share error ' + worst.toFixed(4));
    const ratio = Math.max(...b.map(x => x.area)) / tot;
    check('treemap: python3 has 143/186 of the area', Math.abs(ratio - 143 / 186) < 0.02, String(ratio));

    await page.hover('#map .box >> text=python3');
    const tip = await page.textContent('#tip');
    check('treemap: hover shows name, weight, % of parent and of total',
      tip === 'python3\n143 samples\n76.88% of all\n76.88% of total', JSON.stringify(tip));

    await page.click('#map .box >> text=python3');
    let crumbs = await page.textContent('#crumbs');
    check('treemap: click drills down (breadcrumb)', crumbs === 'all \u203a python3', crumbs);
    await page.click('#map .box >> text=_start');
    await page.click('#map .box >> text=main');
    await page.click('#map .box >> text=Py_RunMain');
    b = await boxes(page);
    const here = b.map(x => x.text).sort().join(',');
    check('treemap: deepest level shows leaves and (self)', here === '(self),PyObject_Malloc,_PyEval_EvalFrameDefault', here);
    await page.hover('#map .box >> text=PyObject_Malloc');
    const tip2 = await page.textContent('#tip');
    check('treemap: share of parent and of total differ below the top',
      tip2 === 'PyObject_Malloc\n41 samples\n28.67% of Py_RunMain\n22.04% of total', JSON.stringify(tip2));
    await page.click('#crumbs >> text=python3');
    crumbs = await page.textContent('#crumbs');
    check('treemap: breadcrumb goes back up', crumbs === 'all \u203a python3', crumbs);
    await page.click('#crumbs >> text=all');
    b = await boxes(page);
    check('treemap: back at the top', b.length === 4 && (await page.textContent('#crumbs')) === 'all', String(b.length));
    checkNoErrors('treemap: no script errors after interaction', page);
    await page.close();

    const p2 = await open(browser, shallow);
    b = await boxes(p2);
    check('treemap --depth 1: no drill down below the first level', b.length === 4 && b.every(x => !/more/.test(x.cls)),
      JSON.stringify(b.map(x => x.cls)));
    await p2.close();
  } finally {
    await browser.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
