# marple-diskblockrq against a direct-I/O workload with a known stack (root, real BPF).
. "$MARPLE_TOP/tests/lib.sh"
plan 18
. "$MARPLE_TOP/tests/collectors/stacks.sh"
W="$MARPLE_BIN/workloads"
DB="$MARPLE_BIN/marple-diskblockrq"

expect_exit "diskblockrq: -U with -K is a usage error" 2 "cannot be used together" "$DB" -U -K 1
expect_exit "diskblockrq: bad device" 2 "not a disk name" "$DB" -d a/b 1
root_cases diskblockrq "$DB"
expect_exit "diskblockrq: unknown device" 1 "no disk nosuchdisk0" "$DB" -d nosuchdisk0 1

# O_DIRECT needs a file system on a block device (not tmpfs)
D=
for d in "$MARPLE_TOP/build" /var/tmp "$T"; do
	case $(stat -f -c %T "$d" 2>/dev/null) in tmpfs|overlayfs|nfs*|fuse*|"") continue ;; esac
	D=$(mktemp -d "$d/marple-dio.XXXXXX") && break
done
if [ -z "$D" ]; then
	skip_rest "diskblockrq: BPF cases" "no directory on a block device for O_DIRECT"
fi
. "$MARPLE_TOP/tests/collectors/partition.sh"
trap 'partition_free; rm -rf "$T" "$D"' EXIT

# 1. 64 x 64 KiB written, then read, with O_DIRECT by directio
MARPLE_READY_FILE="$T/r1" "$DB" -a -v > "$T/rq.out" 2> "$T/rq.err" & db=$!
wait_ready "$T/r1" 20
# directio waits 500 ms before its I/O: its 64 writes take ~20 ms, and on a
# loaded machine (CI) all of them were issued before the collector had built
# directio's unwind table, so no stack reached main (seen in CI, stop 42).
"$W/directio" "$D/f" 64 500; wrc=$?
sleep 0.3; kill -INT "$db"; wait "$db"; rc=$?
check "diskblockrq: workload ran" test "$wrc" -eq 0
check "diskblockrq: exit 0 and a valid stream" sh -c "[ $rc -eq 0 ] && marple-cat -q '$T/rq.out'"
# (a request made before directio's unwind table is built, in its first
# milliseconds, ends at the marker [no unwind table] above its libc frames)
w=$(weight "$T/rq.out" '^directio;((.*;)?main;(.*;)?|\[no unwind table\];(.*;)?)[^;]*pwrite[^;]*;.*_\[k\]')
r=$(weight "$T/rq.out" '^directio;((.*;)?main;(.*;)?|\[no unwind table\];(.*;)?)[^;]*pread[^;]*;.*_\[k\]')
# for a failure's diagnosis: directio's stacks that are neither (a shortfall
# seen once in CI's way, 63 of 64, left no trace of the stack it had)
if [ "$w" -lt 64 ] || [ "$r" -lt 64 ]; then
	echo "diskblockrq: directio's other stacks:" >&2
	grep -E '^[0-9]+#directio;' "$T/rq.out" | grep -Ev ';[^;]*(pwrite|pread)[^;]*;.*_\[k\]' | head -n 5 >&2
fi
# A request the device could not take at once is issued later by a kernel
# worker, which block_rq_issue then names (the man page says so): 63 of 64
# were directio's in the run noted above and once in a lone clone's
# make check, with no other stack of directio's.  Two of 64 may go so; a
# stack that lost more lost them.
check "diskblockrq: the pwrite stack issued >= 62 of 64 requests ($w)" test "$w" -ge 62
check "diskblockrq: the pread stack issued >= 62 of 64 requests ($r)" test "$r" -ge 62
# The write path's kernel frames (which ones depends on the file system and
# on whether the request was issued from the task or plugged and flushed later
# in it): any of the syscall, VFS, direct-I/O or block layer names.
kpath='(pwrite|vfs_write|_dio|dio_|direct|submit_bio|blk_|bio_)[^;]*_\[k\]'
if ! grep -Eq "^[0-9]+#directio;.*main;(.*;)?[^;]*pwrite[^;]*;.*$kpath" "$T/rq.out"; then
	echo "diskblockrq: the heaviest pwrite stacks were:" >&2
	grep -E '^[0-9]+#directio;.*pwrite' "$T/rq.out" | sort -t'#' -k1,1nr | head -n 3 >&2
	grep -E 'statistics: unwind' "$T/rq.err" >&2
fi
check "diskblockrq: kernel frames after the user ones" grep -Eq "^[0-9]+#directio;.*main;(.*;)?[^;]*pwrite[^;]*;.*$kpath" "$T/rq.out"
check "diskblockrq: no BPF frames at the leaf" sh -c "! grep -q 'bpf_prog_[0-9a-f]*_rq_issue' '$T/rq.out'"
check "diskblockrq: units requests" grep -q '"units":{"weight":"requests"}' "$T/rq.out"

# 2. --bytes, the same workload, counted from the insert tracepoint, -p
"$W/directio" "$D/g" 64 "$T/rb" & wl=$!	# its I/O once diskblockrq is ready
MARPLE_READY_FILE="$T/rb" "$DB" --bytes --insert -p "$wl" 2 > "$T/b.out" 2> "$T/b.err"; rc=$?
wait "$wl"
b=$(weight "$T/b.out" '^directio;(.*;)?main;.*pwrite')
check "diskblockrq --bytes: exit 0" test "$rc" -eq 0
check "diskblockrq --bytes: pwrite stack has >= 4 MiB ($b)" test "$b" -ge 4194304
check "diskblockrq --bytes: units bytes" grep -q '"units":{"weight":"bytes"}' "$T/b.out"
other=$(awk '/^[0-9]+#/ && !/^[0-9]+#directio;/ { n++ } END { print n + 0 }' "$T/b.out")
check "diskblockrq -p: only the process's requests" test "$other" -eq 0

# 3. -d PARTITION: the block tracepoints see the disk, not the partition
# (loop0p1 is 259:N, its disk 7:N): 200 reads of the partition are counted
# (the partition's own number matched none of them)
if partition_make; then
	# the reads start once the collector is attached, however slow that is
	MARPLE_READY_FILE="$T/rp" "$DB" -d "$PART" 60 > "$T/part.out" 2> "$T/part.err" & db=$!
	if wait_ready "$T/rp" 30; then
		dd if=/dev/$PART of=/dev/null bs=4k iflag=direct count=200 2> /dev/null
	fi
	kill -INT "$db"; wait "$db"; rc=$?
	n=$(weight "$T/part.out" '^dd;')
	check "diskblockrq -d $PART: the 200 reads of the partition counted ($n)" sh -c "[ $rc -eq 0 ] && [ $n -ge 200 ]"
	check "diskblockrq -d $PART: says it counts its disk" grep -q "$PART is a partition" "$T/part.err"
else
	skip "diskblockrq -d PARTITION: the reads counted" "cannot make a loop device with a partition"
	skip "diskblockrq -d PARTITION: says it counts its disk" "cannot make a loop device with a partition"
fi
