// marple-flamescope's script: the heat map of cells (a canvas) and the flame
// graph of a selection of them.  Data: C (options), N (frame names), TH
// (threads: pid, tid, name id), Z (packed typed arrays, gzip + base64), and
// after this script the elements z-thread, z-weight and z-stack (packed the
// same way): the heat map is drawn from Z's entries and weight a cell while
// the browser still reads those; selections, search and the filter work
// once they are in.
(function () {
"use strict";
var $ = function (id) { return document.getElementById(id); };
var rows = C.rows, cols = C.cols, ncells = rows * cols, colS = C.column_s, rowS = C.row_ms / 1000;
var cv = $("cv"), ctx = cv.getContext("2d"), tip = $("tip"), fg = $("fg");
var stackAt, frames, cellStart, cellW, stk, thr, wt, nstacks = 0;
var threadOn = new Uint8Array(TH.length), counts = new Float64Array(ncells), lit = null;
var nameHit = null, stackHit = null, sel = null, base = null, drag = null, full = false, pairs;
var LEFT = 64, BOTTOM = 34, TOP = 8, cw = 8, ch = 6, t0 = performance.now();

function bytes(b64) {
	var s = atob(b64), n = s.length, a = new Uint8Array(n);
	for (var i = 0; i < n; i++) a[i] = s.charCodeAt(i);
	return a;
}
// a packed array written after the script, in the element z-NAME
function block(name) {
	var el = $("z-" + name);
	return { w: +el.dataset.w, n: +el.dataset.n, d: el.textContent.slice(1, -1) };
}
// the writer stores w-byte values as byte planes: all low bytes, then the next
function fromPlanes(b, w, n) {
	if (w === 1) return b;
	var a = w === 2 ? new Uint16Array(n) : new Uint32Array(n), i;
	if (w === 2) for (i = 0; i < n; i++) a[i] = b[i] | b[n + i] << 8;
	else for (i = 0; i < n; i++) a[i] = (b[i] | b[n + i] << 8 | b[2 * n + i] << 16 | b[3 * n + i] << 24) >>> 0;
	return a;
}
function unpack(p) {
	if (!p.n) return Promise.resolve(new Uint32Array(0));
	var st = new Blob([bytes(p.d)]).stream().pipeThrough(new DecompressionStream("gzip"));
	return new Response(st).arrayBuffer().then(function (b) { return fromPlanes(new Uint8Array(b), p.w, p.n); });
}
function commas(v) {
	var s = String(Math.round(v * 100) / 100), p = s.split(".");
	return p[0].replace(/\B(?=(\d{3})+(?!\d))/g, ",") + (p.length > 1 ? "." + p[1] : "");
}
// One time format everywhere (axes, tooltips, titles): seconds from the start.
// times as every page writes them (timefmt.js), to the millisecond
function fmtT(s) { return marpleTimeRes(s * 1e9, 1e6); }
function cellStartS(c) { return Math.floor(c / rows) * colS + (c % rows) * rowS; }
function cellEndS(c) { var col = Math.floor(c / rows); return Math.min(col * colS + (c % rows + 1) * rowS, (col + 1) * colS); }
function unitOf(v) { return commas(v) + " " + C.unit; }

// The heat map first: each cell's weight (every thread's, until the rest is in).
function first(a) {
	frames = a[0];
	var nc = a[1], starts = [];
	cellW = a[2]; pairs = [a[3], a[4]];
	for (var i = 0; i < frames.length; i += frames[i] + 1) starts.push(i);
	stackAt = Uint32Array.from(starts); nstacks = starts.length;
	cellStart = new Uint32Array(ncells + 1);	/* a cell's entries: cellStart[c] up to cellStart[c + 1] */
	for (var c = 0; c < ncells; c++) cellStart[c + 1] = cellStart[c] + (c < nc.length ? nc[c] : 0);
	fillFilter();
	applyHash();
	$("status").textContent = status() + " · reading the stacks\u2026";
	document.body.dataset.drawnMs = String(Math.round(performance.now()));	/* since navigation began */
	document.body.dataset.drawn = "1";
}
// Then the entries' stacks and threads: the flame graphs, search and filter.
function rest(a) {
	var sd = a[0], lt = a[1], ps = pairs[0], pt = pairs[1], local = [], ne = sd.length;
	wt = a[2];
	buildTree();
	stk = new Uint32Array(ne);	/* stacks come as deltas within a cell */
	thr = new Uint32Array(ne);	/* threads as the how-manieth of their stack's */
	for (var p = 0; p < ps.length; p++) (local[ps[p]] || (local[ps[p]] = [])).push(pt[p]);
	for (var c = 0; c < ncells; c++)
		for (var e = cellStart[c]; e < cellStart[c + 1]; e++) {
			stk[e] = e > cellStart[c] ? stk[e - 1] + sd[e] : sd[e];
			thr[e] = local[stk[e]][lt[e]];
		}
	full = true;
	update();
	$("status").textContent = status();
	document.body.dataset.loadMs = String(Math.round(performance.now() - t0));
	document.body.dataset.readyMs = String(Math.round(performance.now()));	/* since navigation began */
	document.body.dataset.ready = "1";
}
function status() {
	return commas(C.samples) + " samples" + (C.lost ? " (" + commas(C.lost) + " lost)" : "") +
		(C.sections > 1 ? " from " + commas(C.sections) + " sections" : "") +
		" · " + cols + " columns of " + fmtT(colS) + " · rows of " + marpleTime(C.row_ms * 1e6, 4);
}

function fillFilter() {
	var f = $("flt"), seen = {}, opts = [["", "all"]];
	for (var i = 0; i < TH.length; i++) {
		var p = TH[i][0];
		if (!seen[p]) { seen[p] = 1; opts.push(["p" + p, N[TH[i][2]] + " (" + p + ")"]); }
	}
	for (var j = 0; j < TH.length; j++)
		opts.push(["t" + TH[j][1], "  " + N[TH[j][2]] + " " + TH[j][0] + "/" + TH[j][1]]);
	opts.forEach(function (o) { var el = document.createElement("option"); el.value = o[0]; el.textContent = o[1]; f.appendChild(el); });
	f.addEventListener("change", function () { setFilter(f.value); update(); });
}
function setFilter(v) {
	for (var i = 0; i < TH.length; i++)
		threadOn[i] = !v || (v[0] === "p" && "p" + TH[i][0] === v) || (v[0] === "t" && "t" + TH[i][1] === v) ? 1 : 0;
	$("flt").value = v;
}

// Per-cell totals of the threads shown, and the cells where a search matched.
function tally() {
	painted = null;
	counts.fill(0);
	lit = stackHit && full ? new Uint8Array(ncells) : null;
	if (!full) {	/* before the threads are in: every thread's */
		for (var k = 0; k < ncells && k < cellW.length; k++) counts[k] = cellW[k];
		return;
	}
	for (var c = 0; c < ncells; c++)
		for (var e = cellStart[c]; e < cellStart[c + 1]; e++)
			if (threadOn[thr[e]]) {
				counts[c] += wt[e];
				if (lit && stackHit[stk[e]]) lit[c] = 1;
			}
}

function heat(t) {
	var r = [[255, 236, 200], [250, 140, 40], [170, 20, 10]], a, b;
	if (t < 0.5) { a = r[0]; b = r[1]; t *= 2; } else { a = r[1]; b = r[2]; t = (t - 0.5) * 2; }
	return [0, 1, 2].map(function (i) { return Math.round(a[i] + (b[i] - a[i]) * t); });
}
// Pixels as the canvas holds them (RGBA bytes) seen as one 32-bit number, so
// a row of a cell is one fill whatever the machine's byte order.
function pixel(rgb) {
	var p = new Uint32Array(1), b = new Uint8Array(p.buffer);
	b[0] = rgb[0]; b[1] = rgb[1]; b[2] = rgb[2]; b[3] = 255;
	return p[0];
}
// The shade of a weight.  By quantile (the default): a cell's shade is the
// share of cells lighter than it, half of those as heavy counted, so the
// weights most cells have sit mid-scale (a busy machine at 99 Hz in 20 ms rows
// has cells of 1 to 4 samples, most of them 4: scaled by weight every cell was
// at the top, dark red).  Linear: from the lightest cell's weight to the
// heaviest's (not from 0: on 8 CPUs 14 to 18 would all be dark red).  Rank:
// by the rank of a weight among the weights seen.  scale.lo, scale.hi for the
// legend.
var scale = { lo: 0, hi: 0 };
function colours() {
	var max = 0, min = Infinity, n = 0, seen = new Map(), shade = null;
	for (var c = 0; c < ncells; c++) if (counts[c]) {
		var v = counts[c];
		if (v > max) max = v;
		if (v < min) min = v;
		seen.set(v, (seen.get(v) || 0) + 1); n++;
	}
	scale = { lo: max ? min : 0, hi: max };
	if (C.color !== "linear") {
		var u = Array.from(seen.keys()).sort(function (x, y) { return x - y; }), below = 0;
		shade = new Map();
		u.forEach(function (v, i) {
			var k = seen.get(v);
			shade.set(v, C.color === "rank" ? (u.length > 1 ? i / (u.length - 1) : 1) : (below + k / 2) / n);
			below += k;
		});
	}
	return function (v) { return shade ? shade.get(v) : max > min ? (v - min) / (max - min) : 0.5; };
}
// Under the map: the colours from the lightest cell's weight to the heaviest's.
function legend() {
	var el = $("scale"), stops = [];
	for (var k = 0; k <= 4; k++) stops.push("rgb(" + heat(k / 4).join(",") + ")");
	el.innerHTML = "";
	if (!scale.hi) return;
	var bar = document.createElement("span"), lo = document.createElement("span"), hi = document.createElement("span");
	bar.className = "bar"; bar.style.background = "linear-gradient(to right," + stops.join(",") + ")";
	lo.className = "lo"; hi.className = "hi";
	lo.textContent = scale.lo === scale.hi ? "every cell: " : (C.color === "linear" ? "" : "by " + C.color + ": ") + commas(scale.lo);
	hi.textContent = scale.lo === scale.hi ? unitOf(scale.hi) : unitOf(scale.hi) + " a cell";
	el.appendChild(lo);
	if (scale.lo !== scale.hi) el.appendChild(bar);
	el.appendChild(hi);
}

function cellXY(c) { return [LEFT + Math.floor(c / rows) * cw, TOP + (rows - 1 - c % rows) * ch]; }
function inSel(c, s) { return s && c >= Math.min(s.a, s.b) && c <= Math.max(s.a, s.b); }

// The cells, lit cells and axes are painted once per count (paintCells, into
// an offscreen canvas); a new selection only copies them and shades itself.
var painted = null;
function paintCells() {
	cw = Math.max(3, Math.min(48, Math.floor((window.innerWidth * 0.48 - LEFT - 10) / cols)));
	ch = Math.max(2, Math.min(16, Math.floor(360 / rows)));
	painted = document.createElement("canvas");
	painted.width = Math.max(LEFT + cols * cw + 10, 340); painted.height = TOP + rows * ch + BOTTOM;
	// tens of thousands of cells: written as pixels, not a fillRect each
	var g = painted.getContext("2d"), col = colours(), W = painted.width;
	var img = g.createImageData(W, painted.height), px = new Uint32Array(img.data.buffer);
	var pal = new Uint32Array(256), purple = pixel([190, 0, 255]);
	for (var k = 0; k < 256; k++) pal[k] = pixel(heat(k / 255));
	var box = function (x, y, w, h, v) { for (var j = y; j < y + h; j++) px.fill(v, j * W + x, j * W + x + w); };
	px.fill(pixel([255, 255, 255]));
	for (var c = 0; c < ncells; c++) {
		if (!counts[c] && !(lit && lit[c])) continue;
		var xy = cellXY(c);
		if (counts[c]) box(xy[0], xy[1], cw, ch, pal[Math.round(col(counts[c]) * 255)]);
		if (lit && lit[c]) box(xy[0] + 1, xy[1] + 1, Math.max(1, cw - 2), Math.max(1, ch - 2), purple);
	}
	g.putImageData(img, 0, 0);
	axes(g);
	legend();
}
function drawHeat() {
	if (!painted) paintCells();
	cv.width = painted.width; cv.height = painted.height;
	ctx.drawImage(painted, 0, 0);
	[[base, "rgb(0,90,255)"], [sel, "rgb(0,160,0)"]].forEach(function (p) {
		if (!p[0]) return;
		ctx.fillStyle = p[1]; ctx.globalAlpha = 0.35;
		for (var c = Math.min(p[0].a, p[0].b); c <= Math.max(p[0].a, p[0].b); c++) {
			var xy = cellXY(c);
			ctx.fillRect(xy[0], xy[1], cw, ch);
		}
		ctx.globalAlpha = 1;
	});
}
function axes(ctx) {
	ctx.fillStyle = "#222"; ctx.font = "11px Verdana,sans-serif"; ctx.textAlign = "right"; ctx.textBaseline = "middle";
	var ystep = Math.max(1, Math.ceil(14 / ch));
	for (var r = 0; r <= rows; r += ystep) ctx.fillText(marpleTime(Math.round(r * C.row_ms) * 1e6, 4), LEFT - 4, TOP + (rows - r) * ch);
	ctx.textAlign = "center"; ctx.textBaseline = "top";
	var xstep = Math.max(1, Math.ceil(48 / cw));
	for (var k = 0; k < cols; k += xstep) ctx.fillText(fmtT(k * colS), LEFT + k * cw + cw / 2, TOP + rows * ch + 3);
	ctx.textAlign = "left";
	ctx.fillText("time \u2192 (a column is " + fmtT(colS) + "); offset in it \u2191", LEFT, TOP + rows * ch + 18);
}

function cellAt(ev) {
	var r = cv.getBoundingClientRect(), x = ev.clientX - r.left, y = ev.clientY - r.top;
	var col = Math.floor((x - LEFT) / cw), row = rows - 1 - Math.floor((y - TOP) / ch);
	if (col < 0 || col >= cols || row < 0 || row >= rows) return -1;
	return col * rows + row;
}
cv.addEventListener("mousedown", function (ev) {
	var c = cellAt(ev); if (c < 0) return;
	drag = { a: c, b: c, baseline: ev.shiftKey };
	ev.preventDefault();
});
cv.addEventListener("mousemove", function (ev) {
	var c = cellAt(ev);
	if (drag && c >= 0) { drag.b = c; if (drag.baseline) base = { a: drag.a, b: c }; else sel = { a: drag.a, b: c }; drawHeat(); }
	if (c < 0) { tip.style.display = "none"; return; }
	tip.textContent = fmtT(cellStartS(c)) + " – " + fmtT(cellEndS(c)) + "\n" + unitOf(counts[c]) +
		(lit && lit[c] ? "\nsearch matched here" : "");
	tip.style.display = "block"; tip.style.left = (ev.clientX + 12) + "px"; tip.style.top = (ev.clientY + 12) + "px";
});
cv.addEventListener("mouseleave", function () { tip.style.display = "none"; });
window.addEventListener("mouseup", function () {
	if (!drag) return;
	var r = { a: Math.min(drag.a, drag.b), b: Math.max(drag.a, drag.b) };
	if (drag.baseline) base = r; else sel = r;
	drag = null; redraw();
});
window.addEventListener("keydown", function (ev) { if (ev.key === "Escape") { sel = base = null; redraw(); } });

// What each stack weighs in cells [s.a, s.b] (all cells without a selection).
function weigh(s) {
	var w = new Float64Array(nstacks), a = s ? s.a : 0, b = s ? s.b : ncells - 1, tot = 0;
	var all = $("flt").value === "", e, end = cellStart[b + 1];
	if (all)
		for (e = cellStart[a]; e < end; e++) { w[stk[e]] += wt[e]; tot += wt[e]; }
	else
		for (e = cellStart[a]; e < end; e++)
			if (threadOn[thr[e]]) { w[stk[e]] += wt[e]; tot += wt[e]; }
	return { w: w, total: tot };
}
// The tree of every stack's frames, built once (root 0 "all"; a parent's id
// is below its children's; children in name order): a selection only sums
// its stacks' weights into their leaves and up to the root.
var tName, tParent, tFirst, tNext, stackLeaf;
function buildTree() {
	var name = [-1], par = [-1], kids = [new Map()];
	stackLeaf = new Uint32Array(nstacks);
	for (var s = 0; s < nstacks; s++) {
		var at = stackAt[s], node = 0;
		for (var i = 1; i <= frames[at]; i++) {
			var id = frames[at + i], k = kids[node].get(id);
			if (k === undefined) { k = name.length; name.push(id); par.push(node); kids.push(new Map()); kids[node].set(id, k); }
			node = k;
		}
		stackLeaf[s] = node;
	}
	var n = name.length;
	tName = Int32Array.from(name); tParent = Int32Array.from(par);
	tFirst = new Int32Array(n).fill(-1); tNext = new Int32Array(n).fill(-1);
	for (var p = 0; p < n; p++) {
		var ks = Array.from(kids[p].values()).sort(function (a, b) { return N[name[a]] < N[name[b]] ? -1 : 1; });
		for (var j = ks.length - 1; j >= 0; j--) { tNext[ks[j]] = tFirst[p]; tFirst[p] = ks[j]; }
	}
}
function tree(cur, bas) {
	var n = tName.length, v = new Float64Array(n), v2 = bas ? new Float64Array(n) : v;
	for (var s = 0; s < nstacks; s++) {
		v[stackLeaf[s]] += cur.w[s];
		if (bas) v2[stackLeaf[s]] += bas.w[s];
	}
	for (var k = n - 1; k > 0; k--) {
		v[tParent[k]] += v[k];
		if (bas) v2[tParent[k]] += v2[k];
	}
	return { name: tName, v: v, v2: v2 };
}
// Text for innerHTML: names come from traced programs.
function esc(s) {
	return s.replace(/[&<>"']/g, function (c) { return "&#" + c.charCodeAt(0) + ";"; });
}
var hues = [];
function hue(id) {
	if (hues[id]) return hues[id];
	var h = 0, s = N[id];
	for (var i = 0; i < s.length && i < 12; i++) h = (h * 31 + s.charCodeAt(i)) >>> 0;
	return (hues[id] = "rgb(" + (205 + h % 50) + "," + (80 + (h >> 8) % 130) + "," + (40 + (h >> 16) % 40) + ")");
}
function diffColour(a, b, ta, tb) {
	var d = (ta ? a / ta : 0) - (tb ? b / tb : 0), k = Math.min(1, Math.abs(d) * 8), g = Math.round(235 - 180 * k);
	return d > 0 ? "rgb(235," + g + "," + g + ")" : d < 0 ? "rgb(" + g + "," + g + ",235)" : "rgb(235,235,235)";
}

function drawFlame() {
	var cur = weigh(sel), bas = base ? weigh(base) : null, t = tree(cur, bas);
	var W = fg.clientWidth || 600, items = [], maxd = 0;
	// width: the share of the selection; with a baseline, the mean of both
	// shares, so what only the baseline had shows too (blue)
	var share = function (n) {
		var a = t.v[0] ? t.v[n] / t.v[0] : 0;
		return bas ? (a + (t.v2[0] ? t.v2[n] / t.v2[0] : 0)) / 2 : a;
	};
	(function walk(node, x, d) {
		var f = share(node);
		if (!(f * W >= 1)) return;	/* narrower than a pixel: not drawn */
		if (node) items.push([node, x, d, f]);
		if (d > maxd) maxd = d;
		var cx = x;
		for (var k = tFirst[node]; k >= 0; k = tNext[k]) { walk(k, cx, d + 1); cx += share(k); }
	})(0, 0, 0);
	// one innerHTML for all frames (names escaped), one listener for the
	// tooltips; root at the bottom as the report's flame graphs have it, in a
	// box at most 75% of the window high scrolled to the root: a tower
	// thousands of frames deep leaves the widest frames in sight
	fg.style.height = Math.max(maxd, 1) * 17 + "px";
	var html = new Array(items.length);
	for (var i = 0; i < items.length; i++) {
		var it = items[i], n = it[0], id = t.name[n];
		html[i] = '<div class="fr' + (nameHit && nameHit[id] ? " hit" : "") + '" data-i="' + i + '" style="left:' +
			(it[1] * 100) + "%;width:" + (it[3] * 100) + "%;top:" + ((maxd - it[2]) * 17) + "px;background:" +
			(bas ? diffColour(t.v[n], t.v2[n], t.v[0], t.v2[0]) : hue(id)) + '">' + esc(N[id]) + "</div>";
	}
	fg.innerHTML = html.join("");
	fg.scrollTop = fg.scrollHeight;
	fg.onmousemove = function (ev) {
		var i = ev.target.dataset ? ev.target.dataset.i : undefined;
		if (i === undefined) { tip.style.display = "none"; return; }
		var n = items[+i][0];
		tip.textContent = N[t.name[n]] + "\n" + unitOf(t.v[n]) + " (" + (t.v[0] ? 100 * t.v[n] / t.v[0] : 0).toFixed(2) + "%)" +
			(bas ? "\nbaseline: " + unitOf(t.v2[n]) + " (" + (t.v2[0] ? 100 * t.v2[n] / t.v2[0] : 0).toFixed(2) + "%)" : "");
		tip.style.display = "block"; tip.style.left = (ev.clientX + 12) + "px"; tip.style.top = (ev.clientY + 12) + "px";
	};
	fg.onmouseleave = function () { tip.style.display = "none"; };
	var range = function (s, w) { return (s ? fmtT(cellStartS(s.a)) + " – " + fmtT(cellEndS(s.b)) : "all " + fmtT(cols * colS)) + " · " + unitOf(w); };
	$("fgtitle").textContent = range(sel, cur.total) + (bas ? "  vs baseline " + range(base, bas.total) + "  (red grew, blue shrank)" : "");
	return cur;
}

function search() {
	var q = $("q").value, re = null;
	nameHit = stackHit = null;
	if (q) {
		try { re = new RegExp(q); } catch (e) { $("share").textContent = "bad regex"; return; }
		nameHit = new Uint8Array(N.length); stackHit = new Uint8Array(nstacks);
		for (var i = 0; i < N.length; i++) nameHit[i] = re.test(N[i]) ? 1 : 0;
		for (var s = 0; s < nstacks; s++)
			for (var k = 1, at = stackAt[s]; k <= frames[at]; k++) if (nameHit[frames[at + k]]) { stackHit[s] = 1; break; }
	}
}
function showShare(cur) {
	if (!stackHit) { $("share").textContent = ""; return; }
	var m = 0;
	for (var s = 0; s < nstacks; s++) if (stackHit[s]) m += cur.w[s];
	$("share").textContent = "matched: " + unitOf(m) + " of " + commas(cur.total) + " (" +
		(cur.total ? (100 * m / cur.total).toFixed(1) : "0.0") + "%)" + (sel ? " in the selection" : "");
}

function saveHash() {
	var p = [];
	if (sel) p.push("sel=" + sel.a + "-" + sel.b);
	if (base) p.push("base=" + base.a + "-" + base.b);
	if ($("q").value) p.push("q=" + encodeURIComponent($("q").value));
	if ($("flt").value) p.push("f=" + encodeURIComponent($("flt").value));
	history.replaceState(null, "", p.length ? "#" + p.join("&") : location.pathname + location.search);
}
function applyHash() {
	var h = location.hash.slice(1), f = "";
	h.split("&").forEach(function (kv) {
		var i = kv.indexOf("="), k = kv.slice(0, i), v = decodeURIComponent(kv.slice(i + 1));
		var m = /^(\d+)-(\d+)$/.exec(v), r = m ? { a: Math.min(+m[1], ncells - 1), b: Math.min(+m[2], ncells - 1) } : null;
		if (k === "sel" && r) sel = r;
		else if (k === "base" && r) base = r;
		else if (k === "q") $("q").value = v;
		else if (k === "f") f = v;
	});
	setFilter(f);
	update();
}

// A new selection: the cells' colours stay, the flame graph is redrawn.
function redraw() {
	drawHeat();
	if (!full) return;
	var cur = drawFlame();
	showShare(cur); saveHash();
}
// A new search or filter: the cells are counted again too.
function update() {
	search(); tally(); redraw();
}
$("q").addEventListener("input", update);
// For tests and the curious: where a cell is drawn (x, y, width, height on the canvas).
// select(a, b, baseline) selects cells a..b as a drag would, and returns the
// milliseconds it took to draw (the benchmark's number).
window.marpleScope = { rows: rows, cols: cols, cellBox: function (c) { var xy = cellXY(c); return [xy[0], xy[1], cw, ch]; },
	select: function (a, b, baseline) {
		var t = performance.now(), r = { a: Math.min(a, b), b: Math.max(a, b) };
		if (baseline) base = r; else sel = r;
		redraw(); void fg.offsetHeight;
		return performance.now() - t;
	} };
window.addEventListener("resize", function () { painted = null; drawHeat(); if (full) drawFlame(); });

// the heat map's arrays inflate while the page is read; the three big ones
// (together, each in its own stream) once the parser has passed them
var shown = Promise.all([Z.frames, Z.ncell, Z.cellw, Z.pstack, Z.pthread].map(unpack)).then(first);
var parsed = new Promise(function (ok) {
	if (document.readyState !== "loading") ok();
	else document.addEventListener("DOMContentLoaded", function () { ok(); });
});
Promise.all([shown, parsed.then(function () { return Promise.all([block("stack"), block("thread"), block("weight")].map(unpack)); })])
	.then(function (r) { rest(r[1]); }).catch(function (e) {
		$("status").textContent = "cannot read the data: " + e;
	});
})();
