#!/bin/sh
# quickstart.sh - build OpenNSR, start a single-host datazone under
# ./datazone, and show a backup and restore end to end:
#   install build packages (apt-get), build (Release), start nsrexecd (with
#   the storage node manager) and nsrd (which starts nsrmmdbd, nsrindexd and
#   nsrjobd), create an AFTD device, label a volume (a second run mounts
#   the volume the first labeled instead: its backups are kept), save a
#   sample tree, show mminfo, recover the tree elsewhere and compare it
#   with nsrtreecmp.
# The datazone keeps running; the last lines say how to stop it.
# Environment: NSR_PORTMAP_PORT / NSR_EXEC_PORT (default 7938 / 7937).
set -eu
cd "$(dirname "$0")/.."
TOP=$(pwd)
DZ=$TOP/datazone
BUILD=$TOP/build-release
say() { printf '\n==> %s\n' "$*"; }

say "installing build dependencies (apt-get)"
./packaging/deps.sh

say "building (Release) in $BUILD"
cmake -S . -B "$BUILD" -DCMAKE_BUILD_TYPE=Release -DNSR_TESTS=OFF -DNSR_BENCH=OFF >/dev/null
cmake --build "$BUILD" -j "$(nproc)"
BIN=$BUILD/bin
PATH=$BIN:$PATH
export PATH

export NSR_ROOT=$DZ/nsr
export NSR_PORTMAP_PORT=${NSR_PORTMAP_PORT:-7938}
export NSR_EXEC_PORT=${NSR_EXEC_PORT:-7937}
mkdir -p "$DZ"
cat > "$DZ/env.sh" <<ENV
# source this to use the quickstart datazone from a shell
export PATH="$BIN:\$PATH"
export NSR_ROOT="$NSR_ROOT"
export NSR_PORTMAP_PORT=$NSR_PORTMAP_PORT
export NSR_EXEC_PORT=$NSR_EXEC_PORT
ENV

if [ -f "$NSR_ROOT/logs/nsrd.pid" ] && kill -0 "$(cat "$NSR_ROOT/logs/nsrd.pid")" 2>/dev/null; then
	say "a datazone is already running under $DZ; stopping it first"
	./packaging/datazone-stop.sh "$DZ"
fi

say "starting the datazone under $NSR_ROOT (locator port $NSR_PORTMAP_PORT)"
nsrexecd -b -s
nsrd -b
# nsrd starts its children; wait (bounded) until the media database answers.
i=0
until nsrmm -q >/dev/null 2>&1 && [ -s "$NSR_ROOT/logs/nsrmmdbd.pid" ] \
	&& [ -s "$NSR_ROOT/logs/nsrindexd.pid" ] && [ -s "$NSR_ROOT/logs/nsrjobd.pid" ]; do
	i=$((i + 1))
	if [ $i -gt 100 ]; then echo "datazone did not come up; see $NSR_ROOT/logs/daemon.log"; exit 1; fi
	sleep 0.1
done
HOST=localhost

say "creating an AFTD device and labeling a volume (block size 256 KB)"
mkdir -p "$DZ/aftd1"
if ! nsradmin -s $HOST -i - 2>/dev/null <<RES | grep -q aftd1
print type: NSR device; name: aftd1
RES
then
	nsradmin -s $HOST -i - <<RES
create type: NSR device; name: aftd1; media type: adv_file; device access information: $DZ/aftd1
RES
fi
if [ -f "$DZ/aftd1/label" ]; then
	# An earlier run's volume holds its backups: never relabel it.
	say "the volume on aftd1 holds earlier backups: mounting it again" \
		"(to start afresh: ./packaging/datazone-stop.sh $DZ && rm -rf $DZ)"
	nsrmm -s $HOST -m -f aftd1
else
	nsrmm -s $HOST -l -y -b Default -f aftd1 -z 256K
fi

say "making a sample tree with every kind of file"
SAMPLE=$DZ/sample
rm -rf "$SAMPLE" "$DZ/restore"
mkdir -p "$SAMPLE/docs/deep/er" "$SAMPLE/bin"
printf 'hello, OpenNSR\n' > "$SAMPLE/docs/hello.txt"
: > "$SAMPLE/docs/empty"
head -c 3000000 /dev/urandom > "$SAMPLE/bin/random.bin"
seq 1 200000 > "$SAMPLE/docs/deep/er/numbers.txt"
ln -s ../docs/hello.txt "$SAMPLE/bin/link-to-hello"
ln -s /nonexistent/target "$SAMPLE/bin/dangling"
ln "$SAMPLE/docs/hello.txt" "$SAMPLE/docs/hardlink-to-hello"
mkfifo "$SAMPLE/bin/fifo"
chmod 0750 "$SAMPLE/bin"; chmod 0600 "$SAMPLE/docs/empty"
touch -d '2001-02-03 04:05:06.789' "$SAMPLE/docs/hello.txt"

say "save -s $HOST $SAMPLE"
save -s $HOST "$SAMPLE"

say "mminfo -av -s $HOST"
mminfo -av -s $HOST

say "recover -s $HOST -a -d $DZ/restore $SAMPLE"
recover -s $HOST -a -d "$DZ/restore" "$SAMPLE"

say "comparing the original and the restored tree"
nsrtreecmp "$SAMPLE" "$DZ/restore$SAMPLE"
echo "identical: contents, types, modes, owners, times, links"

cat <<DONE

The datazone is still running (root $NSR_ROOT).
  use it:   . $DZ/env.sh; mminfo -avot -s $HOST; nsradmin -s $HOST
  logs:     $NSR_ROOT/logs/daemon.log
  stop it:  ./packaging/datazone-stop.sh $DZ
DONE
