# Bad input: every file in tests/bad-input/ (plus a few big ones made here)
# against every filter and renderer in the build, from a FILE operand, from
# stdin, and with -o FILE.  Classes, by file name:
#   bad-*   nothing usable: exit 1 (or a status the program documents, see
#           extra_status) and "prog: FILE[:LINE]: reason" on stderr;
#   part-*  good records and damaged ones: the damage is reported as
#           "prog: FILE[:LINE]: reason" whatever the exit status;
#   any-*, ok-*  valid but hostile or of some datatype: exit 0, or a failure
#           with such a message (wrong datatype for a renderer);
#   unusable-*  unusable by marple-format(5)'s rule (a NUL byte, or more
#           malformed lines than usable records; a header with a member of
#           the wrong type makes its records malformed): exit 1 with such a
#           message, nothing on stdout, no file with -o, from every program;
# and always: no signal, no sanitizer report, no hang; with -o FILE, the
# file exists only after success (no half-finished or temporary file left);
# SVG and HTML output parses as XML/HTML.
. "$MARPLE_TOP/tests/lib.sh"
D="$MARPLE_TOP/tests/bad-input"

# Exit statuses a program documents for bad data besides 1.
extra_status() {
	case "$1" in
	marple-flamegraph) echo 2 ;;	# "2 ... no usable stack (an error SVG is written)"
	esac
}
# Programs whose man page says a failure still writes a complete file: the
# error SVG of marple-flamegraph, "the file is still written from the good
# ones" (marple-cpel), "the rest drawn/converted" (eventplot, trace).
writes_on_failure() {
	for _m in "$MARPLE_TOP"/*/"$1".1; do
		[ -f "$_m" ] && sed -n '/^\.SH EXIT STATUS/,/^\.SH [A-DF-Z]/p' "$_m" | tr '\n' ' ' |
			grep -Eqi 'still written|the rest (drawn|converted|written)|SVG saying' && return 0
	done
	return 1
}

# Programs that write stdout as they read, before they know an input is
# unusable: marple-cat passes on each valid line (a filter).  Every other
# reader writes nothing of an unusable input.  With -o none leaves a file.
streams_stdout() {
	case "$1" in marple-cat) return 0 ;; esac
	return 1
}

# Big inputs, made here rather than kept in the tree.
G="$T/gen"
mkdir -p "$G"
hdr='{"marple":1,"interface":"callstack","datatype":"stack","start_ns":1000,"units":{"weight":"samples"}}'
{ echo "$hdr"; printf '5#bash;'; head -c 1048576 /dev/zero | tr '\0' 'f'; printf ';leaf\n3#bash;main\n'; } >"$G/any-1mb-frame.marple"
{ echo "$hdr"; printf '7#bash'; i=0; while [ $i -lt 2000 ]; do printf ';f0;f1;f2;f3;f4;f5;f6;f7;f8;f9;fa;fb;fc;fd;fe;ff;g0;g1;g2;g3;g4;g5;g6;g7;g8'; i=$((i + 1)); done; printf '\n'; } >"$G/any-deep-stack-50k.marple"
{ head -c 1048576 /dev/zero | tr '\0' 'x'; printf '\n'; } >"$G/bad-1mb-line.txt"
{ echo "$hdr"; printf '2#bash;main\n9#bash;'; head -c 1048576 /dev/zero | tr '\0' 'y'; } >"$G/part-1mb-record-cut.marple"
awk 'BEGIN { for (i = 0; i < 200000; i++) printf "bash;f%d;g%d %d\n", i % 97, i % 1013, i + 1 }' >"$G/any-200k-folded.txt"
head -c 1000000 /dev/urandom >"$G/unusable-random-bytes.bin"	# issue 27: drawn as 40 "stacks" once
# one stack record longer than the 64 MiB a line may hold, and nothing else
{ echo "$hdr"; printf '5#bash;'; head -c 70000000 /dev/zero | tr '\0' 'z'; printf '\n'; } >"$G/unusable-70mb-line.marple"

# the programs that read inputs: the registry's filters and renderers
progs=
for p in $(awk -F '\t' '$2 == "kind=filter" || $2 == "kind=renderer" { print substr($1, 9) }' "$MARPLE_BIN/marple-registry"); do
	[ -x "$MARPLE_BIN/$p" ] && progs="$progs $p"
done
[ -n "$progs" ] || skip_rest "bad-input" "no filter or renderer built"
# one case a program, for every filter and renderer built
plan $(echo $progs | wc -w)

has_xmllint=0
command -v xmllint >/dev/null 2>&1 && has_xmllint=1
nfiles=0
for f in "$D"/* "$G"/*; do case "${f##*/}" in *.t) ;; bad-*|part-*|any-*|ok-*|unusable-*) nfiles=$((nfiles + 1)) ;; esac; done
echo "# bad-input: $nfiles files x programs:$progs"

