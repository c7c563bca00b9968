# marple-callstack and Python: Debian's own /usr/bin/python3 (3.11, stripped)
# running a script with known functions; its Python functions replace the
# interpreter's eval loop in the stacks, the C frames under them stay.
. "$MARPLE_TOP/tests/lib.sh"
plan 29
W="$MARPLE_BIN/workloads"
CS="$MARPLE_BIN/marple-callstack"
PY=/usr/bin/python3

. "$MARPLE_TOP/tests/collectors/stacks.sh"
python311_only python "$PY"

cp "$MARPLE_TOP/tests/workloads/pytree.py" "$T/work.py"	# fib at line 9

# 1. the chains by qualname, the C under them, merged with no mismatch
"$PY" "$T/work.py" 12 & py=$!
sleep 0.5
MARPLE_READY_FILE="$T/r1" "$CS" -F 499 -p "$py" 4 > "$T/py.out" 2> "$T/py.err"; rc=$?
"$CS" -F 499 -p "$py" --no-python 1 > "$T/native.out" 2> "$T/native.err"
kill "$py" 2>/dev/null; wait "$py" 2>/dev/null
check "python: exit 0 and a valid stream" sh -c "[ $rc -eq 0 ] && marple-cat -q '$T/py.out'"
P='[ ][(][^)]*[)]'	# " (file:line)"
total=$(weight "$T/py.out" '.')
fibw=$(weight "$T/py.out" "^python3;.*;<module>$P;main$P;Tree[.]walk$P;Tree[.]walk$P;Tree[.]walk$P;Tree[.]walk$P;fib$P(;fib$P)*$")
json=$(weight "$T/py.out" ";main$P;encode$P;dumps$P;JSONEncoder[.]encode$P;JSONEncoder[.]iterencode$P;_PyObject_MakeTpCall;.*[[]_json[.]cpython")
if [ "$fibw" -gt 0 ] && [ "$fibw" -lt "$total" ]; then
	pass "python: <module>;main;Tree.walk x4;fib chains ($fibw of $total samples)"
else
	fail "python: <module>;main;Tree.walk x4;fib chains" "$fibw of $total samples: $(grep -m1 fib "$T/py.out" | cut -c1-300)"
fi
if [ "$json" -gt 0 ]; then pass "python: json's C encoder under JSONEncoder.iterencode ($json samples)"
else fail "python: json's C encoder under JSONEncoder.iterencode" "none of $total samples: $(grep -m1 json "$T/py.out" | cut -c1-300)"; fi
check "python: file and line of each function" grep -q "fib ($T/work.py:9)" "$T/py.out"
# the eval loop is gone from all but the samples taken before the process was
# looked at (its first) or while an activation starts or ends
evalw=$(weight "$T/py.out" '_PyEval_EvalFrameDefault')
merged=$(trailer_num "$T/py.out" samples_merged)
if [ "$total" -gt 50 ] && [ "$evalw" -le $(( total / 10 )) ] && [ "${merged:-0}" -ge $(( total * 9 / 10 )) ]; then
	pass "python: >= 90% of the samples merged ($merged of $total; $evalw left with the eval loop)"
else
	fail "python: >= 90% of the samples merged" "merged ${merged:-?}, eval loop in $evalw, of $total samples"
fi
# what Python frames cost: the walks' BPF run time, the collector's CPU
# (the walks in the samples the stages' clock times, one in 8: not all)
walkns=$(trailer_num "$T/py.out" walk_ns); pycpu=$(trailer_num "$T/py.out" collector_cpu_ns)
timedw=$(trailer_num "$T/py.out" walks_timed); pysamples=$(trailer_num "$T/py.out" samples_of_python_processes)
if [ "${walkns:-0}" -gt 0 ] && [ "${pycpu:-0}" -gt 0 ] && [ "${timedw:-0}" -gt 0 ] &&
	[ $(( ${timedw:-0} * 4 )) -le "${pysamples:-0}" ]; then
	pass "python: the trailer counts the walks' BPF time ($walkns ns in $timedw of $pysamples walks) and the collector's CPU ($pycpu ns)"
