# timed.sh — the time of every sample (--timed) and what it costs:
#  - marple-callstack --timed against untimed at 999 Hz while two burns keep
#    both cores busy: the BPF program's ns per sample (kernel bpf_stats) and
#    the collector's CPU per sample (floor: timed <= 1.2x untimed);
#  - a synthetic timed section of 10 million samples (64 CPUs x 99 Hz x 26 min,
#    5000 stacks drawn Zipf-like, each of one of 50 processes, run by one of
#    its 10 threads at random): marple-fold --from/--to on it
#    (floor: <= 1 s), marple-flamescope's page size (floor: <= 20,000,000 bytes), and in
#    Chromium the page's load to the heat map drawn (floor: <= 3 s), to its
#    stacks read too (selections work), and the flame graph of a range
#    selection (floor: <= 200 ms).
# SAMPLES=N changes the synthetic size.
set -u
T=$(mktemp -d) && trap 'rm -rf "$T"' EXIT
B="$MARPLE_BIN/workloads/burn"
N=${SAMPLES:-10000000}

# --- collector cost
bpf_ns() {	# bpf_ns [--timed]: "ns_per_sample samples collector_cpu_s"
	"$B" 1000000000 & b1=$!; "$B" 1000000000 & b2=$!
	rm -f "$T/ready"
	MARPLE_READY_FILE="$T/ready" /usr/bin/time -f "%U %S" -o "$T/cs.time" marple-callstack "$@" -F 999 5 > "$T/cs.marple" 2>/dev/null & p=$!
	i=0; while [ ! -e "$T/ready" ] && [ $i -lt 200 ]; do sleep 0.05; i=$((i + 1)); done
	sleep 4
	bpftool prog show name do_sample 2>/dev/null |
		sed -n 's/.* run_time_ns \([0-9]*\) run_cnt \([0-9]*\).*/\1 \2/p' | head -n 1 > "$T/stats"
	wait "$p"
	kill "$b1" "$b2"; wait "$b1" "$b2" 2>/dev/null
	read -r ns cnt < "$T/stats"
	cpu=$(awk '{ print $1 + $2 }' "$T/cs.time" | tail -n 1)
	echo "$((ns / cnt)) $cnt $cpu"
}
if [ "$(id -u)" -eq 0 ] && [ -w /proc/sys/kernel/bpf_stats_enabled ] && command -v bpftool >/dev/null; then
	old=$(cat /proc/sys/kernel/bpf_stats_enabled)
	echo 1 > /proc/sys/kernel/bpf_stats_enabled
	bu=999999 bt=999999
	for r in 1 2 3; do	# interleaved, best of 3
		set -- $(bpf_ns); [ "$1" -lt "$bu" ] && bu=$1 cu=$3 nu=$2
		set -- $(bpf_ns --timed); [ "$1" -lt "$bt" ] && bt=$1 ct=$3 nt=$2
	done
	echo "$old" > /proc/sys/kernel/bpf_stats_enabled
	# The floor is on the whole cost of a sample (what the machine pays: the
	# BPF program and the collector's CPU); the BPF part alone is shown too.
	whole_u=$(awk -v n="$bu" -v c="$cu" -v s="$nu" 'BEGIN { printf "%.0f", n + c * 1e9 / s }')
	whole_t=$(awk -v n="$bt" -v c="$ct" -v s="$nt" 'BEGIN { printf "%.0f", n + c * 1e9 / s }')
	echo "bench: timed: BPF program per sample at 999 Hz: untimed $bu ns, --timed $bt ns = $(awk -v a="$bt" -v b="$bu" 'BEGIN { printf "%.2f", a / b }')x"
	echo "bench: timed: whole cost per sample (BPF + collector CPU over a 5 s capture): untimed $whole_u ns, --timed $whole_t ns = $(awk -v a="$whole_t" -v b="$whole_u" 'BEGIN { printf "%.2f", a / b }')x (floor: <= 1.2x; $nu / $nt samples)"
else
	echo "bench: timed: collector cost skipped (needs root, bpf_stats and bpftool)"
fi

