#!/bin/bash
# 300-roundtrip: the walking skeleton end to end on a private datazone.
# Label an AFTD volume, save a tree holding every supported file type,
# see the save set in mminfo and the job in jobquery, recover it by path
# (-a) and by save set id (-S), compare contents and metadata; then the
# error cases: missing path, server down, no writable volume, full
# volume, relabel without -y, a second nsrd on the same root, malformed
# resources -- each must fail clearly and leave the databases as they were.
. "$(dirname "$0")/lib.sh"
nsr_setup 300-roundtrip
S=127.0.0.1
W=$ROOT/work
mkdir -p "$W"
# A save with no writable volume waits for one (a mount request) this
# long before it fails (416-waits tests the wait itself).
export NSR_MOUNT_TIMEOUT_SEC=2

nsr_start_datazone

# --- a device and a labeled volume ---------------------------------------
mkdir -p "$W/aftd1"
printf 'create type: NSR device; name: aftd1; media type: adv_file; device access information: %s\n' \
	"$W/aftd1" | "$BIN/nsradmin" -s $S -i - >"$W/nsradmin.out" 2>&1
check "nsradmin creates the device" grep -q "created resource" "$W/nsradmin.out"
check "nsrmm labels a volume with a 64 KB block size" \
	"$BIN/nsrmm" -s $S -l -y -b Default -f aftd1 -z 64K TestVol.001
"$BIN/nsrmm" -s $S >"$W/nsrmm.out" 2>&1
check "nsrmm shows the volume mounted on the device" grep -q "aftd1 TestVol.001" "$W/nsrmm.out"

# --- a tree with every supported file type ---------------------------------
T=$W/tree
mkdir -p "$T/a/b/c" "$T/empty-dir" "$T/modes"
printf 'alpha\n' >"$T/a/alpha.txt"
: >"$T/a/empty"
head -c 2500000 /dev/urandom >"$T/a/b/random.bin"
seq 1 100000 >"$T/a/b/c/numbers"
truncate -s 5M "$T/a/sparse"; printf 'tail' >>"$T/a/sparse"
ln -s alpha.txt "$T/a/rel-link"
ln -s /no/such/target "$T/a/dangling-link"
ln "$T/a/alpha.txt" "$T/a/b/hardlink"
ln "$T/a/alpha.txt" "$T/hardlink2"
mkfifo "$T/a/fifo"
printf 'x' >"$T/modes/m600"; chmod 600 "$T/modes/m600"
printf 'x' >"$T/modes/m4755"; chmod 4755 "$T/modes/m4755"
chmod 1777 "$T/modes"
printf 'name with spaces\n' >"$T/a/file with spaces"
printf 'utf8\n' >"$T/a/caf$(printf '\303\251')"
if [ "$(id -u)" = 0 ]; then
	mknod "$T/a/chardev" c 1 3
	mknod "$T/a/blockdev" b 7 200
	chown 12345:54321 "$T/a/alpha.txt"
	chown -h 23456:65432 "$T/a/rel-link"
fi
touch -h -d '2001-02-03 04:05:06.123456789' "$T/a/rel-link"
touch -d '1999-12-31 23:59:59.5' "$T/a/b/c/numbers" "$T/a/b/c"

# --- save ------------------------------------------------------------------
"$BIN/save" -s $S "$T" >"$W/save.out" 2>&1
rc=$?
check "save exits 0" test $rc -eq 0
check "save prints completed savetime=" grep -q "^completed savetime=[1-9]" "$W/save.out"

# --- mminfo and jobquery ---------------------------------------------------
"$BIN/mminfo" -s $S -av >"$W/mminfo.out" 2>&1
check "mminfo -av lists the save set on the volume" grep -q "TestVol.001.*$T" "$W/mminfo.out"
SSID=$("$BIN/mminfo" -s $S -a -q "name=$T" -r ssid 2>/dev/null |
	awk '$1 ~ /^[0-9]+$/ {print $1; exit}')
