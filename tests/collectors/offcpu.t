# marple-offcpu against bundled workloads that block in known places (root, real BPF).
. "$MARPLE_TOP/tests/lib.sh"
plan 56
W="$MARPLE_BIN/workloads"
OC="$MARPLE_BIN/marple-offcpu"

expect_exit "offcpu: bad --state letter" 2 "unknown state" "$OC" --state Q 1
# -h lists RSDTtP; X and Z (exit states) were accepted and matched nothing
expect_exit "offcpu: --state X (not in -h) is refused" 2 "unknown state 'X' \\(use the letters RSDTtP\\)" "$OC" --state SX 1
expect_exit "offcpu: --state Z (not in -h) is refused" 2 "unknown state 'Z'" "$OC" --state Z 1
expect_exit "offcpu: -U with -K is a usage error" 2 "cannot be used together" "$OC" -U -K 1
if ! is_root; then
	skip_rest "offcpu: BPF cases" "not root"
fi
expect_exit "offcpu: not root" 1 "must be run as root" setpriv --reuid=65534 --regid=65534 --clear-groups "$OC" 1
expect_exit "offcpu: unknown PID" 1 "no process with PID 999999" "$OC" -p 999999 1

# weight FILE REGEX: the weight of the records whose frames match an awk
# regex (frames joined by ;, identity tags taken off: a function sampled at
# two lines is two frames of one name, marple-format(5)), all sections
weight() {
	untag "$1" | awk -v re="$2" 'index($0, "#") && substr($0, 1, 1) != "{" {
		w = substr($0, 1, index($0, "#") - 1); f = substr($0, index($0, "#") + 1)
		if (f ~ re) s += w } END { print s + 0 }'
}
# in_range NAME VALUE LO HI
in_range() {
	if [ "$2" -ge "$3" ] && [ "$2" -le "$4" ]; then pass "$1 ($2)"; else fail "$1" "$2 not in [$3, $4]"; fi
}

# sleeper: the main thread naps 10 ms at a time in nanosleep, its second thread
# blocks reading a pipe written every ~100 ms.  Over 2 s each thread is off the
# CPU nearly all the time: about 2,000,000 us each.
"$W/sleeper" 30 & wl=$!	# (killed after its cases; ASan start-ups are slow)
exec_done "$wl" sleeper
"$OC" -p "$wl" 2 > "$T/all.out" 2> "$T/all.err"; rc=$?
check "offcpu: exit 0 and a valid stream" sh -c "[ $rc -eq 0 ] && marple-cat -q '$T/all.out'"
check "offcpu: weights in us, measuring off_cpu" grep -q '"units":{"weight":"us","measure":"off_cpu","over_time":"sum"}' "$T/all.out"
in_range "offcpu: time asleep in nanosleep" "$(weight "$T/all.out" '^sleeper;.*main;.*nanosleep.*schedule')" 1600000 2050000
in_range "offcpu: time blocked reading the pipe" "$(weight "$T/all.out" '^sleeper;.*reader;.*read;.*pipe_read')" 1500000 2050000
check "offcpu: no BPF frames at the leaf" sh -c "! grep -q 'bpf_prog_\|bpf_trace_run' '$T/all.out'"
# the same naps leave the CPU through the same kernel calls: their kernel
# stacks come from the memo, whose checks (a walk every 16th) find the same
memo=$(grep -o '"kernel_stack_memo":{[^}]*}' "$T/all.out")
set -- $(echo "$memo" | sed 's/[^0-9,]//g; s/,/ /g')
check "offcpu: the kernel stack memo names most switch-outs, its checks find no other stack ($memo)" \
	sh -c "echo '$memo' | grep -q '\"state\":\"on\"' && [ \"\${1:-0}\" -gt \$((\${2:-0} + \${3:-0})) ] && [ \"\${3:-0}\" -gt 0 ] && [ \"\${4:-x}\" = 0 ]" sh "$@"
