#!/usr/bin/env bash
# The sanitizer gate (docs/fuzzing.md), in two stages:
#   1. build-asan: the whole tree (libraries, binaries, plugins, tests) with
#      gcc, -fsanitize=address,undefined, warnings as errors; then the whole
#      ctest suite with LeakSanitizer on and UBSan fatal.
#   2. build-fuzz: the libFuzzer targets with clang (libFuzzer exists only in
#      clang), also under ASan + UBSan; their ctests run each target for
#      FUZZ_SECONDS over its seed corpus and regression inputs.
# gcc 12 with -fsanitize=address reports -Wmaybe-uninitialized false
# positives inside libstdc++ (std::function in <regex>, plugin_host.cpp); that
# one warning stays a warning here, the normal build keeps it an error.
# Why two compilers: gcc is the compiler CI already holds warning-clean; clang
# is needed for -fsanitize=fuzzer and is not yet clean on the core (the
# stage-2 build runs without -Werror for that reason).
#   scripts/sanitize.sh                  # both stages
#   SKIP_FUZZ=1 scripts/sanitize.sh      # stage 1 only
#   FUZZ_SECONDS=5 JOBS=2 scripts/sanitize.sh
set -euo pipefail
cd "$(dirname "$0")/.."
asan_build=${BUILD_DIR:-build-asan}
fuzz_build=${FUZZ_BUILD_DIR:-build-fuzz}
jobs=${JOBS:-$(nproc)}
status=0
t0=$(date +%s)

# -O0 -g1: the instrumented build compiles about 5x faster than at -O2 -g
# (status_server.cpp: 29 s against 154 s; dra_service_test.cpp: 17 s against
# 94 s, gcc 12 on 2 cores), and -g1's line tables are all a sanitizer report
# needs. The tests wait on sockets and processes far more than they compute,
# so -O0 costs them little.
cmake -S . -B "$asan_build" -G Ninja -DCMAKE_BUILD_TYPE=Debug \
  -DCMAKE_C_FLAGS_DEBUG="-O0 -g1" -DCMAKE_CXX_FLAGS_DEBUG="-O0 -g1" \
  -DCMAKE_C_COMPILER="${ASAN_CC:-gcc}" -DCMAKE_CXX_COMPILER="${ASAN_CXX:-g++}" \
  -DDRANET_SANITIZE=address,undefined -DDRANET_WERROR=ON -DDRANET_BUILD_BENCH=OFF \
  -DCMAKE_CXX_FLAGS="-Wno-error=maybe-uninitialized"
cmake --build "$asan_build" -j"$jobs"
t1=$(date +%s)

# detect_leaks: LeakSanitizer at the exit of every process (children too:
# the integration tests' dranetd inherits these variables).
# halt_on_error + -fno-sanitize-recover=all: the first report fails the test.
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:strict_string_checks=1:check_initialization_order=1:detect_stack_use_after_return=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
export LSAN_OPTIONS=${LSAN_OPTIONS:-suppressions=$PWD/tests/fuzz/lsan.supp:print_suppressions=0}
# -LE packaging: the packaging tests check which shared libraries the
# binaries need; a sanitized binary needs libasan/libubsan, which is the
# point of this build, not a packaging bug.
#
# -LE cluster: the real-Kubernetes suite (tests/cluster) runs dranetd from an
# image of the normal build; it runs in scripts/test.sh, not again here.
ctest --test-dir "$asan_build" --output-on-failure -j"$jobs" --timeout 900 -LE 'packaging|cluster' || status=$?
t2=$(date +%s)
echo "sanitize.sh: stage 1 (gcc ASan+UBSan): build $((t1 - t0))s, ctest $((t2 - t1))s"

if [[ -z "${SKIP_FUZZ:-}" ]]; then
  # -O1 -g1, as libFuzzer's documentation builds targets: faster to compile
  # than -O2 -g, and still fast enough for FUZZ_SECONDS of fuzzing.
  cmake -S . -B "$fuzz_build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DCMAKE_C_FLAGS_RELWITHDEBINFO="-O1 -g1 -DNDEBUG" -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g1 -DNDEBUG" \
    -DCMAKE_C_COMPILER="${CLANG_CC:-clang-16}" -DCMAKE_CXX_COMPILER="${CLANG_CXX:-clang++-16}" \
    -DDRANET_SANITIZE=address,undefined -DDRANET_FUZZ=ON -DDRANET_BUILD_BENCH=OFF \
    -DDRANET_FUZZ_SECONDS="${FUZZ_SECONDS:-20}"
  # Keep going past a target that fails to build: the others still run, and
  # the missing one fails its ctest.
  cmake --build "$fuzz_build" -j"$jobs" --target dranet_fuzz_targets -- -k 0 || status=$?
  t3=$(date +%s)
  ctest --test-dir "$fuzz_build" -L fuzz --output-on-failure -j"$jobs" || status=$?
  t4=$(date +%s)
  echo "sanitize.sh: stage 2 (clang fuzzers): build $((t3 - t2))s, ctest $((t4 - t3))s"
fi
echo "sanitize.sh: total $(( $(date +%s) - t0 ))s (jobs=$jobs), exit $status"
exit $status
