# marple-callstack against bundled workloads whose stacks are known (root, real BPF).
. "$MARPLE_TOP/tests/lib.sh"
plan 25
W="$MARPLE_BIN/workloads"
CS="$MARPLE_BIN/marple-callstack"

expect_exit "callstack: -U with -K is a usage error" 2 "cannot be used together" "$CS" -U -K 1
expect_exit "callstack: bad frequency" 2 "" "$CS" -F 0 1
if ! is_root; then
	skip_rest "callstack: BPF cases" "not root"
fi
expect_exit "callstack: not root" 1 "must be run as root" setpriv --reuid=65534 --regid=65534 --clear-groups "$CS" 1
expect_exit "callstack: unknown PID" 1 "no process with PID 999999" "$CS" -p 999999 1
# -v: "statistics on stderr", without --dwarf too (it printed nothing)
# (a busy loop beside it: on a quiet machine every CPU is idle, and idle is not sampled)
timeout 3 sh -c 'while :; do :; done' & busy=$!
"$CS" -v 1 > /dev/null 2> "$T/v.err"
kill "$busy" 2>/dev/null; wait "$busy" 2>/dev/null
check "callstack -v: the trailer's counts on stderr" grep -Eq '^marple-callstack: statistics: records [0-9]+, .*samples [1-9][0-9]*' "$T/v.err"

# weight FILE REGEX: the weight of the records whose frames match an awk
# regex (frames joined by ;, identity tags taken off: a function sampled at
# two lines is two frames of one name, marple-format(5)), all sections
weight() {
	untag "$1" | awk -v re="$2" 'index($0, "#") && substr($0, 1, 1) != "{" {
		w = substr($0, 1, index($0, "#") - 1); f = substr($0, index($0, "#") + 1)
		if (f ~ re) s += w } END { print s + 0 }'
}

# 1. hot_loop burns 3 times the CPU of cold_loop: the weights say so; the
# tables (the default) also show run_round, the caller frame pointers lose.
"$W/hotcold" 60 & wl=$!
exec_done "$wl" hotcold
MARPLE_READY_FILE="$T/r1" "$CS" -F 499 -p "$wl" 3 > "$T/hc.out" 2> "$T/hc.err"; rc=$?
kill "$wl" 2>/dev/null; wait "$wl" 2>/dev/null
check "callstack: exit 0 and a valid stream" sh -c "[ $rc -eq 0 ] && marple-cat -q '$T/hc.out'"
hot=$(weight "$T/hc.out" '^hotcold;.*main;run_round;hot_loop$')
cold=$(weight "$T/hc.out" '^hotcold;.*main;run_round;cold_loop$')
total=$(weight "$T/hc.out" '.')
if [ "$cold" -gt 0 ] && awk -v h="$hot" -v c="$cold" 'BEGIN { r = h / c; exit !(r > 2.2 && r < 4.0) }'; then
	pass "callstack: hot_loop:cold_loop is 3:1 ($hot:$cold)"
else
	fail "callstack: hot_loop:cold_loop is 3:1" "got $hot:$cold of $total"
fi
# every sample the BPF program saw is in a record (cpu-clock counts only time on
# the CPU, so how many there are depends on how busy the machine is)
# (at least 30 samples to judge by: a loaded machine gives the target little CPU)
samples=$(sed -n 's/.*"trailer":1.*"samples":\([0-9]*\).*/\1/p' "$T/hc.out")
if [ "$total" -gt 30 ] && [ "$total" = "$samples" ]; then pass "callstack: every sample counted ($total)"
else fail "callstack: every sample counted" "records weigh $total, trailer says ${samples:-?} samples"; fi
check "callstack: header units samples, measuring on_cpu" grep -q '"units":{"weight":"samples","measure":"on_cpu","over_time":"sum"}' "$T/hc.out"
check "callstack: trailer names the end" grep -q '"trailer":1.*"ended":"duration"' "$T/hc.out"

