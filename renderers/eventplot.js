// marple-eventplot's script: a canvas timeline per track, zoom/pan, filters, hover.
// Data: EV {n: events, f: field sets, c: events per track, d: base64 of gzip
// of the field sets (varint length, UTF-8 "k=v" joined by \u001f) then three
// columns of n varints, track after track: time delta in ns on the track
// (zigzag, the first from T0), type, field set}; TR (track labels), TY (type
// names), LK (flat pairs of event positions in track order), META.
// Events are kept in typed arrays in track order, each track in time order;
// zoomed out further than a few events a pixel, a track is drawn as per-pixel
// summaries.
(function () {
"use strict";
window.marpleLoading = true;
var cv = document.getElementById("plot"), ctx = cv.getContext("2d");
var tip = document.getElementById("tip"), st = document.getElementById("status");
var reb = document.getElementById("re"), tyb = document.getElementById("types");
var LW = 170, TOP = 28, PAD = 4;
// rows of 34 px where the scheduler's slices are drawn (28 px bars a person
// can hover and read a name in; at 22 px they were 16 px), 22 px otherwise
var RH = TY.indexOf("sched_switch") >= 0 ? 34 : 22;
var n = EV.n, NT = TR.length, F = [];
var tm, typ, fi, ts, cum, run, vis, visc;
var tmin = 0, tmax = 0, a = 0, b = 1, A0 = 0, B0 = 1, switchTy = TY.indexOf("sched_switch");
var bars = new Uint8Array(NT), fcomm = [], fidle, ftask, fcol = [], fpass;

function bytes(b64) {
  var s = atob(b64), a = new Uint8Array(s.length);
  for (var i = 0; i < s.length; i++) a[i] = s.charCodeAt(i);
  return a;
}
// The columns straight into the typed arrays drawn from; a track whose events
// came out of time order (sections overlapping) is sorted, and LK follows.
function decode(u) {
  var p = 0, dec = new TextDecoder(), m, c, z, k, r;
  for (var j = 0; j < EV.f; j++) {
    var len = 0; m = 1;
    do { c = u[p++]; len += (c & 127) * m; m *= 128; } while (c & 128);
    F.push(dec.decode(u.subarray(p, p + len))); p += len;
  }
  ts = new Int32Array(NT + 1);
  for (r = 0; r < NT; r++) ts[r + 1] = ts[r] + EV.c[r];
  tm = new Float64Array(n); typ = new Int32Array(n); fi = new Int32Array(n);
  var unsorted = [];
  for (r = 0; r < NT; r++) {
    var t = 0, prev = -Infinity;
    for (k = ts[r]; k < ts[r + 1]; k++) {
      z = 0; m = 1;
      do { c = u[p++]; z += (c & 127) * m; m *= 128; } while (c & 128);
      t += z % 2 ? -(z + 1) / 2 : z / 2;
      tm[k] = t;
      if (t < prev) unsorted[r] = true;
      prev = t;
    }
  }
  [typ, fi].forEach(function (col) {
    for (var i = 0; i < n; i++) {
      c = u[p++];
      if (c < 128) { col[i] = c; continue; }
      z = c & 127; m = 128;
      do { c = u[p++]; z += (c & 127) * m; m *= 128; } while (c & 128);
      col[i] = z;
    }
  });
  unsorted.forEach(function (yes, r) { if (yes) sortTrack(r); });
}
function sortTrack(r) {
  var s0 = ts[r], len = ts[r + 1] - s0, o = [];
  for (var i = 0; i < len; i++) o.push(s0 + i);
  o.sort(function (x, y) { return tm[x] - tm[y] || x - y; });
  var t2 = Float64Array.from(o, function (x) { return tm[x]; }), y2 = Int32Array.from(o, function (x) { return typ[x]; });
  var f2 = Int32Array.from(o, function (x) { return fi[x]; }), moved = new Map();
  o.forEach(function (x, i) { moved.set(x, s0 + i); });
  tm.set(t2, s0); typ.set(y2, s0); fi.set(f2, s0);
  for (i = 0; i < LK.length; i++) if (moved.has(LK[i])) LK[i] = moved.get(LK[i]);
}
// the track of position k
function trackOf(k) { var lo = 0, hi = NT; while (hi - lo > 1) { var m = (lo + hi) >> 1; if (ts[m] <= k) lo = m; else hi = m; } return lo; }
function commOf(j) {
  if (fcomm[j] === undefined) {
    var fs = F[j].split("\u001f"), c = "";
    for (var k = 0; k < fs.length; k++) if (fs[k].lastIndexOf("comm=", 0) === 0) { c = fs[k].slice(5); break; }
    fcomm[j] = c;
  }
  return fcomm[j];
}
// A task's colour from a palette by its rank in busy time, not a hash of its
// name (hashed hues put curl and marple-offcpu in one pink): hues 150 degrees
// apart in turn cover the circle in steps of 30, lighter and darker by turns
// (so hues 30 degrees apart also differ in lightness); the next twelve tasks
// the same 15 degrees on, the rest repeat.
function paletteCol(i) {
  i %= 24;
  var h = (i % 12) * 150 % 360 + (i >= 12 ? 15 : 0);
  return "hsl(" + h + ",60%," + (i % 2 ? 64 : 80) + "%)";
}
function taskCol(j) { return fcol[j] || (fcol[j] = paletteCol(taskRank[ftask[j]])); }
// Per track with task switches: cum[k] = busy (not swapper) time from the
// track's first event to event k, run[k] = field set of the task running after k.
function busyTimes() {
  cum = new Float64Array(n); run = new Int32Array(n); fidle = new Uint8Array(F.length);
  ftask = new Int32Array(F.length); fcol = new Array(F.length);
  var ids = new Map();
  for (var j = 0; j < F.length; j++) {
    var c = commOf(j);
    fidle[j] = /^swapper/.test(c) ? 1 : 0;
    if (!ids.has(c)) ids.set(c, ids.size);
    ftask[j] = ids.get(c);
  }
  taskTime = new Float64Array(ids.size); taskSet = new Int32Array(ids.size).fill(-1);
  for (var r = 0; r < NT; r++) {
    var cur = -1, busy = 0;
    for (var k = ts[r]; k < ts[r + 1]; k++) {
      cum[k] = k > ts[r] ? cum[k - 1] + (busy ? tm[k] - tm[k - 1] : 0) : 0;
      if (busy && k > ts[r]) taskTime[ftask[cur]] += tm[k] - tm[k - 1];
      if (typ[k] === switchTy) { cur = fi[k]; busy = !fidle[cur]; bars[r] = 1; if (taskSet[ftask[cur]] < 0) taskSet[ftask[cur]] = cur; }
      run[k] = cur;
    }
  }
  var order = Array.from(taskTime.keys()).sort(function (x, y) { return taskTime[y] - taskTime[x] || x - y; });
  taskRank = new Int32Array(ids.size);
  order.forEach(function (t, i) { taskRank[t] = i; });
}
var taskTime, taskSet, taskRank;
// Under the plot, what the colours mean: the marks' event types, the tasks
// whose slices show most (a colour each, by name), the arrows.
function legend() {
  var el = document.getElementById("legend"), parts = [];
  var swatch = function (col, text, cls) {
    var s = document.createElement("span"), b = document.createElement("i");
    s.className = cls; b.style.background = col; s.appendChild(b); s.appendChild(document.createTextNode(text)); return s;
  };
  el.textContent = "";
  var head = function (t) { var h = document.createElement("b"); h.textContent = t; el.appendChild(h); };
  head("marks (event types):");
  TY.forEach(function (t, k) { el.appendChild(swatch(tyCol[k], t, "ty")); });
  var order = [];
  for (var i = 0; i < taskTime.length; i++) if (taskTime[i] > 0) order.push(i);
  if (order.length) {
    order.sort(function (x, y) { return taskTime[y] - taskTime[x]; });
    head("slices (the task running; zoomed out, the bar's height is the busy share):");
    order.slice(0, 12).forEach(function (i) { el.appendChild(swatch(taskCol(taskSet[i]), commOf(taskSet[i]) + " " + fmt(taskTime[i]), "task")); });
    if (order.length > 12) el.appendChild(document.createTextNode("and " + (order.length - 12) + " more (hover for names)"));
  }
  if (LK.length) el.appendChild(swatch("rgba(200,40,40,0.8)", "arrows: connections (source \u2192 destination)" +
    (showLinks ? "" : ", drawn when \u2018connections\u2019 is ticked"), "link"));
}
// busy time on track r up to time t; k = the last position at or before t (or below the track)
function busyUpTo(r, k, t) {
  if (k < ts[r]) return 0;
  var j = run[k];
  return cum[k] + (j >= 0 && !fidle[j] ? t - tm[k] : 0);
}
var tyCol = TY.map(function (t, k) { return "hsl(" + ((k * 137 + 10) % 360) + ",70%,38%)"; });
var hiddenTy = new Uint8Array(TY.length), re = null, nvis = 0;
function applyFilter() {
  nvis = 0;
  if (!re && hiddenTy.indexOf(1) < 0) {	/* everything shows: no test per event */
    vis.fill(1);
    for (var k = 0; k <= n; k++) visc[k] = k;
    nvis = n;
    return;
  }
  for (var j = 0; j < F.length; j++) fpass[j] = 2;
  for (var r = 0; r < NT; r++) {
    var trOk = re ? re.test(TR[r]) : false;
    for (k = ts[r]; k < ts[r + 1]; k++) {
      var ok = !hiddenTy[typ[k]];
      if (ok && re) {
        j = fi[k];
        if (fpass[j] === 2) fpass[j] = re.test(F[j].replace(/\u001f/g, " ")) ? 1 : 0;
        ok = fpass[j] === 1 || trOk || re.test(TY[typ[k]]);
      }
      vis[k] = ok ? 1 : 0;
      visc[k + 1] = visc[k] + vis[k];
      nvis += vis[k];
    }
  }
}
var W = 0, H = 0, dpr = window.devicePixelRatio || 1;
function size() {
  W = Math.max(400, window.innerWidth - 2);
  H = TOP + NT * RH + 8;
  cv.width = W * dpr; cv.height = H * dpr; cv.style.width = W + "px"; cv.style.height = H + "px";
  ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
  // in marple-report's frame: ask for our height, not the frame's default
  if (window.parent !== window) window.parent.postMessage({ marple_height: document.body.scrollHeight }, "*");
}
function X(t) { return LW + (t - a) / (b - a) * (W - LW - PAD); }
function T(x) { return a + (x - LW) / (W - LW - PAD) * (b - a); }
// first position in [lo, hi) whose time is >= t
function lower(t, lo, hi) { while (lo < hi) { var m = (lo + hi) >> 1; if (tm[m] < t) lo = m + 1; else hi = m; } return lo; }
// times as every page writes them (timefmt.js), 3 decimals in their unit
function fmt(ns) { return marpleTimeRes(ns, marpleTimeUnit(ns)[0] / 1000); }
// Times on the axis, in the tooltip and the status line are since the capture
// began (the header's start_ns, time 0 of the page): a first event 140 ms in
// is at 140 ms, as in the other pictures, not at 0.
// A tick label in the unit of the largest time on the axis (12.3 s, not
// 12300 ms), with as many decimals as the step needs.
function tickLabel(u, step, top) {
  var unit = marpleTimeUnit(Math.max(top, step, 1));
  var v = u / unit[0], d = Math.max(0, Math.ceil(-Math.log10(step / unit[0]) - 1e-9));
  return (Math.abs(v) < 1e-12 ? 0 : v).toFixed(d) + " " + unit[1];
}
// Ticks at round times from the start: steps of 1, 2 or 5 times a power of ten.
function axis() {
  var span = b - a, raw = span / 8, p10 = Math.pow(10, Math.floor(Math.log10(raw))), m = raw / p10;
  var step = p10 * (m >= 5 ? 5 : m >= 2 ? 2 : 1);
  ctx.fillStyle = "#555"; ctx.strokeStyle = "#ddd";
  ticks = [];
  var top = Math.max(Math.abs(a), Math.abs(b));
  // no tick before the start unless events are there
  for (var u = Math.max(Math.ceil(a / step) * step, tmin < 0 ? -Infinity : 0); u <= b; u += step) {
    var x = X(u);
    if (x < LW) continue;
    ctx.beginPath(); ctx.moveTo(x + 0.5, TOP - 4); ctx.lineTo(x + 0.5, H); ctx.stroke();
    var lab = tickLabel(u, step, top), w = ctx.measureText(lab).width, tx = x + 3 + w > W - PAD ? x - 3 - w : x + 3;
    // the last label right-aligned to its tick rather than cut off
    ctx.fillText(lab, tx, TOP - 12);
    ticks.push({ x: x, left: tx, right: tx + w, label: lab });
  }
}
// One track, events by event: task slices, then one mark per pixel and type.
function drawDetail(r, y, k0, k1) {
  var s1 = ts[r + 1], k, e;
  if (bars[r]) {
    for (k = k0; k < Math.min(k1 + 1, s1); k++) {
      if (typ[k] !== switchTy || !vis[k] || fidle[fi[k]]) continue;
      var nx = k + 1;
      while (nx < s1 && typ[nx] !== switchTy) nx++;
      var x1 = Math.max(LW, X(tm[k])), x2 = Math.min(W - PAD, X(nx < s1 ? tm[nx] : tmax));
      if (x2 - x1 < 0.5) continue;
      var c = commOf(fi[k]);
      ctx.fillStyle = taskCol(fi[k]);
      ctx.fillRect(x1, y + 3, x2 - x1, RH - 6);
      if (x2 - x1 > 40) { ctx.fillStyle = "#333"; ctx.save(); ctx.beginPath(); ctx.rect(x1, y, x2 - x1, RH); ctx.clip(); ctx.fillText(c, x1 + 3, y + RH / 2); ctx.restore(); }
    }
  }
  var last = new Float64Array(TY.length).fill(-1);
  for (k = k0; k < k1; k++) {
    if (!vis[k] || tm[k] < a) continue;
    var px = Math.floor(X(tm[k]));
    if (last[typ[k]] === px) continue;
    last[typ[k]] = px;
    ctx.fillStyle = tyCol[typ[k]];
    ctx.fillRect(px, y + 1, 1.5, bars[r] ? 5 : RH - 4);
  }
}
// The task that ran longest in [t1, t2) on track r, positions [j1, j2) inside
// it (past 32 switches, the one running at the middle); its field set, or -1.
var candTask = new Int32Array(34), candTime = new Float64Array(34);
function dominant(r, j1, j2, t1, t2) {
  var k = j1 - 1;
  if (j2 - j1 > 32) { k = lower((t1 + t2) / 2, j1, j2) - 1; return k >= ts[r] ? run[k] : -1; }
  var best = -1, bestT = 0, nc = 0, from = t1;
  for (var q = j1; q <= j2; q++) {
    var to = q < j2 ? tm[q] : t2, j = k >= ts[r] ? run[k] : -1;
    if (j >= 0 && !fidle[j]) {
      var id = ftask[j], c = 0;
      while (c < nc && candTask[c] !== id) c++;
      if (c === nc) { candTask[nc] = id; candTime[nc++] = 0; }
      candTime[c] += to - from;
      if (candTime[c] > bestT) { bestT = candTime[c]; best = j; }
    }
    from = to; k = q;
  }
  return best;
}
// One track zoomed out: per pixel column, the busy share as the height of a
// bar coloured by the task that ran most, and a mark where any event shows.
// Columns are gathered by colour (runs of equal columns merged) and each
// colour filled once: a fill per column was most of a frame.
function drawSummary(r, y, k0, k1) {
  var s0 = ts[r], s1 = ts[r + 1], cols = W - LW - PAD, dt = (b - a) / cols, px, j1, j2, t1;
  var runs = new Map(), prev = null;
  function put(col, x, top, h) {
    if (prev && prev.col === col && prev.top === top && prev.x + prev.w === x) { prev.w++; return; }
    var l = runs.get(col);
    if (!l) runs.set(col, l = []);
    l.push(prev = { col: col, x: x, top: top, w: 1, h: h });
  }
  if (bars[r]) {
    j1 = lower(a, s0, s1);
    for (px = 0; px < cols; px++) {
      t1 = a + px * dt; j2 = lower(t1 + dt, j1, s1);
      var share = (busyUpTo(r, j2 - 1, t1 + dt) - busyUpTo(r, j1 - 1, t1)) / dt;
      var h = Math.round((RH - 6) * Math.min(1, share)), dj;
      if (h > 0 && (dj = dominant(r, j1, j2, t1, t1 + dt)) >= 0)
        put(taskCol(dj), LW + px, y + RH - 3 - h, h);
      j1 = j2;
    }
  }
  j1 = lower(a, s0, s1);
  for (px = 0; px < cols; px++) {
    t1 = a + px * dt; j2 = lower(t1 + dt, j1, s1);
    if (visc[j2] > visc[j1]) {
      var k = j1;
      while (!vis[k]) k++;
      put(tyCol[typ[k]], LW + px, y + 1, bars[r] ? 5 : RH - 4);
    }
    j1 = j2;
  }
  runs.forEach(function (l, col) {
    ctx.fillStyle = col;
    ctx.beginPath();
    for (var i = 0; i < l.length; i++) ctx.rect(l[i].x, l[i].top, l[i].w, l[i].h);
    ctx.fill();
  });
  void k0; void k1;
}
// links (ipc connections): source -> destination
function drawLinks() {
  ctx.strokeStyle = "rgba(200,40,40,0.8)"; ctx.fillStyle = "rgba(200,40,40,0.8)"; ctx.lineWidth = 1.2;
  for (var q = 0; q < LK.length; q += 2) {
    var s = LK[q], d = LK[q + 1];
    if (!vis[s] || !vis[d]) continue;
    if (Math.max(tm[s], tm[d]) < a || Math.min(tm[s], tm[d]) > b) continue;
    var xs = X(tm[s]), ys = TOP + trackOf(s) * RH + RH / 2, xd = X(tm[d]), yd = TOP + trackOf(d) * RH + RH / 2;
    ctx.beginPath(); ctx.moveTo(xs, ys); ctx.lineTo(xd, yd); ctx.stroke();
    var an = Math.atan2(yd - ys, xd - xs);
    ctx.beginPath(); ctx.moveTo(xd, yd);
    ctx.lineTo(xd - 8 * Math.cos(an - 0.4), yd - 8 * Math.sin(an - 0.4));
    ctx.lineTo(xd - 8 * Math.cos(an + 0.4), yd - 8 * Math.sin(an + 0.4)); ctx.fill();
  }
  ctx.lineWidth = 1;
}
var shown = 0, summarized = 0, ticks = [];
function draw() {
  ctx.clearRect(0, 0, W, H);
  ctx.font = "12px sans-serif"; ctx.textBaseline = "middle";
  axis();
  shown = 0; summarized = 0;
  var cols = W - LW - PAD;
  for (var r = 0; r < NT; r++) {
    var y = TOP + r * RH, s0 = ts[r], s1 = ts[r + 1];
    ctx.fillStyle = r % 2 ? "#f6f6f6" : "#fff"; ctx.fillRect(LW, y, W - LW, RH);
    ctx.fillStyle = "#222"; ctx.fillText(TR[r].length > 24 ? TR[r].slice(0, 23) + "\u2026" : TR[r], 4, y + RH / 2);
    var ka = lower(a, s0, s1), k1 = lower(b, s0, s1), k0 = Math.max(s0, ka - 1);
    shown += visc[k1] - visc[ka];
    if (k1 - k0 > 3 * cols) { summarized++; drawSummary(r, y, k0, k1); } else drawDetail(r, y, k0, k1);
  }
  if (showLinks) drawLinks();
  ctx.fillStyle = "#fff"; ctx.fillRect(0, 0, LW, TOP - 2);
  st.textContent = shown + " of " + n + " events shown (" + nvis + " pass the filter), " +
    fmt(Math.max(a, Math.min(tmin, 0))) + " \u2013 " + fmt(b) + " (" + fmt(b - a) + ")" +
    (summarized ? "; " + summarized + " track" + (summarized > 1 ? "s" : "") + " summarized per pixel (zoom in for events)" : "");
}
function setView(na, nb) {
  var min = 100;
  if (nb - na < min) { var c = (na + nb) / 2; na = c - min / 2; nb = c + min / 2; }
  a = na; b = nb; draw();
}
function zoom(f, c) { if (c === undefined) c = (a + b) / 2; setView(c - (c - a) / f, c + (b - c) / f); }
// the visible event nearest to (mx, my) within 5 px, or -1
function hit(mx, my) {
  var r = Math.floor((my - TOP) / RH);
  if (r < 0 || r >= NT || mx < LW) return -1;
  var s0 = ts[r], s1 = ts[r + 1], k = lower(T(mx), s0, s1), best = -1, bd = 5;
  for (var j = Math.max(s0, k - 50); j < Math.min(s1, k + 50); j++) {
    if (!vis[j]) continue;
    var d = Math.abs(X(tm[j]) - mx);
    if (d <= bd) { bd = d; best = j; }
  }
  return best;
}
function fieldsOf(k) { return F[fi[k]].split("\u001f"); }
// Connections drawn on demand: a server under 200 curls drew 11,488 px of
// red lines over everything; up to 50 they are drawn from the start.
var showLinks = LK.length / 2 <= 50;
function linksBox() {
  var l = document.createElement("label"), c = document.createElement("input"), s = document.createElement("span");
  c.type = "checkbox"; c.checked = showLinks; c.id = "links";
  c.addEventListener("change", function () { showLinks = c.checked; draw(); });
  s.textContent = "connections (" + LK.length / 2 + ")"; s.style.color = "rgb(200,40,40)";
  l.appendChild(c); l.appendChild(s); tyb.appendChild(l);
}
function listen() {
  if (LK.length) linksBox();
  TY.forEach(function (t, k) {
    var l = document.createElement("label"), c = document.createElement("input"), s = document.createElement("span");
    c.type = "checkbox"; c.checked = true; c.dataset.type = t;
    c.addEventListener("change", function () { hiddenTy[k] = c.checked ? 0 : 1; applyFilter(); draw(); });
    s.textContent = t; s.style.color = tyCol[k];
    l.appendChild(c); l.appendChild(s); tyb.appendChild(l);
  });
  reb.addEventListener("input", function () {
    try { re = reb.value ? new RegExp(reb.value) : null; reb.classList.remove("bad"); }
    catch (e) { reb.classList.add("bad"); return; }
    applyFilter(); draw();
  });
  cv.addEventListener("wheel", function (ev) {
    ev.preventDefault();
    var r = cv.getBoundingClientRect(), c = T(Math.max(LW, ev.clientX - r.left));
    zoom(ev.deltaY < 0 ? 1.25 : 0.8, c);
  }, { passive: false });
  var drag = null;
  cv.addEventListener("mousedown", function (ev) { drag = { x: ev.clientX, a: a, b: b }; });
  window.addEventListener("mouseup", function () { drag = null; });
  cv.addEventListener("dblclick", function (ev) { var r = cv.getBoundingClientRect(); zoom(2, T(ev.clientX - r.left)); });
  cv.addEventListener("mousemove", function (ev) {
    var r = cv.getBoundingClientRect(), mx = ev.clientX - r.left, my = ev.clientY - r.top;
    if (drag) {
      var dt = (ev.clientX - drag.x) / (W - LW - PAD) * (drag.b - drag.a);
      a = drag.a - dt; b = drag.b - dt; draw(); tip.style.display = "none"; return;
    }
    var e = hit(mx, my);
    if (e < 0) { tip.style.display = "none"; return; }
    tip.textContent = fmt(tm[e]) + "  " + TY[typ[e]] + " on " + TR[trackOf(e)] + "\n" + fieldsOf(e).join("\n");
    tip.style.display = "block";
    tip.style.left = Math.min(ev.pageX + 12, window.innerWidth - 320) + "px"; tip.style.top = (ev.pageY + 12) + "px";
  });
  cv.addEventListener("mouseleave", function () { tip.style.display = "none"; });
  document.getElementById("zin").addEventListener("click", function () { zoom(2); });
  document.getElementById("zout").addEventListener("click", function () { zoom(0.5); });
  document.getElementById("reset").addEventListener("click", function () { setView(A0, B0); });
  window.addEventListener("resize", function () { size(); draw(); });
  window.addEventListener("keydown", function (ev) {
    if (ev.target === reb) return;
    if (ev.key === "+" || ev.key === "=") zoom(2);
    else if (ev.key === "-") zoom(0.5);
    else if (ev.key === "0") setView(A0, B0);
    else if (ev.key === "ArrowLeft") setView(a - (b - a) / 4, b - (b - a) / 4);
    else if (ev.key === "ArrowRight") setView(a + (b - a) / 4, b + (b - a) / 4);
  });
}
var timings = {};
function timed(name, f) { var t = performance.now(), r = f(); timings[name] = Math.round(performance.now() - t); return r; }
function start(u) {
  timed("decode", function () { decode(u); });
  u = null;
  timed("busy", busyTimes);
  fpass = new Uint8Array(F.length); vis = new Uint8Array(n); visc = new Int32Array(n + 1);
  tmin = Infinity; tmax = -Infinity;
  for (var r = 0; r < NT; r++) if (ts[r + 1] > ts[r]) {
    tmin = Math.min(tmin, tm[ts[r]]); tmax = Math.max(tmax, tm[ts[r + 1] - 1]);
  }
  if (!(tmax > tmin)) { tmin = n ? tmin - 1000 : 0; tmax = tmin + 2000; }
  if (META.end > tmax) tmax = META.end;
  var span = tmax - tmin;
  a = A0 = tmin - span * 0.01; b = B0 = tmax + span * 0.01;
  listen(); legend(); timed("filter", applyFilter); size(); timed("draw", draw);
  // for tests and the console
  window.eventplot = {
    tracks: TR, types: TY, events: n, links: LK.length / 2, rowHeight: RH,
    view: function () { return [a, b]; }, setView: setView, zoom: zoom,
    shown: function () { return shown; }, passing: function () { return nvis; },
    summarized: function () { return summarized; }, ticks: function () { return ticks; }, width: function () { return W; },
    // events by position in track order; find(type, track): the first such
    at: function (k) { var r = trackOf(k); return { x: X(tm[k]), y: TOP + r * RH + RH / 2, track: TR[r], type: TY[typ[k]], fields: fieldsOf(k) }; },
    find: function (type, track) {
      var r = TR.indexOf(track), y = TY.indexOf(type);
      for (var k = r < 0 ? n : ts[r]; r >= 0 && k < ts[r + 1]; k++) if (typ[k] === y) return k;
      return -1;
    },
    hit: hit, fieldSets: F.length, timings: timings
  };
  window.marpleLoading = false;
}
st.textContent = "reading " + n + " events\u2026";
var z = timed("base64", function () { return bytes(EV.d); }), t0 = performance.now();
new Response(new Blob([z]).stream().pipeThrough(new DecompressionStream("gzip"))).arrayBuffer()
  .then(function (buf) { timings.inflate = Math.round(performance.now() - t0); z = null; start(new Uint8Array(buf)); })
  .catch(function (e) { st.textContent = "cannot read the events: " + e; window.marpleLoading = false; throw e; });
})();
