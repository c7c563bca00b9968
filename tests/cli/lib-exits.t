# Library code returns errors to its caller; a program's main decides to
# exit (issue 33): lib/collect and lib/format end the process only where the
# table below says, and by no new call.  Out of memory ends it anywhere (the
# allocator's contract: marple_malloc and its kin), so "out of memory" lines
# are not counted.
. "$MARPLE_TOP/tests/lib.sh"
plan 3

# The files that may still end the process, with how many calls at most, and why.
allowed() {
	cat <<'EOF'
lib/format/util.c 8 the process-ending helpers themselves: marple_fatal, usage errors, option numbers, a program's input file
lib/format/lines.c 3 a program's whole input file read, or the program ends
lib/format/options.c 1 --describe printed, exit 0
lib/format/intern.c 1 4 GiB of names: an allocator's limit
EOF
}

# calls TREE: "file count" for each lib/collect, lib/format source of TREE
# that calls exit( or marple_fatal( (its definition and out-of-memory lines
# left out).
calls() {
	(cd "$1" && awk '
		/out of memory/ || /^void marple_fatal\(/ { next }
		/marple_fatal\(|(^|[^A-Za-z0-9_])exit\(/ { n[FILENAME]++ }
		END { for (f in n) print f, n[f] }' lib/collect/*.c lib/format/*.c) | sort
}

# offenders CALLS: the lines of CALLS over their allowance.
offenders() {
	allowed > "$T/allowed"
	awk 'NR == FNR { max[$1] = $2; next } $2 > max[$1] + 0 { print $1, $2, "allowed", max[$1] + 0 }' \
		"$T/allowed" "$1"
}

calls "$MARPLE_TOP" > "$T/calls"
if [ ! -s "$T/calls" ]; then
	fail "lib-exits: the sources were read" "no call found at all under $MARPLE_TOP/lib"
else
	pass "lib-exits: the sources were read ($(wc -l < "$T/calls") files with calls)"
fi
offenders "$T/calls" > "$T/bad"
check "lib-exits: lib/collect and lib/format end the process only where allowed ($(tr '\n' ';' < "$T/bad"))" \
	test ! -s "$T/bad"

# The check itself: in a copy of two files, a planted exit( and marple_fatal(
# are found, an out-of-memory line and a name ending in exit( are not.
mkdir -p "$T/tree/lib/collect" "$T/tree/lib/format"
cp "$MARPLE_TOP/lib/collect/stackdrain.c" "$T/tree/lib/collect/"
cp "$MARPLE_TOP/lib/format/options.c" "$T/tree/lib/format/"
cat >> "$T/tree/lib/collect/stackdrain.c" <<'EOF'
static void planted(int bad)
{
	if (bad)
		marple_fatal(EXIT_DATA, "planted");
	if (!bad)
		marple_fatal(EXIT_DATA, "out of memory");
	_exit(0);
}
EOF
printf 'static void planted2(void)\n{\n\texit(EXIT_DATA);\n}\n' >> "$T/tree/lib/format/options.c"
calls "$T/tree" > "$T/planted.calls"
offenders "$T/planted.calls" > "$T/planted.bad"
printf 'lib/collect/stackdrain.c 1 allowed 0\nlib/format/options.c 2 allowed 1\n' > "$T/planted.want"
same "lib-exits: the check finds planted calls, not out of memory or _exit" "$T/planted.want" "$T/planted.bad"
