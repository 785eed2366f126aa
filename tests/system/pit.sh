# pit.sh - the point-in-time scenario of 360-point-in-time, shared with
# 364-recover-one-pass (sourced after lib.sh; $S, $W, $T set, the
# datazone running).  pit_scenario saves $T four times (full -> incr ->
# level 1 -> incr) with files added, changed, deleted, renamed, a name
# deleted and used again, directories added, deleted, renamed and moved
# to another parent, a symlink, an empty directory and a file moved in
# with old times, keeping a copy of the tree after each backup;
# pit_check_moments then recovers each moment (and one between two)
# with `recover -a -t` and compares with the copy (nsrtreecmp: data and
# metadata).
#
# PIT_SAVE_ARGS: more arguments for save (a pool).  pit_during_save, if
# defined, runs in the background while each backup saves (other
# sessions multiplexed onto the same volume); it is waited for.

# backup LEVEL N - save $T at LEVEL after the second of the last change
# has passed, then keep a copy of the tree as $W/snap-N and the save
# time as TIME_N.
backup() {
	local st bg=
	sleep 1.1
	if declare -F pit_during_save >/dev/null; then
		pit_during_save "$2" &
		bg=$!
	fi
	"$BIN/save" -s $S -l "$1" ${PIT_SAVE_ARGS:-} "$T" >"$W/save-$2.out" 2>&1
	check "save -l $1 ($2) exits 0" test $? -eq 0
	[ -z "$bg" ] || check "the save beside it ($2) exits 0" wait $bg
	st=$("$BIN/mminfo" -s $S -a -q "name=$T" -ot -r nsavetime 2>/dev/null |
		awk '$1 ~ /^[0-9]+$/ {s = $1} END {print s}')
	check "mminfo knows the save time of $2" test -n "$st"
	eval "TIME_$2=$st"
	cp -a "$T" "$W/snap-$2"
}

# recover_at TIME DIR [PATH] - recover PATH (default $T) as of TIME into
# the empty DIR; its output in DIR.out.
recover_at() {
	"$BIN/recover" -s $S -a -t "@$1" -d "$2" "${3:-$T}" >"$2.out" 2>&1
}

# same_as N DIR - the tree recovered into DIR is exactly snapshot N.
same_as() {
	"$BIN/nsrtreecmp" "$W/snap-$1" "$2$T" >"$2.cmp" 2>&1
}

# pit_scenario - the four backups and the changes between them.
pit_scenario() {
	# --- full
	mkdir -p "$T/docs" "$T/src" "$T/lib/old" "$T/tmp" "$T/proj/mod/pkg"
	printf 'readme\n' >"$T/docs/readme"
	printf 'notes v1\n' >"$T/docs/notes"
	printf 'draft\n' >"$T/docs/draft"
	printf 'main\n' >"$T/src/main.c"
	printf 'util\n' >"$T/src/util.c"
	printf 'a\n' >"$T/lib/old/a.o"
	printf 'b\n' >"$T/lib/old/b.o"
	printf 'pkg\n' >"$T/proj/mod/pkg/init"
	ln -s docs/readme "$T/README"
	backup full full
	sleep 1 # a browse time strictly between the full and the incr

	# --- incr: changed, deleted, renamed, added; a directory deleted
	printf 'notes v2\n' >"$T/docs/notes"
	rm "$T/docs/draft"
	mv "$T/src/util.c" "$T/src/helpers.c"
	printf 'todo\n' >"$T/docs/todo"
	mkdir "$T/build"
	printf 'out\n' >"$T/build/out"
	rmdir "$T/tmp"
	backup incr i1

	# --- level 1: a directory renamed, the deleted name back
	printf 'main v2\n' >"$T/src/main.c"
	printf 'c\n' >"$T/lib/c.o"
	rm "$T/build/out"
	mv "$T/lib/old" "$T/lib/archive"
	printf 'draft again\n' >"$T/docs/draft"
	backup 1 l1

	# --- incr: chmod, moved in with old times, a directory moved elsewhere
	chmod 600 "$T/docs/readme"
	printf 'old\n' >"$W/moved"
	touch -d '2001-02-03 04:05:06' "$W/moved"
	mv "$W/moved" "$T/docs/moved"
	mv "$T/proj/mod" "$T/src/mod2"
	rm "$T/README"
	rm -r "$T/build"
	backup incr i2
}

# pit_check_moments - every moment recovers exactly.
pit_check_moments() {
	local n t
	# --- each moment recovers exactly
	for n in full i1 l1 i2; do
		eval "t=\$TIME_$n"
		recover_at "$t" "$W/r-$n"
		check "recover -a -t (the $n save time) exits 0" test $? -eq 0
		check "and gives the tree as it was at the $n backup" same_as $n \
			"$W/r-$n"
	done
	recover_at $((TIME_full + 1)) "$W/r-between"
	check "a time between two backups recovers" test $? -eq 0
	check "the tree of the earlier one" same_as full "$W/r-between"
	expect_fail "the incr's tree is not the full's (the check can fail)" \
		same_as full "$W/r-i1"
	check "a renamed directory comes back under its new name only" \
		test -f "$W/r-l1$T/lib/archive/a.o" -a ! -e "$W/r-l1$T/lib/old"
	check "a deleted file stays deleted" test ! -e "$W/r-i1$T/docs/draft"
	check "a directory moved to another parent keeps its files" \
		test -f "$W/r-i2$T/src/mod2/pkg/init" -a ! -e "$W/r-i2$T/proj/mod"
	check "the level 1 restore reads several save sets" \
		test "$(grep -c '^Recovering save set' "$W/r-l1.out")" -ge 2
}
