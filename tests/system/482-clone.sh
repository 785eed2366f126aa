#!/bin/bash
# 482-clone: cloning and staging.  A save set on an AFTD is cloned with
# nsrclone to a vtape of pool Clone; mminfo lists both copies (each its
# own clone id); a second clone to the same volume is refused, further
# copies go to the pool's volumes that hold none, one each; staging
# (nsrstage -m) of another save set from the AFTD to a vtape of pool
# Stage leaves one copy and frees the AFTD bytes (the written figure
# drops, the session file goes); the AFTD volume is deleted from the
# media database and recover -S gives the first tree back identical from
# the clone, saying which copy it uses, and recover -S ssid/cloneid reads
# a named copy; when the original's data cannot be read (its AFTD file
# removed) recover asks for another copy and says so, also for that save
# set alone when it is read in one pass with another; a clone of an
# unknown save set and a clone to a pool
# without a writable volume fail with clear words and a non-zero exit;
# SIGKILL of nsrclone in the middle of a clone leaves the original intact
# and, once nsrd settled it, no clone in progress (the new copy aborted).
. "$(dirname "$0")/lib.sh"
nsr_setup 482-clone
S=127.0.0.1
W=$ROOT/work
mkdir -p "$W/aftd1"
export NSR_LEASE_SEC=20
export NSR_MOUNT_TIMEOUT_SEC=3 # a clone to a pool without volumes
nsr_start_aftd_datazone

admin() { "$BIN/nsradmin" -s $S -i - >/dev/null; }
ssid_of() { "$BIN/mminfo" -s $S -a -q "name=$1" -r ssid 2>/dev/null | awk '$1 ~ /^[0-9]+$/ {print $1; exit}'; }
written() { "$BIN/mminfo" -s $S -xj -r written "$1" 2>/dev/null | grep -o '"written": *[0-9]*' | grep -o '[0-9]*$'; }

for p in Clone Stage Empty; do echo "create type: NSR pool; name: $p" | admin; done
nsr_device tape1 vtape "$W/tape1.vtape"
nsr_device tape2 vtape "$W/tape2.vtape"
check "label CL01 (pool Clone)" "$BIN/nsrmm" -s $S -q -l -y -b Clone -f tape1 CL01
check "label ST01 (pool Stage)" "$BIN/nsrmm" -s $S -q -l -y -b Stage -f tape2 ST01

T1=$W/one T2=$W/two T3=$W/three
mkdir -p "$T1/d" "$T2" "$T3"
head -c 3000000 /dev/urandom >"$T1/d/a.bin"
seq 1 50000 >"$T1/numbers"
ln -s d/a.bin "$T1/link"
head -c 2000000 /dev/urandom >"$T2/b.bin"
head -c 40000000 /dev/urandom >"$T3/c.bin"
check "save tree one to the AFTD" "$BIN/save" -s $S -q "$T1"
check "save tree two to the AFTD" "$BIN/save" -s $S -q "$T2"
check "save tree three to the AFTD" "$BIN/save" -s $S -q "$T3"
s1=$(ssid_of "$T1"); s2=$(ssid_of "$T2"); s3=$(ssid_of "$T3")
check "three save sets ($s1 $s2 $s3)" test -n "$s1" -a -n "$s2" -a -n "$s3"

# --- clone ----------------------------------------------------------------
out=$("$BIN/nsrclone" -s $S -b Clone -v -S "$s1" 2>&1)
check "nsrclone -b Clone -S $s1 succeeds" test $? -eq 0
echo "$out" | sed 's/^/# /'
c=$(nsr_copies "$s1"); echo "$c" | sed 's/^/# copies: /'
check "mminfo lists two copies of $s1" test "$(wc -l <<<"$c")" -eq 2
check "with two clone ids" test "$(cut -d: -f1 <<<"$c" | sort -u | wc -l)" -eq 2
check "one on Disk.001, one on CL01" test "$(cut -d: -f3 <<<"$c" | sort | tr '\n' ' ')" = "CL01 Disk.001 "
check "neither is in progress or aborted" test -z "$(cut -d: -f2 <<<"$c" | tr -d '\n')"
orig=$(awk -F: '$3 == "Disk.001" {print $1}' <<<"$c")
clone=$(awk -F: '$3 == "CL01" {print $1}' <<<"$c")
out=$("$BIN/nsrclone" -s $S -b Clone -S "$s1" 2>&1)
rc=$?
echo "$out" | sed 's/^/# /'
check "a second copy on CL01 is refused (exit $rc)" test $rc -ne 0
check "... saying the volume holds a copy already" grep -q "holds a copy of save set $s1 already" <<<"$out"
check "still two copies" test "$(nsr_copies "$s1" | wc -l)" -eq 2
# Two more volumes of Clone: each further copy goes to one holding none.
nsr_device tape3 vtape "$W/tape3.vtape"
nsr_device tape4 vtape "$W/tape4.vtape"
check "label CL02" "$BIN/nsrmm" -s $S -q -l -y -b Clone -f tape3 CL02
check "label CL03" "$BIN/nsrmm" -s $S -q -l -y -b Clone -f tape4 CL03
check "a third copy of $s1" "$BIN/nsrclone" -s $S -b Clone -S "$s1"
check "a fourth copy of $s1" "$BIN/nsrclone" -s $S -b Clone -S "$s1"
c=$(nsr_copies "$s1"); echo "$c" | sed 's/^/# copies: /'
check "on CL01, CL02, CL03 and Disk.001, one each" test "$(cut -d: -f3 <<<"$c" | sort | tr '\n' ' ')" = "CL01 CL02 CL03 Disk.001 "
expect_fail "a fifth (every Clone volume holds one) is refused" "$BIN/nsrclone" -s $S -b Clone -S "$s1"

