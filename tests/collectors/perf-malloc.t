# marple-perf-malloc: perf probe + perf record + marple-fold --to-stream (root, perf).
. "$MARPLE_TOP/tests/lib.sh"
plan 20
. "$MARPLE_TOP/tests/collectors/stacks.sh"
W="$MARPLE_BIN/workloads"
PM="$MARPLE_BIN/marple-perf-malloc"

expect_exit "perf-malloc: -p with -c is a usage error" 2 "cannot be used together" "$PM" -p 1 -c true
expect_exit "perf-malloc: bad duration" 2 "duration" "$PM" 5x
"$PM" --help > "$T/help" 2>&1; rc=$?
check "perf-malloc --help: the usage, exit 0 (it said 'Illegal option --')" sh -c "[ $rc -eq 0 ] && grep -q '^Usage: marple-perf-malloc' '$T/help'"
expect_exit "perf-malloc: unknown long option" 2 "unknown option '--nope'" "$PM" --nope
if ! is_root || ! command -v perf >/dev/null 2>&1; then
	skip_rest "perf-malloc: perf cases" "not root or no perf"
fi
expect_exit "perf-malloc: unknown PID" 1 "process 999999 not found" "$PM" -p 999999 1

probes() { perf probe -l 2>/dev/null | grep -c "marple_malloc_$1:"; }	# of run PID

"$PM" -c "$W/mallocpaths 2" > "$T/c.out" 2> "$T/c.err" & pm=$!
wait "$pm"; rc=$?
[ $rc -eq 0 ] || sed "s/^/c.err: /" "$T/c.err"
check "perf-malloc -c: exit 0 and a valid stream" sh -c "[ $rc -eq 0 ] && marple-cat -q '$T/c.out'"
small=$(weight "$T/c.out" 'path_small')
big=$(weight "$T/c.out" 'path_big')
if grep -q '"trailer":1.*"lost":0,' "$T/c.out"; then
	# Exact but for a few calls in a thousand: perf itself now and then
	# reports a probe hit twice (path_small 6,001,000 once; path_big
	# 12,006,000 once, 2026-11-26, with lost 0: perf's samples, not our
	# folding, which adds what perf script prints).
	check "perf-malloc -c: path_small 6000000 bytes, path_big 12000000 (within 0.1%: perf's double hits)" \
		test "$small" -ge 5994000 -a "$small" -le 6006000 -a "$big" -ge 11988000 -a "$big" -le 12012000
else	# perf's buffer overflowed on a busy machine: said in the trailer and on stderr
	check "perf-malloc -c: lost samples reported" grep -q 'perf lost [0-9]* samples' "$T/c.err"
fi
check "perf-malloc -c: interface and units" grep -q '"interface":"perf_malloc".*"units":{"weight":"bytes"}' "$T/c.out"
check "perf-malloc -c: probes removed" test "$(probes "$pm")" -eq 0

# leaky: leak_here mallocs 200 x 5000 bytes, tidy_up callocs 2500 x 10 x 1000,
# then it sleeps 2 s.  The immediate caller is kept (a frame-pointer walk from
# malloc's first instruction skipped it: both merged into main;malloc), and
# the section's start and end are the recording's.
before=$(date +%s%N)
"$PM" -c "$W/leaky 0 2000" > "$T/l.out" 2> "$T/l.err"; rc=$?
after=$(date +%s%N)
check "perf-malloc -c leaky: exit 0 and a valid stream" sh -c "[ $rc -eq 0 ] && marple-cat -q '$T/l.out'"
if grep -q '"trailer":1.*"lost":0,' "$T/l.out"; then
	check "perf-malloc -c leaky: main;leak_here;malloc has the 1,000,000 leaked bytes" \
		test "$(weight "$T/l.out" ';main;leak_here;malloc$')" -eq 1000000
	# perf's double hits, as above: 25,010,000 (one calloc twice) in 2 of
	# ~15 whole-suite runs, lost 0.  Never less; at most 0.1% more.
	c=$(weight "$T/l.out" ';main;tidy_up;calloc$')
	check "perf-malloc -c leaky: main;tidy_up;calloc has 25,000,000 bytes (within 0.1% above: $c)" \
		test "$c" -ge 25000000 -a "$c" -le 25025000