else
	fail "python: the trailer counts the walks' BPF time, one walk in 8, and the collector's CPU" "walk_ns ${walkns:-none}, walks_timed ${timedw:-none} of ${pysamples:-none}, collector_cpu_ns ${pycpu:-none}"
fi
# a new stack whose code objects are all named, as they were, is told to
# the collector without waking it (PY_REQUEST_KNOWN): a wake-up a new stack
# (one sample in three: each instruction makes its own stack) cost more of
# its CPU than all its other Python work
# (or not told at all: the same frames were found named less than a
# second before, stacks_checked_lately)
told=$(trailer_num "$T/py.out" stacks_told); known=$(trailer_num "$T/py.out" stacks_told_known)
lately=$(trailer_num "$T/py.out" stacks_checked_lately)
new=$(( ${told:-0} + ${lately:-0} )) quiet=$(( ${known:-0} + ${lately:-0} ))
if [ "$new" -gt 20 ] && [ "$quiet" -ge $(( new * 8 / 10 )) ]; then
	pass "python: >= 80% of the new stacks told without a wake-up ($known of $told told, $lately checked lately)"
else
	fail "python: >= 80% of the new stacks told without a wake-up" "stacks_told ${told:-none}, stacks_told_known ${known:-none}, stacks_checked_lately ${lately:-none}"
fi
# the verifier's walk of the sampling program is most of the start-up: the
# interpreters' walks add at most 8,200 instructions to it (Python's added
# 11,842: 35,700 against 23,858, with stacks_store inlined twice more for
# Python stacks; then 3,822 of 31,338, and 3,739 of 20,145 once stacks_store
# and the VMA lookup were global functions, checked once: a ratio to the rest
# no longer says it; with PHP's 4,892 of 16,406; Perl's walk 1,064 more;
# Ruby's 1,324 more: 7,280 of 16,429; its threads' ec, the learned VMAs
# global and the iseq memo: 7,313 of 15,805; Perl's step global, its
# contexts read four at a time, py_append global: 7,415 of 17,552; the memo
# of frames checked lately, hashing 8 words a step: 7,669 of 18,795; Perl's
# lines memo and the walk timed in timed samples only: 7,931 of 18,795;
# Ruby's frames memo, ~200 ns off a Ruby sample: 8,102 of 18,795; the
# lines memo Perl's and PHP's, a global function: 8,049; CPython's thread
# state memo: 8,053 of 18,581)
# All the walks are checked for a capture that may meet any interpreter (here
# of this shell: no interpreter mapped); one of a Python process checks
# CPython's alone (pyframes_walks_for: 4,167 fewer for a Ruby's)
"$CS" -F 499 -p "$$" 0.2 > "$T/all.out" 2> "$T/all.err"
allins=$(trailer_num "$T/all.out" program_verified_insns)
pyins=$(trailer_num "$T/py.out" program_verified_insns); natins=$(trailer_num "$T/native.out" program_verified_insns)
if [ "${natins:-0}" -gt 0 ] && [ "${pyins:-0}" -gt 0 ] && [ "${allins:-0}" -gt "${pyins:-0}" ] &&
   [ $(( allins - natins )) -le 8200 ]; then
	pass "python: the sampling program verifies all walks in <= 8,200 instructions more than --no-python's, a Python process's its own ($allins, $pyins, $natins)"
else
	fail "python: the sampling program verifies all walks in <= 8,200 instructions more than --no-python's, a Python process's its own" "all ${allins:-none}, Python's ${pyins:-none}, --no-python's ${natins:-none}: $(head -c 200 "$T/all.err")"
fi
# plausible weights: fib's recursion and json's encoding both take a share
if [ "$fibw" -ge $(( total / 10 )) ] && [ "$json" -ge $(( total / 20 )) ]; then
	pass "python: fib and json both weigh (fib $fibw, json $json of $total)"
