# Python lines optional (issue 39): "main (app.py:62)" and "main (app.py:63)"
# were siblings and every recursion level split.  --nolineno (py-spy's) folds
# and draws a function as one frame, "main (app.py)"; marple display's
# pictures draw so by default (the lines stay in marple-fold's output).
. "$MARPLE_TOP/tests/lib.sh"
plan 10

printf '%s\n' \
	'{"marple":1,"interface":"callstack","datatype":"stack","units":{"weight":"samples"}}' \
	'3#python3;_start;main (/app.py:62);fib (/app.py:9);fib (/app.py:10)' \
	'2#python3;_start;main (/app.py:63);fib (/app.py:9)' \
	'1#cc1plus;operator()(int) const;std::map<int, char>::find' \
	'{"trailer":1,"records":3,"frames":{"main (/app.py:62)":{"kind":"python","file":"/app.py","line":62},"main (/app.py:63)":{"kind":"python","file":"/app.py","line":63},"fib (/app.py:9)":{"kind":"python","file":"/app.py","line":9},"fib (/app.py:10)":{"kind":"python","file":"/app.py","line":10},"_start":{"kind":"native","file":"/usr/bin/python3.11"}}}' \
	> "$T/py.marple"

marple-fold --nolineno "$T/py.marple" > "$T/f"; rc=$?
printf '%s\n' 'cc1plus;operator()(int) const;std::map<int, char>::find 1' \
	'python3;_start;main (/app.py);fib (/app.py) 2' \
	'python3;_start;main (/app.py);fib (/app.py);fib (/app.py) 3' > "$T/f.exp"
same_ok "fold --nolineno: one frame a function, other names untouched" $rc "$T/f.exp" "$T/f"
marple-fold "$T/py.marple" > "$T/l"
check "fold: lines kept by default" grep -q 'main (/app.py:62);fib (/app.py:9);fib (/app.py:10) 3' "$T/l"
marple-fold "$T/py.marple" | marple-fold --nolineno > "$T/f2"
same "fold --nolineno on folded text" "$T/f.exp" "$T/f2"

marple-flamegraph --nolineno "$T/py.marple" > "$T/g.svg"
check "flamegraph --nolineno: main one frame, fib one a level" sh -c \
	"[ \$(grep -o '\"main (/app.py)\"' '$T/g.svg' | wc -l) -eq 1 ] && ! grep -q 'app.py:' '$T/g.svg'"
green_of() { grep -o "fill=\"#[0-9a-f]\{6\}\"/><text[^>]*>$1<" "$T/g.svg" | head -n 1 | sed 's/fill="#\(..\)\(..\)\(..\)".*/\1 \2 \3/' |
	while read -r r g b; do if [ $((0x$g)) -gt $((0x$r)) ]; then echo green; else echo warm; fi; done; }
check "flamegraph --nolineno: Python frames still green ($(green_of 'main (/app.py)') main, $(green_of _start) _start)" \
	test "$(green_of 'main (/app.py)')$(green_of _start)" = greenwarm
marple-flamegraph "$T/py.marple" > "$T/g2.svg"
check "flamegraph: lines kept without the option" grep -q 'main (/app.py:62)' "$T/g2.svg"
marple-treemap --nolineno "$T/py.marple" > "$T/t.html"
check "treemap --nolineno" sh -c "grep -q 'main (/app.py)' '$T/t.html' && ! grep -q 'app.py:6' '$T/t.html'"
marple-flamegraph --nolineno --reverse "$T/py.marple" > "$T/r.svg"
check "flamegraph --nolineno --reverse: leaf first, lines gone" sh -c \
	"grep -q '\"fib (/app.py)\"' '$T/r.svg' && ! grep -q 'app.py:' '$T/r.svg'"

# marple display's pictures draw functions, not lines
R="$MARPLE_BIN/marple-registry"
: > "$T/none"
MARPLE_CONFIG="$T/none" marple-config --registry "$R" > "$T/cfg"
marple-report --plan --registry "$R" --config "$T/cfg" "$T/py.marple" > "$T/plan"
check "report plan: the flame graph gets --nolineno" sh -c "grep flamegraph '$T/plan' | grep -q -- --nolineno"
marple-report --plan --registry "$R" --config "$T/cfg" --display=treemap "$T/py.marple" > "$T/plan2"
check "report plan: the tree map too" sh -c "grep treemap '$T/plan2' | grep -q -- --nolineno"
