#!/bin/bash
# 356-pss-master-ends: a PSS dependent named in its master while the
# master ends.  nsrd names a dependent in the master's record by reading
# the record, adding the dependent and writing it back (under its RPC
# mutex), and ends a save set the same way (SAVE_END's database work,
# without that mutex); the two once met, and the end wrote the master
# back without the new dependent (or the naming wrote it back in
# progress, which recover then refused).  Here each dependent starts 1 s
# late (NSR_TEST_PSS_DEP_DELAY_MS), after its master's stream ended, and
# SAVE_END holds 3 s between its read and its write
# (NSR_TEST_SS_END_DELAY_MS), so the namings fall inside the master's
# end: afterwards the master is complete, names both dependents, and the
# save point recovers identical, three times over.  (Without the record
# lock the master names none.)
. "$(dirname "$0")/lib.sh"
nsr_setup 356-pss-master-ends
S=127.0.0.1
W=$ROOT/work
T=$W/sp
export NSR_TEST_PSS_DEP_DELAY_MS=1000 NSR_TEST_SS_END_DELAY_MS=3000
nsr_start_aftd_datazone
mkdir -p "$T/a" "$T/b" "$T/c"
printf 'tiny\n' >"$T/a/first"
for i in 1 2 3 4; do head -c 400000 /dev/urandom >"$T/b/f$i"; done
for i in $(seq 1 20); do printf 'small %s\n' "$i" >"$T/c/s$i"; done

for round in 1 2 3; do
	"$BIN/save" -s $S --pss=3 -l full "$T" >"$W/save$round.out" 2>&1
	check "round $round: save --pss=3 exits 0" test $? -eq 0
	M=$("$BIN/mminfo" -s $S -a -q "name=$T" -ot -r ssid 2>/dev/null |
		awk '$1 ~ /^[0-9]+$/ {s = $1} END {print s}')
	flags=$("$BIN/mminfo" -s $S -a -q "ssid=${M:-0}" -r sumflags \
		2>/dev/null | tail -n 1 | tr -d ' ')
	check "round $round: the master ($M) is complete (sumflags '$flags')" \
		test "$flags" = cb
	check "round $round: nothing is left in progress" nsr_settled
	check "round $round: the master names its two dependents" \
		grep -Eq "dependents=[0-9]+,[0-9]+( |$)" \
		<<<"$("$BIN/mminfo" -s $S -a -S -q "ssid=${M:-0}" 2>/dev/null)"
	check "round $round: the save point recovers identical" \
		recovers_identical "$T" -S "${M:-0}"
done
nsr_done
