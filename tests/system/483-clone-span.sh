#!/bin/bash
# 483-clone-span: a clone larger than one volume of its pool continues on
# the next one.  A 4.6 MB save set on an AFTD is cloned to pool CSpan of
# three vtapes of 3 MB each: nsrclone says the first volume is full and
# where the copy went on; mminfo lists the new clone instance on two
# volumes (head and tail), the first marked full.  A second clone starts
# on the third volume, fills it and finds no volume left, because the
# only writable one holds a copy already (a save set gets at most one
# copy per volume): it fails saying so, the copy is aborted, and that
# volume still holds one copy.  With the original volume deleted, recover
# -S gives the tree back identical from the spanned clone.
. "$(dirname "$0")/lib.sh"
nsr_setup 483-clone-span
S=127.0.0.1
W=$ROOT/work
export NSR_TEST_VTAPE_CAPACITY=3145728
nsr_start_aftd_datazone

admin() { "$BIN/nsradmin" -s $S -i - >/dev/null; }
# copies SSID - "cloneid:clflags:volume" of each copy and volume.
copies() { "$BIN/mminfo" -s $S -a -q "ssid=$1" -xj -r cloneid,clflags,volume 2>/dev/null |
	tr -d '\n' | tr '}' '\n' |
	sed -nE 's/.*"cloneid": *"?([0-9]+)"?.*"clflags": *"([a-z]*)".*"volume": *"([^"]*)".*/\1:\2:\3/p'; }

echo 'create type: NSR pool; name: CSpan' | admin
for i in 1 2 3; do
	nsr_device tape$i vtape "$W/tape$i.vtape"
	check "label CS0$i (pool CSpan)" "$BIN/nsrmm" -s $S -q -l -y -b CSpan -f tape$i CS0$i
done

T=$W/tree
mkdir -p "$T/d"
head -c 2500000 /dev/urandom >"$T/d/one.bin"
head -c 2000000 /dev/urandom >"$T/two.bin"
seq 1 20000 >"$T/d/numbers"
check "save the tree to the AFTD" "$BIN/save" -s $S -q "$T"
ssid=$("$BIN/mminfo" -s $S -a -q "name=$T" -r ssid 2>/dev/null | awk '$1 ~ /^[0-9]+$/ {print $1; exit}')
check "it is in the media database ($ssid)" test -n "$ssid"
ssid=${ssid:-0}

out=$("$BIN/nsrclone" -s $S -b CSpan -v -S $ssid 2>&1)
check "nsrclone of a save set larger than a volume succeeds" test $? -eq 0
echo "$out" | sed 's/^/# /'
check "it says the first volume is full and where the copy went on" \
	grep -Eq "volume CS0[1-3] is full, the copy goes on on volume CS0[1-3]" <<<"$out"
check "and that the copy is on two volumes" \
	grep -Eq "cloned to volumes CS0[1-3] to CS0[1-3] \(2\)" <<<"$out"
c=$(copies $ssid); echo "$c" | sed 's/^/# copies: /'
clone=$(grep -v ':Disk.001$' <<<"$c" | cut -d: -f1 | sort -u)
check "one new clone instance ($clone)" test "$(wc -w <<<"$clone")" -eq 1
check "on two volumes of CSpan" test "$(grep -c "^$clone::CS0" <<<"$c")" -eq 2
rows=$("$BIN/mminfo" -s $S -a -q "ssid=$ssid" -r cloneid,volume,sumflags 2>/dev/null)
echo "$rows" | sed 's/^/# mminfo: /'
check "its head on one" grep -Eq "^ *$clone +CS0[1-3] +h" <<<"$rows"
check "its tail on the other" grep -Eq "^ *$clone +CS0[1-3] +t" <<<"$rows"
headvol=$(awk -v c="$clone" '$1 == c && $3 ~ /^h/ {print $2}' <<<"$rows")
tailvol=$(awk -v c="$clone" '$1 == c && $3 ~ /^t/ {print $2}' <<<"$rows")
full=$("$BIN/mminfo" -s $S -a -q "volume=${headvol:-none},full" -r volume 2>&1)
check "the head's volume ${headvol:-none} is marked full" grep -Eq "^ *${headvol:-none} *$" <<<"$full"

# A second copy: the third volume fills, and the only writable volume
# left (the tail's) holds a copy already.
out=$("$BIN/nsrclone" -s $S -b CSpan -S $ssid 2>&1)
rc=$?
echo "$out" | sed 's/^/# /'
check "a second clone with no volume left fails (exit $rc)" test $rc -ne 0
check "... saying why and what to do" \
	grep -q "no writable volume of pool 'CSpan' left for save set $ssid (volumes that hold part or a copy of it do not count): label one" <<<"$out"
c=$(copies $ssid); echo "$c" | sed 's/^/# copies: /'
check "the tail's volume ${tailvol:-none} still holds one copy" \
	test "$(grep -c ":${tailvol:-none}$" <<<"$c")" -eq 1
check "no copy is left in progress (clflags i alone)" test -z "$(grep ":i:" <<<"$c")"
check "the failed copy is aborted (clflags a)" grep -qE "^[0-9]+:[a-z]*a[a-z]*:" <<<"$c"

# The original volume gone: recover from the spanned clone.
check "nsrmm -d Disk.001" "$BIN/nsrmm" -s $S -q -d -y Disk.001
rm -rf "$W/out"
out=$("$BIN/recover" -s $S -f -d "$W/out" -S $ssid 2>&1)
check "recover -S $ssid succeeds" test $? -eq 0
echo "$out" | sed 's/^/# recover: /' | head -5
check "... identical" "$BIN/nsrtreecmp" "$T" "$W/out$T"
check "... saying it uses clone $clone" grep -q "using clone $clone on volume" <<<"$out"
nsr_done
