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
[[ $EUID -eq 0 ]] || { echo "install_test: skipped: needs root" >&2; exit 77; }
if [[ $how == helm ]]; then
  helm_bin=$(bash "$source_dir/scripts/go_tool.sh" helm)/helm  # exits 77 without Go
fi

log() { printf 'install_test: %s\n' "$*" >&2; }
fail() { log "FAIL: $*"; exit 1; }
readonly NIC=dnbox0 NIC_MAC=02:00:0a:e9:00:aa

cleanup() {
  local status=$?
  if ((status != 0 && status != 77)) && [[ -n ${KUBECTL:-} ]]; then
    log "state at failure:"
    "$KUBECTL" get pods,resourceclaims -A -o wide >&2 || true
    "$KUBECTL" -n kube-system logs ds/dranet --tail=40 >&2 || true
  fi
  ip link del "$NIC" 2>/dev/null || true
  bash "$here/node.sh" down "$run" || true
  exit "$status"
}
trap cleanup EXIT

status=0
bash "$here/node.sh" up "$run" >"$run.env" || status=$?
((status == 0)) || exit "$status"
set -a
# shellcheck disable=SC1090
source "$run.env"
set +a
rm -f "$run.env"
k() { "$KUBECTL" "$@"; }
log "node: Kubernetes $(k version -o json | python3 -c 'import json, sys; print(json.load(sys.stdin)["serverVersion"]["gitVersion"])'), containerd $CONTAINERD_VERSION"

# Images: as a user's registry would serve them, under the chart's names.
images=$run/images
bash "$source_dir/packaging/images/oci-image.sh" "$build" "$images" "$BUSYBOX" >"$run/images.list"
for image in dranet dranet-plugins-generic; do
  "$CTR" -a "$CONTAINERD_SOCKET" -n "$CRI_NAMESPACE" images import "$images/$image.tar" >/dev/null
done
rm -rf "$images"

# A netdev for a pod to claim: an ifb link (this kernel has no dummy links;
# dranetd publishes no veth by default).
ip link del "$NIC" 2>/dev/null || true
ip link add "$NIC" address "$NIC_MAC" type ifb

if [[ $how == kubectl ]]; then
  log "1. kubectl apply -f packaging/install.yaml"
  k apply -f "$source_dir/packaging/install.yaml" >/dev/null
else
  log "1. helm install dranet packaging/helm/dranet ($("$helm_bin" version --short))"
  "$helm_bin" install dranet "$source_dir/packaging/helm/dranet" --namespace kube-system \
    --kubeconfig "$KUBECONFIG" >"$run/helm-install.log" 2>&1 \
    || { cat "$run/helm-install.log" >&2; fail "helm install failed"; }
  release_status=$("$helm_bin" status dranet --namespace kube-system --kubeconfig "$KUBECONFIG" -o json \
                     | python3 -c 'import json, sys; print(json.load(sys.stdin)["info"]["status"])')
  [[ $release_status == deployed ]] || fail "helm reports the release $release_status, not deployed"
fi
k -n kube-system rollout status daemonset/dranet --timeout=120s >&2 \
  || fail "the dranet DaemonSet did not become Ready"
slice_of_nic() {
  k get resourceslices -o jsonpath="{range .items[?(@.spec.nodeName=='$NODE_NAME')]}{.spec.driver} {range .spec.devices[*]}{.name} {end}{'\n'}{end}" \
    | grep -E "^dra\.net .*\b$NIC\b"
}
for ((i = 0; i < 60; i++)); do slice_of_nic >/dev/null && break; sleep 0.5; done
slice_of_nic >/dev/null || fail "no dra.net ResourceSlice of $NODE_NAME lists $NIC"
log "   DaemonSet Ready; ResourceSlice of $NODE_NAME lists $NIC"

log "2. a pod claims $NIC through a ResourceClaimTemplate (CEL on dra.net/ifName)"
k apply -f - >/dev/null <<EOF
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata: {name: box-nic, namespace: default}
spec:
  spec:
    devices:
      requests:
      - name: nic
        exactly:
          deviceClassName: dranet
          selectors:
          - cel:
              expression: device.attributes["dra.net"].ifName == "$NIC"
      config:
      - requests: [nic]
        opaque:
          driver: dra.net
          parameters:
            interface: {name: net1, mtu: 1400, addresses: ["10.234.0.2/24"]}
---
apiVersion: v1
kind: Pod
metadata: {name: box-pod, namespace: default}
spec:
  terminationGracePeriodSeconds: 1
  containers:
  - name: c
    image: $BUSYBOX_IMAGE
    imagePullPolicy: Never
    command: [sleep, "3600"]
    resources:
      claims: [{name: nic}]
  resourceClaims:
  - name: nic
    resourceClaimTemplateName: box-nic
