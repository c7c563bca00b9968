# The unwind tables' cache on disk (marple-callstack(1), CACHE): a second
# capture reads its files' rows instead of building them, with the same
# stacks; a file changed in place and a corrupt entry are rebuilt; --no-cache
# writes nothing; two collectors at once build each file once; a symlink
# planted at an entry is not followed; a directory of another user is not
# used, nor one behind a symlink; lock files do not pile up; an entry that
# passes the checks but is no table is counted once, as corrupt (root, real BPF;
# each case its own cache directory under $T).
. "$MARPLE_TOP/tests/lib.sh"
plan 19
. "$MARPLE_TOP/tests/collectors/stacks.sh"
W="$MARPLE_BIN/workloads"
CS="$MARPLE_BIN/marple-callstack"
# the disk cache alone: tables another collector running now pinned would
# be taken from the kernel, not the cache (sharedtables.t tests that)
export MARPLE_SHARED_TABLES=off

check "unwindcache: --help lists --no-cache" sh -c "'$CS' --help | grep -q -- '--no-cache'"
if ! is_root; then
	skip_rest "unwindcache: BPF cases" "not root"
fi
# trailer_unwind FILE KEY: a number of the trailer's "unwind" object
trailer_unwind() {
	sed -n "s/.*\"unwind\":{[^}]*\"$2\":\([0-9]*\).*/\1/p" "$1" | tail -n 1
}
# run NAME DIR PROG [OPTIONS...]: PROG (a copy of nofp) sampled 1.5 s, with
# the cache in DIR
run() {
	_n=$1 _d=$2 _p=$3; shift 3
	"$_p" 4 & _wl=$!
	exec_done "$_wl" "$(basename "$_p" | cut -c1-15)"
	MARPLE_CACHE_DIR="$_d" "$CS" -F 299 -p "$_wl" "$@" 1.5 > "$T/$_n.out" 2> "$T/$_n.err"
	kill "$_wl" 2>/dev/null; wait "$_wl" 2>/dev/null
}
# complete NAME OUT PROG: the chain through main to chain_c, whole, in >= 98%
complete() {
	share "$1" "$(weight "$2" "^$3;_start;__libc_start_main;(.*;)?main;chain_a;chain_b;chain_c(;|$)")" \
		"$(weight "$2" '.')" 98
}
# top OUT: the stack with the most weight (by names: a frame's line is not
# compared, each capture tags other lines than its first, marple-format(5))
top() {
	untag "$1" | awk '/^\{"trailer"/ { exit } index($0, "#") && substr($0, 1, 1) != "{" {
		w = substr($0, 1, index($0, "#") - 1); f = substr($0, index($0, "#") + 1); s[f] += w }
		END { for (f in s) if (s[f] > m) { m = s[f]; t = f } print t }'
}
cp "$W/nofp" "$T/nofp"
objcopy --remove-section .note.gnu.build-id "$W/nofp" "$T/nobid"
C=$T/c

# 1. cold, then warm: the second capture builds nothing, same stacks
run cold "$C" "$T/nofp"
check "unwindcache: cold: nofp, libc and ld.so built and written" sh -c \
	"[ '$(trailer_unwind "$T/cold.out" files_built)' -ge 3 ] && [ '$(trailer_unwind "$T/cold.out" cache_entries_written)' -ge 3 ] && [ '$(trailer_unwind "$T/cold.out" files_from_cache)' -eq 0 ]"
check "unwindcache: its directory 0700, its entries 0600" sh -c \
	"[ \"\$(stat -c %a '$C/unwind')\" = 700 ] && [ -z \"\$(find '$C/unwind' -type f ! -perm 600)\" ]"
: > "$C/unwind/f-1-2.lock"	# left by an older marple, which kept them
run warm "$C" "$T/nofp"
check "unwindcache: no lock file left after two captures, an old one removed" \
	test -z "$(find "$C/unwind" -name '*.lock')"
# (the vdso is built each time, never cached: tests/security/unwindcache.t)
check "unwindcache: warm: every file read from the cache, none built but the vdso" sh -c \
	"[ '$(trailer_unwind "$T/warm.out" files_built)' -eq 1 ] && [ '$(trailer_unwind "$T/warm.out" files_from_cache)' -ge 3 ] && grep -q '\"cache\":\"on\"' '$T/warm.out'"
