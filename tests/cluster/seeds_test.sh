#!/usr/bin/env bash
# A node type's own workflow on the node in a box, with kubectl only:
#
#   tests/cluster/seeds_test.sh BUILD_DIR RUN_DIR NODE_TYPE
#
# NODE_TYPE is a snapshot under tests/nodes/ with its templates under
# packaging/examples/ (nd-gb300-v6, nd-mi300x-v5, a4-highgpu-8g). On a fresh node:
#   1. gpu-standin, the test double of the GPU DRA driver, publishes the
#      node type's GPUs (packaging/examples/NODE_TYPE/gpu-resourceslices.yaml)
#      and prepares them as no-ops; its DeviceClass is created;
#   2. dranet is installed with `helm install` and the cloud's overlay values
#      (azure for ND, gcp for A4, with their plugin image), dranetd reading the
#      snapshot as its host root (a read-only hostPath volume); for A4 every
#      netdev the templates can take gets a stand-in on this machine (a veth
#      with the snapshot's MAC, MTU, address and routes, its peer in a router
#      network namespace of the test, and a peer host behind that router);
#   3. the node type's ResourceClaimTemplates are applied and, one at a time,
#      a pod per template listed in expected.yaml: the real scheduler
#      allocates GPU and NICs, the real kubelet prepares both drivers' claims,
#      containerd's NRI injects; seeds_check.py compares what the pod got with
#      expected.yaml (device nodes, env, netdevs, the allocation's NUMA nodes
#      and alignment); for A4 the pod reaches the peer host over gpu0rdma0;
#      the pod is deleted and its netdevs are back on the host as listed;
#   4. every request dranetd made is allowed by its ClusterRole; the node leaves
#      nothing behind.
# Exit 77 (skip) when the node cannot be built here, or when the snapshot's
# NIC subnets overlap this machine's routes (A4); needs root.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source_dir=$(cd "$here/../.." && pwd)
[[ $# -eq 3 ]] || { sed -n '2,6p' "$0" >&2; exit 2; }
build=$(cd "$1" && pwd)
run=$(realpath -m -- "$2")
node_type=$3
suite="seeds_test $node_type"
# shellcheck source=tests/cluster/box_lib.sh
source "$here/box_lib.sh"
examples=$source_dir/packaging/examples/$node_type
snapshot=$source_dir/tests/nodes/$node_type
[[ -f $examples/expected.yaml && -f $examples/gpu-resourceslices.yaml && -d $snapshot/sys ]] \
  || fail "no snapshot or examples for $node_type"
case $node_type in
  nd-*) cloud=azure ;;
  a4-*) cloud=gcp ;;
  *) fail "which cloud's overlay does $node_type use?" ;;
esac
box_up
box_images dranet "dranet-plugins-$cloud"
box_netdev_standins "$examples/expected.yaml"

driver=$(awk '$1 == "driver:" {print $2; exit}' "$examples/gpu-resourceslices.yaml")
log "1. gpu-standin stands in for $driver with the GPUs of $node_type"
k apply -f - >/dev/null <<EOF
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {name: $driver}
spec:
  selectors:
  - cel: {expression: 'device.driver == "$driver"'}
EOF
(
  cd "$run"  # node.sh down stops every process started here
  exec setsid "$K8S_BIN_DIR/gpu-standin" --slices "$examples/gpu-resourceslices.yaml" --driver-name "$driver" \
    --node-name "$NODE_NAME" --kubeconfig "$KUBECONFIG" </dev/null >>"$LOG_DIR/gpu-standin.log" 2>&1
) &
gpu_slice() {
  k get resourceslices -o jsonpath="{range .items[?(@.spec.driver=='$driver')]}{.spec.nodeName} {.spec.devices[*].name}{'\n'}{end}" \
    | grep "^$NODE_NAME "
}
for ((i = 0; i < 60; i++)); do gpu_slice >/dev/null && break; sleep 0.5; done
gpu_slice >/dev/null || { tail -20 "$LOG_DIR/gpu-standin.log" >&2; fail "gpu-standin published no slice"; }
log "   $(gpu_slice)"

log "2. helm install with the $cloud overlay, dranetd reading the $node_type snapshot"
box_install_on_snapshot "$cloud" "$snapshot"
for ((i = 0; i < 60; i++)); do
  published=$(k get resourceslices -o jsonpath="{range .items[?(@.spec.driver=='dra.net')]}{.spec.devices[*].name} {end}")
  [[ -n $published ]] && break
  sleep 0.5
done
[[ -n $published ]] || fail "dranet published no device"
log "   dra.net devices: $published"

log "3. the templates of packaging/examples/$node_type, one pod each"
k apply -f "$examples/claim-templates.yaml" >/dev/null
listed=$(python3 -c 'import sys, yaml; [print(c["template"]) for c in yaml.safe_load(open(sys.argv[1]))["spec"]["claims"]]' "$examples/expected.yaml") \
  || fail "cannot read the templates of $examples/expected.yaml"
mapfile -t templates <<<"$listed"
[[ -n ${templates[0]:-} ]] || fail "$examples/expected.yaml lists no template"
check() {
  python3 "$here/seeds_check.py" --expected "$examples/expected.yaml" --snapshot "$snapshot" --kubectl "$KUBECTL" \
    --ctr "$CTR" --containerd-socket "$CONTAINERD_SOCKET" "$@" >&2
}
for template in "${templates[@]}"; do
  pod=seed-$template
  box_pod "$pod" resourceClaimTemplateName "$template"
  k wait --for=condition=Ready "pod/$pod" --timeout=120s >&2 || fail "$pod did not start"
  check --template "$template" --pod "$pod" || fail "$pod did not get what expected.yaml lists"
  if [[ -n ${peer_netdev:-} ]] && k exec "$pod" -- ip -o link show "$peer_netdev" >/dev/null 2>&1; then
    k exec "$pod" -- ping -c 1 -W 2 "$peer_address" >/dev/null \
      || fail "$pod cannot reach the peer host $peer_address over $peer_netdev"
    log "   $pod reached the peer host $peer_address over $peer_netdev through the router"
  fi
  k delete pod "$pod" --wait=true --timeout=60s >/dev/null
  for ((i = 0; i < 50; i++)); do check --template "$template" --pod "$pod" --phase home >/dev/null 2>&1 && break; sleep 0.2; done
  check --template "$template" --pod "$pod" --phase home || fail "the netdevs of $pod are not home as listed"
done

log "4. least privilege; node.sh down leaves nothing behind"
box_audit --allow-unused
box_down
log "PASS"
