# --unwind tables (the default): user stacks walked in the kernel with tables
# built from .eh_frame, on workloads whose stacks are known, built without
# frame pointers (nofp, unwinds) and with them (hotcold), and on Debian's own
# python3, and on one whose CFI is in .debug_frame only (root, real BPF).
. "$MARPLE_TOP/tests/lib.sh"
plan 68
. "$MARPLE_TOP/tests/collectors/stacks.sh"
W="$MARPLE_BIN/workloads"
CS="$MARPLE_BIN/marple-callstack"

expect_exit "unwind: an unknown mode is a usage error" 2 "'bogus' is not tables, fp or dwarf" "$CS" --unwind bogus 1
expect_exit "unwind: dwarf where there is none is a usage error" 2 "only tables or fp" \
	"$MARPLE_BIN/marple-mallocstacks" --unwind dwarf 1
if ! is_root; then
	skip_rest "unwind: BPF cases" "not root"
fi

# trailer_unwind FILE KEY: a number of the trailer's "unwind" object
trailer_unwind() {
	sed -n "s/.*\"unwind\":{[^}]*\"$2\":\([0-9]*\).*/\1/p" "$1" | tail -n 1
}
# capture NAME ARGS...: run the workload ARGS, then the collector on it for 2 s
capture() {
	_n=$1; shift
	"$@" & _wl=$!
	exec_done "$_wl" "$(basename "$1" | cut -c1-15)"
	"$CS" -F 299 -p "$_wl" 2 > "$T/$_n.out" 2> "$T/$_n.err"; crc=$?
	kill "$_wl" 2>/dev/null; wait "$_wl" 2>/dev/null
}

# 1. nofp (-O2 -fomit-frame-pointer): the whole chain, every stack complete
capture nofp "$W/nofp" 4
all=$(weight "$T/nofp.out" '.')
share "unwind: nofp: _start;...;main;chain_a;chain_b;chain_c without frame pointers" \
	"$(weight "$T/nofp.out" '^nofp;_start;__libc_start_main;(.*;)?main;chain_a;chain_b;chain_c(;|$)')" "$all" 98
check "unwind: header says tables" grep -q '"unwind":"tables"' "$T/nofp.out"
stacks=$(trailer_unwind "$T/nofp.out" stacks)
share "unwind: trailer: stacks complete" "$(trailer_unwind "$T/nofp.out" complete)" "${stacks:-0}" 98
check "unwind: trailer: frames by table, table memory and build time" \
	grep -Eq '"unwind":\{.*"frames_by_table":[1-9].*"table_bytes":[1-9][0-9]*.*"build_ms":[0-9]' "$T/nofp.out"
bpr=$(sed -n 's/.*"unwind":{[^}]*"bytes_per_row":\([0-9.]*\).*/\1/p' "$T/nofp.out" | tail -n 1)
check "unwind: trailer: compact rows, at most 12 bytes a row with index and rules (${bpr:-none})" \
	awk -v b="${bpr:-0}" -v r="$(trailer_unwind "$T/nofp.out" rules)" 'BEGIN { exit !(b > 0 && b <= 12 && r > 2) }'
"$W/nofp" 60 & wl=$!
exec_done "$wl" nofp
"$CS" --unwind fp -F 299 -p "$wl" 2 > "$T/fp.out" 2>/dev/null
kill "$wl" 2>/dev/null; wait "$wl" 2>/dev/null
check "unwind: --unwind fp: the header says fp" grep -q '"unwind":"fp"' "$T/fp.out"
check "unwind: --unwind fp loses the chain there" test "$(weight "$T/fp.out" 'chain_a;chain_b;chain_c')" -eq 0

# 2. with frame pointers (hotcold): the same chains, and the leaves' caller
# run_round that a frame-pointer walk loses
capture hotcold "$W/hotcold" 4
all=$(weight "$T/hotcold.out" '.')
share "unwind: hotcold (frame pointers): _start;...;main;run_round;hot_loop|cold_loop" \
	"$(weight "$T/hotcold.out" '^hotcold;_start;__libc_start_main;(.*;)?main;run_round;(hot|cold)_loop(;|$)')" "$all" 98

