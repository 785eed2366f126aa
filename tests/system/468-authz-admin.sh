#!/bin/bash
# 468-authz-admin: the NSR resource's administrator list on one host
# (loopback).  root on the server's host administers by default; a user
# who is not an administrator (alice, stated with NSR_TEST_USER) may
# read resources but her resource changes, label, nsrmm -d and savegrp
# are refused with words that name her and what to do, nsradmin and
# nsrmm exit non-zero, nothing changes, and nsrd logs each denial with
# who and what; she can neither write the media database nor purge the
# jobs database directly, nor write job records, nor label through a
# mover, nor have nsrsnmd start a mover, and she sees only the jobs of
# the clients she may read.  An administrator list naming only alice
# shuts root out at once and lets alice in; a malformed entry is refused
# when it is set.
. "$(dirname "$0")/lib.sh"
nsr_setup 468-authz-admin
S=127.0.0.1
W=$ROOT/work
mkdir -p "$W"
LOG=$ROOT/logs/daemon.log

nsr_start_aftd_datazone
T=$W/tree
mkdir -p "$T"
seq 1 5000 >"$T/numbers"
check "root saves" "$BIN/save" -s $S -q "$T"
ssid=$("$BIN/mminfo" -s $S -r ssid | tail -n 1 | tr -d ' ')
check "mminfo lists the save set ($ssid)" test "$ssid" -gt 0

# as USER CMD... - CMD stating USER as its caller.
as() { local u=$1; shift; env NSR_TEST_USER="$u" "$@"; }
# radmin USER TEXT - nsradmin -i - with TEXT as USER; output in $W/out.
radmin() {
	printf '%b' "$2" | as "$1" "$BIN/nsradmin" -s $S -i - >"$W/out" 2>&1
}

check "root creates client c1" radmin root \
	'create type: NSR client; name: c1\n'
check "alice may read resources" radmin alice '. type: NSR client\nprint\n'
check "and sees c1" grep -q 'name: c1;' "$W/out"

expect_fail "alice's update of client c1 is refused (exit non-zero)" \
	radmin alice '. type: NSR client; name: c1\nupdate parallelism: 9\n'
check "nsradmin prints why, naming alice and the resource" \
	grep -q "denied: res update NSR client 'c1' by alice@[^:]*: not an administrator" "$W/out"
check "and what to do" grep -q "administrator list" "$W/out"
check "nsrd logs the denial" nsr_wait_logged "$LOG" \
	"nsrd\[[0-9]+\]: warn: denied: res update NSR client 'c1' by alice@"
radmin root '. type: NSR client; name: c1\nprint\n'
check "c1's parallelism did not change" grep -q 'parallelism: 4;' "$W/out"
expect_fail "alice cannot create a client" \
	radmin alice 'create type: NSR client; name: c2\n'
expect_fail "alice cannot delete client c1" \
	radmin alice '. type: NSR client; name: c1\ndelete\n'

expect_fail "alice's nsrmm -d of save set $ssid is refused" \
	as alice "$BIN/nsrmm" -s $S -q -d -y -S "$ssid"
as alice "$BIN/nsrmm" -s $S -q -d -y -S "$ssid" >"$W/nsrmm.out" 2>&1
check "nsrmm prints the denial" \
	grep -q "denied: delete of save set $ssid by alice@" "$W/nsrmm.out"
check "nsrd logs it" nsr_wait_logged "$LOG" \
	"warn: denied: delete of save set $ssid by alice@"
check "the save set is still there" \
	test "$("$BIN/mminfo" -s $S -q "ssid=$ssid" -r ssid | tail -n 1 |
		tr -d ' ')" = "$ssid"
expect_fail "alice cannot label" \
	as alice "$BIN/nsrmm" -s $S -q -l -y -b Default -f aftd1 Disk.002
check "nsrd logs the label denial" nsr_wait_logged "$LOG" \
	"warn: denied: label of device 'aftd1' by alice@"
expect_fail "alice cannot run a group" as alice "$BIN/savegrp" -s $S Default

# Straight to the databases: writes to the media database are the
# server's programs', a purge of the jobs database an administrator's.
as alice "$BIN/mmdb_testclnt" populate >"$W/mmdb.out" 2>&1
check "alice cannot write volumes into nsrmmdbd directly" test $? -ne 0
check "told why" grep -q "denied: media database vol_put by alice@" \
	"$W/mmdb.out"
check "nsrmmdbd logs it" nsr_wait_logged "$LOG" \
	"nsrmmdbd\[[0-9]+\]: warn: denied: media database vol_put by alice@"