# msg_ok PROG NAME_RE ERRFILE: a "prog: NAME[:LINE]: reason" line is there
# (NAME_RE: the name as an ERE, from the list of inputs below).
msg_ok() {
	grep -Eq -- "^$1: ([^ ]*/)?$2(:[0-9]+)?: .+" "$3"
}

# left_in DIR: what DIR holds, names joined by spaces, into $left (no fork:
# 5,000-odd runs of a few processes each are most of this file's time)
left_in() {
	left=
	for _x in "$1"/* "$1"/.[!.]* "$1"/..?*; do
		[ -e "$_x" ] || [ -L "$_x" ] && left="$left${left:+ }${_x##*/}"
	done
}

# wellformed FILE: SVG/XML must parse as XML, HTML as HTML (no errors).
wellformed() {
	[ $has_xmllint -eq 1 ] || return 0
	case "$(head -c 100 "$1" | tr -d '\0' | sed 's/^[[:space:]]*//' | tr 'A-Z' 'a-z')" in
	'<svg'*|'<?xml'*) xmllint --noout --nonet "$1" 2>"$T/xml.err" ;;
	'<!doctype html'*|'<html'*) xmllint --html --noout --nonet "$1" 2>"$T/xml.err" ;;
	*) return 0 ;;
	esac
}

# The inputs, each once: "class<TAB>path<TAB>its file name as an ERE".
for f in "$D"/* "$G"/*; do
	name=${f##*/}
	case "$name" in *.t) continue ;; bad-*) class=bad ;; part-*) class=part ;; any-*|ok-*) class=any ;;
	unusable-*) class=unusable ;; *) continue ;; esac
	printf '%s\t%s\t%s\n' "$class" "$f" "$(printf '%s' "$f" | sed 's/[][\.*^$+?(){}|]/\\&/g')"
done > "$T/inputs"
sanitized=0
case "$MARPLE_BIN" in */sanitize) sanitized=1 ;; esac
# In a sanitizer build LeakSanitizer's check at exit costs 45 ms a run on
# this VM (3,000 page faults): 150 s of the file's 370.  Every input is
# checked for leaks read as a FILE operand; read from stdin or written with
# -o, where only the input's and output's handling differ, the first input
# of each class is, for each program.
no_leaks=${ASAN_OPTIONS:-}:detect_leaks=0

