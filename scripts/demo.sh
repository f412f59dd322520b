#!/usr/bin/env bash
# Sets up, builds and runs dranet's main job on a bundled node snapshot
# (Azure ND GB300-v6 by default):
#   1. `dranetctl inspect`: the devices and attributes dranetd publishes;
#   2. `dranetctl simulate`: how the node's claim templates allocate;
#   3. `dranet-demo`: the real dranetd against a fake API server, kubelet and
#      NRI runtime — the node's claim templates are allocated, prepared over
#      the DRA gRPC API, their pods started over NRI, and what each container
#      receives (device nodes, env, GPU/NIC NUMA alignment) is printed. As
#      root the snapshot's netdevs get real stand-ins (veths in a private
#      network namespace) that dranetd moves into each pod's own network
#      namespace and back; without root that part is skipped (said so).
# All three use the flags the node type's deployment gives dranetd
# (packaging/deploy/overlays/<cloud>: e.g. IPoIB skipped on AKS).
#   scripts/demo.sh [SNAPSHOT EXAMPLES]
#     default: tests/nodes/nd-gb300-v6 packaging/examples/nd-gb300-v6
set -euo pipefail
cd "$(dirname "$0")/.."
snapshot=${1:-tests/nodes/nd-gb300-v6}
examples=${2:-packaging/examples/nd-gb300-v6}
if [[ -z "${SKIP_SETUP:-}" ]]; then bash scripts/setup.sh; fi
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build -j"$(nproc)" --target dranetctl dranetd dranet-demo \
  dranet-plugin-azure dranet-plugin-gcp dranet-plugin-aws dranet-plugin-oci dranet-plugin-alibaba \
  dranet-plugin-nvidia dranet-plugin-amd
# The snapshot's cloud (its recorded metadata) picks the overlay, as in dranet-demo.
cloud=generic
[[ -d $snapshot/metadata/azure ]] && cloud=azure
[[ -d $snapshot/metadata/gce ]] && cloud=gcp
[[ -d $snapshot/metadata/aws ]] && cloud=aws
[[ -d $snapshot/metadata/oci ]] && cloud=oci
[[ -d $snapshot/metadata/alibaba ]] && cloud=alibaba
overlay=packaging/deploy/overlays/$cloud/daemonset-patch.yaml
ctl_flags=()
if [[ -f $overlay ]]; then
  if grep -q -- '- --move-ib-interfaces=false' "$overlay"; then ctl_flags+=(--skip-ipoib); fi
  while read -r flag; do ctl_flags+=("$flag"); done < <(grep -oE -- '--plugin-config=[^ "]+' "$overlay" || true)
fi
echo "== dranetctl inspect --host-root $snapshot ${ctl_flags[*]:-}"
build/bin/dranetctl inspect --host-root "$snapshot" ${ctl_flags[@]+"${ctl_flags[@]}"} | sed -n '1,/^$/p'
echo "== dranetctl simulate"
build/bin/dranetctl simulate --host-root "$snapshot" ${ctl_flags[@]+"${ctl_flags[@]}"} \
  -f "$examples/claim-templates.yaml" --gpu-slices "$examples/gpu-resourceslices.yaml" |
  grep -E '^template|^  [a-z]+: ' || true
echo "== dranet-demo: dranetd end to end with a fake API server, kubelet and NRI runtime"
build/tests/bin/dranet-demo --check --dranetd build/bin/dranetd --snapshot "$snapshot" \
  --templates "$examples/claim-templates.yaml" --gpu-slices "$examples/gpu-resourceslices.yaml"
