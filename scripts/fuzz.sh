#!/usr/bin/env bash
# Builds the libFuzzer targets (clang, ASan + UBSan) and runs each one for a
# longer budget than ctest gives them (docs/fuzzing.md).
#   scripts/fuzz.sh                  # 300 s per target
#   scripts/fuzz.sh 3600             # an hour per target
#   TARGETS="cel_fuzz sysfs_fuzz" scripts/fuzz.sh 600
#   BUILD_DIR=build-asan scripts/fuzz.sh 60   # reuse the sanitizer build
# New corpus entries are kept in <build>/fuzz-work/<target>/new (merge the
# useful ones into tests/fuzz/corpus/<target> with -merge=1); crashes are
# written to <build>/fuzz-work/<target>/artifacts/ and make the script fail.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-300}
build=${BUILD_DIR:-build-fuzz}
jobs=${JOBS:-$(nproc)}
all_targets="cel_fuzz ttrpc_mux_fuzz nri_message_fuzz api_json_fuzz sysfs_fuzz claim_config_fuzz"
targets=${TARGETS:-$all_targets}

if [[ ! -f "$build/CMakeCache.txt" ]]; then
  cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DCMAKE_C_COMPILER="${CLANG_CC:-clang-16}" -DCMAKE_CXX_COMPILER="${CLANG_CXX:-clang++-16}" \
    -DDRANET_SANITIZE=address,undefined -DDRANET_FUZZ=ON -DDRANET_BUILD_BENCH=OFF
fi
known=$(cmake --build "$build" --target help)
present=()
for t in $targets; do
  if grep -q "^$t:" <<<"$known"; then present+=("$t"); else
    echo "fuzz.sh: $t is not built in this configuration; skipped"; fi
done
# Keep going past a target that fails to build; it then fails below.
cmake --build "$build" -j"$jobs" --target "${present[@]}" -- -k 0 || true

export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
failed=()
for t in "${present[@]}"; do
  if [[ ! -x "$build/tests/bin/$t" ]]; then
    echo "fuzz.sh: $t did not build"; failed+=("$t"); continue
  fi
  echo "=== $t: ${seconds}s"
  if ! tests/fuzz/run_fuzz_target.sh "$build/tests/bin/$t" "tests/fuzz/corpus/$t" \
      "$build/fuzz-work/$t" "$seconds" "${RSS_MB:-2048}"; then
    failed+=("$t")
  fi
done
if (( ${#failed[@]} )); then
  echo "fuzz.sh: failed: ${failed[*]} (build errors above, or reproducers under $build/fuzz-work/<target>/artifacts/)"
  exit 1
fi
echo "fuzz.sh: no findings in ${present[*]}"
