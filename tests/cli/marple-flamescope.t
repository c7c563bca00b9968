# marple-flamescope: the page from a timed section, its data escaped, and errors.
. "$MARPLE_TOP/tests/lib.sh"
plan 10
S="$DATA/timed.marple"

marple-flamescope "$S" > "$T/p.html" 2> "$T/p.err"; rc=$?
check "flamescope: exit 0 on a timed section" test "$rc" -eq 0
check "flamescope: one HTML page with its script inline, no external resource" sh -c "grep -q '^<!DOCTYPE html>' '$T/p.html' && ! grep -Eq '(src|href)=' '$T/p.html'"
check "flamescope: frame names are JSON strings, escaped for <script>" grep -qF '"std::map\u003cint, char\u003e::find"' "$T/p.html"
check "flamescope: only the first timed section is drawn, and it says so" grep -q 'only the first timed stack section' "$T/p.err"
check "flamescope: rows and columns of a 4 s capture" grep -q '"rows":50,"cols":4' "$T/p.html"
marple-flamescope --column 2 --row 100 "$S" > "$T/p2.html" 2>/dev/null
check "flamescope: --column and --row" grep -q '"column_s":2.0,"row_ms":100.0,"rows":20,"cols":2' "$T/p2.html"
expect_exit "flamescope: an untimed capture exits 1 and says why" 1 'no timed stack section.*--timed' marple-flamescope "$DATA/sample.marple"
expect_exit "flamescope: a row longer than a column is a usage error" 2 'longer than' marple-flamescope --column 0.01 --row 20 "$S"
expect_exit "flamescope: bad --color is a usage error" 2 'not linear or rank' marple-flamescope --color blue "$S"
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