else
	fail "python: fib and json both weigh" "fib $fibw, json $json of $total"
fi

# 1b. the trailer says what the frames are (marple-format(5), "frames"), and
# the exports use it: pprof's functions with file:line, the flame graph's hue
if "$PY" - "$T/py.out" "$T/work.py" <<'PYEOF'
import json, sys
t = [json.loads(l) for l in open(sys.argv[1]) if l.startswith('{"trailer"')][0]
tr = t["frames"]
fib = tr["fib (%s:9)" % sys.argv[2]]
native = tr["Py_RunMain"]
ok = fib == {"kind": "python", "file": sys.argv[2], "line": 9} and native["kind"] == "native" and \
     native["file"].startswith("/usr/bin/python3") and len(t["build_ids"].get(native["file"], "")) == 40 and \
     native["offset"] > 0
sys.exit(0 if ok else 1)
PYEOF
then pass "python: the trailer describes fib (python, file, line) and Py_RunMain (native, file, build id, offset)"
else fail "python: the trailer describes the frames" "$(tail -n 1 "$T/py.out" | grep -o '"frames":.\{300\}')"; fi
if pprof_traces "$T/py.out" "$T/py.traces"; then
	check "python: go tool pprof -lines shows Python frames by file:line (fib $T/work.py:9, Tree.walk)" sh -c "
		grep -q '^ *fib $T/work.py:9\$' '$T/py.traces' && grep -q '^ *Tree.walk $T/work.py:[0-9]*\$' '$T/py.traces'"
else
	fail "python: go tool pprof" "go missing (scripts/install-deps installs golang-go)"
fi
marple-flamegraph "$T/py.out" > "$T/py.svg"
fibhue=$(grep -o "fill=\"#[0-9a-f]\{6\}\"/><text[^>]*>fib (/" "$T/py.svg" | head -n 1 |
	sed 's/fill="#\(..\)\(..\)\(..\)".*/\1 \2 \3/' | { read -r r g b; [ $((0x$g)) -gt $((0x$r)) ] && echo green || echo warm; })
check "python: the flame graph draws Python frames green ($fibhue)" test "$fibhue" = green

# 2. --no-python: the interpreter's own frames, as before
"$PY" "$T/work.py" 6 & py=$!
sleep 0.5
"$CS" --no-python -F 499 -p "$py" 2 > "$T/native.out" 2> "$T/native.err"
kill "$py" 2>/dev/null; wait "$py" 2>/dev/null
if [ "$(weight "$T/native.out" "$P")" -eq 0 ] && [ "$(weight "$T/native.out" '_PyEval_EvalFrameDefault')" -gt 0 ] &&
   ! grep -q '"python":' "$T/native.out"; then
	pass "python: --no-python keeps the stacks native"
else
	fail "python: --no-python keeps the stacks native" "$(grep -m1 -e "$T/work.py" "$T/native.out" | cut -c1-200)"
fi

# 2b. frame pointers only (python3 has none: the native stack stops within a
# frame or two): the Python frames the native stack cannot place are put
# first, whole, before a frame that says native frames are missing there
"$PY" "$T/work.py" 6 & py=$!
sleep 0.5
"$CS" --unwind fp -F 499 -p "$py" 2 > "$T/fp.out" 2> "$T/fp.err"
kill "$py" 2>/dev/null; wait "$py" 2>/dev/null
fpw=$(weight "$T/fp.out" "^python3;<module>$P;main$P;.*[[]native frames not unwound[]]")
fptotal=$(weight "$T/fp.out" '.')
if [ "$fpw" -ge $(( fptotal / 2 )) ] && [ "$fptotal" -gt 0 ]; then
	pass "python: --unwind fp: Python frames before a cut native stack ($fpw of $fptotal)"
else
	fail "python: --unwind fp: Python frames before a cut native stack" "$fpw of $fptotal: $(grep -m1 '^[0-9]' "$T/fp.out" | cut -c1-200)"
fi

