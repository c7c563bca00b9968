# marple-cat -s/-i naming what the input does not have: exit 2 and a message
# saying what it has (as marple display -e does), never empty output and 0.
. "$MARPLE_TOP/tests/lib.sh"
plan 7
S="$DATA/sample.marple"	# 3 sections: callstack, cpusched, disklat

expect_exit "cat -s 9: says how many sections there are" 2 \
	"^marple-cat: -s 9: .*sample.marple has 3 sections \(0 to 2; -l lists them\)$" marple-cat -s 9 "$S"
expect_exit "cat -i mistyped: names the interfaces there are" 2 \
	"^marple-cat: -i cpuschd: .*has no section of that interface \(it has: callstack, cpusched, disklat\)$" \
	marple-cat -i cpuschd "$S"
expect_exit "cat -s and -i selecting nothing together" 2 'select none of the 3 sections' marple-cat -s 0 -i cpusched "$S"
expect_exit "cat -q -s 9: validating does not hide it" 2 'has 3 sections' marple-cat -q -s 9 "$S"
# counted across files, as -s counts
expect_exit "cat -s over two files counts both" 2 'has 6 sections \(0 to 5' marple-cat -s 6 "$S" "$S"
marple-cat -s 5 "$S" "$S" > "$T/o" 2> "$T/e"; rc=$?
check "cat -s 5 of two files: the second file's last section, exit 0" sh -c \
	"[ $rc -eq 0 ] && [ ! -s '$T/e' ] && grep -q '\"interface\":\"disklat\"' '$T/o' && ! grep -q callstack '$T/o'"
marple-cat -i cpusched < "$S" > "$T/o" 2> "$T/e"; rc=$?
check "cat -i from stdin: a valid selection still works" sh -c "[ $rc -eq 0 ] && grep -c sched_switch '$T/o' | grep -qx 2"
