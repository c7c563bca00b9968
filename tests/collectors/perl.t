# marple-callstack (and marple-offcpu) and Perl: Debian's own /usr/bin/perl
# (5.36, ithreads, libperl linked in) running a script with known subs; its
# subs replace the interpreter's Perl_runops_standard activations in the
# stacks, the C frames between them (sort's) stay, _start stays at the bottom.
. "$MARPLE_TOP/tests/lib.sh"
plan 13
CS="$MARPLE_BIN/marple-callstack"
PERL=/usr/bin/perl

. "$MARPLE_TOP/tests/collectors/stacks.sh"
if ! is_root; then
	skip_rest "perl: BPF cases" "not root"
fi
if [ ! -x "$PERL" ] || [ "$("$PERL" -e 'printf "%vd", $^V' 2>/dev/null | cut -d. -f1,2)" != 5.36 ]; then
	skip_rest "perl: Debian's perl 5.36" "$PERL is not Perl 5.36"
fi

cp "$MARPLE_TOP/tests/workloads/perlchain.pl" "$T/work.pl"
F=$T/work.pl
P='[ ][(][^)]*[)]'	# " (file:line)"

# run MODE SECS OUT [collector options...]: the workload in MODE, captured
# for SECS seconds by marple-callstack -p
run() {
	interp_run "$PERL" "$F" "$@"
}

# 1. the chain {main};main::settle;main::crunch, with file:line, in place of
# Perl_runops_standard (90%: a loaded machine gives 2 s at 499 Hz 60
# samples, of which the first, taken before the process is looked at, and a
# call starting or ending miss; make bench BENCH=perl measures the issue's
# 95% floor)
run chain 2 "$T/chain.out"; rc=$?
check "perl: exit 0 and a valid stream" sh -c "[ $rc -eq 0 ] && marple-cat -q '$T/chain.out'"
total=$(weight "$T/chain.out" '.')
chain=$(weight "$T/chain.out" "^perl;_start;.*;perl_run;[{]main[}] [(]$F:[0-9]+[)];main::settle [(]$F:25[)];main::crunch [(]$F:1[45][)](;|\$)")
share "perl: _start ... perl_run;{main};main::settle;main::crunch (file:line) in >= 90% of the samples" "$chain" "$total" 90
evalw=$(weight "$T/chain.out" ';Perl_runops_standard(;|$)')
merged=$(trailer_num "$T/chain.out" samples_merged)
if [ "$total" -gt 20 ] && [ "$evalw" -le $(( total / 10 )) ] && [ "${merged:-0}" -ge $(( total * 9 / 10 )) ]; then
	pass "perl: >= 90% of the samples merged ($merged of $total; $evalw left with Perl_runops_standard)"
else
	fail "perl: >= 90% of the samples merged" "merged ${merged:-?}, Perl_runops_standard in $evalw, of $total samples"
fi
check "perl: the interpreter is named in the trailer, stderr quiet" sh -c "
	grep -q '\"perl 5[.]36[.][0-9]* table\":1' '$T/chain.out' && ! grep -q 'does not walk' '$T/chain.out.err'"

# 1b. the trailer says they are Perl frames; pprof and its -lines use it
if /usr/bin/python3 - "$T/chain.out" "$F" <<'PYEOF'
import json, sys
t = [json.loads(l) for l in open(sys.argv[1]) if l.startswith('{"trailer"')][0]
f = t["frames"]["main::settle (%s:25)" % sys.argv[2]]
sys.exit(0 if f == {"kind": "perl", "file": sys.argv[2], "line": 25} else 1)
PYEOF
then pass "perl: the trailer describes main::settle (perl, file, line)"
else fail "perl: the trailer describes main::settle" "$(tail -n 1 "$T/chain.out" | grep -o '"main::settle[^}]*}')"; fi
if pprof_traces "$T/chain.out" "$T/chain.traces"; then
	check "perl: go tool pprof -lines shows main::crunch and main::settle by file:line" sh -c "
		grep -q '^ *main::crunch $F:1[45]\$' '$T/chain.traces' && grep -q '^ *main::settle $F:25\$' '$T/chain.traces'"
