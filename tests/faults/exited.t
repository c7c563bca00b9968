# Faults: a traced process that exits mid-capture is still named.  A workload
# with known functions runs for a short while and exits mid-capture (traced
# by -p, whose capture ends with it, and, for the CPU collectors, system-wide
# with the workload started after tracing has begun, a capture that goes on
# seconds more); its frames must come out by name,
# not [unknown] or addresses, with the weight it really had — none added
# after it exited.  (The zombie case — exited, not yet reaped — is also in
# tests/unit/test_syms_exit.c.)
. "$MARPLE_TOP/tests/lib.sh"
plan 27
is_root || { skip "faults: exited" "needs root"; exit 0; }
# Workloads run as copies with names of their own: a system-wide capture
# must not count the same workloads run by other tests at the same time.
HC=hot$$ SL=sle$$ MP=mal$$
cp "$MARPLE_BIN/workloads/hotcold" "$T/$HC" && cp "$MARPLE_BIN/workloads/sleeper" "$T/$SL" &&
	cp "$MARPLE_BIN/workloads/mallocpaths" "$T/$MP" || exit 1

# weight FILE COMM REGEX: weight of COMM's records whose frames match REGEX
weight() {
	awk -v c="$2" -v re="$3" '/^\{"trailer"/ { exit } index($0, "#") && substr($0, 1, 1) != "{" {
		w = substr($0, 1, index($0, "#") - 1); f = substr($0, index($0, "#") + 1)
		# a frame as its name: a whole-system capture tags the main of the
		# workload when the main of another program came first (marple-format(5))
		gsub(/#[0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f];/, ";", f)
		sub(/#[0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f]$/, "", f)
		if (index(f, c ";") == 1 && f ~ re) s += w } END { printf "%.0f\n", s + 0 }' "$1"
}
# gone PID: PID has exited (a zombie, or reaped already)
gone() {
	_s=$(sed 's/.*) //' "/proc/$1/stat" 2>/dev/null | cut -c1)
	[ -z "$_s" ] || [ "$_s" = Z ] || [ "$_s" = X ]
}
# wait_gone PID SECONDS
wait_gone() {
	_i=0
	while ! gone "$1" && [ $_i -lt $(($2 * 10)) ]; do sleep 0.1; _i=$((_i + 1)); done
	gone "$1"
}
in_range() {	# in_range NAME VALUE LO HI
	if [ "$2" -ge "$3" ] && [ "$2" -le "$4" ]; then pass "$1 ($2)"; else fail "$1" "$2 not in [$3, $4]"; fi
}
# named NAME FILE COMM: no more than 2% of COMM's weight in unnamed frames
named() {
	_all=$(weight "$2" "$3" '.')
	_bad=$(weight "$2" "$3" '\[unknown\]|(^|;)(0x)?[0-9a-f]+(;|$)|\+0x[0-9a-f]+\]')
	if [ "$_all" -gt 0 ] && [ $((_bad * 50)) -le "$_all" ]; then pass "$1 ($_bad of $_all unnamed)"
	else fail "$1" "$_bad of $_all in [unknown] or address frames: $(grep "#$3;" "$2" | grep -m 2 -E 'unknown|0x' | cut -c 1-200)"; fi
}

# started PID: PID (started with "wait") is ready for SIGUSR1: exec'd, and
# blocking it (bit 9 of SigBlk), within 10 s
started() {
	_i=0
	while ! grep -q 'SigBlk:.*[2367abef][0-9a-f][0-9a-f]$' "/proc/$1/status" 2>/dev/null && [ $_i -lt 100 ]; do
		sleep 0.1; _i=$((_i + 1))
	done
}

# run COLL DURATION -- COLLECTOR ARGS: start a collector in the background
# (output $T/COLL.out) and wait until it traces; its pid in $cpid.
run() {
	_n=$1; shift
	rm -f "$T/$_n.ready"
	MARPLE_READY_FILE="$T/$_n.ready" "$@" >"$T/$_n.out" 2>"$T/$_n.err" </dev/null &
	cpid=$!
	wait_ready "$T/$_n.ready" 30 || fail "$_n: ready" "not tracing after 30 s: $(head -c 200 "$T/$_n.err")"
}
# finish NAME WORKLOAD_PID [ENDED]: the workload exits while the collector
# still runs; then the collector ends by itself with exit 0 and a valid
# stream: by its duration, or (ENDED "target exited") with -p's process, at
# once (the trailer saying so shows it was still running when it exited).
finish() {
	_ended=${3:-duration}
	if wait_gone "$2" 20 && { [ "$_ended" != duration ] || kill -0 "$cpid" 2>/dev/null; }; then pass "$1: workload exited mid-capture"
	else fail "$1: workload exited mid-capture" "workload gone: $(gone "$2" && echo yes || echo no), collector running: $(kill -0 "$cpid" 2>/dev/null && echo yes || echo no)"; fi
	wait "$cpid"; _rc=$?
	wait "$2" 2>/dev/null
	if [ $_rc -eq 0 ] && marple-cat -q "$T/$1.out" 2>"$T/cat.err" && grep -q "\"ended\":\"$_ended\"" "$T/$1.out"; then
		pass "$1: exit 0, valid stream, ended: $_ended"
	else fail "$1: exit 0, valid stream, ended: $_ended" "exit $_rc: $(grep -o '"ended":"[^"]*"' "$T/$1.out") $(head -c 300 "$T/$1.err" "$T/cat.err" | tr '\n' ' ')"; fi
	if grep -q Sanitizer "$T/$1.err"; then fail "$1: no sanitizer report" "$(grep -m1 ERROR "$T/$1.err")"; fi
}

# callstack: hotcold burns CPU 3:1 in hot_loop and cold_loop for 2 s, in a 6 s
# capture at 499 Hz: at most ~1000 samples (fewer on a busy machine).
callstack_case() {	# NAME: output $T/NAME.out
	hot=$(weight "$T/$1.out" "$HC" ';main;(run_round;)?hot_loop$')
	cold=$(weight "$T/$1.out" "$HC" ';main;(run_round;)?cold_loop$')
	all=$(weight "$T/$1.out" "$HC" '.')
	in_range "$1: hotcold's samples (2 s at 499 Hz)" "$all" 150 1150
	if [ "$cold" -gt 0 ] && awk -v h="$hot" -v c="$cold" -v a="$all" 'BEGIN { exit !(h / c > 2 && h / c < 4.5 && h + c >= 0.8 * a) }'; then
		pass "$1: main;hot_loop and main;cold_loop named, 3:1 ($hot:$cold of $all)"
	else fail "$1: main;hot_loop and main;cold_loop named, 3:1" "got $hot:$cold of $all: $(grep "#$HC;" "$T/$1.out" | sort -t'#' -k1 -nr | head -n 3 | cut -c 1-150 | tr '\n' ' ')"; fi
	named "$1: hotcold's frames are named" "$T/$1.out" "$HC"
}

# its 2 s of work begin once the collector traces (SIGUSR1): a collector
# slow to start on a busy machine saw only the last 46 ms of them
"$T/$HC" 2 wait & wl=$!
started "$wl"
run callstack-p marple-callstack -F 499 -p "$wl" 6
kill -USR1 "$wl"
finish callstack-p "$wl" "target exited"
callstack_case callstack-p

# System-wide: the workload exists before the capture (exec'd, libraries
# mapped) but does its work inside it; exec during a capture is another story.
"$T/$HC" 2 wait & wl=$!
started "$wl"
run callstack-all marple-callstack -F 499 6
kill -USR1 "$wl"
finish callstack-all "$wl"
callstack_case callstack-all

# offcpu: sleeper's two threads are off the CPU nearly all of their 2 s (main
# in nanosleep, the other reading a pipe); the capture lasts 6 s.  A thread
# that has exited is not "off the CPU" until the end of the capture.
offcpu_case() {
	nap=$(weight "$T/$1.out" "$SL" ';main;.*nanosleep.*schedule')
	pipe=$(weight "$T/$1.out" "$SL" ';reader;.*read;.*pipe_read')
	all=$(weight "$T/$1.out" "$SL" '.')
	in_range "$1: main's naps in nanosleep, us" "$nap" 1200000 2300000
	in_range "$1: the reader's pipe waits, us" "$pipe" 1200000 2300000
	in_range "$1: sleeper's off-CPU time in all, us (2 threads, 2 s)" "$all" 2400000 4600000
	named "$1: sleeper's frames are named" "$T/$1.out" "$SL"
}
# (-p too waits for the capture to trace before the 2 s begin: under the
# sanitizers at load, offcpu's start-up took 0.8 s of them)
"$T/$SL" 2 wait & wl=$!
started "$wl"
run offcpu-p marple-offcpu -p "$wl" 6
kill -USR1 "$wl"
finish offcpu-p "$wl" "target exited"
offcpu_case offcpu-p

"$T/$SL" 2 wait & wl=$!
started "$wl"
run offcpu-all marple-offcpu 6
kill -USR1 "$wl"
finish offcpu-all "$wl"
offcpu_case offcpu-all

# mallocstacks -p: mallocpaths is stopped until tracing begins, then allocates
# 5 rounds (path_small 3,000,000 bytes and path_big 6,000,000 bytes each) and
# exits; the capture lasts 5 s more.  Exact bytes, by name.
# (stopped once it runs mallocpaths, in its 1 s sleep before the first round)
"$T/$MP" 5 1000 & wl=$!
i=0
while { [ "$(cat "/proc/$wl/comm" 2>/dev/null)" != "$MP" ] || ! grep -q '/libc[.-]' "/proc/$wl/maps" 2>/dev/null; } && [ $i -lt 500 ]; do
	sleep 0.01; i=$((i + 1))
done
kill -STOP "$wl"
run mallocstacks-p marple-mallocstacks -p "$wl" 5
kill -CONT "$wl"
finish mallocstacks-p "$wl" "target exited"
small=$(weight "$T/mallocstacks-p.out" "$MP" ';main;path_small;alloc_small;')
big=$(weight "$T/mallocstacks-p.out" "$MP" ';main;path_big;alloc_big;')
check "mallocstacks-p: main;path_small;alloc_small: 15,000,000 bytes ($small)" test "$small" -eq 15000000
check "mallocstacks-p: main;path_big;alloc_big: 30,000,000 bytes ($big)" test "$big" -eq 30000000
named "mallocstacks-p: mallocpaths' frames are named" "$T/mallocstacks-p.out" "$MP"
