# answers.sh — is every short interpreter process walked under load?  A
# system-wide `marple-callstack -F 499` (MARPLE_DEBUG_ANSWERS=1: each answer
# on stderr) while ANSWERS_BENCH_SPINNERS (default 4) shell loops spin and
# ANSWERS_BENCH_N (default 30) rounds start, one after another, a process of
# each interpreter found (pyenv's python3.12, a launcher of its shared
# libpython; Debian's python3 and ruby3.1), each 0.2 s of CPU.  Prints, per
# interpreter, how many were walked, answered native (with the reasons) or
# never answered, and the trailer's processes_looked_at_again and
# processes_answered_unready.  Issues 34 and 35: 10% of python3.12's and 2%
# of ruby's processes stayed native at load 12-16 before images not whole
# were looked at again.
set -u
[ "$(id -u)" = 0 ] || { echo "bench: answers: skipped (needs root)"; exit 0; }
N=${ANSWERS_BENCH_N:-30}
T=$(mktemp -d)
spin=""
trap 'kill $spin 2>/dev/null; rm -rf "$T"' EXIT
pyroot=$( (pyenv root) 2>/dev/null || echo "${PYENV_ROOT:-$HOME/.pyenv}")
cpu_py='import time
t = time.process_time()
while time.process_time() - t < 0.2: pass'
cpu_rb='t = Process.clock_gettime(Process::CLOCK_PROCESS_CPUTIME_ID)
while Process.clock_gettime(Process::CLOCK_PROCESS_CPUTIME_ID) - t < 0.2 do end'
: > "$T/kinds"
for py in "$pyroot"/versions/3.12*/bin/python3.12 /usr/bin/python3; do
	[ -x "$py" ] && echo "$py" >> "$T/kinds"
done
[ -x /usr/bin/ruby3.1 ] && echo /usr/bin/ruby3.1 >> "$T/kinds"
[ -s "$T/kinds" ] || { echo "bench: answers: skipped (no python3.12, python3 or ruby3.1)"; exit 0; }

i=0
while [ $i -lt "${ANSWERS_BENCH_SPINNERS:-4}" ]; do
	sh -c 'while :; do :; done' & spin="$spin $!"
	i=$((i + 1))
done
MARPLE_DEBUG_ANSWERS=1 MARPLE_READY_FILE="$T/ready" "$MARPLE_BIN/marple-callstack" -F 499 > "$T/out" 2> "$T/err" & cs=$!
i=0
while [ ! -e "$T/ready" ] && [ $i -lt 300 ]; do sleep 0.1; i=$((i + 1)); done
echo "bench: answers: load average $(cut -d' ' -f1-3 /proc/loadavg)"
r=0
while [ $r -lt "$N" ]; do
	while read -r interp; do
		case $interp in
		*ruby*) "$interp" -e "$cpu_rb" & ;;
		*) "$interp" -c "$cpu_py" & ;;
		esac
		echo "$interp $!" >> "$T/pids"
		wait $!
	done < "$T/kinds"
	r=$((r + 1))
done
sleep 1
kill -INT $cs; wait $cs
echo "bench: answers: load average $(cut -d' ' -f1-3 /proc/loadavg)"
# a process's verdict: walked if any answer about it was, else native if
# one was, else never answered
while read -r interp pid; do
	a=$(grep "answer: pid $pid " "$T/err" | sed 's/.*): //')
	case $a in
	*walked*) v=walked ;;
	*native*) v="native ($(echo "$a" | grep native | tail -n 1 | sed 's/[0-9][0-9]*/N/g'))" ;;
	*) v=unanswered ;;
	esac
	echo "$interp	$v"
done < "$T/pids" | sort | uniq -c | sed 's/^ */bench: answers: /'
for k in processes_looked_at_again processes_answered_unready; do
	echo "bench: answers: $k $(sed -n "s/.*\"$k\":\([0-9]*\).*/\1/p" "$T/out" | head -n 1)"
done