# 1b. the task's mm and utask read through bpf_rdonly_cast (a kernel that
# takes a cast to void: 6.17) or, with MARPLE_TASK_CAST=off, as loads from
# the trusted task: the same stacks either way, and the trailer says which
kver=$(uname -r | awk -F. '{ print $1 * 1000 + $2 }')
if [ "$kver" -ge 6017 ]; then
	check "callstack: the task's fields read through the cast (kernel $(uname -r))" grep -q '"task_fields":"cast"' "$T/hc.out"
else
	check "callstack: the trailer says how the task's fields are read" grep -Eq '"task_fields":"(cast|trusted)"' "$T/hc.out"
fi
"$W/hotcold" 60 & wl=$!
exec_done "$wl" hotcold
MARPLE_TASK_CAST=off "$CS" -F 499 -p "$wl" 1 > "$T/hct.out" 2> "$T/hct.err"
kill "$wl" 2>/dev/null; wait "$wl" 2>/dev/null
check "callstack: MARPLE_TASK_CAST=off: the trusted task's loads" grep -q '"task_fields":"trusted"' "$T/hct.out"
hot=$(weight "$T/hct.out" '^hotcold;.*main;run_round;hot_loop$')
check "callstack: MARPLE_TASK_CAST=off: hot_loop's whole stack ($hot samples)" test "$hot" -gt 20

# 2. whole system, annotated and delimited kernel frames, ended by SIGINT
# dd makes tiny read/write syscalls all the time, so some samples surely hold
# both a user and a kernel stack, even on an otherwise idle machine.
"$W/hotcold" 60 & wl=$!
dd if=/dev/zero of=/dev/null bs=1 count=400000000 2>/dev/null & sc=$!
MARPLE_READY_FILE="$T/r2" "$CS" -a -d -F 199 > "$T/sys.out" 2> "$T/sys.err" & cs=$!
if wait_ready "$T/r2" 20; then
	sleep 1.5
	kill -INT "$cs"
fi
wait "$cs"; rc=$?
kill "$wl" "$sc" 2>/dev/null; wait "$wl" 2>/dev/null; wait "$sc" 2>/dev/null
check "callstack: SIGINT ends it with exit 0" test "$rc" -eq 0
check "callstack: trailer says signal" grep -q '"ended":"signal"' "$T/sys.out"
check "callstack: whole system sees the workload" grep -q '^[0-9]*#hotcold;' "$T/sys.out"
check "callstack: kernel frames annotated after a - delimiter" grep -Eq '^[0-9]+#[^;]*;(.*;)?-;[^;]*_\[k\]' "$T/sys.out"
bad=$(awk -F';' '/;-;/ { k = 0; for (i = 2; i <= NF; i++) { if ($i == "-") { k = 1; continue } if (k && $i !~ /_\[k\]$/) n++ } } END { print n + 0 }' "$T/sys.out")
check "callstack: every frame after - is a kernel frame" test "$bad" -eq 0

# 3. --raw: one event per sample with comm= and pid=
"$W/hotcold" 60 & wl=$!
exec_done "$wl" hotcold
"$CS" --raw -F 199 -p "$wl" 1 > "$T/raw.out" 2> "$T/raw.err"; rc=$?
kill "$wl" 2>/dev/null; wait "$wl" 2>/dev/null
n=$(grep -c "^[0-9]*,sample,cpu[0-9]*,comm=hotcold,pid=$wl," "$T/raw.out")
samples=$(sed -n 's/.*"trailer":1.*"samples":\([0-9]*\).*/\1/p' "$T/raw.out")
# fewer than 199 when the machine is busy (cpu-clock counts time on the CPU), but every one written
if [ "$rc" -eq 0 ] && [ "$n" -gt 20 ] && [ "$n" -lt 260 ] && [ "$n" = "$samples" ]; then pass "callstack: --raw: one event per sample ($n)"
else fail "callstack: --raw: one event per sample" "exit $rc, $n events for 1 s at 199 Hz, trailer says ${samples:-?} samples"; fi
check "callstack: --raw is an event section on cpu tracks" grep -q '"datatype":"event".*"track":"cpu"' "$T/raw.out"
check "callstack: --raw stream valid" marple-cat -q "$T/raw.out"

