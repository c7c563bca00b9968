# marple-lock against a mutex held for known times by a known function (root, real BPF).
. "$MARPLE_TOP/tests/lib.sh"
plan 24
W="$MARPLE_BIN/workloads"
LK="$MARPLE_BIN/marple-lock"

expect_exit "lock: -U with -K is a usage error" 2 "cannot be used together" "$LK" -U -K 1
expect_exit "lock: --every takes a duration" 2 "every" "$LK" --every nonsense 1
if ! is_root; then
	skip_rest "lock: BPF cases" "not root"
fi
expect_exit "lock: unknown PID" 1 "process 999999 not found" "$LK" -p 999999 1

# share FILE SUBJECT PART: "part whole" weights of records matching SUBJECT
share() { untag "$1" | awk -v s="$2" -v p="$3" 'index($0, "#") && substr($0, 1, 1) != "{" {
	w = substr($0, 1, index($0, "#") - 1); f = substr($0, index($0, "#") + 1)
	if (f ~ s) { t += w; if (f ~ p) q += w } } END { print q + 0, t + 0 }'; }
# fixture ERR: "mutex waited_us" from lockhold's own line on ERR
fixture() { sed -n 's/^lockhold: mutex \(0x[0-9a-f]*\) waited_us \([0-9]*\) .*/\1 \2/p' "$1"; }
# near_fixture NAME US FIXTURE_US: US within 5% of the fixture's own measure
near_fixture() { check "$1 (${2} us) within 5% of the fixture's own measure (${3:-?} us)" \
	test "${3:-0}" -gt 300000 -a "$(($2 * 100))" -ge "$((${3:-0} * 95))" -a "$(($2 * 100))" -le "$((${3:-0} * 105))"; }
# mostly NAME PART WHOLE: PART >= 95% of WHOLE (us, WHOLE > 0.3 s)
mostly() { check "$1 (${2} of ${3} us)" test "$3" -gt 300000 -a "$(($2 * 100))" -ge "$(($3 * 95))"; }

# lockhold: lh_waiter takes the mutex in want_lock every 0.3 ms while
# lh_holder keeps it 2 ms of every 3 in hold_lock, so the waiter waits about
# two thirds of 2 s; it times its own waits (the fixture's answer).  --timed:
# each wait kept too, with its time and thread
"$LK" --timed -c "$W/lockhold 2" > "$T/l.out" 2> "$T/l.err"; rc=$?
check "lock: exit 0 and a valid stream" sh -c "[ $rc -eq 0 ] && marple-cat -q '$T/l.out'"
check "lock: weights in us, measuring lock_wait" grep -q '"units":{"weight":"us","measure":"lock_wait","over_time":"sum"}' "$T/l.out"
set -- $(fixture "$T/l.err"); mutex=${1:-none} fixture=${2:-0}
set -- $(share "$T/l.out" "^\\[futex $mutex\\];lh_waiter;.*;want_lock;(take;)?pthread_mutex_lock;" ';--;(.*;)?hold_lock;holder;')
near_fixture "lock: the waiter's wait on the mutex" "$2" "$fixture"
mostly "lock: >= 95% of that wait was released by hold_lock" "$1" "$2"
check "lock: the trailer lists the mutex first, with its waits and longest wait" \
	grep -q "\"locks\":\\[{\"lock\":\"futex $mutex\",\"pid\":[0-9]*,\"waits\":[1-9][0-9]*,\"wait_us\":[1-9][0-9]*,\"max_us\":[1-9]" "$T/l.out"
check "lock: the trailer counts futex waits and their holders" \
	grep -q '"lock":{"futex_waits":[1-9][0-9]*,"futex_at_once":[0-9]*,"kernel_waits":[0-9]*,"map_full":0,"max_map_full":0,.*"holders":{"seen":[1-9]' "$T/l.out"
# main's pthread_join is woken by the thread's exit (the kernel clears its
# tid), not by a FUTEX_WAKE: said so, no holder invented
untag "$T/l.out" > "$T/l.untagged"
check "lock: a wait no FUTEX_WAKE ended says so" \
	grep -q '^[0-9]*#\[futex 0x[0-9a-f]*\];lockhold;.*;main;.*join.*;--;\[waker not seen\]$' "$T/l.untagged"
