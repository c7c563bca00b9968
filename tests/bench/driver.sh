# driver.sh — what the marple driver adds around the programs it runs: the
# time `marple collect` takes beyond the duration (start, join, write), the
# time from Ctrl-C to a complete file, and `marple display` of the capture.
# Real collectors as root (whatever is built), else stand-ins.
set -u
T=$(mktemp -d) && trap 'rm -rf "$T"' EXIT
cd "$T" || exit 1
export XDG_STATE_HOME="$T/state" XDG_CONFIG_HOME="$T/config"
unset DISPLAY WAYLAND_DISPLAY
list=''
if [ "$(id -u)" -eq 0 ] && [ -r /sys/kernel/btf/vmlinux ]; then
	for n in callstack cpusched disklat memtime offcpu; do
		[ -x "$MARPLE_BIN/marple-$n" ] && list="$list $n"
	done
	what="real collectors"
fi
if [ -z "$list" ]; then
	mkdir -p bin
	for n in callstack cpusched memtime; do ln -s "$MARPLE_TOP/tests/driver/fake-collector" "bin/marple-$n"; done
	export MARPLE_LIBEXEC="$T/bin"
	list=" callstack cpusched memtime"
	what="stand-in collectors"
fi
n=$(echo $list | wc -w)
ms() { echo $(( $(date +%s%N) / 1000000 )); }

s=$(ms)
# shellcheck disable=SC2086
marple collect -t 2 -o a.marple $list > /dev/null 2>&1
e=$(ms)
echo "bench: driver: collect -t 2 with $n $what:$list: $((e - s - 2000)) ms beyond the 2 s (floor: under 1500 ms)"

# shellcheck disable=SC2086
perl -e '$SIG{INT} = "DEFAULT"; exec @ARGV or die' marple collect -t 60 -o b.marple $list > /dev/null 2>&1 &
p=$!
sleep 2
s=$(ms)
kill -INT "$p"
wait "$p"
e=$(ms)
echo "bench: driver: Ctrl-C to a complete file with $n collectors: $((e - s)) ms, $(grep -c '"ended":"signal"' marple_out/b.marple) of $n trailers say signal (floor: under 1000 ms)"

# Ctrl-C latency, five times: from SIGINT to the driver until a complete file
# (the driver has exited), with -t 0 (until Ctrl-C)
lat=''
for r in 1 2 3 4 5; do
	rm -f marple_out/z.marple
	# shellcheck disable=SC2086
	perl -e '$SIG{INT} = "DEFAULT"; exec @ARGV or die' marple collect -t 0 -o z.marple $list > /dev/null 2>&1 &
	p=$!
	sleep 1.5
	s=$(date +%s%N)
	kill -INT "$p"
	wait "$p"
	e=$(date +%s%N)
	marple-cat -q marple_out/z.marple 2>/dev/null || lat="$lat invalid-file"
	lat="$lat $(( (e - s) / 1000000 ))"
done
echo "bench: driver: Ctrl-C to a complete file, collect -t 0 with $n $what, 5 runs (ms):$lat (floor: under 200 ms)"

# Processes the driver starts around a 3 s capture (strace -f: every execve but
# the collectors'); during the capture itself there should be none.
if command -v strace > /dev/null 2>&1; then
	# shellcheck disable=SC2086
	strace -f -qq -e trace=execve -o "$T/strace" marple collect -t 3 -o s.marple $list > /dev/null 2>&1
	execs=$(grep 'execve(' "$T/strace" | grep -v 'resumed' | sed 's/.*execve("\([^"]*\)".*/\1/' | sed 's|.*/||' |
		grep -v '^marple-\(callstack\|cpusched\|disklat\|memtime\|offcpu\)$' | sort | uniq -c | sort -rn |
		awk '{ printf " %s x%d", $2, $1; t += $1 } END { printf " (total %d)", t }')
	echo "bench: driver: programs run by the driver around collect -t 3 (not the collectors):$execs"
fi

size=$(wc -c < marple_out/a.marple)
s=$(ms)
marple display -n -i marple_out/a.marple > /dev/null 2>&1
e=$(ms)
echo "bench: driver: display of a $((size / 1024)) KiB capture ($n sections) with the report: $((e - s)) ms"
