(function () {
  var P = SP, hot = document.getElementById('sp-hover'), cur = document.getElementById('sp-cursor');
  function num(v) { return +v.toPrecision(4) + ''; }
  hot.addEventListener('mousemove', function (evt) {
    var p = marpleSvgPoint(evt), best = 0;
    for (var i = 1; i < P.px.length; i++) if (Math.abs(P.px[i] - p.x) < Math.abs(P.px[best] - p.x)) best = i;
    cur.setAttribute('x1', P.px[best]); cur.setAttribute('x2', P.px[best]);
    cur.setAttribute('visibility', 'visible');
    var lines = ['time ' + marpleTime(P.xs[best] * 1e9, 4)], total = 0;
    for (var b = P.bands.length - 1; b >= 0; b--) {
      lines.push(P.bands[b].name + ': ' + num(P.bands[b].v[best]) + (P.unit ? ' ' + P.unit : ''));
      total += P.bands[b].v[best];
    }
    lines.push('total: ' + num(total) + (P.unit ? ' ' + P.unit : ''));
    marpleTip(evt, lines);
  });
  hot.addEventListener('mouseleave', function () { marpleTipHide(); cur.setAttribute('visibility', 'hidden'); });
})();
