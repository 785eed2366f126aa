#!/bin/bash
# 601-fault-labels-purges: SIGKILL at a random point of the operations
# that take data away, round after round:
#   - relabel of an AFTD that holds save sets (nsrmm -l -y; victim: nsrmm,
#     nsrd, nsrmmdbd or the mover doing it), or a label of a new AFTD;
#   - delete of a save set and its bytes (nsrmm -d -S; same victims);
#   - delete of a whole AFTD volume with its save sets (nsrmm -d VOLUME;
#     same victims): afterwards the volume, its session files and its
#     save sets are all gone, or all there and in agreement;
#   - a purge of the jobs database (an explicit purge and the periodic
#     one every second; victim: the purging client, nsrd or nsrjobd).
# The mover sleeps after each session file it removes
# (NSR_TEST_REMOVE_PAUSE_MS), and nsrd deletes a volume's save sets
# from the media database one to a transaction
# (NSR_TEST_MMDB_DELETE_BATCH), so kills land halfway too.  After every
# round, within a bounded wait:
#   - no label or delete is left half done (nsrd's and the mover's intent
#     records are gone): the volume was relabeled completely or not at
#     all, and one volume has its name; a new volume is usable (mounts:
#     its medium and its record agree) or cleanly absent;
#   - the AFTD's bytes (its session files) equal the volume's written
#     figure in mminfo, which equals the sizes of the save sets on it;
#   - nothing is in progress, every job is finished, the jobs database
#     passes its integrity check and expired jobs are purged, recent ones
#     kept;
#   - the media database is consistent (MM_CHECK), and the next save to
#     the volume and its recover are correct.
# At the end the datazone is stopped and nsrmmdbd -t checks the media
# database offline.  The seed is printed; replay a run with
#   NSR_FAULT_SEED=<seed> NSR_FAULT_ROUNDS=<n> ctest -R 601 -V
# (the default is 8 rounds, about a minute; soak runs raise the count).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/fault.sh"
nsr_setup 601-fault-labels-purges
S=127.0.0.1
W=$ROOT/work
A=$W/lab
fault_seed 8
export NSR_LEASE_SEC=8
export NSR_WAIT_ANSWERS_SEC=90
export NSR_TEST_REMOVE_PAUSE_MS=80
export NSR_TEST_MMDB_DELETE_BATCH=1
export NSR_TEST_JOBS_PURGE_INTERVAL=1
export NSR_TEST_JOBDB_BATCH=4
mkdir -p "$A" "$W/out"
nsr_start_datazone
printf '. type: NSR\nupdate jobsdb retention in hours: 1\n' |
	"$BIN/nsradmin" -s $S -i - >/dev/null 2>&1
echo 'create type: NSR pool; name: Lab' | "$BIN/nsradmin" -s $S -i - >/dev/null 2>&1
nsr_device lab adv_file "$A"
check "label Lab.001" "$BIN/nsrmm" -s $S -q -l -y -b Lab -f lab Lab.001

