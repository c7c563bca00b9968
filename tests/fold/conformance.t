# marple-fold on perf script: byte-identical to stackcollapse-perf.pl for every
# input and option in tests/fold/conformance/stackcollapse-perf (see its
# README: recorded perf outputs and what stackcollapse-perf.pl prints for them,
# a copy of the owner's shared/conformance so that a clone alone can run it).
. "$MARPLE_TOP/tests/lib.sh"
plan 57
C="$MARPLE_TOP/tests/fold/conformance/stackcollapse-perf"
if [ ! -d "$C/input" ]; then
	fail "conformance data" "$C/input missing"; exit 0
fi
n=0
for in in "$C"/input/*.txt; do
	b=$(basename "$in" .txt)
	for o in none pid tid kernel jit all addrs; do
		if [ "$o" = none ]; then exp="$C/expected/$b-collapsed.txt"; set --; else exp="$C/expected/$b-collapsed-$o.txt"; set -- "--$o"; fi
		[ -f "$exp" ] || { fail "fold $b $o" "no expected file $exp"; continue; }
		marple-fold "$@" "$in" > "$T/out" 2> "$T/err"
		rc=$?
		if [ $rc -ne 0 ]; then fail "fold $b ${o}" "exit $rc: $(head -c 200 "$T/err")"; continue; fi
		same "fold $b ${o}" "$exp" "$T/out"
		n=$((n + 1))
	done
done
check "conformance: all 49 input x option cases ran" test "$n" -ge 49

# The same bytes from stdin, and split into two files at a sample boundary.
in="$C/input/perf-iperf-stacks-pidtid-01.txt"
marple-fold --tid < "$in" > "$T/stdin.out" 2>/dev/null
same "fold: stdin gives the same result" "$C/expected/perf-iperf-stacks-pidtid-01-collapsed-tid.txt" "$T/stdin.out"
half=$(awk 'NR > 2000 && /^$/ { print NR; exit }' "$in")
head -n "$half" "$in" > "$T/a.txt"; tail -n +"$((half + 1))" "$in" > "$T/b.txt"
marple-fold --tid "$T/a.txt" "$T/b.txt" > "$T/two.out" 2>/dev/null
same "fold: input split over two files gives the same result" "$C/expected/perf-iperf-stacks-pidtid-01-collapsed-tid.txt" "$T/two.out"

# No final blank line: the last sample still counts (the reference loses it).
in="$C/input/perf-dd-stacks-01.txt"
printf '%s' "$(cat "$in")" > "$T/nonl.txt"
marple-fold "$T/nonl.txt" > "$T/nonl.out" 2>/dev/null
same "fold: input without final newline keeps its last sample" "$C/expected/perf-dd-stacks-01-collapsed.txt" "$T/nonl.out"

# Event filter: the first event is the default; naming it gives the same, the other one differs.
in="$C/input/perf-cycles-instructions-01.txt"
marple-fold --event-filter instructions "$in" > "$T/ins.out" 2>/dev/null
same "fold --event-filter: first event named explicitly" "$C/expected/perf-cycles-instructions-01-collapsed.txt" "$T/ins.out"
marple-fold --event-filter cycles "$in" > "$T/cyc.out" 2>/dev/null
sum=$(awk '{ s += $NF } END { print s }' "$T/cyc.out")
want=$(grep -c ' cycles: *$' "$in")
check "fold --event-filter cycles: every cycles sample counted once ($want)" test "$sum" = "$((want * 100000000))" -o "$sum" = "$want"
marple-fold "$in" 2> "$T/ev.err" > /dev/null
check "fold: skipped events are reported" grep -q "other events.*cycles" "$T/ev.err"
expect_exit "fold --event-filter: no sample of that event exits 1" 1 'no usable stacks' marple-fold --event-filter nosuch "$in"
