# --timed (real BPF, root): every sample's time kept beside the in-kernel counts.
# The phases workload burns in phase_one() for 2 s, then in phase_two() for 2 s:
# a range fold of each half must be (nearly) all its own function.
. "$MARPLE_TOP/tests/lib.sh"
plan 17
W="$MARPLE_BIN/workloads"
CS="$MARPLE_BIN/marple-callstack"

expect_exit "callstack --timed --raw is a usage error" 2 "not with --raw" "$CS" --timed --raw 1
if ! is_root; then
	skip_rest "timed: BPF cases" "not root"
fi

# counted FILE: weights (the stack records' sum), nsamples (the samples
# section's records) and lost (its trailer's) of a timed capture
counted() {
	weights=$(awk '/^[0-9]+#/ { s += substr($0, 1, index($0, "#") - 1) } END { print s + 0 }' "$1")
	nsamples=$(grep -c ',sample,cpu[0-9]*,stack=' "$1")
	lost=$(grep '"trailer":1' "$1" | tail -n 1 | sed -n 's/.*"lost":\([0-9]*\).*/\1/p')
}

# share FILE REGEX: of the folded lines, the share (percent) whose stack matches
share() {
	awk -v re="$2" '{ n = $NF; s = $0; sub(/ [0-9]+$/, "", s); t += n; if (s ~ re) m += n } END { printf "%d %d\n", t ? 100 * m / t : 0, t }' "$1"
}

"$W/phases" 2 wait & wl=$!
MARPLE_READY_FILE="$T/ready" "$CS" --timed -F 999 -p "$wl" 5 > "$T/ph.out" 2> "$T/ph.err" & cs=$!
if wait_ready "$T/ready" 20; then kill -USR1 "$wl"; fi
wait "$cs"; rc=$?
kill "$wl" 2>/dev/null; wait "$wl" 2>/dev/null
check "callstack --timed: exit 0 and a valid stream" sh -c "[ $rc -eq 0 ] && marple-cat -q '$T/ph.out'"
check "callstack --timed: a timed stack section" grep -q '"datatype":"stack".*"timed":"stacks"' "$T/ph.out"
check "callstack --timed: followed by its samples section" grep -q '"datatype":"event".*"timed":"samples"' "$T/ph.out"

# every sample counted in the kernel has a time (or is counted as lost)
counted "$T/ph.out"
if [ "$nsamples" -gt 500 ] && [ "$weights" -eq $((nsamples + ${lost:-0})) ]; then
	pass "callstack --timed: one sample record per counted sample ($nsamples)"
else
	fail "callstack --timed: one sample record per counted sample" "weights $weights, samples $nsamples, lost ${lost:-?}"
fi
check "callstack --timed: samples in time order" sh -c "awk -F, '/,sample,cpu/ { if (\$1 < p) exit 1; p = \$1 }' '$T/ph.out'"

# where the workload began, in seconds from the section's start: its first sample
start=$(sed -n '1s/.*"start_ns":\([0-9]*\).*/\1/p' "$T/ph.out")
d=$(awk -F, -v s="$start" '/,sample,cpu/ { printf "%.3f\n", ($1 - s) / 1e9; exit }' "$T/ph.out")
a_to=$(awk -v d="$d" 'BEGIN { print d + 2 }')
b_to=$(awk -v d="$d" 'BEGIN { print d + 4 }')
marple-fold --from "$d" --to "$a_to" "$T/ph.out" > "$T/a" 2> "$T/a.err"
set -- $(share "$T/a" ';phase_one(;|$)')
if [ "$1" -ge 90 ] && [ "$2" -gt 200 ]; then pass "fold of the first 2 s: $1% phase_one ($2 samples)"
else fail "fold of the first 2 s is >= 90% phase_one" "$1% of $2 ($(head -c 300 "$T/a.err"))"; fi
marple-fold --from "$a_to" --to "$b_to" "$T/ph.out" > "$T/b" 2> "$T/b.err"
set -- $(share "$T/b" ';phase_two(;|$)')
if [ "$1" -ge 90 ] && [ "$2" -gt 200 ]; then pass "fold of the next 2 s: $1% phase_two ($2 samples)"
else fail "fold of the next 2 s is >= 90% phase_two" "$1% of $2 ($(head -c 300 "$T/b.err"))"; fi
marple-fold "$T/ph.out" > "$T/all" 2>&1
set -- $(share "$T/all" ';phase_(one|two)(;|$)')
if [ "$1" -ge 90 ]; then pass "fold without a range: both phases, all samples ($2)"
else fail "fold without a range: both phases" "$1% of $2"; fi
marple-cat --from "$a_to" --to "$b_to" "$T/ph.out" | marple-fold > "$T/bcut" 2>&1
same "cat --from/--to of the second half folds as fold --from/--to" "$T/b" "$T/bcut"

# more samples than the collector holds in memory (8192): the rest wait in a
# temporary file, and come back whole and in time order.  A long capture's
# sample times grew its memory by 32 bytes each (11 MB in 30 minutes at
# 99 Hz on 2 CPUs).
( "$W/burn" 2000000 > /dev/null & "$W/burn" 2000000 > /dev/null & wait ) & bl=$!
"$CS" --timed -F 999 6 > "$T/many.out" 2> "$T/many.err"; rc=$?
pkill -P "$bl" burn 2>/dev/null; kill "$bl" 2>/dev/null; wait "$bl" 2>/dev/null
disk=$(grep '"trailer":1' "$T/many.out" | tail -n 1 | sed -n 's/.*"samples_on_disk":\([0-9]*\).*/\1/p')
check "callstack --timed, system-wide: exit 0, and ${disk:-no} sample times went to a file" \
	sh -c "[ $rc -eq 0 ] && marple-cat -q '$T/many.out' && [ '${disk:-0}' -gt 0 ]"
