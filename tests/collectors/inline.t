# Inline frames and source lines from DWARF, names of a stripped Go binary
# (lib/collect/sourceframes.c): marple-callstack on tests/workloads/
# inlinechain (mix inlined in stage2 in stage1 in pipeline, -O2 -g) reads
# main;pipeline;stage1;stage2;mix, each inlined frame described "inline" at
# the file:line addr2line -i gives, each native frame with its source
# file:line; on tests/workloads/gospin.go built
# stripped (-ldflags="-s -w") the stack main.main;main.middle;main.leaf and
# under it the functions Go inlined there (main.mix, main.square), from Go's
# own inlining tables, each at its file:line: the same stacks, names and
# lines (marple-fold --lines) as the unstripped build's DWARF gives; a
# function's samples each at the line of its own address, the sampled pc's
# (tests/workloads/twolines.c's spin, golines.go's main.spin built stripped:
# two loops on two lines, 1:2 by construction), in marple-fold --lines and
# go tool pprof -lines, and one frame without --lines (root, real BPF).
. "$MARPLE_TOP/tests/lib.sh"
plan 23
. "$MARPLE_TOP/tests/collectors/stacks.sh"
W="$MARPLE_BIN/workloads"
CS="$MARPLE_BIN/marple-callstack"
if ! is_root; then
	skip_rest "inline: BPF cases" "not root"
fi

# frame FILE NAME: NAME's description in FILE's trailer as "kind file line"
frame() {
	python3 -c 'import json, sys
for l in open(sys.argv[1]):
    if l.startswith("{\"trailer\""):
        f = json.loads(l)["frames"].get(sys.argv[2], {})
        print(f.get("kind", "-"), f.get("file", "-"), f.get("line", 0)); break' "$1" "$2"
}
# source FILE NAME: NAME's source file:line in FILE's trailer ("- 0" none)
source() {
	python3 -c 'import json, sys
for l in open(sys.argv[1]):
    if l.startswith("{\"trailer\""):
        f = json.loads(l)["frames"].get(sys.argv[2], {})
        print(f.get("source", "-"), f.get("source_line", 0)); break' "$1" "$2"
}

# 1. the inline fixture: the chain under pipeline, with addr2line's lines
"$CS" -U -F 299 -c "$W/inlinechain 3" > "$T/inl.out" 2> "$T/inl.err"
all=$(weight "$T/inl.out" '.')
share "inline: main;pipeline;stage1;stage2;mix" \
	"$(weight "$T/inl.out" ';main;pipeline;stage1;stage2;mix$')" "$all" 97
# where addr2line -i puts each frame at the hot loop's multiply
at=$(objdump -d --no-show-raw-insn "$W/inlinechain" | sed -n '/<pipeline>:/,/^$/p' |
	awk '/imul/ { sub(":", "", $1); print $1; exit }')
addr2line -f -i -e "$W/inlinechain" "0x$at" > "$T/a2l"
for fn in stage1 stage2; do
	want="inline $(grep -A1 -x "$fn" "$T/a2l" | tail -n 1 | sed 's/ .*//; s/:/ /')"
	got=$(frame "$T/inl.out" "$fn")
	if [ "$got" = "$want" ]; then pass "inline: $fn described inline at its call line ($got)"
	else fail "inline: $fn" "described '$got', addr2line says '$want'"; fi
done
# mix: first described at one of its own lines (the loop or its body)
got=$(frame "$T/inl.out" mix)
src="$MARPLE_TOP/tests/workloads/inlinechain.c"
loop=$(grep -n 'round < 512' "$src" | cut -d: -f1); body=$((loop + 1))
case "$got" in
"inline $src $loop" | "inline $src $body") pass "inline: mix described inline at $got" ;;
*) fail "inline: mix" "described '$got', wanted $src line $loop or $body" ;;
esac
# the trailer's "sources" counts what DWARF told
src_by=$(sed -n 's/.*"sources":{[^}]*"by_dwarf":\([0-9]*\).*/\1/p' "$T/inl.out")
src_inl=$(sed -n 's/.*"sources":{[^}]*"inline_frames":\([0-9]*\).*/\1/p' "$T/inl.out")
if [ "${src_by:-0}" -gt 0 ] && [ "${src_inl:-0}" -ge 3 ]; then pass "inline: trailer sources: $src_by by DWARF, $src_inl inline frames"
else fail "inline: trailer sources" "by_dwarf '$src_by', inline_frames '$src_inl'"; fi
n=$(frame "$T/inl.out" pipeline)
case "$n" in native*) pass "inline: pipeline stays the native function" ;; *) fail "inline: pipeline" "$n" ;; esac
# native frames at their source line: main where it calls pipeline (the
# return address's call, as addr2line says it), pipeline inside its body
call=$(grep -n 'sink = pipeline' "$src" | cut -d: -f1)
ret=$(objdump -d --no-show-raw-insn "$W/inlinechain" | sed -n '/<main>:/,/^$/p' |
	awk '/call.*<pipeline>/ { getline; sub(":", "", $1); print $1; exit }')