complete "unwindcache: warm: the whole chain" "$T/warm.out" nofp
check "unwindcache: warm: the same top stack as cold" test "$(top "$T/warm.out")" = "$(top "$T/cold.out")"

# 2. a file without build-id, changed in place (touched): its entry is stale
run nobid1 "$C" "$T/nobid"
touch -d '2001-01-01' "$T/nobid"
run nobid2 "$C" "$T/nobid"
check "unwindcache: a changed file's entry: stale, rebuilt" \
	test "$(trailer_unwind "$T/nobid2.out" files_rebuilt_stale)" -ge 1
complete "unwindcache: ... and its stacks whole" "$T/nobid2.out" nobid

# 3. corrupt entries (the last byte of each flipped, one truncated) are rebuilt
for e in "$C"/unwind/*; do
	case $e in *.lock) continue ;; esac
	size=$(stat -c %s "$e")
	printf '\377' | dd of="$e" bs=1 seek=$((size - 1)) conv=notrunc 2>/dev/null
done
e=$(ls "$C"/unwind/f-* | grep -v '\.lock$' | head -n 1)
truncate -s 100 "$e"
run corrupt "$C" "$T/nofp"
check "unwindcache: corrupt entries: rebuilt, counted" \
	test "$(trailer_unwind "$T/corrupt.out" files_rebuilt_corrupt)" -ge 3
complete "unwindcache: ... and the stacks whole" "$T/corrupt.out" nofp

# 4. --no-cache: nothing read or written
run nocache "$T/nc" "$T/nofp" --no-cache
check "unwindcache: --no-cache: no directory, cache off in the trailer" sh -c \
	"[ ! -e '$T/nc' ] && grep -q '\"cache\":\"off\"' '$T/nocache.out' && [ '$(trailer_unwind "$T/nocache.out" files_built)' -ge 3 ]"

# 5. two collectors at once on a cold cache: each file built once
# (a failure says what each did: the trailer counts, not names, what each
# built; two_said N: what collector N did with the cache and said of it)
two_said() {
	_o=$T/two$1.out
	echo "collector $1: built $(trailer_unwind "$_o" files_built), read $(trailer_unwind "$_o" files_from_cache)" \
		"($(trailer_unwind "$_o" files_from_cache_after_wait) after a wait), wrote" \
		"$(trailer_unwind "$_o" cache_entries_written), stale $(trailer_unwind "$_o" files_rebuilt_stale)," \
		"corrupt $(trailer_unwind "$_o" files_rebuilt_corrupt)$(grep 'unwind cache' "$T/two$1.err" | head -n 2 | sed 's/^/; /')"
}
# two_entries: the cache's files, an entry by its file's name (the workload's)
two_entries() {
	for _e in $(ls "$T/two/unwind"); do
		printf ' %s' "$(awk -v e="$_e" '$1 == e { n = split($2, p, "/"); f = p[n] } END { print f ? f : e }' "$T/two.names")"
	done
}
"$T/nofp" 4 & wl=$!
# (the process past ld.so, all its files mapped, before both start: two
# collectors that looked while ld.so mapped libc each built it, before the
# lookup again with room for an entry written meanwhile, unwindtables.c)
libc_mapped "$wl"
sleep 0.3
# the entries' names (f-DEV-INO) of the files it maps, for a failure's message
awk '$6 ~ /^\// { print $6 }' "/proc/$wl/maps" 2>/dev/null | sort -u | while read -r p; do
	stat -c 'f-%D-%i %n' "$p"; done > "$T/two.names" 2>/dev/null
MARPLE_CACHE_DIR="$T/two" "$CS" -F 299 -p "$wl" 1.5 > "$T/two1.out" 2> "$T/two1.err" & a=$!
MARPLE_CACHE_DIR="$T/two" "$CS" -F 299 -p "$wl" 1.5 > "$T/two2.out" 2> "$T/two2.err" & b=$!
wait "$a" "$b"
kill "$wl" 2>/dev/null; wait "$wl" 2>/dev/null
b1=$(trailer_unwind "$T/two1.out" files_built) b2=$(trailer_unwind "$T/two2.out" files_built)
files=$(trailer_unwind "$T/two1.out" files)
n="unwindcache: two at once: ${b1:-?} + ${b2:-?} builds for ${files:-?} files (the vdso by each)"
if [ "$((${b1:-0} + ${b2:-0}))" -eq "$((${files:--1} + 1))" ]; then pass "$n"; else
	fail "$n" "$(two_said 1); $(two_said 2); in the cache:$(two_entries)"
fi

# 6. a symlink planted at an entry (and at its lock) is not followed
id=$(stat -c '%D-%i' "$T/nofp")
mkdir -m 700 "$T/sl" "$T/sl/unwind"
echo keep > "$T/victim"
ln -s "$T/victim" "$T/sl/unwind/f-$id"
ln -s "$T/victim" "$T/sl/unwind/f-$id.lock"
run symlink "$T/sl" "$T/nofp"
check "unwindcache: a symlinked entry: its target untouched, the entry a file" sh -c \
	"[ \"\$(cat '$T/victim')\" = keep ] && [ -f '$T/sl/unwind/f-$id' ] && [ ! -L '$T/sl/unwind/f-$id' ]"
complete "unwindcache: ... and the stacks whole" "$T/symlink.out" nofp

# 7. a cache directory of another user: not used, said once
mkdir -m 700 "$T/other"
chown 65534 "$T/other"
run other "$T/other" "$T/nofp"
check "unwindcache: another user's directory: not used, said once" sh -c \
	"[ \"\$(grep -c 'unwind cache $T/other not used: it belongs to uid 65534' '$T/other.err')\" = 1 ] && grep -q '\"cache\":\"off\"' '$T/other.out' && [ ! -e '$T/other/unwind' ]"

# 8. a symlinked cache directory: not followed, and said so
mkdir -m 700 "$T/real"
ln -s "$T/real" "$T/link"
run link "$T/link" "$T/nofp"
check "unwindcache: a symlinked directory: not used, 'a symbolic link' said" sh -c \
	"grep -q 'unwind cache $T/link not used: a symbolic link' '$T/link.err' && grep -q '\"cache\":\"off\"' '$T/link.out' && [ ! -e '$T/real/unwind' ]"

# 9. an entry that passes every check of the cache (its checksum right) yet
# is no table: refused at import, counted once, as corrupt and not also as
# read from the cache (issue 40); the file is built and its stacks whole
run refuse1 "$T/ri" "$T/nofp"
python3 - "$T/ri/unwind/f-$id" <<'PY' 2> "$T/forge.err"
import struct, sys
# struct entry_header (unwindtablescache.c): magic[8], format, unit, size,
# 4 counts, key[160], checksum; the data after it zeroed, the sum made again
path = sys.argv[1]
b = open(path, 'rb').read()
H, M = 224, (1 << 64) - 1
h = bytearray(b[:H])
size = struct.unpack_from('<Q', h, 16)[0]
assert h[:8] == b'marpleUW' and len(b) == H + size, 'not an entry of the layout known here'
def add(s, buf):
    n = len(buf) // 8 * 8
    for i in range(0, n, 8):
        s = ((s ^ int.from_bytes(buf[i:i + 8], 'little')) * 0x100000001b3) & M
        s ^= s >> 29
    for c in buf[n:]:
        s = ((s ^ c) * 0x100000001b3) & M
    return s
data = bytes(size)
struct.pack_into('<Q', h, 216, 0)
struct.pack_into('<Q', h, 216, add(add(0xcbf29ce484222325, bytes(h)), data))
open(path, 'wb').write(bytes(h) + data)
PY
run refuse2 "$T/ri" "$T/nofp"
w=$(trailer_unwind "$T/warm.out" files_from_cache)
r=$(trailer_unwind "$T/refuse2.out" files_from_cache) c=$(trailer_unwind "$T/refuse2.out" files_rebuilt_corrupt)
check "unwindcache: an entry refused at import: ${r:-?} read + ${c:-?} corrupt of ${w:-?} cached files" \
	test -s "$T/refuse1.out" -a ! -s "$T/forge.err" -a "${c:-0}" -eq 1 -a "$((${r:--9} + ${c:-0}))" -eq "${w:--1}"
complete "unwindcache: ... and the stacks whole" "$T/refuse2.out" nofp
