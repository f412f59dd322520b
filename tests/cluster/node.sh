#!/usr/bin/env bash
# A real single-node Kubernetes on this machine, from the components
# build.sh makes (tests/cluster/README.md):
#
#   node.sh up   RUN_DIR   build (cached) and start; prints KEY=VALUE lines
#   node.sh env  RUN_DIR   print those lines again
#   node.sh down RUN_DIR   stop everything and remove what the run made
#   node.sh restart RUN_DIR kubelet|containerd
#                          stop one component (SIGTERM) and start it again
#   node.sh crash RUN_DIR  SIGKILL every process of the node (control plane,
#                          kubelet, containerd, shims, containers) and start
#                          the node again, as after a power cut: state on
#                          disk (etcd, the kubelet's and containerd's, pinned
#                          network namespaces) stays as it was
#
# etcd, kube-apiserver (TLS, Node,RBAC authorization, NodeRestriction, an
# audit log), kube-controller-manager, kube-scheduler and a kubelet on
# containerd (tests/runtime/runtime_env.sh, NRI on) with the bridge CNI. Every
# listener is on one address of the loopback interface, the first of the
# service range (default 10.233.0.1): the `kubernetes` Service's ClusterIP is
# the API server's own address, so a hostNetwork pod's in-cluster
# configuration reaches it without a service proxy.
# The node keeps what a node keeps where a node keeps it, so manifests apply
# unchanged: the kubelet's root /var/lib/kubelet, NRI's socket
# /var/run/nri/nri.sock, pod network namespaces in /var/run/netns, pod logs
# under /var/log. `down` removes every one of those the run created, its
# processes, mounts, cgroups, links and the address, also after a test was
# killed midway (run `down` on the same RUN_DIR).
#
# Environment: DRANET_K8S_VERSION (build.sh), DRANET_CLUSTER_CACHE (build.sh),
# DRANET_RUNTIME_CACHE (containerd download cache, default
# ~/.cache/dranet-runtime), DRANET_CLUSTER_SERVICE_CIDR (a /24, default
# 10.233.0.0/24), DRANET_CLUSTER_NODE_NAME (default dranet-node),
# DRANET_CLUSTER_CONTAINERD (2: containerd 2.x built from its Go module by
# scripts/go_tool.sh, the default; 1.7: Debian's, as tests/runtime runs it).
# Exit 77 (skip) when build.sh or the runtime download skips; needs root.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
runtime_env=$here/../runtime/runtime_env.sh
readonly MARKER=.dranet-cluster-run
# The kernel settings the kubelet changes (kubelet's setupKernelTunables).
readonly KERNEL_TUNABLES=(kernel/panic kernel/panic_on_oops vm/overcommit_memory)
# Created by the kubelet or by dranet's DaemonSet (hostPath DirectoryOrCreate).
readonly SYSTEM_DIRS=(/var/lib/kubelet /var/run/dranet /var/run/cdi /var/log/pods /var/log/containers
                      /dev/infiniband)

log() { printf 'cluster/node: %s\n' "$*" >&2; }
die() { log "$*"; exit 1; }
cd /

service_cidr=${DRANET_CLUSTER_SERVICE_CIDR:-10.233.0.0/24}
[[ $service_cidr =~ ^([0-9]+\.[0-9]+\.[0-9]+)\.0/24$ ]] || die "DRANET_CLUSTER_SERVICE_CIDR must be a /24: $service_cidr"
ip=${BASH_REMATCH[1]}.1
node_name=${DRANET_CLUSTER_NODE_NAME:-dranet-node}

# ---------------------------------------------------------------------------
# certificates and kubeconfigs
# ---------------------------------------------------------------------------

