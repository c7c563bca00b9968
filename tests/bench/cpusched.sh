# cpusched.sh — marple-cpusched under `perf bench sched pipe` pinned to one CPU:
# events lost at the switch rate reached (floor: 0 at >= 300,000 switches/s
# with the default buffers) and the benchmark's slowdown compared with
# `perf sched record`'s (floor: at most half of it).  Needs root.
set -u
T=$(mktemp -d) && trap 'rm -rf "$T"' EXIT
if [ "$(id -u)" -ne 0 ]; then echo "bench: cpusched: skipped (needs root)"; exit 0; fi
LOOPS=${LOOPS:-300000}
usop() { sed -n 's/^ *\([0-9.]*\) usecs\/op.*/\1/p' "$1"; }
best() { sort -n | head -n 1; }

for i in 1 2 3; do taskset -c 0 perf bench sched pipe -l "$LOOPS" > "$T/b$i" 2>&1; usop "$T/b$i"; done | best > "$T/base"
base=$(cat "$T/base")

: > "$T/traced"; : > "$T/rates"; lost_all=0
for i in 1 2 3; do
	rm -f "$T/ready"
	MARPLE_READY_FILE="$T/ready" /usr/bin/time -f '%U %S' -o "$T/cpu$i" marple-cpusched > "$T/cs" 2> "$T/cs.err" &
	pid=$!
	n=0; while [ ! -e "$T/ready" ] && [ $n -lt 100 ]; do sleep 0.1; n=$((n + 1)); done
	taskset -c 0 perf bench sched pipe -l "$LOOPS" > "$T/t" 2>&1
	# time(1) ignores SIGINT: signal the collector it runs
	kill -INT $(cat /proc/$pid/task/$pid/children) 2>/dev/null; wait $pid
	u=$(usop "$T/t"); echo "$u" >> "$T/traced"
	lost=$(sed -n 's/.*"lost":\([0-9]*\).*/\1/p' "$T/cs" | tail -n 1)
	lost_all=$((lost_all + ${lost:-0}))
	recs=$(grep -c '^[0-9]' "$T/cs")
	echo "$recs $(tail -n 1 "$T/cpu$i")" >> "$T/cost"
	# two switches per op, while the benchmark ran
	awk -v u="$u" 'BEGIN { printf "%d\n", 2000000 / u }' >> "$T/rates"
done
traced=$(best < "$T/traced")

# the same with perf buffers (libbpf wakes the reader for every record)
rm -f "$T/ready"
MARPLE_READY_FILE="$T/ready" marple-cpusched --perf-buffer > "$T/pb" 2>/dev/null &
pid=$!
n=0; while [ ! -e "$T/ready" ] && [ $n -lt 100 ]; do sleep 0.1; n=$((n + 1)); done
taskset -c 0 perf bench sched pipe -l $((LOOPS / 10)) > "$T/pbt" 2>&1
kill -INT $pid; wait $pid
pbus=$(usop "$T/pbt")

for i in 1 2 3; do
	(cd "$T" && perf sched record -o "$T/perf.data" -- taskset -c 0 perf bench sched pipe -l "$LOOPS" > "$T/p$i" 2>&1)
	usop "$T/p$i"
done | best > "$T/perf"
perf=$(cat "$T/perf")
perfsize=$(du -k "$T/perf.data" 2>/dev/null | cut -f1)
rate=$(sort -n "$T/rates" | head -n 1 | cut -d' ' -f1)
cost=$(awk '{ e += $1; c += $2 + $3 } END { if (e) printf "%.2f", c * 1e6 / e; else print "?" }' "$T/cost")
nrec=$(awk '{ e += $1 } END { print e }' "$T/cost")

awk -v b="$base" -v t="$traced" -v p="$perf" -v r="$rate" -v l="$lost_all" -v ps="${perfsize:-0}" -v cost="$cost" -v nrec="$nrec" -v pb="$pbus" 'BEGIN {
	ot = (t / b - 1) * 100; op = (p / b - 1) * 100
	printf "bench: cpusched: perf bench sched pipe baseline: %.3f us/op\n", b
	printf "bench: cpusched: lost events in 3 runs at >= %d switches/s: %d (floor: 0 at >= 300000 switches/s)\n", r, l
	printf "bench: cpusched: collector CPU time (user+sys, merging and formatting): %s us per event over %d events\n", cost, nrec
	printf "bench: cpusched: slowdown: %.3f us/op, +%.1f%% vs perf sched record %.3f us/op, +%.1f%% (%d KiB) (floor: at most half, +%.1f%%)\n", t, ot, p, op, ps, op / 2
	printf "bench: cpusched: with --perf-buffer instead of ring buffers: %.3f us/op, +%.1f%%\n", pb, (pb / b - 1) * 100
}'
