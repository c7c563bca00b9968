# marple-perfetto: the trace decodes with protoc against our own statement of
# Perfetto's field numbers (tests/perfetto/trace.proto, through pftrace.py);
# context switches and wake-ups are ftrace events in per-CPU bundles with the
# kernel's encodings; connections and disk requests are slices on described
# tracks, joined by flows; times and names are the stream's; errors.
. "$MARPLE_TOP/tests/lib.sh"
plan 39
DEC="$MARPLE_TOP/tests/perfetto/pftrace.py"
{
	echo '{"marple":1,"interface":"cpusched","datatype":"event","track":"cpu","start_ns":1000,"wall_ns":1700000000000000000,"host":"h1","kernel":"6.1.0-9-amd64","ncpus":2}'
	echo '1000,sched_switch,cpu0,comm=a,pid=10,prev_comm=swapper/0,prev_pid=0,prev_state=R,next_comm=a,next_pid=10,next_prio=120,next_tgid=10'
	echo '3000,sched_switch,cpu0,comm=b<x>,pid=11,prev_comm=a,prev_pid=10,prev_state=S,next_comm=b<x>,next_pid=11,next_prio=-2,next_tgid=10'
	echo '3500,sched_wakeup,cpu1,comm=a,pid=10,prio=120,target_cpu=0,waker_comm=c,waker_pid=12,tgid=10'
	echo '3600,sched_wakeup,cpu1,comm=w,pid=14,prio=120,target_cpu=1,waker_comm=c,waker_pid=12,tgid=14'
	echo '4000,sched_switch,cpu0,comm=swapper/0,pid=0,prev_comm=b<x>,prev_pid=11,prev_state=R+,next_comm=swapper/0,next_pid=0,next_prio=120'
	echo '4500,sched_switch,cpu1,comm=%FFbad,pid=13,prev_comm=swapper/1,prev_pid=0,prev_state=D,next_comm=%FFbad,next_pid=13,next_prio=120'
	echo '4600,sched_switch,cpu1,comm=b2,pid=11,prev_comm=%FFbad,prev_pid=13,prev_state=S,next_comm=b2,next_pid=11,next_prio=120,next_tgid=10'
	echo '{"trailer":1,"records":7,"end_ns":9000}'
	echo '{"marple":1,"interface":"ipc","datatype":"event","track":"pid","start_ns":1000,"wall_ns":1700000000000000000,"host":"h1"}'
	echo '5000,connect,20,comm=cli,pid=20,saddr=1.2.3.4,sport=5,daddr=1.2.3.4,dport=80,flow=1.2.3.4:5>1.2.3.4:80'
	echo '6000,accept,30,comm=srv,pid=30,saddr=1.2.3.4,sport=80,daddr=1.2.3.4,dport=5,flow=1.2.3.4:5>1.2.3.4:80'
	echo '7000,close,30,comm=srv,pid=30,flow=1.2.3.4:5>1.2.3.4:80,tx=5,rx=7,duration_ns=1000'
	echo '7500,close,20,comm=cli,pid=20,flow=1.2.3.4:5>1.2.3.4:80,tx=7,rx=5,duration_ns=2500'
	echo '8000,refused,20,comm=cli,pid=20,daddr=1.2.3.4,dport=81'
	echo '{"marple":1,"interface":"disklat","datatype":"point","units":{"x":"s","y":"ms"},"start_ns":1000,"wall_ns":1700000000000000000,"host":"h1"}'
	echo '0.000002,0.0005,dd,comm=dd,pid=40,dev=vda,bytes=4096,rw=R'
	echo '0.0000025,0.001,dd,comm=dd,pid=40,dev=vda,bytes=8192,rw=W'
	echo '0.000004,0.0005,dd,comm=dd,pid=40,dev=vda,bytes=4096,rw=R'
} > "$T/in"
marple-perfetto "$T/in" > "$T/out.pf"
check "perfetto: exit 0" test $? -eq 0
python3 "$DEC" "$T/out.pf" > "$T/out.json"
check "perfetto: protoc decodes the trace, every field known" test $? -eq 0
P="import json,sys; d=json.load(open('$T/out.json')); pk=d.get('packet', [])
def one(x): return x[0] if x else None
B={}
for p in pk:
    for b in p.get('ftrace_events', []):
        B.setdefault(b['cpu'][0], []).extend(b['event'])