# 3. deeper than a stack holds (300): its 255 leaf frames, then the marker,
# counted (a few samples catch the recursion on its way down: 3% here)
"$W/unwinds" deep 4 & wl=$!
exec_done "$wl" unwinds
"$CS" -U -F 299 -p "$wl" 2 > "$T/deep.out" 2> "$T/deep.err"
kill "$wl" 2>/dev/null; wait "$wl" 2>/dev/null
all=$(weight "$T/deep.out" '.')
share "unwind: deep recursion: [truncated: 256+ frames], then 255 frames down to the leaf" \
	"$(awk -F';' '/^[0-9]+#unwinds;/ && NF == 257 && $2 == "[truncated: 256+ frames]" && $3 == "recurse" { split($1, w, "#"); s += w[1] } END { print s + 0 }' "$T/deep.out")" "$all" 95
stacks=$(trailer_unwind "$T/deep.out" stacks)
share "unwind: deep recursion: stacks cut at the depth limit, counted" \
	"$(trailer_unwind "$T/deep.out" cut_depth_limit)" "${stacks:-0}" 95
# a caller in the mapping of the frame before it is found without a
# search of the process's mappings: nearly all of 255 recursive frames;
# the first 128 of them (the last stack's kept) by the last stack's rule,
# with no search of the table either
frames=$(($(trailer_unwind "$T/deep.out" frames_by_table) + $(trailer_unwind "$T/deep.out" frames_by_frame_pointer)))
remembered=$(trailer_unwind "$T/deep.out" frames_rule_from_last_stack)
share "unwind: deep recursion: frames in the mapping of the frame before, or the last stack's, no search" \
	"$(($(trailer_unwind "$T/deep.out" frames_same_mapping) + ${remembered:-0}))" "$frames" 90
share "unwind: deep recursion: the first 128 frames' rules from the CPU's last stack" \
	"${remembered:-0}" "$frames" 42
# and the process's mappings too, with no look-up (every stack but a CPU's
# first, and the first after the process's mappings were read)
share "unwind: deep recursion: the process's mappings from the CPU's last stack" \
	"$(trailer_unwind "$T/deep.out" mappings_from_last_stack)" "${stacks:-0}" 90

# 4. a signal handler: the walk goes on through the signal trampoline to
# the interrupted code and main
capture signal "$W/unwinds" signal 4
all=$(weight "$T/signal.out" '.')
share "unwind: signal: _start;...;main;sig_outer;...;on_alarm;sig_burn" \
	"$(weight "$T/signal.out" '^unwinds;_start;__libc_start_main;(.*;)?main;sig_outer;(.*;)?on_alarm;sig_burn(;|$)')" "$all" 2
share "unwind: signal: every stack reaches _start" "$(weight "$T/signal.out" '^unwinds;_start;__libc_start_main;')" "$all" 98

# 5. a library dlopen'ed during the capture: its table is loaded when its
# code is first sampled
"$W/unwinds" dlopen 2.5 & wl=$!
MARPLE_READY_FILE="$T/dl.ready" "$CS" -F 299 -p "$wl" 3 > "$T/dl.out" 2> "$T/dl.err" & cs=$!
await_ready "unwind: dlopen: collector ready" "$T/dl.ready" 20 "$T/dl.err"
sleep 0.3
kill -USR1 "$wl"
wait "$cs"; wait "$wl" 2>/dev/null
crc=$(weight "$T/dl.out" 'crc32')
# (the samples taken before libz's table is built are walked by frame
# pointers: 1 in 250 here, 1 in 5 on a machine at load 16)
share "unwind: dlopen: libz's crc32 samples reach _start through main;dl_phase" \
	"$(weight "$T/dl.out" '^unwinds;_start;__libc_start_main;(.*;)?main;dl_phase;[^;]*crc32')" "$crc" 75
check "unwind: dlopen: the new mapping was asked for and loaded" \
	test "$(trailer_unwind "$T/dl.out" process_loads)" -ge 2
