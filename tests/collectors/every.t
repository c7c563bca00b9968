# Continuous mode (--every): a collector writes one whole section per
# interval — header, that interval's records, trailer — with consecutive
# start times, its symbols kept between them, until the duration ends.  The
# cuts fall on the wall clock's multiples of the interval (every collector of
# a capture cuts at the same instants), so a run of 4.5 s in 1 s intervals
# has 5 or 6 sections: the first and the last are parts of one.  The
# sections' weights add up to about what one section of the same run length
# weighs.  Collectors that cannot say so (-h, --describe) and refuse it.
. "$MARPLE_TOP/tests/lib.sh"
plan 26
. "$MARPLE_TOP/tests/collectors/stacks.sh"

# the usage errors first: they need no root
expect_exit "every: --every 50ms is refused (100ms at least)" 2 "100ms or more" marple-callstack --every 50ms 1
expect_exit "every: --every junk is refused" 2 "is not a duration" marple-cpusched --every soon 1
expect_exit "every: callstack --raw --every is refused" 2 "not with --raw" marple-callstack --raw --every 1s 1
expect_exit "every: memleak has no --every" 2 "" marple-memleak --every 1s 1
check "every: memleak -h says it writes one section" sh -c "marple-memleak -h | grep -q 'No --every'"
check "every: the registry says who takes --every" sh -c \
	"marple-callstack --describe | grep -q 'every=yes' && marple-memleak --describe | grep -q 'every=no'"
if ! is_root; then skip_rest "every: BPF cases" "not root"; fi

# sections FILE: one line per section: start_ns end_ns ended records
sections() {
	awk '/^\{"marple"/ { match($0, /"start_ns":[0-9]+/); s = substr($0, RSTART + 11, RLENGTH - 11) }
	     /^\{"trailer"/ { match($0, /"end_ns":[0-9]+/); e = substr($0, RSTART + 9, RLENGTH - 9)
			     match($0, /"ended":"[a-z ]+"/); d = substr($0, RSTART + 9, RLENGTH - 10)
			     match($0, /"records":[0-9]+/); r = substr($0, RSTART + 10, RLENGTH - 10)
			     print s, e, d, r }' "$1"
}
# consecutive FILE: "ok" when each section starts where the one before ended
consecutive() {
	sections "$1" | awk 'NR > 1 && $1 != prev { bad = 1 } { prev = $2 } END { print bad ? "no" : "ok" }'
}
# endings FILE: the "ended" of each section, joined by commas, repeats as one
endings() { sections "$1" | awk '{ printf "%s%s", (NR > 1 ? "," : ""), $3 }' | sed 's/\(interval,\)\{1,\}/interval*,/'; }
# between LOW HIGH N: LOW <= N <= HIGH
between() { [ "$3" -ge "$1" ] && [ "$3" -le "$2" ]; }
# aligned FILE: how many sections but the first start off a whole second of the wall clock (1 ms either way)
aligned() {
	awk '/^\{"marple"/ { match($0, /"wall_ns":[0-9]+/); w = substr($0, RSTART + 10, RLENGTH - 10)
		r = substr(w, length(w) - 8) + 0; if (n++ && r > 1000000 && r < 999000000) bad++ } END { print bad + 0 }' "$1"
}
# all_weight FILE: the summed weight of the records of every section
all_weight() {
	awk 'substr($0, 1, 1) != "{" && index($0, "#") { s += substr($0, 1, index($0, "#") - 1) } END { printf "%.0f\n", s + 0 }' "$1"
}

# a CPU-bound process to sample
sh -c 'while :; do :; done' & spin=$!
trap 'kill $spin 2>/dev/null' EXIT

# 1. callstack: 5 or 6 sections in 4.5 s of 1 s intervals; one section as long, to compare
marple-callstack -p $spin --every 1s 4.5 > "$T/cs" 2> "$T/cs.err"; rc=$?
check "every: callstack --every 1s 4.5 exits 0, a valid stream" sh -c "[ $rc -eq 0 ] && marple-cat -q '$T/cs'"
n=$(sections "$T/cs" | wc -l)
check "every: callstack writes 5 or 6 sections ($n)" between 5 6 "$n"
check "every: callstack's sections follow each other: each starts where the last ended" test "$(consecutive "$T/cs")" = ok
check "every: callstack's sections end with their interval, the last with the duration ($(endings "$T/cs"))" \
	test "$(endings "$T/cs")" = "interval*,duration"