# --- a synthetic 10M-sample timed section: two passes of the same random
# sequence, the first for the stack weights, the second for the samples
gen() {
	awk -v n="$N" -v pass="$1" 'BEGIN {
		srand(7); start = 1000000000000; step = 1e9 / 6336; ns = 5000
		for (i = 0; i < n; i++) {
			# stack s is of process s % 50 (its root frame), run by one of its 10 threads
			s = int(ns * rand() ^ 3); p = s % 50; th = p + 50 * int(10 * rand())
			if (pass == 1) w[s]++
			else printf "%.0f,sample,cpu%d,stack=%d,pid=%d,tid=%d\n", start + i * step, i % 64, s, 1000 + p, 1000 + th
		}
		if (pass == 1) {
			printf "{\"marple\":1,\"interface\":\"callstack\",\"datatype\":\"stack\",\"timed\":\"stacks\",\"start_ns\":%.0f,\"units\":{\"weight\":\"samples\"}}\n", start
			for (s = 0; s < ns; s++) {
				f = "app" (s % 50) ";_start;main;run;module" int(s / 250)
				for (d = 0; d < 6 + s % 20; d++) f = f ";fn_" int(s / (d + 2)) "_" d
				printf "%d#%s\n", w[s], f
			}
			printf "{\"trailer\":1,\"records\":%d}\n", ns
			printf "{\"marple\":1,\"interface\":\"callstack\",\"datatype\":\"event\",\"timed\":\"samples\",\"start_ns\":%.0f}\n", start
		} else printf "{\"trailer\":1,\"records\":%d,\"lost\":0}\n", n
	}'
}
gen 1 > "$T/big.marple"
gen 2 >> "$T/big.marple"
mb=$(( $(wc -c < "$T/big.marple") / 1048576 ))
# CPU time (user + sys, ours alone on a shared machine) is what the floor
# holds; elapsed time and the load average are printed beside it.
# Best of 3; the first run's CPU is printed too: on this VM the page cache
# does not always keep a just-written 524 MiB file, and filling it again is
# system time charged to the first reader.
best=999999 first=
for r in 1 2 3; do
	s=$(date +%s%N)
	/usr/bin/time -f "%U %S" -o "$T/fold.time" marple-fold --from 600 --to 660 "$T/big.marple" > "$T/range.folded" 2>/dev/null
	e=$(date +%s%N)
	c=$(awk '{ printf "%.0f", ($1 + $2) * 1000 }' "$T/fold.time" | tail -n 1)
	[ -n "$first" ] || first=$c
	[ "$c" -lt "$best" ] && best=$c el=$(( (e - s) / 1000000 ))
done
cpu=$best
echo "bench: timed: marple-fold --from 600 --to 660 on $N samples ($mb MiB): CPU $cpu ms, best of 3 (floor: <= 1000 ms; first run $first ms), elapsed $el ms, load $(cut -d' ' -f1 /proc/loadavg)"
s=$(date +%s%N); marple-flamescope -o "$T/big.html" "$T/big.marple" 2>/dev/null; e=$(date +%s%N)
echo "bench: timed: marple-flamescope on $N samples: page $(wc -c < "$T/big.html") bytes (floor: <= 20000000 bytes, 20 MB), written in $(( (e - s) / 1000000 )) ms"
if command -v node >/dev/null 2>&1 && [ -d "$MARPLE_TOP/tests/browser/node_modules/playwright-core" ]; then
	# three loads; each line: drawn, loaded, a selection's median and worst (ms)
	for r in 1 2 3; do node "$MARPLE_TOP/tests/bench/flamescope.js" "$T/big.html" || break; done > "$T/loads"
	if [ "$(wc -l < "$T/loads")" -eq 3 ]; then
		set -- $(sort -n -k2 "$T/loads" | sed -n 2p)
		echo "bench: timed: flamescope page in Chromium, the median of 3 loads ($(cut -d' ' -f2 "$T/loads" | tr '\n' ' ' | sed 's/ $//') ms): heat map drawn $1 ms after navigation began, stacks read too (selections work: the page is loaded) at $2 ms (floor: <= 3000 ms); a range's flame graph: median $3 ms, worst $4 ms of 10 (floor: <= 200 ms); load $(cut -d' ' -f1 /proc/loadavg)"
	fi
else
	echo "bench: timed: Chromium measurements skipped (no node or playwright-core)"
fi
