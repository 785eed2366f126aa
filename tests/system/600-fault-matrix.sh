#!/bin/bash
# 600-fault-matrix: SIGKILL of a process at a random point of a save, round
# after round, and the invariants a backup administrator relies on checked
# after each round:
#   - every save that reported "completed" is complete in the media
#     database (never lost), and at the end recovers identical;
#   - nothing is left in progress (the owner settled every session) and
#     every job is finished;
#   - the parallelism slots are free (the next save is admitted at once
#     with server parallelism 1);
#   - no in-progress AFTD session file (.part) outlives its session;
#   - the media database passes its integrity check.
# Most rounds back up (the victim: save, nsrd, nsrmmdbd,
# nsrindexd, nsrjobd or the data mover); the others recover a save set
# acknowledged earlier (the victim: recover, nsrd or the data mover), and
# then: no job is left active, the slot is free, and the next recover of
# that save set is identical.  Some rounds save into a failing medium: a
# vtape with a bad spot (EIO, NSR_TEST_VTAPE_EIO_AT) or a full AFTD
# (ENOSPC, a 30 MB tmpfs when run as root).  The seed is printed; replay a run with
#   NSR_FAULT_SEED=<seed> NSR_FAULT_ROUNDS=<n> ctest -R 600 -V
# (the default is 12 rounds, about a minute; soak runs raise the count).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/fault.sh"
nsr_setup 600-fault-matrix
S=127.0.0.1
W=$ROOT/work
fault_seed 12
# A short lease so settling an orphaned session takes seconds (save then
# renews every lease/4 s).
export NSR_LEASE_SEC=8
# A daemon killed again within 10 s of its restart is restarted after a
# growing back-off (its supervisor sees a crash loop): wait for it.
export NSR_WAIT_ANSWERS_SEC=90
mkdir -p "$W/aftd1" "$W/out"
# Media faults: the vtape of pool Tapes has a bad spot 20 MB in (EIO on
# the write that reaches it); the AFTD of pool Small is a 30 MB file
# system (ENOSPC), where the test can mount one (root).
export NSR_TEST_VTAPE_EIO_AT=20000000
SMALL=""
mkdir -p "$W/small"
if [ "$(id -u)" = 0 ] && mount -t tmpfs -o size=30m tmpfs "$W/small" 2>/dev/null; then
	SMALL=$W/small
	trap 'umount -l "$W/small" 2>/dev/null; nsr_cleanup' EXIT
fi
nsr_start_datazone
nsr_device aftd1 adv_file "$W/aftd1"
check "label" "$BIN/nsrmm" -s $S -q -l -y -b Default -f aftd1 Disk.001
printf 'create type: NSR pool; name: Tapes\ncreate type: NSR pool; name: Small\n' |
	"$BIN/nsradmin" -s $S -i - >/dev/null 2>&1
nsr_device vt1 vtape "$W/vt1.vtape"
if [ -n "$SMALL" ]; then
	nsr_device small adv_file "$SMALL"
else
	echo "# no small file system (not root): no ENOSPC rounds"
fi
printf '. type: NSR\nupdate parallelism: 1\n' |
	"$BIN/nsradmin" -s $S -i - >/dev/null 2>&1

# The detector of active jobs detects one: a job is active while a save
# streams.
mkdir -p "$W/warm"
head -c 300000000 /dev/zero | tr '\0' w >"$W/warm/big"
"$BIN/save" -s $S -q "$W/warm" >/dev/null 2>&1 &
spid=$!
seen=0
for i in $(seq 1 200); do
	[ "$(active_jobs)" -gt 0 ] && { seen=1; break; }
	kill -0 "$spid" 2>/dev/null || break
	sleep 0.05
done
wait "$spid"
check "jobquery shows the active job of a running save" test "$seen" = 1
check "and none once it ended" test "$(active_jobs)" = 0
rm -rf "$W/warm"

VICTIMS=(save nsrd nsrmmdbd nsrindexd nsrjobd nsrmmd)
RVICTIMS=(recover nsrd nsrmmd)
acked=()

