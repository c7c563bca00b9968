# marple-cpusched (root): two threads ping-ponging on one CPU alternate in the
# trace with the right comms; the CPEL made from it has the right tracks,
# names and event count (checked by tests/cpel/cpelread.py, an independent
# reader); raw_tp fallback and --wakeups work.
. "$MARPLE_TOP/tests/lib.sh"
plan 37
if ! is_root; then skip_rest "cpusched" "needs root"; fi
PP="$MARPLE_BIN/workloads/pingpong"
READ="$MARPLE_TOP/tests/cpel/cpelread.py"

# run_traced OUT ARGS... : trace while the ping-pong workload runs on CPU 0
run_traced() {
	_out=$1; shift
	rm -f "$T/ready"
	MARPLE_READY_FILE="$T/ready" marple-cpusched "$@" > "$_out" 2> "$_out.err" &
	_pid=$!
	if ! wait_ready "$T/ready" 20; then kill $_pid 2>/dev/null; wait $_pid; return 1; fi
	"$PP" 3000 0 > /dev/null
	kill -INT $_pid; wait $_pid
}

run_traced "$T/cs" -v; rc=$?
check "cpusched: exits 0 after SIGINT" test $rc -eq 0
check "cpusched: output is a valid marple stream" marple-cat -q "$T/cs"
check "cpusched: -v says how sched_switch was attached" grep -Eq 'attached via (tp_btf|raw_tp)' "$T/cs.err"
# -v means statistics in every collector (issue 39): the trailer's records on stderr
check "cpusched: -v: statistics, the trailer's records count" grep -q "^marple-cpusched: statistics: records $(tail -n 1 "$T/cs" | sed 's/.*"records":\([0-9]*\).*/\1/'), lost 0" "$T/cs.err"
check "cpusched: trailer ended by signal, nothing lost" grep -Eq '^\{"trailer":1,.*"lost":0,.*"ended":"signal","lost_per_cpu":\[0(,0)*\]' "$T/cs"
check "cpusched: header names track cpu and time unit ns" grep -q '"track":"cpu"' "$T/cs"

# Switches to the two threads on cpu0: they must alternate (another task
# preempting one of them and handing the CPU back repeats one: on a loaded
# machine that happens, so 5% is allowed).
grep ',sched_switch,cpu0,' "$T/cs" | grep 'next_comm=mp_p' |
	sed 's/.*next_comm=\([^,]*\),.*/\1/' > "$T/seq"
n=$(wc -l < "$T/seq")
check "cpusched: thousands of switches to ping and pong on cpu0 ($n)" test "$n" -ge 5900
runs=$(uniq "$T/seq" | wc -l)
check "cpusched: ping and pong alternate ($runs runs in $n switches)" test $((n - runs)) -le $((n / 20))
both=$(grep -c 'prev_comm=mp_ping,.*next_comm=mp_pong,\|prev_comm=mp_pong,.*next_comm=mp_ping,' "$T/cs")
check "cpusched: most switches go straight from one to the other ($both)" test "$both" -ge 3000
check "cpusched: comm= and pid= name the task switched in" \
	sh -c "grep ',sched_switch,cpu0,comm=mp_ping,pid=[0-9]*,prev_comm=mp_pong,.*next_comm=mp_ping,' '$T/cs' | head -1 | grep -q ."
# pid of each comm is consistent
pp=$(grep -o 'next_comm=mp_ping,next_pid=[0-9]*' "$T/cs" | sort -u | wc -l)
check "cpusched: one pid for mp_ping" test "$pp" -eq 1
# ping and pong are two threads of one process: one thread group, not both its main thread
tg=$(grep -Eo 'next_comm=mp_p[io]ng,next_pid=[0-9]+,next_prio=-?[0-9]+,next_tgid=[0-9]+' "$T/cs" | sed 's/.*next_pid=\([0-9]*\),.*next_tgid=\([0-9]*\)/\1 \2/' | sort -u)
check "cpusched: next_tgid: ping and pong in one thread group, at least one not its main thread ($(echo $tg))" \
	sh -c "test \"\$(echo '$tg' | awk '{ print \$2 }' | sort -u | wc -l)\" -eq 1 && echo '$tg' | awk '\$1 != \$2' | grep -q ."
grep -Eq '^[0-9]+,sched_switch,cpu[0-9]+,comm=[^,]*,pid=[0-9]+,prev_comm=[^,]*,prev_pid=[0-9]+,prev_state=(R\+?|[SDTtXZPI]),next_comm=[^,]*,next_pid=[0-9]+,next_prio=-?[0-9]+,next_tgid=[0-9]+$' "$T/cs"
check "cpusched: record layout" test $? -eq 0
# time order across CPUs
awk -F, '/^[0-9]/ { if ($1 < last) bad++; last = $1 } END { exit bad > 0 }' "$T/cs"
check "cpusched: events in time order across CPUs" test $? -eq 0

