# marple-speedscope: the JSON file speedscope reads (tests/browser/speedscope.test.js
# opens it in the real app): schema, shared frames, one sampled profile a
# section (a process with --per-process), weights and units from the section,
# a timed section's samples in time order (a collector's --every intervals in
# one profile), errors.
. "$MARPLE_TOP/tests/lib.sh"
plan 30
cpu() {	# HOST HOT
	echo '{"marple":1,"interface":"callstack","datatype":"stack","start_ns":1000,"host":"'"$1"'","units":{"weight":"samples"}}'
	echo "$2#python3;_start;main;compute_hot"
	echo '41#python3;_start;main;PyObject_Malloc'
	echo '12#bash;main;bad%FF%25name;%01ctl'
	echo '5#bash;foo%25bar;100%25%25'
	echo '{"trailer":1,"records":4}'
}
cpu db1 297 > "$T/db1.marple"
cpu db2 100 > "$T/db2.marple"
J="import json,sys; d=json.load(open(sys.argv[1])); P=d['profiles']; F=[f['name'] for f in d['shared']['frames']]
def ok(c): sys.exit(0 if c else 1)
def stacks(p): return [';'.join(F[i] for i in s) for s in p['samples']]"
js() { _f=$1; shift; python3 -c "$J
$*" "$_f"; }

marple-speedscope "$T/db1.marple" "$T/db2.marple" > "$T/fleet.json"
check "speedscope: exit 0" test $? -eq 0
check "speedscope: valid JSON naming speedscope's schema" js "$T/fleet.json" "ok(d['\$schema'] == 'https://www.speedscope.app/file-format-schema.json')"
check "speedscope: one sampled profile a section, named by interface and host" js "$T/fleet.json" \
	"ok([(p['type'], p['name']) for p in P] == [('sampled', 'callstack on db1'), ('sampled', 'callstack on db2')])"
check "speedscope: frames shared, each once (10)" js "$T/fleet.json" "ok(len(F) == len(set(F)) == 10)"
check "speedscope: stacks root first, as the records" js "$T/fleet.json" "ok(stacks(P[0])[0] == 'python3;_start;main;compute_hot')"
check "speedscope: weights are the records', endValue their sum (marple-fold's total)" js "$T/fleet.json" \
	"ok(P[0]['weights'] == [297, 41, 12, 5] and P[0]['endValue'] == $(marple-fold "$T/db1.marple" | awk '{ t += $NF } END { print t }') and P[1]['endValue'] == 158)"
check "speedscope: sample counts have unit none" js "$T/fleet.json" "ok(P[0]['unit'] == 'none')"
check "speedscope: a name that is not UTF-8 %XX-escaped whole, control bytes as JSON escapes" js "$T/fleet.json" \
	"ok('bad%FF%25name' in F and '\x01ctl' in F)"
check "speedscope: '%' in names decoded (foo%bar, 100%%), not %25" js "$T/fleet.json" \
	"ok(stacks(P[0])[3] == 'bash;foo%bar;100%%')"

unit() {	# UNIT -> the speedscope unit
	printf '{"marple":1,"interface":"x","datatype":"stack","units":{"weight":"%s"}}\n5#a;b\n' "$1" | marple-speedscope > "$T/u.json" &&
		python3 -c "import json; print(json.load(open('$T/u.json'))['profiles'][0]['unit'])"
}
check "speedscope: us -> microseconds, ns -> nanoseconds, bytes -> bytes, requests -> none" \
	test "$(unit us) $(unit ns) $(unit bytes) $(unit requests)" = "microseconds nanoseconds bytes none"

marple-speedscope --per-process "$T/db1.marple" > "$T/pp.json"
check "speedscope --per-process: a profile per process, the process frame left out" js "$T/pp.json" \
	"ok([(p['name'], p['endValue']) for p in P] == [('python3 \u2014 callstack on db1', 338), ('bash \u2014 callstack on db1', 17)] and stacks(P[0])[0] == '_start;main;compute_hot')"

marple-speedscope "$DATA/timed.marple" > "$T/timed.json"
check "speedscope: a timed section: its samples in time order, one each" js "$T/timed.json" \
	"ok(P[0]['name'] == 'callstack on sample (time order)' and [s.split(';')[2] for s in stacks(P[0])] == ['phase_a'] * 4 + ['phase_b'] * 4 and P[0]['weights'] == [1] * 8)"
check "speedscope: timed off-CPU blocks weigh their durations in the section's unit" js "$T/timed.json" \
	"ok(P[1]['unit'] == 'microseconds' and P[1]['weights'] == [2000, 500, 1000] and stacks(P[1]) == ['sleeper;main;nanosleep', 'sleeper;main;read', 'sleeper;main;nanosleep'])"
# 0.5 s of samples at 100 Hz, 2 s asleep, 0.5 s more: time order has time on
# its axis (issue 39: the sleep vanished, sample index on the axis)
{ echo '{"marple":1,"interface":"callstack","datatype":"stack","timed":"stacks","start_ns":5000000000,"host":"h","units":{"weight":"samples"},"options":{"frequency":100}}'
  echo '50#app;main;before'; echo '50#app;main;after'; echo '{"trailer":1,"records":2}'
  echo '{"marple":1,"interface":"callstack","datatype":"event","timed":"samples","start_ns":5000000000,"host":"h"}'
  k=0; while [ $k -lt 50 ]; do echo "$((5000000000 + k * 10000000)),sample,cpu0,stack=0,pid=1,tid=1"; k=$((k + 1)); done
  k=0; while [ $k -lt 50 ]; do echo "$((7500000000 + k * 10000000)),sample,cpu0,stack=1,pid=1,tid=1"; k=$((k + 1)); done
  echo '{"trailer":1,"records":100}'; } > "$T/sleep.marple"
marple-speedscope "$T/sleep.marple" > "$T/sleep.json"
check "speedscope: time order weighs time: a 2 s sleep is 2 s of no stack, 3 s in all" js "$T/sleep.json" \
	"ok(P[0]['unit'] == 'nanoseconds' and P[0]['endValue'] == 3e9 and [w for s, w in zip(P[0]['samples'], P[0]['weights']) if not s] == [2e9] and P[0]['weights'][0] == 1e7)"
marple-speedscope --per-process "$T/sleep.marple" > "$T/sleep-pp.json"
check "speedscope --per-process: the sleep kept in the process's time order" js "$T/sleep-pp.json" \
	"ok(P[0]['endValue'] == 3e9 and P[0]['samples'][50] == [] and stacks(P[0])[0] == 'main;before')"
# marple-callstack --every 1 --timed: an interval a timed section, each ended
# "interval" but the last; the stacks of each numbered its own way
interval() {	# START ENDED STACKS SAMPLES (stack positions, one a sample)
	echo '{"marple":1,"interface":"callstack","datatype":"stack","timed":"stacks","start_ns":'"$1"',"host":"h","units":{"weight":"samples"}}'
	printf '%s\n' $3
	echo '{"trailer":1,"end_ns":'"$(($1 + 1000000000))"',"ended":"'"$2"'"}'
	echo '{"marple":1,"interface":"callstack","datatype":"event","timed":"samples","start_ns":'"$1"',"host":"h"}'
	k=0; for st in $4; do k=$((k + 1)); echo "$(($1 + k * 1000)),sample,cpu0,stack=$st,pid=1,tid=1"; done
	echo '{"trailer":1,"end_ns":'"$(($1 + 1000000000))"',"ended":"'"$2"'"}'
}
{ interval 1000000000 interval "1#w;one 1#w;both" "0 1"; interval 2000000000 interval "1#w;two" "0"
  interval 3000000000 duration "1#w;both 1#w;three" "1 0"; } > "$T/every.marple"
marple-speedscope "$T/every.marple" > "$T/every.json"
check "speedscope: --every intervals: one profile, every interval's samples in time order" js "$T/every.json" \
	"ok(len(P) == 1 and P[0]['name'] == 'callstack on h (time order)' and stacks(P[0]) == ['w;one', 'w;both', 'w;two', 'w;three', 'w;both'] and P[0]['endValue'] == 5)"
{ interval 1000000000 interval "1#w;one" "0"; cpu db1 3; interval 2000000000 duration "1#w;two" "0"; } > "$T/every2.marple"
marple-speedscope "$T/every2.marple" > "$T/every2.json"
check "speedscope: --every intervals: another section between ends the profile" js "$T/every2.json" \
	"ok([p['name'] for p in P] == ['callstack on h (time order)', 'callstack on db1', 'callstack on h (time order)'] and stacks(P[0]) == ['w;one'] and stacks(P[2]) == ['w;two'])"

printf '{"marple":1,"interface":"cpusched","datatype":"event"}\n1,sched_switch,cpu0\n' > "$T/ev.marple"
expect_exit "speedscope: an event section is an error" 1 "^marple-speedscope: .*ev\.marple:1: section 0 holds event data, not stacks" marple-speedscope "$T/ev.marple"
marple-speedscope -o "$T/none.json" "$T/ev.marple" 2>/dev/null
check "speedscope -o: no file after an error" test ! -e "$T/none.json"
sed '3s/.*/x#bad/' "$T/db1.marple" > "$T/part.marple"
expect_exit "speedscope: a malformed line is named and skipped" 0 "^marple-speedscope: .*part\.marple:3: " marple-speedscope -o "$T/part.json" "$T/part.marple"
check "speedscope: the rest kept (297 + 12 + 5)" js "$T/part.json" "ok(P[0]['endValue'] == 314)"
expect_exit "speedscope: no stacks exits 1" 1 "no stacks in the input" marple-speedscope /dev/null

# Folded text, as marple-fold writes it (and flamegraph, treemap, fold take it).
# (less the stack with a name that is not UTF-8, which a folded file keeps raw)
marple-fold "$T/db1.marple" | grep -av "$(printf '\377')" > "$T/db1.folded"
marple-speedscope "$T/db1.folded" > "$T/folded.json"
check "speedscope: folded text: exit 0" test $? -eq 0
check "speedscope: folded text: one profile named after the file, marple-fold's stacks and counts" js "$T/folded.json" \
	"ok(len(P) == 1 and P[0]['name'] == '$T/db1.folded' and P[0]['unit'] == 'none' and sorted(zip(stacks(P[0]), P[0]['weights'])) == sorted((l.rsplit(' ', 1)[0], int(l.rsplit(' ', 1)[1])) for l in open('$T/db1.folded').read().splitlines()))"
check "speedscope: folded text: the frames, each once (foo%bar as it is)" js "$T/folded.json" \
	"ok(sorted(F) == sorted(set(f for l in open('$T/db1.folded') for f in l.rsplit(' ', 1)[0].split(';'))) and 'compute_hot' in F and 'foo%bar' in F)"
printf 'a;b 3\na;c 2.5\na;d 1 2\n' | marple-speedscope --per-process > "$T/folded2.json" 2> "$T/folded2.err"
check "speedscope: folded text: decimal counts kept, a line with two counts named and skipped" sh -c "
	grep -q '<stdin>:3: two counts' '$T/folded2.err' && python3 -c \"import json; p = json.load(open('$T/folded2.json'))['profiles']; assert [(x['name'], x['weights']) for x in p] == [('a \\u2014 <stdin>', [3, 2.5])]\""

# The trailer's "frames" (marple-format(5)): a Python frame is its function
# with file and line, a native frame names its file; undescribed frames as before.
{ echo '{"marple":1,"interface":"callstack","datatype":"stack","units":{"weight":"samples"}}'
  echo '7#python3;_start;fib (/app/x.py:3);PyNumber_Add'
  echo '{"trailer":1,"records":1,"frames":{"_start":{"kind":"native","file":"/usr/bin/python3.11","offset":4096},"fib (/app/x.py:3)":{"kind":"python","file":"/app/x.py","line":3}}}'
} > "$T/py.marple"
marple-speedscope "$T/py.marple" > "$T/py.json"
check "speedscope: a Python frame is its function, file and line" js "$T/py.json" \
	"ok({'name': 'fib', 'file': '/app/x.py', 'line': 3} in d['shared']['frames'])"
check "speedscope: a native frame names its file; others only their name" js "$T/py.json" \
	"ok({'name': '_start', 'file': '/usr/bin/python3.11'} in d['shared']['frames'] and {'name': 'PyNumber_Add'} in d['shared']['frames'])"
# an inlined native function (kind inline, from DWARF): its source file:line
{ echo '{"marple":1,"interface":"callstack","datatype":"stack","units":{"weight":"samples"}}'
  echo '9#inl;pipeline;stage2'
  echo '{"trailer":1,"records":1,"frames":{"pipeline":{"kind":"native","file":"/w/inl","offset":4400},"stage2":{"kind":"inline","file":"/src/inl.c","line":12}}}'
} > "$T/inl.marple"
marple-speedscope "$T/inl.marple" > "$T/inl.json"
check "speedscope: an inlined frame is its function at its source file and line" js "$T/inl.json" \
	"ok({'name': 'stage2', 'file': '/src/inl.c', 'line': 12} in d['shared']['frames'] and {'name': 'pipeline', 'file': '/w/inl'} in d['shared']['frames'])"
# a native function told its source (DWARF's line at it) keeps its mapped
# file: speedscope merges frames of one name, file and line, and two
# programs' functions built from one source are two (tests/collectors/samename.t)
{ echo '{"marple":1,"interface":"callstack","datatype":"stack","units":{"weight":"samples"}}'
  echo '9#inl;main;pipeline'
  echo '{"trailer":1,"records":1,"frames":{"main":{"kind":"native","file":"/w/inl","offset":4160,"source":"/src/in%3Bl.c","source_line":30},"pipeline":{"kind":"native","file":"/w/inl","offset":4400,"source":"/src/inl.c"}}}'
} > "$T/src.marple"
marple-speedscope "$T/src.marple" > "$T/src.json"
check "speedscope: a native frame told its source keeps its mapped file, no line" js "$T/src.json" \
	"ok({'name': 'main', 'file': '/w/inl'} in d['shared']['frames'] and {'name': 'pipeline', 'file': '/w/inl'} in d['shared']['frames'])"
