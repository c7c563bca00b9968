# jit.sh — JIT code named by its perf map (issue 24), with -p at 499 Hz:
#  - jitloop (tests/workloads): machine code in anonymous memory, its map
#    written only as it exits (as the JVM's -XX:+DumpPerfMapAtExit): % of
#    its JIT samples named (floor 90%);
#  - if java is installed: a hot recursive fib, -XX:+DumpPerfMapAtExit, the
#    capture ending with the JVM; and a JVM that keeps running, named by
#    `jcmd PID Compiler.perfmap` during the capture (floor 90%);
#  - if node is installed: --perf-basic-prof on a hot recursive function
#    (the issue's 99%).
# A JIT sample: one of the workload's thread that runs the JIT code; named:
# no [unknown] frame in it.
set -u
T=$(mktemp -d) && trap 'rm -rf "$T"' EXIT
[ "$(id -u)" = 0 ] || { echo "bench: jit: skipped (needs root)"; exit 0; }

# pct FILE RE: "named of total" for the records matching RE, named ones
# having no [unknown] frame; and the percentage
pct() {
	awk -v re="$2" 'index($0, "#") && substr($0, 1, 1) != "{" {
		w = substr($0, 1, index($0, "#") - 1); f = substr($0, index($0, "#") + 1)
		if (f !~ re) next
		t += w; if (f !~ /\[unknown\]/) n += w
	} END { printf "%.1f%% (%d of %d samples)", t ? 100 * n / t : 0, n, t }' "$1"
}

"$MARPLE_BIN/workloads/jitloop" 5 & wl=$!
sleep 0.3
marple-callstack -F 499 -p "$wl" 30 > "$T/loop.out" 2> "$T/loop.err"
wait "$wl"; rm -f "/tmp/perf-$wl.map"
echo "bench: jit: jitloop, map written at exit: $(pct "$T/loop.out" ';run_jit;') of JIT samples named (floor: 90%)"

if command -v java >/dev/null && command -v javac >/dev/null; then
	cat > "$T/Hot.java" <<'JEOF'
public class Hot {
    static long fib(int n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); }
    public static void main(String[] a) {
        long end = System.currentTimeMillis() + (long) (Double.parseDouble(a[0]) * 1000);
        long s = 0;
        while (System.currentTimeMillis() < end) s += fib(25);
        System.out.println(s);
    }
}
JEOF
	javac -d "$T" "$T/Hot.java"
	java -XX:+UnlockDiagnosticVMOptions -XX:+DumpPerfMapAtExit -XX:+PreserveFramePointer -cp "$T" Hot 8 > /dev/null & wl=$!
	sleep 2
	marple-callstack -F 499 -p "$wl" 30 > "$T/jexit.out" 2> "$T/jexit.err"
	wait "$wl"; rm -f "/tmp/perf-$wl.map"
	echo "bench: jit: java -XX:+DumpPerfMapAtExit: $(pct "$T/jexit.out" 'JavaMain;') of the main thread's samples named (floor: 90%)"
	# jcmd attaches slowly on a busy machine (5 s seen): a long capture
	java -XX:+PreserveFramePointer -cp "$T" Hot 40 > /dev/null & wl=$!
	sleep 2
	marple-callstack -F 499 -p "$wl" 15 > "$T/jcmd.out" 2> "$T/jcmd.err" & cs=$!
	sleep 2
	jcmd "$wl" Compiler.perfmap > "$T/jcmd.log" 2>&1 || echo "bench: jit: jcmd failed: $(head -c 200 "$T/jcmd.log")"
	wait "$cs"
	kill "$wl" 2>/dev/null; wait "$wl" 2>/dev/null; rm -f "/tmp/perf-$wl.map"
	echo "bench: jit: java + jcmd PID Compiler.perfmap during the capture: $(pct "$T/jcmd.out" 'JavaMain;') of the main thread's samples named (floor: 90%)"
else
	echo "bench: jit: java: skipped (no JDK: apt-get install default-jdk-headless)"
fi

if command -v node >/dev/null; then
	cd "$T" || exit 1	# node may leave isolate-*.log files where it runs
	cat > "$T/hot.js" <<'JEOF'
function fibo(n) { return n < 2 ? n : fibo(n - 1) + fibo(n - 2); }
const end = Date.now() + Number(process.argv[2]) * 1000;
let s = 0;
while (Date.now() < end) s += fibo(25);
console.log(s);
JEOF
	node --perf-basic-prof "$T/hot.js" 8 > /dev/null & wl=$!
	sleep 1
	marple-callstack -F 499 -p "$wl" 5 > "$T/node.out" 2> "$T/node.err"
	wait "$wl"; rm -f "/tmp/perf-$wl.map"
	echo "bench: jit: node --perf-basic-prof: $(pct "$T/node.out" 'fibo') of samples in fibo named (floor: 99%)"
	grep -q fibo "$T/node.out" || echo "bench: jit: node: no sample in fibo: $(head -c 300 "$T/node.err")"
	node "$T/hot.js" 6 > /dev/null & wl=$!
	sleep 1
	marple-callstack -F 499 -p "$wl" 3 > "$T/nomap.out" 2> "$T/nomap.err"
	wait "$wl"
	echo "bench: jit: node without --perf-basic-prof: advice given: $(grep -c 'perf-basic-prof' "$T/nomap.err")"
else
	echo "bench: jit: node: skipped (not installed)"
fi
