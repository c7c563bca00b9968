# lib.sh — helpers for marple's shell tests (sourced by tests/**/*.t).
# Each case prints "PASS: name", "FAIL: name: why" or "SKIP: name: why".
set -u
: "${MARPLE_BIN:?}" "${MARPLE_TOP:?}"
PATH="$MARPLE_BIN:$PATH"
export LC_ALL=C
T=$(mktemp -d "${TMPDIR:-/tmp}/marple-test.XXXXXX") || exit 1
trap 'rm -rf "$T"' EXIT
DATA="$MARPLE_TOP/tests/data"

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

is_root() { [ "$(id -u)" -eq 0 ]; }

# wait_ready FILE SECONDS: wait until a collector run with MARPLE_READY_FILE=FILE is tracing.
wait_ready() {
	i=0
	while [ ! -e "$1" ] && [ "$i" -lt $(( $2 * 10 )) ]; do sleep 0.1; i=$((i + 1)); done
	[ -e "$1" ]
}
