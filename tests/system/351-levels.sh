#!/bin/bash
# 351-levels: backup levels with NetWorker's meaning.  An incr with no
# full before it is promoted to full and says so; then full -> incr ->
# level 1 -> incr with additions, changes, renames (of files and of a
# directory), deletions, a chmod and a file moved in with an old
# modification time between them.  Each save set must hold exactly what
# its level must (read back raw from the volume and listed with asmdump),
# every directory of a level save its exact entry list at that moment,
# mminfo and the job log the real levels, and a recover of any single
# save set into an empty directory what that save set holds.
. "$(dirname "$0")/lib.sh"
nsr_setup 351-levels
S=127.0.0.1
W=$ROOT/work
T=$W/tree
mkdir -p "$W/aftd1"

nsr_start_datazone
nsr_device aftd1 adv_file "$W/aftd1"
check "label a volume" "$BIN/nsrmm" -s $S -l -y -b Default -f aftd1 Lvl.001

# lvl_save LEVEL OUT - save $T at LEVEL, after the second of the last
# change has passed (a save time is in seconds: what changed in the
# second a save began counts as changed for the next one).  Sets SSID.
lvl_save() {
	sleep 1.1
	"$BIN/save" -s $S -l "$1" "$T" >"$W/$2.out" 2>"$W/$2.err"
	check "save -l $1 ($2) exits 0" test $? -eq 0
	SSID=$("$BIN/mminfo" -s $S -a -q "name=$T" -ot -r ssid 2>/dev/null |
		awk '$1 ~ /^[0-9]+$/ {s = $1} END {print s}')
	check "mminfo knows save set $2" test -n "$SSID"
}

# dump SSID OUT - the save set's stream from the volume, listed by
# asmdump into $W/OUT.dump; objects relative to $T, directories and
# other objects apart: $W/OUT.objs (non-directories), $W/OUT.lists.
dump() {
	local port frags
	port=$("$BIN/mmdtest" status 127.0.0.1 2>/dev/null |
		awk '$1 == "aftd1" {print $2; exit}')
	frags=$("$BIN/mmdtest" mmdb-fragwords $S "$1" 2>/dev/null)
	"$BIN/mmdtest" recover 127.0.0.1 "$port" "$1" $frags 2>"$W/$2.rerr" |
		"$BIN/asmdump" >"$W/$2.dump" 2>"$W/$2.derr"
	check "save set $2 ($1) reads back and decodes whole" \
		test "${PIPESTATUS[1]}" = 0
	sed "s|$T||" "$W/$2.dump" | awk '$1 != "dir" && $1 != "list"' |
		sort >"$W/$2.objs"
	sed "s|$T||" "$W/$2.dump" | awk '$1 == "list"' | sort >"$W/$2.lists"
}

# expect_objs OUT LINE... - the save set holds exactly these objects.
expect_objs() {
	local out=$1; shift
	printf '%s\n' "$@" | sed '/^$/d' | sort >"$W/$out.want"
	check "$out holds exactly: $*" diff "$W/$out.want" "$W/$out.objs"
}

# expect_lists OUT LINE... - exactly these directory lists.
expect_lists() {
	local out=$1; shift
	printf '%s\n' "$@" | sed '/^$/d' | sort >"$W/$out.lwant"
	check "$out lists every directory as it was" \
		diff "$W/$out.lwant" "$W/$out.lists"
}

# recover_one SSID DIR - recover a single save set into an empty DIR.
recover_one() {
	"$BIN/recover" -s $S -S "$1" -d "$2" >"$2.out" 2>&1
	check "recover -S $1 exits 0" test $? -eq 0
}

# --- an incr with no full before it is promoted -------------------------
mkdir -p "$T/a" "$T/b" "$T/c/deep"
printf 'keep1\n' >"$T/a/keep1"
printf 'mod1\n' >"$T/a/mod1"
printf 'del1\n' >"$T/a/del1"
printf 'keep2\n' >"$T/b/keep2"
printf 'ren1\n' >"$T/b/ren1"
printf 'f\n' >"$T/c/deep/f"
lvl_save incr full
P=$SSID
check "the promotion is said on stderr" \
	grep -q "level incr promoted to full" "$W/full.err"
check "mminfo shows it as full" \
	test "$("$BIN/mminfo" -s $S -a -q "ssid=$P" -r level | tail -1 |
		tr -d ' ')" = full
printf 'print type: save job\n' | "$BIN/jobquery" -s $S >"$W/jobs.out" 2>&1
check "the job log says so" grep -q "promoted to full" "$W/jobs.out"
dump "$P" full
expect_objs full "file /a/del1" "file /a/keep1" "file /a/mod1" \
	"file /b/keep2" "file /b/ren1" "file /c/deep/f"
expect_lists full
recover_one "$P" "$W/r-full"
check "the full recovers identical" "$BIN/nsrtreecmp" "$T" "$W/r-full$T"

# --- incr: changed, deleted, renamed, added -------------------------------
printf 'mod1 changed\n' >"$T/a/mod1"
rm "$T/a/del1"
mv "$T/b/ren1" "$T/b/ren2"
printf 'new1\n' >"$T/a/new1"
mkdir "$T/d"
printf 'newf\n' >"$T/d/newf"
lvl_save incr i1
I1=$SSID
check "save names what it built on" grep -q "level incr: what changed since" \
	"$W/i1.out"
