#!/bin/bash
# 001-locator: nsrexecd starts on free ports, refuses a second copy on the
# same root, and its locator answers "not registered" for absent daemons.
. "$(dirname "$0")/lib.sh"
nsr_setup 001-locator

nsr_start nsrexecd
check "nsrexecd wrote its pid file" test -s "$ROOT/logs/nsrexecd.pid"
out=$("$BIN/nsrexecd" -b -R "$ROOT" 2>&1)
rc=$?
check "a second nsrexecd on the same root fails" test $rc -ne 0
check "and says another one runs" grep -q "already running on root" <<<"$out"
check "nsrexecd --help exits 0" "$BIN/nsrexecd" --help
nsr_done
