#!/bin/bash
# 467-authz-vouch: a user who cannot read the host's key (nobody, not
# root) reaches the server through nsrexecd, which vouches for the uid
# the kernel gives (SO_PEERCRED): nobody reads resources, but its
# resource update is refused naming nobody@HOST, until the administrator
# list names it; a process of nobody that claims another name
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
check "nobody reads resources through nsrexecd" \
	radmin '. type: NSR client\nprint\n'
check "and sees c1" grep -q 'name: c1;' "$W/out"
expect_fail "nobody's update is refused" \
	radmin '. type: NSR client; name: c1\nupdate parallelism: 9\n'
check "as nobody of this host" \
	grep -q "denied: res update NSR client 'c1' by nobody@" "$W/out"
check "logged" nsr_wait_logged "$LOG" \
	"warn: denied: res update NSR client 'c1' by nobody@"

printf '. type: NSR\nupdate administrator: root@*, nobody@*\n' |
	"$BIN/nsradmin" -s $S -i - >/dev/null 2>&1
check "once the administrator list names nobody, its update is done" \
	radmin '. type: NSR client; name: c1\nupdate parallelism: 9\n'

printf '. type: NSR client\nprint\n' | asnobody env NSR_TEST_USER=root \
	"$BIN/nsradmin" -s $S -i - >"$W/liar" 2>&1
check "nobody claiming to be root is refused" test $? -ne 0
check "and sees no resource" test "$(grep -c 'name: c1;' "$W/liar")" = 0
check "told the stated user is not the vouched one" \
	grep -q "not the one its connection was opened for" "$W/liar"
nsr_done