# A thread that leaves the CPU again with no switch-in seen since it last left
# has a block left untimed: counted in the trailer.  Rare on 6.18 (1 in ~1300
# switch-outs of this workload, about one run in six; no map update or
# delete failed when it happened): at most 2% of the switch-outs.
# The kernel's BPF statistics switched on and off during the capture (as
# bpftool or another profiler does): the kernel then calls the program from
# another place, so a walk's first frame below the tracepoint differs from
# the memo's; the stack above it, all users see, does not: no wrong stack.
stats=/proc/sys/kernel/bpf_stats_enabled
if [ "$(cat "$stats" 2>/dev/null)" = 0 ]; then
	# (a sleeper of its own: the cases after use the first one's 8 s)
	"$W/sleeper" 60 & sw=$!
	exec_done "$sw" sleeper
	MARPLE_READY_FILE="$T/st.ready" "$OC" -p "$sw" 2 > "$T/st.out" 2> "$T/st.err" & oc=$!
	wait_ready "$T/st.ready" 20 "$oc"
	for i in 1 2 3 4 5 6 7 8 9 10; do echo 1 > "$stats"; sleep 0.1; echo 0 > "$stats"; sleep 0.1; done
	wait "$oc"
	kill "$sw" 2>/dev/null; wait "$sw" 2>/dev/null
	memo=$(grep -o '"kernel_stack_memo":{[^}]*}' "$T/st.out")
	check "offcpu: BPF statistics switched during the capture: the memo's checks find no other stack ($memo)" \
		sh -c "echo '$memo' | grep -Eq '\"checked\":[1-9][0-9]*,\"wrong\":0,'"
else
	skip "offcpu: BPF statistics switched during the capture" "they are on already (another tool uses them)"
fi
unpaired=$(sed -n 's/.*"unpaired_switch_outs":\([0-9]*\).*/\1/p' "$T/all.out")
outs=$(sed -n 's/^{"trailer".*"samples":\([0-9]*\).*/\1/p' "$T/all.out")
check "offcpu: trailer counts unpaired switch-outs, few (${unpaired:-none} of ${outs:-?})" \
	test -n "$unpaired" -a "${outs:-0}" -gt 100 -a "$((${unpaired:-0} * 50))" -le "${outs:-0}"

# --state R: only preemption; the sleeping stacks are gone
"$OC" --state R -p "$wl" 1 > "$T/r.out" 2>/dev/null
check "offcpu: --state R leaves out sleeps (only brief preemptions)" test "$(weight "$T/r.out" "nanosleep|pipe_read")" -lt 20000
# --min-block 50000: the 10 ms naps go, the ~100 ms pipe waits stay
"$OC" -m 50000 -p "$wl" 2 > "$T/m.out" 2>/dev/null
# (a 10 ms nap may still last 50 ms when the machine is busy: waiting for a CPU counts)
check "offcpu: --min-block drops short naps" test "$(weight "$T/m.out" "nanosleep")" -lt 500000
# the stack store follows --stack-storage (two sets of 2 KiB stacks, all
# mapped into the collector): 4096 a set by default, 8192 16 MiB more
"$OC" --stack-storage 8192 -p "$wl" 0.3 > "$T/big.out" 2>/dev/null
small=$(sed -n 's/.*"bpf_map_bytes":\([0-9]*\).*/\1/p' "$T/all.out")
big=$(sed -n 's/.*"bpf_map_bytes":\([0-9]*\).*/\1/p' "$T/big.out")
check "offcpu: --stack-storage 8192 takes 16-24 MiB more BPF maps than the default (${small:-none} -> ${big:-none} bytes)" \
	test -n "$small" -a -n "$big" -a "$((${big:-0} - ${small:-0}))" -ge 16777216 -a "$((${big:-0} - ${small:-0}))" -le 25165824
in_range "offcpu: --min-block keeps long waits" "$(weight "$T/m.out" 'pipe_read')" 1000000 2050000
kill "$wl" 2>/dev/null; wait "$wl" 2>/dev/null