counted "$T/many.out"
if [ "$nsamples" -gt 8192 ] && [ "$weights" -eq $((nsamples + ${lost:-0})) ] &&
	awk -F, '/,sample,cpu/ { if ($1 < p) exit 1; p = $1 }' "$T/many.out"; then
	pass "callstack --timed: all $nsamples back from the file, one per counted sample, in time order"
else
	fail "callstack --timed: all back from the file, in time order" "weights $weights, samples $nsamples, lost ${lost:-?}"
fi

# offcpu --timed: blocks with when they began and how long they were.  The
# sleeper's main thread naps 10 ms at a time in wait_here() (clock_nanosleep):
# any 1 s of the capture holds ~1 s of its off-CPU time, and the reader thread's
# blocked read() as much.
"$W/sleeper" 5 wait & wl=$!
MARPLE_READY_FILE="$T/ready2" "$MARPLE_BIN/marple-offcpu" --timed -p "$wl" 3 > "$T/off.out" 2> "$T/off.err" & cs=$!
if wait_ready "$T/ready2" 20; then kill -USR1 "$wl"; fi
wait "$cs"; rc=$?
kill "$wl" 2>/dev/null; wait "$wl" 2>/dev/null
check "offcpu --timed: exit 0, a valid stream with a samples section" sh -c "[ $rc -eq 0 ] && marple-cat -q '$T/off.out' && grep -q '\"timed\":\"samples\"' '$T/off.out'"
check "offcpu --timed: blocks with their durations" grep -Eq '^[0-9]+,block,(cpu[0-9]+|-),stack=[0-9]+,pid=[0-9]+,tid=[0-9]+,dur=[0-9]+$' "$T/off.out"
marple-fold --from 1 --to 2 "$T/off.out" > "$T/off1" 2> "$T/off1.err"
nap=$(awk '/;clock_nanosleep;/ { s += $NF } END { print s + 0 }' "$T/off1")
rd=$(awk '/;read_pipe;|;reader;read;/ { s += $NF } END { print s + 0 }' "$T/off1")
if [ "$nap" -ge 900000 ] && [ "$nap" -le 1010000 ] && [ "$rd" -ge 900000 ] && [ "$rd" -le 1010000 ]; then
	pass "offcpu: fold --from 1 --to 2 holds ~1 s of each thread's blocks (nap $nap us, read $rd us)"
else
	fail "offcpu: fold --from 1 --to 2 holds ~1 s of each thread's blocks" "nap $nap us, read $rd us ($(head -c 200 "$T/off1.err"))"
fi

# --timed with stacks walked on in user space (a new program's first samples,
# cut where its table was missing: unwindcut.c): each keeps its time, so the
# samples section still has one record per counted sample, and a range fold
# has their whole stacks.  Six fresh copies of nofp, system-wide.
MARPLE_READY_FILE="$T/ready3" "$CS" --timed -U -F 999 0 > "$T/cut.out" 2> "$T/cut.err" & cs=$!
if wait_ready "$T/ready3" 20 "$cs"; then
	for i in 1 2 3 4 5 6; do cp "$W/nofp" "$T/fresh$i"; "$T/fresh$i" 0.1; rm -f "$T/fresh$i"; done
fi
kill -INT "$cs"; wait "$cs"
sent=$(sed -n 's/.*"unwind":{[^}]*"cuts_finished":\([0-9]*\).*/\1/p' "$T/cut.out" | tail -n 1)
counted "$T/cut.out"
if [ "${sent:-0}" -gt 0 ] && [ "$weights" -eq $((nsamples + ${lost:-0})) ]; then
	pass "callstack --timed: stacks walked on in user space ($sent) keep their times ($nsamples samples)"
else
	fail "callstack --timed: stacks walked on keep their times" "walked on ${sent:-none}, weights $weights, samples $nsamples, lost ${lost:-?}"
fi
marple-fold --from 0 --to 100000 "$T/cut.out" > "$T/cutall" 2> "$T/cutall.err"
whole=$(awk '/^fresh[1-6];_start;__libc_start_main;(.*;)?main;chain_a;chain_b;chain_c [0-9]+$/ { s += $NF } END { print s + 0 }' "$T/cutall")
chain=$(awk '/^fresh[1-6];.*chain_c [0-9]+$/ { s += $NF } END { print s + 0 }' "$T/cutall")
unwalked=$(($(sed -n 's/.*"unwind":{[^}]*"cuts_left":\([0-9]*\).*/\1/p' "$T/cut.out" | tail -n 1) + $(sed -n 's/.*"unwind":{[^}]*"cuts_not_sent":\([0-9]*\).*/\1/p' "$T/cut.out" | tail -n 1)))
if [ "$chain" -gt 100 ] && [ "$((chain - whole))" -le "$unwalked" ]; then
	pass "callstack --timed: a range fold has every fresh chain_c stack whole but those counted left cut ($whole of $chain, $unwalked left)"
else
	# once in a sanitizer pass (589 of 600, 4 left), never again in 16 runs:
	# which stacks they were, and what the walk counted
	fail "callstack --timed: a range fold has every fresh chain_c stack whole but those counted left cut" \
		"$whole of $chain, $unwalked left; not whole: $(grep '^fresh[1-6];.*chain_c [0-9]*$' "$T/cutall" |
			grep -Ev '^fresh[1-6];_start;__libc_start_main;(.*;)?main;chain_a;chain_b;chain_c [0-9]+$' | head -n 8 | tr '\n' '|');
		$(grep -o '"unwind":{[^}]*}' "$T/cut.out" | tail -n 1 | head -c 1500)"
fi
