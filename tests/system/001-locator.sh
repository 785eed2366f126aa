#!/bin/bash
# 001-locator: nsrexecd starts on free ports, refuses a second copy on the
# same root, and its locator answers "not registered" for absent daemons;
# a peer that cannot be reached is named with its program and host, and a
# host name that does not resolve is said once, clearly.
. "$(dirname "$0")/lib.sh"
nsr_setup 001-locator

nsr_start nsrexecd
check "nsrexecd wrote its pid file" test -s "$ROOT/logs/nsrexecd.pid"
out=$("$BIN/nsrexecd" -b -R "$ROOT" 2>&1)
rc=$?
check "a second nsrexecd on the same root fails" test $rc -ne 0
check "and says another one runs" grep -q "already running on root" <<<"$out"
check "nsrexecd --help exits 0" "$BIN/nsrexecd" --help

out=$("$BIN/mminfo" -s 127.0.0.1 -a 2>&1)
check "mminfo without nsrmmdbd fails" test $? -ne 0
check "naming the program and the host: $out" \
	grep -q "nsrmmdbd on host 127.0.0.1.*not registered" <<<"$out"
out=$("$BIN/save" -s nosuchhost.invalid -q "$ROOT/logs" 2>&1)
check "save to a host that does not resolve fails" test $? -ne 0
check "saying the name does not resolve: $out" \
	grep -q "host name 'nosuchhost.invalid' does not resolve" <<<"$out"
check "without blaming nsrexecd" \
	test -z "$(grep "is nsrexecd running" <<<"$out")"
nsr_done
