# Browser tests: every tests/browser/*.test.js, run with node against Debian's
# chromium (playwright-core).  Each prints PASS/FAIL lines itself.
. "$MARPLE_TOP/tests/lib.sh"
plan 227
B="$MARPLE_TOP/tests/browser"
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
