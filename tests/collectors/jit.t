# JIT code named after the fact (root, real BPF): jitloop runs machine code
# it wrote into anonymous memory and, like the JVM with -XX:+DumpPerfMapAtExit,
# lists it in /tmp/perf-PID.map only as it exits, after marple has named the
# stacks; the map's older overlapping line must lose to the newer one.  Run
# as "node" or "java" without a map, the advice names the flag or command.
. "$MARPLE_TOP/tests/lib.sh"
plan 6
if ! is_root; then
	skip_rest "jit: BPF cases" "not root"
fi
if [ "$(uname -m)" != x86_64 ]; then
	skip_rest "jit: cases" "jitloop writes x86-64 code"
fi
W="$MARPLE_BIN/workloads"
CS="$MARPLE_BIN/marple-callstack"

# weight FILE REGEX: the weight of the records whose frames match an awk
# regex (frames joined by ;, identity tags taken off: a function sampled at
# two lines is two frames of one name, marple-format(5)), all sections
weight() {
	untag "$1" | awk -v re="$2" 'index($0, "#") && substr($0, 1, 1) != "{" {
		w = substr($0, 1, index($0, "#") - 1); f = substr($0, index($0, "#") + 1)
		if (f ~ re) s += w } END { print s + 0 }'
}

# run PROGRAM OUT [nomap]: sample PROGRAM (jitloop or a copy) with -p until it exits
run() {
	"$1" 4 ${3:-} & wl=$!
	sleep 0.3
	"$CS" -F 499 -p "$wl" 30 > "$2.out" 2> "$2.err"; rc=$?
	wait "$wl" 2>/dev/null
	rm -f "/tmp/perf-$wl.map"
}

run "$W/jitloop" "$T/map"
check "jit: exit 0 and a valid stream" sh -c "[ $rc -eq 0 ] && marple-cat -q '$T/map.out'"
named=$(weight "$T/map.out" ';run_jit;LJitLoop%3B::hot_loop(;|$)')
unnamed=$(weight "$T/map.out" ';run_jit;(\[unknown\]|\[anon\]|Interpreter)(;|$)')
if [ $((named + unnamed)) -lt 20 ]; then
	skip "jit: >= 90% of the JIT samples named from a map written at exit" "only $((named + unnamed)) JIT samples (a busy machine)"
elif [ $((named * 10)) -ge $(( (named + unnamed) * 9 )) ]; then
	pass "jit: >= 90% of the JIT samples named from a map written at exit ($named of $((named + unnamed)))"
else
	fail "jit: >= 90% of the JIT samples named from a map written at exit" "$named of $((named + unnamed)): $(grep run_jit "$T/map.out" | head -n 3 | tr '\n' ' ')"
fi
check "jit: no advice when the map names the code" sh -c "! grep -q 'JIT code without names' '$T/map.err'"

cp "$W/jitloop" "$T/node"
run "$T/node" "$T/node" nomap
check "jit: unnamed node code: the advice says --perf-basic-prof" grep -q 'pid [0-9]* (node): [0-9]*% of its samples are in JIT code without names: start node with --perf-basic-prof' "$T/node.err"
untag "$T/node.out" > "$T/node.untagged"	# run_jit may be tagged by its line (issue 37)
if grep -q ';run_jit;\[unknown\]' "$T/node.untagged" && grep -q '"jit_frames":{"unnamed_when_sampled":[1-9]' "$T/node.out"; then
	pass "jit: unnamed frames stay [unknown], counted in the trailer"
else
	fail "jit: unnamed frames stay [unknown], counted in the trailer" "$(grep run_jit "$T/node.untagged" | head -n 3 | cut -c1-200 | tr '\n' ' ') $(grep -o '"jit_frames":{[^}]*}' "$T/node.out")"
fi

mkdir -p "$T/jdk/bin" && cp "$W/jitloop" "$T/jdk/bin/java"
run "$T/jdk/bin/java" "$T/java" nomap
check "jit: unnamed java code: the advice says jcmd PID Compiler.perfmap" grep -q "(java): .*run 'jcmd [0-9]* Compiler.perfmap' (JDK 17+) before the capture ends, or start java with -XX:+UnlockDiagnosticVMOptions -XX:+DumpPerfMapAtExit" "$T/java.err"
