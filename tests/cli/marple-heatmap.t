# marple-heatmap: bucket counts checked against inputs counted by hand, the
# offset map of an event every 0.25 s, hostile names, golden SVGs, errors.
. "$MARPLE_TOP/tests/lib.sh"
plan 59
H="$MARPLE_TOP/tests/heatmap"

# cells SVG: one "col row count names" line per lit bucket, sorted.
cells() {
	sed -n 's/.*data-c="\([0-9]*\)" data-r="\([0-9]*\)" data-n="\([0-9]*\)" data-d="\([^"]*\)".*/\1 \2 \3 \4/p' "$1" | sort -n -k1,1 -k2,2
}

# Plain "time value" lines (trace2heatmap.pl input), 10 rows of 10 from 0 to 100,
# 1 s columns from the first line's time (0.1):
#   0.1 5 -> col 0 row 0;  0.5 15, 0.9 15 -> col 0 row 1;  1.2 95, 1.3 100 -> col 1
#   row 9 (100 = maxlat is drawn in the top row);  2.0 55 -> col 1 row 5;  2.5 120 -> left out.
marple-heatmap --stepsec 1 --maxlat 100 --rows 10 "$H/latency.in" > "$T/lat.svg" 2> "$T/lat.err"
cells "$T/lat.svg" | cut -d' ' -f1-3 > "$T/lat.cells"
printf '0 0 1\n0 1 2\n1 5 1\n1 9 2\n' > "$T/lat.want"
same "heatmap: plain lines, buckets counted by hand" "$T/lat.want" "$T/lat.cells"
check "heatmap: value above --maxlat reported" grep -q '1 above --maxlat left out' "$T/lat.err"
check "heatmap: header line of plain input skipped silently" test "$(grep -c 'not a' "$T/lat.err")" -eq 0
check "heatmap: SVG is well-formed" xmllint --noout "$T/lat.svg"

# trace2heatmap.pl options: --unitstime ms makes 1000 units one column.
printf '0 7\n999 7\n1000 7\n2500 7\n' | marple-heatmap --unitstime ms --steplat 5 --stepsec 1 > "$T/ms.svg"
cells "$T/ms.svg" | cut -d' ' -f1-3 > "$T/ms.cells"
printf '0 1 2\n1 1 1\n2 1 1\n' > "$T/ms.want"
same "heatmap: --unitstime ms and --steplat" "$T/ms.want" "$T/ms.cells"
printf '0 1\n10 2\n' | marple-heatmap --stepsec 5 --unitslabel ms --grid --title 'My <map>' > "$T/g.svg"
check "heatmap: --title escaped, --grid lines drawn" sh -c "grep -q 'My &lt;map&gt;' '$T/g.svg' && grep -q 'class=\"grid\"' '$T/g.svg' && xmllint --noout '$T/g.svg'"
check "heatmap: --stepsec 5 gives columns 0 and 2" test "$(cells "$T/g.svg" | cut -d' ' -f1 | tr '\n' ' ')" = "0 2 "

# A point section (memtime-like), --maxlat 100 --rows 10: 12 13 14 -> row 1, 40 41 -> row 4, 80 -> row 8.
marple-heatmap --stepsec 1 --maxlat 100 --rows 10 "$H/points.in" > "$T/p.svg"
cells "$T/p.svg" > "$T/p.cells"
printf '0 1 1 0:1\n0 4 1 1:1\n1 1 2 0:2\n1 4 1 1:1\n2 8 1 1:1\n' > "$T/p.want"
same "heatmap: point section, buckets and names counted by hand" "$T/p.want" "$T/p.cells"
check "heatmap: names table in the page" grep -q 'names: \["bash","python3"\]' "$T/p.svg"
# Without a range the row step starts at 0.5 (fits 12 in 50 rows) and doubles to 2 for 80.
marple-heatmap --stepsec 1 "$H/points.in" > "$T/pa.svg"
check "heatmap: automatic rows double their step to fit" grep -q 'rowstep: 2,' "$T/pa.svg"
check "heatmap: automatic rows: 80 in row 40" sh -c "grep -q 'data-c=\"2\" data-r=\"40\" data-n=\"1\"' '$T/pa.svg'"
check "heatmap: automatic rows: the first value (12) in row 6 too" sh -c "grep -q 'data-c=\"0\" data-r=\"6\" data-n=\"1\"' '$T/pa.svg'"
marple-heatmap --isolate bash "$H/points.in" > "$T/iso.svg"
check "heatmap: --isolate counts only that name" test "$(cells "$T/iso.svg" | awk '{n += $3} END {print n}')" -eq 3
marple-heatmap --by pid --maxlat 100 --rows 10 "$H/points.in" > "$T/by.svg"
check "heatmap: --by pid groups by a field" grep -q 'names: \["1","2","3"\]' "$T/by.svg"

