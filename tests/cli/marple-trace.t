# marple-trace: valid Chrome trace-event JSON: per-CPU slices between
# switches, instants, flow arrows between events sharing flow=; errors.
. "$MARPLE_TOP/tests/lib.sh"
plan 17
{
	echo '{"marple":1,"interface":"cpusched","datatype":"event","track":"cpu","start_ns":1000}'
	echo '1000,sched_switch,cpu0,comm=a,pid=10,prev_comm=swapper/0,prev_pid=0,prev_state=R,next_comm=a,next_pid=10,next_prio=120'
	echo '3000,sched_switch,cpu0,comm=b<x>,pid=11,prev_comm=a,prev_pid=10,prev_state=S,next_comm=b<x>,next_pid=11,next_prio=120'
	echo '3500,sched_wakeup,cpu1,comm=a,pid=10,prio=120,target_cpu=0,waker_comm=c,waker_pid=12'
	echo '4000,sched_switch,cpu0,comm=swapper/0,pid=0,prev_comm=b<x>,prev_pid=11,prev_state=D,next_comm=swapper/0,next_pid=0,next_prio=120'
	echo '{"trailer":1,"records":4,"end_ns":9000}'
	echo '{"marple":1,"interface":"ipc","datatype":"event","track":"pid"}'
	echo '5000,connect,20,comm=cli,pid=20,flow=1.2.3.4:5>1.2.3.4:80'
	echo '6000,accept,30,comm=srv,pid=30,flow=1.2.3.4:5>1.2.3.4:80,peer_pid=20'
	echo '7000,close,30,comm=srv,pid=30,flow=1.2.3.4:5>1.2.3.4:80'
} > "$T/in"
marple-trace "$T/in" > "$T/out.json"
check "trace: exit 0" test $? -eq 0
P="import json,sys; d=json.load(open('$T/out.json')); ev=d['traceEvents']
X=[e for e in ev if e['ph']=='X' and e.get('cat')=='sched']
def ok(c): sys.exit(0 if c else 1)"
check "trace: valid JSON with traceEvents" python3 -c "$P
ok(isinstance(ev, list) and len(ev) > 5)"
check "trace: slices of a (2 us) then b (1 us) on cpu0, idle left out" python3 -c "$P
ok([(e['name'], e['ts'], e['dur'], e['tid']) for e in X] == [('a (10)', 0.0, 2.0, 0), ('b<x> (11)', 2.0, 1.0, 0)])"
check "trace: slice ends with the state the task left in" python3 -c "$P
ok(X[1]['args']['end_state'] == 'D')"
check "trace: CPU threads named cpu0, cpu1" python3 -c "$P
ok({e['args']['name'] for e in ev if e['ph']=='M' and e['name']=='thread_name' and e['pid']==1000000000} >= {'cpu0','cpu1'})"
check "trace: only the CPUs with events get a track (cpu0, cpu1: not 16)" python3 -c "$P
ok(sorted(e['args']['name'] for e in ev if e['ph']=='M' and e['name']=='thread_name' and e['pid']==1000000000) == ['cpu0','cpu1'])"
check "trace: no empty synthetic process (no named track: no 'tracks')" python3 -c "$P
ok(sorted(e['args']['name'] for e in ev if e['ph']=='M' and e['name']=='process_name' and e['pid']>=1000000000) == ['CPUs'])"
check "trace: wakeup is an instant on cpu1" python3 -c "$P
ok([e['tid'] for e in ev if e['ph']=='i' and e['name']=='sched_wakeup'] == [1])"
check "trace: one flow arrow from connect (pid 20) to accept (pid 30)" python3 -c "$P
s=[e for e in ev if e['ph']=='s']; f=[e for e in ev if e['ph']=='f']
ok(len(s)==1 and len(f)==1 and s[0]['id']==f[0]['id'] and s[0]['pid']==20 and f[0]['pid']==30)"
check "trace: processes of pid tracks named" python3 -c "$P
ok({e['args']['name'] for e in ev if e['ph']=='M' and e['name']=='process_name'} >= {'cli','srv'})"
check "trace: no raw '<' in the output" sh -c "! grep -q '<' '$T/out.json'"
marple-trace --idle "$T/in" > "$T/idle.json"
check "trace --idle: the idle task until the end of the capture" python3 -c "
import json,sys; d=json.load(open('$T/idle.json'))
sys.exit(0 if any(e.get('name')=='swapper/0 (0)' and e['dur']==5.0 for e in d['traceEvents']) else 1)"
printf '{"marple":1,"interface":"x","datatype":"point"}\n1,2,a\n' > "$T/p"
expect_exit "trace: point section rejected" 1 'datatype "point"' marple-trace "$T/p"
expect_exit "trace: empty input" 1 'no marple event section' marple-trace /dev/null
printf '{"marple":1,"interface":"x","datatype":"event"}\nbad\n5,ev,t1\n' > "$T/b"
expect_exit "trace: bad line counted" 1 "$T/b:2:" sh -c "marple-trace '$T/b' > '$T/b.json'"
check "trace: after a bad line no file under -o, nothing on stdout" sh -c "! marple-trace -o '$T/b.o' '$T/b' 2> /dev/null && test ! -e '$T/b.o' -a ! -s '$T/b.json' && test -z \"\$(ls '$T' | grep '^b\\.o')\""
printf '{"marple":1,"interface":"x","datatype":"event"}\n5,ev,cpu5\n6,ev,disk\n' > "$T/c5"
marple-trace "$T/c5" > "$T/c5.json"
check "trace: a capture with events on cpu5 only declares cpu5, and 'tracks' for a named track" python3 -c "
import json,sys; ev=json.load(open('$T/c5.json'))['traceEvents']
m=sorted((e['pid'], e['args']['name']) for e in ev if e['ph']=='M' and e['name'] in ('thread_name','process_name'))
sys.exit(0 if m == [(1000000000,'CPUs'),(1000000000,'cpu5'),(1000000001,'disk'),(1000000001,'tracks')] else 1)"