# quiet CMD... - CMD with its output dropped.
quiet() { "$@" >/dev/null; }
# json_num FIELD - the numbers of FIELD in mminfo's JSON on stdin.
json_num() { grep -o "\"$1\": *[0-9]*" | grep -o '[0-9]*$'; }
# written - the volume's written figure.
written() {
	"$BIN/mminfo" -s $S -xj -r written Lab.001 2>/dev/null |
		json_num written
}
# ss_sum - the sizes of the save sets on the volume, added up.
ss_sum() {
	"$BIN/mminfo" -s $S -a -q volume=Lab.001 -xj -r ssid,totalsize 2>/dev/null |
		json_num totalsize | awk '{t += $1} END {print t + 0}'
}
# live_ssids - the save sets on the volume.
live_ssids() {
	"$BIN/mminfo" -s $S -a -q volume=Lab.001 -r ssid 2>/dev/null |
		awk '$1 ~ /^[0-9]+$/ {print $1}'
}
# aftd_bytes - the bytes of the AFTD's finished session files.
aftd_bytes() {
	find "$A" -name 'ss.*' ! -name '*.part' -printf '%s\n' |
		awk '{t += $1} END {print t + 0}'
}
# settled - no intent record left at nsrd or on the AFTD.
settled() {
	[ ! -s "$ROOT/res/label.intent" ] && [ ! -s "$ROOT/res/delete.intent" ] &&
		[ ! -s "$ROOT/res/voldelete.intent" ] &&
		[ ! -e "$A/label.intent" ] && [ ! -e "$A/remove.intent" ] &&
		{ [ -z "${VD:-}" ] || [ ! -e "$VD/remove.intent" ]; }
}
# figures_true - one session file per save set on the volume, whose
# sizes add up to the written figure; the files hold that plus at most
# their blocks' padding and headers (under two blocks a file).
figures_true() {
	local b w s nf ns
	b=$(aftd_bytes); w=$(written); s=$(ss_sum)
	nf=$(find "$A" -name 'ss.*' ! -name '*.part' | wc -l)
	ns=$(live_ssids | wc -l)
	FIG="$nf files of $b bytes, written ${w:-none}, $ns save sets of $s"
	[ -n "$w" ] && [ "$w" = "$s" ] && [ "$nf" = "$ns" ] &&
		[ "$b" -ge "$s" ] && [ "$b" -lt $((s + nf * 2 * 262144 + 1)) ]
}
# one_volume - exactly one Lab.001 in the media database, mounted on lab.
one_volume() {
	[ "$("$BIN/mminfo" -s $S -m 2>/dev/null | grep -cw Lab.001)" = 1 ] &&
		printf 'option dynamic\nprint type: NSR device; name: lab\n' |
		"$BIN/nsradmin" -s $S -i - 2>/dev/null | grep -q "volume name: Lab.001"
}
# fill R N - N small save sets onto the volume.
fill() {
	local i
	for i in $(seq 1 "$2"); do
		mkdir -p "$W/f$1.$i"
		head -c $((200000 + RANDOM * 30)) /dev/urandom >"$W/f$1.$i/d"
		"$BIN/save" -s $S -q -b Lab "$W/f$1.$i" >"$W/fill.out" 2>&1 ||
			fail "round $1: fill save $i: $(tail -n 2 "$W/fill.out")"
	done
}
# old_jobs R N - N finished jobs with a log line that ended two hours ago
# (expired).  Each is made active with its log, then finished: the purge
# that runs every second must not take it between the two calls.
old_jobs() {
	local i id
	for i in $(seq 1 "$2"); do
		id=$("$BIN/jobd_testclnt" create "type=save job" client=old$1 \
			state=active start=-8000 log=x) &&
			"$BIN/jobd_testclnt" update "$id" state=completed \
				end=-7200 >/dev/null ||
			fail "round $1: create an expired job"
	done
}
# jobs_of CLIENT - how many jobs of CLIENT nsrjobd holds.
jobs_of() {
	"$BIN/jobd_testclnt" query "print client: $1" 2>/dev/null | grep -c .
}
# no_jobs_of CLIENT - nsrjobd holds no job of CLIENT (a command, so that
# wait_until asks again at every poll).
no_jobs_of() { [ "$(jobs_of "$1")" = 0 ]; }

# fresh_label_clean R - the new volume of round R is usable (in the media
# database, and its medium mounts against that record) or cleanly absent
# (neither in the media database nor claimed by its device).
fresh_label_clean() {
	local out
	if "$BIN/mminfo" -s $S -m 2>/dev/null | grep -qw "Lab.N$1"; then
		"$BIN/nsrmm" -s $S -q -m -f "new$1" >/dev/null 2>&1
		return
	fi
	out=$(printf 'option dynamic\nprint type: NSR device; name: new%s\n' "$1" |
		"$BIN/nsradmin" -s $S -i - 2>/dev/null)
	! grep -q "volume name: Lab.N$1;" <<<"$out"
}