# Offset heat map of a synthetic stream with an event every 0.25 s for 10 s:
# exactly four lit rows (0, 250, 500, 750 ms), each lit in all ten columns.
awk 'BEGIN { print "{\"marple\":1,\"interface\":\"synth\",\"datatype\":\"event\",\"start_ns\":1000000000,\"wall_ns\":1795262401000000000}"
	for (i = 0; i < 40; i++) printf "%.0f,tick,cpu0,comm=ticker,pid=42\n", 1000000000 + i * 250000000 }' > "$T/q.marple"
marple-heatmap "$T/q.marple" > "$T/q.svg"
sed -n 's/.*data-r="\([0-9]*\)".*/\1/p' "$T/q.svg" | sort -n | uniq -c | awk '{print $2, $1}' > "$T/q.rows"
printf '0 10\n12 10\n25 10\n37 10\n' > "$T/q.want"
same "heatmap: offset map of an event every 0.25 s has exactly four lit rows" "$T/q.want" "$T/q.rows"
marple-heatmap --offset --rows 4 "$T/q.marple" > "$T/q4.svg"
check "heatmap: --rows 4: every bucket lit once per second" test "$(cells "$T/q4.svg" | awk '$3 == 1' | wc -l)" -eq 40
marple-heatmap --offset --period 1m "$T/q.marple" > "$T/qm.svg"
check "heatmap: --period 1m: one column, offsets in seconds" sh -c "grep -q 'data-cols=\"1\"' '$T/qm.svg' && grep -q 'offset within each minute' '$T/qm.svg'"
marple-heatmap --color rank --highlight ticker "$T/q.marple" > "$T/qr.svg"
# (rank colours: every bucket holds 1 event, the top rank: the darkest blue, not red)
check "heatmap: --highlight uses another hue" test "$(sed -n 's/.*fill="\(#[0-9a-f]*\)" data-c.*/\1/p' "$T/qr.svg" | sort -u)" = "#0a1e8c"
check "heatmap: --highlight named above the map" grep -q 'highlight: ticker' "$T/qr.svg"

# Hostile names survive into a well-formed SVG, escaped.
marple-heatmap "$H/hostile.in" > "$T/h.svg" 2> "$T/h.err"
check "heatmap: hostile names: xmllint accepts the SVG" xmllint --noout "$T/h.svg"
check "heatmap: hostile names: no raw markup from names" sh -c "! grep -q '<script>alert' '$T/h.svg' && ! grep -q '</svg>.*</svg>' '$T/h.svg'"
check "heatmap: hostile names: only the tooltip and map scripts" test "$(grep -c '<script' "$T/h.svg")" -eq 3
check "heatmap: event without comm falls back to its track" grep -q '"cpu1"' "$T/h.svg"

# Golden SVGs (regenerate: REGEN=1 make check TESTS=marple-heatmap).
golden() {
	name=$1; shift
	TZ=UTC marple-heatmap "$@" > "$T/$name.svg" 2>/dev/null
	if [ -n "${REGEN:-}" ]; then cp "$T/$name.svg" "$H/$name.out"; fi
	same "heatmap: golden $name" "$H/$name.out" "$T/$name.svg"
}
golden latency --stepsec 1 --maxlat 100 --rows 10 --grid "$H/latency.in"
golden points --stepsec 1 --color rank "$H/points.in"
golden hostile --highlight 'a&b "q" '"'x'"' ]]>' "$H/hostile.in"

# Errors.
printf '{"marple":1,"interface":"callstack","datatype":"stack"}\n1#a;b\n' > "$T/st"
expect_exit "heatmap: stack section refused" 1 'holds stack records; marple-heatmap draws event and point' marple-heatmap "$T/st"
expect_exit "heatmap: empty input" 1 'no marple section' marple-heatmap /dev/null
printf '1 2\nbanana\n3 x\n4 5\n' > "$T/bad"
expect_exit "heatmap: bad plain lines are named and counted" 0 '2 bad lines skipped' marple-heatmap "$T/bad"
check "heatmap: bad line named with file and line" grep -q "$T/bad:2: not a" "$T/ee.err"
printf '{"marple":1,"interface":"x","datatype":"event"}\n1,a,b,comm=x\n' > "$T/ev1"
expect_exit "heatmap: latency map of events needs --field" 1 'needs --field' marple-heatmap --latency "$T/ev1"
printf '{"marple":1,"interface":"x","datatype":"event"}\n1000,io,cpu0,comm=dd,lat=250\n2000,io,cpu0,comm=dd,lat=x\n' > "$T/ev2"
expect_exit "heatmap: --field takes event values, bad ones counted" 0 '1 record without a numeric' marple-heatmap --latency --field lat "$T/ev2"
expect_exit "heatmap: --isolate of an absent name" 1 'nothing to draw' marple-heatmap --isolate nobody "$H/points.in"
expect_exit "heatmap: bad --period" 2 'period' marple-heatmap --period 2s "$H/points.in"
expect_exit "heatmap: bad --color" 2 'color' marple-heatmap --color pink "$H/points.in"
expect_exit "heatmap: bad --rows" 2 'rows' marple-heatmap --rows 0 "$H/points.in"
cat "$H/points.in" "$H/points.in" > "$T/two"
expect_exit "heatmap: second section skipped with a message" 0 'section 1 \(memtime\) not drawn' marple-heatmap "$T/two"
# marple-cpusched --every 1: a section an interval, each ended "interval" but
# the last, another collector's between them: every interval on one time axis
for i in 0 1 2; do
	t=$((5000000000 + i * 1000000000)) ended=interval
	[ "$i" -lt 2 ] || ended=duration
	echo "{\"marple\":1,\"interface\":\"cpusched\",\"datatype\":\"event\",\"host\":\"h\",\"start_ns\":$t}"
	k=0; while [ "$k" -lt $((i * 2 + 3)) ]; do k=$((k + 1)); echo "$((t + k * 10000000)),sched_switch,cpu0,comm=w$i"; done
	echo "{\"trailer\":1,\"end_ns\":$((t + 1000000000)),\"ended\":\"$ended\"}"
	[ "$i" -ne 0 ] || printf '%s\n' '{"marple":1,"interface":"other","datatype":"event","host":"h"}' '1,x,cpu0'
done > "$T/every"
marple-heatmap --offset "$T/every" > "$T/every.svg" 2> "$T/every.err"
check "heatmap: --every intervals: the events of all three (3 + 5 + 7), another collector's left out" sh -c "
	grep -q '15 events' '$T/every.svg' && grep -q 'section 1 (other) not drawn' '$T/every.err' && ! grep -q 'cpusched) not drawn' '$T/every.err'"
printf '%s\n' '{"marple":1,"interface":"memtime","datatype":"point","start_ns":1000000000}' '0.5,10,a' '{"trailer":1,"ended":"interval"}' \
	'{"marple":1,"interface":"memtime","datatype":"point","start_ns":3000000000}' '0.5,20,a' '{"trailer":1,"ended":"duration"}' > "$T/pevery"
marple-heatmap --stepsec 1 "$T/pevery" > "$T/pevery.svg" 2> "$T/pevery.err"
check "heatmap: --every intervals of points: x counts from each one's start (2 s apart)" sh -c "
	grep -q '2 points' '$T/pevery.svg' && [ ! -s '$T/pevery.err' ] && grep -q 'data-cols=\"3\"' '$T/pevery.svg' &&
	grep -q 'data-c=\"2\" data-r=\"[0-9]*\" data-n=\"1\"' '$T/pevery.svg'"
marple-heatmap -o "$T/o.svg" "$H/points.in"
check "heatmap: -o writes the file" xmllint --noout "$T/o.svg"

# --wall: offsets within wall-clock seconds.  The capture starts 0.3 s past a
# wall-clock second, events every whole second from the start: row 0 without
# --wall, row 15 (300-320 ms of 50 rows) with it.
awk 'BEGIN { print "{\"marple\":1,\"interface\":\"synth\",\"datatype\":\"event\",\"start_ns\":1000000000,\"wall_ns\":1795262401300000000}"
	for (i = 0; i < 5; i++) printf "%.0f,tick,cpu0,comm=cron,pid=9\n", 1000000000 + i * 1000000000 }' > "$T/w.marple"
