# Every CPython on the machine (tests/collectors/pythons.sh: pyenv's,
# /usr/bin/python3*, MARPLE_PYTHONS) running a recursive script whose
# stacks and lines are known: marple-callstack shows its chain of Python
# functions in place of the eval loop (3.6-3.13: by table; 3.13+ also by the
# interpreter's own _Py_DebugOffsets), each frame at the line it runs, or
# refuses it by name (Python 2).  A 3.13+ walked with the built-in table
# taken away (the test-only MARPLE_TEST_PYTHON_NO_TABLE) shows the same.
. "$MARPLE_TOP/tests/lib.sh"
. "$MARPLE_TOP/tests/collectors/stacks.sh"
. "$MARPLE_TOP/tests/collectors/pythons.sh"
CS="$MARPLE_BIN/marple-callstack"

find_pythons > "$T/pythons"
n=$(wc -l < "$T/pythons")
day_one=$(awk '{ split($1, v, "."); if (v[1] == 3 && v[2] >= 13) print $2 }' "$T/pythons" | head -n 1)
perf312=$(awk '{ split($1, v, "."); if (v[1] == 3 && v[2] == 12) print $2 }' "$T/pythons" | head -n 1)
# a CPython whose program is a launcher of a shared libpython (pyenv's),
# 3.12 if there is one
shared=$(while read -r v py; do
	[ "$("$py" -c 'import sysconfig; print(sysconfig.get_config_var("Py_ENABLE_SHARED"))' 2>/dev/null)" = 1 ] &&
		echo "$v $py"
done < "$T/pythons" | awk '{ split($1, v, "."); if (v[1] == 3 && v[2] >= 11) print (v[2] == 12 ? 0 : 1), $2 }' | sort -n |
	awk 'NR == 1 { print $2 }')
plan $(( n * 3 + (${day_one:+1} + 0) * 2 + (${perf312:+1} + 0) * 2 + 4 ))
absent=$(pythons_absent)
echo "# CPythons found: $(awk '{ printf "%s ", $1 }' "$T/pythons")"
echo "# absent: ${absent:-none}"
if ! is_root; then
	skip_rest "python-versions: BPF cases" "not root"
fi
check "python-versions: at least one CPython found" test "$n" -gt 0

cp "$MARPLE_TOP/tests/workloads/pytree.py" "$T/work.py"
P='[ ][(][^)]*[)]'	# " (file:line)"

# profile PYTHON OUT [ENV...]: 2 s of work.py at 199 Hz (PYFLAGS: the
# interpreter's options)
profile() {
	py=$1 out=$2
	shift 2
	"$py" ${PYFLAGS:-} "$T/work.py" 6 nojson & pid=$!
	sleep 0.7
	env "$@" "$CS" -F 199 -p "$pid" 2 > "$out" 2> "$out.err"
	kill "$pid" 2>/dev/null; wait "$pid" 2>/dev/null
}

# python_frames OUT [PERCENT [share]]: the distinct Python frame names of
# OUT's stacks (those in at least PERCENT of its samples); with share, each
# after its share of the samples and a tab
python_frames() {
	awk -v pct="${2:-0}" -v share="${3:-}" '/^\{"trailer"/ { exit } index($0, "#") && substr($0, 1, 1) != "{" {
		w = substr($0, 1, index($0, "#") - 1); total += w
		n = split(substr($0, index($0, "#") + 1), f, ";"); delete seen
		for (i = 1; i <= n; i++) if (f[i] ~ / [(].*work[.]py:[0-9]+[)]$/ && !seen[f[i]]++) sum[f[i]] += w
	} END { for (k in sum) if (sum[k] * 100 >= pct * total) print (share ? sprintf("%.1f\t", 100 * sum[k] / total) : "") k }' "$1" | sort
}

