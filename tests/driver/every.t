# Continuous captures: marple-collect -e (and `marple collect --every`) writes
# one whole capture file per interval, NAME-YYYYmmddTHHMMSSZ.marple, each with
# every collector's section of that interval; --keep and --keep-bytes remove
# the oldest; --each-file hands each file on; a collector or marple-collect
# killed (SIGKILL) mid-interval leaves every whole interval before it, whole
# and named.  Real collectors (root): cpusched and callstack.
. "$MARPLE_TOP/tests/lib.sh"
plan 34
unset MARPLE_CONFIG DISPLAY WAYLAND_DISPLAY
export XDG_STATE_HOME="$T/state" XDG_CONFIG_HOME="$T/config"
CPS="$MARPLE_BIN/marple-cpusched" CS="$MARPLE_BIN/marple-callstack"

# --- usage (no root needed)
expect_exit "every: --keep without -e is a usage error" 2 "go with --every" \
	marple-collect -t 1 --keep 3 -o "$T/x.marple" cpusched "$CPS"
expect_exit "every: -e without -o is a usage error" 2 "name them with -o FILE" \
	marple-collect -t 1 -e 1s cpusched "$CPS"
expect_exit "every: a bad --keep-bytes is a usage error" 2 "is not a size" \
	marple-collect -t 1 -e 1s --keep-bytes lots -o "$T/x.marple" cpusched "$CPS"
expect_exit "every: marple collect --every refuses a collector without --every" 2 "memleak writes one section a run" \
	marple collect --every 1 -o "$T/x.marple" cpusched memleak
expect_exit "every: --push without --every is a usage error" 2 "go with --every" \
	marple collect -t 1 --push http://127.0.0.1:9 -o "$T/x.marple" cpusched
expect_exit "every: a bad --push-format is a usage error" 2 "bad --push-format" \
	marple collect --every 1 --push http://127.0.0.1:9 --push-format xml -o "$T/x.marple" cpusched
expect_exit "every: marple collect --every 0 is a usage error, named" 2 "every: '0' is shorter than 100ms" \
	marple collect --every 0 -o "$T/x.marple" cpusched
if ! is_root; then skip_rest "every: BPF cases" "not root"; fi

# files DIR NAME: the interval files of NAME in DIR, oldest first
files() { ls "$1" | grep "^$2-[0-9]\{8\}T[0-9]\{6\}Z\(-[0-9]*\)\?\.marple\$" | LC_ALL=C sort; }
# whole DIR NAME: how many of them marple-cat reads as complete streams
whole() { n=0; for f in $(files "$1" "$2"); do marple-cat -q "$1/$f" 2> /dev/null && n=$((n + 1)); done; echo $n; }
# count FILE IFACE: the sections of interface IFACE in FILE
count() { grep -c "^{\"marple\":1,\"interface\":\"$2\"" "$1"; }

# 1. rotation and retention: 6 intervals of 1 s (or more, below), the 3 newest kept; an older
#    capture's file of the same name goes too, a file not of the pattern stays
mkdir -p "$T/r"
: > "$T/r/cap-20000101T000000Z.marple"
: > "$T/r/cap-notes.marple"
marple-collect -t 5.5 -e 1s --keep 3 --each-file "echo >> '$T/handed'" -o "$T/r/cap.marple" \
	cpusched "$CPS" -- callstack "$CS" > /dev/null 2> "$T/r.err"; rc=$?
check "every: -t 5.5 -e 1s --keep 3 exits 0" test "$rc" -eq 0
n=$(files "$T/r" cap | wc -l)
check "every: 3 interval files kept of 6 ($n; $(ls "$T/r" | tr '\n' ' '))" test "$n" -eq 3
check "every: the older capture's file was removed, the one not of the pattern kept" \
	sh -c "[ ! -e '$T/r/cap-20000101T000000Z.marple' ] && [ -e '$T/r/cap-notes.marple' ]"
check "every: each kept file is a complete stream ($(whole "$T/r" cap) of 3)" test "$(whole "$T/r" cap)" -eq 3
last=$T/r/$(files "$T/r" cap | tail -n 1)
mid=$T/r/$(files "$T/r" cap | sed -n 2p)
check "every: a file holds the section of each collector for its interval" \
	test "$(count "$mid" cpusched) $(count "$mid" callstack)" = "1 1"
