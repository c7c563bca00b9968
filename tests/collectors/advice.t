# Honest advice (root, real BPF; issue 39): a collector advises only options
# it takes, counts cut stacks on the stacks it writes, keeps normal events
# off stderr (cron mails every line), hints at interpreters whose frames it
# does not walk, and -v means statistics in every stack collector.
. "$MARPLE_TOP/tests/lib.sh"
plan 14
if ! is_root; then skip_rest "advice" "needs root"; fi
. "$MARPLE_TOP/tests/collectors/stacks.sh"
W="$MARPLE_BIN/workloads"

# 1. nofp leaks from code without frame pointers: --unwind fp cuts its
# stacks.  memleak and mallocstacks take no --unwind dwarf: their advice
# names --unwind tables only (they advised dwarf, then refused it).
"$W/nofp" 30 malloc & wl=$!
libc_mapped "$wl"
marple-memleak --unwind fp -v -p "$wl" 2 > "$T/ml.out" 2> "$T/ml.err"
marple-mallocstacks --unwind fp -v -p "$wl" 1 > "$T/ms.out" 2> "$T/ms.err"
marple-callstack --unwind fp -F 499 -p "$wl" 1 > /dev/null 2>&1	# a sleeper: few samples
kill "$wl" 2>/dev/null; wait "$wl" 2>/dev/null
for c in ml:memleak ms:mallocstacks; do
	f=${c%%:*} name=${c#*:}
	check "advice: $name --unwind fp on code without frame pointers: says stacks stop short" \
		grep -q "^marple-$name: [0-9]*% of the user stacks written .* stop before _start" "$T/$f.err"
	check "advice: $name advises --unwind tables, never the dwarf it refuses" sh -c \
		"grep -q 'finds whole stacks' '$T/$f.err' && grep -q '(--unwind tables)' '$T/$f.err' && ! grep -v ': statistics: ' '$T/$f.err' | grep -q dwarf"
done
# (CI once saw memleak write no stack at all here: say what it counted)
if ! grep -q '^marple-memleak: [0-9]*% of the user stacks' "$T/ml.err"; then
	echo "advice: memleak's stderr and trailer:" >&2
	grep -v 'statistics: \(python\|sources\)' "$T/ml.err" >&2
	grep '"trailer"' "$T/ml.out" | cut -c1-600 >&2
fi
# the counts are the stacks written: the trailer's, with where they end
n=$(sed -n 's/.*user stacks written (\([0-9]*\) of \([0-9]*\) distinct stacks) stop before.*/\1 \2/p' "$T/ml.err")
u=$(trailer_num "$T/ml.out" user_stacks) i=$(trailer_num "$T/ml.out" incomplete_user_stacks)
check "advice: memleak counts the stacks it wrote ($n; trailer $i of $u) and says where they end" sh -c \
	"[ '$n' = '$i $u' ] && grep -q 'end at a marker frame, [0-9]* at code no symbol names, [0-9]* at a named function' '$T/ml.err'"

# 2. callstack takes --dwarf: its advice may name it
"$W/nofp" 30 & wl=$!
sleep 0.2
marple-callstack --unwind fp -F 499 -p "$wl" 1 > "$T/cs.out" 2> "$T/cs.err"
kill "$wl" 2>/dev/null; wait "$wl" 2>/dev/null
check "advice: callstack --unwind fp names --unwind dwarf and --dwarf, which it takes" \
	grep -q 'unwinding from .eh_frame (--unwind tables, --unwind dwarf or --dwarf)' "$T/cs.err"

# 3. offcpu: blocks not timed are a trailer count, not a stderr line
"$W/sleeper" 3 > /dev/null 2>&1 & wl=$!
marple-offcpu 1 > "$T/oc.out" 2> "$T/oc.err"
kill "$wl" 2>/dev/null; wait "$wl" 2>/dev/null
check "advice: offcpu: unpaired switch-outs in the trailer ($(trailer_num "$T/oc.out" unpaired_switch_outs))" \
	grep -q '"unpaired_switch_outs":[0-9]' "$T/oc.out"
check "advice: offcpu: no 'blocks not timed' on stderr" sh -c "! grep -q 'not timed' '$T/oc.err'"

# 4. -v: statistics on stderr in every stack collector, a line per group
# (callstack's was one 1.9 KB line of 67 pairs; offcpu's -v was libbpf's)
marple-offcpu -v 1 > /dev/null 2> "$T/ocv.err"
marple-callstack -v -F 99 1 > /dev/null 2> "$T/csv.err"
check "advice: offcpu -v prints statistics, not libbpf's messages" sh -c \
	"grep -q '^marple-offcpu: statistics: records [0-9]' '$T/ocv.err' && ! grep -qi 'libbpf' '$T/ocv.err'"
check "advice: callstack -v: a line per group ($(grep -c statistics "$T/csv.err") lines), none over 600 bytes" sh -c \
	"grep -q '^marple-callstack: statistics: sampling: frequency 99' '$T/csv.err' && [ \$(awk 'length > 600' '$T/csv.err' | wc -l) -eq 0 ]"

# 5. interpreters whose frames are not walked: a hint, as node's and java's;
# none for one that is
perl -e '$x = 0; while (1) { $x++ }' & wl=$!
sleep 0.3
marple-callstack -F 199 -p "$wl" 1 > /dev/null 2> "$T/pl.err"
kill "$wl" 2>/dev/null; wait "$wl" 2>/dev/null
# (Perl 5.36's frames are walked now: no hint for it)
check "advice: perl, walked: no hint that its frames are not" \
	sh -c "! grep -q 'in the Perl interpreter' '$T/pl.err'"
# Ruby and PHP are known by their files' names (Debian's libruby-3.1.so,
# php8.2): a copy of nofp (it spins for as long as asked) named so stands
# in for them here
cp "$W/nofp" "$T/php8.2"
"$T/php8.2" 30 & wl=$!
sleep 0.2
marple-callstack -F 199 -p "$wl" 1 > /dev/null 2> "$T/php.err"
kill "$wl" 2>/dev/null; wait "$wl" 2>/dev/null
check "advice: php8.2: the PHP hint" grep -q 'in the PHP interpreter' "$T/php.err"
check "advice: no hint for a C program" sh -c "! grep -q 'interpreter' '$T/cs.err'"

# 6. java's hint adds -XX:+PreserveFramePointer (without it main is missing)
mkdir -p "$T/jdk/bin" && cp "$W/jitloop" "$T/jdk/bin/java"
"$T/jdk/bin/java" 4 nomap & wl=$!
sleep 0.3
marple-callstack -F 499 -p "$wl" 30 > /dev/null 2> "$T/java.err"
wait "$wl" 2>/dev/null; rm -f "/tmp/perf-$wl.map"
check "advice: java's hint adds -XX:+PreserveFramePointer" grep -q '(java): .*-XX:+PreserveFramePointer' "$T/java.err"
