#!/bin/bash
# 341-nsrd-killed: kill -9 of nsrd mid-save (its database daemons stop
# with it) and a restart.  The data mover is on the storage node and goes
# on; the new nsrd adopts the save set left in progress; save ends it
# there: the data is durable, so the save set is complete (not browsable:
# its index session died with nsrindexd), save says exactly that, it
# recovers identical by save set id, and nothing is left in progress.
. "$(dirname "$0")/lib.sh"
nsr_setup 341-nsrd-killed
S=127.0.0.1
W=$ROOT/work
mkdir -p "$W/aftd1" "$W/big" "$W/out"
nsr_start_datazone
nsr_device aftd1 adv_file "$W/aftd1"
check "label" "$BIN/nsrmm" -s $S -q -l -y -b Default -f aftd1 Disk.001
head -c 600000000 /dev/zero | tr '\0' 'y' >"$W/big/file"
for i in $(seq 1 50); do echo "small $i" >"$W/big/s$i"; done

"$BIN/save" -s $S "$W/big" >"$W/save.out" 2>&1 &
spid=$!
ssid=""
for i in $(seq 1 200); do
	ssid=$("$BIN/mminfo" -s $S -a -q inprogress -r ssid 2>/dev/null |
		awk '$1 ~ /^[0-9]+$/ {print $1}')
	[ -n "$ssid" ] && break
	sleep 0.05
done
check "the save set is in progress" test -n "$ssid"
# Streaming: its mover has started it (not still inside SAVE_START).
for i in $(seq 1 100); do
	grep -q "save set $ssid (.*) started on volume" "$ROOT/logs/daemon.log" && break
	sleep 0.05
done
sleep 0.3

nsr_kill_nsrd
nsr_start nsrd
nsr_wait_answers nsrmmdbd nsrjobd nsrindexd

wait $spid; rc=$?
sed 's/^/# save: /' "$W/save.out"
check "save reports the index loss (exit $rc)" test $rc -ne 0
check "and says the save set is complete" \
	grep -q "save set $ssid .* is complete but cannot be browsed" "$W/save.out"
check "the new nsrd adopted it" grep -q "in progress when nsrd last stopped" \
	"$ROOT/logs/daemon.log"
flags=$("$BIN/mminfo" -s $S -a -q "ssid=$ssid" -r sumflags 2>/dev/null |
	tail -n 1 | tr -d ' ')
check "mminfo shows it complete, recoverable, not browsable ('$flags')" \
	test "$flags" = "cr"
left=$("$BIN/mminfo" -s $S -a -q inprogress -r ssid 2>/dev/null |
	awk '$1 ~ /^[0-9]+$/')
check "nothing is left in progress" test -z "$left"
check "it recovers by save set id" \
	"$BIN/recover" -s $S -q -d "$W/out" -S "$ssid"
check "identical" cmp -s "$W/big/file" "$W/out$W/big/file"
check "the next save works" "$BIN/save" -s $S -q "$W/big/s1"
nsr_done
