# ruby.sh — Ruby frames in marple-callstack's stacks, on Debian's own ruby3.1
# running tests/workloads/rubychain.rb: a call chain in one loop (chain), a
# block through C (sort_by: sort) and recursion (recurse).  For each,
# `marple-callstack -F 499 -p PID` for RUBY_BENCH_SECS (default 5).  Prints:
# - the share of the samples that carry the expected chain, file:line on
#   every Ruby frame, _start at the bottom (floor 95%);
# - the share of Ruby frames whose line is one the frame can be at (crunch
#   10, its block 11, settle 17, settle_sorted 21, its block 22, descend 27,
#   <main> its loop 51-57) (floor 99%);
# - the cost a sample with Ruby frames and with --no-python on each
#   workload (lib/interpbench.sh's interp_costs), RUBY_BENCH_COST_SECS
#   (default 6) at -F 999, RUBY_BENCH_COST_RUNS (default 3) runs each;
#   then with both collectors capturing one ruby at once
#   (interp_costs ... together).
set -u
SECS=${RUBY_BENCH_SECS:-5}
RUBY=/usr/bin/ruby3.1
[ "$(id -u)" = 0 ] && [ -x "$RUBY" ] && [ "$("$RUBY" -e 'print RUBY_VERSION[0, 4]' 2>/dev/null)" = 3.1. ] ||
	{ echo "bench: ruby: skipped (needs root and Debian's ruby3.1: scripts/install-deps)"; exit 0; }
T=$(mktemp -d); trap 'rm -rf "$T"' EXIT
F=$T/work.rb
cp "$MARPLE_TOP/tests/workloads/rubychain.rb" "$F"

NAME=ruby
INTERP=$RUBY
. "$MARPLE_TOP/tests/bench/lib/interpbench.sh"

P='[ ][(][^)]*[)]'
B="(;[^;(]+)*(;block in Object%23crunch$P(;[^;(]+)*)?\$"	# Integer#times, its block
expect() {
	case $1 in
	chain) echo "^ruby3[.]1;_start;.*;ruby_run_node;[^;(]*;<main>$P;Object%23settle$P;Object%23crunch$P$B" ;;
	sort) echo "^ruby3[.]1;_start;.*;ruby_run_node;[^;(]*;<main>$P;Object%23settle_sorted$P(;[^;(]+)*;Enumerable%23sort_by(;[^;(]+)*(;block in Object%23settle_sorted$P(;[^;(]+)*)?\$" ;;
	recurse) D=";Object%23descend$P"; echo "^ruby3[.]1;_start;.*;ruby_run_node;[^;(]*;<main>$P$D$D$D$D$D$D$D$D$D;Object%23crunch$P$B" ;;
	esac
}

echo "bench: ruby: load average $(cut -d' ' -f1-3 /proc/loadavg)"
for m in chain sort recurse; do
	interp_run "$m" "$SECS" "" -F 499
	interp_shares "$m" "$(expect "$m")" '^(Object%23crunch [(].*:10|block in Object%23crunch [(].*:11|Object%23settle [(].*:17|Object%23settle_sorted [(].*:21|block in Object%23settle_sorted [(].*:22|Object%23descend [(].*:27|<main> [(].*:5[1-7])[)]$'
done

for m in chain sort recurse; do
	NAME="ruby: $m" interp_costs "$m" "${RUBY_BENCH_COST_SECS:-6}" "${RUBY_BENCH_COST_RUNS:-3}"
	NAME="ruby: $m" interp_costs "$m" "${RUBY_BENCH_COST_SECS:-6}" "${RUBY_BENCH_COST_RUNS:-3}" together
done
echo "bench: ruby: load average $(cut -d' ' -f1-3 /proc/loadavg)"
