#!/bin/sh
# run-benchmarks.sh - every benchmark in tests/bench, as their RESULTS.md
# describe them: a release build without sanitizers, then the media
# database against SQLite, the volume writer/reader against dd, the jobs
# database library and nsrjobd over RPC, save over a link with added
# round-trip time (tests/bench/latency; needs root for its network
# namespaces, skipped otherwise), concurrent sessions into one device and
# the restore of one save set from an interleaved volume
# (tests/bench/sessions: run-sessions.sh and bench_demux), and save
# against tar for large and small files (tests/bench/save: run-save.sh;
# cold cache with root), recover against tar -x (tests/bench/recover),
# parallel save streams (tests/bench/pss), admission of many sessions
# (tests/bench/admission), the client file index (tests/bench/index:
# bench_index, nsrindexd's memory for a large nsrinfo query,
# run-ixquery.sh, and half of a client's save sets deleted one by one
# against in one call, bench_ixdel and run-ixdel.sh) and
# save with TLS on and off (tests/bench/tls), and several save sets of one
# volume restored in one pass (tests/bench/multiread), nsrclone against
# dd (tests/bench/clone), nsrim over a million save sets
# (tests/bench/nsrim) and mminfo's sorted report of every row of as many
# (tests/bench/mmdb/run-mminfo.sh; it and run-mmdel.sh compare with a
# former build given with -o, by hand).  Output goes to the terminal and to
# DIR/<name>.txt; the data lives under DIR too (default ./bench-results,
# a few GB at full size).  Run it on a quiet machine and
# compare ratios, not absolute figures, between machines.
#
#   ./packaging/run-benchmarks.sh [-q] [DIR]
#     -q   quick: small data sets (minutes), to check the benchmarks run
#          at all; the targets are stated at full size
set -eu
cd "$(dirname "$0")/.."
quick=0
if [ "${1:-}" = "-q" ]; then
	quick=1
	shift
fi
out=$(mkdir -p "${1:-bench-results}" && cd "${1:-bench-results}" && pwd)
./packaging/deps.sh --test
BUILD=${NSR_BENCH_BUILD:-build-bench}
cmake -S . -B "$BUILD" -DCMAKE_BUILD_TYPE=Release -DNSR_SANITIZE=OFF \
	-DNSR_TESTS=ON -DNSR_BENCH=ON >/dev/null
cmake --build "$BUILD" -j "$(nproc)" --target bench_mmdb bench_media \
	bench_jobdb bench_jobd bench_demux bench_savedata bench_admission \
	bench_index bench_ixdel nsrexecd nsrjobd \
	delayproxy save recover mminfo nsrd nsrmmdbd nsrindexd nsrsnmd nsrmmd \
	nsrmm nsradmin nsrclone nsrinfo
B=$BUILD/tests/bench

if [ $quick = 1 ]; then
	mmdb="-n 20000 -q 200" media="-s 32 -r 3" jobs=100000 latency=-q
	sessions=-q save=-q recover=-q pss=-q admission=-q index="-n 100000"
	tls=-q multiread=-q clone=-q nsrim=-q ixquery=-q ixdel="-n 2000"
	mminfo="-n 20000 -r 1"
else
	mmdb="-n 1000000 -q 2000" media="-s 256 -r 12" jobs=1000000 latency=""
	sessions="-s 256 -r 3" save="-r 3" recover="-r 3" pss="-r 3"
	admission="-r 3" index="-n 10000000" tls="-r 3" multiread="-r 3" clone="-r 3"
	nsrim="" ixquery="" ixdel="-n 2000,10000" mminfo="-n 1000000 -r 2"
fi

run() { # NAME COMMAND... - run, show and keep the output
	name=$1
	shift
	echo "==> $name: $*"
	"$@" 2>&1 | tee "$out/$name.txt"
}