else	# perf's buffer overflowed on a busy machine: said in the trailer and on stderr
	check "perf-malloc -c leaky: lost samples reported" grep -q 'perf lost [0-9]* samples' "$T/l.err"
	check "perf-malloc -c leaky: main;leak_here;malloc and main;tidy_up;calloc (samples lost)" \
		test "$(weight "$T/l.out" ';main;leak_here;malloc$')" -gt 0 -a "$(weight "$T/l.out" ';main;tidy_up;calloc$')" -gt 0
fi
check "perf-malloc -c leaky: nothing straight under main" test "$(weight "$T/l.out" ';main;[^;]*alloc$')" -eq 0
start=$(sed -n '1s/.*"start_ns":\([0-9]*\).*/\1/p' "$T/l.out")
wall=$(sed -n '1s/.*"wall_ns":\([0-9]*\).*/\1/p' "$T/l.out")
end=$(sed -n '/"trailer"/s/.*"end_ns":\([0-9]*\).*/\1/p' "$T/l.out")
check "perf-malloc -c leaky: the section lasts the run, 2 to 6 s ($start to $end)" \
	awk -v s="${start:-0}" -v e="${end:-0}" 'BEGIN { d = (e - s) / 1e9; exit !(d >= 2 && d <= 6) }'
check "perf-malloc -c leaky: it starts when recording does (2 s before it ends), not when it is folded" \
	awk -v w="${wall:-0}" -v b="$before" -v a="$after" 'BEGIN { exit !(w >= b && w + 2e9 <= a) }'

# interrupted: SIGINT still gives a section, and the probes go
"$W/mallocpaths" 1000 0 50 & wl=$!
libc_mapped "$wl"
MARPLE_READY_FILE="$T/r2" "$PM" -p "$wl" > "$T/int.out" 2> "$T/int.err" & pm=$!
wait_ready "$T/r2" 30
sleep 1
n=$(probes "$pm")
kill -INT "$pm"; wait "$pm"; rc=$?
[ $rc -eq 0 ] || sed "s/^/int.err: /" "$T/int.err"
kill "$wl" 2>/dev/null; wait "$wl" 2>/dev/null
check "perf-malloc SIGINT: probes were there while recording ($n)" test "$n" -eq 3
check "perf-malloc SIGINT: probes removed" test "$(probes "$pm")" -eq 0
check "perf-malloc SIGINT: exit 0, valid, ended signal" sh -c "[ $rc -eq 0 ] && marple-cat -q '$T/int.out' && grep -q '\"ended\":\"signal\"' '$T/int.out'"
# mallocpaths makes ~70,000 calls a second in bursts, each sample 8 KB of
# stack: perf's buffer can overflow in a path_small burst and lose every
# path_big call of that second (CI failed so, 2026-12-01; reproduced here in
# one run of three: 48,535 samples lost, only path_small left), which the
# trailer and stderr then say.
if grep -q '"trailer":1.*"lost":0,' "$T/int.out"; then
	check "perf-malloc SIGINT: recorded the workload, both paths" sh -c "grep -q '^[0-9]*#mallocpaths;.*;main;path_big;' '$T/int.out' && grep -q '^[0-9]*#mallocpaths;.*;main;path_small;' '$T/int.out'"
else
	check "perf-malloc SIGINT: recorded the workload, its lost samples reported" sh -c "grep -Eq '^[0-9]*#mallocpaths;.*;main;path_(small|big);' '$T/int.out' && grep -q 'perf lost [0-9]* samples' '$T/int.err'"
fi

# killed by SIGTERM before recording: still no probes left
"$PM" 30 > /dev/null 2>&1 & pm=$!
sleep 0.5; kill -TERM "$pm"; wait "$pm"
check "perf-malloc SIGTERM early: probes removed" test "$(probes "$pm")" -eq 0
