# pythons.sh — marple-callstack on every CPython found on the machine
# (tests/collectors/pythons.sh: pyenv's, /usr/bin/python3*, MARPLE_PYTHONS):
# the workloads of tests/workloads/pyshapes.py (a call chain, sorted with a
# key, a generator, threads, C-heavy json/re, shares), each for
# PY_BENCH_SECS (default 3) at 499 Hz, under each interpreter.  Prints a row
# per interpreter and workload (PY_BENCH_WORKLOADS picks some workloads,
# PY_BENCH_VERSIONS some versions by prefix, e.g. "3.9 3.13"):
# - how its layout was found: table, debug_offsets, table+debug_offsets, or
#   refused;
# - the share of samples carrying the workload's expected chain of Python
#   functions with the C frames between (floor 95%): before 3.11 a function
#   is known by co_name only, and each Python call has C frames between;
# - the share merged one to one, and frames at a line outside their
#   function (the shares workload's loops: lines known);
# - the whole cost a sample (BPF run time and the collector's CPU) against
#   --no-python's in the same interpreter on the same workload, chain only,
#   PY_BENCH_COST_SECS (default 5) at 999 Hz (floor 1.3x), and after the
#   collector's start-up (BPF load, unwind tables: ~80 ms shared by a few
#   thousand samples on a loaded machine);
# then the versions absent, and a 3.13+ again without its built-in table.
# (tests/bench/python.sh compares with the interpreter's own view of its
# frames, on Debian's 3.11.)
set -u
SECS=${PY_BENCH_SECS:-3} COST_SECS=${PY_BENCH_COST_SECS:-5}
PY=$(command -v /usr/bin/python3 python3 | head -n 1)	# runs cputime.py
[ "$(id -u)" = 0 ] || { echo "bench: pythons: skipped (needs root)"; exit 0; }
T=$(mktemp -d); trap 'rm -rf "$T"' EXIT
. "$MARPLE_TOP/tests/collectors/pythons.sh"
SHAPES="$MARPLE_TOP/tests/workloads/pyshapes.py"

. "$MARPLE_TOP/tests/collectors/stacks.sh"	# weight, trailer_num
pct() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f%%", b ? 100 * a / b : 0 }'; }

P='[ ][(][^)]*[)]' N='(;[^;()]*)*' C='(;[^;(]+)*$' Q='([A-Za-z_<>]+[.])*'
# expected chain per workload (awk regex over the frames joined by ";"): a
# call being made or returning leaves the caller innermost, so a chain may
# stop at any of its functions; what each runs in C follows it
expect() {
	case $1 in
	chain) echo ";<module>$P$N;chain$P($N;chain_a$P($N;chain_b$P($N;chain_c$P)?)?)?$C" ;;
	sort_with_key) echo ";<module>$P$N;sort_with_key$P((;[^;(]+)+;$Q<lambda>$P($N;keyfn$P)?)?$C" ;;
	generator) echo ";<module>$P$N;generator$P((;[^;(]+)+;numbers$P)?$C" ;;
	threads) echo ";${Q}_bootstrap$P$N;${Q}_bootstrap_inner$P$N;${Q}run$P$N;spin$P$C|;<module>$P$N;threads$P(;[^;]+)*\$|;${Q}_bootstrap$P(;[^;]+)*\$" ;;
	cheavy) echo ";<module>$P$N;cheavy$P(;[^;]+)*\$" ;;
	shares) echo ";<module>$P$N;shares$P($N;share_[123]$P)?$C" ;;
	esac
}
# frames of pyshapes.py at a line outside their function, in shares: share_N
# and shares span known lines of the file
badlines() {
	grep -v '^{' "$1" | cut -d'#' -f2- | tr ';' '\n' | grep 'pyshapes[.]py:' |
		sed 's/^\(.*\) [(].*pyshapes[.]py:\([0-9]*\)[)]$/\1 \2/' | awk -v f="$SHAPES" '
		BEGIN { while ((getline l < f) > 0) { n++; if (l ~ /^def /) { split(l, a, "[ (]"); at[a[2]] = n } } }
		$1 ~ /^share_[123]$|^shares$/ { k++; s = at[$1]; if ($2 < s || $2 > s + 4) bad++ }
		END { printf "%d/%d\n", bad, k }'
}
# capture PYTHON WORKLOAD OUT SECS [OPTIONS...]: SECS of the workload (a
# Python 2, which cannot read pyshapes.py, a loop); the collector's CPU in
# OUT.time (cputime.py)
capture() {
	cap_py=$1 cap_w=$2 cap_out=$3 cap_secs=$4
	shift 4
	case $("$cap_py" -c 'import sys; print(sys.version_info[0])') in
	2) "$cap_py" -c 'while 1: sum(range(1000))' & pid=$! ;;
	*) "$cap_py" "$SHAPES" $((cap_secs + 60)) "$cap_w" & pid=$! ;;
	esac
	sleep 0.7
	"$PY" "$MARPLE_TOP/tests/bench/cputime.py" "$cap_out.time" marple-callstack -p "$pid" "$@" "$cap_secs" \
		> "$cap_out" 2> "$cap_out.err"
	kill "$pid" 2>/dev/null; wait "$pid" 2>/dev/null
}
# cost OUT: ns a sample: BPF and the collector together, BPF, the
# collector; BPF and the collector after its start-up (BPF load, tables)
cost() {
	read -r u s st < "$1.time"
	awk -v p="$(trailer_num "$1" program_ns)" -v u="$u" -v s="$s" -v st="${st:-0}" -v n="$(trailer_num "$1" samples)" 'BEGIN {
		if (n) printf "%.0f %.0f %.0f %.0f", (p + (u + s) * 1e9) / n, p / n, (u + s) * 1e9 / n, (p + (u + s - st) * 1e9) / n
		else print "0 0 0 0" }'
}

