# netns.sh - test hosts as network namespaces (source it after lib.sh; bash).
#
# A test that needs several hosts (server, storage nodes, clients) makes
# each one a network namespace of its own, joined by a veth pair to one
# bridge in a hub namespace, so that a host's link can be cut in the hub.
# Addresses are 198.18.0.10, .11, ... (198.18.0.0/15 is reserved for
# network tests, RFC 2544), or with NSR_NET_FAMILY=6 set before
# nsr_net_setup 2001:2::10, ::11, ... only (2001:2::/48, the IPv6 range
# for the same use, RFC 5180): then the hosts have no IPv4 address but
# loopback and their names resolve to IPv6 only.  Nothing is routed
# anywhere else.  Every host
# gets /etc/netns/<ns>/hosts naming every test host (and an nsswitch.conf
# that resolves host names from that file only), which `ip netns exec`
# mounts over /etc/hosts.  Namespace names carry the shell's pid
# (nsr<pid>-<host>), so parallel runs never meet.
#
#   nsr_net_setup HOST...        make the hub and the hosts; skip the test
#                                (exit 77, saying why) where namespaces,
#                                veth or bridges cannot be made
#   nsr_host_addr HOST           print HOST's address
#   nsr_host_exec HOST CMD...    run CMD in HOST's namespace with a UTS
#                                namespace of its own whose host name is
#                                HOST, and NSR_ROOT=$ROOT/HOST
#   nsr_host_start HOST DAEMON ARGS
#                                start $BIN/DAEMON -b -R $ROOT/HOST
#                                -a ADDR ARGS in HOST (like nsr_start);
#                                the pid is stopped at exit
#   nsr_host_pid HOST DAEMON     print the pid DAEMON on HOST recorded
#   nsr_host_wait_registered HOST NAME
#                                wait (<= 20 s) until NAME runs on HOST
#   nsr_host_kill HOST [SIG]     send SIG (default KILL) to every process
#                                of HOST, by pid (a crashed host)
#   nsr_host_device HOST NAME TYPE PATH [ATTRS]
#                                create an NSR device resource on server
#                                $S, with nsradmin run on HOST
#   nsr_host_start_server HOST   nsrexecd -s and nsrd with its children
#   nsr_host_start_storage HOST  nsrexecd -s (nsrsnmd), enrolled first
#   nsr_host_start_client HOST   nsrexecd, enrolled first
#   nsr_host_enrol HOST          HOST's certificate from the server $S's
#                                CA, as nsrtrust(8) documents: request on
#                                HOST, accept on $S, install on HOST (once)
#   nsr_host_reach FROM TO       TO answers FROM at the IP level (bounded)
#   nsr_host_tcp FROM TO PORT    a TCP connection from FROM to TO:PORT
#                                by name succeeds (bounded)
#   nsr_link_down HOST / nsr_link_up HOST
#                                take HOST's link down / up in the hub:
#                                its packets are dropped, as with a cut
#                                cable, and no error reaches its sockets
#
# Cleanup (trap on EXIT, replacing lib.sh's): every daemon started is
# stopped by pid (SIGTERM, then SIGKILL after 10 s), then any process
# still inside one of our namespaces is killed by pid, then the
# namespaces and their /etc/netns/<ns> directories are deleted.

NSR_NET_TAG=nsr$$
NSR_NET_HUB=$NSR_NET_TAG-hub
NSR_NET_HOSTS=()
NSR_NET_NS=()		# namespaces made, hub first
declare -A NSR_NET_ADDR=()
declare -A NSR_NET_PORT=()	# host -> its veth end in the hub

# nsr_net_skip REASON - this machine cannot run the test: say why, exit 77
# (ctest reports the test as skipped).
nsr_net_skip() {
	echo "# SKIP: $* (the multi-host tests need root, iproute2's ip," \
		"network namespaces, veth pairs and bridges)"
	exit 77
}