else
	fail "perl: go tool pprof" "go missing (scripts/install-deps installs golang-go)"
fi

# 2. sort { by_size() }: pp_sort in its place, its C under it, the block's
# own activation after it (by_size, or the block itself at its line)
run sort 2 "$T/sort.out"
total=$(weight "$T/sort.out" '.')
S="main::settle_sorted [(]$F:29[)]"
cb=$(weight "$T/sort.out" "^perl;_start;.*;perl_run;[{]main[}]$P;$S;Perl_pp_sort;.*;main::by_size [(]$F:21[)](;|\$)")
insort=$(weight "$T/sort.out" "^perl;_start;.*;perl_run;[{]main[}]$P;$S;Perl_pp_sort(;|\$)")
if [ "$cb" -ge $(( total / 10 )) ] && [ "$insort" -ge $(( total * 8 / 10 )) ]; then
	pass "perl: Perl_pp_sort in place, main::by_size after its C ($cb; $insort in sort of $total)"
else
	fail "perl: Perl_pp_sort in place, main::by_size after its C" "$cb, $insort of $total: $(grep -m1 by_size "$T/sort.out" | cut -c1-400)"
fi

# 2b. sort by_size (a named sub): its context stays pushed between the
# calls, walked only while it runs: the samples in sort's C merge too
run sortsub 2 "$T/sortsub.out"
total=$(weight "$T/sortsub.out" '.')
S="main::settle_sorted_by [(]$F:34[)]"
cb=$(weight "$T/sortsub.out" "^perl;_start;.*;perl_run;[{]main[}]$P;$S;Perl_pp_sort;.*;main::by_size [(]$F:21[)](;|\$)")
insort=$(weight "$T/sortsub.out" "^perl;_start;.*;perl_run;[{]main[}]$P;$S;Perl_pp_sort(;|\$)")
mism=$(trailer_num "$T/sortsub.out" samples_mismatched)
if [ "$cb" -ge $(( total / 10 )) ] && [ "$insort" -ge $(( total * 8 / 10 )) ] && [ "${mism:-$total}" -le $(( total / 10 )) ]; then
	pass "perl: sort SUB: main::by_size after Perl_pp_sort's C ($cb; $insort in sort, ${mism} mismatched of $total)"
else
	fail "perl: sort SUB: main::by_size after Perl_pp_sort's C" "$cb, $insort, ${mism:-?} mismatched of $total: $(grep -m1 by_size "$T/sortsub.out" | cut -c1-400)"
fi

# 3. recursion: descend nine deep, each its own frame with its line
run recurse 2 "$T/rec.out"
total=$(weight "$T/rec.out" '.')
D="main::descend [(]$F:40[)]"
rec=$(weight "$T/rec.out" "[{]main[}]$P;$D;$D;$D;$D;$D;$D;$D;$D;$D;main::crunch [(]$F:1[45][)](;|\$)")
share "perl: {main};main::descend x 9;main::crunch" "$rec" "$total" 90

# 4. a Perl of a version without a known layout: said once, profiled natively
MARPLE_TEST_PERL_NO_TABLE=1 run chain 1 "$T/unknown.out"
interp_refused_cases perl "$T/unknown.out" \
	"process $interp_pid (perl) runs Perl 5[.]36[.][0-9]*: no frame layout is known for that version; profiled natively" \
	'"perl 5[.]36[.][0-9]* refused":1' '^perl;_start;.*;perl_run;Perl_runops_standard'

# 5. off the CPU: marple-offcpu gets the Perl frames too
interp_offcpu "$PERL" "$F" "$T/off.out"
offw=$(weight "$T/off.out" "^perl;_start;.*;[{]main[}]$P;main::settle_waiting [(]$F:44[)];Perl_pp_sselect;")
offtotal=$(weight "$T/off.out" '.')
share "perl: marple-offcpu: {main};main::settle_waiting;Perl_pp_sselect" "$offw" "$offtotal" 90

# 6. a Perl process started during a capture of the whole system
interp_started_case perl "$PERL" "$F" "^perl;_start;.*;[{]main[}]$P;main::settle [(]$F:25[)];main::crunch$P"
