# callstack.sh — what profiling costs: a fixed CPU-bound workload (two copies of
# build/workloads/burn, one per core) timed with no profiler, with
# marple-callstack and with perf record -g (-e cpu-clock, same frequency), and
# the total CPU seconds from the start of a capture to a folded file:
# marple-callstack | marple-fold  against  perf record -g + perf script + marple-fold.
# Configurations are interleaved, 5 rounds, best of each (the least disturbed
# run); the spread of the no-profiler runs is printed as the noise floor: a
# slowdown difference smaller than it is not a difference.  Each run is ~7 s: shorter runs measure the noise of a 2-core VM more
# than the profiler.  Also: what the BPF program itself costs per sample
# (kernel.bpf_stats_enabled), the most direct measure of marple's share.
# CALLSTACK_BENCH_PARTS picks parts (default all): slowdown bpf pipeline
# startup rss syms; e.g. CALLSTACK_BENCH_PARTS=pipeline for the capture-to-folded ratio.
set -u
T=$(mktemp -d) && trap 'rm -rf "$T"' EXIT
B="$MARPLE_BIN/workloads/burn"
R=${BURN_ROUNDS:-30000}
REPS=${BENCH_REPS:-5}
have_perf=1
perf record -e cpu-clock -g -o "$T/probe.data" -- true >/dev/null 2>&1 || have_perf=0
PARTS=${CALLSTACK_BENCH_PARTS:-all}
part() { case " $PARTS " in *" all "* | *" $1 "*) return 0 ;; esac; return 1; }
load() { cut -d ' ' -f 1 /proc/loadavg; }

# wall ms of two burns in parallel
run2() {
	s=$(date +%s%N)
	"$B" "$R" & a=$!
	"$B" "$R" & b=$!
	wait "$a" "$b"
	echo $(( ($(date +%s%N) - s) / 1000000 ))
}

# measure CONFIG: prints the wall ms; leaves $T/CONFIG.time (elapsed user sys) and outputs
measure() {
	cfg=$1
	rm -f "$T/ready"
	case "$cfg" in
	none) run2; return ;;
	marple*)
		hz=${cfg#marple}; extra=
		case "$hz" in dwarf*) hz=${hz#dwarf}; extra=--dwarf ;; esac
		MARPLE_READY_FILE="$T/ready" /usr/bin/time -f "%e %U %S" -o "$T/$cfg.time" \
			marple-callstack $extra -F "$hz" > "$T/$cfg.marple" 2>/dev/null & p=$!
		i=0; while [ ! -e "$T/ready" ] && [ $i -lt 200 ]; do sleep 0.05; i=$((i + 1)); done ;;
	perf*)
		hz=${cfg#perf}
		/usr/bin/time -f "%e %U %S" -o "$T/$cfg.time" \
			perf record -e cpu-clock -g -a -F "$hz" -o "$T/$cfg.data" >/dev/null 2>&1 & p=$!
		sleep 1 ;;
	esac
	run2
	# the profiler is the child of time(1), which ignores SIGINT
	pkill -INT -P "$p" 2>/dev/null
	wait "$p" 2>/dev/null
}

if part slowdown; then
cfgs="none marple99 marple999 marpledwarf99 marpledwarf999"
[ "$have_perf" = 1 ] && cfgs="$cfgs perf99 perf999"
for rep in $(seq "$REPS"); do
	for c in $cfgs; do
		ms=$(measure "$c")
		if [ "$c" = none ]; then
			[ -z "${worst_none:-}" ] || [ "$ms" -gt "$worst_none" ] && worst_none=$ms
		fi
		eval "prev=\${best_$c:-}"
		if [ -z "$prev" ] || [ "$ms" -lt "$prev" ]; then
			eval "best_$c=$ms"
			[ -f "$T/$c.time" ] && cp "$T/$c.time" "$T/$c.best.time"
			[ -f "$T/$c.marple" ] && cp "$T/$c.marple" "$T/$c.best.marple"
			[ -f "$T/$c.data" ] && cp "$T/$c.data" "$T/$c.best.data"
		fi
	done
done

slow() { awk -v a="$1" -v b="$best_none" 'BEGIN { printf "%.1f", (a / b - 1) * 100 }'; }
echo "bench: callstack: 2 x burn $R (both cores), no profiler: $best_none ms (best of $REPS; the runs spread $(slow "$worst_none")%: the noise floor)"
for hz in 99 999; do
	eval "m=\$best_marple$hz d=\$best_marpledwarf$hz"
	if [ "$have_perf" = 1 ]; then
		eval "p=\$best_perf$hz"
		echo "bench: callstack: slowdown at $hz Hz: marple-callstack $(slow "$m")% vs perf record -g $(slow "$p")% (floor: marple no worse than perf)"
	else
		echo "bench: callstack: slowdown at $hz Hz: marple-callstack $(slow "$m")% (perf record unavailable)"
	fi
	echo "bench: callstack: slowdown at $hz Hz with --dwarf: $(slow "$d")%"
done

