# memtime.sh — overhead of marple-memtime: 500 extra sleeping processes sampled
# every 0.5 s for 20 s; CPU time it used (from its trailer's cpu_ns, the
# getrusage of the collector itself) as a share of one CPU.
set -u
T=$(mktemp -d)
pids=
i=0
while [ $i -lt 500 ]; do sleep 120 & pids="$pids $!"; i=$((i + 1)); done
trap 'kill $pids 2>/dev/null; rm -rf "$T"' EXIT
sleep 1
n=$(ls /proc | grep -c '^[0-9]')
marple-memtime -i 500ms 20 > "$T/m.out"
tail -n 1 "$T/m.out" | sed 's/.*"cpu_ns":\([0-9]*\).*/\1/' > "$T/cpu"
awk -v ns="$(cat "$T/cpu")" -v n="$n" -v recs="$(grep -vc '^{' "$T/m.out")" 'BEGIN {
	printf "bench: memtime: %d processes every 0.5 s for 20 s: %.2f%% of one CPU (%.1f ms CPU, %d points) (floor: < 2%%)\n", n, ns / 20e9 * 100, ns / 1e6, recs }'
