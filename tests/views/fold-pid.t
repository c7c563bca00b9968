# marple-fold --pid/--tid on marple streams (issue 39): two processes of one
# name fold apart.  A timed stack section's samples name each sample's pid
# and tid; an untimed one does not know them: it is named, folded by comm.
. "$MARPLE_TOP/tests/lib.sh"
plan 8

# two python3 processes, 100 and 200 (thread 201), same stacks
printf '%s\n' \
	'{"marple":1,"interface":"callstack","datatype":"stack","timed":"stacks","start_ns":0,"units":{"weight":"samples"}}' \
	'3#python3;main;work' \
	'2#python3;main;idle' \
	'{"trailer":1,"records":2}' \
	'{"marple":1,"interface":"callstack","datatype":"event","timed":"samples","start_ns":0,"units":{"time":"ns"}}' \
	'1000,sample,cpu0,stack=0,pid=100,tid=100' \
	'2000,sample,cpu0,stack=0,pid=100,tid=100' \
	'3000,sample,cpu1,stack=0,pid=200,tid=201' \
	'4000,sample,cpu1,stack=1,pid=200,tid=200' \
	'5000,sample,cpu0,stack=1,pid=100,tid=100' \
	'{"trailer":1,"records":5}' > "$T/two.marple"

marple-fold -p "$T/two.marple" > "$T/o" 2> "$T/e"; rc=$?
printf 'python3-100;main;idle 1\npython3-100;main;work 2\npython3-200;main;idle 1\npython3-200;main;work 1\n' > "$T/p.exp"
same_ok "fold -p: a timed section folds per process" $rc "$T/p.exp" "$T/o"
check "fold -p: nothing said about a timed section" test ! -s "$T/e"
marple-fold -t "$T/two.marple" > "$T/o" 2>/dev/null
printf 'python3-100/100;main;idle 1\npython3-100/100;main;work 2\npython3-200/200;main;idle 1\npython3-200/201;main;work 1\n' > "$T/t.exp"
same "fold -t: per thread" "$T/t.exp" "$T/o"
marple-fold -p --from 0.0000025 "$T/two.marple" > "$T/o" 2>/dev/null
printf 'python3-100;main;idle 1\npython3-200;main;idle 1\npython3-200;main;work 1\n' > "$T/r.exp"
same "fold -p --from: per process, in the range" "$T/r.exp" "$T/o"
marple-fold -p -H "$T/two.marple" > "$T/o" 2>/dev/null
check "fold -p -H: the pid goes on the comm frame, after the host's" grep -qx '(no host);python3-100;main;work 2' "$T/o"
marple-fold -p -s "$T/two.marple" > "$T/o" 2>/dev/null
check "fold -p --to-stream: processes in the comm frame" grep -qx '2#python3-100;main;work' "$T/o"

# untimed: named and folded by comm; exit 0
marple-fold -p "$DATA/sample.marple" > "$T/o" 2> "$T/e"; rc=$?
check "fold -p on an untimed section: folded by comm" sh -c "[ $rc -eq 0 ] && grep -qx 'bash;main;execute_command;waitpid 12' '$T/o'"
check "fold -p on an untimed section: said, with the cure" \
	grep -q 'section 0 has no pid per sample (collect with --timed): folded by comm alone' "$T/e"
