#!/bin/bash
# run-admission.sh - N concurrent sessions admitted by nsrd at once.
#
# A single-host datazone under DIR on free loopback ports, one AFTD
# (target sessions 64, max sessions 1024, max nsrmmd count 32) with a
# labeled volume, server parallelism P.  bench_admission opens N
# connections to nsrd, releases them together, and each SAVE_STARTs a
# save set of its own client (C clients, default N: one session each, so
# only the server limit applies); once all run, each ends with SAVE_END
# (aborted: no data; the data path is benchmarked by ../sessions).
# Measured: admission latency p50/p99/max (the driver), the time from
# the release to the last admission, without -H the ends (SAVE_END p50
# and p99, and ends_s: first SAVE_END to last answer), nsrd's CPU time
# (user + system, from /proc/PID/stat, over the run) and its peak RSS
# (VmHWM from /proc/PID/status, at the end); the CPU each daemon and the
# driver used over the whole run (others_cpu_s, driver_cpu_s) and from
# the release to the last admission (admit_cpu_ms).  Targets: peak RSS <= 128 MB, p99 <= 50
# ms at N = P = 1024.
#
#   run-admission.sh [-a] [-q] [-n N] [-p P] [-c C] [-r RUNS] [-H MS]
#                    -b BINDIR -t TESTBIN -d DIR
#     -a        one driver thread for all sessions (bench_admission -a),
#               as clients on other hosts would load the server; by
#               default one driver thread per session
#     -q        quick: N = P = 128, 1 run
#     -n N      sessions (default 1024)
#     -p P      server parallelism (default 1024)
#     -c C      clients (default N)
#     -r RUNS   runs, each on the same datazone (default 3)
#     -H MS     each session ends MS ms after it started, instead of
#               when all N run (needed when P < N: the queue then moves)
#     -b BINDIR a release build's bin directory
#     -t TESTBIN the build's tests/bench directory (bench_admission)
#     -d DIR    work directory (the datazone root, the volume)
#
# The environment reaches the daemons: NSR_MOVER_TEMPLATE=0 has nsrsnmd
# fork+exec each mover instead of forking it from its mover template
# (the first burst's comparison in RESULTS.md, 2026-11-29 08:19).
#
# Every process it starts is stopped by pid at exit, also on failure
# (tests/system/lib.sh); the datazone's root DIR/admission.* is removed
# unless a run failed.
set -u
N=1024 P=1024 C="" RUNS=3 BIN="" TB="" DIR="" HOLD="" ASYNC=""
while getopts "aqn:p:c:r:H:b:t:d:" o; do
	case $o in
	a) ASYNC=-a ;;
	q) N=128 P=128 RUNS=1 ;;
	n) N=$OPTARG ;;
	p) P=$OPTARG ;;
	c) C=$OPTARG ;;
	r) RUNS=$OPTARG ;;
	H) HOLD=$OPTARG ;;
	b) BIN=$OPTARG ;;
	t) TB=$OPTARG ;;
	d) DIR=$OPTARG ;;
	*) echo "usage: $0 [-a] [-q] [-n N] [-p P] [-c C] [-r RUNS] [-H MS] -b BINDIR -t TESTBIN -d DIR" >&2
	   exit 2 ;;
	esac
done
[ -n "$BIN" ] && [ -n "$TB" ] && [ -n "$DIR" ] ||
	{ echo "$0: -b, -t and -d are needed" >&2; exit 2; }
C=${C:-$N}
BIN=$(cd "$BIN" && pwd)
TB=$(cd "$TB" && pwd)
mkdir -p "$DIR" && DIR=$(cd "$DIR" && pwd)
# The system tests' helpers: free ports, daemons started and stopped by
# pid (also on failure), the datazone's root under $DIR.
export NSR_BIN=$BIN NSR_TEST_TMPDIR=$DIR
export NSR_TEST_TALLY_CHECK=0 # a test check: not in a benchmark
. "$(dirname "$0")/../../system/lib.sh"
nsr_setup admission
W=$DIR

