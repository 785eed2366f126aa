#!/bin/sh
# deps.sh - install the Debian 12 packages OpenNSR needs to build and test.
#   packaging/deps.sh          build dependencies
#   packaging/deps.sh --test   plus what the test suite uses
# Says which packages it installs and why, runs apt-get update first, then
# apt-get install, as root (or through sudo).  While another apt-get or
# dpkg holds the package manager's lock, each step waits for it, saying
# what it waits for, up to NSR_DEPS_LOCK_WAIT seconds (default 600), and
# only then fails.
set -eu
SUDO=
if [ "$(id -u)" != 0 ]; then SUDO=sudo; fi
WAIT=${NSR_DEPS_LOCK_WAIT:-600}

# One "package  why" per line.
BUILD="build-essential  C compiler and make
cmake            the build system
pkg-config       finds the libraries below
libtirpc-dev     ONC RPC and XDR (libtirpc)
rpcsvc-proto     rpcgen, for the protocols in src/rpc
libsqlite3-dev   the jobs database (SQLite)
libssl-dev       OpenSSL: libcrypto, and libssl for RPC-with-TLS
zlib1g-dev       zlib
uuid-dev         libuuid"
TEST="libcmocka-dev    the unit tests (cmocka)
mandoc           the man page lint in the system tests
iproute2         ss -K (a connection reset mid-save) and ip netns in system tests
clang            libFuzzer builds of the fuzz targets (run-tests.sh)
libclang-rt-14-dev  libFuzzer and clang's sanitizer runtimes (a Recommends of clang)"

echo "deps.sh: for the build:"
echo "$BUILD" | sed 's/^/  /'
PKGS=$(echo "$BUILD" | awk '{print $1}')
if [ "${1:-}" = "--test" ]; then
	echo "deps.sh: for the tests:"
	echo "$TEST" | sed 's/^/  /'
	PKGS="$PKGS $(echo "$TEST" | awk '{print $1}')"
fi
export DEBIAN_FRONTEND=noninteractive

log=$(mktemp "${TMPDIR:-/tmp}/nsr-deps.XXXXXX")
trap 'rm -f "$log"' EXIT

# apt_update - apt-get update, waiting while another process holds the
# lists lock: apt 2.6 (Debian 12) fails at once there, whatever
# DPkg::Lock::Timeout says, so retry every 5 s up to WAIT seconds.  The
# C locale keeps apt's "Could not get lock" in English for the grep.
apt_update() {
	end=$(( $(date +%s) + WAIT ))
	while :; do
		if $SUDO env LC_ALL=C apt-get update -q >"$log" 2>&1; then
			cat "$log"
			return 0
		fi
		if ! grep -q "Could not get lock" "$log"; then
			cat "$log"
			return 1
		fi
		if [ "$(date +%s)" -ge "$end" ]; then
			cat "$log"
			echo "deps.sh: gave up after ${WAIT} s waiting for the" \
			     "package manager's lock (held by the process above)"
			return 1
		fi
		echo "deps.sh: apt-get update waits for another package" \
		     "manager: $(grep -m 1 'Could not get lock' "$log" |
				 sed 's/^E: //')"
		sleep 5
	done
}

echo "deps.sh: apt-get update (waits up to ${WAIT} s for the lock)"
apt_update
echo "deps.sh: apt-get install (waits up to ${WAIT} s for the lock)"
# apt-get itself waits for the dpkg lock here and says who holds it.
# shellcheck disable=SC2086
$SUDO apt-get install -y -q --no-install-recommends \
	-o DPkg::Lock::Timeout="$WAIT" $PKGS
