#!/bin/bash
# 465-tls-hosts: certificates across hosts (network namespaces).  Server
# srv, client cli enrolled with nsrtrust (request, accept, install), and
# rog, a host whose daemons made a CA of their own (not of srv's
# datazone).  Every daemon of srv refuses rog: the TLS handshake fails;
# rog without any certificate gets NULL pings answered and every other
# call denied; rog's save fails; plain-hosts naming rog admits its plain
# calls.  cli is admitted by every daemon and saves.  Then srv revokes
# cli: at once every daemon of srv refuses new connections from cli and
# cli's mminfo and save fail; srv tells the storage node sn (a device
# of srv is on it) that its revocation list changed, sn's nsrexecd
# (-S srv) fetches it at once (its own poll is an hour here), and sn's
# daemons refuse cli too.  cl2, a client whose nsrexecd serves no server
# (no -S), fetches srv's list from the server that enrolled it (its poll
# is 1 s) and refuses cli as well.  Needs root and network namespaces
# (skipped otherwise).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/netns.sh"
nsr_setup 465-tls-hosts
nsr_net_setup srv cli rog sn cl2
S=srv
W=$ROOT/work
mkdir -p "$W"
export NSR_REVOKED_POLL_SEC=3600 # sn's nsrexecd: only srv's notice

nsr_host_start_server srv
nsr_host_start_storage sn
nsr_host_start_client cli
NSR_REVOKED_POLL_SEC=1 nsr_host_start_client cl2
nsr_host_start rog nsrexecd
check "cli's certificate is signed by srv's CA" \
	cmp -s "$ROOT/srv/tls/ca.pem" "$ROOT/cli/tls/ca.pem"
check "rog made a CA of its own" test -s "$ROOT/rog/tls/ca.key"
# listed HOST STATE - nsrtrust list on srv shows HOST in STATE.
listed() {
	on srv "$BIN/nsrtrust" list | grep -q "^$1 .* $2\$"
}
check "nsrtrust list on srv shows cli valid" listed cli valid

# A device and a volume for the saves; a device on sn makes it a storage
# node srv knows.
D=$ROOT/srv/aftd1
mkdir -p "$D" "$ROOT/sn/aftd1"
nsr_host_device srv aftd1 adv_file "$D"
nsr_host_device srv "rd=sn:$ROOT/sn/aftd1" adv_file "$ROOT/sn/aftd1"
check "label Srv.001" on srv "$BIN/nsrmm" -s $S -q -l -y -b Default \
	-f aftd1 Srv.001
T=$ROOT/tree
mkdir -p "$T"
seq 1 20000 >"$T/numbers"

# port_of DAEMON - the port DAEMON of srv listens on.
port_of() {
	sed -n "s/.*$1\[[0-9]*\]: info: started, .* listening on .* port \([0-9]*\).*/\1/p" \
		"$ROOT/srv/logs/daemon.log" | tail -n 1
}
DAEMONS="nsrexecd nsrd nsrmmdbd nsrindexd nsrjobd nsrsnmd"

# probe HOST DAEMON PROC [ENV...] - rpcprobe's exit status from HOST.
probe() {
	local h=$1 d=$2 proc=$3 p
	shift 3
	p=$(port_of "$d")
	[ -n "$p" ] || { echo 99; return; }
	on "$h" env "$@" "$BIN/rpcprobe" srv "$p" "$d" "$proc" 2>/dev/null
	echo $?
}

# probe_sn DAEMON PROC - rpcprobe's exit status from cli to sn's DAEMON.
probe_sn() {
	local p
	p=$(sed -n "s/.*$1\[[0-9]*\]: info: started, .* listening on .* port \([0-9]*\).*/\1/p" \
		"$ROOT/sn/logs/daemon.log" | tail -n 1)
	[ -n "$p" ] || { echo 99; return; }
	on cli "$BIN/rpcprobe" sn "$p" "$1" "$2" 2>/dev/null
	echo $?
}
for d in nsrexecd nsrsnmd; do
	check "$d on storage node sn admits cli" test "$(probe_sn $d 1)" = 0
done
# probe_cl2 - rpcprobe's exit status from cli to cl2's nsrexecd.
probe_cl2() {
	local p
	p=$(sed -n "s/.*nsrexecd\[[0-9]*\]: info: started, .* listening on .* port \([0-9]*\).*/\1/p" \
		"$ROOT/cl2/logs/daemon.log" | tail -n 1)
	[ -n "$p" ] || { echo 99; return; }
	on cli "$BIN/rpcprobe" cl2 "$p" nsrexecd 1 2>/dev/null
	echo $?
}
check "nsrexecd on cl2 admits cli" test "$(probe_cl2)" = 0