# recover_round R - recover an acknowledged save set, kill a victim.
recover_round() {
	local r=$1 a v ms ssid rc left
	a=${acked[$((RANDOM % ${#acked[@]}))]}
	v=${RVICTIMS[$((RANDOM % ${#RVICTIMS[@]}))]}
	ms=$((RANDOM % 1500))
	ssid=$("$BIN/mminfo" -s $S -a -q "name=$W/r$a" -r ssid 2>/dev/null |
		awk '$1 ~ /^[0-9]+$/ {print $1; exit}')
	echo "# round $r: recover of round $a's save set $ssid, kill $v after $ms ms"
	rm -rf "$W/out"
	mkdir -p "$W/out"
	"$BIN/recover" -s $S -q -f -d "$W/out" -S "$ssid" >"$W/rec$r.out" 2>&1 &
	spid=$!
	fault_sleep_ms "$ms"
	kill_victim "$v"
	for i in $(seq 1 1200); do kill -0 "$spid" 2>/dev/null || break; sleep 0.1; done
	kill -KILL "$spid" 2>/dev/null
	wait "$spid"; rc=$?
	nsr_wait_answers nsrd nsrmmdbd nsrjobd nsrindexd
	# The recover session is settled: its job is no longer active.
	left=""
	for i in $(seq 1 100); do
		left=$(active_jobs)
		[ "$left" = 0 ] && break
		sleep 0.1
	done
	check "round $r: no job is left active (recover exit $rc; $left active)" \
		test "$left" = 0
	check "round $r: the slot is free: a save is admitted and completes" \
		probe_save "$r"
	check "round $r: the next recover of save set $ssid is identical" \
		recovers_identical "$W/r$a" -S "$ssid"
}

# media_round R - a save into a medium that fails under it: the vtape's
# bad spot (EIO) or the small AFTD's end (ENOSPC).  The save fails with
# the device's reason, its save set is not complete, the volume is
# relabeled for the next such round, and the usual invariants follow.
media_round() {
	local r=$1 kind pool dev vol out rc flags
	if [ -n "$SMALL" ] && [ $((RANDOM % 2)) = 0 ]; then
		kind=ENOSPC pool=Small dev=small vol=Small.001
	else
		kind=EIO pool=Tapes dev=vt1 vol=Tape.001
	fi
	echo "# round $r: save of 40 MB into $dev ($kind)"
	check "round $r: label $vol" "$BIN/nsrmm" -s $S -q -l -y -b $pool \
		-f $dev -z 256K $vol
	mkdir -p "$W/m$r"
	head -c 40000000 /dev/urandom >"$W/m$r/data"
	out=$("$BIN/save" -s $S -q -b $pool "$W/m$r" 2>&1); rc=$?
	check "round $r: the save fails ($kind, exit $rc)" test $rc -ne 0
	check "round $r: saying why: $(tail -n 2 <<<"$out" | head -n 1)" \
		grep -qiE "medium error|full|no space" <<<"$out"
	flags=$("$BIN/mminfo" -s $S -a -q "name=$W/m$r" -r sumflags 2>/dev/null |
		tail -n 1 | tr -d ' ')
	check "round $r: its save set is aborted ('$flags')" \
		grep -q a <<<"$flags"
	rm -f "$W/m$r/data"
}

for r in $(seq 1 "$ROUNDS"); do
	if [ ${#acked[@]} -gt 0 ] && [ $((RANDOM % 3)) = 0 ]; then
		recover_round "$r"
		continue
	fi
	if [ $((RANDOM % 5)) = 0 ]; then
		media_round "$r"
		# The common invariants of a round.
		left=$(in_progress)
		for i in $(seq 1 300); do
			[ -z "$left" ] && break
			sleep 0.1
			left=$(in_progress)
		done
		check "round $r: nothing left in progress${left:+ (still: $left)}" \
			test -z "$left"
		check "round $r: every job is finished" test "$(active_jobs)" = 0
		parts=$(find "$W/aftd1" "$W/small" -name '*.part' 2>/dev/null)
		check "round $r: no in-progress session file is left${parts:+ ($parts)}" \
			test -z "$parts"
		continue
	fi
	v=${VICTIMS[$((RANDOM % ${#VICTIMS[@]}))]}
	mb=$((20 + RANDOM % 300))
	ms=$((RANDOM % 1500))
	T=$W/r$r
	mkdir -p "$T/sub"
	head -c $((mb * 1000000)) /dev/zero | tr '\0' "$(printf "\\$(printf %o $((97 + r % 26)))")" >"$T/big"
	for i in 1 2 3; do head -c $((RANDOM * 7)) /dev/urandom >"$T/sub/f$i"; done
	echo "# round $r: save of $mb MB, kill $v after $ms ms"
	"$BIN/save" -s $S -q "$T" >"$W/save$r.out" 2>&1 &
	spid=$!
	fault_sleep_ms "$ms"
	kill_victim "$v"
	for i in $(seq 1 1200); do kill -0 "$spid" 2>/dev/null || break; sleep 0.1; done
	if kill -0 "$spid" 2>/dev/null; then
		fail "round $r: save ended within 120 s"
		kill -KILL "$spid"
	fi
	wait "$spid"; rc=$?
	nsr_wait_answers nsrd nsrmmdbd nsrjobd nsrindexd
	if [ $rc -eq 0 ]; then
		acked+=("$r")
		flags=$("$BIN/mminfo" -s $S -a -q "name=$T" -r sumflags 2>/dev/null |
			tail -n 1 | tr -d ' ')
		check "round $r: the acknowledged save set is complete ($flags)" \
			test "$flags" = cb
	else
		sed 's/^/#   save: /' "$W/save$r.out" | tail -n 2
	fi
	# Settled: nothing stays in progress (lease 8 s, bounded wait).
	left=""
	for i in $(seq 1 300); do
		left=$(in_progress)
		[ -z "$left" ] && break
		sleep 0.1
	done
	check "round $r: nothing left in progress${left:+ (still: $left)}" \
		test -z "$left"
	jobs=0
	for i in $(seq 1 100); do
		jobs=$(active_jobs)
		[ "$jobs" = 0 ] && break
		sleep 0.1
	done
	check "round $r: every job is finished ($jobs active)" test "$jobs" = 0
	# The slot is free: with parallelism 1 a save is admitted at once.
	check "round $r: the next save is admitted and completes" \
		probe_save "$r"
	parts=$(find "$W/aftd1" -name '*.part' 2>/dev/null)
	check "round $r: no in-progress session file is left${parts:+ ($parts)}" \
		test -z "$parts"
	check "round $r: the media database is consistent" \
		"$BIN/mmdb_testclnt" -s $S check
done

# Every acknowledged save set comes back, byte for byte.
for r in "${acked[@]}"; do
	check "round $r: the acknowledged save recovers identical" \
		recovers_identical "$W/r$r"
done
echo "# ${#acked[@]} of $ROUNDS saves were acknowledged; seed $SEED"
nsr_done