want="$(addr2line -e "$W/inlinechain" "0x$(printf '%x' $((0x${ret:-0} - 1)))" | sed 's/ .*//; s/:/ /')"
got=$(source "$T/inl.out" main)
if [ "$got" = "$src $call" ] && [ "$got" = "$want" ]; then pass "inline: main at its source line ($got)"
else fail "inline: main's source" "'$got', wanted '$src $call' (addr2line: '$want')"; fi
first=$(grep -n '^__attribute__((noinline)) unsigned pipeline' "$src" | cut -d: -f1)
got=$(source "$T/inl.out" pipeline)
case "$got" in
"$src "*) l=${got#"$src "}
	if [ "$l" -gt "$first" ] && [ "$l" -lt "$call" ]; then pass "inline: pipeline at a line of its body ($got)"
	else fail "inline: pipeline's source line" "$got: not in lines $first..$call"; fi ;;
*) fail "inline: pipeline's source" "'$got', wanted $src" ;;
esac
# --no-inline: the symbols' view, the loop's time all pipeline's
"$CS" -U -F 299 --no-inline -c "$W/inlinechain 1" > "$T/noinl.out" 2> "$T/noinl.err"
all=$(weight "$T/noinl.out" '.')
share "inline: --no-inline: main;pipeline, no inlined frame" \
	"$(weight "$T/noinl.out" ';main;pipeline$')" "$all" 90

# bylines FILE SRC FN LINE1 LINE2: "W1 W2 ALL": FILE's samples whose leaf
# is FN at SRC:LINE1, at SRC:LINE2 (marple-fold --lines), and all FN's
bylines() {
	"$MARPLE_BIN/marple-fold" --lines "$1" | awk -v fn="$3" -v at1="$3 ($2:$4)" -v at2="$3 ($2:$5)" '
		{ w = $NF; sub(/ [0-9]+$/, ""); n = split($0, f, ";"); leaf = f[n]; sub(/\.abi0 \(/, " (", leaf) }
		leaf == at1 { w1 += w } leaf == at2 { w2 += w } index(leaf, fn " (") == 1 { all += w }
		END { print w1 + 0, w2 + 0, all + 0 }'
}
# two_lines NAME W1 W2 ALL FOLDED: a case that passes when both lines have
# samples, the second (twice the rounds) 45-85% of them (1:2 is 67%), and
# they are nearly all the function's; FOLDED is --lines' output, for the log
two_lines() {
	if [ "$4" -gt 20 ] && [ "$2" -gt 0 ] && [ $(($3 * 100)) -ge $((($2 + $3) * 45)) ] &&
		[ $(($3 * 100)) -le $((($2 + $3) * 85)) ] && [ $((($2 + $3) * 100)) -ge $(($4 * 90)) ]; then
		pass "$1 ($2 and $3 of $4)"
	else
		fail "$1" "$2 and $3 of the function's $4 samples, wanted both, 1:2; saw: $(tr '\n' '|' < "$5" | cut -c1-600)"
	fi
}

# 1b. a function's lines: each sample at its own address's line
"$CS" -U -F 299 -c "$W/twolines 2" > "$T/tl.out" 2> "$T/tl.err"
src="$MARPLE_TOP/tests/workloads/twolines.c"
l1=$(grep -n 'one share' "$src" | cut -d: -f1)
"$MARPLE_BIN/marple-fold" --lines "$T/tl.out" | grep 'spin (' > "$T/tl.lines"
two_lines "lines: spin's samples at its two loops' lines, 1:2, in marple-fold --lines" \
	$(bylines "$T/tl.out" "$src" spin "$l1" $((l1 + 1))) "$T/tl.lines"
"$MARPLE_BIN/marple-fold" "$T/tl.out" > "$T/tl.fold"
n=$(grep -c ';main;spin [0-9]*$' "$T/tl.fold")
w=$(awk '/;main;spin [0-9]+$/ { print $NF }' "$T/tl.fold")
if [ "$n" = 1 ] && [ "$(weight "$T/tl.out" ';main;spin$')" = "$w" ]; then
	pass "lines: without --lines one main;spin, its samples summed ($w)"
else
	fail "lines: without --lines" "$n folded main;spin stacks ($w), the records weigh $(weight "$T/tl.out" ';main;spin$')"
fi
# go tool pprof -lines: a trace whose leaf is spin at each line (and
# perhaps one at another of spin's lines: its outer loop's test, between
# the two, is sampled now and then)
if pprof_traces "$T/tl.out" "$T/tl.traces"; then
	got=$(awk -v s="$src" '$1 ~ /^[0-9.]+[a-z]*$/ && $2 == "spin" { sub(".*:", "", $3); print $3 }' "$T/tl.traces" |
		sort -nu | tr '\n' ' ')
	inside=$(echo "$got" | awk -v a="$l1" '{ for (i = 1; i <= NF; i++) { if ($i == a) s++; if ($i == a + 1) s++; if ($i < a - 3 || $i > a + 3) out++ } }
		END { print (s == 2 && !out) ? "yes" : "no" }')
	if [ "$inside" = yes ]; then pass "lines: go tool pprof -lines: spin at $got"
	else fail "lines: go tool pprof -lines" "spin at '$got', wanted $l1 and $((l1 + 1)), no line outside spin: $(head -c 400 "$T/tl.traces" "$T/pprof.err")"; fi
else
	skip "lines: go tool pprof -lines" "no go (golang-go, scripts/install-deps)"
fi
# MARPLE_SOURCES=off: no DWARF read, spin one frame without a line
MARPLE_SOURCES=off "$CS" -U -F 299 -c "$W/twolines 1" > "$T/nosrc.out" 2> "$T/nosrc.err"
if ! grep -q '"source' "$T/nosrc.out" && grep -q '"spin":{"kind":"native"' "$T/nosrc.out" &&
	! grep -q 'spin#' "$T/nosrc.out"; then
	pass "lines: MARPLE_SOURCES=off: spin one frame, no source"
else
	fail "lines: MARPLE_SOURCES=off" "$(grep -o '"spin[^}]*}' "$T/nosrc.out" | head -n 3 | tr '\n' ' ')"