marple-heatmap "$T/w.marple" > "$T/w0.svg"
marple-heatmap --wall "$T/w.marple" > "$T/w1.svg"
check "heatmap: without --wall offsets count from the start" test "$(cells "$T/w0.svg" | cut -d' ' -f2 | sort -u)" = 0
check "heatmap: --wall: offsets within wall-clock seconds" test "$(cells "$T/w1.svg" | cut -d' ' -f2 | sort -u)" = 15
printf '{"marple":1,"interface":"synth","datatype":"point","start_ns":1,"wall_ns":1795262401250000000}\n0,1,a\n1,1,a\n' > "$T/wp"
check "heatmap: --wall for points" test "$(marple-heatmap --offset --wall --rows 4 "$T/wp" | sed -n 's/.*data-r="\([0-9]*\)".*/\1/p' | sort -u)" = 1
expect_exit "heatmap: --wall needs wall_ns" 1 'needs start_ns and wall_ns' marple-heatmap --wall "$T/ev1"

# Bounded memory per bucket: 20 names in one bucket keep 16 exact counts and
# one "others" count; a --highlight name is always counted exactly.
awk 'BEGIN { print "{\"marple\":1,\"interface\":\"x\",\"datatype\":\"point\"}"
	for (i = 0; i < 20; i++) printf "0.5,1,p%02d\n", i; print "0.5,1,late"; print "0.5,1,late" }' > "$T/many"
