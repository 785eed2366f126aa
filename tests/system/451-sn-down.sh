#!/bin/bash
# 451-sn-down: the storage node dies in the middle of a save.  Hosts srv
# (server), sn1 (storage node, AFTD rd=sn1:...), cli (client).  While the
# client saves a large file, every process of sn1 (nsrexecd, nsrsnmd,
# nsrmmd) is killed with SIGKILL, by pid.  save must exit non-zero within
# 60 s with a message that names the host (sn1) and the program (nsrmmd);
# mminfo on the server must not show the save set as complete.  After sn1
# is started again, the next save and its recover work.  Needs root and
# network namespaces (skipped otherwise).  NSR_TEST_BIG_MB sets the size
# of the large file (default 384).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/netns.sh"
nsr_setup 451-sn-down
nsr_net_setup srv sn1 cli
S=srv
W=$ROOT/work
mkdir -p "$W"
START=$(date +%s)
BIG_MB=${NSR_TEST_BIG_MB:-384}

nsr_host_start_server srv
nsr_host_start_storage sn1
nsr_host_start_client cli
nsr_host_sn1_aftd

B=$ROOT/cli/big
nsr_big_file "$B/large.bin" "$BIG_MB"


# --- kill sn1 mid-save --------------------------------------------------
on cli "$BIN/save" -s $S -c cli "$B" >"$W/save1.out" 2>&1 &
SAVE=$!
# wait (<= 30 s) until the mover has written 16 MB
i=0
while [ $i -lt 300 ] && kill -0 $SAVE 2>/dev/null &&
	[ "$(du -sb "$D1" | awk '{print $1}')" -lt 16777216 ]; do
	sleep 0.1; i=$((i + 1))
done
if kill -0 $SAVE 2>/dev/null; then
	check "save is writing to sn1 ($(du -sm "$D1" | awk '{print $1}') MB so far)" \
		test "$(du -sb "$D1" | awk '{print $1}')" -ge 16777216
	KILLED=$(date +%s)
	nsr_host_kill sn1 KILL
	wait $SAVE
	rc=$?
	took=$(( $(date +%s) - KILLED ))
	echo "# save exited $rc, $took s after sn1 was killed"
	check "save exits non-zero" test $rc -ne 0 -a $rc -ne 124
	check "within 60 s ($took s)" test $took -lt 60
	check "its message names the host sn1" grep -q "sn1" "$W/save1.out"
	check "and the program nsrmmd" grep -q "nsrmmd" "$W/save1.out"
	sed 's/^/# save: /' "$W/save1.out" | tail -n 5
else
	wait $SAVE
	fail "save ended before sn1 was killed (exit $?): raise NSR_TEST_BIG_MB"
fi
expect_fail "mminfo on srv does not show the save set complete" nsr_shown_complete "$B"
on srv "$BIN/mminfo" -s $S -q "name=$B" -r "ssid,sumflags,name" 2>&1 | sed 's/^/# mminfo: /'

# --- sn1 back: the next save works -------------------------------------
nsr_host_start_storage sn1
T=$ROOT/cli/small
mkdir -p "$T/d"
head -c 1000000 /dev/urandom >"$T/d/r.bin"
seq 1 10000 >"$T/numbers"
on cli "$BIN/save" -s $S -c cli "$T" >"$W/save2.out" 2>&1
check "after sn1 restarts, the next save exits 0" test $? -eq 0
check "and is shown complete" nsr_shown_complete "$T"
SSID=$(on srv "$BIN/mminfo" -s $S -q "name=$T" -r ssid 2>/dev/null |
	awk '$1 ~ /^[0-9]+$/ {print $1; exit}')
on cli "$BIN/recover" -s $S -c cli -S "${SSID:-0}" -d "$W/r" >"$W/rec.out" 2>&1
check "its recover exits 0" test $? -eq 0
check "and gives the tree back" "$BIN/nsrtreecmp" "$T" "$W/r$T"

echo "# took $(( $(date +%s) - START )) s"
nsr_done
