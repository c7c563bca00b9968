# Python frames in every stack collector, not only marple-callstack: Debian's
# own /usr/bin/python3 (3.11, stripped) sleeping, waiting on a lock and on a
# pipe (off-CPU), building and keeping big lists (allocations, page faults);
# and a short-lived Python process walked from its first sample.
. "$MARPLE_TOP/tests/lib.sh"
plan 16
PY=/usr/bin/python3

. "$MARPLE_TOP/tests/collectors/stacks.sh"
python311_only python-stacks "$PY"
P='[ ][(][^)]*[)]'	# " (file:line)"
# a program that blocks three ways for ~50 ms each, in turn, and a helper
# thread that answers its pipe
cat > "$T/block.py" <<'PYEOF'
import os, sys, threading, time

def waiter():
    time.sleep(0.05)

def locker(lock):
    lock.acquire(timeout=0.05)

def piper(r, w):
    os.write(w, b"x")
    os.read(r, 1)

def helper(r, w):
    while True:
        os.read(r, 1)
        time.sleep(0.05)
        os.write(w, b"x")

def main():
    lock = threading.Lock()
    lock.acquire()
    ask_r, ask_w = os.pipe()
    ans_r, ans_w = os.pipe()
    threading.Thread(target=helper, args=(ask_r, ans_w), daemon=True).start()
    end = time.time() + float(sys.argv[1])
    while time.time() < end:
        waiter()
        locker(lock)
        piper(ans_r, ask_w)

main()
PYEOF
cat > "$T/alloc.py" <<'PYEOF'
import sys, time
kept = []

def build():
    return [list(range(1000)) for _ in range(100)]

def hoard():
    kept.append([0] * 20000)

def count():
    s = 0
    for i in range(20000):
        s += i
    return s

def main():
    end = time.time() + float(sys.argv[1])
    while time.time() < end:
        build()
        hoard()
        count()
        time.sleep(0.01)

main()
PYEOF

