# interpbench.sh — sourced by the benchmarks of an interpreter's frames in
# marple-callstack's stacks (php.sh, perl.sh): the workload run and
# captured, and the cost of its frames against --no-python's.
#
#   T=$(mktemp -d) ...; NAME=php; INTERP=/usr/bin/php8.2; F=$T/work.php
#   . "$MARPLE_TOP/tests/bench/lib/interpbench.sh"
#   interp_run chain 5 "" -F 499         -- $T/chain.out, .err, .time
#   interp_shares chain CHAIN_RE RIGHT_RE -- prints the chain's and lines' shares
#   interp_costs chain 6 3                -- prints the cost runs' lines
#   interp_costs_at_once chain 6 3        -- the same, both collectors at once
# The workload is run as: INTERP F SECONDS MODE READY_FILE.

# interp_start MODE SECS: the workload in MODE started (its pid in _pid), for
# SECS seconds and a minute more, once its loop runs
interp_start() {
	rm -f "$T/ready"
	nice -n "${PRIO:-0}" "$INTERP" "$F" $(($2 + 60)) "$1" "$T/ready" & _pid=$!
	_i=0; while [ ! -e "$T/ready" ] && [ $_i -lt 300 ]; do sleep 0.1; _i=$((_i + 1)); done
}

# interp_capture NAME SECS [collector options...]: the workload _pid captured
# for SECS seconds into $T/NAME.out (its CPU time in .time)
interp_capture() {
	_name=$1 _secs=$2; shift 2
	/usr/bin/python3 "$MARPLE_TOP/tests/bench/cputime.py" "$T/$_name.time" marple-callstack -p "$_pid" "$@" "$_secs" \
		> "$T/$_name.out" 2> "$T/$_name.err"
}

# interp_run MODE SECS SUFFIX [collector options...]: the workload in MODE,
# captured for SECS seconds into $T/MODE SUFFIX.out (its CPU time in .time)
interp_run() {
	_m=$1 _secs=$2 _suffix=$3; shift 3
	interp_start "$_m" "$_secs"
	interp_capture "$_m$_suffix" "$_secs" "$@"
	kill "$_pid" 2>/dev/null; wait "$_pid" 2>/dev/null
}

trailer_num() {
	sed -n "s/.*\"trailer\":1.*\"$2\":\([0-9.]*\).*/\1/p" "$1" | head -n 1
}

# interp_cost OUT TIME: "samples bpf_ns_a_sample collector_ns_a_sample
# collector_ns_a_sample_after_start-up start-up_ms"
interp_cost() {
	read -r _u _s _st < "$2"
	_n=$(trailer_num "$1" samples); _p=$(trailer_num "$1" program_ns)
	awk -v u="$_u" -v s="$_s" -v st="${_st:-0}" -v n="${_n:-0}" -v p="${_p:-0}" 'BEGIN {
		if (n > 0) printf "%d %.0f %.0f %.0f %.0f\n", n, p / n, (u + s) * 1e9 / n, (u + s - st) * 1e9 / n, st * 1e3
		else print "0 0 0 0 0" }'
}

# interp_ratio A B: A / B to two places (0 when B is 0)
interp_ratio() {
	awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", b ? a / b : 0 }'
}

# interp_costs MODE SECS RUNS: RUNS times, MODE captured SECS s at -F 999
# with the interpreter's frames and with --no-python: BPF run time and the
# collector's CPU (start-up included) a sample, the ratio of their sums
# (floor 1.3x), the walks' own BPF time a sample; the start-up apart, and
# the ratio after it.  Then the runs' costs pooled (the mean cost a sample
# with, over the mean without), whole and after start-up: one run's pair
# can meet a slow native walk on one side only (1.8-3.6 us here, in either
# mode)
interp_costs() {
	_r=1 _with=0 _without=0 _with_after=0 _without_after=0
	while [ $_r -le "$3" ]; do
		PRIO=-20 interp_run "$1" "$2" .cost -F 999
		PRIO=-20 interp_run "$1" "$2" .native -F 999 --no-python
		set -- "$1" "$2" "$3" $(interp_cost "$T/$1.cost.out" "$T/$1.cost.time") \
			$(interp_cost "$T/$1.native.out" "$T/$1.native.time")
		_walked=$(trailer_num "$T/$1.cost.out" stacks_walked)
		_walk=$(awk -v w="$(trailer_num "$T/$1.cost.out" walk_ns)" -v n="${_walked:-0}" 'BEGIN { printf "%.0f", n ? w / n : 0 }')
		_ratio=$(interp_ratio $(($5 + $6)) $((${10} + ${11})))
		_after=$(interp_ratio $(($5 + $7)) $((${10} + ${12})))
		echo "bench: $NAME: cost run $_r: with its frames $4 samples, BPF $5 ns + collector $6 ns a sample (walk $_walk ns of it); --no-python $9 samples, BPF ${10} ns + collector ${11} ns; whole ${_ratio}x (floor: 1.3x)"
		echo "bench: $NAME: cost run $_r: collector start-up $8 ms with its frames, ${13} ms without; after it, BPF + collector a sample $(($5 + $7)) ns with, $((${10} + ${12})) ns without: ${_after}x"
		_with=$((_with + $5 + $6)) _without=$((_without + ${10} + ${11}))
		_with_after=$((_with_after + $5 + $7)) _without_after=$((_without_after + ${10} + ${12}))
		_r=$((_r + 1))
	done
	echo "bench: $NAME: the $3 cost runs pooled: $((_with / $3)) ns a sample with its frames, $((_without / $3)) ns without: $(interp_ratio $_with $_without)x (floor: 1.3x); after start-up (a long capture's) $((_with_after / $3)) ns, $((_without_after / $3)) ns: $(interp_ratio $_with_after $_without_after)x"
	grep -o '"interpreters":{[^}]*}' "$T/$1.cost.out" | head -n 1 | sed "s/^/bench: $NAME: trailer: /"
	# the part of the start-up that load does not move: the kernel's
	# checking of the sampling program, with the walk of this process's
	# interpreter (pyframes_walks_for) and without
	echo "bench: $NAME: sampling program verified in $(trailer_num "$T/$1.cost.out" program_verified_insns) instructions with its frames, $(trailer_num "$T/$1.native.out" program_verified_insns) without"
}

