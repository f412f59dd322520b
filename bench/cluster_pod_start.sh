#!/usr/bin/env bash
# dranet's share of a real pod start, on the node in a box (tests/cluster:
# kube-apiserver, scheduler, controller-manager and kubelet v1.37.2 built from
# their modules, containerd 2 with NRI): pod create -> Running seen by a watch,
# one pod at a time, PODS per case (default 50), all in one run:
#
#   no-dranet           dranet not installed; a pod without claims
#   no-claim            dranet installed (helm, GCP overlay) on the A4 snapshot
#                       with stand-in veths for its netdevs; a pod without claims
#   a4-1-netdev         a claim for gpu0rdma0, moved into the pod
#   a4-8-netdevs        a claim for gpu0rdma0 ... gpu7rdma0
#   gb300-char-devices  dranet reinstalled (Azure overlay) on the GB300
#                       snapshot; a claim for mlx5_0 (its /dev/infiniband nodes)
#
#   bench/cluster_pod_start.sh BUILD_DIR [PODS]     (root; Go 1.26 and the module proxy)
#
# Prints a table: p50/p99 per case, what each adds to no-dranet, the kubelet's
# own DRA prepare latency, the load; the raw starts go to
# BUILD_DIR/bench-cluster-pod-start.jsonl.
set -euo pipefail
bench=$(cd "$(dirname "$0")" && pwd)
source_dir=$(cd "$bench/.." && pwd)
here=$source_dir/tests/cluster
[[ $# -ge 1 && $# -le 2 ]] || { sed -n '2,20p' "$0" >&2; exit 2; }
build=$(cd "$1" && pwd)
pods=${2:-50}
run=/tmp/dranet-cluster-node
suite=cluster_pod_start
# shellcheck source=tests/cluster/box_lib.sh
source "$here/box_lib.sh"
out=$build/bench-cluster-pod-start.jsonl
: >"$out"
measure() {
  python3 "$bench/cluster_pod_start.py" run --kubeconfig "$KUBECONFIG" --node "$NODE_NAME" --pods "$pods" \
    --image "$BUSYBOX_IMAGE" --out "$out" "$@"
}
helm_bin() { "$(bash "$source_dir/scripts/go_tool.sh" helm)/helm" "$@"; }

box_up
box_images dranet dranet-plugins-gcp dranet-plugins-azure
box_netdev_standins "$source_dir/packaging/examples/a4-highgpu-8g/expected.yaml"

log "no-dranet: $pods pods"
measure --case no-dranet

snapshot=$source_dir/tests/nodes/a4-highgpu-8g
log "dranet on the A4 snapshot"
box_install helm -f "$source_dir/packaging/deploy/overlays/gcp/values.yaml" --set "flags.hostRoot=$snapshot" \
  --set-json "extraVolumes=[{\"name\":\"snapshot\",\"hostPath\":{\"path\":\"$snapshot\",\"type\":\"Directory\"}}]" \
  --set-json "extraVolumeMounts=[{\"name\":\"snapshot\",\"mountPath\":\"$snapshot\",\"readOnly\":true}]"
box_wait_slice_lists pci-0000-09-00-0
box_template a4-one 1 'device.attributes["dra.net"].ifName == "gpu0rdma0"'
box_template a4-eight 8 'device.attributes["dra.net"].rdma && device.attributes["dra.net"].ifName.startsWith("gpu")'
measure --case no-claim
measure --case a4-1-netdev --template a4-one --netdevs gpu0rdma0
measure --case a4-8-netdevs --template a4-eight \
  --netdevs gpu0rdma0,gpu1rdma0,gpu2rdma0,gpu3rdma0,gpu4rdma0,gpu5rdma0,gpu6rdma0,gpu7rdma0

snapshot=$source_dir/tests/nodes/nd-gb300-v6
log "dranet again, on the GB300 snapshot"
helm_bin uninstall dranet --namespace kube-system --kubeconfig "$KUBECONFIG" --wait >/dev/null
box_install helm -f "$source_dir/packaging/deploy/overlays/azure/values.yaml" --set "flags.hostRoot=$snapshot" \
  --set-json "extraVolumes=[{\"name\":\"snapshot\",\"hostPath\":{\"path\":\"$snapshot\",\"type\":\"Directory\"}}]" \
  --set-json "extraVolumeMounts=[{\"name\":\"snapshot\",\"mountPath\":\"$snapshot\",\"readOnly\":true}]"
box_wait_slice_lists pci-0101-00-00-0
box_template gb300-one 1 'device.attributes["dra.net"].rdmaDevice == "mlx5_0"'
measure --case gb300-char-devices --template gb300-one

box_down
echo "Pod create -> Running on the node in a box ($(nproc) cores), $pods pods per case, $(date -u +%F):"
python3 "$bench/cluster_pod_start.py" table "$out" no-dranet
