#!/bin/bash
# 450-hosts: a datazone over four hosts, each a network namespace with its
# own host name: server srv, storage nodes sn1 (an AFTD, rd=sn1:...) and
# sn2 (a vtape, rd=sn2:..., used by pool Far), client cli.  First the
# network itself: every host reaches every other, names resolve, srv's
# locator answers by name from cli.  Then: the volume on sn1's device is
# labeled from the server with nsrmm; the client saves; mminfo on the
# server shows the save set with the client's name on that volume and the
# data mover ran on sn1; the client recovers it (by ssid and by path) and
# the trees are equal; mminfo and nsrmm work from the client too; a save
# to pool Far lands on sn2's vtape and comes back.  Needs root and network
# namespaces (skipped otherwise).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/netns.sh"
nsr_setup 450-hosts
nsr_net_setup srv sn1 sn2 cli
S=srv
W=$ROOT/work
mkdir -p "$W"
START=$(date +%s)

# --- the network ---------------------------------------------------------
for a in srv sn1 sn2 cli; do
	for b in srv sn1 sn2 cli; do
		[ $a = $b ] && continue
		check "$a reaches $b" nsr_host_reach $a $b
	done
done
check "cli's host name is cli" test "$(nsr_host_exec cli hostname)" = cli
check "cli resolves sn1 to its address" \
	test "$(nsr_host_exec cli getent hosts sn1 | awk '{print $1}')" = "$(nsr_host_addr sn1)"

nsr_host_start_server srv
nsr_host_start_storage sn1
nsr_host_start_storage sn2
nsr_host_start_client cli
check "srv's locator answers cli by name" nsr_host_tcp cli srv "$NSR_PORTMAP_PORT"
check "sn1's locator answers srv by name" nsr_host_tcp srv sn1 "$NSR_PORTMAP_PORT"
check "sn2's locator answers cli by name" nsr_host_tcp cli sn2 "$NSR_PORTMAP_PORT"

# --- a device on sn1, labeled from the server ----------------------------
D1=$ROOT/sn1/aftd1
mkdir -p "$D1"
nsr_host_device srv "rd=sn1:$D1" adv_file "$D1"
check "nsrmm on srv labels SN1.001 on sn1's device" \
	on srv "$BIN/nsrmm" -s $S -q -l -y -b Default -f "rd=sn1:$D1" -z 64K SN1.001
on srv "$BIN/nsrmm" -s $S >"$W/nsrmm.out" 2>&1
check "nsrmm shows SN1.001 mounted on rd=sn1:..." grep -q "rd=sn1:$D1 SN1.001" "$W/nsrmm.out"

# --- a tree on the client ------------------------------------------------
T=$ROOT/cli/tree
mkdir -p "$T/a/b" "$T/empty"
printf 'alpha\n' >"$T/a/alpha.txt"
head -c 3000000 /dev/urandom >"$T/a/b/random.bin"
seq 1 50000 >"$T/a/numbers"
ln -s alpha.txt "$T/a/link"
ln "$T/a/alpha.txt" "$T/hard"

# --- save on the client, mminfo on the server ----------------------------
on cli "$BIN/save" -s $S -c cli "$T" >"$W/save.out" 2>&1
check "save on cli exits 0" test $? -eq 0
check "save prints completed" grep -q "^completed savetime=" "$W/save.out"
on srv "$BIN/mminfo" -s $S -q "client=cli" -r "volume,client,ssid,sumflags,name" \
	>"$W/mminfo.out" 2>&1
check "mminfo on srv: the save set, client cli, on SN1.001, browsable" \
	grep -Eq "^SN1\.001 +cli +[0-9]+ +cb +$T\$" "$W/mminfo.out"
SSID=$(awk -v t="$T" '$1 == "SN1.001" && $NF == t {print $3; exit}' "$W/mminfo.out")
check "the mover that wrote it ran on sn1" \
	grep -q "nsrmmd[.0-9]*\[[0-9]*\]: info: save set [0-9]* (cli:$T, .*) started on volume SN1.001" \
	"$ROOT/sn1/logs/daemon.log"