# cert NAME CN O USAGE [SANS]: an ECDSA P-256 key and a certificate signed by
# the run's CA; USAGE is serverAuth, clientAuth or both.
cert() {
  local pki=$1/pki name=$2 cn=$3 o=$4 usage=$5 sans=${6:-}
  local subj="/CN=$cn"
  [[ -n $o ]] && subj+="/O=$o"
  {
    echo "basicConstraints=critical,CA:FALSE"
    echo "keyUsage=critical,digitalSignature,keyEncipherment"
    echo "extendedKeyUsage=$usage"
    [[ -n $sans ]] && echo "subjectAltName=$sans"
  } >"$pki/$name.ext"
  openssl req -new -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes \
    -keyout "$pki/$name.key" -out "$pki/$name.csr" -subj "$subj" 2>/dev/null
  openssl x509 -req -in "$pki/$name.csr" -CA "$pki/ca.crt" -CAkey "$pki/ca.key" -CAcreateserial \
    -days 7 -sha256 -extfile "$pki/$name.ext" -out "$pki/$name.crt" 2>/dev/null
  rm -f "$pki/$name.csr" "$pki/$name.ext"
}

# kubeconfig RUN NAME: RUN/NAME.kubeconfig with the client certificate NAME.
kubeconfig() {
  local run=$1 name=$2
  cat >"$run/$name.kubeconfig" <<EOF
apiVersion: v1
kind: Config
clusters:
- name: node
  cluster:
    server: https://$ip:443
    certificate-authority: $run/pki/ca.crt
users:
- name: $name
  user:
    client-certificate: $run/pki/$name.crt
    client-key: $run/pki/$name.key
contexts:
- name: node
  context: {cluster: node, user: $name}
current-context: node
EOF
}

make_pki() {
  local run=$1 pki=$1/pki
  mkdir -p "$pki"
  openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 7 -sha256 \
    -keyout "$pki/ca.key" -out "$pki/ca.crt" -subj "/CN=dranet-node-ca" 2>/dev/null
  cert "$run" apiserver kube-apiserver "" serverAuth \
    "IP:$ip,IP:127.0.0.1,DNS:localhost,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc,DNS:kubernetes.default.svc.cluster.local"
  cert "$run" kubelet-serving "system:node:$node_name" system:nodes serverAuth "IP:$ip,DNS:$node_name"
  cert "$run" admin admin system:masters clientAuth
  cert "$run" apiserver-kubelet-client kube-apiserver-kubelet-client system:masters clientAuth
  cert "$run" kubelet "system:node:$node_name" system:nodes clientAuth
  cert "$run" controller-manager system:kube-controller-manager "" clientAuth
  cert "$run" scheduler system:kube-scheduler "" clientAuth
  openssl ecparam -name prime256v1 -genkey -noout -out "$pki/sa.key" 2>/dev/null
  openssl ec -in "$pki/sa.key" -pubout -out "$pki/sa.pub" 2>/dev/null
  local n
  for n in admin kubelet controller-manager scheduler; do kubeconfig "$run" "$n"; done
}

# ---------------------------------------------------------------------------
# processes
# ---------------------------------------------------------------------------

# launch RUN NAME ARGS...: start bin/NAME with ARGS in the background, its
# working directory RUN (so `down` finds it even without its pid file).
launch() {
  local run=$1 name=$2
  shift 2
  (
    cd "$run"
    exec setsid "$(cat "$run/bin_dir")/$name" "$@" </dev/null >>"$run/logs/$name.log" 2>&1
  ) &
  echo $! >"$run/pids/$name"
}

# wait_for RUN WHAT SECONDS COMMAND...: until COMMAND succeeds.
wait_for() {
  local run=$1 what=$2 seconds=$3 i
  shift 3
  for ((i = 0; i < seconds * 5; i++)); do
    "$@" >/dev/null 2>&1 && return 0
    local f
    for f in "$run"/pids/*; do
      [[ -d /proc/$(cat "$f") ]] || { tail -n 30 "$run/logs/${f##*/}.log" >&2; die "${f##*/} exited while waiting for $what"; }
    done
    sleep 0.2
  done
  die "$what not within $seconds s (logs: $run/logs)"
}

kubectl_as_admin() { "$(cat "$1/bin_dir")/kubectl" --kubeconfig "$1/admin.kubeconfig" "${@:2}"; }