check "every: the newest file is the capture's end (ended duration)" \
	sh -c "grep '^{\"trailer\"' '$last' | grep -qv '\"ended\":\"interval\"'"
first=$T/r/$(files "$T/r" cap | head -n 1)
check "every: an older file's sections ended with their interval" \
	test "$(grep '^{"trailer"' "$first" | grep -c '"ended":"interval"')" -eq 2
# a section cut on a boundary says that boundary, not a few ns before it
# (marple-cat -l printed 23:13:59 for the file of 23:14:00)
walls=$(grep '^{"marple"' "$mid" | sed -n 's/.*"wall_ns":\([0-9]*\).*/\1/p' | tr '\n' ' ')
check "every: a cut section's wall time is its boundary, a whole second ($walls)" \
	sh -c "[ -n '$walls' ] && ! printf '%s\n' $walls | grep -v '000000000\$'"
check "every: no temporary file left" sh -c "! ls -A '$T/r' | grep -q '^\\.'"
# (6 intervals or more: the collectors start and stop at their own moments,
# a loaded machine can spread them over a second or two)
handed=$(wc -l < "$T/handed" 2> /dev/null)
distinct=$(sort -u "$T/handed" | grep -c "^$T/r/cap-[0-9]\{8\}T[0-9]\{6\}Z\.marple\$")
check "every: --each-file ran once for each file written, with its path ($distinct distinct of ${handed:-0})" \
	test "${handed:-0}" -ge 6 -a "$distinct" -eq "${handed:-0}"

# 2. --keep-bytes: only what fits, and never less than the newest
mkdir -p "$T/b"
marple-collect -t 3.5 -e 1s --keep-bytes 1 -o "$T/b/cap" cpusched "$CPS" > /dev/null 2>&1; rc=$?
check "every: --keep-bytes 1 keeps the newest file only ($(files "$T/b" cap | wc -l))" \
	test "$rc $(files "$T/b" cap | wc -l)" = "0 1"

# 2b. what the collectors say goes into the trailers of the files (a capture
#     from cron keeps it): cpusched -v says "statistics: records N, ..." after each section's
#     trailer, so it lands in a later file's (all at once when a loaded
#     machine makes two intervals due at one look); the last one's on stderr
mkdir -p "$T/m"
marple-collect -t 2.5 -e 1s -o "$T/m/cap" cpusched "$CPS" -v > /dev/null 2> "$T/m.err"; rc=$?
n=$(files "$T/m" cap | wc -l)
said=$(for f in $(files "$T/m" cap); do grep '^{"trailer"' "$T/m/$f"; done | grep -o 'statistics: records [0-9]*' | wc -l)
check "every: the files' trailers keep what the collector said ($said \"statistics: records N\" in $n files)" \
	test "$rc" -eq 0 -a "$n" -ge 3 -a "$said" -ge $((n - 1))

# 3. a collector SIGKILLed mid-interval: its whole intervals before stay, the
#    others go on, it is named and the status is 1
mkdir -p "$T/k"
marple-collect -t 8 -e 1s -o "$T/k/cap.marple" cpusched "$CPS" -- callstack "$CS" > /dev/null 2> "$T/k.err" &
sup=$!
# withcs: how many files have callstack's section
withcs() { n=0; for f in $(files "$T/k" cap); do [ "$(count "$T/k/$f" callstack)" -eq 1 ] && n=$((n + 1)); done; echo $n; }
i=0; while [ "$(withcs)" -lt 2 ] && [ $i -lt 300 ]; do sleep 0.05; i=$((i + 1)); done
sleep 0.5
before=$(files "$T/k" cap | wc -l) had=$(withcs)
cs=$(pgrep -P $sup -f marple-callstack)
kill -KILL $cs; wait $sup; rc=$?
check "every: a collector killed: status 1, named ($(tail -n 1 "$T/k.err"))" \
	sh -c "[ $rc -eq 1 ] && grep -q 'callstack.*SIGKILL\\|callstack.*unfinished' '$T/k.err'"
