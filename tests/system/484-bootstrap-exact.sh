#!/bin/bash
# 484-bootstrap-exact: a save that ends while a bootstrap is taken.  The
# bootstrap's media database snapshot comes before its copy of the
# client file indexes; a save ends between the two
# (NSR_TEST_BOOT_STALL_SEC), so the copied index holds a save set the
# snapshot does not hold complete.  After the server is lost, nsrdr from
# that bootstrap takes it out of the restored index and says so, and
# names it as newer than the bootstrap: mminfo and the browse agree
# (nsrck -m finds nothing), the save before the bootstrap recovers, and
# scanner -m -i -S brings the later one back, browsable.
. "$(dirname "$0")/lib.sh"
nsr_setup 484-bootstrap-exact
S=127.0.0.1
W=$(mktemp -d "${NSR_TEST_TMPDIR:-/tmp}/484-work.XXXXXX")
OLD=$ROOT
C=$(hostname)
nsr_start_aftd_datazone

mkdir -p "$W/a" "$W/b"
printf 'before the bootstrap\n' >"$W/a/one"
printf 'during the bootstrap\n' >"$W/b/two"
check "save tree a" "$BIN/save" -s $S -q "$W/a"
NSR_TEST_BOOT_STALL_SEC=6 "$BIN/nsrbootstrap" -s $S >"$W/boot.out" 2>&1 &
bpid=$!
check "the bootstrap took its media database snapshot" \
	nsr_wait_logged "$W/boot.out" "media database snapshot \\(commit"
check "save tree b while the bootstrap waits" "$BIN/save" -s $S -q "$W/b"
sb=$("$BIN/mminfo" -s $S -a -q "name=$W/b" -r ssid 2>/dev/null | awk '$1 ~ /^[0-9]+$/ {print $1; exit}')
check "it is complete in the media database ($sb)" test -n "$sb"
wait $bpid
check "the bootstrap ends well" test $? -eq 0
sed 's/^/# /' "$W/boot.out"
"$BIN/nsrinfo" -s $S "$C" >"$W/before.info" 2>&1
check "before the loss, the index lists b's file" grep -q "^$W/b/two, " "$W/before.info"

# The loss: stop everything, a new root, nsrdr from the bootstrap.
nsr_stop_all
ROOT=$(mktemp -d "${NSR_TEST_TMPDIR:-/tmp}/484-new.XXXXXX")
export NSR_ROOT=$ROOT
"$BIN/nsrdr" -R "$ROOT" -d "$W/aftd1" >"$W/dr.out" 2>&1
rc=$?
sed 's/^/# /' "$W/dr.out"
check "nsrdr exits 0 (got $rc)" test $rc = 0
check "it takes save set ${sb:-none} out of the restored index" \
	grep -q "save set ${sb:-none} of client $C taken out of its index" "$W/dr.out"
check "and names it as newer than the bootstrap" \
	grep -q "save set ${sb:-none} .* is newer than the bootstrap: .*scanner -m -S ${sb:-none}" "$W/dr.out"

nsr_start_datazone
"$BIN/nsrck" -q -m -s $S -R "$ROOT" >"$W/ck.out" 2>&1
rc=$?
sed 's/^/# /' "$W/ck.out"
check "nsrck -m: index and media database agree (exit $rc)" test $rc = 0
"$BIN/nsrinfo" -s $S "$C" >"$W/after.info" 2>&1
check "the index lists a's file" grep -q "^$W/a/one, " "$W/after.info"
check "and not b's" test "$(grep -c "^$W/b/two, " "$W/after.info")" = 0
check "mminfo does not list b" \
	test -z "$("$BIN/mminfo" -s $S -a -q "name=$W/b" -r ssid 2>/dev/null | awk '$1 ~ /^[0-9]+$/')"
check "a recovers" recovers_identical "$W/a"
check "scanner -m -i -S ${sb:-0} adds b back" \
	"$BIN/scanner" -q -m -i -S "${sb:-0}" -s $S "$W/aftd1"
"$BIN/nsrinfo" -s $S "$C" >"$W/scanned.info" 2>&1
check "then the index lists b's file" grep -q "^$W/b/two, " "$W/scanned.info"
check "and b recovers" recovers_identical "$W/b"
if [ "$FAILED" = 0 ] && [ -z "${NSR_KEEP:-}" ]; then
	rm -rf "$W" "$OLD"
fi
nsr_done
