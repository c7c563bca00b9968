# marple-top: self and total per function as text (perf report, pprof -top),
# for ssh sessions (issue 39).
. "$MARPLE_TOP/tests/lib.sh"
plan 11

# p: a -> b -> a -> b (3), a (1), c (2): b is a leaf of 3, a of 1, c of 2;
# a is on 4 stacks (the recursion counts once), b on 3
printf 'p;a;b;a;b 3\np;a 1\np;c 2\n' > "$T/f"
marple-top "$T/f" > "$T/o"; rc=$?
cat > "$T/o.exp" <<'EOF2'
# stacks: 6 samples
        self   self%    sum%        total  total%  function
           3  50.00%  50.00%            3  50.00%  b
           2  33.33%  83.33%            2  33.33%  c
           1  16.67% 100.00%            4  66.67%  a
EOF2
same_ok "top: self, its running sum and total per function, heaviest self first" $rc "$T/o.exp" "$T/o"
marple-top --sort total "$T/f" | sed -n 3p > "$T/t"
check "top --sort total: a first (4 of 6)" grep -q '  a$' "$T/t"
marple-top -T 1 "$T/f" > "$T/o"
check "top -T 1: one row" test "$(wc -l < "$T/o")" -eq 3
check "top: the process (first frame) is no function" sh -c "! marple-top '$T/f' | grep -q '  p$'"

marple-top "$DATA/sample.marple" > "$T/s" 2> "$T/e"; rc=$?
check "top: a stream: its interface, host, total and unit in the first line" sh -c \
	"[ $rc -eq 0 ] && head -n 1 '$T/s' | grep -qx '# callstack on sample: 153 samples'"
check "top: _PyEval_EvalFrameDefault 97 self, main 150 total" sh -c \
	"grep -Eq '^ +97 +63.40% +63.40% +97 +63.40%  _PyEval_EvalFrameDefault$' '$T/s' && grep -Eq '^ +0 .* +150 +98.04%  main$' '$T/s'"
check "top: other datatypes named and skipped" grep -q 'not stacks: skipped' "$T/e"
printf '{"marple":1,"interface":"x","datatype":"stack"}\n5#p;evil%%1B[2J;x\\y\n' > "$T/h.marple"
marple-top "$T/h.marple" > "$T/h"
check "top: control bytes and backslashes escaped" sh -c "grep -q 'evil\\\\x1b\[2J' '$T/h' && grep -q 'x\\\\x5cy' '$T/h' && ! grep -q \"\$(printf '\\033')\" '$T/h'"
expect_exit "top: no stacks: exit 1" 1 'no usable stacks' marple-top /dev/null
expect_exit "top: --sort other: usage" 2 'self or total' marple-top --sort cum "$T/f"
printf 'python3;main (/a.py:3);f (/a.py:9) 2\npython3;main (/a.py:4);f (/a.py:9) 1\n' | marple-top --nolineno > "$T/n"
check "top --nolineno: main (/a.py) one function, total 3" grep -Eq '^ +0 .* +3 +100.00%  main \(/a.py\)$' "$T/n"
