# Fuzz targets in make check: build every tests/fuzz/*.c target, replay its
# seed corpus and every saved crash (tests/fuzz/regress/TARGET/*), then fuzz
# it for FUZZ_CHECK_SECONDS (default 3) so regressions show up in CI; replay
# the whole programs' saved crashes (tests/fuzz/regress/prog-NAME/*) too.
# `make fuzz FUZZ_SECONDS=N` is the long run (tests/fuzz/run-all).
. "$MARPLE_TOP/tests/lib.sh"
# 32 cases.  A sanitizer build (make check SANITIZE=1, CI's second pass) runs
# the two that only it can: the whole programs' saved crashes and mutated
# inputs, each through its sanitized program.  The libFuzzer targets and the
# config fuzzing are the same there as in the plain pass (the targets carry
# their own sanitizers; the config parser is awk): run once, in the plain pass.
case "$MARPLE_BIN" in */sanitize) plan 2 ;; *) plan 32 ;; esac
F="$MARPLE_TOP/tests/fuzz"
export FUZZ_OUT="$MARPLE_BIN/fuzz"
# The whole programs' saved crashes (tests/fuzz/regress/prog-NAME/*), each
# through its program: a documented exit with a message, no sanitizer report
# (in a sanitizer build; a plain one checks the exit and the message).
if python3 "$F/progs.py" --replay "$MARPLE_BIN" >"$T/replay.log" 2>&1; then
	pass "fuzz progs: replays $(awk '$1 == "replay" { print $2 }' "$T/replay.log") saved whole-program crashes"
else
	fail "fuzz progs: replay" "$(grep -v '^replay ' "$T/replay.log" | head -n 4 | tr '\n' ' ')"
fi
case "$MARPLE_BIN" in
*/sanitize)
	if python3 "$F/progs.py" "${FUZZ_CHECK_SECONDS:-3}" "$MARPLE_BIN" >"$T/progs.log" 2>&1; then
		pass "fuzz progs: $(awk '$1 == "progs" { print $2 }' "$T/progs.log") mutated inputs through every filter and renderer, no crash"
	else
		fail "fuzz progs" "$(grep -v '^progs ' "$T/progs.log" | head -n 3 | tr '\n' ' ')"
	fi
	exit 0 ;;
esac
if ! command -v clang >/dev/null 2>&1; then skip_rest "fuzz" "no clang"; fi
secs=${FUZZ_CHECK_SECONDS:-3}
# The targets carry their own sanitizers; a report must fail the case.
export ASAN_OPTIONS="detect_leaks=1" UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
if ! targets=$(sh "$F/build" 2>"$T/build.err"); then
	fail "fuzz: build" "$(head -c 600 "$T/build.err" | tr '\n' ' ')"
fi
for t in $targets; do
	# Replay: every seed and every saved crash runs once, no mutation.
	n=0
	for dir in "$F/corpus/$t" "$F/regress/$t"; do
		[ -d "$dir" ] || continue
		for f in "$dir"/*; do [ -f "$f" ] && n=$((n + 1)); done
	done
	if [ "$n" -gt 0 ]; then
		if "$FUZZ_OUT/$t" -runs=0 -artifact_prefix="$T/" $(ls -d "$F/corpus/$t" "$F/regress/$t" 2>/dev/null) \
			>"$T/$t.replay" 2>&1; then
			pass "fuzz $t: replays $n seed and regression inputs"
		else
			fail "fuzz $t: replay" "$(grep -E 'ERROR|runtime error|SUMMARY|fuzz:' "$T/$t.replay" | head -n 4 | tr '\n' ' ')"
		fi
	fi
	# A short run from the seeds; new inputs go to a scratch corpus.
	mkdir -p "$T/work-$t" "$T/crash-$t"
	dict=
	[ -f "$F/$t.dict" ] && dict="-dict=$F/$t.dict"
	if "$FUZZ_OUT/$t" -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 -max_len=8192 \
		-print_final_stats=1 -artifact_prefix="$T/crash-$t/" $dict "$T/work-$t" \
		$(ls -d "$F/corpus/$t" 2>/dev/null) >"$T/$t.log" 2>&1; then
		execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$T/$t.log" | tail -n 1)
		pass "fuzz $t: ${execs:-?} executions in ${secs}s, no crash"
	else
		mkdir -p "$MARPLE_BIN/fuzz/crashes/$t" && cp "$T/crash-$t"/* "$MARPLE_BIN/fuzz/crashes/$t/" 2>/dev/null
		fail "fuzz $t" "crashed; input kept in $MARPLE_BIN/fuzz/crashes/$t: $(grep -E 'ERROR|runtime error|SUMMARY' "$T/$t.log" | head -n 3 | tr '\n' ' ')"
	fi
done

# The driver's config parser (awk in scripts/marple): mutated config files
# through `marple config` (tests/fuzz/config.py).
if python3 "$F/config.py" "$secs" "$MARPLE_BIN" >"$T/config.log" 2>&1; then
	pass "fuzz config: $(awk '$1 == "config" { print $2 }' "$T/config.log") mutated config files, each accepted and read back the same or rejected with FILE:LINE, nothing run"
else
	fail "fuzz config" "$(grep -v '^config ' "$T/config.log" | head -n 3 | tr '\n' ' ')"
fi