# the request's wait is counted (the trailer's measure of a starved builder)
check "unwind: dlopen: the request served, its wait counted" \
	test "$(trailer_unwind "$T/dl.out" requests_served)" -ge 1 -a -n "$(trailer_unwind "$T/dl.out" request_wait_max_ms)"

# 6. a process that execs during the capture: the new image's tables
after_ready "$T/rexec" "$W/nofp" 2 & wl=$!	# exec'ed once the capture runs
MARPLE_READY_FILE="$T/rexec" "$CS" -F 299 -p "$wl" 2.5 > "$T/exec.out" 2> "$T/exec.err"
wait "$wl" 2>/dev/null
share "unwind: exec: the new image's chain" \
	"$(weight "$T/exec.out" '^nofp;_start;__libc_start_main;(.*;)?main;chain_a;chain_b;chain_c(;|$)')" \
	"$(weight "$T/exec.out" '^nofp;')" 95

# 7. threads: from clone3 to the burner (libc's debug symbols name that
# address __clone3, clone3 and __GI___clone3: the public name is shown)
capture threads "$W/unwinds" threads 4
all=$(weight "$T/threads.out" '.')
share "unwind: threads: clone3;start_thread;thread_main;th_a;th_b;th_burn" \
	"$(weight "$T/threads.out" '^unwinds;clone3;start_thread;thread_main;th_a;th_b;th_burn(;|$)')" "$all" 98

# 8. Debian's python3 (no frame pointers; not another python3 first in PATH):
# every stack reaches _start
cat > "$T/busy.py" <<'EOF'
import sys, time
t0 = time.time()
def work(n):
    return sum(i * i for i in range(n))
while time.time() - t0 < float(sys.argv[1]):
    work(10000)
EOF
capture python /usr/bin/python3 "$T/busy.py" 4
all=$(weight "$T/python.out" '^python3;')
share "unwind: python3: samples reaching _start;__libc_start_main;...;Py_BytesMain" \
	"$(weight "$T/python.out" '^python3;_start;__libc_start_main;(.*;)?Py_BytesMain;')" "$all" 99
# (its static functions, the generator's among them, have no symbol left:
# Debian strips them)
# (the interpreter's loop shows as the Python code it runs: python.t)
share "unwind: python3: ... and on through the interpreter's loop" \
	"$(weight "$T/python.out" '^python3;_start;(.*;)?PyEval_EvalCode;(_PyEval_EvalFrameDefault|<module> \()')" "$all" 95

# 9. the other stack collectors: off-CPU stacks of nofp asleep in libc's
# nanosleep, and malloc's callers
"$W/nofp" 4 block & wl=$!
exec_done "$wl" nofp
"$MARPLE_BIN/marple-offcpu" -p "$wl" 2 > "$T/off.out" 2> "$T/off.err"
kill "$wl" 2>/dev/null; wait "$wl" 2>/dev/null
share "unwind: offcpu: _start;...;main;chain_a;chain_b;chain_c;...;clock_nanosleep" \
	"$(weight "$T/off.out" '^nofp;_start;(.*;)?main;chain_a;chain_b;chain_c;(.*;)?clock_nanosleep')" \
	"$(weight "$T/off.out" 'nanosleep')" 95
check "offcpu: header and trailer say tables" \
	sh -c "grep -q '\"unwind\":\"tables\"' '$T/off.out' && grep -q '\"unwind\":{\"stacks\":[1-9]' '$T/off.out'"
"$MARPLE_BIN/marple-mallocstacks" -c "$W/mallocpaths 3" > "$T/ms.out" 2> "$T/ms.err"
# (the mallocs made before the command's tables are loaded end in the
# marker [no unwind table] after their leaf frames, never in a guess)
share "unwind: mallocstacks: malloc's callers up to _start" \
	"$(weight "$T/ms.out" '^mallocpaths;_start;__libc_start_main;(.*;)?main;path_(big|small);alloc_(big|small);[^;]*malloc$')" \
	"$(weight "$T/ms.out" '^mallocpaths;[^[]')" 90
share "unwind: mallocstacks: every stack complete or cut at [no unwind table]" \
	"$(weight "$T/ms.out" '^mallocpaths;(_start;__libc_start_main;|\[no unwind table\];)')" "$(weight "$T/ms.out" '.')" 99
