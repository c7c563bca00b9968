# marple-treemap: a self-contained page, escaping, exit codes.
. "$MARPLE_TOP/tests/lib.sh"
plan 17
G="$MARPLE_TOP/tests/flamegraph"

marple-treemap "$G/basic.in" > "$T/t.html"
check "treemap: writes an HTML page" grep -q '^<!DOCTYPE html>' "$T/t.html"
check "treemap: self-contained (no src= or href=)" sh -c "! grep -Eq '(src|href)=' '$T/t.html'"
check "treemap: one script element" test "$(grep -c '<script' "$T/t.html")" -eq 1
marple-treemap --title '</title><script>alert(1)</script>' "$G/hostile.in" > "$T/h.html"
check "treemap: hostile title and names escaped" test "$(grep -c '<script' "$T/h.html")" -eq 1
check "treemap: no raw </script> from names" test "$(grep -c '</script>' "$T/h.html")" -eq 1
marple-cat -s 0 "$DATA/sample.marple" | marple-treemap > "$T/s.html"
check "treemap: stack section, unit from the header" grep -q 'var C={unit:"samples"}' "$T/s.html"
grep -q 'std::map\\u003cint, char\\u003e::find' "$T/s.html" && pass "treemap: names from streams kept exactly" || fail "treemap: names from streams kept exactly" "not found"
marple-treemap --depth 1 "$G/basic.in" > "$T/d.html"
check "treemap --depth 1: only the first level" grep -q 'var D=\[0,-1,186,1,0,12,2,0,143,3,0,30,4,0,1\];' "$T/d.html"
marple-treemap --countname bytes "$G/basic.in" | grep -q 'unit:"bytes"' && pass "treemap --countname" || fail "treemap --countname" "unit not set"
expect_exit "treemap: empty input exits 1" 1 'no usable stacks' marple-treemap /dev/null
marple-treemap "$DATA/sample.marple" > "$T/mixed.html" 2> "$T/mixed.err"; rc=$?
check "treemap: mixed input: the stack section drawn, the others named and skipped" \
	sh -c "[ $rc -eq 0 ] && grep -q '_PyEval_EvalFrameDefault' '$T/mixed.html' && test \$(grep -c 'not stacks: skipped' '$T/mixed.err') -eq 2"
marple-cat -s 2 "$DATA/sample.marple" > "$T/pt.marple"
expect_exit "treemap: only a point section: exit 1" 1 'no stack section, nothing to draw' marple-treemap "$T/pt.marple"
expect_exit "treemap: bad depth" 2 'depth' marple-treemap --depth 0 "$G/basic.in"
expect_exit "treemap: bad option" 2 'Try' marple-treemap --frobnicate
marple-treemap -o "$T/o.html" "$G/basic.in"; same_ok "treemap -o FILE" $? "$T/t.html" "$T/o.html"

# By hand, the page is titled as marple display titles it: the first stack
# section's interface and host; folded text has neither: "Tree Map".
printf '{"marple":1,"interface":"mallocstacks","datatype":"stack","host":"web<1>"}\n5#app;main;grow\n' | marple-treemap > "$T/def.html"
check "treemap: default title 'mallocstacks on web<1>' (escaped), in the tab and the heading" \
	sh -c "grep -q '<title>mallocstacks on web&lt;1&gt;</title>' '$T/def.html' && grep -q '<h1>mallocstacks on web&lt;1&gt;</h1>' '$T/def.html'"
printf 'app;main 3\n' | marple-treemap > "$T/fold.html"
check "treemap: folded text keeps 'Tree Map'" grep -q '<h1>Tree Map</h1>' "$T/fold.html"
