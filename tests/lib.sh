# lib.sh — helpers for marple's shell tests (sourced by tests/**/*.t).
# Each case prints "PASS: name", "FAIL: name: why" or "SKIP: name: why".
set -u
: "${MARPLE_BIN:?}" "${MARPLE_TOP:?}"
PATH="$MARPLE_BIN:$PATH"
export LC_ALL=C
T=$(mktemp -d "${TMPDIR:-/tmp}/marple-test.XXXXXX") || exit 1
trap 'rm -rf "$T"' EXIT
# the collectors' unwind cache (marple-callstack(1), CACHE): each test file
# its own, never the user's or /var/cache/marple
export MARPLE_CACHE_DIR="$T/cache"
DATA="$MARPLE_TOP/tests/data"

# plan N: this file prints N cases.  tests/run-all fails a file that declares no
# plan or prints another number of cases, so a case can never vanish unseen
# (a command that fails before it, set -u on an unset variable, an early exit).
plan() { echo "PLAN: $1"; }

# skip_rest NAME WHY : the rest of this file cannot run here (not root, no
# tool): one SKIP, and the plan is waived; then the file ends.
skip_rest() { echo "SKIP: $1: $2"; echo "PLAN: skip the rest"; exit 0; }

pass() { echo "PASS: $1"; }
fail() { echo "FAIL: $1: $2"; }
skip() { echo "SKIP: $1: $2"; }

# check NAME CMD... : passes when CMD exits 0.
check() {
	_cn=$1; shift
	if "$@" >"$T/check.out" 2>&1; then pass "$_cn"; else
		fail "$_cn" "command failed: $* ($(head -c 300 "$T/check.out" | tr '\n' ' '))"; fi
}

# expect_exit NAME STATUS STDERR_REGEX CMD... : exit status and a stderr line must match.
expect_exit() {
	_en=$1 _want=$2 _pat=$3; shift 3
	"$@" >"$T/ee.out" 2>"$T/ee.err"
	_got=$?
	if [ "$_got" -ne "$_want" ]; then
		fail "$_en" "exit $_got, wanted $_want (stderr: $(head -c 300 "$T/ee.err" | tr '\n' ' '))"
	elif [ -n "$_pat" ] && ! grep -Eq -- "$_pat" "$T/ee.err"; then
		fail "$_en" "stderr does not match /$_pat/: $(head -c 300 "$T/ee.err" | tr '\n' ' ')"
	else
		pass "$_en"
	fi
}

# same NAME EXPECTED_FILE ACTUAL_FILE : byte-identical files.
same() {
	if cmp -s "$2" "$3"; then pass "$1"; else
		fail "$1" "differs from $2: $(diff "$2" "$3" | head -n 6 | tr '\n' ' ')"; fi
}

# same_ok NAME STATUS EXPECTED_FILE ACTUAL_FILE : the command that wrote ACTUAL
# exited STATUS (0 wanted) and ACTUAL is byte-identical to EXPECTED.  Use as
# `cmd > out; same_ok NAME $? exp out`: one case whatever cmd does.
same_ok() {
	if [ "$2" -ne 0 ]; then fail "$1" "the command exited $2"; else same "$1" "$3" "$4"; fi
}

is_root() { [ "$(id -u)" -eq 0 ]; }

# running PID: PID is there and has not ended (kill -0 passes a zombie our
# shell has not waited for yet).
running() {
	_state=$(sed 's/.*) //' "/proc/$1/stat" 2>/dev/null | cut -c1)
	[ -n "$_state" ] && [ "$_state" != Z ] && [ "$_state" != X ]
}

# exec_done PID COMM: wait (5 s at most) until a process started in the
# background runs its program (a fixed 0.2-0.3 s guessed it; a collector -p
# started before the exec looks at the forked shell first)
exec_done() {
	_i=0
	while [ "$(cat "/proc/$1/comm" 2>/dev/null)" != "$2" ] && [ $_i -lt 50 ]; do sleep 0.1; _i=$((_i + 1)); done
}

# wait_ready FILE SECONDS [PID]: wait until a collector run with
# MARPLE_READY_FILE=FILE is tracing; with PID, stop waiting when it has ended
# (a collector that failed at once is not waited for SECONDS).
# after_ready FILE CMD...: run CMD (exec'ed: its pid is this one's) once FILE
# exists (a collector's MARPLE_READY_FILE), 20 s at most: a fixed sleep loses
# the race with a slow attach on a loaded machine.
after_ready() {
	wait_ready "$1" 20
	shift
	exec "$@"
}

wait_ready() {
	i=0
	while [ ! -e "$1" ] && [ "$i" -lt $(( $2 * 10 )) ]; do
		if [ -n "${3:-}" ] && ! running "$3"; then break; fi
		sleep 0.1; i=$((i + 1))
	done
	[ -e "$1" ]
}

# await_ready NAME FILE SECONDS ERRFILE [PID]: a case: the collector run with
# MARPLE_READY_FILE=FILE is tracing within SECONDS; when it is not, the case
# fails with the collector's stderr (ERRFILE) so the reason is seen, saying
# whether it was still running.
await_ready() {
	if wait_ready "$2" "$3" "${5:-}"; then pass "$1"; return 0; fi
	_st="not tracing after $3 s"
	[ -n "${5:-}" ] && ! running "$5" && _st="it ended before it was tracing"
	fail "$1" "$_st; its stderr: $(tail -c 400 "$4" 2>/dev/null | tr '\n' ' ')"
	return 1
}

# untag FILE: FILE with the identity tags taken off its stack records'
# frames (a function sampled at two lines is two frames of one name, one
# written name#1a2b3c4d: marple-format(5)), for a grep by names
untag() {
	awk 'index($0, "#") && substr($0, 1, 1) != "{" {
		w = substr($0, 1, index($0, "#")); f = substr($0, index($0, "#") + 1)
		gsub(/#[0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f];/, ";", f)
		sub(/#[0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f]$/, "", f)
		print w f; next } { print }' "$1"
}
