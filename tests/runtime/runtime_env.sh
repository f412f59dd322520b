#!/usr/bin/env bash
# A private, throw-away containerd 1.7 with NRI enabled, for tests that need a
# real container runtime.
#
# Nothing is installed system-wide: the runtime comes from Debian packages that
# are downloaded with a private apt configuration and unpacked with `dpkg -x`
# into a cache directory (scripts/debian_fetch.sh), and every socket, state
# and data directory of the daemon lives under a per-run directory. `stop`
# removes all of it again.
#
# Usage:
#   runtime_env.sh fetch   CACHE_DIR                 download + unpack (exit 77: archive unreachable)
#   runtime_env.sh images  CACHE_DIR [PAUSE_BINARY]  build the OCI image tarballs
#   runtime_env.sh start   CACHE_DIR RUN_DIR         start containerd, print KEY=VALUE lines
#   runtime_env.sh restart CACHE_DIR RUN_DIR         restart containerd only (pods keep running)
#   runtime_env.sh stop    RUN_DIR                   kill and remove everything of that run
#   runtime_env.sh kill    RUN_DIR                   SIGKILL containerd, its shims and containers; state stays (then restart)
#   runtime_env.sh binary-image RUN_DIR NAME BINARY import an image of BINARY and its libraries
#   runtime_env.sh unmount DIR                       unmount everything at or below DIR, deepest first
#
# `start`, `restart` and `stop` need root. See README.md next to this script.
set -euo pipefail

SCRIPT_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
readonly SCRIPT_DIR
# debian_fetch_current, debian_fetch: download and unpack Debian packages.
# shellcheck source-path=SCRIPTDIR source=../../scripts/debian_fetch.sh
source "${SCRIPT_DIR}/../../scripts/debian_fetch.sh"
# make_image, copy_libraries: OCI image tarballs without a container engine.
# shellcheck source-path=SCRIPTDIR source=../../packaging/images/oci_layout.sh
source "${SCRIPT_DIR}/../../packaging/images/oci_layout.sh"

# Never keep a working directory inside a run directory: `stop` treats
# processes whose cwd is under RUN_DIR as part of the run.
cd /

readonly PAUSE_IMAGE="localhost/dranet-test/pause:1"
readonly BUSYBOX_IMAGE="localhost/dranet-test/busybox:1"
# containerd's CRI plugin always works in this containerd namespace.
readonly CRI_NAMESPACE="k8s.io"

# Overridable for a machine where these collide with something else.
DEBIAN_MIRROR="${DRANET_RUNTIME_DEBIAN_MIRROR:-http://deb.debian.org/debian}"
DEBIAN_KEYRING="${DRANET_RUNTIME_DEBIAN_KEYRING:-/usr/share/keyrings/debian-archive-keyring.gpg}"
CNI_BRIDGE_DEFAULT="${DRANET_RUNTIME_BRIDGE:-drntcni0}"
CNI_SUBNET_DEFAULT="${DRANET_RUNTIME_SUBNET:-10.231.0.0/24}"
# Where a node keeps them, for a run that stands in for a whole node
# (tests/cluster): the NRI socket at this path instead of RUN_DIR/nri.sock,
# and pod network namespaces under /var/run/netns instead of the state dir.
NRI_SOCKET_OVERRIDE="${DRANET_RUNTIME_NRI_SOCKET:-}"
NETNS_UNDER_STATE="${DRANET_RUNTIME_NETNS_UNDER_STATE:-true}"
# Another containerd (a directory holding containerd, containerd-shim-runc-v2
# and ctr, such as the 2.x scripts/go_tool.sh builds) instead of Debian's 1.7;
# runc and the CNI plugins still come from the cache.
CONTAINERD_BIN_OVERRIDE="${DRANET_RUNTIME_CONTAINERD_BIN:-}"

# Package name / Debian suite. containerd >= 1.7 is the first with NRI, so it
# (and the CNI plugins and CRI api of the same era) come from trixie; its
# binaries only need libc. runc comes from bookworm: trixie's needs GLIBC_2.38.
readonly PACKAGES=(
    containerd/trixie
    containernetworking-plugins/trixie
    golang-github-kubernetes-cri-api-dev/trixie
    runc/bookworm
    busybox-static/bookworm
)
# Bump to make every existing cache fetch (or build images) again.
readonly FETCH_FORMAT=1
readonly IMAGES_FORMAT=1

# Where the CRI v1 api.proto lives inside golang-github-kubernetes-cri-api-dev.
readonly CRI_PROTO_IN_PACKAGE="usr/share/gocode/src/k8s.io/cri-api/pkg/apis/runtime/v1/api.proto"

# Written into every run directory; `stop` refuses to delete a directory
# without it.
readonly RUN_MARKER=".dranet-runtime-run"

# containerd 1.7 puts shim sockets under /run/containerd/s regardless of its
# configured state directory; ctr puts its fifos under /run/containerd/fifo.
# libcni (inside containerd) caches results under /var/lib/cni/results.
readonly SYSTEM_DIRS=(/run/containerd /run/containerd/s /run/containerd/fifo
                      /run/containerd/runc /var/lib/cni /var/lib/cni/results)

log() { printf 'runtime_env: %s\n' "$*" >&2; }
die() { log "$*"; exit 1; }

abspath() { realpath -m -- "$1"; }

need_root() {
    [[ ${EUID} -eq 0 ]] || die "'$1' needs root"
}

# ---------------------------------------------------------------------------
# fetch
# ---------------------------------------------------------------------------

fetch_is_current() {
    local cache=$1 stamp=$2
    debian_fetch_current "${cache}" "${stamp}" || return 1
    local f
    for f in usr/bin/containerd usr/bin/containerd-shim-runc-v2 usr/bin/ctr usr/sbin/runc \
             usr/lib/cni/bridge usr/lib/cni/host-local usr/lib/cni/loopback bin/busybox; do
        [[ -x ${cache}/root/${f} ]] || return 1
    done
    [[ -f ${cache}/cri-api.proto ]]
}

