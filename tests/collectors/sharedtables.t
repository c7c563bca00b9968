# The unwind tables in the kernel once for collectors running at once
# (lib/collect/unwindtablesshared.h): a second collector started while a
# first holds the tables takes the files the first built from the pinned
# maps (builds none but the vdso), both walk the whole chain of a program
# without frame pointers, both count the same shared map memory, and the
# last one out unpins and removes the lock files in /run/marple; a pin of
# another layout is never used (private tables, said in the trailer) and is
# dropped by the next first one in, as are the pins and lock files of other
# layouts nobody holds;
# MARPLE_SHARED_TABLES=off keeps the tables private; a file changed since
# its table was shared (its inode kept, or its number given to a new file)
# gets a table of its own, never the shared one (root, real BPF).
. "$MARPLE_TOP/tests/lib.sh"
plan 17
. "$MARPLE_TOP/tests/collectors/stacks.sh"
W="$MARPLE_BIN/workloads"
CS="$MARPLE_BIN/marple-callstack"

if ! is_root; then
	skip_rest "sharedtables: BPF cases" "not root"
fi
# unwind_str FILE KEY / unwind_num FILE KEY: a member of the trailer's "unwind"
unwind_str() { sed -n "s/.*\"unwind\":{[^}]*\"$2\":\"\([^\"]*\)\".*/\1/p" "$1" | tail -n 1; }
unwind_num() { sed -n "s/.*\"unwind\":{[^}]*\"$2\":\([0-9]*\).*/\1/p" "$1" | tail -n 1; }
memory_num() { sed -n "s/.*\"memory\":{[^}]*\"$2\":\([0-9]*\).*/\1/p" "$1" | tail -n 1; }
# complete NAME OUT: nofp's chain through main to chain_c, whole, in >= 98%
complete() {
	share "$1" "$(weight "$2" '^nofp;_start;__libc_start_main;(.*;)?main;chain_a;chain_b;chain_c(;|$)')" \
		"$(weight "$2" '.')" 98
}
# said NAME OUT: what the trailer says of the tables, for a failure's line
said() { echo "$(unwind_str "$1" tables) $(unwind_str "$1" tables_private_why) built $(unwind_num "$1" files_built) shared $(unwind_num "$1" files_from_shared)"; }
cp "$W/nofp" "$T/nofp"
"$T/nofp" 30 & wl=$!
libc_mapped "$wl"
export MARPLE_CACHE_DIR="$T/cache"	# cold: the first one builds

# 1. a second collector while the first holds the tables
MARPLE_READY_FILE="$T/ready" "$CS" -F 299 -p "$wl" 4 > "$T/a.out" 2> "$T/a.err" & a=$!
wait_ready "$T/ready" 20 || echo "the first one never ready" >> "$T/b.err"
"$CS" -F 299 -p "$wl" 1.5 > "$T/b.out" 2> "$T/b.err"
dir=$(unwind_str "$T/b.out" tables_pinned_in)
check "sharedtables: the second collector, while the first runs: pinned in ${dir:-?} ($(said "$T/b.out"))" \
	sh -c "[ -n '$dir' ] && [ -d '$dir' ] && [ '$(unwind_str "$T/b.out" tables)' = shared ]"
check "sharedtables: ... takes nofp, libc and ld.so from the first, builds only the vdso ($(said "$T/b.out"))" \
	sh -c "[ '$(unwind_num "$T/b.out" files_from_shared)' -ge 3 ] && [ '$(unwind_num "$T/b.out" files_built)' -eq 1 ]"
complete "sharedtables: ... and walks the whole chain" "$T/b.out"
wait "$a"
check "sharedtables: the first: shared, the same pin folder ($(said "$T/a.out"))" \
	test "$(unwind_str "$T/a.out" tables_pinned_in)" = "$dir"
complete "sharedtables: ... and walks the whole chain" "$T/a.out"
sa=$(memory_num "$T/a.out" bpf_map_shared_bytes) sb=$(memory_num "$T/b.out" bpf_map_shared_bytes)
check "sharedtables: both count the same shared map memory (${sa:-?}, ${sb:-?} bytes)" \
	sh -c "[ '${sa:-0}' -gt 0 ] && [ '$sa' = '$sb' ]"
