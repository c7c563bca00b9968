# sharedtables.sh — three stack collectors at once (callstack, offcpu,
# mallocstacks: what `marple collect callstack offcpu mallocstacks` runs),
# each a 3 s capture of the whole machine: the kernel memory of each one's
# BPF maps (its trailer's memory: shared and private), and of the three
# together (each map once); this build's with its tables kept private
# (MARPLE_SHARED_TABLES=off) beside it.  BASE_BIN=DIR runs another build's
# three (main's, whose tables are each collector's own) first in each round;
# the load beside each line.
set -u
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
ROUNDS=${SHAREDTABLES_ROUNDS:-2}

# trio NAME BIN SHARED: the three at once from BIN (MARPLE_SHARED_TABLES=SHARED),
# one line each and one for all
trio() {
	load=$(cut -d' ' -f1 /proc/loadavg)
	for c in callstack offcpu mallocstacks; do
		MARPLE_SHARED_TABLES=$3 timeout 60 "$2/marple-$c" 3 > "$T/$c.out" 2> /dev/null &
	done
	wait
	for c in callstack offcpu mallocstacks; do
		awk -v c="$c" -v name="$1" -v load="$load" 'function num(k,  v) {
			v = m; if (!sub(".*\"" k "\":", "", v)) return -1; sub(/[^0-9].*/, "", v); return v }
		function unum(k,  v) { v = u; if (!sub(".*\"" k "\":", "", v)) return 0; sub(/[^0-9].*/, "", v); return v }
		/^\{"trailer"/ { m = $0; sub(/.*"memory":\{/, "", m); sub(/\}.*/, "", m)
			u = $0; sub(/.*"unwind":\{/, "", u); sub(/\}.*/, "", u)
			tables = "private"; if (u ~ /"tables":"shared"/) tables = "shared" }
		END { if (m == "") { printf "bench: sharedtables: %s: marple-%s: no trailer\n", name, c; exit }
		      b = num("bpf_map_bytes"); s = num("bpf_map_shared_bytes"); if (s < 0) s = 0
		      printf "bench: sharedtables: %s: marple-%s: BPF maps %.1f MB (shared %.1f, private %.1f; tables %s: files built %d, from the cache %d, from another collector %d), load %s\n",
			     name, c, b / 1048576, s / 1048576, (b - s) / 1048576, tables, unum("files_built"),
			     unum("files_from_cache"), unum("files_from_shared"), load
		      print b, s > "/dev/stderr" }' "$T/$c.out" 2>> "$T/sums"
	done
	awk -v name="$1" -v load="$load" '{ all += $1 - $2; if ($2 > shared) shared = $2 }
		END { printf "bench: sharedtables: %s: the three together: %.1f MB in the kernel (%.1f MB shared, held once), load %s\n",
			     name, (all + shared) / 1048576, shared / 1048576, load }' "$T/sums"
	rm -f "$T/sums"
}

r=0
while [ "$r" -lt "$ROUNDS" ]; do
	[ -n "${BASE_BIN:-}" ] && trio before "$BASE_BIN" on
	trio "MARPLE_SHARED_TABLES=off" "$MARPLE_BIN" off
	trio after "$MARPLE_BIN" on
	r=$((r + 1))
done
