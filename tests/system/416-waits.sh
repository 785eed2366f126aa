#!/bin/bash
# 416-waits: a save that cannot start yet waits instead of failing.
#  - No writable volume: the save waits and says why (a mount request,
#    also in daemon.log); labeling a volume lets it go on and it
#    completes; the log says the request was satisfied.  With the volume
#    unmounted, the advice is to mount it, and mounting it lets the next
#    save go on; a recover of a save set on it waits the same way (and
#    nsrwatch shows the request) until it is mounted.
#  - A pool whose volume never comes: the save fails after the mount
#    timeout (NSR_MOUNT_TIMEOUT_SEC=8 here) with a message that says what
#    to do, and nothing is left in progress.
#  - A device at its max sessions: the next save to its pool queues for
#    it and goes on when the session ends.
#  - Server parallelism 1: saves queue and start in the order they came
#    (first come, first served), each after the one before ended; a
#    queued save's next ask is held at nsrd until a slot frees (nsrwatch
#    shows it held).
. "$(dirname "$0")/lib.sh"
nsr_setup 416-waits
S=127.0.0.1
W=$ROOT/work
mkdir -p "$W/aftd1" "$W/t1" "$W/out"
export NSR_MOUNT_TIMEOUT_SEC=8
nsr_start_datazone
nsr_device aftd1 adv_file "$W/aftd1"
head -c 2000000 /dev/urandom >"$W/t1/data"

# --- a mount request, satisfied by a label --------------------------------
"$BIN/save" -s $S -q "$W/t1" >"$W/save1.out" 2>&1 &
spid=$!
for _ in $(seq 1 100); do
	grep -q "waiting:" "$W/save1.out" && break
	sleep 0.05
done
check "the save says it waits for a writable volume" \
	grep -q "waiting: no writable volume of pool 'Default'.*mount request" \
	"$W/save1.out"
check "daemon.log has the mount request" \
	grep -q "mount request [0-9]*: the save of .*waits for a writable volume of pool Default" \
	"$ROOT/logs/daemon.log"
check "label a volume meanwhile" \
	"$BIN/nsrmm" -s $S -q -l -y -b Default -f aftd1 Disk.001
wait $spid
check "the waiting save completes" test $? -eq 0
check "the request was satisfied" \
	grep -q "mount request [0-9]* (.*) satisfied after" "$ROOT/logs/daemon.log"
check "and the save set recovers" \
	"$BIN/recover" -s $S -q -d "$W/out" -a "$W/t1"
check "identical" cmp -s "$W/t1/data" "$W/out$W/t1/data"

# --- an appendable volume merely unmounted: the advice is to mount it ----
check "unmount Disk.001" "$BIN/nsrmm" -s $S -q -u -f aftd1
"$BIN/save" -s $S -q -N again "$W/t1" >"$W/save3.out" 2>&1 &
spid=$!
for _ in $(seq 1 100); do
	grep -q "waiting:" "$W/save3.out" && break
	sleep 0.05
done
check "the save waits, saying to mount Disk.001 (not to label)" \
	grep -q "volume Disk.001 of that pool can take data: mount it with: nsrmm -m Disk.001" \
	"$W/save3.out"
check "mount it" "$BIN/nsrmm" -s $S -q -m -f aftd1 Disk.001
wait $spid
check "and the save completes" test $? -eq 0

# --- a recover whose volume is not mounted waits for it --------------------
SSID1=$("$BIN/mminfo" -s $S -q "name=$W/t1" -r ssid 2>/dev/null |
	awk '$1 ~ /^[0-9]+$/ {print $1; exit}')
check "unmount Disk.001 again" "$BIN/nsrmm" -s $S -q -u -f aftd1
"$BIN/recover" -s $S -S "$SSID1" -d "$W/out4" >"$W/rec4.out" 2>&1 &
rpid=$!
for _ in $(seq 1 100); do
	grep -q "waiting:" "$W/rec4.out" && break
	sleep 0.05
done
check "the recover waits, saying to mount Disk.001" \
	grep -q "waiting: volume Disk.001 (holding save set $SSID1) is not mounted; mount it with: nsrmm -m Disk.001" \
	"$W/rec4.out"
check "daemon.log has the recover's mount request" \
	grep -q "mount request [0-9]*: the recover of save set $SSID1 for .* waits for volume Disk.001" \
	"$ROOT/logs/daemon.log"
"$BIN/nsrwatch" -s $S >"$W/watch.txt" 2>&1
check "nsrwatch shows it" \
	grep -q "mount request [0-9]*: recover of save set $SSID1 for .* needs volume Disk.001" \
	"$W/watch.txt"
check "mount Disk.001" "$BIN/nsrmm" -s $S -q -m -f aftd1 Disk.001
wait $rpid
check "the recover completes" test $? -eq 0
check "identical" cmp -s "$W/t1/data" "$W/out4$W/t1/data"

