# wakecost.sh — what tracing every switch costs at a set rate, ~20,000
# switches a second (tests/workloads/pingpace, 3 s, not pinned: two cores):
# marple-offcpu, with and without --wakers, beside perf sched record, on the
# same load in the same run, as CPU time: the load's own (the programs on
# sched_switch and sched_waking run in its threads' context: their cost per
# switch of the load) and the tracer's user space (start-up left out), each
# through tests/bench/cputime.py; the best of 3 of each.  The tracers are
# system-wide: the machine's switch rate (other work included) is printed
# too, as what the tracer's own CPU time was spent on; and the stages of
# the BPF time of a switch-out (the trailer's "stages").  Needs root.
set -u
T=$(mktemp -d) && trap 'rm -rf "$T"' EXIT
if [ "$(id -u)" -ne 0 ]; then echo "bench: wakecost: skipped (needs root)"; exit 0; fi

SECS=3
RATE=${RATE:-20000}
load() { python3 "$MARPLE_TOP/tests/bench/cputime.py" "$T/ld" "$MARPLE_BIN/workloads/pingpace" "$SECS" "$RATE" 2> "$T/ld.err"; }
ctxt() { sed -n 's/^ctxt //p' /proc/stat; }
# paced NAME CMD...: "load_ms tracer_ms load_switches_per_s machine_switches_per_s", best of 3 by load + tracer
paced() {
	for i in 1 2 3; do
		rm -f "$T/tr.ready"
		python3 "$MARPLE_TOP/tests/bench/cputime.py" "$T/tr" "$@" > "$T/tr.out" 2> "$T/tr.err" &
		tp=$!
		n=0; while [ ! -e "$T/tr.ready" ] && [ $n -lt 300 ]; do sleep 0.1; n=$((n + 1)); done
		c0=$(ctxt); load; c1=$(ctxt)
		wait "$tp"
		awk -v c0="$c0" -v c1="$c1" -v s="$SECS" '
			FILENAME ~ /ld$/ { l = ($1 + $2) * 1000 }
			FILENAME ~ /tr$/ { t = ($1 + $2 - $3) * 1000 }
			FILENAME ~ /ld.err$/ { for (i = 1; i < NF; i++) if ($i == "per_s") r = $(i + 1) }
			END { printf "%.1f %.1f %d %d\n", l, t, r, (c1 - c0) / s }' "$T/ld" "$T/tr" "$T/ld.err"
	done | sort -k1,1n -k2,2n | awk '{ print $1 + $2, $0 }' | sort -n | head -n 1 | cut -d' ' -f2-
}
base=$(for i in 1 2 3; do c0=$(ctxt); load; c1=$(ctxt)
	awk -v c0="$c0" -v c1="$c1" -v s="$SECS" '
		FILENAME ~ /ld$/ { l = ($1 + $2) * 1000 }
		FILENAME ~ /ld.err$/ { for (i = 1; i < NF; i++) if ($i == "per_s") r = $(i + 1) }
		END { printf "%.1f 0 %d %d\n", l, r, (c1 - c0) / s }' "$T/ld" "$T/ld.err"; done | sort -n | head -n 1)
# a tracer's capture outlasts the load by a second either side
DUR=$((SECS + 2))
p_plain=$(paced marple-offcpu "$DUR")
stages=$(grep -o '"stages":{[^}]*}' "$T/tr.out" | tail -n 1)
p_wakers=$(paced marple-offcpu --wakers "$DUR")
wk=$(grep -o '"wakers":{[^}]*}' "$T/tr.out" | tail -n 1)
p_perf=$(paced perf sched record -a -o "$T/perf.data" -- sleep "$DUR")
for row in "untraced|$base" "marple-offcpu|$p_plain" "marple-offcpu --wakers|$p_wakers" "perf sched record -a|$p_perf"; do
	echo "$row"
done | awk -F'|' -v secs="$SECS" 'NR == 1 { split($2, b, " ") } {
	split($2, v, " ")
	inload = v[1] - b[1]
	printf "bench: wakecost: %-24s load %7.1f ms CPU (%+6.1f: %5.2f us a switch of its %d/s), tracer %8.1f ms CPU (machine: %d switches/s)\n",
		$1, v[1], inload, v[3] ? inload * 1000 / (v[3] * secs) : 0, v[3], v[2], v[4]
}'
echo "bench: wakecost: --wakers, its last run's trailer: ${wk:-none}"
echo "bench: wakecost: marple-offcpu, where a switch-out's BPF time goes (ns, its last run): ${stages:-none}"
