# The pages' JavaScript lives in real .js files (renderers/*.js, lib/render/*.js)
# that the Makefile turns into C strings.  Each file must parse (node --check),
# and the page its renderer writes must carry it line for line: a quoting slip
# in the conversion would show here, not as a page that silently does nothing.
. "$MARPLE_TOP/tests/lib.sh"
plan 17	# two cases per .js file (8), and timefmt.js's table
FG="$MARPLE_TOP/tests/flamegraph/basic.in"

# carries NAME JS PAGE: every line of JS appears in PAGE, in order, consecutively.
carries() {
	if awk 'NR == FNR { js[n++] = $0; next }
		{ if ($0 == js[m]) { if (++m == n) found = 1 } else m = ($0 == js[0]) }
		END { exit !found }' "$2" "$3"; then pass "$1"; else
		fail "$1" "the page does not contain ${2##*/} verbatim"; fi
}

# page_for X.js: the command whose page embeds it.
page_for() {
	case $1 in
	flamegraph.js) marple-flamegraph "$FG" ;;
	treemap.js) marple-treemap "$FG" ;;
	eventplot.js) marple-eventplot "$MARPLE_TOP/tests/bad-input/ok-event.marple" ;;
	stackplot.js) marple-stackplot "$MARPLE_TOP/tests/stackplot/mem.in" ;;
	flamescope.js) marple-flamescope "$MARPLE_TOP/tests/data/timed.marple" 2>/dev/null ;;
	heatgrid.js | svgtip.js | timefmt.js) marple-heatmap "$MARPLE_TOP/tests/heatmap/latency.in" ;;
	*) return 3 ;;
	esac
}

for js in "$MARPLE_TOP"/renderers/*.js "$MARPLE_TOP"/lib/render/*.js; do
	name=${js##*/}
	if node --check "$js" >"$T/node.err" 2>&1; then pass "$name parses"; else
		fail "$name parses" "$(head -n 5 "$T/node.err" | tr '\n' ' ')"; fi
	page_for "$name" >"$T/page" 2>"$T/page.err"
	rc=$?
	if [ "$rc" -eq 3 ]; then
		fail "$name in its page" "no renderer known for it: add it to page_for in ${0##*/}"
	elif [ "$rc" -ne 0 ]; then
		fail "$name in its page" "renderer exited $rc: $(head -c 300 "$T/page.err" | tr '\n' ' ')"
	else
		carries "$name in its page" "$js" "$T/page"
	fi
done

# timefmt.js writes times as timefmt.c does (tests/unit/test_timefmt.c has the
# same table): an axis and a tooltip never disagree.
if node -e "$(cat "$MARPLE_TOP/lib/render/timefmt.js")
var want = [[0, 3, '0 s'], [850, 3, '850 ns'], [12345, 3, '12.3 \u00b5s'], [4.5e6, 3, '4.5 ms'],
  [12345678, 3, '12.3 ms'], [100e6, 3, '100 ms'], [1.234e9, 3, '1.23 s'], [1560e9, 3, '1560 s'],
  [999.96e6, 3, '1 s'], [1234567891, 7, '1.234568 s'], [-2e6, 3, '-2 ms']], bad = [];
want.forEach(function (w) { var g = marpleTime(w[0], w[1]); if (g !== w[2]) bad.push(w[0] + ': ' + g + ' (wanted ' + w[2] + ')'); });
if (marpleTimeRes(1560.02e9, 1e6) !== '1560.02 s') bad.push('marpleTimeRes: ' + marpleTimeRes(1560.02e9, 1e6));
if (bad.length) { console.log(bad.join('; ')); process.exit(1); }" >"$T/tf.out" 2>&1; then pass "timefmt.js: the same times as timefmt.c"
else fail "timefmt.js: the same times as timefmt.c" "$(head -c 300 "$T/tf.out")"; fi
