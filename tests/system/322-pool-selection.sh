#!/bin/bash
# 322-pool-selection: a save that names no pool goes to the pool whose
# selection criteria it matches (groups, clients, save sets with
# wildcards, levels; OR within an attribute, AND across them), the
# highest-ranking criterion winning (group, then client, then save set,
# then level), else Default; save -b still decides alone, and a pool
# whose criteria do not all hold is not chosen.  nsradmin cannot make a
# pool that claims the same saves as another (the error names it), nor
# one whose save set pattern overlaps another's (*1 and $W/etc*).
. "$(dirname "$0")/lib.sh"
nsr_setup 322-pool-selection
S=127.0.0.1
W=$ROOT/work
nsr_start_datazone
admin() {
	"$BIN/nsradmin" -s $S -i - >"$W/admin.out" 2>&1 ||
		fail "nsradmin: $(cat "$W/admin.out")"
}
mkdir -p "$W"
for d in 1 2 3 4 5 6; do
	mkdir -p "$W/a$d"
	nsr_device d$d adv_file "$W/a$d"
done
printf '%s\n' "create type: NSR group; name: G1" \
	"create type: NSR pool; name: GroupPool; groups: G1" \
	"create type: NSR pool; name: ClientPool; clients: cla, clc" \
	"create type: NSR pool; name: EtcPool; save sets: $W/etc*" \
	"create type: NSR pool; name: IncrPool; levels: incr, 1" \
	"create type: NSR pool; name: BothPool; clients: clb; levels: 5" | admin
n=1
for p in Default GroupPool ClientPool EtcPool IncrPool BothPool; do
	check "label a volume of $p" "$BIN/nsrmm" -s $S -q -l -y -b $p \
		-f d$n "V$n"
	n=$((n + 1))
done
mkdir -p "$W/etc1" "$W/data"
echo one >"$W/etc1/f"; echo two >"$W/data/f"

# saved DESC WANT SAVE-ARGS... - a save with these arguments lands in
# pool WANT (mminfo's pool of the newest save set).
saved() {
	local desc=$1 want=$2 got
	shift 2
	"$BIN/save" -s $S -q "$@" >"$W/save.out" 2>&1 ||
		{ fail "$desc: save failed: $(cat "$W/save.out")"; return; }
	got=$("$BIN/mminfo" -s $S -a -ot -r pool 2>/dev/null | tail -n 1 |
		tr -d ' ')
	check "$desc: pool $want (got $got)" test "$got" = "$want"
}
saved "a client in ClientPool's list" ClientPool -c cla "$W/data"
saved "the other client of the list" ClientPool -c clc "$W/data"
saved "group G1 ranks above the client" GroupPool -c cla -g G1 "$W/data"
saved "a save set matching EtcPool's wildcard" EtcPool -c cld "$W/etc1"
saved "client above save set" ClientPool -c cla "$W/etc1"
saved "an incr by its level" IncrPool -c cld -l incr "$W/data"
saved "level 5 of clb: both of BothPool's criteria" BothPool -c clb -l 5 \
	"$W/data"
saved "level 5 of another client: BothPool does not hold" Default \
	-c cld -l 5 "$W/data"
saved "nothing matches: Default" Default -c cld "$W/data"
saved "save -b decides alone" Default -c cla -b Default "$W/data"

# A second pool with ClientPool's claim (one client in common) is refused
# with a message naming ClientPool; one with another client is not.
echo "create type: NSR pool; name: Dup; clients: clx, CLC" |
	"$BIN/nsradmin" -s $S -i - >"$W/dup.out" 2>&1
rc=$?
check "a duplicate claim is refused (exit $rc)" test $rc -ne 0
check "the error names the other pool: $(head -c 300 "$W/dup.out")" \
	grep -q "claim the same saves as those of pool ClientPool" "$W/dup.out"
# Two save set patterns that one name matches ($W/etc1) collide too.
echo "create type: NSR pool; name: Over; save sets: *1" |
	"$BIN/nsradmin" -s $S -i - >"$W/over.out" 2>&1
rc=$?
check "overlapping save set patterns are refused (exit $rc)" test $rc -ne 0
check "naming the other pool: $(head -c 300 "$W/over.out")" \
	grep -q "claim the same saves as those of pool EtcPool" "$W/over.out"
echo "create type: NSR pool; name: Dup; clients: clx" | admin
saved "the refused pool did not change the choice" ClientPool -c clc \
	"$W/data"
nsr_done