check "and no mover ran on srv" test -z "$(grep "nsrmmd[.0-9]*\[" "$ROOT/srv/logs/daemon.log" 2>/dev/null)"
check "the volume's files are in sn1's device directory" \
	test "$(du -sb "$D1" | awk '{print $1}')" -gt 3000000

# --- recover on the client -----------------------------------------------
if [ -n "$SSID" ]; then
	on cli "$BIN/recover" -s $S -c cli -S "$SSID" -d "$W/r1" >"$W/rec1.out" 2>&1
	check "recover -S on cli exits 0" test $? -eq 0
	check "recovered tree equals the original" "$BIN/nsrtreecmp" "$T" "$W/r1$T"
else
	fail "no ssid for the save set (mminfo said: $(head -c 300 "$W/mminfo.out"))"
fi
on cli "$BIN/recover" -s $S -c cli -a -d "$W/r2" "$T" >"$W/rec2.out" 2>&1
check "recover -a (through the index) on cli exits 0" test $? -eq 0
check "and gives the tree back" "$BIN/nsrtreecmp" "$T" "$W/r2$T"

# --- the tools from the client host --------------------------------------
on cli "$BIN/mminfo" -s $S -av >"$W/mminfo-cli.out" 2>&1
check "mminfo -s srv from cli lists the save set" grep -q "SN1.001.*$T" "$W/mminfo-cli.out"
on cli "$BIN/nsrmm" -s $S >"$W/nsrmm-cli.out" 2>&1
check "nsrmm -s srv from cli shows the volume" grep -q "SN1.001" "$W/nsrmm-cli.out"

# --- a second storage node: vtape on sn2, pool Far -----------------------
echo 'create type: NSR pool; name: Far' |
	on srv "$BIN/nsradmin" -s $S -i - >/dev/null 2>&1
V2=$ROOT/sn2/tape1.vtape
nsr_host_device srv "rd=sn2:$V2" vtape "$V2"
check "nsrmm labels SN2.001 in pool Far on sn2's vtape" \
	on srv "$BIN/nsrmm" -s $S -q -l -y -b Far -f "rd=sn2:$V2" SN2.001
T2=$ROOT/cli/far
mkdir -p "$T2/x"
head -c 2000000 /dev/urandom >"$T2/x/far.bin"
printf 'far away\n' >"$T2/note"
on cli "$BIN/save" -s $S -c cli -b Far "$T2" >"$W/save2.out" 2>&1
check "save -b Far on cli exits 0" test $? -eq 0
on srv "$BIN/mminfo" -s $S -q "client=cli,name=$T2" -r "volume,ssid,sumflags" \
	>"$W/mminfo2.out" 2>&1
check "mminfo: the Far save set is on SN2.001" grep -Eq "^SN2\.001 +[0-9]+ +cb" "$W/mminfo2.out"
SSID2=$(awk '$1 == "SN2.001" {print $2; exit}' "$W/mminfo2.out")
check "the mover that wrote it ran on sn2" \
	grep -q "nsrmmd[.0-9]*\[[0-9]*\]: info: save set [0-9]* (cli:$T2, .*) started on volume SN2.001" \
	"$ROOT/sn2/logs/daemon.log"
check "the vtape file on sn2 holds the data" test "$(stat -c %s "$V2" 2>/dev/null || echo 0)" -gt 2000000
if [ -n "$SSID2" ]; then
	on cli "$BIN/recover" -s $S -c cli -S "$SSID2" -d "$W/r3" >"$W/rec3.out" 2>&1
	check "recover -S of the Far save set on cli exits 0" test $? -eq 0
	check "and gives the tree back" "$BIN/nsrtreecmp" "$T2" "$W/r3$T2"
else
	fail "no ssid for the Far save set"
fi

echo "# took $(( $(date +%s) - START )) s"
nsr_done
