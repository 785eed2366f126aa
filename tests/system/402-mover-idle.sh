#!/bin/bash
# 402-mover-idle: a data mover exits by itself when idle and nsrsnmd
# starts a fresh one for the next request; a mover that keeps dying right
# after its start is throttled with a message saying when it is retried.
. "$(dirname "$0")/lib.sh"
nsr_setup 402-mover-idle
export NSR_MOVER_IDLE=2
T=$BIN/mmdtest
H=127.0.0.1

nsr_start nsrexecd -s
nsr_wait_registered nsrsnmd

read -r P1 PID1 < <("$T" mover $H vtape "$ROOT/vt1" vt1)
check "a mover is started" test -n "$PID1"
check "and labels its vtape" "$T" label $H "$P1" IDLE01 Default 32768
gone=0
for i in $(seq 1 100); do
	if ! kill -0 "$PID1" 2>/dev/null; then gone=1; break; fi
	sleep 0.1
done
check "the mover exits by itself when idle" test $gone = 1
check "nsrsnmd lists no mover then" test -z "$("$T" status $H)"
check "the log says why it exited" grep -q "nsrmmd.1\[$PID1\]: info: idle for 2 s, exiting" "$ROOT/logs/daemon.log"
read -r P2 PID2 < <("$T" mover $H vtape "$ROOT/vt1" vt1)
check "the next request starts a fresh mover" test -n "$PID2" -a "$PID2" != "$PID1"
check "which reads the same volume" grep -q "^IDLE01 " <("$T" readlabel $H "$P2")

# A device the mover cannot open is no start-up failure (it fails per
# request); a mover that is killed at once is.  One quick death (an
# administrator's kill) holds the next start 1 s: a request waits that out
# and gets a fresh mover.  A crash loop doubles the hold (1, 2, 4, 8 s);
# past 5 s a request fails at once, naming the device and the wait.
kill -KILL "$PID2"
sleep 0.3
t0=$(date +%s%N)
read -r P3 PID3 < <("$T" mover $H vtape "$ROOT/vt1" vt1)
ms=$(( ($(date +%s%N) - t0) / 1000000 ))
check "one quick death: the next request waits the hold out (${ms} ms)" \
	test -n "$PID3" -a "$ms" -ge 400
check "and the log says so" grep -q "device vt1: waiting .* ms for the restart hold" \
	"$ROOT/logs/daemon.log"
PID=$PID3
for i in 1 2 3; do
	kill -KILL "$PID"
	sleep 0.3
	out=$("$T" mover $H vtape "$ROOT/vt1" vt1 2>&1)
	PID=$(awk '{print $2}' <<<"$out")
done
check "a crash loop is throttled: $out" grep -q "next attempt in" <<<"$out"
check "and the message names the device" grep -q "device vt1" <<<"$out"
sleep 8.2
read -r P4 PID4 < <("$T" mover $H vtape "$ROOT/vt1" vt1)
check "after the hold a new mover starts" test -n "$PID4"
nsr_done
