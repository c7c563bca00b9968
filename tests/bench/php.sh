# php.sh — PHP frames in marple-callstack's stacks, on Debian's own php8.2
# running tests/workloads/phpchain.php: a call chain in one loop (chain), a
# callback through C (usort: sort) and recursion (recurse).  For each,
# `marple-callstack -F 499 -p PID` for PHP_BENCH_SECS (default 5).  Prints:
# - the share of the samples that carry the expected chain, file:line on
#   every PHP frame, _start at the bottom (floor 95%);
# - the share of PHP frames whose line is one the frame can be at (crunch's
#   loop 11-12, settle 27, settle_sorted 32, Order::by_size 21, descend 38, {main}
#   its loop 52-60) (floor 99%);
# - the cost a sample with PHP frames and with --no-python (which leaves
#   every interpreter native) on the chain workload, PHP_BENCH_COST_SECS
#   (default 6) at -F 999, PHP_BENCH_COST_RUNS (default 3) runs each: BPF
#   run time and the collector's CPU (start-up included) a sample, the ratio
#   of their sums (floor 1.3x), and the walks' own BPF time a sample; the
#   collector's start-up apart, and the ratio after it.
set -u
SECS=${PHP_BENCH_SECS:-5}
PHP=/usr/bin/php8.2
[ "$(id -u)" = 0 ] && [ -x "$PHP" ] && [ "$("$PHP" -r 'echo PHP_MAJOR_VERSION, ".", PHP_MINOR_VERSION;' 2>/dev/null)" = 8.2 ] ||
	{ echo "bench: php: skipped (needs root and Debian's php8.2: scripts/install-deps)"; exit 0; }
T=$(mktemp -d); trap 'rm -rf "$T"' EXIT
F=$T/work.php
cp "$MARPLE_TOP/tests/workloads/phpchain.php" "$F"

# run MODE SECS SUFFIX [collector options...]
run() {
	m=$1 secs=$2 suffix=$3; shift 3
	rm -f "$T/ready"
	nice -n "${PRIO:-0}" "$PHP" "$F" $((secs + 60)) "$m" "$T/ready" & php=$!
	i=0; while [ ! -e "$T/ready" ] && [ $i -lt 300 ]; do sleep 0.1; i=$((i + 1)); done
	/usr/bin/python3 "$MARPLE_TOP/tests/bench/cputime.py" "$T/$m$suffix.time" marple-callstack -p "$php" "$@" "$secs" \
		> "$T/$m$suffix.out" 2> "$T/$m$suffix.err"
	kill "$php" 2>/dev/null; wait "$php" 2>/dev/null
}

trailer_num() {
	sed -n "s/.*\"trailer\":1.*\"$2\":\([0-9.]*\).*/\1/p" "$1" | head -n 1
}

P='[ ][(][^)]*[)]'
expect() {
	case $1 in
	chain) echo "^php8[.]2;_start;.*;zend_execute;[{]main[}]$P;settle$P;crunch$P(;[^;(]+)*\$" ;;
	sort) echo "^php8[.]2;_start;.*;zend_execute;[{]main[}]$P;settle_sorted$P;usort(;[^;(]+)*(;Order::by_size$P(;[^;(]+)*)?\$" ;;
	recurse) D=";descend$P"; echo "^php8[.]2;_start;.*;zend_execute;[{]main[}]$P$D$D$D$D$D$D$D$D$D;crunch$P(;[^;(]+)*\$" ;;
	esac
}

echo "bench: php: load average $(cut -d' ' -f1-3 /proc/loadavg)"
for m in chain sort recurse; do
	run "$m" "$SECS" "" -F 499
	awk -v re="$(expect "$m")" -v m="$m" 'index($0, "#") && substr($0, 1, 1) != "{" {
		n = substr($0, 1, index($0, "#") - 1); s = substr($0, index($0, "#") + 1)
		gsub(/#[0-9a-f]+;/, ";", s); sub(/#[0-9a-f]+$/, "", s)
		total += n; if (s ~ re) hit += n
		k = split(s, fr, ";")
		for (i = 1; i <= k; i++) {
			if (fr[i] !~ /[ ][(][^)]*[)]$/) continue
			frames += n
			if (fr[i] ~ /^crunch [(].*:1[12][)]$/ || fr[i] ~ /^settle [(].*:27[)]$/ ||
			    fr[i] ~ /^settle_sorted [(].*:32[)]$/ || fr[i] ~ /^Order::by_size [(].*:21[)]$/ ||
			    fr[i] ~ /^descend [(].*:38[)]$/ || fr[i] ~ /^[{]main[}] [(].*:(5[2-9]|60)[)]$/) good += n
		}
	}
	END { printf "bench: php: %s: %.1f%% of %d samples carry the chain with file:line and _start (floor: 95%%); %.2f%% of %d PHP frames at a right line (floor: 99%%)\n",
		m, total ? 100 * hit / total : 0, total, frames ? 100 * good / frames : 0, frames }' "$T/$m.out"
done

COST_SECS=${PHP_BENCH_COST_SECS:-6}; RUNS=${PHP_BENCH_COST_RUNS:-3}
# cost OUT TIME: "samples bpf_ns_a_sample collector_ns_a_sample
# collector_ns_a_sample_after_start-up start-up_ms"
cost() {
	read -r u s st < "$2"
	n=$(trailer_num "$1" samples); p=$(trailer_num "$1" program_ns)
	awk -v u="$u" -v s="$s" -v st="${st:-0}" -v n="${n:-0}" -v p="${p:-0}" 'BEGIN {
		if (n > 0) printf "%d %.0f %.0f %.0f %.0f\n", n, p / n, (u + s) * 1e9 / n, (u + s - st) * 1e9 / n, st * 1e3
		else print "0 0 0 0 0" }'
}
r=1
while [ $r -le "$RUNS" ]; do
	PRIO=-20 run chain "$COST_SECS" .cost -F 999
	PRIO=-20 run chain "$COST_SECS" .native -F 999 --no-python
	set -- $(cost "$T/chain.cost.out" "$T/chain.cost.time") $(cost "$T/chain.native.out" "$T/chain.native.time")
	walked=$(trailer_num "$T/chain.cost.out" stacks_walked)
	walk=$(awk -v w="$(trailer_num "$T/chain.cost.out" walk_ns)" -v n="${walked:-0}" 'BEGIN { printf "%.0f", n ? w / n : 0 }')
	ratio=$(awk -v a=$(($2 + $3)) -v b=$(($7 + $8)) 'BEGIN { printf "%.2f", b ? a / b : 0 }')
	after=$(awk -v a=$(($2 + $4)) -v b=$(($7 + $9)) 'BEGIN { printf "%.2f", b ? a / b : 0 }')
	echo "bench: php: cost run $r: with PHP frames $1 samples, BPF $2 ns + collector $3 ns a sample (walk $walk ns of it); --no-python $6 samples, BPF $7 ns + collector $8 ns; whole ${ratio}x (floor: 1.3x)"
	echo "bench: php: cost run $r: collector start-up $5 ms with PHP frames, ${10} ms without; after it, BPF + collector a sample $(($2 + $4)) ns with, $(($7 + $9)) ns without: ${after}x"
	r=$((r + 1))
done
grep -o '"interpreters":{[^}]*}' "$T/chain.cost.out" | head -n 1 | sed 's/^/bench: php: trailer: /'
echo "bench: php: load average $(cut -d' ' -f1-3 /proc/loadavg)"
