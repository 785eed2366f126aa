#!/bin/bash
# 470-lifecycle: browse and retention policies over a month on the test
# clock.  Client lc1 has browse policy 2 weeks and retention policy 3
# weeks; it is saved once a day for 28 days (full on days 0, 7, 14, 21,
# incr otherwise; a file changed each day with a time on the test
# clock), week 0 on volume Life.001 (aftd1, then marked full), the rest
# on Life.002 (aftd2).  On day 28, nsrim -n reports and changes nothing;
# an nsrim cut short after a few changes and the nsrim run after it
# together remove the index entries of exactly the save sets whose
# chain (the week: every incr builds on the one before, back to the
# full) is past its browse time and flags recyclable exactly those past
# retention, checked by ssid against the expectation computed here
# (fulls and incrs held by a later save set of their chain included);
# Life.001 becomes recyclable, Life.002 not.  A browse-expired save set
# still recovers by ssid; a second nsrim changes nothing.  Then with
# Life.002 full, the next save relabels the recyclable Life.001 by
# itself (same name and block size) and writes to it; the recycled save
# sets leave the media database and their AFTD files go.  Last, nsrd's
# own daily nsrim is seen to run once the test clock passes a day.  A
# volume's retention time (volretent) is the latest ssretent of its save
# sets as they are saved, and nsrim sets it again after a delete.  nsrim
# -l -n names the oldest full cycle with index entries and changes
# nothing; nsrim -l takes it out of the index (recoverable by ssid),
# never the last full.
. "$(dirname "$0")/lib.sh"
nsr_setup 470-lifecycle
S=127.0.0.1
W=$ROOT/work
T=$W/tree
C=lc1
DAY=86400
mkdir -p "$W/aftd1" "$W/aftd2" "$T"
export TZ=UTC
export NSR_TEST_CLOCK=$W/clock
export NSR_NSRIM_DAILY=no # nsrim runs by hand here, until the end
echo 0 >"$NSR_TEST_CLOCK"

# set_day D - the test clock at day D (plus the real time gone by).
set_day() {
	echo $(( $1 * DAY )) >"$W/clock.tmp"
	mv "$W/clock.tmp" "$NSR_TEST_CLOCK"
}

nsr_start_datazone
nsr_device aftd1 adv_file "$W/aftd1"
nsr_device aftd2 adv_file "$W/aftd2"
printf '%s\n' \
	"create type: NSR policy; name: TwoWeeks; period: Weeks; number of periods: 2" \
	"create type: NSR policy; name: ThreeWeeks; period: Weeks; number of periods: 3" \
	"create type: NSR client; name: $C; browse policy: TwoWeeks; retention policy: ThreeWeeks" |
	"$BIN/nsradmin" -s $S -i - >"$W/nsradmin.out" 2>&1
check "policies and client created" test $? -eq 0
check "label Life.001" "$BIN/nsrmm" -s $S -q -l -y -b Default -f aftd1 \
	Life.001

# A month of daily saves.  DAYSS[d] = ssid saved on day d.
declare -a DAYSS
for d in $(seq 0 27); do
	set_day $d
	if [ $d = 7 ]; then
		"$BIN/nsrmm" -s $S -q -o full Life.001
		check "label Life.002" "$BIN/nsrmm" -s $S -q -l -y -b Default \
			-f aftd2 Life.002
	fi
	now=$(( $(date +%s) + d * DAY ))
	printf 'day %d\n' $d >"$T/f$d"
	touch -d "@$now" "$T/f$d"
	lvl=incr
	[ $(( d % 7 )) = 0 ] && lvl=full
	"$BIN/save" -s $S -c $C -l $lvl "$T" >"$W/save$d.out" 2>&1 ||
		fail "day $d: save -l $lvl ($(tail -2 "$W/save$d.out"))"
	DAYSS[$d]=$("$BIN/mminfo" -s $S -a -q "client=$C" -ot -r ssid \
		2>/dev/null | awk '$1 ~ /^[0-9]+$/ {s = $1} END {print s}')
	[ $d = 0 ] && cp -a "$T" "$W/snap0"
	[ $d = 7 ] && cp -a "$T" "$W/snap7"
done
check "28 save sets" test "$("$BIN/mminfo" -s $S -a -q "client=$C" -r ssid |
	grep -c '^ *[0-9]')" = 28
check "every day's save set distinct" \
	test "$(printf '%s\n' "${DAYSS[@]}" | sort -u | wc -l)" = 28
