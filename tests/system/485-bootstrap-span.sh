#!/bin/bash
# 485-bootstrap-span: a bootstrap larger than one volume.  nsrbootstrap
# writes to pool Boot of small vtapes (96 KB each, 32 KB blocks) and the
# bootstrap spans several of them; mminfo lists its pieces.  After the
# server is lost, nsrdr with only the first volume says the bootstrap is
# not whole there and to give the others; nsrdr -l with all of them
# lists it whole; nsrdr with every volume, given in any order, recovers
# the server: mminfo -avot and a browse equal what they were, the
# bootstrap's fragments on every volume, and a file recovers.
. "$(dirname "$0")/lib.sh"
nsr_setup 485-bootstrap-span
S=127.0.0.1
W=$(mktemp -d "${NSR_TEST_TMPDIR:-/tmp}/485-work.XXXXXX")
OLD=$ROOT
C=$(hostname)
export NSR_TEST_VTAPE_CAPACITY=98304
nsr_start_aftd_datazone
echo 'create type: NSR pool; name: Boot' | "$BIN/nsradmin" -s $S -i - >/dev/null
for i in 1 2 3 4 5 6; do
	nsr_device tape$i vtape "$W/tape$i.vtape"
	check "label BOOT0$i (32 KB blocks)" "$BIN/nsrmm" -s $S -q -l -y -b Boot -f tape$i -z 32k BOOT0$i
done

mkdir -p "$W/t/d"
printf 'one\n' >"$W/t/a"
head -c 200000 /dev/urandom >"$W/t/d/blob"
check "save a tree to the AFTD" "$BIN/save" -s $S -q "$W/t"
"$BIN/nsrbootstrap" -s $S -b Boot >"$W/boot.out" 2>&1
check "nsrbootstrap to pool Boot" test $? -eq 0
sed 's/^/# /' "$W/boot.out"
BOOT=$(sed -n 's/.*bootstrap save set \([0-9]*\) of.*/\1/p' "$W/boot.out")
rows=$("$BIN/mminfo" -s $S -a -q "ssid=${BOOT:-0}" -r volume,sumflags 2>/dev/null)
echo "$rows" | sed 's/^/# mminfo: /'
vols=$(awk '$1 ~ /^BOOT0/ {print $1}' <<<"$rows")
nvol=$(wc -w <<<"$vols")
check "the bootstrap spans volumes ($nvol)" test "$nvol" -ge 2
"$BIN/mminfo" -s $S -avot >"$W/before.mminfo" 2>&1
printf 'cd %s\nls\ncd d\nls\n' "$W/t" | "$BIN/recover" -s $S -c "$C" >"$W/before.browse" 2>&1

nsr_stop_all
ROOT=$(mktemp -d "${NSR_TEST_TMPDIR:-/tmp}/485-new.XXXXXX")
export NSR_ROOT=$ROOT
devs=()
for v in $vols; do devs+=(-d "$W/tape${v#BOOT0}.vtape"); done
"$BIN/nsrdr" -R "$ROOT" -d "$W/tape1.vtape" >"$W/dr1.out" 2>&1
rc=$?
sed 's/^/# /' "$W/dr1.out"
check "nsrdr with the first volume alone fails (exit $rc)" test $rc = 1
check "saying to give every volume it spans" grep -q "one that spans needs every volume it is on, -d each" "$W/dr1.out"
# more volumes than nsrdr takes: a usage error that says the limit
many=()
for i in $(seq 17); do many+=(-d "$W/tape1.vtape"); done
"$BIN/nsrdr" -R "$ROOT" "${many[@]}" >"$W/dr17.out" 2>&1
rc=$?
check "nsrdr with -d 17 times is a usage error (exit $rc)" test $rc = 2
check "saying at most 16 devices" grep -q "at most 16 devices (-d)" "$W/dr17.out"
"$BIN/nsrdr" -l "${devs[@]}" >"$W/list.out" 2>&1
check "nsrdr -l with all of them lists it whole" grep -q "ssid ${BOOT:-0}  client $C  whole\$" "$W/list.out"
# every volume, the last first
rev=()
for (( i=${#devs[@]}-2; i>=0; i-=2 )); do rev+=(-d "${devs[$((i+1))]}"); done
"$BIN/nsrdr" -R "$ROOT" "${rev[@]}" >"$W/dr.out" 2>&1
rc=$?
sed 's/^/# /' "$W/dr.out"
check "nsrdr with every volume, in reverse order: exit 0 (got $rc)" test $rc = 0
nsr_start_datazone
"$BIN/mminfo" -s $S -avot >"$W/after.mminfo" 2>&1
printf 'cd %s\nls\ncd d\nls\n' "$W/t" | "$BIN/recover" -s $S -c "$C" >"$W/after.browse" 2>&1
check "mminfo -avot equals what it was" cmp "$W/before.mminfo" "$W/after.mminfo"
diff "$W/before.mminfo" "$W/after.mminfo" | head -10 | sed 's/^/# /'
check "the browse equals what it was" cmp "$W/before.browse" "$W/after.browse"
rows2=$("$BIN/mminfo" -s $S -a -q "ssid=${BOOT:-0}" -r volume 2>/dev/null | awk '$1 ~ /^BOOT0/' | sort | tr '\n' ' ')
check "the bootstrap's fragments are on every volume it spans" test "$rows2" = "$(sort <<<"$vols" | tr '\n' ' ')"
check "a file recovers" recovers_identical "$W/t"
if [ "$FAILED" = 0 ] && [ -z "${NSR_KEEP:-}" ]; then
	rm -rf "$W" "$OLD"
fi
nsr_done
