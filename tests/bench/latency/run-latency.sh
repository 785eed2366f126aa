#!/bin/bash
# run-latency.sh - save throughput over a link with added round-trip time.
#
# Two network namespaces joined by a veth pair: a client (198.18.2.1,
# host name cli) and a storage node (198.18.2.2, host name sn) that also
# runs the server.  The client saves one large file to an AFTD on the
# storage node, straight (the baseline) and through delayproxy at each
# added round-trip time (proxy delay = RTT/2 each way).  In the client's
# namespace, iptables sends every TCP connection to the storage node's
# address to the proxy (nat OUTPUT REDIRECT); the proxy finds the original
# destination with SO_ORIGINAL_DST and marks its own connections (SO_MARK
# 0x4e), which the rule lets through.  The runs of each round go through
# the configurations in an order rotated by one per round.  Prints one
# line per save and a table: median MB/s and the ratio to the 0 ms row.
# With -T, every added round-trip time is run once per number of
# connections given (save --stripes=N), one right after the other in each
# round, and the table has a column pair per number, each ratio taken to the 0 ms
# row of the same number.
#
#   run-latency.sh [-q] [-s MB] [-r RUNS] [-R "RTTS"] [-T "STRIPES"]
#                  [-w BYTES] [-S BYTES] -b BINDIR -p PROXY -d DIR
#     -q        quick: 256 MB, 1 round
#     -s MB     size of the file saved (default 2048)
#     -r RUNS   rounds (default 3)
#     -R RTTS   added round-trip times in ms (default "0 5 10 20 50")
#     -T STRIPES  connections per save to compare, e.g. "1 4" (default:
#               save's own choice, 4 to this storage node)
#     -w BYTES  the proxy's window (default: what TCP would have here,
#               min(client tcp_wmem max, storage node tcp_rmem max / 2))
#     -S BYTES  first set the client namespace's net.ipv4.tcp_wmem max to
#               BYTES (and the storage node's tcp_rmem max to at least
#               2 x BYTES): what a tuned client would have
#     -b BINDIR the release build's bin directory
#     -p PROXY  the delayproxy binary
#     -d DIR    work directory (the file, the volume, the roots, the log)
#
# Needs root (namespaces, iptables).  iptables is installed with apt-get
# if missing (benchmark only; nothing else in OpenNSR uses it).  Every
# process it starts is stopped by pid and both namespaces are deleted at
# exit, also on failure.
set -u
SIZE=2048 RUNS=3 RTTS="0 5 10 20 50" WIN="" BIN="" PROXY="" DIR="" TUNE=""
STRIPES=auto
while getopts "qs:r:R:T:w:S:b:p:d:" o; do
	case $o in
	q) SIZE=256 RUNS=1 ;;
	s) SIZE=$OPTARG ;;
	r) RUNS=$OPTARG ;;
	R) RTTS=$OPTARG ;;
	T) STRIPES=$OPTARG ;;
	w) WIN=$OPTARG ;;
	S) TUNE=$OPTARG ;;
	b) BIN=$OPTARG ;;
	p) PROXY=$OPTARG ;;
	d) DIR=$OPTARG ;;
	*) echo "usage: $0 [-q] [-s MB] [-r RUNS] [-R RTTS] [-w BYTES] -b BINDIR -p PROXY -d DIR" >&2; exit 2 ;;
	esac
done
[ -n "$BIN" ] && [ -n "$PROXY" ] && [ -n "$DIR" ] || { echo "$0: -b, -p and -d are needed" >&2; exit 2; }
BIN=$(cd "$BIN" && pwd) PROXY=$(cd "$(dirname "$PROXY")" && pwd)/$(basename "$PROXY")
mkdir -p "$DIR" && DIR=$(cd "$DIR" && pwd)

if [ "$(id -u)" != 0 ]; then
	echo "# latency benchmark skipped: it needs root (network namespaces, iptables)"
	exit 0
fi
if ! command -v iptables >/dev/null; then
	echo "# installing iptables (used by this benchmark only)"
	DEBIAN_FRONTEND=noninteractive apt-get install -y iptables >/dev/null ||
		{ echo "$0: cannot install iptables" >&2; exit 1; }
fi

