#!/bin/sh
# run-tests.sh - the whole test suite, as CI runs it: installs the Debian
# packages it needs, then
#  1. builds an optimized build (Release, -O3) with the tests, so warnings
#     that only the optimizer finds stop the run under -Werror, and runs its
#     unit tests;
#  2. builds with AddressSanitizer + UndefinedBehaviorSanitizer
#     (-fno-sanitize-recover) and runs every unit, fuzz-replay and system
#     test through ctest;
#  3. with clang, builds every fuzz target with libFuzzer (all libraries
#     instrumented) and runs each for a few seconds.
# Stops at the first failure; exit status is then non-zero.
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

# --- libFuzzer: every fuzz target for a short, bounded time -----------------
# After the ASan suite, in a separate clang build with -DNSR_FUZZ=ON (every
# library instrumented).  Each tests/fuzz/fuzz_<name>_lf runs for
# NSR_FUZZ_SECONDS (default 10) or NSR_FUZZ_RUNS inputs, whichever comes
# first, on a copy of its seed corpus in a temporary directory (the tree's
# corpus is never written to).  A crash, leak, hang or sanitizer report
# fails the script; its input is kept in <fuzz build>/fuzz-artifacts/.
# Running for hours, minimizing, adding seeds: tests/fuzz/README.
if command -v clang >/dev/null 2>&1; then
	FUZZ_BUILD=${NSR_FUZZ_BUILD:-build-fuzz}
	FUZZ_SECONDS=${NSR_FUZZ_SECONDS:-10}
	FUZZ_RUNS=${NSR_FUZZ_RUNS:-20000000}
	CC=clang cmake -S . -B "$FUZZ_BUILD" -DCMAKE_BUILD_TYPE=Debug \
		-DNSR_FUZZ=ON -DNSR_TESTS=ON
	cmake --build "$FUZZ_BUILD" -j "$(nproc)"
	FUZZ_TMP=$(mktemp -d)
	trap 'rm -rf "$FUZZ_TMP"' EXIT
	mkdir -p "$FUZZ_BUILD/fuzz-artifacts" "$FUZZ_TMP/tmp"
	fuzz_pass=0
	fuzz_fail=0
	for lf in "$FUZZ_BUILD"/tests/fuzz/fuzz_*_lf; do
		name=$(basename "$lf" _lf)
		mkdir -p "$FUZZ_TMP/$name"
		cp tests/fuzz/corpus/"$name"/* "$FUZZ_TMP/$name/"
		if NSR_TEST_TMPDIR="$FUZZ_TMP/tmp" "$lf" \
			-max_total_time="$FUZZ_SECONDS" -runs="$FUZZ_RUNS" \
			-timeout=30 -print_final_stats=1 \
			-artifact_prefix="$FUZZ_BUILD/fuzz-artifacts/$name-" \
			"$FUZZ_TMP/$name" >"$FUZZ_TMP/$name.log" 2>&1; then
			fuzz_pass=$((fuzz_pass + 1))
			echo "fuzz: $name ok: $(grep -o 'stat::number_of_executed_units: [0-9]*' \
				"$FUZZ_TMP/$name.log" | cut -d' ' -f2) runs," \
				"$(grep -Eo 'cov: [0-9]+' "$FUZZ_TMP/$name.log" | tail -1)"
		else
			fuzz_fail=$((fuzz_fail + 1))
			tail -n 80 "$FUZZ_TMP/$name.log"
			echo "fuzz: $name FAILED (input in $FUZZ_BUILD/fuzz-artifacts/)"
		fi
	done
	echo "fuzz: $fuzz_pass passed, $fuzz_fail failed"
	[ "$fuzz_fail" -eq 0 ]
else
	echo "fuzz: clang not found, libFuzzer runs skipped"
fi
