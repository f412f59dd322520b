#!/usr/bin/env bash
# Device health on the node in a box, as the kubelet and the pods see it:
#
#   tests/cluster/health_test.sh BUILD_DIR RUN_DIR
#
# On a fresh node, dranet installed with `helm install` and the gcp overlay,
# dranetd reading a copy of the A4 snapshot as its host root (the test
# changes the copy's files), each of the snapshot's netdevs a stand-in veth
# whose other end sits in a router namespace (box_netdev_standins):
#   1. pod health-a takes gpu0rdma0, pod health-b gpu1rdma0 (CEL on
#      dra.net/ifName); the real kubelet opens dranetd's health stream and
#      both pods' containerStatuses[].allocatedResourcesStatus say Healthy;
#   2. gpu0rdma0's router end goes down, so the netdev in health-a has no
#      carrier: health-a's device turns Unhealthy with dranet's message,
#      health-b's stays Healthy; the router end up: Healthy again;
#   3. the RDMA port of gpu1rdma0's device set to DOWN in the snapshot copy
#      (its ports/1/state file, which inotify reports): health-b's device
#      turns Unhealthy ("mlx5_N port 1 is DOWN"); ACTIVE again: Healthy;
#   4. the port of gpu2rdma0's device (allocated to no one) set to DOWN:
#      the device is published with the taint dra.net/unhealthy=RdmaPortDown
#      (NoSchedule), and a new pod whose claim can only take it stays
#      unschedulable; the port ACTIVE again, the taint goes (30 s after the
#      recovery, taint_policy.h) and the pod starts;
#   5. dranetd's /metrics counted each transition; every request dranetd
#      made is allowed by its ClusterRole; the node leaves nothing behind.
# Each transition's time (from the change to what shows it) is logged.
# Before Kubernetes 1.36 (the kubelet's ResourceHealthStatus and the API's
# device taints off by default) the same steps prove that both are ignored
# cleanly: no health in pod status, the taint dropped by the API server with
# one warning from dranetd, the new pod scheduled, nothing else disturbed. Exit 77 (skip) when the node cannot be built here, or when the
# snapshot's NIC subnets overlap this machine's routes; needs root.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source_dir=$(cd "$here/../.." && pwd)
[[ $# -eq 2 ]] || { sed -n '2,5p' "$0" >&2; exit 2; }
build=$(cd "$1" && pwd)
run=$(realpath -m -- "$2")
suite=health_test
# shellcheck source=tests/cluster/box_lib.sh
source "$here/box_lib.sh"
node_type=a4-highgpu-8g
examples=$source_dir/packaging/examples/$node_type

box_up
box_images dranet dranet-plugins-gcp
box_netdev_standins "$examples/expected.yaml"
snapshot=$run/$node_type
rm -rf "$snapshot"
cp -a "$source_dir/tests/nodes/$node_type" "$snapshot"

# The router end of a stand-in (its veth peer), found while it is on the host.
router_end() {
  local peer_index
  peer_index=$(ip -o link show "$1" | sed -n 's/^[0-9]*: [^@]*@if\([0-9]*\):.*/\1/p')
  ip -n "$ROUTER" -o link show | awk -F': ' -v i="$peer_index" '$1 == i {sub(/@.*/, "", $2); print $2}'
}
end_a=$(router_end gpu0rdma0)
[[ -n $end_a ]] || fail "cannot find the router end of gpu0rdma0"
rdma_b=$(ls "$snapshot/sys/class/net/gpu1rdma0/device/infiniband")
port_b=$snapshot/sys/class/infiniband/$rdma_b/ports/1/state
rdma_c=$(ls "$snapshot/sys/class/net/gpu2rdma0/device/infiniband")
port_c=$snapshot/sys/class/infiniband/$rdma_c/ports/1/state
[[ -f $port_b && -f $port_c ]] || fail "the snapshot has no port state for $rdma_b or $rdma_c"
minor=$(k version -o json | python3 -c 'import json, sys; print(int(json.load(sys.stdin)["serverVersion"]["minor"].rstrip("+")))')
modern=$((minor >= 36))
log "Kubernetes 1.$minor: $( ((modern)) && echo "health and taints served" || echo "health and taints off: they must be ignored cleanly")"

# taint NAME: "KEY=VALUE:EFFECT" of dranet's device with dra.net/ifName NAME, or "none".
taint() {
  k get resourceslices -o json | python3 -c '
import json, sys
for s in json.load(sys.stdin)["items"]:
    if s["spec"]["driver"] != "dra.net" or s["spec"].get("nodeName") != sys.argv[2]:
        continue
    for d in s["spec"]["devices"]:
        if d.get("attributes", {}).get("dra.net/ifName", {}).get("string") == sys.argv[1]:
            t = d.get("taints") or []
            print(" ".join("%s=%s:%s" % (x["key"], x.get("value", ""), x["effect"]) for x in t) or "none")
            sys.exit(0)
print("absent")' "$1" "$NODE_NAME"
}
log "1. helm install with the gcp overlay on a copy of the $node_type snapshot; two pods"
box_install_on_snapshot gcp "$snapshot"
for ((i = 0; i < 60; i++)); do [[ $(taint gpu0rdma0) != absent ]] && break; sleep 0.5; done
[[ $(taint gpu0rdma0) == none ]] || fail "dranet's slice of $NODE_NAME lists gpu0rdma0 as: $(taint gpu0rdma0)"
for pod in health-a:gpu0rdma0 health-b:gpu1rdma0; do
  box_template "${pod%%:*}" 1 "device.attributes[\"dra.net\"].ifName == \"${pod#*:}\""
  box_pod "${pod%%:*}" resourceClaimTemplateName "${pod%%:*}"
done
for pod in health-a health-b; do
  k wait --for=condition=Ready "pod/$pod" --timeout=120s >&2 || fail "$pod did not start"
done

# health POD: "HEALTH MESSAGE" of the pod's one dra.net device, as the kubelet reports it.
health() {
  k get pod "$1" -o json | python3 -c '
import json, sys
pod = json.load(sys.stdin)
for c in pod["status"].get("containerStatuses", []):
    for s in c.get("allocatedResourcesStatus") or []:
        for r in s.get("resources") or []:
            if r["resourceID"].startswith("dra.net/"):
                print(r.get("health", ""), r.get("message", ""))
                sys.exit(0)
print("none")'
}
seconds_since() { python3 -c "print(f'{$EPOCHREALTIME - $1:.1f}')"; }
# await POD HEALTH [MESSAGE PART]: waits up to 60 s; logs how long it took.
# Before 1.36 the kubelet reports nothing: waits 10 s and demands "none".
await() {
  local started=$EPOCHREALTIME now i
  if ((!modern)); then
    sleep 10
    now=$(health "$1")
    [[ $now == none ]] || fail "a 1.$minor kubelet reports health for $1: $now"
    log "   $1: no health in its status, as a 1.$minor kubelet does"
    return 0
  fi
  for ((i = 0; i < 300; i++)); do
    now=$(health "$1")
    if [[ $now == "$2"* && $now == *"${3:-}"* ]]; then
      log "   $1: $now (after $(seconds_since "$started") s)"
      return 0
    fi
    sleep 0.2
  done
  fail "$1 did not become $2${3:+ ($3)}: the kubelet reports \"$now\""
}
await health-a Healthy
await health-b Healthy

log "2. gpu0rdma0's router end down, then up"
ip -n "$ROUTER" link set "$end_a" down
await health-a Unhealthy "has no carrier"
[[ $(health health-b) == Healthy* || $modern == 0 ]] || fail "health-b changed with health-a's NIC: $(health health-b)"
ip -n "$ROUTER" link set "$end_a" up
await health-a Healthy

log "3. $rdma_b's port 1 DOWN in the snapshot, then ACTIVE"
echo "1: DOWN" >"$port_b"
await health-b Unhealthy "$rdma_b port 1 is DOWN"
echo "4: ACTIVE" >"$port_b"
await health-b Healthy

log "4. $rdma_c's port 1 DOWN (gpu2rdma0, allocated to no one)$( ((modern)) && echo ": tainted, and a new pod cannot take it")"
echo "1: DOWN" >"$port_c"
started=$EPOCHREALTIME
if ((modern)); then
  for ((i = 0; i < 150; i++)); do [[ $(taint gpu2rdma0) == "dra.net/unhealthy=RdmaPortDown:NoSchedule" ]] && break; sleep 0.2; done
  [[ $(taint gpu2rdma0) == "dra.net/unhealthy=RdmaPortDown:NoSchedule" ]] || fail "gpu2rdma0 not tainted: $(taint gpu2rdma0)"
  log "   gpu2rdma0 published with dra.net/unhealthy=RdmaPortDown:NoSchedule (after $(seconds_since "$started") s)"
else
  said() { k -n kube-system logs ds/dranet -c dranetd 2>/dev/null | grep -c "the API server drops device taints"; }
  for ((i = 0; i < 150; i++)); do [[ $(said) -ge 1 ]] && break; sleep 0.2; done
  [[ $(said) -eq 1 ]] || fail "dranetd said $(said) times, not once, that the 1.$minor API server drops device taints"
  [[ $(taint gpu2rdma0) == none ]] || fail "a 1.$minor API server kept a taint: $(taint gpu2rdma0)"
  log "   the 1.$minor API server dropped the taint; dranetd said so once and publishes without it"
fi
box_template health-c 1 'device.attributes["dra.net"].ifName == "gpu2rdma0"'
box_pod health-c resourceClaimTemplateName health-c
if ((modern)); then
  unschedulable() {
    k get pod health-c -o jsonpath='{range .status.conditions[?(@.type=="PodScheduled")]}{.status} {.reason}{end}'
  }
  for ((i = 0; i < 150; i++)); do [[ $(unschedulable) == "False Unschedulable" ]] && break; sleep 0.2; done
  [[ $(unschedulable) == "False Unschedulable" ]] || fail "health-c was not refused while gpu2rdma0 is tainted: $(unschedulable)"
  log "   health-c unschedulable: $(k get pod health-c -o jsonpath='{.status.conditions[?(@.type=="PodScheduled")].message}')"
  echo "4: ACTIVE" >"$port_c"
  started=$EPOCHREALTIME
  for ((i = 0; i < 450; i++)); do [[ $(taint gpu2rdma0) == none ]] && break; sleep 0.2; done
  [[ $(taint gpu2rdma0) == none ]] || fail "gpu2rdma0's taint stayed after its port came back: $(taint gpu2rdma0)"
  log "   the taint went $(seconds_since "$started") s after the port came back"
else
  echo "4: ACTIVE" >"$port_c"
fi
k wait --for=condition=Ready pod/health-c --timeout=180s >&2 || fail "health-c did not start"
log "   health-c runs with gpu2rdma0"

log "5. the transitions in /metrics; least privilege; nothing left behind"
metrics=$(curl -sf http://127.0.0.1:9177/metrics) || fail "dranetd's /metrics cannot be read"
for to in Unhealthy Healthy; do
  count=$(awk -v l="dranet_device_health_transitions_total{health=\"$to\"}" '$1 == l {print $2}' <<<"$metrics")
  [[ ${count:-0} -ge 3 ]] || fail "dranet_device_health_transitions_total{health=\"$to\"} is ${count:-absent}, not 3 or more"
  log "   transitions to $to: $count"
done
k delete pod health-a health-b health-c --wait=true --timeout=60s >/dev/null
box_audit --allow-unused
box_down
log "PASS"
