#!/bin/bash
# 353-pss: parallel save streams.  A save point saved with three streams
# is a master save set and two dependents (<1>sp, <2>sp) that mminfo
# lists, the master naming them; recover -S of the master and a
# point-in-time recover -a give back the tree identical to the source and
# to a non-PSS save of it, after a full and after an incr with changes,
# deletions, renames, a hard link and a symlink.  A changed number of
# streams makes the next incr a full.  Two save points with four streams
# each under client parallelism 4 never have more than 4 streams active
# (from save -v's trace of every stream becoming active or idle), and
# the second one's streams take over the first one's slots as it runs
# out of work (reclaiming: the second reaches 4 active).  The job log of
# the stream that ends last has the PSS summary (streams, bytes of each,
# time).  After the media database is lost, scanner -m on the volume
# brings every master/dependent link back.
. "$(dirname "$0")/lib.sh"
nsr_setup 353-pss
S=127.0.0.1
W=$ROOT/work
T=$W/sp
nsr_start_aftd_datazone

# ssid_of NAME - the newest save set named NAME.
ssid_of() {
	"$BIN/mminfo" -s $S -a -q "name=$1" -ot -r ssid 2>/dev/null |
		awk '$1 ~ /^[0-9]+$/ {s = $1} END {print s}'
}

# pss_save OUT ARGS... - save --pss ARGS, after the second of the last
# change has passed; sets M (the master's ssid).
pss_save() {
	local out=$1; shift
	sleep 1.1
	"$BIN/save" -s $S "$@" >"$W/$out.out" 2>"$W/$out.err"
	check "save $* ($out) exits 0" test $? -eq 0
	M=$(ssid_of "$T")
}

mkdir -p "$T/a/b" "$T/c" "$T/d"
for i in 1 2 3 4 5 6; do
	head -c $((i * 300000)) /dev/urandom >"$T/a/big$i"
done
for i in $(seq 1 40); do printf 'small %s\n' $i >"$T/c/s$i"; done
printf 'deep\n' >"$T/a/b/deep"
printf 'gone\n' >"$T/d/gone"
ln "$T/a/big1" "$T/c/hard"
mkdir -p "$T/e/x"
for i in 1 2 3 4 5; do printf 'moved %s\n' $i >"$T/e/x/m$i"; done
ln -s ../a/big2 "$T/c/sym"
chmod 0700 "$T/a/b"

# --- full with 3 streams ----------------------------------------------
pss_save full --pss=3 -l full "$T"
F=$M
check "the summary names master and dependents" \
	grep -q "3 parallel save streams: master save set $F, dependents" \
	"$W/full.out"
D1=$(ssid_of "<1>$T")
D2=$(ssid_of "<2>$T")
check "mminfo lists dependents <1> and <2>" test -n "$D1" -a -n "$D2"
check "each dependent's pssid is the master" test \
	"$("$BIN/mminfo" -s $S -a -q "ssid=$D1" -r pssid | tail -1 |
		tr -d ' ')" = "$F" -a \
	"$("$BIN/mminfo" -s $S -a -q "ssid=$D2" -r pssid | tail -1 |
		tr -d ' ')" = "$F"
"$BIN/mminfo" -s $S -a -q "ssid=$F" -S >"$W/master.S" 2>&1
check "the master names its dependents (mminfo -S)" \
	grep -Eq "dependents=($D1,$D2|$D2,$D1)\$" "$W/master.S"
# the last stream to end writes the PSS summary into its job log
printf 'show ssids; job log\nprint type: save job\n' |
	"$BIN/jobquery" -s $S >"$W/jobs.full" 2>&1
check "one job log has the PSS summary: streams, bytes each, time" \
	test "$(grep -Ec "PSS summary of $T: 3 streams \(client parallelism \
[0-9]+\), stream bytes $T [0-9]+, <1>$T [0-9]+, <2>$T [0-9]+; [0-9.]+ s" \
		"$W/jobs.full")" = 1
st() { "$BIN/mminfo" -s $S -a -q "ssid=$1" -r nsavetime | tail -1 |
	tr -d ' '; }
check "the master has the latest save time" \
	test "$(st "$F")" -gt "$(st "$D1")" -a "$(st "$F")" -gt "$(st "$D2")"
"$BIN/recover" -s $S -S "$F" -d "$W/r-full" >"$W/r-full.out" 2>&1
check "recover -S master exits 0" test $? -eq 0
check "recover -S master gives the whole tree" \
	"$BIN/nsrtreecmp" "$T" "$W/r-full$T"
check "the hard link is one" \
	test "$(stat -c %i "$W/r-full$T/a/big1")" = \
	"$(stat -c %i "$W/r-full$T/c/hard")"
cp -a "$W/r-full$T" "$W/src-full"