# 1. off-CPU: each way of blocking under its Python function
"$PY" "$T/block.py" 8 & py=$!
sleep 0.5
marple-offcpu -p "$py" 3 > "$T/off.out" 2> "$T/off.err"; rc=$?
check "python-stacks: offcpu exits 0 with a valid stream" sh -c "[ $rc -eq 0 ] && marple-cat -q '$T/off.out'"
total=$(weight "$T/off.out" '.')
# (Debian's python3 is stripped: time_sleep, os_read... are [python3.11])
sleepw=$(weight "$T/off.out" "^python3;.*;<module>$P;main$P;waiter$P;.*clock_nanosleep")
lockw=$(weight "$T/off.out" "^python3;.*;<module>$P;main$P;locker$P;.*PyThread_acquire_lock_timed;.*futex")
pipew=$(weight "$T/off.out" "^python3;.*;<module>$P;main$P;piper$P;.*_Py_read;.*pipe_read")
helpw=$(weight "$T/off.out" "^python3;clone3;.*;Thread[.]run$P;.*helper$P;")
# each of main's three is about a sixth of the threads' off-CPU time
for what in "time.sleep in waiter:$sleepw" "a lock in locker:$lockw" "a pipe in piper:$pipew" "the helper thread:$helpw"; do
	w=${what##*:}
	if [ "$total" -gt 0 ] && [ "$w" -ge $(( total / 12 )) ]; then
		pass "python-stacks: offcpu: ${what%:*} under main ($w of $total us)"
	else
		fail "python-stacks: offcpu: ${what%:*} under main" "$w of $total us: $(grep -m1 '^[0-9]*#python3' "$T/off.out" | cut -c1-300)"
	fi
done
merged=$(trailer_num "$T/off.out" samples_merged)
if [ "${merged:-0}" -ge $(( total * 9 / 10 )) ] && [ "$total" -gt 0 ]; then
	pass "python-stacks: offcpu: >= 90% of the off-CPU time merged ($merged of $total us)"
else
	fail "python-stacks: offcpu: >= 90% of the off-CPU time merged" "${merged:-?} of $total us"
fi
# --no-python, from the shared option table: the interpreter as before
marple-offcpu --no-python -p "$py" 1 > "$T/offn.out" 2> "$T/offn.err"
kill "$py" 2>/dev/null; wait "$py" 2>/dev/null
if [ "$(weight "$T/offn.out" "$P")" -eq 0 ] && [ "$(weight "$T/offn.out" '_PyEval_EvalFrameDefault')" -gt 0 ] &&
   ! grep -q '"python":' "$T/offn.out"; then
	pass "python-stacks: offcpu --no-python keeps the stacks native"
else
	fail "python-stacks: offcpu --no-python keeps the stacks native" "$(grep -m1 -e "$T/block.py" "$T/offn.out" | cut -c1-200)"
fi

# 2. allocations: build's lists are most of the bytes malloc gave, hoard's
# most of what is still held
"$PY" "$T/alloc.py" 60 & py=$!
sleep 0.5
marple-memevents -p "$py" 2 > "$T/faults.out" 2> "$T/faults.err"
marple-mallocstacks -p "$py" 2 > "$T/malloc.out" 2> "$T/malloc.err"
marple-memleak -p "$py" 2 > "$T/leak.out" 2> "$T/leak.err"
kill "$py" 2>/dev/null; wait "$py" 2>/dev/null
total=$(weight "$T/malloc.out" '.')
buildw=$(weight "$T/malloc.out" "^python3;.*;<module>$P;main$P;build$P;build[.]<locals>[.]<listcomp>$P;.*malloc")
if [ "$total" -gt 0 ] && [ "$buildw" -ge $(( total / 2 )) ]; then
	pass "python-stacks: mallocstacks: build's list comprehension under main ($buildw of $total bytes)"
else
	fail "python-stacks: mallocstacks: build's list comprehension under main" "$buildw of $total bytes: $(grep -m1 '^[0-9]*#python3' "$T/malloc.out" | cut -c1-300)"
fi
# memleak writes a stack section, then a point section (one "trailer" each)
total=$(sed -n '1,/"trailer":1/p' "$T/leak.out" | weight /dev/stdin '.')
hoardw=$(sed -n '1,/"trailer":1/p' "$T/leak.out" | weight /dev/stdin "^python3;.*;<module>$P;main$P;hoard$P")
if [ "$total" -gt 0 ] && [ "$hoardw" -ge $(( total / 2 )) ]; then
	pass "python-stacks: memleak: what hoard keeps, under main ($hoardw of $total bytes outstanding)"
else
	fail "python-stacks: memleak: what hoard keeps, under main" "$hoardw of $total bytes: $(grep -m1 '^[0-9]*#python3' "$T/leak.out" | cut -c1-300)"
fi
faultw=$(weight "$T/faults.out" "^python3;.*;main$P;(build$P|hoard$P)")
if [ "$faultw" -gt 0 ]; then
	pass "python-stacks: memevents: faults under build and hoard ($faultw of $(weight "$T/faults.out" '.'))"
else
	fail "python-stacks: memevents: faults under build and hoard" "$(grep -m1 '^[0-9]*#python3' "$T/faults.out" | cut -c1-300)"
fi
check "python-stacks: every trailer says what was walked" sh -c "
	grep -q '\"python\":{\"processes_walked\":1,' '$T/malloc.out' && grep -q '\"python\":{\"processes_walked\":1,' '$T/leak.out' &&
	grep -q '\"python\":{\"processes_walked\":1,' '$T/faults.out'"

# 2b. block requests: fsync issues them in the program's own context, under
# the Python function that called it (a file system on a block device)
D=
for d in "$MARPLE_TOP/build" /var/tmp; do
	case $(stat -f -c %T "$d" 2>/dev/null) in tmpfs|overlayfs|nfs*|fuse*|"") continue ;; esac
	D=$(mktemp -d "$d/marple-pyrq.XXXXXX") && break
done
if [ -n "$D" ]; then
	cat > "$T/write.py" <<'PYEOF'
import os, sys, time

def flush(fd):
    os.write(fd, b"x" * 65536)
    os.fsync(fd)

