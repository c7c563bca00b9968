// marple-treemap's script: a squarified tree map of one level at a time.
// Data: N (names), D (per node, pre-order: name, parent, weight), C (options).
// A click goes down through chains of single-child frames at once; the search
// box (a regular expression) dims what does not lead to a matching frame.
(function () {
"use strict";
var n = D.length / 3, nm = new Int32Array(n), par = new Int32Array(n), w = new Float64Array(n);
var kids = [];
for (var i = 0; i < n; i++) {
	nm[i] = D[3 * i]; par[i] = D[3 * i + 1]; w[i] = D[3 * i + 2]; kids.push([]);
	if (par[i] >= 0) kids[par[i]].push(i);
}
for (var k = 0; k < n; k++) kids[k].sort(function (a, b) { return w[b] - w[a] || a - b; });
var map = document.getElementById("map"), crumbs = document.getElementById("crumbs");
var tip = document.getElementById("tip"), cur = 0;
var sbox = document.getElementById("search"), found = document.getElementById("found");
var match = null, leads = null;

function commas(v) {
	var s = String(Math.round(v * 100) / 100), p = s.split("."), x = p[0].replace(/\B(?=(\d{3})+(?!\d))/g, ",");
	return p.length > 1 ? x + "." + p[1] : x;
}
function pct(a, b) { return b > 0 ? (100 * a / b).toFixed(2) + "%" : "-"; }
function hue(s) {
	var h = 2166136261;
	for (var i = 0; i < s.length; i++) { h ^= s.charCodeAt(i); h = Math.imul(h, 16777619); }
	return (h >>> 0) % 360;
}
function worst(a, first, last, sum, side) {
	var s2 = sum * sum, l2 = side * side;
	return Math.max(l2 * a[first] / s2, s2 / (l2 * a[last]));
}
// Squarified layout (Bruls, Huizing, van Wijk): areas a (descending) in x,y,W,H.
function squarify(a, x, y, W, H) {
	var out = [], i = 0;
	while (i < a.length) {
		var side = Math.min(W, H), start = i, sum = a[i], best = worst(a, i, i, sum, side);
		i++;
		while (i < a.length) {
			var s = sum + a[i], t = worst(a, start, i, s, side);
			if (t > best) break;
			best = t; sum = s; i++;
		}
		var j;
		if (W >= H) {
			var cw = H > 0 ? sum / H : 0, yy = y;
			for (j = start; j < i; j++) { var rh = cw > 0 ? a[j] / cw : 0; out.push([x, yy, cw, rh]); yy += rh; }
			x += cw; W -= cw;
		} else {
			var ch = W > 0 ? sum / W : 0, xx = x;
			for (j = start; j < i; j++) { var rw = ch > 0 ? a[j] / ch : 0; out.push([xx, y, rw, ch]); xx += rw; }
			y += ch; H -= ch;
		}
	}
	return out;
}
function self(i) {
	var s = w[i];
	for (var j = 0; j < kids[i].length; j++) s -= w[kids[i][j]];
	return s > w[i] * 1e-9 ? s : 0;
}
// The end of the chain of single-child frames (nothing of their own) from i.
function chainEnd(i) {
	while (kids[i].length === 1 && self(i) === 0) i = kids[i][0];
	return i;
}
// Going up: past the frames a click would go down through again.
function chainTop(i) {
	var p = par[i];
	while (p > 0 && kids[p].length === 1 && self(p) === 0) p = par[p];
	return p;
}
// Search: frames whose name matches, and which frames lead to one.
function search() {
	var re = null;
	try { re = sbox.value ? new RegExp(sbox.value) : null; sbox.classList.remove("bad"); }
	catch (e) { sbox.classList.add("bad"); return; }
	match = leads = null; found.textContent = "";
	if (re) {
		match = new Uint8Array(n); leads = new Uint8Array(n);
		var under = new Uint8Array(n), hits = 0, mw = 0, i;
		for (i = 0; i < n; i++) {
			match[i] = re.test(N[nm[i]]) ? 1 : 0;
			hits += match[i];
			if (i > 0) under[i] = under[par[i]] || match[par[i]];
			if (match[i] && !under[i]) mw += w[i];	/* not counted twice below a match */
		}
		for (i = n - 1; i >= 0; i--) { leads[i] |= match[i]; if (par[i] >= 0 && leads[i]) leads[par[i]] = 1; }
		found.textContent = hits + " frame" + (hits === 1 ? "" : "s") + " match: " + commas(mw) + " " + C.unit + " (" + pct(mw, w[0]) + " of total)";
	}
	show(cur);
}
function show(i) {
	cur = i;
	// breadcrumb: root ... i
	var path = [];
	for (var p = i; p >= 0; p = par[p]) path.unshift(p);
	crumbs.textContent = "";
	path.forEach(function (p, k) {
		if (k) crumbs.appendChild(document.createTextNode(" \u203a "));
		var a = document.createElement("span");
		a.className = p === i ? "here" : "up";
		a.textContent = N[nm[p]];
		a.dataset.i = p;
		crumbs.appendChild(a);
	});
	var items = kids[i].filter(function (c) { return w[c] > 0; }), s = self(i);
	var areaW = map.clientWidth, areaH = map.clientHeight, total = w[i];
	var list = items.slice();
	if (s > 0) list.push(-1);
	list.sort(function (a, b) { return (b < 0 ? s : w[b]) - (a < 0 ? s : w[a]); });
	var scale = total > 0 ? areaW * areaH / total : 0;
	var rects = squarify(list.map(function (c) { return (c < 0 ? s : w[c]) * scale; }), 0, 0, areaW, areaH);
	map.textContent = "";
	var frag = document.createDocumentFragment();
	list.forEach(function (c, k) {
		var r = rects[k], d = document.createElement("div");
		d.className = c < 0 ? "box self" : kids[c].length ? "box more" : "box";
		if (match && (c < 0 ? !match[i] : !leads[c])) d.className += " dim";
		if (match && c >= 0 && match[c]) d.className += " hit";
		if (c >= 0 && chainEnd(c) !== c) d.dataset.chain = " \u203a \u2026 \u203a " + N[nm[chainEnd(c)]];
		d.style.left = r[0].toFixed(1) + "px"; d.style.top = r[1].toFixed(1) + "px";
		d.style.width = Math.max(0, r[2] - 1).toFixed(1) + "px"; d.style.height = Math.max(0, r[3] - 1).toFixed(1) + "px";
		if (c >= 0) { d.style.background = "hsl(" + hue(N[nm[c]]) + ",60%,72%)"; d.dataset.i = c; }
		d.dataset.w = c < 0 ? s : w[c];
		d.textContent = (c < 0 ? "(self)" : N[nm[c]]);
		frag.appendChild(d);
	});
	map.appendChild(frag);
	document.getElementById("sum").textContent = N[nm[i]] + ": " + commas(w[i]) + " " + C.unit + " (" + pct(w[i], w[0]) + " of total)";
}
map.addEventListener("click", function (e) {
	var d = e.target.closest(".box");
	if (d && d.dataset.i !== undefined && kids[+d.dataset.i].length) show(chainEnd(+d.dataset.i));
});
crumbs.addEventListener("click", function (e) {
	if (e.target.dataset.i !== undefined) show(+e.target.dataset.i);
});
map.addEventListener("mousemove", function (e) {
	var d = e.target.closest(".box");
	if (!d) { tip.style.display = "none"; return; }
	var v = +d.dataset.w, name = d.dataset.i !== undefined ? N[nm[+d.dataset.i]] : "(self) " + N[nm[cur]];
	tip.textContent = name + "\n" + commas(v) + " " + C.unit + "\n" + pct(v, w[cur]) + " of " + N[nm[cur]] + "\n" + pct(v, w[0]) + " of total";
	tip.style.display = "block";
	tip.style.left = Math.min(e.clientX + 12, window.innerWidth - tip.offsetWidth - 4) + "px";
	tip.style.top = Math.min(e.clientY + 12, window.innerHeight - tip.offsetHeight - 4) + "px";
});
map.addEventListener("mouseleave", function () { tip.style.display = "none"; });
sbox.addEventListener("input", search);
window.addEventListener("keydown", function (e) {
	if (e.target === sbox) return;
	if (e.key === "Backspace" || e.key === "Escape") { if (par[cur] >= 0) show(chainTop(cur)); }
});
window.addEventListener("resize", function () { show(cur); });
window.marple = { show: show, current: function () { return cur; }, nodes: n,
	find: function (name) { for (var i = 0; i < n; i++) if (N[nm[i]] === name) return i; return -1; },
	weight: function (i) { return w[i]; } };
// The first view: down while one frame holds nearly all (95%) of the weight,
// so that it opens on a choice, not on one box (a -p capture: one process,
// its _start, its main, beside slivers); the breadcrumb goes back up.
function firstView(i) {
	for (;;) {
		var big = -1;
		for (var j = 0; j < kids[i].length; j++)
			if (big < 0 || w[kids[i][j]] > w[big]) big = kids[i][j];
		if (big < 0 || w[big] < 0.95 * w[i] || !kids[big].length) return i;
		i = big;
	}
}
show(firstView(0));
})();
