#!/usr/bin/env bash
# Discovery time against the number of SR-IOV VFs: synthetic nodes of 8 PFs
# with 8, 32, 64 and 128 VFs each (64, 256, 512 and 1024 VFs) are generated
# into a temporary directory (tests/nodes/generate.py --sriov-scale) and
# discovered in one run of build/bench/discovery_bench. Prints each median
# and the time per network function, which stays flat when discovery is
# linear. Budget (docs/architecture.md): 8 PFs + 512 VFs within 50 ms.
#   bench/discovery_scale.sh [BUILD_DIR] [REPETITIONS]
set -euo pipefail
build=${1:-build} repetitions=${2:-9}
here=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d /tmp/dranet-discovery-scale.XXXXXX)
trap 'rm -rf "$work"' EXIT
snapshots=()
for vfs_per_pf in 8 32 64 128; do
  python3 "$here/tests/nodes/generate.py" --sriov-scale "$vfs_per_pf" "$work"
  snapshots+=("$work/sriov-8pf-${vfs_per_pf}vf")
done
list=$(IFS=,; echo "${snapshots[*]}")
DRANET_DISCOVERY_SNAPSHOTS="$list" "$build/bench/discovery_bench" --benchmark_filter='sriov-8pf-' \
  --benchmark_repetitions="$repetitions" --benchmark_report_aggregates_only=true --benchmark_format=csv 2>/dev/null |
  awk -F, '$1 ~ /_median"?$/ {
    name = $1; gsub(/"/, "", name); sub(/_median$/, "", name)
    split(name, parts, "-"); vfs = parts[3]; sub(/vf$/, "", vfs); functions = 8 + 8 * vfs
    printf "%-32s %4d VFs  median %7.2f ms  %6.1f us per network function\n", name, 8 * vfs, $3,
           ($3 * 1000 / functions)
  }'
echo "load: $(cut -d' ' -f1-3 /proc/loadavg)"
