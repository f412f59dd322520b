#!/usr/bin/env bash
# dranetd from exec to its first inventory (flags, plugin load and init,
# discovery, one annotate pass; --once exits there) on a node snapshot, with
# and without the five cloud plugins, in one run: median/min/max of N runs.
# On a node that is on no cloud the difference is what cloud detection costs
# at start (DMI reads only; no metadata request is made).
#   bench/dranetd_start.sh [BUILD_DIR] [SNAPSHOT] [N]
set -euo pipefail
build=${1:-build} node=${2:-tests/nodes/baremetal-2cx7} n=${3:-21}
for mode in with without; do
  deny=()
  [[ $mode == without ]] && deny=(--plugin-deny=alibaba,aws,azure,gcp,oci)
  for _ in $(seq "$n"); do
    start=$(date +%s%N)
    "$build/bin/dranetd" --once --publish=false --kubelet-plugin=false --nri=false --metrics-address=off \
      --host-root "$node" --plugin-config=nvidia.nvml=off --plugin-config=amd.rocm-smi=off "${deny[@]}" >/dev/null 2>&1
    echo $(( ($(date +%s%N) - start) / 1000 ))
  done | sort -n | awk -v mode="$mode" '{t[NR] = $1} END {
    printf "%s cloud plugins: median %.1f ms (min %.1f, max %.1f), n=%d\n", mode, t[int((NR + 1) / 2)] / 1000,
           t[1] / 1000, t[NR] / 1000, NR}'
done
echo "load: $(cut -d' ' -f1-3 /proc/loadavg)"
