# marple-flamescope: the page from a timed section, its data escaped, and errors.
. "$MARPLE_TOP/tests/lib.sh"
plan 19
S="$DATA/timed.marple"

marple-flamescope "$S" > "$T/p.html" 2> "$T/p.err"; rc=$?
check "flamescope: exit 0 on a timed section" test "$rc" -eq 0
check "flamescope: one HTML page with its script inline, no external resource" sh -c "grep -q '^<!DOCTYPE html>' '$T/p.html' && ! grep -Eq '(src|href)=' '$T/p.html'"
check "flamescope: frame names are JSON strings, escaped for <script>" grep -qF '"std::map\u003cint, char\u003e::find"' "$T/p.html"
check "flamescope: another collector's timed section is left out, and named" grep -q '1 timed stack section of another collector.*offcpu at .*timed.marple:16.*marple-cat -i' "$T/p.err"
check "flamescope: rows and columns of a 4 s capture" grep -q '"rows":50,"cols":4' "$T/p.html"
marple-flamescope --column 2 --row 100 "$S" > "$T/p2.html" 2>/dev/null
check "flamescope: --column and --row" grep -q '"column_s":2.0,"row_ms":100.0,"rows":20,"cols":2' "$T/p2.html"
expect_exit "flamescope: an untimed capture exits 1 and says why" 1 'no timed stack section.*--timed' marple-flamescope "$DATA/sample.marple"
expect_exit "flamescope: a row longer than a column is a usage error" 2 'longer than' marple-flamescope --column 0.01 --row 20 "$S"
expect_exit "flamescope: bad --color is a usage error" 2 'not quantile, linear or rank' marple-flamescope --color blue "$S"
# many names and threads: the page's script (data and code) must parse
awk 'BEGIN { print "{\"marple\":1,\"interface\":\"callstack\",\"datatype\":\"stack\",\"timed\":\"stacks\",\"start_ns\":0}"
	for (s = 0; s < 300; s++) printf "1#p%d;main;fn_%d;\"q\\%d</script>\n", s % 7, s, s
	print "{\"marple\":1,\"interface\":\"callstack\",\"datatype\":\"event\",\"timed\":\"samples\",\"start_ns\":0}"
	for (s = 0; s < 300; s++) printf "%d,sample,cpu0,stack=%d,pid=%d,tid=%d\n", s * 7000000, s, s % 7, s }' > "$T/many.marple"
marple-flamescope "$T/many.marple" > "$T/many.html" 2>/dev/null
sed -n '/^<script>$/,/^<\/script>$/p' "$T/many.html" | sed '1d;$d' > "$T/many.js"
if command -v node >/dev/null 2>&1; then
	check "flamescope: the page's script parses with 300 names and threads" node --check "$T/many.js"
else
	skip "flamescope: the page's script parses" "no node"
fi

# column_weights PAGE: the heat map's weight per column (of 50 rows), as the
# page's "cellw" array holds it (gzip + base64 over lines, one byte a cell here)
column_weights() {
	awk '/^cellw:\{w:1,/ { on = 1; sub(/^[^"]*"/, "") } on { if (sub(/".*/, "")) on = 0; print }' "$1" | base64 -d | gzip -dc |
		od -An -tu1 -v | tr -s ' ' '\n' | awk 'NF { c[int(n / 50)] += $1; n++ } END { for (i = 0; i < n / 50; i++) printf "%s%d", i ? " " : "", c[i]; print "" }'
}
# Three intervals as --every writes them (consecutive starts, "ended":"interval"),
# the third after a second with no capture; each section numbers its stacks
# its own way (work;main;shared is stack 1 in the first, 0 in the third).
# interval_one: 5 samples in second 0, interval_two: 7 in second 1, shared: 2 in
# second 0 and 3 in second 3, interval_three: 9 in second 3.
awk 'function section(start, stacks, samples, n, lost) {
		printf "{\"marple\":1,\"interface\":\"callstack\",\"datatype\":\"stack\",\"timed\":\"stacks\",\"start_ns\":%.0f,\"clock\":\"monotonic\",\"units\":{\"weight\":\"samples\"}}\n%s", start, stacks
		printf "{\"trailer\":1,\"end_ns\":%.0f,\"ended\":\"interval\"}\n", start + 1e9
		printf "{\"marple\":1,\"interface\":\"callstack\",\"datatype\":\"event\",\"timed\":\"samples\",\"start_ns\":%.0f,\"clock\":\"monotonic\"}\n%s", start, samples
		printf "{\"trailer\":1,\"end_ns\":%.0f,\"records\":%d,\"lost\":%d,\"ended\":\"interval\"}\n", start + 1e9, n, lost
	}
	function samples(start, stack, n, tid,   i, s) {
		for (i = 0; i < n; i++) s = s sprintf("%.0f,sample,cpu0,stack=%d,pid=10,tid=%d\n", start + i * 3e7 + 1000, stack, tid)
		return s
	}
	BEGIN { t = 100e9
		section(t, "5#work;main;interval_one\n2#work;main;shared\n", samples(t, 0, 5, 11) samples(t + 5e8, 1, 2, 11), 7, 1)
		section(t + 1e9, "7#work;main;interval_two\n", samples(t + 1e9, 0, 7, 12), 7, 0)
		section(t + 3e9, "3#work;main;shared\n9#work;main;interval_three\n", samples(t + 3e9, 1, 9, 13) samples(t + 3.5e9, 0, 3, 13), 12, 0) }' > "$T/every.marple"
