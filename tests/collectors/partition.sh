# partition_make: a loop device over an 8 MiB file in $T with one 6 MiB
# partition added by BLKPG (addpart: no partition-table parser needed, this
# kernel has none); sets PART (loop0p1) and LOOPDEV (/dev/loop0), or returns 1.
# partition_free: detach it (the test's EXIT trap should call it).
partition_make() {
	PART= LOOPDEV=
	command -v losetup > /dev/null && command -v addpart > /dev/null || return 1
	truncate -s 8M "$T/disk.img" || return 1
	LOOPDEV=$(losetup -P -f --show "$T/disk.img") || return 1
	if ! addpart "$LOOPDEV" 1 2048 12288; then partition_free; return 1; fi
	_i=0
	while [ ! -b "${LOOPDEV}p1" ] && [ "$_i" -lt 50 ]; do sleep 0.1; _i=$((_i + 1)); done
	[ -b "${LOOPDEV}p1" ] || { partition_free; return 1; }
	PART=$(basename "$LOOPDEV")p1
}
partition_free() {
	[ -n "$LOOPDEV" ] && losetup -d "$LOOPDEV" 2> /dev/null
	LOOPDEV=
}