SW=[(e['timestamp'][0], e['sched_switch'][0]) for e in B.get(0, []) if 'sched_switch' in e]
TD={one(p['track_descriptor'][0]['uuid']): p['track_descriptor'][0] for p in pk if 'track_descriptor' in p}
TE=[(p['timestamp'][0], p['track_event'][0]) for p in pk if 'track_event' in p]
def ann(t): return {one(a['name']): one(a.get('int_value') or a.get('string_value')) for a in t.get('debug_annotations', [])}
def ok(c): sys.exit(0 if c else 1)"
check "perfetto: cpu0's bundle: three switches at the stream's times" python3 -c "$P
ok([t for t, s in SW] == [1000, 3000, 4000])"
check "perfetto: switch fields (comms, pids, prio -2, prev_state S=1)" python3 -c "$P
s=SW[1][1]; ok((one(s['prev_comm']), one(s['prev_pid']), one(s['prev_state']), one(s['next_comm']), one(s['next_pid']), one(s['next_prio'])) == ('a', 10, 1, 'b<x>', 11, -2))"
check "perfetto: R+ is 0x100 and R is 0 (Linux 4.14+ layout, release declared)" python3 -c "$P
ok(one(SW[2][1]['prev_state']) == 256 and one(SW[0][1]['prev_state']) == 0)"
check "perfetto: an ftrace event's pid is the task switched out" python3 -c "$P
ok([one(e['pid']) for e in B[0]] == [0, 10, 11])"
check "perfetto: the wake-up is on cpu1: woken pid 10, target cpu 0, waker 12" python3 -c "$P
w=[e for e in B[1] if 'sched_wakeup' in e]; x=w[0]['sched_wakeup'][0]
ok(len(w) == 2 and one(w[0]['pid']) == 12 and (one(x['pid']), one(x['target_cpu']), one(x['success']), one(x['comm'])) == (10, 0, 1, 'a'))"
check "perfetto: a name that is not UTF-8 is written %XX-escaped" python3 -c "$P
ok([one(e['sched_switch'][0]['next_comm']) for e in B[1] if 'sched_switch' in e] == ['%FFbad', 'b2'])"
check "perfetto: system info: Linux and the header's kernel, 2 CPUs" python3 -c "$P
s=[p['system_info'][0] for p in pk if 'system_info' in p]
ok(len(s) == 1 and one(s[0]['utsname'][0]['release']) == '6.1.0-9-amd64' and one(s[0]['num_cpus']) == 2)"
check "perfetto: clock snapshot: boot time = monotonic = start_ns, realtime = wall_ns, once" python3 -c "$P
c=[p['clock_snapshot'][0] for p in pk if 'clock_snapshot' in p]
ok(len(c) == 1 and sorted((one(k['clock_id']), one(k['timestamp'])) for k in c[0]['clocks']) == [(1, 1700000000000000000), (3, 1000), (6, 1000)])"
check "perfetto: the first packet clears the sequence's state; every packet is on sequence 1" python3 -c "$P
ok(one(pk[0].get('sequence_flags')) == 1 and all(one(p.get('sequence_id')) == 1 for p in pk))"
check "perfetto: processes named in ProcessTree packets (ipc's cli, srv; main threads a, w)" python3 -c "$P
ok(sorted((one(q['pid']), one(q['cmdline'])) for p in pk if 'process_tree' in p for q in p['process_tree'][0].get('processes', [])) == [(10, 'a'), (14, 'w'), (20, 'cli'), (30, 'srv')])"
check "perfetto: threads with their thread group, again when renamed (11 in process 10: b<x>, then b2)" python3 -c "$P
ok([(one(q['tid']), one(q['tgid']), one(q['name'])) for p in pk if 'process_tree' in p for q in p['process_tree'][0].get('threads', [])] == [(10, 10, 'a'), (11, 10, 'b<x>'), (14, 14, 'w'), (11, 10, 'b2')])"
check "perfetto: process tracks described with pid and name" python3 -c "$P
ok(sorted((one(t['process'][0]['pid']), one(t['process'][0]['process_name'])) for t in TD.values() if 'process' in t) == [(20, 'cli'), (30, 'srv')])"
check "perfetto: connect and accept begin slices on lanes of their processes, flow from one to the other" python3 -c "$P
b=[(ts, t) for ts, t in TE if one(t['type']) == 1 and one(t['categories']) == 'ipc']
c=[x for x in b if one(x[1]['name']) == 'connect 1.2.3.4:80'][0]; a=[x for x in b if one(x[1]['name']) == 'accept 1.2.3.4:5'][0]
pc=TD[one(TD[one(c[1]['track_uuid'])]['parent_uuid'])]['process'][0]; pa=TD[one(TD[one(a[1]['track_uuid'])]['parent_uuid'])]['process'][0]
ok(c[0] == 5000 and a[0] == 6000 and one(pc['pid']) == 20 and one(pa['pid']) == 30 and c[1]['flow_ids'] == a[1]['terminating_flow_ids'] and len(c[1]['flow_ids']) == 1)"
check "perfetto: each close ends the slice on its lane (7000 srv, 7500 cli) with tx/rx" python3 -c "$P
e=[(ts, one(t['track_uuid']), ann(t)) for ts, t in TE if one(t['type']) == 2 and 'tx' in ann(t)]
pid={ts: one(TD[one(TD[u]['parent_uuid'])]['process'][0]['pid']) for ts, u, a in e}
ok(sorted((ts, a['tx'], a['rx']) for ts, u, a in e) == [(7000, 5, 7), (7500, 7, 5)] and pid == {7000: 30, 7500: 20})"
check "perfetto: refused is an instant on the process track" python3 -c "$P
r=[(ts, t) for ts, t in TE if one(t.get('name')) == 'refused']
ok(len(r) == 1 and r[0][0] == 8000 and one(r[0][1]['type']) == 3 and one(TD[one(r[0][1]['track_uuid'])]['process'][0]['pid']) == 20)"
check "perfetto: disk requests: slices from x - y to x (read 2500-3000, write 2500-3500, read 4500-5000)" python3 -c "$P
d=[(ts, one(t['type']), one(t['track_uuid']), one(t.get('name'))) for ts, t in TE if one(t['type']) in (1, 2) and TD[one(t['track_uuid'])].get('parent_uuid') and 'disk' in (one(TD[one(TD[one(t['track_uuid'])]['parent_uuid'])].get('name')) or '')]
ok(sorted((ts, ty, n) for ts, ty, u, n in d) == [(2500, 1, 'read'), (2500, 1, 'write'), (3000, 2, None), (3500, 2, None), (4500, 1, 'read'), (5000, 2, None)])"
check "perfetto: overlapping requests on two lanes of 'disk vda', the later read reuses the first" python3 -c "$P
lanes=[u for u, t in TD.items() if 'parent_uuid' in t and one(TD[one(t['parent_uuid'])].get('name')) == 'disk vda']
rd=[one(t['track_uuid']) for ts, t in TE if one(t.get('name')) == 'read']
ok(len(lanes) == 2 and rd[0] == rd[1])"
check "perfetto: a request's fields are its slice's arguments" python3 -c "$P
w=[t for ts, t in TE if one(t.get('name')) == 'write'][0]
ok(ann(w) == {'comm': 'dd', 'pid': 40, 'dev': 'vda', 'bytes': 8192, 'rw': 'W'})"

