# drain.sh — what draining costs: marple-callstack -F 999 for 10 s, system-wide,
# over two burn loops and a tar|gzip loop (many distinct stacks), with its maps
# drained every second (the default) and read only at the end
# (--drain-every 0), and drained with a store of 1024 stacks a set (so that
# they are drained ~10 times a second).  The whole cost per sample: the
# collector's CPU time (user + system, from its start to its output, symbols
# included) plus its BPF program's time (the trailer's sampling.program_ns),
# divided by the samples taken.  Configurations interleaved, best of
# BENCH_REPS (3).
set -u
T=$(mktemp -d)
B="$MARPLE_BIN/workloads/burn"
REPS=${BENCH_REPS:-3}
busy() { while :; do tar cf - /usr/share/doc 2>/dev/null | gzip -1 > /dev/null; done; }
busy & b0=$!
( while :; do "$B" 3000 > /dev/null; done ) & b1=$!
( while :; do "$B" 3000 > /dev/null; done ) & b2=$!
trap 'kill $b0 $b1 $b2 2>/dev/null; rm -rf "$T"' EXIT
sleep 1

# cost CONFIG ARGS...: ns per sample of one 10 s capture; $T/CONFIG.out kept
cost() {
	cfg=$1; shift
	/usr/bin/time -f "%U %S" -o "$T/$cfg.time" marple-callstack -F 999 "$@" 10 > "$T/$cfg.out" 2>/dev/null
	read -r u s < "$T/$cfg.time"
	awk -v u="$u" -v s="$s" '/^\{"trailer"/ {
		n = $0; sub(/.*"samples":/, "", n); sub(/[^0-9].*/, "", n)
		p = $0; sub(/.*"program_ns":/, "", p); sub(/[^0-9].*/, "", p)
		d = $0; sub(/.*"dropped":/, "", d); sub(/[^0-9].*/, "", d)
		printf "%.0f %d %d\n", ((u + s) * 1e9 + p) / n, n, d; exit }' "$T/$cfg.out"
}

for rep in $(seq "$REPS"); do
	for cfg in drained atend tiny; do
		case $cfg in
		drained) r=$(cost $cfg) ;;
		atend) r=$(cost $cfg --drain-every 0) ;;
		tiny) r=$(cost $cfg --stack-storage 1024) ;;
		esac
		set -- $r
		eval "prev=\${best_$cfg:-}"
		if [ -z "$prev" ] || [ "$1" -lt "$prev" ]; then eval "best_$cfg=$1 n_$cfg=$2 d_$cfg=$3"; fi
	done
done
echo "bench: drain: callstack -F 999 10 s, whole cost per sample read at the end (--drain-every 0): $best_atend ns ($n_atend samples, dropped $d_atend)"
echo "bench: drain: drained every 1 s (default): $best_drained ns ($n_drained samples, dropped $d_drained): $(awk -v a="$best_drained" -v b="$best_atend" 'BEGIN { printf "%.2f", a / b }')x (floor: 1.1x)"
echo "bench: drain: 1024 stacks a set, drained as they fill: $best_tiny ns ($n_tiny samples, dropped $d_tiny): $(awk -v a="$best_tiny" -v b="$best_atend" 'BEGIN { printf "%.2f", a / b }')x"
