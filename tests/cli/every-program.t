# Every program: -h prints usage on stdout and exits 0, an unknown option
# exits 2, and there is a man page for it.
. "$MARPLE_TOP/tests/lib.sh"
# three cases a program, for every program built
plan $(( $(for p in "$MARPLE_BIN"/marple "$MARPLE_BIN"/marple-*; do [ -x "$p" ] && echo; done | wc -l) * 3 ))
for p in "$MARPLE_BIN"/marple "$MARPLE_BIN"/marple-*; do
	[ -x "$p" ] || continue
	name=${p##*/}
	out=$("$p" -h 2>/dev/null); rc=$?
	if [ $rc -eq 0 ] && printf '%s' "$out" | grep -qi 'usage'; then pass "$name -h"; else fail "$name -h" "exit $rc or no usage text"; fi
	expect_exit "$name: unknown option exits 2" 2 "" "$p" --no-such-option-xyz
	if ls "$MARPLE_TOP"/*/"$name".1 >/dev/null 2>&1; then pass "$name man page"; else fail "$name man page" "no $name.1 in the tree"; fi
done