fi

# 2. stripped Go: named from .gopclntab as the unstripped build's symbols name it
if ! command -v go > /dev/null 2>&1; then
	skip_rest "inline: stripped Go" "no go (golang-go, scripts/install-deps)"
fi
export HOME="$T" GOCACHE="$T/gocache" GOPATH="$T/gopath"
(cd "$MARPLE_TOP/tests/workloads" && go build -o "$T/gospin" gospin.go &&
	go build -ldflags="-s -w" -o "$T/gospin-stripped" gospin.go &&
	go build -ldflags="-s -w" -o "$T/golines-stripped" golines.go) > "$T/go.err" 2>&1
if [ -n "$(nm "$T/gospin-stripped" 2>/dev/null)" ] || [ ! -x "$T/gospin" ] || [ ! -x "$T/golines-stripped" ]; then
	fail "inline: go builds" "$(head -c 300 "$T/go.err")"
else
	pass "inline: go builds, one stripped of its symbols"
fi
# Frame pointers for both: the stripped build has no .debug_frame for the
# tables to walk (so a frameless leaf's caller is skipped alike in both)
for b in gospin gospin-stripped; do
	"$CS" -U -F 299 --unwind fp -c "$T/$b 3" > "$T/$b.out" 2> "$T/$b.err"
done
# the rest: the Go runtime (start-up, sysmon)
all=$(weight "$T/gospin-stripped.out" '.')
share "inline: stripped Go: main.main;...;main.leaf, its inlined calls under it" \
	"$(weight "$T/gospin-stripped.out" ';main\.main;(main\.middle;)?main\.leaf(;main\.mix(;main\.square)?)?$')" "$all" 75