# 3. a Python of a version without a known layout: said once, profiled natively
"$W/fakepython" 60 & fp=$!
exec_done "$fp" fakepython
"$CS" -F 499 -p "$fp" 2 > "$T/fake.out" 2> "$T/fake.err"
kill "$fp" 2>/dev/null; wait "$fp" 2>/dev/null
n=$(grep -c "process $fp (fakepython) runs Python 3.14.0: no _Py_DebugOffsets at the start of _PyRuntime; profiled natively" "$T/fake.err")
if [ "$n" -eq 1 ]; then pass "python: an unknown version without debug offsets is named once on stderr"
else fail "python: an unknown version without debug offsets is named once on stderr" "$n times: $(head -c 300 "$T/fake.err")"; fi
# ... with debug offsets it cannot trust: a free-threaded build, a form not read
for kind in freethreaded badform; do
	"$W/fakepython" 60 "$kind" & fp=$!
	exec_done "$fp" fakepython
	"$CS" -F 499 -p "$fp" 1 > "$T/fake.out" 2> "$T/fake.err"
	kill "$fp" 2>/dev/null; wait "$fp" 2>/dev/null
	case $kind in
	freethreaded) why="a free-threaded build (its frames are not walked yet)" ;;
	*) why="its _Py_DebugOffsets are in a form marple does not read" ;;
	esac
	n=$(grep -c "process $fp (fakepython) runs Python 3.14.0: $why; profiled natively" "$T/fake.err")
	if [ "$n" -eq 1 ] && grep -q '"3.14.0 refused":1' "$T/fake.out"; then
		pass "python: $kind debug offsets refused, named once, counted"
	else
		fail "python: $kind debug offsets refused, named once, counted" "$n times: $(head -c 300 "$T/fake.err")"
	fi
done
if [ "$(weight "$T/fake.out" '^fakepython;.*main;_PyEval_EvalFrameDefault$')" -gt 0 ] &&
   grep -q '"processes_refused":1' "$T/fake.out"; then
	pass "python: ... and profiled natively"
else
	fail "python: ... and profiled natively" "$(grep -m1 '^[0-9]' "$T/fake.out" | cut -c1-200)"
fi

# 4. a process that is no Python: looked at, left alone
"$W/hotcold" 60 & wl=$!
exec_done "$wl" hotcold
"$CS" -F 499 -p "$wl" 2 > "$T/hc.out" 2> "$T/hc.err"
kill "$wl" 2>/dev/null; wait "$wl" 2>/dev/null
check "python: a native process is asked about" grep -q '"python":{"processes_walked":0,"processes_refused":0,"bpf":{"samples_of_python_processes":0,.*"processes_asked":1' "$T/hc.out"
# (stderr: nothing but, on a loaded machine, the line on samples asked and got)
if [ "$(weight "$T/hc.out" '^hotcold;.*main;run_round;hot_loop$')" -gt 0 ] &&
   ! grep -qv '^marple-callstack: asked for' "$T/hc.err"; then
	pass "python: ... and its stacks are as before"
else
	fail "python: ... and its stacks are as before" "$(head -c 300 "$T/hc.err")"
fi

# 5. a Python process started during a capture of the whole system
MARPLE_READY_FILE="$T/r5" "$CS" -F 499 > "$T/sys.out" 2> "$T/sys.err" & cs=$!
if wait_ready "$T/r5" 20 "$cs"; then
	"$PY" "$T/work.py" 2.5
	kill -INT "$cs"
fi
wait "$cs"
if [ "$(weight "$T/sys.out" "^python3;.*;main$P;Tree[.]walk$P;.*;fib$P")" -gt 0 ]; then
	pass "python: a process started during the capture has its Python frames"
else
	fail "python: a process started during the capture has its Python frames" "$(grep -m1 '^[0-9]*#python3' "$T/sys.out" | cut -c1-300)"
fi

