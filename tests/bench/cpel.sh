# cpel.sh — marple-cpel conversion speed on 5,000,000 sched_switch events as
# marple-cpusched writes them (floor: >= 5 M events/s), time-ordered and not.
set -u
T=$(mktemp -d) && trap 'rm -rf "$T"' EXIT
N=${N:-5000000}
awk -v n="$N" 'BEGIN {
	print "{\"marple\":1,\"interface\":\"cpusched\",\"datatype\":\"event\",\"track\":\"cpu\"}"
	for (i = 0; i < n; i++) {
		p = i % 300; q = (i * 7) % 500
		printf "%d,sched_switch,cpu%d,comm=proc%d,pid=%d,prev_comm=task%d,prev_pid=%d,prev_state=S,next_comm=proc%d,next_pid=%d,next_prio=120\n", 1000000000 + i * 1000, i % 2, q, q, p, p, q, q
	}
	print "{\"trailer\":1,\"records\":" n "}"
}' > "$T/e.marple"
best=
for i in 1 2 3; do
	s=$(date +%s%N); marple-cpel "$T/e.marple" > "$T/e.cpel"; e=$(date +%s%N)
	ms=$(( (e - s) / 1000000 ))
	if [ -z "$best" ] || [ "$ms" -lt "$best" ]; then best=$ms; fi
done
echo "bench: cpel: $N time-ordered events in $best ms: $(( N * 1000 / (best + 1) )) events/s (floor: >= 5000000 events/s)"
# the same events, not in time order (swap neighbours): sorted runs + merge
awk 'NR > 1 && /^[0-9]/ && NR % 2 == 0 { held = $0; next } { print } held != "" { print held; held = "" }' "$T/e.marple" > "$T/u.marple"
s=$(date +%s%N); marple-cpel "$T/u.marple" > "$T/u.cpel"; e=$(date +%s%N)
ms=$(( (e - s) / 1000000 ))
echo "bench: cpel: $N unordered events in $ms ms: $(( N * 1000 / (ms + 1) )) events/s"
/usr/bin/time -f '%M' marple-cpel "$T/u.marple" 2> "$T/mem" > /dev/null
echo "bench: cpel: peak memory for $N unordered events: $(tail -n 1 "$T/mem") KiB (bounded: runs of 1M events)"
