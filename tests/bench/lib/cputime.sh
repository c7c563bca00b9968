# cputime.sh — sourced by the benchmarks that set a program's CPU time beside
# an anchor's (wc -l on the same input): on a shared 2-core machine the wall
# clock measures the neighbours, the CPU time the program.
#
#   T=$(mktemp -d) ...                    -- the benchmark's directory
#   . "$MARPLE_TOP/tests/bench/lib/cputime.sh"
#   ms=$(cpu_ms marple-fold "$f")          -- best of CPU_REPS runs, in ms
#   echo "$(cpu_ratio "$ms" "$(cpu_ms wc -l "$f")")x"
# Each run through tests/bench/cputime.py (user + system, to the microsecond).
CPU_REPS=${CPU_REPS:-5}
_cpu_tmp="$T/cputime"

# cpu_ms CMD...: the least CPU time (user + system, ms) of CPU_REPS runs of
# CMD, its output thrown away
cpu_ms() {
	_best=
	_i=0
	while [ "$_i" -lt "$CPU_REPS" ]; do
		python3 "$MARPLE_TOP/tests/bench/cputime.py" "$_cpu_tmp" "$@" > /dev/null 2>&1
		_ms=$(awk '{ printf "%.1f", ($1 + $2) * 1000 }' "$_cpu_tmp")
		_best=$(awk -v a="$_ms" -v b="$_best" 'BEGIN { print (b == "" || a + 0 < b + 0) ? a : b }')
		_i=$((_i + 1))
	done
	echo "$_best"
}

# cpu_ratio A B: A / B to one decimal
cpu_ratio() {
	awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", (b > 0 ? a / b : 0) }'
}
