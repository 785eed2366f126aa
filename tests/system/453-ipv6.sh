#!/bin/bash
# 453-ipv6: the datazone across hosts over IPv6 only.  Three hosts whose
# only addresses (but loopback) are IPv6 (2001:2::/48) and whose names
# resolve to them alone: server srv, storage node sn1 (an AFTD,
# rd=sn1:...), client cli.  Every daemon listens on its IPv6 address (-a);
# the client saves to sn1, mminfo on srv shows the save set, the client
# recovers it and the trees are equal; the connections between hosts were
# IPv6 ones (ss on sn1 and srv during the work shows peers in 2001:2::/48).
# Needs root and network namespaces (skipped otherwise).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/netns.sh"
nsr_setup 453-ipv6
NSR_NET_FAMILY=6
nsr_net_setup srv sn1 cli
S=srv
W=$ROOT/work
mkdir -p "$W"

for a in srv sn1 cli; do
	for b in srv sn1 cli; do
		[ $a = $b ] && continue
		check "$a reaches $b over IPv6" nsr_host_reach $a $b
	done
done
check "cli resolves sn1 to its IPv6 address only" \
	test "$(nsr_host_exec cli getent ahosts sn1 | awk '{print $1}' |
		sort -u)" = "$(nsr_host_addr sn1)"

nsr_host_start_server srv
nsr_host_start_storage sn1
nsr_host_start_client cli
check "srv's nsrd listens on its IPv6 address" \
	grep -q "nsrd\[[0-9]*\]: info: started.*listening on .*2001:2::" \
	"$ROOT/srv/logs/daemon.log"
check "srv's locator answers cli by name" \
	nsr_host_tcp cli srv "$NSR_PORTMAP_PORT"
nsr_host_sn1_aftd

T=$ROOT/cli/tree
mkdir -p "$T/a/b"
printf 'over six\n' >"$T/a/six.txt"
nsr_big_file "$T/a/b/big.bin" 40
ln -s six.txt "$T/a/link"

# A save, watched from sn1 and srv while it runs: the TCP peers there.
nsr_host_exec sn1 sh -c 'for i in $(seq 1 600); do ss -Htn; sleep 0.05; done' \
	>"$W/ss-sn1.out" 2>&1 &
SSPID=$!
on cli "$BIN/save" -s $S -c cli "$T" >"$W/save.out" 2>&1
check "save on cli over IPv6 exits 0" test $? -eq 0
kill "$SSPID" 2>/dev/null; wait "$SSPID" 2>/dev/null
check "the mover on sn1 had cli's IPv6 address as a peer" \
	grep -q "\[$(nsr_host_addr cli)\]" "$W/ss-sn1.out"
check "ss saw connections on sn1" test -s "$W/ss-sn1.out"
check "and no IPv4 peer but loopback" \
	test -z "$(grep -E '(^| )([0-9]{1,3}\.){3}[0-9]{1,3}:' "$W/ss-sn1.out" |
		grep -v '127\.0\.0\.1' | head -1)"

on srv "$BIN/mminfo" -s $S -q "client=cli" -r "volume,client,ssid,sumflags,name" \
	>"$W/mminfo.out" 2>&1
check "mminfo on srv: the save set, client cli, on SN1.001, browsable" \
	grep -Eq "^SN1\.001 +cli +[0-9]+ +cb +$T\$" "$W/mminfo.out"
SSID=$(awk -v t="$T" '$1 == "SN1.001" && $NF == t {print $3; exit}' "$W/mminfo.out")
if [ -n "$SSID" ]; then
	on cli "$BIN/recover" -s $S -c cli -S "$SSID" -d "$W/r1" >"$W/rec.out" 2>&1
	check "recover -S on cli over IPv6 exits 0" test $? -eq 0
	check "and gives the tree back" "$BIN/nsrtreecmp" "$T" "$W/r1$T"
else
	fail "no ssid for the save set (mminfo said: $(head -c 300 "$W/mminfo.out"))"
fi
on cli "$BIN/mminfo" -s $S -av >"$W/mminfo-cli.out" 2>&1
check "mminfo -s srv from cli over IPv6 lists the save set" \
	grep -q "SN1.001.*$T" "$W/mminfo-cli.out"
nsr_done
