// lib.js — shared helpers for marple's browser tests: launch Debian's chromium
// headless through playwright-core, open a local file, and report cases as
// "PASS: name" / "FAIL: name: why" lines (the format tests/run-all counts).
'use strict';
const { chromium } = require('playwright-core');
const path = require('path');

const BIN = process.env.MARPLE_BIN;
const TOP = process.env.MARPLE_TOP;

async function launch() {
  return chromium.launch({
    executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
      '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
}

// Open a file in a new page; collects page errors and any network request
// (the pages must be self-contained, so any request is a failure).
async function open(browser, file, viewport) {
  const page = await browser.newPage({ viewport: viewport || { width: 1400, height: 900 } });
  page.marpleErrors = [];
  page.marpleRequests = [];
  page.on('pageerror', e => page.marpleErrors.push(String(e)));
  page.on('dialog', d => { page.marpleErrors.push('dialog: ' + d.message()); d.dismiss(); });
  page.on('request', r => { if (!r.url().startsWith('file:')) page.marpleRequests.push(r.url()); });
  const t0 = Date.now();
  await page.goto('file://' + path.resolve(file));
  // pages that inflate their data (DecompressionStream) say when they are ready
  await page.waitForFunction(() => !window.marpleLoading, null, { timeout: 120000 });
  page.marpleLoadMs = Date.now() - t0;
  return page;
}

let failed = 0;
function pass(name) { console.log('PASS: ' + name); }
function fail(name, why) { failed++; console.log('FAIL: ' + name + ': ' + why); }
function check(name, cond, why) { cond ? pass(name) : fail(name, why || 'condition false'); }
// The cases every page has: no script error (or alert) and no network request so far.
function checkNoErrors(name, page) { check(name, page.marpleErrors.length === 0, page.marpleErrors.join('; ')); }
function checkNoRequests(name, page) { check(name, page.marpleRequests.length === 0, page.marpleRequests.join(' ')); }

// Run an async test body; a thrown error is one failed case, never a silent exit.
function run(name, body) {
  body().catch(e => { fail(name, 'exception: ' + (e && e.stack || e)); })
    .finally(() => { process.exitCode = failed ? 1 : 0; });
}

module.exports = { launch, open, pass, fail, check, checkNoErrors, checkNoRequests, run, BIN, TOP };
