// timefmt.js — times and durations as every page shows them, the same as
// lib/render/timefmt.c prints its axes: the unit by magnitude (ns, µs, ms,
// s), sig significant digits (default 3), trailing zeros dropped.
function marpleTimeUnit(ns) {
  var a = Math.abs(ns);
  if (a >= 1e9) return [1e9, 's'];
  if (a >= 1e6) return [1e6, 'ms'];
  if (a >= 1e3) return [1e3, '\u00b5s'];
  if (a > 0) return [1, 'ns'];
  return [1e9, 's'];
}
function marpleTime(ns, sig) {
  sig = Math.min(15, Math.max(1, sig || 3));
  if (!isFinite(ns)) return isNaN(ns) ? '?' : ns > 0 ? '\u221e' : '-\u221e';
  var u = marpleTimeUnit(ns), v = ns / u[0];
  var before = Math.abs(v) >= 1 ? Math.floor(Math.log10(Math.abs(v))) + 1 : 1;
  var num = v.toFixed(Math.max(0, sig - before));
  if (u[0] < 1e9 && Math.abs(+num) >= 1000) return marpleTime((ns < 0 ? -1 : 1) * 1000 * u[0], sig);
  if (num.indexOf('.') >= 0) num = num.replace(/0+$/, '').replace(/\.$/, '');
  if (num === '-0') num = '0';
  return num + ' ' + u[1];
}
// The same unit, with as many decimals as a resolution of res ns needs (a
// time on an axis of 20 ms rows: marpleTimeRes(t, 1e6) -> "1560.02 s").
function marpleTimeRes(ns, res) {
  var u = marpleTimeUnit(ns);
  var d = res > 0 ? Math.min(9, Math.max(0, Math.ceil(Math.log10(u[0] / res) - 1e-9))) : 3;
  var num = (ns / u[0]).toFixed(d);
  if (num.indexOf('.') >= 0) num = num.replace(/0+$/, '').replace(/\.$/, '');
  if (num === '-0') num = '0';
  return num + ' ' + u[1];
}
