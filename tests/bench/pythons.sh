# pythons.sh — marple-callstack on every CPython found on the machine
# (tests/collectors/pythons.sh: pyenv's, /usr/bin/python3*, MARPLE_PYTHONS),
# each running one recursive workload of known stacks and lines for
# PY_BENCH_SECS (default 4) at 499 Hz.  Prints a row per interpreter: how the
# layout was found (table, debug_offsets, table+debug_offsets; refused),
# the share of samples with the chain <module>;main;walk...;fib and the C
# frames between (floor 95%), the share merged, whether every frame's line
# is one of its function's, and the Python frames' own cost a sample (the
# BPF walk and the collector's Python work); then the versions absent.
# (tests/bench/python.sh measures six workloads and the whole cost against
# --no-python on Debian's 3.11.)
set -u
SECS=${PY_BENCH_SECS:-4}
[ "$(id -u)" = 0 ] || { echo "bench: pythons: skipped (needs root)"; exit 0; }
T=$(mktemp -d); trap 'rm -rf "$T"' EXIT
. "$MARPLE_TOP/tests/collectors/pythons.sh"
cat > "$T/work.py" <<'PYEOF'
import sys, time

def fib(n):
    return n if n < 2 else fib(n - 1) + fib(n - 2)

class Tree:
    def __init__(self, depth):
        self.kids = [Tree(depth - 1) for _ in range(2)] if depth else []

    def walk(self):
        if not self.kids:
            return fib(15)
        total = 0
        for k in self.kids:
            total += k.walk()
        return total

def main():
    t = Tree(3)
    end = time.time() + float(sys.argv[1])
    while time.time() < end:
        t.walk()

main()
PYEOF
weight() {
	awk -v re="$2" '/^\{"trailer"/ { exit } index($0, "#") && substr($0, 1, 1) != "{" {
		w = substr($0, 1, index($0, "#") - 1); f = substr($0, index($0, "#") + 1)
		if (f ~ re) s += w } END { printf "%.0f\n", s + 0 }' "$1"
}
num() { sed -n "s/.*\"trailer\":1.*\"$2\":\([0-9]*\).*/\1/p" "$1" | head -n 1; }
# frames at a line outside their function's body, of all Python frames
badlines() {
	grep -v '^{' "$1" | cut -d'#' -f2- | tr ';' '\n' | grep 'work[.]py:' |
		sed 's/^\(.*\) [(].*work[.]py:\([0-9]*\)[)]$/\1 \2/' | awk '
		{ ok = ($1 == "fib" && $2 >= 3 && $2 <= 4) || ($1 ~ /walk$/ && $2 >= 9 && $2 <= 16) ||
		       ($1 == "main" && $2 >= 18 && $2 <= 22) || ($1 == "<module>" && $2 == 24)
		  n++; bad += !ok } END { printf "%d of %d\n", bad, n }'
}
P='[ ][(][^)]*[)]' N='(;[^;()]*)*' W="(Tree[.])?walk$P"
printf 'bench: pythons: %-8s %-22s %7s %7s %14s %9s\n' version layout chain merged "bad lines" "ns/sample"
find_pythons > "$T/list"
while read -r v py; do
	for mode in table notable; do
		case $mode in notable) case $v in 3.1[3-9].*) ;; *) continue ;; esac ;; esac
		"$py" "$T/work.py" $((SECS + 4)) & pid=$!
		sleep 0.7
		env $( [ $mode = notable ] && echo MARPLE_TEST_PYTHON_NO_TABLE=1 ) \
			marple-callstack -F 499 -p "$pid" "$SECS" > "$T/out" 2> "$T/err"
		kill "$pid" 2>/dev/null; wait "$pid" 2>/dev/null
		total=$(weight "$T/out" .)
		chain=$(weight "$T/out" ";<module>$P$N;main$P($N;$W)+($N;fib$P)*$N$")
		merged=$(num "$T/out" samples_merged)
		how=$(grep -o '"interpreters":{"[^"]*"' "$T/out" | head -n 1 | sed 's/.*{"//; s/"$//; s/^[^ ]* //')
		cost=$(awk -v a="$(num "$T/out" walk_ns)" -v b="$(num "$T/out" collector_cpu_ns)" -v n="$total" \
			'BEGIN { printf "%.0f", n ? (a + b) / n : 0 }')
		printf 'bench: pythons: %-8s %-22s %6.1f%% %6.1f%% %14s %9s\n' "$v" "${how:-?}" \
			"$(awk -v a="$chain" -v b="$total" 'BEGIN { print b ? 100 * a / b : 0 }')" \
			"$(awk -v a="${merged:-0}" -v b="$total" 'BEGIN { print b ? 100 * a / b : 0 }')" \
			"$(badlines "$T/out")" "$cost"
	done
done < "$T/list"
echo "bench: pythons: absent: $(pythons_absent)"
echo "bench: pythons: load average $(cut -d' ' -f1-3 /proc/loadavg)"
