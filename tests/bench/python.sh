# python.sh — Python frames in marple-callstack's stacks, on Debian's own
# python3 (3.11) running known workloads: a call chain inside one eval loop,
# a callback through C (sorted with a key), a generator, threads, and C-heavy
# json/re.  For each, `marple-callstack -F 499 -p PID` for PY_BENCH_SECS
# (default 5) while a thread inside the process samples
# sys._current_frames() at ~200 Hz.  Prints:
# - the share of the process's samples that carry the workload's expected
#   chain of Python functions, with the C frames where they belong (floor 95%);
# - the Python-only view (each sample's innermost Python function) against
#   the interpreter's own sampler: the top functions' shares and the largest
#   gap in points (floor: within 5 points);
# - the whole cost a sample (BPF run time + the collector's CPU) with Python
#   frames against --no-python on the same workload (floor 1.3x), and the
#   code-object cache's size.
set -u
SECS=${PY_BENCH_SECS:-5}
PY=/usr/bin/python3
[ "$(id -u)" = 0 ] && [ -x "$PY" ] && "$PY" -c 'import sys; sys.exit(sys.version_info[:2] != (3, 11))' 2>/dev/null ||
	{ echo "bench: python: skipped (needs root and Debian's python3 3.11)"; exit 0; }
T=${PY_BENCH_KEEP:-$(mktemp -d)}; [ -n "${PY_BENCH_KEEP:-}" ] || trap 'rm -rf "$T"' EXIT

cat > "$T/work.py" <<'PYEOF'
import collections, json, os, re, sys, threading, time

def chain_c(n):
    s = 0
    for i in range(n):
        s += i * i
    return s
def chain_b(n): return chain_c(n)
def chain_a(n): return chain_b(n)
def chain():
    chain_a(20000)

def keyfn(x):
    s = 0
    for i in range(30):
        s += (x * i) % 7
    return s
def sort_with_key():
    sorted(range(3000), key=lambda x: keyfn(x))

def numbers(n):
    for i in range(n):
        yield i * i % 13
def generator():
    sum(numbers(20000))

def spin(n):
    s = 0
    for i in range(n):
        s += i
    return s
def threads():
    ts = [threading.Thread(target=spin, args=(200000,)) for _ in range(2)]
    for t in ts: t.start()
    for t in ts: t.join()

WORDS = re.compile(r"(\w+)@(\w+)\.com")
TEXT = " ".join("user%d@host%d.com filler text" % (i, i) for i in range(2000))
def encode():
    data = [{"k%d" % i: [i, str(i), {"x": i * 1.5}] for i in range(50)} for _ in range(20)]
    return json.dumps(data)
def match():
    return WORDS.findall(TEXT)
def cheavy():
    encode(); match()

seen = collections.Counter()
def sampler(watch, stop):
    me = threading.get_ident()
    while not stop.is_set():
        for tid, f in sys._current_frames().items():
            if tid != me and watch(tid):
                seen[f.f_code.co_qualname] += 1
        time.sleep(0.005)

def main():
    work = globals()[sys.argv[1]]
    stop = threading.Event()
    main_id = threading.main_thread().ident
    # the threads that run: the main one, or (threads) the workers, as the
    # main one waits off the CPU
    watch = (lambda t: t != main_id) if work is threads else (lambda t: t == main_id)
    th = threading.Thread(target=sampler, args=(watch, stop), daemon=True)
    th.start()
    open(sys.argv[3] + ".ready", "w").close()
    # until the bench says stop, looked for twice a second: a stat() releases
    # the GIL, and the sampler would find the main thread there each time
    end = time.time() + float(sys.argv[2])
    look = 0
    while time.time() < end:
        work()
        if time.time() > look:
            if os.path.exists(sys.argv[3] + ".stop"):
                break
            look = time.time() + 0.5
    stop.set(); th.join()
    total = sum(seen.values()) or 1
    with open(sys.argv[3], "w") as out:
        for name, n in seen.most_common():
            out.write("%s %.1f\n" % (name, 100.0 * n / total))

main()
PYEOF

P='[ ][(][^)]*[)]'	# a Python frame's " (file:line)"
# expected chain per workload: an awk regex over the frames joined by ";"
expect() {
	case $1 in
	chain) echo ";main$P;chain$P;chain_a$P;chain_b$P;chain_c$P(;[^;(]+)*\$|;main$P;chain$P(;[^;(]+)*\$" ;;
	sort_with_key) echo ";main$P;sort_with_key$P(;[^;(]+)+;sort_with_key[.]<locals>[.]<lambda>$P;keyfn$P(;[^;(]+)*\$|;main$P;sort_with_key$P(;[^;(]+)*\$" ;;
	generator) echo ";main$P;generator$P(;[^;(]+)+;numbers$P(;[^;(]+)*\$|;main$P;generator$P(;[^;(]+)*\$" ;;
	threads) echo ";Thread[.]_bootstrap$P;Thread[.]_bootstrap_inner$P;Thread[.]run$P;_PyFunction_Vectorcall;spin$P(;[^;(]+)*\$" ;;
	cheavy) echo ";main$P;cheavy$P;(encode$P;dumps$P|match$P)" ;;
	esac
}

