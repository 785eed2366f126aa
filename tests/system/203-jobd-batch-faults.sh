#!/bin/bash
# 203-jobd-batch-faults: nsrd records the jobs of starting saves in
# batches (JOB_CREATE_MANY).  When nsrjobd refuses a batch (test knob
# NSR_TEST_JOBD_REFUSE_MANY: nothing recorded), each save records its
# own job: the save completes and its job is there once, complete, with
# its first line.  When nsrjobd dies before its reply, nsrd cannot tell
# whether the jobs were made and does not make them again blindly: it
# says so in its log and, once nsrjobd is back, looks each job up by its
# save set.  Dying before recording the batch
# (NSR_TEST_JOBD_DIE_BEFORE_MANY), the job is not there and is recorded
# then; dying after (NSR_TEST_JOBD_DIE_AFTER_MANY), it is found (marked
# failed as interrupted by nsrjobd's restart) and completed with its
# save.  Either way the save completes with exactly one job, complete.
# When the lookup after a lost reply fails as well
# (NSR_TEST_JOBD_QUERY_FAIL), nsrd says it cannot tell and looks again
# when the save ends: the job is found then and completed with it.
. "$(dirname "$0")/lib.sh"
nsr_setup 203-jobd-batch-faults
S=127.0.0.1
W=$ROOT/work
# The first batch is refused, the second lost before it is recorded,
# the third recorded and its reply lost.
export NSR_TEST_JOBD_REFUSE_MANY=$ROOT/refused-once
export NSR_TEST_JOBD_DIE_BEFORE_MANY=$ROOT/died-before
export NSR_TEST_JOBD_DIE_AFTER_MANY=$ROOT/died-once
# Armed (removed) for the last case only.
export NSR_TEST_JOBD_QUERY_FAIL=$ROOT/query-failed
touch "$ROOT/query-failed"
mkdir -p "$W/d"
head -c 100000 /dev/urandom >"$W/d/f"
mkdir -p "$W/a" "$W/b" "$W/c"
head -c 100000 /dev/urandom >"$W/a/f"
head -c 100000 /dev/urandom >"$W/b/f"
head -c 100000 /dev/urandom >"$W/c/f"
nsr_start_aftd_datazone

# jobs_of NAME - the save jobs of save set NAME: "state|first line".
jobs_of() {
	printf '. type: save job; name: %s\nshow job state; job log\nprint\n' \
		"$1" | "$BIN/jobquery" -s $S 2>/dev/null
}

# --- a refused batch: each start records its own -------------------------
"$BIN/save" -s $S -q "$W/a" >"$W/a.out" 2>&1
check "the save completes" test $? = 0
check "nsrjobd refused the batch (the knob fired)" \
	test -e "$ROOT/refused-once"
check "nsrd said it records each job on its own" \
	grep -q "cannot record the jobs of 1 starting saves at once:.*each is recorded on its own" \
	"$ROOT/logs/daemon.log"
jobs_of "$W/a" >"$W/jobs.a"
check "the save has one job" test "$(grep -c 'job state' "$W/jobs.a")" = 1
check "complete" grep -q 'job state: COMPLETED' "$W/jobs.a"
check "with its first line" grep -q "saving .*:$W/a to volume" "$W/jobs.a"

# --- a batch lost before nsrjobd recorded it: recorded once it is back ----
"$BIN/save" -s $S -q "$W/c" >"$W/c.out" 2>&1
check "the save completes though nsrjobd died first" test $? = 0
check "nsrjobd died before recording the batch (the knob fired)" \
	test -e "$ROOT/died-before"
nsr_wait_answers nsrjobd
jobs_of "$W/c" >"$W/jobs.c"
check "the save has one job" test "$(grep -c 'job state' "$W/jobs.c")" = 1
check "complete" grep -q 'job state: COMPLETED' "$W/jobs.c"
check "with its first line" grep -q "saving .*:$W/c to volume" "$W/jobs.c"

# --- a lost reply: not made twice, not left active ----------------------
"$BIN/save" -s $S -q "$W/b" >"$W/b.out" 2>&1
check "the save completes though nsrjobd died" test $? = 0
check "nsrjobd died after recording the batch (the knob fired)" \
	test -e "$ROOT/died-once"
check "nsrd said the jobs may have been recorded" \
	grep -q "cannot record the jobs of 1 starting saves at once" \
	"$ROOT/logs/daemon.log"
nsr_wait_answers nsrjobd
jobs_of "$W/b" >"$W/jobs.b"
check "the save has one job, not two" \
	test "$(grep -c 'job state' "$W/jobs.b")" = 1
check "nsrd found it by its save set" \
	grep -q "save of .*:$W/b admitted: ssid [0-9]*, job [1-9]" \
	"$ROOT/logs/daemon.log"
check "and completed it, though nsrjobd's restart had marked it failed" \
	grep -q 'job state: COMPLETED' "$W/jobs.b"
n=$("$BIN/mminfo" -s $S -a -q "name=$W/b" -r ssid 2>/dev/null |
	awk '$1 ~ /^[0-9]+$/' | wc -l)
check "one save set, complete and recoverable" test "$n" = 1
"$BIN/recover" -s $S -a -d "$W/r" "$W/b" >"$W/r.out" 2>&1
check "recover gives it back" cmp "$W/b/f" "$W/r$W/b/f"

# --- a lost reply whose lookup fails too: looked for again at the end -----
rm -f "$ROOT/died-once" "$ROOT/query-failed"
"$BIN/save" -s $S -q "$W/d" >"$W/d.out" 2>&1
check "the save completes though nsrjobd died and then failed a query" \
	test $? = 0
check "nsrjobd died after recording the batch again (the knob fired)" \
	test -e "$ROOT/died-once"
check "and failed the lookup (the knob fired)" test -e "$ROOT/query-failed"
ssid=$("$BIN/mminfo" -s $S -a -q "name=$W/d" -r ssid 2>/dev/null |
	awk '$1 ~ /^[0-9]+$/ {print $1}')
check "nsrd said it cannot tell, and will look again" \
	grep -q "save set ${ssid:-x}: nsrjobd cannot say now whether its job was recorded: .*looked for again when the save ends" \
	"$ROOT/logs/daemon.log"
check "the save started without a job id" \
	grep -q "save of .*:$W/d admitted: ssid ${ssid:-x}, job 0" \
	"$ROOT/logs/daemon.log"
check "nsrd found the job when the save ended" \
	grep -q "save set ${ssid:-x}: its job [1-9][0-9]*, found by its save set, is completed with it" \
	"$ROOT/logs/daemon.log"
jobs_of "$W/d" >"$W/jobs.d"
check "the save has one job" test "$(grep -c 'job state' "$W/jobs.d")" = 1
check "complete" grep -q 'job state: COMPLETED' "$W/jobs.d"

nsr_done
