#!/bin/bash
# 005-conn-flood: 4,000 idle TCP connections to each daemon of a
# datazone (nsrexecd's two ports, nsrd, nsrmmdbd, nsrindexd, nsrjobd,
# nsrsnmd and the data mover), held while a save, a recover, mminfo and
# jobquery run: all must work, no daemon may grow a thread per connection,
# and each daemon must close the silent connections after the grace time
# and say so in its log.  Bounded: connflood gives up after 100 s.
. "$(dirname "$0")/lib.sh"
nsr_setup 005-conn-flood
S=127.0.0.1
W=$ROOT/work
N=4000
GRACE=30	# the default NSR_RPC_GRACE_SEC
FLOOD=${NSR_BUILD:?NSR_BUILD must point at the build directory}/tests/connflood
FPIDS=()
mkdir -p "$W"

# Each daemon needs N descriptors and more; so do the helpers (one each).
ulimit -n "$(ulimit -Hn)" 2>/dev/null
test "$(ulimit -n)" -ge $((N + 512)) || {
	echo "# skip: descriptor limit $(ulimit -n) is below $((N + 512))"
	exit 0
}

# stop_floods - stop every helper we started, by pid.
stop_floods() {
	local p
	for p in "${FPIDS[@]}"; do kill -TERM "$p" 2>/dev/null; done
	for p in "${FPIDS[@]}"; do wait "$p" 2>/dev/null; done
	FPIDS=()
}
trap 'stop_floods; nsr_cleanup' EXIT

nsr_start_datazone
mkdir -p "$W/aftd1"
nsr_device aftd1 adv_file "$W/aftd1"
check "a volume is labeled" "$BIN/nsrmm" -s $S -l -y -b Default -f aftd1 FLOOD.001

# port_of NAME - the port NAME said it listens on (daemon.log).
port_of() {
	sed -n "s/.*$1\[[0-9]*\]: info: started.*listening on 127\.0\.0\.1 port \([0-9]*\).*/\1/p" \
		"$ROOT/logs/daemon.log" | tail -n 1
}
declare -A PORT
PORT[nsrexecd]=$NSR_EXEC_PORT
PORT[locator]=$NSR_PORTMAP_PORT
for d in nsrd nsrmmdbd nsrindexd nsrjobd nsrsnmd nsrmmd.1; do
	PORT[$d]=$(port_of "$d")
done
check "every daemon's port is known" test -n "${PORT[nsrd]}" -a \
	-n "${PORT[nsrmmdbd]}" -a -n "${PORT[nsrindexd]}" -a \
	-n "${PORT[nsrjobd]}" -a -n "${PORT[nsrsnmd]}"
cap=$(sed -n 's/.*nsrmmdbd\[[0-9]*\]: info: connections: at most \([0-9,]*\).*/\1/p' \
	"$ROOT/logs/daemon.log" | tr -d , | tail -n 1)
check "nsrmmdbd has descriptors for the flood (cap ${cap:-?})" \
	test "${cap:-0}" -ge $N

# --- the flood -----------------------------------------------------------
t0=$(date +%s)
for d in "${!PORT[@]}"; do
	[ -n "${PORT[$d]}" ] || continue
	"$FLOOD" -n $N -t 100 -r "$W/ready.$d" "127.0.0.1:${PORT[$d]}" \
		>"$W/flood.$d" 2>&1 &
	FPIDS+=($!)
done
for i in $(seq 1 600); do
	n=$(ls "$W"/ready.* 2>/dev/null | wc -l)
	[ "$n" -ge ${#FPIDS[@]} ] && break
	sleep 0.1
done
for d in "${!PORT[@]}"; do
	[ -n "${PORT[$d]}" ] || continue
	check "$N idle connections held to $d" test "$(cat "$W/ready.$d" 2>/dev/null)" = $N
done
echo "# flood of $((N * ${#FPIDS[@]})) connections up in $(( $(date +%s) - t0 )) s"

# --- while held: a save, mminfo, jobquery, a recover -----------------------
T=$W/tree
mkdir -p "$T/d"
seq 1 20000 >"$T/d/numbers"
head -c 300000 /dev/urandom >"$T/d/random.bin"
out=$("$BIN/save" -s $S "$T" 2>&1); rc=$?
check "save works during the flood" test $rc -eq 0
check "and completes" grep -q "^completed savetime=" <<<"$out"
"$BIN/mminfo" -s $S -av >"$W/mminfo.out" 2>&1
check "mminfo works during the flood" grep -q "FLOOD.001.*$T" "$W/mminfo.out"
printf 'print type: save job\n' | "$BIN/jobquery" -s $S >"$W/jobs.out" 2>&1
check "jobquery works during the flood" grep -qi "completed" "$W/jobs.out"
"$BIN/recover" -s $S -a -d "$W/r1" "$T" >"$W/rec.out" 2>&1
check "recover works during the flood" "$BIN/nsrtreecmp" "$T" "$W/r1$T"
held=$(( $(date +%s) - t0 ))
check "all of that within the grace time ($held s < $GRACE s)" test $held -lt $GRACE

# Threads follow requests, not connections.
for d in nsrd nsrmmdbd nsrindexd nsrjobd; do
	th=$(awk '/^Threads:/ {print $2}' "/proc/$(cat "$ROOT/logs/$d.pid")/status")
	echo "# $d: $th threads while holding $N idle connections"
	check "$d runs far fewer threads than connections" test "$th" -lt 100
done

# --- the daemons close the silent connections and say so -------------------
# silent_closed NAME - how many silent connections NAME said it closed.
silent_closed() {
	sed -n "s/.*$1\[[0-9]*\]: info: closed \([0-9,]*\) connections that sent nothing within $GRACE s.*/\1/p" \
		"$ROOT/logs/daemon.log" | tr -d , | awk '{n += $1} END {print n + 0}'
}
for i in $(seq 1 $(( (GRACE + 15) * 10 ))); do
	[ "$(silent_closed nsrmmdbd)" -ge $N ] && break
	sleep 0.1
done
check "nsrmmdbd logs closing the $N silent connections" \
	test "$(silent_closed nsrmmdbd)" -ge $N
grep -m 2 "nsrmmdbd\[[0-9]*\]: info: closed" "$ROOT/logs/daemon.log" | sed 's/^/# /'
sleep 1
stop_floods
for d in nsrd nsrmmdbd nsrindexd nsrjobd locator; do
	check "the server closed every connection to $d" \
		grep -q "opened $N closed-by-server $N" "$W/flood.$d"
done
check "mminfo still works after the flood" grep -q "FLOOD.001" \
	<("$BIN/mminfo" -s $S -av 2>&1)
echo "# whole test took $(( $(date +%s) - t0 )) s after the datazone started"
nsr_done
