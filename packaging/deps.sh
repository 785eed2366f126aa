#!/bin/sh
# deps.sh - install the Debian 12 packages OpenNSR needs to build and test.
#   packaging/deps.sh          build dependencies
#   packaging/deps.sh --test   plus what the test suite uses
# Runs apt-get update first, as root (or through sudo).
set -eu
SUDO=
if [ "$(id -u)" != 0 ]; then SUDO=sudo; fi
PKGS="build-essential cmake pkg-config libtirpc-dev rpcsvc-proto libsqlite3-dev
      libssl-dev zlib1g-dev uuid-dev"
if [ "${1:-}" = "--test" ]; then
	# clang + its runtimes (libFuzzer, sanitizers: only a Recommends of
	# clang, so named) for the fuzz block of run-tests.sh
	PKGS="$PKGS libcmocka-dev mandoc clang libclang-rt-14-dev"
fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -q
# shellcheck disable=SC2086
$SUDO apt-get install -y -q --no-install-recommends $PKGS