printf 'print type: save job\n' | "$BIN/jobquery" -s $S >"$W/jobs1.out" 2>&1
check "and so does the job log" \
	grep -q "level incr: what changed since .* save set $P (level full)" \
	"$W/jobs1.out"
dump "$I1" i1
expect_objs i1 "file /a/mod1" "file /a/new1" "file /b/ren2" "file /d/newf"
expect_lists i1 "list : a b c d" "list /a: keep1 mod1 new1" \
	"list /b: keep2 ren2" "list /c: deep" "list /c/deep: f" \
	"list /d: newf"
recover_one "$I1" "$W/r-i1"
check "the incr recovers only its files" \
	test -f "$W/r-i1$T/a/new1" -a ! -e "$W/r-i1$T/a/keep1" \
	-a -d "$W/r-i1$T/c/deep" -a ! -e "$W/r-i1$T/c/deep/f"
check "with their data" cmp "$T/b/ren2" "$W/r-i1$T/b/ren2"

# --- level 1: everything since the full -----------------------------------
printf 'keep2 changed\n' >"$T/b/keep2"
printf 'new2\n' >"$T/c/new2"
rm "$T/d/newf"
lvl_save 1 l1
L1=$SSID
dump "$L1" l1
expect_objs l1 "file /a/mod1" "file /a/new1" "file /b/keep2" \
	"file /b/ren2" "file /c/new2"
expect_lists l1 "list : a b c d" "list /a: keep1 mod1 new1" \
	"list /b: keep2 ren2" "list /c: deep new2" "list /c/deep: f" \
	"list /d:"

# --- incr after the level 1: chmod, moved in with old times, dir renamed --
chmod 600 "$T/a/keep1"
printf 'old\n' >"$W/moved"
touch -d '2001-02-03 04:05:06' "$W/moved"
mv "$W/moved" "$T/a/moved"
mv "$T/c/deep" "$T/c/deeper"
lvl_save incr i2
I2=$SSID
dump "$I2" i2
# a renamed directory keeps its times, and so do its files: it is saved
# with everything below it (else they would be under no path that exists)
expect_objs i2 "file /a/keep1" "file /a/moved" "file /c/deeper/f"
expect_lists i2 "list : a b c d" "list /a: keep1 mod1 moved new1" \
	"list /b: keep2 ren2" "list /c: deeper new2" "list /c/deeper: f" \
	"list /d:"
recover_one "$I2" "$W/r-i2"
check "the chmod is in the last incr" \
	test "$(stat -c %a "$W/r-i2$T/a/keep1")" = 600
check "and the file moved in, with its old time" \
	test "$(stat -c %Y "$W/r-i2$T/a/moved")" = \
	"$(stat -c %Y "$T/a/moved")"

# --- mminfo shows the real levels -----------------------------------------
"$BIN/mminfo" -s $S -a -q "name=$T" -ot -r 'ssid,level' >"$W/levels.out" 2>&1
check "mminfo -r level: full incr 1 incr" test \
	"$(awk '$1 ~ /^[0-9]+$/ {printf "%s ", $2}' "$W/levels.out")" = \
	"full incr 1 incr "
"$BIN/mminfo" -s $S -a >"$W/default.out" 2>&1
check "the default report shows level 1" grep -q " 1 *$T\$" "$W/default.out"

# --- scanner reads the level save sets from the volume alone -------------
"$BIN/scanner" "$W/aftd1" >"$W/scanner.out" 2>&1
check "scanner reads the volume without damage" test $? -eq 0
check "and lists the levels: f i 1 i" test \
	"$(awk -v t="$T" '$2 == t {printf "%s ", $5}' "$W/scanner.out")" = \
	"f i 1 i "

# --- a full is a full; a level 2 after it builds on it -------------------
lvl_save full f2
F2=$SSID
dump "$SSID" f2
check "a full holds everything again" grep -q "file /c/deeper/f" "$W/f2.objs"
expect_lists f2
printf 'late\n' >"$T/a/late"
lvl_save 2 l2
L2=$SSID
dump "$SSID" l2
expect_objs l2 "file /a/late"

# --- what never serves: manual, suspect and aborted save sets -------------
printf 'm\n' >"$T/a/m1"
sleep 1.1
check "a manual save" "$BIN/save" -s $S -q "$T"
printf 'after manual\n' >"$T/a/m2"
lvl_save incr i3
check "an incr builds on the level 2, not on the manual save" \
	grep -q "(save set $L2)" "$W/i3.out"
dump "$SSID" i3
expect_objs i3 "file /a/m1" "file /a/m2"
for f in $P $F2; do
	"$BIN/mmdtest" mmdb-ssflags $S "$f" 4000 0 ||
		fail "mark save set $f suspect"
done
lvl_save incr i4
check "with every full suspect an incr is promoted" \
	grep -q "level incr promoted to full" "$W/i4.err"
check "and recorded as full" \
	test "$("$BIN/mminfo" -s $S -a -q "ssid=$SSID" -r level | tail -1 |
		tr -d ' ')" = full
"$BIN/mmdtest" mmdb-ssflags $S "$SSID" 1000 0 || fail "mark $SSID aborted"
lvl_save 3 l3
check "with the new full aborted a level 3 is promoted too" \
	grep -q "level 3 promoted to full" "$W/l3.err"

nsr_done
