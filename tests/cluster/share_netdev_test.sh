#!/usr/bin/env bash
# Several pods share one RoCE netdev (consumable capacity), each through an
# IPVLAN child of its own, on the node in a box:
#
#   tests/cluster/share_netdev_test.sh BUILD_DIR RUN_DIR
#
# On a fresh node, dranet installed with `helm install` and the gcp overlay,
# dranetd reading the A4 snapshot, each of its netdevs a stand-in veth with a
# router and a peer host behind it (box_netdev_standins), --shared-devices
# selecting gpu0rdma0 and --device-shares=2:
#   1. the slice publishes gpu0rdma0's device with allowMultipleAllocations
#      and dra.net/shares 2; the other netdevs without;
#   2. pods child-a and child-b, each with a claim of its own (a template
#      each) asking a share of it with an address of its own (192.168.1.40
#      and .41) and the routes to the peer's subnet: both Running; each has an IPVLAN child
#      named net1 with its address and the HCA's char devices, reaches the
#      peer host over it, and does not see the other's address; the claims
#      carry distinct shareIDs, and each status is Ready/NetworkDeviceReady
#      with the child's name and address; gpu0rdma0 stays on the node with
#      its own address;
#   3. a third share stays Pending;
#   4. child-a deleted: child-b still reaches the peer; child-b deleted: the
#      node's gpu0rdma0 is as it was before the pods; the same with the pods
#      deleted in the other order;
#   5. every request dranetd made is allowed by its ClusterRole; the node
#      leaves nothing behind.
# The children are IPVLAN, a share's default; on a kernel without the IPVLAN
# driver the claims ask for macvlan children instead, and the log says so.
# Consumable capacity is Kubernetes 1.36+; on an older node the suite is
# skipped. Exit 77 (skip) when the node cannot be built here, or when the
# snapshot's NIC subnets overlap this machine's routes; needs root.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source_dir=$(cd "$here/../.." && pwd)
[[ $# -eq 2 ]] || { sed -n '2,5p' "$0" >&2; exit 2; }
build=$(cd "$1" && pwd)
run=$(realpath -m -- "$2")
suite=share_netdev_test
# shellcheck source=tests/cluster/box_lib.sh
source "$here/box_lib.sh"
node_type=a4-highgpu-8g
snapshot=$source_dir/tests/nodes/$node_type

box_up
minor=$(k version -o json | python3 -c 'import json, sys; print(int(json.load(sys.stdin)["serverVersion"]["minor"].rstrip("+")))')
((minor >= 36)) || { log "skipped: consumable capacity needs Kubernetes 1.36 or later, the node is 1.$minor"; box_down; exit 77; }
box_images dranet dranet-plugins-gcp
box_netdev_standins "$source_dir/packaging/examples/$node_type/expected.yaml"
[[ ${peer_netdev:-} == gpu0rdma0 ]] || fail "the peer host is not behind gpu0rdma0 but ${peer_netdev:-nothing}"
# The kind of child this kernel makes: IPVLAN (the default) or else macvlan.
kind=ipvlan type_field=""
ip link add dnprobe0 type veth peer name dnprobe1
if ! ip link add link dnprobe0 name dnprobe2 type ipvlan 2>/dev/null; then
  kind=macvlan type_field="type: macvlan, "
  log "this kernel has no IPVLAN driver (CONFIG_IPVLAN): the claims ask for macvlan children"
fi
ip link del dnprobe0
# What the node's gpu0rdma0 is before any pod: compared after each round.
host_gpu0() { ip -o link show gpu0rdma0 | sed 's/ qdisc.*//'; ip -o addr show dev gpu0rdma0 | awk '{print $4}'; ip route show dev gpu0rdma0; ip -o link show type ipvlan; }
before=$(host_gpu0)
node_address=$(ip -o -4 addr show dev gpu0rdma0 | awk '{print $4}')
gateway=$(ip route show dev gpu0rdma0 scope link | awk '{print $1; exit}')
subnet=$(ip route show dev gpu0rdma0 | awk '/ via /{print $1; exit}')

log "1. helm install with the gcp overlay, gpu0rdma0 shared by 2"
box_install_on_snapshot gcp "$snapshot" \
  --set-string 'flags.sharedDevices=device.attributes["dra.net"].ifName == "gpu0rdma0"' \
  --set flags.deviceShares=2
shared_device() {
  k get resourceslices -o json | python3 -c '
import json, sys
shared = [d for s in json.load(sys.stdin)["items"] if s["spec"]["driver"] == "dra.net"
          for d in s["spec"]["devices"] if d.get("allowMultipleAllocations")]
assert len(shared) == 1, [d["name"] for d in shared]
d = shared[0]
assert d["attributes"]["dra.net/ifName"]["string"] == "gpu0rdma0", d["attributes"]
assert d["capacity"]["dra.net/shares"]["value"] == "2", d["capacity"]
print(d["name"])' 2>/dev/null
}
for ((i = 0; i < 60; i++)); do device=$(shared_device) && break; sleep 0.5; done
[[ -n ${device:-} ]] || fail "the slice does not publish gpu0rdma0 alone as shared by 2: $(k get resourceslices -o yaml | head -80)"
log "   $device (gpu0rdma0): allowMultipleAllocations, dra.net/shares 2"

# share_template NAME ADDRESS: a template for a share of gpu0rdma0 whose
# child has ADDRESS, an on-link route to the gateway and the subnet via it.
share_template() {
  box_template "$1" 1 'device.allowMultipleAllocations && device.attributes["dra.net"].ifName == "gpu0rdma0"' \
    "{${type_field}name: net1, addresses: [\"$2/32\"]}" \
    "[{destination: \"$gateway/32\", scope: 253}, {destination: \"$subnet\", gateway: \"$gateway\"}]"
}
# The router returns to each child's address over gpu0rdma0's veth.
ip -n "$ROUTER" route add 192.168.1.40 dev r0
ip -n "$ROUTER" route add 192.168.1.41 dev r0
share_template child-a 192.168.1.40
share_template child-b 192.168.1.41
share_template child-c 192.168.1.42

# has_child POD ADDRESS OTHER: net1 a child of the node's gpu0rdma0 (its
# iflink the netdev's ifindex; the netdev's MAC for IPVLAN, another for
# macvlan) with ADDRESS and without OTHER, the HCA's char devices, and the
# peer host reached over net1.
has_child() {
  local link addrs iflink mac
  link=$(k exec "$1" -- ip -o link show net1 2>&1) || fail "net1 is not in $1: $link"
  iflink=$(k exec "$1" -- cat /sys/class/net/net1/iflink)
  [[ $iflink == "$(cat /sys/class/net/gpu0rdma0/ifindex)" ]] || fail "net1 in $1 is not a child of gpu0rdma0: $link"
  mac=$(k exec "$1" -- cat /sys/class/net/net1/address)
  if [[ $kind == ipvlan ]]; then
    [[ $mac == "$(cat /sys/class/net/gpu0rdma0/address)" ]] || fail "net1 in $1 has $mac, not gpu0rdma0's MAC"
  else
    [[ $mac != "$(cat /sys/class/net/gpu0rdma0/address)" ]] || fail "net1 in $1 has gpu0rdma0's MAC: not a macvlan child"
  fi
  addrs=$(k exec "$1" -- ip -o -4 addr show)
  grep -q "net1 .*inet $2/32" <<<"$addrs" || fail "net1 in $1 lacks $2: $addrs"
  ! grep -q "$3" <<<"$addrs" || fail "$1 sees $3, the other share's address: $addrs"
  k exec "$1" -- ls /dev/infiniband/uverbs0 >/dev/null || fail "$1 lacks /dev/infiniband/uverbs0"
  k exec "$1" -- ping -c 1 -W 2 "$peer_address" >/dev/null || fail "$1 cannot reach $peer_address over net1"
}
# status_of POD: "SHAREID REASON INTERFACE IPS" of its claim's one device.
status_of() {
  local claim
  claim=$(k get pod "$1" -o jsonpath='{.status.resourceClaimStatuses[0].resourceClaimName}')
  k get resourceclaim "$claim" -o json | python3 -c '
import json, sys
status = json.load(sys.stdin)["status"]
r = status["allocation"]["devices"]["results"][0]
d = [d for d in status.get("devices", []) if d.get("shareID") == r.get("shareID")]
ready = [c["reason"] for c in d[0]["conditions"] if c["type"] == "Ready" and c["status"] == "True"] if d else []
net = d[0].get("networkData", {}) if d else {}
print(r.get("shareID", "-"), ready[0] if ready else "not-ready", net.get("interfaceName", "-"), ",".join(net.get("ips", [])))'
}

share_round() {
  local first=$1 second=$2
  log "2. pods child-a and child-b, a share and a $kind child each"
  box_pod child-a resourceClaimTemplateName child-a
  box_pod child-b resourceClaimTemplateName child-b
  k wait --for=condition=Ready pod/child-a pod/child-b --timeout=120s >&2 || fail "child-a and child-b did not both start"
  has_child child-a 192.168.1.40 192.168.1.41
  has_child child-b 192.168.1.41 192.168.1.40
  read -r a_id a_ready a_if a_ips <<<"$(status_of child-a)"
  read -r b_id b_ready b_if b_ips <<<"$(status_of child-b)"
  [[ $a_id != - && $b_id != - && $a_id != "$b_id" ]] || fail "shareIDs: $a_id and $b_id"
  [[ "$a_ready $a_if $a_ips" == "NetworkDeviceReady net1 192.168.1.40/32" ]] || fail "child-a status: $a_ready $a_if $a_ips"
  [[ "$b_ready $b_if $b_ips" == "NetworkDeviceReady net1 192.168.1.41/32" ]] || fail "child-b status: $b_ready $b_if $b_ips"
  ip -o addr show dev gpu0rdma0 | grep -q "inet $node_address" || fail "gpu0rdma0 lost its address $node_address on the node"
  log "   each has net1 ($kind) with its own address, uverbs0, reaches $peer_address, sees not the other's address;"
  log "   shares $a_id and $b_id, Ready/NetworkDeviceReady; gpu0rdma0 stays on the node"

  log "3. child-c, a third share of 2, stays Pending"
  box_pod child-c resourceClaimTemplateName child-c
  for ((i = 0; i < 150; i++)); do [[ $(k get pod child-c -o jsonpath='{.status.conditions[?(@.type=="PodScheduled")].reason}') == Unschedulable ]] && break; sleep 0.2; done
  [[ $(k get pod child-c -o jsonpath='{.status.conditions[?(@.type=="PodScheduled")].reason}') == Unschedulable ]] \
    || fail "child-c was not held back"
  k delete pod child-c --wait=true --timeout=60s >/dev/null

  log "4. $first deleted, then $second"
  k delete pod "$first" --wait=true --timeout=60s >/dev/null
  local first_address=192.168.1.40 second_address=192.168.1.41
  [[ $second == child-a ]] && { first_address=192.168.1.41; second_address=192.168.1.40; }
  has_child "$second" "$second_address" "$first_address"
  k delete pod "$second" --wait=true --timeout=60s >/dev/null
  # The claims are unprepared once their pods are gone: wait for it before comparing.
  for ((i = 0; i < 100; i++)); do [[ "$(host_gpu0)" == "$before" ]] && break; sleep 0.1; done
  [[ "$(host_gpu0)" == "$before" ]] || fail "gpu0rdma0 on the node changed: $(diff <(echo "$before") <(host_gpu0))"
  log "   the other share kept reaching the peer; gpu0rdma0 is as it was"
}
share_round child-a child-b
share_round child-b child-a

log "5. least privilege; nothing left behind"
box_audit --allow-unused
box_down
log "PASS"
