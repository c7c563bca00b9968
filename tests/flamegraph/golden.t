# marple-flamegraph golden files: tests/flamegraph/CASE.in (+ CASE.args) must
# give CASE.out byte for byte (regen.sh rewrites them), and every output must
# be well-formed XML (xmllint), hostile names and options included.
. "$MARPLE_TOP/tests/lib.sh"
plan 27
G="$MARPLE_TOP/tests/flamegraph"
have_xmllint=1
command -v xmllint >/dev/null 2>&1 || have_xmllint=0
for in in "$G"/*.in; do
	c=$(basename "$in" .in)
	args=
	[ -f "$G/$c.args" ] && args=$(cat "$G/$c.args")
	# shellcheck disable=SC2086
	marple-flamegraph $args "$in" > "$T/$c.svg" 2> "$T/$c.err"
	rc=$?
	if [ $rc -ne 0 ]; then fail "flamegraph golden $c" "exit $rc: $(head -c 200 "$T/$c.err")"; continue; fi
	same "flamegraph golden $c" "$G/$c.out" "$T/$c.svg"
	if [ $have_xmllint -eq 1 ]; then
		check "flamegraph $c: well-formed XML (xmllint)" xmllint --noout "$T/$c.svg"
	else
		fail "flamegraph $c: xmllint" "xmllint missing (libxml2-utils)"
	fi
done
# Hostile names and options never reach the markup raw.
h="$T/hostile.svg"
check "hostile: no raw <script> from names or title" sh -c "! grep -q '<script>alert' '$h'"
check "hostile: only our own script element" test "$(grep -c '<script' "$h")" -eq 1
check "hostile: title escaped" grep -q '<text id="title" x="600.0" y="24">&lt;script&gt;alert(1)&lt;/script&gt;&amp;amp;</text>' "$h"
check "hostile: font attribute cannot be broken out of" grep -q 'font-family="x&quot;onload=&quot;alert(1),sans-serif"' "$h"
check "hostile: control bytes and invalid UTF-8 replaced" grep -q "$(printf 'ctl\357\277\275\357\277\275\357\277\275<')" "$h"
check "hostile: ]]> inside the script data is escaped" test "$(grep -c ']]>' "$h")" -eq 1
# Deterministic.
marple-flamegraph "$G/basic.in" > "$T/b1"; marple-flamegraph < "$G/basic.in" > "$T/b2"
same "flamegraph: same output twice, file or stdin" "$T/b1" "$T/b2"
