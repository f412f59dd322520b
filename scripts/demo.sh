#!/usr/bin/env bash
# Sets up, builds and runs dranet's main job on a bundled node snapshot
# (Azure ND GB300-v6 by default):
#   1. `dranetctl inspect`: the devices and attributes dranetd publishes;
#   2. `dranet-demo`: the real dranetd against a fake API server, kubelet and
#      NRI runtime — the node's claim templates are allocated, prepared over
#      the DRA gRPC API, their pods started over NRI, and what each container
#      receives (device nodes, env, GPU/NIC NUMA alignment) is printed.
#   scripts/demo.sh [SNAPSHOT EXAMPLES]
#     default: tests/nodes/nd-gb300-v6 packaging/examples/nd-gb300-v6
set -euo pipefail
cd "$(dirname "$0")/.."
snapshot=${1:-tests/nodes/nd-gb300-v6}
examples=${2:-packaging/examples/nd-gb300-v6}
if [[ -z "${SKIP_SETUP:-}" ]]; then bash scripts/setup.sh; fi
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build -j"$(nproc)" --target dranetctl dranetd dranet-demo \
  dranet-plugin-azure dranet-plugin-gcp dranet-plugin-nvidia dranet-plugin-amd
echo "== dranetctl inspect --host-root $snapshot"
build/bin/dranetctl inspect --host-root "$snapshot" | sed -n '1,/^$/p'
echo "== dranetctl simulate"
build/bin/dranetctl simulate --host-root "$snapshot" -f "$examples/claim-templates.yaml" \
  --gpu-slices "$examples/gpu-resourceslices.yaml" | grep -E '^template|^  [a-z]+: ' || true
echo "== dranet-demo: dranetd end to end with a fake API server, kubelet and NRI runtime"
build/tests/bin/dranet-demo --check --dranetd build/bin/dranetd --snapshot "$snapshot" \
  --templates "$examples/claim-templates.yaml" --gpu-slices "$examples/gpu-resourceslices.yaml"
