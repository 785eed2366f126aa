#!/bin/bash
# 486-grant-key: the datazone's grant key (nsrd(8), GRANTS).  nsrd makes
# res/grant.key at its first start (32 bytes, mode 0600) and keeps it
# across a restart.  A key file of the wrong size stops nsrd from
# starting, saying what to do (move it away); after that nsrd makes a
# new one.
. "$(dirname "$0")/lib.sh"
nsr_setup 486-grant-key
KEY=$ROOT/res/grant.key
nsr_start_datazone
check "nsrd made res/grant.key" test -f "$KEY"
check "of 32 bytes" test "$(stat -c %s "$KEY" 2>/dev/null)" = 32
check "mode 0600" test "$(stat -c %a "$KEY" 2>/dev/null)" = 600
cp "$KEY" "$ROOT/key.first"
nsr_stop_all
nsr_start_datazone
check "a restart keeps it" cmp -s "$KEY" "$ROOT/key.first"
nsr_stop_all

printf 'short' >"$KEY"
nsr_start nsrexecd -s
"$BIN/nsrd" -b -R "$ROOT" >"$ROOT/nsrd.out" 2>&1
rc=$?
[ $rc = 0 ] && PIDS+=("$(cat "$ROOT/logs/nsrd.pid")")
check "nsrd does not start with a 5-byte key file (exit $rc)" test $rc -ne 0
check "saying so and what to do" nsr_wait_logged "$ROOT/logs/daemon.log" \
	"grant.key holds 5 bytes, not a grant key of 32: move it away and restart nsrd"
nsr_stop_all
mv "$KEY" "$ROOT/key.short"
nsr_start_datazone
check "moved away: nsrd starts and makes a new key" \
	test "$(stat -c %s "$KEY" 2>/dev/null)" = 32
check "another one" test -n "$(cmp "$KEY" "$ROOT/key.first" 2>&1)"
nsr_done
