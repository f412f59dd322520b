#!/usr/bin/env bash
# Extended resources backed by DRA, the way device-plugin users ask for NICs:
#
#   tests/cluster/extended_test.sh BUILD_DIR RUN_DIR
#
# On a fresh node, dranet installed with `helm install` and the azure overlay,
# dranetd reading the ND GB300-v6 snapshot (four IB-only HCAs):
#   1. the dranet-rdma DeviceClass carries extendedResourceName dra.net/rdma;
#   2. pod ext-one asks only `resources.limits: {dra.net/rdma: 1}` (no claim
#      in its spec): the scheduler makes the claim (named in
#      pod.status.extendedResourceClaimStatus, annotated as such, owned by the
#      pod), allocates one of dranet's RDMA devices, the kubelet prepares it
#      through dranetd, NRI gives the container that HCA's char devices and
#      NCCL_IB_HCA naming it;
#   3. pod ext-three asks for 3: it gets the other three HCAs; pod ext-more
#      asks for 1 more than is left and stays unschedulable;
#   4. the pods deleted: their claims go with them (owner references) and the
#      waiting pod starts;
#   5. every request dranetd made is allowed by its ClusterRole; the node
#      leaves nothing behind.
# Before Kubernetes 1.36 (DRAExtendedResource off) the API server drops the
# class's extendedResourceName and the scheduler knows no dra.net/rdma: the
# pod stays Pending ("Insufficient dra.net/rdma"), nothing else disturbed.
# Exit 77 (skip) when the node cannot be built here; needs root.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source_dir=$(cd "$here/../.." && pwd)
[[ $# -eq 2 ]] || { sed -n '2,5p' "$0" >&2; exit 2; }
build=$(cd "$1" && pwd)
run=$(realpath -m -- "$2")
suite=extended_test
# shellcheck source=tests/cluster/box_lib.sh
source "$here/box_lib.sh"
node_type=nd-gb300-v6
snapshot=$source_dir/tests/nodes/$node_type

box_up
box_images dranet dranet-plugins-azure
minor=$(k version -o json | python3 -c 'import json, sys; print(int(json.load(sys.stdin)["serverVersion"]["minor"].rstrip("+")))')
modern=$((minor >= 36))

log "1. helm install with the azure overlay on the $node_type snapshot"
box_install_on_snapshot azure "$snapshot"
offered=$(k get deviceclass dranet-rdma -o jsonpath='{.spec.extendedResourceName}')
if ((modern)); then
  [[ $offered == dra.net/rdma ]] || fail "DeviceClass dranet-rdma offers \"$offered\", not dra.net/rdma"
  log "   DeviceClass dranet-rdma offers dra.net/rdma"
else
  [[ -z $offered ]] || fail "a 1.$minor API server kept extendedResourceName: $offered"
  log "   the 1.$minor API server dropped extendedResourceName from dranet-rdma, as its DRAExtendedResource is off"
fi
for ((i = 0; i < 60; i++)); do
  rdma=$(k get resourceslices -o json | python3 -c '
import json, sys
n = 0
for s in json.load(sys.stdin)["items"]:
    if s["spec"]["driver"] == "dra.net":
        n += sum(1 for d in s["spec"]["devices"] if d.get("attributes", {}).get("dra.net/rdma", {}).get("bool"))
print(n)')
  ((rdma > 0)) && break
  sleep 0.5
done
((rdma == 4)) || fail "dranet publishes $rdma RDMA devices, not the snapshot's 4"

# limit_pod POD COUNT: a pod with only an extended resource limit of COUNT dra.net/rdma.
limit_pod() { box_sleeper default "$1" "{limits: {dra.net/rdma: \"$2\"}}"; }
# scheduled POD: "STATUS REASON" of its PodScheduled condition.
scheduled() { k get pod "$1" -o jsonpath='{range .status.conditions[?(@.type=="PodScheduled")]}{.status} {.reason}{end}'; }
# hcas POD: the HCAs its container got, from NCCL_IB_HCA ("=mlx5_0,mlx5_1" -> "mlx5_0 mlx5_1"), sorted.
hcas() { k exec "$1" -- env | sed -n 's/^NCCL_IB_HCA=//p' | tr -d '=' | tr ',' '\n' | sort | tr '\n' ' ' | sed 's/ $//'; }
# uverbs POD: how many uverbs char devices its container has.
uverbs() { k exec "$1" -- ls /dev/infiniband | grep -c '^uverbs'; }

if ((!modern)); then
  log "2. pod ext-one with only a dra.net/rdma limit: a 1.$minor scheduler has nothing to give it"
  limit_pod ext-one 1
  for ((i = 0; i < 100; i++)); do [[ $(scheduled ext-one) == "False Unschedulable" ]] && break; sleep 0.2; done
  [[ $(scheduled ext-one) == "False Unschedulable" ]] || fail "ext-one: $(scheduled ext-one)"
  message=$(k get pod ext-one -o jsonpath='{.status.conditions[?(@.type=="PodScheduled")].message}')
  [[ $message == *"Insufficient dra.net/rdma"* ]] || fail "ext-one is unschedulable for another reason: $message"
  log "   ext-one pending: $message"
  k delete pod ext-one --wait=true --timeout=60s >/dev/null
  box_audit --allow-unused
  box_down
  log "PASS"
  exit 0
fi

log "2. pod ext-one with only a dra.net/rdma limit of 1"
limit_pod ext-one 1
k wait --for=condition=Ready pod/ext-one --timeout=120s >&2 || fail "ext-one did not start"
claim=$(k get pod ext-one -o jsonpath='{.status.extendedResourceClaimStatus.resourceClaimName}')
[[ -n $claim ]] || fail "ext-one's status names no extended resource claim"
k get resourceclaim "$claim" -o json | python3 -c '
import json, sys
c = json.load(sys.stdin)
meta, status = c["metadata"], c.get("status", {})
assert meta.get("annotations", {}).get("resource.kubernetes.io/extended-resource-claim") == "true", meta
assert [o["name"] for o in meta.get("ownerReferences", [])] == ["ext-one"], meta
results = status["allocation"]["devices"]["results"]
assert [r["driver"] for r in results] == ["dra.net"], results
assert [r["name"] for r in status.get("reservedFor", [])] == ["ext-one"], status
print("   claim %s: %s, reserved for ext-one" % (meta["name"], results[0]["device"]))' >&2 \
  || fail "ext-one's claim $claim is not what the scheduler should have made"
got=$(hcas ext-one)
[[ $got =~ ^mlx5_[0-9]+$ && $(uverbs ext-one) == 1 ]] || fail "ext-one got HCAs \"$got\" and $(uverbs ext-one) uverbs devices"
log "   ext-one's container has $got (NCCL_IB_HCA) and its one uverbs device"

log "3. pod ext-three with a limit of 3; pod ext-more asks for 1 when none is left"
limit_pod ext-three 3
k wait --for=condition=Ready pod/ext-three --timeout=120s >&2 || fail "ext-three did not start"
three=$(hcas ext-three)
[[ $(wc -w <<<"$three") == 3 && $(uverbs ext-three) == 3 && " $three " != *" $got "* ]] \
  || fail "ext-three got \"$three\" ($(uverbs ext-three) uverbs devices) beside ext-one's $got"
log "   ext-three has $three"
limit_pod ext-more 1
for ((i = 0; i < 150; i++)); do [[ $(scheduled ext-more) == "False Unschedulable" ]] && break; sleep 0.2; done
[[ $(scheduled ext-more) == "False Unschedulable" ]] || fail "ext-more was not refused: $(scheduled ext-more)"
log "   ext-more unschedulable: $(k get pod ext-more -o jsonpath='{.status.conditions[?(@.type=="PodScheduled")].message}')"

log "4. ext-one deleted: its claim goes with it, and ext-more gets the HCA"
k delete pod ext-one --wait=true --timeout=60s >/dev/null
for ((i = 0; i < 150; i++)); do k get resourceclaim "$claim" >/dev/null 2>&1 || break; sleep 0.2; done
! k get resourceclaim "$claim" >/dev/null 2>&1 || fail "ext-one's claim $claim outlived it"
k wait --for=condition=Ready pod/ext-more --timeout=180s >&2 || fail "ext-more did not start once ext-one was gone"
log "   ext-more has $(hcas ext-more)"
k delete pod ext-three ext-more --wait=true --timeout=60s >/dev/null

log "5. least privilege; nothing left behind"
box_audit --allow-unused
box_down
log "PASS"
