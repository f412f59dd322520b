# Shared by the suites that run on the node in a box (install_test.sh,
# lifecycle_test.sh, seeds_test.sh, oracle_test.sh) and by
# bench/cluster_pod_start.sh: sourced after `here`, `source_dir`, `build` and `run`
# are set; `suite` names the suite in the log.
#
#   box_up               node.sh up, its KEY=VALUE lines exported, k() = kubectl
#   box_images [IMAGE...]
#                        dranet's images made by packaging/images/oci-image.sh,
#                        imported into the node's containerd under the chart's
#                        names (default: dranet, dranet-plugins-generic)
#   box_nic NAME MAC     an ifb link standing in for a NIC (removed at the end)
#   box_netdev_standins EXPECTED_YAML
#                        veths standing in for a snapshot's netdevs, a router
#                        and a peer host behind it (below)
#   box_install kubectl|helm
#                        dranet installed as users install it; waits for Ready
#   box_install_on_snapshot CLOUD SNAPSHOT
#                        helm install with CLOUD's overlay, dranetd reading the
#                        node snapshot directory SNAPSHOT as its host root
#   box_slice_lists NIC  true when dranet's ResourceSlice of the node lists NIC
#   box_sleeper NAMESPACE POD RESOURCES [CLAIMS]
#                        a busybox pod that sleeps, with those resources
#   box_pod POD FIELD NAME  a pod holding one claim (template or claim)
#   box_template NAME COUNT CEL [INTERFACE [ROUTES]]
#                        a ResourceClaimTemplate for COUNT devices CEL selects
#                        (BOX_NAMESPACE, BOX_ADMIN_ACCESS=true: see below)
#   box_nic_template NAME NIC INTERFACE
#                        a ResourceClaimTemplate taking NIC by CEL on
#                        dra.net/ifName, INTERFACE as dranet's interface config
#   box_nic_pod POD NIC ADDRESS
#                        a pod whose ResourceClaimTemplate picks NIC by CEL on
#                        dra.net/ifName, configured as net1 (MTU 1400, ADDRESS)
#   box_return_like_hardware NIC MAC
#                        from now on, when the pod namespace NIC (with MAC) is
#                        in dies, NIC comes back to the host as a physical NIC
#                        would (virtual links die with their namespace)
#   box_audit            dranetd's requests against its ClusterRole (audit_check.py)
#   box_down             node.sh down, then leftovers.sh: nothing may remain
# A failing suite prints the pods, claims and dranetd's log, then stops the node.

log() { printf '%s: %s\n' "$suite" "$*" >&2; }
fail() { log "FAIL: $*"; exit 1; }
# Links and network namespaces a suite made: removed at the end, and listed
# in RUN_DIR (box-links, box-netns) so that node.sh down removes them after a
# suite that was killed.
box_links=()
box_netns=()
box_keepers=()

box_cleanup() {
  local status=$?
  if ((status != 0 && status != 77)) && [[ -n ${KUBECTL:-} ]]; then
    log "state at failure:"
    "$KUBECTL" get pods,resourceclaims -A -o wide >&2 || true
    "$KUBECTL" -n kube-system logs ds/dranet --tail=60 >&2 || true
  fi
  box_remove_links
  bash "$here/node.sh" down "$run" || true
  rm -f "$run.preexisting"
  exit "$status"
}

box_remove_links() {
  local link ns pid
  for pid in "${box_keepers[@]}"; do kill "$pid" 2>/dev/null || true; done
  for link in "${box_links[@]}"; do ip link del "$link" 2>/dev/null || true; done
  for ns in "${box_netns[@]}"; do ip netns del "$ns" 2>/dev/null || true; done
}

box_up() {
  [[ $EUID -eq 0 ]] || { log "skipped: needs root"; exit 77; }
  trap box_cleanup EXIT
  # What leftovers.sh must not blame on the run.
  local path
  for path in /var/lib/kubelet /var/run/nri/nri.sock /var/run/dranet /dev/infiniband; do
    [[ -e $path ]] && echo "$path"
  done >"$run.preexisting" || true
  local status=0
  bash "$here/node.sh" up "$run" >"$run.env" || status=$?
  ((status == 0)) || exit "$status"
  set -a
  # shellcheck disable=SC1090
  source "$run.env"
  set +a
  rm -f "$run.env"
  log "node: Kubernetes $(k version -o json | python3 -c 'import json, sys; print(json.load(sys.stdin)["serverVersion"]["gitVersion"])'), containerd $CONTAINERD_VERSION"
}

k() { "$KUBECTL" "$@"; }