# --- a mount request that times out ---------------------------------------
printf 'create type: NSR pool; name: Nowhere\n' |
	"$BIN/nsradmin" -s $S -i - >/dev/null 2>&1
start=$(date +%s)
"$BIN/save" -s $S -q -b Nowhere "$W/t1" >"$W/save2.out" 2>&1
rc=$?
took=$(( $(date +%s) - start ))
check "a save to a pool with no volume fails" test $rc -ne 0
check "after the mount timeout (8 s; it took $took s)" \
	test "$took" -ge 7 -a "$took" -le 30
check "saying what to do" grep -q "no writable volume of pool 'Nowhere' was mounted within 8 s: label one" \
	"$W/save2.out"
check "the log says it timed out" \
	grep -q "mount request [0-9]* (.*pool Nowhere) timed out" "$ROOT/logs/daemon.log"
left=$("$BIN/mminfo" -s $S -a -q inprogress -r ssid 2>/dev/null | awk '$1 ~ /^[0-9]+$/')
check "nothing is left in progress" test -z "$left"

# --- a device at its max sessions: the next save queues for it ------------
mkdir -p "$W/one" "$W/b1" "$W/b2"
printf 'create type: NSR pool; name: Single\n' |
	"$BIN/nsradmin" -s $S -i - >/dev/null 2>&1
nsr_device one adv_file "$W/one" "max sessions: 1; target sessions: 1"
check "label Single.001" "$BIN/nsrmm" -s $S -q -l -y -b Single -f one Single.001
head -c 200000000 /dev/zero | tr '\0' o >"$W/b1/f"
echo two >"$W/b2/f"
"$BIN/save" -s $S -q -b Single "$W/b1" >"$W/b1.out" 2>&1 &
p1=$!
for _ in $(seq 1 100); do
	grep -q "save of .*:$W/b1 admitted" "$ROOT/logs/daemon.log" && break
	sleep 0.05
done
"$BIN/save" -s $S -q -b Single "$W/b2" >"$W/b2.out" 2>&1
r2=$?
wait $p1; r1=$?
check "both saves to the one-session device complete ($r1 $r2)" \
	test "$r1$r2" = 00
check "the second queued for the device, saying why" \
	grep -q "waiting: every device with a writable volume of pool 'Single' serves its max sessions (queued for a device" \
	"$W/b2.out"

# --- server parallelism 1: a queue, in order ------------------------------
printf '. type: NSR\nupdate parallelism: 1\n' |
	"$BIN/nsradmin" -s $S -i - >/dev/null 2>&1
mkdir -p "$W/big" "$W/q2" "$W/q3"
head -c 300000000 /dev/zero | tr '\0' b >"$W/big/file"
echo two >"$W/q2/f"; echo three >"$W/q3/f"
NSR_TEST_SAVE_STALL_SEC=3 "$BIN/save" -s $S -q "$W/big" >"$W/big.out" 2>&1 &
p1=$!
for _ in $(seq 1 100); do
	grep -q "save of .*:$W/big admitted" "$ROOT/logs/daemon.log" && break
	sleep 0.05
done
"$BIN/save" -s $S -q "$W/q2" >"$W/q2.out" 2>&1 &
p2=$!
for _ in $(seq 1 100); do
	grep -q "waiting:" "$W/q2.out" && break
	sleep 0.05
done
"$BIN/save" -s $S -q "$W/q3" >"$W/q3.out" 2>&1 &
p3=$!
# A queued save that asks again has its answer held until a slot frees
# (nsrd(8): NSRD_HOLD_MS), and nsrwatch says so.
held=0
for _ in $(seq 1 100); do
	"$BIN/nsrwatch" -s $S -x json 2>/dev/null |
		grep -q '"kind":"queued","ticket":[0-9]*,"client":"[^"]*","name":"'"$W"'/q2","pool":"[^"]*","held":true' &&
		{ held=1; break; }
	sleep 0.05
done
check "the queued save's answer is held (nsrwatch: held)" test $held = 1
wait $p1; r1=$?
wait $p2; r2=$?
wait $p3; r3=$?
check "three saves under parallelism 1 all complete ($r1 $r2 $r3)" \
	test "$r1$r2$r3" = 000
check "the second one was queued" \
	grep -q "waiting: server parallelism (1) reached.*queued: ticket" "$W/q2.out"
order=$(grep -o "save of [^ ]*:$W/\(big\|q2\|q3\) admitted" "$ROOT/logs/daemon.log" |
	sed 's/.*\/\([a-z0-9]*\) admitted/\1/' | tr '\n' ' ')
check "admitted in the order they came (big q2 q3: $order)" \
	test "$order" = "big q2 q3 "
nsr_done
