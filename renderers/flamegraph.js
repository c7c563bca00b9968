// marple-flamegraph's script: hover details, click to zoom, regex search.
// Data: N (names), D (per frame: name, depth, start, count[, delta], pre-order),
// C (layout constants).  Frame i is the i-th <rect> in #frames, followed by
// its <text> label when it has one.
(function () {
"use strict";
var NS = "http://www.w3.org/2000/svg", K = C.K, n = D.length / K, W = C.W, XP = C.XP;
var CW = C.FS * C.FW, FULL = W - 2 * XP;
var fr = document.querySelectorAll("#frames > rect");
var nm = new Int32Array(n), dp = new Int32Array(n), st = new Float64Array(n), ct = new Float64Array(n);
var dl = K > 4 ? new Float64Array(n) : null;
var end = new Int32Array(n), par = new Int32Array(n), cls = new Uint8Array(n), hl = new Uint8Array(n);
var fill = new Array(n), txt = new Array(n), lab = new Array(n), ty = new Float64Array(n);
var det = document.getElementById("details"), mt = document.getElementById("matched");
var uz = document.getElementById("unzoom"), sb = document.getElementById("search");
var icb = document.getElementById("ic");
var zi = 0, re = null, q = "", ic = false, typing = false, buf = "";
var stk = [];
for (var i = 0; i < n; i++) {
	var b = i * K;
	nm[i] = D[b]; dp[i] = D[b + 1]; st[i] = D[b + 2]; ct[i] = D[b + 3];
	if (dl) dl[i] = D[b + 4];
	while (stk.length && dp[stk[stk.length - 1]] >= dp[i]) end[stk.pop()] = i;
	par[i] = stk.length ? stk[stk.length - 1] : -1;
	stk.push(i);
	var r = fr[i], nx = r.nextElementSibling;
	r.i = i;
	fill[i] = r.getAttribute("fill");
	ty[i] = +r.getAttribute("y") + C.FH / 2 + C.FS * 0.35;
	txt[i] = nx && nx.tagName === "text" ? nx : null;
	lab[i] = txt[i] ? txt[i].textContent : "";
}
while (stk.length) end[stk.pop()] = n;

function commas(v) {
	var s = String(Math.round(v * 100) / 100), p = s.split("."), x = p[0].replace(/\B(?=(\d{3})+(?!\d))/g, ",");
	return p.length > 1 ? x + "." + p[1] : x;
}
function fit(s, w) {
	var c = Math.floor(w / CW);
	if (c < 3) return "";
	return s.length <= c ? s : s.slice(0, c - 2) + "..";
}
function setc(i, c) {
	if (cls[i] !== c) {
		cls[i] = c;
		var v = c === 1 ? "h" : c === 2 ? "p" : "";
		fr[i].setAttribute("class", v);
		if (txt[i]) txt[i].setAttribute("class", v);
	}
}
function draw(i, x, w) {
	var r = fr[i], l = fit(N[nm[i]], w), t = txt[i];
	r.setAttribute("x", x.toFixed(1));
	r.setAttribute("width", w.toFixed(1));
	if (l === "" && !t) return;
	if (!t) {
		t = document.createElementNS(NS, "text");
		t.setAttribute("y", ty[i].toFixed(1));
		if (cls[i]) t.setAttribute("class", cls[i] === 1 ? "h" : "p");
		r.parentNode.insertBefore(t, r.nextSibling);
		txt[i] = t;
		lab[i] = "";
	}
	t.setAttribute("x", (x + 3).toFixed(1));
	if (lab[i] !== l) { t.textContent = l; lab[i] = l; }
}
function total() { return zi ? ct[zi] : C.T; }
function zoom(z) {
	zi = z;
	var s0 = z ? st[z] : 0, sc = FULL / (z ? ct[z] : C.T), e = end[z], anc = new Uint8Array(n);
	for (var p = par[z]; p >= 0; p = par[p]) anc[p] = 1;
	for (var i = 0; i < n; i++) {
		if (i >= z && i < e) { setc(i, 0); draw(i, XP + (st[i] - s0) * sc, ct[i] * sc); }
		else if (anc[i]) { setc(i, 2); draw(i, XP, FULL); }
		else setc(i, 1);
	}
	uz.setAttribute("class", z ? "" : "h");
	if (re) search(q);
}
function search(s) {
	q = s || "";
	re = null;
	if (q) {
		try { re = new RegExp(q, ic ? "i" : ""); }
		catch (x) { mt.textContent = "bad regex: " + x.message; window.marpleMatched = null; return; }
	}
	var seen = new Int8Array(N.length), m = 0, skip = -1, e = end[zi];
	for (var i = 0; i < n; i++) {
		var hit = 0;
		if (re && i >= zi && i < e) {
			var k = nm[i];
			if (!seen[k]) seen[k] = re.test(N[k]) || (S && S[k] && re.test(S[k])) ? 1 : -1;
			hit = seen[k] > 0 ? 1 : 0;
		}
		if (hit !== hl[i]) {
			hl[i] = hit;
			fr[i].setAttribute("fill", hit ? "#e600e6" : fill[i]);
		}
		if (hit && i >= skip) { m += ct[i]; skip = end[i]; }
	}
	var pct = re ? 100 * m / total() : null;
	window.marpleMatched = pct;
	mt.textContent = re ? "Matched: " + pct.toFixed(1) + "%" : " ";
	sb.textContent = re ? "Reset Search" : "Search";
}
function info(i) {
	var s = C.nametype + " " + N[nm[i]] + (S && S[nm[i]] ? " at " + S[nm[i]] : "") + " (" + commas(ct[i]) + " " + C.countname + ", " +
		(100 * ct[i] / C.T).toFixed(2) + "%";
	if (dl) s += ", " + (dl[i] > 0 ? "+" : "") + commas(dl[i]) + " (" + (ct[i] ? (dl[i] > 0 ? "+" : "") + (100 * dl[i] / ct[i]).toFixed(2) : "0") + "%)";
	return s + ")";
}
var fg = document.getElementById("frames");
fg.addEventListener("mouseover", function (e) {
	var g = e.target;
	if (g.i === undefined) return;
	det.textContent = info(g.i);
	if (!g.titled) {
		var t = document.createElementNS(NS, "title");
		t.textContent = info(g.i);
		g.appendChild(t);
		g.titled = true;
	}
});
fg.addEventListener("mouseout", function () { det.textContent = " "; });
fg.addEventListener("click", function (e) {
	if (e.target.i !== undefined) zoom(e.target.i);
});
uz.addEventListener("click", function () { zoom(0); });
function prompt_show() { sb.textContent = "Search: " + buf + "\u2502"; }
function start_typing() { typing = true; buf = q; prompt_show(); }
sb.addEventListener("click", function () { if (re) search(""); else start_typing(); });
function toggle_ic() {
	ic = !ic;
	icb.setAttribute("class", ic ? "on" : "");
	if (q) search(q);
}
icb.addEventListener("click", toggle_ic);
window.addEventListener("keydown", function (e) {
	if ((e.ctrlKey || e.metaKey) && (e.key === "f" || e.key === "F")) {
		e.preventDefault(); start_typing(); return;
	}
	if ((e.ctrlKey || e.metaKey) && (e.key === "i" || e.key === "I")) {
		e.preventDefault(); toggle_ic(); return;
	}
	if (!typing) {
		if (e.key === "Escape") search("");
		return;
	}
	e.preventDefault();
	if (e.key === "Enter") { typing = false; search(buf); if (!re) sb.textContent = "Search"; }
	else if (e.key === "Escape") { typing = false; sb.textContent = re ? "Reset Search" : "Search"; }
	else if (e.key === "Backspace") { buf = buf.slice(0, -1); prompt_show(); }
	else if (e.key.length === 1 && !e.ctrlKey && !e.metaKey) { buf += e.key; prompt_show(); }
});
// A graph taller than the window (a 217-frame tower) opens at its root, the
// widest frames, not at the empty top; an icicle graph has its root there.
var rb = fr.length ? fr[0].getBoundingClientRect() : null;
if (rb && rb.bottom > window.innerHeight)
	window.scrollTo(0, window.scrollY + rb.bottom - window.innerHeight + C.FH);
window.marple = {
	zoom: zoom, search: search, frames: n,
	find: function (name) { for (var i = 0; i < n; i++) if (N[nm[i]] === name) return i; return -1; },
	ignorecase: toggle_ic
};
})();
