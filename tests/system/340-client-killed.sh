#!/bin/bash
# 340-client-killed: kill -9 of save mid-save.  nsrd owns the session:
# when the client's connection closes it settles the save set (aborted:
# its data never became durable), finishes the job as failed and frees
# the parallelism slot, so with server parallelism 1 the next save is
# admitted and completes.  Nothing is left in progress.
. "$(dirname "$0")/lib.sh"
nsr_setup 340-client-killed
S=127.0.0.1
W=$ROOT/work
mkdir -p "$W/aftd1" "$W/big" "$W/small"
nsr_start_datazone
nsr_device aftd1 adv_file "$W/aftd1"
check "label" "$BIN/nsrmm" -s $S -q -l -y -b Default -f aftd1 Disk.001
printf '. type: NSR\nupdate parallelism: 1\n' |
	"$BIN/nsradmin" -s $S -i - >/dev/null 2>&1
check "server parallelism is 1" grep -rqs "parallelism: 1;" "$ROOT/res/nsrdb"

# A file large enough that the save is still streaming when it dies.
head -c 800000000 /dev/zero | tr '\0' 'x' >"$W/big/file"
printf 'small\n' >"$W/small/f"

"$BIN/save" -s $S -q "$W/big" >"$W/save1.out" 2>&1 &
spid=$!
inprog=""
for i in $(seq 1 200); do
	inprog=$("$BIN/mminfo" -s $S -a -q inprogress -r ssid 2>/dev/null |
		awk '$1 ~ /^[0-9]+$/ {print $1}')
	[ -n "$inprog" ] && break
	kill -0 $spid 2>/dev/null || break
	sleep 0.05
done
check "the save set is in progress while save streams" test -n "$inprog"
kill -KILL $spid 2>/dev/null
wait $spid 2>/dev/null

# Settled within a bounded time (grace of 3 s plus one tick).
check "nothing is left in progress within 10 s" nsr_settled
flags=$("$BIN/mminfo" -s $S -a -q "ssid=$inprog" -r sumflags 2>/dev/null |
	tail -n 1)
check "the killed save's save set is aborted (sumflags '$flags')" \
	grep -q a <<<"$flags"
check "nsrd says why" nsr_wait_logged "$ROOT/logs/daemon.log" \
	"save set $inprog .*the client went away"
jq=$("$BIN/jobquery" -s $S <<<"print type: save" 2>&1)
check "its job is finished as failed" grep -qi "failed" <<<"$jq"

# The slot is free: with parallelism 1 the next save is admitted at once
# (a leaked slot would queue it: bounded by timeout, and it says so).
timeout 60 "$BIN/save" -s $S -q "$W/small" >"$W/save2.out" 2>&1
check "the next save is admitted and completes" test $? -eq 0
check "without waiting for a slot" \
	test -z "$(grep "server parallelism" "$W/save2.out")"
check "and it is complete" test "$("$BIN/mminfo" -s $S -a -q \
	'name='"$W/small" -r sumflags 2>/dev/null | tail -n 1 | tr -d ' ')" = "cb"
nsr_done