cmd_fetch() {
    [[ $# -eq 1 ]] || die "usage: fetch CACHE_DIR"
    local cache
    cache=$(abspath "$1")
    mkdir -p "${cache}"

    # Several test processes may share one cache: serialise fetch/images.
    exec 9>"${cache}/.lock"
    flock 9

    local stamp="format=${FETCH_FORMAT} mirror=${DEBIAN_MIRROR} packages=${PACKAGES[*]}"
    if fetch_is_current "${cache}" "${stamp}"; then
        return 0
    fi
    # Exits 77 (skip) when the archive is unreachable, 1 when it lacks a package.
    debian_fetch "${cache}" "${stamp}" "${PACKAGES[@]}"
    [[ -f ${cache}/root/${CRI_PROTO_IN_PACKAGE} ]] \
        || die "api.proto not at ${CRI_PROTO_IN_PACKAGE} in golang-github-kubernetes-cri-api-dev"
    cp "${cache}/root/${CRI_PROTO_IN_PACKAGE}" "${cache}/cri-api.proto"
    fetch_is_current "${cache}" "${stamp}" || die "unpacked packages lack expected binaries"
}

# ---------------------------------------------------------------------------
# images
# ---------------------------------------------------------------------------

build_pause_image() {
    local images=$1 pause_bin=$2 rootfs="$1/rootfs-pause"
    rm -rf "${rootfs}"
    mkdir -p "${rootfs}"
    install -m 0755 "${pause_bin}" "${rootfs}/pause"
    make_image "${images}/pause.tar" "${PAUSE_IMAGE}" "${rootfs}" \
        '{"Env":["PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"],"Entrypoint":["/pause"],"WorkingDir":"/"}'
    rm -rf "${rootfs}"
}

build_busybox_image() {
    local images=$1 busybox=$2 rootfs="$1/rootfs-busybox"
    rm -rf "${rootfs}"
    mkdir -p "${rootfs}"/{bin,dev,etc,proc,root,sys,tmp,usr/bin,var}
    chmod 1777 "${rootfs}/tmp"
    install -m 0755 "${busybox}" "${rootfs}/bin/busybox"
    # Same effect as `busybox --install -s /bin`: one symlink per applet
    # (sh, ls, cat, ip, sleep, env, stat, grep, ...).
    local applet
    while read -r applet; do
        [[ -n ${applet} && ${applet} != busybox ]] && ln -s busybox "${rootfs}/bin/${applet}"
    done < <("${busybox}" --list)
    local must
    for must in sh ls cat ip sleep env stat grep; do
        [[ -L ${rootfs}/bin/${must} ]] || die "busybox has no '${must}' applet"
    done
    ln -s /bin/env "${rootfs}/usr/bin/env"
    printf 'root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/nonexistent:/bin/false\n' >"${rootfs}/etc/passwd"
    printf 'root:x:0:\nnogroup:x:65534:\n' >"${rootfs}/etc/group"
    make_image "${images}/busybox.tar" "${BUSYBOX_IMAGE}" "${rootfs}" \
        '{"Env":["PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"],"Cmd":["/bin/sh"],"WorkingDir":"/"}'
    rm -rf "${rootfs}"
}

cmd_images() {
    [[ $# -eq 1 || $# -eq 2 ]] || die "usage: images CACHE_DIR [PAUSE_BINARY]"
    local cache pause_bin busybox images
    cache=$(abspath "$1")
    busybox="${cache}/root/bin/busybox"
    [[ -x ${busybox} ]] || die "${busybox} missing: run 'fetch ${cache}' first"
    images="${cache}/images"
    mkdir -p "${images}"
    exec 9>"${cache}/.lock"
    flock 9

    if [[ $# -eq 2 ]]; then
        pause_bin=$(abspath "$2")
    else
        # Convenience for manual use: build the pause binary here.
        pause_bin="${images}/pause"
        gcc -static -O2 -o "${pause_bin}" "${SCRIPT_DIR}/pause.c" \
            || die "cannot build ${SCRIPT_DIR}/pause.c (need gcc and static libc)"
    fi
    [[ -x ${pause_bin} ]] || die "pause binary ${pause_bin} missing or not executable"

    local stamp
    stamp="format=${IMAGES_FORMAT} pause=$(sha256_of "${pause_bin}") busybox=$(sha256_of "${busybox}") arch=$(oci_arch)"
    if [[ -f ${images}/.stamp && "$(cat "${images}/.stamp")" == "${stamp}" \
          && -f ${images}/pause.tar && -f ${images}/busybox.tar ]]; then
        return 0
    fi
    rm -f "${images}/.stamp"
    build_pause_image "${images}" "${pause_bin}"
    build_busybox_image "${images}" "${busybox}"
    printf '%s' "${stamp}" >"${images}/.stamp"
}

# binary-image RUN_DIR NAME BINARY: an image holding BINARY as
# /usr/bin/<its name> (the entrypoint) and every shared library it loads at
# the path the dynamic loader found it (ldd), imported into the running
# containerd of RUN_DIR for CRI. Built under RUN_DIR, so stop removes it.
cmd_binary_image() {
    [[ $# -eq 3 ]] || die "usage: binary-image RUN_DIR NAME BINARY"
    local run name binary cache rootfs
    run=$(abspath "$1") name=$2 binary=$(abspath "$3")
    [[ -e ${run}/${RUN_MARKER} ]] || die "${run} is not a started run directory"
    [[ -x ${binary} ]] || die "${binary} missing or not executable"
    cache=$(cat "${run}/cache_dir")
    rootfs=$(mktemp -d "${run}/tmp/image.XXXXXX")
    mkdir -p "${rootfs}"/{dev,etc,proc,sys,tmp,usr/bin,var/run}
    install -m 0755 "${binary}" "${rootfs}/usr/bin/${binary##*/}"
    copy_libraries "${rootfs}" "${binary}"
    make_image "${rootfs}.tar" "${name}" "${rootfs}" \
        "{\"Env\":[\"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin\"],\"Entrypoint\":[\"/usr/bin/${binary##*/}\"],\"WorkingDir\":\"/\"}"
    "$(containerd_bin "${run}" "${cache}/root")/ctr" -a "${run}/containerd.sock" -n "${CRI_NAMESPACE}" images import \
        "${rootfs}.tar" >>"${run}/import.log" 2>&1 || { cat "${run}/import.log" >&2; die "importing ${name} failed"; }
    rm -rf "${rootfs}" "${rootfs}.tar"
}

# ---------------------------------------------------------------------------
# start / restart
# ---------------------------------------------------------------------------

write_containerd_config() {
    local cache=$1 run=$2 root="$1/root" validator=""
    # containerd 2.x: its built-in NRI validator on, refusing every kind of
    # adjustment it can judge (dranetd's device nodes, env and device cgroup
    # rules must still pass; 1.7 has no validator).
    if [[ "$("$(containerd_bin "${run}" "${root}")/containerd" --version | awk '{print $3}')" == v2.* ]]; then
        validator='
    [plugins."io.containerd.nri.v1.nri".default_validator]
      enable = true
      reject_oci_hook_adjustment = true
      reject_runtime_default_seccomp_adjustment = true
      reject_unconfined_seccomp_adjustment = true
      reject_custom_seccomp_adjustment = true
      reject_namespace_adjustment = true
      reject_sysctl_adjustment = true'
    fi
    cat >"${run}/config.toml" <<EOF
# Generated by runtime_env.sh. Every path containerd writes to is under
# ${run} (except the shim sockets, which containerd 1.7 always puts
# under /run/containerd/s).
version = 2
root = "${run}/root"
state = "${run}/state"
temp = "${run}/tmp"
# Snapshotters that cannot work here (or would probe the host) are not loaded.
disabled_plugins = [
  "io.containerd.snapshotter.v1.btrfs",
  "io.containerd.snapshotter.v1.zfs",
  "io.containerd.snapshotter.v1.devmapper",
  "io.containerd.snapshotter.v1.aufs",
  "io.containerd.snapshotter.v1.blockfile",
]

[grpc]
  address = "${run}/containerd.sock"

[ttrpc]
  address = "${run}/containerd.sock.ttrpc"

[debug]
  address = "${run}/debug.sock"
  level = "debug"

[plugins]
  # Default would be /opt/containerd.
  [plugins."io.containerd.internal.v1.opt"]
    path = "${run}/opt"

  [plugins."io.containerd.nri.v1.nri"]
    disable = false
    disable_connections = false
    socket_path = "$(cat "${run}/nri_socket")"
    # Pre-installed plugins: none (defaults are /opt/nri/plugins, /etc/nri/conf.d).
    plugin_path = "${run}/nri/plugins"
    plugin_config_path = "${run}/nri/conf.d"
    plugin_registration_timeout = "5s"
    plugin_request_timeout = "2s"${validator}

  [plugins."io.containerd.grpc.v1.cri"]
    sandbox_image = "${PAUSE_IMAGE}"
    # Without this runc fails to apply the pause container's oom_score_adj
    # (-998) on a host without CAP_SYS_RESOURCE:
    # "can't get final child's PID from pipe: EOF".
    restrict_oom_score_adj = true
    # Pod network namespaces under the state dir, not /var/run/netns
    # (unless DRANET_RUNTIME_NETNS_UNDER_STATE=false).
    netns_mounts_under_state_dir = ${NETNS_UNDER_STATE}
    disable_apparmor = true
    enable_selinux = false
    enable_cdi = false
    stream_server_address = "127.0.0.1"
    stream_server_port = "0"

    [plugins."io.containerd.grpc.v1.cri".containerd]
      snapshotter = "overlayfs"
      default_runtime_name = "runc"

      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
        runtime_type = "io.containerd.runc.v2"

        [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
          BinaryName = "${root}/usr/sbin/runc"
          Root = "${run}/runc"
          # cgroup v1 / cgroupfs driver; no systemd needed.
          SystemdCgroup = false

    [plugins."io.containerd.grpc.v1.cri".cni]
      bin_dir = "${root}/usr/lib/cni"
      conf_dir = "${run}/cni/net.d"
      max_conf_num = 1
EOF
}

write_cni_config() {
    local run=$1 network=$2 bridge=$3 subnet=$4
    # No iptables on the test hosts: no gateway, no masquerading. host-local
    # keeps its allocations under the run dir (default /var/lib/cni/networks).
    cat >"${run}/cni/net.d/10-${network}.conflist" <<EOF
{
  "cniVersion": "1.0.0",
  "name": "${network}",
  "plugins": [
    {
      "type": "bridge",
      "bridge": "${bridge}",
      "isGateway": false,
      "ipMasq": false,
      "hairpinMode": false,
      "ipam": {
        "type": "host-local",
        "dataDir": "${run}/cni/ipam",
        "ranges": [[{ "subnet": "${subnet}" }]]
      }
    }
  ]
}
EOF
}

# The directory of the containerd, shim and ctr binaries run $1 uses (cache
# root $2): Debian's, or the override copied into the cache root at start
# (so that every binary of the run still lies under the cache root).
containerd_bin() {
    local run=$1 root=$2
    if [[ -f ${run}/containerd_bin ]]; then cat "${run}/containerd_bin"; else echo "${root}/usr/bin"; fi
}

# For start: the directory the run will use. An override is copied to
# ROOT/opt/containerd-VERSION/bin (under the cache lock; kept for later runs).
choose_containerd_bin() {
    local cache=$1 root="$1/root" version dest f
    if [[ -z ${CONTAINERD_BIN_OVERRIDE} ]]; then
        echo "${root}/usr/bin"
        return
    fi
    for f in containerd containerd-shim-runc-v2 ctr; do
        [[ -x ${CONTAINERD_BIN_OVERRIDE}/${f} ]] || die "DRANET_RUNTIME_CONTAINERD_BIN: no ${f} in ${CONTAINERD_BIN_OVERRIDE}"
    done
    version=$("${CONTAINERD_BIN_OVERRIDE}/containerd" --version | awk '{print $3}')
    [[ ${version} =~ ^v?[0-9][0-9A-Za-z.+~-]*$ ]] || die "cannot tell the version of ${CONTAINERD_BIN_OVERRIDE}/containerd"
    dest="${root}/opt/containerd-${version}/bin"
    (
        exec 9>"${cache}/.lock"
        flock 9
        mkdir -p "${dest}"
        for f in containerd containerd-shim-runc-v2 ctr; do
            cmp -s "${CONTAINERD_BIN_OVERRIDE}/${f}" "${dest}/${f}" || cp -f "${CONTAINERD_BIN_OVERRIDE}/${f}" "${dest}/${f}"
        done
    )
    echo "${dest}"
}

# True if PID is alive and runs the containerd binary of directory $2.
is_our_containerd() {
    local pid=$1 bin=$2 exe
    [[ -n ${pid} && -d /proc/${pid} ]] || return 1
    exe=$(readlink "/proc/${pid}/exe" 2>/dev/null) || return 1
    [[ ${exe} == "${bin}/containerd" ]]
}

launch_containerd() {
    local cache=$1 run=$2 root="$1/root" bin
    bin=$(containerd_bin "${run}" "${root}")
    # Stale sockets would make the readiness check pass too early.
    rm -f "${run}/containerd.sock" "${run}/containerd.sock.ttrpc" "${run}/debug.sock" "$(cat "${run}/nri_socket")"
    # The shims find runc and themselves through PATH. All descriptors above
    # stderr are closed so a caller reading our stdout/pipes is not held open.
    (
        local fd
        for fd in /proc/"${BASHPID}"/fd/*; do
            fd=${fd##*/}
            if [[ ${fd} =~ ^[0-9]+$ ]] && ((fd > 2)); then
                eval "exec ${fd}>&-" 2>/dev/null || true
            fi
        done
        PATH="${bin}:${root}/usr/sbin:${root}/usr/bin:${PATH}" \
            exec "${bin}/containerd" --config "${run}/config.toml" \
            </dev/null >>"${run}/containerd.log" 2>&1
    ) &
    echo "$!" >"${run}/containerd.pid"
}

# Wait (at most ~20 s) until containerd answers on its socket, its CRI and
# NRI plugins loaded, and the NRI socket exists. containerd reports
# "successfully booted" even when the CRI plugin failed to load, so the
# plugin status is checked explicitly.
wait_containerd() {
    local cache=$1 run=$2 ctr pid i plugins status
    ctr=$(containerd_bin "${run}" "${cache}/root")/ctr
    pid=$(cat "${run}/containerd.pid")
    for ((i = 0; i < 200; i++)); do
        if [[ ! -d /proc/${pid} ]] || grep -qs '^State:[[:space:]]*Z' "/proc/${pid}/status"; then
            fail_with_log "${run}" "containerd (pid ${pid}) exited during startup"
        fi
        if [[ -S ${run}/containerd.sock ]] \
            && plugins=$("${ctr}" -a "${run}/containerd.sock" plugins ls 2>/dev/null); then
            status=$(awk '($1 == "io.containerd.grpc.v1" && $2 == "cri") || ($1 == "io.containerd.nri.v1" && $2 == "nri") {print $2 "=" $NF}' <<<"${plugins}" | sort | paste -sd' ')
            case ${status} in
                "cri=ok nri=ok") [[ -S $(cat "${run}/nri_socket") ]] && return 0 ;;
                *error*) fail_with_log "${run}" "containerd plugins failed to load: ${status}" ;;
            esac
        fi
        sleep 0.1
    done
    fail_with_log "${run}" "containerd did not become ready within 20 s"
}

fail_with_log() {
    local run=$1
    shift
    log "$*"
    if [[ -f ${run}/containerd.log ]]; then
        log "last lines of ${run}/containerd.log:"
        tail -n 40 "${run}/containerd.log" >&2
    fi
    exit 1
}

import_images() {
    local cache=$1 run=$2 ctr img
    ctr=$(containerd_bin "${run}" "${cache}/root")/ctr
    for img in pause busybox; do
        "${ctr}" -a "${run}/containerd.sock" -n "${CRI_NAMESPACE}" images import \
            "${cache}/images/${img}.tar" >>"${run}/import.log" 2>&1 \
            || { cat "${run}/import.log" >&2; fail_with_log "${run}" "importing ${img}.tar failed"; }
    done
    local listed
    listed=$("${ctr}" -a "${run}/containerd.sock" -n "${CRI_NAMESPACE}" images ls -q)
    for img in "${PAUSE_IMAGE}" "${BUSYBOX_IMAGE}"; do
        grep -qxF "${img}" <<<"${listed}" || fail_with_log "${run}" "image ${img} missing after import"
    done
}

print_env() {
    local cache=$1 run=$2
    cat <<EOF
CONTAINERD_SOCKET=${run}/containerd.sock
NRI_SOCKET=$(cat "${run}/nri_socket")
CTR=$(containerd_bin "${run}" "${cache}/root")/ctr
CONTAINERD_VERSION=$("$(containerd_bin "${run}" "${cache}/root")/containerd" --version | awk '{print $3}')
PAUSE_IMAGE=${PAUSE_IMAGE}
BUSYBOX_IMAGE=${BUSYBOX_IMAGE}
CNI_BRIDGE=$(cat "${run}/bridge")
CNI_SUBNET=$(cat "${run}/subnet")
CNI_NETWORK=$(cat "${run}/cni_network")
CRI_NAMESPACE=${CRI_NAMESPACE}
CONTAINERD_PID=$(cat "${run}/containerd.pid")
CONTAINERD_LOG=${run}/containerd.log
RUNC=${cache}/root/usr/sbin/runc
RUNC_ROOT=${run}/runc
CRI_API_PROTO=${cache}/cri-api.proto
EOF
}

cmd_start() {
    [[ $# -eq 2 ]] || die "usage: start CACHE_DIR RUN_DIR"
    need_root start
    local cache run root
    cache=$(abspath "$1")
    run=$(abspath "$2")
    root="${cache}/root"
    [[ -x ${root}/usr/bin/containerd ]] || die "${root}/usr/bin/containerd missing: run 'fetch ${cache}' first"
    [[ -f ${cache}/images/pause.tar && -f ${cache}/images/busybox.tar ]] \
        || die "images missing: run 'images ${cache} PAUSE_BINARY' first"
    # sun_path holds 107 bytes; the longest socket is containerd.sock.ttrpc.
    ((${#run} + 22 < 108)) || die "RUN_DIR path too long for unix sockets: ${run}"

    # A leftover from an interrupted run is cleaned up first.
    if [[ -e ${run}/${RUN_MARKER} ]]; then
        cmd_stop "${run}"
    elif [[ -d ${run} && -n "$(ls -A "${run}")" ]]; then
        die "${run} exists, is not empty and is not a run directory"
    fi
    mkdir -p "${run}"
    : >"${run}/${RUN_MARKER}"
    echo "${cache}" >"${run}/cache_dir"
    choose_containerd_bin "${cache}" >"${run}/containerd_bin"

    # Which shared system directories exist now, so that stop removes only
    # what this run created.
    local d
    for d in "${SYSTEM_DIRS[@]}"; do
        [[ -e ${d} ]] && echo "${d}"
    done >"${run}/preexisting" || true

    # Top-level cgroups that exist now: runc creates parents such as /k8s.io
    # (ctr) or the pods' cgroup_parent and never removes them.
    local _key mp
    while read -r _key mp; do
        for d in "${mp}"/*/; do
            echo "${d%/}"
        done
    done < <(cgroup_mounts) >"${run}/cgroups-preexisting"

    local network
    network="dranet-test-$(printf '%s' "${run}" | sha256sum | cut -c1-8)"
    echo "${CNI_BRIDGE_DEFAULT}" >"${run}/bridge"
    echo "${CNI_SUBNET_DEFAULT}" >"${run}/subnet"
    echo "${network}" >"${run}/cni_network"
    echo "${NRI_SOCKET_OVERRIDE:-${run}/nri.sock}" >"${run}/nri_socket"
    if [[ -n ${NRI_SOCKET_OVERRIDE} ]]; then
        [[ -d ${NRI_SOCKET_OVERRIDE%/*} ]] || echo "${NRI_SOCKET_OVERRIDE%/*}" >"${run}/nri_socket_dir_created"
        mkdir -p "${NRI_SOCKET_OVERRIDE%/*}"
    fi
    if [[ ${NETNS_UNDER_STATE} != true ]]; then
        # stop removes the pod namespaces this run leaves in /var/run/netns.
        [[ -d /var/run/netns ]] || : >"${run}/netns_dir_created"
        find /var/run/netns -mindepth 1 -maxdepth 1 2>/dev/null >"${run}/netns-preexisting" || true
        : >>"${run}/netns-preexisting"
    fi

    mkdir -p "${run}"/{root,state,tmp,runc,opt,nri/plugins,nri/conf.d,cni/net.d,cni/ipam}
    # RUN_DIR is a shared mount, as / is on a node booted by systemd: a
    # container can then mount a path below it with HostToContainer
    # propagation (dranetd's pod sees the pod network namespaces pinned after
    # it started). stop unmounts it with everything else under RUN_DIR.
    mount --bind "${run}" "${run}"
    mount --make-shared "${run}"
    write_containerd_config "${cache}" "${run}"
    write_cni_config "${run}" "${network}" "${CNI_BRIDGE_DEFAULT}" "${CNI_SUBNET_DEFAULT}"
    # The bridge exists before the first pod, with an address of its own, as
    # on a node that has run pods for a while: a bridge the CNI creates takes
    # the lowest MAC of its ports and changes it as pods come and go.
    if ! ip link show "${CNI_BRIDGE_DEFAULT}" >/dev/null 2>&1; then
        ip link add "${CNI_BRIDGE_DEFAULT}" address 02:00:0a:e7:00:01 type bridge
    fi
    ip link set "${CNI_BRIDGE_DEFAULT}" up

    launch_containerd "${cache}" "${run}"
    wait_containerd "${cache}" "${run}"
    if grep -q '^ *\[plugins."io.containerd.nri.v1.nri".default_validator\]' "${run}/config.toml" &&
        ! grep -q 'starting builtin NRI plugin \\"00-default-validator\\"' "${run}/containerd.log"; then
        die "containerd did not start the NRI default validator its config enables (${run}/containerd.log)"
    fi
    import_images "${cache}" "${run}"
    print_env "${cache}" "${run}"
}

# SIGTERM containerd (never the shims), escalate to SIGKILL after 10 s.
stop_containerd_daemon() {
    local run=$1 bin pid i
    bin=$(containerd_bin "${run}" "$2")
    pid=$(cat "${run}/containerd.pid" 2>/dev/null) || return 0
    is_our_containerd "${pid}" "${bin}" || return 0
    kill -TERM "${pid}" 2>/dev/null || return 0
    for ((i = 0; i < 100; i++)); do
        is_our_containerd "${pid}" "${bin}" || return 0
        grep -qs '^State:[[:space:]]*Z' "/proc/${pid}/status" && return 0
        sleep 0.1
    done
    log "containerd (pid ${pid}) ignored SIGTERM; killing it"
    kill -KILL "${pid}" 2>/dev/null || true
    for ((i = 0; i < 50; i++)); do
        is_our_containerd "${pid}" "${bin}" || return 0
        sleep 0.1
    done
}

cmd_restart() {
    [[ $# -eq 2 ]] || die "usage: restart CACHE_DIR RUN_DIR"
    need_root restart
    local cache run
    cache=$(abspath "$1")
    run=$(abspath "$2")
    [[ -e ${run}/${RUN_MARKER} && -f ${run}/config.toml ]] || die "${run} is not a started run directory"
    stop_containerd_daemon "${run}" "${cache}/root"
    echo "--- restart $(date -u +%FT%TZ) ---" >>"${run}/containerd.log"
    launch_containerd "${cache}" "${run}"
    wait_containerd "${cache}" "${run}"
    print_env "${cache}" "${run}"
}

# As a power cut would: every process of the run gets SIGKILL, nothing is
# cleaned up. `restart` starts containerd again on the same state.
cmd_kill() {
    [[ $# -eq 1 ]] || die "usage: kill RUN_DIR"
    need_root kill
    local run
    run=$(abspath "$1")
    [[ -e ${run}/${RUN_MARKER} && -f ${run}/cache_dir ]] || die "${run} is not a started run directory"
    kill_run_processes "${run}" "$(cat "${run}/cache_dir")/root"
}

# ---------------------------------------------------------------------------
# stop
# ---------------------------------------------------------------------------

# Print the PIDs that belong to run $1 (cache root $2, may be empty):
#  - processes running a binary from the cache root whose command line or
#    working directory refers to the run dir (containerd, shims, runc, ctr);
#  - processes whose working directory or root is under the run dir;
#  - all descendants of those (the containers: their parent is the shim).
# This script and its ancestors are never included.
run_pids() {
    local run=$1 root=$2
    local -A parent=() mine=() spare=()
    local p pid ppid stat rest exe cwd proot cmdline

    p=$$
    while [[ -n ${p} && ${p} != 0 ]]; do
        spare[${p}]=1
        p=$(awk '/^PPid:/ {print $2}' "/proc/${p}/status" 2>/dev/null) || break
    done
    spare[${BASHPID}]=1

    for p in /proc/[0-9]*; do
        pid=${p#/proc/}
        stat=$(cat "${p}/stat" 2>/dev/null) || continue
        rest=${stat##*) }
        # Zombies only wait for their parent; they cannot be killed.
        [[ ${rest%% *} == Z ]] && continue
        read -r _ ppid _ <<<"${rest}"
        parent[${pid}]=${ppid}
        [[ -n ${spare[${pid}]:-} ]] && continue
        exe=$(readlink "${p}/exe" 2>/dev/null) || exe=""
        cwd=$(readlink "${p}/cwd" 2>/dev/null) || cwd=""
        proot=$(readlink "${p}/root" 2>/dev/null) || proot=""
        if [[ ${cwd} == "${run}" || ${cwd} == "${run}/"* || ${proot} == "${run}/"* ]]; then
            mine[${pid}]=1
            continue
        fi
        if [[ -n ${root} && ${exe} == "${root}/"* ]]; then
            cmdline=$(tr '\0' ' ' <"${p}/cmdline" 2>/dev/null) || cmdline=""
            [[ " ${cmdline} " == *" ${run}/"* || " ${cmdline} " == *"=${run}/"* ]] && mine[${pid}]=1
        fi
    done

    # Add descendants until nothing changes.
    local changed=1
    while ((changed)); do
        changed=0
        for pid in "${!parent[@]}"; do
            [[ -n ${mine[${pid}]:-} || -n ${spare[${pid}]:-} ]] && continue
            if [[ -n ${mine[${parent[${pid}]}]:-} ]]; then
                mine[${pid}]=1
                changed=1
            fi
        done
    done
    for pid in "${!mine[@]}"; do
        echo "${pid}"
    done
}

# Map each cgroup hierarchy to its mount point, as "KEY MOUNTPOINT" lines;
# KEY is "c:" plus the controller list as in /proc/PID/cgroup ("c:" alone for
# cgroup v2).
cgroup_mounts() {
    local _id _parent _dev mroot mp _opts rest fstype _src sopts opts_arr
    while read -r _id _parent _dev mroot mp _opts rest; do
        [[ ${mroot} == / ]] || continue
        rest=${rest#*- }
        read -r fstype _src sopts <<<"${rest}"
        case ${fstype} in
            cgroup2) echo "c: ${mp}" ;;
            cgroup)
                local ctl_list=() o
                IFS=, read -r -a opts_arr <<<"${sopts}"
                for o in "${opts_arr[@]}"; do
                    case ${o} in rw | ro | relatime | noexec | nosuid | nodev | clone_children | xattr | noprefix | release_agent=* | cpuset_v2_mode) ;; *) ctl_list+=("${o}") ;; esac
                done
                (IFS=,; echo "c:${ctl_list[*]} ${mp}")
                ;;
        esac
    done </proc/self/mountinfo
}

# Append the cgroup directories of the given PIDs (only the processes that
# are not ours, i.e. the containers) to the file $1.
record_cgroups() {
    local out=$1 root=$2
    shift 2
    local -A mounts=()
    local key mp pid exe _id ctrls path
    while read -r key mp; do
        mounts[${key}]=${mp}
    done < <(cgroup_mounts)
    for pid in "$@"; do
        exe=$(readlink "/proc/${pid}/exe" 2>/dev/null) || exe=""
        [[ -n ${root} && ${exe} == "${root}/"* ]] && continue
        while IFS=: read -r _id ctrls path; do
            [[ ${path} == / ]] && continue
            mp=${mounts["c:${ctrls}"]:-}
            [[ -n ${mp} ]] && echo "${mp}${path}"
        done <"/proc/${pid}/cgroup" 2>/dev/null || true
    done >>"${out}"
}

# Remove the recorded (now empty) cgroups and then their parents while they
# are empty; never a hierarchy root or a cgroup this script itself is in.
remove_cgroups() {
    local file=$1 dir
    [[ -f ${file} ]] || return 0
    local -A keep=()
    local key mp _id ctrls path
    while read -r key mp; do
        keep[${mp}]=1
        while IFS=: read -r _id ctrls path; do
            [[ "c:${ctrls}" == "${key}" ]] || continue
            while [[ ${path} != / && -n ${path} ]]; do
                keep["${mp}${path}"]=1
                path=$(dirname "${path}")
            done
        done </proc/self/cgroup
    done < <(cgroup_mounts)
    sort -u "${file}" | while read -r dir; do
        while [[ ${dir} == /sys/fs/cgroup/* && -d ${dir} && -z ${keep[${dir}]:-} ]]; do
            rmdir "${dir}" 2>/dev/null || break
            dir=$(dirname "${dir}")
        done
    done
}

# Remove the top-level cgroups created during the run (and everything below
# them), deepest first. rmdir fails on a cgroup that still has processes or
# children, so cgroups in use are left alone.
remove_new_cgroups() {
    local run=$1 _key mp d
    [[ -f ${run}/cgroups-preexisting ]] || return 0
    while read -r _key mp; do
        for d in "${mp}"/*/; do
            d=${d%/}
            [[ -d ${d} ]] || continue
            grep -qxF "${d}" "${run}/cgroups-preexisting" && continue
            find "${d}" -depth -type d -print0 2>/dev/null | xargs -0 -r rmdir 2>/dev/null || true
        done
    done < <(cgroup_mounts)
}

kill_run_processes() {
    local run=$1 root=$2 round pids
    for ((round = 0; round < 50; round++)); do
        mapfile -t pids < <(run_pids "${run}" "${root}")
        ((${#pids[@]} == 0)) && return 0
        record_cgroups "${run}/.cgroups" "${root}" "${pids[@]}"
        kill -KILL "${pids[@]}" 2>/dev/null || true
        sleep 0.1
    done
    log "processes of ${run} survive SIGKILL: ${pids[*]}"
}

# Mount points under $1, most recently mounted first (octal escapes of
# /proc/self/mountinfo decoded).
mounts_under() {
    local run=$1 mp
    awk '{print $5}' /proc/self/mountinfo | tac | while read -r mp; do
        mp=$(printf '%b' "${mp}")
        [[ ${mp} == "${run}" || ${mp} == "${run}/"* ]] && echo "${mp}"
    done
}

unmount_run() {
    local run=$1 round mp
    for ((round = 0; round < 5; round++)); do
        local left=0
        while read -r mp; do
            left=1
            umount "${mp}" 2>/dev/null || umount -l "${mp}" 2>/dev/null || true
        done < <(mounts_under "${run}")
        ((left)) || return 0
    done
    [[ -z "$(mounts_under "${run}")" ]] || log "mounts under ${run} remain"
}

# While containerd still runs: kill and delete every task and container so
# runc and the shims clean up cgroups and mounts themselves. Best effort,
# bounded; the brute-force pass below handles whatever remains.
graceful_teardown() {
    local run=$1 bin pid ns id ctr
    bin=$(containerd_bin "${run}" "$2")
    ctr=${bin}/ctr
    pid=$(cat "${run}/containerd.pid" 2>/dev/null) || return 0
    is_our_containerd "${pid}" "${bin}" || return 0
    local c=(timeout 10 "${ctr}" -a "${run}/containerd.sock")
    for ns in $("${c[@]}" namespaces ls -q 2>/dev/null); do
        for id in $("${c[@]}" -n "${ns}" tasks ls -q 2>/dev/null); do
            "${c[@]}" -n "${ns}" tasks delete --force "${id}" >/dev/null 2>&1 || true
        done
        for id in $("${c[@]}" -n "${ns}" containers ls -q 2>/dev/null); do
            "${c[@]}" -n "${ns}" containers delete "${id}" >/dev/null 2>&1 || true
        done
    done
}

# Shim sockets live in /run/containerd/s; a killed shim leaves its socket
# behind. Each task bundle records its shim's address.
shim_sockets() {
    local run=$1 f addr
    [[ -d ${run}/state ]] || return 0
    while read -r f; do
        addr=$(cat "${f}" 2>/dev/null) || continue
        addr=${addr#unix://}
        [[ ${addr} == /run/containerd/s/* ]] && echo "${addr}"
    done < <(find "${run}/state" -maxdepth 4 -name address -type f 2>/dev/null)
}

# IO fifos under /run/containerd/fifo held open by this run's processes:
# `ctr run -d` creates them there (unless given --fifo-dir) and nobody
# removes them once the task is killed.
open_fifos() {
    local run=$1 root=$2 pid fd link
    while read -r pid; do
        for fd in /proc/"${pid}"/fd/*; do
            link=$(readlink "${fd}" 2>/dev/null) || continue
            [[ ${link} == /run/containerd/fifo/* ]] && echo "${link% (deleted)}"
        done
    done < <(run_pids "${run}" "${root}") | sort -u
}

# IDs of the CRI pod sandboxes this run's containerd knows about.
sandbox_ids() {
    local run=$1 d
    for d in "${run}"/root/io.containerd.grpc.v1.cri/sandboxes/*/ \
             "${run}"/state/io.containerd.grpc.v1.cri/sandboxes/*/; do
        [[ -d ${d} ]] || continue
        d=${d%/}
        echo "${d##*/}"
    done | sort -u
}

# For a run with DRANET_RUNTIME_NRI_SOCKET / DRANET_RUNTIME_NETNS_UNDER_STATE=false:
# the pod network namespaces (containerd names them cni-<uuid>) that appeared
# in /var/run/netns during the run (a killed containerd leaves them mounted;
# every cni-* namespace that was not there at start is removed, whoever made
# it: the run stands in for the node's only runtime), the NRI socket and the
# directories the run created for them.
remove_system_netns_and_nri() {
    local run=$1 ns nri
    if [[ -f ${run}/netns-preexisting ]]; then
        for ns in /var/run/netns/cni-*; do
            [[ -e ${ns} ]] || continue
            grep -qxF "${ns}" "${run}/netns-preexisting" && continue
            umount "${ns}" 2>/dev/null || umount -l "${ns}" 2>/dev/null || true
            rm -f "${ns}"
        done
        if [[ -f ${run}/netns_dir_created ]]; then
            # `ip netns add` makes the directory a mount point of its own.
            mountpoint -q /var/run/netns && { umount /var/run/netns 2>/dev/null || true; }
            rmdir /var/run/netns 2>/dev/null || true
        fi
    fi
    nri=$(cat "${run}/nri_socket" 2>/dev/null) || nri=""
    if [[ -n ${nri} && ${nri} != "${run}/"* ]]; then
        rm -f "${nri}"
        [[ -f ${run}/nri_socket_dir_created ]] && rmdir "$(cat "${run}/nri_socket_dir_created")" 2>/dev/null || true
    fi
}

was_preexisting() {
    grep -qxF "$2" "$1/preexisting" 2>/dev/null
}

cmd_stop() {
    [[ $# -eq 1 ]] || die "usage: stop RUN_DIR"
    need_root stop
    local run cache="" root=""
    run=$(abspath "$1")
    [[ -d ${run} ]] || return 0
    [[ -e ${run}/${RUN_MARKER} ]] || die "${run} is not a run directory (no ${RUN_MARKER}); not touching it"
    [[ ${run} != / ]] || die "refusing to clean /"
    if [[ -f ${run}/cache_dir ]]; then
        cache=$(cat "${run}/cache_dir")
        root="${cache}/root"
    fi

    local sockets sandboxes fifos
    mapfile -t sockets < <(shim_sockets "${run}")
    mapfile -t sandboxes < <(sandbox_ids "${run}")
    mapfile -t fifos < <(open_fifos "${run}" "${root}")

    if [[ -n ${root} ]]; then
        graceful_teardown "${run}" "${root}"
        stop_containerd_daemon "${run}" "${root}"
    fi
    kill_run_processes "${run}" "${root}"
    mapfile -t -O "${#sockets[@]}" sockets < <(shim_sockets "${run}")

    unmount_run "${run}"
    remove_system_netns_and_nri "${run}"
    remove_cgroups "${run}/.cgroups"
    remove_new_cgroups "${run}"

    local bridge
    bridge=$(cat "${run}/bridge" 2>/dev/null) || bridge=""
    if [[ -n ${bridge} ]] && ip link show dev "${bridge}" >/dev/null 2>&1; then
        ip link delete dev "${bridge}" || log "cannot delete link ${bridge}"
    fi

    # runc state of killed containers that ran with runc's default root
    # (`ctr run` without --runc-root uses /run/containerd/runc); the bundle
    # path in state.json tells which are this run's.
    local st
    for st in /run/containerd/runc/*/*/state.json; do
        [[ -f ${st} ]] && grep -qF "\"bundle=${run}/" "${st}" && rm -rf "${st%/state.json}"
    done

    local s
    for s in "${sockets[@]}"; do
        [[ -S ${s} ]] && rm -f "${s}"
    done
    for s in "${fifos[@]}"; do
        [[ -p ${s} ]] && rm -f "${s}"
        rmdir "$(dirname "${s}")" 2>/dev/null || true
    done
    # libcni's result cache (/var/lib/cni/results/NETWORK-SANDBOXID-IFNAME):
    # entries for this run's network and for the loopback network of this
    # run's sandboxes. A CRI StopPodSandbox removes them; a killed pod does not.
    local network id
    network=$(cat "${run}/cni_network" 2>/dev/null) || network=""
    if [[ -n ${network} ]]; then
        rm -f /var/lib/cni/results/"${network}"-*
    fi
    for id in "${sandboxes[@]}"; do
        rm -f /var/lib/cni/results/cni-loopback-"${id}"-*
    done
    # Shared directories: remove only empty ones, only if this run created
    # them, deepest first.
    local i d
    for ((i = ${#SYSTEM_DIRS[@]} - 1; i >= 0; i--)); do
        d=${SYSTEM_DIRS[i]}
        if [[ -d ${d} ]] && ! was_preexisting "${run}" "${d}"; then
            find "${d}" -depth -type d -empty -delete 2>/dev/null || true
        fi
    done

    if [[ -n "$(mounts_under "${run}")" ]]; then
        die "mounts remain under ${run}; not deleting it"
    fi
    rm -rf --one-file-system "${run}"
}

# ---------------------------------------------------------------------------

main() {
    [[ $# -ge 1 ]] || die "usage: $0 fetch|images|start|restart|stop|binary-image|unmount ARGS..."
    local sub=$1
    shift
    case ${sub} in
        fetch) cmd_fetch "$@" ;;
        images) cmd_images "$@" ;;
        start) cmd_start "$@" ;;
        restart) cmd_restart "$@" ;;
        kill) cmd_kill "$@" ;;
        stop) cmd_stop "$@" ;;
        binary-image) cmd_binary_image "$@" ;;
        unmount)
            [[ $# -eq 1 ]] || die "usage: unmount DIR"
            need_root unmount
            unmount_run "$(abspath "$1")"
            ;;
        *) die "unknown subcommand '${sub}'" ;;
    esac
}

main "$@"
