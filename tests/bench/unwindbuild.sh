# unwindbuild.sh — user stacks system-wide during a build: gcc and clang
# compile a C file in a loop (one of each at a time), marple-callstack -U
# -F 499 for UNWIND_BUILD_SECS (default 8) with --unwind tables, fp and
# dwarf in turn, then perf record -a --call-graph dwarf on the same load
# (where perf is installed; perf script --no-inline unwinds it after).  For cc1's and clang's samples with a user stack, prints the
# share that reaches __libc_start_main or start_thread, the share walked to
# a root at all (_start, clone3, or the dynamic loader's start: a program
# being relocated), the share ending in [no unwind table], and the samples
# with 5 or more [unknown] frames in a row (names a process gone before its
# maps were read lacks: not guesses in tables mode); and the BPF run time a
# sample (the trailer's sampling.program_ns / program_runs).  tables runs
# twice, on an empty unwind cache (cold: every file built) and again on the
# cache it left (warm); each run prints the collector's CPU (start-up
# included) and the whole cost a sample: BPF run time + the collector's CPU,
# over the samples.  Then -p on one clang, cold, warm and --no-cache:
# the start-up and CPU of the collector.
#
# UNWIND_BUILD_LOAD=N adds N CPU spinners for the whole bench (each bounded
# by timeout, killed on exit), waits up to 2 minutes for the 1-minute load
# average to reach N, and prints the load average beside every result: the
# floor "cold cache at load >= 16" is measured with UNWIND_BUILD_LOAD=16.
# UNWIND_BUILD_RUNS picks the runs and their order (default: cold warm fp
# dwarf perf p; "p" is the -p part); every cold run starts on an empty
# cache.  UNWIND_BUILD_BASE=DIR adds the run "base", a cold one with DIR's
# marple-callstack (e.g. /work/main/build), for before/after in one run:
# UNWIND_BUILD_RUNS="base cold base cold".
#
# Rooted, the floor's measure: a stack that reaches __libc_start_main or
# start_thread, or that ends at the entry of the program's dynamic loader
# (clang spends a third of its life in ld.so relocating libLLVM, before
# main: those stacks start there).  The loader's entry is checked by file
# and address, not by name: the outermost frame's file (the trailer's frame
# description; --addresses names an unnamed frame [file+0xOFFSET]) is the
# one the program's PT_INTERP names (same device and inode), and its file
# offset within 64 bytes of that file's ELF entry point.
set -u
spinners=
T=$(mktemp -d) && trap 'kill $spinners 2>/dev/null; rm -rf "$T"' EXIT
trap 'exit 1' INT TERM
SECS=${UNWIND_BUILD_SECS:-8}
LOAD=${UNWIND_BUILD_LOAD:-0}
BASE=${UNWIND_BUILD_BASE:-}
runs=${UNWIND_BUILD_RUNS:-cold warm fp dwarf perf p}
case $LOAD in *[!0-9]* | "") echo "bench: unwindbuild: FAILED: UNWIND_BUILD_LOAD=$LOAD is not a number"; exit 1 ;; esac
[ -z "$BASE" ] || [ -x "$BASE/marple-callstack" ] ||
	{ echo "bench: unwindbuild: FAILED: UNWIND_BUILD_BASE=$BASE has no marple-callstack"; exit 1; }
[ "$(id -u)" = 0 ] && command -v gcc >/dev/null && command -v clang >/dev/null ||
	{ echo "bench: unwindbuild: skipped (needs root, gcc and clang)"; exit 0; }
SRC="$MARPLE_TOP/lib/collect/unwindtablescfi.c"
INC="-D_GNU_SOURCE -I$MARPLE_TOP/lib -I$MARPLE_TOP/lib/collect -I$MARPLE_TOP/lib/format -I$MARPLE_TOP/bpf -I$MARPLE_BIN"
# the workload is real compiles (~0.4 s each), not compilers failing in 30 ms
for cc in gcc clang; do
	$cc -O2 $INC -c "$SRC" -o "$T/check.o" 2> "$T/check.err" ||
		{ echo "bench: unwindbuild: FAILED: $cc cannot compile $SRC: $(head -n 1 "$T/check.err")"; exit 1; }
