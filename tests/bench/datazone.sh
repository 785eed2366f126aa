# datazone.sh - sourced by the benchmark scripts that run a datazone on
# loopback (sessions/run-sessions.sh, save/run-save.sh,
# recover/run-recover.sh): free ports for the locator and nsrexecd
# (exported), a STARTED list of pids stopped in reverse order at exit
# (also on failure or interrupt), now and since, a one-AFTD datazone
# (aftd_zone; copy_zone over copies of databases), the save benchmark's
# data (bench_data), a cold page cache (cold_how, cold), rotated rounds
# (rounds), the table arithmetic (bytes, med, mbs, ratio) and need_time
# (/usr/bin/time, installed if missing).
# Source it with BIN (a bin directory) and DIR (the work directory) set:
# both become absolute, DIR is made, ROOT=$DIR/root is the datazone's
# root (NSR_ROOT).  Add each daemon's pid to STARTED.
BIN=$(cd "$BIN" && pwd)
mkdir -p "$DIR" && DIR=$(cd "$DIR" && pwd)
ROOT=$DIR/root
export NSR_ROOT=$ROOT
STARTED=()

# need_time - /usr/bin/time is there (installed if it can be), or exit 2.
need_time() {
	[ -x /usr/bin/time ] || apt-get install -y time >/dev/null 2>&1 ||
		{ echo "$0: needs /usr/bin/time (Debian package time)" >&2
		  exit 2; }
}

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
# since T0 - seconds since T0.
since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.3f", b - a }'; }

# aftd_zone LOG - nsrexecd and nsrd on ROOT (output to LOG) and an AFTD
# device "aftd" in DIR/aftd; exits on failure.
aftd_zone() {
	"$BIN/nsrexecd" -b -s -R "$ROOT" >>"$1" 2>&1 || exit 1
	STARTED+=("$(cat "$ROOT/logs/nsrexecd.pid")")
	"$BIN/nsrd" -b -R "$ROOT" >>"$1" 2>&1 || exit 1
	STARTED+=("$(cat "$ROOT/logs/nsrd.pid")")
	printf 'create type: NSR device; name: aftd; media type: adv_file; device access information: %s\n' \
		"$DIR/aftd" | "$BIN/nsradmin" -s 127.0.0.1 -i - >/dev/null 2>&1
}

# copy_zone LOG DIR... - a fresh datazone (aftd_zone, output to LOG)
# over copies of the databases DIR... (each DIR/NAME becomes ROOT/NAME),
# once its nsrmmdbd and nsrindexd have started; STARTED is emptied.
copy_zone() {
	local log=$1 d
	shift
	STARTED=()
	rm -rf "$ROOT" "$DIR/aftd"
	mkdir -p "$ROOT" "$DIR/aftd"
	for d in "$@"; do cp -a "$d" "$ROOT/$(basename "$d")"; done
	sync
	aftd_zone "$log"
	for _ in $(seq 1 100); do
		[ -s "$ROOT/logs/nsrmmdbd.pid" ] &&
			[ -s "$ROOT/logs/nsrindexd.pid" ] && break
		sleep 0.1
	done
}

# bench_data PROG NL LMB NS - the save benchmark's data in DATA=DIR/data
# (bench_savedata PROG: NL files of LMB MB, NS small files), made once
# and kept while the sizes stay the same.
bench_data() {
	DATA=$DIR/data
	if [ ! -f "$DATA/.made-$2-$3-$4" ]; then
		rm -rf "$DATA"
		"$1" make "$DATA" "$2" "$3" "$4" || exit 1
		touch "$DATA/.made-$2-$3-$4"
	fi
}

# bytes - the data bytes of the regular files under a directory.
bytes() { find "$1" -type f -printf '%s\n' | awk '{s += $1} END {print s}'; }
# med LIST - the median of the numbers.
med() { tr ' ' '\n' <<<"$1" | awk 'NF' | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
# mbs BYTES SECONDS - MB/s.
mbs() { awk -v b="$1" -v t="$2" 'BEGIN { printf "%.1f", b / t / 1e6 }'; }
# ratio A B - A / B.
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }'; }

# cold_how WHAT - set COLD, the header's words for how cold() empties the
# cache: drop_caches with DROP=1 (root), else the pages of WHAT's files.
cold_how() {
	if [ "$DROP" = 1 ]; then
		COLD="drop_caches (root)"
	elif [ "$(id -u)" = 0 ]; then
		COLD="per-file fadvise DONTNEED of $1 (-e: drop_caches skipped; inode and directory caches stay warm)"
	else
		COLD="per-file fadvise DONTNEED of $1 (not root: drop_caches skipped; inode and directory caches stay warm)"
	fi
}
# cold DIR... - an empty page cache (as far as allowed): drop_caches with
# DROP=1, else the pages of every file under DIR... dropped by DATAPROG
# (bench_savedata evict).
cold() {
	local d
	sync
	if [ "$DROP" = 1 ]; then
		echo 3 >/proc/sys/vm/drop_caches
	else
		for d in "$@"; do "$DATAPROG" evict "$d" >/dev/null; done
	fi
}
# rounds - RUNS rounds of the TASKS, the order rotated by one task per
# round, each after clean (the caller's: outside the timed window); the
# seconds task prints are appended to R[task] (declare -A R first).
rounds() {
	local r i n t order
	for r in $(seq 1 "$RUNS"); do
		n=${#TASKS[@]}
		order=""
		for i in $(seq 0 $((n - 1))); do
			t=${TASKS[$(( (i + r - 1) % n ))]}
			order+="$t "
			clean
			R[$t]+="$(task "$t") "
		done
		echo "# round $r: $order"
	done
}
