# callstack-bpf.sh — what the sampling program costs in the kernel, per
# sample, beside bpftrace's frame-pointer profile doing the same work
# (profile:hz:499 { @[kstack, ustack] = count(); }), on one load, one
# profiler after another, interleaved for BPF_REPS rounds (median of each),
# then at once (bpftrace running through each marple capture, the ratio of
# each round read over one window of load):
#   bpftrace                              the anchor (bpftrace from Debian)
#   marple-callstack --unwind fp --no-python   floor: <= 1.0x bpftrace
#   marple-callstack (tables + Python)         floor: <= 1.5x bpftrace
# The time is the kernel's BPF run-time statistics
# (kernel.bpf_stats_enabled: run_time_ns / run_cnt of the program): marple's
# trailer gives them (sampling.program_ns, program_runs) with where they went
# (sampling.stages: ns a timed sample in each stage; the table walk's ns a
# frame from the user walk and unwind.stacks and frames, which the depth of
# what else the machine runs does not move), bpftrace's are read
# with bpftool while it runs.  The load: a build (cc -O2 of lib/collect's
# sources, one at a time: short-lived non-Python processes, deep stacks in
# cc1) beside a frame-pointer burn, system-wide at 499 Hz, BPF_SECS a run.
# BPF_BASE=DIR: DIR's marple-callstack (another build: main's) runs in the
# same rounds too, its medians printed beside, for an A/B of a change; then
# both alternated on two burns alone, BPF_AB_ROUNDS (5) times: the steadier
# comparison.
set -u
load=
T=$(mktemp -d) && trap 'kill $load 2>/dev/null; rm -rf "$T"' EXIT
REPS=${BPF_REPS:-3}
BASE=${BPF_BASE:-}
SECS=${BPF_SECS:-4}
B="$MARPLE_BIN/workloads/burn"
[ -w /proc/sys/kernel/bpf_stats_enabled ] || { echo "bench: callstack-bpf: needs root (kernel.bpf_stats_enabled)"; exit 0; }
have_bt=0
command -v bpftrace >/dev/null 2>&1 && command -v bpftool >/dev/null 2>&1 && have_bt=1
old=$(cat /proc/sys/kernel/bpf_stats_enabled)

# the load, until the end of the bench
build_loop() {
	while :; do
		for f in "$MARPLE_TOP"/lib/collect/*.c; do
			cc -O2 -I"$MARPLE_TOP/lib/format" -I"$MARPLE_TOP/lib/collect" -I"$MARPLE_BIN" -I"$MARPLE_BIN/bpf" \
				-I"$MARPLE_TOP/bpf" -c "$f" -o "$T/build.o" 2>/dev/null
		done
	done
}
build_loop & load=$!
"$B" 1000000000 & load="$load $!"

# marple_run CONFIG PROGRAM ARGS...: one capture; appends "ns runs stages...
# stacks frames" to $T/CONFIG (the table walk's stacks and frames: 0 with fp)
marple_run() {
	cfg=$1 prog=$2; shift 2
	cut -d' ' -f1 /proc/loadavg >> "$T/load"
	echo 1 > /proc/sys/kernel/bpf_stats_enabled
	"$prog" -F 499 "$@" "$SECS" > "$T/out" 2>/dev/null
	tail -n 1 "$T/out" | tr ',{}' '\n\n\n' | awk -F: '
		{ gsub(/"/, "", $1); v[$1] = $2 }
		END { printf "%s %s %s %s %s %s %s %s %d %d\n", v["program_ns"], v["program_runs"], v["kernel_stack_ns"],
			v["user_walk_ns"], v["runtime_check_ns"], v["store_ns"], v["process_news_ns"], v["counts_ns"],
			v["stacks"], v["frames_by_table"] + v["frames_by_frame_pointer"] }' >> "$T/$cfg"
}

# the programs loaded, one a line: "id name run_time_ns run_cnt"
progs() {
	bpftool -j prog show 2>/dev/null | sed 's/},{"id"/}\n{"id"/g' |
		sed -n 's/.*"id":\([0-9]*\),"type":"[^"]*","name":"\([^"]*\)".*"run_time_ns":\([0-9]*\),"run_cnt":\([0-9]*\).*/\1 \2 \3 \4/p'
}