check "every: callstack cuts on whole seconds of the wall clock ($(aligned "$T/cs") off)" test "$(aligned "$T/cs")" -eq 0
marple-callstack -p $spin 4.5 > "$T/cs1" 2> /dev/null
w=$(all_weight "$T/cs"); w1=$(all_weight "$T/cs1")
check "every: callstack's sections weigh about one section of the same length ($w vs $w1)" \
	test "$w" -gt 0 -a $((w * 3)) -ge "$w1" -a "$w" -le $((w1 * 3))
# every section has its own samples, named: symbols stay warm between them
# (the first and the last may be too short to have a sample)
named=$(awk '/^\{"trailer"/ { n++; if (got) m++; got = 0 } /#sh;/ { got = 1 } END { print m + 0 }' "$T/cs")
check "every: each whole callstack section names the spinning shell ($named of $n)" test "$named" -ge $((n - 2))
# the "unwind" counts are each section's own, as the samples are: the stacks
# walked add up to the samples (a sample between the two reads aside), not to
# the capture's so far again at each section
u=$(awk '/^\{"trailer"/ { match($0, /"samples":[0-9]+,"self/); s += substr($0, RSTART + 10, RLENGTH - 16)
	match($0, /"unwind":\{"stacks":[0-9]+/); u += substr($0, RSTART + 19, RLENGTH - 19); n++ } END { print u + 0, s + 0, n + 0 }' "$T/cs")
check "every: callstack's unwind counts are the section's own (stacks walked, samples, sections: $u)" \
	sh -c "set -- $u; [ \$2 -gt 0 ] && [ \$1 -le \$((\$2 + \$3)) ]"

# 1b. callstack --timed: each interval is a timed stack section and its
#     samples section, every sample of the one timed in the other: a sample
#     taken in the milliseconds of a cut may be timed in the interval before
#     the one counting it (or dropped there, counted), so each pair agrees
#     within 2 and the whole capture exactly (timed + dropped = counted)
marple-callstack -p $spin --timed --every 1s 3.5 > "$T/cst" 2> "$T/cst.err"; rc=$?
pairs=$(awk '/^\{"marple".*"datatype":"stack"/ { st = 1; w = 0; next }
	/^\{"marple".*"timed":"samples"/ { st = 0; n = 0; next }
	/^\{"trailer"/ { if (st) { sw = w; all += w } else { p++; d = n - sw; if (d >= -2 && d <= 2) ok++
		match($0, /"dropped":[0-9]+/); timed += n + substr($0, RSTART + 10, RLENGTH - 10) } next }
	st && index($0, "#") { w += substr($0, 1, index($0, "#") - 1) }
	!st && !/^\{/ { n++ } END { print p + 0, ok + 0, timed + 0, all + 0 }' "$T/cst")
check "every: callstack --timed --every 1s 3.5: exit 0, valid, 4 or 5 pairs, each sample timed ($pairs)" \
	sh -c "set -- $pairs; [ $rc -eq 0 ] && marple-cat -q '$T/cst' && [ \$1 -ge 4 ] && [ \$1 -le 5 ] && [ \$2 -eq \$1 ] && [ \$3 -eq \$4 ] && [ \$4 -gt 0 ]"
check "every: callstack --timed: the stack sections follow each other ($(consecutive "$T/cst"))" \
	test "$(grep '"datatype":"stack"\|^{"trailer".*"frames"' "$T/cst" > "$T/cst.st"; consecutive "$T/cst.st")" = ok

# 2. offcpu: the same tiling
# (new processes all along: each needs its unwind tables, built by a worker
# thread that must go on serving after a section's trailer has read its counts)
( while :; do sleep 0.05; done ) & sleeps=$!
marple-offcpu --every 1s 3.5 > "$T/oc" 2> /dev/null; rc=$?
kill $sleeps
check "every: offcpu --every 1s 3.5 exits 0, a valid stream" sh -c "[ $rc -eq 0 ] && marple-cat -q '$T/oc'"
# (4 or 5; 3 when the first section's symbols take more than a second to
# load, as under the sanitizers: the cuts due meanwhile come at once after
# it, but the capture may end first)
n=$(sections "$T/oc" | wc -l)
check "every: offcpu writes 3 to 5 sections, consecutive ($n, $(consecutive "$T/oc"))" \
	sh -c "[ $n -ge 3 ] && [ $n -le 5 ] && [ $(consecutive "$T/oc") = ok ]"

# (each section counts its own loads)
loads=$(grep -o '"process_loads":[0-9]*' "$T/oc" | cut -d: -f2 | tr '\n' ' ')
check "every: offcpu's unwind tables are built for new processes after the first section (loads: $loads)" \
	sh -c "set -- $loads; shift; n=0; for l; do n=\$((n + l)); done; [ \$n -gt 0 ]"

# 3. mallocstacks (the stackcollector lifecycle's own collectors)
marple-mallocstacks --every 1s 2.5 > "$T/ms" 2> /dev/null; rc=$?
got="$rc $(sections "$T/ms" | wc -l) $(consecutive "$T/ms")"
check "every: mallocstacks --every 1s 2.5: exit 0, 2 to 4 valid sections, consecutive ($got)" \
	sh -c "{ [ '$got' = '0 2 ok' ] || [ '$got' = '0 3 ok' ] || [ '$got' = '0 4 ok' ]; } && marple-cat -q '$T/ms'"

# 4. cpusched: cut at exact instants, every event inside its section
marple-cpusched --every 1s 3.5 > "$T/cps" 2> /dev/null; rc=$?
check "every: cpusched --every 1s 3.5 exits 0, a valid stream" sh -c "[ $rc -eq 0 ] && marple-cat -q '$T/cps'"
n=$(sections "$T/cps" | wc -l)
check "every: cpusched writes 4 or 5 sections, consecutive ($n, $(consecutive "$T/cps"))" \
	sh -c "[ $n -ge 4 ] && [ $n -le 5 ] && [ $(consecutive "$T/cps") = ok ]"
outside=$(awk -F, '/^\{"marple"/ { match($0, /"start_ns":[0-9]+/); s = substr($0, RSTART + 11, RLENGTH - 11) + 0; next }
	/^\{/ { next } $1 + 0 < s { n++ } END { print n + 0 }' "$T/cps")
check "every: no cpusched event is older than its section's start ($outside)" test "$outside" -eq 0
gaps=$(sections "$T/cps" | awk -v n=$n 'NR > 1 && NR < n && ($2 - $1 < 999000000 || $2 - $1 > 1001000000) { g++ } END { print g + 0 }')
check "every: cpusched's sections but the first and last are 1 s each ($gaps not)" test "$gaps" -eq 0
check "every: cpusched cuts on whole seconds of the wall clock ($(aligned "$T/cps") off)" test "$(aligned "$T/cps")" -eq 0

# 5. each section's names are its own: the frame names, their ids and the
#    trailer's "frames" start from none at each section (a week of --every
#    kept every name any section had).  phases burns in phase_one() for
#    1.5 s, then in phase_two(): the sections after phase_one's neither hold
#    it nor describe it; before, every later trailer still described it.
"$MARPLE_BIN/workloads/phases" 1.5 wait & ph=$!
MARPLE_READY_FILE="$T/phready" marple-callstack -p $ph --every 1s 4.5 > "$T/ph" 2> "$T/ph.err" & cs=$!
if wait_ready "$T/phready" 20 $cs; then kill -USR1 $ph; fi
wait $cs; rc=$?
kill $ph 2>/dev/null; wait $ph 2>/dev/null
# held described stale later: sections whose records hold phase_one, whose
# trailer describes it, that describe it holding none, that hold phase_two only
# (phase_one at another source line than its first is phase_one#TAG: a
# section that holds only that one describes only that one)
got=$(awk '/^\{"marple"/ { one = two = 0 } /^[0-9]+#/ && /;phase_one/ { one = 1 } /^[0-9]+#/ && /;phase_two/ { two = 1 }
	/^\{"trailer"/ { d = $0 ~ /"phase_one(#[0-9a-f]+)?":[{]/; held += one; described += d; if (d && !one) stale++
			if (two && !one) later++ }
	END { print held + 0, described + 0, stale + 0, later + 0 }' "$T/ph")
check "every: a section's trailer describes its own frames only (phase_one held, described, stale, later sections: $got)" \
	sh -c "[ $rc -eq 0 ] && set -- $got && [ \$1 -ge 1 ] && [ \$2 -eq \$1 ] && [ \$3 -eq 0 ] && [ \$4 -ge 1 ]"
