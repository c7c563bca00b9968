# Functions say one thing (issue 33): across the project's C sources (lib/,
# collectors/, filters/, renderers/, bpf/) no function is over 150 lines and
# at most 5 are over 100; no file of lib/collect is over 1,000 lines.  A body is what lies between a "{" and a "}" at the
# start of a line (the project's style for functions, checked below on a
# planted file).
. "$MARPLE_TOP/tests/lib.sh"
plan 4

# long_functions LIMIT FILE...: "lines file:line" of every function body
# longer than LIMIT lines.
long_functions() {
	_limit=$1; shift
	awk -v limit="$_limit" '
		FNR == 1 { start = 0 }
		/^\{/ { start = FNR; next }
		/^\}/ { if (start && FNR - start - 1 > limit) printf "%d %s:%d\n", FNR - start - 1, FILENAME, start; start = 0 }
	' "$@" | sort -rn
}

cd "$MARPLE_TOP" || exit 1
set -- $(ls lib/*/*.c lib/*/*.h collectors/*.c filters/*.c renderers/*.c bpf/*.c bpf/*.h 2>/dev/null)
long_functions 150 "$@" > "$T/over150"
if [ -s "$T/over150" ]; then
	fail "function-length: none over 150 lines" "$(tr '\n' ',' < "$T/over150")"
else
	pass "function-length: none over 150 lines"
fi
long_functions 100 "$@" > "$T/over100"
n=$(wc -l < "$T/over100")
if [ "$n" -gt 5 ]; then
	fail "function-length: at most 5 over 100 lines" "$n are: $(tr '\n' ',' < "$T/over100")"
else
	pass "function-length: at most 5 over 100 lines ($n: $(tr '\n' ' ' < "$T/over100"))"
fi

for f in lib/collect/*.c lib/collect/*.h; do
	n=$(wc -l < "$f")
	[ "$n" -gt 1000 ] && echo "$f $n"
done > "$T/bigfiles"
if [ -s "$T/bigfiles" ]; then
	fail "function-length: no file of lib/collect over 1,000 lines" "$(tr '\n' ',' < "$T/bigfiles")"
else
	pass "function-length: no file of lib/collect over 1,000 lines (largest: $(wc -l lib/collect/*.c lib/collect/*.h | sort -n | tail -2 | head -1 | awk '{print $2, $1}'))"
fi

# The check itself: a 120-line body is found at its line, a 99-line one is not.
{
	printf 'static int f(void)\n{\n'; i=0; while [ $i -lt 120 ]; do echo '	x++;'; i=$((i + 1)); done; printf '}\n\n'
	printf 'static int g(void)\n{\n'; i=0; while [ $i -lt 99 ]; do echo '	x++;'; i=$((i + 1)); done; printf '}\n'
} > "$T/planted.c"
long_functions 100 "$T/planted.c" > "$T/planted.out"
echo "120 $T/planted.c:2" > "$T/planted.want"
same "function-length: the check finds a long body" "$T/planted.want" "$T/planted.out"