# bpftrace's profile program (bpftool shows no owner here: the one named
# 499 loaded after it started): bt_start starts it and waits for its
# program, bt_stats prints its "ns runs" so far, bt_stop ends it
bt_start() {
	echo 1 > /proc/sys/kernel/bpf_stats_enabled
	first=$(progs | awk 'BEGIN { m = 0 } $1 > m { m = $1 } END { print m }')
	bpftrace -e 'profile:hz:499 { @[kstack, ustack] = count(); }' > /dev/null 2>&1 & bt=$!
	# it compiles its program first (seconds on a busy machine)
	i=0; while [ $i -lt 60 ] && ! progs | awk -v f="$first" '$1 > f && $2 == "499" { ok = 1 } END { exit !ok }'; do
		sleep 0.5; i=$((i + 1)); done
}
bt_stats() { progs | awk -v f="$first" '$1 > f && $2 == "499" { print $3, $4; exit }'; }
bt_stop() {
	# an INT while it still loads its program (a busy machine) may go
	# unheeded: one run waited 13 minutes; TERM after 10 s
	kill -INT "$bt"
	i=0; while [ $i -lt 20 ] && kill -0 "$bt" 2>/dev/null; do sleep 0.5; i=$((i + 1)); done
	kill -TERM "$bt" 2>/dev/null; wait "$bt" 2>/dev/null
}
# one bpftrace run alone: appends "ns runs" to $T/bpftrace
bpftrace_run() {
	cut -d' ' -f1 /proc/loadavg >> "$T/load"
	bt_start
	sleep "$SECS"
	bt_stats >> "$T/bpftrace"
	bt_stop
}

