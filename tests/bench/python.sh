# python.sh — Python frames in marple-callstack's stacks, on Debian's own
# python3 (3.11) running known workloads: a call chain inside one eval loop,
# a callback through C (sorted with a key), a generator, threads, C-heavy
# json/re, and "shares": three functions doing 1, 2 and 3 units of the same
# work, so their shares (1/6, 2/6, 3/6) are known by construction.  For each,
# `marple-callstack -F 499 -p PID` for PY_BENCH_SECS (default 5) while the
# interpreter samples itself two ways: a thread calling sys._current_frames()
# at random intervals of 2.5-7.5 ms, and faulthandler's watchdog dumping every
# thread's frames every 4.7 ms.  PY_BENCH_WORKLOADS picks some.  Prints:
# - the share of the workload's samples that carry its expected chain of
#   Python functions, with the C frames where they belong (floor 95%), and
#   the misses by kind (the bench's own loop between runs of the workload is
#   counted apart; its two instruments' threads are left out);
# - the Python-only view (each sample's innermost Python function) against
#   each of the interpreter's views, and for "shares" all three against the
#   shares by construction (floor: top functions within 5 points).  The
#   sys._current_frames() thread needs the GIL: it sets
#   sys.setswitchinterval(1e-4) to get it within 0.1 ms of asking, but still
#   finds the sampled thread only where that one lets go of it, never inside
#   a call into C (sum() driving a generator: sum's own time is seen in the
#   generator's function).  A fixed sleep after such a place locked onto the workload's
#   period (cheavy: 20 points apart; random intervals: 4).  The watchdog is
#   a C thread that reads the frames without the GIL, wherever the thread
#   is, C code included; it names code objects by co_name, so marple's
#   qualified names are cut to their last part for it.  Not beside
#   "threads": reading exiting threads' states killed the interpreter;
# - the cost a sample with Python frames and with --no-python on the chain
#   workload, over PY_BENCH_COST_SECS (default 8) at -F 999, PY_BENCH_COST_RUNS
#   (default 3) runs each: BPF run time a sample, the collector's CPU a
#   sample, the ratio of their sums (floor 1.3x); the collector's start-up
#   apart, and the ratio after it; what the Python frames themselves cost
#   (the walks' BPF time, the collector's Python work) over the --no-python
#   run's cost; and the code-object cache.
set -u
SECS=${PY_BENCH_SECS:-5}
PY=/usr/bin/python3
[ "$(id -u)" = 0 ] && [ -x "$PY" ] && "$PY" -c 'import sys; sys.exit(sys.version_info[:2] != (3, 11))' 2>/dev/null ||
	{ echo "bench: python: skipped (needs root and Debian's python3 3.11)"; exit 0; }
T=${PY_BENCH_KEEP:-$(mktemp -d)}; [ -n "${PY_BENCH_KEEP:-}" ] || trap 'rm -rf "$T"' EXIT

cat > "$T/work.py" <<'PYEOF'
import collections, faulthandler, os, random, sys, threading, time

from pyshapes import *

seen = collections.Counter()
def sampler(watch, stop):
    # take the GIL within 0.1 ms of asking, wherever the sampled thread is
    sys.setswitchinterval(1e-4)
    me = threading.get_ident()
    while not stop.is_set():
        for tid, f in sys._current_frames().items():
            if tid != me and watch(tid):
                seen[f.f_code.co_qualname] += 1
        # at random intervals: a fixed sleep after a sample taken where the
        # workload lets go of the GIL locks onto the workload's own period
        time.sleep(random.uniform(0.0025, 0.0075))

def write_shares(counts, path):
    total = sum(counts.values()) or 1
    with open(path, "w") as out:
        for name, n in counts.most_common():
            out.write("%s %.1f\n" % (name, 100.0 * n / total))

# faulthandler's watchdog: a C thread of the interpreter that reads each
# thread's frames without taking the GIL, so it sees a thread wherever it
# is, in C code too (a dump: "Thread 0x... (most recent call first):",
# then '  File "...", line N in NAME' from the innermost out)
def watchdog_shares(path, watch):
    counts = collections.Counter()
    tid = None
    for line in open(path):
        if line.startswith(("Thread 0x", "Current thread 0x")):
            tid = int(line.split("0x")[1].split()[0], 16)
        elif line.startswith("  File ") and tid is not None:
            if watch(tid):
                counts[line.rsplit(" in ", 1)[1].strip()] += 1
            tid = None
    return counts

