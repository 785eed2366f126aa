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
# Mount requests: a clone to a pool with no writable volume waits, says
# so (nsrclone, daemon.log) and goes on once a volume is labeled; a
# clone of the copy on an unmounted volume (-S ssid/cloneid) waits the
# same way until it is mounted again.  (482-clone has the mount timeout.)
. "$(dirname "$0")/lib.sh"
nsr_setup 483-clone-span
S=127.0.0.1
W=$ROOT/work
export NSR_TEST_VTAPE_CAPACITY=3145728
export NSR_MOUNT_TIMEOUT_SEC=120
nsr_start_aftd_datazone
# ended PID - until process PID has ended (<= 30 s); its exit status.
ended() {
	for _ in $(seq 1 300); do
		kill -0 "$1" 2>/dev/null || break
		sleep 0.1
	done
	wait "$1"
}

admin() { "$BIN/nsradmin" -s $S -i - >/dev/null; }

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
c=$(nsr_copies $ssid); echo "$c" | sed 's/^/# copies: /'
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
c=$(nsr_copies $ssid); echo "$c" | sed 's/^/# copies: /'
check "the tail's volume ${tailvol:-none} still holds one copy" \
	test "$(grep -c ":${tailvol:-none}$" <<<"$c")" -eq 1
check "no copy is left in progress (clflags i alone)" test -z "$(grep ":i:" <<<"$c")"
check "the failed copy is aborted (clflags a)" grep -qE "^[0-9]+:[a-z]*a[a-z]*:" <<<"$c"

# --- mount requests --------------------------------------------------------
T2=$W/small
mkdir -p "$T2"
head -c 400000 /dev/urandom >"$T2/s.bin"
check "save a small tree to the AFTD" "$BIN/save" -s $S -q "$T2"
s2=$("$BIN/mminfo" -s $S -a -q "name=$T2" -r ssid 2>/dev/null | awk '$1 ~ /^[0-9]+$/ {print $1; exit}')
s2=${s2:-0}
echo 'create type: NSR pool; name: CWait' | admin
nsr_device tape4 vtape "$W/tape4.vtape"
nsr_device tape5 vtape "$W/tape5.vtape"
"$BIN/nsrclone" -s $S -b CWait -S $s2 >"$W/wait1.out" 2>&1 &
cpid=$!
check "a clone to a pool with no volume waits, saying why" \
	nsr_wait_logged "$W/wait1.out" "waiting: .*no writable volume of pool 'CWait'"
check "daemon.log has the mount request" \
	nsr_wait_logged "$ROOT/logs/daemon.log" "mount request [0-9]*: the clone of .*:save set $s2 waits for a writable volume of pool CWait"
check "label CW01 (pool CWait) while it waits" "$BIN/nsrmm" -s $S -q -l -y -b CWait -f tape4 CW01
ended $cpid
check "the waiting clone completes" test $? -eq 0
sed 's/^/# /' "$W/wait1.out"
check "its copy is on CW01" grep -q "::CW01$" <<<"$(nsr_copies $s2)"

check "label CW02 (pool CWait)" "$BIN/nsrmm" -s $S -q -l -y -b CWait -f tape5 CW02
check "unmount Disk.001" "$BIN/nsrmm" -s $S -q -u -f aftd1
orig2=$(grep '::Disk.001$' <<<"$(nsr_copies $s2)" | cut -d: -f1)
"$BIN/nsrclone" -s $S -b CWait -S $s2/${orig2:-0} >"$W/wait2.out" 2>&1 &
cpid=$!
check "a clone of the copy on an unmounted volume waits for it" \
	nsr_wait_logged "$W/wait2.out" "waiting: volume Disk.001 \(holding save set $s2\) is not mounted; mount it with: nsrmm -m Disk.001"
check "daemon.log has that mount request" \
	nsr_wait_logged "$ROOT/logs/daemon.log" "mount request [0-9]*: the clone of save set $s2 for .* waits for volume Disk.001"
check "mount Disk.001 again" "$BIN/nsrmm" -s $S -q -m -f aftd1 Disk.001
ended $cpid
check "then the clone completes" test $? -eq 0
sed 's/^/# /' "$W/wait2.out"
check "its copy is on CW02" grep -q "::CW02$" <<<"$(nsr_copies $s2)"
check "recover -S $s2 from the CW02 copy" recovers_identical "$T2" -S "$s2/$(grep '::CW02$' <<<"$(nsr_copies $s2)" | cut -d: -f1)"

# The original volume gone: recover from the spanned clone.
check "nsrmm -d Disk.001" "$BIN/nsrmm" -s $S -q -d -y Disk.001
rm -rf "$W/out"
out=$("$BIN/recover" -s $S -f -d "$W/out" -S $ssid 2>&1)
check "recover -S $ssid succeeds" test $? -eq 0
echo "$out" | sed 's/^/# recover: /' | head -5
check "... identical" "$BIN/nsrtreecmp" "$T" "$W/out$T"
check "... saying it uses clone $clone" grep -q "using clone $clone on volume" <<<"$out"
nsr_done
