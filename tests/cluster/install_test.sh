#!/usr/bin/env bash
# dranet installed on the real node in a box (node.sh) as a user installs it:
# its images made by packaging/images/oci-image.sh and imported into the
# node's containerd, then `kubectl apply -f packaging/install.yaml` unchanged,
# or `helm install` of packaging/helm/dranet (Helm built from its Go module by
# scripts/go_tool.sh), each on a fresh node.
#
#   tests/cluster/install_test.sh BUILD_DIR RUN_DIR kubectl|helm
#
# Checks, against the real kube-apiserver, kube-scheduler, kube-controller-manager
# and kubelet:
#   1. the DaemonSet's pod becomes Ready with its ServiceAccount and ClusterRole
#      only, registers with the kubelet and publishes a ResourceSlice the API
#      server accepts;
#   2. a pod whose claim template selects a test netdev with CEL gets it moved
#      into its network namespace (the real scheduler allocated it, the real
#      kubelet prepared it through dranet, containerd's NRI injected it), the
#      claim's status.devices carries its networkData, written under the real
#      apiserver's validation and authorization;
#   3. `kubectl delete pod` brings the netdev home with its name and MAC;
#   4. a claim whose configuration prepare refuses leaves the pod waiting
#      with a Warning Event on the claim, and the netdev on the host;
#   5. a ResourceSlice someone else put in dranet's pool is deleted;
#   6. least privilege, from the API server's audit log: every request
#      dranetd made is allowed by its ClusterRole (none answered 403), and
#      every rule verb was used or is one audit_check.py names as rare;
#   7. `node.sh down` leaves nothing: no process, mount, address, link or
#      directory of the run.
# Exit 77 (skip) when the node cannot be built here (no Go, no module proxy,
# no Debian archive); needs root.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source_dir=$(cd "$here/../.." && pwd)
[[ $# -eq 3 && $3 =~ ^(kubectl|helm)$ ]] || { sed -n '2,10p' "$0" >&2; exit 2; }
build=$(cd "$1" && pwd)
run=$(realpath -m -- "$2")
how=$3
suite=install_test
# shellcheck source=tests/cluster/box_lib.sh
source "$here/box_lib.sh"
readonly NIC=dnbox0 NIC_MAC=02:00:0a:e9:00:aa

box_up
box_images
box_nic "$NIC" "$NIC_MAC"

if [[ $how == kubectl ]]; then
  log "1. kubectl apply -f packaging/install.yaml"
else
  log "1. helm install dranet packaging/helm/dranet"
fi
box_install "$how"
box_wait_slice_lists "$NIC"
log "   DaemonSet Ready; ResourceSlice of $NODE_NAME lists $NIC"

log "2. a pod claims $NIC through a ResourceClaimTemplate (CEL on dra.net/ifName)"
box_nic_pod box-pod "$NIC" 10.234.0.2/24
k wait --for=condition=Ready pod/box-pod --timeout=120s >&2 || fail "box-pod did not start"
box_pod_has_nic box-pod 10.234.0.2/24
ip link show "$NIC" >/dev/null 2>&1 && fail "$NIC is still on the host while box-pod holds it"
claim=$(k get pod box-pod -o jsonpath='{.status.resourceClaimStatuses[0].resourceClaimName}')
status_json=$(k get resourceclaim "$claim" -o jsonpath='{.status.devices}')
grep -q '"driver":"dra.net"' <<<"$status_json" && grep -q '"interfaceName":"net1"' <<<"$status_json" \
  || fail "claim $claim has no status.devices entry with networkData for net1: $status_json"
log "   $NIC is net1 in box-pod (10.234.0.2/24, MTU 1400); claim status: $status_json"

log "3. kubectl delete pod: $NIC comes home"
k delete pod box-pod --wait=true --timeout=60s >/dev/null
box_nic_home "$NIC" "$NIC_MAC"
log "   $NIC is back on the host with its MAC"

log "4. a claim prepare refuses (interface name \"all\"): Warning Event, the pod waits, $NIC stays"
box_nic_template box-refused "$NIC" "{name: all}"
box_pod box-refused resourceClaimTemplateName box-refused
warning=""
for ((i = 0; i < 120; i++)); do
  warning=$(k get events -n default -o jsonpath='{range .items[?(@.type=="Warning")]}{.involvedObject.kind}/{.involvedObject.name} {.reason}: {.message}{"\n"}{end}' \
              | grep '^ResourceClaim/box-refused-' || true)
  [[ -n $warning ]] && break
  sleep 0.5
done
[[ -n $warning ]] || fail "no Warning Event on claim box-refused"
grep -qF 'interface.name: "all"' <<<"$warning" || fail "the Warning Event does not name the refused value: $warning"
[[ $(k get pod box-refused -o jsonpath='{.status.phase}') == Pending ]] || fail "box-refused is not Pending"
ip link show "$NIC" >/dev/null 2>&1 || fail "$NIC left the host for a claim prepare refused"
log "   $(head -1 <<<"$warning")"
k delete pod box-refused --wait=true --timeout=60s >/dev/null
k delete resourceclaimtemplate box-refused >/dev/null

log "5. a ResourceSlice another writer put in dranet's pool is deleted"
pool=$(k get resourceslices -o jsonpath="{range .items[?(@.spec.nodeName=='$NODE_NAME')]}{.spec.driver} {.spec.pool.name} {.spec.pool.generation}{'\n'}{end}" \
         | awk '$1 == "dra.net" {print $2, $3; exit}')
read -r pool_name pool_generation <<<"$pool"
[[ -n $pool_name ]] || fail "no dra.net pool of $NODE_NAME"
k create -f - >/dev/null <<EOF
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: box-stray-slice}
spec:
  driver: dra.net
  nodeName: $NODE_NAME
  pool: {name: "$pool_name", generation: $pool_generation, resourceSliceCount: 1}
  devices: [{name: stray0}]
EOF
for ((i = 0; i < 100; i++)); do
  k get resourceslice box-stray-slice >/dev/null 2>&1 || break
  sleep 0.2
done
k get resourceslice box-stray-slice >/dev/null 2>&1 && fail "the stray slice in pool $pool_name was not deleted"
box_slice_lists "$NIC" || fail "dranet's own slice lost $NIC"
log "   deleted; dranet's slice still lists $NIC"

log "6. least privilege: dranetd's requests against its ClusterRole"
box_audit

log "7. node.sh down leaves nothing behind"
box_down
log "PASS ($how)"
