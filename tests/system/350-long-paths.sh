#!/bin/bash
# 350-long-paths: paths of any length and what save says about the files
# it could not save.  A tree with paths over 5,000 bytes (26 components
# of 200 bytes), 1,100 levels deep below them, with a file, a hard link,
# a symlink and a FIFO there, is saved and recovered (by save set and by
# path) identical; in the same save a file that changes while it is read
# (NSR_TEST_SAVE_TOUCH), an unreadable one (chmod 000, and the
# NSR_TEST_SAVE_EACCES knob so that it is unreadable for root too) and a
# path over the 65,535-byte bound are each named, with the reason and a
# long path shortened in the middle; the summary counts them and save
# exits 3.  A save of the clean part alone exits 0, and -q prints no
# summary; scanner -i rebuilds the index of the long paths.
. "$(dirname "$0")/lib.sh"
nsr_setup 350-long-paths
S=127.0.0.1
W=$ROOT/work
mkdir -p "$W/aftd1"

nsr_start_datazone
nsr_device aftd1 adv_file "$W/aftd1"
check "nsrmm labels a volume" \
	"$BIN/nsrmm" -s $S -l -y -b Default -f aftd1 LongVol.001

# --- the tree ----------------------------------------------------------------
T=$W/tree
N200=$(printf 'n%.0s' $(seq 1 199))
N201=$(printf 'z%.0s' $(seq 1 199))
DEEP=$(printf 'd/%.0s' $(seq 1 1100))
mkdir -p "$T/long" "$T/toolong"
# cd one component at a time: no path handed to the kernel is long
(
	cd "$T/long" || exit 1
	for i in $(seq 10 35); do mkdir "$N200$i" && cd "$N200$i" || exit 1; done
	printf 'long path data\n' >data
	ln data hard
	ln -s data sym
	mkfifo fifo
	truncate -s 3M sparse && printf 'end' >>sparse
	touch -d '2001-02-03 04:05:06.123456789' data
	mkdir -p "$DEEP" && cd "$DEEP" && printf 'deepest\n' >bottom
) || fail "cannot build the long tree"
(
	cd "$T/toolong" || exit 1
	for i in $(seq 100 429); do mkdir "$N201$i" && cd "$N201$i" || exit 1; done
	printf 'out of bounds\n' >leaf
) || fail "cannot build the too long path"
printf 'a file that changes\n' >"$T/growing"
printf 'nobody may read this\n' >"$T/secret"
chmod 000 "$T/secret"
LONGEST=$(cd "$T/long" && find . | awk '{ if (length($0) > m) m = length($0) } END { print m }')
check "the tree has paths over 7,000 bytes ($LONGEST)" test "$LONGEST" -gt 7000

# --- save: named problems, summary, exit status 3 --------------------------------
NSR_TEST_SAVE_TOUCH=growing NSR_TEST_SAVE_EACCES=secret \
	"$BIN/save" -s $S "$T" >"$W/save.out" 2>"$W/save.err"
rc=$?
check "save exits 3: complete, files not saved whole (exit $rc)" test $rc -eq 3
check "save prints completed savetime=" grep -q "^completed savetime=[1-9]" "$W/save.out"
check "the unreadable file is named with the reason" \
	grep -qx "save: warn: $T/secret: not saved: open: Permission denied" "$W/save.err"
check "the file that changed is named" \
	grep -qx "save: warn: $T/growing: changed during save" "$W/save.err"
check "the path over the bound is named with the reason" \
	grep -q "^save: warn: $T/toolong/z.*\.\.\.\[[0-9]* bytes\]\.\.\..*429/leaf: not saved: path: File name too long$" "$W/save.err"
check "a long path is shortened in the middle (lines under 1,200 bytes)" \
	test "$(awk '{ if (length($0) > m) m = length($0) } END { print m + 0 }' "$W/save.err")" -lt 1200
expect_fail "nothing under long/ is reported" grep -q "$T/long" "$W/save.err"
check "the summary has size, time, files, rate and level" \
	grep -Eq "^save: $T  [0-9]+ [KMG]?B [0-9:]{8}  [0-9]+ files  [0-9]+ [KMG]?B/s  level manual$" "$W/save.out"