check "unwind: mallocstacks: header says tables" grep -q '"unwind":"tables"' "$T/ms.out"

# 10. CFI in .debug_frame only (debugframe: -g -fno-asynchronous-unwind-tables,
# no frame pointers): the walk reads it there, through df_c's callers to _start
capture debugframe "$W/debugframe" 4
share "unwind: .debug_frame: _start;...;main;df_a;df_b;df_c without .eh_frame for them" \
	"$(weight "$T/debugframe.out" '^debugframe;_start;__libc_start_main;(.*;)?main;df_a;df_b;df_c(;|$)')" \
	"$(weight "$T/debugframe.out" '.')" 98
check "unwind: .debug_frame: the trailer counts its FDEs" \
	test "$(trailer_unwind "$T/debugframe.out" fdes_from_debug_frame)" -ge 4

# 10b. the same with its debug sections compressed (-gz=zlib), as debug
# files and Go binaries have them: inflated into the builder's own memory
# (libelf inflating it in the read-only mapped file was a SIGSEGV)
capture debugframez "$W/debugframez" 4
check "unwind: compressed .debug_frame: the collector survives (exit $crc), its stream whole" \
	sh -c "[ $crc -eq 0 ] && marple-cat -q '$T/debugframez.out'"
share "unwind: compressed .debug_frame: _start;...;main;df_a;df_b;df_c" \
	"$(weight "$T/debugframez.out" '^debugframez;_start;__libc_start_main;(.*;)?main;df_a;df_b;df_c(;|$)')" \
	"$(weight "$T/debugframez.out" '.')" 98

# 11. code with CFI but no table (--unwind-memory 64K: libc does not fit) is
# not walked by frame pointers: the stack stops there with one marker, named
# in the warning and counted (MARPLE_FINISH_CUTS=off); by default the
# collector walks on from there in user space (13b)
"$W/nofp" 60 & wl=$!
exec_done "$wl" nofp
MARPLE_FINISH_CUTS=off "$CS" --unwind-memory 64K -F 299 -p "$wl" 2 > "$T/noroom.out" 2> "$T/noroom.err"
"$CS" --unwind-memory 64K -F 299 -p "$wl" 2 > "$T/noroom-on.out" 2> "$T/noroom-on.err"
kill "$wl" 2>/dev/null; wait "$wl" 2>/dev/null
share "unwind: no room for libc, walked on in user space: _start;__libc_start_main;...;chain_c" \
	"$(weight "$T/noroom-on.out" '^nofp;_start;__libc_start_main;__libc_start_call_main;main;chain_a;chain_b;chain_c$')" \
	"$(weight "$T/noroom-on.out" '.')" 95
all=$(weight "$T/noroom.out" '.')
share "unwind: no room for libc: [no unwind table];__libc_start_call_main;main;chain_a;chain_b;chain_c" \
	"$(weight "$T/noroom.out" '^nofp;\[no unwind table\];__libc_start_call_main;main;chain_a;chain_b;chain_c(;|$)')" "$all" 98
check "unwind: no room: no [unknown] frame" test "$(weight "$T/noroom.out" 'unknown')" -eq 0
check "unwind: no room: the warning names libc" grep -q 'reached their limit (--unwind-memory 64K.*libc\.so' "$T/noroom.err"
stacks=$(trailer_unwind "$T/noroom.out" stacks)
share "unwind: no room: counted cut_table_not_loaded" "$(trailer_unwind "$T/noroom.out" cut_table_not_loaded)" "${stacks:-0}" 98
check "unwind: no room: no frame walked by frame pointer (libc has CFI)" \
	test "$(trailer_unwind "$T/noroom.out" frames_by_frame_pointer)" -eq 0
check "unwind: no room: the trailer names the file" grep -q '"files_without_room_names":\["[^"]*libc\.so' "$T/noroom.out"
expect_exit "unwind: --unwind-memory: a bad size is a usage error" 2 "not a size" "$CS" --unwind-memory 12X 1