# --timed: a sample for every wait counted; marple-perfetto draws each on
# the waiter's thread, named by the mutex and give (hold_lock's call of
# pthread_mutex_unlock), and on the mutex's own track
waits=$(grep -o '"futex_waits":[0-9]*,"futex_at_once":[0-9]*,"kernel_waits":[0-9]*' "$T/l.out" | awk -F'[:,]' '{ print $2 + $6 }')
samples=$(grep '"timed":"samples"' -A 1000000 "$T/l.out" | grep -o '^{"trailer":1,.*"records":[0-9]*,"lost":[0-9]*,"dropped":[0-9]*' | sed 's/.*"records":\([0-9]*\),"lost":\([0-9]*\),"dropped":\([0-9]*\)/\1 lost \2 dropped \3/')
check "lock --timed: a sample for each of the ${waits:-?} waits counted (${samples:-none})" test "${samples:-x}" = "$waits lost 0 dropped 0"
marple-perfetto "$T/l.out" > "$T/l.pf" && python3 "$MARPLE_TOP/tests/perfetto/pftrace.py" "$T/l.pf" > "$T/l.json"
set -- $(python3 -c "import json; pk=json.load(open('$T/l.json')).get('packet', [])
TD={p['track_descriptor'][0]['uuid'][0]: p['track_descriptor'][0] for p in pk if 'track_descriptor' in p}
th=[u for u, t in TD.items() if 'thread' in t and t['thread'][0]['thread_name'] == ['lh_waiter']]
lk=[u for u, t in TD.items() if t.get('parent_uuid') and TD[t['parent_uuid'][0]].get('name', [''])[0].startswith('futex $mutex ')]
ev=sorted(((p['timestamp'][0], p['track_event'][0]) for p in pk if 'track_event' in p), key=lambda x: x[0])
on=lambda us: [(ts, t) for ts, t in ev if t['track_uuid'][0] in us]
b={}; named=total=0
for ts, t in on(th):  # (the waiter's waits on the mutex, and its few on others)
    if t['type'] == [1]: b[0] = (ts, t['name'][0])
    elif 0 in b and t['type'] == [2]:
        s, n = b.pop(0); total += ts - s; named += (ts - s) * (n == 'futex $mutex \u2190 give')
mine=lambda n: n == 'futex $mutex' or n.startswith('futex $mutex ')  # (no holder seen: no arrow)
print(named // 1000, total // 1000, sum(1 for ts, t in on(th) if mine(t.get('name', [''])[0])),
      sum(1 for ts, t in on(lk) if t.get('name', [''])[0].startswith('lh_waiter ')))")
near_fixture "lock --timed: perfetto: the waiter's thread's wait slices" "${2:-0}" "$fixture"
check "lock --timed: perfetto: >= 95% of them named 'futex $mutex <- give' (${1:-?} of ${2:-?} us), each on the mutex's track too (${4:-?} of ${3:-?} slices of lh_waiter's)" \
	test "${2:-0}" -gt 300000 -a "$((${1:-0} * 100))" -ge "$((${2:-0} * 95))" -a "${3:-0}" = "${4:-x}"

# bpf_frames FILE: the records with a BPF frame where none may be, each cut
# to the frames around it: at a stack's leaf (the capture's own frames, left
# out) or in a futex wait's stacks (the waiter's are user only, the holder's
# are its futex wake call's); "inside N" counts the kernel lock waits whose
# stack runs through a BPF program and on (another tracer's program that
# waited on the lock: a real wait, kept)
bpf_frames() { awk -F';' '/^[0-9]+#/ { bad = 0; mid = 0
	for (i = 1; i <= NF; i++) if ($i ~ /^(bpf_prog_|bpf_trace_run|__bpf_trace_)/) {
		if (i == NF || $(i + 1) == "--" || $(i - 1) == "--" || $1 ~ /#\[futex /) bad = i; else mid = 1 }
	if (bad) { s = $1; for (j = bad - 2; j <= bad + 2 && j <= NF; j++) if (j > 1) s = s ";" $j; print s }
	inside += mid && !bad } END { print "inside " inside + 0 }' "$1"; }
bpf_frames "$T/l.out" > "$T/l.bpf"
check "lock: no BPF frame at a stack's leaf or in a futex wait ($(tail -n 1 "$T/l.bpf") a kernel lock's stack)" \
	sh -c "cat '$T/l.bpf'; test \"\$(wc -l < '$T/l.bpf')\" -eq 1"

# a holder in another process, not traced itself: the mutex process-shared,
# its holder a forked child; only the waiter's process (-p) traced
"$W/lockhold" 3 fork > "$T/f.err" & wl=$!
sleep 0.3
"$LK" --futex-only -p "$wl" 2 > "$T/f.out" 2> /dev/null
wait "$wl"
set -- $(share "$T/f.out" '^\[futex 0x[0-9a-f]*\];lh_waiter;.*;want_lock;' ';--;(.*;)?hold_lock;holder;main;.*;lh_holder$')
mostly "lock: a holder in another process is named" "$1" "$2"
check "lock: -p: the holder's own waits are not traced" sh -c "! grep -q '^[0-9]*#[^;]*;lh_holder;' '$T/f.out'"
check "lock: --futex-only: no kernel lock, and the header says so" \
	sh -c "grep -q '\"kernel_locks\":\"not asked' '$T/f.out' && ! grep -q '^[0-9]*#\[\(mutex\|rwsem\|spinlock\|rwlock\)' '$T/f.out'"

# kernel locks: lockhold's mappers fault and unmap memory in map_churn, so
# the process's mmap_lock (an rwsem) is contended
"$LK" -c "$W/lockhold 2 mmap" > "$T/k.out" 2> "$T/k.err"
if grep -q '"kernel_locks":"traced"' "$T/k.out"; then
	set -- $(share "$T/k.out" '^\[rwsem 0x[0-9a-f]*\];lh_mapper;.*;map_churn;' '')
	check "lock: kernel locks: the mappers wait on an rwsem in map_churn (${2} us)" test "$2" -gt 0
	check "lock: kernel locks have no holder (none traced)" sh -c "! grep -q '^[0-9]*#\[\(mutex\|rwsem\|spinlock\|rwlock\)[^;]*;.*;--;' '$T/k.out'"
else
	check "lock: kernel locks absent: said on stderr" grep -q "kernel locks not traced" "$T/k.err"
	check "lock: kernel locks absent: said in the trailer" grep -q '"kernel_locks":"absent' "$T/k.out"
fi
# --every 1s, drained every 100 ms: a section a second, each drained
# several times, whose waits on the mutex add up to the fixture's measure
"$LK" --futex-only --every 1s --drain-every 100 -c "$W/lockhold 3" > "$T/e.out" 2> "$T/e.err"
set -- $(fixture "$T/e.err"); mutex=${1:-none} fixture=${2:-0}
sections=$(grep -c '^{"trailer"' "$T/e.out")
drains=$(grep -o '"drains":[0-9]*' "$T/e.out" | awk -F: '{ n += $2 } END { print n + 0 }')
check "lock: --every 1s: 3 or 4 sections of a 3 s run (${sections}), drained while capturing (${drains} drains)" \
	sh -c "marple-cat -q '$T/e.out' && [ '$sections' -ge 3 -a '$sections' -le 5 -a '$drains' -ge 6 ]"
set -- $(share "$T/e.out" "^\\[futex $mutex\\];lh_waiter;.*;want_lock;" ';--;(.*;)?hold_lock;holder;')
near_fixture "lock: --every: the sections' waits on the mutex" "$2" "$fixture"

# futex2 (Linux 6.7): the same lock made of futex_wait and futex_wake
"$LK" --futex-only -c "$W/lockhold 2 futex2" > "$T/f2.out" 2> "$T/f2.err"
if grep -q '"futex2":"traced"' "$T/f2.out"; then
	set -- $(fixture "$T/f2.err"); word=${1:-none} fixture=${2:-0}
	set -- $(share "$T/f2.out" "^\\[futex $word\\];lh_waiter;.*;want_lock;(take;)?f2_lock;" ';--;.*__x64_sys_futex_wake;.*;f2_unlock;(give;)?hold_lock;holder;')
	near_fixture "lock: futex2: the waits in futex_wait" "$2" "$fixture"
	mostly "lock: futex2: >= 95% of them released by futex_wake in hold_lock" "$1" "$2"
else
	check "lock: futex2 absent: said on stderr" grep -q "futex2 calls not traced" "$T/f2.err"
	check "lock: futex2 absent: said in the header" grep -q '"futex2":"absent' "$T/f2.out"
fi
marple-flamegraph "$T/l.out" > "$T/l.svg"
hue() { grep -o "fill=\"#[0-9a-f]\{6\}\"/><text[^>]*>$1<" "$T/l.svg" | head -n 1 | sed 's/fill="#\(..\)\(..\)\(..\)".*/\1 \2 \3/' |
	while read -r r g b; do
		if [ $((0x$g)) -gt $((0x$r + 40)) ] && [ $((0x$b)) -gt $((0x$r + 40)) ]; then echo aqua; else echo other; fi; done; }
check "lock: the flame graph draws the holder's frames aqua ($(hue hold_lock) hold_lock, $(hue want_lock) want_lock)" \
	test "$(hue hold_lock)$(hue want_lock)" = aquaother