# vol_whole R - volume Lab.V<R> was deleted whole or not at all: gone
# with its session files and save sets, or there with one session file
# per save set on it.
vol_whole() {
	local nf ns gone=1 id
	nf=$(find "$VD" -name 'ss.*' ! -name '*.part' | wc -l)
	if "$BIN/mminfo" -s $S -m 2>/dev/null | grep -qw "Lab.V$1"; then
		ns=$("$BIN/mminfo" -s $S -a -q "volume=Lab.V$1" -r ssid 2>/dev/null |
			awk '$1 ~ /^[0-9]+$/' | wc -l)
		FIG="Lab.V$1 kept: $nf files, $ns save sets"
		[ "$nf" = "$ns" ] && [ "$ns" -gt 0 ]
		return
	fi
	for id in $VSSIDS; do
		"$BIN/mminfo" -s $S -a -q "ssid=$id" -r ssid 2>/dev/null |
			grep -qw "$id" && gone=0
	done
	FIG="Lab.V$1 deleted: $nf files left, save sets gone: $gone"
	[ "$nf" = 0 ] && [ "$gone" = 1 ]
}

VICTIMS=(nsrmm nsrd nsrmmdbd nsrmmd)
PVICTIMS=(jobpurge nsrd nsrjobd)
"$BIN/jobd_testclnt" create "type=save job" client=recent state=completed \
	start=-120 end=-60 >/dev/null || fail "create a recent job"