for d in $DAEMONS; do
	check "$d on srv refuses rog's foreign certificate (handshake)" \
		test "$(probe rog $d 1)" = 4
	check "$d answers rog's plain NULL ping" \
		test "$(probe rog $d 0 NSR_ROOT=$ROOT/rog/nocert)" = 0
	check "$d denies rog's plain call" \
		test "$(probe rog $d 1 NSR_ROOT=$ROOT/rog/nocert)" = 3
	check "$d admits cli" test "$(probe cli $d 1)" = 0
done
# logged REGEX - the daemons' log shows it within 10 s (refusals are
# logged in summaries, after 1.5 s without a new one).
logged() { nsr_wait_logged "$ROOT/srv/logs/daemon.log" "$1"; }
check "srv logs the failed handshakes of rog" \
	logged "TLS handshakes failed, the last: TLS handshake with 198\.18\.0\.12:[0-9]+ failed: tlsv1 alert unknown ca"
check "srv logs the plain calls of rog it refused" \
	logged "refused [0-9]+ calls without TLS, the last from 198\.18\.0\.12:[0-9]+"
on rog "$BIN/save" -s $S -c rog "$T" >"$W/rog-save.out" 2>&1
check "a save from rog fails" test $? -ne 0

# An administrator admits rog without TLS by name in plain-hosts.
echo "rog   # 465: admitted without TLS" >"$ROOT/srv/tls/plain-hosts"
check "plain-hosts naming rog admits its plain call to nsrd" \
	test "$(probe rog nsrd 1 NSR_ROOT=$ROOT/rog/nocert)" = 0
rm -f "$ROOT/srv/tls/plain-hosts"
check "and without it nsrd denies it again" \
	test "$(probe rog nsrd 1 NSR_ROOT=$ROOT/rog/nocert)" = 3

on cli "$BIN/save" -s $S -c cli "$T" >"$W/cli-save.out" 2>&1
check "a save from cli succeeds" test $? -eq 0
check "mminfo on cli works" on cli "$BIN/mminfo" -s $S -q client=cli

# --- revoke cli ------------------------------------------------------------
check "nsrtrust revoke cli on srv" on srv "$BIN/nsrtrust" revoke cli
check "nsrtrust list shows cli revoked" listed cli revoked
# With TLS 1.3 the client's side of the handshake ends before the server
# checks the client's certificate: the refusal reaches cli as the
# server's alert on its first call (exit 5) rather than at connect (4).
for d in $DAEMONS; do
	r=$(probe cli $d 1)
	check "$d refuses revoked cli at once (rpcprobe exit $r)" \
		test "$r" = 4 -o "$r" = 5
done
for d in $DAEMONS; do
	check "$d logs why" \
		logged " $d\[[0-9]+\]: warn: [0-9]+ TLS handshakes failed, the last: .* certificate revoked"
done
on cli "$BIN/mminfo" -s $S -q client=cli >"$W/cli-mminfo.out" 2>&1
check "mminfo on revoked cli fails" test $? -ne 0
on cli "$BIN/save" -s $S -c cli "$T" >"$W/cli-save2.out" 2>&1
check "a save from revoked cli fails" test $? -ne 0
# srv tells sn at once; sn fetches the list and its daemons refuse cli
# from then on.
check "srv tells the storage node of the change" \
	logged "revocation list changed: 1 of 1 hosts told"
check "sn's nsrexecd adds srv's revocation" nsr_wait_logged \
	"$ROOT/sn/logs/daemon.log" \
	"1 certificate\(s\) revoked on server srv added to .*/sn/tls/revoked"
check "sn's revocation list names cli" grep -q " cli\$" "$ROOT/sn/tls/revoked"
for d in nsrexecd nsrsnmd; do
	r=$(probe_sn $d 1)
	check "$d on storage node sn refuses revoked cli (rpcprobe exit $r)" \
		test "$r" = 4 -o "$r" = 5
done
check "cl2 (no -S) polls the server that enrolled it" nsr_wait_logged \
	"$ROOT/cl2/logs/daemon.log" \
	"this host was enrolled by server srv: its revocation list is fetched from there every 1 s"
check "cl2's nsrexecd adds srv's revocation" nsr_wait_logged \
	"$ROOT/cl2/logs/daemon.log" \
	"1 certificate\(s\) revoked on server srv added to .*/cl2/tls/revoked"
r=$(probe_cl2)
check "nsrexecd on cl2 refuses revoked cli (rpcprobe exit $r)" \
	test "$r" = 4 -o "$r" = 5
expect_fail "nsrtrust revoke of an unknown host fails" on srv "$BIN/nsrtrust" revoke nosuchhost
nsr_done
