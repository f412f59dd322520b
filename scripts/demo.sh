#!/usr/bin/env bash
# Sets up, builds, and runs dranet's main job on a bundled node snapshot:
# what the driver would publish on an Azure ND GB300-v6 node.
#   scripts/demo.sh [SNAPSHOT]     (default tests/nodes/nd-gb300-v6)
set -euo pipefail
cd "$(dirname "$0")/.."
if [[ -z "${SKIP_SETUP:-}" ]]; then bash scripts/setup.sh; fi
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build -j"$(nproc)" --target dranetctl dranetd \
  dranet-plugin-azure dranet-plugin-gcp dranet-plugin-nvidia dranet-plugin-amd
build/bin/dranetctl inspect --host-root "${1:-tests/nodes/nd-gb300-v6}"
