#!/bin/bash
# 452-link-cut: the client's network link is cut in the middle of a save.
# Hosts srv (server), sn1 (storage node, AFTD rd=sn1:...), cli (client).
# While the client saves a large file, its port on the hub's bridge goes
# down (packets lost, no error reaches any socket).  With
# NSR_TCP_TIMEOUT_MS=10000 (TCP_USER_TIMEOUT and keepalives of every
# connection; 2 minutes by default) and NSR_PEER_WAIT_MS=10000 (how long
# save keeps trying to reach the server; 30 s by default), save must fail
# within 60 s; with the defaults it takes longer than the 75 s this test
# gives it.  The save set must not be shown complete, and once its lease
# lapses (NSR_LEASE_SEC=30 here) the server settles it as aborted.  When
# the link is back, the next save and its recover work.  Needs root and
# network namespaces (skipped otherwise).  NSR_TEST_BIG_MB sets the size
# of the large file (default 384).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/netns.sh"
nsr_setup 452-link-cut
nsr_net_setup srv sn1 cli
S=srv
W=$ROOT/work
mkdir -p "$W"
START=$(date +%s)
BIG_MB=${NSR_TEST_BIG_MB:-384}

export NSR_TCP_TIMEOUT_MS=10000 NSR_PEER_WAIT_MS=10000
export NSR_LEASE_SEC=30
nsr_host_start_server srv
unset NSR_LEASE_SEC
nsr_host_start_storage sn1
nsr_host_start_client cli
nsr_host_sn1_aftd

B=$ROOT/cli/big
nsr_big_file "$B/large.bin" "$BIG_MB"


# --- cut cli's link mid-save -------------------------------------------
# save gets 75 s here (not 60) so that "fails within 60 s" is measured,
# not imposed by timeout(1).
nsr_host_exec cli timeout 75 "$BIN/save" -s $S -c cli "$B" >"$W/save1.out" 2>&1 &
SAVE=$!
i=0
while [ $i -lt 300 ] && kill -0 $SAVE 2>/dev/null &&
	[ "$(du -sb "$D1" | awk '{print $1}')" -lt 16777216 ]; do
	sleep 0.1; i=$((i + 1))
done
if kill -0 $SAVE 2>/dev/null; then
	check "save is writing to sn1 ($(du -sm "$D1" | awk '{print $1}') MB so far)" \
		test "$(du -sb "$D1" | awk '{print $1}')" -ge 16777216
	CUT=$(date +%s)
	nsr_link_down cli
	wait $SAVE
	rc=$?
	took=$(( $(date +%s) - CUT ))
	echo "# save exited $rc, $took s after the link was cut"
	check "save exits non-zero (not killed by timeout)" test $rc -ne 0 -a $rc -ne 124
	check "within 60 s ($took s)" test $took -lt 60
	check "its message names the host it lost (sn1 or srv)" grep -Eq "sn1|srv" "$W/save1.out"
	sed 's/^/# save: /' "$W/save1.out" | tail -n 5
else
	wait $SAVE
	fail "save ended before the link was cut (exit $?): raise NSR_TEST_BIG_MB"
fi
expect_fail "mminfo on srv does not show the cut save set complete" nsr_shown_complete "$B"
# settled: aborted (status letter a), waiting at most until 60 s after the cut
settled() {
	on srv "$BIN/mminfo" -s $S -q "name=$1" -r "ssid,sumflags" 2>/dev/null |
		awk '$2 ~ /^[chmt]a/ {found = 1} END {exit !found}'
}
while ! settled "$B" && [ $(( $(date +%s) - ${CUT:-0} )) -lt 60 ]; do sleep 1; done
check "the server has settled it as aborted (lease lapsed; checked $(( $(date +%s) - ${CUT:-0} )) s after the cut)" \
	settled "$B"
grep -h "settled as aborted" "$ROOT/srv/logs/daemon.log" | sed 's/^/# /'
grep -h "aborted" "$ROOT/sn1/logs/daemon.log" | sed 's/^/# /'
nsr_link_up cli
check "the link is back: cli reaches srv" nsr_host_reach cli srv
on srv "$BIN/mminfo" -s $S -q "name=$B" -r "ssid,sumflags,name" 2>&1 | sed 's/^/# mminfo: /'

# --- the next save and its recover ---------------------------------------
T=$ROOT/cli/small
mkdir -p "$T/d"
head -c 1000000 /dev/urandom >"$T/d/r.bin"
seq 1 10000 >"$T/numbers"
on cli "$BIN/save" -s $S -c cli "$T" >"$W/save2.out" 2>&1
check "after the link is back, the next save exits 0" test $? -eq 0
check "and is shown complete" nsr_shown_complete "$T"
SSID=$(on srv "$BIN/mminfo" -s $S -q "name=$T" -r ssid 2>/dev/null |
	awk '$1 ~ /^[0-9]+$/ {print $1; exit}')
on cli "$BIN/recover" -s $S -c cli -S "${SSID:-0}" -d "$W/r" >"$W/rec.out" 2>&1
check "its recover exits 0" test $? -eq 0
check "and gives the tree back" "$BIN/nsrtreecmp" "$T" "$W/r$T"

echo "# took $(( $(date +%s) - START )) s"
nsr_done