# --both: a CPU-bound process is on the CPU, or waiting for it (preempted, R),
# for all of a 1 s capture: on-CPU samples + off-CPU time add up to ~1,000,000 us
"$W/hotcold" 60 & wl=$!
exec_done "$wl" hotcold
"$OC" --both -F 199 -p "$wl" 1 > "$T/b.out" 2> "$T/b.err"; rc=$?
kill "$wl" 2>/dev/null; wait "$wl" 2>/dev/null
check "offcpu: --both header says on_cpu" grep -q '"on_cpu":true' "$T/b.out"
in_range "offcpu: --both on-CPU + off-CPU time adds up to the capture (us)" "$(weight "$T/b.out" '.')" 750000 1150000
untag "$T/b.out" > "$T/b.untagged"
check "offcpu: --both has on-CPU stacks of hot_loop" grep -q '^[0-9]*#hotcold;.*main;run_round;hot_loop$' "$T/b.untagged"

# --both writes its on-CPU samples in a second section; each header says
# which ("cpu"), and the flame graph colours by it: with -U there is no
# __schedule frame to tell by, and every frame was drawn warm
"$W/hotcold" 60 & wl=$!
exec_done "$wl" hotcold
"$OC" --both -U -F 199 -p "$wl" 1 > "$T/bu.out" 2>/dev/null
kill "$wl" 2>/dev/null; wait "$wl" 2>/dev/null
marple-cat -s 1 "$T/bu.out" > "$T/bu1.tagged"; untag "$T/bu1.tagged" > "$T/bu1.out"
check "offcpu: --both: off-CPU, on-CPU, run-queue sections, headers saying so" sh -c "
	test \"\$(grep -o '\"cpu\":\"[a-z]*\"' '$T/bu.out' | tr '\n' ' ')\" = '\"cpu\":\"off\" \"cpu\":\"on\" \"cpu\":\"runq\" ' &&
	grep -q '^[0-9]*#hotcold;.*main;run_round;hot_loop\$' '$T/bu1.out'"
"$W/sleeper" 60 & wl=$!
exec_done "$wl" sleeper
"$OC" --both -U -p "$wl" 2 > "$T/su.out" 2>/dev/null
kill "$wl" 2>/dev/null; wait "$wl" 2>/dev/null
marple-flamegraph "$T/su.out" > "$T/su.svg"
hue_of() { grep -o "fill=\"#[0-9a-f]\{6\}\"/><text[^>]*>$1<" "$T/su.svg" | head -n 1 | sed 's/fill="#\(..\)\(..\)\(..\)".*/\1 \2 \3/' |
	while read -r r g b; do if [ $((0x$b)) -gt $((0x$r)) ]; then echo blue; else echo warm; fi; done; }
check "offcpu: --both -U: sleeping frames drawn blue (off the CPU) ($(hue_of clock_nanosleep) clock_nanosleep, $(hue_of read) read)" \
	test "$(hue_of clock_nanosleep)$(hue_of read)" = blueblue
check "offcpu: --both: each section's trailer (of 3) describes its frames (clock_nanosleep native, in libc)" sh -c "
	test \$(grep -c '^{\"trailer\".*\"frames\":{' '$T/su.out') -eq 3 &&
	grep -q '\"clock_nanosleep\":{\"kind\":\"native\",\"file\":\"[^\"]*/libc.so.6\"' '$T/su.out'"

# --runq: spinners pins 4 CPU-bound threads to one CPU for 2 s, so each waits
# for it ~3/4 of the time, preempted in spin_here; each thread prints the
# run-queue wait /proc/thread-self/schedstat counted over its 2 s.  The
# collector's run-queue time of each thread (its records start "spinN;")
# must match within 5% (+ 20 ms: the thread's start and exit lie outside the
# fixture's own measure).  Pinned, the share does not depend on the load.
expect_exit "offcpu: --runq with --timed is a usage error" 2 "--runq: not with --timed" "$OC" --runq --timed 1
expect_exit "offcpu: --runq with --dwarf is a usage error" 2 "--runq: not with --dwarf" "$OC" --runq --dwarf 1
# comm_weight FILE SECTION COMM: the weight of COMM's records in section SECTION (0-based)
comm_weight() { marple-cat -s "$2" "$1" | awk -F'#' -v c="$3;" 'index($2, c) == 1 { s += $1 } END { print s + 0 }'; }
"$OC" --runq -c "$W/spinners 4 2" > "$T/rq.out" 2> "$T/rq.err"; rc=$?
check "offcpu: --runq: exit 0, sections off then runq" sh -c "[ $rc -eq 0 ] &&
	test \"\$(grep -o '\"cpu\":\"[a-z]*\"' '$T/rq.out' | tr '\n' ' ')\" = '\"cpu\":\"off\" \"cpu\":\"runq\" ' &&
	grep -q '\"runq\":true' '$T/rq.out'"
