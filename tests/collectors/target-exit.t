# Every collector with -p stops when its process exits (as perf does), with
# "ended":"target exited" in the trailer, instead of running out its duration
# (root, real BPF).
. "$MARPLE_TOP/tests/lib.sh"
COLLECTORS="callstack offcpu cpusched disklat diskblockrq mallocstacks memleak memevents memtime"
plan 18
if ! is_root; then skip_rest "target-exit" "needs root"; fi

for c in $COLLECTORS; do
	sh -c 'while :; do :; done' & wl=$!
	rm -f "$T/ready"
	MARPLE_READY_FILE="$T/ready" "marple-$c" -p "$wl" 10 > "$T/$c.out" 2> "$T/$c.err" & col=$!
	if ! await_ready "target-exit: $c -p is tracing" "$T/ready" 30 "$T/$c.err" "$col"; then
		kill "$wl" "$col" 2>/dev/null; wait "$wl" "$col" 2>/dev/null
		fail "target-exit: $c -p stops when its process exits" "never started"
		continue
	fi
	sleep 1
	kill "$wl"; wait "$wl" 2>/dev/null
	t0=$(date +%s%N)
	# its output complete (memleak's ends with a second section, memusage):
	# what a reader sees; detaching uprobes may take memleak 2 s more to exit
	trailers=1; [ "$c" = memleak ] && trailers=2
	i=0
	while [ "$(grep -c '^{"trailer":1' "$T/$c.out")" -lt "$trailers" ] && [ "$i" -lt 120 ]; do
		sleep 0.1; i=$((i + 1))
	done
	ms=$(( ($(date +%s%N) - t0) / 1000000 ))
	# a collector that runs on is stopped at the end of its 10 s anyway
	wait "$col"; rc=$?
	if [ "$rc" -eq 0 ] && [ "$ms" -lt 2000 ] && grep -q '^{"trailer":1,.*"ended":"target exited"' "$T/$c.out"; then
		pass "target-exit: $c -p stops when its process exits (output complete ${ms} ms after)"
	else
		fail "target-exit: $c -p stops when its process exits" \
			"exit $rc, ${ms} ms after the exit; trailer: $(grep '"trailer":1' "$T/$c.out" | cut -c1-200); stderr: $(tail -c 300 "$T/$c.err" | tr '\n' ' ')"
	fi
done
