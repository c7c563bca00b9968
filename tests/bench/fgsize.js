// fgsize.js — bytes flamegraph.pl's markup would take for the frames of one
// of our SVGs (same frames, counts, positions and labels; its fixed per-frame
// template, its header and script not counted), to compare sizes.
'use strict';
const fs = require('fs');
const svg = fs.readFileSync(process.argv[2], 'utf8');
const N = JSON.parse(svg.match(/\nvar N=(\[.*?\]);\n/s)[1]);
const D = JSON.parse(svg.match(/\nvar D=(\[[^\]]*\]);/s)[1].replace(/\n/g, ''));
const C = svg.match(/var C=\{W:(\d+),XP:(\d+),FS:([\d.]+),FW:([\d.]+),FH:([\d.]+),T:([\d.e+]+),K:(\d)/);
const [W, XP, FS, FW, FH, T, K] = C.slice(1).map(Number);
const rects = [...svg.matchAll(/\n<rect x="([\d.]+)" y="(\d+)" width="([\d.]+)"[^>]*\/>(?:<text[^>]*>([^<]*)<\/text>)?(?=\n)/g)];
const esc = s => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
const commas = v => String(v).replace(/\B(?=(\d{3})+(?!\d))/g, ',');
let bytes = 0;
rects.forEach((m, i) => {
  const name = N[D[i * K]], count = D[i * K + 3];
  const x = +m[1], y = +m[2], w = +m[3], label = m[4] || '';
  bytes += Buffer.byteLength(`<g >\n<title>${esc(name)} (${commas(count)} samples, ${(100 * count / T).toFixed(2)}%)</title>` +
    `<rect x="${x.toFixed(1)}" y="${y}" width="${w.toFixed(1)}" height="${(FH - 1).toFixed(1)}" fill="rgb(200,100,50)" rx="2" ry="2" />\n` +
    `<text  x="${(x + 3).toFixed(2)}" y="${(y + 10.5).toFixed(1)}" >${label}</text>\n</g>\n`);
});
console.log(`${rects.length} ${bytes}`);
