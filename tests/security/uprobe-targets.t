# A uprobe's target file cannot stall or mislead a collector (issue 40):
# the library given with --lib, or the one a traced process maps, is opened
# without blocking, a regular file only, and its functions found through the
# model (mappedfiles + the symbolizer's ELF slot); the kernel then probes the
# very file checked.  Before, libbpf opened the path itself: a FIFO there
# (given, through a symlink, or put by the traced process over its own libc
# in its mount namespace) hung the collector for ever in open(2).
. "$MARPLE_TOP/tests/lib.sh"
plan 10
. "$MARPLE_TOP/tests/collectors/stacks.sh"
W="$MARPLE_BIN/workloads"
MS="$MARPLE_BIN/marple-mallocstacks"
ML="$MARPLE_BIN/marple-memleak"
if ! is_root; then
	skip_rest "uprobe-targets: BPF cases" "not root"
fi

mkfifo "$T/fifo" && ln -s "$T/fifo" "$T/link"
printf 'not an ELF file\n' > "$T/text"
# timeout: a stall shows as exit 124, not as a test that never ends
expect_exit "uprobe-targets: --lib a FIFO: exit 1 at once, saying so" 1 \
	"cannot attach a uprobe to malloc in $T/fifo: not a regular file" timeout 20 "$MS" --lib "$T/fifo" 1
expect_exit "uprobe-targets: --lib a symlink to a FIFO: exit 1, saying so" 1 \
	"in $T/link: not a regular file" timeout 20 "$MS" --lib "$T/link" 1
expect_exit "uprobe-targets: --lib a device: exit 1, saying so" 1 \
	"in /dev/zero: not a regular file" timeout 20 "$MS" --lib /dev/zero 1
expect_exit "uprobe-targets: memleak --lib a FIFO: exit 1, saying so" 1 \
	"in $T/fifo: not a regular file" timeout 20 "$ML" --lib "$T/fifo" 1
expect_exit "uprobe-targets: --lib a file that is not ELF: exit 1, saying so" 1 \
	"in $T/text: not an ELF file" timeout 20 "$MS" --lib "$T/text" 1
expect_exit "uprobe-targets: --lib an ELF without malloc: exit 1, saying so" 1 \
	"to malloc in $W/sleeper: no such function" timeout 20 "$MS" --lib "$W/sleeper" 1

# A process (nobody, in its own user and mount namespace) that has mapped
# libc puts a FIFO over libc's name in its namespace (here root does it for
# it, with nsenter, so that it happens after libc is mapped and before the
# capture); -p then finds libc in its maps.  The probes go on the very file
# it maps (its map_files entry), and its allocations are counted as usual.
setpriv --reuid=65534 --regid=65534 --clear-groups unshare -Urm "$W/mallocpaths" 200 wait & wl=$!
i=0	# mallocpaths, not unshare before its exec
while [ "$(readlink "/proc/$wl/exe")" != "$W/mallocpaths" ] && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
libc_mapped "$wl"
libc=$(sed -n 's|^.* \(/[^ ]*/libc[.-][^ ]*\)$|\1|p' "/proc/$wl/maps" | head -n 1)
mkfifo "$T/trap" && chmod 644 "$T/trap"
nsenter -t "$wl" -m mount --bind "$T/trap" "$libc" 2> "$T/mount.err"
if [ -p "/proc/$wl/root$libc" ]; then
	pass "uprobe-targets: the process's libc is a FIFO in its namespace"
else
	fail "uprobe-targets: the process's libc is a FIFO in its namespace" \
		"$libc: $(head -c 200 "$T/mount.err")"
fi
# (a loaded machine takes seconds to load the BPF program: the timeout is
# for a stall, not a measure)
MARPLE_READY_FILE="$T/ready" timeout 120 "$MS" -p "$wl" 2 > "$T/p.out" 2> "$T/p.err" & ms=$!
if wait_ready "$T/ready" 100; then kill -USR1 "$wl"; fi
wait "$ms"; rc=$?
kill "$wl" 2>/dev/null; wait "$wl" 2>/dev/null
check "uprobe-targets: -p of that process: exit 0 within the duration" test "$rc" -eq 0
check "uprobe-targets: ... its mapped file probed, not the FIFO" \
	grep -q "\"library\":\"/proc/$wl/map_files/" "$T/p.out"
small=$(weight "$T/p.out" 'path_small')
big=$(weight "$T/p.out" 'path_big')
# as mallocstacks.t's -p case: path_big twice path_small, give or take a round
if [ "$big" -gt 20000000 ] && awk -v b="$big" -v s="$small" 'BEGIN { d = b - 2 * s; exit !(d <= 6000000 && d >= -6000000) }'; then
	pass "uprobe-targets: ... its allocations counted: path_big twice path_small ($big:$small)"
else
	fail "uprobe-targets: ... its allocations counted" "got $big:$small, wanted 2:1 +- 6000000 bytes ($(head -c 300 "$T/p.err"))"
fi
