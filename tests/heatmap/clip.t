# marple-heatmap's y range and column width, as a person sees them: a few
# outliers do not squash the picture (the top row holds everything above the
# 99th percentile and says so), nothing is dropped, --ylog, and a short capture
# gets about 150 columns rather than a 3-column strip.
. "$MARPLE_TOP/tests/lib.sh"
plan 26

# cells SVG: one "row count" line per lit bucket.
cells() { sed -n 's/.*data-r="\([0-9]*\)" data-n="\([0-9]*\)".*/\1 \2/p' "$1"; }
total() { cells "$1" | awk '{ n += $2 } END { print n + 0 }'; }
# ylabels SVG: the y axis labels, bottom to top.
ylabels() { sed -n 's/.*text-anchor="end" class="axis">\([^<]*\)<\/text>.*/\1/p' "$1" | grep -v '^count'; }
GE=$(printf '\342\211\245')	# the "greater than or equal" sign, UTF-8

# 1000 disk latencies over 3 s: 990 of 1 to 10 ms, and 10 outliers of 1 to 10 s.
awk 'BEGIN { print "{\"marple\":1,\"interface\":\"disklat\",\"datatype\":\"point\",\"start_ns\":0,\"units\":{\"x\":\"s\",\"y\":\"ms\"},\"labels\":{\"x\":\"time\",\"y\":\"latency\"}}"
	for (i = 0; i < 1000; i++) { v = i % 10 + 1; if (i % 100 == 50) v = 1000 * (i / 100 + 0.5); printf "%.3f,%g,dd\n", i * 0.003, v } }' > "$T/lat"
sed -n 's/^[0-9.]*,\([0-9.]*\),.*/\1/p' "$T/lat" > "$T/values"

marple-heatmap "$T/lat" > "$T/clip.svg" 2> "$T/clip.err"
check "clip: the SVG is well-formed" xmllint --noout "$T/clip.svg"
top=$(ylabels "$T/clip.svg" | tail -n 1)
case $top in "$GE "*" ms") pass "clip: the top row is labelled '$top'" ;; *) fail "clip: the top row is labelled '$GE X ms'" "top y label is '$top'" ;; esac
c=$(printf '%s\n' "$top" | sed "s/^$GE \([0-9.]*\) ms$/\1/")
if awk -v c="$c" 'BEGIN { exit !(c >= 10 && c <= 10.5) }'; then pass "clip: at the 99th percentile (10 ms), rounded up: $c"
else fail "clip: at the 99th percentile (10 ms)" "label value '$c'"; fi
check "clip: every point drawn (the cells' counts sum to 1000)" test "$(total "$T/clip.svg")" -eq 1000
above=$(awk -v c="$c" '$1 >= c { n++ } END { print n + 0 }' "$T/values")
check "clip: the top row (49) holds the $above points at or above $c ms" test "$(cells "$T/clip.svg" | awk '$1 == 49 { n += $2 } END { print n + 0 }')" -eq "$above"
check "clip: the subtitle counts the top row" grep -q "top row: $above points $GE $c ms, above the 99th percentile" "$T/clip.svg"
check "clip: nothing reported left out" test ! -s "$T/clip.err"
check "clip: the tooltip's ranges end with the open top row" sh -c "grep -q 'edges: \[0,[0-9.,]*,$c,null\]' '$T/clip.svg'"
check "clip: the top row's tooltip says it is clipped" grep -q "(the clipped top row)" "$T/clip.svg"
# the labels below the top one are 1-2-5 multiples rising upwards
ylabels "$T/clip.svg" | sed '$d' | sed 's/ ms$//' > "$T/below"
if awk 'NR > 1 && $1 <= p { bad = 1 } { p = $1 } END { exit bad || NR < 3 }' "$T/below"; then pass "clip: the other labels rise ($(tr '\n' ' ' < "$T/below"))"
else fail "clip: the other labels rise" "$(tr '\n' ' ' < "$T/below")"; fi

