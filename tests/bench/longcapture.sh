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
#
# "Flat" as a number: per collector, the growth of RSS, of its anonymous
# part and of its file part (RssFile: mapped ELF files and BPF maps) from
# the first third of the run (minute 3 from 9 minutes on) to the last
# minute, in MB and MB/minute; flat means RSS grew by less than 10% of
# what it was at that minute.
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
	line="minute $1:" seen=
	for s in $(children "$drv"); do
		for c in $(children "$s"); do
			name=$(cat /proc/"$c"/comm 2>/dev/null) || continue
			[ "$name" = marple-callstac ] && name=marple-callstack	# comm: 15 characters
			case $name in marple-*) ;; *) continue ;; esac
			kb=$(awk '/^VmRSS:/ { r = $2 } /^RssAnon:/ { a = $2 } /^RssFile:/ { f = $2 }
				END { if (r != "") print r, a, f }' /proc/"$c"/status 2>/dev/null)
			[ -n "$kb" ] || continue
			echo "$1 ${name#marple-} $kb" >> "$T/rss.log"
			set -- "$1" $kb
			line="$line ${name#marple-} $2 kB (anon $3, file $4)"
			seen=1
			set -- "$1"
		done
	done
	[ -z "$seen" ] || echo "bench: longcapture: rss $line"
}
m=0
while kill -0 "$drv" 2>/dev/null; do
	i=0
	while [ $i -lt 60 ] && kill -0 "$drv" 2>/dev/null; do sleep 1; i=$((i + 1)); done
	m=$((m + 1))
	# (not once the duration is over: the collectors are writing and
	# letting go of their maps then)
	[ $((m * 60)) -lt "$SECS" ] && kill -0 "$drv" 2>/dev/null && rss_line "$m"
done
wait "$drv"; rc=$?
# growth from minute FROM (the first third, at most 3) to the last minute
[ -s "$T/rss.log" ] && awk '
	{ n[$1] = 1; rss[$1, $2] = $3; anon[$1, $2] = $4; file[$1, $2] = $5; names[$2] = 1; if ($1 > last) last = $1 }
	END {
		from = last >= 9 ? 3 : int((last + 2) / 3); if (from < 1) from = 1
		span = last - from
		for (c in names) {
			if (!((from, c) in rss) || !((last, c) in rss)) continue
			g = (rss[last, c] - rss[from, c]) / 1024; ga = (anon[last, c] - anon[from, c]) / 1024
			gf = (file[last, c] - file[from, c]) / 1024; base = rss[from, c] / 1024
			printf "bench: longcapture: growth %s, minute %d to %d: rss %+.1f MB (%+.2f MB/min, %+.1f%% of %.1f MB), anon %+.1f MB (%+.2f MB/min), file %+.1f MB: %s (flat: rss growth < 10%% of minute %d)\n", \
				c, from, last, g, span ? g / span : 0, base ? 100 * g / base : 0, base, ga, span ? ga / span : 0, gf, \
				(span && g < 0.1 * base) ? "flat" : span ? "NOT flat" : "too short to tell", from
		}
	}' "$T/rss.log"
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
