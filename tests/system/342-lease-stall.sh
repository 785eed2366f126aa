#!/bin/bash
# 342-lease-stall: a save that writes nothing for longer than its lease
# (a walk over unchanged files, a slow source: here the test knob
# NSR_TEST_SAVE_STALL_SEC stalls it after its first file) keeps its
# session: save renews the lease from a thread of its own, not from the
# write path, so nsrd does not settle it, and it completes.  A recover
# held up for longer than its lease (its data goes into a command that
# sleeps first) keeps its session the same way.  A save whose
# lease does lapse is told so at its end, and never reports a save set
# settled as aborted as completed.
. "$(dirname "$0")/lib.sh"
nsr_setup 342-lease-stall
S=127.0.0.1
W=$ROOT/work
# A 4 s lease (save renews every second); the stall is three leases.
export NSR_LEASE_SEC=4
STALL=12
mkdir -p "$W/src/sub" "$W/out"
nsr_start_aftd_datazone

head -c 3000000 /dev/urandom >"$W/src/a"
head -c 2000000 /dev/urandom >"$W/src/sub/b"
t0=$SECONDS
NSR_TEST_SAVE_STALL_SEC=$STALL "$BIN/save" -s $S -q "$W/src" >"$W/save.out" 2>&1
rc=$?
took=$((SECONDS - t0))
sed 's/^/#   save: /' "$W/save.out"
check "the stalled save completes (exit $rc)" test $rc = 0
check "it stalled for $STALL s (took $took s)" test $took -ge $STALL
flags=$("$BIN/mminfo" -s $S -a -q "name=$W/src" -r sumflags 2>/dev/null |
	tail -n 1 | tr -d ' ')
check "its save set is complete and browsable ($flags)" test "$flags" = cb
expect_fail "nsrd did not settle it" \
	grep -qE "stopped renewing its lease|the client went away" "$ROOT/logs/daemon.log"
check "it recovers identical" recovers_identical "$W/src"

# A recover that moves nothing for three leases: its output goes into a
# command that sleeps before it reads.
check "a pipeline save" "$BIN/save" -s $S -q --pipe=/PIPE/slow -- \
	head -c 3000000 "$W/src/a"
pss=$("$BIN/mminfo" -s $S -a -q name=/PIPE/slow -r ssid 2>/dev/null |
	awk '$1 ~ /^[0-9]+$/ {print $1; exit}')
t0=$SECONDS
"$BIN/recover" -s $S -S "${pss:-0}" --pipe -- \
	sh -c "sleep $STALL; cat >'$W/slow.out'" >"$W/rec.out" 2>&1
rc=$?
took=$((SECONDS - t0))
sed 's/^/#   recover: /' "$W/rec.out"
check "the held-up recover completes (exit $rc)" test $rc = 0
check "it was held up for $STALL s (took $took s)" test $took -ge $STALL
check "its data is whole" cmp -s "$W/src/a" "$W/slow.out"
expect_fail "nsrd did not settle the recover as gone" \
	grep -q "recover of save set ${pss:-0} for .*went away" "$ROOT/logs/daemon.log"
expect_fail "and recover did not hear of it" grep -q "settled" "$W/rec.out"

# A save whose lease lapses anyway (here it renews every 30 s, slower
# than the server's 4 s lease) is settled by nsrd while it stalls; when
# it ends, save must not say "completed" for a save set settled as
# aborted.
mkdir -p "$W/late"
head -c 2000000 /dev/urandom >"$W/late/a"
head -c 1000000 /dev/urandom >"$W/late/b"
NSR_LEASE_SEC=120 NSR_TEST_SAVE_STALL_SEC=$STALL "$BIN/save" -s $S -q "$W/late" >"$W/late.out" 2>&1
rc=$?
sed 's/^/#   save: /' "$W/late.out"
check "the lapsed save fails (exit $rc)" test $rc != 0
check "saying that it was settled" grep -q "settled" "$W/late.out"
expect_fail "and not that it completed" grep -q "^completed" "$W/late.out"
flags=$("$BIN/mminfo" -s $S -a -q "name=$W/late" -r sumflags 2>/dev/null |
	tail -n 1 | tr -d ' ')
check "its save set is aborted ($flags)" grep -q a <<<"$flags"
expect_fail "and not browsable" grep -q b <<<"$flags"
nsr_done
