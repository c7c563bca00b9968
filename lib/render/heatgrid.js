(function () {
  var P = HM, map = document.getElementById('hm-cells');
  var det = document.getElementById('hm-details'), sel = null;
  function num(v) { return +v.toPrecision(6) + ''; }
  function val(v) { return P.unit_ns ? marpleTime(v * P.unit_ns, 4) : num(v) + (P.unit ? ' ' + P.unit : ''); }
  // "10\u201320 ms": a range names its unit once when both ends share it
  function span(a, b, ns) {
    var x = ns ? marpleTime(a, 4) : num(a), y = ns ? marpleTime(b, 4) : num(b);
    var u = ns ? marpleTimeUnit(b)[1] : P.unit;
    if (ns && (a === 0 || marpleTimeUnit(a)[1] === u)) x = x.replace(/ \S+$/, '');
    return x + '\u2013' + y + (!ns && u ? ' ' + u : '');
  }
  function vspan(a, b) { return P.unit_ns ? span(a * P.unit_ns, b * P.unit_ns, true) : span(a, b, false); }
  function trange(c) {
    var a = (P.c0 + c) * P.colw, b = a + P.colw;
    var s = 'time ' + (P.colw != 1 || P.offset ? span(a * 1e9, b * 1e9, true) : marpleTime(a * 1e9, 4));
    if (P.wall0 !== null) s += ' (' + new Date(P.wall0 + a * 1000).toLocaleTimeString() + ')';
    return s;
  }
  function vrange(r) {
    if (P.edges && P.edges[r + 1] === null) return 'value \u2265 ' + val(P.edges[r]) + ' (the clipped top row)';
    if (P.edges) return 'value ' + vspan(P.edges[r], P.edges[r + 1]);
    if (P.offset) return 'offset ' + vspan(r * P.rowstep, (r + 1) * P.rowstep);
    return 'value ' + vspan(P.minv + r * P.rowstep, P.minv + (r + 1) * P.rowstep);
  }
  function cell(evt) { var t = evt.target; return t.getAttribute && t.hasAttribute('data-n') ? t : null; }
  map.addEventListener('mousemove', function (evt) {
    var t = cell(evt); if (!t) { marpleTipHide(); return; }
    var c = +t.getAttribute('data-c'), r = +t.getAttribute('data-r');
    marpleTip(evt, [trange(c), vrange(r), 'count ' + t.getAttribute('data-n') + ' ' + P.what]);
  });
  map.addEventListener('mouseleave', function () { marpleTipHide(); });
  function line(text, y, cls) {
    var e = document.createElementNS('http://www.w3.org/2000/svg', 'text');
    e.setAttribute('x', P.x0 + 8); e.setAttribute('y', y); e.setAttribute('class', cls || 'boxtext');
    e.textContent = text; det.appendChild(e); return e;
  }
  P.iso = null;
  function applyIso() {
    var rs = map.querySelectorAll('rect[data-n]');
    for (var i = 0; i < rs.length; i++) {
      var d = ' ' + (rs[i].getAttribute('data-d') || '');
      if (P.iso === null || d.indexOf(' ' + P.iso + ':') >= 0) rs[i].removeAttribute('opacity');
      else rs[i].setAttribute('opacity', '0.12');
    }
  }
  map.addEventListener('click', function (evt) {
    var t = cell(evt); if (!t) return;
    if (sel) sel.removeAttribute('stroke');
    sel = t; t.setAttribute('stroke', '#000');
    while (det.lastChild) det.removeChild(det.lastChild);
    var c = +t.getAttribute('data-c'), r = +t.getAttribute('data-r'), n = +t.getAttribute('data-n');
    var items = [], d = t.getAttribute('data-d'), o = +(t.getAttribute('data-o') || 0);
    if (d) d.split(' ').forEach(function (kv) { var p = kv.split(':'); items.push([P.names[+p[0]], +p[1], +p[0]]); });
    items.sort(function (a, b) { return b[1] - a[1] || (a[0] < b[0] ? -1 : 1); });
    if (o) items.push(['(others)', o]);
    var bg = document.createElementNS('http://www.w3.org/2000/svg', 'rect');
    bg.setAttribute('class', 'box'); bg.setAttribute('x', P.x0); bg.setAttribute('y', P.dety);
    bg.setAttribute('width', P.detw); bg.setAttribute('height', 22 + 14 * items.length);
    det.appendChild(bg);
    line('Distribution details: ' + trange(c) + ', ' + vrange(r) + ': ' + n + ' ' + P.what, P.dety + 15, 'boxtext hm-dtitle');
    items.forEach(function (it, i) {
      var e = line((it[0] === '' ? '(no name)' : it[0]) + ': ' + it[1] + ' (' + (100 * it[1] / n).toFixed(1) + '%)', P.dety + 30 + 14 * i, 'boxtext hm-ditem');
      if (it.length < 3) return;
      e.setAttribute('data-id', it[2]); e.style.cursor = 'pointer';
      if (P.iso === it[2]) e.setAttribute('font-weight', 'bold');
      e.addEventListener('click', function () {
        P.iso = P.iso === it[2] ? null : it[2]; applyIso();
        var ds = det.querySelectorAll('.hm-ditem');
        for (var k = 0; k < ds.length; k++)
          if (P.iso !== null && ds[k].getAttribute('data-id') == P.iso) ds[k].setAttribute('font-weight', 'bold'); else ds[k].removeAttribute('font-weight');
      });
    });
  });
})();