check "day 1 saved only what changed (incr)" \
	grep -q "level incr" "$W/save1.out"

# Browse and retention set at SAVE_START from the policies on the test
# clock: day 3's save set, 14 and 21 days after day 3.
read -r b r <<<"$("$BIN/mminfo" -s $S -a -q "ssid=${DAYSS[3]}" -x j \
	-r ssbrowse,ssretent | sed -n 's/.*"ssbrowse": *"\{0,1\}\([0-9]*\).*"ssretent": *"\{0,1\}\([0-9]*\).*/\1 \2/p')"
base=$(( $(date +%s) ))
echo "# day 3: ssbrowse $b ssretent $r"
check "ssbrowse of day 3 is about day 17" \
	test -n "$b" -a $(( b - 17 * DAY )) -le "$base" -a \
	$(( b - 17 * DAY )) -gt $(( base - 600 ))
check "ssretent of day 3 is about day 24" \
	test -n "$r" -a $(( r - b )) = $(( 7 * DAY ))

# The expectation on day 28: a chain is a week (day 7k .. 7k+6); every
# member lives as long as the chain's last one (day 7k+6): browse until
# day 7k+20, retention until day 7k+27.
NOW=28
expect() { # expect DAY -> "BROWSABLE RECYCLABLE" (1/0)
	local last=$(( $1 / 7 * 7 + 6 ))
	echo $(( last + 14 > NOW )) $(( last + 21 <= NOW ))
}

set_day $NOW
# volretent VOLUME - the volume's retention time (epoch seconds), as the
# rows of its save sets show it.
volretent() {
	"$BIN/mminfo" -s $S -a -x j -q "volume=$1" -r volretent 2>/dev/null |
		tr '{' '\n' |
		sed -n 's/.*"volretent": *"\{0,1\}\([0-9]*\).*/\1/p' |
		head -n 1
}
# maxretent VOLUME - the latest ssretent of the save sets on it.
maxretent() {
	"$BIN/mminfo" -s $S -a -x j -q "volume=$1" -r ssretent 2>/dev/null |
		tr '{' '\n' |
		sed -n 's/.*"ssretent": *"\{0,1\}\([0-9]*\).*/\1/p' |
		sort -n | tail -n 1
}
echo "# volretent before nsrim: Life.001 $(volretent Life.001)," \
	"Life.002 $(volretent Life.002)"
for v in Life.001 Life.002; do
	check "$v: volretent is the latest ssretent of its save sets" \
		test -n "$(maxretent $v)" -a "$(volretent $v)" = "$(maxretent $v)"
done
# ssflags of every save set of lc1 into $W/$1
ssflags() {
	"$BIN/mminfo" -s $S -a -v -q "client=$C" -r ssid,ssflags,sumflags \
		>"$W/$1" 2>&1
}
ssflags before
"$BIN/mminfo" -s $S -m >"$W/vols.before" 2>&1
"$BIN/nsrim" -s $S -n -v >"$W/nsrim-n.out" 2>&1
check "nsrim -n exits 0" test $? -eq 0
cat "$W/nsrim-n.out" | sed 's/^/# /' | tail -3
check "nsrim -n says what it would do" \
	grep -q "14 would lose their index entries" "$W/nsrim-n.out"
check "nsrim -n: 7 would become recyclable, 1 volume" \
	grep -q "7 would become recyclable.*1 would become recyclable" \
	"$W/nsrim-n.out"
check "nsrim -n names Life.001" \
	grep -q "would: volume Life.001 .*recyclable" "$W/nsrim-n.out"
ssflags after-n
"$BIN/mminfo" -s $S -m >"$W/vols.after-n" 2>&1
check "nsrim -n changed no save set" diff "$W/before" "$W/after-n"
check "nsrim -n changed no volume" diff "$W/vols.before" "$W/vols.after-n"

# A narrowed run changes only what it names; every save set is still read.
"$BIN/nsrim" -s $S -c nosuchclient >"$W/nsrim-c0.out" 2>&1
check "nsrim -c of a client with no save sets exits 0" test $? -eq 0
check "and checks none" grep -q "^nsrim: 0 save set(s) checked" \
	"$W/nsrim-c0.out"
"$BIN/nsrim" -s $S -N /no/such/name -V Life.001 >"$W/nsrim-n0.out" 2>&1
check "nsrim -N of another name with -V: none checked, the volume kept" \
	grep -q "^nsrim: 0 save set(s) checked.*1 volume(s) checked, 0 became" \
	"$W/nsrim-n0.out"