# a small bundle size writes many bundles: the same events, in order
marple-perfetto -b 1 "$T/in" > "$T/small.pf"
python3 "$DEC" "$T/small.pf" > "$T/small.json"
check "perfetto -b 1: one bundle per event, the same events" python3 -c "
import json,sys; a=json.load(open('$T/out.json'))['packet']; b=json.load(open('$T/small.json'))['packet']
ev=lambda pk: [e for p in pk for x in p.get('ftrace_events', []) for e in x['event']]
n=sum(1 for p in b if 'ftrace_events' in p)
sys.exit(0 if n == 7 and sorted(map(str, ev(a))) == sorted(map(str, ev(b))) else 1)"

# y in another unit of time: microseconds
printf '{"marple":1,"interface":"lat","datatype":"point","units":{"x":"s","y":"us"},"start_ns":0,"host":"h"}\n0.00001,2.5,q,dev=nvme0\n' > "$T/us"
marple-perfetto "$T/us" > "$T/us.pf"
python3 "$DEC" "$T/us.pf" > "$T/us.json"
check "perfetto: y in us: the slice is 2500 ns long, ending at x (10000 ns)" python3 -c "
import json,sys; pk=json.load(open('$T/us.json'))['packet']
t=[(p['timestamp'][0], p['track_event'][0]['type'][0]) for p in pk if 'track_event' in p]
sys.exit(0 if t == [(7500, 1), (10000, 2)] else 1)"

