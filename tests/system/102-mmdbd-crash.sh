#!/bin/bash
# 102-mmdbd-crash: nsrmmdbd killed with SIGKILL during a storm of commits
# from several connections loses no acknowledged record; after the restart
# the database check passes and the storm can go on.
. "$(dirname "$0")/lib.sh"
nsr_setup 102-mmdbd-crash
T=$BIN/mmdb_testclnt
# Sanitizer reports of every program below land here (checked at the end).
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}log_path=$ROOT/asan"

nsr_start nsrexecd
nsr_start nsrmmdbd
pid=$(cat "$ROOT/logs/nsrmmdbd.pid")

# A storm far larger than what can finish before the kill.
"$T" storm 1000000 4 >"$ROOT/acks" 2>"$ROOT/storm.err" &
storm=$!
for i in $(seq 1 100); do
	[ "$(grep -c '^ack' "$ROOT/acks" 2>/dev/null)" -ge 300 ] && break
	sleep 0.1
done
kill -KILL "$pid"
wait $storm; rc=$?
check "the storm stopped because the daemon died (status 3, got $rc)" test $rc -eq 3
acked=$(grep -c '^ack' "$ROOT/acks")
check "records were acknowledged before the kill ($acked)" test "$acked" -ge 300

# nsrexecd's locator forgets the dead daemon; start it again.
rm -f "$ROOT/logs/nsrmmdbd.pid"
nsr_start nsrmmdbd
nsr_wait_answers nsrmmdbd
out=$("$T" verify "$ROOT/acks" 2>&1)
check "every acknowledged save set and fragment survived: $out" \
	grep -q "^verified $acked acknowledged save sets, 0 missing" <<<"$out"
out=$("$T" check 2>&1)
check "the database check passes after the crash" grep -q "^consistent" <<<"$out"

# Twice more, with kills at other moments, the second on a grown log.
for round in 2 3; do
	pid=$(cat "$ROOT/logs/nsrmmdbd.pid")
	"$T" storm 1000000 3 >"$ROOT/acks$round" 2>/dev/null &
	storm=$!
	sleep 0.$((round * 3))
	kill -KILL "$pid"
	wait $storm
	rm -f "$ROOT/logs/nsrmmdbd.pid"
	nsr_start nsrmmdbd
	nsr_wait_answers nsrmmdbd
	out=$("$T" verify "$ROOT/acks$round" 2>&1)
	check "round $round: no acknowledged record lost: $out" \
		grep -q "acknowledged save sets, 0 missing" <<<"$out"
	out=$("$T" verify "$ROOT/acks" 2>&1)
	check "round $round: earlier records still there" \
		grep -q "^verified $acked acknowledged save sets, 0 missing" <<<"$out"
done
out=$("$T" check 2>&1)
check "final database check passes" grep -q "^consistent" <<<"$out"

# Stopped in order, the offline check (-t) agrees.
pid=$(cat "$ROOT/logs/nsrmmdbd.pid")
kill -TERM "$pid"
for i in $(seq 1 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
out=$("$BIN/nsrmmdbd" -t -R "$ROOT" 2>&1); rc=$?
check "nsrmmdbd -t: the stopped database is consistent (exit $rc)" test $rc -eq 0
check "nsrmmdbd -t says so" grep -q "is consistent" <<<"$out"

# Damage: a garbled page is found by the offline check; a garbled first
# page stops nsrmmdbd at start with the file named and the check named.
db=$ROOT/mm/mmdb
last=$(( $(stat -c %s "$db") / 32768 - 1 ))
printf 'garbage garbage' | dd of="$db" bs=1 seek=$((last * 32768 + 300)) conv=notrunc 2>/dev/null
out=$("$BIN/nsrmmdbd" -t -R "$ROOT" 2>&1); rc=$?
check "nsrmmdbd -t finds a garbled page $last (exit $rc)" test $rc -eq 1
check "and says where: $(head -1 <<<"$out")" \
	grep -Eq "page $last|mmdb is damaged" <<<"$out"
printf 'garbage garbage' | dd of="$db" bs=1 seek=300 conv=notrunc 2>/dev/null
"$BIN/nsrmmdbd" -b -R "$ROOT" >/dev/null 2>&1; rc=$?
check "nsrmmdbd refuses to start on a damaged database (exit $rc)" test $rc -ne 0
check "the log names the file and suggests the check" \
	grep -q "media database $db is damaged.*nsrmmdbd -t" "$ROOT/logs/daemon.log"
check "no sanitizer reports" test -z "$(ls "$ROOT"/asan.* 2>/dev/null)"
nsr_done