done
# the spinners: each bounded (the whole bench's length, and some), all
# killed by the trap
if [ "$LOAD" -gt 0 ]; then
	bound=$((300 + $(echo $runs | wc -w) * (SECS + 60)))
	i=0
	while [ $i -lt "$LOAD" ]; do
		timeout "$bound" sh -c 'while :; do :; done' & spinners="$spinners $!"
		i=$((i + 1))
	done
	waited=0
	while [ $waited -lt 120 ] && [ "$(cut -d. -f1 /proc/loadavg)" -lt "$LOAD" ]; do sleep 2; waited=$((waited + 2)); done
	echo "bench: unwindbuild: $LOAD CPU spinners added, load reached in ${waited} s"
fi
echo "bench: unwindbuild: load average $(cut -d' ' -f1-3 /proc/loadavg), $(getconf _NPROCESSORS_ONLN) CPUs"
# comm, its program's interpreter (device:inode) and that file's entry point
# as a file offset, for the rooted measure
loader_of() {
	i=$(readelf -lW "$(readlink -f "$2")" 2>/dev/null | sed -n 's/.*Requesting program interpreter: \(.*\)]/\1/p')
	[ -n "$i" ] || return 0
	e=$(($(readelf -hW "$i" | awk '/Entry point address/ {print $4}')))
	off=$(readelf -lW "$i" | awk '$1 == "LOAD" { print $2, $3, $5 }' | while read -r o v sz; do
		[ "$e" -ge $((v)) ] && [ "$e" -lt $((v + sz)) ] && { echo $((e - v + o)); break; }
	done)
	echo "$1 $(stat -L -c %d:%i "$i") ${off:-0}"
}
{ loader_of cc1 "$(gcc -print-prog-name=cc1)"; loader_of clang "$(command -v clang)"; } > "$T/loaders"
echo "bench: unwindbuild: rooted = reaches __libc_start_main/start_thread, or ends at the entry of the program's dynamic loader (PT_INTERP, by inode; entry by file offset): $(awk '{printf "%s%s %s+%d", (NR > 1 ? ", " : ""), $1, $2, $3}' "$T/loaders")"
export MARPLE_CACHE_DIR="$T/cache"	# not the machine's: every cold run starts empty
n=0 last_tables=
for run in $runs; do
	n=$((n + 1))
	callstack=marple-callstack
	case $run in
	cold) mode=tables label="tables (cold cache)"; rm -rf "$T/cache" ;;
	warm) mode=tables label="tables (warm cache)" ;;
	base) mode=tables label="tables (cold cache, $BASE)" callstack=$BASE/marple-callstack; rm -rf "$T/cache"
		[ -n "$BASE" ] || { echo "bench: unwindbuild: run base needs UNWIND_BUILD_BASE"; continue; } ;;
	perf) mode=perf label="perf record --call-graph dwarf"
		command -v perf >/dev/null || continue ;;	# perf record -a --call-graph dwarf, the same load
	fp | dwarf) mode=$run label=$run ;;
	p) continue ;;
	*) echo "bench: unwindbuild: unknown run $run (cold warm base fp dwarf perf p)"; continue ;;
	esac
	run=$run$n
	[ "$mode" = tables ] && last_tables=$run
	( while :; do gcc -O2 $INC -c "$SRC" -o "$T/g.o" 2>/dev/null; done ) & g=$!
	( while :; do clang -O2 $INC -c "$SRC" -o "$T/c.o" 2>/dev/null; done ) & c=$!
	sleep 1
	if [ "$mode" = perf ]; then
		perf record -q -a --call-graph dwarf -F 499 -o "$T/perf.data" -- sleep "$SECS" > "$T/$run.err" 2>&1
	else
		/usr/bin/time -f '%U %S' -o "$T/$run.time" "$callstack" -U --addresses --unwind "$mode" -F 499 "$SECS" > "$T/$run.out" 2> "$T/$run.err"
	fi
	load=$(cut -d' ' -f1 /proc/loadavg)	# at the capture's end
	label="$label at load $load"
	kill "$g" "$c" 2>/dev/null; wait "$g" "$c" 2>/dev/null
	if [ "$mode" = perf ]; then	# perf's own unwinding (libdw) after the capture; a sample a line
		perf script --no-inline -i "$T/perf.data" -F comm,tid,time,event,ip,sym,dso 2>> "$T/$run.err" < /dev/null | marple-fold -s > "$T/$run.out" 2>> "$T/$run.err"
		rm -f "$T/perf.data"
	fi
	# the outermost frames at a loader's entry: name, and the comm whose loader it is
	grep '^{"trailer"' "$T/$run.out" | tail -n 1 | jq -r --argjson entries "[$(awk '{printf "%s%d", (NR > 1 ? "," : ""), $3}' "$T/loaders")]" '.frames // {} | to_entries[] | select(.value.file and .value.offset != null) | .value.offset as $o | select(any($entries[]; $o >= . and $o < . + 64)) | "\(.key)\t\(.value.file)\t\(.value.offset)"' 2>/dev/null |
	while IFS='	' read -r name file off; do
		id=$(stat -L -c %d:%i "$file" 2>/dev/null) || continue
		awk -v id="$id" -v off="$off" -v name="$name" '$2 == id && off >= $3 && off < $3 + 64 { print $1 "\t" name }' "$T/loaders"
	done > "$T/$run.entries"
	for comm in cc1 clang; do
		awk -v comm="$comm" -v mode="$label" -v entries="$T/$run.entries" 'BEGIN { FS = "\n"
			while ((getline l < entries) > 0) { split(l, e, "\t"); if (e[1] == comm) entry[e[2]] = 1 } FS = " " }
		/^\{"trailer"/ {
			if (match($0, /"program_runs":[0-9]+,"program_ns":[0-9]+/)) {
				split(substr($0, RSTART, RLENGTH), p, /[:,]/); runs = p[2]; ns = p[4] } next }
		/^\{/ { next }
		{ w = substr($0, 1, index($0, "#") - 1); f = substr($0, index($0, "#") + 1)
		  n = split(f, fr, ";"); if (fr[1] != comm || n < 2) next
		  tot += w
		  if (f ~ /;(__libc_start_main(_impl|@@[A-Z_0-9.]+)?|start_thread)(;|$)/ || (fr[2] in entry)) libc += w
		  if (fr[2] in entry) loader += w
		  if (fr[2] == "_start" || fr[2] == "clone3" || fr[2] ~ /^\[ld-linux-x86-64\.so\.2(\+0x[0-9a-f]+)?\]$/ || f ~ /;(__libc_start_main(_impl|@@[A-Z_0-9.]+)?|start_thread)(;|$)/) root += w
		  if (f ~ /\[no unwind table\]/) marker += w
		  if (f ~ /\[truncated: [0-9]+\+ frames\]/) deep += w
		  if (f ~ /\[unsupported unwind rule\]/) unsup += w
		  run = 0; bad = 0
		  for (i = 2; i <= n; i++) { if (fr[i] == "[unknown]") { if (++run >= 5) bad = 1 } else run = 0 }
		  if (bad) unk += w }
		END { if (!tot) tot = 1
		  printf "bench: unwindbuild: %s: %s: %.1f%% of %d samples rooted (reach __libc_start_main/start_thread: %.1f%%, the loader'"'"'s entry: %.1f%%), %.1f%% walked to a root, %.1f%% end in [no unwind table], %.1f%% [truncated], %.1f%% [unsupported unwind rule], %d with 5+ [unknown] in a row",
			mode, comm, 100 * libc / tot, tot, 100 * (libc - loader) / tot, 100 * loader / tot, 100 * root / tot, 100 * marker / tot, 100 * deep / tot, 100 * unsup / tot, unk
		  if (runs) printf "; BPF %.2f us a sample", ns / runs / 1000
		  printf "\n" }' "$T/$run.out"
	done
	[ "$mode" = perf ] && continue	# its cost is not comparable: it unwinds after the capture
	# the whole cost: BPF run time and the collector's CPU over the samples
	u=$(grep -o '"unwind":{[^}]*}' "$T/$run.out" | tail -n 1)
	awk -v label="$label" -v mode="$mode" -v cpu="$(cat "$T/$run.time" 2>/dev/null)" -v u="$u" '/^\{"trailer"/ {
		if (match($0, /"program_runs":[0-9]+,"program_ns":[0-9]+/)) {
			split(substr($0, RSTART, RLENGTH), p, /[:,]/); runs = p[2]; ns = p[4] } }
		function num(k) { return match(u, "\"" k "\":[0-9.]+") ? substr(u, RSTART + length(k) + 3, RLENGTH - length(k) - 3) + 0 : 0 }
		END { split(cpu, c, " "); s = c[1] + c[2]; if (!runs) runs = 1
		  printf "bench: unwindbuild: %s: collector CPU %.2f s (start-up included); whole cost %.2f us a sample (BPF %.2f + collector %.2f) over %d samples", label, s, (ns + s * 1e9) / runs / 1000, ns / runs / 1000, s * 1e6 / runs, runs
		  if (mode == "tables") printf "; %d files built (%.0f ms CPU), %d read from the cache (%.0f ms, %.0f ms CPU; writes included), %d stale/corrupt; of %d user stacks (all processes) %d complete, cut: %d table not loaded (%d file not built, %d file not found), %d depth, %d unsupported rule, %d no CFI and no frame pointer, %d read fault", num("files_built"), num("build_cpu_ms"), num("files_from_cache"), num("cache_ms"), num("cache_cpu_ms"), num("files_rebuilt_stale") + num("files_rebuilt_corrupt"), num("stacks"), num("complete"), num("cut_table_not_loaded"), num("cut_file_not_built"), num("cut_file_not_found"), num("cut_depth_limit"), num("cut_unsupported_rule"), num("cut_no_table"), num("cut_read_fault")
		  if (mode == "tables" && u ~ /cuts_sent/) printf "; of those cut, %d walked on in user space (%.1f ms), %d left cut, %d not sent (ring full)", num("cuts_finished"), num("cuts_us") / 1000, num("cuts_left"), num("cuts_not_sent")
		  if (mode == "tables" && u ~ /request_wait_max_ms/) printf "; %d requests waited %.0f ms (mean), %.0f ms (longest) for the builder", num("requests_served"), num("request_wait_ms") / (num("requests_served") ? num("requests_served") : 1), num("request_wait_max_ms")
		  printf "\n" }' "$T/$run.out"