# nsr_net_cleanup - stop what we started, then delete our namespaces.
nsr_net_cleanup() {
	local h ns p
	if [ "$FAILED" != 0 ]; then
		for h in "${NSR_NET_HOSTS[@]}"; do
			[ -f "$ROOT/$h/logs/daemon.log" ] || continue
			echo "# --- $h: daemon.log ---"
			tail -n 40 "$ROOT/$h/logs/daemon.log" | sed 's/^/# /'
		done
	fi
	NSR_KEEP=1 nsr_cleanup
	for ns in "${NSR_NET_NS[@]}"; do
		for p in $(ip netns pids "$ns" 2>/dev/null); do
			echo "# killing pid $p left in $ns"
			kill -KILL "$p" 2>/dev/null
		done
	done
	for (( p=${#NSR_NET_NS[@]}-1; p>=0; p-- )); do
		ns=${NSR_NET_NS[$p]}
		ip netns del "$ns" 2>/dev/null
		rm -rf "/etc/netns/$ns"
	done
	rmdir /etc/netns 2>/dev/null
	if [ "$FAILED" = 0 ] && [ -z "${NSR_KEEP:-}" ]; then rm -rf "$ROOT"; fi
}

# nsr_net_ns HOST - the namespace name of HOST.
nsr_net_ns() { echo "$NSR_NET_TAG-$1"; }

# nsr_net_files NS - /etc/netns/NS: hosts (every test host) and an
# nsswitch.conf that looks host names up in that file only, so a name
# that is not a test host fails at once instead of asking DNS.
nsr_net_files() {
	local d=/etc/netns/$1 h
	mkdir -p "$d" || return 1
	{
		echo "127.0.0.1 localhost"
		echo "::1 localhost ip6-localhost ip6-loopback"
		for h in "${NSR_NET_HOSTS[@]}"; do
			echo "${NSR_NET_ADDR[$h]} $h"
		done
	} >"$d/hosts" || return 1
	if [ -f /etc/nsswitch.conf ]; then
		sed 's/^hosts:.*/hosts: files/' /etc/nsswitch.conf >"$d/nsswitch.conf"
	fi
}

# nsr_net_setup HOST... - the hub, one namespace per host, links, names.
nsr_net_setup() {
	local h ns i=0 port
	[ "$(id -u)" = 0 ] || nsr_net_skip "not root"
	command -v ip >/dev/null || nsr_net_skip "no ip command"
	command -v unshare >/dev/null || nsr_net_skip "no unshare command"
	trap nsr_net_cleanup EXIT
	trap 'exit 129' HUP
	trap 'exit 130' INT
	trap 'exit 143' TERM

	ip netns add "$NSR_NET_HUB" 2>/dev/null ||
		nsr_net_skip "cannot create a network namespace"
	NSR_NET_NS+=("$NSR_NET_HUB")
	ip -n "$NSR_NET_HUB" link add br0 type bridge 2>/dev/null ||
		nsr_net_skip "cannot create a bridge"
	ip -n "$NSR_NET_HUB" link set br0 up || die "hub bridge up"
	ip netns exec "$NSR_NET_HUB" unshare --uts true 2>/dev/null ||
		nsr_net_skip "cannot create a UTS namespace"

	for h in "$@"; do
		i=$((i + 1))
		NSR_NET_HOSTS+=("$h")
		if [ "${NSR_NET_FAMILY:-4}" = 6 ]; then
			NSR_NET_ADDR[$h]=2001:2::$((9 + i))
		else
			NSR_NET_ADDR[$h]=198.18.0.$((9 + i))
		fi
	done
	i=0
	for h in "$@"; do
		i=$((i + 1))
		ns=$(nsr_net_ns "$h")
		port=v$i
		ip netns add "$ns" || die "cannot create namespace $ns"
		NSR_NET_NS+=("$ns")
		ip -n "$NSR_NET_HUB" link add "$port" type veth \
			peer name eth0 netns "$ns" 2>/dev/null ||
			nsr_net_skip "cannot create a veth pair"
		NSR_NET_PORT[$h]=$port
		ip -n "$NSR_NET_HUB" link set "$port" master br0 || die "bridge $port"
		ip -n "$NSR_NET_HUB" link set "$port" up || die "link $port up"
		ip -n "$ns" link set lo up || die "lo up in $ns"
		if [ "${NSR_NET_FAMILY:-4}" = 6 ]; then
			# nodad: the address is usable at once (no duplicate
			# address detection on a link we made)
			ip -n "$ns" addr add "${NSR_NET_ADDR[$h]}/64" dev eth0 \
				nodad || die "address on $h"
		else
			ip -n "$ns" addr add "${NSR_NET_ADDR[$h]}/24" dev eth0 ||
				die "address on $h"
		fi
		ip -n "$ns" link set eth0 up || die "eth0 up in $ns"
	done
	for h in "$@"; do
		nsr_net_files "$(nsr_net_ns "$h")" || die "/etc/netns for $h"
	done
	echo "# hosts: $(for h in "$@"; do printf '%s=%s ' "$h" "${NSR_NET_ADDR[$h]}"; done)"
}

# nsr_host_addr HOST - print HOST's address.
nsr_host_addr() {
	[ -n "${NSR_NET_ADDR[$1]:-}" ] || die "no test host '$1'"
	echo "${NSR_NET_ADDR[$1]}"
}

# nsr_host_exec HOST CMD... - run CMD as a process of HOST.
nsr_host_exec() {
	local h=$1; shift
	nsr_host_addr "$h" >/dev/null
	mkdir -p "$ROOT/$h"
	NSR_ROOT=$ROOT/$h ip netns exec "$(nsr_net_ns "$h")" \
		unshare --uts sh -c 'hostname "$0" && exec "$@"' "$h" "$@"
}

# nsr_host_start HOST DAEMON ARGS... - start a daemon of HOST, remember pid.
nsr_host_start() {
	local h=$1 d=$2 addr; shift 2
	addr=$(nsr_host_addr "$h")
	nsr_host_exec "$h" "$BIN/$d" -b -R "$ROOT/$h" -a "$addr" "$@" ||
		die "$d on $h did not start (see $ROOT/$h/logs/daemon.log)"
	PIDS+=("$(cat "$ROOT/$h/logs/$d.pid")")
}

# nsr_host_pid HOST DAEMON - print the pid in DAEMON's pid file on HOST.
nsr_host_pid() {
	cat "$ROOT/$1/logs/$2.pid" 2>/dev/null
}

# nsr_host_wait_registered HOST NAME - wait (<= 20 s) for NAME on HOST:
# the pid in its pid file is alive and has logged that it started (so a
# restart is not mistaken for the copy that ran before).
nsr_host_wait_registered() {
	local r=$ROOT/$1 i=0 pid
	while [ $i -lt 200 ]; do
		pid=$(cat "$r/logs/$2.pid" 2>/dev/null)
		if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null &&
			grep -q "$2\[$pid\]: info: started, version" "$r/logs/daemon.log" 2>/dev/null; then
			return 0
		fi
		sleep 0.1; i=$((i + 1))
	done
	die "$2 on $1 did not start within 20 s"
}

# nsr_host_kill HOST [SIG] - signal every process in HOST's namespace by
# pid, and forget the ones we started (so cleanup does not signal a pid
# the system may have given to someone else).
nsr_host_kill() {
	local h=$1 sig=${2:-KILL} p q keep=()
	local pids
	pids=$(ip netns pids "$(nsr_net_ns "$h")" 2>/dev/null)
	for p in $pids; do
		kill -"$sig" "$p" 2>/dev/null
	done
	echo "# sent SIG$sig to $h's processes:" $pids
	for q in "${PIDS[@]}"; do
		for p in $pids; do [ "$p" = "$q" ] && continue 2; done
		keep+=("$q")
	done
	PIDS=("${keep[@]}")
}

# nsr_host_device HOST NAME TYPE PATH [ATTRS] - like lib.sh's nsr_device,
# with nsradmin running on HOST (the server $S, default HOST itself).
nsr_host_device() {
	local extra=${5:+; $5}
	printf 'create type: NSR device; name: "%s"; media type: %s; device access information: "%s"%s\n' \
		"$2" "$3" "$4" "$extra" |
		nsr_host_exec "$1" timeout 30 "$BIN/nsradmin" -s "${S:-$1}" -i - >/dev/null 2>&1 ||
		fail "create device $2 ($3 $4)"
}

# on HOST CMD... - CMD inside HOST, bounded to 60 s.
on() { local h=$1; shift; nsr_host_exec "$h" timeout 60 "$@"; }

# nsr_host_sn1_aftd - the usual storage node set-up of the 45x tests: an
# AFTD rd=sn1:$ROOT/sn1/aftd1 created on server $S and labeled SN1.001;
# sets D1 to its path.
nsr_host_sn1_aftd() {
	D1=$ROOT/sn1/aftd1
	mkdir -p "$D1"
	nsr_host_device "$S" "rd=sn1:$D1" adv_file "$D1"
	check "label SN1.001 on sn1's device" \
		on "$S" "$BIN/nsrmm" -s "$S" -q -l -y -b Default \
		-f "rd=sn1:$D1" SN1.001
}

# nsr_big_file PATH MB - a file of MB megabytes: one random 4 MiB piece
# repeated (quick to make, and not something a save stream could shrink).
nsr_big_file() {
	local piece=$1.piece i
	mkdir -p "$(dirname "$1")"
	head -c 4194304 /dev/urandom >"$piece"
	for (( i = 0; i < $2 / 4; i++ )); do cat "$piece"; done >"$1"
	rm -f "$piece"
}

# nsr_shown_complete NAME - mminfo on the server $S shows a save set of
# NAME complete (status letter b or r in its summary flags).
nsr_shown_complete() {
	on "$S" "$BIN/mminfo" -s "$S" -q "name=$1" -r "ssid,sumflags" 2>/dev/null |
		awk '$2 ~ /^[chmt][br]/ {found = 1} END {exit !found}'
}

# nsr_host_start_server HOST - the server's daemons (with a local
# storage node manager for devices on the server host).
nsr_host_start_server() {
	nsr_host_start "$1" nsrexecd -s
	nsr_host_start "$1" nsrd
	nsr_host_wait_registered "$1" nsrmmdbd
	nsr_host_wait_registered "$1" nsrjobd
	nsr_host_wait_registered "$1" nsrindexd
	nsr_host_wait_registered "$1" nsrsnmd
}

# nsr_host_enrol HOST - enrol HOST in the datazone of server $S (the
# documented nsrtrust steps), unless it has a certificate already.
nsr_host_enrol() {
	local h=$1 s=${S:-srv}
	[ -f "$ROOT/$h/tls/host.pem" ] && return 0
	nsr_host_exec "$h" "$BIN/nsrtrust" request >"$ROOT/$h.csr" &&
		nsr_host_exec "$s" "$BIN/nsrtrust" accept "$ROOT/$h.csr" \
			>"$ROOT/$h.bundle" &&
		nsr_host_exec "$h" "$BIN/nsrtrust" install "$ROOT/$h.bundle" ||
		die "cannot enrol $h in $s's datazone (nsrtrust)"
	rm -f "$ROOT/$h.csr" "$ROOT/$h.bundle"
}

# nsr_host_start_storage HOST - a storage node of server $S: nsrexecd -s
# -S $S (nsrsnmd, which serves that server's nsrd only).
nsr_host_start_storage() {
	nsr_host_enrol "$1"
	nsr_host_start "$1" nsrexecd -s -S "${S:-srv}"
	nsr_host_wait_registered "$1" nsrsnmd
}

# nsr_host_start_client HOST - a client: nsrexecd.
nsr_host_start_client() {
	nsr_host_enrol "$1"
	nsr_host_start "$1" nsrexecd
}

# nsr_host_tcp FROM TO PORT - connect from FROM to TO:PORT, TO by name
# (resolved through FROM's /etc/hosts); at most 5 s.
nsr_host_tcp() {
	nsr_host_exec "$1" timeout 5 bash -c 'exec 3<>"/dev/tcp/$0/$1"' \
		"$2" "$3" 2>/dev/null
}

# nsr_host_reach FROM TO - TO answers FROM at the IP level: ping where
# there is one, else a TCP connection to a port nobody listens on, which
# a reachable host refuses at once (a lost one times out); at most 5 s.
nsr_host_reach() {
	local out
	if command -v ping >/dev/null; then
		nsr_host_exec "$1" ping -q -c 1 -W 3 "$(nsr_host_addr "$2")" >/dev/null 2>&1
		return
	fi
	out=$(nsr_host_exec "$1" timeout 5 bash -c \
		'exec 3<>"/dev/tcp/$0/9"' "$(nsr_host_addr "$2")" 2>&1)
	grep -q "refused" <<<"$out"
}

# nsr_link_down HOST / nsr_link_up HOST - HOST's veth end in the hub.
nsr_link_down() {
	ip -n "$NSR_NET_HUB" link set "${NSR_NET_PORT[$1]:?no host $1}" down
}
nsr_link_up() {
	ip -n "$NSR_NET_HUB" link set "${NSR_NET_PORT[$1]:?no host $1}" up
}