# lines_right OUT: every Python frame of work.py (pytree.py) at a line of its
# function's body (fib 8-9, walk 15-21, main 27-34, <module> 36; 3.11+ show
# a function about to start at its def line), and the calls at their lines:
# 9 17 20 32 36
lines_right() {
	python_frames "$1" | sed 's/^\(.*\) [(].*work[.]py:\([0-9]*\)[)]$/\1 \2/' | awk '
		{ ok = ($1 == "fib" && $2 >= 8 && $2 <= 9) || ($1 ~ /walk$/ && $2 >= 15 && $2 <= 21) ||
		       ($1 == "main" && $2 >= 27 && $2 <= 34) || ($1 == "<module>" && $2 == 36)
		  if (!ok) { print "wrong: " $0; bad = 1 }
		  seen[$2] = 1 }
		END { for (l = split("9 17 20 32 36", want, " "); l > 0; l--) if (!seen[want[l]]) { print "missing: " want[l]; bad = 1 }
		      exit bad }'
}

while read -r v py; do
	out="$T/$v.out"
	profile "$py" "$out"
	case $v in
	2.*)
		check "python $v: refused by name on stderr" grep -q "runs Python 2: Python 2 is not walked" "$out.err"
		check "python $v: no Python frames, the native stacks kept" sh -c "! grep -q 'work[.]py' '$out' && grep -q PyEval_EvalFrameEx '$out'"
		check "python $v: counted refused in the trailer" grep -q '"2 refused":1' "$out"
		continue ;;
	esac
	# before 3.11 a code object has no qualified name (walk, not
	# Tree.walk), and each Python call has C frames between (N)
	W="(Tree[.])?walk$P" N='(;[^;()]*)*'
	total=$(weight "$out" '.')
	chain=$(weight "$out" ";<module>$P$N;main$P($N;$W)+($N;fib$P)*$N$")
	deep=$(weight "$out" ";<module>$P$N;main$P$N;$W$N;$W$N;$W$N;$W$N;fib$P")
	if [ "$total" -gt 20 ] && [ "$chain" -ge $(( total * 9 / 10 )) ] && [ "$deep" -ge $(( total / 2 )) ]; then
		pass "python $v: <module>;main;walk...;fib in $chain of $total samples ($deep under four walks)"
	else
		fail "python $v: <module>;main;walk...;fib in >= 90% of the samples, >= 50% under four walks" "$chain and $deep of $total: $(cat "$out.err") $(grep -v '^{' "$out" | sort -n | tail -n 1 | cut -c1-400)"
	fi
	if lines_right "$out" > "$T/lines"; then
		pass "python $v: each frame at a line of its function, the calls at theirs"
	else
		fail "python $v: each frame at a line of its function, the calls at theirs" "$(tr '\n' ' ' < "$T/lines")"
	fi
	merged=$(trailer_num "$out" samples_merged)
	# (the rest: a sample as an activation starts or ends, its extra
	# native activation left as it is; 5% of them before 3.11)
	if [ "${merged:-0}" -ge $(( total * 8 / 10 )) ] && [ "$total" -gt 0 ]; then
		pass "python $v: >= 80% of the samples merged one to one ($merged of $total)"
	else
		fail "python $v: >= 80% of the samples merged one to one" "${merged:-none} of $total; $(grep -o '"interpreters":{[^}]*}' "$out")"
	fi
done < "$T/pythons"

