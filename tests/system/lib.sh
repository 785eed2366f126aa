# lib.sh - shared helpers for system tests (source it; bash).
#
# Every test runs a private datazone: a temporary root under
# $NSR_TEST_TMPDIR, free loopback ports, and daemons started with -b (they
# return once ready).  Every daemon started here is stopped by pid at exit,
# whatever happens (trap), and so are the children they supervise.
#
#   nsr_setup NAME          make $ROOT, pick ports, export NSR_ROOT and
#                           NSR_PORTMAP_PORT/NSR_EXEC_PORT; sets $BIN
#   nsr_start DAEMON ARGS   start $BIN/DAEMON -b -R $ROOT ARGS
#   nsr_start_datazone      nsrexecd -s (+ nsrsnmd) and nsrd (+ children)
#   nsr_start_aftd_datazone the same with Disk.001 labeled in AFTD aftd1
#   nsr_wait_registered N   wait until daemon N is registered (bounded)
#   nsr_probe N [SECS]      one request to daemon N (nsrd, nsrmmdbd, nsrjobd,
#                           nsrindexd): did it answer?
#   nsr_wait_answers N...   wait until each daemon N answers an RPC (bounded);
#                           (use it after every restart)
#   ok/fail/check           TAP-ish reporting; a failure exits non-zero
#   expect_fail CMD...      CMD must exit non-zero
#   recovers_identical SRC  recover SRC into $W/out and compare
#   nsr_lose_mmdb           delete the media database, restart nsrd
#   nsr_settled             nothing in progress within 10 s
set -u
BIN=${NSR_BIN:?NSR_BIN must point at the build bin directory}
PIDS=()
FAILED=0

ok()   { echo "ok - $*"; }
fail() { echo "not ok - $*"; FAILED=1; }
die()  { echo "FATAL: $*"; FAILED=1; exit 1; }

# check DESC CMD... - run CMD, report ok/not ok.
check() {
	local desc=$1; shift
	if "$@"; then ok "$desc"; else fail "$desc"; fi
}

# expect_fail DESC CMD... - CMD must fail (non-zero exit).
expect_fail() {
	local desc=$1; shift
	if "$@"; then fail "$desc (unexpectedly succeeded)"; else ok "$desc"; fi
}

# free_port - a TCP port nobody listens on (bounded search), below the
# kernel's ephemeral range, so no daemon's "any free port" can take it
# between our choice and nsrexecd binding it.
free_port() {
	local p tries=0 lo
	lo=$(awk '{print $1}' /proc/sys/net/ipv4/ip_local_port_range 2>/dev/null)
	lo=${lo:-32768}
	while [ $tries -lt 200 ]; do
		p=$(( 10000 + (RANDOM % (lo - 10000)) ))
		if ! (exec 3<>/dev/tcp/127.0.0.1/$p) 2>/dev/null; then
			echo $p; return 0
		fi
		tries=$((tries + 1))
	done
	die "no free port found"
}

nsr_setup() {
	local base=${NSR_TEST_TMPDIR:-/tmp}
	mkdir -p "$base"
	ROOT=$(mktemp -d "$base/$1.XXXXXX")
	export NSR_ROOT=$ROOT
	export NSR_EXEC_PORT=$(free_port)
	export NSR_PORTMAP_PORT=$(free_port)
	while [ "$NSR_PORTMAP_PORT" = "$NSR_EXEC_PORT" ]; do
		NSR_PORTMAP_PORT=$(free_port)
	done
	export NSR_CONNECT_TIMEOUT_MS=3000
	# nsrd checks its session tallies against its table (benchmarks
	# turn it off: it costs a pass per session).
	export NSR_TEST_TALLY_CHECK=${NSR_TEST_TALLY_CHECK-1}
	trap nsr_cleanup EXIT
	echo "# root $ROOT, locator port $NSR_PORTMAP_PORT"
}

# nsr_start DAEMON ARGS... - start a daemon in the background, remember pid.
nsr_start() {
	local d=$1; shift
	"$BIN/$d" -b -R "$ROOT" "$@" || die "$d did not start (see $ROOT/logs/daemon.log)"
	PIDS+=("$(cat "$ROOT/logs/$d.pid")")
}

# nsr_start_datazone - nsrexecd -s (with the array NSR_EXECD_ARGS added,
# e.g. -S SERVER) and nsrd (with the array NSRD_ARGS added, e.g. -U USER)
# with its children, all answering.
nsr_start_datazone() {
	nsr_start nsrexecd -s "${NSR_EXECD_ARGS[@]}"
	nsr_start nsrd "${NSRD_ARGS[@]}"
	nsr_wait_registered nsrmmdbd
	nsr_wait_registered nsrjobd
	nsr_wait_registered nsrindexd
	nsr_wait_registered nsrsnmd
	nsr_wait_answers nsrd nsrmmdbd nsrjobd nsrindexd
}