EOF
k wait --for=condition=Ready pod/box-pod --timeout=120s >&2 || fail "box-pod did not start"
in_pod=$(k exec box-pod -- ip -o addr show dev net1) || fail "net1 is not in box-pod"
grep -q "10.234.0.2/24" <<<"$in_pod" || fail "net1 in box-pod lacks 10.234.0.2/24: $in_pod"
k exec box-pod -- ip -o link show dev net1 | grep -q "mtu 1400" || fail "net1 in box-pod has not MTU 1400"
ip link show "$NIC" >/dev/null 2>&1 && fail "$NIC is still on the host while box-pod holds it"
claim=$(k get pod box-pod -o jsonpath='{.status.resourceClaimStatuses[0].resourceClaimName}')
status_json=$(k get resourceclaim "$claim" -o jsonpath='{.status.devices}')
grep -q '"driver":"dra.net"' <<<"$status_json" && grep -q '"interfaceName":"net1"' <<<"$status_json" \
  || fail "claim $claim has no status.devices entry with networkData for net1: $status_json"
log "   $NIC is net1 in box-pod (10.234.0.2/24, MTU 1400); claim status: $status_json"

log "3. kubectl delete pod: $NIC comes home"
k delete pod box-pod --wait=true --timeout=60s >/dev/null
for ((i = 0; i < 100; i++)); do ip link show "$NIC" >/dev/null 2>&1 && break; sleep 0.1; done
ip -o link show "$NIC" | grep -qi "$NIC_MAC" || fail "$NIC did not come back to the host with MAC $NIC_MAC"
log "   $NIC is back on the host with its MAC"

log "4. a claim prepare refuses (interface name \"all\"): Warning Event, the pod waits, $NIC stays"
k apply -f - >/dev/null <<EOF
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: box-refused, namespace: default}
spec:
  devices:
    requests:
    - name: nic
      exactly:
        deviceClassName: dranet
        selectors:
        - cel:
            expression: device.attributes["dra.net"].ifName == "$NIC"
    config:
    - requests: [nic]
      opaque:
        driver: dra.net
        parameters:
          interface: {name: all}
---
apiVersion: v1
kind: Pod
metadata: {name: box-refused, namespace: default}
spec:
  terminationGracePeriodSeconds: 1
  containers:
  - name: c
    image: $BUSYBOX_IMAGE
    imagePullPolicy: Never
    command: [sleep, "3600"]
    resources:
      claims: [{name: nic}]
  resourceClaims:
  - name: nic
    resourceClaimName: box-refused
EOF
warning=""
for ((i = 0; i < 120; i++)); do
  warning=$(k get events -n default -o jsonpath='{range .items[?(@.type=="Warning")]}{.involvedObject.kind}/{.involvedObject.name} {.reason}: {.message}{"\n"}{end}' \
              | grep '^ResourceClaim/box-refused ' || true)
  [[ -n $warning ]] && break
  sleep 0.5
done
[[ -n $warning ]] || fail "no Warning Event on claim box-refused"
grep -q '"all"\|all' <<<"$warning" || fail "the Warning Event does not name the refused value: $warning"
[[ $(k get pod box-refused -o jsonpath='{.status.phase}') == Pending ]] || fail "box-refused is not Pending"
ip link show "$NIC" >/dev/null 2>&1 || fail "$NIC left the host for a claim prepare refused"
log "   $(head -1 <<<"$warning")"
k delete pod box-refused --wait=true --timeout=60s >/dev/null
k delete resourceclaim box-refused --wait=true --timeout=60s >/dev/null

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
slice_of_nic >/dev/null || fail "dranet's own slice lost $NIC"
log "   deleted; dranet's slice still lists $NIC"

log "6. least privilege: dranetd's requests against its ClusterRole"
k get clusterrole dranet -o json >"$run/clusterrole.json"
python3 "$here/audit_check.py" --audit-log "$AUDIT_LOG" --clusterrole "$run/clusterrole.json" \
  --user system:serviceaccount:kube-system:dranet >&2 || fail "dranetd's requests do not fit its ClusterRole"

log "7. node.sh down leaves nothing behind"
trap - EXIT
ip link del "$NIC" 2>/dev/null || true
bash "$here/node.sh" down "$run"
bash "$here/leftovers.sh" "$run" "$K8S_BIN_DIR" || fail "the node left something behind"
log "PASS ($how)"
