# marple-memevents: page faults by stack where there is no PMU (root, real BPF).
. "$MARPLE_TOP/tests/lib.sh"
plan 10
. "$MARPLE_TOP/tests/collectors/stacks.sh"
W="$MARPLE_BIN/workloads"
ME="$MARPLE_BIN/marple-memevents"

expect_exit "memevents: bad event" 2 "loads or stores" "$ME" -e bogus 1
root_cases memevents "$ME"

# touch_pages writes one byte in each of 16384 fresh pages (64 MiB)
# (it starts once the collector is attached, however slow that is)
"$W/pagefaults" 64 wait & wl=$!
MARPLE_READY_FILE="$T/pfr" "$ME" -p "$wl" 2500ms > "$T/pf.out" 2> "$T/pf.err" & me=$!
if wait_ready "$T/pfr" 30; then kill -USR1 "$wl"; fi
wait "$me"; rc=$?
kill "$wl" 2>/dev/null; wait "$wl"
check "memevents: exit 0 and a valid stream" sh -c "[ $rc -eq 0 ] && marple-cat -q '$T/pf.out'"
n=$(weight "$T/pf.out" '^pagefaults;(.*;)?touch_pages$')
if [ "$n" -ge 16384 ] && [ "$n" -le 16600 ]; then pass "memevents: touch_pages took 16384 faults ($n)"
else fail "memevents: touch_pages took 16384 faults" "got $n"; fi
ku=$(weight "$T/pf.out" 'touch_pages;.*exc_page_fault')
check "memevents: faults taken in user mode carry no kernel stack ($ku with one)" test "$ku" -eq 0
# read_pages read(2)s 4096 fresh pages from /dev/zero: the kernel's copy
# takes the faults (exceptions:page_fault_kernel), its stack under read
"$W/pagefaults" 16 wait read & wl=$!
MARPLE_READY_FILE="$T/pkr" "$ME" -p "$wl" 2500ms > "$T/pk.out" 2> "$T/pk.err" & me=$!
if wait_ready "$T/pkr" 30; then kill -USR1 "$wl"; fi
wait "$me"
kill "$wl" 2>/dev/null; wait "$wl"
n=$(weight "$T/pk.out" '^pagefaults;(.*;)?read_pages;(.*;)?read_zero;(.*;)?exc_page_fault$')
if [ "$n" -ge 4096 ] && [ "$n" -le 4200 ]; then pass "memevents: 4096 faults taken in the kernel, its stack under read ($n)"
else fail "memevents: 4096 faults taken in the kernel, its stack under read" "got $n: $(grep -m1 read_pages "$T/pk.out" | cut -c1-300)"; fi
if [ -d /sys/bus/event_source/devices/cpu/events ] && ls /sys/bus/event_source/devices/cpu*/events/mem-loads >/dev/null 2>&1; then
	skip "memevents: says it falls back" "this machine has a PMU with mem-loads"
else
	check "memevents: one line says why it falls back" test "$(grep -c 'no precise memory sampling.*page faults' "$T/pf.err")" -eq 1
	check "memevents: header says page faults" grep -q '"units":{"weight":"faults"}.*"source":"page-faults"' "$T/pf.out"
fi
"$ME" --faults -K -a 1 > "$T/k.out" 2>/dev/null; rc=$?
check "memevents -K: exit 0, kernel-only stacks" sh -c "[ $rc -eq 0 ] && marple-cat -q '$T/k.out'"