# interp_costs_at_once MODE SECS RUNS: as interp_costs, both collectors
# capturing one workload at the same time, each sampling it at 999 Hz: the
# machine's moments (a slow native walk, the host's neighbours) fall on
# both alike, where a pair taken one after the other can meet them on one
# side only (one pair of Ruby's chain went 1.05x to 1.59x on one build)
interp_costs_at_once() {
	_r=1 _with=0 _without=0 _with_after=0 _without_after=0
	while [ $_r -le "$3" ]; do
		PRIO=-20 interp_start "$1" "$2"
		interp_capture "$1.both" "$2" -F 999 & _cost=$!
		interp_capture "$1.both.native" "$2" -F 999 --no-python
		wait "$_cost"
		kill "$_pid" 2>/dev/null; wait "$_pid" 2>/dev/null
		set -- "$1" "$2" "$3" $(interp_cost "$T/$1.both.out" "$T/$1.both.time") \
			$(interp_cost "$T/$1.both.native.out" "$T/$1.both.native.time")
		echo "bench: $NAME: at once, run $_r: with its frames BPF $5 ns + collector $6 ns a sample, --no-python BPF ${10} ns + collector ${11} ns: whole $(interp_ratio $(($5 + $6)) $((${10} + ${11})))x; after start-up $(($5 + $7)) ns against $((${10} + ${12})): $(interp_ratio $(($5 + $7)) $((${10} + ${12})))x"
		_with=$((_with + $5 + $6)) _without=$((_without + ${10} + ${11}))
		_with_after=$((_with_after + $5 + $7)) _without_after=$((_without_after + ${10} + ${12}))
		_r=$((_r + 1))
	done
	echo "bench: $NAME: at once, the $3 runs pooled: $((_with / $3)) ns a sample with its frames, $((_without / $3)) ns without: $(interp_ratio $_with $_without)x (floor: 1.3x); after start-up $((_with_after / $3)) ns, $((_without_after / $3)) ns: $(interp_ratio $_with_after $_without_after)x"
}

# interp_shares MODE CHAIN RIGHT: $T/MODE.out's share of samples whose
# frames match the awk regex CHAIN; of its script frames (those written
# "name (file...)") with a line, the share RIGHT matches (a frame at a line
# it can be at); and the share of those without a line
interp_shares() {
	awk -v re="$2" -v right="$3" -v m="$1" -v name="$NAME" 'index($0, "#") && substr($0, 1, 1) != "{" {
		n = substr($0, 1, index($0, "#") - 1); s = substr($0, index($0, "#") + 1)
		gsub(/#[0-9a-f]+;/, ";", s); sub(/#[0-9a-f]+$/, "", s)
		total += n; if (s ~ re) hit += n
		k = split(s, fr, ";")
		for (i = 1; i <= k; i++) {
			if (fr[i] !~ /[ ][(][^)]*[)]$/) continue
			frames += n
			if (fr[i] !~ /:[0-9]+[)]$/) { noline += n; continue }
			lined += n
			if (fr[i] ~ right) good += n
		}
	}
	END { printf "bench: %s: %s: %.1f%% of %d samples carry the chain with file:line and _start (floor: 95%%); %.2f%% of %d frames with a line at a right one (floor: 99%%); %.2f%% of %d without a line\n",
		name, m, total ? 100 * hit / total : 0, total, lined ? 100 * good / lined : 0, lined, frames ? 100 * noline / frames : 0, frames }' "$T/$1.out"
}