# a timed lock section (marple-lock --timed): each wait a slice on its
# thread, named by the lock and the function that released it (past the
# kernel's frames and the C library's, an inlined one by the function it is
# in), with both stacks; and a slice on a lane of the lock's track
{
	echo '{"marple":1,"interface":"lock","datatype":"stack","timed":"stacks","start_ns":1000,"host":"h1","units":{"weight":"us"}}'
	echo '3#[futex 0x10];app;main;want;pthread_mutex_lock;futex_wait;--;try_to_wake_up;futex_wake;lll_unlock;__lll_lock_wake;give;hold;main;holder'
	echo '1#[futex 0x10];app;main;want;pthread_mutex_lock;--;[timed out]'
	echo '2#[rwsem 0xffff1];app;main;mm;down_write;rwsem_down_write_slowpath'
	echo '{"trailer":1,"records":3,"frames":{"try_to_wake_up":{"kind":"kernel"},"futex_wake":{"kind":"kernel"},"lll_unlock":{"kind":"inline","file":"./nptl/x.c","line":3},"__lll_lock_wake":{"kind":"native","file":"/usr/lib/x86_64-linux-gnu/libc.so.6","offset":5},"give":{"kind":"native","file":"/app","offset":9}}}'
	echo '{"marple":1,"interface":"lock","datatype":"event","timed":"samples","start_ns":1000,"host":"h1","units":{"time":"ns"},"track":"cpu"}'
	echo '2000,wait,cpu0,stack=0,pid=5,tid=6,dur=3000'
	echo '2500,wait,cpu1,stack=1,pid=5,tid=7,dur=1000'
	echo '6000,wait,cpu0,stack=2,pid=5,tid=6,dur=500'
	echo '{"trailer":1,"records":3}'
} > "$T/lock"
marple-perfetto "$T/lock" > "$T/lock.pf" && python3 "$DEC" "$T/lock.pf" > "$T/lock.json"
check "perfetto: a timed lock section converts and decodes" test $? -eq 0
L="import json,sys; pk=json.load(open('$T/lock.json')).get('packet', [])
def one(x): return x[0] if x else None
TD={one(p['track_descriptor'][0]['uuid']): p['track_descriptor'][0] for p in pk if 'track_descriptor' in p}
TE=[(p['timestamp'][0], p['track_event'][0]) for p in pk if 'track_event' in p]
TH={one(t['thread'][0]['tid']): u for u, t in TD.items() if 'thread' in t}
def on(u): return [(ts, one(t['type']), one(t.get('name'))) for ts, t in TE if one(t['track_uuid']) == u]
def ann(t): return {one(a['name']): one(a.get('int_value') or a.get('string_value')) for a in t.get('debug_annotations', [])}
def lanes(name): return [u for u, t in TD.items() if 'parent_uuid' in t and one(TD[one(t['parent_uuid'])].get('name')) == name]
def ok(c, saw): print(saw); sys.exit(0 if c else 1)"
check "perfetto: timed lock: thread tracks with pid, tid and the waiter's name" python3 -c "$L
t=sorted((one(d['thread'][0]['tid']), one(d['thread'][0]['pid']), one(d['thread'][0]['thread_name'])) for d in TD.values() if 'thread' in d)
ok(t == [(6, 5, 'app'), (7, 5, 'app')], t)"
check "perfetto: timed lock: a slice per wait on its thread, named by the lock and the releasing function" python3 -c "$L
s=on(TH[6]) + on(TH[7])
ok(sorted(s, key=str) == sorted([(2000, 1, 'futex 0x10 \u2190 give'), (5000, 2, None), (6000, 1, 'rwsem 0xffff1'), (6500, 2, None), (2500, 1, 'futex 0x10 \u2190 [timed out]'), (3500, 2, None)], key=str), s)"
check "perfetto: timed lock: the slice carries the waiter's and the holder's stacks, root first" python3 -c "$L
a=[ann(t) for ts, t in TE if one(t.get('name')) == 'futex 0x10 \u2190 give'][0]
ok(a == {'pid': 5, 'tid': 6, 'lock': 'futex 0x10', 'waiter_stack': 'app;main;want;pthread_mutex_lock;futex_wait', 'holder_stack': 'holder;main;hold;give;__lll_lock_wake;lll_unlock;futex_wake;try_to_wake_up'}, a)"
check "perfetto: timed lock: a track per lock, overlapping waits on two lanes, named by thread" python3 -c "$L
f=lanes('futex 0x10 (pid 5)'); r=lanes('rwsem 0xffff1 (pid 5)')
s=sorted(x for u in f for x in on(u) if x[2])
ok(len(f) == 2 and len(r) == 1 and s == [(2000, 1, 'app 6'), (2500, 1, 'app 7')] and [x[2] for x in on(r[0]) if x[2]] == ['app 6'], (len(f), len(r), s))"
# a thread whose first wait came before it named itself (a page fault's
# lock at its start): its track is described again, so the name it kept is
# the one shown (the last description of a track is the one Perfetto keeps)
{
	echo '{"marple":1,"interface":"lock","datatype":"stack","timed":"stacks","start_ns":1000,"host":"h1","units":{"weight":"us"}}'
	echo '1#[rwsem 0xffff1];app;start_thread;asm_exc_page_fault;down_read'
	echo '2#[futex 0x10];worker;start_thread;want;pthread_mutex_lock'
	echo '{"trailer":1,"records":2}'
	echo '{"marple":1,"interface":"lock","datatype":"event","timed":"samples","start_ns":1000,"host":"h1","units":{"time":"ns"},"track":"cpu"}'
	echo '2000,wait,cpu0,stack=0,pid=5,tid=6,dur=100'
	echo '3000,wait,cpu0,stack=1,pid=5,tid=6,dur=200'
	echo '4000,wait,cpu0,stack=1,pid=5,tid=6,dur=200'
	echo '{"trailer":1,"records":3}'
} > "$T/rename"
check "perfetto: timed lock: a renamed thread's one track is described again by its new name, once" sh -c "
marple-perfetto '$T/rename' > '$T/rename.pf' && python3 '$DEC' '$T/rename.pf' > '$T/rename.json' && python3 -c \"import json,sys
pk=json.load(open('$T/rename.json')).get('packet', [])
d=[(t['uuid'][0], t['thread'][0]['thread_name'][0]) for t in (p['track_descriptor'][0] for p in pk if 'track_descriptor' in p) if 'thread' in t]
u={x[0] for x in d}; e={p['track_event'][0]['track_uuid'][0] for p in pk if 'track_event' in p and p['track_event'][0].get('name', [''])[0].startswith(('rwsem', 'futex'))}
print(d); sys.exit(0 if [n for _, n in d] == ['app', 'worker'] and len(u) == 1 and u <= e else 1)\""
# another collector's timed section (marple-offcpu --timed): a block named
# by the program's function it blocked in (not the kernel's futex_wait, a
# name the C library's inlined futex_wait shares)
{
	echo '{"marple":1,"interface":"offcpu","datatype":"stack","timed":"stacks","start_ns":0,"host":"h","units":{"weight":"us"}}'
	echo '7#w;main;take;__lll_lock_wait;futex_wait;do_futex;futex_wait;schedule'
	echo '{"trailer":1,"records":1,"frames":{"take":{"kind":"native","file":"/app"},"__lll_lock_wait":{"kind":"native","file":"/lib/libc.so.6"},"futex_wait":{"kind":"inline","file":"x.h"},"do_futex":{"kind":"kernel"},"schedule":{"kind":"kernel"}}}'
	echo '{"marple":1,"interface":"offcpu","datatype":"event","timed":"samples","start_ns":0,"host":"h","units":{"time":"ns"},"track":"cpu"}'
	echo '100,block,-,stack=0,pid=3,tid=4,dur=7000'
	echo '{"trailer":1,"records":1}'
} > "$T/off"
marple-perfetto "$T/off" > "$T/off.pf" && python3 "$DEC" "$T/off.pf" > "$T/lock.json"
check "perfetto: a timed off-CPU block: a slice on its thread named by the function it blocked in" python3 -c "$L
s=on(TH.get(4)); a=[ann(t) for ts, t in TE if one(t['type']) == 1]
ok(s == [(100, 1, 'take'), (7100, 2, None)] and a == [{'pid': 3, 'tid': 4, 'stack': 'w;main;take;__lll_lock_wait;futex_wait;do_futex;futex_wait;schedule'}], (s, a))"
sed 's/stack=2,/stack=9,/' "$T/lock" > "$T/lock9"
expect_exit "perfetto: a sample naming no stack record is said, exit 1" 1 'lock9:9: sample not drawn: names no stack record' sh -c "marple-perfetto '$T/lock9' > /dev/null"
{ sed -n 1,5p "$T/lock" | sed 's/,"timed":"stacks"//'; } > "$T/untimed"
expect_exit "perfetto: an untimed stack section is refused" 1 'datatype "stack".*(and the stacks of timed sections)' marple-perfetto "$T/untimed"

