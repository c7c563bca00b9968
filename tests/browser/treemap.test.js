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

    // python3 > _start > main > Py_RunMain is a chain of single-child frames:
    // its box says where it ends, and one click goes through it (it took four)
    const chain = await page.evaluate(() => document.querySelector('#map .box[data-i="' + window.marple.find('python3') + '"]').dataset.chain);
    check('treemap: a chain of single children is shown on its box', chain === ' \u203a \u2026 \u203a Py_RunMain', JSON.stringify(chain));
    await page.click('#map .box >> text=python3');
    let crumbs = await page.textContent('#crumbs');
    check('treemap: one click drills down through the chain (breadcrumb)',
      crumbs === 'all \u203a python3 \u203a _start \u203a main \u203a Py_RunMain', crumbs);
    b = await boxes(page);
    const here = b.map(x => x.text).sort().join(',');
    check('treemap: deepest level shows leaves and (self)', here === '(self),PyObject_Malloc,_PyEval_EvalFrameDefault', here);
    await page.hover('#map .box >> text=PyObject_Malloc');
    const tip2 = await page.textContent('#tip');
    check('treemap: share of parent and of total differ below the top',
      tip2 === 'PyObject_Malloc\n41 samples\n28.67% of Py_RunMain\n22.04% of total', JSON.stringify(tip2));
    await page.click('#crumbs >> text=python3');
    crumbs = await page.textContent('#crumbs');
    check('treemap: breadcrumb goes back up, to the frame clicked', crumbs === 'all \u203a python3', crumbs);
    await page.click('#map .box >> text=_start');
    await page.keyboard.press('Backspace');
    crumbs = await page.textContent('#crumbs');
    check('treemap: Backspace goes up past the chain', crumbs === 'all', crumbs);
    await page.click('#crumbs >> text=all');
    b = await boxes(page);
    check('treemap: back at the top', b.length === 4 && (await page.textContent('#crumbs')) === 'all', String(b.length));

    // search: frames matching a regular expression; what leads to none is dimmed
    await page.fill('#search', 'Malloc|waitpid');
    b = await boxes(page);
    const dim = b.filter(x => /dim/.test(x.cls)).map(x => x.text).sort().join(',');
    check('treemap: search dims the boxes that lead to no match', dim === 'short,swapper', dim);
    check('treemap: search says how much matched', (await page.textContent('#found')) === '2 frames match: 53 samples (28.49% of total)',
      await page.textContent('#found'));
    await page.click('#map .box >> text=python3');
    b = await boxes(page);
    check('treemap: the matching frame is marked below', b.some(x => x.text === 'PyObject_Malloc' && /hit/.test(x.cls)) &&
      b.some(x => x.text === '_PyEval_EvalFrameDefault' && /dim/.test(x.cls)), JSON.stringify(b.map(x => x.text + ':' + x.cls)));
    await page.fill('#search', '(');
    check('treemap: a bad regex is marked, not thrown', await page.evaluate(() => document.getElementById('search').classList.contains('bad')));
    await page.fill('#search', '');
    b = await boxes(page);
    check('treemap: clearing the search dims nothing', b.every(x => !/dim|hit/.test(x.cls)), JSON.stringify(b.map(x => x.cls)));
    await page.click('#crumbs >> text=all');
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