# the loop's 3-deep chain: 7 of its 26 instructions (Go 1.19), so it is
# seen at all in even a capture of a loaded machine's 20 samples
deep=$(weight "$T/gospin-stripped.out" ';main\.leaf;main\.mix;main\.square$')
if [ "$all" -gt 20 ] && [ "$deep" -gt 0 ]; then pass "inline: stripped Go: main.leaf;main.mix;main.square from Go's inlining tables ($deep of $all)"
else fail "inline: stripped Go: main.leaf;main.mix;main.square" "$deep of $all samples"; fi
# an address in the binary without a name would read [gospin-stripped]
unnamed=$(weight "$T/gospin-stripped.out" '\[gospin-stripped')
if [ "$all" -gt 20 ] && [ "$unnamed" = 0 ]; then pass "inline: stripped Go: no frame in the binary unnamed ($all samples)"
else fail "inline: stripped Go: unnamed frames" "$unnamed of $all samples"; fi
# the inlined functions described "inline" at their one line, as the
# unstripped build's DWARF describes them
src="$MARPLE_TOP/tests/workloads/gospin.go"
for fn in mix square; do
	want="inline $src $(grep -n "^func $fn(" "$src" | cut -d: -f1)"
	got=$(frame "$T/gospin-stripped.out" "main.$fn"); dw=$(frame "$T/gospin.out" "main.$fn")
	if [ "$got" = "$want" ] && [ "$dw" = "$want" ]; then pass "inline: stripped Go: main.$fn described $got"
	else fail "inline: stripped Go: main.$fn" "described '$got' (unstripped: '$dw'), wanted '$want'"; fi
done
# mainlines FILE OUT: marple-fold --lines of FILE's stacks in the program's
# own code (main.main and the main.* functions it calls: the runtime's now
# and then, a preemption's or a GC assist's, are in one capture's samples
# and not the other's), the process's name and the symtab's ABI suffix
# (.abi0) taken off
mainlines() {
	"$MARPLE_BIN/marple-fold" --lines "$1" | sed 's/^[^;]*;//; s/\.abi0//g' |
		grep -E ';main\.main \([^)]*\)(;main\.[a-z]+ \([^)]*\))* [0-9]+$' > "$2"
}
mainlines "$T/gospin-stripped.out" "$T/s.lines"; mainlines "$T/gospin.out" "$T/f.lines"
# alike A B: "same all": A's samples, and those whose stack (names and
# lines) B has too
alike() {
	awk 'NR == FNR { sub(/ [0-9]+$/, ""); seen[$0] = 1; next }
	     { w = $NF; sub(/ [0-9]+$/, ""); all += w; if ($0 in seen) same += w }
	     END { print same + 0, all + 0 }' "$2" "$1"
}
set -- $(alike "$T/s.lines" "$T/f.lines") $(alike "$T/f.lines" "$T/s.lines")
if [ "${2:-0}" -gt 20 ] && [ $(($1 * 100)) -ge $(($2 * 99)) ] && [ $(($3 * 100)) -ge $(($4 * 99)) ]; then
	pass "inline: stripped Go: stacks with lines as the unstripped build's ($1 of $2 samples; the other way $3 of $4)"
else
	fail "inline: stripped Go: stacks with lines" "$1 of $2 stripped samples in the unstripped capture, $3 of $4 the other way; stripped: $(sort -k2 -rn "$T/s.lines" | head -n 3 | tr '\n' '|') unstripped: $(head -n 3 "$T/f.lines" | tr '\n' '|')"
fi
# the trailer's "sources": Go's tables read, nothing refused or cut
got=$(sed -n 's/.*"sources":{[^}]*"go_frames":\([0-9]*\),"go_inline_cut":\([0-9]*\),"go_inline_bad":\([0-9]*\),"go_no_inline_tables":\([0-9]*\),"go_bytes":\([0-9]*\).*/\1 \2 \3 \4 \5/p' "$T/gospin-stripped.out")
case "$got" in
[1-9]*" 0 0 0 "[1-9]*) pass "inline: stripped Go: trailer sources: Go frames, none cut, bad or without tables, bytes ($got)" ;;
*) fail "inline: stripped Go: trailer sources" "go_frames, cut, bad, no tables, bytes: '$got'" ;;
esac
# main.spin's two loops: each sample at its address's line, from .gopclntab
# (-p: -c follows only the threads the program's first thread starts, and
# Go's loop runs on a thread another one started)
"$T/golines-stripped" 3 & gopid=$!
"$CS" -U -F 299 --unwind fp -p "$gopid" 2 > "$T/gl.out" 2> "$T/gl.err"
wait "$gopid"
src="$MARPLE_TOP/tests/workloads/golines.go"
l1=$(grep -n 'one share' "$src" | cut -d: -f1)
"$MARPLE_BIN/marple-fold" --lines "$T/gl.out" | grep 'main.spin' > "$T/gl.lines"
two_lines "lines: stripped Go: main.spin at its two loops' lines, 1:2" \
	$(bylines "$T/gl.out" "$src" main.spin "$l1" $((l1 + 1))) "$T/gl.lines"
n=$("$MARPLE_BIN/marple-fold" "$T/gl.out" | grep -c ';main\.spin [0-9]*$')
if [ "$n" = 1 ]; then pass "lines: stripped Go: without --lines one stack ending main.spin"
else fail "lines: stripped Go: without --lines" "$n folded stacks end in main.spin: $("$MARPLE_BIN/marple-fold" "$T/gl.out" | grep 'main\.spin' | head -n 3 | tr '\n' '|')"; fi