# 12. short-lived processes of a known file (nofp, 20 ms each, 30 in a row,
# system-wide): from the second on, walked from their first sample, before
# user space has read their mappings (bpf_find_vma finds each address's file)
# A first run under another name (a symlink: the same file, comm nofpwarm)
# has the file's table built while it runs, as a first process would; on a
# loaded machine its 20 ms would end before the table is made.
ln -s "$W/nofp" "$T/nofpwarm"
# The capture ends on SIGINT once the runs have (however slow they were).
MARPLE_READY_FILE="$T/short.ready" "$CS" -U -F 999 0 > "$T/short.out" 2> "$T/short.err" & cs=$!
wait_ready "$T/short.ready" 20 "$cs"
"$T/nofpwarm" 0.5
for i in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23 24 25 26 27 28 29 30; do "$W/nofp" 0.02; done
kill -INT "$cs"; wait "$cs"
# (their libc frames may go unnamed: a process gone before its maps were
# read; the walk is what is tested here).  Of each run's samples, those in
# the dynamic loader before main (rooted in ld.so) are its own whole stacks,
# 8% of them here and more on a slower machine: the share is of the rest.
want='^nofp;_start;(.*;)?main;chain_a;chain_b;chain_c' run='^nofp;([^[]|\[[^l]|\[l[^d])'
share "unwind: short-lived nofp: whole stacks from the first samples" \
	"$(weight "$T/short.out" "$want")" "$(weight "$T/short.out" "$run")" 90 \
	"$(misses "$T/short.out" "$want" "$run")"
check "unwind: short-lived nofp: files found by bpf_find_vma, counted" \
	test "$(trailer_unwind "$T/short.out" frames_file_by_vma)" -gt 0


# 13. short-lived processes of a known file, each stack crossing two files
# (nofp and libc: 30 runs of 50 ms, system-wide, from their first
# milliseconds): the program's own code is found with no lookup, libc by the
# one lookup a sample allows (bpf_find_vma) or one walk of the VMAs, kept for
# the process's later samples; the trailer says which lookup and counts
# what it found and missed.
MARPLE_READY_FILE="$T/short2.ready" "$CS" -U -F 999 0 > "$T/short2.out" 2> "$T/short2.err" & cs=$!
wait_ready "$T/short2.ready" 20 "$cs"
for i in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23 24 25 26 27 28 29 30; do "$W/nofp" 0.05; done
kill -INT "$cs"; wait "$cs"
share "unwind: short-lived nofp, 50 ms: whole stacks through libc from the first samples" \
	"$(weight "$T/short2.out" '^nofp;_start;(__libc_start_main|\[unknown\]);(.*;)?main;chain_a;chain_b;chain_c')" \
	"$(weight "$T/short2.out" '^nofp;')" 70
check "unwind: short-lived nofp: the trailer says how a PC finds its file" \
	grep -Eq '"file_lookup":"(find_vma|vma_iterator)"' "$T/short2.out"
check "unwind: short-lived nofp: the program's code found with no lookup, counted" \
	test "$(trailer_unwind "$T/short2.out" frames_file_by_program)" -gt 0
check "unwind: short-lived nofp: files missed, counted" \
	grep -Eq '"cut_file_not_found":[0-9]+,"cut_file_not_built":[0-9]+' "$T/short2.out"

