# marple-callstack and marple-offcpu across exec (root, real BPF).
# One process (one pid) runs three images: sh, which execs execfrom, which runs
# from_hot()/from_loop() for a second and execs execinto, which runs
# into_hot()/into_loop().  from_hot and into_hot are linked at the same address
# (0x10000000), and the rest of the two binaries overlaps too, so stacks of the
# last image named from the files of the one before (what bcc's profile does:
# one snapshot per pid) come out as from_* frames under execinto.  Each image's
# stacks must be named from its own files: from_* under execfrom only, into_*
# under execinto only.
. "$MARPLE_TOP/tests/lib.sh"
plan 14
W="$MARPLE_BIN/workloads"
if ! is_root; then
	skip_rest "exec: BPF cases" "not root"
fi

# weight FILE REGEX: the weight of the records whose frames match an awk
# regex (frames joined by ;, identity tags taken off: a function sampled at
# two lines is two frames of one name, marple-format(5)), all sections
weight() {
	untag "$1" | awk -v re="$2" 'index($0, "#") && substr($0, 1, 1) != "{" {
		w = substr($0, 1, index($0, "#") - 1); f = substr($0, index($0, "#") + 1)
		if (f ~ re) s += w } END { print s + 0 }'
}

# run NAME MODE COLLECTOR [OPTIONS]: the three images under COLLECTOR -p PID
run() {
	name=$1 mode=$2; shift 2
	rm -f "$T/go" "$T/ready"
	mkfifo "$T/go"
	sh -c 'read x < "$1"; exec "$2/execfrom" "$3" 1 "$2/execinto" "$3" 1' sh "$T/go" "$W" "$mode" & wl=$!
	MARPLE_READY_FILE="$T/ready" "$@" -p "$wl" 10 > "$T/$name.out" 2> "$T/$name.err" & cs=$!
	if wait_ready "$T/ready" 20; then echo go > "$T/go"; else kill "$wl"; fi
	wait "$cs"; rc=$?
	wait "$wl"
	check "exec: $name: exit 0 and a valid stream" sh -c "[ $rc -eq 0 ] && marple-cat -q '$T/$name.out'"
}

# expect NAME LEAF_FROM LEAF_INTO MIN: both images' own functions by name, with
# weight MIN or more, and no function of one image in the other's stacks
expect() {
	a=$(weight "$T/$1.out" "^execfrom;(.*;)?$2(;|\$)")
	b=$(weight "$T/$1.out" "^execinto;(.*;)?$3(;|\$)")
	if [ "$a" -ge "$4" ] && [ "$b" -ge "$4" ]; then pass "exec: $1: $2 under execfrom ($a), $3 under execinto ($b)"
	else fail "exec: $1: both images named" "$2 under execfrom $a, $3 under execinto $b (want >= $4 each): $(sort -n "$T/$1.out" | tail -n 4 | cut -c 1-160 | tr '\n' ' ')"; fi
	wrong=$(weight "$T/$1.out" '^execinto;(.*;)?from_')
	check "exec: $1: no frame of execfrom in execinto's stacks ($wrong)" test "$wrong" -eq 0
	wrong=$(weight "$T/$1.out" '^execfrom;(.*;)?into_')
	check "exec: $1: no frame of execinto in execfrom's stacks ($wrong)" test "$wrong" -eq 0
}

# on-CPU: 1 s of CPU time in each image at 499 Hz (the capture ends when
# the process exits)
run callstack burn "$MARPLE_BIN/marple-callstack" -F 499
expect callstack from_hot into_hot 100
# (the two images' main are two functions: one of them is written with its
# identity tag, main#89abcdef, marple-format(5))
if ! grep -Eq '^[0-9]*#execinto;(.*;)?main' "$T/callstack.out" || ! grep -Eq '^[0-9]*#execfrom;(.*;)?main' "$T/callstack.out"; then
	echo "exec: the heaviest stacks of each image, and the unwind statistics:" >&2
	for i in execfrom execinto; do grep "^[0-9]*#$i;" "$T/callstack.out" | sort -t'#' -k1,1nr | head -n 2 | cut -c1-300 >&2; done
	grep -o '"unwind":{[^}]*' "$T/callstack.out" | cut -c1-600 >&2
fi
check "exec: callstack: images apart: libc named in both" sh -c "grep -Eq '^[0-9]*#execfrom;(.*;)?__libc_start_call_main;main(#[0-9a-f]{8})?;(from_loop(#[0-9a-f]{8})?;)?from_hot' '$T/callstack.out' && grep -Eq '^[0-9]*#execinto;(.*;)?__libc_start_call_main;main(#[0-9a-f]{8})?;(into_loop(#[0-9a-f]{8})?;)?into_hot' '$T/callstack.out'"
check "exec: callstack: the two images' main told apart (one tagged)" sh -c "grep -Eq '^[0-9]*#exec(from|into);(.*;)?__libc_start_call_main;main#[0-9a-f]{8};' '$T/callstack.out'"
run dwarf burn "$MARPLE_BIN/marple-callstack" --dwarf -F 499
expect dwarf 'from_loop;from_hot' 'into_loop;into_hot' 100
# off-CPU: each image naps 5 ms at a time for 1 s (libc has no frame
# pointers: the nap's caller from_hot/into_hot is not seen, its caller is)
run offcpu sleep "$MARPLE_BIN/marple-offcpu"
expect offcpu from_loop into_loop 500000
