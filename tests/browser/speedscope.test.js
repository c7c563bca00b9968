// speedscope.test.js — marple-speedscope's files opened in the real
// speedscope app (npm package speedscope, its built page from file:// in
// Chromium, the file given to its "Browse" input): no error, no network, each
// profile's name and total as marple-fold counts them, frames root first,
// units, --per-process, a timed section in time order, hostile names as text.
'use strict';
const { launch, open, check, checkNoErrors, checkNoRequests, run, BIN, TOP } = require('./lib.js');
const { execFileSync } = require('child_process');
const fs = require('fs');
const os = require('os');
const path = require('path');

const APP = path.join(__dirname, 'node_modules', 'speedscope', 'dist', 'release', 'index.html');
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'marple-ss-'));

function cpu(host, hot) {
  return [
    `{"marple":1,"interface":"callstack","datatype":"stack","start_ns":1000,"host":"${host}","units":{"weight":"samples"},"options":{"frequency":99}}`,
    `${hot}#python3;_start;main;Py_RunMain;_PyEval_EvalFrameDefault;compute_hot`,
    '41#python3;_start;main;Py_RunMain;PyObject_Malloc',
    '12#bash;main;execute_command;waitpid;do_syscall_64_[k];schedule_[k]',
    '3#sshd;main;<img src=x onerror=alert(1)>;operator new(unsigned long)',
    '{"trailer":1,"records":4}', ''].join('\n');
}
function write(name, text) { const f = path.join(dir, name); fs.writeFileSync(f, text); return f; }
function speedscope(args) {
  const out = path.join(dir, 'out' + Math.random().toString(36).slice(2) + '.json');
  execFileSync(path.join(BIN, 'marple-speedscope'), ['-o', out, ...args]);
  return out;
}
function foldTotal(files) {
  const text = execFileSync(path.join(BIN, 'marple-fold'), files).toString();
  return text.trim().split('\n').reduce((s, l) => s + Number(l.slice(l.lastIndexOf(' ') + 1)), 0);
}

// Open the app and give it the file the way a person does: its Browse button.
async function load(browser, file) {
  const page = await open(browser, APP);
  await page.setInputFiles('input[type=file]', file);
  await page.waitForSelector('text=Sandwich', { timeout: 20000 });
  await page.waitForTimeout(300);
  return page;
}
// The profile selector (opened from the name in the toolbar): [name, total] rows.
async function profiles(page, current) {
  await page.click(`text=${current}`);
  await page.waitForSelector('table tbody tr');
  const rows = await page.$$eval('table tbody tr', trs => trs.map(tr => [...tr.querySelectorAll('td')].map(td => td.textContent)));
  await page.keyboard.press('Escape');
  return rows.map(r => [r[1], r[2]]);
}
// The flame chart's tooltip for the frame under (x, y).
async function hover(page, x, y) {
  await page.mouse.move(x, y);
  await page.waitForTimeout(200);
  const text = await page.innerText('body');
  return text.split('\n').filter(l => /^[0-9.]+[a-zµ]* \([0-9.<]+%\) /.test(l)).join(' | ');
}
const ROW0 = 150, ROW = 19.5;	// the flame chart's rows in a 1400x900 page