# 13b. a file's table is built when the file is first sampled, so a new
# program's first samples are cut where its table is missing; the collector
# copies the registers and stack there and walks on in user space
# (lib/collect/unwindcut.c).  Six copies of nofp, each a file never seen:
# every chain_c stack whole, what could not be walked on counted
# (cuts_left), and without it (MARPLE_FINISH_CUTS=off) the same runs cut.
fresh_runs() {
	for i in 1 2 3 4 5 6; do
		cp "$W/nofp" "$T/fresh$i"
		"$T/fresh$i" 0.1
	done
	rm -f "$T"/fresh[1-6]
}
MARPLE_READY_FILE="$T/cut.ready" "$CS" -U -F 999 0 > "$T/cut.out" 2> "$T/cut.err" & cs=$!
wait_ready "$T/cut.ready" 20 "$cs"
fresh_runs
kill -INT "$cs"; wait "$cs"
MARPLE_FINISH_CUTS=off MARPLE_READY_FILE="$T/cutoff.ready" "$CS" -U -F 999 0 > "$T/cutoff.out" 2> "$T/cutoff.err" & cs=$!
wait_ready "$T/cutoff.ready" 20 "$cs"
fresh_runs
kill -INT "$cs"; wait "$cs"
sent=$(trailer_unwind "$T/cut.out" cuts_sent) finished=$(trailer_unwind "$T/cut.out" cuts_finished)
left=$(trailer_unwind "$T/cut.out" cuts_left)
check "unwind: new programs: cut stacks sent ($sent), walked on ($finished) or left ($left), counted" 	test "${sent:-0}" -gt 0 -a "${finished:-0}" -gt 0 -a "$((${finished:-0} + ${left:-0}))" -eq "${sent:-0}"
unwalked=$((${left:-0} + $(trailer_unwind "$T/cut.out" cuts_not_sent)))
check "unwind: new programs: every chain_c stack whole but those counted left cut ($(weight "$T/cut.out" '^fresh[1-6];.*chain_c$') samples, $unwalked left)" \
	test "$(weight "$T/cut.out" '^fresh[1-6];.*chain_c$')" -gt 100 -a \
	"$(($(weight "$T/cut.out" '^fresh[1-6];.*chain_c$') - $(weight "$T/cut.out" '^fresh[1-6];_start;__libc_start_main;(.*;)?main;chain_a;chain_b;chain_c$')))" \
	-le "$unwalked"
check "unwind: new programs: stacks left cut are those counted left" \
	test "$(weight "$T/cut.out" '^fresh[1-6];.*\[no unwind table\]')" -le "$unwalked"
check "unwind: MARPLE_FINISH_CUTS=off: none sent, and the same runs cut" \
	test "$(trailer_unwind "$T/cutoff.out" cuts_sent)" -eq 0 -a \
	"$(weight "$T/cutoff.out" '^fresh[1-6];.*\[no unwind table\]')" -gt 0

# 14. a program deleted while it runs (an upgrade, a build tree cleaned) and
# one in a directory whose name has a newline (its maps line shows "\012"):
# its file is opened through /proc/PID/map_files, so its stacks are still
# walked and named, by tables and by --unwind dwarf
cp "$W/nofp" "$T/nofp-deleted"
mkdir -p "$T/new
line"
cp "$W/nofp" "$T/new
line/nofp"
for mode in tables dwarf; do
	"$T/nofp-deleted" 8 & wl=$!
	exec_done "$wl" nofp-deleted
	rm -f "$T/nofp-deleted"
	"$CS" --unwind "$mode" -F 299 -p "$wl" 2 > "$T/deleted-$mode.out" 2> "$T/deleted-$mode.err"
	kill "$wl" 2>/dev/null; wait "$wl" 2>/dev/null
	cp "$W/nofp" "$T/nofp-deleted"
	share "unwind: a deleted program ($mode): _start;...;main;chain_a;chain_b;chain_c" \
		"$(weight "$T/deleted-$mode.out" '^nofp-deleted;_start;__libc_start_main;(.*;)?main;chain_a;chain_b;chain_c(;|$)')" \
		"$(weight "$T/deleted-$mode.out" '^nofp-deleted;')" 95
	"$T/new
line/nofp" 8 & wl=$!
	exec_done "$wl" nofp
	"$CS" --unwind "$mode" -F 299 -p "$wl" 2 > "$T/newline-$mode.out" 2> "$T/newline-$mode.err"
	kill "$wl" 2>/dev/null; wait "$wl" 2>/dev/null
	share "unwind: a program under a name with a newline ($mode): main;chain_a;chain_b;chain_c" \
		"$(weight "$T/newline-$mode.out" '^nofp;_start;__libc_start_main;(.*;)?main;chain_a;chain_b;chain_c(;|$)')" \
		"$(weight "$T/newline-$mode.out" '^nofp;')" 95
done