marple-heatmap --highlight late "$T/many" > "$T/many.svg"
check "heatmap: 16 names per bucket and the rest as others" sh -c "grep 'data-c=' '$T/many.svg' | grep -q 'data-n=\"22\".*data-o=\"4\"'"
check "heatmap: highlight name counted exactly beyond 16 names" sh -c "grep 'data-c=' '$T/many.svg' | grep -q ' 0:2\"'"

# Too many columns: 3000 one-second columns become at most 1000 (4 s each);
# with --stepsec given they are kept.
awk 'BEGIN { print "{\"marple\":1,\"interface\":\"x\",\"datatype\":\"point\"}"
	for (i = 0; i < 3000; i++) printf "%d.5,%d,a\n", i, i % 7 }' > "$T/long"
marple-heatmap "$T/long" > "$T/long.svg"
check "heatmap: columns widen past --maxcols" sh -c "grep -q 'data-cols=\"750\"' '$T/long.svg' && grep -q 'colw: 4,' '$T/long.svg'"
check "heatmap: every point still counted when columns widen" test "$(cells "$T/long.svg" | awk '{n += $3} END {print n}')" -eq 3000
marple-heatmap --stepsec 1 "$T/long" > "$T/long1.svg"
check "heatmap: --stepsec keeps its columns" grep -q 'data-cols="3000"' "$T/long1.svg"

# An event before the header's start_ns lands in column -1, not lost.
printf '{"marple":1,"interface":"x","datatype":"event","start_ns":5000000000}\n4500000000,a,cpu0,comm=early\n5100000000,a,cpu0,comm=on\n' > "$T/early"
marple-heatmap "$T/early" > "$T/early.svg"
check "heatmap: event before the start in column -1" sh -c "grep -q 'c0: -1,' '$T/early.svg' && grep -q '>-1 s<' '$T/early.svg' && test \"\$(grep -c 'data-c=' '$T/early.svg')\" -eq 2"

# Hostile header strings (interface, host, units) are escaped too.
printf '%s\n' '{"marple":1,"interface":"<x>&","datatype":"point","host":"]]></script><b>","wall_ns":1795262401000000000,"start_ns":1,"units":{"x":"s","y":"<u>\u2028\"'"'"'"}}' '1,2,a' > "$T/hh"
marple-heatmap --unitslabel '</text>' --title '<t>' "$T/hh" > "$T/hh1.svg"
marple-heatmap "$T/hh" > "$T/hh2.svg"
check "heatmap: hostile header strings: well-formed SVG" sh -c "xmllint --noout '$T/hh1.svg' && xmllint --noout '$T/hh2.svg'"
check "heatmap: hostile header strings: no raw markup" sh -c "! grep -q '<b>\|<u>\|<x>\|<t>' '$T/hh1.svg' '$T/hh2.svg'"
marple-stackplot "$T/hh" > "$T/hh3.svg"
check "stackplot: hostile header strings: well-formed, no raw markup" sh -c "xmllint --noout '$T/hh3.svg' && ! grep -q '<b>\|<u>\|<x>' '$T/hh3.svg'"