# At once: bpftrace running through each marple capture, its program's
# statistics read before and after it, so that each ratio comes from one
# window of load (the rounds above, one profiler after another, move by
# up to 1.5x between themselves).  Appends "ratio" to $T/once-CONFIG and
# bpftrace's ns a sample to $T/once-bt.
at_once() {
	bt_start
	for r in $(seq "$REPS"); do
		for cfg in fp default; do
			s0=$(bt_stats)
			args=; [ "$cfg" = fp ] && args="--unwind fp --no-python"
			# shellcheck disable=SC2086
			marple-callstack -F 499 $args "$SECS" > "$T/out" 2>/dev/null
			s1=$(bt_stats)
			m=$(tail -n 1 "$T/out" | tr ',{}' '\n\n\n' | awk -F: '{ gsub(/"/, "", $1); v[$1] = $2 }
				END { printf "%s %s", v["program_ns"], v["program_runs"] }')
			echo "$s0 $s1 $m" | awk -v once="$T/once-$cfg" -v bts="$T/once-bt" \
				'$4 > $2 && $6 > 0 { b = ($3 - $1) / ($4 - $2); print ($5 / $6) / b >> once; printf "%.0f\n", b >> bts }'
		done
	done
	bt_stop
}

base_runs() {
	marple_run base-fp "$BASE/marple-callstack" --unwind fp --no-python
	marple_run base-default "$BASE/marple-callstack"
}
for r in $(seq "$REPS"); do
	[ "$have_bt" = 1 ] && bpftrace_run
	# with a base, which goes first alternates round by round
	[ -n "$BASE" ] && [ $((r % 2)) = 0 ] && base_runs
	marple_run fp marple-callstack --unwind fp --no-python
	marple_run default marple-callstack
	[ -n "$BASE" ] && [ $((r % 2)) = 1 ] && base_runs
done
[ "$have_bt" = 1 ] && at_once

# With a base, a steadier A/B than the build load gives (whose stacks and
# processes change from run to run): the build stopped, two frame-pointer
# burns (one a CPU, every sample theirs), each build's BPF time a sample of
# the whole machine, the two alternated BPF_AB_ROUNDS times; appends "ns"
# to $T/ab-CONFIG
ab_run() {
	cfg=$1 prog=$2; shift 2
	"$prog" -F 999 "$@" 2 2>/dev/null | tail -n 1 | tr ',{}' '\n\n\n' |
		awk -F: '{ gsub(/"/, "", $1); v[$1] = $2 } END { if (v["program_runs"] > 0) printf "%.0f\n", v["program_ns"] / v["program_runs"] }' >> "$T/ab-$cfg"
}
if [ -n "$BASE" ]; then
	kill $load 2>/dev/null; wait $load 2>/dev/null
	"$B" 1000000000 & load=$!; "$B" 1000000000 & load="$load $!"
	echo 1 > /proc/sys/kernel/bpf_stats_enabled
	for r in $(seq "${BPF_AB_ROUNDS:-5}"); do
		for cfg in fp default; do
			args=; [ "$cfg" = fp ] && args="--unwind fp --no-python"
			# shellcheck disable=SC2086
			ab_run "$cfg" marple-callstack $args
			# shellcheck disable=SC2086
			ab_run "base-$cfg" "$BASE/marple-callstack" $args
		done
	done
fi
echo "$old" > /proc/sys/kernel/bpf_stats_enabled

# median ns a sample of a config's runs
per_sample() {
	[ -s "$T/$1" ] || return
	awk '$2 > 0 { print $1 / $2 }' "$T/$1" | sort -n | awk '{ v[NR] = $1 } END { if (NR) printf "%.0f", v[int((NR + 1) / 2)] }'
}
# the mean of each stage; with the table walk, its time a frame too (the
# user walk a stack over the frames a stack: the stacks' depth, which moves
# with what else the machine runs, left out)
stages() {
	awk '{ k += $3; u += $4; r += $5; s += $6; p += $7; c += $8; n++ }
		$9 > 0 && $10 > 0 { f += $4 / ($10 / $9); d += $10 / $9; nf++ }
		END { if (n) printf "kernel stack %.0f, user walk %.0f, runtime check %.0f, store %.0f, process news %.0f, counts %.0f ns", k / n, u / n, r / n, s / n, p / n, c / n
		      if (nf) printf "; the table walk %.0f ns a frame, %.1f frames a stack", f / nf, d / nf }' "$T/$1"
}
bt=$(per_sample bpftrace); fp=$(per_sample fp); def=$(per_sample default)
echo "bench: callstack-bpf: load (1-minute average) at the runs' starts: $(sort -n "$T/load" | sed -n '1p;$p' | paste -sd-)"
ratio() { [ -n "$bt" ] && awk -v a="$1" -v b="$bt" 'BEGIN { printf " = %.2fx bpftrace", a / b }'; }
if [ -n "$bt" ]; then
	echo "bench: callstack-bpf: BPF time a sample, bpftrace profile:hz:499 kstack+ustack: $bt ns (median of $REPS; the anchor)"
else
	echo "bench: callstack-bpf: bpftrace not installed (the anchor is missing)"
fi
echo "bench: callstack-bpf: BPF time a sample, marple-callstack --unwind fp --no-python: $fp ns$(ratio "$fp") (floor: <= 1.0x)"
echo "bench: callstack-bpf: BPF time a sample, marple-callstack (tables + Python): $def ns$(ratio "$def") (floor: <= 1.5x)"
echo "bench: callstack-bpf: stages a timed sample, --unwind fp --no-python: $(stages fp)"
echo "bench: callstack-bpf: stages a timed sample, default: $(stages default)"
if [ -n "$BASE" ]; then
	bfp=$(per_sample base-fp); bdef=$(per_sample base-default)
	echo "bench: callstack-bpf: $BASE's marple-callstack in the same rounds: --unwind fp --no-python $bfp ns$(ratio "$bfp"), default $bdef ns$(ratio "$bdef")"
	echo "bench: callstack-bpf: stages a timed sample, $BASE's --unwind fp --no-python: $(stages base-fp)"
	echo "bench: callstack-bpf: stages a timed sample, $BASE's default: $(stages base-default)"
fi
# the median of a file of numbers, one a line
median_of() { sort -n "$1" | awk '{ v[NR] = $1 } END { if (NR) printf "%.2f", v[int((NR + 1) / 2)] }'; }
rounds_of() { tr '\n' ' ' < "$1" | sed 's/ $//'; }
if [ -s "$T/ab-fp" ] && [ -s "$T/ab-base-fp" ]; then
	echo "bench: callstack-bpf: two burns, alternated with $BASE's: --unwind fp --no-python $(median_of "$T/ab-fp" | cut -d. -f1) ns a sample ($(rounds_of "$T/ab-fp")) against $(median_of "$T/ab-base-fp" | cut -d. -f1) ($(rounds_of "$T/ab-base-fp")); default $(median_of "$T/ab-default" | cut -d. -f1) ($(rounds_of "$T/ab-default")) against $(median_of "$T/ab-base-default" | cut -d. -f1) ($(rounds_of "$T/ab-base-default"))"
fi
if [ -s "$T/once-fp" ] && [ -s "$T/once-default" ]; then
	echo "bench: callstack-bpf: at once (bpftrace running through each capture, each ratio from one window): --unwind fp --no-python $(median_of "$T/once-fp")x bpftrace (rounds: $(sort -n "$T/once-fp" | awk '{ printf "%s%.2f", (NR > 1 ? " " : ""), $1 }')), default $(median_of "$T/once-default")x ($(sort -n "$T/once-default" | awk '{ printf "%s%.2f", (NR > 1 ? " " : ""), $1 }')); bpftrace $(sort -n "$T/once-bt" | sed -n '1p;$p' | paste -sd-) ns a sample"
fi
