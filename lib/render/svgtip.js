var marpleTipG = document.getElementById('marple-tip');
function marpleSvgPoint(evt) {
  var svg = marpleTipG.ownerSVGElement, p = svg.createSVGPoint();
  p.x = evt.clientX; p.y = evt.clientY;
  return p.matrixTransform(svg.getScreenCTM().inverse());
}
function marpleTip(evt, lines) {
  var ns = 'http://www.w3.org/2000/svg', svg = marpleTipG.ownerSVGElement;
  var t = marpleTipG.querySelector('text'), r = marpleTipG.querySelector('rect');
  while (t.firstChild) t.removeChild(t.firstChild);
  for (var i = 0; i < lines.length; i++) {
    var s = document.createElementNS(ns, 'tspan');
    s.setAttribute('x', 6); s.setAttribute('dy', i ? '1.25em' : '1.1em');
    s.textContent = lines[i]; t.appendChild(s);
  }
  marpleTipG.setAttribute('visibility', 'visible');
  var b = t.getBBox(), p = marpleSvgPoint(evt);
  r.setAttribute('width', b.width + 12); r.setAttribute('height', b.height + 8);
  var vb = svg.viewBox.baseVal, x = p.x + 14, y = p.y + 14;
  if (x + b.width + 12 > vb.width) x = Math.max(0, p.x - b.width - 20);
  if (y + b.height + 8 > vb.height) y = Math.max(0, p.y - b.height - 16);
  marpleTipG.setAttribute('transform', 'translate(' + x + ',' + y + ')');
}
function marpleTipHide() { marpleTipG.setAttribute('visibility', 'hidden'); }
