# The driver and timed stack sections: marple collect asks marple-callstack for
# --timed when the capture stays small ([callstack] timed = auto|yes|no), and
# marple display adds a flame scope page for every timed section; and routing
# by meaning: memleak's memusage section (bytes per process) is a stack plot.
. "$MARPLE_TOP/tests/lib.sh"
plan 15
mkdir -p "$T/bin" "$T/state" "$T/work" "$T/config/marple"
# a stand-in marple-callstack: records its arguments, writes a timed capture
cat > "$T/bin/marple-callstack" <<EOS
#!/bin/sh
printf '%s\n' "\$*" > "$T/args"
cat "$DATA/timed.marple"
EOS
chmod +x "$T/bin/marple-callstack"
export MARPLE_LIBEXEC="$T/bin" XDG_STATE_HOME="$T/state" XDG_CONFIG_HOME="$T/config"
unset MARPLE_CONFIG DISPLAY WAYLAND_DISPLAY
cd "$T/work" || exit 1
cfg() { printf '[callstack]\n%s\n' "$1" > "$T/config/marple/config"; }

marple collect -t 2 -o short.marple callstack > /dev/null 2> "$T/err"
check "collect: a short capture keeps sample times (--timed)" grep -q -- '--timed' "$T/args"
printf '[callstack]\nfrequency = 999\n' > "$T/config/marple/config"
marple collect -t 2h -o long.marple callstack > /dev/null 2>&1 &
cs=$!; sleep 1; kill -INT "$cs" 2>/dev/null; wait "$cs"
check "collect: 999 Hz for 2 hours would be too big: no --timed" sh -c "! grep -q -- '--timed' '$T/args'"
marple collect --every 1 -t 2 -o every.marple callstack > /dev/null 2> "$T/err"
check "collect --every 1: each interval is small, its samples keep their times (--timed)" grep -q -- '--timed' "$T/args"
marple collect --every 1h -t 1 -o everyh.marple callstack > /dev/null 2>&1
check "collect --every 1h at 999 Hz: an interval would be too big, no --timed" sh -c "! grep -q -- '--timed' '$T/args'"
cfg 'timed = no'
marple collect -t 1 -o no.marple callstack > /dev/null 2>&1
check "collect: [callstack] timed = no" sh -c "! grep -q -- '--timed' '$T/args'"
cfg 'timed = yes'
marple collect -t 2h -o yes.marple callstack > /dev/null 2>&1 &
cs=$!; sleep 1; kill -INT "$cs" 2>/dev/null; wait "$cs"
check "collect: [callstack] timed = yes, whatever the length" grep -q -- '--timed' "$T/args"
cfg 'timed = sometimes'
expect_exit "collect: a bad [callstack] timed is named" 2 'timed must be auto, yes or no' marple collect -t 1 callstack
rm -f "$T/config/marple/config"

MARPLE_LIBEXEC= marple display -i short.marple -o shown > "$T/out" 2> "$T/err"; rc=$?
check "display: exit 0 for a timed capture" test "$rc" -eq 0
check "display: a flame scope page for the timed section" grep -q '"rows":50' shown/00-callstack-flamescope.html
check "display: the report shows it, made from both sections" grep -q 'marple-cat -s 0,1 .*marple-flamescope' shown/index.html
check "display: the samples section is not drawn by itself" sh -c "! ls shown | grep -q '^01-'"
# three intervals of marple-callstack --every 1 --timed: one flame scope of all
for i in 0 1 2; do
	t=$((5000000000 + i * 1000000000)) ended=interval
	[ "$i" -lt 2 ] || ended=duration
	printf '{"marple":1,"interface":"callstack","datatype":"stack","timed":"stacks","host":"h","start_ns":%s}\n1#w;main;f%s\n' "$t" "$i"
	printf '{"trailer":1,"records":1,"end_ns":%s,"ended":"%s"}\n' $((t + 1000000000)) "$ended"
	printf '{"marple":1,"interface":"callstack","datatype":"event","timed":"samples","host":"h","start_ns":%s}\n' "$t"
	printf '%s,sample,cpu0,stack=0,pid=1,tid=1\n{"trailer":1,"records":1,"ended":"%s"}\n' $((t + 500000000)) "$ended"
done > every.marple
MARPLE_LIBEXEC= marple display -i every.marple -o everyshown > /dev/null 2> "$T/err"
check "display: --every intervals: one flame scope page of all three, on one time axis" sh -c "
	grep -q '\"cols\":3,.*\"samples\":3,.*\"sections\":3' everyshown/00-callstack-flamescope.html &&
	[ \$(ls everyshown | grep -c flamescope) -eq 1 ] && [ \$(ls everyshown | grep -c flamegraph) -eq 3 ]"

printf '{"marple":1,"interface":"memusage","datatype":"point","start_ns":0,"units":{"x":"s","y":"bytes"}}\n0,100,leaky (7)\n1,300,leaky (7)\n1,50,bash (9)\n' > mem.marple
MARPLE_LIBEXEC= marple display -i mem.marple -o memshown > /dev/null 2>&1
check "display: memleak's memusage section is drawn as a stack plot, not a heat map" sh -c "ls memshown | grep -q '^00-memusage-stackplot.svg$' && ! ls memshown | grep -q heatmap"
# a 3 s disk-latency capture: columns of 0.02 s (150 of them), not three of 1 s
awk 'BEGIN { print "{\"marple\":1,\"interface\":\"disklat\",\"datatype\":\"point\",\"start_ns\":1000000000,\"units\":{\"x\":\"s\",\"y\":\"ms\"}}"
	for (i = 0; i < 300; i++) printf "%.2f,%d,dd\n", i / 100, 1 + i % 7
	print "{\"trailer\":1,\"end_ns\":4000000000,\"records\":300}" }' > lat.marple
MARPLE_LIBEXEC= marple display -i lat.marple -o latshown > /dev/null 2>&1
check "display: a 3 s latency heat map gets columns of 0.02 s" grep -q 'colw: 0.02,' latshown/00-disklat-heatmap.svg
# -o FILE.html of a timed section: the flame scope, made from both sections
MARPLE_LIBEXEC= marple display -n -i short.marple -e 0 -o scope.html > /dev/null 2> "$T/err"; rc=$?
check "display: -o FILE.html -e 0 of a timed capture is its flame scope (exit $rc)" sh -c "test $rc -eq 0 && grep -q '\"rows\":50' scope.html"
