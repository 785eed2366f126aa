#!/bin/bash
# 459-execd-run: nsrexecd runs save for a server it serves (-S), through
# the client library (execd_testclnt): the save sets complete and mminfo
# shows them at the level asked; every bad argument is refused with a
# reason (server not served, relative path, bad level, bad client name,
# an option smuggled in a save set or PSS setting); a save that fails
# reports its exit code and the last lines of its stderr; "All" expands
# to the local file systems of the mount table nsrexecd reads (-M).
. "$(dirname "$0")/lib.sh"
nsr_setup 459-execd-run
S=127.0.0.1
W=$ROOT/work
mkdir -p "$W/aftd1" "$W/a" "$W/b" "$W/fs1" "$W/fs2"
echo one >"$W/a/f1"; echo two >"$W/b/f2"
echo three >"$W/fs1/f3"; echo four >"$W/fs2/f4"
cat >"$W/mounts" <<EOT
/dev/sda1 $W/fs1 ext4 rw 0 0
proc /proc proc rw 0 0
srv:/x /mnt/nfs nfs4 rw 0 0
/dev/sda2 $W/fs2 xfs rw 0 0
tmpfs /run tmpfs rw 0 0
EOT

NSR_EXECD_ARGS=(-S localhost -S $S -M "$W/mounts")
nsr_start_datazone
nsr_device aftd1 adv_file "$W/aftd1"
check "label a volume" "$BIN/nsrmm" -s $S -q -l -y -b Default -f aftd1 X.001

T="$BIN/execd_testclnt"
$T localhost $S cli1 full "$W/a" "$W/b" >"$W/run1.out" 2>&1
check "two save sets run and exit 0" test $? = 0
check "both reported ended with exit 0" \
	test "$(grep -c 'state 1 exit 0 signal 0' "$W/run1.out")" = 2
mminfo() { "$BIN/mminfo" -s $S -a -q "client=cli1" -r "name(250),level,sumflags" \
	2>&1; }
# mm_has DESC REGEX - a line of mminfo matches (else mminfo is shown).
mm_has() {
	mminfo >"$W/mm.out"
	grep -q "$2" "$W/mm.out" && ok "$1" && return
	fail "$1"; sed "s/^/# /" "$W/mm.out"
}
mm_has "mminfo: $W/a full, complete, for client cli1" "^$W/a *full *cb"
mm_has "mminfo: $W/b complete" "^$W/b *full *cb"
$T localhost $S cli1 incr "$W/a" >"$W/run2.out" 2>&1
check "an incr runs" test $? = 0
mm_has "mminfo: the incr" "^$W/a *incr *cb"

# refusals: exit 2 and the reason
refused() {
	local want=$1; shift
	local rc
	$T localhost "$@" >"$W/ref.out" 2>&1
	rc=$?
	check "refused ($want): exit 2 (got $rc)" test $rc = 2
	check "refused ($want): says '$want'" grep -q -- "$want" "$W/ref.out"
}
refused "may not run saves" otherserver cli1 full "$W/a"
refused "an absolute path" $S cli1 full relative/path
refused "an absolute path" $S cli1 full -x
refused "full, incr or 1 to 9" $S cli1 weekly "$W/a"
refused "full, incr or 1 to 9" $S cli1 manual "$W/a"
refused "not a client name" $S 'cli 1' full "$W/a"
refused "not a client name" $S -cli1 full "$W/a"
refused "an absolute path, or All alone" $S cli1 full All "$W/a"
EXECD_PSS='x --y' refused "not a parallel save streams" $S cli1 full "$W/a"
EXECD_PAR=5000 refused "parallelism 5000" $S cli1 full "$W/a"
check "nothing refused was saved" test "$(mminfo | grep -c "$W")" = 3

# a failing save: its exit code and stderr come back
$T localhost $S cli1 full "$W/missing" >"$W/run3.out" 2>&1
check "a failing save: exit 1" test $? = 1
check "its exit code is reported" grep -q "state 1 exit [1-9]" "$W/run3.out"
check "the last lines of its stderr come back" \
	grep -q "missing.*No such file" "$W/run3.out"

# All: the local file systems of the mount table
$T localhost $S cli2 full All >"$W/run4.out" 2>&1
check "All runs and exits 0" test $? = 0
check "All became the two local file systems" \
	test "$(grep -c 'state 1 exit 0' "$W/run4.out")" = 2
check "fs1 saved" grep -q "^$W/fs1 state 1 exit 0" "$W/run4.out"
check "fs2 saved" grep -q "^$W/fs2 state 1 exit 0" "$W/run4.out"
check "no pseudo or network file system" \
	bash -c "! grep -q '/proc\|/mnt/nfs\|/run' '$W/run4.out'"
check "nsrexecd logged the run" grep -q "nsrexecd.*run .*client cli2" \
	"$ROOT/logs/daemon.log"
nsr_done
