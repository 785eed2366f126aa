# datazone.sh - sourced by the benchmark scripts that run a datazone on
# loopback (sessions/run-sessions.sh, save/run-save.sh): free ports for
# the locator and nsrexecd (exported), a STARTED list of pids stopped in
# reverse order at exit (also on failure or interrupt), and now.
# Source it with BIN (a bin directory) and DIR (the work directory) set:
# both become absolute, DIR is made, ROOT=$DIR/root is the datazone's
# root (NSR_ROOT).  Add each daemon's pid to STARTED.
BIN=$(cd "$BIN" && pwd)
mkdir -p "$DIR" && DIR=$(cd "$DIR" && pwd)
ROOT=$DIR/root
export NSR_ROOT=$ROOT
STARTED=()

# free_port - a loopback port nobody listens on.
free_port() {
	local p
	for _ in $(seq 1 200); do
		p=$(( 20000 + RANDOM % 12000 ))
		(exec 3<>/dev/tcp/127.0.0.1/$p) 2>/dev/null || { echo $p; return; }
	done
	echo "$0: no free port" >&2; exit 1
}
export NSR_PORTMAP_PORT=$(free_port) NSR_EXEC_PORT=$(free_port)

# cleanup - stop every started daemon by pid (TERM, then KILL).
cleanup() {
	local i p
	for (( i=${#STARTED[@]}-1; i>=0; i-- )); do
		kill -TERM "${STARTED[$i]}" 2>/dev/null
	done
	for p in "${STARTED[@]}"; do
		for _ in $(seq 1 100); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
		kill -KILL "$p" 2>/dev/null
	done
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# now - seconds with nanoseconds.
now() { date +%s.%N; }
