#!/bin/bash
# 320-label-template: nsrmm -l without a volume name takes the next name of
# the pool's label template (NSR label: fields, separator), records what
# comes next in the template, skips names the media database holds, and
# says so clearly when the template is used up.
. "$(dirname "$0")/lib.sh"
nsr_setup 320-label-template
S=127.0.0.1
nsr_start_datazone
admin() { "$BIN/nsradmin" -s $S -i - >/dev/null; }
for i in 1 2 3 4 5; do
	mkdir -p "$ROOT/a$i"
	nsr_device d$i adv_file "$ROOT/a$i"
done
host=$(hostname)

out=$("$BIN/nsrmm" -s $S -l -y -f d1 2>&1)
check "the Default pool's template gives $host.001" grep -q "Using volume name \`$host.001' for pool \`Default'" <<<"$out"
out=$("$BIN/nsrmm" -s $S -l -y -f d2 2>&1)
check "and then $host.002" grep -q "volume $host.002 " <<<"$out"

printf 'create type: NSR label; name: T; fields: Lab, a-b, 07-08; separator: _\ncreate type: NSR pool; name: P; label template: T\n' | admin
check "a volume named by hand in the template's range" \
	"$BIN/nsrmm" -s $S -q -l -y -b P -f d3 Lab_a_07
out=$("$BIN/nsrmm" -s $S -l -y -b P -f d4 2>&1)
check "the template skips the name in use: Lab_a_08" grep -q "volume Lab_a_08 " <<<"$out"
out=$(printf 'print type: NSR label; name: T\n' | "$BIN/nsradmin" -s $S -i -)
check "the template's next name is recorded (Lab_b_07)" grep -q "next: Lab_b_07;" <<<"$out"
# The next label starts at "next": a name freed below it is not taken
# again before the template's last name.
check "d3 relabeled by hand" "$BIN/nsrmm" -s $S -q -l -y -b Default -f d3 Other.001
check "volume Lab_a_07 deleted" "$BIN/nsrmm" -s $S -q -d -y Lab_a_07
vols=$("$BIN/mminfo" -s $S -m 2>/dev/null)
check "mminfo -m lists Lab_a_08 but no more Lab_a_07" \
	test -n "$(grep -w Lab_a_08 <<<"$vols")" -a -z "$(grep -w Lab_a_07 <<<"$vols")"
out=$("$BIN/nsrmm" -s $S -l -y -b P -f d3 2>&1)
check "the template goes on at Lab_b_07, not the freed Lab_a_07" \
	grep -q "volume Lab_b_07 " <<<"$out"

printf 'create type: NSR label; name: Tiny; fields: One, 1-1; separator: -\ncreate type: NSR pool; name: Q; label template: Tiny\n' | admin
check "a one-name template labels One-1" "$BIN/nsrmm" -s $S -q -l -y -b Q -f d5
out=$("$BIN/nsrmm" -s $S -l -y -b Q -f d5 2>&1 </dev/null); rc=$?
check "relabeling d5 with the template used up fails" test $rc -ne 0
check "saying the template is used up" grep -q "no free volume name left in the label template of pool 'Q'" <<<"$out"
nsr_done
