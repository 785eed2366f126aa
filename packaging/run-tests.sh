#!/bin/sh
# run-tests.sh - the whole test suite, as CI runs it: installs the Debian
# packages it needs, then
#  1. builds an optimized build (Release, -O3) with the tests, so warnings
#     that only the optimizer finds stop the run under -Werror, and runs its
#     unit tests;
#  2. builds with AddressSanitizer + UndefinedBehaviorSanitizer
#     (-fno-sanitize-recover) and runs every unit, fuzz-replay and system
#     test through ctest.
# Stops at the first failure; exit status is then non-zero, else ctest's.
#   NSR_TEST_BUILD          the sanitizer build directory (build-asan)
#   NSR_TEST_RELEASE_BUILD  the optimized build directory (build-release)
set -eu
cd "$(dirname "$0")/.."
./packaging/deps.sh --test

REL=${NSR_TEST_RELEASE_BUILD:-build-release}
echo "== optimized build in $REL (warnings that appear only at -O2/-O3)"
cmake -S . -B "$REL" -DCMAKE_BUILD_TYPE=Release -DNSR_SANITIZE=OFF \
	-DNSR_TESTS=ON
cmake --build "$REL" -j "$(nproc)"
ctest --test-dir "$REL" --output-on-failure -j 2 --timeout 900 -L unit

BUILD=${NSR_TEST_BUILD:-build-asan}
echo "== ASan + UBSan build in $BUILD: the whole suite"
cmake -S . -B "$BUILD" -DCMAKE_BUILD_TYPE=Debug -DNSR_SANITIZE=ON -DNSR_TESTS=ON
cmake --build "$BUILD" -j "$(nproc)"
export ASAN_OPTIONS="${ASAN_OPTIONS:-abort_on_error=1:detect_leaks=1}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"
ctest --test-dir "$BUILD" --output-on-failure -j 2 --timeout 900
