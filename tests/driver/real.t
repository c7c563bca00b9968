# marple collect and display with the real collectors and renderers built here
# (as root): several collectors at once on the bundled demo workload into one
# valid file whose call stacks show the workload's functions, Ctrl-C at random
# moments, and the report drawn from it.
. "$MARPLE_TOP/tests/lib.sh"
plan 11
if ! is_root; then skip_rest "driver real" "needs root"; fi
if [ ! -r /sys/kernel/btf/vmlinux ]; then skip_rest "driver real" "no BTF"; fi
unset MARPLE_LIBEXEC MARPLE_CONFIG DISPLAY WAYLAND_DISPLAY
export XDG_STATE_HOME="$T/state" XDG_CONFIG_HOME="$T/config"
W="$MARPLE_BIN/workloads/demo"
list=''
for n in callstack cpusched disklat memtime offcpu; do
	[ -x "$MARPLE_BIN/marple-$n" ] && list="$list $n"
done
if [ -z "$list" ] || [ ! -x "$W" ]; then skip_rest "driver real" "no collector or no demo workload built"; fi
n=$(echo $list | wc -w)
cd "$T" || exit 1

"$W" 6 & wl=$!
# shellcheck disable=SC2086
marple collect -t 3 -o real.marple $list > "$T/out" 2> "$T/err"; rc=$?
wait "$wl"
check "real: collect$list: exit 0 ($(head -c 300 "$T/err" | tr '\n' ' '))" test "$rc" -eq 0
check "real: the capture is a valid stream" marple-cat -q marple_out/real.marple
# a timed callstack (short captures keep sample times) adds its samples section
timed() { grep -c '^{"marple":.*"timed":"samples"' "$1"; }
k=$(timed marple_out/real.marple)
check "real: one section per collector ($n, and $k samples section)" test "$(marple-cat -l marple_out/real.marple | tail -n +2 | wc -l)" -eq $((n + k))
check "real: every section ran its duration" test "$(grep -c '"ended":"duration"' marple_out/real.marple)" -eq $((n + k))
case "$list" in *callstack*)
	marple-cat -i callstack marple_out/real.marple > "$T/cs"
	check "real: the workload's hot function is in the call stacks" grep -q '^[0-9]*#demo;.*crunch_primes' "$T/cs" ;;
esac

# Ctrl-C at random moments (perl restores SIGINT, which background jobs of a script ignore).
seed=$(date +%s); echo "# random seed $seed"
ok=0 early=0 bad=''
for r in 1 2 3 4 5; do
	delay=$(awk -v s="$seed" -v r="$r" 'BEGIN { srand(s + r); printf "%.2f", 0.3 + rand() * 1.7 }')
	rm -f marple_out/intr.marple
	t0=$(date +%s)
	# shellcheck disable=SC2086
	perl -e '$SIG{INT} = "DEFAULT"; exec @ARGV or die' marple collect -t 60 -o intr.marple $list 2> "$T/ierr" &
	p=$!
	sleep "$delay"
	kill -INT "$p"
	wait "$p"; rc=$?
	el=$(( $(date +%s) - t0 ))
	if [ -f marple_out/intr.marple ] && marple-cat -q marple_out/intr.marple &&
		[ "$(grep -c '"ended":"signal"' marple_out/intr.marple)" -eq $((n + $(timed marple_out/intr.marple))) ] && [ "$el" -lt 10 ]; then
		ok=$((ok + 1))
	elif [ ! -e marple_out/intr.marple ] && [ "$rc" -ne 0 ] && [ "$el" -lt 10 ] &&
		grep -q '^marple: collect: interrupted before any collector started; nothing written$' "$T/ierr"; then
		# a loaded machine can take longer than the delay to start the
		# collectors: nothing to keep, and the driver says so
		ok=$((ok + 1)) early=$((early + 1))
	else
		bad="$bad run$r(@$delay s: rc=$rc, ${el}s, $(marple-cat -l marple_out/intr.marple 2>&1 | tail -n +2 | awk '{print $2 "=" $NF}' | tr '\n' ' ')$(head -c 200 "$T/ierr" | tr '\n' ' '))"
	fi
done
check "real: Ctrl-C at 5 random moments: valid file, every trailer says signal, quick, or nothing written and said so ($ok ok, $early before any collector started;$bad)" test "$ok" -eq 5 -a "$early" -lt 5

marple display -n -i marple_out/real.marple > "$T/out" 2> "$T/err"; rc=$?
R=marple_out/real/index.html
check "real: display writes the report (exit $rc: $(head -c 200 "$T/err" | tr '\n' ' '))" test -s "$R" -a "$rc" -le 1
check "real: every section has a picture or says why not" \
	test "$(grep -c '<iframe class="pic"\|could not draw' "$R")" -ge "$n"
case "$list" in *callstack*)
	if [ -x "$MARPLE_BIN/marple-flamegraph" ]; then
		check "real: the flame graph shows the workload" grep -q 'crunch_primes' marple_out/real/00-callstack-flamegraph.svg
	fi ;;
esac

# --- one duration grammar (marple-collect's): -t 1d is a day, stopped by Ctrl-C here
timeout --preserve-status -s INT 2 marple collect -t 1d -o day.marple cpusched > /dev/null 2> "$T/err"; rc=$?
check "real: collect -t 1d runs (stopped by SIGINT: exit 0, a valid file; $(head -c 200 "$T/err" | tr '\n' ' '))" \
	sh -c "test $rc -eq 0 && marple-cat -q marple_out/day.marple"
# --- --include-self reaches every collector whose options have it (mallocstacks, memleak too)
marple collect --include-self -t 1 -o self.marple mallocstacks memleak > /dev/null 2> "$T/err"; rc=$?
check "real: collect --include-self mallocstacks memleak: exit 0, both sections ($(head -c 200 "$T/err" | tr '\n' ' '))" \
	sh -c "test $rc -eq 0 && test \$(marple-cat -l marple_out/self.marple | tail -n +2 | wc -l) -ge 2"