# the day-one path: a version known by its _Py_DebugOffsets alone, beside
# one collector with the table, both on the same process at once
if [ -n "$day_one" ]; then
	v=$("$day_one" -c 'import sys; print("%d.%d.%d" % sys.version_info[:3])')
	"$day_one" "$T/work.py" 6 nojson & pid=$!
	sleep 0.7
	"$CS" -F 199 -p "$pid" 3 > "$T/table.out" 2> "$T/table.err" & c1=$!
	MARPLE_TEST_PYTHON_NO_TABLE=1 "$CS" -F 199 -p "$pid" 3 > "$T/noTable.out" 2> "$T/noTable.err"
	wait "$c1"
	kill "$pid" 2>/dev/null; wait "$pid" 2>/dev/null
	check "python $v: without the table, walked with its debug offsets" sh -c "grep -q '\"$v debug_offsets\":1' '$T/noTable.out' && grep -q '\"$v table+debug_offsets\":1' '$T/table.out'"
	# each frame's share of the samples within 6 points, among those in 5%
	# of them or more in either (rarer ones come and go)
	python_frames "$T/table.out" 0 share > "$T/with"
	python_frames "$T/noTable.out" 0 share > "$T/without"
	apart=$(awk -F'\t' 'NR == FNR { w[$2] = $1; next } { o[$2] = $1 }
			END { for (k in w) if (w[k] >= 5 || o[k] >= 5) { d = w[k] - o[k]; if (d < -6 || d > 6) print k ": " w[k] "% against " o[k] "%" }
			      for (k in o) if (!(k in w) && o[k] >= 5) print k ": none against " o[k] "%" }' "$T/with" "$T/without")
	if [ -z "$apart" ] && [ -s "$T/with" ]; then
		pass "python $v: the same frames with the table and without, in the same shares ($(wc -l < "$T/with") names)"
	else
		fail "python $v: the same frames with the table and without, in the same shares" "$(echo "$apart" | head -n 5 | tr '\n' ' ')"
	fi
fi

# 3.12's -X perf: each Python call goes through a trampoline of its own (the
# perf map's py::qualname:file), JIT code with no CFI and no frame pointer:
# unwound through (its one layout known), and left out of the merged stacks,
# where the walked frames say the same with the line
if [ -n "$perf312" ]; then
	PYFLAGS="-X perf" profile "$perf312" "$T/perf.out"
	total=$(weight "$T/perf.out" '.')
	whole=$(weight "$T/perf.out" "^[^;]*;_start;.*;<module>$P;.*;main$P;.*fib$P")
	if [ "$total" -gt 20 ] && [ "$whole" -ge $(( total * 8 / 10 )) ]; then
		pass "python -X perf: unwound through the trampolines, from _start to fib ($whole of $total)"
	else
		fail "python -X perf: unwound through the trampolines, from _start to fib" "$whole of $total: $(grep -v '^{' "$T/perf.out" | sort -n | tail -n 1 | cut -c1-300)"
	fi
	tramp=$(trailer_num "$T/perf.out" perf_trampolines_left_out)
	# (a stack not merged, as the process's first, keeps them: its only
	# Python names)
	doubled=$(grep -v '^{' "$T/perf.out" | grep 'py::' | grep -c "$P")
	if [ "$doubled" -eq 0 ] && [ "${tramp:-0}" -gt 0 ]; then
		pass "python -X perf: no py:: frame beside the walked ones ($tramp trampoline frames left out)"
	else
		fail "python -X perf: no py:: frame beside the walked ones" "$doubled stacks, left out ${tramp:-none}: $(grep 'py::' "$T/perf.out" | grep -m1 -o ".\{80\}py::.\{40\}")"
	fi
fi

# A shared libpython (pyenv's python3.12 calls libpython3.12.so's
# Py_BytesMain): a process started while the collector is stopped (user
# space cannot look at it) is walked from its first samples, its launcher's
# call into the library found by the BPF side once one process of that
# library was looked at
if [ -z "$shared" ]; then
	skip "python shared libpython: its library found by the BPF side" "no CPython 3.11+ with a shared libpython (pyenv's)"
	skip "python shared libpython: walked from the first sample" "no CPython 3.11+ with a shared libpython (pyenv's)"
	skip "python shared libpython: looked at again while ld.so holds it unrelocated" "no CPython 3.11+ with a shared libpython (pyenv's)"
else
	cat > "$T/launched.py" <<'PYEOF'
import sys, time

def spin(n):
    s = 0
    for i in range(n):
        s += i
    return s

def launched():
    # 0.4 s of CPU, whatever the load: ~200 samples
    t = time.process_time()
    while time.process_time() - t < 0.4:
        spin(15)

launched()
open(sys.argv[1], "w").close()
time.sleep(1)
PYEOF
	ln -s "$shared" "$T/pylaunch"
	# the capture, a first process looked at, the launcher started while
	# the collector is stopped
	MARPLE_READY_FILE="$T/lr" "$CS" -F 499 > "$T/launch.out" 2> "$T/launch.err" & cs=$!
	if wait_ready "$T/lr" 20 "$cs"; then
		# (1 s of CPU and 1 s more: user space must have looked at it
		# before it is stopped)
		"$shared" -c 'import time; t = time.process_time()
while time.process_time() - t < 1: pass'
		sleep 1
		run_while_stopped "$cs" "$T/launched.done" "$T/pylaunch" "$T/launched.py" "$T/launched.done"
		kill -INT "$cs"
	fi
	wait "$cs"
	bylib=$(trailer_num "$T/launch.out" processes_known_by_library)
	running=$(weight "$T/launch.out" "^pylaunch;.*;Py_RunMain;")
	chain=$(weight "$T/launch.out" "^pylaunch;.*;Py_RunMain;.*;<module>$P;launched$P")
	unbound=$(trailer_num "$T/launch.out" samples_launcher_unbound)
	if [ "${bylib:-0}" -ge 1 ]; then
		pass "python shared libpython: its library found by the BPF side ($bylib processes; ${unbound:-0} samples before the launcher's call was bound)"
	else
		fail "python shared libpython: its library found by the BPF side" "$(grep -o '"processes_known_by_library.\{0,120\}' "$T/launch.out")"
	fi
	if [ "$running" -ge 20 ] && [ "$chain" -ge $(( running * 8 / 10 )) ]; then
		pass "python shared libpython: walked from the first sample ($chain of $running samples of the script)"
	else
		fail "python shared libpython: walked from the first sample" "$chain of $running: $(grep -m1 '^[0-9]*#pylaunch' "$T/launch.out" | cut -c1-300)"
	fi

	# The launcher held in ld.so with libpython mapped but not relocated
	# (tests/workloads/ldhold, an rtld-audit library) until the collector
	# has answered about it: looked at again, not refused, and walked once
	# ld.so is done.  (A loaded machine opens this window for a moment:
	# at load 15, 11 of 90 short python3.12 processes were refused so.)
	LD_AUDIT="$MARPLE_BIN/workloads/ldhold" LDHOLD_MATCH=libpython LDHOLD_UNTIL="$T/released" \
		"$T/pylaunch" "$T/launched.py" "$T/held.done" & held=$!
	MARPLE_DEBUG_ANSWERS=1 MARPLE_READY_FILE="$T/hr" "$CS" -F 199 -p "$held" > "$T/held.out" 2> "$T/held.err" & cs=$!
	wait_ready "$T/hr" 40 "$cs"
	i=0
	until grep -q "answer: pid $held " "$T/held.err" || [ $i -ge 200 ]; do
		sleep 0.1; i=$((i + 1))
	done
	first=$(grep -m1 "answer: pid $held " "$T/held.err" | sed 's/.*): //')
	touch "$T/released"
	wait "$held"
	kill -INT "$cs" 2>/dev/null; wait "$cs"
	running=$(weight "$T/held.out" "^pylaunch;.*;Py_RunMain;")
	chain=$(weight "$T/held.out" "^pylaunch;.*;Py_RunMain;.*;<module>$P;launched$P")
	case $first in
	"asked again: its code objects are not laid out as expected"*) ;;
	*) first="first answer: ${first:-none in 20 s}" ;;
	esac
	if [ "${first#first answer}" = "$first" ] && [ "$running" -ge 20 ] && [ "$chain" -ge $(( running * 8 / 10 )) ] &&
		! grep -q 'profiled natively' "$T/held.err"; then
		pass "python shared libpython: looked at again while ld.so holds it unrelocated, then walked ($chain of $running samples)"
	else
		fail "python shared libpython: looked at again while ld.so holds it unrelocated, then walked" "$first; $chain of $running; $(grep -v 'answer: pid' "$T/held.err" | head -n 2 | tr '\n' ' ')$(grep -m1 '^[0-9]*#pylaunch' "$T/held.out" | cut -c1-200)"
	fi
fi
