# continuous.sh — a continuous capture: marple-collect -e (the engine of
# `marple collect --every`) with callstack, offcpu and cpusched, system-wide,
# over a tar|gzip loop and a burn loop, for BENCH_INTERVALS (10) intervals of
# BENCH_EVERY (2s).  For each interval file as it appears: each collector's
# CPU time in that interval (/proc/PID/schedstat: time on a CPU, ns) and its
# resident memory (VmRSS), then whether every file is a complete stream
# (marple-cat -q) with every collector's section.  Each file is pushed as it is
# written (--each-file marple-push, as `marple collect --push` does) to a
# loopback Pyroscope receiver (tests/push/receiver.py, when python3 is here):
# how many requests came, and how many bodies are folded stacks.  The
# issue's 30-minute run:
#   make bench BENCH=continuous BENCH_EVERY=60 BENCH_INTERVALS=30
set -u
T=$(mktemp -d)
EVERY=${BENCH_EVERY:-2}
N=${BENCH_INTERVALS:-10}
B="$MARPLE_BIN/workloads/burn"
busy() { while :; do tar cf - /usr/share/doc 2>/dev/null | gzip -1 > /dev/null; done; }
busy & b0=$!
( while :; do "$B" 3000 > /dev/null; done ) & b1=$!
rpid=''
trap 'kill $b0 $b1 $rpid 2>/dev/null; rm -rf "$T"' EXIT
push=''
if command -v python3 > /dev/null 2>&1; then
	mkdir -p "$T/recv"
	python3 "$MARPLE_TOP/tests/push/receiver.py" "$T/recv" & rpid=$!
	i=0; while [ ! -s "$T/recv/port" ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
	push="$MARPLE_BIN/marple-push -s $T/spool -- http://127.0.0.1:$(cat "$T/recv/port")"
fi
sleep 1

secs=$("$MARPLE_BIN/marple-collect" --seconds "$EVERY")
marple-collect -t $((secs * N)) -e "$EVERY" ${push:+--each-file "$push"} -o "$T/cap.marple" callstack marple-callstack -- \
	offcpu marple-offcpu -- cpusched marple-cpusched > /dev/null 2> "$T/err" &
sup=$!
sleep 1
pids=$(pgrep -P $sup | tr '\n' ' ')
names=''
# name PID: the collector's program, without marple- (comm is cut at 15 bytes)
name() { tr '\0' '\n' < "/proc/$1/cmdline" 2> /dev/null | head -n 1 | sed 's,.*/,,; s/^marple-//'; }
for p in $pids; do eval "name_$p=$(name $p)"; eval "names=\"\$names \$name_$p\""; done
echo "bench: continuous: $N intervals of $EVERY, collectors:$names (pids $pids)"
seen=0 k=0
for p in $pids; do eval "cpu_$p=\$(cut -d' ' -f1 /proc/$p/schedstat 2> /dev/null || echo 0)"; done
while kill -0 $sup 2> /dev/null; do
	n=$(ls "$T" | grep -c '^cap-.*\.marple$')
	if [ "$n" -gt "$seen" ]; then
		seen=$n k=$((k + 1))
		line=''
		for p in $pids; do
			now=$(cut -d' ' -f1 /proc/$p/schedstat 2> /dev/null || echo '')
			[ -n "$now" ] || { line="$line ended;"; continue; }
			eval "was=\$cpu_$p"
			rss=$(awk '/^VmRSS/ { print $2 }' /proc/$p/status 2> /dev/null)
			eval "nm=\$name_$p"
			line="$line $nm $(( (now - was) / 1000000 )) ms CPU, ${rss:-?} KiB RSS;"
			eval "cpu_$p=$now"
		done
		echo "bench: continuous: interval file $k:$line"
	fi
	sleep 0.2
done
wait $sup; rc=$?
files=$(ls "$T" | grep -c '^cap-.*\.marple$')
whole=0 full=0
for f in "$T"/cap-*.marple; do
	marple-cat -q "$f" 2> /dev/null && whole=$((whole + 1))
	[ "$(grep -c '^{"marple":1' "$f")" -eq 3 ] && full=$((full + 1))
done
# (the first and the last interval are parts: a collector that started or
# stopped on the other side of a cut has no section there)
echo "bench: continuous: marple-collect exit $rc, $files interval files, $whole complete streams, $full with all 3 collectors' sections"
if [ -n "$push" ]; then
	sleep 2	# the last file's push
	reqs=$(ls "$T/recv" | grep -c '\.json$')
	folded=0
	for b in "$T/recv"/*.body; do
		[ -s "$b" ] && ! grep -qvE '^.+ [0-9]+$' "$b" && folded=$((folded + 1))
	done
	left=$(ls "$T/spool" 2> /dev/null | wc -l)
	stacks=$(cat "$T"/cap-*.marple | grep -c '^{"marple".*"datatype":"stack"')
	echo "bench: continuous: push: $reqs requests received for $stacks stack sections in $files files, $folded folded bodies, $left left in the spool (floor: all received)"
fi