check "the summary counts the files not saved whole by reason" \
	grep -Eq "^save: [0-9]+ file\(s\) not saved whole: 1 Permission denied, [0-9]+ File name too long$" "$W/save.out"
check "the summary counts the file that changed" \
	grep -q "^save: 1 file(s) changed while being saved" "$W/save.out"
SSID=$("$BIN/mminfo" -s $S -a -q "name=$T" -r ssid 2>/dev/null |
	awk '$1 ~ /^[0-9]+$/ {print $1; exit}')
check "mminfo shows the save set" test -n "$SSID"
# The job record has the same figures: files, bytes and level are its
# own, the files not saved whole by reason and the changed file in its
# last log line.
printf 'show ssids; level; files; job log\nprint type: save job\n' |
	"$BIN/jobquery" -s $S >"$W/jobs.out" 2>&1
check "the job log counts the files not saved whole by reason" \
	grep -Eq "[0-9]+ file\(s\) not saved whole: 1 Permission denied, [0-9]+ File name too long" \
	"$W/jobs.out"
check "and the file that changed" \
	grep -q "1 file(s) changed while being saved" "$W/jobs.out"

# --- recover: identical --------------------------------------------------------
# tar (GNU, directory descriptors) lists names, types, modes, owners,
# sizes, times and contents of both trees; its output is the same exactly
# when the trees are.
tree_sum() { (cd "$1" && tar --sort=name --numeric-owner -cf - .) | sha256sum; }
"$BIN/recover" -s $S -S "$SSID" -d "$W/r1" >"$W/rec1.out" 2>&1
rc=$?
check "recover -S exits 0 (exit $rc)" test $rc -eq 0
check "recover -S restores the long tree identical" \
	test "$(tree_sum "$T/long")" = "$(tree_sum "$W/r1$T/long")"
check "nsrtreecmp agrees (xattrs, nanoseconds, hard links)" \
	"$BIN/nsrtreecmp" "$T/long" "$W/r1$T/long"
check "recover warns about the file that changed" \
	grep -q "$T/growing: changed during save" "$W/rec1.out"
check "the file that changed comes back as it was read" \
	test "$(cat "$W/r1$T/growing")" = "a file that changes"
"$BIN/recover" -s $S -a -d "$W/r2" "$T/long" >"$W/rec2.out" 2>&1
check "recover -a by path exits 0" test $? -eq 0
check "recover -a restores the long tree identical" \
	test "$(tree_sum "$T/long")" = "$(tree_sum "$W/r2$T/long")"
FILE=$T/long/$(cd "$T/long" && find . -name data | sed 's|^\./||')
"$BIN/recover" -s $S -a -d "$W/r3" "$FILE" >"$W/rec3.out" 2>&1
check "recover -a of one file by its 5,000-byte path exits 0" test $? -eq 0
check "that file comes back" \
	test "$(cd "$W/r3$T/long" && find . -name data -execdir cat {} \;)" = "long path data"

# --- scanner -i rebuilds the index from the volume, long paths too ----------------
out=$("$BIN/scanner" -i -S "$SSID" -s $S "$W/aftd1" 2>&1)
rc=$?
check "scanner -i of the save set exits 0 (exit $rc)" test $rc -eq 0
check "and rebuilds every entry" \
	grep -q "save set $SSID (.*): [0-9]* index entries rebuilt" <<<"$out"
"$BIN/recover" -s $S -a -d "$W/r4" "$FILE" >"$W/rec4.out" 2>&1
check "recover -a by the long path through the rebuilt index" \
	test "$(cd "$W/r4$T/long" && find . -name data -execdir cat {} \;)" = "long path data"

# --- a clean save exits 0; -q: no summary ----------------------------------------
"$BIN/save" -s $S "$T/long" >"$W/save2.out" 2>"$W/save2.err"
check "a save with nothing skipped exits 0" test $? -eq 0
check "and says nothing on standard error" test ! -s "$W/save2.err"
NSR_TEST_SAVE_EACCES=secret "$BIN/save" -q -s $S "$T/secret" >"$W/save3.out" 2>"$W/save3.err"
check "save -q of an unreadable file exits 3" test $? -eq 3
expect_fail "save -q prints no summary" grep -q "files" "$W/save3.out"
check "save -q still names the file" grep -q "$T/secret: not saved: open" "$W/save3.err"

chmod 600 "$T/secret"
nsr_done
