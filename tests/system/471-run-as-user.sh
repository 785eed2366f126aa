#!/bin/bash
# 471-run-as-user: nsrd -U USER runs the database daemons (media
# database, client file indexes, jobs) as USER, not root, and nsrexecd
# -s -U USER the data movers (needs root; skipped otherwise).
#  - nsrmmdbd, nsrindexd, nsrjobd and the movers run with USER's uid and
#    gid (all four: real, effective, saved, file system) and without
#    root's groups; nsrd, nsrexecd and nsrsnmd stay root; the daemons run
#    as USER listen on their local sockets as root's do (bound before
#    root is given up), a save reaches its mover there, and a mover's
#    socket, which it cannot remove from root's sockets/ itself, is gone
#    once nsrsnmd has reaped the mover;
#  - the AFTD's directory, given to USER by the administrator, holds the
#    label and session files the movers write, all USER's;
#  - the media database, the client file indexes and the jobs database
#    belong to USER, the resource database is readable to USER's group
#    only, the private keys stay root's alone (mode 0600);
#  - a save, mminfo, nsrinfo, jobquery, a recover, an administrator's
#    deletion of a save set (nsrmm -d, checked against the policy
#    nsrmmdbd reads) and a bootstrap (the databases' snapshots into the
#    staging directory) work;
#  - a device the user cannot write: labelling it fails, naming the user,
#    the path and the chown that fixes it, and creates nothing there;
#  - nsrmmdbd -u root and -u of a user that does not exist refuse to
#    start, saying why, and so do nsrd -U and nsrexecd -U, and nsrd -U
#    started by a user that is not root; a daemon that needs root
#    (nsrexecd) has no -u.
. "$(dirname "$0")/lib.sh"
[ "$(id -u)" = 0 ] || { echo "# SKIP: needs root"; exit 77; }
U=nobody
id "$U" >/dev/null 2>&1 || { echo "# SKIP: no user $U"; exit 77; }
UID_=$(id -u "$U") GID_=$(id -g "$U")
command -v runuser >/dev/null || { echo "# SKIP: no runuser"; exit 77; }
# The user must reach the datazone's root: when the test directory's
# parents are closed to it (a checkout in root's home), the root goes
# under /tmp instead.
OWNTMP=""
base=${NSR_TEST_TMPDIR:-/tmp}
mkdir -p "$base"
if ! runuser -u "$U" -- test -x "$base"; then
	OWNTMP=$(mktemp -d /tmp/nsr-471.XXXXXX)
	chmod 0711 "$OWNTMP"
	export NSR_TEST_TMPDIR=$OWNTMP
fi
nsr_setup 471-run-as-user
S=127.0.0.1
W=$ROOT/work
chmod 0711 "$ROOT" # mktemp made it 0700
check "the user can reach the root" runuser -u "$U" -- test -x "$ROOT"
mkdir -p "$W/data/d"
head -c 300000 /dev/urandom >"$W/data/d/f1"
echo hello >"$W/data/f2"
NSRD_ARGS=(-U "$U")
NSR_EXECD_ARGS=(-U "$U")
mkdir -p "$W/aftd1"
chown "$U" "$W/aftd1" # the administrator's step for a mover run as $U
nsr_start_aftd_datazone

# ids - "real effective saved fs" uid and gid lines of a pid.
ids() {
	awk '/^Uid:|^Gid:/ { print $2, $3, $4, $5 }' "/proc/$1/status" | tr '\n' ' '
}
for d in nsrmmdbd nsrindexd nsrjobd; do
	p=$(cat "$ROOT/logs/$d.pid")
	check "$d runs as $U ($(ids "$p"))" \
		test "$(ids "$p")" = "$UID_ $UID_ $UID_ $UID_ $GID_ $GID_ $GID_ $GID_ "
	check "$d has none of root's groups" \
		test "$(awk '/^Groups:/ { $1 = ""; print }' "/proc/$p/status" |
			tr ' ' '\n' | grep -cx 0)" = 0
