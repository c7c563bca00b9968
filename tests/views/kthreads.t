# Off-CPU without idle kernel threads (issue 39): system-wide off-CPU time is
# mostly kworker, ksoftirqd, migration and rcu_* asleep for the whole
# capture.  -u (bcc offcputime -u) leaves their stacks out of fold,
# flamegraph and treemap, counted and named; the report leaves them out of an
# off-CPU section's pictures by default and says so on the page.
. "$MARPLE_TOP/tests/lib.sh"
plan 11

printf '%s\n' \
	'{"marple":1,"interface":"offcpu","datatype":"stack","cpu":"off","host":"h","units":{"weight":"us"}}' \
	'3000000#kworker/u8:1;ret_from_fork_asm;ret_from_fork;kthread;worker_thread;schedule;__schedule' \
	'2000000#ksoftirqd/0;ret_from_fork_asm_[k];ret_from_fork_[k];kthread_[k];smpboot_thread_fn_[k];schedule_[k]' \
	'1000000#rcu_preempt;ret_from_fork;kthread;rcu_gp_kthread;schedule' \
	'5000#server;_start;main;serve;accept;entry_SYSCALL_64;schedule;__schedule' \
	'700#server;start_thread;worker;read;entry_SYSCALL_64;schedule' \
	'{"trailer":1,"records":5}' > "$T/off.marple"

marple-fold -u "$T/off.marple" > "$T/f" 2> "$T/e"; rc=$?
printf 'server;_start;main;serve;accept;entry_SYSCALL_64;schedule;__schedule 5000\nserver;start_thread;worker;read;entry_SYSCALL_64;schedule 700\n' > "$T/f.exp"
same_ok "fold -u: only the user threads' stacks" $rc "$T/f.exp" "$T/f"
check "fold -u: what was left out, counted and named" grep -q \
	'^marple-fold: left out 3 stacks of kernel threads (6000000 us: kworker/u8:1, ksoftirqd/0, rcu_preempt); without -u they are kept$' "$T/e"
marple-fold "$T/off.marple" > "$T/all" 2> "$T/e"
check "fold without -u: all five, nothing said" sh -c "[ \$(wc -l < '$T/all') -eq 5 ] && [ ! -s '$T/e' ]"
# folded text too (frames by name)
marple-fold "$T/off.marple" | marple-fold -u > "$T/f2" 2>/dev/null
same "fold -u on folded text" "$T/f.exp" "$T/f2"

marple-flamegraph -u "$T/off.marple" > "$T/g.svg" 2> "$T/e"; rc=$?
check "flamegraph -u: the total is the server's 5700 us" sh -c \
	"[ $rc -eq 0 ] && grep -q 'T:5700,' '$T/g.svg' && ! grep -q kworker '$T/g.svg'"
check "flamegraph -u: said" grep -q 'left out 3 stacks of kernel threads (6000000 us' "$T/e"
marple-treemap -u "$T/off.marple" > "$T/t.html" 2> "$T/e"
check "treemap -u: no kernel thread, said" sh -c "! grep -q kworker '$T/t.html' && grep -q 'left out 3 stacks' '$T/e'"

# the report: the off-CPU section's pictures leave them out, the page says so
R="$MARPLE_BIN/marple-registry"
: > "$T/none"
MARPLE_CONFIG="$T/none" marple-config --registry "$R" > "$T/cfg"
marple-report --plan --registry "$R" --config "$T/cfg" "$T/off.marple" > "$T/plan" 2>/dev/null
check "report plan: the flame graph of an off-CPU section gets --user-threads-only" sh -c \
	"grep 'flamegraph' '$T/plan' | grep -q -- '--user-threads-only'"
check "report plan: a note says what and how much was left out" grep -q \
	'note	kernel threads left out of the pictures: 3 stacks, 6.00 s off the CPU (kworker/u8:1, ksoftirqd/0, rcu_preempt)' "$T/plan"
# an on-CPU section keeps its kernel threads: their CPU time is real work
sed 's/"interface":"offcpu","datatype":"stack","cpu":"off"/"interface":"callstack","datatype":"stack"/; s/"us"/"samples"/' "$T/off.marple" > "$T/on.marple"
marple-report --plan --registry "$R" --config "$T/cfg" "$T/on.marple" > "$T/plan2" 2>/dev/null
check "report plan: an on-CPU section keeps kernel threads" sh -c \
	"grep -q flamegraph '$T/plan2' && ! grep -q -- '--user-threads-only' '$T/plan2' && ! grep -q 'kernel threads' '$T/plan2'"
# a user thread whose stack passes through ret_from_fork is no kernel thread
printf '{"marple":1,"interface":"offcpu","datatype":"stack","cpu":"off","units":{"weight":"us"}}\n9#bash;ret_from_fork;schedule_tail;finish_task_switch\n' |
	marple-fold -u > "$T/f3" 2>&1
check "fold -u: ret_from_fork without kthread is kept" grep -qx 'bash;ret_from_fork;schedule_tail;finish_task_switch 9' "$T/f3"
