#!/bin/bash
# 481-bootstrap-savegrp: nsrd saves a bootstrap after each group run.  A
# group of one client runs (savegrp, on the test clock); once the run has
# ended, nsrd starts nsrbootstrap, and mminfo -B lists a bootstrap of the
# server saved after the client's save set; jobquery shows its bootstrap
# save job.  A second run gives a second bootstrap.  savegrp -O saves the
# bootstrap only (no client save set), and its run's job ends with it;
# -O -n says so and does nothing.
. "$(dirname "$0")/lib.sh"
nsr_setup 481-bootstrap-savegrp
S=127.0.0.1
W=$ROOT/work
C=$(hostname)
mkdir -p "$W/data"
export NSR_TEST_CLOCK=$W/clock
export NSR_SCHED_STAGGER_MS=20
export NSR_MOUNT_TIMEOUT_SEC=3 # the last run's bootstrap finds no volume
echo 0 >"$NSR_TEST_CLOCK"
NSR_EXECD_ARGS=(-S localhost -S $S -S "$C")
nsr_start_aftd_datazone
echo hello >"$W/data/f"

printf '%s\n' "create type: NSR group; name: G1" \
	"create type: NSR client; name: $C; group: G1; save set: $W/data" |
	"$BIN/nsradmin" -s $S -i - >/dev/null 2>"$W/nsradmin.err"
check "group and client created" test $? = 0

# boots N - wait (<= 60 s) until mminfo -B lists N bootstraps.
boots() {
	local i
	for i in $(seq 1 300); do
		"$BIN/mminfo" -s $S -B >"$W/mmB.out" 2>&1
		[ "$(grep -c ' full ' "$W/mmB.out")" -ge "$1" ] && return 0
		sleep 0.2
	done
	sed 's/^/# /' "$W/mmB.out"
	return 1
}

timeout 300 "$BIN/savegrp" -s $S -l full G1 >"$W/g1.out" 2>&1
check "savegrp G1 exits 0" test $? = 0
check "a bootstrap is listed by mminfo -B after the run" boots 1
check "nsrd logged that it started it after G1" \
	nsr_wait_logged "$ROOT/logs/daemon.log" "group G1: bootstrap save started"
check "no pass phrase is set: the bootstrap warns that it is in clear" \
	nsr_wait_logged "$ROOT/logs/daemon.log" \
	"nsrbootstrap: warning: no datazone pass phrase is set, so the bootstrap is saved in clear"
"$BIN/mminfo" -s $S -a -q "client=$C" -ot -r "name(250),level,client" >"$W/order.out" 2>&1
check "the bootstrap comes after the client's save set" \
	test "$(awk 'NR > 1 {print $1}' "$W/order.out" | tail -1)" = bootstrap
check "it is the server's, at level full" \
	grep -q "^bootstrap *full *$C\$" "$W/order.out"

printf 'print type: bootstrap save job\n' | "$BIN/jobquery" -s $S >"$W/jobs.out" 2>&1
check "its job is a completed bootstrap save job" \
	grep -qi "bootstrap save completed (no file index entries" "$W/jobs.out"

echo more >"$W/data/g"
timeout 300 "$BIN/savegrp" -s $S G1 >"$W/g2.out" 2>&1
check "savegrp G1 again exits 0" test $? = 0
check "a second bootstrap after the second run" boots 2

# savegrp -O: the bootstrap only, no client save, followed as a run.
nss() { "$BIN/mminfo" -s $S -a -q "client=$C" -r ssid 2>/dev/null |
	grep -c '^ *[0-9]'; }
before=$(nss)
timeout 60 "$BIN/savegrp" -s $S -O -n G1 >"$W/gO-n.out" 2>&1
check "savegrp -O -n exits 0" test $? = 0
check "saying only the bootstrap would be saved" \
	grep -q "would save only the bootstrap" "$W/gO-n.out"
timeout 300 "$BIN/savegrp" -s $S -O G1 >"$W/gO.out" 2>&1
check "savegrp -O G1 exits 0" test $? = 0
check "its job succeeded" grep -q "savegrp: group job [0-9]* succeeded" \
	"$W/gO.out"
check "a third bootstrap" boots 3
check "and no other save set" test "$(nss)" = $(( before + 1 ))
check "nsrd logged the end of the -O run" nsr_wait_logged \
	"$ROOT/logs/daemon.log" "group G1: savegrp -O ended: bootstrap saved"

# savegrp -O whose nsrbootstrap fails: no volume to write to (the mount
# request times out), the run's job fails with nsrbootstrap's exit.
check "unmount Disk.001" "$BIN/nsrmm" -s $S -q -u -f aftd1
timeout 300 "$BIN/savegrp" -s $S -O G1 >"$W/gOf.out" 2>&1
rc=$?
sed 's/^/# /' "$W/gOf.out" | tail -5
check "savegrp -O with nowhere to save the bootstrap fails (exit $rc)" \
	test $rc -ne 0
check "its job failed" grep -q "savegrp: group job [0-9]* failed" \
	"$W/gOf.out"
check "nsrd logged nsrbootstrap's exit" nsr_wait_logged \
	"$ROOT/logs/daemon.log" "group G1: savegrp -O ended: nsrbootstrap exited 1: see daemon.log"
check "still three bootstraps" boots 3
nsr_done
