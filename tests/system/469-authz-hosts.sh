#!/bin/bash
# 469-authz-hosts: which host may save, list and recover which client's
# data, across hosts (network namespaces): server srv, clients ca and
# cb, each enrolled.  cb saves its own data and lists it; ca can neither
# save as cb, nor see cb's save sets in mminfo, nor list cb's index
# (nsrinfo), nor recover cb's save set (refused with words naming
# root@ca and the client, logged) until an administrator puts root@ca
# in cb's remote access; then ca lists and recovers it, identical.  ca
# is no administrator of srv: its resource update is refused, and it
# cannot have srv's nsrsnmd start a mover, and its mminfo -m lists no
# volume until it may read a save set on one.  Nor can ca read or write a
# save set at srv's mover directly: without nsrd's grant (or with a
# forged one) the mover refuses.  Needs
# root and network namespaces (skipped otherwise).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/netns.sh"
nsr_setup 469-authz-hosts
nsr_net_setup srv ca cb
S=srv
W=$ROOT/work
mkdir -p "$W"
LOG=$ROOT/srv/logs/daemon.log

nsr_host_start_server srv
nsr_host_start_client ca
nsr_host_start_client cb
D=$ROOT/srv/aftd1
mkdir -p "$D"
nsr_host_device srv aftd1 adv_file "$D"
check "label Srv.001" on srv "$BIN/nsrmm" -s $S -q -l -y -b Default \
	-f aftd1 Srv.001
check "srv creates client cb" on srv "$BIN/nsradmin" -s $S -i - \
	< <(printf 'create type: NSR client; name: cb\n')

# not_listed - ca's nsrinfo output names no file of cb's.
not_listed() { ! grep -q "$T/numbers" "$W/ca-nsrinfo.out"; }
T=$ROOT/tree-b
mkdir -p "$T/d"
seq 1 30000 >"$T/numbers"
head -c 300000 /dev/urandom >"$T/d/random.bin"
check "cb saves its own data" on cb "$BIN/save" -s $S -c cb -q "$T"
SSID=$(on srv "$BIN/mminfo" -s $S -q client=cb -r ssid | tail -n 1 |
	tr -d ' ')
check "srv's mminfo lists cb's save set ($SSID)" test "$SSID" -gt 0

# ssids HOST QUERY - the ssids mminfo on HOST lists for QUERY.
ssids() {
	on "$1" "$BIN/mminfo" -s $S -q "$2" -r ssid 2>/dev/null |
		grep -v ssid | tr -d ' '
}
check "cb's mminfo lists its save set" test "$(ssids cb client=cb)" = "$SSID"
check "ca's mminfo does not show cb's save set" \
	test -z "$(ssids ca client=cb)"
check "not even by ssid" test -z "$(ssids ca "ssid=$SSID")"
# vols HOST - the volumes mminfo -m on HOST lists.
vols() {
	on "$1" "$BIN/mminfo" -s $S -m 2>/dev/null |
		grep -o 'Srv\.[0-9]*' | sort -u | tr '\n' ' '
}
check "srv's mminfo -m lists Srv.001" test "$(vols srv)" = "Srv.001 "
check "cb's too (it holds cb's data)" test "$(vols cb)" = "Srv.001 "
check "ca's does not (nothing of ca's is on it)" test -z "$(vols ca)"
on ca "$BIN/mmdtest" mmdb-volget $S Srv.001 >"$W/ca-volget.out" 2>&1
check "nor can ca look Srv.001 up by name" test $? -ne 0
check "saying why" grep -q "denied: media database vol_get by root@ca" \
	"$W/ca-volget.out"
on cb "$BIN/nsrinfo" -s $S cb >"$W/cb-nsrinfo.out" 2>&1
check "cb's nsrinfo lists its index" test $? -eq 0
check "with the file" grep -q "$T/numbers" "$W/cb-nsrinfo.out"
on ca "$BIN/nsrinfo" -s $S cb >"$W/ca-nsrinfo.out" 2>&1
check "ca's nsrinfo of cb is refused" test $? -ne 0
check "saying why" grep -q "denied: index .* of client 'cb' by root@ca" \
	"$W/ca-nsrinfo.out"
check "listing no file" not_listed
check "nsrindexd logs it" nsr_wait_logged "$LOG" \
	"nsrindexd\[[0-9]+\]: warn: denied: index .* of client 'cb' by root@ca"

on ca "$BIN/save" -s $S -c cb -q "$T" >"$W/ca-save.out" 2>&1
check "ca cannot save as cb" test $? -ne 0
check "save says why" grep -q "denied: save of client 'cb' by root@ca" \
	"$W/ca-save.out"

on ca "$BIN/recover" -s $S -c ca -S "$SSID" -d "$W/r1" >"$W/rec1.out" 2>&1
check "ca cannot recover cb's save set" test $? -ne 0
check "recover prints the denial" \
	grep -q "denied: recover of client 'cb' by root@ca" "$W/rec1.out"
