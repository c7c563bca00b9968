# stacks.sh — helpers of the stack collector tests (sourced after tests/lib.sh).

# stacks_of FILE: "weight frames" for each record of FILE's first
# section, frames joined by ; as their names, without identity tags
# ("main#82cab6e6" is main: marple-format(5), Frame identity).
stacks_of() {
	awk '/^\{"trailer"/ { exit } index($0, "#") && substr($0, 1, 1) != "{" {
		w = substr($0, 1, index($0, "#") - 1); f = substr($0, index($0, "#") + 1)
		gsub(/#[0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f];/, ";", f)
		sub(/#[0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f]$/, "", f)
		print (w == "" ? 0 : w) " " f }' "$1"
}

# weight FILE REGEX: the summed weight of the records of the first section
# whose frames (stacks_of) match an awk regex.
weight() {
	stacks_of "$1" | awk -v re="$2" '{ f = substr($0, length($1) + 2) } f ~ re { s += $1 }
		END { printf "%.0f\n", s + 0 }'
}

# share NAME PART WHOLE PERCENT [WHY]: a case that passes when PART is at
# least PERCENT% of WHOLE (and WHOLE > 20); WHY, when given, is added to a
# failure's reason (the stacks that missed: misses)
share() {
	if [ "$3" -gt 20 ] && [ $(($2 * 100)) -ge $(($3 * $4)) ]; then pass "$1 ($2 of $3)"
	elif [ "$3" -le 20 ]; then fail "$1" "$2 of $3: too few samples to judge (wanted > 20)"
	else fail "$1" "$2 of $3, wanted >= $4%${5:+; $5}"; fi
}

# misses FILE WANTED ALL: the three heaviest stacks of the first section
# that match the awk regex ALL but not WANTED, as "weight stack | ...":
# what a failed share missed, for the log of a run nobody can repeat
misses() {
	stacks_of "$1" | awk -v want="$2" -v all="$3" '{ f = substr($0, length($1) + 2) }
		f ~ all && f !~ want { s[f] += $1 }
		END { for (f in s) print s[f], f }' | sort -rn | head -n 3 | cut -c 1-300 | tr '\n' '|'
}

# pprof_traces STREAM OUT: go tool pprof -lines -traces of STREAM's profile
# (marple-pprof) into OUT; 1 when go is missing
pprof_traces() {
	command -v go >/dev/null 2>&1 || return 1
	mkdir -p "$T/home"
	marple-pprof "$1" > "$T/pprof.pb.gz"
	HOME="$T/home" GOCACHE="$T/gocache" GOPATH="$T/gopath" GOFLAGS= GOTOOLCHAIN=local GOPROXY=off \
		go tool pprof -lines -traces "$T/pprof.pb.gz" > "$2" 2> "$T/pprof.err"
}

# trailer_num FILE MEMBER: the number MEMBER has in FILE's first trailer
trailer_num() {
	sed -n "s/.*\"trailer\":1.*\"$2\":\([0-9]*\).*/\1/p" "$1" | head -n 1
}

# python311_only NAME PYTHON: the rest of the test is skipped unless root and
# PYTHON is a CPython 3.11 (Debian 12's /usr/bin/python3), whose frames the
# collectors walk.
python311_only() {
	if ! is_root; then
		skip_rest "$1: BPF cases" "not root"
	fi
	if [ ! -x "$2" ] || ! "$2" -c 'import sys; sys.exit(sys.version_info[:2] != (3, 11))' 2>/dev/null; then
		skip_rest "$1: Debian's python3" "$2 is not Python 3.11"
	fi
}

# libc_mapped PID: wait (5 s at most) until the process has mapped libc (a -p
# collector looks for it there).
libc_mapped() {
	i=0
	while ! grep -q '/libc[.-]' "/proc/$1/maps" 2>/dev/null && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
}

# root_cases NAME PROG: the rest of the test is skipped when not root; as root,
# the cases every collector with -p has: not root, unknown PID.
root_cases() {
	if ! is_root; then
		skip "$1: BPF cases" "not root"
		exit 0
	fi
	expect_exit "$1: not root" 1 "must be run as root" setpriv --reuid=65534 --regid=65534 --clear-groups "$2" 1
	expect_exit "$1: unknown PID" 1 "process 999999 not found" "$2" -p 999999 1
}

# libc_cases NAME PROG: those of a collector probing libc with -p and -c
# (mallocstacks, memleak): -p with -c, then root_cases, then an unknown -l,
# then -c with a command that cannot run or cannot be split (4 cases).
libc_cases() {
	expect_exit "$1: -p with -c is a usage error" 2 "cannot be used together" "$2" -p 1 -c true
	root_cases "$1" "$2"
	expect_exit "$1: library not found" 1 "library .* not found" "$2" -l /nonexistent/libc.so.6 1
	expect_exit "$1: -c with a missing command: exit 1 naming it" 1 \
		"^marple-$1: cannot run the command '/nonexistent/x': No such file" "$2" -c "/nonexistent/x arg" 5
	check "$1: ... and no stream on stdout" test ! -s "$T/ee.out"
	expect_exit "$1: -c with a command not on PATH: exit 1 naming it" 1 \
		"cannot run the command 'no-such-command-zz'" "$2" -c no-such-command-zz 5
	expect_exit "$1: -c with ; is a usage error saying so" 2 "no ; \\| &" "$2" -c "true; false" 5
}

# run_while_stopped COLLECTOR_PID DONE CMD...: CMD started with the
# collector stopped (its user space cannot look at it), the collector let go
# on once CMD creates DONE (30 s at most), then CMD waited for
run_while_stopped() {
	_cs=$1 _done=$2
	shift 2
	kill -STOP "$_cs"
	"$@" & _b=$!
	_i=0
	while [ ! -e "$_done" ] && [ $_i -lt 300 ]; do sleep 0.1; _i=$((_i + 1)); done
	kill -CONT "$_cs"
	wait "$_b"
}

# The interpreter tests (perl.t, ruby.t, php.t) share their cases' shapes:
# each workload script takes SECS MODE READY_FILE, runs MODE for SECS seconds
# and creates READY_FILE once its functions are running.

# interp_run INTERP SCRIPT MODE SECS OUT [collector options...]: SCRIPT in
# MODE, captured for SECS seconds by marple-callstack -p; the interpreter's
# pid is left in interp_pid, stderr in OUT.err
interp_run() {
	_ir=$1 _is=$2 _mode=$3 _secs=$4 _out=$5; shift 5
	rm -f "$T/ready"
	"$_ir" "$_is" $((_secs + 30)) "$_mode" "$T/ready" & interp_pid=$!
	wait_ready "$T/ready" 30 "$interp_pid"
	"$MARPLE_BIN/marple-callstack" -F 499 -p "$interp_pid" "$@" "$_secs" > "$_out" 2> "$_out.err"; _rc=$?
	kill "$interp_pid" 2>/dev/null; wait "$interp_pid" 2>/dev/null
	return $_rc
}

# interp_refused_cases LANG OUT SAID REFUSED NATIVE: 2 cases of a capture
# (OUT) whose interpreter version had its table taken away: stderr says SAID
# (a grep regex) once and the trailer counts REFUSED; its stacks match
# NATIVE and carry no frame with a file:line
interp_refused_cases() {
	_n=$(grep -c "$3" "$2.err")
	if [ "$_n" -eq 1 ] && grep -q "$4" "$2"; then
		pass "$1: an unknown version is named once on stderr and counted"
	else
		fail "$1: an unknown version is named once on stderr and counted" "$_n times: $(head -c 300 "$2.err")"
	fi
	if [ "$(weight "$2" "$5")" -gt 0 ] && [ "$(weight "$2" '[ ][(][^)]*[)]')" -eq 0 ]; then
		pass "$1: ... and profiled natively"
	else
		fail "$1: ... and profiled natively" "$(grep -m1 '^[0-9]' "$2" | cut -c1-300)"
	fi
}

# interp_offcpu INTERP SCRIPT OUT: SCRIPT in its "wait" mode, captured for 2 s
# by marple-offcpu -p into OUT
interp_offcpu() {
	rm -f "$T/ready"
	"$1" "$2" 30 wait "$T/ready" & _ip=$!
	wait_ready "$T/ready" 30 "$_ip"
	"$MARPLE_BIN/marple-offcpu" -p "$_ip" 2 > "$3" 2> "$3.err"
	kill "$_ip" 2>/dev/null; wait "$_ip" 2>/dev/null
}

# interp_started_case NAME INTERP SCRIPT STACK: 1 case: SCRIPT started (2.5 s
# of its default mode) during a capture of the whole system has stacks that
# match STACK, walked although the process did not exist when it began
interp_started_case() {
	_name="$1: a process started during the capture has its interpreter frames"
	MARPLE_READY_FILE="$T/r6" "$MARPLE_BIN/marple-callstack" -F 499 > "$T/sys.out" 2> "$T/sys.err" & _cs=$!
	_ready=0
	if wait_ready "$T/r6" 60 "$_cs"; then
		_ready=1
		"$2" "$3" 2.5
	fi
	kill -INT "$_cs" 2>/dev/null
	wait "$_cs"
	if [ "$_ready" -eq 0 ]; then
		fail "$_name" "the collector was not ready in 60 s: $(head -c 300 "$T/sys.err")"
	elif [ "$(weight "$T/sys.out" "$4")" -gt 0 ]; then
		pass "$_name"
	else
		fail "$_name" "$(grep -m1 -F "$3" "$T/sys.out" | cut -c1-300) $(grep -o '"interpreters":{[^}]*}' "$T/sys.out") $(head -c 300 "$T/sys.err")"
	fi
}

# answered ERR PID SAID CS: wait (30 s at most, while CS runs) until the
# collector's stderr ERR says SAID of PID (MARPLE_DEBUG_ANSWERS)
answered() {
	_i=0
	while ! grep -q "answer: pid $2 .*: $3" "$1" 2>/dev/null && [ $_i -lt 300 ] && running "$4"; do
		sleep 0.1; _i=$((_i + 1))
	done
}

# dlembed_run LIB SCRIPT OUT: tests/workloads/dlembed spinning natively
# under marple-callstack -p (MARPLE_DEBUG_ANSWERS) until the collector has
# answered it native, then dlopen()ing LIB and spinning in its interpreter
# until the collector's samples of it read the answer it is walked (30 s
# at most each: waited for on stderr, not guessed: under ASan on a loaded
# machine the look again took a tenth of the 1.5 s run), then running
# SCRIPT 1.5 s; OUT, OUT.err the capture, $dlembed_rc the workload's exit.
dlembed_run() {
	rm -f "$T/dlembed.go" "$T/dlembed.run"
	"$MARPLE_BIN/workloads/dlembed" "$1" "$2" 1.5 "$T/dlembed.go" "$T/dlembed.run" & _em=$!
	MARPLE_DEBUG_ANSWERS=1 "$MARPLE_BIN/marple-callstack" -F 499 -p "$_em" 60 > "$3" 2> "$3.err" & _cs=$!
	answered "$3.err" "$_em" "native: no interpreter" "$_cs"
	touch "$T/dlembed.go"
	answered "$3.err" "$_em" "its samples read the new answer: walked" "$_cs"
	touch "$T/dlembed.run"
	wait "$_em"; dlembed_rc=$?
	wait "$_cs"
}

# dlembed_cases LANG LIB SCRIPT CHAIN ALL: 2 cases of dlembed_run: its
# samples spin_natively first, then CHAIN (a regex) in >= 90% of those
# matching ALL (in the script's run); the trailer counts it looked at again
# and walked later.  LIB absent: both skipped, saying so.
dlembed_cases() {
	if [ ! -r "$2" ]; then
		echo "# absent: $2"
		skip "$1: dlopen'ed ${2##*/}" "absent: $2"
		skip "$1: the trailer counts it looked at again" "absent: $2"
		return
	fi
	dlembed_run "$2" "$3" "$T/em.out"
	_tot=$(weight "$T/em.out" '.'); _nat=$(weight "$T/em.out" ';main;spin_natively$')
	_ch=$(weight "$T/em.out" "$4"); _all=$(weight "$T/em.out" "$5")
	if [ "$dlembed_rc" -eq 0 ] && [ "$_nat" -gt 0 ] && [ "$_ch" -gt 0 ] && [ $((_ch * 100)) -ge $((_all * 90)) ]; then
		pass "$1: dlopen'ed ${2##*/}: native first (spin_natively $_nat), then its chain with file:line in $_ch of $_all samples"
	else
		fail "$1: dlopen'ed ${2##*/}: native first, then its chain in >= 90%" \
			"workload exit $dlembed_rc; spin_natively $_nat, chain $_ch, $_all of $_tot: $(grep -v '^{' "$T/em.out" | grep -F run_library | sort -t'#' -k1 -rn | head -n 1 | cut -c1-400); merged $(trailer_num "$T/em.out" samples_merged); stderr: $(head -c 700 "$T/em.out.err" | tr '\n' ' ')"
	fi
	_again=$(trailer_num "$T/em.out" native_processes_looked_at_again)
	_later=$(trailer_num "$T/em.out" native_processes_walked_later)
	if [ "${_again:-0}" -ge 1 ] && [ "${_later:-0}" -eq 1 ]; then
		pass "$1: the trailer counts it looked at again ($_again) and walked later ($_later)"
	else
		fail "$1: the trailer counts it looked at again and walked later" "native_processes_looked_at_again ${_again:-none}, native_processes_walked_later ${_later:-none}"
	fi
}