def main():
    work = globals()[sys.argv[1]]
    stop = threading.Event()
    main_id = threading.main_thread().ident
    # the threads that run: the main one, or (threads) the workers, as the
    # main one waits off the CPU
    watch = (lambda t: t != main_id) if work is threads else (lambda t: t == main_id)
    th = threading.Thread(target=sampler, args=(watch, stop), daemon=True)
    th.start()
    dumps = open(sys.argv[3] + ".dumps", "w")
    # not beside threads that come and go: the watchdog reads a thread's
    # state without the GIL while the thread may be freeing it (the
    # interpreter died of SIGSEGV in 2 runs of 5)
    if work is not threads:
        faulthandler.dump_traceback_later(0.0047, repeat=True, file=dumps)
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
    faulthandler.cancel_dump_traceback_later(); dumps.close()
    stop.set(); th.join()
    write_shares(seen, sys.argv[3])
    write_shares(watchdog_shares(sys.argv[3] + ".dumps", lambda t: t != th.ident and watch(t)),
                 sys.argv[3] + ".watchdog")

main()
PYEOF


P='[ ][(][^)]*[)]'	# a Python frame's " (file:line)"
C='(;[^;(]+)*$'		# native frames only, to the leaf (kernel ones too)
# expected chain per workload: an awk regex over the frames joined by ";".
# A call being made or returning leaves the caller innermost, so a chain may
# stop at any of its functions; what each runs in C follows it.
expect() {
	case $1 in
	chain) echo ";main$P;chain$P(;chain_a$P(;chain_b$P(;chain_c$P)?)?)?$C" ;;
	sort_with_key) echo ";main$P;sort_with_key$P((;[^;(]+)+;sort_with_key[.]<locals>[.]<lambda>$P(;keyfn$P)?)?$C" ;;
	generator) echo ";main$P;generator$P((;[^;(]+)+;numbers$P)?$C" ;;
	# the workers' spin, and the thread machinery around it: the main
	# thread making, starting and joining them, a worker's start and end in
	# threading.py
	threads) echo ";Thread[.]_bootstrap$P;Thread[.]_bootstrap_inner$P;Thread[.]run$P;_PyFunction_Vectorcall;spin$P$C|;main$P;threads$P(;[^;]+)*\$|;Thread[.]_bootstrap$P(;[^;(]+|;[^;(]+ [(]/usr/lib/python3[.]11/threading[.]py:[0-9]+[)])*\$" ;;
	# encode builds its data in comprehensions, then dumps it; cheavy frees
	# what match returned
	cheavy) echo ";main$P;cheavy$P(;encode$P(;encode[.]<locals>[.]<listcomp>$P(;encode[.]<locals>[.]<listcomp>[.]<dictcomp>$P)?|;dumps$P(;[^;]+)*)?|;match$P)?$C" ;;
	shares) echo ";main$P;shares$P(;share_[123]$P)?$C" ;;
	esac
}

