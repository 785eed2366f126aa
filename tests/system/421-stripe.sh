#!/bin/bash
# 421-stripe: one save session striped over several connections to the
# mover (AFTD).  save --stripes=4 -v says the data went over 4
# connections, the mover logs three joins, and the tree recovers
# identical; the save set is exactly as large as the same tree saved over
# one connection (--stripes=1, a name of the same length, a fixed read
# size), and NSR_MMD_STRIPES=3 sets the number the same way.  Joins that
# show a wrong token are refused (the save stays on one connection).
# Through the benchmark's delaying proxy (delayproxy -V: every connection
# of save goes through it, 20 ms round trip, 1 MiB window per
# connection) a striped save opens four connections to the mover's port
# and recovers identical.  A striped save through the recording proxy
# (tcprec) shows no saved byte in clear on any connection (TLS on every
# one).  A vtape's mover does not stripe (its sessions may span): the
# save stays on one connection and still succeeds.
. "$(dirname "$0")/lib.sh"
nsr_setup 421-stripe
S=127.0.0.1
W=$ROOT/work
T=$W/tree
nsr_start_aftd_datazone

MARK=NSRSTRIPE$(head -c 6 /dev/urandom | od -An -tx1 | tr -d ' \n')
mkdir -p "$T/d"
head -c 24000000 /dev/urandom >"$T/big.bin"
for i in $(seq 1 40000); do echo "$MARK line $i"; done >"$T/d/marked.txt"
for i in $(seq 1 50); do echo "small $i" >"$T/d/s$i"; done

# ssid_of NAME - the newest save set named NAME.
ssid_of() {
	"$BIN/mminfo" -s $S -a -q "name=$1" -r ssid 2>/dev/null |
		awk '$1 ~ /^[0-9]+$/ {s = $1} END {print s}'
}
# size_of SSID - its size in bytes as the media database has it.
size_of() {
	"$BIN/mmdtest" mmdb-frags $S "$1" 2>/dev/null |
		awk '{t += $4} END {print t + 0}'
}

# --- four connections -----------------------------------------------------
# A fixed read size (NSR_READ_SIZE) makes the save stream the same for
# the same tree; the adaptive one varies with timing.
export NSR_READ_SIZE=1048576
"$BIN/save" -s $S -v -N ss-four --stripes=4 "$T" >"$W/s4.out" 2>&1
check "save --stripes=4 exits 0" test $? -eq 0
check "save says the data went over 4 connections" \
	grep -q "over 4 connections" "$W/s4.out"
check "the mover logs three connections joining" \
	test "$(grep -c 'connection [0-9] joined' "$ROOT/logs/daemon.log")" -eq 3
S4=$(ssid_of ss-four)
check "the striped save set recovers identical" \
	recovers_identical "$T" -S "$S4"

# --- the same bytes as one connection ---------------------------------------
"$BIN/save" -s $S -v -N ss-one1 --stripes=1 "$T" >"$W/s1.out" 2>&1
check "save --stripes=1 exits 0" test $? -eq 0
check "and says nothing of connections" \
	sh -c "! grep -q 'connections' '$W/s1.out'"
S1=$(ssid_of ss-one1)
unset NSR_READ_SIZE
Z4=$(size_of "$S4"); Z1=$(size_of "$S1")
echo "# striped $S4: $Z4 bytes, single $S1: $Z1 bytes"
check "the striped save set is as large as the single one (> 24 MB)" \
	test "$Z4" -gt 24000000 -a "$Z4" = "$Z1"

NSR_MMD_STRIPES=3 "$BIN/save" -s $S -v -N env3 "$T" >"$W/s3.out" 2>&1
check "NSR_MMD_STRIPES=3 save exits 0 over 3 connections" \
	grep -q "over 3 connections" "$W/s3.out"
"$BIN/save" -s $S -v -N bad --stripes=17 "$T" >"$W/s17.out" 2>&1
check "save --stripes=17 is a usage error (exit 2)" test $? -eq 2

# --- a wrong token is refused ----------------------------------------------
NSR_TEST_MMD_BAD_TOKEN=1 "$BIN/save" -s $S -v -N badtok --stripes=4 \
	"$T/d" >"$W/sb.out" 2>&1
check "a save whose joins show a wrong token exits 0" test $? -eq 0
check "and stays on one connection" \
	sh -c "! grep -q 'connections' '$W/sb.out'"
check "the mover refused the joins, saying why" \
	grep -q "refused a connection .* with that token" "$ROOT/logs/daemon.log"
check "the save set recovers identical" \
	recovers_identical "$T/d" -S "$(ssid_of badtok)"

# --- through a delaying proxy -------------------------------------------------
DP=$BIN/../tests/bench/delayproxy
if [ -x "$DP" ]; then
	PP=$(free_port)
	"$DP" -V -v -p "$PP" -d 10 -w 1048576 -t 600 2>"$W/dp.log" &
	PIDS+=("$!")
	for i in $(seq 1 50); do
		grep -q listening "$W/dp.log" 2>/dev/null && break; sleep 0.1
	done
	NSR_TEST_CONNECT_VIA=127.0.0.1:$PP "$BIN/save" -s $S -v -N delayed \
		--stripes=4 "$T" >"$W/sd.out" 2>&1
	check "a striped save through delayproxy (20 ms RTT) exits 0" \
		test $? -eq 0
	MAXC=$(sed -n 's/^delayproxy: connection to \(.*\)$/\1/p' "$W/dp.log" |
		sort | uniq -c | sort -rn | awk 'NR == 1 {print $1}')
	check "four of its connections went to one port, the mover's" \
		test "${MAXC:-0}" -ge 4
	check "the delayed save set recovers identical" \
		recovers_identical "$T" -S "$(ssid_of delayed)"
else
	echo "# skipped the delaying proxy: $DP not built (NSR_BENCH=OFF)"
fi

# --- TLS on every connection ------------------------------------------------
"$BIN/tcprec" "$W/rec.port" "$W/rec.cap" &
RP=$!
PIDS+=("$RP")
for i in $(seq 1 50); do [ -s "$W/rec.port" ] && break; sleep 0.1; done
NSR_TEST_CONNECT_VIA=127.0.0.1:$(cat "$W/rec.port") "$BIN/save" -s $S -v \
	-N recorded --stripes=4 "$T/d" >"$W/sr.out" 2>&1
check "a striped save through the recording proxy succeeds over 4" \
	grep -q "over 4 connections" "$W/sr.out"
kill "$RP"; wait "$RP" 2>/dev/null
check "the recording holds the save's traffic (> 1 MB)" \
	test "$(stat -c %s "$W/rec.cap")" -gt 1000000
check "and not one copy of the marker" \
	test "$(grep -a -c "$MARK" "$W/rec.cap")" -eq 0

# --- a vtape does not stripe -----------------------------------------------
printf 'create type: NSR pool; name: Tapes\n' |
	"$BIN/nsradmin" -s $S -i - >/dev/null 2>&1
nsr_device vt1 vtape "$W/vt1.vtape"
check "label Tape.001 in vt1 (pool Tapes)" \
	"$BIN/nsrmm" -s $S -q -l -y -b Tapes -f vt1 Tape.001
"$BIN/save" -s $S -v -b Tapes -N tape --stripes=4 "$T/d" >"$W/st.out" 2>&1
check "save --stripes=4 to a vtape exits 0" test $? -eq 0
check "and stays on one connection" \
	sh -c "! grep -q 'connections' '$W/st.out'"
check "the vtape save set recovers identical" \
	recovers_identical "$T/d" -S "$(ssid_of tape)"
nsr_done
