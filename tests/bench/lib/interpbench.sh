# interpbench.sh — sourced by the benchmarks of an interpreter's frames in
# marple-callstack's stacks (php.sh, perl.sh): the workload run and
# captured, and the cost of its frames against --no-python's.
#
#   T=$(mktemp -d) ...; NAME=php; INTERP=/usr/bin/php8.2; F=$T/work.php
#   . "$MARPLE_TOP/tests/bench/lib/interpbench.sh"
#   interp_run chain 5 "" -F 499         -- $T/chain.out, .err, .time
#   interp_shares chain CHAIN_RE RIGHT_RE -- prints the chain's and lines' shares
#   interp_costs chain 6 3                -- prints the cost runs' lines
#   interp_costs chain 6 3 together       -- the same, both collectors at once
# The workload is run as: INTERP F SECONDS MODE READY_FILE.

# interp_start MODE SECS: the workload in MODE started (its pid in _pid), for
# SECS seconds and a minute more, once its loop runs
interp_start() {
	rm -f "$T/ready"
	nice -n "${PRIO:-0}" "$INTERP" "$F" $(($2 + 60)) "$1" "$T/ready" & _pid=$!
	_i=0; while [ ! -e "$T/ready" ] && [ $_i -lt 300 ]; do sleep 0.1; _i=$((_i + 1)); done
}

# interp_capture NAME SECS [collector options...]: the workload _pid captured
# for SECS seconds into $T/NAME.out (its CPU time in .time, and at half a
# second before the capture's end: cputime.py's CPUTIME_MARK)
interp_capture() {
	_name=$1 _secs=$2; shift 2
	CPUTIME_MARK=$(awk -v s="$_secs" 'BEGIN { print s - 0.5 }') /usr/bin/python3 "$MARPLE_TOP/tests/bench/cputime.py" "$T/$_name.time" marple-callstack -p "$_pid" "$@" "$_secs" \
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

# interp_cost OUT TIME SECS: "samples bpf_ns_a_sample collector_ns_a_sample
# collector_ns_a_sample_after_start-up start-up_ms
# collector_ns_a_sample_while_sampling" (the last from the start-up's end to
# half a second before the capture's: neither the start-up nor the end's
# naming and output, what each sample more of a long capture costs)
interp_cost() {
	read -r _u _s _st _mk < "$2"
	_n=$(trailer_num "$1" samples); _p=$(trailer_num "$1" program_ns)
	awk -v u="$_u" -v s="$_s" -v st="${_st:-0}" -v mk="${_mk:-0}" -v secs="$3" -v n="${_n:-0}" -v p="${_p:-0}" 'BEGIN {
		w = n * (secs - 0.5) / secs
		if (n > 0) printf "%d %.0f %.0f %.0f %.0f %.0f\n", n, p / n, (u + s) * 1e9 / n, (u + s - st) * 1e9 / n, st * 1e3,
			(mk > st && w > 0 ? (mk - st) * 1e9 / w : 0)
		else print "0 0 0 0 0 0" }'
}

# interp_ratio A B: A / B to two places (0 when B is 0)
interp_ratio() {
	awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", b ? a / b : 0 }'
}

# interp_pair MODE SECS [together]: MODE captured SECS s at -F 999 with the
# interpreter's frames ($T/MODE.cost.*) and with --no-python
# ($T/MODE.native.*): one after the other, or both capturing one workload at
# the same time ("together")
interp_pair() {
	if [ "${3:-}" != together ]; then
		PRIO=-20 interp_run "$1" "$2" .cost -F 999
		PRIO=-20 interp_run "$1" "$2" .native -F 999 --no-python
		return
	fi
	PRIO=-20 interp_start "$1" "$2"
	interp_capture "$1.cost" "$2" -F 999 & _cost=$!
	interp_capture "$1.native" "$2" -F 999 --no-python
	wait "$_cost"
	kill "$_pid" 2>/dev/null; wait "$_pid" 2>/dev/null
}

