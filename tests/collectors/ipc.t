# marple-ipc (root): a client and a server on 127.0.0.1, both started here,
# give connect/accept/close events with the right pids, paired by flow and
# peer, with byte counts; a refused connect is reported.
. "$MARPLE_TOP/tests/lib.sh"
plan 18
if ! is_root; then skip_rest "ipc" "needs root"; fi
W="$MARPLE_BIN/workloads/tcppair"
rm -f "$T/ready"
MARPLE_READY_FILE="$T/ready" marple-ipc -v > "$T/ipc" 2> "$T/ipc.err" &
pid=$!
# Unset when the collector never becomes ready: every case below still runs (and fails).
c1=none c2=none c3=none spid=none port=none
if await_ready "ipc: tracing within 20 s" "$T/ready" 20 "$T/ipc.err" "$pid"; then
	"$W" server "$T/port" 2 & spid=$!
	i=0; while [ ! -s "$T/port" ] && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
	port=$(cat "$T/port")
	"$W" client "$port" & c1=$!; wait $c1
	"$W" client "$port" & c2=$!; wait $c2
	wait $spid
	"$W" client 1 2>/dev/null & c3=$!; wait $c3
	sleep 0.3
fi
kill -INT $pid 2>/dev/null; wait $pid; rc=$?
check "ipc: exits 0 after SIGINT" test $rc -eq 0
check "ipc: valid marple stream" marple-cat -q "$T/ipc"
# -v means statistics in every collector (issue 39): the trailer's records on stderr
check "ipc: -v: statistics, the trailer's records count" grep -q "^marple-ipc: statistics: records $(tail -n 1 "$T/ipc" | sed 's/.*"records":\([0-9]*\).*/\1/'), lost" "$T/ipc.err"
check "ipc: event section with track pid" grep -q '"datatype":"event".*"track":"pid"' "$T/ipc"
check "ipc: sizes available on this kernel (header)" grep -q '"sizes":true' "$T/ipc"
for c in $c1 $c2; do
	check "ipc: connect by client $c to the server's port" \
		grep -Eq "^[0-9]+,connect,$c,comm=mp_client,pid=$c,saddr=127.0.0.1,sport=[0-9]+,daddr=127.0.0.1,dport=$port,flow=" "$T/ipc"
	flow=$(sed -n "s/^[0-9]*,connect,$c,.*flow=\([^,]*\).*/\1/p" "$T/ipc")
	check "ipc: accept by server $spid, paired with client $c" \
		grep -Eq "^[0-9]+,accept,$spid,comm=mp_server,pid=$spid,saddr=127.0.0.1,sport=$port,.*flow=$flow,from=accept,peer_comm=mp_client,peer_pid=$c$" "$T/ipc"
	check "ipc: client $c close with bytes and peer" \
		grep -Eq "^[0-9]+,close,$c,comm=mp_client,pid=$c,.*flow=$flow,tx=100,rx=1000,duration_ns=[0-9]+,peer_comm=mp_server,peer_pid=$spid$" "$T/ipc"
	check "ipc: server close for client $c with bytes and peer" \
		grep -Eq "^[0-9]+,close,$spid,comm=mp_server,pid=$spid,.*flow=$flow,from=accept,tx=1000,rx=100,duration_ns=[0-9]+,peer_comm=mp_client,peer_pid=$c$" "$T/ipc"
	ct=$(sed -n "s/^\([0-9]*\),connect,$c,.*/\1/p" "$T/ipc")
	at=$(sed -n "s/^\([0-9]*\),accept,$spid,.*flow=$flow,.*/\1/p" "$T/ipc")
	check "ipc: connect before accept ($ct < $at)" test "$ct" -lt "$at"
done
check "ipc: refused connect reported" grep -Eq "^[0-9]+,refused,$c3,comm=mp_client,pid=$c3,.*dport=1,flow=" "$T/ipc"
check "ipc: trailer" grep -q '^{"trailer":1,.*"lost":0' "$T/ipc"