# Every run starts in an empty directory, $T/o, and nothing but -o may
# write there.
mkdir "$T/o" && cd "$T/o" || exit 1
for p in $progs; do
	allowed=" 1 $(extra_status "$p") "
	has_o=0
	"$p" -h 2>/dev/null | grep -Eq -- '-o[ ,]|--output' && has_o=1
	# Programs that need a FILE operand (exit 2 on stdin) are run with files only.
	has_stdin=1
	"$p" <"$D/ok-stack.marple" >/dev/null 2>&1; [ $? -eq 2 ] && has_stdin=0
	npass=0 nfail=0 accepts= leak_checked=' '
	while IFS='	' read -r class f fre; do
		name=${f##*/}
		for mode in file stdin out; do
			[ $mode = out ] && [ $has_o -eq 0 ] && continue
			[ $mode = stdin ] && [ $has_stdin -eq 0 ] && continue
			left_in "$T/o"
			[ -z "$left" ] || { rm -rf "$T/o"/* "$T/o"/.[!.]* "$T/o"/..?*; }
			asan=${ASAN_OPTIONS:-}
			if [ $sanitized -eq 1 ] && [ $mode != file ]; then
				case "$leak_checked" in
				*" $mode:$class "*) asan=$no_leaks ;;
				*) leak_checked="$leak_checked$mode:$class " ;;
				esac
			fi
			case $mode in
			file)  ASAN_OPTIONS=$asan timeout 30 "$p" "$f" </dev/null >"$T/stdout" 2>"$T/stderr"; rc=$?; shown=$f shown_re=$fre ;;
			stdin) ASAN_OPTIONS=$asan timeout 30 "$p" <"$f" >"$T/stdout" 2>"$T/stderr"; rc=$?; shown='<stdin>' shown_re='<stdin>' ;;
			out)   ASAN_OPTIONS=$asan timeout 30 "$p" -o "$T/o/out" "$f" </dev/null >"$T/stdout" 2>"$T/stderr"; rc=$?; shown=$f shown_re=$fre ;;
			esac
			case=$p:$name:$mode
			why=
			if [ $rc -eq 124 ]; then why="hung (killed after 30 s)"
			elif [ $rc -eq 86 ] || { [ $sanitized -eq 1 ] && grep -q 'Sanitizer' "$T/stderr"; }; then
				why="sanitizer report: $(grep -m1 -E 'ERROR|runtime error' "$T/stderr")"
			elif [ $rc -gt 128 ]; then why="killed by signal $((rc - 128))"
			elif [ $rc -ne 0 ] && case "$allowed" in *" $rc "*) false ;; esac; then why="exit $rc, documented:$allowed"
			elif [ $rc -ne 0 ] && ! msg_ok "$p" "$shown_re" "$T/stderr"; then why="exit $rc without '$p: $shown[:LINE]: reason' ($(head -c 200 "$T/stderr" | tr '\n' '|'))"
			elif [ $class = bad ] && [ $rc -eq 0 ]; then why="exit 0 on input with nothing usable"
			elif [ $class = unusable ] && [ $rc -ne 1 ]; then why="exit $rc on unusable input, wanted 1"
			elif [ $class = unusable ] && ! msg_ok "$p" "$shown_re" "$T/stderr"; then why="unusable input not named as '$p: $shown[:LINE]: reason'"
			elif [ $class = unusable ] && [ -s "$T/stdout" ] && ! streams_stdout "$p"; then why="unusable input, yet $(wc -c <"$T/stdout") bytes on stdout"
			elif [ $class = unusable ] && left_in "$T/o" && [ -n "$left" ]; then why="unusable input, yet a file written: $left"
			elif [ $class = part ] && ! msg_ok "$p" "$shown_re" "$T/stderr"; then why="damage not reported as '$p: $shown[:LINE]: reason' (exit $rc; stderr: $(head -c 200 "$T/stderr" | tr '\n' '|'))"
			fi
			if [ -z "$why" ] && [ $mode = out ]; then
				left_in "$T/o"
				if [ $rc -eq 0 ] && [ "$left" != out ]; then why="exit 0 but the output directory holds: $left"
				elif [ $rc -ne 0 ] && [ -n "$left" ] && ! { writes_on_failure "$p" && [ "$left" = out ]; }; then
					why="failed (exit $rc) but left a file behind: $left"
				fi
				[ -z "$why" ] && [ -f "$T/o/out" ] && ! wellformed "$T/o/out" && why="output does not parse: $(head -c 300 "$T/xml.err" | tr '\n' '|')"
			fi
			if [ -z "$why" ] && [ $mode = file ] && [ $rc -eq 0 ] && [ -s "$T/stdout" ] && ! wellformed "$T/stdout"; then
				why="output does not parse: $(head -c 300 "$T/xml.err" | tr '\n' '|')"
			fi
			if [ -n "$why" ]; then fail "$case" "$why"; nfail=$((nfail + 1)); else npass=$((npass + 1)); fi
			[ $mode = file ] && [ $rc -eq 0 ] && case "$name" in ok-*) n=${name#ok-}; accepts="$accepts ${n%.marple}" ;; esac
		done
	done < "$T/inputs"
	if [ $nfail -eq 0 ]; then pass "$p: $npass bad-input runs (accepts:${accepts:- none})"; fi
done
cd / || exit 1
