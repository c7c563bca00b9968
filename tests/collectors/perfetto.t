# marple-perfetto on real captures (root): marple-cpusched --wakeups while two
# threads ping-pong, and marple-ipc while a client connects to a server twice;
# the trace decodes with protoc (tests/perfetto/pftrace.py) and holds every
# switch and wake-up of the capture as an ftrace event at its time, and each
# connection as a slice on its process joined to the other end by a flow.
. "$MARPLE_TOP/tests/lib.sh"
plan 10
if ! is_root; then skip_rest "perfetto" "needs root"; fi
DEC="$MARPLE_TOP/tests/perfetto/pftrace.py"
W="$MARPLE_BIN/workloads/tcppair"

rm -f "$T/r1" "$T/r2"
spid=none c1=none c2=none	# unset when a collector never becomes ready: the cases still run
MARPLE_READY_FILE="$T/r1" marple-cpusched -w > "$T/cs" 2> "$T/cs.err" & cs=$!
MARPLE_READY_FILE="$T/r2" marple-ipc > "$T/ipc" 2> "$T/ipc.err" & ipc=$!
if wait_ready "$T/r1" 20 && wait_ready "$T/r2" 20; then
	"$MARPLE_BIN/workloads/pingpong" 3000 0 > /dev/null
	"$W" server "$T/port" 2 & spid=$!
	i=0; while [ ! -s "$T/port" ] && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
	"$W" client "$(cat "$T/port")" & c1=$!; wait $c1
	"$W" client "$(cat "$T/port")" & c2=$!; wait $c2
	wait $spid
	sleep 0.3
fi
kill -INT $cs $ipc 2>/dev/null; wait $cs; wait $ipc
cat "$T/cs" "$T/ipc" > "$T/both"
marple-perfetto -o "$T/t.pf" "$T/both"
check "perfetto: a real capture converts (exit 0)" test $? -eq 0
python3 "$DEC" "$T/t.pf" > "$T/t.json"
check "perfetto: protoc decodes it" test $? -eq 0
P="import json,sys; pk=json.load(open('$T/t.json'))['packet']
one=lambda x: x[0] if x else None
EV=[(one(b['cpu']), e) for p in pk for b in p.get('ftrace_events', []) for e in b['event']]
SW=[e['sched_switch'][0] for c, e in EV if 'sched_switch' in e]
TD={one(p['track_descriptor'][0]['uuid']): p['track_descriptor'][0] for p in pk if 'track_descriptor' in p}
TE=[p['track_event'][0] for p in pk if 'track_event' in p]
def ok(c): sys.exit(0 if c else 1)"
nsw=$(grep -c ',sched_switch,' "$T/cs")
nwk=$(grep -c ',sched_wakeup,' "$T/cs")
check "perfetto: every switch of the capture is an ftrace sched_switch ($nsw)" python3 -c "$P
ok(len(SW) == $nsw and $nsw > 5900)"
check "perfetto: every wake-up is an ftrace sched_wakeup ($nwk)" python3 -c "$P
ok(sum(1 for c, e in EV if 'sched_wakeup' in e) == $nwk and $nwk > 2900)"
check "perfetto: each event in the bundle of its record's CPU, at its time" python3 -c "$P
import re
rec=[(int(m.group(2)), int(m.group(1))) for m in re.finditer(r'^(\d+),sched_(?:switch|wakeup),cpu(\d+),', open('$T/cs').read(), re.M)]
ok(sorted(rec) == sorted((c, one(e['timestamp'])) for c, e in EV))"
check "perfetto: ping and pong switch to each other (thousands)" python3 -c "$P
ok(sum(1 for s in SW if {one(s.get('prev_comm')), one(s.get('next_comm'))} == {'mp_ping', 'mp_pong'}) > 3000)"
check "perfetto: a switched-out ping-pong thread sleeps (prev_state S = 1)" python3 -c "$P
st=[one(s.get('prev_state')) for s in SW if one(s.get('prev_comm')) in ('mp_ping', 'mp_pong')]
ok(st.count(1) > len(st) // 2)"
check "perfetto: ping and pong are threads of one process in ProcessTree packets" python3 -c "$P
th={one(q['tid']): one(q['tgid']) for p in pk if 'process_tree' in p for q in p['process_tree'][0].get('threads', [])}
tid={one(s['next_comm']): one(s['next_pid']) for s in SW}
ok(th.get(tid.get('mp_ping')) is not None and th.get(tid.get('mp_ping')) == th.get(tid.get('mp_pong')))"
P="$P
pid=lambda t: str(one(TD[one(TD[one(t['track_uuid'])].get('parent_uuid', [0]))]['process'][0]['pid'])) if 'parent_uuid' in TD[one(t['track_uuid'])] else None"
check "perfetto: the two clients' connects joined by flows to the server's two accepts" python3 -c "$P
c=[t for t in TE if one(t['type']) == 1 and one(t['name']).startswith('connect ') and pid(t) in ('$c1', '$c2')]
a=[t for t in TE if one(t['type']) == 1 and one(t['name']).startswith('accept ') and pid(t) == '$spid']
ok(len(c) == 2 and len(a) == 2 and sorted(x['flow_ids'] for x in c) == sorted(x['terminating_flow_ids'] for x in a))"
check "perfetto: four closes end the four connection slices of server and clients" python3 -c "$P
ok(sum(1 for t in TE if one(t['type']) == 2 and pid(t) in ('$c1', '$c2', '$spid')) == 4)"