# 15. short-lived processes named whole (system-wide): shortlived runs 25 ms
# and exits, gone before its maps are read again (50 ms after its exec's);
# its libc, mapped by ld.so after the exec's read, is named from the file
# the walk found (PROCNEWS_UNWIND_VMA), not [unknown].  Its "late" runs map
# libz 0.3 s in (after that second read) and exit before the next (1 s):
# their libz frames are named the same way.
MARPLE_READY_FILE="$T/shortlived.ready" "$CS" -U -F 999 7 > "$T/shortlived.out" 2> "$T/shortlived.err" & cs=$!
wait_ready "$T/shortlived.ready" 20 "$cs"
for i in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20; do "$W/shortlived" 0.025; done
for i in 1 2 3 4 5 6 7 8 9 10; do "$W/shortlived" 0.005 late 0.04; done
wait "$cs"
want='^shortlived;_start;__libc_start_main;__libc_start_call_main;main;chain_a;chain_b;chain_c$'
run='^shortlived;_start;.*;main;chain_a;chain_b;chain_c$'
share "unwind: short-lived: libc named between _start and main;chain_a;chain_b;chain_c" \
	"$(weight "$T/shortlived.out" "$want")" "$(weight "$T/shortlived.out" "$run")" 97 \
	"$(misses "$T/shortlived.out" "$want" "$run") trailer: $(tail -n 1 "$T/shortlived.out" | grep -Eo '"(frames_file_by_vma|find_vma_busy|vma_notes[a-z_]*)":[0-9]+' | tr '\n' ' ')"
share "unwind: short-lived: a library mapped late (libz) named in its stacks: lib_burn;adler32" \
	"$(weight "$T/shortlived.out" ';main;lib_burn;adler32(_z)?$')" "$(weight "$T/shortlived.out" ';main;lib_burn;')" 90 \
	"$(misses "$T/shortlived.out" ';main;lib_burn;adler32(_z)?$' ';main;lib_burn;')"
check "unwind: short-lived: frames named from the walk's VMAs, counted" \
	test "$(trailer_unwind "$T/shortlived.out" frames_named_from_walk)" -gt 0
check "unwind: short-lived: VMAs told, none lost" \
	grep -Eq '"vma_notes":[1-9][0-9]*,"vma_notes_lost":0' "$T/shortlived.out"

# 16. another collector's uprobes in the stack: marple-memleak on the same
# process puts a uretprobe on malloc: until it returns, its return address
# points at the trampoline in the process's [uprobes] page.  The walk takes
# each trampoline address for the caller it stands for (the kernel's
# pending return_instance list), so malloc's samples stay under
# main;churn rather than end in [no unwind table];[unknown].
"$W/mallocbench" 1000000000 > /dev/null & wl=$!
libc_mapped "$wl"
MARPLE_READY_FILE="$T/mlready" "$MARPLE_BIN/marple-memleak" -p "$wl" 8 > "$T/ml.out" 2> "$T/ml.err" & ml=$!
i=0; while [ ! -e "$T/mlready" ] && [ $i -lt 100 ] && kill -0 "$ml" 2>/dev/null; do sleep 0.1; i=$((i + 1)); done
"$CS" -U -F 499 -p "$wl" 2 > "$T/uprobed.out" 2> "$T/uprobed.err"
kill "$wl" 2>/dev/null; wait "$wl" "$ml" 2>/dev/null
share "unwind: under another collector's uretprobe: malloc's samples under main;churn" \
	"$(weight "$T/uprobed.out" '^mallocbench;_start;.*;main;churn;malloc$')" "$(weight "$T/uprobed.out" ';malloc$')" 85
check "unwind: under a uretprobe: trampoline return addresses given back, counted" \
	test "$(trailer_unwind "$T/uprobed.out" frames_uretprobe)" -gt 0