check "mminfo -q name=... -r ssid gives the ssid" test -n "$SSID"
if [ -x "$BIN/jobquery" ]; then
	printf 'print type: save job\n' | "$BIN/jobquery" -s $S >"$W/jobs.out" 2>&1
	check "jobquery shows the save job completed" grep -qi "completed" "$W/jobs.out"
fi

# --- recover by path and by ssid ---------------------------------------------
"$BIN/recover" -s $S -a -d "$W/r1" "$T" >"$W/rec1.out" 2>&1
check "recover -a exits 0" test $? -eq 0
check "recover -a tree equals the original" "$BIN/nsrtreecmp" "$T" "$W/r1$T"
if [ -n "$SSID" ]; then
	"$BIN/recover" -s $S -S "$SSID" -d "$W/r2" >"$W/rec2.out" 2>&1
	check "recover -S exits 0" test $? -eq 0
	check "recover -S tree equals the original" "$BIN/nsrtreecmp" "$T" "$W/r2$T"
fi
"$BIN/recover" -s $S -a -d "$W/r3" "$T/a/b/c/numbers" >"$W/rec3.out" 2>&1
check "recover -a of a single file" cmp "$T/a/b/c/numbers" "$W/r3$T/a/b/c/numbers"

# --- error cases: clear message, non-zero, nothing changed -------------------
count_ss() { "$BIN/mminfo" -s $S -a -r ssid 2>/dev/null | grep -c '^ *[0-9]'; }
BEFORE=$(count_ss)

out=$("$BIN/save" -s $S "$W/does-not-exist" 2>&1); rc=$?
check "save of a missing path fails" test $rc -ne 0
check "and names the path" grep -q "does-not-exist" <<<"$out"
check "and records no save set" test "$(count_ss)" = "$BEFORE"

start=$(date +%s)
out=$(NSR_PORTMAP_PORT=$(free_port) "$BIN/save" -s $S "$T" 2>&1); rc=$?
check "save to a server that is not running fails" test $rc -ne 0
check "within a few seconds" test $(( $(date +%s) - start )) -le 10
check "naming host and port" grep -q "127.0.0.1:[0-9]" <<<"$out"

out=$("$BIN/save" -s $S -b Archive "$T" 2>&1); rc=$?
check "save to a pool without a volume fails (after the mount timeout)" \
	test $rc -ne 0
check "and says to label one" grep -q "nsrmm -l" <<<"$out"

"$BIN/nsrmm" -s $S -o full TestVol.001
out=$("$BIN/save" -s $S "$T" 2>&1); rc=$?
check "save to a full volume fails (after the mount timeout)" test $rc -ne 0
check "and says the volume is full" grep -q "full" <<<"$out"
"$BIN/nsrmm" -s $S -o notfull TestVol.001
check "no save set was recorded by the failures" test "$(count_ss)" = "$BEFORE"

out=$("$BIN/nsrmm" -s $S -l -b Default -f aftd1 TestVol.001 </dev/null 2>&1); rc=$?
check "relabeling a volume with data without -y fails" test $rc -ne 0
check "the save set is still recoverable" \
	"$BIN/recover" -s $S -q -S "${SSID:-0}" -d "$W/r4"

out=$("$BIN/nsrd" -b -R "$ROOT" 2>&1); rc=$?
check "a second nsrd on the same root fails" test $rc -ne 0
check "saying one is already running" grep -q "already running" <<<"$out"

"$BIN/nsradmin" -s $S -i - >"$W/res-before" 2>&1 <<<'print type: NSR device'
out=$(printf 'create type: NSR device; name: bad; media type: floppy\n' |
	"$BIN/nsradmin" -s $S -i - 2>&1); rc=$?
check "a resource with a bad value is refused" test $rc -ne 0
check "with a message naming the attribute" grep -qi "media type" <<<"$out"
out=$(printf 'create type: NSR device; name: "unterminated\n' |
	"$BIN/nsradmin" -s $S -i - 2>&1); rc=$?
check "a malformed resource is refused" test $rc -ne 0
"$BIN/nsradmin" -s $S -i - >"$W/res-after" 2>&1 <<<'print type: NSR device'
check "and the resources are unchanged" cmp "$W/res-before" "$W/res-after"

nsr_done