# --- incr: changes, a deletion, renames, a new file, a moved directory ------
printf 'changed\n' >>"$T/c/s7"
rm "$T/d/gone"
mv "$T/c/s8" "$T/c/s8-renamed"
head -c 700000 /dev/urandom >"$T/a/new"
mv "$T/e/x" "$T/a/y"	# a moved directory: its files keep their times
pss_save incr --pss=3 -l incr "$T"
I=$M
check "the incr stays an incr" \
	test "$("$BIN/mminfo" -s $S -a -q "ssid=$I" -r level | tail -1 |
		tr -d ' ')" = incr
check "it saved less than the full" \
	grep -q "level incr: what changed since" "$W/incr.out"
"$BIN/recover" -s $S -a -d "$W/r-incr" "$T" >"$W/r-incr.out" 2>&1
check "recover -a (now) exits 0" test $? -eq 0
check "recover -a gives the tree as it is now" \
	"$BIN/nsrtreecmp" "$T" "$W/r-incr$T"
check "without the deleted file" test ! -e "$W/r-incr$T/d/gone"
"$BIN/recover" -s $S -a -t "$(st "$F")" -d "$W/r-pit" "$T" \
	>"$W/r-pit.out" 2>&1
check "recover -a -t (the full's time) exits 0" test $? -eq 0
check "and gives the tree as it was then" \
	"$BIN/nsrtreecmp" "$W/src-full" "$W/r-pit$T"

# --- a non-PSS save of the same tree restores the same ---------------------
sleep 1.1
"$BIN/save" -s $S -N "$T-plain" -l full "$T" >"$W/plain.out" 2>&1
check "a non-PSS save exits 0" test $? -eq 0
"$BIN/recover" -s $S -S "$(ssid_of "$T-plain")" -d "$W/r-plain" \
	>/dev/null 2>&1
check "the PSS full + incr recover equals the non-PSS one" \
	"$BIN/nsrtreecmp" "$W/r-plain$T" "$W/r-incr$T"

# --- a changed number of streams forces a full ----------------------------
printf 'more\n' >>"$T/c/s9"
pss_save two --pss=2 -l incr "$T"
check "2 streams instead of 3: promoted to full" \
	grep -q "parallel save streams .* changed (2, was 3)" "$W/two.err"
check "mminfo shows a full" \
	test "$("$BIN/mminfo" -s $S -a -q "ssid=$M" -r level | tail -1 |
		tr -d ' ')" = full

# --- dynamic PSS: two save points, 4 streams each, parallelism 4 -----------
# The first claims all 4 slots; the second starts when the first's
# streams run out of work, and takes over their slots one by one; nsrd
# never queues it (its sessions start only once the first's ended).
A=$W/spa
B=$W/spb
mkdir -p "$A" "$B"
for i in $(seq 1 12); do head -c 200000 /dev/urandom >"$A/f$i"; done
for i in $(seq 1 30); do head -c 200000 /dev/urandom >"$B/f$i"; done
sleep 1.1
NSR_TEST_PSS_RATE=2M "$BIN/save" -s $S -v --pss=4 --parallelism=4 \
	-l full "$A" "$B" >"$W/dyn.out" 2>"$W/dyn.err"
check "the save of two save points exits 0" test $? -eq 0
grep '^pss: ' "$W/dyn.out" >"$W/dyn.trace"
# active streams per save point over time, from the trace; and whether
# the second became active before the first gave a slot back
awk -v a="$A" -v b="$B" '
	$3 == "stream" { key = $2 " " $4
		if ($5 == "active") { on[key] = 1 } else { delete on[key] }
		if ($5 == "idle" && $2 == a) aidle = 1
		if ($5 == "active" && $2 == b && !aidle) early = 1
		na = nb = 0
		for (k in on) { split(k, p, " ")
			if (p[1] == a) na++; else if (p[1] == b) nb++ }
		if (na > maxa) maxa = na
		if (nb > maxb) maxb = nb
		if (na + nb > maxt) maxt = na + nb
		if (substr($6, 2) + 0 > maxr) maxr = substr($6, 2) + 0 }
	END { print maxa + 0, maxb + 0, maxt + 0, maxr + 0, early + 0 }' \
	"$W/dyn.trace" >"$W/dyn.max"
read -r MAXA MAXB MAXT MAXR EARLY <"$W/dyn.max"
check "the first save point ran with 2 or more streams ($MAXA)" \
	test "$MAXA" -ge 2
check "the second started only as the first gave slots back" \
	test "$EARLY" = 0
check "the second reclaimed all 4 slots ($MAXB)" test "$MAXB" -eq 4
check "never more than 4 active together ($MAXT, save said $MAXR)" \
	test "$MAXT" -le 4 -a "$MAXR" -le 4
check "nsrd queued none of the streams (client parallelism 4)" \
	test "$(grep -c "waiting: client parallelism" "$W/dyn.err")" = 0
# --- a master that cannot start fails the save point at once -------------
timeout 60 "$BIN/save" -s $S --pss=4 -b NoSuchPool "$A" >"$W/nopool.out" \
	2>"$W/nopool.err"
check "a save to a pool that does not exist exits 1, without hanging" \
	test $? -eq 1
check "and says why" grep -q "NoSuchPool" "$W/nopool.err"

