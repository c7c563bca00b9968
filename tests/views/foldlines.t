# marple-fold --lines and --no-inline (issue 37): a stack section's frames
# as its trailer describes them, though the trailer comes after the records:
# --no-inline leaves out the functions described "inline" (a function both
# inlined and out of line, tagged, stays), --lines writes the frames placed
# in source, native and inlined, as "NAME (FILE:LINE)" (Python's already
# are), --nolineno then folds a function's lines into one; a section without
# a trailer is folded by names; other inputs are said to describe nothing.
# A function sampled at two lines (its second line's frame tagged, as the
# collectors write it): two frames with --lines, one without.
. "$MARPLE_TOP/tests/lib.sh"
plan 11

H='{"marple":1,"interface":"callstack","datatype":"stack","host":"h","units":{"weight":"samples"}}'
printf '%s\n' "$H" \
	'9#inl;main;pipeline;stage1;mix' \
	'4#inl;main;mix#1a2b3c4d' \
	'2#python3;_start;fib (/app.py:3)' \
	'1#inl;main;[unknown]' \
	'{"trailer":1,"records":4,"frames":{"main":{"kind":"native","file":"/w/inl","offset":4160,"source":"/src/inl.c","source_line":51},"pipeline":{"kind":"native","file":"/w/inl","offset":4400,"source":"/src/a;b\u0001.c","source_line":43},"stage1":{"kind":"inline","file":"/src/inl.c","line":28},"mix":{"kind":"inline","file":"/src/inl.c","line":17},"mix#1a2b3c4d":{"kind":"native","file":"/w/inl","offset":4600,"source":"/src/inl.c","source_line":16},"fib (/app.py:3)":{"kind":"python","file":"/app.py","line":3},"_start":{"kind":"native","file":"/usr/bin/python3.11"},"[unknown]":{"kind":"marker"}}}' \
	"$H" \
	'5#inl;main;pipeline;stage1' \
	> "$T/s.marple"

marple-fold --no-inline "$T/s.marple" > "$T/n"; rc=$?
printf '%s\n' 'inl;main;[unknown] 1' 'inl;main;mix 4' 'inl;main;pipeline 14' \
	'python3;_start;fib (/app.py:3) 2' > "$T/n.exp"
same_ok "fold --no-inline: inlined frames left out, the out-of-line mix kept, a section without trailer by the first's descriptions" \
	$rc "$T/n.exp" "$T/n"
marple-fold --lines "$T/s.marple" > "$T/l"; rc=$?
printf '%s\n' 'inl;main (/src/inl.c:51);[unknown] 1' \
	'inl;main (/src/inl.c:51);mix (/src/inl.c:16) 4' \
	'inl;main (/src/inl.c:51);pipeline (/src/a:b?.c:43);stage1 (/src/inl.c:28) 5' \
	'inl;main (/src/inl.c:51);pipeline (/src/a:b?.c:43);stage1 (/src/inl.c:28);mix (/src/inl.c:17) 9' \
	'python3;_start;fib (/app.py:3) 2' > "$T/l.exp"
same_ok "fold --lines: native and inlined frames at their source line, Python, markers and undescribed frames as they were, ';' and control bytes mapped" \
	$rc "$T/l.exp" "$T/l"
marple-fold --lines --no-inline --nolineno "$T/s.marple" > "$T/ln"; rc=$?
printf '%s\n' 'inl;main (/src/inl.c);[unknown] 1' 'inl;main (/src/inl.c);mix (/src/inl.c) 4' \
	'inl;main (/src/inl.c);pipeline (/src/a:b?.c) 14' 'python3;_start;fib (/app.py) 2' > "$T/ln.exp"
same_ok "fold --lines --no-inline --nolineno: one frame a function, with its file" $rc "$T/ln.exp" "$T/ln"
marple-fold "$T/s.marple" > "$T/plain"
printf '%s\n' 'inl;main;[unknown] 1' 'inl;main;mix 4' 'inl;main;pipeline;stage1 5' \
	'inl;main;pipeline;stage1;mix 9' 'python3;_start;fib (/app.py:3) 2' > "$T/plain.exp"
same "fold: without the options, names as written" "$T/plain.exp" "$T/plain"
marple-fold --lines --host-frame "$T/s.marple" > "$T/hl"
check "fold --lines --host-frame: the host, then the described frames" \
	grep -qx 'h;inl;main (/src/inl.c:51);mix (/src/inl.c:16) 4' "$T/hl"
marple-fold --no-inline --diff "$T/s.marple" "$T/s.marple" > "$T/d"
check "fold --no-inline --diff: both inputs described" grep -qx 'inl;main;pipeline 14 14' "$T/d"
marple-fold --to-stream --no-inline "$T/s.marple" | marple-fold > "$T/ts"
same "fold --to-stream --no-inline: the stream as folded" "$T/n.exp" "$T/ts"
printf 'a;b 1\n' > "$T/f"
expect_exit "fold --lines on folded text: left as it is, said so" 0 'folded input describes no frames' \
	marple-fold --lines "$T/f"
expect_exit "fold --lines --from: a usage error" 2 'do not go with --from' marple-fold --lines --from 1 "$T/s.marple"
printf '%s\n' "$H" '6#tl;main;spin;mix' '3#tl;main;spin#0000abcd;mix#0000dcba' '2#tl;main;spin#0000abcd' \
	'{"trailer":1,"frames":{"main":{"kind":"native","file":"/w/tl","offset":64,"source":"/src/tl.c","source_line":38},"spin":{"kind":"native","file":"/w/tl","offset":128,"source":"/src/tl.c","source_line":28},"spin#0000abcd":{"kind":"native","file":"/w/tl","offset":128,"source":"/src/tl.c","source_line":29},"mix":{"kind":"inline","file":"/src/tl.c","line":7},"mix#0000dcba":{"kind":"inline","file":"/src/tl.c","line":8}}}' \
	> "$T/tl.marple"
marple-fold --lines "$T/tl.marple" > "$T/tl"; rc=$?
printf '%s\n' 'tl;main (/src/tl.c:38);spin (/src/tl.c:28);mix (/src/tl.c:7) 6' \
	'tl;main (/src/tl.c:38);spin (/src/tl.c:29) 2' \
	'tl;main (/src/tl.c:38);spin (/src/tl.c:29);mix (/src/tl.c:8) 3' > "$T/tl.exp"
same_ok "fold --lines: a function at two lines, each its own frame" $rc "$T/tl.exp" "$T/tl"
marple-fold "$T/tl.marple" > "$T/tlp"
printf '%s\n' 'tl;main;spin 2' 'tl;main;spin;mix 9' > "$T/tlp.exp"
same "fold: a function at two lines one frame, its samples summed" "$T/tlp.exp" "$T/tlp"