S=127.0.0.1
# admin - nsradmin commands from stdin, quietly.
admin() { "$BIN/nsradmin" -s $S -i - >/dev/null 2>&1; }
# cpu_s PID - user + system CPU seconds of PID so far.
cpu_s() {
	awk -v hz="$(getconf CLK_TCK)" '{ printf "%.2f", ($14 + $15) / hz }' \
		"/proc/$1/stat"
}
# hwm_mb PID - peak resident set of PID in MB.
hwm_mb() { awk '/^VmHWM/ { printf "%.1f", $2 / 1024 }' "/proc/$1/status"; }
# rss_mb PID - its resident set now, in MB.
rss_mb() { awk '/^VmRSS/ { printf "%.1f", $2 / 1024 }' "/proc/$1/status"; }
# threads PID - its threads now.
threads() { awk '/^Threads/ { print $2 }' "/proc/$1/status"; }

rm -rf "$DIR/aftd"
mkdir -p "$DIR/aftd"
ulimit -n 65536 2>/dev/null || ulimit -n "$(ulimit -Hn)"
nsr_start_datazone >"$DIR/daemons.out" 2>&1
NSRD=$(cat "$ROOT/logs/nsrd.pid")
nsr_device aftd adv_file "$DIR/aftd" "target sessions: 64; max sessions: 1024; max nsrmmd count: 32"
printf '. type: NSR\nupdate parallelism: %s\n' "$P" | admin
"$BIN/nsrmm" -s $S -q -l -y -b Default -f aftd >/dev/null 2>&1 ||
	{ echo "$0: cannot label a volume" >&2; exit 1; }

echo "# $(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "# N=$N sessions, P=$P server parallelism, C=$C clients${HOLD:+, each held $HOLD ms}"
# others_cpu - "name=seconds" of every other datazone process (nsrexecd,
# nsrmmdbd, nsrjobd, nsrsnmd, nsrindexd, the movers) so far.
others_cpu() {
	local f p
	for f in "$ROOT"/logs/*.pid; do
		p=$(cat "$f" 2>/dev/null) || continue
		[ "$p" = "$NSRD" ] || [ ! -r "/proc/$p/stat" ] ||
			echo "$(basename "$f" .pid)=$(cpu_s "$p")"
	done
	for p in $(pgrep -x nsrmmd); do echo "nsrmmd.$p=$(cpu_s "$p")"; done
}
# cpu_delta BEFORE AFTER - "name:seconds" for each process in both lists.
cpu_delta() {
	awk -F= 'NR == FNR { a[$1] = $2; next }
		 ($1 in a) { d = $2 - a[$1]; sub(/\..*/, "", $1); t[$1] += d }
		 END { for (k in t) printf "%s%s:%.2f", n++ ? "," : "", k, t[k] }' \
		<(echo "$1") <(echo "$2")
}
# procs - NAME=PID,... of the datazone's daemons, for bench_admission -p.
procs() {
	local f p l=""
	for f in "$ROOT"/logs/*.pid; do
		p=$(cat "$f" 2>/dev/null)
		[ -n "$p" ] && [ -r "/proc/$p/stat" ] &&
			l="$l${l:+,}$(basename "$f" .pid)=$p"
	done
	echo "$l"
}
for r in $(seq 1 "$RUNS"); do
	c0=$(cpu_s "$NSRD")
	o0=$(others_cpu)
	line=$(TIMEFORMAT="driver_cpu_s %U %S"; { time "$TB/bench_admission" $ASYNC \
		-s $S -n "$N" -c "$C" -o "$DIR/latencies.$r" -p "$(procs)" \
		${HOLD:+-H "$HOLD"} 2>"$DIR/bench.$r.err"; } 2>&1)
	rc=$?
	c1=$(cpu_s "$NSRD")
	o1=$(others_cpu)
	line=$(echo "$line" | awk '/^driver_cpu_s/ { d = $2 + $3; next }
		{ l = $0 } END { printf "%s driver_cpu_s %.2f", l, d }')
	echo "run $r: $line nsrd_cpu_s $(awk -v a="$c0" -v b="$c1" \
		'BEGIN { printf "%.2f", b - a }') nsrd_peak_rss_mb $(hwm_mb "$NSRD") rss_after_mb $(rss_mb "$NSRD") threads $(threads "$NSRD") others_cpu_s $(cpu_delta "$o0" "$o1") exit $rc"
	[ $rc = 0 ] || { FAILED=1; head -3 "$DIR/bench.$r.err" | sed 's/^/#   /'; }
done
exit "$FAILED"
