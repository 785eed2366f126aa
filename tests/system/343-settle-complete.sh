#!/bin/bash
# 343-settle-complete: save ends after its data is durable on the volume
# and its index committed, without telling nsrd (test knob
# NSR_TEST_SAVE_EXIT_BEFORE_END: a client killed at that point).  nsrd
# settles the session from what the mover recorded: the save set is
# complete (recoverable by ssid, not browsable), its job is finished and
# not active, the parallelism slot is free, and it recovers identical.
. "$(dirname "$0")/lib.sh"
nsr_setup 343-settle-complete
S=127.0.0.1
W=$ROOT/work
export NSR_LEASE_SEC=8
mkdir -p "$W/src/sub" "$W/next"
nsr_start_aftd_datazone
printf '. type: NSR\nupdate parallelism: 1\n' |
	"$BIN/nsradmin" -s $S -i - >/dev/null 2>&1

head -c 3000000 /dev/urandom >"$W/src/a"
head -c 500000 /dev/urandom >"$W/src/sub/b"
NSR_TEST_SAVE_EXIT_BEFORE_END=1 "$BIN/save" -s $S -q "$W/src" >"$W/save.out" 2>&1
rc=$?
check "save exits before telling nsrd (exit $rc)" test $rc = 9
ssid=$("$BIN/mminfo" -s $S -a -q "name=$W/src" -r ssid 2>/dev/null |
	awk '$1 ~ /^[0-9]+$/ {print $1; exit}')
check "its save set exists" test -n "$ssid"
flags=""
for i in $(seq 1 300); do
	flags=$("$BIN/mminfo" -s $S -a -q "ssid=${ssid:-0}" -r sumflags 2>/dev/null |
		tail -n 1 | tr -d ' ')
	grep -q I <<<"$flags" || break
	sleep 0.1
done
check "nsrd settled it as complete, not browsable ($flags)" test "$flags" = cr
# nsrd logs it after the media database's update and the job's end
# (a round trip to nsrjobd): wait for the line as well.
said=0
for i in $(seq 1 100); do
	grep -q "save set $ssid of .*settled as complete" "$ROOT/logs/daemon.log" &&
		{ said=1; break; }
	sleep 0.1
done
check "and said so" test $said = 1
active=$(printf 'print job state: active\n' | "$BIN/jobquery" -s $S 2>/dev/null |
	grep -c "job id:")
check "no job is left active ($active)" test "$active" = 0
done_jobs=$(printf 'print type: save job; job state: completed\n' |
	"$BIN/jobquery" -s $S 2>/dev/null)
check "its job finished as completed" grep -qF "name: $W/src;" <<<"$done_jobs"
echo y >"$W/next/f"
check "the slot is free: the next save completes" "$BIN/save" -s $S -q "$W/next"
check "the settled save set recovers identical by ssid" \
	recovers_identical "$W/src" -S "${ssid:-0}"
nsr_done