TAG=nsrb$$
CLI=$TAG-cli SN=$TAG-sn
CLI_ADDR=198.18.2.1 SN_ADDR=198.18.2.2
PPORT=7999
PROXY_PID="" STARTED=()
export NSR_PORTMAP_PORT=7938 NSR_EXEC_PORT=7937 NSR_CONNECT_TIMEOUT_MS=3000

cleanup() {
	local p i ns
	[ -n "$PROXY_PID" ] && kill -TERM "$PROXY_PID" 2>/dev/null
	for (( i=${#STARTED[@]}-1; i>=0; i-- )); do
		kill -TERM "${STARTED[$i]}" 2>/dev/null
	done
	for p in "${STARTED[@]}"; do
		for i in $(seq 1 100); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
		kill -KILL "$p" 2>/dev/null
	done
	for ns in "$CLI" "$SN"; do
		for p in $(ip netns pids "$ns" 2>/dev/null); do kill -KILL "$p" 2>/dev/null; done
		ip netns del "$ns" 2>/dev/null
		rm -rf "/etc/netns/$ns"
	done
	rmdir /etc/netns 2>/dev/null
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
die() { echo "$0: $*" >&2; exit 1; }

# on NS HOSTNAME CMD... - run CMD in NS with its own host name.
on() {
	local ns=$1 h=$2; shift 2
	ip netns exec "$ns" unshare --uts sh -c 'hostname "$0" && exec "$@"' "$h" "$@"
}

# --- the two hosts --------------------------------------------------------
ip netns add "$CLI" && ip netns add "$SN" || die "cannot create namespaces"
ip -n "$CLI" link add eth0 type veth peer name eth0 netns "$SN" || die "no veth"
ip -n "$CLI" addr add $CLI_ADDR/24 dev eth0
ip -n "$SN" addr add $SN_ADDR/24 dev eth0
for ns in "$CLI" "$SN"; do
	ip -n "$ns" link set lo up
	ip -n "$ns" link set eth0 up
	mkdir -p "/etc/netns/$ns"
	printf '127.0.0.1 localhost\n%s cli\n%s sn\n' $CLI_ADDR $SN_ADDR >"/etc/netns/$ns/hosts"
	[ -f /etc/nsswitch.conf ] &&
		sed 's/^hosts:.*/hosts: files/' /etc/nsswitch.conf >"/etc/netns/$ns/nsswitch.conf"
done
if [ -n "$TUNE" ]; then
	ip netns exec "$CLI" sysctl -q -w "net.ipv4.tcp_wmem=4096 16384 $TUNE" || die "tcp_wmem"
	r=$(ip netns exec "$SN" cat /proc/sys/net/ipv4/tcp_rmem | awk '{print $3}')
	[ "$r" -lt $((2 * TUNE)) ] &&
		{ ip netns exec "$SN" sysctl -q -w "net.ipv4.tcp_rmem=4096 131072 $((2 * TUNE))" || die "tcp_rmem"; }
fi
rmem() { ip netns exec "$1" cat /proc/sys/net/ipv4/tcp_rmem | awk '{print $3}'; }
wmem() { ip netns exec "$1" cat /proc/sys/net/ipv4/tcp_wmem | awk '{print $3}'; }
echo "# client tcp_rmem: $(ip netns exec "$CLI" cat /proc/sys/net/ipv4/tcp_rmem)  tcp_wmem: $(ip netns exec "$CLI" cat /proc/sys/net/ipv4/tcp_wmem)"
echo "# storage node tcp_rmem: $(ip netns exec "$SN" cat /proc/sys/net/ipv4/tcp_rmem)  tcp_wmem: $(ip netns exec "$SN" cat /proc/sys/net/ipv4/tcp_wmem)"
if [ -z "$WIN" ]; then
	WIN=$(wmem "$CLI")
	half=$(( $(rmem "$SN") / 2 ))
	[ "$half" -lt "$WIN" ] && WIN=$half
fi
echo "# proxy window: $WIN bytes (max throughput at RTT r: $WIN / r)"

# --- the datazone on the storage node -----------------------------------
# With -a, the daemons listen on the storage node's address (and, once
# the datazone works across hosts, on 127.0.0.1 too).  A build whose
# daemons listen on the -a address only cannot start nsrd's children
# that way; then the datazone listens on 127.0.0.1 and the storage node
# forwards connections to its address there (nat PREROUTING DNAT,
# route_localnet): the client still connects over the link, by address.
R=$DIR/sn
rm -rf "$R" "$DIR/cli" "$DIR/cli.csr" "$DIR/cli.bundle"
mkdir -p "$R/aftd" "$DIR/cli/data"
start() { # DAEMON ARGS - start a daemon on the storage node, remember pid
	local d=$1; shift
	NSR_ROOT=$R on "$SN" sn "$BIN/$d" -b -R "$R" "$@" >>"$DIR/daemons.out" 2>&1 || return 1
	STARTED+=("$(cat "$R/logs/$d.pid")")
}
wait_started() { # NAME - bounded wait for NAME's "started" line
	local i=0
	while [ $i -lt 300 ]; do
		grep -q "$1\[[0-9]*\]: info: started" "$R/logs/daemon.log" 2>/dev/null && return 0
		sleep 0.1; i=$((i + 1))
	done
	return 1
}
MODE=native
if start nsrexecd -s -a $SN_ADDR && start nsrd -a $SN_ADDR &&
	wait_started nsrmmdbd && wait_started nsrindexd && wait_started nsrjobd &&
	wait_started nsrsnmd; then
	SERVER=sn
else
	MODE=loopback-dnat
	echo "# daemons cannot listen on $SN_ADDR and 127.0.0.1 together here:" \
		"datazone on 127.0.0.1, DNAT from $SN_ADDR"
	for (( i=${#STARTED[@]}-1; i>=0; i-- )); do kill -TERM "${STARTED[$i]}" 2>/dev/null; done
	for p in "${STARTED[@]}"; do
		for i in $(seq 1 100); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
	done
	STARTED=()
	rm -rf "$R" && mkdir -p "$R/aftd"
	ip netns exec "$SN" sysctl -q -w net.ipv4.conf.all.route_localnet=1 net.ipv4.conf.eth0.route_localnet=1
	ip netns exec "$SN" iptables -t nat -A PREROUTING -p tcp -d $SN_ADDR \
		-j DNAT --to-destination 127.0.0.1 || die "DNAT rule"
	start nsrexecd -s && start nsrd || die "datazone did not start (see $R/logs/daemon.log)"
	wait_started nsrmmdbd && wait_started nsrindexd && wait_started nsrjobd &&
		wait_started nsrsnmd || die "datazone did not start (see $R/logs/daemon.log)"
	SERVER=$SN_ADDR
fi
echo "# mode: $MODE; client saves with -s $SERVER"
admin() { NSR_ROOT=$R on "$SN" sn timeout 60 "$BIN/nsradmin" -s 127.0.0.1 -i - >/dev/null; }
printf 'create type: NSR device; name: aftd; media type: adv_file; device access information: %s\n' "$R/aftd" |
	admin || die "device"
label() {
	NSR_ROOT=$R on "$SN" sn timeout 60 "$BIN/nsrmm" -s 127.0.0.1 -q -l -y -b Default \
		-f aftd -z 256K LAT.001 >/dev/null 2>&1
}
label || die "label"

# --- the client's certificate (TLS on every connection, nsrtrust(8)) -----
if [ -x "$BIN/nsrtrust" ]; then
	mkdir -p "$DIR/cli"
	NSR_ROOT=$DIR/cli on "$CLI" cli "$BIN/nsrtrust" request >"$DIR/cli.csr" &&
		NSR_ROOT=$R on "$SN" sn "$BIN/nsrtrust" accept "$DIR/cli.csr" >"$DIR/cli.bundle" &&
		NSR_ROOT=$DIR/cli on "$CLI" cli "$BIN/nsrtrust" install "$DIR/cli.bundle" >/dev/null ||
		die "cannot enrol the client in the datazone (nsrtrust)"
	echo "# client enrolled (nsrtrust): every connection uses TLS"
fi

# --- the file ------------------------------------------------------------
F=$DIR/cli/data/large.bin
head -c 4194304 /dev/urandom >"$DIR/cli/piece"
for (( i = 0; i < SIZE / 4; i++ )); do cat "$DIR/cli/piece"; done >"$F"
BYTES=$(stat -c %s "$F")
echo "# file: $BYTES bytes"

# --- the runs --------------------------------------------------------------
CONFIGS=()	# RTT/STRIPES; the numbers of connections of one RTT run
for r in base $RTTS; do	# one after the other (side by side)
	for t in $STRIPES; do CONFIGS+=("$r/$t"); done
done
REDIRECT=(-t nat -A OUTPUT -p tcp -d "$SN_ADDR" -m mark ! --mark 0x4e -j REDIRECT --to-ports "$PPORT")
rule() { ip netns exec "$CLI" iptables "${REDIRECT[@]/#-A/$1}"; }
RES=$DIR/runs.txt
: >"$RES"

run_one() { # RTT/STRIPES ROUND
	local c=${1%/*} t=${1#*/} n=$2 t0 t1 rc mbs cpu="" opt=()
	[ "$t" = auto ] || opt=(--stripes="$t")
	if [ "$c" != base ]; then
		ip netns exec "$CLI" "$PROXY" -p $PPORT -w "$WIN" -t 900 \
			-d "$(awk -v r="$c" 'BEGIN {printf "%g", r / 2}')" \
			>>"$DIR/proxy.out" 2>&1 &
		PROXY_PID=$!
		sleep 0.3
		rule -A || die "REDIRECT rule (see RESULTS.md)"
	fi
	t0=$(date +%s.%N)
	NSR_ROOT=$DIR/cli on "$CLI" cli timeout 900 "$BIN/save" -q -s "$SERVER" -c cli \
		"${opt[@]}" "$DIR/cli/data" >"$DIR/save.out" 2>&1
	rc=$?
	t1=$(date +%s.%N)
	if [ "$c" != base ]; then
		rule -D
		# the proxy's CPU time (user + system), from /proc
		cpu=$(awk -v hz="$(getconf CLK_TCK)" '{printf ", proxy CPU %.2f s", ($14 + $15) / hz}' \
			"/proc/$PROXY_PID/stat" 2>/dev/null)
		kill -TERM "$PROXY_PID" 2>/dev/null
		wait "$PROXY_PID" 2>/dev/null
		PROXY_PID=""
	fi
	if [ $rc -ne 0 ]; then
		echo "round $n rtt $c stripes $t: save failed (exit $rc): $(tail -n 3 "$DIR/save.out")"
		return 1
	fi
	mbs=$(awk -v b="$BYTES" -v a="$t0" -v z="$t1" 'BEGIN {printf "%.1f", b / 1e6 / (z - a)}')
	echo "round $n rtt $c stripes $t: $mbs MB/s ($(awk -v a="$t0" -v z="$t1" 'BEGIN {printf "%.2f", z - a}') s$cpu)"
	echo "$c $t $mbs" >>"$RES"
	label || die "relabel"	# the volume is emptied for the next run
}

echo "# $(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) CPUs: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2-), $(uname -r)"
for (( n = 0; n < RUNS; n++ )); do
	k=${#CONFIGS[@]}
	for (( j = 0; j < k; j++ )); do
		run_one "${CONFIGS[$(( (j + n) % k ))]}" $((n + 1))
	done
done

# --- the table -------------------------------------------------------------
median() { sort -n | awk '{a[NR] = $1} END {if (NR == 0) print "-"; else if (NR % 2) print a[(NR + 1) / 2]; else printf "%.1f\n", (a[NR / 2] + a[NR / 2 + 1]) / 2}'; }
ratio() { awk -v m="$1" -v z="$2" 'BEGIN {if (z + 0 > 0 && m != "-") printf "%.2f", m / z; else print "-"}'; }
echo
head="| added RTT | proxy delay each way |" rule="|---|---|"
for t in $STRIPES; do
	head="$head stripes $t: MB/s (median of $RUNS), runs | ratio to 0 ms |"
	rule="$rule---|---|"
done
echo "$head"
echo "$rule"
for c in base $RTTS; do
	if [ "$c" = base ]; then
		line="| none (no proxy) | - |"
	else
		line="| $c ms | $(awk -v r="$c" 'BEGIN {printf "%g", r / 2}') ms |"
	fi
	for t in $STRIPES; do
		zero=$(awk -v t="$t" '$1 == "0" && $2 == t {print $3}' "$RES" | median)
		m=$(awk -v c="$c" -v t="$t" '$1 == c && $2 == t {print $3}' "$RES" | median)
		all=$(awk -v c="$c" -v t="$t" '$1 == c && $2 == t {printf "%s%s", s, $3; s = ", "}' "$RES")
		line="$line $m ($all) | $(ratio "$m" "$zero") |"
	done
	echo "$line"
done