def main():
    fd = os.open(sys.argv[2], os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
    end = time.time() + float(sys.argv[1])
    while time.time() < end:
        flush(fd)

main()
PYEOF
	"$PY" "$T/write.py" 8 "$D/f" & py=$!
	sleep 0.5
	marple-diskblockrq -p "$py" 2 > "$T/rq.out" 2> "$T/rq.err"
	kill "$py" 2>/dev/null; wait "$py" 2>/dev/null
	rm -rf "$D"
	total=$(weight "$T/rq.out" '.')
	flushw=$(weight "$T/rq.out" "^python3;.*;<module>$P;main$P;flush$P;.*fsync")
	if [ "$total" -gt 0 ] && [ "$flushw" -ge $(( total / 2 )) ]; then
		pass "python-stacks: diskblockrq: fsync's requests under flush ($flushw of $total)"
	else
		fail "python-stacks: diskblockrq: fsync's requests under flush" "$flushw of $total: $(grep -m1 '^[0-9]*#python3' "$T/rq.out" | cut -c1-300)"
	fi
else
	skip "python-stacks: diskblockrq: fsync's requests under flush" "no directory on a block device"
fi

# 3. a Python process started during the capture that computes for ~0.3 s:
# the python3 file was read for an earlier process, so this one's Python
# frames are walked from its first sample, even while the collector is
# stopped and cannot look at it, all the time it computes (before, they
# were native until it had);
# it lives on, asleep, to have its code objects named (a symlink names it:
# comm pybrief, the same file)
cat > "$T/brief.py" <<'PYEOF'
import sys, time

def spin(n):
    return n if n < 2 else spin(n - 1) + spin(n - 2)

def brief():
    # ~0.3 s of CPU (38 ns a call here), not of wall-clock time: under load
    # its share of the samples against the interpreter's start-up stays
    for _ in range(4000):
        spin(15)

brief()
open(sys.argv[1], "w").close()	# computed: the collector may go on
time.sleep(1)
PYEOF
ln -s "$PY" "$T/pybrief"
# its file is known once the collector has walked another process of it:
# waited for (the answer said on stderr), not guessed (under ASan, on a
# loaded CI machine, 0.2 s was not always enough)
MARPLE_DEBUG_ANSWERS=1 MARPLE_READY_FILE="$T/r3" marple-callstack -F 499 > "$T/sys.out" 2> "$T/sys.err" & cs=$!
if wait_ready "$T/r3" 20 "$cs"; then
	"$PY" "$T/alloc.py" 0.5 & py=$!
	answered "$T/sys.err" "$py" walked "$cs"
	wait "$py"
	run_while_stopped "$cs" "$T/brief.done" "$T/pybrief" "$T/brief.py" "$T/brief.done"
	kill -INT "$cs"
fi
wait "$cs"
briefw=$(weight "$T/sys.out" "^pybrief;.*;<module>$P;brief$P")
alltotal=$(weight "$T/sys.out" '^pybrief;')
first=$(sed -n 's/.*"processes_walked_from_first_sample":\([0-9]*\).*/\1/p' "$T/sys.out")
if [ "${first:-0}" -ge 1 ]; then
	pass "python-stacks: processes of a Python file known are walked from their first sample ($first)"
else
	fail "python-stacks: processes of a Python file known are walked from their first sample" "$(grep -o '"python":.\{0,400\}' "$T/sys.out")"
fi
# what is left is the interpreter starting up
if [ "$alltotal" -gt 0 ] && [ "$briefw" -ge $(( alltotal * 6 / 10 )) ]; then
	pass "python-stacks: a process started while the collector is stopped has its Python frames in most samples ($briefw of $alltotal)"
else
	fail "python-stacks: a process started while the collector is stopped has its Python frames in most samples" "$briefw of $alltotal: $(grep -m1 '^[0-9]*#pybrief' "$T/sys.out" | cut -c1-120) ... $(grep -m1 '^[0-9]*#pybrief' "$T/sys.out" | rev | cut -c1-300 | rev); $(grep -o '"bpf":{[^}]*}' "$T/sys.out" | head -n 1 | cut -c1-400) $(grep -o '"samples_native_before_known":[0-9]*,\|"samples_mismatched":[0-9]*' "$T/sys.out" | tr '\n' ' ')$(grep 'answer: .*(pybrief)' "$T/sys.err" | head -n 3)"
fi

# 4. a Python file known, then rewritten in place (the same inode: an
# upgrade's copy over it, or another file given a freed inode number): the
# next process of it is not walked by what was read of the old contents;
# it is counted, its file read again, and it is walked then
cp "$PY" "$T/pycopy"
MARPLE_DEBUG_ANSWERS=1 MARPLE_READY_FILE="$T/r4" marple-callstack -F 499 > "$T/rw.out" 2> "$T/rw.err" & cs=$!
if wait_ready "$T/r4" 20 "$cs"; then
	"$T/pycopy" "$T/alloc.py" 0.5 & py=$!
	answered "$T/rw.err" "$py" walked "$cs"
	wait "$py"
	cat "$T/pycopy" > "$T/pycopy.new" && cat "$T/pycopy.new" > "$T/pycopy"
	"$T/pycopy" "$T/alloc.py" 1 & py=$!
	answered "$T/rw.err" "$py" walked "$cs"
	wait "$py"
	kill -INT "$cs"
fi
wait "$cs"
changed=$(sed -n 's/.*"files_changed_since_read":\([0-9]*\).*/\1/p' "$T/rw.out")
walked=$(grep -c "answer: pid .*(pycopy): .*walked" "$T/rw.err")
if [ "${changed:-0}" -ge 1 ] && [ "$walked" -ge 2 ]; then
	pass "python-stacks: a Python file rewritten in place: counted ($changed), read again, walked ($walked answers)"
else
	fail "python-stacks: a Python file rewritten in place: counted, read again, walked" "files_changed_since_read ${changed:-none}, $walked answers walked: $(grep 'answer: .*(pycopy)' "$T/rw.err" | head -n 4 | tr '\n' ' ')"
fi

# 5. a process of a known file walked from its first sample whose request
# never reached user space (the ring full while the collector was stopped
# or starved; MARPLE_TEST_LOSE_REQUESTS=pybrief loses those of pybrief):
# looked at when its stacks are merged, while it still runs, and its
# Python frames kept, not left native
rm -f "$T/brief.done"
MARPLE_TEST_LOSE_REQUESTS=pybrief MARPLE_DEBUG_ANSWERS=1 MARPLE_READY_FILE="$T/r5" marple-callstack -F 499 > "$T/lost.out" 2> "$T/lost.err" & cs=$!
if wait_ready "$T/r5" 20 "$cs"; then
	"$PY" "$T/alloc.py" 0.5 & py=$!
	answered "$T/lost.err" "$py" walked "$cs"
	wait "$py"
	"$T/pybrief" "$T/brief.py" "$T/brief.done" & b=$!
	i=0; while [ ! -e "$T/brief.done" ] && [ $i -lt 300 ]; do sleep 0.1; i=$((i + 1)); done
	kill -INT "$cs"	# its last drain merges while pybrief sleeps
fi
wait "$cs"; wait "$b" 2>/dev/null
lostw=$(weight "$T/lost.out" "^pybrief;.*;<module>$P;brief$P")
losttotal=$(weight "$T/lost.out" '^pybrief;')
late=$(sed -n 's/.*"processes_looked_at_when_merged":\([0-9]*\).*/\1/p' "$T/lost.out")
if [ "${late:-0}" -ge 1 ] && [ "$losttotal" -gt 20 ] && [ "$lostw" -ge $(( losttotal * 6 / 10 )) ]; then
	pass "python-stacks: a process whose request was lost is looked at when merged ($late), its frames kept ($lostw of $losttotal)"
else
	fail "python-stacks: a process whose request was lost is looked at when merged, its frames kept" "looked at when merged ${late:-none}, $lostw of $losttotal: $(grep -o '"samples_mismatched":[0-9]*' "$T/lost.out") $(grep 'answer: .*(pybrief)' "$T/lost.err" | head -n 3 | tr '\n' ' ')"
fi