# 6. code objects freed and their memory reused: each round makes a_N and
# b_N afresh (N cycling), calls a_N -> b_N, and drops them; a cache that
# trusted an address would name b_7's frame b_3 (471 of 733 chains did)
cat > "$T/reuse.py" <<'PYEOF'
import sys, time
def fresh(n):
    src = ("def a_%d(k):\n    return b_%d(k) + 1\n"
           "def b_%d(k):\n    s = 0\n    for i in range(k):\n        s += i\n    return s\n") % (n, n, n)
    g = {}
    exec(src, g)
    return g["a_%d" % n]
end = time.time() + float(sys.argv[1])
n = 0
while time.time() < end:
    f = fresh(n % 50)
    for _ in range(20):
        f(3000)
    del f
    n += 1
PYEOF
"$PY" "$T/reuse.py" 6 & py=$!
sleep 0.5
"$CS" -F 499 -p "$py" 3 > "$T/reuse.out" 2> "$T/reuse.err"
kill "$py" 2>/dev/null; wait "$py" 2>/dev/null
grep -o 'a_[0-9]* [^;]*;b_[0-9]*' "$T/reuse.out" |
	awk '{ split($1, a, "_"); split($0, b, ";b_"); if (a[2] == b[2]) same++; else diff++ }
	     END { print same + 0, diff + 0 }' > "$T/reuse.count"
read same diff < "$T/reuse.count"
# A code object freed and reused in the few milliseconds between a sample and
# its naming is named after its successor (memory read after the fact): this
# stress test reuses them as fast as Python can, and 1 chain in ~300 was so
# named in one run of six (marple-callstack(1), BUGS).  Before the re-read of
# reused objects, 471 of 733 were.
if [ "$same" -gt 0 ] && [ $((diff * 100)) -le "$same" ]; then pass "python: reused code objects are named anew ($same chains a_N;b_N, $diff named after a successor)"
else fail "python: reused code objects are named anew" "$same chains right, $diff with another b_N (1% allowed)"; fi

# 7. a Python in its own pid namespace (as in a container) numbers its
# threads its own way: its thread states are still recognized
if command -v unshare > /dev/null && unshare --pid --fork true 2>/dev/null; then
	unshare --pid --fork "$PY" "$T/work.py" 6 & ns=$!
	# its child, once it runs python3 (5 s at most; 0.7 s was guessed)
	i=0
	while ! py=$(pgrep -P "$ns" -x python3) && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
	"$CS" -F 499 -p "${py:-$ns}" 2 > "$T/ns.out" 2> "$T/ns.err"
	kill "$ns" 2>/dev/null; wait "$ns" 2>/dev/null
	if [ "$(weight "$T/ns.out" ";main$P;Tree[.]walk$P;.*;fib$P")" -gt 0 ]; then
		pass "python: a process in another pid namespace has its Python frames"
	else
		fail "python: a process in another pid namespace has its Python frames" "$(grep -o '"python":.\{0,200\}' "$T/ns.out")"
	fi
else
	skip "python: a process in another pid namespace has its Python frames" "unshare --pid cannot run here"
fi

# 8. a thread's parent inside clone3: its native stack ends there (clone3 is
# where a new thread's stack starts, so it looks whole) yet its Python frames
# ran in activations further out.  They go first, before a frame that says
# native frames are missing; they were dropped before (58 of 306 samples of
# this workload lost their Python frames).  1% may still be left out, as
# the trailer counts: most likely a sample in the few instructions where
# 3.11's eval loop has set tstate->cframe but not yet its current_frame
# reads a stale frame chain that pairs with no activation (seen once in
# CI: 1 frame; not again in 39 runs here).
cat > "$T/spawn.py" <<'PYEOF'
import sys, threading, time
def nothing(): pass
def spawn():
    t = threading.Thread(target=nothing); t.start(); t.join()
end = time.time() + float(sys.argv[1])
while time.time() < end:
    spawn()