marple-flamescope "$T/every.marple" > "$T/every.html" 2> "$T/every.err"; rc=$?
check "flamescope: 3 intervals: exit 0, nothing left out" sh -c "[ $rc -eq 0 ] && [ ! -s '$T/every.err' ]"
check "flamescope: 3 intervals: 4 columns on one time axis" grep -q '"rows":50,"cols":4' "$T/every.html"
check "flamescope: 3 intervals: every interval's samples in its columns, a gap where none was captured" test "$(column_weights "$T/every.html")" = "7 7 0 12"
check "flamescope: 3 intervals: samples and lost summed over the sections" grep -q '"samples":26,"lost":1,.*"sections":3' "$T/every.html"
check "flamescope: 3 intervals: a stack of two intervals is one stack (frame names once)" sh -c "[ \$(grep -o '\"interval_three\"' '$T/every.html' | wc -l) -eq 1 ] && [ \$(grep -o '\"shared\"' '$T/every.html' | wc -l) -eq 1 ]"
# the same intervals as one file each (marple collect --every), given in order
awk '/"timed":"stacks"/ { n++ } { print > (dir "/part" n) }' dir="$T" "$T/every.marple"
marple-flamescope "$T/part1" "$T/part2" "$T/part3" > "$T/parts.html" 2> /dev/null
check "flamescope: 3 interval files: the same columns" test "$(column_weights "$T/parts.html")" = "7 7 0 12"

# a section whose clock started over (another boot: start_ns smaller) is
# placed by its wall_ns: 2 s after the first's, so in the third column
printf '%s\n' '{"marple":1,"interface":"callstack","datatype":"stack","timed":"stacks","start_ns":900000000000,"wall_ns":1700000000000000000,"clock":"monotonic"}' \
	'1#w;before' '{"trailer":1,"ended":"interval"}' \
	'{"marple":1,"interface":"callstack","datatype":"event","timed":"samples","start_ns":900000000000}' '900000001000,sample,cpu0,stack=0,pid=1,tid=1' \
	'{"trailer":1,"ended":"interval"}' \
	'{"marple":1,"interface":"callstack","datatype":"stack","timed":"stacks","start_ns":5000000000,"wall_ns":1700000002000000000,"clock":"monotonic"}' \
	'2#w;after' '{"trailer":1}' \
	'{"marple":1,"interface":"callstack","datatype":"event","timed":"samples","start_ns":5000000000}' '5000001000,sample,cpu0,stack=0,pid=1,tid=1' \
	'5100001000,sample,cpu0,stack=0,pid=1,tid=1' '{"trailer":1}' > "$T/reboot.marple"
marple-flamescope "$T/reboot.marple" > "$T/reboot.html" 2> /dev/null
check "flamescope: a section of another boot is placed by its wall clock" test "$(column_weights "$T/reboot.html")" = "1 0 2"

# intervals of hours apart make columns past what a browser draws: said, with a --column
printf '%s\n' '{"marple":1,"interface":"c","datatype":"stack","timed":"stacks","start_ns":1}' '1#a' '{"trailer":1}' \
	'{"marple":1,"interface":"c","datatype":"event","timed":"samples","start_ns":1}' '2,sample,cpu0,stack=0' \
	'20000000000000,sample,cpu0,stack=0' > "$T/wide.marple"
expect_exit "flamescope: 20000 columns: more than a browser draws, and the --column that fits" 0 \
	'20000 columns of 1 s: more than a browser draws.*--column 20 ' marple-flamescope -o "$T/wide.html" "$T/wide.marple"

# a real capture: marple-callstack --every 1 --timed 3 of a busy process
if is_root && [ -x "$MARPLE_BIN/workloads/phases" ]; then
	"$MARPLE_BIN/workloads/phases" 3 & wl=$!
	marple-callstack --every 1 --timed -F 199 -p "$wl" 3 > "$T/real.marple" 2> "$T/real.err"
	kill "$wl" 2> /dev/null; wait "$wl" 2> /dev/null
	marple-flamescope "$T/real.marple" > "$T/real.html" 2>> "$T/real.err"
	w=$(column_weights "$T/real.html")
	nsec=$(grep -c '"timed":"samples"' "$T/real.marple")
	# the first interval ends at the next whole second: 3 or 4 sections; the
	# columns after the first hold samples of the later ones
	if [ "$nsec" -ge 3 ] && echo "$w" | awk '{ exit !(NF >= 3 && $2 > 0 && $3 > 0) }'; then
		pass "flamescope: callstack --every 1 --timed 3: every interval drawn ($nsec sections; columns $w)"
	else
		fail "flamescope: callstack --every 1 --timed 3: every interval drawn" "$nsec sections; columns '$w'; $(tail -c 300 "$T/real.err" | tr '\n' ' ')"
	fi
else
	skip "flamescope: callstack --every 1 --timed 3: every interval drawn" "not root, or no workloads built"
fi
