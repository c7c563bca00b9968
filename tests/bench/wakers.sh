# wakers.sh — what marple-offcpu's --runq and --wakers cost: `perf bench sched
# pipe` pinned to one CPU (two threads waking each other through pipes, two
# switches per op) under no tracing, marple-offcpu (system-wide), --runq,
# --wakers -m 0 (every block sent with its waker), and `perf sched record`,
# in the same run; the best of 3 of each, in us per op, with the switch rate
# the untraced benchmark reached.  Needs root.
set -u
T=$(mktemp -d) && trap 'rm -rf "$T"' EXIT
if [ "$(id -u)" -ne 0 ]; then echo "bench: wakers: skipped (needs root)"; exit 0; fi
LOOPS=${LOOPS:-100000}
usop() { sed -n 's/^ *\([0-9.]*\) usecs\/op.*/\1/p' "$1"; }
best() { sort -n | head -n 1; }
pipe() { taskset -c 0 perf bench sched pipe -l "$LOOPS" > "$T/b" 2>&1; usop "$T/b"; }

# traced OPTIONS...: the benchmark's best us/op under marple-offcpu OPTIONS
traced() {
	for i in 1 2 3; do
		rm -f "$T/ready"
		MARPLE_READY_FILE="$T/ready" marple-offcpu "$@" > "$T/oc" 2> "$T/oc.err" &
		pid=$!
		n=0; while [ ! -e "$T/ready" ] && [ $n -lt 300 ]; do sleep 0.1; n=$((n + 1)); done
		pipe
		kill -INT "$pid"; wait "$pid"
	done | best
}

base=$(for i in 1 2 3; do pipe; done | best)
plain=$(traced)
runq=$(traced --runq)
wakers=$(traced --wakers -m 0)
lost=$(sed -n 's/.*"waker_lost":\([0-9]*\).*/\1/p' "$T/oc" | tail -n 1)
perf=$(for i in 1 2 3; do
	(cd "$T" && perf sched record -o "$T/perf.data" -- taskset -c 0 perf bench sched pipe -l "$LOOPS" > "$T/p" 2>&1)
	usop "$T/p"; done | best)

awk -v b="$base" -v o="$plain" -v r="$runq" -v w="$wakers" -v p="$perf" -v l="${lost:-?}" 'BEGIN {
	printf "bench: wakers: perf bench sched pipe, one CPU: %.3f us/op untraced (%d switches/s)\n", b, 2e6 / b
	printf "bench: wakers: marple-offcpu:            %.3f us/op, +%.1f%%\n", o, (o / b - 1) * 100
	printf "bench: wakers: marple-offcpu --runq:     %.3f us/op, +%.1f%%\n", r, (r / b - 1) * 100
	printf "bench: wakers: marple-offcpu --wakers -m 0: %.3f us/op, +%.1f%% (last run: %s blocks lost their waker)\n", w, (w / b - 1) * 100, l
	printf "bench: wakers: perf sched record:        %.3f us/op, +%.1f%%\n", p, (p / b - 1) * 100
}'