# --- errors -----------------------------------------------------------------
out=$("$BIN/nsrclone" -s $S -b Clone -S 4000000001 2>&1)
rc=$?
echo "$out" | sed 's/^/# /'
check "a clone of an unknown save set exits non-zero ($rc)" test $rc -ne 0
check "... naming it" grep -q "save set 4000000001 is not in the media database" <<<"$out"
out=$("$BIN/nsrclone" -s $S -b Empty -S "$s2" 2>&1)
rc=$?
echo "$out" | sed 's/^/# /'
check "a clone to a pool with no writable volume exits non-zero ($rc)" test $rc -ne 0
check "... after waiting for one" grep -q "waiting: .*no writable volume of pool 'Empty'" <<<"$out"
check "... saying the mount timeout passed and to label one" \
	grep -q "no writable volume of pool 'Empty' was mounted within 3 s: label one (nsrmm -l -b 'Empty'" <<<"$out"
check "... and makes no copy" test "$(nsr_copies "$s2" | wc -l)" -eq 1
out=$("$BIN/nsrclone" -s $S -b Nowhere -S "$s2" 2>&1)
check "a pool that does not exist is named ($?)" grep -q "pool 'Nowhere' does not exist" <<<"$out"
"$BIN/nsrclone" -s $S -S "$s2" 2>/dev/null
check "a clone without -b is a usage error (exit 2)" test $? -eq 2

# --- staging --------------------------------------------------------------
w0=$(written Disk.001)
f0=$(find "$W/aftd1" -type f -name 'ss.*' | wc -l)
out=$("$BIN/nsrstage" -s $S -b Stage -m -v -S "$s2" 2>&1)
check "nsrstage -b Stage -m -S $s2 succeeds" test $? -eq 0
echo "$out" | sed 's/^/# /'
w1=$(written Disk.001)
f1=$(find "$W/aftd1" -type f -name 'ss.*' | wc -l)
echo "# Disk.001 written: $w0 before, $w1 after; session files $f0 -> $f1"
check "the AFTD's written figure dropped by the save set's size" test $((w0 - w1)) -ge 2000000
check "its session file is gone from the AFTD" test "$f1" -eq $((f0 - 1))
c=$(nsr_copies "$s2"); echo "$c" | sed 's/^/# copies: /'
check "one copy left, on ST01" test "$(cut -d: -f3 <<<"$c")" = "ST01"
check "recover -S $s2 gives tree two back from ST01" recovers_identical "$T2" -S "$s2"

# --- the original volume deleted: recover from the clone --------------------
check "nsrmm -d Disk.001" "$BIN/nsrmm" -s $S -q -d -y Disk.001
c=$(nsr_copies "$s1"); echo "$c" | sed 's/^/# copies: /'
check "$s1 keeps its copy on CL01" grep -q "CL01" <<<"$c"
rm -rf "$W/out"; mkdir -p "$W/out"
out=$("$BIN/recover" -s $S -f -d "$W/out" -S "$s1" 2>&1)
check "recover -S $s1 succeeds" test $? -eq 0
echo "$out" | sed 's/^/# /'
check "... identical" "$BIN/nsrtreecmp" "$T1" "$W/out$T1"
check "... saying it uses clone $clone on CL01" grep -q "using clone $clone on volume CL01" <<<"$out"
check "recover -S $s1/$clone reads that copy" recovers_identical "$T1" -S "$s1/$clone"
out=$("$BIN/recover" -s $S -f -d "$W/out" -S "$s1/$orig" 2>&1)
check "recover -S $s1/$orig (its volume deleted) fails ($?)" test $? -ne 0
echo "$out" | sed 's/^/# /'

# --- SIGKILL of nsrclone in the middle of a clone ---------------------------
echo "create type: NSR pool; name: Big" | admin
mkdir -p "$W/aftd2"
nsr_device aftd2 adv_file "$W/aftd2"
check "label Disk.002 (pool Big)" "$BIN/nsrmm" -s $S -q -l -y -b Big -f aftd2 Disk.002
check "save tree three to Disk.002" "$BIN/save" -s $S -q -b Big "$T3"
s4=$("$BIN/mminfo" -s $S -a -q "name=$T3,pool=Big" -r ssid 2>/dev/null | awk '$1 ~ /^[0-9]+$/ {print $1; exit}')
check "it is in the media database ($s4)" test -n "$s4"
NSR_TEST_CLONE_STALL_SEC=60 "$BIN/nsrclone" -s $S -b Clone -S "$s4" >"$W/kill.out" 2>&1 &
cpid=$!
started=0
for i in $(seq 1 200); do
	if nsr_copies "$s4" | grep -q ":i:"; then started=1; break; fi
	sleep 0.1
