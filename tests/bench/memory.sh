# memory.sh — what a stack collector holds: each one's 1 s capture of the
# whole machine with its default options, its trailer's memory (resident
# memory at the end and at its peak, and the kernel memory of its BPF maps),
# with the load beside it.  Resident memory counts each BPF map mapped into
# the collector as far as it is mapped (the kernel maps all of a mapping at
# once): the stack store whole, the unwind tables as far as written.
set -u
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT

for c in ${MEMORY_COLLECTORS:-callstack offcpu lock memevents diskblockrq mallocstacks memleak cpusched}; do
	load=$(cut -d' ' -f1 /proc/loadavg)
	timeout 60 "marple-$c" 1 > "$T/out" 2> /dev/null
	awk -v c="$c" -v load="$load" '/^\{"trailer"/ {
		m = $0; sub(/.*"memory":\{/, "", m); sub(/\}.*/, "", m)
		r = m; sub(/.*"rss_bytes":/, "", r); sub(/[^0-9].*/, "", r)
		p = m; sub(/.*"peak_rss_bytes":/, "", p); sub(/[^0-9].*/, "", p)
		b = m; sub(/.*"bpf_map_bytes":/, "", b); sub(/[^0-9].*/, "", b)
		found = 1 }	# the last trailer: memleak writes two sections
	END { if (!found) printf "bench: memory: marple-%s 1: no trailer\n", c
	      else printf "bench: memory: marple-%s 1: RSS %.1f MB (peak %.1f), BPF maps %.1f MB, load %s (goal: RSS well under 100 MB, 64 MB for callstack)\n",
			  c, r / 1048576, p / 1048576, b / 1048576, load }' "$T/out"
done
