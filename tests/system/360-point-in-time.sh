#!/bin/bash
# 360-point-in-time: recover a tree as of a time across a full/incremental
# chain.  full -> incr -> level 1 -> incr, with files added, changed,
# deleted, renamed, a name deleted and used again, directories added,
# deleted, renamed and moved to another parent, a symlink, an empty
# directory and a file moved in with old times between them.  After each
# backup a copy of the tree is kept; then `recover -a -t <save time>`
# into an empty directory must give exactly that copy (nsrtreecmp: data
# and metadata), and so must a time between two backups; a path deleted
# before the browse time and a time before the first backup are refused.
# The scenario is in pit.sh (364-recover-one-pass runs it on a
# multiplexed vtape).
. "$(dirname "$0")/lib.sh"
nsr_setup 360-point-in-time
S=127.0.0.1
W=$ROOT/work
T=$W/tree
nsr_start_aftd_datazone

. "$(dirname "$0")/pit.sh"
pit_scenario
pit_check_moments

# --- bad input --------------------------------------------------------------
recover_at "$TIME_i2" "$W/r-file" "$T/docs/notes"
check "a file that exists recovers alone" cmp "$T/docs/notes" \
	"$W/r-file$T/docs/notes"
recover_at "$TIME_l1" "$W/r-del" "$T/lib/old/a.o"
check "a path renamed away before the browse time is refused" \
	test $? -ne 0
check "naming it" grep -q "old/a.o: not in the index" "$W/r-del.out"
sed 's/^/# recover: /' "$W/r-del.out"
check "and the time, and when its versions are" grep -Eq \
	"old/a.o: not in the index of client [^ ]+ as of [0-9/]+ [0-9:]+; its (one version there is of|[0-9]+ versions there are of) [0-9/]+ [0-9:]+" \
	"$W/r-del.out"
# The first version's time, as the message gives it, is a -t that works.
first=$(sed -nE 's/.*(one version there is of|versions there are of) ([0-9/]+ [0-9:]+).*/\2/p' \
	"$W/r-del.out" | head -n 1)
"$BIN/recover" -s $S -a -t "$first" -d "$W/r-adv" "$T/lib/old/a.o" \
	>"$W/r-adv.out" 2>&1
check "recovering at that time ($first) gives it back" \
	cmp "$W/snap-full/lib/old/a.o" "$W/r-adv$T/lib/old/a.o"
check "without a completion line" \
	test "$(grep -c "Recover completion time" "$W/r-del.out")" = 0
recover_at "$TIME_full" "$W/r-old" "$T/lib/old/a.o"
check "but recovers as of a time it existed" cmp "$W/snap-full/lib/old/a.o" \
	"$W/r-old$T/lib/old/a.o"
recover_at $((TIME_full - 5)) "$W/r-before"
check "a time before the first backup is refused" test $? -ne 0
sed 's/^/# recover: /' "$W/r-before.out"
check "saying when the versions of the tree are" grep -Eq \
	"not in the index of client [^ ]+ as of .*; its [0-9]+ versions there are of" \
	"$W/r-before.out"

nsr_done