box_images() {
  local images=$run/images image wanted=("$@")
  ((${#wanted[@]})) || wanted=(dranet dranet-plugins-generic)
  bash "$source_dir/packaging/images/oci-image.sh" "$build" "$images" "$BUSYBOX" >"$run/images.list"
  for image in "${wanted[@]}"; do
    "$CTR" -a "$CONTAINERD_SOCKET" -n "$CRI_NAMESPACE" images import "$images/$image.tar" >/dev/null
  done
  rm -rf "$images"
}

box_record_link() {
  box_links+=("$1")
  echo "$1" >>"$run/box-links"
}

# box_add_netns NAME: ip netns add, recorded. The first one makes /run/netns
# a mount point of its own when it is not one; node.sh down undoes that.
box_add_netns() {
  mountpoint -q /run/netns 2>/dev/null || : >>"$run/box-netns-mount-made"
  ip netns add "$1"
  box_netns+=("$1")
  echo "$1" >>"$run/box-netns"
}

# This kernel has no dummy links, and dranetd publishes no veth by default.
box_nic() {
  ip link del "$1" 2>/dev/null || true
  ip link add "$1" address "$2" type ifb
  box_record_link "$1"
}

# box_install kubectl|helm [HELM ARGS...]: HELM ARGS go to helm install.
box_install() {
  local how=$1
  shift
  if [[ $how == kubectl ]]; then
    k apply -f "$source_dir/packaging/install.yaml" >/dev/null
  else
    local helm_bin release_status
    helm_bin=$(bash "$source_dir/scripts/go_tool.sh" helm)/helm
    log "   with Helm $("$helm_bin" version --short)"
    "$helm_bin" install dranet "$source_dir/packaging/helm/dranet" --namespace kube-system \
      --kubeconfig "$KUBECONFIG" "$@" >"$run/helm-install.log" 2>&1 \
      || { cat "$run/helm-install.log" >&2; fail "helm install failed"; }
    release_status=$("$helm_bin" status dranet --namespace kube-system --kubeconfig "$KUBECONFIG" -o json \
                       | python3 -c 'import json, sys; print(json.load(sys.stdin)["info"]["status"])')
    [[ $release_status == deployed ]] || fail "helm reports the release $release_status, not deployed"
  fi
  k -n kube-system rollout status daemonset/dranet --timeout=120s >&2 \
    || fail "the dranet DaemonSet did not become Ready"
}

# box_install_on_snapshot OVERLAY SNAPSHOT [HELM ARGS...]: helm install with
# the cloud overlay, dranetd reading the snapshot; HELM ARGS go to helm install.
box_install_on_snapshot() {
  local overlay=$1 snapshot=$2
  shift 2
  box_install helm -f "$source_dir/packaging/deploy/overlays/$overlay/values.yaml" \
    --set "flags.hostRoot=$snapshot" \
    --set-json "extraVolumes=[{\"name\":\"snapshot\",\"hostPath\":{\"path\":\"$snapshot\",\"type\":\"Directory\"}}]" \
    --set-json "extraVolumeMounts=[{\"name\":\"snapshot\",\"mountPath\":\"$snapshot\",\"readOnly\":true}]" "$@"
}

box_slice_lists() {
  k get resourceslices -o jsonpath="{range .items[?(@.spec.nodeName=='$NODE_NAME')]}{.spec.driver} {range .spec.devices[*]}{.name} {end}{'\n'}{end}" \
    | grep -qE "^dra\.net .*\b$1\b"
}

box_wait_slice_lists() {
  local i
  for ((i = 0; i < 60; i++)); do box_slice_lists "$1" && return 0; sleep 0.5; done
  fail "no dra.net ResourceSlice of $NODE_NAME lists $1"
}

# box_template NAME COUNT CEL [INTERFACE [ROUTES]]: a ResourceClaimTemplate for
# COUNT of dranet's devices that CEL selects, with INTERFACE (a YAML mapping)
# and ROUTES (a YAML list) as dranet's config when given; in namespace
# $BOX_NAMESPACE (default: default), with adminAccess when $BOX_ADMIN_ACCESS
# is true. API errors go to stderr.
box_template() {
  local config=""
  [[ -n ${4:-} ]] && config="
      config:
      - requests: [nic]
        opaque:
          driver: dra.net
          parameters:
            interface: $4"
  [[ -n ${5:-} ]] && config+="
            routes: $5"
  k apply -f - >/dev/null <<EOF
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata: {name: $1, namespace: ${BOX_NAMESPACE:-default}}
spec:
  spec:
    devices:
      requests:
      - name: nic
        exactly:
          deviceClassName: dranet
          count: $2
          adminAccess: ${BOX_ADMIN_ACCESS:-false}
          selectors:
          - cel:
              expression: '$3'$config
EOF
}

# box_nic_template NAME NIC INTERFACE: a ResourceClaimTemplate taking NIC by
# CEL on dra.net/ifName, with INTERFACE as dranet's config.
box_nic_template() {
  box_template "$1" 1 "device.attributes[\"dra.net\"].ifName == \"$2\"" "$3"
}

box_nic_pod() {
  box_nic_template "$1" "$2" "{name: net1, mtu: 1400, addresses: [\"$3\"]}"
  box_pod "$1" resourceClaimTemplateName "$1"
}

# box_netdev_standins EXPECTED_YAML: for each netdev EXPECTED_YAML lists (a
# node type's packaging/examples/<type>/expected.yaml), a stand-in on this
# machine: a veth with the snapshot's name, MAC, MTU, address and routes, its
# other end in a router namespace that holds the gateway; a peer host behind
# the router (its address in peer_address, reached over peer_netdev). Exits 77
# when this machine's own routes reach one of the gateways.
readonly ROUTER=dnbox-router PEER=dnbox-peer
box_netdev_standins() {
  local plan kind name mac mtu address gateway rest default_gw route host_address i
  plan=$(box_netdev_plan "$1")
  if [[ -n $plan ]]; then
    log "stand-ins for the snapshot's netdevs, a router and a peer host"
    # Never on a machine whose own networks hold the snapshot's subnets: each
    # gateway must be unreachable here, or reached only through the default route.
    default_gw=$(ip -4 route show default | awk '{print $3; exit}')
    while read -r kind name mac mtu address gateway; do
      [[ $kind == netdev ]] || continue
      route=$(ip -4 route get "$gateway" 2>/dev/null | head -1) || route=""
      if [[ -n $route && ( -z $default_gw || $route != *" via $default_gw "* ) ]]; then
        log "skipped: $gateway (the gateway of $name) is on a network of this machine: $route"
        exit 77
      fi
    done <<<"$plan"
    box_add_netns "$ROUTER"
    box_add_netns "$PEER"
    ip netns exec "$ROUTER" sysctl -qw net.ipv4.ip_forward=1 net.ipv4.conf.all.rp_filter=0 net.ipv4.conf.default.rp_filter=0
    i=0
    while read -r kind name rest; do
      if [[ $kind == netdev ]]; then
        read -r mac mtu address gateway <<<"$rest"
        ip link add "$name" address "$mac" mtu "$mtu" type veth peer name "r$i" netns "$ROUTER" mtu "$mtu"
        box_record_link "$name"
        ip addr add "$address" dev "$name"
        ip link set "$name" up
        ip -n "$ROUTER" addr add "$gateway/32" dev "r$i"
        ip -n "$ROUTER" link set "r$i" up
        ip -n "$ROUTER" route add "${address%/*}" dev "r$i"
        if ((i == 0)); then
          # The peer host: the next address of gpu0rdma0's subnet, behind the router.
          host_address=${address%/*}
          peer_address=${host_address%.*}.$((${host_address##*.} + 1))
          ip link add p0 netns "$ROUTER" mtu "$mtu" type veth peer name eth0 netns "$PEER" mtu "$mtu"
          ip -n "$ROUTER" addr add "$gateway/32" dev p0
          ip -n "$ROUTER" link set p0 up
          ip -n "$ROUTER" route add "$peer_address" dev p0
          ip -n "$PEER" addr add "$peer_address/32" dev eth0
          ip -n "$PEER" link set eth0 up
          ip -n "$PEER" route add "$gateway" dev eth0 scope link
          ip -n "$PEER" route add "${gateway%.*}.0/24" via "$gateway" dev eth0
          peer_netdev=$name
        fi
        i=$((i + 1))
      else
        # shellcheck disable=SC2086
        ip route add $rest
      fi
    done <<<"$plan"
    log "   $i stand-in netdevs; peer host $peer_address behind the router, reached over $peer_netdev"
  fi
}

# The netdevs EXPECTED_YAML lists, one line each: NAME MAC MTU ADDRESS
# GATEWAY, then its routes as `ip route add` arguments, one per line prefixed
# with "route ".
box_netdev_plan() {
  python3 - "$1" <<'EOF'
import sys, yaml
spec = yaml.safe_load(open(sys.argv[1]))["spec"]
for name, n in (spec.get("netdevs") or {}).items():
    address = n["addresses"][0]
    gateway = next(r.split()[0] for r in n["routes"] if " scope link" in r and " via " not in r)
    print("netdev", name, n["mac"], n["mtu"], address, gateway)
    for r in n["routes"]:
        print("route", name, r)
EOF
}

# box_sleeper NAMESPACE POD RESOURCES [CLAIMS]: a busybox pod that sleeps;
# RESOURCES is its container's resources and CLAIMS its resourceClaims (YAML
# flow style, on one line).
box_sleeper() {
  k apply -f - >/dev/null <<EOF
apiVersion: v1
kind: Pod
metadata: {name: $2, namespace: $1}
spec:
  terminationGracePeriodSeconds: 1
  containers:
  - name: c
    image: $BUSYBOX_IMAGE
    imagePullPolicy: Never
    command: [sleep, "3600"]
    resources: $3
  resourceClaims: ${4:-[]}
EOF
}

# box_pod POD FIELD NAME: a busybox pod that sleeps, holding one claim
# (FIELD: resourceClaimTemplateName or resourceClaimName).
box_pod() {
  box_sleeper default "$1" "{claims: [{name: devices}]}" "[{name: devices, $2: $3}]"
}

# box_pod_has_nic POD ADDRESS: net1 with ADDRESS and MTU 1400 inside POD.
box_pod_has_nic() {
  local in_pod
  in_pod=$(k exec "$1" -- ip -o addr show dev net1 2>&1) || fail "net1 is not in $1: $in_pod"
  grep -q "$2" <<<"$in_pod" || fail "net1 in $1 lacks $2: $in_pod"
  k exec "$1" -- ip -o link show dev net1 | grep -q "mtu 1400" || fail "net1 in $1 has not MTU 1400"
}

# box_nic_home NIC MAC: NIC back on the host (waits up to 10 s) with MAC.
box_nic_home() {
  local i
  for ((i = 0; i < 100; i++)); do ip link show "$1" >/dev/null 2>&1 && break; sleep 0.1; done
  ip -o link show "$1" 2>/dev/null | grep -qi "$2" || fail "$1 did not come back to the host with MAC $2"
}

# box_return_like_hardware NIC MAC: the kernel gives a physical NIC whose
# network namespace dies back to the host, down, under the name it had there
# (devN when the host has that name); an ifb dies with the namespace. To
# stand in for the physical one, a keeper holds the pod namespace that has
# NIC with MAC (a bind mount listed in RUN_DIR/box-held-netns, which node.sh
# down unmounts) and, once the runtime has removed the namespace's own mount
# (the sandbox stopped), does what the kernel would, then lets it go.
box_return_like_hardware() {
  local nic=$1 mac=$2 path name="" hold
  for path in /var/run/netns/*; do
    ip -n "${path##*/}" -o link show "$nic" 2>/dev/null | grep -qi "$mac" && { name=${path##*/}; break; }
  done
  [[ -n $name ]] || fail "no pod network namespace has $nic with MAC $mac"
  hold=$run/held-netns-$name
  : >"$hold"
  echo "$hold" >>"$run/box-held-netns"
  mount --bind "/var/run/netns/$name" "$hold"
  (
    cd /
    for ((i = 0; i < 6000; i++)); do [[ -e /var/run/netns/$name ]] || break; sleep 0.05; done
    if [[ ! -e /var/run/netns/$name ]] && nsenter --net="$hold" ip link show "$nic" >/dev/null 2>&1; then
      home=$nic
      for ((i = 0; ; i++)); do ip link show "$home" >/dev/null 2>&1 || break; home=dev$i; done
      nsenter --net="$hold" ip link set dev "$nic" down
      nsenter --net="$hold" ip link set dev "$nic" netns 1 name "$home"
      echo "$nic $home" >>"$run/box-returned"
    fi
    umount "$hold" && rm -f "$hold"
  ) >>"$run/box-keeper.log" 2>&1 &
  box_keepers+=("$!")
  log "   $nic comes back from $name as hardware would (keeper $!)"
}

box_audit() {
  k get clusterrole dranet -o json >"$run/clusterrole.json"
  python3 "$here/audit_check.py" --audit-log "$AUDIT_LOG" --clusterrole "$run/clusterrole.json" \
    --user system:serviceaccount:kube-system:dranet "$@" >&2 || fail "dranetd's requests do not fit its ClusterRole"
}

box_down() {
  trap - EXIT
  box_remove_links
  bash "$here/node.sh" down "$run"
  bash "$here/leftovers.sh" "$run" "$K8S_BIN_DIR" "$run.preexisting" || fail "the node left something behind"
  rm -f "$run.preexisting"
}
