#!/bin/bash
# 423-stripe-timeout: the mover's two waits of a striped session end in
# a clean failure, not a hang.  The save never sends one data call
# (NSR_TEST_STRIPE_LOSE_CALL, as a connection that stalls for good) and
# the mover waits 2 s instead of 120 (NSR_TEST_STRIPE_WAIT_SEC):
#   - a small save: its last sync waits for the lost call ("did not
#     arrive on any connection of the session within 2 s");
#   - a large save whose syncs are 64 MB apart: the calls after the lost
#     one fill the reorder buffer (32 MB) and the next waits for its turn
#     ("waited 2 s for call 2 on another connection").
# Each time save exits non-zero saying its save set was aborted, nothing
# stays in progress, no partial session file is left, and the next
# striped save (nothing lost) completes and recovers identical.
. "$(dirname "$0")/lib.sh"
nsr_setup 423-stripe-timeout
S=127.0.0.1
W=$ROOT/work
export NSR_TEST_STRIPE_WAIT_SEC=2
nsr_start_aftd_datazone
mkdir -p "$W/small" "$W/large"
head -c 3000000 /dev/urandom >"$W/small/f"
head -c 80000000 /dev/urandom >"$W/large/f"

# lost NAME DIR MESSAGE [ENV...] - a striped save of DIR named NAME whose
# data call 2 is never sent fails within 60 s, the mover saying MESSAGE.
lost() {
	local name=$1 dir=$2 msg=$3 rc t0
	shift 3
	t0=$(date +%s)
	env NSR_TEST_STRIPE_LOSE_CALL=2 "$@" timeout 60 "$BIN/save" -s $S \
		--stripes=4 -N "$name" "$dir" >"$W/$name.out" 2>&1
	rc=$?
	check "$name: save fails (exit $rc) in $(( $(date +%s) - t0 )) s" \
		sh -c "[ $rc -ne 0 ] && [ $rc -ne 124 ]"
	sed 's/^/#   save: /' "$W/$name.out" | grep -v "^#   save: /" | tail -n 3
	check "$name: the mover says why" \
		grep -q "$msg" "$ROOT/logs/daemon.log"
	check "$name: save says its save set was marked aborted" \
		grep -q "save of $name failed; save set [0-9]* was marked aborted" \
		"$W/$name.out"
	check "$name: nothing is left in progress within 10 s" nsr_settled
	check "$name: the AFTD keeps no partial session file" \
		test -z "$(find "$W/aftd1" -name '*.part')"
	timeout 60 "$BIN/save" -s $S --stripes=4 -N "$name-next" "$dir" \
		>"$W/$name-next.out" 2>&1
	check "$name: the next striped save completes" test $? -eq 0
	check "$name: and recovers identical" recovers_identical "$dir" -S \
		"$("$BIN/mminfo" -s $S -a -q "name=$name-next" -r ssid 2>/dev/null |
			awk '$1 ~ /^[0-9]+$/ {s = $1} END {print s}')"
}

lost sync "$W/small" \
	"data call 2 did not arrive on any connection of the session within 2 s"
# a sync only every 64 MB (1 MB calls): the calls after the lost one
# fill the mover's reorder buffer (32 MB) before any sync waits
lost reorder "$W/large" \
	"waited 2 s for call 2 on another connection of the session" \
	NSR_TEST_MMD_WINDOW=67108864,4,1048576
nsr_done