n=$(files "$T/k" cap | wc -l)
check "every: the other collector went on: $n files, $before when it was killed" test "$n" -gt $((before + 1))
check "every: each file is complete ($(whole "$T/k" cap) of $n)" test "$(whole "$T/k" cap)" -eq "$n"
check "every: the killed collector's whole intervals are kept ($(withcs) files have its section, $had had)" \
	test "$(withcs)" -ge "$had" -a "$(withcs)" -lt "$n"

# 3b. a collector stopped by someone else's SIGTERM (it ends well) mid
#    --every: said at once, the status 1
mkdir -p "$T/t"
marple-collect -t 8 -e 1s -o "$T/t/cap.marple" cpusched "$CPS" -- callstack "$CS" > /dev/null 2> "$T/t.err" &
sup=$!
i=0; while [ "$(files "$T/t" cap | wc -l)" -lt 2 ] && [ $i -lt 300 ]; do sleep 0.05; i=$((i + 1)); done
kill -TERM "$(pgrep -P $sup -f marple-callstack)"; wait $sup; rc=$?
check "every: a collector stopped by SIGTERM mid-capture: status 1, said ($(grep "callstack ended" "$T/t.err" | head -n 1))" \
	sh -c "[ $rc -eq 1 ] && grep -q 'callstack ended (.*) .* s into the capture: the interval files after it have no callstack section' '$T/t.err'"

# 4. marple-collect itself SIGKILLed: the files written stay whole, the
#    collectors die with it
mkdir -p "$T/s"
marple-collect -t 0 -e 1s -o "$T/s/cap.marple" cpusched "$CPS" -- callstack "$CS" > /dev/null 2>&1 &
sup=$!
i=0; while [ "$(files "$T/s" cap | wc -l)" -lt 2 ] && [ $i -lt 200 ]; do sleep 0.05; i=$((i + 1)); done
sleep 0.5
kids=$(pgrep -P $sup | tr '\n' ' ')
kill -KILL $sup; wait $sup 2> /dev/null
# living: a process of these neither gone nor a zombie (reparented, it waits
# for its new parent to reap it); its BPF teardown may take a moment
living() { for k in $kids; do [ -e /proc/$k ] && ! grep -q '^[0-9]* ([^)]*) Z' /proc/$k/stat 2> /dev/null && echo $k; done; }
i=0; while [ -n "$(living)" ] && [ $i -lt 100 ]; do sleep 0.05; i=$((i + 1)); done
n=$(files "$T/s" cap | wc -l)
check "every: marple-collect killed: its files stay, each complete ($(whole "$T/s" cap) of $n)" \
	test "$n" -ge 2 -a "$(whole "$T/s" cap)" -eq "$n"
alive=$(living | wc -w)
check "every: its collectors died with it ($alive of: $kids)" test "$alive" -eq 0
# ... under marple collect: the files kept, said so, not "nothing written"
mkdir -p "$T/dk"
(cd "$T/dk" && exec marple collect --every 1s -o run cpusched > /dev/null 2> "$T/dk.err") &
drv=$!
i=0; while [ "$(files "$T/dk/marple_out" run 2> /dev/null | wc -l)" -lt 2 ] && [ $i -lt 200 ]; do sleep 0.05; i=$((i + 1)); done
kill -KILL "$(pgrep -P $drv -f marple-collect)"; wait $drv; rc=$?
check "every: marple-collect killed under marple collect: exit 1, its files said kept ($(tail -n 1 "$T/dk.err"))" \
	sh -c "[ $rc -eq 1 ] && grep -q 'interval files\\? written before are kept' '$T/dk.err' && ! grep -q 'nothing written' '$T/dk.err'"

# 5. the driver: marple collect --every, the newest file on stdout
mkdir -p "$T/d"
out=$(cd "$T/d" && marple collect --every 1s -t 2.5 --keep 2 -o run cpusched 2> "$T/d.err"); rc=$?
check "every: marple collect --every 1s -t 2.5 --keep 2: exit 0, 2 files ($(files "$T/d/marple_out" run | wc -l))" \
	test "$rc $(files "$T/d/marple_out" run | wc -l)" = "0 2"
