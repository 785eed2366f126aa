#!/bin/bash
# 417-nsrwatch: nsrwatch shows what the server does.  While two saves
# stream to an AFTD (target sessions 1, so two movers) and a third waits
# for a volume of a pool that has none (a mount request): the JSON form
# lists the device with its volume and two sessions, its movers, both
# sessions and the mount request; the text form (not a terminal: one
# screen) says the same in words.  Both give transfer rates from the
# movers' counters: each save's and the device's bytes per second.  Afterwards nothing is left; a stopped mover
# holds up only nsrwatch's call, not a resource update; a server
# that does not run gives an error naming host and port and exit 1, a bad
# option exit 2.
. "$(dirname "$0")/lib.sh"
nsr_setup 417-nsrwatch
S=127.0.0.1
W=$ROOT/work
mkdir -p "$W/aftd1" "$W/a" "$W/b" "$W/c"
export NSR_MOUNT_TIMEOUT_SEC=60
nsr_start_datazone
nsr_device aftd1 adv_file "$W/aftd1" "target sessions: 1; max sessions: 8"
check "label" "$BIN/nsrmm" -s $S -q -l -y -b Default -f aftd1 Disk.001
printf 'create type: NSR pool; name: Nowhere\n' |
	"$BIN/nsradmin" -s $S -i - >/dev/null 2>&1
# 1 GB each, so that both still stream while nsrwatch (with TLS, under
# the sanitizers) samples them on a loaded machine: at 400 MB both once
# ended between two samples.
head -c 1000000000 /dev/zero | tr '\0' a >"$W/a/f"
head -c 1000000000 /dev/zero | tr '\0' b >"$W/b/f"
echo c >"$W/c/f"

"$BIN/save" -s $S -q "$W/a" >/dev/null 2>&1 & pa=$!
"$BIN/save" -s $S -q "$W/b" >/dev/null 2>&1 & pb=$!
"$BIN/save" -s $S -q -b Nowhere "$W/c" >"$W/c.out" 2>&1 & pc=$!
json=""
for _ in $(seq 1 200); do
	json=$("$BIN/nsrwatch" -s $S -x json 2>&1)
	n=$(grep -o '"type":"save"' <<<"$json" | wc -l)
	[ "$n" -ge 2 ] && grep -q '"kind":"mount request"' <<<"$json" && break
	sleep 0.05
done
echo "$json" >"$W/watch.json"
check "JSON: the device with its volume" \
	grep -q '"devices":\[{"name":"aftd1","type":"adv_file","volume":"Disk.001"' \
	"$W/watch.json"
check "JSON: two sessions on it" grep -q '"sessions":2,"target_sessions":1' \
	"$W/watch.json"
check "JSON: two movers of aftd1 (target sessions 1)" \
	test "$(grep -o "\"device\":\"aftd1\",\"pid\":[0-9]*" "$W/watch.json" | wc -l)" -ge 2
check "JSON: the mount request for pool Nowhere" \
	grep -q '"kind":"mount request","ticket":[0-9]*,"client":"[^"]*","name":"'"$W/c"'","pool":"Nowhere"' \
	"$W/watch.json"
"$BIN/nsrwatch" -s $S >"$W/watch.txt" 2>&1
check "text: exit 0, one screen" test $? -eq 0
check "text: the server line" grep -q "^server .*(parallelism 32): 2 sessions, 0 queued, 1 mount requests" \
	"$W/watch.txt"
check "text: the mount request in words" \
	grep -q "mount request [0-9]*: save of .*:$W/c waits for a writable volume of pool Nowhere" \
	"$W/watch.txt"
check "text: a session line" grep -Eq "^  save +[^ ]+ +[0-9]+ aftd1 " "$W/watch.txt"

# Rates, from the movers' counters: each save and the device move bytes.
rates=""
for _ in $(seq 1 100); do
	rates=$("$BIN/nsrwatch" -s $S -x json 2>&1 | grep -o '"rates":.*')
	n=$(grep -Eo '"type":"save","ssid":[0-9]+,"device":"aftd1","mover_pid":[0-9]+,"bytes":[1-9][0-9]*,"bytes_per_sec":[1-9][0-9]*' <<<"$rates" | wc -l)
	[ "$n" -ge 2 ] && break
	sleep 0.1
done
echo "# $rates"
check "JSON: a rate for each of the two saves (bytes/s > 0)" test "$n" -ge 2
check "JSON: the device's rate (bytes/s > 0, 2 sessions)" grep -Eq \
	'"devices":\[\{"name":"aftd1","sessions":2,"bytes_per_sec":[1-9]' \
	<<<"$rates"
"$BIN/nsrwatch" -s $S >"$W/rates.txt" 2>&1
sed -n '/^Rates/,/^$/p' "$W/rates.txt" | sed 's/^/# /'
check "text: the device's rate" \
	grep -Eq "^  device  aftd1 +[0-9.]+ MB/s  \([0-9]+ sessions\)" "$W/rates.txt"
check "text: a save's rate" \
	grep -Eq "^  save +ssid [0-9]+ on +aftd1 +[0-9.]+ MB/s +[0-9.]+ MB so far" "$W/rates.txt"

kill "$pc" 2>/dev/null
wait "$pa"; ra=$?
wait "$pb"; rb=$?
wait "$pc" 2>/dev/null
check "the two saves complete ($ra $rb)" test "$ra$rb" = 00
"$BIN/nsrwatch" -s $S -x json >"$W/after.json" 2>&1
check "afterwards: no session" grep -q '"sessions":\[\]' "$W/after.json"

# A mover that does not answer holds up only the call that asks it: nsrd
# asks the movers for their counters with its server mutex released, so
# a resource change (serialized like STATUS) goes through meanwhile.
mpid=$(grep -o '"device":"aftd1","pid":[0-9]*' "$W/after.json" | head -1 |
	grep -o '[0-9]*$')
check "an idle mover is left to stop" test -n "$mpid"
kill -STOP "$mpid"
"$BIN/nsrwatch" -s $S -x json >"$W/stopped.json" 2>&1 & pw=$!
sleep 1
printf '. type: NSR pool; name: Nowhere\nupdate comment: changed while a mover sleeps\n' |
	timeout 20 "$BIN/nsradmin" -s $S -i - >"$W/upd.out" 2>&1
check "a resource update while nsrwatch waits for a stopped mover" \
	test $? -eq 0
check "nsrwatch still waits for it" kill -0 "$pw"
kill -CONT "$mpid"
wait "$pw"
check "then nsrwatch answers (exit 0)" test $? -eq 0
check "with the rates part" grep -q '"rates":' "$W/stopped.json"

out=$(NSR_PORTMAP_PORT=$(free_port) "$BIN/nsrwatch" -s $S 2>&1); rc=$?
check "no server: exit 1" test $rc -eq 1
check "naming host and port" grep -q "127.0.0.1:[0-9]" <<<"$out"
"$BIN/nsrwatch" -x yaml >/dev/null 2>&1
check "a bad option: exit 2" test $? -eq 2
nsr_done