PYEOF
"$PY" "$T/spawn.py" 6 & py=$!
sleep 0.5
"$CS" -F 499 -p "$py" 3 > "$T/spawn.out" 2> "$T/spawn.err"
kill "$py" 2>/dev/null; wait "$py" 2>/dev/null
inclone=$(weight "$T/spawn.out" "^python3;<module>$P;spawn$P;Thread[.]start$P;[[]native frames not unwound[]];clone3(;|\$)")
left=$(trailer_num "$T/spawn.out" python_frames_left_out)
spawned=$(weight "$T/spawn.out" '.')
if [ "$inclone" -gt 0 ] && [ "$(( ${left:-$spawned} * 100 ))" -le "$spawned" ]; then
	pass "python: in clone3, the parent's Python frames go before the cut ($inclone samples, ${left} Python frames left out of $spawned samples)"
else
	fail "python: in clone3, the parent's Python frames go before the cut" "$inclone samples, ${left:-?} Python frames left out of $spawned samples (1% allowed)"
fi

# 9. the bench's other workloads (make bench BENCH=python): a callback through
# C (sorted with a key: sorted's C frames between sort_with_key and the
# lambda), a generator driven by C (sum's frames between generator and
# numbers), and worker threads (each under its own Thread.run).  Each chain
# holds most of its function's samples; the rest is a call starting or
# returning, where the caller is innermost.
"$PY" "$MARPLE_TOP/tests/workloads/pyshapes.py" 8 sort_with_key generator generator generator generator generator threads & py=$!
sleep 0.5
"$CS" -F 499 -p "$py" 4 > "$T/shapes.out" 2> "$T/shapes.err"
kill "$py" 2>/dev/null; wait "$py" 2>/dev/null
N='(;[^;(]+)+'	# one or more native frames
# shape NAME ANY_OF_ITS_SAMPLES ITS_CHAIN: at least 80% of the samples with
# its function in the chain, and the chain seen at all
shape() {
	all=$(weight "$T/shapes.out" "$2"); ok=$(weight "$T/shapes.out" "$3")
	if [ "$ok" -gt 0 ] && [ $((ok * 100)) -ge $((all * 80)) ]; then
		pass "python: $1 ($ok of $all samples)"
	else
		fail "python: $1" "$ok of $all samples: $(grep -v '^{' "$T/shapes.out" | grep -F "$4" | sort -t'#' -k1 -rn | head -n 1 | cut -c1-300)"
	fi
}
shape "sorted's C between sort_with_key and the lambda calling keyfn" \
	";keyfn$P" "^python3;.*;<module>$P;sort_with_key$P$N;sort_with_key[.]<locals>[.]<lambda>$P;keyfn$P" keyfn
shape "sum's C between generator and numbers" \
	";numbers$P" "^python3;.*;<module>$P;generator$P$N;numbers$P" numbers
shape "each worker thread's spin under Thread.run, from clone3" \
	";spin$P" "^python3;clone3;start_thread;.*;Thread[.]_bootstrap$P;Thread[.]_bootstrap_inner$P;Thread[.]run$P$N;spin$P" spin

# 9. a native program that dlopen()s libpython later (uwsgi, vim, a C program
# embedding Python): answered native at its first samples, looked at again
# when the unwinder meets the file mapped since, its Python frames walked from
# then on.  The workload spins natively until the collector has answered it
# (MARPLE_DEBUG_ANSWERS), then loads libpython, spins in Python until the
# collector's samples of it read that it is walked, then runs settle;crunch
# 1.5 s: the samples in that run (its exec's PyEval_EvalCode) are counted.
cp "$MARPLE_TOP/tests/workloads/pyembedded.py" "$T/embedded.py"
E=$T/embedded.py
dlembed_cases python /usr/lib/x86_64-linux-gnu/libpython3.11.so.1.0 "$E" \
	"^dlembed;_start;.*;main;run_library;PyRun_SimpleStringFlags;.*;<module> [(]$E:19[)];settle [(]$E:14[)];crunch [(]$E:[89][)]" \
	';run_library;PyRun_SimpleStringFlags;.*;PyEval_EvalCode;.*;PyEval_EvalCode;'