# nsr_start_aftd_datazone - the datazone with device aftd1, an AFTD in
# $W/aftd1, holding volume Disk.001 of pool Default.
nsr_start_aftd_datazone() {
	mkdir -p "$W/aftd1"
	nsr_start_datazone
	nsr_device aftd1 adv_file "$W/aftd1"
	check "label Disk.001" "$BIN/nsrmm" -s "${S:-127.0.0.1}" -q -l -y \
		-b Default -f aftd1 Disk.001
}

# nsr_device NAME TYPE PATH [ATTRS] - create an NSR device resource on
# the datazone's server ($S, default 127.0.0.1); ATTRS are more
# "attribute: value" pairs separated by "; ".  A refusal fails the test.
nsr_device() {
	local extra=${4:+; $4}
	printf 'create type: NSR device; name: %s; media type: %s; device access information: %s%s\n' \
		"$1" "$2" "$3" "$extra" |
		"$BIN/nsradmin" -s "${S:-127.0.0.1}" -i - >/dev/null 2>&1 ||
		fail "create device $1 ($2 $3)"
}

# nsr_wait_registered NAME - wait (<= 20 s) until the NAME whose pid is in
# its pid file runs and has logged "started, version" (it registers before
# that; nsrsnmd logs "started the mover template" earlier, which does not
# count).
# Only that pid's line counts: the log also holds the lines of any NAME
# that ran on this root before a restart.
nsr_wait_registered() {
	local i=0 p
	while [ $i -lt 200 ]; do
		p=$(cat "$ROOT/logs/$1.pid" 2>/dev/null)
		if [ -n "$p" ] && kill -0 "$p" 2>/dev/null &&
		   grep -qF "$1[$p]: info: started, version" "$ROOT/logs/daemon.log" 2>/dev/null; then
			return 0
		fi
		sleep 0.1; i=$((i + 1))
	done
	die "$1 did not start within 20 s"
}

# nsr_probe NAME [SECS] - one request to daemon NAME of this datazone, at
# 127.0.0.1 ($S means other things in some tests), given at most SECS
# (default 5) seconds.  Succeeds when NAME answered, whatever the answer
# says (an empty database answers too); fails while NAME is not
# registered, is registered at a port nobody serves, or does not reply.
nsr_probe() {
	local s=127.0.0.1 t=${2:-5} out
	case $1 in
	nsrd)
		printf 'print type: NSR\n' |
			timeout "$t" "$BIN/nsradmin" -s "$s" -i - >/dev/null 2>&1 ;;
	nsrmmdbd)
		out=$(timeout "$t" "$BIN/mminfo" -s "$s" -a 2>&1) && return 0
		grep -q "no matches found" <<<"$out" ;;
	nsrjobd)
		out=$(printf 'print job id: 0\n' |
			timeout "$t" "$BIN/jobquery" -s "$s" 2>&1) && return 0
		grep -q "No jobs found" <<<"$out" ;;
	nsrindexd)
		# Only nsrindexd says this; the client name cannot be a host's.
		out=$(timeout "$t" "$BIN/recover" -s "$s" -c nsr-probe.invalid \
			-a /nsr-probe -d "$ROOT/probe" 2>&1)
		grep -q "no file index for client" <<<"$out" ;;
	*)
		die "nsr_probe: no request known for $1" ;;
	esac
}

# nsr_wait_answers NAME... - wait until every daemon NAME answers a request
# (nsr_probe), 20 s at most in all (NSR_WAIT_ANSWERS_SEC: more, where a
# test kills daemons so often that their supervisor's back-off grows).  A started or registered daemon is not
# enough after a restart by another daemon (nsrd restarting its children,
# nsrd itself restarted): a client run at once can find the old
# registration or none.  Correct whether or not "-b" waits for children.
nsr_wait_answers() {
	local d left limit=${NSR_WAIT_ANSWERS_SEC:-20} end
	end=$((SECONDS + limit))
	for d in "$@"; do
		while :; do
			left=$((end - SECONDS))
			[ $left -gt 0 ] ||
				die "$d does not answer within $limit s (see $ROOT/logs/daemon.log)"
			[ $left -le 5 ] || left=5
			nsr_probe "$d" $left && break
			sleep 0.1
		done
	done
}

