# marple-memleak against bundled workloads whose leaks are known (root, real BPF).
. "$MARPLE_TOP/tests/lib.sh"
plan 49
. "$MARPLE_TOP/tests/collectors/stacks.sh"
W="$MARPLE_BIN/workloads"
ML="$MARPLE_BIN/marple-memleak"

expect_exit "memleak: bad --min-age" 2 "" "$ML" --min-age x 1
expect_exit "memleak: bad duration" 2 "duration" "$ML" 0x
libc_cases memleak "$ML"

within() {	# within NAME GOT WANT PERCENT
	if awk -v g="$2" -v w="$3" -v p="$4" 'BEGIN { d = g - w; if (d < 0) d = -d; exit !(d <= w * p / 100) }'; then
		pass "$1 ($2)"
	else
		fail "$1" "got $2, wanted $3 +-$4%"
	fi
}

# 1. -c: leak_here leaks 200 x 5000 bytes; tidy_up frees all it allocates
#    (malloc, calloc, realloc, posix_memalign, aligned_alloc, memalign, valloc, mmap).
"$ML" -c "$W/leaky" > "$T/c.out" 2> "$T/c.err"; rc=$?
check "memleak -c: exit 0 and a valid stream" sh -c "[ $rc -eq 0 ] && marple-cat -q '$T/c.out'"
within "memleak -c: leak_here leaked 1000000 bytes" "$(weight "$T/c.out" '^leaky;(.*;)?main;leak_here(;|$)')" 1000000 1
big=$(weight "$T/c.out" 'tidy_up')
check "memleak -c: nothing large from tidy_up ($big bytes)" test "$big" -lt 10000
check "memleak -c: units are bytes in use, averaged" grep -q '"interface":"memleak".*"units":{"weight":"bytes","measure":"inuse_space","over_time":"average"}' "$T/c.out"
check "memleak -c: trailer: the command ended it" grep -q '"ended":"eof".*"allocations":200,' "$T/c.out"
check "memleak -c: two sections, stack then point" sh -c "marple-cat -l '$T/c.out' | awk 'NR==2 && \$2==\"memleak\" && \$3==\"stack\" {a=1} NR==3 && \$2==\"memusage\" && \$3==\"point\" {b=1} END {exit !(a && b)}'"
check "memleak -c: memusage names leaky with its bytes" grep -Eq '^[0-9.]+,1000000,leaky,comm=leaky,pid=[0-9]+,allocs=200$' "$T/c.out"
# reserve_space maps 1 GiB PROT_NONE and 64 MiB MAP_NORESERVE: no memory
check "memleak -c: address-space reservations are no leak ($(weight "$T/c.out" 'reserve_space') bytes)" \
	test "$(weight "$T/c.out" 'reserve_space')" -eq 0
check "memleak -c: the trailer counts them apart" grep -q '"reservations":2,"reserved_bytes":1140850688' "$T/c.out"

# 1b. the allocators' returns, one program told how each gives its result
# by its uretprobe's cookie: posix_memalign's block through its argument,
# mmap's MAP_FAILED no allocation
"$ML" -c "$W/alignleak" > "$T/a.out" 2>/dev/null
check "memleak: posix_memalign's 50 x 4096 bytes through its argument" \
	test "$(weight "$T/a.out" ';main;leak_aligned$')" -eq 204800
check "memleak: mmap's 10 x 64 KiB" test "$(weight "$T/a.out" ';main;leak_mapped$')" -eq 655360
check "memleak: a failed mmap (MAP_FAILED) is no allocation" test "$(weight "$T/a.out" 'fail_mapped')" -eq 0

# 2. -p with a duration, the process still running at the end
"$W/leaky" "$T/r2" 4000 & wl=$!	# leaks once memleak is ready
libc_mapped "$wl"
MARPLE_READY_FILE="$T/r2" "$ML" -p "$wl" 2500ms > "$T/p.out" 2> "$T/p.err"; rc=$?
kill "$wl" 2>/dev/null; wait "$wl" 2>/dev/null || :
check "memleak -p: exit 0" test "$rc" -eq 0
within "memleak -p: leak_here leaked 1000000 bytes" "$(weight "$T/p.out" 'leak_here')" 1000000 1
check "memleak -p: trailer says duration" grep -q '"ended":"duration"' "$T/p.out"