done
[ -n "$last_tables" ] && u=$(grep -o '"unwind":{[^}]*}' "$T/$last_tables.out" | tail -n 1) &&
echo "bench: unwindbuild: tables: $(echo "$u" | sed -n 's/.*"rows":\([0-9]*\).*/\1/p') rows, $(echo "$u" | sed -n 's/.*"table_bytes":\([0-9]*\).*/\1/p') bytes of table ($(echo "$u" | sed -n 's/.*"bytes_per_row":\([0-9]*\.\{0,1\}[0-9]\{0,2\}\).*/\1/p') bytes a row, index and $(echo "$u" | sed -n 's/.*"rules":\([0-9]*\).*/\1/p') rules included; $(echo "$u" | sed -n 's/.*"table_memory":\([0-9]*\).*/\1/p') bytes allocated), built in $(echo "$u" | sed -n 's/.*"build_cpu_ms":\([0-9.]*\).*/\1/p') ms of CPU; files without room: $(echo "$u" | sed -n 's/.*"files_without_room":\([0-9]*\).*/\1/p')"

# -p on one clang (libLLVM + libclang-cpp: its tables are most of the
# build's), on an empty cache, then on what that left, then with
# --no-cache: the collector's start-up (to MARPLE_READY_FILE) and CPU
case " $runs " in *" p "*) ;; *) exit 0 ;; esac
export MARPLE_CACHE_DIR="$T/cache-p"
( sleep 60 | exec clang -x c -c - -o /dev/null ) & cl=$!
sleep 1
pid=$(pgrep -n -P "$cl" -x clang)
for run in cold warm nocache; do
	opt=; [ "$run" = nocache ] && opt=--no-cache
	rm -f "$T/ready"
	t0=$(date +%s%N)
	MARPLE_READY_FILE="$T/ready" /usr/bin/time -f '%U %S' -o "$T/p-$run.time" \
		marple-callstack $opt -F 99 -p "$pid" 1 > "$T/p-$run.out" 2> "$T/p-$run.err" & cs=$!
	while [ ! -e "$T/ready" ] && kill -0 "$cs" 2>/dev/null; do sleep 0.005; done
	t1=$(date +%s%N)
	wait "$cs"
	u=$(grep -o '"unwind":{[^}]*}' "$T/p-$run.out" | tail -n 1)
	num() { echo "$u" | sed -n "s/.*\"$1\":\([0-9.]*\).*/\1/p"; }
	printf 'bench: unwindbuild: -p clang, %s: start-up %d ms, collector CPU %s s user + %s s sys; %s rows, %s files built (%.0f ms CPU), %s read from the cache (%.0f ms, %.0f ms CPU)\n' \
		"$run" $(((t1 - t0) / 1000000)) $(cat "$T/p-$run.time") "$(num rows)" "$(num files_built)" \
		"$(num build_cpu_ms)" "$(num files_from_cache)" "$(num cache_ms)" "$(num cache_cpu_ms)"
done
pkill -P "$cl" 2>/dev/null; kill "$cl" 2>/dev/null; wait "$cl" 2>/dev/null || :
