# fold.sh — marple-fold against wc -l on the same file (CPU time, best of 5;
# the floor: at most 2.5x), on each kind of input:
#   perf script, repeated: the conformance inputs, their events renamed to
#     one type, repeated to >= 300 MB (few distinct stacks);
#   perf script, captured: 20 s of this machine at 999 Hz while find and
#     python3 run (with perf; thousands of distinct stacks, deep kernel ones);
#   a marple stream: the stack sections marple-fold --to-stream makes of
#     those, repeated to >= 100 MB; the same with every '_' of a name made
#     ", " (C++ templates' names: every record %XX-escaped);
#   folded text: marple-fold's output of those, repeated to >= 100 MB.
# Also: MB/s and max RSS on the 300 MB file, and the same through a pipe.
# BASE_BIN=DIR: another build's marple-fold (main's) measured beside this
# one's on the same files, runs taken in turn; each line ends with the load.
set -u
T=$(mktemp -d) && trap 'rm -rf "$T"' EXIT
. "$MARPLE_TOP/tests/bench/lib/cputime.sh"
C="$MARPLE_TOP/tests/fold/conformance/stackcollapse-perf/input"
[ -d "$C" ] || { echo "bench: fold: skipped: $C missing"; exit 0; }

# repeat IN OUT MB: IN repeated to at least MB MiB
repeat() {
	_n=$(( $3 * 1048576 / $(wc -c < "$1") + 1 ))
	_i=0; while [ $_i -lt $_n ]; do cat "$1"; _i=$((_i + 1)); done > "$2"
}
# least_ms A B: the lesser of two CPU times ("" for none yet)
least_ms() {
	awk -v a="$1" -v b="$2" 'BEGIN { print (b == "" || a + 0 < b + 0) ? a : b }'
}
# against_wc WHAT FILE: marple-fold's CPU time on FILE beside wc -l's (and
# BASE_BIN's), each the least of CPU_REPS runs taken in turn, one of each a
# round (the load moves all alike), with the time a line
against_wc() {
	_f=; _w=; _bf=; _i=0
	while [ "$_i" -lt "$CPU_REPS" ]; do
		_f=$(least_ms "$(cpu_ms_once marple-fold "$2")" "$_f")
		_w=$(least_ms "$(cpu_ms_once wc -l "$2")" "$_w")
		[ -z "${BASE_BIN:-}" ] || _bf=$(least_ms "$(cpu_ms_once "$BASE_BIN/marple-fold" "$2")" "$_bf")
		_i=$((_i + 1))
	done
	_l=$(wc -l < "$2") _b=
	[ -z "$_bf" ] || _b=" (BASE_BIN's $_bf ms: $(cpu_ratio "$_bf" "$_w")x)"
	echo "bench: fold: $1 ($(( $(wc -c < "$2") / 1048576 )) MiB, $_l lines): marple-fold $_f ms CPU ($(awk -v m="$_f" -v l="$_l" 'BEGIN { printf "%.0f", m * 1e6 / l }') ns a line), wc -l $_w ms: $(cpu_ratio "$_f" "$_w")x$_b (floor: <= 2.5x; load $(cut -d ' ' -f 1 /proc/loadavg))"
}
# cpu_ms_once CMD...: the CPU time (ms) of one run of CMD, as cpu_ms takes it
cpu_ms_once() {
	python3 "$MARPLE_TOP/tests/bench/cputime.py" "$_cpu_tmp" "$@" > /dev/null 2>&1
	awk '{ printf "%.1f", ($1 + $2) * 1000 }' "$_cpu_tmp"
}

for f in "$C"/*.txt; do cat "$f"; echo; done |
	sed -E 's/ (cycles|instructions|cycles:u): *$/ cpu-clock: /' > "$T/one.txt"
repeat "$T/one.txt" "$T/big.txt" 300
size=$(wc -c < "$T/big.txt")
best=
for i in 1 2 3; do
	s=$(date +%s%N); taskset -c 0 marple-fold "$T/big.txt" > "$T/out"; e=$(date +%s%N)
	ms=$(( (e - s) / 1000000 ))
	[ -z "$best" ] || [ "$ms" -lt "$best" ] && best=$ms
done
[ "$best" -gt 0 ] || best=1
echo "bench: fold: perf script $((size / 1048576)) MiB folded in ${best} ms = $(( size / 1048576 * 1000 / best )) MB/s (floor: >= 400 MB/s; stackcollapse-perf.pl: 20 MB/s)"
rss=$( { /usr/bin/time -f '%M' marple-fold "$T/big.txt" > /dev/null; } 2>&1 | tail -n 1)
echo "bench: fold: max RSS ${rss} KB for $(wc -l < "$T/out") unique stacks from $((size / 1048576)) MiB (floor: O(unique stacks))"
s=$(date +%s%N); cat "$T/big.txt" | marple-fold > /dev/null; e=$(date +%s%N)
echo "bench: fold: same input through a pipe in $(( (e - s) / 1000000 )) ms"
against_wc "perf script, repeated" "$T/big.txt"
src="$T/big.txt"

if perf record -e cpu-clock -g -o "$T/probe.data" -- true >/dev/null 2>&1; then
	find / -xdev > /dev/null 2>&1 & fp=$!
	py=
	if command -v python3 > /dev/null; then
		python3 -c 'import time
def f(n): return 1 if n < 2 else f(n - 1) + f(n - 2)
t = time.time()
while time.time() - t < 21: f(18)' & py=$!
	fi
	perf record -e cpu-clock -F 999 -g -a -o "$T/real.data" -- sleep 20 > /dev/null 2>&1
	kill "$fp" $py 2> /dev/null; wait "$fp" $py 2> /dev/null
	perf script -i "$T/real.data" > "$T/real.txt" 2> /dev/null
	rm -f "$T/real.data"
	against_wc "perf script, captured" "$T/real.txt"
	src="$T/real.txt"
else
	echo "bench: fold: perf script, captured: skipped (perf record unavailable)"
fi

marple-fold --to-stream "$src" > "$T/one.marple" 2> /dev/null
repeat "$T/one.marple" "$T/big.marple" 100
against_wc "marple stream" "$T/big.marple"
rm -f "$T/big.marple"
# names with ", " (C++ templates): every record's frames %XX-escaped
marple-fold "$src" 2> /dev/null | sed 's/_/, /g' | marple-fold --to-stream > "$T/one.marple" 2> /dev/null
repeat "$T/one.marple" "$T/big.marple" 100
against_wc "marple stream, escaped names" "$T/big.marple"
rm -f "$T/big.marple"
marple-fold "$src" > "$T/one.folded" 2> /dev/null
repeat "$T/one.folded" "$T/big.folded" 100
against_wc "folded text" "$T/big.folded"
