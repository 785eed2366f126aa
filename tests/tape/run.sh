#!/bin/sh
# run.sh - run the media library's tape tests against the real Linux st
# driver in the tapelab guest.  NOT part of ctest: it needs the lab's
# guest (tests/tape/lab, built once with lab/build-guest.sh as root).
# Without the guest it says so and exits 77 (skipped).
#
#   tests/tape/run.sh [run-guest.sh options...]
#   TAPELAB=DIR      another copy of the lab (default: lab/ next to this script)
#   TAPELAB_DIR=DIR  where the guest was built (default /var/tmp/tapelab)
set -eu
here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$here/../.." && pwd)
lab=${TAPELAB:-$here/lab}
labdir=${TAPELAB_DIR:-/var/tmp/tapelab}

if [ ! -x "$lab/run-guest.sh" ] || [ ! -f "$labdir/rootfs.img" ]; then
	echo "SKIP: the tapelab guest is not built (need $lab/run-guest.sh" \
	     "and $labdir/rootfs.img; see tests/tape/README.md)"
	exit 77
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/nsr-tape.XXXXXX")
trap 'rm -rf "$work"' EXIT
# A static binary runs in the Debian 12 guest whatever it has installed.
${CC:-cc} -std=gnu11 -O2 -Wall -Wextra -Werror -I"$src/include" \
	-include "$src/include/nsr/compat.h" \
	"$here/tape_check.c" "$src"/src/media/*.c "$src"/src/core/*.c \
	-static -luuid -lpthread -o "$work/tape_check" 2>"$work/cc.log" ||
	{ cat "$work/cc.log"; exit 1; }
# The host smoke test first: the same checks on vtape files.
"$work/tape_check" -v "$work/a.vt" "$work/b.vt" "$work/c.vt" >"$work/host.txt" ||
	{ cat "$work/host.txt"; echo "FAIL: host smoke test"; exit 1; }
cp "$here/tape_job.sh" "$work/tape_job.sh"
rc=0
"$lab/run-guest.sh" --runner uml "$@" "$work/tape_job.sh" "$work/tape_check" ||
	rc=$?
exit $rc