for sp in "$A" "$B"; do
	"$BIN/recover" -s $S -S "$(ssid_of "$sp")" -d "$W/r-dyn" \
		>/dev/null 2>&1
	check "$sp recovers identical" "$BIN/nsrtreecmp" "$sp" "$W/r-dyn$sp"
done

# --- scanner -m brings the PSS links back ---------------------------------
# (a dependent's save stream header names its master: version 5)
links() { # one line per link, in any order
	"$BIN/mminfo" -s $S -a -S 2>/dev/null |
		awk '/^ *ssid=/ {s = $1}
		/pssid=/ {n = split(substr($2, 12), d, ",")
			for (i = 1; i <= n; i++) print s, $1, d[i]
			if (n == 0) print s, $1}' | sort
}
links >"$W/links.before"
check "mminfo -S shows PSS links before" \
	grep -q "^ssid=$F pssid=0 $D1\$" "$W/links.before"
nsr_kill_nsrd
rm -rf "$ROOT/mm"
nsr_start nsrd
nsr_wait_answers nsrd nsrmmdbd nsrjobd nsrindexd
"$BIN/scanner" -m -s $S "$W/aftd1" >"$W/scan.out" 2>&1
check "scanner -m exits 0" test $? -eq 0
check "it says it linked dependents" grep -q "linked to its PSS master" \
	"$W/scan.out"
links >"$W/links.after"
check "every pssid and dependents= is back after scanner -m" \
	diff "$W/links.before" "$W/links.after"

# --- a dependent that starts after its master completed ------------------
# (a small save point: the master may take everything before a slow
# dependent thread asks; NSR_TEST_PSS_DEP_DELAY_MS makes it late)
L=$W/late
mkdir -p "$L"
printf 'one\n' >"$L/a"
NSR_TEST_PSS_DEP_DELAY_MS=1500 "$BIN/save" -s $S --pss=2 -l full "$L" \
	>"$W/late.out" 2>"$W/late.err"
check "a dependent late for its complete master still saves (exit $?)" \
	test $? -eq 0
LM=$(ssid_of "$L")
check "and the master names it" \
	grep -Eq "dependents=[0-9]+" <<<"$("$BIN/mminfo" -s $S -a -q "ssid=$LM" -S 2>&1)"
"$BIN/recover" -s $S -S "$LM" -d "$W/r-late" >/dev/null 2>&1
check "it recovers identical" "$BIN/nsrtreecmp" "$L" "$W/r-late$L"

# --- on a terminal: the progress line gives each active stream's bytes ----
if command -v script >/dev/null; then
	sleep 1.1
	NSR_TEST_PSS_RATE=300K script -qec "$BIN/save -s $S --pss=4 \
--parallelism=4 -l full $A" /dev/null >"$W/tty.out" 2>&1
	check "the progress line shows the active streams' bytes" \
		grep -Eq "save: [0-9]+ files  [0-9.]+ [KMG]?B  .* s  streams: \
[0-9.]+ [KMG]?B(, [0-9.]+ [KMG]?B){1,3}" "$W/tty.out"
else
	echo "# script(1) missing: no pseudo-terminal for the progress check"
fi

# --- a save point whose streams fail still has its summary ----------------
# The mover is killed while 4 throttled streams run: every stream's save
# set is aborted, save says how far it got, and the stream that ends last
# writes the PSS summary, each stream marked aborted, into its job log.
X=$W/spx
mkdir -p "$X"
for i in $(seq 1 8); do head -c 2000000 /dev/urandom >"$X/f$i"; done
# 4 MB a stream at 500 KB/s: about 8 s; the mover goes after 2
NSR_TEST_PSS_RATE=500K "$BIN/save" -s $S --pss=4 --parallelism=4 -l full \
	"$X" >"$W/fail.out" 2>"$W/fail.err" &
spid=$!
sleep 2
MP=$("$BIN/mmdtest" status 127.0.0.1 2>/dev/null | awk '{print $3; exit}')
check "a mover serves the streams" test -n "$MP"
kill -KILL "$MP"
wait "$spid"
check "the failed save point exits 1" test $? -eq 1
check "save says how far it got and names the save sets" \
	grep -Eq "parallel save streams of $X failed after [0-9]+ files, .*\
\(4 streams: master save set [0-9]+, dependents( [0-9]+)+\)" "$W/fail.err"
printf 'show ssids; job log\nprint type: save job\n' |
	"$BIN/jobquery" -s $S >"$W/jobs.fail" 2>&1
check "one job log has the failed save point's PSS summary" \
	test "$(grep -Ec "PSS summary of $X: 4 streams \(client parallelism \
4\), stream bytes $X [0-9]+( \(aborted\))?, <1>$X [0-9]+.*; the save \
point failed: [1-4] of its [1-4] save sets aborted" "$W/jobs.fail")" = 1
check "and marks the aborted streams" \
	grep -q "PSS summary of $X: .*(aborted)" "$W/jobs.fail"

nsr_done