# 17. eviction: the rows hold the tables of one copy of python3 beside
# libc's and ld.so's, not two (MARPLE_TEST_UNWIND_WORDS: 4/5 of the words
# an uncapped run of A then B used, more than all but one copy).  A runs
# and exits, then B: B's table takes the rows of A's, which no process maps
# any more (counted evicted), its stacks rooted at _start; private and
# shared.  With A still running while B starts, nothing is evicted: one of
# them has no table, the other's stacks stay whole.
py=$(readlink -f /usr/bin/python3)
cp "$py" "$T/evict-a" && cp "$py" "$T/evict-b"
# (seconds of CPU, not of the clock: ~200 samples each at any load, of
# which a few before a table is built are cut: 5 of 99 under ASan in CI)
printf 'import sys, time\nwhile time.process_time() < float(sys.argv[1]): pass\n' > "$T/evict.py"
printf '#!/bin/sh\nfor p in "%s" "%s"; do "$p" "%s" 1; done\n' "$T/evict-a" "$T/evict-b" "$T/evict.py" > "$T/ab.sh"
printf '#!/bin/sh\n"%s" "%s" 10 & echo $! > "%s"\n"%s" "%s" 1\nkill $(cat "%s")\n' \
	"$T/evict-a" "$T/evict.py" "$T/evict-a.pid" "$T/evict-b" "$T/evict.py" "$T/evict-a.pid" > "$T/live.sh"
chmod +x "$T/ab.sh" "$T/live.sh"
# evict_run NAME SCRIPT [ENV...]: the collector on SCRIPT and what it starts
evict_run() {
	_n=$1 _s=$2; shift 2
	env "$@" "$CS" --no-cache --no-python -U -F 199 -c "$_s" > "$T/$_n.out" 2> "$T/$_n.err"
}
# evict_words STREAM: the words of rows in use; evict_said STREAM: the counts
evict_words() {
	echo $((($(trailer_unwind "$1" table_bytes) - $(trailer_unwind "$1" rules) * 8) / 4))
}
evict_said() {
	for k in files_evicted words_evicted evict_scans files_without_room process_loads cut_table_not_loaded; do
		printf '%s=%s ' "$k" "$(trailer_unwind "$1" $k)"
	done
	sed -n 's/.*"files_without_room_names":\(\[[^]]*\]\).*/\1/p' "$1" | tail -n 1
}
evict_run uncapped "$T/ab.sh" MARPLE_TEST_UNWIND_WORDS=4000000
cap=$(($(evict_words "$T/uncapped.out") * 4 / 5))
for mode in off on; do
	evict_run "evict-$mode" "$T/ab.sh" MARPLE_TEST_UNWIND_WORDS=$cap MARPLE_SHARED_TABLES=$mode
	o="$T/evict-$mode.out"
	share "unwind: eviction ($mode): B's table in A's rows, its stacks rooted at _start ($(evict_said "$o"))" \
		"$(weight "$o" '^evict-b;_start;__libc_start_main;')" "$(weight "$o" '^evict-b;')" 95
	check "unwind: eviction ($mode): A's table evicted, no file without room (cap $cap words: $(evict_said "$o"))" \
		sh -c "[ '$(trailer_unwind "$o" files_evicted)' -ge 1 ] && [ '$(trailer_unwind "$o" words_evicted)' -gt 0 ] &&
		       [ '$(trailer_unwind "$o" files_without_room)' -eq 0 ]"
done
evict_run live "$T/live.sh" MARPLE_TEST_UNWIND_WORDS=$cap
[ -s "$T/evict-a.pid" ] && kill "$(cat "$T/evict-a.pid")" 2>/dev/null
o="$T/live.out"
check "unwind: eviction: a file a live process maps is never evicted: A or B without room ($(evict_said "$o"))" \
	sh -c "[ '$(trailer_unwind "$o" files_evicted)' -eq 0 ] && [ '$(trailer_unwind "$o" evict_scans)' -ge 1 ] &&
	       [ '$(trailer_unwind "$o" files_without_room)' -eq 1 ] && grep -q '\"files_without_room_names\":\[\"[^\"]*/evict-[ab]\"\]' '$o'"
kept=a; grep -q '"files_without_room_names":\["[^"]*/evict-a"\]' "$o" && kept=b
share "unwind: eviction: the live one with the table ($kept) keeps its stacks whole ($(evict_said "$o"))" \
	"$(weight "$o" "^evict-$kept;_start;__libc_start_main;")" "$(weight "$o" "^evict-$kept;")" 95
