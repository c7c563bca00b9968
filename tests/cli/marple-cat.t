# marple-cat: listing, selection, pass-through, and errors with line numbers.
. "$MARPLE_TOP/tests/lib.sh"
plan 16
S="$DATA/sample.marple"

marple-cat "$S" > "$T/out"; same_ok "cat: valid stream passes through unchanged" $? "$S" "$T/out"
cat "$S" "$S" | marple-cat -l > "$T/list"
check "cat -l: concatenated stream has six sections" test "$(tail -n +2 "$T/list" | wc -l)" -eq 6
check "cat -l: counts records of each section" grep -Eq '^1 +cpusched +event .* 2 +0 +0 duration' "$T/list"
check "cat -l: a section without trailer says so" grep -q '(no trailer)' "$T/list"
marple-cat -i cpusched "$S" > "$T/ev"
check "cat -i: selects by interface" test "$(grep -c sched_switch "$T/ev")" -eq 2
marple-cat -s 2 "$S" | grep -c '^0' > "$T/n"
check "cat -s: selects by index" test "$(cat "$T/n")" -eq 2
marple-cat -p -s 0 "$S" > "$T/p"
check "cat -p: decodes escaped names" grep -q 'std::map<int, char>::find > operator new' "$T/p"
check "cat -q: valid stream, quiet" test -z "$(marple-cat -q "$S")"

printf '{"marple":1,"interface":"a","datatype":"stack"}\n1#a\nbad line\n' > "$T/bad"
expect_exit "cat: bad record: file, line, reason, exit 1" 1 "^marple-cat: $T/bad:3: stack record without" marple-cat "$T/bad"
printf 'hello\n' | expect_exit "cat: not a stream, from stdin" 1 '^marple-cat: <stdin>:1: record before any section header' marple-cat
expect_exit "cat: empty input" 1 'no marple section' marple-cat /dev/null
expect_exit "cat: missing file" 1 '^marple-cat: /nonexistent: No such file' marple-cat /nonexistent
expect_exit "cat: bad option is a usage error" 2 'Try' marple-cat --frobnicate
expect_exit "cat: bad section index" 2 '^marple-cat: -s:' marple-cat -s x "$S"
head -c 280 "$S" > "$T/cut"
expect_exit "cat: stream cut mid-line" 1 "$T/cut:3: last line has no newline" marple-cat "$T/cut"
if [ -w /dev/full ]; then
	expect_exit "cat: full disk is a write error" 1 'write error' sh -c "marple-cat '$S' > /dev/full"
fi