# 3. --min-age: the leak is 1.5 s old when leaky exits; 5 s hides it, 500 ms does not
"$ML" --min-age 5000 -c "$W/leaky 0 1500" > "$T/old.out" 2>/dev/null
check "memleak --min-age 5000: leak hidden" test "$(weight "$T/old.out" 'leak_here')" -eq 0
check "memleak --min-age 5000: counted as younger" grep -q '"younger_than_min_age":200' "$T/old.out"
"$ML" --min-age 500 -c "$W/leaky 0 1500" > "$T/young.out" 2>/dev/null
within "memleak --min-age 500: leak shown" "$(weight "$T/young.out" 'leak_here')" 1000000 1

# 4. --sample-every: an estimate, weighted by N
"$ML" --sample-every 10 -c "$W/leaky" > "$T/s.out" 2>/dev/null; rc=$?
check "memleak --sample-every 10: exit 0" test "$rc" -eq 0
within "memleak --sample-every 10: leak_here estimated" "$(weight "$T/s.out" 'leak_here')" 1000000 30

# 5. SIGINT: a complete section and trailer
MARPLE_READY_FILE="$T/r5" "$ML" > "$T/int.out" 2> "$T/int.err" & ml=$!
if wait_ready "$T/r5" 20; then sleep 0.5; kill -INT "$ml"; fi
wait "$ml"; rc=$?
check "memleak SIGINT: exit 0" test "$rc" -eq 0
check "memleak SIGINT: valid stream, trailer says signal" sh -c "marple-cat -q '$T/int.out' && grep -q '\"ended\":\"signal\"' '$T/int.out'"

# 6. every process: a process that exited took its memory back: left out, counted
MARPLE_READY_FILE="$T/r6" "$ML" > "$T/all.out" 2> "$T/all.err" & ml=$!
if wait_ready "$T/r6" 20; then "$W/leaky"; kill -INT "$ml"; fi
wait "$ml"; rc=$?
check "memleak every process: exit 0" test "$rc" -eq 0
check "memleak every process: exited leaky left out" test "$(weight "$T/all.out" '^leaky;')" -eq 0
check "memleak every process: its bytes counted in the trailer" grep -Eq '"bytes_of_exited_processes":([1-9][0-9]{6,})' "$T/all.out"

# 7. -K: kernel allocations with kernel stacks; this shell's 300 new files'
#    inodes and dentries stay allocated (cached) after the capture
rm -f "$T/rk"
MARPLE_READY_FILE="$T/rk" "$ML" -K > "$T/k.out" 2> "$T/k.err" & ml=$!
if wait_ready "$T/rk" 20 "$ml"; then
	mkdir "$T/many" && for i in $(seq 300); do : > "$T/many/$i"; done
fi
kill -INT "$ml"; wait "$ml"; rc=$?
check "memleak -K: exit 0 and a valid stream" sh -c "[ $rc -eq 0 ] && marple-cat -q '$T/k.out'"
check "memleak -K: kernel allocator frames" grep -Eq '^[0-9]+#.*(kmalloc|kmem_cache_alloc)' "$T/k.out"
check "memleak -K: no BPF frames at the leaf" sh -c "! grep -q 'bpf_prog_[0-9a-f]*_kmalloc\$' '$T/k.out'"
check "memleak -K: marple's own allocations left out ($(grep -c '^[0-9]*#marple' "$T/k.out") stacks of marple-*)" \
	sh -c "! grep -q '^[0-9]*#marple' '$T/k.out'"

