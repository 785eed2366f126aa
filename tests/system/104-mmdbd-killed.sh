#!/bin/bash
# 104-mmdbd-killed: kill -9 of nsrmmdbd while 20 small saves run at once.
# nsrd restarts it (back-off 1 s); callers wait for it instead of failing:
# every save completes, each one save reports complete is complete in
# the media database and recovers, and nothing is left in progress.
. "$(dirname "$0")/lib.sh"
nsr_setup 104-mmdbd-killed
S=127.0.0.1
W=$ROOT/work
N=20
mkdir -p "$W/aftd1" "$W/out"
nsr_start_datazone
nsr_device aftd1 adv_file "$W/aftd1"
check "label" "$BIN/nsrmm" -s $S -q -l -y -b Default -f aftd1 Disk.001
for i in $(seq 1 $N); do
	mkdir -p "$W/t$i"
	head -c $((20000 + i * 5000)) /dev/urandom >"$W/t$i/data"
done

for i in $(seq 1 $N); do
	"$BIN/save" -s $S -q "$W/t$i" >"$W/save$i.out" 2>&1 &
	pids[$i]=$!
	[ "$i" = 5 ] && kill -KILL "$(cat "$ROOT/logs/nsrmmdbd.pid")"
done
ok=0
for i in $(seq 1 $N); do
	wait "${pids[$i]}" && ok=$((ok + 1))
done
check "all $N saves completed across the restart ($ok did)" test "$ok" -eq $N
check "nsrmmdbd was restarted" grep -q "restarting nsrmmdbd\|started nsrmmdbd" \
	"$ROOT/logs/daemon.log"
bad=$(grep -l "scanner -m" "$W"/save*.out 2>/dev/null)
check "no save reports data the media database did not record" test -z "$bad"
left=$("$BIN/mminfo" -s $S -a -q inprogress -r ssid 2>/dev/null |
	awk '$1 ~ /^[0-9]+$/')
check "nothing is left in progress" test -z "$left"
n=$("$BIN/mminfo" -s $S -a -r "ssid,sumflags" 2>/dev/null |
	awk '$2 == "cb"' | wc -l)
check "mminfo shows $N complete, browsable save sets ($n)" test "$n" -eq $N
check "the last one recovers" "$BIN/recover" -s $S -q -d "$W/out" -a "$W/t$N"
check "identical" cmp -s "$W/t$N/data" "$W/out$W/t$N/data"
nsr_done