for i in 0 1 2 3; do
	want=$(sed -n "s/^spin$i tid=[0-9]* runq_ns=\([0-9]*\) .*/\1/p" "$T/rq.err")
	got=$(comm_weight "$T/rq.out" 1 "spin$i")
	if [ -z "$want" ] || [ "$want" -lt 500000000 ]; then
		fail "offcpu: --runq: spin$i's run-queue time" "the fixture measured ${want:-nothing} ns (not oversubscribed?)"
	else
		in_range "offcpu: --runq: spin$i's run-queue time (us) against schedstat's $((want / 1000))" "$got" \
			$((want / 1000 * 95 / 100 - 20000)) $((want / 1000 * 105 / 100 + 20000))
	fi
done
untag "$T/rq.out" > "$T/rq.untagged"
check "offcpu: --runq: run-queue time is by the stack preempted in (spin_here)" \
	grep -q '^[0-9]*#spin0;.*spinner;spin_here;.*schedule' "$T/rq.untagged"
in_range "offcpu: --runq: spinners' waits for the CPU are not off-CPU time (us)" "$(comm_weight "$T/rq.out" 0 spin0)" 0 20000
# --both: running + waiting for a CPU + blocked = the thread's wall time
"$OC" --both -F 499 -c "$W/spinners 4 2" > "$T/rqb.out" 2> "$T/rqb.err"
wall=$(sed -n 's/^spin1 tid=[0-9]* .* wall_ns=\([0-9]*\)$/\1/p' "$T/rqb.err")
whole=$(($(comm_weight "$T/rqb.out" 0 spin1) + $(comm_weight "$T/rqb.out" 1 spin1) + $(comm_weight "$T/rqb.out" 2 spin1)))
in_range "offcpu: --both: spin1's on-CPU + run-queue + off-CPU time is its wall time ${wall:-?} ns (us)" "$whole" \
	$((${wall:-0} / 1000 * 95 / 100)) $((${wall:-0} / 1000 * 105 / 100 + 20000))

# --wakers: pipewake's reader blocks in reader_waits reading a pipe that the
# writer writes in writer_wakes every ~1 ms (after a nap, ended by a timer
# interrupt).  Each block carries its waker's stacks after a "--" frame.
expect_exit "offcpu: --wakers with --dwarf is a usage error" 2 "--wakers: not with --dwarf" "$OC" --wakers --dwarf 1
"$OC" --wakers -c "$W/pipewake 2" > "$T/wk.out" 2> "$T/wk.err"; rc=$?
check "offcpu: --wakers: exit 0, a valid stream saying wakers" sh -c "[ $rc -eq 0 ] && marple-cat -q '$T/wk.out' &&
	grep -q '\"wakers\":true' '$T/wk.out'"
# share FILE SUBJECT PART: "part whole" weights of records matching SUBJECT
share() { untag "$1" | awk -v s="$2" -v p="$3" 'index($0, "#") && substr($0, 1, 1) != "{" {
	w = substr($0, 1, index($0, "#") - 1); f = substr($0, index($0, "#") + 1)
	if (f ~ s) { t += w; if (f ~ p) q += w } } END { print q + 0, t + 0 }'; }
set -- $(share "$T/wk.out" '^pw_reader;.*;reader_waits;' ';--;(.*;)?writer_wakes;writer;')
check "offcpu: --wakers: >= 95% of the reader's blocked time (${2} us) has writer_wakes as its waker (${1} us)" \
	test "$2" -gt 500000 -a "$(($1 * 100))" -ge "$(($2 * 95))"
