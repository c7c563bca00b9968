# marple display and Perfetto, with the real renderers built here: --perfetto
# (and "perfetto" in [DisplayInterfaces]) makes a .pftrace with marple-perfetto
# that protoc decodes against our statement of Perfetto's field numbers
# (tests/perfetto/trace.proto) with every event in it; --trace and
# --chrome-trace (and "trace", "chrome-trace" in the config) keep the JSON
# trace of marple-trace; -o FILE.pftrace writes the one trace; two event
# flags contradict.
. "$MARPLE_TOP/tests/lib.sh"
plan 16
DEC="$MARPLE_TOP/tests/perfetto/pftrace.py"
unset MARPLE_LIBEXEC MARPLE_CONFIG DISPLAY WAYLAND_DISPLAY
export XDG_STATE_HOME="$T/state" XDG_CONFIG_HOME="$T/config"
mkdir -p "$T/state" "$T/config/marple" "$T/work"
cd "$T/work" || exit 1

# a stack section, then 40 context switches and 4 wake-ups on 2 CPUs
awk 'BEGIN {
	print "{\"marple\":1,\"interface\":\"callstack\",\"datatype\":\"stack\",\"start_ns\":1000,\"wall_ns\":1700000000000000000,\"host\":\"h1\",\"units\":{\"weight\":\"samples\"}}"
	print "3#bash;main;work"
	print "{\"trailer\":1,\"records\":1,\"end_ns\":2000000}"
	print "{\"marple\":1,\"interface\":\"cpusched\",\"datatype\":\"event\",\"track\":\"cpu\",\"start_ns\":1000,\"wall_ns\":1700000000000000000,\"host\":\"h1\",\"kernel\":\"6.1.0\",\"ncpus\":2}"
	for (i = 0; i < 40; i++) {
		p = 100 + i % 3; q = 100 + (i + 1) % 3
		printf "%d,sched_switch,cpu%d,comm=t%d,pid=%d,prev_comm=t%d,prev_pid=%d,prev_state=S,next_comm=t%d,next_pid=%d,next_prio=120,next_tgid=%d\n", 2000 + i * 1000, i % 2, q, q, p, p, q, q, q
		if (i % 10 == 0)
			printf "%d,sched_wakeup,cpu%d,comm=t%d,pid=%d,prio=120,target_cpu=%d,waker_pid=%d,tgid=%d\n", 2500 + i * 1000, i % 2, p, p, (i + 1) % 2, q, p
	}
	print "{\"trailer\":1,\"records\":44,\"end_ns\":50000}"
}' > cap.marple
check "perfetto: capture for the tests" marple-cat -q cap.marple

# count SWITCHES WAKEUPS TRACE: the decoded trace holds that many ftrace events
count() {
	/usr/bin/python3 "$DEC" "$3" > "$T/dec.json" && /usr/bin/python3 -c "import json, sys
d = json.load(open('$T/dec.json'))
ev = [e for p in d.get('packet', []) for b in p.get('ftrace_events', []) for e in b['event']]
sw = sum('sched_switch' in e for e in ev); wk = sum('sched_wakeup' in e for e in ev)
sys.exit(0 if (sw, wk) == ($1, $2) else 'switches %d, wake-ups %d' % (sw, wk))"
}

marple display -n -i cap.marple -o out --perfetto > "$T/out" 2> "$T/err"; rc=$?
check "perfetto: display --perfetto exits 0 ($(head -c 200 "$T/err" | tr '\n' ' '))" test "$rc" -eq 0
check "perfetto: --perfetto writes NN-cpusched-perfetto.pftrace" test -s out/01-cpusched-perfetto.pftrace
check "perfetto: it decodes with protoc: 40 switches, 4 wake-ups" count 40 4 out/01-cpusched-perfetto.pftrace
check "perfetto: ... and is no JSON trace" test ! -e out/01-cpusched-trace.json
check "perfetto: the page still gets an event plot" test -s out/01-cpusched-plot.html
check "perfetto: the report links the trace for download" grep -q 'href="01-cpusched-perfetto.pftrace" download' out/index.html
check "perfetto: the report names the pipeline (marple-perfetto)" grep -q 'marple-cat -s 1 [^ ]*cap.marple | marple-perfetto &gt; 01-cpusched-perfetto.pftrace' out/index.html

marple display -n -i cap.marple -o tr --trace -e 1 > /dev/null 2> "$T/err"
check "perfetto: --trace keeps the JSON trace (marple-trace)" /usr/bin/python3 -c "import json; json.load(open('tr/01-cpusched-trace.json'))"
marple display -n -i cap.marple -o ct --chrome-trace -e 1 > /dev/null 2> "$T/err"
check "perfetto: --chrome-trace is --trace" test -s ct/01-cpusched-trace.json -a ! -e ct/01-cpusched-perfetto.pftrace

printf '[DisplayInterfaces]\ncpusched = perfetto\n' > "$T/config/marple/config"
marple display -n -i cap.marple -o cfg -e 1 > /dev/null 2> "$T/err"
check "perfetto: cpusched = perfetto in the config makes the .pftrace" count 40 4 cfg/01-cpusched-perfetto.pftrace
printf '[DisplayInterfaces]\ncpusched = chrome-trace\n' > "$T/config/marple/config"
marple display -n -i cap.marple -o cfg2 -e 1 > /dev/null 2> "$T/err"
check "perfetto: cpusched = chrome-trace in the config makes the JSON trace" test -s cfg2/01-cpusched-trace.json
rm -f "$T/config/marple/config"

marple display -n -i cap.marple --perfetto -e 1 -o one.pftrace > "$T/out" 2> "$T/err"
check "perfetto: -o FILE.pftrace writes the one trace, no report" count 40 4 one.pftrace
check "perfetto: ... and prints its name" test "$(cat "$T/out")" = one.pftrace
expect_exit "perfetto: --perfetto with --trace is a usage error" 2 'contradicts' \
	marple display -n -i cap.marple --perfetto --trace
marple list > "$T/list"
check "perfetto: marple list names the perfetto display's program" grep -q '^  perfetto  *marple-perfetto$' "$T/list"