# The y axis says what the values are (the header's labels.y) and its labels
# fit left of the map, clear of the rotated axis title, however long.
printf '{"marple":1,"interface":"disklat","datatype":"point","start_ns":0,"units":{"x":"s","y":"ms"},"labels":{"x":"time","y":"latency"}}\n0.5,123456789.5,dd\n1.5,3,dd\n' > "$T/big"
marple-heatmap --rows 5 "$T/big" > "$T/big.svg" 2>/dev/null
check "heatmap: y axis title from the header's label" grep -q '>latency (ms)</text>' "$T/big.svg"
x0=$(sed -n 's/.*, x0: \([0-9.]*\),.*/\1/p' "$T/big.svg")
long=$(sed -n 's/.*text-anchor="end" class="axis">\([0-9.e+]* m*s\)<\/text>.*/\1/p' "$T/big.svg" | awk '{ if (length($0) > n) n = length($0) } END { print n }')
if awk -v x="$x0" -v n="$long" 'BEGIN { exit !(x - 4 - 6.6 * n >= 26) }'; then pass "heatmap: the longest y label ($long characters) fits left of the map (x0 $x0)"
else fail "heatmap: the longest y label fits left of the map" "x0 ${x0:-?}, longest label ${long:-?} characters"; fi

# A short section's offset map (5 s: 5 columns) as a person sees it in a
# 1,400 px report: the map uses most of the page (not 5 x 24 px at its left),
# the centred subtitle (a long host name) starts inside the page (about 7 px a
# character at most), and the y axis title names no unit its ticks contradict.
awk 'BEGIN { print "{\"marple\":1,\"interface\":\"cpusched\",\"datatype\":\"event\",\"start_ns\":1000000000,\"wall_ns\":1764160000000000000,\"host\":\"build-host-with-a-rather-long-name.example.org\"}"
	for (i = 0; i < 400; i++) printf "%.0f,sched_switch,cpu0,comm=bash\n", 1000000000 + i * 12345678 }' > "$T/short"
marple-heatmap "$T/short" > "$T/short.svg"
sw=$(sed -n 's/^<svg [^>]*width="\([0-9.]*\)".*/\1/p' "$T/short.svg")
mw=$(sed -n 's/.*<rect x="[0-9.]*" y="[0-9.]*" width="\([0-9.]*\)" height="[0-9.]*" fill="none".*/\1/p' "$T/short.svg")
if awk -v s="$sw" -v m="$mw" 'BEGIN { exit !(m >= 1000 && m >= 0.75 * s) }'; then pass "heatmap: a 5-column offset map is $mw px wide in a $sw px page"
else fail "heatmap: a 5-column offset map uses most of the page" "map ${mw:-?} px of ${sw:-?}"; fi
sub=$(sed -n 's/^<text x="\([0-9.]*\)" y="42.0" text-anchor="middle" class="sub">\([^<]*\)<.*/\1 \2/p' "$T/short.svg")
if printf '%s\n' "$sub" | awk -v w="$sw" '{ x = $1; n = length($0) - length($1) - 1 } END { exit !(NR == 1 && x - 3.6 * n >= 0 && x + 3.6 * n <= w) }'
then pass "heatmap: the subtitle lies inside the page"
else fail "heatmap: the subtitle lies inside the page" "page ${sw:-?} px, subtitle: ${sub:-none}"; fi
check "heatmap: the offset axis is titled without a unit (its ticks carry theirs)" sh -c "grep -q '>offset within each second</text>' '$T/short.svg' && ! grep -q 'offset in 1s (ms)' '$T/short.svg'"
ticks=$(sed -n 's/.*text-anchor="end" class="axis">\([^<]*\)<\/text>.*/\1/p' "$T/short.svg" | grep -v '^count' | tr '\n' '|')
case $ticks in "0 s|40 ms|80 ms|"*"|960 ms|1 s|") pass "heatmap: offset ticks say their units ($ticks)" ;;
*) fail "heatmap: offset ticks say their units" "$ticks" ;; esac
