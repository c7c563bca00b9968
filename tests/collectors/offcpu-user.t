# marple-offcpu -u (bcc offcputime -u; root, real BPF): kernel threads are not
# traced, user threads are.  Without it a system-wide capture is mostly
# kworker, ksoftirqd, migration and rcu_* asleep (issue 39).
. "$MARPLE_TOP/tests/lib.sh"
plan 4
if ! is_root; then skip_rest "offcpu -u" "needs root"; fi
W="$MARPLE_BIN/workloads"

"$W/sleeper" 5 > /dev/null 2>&1 & wl=$!
sleep 0.2
marple-offcpu -u 1 > "$T/u.out" 2> "$T/u.err"; rc=$?
marple-offcpu 1 > "$T/all.out" 2>/dev/null
kill "$wl" 2>/dev/null; wait "$wl" 2>/dev/null
# kernel threads' stacks as marple-fold -u knows them
kthreads() { marple-fold -u "$1" 2>&1 >/dev/null | sed -n 's/.*left out \([0-9]*\) stacks\{0,1\} of kernel threads.*/\1/p'; }
check "offcpu -u: exit 0, the sleeper's stacks there" sh -c "[ $rc -eq 0 ] && grep -q '^[0-9]*#sleeper;.*wait_here' '$T/u.out'"
check "offcpu -u: no kernel thread's stack ($(kthreads "$T/u.out"))" test -z "$(kthreads "$T/u.out")"
check "offcpu without -u: kernel threads there ($(kthreads "$T/all.out") stacks)" test "$(kthreads "$T/all.out")" -gt 0
check "offcpu -u: the header says so" grep -q '"user_threads_only":true' "$T/u.out"
