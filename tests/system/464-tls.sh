#!/bin/bash
# 464-tls: RPC-with-TLS on one host.  The first start made the datazone's
# CA and this host's key and certificate (keys mode 0600).  A save whose
# every connection (nsrd, locator, index, mover) goes through a recording
# proxy of ours (tcprec) succeeds and the recording holds none of a
# marker string the saved file is full of; the same save without TLS
# (allowed by plain-hosts for this check only) does put the marker on
# the wire, so the capture is real.  Without plain-hosts a client without
# TLS is refused: save and mminfo fail saying why, and every running
# daemon answers its NULL ping but denies any other call, while a TLS
# client is admitted; so is a client without TLS on the daemons' local
# sockets (the kernel names it there), and a save without the proxy
# reaches its mover there.  The save recovers identical.
. "$(dirname "$0")/lib.sh"
nsr_setup 464-tls
S=127.0.0.1
W=$ROOT/work
T=$W/tree
nsr_start_aftd_datazone

# --- certificates made at first start ------------------------------------
check "the CA and host certificate exist" \
	test -s "$ROOT/tls/ca.pem" -a -s "$ROOT/tls/host.pem"
check "the CA key is mode 0600" test "$(stat -c %a "$ROOT/tls/ca.key")" = 600
check "the host key is mode 0600" \
	test "$(stat -c %a "$ROOT/tls/host.key")" = 600
check "nsrtrust list shows this host's certificate valid" \
	sh -c "'$BIN/nsrtrust' list | grep -q \"^$(hostname) .* valid\$\""

# --- a tree whose file is full of a marker -------------------------------
MARK=NSRMARK$(head -c 6 /dev/urandom | od -An -tx1 | tr -d ' \n')
mkdir -p "$T"
for i in $(seq 1 20000); do echo "$MARK line $i"; done >"$T/secret.txt"
head -c 200000 /dev/urandom >"$T/noise.bin"

# rec_save NAME [ENV...] - save $T with every connection through tcprec,
# recording into $W/NAME.cap; the save's exit status in REC_RC.
rec_save() {
	local name=$1 pid port i
	shift
	rm -f "$W/$name.port" "$W/$name.cap"
	"$BIN/tcprec" "$W/$name.port" "$W/$name.cap" &
	pid=$!
	PIDS+=("$pid")
	for i in $(seq 1 50); do [ -s "$W/$name.port" ] && break; sleep 0.1; done
	port=$(cat "$W/$name.port")
	env "$@" NSR_TEST_CONNECT_VIA=127.0.0.1:$port \
		"$BIN/save" -s $S "$T" >"$W/$name.out" 2>&1
	REC_RC=$?
	kill "$pid"; wait "$pid" 2>/dev/null
}

rec_save tls
check "a save through the recording proxy succeeds" test "$REC_RC" -eq 0
check "its mover session came over TCP" grep -Eq \
	"info: save set [0-9]+ \(.*\) started on volume .*, from 127\.0\.0\.1:[0-9]+\$" \
	"$ROOT/logs/daemon.log"
check "the recording holds the save's traffic (> 300 kB)" \
	test "$(stat -c %s "$W/tls.cap")" -gt 300000
check "and not one copy of the marker" \
	test "$(grep -a -c "$MARK" "$W/tls.cap")" -eq 0
check "the saved tree recovers identical" recovers_identical "$T"

# --- on this host a save needs no proxy: the local sockets ---------------
"$BIN/save" -s $S "$T" >"$W/local.out" 2>&1
check "a save without the proxy succeeds" test $? -eq 0
check "its mover session came over the mover's local socket" grep -Eq \
	"info: save set [0-9]+ \(.*\) started on volume .*, from local pid [0-9]+ uid $(id -u)\$" \
	"$ROOT/logs/daemon.log"

# --- the capture is real: without TLS the marker is on the wire ----------
echo "127.0.0.1   # 464-tls: this check only" >"$ROOT/tls/plain-hosts"
rec_save plain NSR_TEST_NO_TLS=1
check "a plain save, allowed by plain-hosts, succeeds" test "$REC_RC" -eq 0
check "and its recording holds the marker" grep -a -q "$MARK" "$W/plain.cap"
rm -f "$ROOT/tls/plain-hosts"

# --- a plain client is refused --------------------------------------------
# Over TCP, that is: a client of this host would otherwise use the
# daemons' local sockets, where the kernel, not TLS, names it (below).
export NSR_LOCAL_SOCKETS=0
NSR_TEST_NO_TLS=1 "$BIN/save" -s $S "$T" >"$W/refused.out" 2>&1
check "without plain-hosts a save without TLS fails" test $? -ne 0
check "saying TLS is needed" grep -q "needs TLS" "$W/refused.out"
NSR_TEST_NO_TLS=1 "$BIN/mminfo" -s $S >"$W/mminfo.out" 2>&1
check "mminfo without TLS fails" test $? -ne 0
# logged REGEX - the daemons' log shows it within 10 s (refusals are
# logged in summaries, after 1.5 s without a new one).
logged() { nsr_wait_logged "$ROOT/logs/daemon.log" "$1"; }
check "the refusal is logged, with who" logged \
	"warn: refused [0-9]+ calls without TLS, the last from 127\.0\.0\.1:[0-9]+ \((nsrd|nsrexecd) procedure [0-9]+\)"

# port_of DAEMON - the port the last start of DAEMON (a mover: nsrmmd.N)
# listens on.
port_of() {
	sed -n "s/.*$1[.0-9]*\[[0-9]*\]: info: started, .* listening on .* port \([0-9]*\).*/\1/p" \
		"$ROOT/logs/daemon.log" | tail -n 1
}

for d in nsrmmd nsrexecd nsrd nsrmmdbd nsrindexd nsrjobd nsrsnmd; do
	p=$(port_of $d)
	if [ -z "$p" ]; then
		fail "$d's port is in the log"; continue
	fi
	NSR_TEST_NO_TLS=1 "$BIN/rpcprobe" $S "$p" $d 0 2>/dev/null
	check "$d answers a plain NULL ping" test $? -eq 0
	NSR_TEST_NO_TLS=1 "$BIN/rpcprobe" $S "$p" $d 1 2>/dev/null
	check "$d denies a plain call" test $? -eq 3
	"$BIN/rpcprobe" $S "$p" $d 1 2>/dev/null
	check "$d admits the same call over TLS" test $? -eq 0
	NSR_LOCAL_SOCKETS=1 NSR_TEST_NO_TLS=1 "$BIN/rpcprobe" $S "$p" $d 1 \
		2>/dev/null
	check "$d admits it without TLS on its local socket" test $? -eq 0
done
nsr_done
