// marple-eventplot's script: a canvas timeline per track, zoom/pan, filters, hover.
// Data: EV (flat: time ns from T0, track, type, fields index), F (fields, "k=v" joined
// by \u001f), TR (track labels), TY (type names), LK (flat pairs of event indexes), META.
(function () {
"use strict";
var n = EV.length / 4, cv = document.getElementById("plot"), ctx = cv.getContext("2d");
var tip = document.getElementById("tip"), st = document.getElementById("status");
var reb = document.getElementById("re"), tyb = document.getElementById("types");
var LW = 170, TOP = 28, RH = 22, PAD = 4;
var tm = new Float64Array(n), trk = new Int32Array(n), typ = new Int32Array(n), fi = new Int32Array(n);
for (var i = 0; i < n; i++) { tm[i] = EV[4 * i]; trk[i] = EV[4 * i + 1]; typ[i] = EV[4 * i + 2]; fi[i] = EV[4 * i + 3]; }
var tmin = Infinity, tmax = -Infinity;
for (i = 0; i < n; i++) { if (tm[i] < tmin) tmin = tm[i]; if (tm[i] > tmax) tmax = tm[i]; }
if (!(tmax > tmin)) { tmin = n ? tmin - 1000 : 0; tmax = tmin + 2000; }
if (META.end > tmax) tmax = META.end;
var span = tmax - tmin, a = tmin - span * 0.01, b = tmax + span * 0.01, A0 = a, B0 = b;
// events of each track, in time order
var byTrack = [];
for (i = 0; i < TR.length; i++) byTrack.push([]);
for (i = 0; i < n; i++) byTrack[trk[i]].push(i);
var idx = byTrack.map(function (l) { l.sort(function (x, y) { return tm[x] - tm[y] || x - y; }); return Int32Array.from(l); });
var ttm = idx.map(function (l) { var f = new Float64Array(l.length); for (var k = 0; k < l.length; k++) f[k] = tm[l[k]]; return f; });
var switchTy = TY.indexOf("sched_switch");
// tracks with task bars get short marks on top, so the bars stay visible
var bars = idx.map(function (l) { for (var k = 0; k < l.length; k++) if (typ[l[k]] === switchTy) return true; return false; });
// per fields string: its comm (for slice colours) and its filter result
var fcomm = new Array(F.length), fpass = new Uint8Array(F.length);
function fieldsOf(j) { return F[j].split("\u001f"); }
function commOf(j) {
  if (fcomm[j] === undefined) {
    var fs = fieldsOf(j), c = "";
    for (var k = 0; k < fs.length; k++) if (fs[k].lastIndexOf("comm=", 0) === 0) { c = fs[k].slice(5); break; }
    fcomm[j] = c;
  }
  return fcomm[j];
}
function hue(s) { var h = 0; for (var k = 0; k < s.length; k++) h = (h * 31 + s.charCodeAt(k)) | 0; return ((h % 360) + 360) % 360; }
var tyCol = TY.map(function (t, k) { return "hsl(" + ((k * 137 + 10) % 360) + ",70%,38%)"; });
var hiddenTy = new Uint8Array(TY.length), re = null, vis = new Uint8Array(n), nvis = 0;
function applyFilter() {
  for (var j = 0; j < F.length; j++) fpass[j] = 2;
  nvis = 0;
  for (var i = 0; i < n; i++) {
    var ok = !hiddenTy[typ[i]];
    if (ok && re) {
      var j = fi[i];
      if (fpass[j] === 2) fpass[j] = re.test(F[j].replace(/\u001f/g, " ")) ? 1 : 0;
      ok = fpass[j] === 1 || re.test(TY[typ[i]]) || re.test(TR[trk[i]]);
    }
    vis[i] = ok ? 1 : 0;
    nvis += vis[i];
  }
}
// type checkboxes
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
var W = 0, H = 0, dpr = window.devicePixelRatio || 1;
function size() {
  W = Math.max(400, window.innerWidth - 2);
  H = TOP + TR.length * RH + 8;
  cv.width = W * dpr; cv.height = H * dpr; cv.style.width = W + "px"; cv.style.height = H + "px";
  ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
}
function X(t) { return LW + (t - a) / (b - a) * (W - LW - PAD); }
function T(x) { return a + (x - LW) / (W - LW - PAD) * (b - a); }
function lower(f, t) { var lo = 0, hi = f.length; while (lo < hi) { var m = (lo + hi) >> 1; if (f[m] < t) lo = m + 1; else hi = m; } return lo; }
function fmt(ns) {
  var s = Math.abs(ns);
  if (s >= 1e9) return (ns / 1e9).toFixed(s >= 1e10 ? 2 : 3) + " s";
  if (s >= 1e6) return (ns / 1e6).toFixed(3) + " ms";
  if (s >= 1e3) return (ns / 1e3).toFixed(3) + " \u00b5s";
  return ns.toFixed(0) + " ns";
}
var shown = 0;
function draw() {
  ctx.clearRect(0, 0, W, H);
  ctx.font = "12px sans-serif"; ctx.textBaseline = "middle";
  // time axis
  var step = Math.pow(10, Math.floor(Math.log10((b - a) / 8)));
  if ((b - a) / step > 20) step *= 5; else if ((b - a) / step > 10) step *= 2;
  ctx.fillStyle = "#555"; ctx.strokeStyle = "#ddd";
  for (var t = Math.ceil(a / step) * step; t <= b; t += step) {
    var x = X(t);
    ctx.beginPath(); ctx.moveTo(x + 0.5, TOP - 4); ctx.lineTo(x + 0.5, H); ctx.stroke();
    ctx.fillText(fmt(t - tmin), x + 3, TOP - 12);
  }
  shown = 0;
  for (var r = 0; r < TR.length; r++) {
    var y = TOP + r * RH, l = idx[r], f = ttm[r];
    ctx.fillStyle = r % 2 ? "#f6f6f6" : "#fff"; ctx.fillRect(LW, y, W - LW, RH);
    ctx.fillStyle = "#222"; ctx.fillText(TR[r].length > 24 ? TR[r].slice(0, 23) + "\u2026" : TR[r], 4, y + RH / 2);
    var k0 = Math.max(0, lower(f, a) - 1), k1 = lower(f, b);
    // slices: the task switched in runs until the next switch on this track
    if (switchTy >= 0) {
      for (var k = k0; k < Math.min(k1 + 1, l.length); k++) {
        var e = l[k];
        if (typ[e] !== switchTy || !vis[e]) continue;
        var x1 = Math.max(LW, X(tm[e])), nx = k + 1;
        while (nx < l.length && typ[l[nx]] !== switchTy) nx++;
        var x2 = Math.min(W - PAD, X(nx < l.length ? tm[l[nx]] : tmax));
        if (x2 - x1 < 0.5) continue;
        var c = commOf(fi[e]);
        if (/^swapper/.test(c)) continue;
        ctx.fillStyle = "hsl(" + hue(c) + ",55%,78%)";
        ctx.fillRect(x1, y + 3, x2 - x1, RH - 6);
        if (x2 - x1 > 40) { ctx.fillStyle = "#333"; ctx.save(); ctx.beginPath(); ctx.rect(x1, y, x2 - x1, RH); ctx.clip(); ctx.fillText(c, x1 + 3, y + RH / 2); ctx.restore(); }
      }
    }
    // marks: at most one per pixel column and type
    var last = new Float64Array(TY.length).fill(-1);
    for (k = k0; k < k1; k++) {
      e = l[k];
      if (!vis[e] || tm[e] < a) continue;
      shown++;
      var px = Math.floor(X(tm[e]));
      if (last[typ[e]] === px) continue;
      last[typ[e]] = px;
      ctx.fillStyle = tyCol[typ[e]];
      ctx.fillRect(px, y + 1, 1.5, bars[r] ? 5 : RH - 4);
    }
  }
  // links (ipc connections): source -> destination
  ctx.strokeStyle = "rgba(200,40,40,0.8)"; ctx.fillStyle = "rgba(200,40,40,0.8)"; ctx.lineWidth = 1.2;
  for (var q = 0; q < LK.length; q += 2) {
    var s = LK[q], d = LK[q + 1];
    if (!vis[s] || !vis[d]) continue;
    if (Math.max(tm[s], tm[d]) < a || Math.min(tm[s], tm[d]) > b) continue;
    var xs = X(tm[s]), ys = TOP + trk[s] * RH + RH / 2, xd = X(tm[d]), yd = TOP + trk[d] * RH + RH / 2;
    ctx.beginPath(); ctx.moveTo(xs, ys); ctx.lineTo(xd, yd); ctx.stroke();
    var an = Math.atan2(yd - ys, xd - xs);
    ctx.beginPath(); ctx.moveTo(xd, yd);
    ctx.lineTo(xd - 8 * Math.cos(an - 0.4), yd - 8 * Math.sin(an - 0.4));
    ctx.lineTo(xd - 8 * Math.cos(an + 0.4), yd - 8 * Math.sin(an + 0.4)); ctx.fill();
  }
  ctx.lineWidth = 1;
  ctx.fillStyle = "#fff"; ctx.fillRect(0, 0, LW, TOP - 2);
  st.textContent = shown + " of " + n + " events shown (" + nvis + " pass the filter), " +
    fmt(a - tmin) + " \u2013 " + fmt(b - tmin) + " (" + fmt(b - a) + ")";
}
function setView(na, nb) {
  var min = 100;
  if (nb - na < min) { var c = (na + nb) / 2; na = c - min / 2; nb = c + min / 2; }
  a = na; b = nb; draw();
}
function zoom(f, c) { if (c === undefined) c = (a + b) / 2; setView(c - (c - a) / f, c + (b - c) / f); }
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
  tip.textContent = fmt(tm[e] - tmin) + "  " + TY[typ[e]] + " on " + TR[trk[e]] + "\n" + fieldsOf(fi[e]).join("\n");
  tip.style.display = "block";
  tip.style.left = Math.min(ev.pageX + 12, window.innerWidth - 320) + "px"; tip.style.top = (ev.pageY + 12) + "px";
});
cv.addEventListener("mouseleave", function () { tip.style.display = "none"; });
// the visible event nearest to (mx, my) within 5 px, or -1
function hit(mx, my) {
  var r = Math.floor((my - TOP) / RH);
  if (r < 0 || r >= TR.length || mx < LW) return -1;
  var f = ttm[r], l = idx[r], t = T(mx), k = lower(f, t), best = -1, bd = 5;
  for (var j = Math.max(0, k - 50); j < Math.min(l.length, k + 50); j++) {
    var e = l[j];
    if (!vis[e]) continue;
    var d = Math.abs(X(tm[e]) - mx);
    if (d <= bd) { bd = d; best = e; }
  }
  return best;
}
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
applyFilter(); size(); draw();
// for tests and the console
window.eventplot = {
  tracks: TR, types: TY, events: n, links: LK.length / 2,
  view: function () { return [a, b]; }, setView: setView, zoom: zoom,
  shown: function () { return shown; }, passing: function () { return nvis; },
  at: function (e) { return { x: X(tm[e]), y: TOP + trk[e] * RH + RH / 2, track: TR[trk[e]], type: TY[typ[e]], fields: fieldsOf(fi[e]) }; },
  hit: hit
};
})();