check "sharedtables: the last one out unpinned them" test ! -e "$dir"
layout=${dir##*/}
check "sharedtables: ... and removed its lock files (/run/marple/tables-${layout:-?}.*)" \
	sh -c "[ -n '$layout' ] && [ ! -e '/run/marple/tables-$layout.lock' ] && [ ! -e '/run/marple/tables-$layout.holders' ]"

# 2. a pin of another layout, held (flock) as if a collector were running
# plant PINDIR: a map of another layout pinned as PINDIR/unwind_rows, only
# in a folder of bpffs (bpftool would mount one where it is not)
plant() {
	mkdir -p "$1" && [ "$(stat -f -c %T "$1")" = bpf_fs ] &&
		bpftool map create "$1/unwind_rows" type array key 4 value 8 entries 1 name unwind_rows
}
if [ -n "$layout" ] && [ -d /run/marple ]; then	# else the cases below fail, saying what they saw
	# held first: another collector starting meanwhile removes the pins
	# of a layout nobody holds
	exec 9>> "/run/marple/tables-$layout.holders"
	flock -s 9
	plant "$dir"
fi
"$CS" -F 299 -p "$wl" 1.5 > "$T/stale.out" 2> "$T/stale.err" 9>&-
check "sharedtables: a pin of another layout: not used, private tables, said why ($(said "$T/stale.out"))" \
	sh -c "[ '$(unwind_str "$T/stale.out" tables)' = private ] && grep -q 'tables_private_why\":\"[^\"]*another layout' '$T/stale.out'"
complete "sharedtables: ... and walks the whole chain" "$T/stale.out"
exec 9>&-	# no collector holds them now
other=/sys/fs/bpf/marple/00000000000000ab	# what a collector of another layout killed left
plant "$other"
# and what an older marple left: lock files of a layout with no pins
: > /run/marple/tables-00000000000000cd.lock; : > /run/marple/tables-00000000000000cd.holders
"$CS" -F 299 -p "$wl" 1.5 > "$T/fresh.out" 2> "$T/fresh.err"
check "sharedtables: the next first one in drops it and shares ($(said "$T/fresh.out"))" \
	sh -c "[ '$(unwind_str "$T/fresh.out" tables)' = shared ] && [ ! -e '$dir' ]"
check "sharedtables: ... and removes the pins of another layout nobody holds" test ! -e "$other"
check "sharedtables: ... and its lock files, and those of a layout with no pins" \
	sh -c "[ ! -e /run/marple/tables-00000000000000ab.lock ] && [ ! -e /run/marple/tables-00000000000000ab.holders ] &&
		[ ! -e /run/marple/tables-00000000000000cd.lock ] && [ ! -e /run/marple/tables-00000000000000cd.holders ]"

# 3. MARPLE_SHARED_TABLES=off
MARPLE_SHARED_TABLES=off "$CS" -F 299 -p "$wl" 1.5 > "$T/off.out" 2> "$T/off.err"
check "sharedtables: MARPLE_SHARED_TABLES=off: private, said so ($(said "$T/off.out"))" \
	sh -c "[ '$(unwind_str "$T/off.out" tables_private_why)' = MARPLE_SHARED_TABLES=off ] && [ '$(memory_num "$T/off.out" bpf_map_shared_bytes)' = 0 ]"
complete "sharedtables: ... and walks the whole chain" "$T/off.out"
kill "$wl" 2>/dev/null; wait "$wl" 2>/dev/null || :

# 4. a file rewritten in place while the tables are held (by a collector
# of another copy of it: the same layout): the same inode, another change
# time, as when a freed inode number is given to a new file.  The shared
# entry is another file's now: not taken, made afresh by whichever
# collector meets the file first (the holder's exec hook asks too)
cp "$W/nofp" "$T/nofp"; cp "$W/nofp" "$T/keep"
"$T/keep" 30 & kp=$!
"$T/nofp" 30 & wl=$!
libc_mapped "$kp"; libc_mapped "$wl"
rm -f "$T/ready"
MARPLE_READY_FILE="$T/ready" "$CS" -F 99 -p "$kp" 30 > "$T/hold.out" 2> "$T/hold.err" & h=$!
wait_ready "$T/ready" 20 || echo "the holder never ready" >> "$T/again.err"
"$CS" -F 299 -p "$wl" 1 > "$T/first.out" 2> "$T/first.err"
kill "$wl"; wait "$wl" 2>/dev/null
cat "$W/nofp" > "$T/nofp"	# in place: the inode kept
"$T/nofp" 30 & wl=$!
libc_mapped "$wl"
"$CS" -F 299 -p "$wl" 1.5 > "$T/again.out" 2> "$T/again.err"
kill -INT "$h"; wait "$h"
kill "$wl" "$kp" 2>/dev/null; wait "$wl" "$kp" 2>/dev/null || :
sh_=$(unwind_num "$T/hold.out" files_stale_in_shared) sa_=$(unwind_num "$T/again.out" files_stale_in_shared)
stale=$(( ${sh_:-0} + ${sa_:-0} ))
check "sharedtables: a file changed since its table was shared: made afresh ($stale stale; first: $(said "$T/first.out"); again: $(said "$T/again.out"))" \
	sh -c "[ '$(unwind_str "$T/first.out" tables_pinned_in)' = '$(unwind_str "$T/again.out" tables_pinned_in)' ] && [ $stale -ge 1 ]"
complete "sharedtables: ... and walks the whole chain" "$T/again.out"