for r in $(seq 1 "$ROUNDS"); do
	kind=$((RANDOM % 5))
	ms=$((RANDOM % 600))
	FAULT_DEVICE=lab
	VD=""
	if [ $kind = 4 ]; then
		v=${VICTIMS[$((RANDOM % ${#VICTIMS[@]}))]}
		VD=$W/vd$r
		FAULT_DEVICE=vd$r
		mkdir -p "$VD"
		nsr_device "vd$r" adv_file "$VD"
		# a pool of its own: a volume kept by an earlier round is not
		# written to
		echo "create type: NSR pool; name: LabV$r" |
			quiet "$BIN/nsradmin" -s $S -i -
		quiet "$BIN/nsrmm" -s $S -q -l -y -b "LabV$r" -f "vd$r" "Lab.V$r" ||
			fail "round $r: label Lab.V$r"
		for i in 1 2 3; do
			mkdir -p "$W/v$r.$i"
			head -c $((200000 + RANDOM * 30)) /dev/urandom >"$W/v$r.$i/d"
			"$BIN/save" -s $S -q -b "LabV$r" "$W/v$r.$i" >/dev/null 2>&1 ||
				fail "round $r: save $i to Lab.V$r"
		done
		VSSIDS=$("$BIN/mminfo" -s $S -a -q "volume=Lab.V$r" -r ssid 2>/dev/null |
			awk '$1 ~ /^[0-9]+$/ {print $1}')
		echo "# round $r: delete of volume Lab.V$r ($(echo $VSSIDS | wc -w) save sets), kill $v after $ms ms"
		"$BIN/nsrmm" -s $S -q -d -y "Lab.V$r" >"$W/op$r.out" 2>&1 &
	elif [ $kind = 3 ]; then
		v=${VICTIMS[$((RANDOM % ${#VICTIMS[@]}))]}
		FAULT_DEVICE=new$r
		mkdir -p "$W/new$r"
		nsr_device "new$r" adv_file "$W/new$r"
		echo "# round $r: label of a new volume Lab.N$r, kill $v after $ms ms"
		"$BIN/nsrmm" -s $S -q -l -y -b Lab -f "new$r" "Lab.N$r" >"$W/op$r.out" 2>&1 &
	elif [ $kind = 2 ]; then
		v=${PVICTIMS[$((RANDOM % ${#PVICTIMS[@]}))]}
		echo "# round $r: purge of 30 expired jobs, kill $v after $ms ms"
		old_jobs "$r" 30
		"$BIN/jobd_testclnt" purge 1 >/dev/null 2>&1 &
	else
		v=${VICTIMS[$((RANDOM % ${#VICTIMS[@]}))]}
		fill "$r" $((1 + RANDOM % 3))
		if [ $kind = 0 ]; then
			echo "# round $r: relabel of Lab.001 ($(live_ssids | wc -l) save sets), kill $v after $ms ms"
			"$BIN/nsrmm" -s $S -q -l -y -b Lab -f lab Lab.001 >"$W/op$r.out" 2>&1 &
		else
			ssid=$(live_ssids | head -n $((1 + RANDOM % 3)) | tail -n 1)
			echo "# round $r: delete of save set $ssid, kill $v after $ms ms"
			"$BIN/nsrmm" -s $S -q -d -y -S "$ssid" >"$W/op$r.out" 2>&1 &
		fi
	fi
	spid=$!
	fault_sleep_ms "$ms"
	kill_victim "$v"
	for i in $(seq 1 600); do kill -0 "$spid" 2>/dev/null || break; sleep 0.1; done
	kill -0 "$spid" 2>/dev/null && fail "round $r: the tool ended within 60 s"
	kill -KILL "$spid" 2>/dev/null
	wait "$spid"; rc=$?
	[ -s "$W/op$r.out" ] && sed 's/^/#   nsrmm: /' "$W/op$r.out" | tail -n 2
	nsr_wait_answers nsrd nsrmmdbd nsrjobd nsrindexd

	check "round $r: nothing is left half done (exit $rc)" wait_until 60 settled
	if [ $kind = 3 ]; then
		check "round $r: no intent record is left on the new AFTD" \
			wait_until 30 test ! -e "$W/new$r/label.intent"
		check "round $r: Lab.N$r is usable or cleanly absent" \
			fresh_label_clean "$r"
		[ $rc = 0 ] && check "round $r: the reported label is in the media database" \
			grep -qw "Lab.N$r" <<<"$("$BIN/mminfo" -s $S -m 2>/dev/null)"
	elif [ $kind = 4 ]; then
		FIG=""
		wait_until 30 vol_whole "$r"
		check "round $r: the volume is deleted whole or not at all ($FIG)" \
			vol_whole "$r"
		[ $rc = 0 ] && check "round $r: the reported delete removed Lab.V$r" \
			test -z "$("$BIN/mminfo" -s $S -m 2>/dev/null | grep -w "Lab.V$r")"
		check "round $r: one volume Lab.001, mounted" one_volume
	elif [ $kind = 2 ]; then
		check "round $r: the jobs database is intact" \
			quiet "$BIN/jobd_testclnt" check-db "$ROOT/jobs/jobsdb"
		check "round $r: the expired jobs are purged" \
			wait_until 30 no_jobs_of "old$r"
		check "round $r: a recent job is kept" test "$(jobs_of recent)" = 1
	else
		check "round $r: one volume Lab.001, mounted" one_volume
	fi
	# What nsrmm reported done is done.
	if [ $kind = 0 ] && [ $rc = 0 ]; then
		check "round $r: the reported relabel emptied the volume" \
			test -z "$(live_ssids)"
	elif [ $kind = 1 ] && [ $rc = 0 ]; then
		check "round $r: the reported delete removed save set $ssid" \
			test -z "$("$BIN/mminfo" -s $S -a -q ssid=$ssid -r ssid 2>/dev/null |
				awk '$1 ~ /^[0-9]+$/')"
	fi
	FIG=""
	wait_until 30 figures_true
	check "round $r: AFTD bytes, written and save sets agree ($FIG)" figures_true
	check "round $r: nothing left in progress" test -z "$(in_progress)"
	check "round $r: every job is finished" wait_until 10 no_active_jobs
	check "round $r: the media database is consistent" \
		quiet "$BIN/mmdb_testclnt" -s $S check
	check "round $r: the next save to Lab.001 completes" probe_save "$r" -b Lab
	check "round $r: and recovers identical" recovers_identical "$W/probe$r"
	check "round $r: AFTD bytes, written and save sets still agree" figures_true
done

# Offline: stop the datazone and check the media database with -t.
p=$(cat "$ROOT/logs/nsrd.pid")
m=$(cat "$ROOT/logs/nsrmmdbd.pid")
kill -TERM "$p"
for i in $(seq 1 200); do
	kill -0 "$p" 2>/dev/null || kill -0 "$m" 2>/dev/null || break
	sleep 0.1
done
check "nsrmmdbd -t: the media database is consistent" \
	"$BIN/nsrmmdbd" -t -R "$ROOT"
echo "# seed $SEED"
nsr_done