# run WORKLOAD SECS [OPTIONS...]: a capture of the workload into $T/WORKLOAD$SUFFIX.out,
# the in-process sampler's view in $T/WORKLOAD.self; the collector's CPU in .time
run() {
	w=$1; secs=$2; shift 2
	PYTHONPATH="$MARPLE_TOP/tests/workloads" nice -n "${PRIO:-0}" "$PY" "$T/work.py" "$w" $((secs + 120)) "$T/$w.self$SUFFIX" & py=$!
	i=0; while [ ! -e "$T/$w.self$SUFFIX.ready" ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
	"$PY" "$MARPLE_TOP/tests/bench/cputime.py" "$T/$w$SUFFIX.time" marple-callstack -p "$py" "$@" "$secs" \
		> "$T/$w$SUFFIX.out" 2> "$T/$w$SUFFIX.err"
	touch "$T/$w.self$SUFFIX.stop"
	wait "$py"
	rm -f "$T/$w.self$SUFFIX.ready" "$T/$w.self$SUFFIX.stop"
}

# a number from the trailer of FILE: trailer_num FILE NAME
trailer_num() {
	sed -n "s/.*\"trailer\":1.*\"$2\":\([0-9.]*\).*/\1/p" "$1" | head -n 1
}

# faulthandler's watchdog thread, waiting or dumping: a thread of the
# interpreter's own C code with no Python frames of its own
DOG='^python3;clone3;start_thread;[[]python3[.]11[]];[[]python3[.]11[]];(PyThread_acquire_lock_timed|_Py_DumpTracebackThreads|_Py_write_noraise)(;|$)'
echo "bench: python: load average $(cut -d' ' -f1-3 /proc/loadavg)"
for w in ${PY_BENCH_WORKLOADS:-chain sort_with_key generator threads cheavy shares}; do
	SUFFIX= run "$w" "$SECS" -F 499
	re=$(expect "$w")
	# each sample: the expected chain, the bench's own loop (its innermost
	# Python function is main or what main calls between runs of the
	# workload), or a miss by kind
	awk -v re="$re" -v w="$w" -v dog="$DOG" 'index($0, "#") && substr($0, 1, 1) != "{" {
		n = substr($0, 1, index($0, "#") - 1); f = substr($0, index($0, "#") + 1)
		if (f ~ /;sampler [(]/ || f ~ dog) next	# the bench'"'"'s own instruments
		k = split(f, fr, ";"); leaf = ""; py = 0
		for (i = 1; i <= k; i++) if (fr[i] ~ /[ ][(][^)]*[)]$/) { py++; leaf = fr[i] }
		sub(/[ ][(].*/, "", leaf)
		if (leaf == "main" || leaf == "<module>" || leaf == "exists") { loop += n; next }
		tot += n
		# a call into C that comes back into Python, caught as its eval
		# activation starts or ends: the activation stays native
		if (py > 0 && f ~ /;_PyEval_EvalFrameDefault(;|$)/) edge += n
		if (f ~ re) { ok += n; next }
		if (py == 0 && f ~ /;_PyEval_EvalFrameDefault(;|$)/) why = "no Python frames (not yet looked at)"
		else if (py == 0) why = "no Python frames (a thread before its first or after its last)"
		else if (f ~ /\[native frames not unwound\]|\[no unwind table\]|\[truncated|\[unsupported/) why = "native stack cut"
		else if (f ~ /\[python: code object gone\]/) why = "code object gone"
		else if (f ~ /;_PyEval_EvalFrameDefault(;|$)/) why = "an eval activation starting or ending (left native)"
		else why = "another chain"
		miss[why] += n
		if (why == "another chain" && n > other_n) { other_n = n; other = f }
	}
	END { printf "bench: python: %s: %.1f%% of %d samples carry the expected Python chain with its C frames (floor: 95%%); %d more in the bench'"'"'s loop\n",
		w, tot ? 100 * ok / tot : 0, tot, loop
		printf "bench: python: %s: an eval activation starting or ending, left native: %d (%.1f%%)\n", w, edge, tot ? 100 * edge / tot : 0
		for (m in miss) printf "bench: python: %s: missed: %s: %d (%.1f%%)\n", w, m, miss[m], 100 * miss[m] / tot
		if (other != "") { gsub(/[ ][(][^)]*[)]/, "", other); printf "bench: python: %s: most common other chain: %s\n", w, other } }' "$T/$w.out"
	tr=$(grep -o '"python":{[^}]*}[^}]*}' "$T/$w.out" | head -n 1)
	printf 'bench: python: %s: merge: %s\n' "$w" "$(echo "$tr" | grep -o '"samples_merged":[0-9]*,"samples_mismatched":[0-9]*,"[a-z_]*":[0-9]*,"python_frames_left_out":[0-9]*' | tr -d '"')"
	# the innermost Python function of each sample, against the
	# interpreter's two views of its own frames: sys._current_frames() in a
	# thread of the process (by qualified name), which sees the sampled
	# thread only where it lets go of the GIL, never inside a call into C;
	# and faulthandler's watchdog, which reads the frames without the GIL
	# wherever the thread is (by code name: the qualified name's last part).
	# For shares, all three against the shares by construction
	awk -v self="$T/$w.self" -v dog="$T/$w.self.watchdog" -v w="$w" '
		BEGIN { while ((getline l < self) > 0) { split(l, a, " "); want[a[1]] = a[2] }
			while ((getline l < dog) > 0) { split(l, a, " "); wantdog[a[1]] = a[2] } }
		index($0, "#") && substr($0, 1, 1) != "{" {
			n = substr($0, 1, index($0, "#") - 1); f = substr($0, index($0, "#") + 1)
			if (f ~ /;sampler [(]/ || f ~ dog) next
			k = split(f, fr, ";"); leaf = ""
			for (i = k; i >= 1; i--) if (fr[i] ~ /[ ][(][^)]*[)]$/) { leaf = fr[i]; break }
			if (leaf == "") next
			sub(/[ ][(].*/, "", leaf); got[leaf] += n; tot += n
			sub(/.*[.]/, "", leaf); gotname[leaf] += n }
		function pct(a, f, t) { return t ? 100 * a[f] / t : 0 }
		# compare(MINE, THEIRS, LABEL): the functions of 5% or more, and
		# the largest gap over all functions on either side
		function compare(mine, theirs, label,    f, g, d, gap, line) {
			gap = 0; line = ""
			for (f in theirs) { g = pct(mine, f, tot); d = g - theirs[f]; if (d < 0) d = -d
				if (d > gap) gap = d
				if (theirs[f] >= 5) line = line sprintf(" %s %.1f/%.1f", f, g, theirs[f]) }
			for (f in mine) if (!(f in theirs)) { g = pct(mine, f, tot); if (g > gap) gap = g }
			printf "bench: python: %s: innermost function, marple/%s %%:%s; largest gap %.1f points (floor: 5)\n", w, label, line, gap
		}
		END { compare(got, want, "sys._current_frames()")
			if (w == "threads") print "bench: python: threads: faulthandler watchdog: not run (it reads exiting threads'"'"' states)"
			else compare(gotname, wantdog, "faulthandler watchdog")
			if (w != "shares") exit
			# among the samples in share_1..3: by construction 1/6, 2/6, 3/6
			for (i = 1; i <= 3; i++) { mt += got["share_" i]; it += want["share_" i]; dt += wantdog["share_" i] }
			mg = ig = dg = 0; line = ""
			for (i = 1; i <= 3; i++) { c = 100 * i / 6; m = pct(got, "share_" i, mt); s = pct(want, "share_" i, it)
				o = pct(wantdog, "share_" i, dt)
				line = line sprintf(" share_%d %.1f/%.1f/%.1f/%.1f", i, c, m, s, o)
				if ((d = m - c) < 0) d = -d; if (d > mg) mg = d
				if ((d = s - c) < 0) d = -d; if (d > ig) ig = d
				if ((d = o - c) < 0) d = -d; if (d > dg) dg = d }
			printf "bench: python: shares: by construction/marple/sys._current_frames()/watchdog %%:%s; largest gap: marple %.1f, sys._current_frames() %.1f, watchdog %.1f points (floor: 5)\n", line, mg, ig, dg }' "$T/$w.out"
done

# the cost of Python frames: the chain workload with and without them, long
# enough for thousands of samples, runs interleaved.  The whole cost a
# sample, BPF run time plus the collector's CPU start-up included (the
# issue's measure); the collector's start-up (loading, verifying the
# programs, reading the tables) apart, and its CPU a sample after it; and
# what Python frames themselves cost, as counted apart: the walks' BPF time
# (walk_ns) and the collector's Python work (collector_cpu_ns), added to
# the --no-python run's costs.  The workload runs at nice -20: on a loaded
# machine it got 20-40% of a CPU, and so a third to half the samples, a
# different number in each run, over which a start-up of ~80 ms is shared
COST_SECS=${PY_BENCH_COST_SECS:-8}; RUNS=${PY_BENCH_COST_RUNS:-3}
# cost FILE TIMEFILE: "samples bpf_ns_a_sample collector_ns_a_sample
# start-up_ns collector_ns_a_sample_after_start-up"
cost() {
	read -r u s st < "$2"
	n=$(trailer_num "$1" samples); p=$(trailer_num "$1" program_ns)
	awk -v u="$u" -v s="$s" -v st="${st:-0}" -v n="${n:-0}" -v p="${p:-0}" 'BEGIN {
		if (n > 0) printf "%d %.0f %.0f %.0f %.0f\n", n, p / n, (u + s) * 1e9 / n, st * 1e9, (u + s - st) * 1e9 / n
		else print "0 0 0 0 0" }'
}
r=1
: > "$T/cost"
while [ $r -le "$RUNS" ]; do
	PRIO=-20 SUFFIX=.cost run chain "$COST_SECS" -F 999
	PRIO=-20 SUFFIX=.costnative run chain "$COST_SECS" -F 999 --no-python
	set -- $(cost "$T/chain.cost.out" "$T/chain.cost.time") $(cost "$T/chain.costnative.out" "$T/chain.costnative.time")
	n=$1 b=$2 c=$3 st=$4 ca=$5 nn=$6 nb=$7 nc=$8 nst=$9 nca=${10}
	walked=$(trailer_num "$T/chain.cost.out" walks_timed)
	walk=$(awk -v w="$(trailer_num "$T/chain.cost.out" walk_ns)" -v n="${walked:-0}" 'BEGIN { printf "%.0f", n ? w / n : 0 }')
	pyc=$(awk -v w="$(trailer_num "$T/chain.cost.out" collector_cpu_ns)" -v n="${n:-0}" 'BEGIN { printf "%.0f", n ? w / n : 0 }')
	bytes=$(trailer_num "$T/chain.cost.out" code_cache_bytes); codes=$(trailer_num "$T/chain.cost.out" code_objects)
	ratio=$(awk -v a=$((b + c)) -v b=$((nb + nc)) 'BEGIN { printf "%.2f", b ? a / b : 0 }')
	after=$(awk -v a=$((b + ca)) -v b=$((nb + nca)) 'BEGIN { printf "%.2f", b ? a / b : 0 }')
	added=$(awk -v a=$((nb + nc + walk + pyc)) -v b=$((nb + nc)) 'BEGIN { printf "%.2f", b ? a / b : 0 }')
	echo "bench: python: cost run $r: with Python frames $n samples, BPF $b ns + collector $c ns a sample; --no-python $nn samples, BPF $nb ns + collector $nc ns; whole ${ratio}x (floor: 1.3x)"
	echo "bench: python: cost run $r: collector start-up $((st / 1000000)) ms with Python frames, $((nst / 1000000)) ms without; after it, BPF + collector a sample $((b + ca)) ns with, $((nb + nca)) ns without: ${after}x"
	echo "bench: python: cost run $r: Python frames' own, a sample: walk $walk ns (BPF) + $pyc ns (collector) over --no-python's $((nb + nc)) ns: ${added}x; code-object cache $bytes bytes for $codes code objects"
	echo "$ratio $added $b $nb $c $nc $walk $pyc $after $st $nst" >> "$T/cost"
	r=$((r + 1))
done
awk '{ for (i = 1; i <= 11; i++) { if (NR == 1 || $i < lo[i]) lo[i] = $i; if (NR == 1 || $i > hi[i]) hi[i] = $i } }
	END { if (!NR) exit
		printf "bench: python: cost, %d runs: whole %.2f-%.2fx (floor: 1.3x); BPF ns a sample %d-%d with Python frames, %d-%d without; collector ns a sample %d-%d with, %d-%d without\n",
			NR, lo[1], hi[1], lo[3], hi[3], lo[4], hi[4], lo[5], hi[5], lo[6], hi[6]
		printf "bench: python: cost, %d runs: after start-up %.2f-%.2fx; collector start-up %d-%d ms with Python frames, %d-%d ms without\n",
			NR, lo[9], hi[9], lo[10] / 1e6, hi[10] / 1e6, lo[11] / 1e6, hi[11] / 1e6
		printf "bench: python: cost, %d runs: Python frames'"'"' own %.2f-%.2fx: walk %d-%d ns (BPF), %d-%d ns (collector) a sample\n",
			NR, lo[2], hi[2], lo[7], hi[7], lo[8], hi[8] }' "$T/cost"
grep -o '"python":{[^}]*}[^}]*}' "$T/chain.cost.out" | head -n 1 | sed 's/^/bench: python: trailer: /'
echo "bench: python: load average $(cut -d' ' -f1-3 /proc/loadavg)"
