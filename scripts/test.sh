#!/usr/bin/env bash
# Sets up a bare Debian bookworm machine, builds dranet with warnings as
# errors, and runs every test through ctest. Run as root (or with sudo): the
# setup installs packages, and the network-namespace tests need root (they
# skip cleanly without it).
#   scripts/test.sh              # setup + build + all tests
#   SKIP_SETUP=1 scripts/test.sh # reuse installed packages
set -euo pipefail
cd "$(dirname "$0")/.."
if [[ -z "${SKIP_SETUP:-}" ]]; then bash scripts/setup.sh; fi
build=${BUILD_DIR:-build}
cmake -S . -B "$build" -DDRANET_WERROR=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo
cmake --build "$build" -j"$(nproc)"
ctest --test-dir "$build" --output-on-failure -j"$(nproc)" --timeout 900