# the writer's naps end by a timer interrupt: its frames, then "[interrupt]",
# never the user stack of whatever task the interrupt happened to stop
set -- $(share "$T/wk.out" '^pw_writer;.*;writer_naps;.*;--;' ';--;.*hrtimer_wakeup;.*;\[interrupt\]$')
check "offcpu: --wakers: a wake-up from an interrupt is said so (${1} of ${2} us of naps)" \
	test "$2" -gt 300000 -a "$(($1 * 100))" -ge "$(($2 * 95))"
check "offcpu: --wakers: no user frames invented above an interrupt" \
	sh -c "! grep -q '\[interrupt\];.\|;--;.*\(writer\|reader\|clone3\|start_thread\).*\[interrupt\]' '$T/wk.out'"
check "offcpu: --wakers: trailer counts wakers and interrupts" \
	grep -q '"wakers":{"with_waker":[1-9][0-9]*,"waker_unseen":[0-9]*,"waker_lost":0,"waker_early":[0-9]*,"interrupt":[1-9]' "$T/wk.out"
# --wakers keeps up at ~20,000 switches a second (pingpace: main writes a
# byte to echo, which writes it back, 10,000 times a second): no block lost
# its waker to a full ring buffer, echo's reads end by main's writes, and
# the blocks are named once a (blocked, waker) pair, not once a block
"$OC" --wakers -c "$W/pingpace 1 20000" > "$T/pp.out" 2> /dev/null
wk=$(grep -o '"wakers":{[^}]*}' "$T/pp.out" | tail -n 1)
with=$(echo "$wk" | sed -n 's/.*"with_waker":\([0-9]*\).*/\1/p')
named=$(echo "$wk" | sed -n 's/.*"pairs_named":\([0-9]*\).*/\1/p')
check "offcpu: --wakers at 20,000 switches/s: no waker lost, >= 8,000 blocks with theirs (${wk:-no trailer})" \
	sh -c "echo '$wk' | grep -q '\"waker_lost\":0,' && [ '${with:-0}' -ge 8000 ]"
set -- $(share "$T/pp.out" '^pingpace;.*;echo;read;.*;anon_pipe_read;' ';--;(.*;)?write;main;')
check "offcpu: --wakers at 20,000 switches/s: >= 95% of echo's reads (${2} us) woken by main's writes (${1} us)" \
	test "$2" -gt 100000 -a "$(($1 * 100))" -ge "$(($2 * 95))"
check "offcpu: --wakers: named once a pair (${named:-?} namings for ${with:-?} blocks)" \
	test "${named:-0}" -gt 0 -a "$((${named:-0} * 5))" -le "${with:-0}"
# --second-hop: who woke the waker.  The writer that wakes the reader was
# itself woken by a timer interrupt ending its nap: the reader's blocks end
# in writer_wakes;...;pw_writer;--;...;hrtimer_wakeup;...;[interrupt]
"$OC" --second-hop -c "$W/pipewake 2" > "$T/h2.out" 2> /dev/null
set -- $(share "$T/h2.out" '^pw_reader;.*;reader_waits;' ';--;(.*;)?writer_wakes;writer;.*;pw_writer;--;.*hrtimer_wakeup;.*;\[interrupt\]$')
check "offcpu: --second-hop: >= 90% of the reader's blocked time names the writer's waker, a timer (${1} of ${2} us)" \
	test "$2" -gt 500000 -a "$(($1 * 100))" -ge "$(($2 * 90))"
check "offcpu: --second-hop: counted in the trailer, never after an interrupt" sh -c "
	grep -q '\"interrupt\":[1-9][0-9]*,\"second_hop\":[1-9]' '$T/h2.out' && ! grep -q '\[interrupt\];--;' '$T/h2.out'"
# a waker in another process, not traced itself: pipewake's writer forked,
# only the reader's process (-p) traced; the waker's frames are still named
"$W/pipewake" 3 fork > /dev/null & wl=$!
exec_done "$wl" pw_reader	# (main names itself so once it has forked)
"$OC" --wakers -p "$wl" 2 > "$T/wf.out" 2> /dev/null
wait "$wl"
set -- $(share "$T/wf.out" '^pw_reader;.*;reader_waits;' ';--;(.*;)?writer_wakes;writer;main;.*;pw_writer$')
check "offcpu: --wakers: a waker in another process (${1} of ${2} us blocked)" \
	test "$2" -gt 500000 -a "$(($1 * 100))" -ge "$(($2 * 95))"
