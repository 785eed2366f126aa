#!/bin/bash
# 106-mmdb-away: a save asked for while the media database cannot be
# reached (nsrmmdbd killed and kept from coming back: the test holds its
# pid-file lock, so each restart exits at once) is refused within nsrd's
# bounded wait for it (NSR_PEER_WAIT_MS) saying that the media database
# is not available, never that no writable volume is mounted; once
# nsrmmdbd is back, the next save completes.
. "$(dirname "$0")/lib.sh"
nsr_setup 106-mmdb-away
S=127.0.0.1
W=$ROOT/work
export NSR_PEER_WAIT_MS=4000
export NSR_WAIT_ANSWERS_SEC=60
mkdir -p "$W/src"
nsr_start_aftd_datazone
echo x >"$W/src/f"

m=$(cat "$ROOT/logs/nsrmmdbd.pid")
kill -KILL "$m"
for i in $(seq 1 100); do kill -0 "$m" 2>/dev/null || break; sleep 0.1; done
# The lock is held on descriptor 9 of this shell (what it starts
# meanwhile exits before the lock is let go).
exec 9<"$ROOT/logs/nsrmmdbd.pid"
check "the test holds nsrmmdbd's pid-file lock" flock -n 9
t0=$SECONDS
out=$("$BIN/save" -s $S -q "$W/src" 2>&1)
rc=$?
took=$((SECONDS - t0))
sed 's/^/#   save: /' <<<"$out"
check "the save is refused (exit $rc)" test $rc != 0
check "within a bounded time ($took s)" test $took -lt 40
check "saying the media database is not available" \
	grep -q "media database is not available" <<<"$out"
expect_fail "not that no writable volume is mounted" \
	grep -q "no writable volume" <<<"$out"
exec 9<&-
nsr_wait_answers nsrmmdbd
check "with nsrmmdbd back, the save completes" "$BIN/save" -s $S -q "$W/src"
check "and recovers identical" recovers_identical "$W/src"
nsr_done
