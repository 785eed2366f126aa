#!/bin/sh
# run-tests.sh - the whole test suite, as CI runs it: installs the Debian
# packages it needs, builds with AddressSanitizer + UndefinedBehaviorSanitizer
# (-fno-sanitize-recover) and runs every unit, fuzz-replay and system test
# through ctest.  Exit status is ctest's.
set -eu
cd "$(dirname "$0")/.."
./packaging/deps.sh --test
BUILD=${NSR_TEST_BUILD:-build-asan}
cmake -S . -B "$BUILD" -DCMAKE_BUILD_TYPE=Debug -DNSR_SANITIZE=ON -DNSR_TESTS=ON
cmake --build "$BUILD" -j "$(nproc)"
export ASAN_OPTIONS=${ASAN_OPTIONS:-abort_on_error=1:detect_leaks=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
ctest --test-dir "$BUILD" --output-on-failure -j 2 --timeout 900
