#!/bin/bash
# 466-revoked-poll: nsrexecd -S fetches its server's revocation list
# every NSR_REVOKED_POLL_SEC seconds (here 1).  While the server does not
# answer, nsrexecd says so once, not at every poll, and goes on serving
# (its locator registers nsrd); once the server is up it says the list
# is fetched again, and no failure after that.
. "$(dirname "$0")/lib.sh"
nsr_setup 466-revoked-poll
S=127.0.0.1
export NSR_REVOKED_POLL_SEC=1
LOG=$ROOT/logs/daemon.log

nsr_start nsrexecd -s -S $S
sleep 3.5
check "nsrexecd keeps running without its server" \
	kill -0 "${PIDS[0]}"
check "it says it cannot fetch the server's list" \
	grep -q "cannot fetch the revocation list of server $S:.*trying again every 1 s" \
	"$LOG"
check "once, not at every poll" \
	test "$(grep -c "cannot fetch the revocation list of server $S" \
		"$LOG")" = 1
check "its locator still answers: a daemon registers with it" \
	nsr_start nsrd
nsr_wait_answers nsrd
for i in $(seq 1 50); do
	grep -q "the revocation list of server $S is fetched again" "$LOG" &&
		break
	sleep 0.1
done
check "with the server up, the list is fetched again" \
	grep -q "the revocation list of server $S is fetched again" "$LOG"
sleep 2.5
check "and no failure is said after that" \
	test "$(grep -c "cannot fetch the revocation list of server $S" \
		"$LOG")" = 1

nsr_done