check "offcpu: --wakers -p: the waker's own blocks are not traced" sh -c "! grep -q '^[0-9]*#pw_writer' '$T/wf.out'"
marple-flamegraph "$T/wk.out" > "$T/wk.svg"
# aqua: green and blue alike, above red; blue: blue above both
hue() { grep -o "fill=\"#[0-9a-f]\{6\}\"/><text[^>]*>$1<" "$T/wk.svg" | head -n 1 | sed 's/fill="#\(..\)\(..\)\(..\)".*/\1 \2 \3/' |
	while read -r r g b; do
		if [ $((0x$g)) -gt $((0x$r + 40)) ] && [ $((0x$b)) -gt $((0x$r + 40)) ]; then echo aqua
		elif [ $((0x$b)) -gt $((0x$g + 40)) ]; then echo blue; else echo other; fi; done; }
check "offcpu: --wakers: the flame graph draws the waker's frames aqua, the blocked ones blue ($(hue writer_wakes) writer_wakes, $(hue reader_waits) reader_waits)" \
	test "$(hue writer_wakes)$(hue reader_waits)" = aquablue

# --dwarf: nofp is built -O2 -fomit-frame-pointer; in "block" mode chain_c
# burns 5 ms then sleeps 15 ms in nanosleep, so main;chain_a;chain_b;chain_c
# is off the CPU ~75% of the time, asleep in libc's clock_nanosleep.  With
# --unwind fp the frame-pointer walk from the syscall stops in libc (built without
# frame pointers too) and everything above it is lost: the record reads
#   1224656#nofp;clock_nanosleep;entry_SYSCALL_64_after_hwframe;...;schedule
# (no chain_c, chain_b, chain_a nor main).
expect_exit "offcpu: --dwarf with -K is a usage error" 2 "not with -K" "$OC" --dwarf -K 1
"$W/nofp" 9 block & wl=$!
exec_done "$wl" nofp
"$OC" --unwind fp -p "$wl" 2 > "$T/nfp.out" 2>/dev/null
"$OC" --dwarf -p "$wl" 2 > "$T/dw.out" 2> "$T/dw.err"; rc=$?
check "offcpu: --dwarf exit 0 and a valid stream" sh -c "[ $rc -eq 0 ] && marple-cat -q '$T/dw.out'"
check "offcpu: --dwarf header says so" grep -q '"unwind":"dwarf"' "$T/dw.out"
# 75% of 2 s is 1,500,000 us; less when the machine is busy (the burn takes longer)
in_range "offcpu: --dwarf: main;chain_a;chain_b;chain_c asleep in nanosleep (us)" \
	"$(weight "$T/dw.out" '^nofp;(.*;)?main;chain_a;chain_b;chain_c;(.*;)?clock_nanosleep;.*schedule')" 900000 1600000
check "offcpu: with --unwind fp the chain is lost (as documented)" \
	test "$(weight "$T/nfp.out" 'main;chain_a;chain_b;chain_c;')" -eq 0
check "offcpu: --dwarf trailer reports copies and the unwinding" \
	grep -q '"dwarf":{"copies":[1-9].*"unwind":{"stacks":[1-9]' "$T/dw.out"
# --both --dwarf: on-CPU samples unwound too: chain_c's burning shows as on-CPU
# time (~25%) with the full chain, and the total is about the 1 s capture
"$OC" --dwarf --both -F 199 -p "$wl" 1 > "$T/bd.out" 2>/dev/null
kill "$wl" 2>/dev/null; wait "$wl" 2>/dev/null
in_range "offcpu: --both --dwarf adds up to the capture (us)" "$(weight "$T/bd.out" '.')" 750000 1150000
untag "$T/bd.out" > "$T/bd.untagged"
check "offcpu: --both --dwarf has on-CPU stacks of chain_c with the full chain" \
	grep -q '^[0-9]*#nofp;.*main;chain_a;chain_b;chain_c$' "$T/bd.untagged"