# samples delivered against samples asked for, from each best run's trailer
# ("sampling": frequency x the cpu-clock time of both CPUs; the loss's causes
# are on the collector's stderr)
delivered() {
	sed -n 's/.*"sampling":{[^}]*"asked":\([0-9]*\),"delivered":\([0-9]*\),"not_counted":\([0-9]*\).*"steal_ns":\([0-9]*\).*/\2 \1 \3 \4/p' "$1" |
		awk '$2 > 0 { printf "%d of %d asked (%.1f%%; %d not aggregated, %.2f s steal)", $1, $2, 100 * $1 / $2, $3, $4 / 1e9 }'
}
for c in marple99 marple999 marpledwarf99 marpledwarf999; do
	echo "bench: callstack: samples delivered, $c: $(delivered "$T/$c.best.marple")"
done
fi

# the BPF program's own time per sample: kernel run-time statistics while
# the two burns run (a few us a sample is ~0.1-0.5% at 999 Hz)
if part bpf && [ -w /proc/sys/kernel/bpf_stats_enabled ] && command -v bpftool >/dev/null; then
	old=$(cat /proc/sys/kernel/bpf_stats_enabled)
	echo 1 > /proc/sys/kernel/bpf_stats_enabled
	"$B" 1000000000 & b1=$!; "$B" 1000000000 & b2=$!
	rm -f "$T/ready"
	MARPLE_READY_FILE="$T/ready" marple-callstack -F 999 4 > /dev/null 2>&1 & p=$!
	i=0; while [ ! -e "$T/ready" ] && [ $i -lt 200 ]; do sleep 0.05; i=$((i + 1)); done
	sleep 3
	bpftool prog show name do_sample 2>/dev/null |
		sed -n 's/.* run_time_ns \([0-9]*\) run_cnt \([0-9]*\).*/\1 \2/p' | head -n 1 > "$T/stats"
	wait "$p"
	kill "$b1" "$b2"; wait "$b1" "$b2" 2>/dev/null
	echo "$old" > /proc/sys/kernel/bpf_stats_enabled
	read -r ns cnt < "$T/stats" 2>/dev/null
	[ -n "${cnt:-}" ] && [ "$cnt" -gt 0 ] &&
		echo "bench: callstack: BPF program per sample at 999 Hz: $((ns / cnt)) ns over $cnt samples = $(awk -v n="$ns" -v c="$cnt" 'BEGIN { printf "%.2f", n / c * 999 / 1e7 }')% of a CPU"
fi

# CPU seconds from the start of a capture to a folded file: 10 s at 999 Hz of
# the whole machine while two burns run (longer captures favour marple more:
# its costs are mostly fixed, perf's grow with every sample)
# cpu_run NAME CMD...: runs CMD and leaves its CPU seconds (children included)
# in $T/NAME.cpu; perf stat's task-clock has microseconds, time(1) only 10 ms
cpu_run() {
	n=$1; shift
	if [ "$have_perf" = 1 ]; then
		perf stat -x, -e task-clock -o "$T/$n.stat" -- "$@"
		awk -F, '$3 == "task-clock" { printf "%.4f", $1 / 1000 }' "$T/$n.stat" > "$T/$n.cpu"
	else
		/usr/bin/time -f "%U %S" -o "$T/$n.time" "$@"
		tail -n 1 "$T/$n.time" | awk '{ printf "%.4f", $(NF - 1) + $NF }' > "$T/$n.cpu"
	fi
}
cpu_of() { cat "$T/$1.cpu"; }
fold_cpu() {	# fold_cpu INPUT -> CPU seconds of marple-fold on it
	cpu_run fold marple-fold "$1" > "$T/folded" 2>/dev/null
	cpu_of fold
}
CAP=${CAPTURE_SECONDS:-10}
burn_for() { "$B" 1000000000 & b1=$!; "$B" 1000000000 & b2=$!; }
if part pipeline; then
l0=$(load)
burn_for
cpu_run mc marple-callstack -F 999 "$CAP" > "$T/mc.marple" 2>/dev/null
kill "$b1" "$b2"; wait "$b1" "$b2" 2>/dev/null
mc=$(cpu_of mc); mf=$(fold_cpu "$T/mc.marple")
marple_total=$(awk -v a="$mc" -v b="$mf" 'BEGIN { printf "%.4f", a + b }')
fi
if part pipeline && part dwarf; then
burn_for
cpu_run dc marple-callstack --dwarf -F 999 "$CAP" > "$T/dc.marple" 2>/dev/null
kill "$b1" "$b2"; wait "$b1" "$b2" 2>/dev/null
echo "bench: callstack: --dwarf, $CAP s at 999 Hz: marple-callstack used $(cpu_of dc) CPU s (frame pointers: $mc s); unwinding $(sed -n 's/.*"unwind":{[^}]*"us":\([0-9]*\).*/\1/p' "$T/dc.marple") us in all"
fi
if ! part pipeline; then
	:
elif [ "$have_perf" = 1 ]; then
	burn_for
	cpu_run pr perf record -e cpu-clock -g -a -F 999 -o "$T/p.data" -- sleep "$CAP" >/dev/null 2>&1
	kill "$b1" "$b2"; wait "$b1" "$b2" 2>/dev/null
	pc=$(cpu_of pr)
	cpu_run script perf script -i "$T/p.data" > "$T/perf.txt" 2>/dev/null
	ps=$(cpu_of script)
	pf=$(fold_cpu "$T/perf.txt")
	perf_total=$(awk -v a="$pc" -v b="$ps" -v c="$pf" 'BEGIN { printf "%.4f", a + b + c }')
	echo "bench: callstack: CPU s from capture to folded file ($CAP s at 999 Hz, whole machine): marple $marple_total (callstack $mc + fold $mf) vs perf $perf_total (record $pc + script $ps + fold $pf): ratio $(awk -v a="$marple_total" -v b="$perf_total" 'BEGIN { printf "%.3f", (b > 0 ? a / b : 0) }') (floor: at most 0.1; load $l0 -> $(load))"
else
	echo "bench: callstack: CPU s from capture to folded file ($CAP s at 999 Hz): marple $marple_total (perf record unavailable)"
fi

# start-up: the CPU of a 0.1 s capture of the whole machine at 999 Hz
# (mostly what comes before the first sample: the verifier's load of the
# sampling program, the maps, the kernel's BTF), the median of 5 runs,
# beside perf record -g's; BASE_BIN=DIR: another build's (main's) in the
# same rounds, interleaved.  The trailer says what the verifier walked.
median() { sort -n | awk '{ v[NR] = $1 } END { if (NR) print v[int((NR + 1) / 2)] }'; }
if part startup; then
	l0=$(load)
	: > "$T/su.list"; : > "$T/sb.list"; : > "$T/sp.list"; : > "$T/su.walkers"
	for rep in 1 2 3 4 5; do
		cpu_run su marple-callstack -F 999 0.1 > "$T/su.marple" 2>/dev/null
		awk '{ printf "%.1f\n", $1 * 1000 }' "$T/su.cpu" >> "$T/su.list"
		tail -n 1 "$T/su.marple" | grep -o '"program_verified_insns":[0-9]*' |
			tr '\n' ' ' >> "$T/su.walkers"
		echo >> "$T/su.walkers"
		if [ -n "${BASE_BIN:-}" ]; then
			cpu_run sb "$BASE_BIN/marple-callstack" -F 999 0.1 > /dev/null 2>&1
			awk '{ printf "%.1f\n", $1 * 1000 }' "$T/sb.cpu" >> "$T/sb.list"
		fi
		if [ "$have_perf" = 1 ]; then
			cpu_run sp perf record -e cpu-clock -g -a -F 999 -o "$T/su.data" -- sleep 0.1 > /dev/null 2>&1
			awk '{ printf "%.1f\n", $1 * 1000 }' "$T/sp.cpu" >> "$T/sp.list"
		fi
	done
	base=; [ -n "${BASE_BIN:-}" ] && base=" (BASE_BIN's $(median < "$T/sb.list") ms)"
	echo "bench: callstack: start-up, CPU ms of a 0.1 s capture (median of 5): marple-callstack $(median < "$T/su.list")$base vs perf record -g $(median < "$T/sp.list") (load $l0 -> $(load)); marple's runs: $(sort "$T/su.walkers" | uniq -c | tr -s ' \n' ' ')"
fi

# resident memory of a 1 s capture of the whole machine, 5 runs (the floor
# holds in every one; what the peak holds follows what ran), BASE_BIN's in
# the same rounds, interleaved, beside perf's
rss_mb() {
	/usr/bin/time -f '%M' -o "$T/rss" "$@" > /dev/null 2>&1
	awk '{ kb = $1 } END { printf "%.0f\n", kb / 1024 }' "$T/rss"
}
if part rss; then
	l0=$(load)
	: > "$T/rm.list"; : > "$T/rb.list"
	for rep in 1 2 3 4 5; do
		rss_mb marple-callstack 1 >> "$T/rm.list"
		if [ -n "${BASE_BIN:-}" ]; then
			rss_mb "$BASE_BIN/marple-callstack" 1 >> "$T/rb.list"
		fi
	done
	m="$(sort -n "$T/rm.list" | tr '\n' ' ')(max $(sort -n "$T/rm.list" | tail -n 1))"
	base=; [ -n "${BASE_BIN:-}" ] && base=" (BASE_BIN's $(sort -n "$T/rb.list" | tr '\n' ' ')MB)"
	p="unavailable"
	[ "$have_perf" = 1 ] && p="$(rss_mb perf record -e cpu-clock -g -a -F 99 -o "$T/rss.data" -- sleep 1) MB"
	echo "bench: callstack: max RSS of a 1 s capture, 5 runs: marple-callstack 1 $m MB$base vs perf record -g $p (floor: marple <= 64 MB every run; load $l0 -> $(load))"
fi

# symbolization: 10,000 unique 16-frame stacks (user + kernel) from a fresh cache
part syms || exit 0
ms=$("$MARPLE_BIN/tests/test_syms" | sed -n 's/^# 10000 stacks symbolized in \(.*\) ms/\1/p')
echo "bench: callstack: symbolizing 10000 unique stacks: ${ms:-?} ms (floor: well under 1000 ms)"
