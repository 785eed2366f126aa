#!/bin/bash
# 202-jobd-retention: in a whole datazone, the jobs retention is the server
# resource's "jobsdb retention in hours": nsrjobd asks nsrd at every purge,
# so a change made with nsradmin takes effect at the next purge; while
# nsrd does not answer (stopped here), its last answer holds, not -r.
. "$(dirname "$0")/lib.sh"
nsr_setup 202-jobd-retention
export NSR_TEST_JOBS_PURGE_INTERVAL=1
nsr_start_datazone
S=127.0.0.1
T=$BIN/jobd_testclnt
[ -x "$T" ] || die "jobd_testclnt is not built"

# Finished 5 hours ago, finished 2 hours ago, still active since 10 hours.
old=$("$T" create "type=save job" state=completed client=c1 name=/old start=-18100 end=-18000)
mid=$("$T" create "type=save job" state=completed client=c1 name=/mid start=-7300 end=-7200)
act=$("$T" create "type=save job" state=active client=c1 name=/active start=-36000)
check "three jobs created" test -n "$old" -a -n "$mid" -a -n "$act"

# has_job ID - jobquery lists job ID.
has_job() {
	printf 'show job id\nprint\n' | "$BIN/jobquery" -s $S |
		grep -qE "job id: $1;"
}

# Default retention (72 hours): nothing goes.
sleep 3
check "with 72 hours retention the 5-hour-old job stays" has_job "$old"

printf '. type: NSR\nupdate jobsdb retention in hours: 3\n' |
	"$BIN/nsradmin" -s $S -i - >/dev/null
check "nsradmin sets the retention to 3 hours" \
	bash -c "printf 'print type: NSR\n' | '$BIN/nsradmin' -s $S -i - | grep -q 'jobsdb retention in hours: 3;'"
gone=0
for i in $(seq 1 100); do
	if ! has_job "$old"; then gone=1; break; fi
	sleep 0.1
done
check "at the next purge the 5-hour-old job is gone" test $gone = 1
check "the 2-hour-old job stays" has_job "$mid"
check "the active job stays" has_job "$act"
check "the purge is logged with the server's retention" \
	grep -q "finished more than 3 hours ago" "$ROOT/logs/daemon.log"

# nsrd stopped: a purge cannot ask it.  Its last answer (3 hours) holds,
# not nsrjobd's -r (72 hours): a job finished 4 hours ago goes.
P=$(cat "$ROOT/logs/nsrd.pid")
kill -STOP "$P"
late=$("$T" create "type=save job" state=completed client=late name=/late start=-14500 end=-14400)
gone=0
for i in $(seq 1 300); do
	if ! "$T" query "print client: late" 2>/dev/null | grep -q .; then
		gone=1; break
	fi
	sleep 0.1
done
kill -CONT "$P"
check "a job created while nsrd was stopped" test -n "$late"
check "with nsrd silent, the 4-hour-old job goes by its last retention" \
	test $gone = 1
check "nsrjobd says which retention it purges with" \
	grep -q "nsrd does not answer: purging with its last retention, 3 hours" \
	"$ROOT/logs/daemon.log"
check "and when nsrd answers again" \
	nsr_wait_logged "$ROOT/logs/daemon.log" \
		"nsrd answers again: retention 3 hours"
check "the 2-hour-old job still stays" has_job "$mid"
nsr_done
