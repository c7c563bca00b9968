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
#   (default 6) at -F 999, PHP_BENCH_COST_RUNS (default 3) runs each
#   (lib/interpbench.sh's interp_costs): BPF run time and the collector's
#   CPU (start-up included) a sample, the ratio of their sums (floor 1.3x),
#   and the walks' own BPF time a sample; the collector's start-up apart,
#   and the ratio after it; then the same with both collectors capturing
#   one php at once (interp_costs ... together).
set -u
SECS=${PHP_BENCH_SECS:-5}
PHP=/usr/bin/php8.2
[ "$(id -u)" = 0 ] && [ -x "$PHP" ] && [ "$("$PHP" -r 'echo PHP_MAJOR_VERSION, ".", PHP_MINOR_VERSION;' 2>/dev/null)" = 8.2 ] ||
	{ echo "bench: php: skipped (needs root and Debian's php8.2: scripts/install-deps)"; exit 0; }
T=$(mktemp -d); trap 'rm -rf "$T"' EXIT
F=$T/work.php
cp "$MARPLE_TOP/tests/workloads/phpchain.php" "$F"
NAME=php
INTERP=$PHP
. "$MARPLE_TOP/tests/bench/lib/interpbench.sh"

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
	interp_run "$m" "$SECS" "" -F 499
	interp_shares "$m" "$(expect "$m")" '^(crunch [(].*:1[12]|settle [(].*:27|settle_sorted [(].*:32|Order::by_size [(].*:21|descend [(].*:38|[{]main[}] [(].*:(5[2-9]|60))[)]$'
done

interp_costs chain "${PHP_BENCH_COST_SECS:-6}" "${PHP_BENCH_COST_RUNS:-3}"
interp_costs chain "${PHP_BENCH_COST_SECS:-6}" "${PHP_BENCH_COST_RUNS:-3}" together
echo "bench: php: load average $(cut -d' ' -f1-3 /proc/loadavg)"