# errors
printf '{"marple":1,"interface":"callstack","datatype":"stack"}\n1#a\n' > "$T/s"
expect_exit "perfetto: a stack section is refused" 1 'datatype "stack".*events and points only' marple-perfetto -o "$T/s.pf" "$T/s"
check "perfetto: -o leaves no file on an error" test ! -e "$T/s.pf"
printf '{"marple":1,"interface":"memtime","datatype":"point","units":{"x":"ms","y":"bytes"},"start_ns":5}\n1,2,a\n' > "$T/m"
expect_exit "perfetto: points that are not latencies since start_ns are refused" 1 'draws only latency points' marple-perfetto "$T/m"
{ sed -n 1,2p "$T/in"; echo '{"marple":1,"interface":"ipc","datatype":"event","host":"h2"}'; echo '5,connect,1,flow=x'; } > "$T/h"
expect_exit "perfetto: sections of two hosts are refused" 1 'hosts "h1" and "h2"' marple-perfetto "$T/h"
expect_exit "perfetto: empty input" 1 'no marple event section' marple-perfetto /dev/null
printf '{"marple":1,"interface":"x","datatype":"event"}\nbad\n5,ev,t1,k=v\n' > "$T/b"
expect_exit "perfetto: a bad line is reported and counted" 1 "$T/b:2:" sh -c "marple-perfetto '$T/b' > '$T/b.pf'"
check "perfetto: after a bad line no file under -o, nothing on stdout" sh -c "! marple-perfetto -o '$T/b.o' '$T/b' 2> /dev/null && test ! -e '$T/b.o' -a ! -s '$T/b.pf' && test -z \"\$(ls '$T' | grep '^b\\.o')\""
expect_exit "perfetto: -b 0 is a usage error" 2 '' marple-perfetto -b 0 "$T/in"
