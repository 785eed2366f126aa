#!/bin/bash
# 462-savegrp-restart: savegrp -R runs again only what the group's last
# run did not save.  Group G1 has this host (saves) and ghost.invalid
# (cannot be reached); a run at level 5 fails for ghost only.  savegrp
# -R -n previews ghost.invalid alone, at level 5 (the level it ran at),
# naming the run it restarts; -R -c of the client that saved runs
# nothing, saying so; -R with -l is refused as usage; savegrp -R
# runs ghost.invalid alone (its run's job holds one client job and says
# whose restart it is); while a run is under way -R is refused.  With ghost.invalid taken out of the group, -R
# says so and runs nothing (exit 0); after a run that saves every client,
# -R says there is nothing to restart; a group that never ran has no run
# to restart.
. "$(dirname "$0")/lib.sh"
nsr_setup 462-savegrp-restart
S=127.0.0.1
W=$ROOT/work
C=$(hostname)
mkdir -p "$W/data"
export NSR_SCHED_STAGGER_MS=20
export NSR_SCHED_RETRY_SEC=1
NSR_EXECD_ARGS=(-S localhost -S $S -S "$C")
nsr_start_aftd_datazone
echo hello >"$W/data/f"
printf '%s\n' "create type: NSR group; name: G1; client retries: 0" \
	"create type: NSR group; name: G2" \
	"create type: NSR client; name: $C; group: G1; save set: $W/data" \
	"create type: NSR client; name: ghost.invalid; group: G1; save set: /x" |
	"$BIN/nsradmin" -s $S -i - >"$W/nsradmin.out" 2>&1
check "groups and clients created" test $? = 0

# kids JOB - "client level state" of each client job of run JOB.
kids() {
	printf '. type: save job; parent job id: %s\nshow client; level; job state\nprint\n' "$1" |
		"$BIN/jobquery" -s $S 2>/dev/null |
		awk -F': *' '/client:/ {c = $2} /level:/ {l = $2}
			/job state:/ {print c, l, $2}' | tr -d ';'
}

timeout 120 "$BIN/savegrp" -s $S -l 5 G1 >"$W/run1.out" 2>&1
check "the first run fails for a client (exit $?)" test $? = 1
RUN1=$(sed -n 's/.*started (job \([0-9]*\)).*/\1/p' "$W/run1.out")
check "it says its job" test -n "$RUN1"

timeout 60 "$BIN/savegrp" -s $S -R -n G1 >"$W/pre.out" 2>&1
check "savegrp -R -n exits 0" test $? = 0
sed 's/^/# -R -n: /' "$W/pre.out"
check "it names the run it restarts" \
	grep -q "a restart of job $RUN1" "$W/pre.out"
check "and plans ghost.invalid at level 5" \
	grep -Eq "^ghost.invalid +5 +/x" "$W/pre.out"
check "and not the client that saved" sh -c "! grep -q '^$C ' '$W/pre.out'"

timeout 60 "$BIN/savegrp" -s $S -R -c "$C" G1 >"$W/pre-c.out" 2>&1
check "-R -c naming a client that saved exits 0" test $? = 0
check "saying none of those named was left unsaved, and runs nothing" \
	sh -c "grep -q 'none of the clients named was left unsaved by the last run of group G1 (job $RUN1)' '$W/pre-c.out' &&
		! grep -q 'restarted (job' '$W/pre-c.out'"

"$BIN/savegrp" -s $S -R -l full G1 >"$W/usage.out" 2>&1
check "-R with -l is a usage error (exit $?)" test $? = 2

timeout 120 "$BIN/savegrp" -s $S -R G1 >"$W/run2.out" 2>&1
check "savegrp -R runs and ghost.invalid fails again (exit $?)" test $? = 1
sed 's/^/# -R: /' "$W/run2.out"
RUN2=$(sed -n 's/.*restarted (job \([0-9]*\), a restart of job \([0-9]*\)).*/\1/p' "$W/run2.out")
check "it says its job and the job it restarts" \
	grep -q "restarted (job [0-9]*, a restart of job $RUN1)" "$W/run2.out"
k=$(kids "${RUN2:-0}")
echo "$k" | sed 's/^/# run 2 client jobs: /'
check "the restart ran ghost.invalid alone, at level 5" \
	test "$k" = "ghost.invalid 5 FAILED"
printf '. job id: %s\nshow job id; job log\nprint\n' "${RUN2:-0}" |
	"$BIN/jobquery" -s $S >"$W/log2.out" 2>&1
check "its job log says whose restart it is" \
	grep -q "savegrp -R: a restart of job $RUN1" "$W/log2.out"

# While a run is under way there is nothing to restart yet.
printf '%s\n' ". type: NSR group; name: G1" "update client retries: 3" |
	"$BIN/nsradmin" -s $S -i - >/dev/null 2>&1
timeout 120 "$BIN/savegrp" -s $S G1 >"$W/busy.out" 2>&1 &
BG=$!
for i in $(seq 1 100); do
	grep -q "started (job" "$W/busy.out" 2>/dev/null && break
	sleep 0.1
done
"$BIN/savegrp" -s $S -R G1 >"$W/busy-r.out" 2>&1
rc=$?
check "-R while the group runs fails (exit $rc)" test $rc = 3
check "saying the last run has not ended" \
	grep -q "the last run of group G1 (job [0-9]*) has not ended" \
	"$W/busy-r.out"
wait $BG
printf '%s\n' ". type: NSR group; name: G1" "update client retries: 0" |
	"$BIN/nsradmin" -s $S -i - >/dev/null 2>&1

printf '%s\n' ". type: NSR client; name: ghost.invalid" "update group: G2" |
	"$BIN/nsradmin" -s $S -i - >/dev/null 2>&1
timeout 60 "$BIN/savegrp" -s $S -R G1 >"$W/run3.out" 2>&1
check "with ghost.invalid out of the group, -R exits 0" test $? = 0
check "saying it is no longer in the group" \
	grep -q "client ghost.invalid is no longer in group G1: not restarted" \
	"$W/run3.out"
check "and starts no run" sh -c "! grep -q 'restarted (job' '$W/run3.out'"

timeout 120 "$BIN/savegrp" -s $S G1 >"$W/run4.out" 2>&1
check "a run of G1 saves its one client (exit $?)" test $? = 0
timeout 60 "$BIN/savegrp" -s $S -R G1 >"$W/run5.out" 2>&1
check "then -R exits 0" test $? = 0
check "with nothing to restart" \
	grep -q "saved every client: nothing to restart" "$W/run5.out"
timeout 60 "$BIN/savegrp" -s $S -R G2 >"$W/run6.out" 2>&1
check "a group that never ran: -R exits 0" test $? = 0
check "saying there is no run to restart" \
	grep -q "group G2 has no run to restart" "$W/run6.out"
nsr_done