write_audit_policy() {
  # Every request, with who made it, the verb, resource, subresource and
  # the response code (level Metadata): what the least-privilege check reads.
  cat >"$1/audit-policy.yaml" <<'EOF'
apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: [RequestReceived]
rules:
- level: Metadata
EOF
}

write_kubelet_config() {
  local run=$1 containerd_socket=$2
  cat >"$run/kubelet-config.yaml" <<EOF
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
address: $ip
port: 10250
readOnlyPort: 0
healthzBindAddress: $ip
healthzPort: 10248
tlsCertFile: $run/pki/kubelet-serving.crt
tlsPrivateKeyFile: $run/pki/kubelet-serving.key
authentication:
  anonymous: {enabled: false}
  webhook: {enabled: true}
  x509: {clientCAFile: $run/pki/ca.crt}
authorization: {mode: Webhook}
containerRuntimeEndpoint: unix://$containerd_socket
# containerd's runc runs with SystemdCgroup = false.
cgroupDriver: cgroupfs
# This machine kind mounts cgroup v1 hierarchies; kubelet >= 1.35 refuses
# them unless told (kubernetes/kubernetes#134298).
failCgroupV1: false
failSwapOn: false
# The kubelet sets kernel.panic=10, kernel.panic_on_oops=1 and
# vm.overcommit_memory=1, as on every node (true would refuse to start on a
# machine with other values); node.sh down puts the machine's values back.
protectKernelDefaults: false
makeIPTablesUtilChains: false
podLogsDir: /var/log/pods
clusterDomain: cluster.local
resolvConf: /etc/resolv.conf
# A test machine's disk is often fuller than a node's: never evict for it.
evictionHard: {memory.available: "50Mi", nodefs.available: "1%", imagefs.available: "1%", nodefs.inodesFree: "1%"}
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
# Pods get the images imported into containerd; nothing is pulled.
serializeImagePulls: false
maxPods: 64
nodeStatusUpdateFrequency: 2s
syncFrequency: 5s
EOF
}

# ---------------------------------------------------------------------------
# components
# ---------------------------------------------------------------------------

start_etcd() {
  local run=$1
  launch "$run" etcd --name node --data-dir "$run/etcd" \
    --listen-client-urls "http://$ip:2379" --advertise-client-urls "http://$ip:2379" \
    --listen-peer-urls "http://$ip:2380" --initial-advertise-peer-urls "http://$ip:2380" \
    --initial-cluster "node=http://$ip:2380" --listen-metrics-urls "http://$ip:2381" \
    --quota-backend-bytes 536870912 --log-level warn
  wait_for "$run" etcd 30 curl -fsS "http://$ip:2379/health"
}

start_apiserver() {
  local run=$1 pki=$1/pki
  launch "$run" kube-apiserver --etcd-servers "http://$ip:2379" \
    --bind-address "$ip" --secure-port 443 --advertise-address "$ip" \
    --tls-cert-file "$pki/apiserver.crt" --tls-private-key-file "$pki/apiserver.key" \
    --client-ca-file "$pki/ca.crt" \
    --kubelet-client-certificate "$pki/apiserver-kubelet-client.crt" \
    --kubelet-client-key "$pki/apiserver-kubelet-client.key" \
    --kubelet-certificate-authority "$pki/ca.crt" \
    --service-account-key-file "$pki/sa.pub" --service-account-signing-key-file "$pki/sa.key" \
    --service-account-issuer https://kubernetes.default.svc.cluster.local \
    --service-cluster-ip-range "$service_cidr" \
    --kubelet-preferred-address-types InternalIP \
    --authorization-mode Node,RBAC --enable-admission-plugins NodeRestriction \
    --audit-policy-file "$run/audit-policy.yaml" --audit-log-path "$run/audit.log" \
    --audit-log-format json --audit-log-mode blocking \
    --profiling=false --v=1
  wait_for "$run" kube-apiserver 120 kubectl_as_admin "$run" get --raw /readyz
}