# run WORKLOAD [OPTIONS...]: a capture of the workload into $T/WORKLOAD$SUFFIX.out,
# the in-process sampler's view in $T/WORKLOAD.self; the collector's CPU in .time
run() {
	w=$1; shift
	"$PY" "$T/work.py" "$w" $((SECS + 120)) "$T/$w.self$SUFFIX" & py=$!
	i=0; while [ ! -e "$T/$w.self$SUFFIX.ready" ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
	/usr/bin/time -f "%U %S" -o "$T/$w$SUFFIX.time" marple-callstack -F 499 -p "$py" "$@" "$SECS" \
		> "$T/$w$SUFFIX.out" 2> "$T/$w$SUFFIX.err"
	touch "$T/$w.self$SUFFIX.stop"
	wait "$py"
	rm -f "$T/$w.self$SUFFIX.ready" "$T/$w.self$SUFFIX.stop"
}

# cost FILE TIMEFILE: whole cost a sample in ns
cost() {
	read -r u s < "$2"
	awk -v u="$u" -v s="$s" '/^\{"trailer"/ && !done {
		n = $0; sub(/.*"samples":/, "", n); sub(/[^0-9].*/, "", n)
		p = $0; sub(/.*"program_ns":/, "", p); sub(/[^0-9].*/, "", p)
		if (n > 0) printf "%.0f", ((u + s) * 1e9 + p) / n; done = 1 }' "$1"
}

for w in chain sort_with_key generator threads cheavy; do
	SUFFIX= run "$w"
	re=$(expect "$w")
	awk -v re="$re" -v w="$w" 'index($0, "#") && substr($0, 1, 1) != "{" {
		n = substr($0, 1, index($0, "#") - 1); f = substr($0, index($0, "#") + 1)
		if (f ~ /;sampler [(]/) next	# the bench'"'"'s own instrument
		tot += n; if (f ~ re) ok += n }
		END { printf "bench: python: %s: %.1f%% of %d samples carry the expected Python chain with its C frames (floor: 95%%)\n",
			w, tot ? 100 * ok / tot : 0, tot }' "$T/$w.out"
	# the innermost Python function of each sample, against the sampler's view
	awk -v self="$T/$w.self" -v w="$w" '
		BEGIN { while ((getline l < self) > 0) { split(l, a, " "); want[a[1]] = a[2] } }
		index($0, "#") && substr($0, 1, 1) != "{" {
			n = substr($0, 1, index($0, "#") - 1); f = substr($0, index($0, "#") + 1)
			if (f ~ /;sampler [(]/) next
			k = split(f, fr, ";"); leaf = ""
			for (i = k; i >= 1; i--) if (fr[i] ~ /[ ][(][^)]*:[0-9]+[)]$/) { leaf = fr[i]; break }
			if (leaf == "") next
			sub(/[ ][(].*/, "", leaf); got[leaf] += n; tot += n }
		END { gap = 0; line = ""
			for (f in want) { g = tot ? 100 * got[f] / tot : 0; d = g - want[f]; if (d < 0) d = -d
				if (d > gap) gap = d
				if (want[f] >= 5) line = line sprintf(" %s %.1f/%.1f", f, g, want[f]) }
			for (f in got) if (!(f in want)) { g = 100 * got[f] / tot; if (g > gap) gap = g }
			printf "bench: python: %s: innermost function, marple/interpreter %%:%s; largest gap %.1f points (floor: 5)\n", w, line, gap }' "$T/$w.out"
done

# the cost of Python frames: the chain workload with and without them
SUFFIX=.native run chain --no-python
with=$(cost "$T/chain.out" "$T/chain.time"); without=$(cost "$T/chain.native.out" "$T/chain.native.time")
echo "bench: python: whole cost a sample, chain: $with ns with Python frames, $without ns with --no-python: $(awk -v a="$with" -v b="$without" 'BEGIN { printf "%.2f", b ? a / b : 0 }')x (floor: 1.3x)"
grep -o '"python":{[^}]*}' "$T/chain.out" | head -n 1 | sed 's/^/bench: python: trailer: /'
