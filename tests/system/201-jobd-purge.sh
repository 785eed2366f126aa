#!/bin/bash
# 201-jobd-purge: nsrjobd's periodic purge (tiny interval, 1 hour
# retention) removes exactly the finished jobs that ended before the
# retention, never active or queued ones, never a unit whose parent still
# runs; killed with SIGKILL in the middle of a long purge (tiny batches),
# the database is intact after restart and the next purge completes.
. "$(dirname "$0")/lib.sh"
nsr_setup 201-jobd-purge
T=$BIN/jobd_testclnt
DB=$ROOT/jobs/jobsdb

# wait_for DESC SECONDS CMD... - poll CMD every 0.1 s until it succeeds.
wait_for() {
	local desc=$1 n=$(( $2 * 10 )) i=0; shift 2
	while [ $i -lt $n ]; do
		"$@" && return 0
		sleep 0.1; i=$((i + 1))
	done
	fail "$desc (waited $((n / 10)) s)"
	return 1
}

# ids - job ids that jobquery lists, space separated.
ids() {
	printf 'show job id\nprint\n' | "$BIN/jobquery" |
		sed -n 's/^ *job id: \([0-9]*\);$/\1/p' | tr '\n' ' '
}

# stop_jobd PID - SIGTERM and wait for it to go.
stop_jobd() {
	kill -TERM "$1"
	for i in $(seq 1 100); do kill -0 "$1" 2>/dev/null || return 0; sleep 0.1; done
	kill -KILL "$1"
}

# db_ok - the jobs db passes SQLite's and the library's integrity checks.
db_ok() { "$T" check-db "$DB" >/dev/null; }

nsr_start nsrexecd
# Purge every second (the test knob), keep finished jobs one hour.
NSR_TEST_JOBS_PURGE_INTERVAL=1 nsr_start nsrjobd -r 1
JOBD_PID=${PIDS[-1]}

# --- Jobs around the retention.  Every create is complete in one call, so
# a purge running meanwhile sees each job only in its final shape. -------
S="type=save job"
a=$("$T" create "$S" client=a state=completed start=-8000 end=-7200 log=a)
b=$("$T" create "$S" client=b state=failed start=-20000 end=-10800 log=b)
c=$("$T" create "$S" client=c state=aborted start=-6000 end=-5400)
d=$("$T" create "$S" client=d state=completed start=-700 end=-600)
e=$("$T" create "$S" client=e state=active start=-100000)
f=$("$T" create "$S" client=f state=queued start=-100000)
# A unit whose parent still runs stays, expired child and all.
g=$("$T" create type="savegrp job" client=g state=active start=-90000)
g1=$("$T" create "$S" parent="$g" client=g1 state=completed start=-9000 end=-7200)
# A unit that finishes (parent last) goes as a whole.
h=$("$T" create type="savegrp job" client=h state=active start=-90000)
h1=$("$T" create "$S" parent="$h" client=h1 state=completed start=-9000 end=-8000 log=h1)
"$T" update "$h" state=completed end=-7200
i=$("$T" create "$S" client=i state=completed start=-3600 end=-3000)
check "eleven jobs created" test "$i" = 11

want="$d $e $f $g $g1 $i "
left_are_wanted() { [ "$(ids)" = "$want" ]; }
wait_for "the periodic purge removes the expired jobs" 15 left_are_wanted
check "exactly the expired finished jobs went (left: $(ids))" test "$(ids)" = "$want"
check "nsrjobd logged the purge" grep -q "nsrjobd\[$JOBD_PID\]: info: purged" "$ROOT/logs/daemon.log"
check "database intact" db_ok

# --- SIGKILL in the middle of a long purge. -----------------------------
stop_jobd "$JOBD_PID"
N=20000
"$T" fill-db "$DB" $N type=1 state=completed start=-400000 end=-360000 log=old
"$T" fill-db "$DB" 5 type=1 state=completed start=-100 end=-60 log=new
total=$(( N + 5 + 6 ))
check "filled $total jobs" test "$("$T" count-db "$DB")" = $total
# Two jobs per transaction: the purge takes thousands of transactions.
NSR_TEST_JOBDB_BATCH=2 NSR_TEST_JOBS_PURGE_INTERVAL=1 nsr_start nsrjobd -r 1
JOBD_PID=${PIDS[-1]}
purging() { [ "$("$T" count-db "$DB")" -lt $total ]; }
wait_for "the purge starts" 15 purging
kill -KILL "$JOBD_PID"
left=$("$T" count-db "$DB")
echo "# killed with $left of $total jobs left"
check "killed in the middle of the purge" test "$left" -gt 11 -a "$left" -lt $total
check "database intact after SIGKILL" db_ok

# Restart without the periodic purge; purge on demand.
nsr_start nsrjobd -r 1
JOBD_PID=${PIDS[-1]}
nsr_wait_answers nsrjobd
out=$("$T" purge)
check "the next purge completes: $out" grep -q "^jobs $(( left - 11 )) logs $(( left - 11 )) batches [1-9]" <<<"$out"
check "11 jobs left" test "$("$T" count-db "$DB")" = 11
check "database intact after the purge" db_ok
out=$("$T" purge)
check "a second purge finds nothing: $out" grep -q "^jobs 0 logs 0 " <<<"$out"
out=$(printf 'show client; job state\nprint job state: active, queued\n' | "$BIN/jobquery")
check "no job is left active after the restarts" test "$out" = 'No jobs found for query: job state: ACTIVE, QUEUED'
nsr_done
