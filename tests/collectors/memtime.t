# marple-memtime: a process that allocates and touches 100 MiB is seen to grow
# by about 100 MiB; PSS as root, RSS fallback where smaps_rollup is not
# readable; the stream is valid; options and errors.
. "$MARPLE_TOP/tests/lib.sh"
plan 21
W="$MARPLE_BIN/workloads/memgrow"

expect_exit "memtime: bad interval" 2 '-i' marple-memtime -i 0 1
expect_exit "memtime: bad duration" 2 'duration' marple-memtime 1 2
expect_exit "memtime: bad pid" 2 '-p' marple-memtime -p x 1

# mem OUT PID: "first max" MiB of that pid's points
mem() {
	awk -F, -v pid="pid=$2" '$0 !~ /^\{/ { for (i = 4; i <= NF; i++) if ($i == pid) { if (n++ == 0) first = $2; if ($2 > max) max = $2 } }
		END { printf "%.1f %.1f %d\n", first, max, n }' "$1"
}

"$W" 1 2.5 100 & wl=$!
MARPLE_READY_FILE="$T/ready" marple-memtime -v -i 200ms 3 > "$T/m.out" 2> "$T/m.err"; rc=$?
wait "$wl"
check "memtime: exit 0 and a valid stream" sh -c "[ $rc -eq 0 ] && marple-cat -q '$T/m.out'"
check "memtime: ready file created" test -e "$T/ready"
set -- $(mem "$T/m.out" "$wl")
first=${1:-0} max=${2:-0} n=${3:-0}
grow=$(awk -v a="$first" -v b="$max" 'BEGIN { printf "%.0f", b - a }')
check "memtime: the workload was sampled many times ($n)" test "$n" -ge 10
check "memtime: workload grows by ~100 MiB (from $first to $max MiB)" test "$grow" -ge 95 -a "$grow" -le 110
check "memtime: header has units x=s y=MiB" grep -q '"units":{"x":"s","y":"MiB"}' "$T/m.out"
check "memtime: trailer counts samples and CPU" grep -Eq '^\{"trailer":1,.*"ended":"duration".*"samples":[0-9]+,"late_samples":[0-9]+,.*"cpu_ns":[0-9]+' "$T/m.out"
# -v means statistics in every collector (issue 39): the trailer's counts on stderr
check "memtime: -v: statistics, the trailer's records and samples" grep -q "^marple-memtime: statistics: records $(tail -n 1 "$T/m.out" | sed 's/.*"records":\([0-9]*\).*/\1/'), lost 0, dropped 0, samples [0-9]" "$T/m.err"
check "memtime: points carry pid, comm and kind" grep -q ",memgrow,pid=$wl,comm=memgrow,kind=" "$T/m.out"
if is_root; then
	check "memtime: as root the workload's PSS is read" grep -q "pid=$wl,comm=memgrow,kind=pss" "$T/m.out"
	# As nobody, root's processes' smaps_rollup is not readable: RSS instead.
	setpriv --reuid=65534 --regid=65534 --clear-groups marple-memtime -i 100ms 0.3 > "$T/n.out" 2>&1
	check "memtime: not root: RSS fallback for others' processes" grep -q ',kind=rss$' "$T/n.out"
	check "memtime: not root: still a valid stream" marple-cat -q "$T/n.out"
else
	skip "memtime: PSS of other processes" "not root"
fi
check "memtime: x grows from 0 in steps of the interval" sh -c "awk -F, '\$0 !~ /^\\{/ { x[\$1] = 1 } END { n = 0; for (k in x) n++; exit !(n >= 14) }' '$T/m.out'"

# -p selects processes; --rss never reads PSS; SIGINT ends with "signal".
sleep 5 & sl=$!
sleep 0.2	# let the forked shell become sleep (exec renames it)
marple-memtime -p "$sl" --rss -i 100ms 0.5 > "$T/p.out"
check "memtime: -p only that process" test "$(grep -vc '^{' "$T/p.out")" -eq "$(grep -c ",pid=$sl,comm=[^,]*,kind=rss" "$T/p.out")"
check "memtime: -p: named after exec" grep -q ",sleep,pid=$sl,comm=sleep," "$T/p.out"
check "memtime: -p: samples taken" test "$(grep -c "pid=$sl," "$T/p.out")" -ge 5
MARPLE_READY_FILE="$T/ready2" marple-memtime -i 100ms > "$T/s.out" & mt=$!
wait_ready "$T/ready2" 20; sleep 0.3; kill -INT "$mt"; wait "$mt"; rc=$?
kill "$sl" 2>/dev/null
check "memtime: SIGINT: exit 0, trailer says signal" sh -c "[ $rc -eq 0 ] && grep -q '\"ended\":\"signal\"' '$T/s.out'"
marple-memtime -i 100ms 0.3 | marple-heatmap > "$T/hm.svg"
check "memtime: output draws as a heat map" xmllint --noout "$T/hm.svg"
expect_exit "memtime: unknown PID" 1 'no process with PID 4000000' marple-memtime -p 4000000 1