done
for d in nsrd nsrexecd nsrsnmd; do
	p=$(cat "$ROOT/logs/$d.pid")
	check "$d stays root" test "$(awk '/^Uid:/ { print $3 }' "/proc/$p/status")" = 0
done
check "the log says so" grep -q "nsrmmdbd\[[0-9]*\]: info: running as $U (uid $UID_" \
	"$ROOT/logs/daemon.log"
# Their local sockets are bound in root's sockets/ before root is given
# up: clients on this host reach them there, without TLS, as root's.
check "a daemon run as $U listens on its local socket" grep -q \
	"nsrmmdbd\[[0-9]*\]: info: started, .* and on its local socket" \
	"$ROOT/logs/daemon.log"
check "nsrd listens on its local socket" grep -q \
	"nsrd\[[0-9]*\]: info: started, .* and on its local socket" \
	"$ROOT/logs/daemon.log"

check "save" "$BIN/save" -s $S -q "$W/data"
movers=$("$BIN/nsrwatch" -s $S -x json 2>/dev/null |
	grep -o '"device":"aftd1","pid":[0-9]*' | grep -o '[0-9]*$')
check "a mover of aftd1 is there ($(echo $movers))" test -n "$movers"
for p in $movers; do
	check "mover $p runs as $U ($(ids "$p"))" \
		test "$(ids "$p")" = "$UID_ $UID_ $UID_ $UID_ $GID_ $GID_ $GID_ $GID_ "
done
check "the save reached its mover on the mover's local socket" grep -Eq \
	"nsrmmd\.[0-9]+\[[0-9]+\]: info: save set [0-9]+ \(.*:$W/data, .* from local pid" \
	"$ROOT/logs/daemon.log"
# A mover ends (as when idle): nsrsnmd, root, removes the socket it
# could not remove itself.
mp=$(echo $movers | awk '{ print $1 }')
mport=$(grep -E "nsrmmd\.[0-9]+\[$mp\]: info: started, " "$ROOT/logs/daemon.log" |
	sed -n 's/.* port \([0-9]*\) and on its local socket.*/\1/p' | head -1)
check "the mover's local socket is there (port ${mport:-?})" \
	test -S "$ROOT/sockets/${mport:-x}"
kill "$mp" 2>/dev/null
for _ in $(seq 1 100); do
	[ -e "$ROOT/sockets/${mport:-x}" ] || break
	sleep 0.1
done
check "and gone once nsrsnmd reaped the mover" \
	test ! -e "$ROOT/sockets/${mport:-x}"
check "the AFTD's label and session files are $U's" \
	test -n "$(ls "$W/aftd1")" -a \
	-z "$(find "$W/aftd1" ! -user "$U" -print | head -1)"
check "the media database belongs to $U" \
	test -z "$(find "$ROOT/mm" ! -user "$U" -print | head -1)"
check "the client indexes belong to $U" \
	test -z "$(find "$ROOT/index" ! -user "$U" -print | head -1)"
check "the jobs database belongs to $U" \
	test -z "$(find "$ROOT/jobs" ! -user "$U" -print | head -1)" -a \
	-f "$ROOT/jobs/jobsdb"
check "jobquery shows the save job" grep -q "$W/data" \
	<<<"$(printf 'show name\nprint type: save job\n' | "$BIN/jobquery" 2>&1)"
check "the resource database: group $GID_, setgid directory, files 0640" \
	test "$(stat -c '%g %a' "$ROOT/res/nsrdb")" = "$GID_ 2750" -a \
	-z "$(find "$ROOT/res/nsrdb" -type f ! -name .lock ! -perm 0640 -print | head -1)"
check "the private keys stay root's, 0600" \
	test "$(stat -c '%u %a' "$ROOT/tls/host.key")" = "0 600"
out=$("$BIN/mminfo" -s $S -q "name=$W/data" -r ssid 2>&1)
ssid=$(echo "$out" | awk '$1 ~ /^[0-9]+$/ { print $1; exit }')
check "mminfo lists the save set ($ssid)" test -n "$ssid"
check "nsrinfo lists the files" grep -q "$W/data/d/f1" \
	<<<"$("$BIN/nsrinfo" -s $S "$(hostname)" 2>&1)"