# 4. Frame pointers are not enough: nofp is built -O2 -fomit-frame-pointer.
# With --unwind fp, BPF's frame-pointer walk yields "nofp;chain_c" and nothing
# above it (rbp holds data, so main, chain_a and chain_b are lost, or a stray
# caller is made up).  --dwarf unwinds from .eh_frame and gets the full chain
# (so do the default tables: tests/collectors/unwind.t).
"$W/nofp" 60 & wl=$!
exec_done "$wl" nofp
"$CS" --unwind fp -F 299 -p "$wl" 2 > "$T/fp.out" 2>/dev/null
"$CS" --dwarf -F 299 -p "$wl" 2 > "$T/dw.out" 2> "$T/dw.err"; rc=$?
kill "$wl" 2>/dev/null; wait "$wl" 2>/dev/null
full=$(weight "$T/dw.out" '^nofp;(.*;)?main;chain_a;chain_b;chain_c(;|$)')
all=$(weight "$T/dw.out" '.')
if [ "$rc" -eq 0 ] && [ "$all" -gt 30 ] && [ "$full" -ge $((all * 9 / 10)) ]; then
	pass "callstack: --dwarf recovers main;chain_a;chain_b;chain_c ($full of $all)"
else
	fail "callstack: --dwarf recovers the full chain" "exit $rc, $full of $all samples; $(sort -n "$T/dw.out" | tail -n 2 | tr '\n' ' ')"
fi
fpfull=$(weight "$T/fp.out" 'main;chain_a;chain_b;chain_c(;|$)')
check "callstack: with --unwind fp the chain is lost (as documented)" test "$fpfull" -eq 0
check "callstack: --dwarf trailer reports the unwinding" grep -q '"unwind":{"stacks":' "$T/dw.out"

# 5. The key's comm is read from the task (not bpf_get_current_comm): a
# thread renamed with prctl (spinners' spin0, spin1, from "spinners") and a
# program whose name the kernel cut to 15 bytes keep exactly their names.
cp "$W/burn" "$T/a-long-program-name"
printf '%s\n' "timeout 1 '$T/a-long-program-name' 1000000000 & '$W/spinners' 2 1 > /dev/null; wait" > "$T/comm.sh"
"$CS" --unwind fp --no-python -F 499 -c "sh $T/comm.sh" > "$T/comm.out" 2> "$T/comm.err"; rc=$?
comms=$(untag "$T/comm.out" | awk 'index($0, "#") && substr($0, 1, 1) != "{" {
	f = substr($0, index($0, "#") + 1); sub(/;.*/, "", f); print f }' | sort -u | grep -E '^(spin|a-long)' | paste -sd' ')
# every comm beginning so: none but these
odd=$(echo "$comms" | tr ' ' '\n' | grep -Evx 'spin0|spin1|spinners|a-long-program-' | paste -sd' ')
if [ "$rc" -eq 0 ] && [ -z "$odd" ] && [ "$(weight "$T/comm.out" '^spin0;')" -gt 0 ] &&
   [ "$(weight "$T/comm.out" '^spin1;')" -gt 0 ] && [ "$(weight "$T/comm.out" '^a-long-program-;')" -gt 0 ]; then
	pass "callstack: --unwind fp: renamed threads' and a cut name's comms exact ($comms)"
else
	fail "callstack: --unwind fp: renamed threads' and a cut name's comms exact" "exit $rc, comms: $comms; $(tail -n 2 "$T/comm.err" | tr '\n' ' ')"
fi