# --clip 90: more in the top row, still every point drawn.
marple-heatmap --clip 90 "$T/lat" > "$T/c90.svg"
c90=$(ylabels "$T/c90.svg" | tail -n 1 | sed "s/^$GE \([0-9.]*\) ms$/\1/")
a90=$(awk -v c="$c90" '$1 >= c { n++ } END { print n + 0 }' "$T/values")
check "clip 90: the top row holds the $a90 points at or above $c90 ms" test "$(cells "$T/c90.svg" | awk '$1 == 49 { n += $2 } END { print n + 0 }')" -eq "$a90"
check "clip 90: the cells' counts sum to 1000" test "$(total "$T/c90.svg")" -eq 1000

# --no-clip and --clip 100: rows up to the largest value, no clipped row.
marple-heatmap --no-clip "$T/lat" > "$T/nc.svg"
marple-heatmap --clip 100 "$T/lat" > "$T/c100.svg"
check "no-clip: no clipped row, no note" sh -c "! grep -q 'top row: \|edges: \[' '$T/nc.svg' && ! grep -q 'class=\"axis\">$GE' '$T/nc.svg'"
check "no-clip: the top label reaches the largest value (9.5 s)" awk 'END { v = $1 * ($2 == "s" ? 1000 : 1); exit !(v >= 9500) }' "$(ylabels "$T/nc.svg" > "$T/ncl"; echo "$T/ncl")"
check "no-clip: --clip 100 is the same picture" cmp -s "$T/nc.svg" "$T/c100.svg"
check "no-clip: the cells' counts sum to 1000" test "$(total "$T/nc.svg")" -eq 1000

# An explicit range wins over clipping.
marple-heatmap --maxlat 20 "$T/lat" > "$T/ml.svg" 2> "$T/ml.err"
check "clip: --maxlat gives its own range (no clipped row)" sh -c "! grep -q 'top row: ' '$T/ml.svg' && grep -q 'and 10 above --maxlat left out' '$T/ml.err'"

# --ylog: 1-2-5 labels per decade, rising; values 1 ms and 5 ms in distinct rows.
marple-heatmap --ylog "$T/lat" > "$T/log.svg"
ylabels "$T/log.svg" > "$T/logl"
check "ylog: 1, 2 and 5 ms labelled" sh -c "grep -qx '1 ms' '$T/logl' && grep -qx '2 ms' '$T/logl' && grep -qx '5 ms' '$T/logl'"
check "ylog: clipped as well (the top label)" sh -c "tail -n 1 '$T/logl' | grep -q '^$GE '"
check "ylog: the cells' counts sum to 1000" test "$(total "$T/log.svg")" -eq 1000
check "ylog: 10 lit rows below the top one (one a value)" test "$(cells "$T/log.svg" | awk '$1 < 49 { print $1 }' | sort -u | wc -l)" -eq 10

# Columns from the time span: 3 s -> 0.02 s columns (150); --stepsec wins; 300 s -> 1 s.
check "columns: a 3 s capture gets 150 columns of 0.02 s" sh -c "grep -q 'data-cols=\"150\"' '$T/clip.svg' && grep -q 'colw: 0.02,' '$T/clip.svg'"
marple-heatmap --stepsec 1 "$T/lat" > "$T/s1.svg"
check "columns: --stepsec 1 still gives 3 columns" grep -q 'data-cols="3"' "$T/s1.svg"
awk 'BEGIN { print "{\"marple\":1,\"interface\":\"x\",\"datatype\":\"point\"}"; for (i = 0; i < 300; i++) printf "%d.5,1,a\n", i }' > "$T/long"
check "columns: a 300 s capture keeps 1 s columns" sh -c "marple-heatmap '$T/long' | grep -q 'data-cols=\"300\"'"

# a section 30 s long whose records span 2 s: columns of the section's time
# (0.2 s), as marple display drew it, not 0.02 s ones of the records' span
awk 'BEGIN { print "{\"marple\":1,\"interface\":\"disklat\",\"datatype\":\"point\",\"start_ns\":1000000000}"
	for (i = 0; i < 200; i++) printf "%.3f,%d,sda\n", 1 + i * 0.01, i % 13 + 1
	print "{\"trailer\":1,\"records\":200,\"end_ns\":31000000000}" }' > "$T/span"
check "columns: a 30 s section's records over 2 s: 0.2 s columns (10 of them)" sh -c "marple-heatmap '$T/span' | grep -q 'data-cols=\"10\"'"

expect_exit "clip: --clip 0 refused" 2 'clip' marple-heatmap --clip 0 "$T/lat"
