#!/bin/bash
# run-tls.sh - what RPC-with-TLS and encryption at rest cost a
# large-file save: TLS off and on, each with and without save --encrypt
# (AES-256-GCM), in one run against one datazone on loopback.
#
# One datazone (nsrexecd -s, nsrd and its children) under a fresh root,
# an AFTD, one file of MB megabytes (a random 4 MiB piece repeated, so
# incompressible), a datazone pass phrase.  Each round saves the file
# four times: over TCP with TLS (every connection: nsrd, locator, index,
# mover; NSR_LOCAL_SOCKETS=0, as a save from another host goes), "on";
# the same with --encrypt (AES-256-GCM), "on-aes"; over TCP without TLS
# (the client runs with NSR_TEST_NO_TLS=1 and root/tls/plain-hosts
# admits 127.0.0.1, so the same daemons serve both), "off"; and as a
# save on this host goes by default, over the daemons' local sockets
# (nsr/rpc.h, "Same-host connections": no TLS, the kernel names both
# ends), "local".  The orders are those of a balanced Latin square (over
# 4 rounds each mode comes first once and follows each other mode once,
# so what a save leaves behind, e.g. writeback, does not always fall on
# the same mode).  Prints one line per save (MB/s and the save process's
# CPU seconds) and the medians in MB/s with the cost of TLS (on vs off;
# target: <= 10 %), of encryption at rest (on-aes vs on; target:
# <= 15 %) and of a same-host save's security (local vs off) in percent.
#
#   run-tls.sh [-q] [-s MB] [-r RUNS] [-U USER] -b BINDIR -d DIR
#     -q        quick: 256 MB, 1 round
#     -U USER   the movers run as USER (nsrexecd -U; needs root), as on
#               a storage node whose movers do not run as root
#     -s MB     size of the file (default 1024)
#     -r RUNS   rounds (default 3)
#     -b BINDIR the build's bin directory (a release build for numbers)
#     -d DIR    work directory (root, file, volume); emptied at exit
#
# Every daemon it starts is stopped by pid at exit (lib.sh's cleanup).
set -u
SIZE=1024 RUNS=3 BINDIR="" DIR="" MUSER=""
while getopts "qs:r:U:b:d:" o; do
	case $o in
	U) MUSER=$OPTARG ;;
	q) SIZE=256 RUNS=1 ;;
	s) SIZE=$OPTARG ;;
	r) RUNS=$OPTARG ;;
	b) BINDIR=$OPTARG ;;
	d) DIR=$OPTARG ;;
	*) echo "usage: $0 [-q] [-s MB] [-r RUNS] [-U USER] -b BINDIR -d DIR" >&2; exit 2 ;;
	esac
done
[ -n "$BINDIR" ] && [ -n "$DIR" ] || { echo "$0: -b and -d are needed" >&2; exit 2; }
mkdir -p "$DIR" || exit 1
export NSR_BIN=$(cd "$BINDIR" && pwd) NSR_TEST_TMPDIR=$(cd "$DIR" && pwd)
export NSR_TEST_TALLY_CHECK=0 # a test check: not in a benchmark
. "$(dirname "$0")/../../system/lib.sh"
nsr_setup tls-bench
S=127.0.0.1
W=$ROOT/work
if [ -n "$MUSER" ]; then
	# The movers run as MUSER: it must reach the root and own the AFTD.
	[ "$(id -u)" = 0 ] || { echo "$0: -U needs root" >&2; exit 2; }
	chmod 0711 "$NSR_TEST_TMPDIR" "$ROOT"
	mkdir -p "$W/aftd1"
	chown "$MUSER" "$W/aftd1" || exit 1
	NSR_EXECD_ARGS=(-U "$MUSER")
fi
nsr_start_aftd_datazone
echo "127.0.0.1  # run-tls.sh: the TLS-off runs" >"$ROOT/tls/plain-hosts"
printf '. type: NSR\nupdate datazone pass phrase: run-tls bench\n' |
	"$BIN/nsradmin" -s $S -i - >/dev/null 2>&1 ||
	{ echo "cannot set the datazone pass phrase"; FAILED=1; }

F=$W/big/file
mkdir -p "$W/big"
head -c 4194304 /dev/urandom >"$F.piece"
for (( i = 0; i < SIZE / 4; i++ )); do cat "$F.piece"; done >"$F"
rm -f "$F.piece"

declare -A RATES=() CPUS=()
# one MODE - one save of the file, MODE on, on-aes, off or local (see
# the top); appends its MB/s.
one() {
	local t0 t1 rate cpu env=(NSR_LOCAL_SOCKETS=0) opt=()
	case $1 in off) env+=(NSR_TEST_NO_TLS=1) ;; local) env=() ;; esac
	case $1 in *-aes) opt=(--encrypt) ;; esac
	# The last save's bytes go to disk first, outside the timed window:
	# otherwise the kernel's dirty-page limit throttles some saves to
	# the disk's speed and not others (rounds at 280 against 800 MB/s).
	sync
	t0=$(date +%s.%N)
	/usr/bin/time -f '%U %S' -o "$W/save.cpu" env "${env[@]}" \
		"$BIN/save" -s $S "${opt[@]}" "$W/big" >/dev/null 2>"$W/save.err" ||
		{ echo "save ($1) failed:"; cat "$W/save.err"; FAILED=1; return; }
	t1=$(date +%s.%N)
	rate=$(echo "$SIZE / ($t1 - $t0)" | bc -l)
	cpu=$(awk '{print $1 + $2}' "$W/save.cpu")
	printf 'round %d  %-7s  %6.1f MB/s  (%.2f s, save used %.2f CPU s)\n' \
		"$r" "$1" "$rate" "$(echo "$t1 - $t0" | bc -l)" "$cpu"
	RATES[$1]+="$rate "
	CPUS[$1]+="$cpu "
}

MODES=(on off on-aes local)
ORDERS=("0 1 3 2" "1 2 0 3" "2 3 1 0" "3 0 2 1")
for (( r = 1; r <= RUNS; r++ )); do
	for m in ${ORDERS[(r - 1) % 4]}; do one "${MODES[m]}"; done
done

# median LIST - the median of numbers.
median() { tr ' ' '\n' <<<"$1" | grep . | sort -g | awk '{a[NR] = $1}
	END {print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2}'; }
on=$(median "${RATES[on]:-}") off=$(median "${RATES[off]:-}")
aes=$(median "${RATES[on-aes]:-}") loc=$(median "${RATES[local]:-}")
printf 'median of %d rounds, %d MB over TCP: TLS off %.1f MB/s, TLS on %.1f MB/s, TLS costs %.1f %%\n' \
	"$RUNS" "$SIZE" "$off" "$on" "$(echo "(1 - $on / $off) * 100" | bc -l)"
printf 'with --encrypt and TLS: %.1f MB/s; encryption at rest costs %.1f %%\n' \
	"$aes" "$(echo "(1 - $aes / $on) * 100" | bc -l)"
printf 'on the local sockets (a save on this host): %.1f MB/s, %.1f %% below TCP without TLS\n' \
	"$loc" "$(echo "(1 - $loc / $off) * 100" | bc -l)"
printf 'save CPU seconds (median): TLS off %.2f, on %.2f, on + --encrypt %.2f, local %.2f\n' \
	"$(median "${CPUS[off]:-}")" "$(median "${CPUS[on]:-}")" \
	"$(median "${CPUS[on-aes]:-}")" "$(median "${CPUS[local]:-}")"
nsr_done