start_controllers() {
  local run=$1 pki=$1/pki
  launch "$run" kube-controller-manager --kubeconfig "$run/controller-manager.kubeconfig" \
    --authentication-kubeconfig "$run/controller-manager.kubeconfig" \
    --authorization-kubeconfig "$run/controller-manager.kubeconfig" \
    --bind-address "$ip" --secure-port 10257 --leader-elect=false \
    --root-ca-file "$pki/ca.crt" --service-account-private-key-file "$pki/sa.key" \
    --use-service-account-credentials --cluster-signing-cert-file "$pki/ca.crt" \
    --cluster-signing-key-file "$pki/ca.key" --profiling=false --v=1
  launch "$run" kube-scheduler --kubeconfig "$run/scheduler.kubeconfig" \
    --authentication-kubeconfig "$run/scheduler.kubeconfig" \
    --authorization-kubeconfig "$run/scheduler.kubeconfig" \
    --bind-address "$ip" --secure-port 10259 --leader-elect=false --profiling=false --v=1
}

start_control_plane() {
  start_etcd "$1"
  start_apiserver "$1"
  start_controllers "$1"
}

start_kubelet() {
  local run=$1
  launch "$run" kubelet --config "$run/kubelet-config.yaml" --kubeconfig "$run/kubelet.kubeconfig" \
    --root-dir /var/lib/kubelet --hostname-override "$node_name" --node-ip "$ip" --v=1
  wait_for "$run" "node $node_name Ready" 120 \
    kubectl_as_admin "$run" wait --for=condition=Ready "node/$node_name" --timeout=1s
}

# stop_process RUN NAME: SIGTERM, SIGKILL after 10 s; waits until it is gone.
stop_process() {
  local run=$1 name=$2 pid i
  pid=$(cat "$run/pids/$name" 2>/dev/null) || return 0
  kill -TERM "$pid" 2>/dev/null || return 0
  for ((i = 0; i < 100; i++)); do
    [[ -d /proc/$pid ]] || return 0
    ((i == 50)) && { kill -KILL "$pid" 2>/dev/null || true; }
    sleep 0.2
  done
  die "$name (pid $pid) survives SIGKILL"
}

runtime_restart() {
  local run=$1
  bash "$runtime_env" restart "$(cat "$run/runtime_cache")" "$run/containerd" >"$run/containerd.env"
}

cmd_restart() {
  local run=$1 what=$2
  [[ -e $run/$MARKER ]] || die "$run is not a cluster run directory"
  case $what in
    kubelet)
      stop_process "$run" kubelet
      rm -f "$run/pids/kubelet"
      echo "--- restart $(date -u +%FT%TZ) ---" >>"$run/logs/kubelet.log"
      start_kubelet "$run"
      ;;
    containerd) runtime_restart "$run" ;;
    *) die "restart: kubelet or containerd, not $what" ;;
  esac
}

