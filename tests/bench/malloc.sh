# malloc.sh — what tracing every malloc costs a malloc-heavy program
# (mallocbench: malloc + free in a loop, timed inside): untraced, with
# bpftrace's bare malloc counter (the reference: one uprobe, one map update),
# and with marple-mallocstacks and marple-memleak, with and without
# --sample-every.  All tracers attach to every process (as bpftrace does).
set -u
W="$MARPLE_BIN/workloads"
T=$(mktemp -d) && trap 'rm -rf "$T"; [ -n "${tr:-}" ] && kill "$tr" 2>/dev/null' EXIT
if [ "$(id -u)" -ne 0 ]; then echo "bench: malloc: skipped (not root)"; exit 0; fi
LIBC=$(awk '$6 ~ /\/libc\.so\.6$/ { print $6; exit }' /proc/self/maps)
N=${MALLOC_BENCH_N:-300000}

# best of 3 runs of the workload, ns per malloc+free
best() {
	b=
	for i in 1 2 3; do
		v=$("$W/mallocbench" "$N")
		b=$(awk -v a="${b:-}" -v v="$v" 'BEGIN { print (a == "" || v < a) ? v : a }')
	done
	echo "$b"
}
# run "$@" as the tracer, wait until it is attached, measure, stop it
traced() {
	rm -f "$T/ready"
	MARPLE_READY_FILE="$T/ready" "$@" > "$T/out" 2> "$T/err" & tr=$!
	i=0; while [ ! -e "$T/ready" ] && [ $i -lt 300 ]; do sleep 0.1; i=$((i + 1)); done
	r=$(best)
	kill -INT "$tr"; wait "$tr"; tr=
	echo "$r"
}

base=$(best)
echo "bench: malloc: untraced: $base ns per malloc+free"
# Floors, as multiples of bpftrace's overhead (one uprobe, no stack): a stack
# walk per call costs about one more trap's worth; memleak takes three traps
# per malloc+free (malloc entry and return, free) against bpftrace's one.
report() {	# NAME NS FLOOR_MULTIPLE
	awk -v n="$1" -v v="$2" -v b="$base" -v ref="${ref:-}" -v m="${3:-}" 'BEGIN {
		o = v - b; line = sprintf("bench: malloc: %s: %s ns per malloc+free (+%.0f ns, %.1fx untraced", n, v, o, v / b)
		if (ref != "" && ref > 0 && m != "")
			line = line sprintf(", overhead %.1fx bpftrace'"'"'s) (floor: overhead within %sx of bpftrace'"'"'s %.0f ns", o / ref, m, ref)
		print line ")" }'
}

if command -v bpftrace >/dev/null 2>&1; then
	rm -f "$T/bt.out"
	bpftrace -e "uprobe:$LIBC:malloc { @ = count(); }" > "$T/bt.out" 2>&1 & tr=$!
	i=0; while ! grep -q Attaching "$T/bt.out" 2>/dev/null && [ $i -lt 300 ]; do sleep 0.1; i=$((i + 1)); done
	sleep 0.5
	v=$(best)
	kill -INT "$tr"; wait "$tr"; tr=
	ref=$(awk -v v="$v" -v b="$base" 'BEGIN { printf "%.0f", v - b }')
	report "bpftrace uprobe malloc count (reference)" "$v"
else
	echo "bench: malloc: bpftrace not installed (reference missing)"
fi
report "marple-mallocstacks" "$(traced marple-mallocstacks)" 3
report "marple-mallocstacks --sample-every 100" "$(traced marple-mallocstacks --sample-every 100)" 1.5
report "marple-memleak" "$(traced marple-memleak)" 6
report "marple-memleak --sample-every 100" "$(traced marple-memleak --sample-every 100)" 4