done
check "the clone is under way (clflags i)" test $started -eq 1
sleep 1
kill -KILL $cpid
wait $cpid 2>/dev/null
settled=0
for i in $(seq 1 150); do
	c=$(nsr_copies "$s4")
	if ! grep -q ":i:" <<<"$c"; then settled=1; break; fi
	sleep 0.2
done
echo "$c" | sed 's/^/# copies: /'
check "after settlement no copy is in progress" test $settled -eq 1
check "the new copy is aborted" grep -qE "^[0-9]+:[a-z]*a[a-z]*:" <<<"$c"
check "the original is intact" recovers_identical "$T3" -S "$s4"
check "a clone run again succeeds" "$BIN/nsrclone" -s $S -b Clone -S "$s4"

# --- choosing save sets by query and by volume ------------------------------
check "nsrclone -q name=tree two clones $s2 to pool Clone" "$BIN/nsrclone" -s $S -b Clone -q "name=$T2"
check "... which now has a copy there" grep -q ":CL0[123]$" <<<"$(nsr_copies "$s2")"
check "nsrstage -m -V Disk.002 moves $s4 to ST01" "$BIN/nsrstage" -s $S -b Stage -m -V Disk.002
c=$(nsr_copies "$s4"); echo "$c" | sed 's/^/# copies: /'
check "... nothing of it is left on Disk.002" test -z "$(grep ":Disk.002$" <<<"$c")"
check "... and it comes back from a copy" recovers_identical "$T3" -S "$s4"

# --- the original cannot be read: recover tries another copy ----------------
check "save tree two to Disk.002 (pool Big)" "$BIN/save" -s $S -q -b Big "$T2"
s5=$("$BIN/mminfo" -s $S -a -q "name=$T2,pool=Big" -r ssid 2>/dev/null | awk '$1 ~ /^[0-9]+$/ {print $1; exit}')
check "it is in the media database ($s5)" test -n "$s5"
f=$(ls -t "$W/aftd2"/ss.* | head -1)   # the newest session file is its
check "its session file on Disk.002 is there" test -n "$f"
check "clone $s5 to pool Clone" "$BIN/nsrclone" -s $S -b Clone -S "$s5"
rm -f $f
rm -rf "$W/out"; mkdir -p "$W/out"
out=$("$BIN/recover" -s $S -f -d "$W/out" -S "$s5" 2>&1)
check "recover -S $s5 succeeds with the original's file gone" test $? -eq 0
echo "$out" | sed 's/^/# /'
check "... identical" "$BIN/nsrtreecmp" "$T2" "$W/out$T2"
check "... saying it tries another copy" grep -q "trying another copy" <<<"$out"
check "... and which one it uses" grep -q "could not be read; using clone [0-9]* on volume CL0" <<<"$out"
# nsrstage -V moves the copy on that volume (not the unreadable original).
cv=$(nsr_copies "$s5" | awk -F: '$3 ~ /^CL0/ {print $3; exit}')
# (the other save sets with a copy on it may have one on ST01 already:
# those are refused and make the exit status 1)
out=$("$BIN/nsrstage" -s $S -b Stage -m -v -V "$cv" 2>&1)
echo "$out" | sed 's/^/# /'
check "nsrstage -m -V $cv moves the copy of $s5 on it" grep -q "^save set $s5: staged to volume ST01" <<<"$out"
c=$(nsr_copies "$s5"); echo "$c" | sed 's/^/# copies: /'
check "... to ST01, leaving the original's record" test "$(cut -d: -f3 <<<"$c" | sort | tr '\n' ' ')" = "Disk.002 ST01 "

# --- one pass over Disk.002: only the save set that fails tries another copy
check "save tree one to Disk.002 (pool Big)" "$BIN/save" -s $S -q -b Big "$T1"
s6=$("$BIN/mminfo" -s $S -a -q "name=$T1,pool=Big" -r ssid 2>/dev/null | awk '$1 ~ /^[0-9]+$/ {print $1; exit}')
check "it is in the media database ($s6)" test -n "$s6"
rm -rf "$W/out"; mkdir -p "$W/out"
out=$("$BIN/recover" -s $S -f -d "$W/out" -S "$s5" -S "$s6" 2>&1)
check "recover -S $s5 -S $s6 succeeds ($s5's original unreadable)" test $? -eq 0
echo "$out" | sed 's/^/# /'
check "... $s5 identical" "$BIN/nsrtreecmp" "$T2" "$W/out$T2"
check "... $s6 identical" "$BIN/nsrtreecmp" "$T1" "$W/out$T1"
check "... $s5 read from another copy" grep -q "of save set $s5: .*trying another copy" <<<"$out"
check "... $s6 (one copy) read in the same pass" test "$(grep -c "trying another copy" <<<"$out")" -eq 1
nsr_done
