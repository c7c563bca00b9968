# Timed stack sections (marple-format(5)): old-style folding, marple-fold --from/--to,
# marple-cat --from/--to, and what is said about sections without times.
. "$MARPLE_TOP/tests/lib.sh"
plan 25
S="$DATA/timed.marple"

# Without a range a timed section folds like any stack section: the stack
# weights.  The offcpu section weighs microseconds, not callstack's samples:
# it is named and left out (marple-format(5), UNITS).
marple-fold "$S" > "$T/all" 2> "$T/all.err"
printf 'burn;main;phase_a;spin 4\nburn;main;phase_b;spin 3\nburn;main;phase_b;std::map<int, char>::find 1\n' > "$T/all.exp"
same "fold: timed sections fold like untimed ones" "$T/all.exp" "$T/all"
check "fold: samples sections are not called foreign data; offcpu's microseconds are named" sh -c \
	"! grep -q 'holds event data' '$T/all.err' && grep -q 'section 2 (offcpu) weighs us' '$T/all.err'"

marple-fold --from 0 --to 2 "$S" > "$T/a" 2> "$T/a.err"
printf 'burn;main;phase_a;spin 4\n' > "$T/a.exp"
same "fold --from 0 --to 2: only the first phase (the offcpu section, in us, left out)" "$T/a.exp" "$T/a"
marple-fold --from 2 --to 4 "$S" > "$T/b" 2>/dev/null
printf 'burn;main;phase_b;spin 3\nburn;main;phase_b;std::map<int, char>::find 1\n' > "$T/b.exp"
same "fold --from 2 --to 4: only the second phase" "$T/b.exp" "$T/b"
marple-fold --from 1.999999999 --to 2 "$S" > "$T/edge" 2>/dev/null
printf 'burn;main;phase_a;spin 1\n' > "$T/edge.exp"
same "fold: the range is [from, to): a sample at 'to' is out, at 'from' in" "$T/edge.exp" "$T/edge"
marple-fold --from 2.25 "$S" > "$T/open" 2>/dev/null
printf 'burn;main;phase_b;spin 2\nburn;main;phase_b;std::map<int, char>::find 1\n' > "$T/open.exp"
same "fold --from alone: to the end" "$T/open.exp" "$T/open"
# offcpu blocks: [0, 2 ms) nanosleep, [2, 2.5) read, [2.5, 3.5) nanosleep; 1 ms..3 ms overlaps
marple-cat -s 2,3 "$S" | marple-fold --from 0.001 --to 0.003 > "$T/dur" 2>&1
printf 'sleeper;main;nanosleep 1500\nsleeper;main;read 500\n' > "$T/dur.exp"
same "fold: a block counts the part of its duration inside the range" "$T/dur.exp" "$T/dur"

expect_exit "fold: a range with nothing in it exits 1" 1 'none in that time range' marple-fold --from 100 "$S"
expect_exit "fold: --from not before --to is a usage error" 2 'not before' marple-fold --from 2 --to 1 "$S"
expect_exit "fold: --from not a number is a usage error" 2 'from' marple-fold --from soon "$S"
expect_exit "fold: --from/--to on an untimed capture says why" 1 'no sample times.*--timed' marple-fold --from 0 "$DATA/sample.marple"
printf 'a;b 1\n' > "$T/folded"
expect_exit "fold: --from/--to on folded text says it has no times" 1 'folded input has no sample times' marple-fold --from 0 "$T/folded"
# A samples section cut loose from its stacks, and a sample naming a stack that is not there.
sed -n '6,15p' "$S" > "$T/loose"
expect_exit "fold: samples without their stack section are named" 1 'samples without their stack section' marple-fold --from 0 "$T/loose"
sed 's/stack=2,/stack=9,/' "$S" > "$T/badid"
marple-fold --from 2 --to 4 "$T/badid" > "$T/o" 2> "$T/e"
check "fold: a sample naming a missing stack is reported with its line" grep -q 'badid:12: sample names a stack' "$T/e"
check "fold: ... and counted as a malformed line" grep -q '1 malformed line skipped' "$T/e"

# marple-cat cuts: stacks renumbered and reweighted, samples kept, counts right.
marple-cat --from 2 --to 4 "$S" > "$T/cut" 2> "$T/cut.err"
check "cat --from/--to: the cut is a valid stream" marple-cat -q "$T/cut"
check "cat --from/--to: stacks without samples in the range are gone" test "$(grep -c phase_a "$T/cut")" -eq 0
check "cat --from/--to: a stack's weight is its samples in the range" grep -qx '3#burn;main;phase_b;spin' "$T/cut"
check "cat --from/--to: samples name their renumbered stacks" grep -qx '7250000000,sample,cpu1,stack=1,pid=42,tid=43' "$T/cut"
check "cat --from/--to: headers say the range" grep -q '"cut":\[2.0,4.0\]' "$T/cut"
marple-fold "$T/cut" > "$T/cutfold" 2>/dev/null
same "cat cut then fold = fold --from/--to" "$T/b.exp" "$T/cutfold"
marple-cat --from 0.001 --to 0.003 -s 2,3 "$S" | marple-fold > "$T/cutdur" 2>&1
same "cat cut of blocks then fold = fold --from/--to" "$T/dur.exp" "$T/cutdur"
marple-cat --from 1 "$DATA/sample.marple" > "$T/cut2" 2> "$T/cut2.err"
check "cat --from: sections without times are written whole, with a warning" grep -q 'section 0 (stack) has no times: written whole' "$T/cut2.err"
check "cat --from: event sections are cut by time" marple-cat -q "$T/cut2"
expect_exit "cat --from with -l is a usage error" 2 'not with -l' marple-cat -l --from 1 "$S"