ssflags after-c0
check "and nothing changed" diff "$W/before" "$W/after-c0"
"$BIN/nsrim" -s $S -n -c "$C" >"$W/nsrim-nc.out" 2>&1
check "nsrim -n -c with this client: the whole run" \
	grep -q "14 would lose.*7 would become recyclable.*2 volume(s) checked, 1 would" \
	"$W/nsrim-nc.out"
"$BIN/nsrim" -s $S -n -V Life.001 >"$W/nsrim-nv.out" 2>&1
check "nsrim -n -V Life.001: its save sets and only it" \
	grep -q "7 would become recyclable.*1 volume(s) checked, 1 would" \
	"$W/nsrim-nv.out"

# An nsrim cut short after 7 changes (as by a crash): days 0 and 1 lost
# their index entries and became recyclable (3 changes each), day 2 lost
# its entries but is still flagged browsable.
NSR_TEST_NSRIM_STOP_AFTER=7 "$BIN/nsrim" -s $S >"$W/nsrim-cut.out" 2>&1
check "the cut-short nsrim exits 2" test $? -eq 2
check "saying so" grep -q "stopped after 7 changes" "$W/nsrim-cut.out"
ssflags cut
check "day 2 is between the two steps (no index entries, still b)" \
	test "$("$BIN/nsrinfo" -s $S -S "${DAYSS[2]}" $C 2>/dev/null |
		grep -c date=)" = 0 -a \
	-n "$(awk -v s="${DAYSS[2]}" '$1 == s && $3 ~ /b/' "$W/cut")"
check "day 1 is done (r and E)" \
	test -n "$(awk -v s="${DAYSS[1]}" '$1 == s && $2 ~ /r/ && $2 ~ /E/' \
		"$W/cut")"

# The next run completes it: the result is that of one whole run.
"$BIN/nsrim" -s $S >"$W/nsrim.out" 2>&1
check "nsrim exits 0" test $? -eq 0
sed 's/^/# /' "$W/nsrim.out"
check "nsrim: the summary line (the rest of the cut-short run's work)" \
	grep -q "^nsrim: 28 save set(s) checked: 12 lost their index entries (browse policy), 5 became recyclable (retention policy); 2 volume(s) checked, 1 became recyclable" "$W/nsrim.out"
ssflags after
for d in $(seq 0 27); do
	ss=${DAYSS[$d]}
	read -r wb wr <<<"$(expect $d)"
	line=$(awk -v s="$ss" '$1 == s' "$W/after")
	nix=$("$BIN/nsrinfo" -s $S -S "$ss" $C 2>/dev/null | grep -c date=)
	if [ "$wb" = 1 ]; then
		check "day $d ($ss) browsable: sumflags b, index entries" \
			test -n "$(echo "$line" | awk '$3 ~ /b/')" -a "$nix" -gt 0
	else
		check "day $d ($ss) past browse: sumflags r/E, ssflags r, no index entries" \
			test -n "$(echo "$line" | awk '$2 ~ /r/ && $3 !~ /b/')" \
			-a "$nix" = 0
	fi
	if [ "$wr" = 1 ]; then
		check "day $d ($ss) recyclable (ssflags E)" \
			test -n "$(echo "$line" | awk '$2 ~ /E/')"
	else
		check "day $d ($ss) not recyclable" \
			test -n "$line" -a -z "$(echo "$line" | awk '$2 ~ /E/')"
	fi
done
check "the full of day 14 is past its own browse time but held by its week" \
	test "$(expect 14)" = "1 0"
check "the full of day 7 is past its own retention but held by its week" \
	test "$(expect 7)" = "0 0"
check "mminfo: ssrecycle query finds the 7 recyclable save sets" \
	test "$("$BIN/mminfo" -s $S -a -q "client=$C,ssrecycle" -r ssid |
		grep -c '^ *[0-9]')" = 7
"$BIN/mminfo" -s $S -a -r volume,recyclable,written -q recyclable >"$W/recvol" 2>&1
check "Life.001 is recyclable" grep -q "Life.001" "$W/recvol"
check "Life.002 is not" test -z "$(grep Life.002 "$W/recvol")"
"$BIN/mminfo" -s $S -m >"$W/vols.after" 2>&1
check "mminfo -m shows Life.001 with state E" \
	grep -q "E.*Life.001" "$W/vols.after"

"$BIN/nsrim" -s $S >"$W/nsrim2.out" 2>&1
check "a second nsrim changes nothing" grep -q \
	"0 lost their index entries.*0 became recyclable.*0 became recyclable" \
	"$W/nsrim2.out"