# recovers_identical SRC [RECOVER ARGS] - recover SRC into $W/out (by
# path, or with the arguments given, e.g. -S ssid) from server $S and
# compare the tree with SRC.
recovers_identical() {
	local src=$1
	shift
	[ $# -gt 0 ] || set -- -a "$src"
	rm -rf "$W/out"
	mkdir -p "$W/out"
	"$BIN/recover" -s "${S:-127.0.0.1}" -q -f -d "$W/out" "$@" >/dev/null 2>&1 &&
		"$BIN/nsrtreecmp" "$src" "$W/out$src" >/dev/null 2>&1
}

# nsr_stop_all - stop every daemon we started, newest first (SIGTERM,
# then SIGKILL after 10 s each), and forget them: a test that loses its
# server starts anew after this.
nsr_stop_all() {
	local p i
	for (( i=${#PIDS[@]}-1; i>=0; i-- )); do
		p=${PIDS[$i]}
		kill -TERM "$p" 2>/dev/null
	done
	for p in "${PIDS[@]}"; do
		for i in $(seq 1 100); do
			kill -0 "$p" 2>/dev/null || break
			sleep 0.1
		done
		kill -KILL "$p" 2>/dev/null
	done
	PIDS=()
}

# nsr_kill_nsrd - SIGKILL of nsrd; waits (10 s at most each) until it and
# its database daemons, which the kernel stops when it dies, are gone.
nsr_kill_nsrd() {
	local d p i
	p=$(cat "$ROOT/logs/nsrd.pid")
	kill -KILL "$p"
	for i in $(seq 1 100); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
	for d in nsrmmdbd nsrindexd nsrjobd; do
		p=$(cat "$ROOT/logs/$d.pid" 2>/dev/null)
		for i in $(seq 1 100); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
	done
}

# nsr_lose_mmdb - the media database is lost: nsrd stopped (SIGTERM; it
# stops nsrmmdbd), <root>/mm deleted, nsrd started again and its
# database daemons answering.
nsr_lose_mmdb() {
	local p i
	p=$(cat "$ROOT/logs/nsrd.pid")
	kill -TERM "$p"
	for i in $(seq 1 300); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
	rm -rf "$ROOT/mm"
	nsr_start nsrd
	nsr_wait_answers nsrd nsrmmdbd nsrjobd nsrindexd
}

# nsr_cleanup - stop every daemon we started (their children stop with them).
nsr_cleanup() {
	nsr_stop_all
	if [ "$FAILED" != 0 ] && [ -f "$ROOT/logs/daemon.log" ]; then
		echo "# --- daemon.log ---"; tail -n 60 "$ROOT/logs/daemon.log" | sed 's/^/# /'
	fi
	if [ "$FAILED" = 0 ] && [ -z "${NSR_KEEP:-}" ]; then rm -rf "$ROOT"; fi
}

# nsr_done - end of a test: exit status says whether anything failed.
# nsr_tree_files - the source tree's files, NUL-separated, relative to
# the top (run from there): what git tracks, or, outside a git checkout,
# every file but build output.
nsr_tree_files() {
	if command -v git >/dev/null &&
	   [ "$(git rev-parse --show-toplevel 2>/dev/null)" = "$(pwd -P)" ]; then
		git ls-files -z
	else
		find . \( -name .git -o -path './build*' -o -path ./datazone \
			-o -path ./bench-results \) -prune -o -type f \
			! -name '*.o' ! -name '*.swp' ! -name compile_commands.json \
			-print0 | sed -z 's|^\./||'
	fi
}

# nsr_copies SSID - "cloneid:clflags:volume" of each copy of the save set
# and volume it is on (mminfo -xj), on the server $S.
nsr_copies() {
	"$BIN/mminfo" -s "${S:-127.0.0.1}" -a -q "ssid=$1" -xj \
		-r cloneid,clflags,volume 2>/dev/null | tr -d '\n' | tr '}' '\n' |
		sed -nE 's/.*"cloneid": *"?([0-9]+)"?.*"clflags": *"([a-z]*)".*"volume": *"([^"]*)".*/\1:\2:\3/p'
}

# nsr_wait_logged LOG REGEX - LOG shows REGEX (an extended regexp)
# within 10 s (daemons log some events in summaries, a little later).
nsr_wait_logged() {
	local i
	for i in $(seq 1 100); do
		grep -Eq "$2" "$1" 2>/dev/null && return 0
		sleep 0.1
	done
	return 1
}

# nsr_settled - nothing is in progress in the media database within 10 s
# (asked every 0.1 s).
nsr_settled() {
	local i left
	for i in $(seq 1 100); do
		left=$("$BIN/mminfo" -s "${S:-127.0.0.1}" -a -q inprogress \
			-r ssid 2>/dev/null | awk '$1 ~ /^[0-9]+$/')
		[ -z "$left" ] && return 0
		sleep 0.1
	done
	return 1
}

nsr_done() {
	if [ "$FAILED" = 0 ]; then echo "# all checks passed"; exit 0; fi
	echo "# some checks FAILED"; exit 1
}
