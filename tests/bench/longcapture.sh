# longcapture.sh — a long system-wide capture at the defaults on a busy
# machine: `marple collect -t LONG_CAPTURE_SECS callstack offcpu memleak`
# while a tar|gzip loop and a burn loop run.  Prints each collector's resident
# memory once a minute (is it flat after the first minutes?), and of it the
# anonymous memory (the heap: records, symbols); the rest is mapped files,
# mostly the BPF maps (the stack store, the unwind tables: ~105 MB for
# callstack at the defaults, resident from the first minute), then per
# section the records, the trailer's dropped and lost counts and the weight
# under a [lost: ...] frame (all should be 0).  The issue's floor is for
# 30 minutes (LONG_CAPTURE_SECS=1800); the default is 5 minutes so that a
# whole `make bench` stays short.
set -u
SECS=${LONG_CAPTURE_SECS:-300}
[ "$(id -u)" = 0 ] || { echo "bench: longcapture: skipped (needs root)"; exit 0; }
T=$(mktemp -d)
B="$MARPLE_BIN/workloads/burn"
busy() { while :; do tar cf - /usr/share/doc 2>/dev/null | gzip -1 > /dev/null; done; }
busy & b0=$!
( while :; do "$B" 3000 > /dev/null; done ) & b1=$!
trap 'kill $b0 $b1 2>/dev/null; rm -rf "$T"' EXIT
echo "bench: longcapture: $SECS s, load average $(cut -d' ' -f1-3 /proc/loadavg), $(getconf _NPROCESSORS_ONLN) CPUs"

marple collect -t "$SECS" -o "$T/long.marple" callstack offcpu memleak > "$T/collect.out" 2> "$T/collect.err" &
drv=$!

# children PID: the processes whose parent is PID
children() { cat /proc/"$1"/task/*/children 2>/dev/null; }
# rss_line MINUTE: "NAME RSS_KB" of each collector under the supervisor
rss_line() {
	line="minute $1:"
	for s in $(children "$drv"); do
		for c in $(children "$s"); do
			name=$(cat /proc/"$c"/comm 2>/dev/null) || continue
			case $name in marple-*) ;; *) continue ;; esac
			kb=$(awk '/^VmRSS:/ { r = $2 } /^RssAnon:/ { a = $2 } END { print r " kB (anon " a ")" }' \
				/proc/"$c"/status 2>/dev/null)
			line="$line ${name#marple-} ${kb:-?}"
		done
	done
	echo "bench: longcapture: rss $line"
}
m=0
while kill -0 "$drv" 2>/dev/null; do
	i=0
	while [ $i -lt 60 ] && kill -0 "$drv" 2>/dev/null; do sleep 1; i=$((i + 1)); done
	m=$((m + 1))
	kill -0 "$drv" 2>/dev/null && rss_line "$m"
done
wait "$drv"; rc=$?
[ "$rc" = 0 ] || { echo "bench: longcapture: marple collect failed ($rc): $(tail -n 3 "$T/collect.err")"; exit 0; }
awk '/^\{"marple"/ || /^\{"MARPLE"/ {
		iface = $0; sub(/.*"interface":"/, "", iface); sub(/".*/, "", iface); recs = 0; lost = 0; next }
	/^\{"trailer"/ {
		d = "?"; if (match($0, /"dropped":[0-9]+/)) d = substr($0, RSTART + 10, RLENGTH - 10)
		l = "?"; if (match($0, /"lost":[0-9]+/)) l = substr($0, RSTART + 7, RLENGTH - 7)
		printf "bench: longcapture: %s: %d records, dropped %s, lost %s, weight under a [lost: ...] frame %d (floor: 0 and 0)\n", iface, recs, d, l, lost
		next }
	/^\{/ { next }
	{ recs++; if (index($0, "[lost:")) lost += substr($0, 1, index($0, "#") - 1) }' "$T/long.marple"
grep -v '^$' "$T/collect.err" | sed 's/^/bench: longcapture: stderr: /' | head -n 20
