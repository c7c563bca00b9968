# stream.sh — reading speed of the stream reader: 10^6 stack records through marple-cat -q.
set -u
T=$(mktemp -d) && trap 'rm -rf "$T"' EXIT
awk 'BEGIN {
	print "{\"marple\":1,\"interface\":\"bench\",\"datatype\":\"stack\"}"
	for (i = 0; i < 1000000; i++)
		printf "%d#proc%d;main;dispatch%%2C loop;handler_%d;std::vector<int>::push_back;leaf_%d\n", i % 97 + 1, i % 13, i % 1000, i % 7
	print "{\"trailer\":1,\"records\":1000000}"
}' > "$T/s.marple"
size=$(wc -c < "$T/s.marple")
best=
for i in 1 2 3; do
	s=$(date +%s%N); marple-cat -q "$T/s.marple"; e=$(date +%s%N)
	ms=$(( (e - s) / 1000000 ))
	[ -z "$best" ] || [ "$ms" -lt "$best" ] && best=$ms
done
echo "bench: stream reader: 1000000 stack records ($((size / 1048576)) MiB) validated in ${best} ms (floor: well under 1000 ms)"
awk 'BEGIN {
	print "{\"marple\":1,\"interface\":\"bench\",\"datatype\":\"event\"}"
	for (i = 0; i < 1000000; i++)
		printf "%d,sched_switch,cpu%d,prev_comm=bash,prev_pid=%d,prev_state=S,next_comm=python3,next_pid=%d,next_prio=120\n", 1000000000 + i * 1000, i % 2, i % 300, i % 500
}' > "$T/e.marple"
s=$(date +%s%N); marple-cat -q "$T/e.marple"; e=$(date +%s%N)
echo "bench: stream reader: 1000000 event records validated in $(( (e - s) / 1000000 )) ms"
