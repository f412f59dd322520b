#!/usr/bin/env bash
# A node type's workflow on a real Kubernetes on this machine, in one command
# (root, a fresh Debian bookworm machine with Go 1.26 and the Go module proxy):
#
#   scripts/cluster-demo.sh [NODE_TYPE]      nd-gb300-v6 (default), nd-mi300x-v5, a4-highgpu-8g
#
# Installs the dependencies (scripts/setup.sh; SKIP_SETUP=1 skips it), builds
# dranet, builds Kubernetes v1.37, containerd 2 and Helm from their Go modules
# (cached; about 15 minutes the first time on 2 cores), starts a one-node
# cluster, installs dranet with Helm on the node type's snapshot beside a test
# double of the GPU driver, and runs the node type's claim templates with
# kubectl, one pod each, comparing what each pod received with
# packaging/examples/NODE_TYPE/expected.yaml. Then it stops the node and
# leaves nothing behind (tests/cluster/seeds_test.sh; tests/cluster/README.md).
set -euo pipefail
cd "$(dirname "$0")/.."
node_type=${1:-nd-gb300-v6}
[[ -d tests/nodes/$node_type && -f packaging/examples/$node_type/expected.yaml ]] \
  || { echo "cluster-demo: no snapshot and expected.yaml for $node_type" >&2; exit 2; }
if [[ -z "${SKIP_SETUP:-}" ]]; then bash scripts/setup.sh; fi
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
# The images are made from `cmake --install` of the whole tree.
cmake --build build -j"$(nproc)"
bash tests/cluster/seeds_test.sh build "${TMPDIR:-/tmp}/dranet-cluster-demo" "$node_type"