check "every: marple collect prints the newest file ($out)" \
	test "$T/d/$out" = "$T/d/marple_out/$(files "$T/d/marple_out" run | tail -n 1)"

# 6. --push: each interval file's stack sections go to a (loopback) Pyroscope
#    server as it is written (tests/push/receiver.py keeps each request)
if command -v python3 > /dev/null 2>&1; then
	mkdir -p "$T/p/recv"
	python3 "$MARPLE_TOP/tests/push/receiver.py" "$T/p/recv" & rpid=$!
	i=0; while [ ! -s "$T/p/recv/port" ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
	url="http://127.0.0.1:$(cat "$T/p/recv/port")"
	out=$(cd "$T/p" && marple collect --every 1s -t 2.5 --push "$url" -o run callstack 2> "$T/p.err"); rc=$?
	kill "$rpid" 2> /dev/null; wait "$rpid" 2> /dev/null
	nf=$(files "$T/p/marple_out" run | wc -l)
	nr=$(ls "$T/p/recv" | grep -c '\.json$')
	check "every: --push: exit 0, one request a file ($nr of $nf; $(head -c 300 "$T/p.err" | tr '\n' ' '))" \
		test "$rc" -eq 0 -a "$nf" -ge 2 -a "$nr" -eq "$nf"
	check "every: --push: Pyroscope's /ingest with the interface in the name" \
		sh -c "grep -l '/ingest' '$T/p/recv/'*.json | head -n 1 | xargs grep -q 'interface=callstack'"
	check "every: --push: nothing left in the spool" sh -c "! ls '$XDG_STATE_HOME/marple/push-spool' 2> /dev/null | grep -q ."
	# callstack keeps its samples' times (--timed, the interval is short):
	# each file holds an interval's stack section and the samples after it
	paired=0
	for f in $(files "$T/p/marple_out" run); do
		[ "$(grep -o '"timed":"[a-z]*"' "$T/p/marple_out/$f" | tr '\n' ' ')" = '"timed":"stacks" "timed":"samples" ' ] &&
			paired=$((paired + 1))
	done
	check "every: each file has callstack's stack section and its timed samples ($paired of $nf)" \
		test "$nf" -ge 2 -a "$paired" -eq "$nf"
	# a new account (no ~/.local/state) and a server down: the spool and
	# its parents made (0700), every request kept there, and exit 1
	dead=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
	mkdir -p "$T/nh/home" "$T/nh/work"
	(cd "$T/nh/work" && unset XDG_STATE_HOME && HOME="$T/nh/home" marple collect --every 1s -t 2.5 \
		--push "http://127.0.0.1:$dead" -o run callstack > /dev/null 2> "$T/nh.err"); rc=$?
	sp="$T/nh/home/.local/state/marple/push-spool"
	nf=$(files "$T/nh/work/marple_out" run | wc -l)
	# a hand-over still running when the grace ended (a slow machine)
	# finishes on its own: its request reaches the spool a little later
	nreq=0 waited=0
	while :; do
		nreq=$(ls "$sp" 2> /dev/null | grep -c '\.req$')
		[ "$nreq" -lt "$nf" ] && grep -q 'still running' "$T/nh.err" && [ $waited -lt 60 ] || break
		sleep 0.5; waited=$((waited + 1))
	done
	modes=$(stat -c %a "$T/nh/home/.local" "$T/nh/home/.local/state/marple" | tr '\n' ' ')
	_n="every: --push, a new account, the server down: exit 1, each file kept in the spool ($nf files)"
	if [ $rc -eq 1 ] && [ $nf -ge 2 ] && [ $nreq -eq $nf ] && [ "$modes" = '700 700 ' ] && grep -q 'each-file' "$T/nh.err"; then
		pass "$_n"
	else
		fail "$_n" "exit $rc, $nf files, $nreq requests spooled, modes '$modes'; stderr: $(head -c 600 "$T/nh.err" | tr '\n' ' ')"
	fi
else
	skip "every: --push" "no python3"; skip "every: --push /ingest" "no python3"; skip "every: --push spool" "no python3"
	skip "every: each file has callstack's stack section and its timed samples" "no python3"
	skip "every: --push, a new account, the server down" "no python3"
fi