# CPEL from it, read back independently
records=$(grep -c '^[0-9]' "$T/cs")
marple-cpel "$T/cs" > "$T/cs.cpel"
check "cpel: converts the trace" test -s "$T/cs.cpel"
python3 "$READ" "$T/cs.cpel" > "$T/cpel.json"
check "cpel: independent reader accepts the file" test -s "$T/cpel.json"
py() { python3 -c "import json,sys; d=json.load(open('$T/cpel.json')); sys.exit(0 if ($1) else 1)"; }
check "cpel: event count equals the stream's records ($records)" py "d['count'] == $records"
check "cpel: tracks are the CPUs" py "'cpu0' in d['tracks'].values() and all(v.startswith('cpu') for v in d['tracks'].values())"
check "cpel: one event definition, sched_switch, datum as string" py "list(d['events'].values()) == [['sched_switch', '%s']]"
check "cpel: events sorted, 1e9 ticks per second" py "d['sorted'] and d['ticks_per_second'] == 1000000000"
check "cpel: sections STRTAB, EVTDEF, TRACKDEF, EVENT" py "d['sections'] == [1, 3, 4, 5]"
python3 "$READ" --events "$T/cs.cpel" > "$T/rows.json"
ping=$(python3 -c "import json; d=json.load(open('$T/rows.json')); print(sum(1 for r in d['rows'] if r[1]=='cpu0' and r[3].startswith('mp_ping (')))")
want=$(grep -c ',cpu0,comm=mp_ping,' "$T/cs")
check "cpel: mp_ping's switches on cpu0 carried over ($ping of $want)" test "$ping" -eq "$want"
marple-cpel --track pid "$T/cs" > "$T/pid.cpel" && python3 "$READ" "$T/pid.cpel" > "$T/pid.json"
check "cpel --track pid: a track per thread" python3 -c "
import json,sys; d=json.load(open('$T/pid.json')); v=list(d['tracks'].values())
sys.exit(0 if any(x.startswith('mp_ping (') for x in v) and any(x.startswith('mp_pong (') for x in v) else 1)"

# raw tracepoint fallback, and wakeups
run_traced "$T/raw" -v --raw-tp -w; rc=$?
check "cpusched --raw-tp: exits 0" test $rc -eq 0
check "cpusched --raw-tp: says raw_tp" grep -q 'attached via raw_tp' "$T/raw.err"
check "cpusched --raw-tp: ping-pong seen" grep -q 'prev_comm=mp_ping,.*next_comm=mp_pong' "$T/raw"
check "cpusched -w: wakeups of mp_pong" grep -Eq ',sched_wakeup,cpu[0-9]+,comm=mp_pong,pid=[0-9]+,prio=[0-9]+,target_cpu=0,waker_comm=mp_ping,' "$T/raw"
check "cpusched -w: header option" grep -q '"wakeups":true' "$T/raw"
check "cpusched -w: a wake-up names the woken thread's group (tgid=, as its switches' next_tgid)" \
	sh -c "a=\$(grep -Eo 'comm=mp_pong,pid=[0-9]+,prio=[0-9]+,target_cpu=0,waker_comm=mp_ping,waker_pid=[0-9]+,tgid=[0-9]+$' '$T/raw' | sed 's/.*tgid=//' | sort -u); b=\$(grep -Eo 'next_comm=mp_pong,.*next_tgid=[0-9]+$' '$T/raw' | sed 's/.*next_tgid=//' | sort -u); test -n \"\$a\" && test \"\$a\" = \"\$b\""

# duration operand and errors
marple-cpusched 200ms > "$T/d" 2>/dev/null
check "cpusched 200ms: ends by duration" grep -q '"ended":"duration"' "$T/d"
expect_exit "cpusched: bad duration is a usage error" 2 'duration' marple-cpusched 10x
expect_exit "cpusched: bad buffer size" 2 '' marple-cpusched -b 0 1
run_traced "$T/pb" --perf-buffer; rc=$?
check "cpusched --perf-buffer: exits 0, says so in the header" sh -c "test $rc -eq 0 && grep -q '\"buffers\":\"perf\"' '$T/pb'"
check "cpusched --perf-buffer: ping-pong seen, in time order" sh -c "grep -q 'prev_comm=mp_ping,.*next_comm=mp_pong' '$T/pb' && awk -F, '/^[0-9]/ { if (\$1 < last) bad++; last = \$1 } END { exit bad > 0 }' '$T/pb'"

# -p PID: only the switches into or out of that process's threads (pingpong
# on CPU 1), not those of a burner running beside it
"$MARPLE_BIN/workloads/burn" 3 > /dev/null 2>&1 & bp=$!
"$PP" 1000000 1 > /dev/null & pp=$!
sleep 0.3
marple-cpusched -p "$pp" 1 > "$T/p.out" 2> "$T/p.err"; rc=$?
kill "$pp" "$bp" 2>/dev/null; wait "$pp" "$bp" 2>/dev/null
sw=$(grep -c ',sched_switch,' "$T/p.out")
other=$(grep ',sched_switch,' "$T/p.out" | grep -vc 'prev_comm=mp_p[a-z]*,\|next_comm=mp_p[a-z]*,')
check "cpusched -p: exit 0, pingpong's switches ($sw), no other process's ($other)" test "$rc" -eq 0 -a "$sw" -ge 100 -a "$other" -eq 0
check "cpusched -p: the header says which process" grep -q "\"pid\":$pp" "$T/p.out"
expect_exit "cpusched -p: unknown PID" 1 "process 999999 not found" marple-cpusched -p 999999 1