mkdir -p "$out/mmdb" "$out/media" "$out/jobdb" "$out/jobd" "$out/latency" \
	"$out/sessions" "$out/demux" "$out/save" "$out/recover" "$out/pss" \
	"$out/admission" "$out/index" "$out/tls" "$out/multiread" "$out/clone" \
	"$out/nsrim" "$out/ixquery" "$out/ixdel" "$out/mminfo"
# shellcheck disable=SC2086 # the option strings are meant to split
run mmdb "$B/bench_mmdb" $mmdb -d "$out/mmdb"
# shellcheck disable=SC2086
run media "$B/bench_media" $media -d "$out/media"
run jobdb-fill "$B/bench_jobdb" -n $jobs -m none -d "$out/jobdb"
cp "$out/jobdb/bench_jobsdb" "$out/jobdb/filled.db"
run jobdb-stepwise "$B/bench_jobdb" -n $jobs -r -d "$out/jobdb"
cp "$out/jobdb/filled.db" "$out/jobdb/bench_jobsdb"
rm -f "$out/jobdb/bench_jobsdb-wal" "$out/jobdb/bench_jobsdb-shm"
run jobdb-purge-all "$B/bench_jobdb" -n $jobs -r -L -m all -d "$out/jobdb"
run jobd "$B/bench_jobd" "$BUILD/bin" "$out/jobd" $jobs 30000
# shellcheck disable=SC2086
run latency ./tests/bench/latency/run-latency.sh $latency -b "$BUILD/bin" \
	-p "$B/delayproxy" -d "$out/latency"
# shellcheck disable=SC2086
run sessions ./tests/bench/sessions/run-sessions.sh $sessions \
	-b "$BUILD/bin" -d "$out/sessions"
run demux "$B/bench_demux" -d "$out/demux" -s 256 -r 5
# shellcheck disable=SC2086
run save ./tests/bench/save/run-save.sh $save -b "$BUILD/bin" \
	-s "$B/bench_savedata" -d "$out/save"
# shellcheck disable=SC2086
run recover ./tests/bench/recover/run-recover.sh $recover -b "$BUILD/bin" \
	-s "$B/bench_savedata" -d "$out/recover"
# shellcheck disable=SC2086
run pss ./tests/bench/pss/run-pss.sh $pss -b "$BUILD/bin" -d "$out/pss"
# shellcheck disable=SC2086
run admission ./tests/bench/admission/run-admission.sh $admission \
	-b "$BUILD/bin" -t "$B" -d "$out/admission"
# shellcheck disable=SC2086
run index "$B/bench_index" $index -d "$out/index"
# shellcheck disable=SC2086
run ixquery ./tests/bench/index/run-ixquery.sh $ixquery -b "$BUILD/bin" \
	-t "$B" -d "$out/ixquery"
# shellcheck disable=SC2086
run ixdel "$B/bench_ixdel" $ixdel -d "$out/ixdel"
# shellcheck disable=SC2086
run ixdel-daemon ./tests/bench/index/run-ixdel.sh $ixdel -b "$BUILD/bin" \
	-t "$B" -d "$out/ixdel"
# shellcheck disable=SC2086
run tls ./tests/bench/tls/run-tls.sh $tls -b "$BUILD/bin" -d "$out/tls"
run multiread ./tests/bench/multiread/run-multiread.sh $multiread \
	-b "$BUILD/bin" -d "$out/multiread"
run clone ./tests/bench/clone/run-clone.sh $clone -b "$BUILD/bin" \
	-d "$out/clone"
# shellcheck disable=SC2086
run nsrim ./tests/bench/nsrim/run-nsrim.sh $nsrim -b "$BUILD/bin" -t "$B" \
	-d "$out/nsrim"
# shellcheck disable=SC2086
run mminfo ./tests/bench/mmdb/run-mminfo.sh $mminfo -b "$BUILD/bin" -t "$B" \
	-d "$out/mminfo"
echo "==> results in $out"
