# Faults on output: writing to a full disk (/dev/full) exits 1 with "write
# error"; a closed pipe downstream (`prog big | head -c 1`) ends the program
# quietly: no message, no hang, no sanitizer report.  Every filter and
# renderer in the build, on an input of its datatype big enough to overflow
# any stdio buffer.  As root, -o FILE on a full file system (a 64 KiB tmpfs)
# also exits 1 with "write error" and leaves no file, temporary or final.
. "$MARPLE_TOP/tests/lib.sh"
plan 58
small=
if is_root && mkdir -p "$T/small" && mount -t tmpfs -o size=64k marple-test "$T/small" 2>/dev/null; then
	small="$T/small"
	trap 'umount "$small" 2>/dev/null; rm -rf "$T"' EXIT
fi
[ -w /dev/full ] || skip_rest "faults: output" "no /dev/full"
D="$MARPLE_TOP/tests/bad-input"

# Big valid inputs of each kind (a few MB of output for every renderer).
awk 'BEGIN {
	print "{\"marple\":1,\"interface\":\"callstack\",\"datatype\":\"stack\",\"start_ns\":1000,\"units\":{\"weight\":\"samples\"}}"
	for (i = 0; i < 20000; i++) printf "%d#comm%d;main;f%d;g%d;h%d\n", i % 7 + 1, i % 13, i % 101, i % 997, i
}' >"$T/stack.marple"
awk 'BEGIN {
	print "{\"marple\":1,\"interface\":\"cpusched\",\"datatype\":\"event\",\"start_ns\":1000,\"units\":{\"time\":\"ns\"}}"
	for (i = 0; i < 20000; i++) printf "%d,sched_switch,cpu%d,comm=task%d,pid=%d\n", 1000 + i * 50000, i % 4, i % 50, 100 + i % 50
}' >"$T/event.marple"
awk 'BEGIN {
	print "{\"marple\":1,\"interface\":\"memtime\",\"datatype\":\"point\",\"start_ns\":1000,\"units\":{\"x\":\"s\",\"y\":\"kB\"}}"
	for (i = 0; i < 20000; i++) printf "%.3f,%d,proc%d,comm=proc%d,pid=%d\n", i * 0.01, 1000 + (i * 37) % 5000, i % 30, i % 30, 200 + i % 30
}' >"$T/point.marple"
# a timed stack section (stacks, then each sample's time), for marple-flamescope
awk 'BEGIN {
	print "{\"marple\":1,\"interface\":\"callstack\",\"datatype\":\"stack\",\"timed\":\"stacks\",\"start_ns\":1000,\"units\":{\"weight\":\"samples\"}}"
	for (i = 0; i < 5000; i++) printf "4#comm%d;main;f%d;g%d;h%d\n", i % 13, i % 101, i % 997, i
	print "{\"trailer\":1,\"records\":5000}"
	print "{\"marple\":1,\"interface\":\"callstack\",\"datatype\":\"event\",\"timed\":\"samples\",\"start_ns\":1000,\"units\":{\"time\":\"ns\"}}"
	for (i = 0; i < 20000; i++) printf "%d,sample,cpu%d,stack=%d,pid=%d,tid=%d\n", 1000 + i * 1000000, i % 4, (i * 7) % 5000, 100 + i % 5, 100 + i % 5
	print "{\"trailer\":1,\"records\":20000,\"lost\":0}"
}' >"$T/timed.marple"
# and a file of the original (Python) MARPLE, for marple-import
awk 'BEGIN {
	print "{\"interface\":\"callstack\",\"datatype\":\"stack\",\"start time\":\"2018-07-01 09:00:00\"}"
	for (i = 0; i < 20000; i++) printf "%d#comm%d;main;f%d;g%d;h%d\n", i % 7 + 1, i % 13, i % 101, i % 997, i
}' >"$T/original.marple"

# the programs that read inputs and write outputs: the registry's filters and renderers
for p in $(awk -F '\t' '$2 == "kind=filter" || $2 == "kind=renderer" { print substr($1, 9) }' "$MARPLE_BIN/marple-registry"); do
	[ -x "$MARPLE_BIN/$p" ] || continue
	# the first input kind the program accepts
	input=
	for k in stack event point original timed; do
		if timeout 60 "$p" "$T/$k.marple" >"$T/full.out" 2>/dev/null && [ -s "$T/full.out" ]; then input="$T/$k.marple"; break; fi
	done
	[ -n "$input" ] || { skip "$p: output faults" "accepts none of the test inputs"; continue; }
	size=$(wc -c <"$T/full.out")

	timeout 60 "$p" "$input" >/dev/full 2>"$T/err"; rc=$?
	if [ $rc -eq 1 ] && grep -q "^$p: .*write error" "$T/err"; then pass "$p: /dev/full: exit 1, write error"
	else fail "$p: /dev/full" "exit $rc, stderr: $(head -c 200 "$T/err" | tr '\n' ' ')"; fi

	if [ -n "$small" ] && [ "$size" -gt 65536 ] && "$p" -h 2>/dev/null | grep -Eq -- '-o[ ,]|--output'; then
		timeout 60 "$p" -o "$small/out" "$input" 2>"$T/err"; rc=$?
		left=$(ls -A "$small")
		if [ $rc -eq 1 ] && grep -q "^$p: .*write error" "$T/err" && [ -z "$left" ]; then pass "$p: -o on a full file system: exit 1, write error, nothing left"
		else fail "$p: -o on a full file system" "exit $rc, left: $(echo $left), stderr: $(head -c 200 "$T/err" | tr '\n' ' ')"; fi
		rm -f "$small"/* "$small"/.[!.]* 2>/dev/null
	fi

	# -o FILE in a directory that does not exist: exit 1 naming it, no crash.
	if "$p" -h 2>/dev/null | grep -Eq -- '-o[ ,]|--output'; then
		timeout 60 "$p" -o "$T/no/such/dir/out" "$input" 2>"$T/err"; rc=$?
		if [ $rc -eq 1 ] && grep -q "^$p: .*no/such/dir/out" "$T/err"; then pass "$p: -o in a missing directory: exit 1, named"
		else fail "$p: -o in a missing directory" "exit $rc, stderr: $(head -c 200 "$T/err" | tr '\n' ' ')"; fi
	fi

	# Closed pipe: the reader takes one byte and leaves.  No message, no hang.
	( timeout 60 "$p" "$input" 2>"$T/err"; echo $? >"$T/rc" ) | head -c 1 >/dev/null
	rc=$(cat "$T/rc")
	if [ "$rc" -eq 124 ]; then fail "$p: closed pipe" "hung ($size bytes of output)"
	elif [ -s "$T/err" ]; then fail "$p: closed pipe" "said something (exit $rc): $(head -c 200 "$T/err" | tr '\n' ' ')"
	elif [ "$rc" -ne 0 ] && [ "$rc" -ne 1 ] && [ "$rc" -ne 141 ]; then fail "$p: closed pipe" "exit $rc"
	else pass "$p: closed pipe ends it quietly ($size bytes of output, exit $rc)"; fi
done