check "no volume was added" test -z "$("$BIN/mminfo" -s $S -m -r volume |
	grep -v -e '^ *volume' -e Disk.001)"
expect_fail "alice cannot purge the jobs database" \
	as alice "$BIN/jobd_testclnt" purge
check "nsrjobd logs it" nsr_wait_logged "$LOG" \
	"nsrjobd\[[0-9]+\]: warn: denied: jobs database purge by alice@"
check "root can" "$BIN/jobd_testclnt" purge

# Jobs, like save sets, are shown to whoever may read their client: an
# administrator all, alice those of her host's client, not another's.
other=$("$BIN/jobd_testclnt" create "type=save job" client=elsewhere \
	name=/x 2>"$W/jobs.err")
check "a job of client elsewhere ($other)" test -n "$other"
"$BIN/jobd_testclnt" query "" >"$W/jobs.root" 2>&1
as alice "$BIN/jobd_testclnt" query "" >"$W/jobs.alice" 2>&1
check "root sees it" grep -qx "$other" "$W/jobs.root"
check "alice does not" test "$(grep -cx "$other" "$W/jobs.alice")" = 0
check "alice sees the jobs of her host's client" test -s "$W/jobs.alice"
check "fewer than root" \
	test "$(wc -l <"$W/jobs.alice")" -lt "$(wc -l <"$W/jobs.root")"
expect_fail "alice cannot write a job record" \
	as alice "$BIN/jobd_testclnt" create "type=save job" client=forged
check "nsrjobd logs it" nsr_wait_logged "$LOG" \
	"nsrjobd\[[0-9]+\]: warn: denied: jobs database create by alice@"

# Nor can she label through the mover directly, bypassing nsrd.
mport=$(sed -n 's/.*started nsrmmd #[0-9]* (pid [0-9]*[^)]*) for device aftd1 .* on port \([0-9]*\):.*/\1/p' \
	"$LOG" | tail -n 1)
check "the mover of aftd1 has a port ($mport)" test -n "$mport"
as alice "$BIN/mmdtest" label 127.0.0.1 "${mport:-1}" Evil.001 Default \
	65536 force >"$W/mmd.out" 2>&1
check "alice's label through the mover is refused" test $? -ne 0
check "the mover logs it" nsr_wait_logged "$LOG" \
	"nsrmmd\.[0-9]+\[[0-9]+\]: warn: denied: label on device aftd1 by alice@"
"$BIN/mmdtest" readlabel 127.0.0.1 "${mport:-1}" >"$W/label.out" 2>&1
check "the volume in aftd1 is still Disk.001" grep -q "Disk.001" \
	"$W/label.out"
check "not Evil.001" test "$(grep -c Evil "$W/label.out")" = 0

# Nor can she have the storage node start a mover on a path of her own.
mkdir -p "$W/evil"
chmod 0777 "$W/evil"
as alice "$BIN/mmdtest" mover 127.0.0.1 adv_file "$W/evil" evil \
	>"$W/snm.out" 2>&1
check "alice's request for a mover is refused" test $? -ne 0
check "saying who may" grep -q "only root of this host" "$W/snm.out"
check "nsrsnmd logs it" nsr_wait_logged "$LOG" \
	"nsrsnmd\[[0-9]+\]: warn: denied: mover by alice@"
check "no mover was started for it" \
	test "$(grep -c 'for device evil' "$LOG")" = 0

# A malformed entry is refused when it is set.
expect_fail "administrator: alice (no @host) is refused" \
	radmin root '. type: NSR\nupdate administrator: alice\n'
check "saying how to write an entry" grep -q "user@host" "$W/out"

# Only alice: root is shut out at once, alice is in.
check "root sets the administrator list to alice@*" \
	radmin root '. type: NSR\nupdate administrator: alice@*\n'
expect_fail "now root's update of c1 is refused" \
	radmin root '. type: NSR client; name: c1\nupdate parallelism: 7\n'
check "naming root" grep -q "denied: res update NSR client 'c1' by root@" \
	"$W/out"
check "and alice's is done" \
	radmin alice '. type: NSR client; name: c1\nupdate parallelism: 9\n'
check "alice gives root back" \
	radmin alice '. type: NSR\nupdate administrator: alice@*, root@*\n'
check "root deletes save set $ssid" \
	"$BIN/nsrmm" -s $S -q -d -y -S "$ssid"
check "which is gone" test -z "$("$BIN/mminfo" -s $S -q "ssid=$ssid" \
	-r ssid 2>/dev/null | grep -v ssid)"
nsr_done
