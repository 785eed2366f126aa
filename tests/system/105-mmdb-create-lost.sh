#!/bin/bash
# 105-mmdb-create-lost: nsrmmdbd dies after committing a save set's create
# and before its reply (test knob NSR_TEST_MMDBD_DIE_AFTER_CREATE); nsrd,
# which cannot tell whether the create happened, looks for the save set
# once nsrmmdbd is back (create_saveset) and finds it instead of making a
# second one: one save set, the save completes and recovers.
. "$(dirname "$0")/lib.sh"
nsr_setup 105-mmdb-create-lost
S=127.0.0.1
W=$ROOT/work
export NSR_TEST_MMDBD_DIE_AFTER_CREATE=$ROOT/died-once
mkdir -p "$W/src"
nsr_start_aftd_datazone

head -c 1000000 /dev/urandom >"$W/src/a"
out=$("$BIN/save" -s $S -q "$W/src" 2>&1)
rc=$?
sed 's/^/#   save: /' <<<"$out"
check "the save completes (exit $rc)" test $rc = 0
check "nsrmmdbd died between the create and its reply" test -e "$ROOT/died-once"
check "nsrd found the save set the lost reply was about" \
	grep -q "reply was lost; not created twice" "$ROOT/logs/daemon.log"
nsr_wait_answers nsrmmdbd
n=$("$BIN/mminfo" -s $S -a -q "name=$W/src" -r ssid 2>/dev/null |
	awk '$1 ~ /^[0-9]+$/' | wc -l)
check "one save set, not two ($n)" test "$n" = 1
left=$("$BIN/mminfo" -s $S -a -q inprogress -r ssid 2>/dev/null |
	awk '$1 ~ /^[0-9]+$/')
check "nothing is left in progress${left:+ ($left)}" test -z "$left"
check "it recovers identical" recovers_identical "$W/src"
nsr_done
