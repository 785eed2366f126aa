#!/bin/bash
# 463-savegrp-nsrd-killed: a group run does not outlive the nsrd that ran
# it.  A group whose one client cannot be reached waits to retry it; nsrd
# is killed with SIGKILL during that wait and started again (its jobs
# database with it): the savegrp job and its client job end failed with
# the reason (nsrjobd settles every job left unfinished when it starts),
# savegrp, following the run, waits for the jobs database to come back
# and reports the failure (exit 1) instead of waiting forever or giving
# up, and a new run of the group starts.
. "$(dirname "$0")/lib.sh"
nsr_setup 463-savegrp-nsrd-killed
S=127.0.0.1
W=$ROOT/work
mkdir -p "$W"

# retry after 60 s: the run is still waiting when nsrd dies
export NSR_SCHED_RETRY_SEC=60
nsr_start_datazone
printf '%s\n' "create type: NSR group; name: G1; client retries: 2" \
	"create type: NSR client; name: ghost.invalid; group: G1; save set: /x" |
	"$BIN/nsradmin" -s $S -i - >"$W/nsradmin.out" 2>&1
check "group and client created" test $? = 0

timeout 120 "$BIN/savegrp" -s $S G1 >"$W/g1.out" 2>&1 & SG=$!
# wait until the first attempt failed and the run waits to retry
for i in $(seq 1 100); do
	grep -q "group G1, client ghost.invalid" "$ROOT/logs/daemon.log" &&
		break
	sleep 0.1
done
check "the client's first attempt failed" \
	grep -q "group G1, client ghost.invalid" "$ROOT/logs/daemon.log"

nsr_kill_nsrd
nsr_start nsrd
nsr_wait_answers nsrmmdbd nsrjobd nsrindexd

wait $SG
rc=$?
sed 's/^/# savegrp: /' "$W/g1.out"
check "savegrp reports the run failed once it is settled (exit $rc)" \
	test "$rc" = 1
printf '. type: savegrp job\nshow job id; job state; completion status\nprint\n' |
	"$BIN/jobquery" -s $S >"$W/jobs.out" 2>&1
check "the savegrp job ended failed" grep -qi "state: *failed" "$W/jobs.out"
check "with the reason" grep -q "server restarted" "$W/jobs.out"
printf '. type: save job; client: ghost.invalid\nshow job id; job state\nprint\n' |
	"$BIN/jobquery" -s $S >"$W/kids.out" 2>&1
check "no client job left queued or active" \
	sh -c "! grep -qiE 'queued|active' '$W/kids.out'"
printf '%s\n' ". type: NSR group; name: G1" "update client retries: 0" |
	"$BIN/nsradmin" -s $S -i - >"$W/nsradmin.out" 2>&1
timeout 60 "$BIN/savegrp" -s $S G1 >"$W/g1b.out" 2>&1
rc=$?
check "a new run of the group starts and ends (exit $rc, not 124)" \
	test "$rc" = 1
nsr_done
