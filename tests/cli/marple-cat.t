# marple-cat: listing, selection, pass-through, and errors with line numbers.
. "$MARPLE_TOP/tests/lib.sh"
plan 21
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

# -p: stacks heaviest first, events at the wall-clock time they happened
printf '{"marple":1,"interface":"x","datatype":"stack"}\n3#a;light\n97#a;heavy\n12#a;middle\n{"trailer":1,"records":3,"lost":0,"dropped":0,"ended":"eof"}\n' > "$T/unsorted.marple"
marple-cat -p "$T/unsorted.marple" | awk '/^ *[0-9]+  /{print $1}' | tr '\n' ' ' > "$T/order"
check "cat -p: stacks sorted by weight, heaviest first ($(cat "$T/order"))" test "$(cat "$T/order")" = "97 12 3 "
TZ=UTC marple-cat -p -s 1 "$DATA/sample.marple" > "$T/ev.txt"
check "cat -p: event times on the wall clock (start_ns/wall_ns pair)" grep -q '^2026-11-21 12:00:01.000200000  sched_switch  \[cpu0\]' "$T/ev.txt"
printf '{"marple":1,"interface":"x","datatype":"event"}\n1500000000,tick,t0\n' > "$T/noclock.marple"
check "cat -p: without the pair, seconds on the section's clock" sh -c "marple-cat -p '$T/noclock.marple' | grep -q '^1.500000000  tick  \\[t0\\]'"

# --- one line reader for every input (lib/format/lines.c, read(2)): a pipe's
# lines are read as they come, not when a buffer fills or the writer ends:
# marple-cat stops at a bad line while the writer still holds the pipe open
mkfifo "$T/fifo"
marple-cat "$T/fifo" > "$T/live.out" 2> "$T/live.err" &
cat_pid=$!
exec 7> "$T/fifo"
printf '{"marple":1,"interface":"callstack","datatype":"stack"}\n3#a;b\nnot a record\n' >&7
i=0; while kill -0 "$cat_pid" 2> /dev/null && [ $i -lt 100 ]; do sleep 0.02; i=$((i + 1)); done
check "cat: a pipe's lines are read as they come (the bad line found within 2 s, the writer still there)" \
	sh -c "! kill -0 $cat_pid 2> /dev/null && grep -q 'fifo:3:' '$T/live.err'"
exec 7>&-
wait "$cat_pid"; rc=$?
check "cat: ... exit 1, the good lines before it passed on" sh -c "test $rc -eq 1 && grep -q '^3#a;b\$' '$T/live.out'"
