# perl.sh — Perl frames in marple-callstack's stacks, on Debian's own perl
# 5.36 running tests/workloads/perlchain.pl: a call chain in one loop
# (chain), a callback through C (sort { by_size() }: sort; sort by_size:
# sortsub) and recursion (recurse).  For each, `marple-callstack -F 499 -p PID` for
# PERL_BENCH_SECS (default 5).  Prints:
# - the share of the samples that carry the expected chain, file:line on
#   every Perl frame, _start at the bottom (floor 95%);
# - the share of Perl frames with a line whose line is one the frame can
#   be at (crunch's loop 14-15, settle 25, settle_sorted 29-30,
#   settle_sorted_by 34-35, by_size 21, descend 40, {main} its loop 55-66)
#   (floor 99%), and the share of all
#   Perl frames without a line (a sub called whose first statement has not
#   run: it has none yet);
# - the cost a sample with Perl frames and with --no-python (which leaves
#   every interpreter native) on the chain workload, PERL_BENCH_COST_SECS
#   (default 6) at -F 999, PERL_BENCH_COST_RUNS (default 3) runs each
#   (lib/interpbench.sh's interp_shares and interp_costs); then the same
#   with both collectors capturing one perl at once (interp_costs ... together).
set -u
SECS=${PERL_BENCH_SECS:-5}
NAME=perl
INTERP=/usr/bin/perl
[ "$(id -u)" = 0 ] && [ -x "$INTERP" ] && [ "$("$INTERP" -e 'printf "%vd", $^V' 2>/dev/null | cut -d. -f1,2)" = 5.36 ] ||
	{ echo "bench: perl: skipped (needs root and Debian's perl 5.36)"; exit 0; }
T=$(mktemp -d); trap 'rm -rf "$T"' EXIT
F=$T/work.pl
cp "$MARPLE_TOP/tests/workloads/perlchain.pl" "$F"
. "$MARPLE_TOP/tests/bench/lib/interpbench.sh"

P='[ ][(][^)]*[)]'
expect() {
	case $1 in
	chain) echo "^perl;_start;.*;perl_run;[{]main[}]$P;main::settle$P;main::crunch$P(;[^;(]+)*\$" ;;
	sort|sortsub) echo "^perl;_start;.*;perl_run;[{]main[}]$P;main::settle_sorted(_by)?$P(;Perl_pp_sort(;[^;(]+)*(;main::(by_size|settle_sorted)$P(;[^;(]+)*)?)?(;[^;(]+)*\$" ;;
	recurse) D=";main::descend$P"; echo "^perl;_start;.*;perl_run;[{]main[}]$P$D$D$D$D$D$D$D$D$D;main::crunch$P(;[^;(]+)*\$" ;;
	esac
}

echo "bench: perl: load average $(cut -d' ' -f1-3 /proc/loadavg)"
for m in chain sort sortsub recurse; do
	interp_run "$m" "$SECS" "" -F 499
	interp_shares "$m" "$(expect "$m")" '^(main::crunch [(].*:1[45]|main::settle [(].*:25|main::settle_sorted(_by)? [(].*:(29|30|34|35)|main::by_size [(].*:21|main::descend [(].*:40|[{]main[}] [(].*:(5[5-9]|6[0-6]))[)]$'
done

interp_costs chain "${PERL_BENCH_COST_SECS:-6}" "${PERL_BENCH_COST_RUNS:-3}"
interp_costs chain "${PERL_BENCH_COST_SECS:-6}" "${PERL_BENCH_COST_RUNS:-3}" together
echo "bench: perl: load average $(cut -d' ' -f1-3 /proc/loadavg)"
