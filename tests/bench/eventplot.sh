# eventplot.sh — a timeline of EVENTPLOT_EVENTS (default 10 million) scheduler
# events: 16 CPUs, 200 tasks switching at random (5 us apart on average, so
# about 50 s), made by awk and piped into marple-eventplot.  Prints the page's
# size per event, the time to make it, and from tests/bench/eventplot.js the
# time Chromium takes to open it and the slowest zoom and pan frames.
# Floors (issue 18): <= 8 bytes an event, loads in <= 5 s, frames < 100 ms.
. "$MARPLE_TOP/tests/lib.sh"
N=${EVENTPLOT_EVENTS:-10000000}
if [ ! -d "$MARPLE_TOP/tests/browser/node_modules/playwright-core" ] || [ ! -x /usr/bin/chromium ]; then
	echo "bench: eventplot: skipped (needs chromium and playwright-core: scripts/install-deps)"; exit 0
fi
t0=$(date +%s%N)
awk -v n="$N" 'BEGIN {
	srand(18); print "{\"marple\":1,\"interface\":\"cpusched\",\"datatype\":\"event\",\"track\":\"cpu\",\"start_ns\":0}"
	t = 0
	for (i = 0; i < 16; i++) cur[i] = 0
	for (i = 0; i < n; i++) {
		t += 1 + int(rand() * 10000); c = int(rand() * 16); nx = int(rand() * 200)
		p = cur[c]; cur[c] = nx
		printf "%d,sched_switch,cpu%d,comm=task%d,pid=%d,prev_comm=task%d,prev_pid=%d,prev_state=S,next_comm=task%d,next_pid=%d,next_prio=120\n", t, c, nx, 1000 + nx, p, 1000 + p, nx, 1000 + nx
	}
	printf "{\"trailer\":1,\"records\":%d,\"end_ns\":%d}\n", n, t
}' | marple-eventplot -o "$T/ep.html" || { echo "bench: eventplot: marple-eventplot failed"; exit 1; }
t1=$(date +%s%N)
bytes=$(wc -c < "$T/ep.html")
echo "bench: eventplot: $N events -> $bytes bytes: $(awk -v b="$bytes" -v n="$N" 'BEGIN { printf "%.2f", b / n }') bytes an event (floor: <= 8)"
echo "bench: eventplot: awk + marple-eventplot: $(( (t1 - t0) / 1000000 )) ms"
r=$(cd "$MARPLE_TOP/tests/bench" && node eventplot.js "$T/ep.html")
echo "bench: eventplot: chromium: $r"
echo "$r" | node -e '
let r = JSON.parse(require("fs").readFileSync(0, "utf8"));
if (r.error) { console.log("bench: eventplot: chromium failed: " + r.error); process.exit(0); }
console.log(`bench: eventplot: opens and draws in ${r.load_ms} ms (floor: <= 5000); phases ${JSON.stringify(r.load_phases_ms)}`);
for (const k of ["whole", "1/100", "1/100000"])
  console.log(`bench: eventplot: ${k} of the capture: slowest zoom frame ${r[k].zoom_ms.toFixed(1)} ms, pan ${r[k].pan_ms.toFixed(1)} ms (floor: < 100), ${r[k].summarized_tracks} of 16 tracks summarized per pixel`);'