ssflags after2
check "and the flags are the same" diff "$W/after" "$W/after2"

# nsrim -l -n: of the chains with two browsable fulls or more (weeks 2
# and 3 are browsable on day 28), the oldest full cycle (week 2, days
# 14-20) would leave the index; nothing changes.
"$BIN/nsrim" -s $S -l -n -v >"$W/nsrim-ln.out" 2>&1
check "nsrim -l -n exits 0" test $? -eq 0
check "nsrim -l -n: week 2's 7 save sets would lose their entries by -l" \
	grep -q "7 would lose their index entries (browse policy, 7 of them the oldest cycle)" \
	"$W/nsrim-ln.out"
check "naming day 14's full" grep -q \
	"^would: $C:$T ssid ${DAYSS[14]} level full .*oldest full cycle (-l)" \
	"$W/nsrim-ln.out"
check "and not week 3's" test -z "$(grep "ssid ${DAYSS[21]} " "$W/nsrim-ln.out")"
ssflags after-ln
check "nsrim -l -n changed no flag" diff "$W/after" "$W/after-ln"

# Recover by ssid of browse-expired save sets: the full of day 7 (past
# browse, not recyclable) and of day 0 (recyclable, not yet relabeled).
for d in 7 0; do
	rm -rf "$W/r$d"; mkdir -p "$W/r$d"
	"$BIN/recover" -s $S -S "${DAYSS[$d]}" -d "$W/r$d" >"$W/r$d.out" 2>&1
	check "recover -S of day $d's browse-expired full exits 0" test $? -eq 0
	check "and gives the tree of day $d" \
		"$BIN/nsrtreecmp" "$W/snap$d" "$W/r$d$T"
done

# Auto media management: Life.002 full, so the next save needs a
# volume; the recyclable Life.001 on aftd1 is relabeled by itself.
du1=$(du -sk "$W/aftd1" | awk '{print $1}')
"$BIN/nsrmm" -s $S -q -o full Life.002
bs_before=$("$BIN/mminfo" -s $S -a -r volume,recycled -q volume=Life.001 |
	awk '$1 == "Life.001" {print $2}')
printf 'day 28\n' >"$T/f28"
"$BIN/save" -s $S -c $C -l full "$T" >"$W/save28.out" 2>&1
check "the save on day 28 succeeds" test $? -eq 0
check "nsrd logged the automatic relabel" \
	grep -q "auto media management: relabeling recyclable volume Life.001" \
	"$ROOT/logs/daemon.log"
"$BIN/mminfo" -s $S -a -r volume,recycled,recyclable -q volume=Life.001 \
	>"$W/life1" 2>&1
check "Life.001 was recycled once and is no longer recyclable" \
	test "$(awk '$1 == "Life.001" {print $2, $3}' "$W/life1")" = \
	"$(( bs_before + 1 )) no"
check "the day 28 save set is on Life.001" \
	test -n "$("$BIN/mminfo" -s $S -a -q "client=$C,volume=Life.001" \
		-r ssid 2>/dev/null | grep '[0-9]')"
check "the recycled save sets left the media database" \
	test "$("$BIN/mminfo" -s $S -a -q "client=$C" -r ssid |
		grep -c '^ *[0-9]')" = 22
du2=$(du -sk "$W/aftd1" | awk '{print $1}')
echo "# aftd1: ${du1} KB before the relabel, ${du2} KB after"
check "their AFTD data went with the relabel" test "$du2" -lt "$du1"
check "the relabel kept the block size (and name)" \
	grep -q "labeled volume Life.001 (pool Default, block size" \
	"$ROOT/logs/daemon.log"

# nsrd's own daily nsrim: restarted with it on, nsrd runs it at once (no
# res/nsrim.prv yet), then again only once 23 hours of the test clock
# have passed.
nsrd_pid=$(cat "$ROOT/logs/nsrd.pid")
kill -TERM "$nsrd_pid"
for i in $(seq 1 100); do kill -0 "$nsrd_pid" 2>/dev/null || break; sleep 0.1; done
for d in nsrmmdbd nsrindexd nsrjobd; do
	p=$(cat "$ROOT/logs/$d.pid" 2>/dev/null)
	for i in $(seq 1 100); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