# 8. exec: one process (one pid) runs sh, then execfrom, which leaks 1,200,000
#    bytes in from_leak, then execinto, which leaks 500,000 in into_leak (at
#    from_leak's address) and is still running at the end.  The exec took
#    execfrom's (and sh's) memory: counted in the trailer, not reported; the
#    memusage of the process starts again at the exec.
rm -f "$T/go"; mkfifo "$T/go"
sh -c 'read x < "$1"; exec "$2/execfrom" leak 0.5 "$2/execinto" leak 3' sh "$T/go" "$W" & wl=$!
libc_mapped "$wl"
MARPLE_READY_FILE="$T/r8" "$ML" -p "$wl" 2 > "$T/exec.out" 2> "$T/exec.err" & ml=$!
if wait_ready "$T/r8" 20; then echo go > "$T/go"; else kill "$wl"; fi
wait "$ml"; rc=$?
wait "$wl"
check "memleak exec: exit 0 and a valid stream" sh -c "[ $rc -eq 0 ] && marple-cat -q '$T/exec.out'"
# (execinto's leaks made before its table is built stop at the marker
# [no unwind table], never at a frame-pointer guess: they may all be)
within "memleak exec: into_leak named under execinto" \
	"$(weight "$T/exec.out" '^execinto;(.*;main|\[no unwind table\]);into_leak(;|$)')" 500000 1
within "memleak exec: nothing else outstanding" "$(weight "$T/exec.out" '.')" 500000 2
check "memleak exec: no frame of execfrom" test "$(weight "$T/exec.out" 'from_')" -eq 0
replaced=$(sed -n 's/.*"bytes_of_replaced_images":\([0-9]*\).*/\1/p' "$T/exec.out")
within "memleak exec: the old images' bytes in the trailer" "${replaced:-0}" 1200000 2
usage=$(awk -F, '/"interface":"memusage"/ { p = 1; next } p && /^[0-9]/ { if ($2 > max) max = $2; last = $2 "," $3 } END { print max + 0, last }' "$T/exec.out")
check "memleak exec: memusage dropped the old image at the exec ($usage)" sh -c "set -- $usage; [ \$1 -lt 1300000 ] && [ \$2 = 500000,execinto ]"

# Processes that exit take their allocations with them: the sweep (every 16
# drains; --drain-every 100) purges them from the table, or a long capture
# fills it with the dead.  10 runs of leaky leave 200 blocks each, 1,000,000
# bytes.
# (the capture ends once the ten have exited and a sweep or two has run: a
# fixed 6 s capture, at load under the sanitizers, ended during the tenth)
MARPLE_READY_FILE="$T/rpurge" "$ML" --drain-every 100 60 > "$T/purge.out" 2> "$T/purge.err" & ml=$!
wait_ready "$T/rpurge" 20
for i in 1 2 3 4 5 6 7 8 9 10; do "$W/leaky" 0 0 > /dev/null; done
sleep 4
kill -INT "$ml"
wait "$ml"; rc=$?
purged=$(sed -n 's/.*"allocations_of_exited_processes_purged":\([0-9]*\).*/\1/p' "$T/purge.out" | head -n 1)
gone=$(sed -n 's/.*"bytes_of_exited_processes":\([0-9]*\).*/\1/p' "$T/purge.out" | head -n 1)
check "memleak: the allocations of exited processes purged while capturing (${purged:-none})" \
	test "$rc" -eq 0 -a "${purged:-0}" -ge 2000
check "memleak: their bytes count as exited processes' (${gone:-none})" test "${gone:-0}" -ge 10000000

# 10. attached while the process allocates: a malloc begun before its return
# probe was attached once left the thread's pending call behind, and every
# later call of it looked nested (no allocation at all, 1 attach in 3).
# Twice, on a process calling malloc every millisecond.
"$W/nofp" 30 malloc & wl=$!
libc_mapped "$wl"
for i in 1 2; do
	"$ML" --unwind fp -p "$wl" 1 > "$T/busy$i.out" 2> "$T/busy$i.err"
	n=$(trailer_num "$T/busy$i.out" allocations)
	check "memleak -p on a process in malloc, attach $i: its allocations followed (${n:-none})" \
		test "${n:-0}" -ge 100
done
kill "$wl" 2>/dev/null; wait "$wl" 2>/dev/null || :
