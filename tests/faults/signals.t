# Faults: collectors and the driver killed with SIGINT/SIGTERM at random
# moments (during BPF load, right after "ready", mid-capture) must leave
# output that `marple-cat -q` accepts: nothing at all, or whole sections.
# Once tracing has begun (the ready file exists) a signal ends the capture
# cleanly: exit 0, a trailer with "ended":"signal".  FAULT_TRIALS (default 2)
# trials per collector and signal; the random seed is printed to replay.
. "$MARPLE_TOP/tests/lib.sh"
trials=${FAULT_TRIALS:-2}
# every collector but the supervisor: 2 signals x (once tracing + the trials);
# the driver: 2 signals x the trials (a new collector adds its own cases)
ncollectors=$(ls "$MARPLE_TOP"/collectors/marple-*.c | grep -vc '/marple-collect\.c$')
plan $((ncollectors * 2 * (1 + trials) + 2 * trials))
is_root || skip_rest "faults: signals" "needs root"
seed=${FAULT_SEED:-$(od -An -N4 -tu4 /dev/urandom | tr -d ' ')}
echo "# faults/signals: seed $seed, $trials trials per collector and signal"
# delays: one random delay in [0, 1.2) s per line, from the seed
awk -v s="$seed" 'BEGIN { srand(s); for (i = 0; i < 10000; i++) printf "%.2f\n", rand() * 1.2 }' >"$T/delays"
d_i=0
next_delay() { d_i=$((d_i + 1)); sed -n "${d_i}p" "$T/delays"; }

sleep 600 & victim=$!
trap 'kill $victim 2>/dev/null; rm -rf "$T"' EXIT

# Extra arguments a collector needs to run at all here.
args_for() {
	case "$1" in
	marple-mallocstacks|marple-memleak) echo "-p $victim" ;;
	marple-memevents) echo "--faults" ;;
	*) echo "" ;;
	esac
}

# run_trial NAME SIG DELAY CMD...: start CMD, signal it after DELAY s (or
# once ready when DELAY is "ready"), and judge what it wrote to $T/out.
run_trial() {
	_name=$1 _sig=$2 _delay=$3; shift 3
	rm -f "$T/ready" "$T/out" "$T/err"
	# as from a terminal, SIGINT and SIGTERM at their defaults: a job put in
	# the background by sh starts with SIGINT ignored, and a signal before
	# the collector's handler (a sanitized program's start takes 80-100 ms
	# here) was lost, the collector then running on (every collector, both
	# trials, once a run's first delay was 0.03 s)
	MARPLE_READY_FILE="$T/ready" env --default-signal=INT,TERM "$@" >"$T/out" 2>"$T/err" </dev/null &
	_pid=$!
	if [ "$_delay" = ready ]; then wait_ready "$T/ready" 20; sleep 0.3; else sleep "$_delay"; fi
	_was_ready=0; [ -e "$T/ready" ] && _was_ready=1
	kill -s "$_sig" "$_pid" 2>/dev/null
	# no hang: ends within 15 s of the signal
	_i=0
	while kill -0 "$_pid" 2>/dev/null && [ $_i -lt 150 ]; do sleep 0.1; _i=$((_i + 1)); done
	if kill -0 "$_pid" 2>/dev/null; then
		kill -KILL "$_pid" 2>/dev/null; wait "$_pid" 2>/dev/null
		fail "$_name" "still running 15 s after SIG$_sig"; return
	fi
	wait "$_pid"; _rc=$?
	if grep -q 'Sanitizer' "$T/err"; then fail "$_name" "sanitizer report: $(grep -m1 ERROR "$T/err")"; return; fi
	if [ -s "$T/out" ] && ! marple-cat -q "$T/out" 2>"$T/cat.err"; then
		fail "$_name" "output does not parse after SIG$_sig at ${_delay}s (rc $_rc): $(head -c 200 "$T/cat.err")"; return
	fi
	if [ $_was_ready -eq 1 ]; then
		if [ $_rc -ne 0 ]; then fail "$_name" "exit $_rc after SIG$_sig while tracing (stderr: $(head -c 200 "$T/err" | tr '\n' ' '))"; return; fi
		if ! tail -n 1 "$T/out" | grep -q '"ended":"signal"'; then
			fail "$_name" "no trailer with \"ended\":\"signal\" after SIG$_sig while tracing: $(tail -n 1 "$T/out" | head -c 200)"; return
		fi
	elif [ $_rc -gt 128 ] && [ -s "$T/out" ]; then
		fail "$_name" "killed by SIG$_sig before ready, but wrote $(wc -c <"$T/out") bytes that are ... valid; rc $_rc"; return
	fi
	pass "$_name"
}

ncoll=0
for src in "$MARPLE_TOP"/collectors/marple-*.c; do
	c=$(basename "$src" .c)
	[ -x "$MARPLE_BIN/$c" ] || continue
	# the supervisor of several collectors: the driver's trials below run it
	[ "$c" = marple-collect ] && continue
	extra=$(args_for "$c")
	# Only collectors that can run on this machine: a 1 s run must succeed.
	# shellcheck disable=SC2086
	if ! timeout 30 "$c" $extra 1 >"$T/probe" 2>"$T/probe.err"; then
		why="does not run here: $(tail -n 1 "$T/probe.err" | head -c 150)"
		for sig in INT TERM; do
			k=0
			while [ $k -le "$trials" ]; do skip "$c: SIG$sig (case $k)" "$why"; k=$((k + 1)); done
		done
		continue
	fi
	ncoll=$((ncoll + 1))
	for sig in INT TERM; do
		# shellcheck disable=SC2086
		run_trial "$c: SIG$sig once tracing" "$sig" ready "$c" $extra
		k=1
		while [ $k -le "$trials" ]; do
			d=$(next_delay)
			# shellcheck disable=SC2086
			run_trial "$c: SIG$sig at ${d}s (trial $k)" "$sig" "$d" "$c" $extra
			k=$((k + 1))
		done
	done
done

# The driver: `marple collect` killed at a random moment leaves either no
# capture or one that parses, and no temporary file behind.
if [ -x "$MARPLE_BIN/marple" ] && [ $ncoll -gt 0 ]; then
	for sig in INT TERM; do
		k=1
		while [ $k -le "$trials" ]; do
			d=$(next_delay)
			rm -rf "$T/cap"; mkdir "$T/cap"
			(cd "$T/cap" && exec marple collect -t 5 -o "$T/cap/c.marple" cpusched disklat) >"$T/drv.out" 2>"$T/drv.err" </dev/null &
			pid=$!
			sleep "$d"; sleep 0.5
			kill -s "$sig" "$pid" 2>/dev/null
			i=0
			while kill -0 "$pid" 2>/dev/null && [ $i -lt 250 ]; do sleep 0.1; i=$((i + 1)); done
			name="marple collect: SIG$sig at $(awk -v d="$d" 'BEGIN { print d + 0.5 }')s (trial $k)"
			if kill -0 "$pid" 2>/dev/null; then
				kill -KILL "$pid"; fail "$name" "still running 25 s after the signal"
			elif [ -e "$T/cap/c.marple" ] && ! marple-cat -q "$T/cap/c.marple" 2>"$T/cat.err"; then
				fail "$name" "capture does not parse: $(head -c 200 "$T/cat.err")"
			elif ls -A "$T/cap" | grep -vq '^c\.marple$'; then
				fail "$name" "left a temporary file: $(ls -A "$T/cap" | tr '\n' ' ')"
			else
				pass "$name"
			fi
			wait "$pid" 2>/dev/null
			k=$((k + 1))
		done
	done
fi