printf 'bench: pythons: %-8s %-14s %-22s %7s %7s %9s %s\n' version workload layout chain merged badlines cost
find_pythons | while read -r v py; do
	for want in ${PY_BENCH_VERSIONS:-""}; do
		case $v in "$want"*) echo "$v $py"; break ;; esac
	done
done > "$T/list"
while read -r v py; do
	for w in ${PY_BENCH_WORKLOADS:-chain sort_with_key generator threads cheavy shares}; do
		case $v in 2.*) [ "$w" = chain ] || continue ;; esac	# refused: one row
		out="$T/$v.$w"
		capture "$py" "$w" "$out" "$SECS" -F 499
		total=$(weight "$out" .)
		how=$(grep -o '"interpreters":{"[^"]*"' "$out" | head -n 1 | sed 's/.*{"//; s/"$//; s/^[^ ]* //')
		c="-"
		if [ "$w" = chain ] && [ "$how" != refused ]; then
			capture "$py" chain "$out.cost" "$COST_SECS" -F 999
			capture "$py" chain "$out.native" "$COST_SECS" -F 999 --no-python
			# what the Python frames themselves cost a sample: the walks'
			# BPF time, the collector's Python work (less noisy than the
			# difference of two runs' whole costs)
			own=$(awk -v w="$(trailer_num "$out.cost" walk_ns)" -v c="$(trailer_num "$out.cost" collector_cpu_ns)" \
				-v t="$(trailer_num "$out.cost" walks_timed)" -v n="$(trailer_num "$out.cost" samples)" \
				'BEGIN { printf "%.0f %.0f", t ? w / t : 0, n ? c / n : 0 }')
			c=$(echo "$(cost "$out.cost") $(cost "$out.native") $own" | awk '{
				printf "%.2fx, %.2fx after start-up (BPF %d/%d ns, collector %d/%d ns a sample); own: walk %d + collector %d ns = %.2fx",
				$5 ? $1 / $5 : 0, $8 ? $4 / $8 : 0, $2, $6, $3, $7, $9, $10, $5 ? ($5 + $9 + $10) / $5 : 0 }')
		fi
		printf 'bench: pythons: %-8s %-14s %-22s %7s %7s %9s %s\n' "$v" "$w" "${how:-?}" \
			"$(pct "$(weight "$out" "$(expect "$w")")" "$total")" "$(pct "$(trailer_num "$out" samples_merged)" "$total")" \
			"$(badlines "$out")" "$c"
	done
done < "$T/list"
# the day-one path: a 3.13+ by its _Py_DebugOffsets alone
v=$(awk '{ split($1, v, "."); if (v[1] == 3 && v[2] >= 13) print $1 " " $2 }' "$T/list" | head -n 1)
if [ -n "$v" ]; then
	set -- $v
	MARPLE_TEST_PYTHON_NO_TABLE=1 capture "$2" chain "$T/notable" "$SECS" -F 499
	total=$(weight "$T/notable" .)
	echo "bench: pythons: $1 chain without the table: $(grep -o '"interpreters":{[^}]*}' "$T/notable"), chain $(pct "$(weight "$T/notable" "$(expect chain)")" "$total"), merged $(pct "$(trailer_num "$T/notable" samples_merged)" "$total")"
fi
echo "bench: pythons: absent: $(pythons_absent)"
echo "bench: pythons: load average $(cut -d' ' -f1-3 /proc/loadavg)"
