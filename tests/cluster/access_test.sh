#!/usr/bin/env bash
# Admin access and prioritized lists on the node in a box:
#
#   tests/cluster/access_test.sh BUILD_DIR RUN_DIR
#
# On a fresh node, dranet installed with `helm install` and the gcp overlay,
# dranetd reading the A4 snapshot, each of its netdevs a stand-in veth with a
# router and a peer host behind it (box_netdev_standins):
#   1. pod holder takes gpu0rdma0 and reaches the peer host over it;
#   2. a claim with adminAccess is refused by the API server in a namespace
#      without the label resource.kubernetes.io/admin-access=true;
#   3. in namespace watchers (labelled), pod watcher's claim asks gpu0rdma0
#      with adminAccess: the scheduler allocates it beside holder's claim,
#      dranetd prepares it read-only (claim status Ready/AdminAccessReady):
#      watcher runs with DRANET_ADMIN_* naming the device, its RDMA device
#      and its netdev, and has neither the netdev nor any /dev/infiniband
#      node; holder keeps gpu0rdma0 and still reaches the peer host, before
#      and after watcher is deleted;
#   4. a template whose request `nics` prefers `pair` (2 NICs on one NUMA
#      node, matchAttribute dra.net/numaNode) and falls back to `single`
#      (1 NIC), with a config for each subrequest (MTU 4000 for nics/pair,
#      2000 for nics/single), among gpu1rdma0 and gpu2rdma0 (NUMA 0) and
#      gpu4rdma0 (NUMA 1): pod pair-a gets gpu1rdma0 and gpu2rdma0 as
#      nics/pair at MTU 4000; pod pair-b, with only gpu4rdma0 left, gets it
#      as nics/single at MTU 2000;
#   5. every request dranetd made is allowed by its ClusterRole; the node
#      leaves nothing behind.
# Kubernetes 1.34 serves both (DRAAdminAccess and DRAPrioritizedList beta,
# on), so the same steps pass there. Exit 77 (skip) when the node cannot be
# built here, or when the snapshot's NIC subnets overlap this machine's
# routes; needs root.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source_dir=$(cd "$here/../.." && pwd)
[[ $# -eq 2 ]] || { sed -n '2,5p' "$0" >&2; exit 2; }
build=$(cd "$1" && pwd)
run=$(realpath -m -- "$2")
suite=access_test
# shellcheck source=tests/cluster/box_lib.sh
source "$here/box_lib.sh"
node_type=a4-highgpu-8g
snapshot=$source_dir/tests/nodes/$node_type

box_up
box_images dranet dranet-plugins-gcp
box_netdev_standins "$source_dir/packaging/examples/$node_type/expected.yaml"
[[ ${peer_netdev:-} == gpu0rdma0 ]] || fail "the peer host is not behind gpu0rdma0 but ${peer_netdev:-nothing}"

log "1. helm install with the gcp overlay on the $node_type snapshot; pod holder takes gpu0rdma0"
box_install_on_snapshot gcp "$snapshot"
box_template holder 1 'device.attributes["dra.net"].ifName == "gpu0rdma0"'
box_pod holder resourceClaimTemplateName holder
k wait --for=condition=Ready pod/holder --timeout=120s >&2 || fail "holder did not start"
holder_reaches_peer() {
  k exec holder -- ip -o link show gpu0rdma0 >/dev/null 2>&1 || fail "gpu0rdma0 is not in holder $1"
  k exec holder -- ping -c 1 -W 2 "$peer_address" >/dev/null || fail "holder cannot reach $peer_address $1"
  log "   holder has gpu0rdma0 and reaches the peer host $peer_address $1"
}
holder_reaches_peer "before anyone watches"

# watch_template NAMESPACE: a template asking gpu0rdma0 with adminAccess.
watch_template() {
  BOX_NAMESPACE=$1 BOX_ADMIN_ACCESS=true box_template watch 1 'device.attributes["dra.net"].ifName == "gpu0rdma0"'
}

log "2. adminAccess in a namespace without the admin-access label"
refusal=$(watch_template default 2>&1) && fail "the API server took an adminAccess template in namespace default"
[[ $refusal == *"resource.kubernetes.io/admin-access"* ]] || fail "refused for another reason: $refusal"
log "   refused: $(grep -o 'admin access to devices requires[^"]*' <<<"$refusal" | head -1)"

log "3. pod watcher in namespace watchers (labelled) asks gpu0rdma0 with adminAccess"
k create namespace watchers >/dev/null
k label namespace watchers resource.kubernetes.io/admin-access=true >/dev/null
watch_template watchers
box_sleeper watchers watcher "{claims: [{name: devices}]}" "[{name: devices, resourceClaimTemplateName: watch}]"
k -n watchers wait --for=condition=Ready pod/watcher --timeout=120s >&2 || fail "watcher did not start"
holder_claim=$(k get pod holder -o jsonpath='{.status.resourceClaimStatuses[0].resourceClaimName}')
watch_claim=$(k -n watchers get pod watcher -o jsonpath='{.status.resourceClaimStatuses[0].resourceClaimName}')
device=$(k get resourceclaim "$holder_claim" -o jsonpath='{.status.allocation.devices.results[0].device}')
rdma=$(ls "$snapshot/sys/class/net/gpu0rdma0/device/infiniband")
k -n watchers get resourceclaim "$watch_claim" -o json | python3 -c '
import json, sys
status = json.load(sys.stdin)["status"]
results = status["allocation"]["devices"]["results"]
assert [(r["device"], r.get("adminAccess")) for r in results] == [(sys.argv[1], True)], results
devices = status.get("devices") or []
ready = [(c["type"], c["status"], c["reason"]) for d in devices if d["device"] == sys.argv[1] for c in d["conditions"]]
assert ready == [("Ready", "True", "AdminAccessReady")], devices
assert not any(d.get("networkData") for d in devices), devices
print("   claim %s: %s allocated with adminAccess, Ready/AdminAccessReady, no network data" % (sys.argv[2], sys.argv[1]))' \
  "$device" "$watch_claim" >&2 || fail "watcher's claim $watch_claim is not what adminAccess should give"
watcher_env=$(k -n watchers exec watcher -- env)
for want in "DRANET_ADMIN_DEVICES=$device" "DRANET_ADMIN_RDMA_DEVICES=$rdma" "DRANET_ADMIN_NETDEVS=gpu0rdma0"; do
  grep -qx "$want" <<<"$watcher_env" || fail "watcher lacks $want: $(grep DRANET_ <<<"$watcher_env" | tr '\n' ' ')"
done
log "   watcher's env: $(grep '^DRANET_ADMIN_' <<<"$watcher_env" | tr '\n' ' ')"
! k -n watchers exec watcher -- ip -o link show gpu0rdma0 >/dev/null 2>&1 || fail "gpu0rdma0 moved into watcher"
! k -n watchers exec watcher -- ls /dev/infiniband >/dev/null 2>&1 || fail "watcher got /dev/infiniband nodes"
log "   watcher has neither gpu0rdma0 nor /dev/infiniband"
holder_reaches_peer "while watcher runs"
k -n watchers delete pod watcher --wait=true --timeout=60s >/dev/null
holder_reaches_peer "after watcher is gone"

log "4. firstAvailable: nics/pair (2 NICs, one NUMA node) or nics/single, a config for each"
k apply -f - >/dev/null <<'EOF'
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata: {name: pair-or-one, namespace: default}
spec:
  spec:
    devices:
      requests:
      - name: nics
        firstAvailable:
        - name: pair
          deviceClassName: dranet
          count: 2
          selectors:
          - cel: {expression: 'device.attributes["dra.net"].ifName in ["gpu1rdma0", "gpu2rdma0", "gpu4rdma0"]'}
        - name: single
          deviceClassName: dranet
          count: 1
          selectors:
          - cel: {expression: 'device.attributes["dra.net"].ifName in ["gpu1rdma0", "gpu2rdma0", "gpu4rdma0"]'}
      constraints:
      - requests: [nics/pair]
        matchAttribute: dra.net/numaNode
      config:
      - requests: [nics/pair]
        opaque: {driver: dra.net, parameters: {interface: {mtu: 4000}}}
      - requests: [nics/single]
        opaque: {driver: dra.net, parameters: {interface: {mtu: 2000}}}
EOF
# allocated POD: "REQUEST=IFNAME@MTU ..." for each device of its claim, sorted,
# with the MTU the netdev has inside the pod.
allocated() {
  local claim line out=() request dev ifname mtu
  claim=$(k get pod "$1" -o jsonpath='{.status.resourceClaimStatuses[0].resourceClaimName}')
  while read -r request dev; do
    ifname=$(k get resourceslices -o json | python3 -c '
import json, sys
for s in json.load(sys.stdin)["items"]:
    for d in s["spec"].get("devices", []):
        if s["spec"]["driver"] == "dra.net" and d["name"] == sys.argv[1]:
            print(d["attributes"]["dra.net/ifName"]["string"])' "$dev")
    mtu=$(k exec "$1" -- cat "/sys/class/net/$ifname/mtu" 2>/dev/null) || mtu=absent
    out+=("$request=$ifname@$mtu")
  done < <(k get resourceclaim "$claim" -o jsonpath='{range .status.allocation.devices.results[*]}{.request} {.device}{"\n"}{end}')
  printf '%s\n' "${out[@]}" | sort | tr '\n' ' ' | sed 's/ $//'
}
box_pod pair-a resourceClaimTemplateName pair-or-one
k wait --for=condition=Ready pod/pair-a --timeout=120s >&2 || fail "pair-a did not start"
got=$(allocated pair-a)
[[ $got == "nics/pair=gpu1rdma0@4000 nics/pair=gpu2rdma0@4000" ]] || fail "pair-a got: $got"
log "   pair-a: $got"
box_pod pair-b resourceClaimTemplateName pair-or-one
k wait --for=condition=Ready pod/pair-b --timeout=120s >&2 || fail "pair-b did not start"
got=$(allocated pair-b)
[[ $got == "nics/single=gpu4rdma0@2000" ]] || fail "pair-b got: $got"
log "   pair-b: $got"
k delete pod holder pair-a pair-b --wait=true --timeout=60s >/dev/null

log "5. least privilege; nothing left behind"
box_audit --allow-unused
box_down
log "PASS"
