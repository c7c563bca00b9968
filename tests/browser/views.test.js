// views.test.js — first screens (issue 39): a flame graph with a 217-frame
// tower opens at its root, not at the empty top of a 3,500 px picture; an
// icicle graph stays at its top, where its root is; a short graph does not
// move.  A tree map opens on a choice, not on one box.  The flame scope's
// graph has its root at the bottom, as the report's flame graphs beside it,
// and the cells of a busy machine (1 to 4 samples, most of them 4) spread
// over the scale instead of all sitting at its top.
'use strict';
const { launch, open, check, checkNoErrors, run, BIN } = require('./lib.js');
const { execFileSync } = require('child_process');
const fs = require('fs');
const os = require('os');
const path = require('path');

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'marple-views-'));
function svg(name, args, folded) {
  const f = path.join(dir, name);
  fs.writeFileSync(f, execFileSync(path.join(BIN, 'marple-flamegraph'), args, { input: folded }));
  return f;
}
const tower = ['app', 'main'].concat(Array.from({ length: 215 }, (_, i) => 'f' + i)).join(';');
const folded = tower + ' 5\napp;main;other 3\nsh;main;wait 2\n';

// where the root frame ("all", the first rect) is on the first screen
function root(page) {
  return page.evaluate(() => {
    const r = document.querySelector('#frames > rect').getBoundingClientRect();
    return { top: r.top, bottom: r.bottom, h: window.innerHeight, y: window.scrollY };
  });
}

run('views', async () => {
  const browser = await launch();
  try {
    let page = await open(browser, svg('tower.svg', [], folded));
    checkNoErrors('views: a tower flame graph loads without script errors', page);
    let r = await root(page);
    check('views: the tower graph opens at its root (on the first screen)', r.bottom <= r.h && r.top >= 0 && r.y > 0,
      JSON.stringify(r));
    page = await open(browser, svg('icicle.svg', ['--inverted'], folded));
    r = await root(page);
    check('views: an icicle graph stays at its top, its root there', r.y === 0 && r.top >= 0 && r.bottom <= r.h,
      JSON.stringify(r));
    page = await open(browser, svg('short.svg', [], 'app;main;a 3\napp;main;b 2\n'));
    r = await root(page);
    check('views: a short graph does not move', r.y === 0 && r.bottom <= r.h, JSON.stringify(r));

    // one process (99%), its _start, its main, then a choice; bash a sliver
    const tm = path.join(dir, 'tm.html');
    fs.writeFileSync(tm, execFileSync(path.join(BIN, 'marple-treemap'), [],
      { input: 'python3;_start;main;a 60\npython3;_start;main;b 38\npython3 1\nbash;main 1\n' }));
    page = await open(browser, tm);
    checkNoErrors('views: the tree map loads without script errors', page);
    const names = await page.evaluate(() => [...document.querySelectorAll('#map .box')].map(d => d.textContent).sort().join(','));
    check('views: the tree map opens on main\'s a and b, not on one python3 box', names === 'a,b', names);
    const crumbs = await page.evaluate(() => document.getElementById('crumbs') ? document.getElementById('crumbs').textContent : '');
    check('views: ... and its breadcrumb leads back up', /all.*python3.*_start.*main/.test(crumbs), crumbs);

    // a flame scope of a 300-frame tower: root at the bottom, in view
    const start = 5000000000, deep = ['app'].concat(Array.from({ length: 299 }, (_, i) => 'g' + i));
    let cap = '{"marple":1,"interface":"callstack","datatype":"stack","timed":"stacks","start_ns":' + start +
      ',"units":{"weight":"samples"}}\n40#' + deep.join(';') + '\n{"trailer":1,"records":1}\n' +
      '{"marple":1,"interface":"callstack","datatype":"event","timed":"samples","start_ns":' + start + '}\n';
    for (let k = 0; k < 40; k++) cap += (start + k * 25e6) + ',sample,cpu0,stack=0,pid=10,tid=10\n';
    cap += '{"trailer":1,"records":40,"lost":0}\n';
    const capf = path.join(dir, 'scope.marple'), html = path.join(dir, 'scope.html');
    fs.writeFileSync(capf, cap);
    execFileSync(path.join(BIN, 'marple-flamescope'), ['-o', html, capf]);
    page = await open(browser, html);
    await page.waitForSelector('body[data-ready="1"]', { timeout: 30000 });
    const at = n => page.locator('#fg .fr', { hasText: new RegExp('^' + n + '$') }).boundingBox();
    const a = await at('app'), g = await at('g0'), vh = page.viewportSize().height;
    check('views: the flame scope\'s root is below its callee (root at the bottom)', a && g && a.y > g.y,
      a && g ? 'app at ' + a.y + ', g0 at ' + g.y : 'frames missing');
    check('views: ... and in view without scrolling the page', a && a.y >= 0 && a.y + a.height <= vh,
      a ? 'app at ' + Math.round(a.y) + ' in ' + vh : 'no root');
    checkNoErrors('views: the flame scope loads without errors', page);

    // a busy machine: 2 CPUs at 99 Hz in 20 ms rows, 4 samples a cell, every
    // 7th cell 3, a quiet tenth of a second of 1s
    cap = '{"marple":1,"interface":"callstack","datatype":"stack","timed":"stacks","start_ns":' + start +
      ',"units":{"weight":"samples"}}\n';
    const ev = [];
    for (let c = 0; c < 150; c++) {
      const n = c >= 60 && c < 65 ? 1 : c % 7 === 0 ? 3 : 4;
      for (let k = 0; k < n; k++) ev.push((start + c * 20e6 + k * 4e6 + 1000) + ',sample,cpu' + (k & 1) + ',stack=0,pid=10,tid=10\n');
    }
    cap += ev.length + '#busy;main;work\n{"trailer":1,"records":1}\n' +
      '{"marple":1,"interface":"callstack","datatype":"event","timed":"samples","start_ns":' + start + '}\n' +
      ev.join('') + '{"trailer":1,"records":' + ev.length + ',"lost":0}\n';
    fs.writeFileSync(capf, cap);
    execFileSync(path.join(BIN, 'marple-flamescope'), ['-o', html, capf]);
    page = await open(browser, html);
    await page.waitForSelector('body[data-ready="1"]', { timeout: 30000 });
    const px = await page.evaluate(() => {
      const S = window.marpleScope, ctx = document.getElementById('cv').getContext('2d'), out = [];
      for (let c = 0; c < 150; c++) {
        const g = S.cellBox(c);
        out.push(Array.from(ctx.getImageData(g[0] + g[2] / 2, g[1] + g[3] / 2, 1, 1).data.slice(0, 3)).join(','));
      }
      return out;
    });
    const top = px.filter(p => p === '170,20,10').length, shades = new Set(px).size;
    check('views: a busy machine\'s flame scope is not saturated (few cells at the top colour)', top < 15,
      top + ' of 150 cells at the top colour');
    check('views: ... its 1-, 3- and 4-sample cells in three shades', shades === 3, [...new Set(px)].join(' '));
  } finally {
    await browser.close();
  }
});
