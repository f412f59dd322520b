#!/usr/bin/env bash
# Builds the node-in-a-box's Kubernetes (etcd, kube-apiserver,
# kube-controller-manager, kube-scheduler, kubelet, kubectl: one binary,
# cmd/k8s-node; and gpu-standin, cmd/gpu-standin, the test double of a GPU
# DRA driver) from the published Go modules and caches them by version:
#
#   tests/cluster/build.sh [vMAJOR.MINOR.PATCH]   prints the cached bin directory
#
# The default version is the k8s.io/kubernetes this directory's go.mod pins.
# Another version gets its own go.mod, generated in the cache from that
# release's go.mod (every staging module k8s.io/X pinned to v0.MINOR.PATCH,
# as a module outside the kubernetes repository must), so one variable tries
# any release the proxy serves:  DRANET_K8S_VERSION=v1.34.4 tests/cluster/node.sh up ...
#
# Cache: ${DRANET_CLUSTER_CACHE:-$XDG_CACHE_HOME/dranet-cluster (~/.cache)}/VERSION/,
# outside any build tree; a rebuild happens only when the sources or the Go
# toolchain changed (bin/.stamp). Go's own caches (GOMODCACHE, GOCACHE) are
# Go's defaults.
# Exit 77 (skip) when there is no Go 1.26 or newer, or the module proxy cannot
# be reached; 1 on a real failure.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=scripts/go_env.sh
source "$here/../../scripts/go_env.sh"
log() { printf 'cluster/build: %s\n' "$*" >&2; }
skip() { log "skipped: $*"; exit 77; }
go_env_require 26   # Kubernetes 1.37 needs Go 1.26

pinned=$(awk '$1 == "k8s.io/kubernetes" {print $2; exit}' "$here/go.mod")
version=${1:-${DRANET_K8S_VERSION:-$pinned}}
[[ $version =~ ^v1\.([0-9]+)\.([0-9]+)$ ]] || { log "not a Kubernetes release: $version"; exit 1; }
minor=${BASH_REMATCH[1]} patch=${BASH_REMATCH[2]}
cache=${DRANET_CLUSTER_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/dranet-cluster}/$version
bin=$cache/bin
mkdir -p "$cache"
exec 9>"$cache/.lock"
flock 9

stamp=$(cat "$here/cmd/k8s-node/main.go" "$here/cmd/gpu-standin/main.go" "$here/go.mod" "$here/go.sum" \
          "$here/../../scripts/go_env.sh" "$0" | sha256sum | cut -d' ' -f1)
stamp="$stamp $go_version $version"
if [[ -x $bin/k8s-node && -f $bin/.stamp && "$(cat "$bin/.stamp")" == "$stamp" ]]; then
  echo "$bin"
  exit 0
fi

# The module to build: this directory for the pinned release, else a copy
# with a go.mod generated from that release's own.
if [[ $version == "$pinned" ]]; then
  src=$here
else
  src=$cache/src
  rm -rf "$src"
  mkdir -p "$src/cmd/k8s-node"
  cp "$here/cmd/k8s-node/main.go" "$src/cmd/k8s-node/"
  upstream=$(cd "$src" && go mod download -json "k8s.io/kubernetes@$version" 2>"$cache/download.log" \
               | sed -n 's/^[[:space:]]*"GoMod": "\(.*\)",$/\1/p') || true
  if [[ -z $upstream || ! -f $upstream ]]; then
    cat "$cache/download.log" >&2
    skip "k8s.io/kubernetes@$version cannot be downloaded (is the Go module proxy $(go env GOPROXY) reachable?)"
  fi
  {
    echo "module dranet/tests/cluster"
    echo
    grep -E '^go [0-9.]+$' "$upstream"
    echo
    grep -E '^godebug ' "$upstream" || true
    echo
    echo "require k8s.io/kubernetes $version"
    echo
    echo "replace ("
    sed -nE "s#^[[:space:]]*(k8s\.io/[a-z0-9-]+) => \./staging/src/.*#\t\1 => \1 v0.$minor.$patch#p" "$upstream"
    echo ")"
  } >"$src/go.mod"
  (cd "$src" && go mod tidy) >"$cache/tidy.log" 2>&1 \
    || { cat "$cache/tidy.log" >&2; log "go mod tidy failed for $version"; exit 1; }
fi

# Before building: can the modules be had? (A missing proxy is a skip, a
# compile error a failure.)
if ! (cd "$src" && go mod download) >"$cache/download.log" 2>&1; then
  cat "$cache/download.log" >&2
  skip "the modules of $version cannot be downloaded (is the Go module proxy $(go env GOPROXY) reachable?)"
fi

# Upstream's release flags (hack/lib/golang.sh): these tags, -trimpath, no
# symbol table; the version stamped where `--version` and /version read it.
ldflags="-s -w"
for pkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
  ldflags+=" -X $pkg.gitVersion=$version -X $pkg.gitMajor=1 -X $pkg.gitMinor=$minor"
  ldflags+=" -X $pkg.gitTreeState=clean -X $pkg.buildDate=1970-01-01T00:00:00Z"
done
started=$(date +%s)
log "building Kubernetes $version into $bin (cold: about 10 minutes on 2 cores)"
rm -rf "$bin.new"
mkdir -p "$bin.new"
(cd "$src" && CGO_ENABLED=1 go build -trimpath -tags selinux,notest,grpcnotrace \
   -ldflags "$ldflags" -o "$bin.new/k8s-node" ./cmd/k8s-node) >"$cache/build.log" 2>&1 \
  || { cat "$cache/build.log" >&2; log "go build failed for $version"; exit 1; }
# The GPU driver's test double, always from this directory's module (it speaks
# resource.k8s.io/v1 and the kubelet's DRA v1 API, which every release from
# 1.34 serves).
(cd "$here" && go build -trimpath -ldflags "-s -w" -o "$bin.new/gpu-standin" ./cmd/gpu-standin) \
  >>"$cache/build.log" 2>&1 || { cat "$cache/build.log" >&2; log "go build of gpu-standin failed"; exit 1; }
for name in etcd kube-apiserver kube-controller-manager kube-scheduler kubelet kubectl; do
  ln -s k8s-node "$bin.new/$name"
done
"$bin.new/kubectl" version --client 2>/dev/null | grep -qF "$version" \
  || { log "the built kubectl does not report $version"; exit 1; }
echo "$stamp" >"$bin.new/.stamp"
rm -rf "$bin"
mv "$bin.new" "$bin"
log "built in $(($(date +%s) - started)) s: $(du -h "$bin/k8s-node" | cut -f1) binary"
echo "$bin"