run('speedscope', async () => {
  const db1 = write('db1.marple', cpu('db1', 297)), db2 = write('db2.marple', cpu('db2', 100));
  const fleet = speedscope([db1, db2]);
  const json = JSON.parse(fs.readFileSync(fleet, 'utf8'));
  check('speedscope: the file names its schema',
    json.$schema === 'https://www.speedscope.app/file-format-schema.json', json.$schema);
  check('speedscope: frames shared by both profiles (15 distinct)', json.shared.frames.length === 15,
    String(json.shared.frames.length));

  const browser = await launch();
  try {
    let page = await load(browser, fleet);
    checkNoErrors('speedscope: the app loads the file without an error', page);
    checkNoRequests('speedscope: no network request', page);
    const bar = await page.innerText('body');
    check('speedscope: the first profile\'s name shown', bar.includes('callstack on db1 (1/2)'), JSON.stringify(bar.slice(0, 200)));
    const rows = await profiles(page, 'callstack on db1 (1/2)');
    const want = [['callstack on db1', String(foldTotal([db1]))], ['callstack on db2', String(foldTotal([db2]))]];
    check('speedscope: one profile a section, totals as marple-fold counts them (353, 156)',
      JSON.stringify(rows) === JSON.stringify(want), JSON.stringify(rows));
    let tip = await hover(page, 100, ROW0);
    check('speedscope: the root frame is the process (338 of 353 samples)', tip === '338 (96%) python3', tip);
    tip = await hover(page, 100, ROW0 + 5 * ROW);
    check('speedscope: frames root first: the leaf at depth 5', tip === '297 (84%) compute_hot', tip);
    await page.keyboard.press('n');
    await page.waitForTimeout(300);
    check('speedscope: n shows the second host\'s profile', (await page.innerText('body')).includes('callstack on db2 (2/2)'));
    await page.click('text=Sandwich');
    await page.waitForTimeout(300);
    const sandwich = await page.innerText('body');
    check('speedscope: a hostile frame name shown as text', sandwich.includes('<img src=x onerror=alert(1)>'));
    checkNoErrors('speedscope: no script ran from a frame name', page);
    await page.close();

    page = await load(browser, speedscope(['--per-process', db1]));
    const procs = await profiles(page, 'python3 \u2014 callstack on db1 (1/3)');
    check('speedscope --per-process: a profile per process with its total',
      JSON.stringify(procs) === JSON.stringify([['python3 \u2014 callstack on db1', '338'],
        ['bash \u2014 callstack on db1', '12'], ['sshd \u2014 callstack on db1', '3']]), JSON.stringify(procs));
    tip = await hover(page, 100, ROW0);
    check('speedscope --per-process: the process frame left out (root _start, 100%)', tip === '338 (100%) _start', tip);
    await page.close();

    const off = write('off.marple', '{"marple":1,"interface":"offcpu","datatype":"stack","host":"db3","units":{"weight":"us"}}\n' +
      '1500000#sleeper;main;nanosleep\n500000#sleeper;main;read\n');
    page = await load(browser, speedscope([off]));
    tip = await hover(page, 100, ROW0);
    check('speedscope: off-CPU microseconds shown as time (2.00s for the process)', tip === '2.00s (100%) sleeper', tip);
    await page.close();

    // The timed capture: phase_a's samples come before phase_b's.
    const timed = write('timed.marple', execFileSync(path.join(BIN, 'marple-cat'), ['-s', '0,1', path.join(TOP, 'tests', 'data', 'timed.marple')]));
    page = await load(browser, speedscope([timed]));
    checkNoErrors('speedscope: a timed section loads', page);
    const name = await page.innerText('body');
    check('speedscope: a timed section is named in time order', name.includes('callstack on sample (time order)'), JSON.stringify(name.slice(0, 200)));
    const left = await hover(page, 100, ROW0 + 2 * ROW), right = await hover(page, 1300, ROW0 + 2 * ROW);
    check('speedscope: Time Order: phase_a first, phase_b last', left === '4 (50%) phase_a' && right === '4 (50%) phase_b',
      left + ' / ' + right);
    await page.close();

    // Time Order of 0.5 s of samples, 2 s asleep, 0.5 s (issue 39): the sleep
    // is the middle two thirds of the chart, empty; the root's two runs each 0.5 s
    const sleep = write('sleep.marple', execFileSync('sh', ['-c', `
      echo '{"marple":1,"interface":"callstack","datatype":"stack","timed":"stacks","start_ns":5000000000,"units":{"weight":"samples"},"options":{"frequency":100}}'
      echo '50#app;main;before'; echo '50#app;main;after'; echo '{"trailer":1,"records":2}'
      echo '{"marple":1,"interface":"callstack","datatype":"event","timed":"samples","start_ns":5000000000}'
      for k in $(seq 0 49); do echo $((5000000000 + k * 10000000)),sample,cpu0,stack=0,pid=1,tid=1; done
      for k in $(seq 0 49); do echo $((7500000000 + k * 10000000)),sample,cpu0,stack=1,pid=1,tid=1; done`]));
    page = await load(browser, speedscope([sleep]));
    const first = await hover(page, 100, ROW0), gap = await hover(page, 700, ROW0), last = await hover(page, 1300, ROW0);
    check('speedscope: Time Order has time on its axis: a 2 s sleep is the empty middle',
      /^500\.00ms \(\d+%\) app$/.test(first) && gap === '' && /^500\.00ms \(\d+%\) app$/.test(last),
      [first, gap, last].join(' / '));
    await page.close();
  } finally {
    await browser.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