cmd_crash() {
  local run=$1 pids
  [[ -e $run/$MARKER ]] || die "$run is not a cluster run directory"
  mapfile -t pids < <(cluster_pids "$run")
  ((${#pids[@]} == 0)) || kill -KILL "${pids[@]}" 2>/dev/null || true
  bash "$runtime_env" kill "$run/containerd"
  local i
  for ((i = 0; i < 50; i++)); do
    mapfile -t pids < <(cluster_pids "$run")
    ((${#pids[@]} == 0)) && break
    sleep 0.1
  done
  ((${#pids[@]} == 0)) || die "processes of the node survive SIGKILL: ${pids[*]}"
  rm -f "$run"/pids/*
  log "every process of the node killed (SIGKILL); starting it again"
  runtime_restart "$run"
  start_control_plane "$run"
  start_kubelet "$run"
}

record_system_dirs() {
  local run=$1 d
  for d in "${SYSTEM_DIRS[@]}"; do
    [[ -e $d ]] && echo "$d"
  done >"$run/preexisting" || true
}

cmd_up() {
  local run=$1 bin status
  [[ $EUID -eq 0 ]] || die "up needs root"
  if [[ -e $run/$MARKER ]]; then
    cmd_down "$run"
  elif [[ -d $run && -n "$(ls -A "$run")" ]]; then
    die "$run exists, is not empty and is not a cluster run directory"
  fi
  if [[ -d /var/lib/kubelet && -n "$(ls -A /var/lib/kubelet 2>/dev/null)" ]]; then
    die "/var/lib/kubelet is in use (a kubelet on this machine?): the node in a box needs it"
  fi
  ip -o addr show dev lo | grep -qF " $ip/" && die "$ip is already on lo: another node in a box runs (node.sh down its RUN_DIR)"

  status=0
  bin=$("$here/build.sh") || status=$?
  ((status == 0)) || exit "$status"
  local runtime_cache=${DRANET_RUNTIME_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/dranet-runtime}
  status=0
  bash "$runtime_env" fetch "$runtime_cache" || status=$?
  ((status == 0)) || exit "$status"
  bash "$runtime_env" images "$runtime_cache"
  local containerd_bin=""
  case ${DRANET_CLUSTER_CONTAINERD:-2} in
    2)
      status=0
      containerd_bin=$(bash "$here/../../scripts/go_tool.sh" containerd) || status=$?
      ((status == 0)) || exit "$status"
      ;;
    1.7) ;;
    *) die "DRANET_CLUSTER_CONTAINERD is 2 or 1.7, not ${DRANET_CLUSTER_CONTAINERD}" ;;
  esac

  mkdir -p "$run"/{logs,pids,etcd}
  : >"$run/$MARKER"
  echo "$bin" >"$run/bin_dir"
  echo "$ip" >"$run/address"
  echo "$runtime_cache" >"$run/runtime_cache"
  record_system_dirs "$run"
  local t
  for t in "${KERNEL_TUNABLES[@]}"; do echo "$t $(cat "/proc/sys/$t")"; done >"$run/kernel-tunables"
  ip addr add "$ip/32" dev lo
  # systemd makes every mount shared at boot, and dranetd's DaemonSet relies
  # on it (/dev/infiniband and /var/run/netns with HostToContainer
  # propagation; containerd refuses them on a private mount). A machine
  # without systemd has private mounts: shared for the run, private again at
  # `down`.
  if ! awk '$5 == "/" && / shared:/ {found = 1} END {exit !found}' /proc/self/mountinfo; then
    mount --make-rshared /
    : >"$run/root_made_shared"
  fi
  make_pki "$run"
  write_audit_policy "$run"

  # containerd first: the kubelet needs it, and its NRI socket where a
  # node has it (dranetd's manifests mount /var/run/nri).
  # Its own bridge and subnet, apart from tests/runtime's containerd.
  DRANET_RUNTIME_CONTAINERD_BIN=$containerd_bin \
  DRANET_RUNTIME_NRI_SOCKET=/var/run/nri/nri.sock DRANET_RUNTIME_NETNS_UNDER_STATE=false \
    DRANET_RUNTIME_BRIDGE=${DRANET_RUNTIME_BRIDGE:-drnkbox0} DRANET_RUNTIME_SUBNET=${DRANET_RUNTIME_SUBNET:-10.235.0.0/24} \
    bash "$runtime_env" start "$runtime_cache" "$run/containerd" >"$run/containerd.env"
  local containerd_socket
  containerd_socket=$(sed -n 's/^CONTAINERD_SOCKET=//p' "$run/containerd.env")

  start_control_plane "$run"
  write_kubelet_config "$run" "$containerd_socket"
  start_kubelet "$run"
  # Namespaces get their default ServiceAccount from the controller-manager.
  wait_for "$run" "the default ServiceAccount" 60 kubectl_as_admin "$run" -n default get serviceaccount default
  cmd_env "$run"
}

cmd_env() {
  local run=$1
  [[ -e $run/$MARKER ]] || die "$run is not a cluster run directory"
  cat <<EOF
KUBECONFIG=$run/admin.kubeconfig
KUBECTL=$(cat "$run/bin_dir")/kubectl
K8S_BIN_DIR=$(cat "$run/bin_dir")
NODE_NAME=$node_name
API_SERVER=https://$(cat "$run/address"):443
AUDIT_LOG=$run/audit.log
LOG_DIR=$run/logs
BUSYBOX=$(cat "$run/runtime_cache")/root/bin/busybox
EOF
  cat "$run/containerd.env" 2>/dev/null || true
}

# ---------------------------------------------------------------------------
# down
# ---------------------------------------------------------------------------

# PIDs of the run's Kubernetes processes: those in pids/ still running our
# binary, and any process whose working directory is RUN (launch's).
cluster_pids() {
  local run=$1 f pid p cwd bin
  bin=$(cat "$run/bin_dir" 2>/dev/null) || bin=""
  for f in "$run"/pids/*; do
    [[ -f $f ]] || continue
    pid=$(cat "$f")
    [[ -n $bin && "$(readlink "/proc/$pid/exe" 2>/dev/null)" == "$bin/"* ]] && echo "$pid"
  done
  for p in /proc/[0-9]*; do
    cwd=$(readlink "$p/cwd" 2>/dev/null) || continue
    [[ $cwd == "$run" ]] && echo "${p#/proc/}"
  done
}

cmd_down() {
  local run=$1 pids i d
  [[ $EUID -eq 0 ]] || die "down needs root"
  [[ -d $run ]] || return 0
  [[ -e $run/$MARKER ]] || die "$run is not a cluster run directory (no $MARKER); not touching it"
  # The kubelet first (it would restart containers), then the control plane.
  for i in kubelet kube-scheduler kube-controller-manager kube-apiserver etcd; do
    [[ -f $run/pids/$i ]] && kill -TERM "$(cat "$run/pids/$i")" 2>/dev/null || true
  done
  for ((i = 0; i < 50; i++)); do
    mapfile -t pids < <(cluster_pids "$run")
    ((${#pids[@]} == 0)) && break
    ((i == 25)) && { kill -KILL "${pids[@]}" 2>/dev/null || true; }
    sleep 0.2
  done
  # What a suite of box_lib.sh made, should it have been killed before it
  # removed them (namespaces before containerd's stop, which unmounts
  # /run/netns when the run created it).
  local name
  while read -r name; do ip link del "$name" 2>/dev/null || true; done 2>/dev/null <"$run/box-links" || true
  while read -r name; do ip netns del "$name" 2>/dev/null || true; done 2>/dev/null <"$run/box-netns" || true
  while read -r name; do umount "$name" 2>/dev/null || true; done 2>/dev/null <"$run/box-held-netns" || true
  # containerd, its shims and every container (runtime_env.sh stop).
  [[ -d $run/containerd ]] && bash "$runtime_env" stop "$run/containerd"
  # Volumes the kubelet mounted (projected tokens, ...).
  bash "$runtime_env" unmount /var/lib/kubelet
  if grep -qxF /var/lib/kubelet "$run/preexisting" 2>/dev/null; then
    :
  else
    rm -rf --one-file-system /var/lib/kubelet
  fi
  for d in "${SYSTEM_DIRS[@]}"; do
    [[ $d == /var/lib/kubelet ]] && continue
    grep -qxF "$d" "$run/preexisting" 2>/dev/null || rm -rf --one-file-system "$d"
  done
  [[ -f $run/box-netns-mount-made ]] && { umount /run/netns 2>/dev/null || true; }
  [[ -f $run/root_made_shared ]] && mount --make-rprivate /
  local tunable value
  while read -r tunable value; do
    echo "$value" >"/proc/sys/$tunable" || log "cannot restore /proc/sys/$tunable to $value"
  done <"$run/kernel-tunables" 2>/dev/null || true
  local address
  address=$(cat "$run/address" 2>/dev/null) || address=""
  [[ -n $address ]] && ip addr del "$address/32" dev lo 2>/dev/null || true
  rm -rf "$run"
}

usage() { sed -n '2,15p' "$0" >&2; exit 2; }
[[ $# -ge 2 ]] || usage
run=$(realpath -m -- "$2")
case $1/$# in
  up/2) cmd_up "$run" ;;
  env/2) cmd_env "$run" ;;
  down/2) cmd_down "$run" ;;
  restart/3) cmd_restart "$run" "$3" ;;
  crash/2) cmd_crash "$run" ;;
  *) usage ;;
esac
