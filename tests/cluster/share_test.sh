#!/usr/bin/env bash
# Several pods share one HCA (consumable capacity) on the node in a box:
#
#   tests/cluster/share_test.sh BUILD_DIR RUN_DIR
#
# On a fresh node, dranet installed with `helm install`, the azure overlay,
# dranetd reading the GB300 snapshot with --shared-devices selecting mlx5_0
# and --device-shares=2:
#   1. the slice publishes mlx5_0's device with allowMultipleAllocations and
#      the capacities dra.net/shares (2) and dra.net/bandwidth (800 Gbit/s,
#      the port's rate), each with a request policy; the other HCAs without;
#   2. pods share-a and share-b, each with a claim of its own from the
#      shipped template hca-share (packaging/examples/shared), both Running with the same uverbs and umad devices and
#      NCCL_IB_HCA=mlx5_0; their claims carry distinct shareIDs, consumed
#      1 share and 400 Gbit/s each, and each share's status is
#      Ready/RDMAShareReady under its shareID;
#   3. share-c, a third share, stays Pending: the scheduler reports it
#      Unschedulable; so does share-d (hca-share-200g), for 200 Gbit/s;
#      `dranetctl simulate --one-node` on the same snapshot, flags and
#      templates in the same order gives the same answer (the scheduler as
#      its oracle): a and b a share of the same device with the same
#      consumed capacity, c and d not allocated;
#   4. share-a deleted: share-c starts with the same devices, and share-b
#      still has them;
#   5. the pods deleted in another order; every request dranetd made is
#      allowed by its ClusterRole; the node leaves nothing behind.
# Consumable capacity is Kubernetes 1.36+ (DRAConsumableCapacity, beta and
# on); on an older node the suite is skipped (dranetd refuses the flag there:
# DaemonTest covers that). Exit 77 (skip) when the node cannot be built here;
# needs root.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source_dir=$(cd "$here/../.." && pwd)
[[ $# -eq 2 ]] || { sed -n '2,5p' "$0" >&2; exit 2; }
build=$(cd "$1" && pwd)
run=$(realpath -m -- "$2")
suite=share_test
# shellcheck source=tests/cluster/box_lib.sh
source "$here/box_lib.sh"
node_type=nd-gb300-v6
snapshot=$source_dir/tests/nodes/$node_type

box_up
minor=$(k version -o json | python3 -c 'import json, sys; print(int(json.load(sys.stdin)["serverVersion"]["minor"].rstrip("+")))')
((minor >= 36)) || { log "skipped: consumable capacity needs Kubernetes 1.36 or later, the node is 1.$minor"; box_down; exit 77; }
box_images dranet dranet-plugins-azure

log "1. helm install with the azure overlay, mlx5_0 shared by 2"
box_install_on_snapshot azure "$snapshot" \
  --set-string 'flags.sharedDevices=device.attributes["dra.net"].rdmaDevice == "mlx5_0"' \
  --set flags.deviceShares=2
box_wait_slice_lists pci-0101-00-00-0
device=$(k get resourceslices -o json | python3 -c '
import json, sys
shared = []
for s in json.load(sys.stdin)["items"]:
    if s["spec"]["driver"] != "dra.net":
        continue
    for d in s["spec"]["devices"]:
        rdma = d["attributes"].get("dra.net/rdmaDevice", {}).get("string")
        if not d.get("allowMultipleAllocations"):
            assert "capacity" not in d, d
            continue
        assert rdma == "mlx5_0", d
        policy = lambda value, default, high: {"value": value, "requestPolicy": {
            "default": default, "validRange": {"min": "1", "max": high, "step": "1"}}}
        want = {"dra.net/shares": policy("2", "1", "2"), "dra.net/bandwidth": policy("800", "400", "800")}
        assert d["capacity"] == want, d["capacity"]
        shared.append(d["name"])
assert len(shared) == 1, shared
print(shared[0])') || fail "the slice does not publish mlx5_0 alone as shared by 2"
log "   $device (mlx5_0): allowMultipleAllocations, dra.net/shares 2, dra.net/bandwidth 800"

k apply -f "$source_dir/packaging/examples/shared/share-templates.yaml" >/dev/null
# share_of POD: its claim's "DEVICE SHAREID SHARES BANDWIDTH READY-REASON", checked against the status.
share_of() {
  local claim
  claim=$(k get pod "$1" -o jsonpath='{.status.resourceClaimStatuses[0].resourceClaimName}')
  k get resourceclaim "$claim" -o json | python3 -c '
import json, sys
status = json.load(sys.stdin)["status"]
results = status["allocation"]["devices"]["results"]
assert len(results) == 1, results
r = results[0]
consumed = r.get("consumedCapacity", {})
ready = [c["reason"] for d in status.get("devices", []) if d["device"] == r["device"] and d.get("shareID") == r.get("shareID")
         for c in d["conditions"] if c["type"] == "Ready" and c["status"] == "True"]
print(r["device"], r.get("shareID", "-"), consumed.get("dra.net/shares", "-"), consumed.get("dra.net/bandwidth", "-"),
      ready[0] if ready else "not-ready")'
}
# devices POD: its /dev/infiniband entries and NCCL_IB_HCA, on one line.
devices() {
  echo "$(k exec "$1" -- ls /dev/infiniband | sort | tr '\n' ' ')NCCL_IB_HCA=$(k exec "$1" -- env | sed -n 's/^NCCL_IB_HCA=//p')"
}
scheduled() { k get pod "$1" -o jsonpath='{range .status.conditions[?(@.type=="PodScheduled")]}{.status} {.reason}{end}'; }

log "2. pods share-a and share-b, a share each"
box_pod share-a resourceClaimTemplateName hca-share
box_pod share-b resourceClaimTemplateName hca-share
k wait --for=condition=Ready pod/share-a pod/share-b --timeout=120s >&2 || fail "share-a and share-b did not both start"
a=$(share_of share-a)
b=$(share_of share-b)
read -r a_device a_id a_shares a_bandwidth a_ready <<<"$a"
read -r b_device b_id b_shares b_bandwidth b_ready <<<"$b"
[[ $a_device == "$device" && $b_device == "$device" ]] || fail "the shares are of $a_device and $b_device, not $device"
[[ $a_id != - && $b_id != - && $a_id != "$b_id" ]] || fail "shareIDs: $a_id and $b_id"
[[ "$a_shares $a_bandwidth $b_shares $b_bandwidth" == "1 400 1 400" ]] \
  || fail "consumed: share-a $a_shares/$a_bandwidth, share-b $b_shares/$b_bandwidth"
[[ $a_ready == RDMAShareReady && $b_ready == RDMAShareReady ]] || fail "status: share-a $a_ready, share-b $b_ready"
log "   share-a: share $a_id, share-b: share $b_id of $device; 1 share and 400 Gbit/s each; both Ready/RDMAShareReady"
want="rdma_cm umad0 uverbs0 NCCL_IB_HCA==mlx5_0"
[[ $(devices share-a) == "$want" ]] || fail "share-a has $(devices share-a), not $want"
[[ $(devices share-b) == "$want" ]] || fail "share-b has $(devices share-b), not $want"
log "   both have $want"

log "3. share-c, a third share of 2, stays Pending"
box_pod share-c resourceClaimTemplateName hca-share
for ((i = 0; i < 150; i++)); do [[ $(scheduled share-c) == "False Unschedulable" ]] && break; sleep 0.2; done
[[ $(scheduled share-c) == "False Unschedulable" ]] || fail "share-c: $(scheduled share-c)"
log "   share-c unschedulable: $(k get pod share-c -o jsonpath='{.status.conditions[?(@.type=="PodScheduled")].message}')"
box_pod share-d resourceClaimTemplateName hca-share-200g
for ((i = 0; i < 150; i++)); do [[ $(scheduled share-d) == "False Unschedulable" ]] && break; sleep 0.2; done
[[ $(scheduled share-d) == "False Unschedulable" ]] || fail "share-d: $(scheduled share-d)"
k delete pod share-d --wait=true --timeout=60s >/dev/null
# simulate's answer for a, b, c (hca-share) and d (hca-share-200g) in that order.
python3 - "$source_dir/packaging/examples/shared/share-templates.yaml" >"$run/share-order.yaml" <<'EOF'
import sys, yaml
by_name = {d["metadata"]["name"]: d for d in yaml.safe_load_all(open(sys.argv[1])) if d}
docs = [dict(by_name[t], metadata={"name": n})
        for n, t in (("a", "hca-share"), ("b", "hca-share"), ("c", "hca-share"), ("d", "hca-share-200g"))]
print(yaml.safe_dump_all(docs))
EOF
status=0
"$build/bin/dranetctl" simulate --host-root "$snapshot" --one-node -f "$run/share-order.yaml" \
  --shared-devices 'device.attributes["dra.net"].rdmaDevice == "mlx5_0"' --device-shares 2 \
  >"$run/share-simulate.txt" 2>&1 || status=$?
((status == 3)) || fail "simulate exited $status (3: some template not allocated): $(cat "$run/share-simulate.txt")"
got=$(grep -E '^template |^  hca: ' "$run/share-simulate.txt" | sed -E 's|^  hca: dra.net/([^ ]*) .*\[(.*)\]$|  \1 [\2]|')
simulated="template a: allocated
  $device [a share, consumes dra.net/bandwidth $a_bandwidth, dra.net/shares $a_shares]
template b: allocated
  $device [a share, consumes dra.net/bandwidth $b_bandwidth, dra.net/shares $b_shares]
template c: NOT allocated
template d: NOT allocated"
[[ $got == "$simulated" ]] || fail "simulate --one-node differs from the scheduler: $(diff <(echo "$simulated") <(echo "$got"))"
log "   dranetctl simulate --one-node agrees: a and b share $device (1 share, 400 Gbit/s each), c and d wait"

log "4. share-a deleted: share-c starts; share-b keeps its devices"
k delete pod share-a --wait=true --timeout=60s >/dev/null
k wait --for=condition=Ready pod/share-c --timeout=180s >&2 || fail "share-c did not start once share-a was gone"
[[ $(devices share-c) == "$want" ]] || fail "share-c has $(devices share-c), not $want"
[[ $(devices share-b) == "$want" ]] || fail "share-b lost its devices: $(devices share-b)"
log "   share-c has $want; share-b still has them"

log "5. deleted in another order; least privilege; nothing left behind"
k delete pod share-c --wait=true --timeout=60s >/dev/null
k delete pod share-b --wait=true --timeout=60s >/dev/null
box_audit --allow-unused
box_down
log "PASS"
