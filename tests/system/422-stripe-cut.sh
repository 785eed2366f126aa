#!/bin/bash
# 422-stripe-cut: a connection of a striped save is cut (reset with
# ss -K) while the session is open: first one that joined (the mover
# fails the session: stripe.c invariant 4), then the session's own.
# Each time save exits non-zero saying its save set was marked aborted,
# nsrd settles the save set as aborted, its job fails and its slot is
# freed (server parallelism 1: the next save is admitted at once), the
# AFTD keeps no partial session file, and the next striped save
# completes and recovers identical.  The save stalls after its first file
# (NSR_TEST_SAVE_STALL_SEC) so the cut lands mid-session.  Needs a
# kernel that destroys sockets on request (ss -K); skips otherwise.
. "$(dirname "$0")/lib.sh"
nsr_setup 422-stripe-cut
S=127.0.0.1
W=$ROOT/work
T=$W/tree
command -v ss >/dev/null || { echo "# skipped: no ss (iproute2)"; exit 0; }
# The cut is of TCP connections (a save from another host): not through
# local sockets, which save would take on this host; the daemons, with
# it in their environment too, listen on none.
export NSR_LOCAL_SOCKETS=0
nsr_start_aftd_datazone
check "with NSR_LOCAL_SOCKETS=0 the daemons listen on no local socket" \
	test -z "$(ls -A "$ROOT/sockets" 2>/dev/null)"
check "and say so" grep -q "no local socket for port [0-9]* (NSR_LOCAL_SOCKETS=0)" \
	"$ROOT/logs/daemon.log"
printf '. type: NSR\nupdate parallelism: 1\n' |
	"$BIN/nsradmin" -s $S -i - >/dev/null 2>&1
mkdir -p "$T/a" "$T/b"
printf 'first\n' >"$T/a/first"
head -c 24000000 /dev/urandom >"$T/b/big.bin"

# conns PID - "inode local-port peer-port" of PID's established TCP
# connections.
conns() {
	ss -Htnpe state established 2>/dev/null | grep "pid=$1," |
		awk '{ split($3, l, ":"); split($4, p, ":");
		       if (match($0, /ino:[0-9]+/))
			       print substr($0, RSTART + 4, RLENGTH - 4),
				     l[length(l)], p[length(p)] }'
}
# mover_port PID - the port four or more of PID's connections go to.
mover_port() {
	conns "$1" | awk '{n[$3]++} END {for (p in n) if (n[p] >= 4) print p}'
}
# cut_conn PORT SPORT - reset the connection from SPORT to PORT; true
# when it is gone.
cut_conn() {
	ss -K -t dst 127.0.0.1 dport = ":$1" sport = ":$2" >/dev/null 2>&1
	! ss -Htn state established 2>/dev/null |
		grep -q "127.0.0.1:$2 *127.0.0.1:$1"
}
# ssid_of NAME - the newest save set named NAME.
ssid_of() {
	"$BIN/mminfo" -s $S -a -q "name=$1" -r ssid 2>/dev/null |
		awk '$1 ~ /^[0-9]+$/ {s = $1} END {print s}'
}

# joined_ports NAME - the ports the joined connections of the session of
# save set NAME came from, as the mover logged them.
joined_ports() {
	local ssid
	ssid=$(grep -o "save set [0-9]* ([^:]*:$1, level" "$ROOT/logs/daemon.log" |
		awk '{print $3}' | tail -n 1)
	[ -n "$ssid" ] || return 0
	grep -o "save set $ssid: connection [0-9]* joined from [0-9.]*:[0-9]*" \
		"$ROOT/logs/daemon.log" | sed 's/.*://'
}

# cut_round NAME WHICH - a striped save named NAME whose connection to
# the mover WHICH (joined: one that joined the session; own: the
# session's own) is cut.
cut_round() {
	local name=$1 which=$2 spid mp sport="" joined p i rc flags jq
	NSR_TEST_SAVE_STALL_SEC=6 "$BIN/save" -s $S -v --stripes=4 \
		-N "$name" "$T" >"$W/$name.out" 2>&1 &
	spid=$!
	mp=""
	for i in $(seq 1 100); do
		mp=$(mover_port $spid)
		[ -n "$mp" ] && break
		kill -0 $spid 2>/dev/null || break
		sleep 0.05
	done
	check "$name: the save holds four connections to the mover" \
		test -n "$mp"
	# The mover logs the ports the joined connections came from; the
	# save's other connection to it is the session's own.
	joined=""
	for i in $(seq 1 100); do
		joined=$(joined_ports "$name")
		[ "$(wc -w <<<"$joined")" -ge 3 ] && break
		sleep 0.05
	done
	check "$name: the mover logs three connections joining" \
		test "$(wc -w <<<"$joined")" -eq 3
	for p in $(conns $spid | awk -v mp="$mp" '$3 == mp {print $2}'); do
		if grep -qw "$p" <<<"$joined"; then
			[ "$which" = joined ] && sport=$p
		else
			[ "$which" = own ] && sport=$p
		fi
	done
	if [ -z "$sport" ] || ! cut_conn "$mp" "$sport"; then
		kill -KILL $spid 2>/dev/null
		wait $spid 2>/dev/null
		echo "# skipped: this kernel does not destroy sockets (ss -K)"
		nsr_done
	fi
	ok "$name: the $which connection to the mover is cut"
	for i in $(seq 1 1200); do
		kill -0 $spid 2>/dev/null || break
		sleep 0.1
	done
	kill -KILL $spid 2>/dev/null
	wait $spid
	rc=$?
	check "$name: save exits non-zero (exit $rc)" test $rc -ne 0
	check "$name: and says its save set was marked aborted" \
		grep -q "save of $name failed; save set [0-9]* was marked aborted" \
		"$W/$name.out"
	sed 's/^/#   save: /' "$W/$name.out" | grep -v "$T" | tail -n 3
	check "$name: nothing is left in progress within 10 s" nsr_settled
	flags=$("$BIN/mminfo" -s $S -a -q "name=$name" -r sumflags \
		2>/dev/null | tail -n 1 | tr -d ' ')
	check "$name: its save set is aborted (sumflags '$flags')" \
		grep -q a <<<"$flags"
	jq=$(printf 'print type: save job; name: %s\n' "$name" |
		"$BIN/jobquery" -s $S 2>&1)
	check "$name: its job is finished as failed" grep -qi "failed" <<<"$jq"
	check "$name: the AFTD keeps no partial session file" \
		test -z "$(find "$W/aftd1" -name '*.part')"
	timeout 60 "$BIN/save" -s $S -v --stripes=4 -N "$name-next" "$T" \
		>"$W/$name-next.out" 2>&1
	check "$name: the next striped save is admitted and completes" \
		test $? -eq 0
	check "$name: without waiting for a slot, over 4 connections" \
		sh -c "! grep -q 'server parallelism' '$W/$name-next.out' &&
			grep -q 'over 4 connections' '$W/$name-next.out'"
	check "$name: and recovers identical" \
		recovers_identical "$T" -S "$(ssid_of "$name-next")"
}

cut_round joined joined
check "the mover failed the session when the joined connection closed" \
	grep -q "save set 1: a connection of the striped session closed before the session ended" \
	"$ROOT/logs/daemon.log"
cut_round own own
check "and aborted it when the session's own connection closed" \
	grep -q "save set 3 (.*:own) aborted: the client connection closed before the session ended" \
	"$ROOT/logs/daemon.log"
check "(not a joined one)" \
	sh -c "! grep -q 'save set 3: a connection of the striped session closed' \
		'$ROOT/logs/daemon.log'"
nsr_done
