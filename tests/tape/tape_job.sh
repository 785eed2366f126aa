#!/bin/sh
# tape_job.sh - tapelab job (runs INSIDE the guest, see README.md): the
# media library's tape driver against the real Linux st driver.
#   /dev/nst0        main checks (label, multiplexing, segments, append,
#                    positioned read, scan, relabel protection)
#   /dev/nst1, nst2  hot-added small tape (EOM_TAPE_MB, default 64) and a
#                    second tape for the spanning continuation
# Env from run-guest.sh: TAPE, OUT, TGTBIN.  Exit status 0 = all passed.
set -u
EOM_TAPE_MB=${EOM_TAPE_MB:-64}
R="$OUT/tape_check.txt"
: > "$R"

add_tape() { # add_tape LUN BARCODE MB
	$TGTBIN/tgtimg --op new --device-type tape --barcode "$2" --size "$3" \
		--type data --file "/tape/$2" >/dev/null &&
	$TGTBIN/tgtadm --lld iscsi --mode logicalunit --op new --tid 1 \
		--lun "$1" --device-type tape --bstype ssc \
		--backing-store "/tape/$2" &&
	iscsiadm -m session --rescan >/dev/null
}

add_tape 2 NSREOM01 "$EOM_TAPE_MB"
add_tape 3 NSREOM02 256
i=0
while { [ ! -c /dev/nst1 ] || [ ! -c /dev/nst2 ]; } && [ $i -lt 300 ]; do
	sleep 0.1; i=$((i + 1))
done
dmesg | grep -E 'st[0-9]|limits' | tail -8 > "$OUT/dmesg-st.txt"
if [ -c /dev/nst1 ] && [ -c /dev/nst2 ]; then
	./tape_check "$TAPE" /dev/nst1 /dev/nst2 2>&1 | tee -a "$R"
else
	echo "SKIP eom: /dev/nst1 or /dev/nst2 did not appear" | tee -a "$R"
	./tape_check "$TAPE" 2>&1 | tee -a "$R"
fi
grep -q ' 0 failed$' "$R"
