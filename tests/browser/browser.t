# Browser tests: every tests/browser/*.test.js, run with node against Debian's
# chromium (playwright-core).  Each prints PASS/FAIL lines itself.
. "$MARPLE_TOP/tests/lib.sh"
plan 235
B="$MARPLE_TOP/tests/browser"
# The pages' behaviour in a browser is the plain pass's to check; in CI's
# sanitizer pass the renderers that write them run sanitized in cli/ and
# export/ over the same inputs, and Chromium would only repeat the JS.
case "$MARPLE_BIN" in */sanitize) skip_rest "browser" "checked in the plain pass (make check)" ;; esac
if [ ! -d "$B/node_modules/playwright-core" ]; then
	fail "browser: playwright-core" "not installed (scripts/install-deps installs it)"; exit 0
fi
if [ ! -x /usr/bin/chromium ]; then
	fail "browser: chromium" "/usr/bin/chromium missing (scripts/install-deps installs it)"; exit 0
fi
found=0
for js in "$B"/*.test.js; do
	[ -f "$js" ] || continue
	found=1
	(cd "$T" && timeout 300 node "$js") || echo "FAIL: ${js##*/}: exited $?"
done
[ $found -eq 1 ] || skip "browser" "no browser tests yet"
