#!/bin/bash
# 467-authz-vouch: a user who cannot read the host's key (nobody, not
# root) is known by the uid the kernel gives (SO_PEERCRED), on either
# path a process of this host has to the server: this host's local
# socket (nsr/rpc.h, "Same-host connections"; shown with nsrexecd's
# vouching socket moved away, so nothing else could carry the calls),
# and, with NSR_LOCAL_SOCKETS=0, TCP through nsrexecd, which vouches
# for that uid.  On each: nobody reads resources, but its resource
# update is refused naming nobody@HOST, until the administrator list
# names it; a process of nobody that claims another name
# (NSR_TEST_USER=root) is refused outright.  Needs root (to run as
# nobody; skipped otherwise).
. "$(dirname "$0")/lib.sh"
[ "$(id -u)" = 0 ] || { echo "# not root: skipped"; exit 77; }
command -v setpriv >/dev/null || { echo "# no setpriv: skipped"; exit 77; }
id nobody >/dev/null 2>&1 || { echo "# no user nobody: skipped"; exit 77; }
nsr_setup 467-authz-vouch
S=127.0.0.1
W=$ROOT/work
mkdir -p "$W"
chmod 0755 "$ROOT"
chmod 0777 "$W"
LOG=$ROOT/logs/daemon.log
nsr_start_datazone
check "nsrexecd vouches on its socket" test -S "$ROOT/nsrexecd.sock"
check "the host's key stays unreadable to others" \
	test "$(stat -c %a "$ROOT/tls/host.key")" = 600

# asnobody CMD... - CMD run as nobody (no TLS key it can read).
asnobody() {
	setpriv --reuid=nobody --regid=nogroup --clear-groups \
		env NSR_ROOT="$ROOT" "$@"
}
# radmin TEXT - nsradmin -i - as nobody; output in $W/out.
radmin() {
	printf '%b' "$1" | asnobody "$BIN/nsradmin" -s $S -i - >"$W/out" 2>&1
}

check "root creates client c1" "$BIN/nsradmin" -s $S -i - \
	< <(printf 'create type: NSR client; name: c1\n')
# logged_since LINE REGEX - the log from LINE on shows REGEX within 10 s.
logged_since() {
	local i
	for i in $(seq 1 100); do
		tail -n "+$1" "$LOG" | grep -Eq "$2" && return 0
		sleep 0.1
	done
	return 1
}

# round NAME WHY - the checks, nobody's calls taking the path NAME
# names; WHY: what a refused claim to be root is told.
round() {
	local via=$1 from
	from=$(($(wc -l <"$LOG") + 1))
	check "$via: nobody reads resources" \
		radmin '. type: NSR client\nprint\n'
	check "$via: and sees c1" grep -q 'name: c1;' "$W/out"
	expect_fail "$via: nobody's update is refused" \
		radmin '. type: NSR client; name: c1\nupdate parallelism: 9\n'
	check "$via: as nobody of this host" \
		grep -q "denied: res update NSR client 'c1' by nobody@" "$W/out"
	check "$via: logged" logged_since "$from" \
		"warn: denied: res update NSR client 'c1' by nobody@"
	printf '. type: NSR\nupdate administrator: root@*, nobody@*\n' |
		"$BIN/nsradmin" -s $S -i - >/dev/null 2>&1
	check "$via: named an administrator, nobody's update is done" \
		radmin '. type: NSR client; name: c1\nupdate parallelism: 9\n'
	printf '. type: NSR\nupdate administrator: root@*\n' |
		"$BIN/nsradmin" -s $S -i - >/dev/null 2>&1

	printf '. type: NSR client\nprint\n' |
		asnobody env NSR_TEST_USER=root \
		"$BIN/nsradmin" -s $S -i - >"$W/liar" 2>&1
	check "$via: nobody claiming to be root is refused" test $? -ne 0
	check "$via: and sees no resource" \
		test "$(grep -c 'name: c1;' "$W/liar")" = 0
	check "$via: told why" grep -q "$2" "$W/liar"
}

mv "$ROOT/nsrexecd.sock" "$ROOT/nsrexecd.sock.away"
# A claim the kernel would contradict is not even sent on the local
# socket (test_local shows the daemon refuses it there): the program
# goes over TCP, where without the host's key it has no TLS.
round "local socket" "needs TLS"
mv "$ROOT/nsrexecd.sock.away" "$ROOT/nsrexecd.sock"
export NSR_LOCAL_SOCKETS=0
round "nsrexecd" "not the one its connection was opened for"
nsr_done