check "nothing was recovered" test ! -e "$W/r1$T/numbers"
check "nsrd logs it" nsr_wait_logged "$LOG" \
	"nsrd\[[0-9]+\]: warn: denied: recover of client 'cb' by root@ca"

on ca "$BIN/nsradmin" -s $S -i - >"$W/ca-radmin.out" 2>&1 < <(printf \
	'. type: NSR client; name: cb\nupdate remote access: root@ca\n')
check "ca cannot grant itself remote access (not an administrator)" \
	test $? -ne 0
check "nsradmin says so" grep -q \
	"denied: res update NSR client 'cb' by root@ca: not an administrator" \
	"$W/ca-radmin.out"

# Nor can ca read cb's save set at srv's mover directly, bypassing nsrd:
# the mover opens a save set only with nsrd's grant for it.
MPORT=$(on srv "$BIN/mmdtest" status 127.0.0.1 2>/dev/null |
	awk '$1 == "aftd1" {print $2; exit}')
FRAGS=$(on srv "$BIN/mmdtest" mmdb-fragwords $S "$SSID" 2>/dev/null)
check "srv's mover of aftd1 has a port ($MPORT)" test -n "$MPORT"
check "cb's save set has fragments ($FRAGS)" test -n "$FRAGS"
check "cb's save brought nsrd's grant (the mover fetched the key)" \
	nsr_wait_logged "$LOG" "nsrmmd\.[0-9]+\[[0-9]+\]: info: session grants are checked with the grant key"
# shellcheck disable=SC2086
on ca "$BIN/mmdtest" recover srv "$MPORT" "$SSID" $FRAGS \
	>"$W/ca-direct.data" 2>"$W/ca-direct.err"
check "ca's direct read at the mover is refused" test $? -ne 0
check "no byte of cb's data came" test ! -s "$W/ca-direct.data"
check "saying why" grep -q \
	"denied: read_open of save set $SSID on device aftd1 by root@ca: no grant" \
	"$W/ca-direct.err"
check "the mover logs it" nsr_wait_logged "$LOG" \
	"nsrmmd\.[0-9]+\[[0-9]+\]: warn: denied: read_open of save set $SSID .* by root@ca"
# shellcheck disable=SC2086
on ca env MMDTEST_FORGE=1 "$BIN/mmdtest" recover srv "$MPORT" "$SSID" \
	$FRAGS >"$W/ca-forged.data" 2>"$W/ca-forged.err"
check "a forged grant is refused too" test $? -ne 0
check "with nothing read" test ! -s "$W/ca-forged.data"
check "saying why (forged)" grep -q "by root@ca: no grant" "$W/ca-forged.err"
echo data | on ca env MMDTEST_FORGE=1 "$BIN/mmdtest" save srv "$MPORT" \
	4000000001 cb /forged >"$W/ca-write.out" 2>&1
check "ca cannot write a save set at the mover either" test $? -ne 0
check "saying why (write)" grep -q \
	"denied: ss_begin of save set 4000000001 on device aftd1 by root@ca" \
	"$W/ca-write.out"

# Nor can ca have srv's storage node start a mover (it would read any
# volume there): ca is no server of srv's nsrsnmd.
on ca "$BIN/mmdtest" mover srv adv_file "$D" evil >"$W/ca-snm.out" 2>&1
check "ca's request for a mover of srv is refused" test $? -ne 0
check "saying why" grep -q "ca is not a server of this storage node" \
	"$W/ca-snm.out"
check "srv's nsrsnmd logs it" nsr_wait_logged "$LOG" \
	"nsrsnmd\[[0-9]+\]: warn: denied: mover by root@ca"

check "srv puts root@ca in cb's remote access" \
	on srv "$BIN/nsradmin" -s $S -i - < <(printf \
	'. type: NSR client; name: cb\nupdate remote access: root@ca\n')
check "now ca's mminfo shows cb's save set" \
	test "$(ssids ca client=cb)" = "$SSID"
check "and its volume in mminfo -m" test "$(vols ca)" = "Srv.001 "
on ca "$BIN/nsrinfo" -s $S cb >"$W/ca-nsrinfo2.out" 2>&1
check "and ca's nsrinfo lists cb's index" test $? -eq 0
check "with the file" grep -q "$T/numbers" "$W/ca-nsrinfo2.out"
on ca "$BIN/recover" -s $S -c ca -S "$SSID" -d "$W/r2" >"$W/rec2.out" 2>&1
check "now ca recovers cb's save set" test $? -eq 0
check "identical" cmp -s "$T/numbers" "$W/r2$T/numbers"
check "identical (random)" cmp -s "$T/d/random.bin" "$W/r2$T/d/random.bin"

# Another user of ca is not root@ca.
on ca env NSR_TEST_USER=bob "$BIN/recover" -s $S -c ca -S "$SSID" \
	-d "$W/r3" >"$W/rec3.out" 2>&1
check "bob@ca is not in cb's remote access" test $? -ne 0
check "named as bob@ca" grep -q "by bob@ca" "$W/rec3.out"
nsr_done