done
unset NSR_NSRIM_DAILY
nsr_start nsrd
nsr_wait_answers nsrd nsrmmdbd nsrjobd nsrindexd
# daily_runs - how many daily runs nsrd logged so far.
daily_runs() { grep -c "daily nsrim:" "$ROOT/logs/daemon.log"; }
for i in $(seq 1 100); do [ "$(daily_runs)" -ge 1 ] && break; sleep 0.1; done
check "nsrd ran nsrim by itself after its start" test "$(daily_runs)" = 1
check "and kept the time in res/nsrim.prv" test -s "$ROOT/res/nsrim.prv"
echo $(( NOW * DAY + 22 * 3600 )) >"$W/clock.tmp"
mv "$W/clock.tmp" "$NSR_TEST_CLOCK"
sleep 2
check "not again within 23 hours of the test clock" test "$(daily_runs)" = 1
# Day 35: week 1 (days 7-13) is past retention (day 34), week 2 (days
# 14-20) past browse (day 34).
set_day 35
for i in $(seq 1 100); do [ "$(daily_runs)" -ge 2 ] && break; sleep 0.1; done
check "again once a day has passed" test "$(daily_runs)" = 2
check "the daily run of day 35 expired weeks 1 and 2 as due" grep -q \
	"daily nsrim: .* 7 lost their index entries.* 7 became recyclable" \
	"$ROOT/logs/daemon.log"
check "week 2's full lost its index entries" test "$("$BIN/nsrinfo" -s $S \
	-S "${DAYSS[14]}" $C 2>/dev/null | grep -c date=)" = 0
check "week 3's full kept them" test "$("$BIN/nsrinfo" -s $S \
	-S "${DAYSS[21]}" $C 2>/dev/null | grep -c date=)" -gt 0

# A volume's retention time follows its save sets down too: the newest
# save set on Life.002 (day 27's) deleted, nsrim sets Life.002's to the
# latest retention of those left (day 26's, the end of its chain).
v2=$(volretent Life.002)
"$BIN/nsrmm" -s $S -q -y -d -S "${DAYSS[27]}" >"$W/del27.out" 2>&1
check "day 27's save set is deleted" test $? -eq 0
check "Life.002's volretent stays until nsrim runs" \
	test "$(volretent Life.002)" = "$v2"
"$BIN/nsrim" -s $S -v >"$W/nsrim3.out" 2>&1
check "nsrim exits 0" test $? -eq 0
check "nsrim -v says it set Life.002's retention time" \
	grep -q "^volume Life.002: retention time .* (was " "$W/nsrim3.out"
check "Life.002's volretent is now the latest ssretent left" \
	test "$(volretent Life.002)" = "$(maxretent Life.002)" -a \
	"$(volretent Life.002)" -lt "$v2"

# nsrim -l for real on day 35: week 3 (days 21-26; 27 was deleted) is
# the oldest cycle with entries, day 28's full the newer one: week 3
# leaves the index (still recoverable by ssid), day 28 keeps it all.
"$BIN/nsrim" -s $S -l >"$W/nsrim-l.out" 2>&1
check "nsrim -l exits 0" test $? -eq 0
check "nsrim -l: week 3's 6 save sets by -l" grep -q \
	"6 lost their index entries (browse policy, 6 of them the oldest cycle)" \
	"$W/nsrim-l.out"
check "day 21's full has no index entries" test "$("$BIN/nsrinfo" -s $S \
	-S "${DAYSS[21]}" $C 2>/dev/null | grep -c date=)" = 0
check "day 21's full is flagged r, not E" test -n "$("$BIN/mminfo" -s $S -a \
	-v -q "ssid=${DAYSS[21]}" -r ssid,ssflags 2>/dev/null |
	awk '$2 ~ /r/ && $2 !~ /E/')"
D28=$("$BIN/mminfo" -s $S -a -q "client=$C,volume=Life.001" -r ssid \
	2>/dev/null | awk '$1 ~ /^[0-9]+$/ {print $1}' | tail -n 1)
check "day 28's full keeps its entries" test "$("$BIN/nsrinfo" -s $S \
	-S "$D28" $C 2>/dev/null | grep -c date=)" -gt 0
rm -rf "$W/r21"; mkdir -p "$W/r21"
"$BIN/recover" -s $S -S "${DAYSS[21]}" -d "$W/r21" >"$W/r21.out" 2>&1
check "day 21's full still recovers by ssid" test $? -eq 0 -a -s "$W/r21$T/f21"
"$BIN/nsrim" -s $S -l >"$W/nsrim-l2.out" 2>&1
check "nsrim -l again: one full left, nothing more" grep -q \
	"0 lost their index entries (browse policy)" "$W/nsrim-l2.out"

nsr_done