mkdir -p "$W/out"
check "recover" "$BIN/recover" -s $S -a -d "$W/out" "$W/data"
check "identical" cmp -s "$W/data/d/f1" "$W/out$W/data/d/f1"
check "a bootstrap (nsrmmdbd's snapshot into the staging directory)" \
	"$BIN/nsrbootstrap" -s $S
check "an administrator deletes the save set" \
	"$BIN/nsrmm" -s $S -q -d -y -S "$ssid"
check "mminfo no longer lists it" \
	test -z "$("$BIN/mminfo" -s $S -q "ssid=$ssid" -r ssid 2>/dev/null |
		awk '$1 ~ /^[0-9]+$/')"

# A device the administrator did not give to the user: labelling fails,
# naming the device and what to do, and the datazone goes on.
mkdir -p "$W/aftd2"
chmod 0755 "$W/aftd2"
nsr_device aftd2 adv_file "$W/aftd2"
out=$("$BIN/nsrmm" -s $S -q -l -y -f aftd2 AFTD2 2>&1); rc=$?
echo "# nsrmm -l on aftd2: $out"
check "labelling a device $U cannot write fails (exit $rc)" test $rc -ne 0
check "naming the device" grep -q "$W/aftd2" <<<"$out"
check "and saying the movers run as $U" grep -q "runs as $U" <<<"$out"
check "nothing was created there" test -z "$(ls -A "$W/aftd2")"
check "a save to aftd1 still works" "$BIN/save" -s $S -q -b Default "$W/data"
# One the user cannot even look at (its directory closed to it).
mkdir -p "$W/closed/aftd3"
chmod 0700 "$W/closed"
nsr_device aftd3 adv_file "$W/closed/aftd3"
out=$("$BIN/nsrmm" -s $S -q -l -y -f aftd3 AFTD3 2>&1); rc=$?
echo "# nsrmm -l on aftd3: $out"
check "labelling a device $U cannot reach fails (exit $rc)" test $rc -ne 0
check "saying who the mover runs as, and the path" \
	grep -q "runs as $U.*$W/closed/aftd3" <<<"$out"

out=$("$BIN/nsrmmdbd" -R "$ROOT/other" -u root 2>&1); rc=$?
check "nsrmmdbd -u root refuses (exit $rc)" test $rc -ne 0
check "saying why" grep -q "that is root" <<<"$out"
out=$("$BIN/nsrmmdbd" -R "$ROOT/other" -u no-such-user-471 2>&1); rc=$?
check "nsrmmdbd -u of no user refuses (exit $rc)" test $rc -ne 0
check "saying why" grep -q "no such user" <<<"$out"
"$BIN/nsrexecd" -R "$ROOT/other" -u "$U" >/dev/null 2>&1
check "nsrexecd has no -u (exit 2)" test $? -eq 2
out=$("$BIN/nsrexecd" -R "$ROOT/other" -s -U no-such-user-471 2>&1); rc=$?
check "nsrexecd -U of no user refuses at once (exit $rc)" test $rc -eq 2
check "saying why" grep -q "no-such-user-471: no such user" <<<"$out"
out=$("$BIN/nsrd" -R "$ROOT/other" -U root 2>&1); rc=$?
check "nsrd -U root refuses at once (exit $rc)" test $rc -eq 2
check "saying why" grep -q "that is root" <<<"$out"
out=$(runuser -u "$U" -- "$BIN/nsrd" -R "$ROOT/other" -U "$U" 2>&1); rc=$?
check "nsrd -U as a user that is not root refuses at once (exit $rc)" \
	test $rc -eq 2
check "saying why" grep -q "needs root" <<<"$out"
if [ -n "$OWNTMP" ]; then
	# nsr_cleanup removes the root on success; its parent then goes too
	trap 'nsr_cleanup; rmdir "$OWNTMP" 2>/dev/null' EXIT
fi
nsr_done