# interp_costs MODE SECS RUNS [together]: RUNS pairs (interp_pair): BPF run
# time and the collector's CPU (start-up included) a sample, the ratio of
# their sums (floor 1.3x), the walks' own BPF time a sample; the start-up
# apart, and the ratio after it (the end's work in it); the ratio while
# sampling (neither, interp_cost).  Then the runs' costs pooled (the mean
# cost a sample with, over the mean without), each of the three ways:
# one run's pair can meet a slow native walk on one side only (1.8-3.6 us
# here, in either mode).  Together, the machine's moments (a slow native
# walk, the host's neighbours) fall on both alike: one pair of Ruby's
# chain one after the other went 1.05x to 1.59x on one build.
interp_costs() {
	_mode=$1 _len=$2 _runs=$3 _together=${4:-}
	_r=1 _with=0 _without=0 _with_after=0 _without_after=0 _with_long=0 _without_long=0
	_how=${_together:+at once, }
	while [ $_r -le "$_runs" ]; do
		interp_pair "$_mode" "$_len" "$_together"
		# samples, BPF, collector, after start-up, start-up, while sampling: with, then without
		set -- $(interp_cost "$T/$_mode.cost.out" "$T/$_mode.cost.time" "$_len") \
			$(interp_cost "$T/$_mode.native.out" "$T/$_mode.native.time" "$_len")
		_walked=$(trailer_num "$T/$_mode.cost.out" walks_timed)
		_walk=$(awk -v w="$(trailer_num "$T/$_mode.cost.out" walk_ns)" -v n="${_walked:-0}" 'BEGIN { printf "%.0f", n ? w / n : 0 }')
		echo "bench: $NAME: ${_how}cost run $_r: with its frames $1 samples, BPF $2 ns + collector $3 ns a sample (walk $_walk ns of it); --no-python $7 samples, BPF $8 ns + collector $9 ns; whole $(interp_ratio $(($2 + $3)) $(($8 + $9)))x (floor: 1.3x)"
		echo "bench: $NAME: ${_how}cost run $_r: collector start-up $5 ms with its frames, ${11} ms without; after it, BPF + collector a sample $(($2 + $4)) ns with, $(($8 + ${10})) ns without: $(interp_ratio $(($2 + $4)) $(($8 + ${10})))x; while sampling (a long capture's) $(($2 + $6)) ns, $(($8 + ${12})) ns: $(interp_ratio $(($2 + $6)) $(($8 + ${12})))x"
		_with=$((_with + $2 + $3)) _without=$((_without + $8 + $9))
		_with_after=$((_with_after + $2 + $4)) _without_after=$((_without_after + $8 + ${10}))
		_with_long=$((_with_long + $2 + $6)) _without_long=$((_without_long + $8 + ${12}))
		_r=$((_r + 1))
	done
	echo "bench: $NAME: ${_how}the $_runs cost runs pooled: $((_with / _runs)) ns a sample with its frames, $((_without / _runs)) ns without: $(interp_ratio $_with $_without)x (floor: 1.3x); after start-up $((_with_after / _runs)) ns, $((_without_after / _runs)) ns: $(interp_ratio $_with_after $_without_after)x; while sampling (a long capture's) $((_with_long / _runs)) ns, $((_without_long / _runs)) ns: $(interp_ratio $_with_long $_without_long)x"
	[ -z "$_together" ] || return 0
	grep -o '"interpreters":{[^}]*}' "$T/$_mode.cost.out" | head -n 1 | sed "s/^/bench: $NAME: trailer: /"
	# the part of the start-up that load does not move: the kernel's
	# checking of the sampling program, with the walk of this process's
	# interpreter (pyframes_walks_for) and without
	echo "bench: $NAME: sampling program verified in $(trailer_num "$T/$_mode.cost.out" program_verified_insns) instructions with its frames, $(trailer_num "$T/$_mode.native.out" program_verified_insns) without"
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
