# heatmap.sh — marple-heatmap on 10 M points (a point section, 50 names) and on
# 10 M plain "time value" lines: seconds taken and peak memory, which must not
# grow with the number of points (1 M vs 10 M).
set -u
T=$(mktemp -d) && trap 'rm -rf "$T"' EXIT
gen() {	# gen N: a point section of N points over 600 s, 50 names, skewed values
	awk -v n="$1" 'BEGIN {
		print "{\"marple\":1,\"interface\":\"bench\",\"datatype\":\"point\",\"units\":{\"x\":\"s\",\"y\":\"ms\"}}"
		srand(1)
		for (i = 0; i < n; i++) {
			p = i % 50
			printf "%.6f,%.3f,proc%d,pid=%d,comm=proc%d\n", i * 600 / n, (rand() * rand()) * 100, p, 1000 + p, p
		}
	}'
}
gen 10000000 > "$T/p10m"
gen 1000000 > "$T/p1m"
awk '{ if (NR > 1) { split($0, f, ","); print f[1], f[2] } }' "$T/p10m" > "$T/plain10m"
run() {	# run LABEL FILE ARGS...: best of 3 wall times (and CPU time of that run), peak RSS
	label=$1 f=$2; shift 2
	best=
	for i in 1 2 3; do
		s=$(date +%s%N)
		/usr/bin/time -f '%M %U %S' -o "$T/rss" marple-heatmap "$@" "$f" > "$T/out.svg" || echo "bench: heatmap: $label: failed"
		e=$(date +%s%N)
		ms=$(( (e - s) / 1000000 ))
		if [ -z "$best" ] || [ "$ms" -lt "$best" ]; then
			best=$ms
			read -r rss us ss < "$T/rss"
			cpu=$(awk -v u="$us" -v s="$ss" 'BEGIN { printf "%.0f", (u + s) * 1000 }')
		fi
	done
	echo "bench: heatmap: $label: ${best} ms (CPU ${cpu} ms), peak RSS ${rss} KiB (floor: 10 M points in <= 2000 ms)"
}
run "10 M points, latency" "$T/p10m"
run "1 M points, latency (memory must match 10 M)" "$T/p1m"
run "10 M points, offset" "$T/p10m" --offset
run "10 M plain time value lines" "$T/plain10m"
echo "bench: heatmap: SVG size for 10 M points: $(wc -c < "$T/out.svg") bytes"
