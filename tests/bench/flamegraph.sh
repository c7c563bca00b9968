# flamegraph.sh — marple-flamegraph on >= 80,000 folded lines (floor: <= 0.06 s,
# SVG no larger than flamegraph.pl's for the same input and minwidth).
# Two inputs: real stacks (the conformance outputs, each with a varying leaf
# appended, sorted as marple-fold writes them) and a stress case of random
# deep stacks (about a million tree nodes).
# Each beside wc -l on the same input (CPU time, best of 5; floor: at most 5x).
set -u
T=$(mktemp -d) && trap 'rm -rf "$T"' EXIT
. "$MARPLE_TOP/tests/bench/lib/cputime.sh"
C="$MARPLE_TOP/tests/fold/conformance/stackcollapse-perf/expected"
[ -d "$C" ] || { echo "bench: flamegraph: skipped: $C missing"; exit 0; }
cat "$C"/*-collapsed.txt "$C"/*-collapsed-all.txt | awk '{ $NF = ""; sub(/ $/, ""); s[NR] = $0; n = NR }
	END { for (i = 0; i < 83000; i++) printf "%s;leaf_%d %d\n", s[i % n + 1], int(i / n), 1 + i % 13 }' |
	LC_ALL=C sort > "$T/real.folded"
awk 'BEGIN { srand(1); for (i = 0; i < 83000; i++) { s = "java"; d = 8 + int(rand() * 20)
	for (j = 0; j < d; j++) s = s ";org/app/Module" int(rand() * (j < 4 ? 3 : 40)) ":.method" j "_" int(rand() * (j < 6 ? 2 : 10))
	print s, 1 + int(rand() * 100) } }' | LC_ALL=C sort > "$T/stress.folded"
for kind in real stress; do
	f="$T/$kind.folded"
	lines=$(wc -l < "$f"); mb=$(( $(wc -c < "$f") / 1048576 ))
	best=
	for i in 1 2 3 4 5; do
		s=$(date +%s%N); marple-flamegraph "$f" > "$T/out.svg"; e=$(date +%s%N)
		ms=$(( (e - s) / 1000000 ))
		[ -z "$best" ] || [ "$ms" -lt "$best" ] && best=$ms
	done
	echo "bench: flamegraph: $kind stacks, $lines folded lines ($mb MiB) rendered in ${best} ms (floor: <= 60 ms; flamegraph.pl: 1170 ms for 82,950 lines)"
	fg=$(cpu_ms marple-flamegraph "$f"); wc=$(cpu_ms wc -l "$f")
	echo "bench: flamegraph: $kind stacks: marple-flamegraph $fg ms CPU, wc -l $wc ms: $(cpu_ratio "$fg" "$wc")x (floor: <= 5x)"
	size=$(wc -c < "$T/out.svg")
	if command -v node >/dev/null 2>&1; then
		set -- $(node "$MARPLE_TOP/tests/bench/fgsize.js" "$T/out.svg")
		echo "bench: flamegraph: $kind stacks, SVG $size bytes for $1 frames; flamegraph.pl's frame markup alone: >= $2 bytes (floor: ours no larger)"
	fi
done
